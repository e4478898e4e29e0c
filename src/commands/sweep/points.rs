//! A sweep's points before and while they run: each validated as `run`
//! would, each guarded by a dry run before the first one measures, and each
//! measured with its repeats.

use std::path::PathBuf;

use anyhow::Result;

use crate::base::error::usage;
use crate::cli::sweep::apply;
use crate::cli::SweepArgs;
use crate::document::run::RunDocument;
use crate::document::sweep::{PointDoc, SweepDocument};
use crate::measure::config::RunConfig;
use crate::measure::session::{measure, Outcome};
use crate::output::Outputs;

/// A point's label (`mode=direct rw=write`) and what refuses it (empty: nothing).
pub type Verdict = (String, Vec<String>);
/// A point's values, its validated configuration and the targets it drives.
pub type PointPlan = (Vec<(String, String)>, RunConfig, Vec<PathBuf>);

/// Each point, run as a dry run: its guard checks (consent, the device's
/// state, aliases, holes) and the plan's checks (sizes, memory). A refusal
/// that is not a check (an option the target cannot take) refuses the point too.
pub fn guard_points(plans: &[PointPlan], outputs: &crate::output::Request) -> Result<Vec<Verdict>> {
    let mut out = Vec::new();
    for (pt, cfg, paths) in plans {
        let label = label(pt);
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

/// A point's values as the table and the stream name it (`mode=direct rw=write`).
pub fn label(pt: &[(String, String)]) -> String {
    pt.iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every point's options, validated as `run` would before any I/O.
pub fn plan_points(
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
pub fn refuse_points(verdicts: &[Verdict]) -> Result<()> {
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
pub fn measure_point(
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
        let run = match measure(cfg, paths, false, out) {
            Ok(Outcome::Done(run)) => run,
            Ok(Outcome::DryRun(..)) => unreachable!("sweep never asks for a dry run"),
            // A signal while the point's workers were set up, before its
            // ramp: nothing measured, as a stop in the ramp (the caller
            // says so in the table and the documents). Seen on a loaded
            // machine, where setting up takes long enough to be hit.
            Err(e) if crate::base::error::Interrupted::is(&e) => return Ok((runs, true)),
            Err(e) => return Err(e),
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

/// Runs the points in order, each row printed and the documents rewritten
/// after it; a signal ends the sweep after the point it stopped.
pub fn run_points(
    args: &SweepArgs,
    plans: &[PointPlan],
    doc: &mut SweepDocument,
    out: &Outputs,
    hub: Option<crate::measure::live::LiveHub>,
) -> Result<()> {
    let progress = crate::measure::progress::Progress::new(!args.run.no_progress);
    let total_points = plans.len() * args.repeat;
    let per_point = plans[0].1.duration.as_secs_f64() + plans[0].1.ramp.as_secs_f64();
    // The CSV is kept whole in memory and rewritten after every point, like
    // the JSON: an interrupted sweep keeps what it finished.
    // With --json -, stdout carries only the document: the table goes to stderr.
    let say = |line: &str| out.say(&format!("{line}\n"));
    for line in crate::report::sweep::preamble(&doc.params, plans.len(), args.repeat) {
        say(&line);
    }
    // `--param target`: which target each number is.
    let mut legend: Vec<String> = Vec::new();
    for (pt, _, paths) in plans {
        if let (Some((_, k)), [path]) = (pt.iter().find(|(n, _)| n == "target"), &paths[..]) {
            let line = format!("{k} = {}", crate::base::error::show_path(path));
            if !legend.contains(&line) {
                legend.push(line);
            }
        }
    }
    if !legend.is_empty() {
        say(&format!(
            "target: {} (one at a time: each point drives one target alone)",
            legend.join(", ")
        ));
    }
    say(&crate::report::sweep::header(&doc.params));
    let mut done_runs = 0;
    // The warnings listed so far: each is listed once in the sweep.
    let mut said: Vec<String> = Vec::new();
    for (pt, cfg, paths) in plans {
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
        for line in crate::report::sweep::point_lines(&p, &mut said) {
            say(&line);
        }
        doc.points.push(p);
        // Rewritten whole after every point (the JSON, the CSV): an
        // interrupted sweep keeps what it finished.
        out.save_point(crate::report::Doc::Sweep(doc))?;
        if partial {
            doc.interrupted = true;
            break;
        }
    }
    progress.finish();
    Ok(())
}
