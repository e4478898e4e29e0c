//! `stripebench plan`: a capacity plan from measured scaling points.

use anyhow::Result;

use crate::base::error::EXIT_OK;
use crate::cli::PlanArgs;
use crate::output::{Outputs, Request};
use crate::report;

pub fn run(args: &PlanArgs) -> Result<u8> {
    if let Some(limit) = args.p99 {
        return latency(args, limit);
    }
    let mut req = Request::json(args.json.as_deref());
    req.set("plot", args.plot.clone());
    let out = Outputs::check(req, report::Kind::Plan, &[], &args.files)?;
    let (points, unit, warnings) = crate::document::plan::points_from(
        args.files.iter().map(|p| super::source::read_source(p)),
        args.force,
    )?;
    let p = crate::document::plan::plan(points, unit, &args.at, args.target, warnings);
    if !p.trusted && !args.force {
        // The fit and its residuals, then the refusal: nothing is predicted.
        // Refused: no document is written, so stdout is free for the fit.
        crate::output::stdout::say(&report::plan::render_fit(&p), false);
        return crate::base::error::usage(format!(
            "refusing to predict: {}",
            report::plan::untrusted(&p)
        ));
    }
    out.say(&report::plan::render(&p));
    out.write(report::Doc::Plan(&p))?;
    Ok(EXIT_OK)
}

/// `plan CURVE.json --p99 DURATION`: the highest rate of a latency curve
/// within the objective; exit 1 when some combination has none.
fn latency(args: &PlanArgs, limit: std::time::Duration) -> Result<u8> {
    let given = [
        ("--at", !args.at.is_empty()),
        ("--target", args.target.is_some()),
        ("--plot", args.plot.is_some()),
        ("--force", args.force),
    ];
    if let Some((name, _)) = given.iter().find(|g| g.1) {
        return crate::base::error::usage(format!(
            "plan --p99 reads one latency curve: {name} is for the scaling fit, drop it"
        ));
    }
    let [file] = args.files.as_slice() else {
        return crate::base::error::usage(
            "plan --p99 reads one latency curve: give one sweep document (sweep --param rate=curve --json)",
        );
    };
    let out = Outputs::check(
        Request::json(args.json.as_deref()),
        report::Kind::Latency,
        &[],
        &args.files,
    )?;
    let limit_ns = u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX);
    let p = crate::document::curve::latency_plan(&super::source::read_source(file)?, limit_ns)?;
    out.say(&report::plan::render_latency(&p));
    out.write(report::Doc::Latency(&p))?;
    Ok(if p.all_met() {
        EXIT_OK
    } else {
        crate::base::error::EXIT_FAILURE
    })
}
