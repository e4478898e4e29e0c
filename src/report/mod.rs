//! Layer `report`: renderers (table, CSV, JSON, SVG, the one-file HTML page
//! in `html/`, the diff, the dry run) as pure functions of documents, and
//! where their bytes go (`output`: checked before any I/O, written whole,
//! stdout that never panics). The exception is `live`: the --live stream
//! and the --metrics file, written while a run goes (non-blocking on a
//! pipe or FIFO, the metrics file rewritten through a rename).
//!
//! May import `document` and the layers below it; never `cli` or
//! `commands`. Names no thread or clock.

pub mod compare;
pub mod csv;
pub mod diff;
pub mod dry_run;
#[cfg(test)]
pub mod fixtures;
pub mod histogram;
pub mod html;
pub mod json;
pub mod live;
pub mod merge;
pub mod output;
pub mod plan;
pub mod plot;
pub mod sweep;
pub mod table;
pub mod topology;

use anyhow::Result;

/// Prints a command's text report and writes its JSON document (to one of
/// the checked outputs `out`): the text goes to stdout, or to stderr when
/// `--json -` gives stdout to the document.
pub fn emit<T: serde::Serialize>(
    text: &str,
    json: Option<&std::path::Path>,
    doc: &T,
    out: &output::Destinations,
) -> Result<()> {
    crate::report::output::say(text, json.is_some_and(output::is_stdout));
    if let Some(path) = json {
        out.write(path, &json::render(doc))?;
    }
    Ok(())
}
