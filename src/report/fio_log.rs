//! `--fio-log`: fio's bandwidth, latency and IOPS logs (`write_bw_log`,
//! `write_lat_log`, `write_iops_log`), written in fio's own log format
//! from a run's per-worker interval series (`--log-interval`), for the
//! scripts and plotting tools that read fio's logs
//! (`fio_generate_plots`, fio-plot's `-L`).
//!
//! Each line is fio's windowed form (`log_avg_msec`): `time, value,
//! data direction, block size, offset, command priority` (and the issue
//! time with `log_issue_time`), the time in ms since the window opened
//! (fio's epoch, reset after ramp_time) at the interval's end, the block
//! size, offset and issue time 0, as fio writes them in a windowed log.
//! The values are the interval's: KiB/s (bw), I/Os per second (iops), and
//! the mean or the max latency in ns (lat, clat; `log_window_value`).
//! With `log_prio`, the priority column is the worker thread's (`--ioprio`,
//! fio's prioclass/prio): with `--cmdprio`, fio writes each I/O's own and
//! an interval here mixes both (the share raised is the run document's
//! `workers[].cmdprio_ios`).
//!
//! `each` is fio's per-I/O form (its default without log_avg_msec): a line
//! per I/O completed in the window, from the records each worker kept
//! (`WorkerDoc::io_lines`, reserved before the window and bounded), with
//! its direction, size, offset and its own command's priority; a mixed
//! pattern needs it, as the intervals count reads and writes together.
//! What is not fio's: `clat` and `lat` are both stripebench's latency from
//! issue to completion, and the `slat` log is written empty, as fio writes
//! it when submission latency is not measured (`disable_slat`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::document::run::{RunDocument, WorkerDoc};

/// Which of fio's logs: `write_bw_log`, `write_lat_log`, `write_iops_log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    Bw,
    Lat,
    Iops,
}

/// `log_window_value`: the window's average, its maximum, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WindowValue {
    #[default]
    Avg,
    Max,
    Both,
}

/// What `--fio-log` and `--fio-log-format` ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Each log asked, with its file name prefix (fio's `write_bw_log=PREFIX`).
    pub logs: Vec<(LogKind, PathBuf)>,
    /// fio's `per_job_logs=0`: one file for every worker, without `.N`.
    pub shared: bool,
    /// fio's `log_offset=1`: an offset column (0 in a windowed log).
    pub offset: bool,
    /// fio's `log_prio=1`: the priority as fio's hex value, not 0/1.
    pub prio: bool,
    /// fio's `log_issue_time=1`: an issue time column (0 in a windowed log).
    pub issue_time: bool,
    pub window: WindowValue,
    /// fio's default without `log_avg_msec`: a line per I/O (from each
    /// worker's records of the window's I/Os) rather than per interval.
    pub each: bool,
    /// The number of the first worker's files (fio numbers a job by its
    /// place in the job file, from 1).
    pub first_job: usize,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            logs: Vec::new(),
            shared: false,
            offset: false,
            prio: false,
            issue_time: false,
            window: WindowValue::Avg,
            each: false,
            first_job: 1,
        }
    }
}

/// The word `--fio-log` names `kind` by.
pub fn kind_name(kind: LogKind) -> &'static str {
    match kind {
        LogKind::Bw => "bw",
        LogKind::Lat => "lat",
        LogKind::Iops => "iops",
    }
}

/// `--fio-log KIND=PREFIX`.
pub fn parse_log(text: &str) -> Result<(LogKind, PathBuf), String> {
    let Some((kind, prefix)) = text.split_once('=') else {
        return Err(format!(
            "'{text}' is not KIND=PREFIX: give bw=PREFIX, lat=PREFIX or iops=PREFIX (fio's write_bw_log=PREFIX and so on)"
        ));
    };
    let kind = match kind {
        "bw" => LogKind::Bw,
        "lat" => LogKind::Lat,
        "iops" => LogKind::Iops,
        _ => {
            return Err(format!(
                "'{kind}' is not a log: give bw, lat or iops (as bw=PREFIX)"
            ))
        }
    };
    if prefix.is_empty() || prefix.ends_with('/') {
        return Err(format!(
            "'{text}' names no file prefix: give one, such as {}=out/job",
            text.split('=').next().unwrap_or("bw")
        ));
    }
    Ok((kind, PathBuf::from(prefix)))
}

