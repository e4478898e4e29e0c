//! Layer `device`: targets and the machine around them: what a path is and
//! where its bytes live (`extent`), the write guard (`guard`), opening with
//! the right flags (`open`), device counters and queue limits (`devstat`,
//! `queue`), the page cache (`cache`), sysfs settings and their restore
//! (`knobs`, `state`), scratch files (`scratch`), the stack under a target
//! (`topology`), which members share a host adapter (`paths`), holes and unwritten extents in a file (`holes`), what
//! the layer under a loop or zram device holds (`layers`); the
//! checks a run makes with them: targets that overlap (`overlap`), reads of
//! holes (`hole_guard`), request sizes (`requests`), read-ahead
//! (`readahead`), md raid4/5/6's tunables (`md_tunables`), an array's resync now (`mdstat`) and over a run (`resync`), stripe geometry and members (`stripes`), a test file's
//! size (`test_file`).
//!
//! Imports only `base`: no engine, measurement, document or report.

pub mod cache;
pub mod cpuinfo;
pub mod devstat;
pub mod extent;
pub mod fs_hints;
pub mod guard;
pub mod hole_guard;
pub mod holes;
pub mod host_facts;
pub mod identity;
pub mod knobs;
pub mod layers;
pub mod md_tunables;
pub mod mdstat;
pub mod overlap;
pub mod paths;
pub mod queue;
pub mod readahead;
pub mod requests;
pub mod resync;
pub mod scratch;
pub mod state;
pub mod stripes;
pub mod survey;
pub mod sysattr;
pub mod sysfs;
pub mod test_file;
pub mod topology;

mod open;

pub use open::{inspect, open, Inspected, OpenError};
use std::fs::{self, File};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
pub use sysfs::{dev_numbers, sysfs_name};

use anyhow::Result;

/// What kind of thing a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    Block,
    File,
}

/// How a target will be used.
#[derive(Debug, Clone, Copy, Default)]
pub struct Access {
    pub direct: bool,
    pub write: bool,
    pub allow_destructive: bool,
    /// The file was created by stripebench for this run (the built-in test bed).
    pub owned: bool,
    /// Write even over a recognised signature (`--force-signature`).
    pub force_signature: bool,
    /// Only check and report (`--dry-run`): open read-only, refuse nothing.
    pub dry_run: bool,
    /// `--fill-device`: a file is written until its file system is full,
    /// so an empty one is a target too (fio grows it from nothing).
    pub fill: bool,
}

/// An opened target and what was learned about it.
#[derive(Debug)]
pub struct Target {
    pub path: PathBuf,
    pub kind: TargetKind,
    pub file: File,
    pub size: u64,
    /// The alignment O_DIRECT needs for offsets and lengths: the logical block
    /// size of a device, or the file system's direct-I/O alignment for a file.
    pub logical_block_size: u64,
    /// The block device holding the data (`major`, `minor`), when there is one.
    pub device: Option<(u64, u64)>,
    /// Its kernel name (`loop0`, `vda`), when sysfs knows it.
    pub device_name: Option<String>,
    /// The host adapter it is behind (`paths::adapter`: a PCI function, or
    /// a SAS expander), when it is a disk behind one.
    pub adapter: Option<String>,
    /// Who the disk is (`identity`), whatever its name today.
    pub identity: Option<identity::DiskIdentity>,
    /// The write guard's checks (empty for reads and for files).
    pub checks: Vec<guard::Check>,
    /// The device's read-ahead when the target was opened, in KiB.
    pub read_ahead_kb: Option<u64>,
    /// Chunk and member count, when the target is a striped volume.
    pub stripe: Option<StripeGeometry>,
    /// A block device the kernel would not open `O_NOATIME` (the node is
    /// not the user's, and no CAP_FOWNER): every read checks its atime.
    pub atime_checked: bool,
}

/// How a striped volume lays data out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StripeGeometry {
    pub chunk: u64,
    pub members: u64,
}

impl StripeGeometry {
    /// A full stripe: one chunk on every member.
    pub fn width(&self) -> u64 {
        self.chunk * self.members
    }
}

nix::ioctl_read!(blkgetsize64, 0x12, 114, u64);
nix::ioctl_read_bad!(blksszget, 0x1268, libc::c_int);
nix::ioctl_none_bad!(blkflsbuf, 0x1261);

