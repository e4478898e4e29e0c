//! The write guard: before a write workload touches a block device, prove it
//! is not in use and holds nothing recognisable.
//!
//! Every check compares devices by major:minor, never by path string (fio's
//! guard compared paths and missed `/dev/sda` while `/dev/sda1` was mounted):
//!
//! - the device, its partitions and everything stacked on them (holders,
//!   recursively) are looked up in `/proc/self/mountinfo`;
//! - holders (md, dm, bcache ... members) refuse the device;
//! - active swap (`/proc/swaps`) refuses it, and so does a loop device
//!   whose backing file (at any depth) is an active swap file;
//! - any signature libblkid knows (file systems, md/LVM/other RAID members,
//!   LUKS and other crypto headers, swap, partition tables: what `blkid -p`
//!   and `wipefs -n` report) refuses it unless `--force-signature`;
//! - finally the device is opened with `O_EXCL`, which the kernel refuses
//!   while anything claims it (a mounted btrfs member, for example).
//!
//! A regular file is an image as much as a device is: an active swap file,
//! a file a loop device is attached to (that device's bytes) and, unless
//! `--force-signature`, a file carrying a signature are refused alike.
//! "In use" is never overridden: `--force-signature` answers the signature
//! check alone.
//!
//! The roots of sysfs and of the proc files can be pointed elsewhere, so the
//! checks are tested on fixture trees.

mod aliases;
mod signature;

pub use aliases::{check_aliases, check_no_loop};
pub use signature::{device_signature, signature_of, signatures_of};
use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::sysfs::dev_numbers;
use crate::base::error::show_path;

/// Where the guard reads the system's state: the one host handle.
pub use crate::base::host::Host;

/// One check and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub name: String,
    pub passed: bool,
    pub detail: String,
}

impl Check {
    fn new(name: &str, passed: bool, detail: String) -> Check {
        Check {
            name: name.into(),
            passed,
            detail,
        }
    }
}

pub(crate) type Dev = (u64, u64);

/// A device under `/sys/dev/block`, by its numbers.
fn sys_dev(env: &Host, (ma, mi): Dev) -> PathBuf {
    env.block_dev((ma, mi))
}

fn read_dev_file(p: &Path) -> Option<Dev> {
    let s = fs::read_to_string(p).ok()?;
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

pub(crate) fn name_of(env: &Host, dev: Dev) -> String {
    super::sysfs::sysfs_name(&env.sys, dev.0, dev.1)
        .unwrap_or_else(|| format!("{}:{}", dev.0, dev.1))
}

/// The device's partitions (sysfs subdirectories that hold a `partition` file).
pub(crate) fn partitions(env: &Host, dev: Dev) -> Vec<Dev> {
    let Ok(rd) = fs::read_dir(sys_dev(env, dev)) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| e.path().join("partition").exists())
        .filter_map(|e| read_dev_file(&e.path().join("dev")))
        .collect()
}

/// Names in `holders/` of a device.
pub(crate) fn holders(env: &Host, dev: Dev) -> Vec<(String, Dev)> {
    let Ok(rd) = fs::read_dir(sys_dev(env, dev).join("holders")) else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let d = read_dev_file(&env.class_block().join(&name).join("dev"))?;
            Some((name, d))
        })
        .collect()
}

/// The device, its partitions, and everything stacked on any of them.
pub fn related_devices(env: &Host, dev: Dev) -> BTreeSet<Dev> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![dev];
    todo.extend(partitions(env, dev));
    while let Some(d) = todo.pop() {
        if seen.insert(d) {
            todo.extend(holders(env, d).into_iter().map(|(_, h)| h));
        }
    }
    seen
}

/// Mount points of any of `devs`, from a mountinfo file: (mount point as
/// shown, escaped by `show_path`; device).
pub fn mounts_of(env: &Host, devs: &BTreeSet<Dev>) -> Vec<(String, Dev)> {
    super::sysfs::mounts(&env.mountinfo())
        .into_iter()
        .filter(|m| devs.contains(&m.dev))
        // Said in a check's one line: a mount point may hold a newline
        // (mountinfo's \012), which would print a line of its own.
        .map(|m| (show_path(Path::new(&m.at)), m.dev))
        .collect()
}

