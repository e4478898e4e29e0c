//! What `compare` takes of the run options, and each phase's options made
//! from them: the phase's targets, workers, and direct or buffered, every
//! other option as given.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::run_args::AlignArg;
use super::{CompareArgs, RunArgs};
use crate::base::error::usage;
use crate::document::compare::PhaseKind;
use crate::measure::config::{BlockSizeArg, RunConfig, RwMode};

/// One run of a phase: what it measures, which run of its kind, its
/// options, whether its targets are files stripebench made.
pub type Planned = (PhaseKind, u32, RunArgs, bool);

/// What compare does not take: more than one volume, mixed I/O, writes
/// without consent, options it chooses per phase, options that make no
/// comparison.
pub fn refuse_options(base: &RunArgs) -> Result<()> {
    if base.targets.len() != 1 {
        return usage("compare takes exactly one VOLUME: a striped block device or the mount point of a striped file system");
    }
    if matches!(base.rw, RwMode::Randrw | RwMode::Rw) {
        return usage(format!(
            "compare measures reads, or writes with --rw write|randwrite: not --rw {}",
            base.rw.name()
        ));
    }
    if base.rw.writes() {
        if !base.allow_destructive {
            return usage(format!(
                "compare --rw {} writes over the whole volume and destroys its data: give --allow-destructive (the members are only read)",
                base.rw.name()
            ));
        }
        if base.bs.is_some() {
            return usage("compare --rw write chooses its write sizes (a full stripe, then one chunk): drop --bs");
        }
    }
    base.refuse_for(
        "compare",
        &[
            "dry-run",
            "print-fio",
            "fio-log",
            "iolog-write",
            "iolog-read",
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
        return usage("compare chooses the members, and direct or buffered, per phase: drop --members, --direct and --buffered (--uncached adds uncached phases beside the buffered ones)");
    }
    if base.uncached && base.rw.writes() {
        return usage("compare --uncached adds uncached read phases of the volume, and --rw write phases write it: drop one of them");
    }
    Ok(())
}

/// A phase's options: the base's, on `targets` with `jobs` workers each.
pub fn phase_args(base: &RunArgs, targets: Vec<PathBuf>, jobs: usize, buffered: bool) -> RunArgs {
    let mut a = base.clone();
    a.targets = targets;
    a.jobs = jobs;
    a.buffered = buffered;
    a.uncached = false;
    a.direct = false;
    a.formats = Default::default();
    a.histogram = false;
    a.members = None;
    a
}

/// A phase's validated configuration, as `run` would validate it.
pub fn config(a: &RunArgs) -> Result<RunConfig> {
    // A phase below the minimum would end early and pass unnoticed: a
    // compare measures its phases, it does not fail them.
    if a.rate_min.is_some() || a.rate_iops_min.is_some() {
        return Err(crate::base::error::UsageError(
            "--rate-min and --rate-iops-min fail a run that falls below them; compare measures each phase and fails none: drop them, or run each with run".into(),
        )
        .into());
    }
    let mut c = super::validate::run_config(a, &crate::base::cpus::available_cpus(), None)?;
    c.progress = !a.no_progress;
    Ok(c)
}

/// The sizes `compare --rw write` writes: the volume's chunk and its full
/// stripe (chunk x data members).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteSizes {
    pub chunk: u64,
    pub full_stripe: u64,
}

/// A member phase's options: the members are only ever read, in the
/// order the workload asks (`--rw randwrite` reads them at random).
fn member_args(base: &RunArgs, targets: Vec<PathBuf>) -> RunArgs {
    let mut a = phase_args(base, targets, 1, false);
    if a.rw.writes() {
        a.rw = if a.rw == RwMode::Randwrite {
            RwMode::Randread
        } else {
            RwMode::Read
        };
        a.allow_destructive = false;
    }
    a
}

/// Every run of every phase, in order, with its options: on the
/// `members`, or on what the volume phases read (`volume`; `owned` when
/// stripebench made it). The member phases repeat `--repeat` times. With
/// `writes` (`--rw write`), the volume phases write it in those sizes.
pub fn plan_phases(
    args: &CompareArgs,
    members: &[PathBuf],
    shared: &[(String, Vec<PathBuf>)],
    volume: &Path,
    owned: bool,
    writes: Option<WriteSizes>,
) -> Vec<Planned> {
    let shown: Vec<String> = members.iter().map(|m| m.display().to_string()).collect();
    let n = members.len();
    let on_volume =
        |jobs, buffered| phase_args(&args.run, vec![volume.to_path_buf()], jobs, buffered);
    let uncached = |jobs| {
        let mut a = on_volume(jobs, false);
        a.uncached = true;
        a
    };
    let writing = |bs: u64, stripe: bool| {
        let mut a = on_volume(n, false);
        a.bs = Some(BlockSizeArg::Bytes(bs));
        a.align = stripe.then_some(AlignArg::Stripe);
        a
    };
    let adapters: Vec<String> = shared.iter().map(|(a, _)| a.clone()).collect();
    crate::document::compare::phase_plan(
        &shown,
        &adapters,
        args.solo,
        writes.is_some(),
        args.run.uncached,
        args.repeat,
    )
    .into_iter()
    .map(|(kind, r)| {
        let (a, owned) = match &kind {
            PhaseKind::Alone { member } => {
                let m = members.iter().zip(&shown).find(|(_, s)| *s == member);
                let member: Vec<PathBuf> = m.map(|(p, _)| p.clone()).into_iter().collect();
                (member_args(&args.run, member), false)
            }
            PhaseKind::Together => (member_args(&args.run, members.to_vec()), false),
            PhaseKind::Shared { adapter } => {
                let group = shared.iter().find(|(a, _)| a == adapter);
                let group: Vec<PathBuf> = group.map(|(_, m)| m.clone()).unwrap_or_default();
                (member_args(&args.run, group), false)
            }
            PhaseKind::VolumeFullStripeWrites { .. } => {
                // (Planned only with `writes`.)
                let s = writes.unwrap_or_default();
                (writing(s.full_stripe, true), owned)
            }
            PhaseKind::VolumeSubStripeWrites { .. } => {
                // (Planned only with `writes`.)
                let s = writes.unwrap_or_default();
                (writing(s.chunk, false), owned)
            }
            PhaseKind::VolumeOneWorker => (on_volume(1, false), owned),
            PhaseKind::VolumeOneBuffered => (on_volume(1, true), owned),
            PhaseKind::VolumeOneUncached => (uncached(1), owned),
            PhaseKind::VolumeUncached { .. } => (uncached(n), owned),
            PhaseKind::VolumePerMember { .. } => (on_volume(n, false), owned),
            PhaseKind::VolumeBuffered { .. } | PhaseKind::Other(_) => (on_volume(n, true), owned),
        };
        (kind, r, a, owned)
    })
    .collect()
}
