//! The page cache around a measured run: cold by default (a buffered read
//! measures the device, not memory), warm on purpose with `--cached`, and
//! the memory-copy bandwidth that bounds what a cached read can reach.

use std::fs::File;
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::base::io::Region;

/// What was done to the page cache before a run: the facts the run
/// document's `cache` (document::run::CacheDoc) is made from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheFacts {
    pub state: CacheState,
    /// How: "fadvise(DONTNEED)", "BLKFLSBUF", "drop_caches", "read once", or
    /// "-" (untouched).
    pub method: &'static str,
    /// Time spent on it, apart from the measured window.
    pub seconds: f64,
    /// With --cached: the machine's single-thread memory-copy bandwidth, the
    /// ceiling of a cached read.
    pub memcpy_bytes_per_sec: Option<f64>,
}

/// The state a run's targets were put in, in the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheState {
    /// The targets' pages dropped.
    Evicted,
    /// Every cache dropped (/proc/sys/vm/drop_caches, `--drop-caches`).
    Dropped,
    /// `--cached`: the regions read once first.
    Preloaded,
    /// O_DIRECT or writes: left as it was.
    Untouched,
}

impl CacheState {
    /// The name the JSON gives it.
    pub fn name(self) -> &'static str {
        match self {
            CacheState::Evicted => "evicted",
            CacheState::Dropped => "dropped",
            CacheState::Preloaded => "preloaded",
            CacheState::Untouched => "untouched",
        }
    }
}

impl CacheFacts {
    /// Nothing done (O_DIRECT, writes).
    pub fn untouched() -> CacheFacts {
        CacheFacts {
            state: CacheState::Untouched,
            method: "-",
            seconds: 0.0,
            memcpy_bytes_per_sec: None,
        }
    }
}

/// Drops every target's pages (or all caches with `drop_all`), timed.
pub fn make_cold(paths: &[PathBuf], drop_all: bool) -> Result<CacheFacts> {
    let t0 = Instant::now();
    let method = if drop_all {
        std::fs::write(crate::base::host::Host::real().drop_caches(), "3").map_err(|e| {
            let drop = crate::base::host::Host::real().drop_caches();
            crate::base::error::UsageError(if crate::base::error::is_root() {
                format!(
                    "--drop-caches: cannot write {}: {e}{}",
                    drop.display(),
                    crate::base::error::node_facts(&drop)
                )
            } else {
                format!(
                    "--drop-caches writes {}, which needs root: {e}",
                    drop.display()
                )
            })
        })?;
        "drop_caches"
    } else {
        // A block device among the targets names the method (BLKFLSBUF).
        let mut m = "fadvise(DONTNEED)";
        for p in paths {
            if crate::device::evict_cache(p)? == "BLKFLSBUF" {
                m = "BLKFLSBUF";
            }
        }
        m
    };
    Ok(CacheFacts {
        state: if drop_all {
            CacheState::Dropped
        } else {
            CacheState::Evicted
        },
        method,
        seconds: t0.elapsed().as_secs_f64(),
        memcpy_bytes_per_sec: None,
    })
}

/// Drops one region of an open file or block device from the page cache
/// (`posix_fadvise(DONTNEED)`; for a block device, its own page cache):
/// what a worker does when a buffered read wraps around its region. Only
/// clean pages go, which is all a read leaves; advice that fails leaves
/// the pages, which the device counters then show.
pub fn evict_range(file: &File, region: Region) {
    use std::os::unix::io::AsRawFd;
    // SAFETY: the fd is open for the call; fadvise only advises the kernel.
    unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            region.offset as libc::off_t,
            region.length as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        )
    };
}

/// Writes `region` of `file`'s dirty pages to the device, waits for them
/// (`sync_file_range`, the region only: not the file's metadata, which the
/// run's final fsync covers), then drops them from the page cache.
pub fn flush_range(file: &File, region: Region) -> std::io::Result<()> {
    use std::os::unix::io::AsRawFd;
    let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE
        | libc::SYNC_FILE_RANGE_WRITE
        | libc::SYNC_FILE_RANGE_WAIT_AFTER;
    // SAFETY: the fd is open for the call; no memory is passed.
    let rc = unsafe {
        libc::sync_file_range(
            file.as_raw_fd(),
            region.offset as libc::off64_t,
            region.length as libc::off64_t,
            flags,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    evict_range(file, region);
    Ok(())
}

/// Reads each target's region once through the page cache (`--cached`).
pub fn preload(targets: &[(PathBuf, Region)]) -> Result<CacheFacts> {
    let t0 = Instant::now();
    let mut buf = vec![0u8; 1 << 20];
    for (p, r) in targets {
        let mut f =
            File::open(p).with_context(|| format!("cannot open {} to pre-read it", p.display()))?;
        std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(r.offset))?;
        let mut left = r.length;
        while left > 0 {
            let n = f.read(&mut buf[..left.min(1 << 20) as usize])?;
            if n == 0 {
                break;
            }
            left -= n as u64;
        }
    }
    Ok(CacheFacts {
        state: CacheState::Preloaded,
        method: "read once",
        seconds: t0.elapsed().as_secs_f64(),
        memcpy_bytes_per_sec: Some(memcpy_bandwidth()),
    })
}

/// Single-thread memory-copy bandwidth in bytes per second: the best of five
/// copies of 64 MiB (larger than the caches), after a warm-up.
pub fn memcpy_bandwidth() -> f64 {
    let n = 64 << 20;
    let src = vec![1u8; n];
    let mut dst = vec![0u8; n];
    dst.copy_from_slice(&src);
    let best = (0..5)
        .map(|_| {
            let t = Instant::now();
            dst.copy_from_slice(std::hint::black_box(&src));
            std::hint::black_box(&dst);
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    n as f64 / best
}

/// Free memory (MemAvailable), to warn when a buffered working set fits in it.
pub fn available_memory() -> Option<u64> {
    meminfo("MemAvailable")
}

/// A `/proc/meminfo` figure in bytes (`MemTotal`, `MemAvailable`, ...).
pub fn meminfo(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string(crate::base::host::Host::real().meminfo()).ok()?;
    let kb: u64 = s
        .lines()
        .find(|l| l.strip_prefix(key).is_some_and(|r| r.starts_with(':')))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memcpy_bandwidth_is_plausible() {
        let b = memcpy_bandwidth();
        assert!(b > 1e8 && b < 1e12, "{b}");
    }
}
