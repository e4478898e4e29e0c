//! fio's iolog (`write_iolog=`, `--iolog-write`): every I/O a worker
//! issued, in fio 3.x's "version 3" text form (fio's iolog.c), so that fio
//! (`--read_iolog`) and stripebench replay the same offsets.
//!
//! The worker records into a [`IoLogBuf`] allocated before its gate with a
//! fixed capacity: a push is a bounds check and a 24-byte store, never an
//! allocation, and a full buffer counts what it could not hold (said as a
//! warning) instead of growing. The file is written once every worker has
//! ended, merged by issue time, as fio's one log of a job's files.
//!
//! `--iolog-read` (fio's `read_iolog=`) replays one: [`parse`] reads fio's
//! version 2 and 3 logs as hostile input, every line checked, and the
//! worker issues its reads and writes in order instead of drawn ones.

use std::io::Write;
use std::path::Path;

use crate::base::io::Op;

/// Records a run may hold in memory over all its workers (24 bytes each:
/// 96 MiB); each worker's share is its capacity, and at least
/// [`MIN_PER_WORKER`].
pub const BUDGET_RECORDS: usize = 4 << 20;
/// The least a worker's buffer holds, however many workers share the budget.
pub const MIN_PER_WORKER: usize = 64 << 10;

/// Each worker's capacity when `workers` share the budget.
pub fn per_worker(workers: usize) -> usize {
    (BUDGET_RECORDS / workers.max(1)).max(MIN_PER_WORKER)
}

/// One issued I/O: when (ns since the run's epoch), where, which way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoRecord {
    pub t_ns: u64,
    pub offset: u64,
    pub op: Op,
}

/// A worker's records: preallocated, never grown.
#[derive(Debug, Clone, Default)]
pub struct IoLogBuf {
    pub records: Vec<IoRecord>,
    /// I/Os issued once the buffer was full: not in the log.
    pub dropped: u64,
}

impl IoLogBuf {
    /// A buffer for `cap` records, allocated now (before the worker's gate).
    pub fn with_capacity(cap: usize) -> IoLogBuf {
        IoLogBuf {
            records: Vec::with_capacity(cap),
            dropped: 0,
        }
    }

    /// Records one I/O, or counts it as dropped when the buffer is full.
    #[inline]
    pub fn push(&mut self, t_ns: u64, offset: u64, op: Op) {
        if self.records.len() < self.records.capacity() {
            self.records.push(IoRecord { t_ns, offset, op });
        } else {
            self.dropped += 1;
        }
    }
}

/// One worker's part of the log: its target's name as the log says it,
/// its request size, its records.
pub struct Part<'a> {
    pub file: &'a str,
    pub bs: u64,
    pub log: &'a IoLogBuf,
}

