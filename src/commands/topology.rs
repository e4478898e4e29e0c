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
    if args.json {
        stdout::bytes(&crate::report::json::render(&TopologyDef::doc(&t)));
    } else {
        stdout::text(&crate::report::topology::render(&t));
    }
    Ok(EXIT_OK)
}
