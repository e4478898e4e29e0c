//! `stripebench sweep`: the cartesian product of parameter values, each point
//! a full run (cold cache for buffered reads, settings put back after it),
//! tabled as it goes, appended to the output files at once so an interrupted
//! sweep keeps every finished point, and plotted at the end.

use std::path::PathBuf;

use anyhow::Result;

use crate::analysis::summary::median;
use crate::base::error::{usage, UsageError};
use crate::cli::{RunArgs, SweepArgs};
use crate::commands::measured::{measure, member_paths, Outcome};
use crate::document::run::{RunDocument, ToolInfo};
use crate::document::sweep::{
    curve_values, points, PointDoc, RateValue, SweepDocument, CURVE_PCTS,
};
use crate::measure::config::{RateLimit, RunConfig, RwMode};
use crate::report::sweep::{header, row};

/// Applies one point's values to the run options; returns them and the
/// targets the point drives.
fn apply(
    base: &RunArgs,
    targets: &[PathBuf],
    point: &[(String, String)],
) -> Result<(RunArgs, Vec<PathBuf>), UsageError> {
    let mut a = base.clone();
    let mut paths = targets.to_vec();
    let bad = |n: &str, v: &str, why: String| UsageError(format!("--param {n}={v}: {why}"));
    for (n, v) in point {
        match n.as_str() {
            "readahead" => {
                a.readahead =
                    Some(v.parse().map_err(|_| {
                        bad(n, v, "give read_ahead_kb in KiB, a whole number".into())
                    })?)
            }
            "bs" => a.bs = Some(crate::cli::parse_bs(v).map_err(|e| bad(n, v, e))?),
            "jobs" => {
                a.jobs = v
                    .parse()
                    .ok()
                    .filter(|&j| (1..=4096).contains(&j))
                    .ok_or_else(|| bad(n, v, "give a count from 1 to 4096".into()))?
            }
            "iodepth" => {
                a.iodepth = v
                    .parse()
                    .ok()
                    .filter(|&j| (1..=4096).contains(&j))
                    .ok_or_else(|| bad(n, v, "give a depth from 1 to 4096".into()))?
            }
            "mode" => match v.as_str() {
                "direct" => (a.direct, a.buffered) = (false, false),
                "buffered" => (a.direct, a.buffered) = (false, true),
                _ => return Err(bad(n, v, "mode is direct or buffered".into())),
            },
            "rw" => {
                a.rw = <RwMode as clap::ValueEnum>::from_str(v, true).map_err(|_| {
                    bad(
                        n,
                        v,
                        "rw is read, write, randread, randwrite or randrw".into(),
                    )
                })?
            }
            "members" => {
                let k: usize = v
                    .parse()
                    .ok()
                    .filter(|&k| k >= 1)
                    .ok_or_else(|| bad(n, v, "give how many members, at least 1".into()))?;
                if k > targets.len() {
                    return Err(bad(
                        n,
                        v,
                        format!("there are only {} targets/members", targets.len()),
                    ));
                }
                paths.truncate(k);
            }
            "rate" => {
                (a.rate, a.rate_iops) = match RateValue::parse(v).map_err(|e| bad(n, v, e))? {
                    RateValue::Max => (None, None),
                    RateValue::Bytes(b) => (Some(b), None),
                    RateValue::Iops(i) => (None, Some(i)),
                    // A share of what the point's max delivers, known once
                    // that point ran ([`resolve_pct`]); validated as 1 I/O/s.
                    RateValue::Pct(_) => (None, Some(1.0)),
                }
            }
            _ => unreachable!("parse_param admits only known names"),
        }
    }
    if a.iodepth > 1 && a.engine == crate::cli::EngineArg::Sync {
        a.engine = crate::cli::EngineArg::Auto;
    }
    a.targets = paths.clone();
    a.formats = Default::default();
    a.members = None;
    Ok((a, paths))
}

