//! The coordinator: starts one thread per planned worker, waits until every
//! one is pinned and has its buffer, releases them all at one gate, shows
//! progress, collects their outcomes over a channel, flushes buffered writes
//! (timed apart) and reads the device counters around it all.
//!
//! A worker that dies cannot hang the run: every worker thread answers the
//! ready call exactly once (a panic is caught in its thread and becomes the
//! answer, with its message), and the start gate waits for no count of
//! threads (see [`RunControl`]). A setup failure calls the run off and is
//! reported as one line, exit 1. Nor can a worker that a stalled device
//! holds in a pread/pwrite (sync engine): `--hang-timeout` after the
//! deadline it is given up on, its thread left in the call, never joined.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Context, Result};
use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};
use crossbeam_utils::CachePadded;

use crate::base::signals;
use crate::base::usage::ProcessCpu;
use crate::device::devstat::{self, DevProbe, DeviceCounters};
use crate::engine::watch::CallWatch;
use crate::engine::{EngineKind, EngineSpec, FaultEngine, MockEngine, SyncEngine, UringEngine};
use crate::measure::config::{RateMinConfig, RunConfig, SteadyConfig};
use crate::measure::control::RunControl;
use crate::measure::layout::Plan;
use crate::measure::live::{self, LiveStats};
use crate::measure::progress::Progress;
use crate::measure::rate_min::{RateMinOutcome, RateMinSink};
use crate::measure::steady::{SteadyOutcome, SteadySink};
use crate::measure::together::Parted;
use crate::measure::worker::{self, Ending, WorkerOutcome, WorkerSpec};

/// What a run produced, before it is shaped into a document.
#[derive(Debug)]
pub struct Execution {
    /// Outcomes indexed by worker id.
    pub outcomes: Vec<WorkerOutcome>,
    pub window_sec: f64,
    pub start_unix_sec: f64,
    pub end_unix_sec: f64,
    pub interrupted: bool,
    /// What closed the window: "duration", "limit", "passes", "errors" or "interrupted".
    pub ended_by: &'static str,
    /// The workers' clock: "tsc", "monotonic", or "virtual" (the mock engine).
    pub clock: &'static str,
    /// Per target: the final fsync's duration, or its error.
    pub flush: Vec<Option<std::result::Result<f64, String>>>,
    /// An interrupt came during the final fsync, and the wait for it was
    /// abandoned: the targets whose fsync was still running.
    pub flush_abandoned: Vec<String>,
    /// Per target: its device's counters over the run.
    pub devices: Vec<Option<DeviceCounters>>,
    /// The md arrays at or under the targets that resynced as the window
    /// opened: how far each got by the run's end.
    pub resync: Vec<crate::device::resync::ResyncWindow>,
    /// `--live`/`--metrics`: what the stream's collector saw.
    pub live: Option<LiveStats>,
    /// `--steady`: whether and when the run was steady.
    pub steady: Option<SteadyOutcome>,
    /// `--rate-min`/`--rate-iops-min`: the cycle that fell below it, if one did.
    pub rate_min: Option<RateMinOutcome>,
    /// The host, as it was when the run ended (its peak memory included).
    pub host: crate::device::host_facts::HostFacts,
    /// What the whole process took: its set-up time, its CPU time.
    pub process: ProcessUse,
    /// Said while the run ended (its --iolog-write's), for its document.
    pub warnings: Vec<crate::base::warning::Warning>,
}

/// What the whole process took, for figures to be checked against the
/// kernel's own accounting of it (wait4, /usr/bin/time) like for like.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcessUse {
    /// From the start of the run's preparation (guarding and opening the
    /// targets, starting and pinning the workers, their buffers) to the
    /// gate that started them.
    pub setup_sec: f64,
    /// Every thread's CPU time (user, system) over the window: sampled by
    /// the coordinator when it opened and when it closed (or when the last
    /// worker ended, if that was before). What the workers' own figures sum
    /// to, give or take the coordinator's and the edges' own.
    pub window_cpu: (f64, f64),
    /// The wall time between those two samples: the window's length when
    /// the coordinator took them on time (it waits its turn for a CPU like
    /// every other thread).
    pub window_cpu_span_sec: f64,
    /// Every thread's CPU time (user, system) from the process's start to
    /// the run's end: set-up, window and wind-down (read again once the
    /// run's document is assembled, `document::finished`).
    pub cpu: (f64, f64),
}

/// Runs the plan to completion (or interruption): the steps are
/// [`check_verify_memory`], [`live_taps`], [`spawn_worker`] for each,
/// [`await_ready`], [`wait_for_start_at`], the gate, [`collect`],
/// [`window_end`], [`flush`].
///
/// `--iolog-write`: the workers' records, merged into fio's log, then
/// dropped from the outcomes (they are the log's, not the document's).
/// What went wrong with the log, said now and kept for the document.
fn write_iolog(
    cfg: &RunConfig,
    plan: &Plan,
    outcomes: &mut [WorkerOutcome],
    out: &dyn live::RunOutputs,
) -> Vec<crate::base::warning::Warning> {
    use crate::base::warning::Warning;
    use crate::measure::iolog;
    let Some(path) = &cfg.iolog_write else {
        return Vec::new();
    };
    let logs: Vec<(usize, iolog::IoLogBuf)> = outcomes
        .iter_mut()
        .filter_map(|o| o.iolog.take().map(|l| (o.id, l)))
        .collect();
    let names: Vec<String> = plan
        .targets
        .iter()
        .map(|t| t.path.display().to_string())
        .collect();
    let parts: Vec<iolog::Part<'_>> = logs
        .iter()
        .filter_map(|(id, log)| {
            let w = plan.workers.iter().find(|w| w.id == *id)?;
            Some(iolog::Part {
                file: &names[w.target_index],
                bs: w.bs,
                log,
            })
        })
        .collect();
    let shown = path.display().to_string();
    let said = if let Err(e) = iolog::write_file(path, &parts) {
        vec![Warning::IologUnwritten {
            path: shown,
            error: e.to_string(),
        }]
    } else {
        let missing: u64 = logs.iter().map(|(_, l)| l.dropped).sum();
        (missing > 0)
            .then_some(Warning::IologCut {
                path: shown,
                missing,
            })
            .into_iter()
            .collect()
    };
    out.warn(&said);
    said
}

