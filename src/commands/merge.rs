//! `stripebench merge`: many hosts' run documents as one fleet.

use anyhow::Result;

use crate::base::error::EXIT_OK;
use crate::cli::MergeArgs;
use crate::output::{Outputs, Request};
use crate::report;

pub fn run(args: &MergeArgs) -> Result<u8> {
    let out = Outputs::check(
        Request::json(args.json.as_deref()),
        report::Kind::Merge,
        &[],
        &args.files,
    )?;
    if args.list_repeats {
        for (i, why) in crate::document::merge::repeats(&args.files)? {
            crate::outln!("{} {why}", i + 1);
        }
        return Ok(EXIT_OK);
    }
    use crate::document::merge::{read_preflight, Launch};
    let launch = Launch {
        preflight: args.preflight.as_deref().map(read_preflight).transpose()?,
        missing: args.missing.clone(),
    };
    let m = crate::document::merge::merge(&args.files, args.force, launch)?;
    out.say(&report::merge::render(&m));
    out.write(report::Doc::Merge(&m))?;
    Ok(EXIT_OK)
}
