//! The live outputs (`--live`, `--metrics`): the per-second lines the
//! collector ([`crate::measure::live`]) hands over, as JSON lines or CSV on
//! a file, a FIFO or stdout, and an OpenMetrics/Prometheus text file
//! rewritten whole every second.
//!
//! The stream never makes the run wait: on a pipe, a FIFO or a socket the
//! descriptor is non-blocking, and a line the reader has no room for is
//! dropped and counted (each line is one `write` of less than `PIPE_BUF`
//! bytes, so a line is written whole or not at all). A regular file or a
//! terminal is written as it comes.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::analysis::histogram::LatencyHistogram;
use crate::base::error::{show_path, UsageError};

use crate::measure::config::LiveFormat;
use crate::measure::live::{LiveHub, LiveLine, LiveSink};
use crate::report::output::{Destination, Destinations, Output, StreamOpenError};

/// The CSV header: the JSON line's fields, in order.
/// A mixed pattern fills the read_ and write_ columns (empty otherwise).
pub const CSV_HEADER: &str = "point,phase,t,seconds,kind,id,target,worker,bytes,ios,errors,bytes_per_sec,iops,p50_ns,p99_ns,max_ns,stalled,late,unix_sec,read_bytes,read_ios,read_bytes_per_sec,read_iops,read_p50_ns,read_p99_ns,read_max_ns,write_bytes,write_ios,write_bytes_per_sec,write_iops,write_p50_ns,write_p99_ns,write_max_ns";

/// One direction's second in a mixed pattern (`reads`, `writes`).
#[derive(Debug, Serialize)]
pub struct DirectionLine {
    pub bytes: u64,
    pub ios: u64,
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub max_ns: Option<u64>,
}

/// One line of the stream, as written (`docs/json.md`, "The live stream").
#[derive(Debug, Serialize)]
pub struct Line<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<&'a str>,
    pub t: u64,
    pub seconds: f64,
    pub kind: &'static str,
    pub id: &'a str,
    pub target: Option<&'a str>,
    pub worker: Option<usize>,
    pub bytes: u64,
    pub ios: u64,
    pub errors: u64,
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub stalled: bool,
    pub late: bool,
    /// When the line was written (Unix seconds).
    pub unix_sec: f64,
    /// A mixed pattern: reads and writes apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reads: Option<DirectionLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writes: Option<DirectionLine>,
}

