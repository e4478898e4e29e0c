//! Where a target's bytes really live. Two names can reach the same bytes:
//! a partition and its disk, two loop devices over one image (one of them
//! with `-o OFFSET --sizelimit`), a loop device and its backing file, two
//! hard links. Each target is resolved down to a *base* (a whole block
//! device, or a regular file by its inode) and a byte range on it, through
//! partitions (`start` in sysfs) and loop devices (`loop/backing_file`,
//! `offset`, `sizelimit`, and the backing inode from `LOOP_GET_STATUS64`).
//! Two extents on one base that overlap are the same data.
//!
//! A target is resolved from its open descriptor ([`of_file`]): `fstat` for
//! a file's device and inode, `st_rdev` for a device's numbers, and the
//! descriptor's own LOOP_GET_STATUS64 for a loop device's backing file, so
//! what is resolved is what was opened, whatever the name points at by now.

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

type Dev = (u64, u64);

/// What the bytes are stored on, at the bottom of the stack we can see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Base {
    /// A whole block device that is neither a partition nor a loop device.
    Disk(Dev),
    /// A regular file: (`st_dev`, `st_ino`).
    File(u64, u64),
}

/// A byte range on a base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extent {
    pub base: Base,
    pub start: u64,
    /// Bytes; `u64::MAX - start` when unbounded (a loop to the end of its file).
    pub len: u64,
    /// The regular file at the bottom, when there is one (a loop device's image).
    pub file: Option<PathBuf>,
}

impl Extent {
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.len)
    }

    pub fn overlaps(&self, other: &Extent) -> bool {
        self.base == other.base && self.start < other.end() && other.start < self.end()
    }
}

/// Where sysfs and `/dev` are (fixture trees in tests): the one host handle.
pub use crate::base::host::Host;

/// The kernel's `struct loop_info64` (include/uapi/linux/loop.h).
#[repr(C)]
pub struct LoopInfo64 {
    pub lo_device: u64,
    pub lo_inode: u64,
    pub lo_rdevice: u64,
    pub lo_offset: u64,
    pub lo_sizelimit: u64,
    pub lo_number: u32,
    pub lo_encrypt_type: u32,
    pub lo_encrypt_key_size: u32,
    pub lo_flags: u32,
    pub lo_file_name: [u8; 64],
    pub lo_crypt_name: [u8; 64],
    pub lo_encrypt_key: [u8; 32],
    pub lo_init: [u64; 2],
}

nix::ioctl_read_bad!(loop_get_status64, 0x4C05, LoopInfo64);

fn read_u64(p: &Path) -> Option<u64> {
    fs::read_to_string(p).ok()?.trim().parse().ok()
}

/// A text attribute of at most `max` bytes; `None` when longer or unreadable.
fn read_bounded(p: &Path, max: u64) -> Option<String> {
    use std::io::Read;
    let mut s = String::new();
    fs::File::open(p)
        .ok()?
        .take(max + 1)
        .read_to_string(&mut s)
        .ok()?;
    (s.len() as u64 <= max).then_some(s)
}

