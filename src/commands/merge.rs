//! `stripebench merge`: many hosts' run documents as one fleet.

use anyhow::Result;

use crate::base::error::EXIT_OK;
use crate::cli::MergeArgs;
use crate::report;

pub fn run(args: &MergeArgs) -> Result<u8> {
    report::output::check(
        &report::output::given(&[("--json", args.json.as_deref())]),
        &args.files,
    )?;
    let m = crate::document::merge::merge(&args.files, args.force)?;
    report::emit(&report::merge::render(&m), args.json.as_deref(), &m)?;
    Ok(EXIT_OK)
}
