//! Naming block devices: a `dev_t` as (major, minor), and the kernel's name
//! for a device number. The leaf every other device file may use.

use std::fs;
use std::path::Path;

/// Splits a `dev_t` into (major, minor).
pub fn dev_numbers(dev: u64) -> (u64, u64) {
    (
        u64::from(libc::major(dev as libc::dev_t)),
        u64::from(libc::minor(dev as libc::dev_t)),
    )
}

/// The kernel name of device `major:minor` (`loop0`, `sda1`).
pub fn sysfs_name(sysfs: &Path, major: u64, minor: u64) -> Option<String> {
    let link = fs::read_link(sysfs.join(format!("dev/block/{major}:{minor}"))).ok()?;
    link.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// mountinfo escapes space, tab, newline and backslash as octal.
pub fn unescape_mount(s: &str) -> String {
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// One line of a mountinfo file (`proc(5)`): the device number, where it
/// is mounted, the file system type, the source and the super options.
#[derive(Debug, Clone)]
pub struct Mount {
    pub dev: (u64, u64),
    pub at: String,
    pub fstype: String,
    pub source: String,
    pub options: String,
}

/// Every mount in a mountinfo file (`/proc/self/mountinfo`, or a fixture).
pub fn mounts(mountinfo: &Path) -> Vec<Mount> {
    let Ok(text) = fs::read_to_string(mountinfo) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let (a, b) = f.get(2)?.split_once(':')?;
            // Optional fields end at a lone "-"; type, source and options follow.
            let sep = f.iter().position(|&x| x == "-");
            let after = |i: usize| sep.and_then(|s| f.get(s + i)).copied().unwrap_or("");
            Some(Mount {
                dev: (a.parse().ok()?, b.parse().ok()?),
                at: unescape_mount(f.get(4)?),
                fstype: after(1).to_string(),
                source: unescape_mount(after(2)),
                options: after(3).to_string(),
            })
        })
        .collect()
}
