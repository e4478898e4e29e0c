//! A watch on a worker's blocking syscall: a pread/pwrite on a stalled
//! device cannot be cancelled (the thread sleeps uninterruptibly in the
//! kernel), so whoever waits for the worker must be able to stop waiting,
//! take what the worker had counted, and leave the thread behind.
//!
//! The protocol, per call: the worker says it enters the call (a release
//! store, so everything it wrote before is visible to a claimer) and, back
//! from it, that it left (a plain store), then looks whether a claim was
//! asked for (a plain load). A claimer that finds it in a call asks
//! (`ASKED`), makes sure the worker either sees the ask or has visibly
//! left, and, if it is still in a call, turns the ask into `CLAIMED` with
//! a compare-exchange. A worker that sees an ask takes it back with the
//! same compare-exchange: whichever of the two comes first decides. From a
//! claim on, what the worker published belongs to the claimer, and the
//! worker parks forever without touching anything.
//!
//! The "makes sure" is a store-load fence between the worker's "left" and
//! its look, which on x86 costs a locked instruction (~20 ns after a
//! syscall, 2% of a cached 8 KiB read). The worker does not pay it: the
//! claimer, which comes once a hung call in a whole run, has the kernel run
//! the fence on every CPU of the process for it (`membarrier`, private
//! expedited, Linux 4.14+, registered once per process). Where membarrier
//! is refused (an old kernel, a seccomp filter), both sides use sequentially
//! consistent operations (the worker's store an `xchg` on x86, as before).
//! Claims are made one at a time in the process (a lock, on the claimer's
//! side only): two claimers at once could each decide on the other's ask.
//! Cost per I/O: two plain stores and one plain load, no lock, no syscall.

