//! `stripebench topology`: the stack under a device, file or mount point.

use anyhow::Result;

use crate::base::error::EXIT_OK;
use crate::cli::TopologyArgs;
use crate::device::topology;
use crate::document::facts::{Shape, TopologyDef};
use crate::output::stdout;

pub fn run(args: &TopologyArgs) -> Result<u8> {
    let src = topology::Sources::system(args.dm_table.as_deref())?;
    let t = topology::discover(&args.target, &src)?;
    // Which leaves share a host adapter (issue 42).
    let leaves: Vec<String> = t.leaves().iter().map(|l| l.name.clone()).collect();
    let paths = crate::device::paths::group(&src.host, &leaves);
    if args.json {
        stdout::bytes(&crate::report::json::render(
            &crate::report::topology::with_paths(&TopologyDef::doc(&t), &paths),
        ));
    } else {
        let mut text = crate::report::topology::render(&t);
        text.push_str(&crate::report::topology::render_paths(&paths));
        stdout::text(&text);
    }
    Ok(EXIT_OK)
}
