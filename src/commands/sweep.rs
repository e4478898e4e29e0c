//! `stripebench sweep`: the cartesian product of parameter values, each point
//! a full run (cold cache for buffered reads, settings put back after it),
//! tabled as it goes, appended to the output files at once so an interrupted
//! sweep keeps every finished point, and plotted at the end.

use std::path::PathBuf;

use anyhow::Result;

use crate::base::error::usage;
use crate::cli::sweep::apply;
use crate::cli::SweepArgs;
use crate::device::stripes::member_paths;
use crate::document::run::{RunDocument, ToolInfo};
use crate::document::sweep::{points, PointDoc, SweepDocument};
use crate::measure::config::RunConfig;
use crate::measure::session::{measure, Outcome};
use crate::report::sweep::header;

/// A point's label (`mode=direct rw=write`) and what refuses it (empty: nothing).
type Verdict = (String, Vec<String>);
/// A point's values, its validated configuration and the targets it drives.
type PointPlan = (Vec<(String, String)>, RunConfig, Vec<PathBuf>);

/// Each point, run as a dry run: its guard checks (consent, the device's
/// state, aliases, holes) and the plan's checks (sizes, memory). A refusal
/// that is not a check (an option the target cannot take) refuses the point too.
fn guard_points(plans: &[PointPlan], outputs: &crate::output::Request) -> Result<Vec<Verdict>> {
    let mut out = Vec::new();
    for (pt, cfg, paths) in plans {
        let label = pt
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        let mut dry = cfg.clone();
        dry.dry_run = true;
        let refused = match measure(&dry, paths, false, outputs) {
            Ok(Outcome::DryRun(_, checks)) => checks
                .iter()
                .flat_map(|(_, cs)| cs.iter().filter(|c| !c.passed))
                .map(|c| c.detail.clone())
                .collect(),
            Ok(Outcome::Done(_)) => unreachable!("a dry run measures nothing"),
            // A refusal (the user's to fix, exit 2), of whichever layer.
            Err(e)
                if crate::commands::exit::exit_code_for(&e) == crate::base::error::EXIT_USAGE =>
            {
                vec![format!("{e:#}")]
            }
            Err(e) => return Err(e),
        };
        out.push((label, refused));
    }
    Ok(out)
}

pub fn run(args: &SweepArgs) -> Result<u8> {
    crate::measure::session::preflight();
    let base = &args.run;
    let params = crate::cli::sweep::params(base, &args.params, &args.curve)?;
    let pts = points(&params);
    let total_points = pts.len() * args.repeat;
    if pts.len() > args.max_points {
        return usage(format!(
            "the sweep has {} points, more than --max-points {}: trim the value lists or raise --max-points",
            pts.len(),
            args.max_points
        ));
    }
    let targets: Vec<PathBuf> = match &base.members {
        Some(v) => member_paths(v)?,
        None => base.targets.clone(),
    };
    if targets.is_empty() {
        return usage("sweep needs targets: name them (or --members VOLUME)");
    }
    let plans = plan_points(args, &targets, &pts)?;
    // Every point is guarded too (the write guard, holes, memory), as a dry
    // run of it, before the first one runs: a write point refused after the
    // read points had run lost their time and left a partial sweep.
    // The documents are not the points' (they were checked by name, and
    // are checked whole before the first point runs): the streams are.
    let streams = crate::output::Request {
        formats: Vec::new(),
        ..base.outputs()
    };
    let verdicts = guard_points(&plans, &streams)?;
    if base.dry_run {
        crate::output::stdout::bytes(crate::report::sweep::dry_run(&verdicts).as_bytes());
        return Ok(if verdicts.iter().all(|v| v.1.is_empty()) {
            crate::base::error::EXIT_OK
        } else {
            crate::base::error::EXIT_USAGE
        });
    }
    refuse_points(&verdicts)?;
    let out = crate::output::Outputs::check(
        base.outputs(),
        crate::report::Kind::Sweep,
        &crate::device::protected_paths(&targets),
        &[],
    )?;
    // One stream for the whole sweep; each line says its point.
    let hub = out.live_hub()?;

    let progress = crate::measure::progress::Progress::new(!base.no_progress);
    let per_point = plans[0].1.duration.as_secs_f64() + plans[0].1.ramp.as_secs_f64();
    let mut doc = SweepDocument {
        schema_version: crate::document::run::SCHEMA_VERSION,
        tool: ToolInfo::this(),
        params: params.clone(),
        repeat: args.repeat,
        interrupted: false,
        points: Vec::new(),
    };
    // The CSV is kept whole in memory and rewritten after every point, like
    // the JSON: an interrupted sweep keeps what it finished.
    // With --json -, stdout carries only the document: the table goes to stderr.
    let say = |line: &str| out.say(&format!("{line}\n"));
    say(&format!("sweep: {} point(s) x {} repeat(s); MB/s = 10^6 B/s; dev/app = device bytes / application bytes (<1: cache hits, >1: read-ahead); CPU% = user + system CPU time in the window as a percentage of one core, summed over the workers", pts.len(), args.repeat));
    if params.iter().any(|p| p.name == "rate") {
        say("latency: at max, from each I/O's issue; on a schedule (rate below max), from when it was due, so waiting behind a stall counts; asked IOPS/w: each worker's schedule; schedule: kept, or BEHIND when a worker did not complete what was due");
    }
    say(&header(&params));
    let mut done_runs = 0;
    for (pt, cfg, paths) in &plans {
        if crate::base::signals::interrupted() {
            doc.interrupted = true;
            break;
        }
        // A share of the unthrottled rate: from what that point delivered.
        let cfg = &match crate::document::sweep::schedule(pt, cfg, &doc.points) {
            Ok(c) => c,
            Err(why) => {
                say(&format!("  skipped {}: {why}", label(pt)));
                done_runs += args.repeat;
                continue;
            }
        };
        let point_hub = hub.clone().map(|mut h| {
            h.label = Some(("point", label(pt)));
            h
        });
        let for_run = out.for_run(point_hub);
        let (runs, partial) = measure_point(cfg, paths, args.repeat, &for_run, |i| {
            progress.message(&format!(
                "point {}/{}: {} ({:.0}s left for the sweep)",
                done_runs + i + 1,
                total_points,
                label(pt),
                (total_points - done_runs - i) as f64 * per_point
            ));
        })?;
        // Past a point cut short the sweep ends: only whole points count on.
        done_runs += args.repeat;
        if runs.is_empty() {
            say("  (interrupted in the ramp of this point: nothing measured, no row)");
            doc.interrupted = true;
            break;
        }
        let p = PointDoc::summarize(pt.clone(), runs, partial);
        progress.message("");
        for line in crate::report::sweep::point_lines(&p) {
            say(&line);
        }
        doc.points.push(p);
        // Rewritten whole after every point (the JSON, the CSV): an
        // interrupted sweep keeps what it finished.
        out.save_point(crate::report::Doc::Sweep(&doc))?;
        if partial {
            doc.interrupted = true;
            break;
        }
    }
    progress.finish();
    out.write(crate::report::Doc::Sweep(&doc))?;
    // As run: I/O errors (or bad blocks, or a failed flush) in any point exit 1.
    let failed = doc
        .points
        .iter()
        .flat_map(|p| &p.runs)
        .any(RunDocument::has_errors);
    Ok(crate::base::error::exit_code(doc.interrupted, failed))
}

