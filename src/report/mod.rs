//! Reports: pure functions from a [`RunDocument`](crate::document::run::RunDocument)
//! to bytes. One file per format; `write_to` owns where the bytes go.

pub mod compare;
pub mod csv;
pub mod dry_run;
pub mod histogram;
pub mod json;
pub mod output;
pub mod plan;
pub mod plot;
pub mod sweep;
pub mod table;

use anyhow::Result;

use crate::measure::config::OutputPath;

/// Prints a command's text report and writes its JSON document: the text
/// goes to stdout, or to stderr when `--json -` gives stdout to the document.
pub fn emit<T: serde::Serialize>(
    text: &str,
    json: Option<&std::path::Path>,
    doc: &T,
) -> Result<()> {
    crate::report::output::say(text, json.is_some_and(|p| p.as_os_str() == "-"));
    if let Some(path) = json {
        let mut bytes = serde_json::to_vec_pretty(doc)?;
        bytes.push(b'\n');
        crate::report::output::write(path, &bytes)?;
    }
    Ok(())
}

/// Writes `bytes` to a file (whole, through a rename) or to stdout.
pub fn write_to(dest: &OutputPath, bytes: &[u8]) -> Result<()> {
    match dest {
        OutputPath::Stdout => {
            crate::report::output::stdout(bytes);
            Ok(())
        }
        OutputPath::File(p) => crate::report::output::write_file(p, bytes),
    }
}
