//! `stripebench history`: the disks a history knows, one disk's series,
//! drift and fail-slow; `history import` records documents from elsewhere.

mod import;
pub mod record;

use anyhow::Result;

use crate::base::error::{show_path, UsageError, EXIT_FAILURE, EXIT_OK};
use crate::cli::{HistoryAction, HistoryArgs, HistoryFailOn};
use crate::document::history::{assemble, Judging};
use crate::output::{Outputs, Request};
use crate::report;
use crate::store::history::{Store, StoreError};

pub fn run(args: &HistoryArgs) -> Result<u8> {
    let place = crate::cli::history_where(args.history.as_ref(), false);
    let Some(path) = place.path() else {
        return Err(UsageError(
            "STRIPEBENCH_HISTORY=off and no --history: name the database with --history FILE.db"
                .into(),
        )
        .into());
    };
    if let Some(HistoryAction::Import { docs }) = &args.action {
        return import::run(&path, place.is_default(), docs);
    }
    let mut req = Request::json(args.json.as_deref());
    req.set("html", args.html.clone());
    let out = Outputs::check(req, report::Kind::History, &[], &[])?;
    let store = Store::open_to_read(&path).map_err(refusal)?;
    let keys = match &args.disk {
        Some(d) => {
            let k = store.find(d).map_err(refusal)?;
            if k.is_empty() {
                return Err(UsageError(format!(
                    "no disk in {} is {}: give a key, WWN, serial or device name that `stripebench history` lists",
                    show_path(&path),
                    crate::base::error::show_text(d)
                ))
                .into());
            }
            Some(k)
        }
        None => None,
    };
    // Every disk is read: fail-slow judges one against its peers. The
    // histograms of the disks asked are read too, to merge their runs.
    let asked = keys.as_deref().unwrap_or_default();
    let entries = store.entries(None, asked).map_err(refusal)?;
    let judging = Judging {
        baseline: args.baseline,
        until: args.baseline_until,
        recent: args.recent,
        alpha: args.alpha,
        threshold_pct: args.threshold,
    };
    let doc = assemble(show_path(&path), &entries, &judging, keys.as_deref());
    out.say(&report::history::render(&doc, keys.is_some()));
    out.write(report::Doc::History(&doc))?;
    let failed = match args.fail_on {
        None => false,
        Some(HistoryFailOn::Drift) => !doc.drift.is_empty(),
        Some(HistoryFailOn::FailSlow) => !doc.fail_slow.is_empty(),
        Some(HistoryFailOn::Any) => !doc.drift.is_empty() || !doc.fail_slow.is_empty(),
    };
    Ok(if failed { EXIT_FAILURE } else { EXIT_OK })
}

/// A database that cannot be read: exit 2, whatever the reason, so that
/// --fail-on's exit 1 means a finding and nothing else.
fn refusal(e: StoreError) -> anyhow::Error {
    UsageError(e.to_string()).into()
}
