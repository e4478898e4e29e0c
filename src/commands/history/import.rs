//! `stripebench history import DOC...`: the run documents in run, sweep
//! and compare documents recorded in the history, each once (by its hash):
//! what a fleet's launcher gathers from its hosts.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::base::error::{UsageError, EXIT_OK};
use crate::document::read::{Document, Reader};
use crate::document::run::RunDocument;
use crate::store::history::Store;

pub fn run(db: &Path, make_dir: bool, docs: &[PathBuf]) -> Result<u8> {
    // Every document is read and checked before the first is recorded.
    let mut given = Vec::with_capacity(docs.len());
    for p in docs {
        given.push((
            p,
            crate::commands::source::read_given(
                p,
                Reader::Report,
                &crate::document::read::READ_BACK,
            )?,
        ));
    }
    let mut read = Vec::with_capacity(docs.len());
    for (p, g) in &given {
        let runs = runs_of(&g.document).map_err(|why| UsageError(format!("{}: {why}", g.shown)))?;
        read.push((p, &g.shown, runs));
    }
    let mut store = Store::open(db, make_dir).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (mut new, mut known, mut results) = (0, 0, 0);
    for (p, shown, runs) in &read {
        let path = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        for (doc, context) in runs {
            let entries = crate::document::history::entries(doc, context);
            if entries.is_empty() {
                continue;
            }
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            let added = store
                .record(
                    &super::record::hash(doc),
                    Some(&path.to_string_lossy()),
                    now,
                    &entries,
                )
                .map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
            if added {
                new += 1;
                results += entries.len();
            } else {
                known += 1;
            }
        }
    }
    crate::output::note(&format!(
        "history import: {new} run document(s) recorded ({results} result(s)), {known} already there, in {}",
        crate::base::error::show_path(db)
    ));
    Ok(EXIT_OK)
}

/// The run documents a document holds, each with what measured it.
fn runs_of(doc: &Document) -> Result<Vec<(&RunDocument, String)>, String> {
    Ok(match doc {
        Document::Run(d) => vec![(d.as_ref(), "run".to_string())],
        Document::Compare(c) => c
            .phases
            .iter()
            .chain(&c.repeats)
            .map(|p| (&p.document, format!("compare:{}", p.kind)))
            .collect(),
        Document::Sweep(s) => s
            .points
            .iter()
            .flat_map(|p| {
                let label = p
                    .values
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(",");
                p.runs.iter().map(move |r| (r, format!("sweep:{label}")))
            })
            .collect(),
        Document::Merge(_) => {
            return Err("a merge holds each host's workers, not its targets' figures: import the hosts' own run documents".into())
        }
        Document::Findings(_) => {
            return Err("a findings document holds advise's figures, not its runs: advise records its runs in the history as it makes them".into())
        }
    })
}
