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
