//! The worker's hot loop: fill every slot, reap, count what completed in
//! the window, queue the freed slots again. Nothing here but the I/O, the
//! clock and counters: no allocation, lock or extra syscall per I/O.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::qd::Searcher;
use crate::analysis::histogram::IntervalLatency;
use crate::analysis::interval_counts::IntervalCounts;
use crate::analysis::verify::{fill_block, generation, write_extent, Extent};
use crate::analysis::zeros;
use crate::base::cpus;
use crate::base::usage::{thread_cpu_clock, thread_cpu_seconds};
use crate::engine::clock::Clock;
use crate::engine::writedata::Stamper;
use crate::engine::{is_idle, Engine, EngineSpec, SlotToken};
use crate::measure::control::RunControl;
use crate::measure::iolog::IoLogBuf;
use crate::measure::live::{Tap, WorkerEnd};
use crate::measure::workload::{OffsetGen, Offsets, Op, Region, Replayer, SprGen, StripeGen};

use super::*;

/// One I/O slot's state while its I/O is in flight.
#[derive(Clone, Copy)]
struct Slot {
    op: Op,
    offset: u64,
    /// The I/O's bytes, and its index among `--bssplit`'s sizes.
    len: u64,
    size: u8,
    /// `--cmdprio-bssplit`: the index of its priority's count; and the
    /// ioprio its command carried (the thread's, unless one was drawn).
    prio: u8,
    ioprio: u16,
    issued: Instant,
    /// When the I/O was due: its issue time, or on a schedule (`--rate`)
    /// the time the schedule gave it. Its latency runs from here.
    due: Instant,
    /// The I/O completed and moved the whole block.
    full: bool,
    /// Queued and not yet reaped: what a hang leaves behind.
    busy: bool,
    /// Its last completion was counted in the window.
    counted: bool,
    /// A verified random mix's read-back of a block it wrote: the
    /// generation the block must hold (0: a read not checked).
    check: u64,
}

impl Slot {
    /// A slot whose I/O was just queued.
    fn queued(
        (op, offset, check): (Op, u64, u64),
        (len, size): (u64, u8),
        issued: Instant,
        due: Instant,
    ) -> Slot {
        Slot {
            op,
            offset,
            len,
            size,
            prio: 0,
            ioprio: 0,
            issued,
            due,
            full: false,
            busy: true,
            counted: false,
            check,
        }
    }

    /// A slot before its first I/O.
    fn idle() -> Slot {
        Slot {
            op: Op::Read,
            offset: 0,
            len: 0,
            size: 0,
            prio: 0,
            ioprio: 0,
            issued: Instant::now(),
            due: Instant::now(),
            full: false,
            busy: false,
            counted: false,
            check: 0,
        }
    }
}

/// Runs one worker to completion. `ready` says `Ok` once the thread is
/// pinned and its engine (with its buffers) built, or the reason it could
/// not be; then the worker waits at the control's start gate. The steps:
/// [`set_up`], the gate, [`Tally::new`] and [`schedule`], [`drive`] (the
/// loop), [`Tally::close`] and [`release`].
pub fn run<E: Engine>(
    spec: &WorkerSpec,
    engine_spec: &EngineSpec,
    control: &RunControl,
    ready: &mut Ready,
    live_bytes: &AtomicU64,
    tap: Option<Tap>,
) -> WorkerOutcome {
    let mut out = outcome(spec);
    let (mut engine, tokens) = match set_up::<E>(spec, engine_spec, &mut out) {
        Ok(e) => e,
        Err(e) => {
            ready.send(Err(e));
            return out;
        }
    };
    let mut slots = vec![Slot::idle(); engine.depth()];
    // Made before the start: a zipf draw's table (fio's zeta sum, up to
    // 10M terms) is not the window's time.
    let gen = offsets(spec);
    // A verified random mix's record of the blocks it wrote, allocated
    // before the gate (its size was bounded by the plan).
    let mix = match MixRecord::new(spec) {
        Ok(m) => m,
        Err(e) => {
            ready.send(Err(e));
            return out;
        }
    };
    // --iolog-write: the buffer's capacity reserved now, before the gate.
    let mut iolog = (spec.iolog_cap > 0).then(|| IoLogBuf::with_capacity(spec.iolog_cap));
    ready.send(Ok(()));
    // No epoch means the coordinator called the run off.
    let Some(epoch) = control.wait_start() else {
        return out;
    };
    E::Clock::start(epoch);
    // --sqpoll: the kernel thread that submits for this worker works for
    // it; its CPU time is the worker's too.
    let helper = (out.engine.as_ref())
        .and_then(|e| e.submit_thread)
        .map(thread_clock);
    let mut tally = Tally::new(out, spec, control, live_bytes, epoch, tap, helper);
    let mut pace = schedule(spec, epoch);
    // A blocking engine's calls are watched: what the coordinator takes if
    // it gives up on one (see `claimed`). Raw pointers, no borrows: the
    // loop goes on using these as it always does.
    let frame = Frame::new(&raw mut tally, &slots, &raw const pace);
    if let Some(w) = &engine_spec.watch {
        w.publish(&raw const frame as *mut ());
    }
    let (hung, below_limit) = drive(
        spec,
        engine_spec,
        control,
        epoch,
        &mut engine,
        &mut slots,
        tokens,
        (gen, mix),
        &mut tally,
        &mut pace,
        &mut iolog,
    );
    // Described again after the run: where an unbound --sqpoll thread was
    // last seen; `close` adds what that thread cost.
    tally.out.engine = Some(engine.describe());
    let mut out = tally.close(pace.as_ref(), &slots, hung, below_limit, None);
    out.cpu = cpus::current_cpu();
    out.iolog = iolog;
    release(engine, hung);
    out
}

/// A worker's outcome before it starts: its id, and the histograms its
/// pattern keeps apart.
fn outcome(spec: &WorkerSpec) -> WorkerOutcome {
    WorkerOutcome {
        id: spec.id,
        // On a schedule, the service time (issue to completion) apart.
        service_hist: spec.rate_period_ns.map(|_| LatencyHistogram::new()),
        // Reads and writes apart, in a mixed pattern.
        write_hist: (spec.read_pct > 0 && spec.read_pct < 100).then(LatencyHistogram::new),
        // --bssplit: a count per size (a write split's after the reads'),
        // made before the window.
        per_size: (spec.access.sizes.iter())
            .flat_map(|s| s.all())
            .map(|x| SizeCount {
                bs: x.bs,
                ..SizeCount::default()
            })
            .collect(),
        per_zone: zone_counts(spec),
        per_prio: super::prio::counts(spec),
        // Reserved before the window: a push in it never allocates.
        io_lines: Vec::with_capacity(spec.io_lines_cap),
        ..Default::default()
    }
}

/// `--zones`: a count per zone of the region, made before the window
/// (none past [`MAX_ZONES`]).
fn zone_counts(spec: &WorkerSpec) -> Vec<ZoneCount> {
    let Some((base, step)) = zone_of(spec) else {
        return Vec::new();
    };
    let n = spec.region.length.div_ceil(step);
    if n > MAX_ZONES {
        return Vec::new();
    }
    (0..n)
        .map(|k| ZoneCount {
            target_index: spec.target_index,
            offset: base + k * step,
            ..ZoneCount::default()
        })
        .collect()
}

/// `--zones`: where the first zone starts and how far apart zones are.
fn zone_of(spec: &WorkerSpec) -> Option<(u64, u64)> {
    let z = spec.access.zones.filter(|_| !spec.random)?;
    Some((spec.region.offset, (z.range + z.skip).max(1)))
}

/// Everything the worker allocates, before the gate: the pinned engine and
/// its buffers ([`prepare`]), the interval series, `--verify`'s tables.
/// Says in `out` how the engine issues I/O and what its buffers are.
fn set_up<E: Engine>(
    spec: &WorkerSpec,
    engine_spec: &EngineSpec,
    out: &mut WorkerOutcome,
) -> Result<(E, Vec<SlotToken>), String> {
    let (engine, tokens) = prepare::<E>(spec, engine_spec)?;
    out.engine = Some(engine.describe());
    // --verify's tables, before the first I/O: the window only fills them.
    if matches!(spec.verify, VerifyMode::Read | VerifyMode::Mix { .. }) {
        out.verify = VerifyTally::reserved(spec)?;
    }
    // Ten minutes of intervals up front (43 KiB of one-second ones, at
    // most INTERVALS_RESERVED); a longer window grows the series as it goes
    // (a reallocation per doubling). Never sized from the duration:
    // verify's "until done" is a year.
    let ten_minutes = (600_000_000_000 / spec.log_ns.max(1)) as usize;
    out.intervals
        .reserve(ten_minutes.clamp(1, INTERVALS_RESERVED));
    Ok((engine, tokens))
}

/// On a schedule (--rate): which I/O is due next, and how late they go.
fn schedule<C: Clock>(spec: &WorkerSpec, epoch: Instant) -> Option<Pace<C>> {
    let period = spec.rate_period_ns?;
    // Sleeps and timed waits end within 1 ns of when asked rather than
    // the default 50 us of timer slack: the schedule's precision.
    // SAFETY: PR_SET_TIMERSLACK only changes this thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    Some(Pace::new(period, spec.ramp_ns, epoch))
}

