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

/// Prints a command's text report and writes its JSON document: the text
/// goes to stdout, or to stderr when `--json -` gives stdout to the document.
pub fn emit<T: serde::Serialize>(
    text: &str,
    json: Option<&std::path::Path>,
    doc: &T,
) -> Result<()> {
    let dest = json.map(|p| {
        if p.as_os_str() == "-" {
            OutputPath::Stdout
        } else {
            OutputPath::File(p.to_path_buf())
        }
    });
    if dest == Some(OutputPath::Stdout) {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    if let Some(dest) = dest {
        let mut bytes = serde_json::to_vec_pretty(doc)?;
        bytes.push(b'\n');
        write_to(&dest, &bytes)?;
    }
    Ok(())
}

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
