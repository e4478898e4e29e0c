//! Signals: the first terminating signal that can be caught (SIGINT, SIGTERM,
//! SIGHUP, SIGQUIT, SIGUSR1/2, SIGALRM, SIGPIPE, ...; see [`CAUGHT`]) closes
//! the measured window at once (the workers stop within one I/O, settings
//! are restored and the report is written, marked interrupted) and the
//! process exits with 128 + that signal's number; a second one restores the
//! settings, removes what the run created and exits at once.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Instant;

use std::sync::atomic::AtomicI32;

use signal_hook::consts::signal::*;

/// Every signal whose default action ends the process and that a handler
/// may catch. Faults (SIGSEGV, SIGBUS, SIGILL, SIGFPE), SIGTRAP and SIGSYS
/// are left to the kernel; SIGKILL and SIGSTOP cannot be caught (after a
/// SIGKILL, `stripebench restore` puts settings back and removes the test bed).
pub const CAUGHT: [i32; 14] = [
    SIGINT,
    SIGTERM,
    SIGHUP,
    SIGQUIT,
    SIGUSR1,
    SIGUSR2,
    SIGALRM,
    SIGPIPE,
    SIGXCPU,
    SIGXFSZ,
    SIGVTALRM,
    SIGPROF,
    SIGIO,
    libc::SIGPWR,
];

/// The first signal that arrived (0: none).
static FIRST: AtomicI32 = AtomicI32::new(0);

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

    /// Closes the window now.
    pub fn interrupt(&self) {
        self.interrupted.store(true, Ordering::SeqCst);
        let now = self.epoch().map_or(0, |e| e.elapsed().as_nanos() as u64);
        self.end_ns.fetch_min(now, Ordering::SeqCst);
    }
}

static INTERRUPTS: AtomicU64 = AtomicU64::new(0);
static ACTIVE: Mutex<Option<Arc<RunControl>>> = Mutex::new(None);
static CLEANUP: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Starts the signal thread. Safe to call more than once; only the first call acts.
pub fn install() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new(CAUGHT) else {
            return;
        };
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    let _ = FIRST.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
                    let n = INTERRUPTS.fetch_add(1, Ordering::SeqCst) + 1;
                    if n == 1 {
                        let name = signal_name(sig);
                        match ACTIVE.lock().ok().and_then(|g| g.clone()) {
                            Some(c) if c.epoch().is_some() => eprintln!("\nstripebench: {name}: closing the window and writing what was measured (again to quit at once)"),
                            _ => eprintln!("\nstripebench: {name}: stopping; nothing has been measured yet (again to quit at once)"),
                        }
                        if let Some(c) = ACTIVE.lock().ok().and_then(|g| g.clone()) {
                            c.interrupt();
                        }
                    } else {
                        crate::knobs::restore_active();
                        remove_registered();
                        eprintln!("stripebench: interrupted twice; quitting");
                        std::process::exit(i32::from(exit_status()));
                    }
                }
            })
            .ok();
    });
}

/// The exit status of an interrupted process: 128 + the first signal's number
/// (130 for SIGINT, also when the interrupt came from elsewhere).
pub fn exit_status() -> u8 {
    match FIRST.load(Ordering::SeqCst) {
        0 => crate::error::EXIT_INTERRUPTED,
        n => (128 + n).min(255) as u8,
    }
}

/// A signal's name, for messages.
pub fn signal_name(sig: i32) -> String {
    nix::sys::signal::Signal::try_from(sig)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {sig}"))
}

/// Whether any interrupt has arrived.
pub fn interrupted() -> bool {
    INTERRUPTS.load(Ordering::SeqCst) > 0
}

/// Makes `control` the run that the next interrupt closes; `None` when it ends.
/// If an interrupt already arrived, the run is closed at once.
pub fn set_active(control: Option<Arc<RunControl>>) {
    if let (Some(c), true) = (&control, interrupted()) {
        c.interrupt();
    }
    if let Ok(mut g) = ACTIVE.lock() {
        *g = control;
    }
}

/// Registers a path to remove if the process is made to quit at once.
pub fn register_cleanup(path: PathBuf) {
    if let Ok(mut g) = CLEANUP.lock() {
        g.push(path);
    }
}

/// Forgets a path that its owner removed itself.
pub fn unregister_cleanup(path: &std::path::Path) {
    if let Ok(mut g) = CLEANUP.lock() {
        g.retain(|p| p != path);
    }
}

fn remove_registered() {
    if let Ok(g) = CLEANUP.lock() {
        for p in g.iter() {
            let _ = std::fs::remove_dir_all(p).or_else(|_| std::fs::remove_file(p));
        }
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