/// What the workers' logs say once they end: `--iolog-write`'s file
/// written, and the per-I/O records' shortfall.
fn logs_written(
    cfg: &RunConfig,
    plan: &Plan,
    outcomes: &mut [WorkerOutcome],
    out: &dyn live::RunOutputs,
) -> Vec<crate::base::warning::Warning> {
    let mut w = write_iolog(cfg, plan, outcomes, out);
    w.extend(io_lines_cut(outcomes, out));
    w
}

/// `--fio-log-format each`: the I/Os the workers' records had no room
/// for, said once, when any.
fn io_lines_cut(
    outcomes: &[WorkerOutcome],
    out: &dyn live::RunOutputs,
) -> Option<crate::base::warning::Warning> {
    let missing: u64 = outcomes.iter().map(|o| o.io_lines_lost).sum();
    let w = (missing > 0).then_some(crate::base::warning::Warning::FioLogCut { missing })?;
    out.warn(std::slice::from_ref(&w));
    Some(w)
}

/// `began`: when the run's preparation began (its set-up time runs from there).
pub fn execute(
    cfg: &RunConfig,
    plan: &Plan,
    out: &dyn live::RunOutputs,
    began: Instant,
) -> Result<Execution> {
    let hub = out.live();
    check_verify_memory(cfg, plan)?;
    // The workers' clock, settled here: its rate is measured (5 ms, once
    // per process) before any worker's window starts, not in one.
    let clock = if cfg.debug_mock_engine.is_some() {
        "virtual"
    } else {
        crate::engine::clock::Wall::source()
    };
    let ramp_ns = cfg.ramp.as_nanos() as u64;
    let full_end_ns = ramp_ns + cfg.duration.as_nanos() as u64;
    let n = plan.workers.len();
    let shared = Shared::new(cfg, n, full_end_ns);
    let control = &shared.control;
    let (ready_tx, ready_rx) = bounded::<Result<(), String>>(n);
    // A worker's outcome, or what killed it (a panic, with its message).
    let (done_tx, done_rx) = bounded::<std::result::Result<WorkerOutcome, String>>(n);
    let progress = Progress::new(cfg.progress);
    let (steady, rate_min) = judges(cfg, hub, control);
    let judged = steady.as_ref().map(|s| &s.0).or(hub);
    let (mut taps, collector) = live_taps(rate_min.as_ref().map(|r| &r.0).or(judged), plan);
    let window: Arc<dyn signals::Window> = control.clone();
    signals::activate(window.clone());

    let result = std::thread::scope(|scope| -> Result<Execution> {
        // Every worker thread is joined when this closure ends, except one
        // given up on in a blocked call (declared before the gate, so the
        // gate opens first: a worker left waiting at a shut gate would hang
        // the join).
        let mut handles = Joined(Vec::with_capacity(n));
        // Whatever way this closure ends (an error, a panic), the gate opens.
        // Opening it after the start changes nothing.
        let _gate = OpenOnExit(control);
        for spec in &plan.workers {
            let tap = taps.get_mut(spec.id).and_then(Option::take);
            match spawn_worker(cfg, plan, spec, &shared, &ready_tx, &done_tx, tap) {
                Ok(h) => handles.0.push(Some(h)),
                Err(e) => {
                    // The workers already started wait at the gate: let them go.
                    control.call_off();
                    return Err(e).context("cannot start a worker thread");
                }
            }
        }
        drop(ready_tx);
        drop(done_tx);
        await_ready(&ready_rx, n, control)?;
        wait_for_start_at(cfg, control, &progress)?;
        wait_together(cfg, control, &progress)?;
        wait_start_delay(cfg, control, &progress)?;

        // The mock engine touches no device: there are no counters to read.
        let mut probes = match cfg.debug_mock_engine {
            None => start_probes(plan),
            Some(_) => Probes::default(),
        };
        // The counters at the window's opening: durable write rates count
        // what the device wrote from there (the ramp's writes are not the window's).
        if ramp_ns == 0 {
            probes.mark_window_open();
        }
        // The process's CPU time at the window's opening, with no ramp: just
        // before the gate, as nothing runs until it opens. After it the
        // coordinator may wait its turn behind hundreds of woken workers
        // for most of the window (seen: a sample taken after the gate read
        // the window's CPU as none at all).
        let gate_cpu = (ramp_ns == 0).then(|| (ProcessCpu::now(), Instant::now()));
        let epoch = control.start();
        let setup_sec = epoch.duration_since(began).as_secs_f64();
        let epoch_wall = SystemTime::now();
        let collecting = collector.map(|c| {
            let control = &**control;
            let ramp = cfg.ramp;
            std::thread::Builder::new()
                .name("sb-live".into())
                .spawn_scoped(scope, move || c.run(control, epoch, ramp))
        });
        let collected = collect(
            cfg,
            &shared,
            &done_rx,
            &mut handles,
            &mut probes,
            &progress,
            epoch,
            gate_cpu,
        )?;
        exit_others(cfg, control);
        // Every worker has ended (its tap is gone): the collector writes
        // what is left, the last second included, and ends.
        let live = match collecting {
            // The collector ran for --steady or --rate-min alone: no stream to report.
            Some(Ok(h)) if hub.is_none() => h.join().ok().and(None),
            Some(Ok(h)) => h.join().ok(),
            Some(Err(e)) => {
                out.warn(&[crate::base::warning::Warning::LiveThreadUnstarted {
                    error: e.to_string(),
                }]);
                None
            }
            None => None,
        };
        let mut outcomes: Vec<WorkerOutcome> = collected.outcomes.into_iter().flatten().collect();
        let warnings = logs_written(cfg, plan, &mut outcomes, out);
        let ((open, opened), (close, closed)) = collected.window_cpu;
        let window_cpu = close.since(&open);
        let window_cpu_span_sec = closed.saturating_duration_since(opened).as_secs_f64();
        let (end_ns, ended_by) = window_end(cfg, control, &outcomes, full_end_ns, ramp_ns);
        let window_ns = end_ns.saturating_sub(ramp_ns);
        let (flush, flush_abandoned) = flush(cfg, plan, control, collected.given_up, &progress);
        let interrupted = control.interrupted();
        progress.finish();
        let devices = finish_probes(cfg, plan, &probes, &outcomes);
        Ok(Execution {
            window_sec: window_ns as f64 / 1e9,
            start_unix_sec: unix(epoch_wall + Duration::from_nanos(ramp_ns)),
            end_unix_sec: unix(epoch_wall + Duration::from_nanos(end_ns)),
            interrupted,
            ended_by,
            clock,
            outcomes,
            flush,
            flush_abandoned,
            devices,
            resync: probes.resync.finish(),
            live,
            steady: steady.map(|s| s.1.lock().unwrap_or_else(|e| e.into_inner()).clone()),
            rate_min: rate_min.and_then(|r| r.1.lock().unwrap_or_else(|e| e.into_inner()).clone()),
            host: crate::device::host_facts::gather(&crate::base::host::Host::real()),
            warnings,
            process: ProcessUse {
                setup_sec,
                window_cpu,
                window_cpu_span_sec,
                cpu: ProcessCpu::now().since(&ProcessCpu::default()),
            },
        })
    });
    signals::deactivate(&window);
    result
}

