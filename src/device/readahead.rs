//! `--readahead KB`: read_ahead_kb set on the device of every target for
//! the run, through the knob guard that puts it back.

use std::collections::HashSet;

use anyhow::Result;

use crate::base::error::{show_path, usage, Interrupted, UsageError};
use crate::base::warning::Warning;
use crate::device::knobs::KnobGuard;
use crate::device::{Inspected, TargetKind};

/// Sets read_ahead_kb on the device of every target (each device once;
/// none in a dry run). A file has no read-ahead of its own: its file
/// system's device's is set, which every file on that device shares; said
/// before the run (on stderr) and returned, for the document's warnings.
pub fn set(
    guard: &mut KnobGuard,
    targets: &[Inspected],
    kb: u64,
    dry_run: bool,
) -> Result<Vec<Warning>> {
    let mut seen = HashSet::new();
    let mut notes = Vec::new();
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
            let note = Warning::ReadaheadOnFile {
                kb,
                path: show_path(p).to_string(),
                knob: knob.display().to_string(),
                device: dev,
            };
            eprintln!("stripebench: note: {note}");
            notes.push(note);
        }
        if seen.insert(knob.clone()) && !dry_run {
            guard.set(&knob, &kb.to_string()).map_err(|e| {
                // A lock held by another run, or an interrupt while waiting, says so itself.
                if e.downcast_ref::<UsageError>().is_some() || Interrupted::is(&e) {
                    return e;
                }
                UsageError(format!(
                    "cannot set the read-ahead of {}: {e:#}{}",
                    show_path(p),
                    crate::base::error::root_needed()
                ))
                .into()
            })?;
        }
    }
    Ok(notes)
}
