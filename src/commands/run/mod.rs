//! `stripebench run` and `stripebench verify`: a validated configuration →
//! targets (or the built-in test bed) → one measured run → the table, the
//! JSON and CSV documents, the plot → the exit code.

pub(crate) mod create;
mod print_fio;

use std::path::PathBuf;

use anyhow::Result;

use crate::analysis::histogram::LatencyHistogram;
use crate::base::error::EXIT_OK;
use crate::device::scratch::Testbed;
use crate::device::stripes::member_paths;
use crate::document::run::RunDocument;
use crate::measure::config::RunConfig;
use crate::measure::session::{measure, preflight, Outcome};
use crate::output::{Outputs, Request};
use crate::report;

pub fn tmpdir() -> Option<PathBuf> {
    std::env::var_os("TMPDIR").map(PathBuf::from)
}

pub fn run(cfg: RunConfig, req: Request) -> Result<u8> {
    crate::output::warn(&preflight()?);

    let named = named_targets(&cfg)?;
    if cfg.print_fio {
        let (cfg, notes) = print_fio::ring_autos_resolved(cfg, &named);
        let mut fio =
            crate::document::fio::fio(&cfg, &named, crate::document::fio::Buffers::Asked)?;
        fio.notes.extend(notes);
        if let Some(logs) = &req.fio_log {
            print_fio::with_logs(&mut fio, &logs.spec, cfg.log_interval);
        }
        crate::output::stdout::text(&fio.text());
        return Ok(EXIT_OK);
    }
    // Refuses outputs that cannot be written or would destroy something,
    // before any I/O; the accepted ones, each with its directory open.
    let out = create::outputs_and_created(&cfg, req, &named)?;
    let mut hub = None;
    if !cfg.dry_run {
        hub = out.live_hub()?;
    }
    if let (true, Some(tb)) = (cfg.dry_run, &cfg.testbed) {
        crate::output::stdout::text(&report::dry_run::testbed(&cfg, tb));
        return Ok(EXIT_OK);
    }
    let testbed = match &cfg.testbed {
        Some(tb) => {
            crate::measure::session::check_test_dir(&cfg, &tb.dir)?;
            Some(create_testbed(&cfg, tb, &out)?)
        }
        None => None,
    };
    let paths: Vec<PathBuf> = match &testbed {
        Some(t) => t.files.clone(),
        None => named,
    };
    let owned = testbed.is_some() || crate::device::scratch::all_created_here(&paths);
    // A signal before the window opened (while the workers were set up or
    // waited for --start-at) measured nothing, and the run still says so.
    let outcome = measure(&cfg, &paths, owned, &out.for_run(hub))
        .or_else(|e| unmeasured(e, "starting the run", &out))?;
    let doc = match outcome {
        Outcome::DryRun(plan, checks) => {
            let (text, all_pass) = report::dry_run::render(&cfg, &plan, &checks);
            crate::output::stdout::text(&text);
            return Ok(if all_pass {
                EXIT_OK
            } else {
                crate::base::error::EXIT_USAGE
            });
        }
        Outcome::Done(run) => crate::document::finished::document(&cfg, *run),
    };
    emit(&doc, &out)?;
    drop(testbed);
    exit_code(&doc, &cfg, &out)
}

/// A finished run's exit code, its report written: a `--bs` that is not
/// the one the blocks were written with is the reader's mistake, named in
/// one line (exit 2), not corruption; an interrupt or errors keep their
/// codes; reads that no medium answered fail the run (exit 4) unless the
/// user accepts them.
pub(crate) fn exit_code(doc: &RunDocument, cfg: &RunConfig, out: &Outputs) -> Result<u8> {
    if let Some(line) = doc.wrong_bs() {
        return Err(crate::base::error::UsageError(line).into());
    }
    // A cycle below --rate-min failed the run's own check, as fio's job
    // fails (exit 1): said on stderr too, as fio says it.
    let below = doc.below_min_line();
    if let Some(line) = &below {
        out.note(&format!("stripebench: {line}"));
    }
    // Likewise a --latency-target search at 100% that an I/O over the
    // target stopped at depth 1 (fio: "max latency exceeded", exit 1).
    let exceeded = doc.latency_exceeded_line();
    if let Some(line) = &exceeded {
        out.note(&format!("stripebench: {line}"));
    }
    let failed = doc.has_errors() || below.is_some() || exceeded.is_some();
    let code = crate::base::error::exit_code(doc.interrupted, failed);
    let zeros = doc.zero_figures();
    if code == EXIT_OK && !zeros.is_empty() && !cfg.allow_holes {
        out.note(&format!(
            "stripebench: {} target(s) returned mostly zeros: the figures are not the devices' speed; pass --allow-holes to accept them (exit {})",
            zeros.len(),
            crate::base::error::EXIT_ZERO_READS
        ));
        return Ok(crate::base::error::EXIT_ZERO_READS);
    }
    Ok(code)
}

/// The targets named: `--members`' volume's, or those given.
pub(crate) fn named_targets(cfg: &RunConfig) -> Result<Vec<PathBuf>> {
    Ok(match &cfg.members {
        Some(volume) => member_paths(volume)?,
        None => cfg.targets.clone(),
    })
}

/// The built-in test bed, written before the run; a signal while it is
/// written still leaves the `--json` saying so.
fn create_testbed(
    cfg: &RunConfig,
    tb: &crate::measure::config::TestbedConfig,
    out: &Outputs,
) -> Result<Testbed> {
    Testbed::create(
        tb,
        cfg.seed,
        "the built-in test bed (no target named)",
        "use --dir elsewhere, or a smaller --testbed-size or --testbed-files",
    )
    .or_else(|e| unmeasured(e, "creating the built-in test bed", out))
}

/// Passes `e` on; when it is a signal that stopped the run at `stage`,
/// before anything was measured, the `--json` says so first, so that a
/// script reading it finds an answer.
fn unmeasured<T>(e: anyhow::Error, stage: &str, out: &Outputs) -> Result<T> {
    if crate::base::error::Interrupted::is(&e) {
        let doc = crate::document::finished::Unmeasured::at(stage);
        out.write_file("json", &report::json::render(&doc))?;
    }
    Err(e)
}

/// Prints the table (stdout, or stderr when stdout carries a document) and
/// writes the documents.
pub(crate) fn emit(doc: &RunDocument, out: &Outputs) -> Result<()> {
    // First: a document that cannot be written still leaves its figures
    // in the history.
    crate::commands::history::record::record(out.request(), doc, "run");
    let mut text = report::table::render_rows(doc, out.request().rows);
    if out.request().histogram {
        for t in &doc.targets {
            if let Ok(h) = LatencyHistogram::from_base64(&t.figures.histogram) {
                text.push_str(&report::histogram::render(&t.path, &h));
            }
        }
    }
    out.say(&text);
    out.write(report::Doc::Run(doc))
}
