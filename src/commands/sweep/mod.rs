//! `stripebench sweep`: the cartesian product of parameter values, each point
//! a full run (cold cache for buffered reads, settings put back after it),
//! tabled as it goes, appended to the output files at once so an interrupted
//! sweep keeps every finished point, and plotted at the end.

use std::path::PathBuf;

use anyhow::Result;

mod points;
mod run;

use crate::base::error::usage;
use crate::cli::SweepArgs;
use crate::device::stripes::member_paths;
use crate::document::sweep::{points, SweepDocument};
use points::{guard_points, plan_points, refuse_points};
use run::run_points;

pub fn run(args: &SweepArgs) -> Result<u8> {
    crate::output::warn(&crate::measure::session::preflight()?);
    let base = &args.run;
    let mut params = crate::cli::sweep::params(base, &args.params, &args.curve)?;
    let targets: Vec<PathBuf> = match &base.members {
        Some(v) => member_paths(v)?,
        None => base.targets.clone(),
    };
    crate::cli::sweep::each_target(&mut params, targets.len());
    let pts = points(&params);
    if pts.len() > args.max_points {
        return usage(format!(
            "the sweep has {} points, more than --max-points {}: trim the value lists or raise --max-points",
            pts.len(),
            args.max_points
        ));
    }
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

    let mut doc = SweepDocument::new(params.clone(), args.repeat);
    run_points(args, &plans, &mut doc, &out, hub)?;
    out.write(crate::report::Doc::Sweep(&doc))?;
    // As run: I/O errors (or bad blocks, or a failed flush) in any point exit 1.
    Ok(crate::base::error::exit_code(
        doc.interrupted,
        doc.has_errors(),
    ))
}
