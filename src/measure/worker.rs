//! One worker: a thread pinned to one CPU that drives one slice of one target
//! through an engine. The hot loop holds only the I/O, two clock reads, a
//! histogram record, a few counters and, before a write, a 32-byte stamp per
//! 4 KiB of the block ([`crate::engine::writedata`]): no allocation (past ten
//! minutes of one-second intervals), no lock, no syscall beyond the I/O and
//! the (vDSO) clock, except the CPU-time samples as the window opens and
//! closes.
//!
//! Timing rule: one monotonic timestamp when the I/O is queued (with the sync
//! engine that is just before the pread/pwrite; with io_uring, just before it
//! goes into the submission ring, which is entered once per batch) and one
//! when its completion is reaped, taken for each completion on its own. An
//! I/O counts in the window in which it *completed*: from the end of the ramp
//! up to the common deadline. An I/O that completes after the deadline is
//! not counted; it (or a failure after the deadline) stops the worker, which
//! then waits for whatever is still in flight: with io_uring, until nothing
//! has completed for `--hang-timeout`, when the I/O left in flight is
//! reported as hung and the engine abandoned (its buffers leaked, never
//! freed).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crossbeam_channel::Sender;
use serde::{Deserialize, Serialize};

use crate::analysis::histogram::{thread_cpu_seconds, LatencyHistogram};
use crate::analysis::verify::{
    check_block, fill_block, generation, BadBlock, BadKind, Found, Unwritten,
};
use crate::base::cpus;
use crate::engine::writedata::Stamper;
use crate::engine::{is_idle, Engine, EngineSpec, SlotToken};
use crate::measure::control::RunControl;
use crate::measure::workload::{OffsetGen, Offsets, Op, Region, StripeGen, StripeMap};

/// What one worker does.
#[derive(Debug, Clone)]
pub struct WorkerSpec {
    pub id: usize,
    pub target_index: usize,
    /// Index of this worker among its target's workers.
    pub job: usize,
    pub region: Region,
    pub bs: u64,
    pub random: bool,
    pub read_pct: u8,
    pub seed: u64,
    /// CPU to pin to, if pinning.
    pub cpu: Option<usize>,
    /// Buffer alignment (at least the target's O_DIRECT alignment).
    pub align: usize,
    /// Stop after issuing this many bytes (`--io-limit`).
    pub io_limit: Option<u64>,
    /// Stop after this many I/O errors (`--max-errors`).
    pub max_errors: u64,
    /// Self-describing blocks (`--verify`).
    pub verify: VerifyMode,
    /// `--dedupe`: share of written 4 KiB units that repeat one another.
    pub dedupe_pct: u8,
    /// `--stripe`: this worker serves one member of a modelled RAID0.
    pub stripe: Option<StripeSpec>,
    pub ramp_ns: u64,
}

/// One member's place in a modelled RAID0 (`--stripe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StripeSpec {
    pub map: StripeMap,
    pub member: u64,
    /// The logical request size; the worker's own `bs` is min(logical_bs, chunk).
    pub logical_bs: u64,
}

/// What `--verify` asks of a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VerifyMode {
    #[default]
    Off,
    /// Write self-describing blocks; generations start from this run's start (Unix ms).
    Write { start_ms: u64 },
    /// Check every block read.
    Read,
}

/// One-second intervals reserved before the run (ten minutes).
pub const INTERVALS_RESERVED: usize = 600;

/// Most good blocks a worker remembers for the stale check (24 bytes each).
pub const VERIFY_TRACK_MAX: usize = 4 << 20;
/// Most bad blocks a worker lists one by one.
pub const VERIFY_LIST_MAX: usize = 1000;

/// What a verifying reader found.
#[derive(Debug, Clone, Default)]
pub struct VerifyTally {
    pub checked: u64,
    pub good: u64,
    pub corrupt: u64,
    pub misplaced: u64,
    pub unwritten: u64,
    /// The unwritten blocks as runs of consecutive blocks (for the lost-write check).
    pub unwritten_runs: Vec<Unwritten>,
    /// More runs than VERIFY_TRACK_MAX: the lost-write check covers the first ones.
    pub unwritten_truncated: bool,
    pub other_size: u64,
    pub bad: Vec<BadBlock>,
    /// Good blocks as (writer, offset, generation), for the stale check.
    pub goods: Vec<(u32, u64, u64)>,
    /// More good blocks than VERIFY_TRACK_MAX: the stale check covers the first ones.
    pub goods_truncated: bool,
}