/// `--fio-log-format LIST`: its words set on `spec`.
pub fn parse_format(text: &str) -> Result<Spec, String> {
    let mut spec = Spec::default();
    for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match word {
            "shared" => spec.shared = true,
            "offset" => spec.offset = true,
            "prio" => spec.prio = true,
            "issue-time" => spec.issue_time = true,
            "avg" => spec.window = WindowValue::Avg,
            "max" => spec.window = WindowValue::Max,
            "both" => spec.window = WindowValue::Both,
            "each" => spec.each = true,
            _ => match word.strip_prefix("first=").map(str::parse::<usize>) {
                Some(Ok(n)) if n >= 1 => spec.first_job = n,
                _ => return Err(format!(
                    "'{word}' is not one of shared, offset, prio, issue-time, avg, max, both, each, first=N (N from 1)"
                )),
            },
        }
    }
    Ok(spec)
}

/// The file names of one log kind: fio's `_bw`, `_iops`, and for the
/// latency log its three, `_slat`, `_clat` and `_lat`.
fn suffixes(kind: LogKind) -> &'static [&'static str] {
    match kind {
        LogKind::Bw => &["bw"],
        LogKind::Lat => &["slat", "clat", "lat"],
        LogKind::Iops => &["iops"],
    }
}

/// `PREFIX_bw.N.log`, or `PREFIX_bw.log` when shared.
fn file(prefix: &Path, suffix: &str, job: Option<usize>) -> PathBuf {
    let mut name = prefix.as_os_str().to_os_string();
    match job {
        Some(n) => name.push(format!("_{suffix}.{n}.log")),
        None => name.push(format!("_{suffix}.log")),
    }
    PathBuf::from(name)
}

impl Spec {
    /// Every file the logs of a run of `workers` workers are written to,
    /// in the order they are written (checked before the run).
    pub fn files(&self, workers: usize) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for (kind, prefix) in &self.logs {
            for s in suffixes(*kind) {
                if self.shared {
                    out.push(file(prefix, s, None));
                } else {
                    out.extend((0..workers).map(|w| file(prefix, s, Some(self.first_job + w))));
                }
            }
        }
        out.dedup();
        out
    }

    /// The columns after the value: direction, block size (0), offset (0),
    /// priority, issue time (0).
    fn tail(&self, ddir: u8, prio: u16) -> String {
        let mut t = format!(", {ddir}, 0");
        if self.offset {
            t.push_str(", 0");
        }
        // log_prio=1: the value every I/O of the interval went at unless
        // --cmdprio raised it (the thread's --ioprio; 0, none set), in
        // fio's hex; else fio's 0/1 "high priority" flag, 0.
        if self.prio {
            let _ = write!(t, ", 0x{prio:04x}");
        } else {
            t.push_str(", 0");
        }
        if self.issue_time {
            t.push_str(", 0");
        }
        t
    }
}

/// One interval as a log line reads it: where it ends (ms since the
/// window opened), how long it ran (ms), its bytes, I/Os and latency.
struct Window {
    end_ms: u64,
    span_ms: u64,
    bytes: u64,
    ios: u64,
    mean_ns: Option<u64>,
    max_ns: Option<u64>,
}

/// The worker's intervals: each runs to the next one's start; the last
/// to the worker's end (its active time), at most one interval long.
fn windows(w: &WorkerDoc, interval_ms: u64) -> Vec<Window> {
    let ms = |t: f64| (t * 1000.0).round().max(0.0) as u64;
    let ended = ms(w.figures.seconds);
    (0..w.intervals.len())
        .map(|i| {
            let iv = &w.intervals[i];
            let start = ms(iv.t);
            let end = match w.intervals.get(i + 1) {
                Some(next) => ms(next.t),
                None => (start + interval_ms).min(ended.max(start + 1)),
            }
            .max(start + 1);
            Window {
                end_ms: end,
                span_ms: end - start,
                bytes: iv.bytes,
                ios: iv.ios,
                mean_ns: iv.mean_ns,
                max_ns: iv.max_ns,
            }
        })
        .collect()
}