/// Mounted btrfs file systems that have any of `devs` as a member
/// (`/sys/fs/btrfs/<uuid>/devices/<name>`): their mounts show an anonymous
/// device number, so mountinfo alone does not find them.
pub fn btrfs_memberships(env: &Host, devs: &BTreeSet<Dev>) -> Vec<(String, String)> {
    let Ok(fss) = fs::read_dir(env.sys.join("fs/btrfs")) else {
        return Vec::new();
    };
    let names: Vec<String> = devs.iter().map(|&d| name_of(env, d)).collect();
    fss.flatten()
        .filter_map(|fsdir| {
            let uuid = fsdir.file_name().to_string_lossy().into_owned();
            let members = fs::read_dir(fsdir.path().join("devices")).ok()?;
            let hit = members
                .flatten()
                .map(|m| m.file_name().to_string_lossy().into_owned())
                .find(|m| names.contains(m))?;
            Some((uuid, hit))
        })
        .collect()
}

/// What an active swap area is, by `stat` of the name the swaps file gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SwapArea {
    /// A block device: its `st_rdev`.
    Device(u64),
    /// A file: its (`st_dev`, `st_ino`).
    File(u64, u64),
}

/// The active swap areas of a swaps file (`/proc/swaps`), by name. Names
/// the kernel escaped (a space is `\040`) are unescaped; one that no longer
/// resolves is left out.
fn swap_areas(env: &Host) -> Vec<(String, SwapArea)> {
    let Ok(text) = fs::read_to_string(env.swaps()) else {
        return Vec::new();
    };
    text.lines()
        .skip(1)
        // Filename, Type, Size, Used, Priority: the name is all but the last four fields.
        .filter_map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            let name = fields.get(..fields.len().checked_sub(4)?)?.join(" ");
            let name = super::sysfs::unescape_mount(name.trim_end_matches(" (deleted)"));
            let m = fs::metadata(&name).ok()?;
            let what = if m.file_type().is_block_device() {
                SwapArea::Device(m.rdev())
            } else if m.file_type().is_file() {
                SwapArea::File(m.dev(), m.ino())
            } else {
                return None;
            };
            Some((name, what))
        })
        .collect()
}

/// Active swap areas on any of `devs` (block devices, by their numbers).
pub fn swaps_on(env: &Host, devs: &BTreeSet<Dev>) -> Vec<String> {
    swap_areas(env)
        .into_iter()
        .filter(|(_, what)| matches!(what, SwapArea::Device(r) if devs.contains(&dev_numbers(*r))))
        .map(|(name, _)| name)
        .collect()
}

/// The name the swaps file gives `file` (`st_dev`, `st_ino`), when it is
/// an active swap file.
fn swap_file_name(env: &Host, file: (u64, u64)) -> Option<String> {
    swap_areas(env)
        .into_iter()
        .find(|(_, what)| *what == SwapArea::File(file.0, file.1))
        .map(|(name, _)| name)
}

/// The swap check for a file target, by the opened file's (`st_dev`,
/// `st_ino`) against every swap file the swaps file lists: the kernel
/// fails each write to an active swap file (ETXTBSY), after the run began.
pub fn check_swap_file(env: &Host, shown: &str, file: (u64, u64)) -> Check {
    match swap_file_name(env, file) {
        None => Check::new(
            "not swap",
            true,
            format!("not an active swap file (by inode, against {})", env.swaps().display()),
        ),
        Some(name) => Check::new(
            "not swap",
            false,
            format!(
                "{shown} is an active swap file ({} lists it as {}): swapoff it first, or choose another target",
                env.swaps().display(),
                crate::base::error::show_path(Path::new(&name))
            ),
        ),
    }
}