fn read_dev(p: &Path) -> Option<Dev> {
    let s = fs::read_to_string(p).ok()?;
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The extent of a target path: a block device or a regular file. Path
/// based: for what a command protects from its outputs; a target being
/// written is resolved through its descriptor ([`of_file`]).
pub fn of_path(sys: &Host, path: &Path) -> Option<Extent> {
    use std::os::unix::fs::OpenOptionsExt;
    let ft = fs::metadata(path).ok()?.file_type();
    if !ft.is_block_device() && !ft.is_file() {
        return None;
    }
    // Non-blocking: a FIFO swapped in since cannot hold the open.
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    of_file(sys, &f)
}

/// The extent of an open target, from the descriptor alone: its `fstat`
/// (a file's device and inode, a device's `st_rdev`), and for a loop
/// device the descriptor's own LOOP_GET_STATUS64. The name it was opened by
/// is never looked up again (a symlink flipped after the open cannot make
/// this describe another file than the one opened).
pub fn of_file(sys: &Host, f: &fs::File) -> Option<Extent> {
    let m = f.metadata().ok()?;
    if m.file_type().is_block_device() {
        let dev = super::sysfs::dev_numbers(m.rdev());
        let dir = sys.block_dev(dev);
        let len = read_u64(&dir.join("size"))? * 512;
        resolve(sys, dev, 0, len, 0, Some(f))
    } else if m.file_type().is_file() {
        // The kernel's name of the open file: for messages, and to find the
        // layer that holds it when it is on an overlay.
        let name = fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())).ok();
        let (dev, ino) = match &name {
            Some(n) => layer_file(sys, n, m.dev(), m.ino()),
            None => (m.dev(), m.ino()),
        };
        Some(Extent {
            base: Base::File(dev, ino),
            start: 0,
            len: m.len(),
            file: name,
        })
    } else {
        None
    }
}

/// The extent of block device `dev`, followed down through partitions and loops.
pub fn of_device(sys: &Host, dev: Dev) -> Option<Extent> {
    let dir = sys.block_dev(dev);
    let len = read_u64(&dir.join("size"))? * 512;
    resolve(sys, dev, 0, len, 0, None)
}

/// `[start, start+len)` of device `dev`, as an extent on its base. `own` is
/// an open descriptor of `dev` itself, asked in place of its `/dev` node.
fn resolve(
    sys: &Host,
    dev: Dev,
    start: u64,
    len: u64,
    depth: u32,
    own: Option<&fs::File>,
) -> Option<Extent> {
    let disk = Extent {
        base: Base::Disk(dev),
        start,
        len,
        file: None,
    };
    if depth > 8 {
        return Some(disk);
    }
    let dir = sys.block_dev(dev);
    if dir.join("partition").exists() {
        let first = read_u64(&dir.join("start"))? * 512;
        let real = fs::canonicalize(&dir).ok()?;
        let parent = read_dev(&real.parent()?.join("dev"))?;
        return resolve(sys, parent, first + start, len, depth + 1, None);
    }
    let lo = dir.join("loop");
    if !lo.is_dir() {
        return Some(disk);
    }
    // A name of the kernel's, but any user's file name: read a path's
    // worth at most (sysfs gives a page), refused when longer.
    let backing = read_bounded(&lo.join("backing_file"), libc::PATH_MAX as u64 + 16)?;
    let backing = PathBuf::from(
        backing
            .trim_end_matches('\n')
            .trim_end_matches(" (deleted)"),
    );
    // The backing file by inode, as the kernel tells it (a renamed or
    // replaced path still finds the right file): through the target's own
    // descriptor, or else through the device's node; by its path only when
    // neither answers.
    let info = match own {
        Some(f) => loop_status(f),
        None => fs::read_to_string(dir.join("uevent"))
            .ok()
            .and_then(|u| {
                u.lines()
                    .find_map(|l| l.strip_prefix("DEVNAME=").map(str::to_string))
            })
            .and_then(|n| loop_status(&fs::File::open(sys.dev.join(n)).ok()?)),
    };
    if let Some(i) = info {
        if i.rdev != 0 {
            // A loop over a block device.
            return resolve(
                sys,
                i.rdev_numbers(),
                i.offset + start,
                len,
                depth + 1,
                None,
            );
        }
        let (dev, ino) = layer_file(sys, &backing, i.dev, i.ino);
        return Some(Extent {
            base: Base::File(dev, ino),
            start: i.offset + start,
            len,
            file: Some(backing),
        });
    }
    let offset = read_u64(&lo.join("offset")).unwrap_or(0);
    let Ok(m) = fs::metadata(&backing) else {
        return Some(disk);
    };
    if m.file_type().is_block_device() {
        let under = super::sysfs::dev_numbers(m.rdev());
        return resolve(sys, under, offset + start, len, depth + 1, None);
    }
    let (dev, ino) = layer_file(sys, &backing, m.dev(), m.ino());
    Some(Extent {
        base: Base::File(dev, ino),
        start: offset + start,
        len,
        file: Some(backing),
    })
}