impl VerifyTally {
    fn note(&mut self, block: &[u8], offset: u64) {
        self.checked += 1;
        let bad = |kind, detail: String| BadBlock {
            offset,
            kind,
            detail,
        };
        let found = check_block(block, offset);
        let entry = match found {
            Found::Good { worker, gen } => {
                self.good += 1;
                if self.goods.len() < VERIFY_TRACK_MAX {
                    self.goods.push((worker, offset, gen));
                } else {
                    self.goods_truncated = true;
                }
                None
            }
            Found::Corrupt => {
                self.corrupt += 1;
                Some(bad(BadKind::Corrupt, "checksum mismatch".into()))
            }
            Found::Misplaced { written_for } => {
                self.misplaced += 1;
                Some(bad(
                    BadKind::Misplaced,
                    format!("holds the block written for offset {written_for}"),
                ))
            }
            Found::OtherSize { len } => {
                self.other_size += 1;
                Some(bad(
                    BadKind::Corrupt,
                    format!(
                        "a header for a {len}-byte block: verify with the --bs it was written with"
                    ),
                ))
            }
            Found::Unwritten => {
                self.unwritten += 1;
                let end = offset + block.len() as u64;
                let full = self.unwritten_runs.len() >= VERIFY_TRACK_MAX;
                match self.unwritten_runs.last_mut() {
                    Some(r) if r.end == offset => {
                        r.end = end;
                        r.blocks += 1;
                    }
                    _ if full => self.unwritten_truncated = true,
                    _ => self.unwritten_runs.push(Unwritten {
                        start: offset,
                        end,
                        blocks: 1,
                    }),
                }
                None
            }
        };
        if let Some(b) = entry {
            if self.bad.len() < VERIFY_LIST_MAX {
                self.bad.push(b);
            }
        }
    }
}

/// One second of a worker's window (the last one may be shorter).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Seconds since the window opened.
    pub t: u64,
    pub bytes: u64,
    pub ios: u64,
}

/// What stopped a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ending {
    /// The window's deadline (`--duration`, or an interrupt that lowered it).
    #[default]
    #[serde(rename = "duration")]
    Deadline,
    /// Its byte limit (`--io-limit`, `--passes`, verify's one pass), before the deadline.
    Limit,
    /// `--max-errors`, or the engine failed.
    Errors,
}

/// How many errors to keep with their offsets, per worker.
pub const ERROR_SAMPLES: usize = 8;

/// Errors of one errno.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrnoCount {
    pub errno: i32,
    /// Symbolic name (`EIO`), or `EOF` for an unexpected end of file.
    pub name: String,
    pub count: u64,
}

/// One I/O error, with where it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IoErrorRecord {
    /// errno, or 0 for an unexpected end of file.
    pub errno: i32,
    pub message: String,
    pub op: String,
    pub offset: u64,
}

/// Everything a worker measured; merged by the coordinator once, at the end.
#[derive(Debug, Clone, Default)]
pub struct WorkerOutcome {
    pub id: usize,
    /// The CPU the thread was on when it finished.
    pub cpu: Option<usize>,
    /// In-window figures.
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub short_ios: u64,
    pub errors: u64,
    pub errors_by_errno: Vec<ErrnoCount>,
    /// The first [`ERROR_SAMPLES`] errors.
    pub error_samples: Vec<IoErrorRecord>,
    /// The worker stopped because it reached --max-errors.
    pub stopped_on_errors: bool,
    /// Bytes moved over the whole run (ramp, window, and the I/O after the
    /// deadline): what the device counters are compared with.
    pub span_read_bytes: u64,
    pub span_write_bytes: u64,
    pub hist: LatencyHistogram,
    pub cpu_usr_sec: f64,
    pub cpu_sys_sec: f64,
    pub intervals: Vec<Interval>,
    /// ns since the epoch of the last I/O counted in the window.
    pub last_completion_ns: u64,
    /// What stopped the worker.
    pub ended_by: Ending,
    /// How the engine issued I/O.
    pub engine_path: String,
    /// What `--verify` reading found.
    pub verify: VerifyTally,
    /// I/Os in flight when nothing had completed for `--hang-timeout`: the
    /// worker gave up on them (and left their buffers to the kernel).
    pub hung_ios: Vec<HungIo>,
}