/// The signature check, on a device or a file open as `file`: anything
/// libblkid recognises refuses the write unless `--force-signature`.
pub fn check_signature(file: &fs::File, shown: &str, size: u64, force_signature: bool) -> Check {
    match signature_of(file, size) {
        Ok(None) => Check::new("no signature", true, "libblkid finds no file system, RAID, LVM, crypto, swap or partition-table signature".into()),
        Ok(Some(sig)) if force_signature => Check::new("no signature", true, format!("carries {sig}, overridden by --force-signature (which overrides this check only: the mount, holder, swap, alias and in-use checks still apply)")),
        Ok(Some(sig)) => Check::new(
            "no signature",
            false,
            format!("{shown} carries {sig}: writing destroys it; add --force-signature if that is intended"),
        ),
        Err(e) => Check::new("no signature", false, format!("cannot read {shown} to look for signatures: {e}")),
    }
}

/// Runs every check but the exclusive open on the device open as `file`
/// (its numbers are `dev`). `shown` names the device in messages.
/// `backing` is the regular file at the bottom of the device's stack (a
/// loop device's image, at any depth), by (`st_dev`, `st_ino`).
pub fn check_device(
    env: &Host,
    file: &fs::File,
    shown: &str,
    dev: Dev,
    size: u64,
    backing: Option<(u64, u64)>,
    force_signature: bool,
) -> Vec<Check> {
    let related = related_devices(env, dev);
    let mut checks = Vec::new();
    let mounts = mounts_of(env, &related);
    let btrfs = btrfs_memberships(env, &related);
    checks.push(match (mounts.first(), btrfs.first()) {
        (Some((at, d)), _) => Check::new(
            "not mounted",
            false,
            format!("{shown} is in use: {} is mounted at {at}", name_of(env, *d)),
        ),
        (None, Some((uuid, member))) => Check::new(
            "not mounted",
            false,
            format!(
                "{shown} is in use: {member} is a member of the mounted btrfs file system {uuid}"
            ),
        ),
        (None, None) => Check::new(
            "not mounted",
            true,
            format!("neither {shown} nor its partitions nor anything on them is mounted"),
        ),
    });
    let held: Vec<String> = [dev]
        .into_iter()
        .chain(partitions(env, dev))
        .flat_map(|d| holders(env, d).into_iter().map(move |(h, _)| (d, h)))
        .map(|(d, h)| format!("{} is held by {h}", name_of(env, d)))
        .collect();
    checks.push(if held.is_empty() {
        Check::new(
            "no holders",
            true,
            "nothing is stacked on it (md, dm, ...)".into(),
        )
    } else {
        Check::new(
            "no holders",
            false,
            format!("{shown} is a member of something: {}", held.join(", ")),
        )
    });
    let swaps = swaps_on(env, &related);
    // A loop device over an active swap file: the kernel refuses writes to
    // the file (EIO through the loop), mid-run, and the swap is the
    // system's memory. /proc/swaps names the file, not the loop device.
    let swap_file = backing.and_then(|f| swap_file_name(env, f));
    checks.push(match (swaps.is_empty(), swap_file) {
        (true, None) => Check::new("not swap", true, "no active swap on it, nor on a file behind it".into()),
        (false, _) => Check::new(
            "not swap",
            false,
            format!(
                "{shown} is active swap ({} lists {}): swapoff it first, or choose another device",
                env.swaps().display(),
                swaps.join(", ")
            ),
        ),
        (true, Some(name)) => Check::new(
            "not swap",
            false,
            format!(
                "{shown} is in use: its backing file {} is an active swap file ({} lists it): swapoff it first, or choose another device",
                crate::base::error::show_path(Path::new(&name)),
                env.swaps().display(),
            ),
        ),
    });
    checks.push(check_signature(file, shown, size, force_signature));
    checks
}

