//! The `run` command end to end: configuration → targets (or the built-in
//! test bed) → plan → coordinator → document → reports → exit code.

use std::collections::HashSet;
use std::path::PathBuf;

use anyhow::Result;

use crate::cli::{Cli, Command};
use crate::config::{OutputPath, RunConfig};
use crate::coordinator;
use crate::cpus;
use crate::engine::EngineKind;
use crate::error::{usage, EXIT_OK};
use crate::knobs::{self, KnobGuard};
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
        Command::Run(args) => {
            let cfg = RunConfig::from_args(&args, &cpus::available_cpus(), tmpdir())?;
            run(cfg)
        }
        Command::Verify(args) => {
            let cfg = RunConfig::for_verify(&args, &cpus::available_cpus(), tmpdir())?;
            run(cfg)
        }
        Command::Compare(args) => crate::compare::run(&args),
        Command::Plan(args) => {
            if let Some(p) = &args.plot {
                report::plot::check_path(p)?;
            }
            let (points, unit) = crate::capacity::points_from(&args.files)?;
            let p = crate::capacity::plan(points, unit, &args.at, args.target);
            report::emit(&crate::capacity::render(&p), args.json.as_deref(), &p)?;
            if let Some(svg) = &args.plot {
                crate::capacity::draw(&p, svg)?;
                eprintln!("plot: {}", svg.display());
            }
            Ok(EXIT_OK)
        }
        Command::Merge(args) => {
            let m = crate::merge::merge(&args.files, args.force)?;
            report::emit(&crate::merge::render(&m), args.json.as_deref(), &m)?;
            Ok(EXIT_OK)
        }
        Command::Membw => {
            let b = crate::cache::memcpy_bandwidth();
            println!("memory copy, one thread, 64 MiB buffers (best of 5): {:.1} MB/s (10^6 B/s), {:.1} MiB/s", b / 1e6, b / (1u64 << 20) as f64);
            Ok(EXIT_OK)
        }
        Command::Sweep(args) => crate::sweep::run(&args),
        Command::Topology(args) => {
            let src = crate::topology::Sources::system(args.dm_table.as_deref())?;
            let t = crate::topology::discover(&args.target, &src)?;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&t)?);
            } else {
                print!("{}", crate::topology::render(&t));
            }
            Ok(EXIT_OK)
        }
        Command::Restore => {
            let dir = knobs::state_dir();
            let lines = knobs::restore_pending(&dir)?;
            if lines.is_empty() {
                println!(
                    "nothing to restore: no state files from killed runs in {}",
                    dir.display()
                );
            }
            for l in lines {
                println!("{l}");
            }
            Ok(EXIT_OK)
        }
    }
}

fn tmpdir() -> Option<PathBuf> {
    std::env::var_os("TMPDIR").map(PathBuf::from)
}

/// What every measuring command (run, verify, sweep, compare) does first:
/// catch signals, and warn when a killed run left settings to restore.
pub fn preflight() {
    signals::install();
    let orphans = knobs::pending(&knobs::state_dir());
    if !orphans.is_empty() {
        eprintln!(
            "stripebench: warning: a killed run left {} setting(s) changed (state in {}): run 'stripebench restore'",
            orphans.iter().map(|(_, k)| k.len()).sum::<usize>(),
            knobs::state_dir().display()
        );
    }
}

fn run(cfg: RunConfig) -> Result<u8> {
    preflight();
    check_outputs(&cfg)?;

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
        Some(tb) => Some(Testbed::create(
            tb,
            cfg.seed,
            "the built-in test bed (no target named)",
        )?),
        None => None,
    };
    let paths: Vec<PathBuf> = match (&cfg.members, &testbed) {
        (Some(volume), _) => member_paths(volume)?,
        (None, Some(t)) => t.files.clone(),
        (None, None) => cfg.targets.clone(),
    };
    let doc = match measure(&cfg, &paths, testbed.is_some())? {
        Outcome::DryRun(text, all_pass) => {
            print!("{text}");
            return Ok(if all_pass {
                EXIT_OK
            } else {
                crate::error::EXIT_USAGE
            });
        }
        Outcome::Done(doc) => *doc,
    };
    emit(&cfg, &doc)?;
    if let Some(p) = &cfg.plot {
        report::plot::run(&doc, p)?;
        eprintln!("plot: {}", p.display());
    }
    drop(testbed);

    Ok(crate::error::exit_code(doc.interrupted, doc.has_errors()))
}

/// What `measure` produced.
pub enum Outcome {
    /// A dry run's report, and whether every check passed.
    DryRun(String, bool),
    /// The run's document.
    Done(Box<RunDocument>),
}