/// fio's per-I/O lines (`each`): the latency logs a line per I/O, `time
/// (ms, at its completion), latency (ns), direction, bytes[, offset],
/// priority[, issue time (ns)]`; bw (KiB/s) and iops (1) each I/O's own,
/// as fio's add_iops_sample/add_bw_sample write without a window.
fn io_lines(spec: &Spec, suffix: &str, w: &WorkerDoc, out: &mut String) {
    for l in &w.io_lines {
        let value = match suffix {
            "bw" => (l.len as u64 * 1_000_000_000 / l.lat_ns.max(1)) / 1024,
            "iops" => 1,
            _ => l.lat_ns,
        };
        let _ = write!(
            out,
            "{}, {value}, {}, {}",
            l.done_ns / 1_000_000,
            u8::from(l.write),
            l.len
        );
        if spec.offset {
            let _ = write!(out, ", {}", l.offset);
        }
        // log_prio=1: the command's ioprio in fio's hex; else fio's 1 for
        // the realtime class, 0 for any other.
        if spec.prio {
            let _ = write!(out, ", 0x{:04x}", l.ioprio);
        } else {
            let rt = l.ioprio >> 13 == u16::from(crate::base::thread_setup::CLASS_RT);
            let _ = write!(out, ", {}", u8::from(rt));
        }
        if spec.issue_time {
            let _ = write!(out, ", {}", if suffix == "clat" { l.issued_ns } else { 0 });
        }
        out.push('\n');
    }
}

/// The lines of one log of one worker.
fn lines(spec: &Spec, suffix: &str, w: &WorkerDoc, interval_ms: u64, prio: u16, out: &mut String) {
    if suffix == "slat" {
        return;
    }
    if spec.each {
        return io_lines(spec, suffix, w, out);
    }
    // One direction: the intervals count reads and writes together.
    let ddir = if w.trim_ios > 0 {
        2
    } else {
        u8::from(w.write_ios > 0 && w.read_ios == 0)
    };
    let tail = spec.tail(ddir, prio);
    for win in windows(w, interval_ms) {
        let per_sec = |n: f64| (n * 1000.0 / win.span_ms as f64).round() as u64;
        let (avg, max) = match suffix {
            "bw" => {
                let v = per_sec(win.bytes as f64 / 1024.0);
                (v, v)
            }
            "iops" => {
                let v = per_sec(win.ios as f64);
                (v, v)
            }
            // fio writes a latency window only when an I/O completed in it.
            _ => match (win.ios, win.mean_ns, win.max_ns) {
                (1.., Some(mean), Some(max)) => (mean, max),
                _ => continue,
            },
        };
        let _ = match spec.window {
            WindowValue::Avg => write!(out, "{}, {avg}", win.end_ms),
            WindowValue::Max => write!(out, "{}, {max}", win.end_ms),
            WindowValue::Both => write!(out, "{}, {avg}, {max}", win.end_ms),
        };
        out.push_str(&tail);
        out.push('\n');
    }
}

