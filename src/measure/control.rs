//! The run's window, shared between the coordinator, its workers and the
//! signal thread: when the run started and when its window closes. An
//! interrupt (see [`crate::base::signals`]) closes it at once.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// Shared between the coordinator, its workers and the signal thread: when the
/// run started and when its window closes.
#[derive(Debug, Default)]
pub struct RunControl {
    /// Set by the coordinator just before the start barrier.
    epoch: OnceLock<Instant>,
    /// Window end in ns since the epoch; lowered by an interrupt.
    end_ns: AtomicU64,
    /// The run was interrupted.
    interrupted: AtomicBool,
}

impl RunControl {
    pub fn new(end_ns: u64) -> RunControl {
        RunControl {
            epoch: OnceLock::new(),
            end_ns: AtomicU64::new(end_ns),
            interrupted: AtomicBool::new(false),
        }
    }

    /// Fixes time zero of the run. Called once, by the coordinator.
    pub fn start(&self) -> Instant {
        *self.epoch.get_or_init(Instant::now)
    }

    pub fn epoch(&self) -> Option<Instant> {
        self.epoch.get().copied()
    }

    /// The window end, in ns since the epoch. One relaxed load: cheap enough per I/O.
    #[inline]
    pub fn end_ns(&self) -> u64 {
        self.end_ns.load(Ordering::Relaxed)
    }

    pub fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    /// Closes the window now.
    pub fn interrupt(&self) {
        self.interrupted.store(true, Ordering::SeqCst);
        let now = self.epoch().map_or(0, |e| e.elapsed().as_nanos() as u64);
        self.end_ns.fetch_min(now, Ordering::SeqCst);
    }
}

impl crate::base::signals::Window for RunControl {
    fn close(&self) {
        self.interrupt();
    }

    fn started(&self) -> bool {
        self.epoch().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupt_closes_the_window_early() {
        let c = RunControl::new(u64::MAX);
        c.start();
        assert!(!c.interrupted());
        c.interrupt();
        assert!(c.interrupted());
        assert!(c.end_ns() < 1_000_000_000);
    }

    #[test]
    fn interrupt_before_start_closes_at_zero() {
        let c = RunControl::new(5);
        c.interrupt();
        assert_eq!(c.end_ns(), 0);
    }
}
