//! The mock engine for the pipeline tests (hyperfine's mock executor): it
//! serves every I/O without touching the target, each one complete a fixed
//! latency after it was queued, on the virtual clock
//! ([`crate::engine::clock::Virtual`]) that it alone moves. A whole run
//! (command line, configuration, plan, workers, documents, reports) then
//! gives figures that follow from the options alone: bytes, I/Os, rates,
//! percentiles and the window's length, on any machine, without root.
//! Reached only through the hidden `--debug-mock-engine LATENCY`.

use std::io;

use super::clock::{Clock, Virtual};
use super::{idle_error, Engine, EngineFacts, EngineId, EngineSpec, SlotToken};
use crate::base::io::Op;
use crate::engine::buffer::AlignedBuf;

pub struct MockEngine {
    /// One buffer per slot (a write's data is stamped into it, a read
    /// leaves it as it was: data, never all zeros); with `write_buffers`, the writes' own after them.
    bufs: Vec<AlignedBuf>,
    depth: usize,
    latency_ns: u64,
    id: EngineId,
    /// What is in flight: each slot's token and when (virtual ns since the
    /// epoch) its I/O completes. At most `depth`, allocated once.
    queued: Vec<(SlotToken, u64, usize)>,
}

impl MockEngine {
    /// Completes, in the order they were queued, every I/O due by now.
    fn complete_due<F: FnMut(SlotToken, io::Result<usize>)>(&mut self, done: &mut F) {
        let now = Virtual::elapsed_ns();
        let mut i = 0;
        while i < self.queued.len() {
            if self.queued[i].1 <= now {
                let (slot, _, len) = self.queued.remove(i);
                done(slot, Ok(len));
            } else {
                i += 1;
            }
        }
    }

    /// When the next I/O in flight completes (virtual ns since the epoch).
    fn next_due(&self) -> Option<u64> {
        self.queued.iter().map(|&(_, at, _)| at).min()
    }
}

impl Engine for MockEngine {
    type Clock = Virtual;

    fn create(spec: &EngineSpec) -> Result<(Self, Vec<SlotToken>), String> {
        let latency = spec
            .mock_latency
            .ok_or("the mock engine needs a latency (--debug-mock-engine)")?;
        let id = EngineId::new();
        let mut bufs = spec.buffers()?;
        if spec.fill_seed.is_none() {
            // What a read "brings back": data, not zeros, or every read of
            // the mock would be counted as one no medium answered
            // (analysis::zeros). Written buffers are filled already.
            for b in &mut bufs {
                b.as_mut_slice().fill(0xA5);
            }
        }
        let engine = MockEngine {
            bufs,
            depth: spec.depth,
            latency_ns: latency.as_nanos().min(u64::MAX as u128) as u64,
            id,
            queued: Vec::with_capacity(spec.depth),
        };
        Ok((engine, id.tokens(spec.depth)))
    }

    fn depth(&self) -> usize {
        self.depth
    }

    fn queue(&mut self, slot: SlotToken, _op: Op, _offset: u64, len: usize) {
        slot.check(self.id);
        let at = Virtual::elapsed_ns().saturating_add(self.latency_ns);
        self.queued.push((slot, at, len));
    }

    fn reap<F: FnMut(SlotToken, io::Result<usize>)>(&mut self, mut done: F) -> io::Result<()> {
        // Time passes until the next completion, as a device's wait would.
        if let Some(at) = self.next_due() {
            Virtual::advance(at.saturating_sub(Virtual::elapsed_ns()));
        }
        self.complete_due(&mut done);
        Ok(())
    }

    fn reap_within<F: FnMut(SlotToken, io::Result<usize>)>(
        &mut self,
        wait: std::time::Duration,
        done: F,
    ) -> io::Result<()> {
        let now = Virtual::elapsed_ns();
        let until = now.saturating_add(wait.as_nanos().min(u64::MAX as u128) as u64);
        match self.next_due() {
            // Nothing completes within the wait: it passes, idle.
            Some(at) if at > until => {
                Virtual::sleep(wait);
                Err(idle_error())
            }
            _ => self.reap(done),
        }
    }

    fn buffer(&mut self, slot: &SlotToken) -> &mut [u8] {
        slot.check(self.id);
        self.bufs[slot.index()].as_mut_slice()
    }

    fn write_buffer(&mut self, slot: &SlotToken) -> &mut [u8] {
        slot.check(self.id);
        let i = if self.bufs.len() > self.depth {
            self.depth + slot.index()
        } else {
            slot.index()
        };
        self.bufs[i].as_mut_slice()
    }

    fn describe(&self) -> EngineFacts {
        EngineFacts {
            path: format!(
                "mock (no device: every I/O completes {} ns after it was queued, on a virtual clock)",
                self.latency_ns
            ),
            buffers: self.bufs[0].facts(),
            ring: None,
            submit_thread: None,
        }
    }

    fn abandon(self) {
        // Nothing is ever in flight anywhere but in `queued`.
        drop(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_io_completes_its_latency_after_it_was_queued() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, [0u8; 4096]).unwrap();
        let mut spec = crate::engine::tests::spec(&path, 4);
        spec.mock_latency = Some(std::time::Duration::from_micros(250));
        let (mut e, mut free) = MockEngine::create(&spec).unwrap();
        Virtual::start(std::time::Instant::now());
        for s in free.drain(..2) {
            e.queue(s, Op::Read, 0, 4096);
        }
        Virtual::advance(100_000);
        e.queue(free.pop().unwrap(), Op::Write, 4096, 4096);
        let mut got = Vec::new();
        e.reap(|s, r| got.push((s.index(), r.unwrap(), Virtual::elapsed_ns())))
            .unwrap();
        assert_eq!(got, vec![(0, 4096, 250_000), (1, 4096, 250_000)]);
        // The third (slot 3, the last token) is due at 350 us: not within 50 us, within 100.
        let idle = e.reap_within(std::time::Duration::from_micros(50), |_, _| {
            panic!("completed early")
        });
        assert!(crate::engine::is_idle(&idle.unwrap_err()));
        assert_eq!(Virtual::elapsed_ns(), 300_000);
        got.clear();
        e.reap_within(std::time::Duration::from_micros(100), |s, r| {
            got.push((s.index(), r.unwrap(), Virtual::elapsed_ns()))
        })
        .unwrap();
        assert_eq!(got, vec![(3, 4096, 350_000)]);
    }
}
