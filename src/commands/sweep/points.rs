//! A sweep's points before and while they run: each validated as `run`
//! would, and each guarded by a dry run before the first one measures
//! (`run.rs` measures them).

use std::path::PathBuf;

use anyhow::Result;

use crate::base::error::usage;
use crate::cli::sweep::apply;
use crate::cli::SweepArgs;
use crate::measure::config::RunConfig;
use crate::measure::series::{self, Point};

/// A point's label (`mode=direct rw=write`) and what refuses it (empty: nothing).
pub type Verdict = (String, Vec<String>);
/// A point's values, its validated configuration and the targets it drives.
pub type PointPlan = (Vec<(String, String)>, RunConfig, Vec<PathBuf>);

/// Each point, run as a dry run (`series::check`): its guard checks
/// (consent, the device's state, aliases, holes) and the plan's checks
/// (sizes, memory). A refusal that is not a check (an option the target
/// cannot take) refuses the point too.
pub fn guard_points(plans: &[PointPlan], outputs: &crate::output::Request) -> Result<Vec<Verdict>> {
    let points: Vec<Point> = plans
        .iter()
        .map(|(pt, cfg, paths)| Point {
            label: label(pt),
            config: cfg.clone(),
            targets: paths.clone(),
            owned: false,
            repeat: 1,
            with: Vec::new(),
        })
        .collect();
    // A refusal (the user's to fix, exit 2), of whichever layer.
    series::check(&points, outputs, &|e| {
        crate::commands::exit::exit_code_for(e) == crate::base::error::EXIT_USAGE
    })
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
    // A point below the minimum would end early and pass unnoticed among
    // the others: a sweep compares points, it does not fail them.
    if args.run.rate_min.is_some() || args.run.rate_iops_min.is_some() {
        return usage("--rate-min and --rate-iops-min fail a run that falls below them; a sweep measures each point and fails none: drop them, or run each point with run");
    }
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
