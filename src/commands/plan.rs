//! `stripebench plan`: a capacity plan from measured scaling points.

use anyhow::Result;

use crate::base::error::EXIT_OK;
use crate::cli::PlanArgs;
use crate::report;

pub fn run(args: &PlanArgs) -> Result<u8> {
    if let Some(limit) = args.p99 {
        return latency(args, limit);
    }
    if let Some(p) = &args.plot {
        report::plot::check_path(p)?;
    }
    let out = report::output::check(
        &report::output::given(&[
            ("--json", args.json.as_deref()),
            ("--plot", args.plot.as_deref()),
        ]),
        &[],
        &args.files,
    )?;
    let (points, unit, warnings) = crate::document::plan::points_from(
        args.files.iter().map(|p| super::source::read_source(p)),
        args.force,
    )?;
    let p = crate::document::plan::plan(points, unit, &args.at, args.target, warnings);
    if !p.trusted && !args.force {
        // The fit and its residuals, then the refusal: nothing is predicted.
        crate::report::output::say(&report::plan::render_fit(&p), false);
        return crate::base::error::usage(format!(
            "refusing to predict: {}",
            report::plan::untrusted(&p)
        ));
    }
    report::emit(&report::plan::render(&p), args.json.as_deref(), &p, &out)?;
    if let Some(svg) = &args.plot {
        report::plot::plan(&p, svg, &out)?;
        eprintln!("plot: {}", crate::base::error::show_path(svg));
    }
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
    let out = report::output::check(
        &report::output::given(&[("--json", args.json.as_deref())]),
        &[],
        &args.files,
    )?;
    let limit_ns = u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX);
    let p = crate::document::curve::latency_plan(&super::source::read_source(file)?, limit_ns)?;
    report::emit(
        &report::plan::render_latency(&p),
        args.json.as_deref(),
        &p,
        &out,
    )?;
    Ok(if p.all_met() {
        EXIT_OK
    } else {
        crate::base::error::EXIT_FAILURE
    })
}
