//! What `compare` takes of the run options, and each phase's options made
//! from them: the phase's targets, workers, and direct or buffered, every
//! other option as given.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{CompareArgs, RunArgs};
use crate::base::error::usage;
use crate::document::compare::PhaseKind;
use crate::measure::config::{RunConfig, RwMode};

/// One run of a phase: what it measures, which run of its kind, its
/// options, whether its targets are files stripebench made.
pub type Planned = (PhaseKind, u32, RunArgs, bool);

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
            "print-fio",
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

/// Every run of every phase, in order, with its options: on the
/// `members`, or on what the volume phases read (`volume`; `owned` when
/// stripebench made it). The member phases repeat `--repeat` times.
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
    crate::document::compare::phase_plan(&shown, args.solo, args.repeat)
        .into_iter()
        .map(|(kind, r)| {
            let (a, owned) = match &kind {
                PhaseKind::Alone { member } => {
                    let m = members.iter().zip(&shown).find(|(_, s)| *s == member);
                    let member: Vec<PathBuf> = m.map(|(p, _)| p.clone()).into_iter().collect();
                    (phase_args(&args.run, member, 1, false), false)
                }
                PhaseKind::Together => (phase_args(&args.run, members.to_vec(), 1, false), false),
                PhaseKind::VolumeOneWorker => (on_volume(1, false), owned),
                PhaseKind::VolumePerMember { .. } => (on_volume(n, false), owned),
                PhaseKind::VolumeBuffered { .. } | PhaseKind::Other(_) => {
                    (on_volume(n, true), owned)
                }
            };
            (kind, r, a, owned)
        })
        .collect()
}
