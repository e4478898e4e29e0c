//! The run's window, shared between the coordinator, its workers and the
//! signal thread: when the run started and when its window closes. An
//! interrupt (see [`crate::base::signals`]) closes it at once.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Instant;

/// Shared between the coordinator, its workers and the signal thread: when the
/// run started and when its window closes.
///
/// Workers wait for the start at a gate, not a barrier: a barrier waits for
/// a number of threads, so a worker that died before reaching it (a panic
/// in setup) would hold every other thread, the coordinator included, there
/// forever. The gate counts no one: the coordinator opens it once, to start
/// the run or to call it off, and whoever waits (or comes later) goes.
#[derive(Debug, Default)]
pub struct RunControl {
    /// Set by the coordinator when it opens the gate to start the run.
    epoch: OnceLock<Instant>,
    /// The start gate: true once the run started or was called off.
    opened: Mutex<bool>,
    gate: Condvar,
    /// Window end in ns since the epoch; lowered by an interrupt.
    end_ns: AtomicU64,
    /// The run was interrupted.
    interrupted: AtomicBool,
    /// `--steady` ended the window.
    steady: AtomicBool,
    /// `--rate-min`/`--rate-iops-min`: a cycle fell below the minimum.
    below_min: AtomicBool,
    /// Another run at once ended, and fio's exitall ends this one too.
    exited: AtomicBool,
}

impl RunControl {
    pub fn new(end_ns: u64) -> RunControl {
        RunControl {
            end_ns: AtomicU64::new(end_ns),
            ..RunControl::default()
        }
    }

    /// Fixes time zero of the run and opens the gate: every worker waiting
    /// in [`wait_start`](Self::wait_start) goes. Called once, by the coordinator.
    pub fn start(&self) -> Instant {
        let epoch = *self.epoch.get_or_init(Instant::now);
        self.open();
        epoch
    }

    /// Opens the gate without starting the run: the workers return at once
    /// (after `start`, it changes nothing).
    pub fn call_off(&self) {
        self.open();
    }

    fn open(&self) {
        // A poisoned lock still holds a bool: carry on with it.
        *self.opened.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.gate.notify_all();
    }

    /// Waits at the gate until the coordinator starts the run (its epoch) or
    /// calls it off (`None`).
    pub fn wait_start(&self) -> Option<Instant> {
        let mut opened = self.opened.lock().unwrap_or_else(|e| e.into_inner());
        while !*opened {
            opened = self.gate.wait(opened).unwrap_or_else(|e| e.into_inner());
        }
        drop(opened);
        self.epoch()
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

    /// Closes the window now because the run is steady (`--steady`): as
    /// an interrupt closes it, but the run was not cut short.
    pub fn end_now(&self) {
        self.steady.store(true, Ordering::SeqCst);
        let now = self.epoch().map_or(0, |e| e.elapsed().as_nanos() as u64);
        self.end_ns.fetch_min(now, Ordering::SeqCst);
    }

    /// Closes the window now because a cycle fell below `--rate-min` or
    /// `--rate-iops-min`: the run failed its own check, as fio's job does.
    pub fn end_below_min(&self) {
        self.below_min.store(true, Ordering::SeqCst);
        let now = self.epoch().map_or(0, |e| e.elapsed().as_nanos() as u64);
        self.end_ns.fetch_min(now, Ordering::SeqCst);
    }

    /// Closes the window now because another run at once ended (fio's
    /// exitall): the run was not cut short by anything of its own.
    pub fn end_by_exit(&self) {
        self.exited.store(true, Ordering::SeqCst);
        let now = self.epoch().map_or(0, |e| e.elapsed().as_nanos() as u64);
        self.end_ns.fetch_min(now, Ordering::SeqCst);
    }

    /// Another run's end (fio's exitall) ended the window.
    pub fn ended_by_exit(&self) -> bool {
        self.exited.load(Ordering::SeqCst)
    }

    /// A cycle fell below the minimum rate and ended the window.
    pub fn ended_below_min(&self) -> bool {
        self.below_min.load(Ordering::SeqCst)
    }

    /// `--steady` ended the window.
    pub fn ended_steady(&self) -> bool {
        self.steady.load(Ordering::SeqCst)
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
    fn the_start_gate_lets_every_waiter_go_however_many_arrive() {
        // A barrier for 3 with one party gone never opens; the gate does.
        for start in [true, false] {
            let c = RunControl::new(u64::MAX);
            std::thread::scope(|s| {
                let waiters: Vec<_> = (0..2).map(|_| s.spawn(|| c.wait_start())).collect();
                if start {
                    c.start();
                } else {
                    c.call_off();
                }
                for w in waiters {
                    assert_eq!(w.join().unwrap().is_some(), start);
                }
            });
            // Who comes after the gate opened goes at once.
            assert_eq!(c.wait_start().is_some(), start);
        }
    }

    #[test]
    fn interrupt_before_start_closes_at_zero() {
        let c = RunControl::new(5);
        c.interrupt();
        assert_eq!(c.end_ns(), 0);
    }
}