/// Every log file of the run, with its text, in [`Spec::files`]' order.
pub fn render(doc: &RunDocument, spec: &Spec) -> Vec<(PathBuf, String)> {
    let interval_ms = doc.log_interval_ms();
    let prio = (doc.config.ioprio.as_deref())
        .and_then(|t| crate::base::thread_setup::IoPrio::parse(t).ok())
        .map_or(0, |p| p.value());
    let mut out: Vec<(PathBuf, String)> = Vec::new();
    for (kind, prefix) in &spec.logs {
        for s in suffixes(*kind) {
            if spec.shared {
                let mut text = String::new();
                for w in &doc.workers {
                    lines(spec, s, w, interval_ms, prio, &mut text);
                }
                out.push((file(prefix, s, None), text));
            } else {
                for (i, w) in doc.workers.iter().enumerate() {
                    let mut text = String::new();
                    lines(spec, s, w, interval_ms, prio, &mut text);
                    out.push((file(prefix, s, Some(spec.first_job + i)), text));
                }
            }
        }
    }
    // The same prefix given twice for one kind is one file.
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::sample_doc;

    /// A line's fields as fio's own test (t/run-fio-tests.py, t0033 and
    /// t0034) reads them: `d` a number (`\d+`), `0` the number 0, `x` a
    /// hex priority (`0x[\da-f]+`).
    fn shape(line: &str) -> String {
        line.split(", ")
            .map(|f| {
                if f == "0" {
                    "0"
                } else if f
                    .strip_prefix("0x")
                    .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
                {
                    "x"
                } else if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) {
                    "d"
                } else {
                    "?"
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Whether `line` matches fio's pattern, written as `shape` writes a
    /// line: `d` also takes 0, as `\d+` does.
    fn matches(line: &str, pattern: &str) -> bool {
        let got = shape(line);
        let (g, p): (Vec<&str>, Vec<&str>) =
            (got.split(',').collect(), pattern.split(',').collect());
        g.len() == p.len()
            && g.iter()
                .zip(&p)
                .all(|(g, p)| g == p || (*p == "d" && *g == "0"))
    }

    fn doc() -> RunDocument {
        let mut d = sample_doc();
        for w in &mut d.workers {
            for iv in &mut w.intervals {
                iv.mean_ns = Some(1500);
                iv.max_ns = Some(9000);
            }
        }
        d
    }

    fn spec(kind: LogKind, format: &str) -> Spec {
        Spec {
            logs: vec![(kind, PathBuf::from("log"))],
            ..parse_format(format).unwrap()
        }
    }

    /// The first line of `file` among a rendering's files.
    fn first_line(files: &[(PathBuf, String)], file: &str) -> String {
        let (_, text) = files
            .iter()
            .find(|(p, _)| p == Path::new(file))
            .unwrap_or_else(|| panic!("{file} not written: {files:?}"));
        text.lines().next().unwrap_or("").to_string()
    }

    // cmdprio-bssplit.fio's write_lat_log with log_prio=1 and no
    // log_avg_msec: fio's line per I/O, each with its direction, size and
    // its own command's priority (0x2000: realtime 0; 0x4007: be 7), the
    // realtime flag without log_prio, the offset and clat issue time when
    // asked.
    #[test]
    fn each_writes_a_line_per_io_with_its_own_priority() {
        use crate::measure::worker::IoLine;
        let mut d = doc();
        d.workers[0].io_lines = vec![
            IoLine {
                done_ns: 1_500_000,
                issued_ns: 1_000_000,
                lat_ns: 500_000,
                offset: 65536,
                len: 65536,
                write: false,
                ioprio: 0x2000,
            },
            IoLine {
                done_ns: 2_900_000,
                issued_ns: 900_000,
                lat_ns: 2_000_000,
                offset: 1 << 20,
                len: 1 << 20,
                write: true,
                ioprio: 0x4007,
            },
        ];
        let text = |format: &str, file: &str| -> String {
            let files = render(&d, &spec(LogKind::Lat, format));
            let (_, t) = files.iter().find(|(p, _)| p == Path::new(file)).unwrap();
            t.clone()
        };
        assert_eq!(
            text("each,prio", "log_clat.1.log"),
            "1, 500000, 0, 65536, 0x2000\n2, 2000000, 1, 1048576, 0x4007\n"
        );
        assert_eq!(
            text("each", "log_lat.1.log"),
            "1, 500000, 0, 65536, 1\n2, 2000000, 1, 1048576, 0\n"
        );
        assert_eq!(
            text("each,offset,prio,issue-time", "log_clat.1.log"),
            "1, 500000, 0, 65536, 65536, 0x2000, 1000000\n2, 2000000, 1, 1048576, 1048576, 0x4007, 900000\n"
        );
        assert_eq!(text("each,prio", "log_slat.1.log"), "");
        for line in text("each,prio", "log_clat.1.log").lines() {
            assert!(matches(line, "d,d,d,d,x"), "{line}");
        }
    }

    /// fio's own log-format checks (t0033's and t0034's patterns), each
    /// on the log of a job with the same options, numbered as that job.
    #[test]
    fn fio_log_lines_match_fio_s_own_log_format_checks() {
        let d = doc();
        let cases: &[(LogKind, &str, &str, &str)] = &[
            // t0033
            (LogKind::Bw, "prio,first=1", "log_bw.1.log", "d,d,d,d,x"),
            (
                LogKind::Lat,
                "both,first=2",
                "log_clat.2.log",
                "d,d,d,d,0,d",
            ),
            (
                LogKind::Iops,
                "offset,prio,first=3",
                "log_iops.3.log",
                "d,d,d,d,d,x",
            ),
            (
                LogKind::Iops,
                "both,offset,first=4",
                "log_iops.4.log",
                "d,d,d,d,0,0,d",
            ),
            // t0034 (its slat log is written empty: not measured)
            (
                LogKind::Lat,
                "offset,issue-time",
                "log_clat.1.log",
                "d,d,d,d,d,d,d",
            ),
            (
                LogKind::Lat,
                "offset,issue-time",
                "log_lat.1.log",
                "d,d,d,d,d,d,0",
            ),
            (
                LogKind::Lat,
                "offset,issue-time,both,first=2",
                "log_clat.2.log",
                "d,d,d,d,0,0,d,0",
            ),
            (
                LogKind::Bw,
                "offset,issue-time,first=3",
                "log_bw.3.log",
                "d,d,d,d,d,d,0",
            ),
            (
                LogKind::Iops,
                "offset,issue-time,first=3",
                "log_iops.3.log",
                "d,d,d,d,d,d,0",
            ),
        ];
        for (kind, format, file, pattern) in cases {
            let files = render(&d, &spec(*kind, format));
            let line = first_line(&files, file);
            assert!(
                matches(&line, pattern),
                "{file} ({format}): {line:?} is not {pattern}"
            );
        }
        let files = render(&d, &spec(LogKind::Lat, "offset,issue-time"));
        assert_eq!(first_line(&files, "log_slat.1.log"), "");
    }

    /// The matcher itself refuses what fio's patterns refuse.
    #[test]
    fn the_pattern_check_refuses_a_wrong_column_count_or_kind() {
        assert!(!matches("1, 2, 0, 0", "d,d,d,d,x"));
        assert!(!matches("1, 2, 0, 0, 1", "d,d,d,d,x"));
        assert!(!matches("1, 2, 0, 5, 7, 1", "d,d,d,d,0,d"));
        assert!(matches("1, 2, 0, 0, 0x0000", "d,d,d,d,x"));
    }

    /// Each interval is a line at its end: KiB/s and I/O/s over its span,
    /// the mean or max latency; one file per worker, numbered from 1,
    /// or one for all (per_job_logs=0).
    #[test]
    fn each_interval_is_a_line_of_its_rate_at_its_end() {
        let d = doc();
        let files = render(&d, &spec(LogKind::Bw, ""));
        assert_eq!(
            files.iter().map(|f| f.0.clone()).collect::<Vec<_>>(),
            vec![PathBuf::from("log_bw.1.log"), PathBuf::from("log_bw.2.log")]
        );
        // Worker 0: 1000 reads of 4 KiB, half in each 1 s interval.
        assert_eq!(files[0].1, "1000, 2000, 0, 0, 0\n2000, 2000, 0, 0, 0\n");
        let iops = render(&d, &spec(LogKind::Iops, ""));
        assert_eq!(iops[1].1, "1000, 1000, 0, 0, 0\n2000, 1000, 0, 0, 0\n");
        let lat = render(&d, &spec(LogKind::Lat, "max"));
        assert_eq!(first_line(&lat, "log_lat.1.log"), "1000, 9000, 0, 0, 0");
        assert_eq!(first_line(&lat, "log_clat.1.log"), "1000, 9000, 0, 0, 0");
        let avg = render(&d, &spec(LogKind::Lat, ""));
        assert_eq!(first_line(&avg, "log_lat.1.log"), "1000, 1500, 0, 0, 0");
        let shared = render(&d, &spec(LogKind::Bw, "shared"));
        assert_eq!(shared.len(), 1);
        assert_eq!(shared[0].0, PathBuf::from("log_bw.log"));
        assert_eq!(shared[0].1.lines().count(), 4);
        assert_eq!(
            spec(LogKind::Lat, "shared").files(2),
            ["log_slat.log", "log_clat.log", "log_lat.log"].map(PathBuf::from)
        );
    }

    #[test]
    fn a_bad_log_or_format_word_is_named() {
        assert!(parse_log("bw").unwrap_err().contains("KIND=PREFIX"));
        assert!(parse_log("hist=x")
            .unwrap_err()
            .contains("'hist' is not a log"));
        assert!(parse_log("bw=").unwrap_err().contains("no file prefix"));
        assert_eq!(
            parse_log("iops=out/j").unwrap(),
            (LogKind::Iops, PathBuf::from("out/j"))
        );
        assert!(parse_format("first=0").unwrap_err().contains("'first=0'"));
        assert!(parse_format("median").unwrap_err().contains("'median'"));
    }
}
