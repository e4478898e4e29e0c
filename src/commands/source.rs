//! The document files a command reads (report, diff, merge, plan): a
//! bounded read of each (`base::input::read`), and the reader of the
//! document layer on its bytes. Reading is here, at the top; `document`
//! parses bytes and opens no file.

use std::path::Path;

use crate::document::read::{Given, Kind, Origin, ReadError, Reader, Source};

/// The bytes of a document file given on the command line (a bounded
/// read), or the refusal that names it. The document layer parses; the
/// commands read.
pub fn read_source(path: &Path) -> Result<Source, crate::document::Error> {
    let shown = crate::base::error::show_path(path);
    match crate::base::input::read(path, &crate::base::input::DOCUMENT) {
        Ok(bytes) => Ok(Source { shown, bytes }),
        Err(error) => Err(ReadError::Unreadable { shown, error }.into()),
    }
}

/// A document of one of `kinds` read from `path`, refused in `reader`'s words.
pub fn read_given(
    path: &Path,
    reader: Reader,
    kinds: &[Kind],
) -> Result<Given, crate::document::Error> {
    let source = read_source(path)?;
    let origin = Origin {
        shown: source.shown,
        reader,
    };
    let document = crate::document::read(&source.bytes, &origin, kinds)?;
    Ok(Given {
        shown: origin.shown,
        document,
    })
}
