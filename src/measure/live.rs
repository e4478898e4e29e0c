//! The live stream's collection (`--live`, `--metrics`): each worker hands
//! every finished second (its counts and that second's own latency
//! histogram) to a collector thread, which shapes one line per worker, per
//! target and a total for the second and gives them to a [`LiveSink`] (the
//! output layer writes them). [`RunOutputs`] is how a measured run reaches
//! its command's outputs: this layer defines it, `output` implements it.
//!
//! The hand-off is off the hot path: once per second, at the first
//! completion past the second's end, the worker swaps its histogram for a
//! recycled one (`try_recv` from its own pool) and `try_send`s the second
//! on a bounded channel. No lock, allocation or syscall: the collector never
//! blocks on the channel (it sleeps and polls), so a send never has a
//! sleeper to wake. A full channel or an empty pool loses that second's
//! figures or histogram, counted, and the worker goes on.
//!
//! A worker that completes nothing (a stalled device) hands nothing off: the
//! collector does not wait for it past [`GRACE`] after the second's end and
//! writes its line with zeros, marked `stalled`. If figures for that second
//! come later (it completed I/O in it, then stalled), they are written when
//! they come, marked `late`, with a target and a total line of their own, so
//! that the lines still add up to the run's figures.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, Sender, TryRecvError, TrySendError};

use crate::analysis::histogram::LatencyHistogram;
use crate::measure::control::RunControl;

/// Histograms in circulation per worker: the one it records into, and
/// three for the seconds the collector holds or is giving back.
const POOL: usize = 4;
/// Seconds a worker may have handed off and the collector not yet taken.
const QUEUE_PER_WORKER: usize = 16;
/// How long after a second's end the collector waits for a worker that has
/// not handed it off before writing it as stalled.
pub const GRACE: Duration = Duration::from_millis(300);
/// The collector's sleep between looks at the channel.
const POLL: Duration = Duration::from_millis(25);

/// What a line is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveKind {
    Worker,
    Target,
    Total,
}

impl LiveKind {
    pub fn name(self) -> &'static str {
        match self {
            LiveKind::Worker => "worker",
            LiveKind::Target => "target",
            LiveKind::Total => "total",
        }
    }
}

/// Which point of a sweep or phase of a compare a run is: (`point`, its
/// values) or (`phase`, its name).
pub type LiveLabel = (&'static str, String);

/// One line of the stream: one second of one worker, target, or the total.
#[derive(Debug)]
pub struct LiveLine<'a> {
    pub label: Option<&'a LiveLabel>,
    /// The interval's index since the window opened (the ramp is not
    /// streamed): with the default 1 s interval, seconds since it opened.
    pub t: u64,
    /// The interval's length in seconds: `interval_sec`, except the last
    /// one when the window closed inside it (the deadline, or an interrupt).
    pub seconds: f64,
    /// `--live-interval` in seconds: interval `t` starts at `t × interval_sec`.
    pub interval_sec: f64,
    pub kind: LiveKind,
    /// The worker's id, the target's path, or `total`.
    pub id: String,
    /// A worker line's target.
    pub target: Option<&'a str>,
    pub worker: Option<usize>,
    pub bytes: u64,
    pub ios: u64,
    /// I/O errors the worker counted since its previous line.
    pub errors: u64,
    /// The second's latencies (`None`: nothing completed, or the histogram
    /// was lost because the collector fell behind).
    pub hist: Option<&'a LatencyHistogram>,
    /// A mixed pattern: the reads' and the writes' figures apart (`hist`
    /// then holds both).
    pub dirs: Option<[LiveDirection<'a>; 2]>,
    /// Nothing was handed off by the second's end plus [`GRACE`]: zeros.
    pub stalled: bool,
    /// Figures for a second already written (as stalled): add them to it.
    pub late: bool,
    /// When the line was made (Unix seconds).
    pub unix_sec: f64,
}

/// One direction's second in a mixed pattern (reads, or writes).
#[derive(Debug, Clone, Copy)]
pub struct LiveDirection<'a> {
    pub bytes: u64,
    pub ios: u64,
    pub hist: Option<&'a LatencyHistogram>,
}

