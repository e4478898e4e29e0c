//! The time a worker reads: the monotonic clock ([`Wall`]), or for the
//! pipeline tests a virtual one ([`Virtual`]) that only the mock engine
//! moves, a fixed latency per I/O, so a whole run's figures are exact.
//!
//! The worker's loop is generic over its [`Clock`] (through its engine's
//! [`crate::engine::Engine::Clock`]): a real run compiles to a read of the
//! CPU's counter (or `Instant::now()`), with no call through a pointer per I/O.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Where a worker's timestamps come from. Associated functions, no state:
/// a clock is per thread (the virtual one keeps its time in a thread-local).
pub trait Clock {
    /// The worker's epoch (the start gate opened): a virtual clock starts
    /// its time here.
    fn start(epoch: Instant);
    /// Now.
    fn now() -> Instant;
    /// Lets `d` pass (a worker on a schedule, waiting for a due time).
    fn sleep(d: Duration);
}

/// The real clock, every real run: the monotonic clock, read from the CPU's
/// time-stamp counter where the kernel's own clocksource is that counter.
///
/// `current_clocksource` "tsc" (x86-64) means the kernel found the counter
/// constant-rate and in step on every CPU when it chose it, and
/// CLOCK_MONOTONIC is that counter scaled. The vDSO's clock_gettime reads
/// it behind a sequence lock with an ordering fence: a pair of reads took
/// 48 ns on this 2-vCPU VM, a pair of `rdtsc` 19. fio reads the counter
/// too where the CPU says it is invariant (its default
/// `clocksource=cpu`). A worker anchors the counter to the monotonic clock
/// when its gate opens ([`Clock::start`]); from there an instant is the
/// anchor plus the ticks since, scaled by a rate measured once per process
/// (before the first run's gate: [`Wall::source`]) against
/// CLOCK_MONOTONIC_RAW, the kernel's unslewed reading of the same counter,
/// so NTP's slewing at that moment does not stay in the rate. Rates and
/// latencies are the worker's own ticks, and the window's deadline is
/// checked in them; they part from the monotonic clock only by what NTP
/// slews it during the run (parts per million; chrony slews up to 8% while
/// it corrects a large offset). Anywhere else (another clocksource, another
/// architecture, a thread that never started), `now` is `Instant::now()`.
/// The clocksource is read once per process: a kernel that gives up on the
/// counter later (its watchdog found it unstable) is not followed.
pub struct Wall;

thread_local! {
    /// This thread's anchor, set by [`Clock::start`] where the TSC serves.
    static ANCHOR: Cell<Option<Anchor>> = const { Cell::new(None) };
}

impl Wall {
    /// Which counter the real clock reads in this process: "tsc" or
    /// "monotonic" (the run document's `window.clock`). The first call
    /// measures the counter's rate (5 ms): made before workers start.
    pub fn source() -> &'static str {
        if tsc::scale().is_some() {
            "tsc"
        } else {
            "monotonic"
        }
    }
}

impl Clock for Wall {
    fn start(_epoch: Instant) {
        ANCHOR.with(|a| a.set(tsc::scale().map(Anchor::now)));
    }

    #[inline(always)]
    fn now() -> Instant {
        match ANCHOR.with(Cell::get) {
            Some(a) => a.at(tsc::read()),
            None => Instant::now(),
        }
    }

    #[inline]
    fn sleep(d: Duration) {
        std::thread::sleep(d)
    }
}

/// An instant of the monotonic clock, the counter's value at it, and the
/// counter's rate: nanoseconds per tick as a 32.32 fixed-point number.
#[derive(Clone, Copy, Debug)]
struct Anchor {
    at: Instant,
    ticks: u64,
    ns_per_tick: u64,
}

impl Anchor {
    fn now(ns_per_tick: u64) -> Anchor {
        let (at, ticks) = tsc::pair(Instant::now);
        Anchor {
            at,
            ticks,
            ns_per_tick,
        }
    }

    /// The instant the counter read `ticks` (never before the anchor).
    #[inline(always)]
    fn at(self, ticks: u64) -> Instant {
        let ns = (ticks.saturating_sub(self.ticks) as u128 * self.ns_per_tick as u128) >> 32;
        self.at + Duration::from_nanos(ns as u64)
    }
}

/// The time-stamp counter: whether it serves, its rate, a read.
mod tsc {
    use std::sync::OnceLock;
    use std::time::{Duration, Instant};

    /// How long the rate is measured over, once per process: a pair's
    /// error (its bracket, tens of ns) over this is a few parts per million.
    /// (The span is taken end to end: a preemption in it costs nothing.)
    const CALIBRATION: Duration = Duration::from_millis(5);

    /// The counter's rate (ns per tick, 32.32), `None` where it does not
    /// serve as the clock.
    pub(super) fn scale() -> Option<u64> {
        static SCALE: OnceLock<Option<u64>> = OnceLock::new();
        *SCALE.get_or_init(|| {
            let source =
                std::fs::read_to_string(crate::base::host::Host::real().clocksource()).ok()?;
            (cfg!(target_arch = "x86_64") && source.trim() == "tsc")
                .then(calibrate)
                .flatten()
        })
    }

    /// Ticks and nanoseconds of CLOCK_MONOTONIC_RAW over [`CALIBRATION`],
    /// each end a tight pair.
    fn calibrate() -> Option<u64> {
        let raw_ns = || {
            let t = rustix::time::clock_gettime(rustix::time::ClockId::MonotonicRaw);
            (t.tv_sec as u64).saturating_mul(1_000_000_000) + t.tv_nsec as u64
        };
        let (r0, t0) = pair(raw_ns);
        let spin = Instant::now();
        while spin.elapsed() < CALIBRATION {
            std::hint::spin_loop();
        }
        let (r1, t1) = pair(raw_ns);
        rate(r1.checked_sub(r0)?, t1.checked_sub(t0)?)
    }

