//! The sysfs attributes stripebench changes, and how one named by a state
//! file is opened: a state file is data, so the path it holds is checked
//! against an explicit list and walked one component at a time with
//! `O_NOFOLLOW`, never resolved. A link anywhere on the way (one planted on
//! the tmpfs at /sys/fs/cgroup, or sysfs's own `subsystem`, `bdi`, ...
//! links, which lead to other devices) refuses it.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use crate::base::path::open_component;

/// The settings stripebench changes, relative to a block device's sysfs
/// directory (`/sys/devices/.../DEVICE/`). `restore` writes these and
/// nothing else, and a run may change nothing else: a new knob is added here.
/// The `md/` ones are md's (`device::md_tunables`).
pub const RESTORABLE: &[&str] = &[
    "queue/read_ahead_kb",
    "queue/max_sectors_kb",
    "queue/scheduler",
    "md/stripe_cache_size",
    "md/group_thread_cnt",
    "md/sync_speed_min",
    "md/sync_speed_max",
];

/// Whether `path` is one of md's resync limits, which take `system` too.
fn is_sync_limit(path: &Path) -> bool {
    path.ends_with("md/sync_speed_min") || path.ends_with("md/sync_speed_max")
}

/// Whether `value` may be written to the setting at `path` (one of
/// [`RESTORABLE`]): a number of at most 10 digits, as sysfs shows them, or
/// for a queue's scheduler a name (lower-case letters, digits, '-' and '_',
/// at most 32: the kernel refuses a name it does not know), or for md's
/// resync limits `system` too.
pub fn value_ok(path: &Path, value: &str) -> bool {
    if is_sync_limit(path) && value == "system" {
        return true;
    }
    if path.ends_with("queue/scheduler") {
        return !value.is_empty()
            && value.len() <= 32
            && value
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    }
    !value.is_empty() && value.len() <= 10 && value.bytes().all(|b| b.is_ascii_digit())
}

/// A setting's value as it reads (`raw`), as it is written back: the
/// active scheduler of a queue's list ("none [mq-deadline]" is
/// "mq-deadline"); an md resync limit's source ("200000 (system)" is
/// "system", "5000 (local)" is "5000"); any other setting as it reads, trimmed.
pub fn current_value(path: &Path, raw: &str) -> String {
    let raw = raw.trim();
    if is_sync_limit(path) {
        return match raw.split_once(' ') {
            Some((_, "(system)")) => "system".into(),
            Some((n, _)) => n.to_string(),
            None => raw.to_string(),
        };
    }
    if path.ends_with("queue/scheduler") {
        if let Some(active) = raw
            .split_whitespace()
            .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        {
            return active.to_string();
        }
    }
    raw.to_string()
}

/// sysfs's magic (linux/magic.h).
const SYSFS_MAGIC: i64 = 0x6265_6572;

/// An attribute opened for writing, and its device's numbers ("7:3").
#[derive(Debug)]
pub struct Attr {
    pub file: File,
    pub dev: String,
    /// A plain file in a test's fixture tree, not a sysfs attribute.
    fixture: bool,
}

impl Attr {
    /// Writes `value` as the attribute's new value.
    pub fn write(&self, value: &str) -> std::io::Result<()> {
        use std::io::Write;
        if self.fixture {
            // A plain file keeps a longer old value's tail; sysfs does not.
            self.file.set_len(0)?;
        }
        (&self.file).write_all(value.as_bytes())
    }
}