/// An I/O that never completed: its worker gave up on it after
/// `--hang-timeout` with nothing completing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HungIo {
    pub op: String,
    pub offset: u64,
    /// Bytes asked for.
    pub bytes: u64,
    /// How long it had been in flight when the worker gave up on it.
    pub seconds_in_flight: f64,
}

impl WorkerOutcome {
    /// Counts an error; true when the worker has reached `max_errors` and must stop.
    /// `message` is only formatted for the errors kept as samples, so an
    /// error storm does not allocate per I/O.
    fn record_error(
        &mut self,
        errno: i32,
        message: impl FnOnce() -> String,
        op: Op,
        offset: u64,
        max_errors: u64,
    ) -> bool {
        self.errors += 1;
        match self.errors_by_errno.iter_mut().find(|c| c.errno == errno) {
            Some(c) => c.count += 1,
            None => self.errors_by_errno.push(ErrnoCount {
                errno,
                name: errno_name(errno),
                count: 1,
            }),
        }
        if self.error_samples.len() < ERROR_SAMPLES {
            self.error_samples.push(IoErrorRecord {
                errno,
                message: message(),
                op: op.to_string(),
                offset,
            });
        }
        if self.errors >= max_errors {
            self.stopped_on_errors = true;
        }
        self.stopped_on_errors
    }

    pub fn bytes(&self) -> u64 {
        self.read_bytes + self.write_bytes
    }

    pub fn ios(&self) -> u64 {
        self.read_ios + self.write_ios
    }
}

/// How a worker tells the coordinator that it is ready, or why it cannot
/// be: exactly once, whatever happens. A worker whose thread ends without
/// having said (a return, or a panic caught by the coordinator's thread)
/// says it on drop, so the coordinator never waits for a worker that is gone.
pub struct Ready {
    tx: Sender<Result<(), String>>,
    id: usize,
    sent: bool,
}

impl Ready {
    pub fn new(tx: Sender<Result<(), String>>, id: usize) -> Ready {
        Ready {
            tx,
            id,
            sent: false,
        }
    }

    /// Says it, unless it was said already; true when this call said it.
    pub fn send(&mut self, what: Result<(), String>) -> bool {
        if self.sent {
            return false;
        }
        self.sent = true;
        // The coordinator gone means there is no one left to tell.
        let _ = self.tx.send(what);
        true
    }
}

impl Drop for Ready {
    fn drop(&mut self) {
        let id = self.id;
        self.send(Err(format!("worker {id} ended before it was ready")));
    }
}

/// One I/O slot's state while its I/O is in flight.
#[derive(Clone, Copy)]
struct Slot {
    op: Op,
    offset: u64,
    issued: Instant,
    /// The I/O completed and moved the whole block.
    full: bool,
    /// Queued and not yet reaped: what a hang leaves behind.
    busy: bool,
}

