//! Recording a run's results in the per-disk history: every command that
//! measures calls [`record`] with each run document it made. A history
//! that cannot be written costs no measurement: one line says why, and the
//! command goes on (its documents are written, its exit code is its own).

use sha2::{Digest, Sha256};

use crate::document::history::entries;
use crate::document::run::RunDocument;
use crate::output::Request;
use crate::store::history::{Store, StoreError};

/// A run document's hash: SHA-256 of its JSON as stripebench writes it.
pub fn hash(doc: &RunDocument) -> String {
    let bytes = crate::report::json::render(doc);
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Records `doc`'s targets whose disk is known, measured by `context`
/// ("run", "compare:member-alone"), in the history `req` names; says in
/// one line on stderr why when it cannot.
pub fn record(req: &Request, doc: &RunDocument, context: &str) {
    let Some(path) = req.history.path() else {
        return;
    };
    let found = entries(doc, context);
    if found.is_empty() {
        return;
    }
    let written = req.path("json").filter(|p| p.as_os_str() != "-").map(|p| {
        std::path::absolute(p)
            .unwrap_or_else(|_| p.to_path_buf())
            .to_string_lossy()
            .into_owned()
    });
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let result = Store::open(&path, req.history.is_default())
        .and_then(|mut s| s.record(&hash(doc), written.as_deref(), now, &found));
    if let Err(e) = result {
        said(&e);
    }
}

fn said(e: &StoreError) {
    crate::output::note(&format!(
        "stripebench: not recorded in the history: {e} (the run's documents are written as asked)"
    ));
}