/// Drops a target's pages from the page cache, so the next buffered read
/// reaches the device: BLKFLSBUF for a block device, fadvise(DONTNEED) for a
/// file (after an fsync, so dirty pages can go too). Returns the method used.
pub fn evict_cache(path: &Path) -> Result<&'static str> {
    let f = File::open(path)
        .map_err(|e| anyhow::anyhow!("cannot open {} to evict its cache: {e}", path.display()))?;
    let meta = f.metadata()?;
    if meta.file_type().is_block_device() {
        // SAFETY: the fd is open; BLKFLSBUF takes no argument.
        unsafe { blkflsbuf(f.as_raw_fd()) }.map_err(|e| {
            anyhow::anyhow!(
                "cannot flush the cache of {}{}: {e}",
                crate::base::error::show_path(path),
                if crate::base::error::is_root() {
                    " (BLKFLSBUF)"
                } else {
                    " (BLKFLSBUF needs root)"
                }
            )
        })?;
        Ok("BLKFLSBUF")
    } else {
        let _ = f.sync_all();
        // SAFETY: the fd is open; fadvise only advises the kernel.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        Ok("fadvise(DONTNEED)")
    }
}

/// The paths a command must never write a report over: the targets and
/// the files behind them (a loop device's image, at any depth).
pub fn protected_paths(paths: &[PathBuf]) -> Vec<PathBuf> {
    let sys = crate::base::host::Host::real();
    let mut out: Vec<PathBuf> = paths.to_vec();
    out.extend(
        paths
            .iter()
            .filter_map(|p| extent::of_path(&sys, p)?.file)
            .filter(|f| f.is_file()),
    );
    out
}

/// The file system's O_DIRECT offset alignment (`statx` STATX_DIOALIGN, Linux 6.1+).
fn dio_offset_align(file: &File) -> Option<u64> {
    // SAFETY: statx fills the zeroed struct we pass; the empty path with
    // AT_EMPTY_PATH refers to the open fd itself.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if rc == 0 && stx.stx_mask & libc::STATX_DIOALIGN != 0 && stx.stx_dio_offset_align > 0 {
        Some(u64::from(stx.stx_dio_offset_align))
    } else {
        None
    }
}

/// The logical block size of device `major:minor` from sysfs (a partition's
/// queue is its parent's).
pub fn sysfs_lbs(sysfs: &Path, (major, minor): (u64, u64)) -> Option<u64> {
    let dev = sysfs.join(format!("dev/block/{major}:{minor}"));
    [
        dev.join("queue/logical_block_size"),
        dev.join("../queue/logical_block_size"),
    ]
    .iter()
    .find_map(|p| fs::read_to_string(p).ok()?.trim().parse().ok())
}

/// The most bytes device `major:minor` discards in one request
/// (`queue/discard_max_bytes`; a partition's queue is its parent's): 0
/// when it cannot discard at all.
pub fn sysfs_discard_max(sysfs: &Path, (major, minor): (u64, u64)) -> Option<u64> {
    let dev = sysfs.join(format!("dev/block/{major}:{minor}"));
    [
        dev.join("queue/discard_max_bytes"),
        dev.join("../queue/discard_max_bytes"),
    ]
    .iter()
    .find_map(|p| fs::read_to_string(p).ok()?.trim().parse().ok())
}

/// The `read_ahead_kb` file that governs device `major:minor` (a partition's
/// is its disk's).
pub fn readahead_path(sysfs: &Path, (major, minor): (u64, u64)) -> Option<PathBuf> {
    let dev = sysfs.join(format!("dev/block/{major}:{minor}"));
    [
        dev.join("queue/read_ahead_kb"),
        dev.join("../queue/read_ahead_kb"),
    ]
    .into_iter()
    .find(|p| p.exists())
}

/// The `read_ahead_kb` file that governs reads of `path` (a device, or a
/// file on a device-backed file system), if there is one.
pub fn readahead_knob(path: &Path) -> Option<PathBuf> {
    device_of(path).and_then(|d| readahead_path(&crate::base::host::Host::real().sys, d))
}

/// The device whose read-ahead applies to `path`: the device itself, or the
/// one under a file's file system.
pub fn device_of(path: &Path) -> Option<(u64, u64)> {
    fs::metadata(path).ok().map(|m| device_in(&m))
}

/// As [`device_of`], for a file already open: checks what was opened,
/// not a name resolved again.
pub fn device_of_file(file: &File) -> Option<(u64, u64)> {
    file.metadata().ok().map(|m| device_in(&m))
}

/// The device a block device's or a file's metadata names.
fn device_in(m: &fs::Metadata) -> (u64, u64) {
    dev_numbers(if m.file_type().is_block_device() {
        m.rdev()
    } else {
        m.dev()
    })
}

