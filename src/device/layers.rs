//! What holds a block device's bytes, where we can see it, before the
//! first I/O: a device that holds no data for a block answers a read of
//! it with zeros from memory, so its figure is no medium's (a loop device
//! over a sparse 512 MiB file read at 40 GB/s; a never-written zram at
//! 34 GB/s). Two layers are seen:
//!
//! - a loop device (or a partition of one): its backing file, found
//!   through the target's own descriptor (`extent::of_file`, which asks
//!   LOOP_GET_STATUS64 for the file's device and inode and sysfs for its
//!   name), opened without following anyone's planted link
//!   (`base::path::open_unplanted`) and used only if its `st_dev`/`st_ino`
//!   are the loop device's; its holes and unwritten extents over the
//!   region the loop maps (`holes`), offset and size limit included;
//! - zram: `mm_stat`'s `orig_data_size` less its `same_pages` (the bytes
//!   it stores data for) against `disksize`. A page never written, or
//!   written as one repeated word (`same_pages`: zeros, typically), is
//!   kept as no data at all, and a read of it is a fill from memory. zram keeps no map of which pages those are, so the
//!   share is the device's, applied to the region.
//!
//! dm-thin is left alone here (its unprovisioned blocks need the pool's
//! metadata); the sample of what reads return (`analysis::zeros`) sees
//! those, and every other layer, after the fact.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use crate::base::host::Host;
use crate::base::units::fmt_bytes;

use super::extent::{self, Base};

/// What the layer under a block device holds of a region.
#[derive(Debug, Clone, PartialEq)]
pub struct Backing {
    /// The layer, as a sentence names it: "its backing file /tmp/f.img"
    /// (loop), "zram".
    pub layer: String,
    /// The region's length, in bytes.
    pub region: u64,
    /// Bytes of it that hold no data (read as zeros, or a fill, from memory).
    pub empty: u64,
    /// What those bytes are, for the sentence ("holes (never written)").
    pub what: String,
}

/// The layer under the block device open as `file` and what it holds of
/// `[offset, offset + len)`; `None` when the device is neither a loop
/// device over a regular file nor zram, or when the layer cannot be read.
pub fn backing(
    host: &Host,
    file: &File,
    dev: (u64, u64),
    offset: u64,
    len: u64,
) -> Option<Backing> {
    let dir = host.block_dev(dev);
    if dir.join("mm_stat").is_file() {
        return zram(&dir, len);
    }
    let x = extent::of_file(host, file)?;
    let (Base::File(st_dev, st_ino), Some(path)) = (x.base, x.file.as_ref()) else {
        return None;
    };
    let backing = open_backing(path, st_dev, st_ino)?;
    let h = super::holes::of_region(&backing, x.start.saturating_add(offset), len)?;
    let what = match (h.hole_bytes, h.unwritten_bytes) {
        (_, 0) => "holes (never written)".to_string(),
        (0, _) => "unwritten extents (allocated, never written)".to_string(),
        (hb, ub) => format!(
            "holes ({} never written) and unwritten extents ({} allocated, never written)",
            fmt_bytes(hb),
            fmt_bytes(ub)
        ),
    };
    Some(Backing {
        layer: format!("its backing file {}", crate::base::error::show_path(path)),
        region: h.region,
        empty: h.empty_bytes(),
        what,
    })
}

/// The loop device's backing file, by the name sysfs gave, opened for
/// reading only if it is the inode the loop device is over (a name
/// renamed or replaced since is not read) and a regular file.
fn open_backing(path: &Path, st_dev: u64, st_ino: u64) -> Option<File> {
    let handle = crate::base::path::open_unplanted(path).ok()?;
    let st = nix::sys::stat::fstat(handle.as_raw_fd()).ok()?;
    if (st.st_mode & libc::S_IFMT) != libc::S_IFREG {
        return None;
    }
    // Through /proc/self/fd: the very inode checked, not the name again.
    let f = File::open(PathBuf::from(format!(
        "/proc/self/fd/{}",
        handle.as_raw_fd()
    )))
    .ok()?;
    let m = f.metadata().ok()?;
    // Not the loop device's inode (replaced, or an overlay's file that
    // extent::of_file named by its layer's): not checked here; the sample
    // of what reads return still sees zeros.
    ((m.dev(), m.ino()) == (st_dev, st_ino)).then_some(f)
}

/// A zram device's share of pages that hold no data, over a region of `len`.
fn zram(dir: &Path, len: u64) -> Option<Backing> {
    let disksize = read_small(&dir.join("disksize"))?
        .trim()
        .parse::<u64>()
        .ok()?;
    let stat = read_small(&dir.join("mm_stat"))?;
    let fields: Vec<u64> = stat
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // orig_data_size compr_data_size mem_used_total mem_limit mem_used_max same_pages ...
    let (&stored, &same_pages) = (fields.first()?, fields.get(5)?);
    if disksize == 0 {
        return None;
    }
    // SAFETY: sysconf reads a constant of the running system.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as u64,
        _ => 4096,
    };
    // orig_data_size counts the pages of one repeated word too (seen:
    // 64 MiB of zeros written gives orig_data_size 64 MiB and same_pages
    // 16384), though none of their bytes are stored.
    let same = same_pages.saturating_mul(page).min(stored);
    let data = stored - same;
    let empty_share = disksize.saturating_sub(data) as f64 / disksize as f64;
    let never = disksize.saturating_sub(stored);
    Some(Backing {
        layer: "zram".into(),
        region: len,
        empty: ((len as f64) * empty_share).round() as u64,
        what: format!(
            "pages that hold no data (of its {}: {} never written, {} written as one repeated word, such as zeros)",
            fmt_bytes(disksize),
            fmt_bytes(never),
            fmt_bytes(same)
        ),
    })
}

/// A sysfs attribute: a page at most (a fixture tree's file is cut there too).
fn read_small(p: &Path) -> Option<String> {
    let mut s = String::new();
    File::open(p).ok()?.take(4096).read_to_string(&mut s).ok()?;
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_never_written_zram_is_all_empty_and_a_filled_one_is_not() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::write(d.join("disksize"), "67108864\n").unwrap();
        std::fs::write(d.join("mm_stat"), "0 0 0 0 0 0 0 0 0\n").unwrap();
        let b = zram(d, 64 << 20).unwrap();
        assert_eq!((b.region, b.empty), (64 << 20, 64 << 20), "{b:?}");
        assert!(b.what.contains("64.0 MiB never written"), "{}", b.what);
        // 48 MiB written, 16 MiB of it pages of one word (which
        // orig_data_size counts): half holds no data.
        std::fs::write(
            d.join("mm_stat"),
            format!(
                "{} 1000 2000 0 2000 {} 0 0 0\n",
                48 << 20,
                (16 << 20) / 4096
            ),
        )
        .unwrap();
        let b = zram(d, 32 << 20).unwrap();
        assert_eq!(b.empty, 16 << 20, "{b:?}");
        assert!(
            b.what
                .contains("16.0 MiB never written, 16.0 MiB written as one repeated word"),
            "{}",
            b.what
        );
        // Every page written with data: nothing empty.
        std::fs::write(d.join("mm_stat"), format!("{} 1 2 0 2 0 0 0 0\n", 64 << 20)).unwrap();
        assert_eq!(zram(d, 64 << 20).unwrap().empty, 0);
        // Not a number: unknown, not "empty".
        std::fs::write(d.join("mm_stat"), "x y\n").unwrap();
        assert_eq!(zram(d, 1 << 20), None);
    }
}