/// Where the lines go (the output layer: the `--live` stream, the
/// `--metrics` file). Called by the collector thread only.
pub trait LiveSink: Send {
    /// One second's lines (workers, then targets, then the total).
    fn lines(&mut self, lines: &[LiveLine<'_>]);
    /// Lines written so far, dropped (a slow reader, or a failed stream),
    /// and of those dropped, the ones lost because the stream had failed.
    fn counts(&self) -> (u64, u64, u64);
    /// What went wrong writing, if anything (said once, as a warning).
    fn trouble(&self) -> Option<String>;
    /// The run's targets and who their disks are (path, identity key),
    /// before its first line: the --metrics file labels each by its disk.
    fn disks(&mut self, _disks: &[(String, String)]) {}
}

/// What watches a run's lines in front of its sink (`--steady`,
/// `--rate-min`): it judges each batch, and may end the window.
pub trait Watch: Send {
    fn see(&mut self, lines: &[LiveLine<'_>]);
}

/// A watch in front of a sink (none: the lines go nowhere else): each
/// batch seen, then handed on; the sink's counts and trouble are its own.
struct Front<W> {
    watch: W,
    inner: Option<Arc<Mutex<dyn LiveSink>>>,
}

impl<W: Watch> LiveSink for Front<W> {
    fn lines(&mut self, lines: &[LiveLine<'_>]) {
        self.watch.see(lines);
        if let Some(inner) = &self.inner {
            inner.lock().unwrap_or_else(|e| e.into_inner()).lines(lines);
        }
    }

    fn counts(&self) -> (u64, u64, u64) {
        self.inner.as_ref().map_or((0, 0, 0), |i| {
            i.lock().unwrap_or_else(|e| e.into_inner()).counts()
        })
    }

    fn trouble(&self) -> Option<String> {
        self.inner
            .as_ref()
            .and_then(|i| i.lock().unwrap_or_else(|e| e.into_inner()).trouble())
    }

    fn disks(&mut self, disks: &[(String, String)]) {
        if let Some(inner) = &self.inner {
            inner.lock().unwrap_or_else(|e| e.into_inner()).disks(disks);
        }
    }
}

/// The sink a command opened, shared by its runs (a sweep's points), with
/// the label of the run in progress.
#[derive(Clone)]
pub struct LiveHub {
    pub sink: Arc<Mutex<dyn LiveSink>>,
    /// `--live-interval`: each line's span (10 ms to 1 h; 1 s with --metrics).
    pub interval: Duration,
    pub label: Option<LiveLabel>,
    /// Where the sink writes, as the run's document records it.
    pub shown: LiveShown,
}

impl LiveHub {
    /// A hub whose sink is `watch` in front of `hub`'s (or alone, with no
    /// --live or --metrics), its label and destination kept, each line
    /// `interval` long.
    pub fn in_front(
        watch: impl Watch + 'static,
        hub: Option<&LiveHub>,
        interval: Duration,
    ) -> LiveHub {
        LiveHub {
            sink: Arc::new(Mutex::new(Front {
                watch,
                inner: hub.map(|h| h.sink.clone()),
            })),
            interval,
            label: hub.and_then(|h| h.label.clone()),
            shown: hub.map(|h| h.shown.clone()).unwrap_or_default(),
        }
    }
}

/// Where the lines go, as the run's document says it (`live.path`,
/// `live.format`, `live.metrics`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveShown {
    /// `--live` as given (`-`: stdout).
    pub path: Option<String>,
    /// `jsonl` or `csv`.
    pub format: String,
    /// `--metrics` as given.
    pub metrics: Option<String>,
    /// `--live-interval` in seconds.
    pub interval_sec: f64,
}

/// What one measured run hands to its command's outputs (implemented by
/// the output layer, which owns every destination): its seconds, and a
/// last look, once the targets are resolved, that no output is one of them.
pub trait RunOutputs: Sync {
    /// The hub this run's seconds go to (`None`: no --live, no --metrics).
    fn live(&self) -> Option<&LiveHub>;
    /// Refuses an output that is the same file (device, inode) as one of
    /// `files`, the files the targets resolved to.
    fn refuse_on_files(&self, files: &[(u64, u64)]) -> Result<(), crate::base::error::UsageError>;
    /// Says `warnings` now, before the run measures (they are in its
    /// document too): a run of many minutes should not keep them to its end.
    fn warn(&self, warnings: &[crate::base::warning::Warning]);
}

impl std::fmt::Debug for LiveHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveHub")
            .field("label", &self.label)
            .finish()
    }
}

/// What the collector saw over one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveStats {
    pub seconds: u64,
    pub lines_written: u64,
    /// Lines not written: the reader was too slow for them, or the stream
    /// had failed ([`LiveStats::lines_failed`] of them).
    pub lines_dropped: u64,
    /// Lines not written because the stream had failed (a full disk, a
    /// reader gone): `trouble` says why; no reader fell behind.
    pub lines_failed: u64,
    /// Worker lines written with zeros because nothing came in time.
    pub stalled_lines: u64,
    /// Worker lines with figures that came after their second was written.
    pub late_lines: u64,
    /// Seconds a worker could not hand off (the collector's queue was full).
    pub seconds_lost: u64,
    /// Seconds written without their histogram (no recycled one was free).
    pub histograms_lost: u64,
    pub trouble: Option<String>,
    /// Where the lines went (the hub's [`LiveHub::shown`]).
    pub shown: LiveShown,
}

/// One worker's finished second.
struct Second {
    worker: usize,
    t: u64,
    bytes: u64,
    ios: u64,
    errors: u64,
    hist: Option<LatencyHistogram>,
    hist_lost: bool,
    /// A mixed pattern: the second's writes apart (bytes, I/Os, their
    /// latencies); `hist` then holds the reads only.
    writes: Option<(u64, u64, Option<LatencyHistogram>)>,
}

// One message a second per worker, moved through a bounded channel:
// boxing the large variant would allocate every second on the worker.
#[allow(clippy::large_enum_variant)]
enum Msg {
    Second(Second),
    /// The worker's last message: it hands off nothing more; how it ended,
    /// when it says.
    Done(usize, Option<WorkerEnd>),
}

/// How a worker ended, for the length of the window's last second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerEnd {
    /// Stopped by the deadline (or an interrupt).
    pub deadline: bool,
    /// Stopped by its byte limit (`--io-limit`, `--passes`, verify).
    pub limit: bool,
    /// Its last completion counted in the window, ns since the epoch.
    pub last_ns: u64,
}

