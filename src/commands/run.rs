//! `stripebench run` and `stripebench verify`: a validated configuration →
//! targets (or the built-in test bed) → one measured run → the table, the
//! JSON and CSV documents, the plot → the exit code.

use std::path::PathBuf;

use anyhow::Result;

use crate::analysis::histogram::LatencyHistogram;
use crate::base::error::EXIT_OK;
use crate::device::scratch::Testbed;
use crate::device::stripes::member_paths;
use crate::document::run::RunDocument;
use crate::measure::config::RunConfig;
use crate::measure::session::{measure, preflight, Outcome};
use crate::report;
use crate::report::output::Destinations;

pub fn tmpdir() -> Option<PathBuf> {
    std::env::var_os("TMPDIR").map(PathBuf::from)
}

pub fn run(mut cfg: RunConfig) -> Result<u8> {
    preflight();

    let named: Vec<PathBuf> = match &cfg.members {
        Some(volume) => member_paths(volume)?,
        None => cfg.targets.clone(),
    };
    let out = check_outputs(&cfg, &named)?;
    if !cfg.dry_run {
        cfg.live_hub = report::live::open(
            cfg.live.as_deref(),
            cfg.live_format,
            cfg.metrics.as_deref(),
            &out,
        )?;
    }
    if let (true, Some(tb)) = (cfg.dry_run, &cfg.testbed) {
        crate::outln!(
            "dry run: would create the built-in test bed ({} files of {} in {}) and run {} on it for {:.2}s after a {:.2}s ramp; no I/O was done",
            tb.files,
            crate::base::units::fmt_bytes(tb.file_size),
            tb.dir.display(),
            cfg.rw.name(),
            cfg.duration.as_secs_f64(),
            cfg.ramp.as_secs_f64()
        );
        return Ok(EXIT_OK);
    }
    let testbed = match &cfg.testbed {
        Some(tb) => {
            match Testbed::create(
                tb,
                cfg.seed,
                "the built-in test bed (no target named)",
                "use --dir elsewhere, or a smaller --testbed-size or --testbed-files",
            ) {
                Ok(t) => Some(t),
                Err(e) => {
                    if e.downcast_ref::<crate::base::error::Interrupted>()
                        .is_some()
                    {
                        write_unmeasured(&cfg, "creating the built-in test bed", &out)?;
                    }
                    return Err(e);
                }
            }
        }
        None => None,
    };
    let paths: Vec<PathBuf> = match &testbed {
        Some(t) => t.files.clone(),
        None => named,
    };
    let doc = match measure(&cfg, &paths, testbed.is_some())? {
        Outcome::DryRun(plan, checks) => {
            let (text, all_pass) = report::dry_run::render(&cfg, &plan, &checks);
            crate::report::output::stdout_text(&text);
            return Ok(if all_pass {
                EXIT_OK
            } else {
                crate::base::error::EXIT_USAGE
            });
        }
        Outcome::Done(run) => crate::document::finished::document(&cfg, *run),
    };
    emit(&cfg, &doc, &out)?;
    if let Some(p) = &cfg.plot {
        report::plot::run(&doc, p, &out)?;
        eprintln!("plot: {}", crate::base::error::show_path(p));
    }
    drop(testbed);

    Ok(crate::base::error::exit_code(
        doc.interrupted,
        doc.has_errors(),
    ))
}

/// The document of a run that a signal stopped before anything was
/// measured: it says so, so that a script reading `--json` finds an answer.
#[derive(serde::Serialize)]
#[serde(tag = "kind", rename = "run")]
struct Unmeasured<'a> {
    schema_version: u32,
    tool: crate::document::run::ToolInfo,
    interrupted: bool,
    measured: bool,
    stage: &'a str,
}

fn write_unmeasured(cfg: &RunConfig, stage: &str, out: &Destinations) -> Result<()> {
    let Some(p) = cfg.json.as_ref().filter(|p| !report::output::is_stdout(p)) else {
        return Ok(());
    };
    let doc = Unmeasured {
        schema_version: crate::document::run::SCHEMA_VERSION,
        tool: crate::document::run::ToolInfo::this(),
        interrupted: true,
        measured: false,
        stage,
    };
    out.write_file(p, &report::json::render(&doc))
}

/// Refuses outputs that cannot be written or would destroy something, before
/// any I/O; the accepted ones, each with its directory open.
fn check_outputs(cfg: &RunConfig, paths: &[PathBuf]) -> Result<Destinations> {
    if let Some(p) = &cfg.plot {
        report::plot::check_path(p)?;
    }
    let mut outputs = crate::report::output::given(&[
        ("--json", cfg.json.as_deref()),
        ("--csv", cfg.csv.as_deref()),
        ("--plot", cfg.plot.as_deref()),
        ("--html", cfg.html.as_deref()),
    ]);
    outputs.extend(crate::report::live::outputs(
        cfg.live.as_deref(),
        cfg.metrics.as_deref(),
    ));
    crate::report::output::check(&outputs, &crate::device::protected_paths(paths), &[])
}

/// Prints the table (stdout, or stderr when stdout carries a document) and writes the documents.
fn emit(cfg: &RunConfig, doc: &RunDocument, out: &Destinations) -> Result<()> {
    let mut text = report::table::render(doc);
    if cfg.histogram {
        for t in &doc.targets {
            if let Ok(h) = LatencyHistogram::from_base64(&t.figures.histogram) {
                text.push_str(&report::histogram::render(&t.path, &h));
            }
        }
    }
    crate::report::output::say(&text, cfg.stdout_taken());
    if let Some(dest) = &cfg.json {
        out.write(dest, &report::json::render(doc))?;
    }
    if let Some(dest) = &cfg.csv {
        out.write_text(dest, &String::from_utf8_lossy(&report::csv::render(doc)))?;
    }
    if let Some(dest) = &cfg.html {
        out.write_text(dest, &report::html::run(doc)?)?;
    }
    Ok(())
}
