//! `stripebench compare VOLUME`: does the volume deliver what its members
//! can? The same read workload runs in phases (each member alone, all
//! members at once, the volume with one worker and with one per member, the
//! volume through the page cache); `document::compare` makes the stripe
//! efficiency, each member's share and the slowest member of them.

use std::path::PathBuf;

use anyhow::Result;

use crate::base::error::{show_path, usage};
use crate::cli::compare::{config, phase_args, plan_phases, refuse_options, Planned};
use crate::cli::CompareArgs;
use crate::device::topology::{self, Topology};
use crate::document::compare::{self, Phase, PhaseKind, Volume};
use crate::measure::live::LiveHub;
use crate::measure::session::{self, Outcome};
use crate::output::Outputs;

pub fn run(args: &CompareArgs) -> Result<u8> {
    session::preflight();
    let base = &args.run;
    refuse_options(base)?;
    let volume = &base.targets[0];
    let (topo, members) = volume_members(volume)?;
    // Validate the options once, as run would, before any I/O.
    config(&phase_args(base, members.clone(), 1, false))?;
    check_members_readable(&members)?;

    let mut protected = members.clone();
    protected.push(volume.clone());
    let out = crate::output::Outputs::check(
        base.outputs(),
        crate::report::Kind::Compare,
        &crate::device::protected_paths(&protected),
        &[],
    )?;
    // One stream for every phase; each line says its phase.
    let hub = out.live_hub()?;
    let (vol_target, bed, note) = crate::device::test_file::for_volume(
        volume,
        args.file_size,
        base.offset,
        base.size,
        base.seed.unwrap_or(1),
    )?;
    let plan = plan_phases(args, &members, &vol_target, bed.is_some());
    guard_phases(&plan, &out)?;
    let phases = run_phases(plan, &out, |kind| {
        hub.clone().map(|mut h| {
            h.label = Some(("phase", kind.to_string()));
            h
        })
    })?;
    let volume = Volume {
        volume: show_path(volume),
        topology: topo,
        test_file: bed.as_ref().map(|_| vol_target.display().to_string()),
        notes: note.into_iter().collect(),
    };
    let doc = compare::assemble(volume, phases, crate::base::signals::interrupted());
    // With --json -, --live - or --html -, stdout carries that: the table goes to stderr.
    out.say(&crate::report::compare::render(&doc));
    out.write(crate::report::Doc::Compare(&doc))?;
    drop(bed);
    let failed = doc.phases.iter().any(|p| p.document.has_errors());
    Ok(crate::base::error::exit_code(doc.interrupted, failed))
}

/// The volume's storage stack and the members of its striped layer.
fn volume_members(volume: &std::path::Path) -> Result<(Topology, Vec<PathBuf>)> {
    let src = topology::Sources::system(None)?;
    let topo = topology::discover(volume, &src)?;
    let members = topo
        .stripe_members()
        .iter()
        .map(|l| PathBuf::from(&l.path))
        .collect();
    if topo.root.members.is_empty() {
        return usage(format!(
            "{} is not a volume with members ({} is a {}): compare needs md, dm or a btrfs mount point",
            show_path(volume),
            topo.root.name,
            topo.root.kind
        ));
    }
    Ok((topo, members))
}

fn check_members_readable(members: &[PathBuf]) -> Result<()> {
    for m in members {
        if let Err(e) = std::fs::File::open(m) {
            return usage(format!(
                "cannot read member {} ({e}): compare needs root to read the raw members",
                m.display()
            ));
        }
    }
    Ok(())
}

/// Every phase is guarded (as its dry run) before the first one runs, so
/// that a phase refused late does not waste the ones before it.
fn guard_phases(plan: &[Planned], out: &Outputs) -> Result<()> {
    for (kind, a, owned) in plan {
        let mut dry = config(a)?;
        dry.dry_run = true;
        if let Outcome::DryRun(_, checks) =
            session::measure(&dry, &dry.targets, *owned, &out.for_run(None))?
        {
            if let Some(c) = checks.iter().flat_map(|(_, cs)| cs).find(|c| !c.passed) {
                return usage(format!(
                    "refusing the comparison before any phase runs: phase {kind}: {}",
                    c.detail
                ));
            }
        }
    }
    Ok(())
}

/// Phases run in order; an interrupt ends the phase running and skips the
/// rest. `hub`: the phase's live stream, labelled with its kind.
fn run_phases(
    plan: Vec<Planned>,
    out: &Outputs,
    hub: impl Fn(&PhaseKind) -> Option<LiveHub>,
) -> Result<Vec<Phase>> {
    let mut phases = Vec::new();
    for (kind, a, owned) in plan {
        if crate::base::signals::interrupted() {
            break;
        }
        eprintln!("stripebench compare: {kind}");
        // measure() starts a buffered read cold itself.
        let cfg = config(&a)?;
        let phase_hub = hub(&kind);
        let Outcome::Done(run) =
            session::measure(&cfg, &cfg.targets, owned, &out.for_run(phase_hub))?
        else {
            unreachable!("compare never asks for a dry run")
        };
        let p = Phase::of(kind, crate::document::finished::document(&cfg, *run));
        let stop = p.document.interrupted;
        // A phase stopped in its ramp measured nothing (a window of 0 s
        // that ends before it opens): left out, not shown as 0 MB/s.
        if !(stop && p.document.window.seconds <= 0.0) {
            phases.push(p);
        }
        if stop {
            break;
        }
    }
    Ok(phases)
}