/// Runs one worker to completion. `ready` says `Ok` once the thread is
/// pinned and its engine (with its buffers) built, or the reason it could
/// not be; then the worker waits at the control's start gate.
pub fn run<E: Engine>(
    spec: &WorkerSpec,
    engine_spec: &EngineSpec,
    control: &RunControl,
    ready: &mut Ready,
    live_bytes: &AtomicU64,
) -> WorkerOutcome {
    let mut out = WorkerOutcome {
        id: spec.id,
        ..Default::default()
    };
    let (mut engine, tokens) = match prepare::<E>(spec, engine_spec) {
        Ok(e) => e,
        Err(e) => {
            ready.send(Err(e));
            return out;
        }
    };
    out.engine_path = engine.path();
    // Ten minutes of one-second intervals up front (14 KiB); a longer window
    // grows the series as it goes (a reallocation per doubling). Never sized
    // from the duration: verify's "until done" is a year.
    out.intervals.reserve(INTERVALS_RESERVED);
    let depth = engine.depth();
    let mut slots = vec![
        Slot {
            op: Op::Read,
            offset: 0,
            issued: Instant::now(),
            full: false,
            busy: false,
        };
        depth
    ];
    // The free slots' tokens: all of them at first, then those that the last
    // reap gave back (a Vec of `depth` allocated once: no allocation per I/O).
    let mut completed: Vec<SlotToken> = tokens;
    ready.send(Ok(()));
    // No epoch means the coordinator called the run off.
    let Some(epoch) = control.wait_start() else {
        return out;
    };

    let bs = spec.bs;
    let ramp_ns = spec.ramp_ns;
    let limit = spec.io_limit.unwrap_or(u64::MAX);
    let max_errors = spec.max_errors;
    let mut gen = offsets(spec);
    let mut stamper = Stamper::new(spec.seed, spec.dedupe_pct);
    // CPU time is sampled when the window opens for this worker (the barrier
    // with no ramp, else its first completion in the window) and when it
    // closes (the first completion after the deadline, before the drain; or
    // the last completion of a worker that stopped on its limit), each with
    // its instant (a CpuSample).
    let mut in_window = ramp_ns == 0;
    let mut cpu0 = if in_window {
        sample_cpu(epoch)
    } else {
        CpuSample::default()
    };
    let mut cpu1: Option<CpuSample> = None;
    let mut cur_sec = 0u64;
    let (mut cur_bytes, mut cur_ios) = (0u64, 0u64);
    let mut issued_bytes = 0u64;
    let mut in_flight = 0usize;
    let mut stopping = false;
    let mut past_deadline = false;
    // Nothing completed for --hang-timeout: the engine is given up on.
    let mut hung = false;
    let hang_timeout = engine_spec.hang_timeout;
    // The last completion (or the start): what the hang timeout runs from.
    let mut last_done = epoch;

    // Fill every slot, then keep them full: each completion frees a slot that
    // is queued again right after the reap that returned it.
    loop {
        if !stopping {
            for s in completed.drain(..) {
                if issued_bytes >= limit {
                    break;
                }
                let (op, offset) = gen.next_io();
                match (spec.verify, op) {
                    (VerifyMode::Write { start_ms }, Op::Write) => {
                        let g = generation(start_ms, gen.last_pass());
                        fill_block(
                            engine.write_buffer(&s),
                            offset,
                            spec.id as u32,
                            g,
                            spec.seed,
                        );
                    }
                    // Unique per block (crate::engine::writedata): a few stores per 4 KiB.
                    (_, Op::Write) => stamper.stamp(engine.write_buffer(&s), offset),
                    (_, Op::Read) => {}
                }
                slots[s.index()] = Slot {
                    op,
                    offset,
                    issued: Instant::now(),
                    full: false,
                    busy: true,
                };
                engine.queue(s, op, offset);
                issued_bytes += bs;
                in_flight += 1;
            }
        }
        completed.clear();
        if in_flight == 0 {
            break;
        }
        let reaped = engine.reap(|s, res| {
            let t1 = Instant::now();
            last_done = t1;
            in_flight -= 1;
            let slot = slots[s.index()];
            slots[s.index()].busy = false;
            let tn = t1.duration_since(epoch).as_nanos() as u64;
            let n = match res {
                Ok(n) if n > 0 => {
                    slots[s.index()].full = n as u64 == bs;
                    n as u64
                }
                // Zero bytes inside the region is an unexpected end of file.
                failed => {
                    let errno = failed
                        .as_ref()
                        .err()
                        .and_then(|e| e.raw_os_error())
                        .unwrap_or(0);
                    let message = || match &failed {
                        Err(e) => e.to_string(),
                        Ok(_) => "unexpected end of file (the target shrank?)".to_string(),
                    };
                    stopping |= out.record_error(errno, message, slot.op, slot.offset, max_errors);
                    // A failed slot is issued again (at the next offset) unless
                    // the worker stops: at --max-errors, or at the deadline like
                    // every other completion, so a target that fails every I/O
                    // still ends with the window (and with an interrupt).
                    stopping |= tn >= control.end_ns();
                    completed.push(s);
                    return;
                }
            };
            match slot.op {
                Op::Read => out.span_read_bytes += n,
                Op::Write => out.span_write_bytes += n,
            }
            completed.push(s);
            if tn >= control.end_ns() {
                // Completed after the window closed: not counted, and no more I/O.
                stopping = true;
                if !past_deadline && in_window {
                    cpu1 = Some(sample_cpu(epoch));
                }
                past_deadline = true;
                return;
            }
            if tn < ramp_ns {
                return;
            }
            if !in_window {
                in_window = true;
                cpu0 = sample_cpu(epoch);
            }
            out.hist
                .record(t1.duration_since(slot.issued).as_nanos() as u64);
            if n < bs {
                out.short_ios += 1;
            }
            match slot.op {
                Op::Read => {
                    out.read_bytes += n;
                    out.read_ios += 1;
                }
                Op::Write => {
                    out.write_bytes += n;
                    out.write_ios += 1;
                }
            }
            out.last_completion_ns = tn;
            let sec = (tn - ramp_ns) / 1_000_000_000;
            while cur_sec < sec {
                out.intervals.push(Interval {
                    t: cur_sec,
                    bytes: cur_bytes,
                    ios: cur_ios,
                });
                (cur_bytes, cur_ios) = (0, 0);
                cur_sec += 1;
            }
            cur_bytes += n;
            cur_ios += 1;
            live_bytes.store(out.read_bytes + out.write_bytes, Ordering::Relaxed);
        });
        if spec.verify == VerifyMode::Read {
            for s in completed.iter().filter(|s| slots[s.index()].full) {
                out.verify.note(engine.buffer(s), slots[s.index()].offset);
            }
        }
        if let Err(e) = reaped {
            if is_idle(&e) {
                // A wait ended with nothing completed (io_uring: at most a
                // slice of --hang-timeout). The deadline holds here too: a
                // worker waiting on slow I/O issues no more after it.
                let now = Instant::now();
                stopping |= now.duration_since(epoch).as_nanos() as u64 >= control.end_ns();
                if now.duration_since(last_done) < hang_timeout {
                    continue;
                }
                // Nothing completed for --hang-timeout: what is in flight is
                // hung. Report each I/O, and give up on the engine below.
                hung = true;
                out.hung_ios = slots
                    .iter()
                    .filter(|s| s.busy)
                    .map(|s| HungIo {
                        op: s.op.to_string(),
                        offset: s.offset,
                        bytes: bs,
                        seconds_in_flight: now.duration_since(s.issued).as_secs_f64(),
                    })
                    .collect();
                break;
            }
            let errno = e.raw_os_error().unwrap_or(0);
            out.record_error(errno, || format!("the engine failed: {e}"), Op::Read, 0, 1);
            break;
        }
    }
    out.ended_by = if out.stopped_on_errors {
        Ending::Errors
    } else if past_deadline || issued_bytes < limit {
        Ending::Deadline
    } else {
        Ending::Limit
    };

    if in_window {
        let c1 = cpu1.unwrap_or_else(|| sample_cpu(epoch));
        let (usr, sys) = c1.since(&cpu0);
        let t1 = c1.at_ns;
        // Closed by the deadline: the samples span the window give or take
        // the I/O in progress at each edge (one I/O per slot, which with a
        // large --bs or a short window is much of it). Scale the CPU used
        // over the samples' span to the window's length.
        let window_ns = control.end_ns().saturating_sub(ramp_ns);
        let span_ns = t1.saturating_sub(cpu0.at_ns);
        let scale = if past_deadline && span_ns > 0 {
            window_ns as f64 / span_ns as f64
        } else {
            1.0
        };
        out.cpu_usr_sec = usr * scale;
        out.cpu_sys_sec = sys * scale;
        if cur_bytes > 0 || cur_ios > 0 || out.intervals.is_empty() {
            out.intervals.push(Interval {
                t: cur_sec,
                bytes: cur_bytes,
                ios: cur_ios,
            });
        }
    }
    out.cpu = cpus::current_cpu();
    if hung {
        // The kernel may still write into the hung I/Os' buffers: leak them.
        engine.abandon();
    } else {
        // Dropping the engine waits for anything still in flight (each wait
        // bounded by the hang timeout).
        drop(engine);
    }
    out
}