/// A worker's end of the hand-off. Lives in its `Tally`.
pub struct Tap {
    worker: usize,
    /// `--live-interval` in ns: the worker hands off one interval per this.
    pub interval_ns: u64,
    tx: Sender<Msg>,
    free: Receiver<LatencyHistogram>,
    /// What the worker records this second's latencies into (the reads
    /// only, when `write_hist` is set).
    pub hist: LatencyHistogram,
    /// A mixed pattern: this second's write latencies, bytes and I/Os
    /// apart (set by the worker before its loop; [`Tap::mixed`]).
    write_hist: Option<LatencyHistogram>,
    write_bytes: u64,
    write_ios: u64,
    /// A histogram taken back from a send that failed.
    spare: Option<LatencyHistogram>,
    /// A second one (both directions' came back), used before the pool.
    extra: Option<LatencyHistogram>,
    errors_before: u64,
    lost: Arc<AtomicU64>,
    /// How the worker ended, once it said ([`Tap::ended`]).
    end: Option<WorkerEnd>,
}

impl Tap {
    /// A mixed pattern: reads and writes are handed off apart.
    pub fn mixed(&mut self) {
        self.write_hist = Some(LatencyHistogram::new());
    }

    /// One completion of a mixed pattern's write: its bytes apart (the
    /// interval's bytes and I/Os in all are the worker's to hand off).
    #[inline]
    pub fn count_write(&mut self, bytes: u64) {
        if self.write_hist.is_some() {
            self.write_bytes += bytes;
            self.write_ios += 1;
        }
    }

    /// The interval's histograms, the reads' (or all) and a mixed
    /// pattern's writes': the worker drains its own interval's latencies
    /// into them (it records each latency once, into its own).
    pub fn hists(&mut self) -> (Option<&mut LatencyHistogram>, Option<&mut LatencyHistogram>) {
        (Some(&mut self.hist), self.write_hist.as_mut())
    }

    /// Says how the worker ended (sent with its last message, on drop).
    pub fn ended(&mut self, end: WorkerEnd) {
        self.end = Some(end);
    }

    /// Errors up to `errors_total` not handed off yet.
    pub fn pending(&self, errors_total: u64) -> bool {
        errors_total > self.errors_before
    }

