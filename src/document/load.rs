//! Any result stripebench wrote earlier (run, sweep, compare or merge), for
//! commands that take "a result" whatever produced it (`report`): the
//! reader ([`crate::document::read`]) with the kinds a result is. Every
//! refusal is one line (exit 2): a file that is not JSON (truncated), is not
//! a stripebench document, has another schema version, is none of the four
//! kinds, or has figures that do not add up.

use crate::document::error::Result;
use crate::document::read::{read, Document, Origin, Reader, READ_BACK};

/// A document of one of the kinds a result is.
pub type AnyDocument = Document;

/// Reads a result from the bytes of the file shown as `shown`.
pub fn load(bytes: &[u8], shown: &str) -> Result<AnyDocument> {
    let origin = Origin {
        shown: shown.to_string(),
        reader: Reader::Report,
    };
    read(bytes, &origin, &READ_BACK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        load(text.as_bytes(), "doc.json").unwrap_err().to_string()
    }

    #[test]
    fn truncated_foreign_and_other_version_documents_are_refused_in_one_line() {
        let e = refused("{\"schema_version\": 1, \"workers\": [");
        assert!(e.contains("truncated"), "{e}");
        let e = refused("{\"name\": \"fio\"}");
        assert!(e.contains("not a stripebench document"), "{e}");
        let e = refused("{\"schema_version\": 99, \"workers\": []}");
        assert!(e.contains("schema version 99"), "{e}");
        let e = refused("{\"schema_version\": 1, \"fit\": {}}");
        assert!(e.contains("of a kind this command does not take"), "{e}");
        let e = refused("{\"schema_version\": 1, \"workers\": [], \"targets\": [], \"total\": 3}");
        assert!(e.contains("window.seconds is missing"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
