//! The `run` command end to end: configuration → targets (or the built-in
//! test bed) → plan → coordinator → document → reports → exit code.

use std::collections::HashSet;
use std::path::PathBuf;

use anyhow::Result;

use crate::cli::{Cli, Command, RunArgs};
use crate::config::{OutputPath, RunConfig};
use crate::coordinator;
use crate::cpus;
use crate::engine::EngineKind;
use crate::error::{usage, EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK};
use crate::plan;
use crate::report;
use crate::results::RunDocument;
use crate::signals;
use crate::stats::LatencyHistogram;
use crate::target::{self, Access};
use crate::testbed::Testbed;

/// Runs the parsed command line; returns the exit code.
pub fn main(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Run(args) => run(&args),
    }
}

fn run(args: &RunArgs) -> Result<u8> {
    signals::install();
    let available = cpus::available_cpus();
    let cfg = RunConfig::from_args(
        args,
        &available,
        std::env::var_os("TMPDIR").map(PathBuf::from),
    )?;
    check_outputs(&cfg)?;
    if cfg.engine == EngineKind::Uring {
        crate::engine::uring::probe().map_err(crate::error::UsageError)?;
    }

    if let (true, Some(tb)) = (cfg.dry_run, &cfg.testbed) {
        println!(
            "dry run: would create the built-in test bed ({} files of {} in {}) and run {} on it for {:.2}s after a {:.2}s ramp; no I/O was done",
            tb.files,
            crate::units::fmt_bytes(tb.file_size),
            tb.dir.display(),
            cfg.rw.name(),
            cfg.duration.as_secs_f64(),
            cfg.ramp.as_secs_f64()
        );
        return Ok(EXIT_OK);
    }
    let testbed = match &cfg.testbed {
        Some(tb) => Some(Testbed::create(tb, cfg.seed)?),
        None => None,
    };
    let paths: Vec<PathBuf> = testbed
        .as_ref()
        .map_or_else(|| cfg.targets.clone(), |t| t.files.clone());
    let mut seen = HashSet::new();
    for p in &paths {
        if let Ok(c) = std::fs::canonicalize(p) {
            if !seen.insert(c) {
                return usage(format!(
                    "target {} is named twice: use --jobs for several workers on one target",
                    crate::error::show_path(p)
                ));
            }
        }
    }
    let access = Access {
        direct: cfg.direct,
        write: cfg.rw.writes(),
        allow_destructive: cfg.allow_destructive,
        owned: testbed.is_some(),
        force_signature: cfg.force_signature,
        dry_run: cfg.dry_run,
    };
    let targets = paths
        .iter()
        .map(|p| target::open(p, access))
        .collect::<Result<Vec<_>>>()?;
    let checks: Vec<(PathBuf, Vec<crate::target::guard::Check>)> = targets
        .iter()
        .map(|t| (t.path.clone(), t.checks.clone()))
        .collect();
    let plan = plan::build(&cfg, targets)?;
    if cfg.dry_run {
        let (text, all_pass) = report::dry_run::render(&cfg, &plan, &checks);
        print!("{text}");
        return Ok(if all_pass {
            EXIT_OK
        } else {
            crate::error::EXIT_USAGE
        });
    }

    let mut warnings = Vec::new();
    if let Some(c) = &cfg.cpus {
        if plan.workers.len() > c.len() {
            warnings.push(format!(
                "{} workers share {} CPU(s): workers on one CPU take turns, which can limit what they measure",
                plan.workers.len(),
                c.len()
            ));
        }
    }
    let exec = coordinator::execute(&cfg, &plan)?;
    let flush_failed = exec.flush.iter().any(|f| matches!(f, Some(Err(_))));
    let doc = RunDocument::assemble(&cfg, &plan, &exec, warnings);
    emit(&cfg, &doc)?;
    drop(testbed);

    Ok(if doc.interrupted {
        EXIT_INTERRUPTED
    } else if doc.has_errors() || flush_failed {
        EXIT_FAILURE
    } else {
        EXIT_OK
    })
}

/// Refuses outputs that would collide, before any I/O.
fn check_outputs(cfg: &RunConfig) -> Result<()> {
    if cfg.json == Some(OutputPath::Stdout) && cfg.csv == Some(OutputPath::Stdout) {
        return usage("--json - and --csv - both want stdout: send one of them to a file");
    }
    for p in [&cfg.json, &cfg.csv].into_iter().flatten() {
        if let OutputPath::File(f) = p {
            let parent = f
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."));
            if !parent.is_dir() {
                return usage(format!(
                    "cannot write report {}: directory {} does not exist",
                    f.display(),
                    parent.display()
                ));
            }
        }
    }
    Ok(())
}

/// Prints the table (stdout, or stderr when stdout carries a document) and writes the documents.
fn emit(cfg: &RunConfig, doc: &RunDocument) -> Result<()> {
    let mut text = report::table::render(doc);
    if cfg.histogram {
        for t in &doc.targets {
            if let Ok(h) = LatencyHistogram::from_base64(&t.histogram) {
                text.push_str(&report::histogram::render(&t.path, &h));
            }
        }
    }
    if cfg.stdout_taken() {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    if let Some(dest) = &cfg.json {
        report::write_to(dest, &report::json::render(doc))?;
    }
    if let Some(dest) = &cfg.csv {
        report::write_to(dest, &report::csv::render(doc))?;
    }
    Ok(())
}