/// What the coordinator shares with every worker thread: the control (the
/// gate, the deadline), each worker's live byte count (for the progress
/// line), and each sync worker's call watch.
struct Shared {
    control: Arc<RunControl>,
    live: Arc<Vec<CachePadded<AtomicU64>>>,
    watches: Vec<Option<Arc<CallWatch>>>,
}

impl Shared {
    /// For `n` workers of `cfg`, whose run ends `full_end_ns` after the
    /// start (ramp and window).
    fn new(cfg: &RunConfig, n: usize, full_end_ns: u64) -> Shared {
        Shared {
            control: Arc::new(RunControl::new(full_end_ns)),
            live: Arc::new(
                (0..n)
                    .map(|_| CachePadded::new(AtomicU64::new(0)))
                    .collect(),
            ),
            // The sync engine's calls are watched: one that a stalled device
            // holds past the deadline and --hang-timeout is given up on (its
            // thread is left behind, never joined; see CallWatch).
            watches: (0..n)
                .map(|_| (cfg.engine == EngineKind::Sync).then(|| Arc::new(CallWatch::new())))
                .collect(),
        }
    }
}

/// The sinks that judge the run while it goes, in front of the run's own
/// hub: --steady judges the collector's total lines, ending the window when
/// steady; --rate-min judges its worker lines, in front of the rest.
#[allow(clippy::type_complexity)]
fn judges(
    cfg: &RunConfig,
    hub: Option<&live::LiveHub>,
    control: &Arc<RunControl>,
) -> (
    Option<(live::LiveHub, Arc<Mutex<SteadyOutcome>>)>,
    Option<(live::LiveHub, Arc<Mutex<Option<RateMinOutcome>>>)>,
) {
    let steady = cfg.steady.map(|s| steady_hub(s, hub, control.clone()));
    let judged = steady.as_ref().map(|s| &s.0).or(hub);
    let rate_min = cfg
        .rate_min
        .map(|r| rate_min_hub(r, judged, control.clone()));
    (steady, rate_min)
}

/// `--steady`'s hub: its sink judges each interval's total and hands the
/// lines on to `hub`'s (when the run streams them), at `s.interval`.
fn steady_hub(
    s: SteadyConfig,
    hub: Option<&live::LiveHub>,
    control: Arc<RunControl>,
) -> (live::LiveHub, Arc<Mutex<SteadyOutcome>>) {
    let outcome = Arc::new(Mutex::new(SteadyOutcome::default()));
    let watch = SteadySink::new(control, s, outcome.clone());
    let hub = live::LiveHub::in_front(watch, hub, s.interval);
    (hub, outcome)
}