    /// Hands second `t` off (its counts, and errors up to `errors_total`).
    /// No lock, allocation or syscall: one `try_recv`, one `try_send`.
    #[inline]
    pub fn hand_off(&mut self, t: u64, bytes: u64, ios: u64, errors_total: u64) {
        let errors = errors_total - self.errors_before;
        self.errors_before = errors_total;
        let mut hist_lost = false;
        let hist = if self.hist.is_empty() {
            None
        } else {
            match self
                .spare
                .take()
                .or_else(|| self.extra.take())
                .or_else(|| self.free.try_recv().ok())
            {
                Some(fresh) => Some(std::mem::replace(&mut self.hist, fresh)),
                None => {
                    // The collector holds every histogram: this second's is lost.
                    self.hist.reset();
                    hist_lost = true;
                    None
                }
            }
        };
        let writes = match &mut self.write_hist {
            None => None,
            Some(w) => {
                let h = if w.is_empty() {
                    None
                } else {
                    match self
                        .spare
                        .take()
                        .or_else(|| self.extra.take())
                        .or_else(|| self.free.try_recv().ok())
                    {
                        Some(fresh) => Some(std::mem::replace(w, fresh)),
                        None => {
                            w.reset();
                            hist_lost = true;
                            None
                        }
                    }
                };
                let out = (self.write_bytes, self.write_ios, h);
                (self.write_bytes, self.write_ios) = (0, 0);
                Some(out)
            }
        };
        let msg = Msg::Second(Second {
            worker: self.worker,
            t,
            bytes,
            ios,
            errors,
            hist,
            hist_lost,
            writes,
        });
        if let Err(
            TrySendError::Full(Msg::Second(s)) | TrySendError::Disconnected(Msg::Second(s)),
        ) = self.tx.try_send(msg)
        {
            self.lost.fetch_add(1, Ordering::Relaxed);
            // One kept as the spare, the other back into the pool.
            for mut h in s.hist.into_iter().chain(s.writes.and_then(|w| w.2)) {
                h.reset();
                match self.spare {
                    None => self.spare = Some(h),
                    Some(_) => self.extra = Some(h),
                }
            }
        }
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        // The worker's end, off the hot path: wait a little for room.
        let _ = self
            .tx
            .send_timeout(Msg::Done(self.worker, self.end), Duration::from_secs(1));
    }
}

/// The collector's end, made before the workers start.
pub struct Collector {
    rx: Receiver<Msg>,
    free: Vec<Sender<LatencyHistogram>>,
    lost: Arc<AtomicU64>,
    /// Each worker's target (index into `targets`).
    worker_target: Vec<usize>,
    targets: Vec<String>,
    hub: LiveHub,
}

/// One tap per worker (in worker order) and their collector.
pub fn channels(
    hub: LiveHub,
    worker_target: Vec<usize>,
    targets: Vec<String>,
) -> (Vec<Tap>, Collector) {
    let n = worker_target.len();
    // A short interval: room for the intervals the collector may hold
    // (up to GRACE past their end, plus a poll) before it gives them back.
    // All made here, before the first I/O.
    let iv = (hub.interval.as_nanos() as u64).max(1);
    let held = ((GRACE + POLL).as_nanos() as u64).div_ceil(iv) as usize;
    let pool = POOL.max(held + 2);
    let (tx, rx) = bounded(QUEUE_PER_WORKER.max(2 * pool) * n.max(1));
    let lost = Arc::new(AtomicU64::new(0));
    let mut taps = Vec::with_capacity(n);
    let mut free = Vec::with_capacity(n);
    for worker in 0..n {
        // Room for a mixed pattern's write histograms too.
        let (ftx, frx) = bounded(2 * pool);
        for _ in 1..pool {
            let _ = ftx.try_send(LatencyHistogram::new());
        }
        free.push(ftx);
        taps.push(Tap {
            worker,
            interval_ns: iv,
            tx: tx.clone(),
            free: frx,
            hist: LatencyHistogram::new(),
            write_hist: None,
            write_bytes: 0,
            write_ios: 0,
            spare: None,
            extra: None,
            errors_before: 0,
            lost: lost.clone(),
            end: None,
        });
    }
    let c = Collector {
        rx,
        free,
        lost,
        worker_target,
        targets,
        hub,
    };
    (taps, c)
}