impl<'a> Line<'a> {
    pub fn of(l: &'a LiveLine<'a>) -> Line<'a> {
        let label = |k: &str| {
            l.label
                .filter(|(key, _)| *key == k)
                .map(|(_, v)| v.as_str())
        };
        // Rates over the second's length (shorter for the window's last second).
        let per = |x: u64| {
            if l.seconds > 0.0 {
                x as f64 / l.seconds
            } else {
                0.0
            }
        };
        let dir = |d: &crate::measure::live::LiveDirection<'_>| DirectionLine {
            bytes: d.bytes,
            ios: d.ios,
            bytes_per_sec: per(d.bytes),
            iops: per(d.ios),
            p50_ns: d.hist.and_then(|h| h.quantile(0.5)),
            p99_ns: d.hist.and_then(|h| h.quantile(0.99)),
            max_ns: d.hist.and_then(|h| h.max()),
        };
        Line {
            point: label("point"),
            phase: label("phase"),
            t: l.t,
            seconds: l.seconds,
            kind: l.kind.name(),
            id: &l.id,
            target: l.target,
            worker: l.worker,
            bytes: l.bytes,
            ios: l.ios,
            errors: l.errors,
            bytes_per_sec: per(l.bytes),
            iops: per(l.ios),
            p50_ns: l.hist.and_then(|h| h.quantile(0.5)),
            p99_ns: l.hist.and_then(|h| h.quantile(0.99)),
            max_ns: l.hist.and_then(|h| h.max()),
            stalled: l.stalled,
            late: l.late,
            unix_sec: l.unix_sec,
            reads: l.dirs.map(|d| dir(&d[0])),
            writes: l.dirs.map(|d| dir(&d[1])),
        }
    }

    pub fn jsonl(&self) -> Vec<u8> {
        // Plain data: serializing cannot fail.
        let mut v = serde_json::to_vec(self).expect("a line serializes");
        v.push(b'\n');
        crate::report::json::escape_controls(v)
    }

    pub fn csv(&self) -> Vec<u8> {
        let opt = |x: Option<u64>| x.map(|v| v.to_string()).unwrap_or_default();
        let mut w = csv::Writer::from_writer(Vec::new());
        let dir = |d: &Option<DirectionLine>| -> [String; 7] {
            match d {
                Some(d) => [
                    d.bytes.to_string(),
                    d.ios.to_string(),
                    format!("{:.0}", d.bytes_per_sec),
                    format!("{:.1}", d.iops),
                    opt(d.p50_ns),
                    opt(d.p99_ns),
                    opt(d.max_ns),
                ],
                None => Default::default(),
            }
        };
        let mut record = vec![
            self.point.unwrap_or_default().to_string(),
            self.phase.unwrap_or_default().to_string(),
            self.t.to_string(),
            format!("{:.3}", self.seconds),
            self.kind.to_string(),
            self.id.to_string(),
            self.target.unwrap_or_default().to_string(),
            self.worker.map(|w| w.to_string()).unwrap_or_default(),
            self.bytes.to_string(),
            self.ios.to_string(),
            self.errors.to_string(),
            format!("{:.0}", self.bytes_per_sec),
            format!("{:.1}", self.iops),
            opt(self.p50_ns),
            opt(self.p99_ns),
            opt(self.max_ns),
            self.stalled.to_string(),
            self.late.to_string(),
            format!("{:.3}", self.unix_sec),
        ];
        record.extend(dir(&self.reads));
        record.extend(dir(&self.writes));
        // Writing to memory does not fail.
        w.write_record(record)
            .expect("writing to memory does not fail");
        // A text rendering: a target's control characters escaped.
        crate::base::error::show_lines_bytes(&w.into_inner().unwrap_or_default()).into_owned()
    }
}

/// The `--live` stream.
pub struct Stream {
    file: File,
    format: LiveFormat,
    /// Stdout is a socket: written with `send(MSG_DONTWAIT)`, so that the
    /// open file it shares (with stderr, say) is never made non-blocking.
    socket: bool,
    /// Flags to put back on a descriptor we made non-blocking (stdout).
    restore: Option<(RawFd, libc::c_int)>,
    /// A regular file this stream created: a line that did not fit whole
    /// is cut back off it (a full disk leaves no half line).
    own_file: bool,
    written: u64,
    /// Lines dropped, for a slow reader or after a failure.
    dropped: u64,
    /// Of those, the lines dropped because the stream had failed.
    failed_lines: u64,
    /// The stream failed (its reader closed it, a full disk): why; the
    /// lines after it are dropped.
    failure: Option<String>,
    shown: String,
}