/// `--rate-min`'s hub: its sink judges each worker's intervals and hands
/// the lines on to `hub`'s, at the run's `--live-interval`.
fn rate_min_hub(
    r: RateMinConfig,
    hub: Option<&live::LiveHub>,
    control: Arc<RunControl>,
) -> (live::LiveHub, Arc<Mutex<Option<RateMinOutcome>>>) {
    let outcome = Arc::new(Mutex::new(None));
    let watch = RateMinSink::new(control, r, outcome.clone());
    let hub = live::LiveHub::in_front(watch, hub, hub.map_or(r.interval, |h| h.interval));
    (hub, outcome)
}

/// One tap per worker, handing its seconds to the collector (started with
/// the run); none without `--live` or `--metrics`.
fn live_taps(
    hub: Option<&live::LiveHub>,
    plan: &Plan,
) -> (Vec<Option<live::Tap>>, Option<live::Collector>) {
    match hub {
        Some(hub) => {
            let disks: Vec<(String, String)> = plan
                .targets
                .iter()
                .filter_map(|t| {
                    Some((
                        t.path.display().to_string(),
                        t.identity.as_ref()?.key.clone(),
                    ))
                })
                .collect();
            hub.sink
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .disks(&disks);
            let (taps, c) = live::channels(
                hub.clone(),
                plan.workers.iter().map(|w| w.target_index).collect(),
                plan.targets
                    .iter()
                    .map(|t| t.path.display().to_string())
                    .collect(),
            );
            (taps.into_iter().map(Some).collect(), Some(c))
        }
        None => (Vec::new(), None),
    }
}

/// What worker `spec`'s engine is built from.
fn engine_spec(cfg: &RunConfig, plan: &Plan, spec: &WorkerSpec, shared: &Shared) -> EngineSpec {
    EngineSpec {
        file: plan.targets[spec.target_index].file.clone(),
        bs: spec.bs as usize,
        depth: cfg.iodepth,
        align: spec.align,
        // A global working set's members are the same bytes from every
        // worker: their buffers share one base.
        fill_seed: (spec.read_pct < 100).then_some(match spec.dedupe_set {
            Some(s) if s.global => s.seed,
            _ => spec.seed ^ 0xD1B5_4A32_D192_ED03,
        }),
        compress_pct: cfg.buffer_compress,
        pattern: cfg.pattern.clone(),
        uniform_fill: spec.dedupe_set.is_some(),
        write_buffers: spec.read_pct > 0 && spec.read_pct < 100,
        register: cfg.register,
        rw_flags: if cfg.uncached {
            crate::engine::RWF_DONTCACHE
        } else {
            0
        },
        nowait: cfg.nowait,
        thread: cfg.thread.clone(),
        ring: cfg.ring,
        paced: cfg.rate.is_some(),
        fail_from: cfg.debug_fail_from.filter(|_| spec.id == 0),
        corrupt_write: cfg.debug_corrupt_write.filter(|_| spec.id == 0),
        die_in_setup: cfg.debug_die_in_setup && spec.id == 0,
        hang_from: cfg.debug_hang_from.filter(|_| spec.id == 0),
        hang_timeout: cfg.hang_timeout,
        hugepages: cfg.hugepages,
        // --cached: each read a copy from pages already cached, which runs
        // faster into a buffer off its page start (engine::buffer). Never
        // under O_DIRECT, whose DMA wants the page start (validate already
        // refuses --cached without --buffered: this is the rule, said once).
        placement: if cfg.cached && !cfg.direct {
            crate::engine::buffer::Placement::CachedCopy
        } else {
            crate::engine::buffer::Placement::PageAligned
        },
        mock_latency: cfg.debug_mock_engine,
        watch: shared.watches[spec.id].clone(),
    }
}

/// Starts worker `spec`'s thread: it builds its engine, says it is ready,
/// runs, and sends its outcome (or its panic, as a message). Not scoped: a
/// thread that a stalled device holds in a call cannot be joined, and the
/// run must end without it.
fn spawn_worker(
    cfg: &RunConfig,
    plan: &Plan,
    spec: &WorkerSpec,
    shared: &Shared,
    ready_tx: &Sender<Result<(), String>>,
    done_tx: &Sender<std::result::Result<WorkerOutcome, String>>,
    tap: Option<live::Tap>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let engine_spec = engine_spec(cfg, plan, spec, shared);
    let faulty = engine_spec.fail_from.is_some()
        || engine_spec.corrupt_write.is_some()
        || engine_spec.die_in_setup
        || engine_spec.hang_from.is_some();
    let kind = cfg.engine;
    let mock = cfg.debug_mock_engine.is_some();
    let (ctl, ready_tx, done_tx, live) = (
        shared.control.clone(),
        ready_tx.clone(),
        done_tx.clone(),
        shared.live.clone(),
    );
    let target = crate::base::error::show_path(&plan.targets[spec.target_index].path);
    let spec = spec.clone();
    std::thread::Builder::new()
        .name(format!("sb-worker-{}", spec.id))
        .spawn(move || {
            let spec = &spec;
            let mut ready = worker::Ready::new(ready_tx, spec.id);
            // A panic is a bug (the panic hook has printed where);
            // caught here, it becomes this worker's answer, so the
            // coordinator neither waits for it nor panics itself.
            let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
                let args = (spec, &engine_spec, &*ctl, &mut ready, &*live[spec.id], tap);
                match (kind, faulty, mock) {
                    (_, false, true) => run_worker::<MockEngine>(args),
                    (_, true, true) => run_worker::<FaultEngine<MockEngine>>(args),
                    (EngineKind::Sync, false, _) => run_worker::<SyncEngine>(args),
                    (EngineKind::Uring, false, _) => run_worker::<UringEngine>(args),
                    (EngineKind::Sync, true, _) => run_worker::<FaultEngine<SyncEngine>>(args),
                    (EngineKind::Uring, true, _) => {
                        run_worker::<FaultEngine<UringEngine>>(args)
                    }
                }
            }));
            let out = run.map_err(|panic| {
                let what = panic_message(&*panic);
                let id = spec.id;
                let before = format!(
                    "worker {id} ({target}) panicked before it was ready: {what}; the run was called off"
                );
                if ready.send(Err(before.clone())) {
                    before
                } else {
                    format!("worker {id} ({target}) panicked during the run: {what}")
                }
            });
            let _ = done_tx.send(out);
        })
}