/// The loop: fills every slot, reaps, counts, queues the freed slots
/// again, until the worker stops (its deadline, its limit, errors) or its
/// engine hangs. Returns whether it hung, and whether the worker was
/// still below its limit (it owed I/O).
#[allow(clippy::too_many_arguments)]
fn drive<C: Clock, E: Engine<Clock = C>>(
    spec: &WorkerSpec,
    engine_spec: &EngineSpec,
    control: &RunControl,
    epoch: Instant,
    engine: &mut E,
    slots: &mut [Slot],
    tokens: Vec<SlotToken>,
    (mut gen, mut mix): (Offsets, Option<MixRecord>),
    tally: &mut Tally<'_, C>,
    mut pace: &mut Option<Pace<C>>,
    iolog: &mut Option<IoLogBuf>,
) -> (bool, bool) {
    let bs = spec.bs;
    let mut limit = spec.io_limit.unwrap_or(u64::MAX);
    let mut stamper = stamper(spec, engine_spec.compress_pct);
    // The free slots' tokens: all of them at first, then those that the last
    // reap gave back (a Vec of `depth` allocated once: no allocation per I/O).
    let mut completed: Vec<SlotToken> = tokens;
    let mut issued_bytes = 0u64;
    // The pass at whose start the region's pages were last dealt with
    // (`spec.on_wrap`).
    let mut wrapped_pass = 0u64;
    let mut in_flight = 0usize;
    // The slots queued and not yet given their issue time (see the reap).
    let mut unstamped: Vec<usize> = Vec::with_capacity(slots.len());
    // Nothing completed for --hang-timeout: the engine is given up on.
    let mut hung = false;
    let hang_timeout = engine_spec.hang_timeout;
    // --thinktime: the I/Os (issued or completed) since the last pause.
    let mut since_think = 0u64;

    // The first I/O goes in right below: where this worker's own active
    // time starts (it stops at its last completion if it ends on its limit).
    let t0 = C::now();
    tally.out.first_issue_ns = t0.duration_since(epoch).as_nanos() as u64;
    // --latency-target: the depth searched for, from 1, window by window.
    let mut search = (spec.latency).map(|t| Searcher::new(t, slots.len(), epoch, t0, spec.ramp_ns));
    // Fill every slot, then keep them full: each completion frees a slot that
    // is queued again right after the reap that returned it. On a schedule,
    // a free slot waits for its I/O's due time.
    loop {
        // A verified random mix with nothing left to issue (see MixNext).
        let mut mix_done = false;
        if !tally.stopping {
            let free = completed.len();
            let mut ready = issuable(spec, pace, free, control, tally, &mut since_think);
            if let Some(s) = &search {
                ready = ready.min(s.limit.saturating_sub(in_flight));
            }
            // The free slots' I/Os: the plain loop's, or a verified random
            // mix's (its tokens not used now kept for its read-back).
            for _ in 0..ready {
                let over = issued_bytes >= limit;
                let (op, offset, sized, pass, check) =
                    match next_for_slot(mix.as_mut(), &mut gen, over, in_flight, bs, spec.trim) {
                        Ok(io) => io,
                        Err(done) => {
                            mix_done = done;
                            limit = walk_end(mix.is_none() && !over, issued_bytes, limit);
                            break;
                        }
                    };
                let s = completed.pop().expect("a free slot for each one ready");
                if pass > wrapped_pass && spec.on_wrap != OnWrap::Keep {
                    // A new pass: the last one's pages go before it reads,
                    // or reach the device before it overwrites them.
                    wrapped_pass = pass;
                    tally.wrap(spec.on_wrap, &engine_spec.file, spec.region);
                }
                if op == Op::Write {
                    let io = (offset, sized.0, pass);
                    write_data(spec, engine, &s, io, limit, &mut stamper);
                }
                let (issued, due) = match &mut pace {
                    // Stamped below, once, right before the reap that issues them all.
                    None => {
                        unstamped.push(s.index());
                        (tally.epoch, tally.epoch)
                    }
                    Some(p) => p.issue(in_flight, &mut tally.last_done),
                };
                slots[s.index()] = Slot::queued((op, offset, check), sized, issued, due);
                let i = s.index();
                (slots[i].prio, slots[i].ioprio) = tally.queue(engine, s, (op, offset, sized));
                record::<C>(iolog, epoch, offset, op);
                // --passes counts a mix's I/O, not its read-back's (fio's size=).
                if check == 0 {
                    issued_bytes += sized.0;
                }
                in_flight += 1;
            }
        }
        // --thinktime's blocks done, nothing in flight (io_u_quiesce): the pause.
        let think_due = spec.think.filter(|t| since_think >= t.blocks);
        if think_due.is_some() && in_flight == 0 && !tally.stopping {
            if let Some(t) = think_due.filter(|_| issued_bytes < limit) {
                think::<C>(t, control, epoch);
            }
            since_think = 0;
            continue;
        }
        // Free slots whose I/O is not due yet keep their tokens (on a
        // schedule), as do those held for the pause or a mix's read-back.
        let held = pace.is_some() || mix.is_some() || think_due.is_some() || search.is_some();
        if !held || tally.stopping {
            completed.clear();
        }
        let kept = completed.len();
        // On a schedule with I/O still to issue (a verified random mix's, till
        // it is done: its read-back follows its limit): how long until due.
        let more = mix.as_ref().map_or(issued_bytes < limit, |_| !mix_done)
            && !search.as_ref().is_some_and(|q| q.done);
        let between = !tally.stopping && mix.is_some() && !mix_done;
        let wait = match next_step::<C>(pace, tally.stopping, more, between, in_flight) {
            Next::Reap(w) => w,
            Next::Again => continue,
            Next::Stop => break,
        };
        let reaped = reap_once(
            (spec, engine_spec),
            engine,
            slots,
            tally,
            (&mut unstamped, &mut completed),
            &mut in_flight,
            (&mut search, mix.as_mut()),
            (wait, kept),
            &mut since_think,
        );
        if let Err(e) = reaped {
            match reap_failed(e, control, epoch, hang_timeout, slots, tally) {
                Some(h) => {
                    hung = h;
                    break;
                }
                None => continue,
            }
        }
    }
    // A search that ended the worker's I/O (settled, or failed at depth
    // 1 at 100%) ended it as a limit does.
    let searched = search.as_ref().is_some_and(|q| q.done);
    tally.out.latency_search = search.map(|q| q.finish(C::now()));
    // A fill that found the file system full ended on its limit too.
    (hung, issued_bytes < limit && !searched && !tally.out.filled)
}

/// One reap: the I/Os queued since the last go to the kernel, and what
/// it hands back is counted (with --latency-target, also into the
/// search's window, which is judged after it).
#[inline]
#[allow(clippy::too_many_arguments)]
fn reap_once<C: Clock, E: Engine<Clock = C>>(
    (spec, engine_spec): (&WorkerSpec, &EngineSpec),
    engine: &mut E,
    slots: &mut [Slot],
    tally: &mut Tally<'_, C>,
    (unstamped, completed): (&mut Vec<usize>, &mut Vec<SlotToken>),
    in_flight: &mut usize,
    (search, mut mix): (&mut Option<Searcher>, Option<&mut MixRecord>),
    (wait, kept): (Option<std::time::Duration>, usize),
    since_think: &mut u64,
) -> std::io::Result<()> {
    // The I/Os queued since the last reap go to the kernel in it: one
    // clock read is their issue time (io_uring: the instant before the
    // io_uring_enter that submits the batch; sync: before the pread).
    stamp::<C>(unstamped, slots);
    // And one clock read, at the first completion the reap hands back,
    // is the completion time of all it hands back: they were complete
    // when the kernel returned.
    tally.batch_done = None;
    let done = |s: SlotToken, res| {
        *in_flight -= 1;
        let slot = &mut slots[s.index()];
        slot.busy = false;
        match tally.complete(*slot, res) {
            Some(full) => {
                slot.full = full;
                if let (Some(q), Some(t1)) = (search.as_mut(), tally.batch_done) {
                    q.record(t1.duration_since(slot.issued).as_nanos() as u64);
                }
            }
            None => unlog_failed(mix.as_deref_mut(), slot),
        }
        slot.counted = tally.counted;
        completed.push(s);
    };
    let reaped = match wait {
        // A free slot's I/O comes due before the next completion, maybe.
        Some(w) if kept > 0 => engine.reap_within(w.saturating_sub(PACE_SPIN), done),
        _ => engine.reap(done),
    };
    if spec.think.is_some_and(|t| !t.on_issue) {
        *since_think += (completed.len() - kept) as u64;
    }
    inspect(spec, engine_spec, engine, slots, &completed[kept..], tally);
    if let Some(q) = search.as_mut() {
        q.after_reap(tally.batch_done.unwrap_or_else(C::now), *in_flight);
    }
    reaped
}

/// The limit, lowered to the bytes issued when the offsets ran out
/// before it (`ran_out`: no mix and not over; only `--sprandom`'s walk
/// ends so): the worker's own end, as its limit is, and not a deadline.
#[inline]
fn walk_end(ran_out: bool, issued: u64, limit: u64) -> u64 {
    if ran_out {
        issued
    } else {
        limit
    }
}

/// What the loop does after issuing: reap (waiting at most until the next
/// I/O is due, on a schedule), go round again, or stop.
enum Next {
    Reap(Option<std::time::Duration>),
    Again,
    Stop,
}

/// The loop's next step, with `in_flight` I/Os out: on a schedule with I/O
/// still to issue (`more`), how long until the next is due; with nothing
/// in flight, sleep until then (a slice at most, so a lowered deadline is
/// seen), or go round at once `between` a mix's pass and its read-back,
/// or stop.
#[inline]
fn next_step<C: Clock>(
    pace: &Option<Pace<C>>,
    stopping: bool,
    more: bool,
    between: bool,
    in_flight: usize,
) -> Next {
    let wait = match pace {
        Some(p) if !stopping && more => Some(p.until_due().unwrap_or_default()),
        _ => None,
    };
    if in_flight > 0 {
        return Next::Reap(wait);
    }
    match wait {
        Some(w) => {
            wait_for_due::<C>(w);
            Next::Again
        }
        None if between => Next::Again,
        None => Next::Stop,
    }
}

/// The I/O the next free slot carries: its direction, offset, (length,
/// size index), pass and, for a verified random mix's read-back, the
/// generation its block must hold (else 0); `Err` when none is to be
/// issued now, `Err(true)` when a verified random mix is done. `over`:
/// the limit is reached.
#[inline]
#[allow(clippy::type_complexity)]
fn next_for_slot(
    mix: Option<&mut MixRecord>,
    gen: &mut Offsets,
    over: bool,
    in_flight: usize,
    bs: u64,
    trim: bool,
) -> Result<(Op, u64, (u64, u8), u64, u64), bool> {
    // A trim job's order is a write job's, each write a trim.
    let as_trim = |op| {
        if trim && op == Op::Write {
            Op::Trim
        } else {
            op
        }
    };
    match mix {
        Some(m) => match m.next(gen, over, in_flight) {
            MixNext::Io(op, offset, check) => Ok((as_trim(op), offset, (bs, 0), m.pass, check)),
            MixNext::Wait => Err(false),
            MixNext::Done => Err(true),
        },
        None if over => Err(false),
        None => {
            // Only --sprandom's walk ends of itself (its regions done).
            let Some((op, offset)) = gen.next_io() else {
                return Err(false);
            };
            Ok((as_trim(op), offset, gen.last_size(bs), gen.last_pass(), 0))
        }
    }
}

/// A write that failed (and was let go: --ignore-errors) wrote nothing
/// to check: off a verified mix's record of the pass, as fio takes a
/// failed write off its verify list.
#[inline]
fn unlog_failed(mix: Option<&mut MixRecord>, slot: &Slot) {
    if let (Op::Write, Some(m)) = (slot.op, mix) {
        m.unlog(slot.offset);
    }
}

/// One completed I/O of `n` bytes in its direction's counts.
#[inline]
fn count_direction(out: &mut WorkerOutcome, op: Op, n: u64) {
    match op {
        Op::Read => {
            out.read_bytes += n;
            out.read_ios += 1;
        }
        Op::Write => {
            out.write_bytes += n;
            out.write_ios += 1;
        }
        Op::Trim => {
            out.trim_bytes += n;
            out.trim_ios += 1;
        }
    }
}

