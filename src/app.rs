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
            crate::output::check(
                &crate::output::given(&[
                    ("--json", args.json.as_deref()),
                    ("--plot", args.plot.as_deref()),
                ]),
                &args.files,
            )?;
            let (points, unit, warnings) = crate::capacity::points_from(&args.files, args.force)?;
            let p = crate::capacity::plan(points, unit, &args.at, args.target, warnings);
            report::emit(&crate::capacity::render(&p), args.json.as_deref(), &p)?;
            if let Some(svg) = &args.plot {
                crate::capacity::draw(&p, svg)?;
                eprintln!("plot: {}", svg.display());
            }
            Ok(EXIT_OK)
        }
        Command::Merge(args) => {
            crate::output::check(
                &crate::output::given(&[("--json", args.json.as_deref())]),
                &args.files,
            )?;
            let m = crate::merge::merge(&args.files, args.force)?;
            report::emit(&crate::merge::render(&m), args.json.as_deref(), &m)?;
            Ok(EXIT_OK)
        }
        Command::Membw => {
            let b = crate::cache::memcpy_bandwidth();
            crate::outln!("memory copy, one thread, 64 MiB buffers (best of 5): {:.1} MB/s (10^6 B/s), {:.1} MiB/s", b / 1e6, b / (1u64 << 20) as f64);
            Ok(EXIT_OK)
        }
        Command::Sweep(args) => crate::sweep::run(&args),
        Command::Topology(args) => {
            let src = crate::topology::Sources::system(args.dm_table.as_deref())?;
            let t = crate::topology::discover(&args.target, &src)?;
            if args.json {
                crate::output::stdout(
                    format!("{}\n", serde_json::to_string_pretty(&t)?).as_bytes(),
                );
            } else {
                crate::output::stdout(crate::topology::render(&t).as_bytes());
            }
            Ok(EXIT_OK)
        }
        Command::Restore => {
            let dir = knobs::state_dir();
            let mut lines = knobs::restore_pending(&dir)?;
            lines.extend(crate::testbed::remove_pending(&dir));
            if lines.is_empty() {
                crate::outln!(
                    "nothing to restore: no settings or test beds left by killed runs in {}",
                    dir.display()
                );
            }
            for l in lines {
                crate::outln!("{l}");
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
    for (_, dir) in crate::testbed::pending(&knobs::state_dir()) {
        eprintln!(
            "stripebench: warning: a killed run left its test bed behind ({}): run 'stripebench restore' to remove it",
            dir.display()
        );
    }
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

    let named: Vec<PathBuf> = match &cfg.members {
        Some(volume) => member_paths(volume)?,
        None => cfg.targets.clone(),
    };
    check_outputs(&cfg, &named)?;
    if let (true, Some(tb)) = (cfg.dry_run, &cfg.testbed) {
        crate::outln!(
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
        Some(tb) => {
            match Testbed::create(
                tb,
                cfg.seed,
                "the built-in test bed (no target named)",
                "use --dir elsewhere, or a smaller --testbed-size or --testbed-files",
            ) {
                Ok(t) => Some(t),
                Err(e) => {
                    if e.downcast_ref::<crate::error::Interrupted>().is_some() {
                        write_unmeasured(&cfg, "creating the built-in test bed")?;
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
        Outcome::DryRun(text, all_pass) => {
            crate::output::stdout(text.as_bytes());
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

/// The document of a run that a signal stopped before anything was
/// measured: it says so, so that a script reading `--json` finds an answer.
#[derive(serde::Serialize)]
struct Unmeasured<'a> {
    schema_version: u32,
    tool: crate::results::ToolInfo,
    interrupted: bool,
    measured: bool,
    stage: &'a str,
}

fn write_unmeasured(cfg: &RunConfig, stage: &str) -> Result<()> {
    let Some(OutputPath::File(p)) = &cfg.json else {
        return Ok(());
    };
    let doc = Unmeasured {
        schema_version: 1,
        tool: crate::results::ToolInfo::this(),
        interrupted: true,
        measured: false,
        stage,
    };
    let mut bytes = serde_json::to_vec_pretty(&doc)?;
    bytes.push(b'\n');
    crate::output::write_file(p, &bytes)
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
    let overlaps = overlapping_targets(paths, cfg.rw.writes())?;
    // Read-ahead is set before the targets are opened: a file takes its
    // read-ahead window from the device when it is opened.
    let mut knob_guard = KnobGuard::new(knobs::state_dir()).wait_for_locks(cfg.wait_lock);
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
    check_buffer_memory(cfg, &plan)?;
    if cfg.dry_run {
        let (text, all_pass) = report::dry_run::render(cfg, &plan, &checks);
        return Ok(Outcome::DryRun(text, all_pass));
    }

    let mut warnings = plan.warnings.clone();
    warnings.extend(overlaps);
    if let Some(c) = &cfg.cpus {
        if plan.workers.len() > c.len() {
            warnings.push(format!(
                "{} workers share {} CPU(s): workers on one CPU take turns, which can limit what they measure",
                plan.workers.len(),
                c.len()
            ));
        }
    }
    for w in oversized_requests(cfg, &plan) {
        eprintln!("stripebench: warning: {w}");
        warnings.push(w);
    }
    let cache = prepare_cache(cfg, &plan, &mut warnings)?;
    let exec = coordinator::execute(cfg, &plan)?;
    let mut doc = RunDocument::assemble(cfg, &plan, &exec, warnings);
    doc.warnings.extend(split_requests(cfg, &doc));
    doc.cache = Some(cache);
    drop(knob_guard);
    Ok(Outcome::Done(Box::new(doc)))
}

/// Before the run: a block size larger than one request to the target's
/// device can carry (`max_sectors_kb`) is split by the kernel, whatever the
/// tool does; say so before the time is spent.
fn oversized_requests(cfg: &RunConfig, plan: &plan::Plan) -> Vec<String> {
    use crate::target::queue::QueueLimits;
    if !cfg.direct {
        return Vec::new();
    }
    let mut seen = HashSet::new();
    plan.targets
        .iter()
        .filter_map(|t| {
            let dev = t.device?;
            let q = QueueLimits::of_device(std::path::Path::new("/sys"), dev)?;
            let max = q.max_request_bytes()?;
            (t.bs > max && seen.insert(dev)).then(|| {
                format!(
                    "--bs {} is larger than one request to {} can carry (max_sectors_kb {}): each I/O reaches the device as {} requests",
                    crate::units::fmt_bytes(t.bs),
                    t.device_name.as_deref().unwrap_or("its device"),
                    max / 1024,
                    t.bs.div_ceil(max)
                )
            })
        })
        .collect()
}

/// After the run: O_DIRECT requests that reached the device smaller than
/// the block size, by the device's own counters, and the queue limit that
/// explains it (`avg request` in the table shows the size).
fn split_requests(cfg: &RunConfig, doc: &RunDocument) -> Vec<String> {
    use crate::target::queue::{page_size, QueueLimits};
    if !cfg.direct {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for t in &doc.targets {
        let Some(d) = t.device.as_ref().filter(|d| d.stats && !d.shared) else {
            continue;
        };
        if !seen.insert(d.name.clone()) {
            continue;
        }
        for (what, avg) in [
            ("reads", d.avg_read_request_bytes),
            ("writes", d.avg_write_request_bytes),
        ] {
            let Some(avg) = avg.filter(|&a| a < t.bs as f64 * 0.98) else {
                continue;
            };
            let class = std::path::Path::new("/sys/class/block").join(&d.name);
            let why = QueueLimits::read(&class.join("queue"))
                .or_else(|| QueueLimits::read(&class.join("../queue")))
                .and_then(|q| q.split_reason(t.bs, page_size()))
                .unwrap_or_else(|| {
                    "no queue limit explains it (the device or a layer above it splits requests)"
                        .into()
                });
            out.push(format!(
                "O_DIRECT {what} of {} reached {} as requests of {} on average: {why}",
                crate::units::fmt_bytes(t.bs),
                d.name,
                crate::units::fmt_bytes(avg as u64)
            ));
        }
    }
    out
}

/// Refuses I/O buffers that would take more than a quarter of the available
/// memory (`--iodepth 4096 --bs 1m` on two targets is 8 GiB), before any of
/// it is allocated, unless `--force-memory`.
fn check_buffer_memory(cfg: &RunConfig, plan: &plan::Plan) -> Result<()> {
    let per_io = |bs: u64| bs.saturating_mul(cfg.iodepth as u64);
    let total: u64 = plan.workers.iter().map(|w| per_io(w.bs)).sum();
    let Some(avail) = crate::cache::available_memory() else {
        return Ok(());
    };
    if total > avail / 4 && !cfg.force_memory {
        return usage(format!(
            "the I/O buffers need {} ({} workers x --iodepth {} x the block size), more than a quarter of the {} of memory available: lower --iodepth, --bs or --jobs, or pass --force-memory",
            crate::units::fmt_bytes(total),
            plan.workers.len(),
            cfg.iodepth,
            crate::units::fmt_bytes(avail)
        ));
    }
    Ok(())
}

/// Targets that reach the same bytes (one file twice, through a symlink or
/// a hard link; a partition and its disk; two loop devices over one image):
/// refused when the run writes, a warning when it reads, since their
/// figures then share one device and are not independent.
fn overlapping_targets(paths: &[PathBuf], writes: bool) -> Result<Vec<String>> {
    use crate::target::extent;
    let sys = extent::Sys::default();
    let shown = crate::error::show_path;
    let extents: Vec<Option<extent::Extent>> =
        paths.iter().map(|p| extent::of_path(&sys, p)).collect();
    let mut warnings = Vec::new();
    for (i, a) in paths.iter().enumerate() {
        for (j, b) in paths.iter().enumerate().skip(i + 1) {
            let same_name = matches!(
                (std::fs::canonicalize(a), std::fs::canonicalize(b)),
                (Ok(x), Ok(y)) if x == y
            );
            let (Some(x), Some(y)) = (&extents[i], &extents[j]) else {
                if same_name {
                    return usage(format!(
                        "target {} is named twice: use --jobs for several workers on one target",
                        shown(b)
                    ));
                }
                continue;
            };
            if same_name
                || (x.base == y.base
                    && (x.start, x.len) == (y.start, y.len)
                    && matches!(x.base, extent::Base::File(..)))
            {
                return usage(format!(
                    "target {} is named twice{}: use --jobs for several workers on one target",
                    shown(b),
                    if same_name {
                        String::new()
                    } else {
                        format!(" (it is the same file as {})", shown(a))
                    }
                ));
            }
            if !x.overlaps(y) {
                continue;
            }
            let on = match (&x.file, x.base) {
                (Some(f), _) => shown(f),
                (None, extent::Base::Disk((ma, mi))) => {
                    crate::target::sysfs_name(std::path::Path::new("/sys"), ma, mi)
                        .unwrap_or_else(|| format!("{ma}:{mi}"))
                }
                (None, _) => "one file".into(),
            };
            if writes {
                return usage(format!(
                    "refusing to write: targets {} and {} reach the same bytes of {on}: one would overwrite the other; name one of them",
                    shown(a),
                    shown(b)
                ));
            }
            warnings.push(format!(
                "targets {} and {} overlap on {on}: they share one device, so their figures are not independent and their sum is not the device's",
                shown(a),
                shown(b)
            ));
        }
    }
    Ok(warnings)
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

/// The members of a volume, for `--members`: those of its striped layer,
/// each with what stands above its disk (`Topology::stripe_members`).
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
    Ok(t.stripe_members()
        .iter()
        .map(|l| PathBuf::from(&l.path))
        .collect())
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
                // A lock held by another run, or an interrupt while waiting, says so itself.
                if e.downcast_ref::<crate::error::UsageError>().is_some()
                    || e.downcast_ref::<crate::error::Interrupted>().is_some()
                {
                    return e;
                }
                crate::error::UsageError(format!(
                    "cannot set the read-ahead of {}: {e:#} (root is needed)",
                    p.display()
                ))
                .into()
            })?;
        }
    }
    Ok(())
}

/// Refuses outputs that cannot be written or would destroy something, before any I/O.
fn check_outputs(cfg: &RunConfig, paths: &[PathBuf]) -> Result<()> {
    if let Some(p) = &cfg.plot {
        report::plot::check_path(p)?;
    }
    let path_of = |o: &Option<OutputPath>| -> Option<PathBuf> {
        o.as_ref().map(|o| match o {
            OutputPath::Stdout => PathBuf::from("-"),
            OutputPath::File(f) => f.clone(),
        })
    };
    let (json, csv) = (path_of(&cfg.json), path_of(&cfg.csv));
    let outputs = crate::output::given(&[
        ("--json", json.as_deref()),
        ("--csv", csv.as_deref()),
        ("--plot", cfg.plot.as_deref()),
    ]);
    crate::output::check(&outputs, &target::protected_paths(paths))?;
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
    crate::output::say(&text, cfg.stdout_taken());
    if let Some(dest) = &cfg.json {
        report::write_to(dest, &report::json::render(doc))?;
    }
    if let Some(dest) = &cfg.csv {
        report::write_to(dest, &report::csv::render(doc))?;
    }
    Ok(())
}