/// Waits until each of the `n` workers is ready or has said why it cannot
/// be. A setup failure, or an interrupt meanwhile, calls the run off (the
/// workers are released without an epoch and return at once).
fn await_ready(
    ready_rx: &Receiver<Result<(), String>>,
    n: usize,
    control: &RunControl,
) -> Result<()> {
    let mut setup_errors = Vec::new();
    for _ in 0..n {
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => setup_errors.push(e),
            Err(_) => setup_errors.push("a worker thread died during setup".into()),
        }
    }
    if !setup_errors.is_empty() || signals::interrupted() {
        // Release the workers without an epoch: they return at once.
        control.call_off();
        if setup_errors.is_empty() {
            return Err(crate::base::error::Interrupted(
                "before the run started: nothing was measured",
            )
            .into());
        }
        bail!("{}", setup_errors.join("; "));
    }
    Ok(())
}

/// `--start-at`: every host launched with the same one releases its
/// workers at the same wall-clock instant.
fn wait_for_start_at(cfg: &RunConfig, control: &RunControl, progress: &Progress) -> Result<()> {
    let Some(at) = cfg.start_at else {
        return Ok(());
    };
    wait_ready(
        "waiting for --start-at",
        "while waiting for --start-at: nothing was measured",
        || at.duration_since(SystemTime::now()).ok(),
        control,
        progress,
    )
}

/// A run of several that start together (fio's jobs of one group that
/// differ): its workers, ready, wait for the others' to be; a run that
/// failed before its start calls this one off.
fn wait_together(cfg: &RunConfig, control: &Arc<RunControl>, progress: &Progress) -> Result<()> {
    let Some(together) = &cfg.together else {
        return Ok(());
    };
    together.enlist(control, cfg.exitall.map_or(0, |e| e.group));
    progress.message("waiting for the runs that start with it");
    match together.arrive() {
        Ok(()) => Ok(()),
        Err(Parted::Interrupted) => {
            control.call_off();
            Err(crate::base::error::Interrupted(
                "while waiting for the runs that start with it: nothing was measured",
            )
            .into())
        }
        Err(Parted::Failed(why)) => {
            control.call_off();
            Err(crate::measure::together::NotStarted(why).into())
        }
    }
}

/// fio's exitall: this run's end stops the runs at once its exit_what
/// names (not when a signal ended it: that ends them all anyway).
fn exit_others(cfg: &RunConfig, control: &Arc<RunControl>) {
    if let (Some(t), Some(e)) = (&cfg.together, cfg.exitall) {
        if !control.interrupted() {
            t.exit(control, e);
        }
    }
}

/// `--start-delay`: the workers, ready, wait this long (fio's startdelay:
/// nothing is measured in it).
fn wait_start_delay(cfg: &RunConfig, control: &RunControl, progress: &Progress) -> Result<()> {
    if cfg.start_delay.is_zero() {
        return Ok(());
    }
    let until = Instant::now() + cfg.start_delay;
    wait_ready(
        "waiting for --start-delay",
        "while waiting for --start-delay: nothing was measured",
        || {
            until
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
        },
        control,
        progress,
    )
}