/// One measured run on `paths` (`owned`: files stripebench created):
/// guard and open the targets, plan, run, assemble. Settings changed for
/// the run are put back before it returns.
pub fn measure(cfg: &RunConfig, paths: &[PathBuf], owned: bool) -> Result<Outcome> {
    // Here, not in one command: a sweep point or compare phase may ask for io_uring too.
    if cfg.engine == EngineKind::Uring {
        crate::engine::uring::probe().map_err(crate::error::UsageError)?;
    }
    let mut seen = HashSet::new();
    for p in paths {
        if let Ok(c) = std::fs::canonicalize(p) {
            if !seen.insert(c) {
                return usage(format!(
                    "target {} is named twice: use --jobs for several workers on one target",
                    crate::error::show_path(p)
                ));
            }
        }
    }
    // Read-ahead is set before the targets are opened: a file takes its
    // read-ahead window from the device when it is opened.
    let mut knob_guard = KnobGuard::new(knobs::state_dir());
    if let Some(kb) = cfg.readahead_kb {
        set_readahead(&mut knob_guard, paths, kb, cfg.dry_run)?;
    }
    let access = Access {
        direct: cfg.direct,
        write: cfg.rw.writes(),
        allow_destructive: cfg.allow_destructive,
        owned,
        force_signature: cfg.force_signature,
        dry_run: cfg.dry_run,
    };
    let mut targets = paths
        .iter()
        .map(|p| target::open(p, access))
        .collect::<Result<Vec<_>>>()?;
    stripe_geometry(&mut targets);
    let checks: Vec<(PathBuf, Vec<crate::target::guard::Check>)> = targets
        .iter()
        .map(|t| (t.path.clone(), t.checks.clone()))
        .collect();
    let plan = plan::build(cfg, targets)?;
    if cfg.dry_run {
        let (text, all_pass) = report::dry_run::render(cfg, &plan, &checks);
        return Ok(Outcome::DryRun(text, all_pass));
    }

    let mut warnings = plan.warnings.clone();
    for t in &plan.targets {
        if let Some(fs) = crate::target::memory_fs(&t.file) {
            warnings.push(format!(
                "{} is on {fs}: the target is memory, not a device ({}no device counters), so these figures measure memory",
                t.path.display(),
                if cfg.direct {
                    format!("{fs} takes O_DIRECT but serves it from RAM like any other I/O; ")
                } else {
                    String::new()
                }
            ));
        }
    }
    if let Some(c) = &cfg.cpus {
        if plan.workers.len() > c.len() {
            warnings.push(format!(
                "{} workers share {} CPU(s): workers on one CPU take turns, which can limit what they measure",
                plan.workers.len(),
                c.len()
            ));
        }
    }
    let cache = prepare_cache(cfg, &plan, &mut warnings)?;
    let exec = coordinator::execute(cfg, &plan)?;
    let mut doc = RunDocument::assemble(cfg, &plan, &exec, warnings);
    doc.cache = Some(cache);
    drop(knob_guard);
    Ok(Outcome::Done(Box::new(doc)))
}

/// Cold cache for buffered reads (evicted, timed apart), or warm on purpose
/// with --cached; untouched for O_DIRECT and writes.
fn prepare_cache(
    cfg: &RunConfig,
    plan: &plan::Plan,
    warnings: &mut Vec<String>,
) -> Result<crate::cache::CacheDoc> {
    if cfg.direct || cfg.rw.writes() {
        return Ok(crate::cache::CacheDoc {
            state: "untouched".into(),
            method: "-".into(),
            seconds: 0.0,
            memcpy_bytes_per_sec: None,
        });
    }
    if cfg.cached {
        let regions: Vec<(PathBuf, crate::workload::Region)> = plan
            .targets
            .iter()
            .map(|t| (t.path.clone(), t.region))
            .collect();
        return crate::cache::preload(&regions);
    }
    let working_set: u64 = plan.targets.iter().map(|t| t.region.length).sum();
    if let Some(avail) = crate::cache::available_memory().filter(|&a| working_set < a) {
        warnings.push(format!(
            "the buffered working set ({}) fits in free memory ({}): once read, it can be served from the page cache; the device counters show whether it was",
            crate::units::fmt_bytes(working_set),
            crate::units::fmt_bytes(avail)
        ));
    }
    let paths: Vec<PathBuf> = plan.targets.iter().map(|t| t.path.clone()).collect();
    crate::cache::make_cold(&paths, cfg.drop_caches)
}

/// Learns the chunk and member count of every striped block-device target
/// (md raid0, dm striped) from its topology.
fn stripe_geometry(targets: &mut [crate::target::Target]) {
    let Ok(src) = crate::topology::Sources::system(None) else {
        return;
    };
    for t in targets
        .iter_mut()
        .filter(|t| t.kind == crate::target::TargetKind::Block)
    {
        if let Ok(topo) = crate::topology::discover(&t.path, &src) {
            if let (true, Some(chunk)) = (topo.root.is_striped(), topo.root.chunk_size()) {
                t.stripe = Some(crate::target::StripeGeometry {
                    chunk,
                    members: topo.root.members.len() as u64,
                });
            }
        }
    }
}

/// The leaf members of a volume, for `--members`.
pub fn member_paths(volume: &std::path::Path) -> Result<Vec<PathBuf>> {
    let src = crate::topology::Sources::system(None)?;
    let t = crate::topology::discover(volume, &src)?;
    if t.root.members.is_empty() {
        return usage(format!(
            "--members {}: {} has no members (a plain disk or partition): name it as a TARGET instead",
            crate::error::show_path(volume),
            t.root.name
        ));
    }
    Ok(t.leaves().iter().map(|l| PathBuf::from(&l.path)).collect())
}

/// Sets read_ahead_kb on the device of every target (each device once).
fn set_readahead(guard: &mut KnobGuard, paths: &[PathBuf], kb: u64, dry_run: bool) -> Result<()> {
    let mut seen = HashSet::new();
    for p in paths {
        let Some(knob) = target::readahead_knob(p) else {
            return usage(format!(
                "--readahead needs a block device under {}, and it has none (tmpfs? btrfs? a missing path?)",
                crate::error::show_path(p)
            ));
        };
        if seen.insert(knob.clone()) && !dry_run {
            guard.set(&knob, &kb.to_string()).map_err(|e| {
                crate::error::UsageError(format!(
                    "cannot set the read-ahead of {}: {e:#} (root is needed)",
                    p.display()
                ))
            })?;
        }
    }
    Ok(())
}

/// Refuses outputs that would collide, before any I/O.
fn check_outputs(cfg: &RunConfig) -> Result<()> {
    if let Some(p) = &cfg.plot {
        report::plot::check_path(p)?;
    }
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
