//! Signals: the first terminating signal that can be caught (SIGINT, SIGTERM,
//! SIGHUP, SIGQUIT, SIGUSR1/2, SIGALRM, SIGPIPE, the real-time signals...;
//! see [`caught`]) closes
//! the measured window at once (the workers stop within one I/O, settings
//! are restored and the report is written, marked interrupted) and the
//! process exits with 128 + that signal's number; a second one restores the
//! settings, removes what the run created and exits at once (a SIGPIPE
//! after the first signal is a reader gone, not a second interrupt). What
//! each says goes through [`crate::base::notice`], as it happens.

use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use signal_hook::consts::signal::*;

use crate::base::notice::{self, Notice};

/// Every signal whose default action ends the process and that a handler
/// may catch. Faults (SIGSEGV, SIGBUS, SIGILL, SIGFPE), SIGTRAP and SIGSYS
/// are left to the kernel; SIGKILL and SIGSTOP cannot be caught (after a
/// SIGKILL, `stripebench restore` puts settings back and removes the test bed).
pub fn caught() -> Vec<i32> {
    let mut v = vec![
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
        libc::SIGSTKFLT,
    ];
    // The real-time signals end the process by default too.
    v.extend(libc::SIGRTMIN()..=libc::SIGRTMAX());
    v
}

/// The first signal that arrived (0: none).
static FIRST: AtomicI32 = AtomicI32::new(0);

static INTERRUPTS: AtomicU64 = AtomicU64::new(0);
/// What an interrupt closes: the window of the run in progress.
pub trait Window: Send + Sync {
    /// Closes the window now.
    fn close(&self);
    /// Whether the run has started measuring.
    fn started(&self) -> bool;
}

/// The runs in progress: one, or the runs of a fio group that run at once.
static ACTIVE: Mutex<Vec<Arc<dyn Window>>> = Mutex::new(Vec::new());
/// Called before the process quits at once on a second signal (settings
/// to put back): registered by the layers that change things.
static ON_QUIT: Mutex<Vec<fn()>> = Mutex::new(Vec::new());
static CLEANUP: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Starts the signal thread. Safe to call more than once; only the first call acts.
pub fn install() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new(caught()) else {
            return;
        };
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    // A reader that went away after the first signal (the
                    // one of this thread's own notice, or of a report being
                    // written) is no request to quit at once: the write
                    // that met it says so, and what was measured is kept.
                    if sig == SIGPIPE && interrupted() {
                        continue;
                    }
                    let _ = FIRST.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
                    let n = INTERRUPTS.fetch_add(1, Ordering::SeqCst) + 1;
                    if n == 1 {
                        let name = signal_name(sig);
                        let active = ACTIVE.lock().map(|g| g.clone()).unwrap_or_default();
                        // The windows close first: saying so can block (a
                        // stderr pipe whose reader paused), and must not
                        // keep the runs going until the reader reads.
                        for c in &active {
                            c.close();
                        }
                        // A reader that went away: the writer that got EPIPE says so.
                        if !(active.is_empty() && sig == SIGPIPE) {
                            notice::say(&Notice::Stopping {
                                signal: name,
                                measuring: active.iter().any(|c| c.started()),
                            });
                        }
                    } else {
                        if let Ok(hooks) = ON_QUIT.lock() {
                            hooks.iter().for_each(|h| h());
                        }
                        remove_registered();
                        notice::say(&Notice::QuittingAtOnce);
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
        0 => (128 + SIGINT) as u8,
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

/// Runs `hook` before the process quits at once on a second signal.
pub fn on_quit(hook: fn()) {
    if let Ok(mut g) = ON_QUIT.lock() {
        if !g.contains(&hook) {
            g.push(hook);
        }
    }
}

/// Makes `control` a run that the next interrupt closes (with any other
/// run going at once). If an interrupt already arrived, the run is closed
/// at once.
pub fn activate(control: Arc<dyn Window>) {
    if interrupted() {
        control.close();
    }
    if let Ok(mut g) = ACTIVE.lock() {
        g.push(control);
    }
}

/// The run `control` has ended: an interrupt no longer closes it.
pub fn deactivate(control: &Arc<dyn Window>) {
    if let Ok(mut g) = ACTIVE.lock() {
        g.retain(|c| !Arc::ptr_eq(c, control));
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
