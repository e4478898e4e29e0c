//! One measured run on named paths, shared by run, verify, sweep and
//! compare: what every measuring command does first (signals, leftovers of
//! killed runs), then guard and open the targets, lay out the workers,
//! check memory and request sizes, prepare the page cache, run, assemble
//! the document. Settings changed for the run are put back before it
//! returns.

use std::collections::HashSet;
use std::path::PathBuf;

use anyhow::Result;

use crate::base::error::usage;
use crate::base::signals;
use crate::device::knobs::{self, KnobGuard};
use crate::device::{self, Access};
use crate::document::run::RunDocument;
use crate::engine::EngineKind;
use crate::measure::config::RunConfig;
use crate::measure::coordinator;
use crate::measure::layout as plan;

/// What every measuring command (run, verify, sweep, compare) does first:
/// catch signals, and warn when a killed run left settings to restore.
pub fn preflight() {
    signals::install();
    for (_, dir) in crate::device::scratch::pending(&knobs::state_dir()) {
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

/// What `measure` produced.
pub enum Outcome {
    /// A dry run: the layout and every target's guard checks, nothing done.
    DryRun(Box<plan::Plan>, Vec<(PathBuf, Vec<device::guard::Check>)>),
    /// The run's document.
    Done(Box<RunDocument>),
}

/// One measured run on `paths` (`owned`: files stripebench created):
/// guard and open the targets, plan, run, assemble. Settings changed for
/// the run are put back before it returns.
pub fn measure(cfg: &RunConfig, paths: &[PathBuf], owned: bool) -> Result<Outcome> {
    // Here, not in one command: a sweep point or compare phase may ask for io_uring too.
    if cfg.hugepages == crate::engine::buffer::HugePages::On {
        crate::engine::buffer::probe(cfg.hugepages).map_err(crate::base::error::UsageError)?;
    }
    if cfg.engine == EngineKind::Uring {
        crate::engine::uring::probe().map_err(crate::base::error::UsageError)?;
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
        .map(|p| device::open(p, access))
        .collect::<Result<Vec<_>>>()?;
    let stacks = stripe_geometry(&mut targets);
    let checks: Vec<(PathBuf, Vec<crate::device::guard::Check>)> = targets
        .iter()
        .map(|t| (t.path.clone(), t.checks.clone()))
        .collect();
    let plan = plan::build(cfg, targets)?;
    check_buffer_memory(cfg, &plan)?;
    if cfg.dry_run {
        return Ok(Outcome::DryRun(Box::new(plan), checks));
    }

    let mut warnings = plan.warnings.clone();
    warnings.extend(overlaps);
    for t in &plan.targets {
        if let Some(fs) = crate::device::memory_fs(&t.file) {
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
    for w in oversized_requests(cfg, &plan) {
        eprintln!(
            "stripebench: warning: {}",
            crate::base::error::show_lines(&w)
        );
        warnings.push(w);
    }
    let cache = prepare_cache(cfg, &plan, &mut warnings)?;
    let exec = coordinator::execute(cfg, &plan)?;
    let mut doc = RunDocument::assemble(cfg, &plan, &exec, warnings);
    for t in &mut doc.targets {
        t.topology = stacks
            .iter()
            .find(|(p, _)| p.display().to_string() == t.path)
            .map(|(_, s)| s.clone());
    }
    doc.warnings.extend(split_requests(cfg, &doc));
    doc.cache = Some(cache);
    drop(knob_guard);
    Ok(Outcome::Done(Box::new(doc)))
}

/// Before the run: a block size larger than one request to the target's
/// device can carry (`max_sectors_kb`) is split by the kernel, whatever the
/// tool does; say so before the time is spent.
fn oversized_requests(cfg: &RunConfig, plan: &plan::Plan) -> Vec<String> {
    use crate::device::queue::QueueLimits;
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
                    crate::base::units::fmt_bytes(t.bs),
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
    use crate::device::queue::{page_size, QueueLimits};
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
            let why = QueueLimits::of_name(&d.name)
                .and_then(|q| q.split_reason(t.bs, page_size()))
                .unwrap_or_else(|| {
                    "no queue limit explains it (the device or a layer above it splits requests)"
                        .into()
                });
            out.push(format!(
                "O_DIRECT {what} of {} reached {} as requests of {} on average: {why}",
                crate::base::units::fmt_bytes(t.bs),
                d.name,
                crate::base::units::fmt_bytes(avg as u64)
            ));
        }
        // A stacked volume's members get pieces of at most one chunk (the
        // volume's minimum_io_size); smaller than that, a member's own
        // queue split them.
        let chunk = QueueLimits::of_name(&d.name)
            .and_then(|q| q.minimum_io_size)
            .filter(|&c| c > t.logical_block_size);
        let piece = chunk.map_or(t.bs, |c| c.min(t.bs));
        for m in d.members.iter().filter(|m| m.stats) {
            let Some(avg) = m
                .avg_read_request_bytes
                .filter(|&a| a < piece as f64 * 0.98)
            else {
                continue;
            };
            let why = QueueLimits::of_name(&m.name)
                .and_then(|q| q.split_reason(piece, page_size()))
                .unwrap_or_else(|| "no queue limit of the member explains it".into());
            out.push(format!(
                "member {} of {} received O_DIRECT reads as requests of {} on average, for pieces of {}{}: {why}",
                m.name,
                d.name,
                crate::base::units::fmt_bytes(avg as u64),
                crate::base::units::fmt_bytes(piece),
                if chunk.is_some() { " (the chunk)" } else { "" }
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
    let Some(avail) = crate::device::cache::available_memory() else {
        return Ok(());
    };
    if total > avail / 4 && !cfg.force_memory {
        return usage(format!(
            "the I/O buffers need {} ({} workers x --iodepth {} x the block size), more than a quarter of the {} of memory available: lower --iodepth, --bs or --jobs, or pass --force-memory",
            crate::base::units::fmt_bytes(total),
            plan.workers.len(),
            cfg.iodepth,
            crate::base::units::fmt_bytes(avail)
        ));
    }
    Ok(())
}

/// Targets that reach the same bytes (one file twice, through a symlink or
/// a hard link; a partition and its disk; two loop devices over one image):
/// refused when the run writes, a warning when it reads, since their
/// figures then share one device and are not independent.
fn overlapping_targets(paths: &[PathBuf], writes: bool) -> Result<Vec<String>> {
    use crate::device::extent;
    let sys = extent::Sys::default();
    let shown = crate::base::error::show_path;
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
                    crate::device::sysfs_name(std::path::Path::new("/sys"), ma, mi)
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
) -> Result<crate::device::cache::CacheDoc> {
    if cfg.direct || cfg.rw.writes() {
        return Ok(crate::device::cache::CacheDoc {
            state: "untouched".into(),
            method: "-".into(),
            seconds: 0.0,
            memcpy_bytes_per_sec: None,
        });
    }
    if cfg.cached {
        let regions: Vec<(PathBuf, crate::base::io::Region)> = plan
            .targets
            .iter()
            .map(|t| (t.path.clone(), t.region))
            .collect();
        return crate::device::cache::preload(&regions);
    }
    let working_set: u64 = plan.targets.iter().map(|t| t.region.length).sum();
    if let Some(avail) = crate::device::cache::available_memory().filter(|&a| working_set < a) {
        warnings.push(format!(
            "the buffered working set ({}) fits in free memory ({}): once read, it can be served from the page cache; the device counters show whether it was",
            crate::base::units::fmt_bytes(working_set),
            crate::base::units::fmt_bytes(avail)
        ));
    }
    let paths: Vec<PathBuf> = plan.targets.iter().map(|t| t.path.clone()).collect();
    crate::device::cache::make_cold(&paths, cfg.drop_caches)
}

/// Reads every target's storage stack (for the document) and learns the
/// chunk and member count of every striped block-device target (md raid0,
/// dm striped) from it. A stack that cannot be read (tmpfs) is left out.
fn stripe_geometry(
    targets: &mut [crate::device::Target],
) -> Vec<(PathBuf, crate::device::topology::Topology)> {
    let Ok(src) = crate::device::topology::Sources::system(None) else {
        return Vec::new();
    };
    let mut stacks = Vec::new();
    for t in targets.iter_mut() {
        let Ok(topo) = crate::device::topology::discover(&t.path, &src) else {
            continue;
        };
        if t.kind == crate::device::TargetKind::Block {
            if let (true, Some(chunk)) = (topo.root.is_striped(), topo.root.chunk_size()) {
                t.stripe = Some(crate::device::StripeGeometry {
                    chunk,
                    members: topo.root.members.len() as u64,
                });
            }
        }
        stacks.push((t.path.clone(), topo));
    }
    stacks
}

/// The members of a volume, for `--members`: those of its striped layer,
/// each with what stands above its disk (`Topology::stripe_members`).
pub fn member_paths(volume: &std::path::Path) -> Result<Vec<PathBuf>> {
    let src = crate::device::topology::Sources::system(None)?;
    let t = crate::device::topology::discover(volume, &src)?;
    if t.root.members.is_empty() {
        return usage(format!(
            "--members {}: {} has no members (a plain disk or partition): name it as a TARGET instead",
            crate::base::error::show_path(volume),
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
        let Some(knob) = device::readahead_knob(p) else {
            return usage(format!(
                "--readahead needs a block device under {}, and it has none (tmpfs? btrfs? a missing path?)",
                crate::base::error::show_path(p)
            ));
        };
        if seen.insert(knob.clone()) && !dry_run {
            guard.set(&knob, &kb.to_string()).map_err(|e| {
                // A lock held by another run, or an interrupt while waiting, says so itself.
                if e.downcast_ref::<crate::base::error::UsageError>().is_some()
                    || e.downcast_ref::<crate::base::error::Interrupted>()
                        .is_some()
                {
                    return e;
                }
                crate::base::error::UsageError(format!(
                    "cannot set the read-ahead of {}: {e:#} (root is needed)",
                    p.display()
                ))
                .into()
            })?;
        }
    }
    Ok(())
}
