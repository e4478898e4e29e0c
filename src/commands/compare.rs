//! `stripebench compare VOLUME`: does the volume deliver what its members
//! can? The same read workload runs in phases (each member alone, all
//! members at once, the volume with one worker and with one per member, the
//! volume through the page cache); `document::compare` makes the stripe
//! efficiency, each member's share and the slowest member of them.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::base::error::{show_path, usage};
use crate::cli::{CompareArgs, RunArgs};
use crate::device::scratch::Testbed;
use crate::device::topology::{self, Topology};
use crate::document::compare::{self, Phase, PhaseKind, Volume};
use crate::measure::config::{RunConfig, RwMode, TestbedConfig};
use crate::measure::session::{self, Outcome};

/// One phase to run: what it measures, its options, whether its targets
/// are files stripebench made.
type Planned = (PhaseKind, RunArgs, bool);

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
    let mut outputs = crate::report::output::given(&[
        ("--json", base.json.as_deref()),
        ("--html", base.html.as_deref()),
    ]);
    outputs.extend(crate::report::live::outputs(
        base.live.as_deref(),
        base.metrics.as_deref(),
    ));
    let out =
        crate::report::output::check(&outputs, &crate::device::protected_paths(&protected), &[])?;
    // One stream for every phase; each line says its phase.
    let hub = crate::report::live::open(
        base.live.as_deref(),
        base.live_format,
        base.metrics.as_deref(),
        &out,
    )?;
    let mut notes = Vec::new();
    let (vol_target, bed) = volume_target(args, &mut notes)?;
    let plan = plan_phases(args, &members, &vol_target, bed.is_some());
    guard_phases(&plan)?;
    let phases = run_phases(plan, |kind, cfg| {
        cfg.live_hub = hub.clone().map(|mut h| {
            h.label = Some(("phase", kind.to_string()));
            h
        });
    })?;
    let volume = Volume {
        volume: show_path(volume),
        topology: topo,
        test_file: bed.as_ref().map(|_| vol_target.display().to_string()),
        notes,
    };
    let doc = compare::assemble(volume, phases, crate::base::signals::interrupted());
    // With --json -, --live - or --html -, stdout carries that: the table goes to stderr.
    let stdout_taken = [
        base.json.as_deref(),
        base.live.as_deref(),
        base.html.as_deref(),
    ]
    .into_iter()
    .flatten()
    .any(crate::report::output::is_stdout);
    crate::report::output::say(&crate::report::compare::render(&doc), stdout_taken);
    if let Some(j) = &base.json {
        out.write(j, &crate::report::json::render(&doc))?;
    }
    if let Some(h) = &base.html {
        out.write_text(h, &crate::report::html::compare(&doc)?)?;
    }
    drop(bed);
    let failed = doc.phases.iter().any(|p| p.document.has_errors());
    Ok(crate::base::error::exit_code(doc.interrupted, failed))
}

/// What compare does not take: more than one volume, writes, options it
/// chooses per phase, options that make no comparison.
fn refuse_options(base: &RunArgs) -> Result<()> {
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

/// A phase's options: the base's, on `targets` with `jobs` workers each.
fn phase_args(base: &RunArgs, targets: Vec<PathBuf>, jobs: usize, buffered: bool) -> RunArgs {
    let mut a = base.clone();
    a.targets = targets;
    a.jobs = jobs;
    a.buffered = buffered;
    a.direct = false;
    a.json = None;
    a.csv = None;
    a.html = None;
    a.histogram = false;
    a.members = None;
    a
}

/// A phase's validated configuration.
fn config(a: &RunArgs) -> Result<RunConfig> {
    let mut c = crate::cli::validate::run_config(a, &crate::base::cpus::available_cpus(), None)?;
    c.progress = !a.no_progress;
    Ok(c)
}

/// What the volume phases read: the block device itself, or on a mounted
/// volume a test file made for them (removed when the bed is dropped).
fn volume_target(
    args: &CompareArgs,
    notes: &mut Vec<String>,
) -> Result<(PathBuf, Option<Testbed>)> {
    let (base, volume) = (&args.run, &args.run.targets[0]);
    let meta = std::fs::metadata(volume)
        .with_context(|| format!("cannot inspect {}", volume.display()))?;
    if meta.file_type().is_file() {
        return usage(format!(
            "{} is a file: give the volume (a block device or a mount point)",
            show_path(volume)
        ));
    }
    if !meta.is_dir() {
        return Ok((volume.clone(), None));
    }
    let sizing = crate::device::test_file::size(volume, args.file_size, base.offset, base.size)?;
    notes.extend(sizing.note);
    let tb = Testbed::create(
        &TestbedConfig {
            dir: volume.clone(),
            files: 1,
            file_size: sizing.size,
        },
        base.seed.unwrap_or(1),
        "the volume phases' test file",
        sizing.fix,
    )?;
    Ok((tb.files[0].clone(), Some(tb)))
}

/// Every phase, in order, with its options.
fn plan_phases(
    args: &CompareArgs,
    members: &[PathBuf],
    volume: &std::path::Path,
    owned: bool,
) -> Vec<Planned> {
    let shown: Vec<String> = members.iter().map(|m| m.display().to_string()).collect();
    let n = members.len();
    let on_volume =
        |jobs, buffered| phase_args(&args.run, vec![volume.to_path_buf()], jobs, buffered);
    compare::phase_kinds(&shown, args.solo)
        .into_iter()
        .map(|kind| match &kind {
            PhaseKind::Alone { member } => {
                let m = members[shown.iter().position(|s| s == member).unwrap_or(0)].clone();
                (kind, phase_args(&args.run, vec![m], 1, false), false)
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

/// Every phase is guarded (as its dry run) before the first one runs, so
/// that a phase refused late does not waste the ones before it.
fn guard_phases(plan: &[Planned]) -> Result<()> {
    for (kind, a, owned) in plan {
        let mut dry = config(a)?;
        dry.dry_run = true;
        if let Outcome::DryRun(_, checks) = session::measure(&dry, &dry.targets, *owned)? {
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
/// rest. `wire`: the phase's outputs on its configuration.
fn run_phases(plan: Vec<Planned>, wire: impl Fn(&PhaseKind, &mut RunConfig)) -> Result<Vec<Phase>> {
    let mut phases = Vec::new();
    for (kind, a, owned) in plan {
        if crate::base::signals::interrupted() {
            break;
        }
        eprintln!("stripebench compare: {kind}");
        // measure() starts a buffered read cold itself.
        let mut cfg = config(&a)?;
        wire(&kind, &mut cfg);
        let Outcome::Done(run) = session::measure(&cfg, &cfg.targets, owned)? else {
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
