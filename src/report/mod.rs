//! Reports: pure functions from a [`RunDocument`](crate::results::RunDocument)
//! to bytes. One file per format; `write_to` owns where the bytes go.

pub mod compare;
pub mod csv;
pub mod dry_run;
pub mod histogram;
pub mod json;
pub mod plot;
pub mod table;

use std::io::Write;

use anyhow::{Context, Result};

use crate::config::OutputPath;

/// Writes `bytes` to a file or to stdout.
pub fn write_to(dest: &OutputPath, bytes: &[u8]) -> Result<()> {
    match dest {
        OutputPath::Stdout => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|()| out.flush())
                .context("cannot write to stdout")
        }
        OutputPath::File(p) => {
            std::fs::write(p, bytes).with_context(|| format!("cannot write report {}", p.display()))
        }
    }
}