/// The sweep's parameters with `rate=curve` spelled out (`max`, then
/// `--curve`'s percentages); refuses `--curve` without it, and a rate
/// swept and set at once.
fn expand_curve(args: &SweepArgs) -> Result<Vec<crate::document::sweep::Param>, UsageError> {
    let mut params = args.params.clone();
    let rate = params.iter_mut().find(|p| p.name == "rate");
    if rate.is_some() && (args.run.rate.is_some() || args.run.rate_iops.is_some()) {
        return Err(UsageError(
            "--param rate sweeps each worker's schedule: drop --rate/--rate-iops".into(),
        ));
    }
    match rate {
        Some(p) if p.values == ["curve"] => {
            p.values = curve_values(if args.curve.is_empty() {
                &CURVE_PCTS
            } else {
                &args.curve
            })
        }
        _ if !args.curve.is_empty() => {
            return Err(UsageError(
                "--curve chooses the points of --param rate=curve: add --param rate=curve, or drop --curve".into(),
            ))
        }
        _ => {}
    }
    Ok(params)
}

/// A point at a share of the unthrottled rate (`rate=N%`) gets its
/// schedule from the point with the same other values at `rate=max`, which
/// ran before it: N% of what each of its workers delivered (their mean), in
/// I/Os per second. Other points are returned as they are.
fn resolve_pct(
    pt: &[(String, String)],
    cfg: &RunConfig,
    done: &[PointDoc],
) -> Result<RunConfig, String> {
    let Some(pct) = pt.iter().find_map(|(n, v)| match RateValue::parse(v) {
        Ok(RateValue::Pct(p)) if n == "rate" => Some(p),
        _ => None,
    }) else {
        return Ok(cfg.clone());
    };
    let is_max = |p: &PointDoc| {
        p.values.len() == pt.len()
            && p.values
                .iter()
                .zip(pt)
                .all(|((n, v), (pn, pv))| n == pn && if n == "rate" { v == "max" } else { v == pv })
    };
    let Some(max) = done.iter().find(|p| is_max(p)) else {
        return Err("its rate=max point did not run".into());
    };
    let run = &max.runs[0];
    let per_worker = run.total.iops / run.workers.len().max(1) as f64;
    let iops = per_worker * pct / 100.0;
    let rate = RateLimit::Iops(iops);
    rate.period_ns(1).map_err(|_| {
        format!(
            "{pct}% of the {per_worker:.1} IOPS per worker delivered at max is below one I/O per second"
        )
    })?;
    let mut c = cfg.clone();
    c.rate = Some(rate);
    Ok(c)
}

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
            Err(e) if e.downcast_ref::<UsageError>().is_some() => vec![format!("{e:#}")],
            Err(e) => return Err(e),
        };
        out.push((label, refused));
    }
    Ok(out)
}

/// `sweep --dry-run`: each point's verdict, no I/O.
fn dry_run(verdicts: &[Verdict]) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "dry run: sweep of {} point(s), each checked as 'run --dry-run' would; no I/O was done\n",
        verdicts.len()
    );
    for (label, refused) in verdicts {
        if refused.is_empty() {
            let _ = writeln!(out, "point {label}: ok");
        } else {
            let _ = writeln!(out, "point {label}: REFUSED");
            for r in refused {
                let _ = writeln!(out, "  [REFUSED] {r}");
            }
        }
    }
    let bad = verdicts.iter().filter(|v| !v.1.is_empty()).count();
    let _ = writeln!(
        out,
        "{}",
        if bad == 0 {
            "every point passes: the sweep would go ahead".to_string()
        } else {
            format!("{bad} point(s) fail: the sweep would be refused before any point runs (exit code 2)")
        }
    );
    out
}