impl Collector {
    /// Runs until every worker is done (or its tap is gone): writes each
    /// second as soon as every worker handed it off, or [`GRACE`] after it
    /// ended. `epoch`: the run's start; the window opens `ramp` later.
    pub fn run(self, control: &RunControl, epoch: Instant, ramp: Duration) -> LiveStats {
        // The sink may write to a pipe whose reader has gone: that write
        // fails with EPIPE (the sink says so and drops the rest) instead of
        // raising a SIGPIPE that would end the run. Blocked in this thread
        // only: the signal a write raises goes to the thread that wrote.
        let mut pipe = nix::sys::signal::SigSet::empty();
        pipe.add(nix::sys::signal::Signal::SIGPIPE);
        let _ = pipe.thread_block();
        let n = self.worker_target.len();
        let open = epoch + ramp;
        // The interval (`--live-interval`), in ns: interval t spans
        // [t × iv, (t + 1) × iv) of the window.
        let iv = self.interval_ns();
        let (w0, d0, f0) = self.lock_counts();
        let mut st = State {
            c: &self,
            pending: BTreeMap::new(),
            next_t: 0,
            done: vec![false; n],
            done_t: vec![None; n],
            ends: vec![None; n],
            last_t: vec![None; n],
            stats: LiveStats {
                shown: self.hub.shown.clone(),
                ..LiveStats::default()
            },
            target_hist: vec![LatencyHistogram::new(); self.targets.len()],
            total_hist: LatencyHistogram::new(),
            worker_hist: Vec::new(),
            target_dir_hist: Vec::new(),
            total_dir_hist: Default::default(),
        };
        loop {
            let mut gone = false;
            loop {
                match self.rx.try_recv() {
                    Ok(Msg::Second(s)) => st.take(s),
                    Ok(Msg::Done(w, end)) => {
                        st.done[w] = true;
                        st.ends[w] = end;
                        // It was there, stalled or not, up to this second.
                        let now = Instant::now().saturating_duration_since(open);
                        st.done_t[w] = Some((now.as_nanos() / iv as u128) as u64);
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        gone = true;
                        break;
                    }
                }
            }
            if gone {
                // Every tap is gone: whatever was not said is said now.
                st.done.iter_mut().for_each(|d| *d = true);
            }
            let all_done = st.done.iter().all(|&d| d);
            // Every second that is complete, or overdue.
            loop {
                let t = st.next_t;
                let every = (0..n).all(|w| st.has(w, t));
                let due = open + Duration::from_nanos(iv.saturating_mul(t + 1)) + GRACE;
                let overdue = Instant::now() >= due;
                let beyond = (0..n).all(|w| st.finished_before(w, t));
                if beyond && all_done {
                    break;
                }
                if !(every || overdue || all_done) {
                    break;
                }
                // Past the window's end only the seconds handed off are
                // written: nothing is stalled after the deadline.
                let window_ns = st
                    .window_end_ns(control.end_ns(), all_done, ramp)
                    .saturating_sub(ramp.as_nanos() as u64);
                let t_ns = t.saturating_mul(iv);
                if t_ns >= window_ns && !st.pending.contains_key(&t) {
                    if all_done {
                        st.next_t += 1;
                        continue;
                    }
                    break;
                }
                // In whole nanoseconds: 0.504192429, not 0.5041924290000002.
                st.write(t, (window_ns - t_ns.min(window_ns)).min(iv) as f64 / 1e9);
                st.next_t += 1;
            }
            if all_done {
                break;
            }
            let next_due = open + Duration::from_nanos(iv.saturating_mul(st.next_t + 1));
            let wait = next_due
                .saturating_duration_since(Instant::now())
                .clamp(Duration::from_millis(1), POLL);
            std::thread::sleep(wait);
        }
        let mut stats = st.stats;
        let (w1, d1, f1) = self.lock_counts();
        stats.lines_written = w1 - w0;
        stats.lines_dropped = d1 - d0;
        stats.lines_failed = f1 - f0;
        stats.seconds_lost = self.lost.load(Ordering::Relaxed);
        stats.trouble = self
            .hub
            .sink
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .trouble();
        stats
    }

    /// The interval in ns (at least 1: a hub made by hand may have none).
    fn interval_ns(&self) -> u64 {
        (self.hub.interval.as_nanos() as u64).max(1)
    }

    fn lock_counts(&self) -> (u64, u64, u64) {
        self.hub
            .sink
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .counts()
    }
}

/// The collector's seconds in progress.
struct State<'c> {
    c: &'c Collector,
    /// Second → each worker's hand-off.
    pending: BTreeMap<u64, Vec<Option<Second>>>,
    next_t: u64,
    done: Vec<bool>,
    /// The second in which each worker said it was done.
    done_t: Vec<Option<u64>>,
    /// How each worker ended.
    ends: Vec<Option<WorkerEnd>>,
    /// Each worker's last second handed off.
    last_t: Vec<Option<u64>>,
    stats: LiveStats,
    target_hist: Vec<LatencyHistogram>,
    total_hist: LatencyHistogram,
    /// A mixed pattern (made at its first second): each worker's second,
    /// both directions merged, and the targets' and total's reads and
    /// writes apart.
    worker_hist: Vec<LatencyHistogram>,
    target_dir_hist: Vec<[LatencyHistogram; 2]>,
    total_dir_hist: [LatencyHistogram; 2],
}

