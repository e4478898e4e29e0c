//! A fault-injecting engine for tests: wraps a real engine and fails every
//! I/O from the Nth on with EIO, so the error paths (counting, max-errors,
//! the other workers going on, exit code 1) can be proven end to end; or
//! panics while it is built, before its worker is ready; or (io_uring)
//! queues every I/O from the Nth on as one that never completes, so the
//! hang timeout and the leak of what the kernel still holds are proven too;
//! or sends its Nth write with a byte of its block flipped, so a check of
//! the data is proven to find it. Reached only through the hidden
//! `--debug-fail-from N`, `--debug-die-in-setup`, `--debug-hang-from N`
//! and `--debug-corrupt-write N` options.

use std::io;

use super::{Engine, EngineFacts, EngineSpec, SlotToken};
use crate::base::io::Op;

pub struct FaultEngine<E: Engine> {
    inner: E,
    /// 1-based number of the first I/O to fail.
    fail_from: u64,
    /// 1-based number of the first I/O that never completes.
    hang_from: u64,
    issued: u64,
    /// 1-based number of the write sent with a byte flipped.
    corrupt_write: u64,
    writes: u64,
    /// Slots whose I/O was failed instead of issued, not yet reported.
    failed: Vec<SlotToken>,
}

impl<E: Engine> FaultEngine<E> {
    pub fn wrap(inner: E, fail_from: u64, hang_from: u64) -> Self {
        let depth = inner.depth();
        FaultEngine {
            inner,
            fail_from,
            hang_from,
            issued: 0,
            corrupt_write: u64::MAX,
            writes: 0,
            failed: Vec::with_capacity(depth),
        }
    }
}

impl<E: Engine> Engine for FaultEngine<E> {
    type Clock = E::Clock;

    fn create(spec: &EngineSpec) -> Result<(Self, Vec<SlotToken>), String> {
        // A bug in setup, as the coordinator must survive it: the worker's
        // thread ends without saying whether it is ready.
        assert!(
            !spec.die_in_setup,
            "--debug-die-in-setup: the worker dies before it is ready"
        );
        let (inner, slots) = E::create(spec)?;
        let mut engine = FaultEngine::wrap(
            inner,
            spec.fail_from.unwrap_or(u64::MAX),
            spec.hang_from.unwrap_or(u64::MAX),
        );
        engine.corrupt_write = spec.corrupt_write.unwrap_or(u64::MAX);
        Ok((engine, slots))
    }

    fn depth(&self) -> usize {
        self.inner.depth()
    }

    fn queue(&mut self, slot: SlotToken, op: Op, offset: u64, len: usize) {
        self.issued += 1;
        if op == Op::Write {
            self.writes += 1;
            if self.writes == self.corrupt_write {
                // Past a verify header (64 bytes), inside the block's
                // checksum; the last byte of a block shorter than that.
                let buf = self.inner.write_buffer(&slot);
                let at = 100.min(len.saturating_sub(1));
                if let Some(b) = buf.get_mut(at) {
                    *b ^= 0x5a;
                }
            }
        }
        if self.issued >= self.fail_from {
            self.failed.push(slot);
        } else if self.issued >= self.hang_from {
            // An engine that cannot hang an I/O fails it instead (the
            // configuration refuses --debug-hang-from for such engines).
            if let Some(slot) = self.inner.queue_stuck(slot) {
                self.failed.push(slot);
            }
        } else {
            self.inner.queue(slot, op, offset, len);
        }
    }

    fn reap<F: FnMut(SlotToken, io::Result<usize>)>(&mut self, mut done: F) -> io::Result<()> {
        if !self.failed.is_empty() {
            for slot in self.failed.drain(..) {
                done(slot, Err(io::Error::from_raw_os_error(libc::EIO)));
            }
            return Ok(());
        }
        self.inner.reap(done)
    }

    fn reap_within<F: FnMut(SlotToken, io::Result<usize>)>(
        &mut self,
        wait: std::time::Duration,
        done: F,
    ) -> io::Result<()> {
        if !self.failed.is_empty() {
            return self.reap(done);
        }
        self.inner.reap_within(wait, done)
    }

    fn buffer(&mut self, slot: &SlotToken) -> &mut [u8] {
        self.inner.buffer(slot)
    }

    fn write_buffer(&mut self, slot: &SlotToken) -> &mut [u8] {
        self.inner.write_buffer(slot)
    }

    fn describe(&self) -> EngineFacts {
        let mut facts = self.inner.describe();
        let p = &mut facts.path;
        if self.fail_from < u64::MAX {
            p.push_str(&format!(" (failing every I/O from #{} on)", self.fail_from));
        }
        if self.corrupt_write < u64::MAX {
            p.push_str(&format!(
                " (write #{} sent with a byte flipped)",
                self.corrupt_write
            ));
        }
        if self.hang_from < u64::MAX {
            p.push_str(&format!(" (no I/O completes from #{} on)", self.hang_from));
        }
        facts
    }

    fn would_have_blocked(&mut self, slot: &SlotToken) -> bool {
        self.inner.would_have_blocked(slot)
    }

    fn abandon(self) {
        // The failed slots' tokens go; the inner engine's I/O is what hangs.
        self.inner.abandon();
    }
}