/// Waits, with the workers ready at the gate, while `left` gives the time
/// still to wait, in short sleeps so that an interrupt is not kept
/// waiting: it calls the run off (`interrupted` says what was cut).
fn wait_ready(
    saying: &str,
    interrupted: &'static str,
    left: impl Fn() -> Option<Duration>,
    control: &RunControl,
    progress: &Progress,
) -> Result<()> {
    progress.message(saying);
    while let Some(left) = left() {
        if signals::interrupted() {
            control.call_off();
            return Err(crate::base::error::Interrupted(interrupted).into());
        }
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
    Ok(())
}

/// The workers' outcomes (indexed by id; `None` for one that died), and
/// how many were given up on in a blocked call.
struct Collected {
    outcomes: Vec<Option<WorkerOutcome>>,
    given_up: usize,
    /// The whole process's CPU time when the window opened and closed, and
    /// when each was sampled.
    window_cpu: ((ProcessCpu, Instant), (ProcessCpu, Instant)),
}

/// Receives every worker's outcome while the run goes: shows progress,
/// marks the device counters when the ramp ends, and `--hang-timeout` past
/// the deadline (or the interrupt that lowered it) gives up on a worker
/// that its device holds in a call, with what it had counted. Samples the
/// process's CPU time at the window's edges (`gate_cpu`: at the gate).
#[allow(clippy::too_many_arguments)]
fn collect(
    cfg: &RunConfig,
    shared: &Shared,
    done_rx: &Receiver<std::result::Result<WorkerOutcome, String>>,
    handles: &mut Joined,
    probes: &mut Probes,
    progress: &Progress,
    epoch: Instant,
    gate_cpu: Option<(ProcessCpu, Instant)>,
) -> Result<Collected> {
    let (control, live, watches) = (&shared.control, &shared.live, &shared.watches);
    let n = watches.len();
    let ramp_ns = cfg.ramp.as_nanos() as u64;
    let full_end_ns = ramp_ns + cfg.duration.as_nanos() as u64;
    let mut window_marked = ramp_ns == 0;
    // The process's CPU time at the window's edges: with no ramp, taken at
    // the gate; else when the ramp ends, as the device counters are.
    let mut cpu_open = gate_cpu;
    let mut cpu_close = None;
    let mut outcomes: Vec<Option<WorkerOutcome>> = (0..n).map(|_| None).collect();
    let mut received = 0;
    let hang_ns = cfg.hang_timeout.as_nanos() as u64;
    let mut given_up = 0;
    let mut died = Vec::new();
    let ramp = cfg.ramp.as_secs_f64();
    let total = (full_end_ns as f64) / 1e9;
    while received < n {
        let mut wait = Duration::from_millis(200);
        if !window_marked {
            let left = Duration::from_nanos(ramp_ns).saturating_sub(epoch.elapsed());
            if left.is_zero() {
                probes.mark_window_open();
                cpu_open = Some((ProcessCpu::now(), Instant::now()));
                window_marked = true;
            } else {
                wait = wait.min(left);
            }
        }
        if window_marked && cpu_close.is_none() {
            // Woken at the deadline (which an interrupt lowers) to sample.
            let left = Duration::from_nanos(control.end_ns()).saturating_sub(epoch.elapsed());
            if left.is_zero() {
                cpu_close = Some((ProcessCpu::now(), Instant::now()));
            } else {
                wait = wait.min(left);
            }
        }
        match done_rx.recv_timeout(wait) {
            Ok(Ok(out)) => {
                let id = out.id;
                outcomes[id] = Some(out);
                received += 1;
            }
            Ok(Err(why)) => {
                died.push(why);
                received += 1;
            }
            Err(RecvTimeoutError::Timeout) => {
                let bytes: u64 = live.iter().map(|c| c.load(Ordering::Relaxed)).sum();
                let el = epoch.elapsed().as_secs_f64();
                progress.update(bytes, el, ramp, (total - el).max(0.0));
                // --hang-timeout past the deadline (or the interrupt
                // that lowered it): a worker still held in a call by
                // its device is given up on, with what it had counted.
                let now_ns = epoch.elapsed().as_nanos() as u64;
                if now_ns >= control.end_ns().saturating_add(hang_ns) {
                    for (id, w) in watches.iter().enumerate() {
                        let Some(w) = w.as_ref().filter(|_| outcomes[id].is_none()) else {
                            continue;
                        };
                        if !w.frame().is_null() && w.claim() {
                            // SAFETY: just claimed; its frame was published
                            // before its first call, and is taken once.
                            outcomes[id] = Some(unsafe { worker::claimed(w.frame()) });
                            received += 1;
                            given_up += 1;
                            // Its thread stays in the call: never joined.
                            if let Some(h) = handles.0.get_mut(id) {
                                h.take();
                            }
                        }
                    }
                }
            }
            Err(RecvTimeoutError::Disconnected) => bail!("a worker thread died during the run"),
        }
    }
    if !died.is_empty() {
        bail!("{}", died.join("; "));
    }
    // Every worker ended before the deadline (its limit, errors): the
    // window closed with the last of them.
    let close = cpu_close.unwrap_or_else(|| (ProcessCpu::now(), Instant::now()));
    let window_cpu = (cpu_open.unwrap_or(close), close);
    Ok(Collected {
        outcomes,
        given_up,
        window_cpu,
    })
}

/// Where the window closed (ns since the epoch) and what closed it:
/// "duration", "limit", "passes", "latency_target", "errors", "interrupted", or "exitall"
/// (another run at once ended, fio's exitall).
fn window_end(
    cfg: &RunConfig,
    control: &RunControl,
    outcomes: &[WorkerOutcome],
    full_end_ns: u64,
    ramp_ns: u64,
) -> (u64, &'static str) {
    let mut end_ns = control.end_ns().min(full_end_ns);
    let endings: Vec<Ending> = outcomes.iter().map(|o| o.ended_by).collect();
    let ended_by = if control.interrupted() {
        "interrupted"
    } else if control.ended_below_min() {
        "rate_min"
    } else if control.ended_steady() {
        "steady"
    } else if endings.contains(&Ending::Deadline) {
        // A worker stopped at the deadline another run's end lowered.
        if control.ended_by_exit() {
            "exitall"
        } else {
            "duration"
        }
    } else if endings.contains(&Ending::Limit) {
        // A size-bounded run (--io-limit, --passes, verify's pass) whose
        // workers all stopped on their own ends at its last completion,
        // not at a deadline that may be a year away.
        let last = outcomes
            .iter()
            .map(|o| o.last_completion_ns)
            .max()
            .unwrap_or(0);
        end_ns = end_ns.min(last.max(ramp_ns));
        // --ios beside --passes may end either first: "limit" then.
        let searched = |o: &WorkerOutcome| o.latency_search.as_ref().is_some_and(|s| s.stopped);
        if outcomes.iter().all(searched) {
            "latency_target"
        } else if cfg.passes.is_some() && cfg.ios.is_none() {
            "passes"
        } else {
            "limit"
        }
    } else {
        "errors"
    };
    (end_ns, ended_by)
}

/// The final fsync of buffered writes, timed apart from the window. A
/// device that held a call past --hang-timeout would hold the final fsync
/// as well: with a worker given up on, there is no flush.
#[allow(clippy::type_complexity)]
fn flush(
    cfg: &RunConfig,
    plan: &Plan,
    control: &RunControl,
    given_up: usize,
    progress: &Progress,
) -> (Vec<Option<std::result::Result<f64, String>>>, Vec<String>) {
    if !cfg.direct && cfg.rw.writes_data() && !control.interrupted() && given_up == 0 {
        progress.message(
            "flushing: fsync of every target (timed apart from the window; Ctrl-C stops waiting)",
        );
        flush_all(plan, control)
    } else {
        (vec![None; plan.targets.len()], Vec::new())
    }
}

/// Refuses the tables of the blocks `--verify` reads when, with the I/O
/// buffers, they would take more than a quarter of the available memory
/// (the rule the buffers alone are held to), unless `--force-memory`. Each
/// worker reserves its tables before its first I/O (so the window never
/// grows them), and they fill as it reads.
fn check_verify_memory(cfg: &RunConfig, plan: &Plan) -> Result<()> {
    let tables: u64 = plan.workers.iter().map(worker::verify_table_bytes).sum();
    if tables == 0 || cfg.force_memory {
        return Ok(());
    }
    let Some(avail) = crate::device::cache::available_memory() else {
        return Ok(());
    };
    let buffers: u64 = plan
        .workers
        .iter()
        .map(|w| w.bs.saturating_mul(cfg.iodepth as u64))
        .sum();
    let total = buffers.saturating_add(tables);
    if total > avail / 4 {
        let fmt = crate::base::units::fmt_bytes;
        return Err(crate::base::error::UsageError(format!(
            "the I/O buffers and the tables of the blocks --verify reads need {} ({} of buffers and {} of tables: 24 bytes per block read, at most {} blocks a worker), more than a quarter of the {} of memory available: lower --size or --jobs, or pass --force-memory",
            fmt(total),
            fmt(buffers),
            fmt(tables),
            worker::VERIFY_TRACK_MAX,
            fmt(avail)
        ))
        .into());
    }
    Ok(())
}

/// The worker threads, joined when dropped (those given up on are taken out first).
struct Joined(Vec<Option<std::thread::JoinHandle<()>>>);

impl Drop for Joined {
    fn drop(&mut self) {
        for h in self.0.iter_mut().filter_map(Option::take) {
            let _ = h.join();
        }
    }
}

/// Opens the start gate when dropped (calls the run off if it never started).
struct OpenOnExit<'a>(&'a RunControl);