/// `--iolog-write`: one I/O into the worker's log, at its issue. With no
/// log asked, this is the one check per I/O it costs.
#[inline]
fn record<C: Clock>(iolog: &mut Option<IoLogBuf>, epoch: Instant, offset: u64, op: Op) {
    if let Some(log) = iolog {
        log.push(C::now().duration_since(epoch).as_nanos() as u64, offset, op);
    }
}

/// The slots queued since the last reap: their issue (and due) time,
/// one clock read for the batch.
#[inline]
fn stamp<C: Clock>(unstamped: &mut Vec<usize>, slots: &mut [Slot]) {
    if !unstamped.is_empty() {
        let now = C::now();
        for i in unstamped.drain(..) {
            slots[i].issued = now;
            slots[i].due = now;
        }
    }
}

/// How many of `free` slots may issue now: on a schedule, those whose I/O
/// is due (the next due after the deadline stops the worker); with
/// --thinktime, no more than its blocks before the pause (counted here
/// when they are counted as issued).
#[inline]
fn issuable<C: Clock>(
    spec: &WorkerSpec,
    pace: &mut Option<Pace<C>>,
    free: usize,
    control: &RunControl,
    tally: &mut Tally<'_, C>,
    since_think: &mut u64,
) -> usize {
    let ready = match pace {
        None => free,
        Some(p) => {
            let (n, over) = p.ready(free, control.end_ns());
            tally.stopping |= over;
            n
        }
    };
    let Some(t) = spec.think else {
        return ready;
    };
    let ready = ready.min(t.blocks.saturating_sub(*since_think) as usize);
    if t.on_issue {
        *since_think += ready as u64;
    }
    ready
}

/// --thinktime's pause, nothing in flight (the caller pauses only when
/// there is I/O left to issue): spins for its spin part, then sleeps the rest (in
/// slices, so that a lowered deadline is seen), never past the deadline
/// (fio cuts it at its runtime too).
#[cold]
fn think<C: Clock>(t: crate::measure::config::Think, control: &RunControl, epoch: Instant) {
    let start = C::now();
    let left = |now: Instant| {
        let end = epoch + std::time::Duration::from_nanos(control.end_ns());
        end.saturating_duration_since(now)
    };
    let spin = t.spin.min(t.time);
    while C::now().duration_since(start) < spin.min(left(start)) {
        std::hint::spin_loop();
    }
    loop {
        let now = C::now();
        let rest = t
            .time
            .saturating_sub(now.duration_since(start))
            .min(left(now));
        if rest.is_zero() {
            return;
        }
        C::sleep(rest.min(PACE_SLEEP_MAX));
    }
}

/// Nothing in flight and the next I/O due in `w`: sleeps until it is
/// nearly due (a slice at most, so a lowered deadline is seen), then spins.
#[inline]
fn wait_for_due<C: Clock>(w: std::time::Duration) {
    if w > PACE_SPIN {
        C::sleep((w - PACE_SPIN).min(PACE_SLEEP_MAX));
    } else {
        std::hint::spin_loop();
    }
}

/// The data write `s` carries at `offset` (`len` bytes) in pass `pass`: verify's
/// self-describing block, else data unique per sector.
#[inline]
fn write_data<E: Engine>(
    spec: &WorkerSpec,
    engine: &mut E,
    s: &SlotToken,
    (offset, len, pass): (u64, u64, u64),
    limit: u64,
    stamper: &mut Stamper,
) {
    let bs = spec.bs;
    if let Some(p) = &spec.pattern {
        // The buffers hold the pattern already (EngineSpec::buffers); only
        // %o changes from one block to the next. With --verify too: the
        // blocks hold the pattern alone, as fio's verify=pattern writes.
        if p.has_offset() {
            p.fill(&mut engine.write_buffer(s)[..len as usize], offset);
        }
        return;
    }
    match spec.verify {
        VerifyMode::Write { start_ms } => {
            let pass = if spec.read_pct > 0 { 0 } else { pass };
            let g = generation(start_ms, pass);
            // The range this write covers goes in every block:
            // what `verify` finds there of an older write is
            // stale. A member's share of a modelled stripe is
            // not one range: its blocks claim only themselves.
            let extent = match spec.stripe {
                // A mix's writes stop wherever its reads left them
                // (their share is drawn), and blocks of drawn sizes
                // (--bssplit) end wherever the draws took them: each
                // block claims only as far as the writes got, so what
                // lies past it is unwritten, not stale, and a mix's
                // passes are one generation (the reads' wrap counts a
                // pass the writes did not make).
                None if spec.read_pct > 0 || spec.access.sizes.is_some() => Extent {
                    start: spec.region.offset,
                    end: offset + len,
                },
                None => write_extent(
                    Extent {
                        start: spec.region.offset,
                        end: spec.region.offset + spec.region.length,
                    },
                    bs,
                    // With holes (--skip) a limit's blocks lie a stride
                    // apart: the range they cover is that much longer.
                    match spec.access.skip {
                        s if s > 0 && limit != u64::MAX => limit
                            .div_ceil(bs.max(1))
                            .saturating_mul(bs.saturating_add(s as u64)),
                        _ => limit,
                    },
                    pass,
                    offset,
                ),
                Some(_) => Extent {
                    start: offset,
                    end: offset + bs,
                },
            };
            // Only the bytes this write sends: a block of its own size,
            // which its header records (--bssplit).
            fill_block(
                &mut engine.write_buffer(s)[..len as usize],
                offset,
                spec.id as u32,
                g,
                spec.seed,
                extent,
            );
        }
        // Each block claims only itself: the record, not a range, says
        // which blocks the pass wrote.
        VerifyMode::Mix { start_ms } => fill_block(
            engine.write_buffer(s),
            offset,
            spec.id as u32,
            mix_generation(start_ms, pass),
            spec.seed,
            Extent {
                start: offset,
                end: offset + bs,
            },
        ),
        // Unique per 512-byte sector (crate::engine::writedata): one XOR pass.
        // Only the bytes this write sends (`--bssplit`: its size).
        _ => stamper.stamp(&mut engine.write_buffer(s)[..len as usize], offset),
    }
}

/// What the loop reads in the buffers a reap gave back (`done`): verify's
/// reads, the sample of reads checked for zeros, and `--nowait`'s count.
#[inline]
fn inspect<C: Clock, E: Engine<Clock = C>>(
    spec: &WorkerSpec,
    engine_spec: &EngineSpec,
    engine: &mut E,
    slots: &[Slot],
    done: &[SlotToken],
    tally: &mut Tally<'_, C>,
) {
    // Blocks read to be checked: every full read (--verify reading), or a
    // verified random mix's read-back of what its pass wrote (its `check`,
    // the generation the block must hold). What they must hold is
    // --pattern's bytes when there is one, else our self-describing block.
    let mix = matches!(spec.verify, VerifyMode::Mix { .. });
    if mix || spec.verify == VerifyMode::Read {
        for s in done {
            let slot = &slots[s.index()];
            if !slot.full || (mix && slot.check == 0) {
                continue;
            }
            // The bytes this read moved: a block of the size drawn for it
            // (--bssplit), which the write drew alike.
            let buf = &engine.buffer(s)[..slot.len as usize];
            let (v, offset) = (&mut tally.out.verify, slot.offset);
            match (&spec.pattern, mix) {
                (Some(p), _) => v.note_pattern(p, buf, offset),
                (None, true) => v.note_recorded(buf, offset, spec.id as u32, slot.check),
                (None, false) => v.note(buf, offset),
            }
        }
    }
    // A sample of the reads counted in the window, checked for all
    // zeros: a read no medium answered (analysis::zeros). Verifying
    // reads are left out: verify reads unwritten blocks on purpose.
    if spec.verify != VerifyMode::Read {
        for s in done {
            let slot = &slots[s.index()];
            if slot.counted && slot.full && slot.op == Op::Read && slot.check == 0 {
                tally.zero_due -= 1;
                if tally.zero_due == 0 {
                    tally.zero_due = zeros::SAMPLE_EVERY;
                    tally.out.sampled_reads += 1;
                    if zeros::all_zero(engine.buffer(s)) {
                        tally.out.zero_reads += 1;
                    }
                }
            }
        }
    }
    if engine_spec.nowait {
        // --nowait: of the I/Os counted in the window, those that would
        // have blocked and went again.
        for s in done {
            if slots[s.index()].counted && engine.would_have_blocked(s) {
                tally.out.would_block += 1;
            }
        }
    }
}

/// A reap that returned an error: `None` to go on (a wait that ended with
/// nothing completed, within --hang-timeout), else the loop ends, hung
/// (`Some(true)`: nothing completed for --hang-timeout, each I/O in flight
/// reported) or on the engine's failure (`Some(false)`, an error).
#[cold]
fn reap_failed<C: Clock>(
    e: std::io::Error,
    control: &RunControl,
    epoch: Instant,
    hang_timeout: std::time::Duration,
    slots: &[Slot],
    tally: &mut Tally<'_, C>,
) -> Option<bool> {
    if is_idle(&e) {
        // A wait ended with nothing completed (io_uring: at most a
        // slice of --hang-timeout). The deadline holds here too: a
        // worker waiting on slow I/O issues no more after it.
        let now = C::now();
        tally.stopping |= now.duration_since(epoch).as_nanos() as u64 >= control.end_ns();
        if now.duration_since(tally.last_done) < hang_timeout {
            return None;
        }
        // Nothing completed for --hang-timeout: what is in flight is
        // hung. Report each I/O, and give up on the engine.
        tally.out.hung_ios = hung_ios(slots, now);
        return Some(true);
    }
    let errno = e.raw_os_error().unwrap_or(0);
    tally
        .out
        .record_error(errno, || format!("the engine failed: {e}"), Op::Read, 0, 1);
    Some(false)
}

/// The engine after the loop: dropped (which waits for anything still in
/// flight, each wait bounded by the hang timeout), or, when it hung, left
/// to the kernel, which may still write into the hung I/Os' buffers.
fn release<E: Engine>(engine: E, hung: bool) {
    if hung {
        engine.abandon();
    } else {
        drop(engine);
    }
}

/// The longest one sleep of a worker on a schedule with nothing in flight:
/// it looks at the deadline (which an interrupt lowers) at least this often.
const PACE_SLEEP_MAX: std::time::Duration = std::time::Duration::from_millis(50);

