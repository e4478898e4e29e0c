//! `stripebench merge`: many hosts' run documents as one fleet.

use anyhow::Result;

use crate::base::error::EXIT_OK;
use crate::cli::MergeArgs;
use crate::document::merge;
use crate::document::read::Reader;
use crate::output::{Outputs, Request};
use crate::report;

pub fn run(args: &MergeArgs) -> Result<u8> {
    let out = Outputs::check(
        Request::json(args.json.as_deref()),
        report::Kind::Merge,
        &[],
        &args.files,
    )?;
    // Each document is read when the merge comes to it.
    let documents = || {
        args.files
            .iter()
            .map(|p| super::source::read_given(p, Reader::Merge, &merge::TAKES)?.into_merge())
    };
    if args.list_repeats {
        for (i, why) in merge::repeats(documents())? {
            crate::outln!("{} {why}", i + 1);
        }
        return Ok(EXIT_OK);
    }
    let launch = merge::Launch {
        preflight: args.preflight.as_deref().map(preflight).transpose()?,
        missing: args.missing.clone(),
    };
    let m = merge::merge(documents(), args.force, launch)?;
    out.say(&report::merge::render(&m));
    out.write(report::Doc::Merge(&m))?;
    Ok(EXIT_OK)
}

/// The `--preflight` record, read from its file.
fn preflight(path: &std::path::Path) -> Result<merge::Preflight, crate::document::Error> {
    let shown = crate::base::error::show_path(path);
    match crate::base::input::read(path, &crate::base::input::PREFLIGHT) {
        Ok(bytes) => merge::read_preflight(&bytes, &shown),
        Err(error) => Err(crate::document::Error::PreflightUnreadable { shown, error }),
    }
}