impl Drop for OpenOnExit<'_> {
    fn drop(&mut self) {
        self.0.call_off();
    }
}

type WorkerArgs<'a> = (
    &'a crate::measure::worker::WorkerSpec,
    &'a EngineSpec,
    &'a RunControl,
    &'a mut worker::Ready,
    &'a AtomicU64,
    Option<live::Tap>,
);

/// Seconds since the epoch.
fn unix(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn run_worker<E: crate::engine::Engine>(
    (spec, engine, control, ready, live, tap): WorkerArgs<'_>,
) -> WorkerOutcome {
    worker::run::<E>(spec, engine, control, ready, live, tap)
}

/// What a panic said (its payload is a `&str` or a `String` when it came
/// from `panic!` or `assert!`).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// One probe per distinct device, keyed by (major, minor), and for a
/// stacked device (md, dm) one per leaf member under it.
fn start_probes(plan: &Plan) -> Probes {
    let host = crate::base::host::Host::real();
    let sysfs = host.sys.as_path();
    let mut probes = Probes::default();
    let devs: Vec<(u64, u64)> = plan.targets.iter().filter_map(|t| t.device).collect();
    probes.resync = crate::device::resync::ResyncProbe::new(sysfs, &host.proc, &devs);
    for t in &plan.targets {
        if let (Some(dev), Some(name)) = (t.device, &t.device_name) {
            if probes.devices.contains_key(&dev) {
                continue;
            }
            let (ma, mi) = dev;
            if let Some(p) = DevProbe::start(name.clone(), devstat::stat_path(sysfs, ma, mi)) {
                probes.devices.insert(dev, p);
            }
            let leaves: Vec<DevProbe> = devstat::leaves(sysfs, dev)
                .into_iter()
                .filter_map(|(n, (a, b))| DevProbe::start(n, devstat::stat_path(sysfs, a, b)))
                .collect();
            if !leaves.is_empty() {
                probes.leaves.insert(dev, leaves);
            }
        }
    }
    probes
}

/// The device counters read around a run.
#[derive(Default)]
struct Probes {
    devices: HashMap<(u64, u64), DevProbe>,
    /// A stacked device's leaf members.
    leaves: HashMap<(u64, u64), Vec<DevProbe>>,
    /// The md arrays at or under the targets, for their resync's progress.
    resync: crate::device::resync::ResyncProbe,
}

impl Probes {
    /// The counters at the window's opening.
    fn mark_window_open(&mut self) {
        self.devices
            .values_mut()
            .for_each(DevProbe::mark_window_open);
        self.resync.mark_window_open();
    }
}

fn finish_probes(
    cfg: &RunConfig,
    plan: &Plan,
    probes: &Probes,
    outcomes: &[WorkerOutcome],
) -> Vec<Option<DeviceCounters>> {
    // Application bytes per device, over the same span as the counters.
    let mut app: HashMap<(u64, u64), (u64, u64, usize)> = HashMap::new();
    for t in &plan.targets {
        if let Some(dev) = t.device {
            app.entry(dev).or_default().2 += 1;
        }
    }
    for (spec, out) in plan.workers.iter().zip(outcomes) {
        if let Some(dev) = plan.targets[spec.target_index].device {
            let e = app.entry(dev).or_default();
            e.0 += out.span_read_bytes;
            e.1 += out.span_write_bytes;
        }
    }
    // A target on a partition and another on its disk, or on a volume and
    // on one of its members: each device's counters hold the other's I/O.
    let sysfs = crate::base::host::Host::real().sys;
    let related: HashMap<(u64, u64), Vec<(u64, u64)>> = probes
        .devices
        .keys()
        .map(|&d| (d, devstat::related(&sysfs, d)))
        .collect();
    let entangled = |d: &(u64, u64)| {
        related.iter().any(|(e, below)| {
            e != d && (below.contains(d) || related.get(d).is_some_and(|r| r.contains(e)))
        })
    };
    let finished: HashMap<(u64, u64), DeviceCounters> = probes
        .devices
        .iter()
        .filter_map(|(dev, p)| {
            let (r, w, users) = app.get(dev).copied().unwrap_or_default();
            // Runs at once (fio's group) may share any device: its
            // counters hold their I/O too (the series pools them:
            // `together::pool_devices`).
            let at_once = cfg.together.is_some();
            let mut c = p.finish(r, w, users > 1 || entangled(dev) || at_once)?;
            c.members = probes
                .leaves
                .get(dev)
                .map(|ls| ls.iter().filter_map(|l| l.finish(0, 0, false)).collect())
                .unwrap_or_default();
            Some((*dev, c))
        })
        .collect();
    plan.targets
        .iter()
        .map(|t| t.device.and_then(|d| finished.get(&d).cloned()))
        .collect()
}

/// fsync every target at once, each one timed. Each fsync runs in a child
/// process: a thread blocked in fsync cannot be interrupted and would keep
/// the whole process from exiting until the kernel has written everything
/// (minutes, on a slow device with gigabytes dirty). An interrupt stops the
/// wait at once; the children's fsyncs go on in the kernel, and the targets
/// still being flushed are returned as abandoned.
fn flush_all(
    plan: &Plan,
    control: &RunControl,
) -> (Vec<Option<std::result::Result<f64, String>>>, Vec<String>) {
    use std::os::unix::io::AsRawFd;
    let t0 = Instant::now();
    let mut flush: Vec<Option<std::result::Result<f64, String>>> = vec![None; plan.targets.len()];
    let mut running: Vec<(usize, libc::pid_t)> = Vec::new();
    for (i, t) in plan.targets.iter().enumerate() {
        let fd = t.file.as_raw_fd();
        // SAFETY: the child calls only fsync and _exit, which are
        // async-signal-safe, so forking a multi-threaded process is sound.
        match unsafe { libc::fork() } {
            0 => unsafe {
                // Let go of stdout and stderr: a pipe reader (`| tee`) must
                // see the end of the report when the parent exits.
                libc::close(1);
                libc::close(2);
                // Named for ps (and the tests).
                libc::prctl(libc::PR_SET_NAME, c"sb-fsync".as_ptr());
                let code = if libc::fsync(fd) == 0 {
                    0
                } else {
                    *libc::__errno_location() & 0xff
                };
                libc::_exit(code)
            },
            -1 => {
                // No child to be had: fsync here, uninterruptibly.
                let r = t.file.sync_all();
                flush[i] = Some(
                    r.map(|()| t0.elapsed().as_secs_f64())
                        .map_err(|e| format!("fsync of {} failed: {e}", t.path.display())),
                );
            }
            pid => running.push((i, pid)),
        }
    }
    while !running.is_empty() {
        running.retain(|&(i, pid)| {
            let mut status = 0;
            // SAFETY: waiting for our own child, without blocking.
            if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } != pid {
                return true;
            }
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                libc::EIO
            };
            let path = plan.targets[i].path.display();
            flush[i] = Some(if code == 0 {
                Ok(t0.elapsed().as_secs_f64())
            } else {
                Err(format!(
                    "fsync of {path} failed: {}",
                    std::io::Error::from_raw_os_error(code)
                ))
            });
            false
        });
        if running.is_empty() || control.interrupted() {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let abandoned = running
        .iter()
        .map(|&(i, _)| plan.targets[i].path.display().to_string())
        .collect();
    (flush, abandoned)
}