/// A worker on a schedule sleeps until this long before an I/O is due, and
/// spins the rest: a wake-up from a sleep comes tens of microseconds late
/// (measured: about 45 us on a VM, with 1 ns of timer slack), which the
/// latency from the due time would count as the device's. The cost: up to
/// this much CPU time per I/O issued after a sleep.
const PACE_SPIN: std::time::Duration = std::time::Duration::from_micros(100);

/// A worker's schedule (`--rate`): I/O k is due k periods after the epoch;
/// one is issued only once due, and the lateness of those due in the window
/// is tallied.
struct Pace<C> {
    period_ns: f64,
    /// The next I/O's number.
    k: u64,
    epoch: Instant,
    ramp_ns: u64,
    tally: ScheduleTally,
    /// The clock "now" is read from.
    clock: PhantomData<C>,
}

impl<C: Clock> Pace<C> {
    fn new(period_ns: f64, ramp_ns: u64, epoch: Instant) -> Pace<C> {
        Pace {
            period_ns,
            k: 0,
            epoch,
            ramp_ns,
            tally: ScheduleTally {
                period_ns,
                ..Default::default()
            },
            clock: PhantomData,
        }
    }

    /// When I/O `k` is due, in ns since the epoch (computed from k, so no
    /// rounding accumulates).
    #[inline]
    fn due_ns(&self, k: u64) -> u64 {
        (k as f64 * self.period_ns) as u64
    }

    /// How many of `free` slots may issue now (their I/Os are due), and
    /// whether the next I/O is due only at or after the deadline `end_ns`.
    #[inline]
    fn ready(&self, free: usize, end_ns: u64) -> (usize, bool) {
        let now = C::now().duration_since(self.epoch).as_nanos() as u64;
        let mut n = 0;
        while n < free {
            let due = self.due_ns(self.k + n as u64);
            if due >= end_ns {
                return (n, n == 0);
            }
            if due > now {
                break;
            }
            n += 1;
        }
        (n, false)
    }

    /// The next I/O, issued now: its issue and due times. The hang
    /// timeout runs from its issue when nothing was in flight (waiting
    /// for a due time is no hang).
    #[inline]
    fn issue(&mut self, in_flight: usize, last_done: &mut Instant) -> (Instant, Instant) {
        let issued = C::now();
        if in_flight == 0 {
            *last_done = issued;
        }
        (issued, self.take(issued))
    }

    /// The next I/O, issued at `issued`: its due time. Tallies how late it went.
    #[inline]
    fn take(&mut self, issued: Instant) -> Instant {
        let due_ns = self.due_ns(self.k);
        self.k += 1;
        let due = self.epoch + std::time::Duration::from_nanos(due_ns);
        if due_ns >= self.ramp_ns {
            let behind = issued.duration_since(due).as_nanos() as u64;
            let t = &mut self.tally;
            t.issued += 1;
            t.behind_max_ns = t.behind_max_ns.max(behind);
            t.late_ios += u64::from(behind > LATE_NS);
        }
        due
    }

    /// How long until the next I/O is due (`None` when it is due already).
    #[inline]
    fn until_due(&self) -> Option<std::time::Duration> {
        let now = C::now().duration_since(self.epoch).as_nanos() as u64;
        let due = self.due_ns(self.k);
        (due > now).then(|| std::time::Duration::from_nanos(due - now))
    }
}

#[cfg(test)]
mod pace_tests {
    use super::*;
    use crate::engine::clock::Wall;
    use std::time::Duration;

    #[test]
    fn the_schedule_releases_only_what_is_due_and_stops_at_the_deadline() {
        // One I/O per ms; the schedule began 10.5 ms ago, with a 2 ms ramp.
        let epoch = Instant::now() - Duration::from_micros(10_500);
        let mut p = Pace::<Wall>::new(1e6, 2_000_000, epoch);
        // Due: 0, 1, ..., 10 ms: eleven, however many slots are free.
        assert_eq!(p.ready(100, u64::MAX), (11, false));
        assert_eq!(p.ready(4, u64::MAX), (4, false));
        // A deadline at 5 ms: I/Os 0 to 4 only.
        assert_eq!(p.ready(100, 5_000_000), (5, false));
        for k in 0..5 {
            let due = p.take(Instant::now());
            assert_eq!(due, epoch + Duration::from_millis(k));
        }
        // The next is due at the deadline: nothing more to issue, ever.
        assert_eq!(p.ready(100, 5_000_000), (0, true));
        // Issued 10.5 to 6.5 ms late; only those due after the ramp count.
        let t = p.tally;
        assert_eq!(t.issued, 3);
        assert_eq!(t.late_ios, 3);
        assert!(t.behind_max_ns >= 8_500_000, "{t:?}");
        // Far from due: not ready, and the wait says how long.
        let mut later = Pace::<Wall>::new(1e9, 0, Instant::now());
        later.k = 5;
        assert_eq!(later.ready(1, u64::MAX), (0, false));
        assert!(later.until_due().unwrap() > Duration::from_secs(4));
    }
}

/// What the loop counts between I/Os: the outcome so far, the second in
/// progress, the window's CPU samples, and whether to stop issuing.
struct Tally<'a, C> {
    out: WorkerOutcome,
    control: &'a RunControl,
    live_bytes: &'a AtomicU64,
    epoch: Instant,
    ramp_ns: u64,
    max_errors: u64,
    ignore_errors: crate::measure::config::IgnoredErrors,
    /// `spec.fill`: a write with no space left ends the worker.
    fill: bool,
    /// CPU time is sampled when the window opens for this worker (the start
    /// with no ramp, else its first completion in the window) and when it
    /// closes (the first completion after the deadline, before the drain;
    /// or the last completion of a worker that stopped on its limit).
    in_window: bool,
    cpu0: CpuSample,
    cpu1: Option<CpuSample>,
    /// When the I/O whose completion took `cpu1` was issued (ns since the
    /// epoch): its CPU time is split at the close by its wall time.
    straddled_ns: Option<u64>,
    /// `--sqpoll`: the CPU-time clock of the kernel thread that submits
    /// for this worker, sampled with the worker's own.
    helper: Option<libc::clockid_t>,
    /// The `--log-interval` interval in progress (its length in ns), its
    /// bytes and I/Os.
    cur_sec: u64,
    log_ns: u64,
    cur_bytes: u64,
    cur_ios: u64,
    /// Each counted I/O's latency, recorded once, here: the latencies since
    /// the last end of an interval (`--log-interval`'s or the live tap's),
    /// reads (or all) and a mixed pattern's writes. Drained at that end
    /// into the run's total, the tap's interval and `log_counts`.
    cur: IntervalCounts,
    /// `--cmdprio`: which I/Os go at the command priority.
    cmdprio: Option<CmdPrioDraw>,
    /// `--cmdprio-bssplit`: each I/O's priority by its direction and size.
    prio_by_size: Option<super::prio::PrioBySize>,
    /// The thread's ioprio value (`--ioprio`; 0, none set): what an I/O
    /// carries when no command priority is drawn for it.
    default_prio: u16,
    cur_writes: Option<IntervalCounts>,
    /// A `--log-interval` interval that a live interval's end can fall
    /// inside: its latencies so far (`None` when every live end is one of
    /// its ends, or there is no tap: `cur` then spans the interval).
    log_counts: Option<IntervalCounts>,
    /// The latencies of the `--log-interval` interval that ended last,
    /// until its record is written.
    ended_latency: IntervalLatency,
    /// The live interval in progress (`--live-interval`, the tap's own:
    /// the series above stays per second) and its bytes and I/Os.
    live_t: u64,
    live_bytes_cur: u64,
    live_ios: u64,
    stopping: bool,
    past_deadline: bool,
    /// The last completion (or the start): what the hang timeout runs from.
    last_done: Instant,
    /// `--zones`: the first zone's offset and the zones' step, when each
    /// zone is counted.
    zone_of: Option<(u64, u64)>,
    /// The completion time of the reap in progress: read at its first
    /// completion, shared by all it hands back (`None` between reaps).
    batch_done: Option<Instant>,
    /// The last completion was counted in the window.
    counted: bool,
    /// `--live`/`--metrics`: where each finished second is handed off.
    tap: Option<Tap>,
    /// On a schedule: when the I/O after the last one issued would have
    /// been due (ns since the epoch), the end of the last one's interval.
    schedule_end_ns: u64,
    /// On a schedule: I/Os due before the window's end and not done by it,
    /// and how long before the end the oldest of them was due.
    unserved_ios: u64,
    unserved_oldest_ns: u64,
    /// Reads counted in the window until the next one sampled for zeros
    /// (the first one is: 1 at the start).
    zero_due: u64,
    /// The clock the tally reads completions' times from.
    clock: PhantomData<C>,
}

impl<'a, C: Clock> Tally<'a, C> {
    /// Queues one I/O (direction, offset, its length and size index) on
    /// `slot`, at the command priority `--cmdprio` or `--cmdprio-bssplit`
    /// draws for it; the index of its priority's count (0 without) and
    /// the ioprio it carries (the thread's, `default_prio`, unless drawn).
    #[inline]
    fn queue<E: Engine>(
        &mut self,
        engine: &mut E,
        slot: SlotToken,
        (op, offset, (len, size)): (Op, u64, (u64, u8)),
    ) -> (u8, u16) {
        let raised = CmdPrioDraw::next(&mut self.cmdprio, engine, &mut self.out.cmdprio_ios);
        let prio = match self.prio_by_size.as_mut() {
            Some(p) => {
                let (slot, value) = p.next(op == Op::Write, size);
                engine.set_cmd_prio(value);
                (slot, value)
            }
            None => (0, raised.unwrap_or(self.default_prio)),
        };
        engine.queue(slot, op, offset, len as usize);
        prio
    }