/// A file seen through an overlayfs mount carries the overlay's device
/// number, while the same bytes sit in a layer's file system under another:
/// a loop over `merged/img` and a write to `upper/img` reach one file. Files
/// are named by the layer file that holds them (the upper layer first), so
/// both names resolve alike. Anything else is returned as it is.
fn layer_file(sys: &Host, path: &Path, dev: u64, ino: u64) -> (u64, u64) {
    let numbers = super::sysfs::dev_numbers(dev);
    for m in super::sysfs::mounts(&sys.mountinfo()) {
        if m.fstype != "overlay" || m.dev != numbers {
            continue;
        }
        let Ok(rel) = path.strip_prefix(&m.at) else {
            continue;
        };
        let mut layers: Vec<String> = Vec::new();
        for o in m.options.split(',') {
            if let Some(u) = o.strip_prefix("upperdir=") {
                layers.insert(0, super::sysfs::unescape_mount(u));
            } else if let Some(l) = o.strip_prefix("lowerdir=") {
                layers.extend(l.split(':').map(super::sysfs::unescape_mount));
            }
        }
        for layer in layers {
            // Not following links: a symlink in a layer is not the file's bytes.
            if let Ok(lm) = fs::symlink_metadata(Path::new(&layer).join(rel)) {
                if lm.file_type().is_file() {
                    return (lm.dev(), lm.ino());
                }
            }
        }
    }
    (dev, ino)
}

/// What LOOP_GET_STATUS64 says of a loop device's backing file.
struct LoopStatus {
    /// The backing file's `st_dev` (as `makedev` makes it) and `st_ino`.
    dev: u64,
    ino: u64,
    /// Its `st_rdev`, kernel-encoded: not 0 when the backing is a block device.
    rdev: u64,
    offset: u64,
}

impl LoopStatus {
    fn rdev_numbers(&self) -> Dev {
        decode_dev(self.rdev)
    }
}

/// The kernel encodes the loop_info64 device numbers with new_encode_dev().
fn decode_dev(d: u64) -> Dev {
    ((d & 0xfff00) >> 8, (d & 0xff) | ((d >> 12) & 0xfff00))
}

/// The backing file of the loop device open as `f`, from LOOP_GET_STATUS64.
fn loop_status(f: &fs::File) -> Option<LoopStatus> {
    // SAFETY: LoopInfo64 is plain old data; all-zero is a valid value.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: the fd is open; the ioctl fills the struct we own.
    unsafe { loop_get_status64(f.as_raw_fd(), &mut info) }.ok()?;
    let (major, minor) = decode_dev(info.lo_device);
    Some(LoopStatus {
        dev: libc::makedev(major as u32, minor as u32),
        ino: info.lo_inode,
        rdev: info.lo_rdevice,
        offset: info.lo_offset,
    })
}