/// The read-only check: a device the kernel marks read-only (`ro` in sysfs)
/// fails every write.
pub fn check_writable(env: &Host, shown: &str, dev: Dev) -> Check {
    let ro = fs::read_to_string(sys_dev(env, dev).join("ro"))
        .map(|s| s.trim() == "1")
        .unwrap_or(false);
    if ro {
        Check::new(
            "writable",
            false,
            format!("{shown} is read-only (the kernel's ro flag is set): use a read workload, or make it writable (blockdev --setrw)"),
        )
    } else {
        Check::new("writable", true, "the device is not read-only".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A fixture sysfs tree: a disk `sdz` (8:0) with partitions sdz1 (8:1) and
    /// sdz2 (8:2); md0 (9:0) held on sdz2; dm-0 (253:0) stacked on md0.
    fn fixture() -> (tempfile::TempDir, Host) {
        let t = tempfile::tempdir().unwrap();
        let s = t.path().join("sys");
        let dev = |rel: &str, numbers: &str| {
            let d = s.join("devices/virtual/block").join(rel);
            fs::create_dir_all(d.join("holders")).unwrap();
            fs::write(d.join("dev"), format!("{numbers}\n")).unwrap();
            let name = Path::new(rel).file_name().unwrap();
            fs::create_dir_all(s.join("class/block")).unwrap();
            symlink(&d, s.join("class/block").join(name)).unwrap();
            fs::create_dir_all(s.join("dev/block")).unwrap();
            symlink(&d, s.join("dev/block").join(numbers)).unwrap();
            d
        };
        dev("sdz", "8:0");
        let p1 = dev("sdz/sdz1", "8:1");
        let p2 = dev("sdz/sdz2", "8:2");
        fs::write(p1.join("partition"), "1").unwrap();
        fs::write(p2.join("partition"), "2").unwrap();
        let md = dev("md0", "9:0");
        dev("dm-0", "253:0");
        symlink(&md, p2.join("holders/md0")).unwrap();
        symlink(
            s.join("devices/virtual/block/dm-0"),
            md.join("holders/dm-0"),
        )
        .unwrap();
        let env = Host::fixture(t.path());
        fs::create_dir_all(env.mountinfo().parent().unwrap()).unwrap();
        fs::write(env.mountinfo(), "").unwrap();
        fs::write(env.swaps(), "Filename Type Size Used Priority\n").unwrap();
        (t, env)
    }

    #[test]
    fn related_devices_cover_partitions_and_everything_stacked() {
        let (_t, env) = fixture();
        let r = related_devices(&env, (8, 0));
        assert_eq!(
            r,
            [(8, 0), (8, 1), (8, 2), (9, 0), (253, 0)]
                .into_iter()
                .collect()
        );
        assert_eq!(
            related_devices(&env, (8, 1)),
            [(8, 1)].into_iter().collect()
        );
    }

    #[test]
    fn a_mounted_partition_refuses_the_whole_disk() {
        let (_t, env) = fixture();
        fs::write(
            env.mountinfo(),
            "36 27 8:1 / /mnt/my\\040data rw,relatime - ext4 /dev/sdz1 rw\n",
        )
        .unwrap();
        let m = mounts_of(&env, &related_devices(&env, (8, 0)));
        assert_eq!(m, vec![("/mnt/my data".to_string(), (8, 1))]);
        // A file system on dm-0, three layers up, is found too.
        fs::write(
            env.mountinfo(),
            "36 27 253:0 / /srv rw - xfs /dev/dm-0 rw\n",
        )
        .unwrap();
        assert_eq!(mounts_of(&env, &related_devices(&env, (8, 0))).len(), 1);
        assert!(mounts_of(&env, &related_devices(&env, (8, 1))).is_empty());
    }

    #[test]
    fn btrfs_members_are_found_by_name() {
        let (_t, env) = fixture();
        let d = env.sys.join("fs/btrfs/1234-abcd/devices");
        fs::create_dir_all(&d).unwrap();
        symlink(
            env.sys.join("devices/virtual/block/sdz/sdz1"),
            d.join("sdz1"),
        )
        .unwrap();
        let found = btrfs_memberships(&env, &related_devices(&env, (8, 0)));
        assert_eq!(found, vec![("1234-abcd".to_string(), "sdz1".to_string())]);
        assert!(btrfs_memberships(&env, &related_devices(&env, (8, 2))).is_empty());
    }

    #[test]
    fn holders_are_named() {
        let (_t, env) = fixture();
        let h = holders(&env, (8, 2));
        assert_eq!(h, vec![("md0".to_string(), (9, 0))]);
        assert!(holders(&env, (8, 1)).is_empty());
    }

    #[test]
    fn a_swap_file_is_found_by_inode_whatever_its_name() {
        let (t, env) = fixture();
        let f = t.path().join("my swap");
        fs::write(&f, b"x").unwrap();
        let m = fs::metadata(&f).unwrap();
        let other = t.path().join("other");
        fs::write(&other, b"y").unwrap();
        let o = fs::metadata(&other).unwrap();
        // The kernel escapes a space in the name as \040.
        fs::write(
            env.swaps(),
            format!(
                "Filename Type Size Used Priority\n{} file 16380 0 -2\n",
                f.display().to_string().replace(' ', "\\040")
            ),
        )
        .unwrap();
        let c = check_swap_file(&env, "T", (m.dev(), m.ino()));
        assert!(!c.passed && c.detail.contains("active swap file"), "{c:?}");
        assert!(c.detail.contains("my swap"), "{c:?}");
        assert!(check_swap_file(&env, "T", (o.dev(), o.ino())).passed);
        // A file is never taken for a swap partition.
        assert!(swaps_on(&env, &[dev_numbers(m.dev())].into_iter().collect()).is_empty());
    }

    #[test]
    fn swap_on_a_device_is_found_by_numbers() {
        let (_t, env) = fixture();
        // /dev/null is a character device: never a match.
        fs::write(
            env.swaps(),
            "Filename Type Size Used Priority\n/dev/null partition 1 0 -2\n",
        )
        .unwrap();
        assert!(swaps_on(&env, &related_devices(&env, (1, 3))).is_empty());
    }

    #[test]
    fn a_loop_device_over_an_active_swap_file_is_swap() {
        let (t, env) = fixture();
        let f = t.path().join("swap file");
        fs::write(&f, vec![0u8; 8192]).unwrap();
        let m = fs::metadata(&f).unwrap();
        fs::write(
            env.swaps(),
            format!(
                "Filename Type Size Used Priority\n{} file 4 0 -2\n",
                f.display().to_string().replace(' ', "\\040")
            ),
        )
        .unwrap();
        let probe = fs::File::open(&f).unwrap();
        let swap = |backing| {
            check_device(&env, &probe, "L", (8, 1), 8192, backing, true)
                .into_iter()
                .find(|c| c.name == "not swap")
                .unwrap()
        };
        let c = swap(Some((m.dev(), m.ino())));
        assert!(!c.passed && c.detail.contains("its backing file"), "{c:?}");
        assert!(c.detail.contains("swap file"), "{c:?}");
        assert!(swap(None).passed);
        assert!(swap(Some((m.dev(), m.ino() + 1))).passed);
    }

    #[test]
    fn a_file_a_loop_device_is_attached_to_is_in_use() {
        let (t, env) = fixture();
        let img = t.path().join("img");
        fs::write(&img, vec![0u8; 8192]).unwrap();
        let x = crate::device::extent::of_file(&env, &fs::File::open(&img).unwrap()).unwrap();
        let c = check_no_loop(&env, "img", &x);
        assert!(c.passed, "{c:?}");
        // loop7 over img: sysfs alone (no /dev node in the fixture).
        let d = env.sys.join("devices/virtual/block/loop7");
        fs::create_dir_all(d.join("loop")).unwrap();
        fs::write(d.join("dev"), "7:7\n").unwrap();
        fs::write(d.join("size"), "16\n").unwrap();
        fs::write(d.join("loop/backing_file"), format!("{}\n", img.display())).unwrap();
        symlink(&d, env.class_block().join("loop7")).unwrap();
        symlink(&d, env.sys.join("dev/block/7:7")).unwrap();
        let c = check_no_loop(&env, "img", &x);
        assert!(!c.passed, "{c:?}");
        assert!(
            c.detail.contains("in use: loop device loop7 is attached"),
            "{c:?}"
        );
    }
}