/// The memory file system a file lives on (`tmpfs`, `ramfs`), if it does:
/// such a target has no device, and even O_DIRECT I/O on it is a memory copy.
pub fn memory_fs(file: &File) -> Option<&'static str> {
    // ramfs's magic (linux/magic.h), which nix does not name.
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    // A block device's node lives on devtmpfs (tmpfs's magic): its data
    // does not. Only a regular file's file system holds its bytes.
    if !file.metadata().ok()?.file_type().is_file() {
        return None;
    }
    let st = nix::sys::statfs::fstatfs(file).ok()?;
    let t = st.filesystem_type();
    if t == nix::sys::statfs::TMPFS_MAGIC {
        Some("tmpfs")
    } else if t.0 as i64 == RAMFS_MAGIC {
        Some("ramfs")
    } else {
        None
    }
}

/// Whether `file`'s bytes live in RAM and every I/O on it is CPU work: a
/// file on tmpfs or ramfs, a zram device, or a brd RAM disk (`/dev/ramN`,
/// block major 1). Not a device that is merely fast: one with a queue of
/// its own, where I/Os overlap in time.
pub fn ram_backed(file: &File) -> bool {
    if memory_fs(file).is_some() {
        return true;
    }
    let Ok(m) = file.metadata() else {
        return false;
    };
    if !m.file_type().is_block_device() {
        return false;
    }
    let (major, minor) = dev_numbers(m.rdev());
    // RAMDISK_MAJOR (include/uapi/linux/major.h); zram's major is given
    // out at load time, so its kernel name says what it is.
    major == 1
        || sysfs::sysfs_name(&crate::base::host::Host::real().sys, major, minor)
            .is_some_and(|n| n.starts_with("zram"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ram_backed_is_a_tmpfs_file_not_a_disk_file_or_a_character_device() {
        let disk = tempfile::NamedTempFile::new_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let on_disk = memory_fs(disk.as_file()).is_none();
        assert_eq!(ram_backed(disk.as_file()), !on_disk);
        assert!(!ram_backed(&File::open("/dev/null").unwrap()));
        if Path::new("/dev/shm").is_dir() {
            let shm = tempfile::NamedTempFile::new_in("/dev/shm").unwrap();
            assert!(ram_backed(shm.as_file()));
        }
    }

    fn read_access() -> Access {
        Access::default()
    }

    fn msg(r: Result<Target>) -> String {
        r.unwrap_err()
            .downcast::<OpenError>()
            .expect("a usage error")
            .to_string()
    }

    #[test]
    fn missing_directory_and_empty_targets_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(msg(open(&dir.path().join("nope"), read_access())).contains("does not exist"));
        assert!(msg(open(dir.path(), read_access())).contains("is a directory"));
        let empty = dir.path().join("empty");
        fs::write(&empty, b"").unwrap();
        assert!(msg(open(&empty, read_access())).contains("is empty"));
        assert!(msg(open(Path::new("/dev/null"), read_access())).contains("neither"));
    }

    #[test]
    fn writes_to_foreign_files_need_consent() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("data");
        fs::write(&f, vec![1u8; 8192]).unwrap();
        let mut a = read_access();
        a.write = true;
        assert!(msg(open(&f, a)).contains("--allow-destructive"));
        a.owned = true;
        assert!(open(&f, a).is_ok());
        a.owned = false;
        a.allow_destructive = true;
        let t = open(&f, a).unwrap();
        assert_eq!(t.size, 8192);
        assert_eq!(t.kind, TargetKind::File);
        assert!(t.logical_block_size >= 512);
    }

    #[test]
    fn sysfs_fixture_lookups() {
        let dir = tempfile::tempdir().unwrap();
        let sys = dir.path();
        fs::create_dir_all(sys.join("devices/virtual/block/sdz/sdz1")).unwrap();
        fs::create_dir_all(sys.join("devices/virtual/block/sdz/queue")).unwrap();
        fs::write(
            sys.join("devices/virtual/block/sdz/queue/logical_block_size"),
            "4096\n",
        )
        .unwrap();
        fs::create_dir_all(sys.join("dev/block")).unwrap();
        std::os::unix::fs::symlink(
            "../../devices/virtual/block/sdz/sdz1",
            sys.join("dev/block/8:1"),
        )
        .unwrap();
        assert_eq!(sysfs_name(sys, 8, 1).as_deref(), Some("sdz1"));
        assert_eq!(sysfs_lbs(sys, (8, 1)), Some(4096));
        assert_eq!(sysfs_name(sys, 8, 2), None);
        // A partition's discard limit is its disk's; none known: None.
        assert_eq!(sysfs_discard_max(sys, (8, 1)), None);
        fs::write(
            sys.join("devices/virtual/block/sdz/queue/discard_max_bytes"),
            "0\n",
        )
        .unwrap();
        assert_eq!(sysfs_discard_max(sys, (8, 1)), Some(0));
    }
}
