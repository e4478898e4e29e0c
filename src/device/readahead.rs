//! `--readahead KB`: read_ahead_kb set on the device of every target for
//! the run, through the knob guard that puts it back. A file's is its file
//! system's disk's; that of the disk that holds `/` changes only when the
//! user named that disk.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::base::error::{show_path, usage, Interrupted, UsageError};
use crate::base::warning::Warning;
use crate::device::knobs::KnobGuard;
use crate::device::{Inspected, TargetKind};

/// Sets read_ahead_kb on the device of every target (each device once;
/// none in a dry run). A file has no read-ahead of its own: its file
/// system's device's is set, which every file on that device shares:
/// returned, for the document's warnings (the table lists it once, however
/// many points of a sweep set it), and named in the error when it cannot be
/// set. When that device is the disk
/// that holds `/`, it is refused unless one of `named` (every target the
/// user named) is that disk: a file on the root file system must not
/// change the read-ahead of everything the machine runs from.
pub fn set(
    guard: &mut KnobGuard,
    targets: &[Inspected],
    kb: u64,
    dry_run: bool,
    named: &[PathBuf],
) -> Result<Vec<Warning>> {
    let mut seen = HashSet::new();
    let mut notes = Vec::new();
    let root = root_knob();
    for t in targets {
        let p = &t.path;
        let Some(knob) =
            crate::device::readahead_path(&crate::base::host::Host::real().sys, t.device())
        else {
            return usage(format!(
                "--readahead needs a block device under {}, and it has none (tmpfs? btrfs? a missing path?)",
                show_path(p)
            ));
        };
        if t.kind == TargetKind::File {
            let (ma, mi) = t.device();
            let dev = crate::device::sysfs_name(&crate::base::host::Host::real().sys, ma, mi)
                .unwrap_or_else(|| "its device".into());
            if root.is_some() && canonical(&knob) == root && !names_disk(named, root.as_deref()) {
                return usage(format!(
                    "--readahead on the file {}: it would change {} of {dev}, the disk that holds /, which everything on this machine reads through; name that disk among the targets to allow it, or put the file on another device",
                    show_path(p),
                    knob.display()
                ));
            }
            notes.push(Warning::ReadaheadOnFile {
                path: show_path(p).to_string(),
                knob: knob.display().to_string(),
                device: dev,
            });
        }
        if seen.insert(knob.clone()) && !dry_run {
            guard.set(&knob, &kb.to_string()).map_err(|e| {
                // A lock held by another run, or an interrupt while waiting, says so itself.
                if e.downcast_ref::<UsageError>().is_some() || Interrupted::is(&e) {
                    return e;
                }
                let under = match t.kind {
                    TargetKind::File => format!(
                        " ({}, the read-ahead of the device under its file system)",
                        knob.display()
                    ),
                    TargetKind::Block => String::new(),
                };
                UsageError(format!(
                    "cannot set the read-ahead of {}{under}: {e:#}{}",
                    show_path(p),
                    crate::base::error::root_needed()
                ))
                .into()
            })?;
        }
    }
    Ok(notes)
}

fn canonical(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok()
}

/// The read_ahead_kb file of the disk that holds `/` (links resolved).
fn root_knob() -> Option<PathBuf> {
    crate::device::readahead_knob(Path::new("/")).and_then(|k| canonical(&k))
}

/// Whether one of `named` is a block device whose read-ahead is `knob`'s:
/// the disk that holds `/`, or a partition of it.
fn names_disk(named: &[PathBuf], knob: Option<&Path>) -> bool {
    use std::os::unix::fs::FileTypeExt;
    named.iter().any(|p| {
        std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device())
            && crate::device::readahead_knob(p)
                .and_then(|k| canonical(&k))
                .as_deref()
                == knob
    })
}
