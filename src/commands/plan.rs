//! `stripebench plan`: a capacity plan from measured scaling points.

use anyhow::Result;

use crate::base::error::EXIT_OK;
use crate::cli::PlanArgs;
use crate::report;

pub fn run(args: &PlanArgs) -> Result<u8> {
    if let Some(p) = &args.plot {
        report::plot::check_path(p)?;
    }
    report::output::check(
        &report::output::given(&[
            ("--json", args.json.as_deref()),
            ("--plot", args.plot.as_deref()),
        ]),
        &args.files,
    )?;
    let (points, unit, warnings) = crate::document::plan::points_from(&args.files, args.force)?;
    let p = crate::document::plan::plan(points, unit, &args.at, args.target, warnings);
    report::emit(&report::plan::render(&p), args.json.as_deref(), &p)?;
    if let Some(svg) = &args.plot {
        report::plot::plan(&p, svg)?;
        eprintln!("plot: {}", svg.display());
    }
    Ok(EXIT_OK)
}