use std::sync::atomic::{compiler_fence, AtomicPtr, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

/// `state`: the worker's, alone.
const RUNNING: u32 = 0;
const IN_CALL: u32 = 1;
/// `claim`: asked by the claimer, taken back by the worker, or decided.
const NONE: u32 = 0;
const ASKED: u32 = 1;
const CLAIMED: u32 = 2;

/// One worker's watch (shared between its engine and the coordinator).
#[derive(Debug)]
pub struct CallWatch {
    state: AtomicU32,
    claim: AtomicU32,
    /// The claimer fences for the worker (membarrier registered).
    fenced: bool,
    /// What the worker publishes for a claimer, opaque here.
    frame: AtomicPtr<()>,
}

impl Default for CallWatch {
    fn default() -> CallWatch {
        CallWatch::new()
    }
}

impl CallWatch {
    pub fn new() -> CallWatch {
        CallWatch::with_fence(true)
    }

    /// A watch whose claimer fences for the worker, if `fence` and the
    /// kernel lets it.
    fn with_fence(fence: bool) -> CallWatch {
        CallWatch {
            state: AtomicU32::new(RUNNING),
            claim: AtomicU32::new(NONE),
            fenced: fence && membarrier_registered(),
            frame: AtomicPtr::new(std::ptr::null_mut()),
        }
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
        if self.fenced {
            self.state.store(RUNNING, Ordering::Relaxed);
            // The claimer's membarrier orders the CPU; this, the compiler.
            compiler_fence(Ordering::SeqCst);
            if self.claim.load(Ordering::Relaxed) != NONE {
                self.asked();
            }
        } else {
            self.state.store(RUNNING, Ordering::SeqCst);
            if self.claim.load(Ordering::SeqCst) != NONE {
                self.asked();
            }
        }
    }

    /// A claim was asked for: taken back, unless the claimer decided first.
    #[cold]
    fn asked(&self) {
        if self
            .claim
            .compare_exchange(ASKED, NONE, Ordering::AcqRel, Ordering::Acquire)
            == Err(CLAIMED)
        {
            loop {
                std::thread::park();
            }
        }
    }

    /// Claims the worker if it is in a syscall now: true when claimed.
    /// After that, the worker never runs again past its call.
    pub fn claim(&self) -> bool {
        if self.state.load(Ordering::Acquire) != IN_CALL {
            return false;
        }
        static ONE_CLAIMER: Mutex<()> = Mutex::new(());
        let _one = ONE_CLAIMER.lock().unwrap_or_else(|e| e.into_inner());
        // Asked once: a worker already claimed is not asked again.
        if self
            .claim
            .compare_exchange(NONE, ASKED, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        // The worker has either left visibly (its store is seen below) or
        // will see the ask when it does.
        let fenced = !self.fenced || membarrier_fence();
        if fenced && self.state.load(Ordering::SeqCst) == IN_CALL {
            // It may have seen an earlier ask and taken it back: then not.
            return self
                .claim
                .compare_exchange(ASKED, CLAIMED, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
        }
        // Back from its call (or no fence): the ask goes, unless the worker
        // took it back already.
        let _ = self
            .claim
            .compare_exchange(ASKED, NONE, Ordering::AcqRel, Ordering::Acquire);
        false
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

/// Registers this process for private expedited membarrier, once: whether
/// claimers may fence for the workers.
fn membarrier_registered() -> bool {
    use rustix::thread::{membarrier, MembarrierCommand};
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| membarrier(MembarrierCommand::RegisterPrivateExpedited).is_ok())
}

/// A full memory barrier on every CPU running a thread of this process
/// (and at the next switch to one that is not running): false if the
/// kernel refused it, and then nothing may be concluded.
fn membarrier_fence() -> bool {
    use rustix::thread::{membarrier, MembarrierCommand};
    membarrier(MembarrierCommand::PrivateExpedited).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    #[test]
    fn a_watch_is_fenced_where_the_kernel_offers_private_expedited_membarrier() {
        use rustix::thread::{membarrier_query, MembarrierQuery};
        let offered = membarrier_query().contains(MembarrierQuery::PRIVATE_EXPEDITED);
        assert_eq!(CallWatch::new().fenced, offered);
        assert!(!CallWatch::with_fence(false).fenced);
    }

    #[test]
    fn a_claim_succeeds_only_while_in_a_call_and_parks_the_worker() {
        for fenced in [true, false] {
            let w = CallWatch::with_fence(fenced);
            assert!(!w.claim(), "not in a call");
            w.enter();
            w.leave();
            assert!(!w.claim(), "back from its call");
            let w = Arc::new(CallWatch::with_fence(fenced));
            let (tx, rx) = std::sync::mpsc::channel();
            let w2 = w.clone();
            std::thread::spawn(move || {
                w2.enter();
                tx.send(()).unwrap();
                // The "call": until the claim.
                while w2.claim.load(Ordering::Acquire) != CLAIMED {
                    std::hint::spin_loop();
                }
                w2.leave();
                unreachable!("a claimed worker never gets past leave");
            });
            rx.recv().unwrap();
            assert!(
                w.claim(),
                "claimed in its call (fenced: {fenced}, {})",
                w.fenced
            );
            assert!(!w.claim(), "claimed once");
        }
    }

    #[test]
    fn a_worker_asked_and_back_first_takes_the_ask_back_and_goes_on() {
        for fenced in [true, false] {
            let w = CallWatch::with_fence(fenced);
            w.enter();
            // The claimer asked; the worker left before it decided.
            w.claim.store(ASKED, Ordering::SeqCst);
            w.leave();
            assert_eq!(w.claim.load(Ordering::SeqCst), NONE);
            // The claimer's decision then fails: the worker is running.
            assert!(!w.claim());
        }
    }

    /// A worker that calls and leaves in a tight loop against a claimer
    /// that keeps trying: every failed claim leaves the worker running,
    /// and once a claim succeeds the worker never completes another call.
    #[test]
    fn racing_claims_never_let_a_claimed_worker_run_on_nor_stop_an_unclaimed_one() {
        for fenced in [true, false] {
            for round in 0..24u64 {
                let w = Arc::new(CallWatch::with_fence(fenced));
                let calls = Arc::new(AtomicU64::new(0));
                let (w2, calls2) = (w.clone(), calls.clone());
                std::thread::spawn(move || {
                    let mut spin = round;
                    loop {
                        w2.enter();
                        // A "call" of varying length, sometimes none.
                        spin = spin.wrapping_mul(6364136223846793005).wrapping_add(1);
                        for _ in 0..(spin >> 56) {
                            std::hint::spin_loop();
                        }
                        w2.leave();
                        calls2.fetch_add(1, Ordering::Relaxed);
                    }
                });
                let mut seen = (calls.load(Ordering::Relaxed), Instant::now());
                loop {
                    if w.claim() {
                        let at_claim = calls.load(Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(5));
                        assert!(
                            calls.load(Ordering::SeqCst) == at_claim,
                            "a claimed worker completed calls (fenced: {fenced})"
                        );
                        break;
                    }
                    // Failed claims: the worker goes on. (Ten seconds
                    // without one completed call is no slow machine.)
                    let now = calls.load(Ordering::Relaxed);
                    if now != seen.0 {
                        seen = (now, Instant::now());
                    }
                    assert!(
                        seen.1.elapsed() < Duration::from_secs(10),
                        "an unclaimed worker stopped (fenced: {fenced})"
                    );
                }
            }
        }
    }
}
