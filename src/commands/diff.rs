//! `stripebench diff`: two documents side by side, the changes tested
//! against the noise; exit 1 when one crossed `--threshold`.

use anyhow::Result;

use crate::base::error::{EXIT_FAILURE, EXIT_OK};
use crate::cli::DiffArgs;
use crate::document::diff::{diff, DiffOptions, TAKES};
use crate::document::read::Reader;
use crate::report;

pub fn run(args: &DiffArgs) -> Result<u8> {
    let out = report::output::check(
        &report::output::given(&[("--json", args.json.as_deref())]),
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
    report::emit(&report::diff::render(&d), args.json.as_deref(), &d, &out)?;
    Ok(if d.crossed.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILURE
    })
}