/// A point's values as the table and the stream name it (`mode=direct rw=write`).
fn label(pt: &[(String, String)]) -> String {
    pt.iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every point's options, validated as `run` would before any I/O.
fn plan_points(
    args: &SweepArgs,
    targets: &[PathBuf],
    pts: &[Vec<(String, String)>],
) -> Result<Vec<PointPlan>> {
    let available = crate::base::cpus::available_cpus();
    let mut plans = Vec::new();
    for pt in pts {
        let (a, paths) = apply(&args.run, targets, pt)?;
        let cfg = crate::cli::validate::run_config(&a, &available, None)?;
        if cfg.readahead_kb.is_some() {
            for p in &paths {
                if crate::device::readahead_knob(p).is_none() {
                    return usage(format!(
                        "--param readahead: {} has no block device under it (tmpfs? btrfs?)",
                        crate::base::error::show_path(p)
                    ));
                }
            }
        }
        plans.push((pt.clone(), cfg, paths));
    }
    Ok(plans)
}

/// Refuses the sweep when any point's dry run was refused.
fn refuse_points(verdicts: &[Verdict]) -> Result<()> {
    let Some((label, refused)) = verdicts.iter().find(|v| !v.1.is_empty()) else {
        return Ok(());
    };
    let n = verdicts.iter().filter(|v| !v.1.is_empty()).count();
    usage(format!(
        "refusing the sweep before any point runs: point {label}: {}{}; see every point's verdict with --dry-run",
        refused[0],
        if n > 1 {
            format!(" ({n} of {} points are refused)", verdicts.len())
        } else {
            String::new()
        }
    ))
}

/// A point's repeats (`starting(i)` before the i-th): each run's document,
/// and whether a signal ended the last one. The run in progress is kept,
/// marked partial, and the point ends; one stopped in its ramp measured
/// nothing (a window of 0 s that ends before it opens): it is left out,
/// not drawn as 0 MB/s.
fn measure_point(
    cfg: &RunConfig,
    paths: &[PathBuf],
    repeat: usize,
    out: &dyn crate::measure::live::RunOutputs,
    starting: impl Fn(usize),
) -> Result<(Vec<RunDocument>, bool)> {
    let mut runs = Vec::new();
    let mut partial = false;
    for i in 0..repeat {
        starting(i);
        let Outcome::Done(run) = measure(cfg, paths, false, out)? else {
            unreachable!("sweep never asks for a dry run")
        };
        let run_doc = crate::document::finished::document(cfg, *run);
        partial = run_doc.interrupted;
        if !(partial && run_doc.window.seconds <= 0.0) {
            runs.push(run_doc);
        }
        if partial {
            break;
        }
    }
    Ok((runs, partial))
}