/// The thread's CPU time at one instant (ns since the epoch).
#[derive(Debug, Clone, Copy, Default)]
struct CpuSample {
    /// getrusage's user and system seconds: charged by the tick (4 ms at
    /// HZ=250), so only their split is used.
    usr: f64,
    sys: f64,
    /// CLOCK_THREAD_CPUTIME_ID: the thread's CPU time to the nanosecond.
    total: f64,
    at_ns: u64,
}

impl CpuSample {
    /// (user, system) seconds from `before` to this sample: the exact total,
    /// split in the proportion getrusage charged (all user when it charged
    /// nothing, as the kernel's own cputime_adjust does).
    fn since(&self, before: &CpuSample) -> (f64, f64) {
        let total = (self.total - before.total).max(0.0);
        let (u, s) = (
            (self.usr - before.usr).max(0.0),
            (self.sys - before.sys).max(0.0),
        );
        if u + s > 0.0 {
            (total * u / (u + s), total * s / (u + s))
        } else {
            (total, 0.0)
        }
    }
}

fn sample_cpu(epoch: Instant) -> CpuSample {
    let (usr, sys) = thread_cpu_seconds();
    CpuSample {
        usr,
        sys,
        total: crate::analysis::histogram::thread_cpu_clock(),
        at_ns: epoch.elapsed().as_nanos() as u64,
    }
}

