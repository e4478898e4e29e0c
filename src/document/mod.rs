//! Layer `document`: the JSON contract (`docs/json.md`): the run, sweep,
//! compare, merge, plan and diff documents, and their assembly from a finished
//! run or from other documents. No I/O beyond reading the documents it
//! merges, plans from, diffs or renders (`load`).
//!
//! May import `measure` (what a finished run holds), `device`, `analysis`,
//! `base`; never `report`, `cli` or `commands`.

pub mod compare;
pub mod curve;
pub mod diff;
pub mod finished;
pub mod load;
pub mod merge;
pub mod plan;
pub mod run;
pub mod sweep;
pub mod version;

/// The largest document read: far above what any run, sweep or fleet of
/// thousands of hosts writes, far below this machine's memory.
pub const MAX_DOCUMENT_BYTES: u64 = 256 << 20;

/// Reads a document given on the command line, refusing one larger than
/// [`MAX_DOCUMENT_BYTES`]: `merge --preflight /dev/zero` (or a FIFO that
/// never ends) would otherwise take every byte of memory before failing.
pub fn read_document(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_DOCUMENT_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {} MiB: not a document stripebench wrote",
            MAX_DOCUMENT_BYTES >> 20
        )));
    }
    Ok(bytes)
}
