//! `stripebench membw`: the memory-copy ceiling a page-cache read cannot beat.

use anyhow::Result;

use crate::base::error::EXIT_OK;

pub fn run() -> Result<u8> {
    let b = crate::device::cache::memcpy_bandwidth();
    crate::outln!(
        "memory copy, one thread, 64 MiB buffers (best of 5): {:.1} MB/s (10^6 B/s), {:.1} MiB/s",
        b / 1e6,
        b / (1u64 << 20) as f64
    );
    Ok(EXIT_OK)
}