    /// The tally of a worker whose gate opened at `epoch`, its live tap
    /// told whether reads and writes go apart.
    fn new(
        out: WorkerOutcome,
        spec: &WorkerSpec,
        control: &'a RunControl,
        live_bytes: &'a AtomicU64,
        epoch: Instant,
        mut tap: Option<Tap>,
        helper: Option<libc::clockid_t>,
    ) -> Tally<'a, C> {
        let mixed = spec.read_pct > 0 && spec.read_pct < 100;
        if let Some(t) = tap.as_mut().filter(|_| mixed) {
            // A mixed pattern: the live stream gets reads and writes apart.
            t.mixed();
        }
        let in_window = spec.ramp_ns == 0;
        let zone_of = zone_of(spec).filter(|_| !out.per_zone.is_empty());
        Tally {
            out,
            control,
            live_bytes,
            epoch,
            ramp_ns: spec.ramp_ns,
            max_errors: spec.max_errors,
            ignore_errors: spec.ignore_errors.clone(),
            fill: spec.fill,
            cmdprio: spec.cmdprio.map(|c| CmdPrioDraw::new(spec.seed, c)),
            prio_by_size: super::prio::PrioBySize::new(spec),
            default_prio: spec.default_prio,
            in_window,
            cpu0: if in_window {
                sample_cpu::<C>(epoch, helper)
            } else {
                CpuSample::default()
            },
            cpu1: None,
            straddled_ns: None,
            helper,
            cur_sec: 0,
            log_ns: spec.log_ns.max(1),
            cur: IntervalCounts::new(),
            cur_writes: mixed.then(IntervalCounts::new),
            log_counts: tap
                .as_ref()
                .filter(|t| t.interval_ns % spec.log_ns.max(1) != 0)
                .map(|_| IntervalCounts::new()),
            ended_latency: IntervalLatency::default(),
            live_t: 0,
            live_bytes_cur: 0,
            live_ios: 0,
            cur_bytes: 0,
            cur_ios: 0,
            stopping: false,
            past_deadline: false,
            last_done: epoch,
            zone_of,
            batch_done: None,
            counted: false,
            tap,
            schedule_end_ns: 0,
            unserved_ios: 0,
            unserved_oldest_ns: 0,
            zero_due: 1,
            clock: PhantomData,
        }
    }

    /// Counts one unserved I/O, due `age_ns` before the window's end.
    fn unserved(&mut self, age_ns: u64) {
        self.unserved_ios += 1;
        self.unserved_oldest_ns = self.unserved_oldest_ns.max(age_ns);
    }

    /// On a schedule, after the loop: the I/Os due before the window's end
    /// that never completed go in the latency histogram, at their age at
    /// the window's end (a lower bound: they were never served): those
    /// still in flight when the engine was given up on (`hung`, from
    /// `slots`), and those due that were never issued, from I/O `pace.k`
    /// on. A worker that stopped on its own (its limit, errors) owed no more.
    fn backlog(&mut self, pace: &Pace<C>, slots: &[Slot], hung: bool, owed: bool) {
        if self.out.service_hist.is_none() || !owed || self.out.stopped_on_errors {
            return;
        }
        let end_ns = self.control.end_ns();
        if hung {
            for s in slots.iter().filter(|s| s.busy) {
                let due_ns = s.due.duration_since(self.epoch).as_nanos() as u64;
                if due_ns < end_ns {
                    // Never below how late it was issued.
                    let issued_ns = s.issued.duration_since(self.epoch).as_nanos() as u64;
                    self.out.hist.record(end_ns.max(issued_ns) - due_ns);
                    self.unserved(end_ns - due_ns);
                }
            }
        }
        let first = pace.due_ns(pace.k);
        if first >= end_ns {
            return;
        }
        // I/Os k, k+1, ... due before the end: about (end - first) / period.
        let mut n = ((end_ns - first) as f64 / pace.period_ns) as u64;
        while pace.due_ns(pace.k + n) < end_ns {
            n += 1;
        }
        while n > 0 && pace.due_ns(pace.k + n - 1) >= end_ns {
            n -= 1;
        }
        self.out
            .hist
            .record_descending(end_ns - first, pace.period_ns, n);
        self.unserved_ios += n;
        self.unserved_oldest_ns = self.unserved_oldest_ns.max(end_ns - first);
    }

    /// A window I/O's per-I/O record (`--fio-log-format each`, while room
    /// is left) and its priority's count (`--cmdprio-bssplit`).
    #[inline]
    fn record_io(&mut self, slot: &Slot, n: u64, latency: u64, tn: u64) {
        let out = &mut self.out;
        // --fio-log-format each: the I/O's own record, while room is left.
        if out.io_lines.capacity() > 0 {
            if out.io_lines.len() < out.io_lines.capacity() {
                let since = |t: Instant| {
                    (t.duration_since(self.epoch).as_nanos() as u64).saturating_sub(self.ramp_ns)
                };
                out.io_lines.push(IoLine {
                    done_ns: tn.saturating_sub(self.ramp_ns),
                    issued_ns: since(slot.issued),
                    lat_ns: latency,
                    offset: slot.offset,
                    len: n as u32,
                    write: slot.op == Op::Write,
                    ioprio: slot.ioprio,
                });
            } else {
                out.io_lines_lost += 1;
            }
        }
        // --cmdprio-bssplit: the priority's own count and latency.
        if let Some(c) = out.per_prio.get_mut(usize::from(slot.prio)) {
            c.ios += 1;
            c.bytes += n;
            c.hist.record(latency);
        }
    }

    /// One completion of `slot`'s I/O: counted if it completed in the
    /// window. Returns whether it moved the whole block (`None` when it
    /// failed: the slot is issued again unless the worker stops).
    #[inline]
    fn complete(&mut self, slot: Slot, res: std::io::Result<usize>) -> Option<bool> {
        let t1 = *self.batch_done.get_or_insert_with(C::now);
        self.last_done = t1;
        self.counted = false;
        let tn = t1.duration_since(self.epoch).as_nanos() as u64;
        let n = match res {
            Ok(n) if n > 0 => n as u64,
            // Zero bytes inside the region is an unexpected end of file.
            failed => {
                self.fail(slot, failed, tn);
                return None;
            }
        };
        let full = n == slot.len;
        match slot.op {
            Op::Read => self.out.span_read_bytes += n,
            Op::Write => self.out.span_write_bytes += n,
            // A trim moves no data: the device's read and write counters
            // (what the span bytes are compared with) do not count it.
            Op::Trim => {}
        }
        let end_ns = self.control.end_ns();
        if tn >= end_ns {
            // Completed after the window closed: not counted, and no more I/O.
            self.stopping = true;
            // On a schedule, an I/O due before the window's end that was
            // not done by it is unserved: its latency from the due time
            // (here known: it completed) goes in the histogram all the same.
            if let Some(h) = &mut self.out.service_hist {
                let due_ns = slot.due.duration_since(self.epoch).as_nanos() as u64;
                if due_ns < end_ns {
                    self.out
                        .hist
                        .record(t1.duration_since(slot.due).as_nanos() as u64);
                    h.record(t1.duration_since(slot.issued).as_nanos() as u64);
                    self.unserved(end_ns - due_ns);
                }
            }
            if !self.past_deadline && self.in_window {
                self.cpu1 = Some(sample_cpu::<C>(self.epoch, self.helper));
                self.straddled_ns = Some(slot.issued.duration_since(self.epoch).as_nanos() as u64);
            }
            self.past_deadline = true;
            return Some(full);
        }
        if tn < self.ramp_ns {
            return Some(full);
        }
        if !self.in_window {
            self.in_window = true;
            self.cpu0 = sample_cpu::<C>(self.epoch, self.helper);
        }
        self.counted = true;
        // Intervals that ended before this completion end first: their
        // latencies go where they are kept, and this one starts the next.
        self.roll(tn);
        // On a schedule, latency runs from the due time (the service time,
        // issue to completion, beside it); else due == issued.
        let latency = t1.duration_since(slot.due).as_nanos() as u64;
        // Once, into the interval's counts of the I/O's direction.
        match self.cur_writes.as_mut().filter(|_| slot.op == Op::Write) {
            Some(w) => w.record(latency),
            None => self.cur.record(latency),
        }
        self.record_io(&slot, n, latency, tn);
        let out = &mut self.out;
        if let Some(h) = &mut out.service_hist {
            h.record(t1.duration_since(slot.issued).as_nanos() as u64);
        }
        if n < slot.len {
            out.short_ios += 1;
        }
        // --zones: the zone's I/O, and the time since the last completion.
        if let Some((base, step)) = self.zone_of {
            // The window's time only: from its start at the first.
            let since = (out.last_completion_ns)
                .max(out.first_issue_ns)
                .max(self.ramp_ns);
            let i = (slot.offset.saturating_sub(base) / step) as usize;
            if let Some(z) = out.per_zone.get_mut(i) {
                z.ios += 1;
                z.bytes += n;
                z.busy_ns += tn.saturating_sub(since);
            }
        }
        // --bssplit: the size's own count (empty, so never found, with one size).
        if let Some(c) = out.per_size.get_mut(usize::from(slot.size)) {
            c.ios += 1;
            c.bytes += n;
            c.latency_ns += latency;
        }
        count_direction(out, slot.op, n);
        out.last_completion_ns = tn;
        if let Some(tap) = &mut self.tap {
            if slot.op == Op::Write {
                tap.count_write(n);
            }
            self.live_bytes_cur += n;
            self.live_ios += 1;
        }
        self.cur_bytes += n;
        self.cur_ios += 1;
        self.live_bytes.store(self.out.bytes(), Ordering::Relaxed);
        Some(full)
    }

    /// A completion that failed (or read nothing inside the region): the
    /// end of a fill, an error ignored by --ignore-errors, or one counted
    /// towards --max-errors. Cold: off the completion path proper.
    #[cold]
    #[inline(never)]
    fn fail(&mut self, slot: Slot, failed: std::io::Result<usize>, tn: u64) {
        let errno = failed
            .as_ref()
            .err()
            .and_then(|e| e.raw_os_error())
            .unwrap_or(0);
        // --fill-device: no space left is where the fill ends, as
        // fio's fill_device=1 ends there, not an error.
        if self.fill && slot.op == Op::Write && matches!(errno, libc::ENOSPC | libc::EDQUOT) {
            self.out.filled = true;
            self.stopping = true;
            return;
        }
        let message = || match &failed {
            Err(e) => e.to_string(),
            Ok(_) => "unexpected end of file (the target shrank?)".to_string(),
        };
        if self.ignore_errors.ignores(slot.op, errno) {
            self.out.record_ignored(errno);
        } else {
            self.stopping |=
                self.out
                    .record_error(errno, message, slot.op, slot.offset, self.max_errors);
        }
        // A failed slot is issued again (at the next offset) unless
        // the worker stops: at --max-errors, or at the deadline like
        // every other completion, so a target that fails every I/O
        // still ends with the window (and with an interrupt).
        self.stopping |= tn >= self.control.end_ns();
        // A failure in the window ends the seconds before it too, so
        // the live stream shows a failing worker's errors in the
        // second they happened, not "stalled" until the run ends.
        if tn >= self.ramp_ns && tn < self.control.end_ns() {
            if !self.in_window {
                self.in_window = true;
                self.cpu0 = sample_cpu::<C>(self.epoch, self.helper);
            }
            self.roll(tn);
        }
    }

    /// At a wrap-around of the region, timed, off the hot path (once a
    /// pass): `Evict` drops the region from the page cache (a buffered
    /// read), its time left out of the worker's own; `Flush` writes the
    /// region's dirty pages to the device, waits for them and drops them
    /// (a buffered write), so the pass before reaches the device whole
    /// where the next would overwrite pages the page cache still held: its
    /// time is the device's and stays in the worker's own, and a failure
    /// is the worker's write error at the region's start. Counted when it
    /// started in the window.
    #[cold]
    fn wrap(&mut self, what: OnWrap, file: &std::fs::File, region: Region) {
        let t0 = C::now();
        let res = match what {
            OnWrap::Keep => return,
            OnWrap::Evict => {
                crate::device::cache::evict_range(file, region);
                Ok(())
            }
            OnWrap::Flush => crate::device::cache::flush_range(file, region),
        };
        let t1 = C::now();
        self.last_done = t1;
        let tn = t0.duration_since(self.epoch).as_nanos() as u64;
        if tn >= self.ramp_ns && tn < self.control.end_ns() {
            let ns = t1.duration_since(t0).as_nanos() as u64;
            let (n, total) = match what {
                OnWrap::Flush => (&mut self.out.wrap_flushes, &mut self.out.wrap_flush_ns),
                _ => (
                    &mut self.out.cache_evictions,
                    &mut self.out.cache_eviction_ns,
                ),
            };
            *n += 1;
            *total += ns;
        }
        if let Err(e) = res {
            let errno = e.raw_os_error().unwrap_or(0);
            self.stopping |= self.out.record_error(
                errno,
                || format!("writing back the region at a wrap-around: {e}"),
                Op::Write,
                region.offset,
                self.max_errors,
            );
        }
    }

    /// Ends every interval (`--log-interval`) before the one `tn` (ns
    /// since the epoch, in the window) falls in, into the intervals, and
    /// every live interval before `tn`'s, to the live tap. Integer
    /// arithmetic only per completion: a division; no allocation, lock or
    /// syscall (the series grows per interval, into room reserved before
    /// the loop, and an interval's end reads its histogram's percentiles).
    #[inline]
    fn roll(&mut self, tn: u64) {
        let since = tn - self.ramp_ns;
        let sec = since / self.log_ns;
        let live_k = self.tap.as_ref().map_or(0, |t| since / t.interval_ns);
        if self.cur_sec < sec || self.live_t < live_k {
            self.drain(self.cur_sec < sec);
        }
        while self.cur_sec < sec {
            self.end_interval();
            self.cur_sec += 1;
        }
        if let Some(tap) = &mut self.tap {
            while self.live_t < live_k {
                tap.hand_off(
                    self.live_t,
                    self.live_bytes_cur,
                    self.live_ios,
                    self.out.errors,
                );
                (self.live_bytes_cur, self.live_ios) = (0, 0);
                self.live_t += 1;
            }
        }
    }

    /// At the end of an interval (`log_ends`: a `--log-interval` one,
    /// else only the live tap's): the latencies since the last end go to
    /// the run's total, the tap's interval and the `--log-interval`
    /// interval's counts; when a `--log-interval` interval ends, its p50,
    /// p99 and max are read first. One walk over the buckets recorded.
    #[cold]
    fn drain(&mut self, log_ends: bool) {
        if log_ends && self.log_counts.is_none() {
            self.ended_latency = self.cur.interval(self.cur_writes.as_ref());
        }
        // No allocation: one to three histograms a direction, by hand.
        let (tap_reads, tap_writes) = match self.tap.as_mut() {
            Some(t) => t.hists(),
            None => (None, None),
        };
        let log = self.log_counts.as_mut();
        match tap_reads {
            Some(t) => self.cur.drain(&mut [&mut self.out.hist, t], log),
            None => self.cur.drain(&mut [&mut self.out.hist], log),
        }
        if let (Some(w), Some(total)) = (self.cur_writes.as_mut(), self.out.write_hist.as_mut()) {
            let log = self.log_counts.as_mut();
            match tap_writes {
                Some(t) => w.drain(&mut [total, t], log),
                None => w.drain(&mut [total], log),
            }
        }
        if log_ends {
            if let Some(l) = self.log_counts.as_mut() {
                self.ended_latency = l.interval(None);
                l.drain(&mut [], None);
            }
        }
    }

    /// The interval in progress as its record, with the latencies of the
    /// interval that ended last (the caller drained it).
    fn current_interval(&mut self) -> Interval {
        Interval::at(
            self.cur_sec,
            self.log_ns,
            self.cur_bytes,
            self.cur_ios,
            std::mem::take(&mut self.ended_latency),
        )
    }

    /// The interval in progress into the series, with its latencies; the
    /// next one starts empty.
    #[cold]
    fn end_interval(&mut self) {
        let record = self.current_interval();
        self.out.intervals.push(record);
        (self.cur_bytes, self.cur_ios) = (0, 0);
    }

    /// The worker's outcome after its loop, whether it left the loop or
    /// was claimed in a call: on a schedule, the backlog of I/Os it owed
    /// ([`Tally::backlog`]) and the schedule's figures; then [`Tally::finish`].
    fn close(
        mut self,
        pace: Option<&Pace<C>>,
        slots: &[Slot],
        hung: bool,
        below_limit: bool,
        c1: Option<CpuSample>,
    ) -> WorkerOutcome {
        if let Some(p) = pace {
            self.schedule_end_ns = p.due_ns(p.k);
            self.backlog(p, slots, hung, below_limit);
        }
        let (unserved_ios, unserved_oldest_ns) = (self.unserved_ios, self.unserved_oldest_ns);
        let mut out = self.finish(below_limit, c1);
        out.schedule = pace.map(|p| ScheduleTally {
            unserved_ios,
            unserved_oldest_ns,
            ..p.tally
        });
        out
    }

    /// What ended the worker, its CPU time over the window (up to `c1`,
    /// else now, sampled in this thread), and its last (partial) second:
    /// after the loop, off the hot path.
    fn finish(mut self, below_limit: bool, c1: Option<CpuSample>) -> WorkerOutcome {
        // The last interval's latencies into the total, the tap and its
        // record, read before `out` leaves `self`.
        self.drain(true);
        let last = self.current_interval();
        let mut out = self.out;
        if let Some(w) = &out.write_hist {
            // `hist` held the reads: keep them apart, and merge both into it.
            out.read_hist = Some(out.hist.clone());
            out.hist.merge(w);
        }
        out.ended_by = if out.stopped_on_errors {
            Ending::Errors
        } else if self.past_deadline || below_limit {
            Ending::Deadline
        } else {
            Ending::Limit
        };
        // k I/Os on a schedule take k intervals: a worker that stopped at
        // its limit had its window until the next would have been due, not
        // only until its last completion (which would make 8 I/Os at 200/s
        // "deliver" 227/s).
        if out.ended_by == Ending::Limit && out.last_completion_ns > 0 {
            out.last_completion_ns = out.last_completion_ns.max(self.schedule_end_ns);
        }
        if let Some(tap) = &mut self.tap {
            tap.ended(WorkerEnd {
                deadline: out.ended_by == Ending::Deadline,
                limit: out.ended_by == Ending::Limit,
                last_ns: out.last_completion_ns,
            });
        }
        if !self.in_window {
            return out;
        }
        // The worker's own sample at the close, else (claimed in a call:
        // blocked there since, using no CPU) the claimer's; else now.
        let (c1, edge) = match (self.cpu1, c1) {
            (Some(c), _) => (c, Edge::Straddled(self.straddled_ns)),
            (None, Some(c)) => (c, Edge::Claimed),
            (None, None) => (
                sample_cpu::<C>(self.epoch, self.helper),
                Edge::Straddled(None),
            ),
        };
        let (usr, sys, helper) =
            window_cpu(&self.cpu0, &c1, self.control.end_ns(), edge, out.ios());
        out.sqpoll_cpu_sec = helper;
        // A --sqpoll thread's time is all system time, the worker's own.
        out.cpu_usr_sec = usr;
        out.cpu_sys_sec = sys + helper;
        // The last second: with its I/O, or with errors not yet handed off.
        let errors_pending = self.tap.as_ref().is_some_and(|t| t.pending(out.errors));
        if self.cur_bytes > 0 || self.cur_ios > 0 || out.intervals.is_empty() || errors_pending {
            out.intervals.push(last);
        }
        // The last live interval, on the same terms (a worker that
        // completed nothing still says its first).
        if let Some(tap) = &mut self.tap {
            if self.live_bytes_cur > 0 || self.live_ios > 0 || self.live_t == 0 || errors_pending {
                tap.hand_off(self.live_t, self.live_bytes_cur, self.live_ios, out.errors);
            }
        }
        out
    }
}
/// The worker's write data: its seed, `--dedupe` and its working set,
/// the buffers' `--buffer-compress` share.
fn stamper(spec: &WorkerSpec, compress_pct: u8) -> Stamper {
    Stamper::new(spec.seed, spec.dedupe_pct, compress_pct).with_working_set(spec.dedupe_set)
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
    /// The `--sqpoll` thread's CPU time, from its clock (0 without one).
    helper: f64,
    at_ns: u64,
}
impl CpuSample {
    /// (user, system) seconds from `before` to this sample: the exact total,
    /// split in the proportion getrusage charged (all user when it charged
    /// nothing, as the kernel's own cputime_adjust does).
    fn since(&self, before: &CpuSample) -> (f64, f64) {
        crate::base::usage::split_cpu(
            self.total - before.total,
            self.usr - before.usr,
            self.sys - before.sys,
        )
    }
}
/// How a worker's closing CPU sample was taken.
#[derive(Debug, Clone, Copy)]
enum Edge {
    /// By the worker, running: at its first completion past the close (the
    /// I/O issued at this instant, in ns since the epoch), else at its end.
    Straddled(Option<u64>),
    /// By the coordinator, which gave up on the worker blocked in a call
    /// (using no CPU since).
    Claimed,
}

