//! fio's iolog (`write_iolog=`, `--iolog-write`): every I/O a worker
//! issued, in fio 3.x's "version 3" text form (fio's iolog.c), so that fio
//! (`--read_iolog`) and stripebench replay the same offsets.
//!
//! The worker records into a [`IoLogBuf`] allocated before its gate with a
//! fixed capacity: a push is a bounds check and a 24-byte store, never an
//! allocation, and a full buffer counts what it could not hold (said as a
//! warning) instead of growing. The file is written once every worker has
//! ended, merged by issue time, as fio's one log of a job's files.

use std::io::Write;
use std::path::Path;

use crate::measure::workload::Op;

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
pub fn write_file(path: &Path, parts: &[Part<'_>]) -> std::io::Result<()> {
    let f = std::fs::File::create(path)?;
    let mut w = std::io::BufWriter::new(f);
    write_v3(&mut w, parts)?;
    w.flush()
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
}
