//! `stripebench report DOC.json -o PATH`: a document written earlier
//! (run, sweep, compare or merge) as the one-file HTML report.

use anyhow::Result;

use crate::base::error::EXIT_OK;
use crate::cli::ReportArgs;
use crate::report;

pub fn run(args: &ReportArgs) -> Result<u8> {
    let out = crate::output::dest::check(
        &[crate::output::dest::Output::new("--output", &args.output)],
        &[],
        std::slice::from_ref(&args.file),
    )?;
    let source = super::source::read_source(&args.file)?;
    let doc = crate::document::load::load(&source.bytes, &source.shown)?;
    out.write_text(&args.output, &report::html::render(&doc)?)?;
    if !crate::output::is_stdout(&args.output) {
        crate::output::note(&format!(
            "report: {}",
            crate::base::error::show_path(&args.output)
        ));
    }
    Ok(EXIT_OK)
}