/// The worker's offsets: its own slice, or its member's share of a modelled
/// RAID0's logical stream (`--stripe`).
fn offsets(spec: &WorkerSpec) -> Offsets {
    match spec.stripe {
        None => Offsets::Plain(OffsetGen::new(
            spec.region,
            spec.bs,
            spec.random,
            spec.read_pct,
            spec.seed,
        )),
        Some(st) => {
            let logical = Region {
                offset: 0,
                length: spec.region.length * st.map.members,
            };
            let g = OffsetGen::new(
                logical,
                st.logical_bs,
                spec.random,
                spec.read_pct,
                spec.seed,
            );
            Offsets::Striped(StripeGen::new(
                g,
                st.map,
                st.member,
                st.logical_bs,
                spec.region.offset,
            ))
        }
    }
}

/// The symbolic name of an errno (`EIO`); `EOF` for 0.
pub fn errno_name(errno: i32) -> String {
    if errno == 0 {
        "EOF".into()
    } else {
        format!("{:?}", nix::errno::Errno::from_raw(errno))
    }
}

/// Pins the thread, then builds the engine and its buffers (so the memory is
/// allocated by, and near, the CPU that uses it).
fn prepare<E: Engine>(
    spec: &WorkerSpec,
    engine: &EngineSpec,
) -> Result<(E, Vec<SlotToken>), String> {
    if let Some(cpu) = spec.cpu {
        if !cpus::pin_current_thread(cpu) {
            return Err(format!(
                "worker {} could not be pinned to CPU {cpu}",
                spec.id
            ));
        }
    }
    // A private copy of the file-descriptor table: in a multi-threaded
    // process every pread/pwrite must take and drop a reference on the file
    // (two atomics), while a task whose table is not shared takes the
    // kernel's light path. Measured on zram, 4k random O_DIRECT reads: about
    // 100 ns less system time per I/O, +3-6% IOPS. The descriptors stay valid
    // (the copy holds its own references, released when the thread ends). If
    // the kernel refuses, the worker is merely slower.
    // SAFETY: unshare(CLONE_FILES) only affects the calling thread's fd table.
    unsafe { libc::unshare(libc::CLONE_FILES) };
    E::create(engine).map_err(|e| format!("worker {}: {e}", spec.id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_that_ends_before_it_is_ready_still_answers() {
        let (tx, rx) = crossbeam_channel::unbounded();
        drop(Ready::new(tx.clone(), 3));
        assert_eq!(
            rx.try_recv().unwrap(),
            Err("worker 3 ended before it was ready".to_string())
        );
        // Said once, and only once.
        let mut r = Ready::new(tx, 4);
        assert!(r.send(Ok(())));
        assert!(!r.send(Err("late".into())));
        drop(r);
        assert_eq!(rx.try_recv().unwrap(), Ok(()));
        assert!(rx.try_recv().is_err());
    }
}