pub fn run(args: &SweepArgs) -> Result<u8> {
    crate::commands::measured::preflight();
    let base = &args.run;
    base.refuse_for("sweep", &["histogram", "start-at"])?;
    if args.params.is_empty() {
        return usage("sweep needs at least one --param NAME=V1,V2,...");
    }
    let params = expand_curve(args)?;
    let mut names: Vec<&str> = Vec::new();
    for p in &params {
        if names.contains(&p.name.as_str()) {
            return usage(format!(
                "--param {} is given twice: put all its values in one list",
                p.name
            ));
        }
        names.push(&p.name);
    }
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
    // Every point is validated before any I/O.
    let available = crate::base::cpus::available_cpus();
    let mut plans = Vec::new();
    for pt in &pts {
        let (a, paths) = apply(base, &targets, pt)?;
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
        crate::output::stdout::bytes(dry_run(&verdicts).as_bytes());
        return Ok(if verdicts.iter().all(|v| v.1.is_empty()) {
            crate::base::error::EXIT_OK
        } else {
            crate::base::error::EXIT_USAGE
        });
    }
    if let Some((label, refused)) = verdicts.iter().find(|v| !v.1.is_empty()) {
        let n = verdicts.iter().filter(|v| !v.1.is_empty()).count();
        return usage(format!(
            "refusing the sweep before any point runs: point {label}: {}{}; see every point's verdict with --dry-run",
            refused[0],
            if n > 1 {
                format!(" ({n} of {} points are refused)", verdicts.len())
            } else {
                String::new()
            }
        ));
    }
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
        let cfg = &match resolve_pct(pt, cfg, &doc.points) {
            Ok(c) => c,
            Err(why) => {
                let label: Vec<String> = pt.iter().map(|(n, v)| format!("{n}={v}")).collect();
                say(&format!("  skipped {}: {why}", label.join(" ")));
                done_runs += args.repeat;
                continue;
            }
        };
        let mut runs = Vec::new();
        let mut partial = false;
        for _ in 0..args.repeat {
            let label: Vec<String> = pt.iter().map(|(n, v)| format!("{n}={v}")).collect();
            progress.message(&format!(
                "point {}/{}: {} ({:.0}s left for the sweep)",
                done_runs + 1,
                total_points,
                label.join(" "),
                (total_points - done_runs) as f64 * per_point
            ));
            let point_hub = hub.clone().map(|mut h| {
                h.label = Some(("point", label.join(" ")));
                h
            });
            let Outcome::Done(run_doc) = measure(cfg, paths, false, &out.for_run(point_hub))?
            else {
                unreachable!("sweep never asks for a dry run")
            };
            done_runs += 1;
            // The run in progress is kept, marked partial, and the sweep ends;
            // one stopped in its ramp measured nothing (a window of 0 s that
            // ends before it opens): it is left out, not drawn as 0 MB/s.
            partial = run_doc.interrupted;
            if !(partial && run_doc.window.seconds <= 0.0) {
                runs.push(*run_doc);
            }
            if partial {
                break;
            }
        }
        if runs.is_empty() {
            say("  (interrupted in the ramp of this point: nothing measured, no row)");
            doc.interrupted = true;
            break;
        }
        let rates: Vec<f64> = runs.iter().map(|r| r.total.bytes_per_sec).collect();
        let med = median(rates.clone());
        // The run closest to the median stands for the point.
        runs.sort_by(|a, b| {
            (a.total.bytes_per_sec - med)
                .abs()
                .total_cmp(&(b.total.bytes_per_sec - med).abs())
        });
        let p = PointDoc {
            values: pt.clone(),
            bytes_per_sec_median: med,
            bytes_per_sec_min: rates.iter().copied().fold(f64::INFINITY, f64::min),
            bytes_per_sec_max: rates.iter().copied().fold(0.0, f64::max),
            runs,
            partial,
        };
        progress.message("");
        // A point whose figures come with warnings is marked, and each is
        // listed under it: a normal-looking row must not hide them.
        let mut point_warnings: Vec<&String> = Vec::new();
        for w in p.runs.iter().flat_map(|r| &r.warnings) {
            if !point_warnings.contains(&w) {
                point_warnings.push(w);
            }
        }
        say(&if point_warnings.is_empty() {
            row(&p)
        } else {
            format!("{}  ! {} warning(s)", row(&p), point_warnings.len())
        });
        for r in crate::report::sweep::target_rows(&p) {
            say(&r);
        }
        if p.partial {
            say("  (partial: interrupted during this point; its figures cover what was measured)");
        }
        if let Some(b) = p.runs[0]
            .cache
            .as_ref()
            .and_then(|c| c.memcpy_bytes_per_sec)
        {
            say(&format!(
                "  page cache preloaded (--cached); memory-copy ceiling, one thread: {:.1} MB/s",
                b / 1e6
            ));
        }
        for w in &point_warnings {
            say(&format!("  warning: {w}"));
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