impl State<'_> {
    fn take(&mut self, s: Second) {
        let w = s.worker;
        self.last_t[w] = Some(self.last_t[w].map_or(s.t, |l| l.max(s.t)));
        if s.t < self.next_t {
            self.late(s);
            return;
        }
        let n = self.done.len();
        let slot = self
            .pending
            .entry(s.t)
            .or_insert_with(|| (0..n).map(|_| None).collect());
        slot[w] = Some(s);
    }

    /// Where the window ends (ns since the epoch), as the coordinator
    /// reckons it: the deadline, unless every worker has ended and none by
    /// the deadline, when a size-bounded run ends at its last completion.
    fn window_end_ns(&self, deadline_ns: u64, all_done: bool, ramp: Duration) -> u64 {
        let ends: Vec<&WorkerEnd> = self.ends.iter().flatten().collect();
        if !all_done || ends.iter().any(|e| e.deadline) || !ends.iter().any(|e| e.limit) {
            return deadline_ns;
        }
        let last = ends.iter().map(|e| e.last_ns).max().unwrap_or(0);
        deadline_ns.min(last.max(ramp.as_nanos() as u64))
    }

    /// Whether worker `w` has handed second `t` off (or is done without it).
    fn has(&self, w: usize, t: u64) -> bool {
        self.pending.get(&t).is_some_and(|s| s[w].is_some()) || self.finished_before(w, t)
    }

    /// The worker is done and second `t` is past its last: the last it
    /// handed off, and the one in which it ended (a worker that ended while
    /// stalled has lines up to then).
    fn finished_before(&self, w: usize, t: u64) -> bool {
        self.done[w] && self.last_t[w].max(self.done_t[w]).is_none_or(|l| l < t)
    }

    /// Writes second `t`: a line per worker that has one, per target and the total.
    fn write(&mut self, t: u64, seconds: f64) {
        let n = self.done.len();
        let got = self
            .pending
            .remove(&t)
            .unwrap_or_else(|| (0..n).map(|_| None).collect());
        // A worker done and past its last second has no line; one not done
        // that handed nothing off is stalled (one that ended in the second
        // without handing it off has zeros, not stalled).
        let parts: Vec<(usize, Option<&Second>, bool)> = got
            .iter()
            .enumerate()
            .filter(|(w, s)| s.is_some() || !self.finished_before(*w, t))
            .map(|(w, s)| (w, s.as_ref(), s.is_none() && !self.done[w]))
            .collect();
        self.stats.stalled_lines += parts.iter().filter(|p| p.2).count() as u64;
        self.emit(t, seconds, &parts, false);
        self.stats.seconds += 1;
        self.recycle(got.into_iter().flatten());
    }

    /// Figures for a second already written: their own lines, marked late.
    fn late(&mut self, s: Second) {
        if s.bytes == 0 && s.ios == 0 && s.errors == 0 {
            self.recycle(std::iter::once(s));
            return;
        }
        self.stats.late_lines += 1;
        let span = self.c.interval_ns() as f64 / 1e9;
        self.emit(s.t, span, &[(s.worker, Some(&s), false)], true);
        self.recycle(std::iter::once(s));
    }

    /// The per-target and total histograms emptied for the next line's
    /// sums; the per-direction ones made at the first second of a `mixed`
    /// pattern.
    fn reset_sums(&mut self, mixed: bool) {
        let c = self.c;
        if mixed && self.worker_hist.is_empty() {
            // Once, at the first second of a mixed pattern.
            self.worker_hist = vec![LatencyHistogram::new(); c.worker_target.len()];
            self.target_dir_hist = vec![Default::default(); c.targets.len()];
        }
        for h in &mut self.target_hist {
            h.reset();
        }
        self.total_hist.reset();
        for h in self.target_dir_hist.iter_mut().flatten() {
            h.reset();
        }
        for h in &mut self.total_dir_hist {
            h.reset();
        }
    }

    fn emit(&mut self, t: u64, seconds: f64, parts: &[(usize, Option<&Second>, bool)], late: bool) {
        let c = self.c;
        let hub_label = c.hub.label.as_ref();
        let interval_sec = c.interval_ns() as f64 / 1e9;
        let mixed = parts
            .iter()
            .any(|p| p.1.is_some_and(|s| s.writes.is_some()));
        self.reset_sums(mixed);
        // (bytes, ios, errors, any, [read bytes, read ios, write bytes, write ios])
        let mut per_target = vec![(0u64, 0u64, 0u64, false, [0u64; 4]); c.targets.len()];
        let mut total = (0u64, 0u64, 0u64, [0u64; 4]);
        let unix_sec = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        // First the sums (every merge), then the lines that borrow them.
        for &(w, s, _) in parts {
            let ti = c.worker_target[w];
            let (bytes, ios, errors) = s.map_or((0, 0, 0), |s| (s.bytes, s.ios, s.errors));
            if s.is_some_and(|s| s.hist_lost) {
                self.stats.histograms_lost += 1;
            }
            let reads = s.and_then(|s| s.hist.as_ref());
            let writes = s.and_then(|s| s.writes.as_ref());
            for h in reads.into_iter().chain(writes.and_then(|w| w.2.as_ref())) {
                self.target_hist[ti].merge(h);
                self.total_hist.merge(h);
            }
            let pt = &mut per_target[ti];
            (pt.0, pt.1, pt.2, pt.3) = (pt.0 + bytes, pt.1 + ios, pt.2 + errors, true);
            total = (total.0 + bytes, total.1 + ios, total.2 + errors, total.3);
            if let Some(&(wb, wi, ref wh)) = writes {
                self.worker_hist[w].reset();
                let d = [bytes - wb, ios - wi, wb, wi];
                for (k, x) in d.iter().enumerate() {
                    pt.4[k] += x;
                    total.3[k] += x;
                }
                if let Some(h) = reads {
                    self.worker_hist[w].merge(h);
                    self.target_dir_hist[ti][0].merge(h);
                    self.total_dir_hist[0].merge(h);
                }
                if let Some(h) = wh {
                    self.worker_hist[w].merge(h);
                    self.target_dir_hist[ti][1].merge(h);
                    self.total_dir_hist[1].merge(h);
                }
            }
        }
        let mut lines = Vec::with_capacity(parts.len() + c.targets.len() + 1);
        for &(w, s, stalled) in parts {
            let ti = c.worker_target[w];
            let (bytes, ios, errors) = s.map_or((0, 0, 0), |s| (s.bytes, s.ios, s.errors));
            let reads = s.and_then(|s| s.hist.as_ref());
            let writes = s.and_then(|s| s.writes.as_ref());
            let (hist, dirs) = match writes {
                Some((wb, wi, wh)) => (
                    nonempty(&self.worker_hist[w]),
                    Some([
                        LiveDirection {
                            bytes: bytes - wb,
                            ios: ios - wi,
                            hist: reads,
                        },
                        LiveDirection {
                            bytes: *wb,
                            ios: *wi,
                            hist: wh.as_ref(),
                        },
                    ]),
                ),
                None => (reads, None),
            };
            lines.push(LiveLine {
                label: hub_label,
                t,
                seconds,
                interval_sec,
                kind: LiveKind::Worker,
                id: w.to_string(),
                target: Some(&c.targets[ti]),
                worker: Some(w),
                bytes,
                ios,
                errors,
                hist,
                dirs,
                stalled,
                late,
                unix_sec,
            });
        }
        for (ti, &(bytes, ios, errors, any, d)) in per_target.iter().enumerate() {
            if !any {
                continue;
            }
            lines.push(LiveLine {
                label: hub_label,
                t,
                seconds,
                interval_sec,
                kind: LiveKind::Target,
                id: c.targets[ti].clone(),
                target: None,
                worker: None,
                bytes,
                ios,
                errors,
                hist: nonempty(&self.target_hist[ti]),
                dirs: dirs_of(d, mixed.then(|| &self.target_dir_hist[ti])),
                stalled: false,
                late,
                unix_sec,
            });
        }
        lines.push(LiveLine {
            label: hub_label,
            t,
            seconds,
            interval_sec,
            kind: LiveKind::Total,
            id: "total".into(),
            target: None,
            worker: None,
            bytes: total.0,
            ios: total.1,
            errors: total.2,
            hist: nonempty(&self.total_hist),
            dirs: dirs_of(total.3, mixed.then_some(&self.total_dir_hist)),
            stalled: false,
            late,
            unix_sec,
        });
        c.hub
            .sink
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lines(&lines);
    }

    /// Gives the seconds' histograms back to their workers, emptied.
    fn recycle(&self, seconds: impl Iterator<Item = Second>) {
        for s in seconds {
            for mut h in s.hist.into_iter().chain(s.writes.and_then(|w| w.2)) {
                h.reset();
                // A full pool (cannot happen: POOL are in circulation) drops it.
                let _ = self.c.free[s.worker].try_send(h);
            }
        }
    }
}