impl Stream {
    /// Opens `path` (`-`: stdout; else as [`crate::report::output::check`]
    /// accepted it) for the stream and writes the CSV header.
    pub fn open(path: &Path, format: LiveFormat, dests: &Destinations) -> anyhow::Result<Stream> {
        let shown = if crate::report::output::is_stdout(path) {
            "stdout".to_string()
        } else {
            show_path(path)
        };
        let mut socket = false;
        let mut own = false;
        let mut own_file = false;
        let file = if crate::report::output::is_stdout(path) {
            let fd = std::io::stdout()
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| anyhow::anyhow!("cannot write --live to stdout: {e}"))?;
            let file = File::from(fd);
            let ft = file.metadata().map(|m| m.file_type());
            socket = ft.as_ref().is_ok_and(|t| t.is_socket());
            // A pipe: an open file of our own on it, made non-blocking. The
            // one stdout shares (with stderr under 2>&1, with the shell)
            // stays blocking: made non-blocking, a full pipe would make the
            // table's own writes to stderr fail.
            let reopened = ft
                .as_ref()
                .is_ok_and(|t| t.is_fifo())
                .then(|| {
                    OpenOptions::new()
                        .write(true)
                        .custom_flags(libc::O_NONBLOCK)
                        .open(format!("/proc/self/fd/{}", file.as_raw_fd()))
                        .ok()
                })
                .flatten();
            own = reopened.is_some();
            reopened.unwrap_or(file)
        } else {
            // Never through a link, never truncating: a FIFO where the
            // name is one, else a new file renamed onto the name.
            let file = dests.file(path)?.open_stream().map_err(|e| match e {
                StreamOpenError::NoReader => UsageError(format!(
                    "cannot write --live {shown}: the FIFO has no reader: start the reader first (e.g. cat it)"
                )),
                StreamOpenError::Other(e) => UsageError(format!("{e:#}")),
            })?;
            own_file = file.metadata().is_ok_and(|m| m.is_file());
            file
        };
        let mut s = Stream {
            file,
            format,
            socket,
            restore: None,
            own_file,
            written: 0,
            dropped: 0,
            failed_lines: 0,
            failure: None,
            shown,
        };
        // A socket is written with MSG_DONTWAIT, its flags left alone.
        if !socket {
            s.make_nonblocking(crate::report::output::is_stdout(path) && !own);
        }
        if format == LiveFormat::Csv {
            s.put(format!("{CSV_HEADER}\n").as_bytes());
            s.written = 0;
            s.dropped = 0;
        }
        Ok(s)
    }

    /// A pipe, FIFO or socket: never block on its reader. On stdout the
    /// open file is shared with whoever started us: its flags are put back.
    fn make_nonblocking(&mut self, shared: bool) {
        let fd = self.file.as_raw_fd();
        let Ok(meta) = self.file.metadata() else {
            return;
        };
        let ft = meta.file_type();
        if !(ft.is_fifo() || ft.is_socket()) {
            return;
        }
        // SAFETY: fcntl on a descriptor we own, with integer arguments.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 || flags & libc::O_NONBLOCK != 0 {
            return;
        }
        // SAFETY: as above.
        if unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } == 0 && shared {
            self.restore = Some((fd, flags));
        }
    }

    /// One line, with one write: whole, or dropped when the reader has no room.
    fn put(&mut self, bytes: &[u8]) {
        if self.failure.is_some() {
            self.dropped += 1;
            self.failed_lines += 1;
            return;
        }
        // Where the line starts in a file of ours: cut back to there when
        // it does not fit whole.
        let start = if self.own_file {
            (&self.file).stream_position().ok()
        } else {
            None
        };
        loop {
            match self.write(bytes) {
                Ok(n) if n == bytes.len() => {
                    self.written += 1;
                    return;
                }
                Ok(n) => {
                    // A regular file short of room (or a line over PIPE_BUF):
                    // the rest is written, or the stream gives up.
                    if let Err(e) = self.write_rest(&bytes[n..]) {
                        self.fail(e, start);
                    } else {
                        self.written += 1;
                    }
                    return;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    self.dropped += 1;
                    return;
                }
                Err(e) => {
                    self.fail(e, start);
                    return;
                }
            }
        }
    }

    /// One write: on a socket without blocking (and without SIGPIPE).
    fn write(&self, bytes: &[u8]) -> std::io::Result<usize> {
        if !self.socket {
            return (&self.file).write(bytes);
        }
        // SAFETY: send on our own descriptor, from a live slice of its length.
        let n = unsafe {
            libc::send(
                self.file.as_raw_fd(),
                bytes.as_ptr().cast(),
                bytes.len(),
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
        if n < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// The rest of a line begun: a socket's reader gets a second to take it
    /// (half a line cannot be dropped), then the stream gives up.
    fn write_rest(&self, mut rest: &[u8]) -> std::io::Result<()> {
        if !self.socket {
            return (&self.file).write_all(rest);
        }
        while !rest.is_empty() {
            match self.write(rest) {
                Ok(n) => rest = &rest[n..],
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    let mut p = libc::pollfd {
                        fd: self.file.as_raw_fd(),
                        events: libc::POLLOUT,
                        revents: 0,
                    };
                    // SAFETY: poll on one pollfd of ours, for up to a second.
                    if unsafe { libc::poll(&mut p, 1, 1000) } == 0 {
                        return Err(e);
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The stream gives up on `e`: the line is dropped (and cut back off a
    /// file of ours from `start`, so no half line is left), and so are the
    /// lines after it.
    fn fail(&mut self, e: std::io::Error, start: Option<u64>) {
        if let Some(start) = start {
            let _ = self.file.set_len(start);
            let _ = (&self.file).seek(SeekFrom::Start(start));
        }
        self.dropped += 1;
        self.failed_lines += 1;
        self.failure = Some(if e.raw_os_error() == Some(libc::ENOSPC) {
            format!(
                "no space left on the file system of {}: the --live stream stopped there",
                self.shown
            )
        } else {
            format!("the --live stream to {} failed ({e})", self.shown)
        });
    }

    /// What went wrong, with the lines it cost.
    fn trouble(&self) -> Option<String> {
        self.failure.as_ref().map(|why| {
            format!(
                "{why}: {} line(s) from then on were not written",
                self.failed_lines
            )
        })
    }

    fn lines(&mut self, lines: &[LiveLine<'_>]) {
        for l in lines {
            let line = Line::of(l);
            let bytes = match self.format {
                LiveFormat::Jsonl => line.jsonl(),
                LiveFormat::Csv => line.csv(),
            };
            self.put(&bytes);
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Some((fd, flags)) = self.restore {
            // SAFETY: our own descriptor, still open; the flags it had.
            unsafe { libc::fcntl(fd, libc::F_SETFL, flags) };
        }
    }
}

/// Latency histogram buckets (upper bounds, seconds) of `--metrics`.
pub const BUCKETS_SEC: [f64; 19] = [
    10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3,
    250e-3, 500e-3, 1.0, 2.5, 5.0, 10.0,
];

/// One worker's figures since the command started.
#[derive(Default)]
struct Cumulative {
    bytes: u64,
    ios: u64,
    errors: u64,
    hist: LatencyHistogram,
    /// A mixed pattern: reads and writes apart (bytes, I/Os, latencies).
    dirs: Option<[(u64, u64, LatencyHistogram); 2]>,
}

/// The `--metrics` file.
pub struct Metrics {
    /// Its directory, held open since the check: every rewrite goes there.
    dest: Arc<Destination>,
    /// (target, worker) → its counters.
    workers: BTreeMap<(String, usize), Cumulative>,
    /// The last second written (seconds since its run's window opened).
    last_t: f64,
    trouble: Option<String>,
}

impl Metrics {
    pub fn new(dest: Arc<Destination>) -> Metrics {
        Metrics {
            dest,
            workers: BTreeMap::new(),
            last_t: 0.0,
            trouble: None,
        }
    }

    fn lines(&mut self, lines: &[LiveLine<'_>]) {
        for l in lines {
            if let (Some(target), Some(w)) = (l.target, l.worker) {
                let c = self.workers.entry((target.to_string(), w)).or_default();
                c.bytes += l.bytes;
                c.ios += l.ios;
                c.errors += l.errors;
                if let Some(h) = l.hist {
                    c.hist.merge(h);
                }
                if let Some(d) = &l.dirs {
                    let cd = c.dirs.get_or_insert_with(Default::default);
                    for (k, d) in d.iter().enumerate() {
                        cd[k].0 += d.bytes;
                        cd[k].1 += d.ios;
                        if let Some(h) = d.hist {
                            cd[k].2.merge(h);
                        }
                    }
                }
                self.last_t = self.last_t.max(l.t as f64 + l.seconds);
            }
        }
        // Whole or not at all: a temporary file renamed over it (not
        // fsynced: it is rewritten every second, and the disk may be the
        // one under test).
        if let Err(e) = self.dest.replace_text(&self.render(), false) {
            self.trouble.get_or_insert(format!("{e:#}"));
        }
    }

    /// The exposition text (Prometheus text format 0.0.4, which
    /// OpenMetrics parsers read too).
    pub fn render(&self) -> String {
        let mut s = String::new();
        let labels =
            |(t, w): &(String, usize)| format!("target=\"{}\",worker=\"{w}\"", escape_label(t));
        for (name, help, get) in [
            (
                "stripebench_bytes_total",
                "Bytes moved in the measured windows.",
                (|c: &Cumulative| c.bytes) as fn(&Cumulative) -> u64,
            ),
            (
                "stripebench_ios_total",
                "I/Os completed in the measured windows.",
                |c| c.ios,
            ),
            ("stripebench_errors_total", "I/O errors.", |c| c.errors),
        ] {
            s.push_str(&format!("# HELP {name} {help}\n# TYPE {name} counter\n"));
            for (k, c) in &self.workers {
                s.push_str(&format!("{name}{{{}}} {}\n", labels(k), get(c)));
            }
        }
        // A mixed pattern: each direction's bytes, I/Os and latencies.
        let dir = ["read", "write"];
        for (name, help, get) in [
            (
                "stripebench_direction_bytes_total",
                "Bytes moved in the measured windows, by direction (a mixed pattern).",
                (|c: &(u64, u64, LatencyHistogram)| c.0)
                    as fn(&(u64, u64, LatencyHistogram)) -> u64,
            ),
            (
                "stripebench_direction_ios_total",
                "I/Os completed in the measured windows, by direction (a mixed pattern).",
                |c| c.1,
            ),
        ] {
            if self.workers.values().all(|c| c.dirs.is_none()) {
                break;
            }
            s.push_str(&format!("# HELP {name} {help}\n# TYPE {name} counter\n"));
            for (k, c) in &self.workers {
                for (d, x) in c.dirs.iter().flatten().enumerate() {
                    s.push_str(&format!(
                        "{name}{{{},direction=\"{}\"}} {}\n",
                        labels(k),
                        dir[d],
                        get(x)
                    ));
                }
            }
        }
        let name = "stripebench_latency_seconds";
        s.push_str(&format!(
            "# HELP {name} I/O latency, from the issue to completion (from the due time under --rate or --rate-iops).\n# TYPE {name} histogram\n"
        ));
        for (k, c) in &self.workers {
            let l = labels(k);
            for le in BUCKETS_SEC {
                let n = c.hist.count_at_most((le * 1e9) as u64);
                s.push_str(&format!("{name}_bucket{{{l},le=\"{le}\"}} {n}\n"));
            }
            let n = c.hist.len();
            s.push_str(&format!("{name}_bucket{{{l},le=\"+Inf\"}} {n}\n"));
            s.push_str(&format!("{name}_sum{{{l}}} {}\n", c.hist.sum_ns() / 1e9));
            s.push_str(&format!("{name}_count{{{l}}} {n}\n"));
        }
        let name = "stripebench_direction_latency_seconds";
        if self.workers.values().any(|c| c.dirs.is_some()) {
            s.push_str(&format!(
                "# HELP {name} I/O latency by direction (a mixed pattern), as stripebench_latency_seconds.\n# TYPE {name} histogram\n"
            ));
        }
        for (k, c) in &self.workers {
            for (d, (_, _, h)) in c.dirs.iter().flatten().enumerate() {
                let l = format!("{},direction=\"{}\"", labels(k), dir[d]);
                for le in BUCKETS_SEC {
                    let n = h.count_at_most((le * 1e9) as u64);
                    s.push_str(&format!("{name}_bucket{{{l},le=\"{le}\"}} {n}\n"));
                }
                let n = h.len();
                s.push_str(&format!("{name}_bucket{{{l},le=\"+Inf\"}} {n}\n"));
                s.push_str(&format!("{name}_sum{{{l}}} {}\n", h.sum_ns() / 1e9));
                s.push_str(&format!("{name}_count{{{l}}} {n}\n"));
            }
        }
        let name = "stripebench_window_seconds";
        s.push_str(&format!(
            "# HELP {name} How far the run in progress is into its measured window.\n# TYPE {name} gauge\n{name} {}\n",
            self.last_t
        ));
        s
    }
}

/// A label value as the text format wants it: `\`, `"` and newlines escaped.
pub fn escape_label(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// Both outputs, as the collector's sink.
pub struct Outputs {
    pub stream: Option<Stream>,
    pub metrics: Option<Metrics>,
}

impl LiveSink for Outputs {
    fn lines(&mut self, lines: &[LiveLine<'_>]) {
        if let Some(s) = &mut self.stream {
            s.lines(lines);
        }
        if let Some(m) = &mut self.metrics {
            m.lines(lines);
        }
    }

    fn counts(&self) -> (u64, u64, u64) {
        self.stream
            .as_ref()
            .map_or((0, 0, 0), |s| (s.written, s.dropped, s.failed_lines))
    }

    fn trouble(&self) -> Option<String> {
        let s = self.stream.as_ref().and_then(Stream::trouble);
        let m = self.metrics.as_ref().and_then(|m| m.trouble.clone());
        match (s, m) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        }
    }
}

/// `--live` (a stream: a FIFO is taken) and `--metrics`, to be checked with
/// a command's other outputs ([`crate::report::output::check`]).
pub fn outputs<'a>(live: Option<&'a Path>, metrics: Option<&'a Path>) -> Vec<Output<'a>> {
    let mut v: Vec<Output> = live
        .map(|p| Output::stream("--live", p))
        .into_iter()
        .collect();
    v.extend(metrics.map(|p| Output::new("--metrics", p)));
    v
}

/// Opens `--live` and `--metrics` (checked before, with the other outputs,
/// into `dests`): the hub every run of the command hands its seconds to.
pub fn open(
    live: Option<&Path>,
    format: LiveFormat,
    metrics: Option<&Path>,
    dests: &Destinations,
) -> anyhow::Result<Option<LiveHub>> {
    if live.is_none() && metrics.is_none() {
        return Ok(None);
    }
    let stream = live.map(|p| Stream::open(p, format, dests)).transpose()?;
    let metrics = metrics
        .map(|p| dests.file(p).map(|d| Metrics::new(d.clone())))
        .transpose()?;
    let sink: Arc<Mutex<dyn LiveSink>> = Arc::new(Mutex::new(Outputs { stream, metrics }));
    Ok(Some(LiveHub { sink, label: None }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::live::LiveKind;

    fn line<'a>(
        h: Option<&'a LatencyHistogram>,
        label: Option<&'a (&'static str, String)>,
    ) -> LiveLine<'a> {
        LiveLine {
            label,
            t: 3,
            seconds: 0.5,
            kind: LiveKind::Worker,
            id: "1".into(),
            target: Some("/dev/a \"b\"\n,c"),
            worker: Some(1),
            bytes: 1000,
            ios: 10,
            errors: 0,
            hist: h,
            dirs: None,
            stalled: false,
            late: false,
            unix_sec: 1.0,
        }
    }

    #[test]
    fn a_line_rates_over_its_own_length_and_carries_its_label() {
        let mut h = LatencyHistogram::new();
        for ns in [100, 200, 300] {
            h.record(ns);
        }
        let label = ("point", "bs=4k".to_string());
        let l = line(Some(&h), Some(&label));
        let v: serde_json::Value = serde_json::from_slice(&Line::of(&l).jsonl()).unwrap();
        assert_eq!(v["bytes_per_sec"], 2000.0);
        assert_eq!(v["iops"], 20.0);
        assert_eq!(v["point"], "bs=4k");
        assert!(v.get("phase").is_none());
        assert_eq!(v["p50_ns"], 200);
        assert_eq!(v["max_ns"], 300);
        let empty = line(None, None);
        let v: serde_json::Value = serde_json::from_slice(&Line::of(&empty).jsonl()).unwrap();
        assert!(v["p99_ns"].is_null());
        // CSV: as many cells as the header, the awkward target quoted.
        let csv = Line::of(&l).csv();
        let text = [format!("{CSV_HEADER}\n").as_bytes(), &csv[..]].concat();
        let mut r = csv::Reader::from_reader(&text[..]);
        let rec = r.records().next().unwrap().unwrap();
        assert_eq!(rec.len(), CSV_HEADER.split(',').count());
        assert_eq!(&rec[6], "/dev/a \"b\"\n,c");
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
