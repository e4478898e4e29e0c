//! What `compare` takes of the run options, and each phase's options made
//! from them: the phase's targets, workers, and direct or buffered, every
//! other option as given.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{CompareArgs, RunArgs};
use crate::base::error::usage;
use crate::document::compare::PhaseKind;
use crate::measure::config::{RunConfig, RwMode};

/// One phase to run: what it measures, its options, whether its targets
/// are files stripebench made.
pub type Planned = (PhaseKind, RunArgs, bool);

/// What compare does not take: more than one volume, writes, options it
/// chooses per phase, options that make no comparison.
pub fn refuse_options(base: &RunArgs) -> Result<()> {
    if base.targets.len() != 1 {
        return usage("compare takes exactly one VOLUME: a striped block device or the mount point of a striped file system");
    }
    if base.rw != RwMode::Read && base.rw != RwMode::Randread {
        return usage(format!(
            "compare measures reads: use --rw read or randread, not --rw {}",
            base.rw.name()
        ));
    }
    base.refuse_for(
        "compare",
        &[
            "dry-run",
            "plot",
            "csv",
            "histogram",
            "stripe",
            "start-at",
            "verify",
            "cached",
            "io-limit",
            "passes",
            "align",
        ],
    )?;
    if base.members.is_some() || base.buffered || base.direct {
        return usage("compare chooses the members, and direct or buffered, per phase: drop --members, --direct and --buffered");
    }
    Ok(())
}

/// A phase's options: the base's, on `targets` with `jobs` workers each.
pub fn phase_args(base: &RunArgs, targets: Vec<PathBuf>, jobs: usize, buffered: bool) -> RunArgs {
    let mut a = base.clone();
    a.targets = targets;
    a.jobs = jobs;
    a.buffered = buffered;
    a.direct = false;
    a.formats = Default::default();
    a.histogram = false;
    a.members = None;
    a
}

/// A phase's validated configuration, as `run` would validate it.
pub fn config(a: &RunArgs) -> Result<RunConfig> {
    let mut c = super::validate::run_config(a, &crate::base::cpus::available_cpus(), None)?;
    c.progress = !a.no_progress;
    Ok(c)
}

/// Every phase, in order, with its options: on the `members`, or on what
/// the volume phases read (`volume`; `owned` when stripebench made it).
pub fn plan_phases(
    args: &CompareArgs,
    members: &[PathBuf],
    volume: &Path,
    owned: bool,
) -> Vec<Planned> {
    let shown: Vec<String> = members.iter().map(|m| m.display().to_string()).collect();
    let n = members.len();
    let on_volume =
        |jobs, buffered| phase_args(&args.run, vec![volume.to_path_buf()], jobs, buffered);
    // The phases of the members alone come in member order.
    let mut alone = members.iter();
    crate::document::compare::phase_kinds(&shown, args.solo)
        .into_iter()
        .map(|kind| match &kind {
            PhaseKind::Alone { .. } => {
                let member: Vec<PathBuf> = alone.next().cloned().into_iter().collect();
                (kind, phase_args(&args.run, member, 1, false), false)
            }
            PhaseKind::Together => (
                kind,
                phase_args(&args.run, members.to_vec(), 1, false),
                false,
            ),
            PhaseKind::VolumeOneWorker => (kind, on_volume(1, false), owned),
            PhaseKind::VolumePerMember { .. } => (kind, on_volume(n, false), owned),
            PhaseKind::VolumeBuffered { .. } | PhaseKind::Other(_) => {
                (kind, on_volume(n, true), owned)
            }
        })
        .collect()
}