/// Every block device (disks, partitions, loops) whose bytes overlap `e`,
/// but `except`: (name, numbers, extent).
pub fn aliases(sys: &Host, e: &Extent, except: Option<Dev>) -> Vec<(String, Dev, Extent)> {
    let Ok(rd) = fs::read_dir(sys.class_block()) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Dev, Extent)> = rd
        .flatten()
        .filter_map(|d| {
            let name = d.file_name().to_string_lossy().into_owned();
            let dev = read_dev(&d.path().join("dev"))?;
            if Some(dev) == except {
                return None;
            }
            let x = of_device(sys, dev)?;
            x.overlaps(e).then_some((name, dev, x))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixture sysfs: `loop1` over `img` (whole), `loop2` over `img` from
    /// 1 MiB for 1 MiB, `loop1p1` a partition of loop1 at 2048 sectors,
    /// `vdb` a plain disk.
    fn fixture() -> (tempfile::TempDir, Host, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let img = root.join("img");
        fs::write(&img, vec![0u8; 4 << 20]).unwrap();
        let devices = root.join("sys/devices/virtual/block");
        let mk = |rel: &str, dev: &str, size_sectors: u64| {
            let d = devices.join(rel);
            fs::create_dir_all(&d).unwrap();
            fs::write(d.join("dev"), format!("{dev}\n")).unwrap();
            fs::write(d.join("size"), format!("{size_sectors}\n")).unwrap();
            let name = Path::new(rel).file_name().unwrap();
            fs::write(
                d.join("uevent"),
                format!("DEVNAME={}\n", name.to_string_lossy()),
            )
            .unwrap();
            let cls = root.join("sys/class/block");
            fs::create_dir_all(&cls).unwrap();
            std::os::unix::fs::symlink(&d, cls.join(name)).unwrap();
            let db = root.join("sys/dev/block");
            fs::create_dir_all(&db).unwrap();
            std::os::unix::fs::symlink(&d, db.join(dev)).unwrap();
            d
        };
        let l1 = mk("loop1", "7:1", 8192);
        fs::create_dir_all(l1.join("loop")).unwrap();
        fs::write(l1.join("loop/backing_file"), format!("{}\n", img.display())).unwrap();
        fs::write(l1.join("loop/offset"), "0\n").unwrap();
        let l2 = mk("loop2", "7:2", 2048);
        fs::create_dir_all(l2.join("loop")).unwrap();
        fs::write(l2.join("loop/backing_file"), format!("{}\n", img.display())).unwrap();
        fs::write(l2.join("loop/offset"), "1048576\n").unwrap();
        let p1 = mk("loop1/loop1p1", "259:0", 2048);
        fs::write(p1.join("partition"), "1\n").unwrap();
        fs::write(p1.join("start"), "2048\n").unwrap();
        mk("vdb", "254:16", 1000);
        // No dev/ in the tree: loops are learned from sysfs alone.
        let sys = Host::fixture(root);
        (t, sys, img)
    }

    #[test]
    fn a_partition_of_a_loop_resolves_to_its_image_range() {
        let (_t, sys, img) = fixture();
        let m = fs::metadata(&img).unwrap();
        let p = of_device(&sys, (259, 0)).unwrap();
        assert_eq!(p.base, Base::File(m.dev(), m.ino()));
        assert_eq!((p.start, p.len), (1 << 20, 1 << 20));
        assert_eq!(p.file.as_deref(), Some(img.as_path()));
    }

    #[test]
    fn an_offset_loop_over_the_same_image_is_an_alias() {
        let (_t, sys, img) = fixture();
        let l2 = of_device(&sys, (7, 2)).unwrap();
        let names: Vec<String> = aliases(&sys, &l2, Some((7, 2)))
            .into_iter()
            .map(|a| a.0)
            .collect();
        assert_eq!(names, ["loop1", "loop1p1"]);
        // The image file itself, as a file target, has both loops over it.
        let f = of_path(&sys, &img).unwrap();
        let names: Vec<String> = aliases(&sys, &f, None).into_iter().map(|a| a.0).collect();
        assert_eq!(names, ["loop1", "loop1p1", "loop2"]);
        // A plain disk aliases nothing but itself.
        let d = of_device(&sys, (254, 16)).unwrap();
        assert!(aliases(&sys, &d, Some((254, 16))).is_empty());
    }

    #[test]
    fn ranges_that_only_touch_do_not_overlap() {
        let a = Extent {
            base: Base::Disk((8, 0)),
            start: 0,
            len: 10,
            file: None,
        };
        let mut b = a.clone();
        b.start = 10;
        assert!(!a.overlaps(&b));
        b.start = 9;
        assert!(a.overlaps(&b));
        b.base = Base::Disk((8, 16));
        assert!(!a.overlaps(&b));
    }
}
