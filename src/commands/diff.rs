//! `stripebench diff`: two documents side by side, the changes tested
//! against the noise; exit 1 when one crossed `--threshold`.

use anyhow::Result;

use crate::base::error::{EXIT_FAILURE, EXIT_OK};
use crate::cli::DiffArgs;
use crate::document::diff::{diff, DiffOptions, TAKES};
use crate::document::read::Reader;
use crate::output::{Outputs, Request};
use crate::report;

pub fn run(args: &DiffArgs) -> Result<u8> {
    let out = Outputs::check(
        Request::json(args.json.as_deref()),
        report::Kind::Diff,
        &[],
        &[args.base.clone(), args.new.clone()],
    )?;
    let base = super::source::read_given(&args.base, Reader::Diff, &TAKES)?;
    let new = super::source::read_given(&args.new, Reader::Diff, &TAKES)?;
    let d = diff(
        &base,
        &new,
        &DiffOptions {
            alpha: args.alpha,
            threshold_pct: args.threshold,
            force: args.force,
        },
    )?;
    out.say(&report::diff::render(&d));
    out.write(report::Doc::Diff(&d))?;
    Ok(if d.crossed.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILURE
    })
}
