//! Engines: how I/O is issued. A worker owns one engine; the engine owns the
//! worker's aligned buffers (one per slot, allocated once) and knows nothing
//! of timing or statistics.
//!
//! The interface is the same for one I/O in flight and for many: the worker
//! `queue`s an I/O on a free slot, then `reap` issues what was queued and
//! hands back every completion that is ready, at least one.
//!
//! - `sync`: pread/pwrite, one slot; `reap` performs the queued I/O.
//! - `uring`: io_uring with `--iodepth` slots, submitted and reaped in batches,
//!   with registered buffers and file when the kernel and memlock allow.

pub mod buffer;
pub mod fault;
pub mod sync;
pub mod uring;
pub mod writedata;

use std::fs::File;
use std::io;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::base::io::Op;
use crate::engine::buffer::AlignedBuf;

pub use fault::FaultEngine;
pub use sync::SyncEngine;
pub use uring::UringEngine;

/// Which engine a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Sync,
    Uring,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Sync => "sync",
            EngineKind::Uring => "uring",
        }
    }
}

/// What an engine is built from, inside the worker's (pinned) thread.
#[derive(Debug, Clone)]
pub struct EngineSpec {
    pub file: Arc<File>,
    pub bs: usize,
    pub depth: usize,
    pub align: usize,
    /// Fill the buffers with data from this seed (for writes).
    pub fill_seed: Option<u64>,
    /// `--buffer-compress`: the share of each 4 KiB unit of write data that is zeros.
    pub compress_pct: u8,
    /// Reads and writes mixed (randrw): each slot gets a second buffer that
    /// only writes use, so a write never sends what a read left behind.
    pub write_buffers: bool,
    /// Try registered buffers and files (io_uring).
    pub register: bool,
    /// Tests only (`--debug-fail-from`): fail every I/O from this one on.
    pub fail_from: Option<u64>,
}

impl EngineSpec {
    /// One aligned buffer per slot, filled for writes; with `write_buffers`,
    /// `depth` more after them, the slots' write buffers.
    pub fn buffers(&self) -> Result<Vec<AlignedBuf>, String> {
        let n = if self.write_buffers {
            2 * self.depth
        } else {
            self.depth
        };
        (0..n)
            .map(|_| {
                let mut b = AlignedBuf::new(self.bs, self.align).ok_or_else(|| {
                    format!(
                        "could not allocate a {}-byte I/O buffer: try a smaller --bs or --iodepth",
                        self.bs
                    )
                })?;
                if let Some(seed) = self.fill_seed {
                    // Data reproducible from the seed (incompressible unless
                    // --buffer-compress asks otherwise), the same in every
                    // slot: what lands at an offset does not depend on the
                    // engine or on which slot carried it. The worker stamps
                    // each block before it is written (crate::engine::writedata).
                    crate::engine::writedata::fill(b.as_mut_slice(), seed, self.compress_pct);
                }
                Ok(b)
            })
            .collect()
    }
}

/// Issues I/O against one open target.
pub trait Engine: Sized {
    /// Builds the engine and its buffers. Runs in the worker's thread, after pinning.
    fn create(spec: &EngineSpec) -> Result<Self, String>;

    /// Slots: how many I/Os can be in flight at once.
    fn depth(&self) -> usize;

    /// Queues one I/O on `slot`'s buffer. It is issued by the next `reap`.
    /// `slot` must be free (its previous I/O completed).
    fn queue(&mut self, slot: usize, op: Op, offset: u64);

    /// Issues what was queued, waits for at least one completion, and calls
    /// `done(slot, result)` for every completion ready. A result is the bytes
    /// transferred (fewer than asked is a short I/O) or the I/O's error.
    /// An `Err` return means the engine itself failed.
    fn reap<F: FnMut(usize, io::Result<usize>)>(&mut self, done: F) -> io::Result<()>;

    /// The buffer of `slot`, to fill before a write is queued or to read
    /// after its read completed (never while its I/O is in flight).
    fn buffer(&mut self, slot: usize) -> &mut [u8];

    /// The buffer a write on `slot` sends: `buffer(slot)`, or the slot's
    /// own write buffer when the spec asked for `write_buffers`. Same rule:
    /// never while the slot's I/O is in flight.
    fn write_buffer(&mut self, slot: usize) -> &mut [u8];

    /// How I/O is issued, for the report (e.g. "io_uring, registered buffers and file").
    fn path(&self) -> String;
}
