//! Engines: how an I/O is issued. A worker owns one engine and asks it to move
//! one request at a time; the engine knows nothing of timing or statistics.
//!
//! `sync` issues pread/pwrite with one I/O in flight.

pub mod sync;

use std::io;

use crate::workload::Op;

/// Issues I/O against one open target.
pub trait Engine {
    /// Moves `buf.len()` bytes at `offset` in direction `op`; returns the bytes
    /// transferred (fewer than asked is a short I/O, not an error).
    fn io(&mut self, op: Op, buf: &mut [u8], offset: u64) -> io::Result<usize>;
}

pub use sync::SyncEngine;
