//! Reads any document stripebench wrote earlier (run, sweep, compare or
//! merge) and tells which it is, for commands that take "a result" whatever
//! produced it (`report`). Every refusal is one line (exit 2): a file that
//! cannot be read, is not JSON (truncated), is not a stripebench document,
//! has another schema version, is none of the four kinds, or has figures
//! that do not add up.

use std::path::Path;

use crate::base::error::{show_path, UsageError};
use crate::document::compare::CompareDocument;
use crate::document::merge::MergedDocument;
use crate::document::run::{RunDocument, SCHEMA_VERSION};
use crate::document::sweep::SweepDocument;

/// A document of one of the kinds stripebench writes.
#[derive(Debug, Clone)]
pub enum AnyDocument {
    Run(Box<RunDocument>),
    Sweep(Box<SweepDocument>),
    Compare(Box<CompareDocument>),
    Merge(Box<MergedDocument>),
}

/// Which kind a document's JSON is, from its shape (each kind has keys of
/// its own); `None` for none of them.
fn kind_of(v: &serde_json::Value) -> Option<&'static str> {
    let has = |k: &str| v.get(k).is_some();
    if v.get("kind").and_then(|k| k.as_str()) == Some("merge") {
        Some("merge")
    } else if has("points") && has("params") {
        Some("sweep")
    } else if has("phases") && has("volume") {
        Some("compare")
    } else if has("workers") && has("targets") && has("total") {
        Some("run")
    } else {
        None
    }
}

/// Reads and parses `path`.
pub fn load(path: &Path) -> Result<AnyDocument, UsageError> {
    let shown = show_path(path);
    let bytes = crate::document::read_document(path)
        .map_err(|e| UsageError(format!("cannot read {shown}: {e}")))?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        let why = if e.is_eof() {
            "it ends early (truncated?)".to_string()
        } else {
            format!("{e}")
        };
        UsageError(format!(
            "{shown} is not a JSON document: {why}; give a document written with --json"
        ))
    })?;
    let Some(version) = v.get("schema_version") else {
        return Err(UsageError(format!(
            "{shown} is not a stripebench document (no schema_version): give a document written with --json"
        )));
    };
    if version.as_u64() != Some(u64::from(SCHEMA_VERSION)) {
        return Err(UsageError(format!(
            "{shown} has schema version {version}, this stripebench reads {SCHEMA_VERSION}: use the stripebench that wrote it"
        )));
    }
    if v.get("measured").and_then(|m| m.as_bool()) == Some(false) {
        return Err(UsageError(format!(
            "{shown} is the document of a run interrupted before anything was measured: there is nothing to report"
        )));
    }
    let Some(kind) = kind_of(&v) else {
        return Err(UsageError(format!(
            "{shown} is a stripebench document of a kind this command does not take: give a run, sweep, compare or merge document"
        )));
    };
    // Figures that do not add up (a hand-edited document) would be drawn as
    // if measured; diff and plan refuse them the same way.
    crate::document::merge::check_document_arithmetic(&v, &shown, kind)?;
    let bad =
        |e: serde_json::Error| UsageError(format!("{shown} is not a valid {kind} document: {e}"));
    Ok(match kind {
        "merge" => AnyDocument::Merge(Box::new(serde_json::from_value(v).map_err(bad)?)),
        "sweep" => AnyDocument::Sweep(Box::new(serde_json::from_value(v).map_err(bad)?)),
        "compare" => AnyDocument::Compare(Box::new(serde_json::from_value(v).map_err(bad)?)),
        _ => AnyDocument::Run(Box::new(serde_json::from_value(v).map_err(bad)?)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("doc.json");
        std::fs::write(&p, text).unwrap();
        load(&p).unwrap_err().0
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