    /// ns per tick (32.32) from `ns` nanoseconds over `ticks` ticks, if
    /// the counter ran between 100 MHz and 20 GHz (anything else is not a
    /// counter to time I/O with).
    pub(super) fn rate(ns: u64, ticks: u64) -> Option<u64> {
        let ghz = ticks as f64 / ns.max(1) as f64;
        ((0.1..=20.0).contains(&ghz)).then(|| (((ns as u128) << 32) / ticks as u128) as u64)
    }

    /// A reading of a clock and the counter at it: the midpoint of the
    /// tightest of a few brackets, so a preemption between the reads does
    /// not skew it.
    pub(super) fn pair<T: Copy>(clock: impl Fn() -> T) -> (T, u64) {
        let mut best = (u64::MAX, clock(), read());
        for _ in 0..16 {
            let a = read();
            let i = clock();
            let b = read();
            let width = b.wrapping_sub(a);
            if width < best.0 {
                best = (width, i, a + width / 2);
            }
        }
        (best.1, best.2)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub(super) fn read() -> u64 {
        // SAFETY: rdtsc has no preconditions on x86-64 (user mode may read
        // it unless the kernel set CR4.TSD, which it does not for a process
        // that has not asked for it with prctl).
        unsafe { core::arch::x86_64::_rdtsc() }
    }

    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    pub(super) fn read() -> u64 {
        0
    }
}

/// A clock that stands still until the mock engine (or a sleep) moves it:
/// the epoch plus the nanoseconds advanced so far, in this thread.
pub struct Virtual;

thread_local! {
    /// This thread's epoch (`None` before [`Clock::start`]) and its time since.
    static EPOCH: Cell<Option<Instant>> = const { Cell::new(None) };
    static ELAPSED_NS: Cell<u64> = const { Cell::new(0) };
}

impl Virtual {
    /// Moves this thread's time on by `ns`.
    pub fn advance(ns: u64) {
        ELAPSED_NS.with(|t| t.set(t.get().saturating_add(ns)));
    }

    /// This thread's time since its epoch, in ns.
    pub fn elapsed_ns() -> u64 {
        ELAPSED_NS.with(Cell::get)
    }
}

impl Clock for Virtual {
    fn start(epoch: Instant) {
        EPOCH.with(|e| e.set(Some(epoch)));
        ELAPSED_NS.with(|t| t.set(0));
    }

    fn now() -> Instant {
        // Before the start (an engine built before the gate): the real
        // instant serves as the base; nothing measured reads it.
        let base = EPOCH.with(Cell::get).unwrap_or_else(Instant::now);
        base + Duration::from_nanos(Virtual::elapsed_ns())
    }

    fn sleep(d: Duration) {
        Virtual::advance(d.as_nanos().min(u64::MAX as u128) as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_virtual_clock_moves_only_when_told() {
        let epoch = Instant::now();
        Virtual::start(epoch);
        assert_eq!(Virtual::now(), epoch);
        Virtual::advance(1_500);
        Virtual::sleep(Duration::from_micros(2));
        assert_eq!(Virtual::now() - epoch, Duration::from_nanos(3_500));
        // Another thread keeps its own time.
        std::thread::spawn(|| assert_eq!(Virtual::elapsed_ns(), 0))
            .join()
            .unwrap();
    }

    #[test]
    fn the_counter_rate_is_ns_per_tick_in_32_32_and_refuses_what_is_no_clock() {
        // 2 GHz: half a nanosecond a tick.
        assert_eq!(tsc::rate(1_000_000, 2_000_000), Some(1 << 31));
        assert_eq!(tsc::rate(1_000_000, 1_000_000), Some(1 << 32));
        assert_eq!(tsc::rate(1_000_000, 50_000), None, "50 MHz");
        assert_eq!(tsc::rate(1_000, 100_000), None, "100 GHz");
    }

    #[test]
    fn an_anchored_instant_is_the_anchor_plus_the_scaled_ticks_and_never_before_it() {
        let at = Instant::now();
        let a = Anchor {
            at,
            ticks: 1_000,
            ns_per_tick: 1 << 31,
        };
        assert_eq!(a.at(1_000 + 2_000_000_000), at + Duration::from_secs(1));
        assert_eq!(a.at(1_000 + 3), at + Duration::from_nanos(1));
        // A counter read below the anchor (another CPU's, a hair behind).
        assert_eq!(a.at(10), at);
    }

    #[test]
    fn the_real_clock_reads_the_counter_where_the_kernel_does_and_agrees_with_the_monotonic_clock()
    {
        let kernel = std::fs::read_to_string(crate::base::host::Host::real().clocksource())
            .unwrap_or_default();
        let tsc = cfg!(target_arch = "x86_64") && kernel.trim() == "tsc";
        assert_eq!(Wall::source(), if tsc { "tsc" } else { "monotonic" });
        std::thread::spawn(|| {
            Wall::start(Instant::now());
            // Each reading lies between two of the monotonic clock's,
            // give or take the calibration's error (ppm) and the anchor's
            // (a bracket): 50 us is a thousand times both.
            let slack = Duration::from_micros(50);
            for _ in 0..5 {
                let before = Instant::now();
                let now = Wall::now();
                let after = Instant::now();
                assert!(now + slack >= before && now <= after + slack);
                std::thread::sleep(Duration::from_millis(10));
            }
        })
        .join()
        .unwrap();
    }
}
