//! advise `--apply`: the first battery's appliable settings made (each
//! recorded before it is changed, kept until `stripebench restore`), then
//! the stack read again and the battery run again.

use std::time::Instant;

use anyhow::Result;

use crate::base::error::show_path;
use crate::cli::AdviseArgs;
use crate::device::topology;
use crate::document::advise::{self, FindingsDocument};
use crate::output::Outputs;

/// `--apply`: makes the appliable settings of `first`'s findings (each
/// recorded before it is changed, as a run's are), keeps them (until
/// `stripebench restore`), reads the stack again and runs the battery
/// again; the second battery's document, with what was applied and the
/// figures before and after.
pub(super) fn apply(
    args: &AdviseArgs,
    given: String,
    first: FindingsDocument,
    src: &topology::Sources,
    out: &Outputs,
) -> Result<FindingsDocument> {
    let (settings, not_applied) = advise::to_apply(&first.findings);
    let sys = crate::base::host::Host::real().sys;
    let mut guard = crate::device::knobs::KnobGuard::new(crate::device::state::state_dir()?)
        .wait_for_locks(args.wait_lock);
    let mut changes = Vec::new();
    let mut refused = not_applied;
    for (finding, s) in &settings {
        // A signal (Ctrl-C) while applying, a lock waited for or not: the
        // user asked to stop, so no further setting is changed (those made
        // before it are kept, as the report says).
        if crate::base::signals::interrupted() {
            refused.push(format!(
                "{finding} ({}): interrupted before it was made",
                s.device
            ));
            continue;
        }
        let path = s.path(&sys);
        match guard.set(&path, &s.value) {
            Ok(()) => {
                // What the guard recorded to put back (each setting is made
                // once: it is the newest record).
                let old = guard.changed().last().map(|k| k.old.clone());
                out.note(&format!(
                    "stripebench advise: applied {} = {} ({finding}); 'stripebench restore' puts it back",
                    show_path(&path),
                    s.value
                ));
                changes.push(advise::Change {
                    finding: finding.clone(),
                    device: s.device.clone(),
                    attribute: s.attribute.clone(),
                    old: old.unwrap_or_default(),
                    new: s.value.clone(),
                });
            }
            Err(e) => refused.push(format!(
                "{finding} ({}): {}",
                s.device,
                crate::base::error::show_lines(&format!("{e:#}"))
            )),
        }
    }
    // Kept before the second battery: its runs take the devices' locks
    // (this guard's would refuse them), and what was applied stays applied
    // whatever becomes of it.
    guard.keep()?;
    let started = Instant::now();
    let topo = topology::discover(&args.volume, src)?;
    let survey = super::battery::survey(src, &topo);
    let second = super::battery::pass(args, &topo, &survey, out, started)?;
    Ok(FindingsDocument {
        volume: given,
        elapsed_sec: first.elapsed_sec + second.elapsed_sec,
        applied: Some(advise::Applied {
            changes,
            compared: advise::compared(&first.measurements, &second.measurements),
            before: first.findings,
            not_applied: refused,
        }),
        ..second
    })
}