/// Writes the version 3 log of `parts` to `out`: the version line, `add`
/// and `open` of each file (at 0 µs), every I/O in issue order as
/// `µs FILE read|write OFFSET LENGTH`, and `close` of each file at the
/// last I/O's time, as fio writes it.
pub fn write_v3(out: &mut impl Write, parts: &[Part<'_>]) -> std::io::Result<()> {
    writeln!(out, "fio version 3 iolog")?;
    let mut files: Vec<&str> = Vec::new();
    for p in parts {
        if !files.contains(&p.file) {
            files.push(p.file);
        }
    }
    for f in &files {
        writeln!(out, "0 {f} add")?;
    }
    for f in &files {
        writeln!(out, "0 {f} open")?;
    }
    // Each worker's records are in issue order already: merge them.
    let mut all: Vec<(u64, usize, usize)> = parts
        .iter()
        .enumerate()
        .flat_map(|(pi, p)| {
            p.log
                .records
                .iter()
                .enumerate()
                .map(move |(ri, r)| (r.t_ns, pi, ri))
        })
        .collect();
    all.sort_unstable();
    let mut last_us = 0;
    for (t_ns, pi, ri) in all {
        let p = &parts[pi];
        let r = p.log.records[ri];
        let op = match r.op {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
        };
        last_us = t_ns / 1000;
        writeln!(out, "{last_us} {} {op} {} {}", p.file, r.offset, p.bs)?;
    }
    for f in &files {
        writeln!(out, "{last_us} {f} close")?;
    }
    Ok(())
}

/// Writes the log to `path` (created or truncated).
///
/// Written as every output is: into a new file beside it (created with
/// O_EXCL and O_NOFOLLOW under a name nobody prepared), then renamed onto
/// the name, so a link planted at the name is replaced, never followed,
/// and a name that is no regular file (a device, a directory, a FIFO) is
/// refused rather than written into.
pub fn write_file(path: &Path, parts: &[Part<'_>]) -> std::io::Result<()> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    match std::fs::symlink_metadata(path) {
        Ok(m) if !(m.is_file() || m.file_type().is_symlink()) => {
            let what = if m.is_dir() {
                "a directory"
            } else if m.file_type().is_block_device() || m.file_type().is_char_device() {
                "a device"
            } else {
                "not a regular file"
            };
            return Err(std::io::Error::other(format!(
                "it is {what}, which stripebench does not write an iolog into"
            )));
        }
        _ => {}
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let tag = crate::base::io::splitmix64(
        std::time::UNIX_EPOCH
            .elapsed()
            .map_or(0, |d| d.as_nanos() as u64)
            ^ u64::from(std::process::id()),
    );
    let tmp = dir.join(format!(".stripebench-iolog-{tag:016x}.tmp"));
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp)?;
    let mut w = std::io::BufWriter::new(f);
    let written = write_v3(&mut w, parts)
        .and_then(|()| w.flush())
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// The most I/Os a replayed log may hold (16Mi: 16 bytes each in memory).
pub const MAX_REPLAY_IOS: usize = 16 << 20;
/// The largest I/O a replayed log may ask (fio's largest bs is far below).
pub const MAX_REPLAY_LEN: u64 = 64 << 20;
/// The longest line read: fio reads its log with a 4096-byte fgets.
const MAX_LINE: usize = 4096;

/// A log to replay: its one file, its one request size, its I/Os in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    pub file: String,
    pub bs: u64,
    pub ios: Vec<(Op, u64)>,
}

impl Replay {
    /// The reads' share of the I/Os, in percent (rounded).
    pub fn read_pct(&self) -> u8 {
        let reads = self.ios.iter().filter(|(op, _)| *op == Op::Read).count();
        ((reads * 100 + self.ios.len() / 2) / self.ios.len().max(1)) as u8
    }

    /// The end of the furthest I/O: what the target must hold.
    pub fn end(&self) -> u64 {
        self.ios.iter().map(|(_, o)| o + self.bs).max().unwrap_or(0)
    }
}

/// Reads a fio iolog (version 2 or 3) for replay. `Err` is one clause
/// naming the line and what is wrong with it; the caller names the file.
/// Taken: `add`, `open` and `close` of one file, and its `read` and
/// `write` of one size; anything else (another file, trim, sync, wait, a
/// size of its own) is refused, as stripebench's worker issues one size to
/// its one target.
pub fn parse(bytes: &[u8]) -> Result<Replay, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        "is not text: give an iolog fio or stripebench wrote (fio version 3 iolog)".to_string()
    })?;
    let mut lines = text.lines();
    let v3 = match lines.next() {
        Some(l) if l.trim_end() == "fio version 3 iolog" => true,
        Some(l) if l.trim_end() == "fio version 2 iolog" => false,
        _ => return Err("line 1 is not `fio version 2 iolog` or `fio version 3 iolog`: give an iolog fio (write_iolog=) or stripebench (--iolog-write) wrote".into()),
    };
    let mut file: Option<&str> = None;
    let mut bs: Option<u64> = None;
    let mut ios = Vec::new();
    for (i, line) in lines.enumerate() {
        let n = i + 2;
        let bad = |why: &str| Err(format!("line {n} {why}"));
        if line.len() > MAX_LINE {
            return bad("is over 4096 bytes: no iolog line is");
        }
        if line.trim().is_empty() {
            continue;
        }
        let mut w: Vec<&str> = line.split_ascii_whitespace().collect();
        if v3 {
            if w[0].parse::<u64>().is_err() {
                return bad(&format!(
                    "starts with {:?}, not a time in µs (version 3)",
                    w[0]
                ));
            }
            w.remove(0);
        }
        let (name, act, rest) = match w.as_slice() {
            [name, act, rest @ ..] => (*name, *act, rest),
            _ => return bad("is not `FILE ACTION [OFFSET LENGTH]`"),
        };
        match file {
            None => file = Some(name),
            Some(f) if f != name => {
                return bad(&format!("names {name:?}, a second file after {f:?}: stripebench replays one file's I/O per log"));
            }
            Some(_) => {}
        }
        let op = match (act, rest) {
            ("add" | "open" | "close", []) => continue,
            ("read", [_, _]) => Op::Read,
            ("write", [_, _]) => Op::Write,
            ("read" | "write", _) => {
                return bad(&format!("has {act} without one OFFSET and one LENGTH"))
            }
            ("trim" | "sync" | "datasync" | "wait", _) => {
                return bad(&format!(
                    "asks {act}, which stripebench does not replay: give a log of reads and writes"
                ));
            }
            _ => {
                return bad(&format!(
                    "has the action {act:?}, not add, open, close, read or write"
                ))
            }
        };
        let num = |s: &str, what: &str| {
            s.parse::<u64>()
                .map_err(|_| format!("line {n} has the {what} {s:?}, not a whole number of bytes"))
        };
        let offset = num(rest[0], "offset")?;
        let len = num(rest[1], "length")?;
        if len == 0 || len > MAX_REPLAY_LEN {
            return bad(&format!("has the length {len}: give 1 byte to 64 MiB"));
        }
        if offset.checked_add(len).is_none_or(|e| e > i64::MAX as u64) {
            return bad(&format!("has the offset {offset}, past any file's end"));
        }
        match bs {
            None => bs = Some(len),
            Some(b) if b != len => {
                return bad(&format!("has the length {len} after {b}: stripebench's worker issues one size; replay a log of one size"));
            }
            Some(_) => {}
        }
        if ios.len() == MAX_REPLAY_IOS {
            return bad("is past 16Mi I/Os, the most stripebench replays: give a shorter log");
        }
        ios.push((op, offset));
    }
    match (file, bs) {
        (Some(f), Some(bs)) => Ok(Replay {
            file: f.to_string(),
            bs,
            ios,
        }),
        _ => Err("holds no read or write to replay".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_buffer_counts_what_it_could_not_hold_and_does_not_grow() {
        let mut b = IoLogBuf::with_capacity(2);
        let cap = b.records.capacity();
        for i in 0..(cap as u64 + 3) {
            b.push(i, i * 4096, Op::Read);
        }
        assert_eq!(b.records.len(), cap);
        assert_eq!(b.records.capacity(), cap);
        assert_eq!(b.dropped, 3);
    }

    #[test]
    fn the_log_is_fio_s_version_3_with_the_workers_merged_by_issue_time() {
        let mut a = IoLogBuf::with_capacity(4);
        a.push(5_000, 0, Op::Read);
        a.push(9_000, 4096, Op::Write);
        let mut b = IoLogBuf::with_capacity(4);
        b.push(7_000, 8192, Op::Read);
        let parts = [
            Part {
                file: "/dev/x",
                bs: 4096,
                log: &a,
            },
            Part {
                file: "/dev/x",
                bs: 4096,
                log: &b,
            },
        ];
        let mut out = Vec::new();
        write_v3(&mut out, &parts).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n\
             5 /dev/x read 0 4096\n7 /dev/x read 8192 4096\n9 /dev/x write 4096 4096\n\
             9 /dev/x close\n"
        );
    }

    #[test]
    fn fio_s_own_v3_log_is_read_as_its_ios_in_order() {
        let log = "fio version 3 iolog\n33 f add\n162 f open\n165 f read 61440 4096\n\
                   197 f write 32768 4096\n257 f close\n";
        let r = parse(log.as_bytes()).unwrap();
        assert_eq!(r.file, "f");
        assert_eq!(r.bs, 4096);
        assert_eq!(r.ios, vec![(Op::Read, 61440), (Op::Write, 32768)]);
        assert_eq!(r.read_pct(), 50);
        assert_eq!(r.end(), 65536);
        let v2 = "fio version 2 iolog\nf add\nf open\nf read 0 512\nf close\n";
        assert_eq!(parse(v2.as_bytes()).unwrap().ios, vec![(Op::Read, 0)]);
    }

    #[test]
    fn what_we_write_is_what_we_read() {
        let mut a = IoLogBuf::with_capacity(4);
        a.push(1_000, 8192, Op::Write);
        a.push(2_000, 0, Op::Read);
        let mut out = Vec::new();
        let part = Part {
            file: "/dev/loop9",
            bs: 8192,
            log: &a,
        };
        write_v3(&mut out, &[part]).unwrap();
        let r = parse(&out).unwrap();
        assert_eq!((r.file.as_str(), r.bs), ("/dev/loop9", 8192));
        assert_eq!(r.ios, vec![(Op::Write, 8192), (Op::Read, 0)]);
    }

    #[test]
    fn a_bad_line_is_refused_by_its_number_and_why() {
        let head = "fio version 3 iolog\n1 f add\n";
        for (body, says) in [
            ("2 f read 0\n", "line 3 has read without one OFFSET"),
            ("2 f read x 4096\n", "line 3 has the offset \"x\""),
            ("2 f read 0 -1\n", "line 3 has the length \"-1\""),
            ("2 f read 0 0\n", "line 3 has the length 0"),
            (
                "2 f read 0 4096\n3 f read 0 8192\n",
                "line 4 has the length 8192 after 4096",
            ),
            ("2 g read 0 4096\n", "line 3 names \"g\", a second file"),
            ("2 f trim 0 4096\n", "line 3 asks trim"),
            ("2 f frobnicate\n", "line 3 has the action \"frobnicate\""),
            ("x f read 0 4096\n", "line 3 starts with \"x\""),
            (
                "2 f read 18446744073709551615 4096\n",
                "past any file's end",
            ),
            ("2 f open\n", "holds no read or write"),
        ] {
            let e = parse(format!("{head}{body}").as_bytes()).unwrap_err();
            assert!(e.contains(says), "{body:?}: {e}");
        }
        assert!(parse(b"fio version 1 iolog\n")
            .unwrap_err()
            .contains("line 1"));
        assert!(parse(&[0xff, 0xfe]).unwrap_err().contains("not text"));
        let long = format!("{head}2 f read 0 4096 {}\n", "x".repeat(5000));
        assert!(parse(long.as_bytes()).unwrap_err().contains("over 4096"));
    }
}