/// A worker's CPU time in the window, from its samples at the window's
/// edges as the worker saw them: `c0` when it opened for this worker (at
/// or after the gate, or its first completion past the ramp), `c1` when it
/// closed at `close_ns` (`edge`: how), `ios` the I/Os it completed in the
/// window. Returns (user, system, `--sqpoll` helper) seconds.
///
/// Never scaled up to the window: a worker that first ran late in it
/// (hundreds of workers taking turns on two CPUs) used CPU only from then.
/// Scaling its few milliseconds up to the window made a worker that
/// completed nothing show a second of system time, and the total many
/// times what the CPUs could give.
///
/// A sample the worker took past the close holds the CPU of the I/O that
/// straddled the close: one I/O's worth (the worker's CPU per I/O over its
/// samples), split at the close in proportion to the I/O's wall time from
/// its issue (all of it past the close when its issue is not known), and
/// never more than the wall time past the close. Not the whole span
/// prorated by wall time: a worker that waited its turn for a CPU long past
/// the close used next to no CPU meanwhile (prorating the span took 10-20%
/// off the window's own CPU at 300 targets on two CPUs). A sample the
/// coordinator took of a worker blocked in a call is taken as it is.
///
/// Whatever the estimate, one thread runs at most the wall time it had:
/// the thread's share and the helper's are each held to the span from `c0`
/// to the close, and to at least what the span past the close could not
/// hold. The per-I/O estimate alone is a guess when the window holds one
/// or two I/Os: a 64 MiB copy preempted by other work gave 33 ms of CPU to
/// a 20 ms window.
fn window_cpu(
    c0: &CpuSample,
    c1: &CpuSample,
    close_ns: u64,
    edge: Edge,
    ios: u64,
) -> (f64, f64, f64) {
    let (usr, sys) = c1.since(c0);
    let helper = (c1.helper - c0.helper).max(0.0);
    let total = usr + sys + helper;
    let share = match edge {
        Edge::Straddled(issued) if c1.at_ns > close_ns && total > 0.0 => {
            let past_ns = c1.at_ns - close_ns;
            // Of the straddling I/O's wall time, the part past the close.
            let after = match issued {
                Some(i) if i < close_ns => past_ns as f64 / (c1.at_ns - i) as f64,
                _ => 1.0,
            };
            let straddled = total / (ios + 1) as f64;
            let off = (straddled * after).min(past_ns as f64 / 1e9);
            (total - off) / total
        }
        _ => 1.0,
    };
    // What one thread can have run from c0 to the close, and what it ran
    // for certain before the close (the rest of its time past it).
    let span = close_ns.min(c1.at_ns).saturating_sub(c0.at_ns) as f64 / 1e9;
    let past = c1.at_ns.saturating_sub(close_ns) as f64 / 1e9;
    let own = usr + sys;
    let bounded = |all: f64, est: f64| est.min(span).max((all - past).max(0.0).min(span));
    let own_in = bounded(own, own * share);
    let helper_in = bounded(helper, helper * share);
    let own_share = if own > 0.0 { own_in / own } else { 0.0 };
    (usr * own_share, sys * own_share, helper_in)
}

