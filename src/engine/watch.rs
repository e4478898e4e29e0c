//! A watch on a worker's blocking syscall: a pread/pwrite on a stalled
//! device cannot be cancelled (the thread sleeps uninterruptibly in the
//! kernel), so whoever waits for the worker must be able to stop waiting,
//! take what the worker had counted, and leave the thread behind.
//!
//! The protocol, per call: the worker says it enters the call (a release
//! store, so everything it wrote before is visible to a claimer) and, back
//! from it, swaps the state back. A claimer may turn "in a call" into
//! "claimed" with a compare-exchange (acquire); from then on what the
//! worker published belongs to the claimer, and the worker, when the call
//! returns, sees the claim and parks forever without touching anything.
//! Cost per I/O: one plain store and one swap, no lock, no syscall.

use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

const RUNNING: u32 = 0;
const IN_CALL: u32 = 1;
const CLAIMED: u32 = 2;

/// One worker's watch (shared between its engine and the coordinator).
#[derive(Debug, Default)]
pub struct CallWatch {
    state: AtomicU32,
    /// What the worker publishes for a claimer, opaque here.
    frame: AtomicPtr<()>,
}

impl CallWatch {
    pub fn new() -> CallWatch {
        CallWatch::default()
    }

    /// The worker is about to block in a syscall.
    #[inline]
    pub fn enter(&self) {
        self.state.store(IN_CALL, Ordering::Release);
    }

    /// The worker is back from its syscall. If it was claimed meanwhile,
    /// this never returns: the thread parks for good, touching nothing.
    #[inline]
    pub fn leave(&self) {
        if self.state.swap(RUNNING, Ordering::AcqRel) == CLAIMED {
            loop {
                std::thread::park();
            }
        }
    }

    /// Claims the worker if it is in a syscall now: true when claimed.
    /// After that, the worker never runs again past its call.
    pub fn claim(&self) -> bool {
        self.state
            .compare_exchange(IN_CALL, CLAIMED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// The worker publishes what a claimer may read (before its first call).
    pub fn publish(&self, frame: *mut ()) {
        self.frame.store(frame, Ordering::Release);
    }

    /// What the worker published (null: nothing).
    pub fn frame(&self) -> *mut () {
        self.frame.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_claim_succeeds_only_while_in_a_call_and_parks_the_worker() {
        let w = CallWatch::new();
        assert!(!w.claim(), "not in a call");
        w.enter();
        w.leave();
        assert!(!w.claim(), "back from its call");
        let w = Arc::new(CallWatch::new());
        let (tx, rx) = std::sync::mpsc::channel();
        let w2 = w.clone();
        std::thread::spawn(move || {
            w2.enter();
            tx.send(()).unwrap();
            // The "call": until the claim.
            while w2.state.load(Ordering::Acquire) != CLAIMED {
                std::hint::spin_loop();
            }
            w2.leave();
            unreachable!("a claimed worker never gets past leave");
        });
        rx.recv().unwrap();
        assert!(w.claim());
        assert!(!w.claim(), "claimed once");
    }
}
