//! Other devices that reach the target's bytes (a second loop over its
//! image, an offset loop, the disk under a partition), and whether any of
//! them is in use; and, for a file target, whether any loop device is
//! attached to it at all.

use std::collections::BTreeSet;
use std::fs;

use super::{
    btrfs_memberships, holders, mounts_of, name_of, partitions, swaps_on, Check, Dev, Host,
};
use crate::device::extent::{aliases, Extent};

/// The device and everything stacked on it, but not its partitions (each
/// partition is an alias of its own, with its own range).
fn stacked(env: &Host, dev: Dev) -> BTreeSet<Dev> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![dev];
    while let Some(d) = todo.pop() {
        if seen.insert(d) {
            todo.extend(holders(env, d).into_iter().map(|(_, h)| h));
        }
    }
    seen
}

/// Why another device that reaches the same bytes is in use, if it is.
fn alias_in_use(env: &Host, name: &str, dev: Dev) -> Option<String> {
    let up = stacked(env, dev);
    if let Some((at, d)) = mounts_of(env, &up).first() {
        return Some(format!("{} is mounted at {at}", name_of(env, *d)));
    }
    if let Some((uuid, _)) = btrfs_memberships(env, &up).first() {
        return Some(format!(
            "{name} is a member of the mounted btrfs file system {uuid}"
        ));
    }
    if let Some((h, _)) = holders(env, dev).first() {
        return Some(format!("{name} is held by {h}"));
    }
    if let Some(s) = swaps_on(env, &up).first() {
        return Some(format!("{name} is active swap ({s})"));
    }
    // The kernel knows claims we cannot see (a program's exclusive open). A
    // disk with partitions is claimed whenever one of them is, so only a
    // device without partitions is asked; its partitions are aliases of
    // their own and are asked in turn.
    if partitions(env, dev).is_empty() {
        let node = env.dev_node(name);
        if node.exists() {
            use std::os::unix::fs::OpenOptionsExt;
            let r = fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_EXCL)
                .open(&node);
            if let Err(e) = r {
                if e.raw_os_error() == Some(libc::EBUSY) {
                    return Some(format!(
                        "{name} is claimed by the kernel or another program (exclusive open refused)"
                    ));
                }
            }
        }
    }
    None
}

/// The aliases check: no other device that reaches the target's bytes (a
/// second loop device over the same image, an offset loop, the disk under a
/// partition, a loop over a file target) is mounted, held, swap or claimed.
/// `--force-signature` has no say here.
pub fn check_aliases(env: &Host, shown: &str, target: &Extent, own: Option<Dev>) -> Check {
    let all = aliases(env, target, own);
    let busy: Vec<String> = all
        .iter()
        .filter_map(|(name, dev, x)| {
            let why = alias_in_use(env, name, *dev)?;
            let via = match &x.file {
                Some(f) => format!(" (it reaches the same bytes of {})", f.display()),
                None => " (it reaches the same bytes)".into(),
            };
            Some(format!("{why}{via}"))
        })
        .collect();
    if let Some(first) = busy.first() {
        Check::new(
            "no alias in use",
            false,
            format!("{shown} is in use through another device: {first}"),
        )
    } else if all.is_empty() {
        Check::new(
            "no alias in use",
            true,
            "no other device reaches the same bytes".into(),
        )
    } else {
        Check::new(
            "no alias in use",
            true,
            format!(
                "{} other device(s) reach the same bytes ({}), none in use",
                all.len(),
                all.iter()
                    .map(|a| a.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    }
}

/// The loop check for a file target: a file that a loop device is attached
/// to (directly, or under a loop over that loop, or a partition of one) is
/// that device's bytes, and the device is there to be used: whoever
/// attached it has it in use, mounted or not, and the kernel does not stop
/// a write to the file under it. `--force-signature` has no say here.
pub fn check_no_loop(env: &Host, shown: &str, target: &Extent) -> Check {
    let names: Vec<String> = aliases(env, target, None)
        .into_iter()
        .map(|(name, _, _)| name)
        .collect();
    match names.first() {
        None => Check::new(
            "no loop device",
            true,
            "no loop device is attached to it".into(),
        ),
        Some(first) => Check::new(
            "no loop device",
            false,
            format!(
                "{shown} is in use: loop device {} {} attached to it: detach it first (losetup -d /dev/{first}), or choose another target",
                names.join(", "),
                if names.len() == 1 { "is" } else { "are" },
            ),
        ),
    }
}