fn sample_cpu<C: Clock>(epoch: Instant, helper: Option<libc::clockid_t>) -> CpuSample {
    let (usr, sys) = thread_cpu_seconds();
    CpuSample {
        usr,
        sys,
        total: thread_cpu_clock(),
        helper: helper.and_then(clock_seconds).unwrap_or(0.0),
        at_ns: C::now().duration_since(epoch).as_nanos() as u64,
    }
}
/// The worker's offsets: its own slice, or its member's share of a modelled
/// RAID0's logical stream (`--stripe`).
fn offsets(spec: &WorkerSpec) -> Offsets {
    if let Some(log) = &spec.replay {
        return Offsets::Replay(Replayer::new(log.clone()));
    }
    if let Some(m) = &spec.sprandom {
        return Offsets::Spr(SprGen::new(spec.region, m, spec.seed));
    }
    match spec.stripe {
        None => {
            // --bssplit: offsets on the split's alignment, the sizes drawn.
            let align = spec.access.sizes.as_ref().map_or(spec.bs, |s| s.align);
            let g = OffsetGen::new(spec.region, align, spec.random, spec.read_pct, spec.seed);
            // A verified random write is read back whole: every block once
            // a pass (the plan keeps it to whole passes of plain writes).
            Offsets::Plain(match spec.verify {
                VerifyMode::Write { .. } | VerifyMode::Mix { .. } if spec.random => g.covering(),
                _ if spec.random && spec.access.random_map => g.covering(),
                _ => g.with_access(&spec.access),
            })
        }
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
            )
            .with_access(&spec.access);
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
/// A verified random mix's generation for its pass `pass` (wrapping past
/// the 65536 a header holds: an older pass's block is told apart from
/// the one just written for 65535 passes).
fn mix_generation(start_ms: u64, pass: u64) -> u64 {
    generation(start_ms, pass % 65536)
}

/// A verified random mix (`VerifyMode::Mix`), fio's loop for randrw with
/// do_verify=1: a pass of the mix (every block of the region once, read
/// or written, fio's random map), then, once its I/O is complete, the
/// read-back of each block the pass wrote, then the next pass. The
/// record of what a pass wrote is a bit per block (fio keeps a list of
/// them, or with experimental_verify replays the pass's draws: the same
/// blocks either way).
struct MixRecord {
    bits: Vec<u64>,
    blocks: u64,
    base: u64,
    bs: u64,
    start_ms: u64,
    /// The pass being mixed or read back.
    pass: u64,
    /// The mix's I/Os issued in this pass.
    mixed: u64,
    /// Reading back: the next block to look at.
    back: Option<u64>,
}

/// What a verified random mix issues next.
#[derive(Debug, PartialEq, Eq)]
enum MixNext {
    /// An I/O: its direction, offset and, for a read-back, the generation
    /// its block must hold (else 0).
    Io(Op, u64, u64),
    /// Nothing until the I/O in flight completes.
    Wait,
    /// Nothing more: the limit reached with the last pass read back.
    Done,
}

impl MixRecord {
    /// The block at `offset` was not written after all (its write failed).
    fn unlog(&mut self, offset: u64) {
        let b = (offset - self.base) / self.bs;
        self.bits[(b / 64) as usize] &= !(1 << (b % 64));
    }

    /// The record of a worker that is a verified random mix, else none;
    /// reserved now, before the first I/O (the plan bounded its blocks).
    fn new(spec: &WorkerSpec) -> Result<Option<MixRecord>, String> {
        let VerifyMode::Mix { start_ms } = spec.verify else {
            return Ok(None);
        };
        MixRecord::over(spec.region, spec.bs, start_ms)
            .map(Some)
            .map_err(|e| {
                format!(
                    "worker {}: cannot reserve the record of the blocks a verified random mix writes ({} blocks, a bit each): {e}",
                    spec.id,
                    spec.region.length / spec.bs.max(1)
                )
            })
    }

    /// The record over `region`'s blocks of `bs`, none written yet.
    fn over(
        region: Region,
        bs: u64,
        start_ms: u64,
    ) -> Result<MixRecord, std::collections::TryReserveError> {
        let blocks = region.length / bs.max(1);
        let words = blocks.div_ceil(64) as usize;
        let mut bits = Vec::new();
        bits.try_reserve_exact(words)?;
        bits.resize(words, 0);
        Ok(MixRecord {
            bits,
            blocks,
            base: region.offset,
            bs,
            start_ms,
            pass: 0,
            mixed: 0,
            back: None,
        })
    }

    /// The next I/O: the mix's (`gen`'s), until its pass is issued; then,
    /// with nothing in flight, the read-back of the pass's writes. With
    /// `over` (the limit reached), no pass is begun.
    fn next(&mut self, gen: &mut Offsets, over: bool, in_flight: usize) -> MixNext {
        if self.blocks == 0 {
            return MixNext::Done;
        }
        loop {
            let Some(at) = self.back else {
                if self.mixed == self.blocks {
                    // The pass's writes must be complete before they are read.
                    if in_flight > 0 {
                        return MixNext::Wait;
                    }
                    self.back = Some(0);
                    continue;
                }
                if over {
                    return MixNext::Done;
                }
                let Some((op, offset)) = gen.next_io() else {
                    return MixNext::Done;
                };
                if op == Op::Write {
                    let b = (offset - self.base) / self.bs;
                    self.bits[(b / 64) as usize] |= 1 << (b % 64);
                }
                self.mixed += 1;
                return MixNext::Io(op, offset, 0);
            };
            if let Some(b) = self.next_written(at) {
                self.back = Some(b + 1);
                let gen = mix_generation(self.start_ms, self.pass);
                return MixNext::Io(Op::Read, self.base + b * self.bs, gen);
            }
            if in_flight > 0 {
                return MixNext::Wait;
            }
            // Read back and checked: the next pass.
            self.bits.fill(0);
            self.back = None;
            self.mixed = 0;
            self.pass += 1;
        }
    }

    /// The first block at or after `from` the pass wrote.
    fn next_written(&self, from: u64) -> Option<u64> {
        let mut w = (from / 64) as usize;
        let mut word = *self.bits.get(w)? & (u64::MAX << (from % 64));
        loop {
            if word != 0 {
                return Some(w as u64 * 64 + u64::from(word.trailing_zeros()));
            }
            w += 1;
            word = *self.bits.get(w)?;
        }
    }
}

/// `--cmdprio`: which I/Os go at the command priority, drawn by a
/// generator of the worker's own (the offsets' stay as without it), the
/// share a threshold on the draw's high 32 bits.
struct CmdPrioDraw {
    rng: crate::base::io::Rng,
    below: u64,
    prio: u16,
}

impl CmdPrioDraw {
    fn new(seed: u64, c: crate::base::thread_setup::CmdPrio) -> CmdPrioDraw {
        CmdPrioDraw {
            rng: crate::base::io::Rng::new(seed ^ 0x434d_4450_5249_4f00),
            below: c.threshold(),
            prio: c.prio.value(),
        }
    }

    /// Sets the next I/O's command priority, counting it in `raised` if
    /// it is the higher one (and giving it back). Off, one branch; on, one
    /// draw and one compare.
    #[inline]
    fn next<E: Engine>(
        draw: &mut Option<CmdPrioDraw>,
        engine: &mut E,
        raised: &mut u64,
    ) -> Option<u16> {
        let d = draw.as_mut()?;
        let high = (d.rng.next_u64() >> 32) < d.below;
        engine.set_cmd_prio(if high { d.prio } else { 0 });
        *raised += u64::from(high);
        high.then_some(d.prio)
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
    // --numa-nodes, --numa-mem, --ioprio: before the engine, so that its
    // buffers are allocated under the memory policy, on the node's CPUs.
    engine
        .thread
        .apply()
        .map_err(|e| format!("worker {}: {e}", spec.id))?;
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

/// What a worker blocked in a call publishes for the coordinator
/// ([`crate::engine::watch::CallWatch`]): where its tally, slots and schedule
/// live (in its frame, which a claimed worker never leaves), and how to
/// read its CPU time from another thread.
#[repr(C)]
struct Frame<'a, C> {
    /// How a claimer closes this frame's tally: first, so that [`claimed`]
    /// finds it without knowing the worker's clock.
    claim: unsafe fn(*mut ()) -> WorkerOutcome,
    tally: *mut Tally<'a, C>,
    slots: *const Slot,
    nslots: usize,
    pace: *const Option<Pace<C>>,
    cpu_clock: Option<libc::clockid_t>,
    tid: i32,
}

impl<'a, C: Clock> Frame<'a, C> {
    fn new(tally: *mut Tally<'a, C>, slots: &[Slot], pace: *const Option<Pace<C>>) -> Frame<'a, C> {
        Frame {
            claim: claim_frame::<C>,
            tally,
            slots: slots.as_ptr(),
            nslots: slots.len(),
            pace,
            cpu_clock: thread_cpu_clock_id(),
            // SAFETY: gettid has no preconditions.
            tid: unsafe { libc::syscall(libc::SYS_gettid) } as i32,
        }
    }
}

/// The outcome of a worker that the coordinator claimed while a call held
/// it (a pread/pwrite on a stalled device): everything it counted up to
/// that call, the call's I/O as hung, its CPU time up to now. The tally is
/// taken over: the worker never touches it again, nor drops it, and its
/// live tap ends here (so the live stream's collector stops waiting).
///
/// # Safety
///
/// `frame` is what the worker published through the watch that the caller
/// has just claimed (`CallWatch::claim` returned true), called once.
pub unsafe fn claimed(frame: *mut ()) -> WorkerOutcome {
    // SAFETY: a published frame is a `Frame` (repr(C)), whose first field
    // is its claim function, monomorphized for the worker's clock; the
    // caller's contract is that function's.
    unsafe {
        let claim = *(frame as *const unsafe fn(*mut ()) -> WorkerOutcome);
        claim(frame)
    }
}

/// [`claimed`], for a worker of clock `C`.
///
/// # Safety
///
/// As [`claimed`]: `frame` is a claimed `Frame<C>`, taken once.
unsafe fn claim_frame<C: Clock>(frame: *mut ()) -> WorkerOutcome {
    // SAFETY: the caller claimed the watch: the worker is inside a call it
    // will never come back from (it parks at `leave`), so its frame stays
    // alive, is no longer written, and its writes before the call are
    // visible (release on enter, acquire on claim). The tally is moved out
    // by a bitwise read; its original is never used nor dropped.
    unsafe {
        let f = &*(frame as *const Frame<'static, C>);
        let slots = std::slice::from_raw_parts(f.slots, f.nslots);
        let tally = std::ptr::read(f.tally);
        let now = Instant::now();
        let c1 = sample_cpu_of(f.tid, f.cpu_clock, tally.epoch);
        // Claimed in a call: that I/O hung, and the worker still owed I/O.
        let mut out = tally.close((*f.pace).as_ref(), slots, true, true, c1);
        out.hung_ios = hung_ios(slots, now);
        out
    }
}

/// The CPU-time clock of thread `tid` of this process (the kernel's
/// MAKE_THREAD_CPUCLOCK: the complemented tid, per-thread, scheduler time).
fn thread_clock(tid: i32) -> libc::clockid_t {
    ((!tid) << 3) | 6
}

/// A CPU-time clock's reading, in seconds.
fn clock_seconds(clock: libc::clockid_t) -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: reads a clock into a local.
    (unsafe { libc::clock_gettime(clock, &mut ts) } == 0)
        .then(|| ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9)
}

/// This thread's CPU-time clock, readable from another thread.
fn thread_cpu_clock_id() -> Option<libc::clockid_t> {
    let mut id: libc::clockid_t = 0;
    // SAFETY: asks for the calling thread's clock into a local.
    (unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) } == 0).then_some(id)
}

/// Another thread's CPU time (thread `tid` of this process, its clock
/// `clock`): the total from its clock, the user/system split from
/// /proc (charged by the tick, as getrusage's).
fn sample_cpu_of(tid: i32, clock: Option<libc::clockid_t>, epoch: Instant) -> Option<CpuSample> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: reads a clock into a local.
    if unsafe { libc::clock_gettime(clock?, &mut ts) } != 0 {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // "TID (comm) S ppid ...": utime and stime are the 12th and 13th
    // fields after the command's closing parenthesis.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // SAFETY: sysconf has no preconditions.
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Some(CpuSample {
        usr: f.get(11)?.parse::<f64>().ok()? / tick,
        sys: f.get(12)?.parse::<f64>().ok()? / tick,
        total: ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9,
        helper: 0.0,
        at_ns: epoch.elapsed().as_nanos() as u64,
    })
}

/// The I/O still in flight when the worker gave up on its engine.
fn hung_ios(slots: &[Slot], now: Instant) -> Vec<HungIo> {
    slots
        .iter()
        .filter(|s| s.busy)
        .map(|s| HungIo {
            op: s.op.to_string(),
            offset: s.offset,
            // The I/O's own size (`--bssplit`: the one drawn for it).
            bytes: s.len,
            seconds_in_flight: now.duration_since(s.issued).as_secs_f64(),
            member: None,
            member_offset: None,
        })
        .collect()
}

#[cfg(test)]
mod mix_tests {
    use super::*;

    // fio's loop for a verified randrw: a pass (every block once), then,
    // with nothing in flight, the read-back of exactly the pass's writes,
    // in order, then the next pass; none begun once the limit is reached.
    #[test]
    fn a_verified_random_mix_reads_back_exactly_what_each_pass_wrote() {
        let region = Region {
            offset: 1 << 20,
            length: 130 * 4096,
        };
        let mut m = MixRecord::over(region, 4096, 9).unwrap();
        let mut gen = Offsets::Plain(OffsetGen::new(region, 4096, true, 50, 3).covering());
        for pass in 0..2u64 {
            let mut seen = std::collections::BTreeSet::new();
            let mut wrote = Vec::new();
            for _ in 0..130 {
                match m.next(&mut gen, false, 0) {
                    MixNext::Io(op, off, 0) => {
                        assert!(seen.insert(off), "block {off} twice in a pass");
                        if op == Op::Write {
                            wrote.push(off);
                        }
                    }
                    other => panic!("{other:?} in the mix"),
                }
            }
            assert!(!wrote.is_empty() && wrote.len() < 130, "{}", wrote.len());
            // The pass's writes still in flight: nothing is read yet.
            assert_eq!(m.next(&mut gen, false, 3), MixNext::Wait);
            wrote.sort_unstable();
            let g = mix_generation(9, pass);
            for off in &wrote {
                assert_eq!(m.next(&mut gen, false, 0), MixNext::Io(Op::Read, *off, g));
            }
            assert_eq!(m.next(&mut gen, false, 2), MixNext::Wait);
        }
        assert_eq!(m.next(&mut gen, true, 0), MixNext::Done);
    }
}

#[cfg(test)]
mod cpu_tests {
    use super::*;

    /// A sample `cpu` seconds of system time in, `at_ms` after the epoch.
    fn at(at_ms: u64, cpu: f64) -> CpuSample {
        CpuSample {
            usr: 0.0,
            sys: cpu,
            total: cpu,
            helper: 0.0,
            at_ns: at_ms * 1_000_000,
        }
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn a_worker_that_first_ran_late_is_not_charged_the_whole_window() {
        // Seen with 300 targets on 2 CPUs: a worker first ran 990 ms into a
        // 1 s window and issued its first I/O; it completed at 1.3 s,
        // after 0.3 ms of CPU. Scaled to the window it showed 0.97 s of
        // system time. Its I/O's CPU is split by its wall time: 1/31 in.
        let edge = Edge::Straddled(Some(990 * MS));
        let (u, s, h) = window_cpu(&at(990, 0.0), &at(1300, 0.0003), 1000 * MS, edge, 0);
        assert_eq!((u, h), (0.0, 0.0));
        assert!((s - 0.0003 / 31.0).abs() < 1e-12, "{s}");
        // One that first ran after the close used nothing in the window.
        let edge = Edge::Straddled(Some(1001 * MS));
        let (_, s, _) = window_cpu(&at(1001, 0.0), &at(1002, 0.0003), 1000 * MS, edge, 0);
        assert_eq!(s, 0.0);
    }

    #[test]
    fn only_the_straddling_io_is_split_at_the_close() {
        // 99 I/Os in the window and one issued 2 ms before the close, 1 ms
        // of CPU each; the sample came 198 ms past the close (the worker
        // waited for a CPU): 0.99 ms comes off, not a sixth of it all.
        let edge = Edge::Straddled(Some(998 * MS));
        let (_, s, _) = window_cpu(&at(0, 0.0), &at(1198, 0.1), 1000 * MS, edge, 99);
        assert!((s - (0.1 - 0.001 * 198.0 / 200.0)).abs() < 1e-9, "{s}");
        // One 64 MiB copy straddles a 20 ms window, running from 5 ms to
        // 35 ms: half of its 30 ms is in the window, with the 5 ms before.
        let edge = Edge::Straddled(Some(5 * MS));
        let (_, s, _) = window_cpu(&at(0, 0.0), &at(35, 0.035), 20 * MS, edge, 0);
        assert!((s - 0.02).abs() < 1e-9, "{s}");
        // Its issue unknown (sampled at the worker's end): all of one I/O
        // off, never more than the time past the close.
        let edge = Edge::Straddled(None);
        let (_, s, _) = window_cpu(&at(0, 0.0), &at(1001, 0.5), 1000 * MS, edge, 9);
        assert!((s - 0.499).abs() < 1e-9, "{s}");
    }

    #[test]
    fn cpu_inside_the_window_is_taken_as_it_is() {
        // Stopped on its limit at 400 ms, sampled there: all of it counts.
        let edge = Edge::Straddled(None);
        let (_, s, _) = window_cpu(&at(5, 0.1), &at(400, 0.45), 1000 * MS, edge, 10);
        assert!((s - 0.35).abs() < 1e-9, "{s}");
        // Claimed in a call (blocked since): the coordinator's sample as it is.
        let (_, s, _) = window_cpu(&at(0, 0.0), &at(9000, 0.7), 1000 * MS, Edge::Claimed, 10);
        assert!((s - 0.7).abs() < 1e-9, "{s}");
    }

    #[test]
    fn one_thread_never_runs_more_than_its_wall_time() {
        // Seen in CI beside other tests: one 64 MiB copy in a 20 ms window
        // and one straddling it, issued at 5 ms and sampled at 35 ms with
        // 35 ms of CPU (the first copy ran preempted, slower than the
        // second). Half the second I/O's share came off: 26 ms in 20.
        let edge = Edge::Straddled(Some(5 * MS));
        let (_, s, _) = window_cpu(&at(0, 0.0), &at(35, 0.035), 20 * MS, edge, 1);
        assert!(s <= 0.020 + 1e-12, "{s}");
        // And never less than what the span past the close cannot hold.
        let edge = Edge::Straddled(None);
        let (_, s, _) = window_cpu(&at(0, 0.0), &at(1010, 0.9), 1000 * MS, edge, 0);
        assert!((s - 0.89).abs() < 1e-9, "{s}");
        // A claimed sample is held to the span too.
        let (_, s, _) = window_cpu(&at(990, 0.0), &at(9000, 0.7), 1000 * MS, Edge::Claimed, 1);
        assert!((s - 0.01).abs() < 1e-9, "{s}");
    }
}
