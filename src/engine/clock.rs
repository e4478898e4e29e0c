//! The time a worker reads: the monotonic clock ([`Wall`]), or for the
//! pipeline tests a virtual one ([`Virtual`]) that only the mock engine
//! moves, a fixed latency per I/O, so a whole run's figures are exact.
//!
//! The worker's loop is generic over its [`Clock`] (through its engine's
//! [`crate::engine::Engine::Clock`]): a real run compiles to the same
//! `Instant::now()` it always read, with no call through a pointer per I/O.

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

/// The monotonic clock (the vDSO's clock_gettime): every real run.
pub struct Wall;

impl Clock for Wall {
    #[inline(always)]
    fn start(_epoch: Instant) {}

    #[inline(always)]
    fn now() -> Instant {
        Instant::now()
    }

    #[inline]
    fn sleep(d: Duration) {
        std::thread::sleep(d)
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
}
