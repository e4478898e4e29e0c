//! Which bytes of a file's region are stored nowhere: holes (a file made
//! with `truncate`, never written there) and unwritten extents (made with
//! `fallocate`: allocated, but read as zeros). A read of either returns
//! zeros without any I/O to a device, so it measures memory, not the disk.
//!
//! Two views are combined, since file systems differ in what they give:
//! `lseek(SEEK_DATA/SEEK_HOLE)` (every Linux file system; ext4 and XFS
//! count an unwritten extent as a hole), and `FS_IOC_FIEMAP` (the extent
//! map, with the `FIEMAP_EXTENT_UNWRITTEN` flag; not on tmpfs).

use std::fs::File;
use std::os::unix::io::AsRawFd;

/// What of a region is not backed by written data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Holes {
    /// The region's length, in bytes.
    pub region: u64,
    /// Bytes in holes (no extent at all).
    pub hole_bytes: u64,
    /// Bytes in unwritten (preallocated) extents.
    pub unwritten_bytes: u64,
}

impl Holes {
    /// Bytes a read would get as zeros without touching a device.
    pub fn empty_bytes(&self) -> u64 {
        self.hole_bytes + self.unwritten_bytes
    }
}

/// `FS_IOC_FIEMAP`'s header (include/uapi/linux/fiemap.h); the extents follow it.
#[repr(C)]
#[derive(Clone, Copy)]
struct FiemapHeader {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FiemapExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

const EXTENTS: usize = 256;

#[repr(C)]
struct Fiemap {
    header: FiemapHeader,
    extents: [FiemapExtent; EXTENTS],
}

const FIEMAP_FLAG_SYNC: u32 = 0x1;
const FIEMAP_EXTENT_LAST: u32 = 0x1;
const FIEMAP_EXTENT_UNWRITTEN: u32 = 0x800;

nix::ioctl_readwrite_bad!(fs_ioc_fiemap, 0xC020_660B, FiemapHeader);

/// Bytes of `[start, end)` covered by `[a, b)`.
fn covered(start: u64, end: u64, a: u64, b: u64) -> u64 {
    b.min(end).saturating_sub(a.max(start))
}

/// (bytes in any extent, bytes in unwritten extents) of `[start, end)`, by
/// the extent map; `None` where the file system gives none.
fn by_fiemap(f: &File, start: u64, end: u64) -> Option<(u64, u64)> {
    let mut map = Box::new(Fiemap {
        header: FiemapHeader {
            fm_start: 0,
            fm_length: 0,
            fm_flags: 0,
            fm_mapped_extents: 0,
            fm_extent_count: 0,
            fm_reserved: 0,
        },
        extents: [FiemapExtent::default(); EXTENTS],
    });
    let (mut mapped, mut unwritten) = (0, 0);
    let mut pos = start;
    // One sync for the first call: delayed allocations get their extents.
    let mut flags = FIEMAP_FLAG_SYNC;
    while pos < end {
        map.header = FiemapHeader {
            fm_start: pos,
            fm_length: end - pos,
            fm_flags: flags,
            fm_mapped_extents: 0,
            fm_extent_count: EXTENTS as u32,
            fm_reserved: 0,
        };
        flags = 0;
        let whole: *mut Fiemap = &mut *map;
        // SAFETY: `whole` points at a live, writable `struct fiemap` followed
        // by room for `fm_extent_count` extents (the pointer covers all of
        // them), as the ioctl requires; the fd is open.
        unsafe { fs_ioc_fiemap(f.as_raw_fd(), whole.cast::<FiemapHeader>()) }.ok()?;
        let n = (map.header.fm_mapped_extents as usize).min(EXTENTS);
        if n == 0 {
            break;
        }
        let mut last = false;
        for e in &map.extents[..n] {
            let (a, b) = (e.fe_logical, e.fe_logical.saturating_add(e.fe_length));
            let c = covered(start, end, a, b);
            mapped += c;
            if e.fe_flags & FIEMAP_EXTENT_UNWRITTEN != 0 {
                unwritten += c;
            }
            last |= e.fe_flags & FIEMAP_EXTENT_LAST != 0;
            pos = pos.max(b);
        }
        if last {
            break;
        }
    }
    Some((mapped, unwritten))
}

/// Bytes of `[start, end)` that `SEEK_DATA`/`SEEK_HOLE` call data.
fn by_seek(f: &File, start: u64, end: u64) -> Option<u64> {
    let fd = f.as_raw_fd();
    let seek = |pos: u64, whence| {
        // SAFETY: lseek on an open fd touches no memory of ours.
        let r = unsafe { libc::lseek(fd, pos as libc::off_t, whence) };
        (r >= 0).then_some(r as u64)
    };
    let mut data = 0;
    let mut pos = start;
    while pos < end {
        let Some(d) = seek(pos, libc::SEEK_DATA) else {
            // ENXIO: no data from here to the end of the file.
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO) {
                break;
            }
            return None;
        };
        if d >= end {
            break;
        }
        let h = seek(d, libc::SEEK_HOLE)?;
        data += covered(start, end, d, h);
        pos = h.max(d + 1);
    }
    Some(data)
}

/// The holes and unwritten extents of `[offset, offset + len)` of `f`;
/// `None` when neither view can be read.
pub fn of_region(f: &File, offset: u64, len: u64) -> Option<Holes> {
    let end = offset.saturating_add(len);
    let seek_data = by_seek(f, offset, end);
    let fiemap = by_fiemap(f, offset, end);
    let (not_data, unwritten) = match (seek_data, fiemap) {
        (None, None) => return None,
        (Some(d), None) => (len - d.min(len), 0),
        (None, Some((m, u))) => (len - m.min(len) + u, u),
        // The larger of the two: ext4 counts an unwritten extent as a hole
        // for SEEK_DATA, and FIEMAP names it unwritten.
        (Some(d), Some((m, u))) => ((len - d.min(len)).max(len - m.min(len) + u), u),
    };
    let not_data = not_data.min(len);
    Some(Holes {
        region: len,
        hole_bytes: not_data - unwritten.min(not_data),
        unwritten_bytes: unwritten.min(not_data),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::FileExt;

    #[test]
    fn a_truncated_file_is_all_holes_and_a_written_one_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sparse");
        let f = File::create(&p).unwrap();
        f.set_len(8 << 20).unwrap();
        let h = of_region(&File::open(&p).unwrap(), 0, 8 << 20).unwrap();
        assert_eq!(h.empty_bytes(), 8 << 20, "{h:?}");
        // Half written: the other half is still a hole.
        f.write_all_at(&vec![7u8; 4 << 20], 0).unwrap();
        f.sync_all().unwrap();
        let h = of_region(&File::open(&p).unwrap(), 0, 8 << 20).unwrap();
        assert_eq!(h.empty_bytes(), 4 << 20, "{h:?}");
        let h = of_region(&File::open(&p).unwrap(), 0, 4 << 20).unwrap();
        assert_eq!(h.empty_bytes(), 0, "{h:?}");
        let full = dir.path().join("full");
        File::create(&full)
            .unwrap()
            .write_all(&vec![1u8; 1 << 20])
            .unwrap();
        let h = of_region(&File::open(&full).unwrap(), 0, 1 << 20).unwrap();
        assert_eq!(
            h,
            Holes {
                region: 1 << 20,
                ..Holes::default()
            }
        );
    }
}
