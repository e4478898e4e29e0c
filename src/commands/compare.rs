//! `stripebench compare VOLUME`: does the volume deliver what its members
//! can? The same read workload runs in phases (each member alone, all
//! members at once, the volume with one worker and with one per member, the
//! volume through the page cache), then the stripe efficiency (volume ÷
//! members together), each member's share, and the slowest member.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::analysis::summary::flag_slow;
use crate::base::error::{show_path, usage};
use crate::cli::{CompareArgs, RunArgs};
use crate::commands::measured::{measure, Outcome};
use crate::device::scratch::Testbed;
use crate::device::topology;
use crate::document::compare::{CompareDocument, MemberResult, Phase};
use crate::document::run::ToolInfo;
use crate::measure::config::RwMode;
use crate::measure::config::{RunConfig, TestbedConfig};

fn phase_args(base: &RunArgs, targets: Vec<PathBuf>, jobs: usize, buffered: bool) -> RunArgs {
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

pub fn run(args: &CompareArgs) -> Result<u8> {
    crate::commands::measured::preflight();
    let base = &args.run;
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
    let volume = &base.targets[0];
    let src = topology::Sources::system(None)?;
    let topo = topology::discover(volume, &src)?;
    let members: Vec<PathBuf> = topo
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
    // Validate the options once, as run would, before any I/O.
    let cfg_of = |a: &RunArgs| -> Result<RunConfig> {
        let mut c =
            crate::cli::validate::run_config(a, &crate::base::cpus::available_cpus(), None)?;
        c.progress = !a.no_progress;
        Ok(c)
    };
    cfg_of(&phase_args(base, members.clone(), 1, false))?;
    for m in &members {
        if let Err(e) = std::fs::File::open(m) {
            return usage(format!(
                "cannot read member {} ({e}): compare needs root to read the raw members",
                m.display()
            ));
        }
    }

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
    let mut notes = Vec::new();
    let meta = std::fs::metadata(volume)
        .with_context(|| format!("cannot inspect {}", volume.display()))?;
    let mut bed: Option<Testbed> = None;
    let vol_target: PathBuf = if meta.is_dir() {
        let free = crate::device::scratch::free_bytes(volume).unwrap_or(0);
        let mut size = args.file_size.unwrap_or_else(|| {
            (2 * crate::device::cache::meminfo("MemTotal").unwrap_or(0)).min(free / 10 * 9)
        }) & !((1 << 20) - 1);
        // The volume phases read --offset + --size of the file: a file made
        // shorter would be refused only at the first volume phase, after the
        // member phases had measured (and their figures were lost).
        let mut fix = "give a smaller --file-size";
        if let Some(region) = base.size {
            let need = base
                .offset
                .saturating_add(region)
                .saturating_add((1 << 20) - 1)
                & !((1 << 20) - 1);
            if let Some(f) = args
                .file_size
                .filter(|&f| f < base.offset.saturating_add(region))
            {
                return usage(format!(
                    "--file-size {} is smaller than --offset + --size ({}): the volume phases read that much of the test file; give a larger --file-size or a smaller --size",
                    crate::base::units::fmt_bytes(f),
                    crate::base::units::fmt_bytes(base.offset.saturating_add(region))
                ));
            }
            if size < need {
                size = need;
                fix = "give a smaller --size";
            }
        }
        if size < 1 << 20 {
            return usage(format!(
                "{} has too little free space for a test file: free some, or give --file-size",
                show_path(volume)
            ));
        }
        if size < crate::device::cache::meminfo("MemTotal").unwrap_or(0) {
            notes.push(format!(
                "the test file ({}) fits in memory: the buffered phase is read cold (evicted first), but a long phase may re-read cached data (see its device counters)",
                crate::base::units::fmt_bytes(size)
            ));
        }
        let tb = Testbed::create(
            &TestbedConfig {
                dir: volume.clone(),
                files: 1,
                file_size: size,
            },
            base.seed.unwrap_or(1),
            "the volume phases' test file",
            fix,
        )?;
        let f = tb.files[0].clone();
        bed = Some(tb);
        f
    } else if meta.file_type().is_file() {
        return usage(format!(
            "{} is a file: give the volume (a block device or a mount point)",
            show_path(volume)
        ));
    } else {
        volume.clone()
    };

    let run_phase = |name: String, a: RunArgs, owned: bool| -> Result<Phase> {
        eprintln!("stripebench compare: {name}");
        // measure() starts a buffered read cold itself.
        let cfg = cfg_of(&a)?;
        let phase_hub = hub.clone().map(|mut h| {
            h.label = Some(("phase", name.clone()));
            h
        });
        match measure(&cfg, &cfg.targets, owned, &out.for_run(phase_hub))? {
            Outcome::Done(doc) => Ok(Phase::of(name, *doc)),
            Outcome::DryRun(..) => unreachable!("compare never asks for a dry run"),
        }
    };
    let n = members.len();
    let owned = bed.is_some();
    let together_name = "members together, O_DIRECT".to_string();
    let voln_name = format!("volume, {n} workers, O_DIRECT");
    let mut plan: Vec<(String, RunArgs, bool)> = Vec::new();
    if args.solo {
        for m in &members {
            plan.push((
                format!("member {} alone", m.display()),
                phase_args(base, vec![m.clone()], 1, false),
                false,
            ));
        }
    }
    plan.push((
        together_name.clone(),
        phase_args(base, members.clone(), 1, false),
        false,
    ));
    plan.push((
        "volume, 1 worker, O_DIRECT".into(),
        phase_args(base, vec![vol_target.clone()], 1, false),
        owned,
    ));
    plan.push((
        voln_name.clone(),
        phase_args(base, vec![vol_target.clone()], n, false),
        owned,
    ));
    plan.push((
        format!("volume, {n} workers, buffered"),
        phase_args(base, vec![vol_target.clone()], n, true),
        owned,
    ));
    // Every phase is guarded (as its dry run) before the first one runs, so
    // that a phase refused late does not waste the ones before it.
    for (name, a, owned) in &plan {
        let mut dry = cfg_of(a)?;
        dry.dry_run = true;
        if let Outcome::DryRun(_, checks) = measure(&dry, &dry.targets, *owned, &out.for_run(None))?
        {
            if let Some(c) = checks.iter().flat_map(|(_, cs)| cs).find(|c| !c.passed) {
                return usage(format!(
                    "refusing the comparison before any phase runs: phase {name}: {}",
                    c.detail
                ));
            }
        }
    }
    // Phases run in order; an interrupt ends the phase running and skips the
    // rest, and the report covers what was measured.
    let mut phases: Vec<Phase> = Vec::new();
    for (name, a, owned) in plan {
        if crate::base::signals::interrupted() {
            break;
        }
        let p = run_phase(name, a, owned)?;
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
    let interrupted =
        crate::base::signals::interrupted() || phases.iter().any(|p| p.document.interrupted);
    let solo: Vec<f64> = phases
        .iter()
        .filter(|p| p.name.ends_with(" alone"))
        .map(|p| p.bytes_per_sec)
        .collect();
    let together = phases.iter().find(|p| p.name == together_name);
    let voln = phases.iter().find(|p| p.name == voln_name);
    let rates: Vec<f64> = together
        .map(|t| t.document.targets.iter().map(|t| t.bytes_per_sec).collect())
        .unwrap_or_default();
    let sum: f64 = rates.iter().sum();
    let slow = flag_slow(&rates);
    let members_out: Vec<MemberResult> = together
        .map(|t| {
            t.document
                .targets
                .iter()
                .enumerate()
                .map(|(i, t)| MemberResult {
                    path: t.path.clone(),
                    bytes_per_sec: t.bytes_per_sec,
                    share: if sum > 0.0 {
                        t.bytes_per_sec / sum
                    } else {
                        0.0
                    },
                    solo_bytes_per_sec: solo.get(i).copied(),
                    slow: slow == Some(i),
                })
                .collect()
        })
        .unwrap_or_default();
    let efficiency = match (together, voln) {
        (Some(t), Some(v)) if t.bytes_per_sec > 0.0 => Some(v.bytes_per_sec / t.bytes_per_sec),
        _ => None,
    };
    if interrupted {
        notes.push(format!(
            "interrupted: {} of the phases ran; the figures cover what was measured",
            phases.len()
        ));
    }
    let doc = CompareDocument {
        schema_version: crate::document::run::SCHEMA_VERSION,
        tool: ToolInfo::this(),
        interrupted,
        volume: show_path(volume),
        test_file: bed.as_ref().map(|_| vol_target.display().to_string()),
        topology: topo,
        phases,
        efficiency,
        slowest: slow.map(|i| members_out[i].path.clone()),
        members: members_out,
        notes,
    };
    // With --json -, --live - or --html -, stdout carries that: the table goes to stderr.
    out.say(&crate::report::compare::render(&doc));
    out.write(crate::report::Doc::Compare(&doc))?;
    drop(bed);
    let failed = doc.phases.iter().any(|p| p.document.has_errors());
    Ok(crate::base::error::exit_code(interrupted, failed))
}