/// Opens `path` for writing if, and only if, it is `ROOT/devices/.../DEV/A`
/// for an `A` in [`RESTORABLE`], where DEV is a device directory (it holds
/// a `dev` file), no component is a link, and the attribute is a regular
/// file (on sysfs, when ROOT is /sys). `root` is `/sys` outside tests. The
/// error says why it is refused.
pub fn open_restorable(root: &Path, path: &Path) -> Result<Attr, String> {
    let rel = path
        .strip_prefix(root)
        .map_err(|_| format!("it is not under {}/devices", root.display()))?;
    let parts: Vec<&OsStr> = rel
        .components()
        .map(|c| match c {
            Component::Normal(n) => Ok(n),
            _ => Err("it holds '.', '..' or a repeated root".to_string()),
        })
        .collect::<Result<_, _>>()?;
    if parts.first() != Some(&OsStr::new("devices")) {
        return Err(format!("it is not under {}/devices", root.display()));
    }
    let attr = RESTORABLE
        .iter()
        .find(|a| {
            let a: Vec<&OsStr> = Path::new(a).iter().collect();
            parts.len() > a.len() + 1 && parts[parts.len() - a.len()..] == a[..]
        })
        .ok_or_else(|| {
            format!(
                "it is not a setting stripebench changes (only {} of a device)",
                RESTORABLE.join(", ")
            )
        })?;
    let n_attr = Path::new(attr).iter().count();
    let c_root = CString::new(root.as_os_str().as_bytes()).map_err(|_| "a NUL in the root")?;
    // SAFETY: a NUL-terminated path; the descriptor, when valid, is ours.
    let fd = unsafe {
        libc::open(
            c_root.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(format!(
            "cannot open {}: {}",
            root.display(),
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: fd was just returned by open and is owned by nobody else.
    let mut dir = unsafe { OwnedFd::from_raw_fd(fd) };
    let dirs = &parts[..parts.len() - 1];
    let device_depth = parts.len() - n_attr;
    let mut dev = None;
    for (i, name) in dirs.iter().enumerate() {
        dir = open_component(&dir, name, libc::O_RDONLY | libc::O_DIRECTORY).map_err(|e| {
            let at: std::path::PathBuf =
                root.join(parts[..=i].iter().collect::<std::path::PathBuf>());
            if e.raw_os_error() == Some(libc::ELOOP) || e.raw_os_error() == Some(libc::ENOTDIR) {
                format!("{} is a symbolic link or not a directory", at.display())
            } else {
                format!("cannot open {}: {e}", at.display())
            }
        })?;
        if i + 1 == device_depth {
            // The device's own directory: its numbers name its lock.
            let mut s = String::new();
            open_component(&dir, OsStr::new("dev"), libc::O_RDONLY)
                .map(File::from)
                .and_then(|mut f| f.read_to_string(&mut s))
                .map_err(|e| format!("it is not in a device's directory (no dev file: {e})"))?;
            dev = Some(s.trim().to_string());
        }
    }
    let last = parts[parts.len() - 1];
    // Not truncated before it is known to be an attribute (sysfs replaces
    // an attribute's value on each write anyway).
    let file = open_component(&dir, last, libc::O_WRONLY)
        .map(File::from)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                format!("{} is a symbolic link", path.display())
            } else {
                format!("cannot open {}: {e}", path.display())
            }
        })?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    // Only the real sysfs must prove to be sysfs; a fixture tree is not.
    let real_sys = root == crate::base::host::Host::real().sys;
    if real_sys {
        // SAFETY: all-zero is a valid statfs for fstatfs to fill in.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: an open descriptor and a statfs we own.
        let on_sysfs = unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) } == 0
            && st.f_type as i64 == SYSFS_MAGIC;
        if !on_sysfs {
            return Err(format!("{} is not on sysfs", path.display()));
        }
    }
    let dev = dev
        .filter(|d| !d.is_empty())
        .ok_or("its device has no numbers")?;
    Ok(Attr {
        file,
        dev,
        fixture: !real_sys,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn tree() -> (tempfile::TempDir, std::path::PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(t.path()).unwrap().join("sys");
        let d = root.join("devices/virtual/block/loop9");
        fs::create_dir_all(d.join("queue")).unwrap();
        fs::write(d.join("dev"), "7:9\n").unwrap();
        fs::write(d.join("queue/read_ahead_kb"), "128\n").unwrap();
        fs::write(d.join("queue/nr_requests"), "64\n").unwrap();
        (t, root)
    }

    #[test]
    fn a_listed_setting_of_a_device_opens_with_its_numbers() {
        let (_t, root) = tree();
        let p = root.join("devices/virtual/block/loop9/queue/read_ahead_kb");
        let a = open_restorable(&root, &p).unwrap();
        assert_eq!(a.dev, "7:9");
    }

    #[test]
    fn values_are_numbers_or_a_schedulers_name() {
        let ra = Path::new("/sys/devices/virtual/block/loop9/queue/read_ahead_kb");
        let sched = Path::new("/sys/devices/virtual/block/loop9/queue/scheduler");
        assert!(value_ok(ra, "1024") && !value_ok(ra, "none") && !value_ok(ra, ""));
        assert!(value_ok(sched, "mq-deadline") && value_ok(sched, "none"));
        assert!(!value_ok(sched, "a b") && !value_ok(sched, "x\n") && !value_ok(sched, "[none]"));
        assert!(!value_ok(sched, &"a".repeat(33)));
        assert_eq!(
            current_value(sched, "none [mq-deadline] kyber\n"),
            "mq-deadline"
        );
        assert_eq!(current_value(ra, "128\n"), "128");
    }

    #[test]
    fn anything_else_is_refused_with_the_reason() {
        let (t, root) = tree();
        let dev = root.join("devices/virtual/block/loop9");
        let no = |p: &Path| open_restorable(&root, p).unwrap_err();
        assert!(no(&dev.join("queue/nr_requests")).contains("not a setting"));
        assert!(no(&root.join("fs/cgroup/x/queue/read_ahead_kb")).contains("not under"));
        assert!(no(&dev.join("../loop9/queue/read_ahead_kb")).contains("'..'"));
        // A link on the way, and a link as the attribute itself.
        let victim = t.path().join("victim");
        fs::create_dir_all(victim.join("queue")).unwrap();
        fs::write(victim.join("dev"), "1:1").unwrap();
        fs::write(victim.join("queue/read_ahead_kb"), "precious").unwrap();
        symlink(&victim, root.join("devices/virtual/block/evil")).unwrap();
        let e = no(&root.join("devices/virtual/block/evil/queue/read_ahead_kb"));
        assert!(e.contains("symbolic link"), "{e}");
        fs::remove_file(dev.join("queue/read_ahead_kb")).unwrap();
        symlink(
            victim.join("queue/read_ahead_kb"),
            dev.join("queue/read_ahead_kb"),
        )
        .unwrap();
        assert!(no(&dev.join("queue/read_ahead_kb")).contains("symbolic link"));
        assert_eq!(
            fs::read_to_string(victim.join("queue/read_ahead_kb")).unwrap(),
            "precious"
        );
    }
}