/// A target's or the total's reads and writes, from their sums
/// `[read bytes, read ios, write bytes, write ios]` and histograms.
fn dirs_of(d: [u64; 4], h: Option<&[LatencyHistogram; 2]>) -> Option<[LiveDirection<'_>; 2]> {
    h.map(|h| {
        [
            LiveDirection {
                bytes: d[0],
                ios: d[1],
                hist: nonempty(&h[0]),
            },
            LiveDirection {
                bytes: d[2],
                ios: d[3],
                hist: nonempty(&h[1]),
            },
        ]
    })
}

/// A histogram, unless empty.
fn nonempty(h: &LatencyHistogram) -> Option<&LatencyHistogram> {
    (!h.is_empty()).then_some(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (t, kind, id, bytes, stalled, late, samples in the histogram).
    type Kept = (u64, &'static str, String, u64, bool, bool, Option<u64>);

    #[derive(Default)]
    struct Keep(Vec<Kept>);

    impl LiveSink for Keep {
        fn lines(&mut self, lines: &[LiveLine<'_>]) {
            for l in lines {
                self.0.push((
                    l.t,
                    l.kind.name(),
                    l.id.clone(),
                    l.bytes,
                    l.stalled,
                    l.late,
                    l.hist.map(|h| h.len()),
                ));
            }
        }
        fn counts(&self) -> (u64, u64, u64) {
            (self.0.len() as u64, 0, 0)
        }
        fn trouble(&self) -> Option<String> {
            None
        }
    }

    fn hub() -> (Arc<Mutex<Keep>>, LiveHub) {
        let keep = Arc::new(Mutex::new(Keep::default()));
        let hub = LiveHub {
            sink: keep.clone(),
            interval: Duration::from_secs(1),
            label: None,
            shown: LiveShown::default(),
        };
        (keep, hub)
    }

    #[test]
    fn a_second_of_two_workers_on_one_target_adds_up() {
        let (keep, hub) = hub();
        let (mut taps, c) = channels(hub, vec![0, 0], vec!["/t".into()]);
        let control = RunControl::new(u64::MAX);
        let epoch = control.start();
        for (i, tap) in taps.iter_mut().enumerate() {
            tap.hist.record(1000 * (i as u64 + 1));
            tap.hand_off(0, 4096 * (i as u64 + 1), i as u64 + 1, 0);
        }
        drop(taps);
        let stats = c.run(&control, epoch, Duration::ZERO);
        let k = keep.lock().unwrap();
        assert_eq!(
            k.0,
            vec![
                (0, "worker", "0".into(), 4096, false, false, Some(1)),
                (0, "worker", "1".into(), 8192, false, false, Some(1)),
                (0, "target", "/t".into(), 12288, false, false, Some(2)),
                (0, "total", "total".into(), 12288, false, false, Some(2)),
            ]
        );
        assert_eq!(stats.seconds, 1);
        assert_eq!(stats.lines_written, 4);
    }

    #[test]
    fn a_stalled_worker_gets_its_zeros_in_time_and_its_late_figures_after() {
        let (keep, hub) = hub();
        let (mut taps, c) = channels(hub, vec![0, 1], vec!["/a".into(), "/b".into()]);
        let control = RunControl::new(u64::MAX);
        let epoch = control.start();
        let mut b = taps.pop().unwrap();
        let mut a = taps.pop().unwrap();
        std::thread::scope(|s| {
            let run = s.spawn(|| c.run(&control, epoch, Duration::ZERO));
            a.hist.record(10);
            a.hand_off(0, 100, 1, 0);
            // Worker b hands nothing off for second 0 until well past its grace.
            std::thread::sleep(Duration::from_secs(1) + GRACE * 2);
            let written = keep.lock().unwrap().0.clone();
            assert!(
                written.contains(&(0, "worker", "1".into(), 0, true, false, None)),
                "{written:?}"
            );
            b.hist.record(20);
            b.hand_off(0, 7, 1, 0);
            drop((a, b));
            let stats = run.join().unwrap();
            assert_eq!((stats.stalled_lines, stats.late_lines), (1, 1));
        });
        let k = keep.lock().unwrap();
        // The late figures come with their own target and total lines.
        let late: Vec<_> = k.0.iter().filter(|l| l.5).cloned().collect();
        assert_eq!(
            late,
            vec![
                (0, "worker", "1".into(), 7, false, true, Some(1)),
                (0, "target", "/b".into(), 7, false, true, Some(1)),
                (0, "total", "total".into(), 7, false, true, Some(1)),
            ]
        );
    }

    #[test]
    fn a_full_queue_loses_seconds_without_blocking_the_worker() {
        let (_keep, hub) = hub();
        let (mut taps, c) = channels(hub, vec![0], vec!["/t".into()]);
        let mut tap = taps.pop().unwrap();
        // Nobody collects: the queue fills, and the pool runs dry.
        for t in 0..(QUEUE_PER_WORKER as u64 + 5) {
            tap.hist.record(5);
            tap.hand_off(t, 1, 1, 0);
        }
        assert_eq!(c.lost.load(Ordering::Relaxed), 5);
        drop(c);
        // With the collector gone, hand-offs still return at once.
        tap.hand_off(99, 1, 1, 0);
    }
}
