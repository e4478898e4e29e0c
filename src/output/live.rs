//! The live destinations (`--live`, `--metrics`): the per-second lines the
//! collector ([`crate::measure::live`]) hands over, rendered by
//! [`crate::report::live`], go out here as they come: the stream on a file,
//! a FIFO or stdout, and the OpenMetrics/Prometheus text file rewritten
//! whole every second.
//!
//! The stream never makes the run wait: on a pipe, a FIFO or a socket the
//! descriptor is non-blocking, and a line the reader has no room for is
//! dropped and counted (each line is one `write` of less than `PIPE_BUF`
//! bytes, so a line is written whole or not at all). A regular file or a
//! terminal is written as it comes.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::base::error::{show_path, UsageError};
use crate::measure::config::LiveFormat;
use crate::measure::live::{LiveHub, LiveLine, LiveShown, LiveSink};
use crate::output::dest::{is_stdout, Destination, Destinations, Output, StreamOpenError};
use crate::report::live::{header, line, MetricsText};

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
    /// Opens `path` (`-`: stdout; else as [`crate::output::dest::check`]
    /// accepted it) for the stream and writes the CSV header.
    pub fn open(path: &Path, format: LiveFormat, dests: &Destinations) -> anyhow::Result<Stream> {
        let shown = if is_stdout(path) {
            "stdout".to_string()
        } else {
            show_path(path)
        };
        let mut socket = false;
        let mut own = false;
        let mut own_file = false;
        let file = if is_stdout(path) {
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
            s.make_nonblocking(is_stdout(path) && !own);
        }
        if let Some(h) = header(format) {
            s.put(h.as_bytes());
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
            self.put(&line(l, self.format));
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

/// The `--metrics` file.
pub struct Metrics {
    /// Its directory, held open since the check: every rewrite goes there.
    dest: Arc<Destination>,
    text: MetricsText,
    trouble: Option<String>,
}

impl Metrics {
    pub fn new(dest: Arc<Destination>) -> Metrics {
        Metrics {
            dest,
            text: MetricsText::new(),
            trouble: None,
        }
    }

    fn lines(&mut self, lines: &[LiveLine<'_>]) {
        self.text.add(lines);
        // Whole or not at all: a temporary file renamed over it (not
        // fsynced: it is rewritten every second, and the disk may be the
        // one under test).
        if let Err(e) = self.dest.replace_text(&self.text.render(), false) {
            self.trouble.get_or_insert(format!("{e:#}"));
        }
    }
}

/// Both outputs, as the collector's sink.
pub struct LiveOutputs {
    pub stream: Option<Stream>,
    pub metrics: Option<Metrics>,
}

impl LiveSink for LiveOutputs {
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

    fn disks(&mut self, disks: &[(String, String)]) {
        if let Some(m) = &mut self.metrics {
            m.text.set_disks(disks);
        }
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
/// a command's other outputs ([`crate::output::dest::check`]).
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
    interval: std::time::Duration,
    metrics: Option<&Path>,
    dests: &Destinations,
) -> anyhow::Result<Option<LiveHub>> {
    if live.is_none() && metrics.is_none() {
        return Ok(None);
    }
    let metrics_shown = metrics.map(|p| p.display().to_string());
    let stream = live.map(|p| Stream::open(p, format, dests)).transpose()?;
    let metrics = metrics
        .map(|p| dests.file(p).map(|d| Metrics::new(d.clone())))
        .transpose()?;
    let sink: Arc<Mutex<dyn LiveSink>> = Arc::new(Mutex::new(LiveOutputs { stream, metrics }));
    // A request built without the command line (Request::default()) has
    // no interval: the stream's default, one second.
    let interval = if interval.is_zero() {
        std::time::Duration::from_secs(1)
    } else {
        interval
    };
    Ok(Some(LiveHub {
        sink,
        interval,
        label: None,
        shown: LiveShown {
            path: live.map(|p| p.display().to_string()),
            format: match format {
                LiveFormat::Jsonl => "jsonl".into(),
                LiveFormat::Csv => "csv".into(),
            },
            metrics: metrics_shown,
            interval_sec: interval.as_secs_f64(),
        },
    }))
}
