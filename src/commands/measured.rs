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
use crate::measure::config::{RunConfig, RwMode};
use crate::measure::coordinator;
use crate::measure::layout as plan;

/// What every measuring command (run, verify, sweep, compare) does first:
/// catch signals, and warn when a killed run left settings to restore.
pub fn preflight() {
    signals::install();
    for (_, dir) in crate::device::scratch::pending(&knobs::state_dir()) {
        eprintln!(
            "stripebench: warning: a killed run left its test bed behind ({}): run 'stripebench restore' to remove it",
            // The path is a state file's: data, shown escaped.
            crate::base::error::show_path(&dir)
        );
    }
    let orphans = knobs::pending(&knobs::state_dir());
    if !orphans.is_empty() {
        eprintln!(
            "stripebench: warning: a killed run left {} setting(s) changed (state in {}): run 'stripebench restore'",
            orphans.iter().map(|(_, k)| k.len()).sum::<usize>(),
            crate::base::error::show_path(&knobs::state_dir())
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
pub fn measure(
    cfg: &RunConfig,
    paths: &[PathBuf],
    owned: bool,
    out: &dyn crate::measure::live::RunOutputs,
) -> Result<Outcome> {
    // Here, not in one command: a sweep point or compare phase may ask for io_uring too.
    if cfg.hugepages == crate::engine::buffer::HugePages::On {
        crate::engine::buffer::probe(cfg.hugepages).map_err(crate::base::error::UsageError)?;
    }
    if cfg.engine == EngineKind::Uring {
        crate::engine::uring::probe().map_err(crate::base::error::UsageError)?;
    }
    let access = Access {
        direct: cfg.direct,
        write: cfg.rw.writes(),
        allow_destructive: cfg.allow_destructive,
        owned,
        force_signature: cfg.force_signature,
        dry_run: cfg.dry_run,
    };
    // Each name is resolved once, here; every check from now on is on what
    // it resolved to, and the I/O goes to that same inode.
    let inspected = paths
        .iter()
        .map(|p| device::inspect(p, access))
        .collect::<Result<Vec<_>>>()?;
    let overlaps = overlapping_targets(&inspected, cfg.rw.writes())?;
    // The outputs were checked against the targets' names before this
    // command began; again now against what the targets resolved to.
    let files: Vec<(u64, u64)> = inspected.iter().flat_map(|t| t.files()).collect();
    out.refuse_on_files(&files)?;
    // Read-ahead is set before the targets are opened for I/O: a file takes
    // its read-ahead window from the device when it is opened.
    let mut knob_guard = KnobGuard::new(knobs::state_dir()).wait_for_locks(cfg.wait_lock);
    let mut readahead_notes = Vec::new();
    if let Some(kb) = cfg.readahead_kb {
        readahead_notes = set_readahead(&mut knob_guard, &inspected, kb, cfg.dry_run)?;
    }
    let mut targets = inspected
        .into_iter()
        .map(device::Inspected::open)
        .collect::<Result<Vec<_>>>()?;
    let stacks = stripe_geometry(&mut targets);
    let checks: Vec<(PathBuf, Vec<crate::device::guard::Check>)> = targets
        .iter()
        .map(|t| (t.path.clone(), t.checks.clone()))
        .collect();
    let plan = plan::build(cfg, targets)?;
    check_buffer_memory(cfg, &plan)?;
    let mut checks = checks;
    let holes = check_holes(cfg, &plan, &mut checks)?;
    if cfg.dry_run {
        return Ok(Outcome::DryRun(Box::new(plan), checks));
    }

    let mut warnings = plan.warnings.clone();
    warnings.extend(overlaps);
    warnings.extend(holes);
    warnings.extend(readahead_notes);
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
    let exec = coordinator::execute(cfg, &plan, out.live())?;
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

/// Before the run: a file target whose region holds holes or unwritten
/// (fallocated) extents reads zeros from memory there, never from a device
/// (`truncate -s 512M f.dat` read at 22 GB/s). A read of one is refused
/// (a failed check in a dry run) unless `--allow-holes`, which makes it a
/// warning. `verify` reads holes on purpose: they are its unwritten blocks.
fn check_holes(
    cfg: &RunConfig,
    plan: &plan::Plan,
    checks: &mut [(PathBuf, Vec<crate::device::guard::Check>)],
) -> Result<Vec<String>> {
    use crate::base::units::{fmt_bytes, fmt_size_arg};
    let reads = !matches!(cfg.rw, RwMode::Write | RwMode::Randwrite);
    if !reads || cfg.verify {
        return Ok(Vec::new());
    }
    let mut warnings = Vec::new();
    for t in plan
        .targets
        .iter()
        .filter(|t| t.kind == device::TargetKind::File)
    {
        let Some(h) = device::holes::of_region(&t.file, t.region.offset, t.region.length) else {
            continue;
        };
        let shown = crate::base::error::show_path(&t.path);
        let empty = h.empty_bytes();
        let what = match (h.hole_bytes, h.unwritten_bytes) {
            (_, 0) => "holes (never written)".to_string(),
            (0, _) => "unwritten extents (allocated by fallocate, never written)".to_string(),
            (hb, ub) => format!(
                "holes ({} never written) and unwritten extents ({} allocated by fallocate)",
                fmt_bytes(hb),
                fmt_bytes(ub)
            ),
        };
        let amount = format!(
            "{} of the {} region of {shown} ({:.1}%) are {what}: they read as zeros without any I/O to a device",
            fmt_bytes(empty),
            fmt_bytes(h.region),
            empty as f64 / h.region.max(1) as f64 * 100.0
        );
        let (passed, detail) = if empty == 0 {
            (
                true,
                format!("the {} region is all written data", fmt_bytes(h.region)),
            )
        } else if cfg.allow_holes {
            let w = format!(
                "{amount}; read anyway (--allow-holes): those reads measure memory, not the device"
            );
            warnings.push(w.clone());
            (true, w)
        } else {
            let region = if (t.region.offset, t.region.length) == (0, t.size) {
                String::new()
            } else {
                format!(
                    " --offset {} --size {}",
                    fmt_size_arg(t.region.offset),
                    fmt_size_arg(t.region.length)
                )
            };
            (
                false,
                format!(
                    "refusing to read: {amount}, so the figures would measure memory. Write it first (stripebench run --rw write --passes 1 --bs 1m{region} --allow-destructive {shown}), or pass --allow-holes to read it anyway"
                ),
            )
        };
        if !passed && !cfg.dry_run {
            return usage(detail);
        }
        if let Some((_, cs)) = checks.iter_mut().find(|(p, _)| *p == t.path) {
            cs.push(crate::device::guard::Check {
                name: "holes".into(),
                passed,
                detail,
            });
        }
    }
    Ok(warnings)
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
        // Reads the device mostly never saw (holes, a cache) say nothing
        // of how this run's requests were split: the warning about them does.
        let ours = d.read_ratio.is_none_or(|r| r >= 0.5);
        for (what, avg) in [
            (
                "reads",
                d.avg_read_request_bytes
                    .filter(|_| ours && d.app_read_bytes > 0),
            ),
            (
                "writes",
                d.avg_write_request_bytes.filter(|_| d.app_write_bytes > 0),
            ),
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
/// figures then share one device and are not independent. Judged on what
/// each name resolved to when it was inspected, never on the names again.
fn overlapping_targets(targets: &[device::Inspected], writes: bool) -> Result<Vec<String>> {
    use crate::device::extent;
    let shown = |t: &device::Inspected| crate::base::error::show_path(&t.path);
    let mut warnings = Vec::new();
    for (i, a) in targets.iter().enumerate() {
        for b in targets.iter().skip(i + 1) {
            let same = a.identity() == b.identity();
            let (Some(x), Some(y)) = (&a.extent, &b.extent) else {
                if same {
                    return usage(format!(
                        "target {} is named twice: use --jobs for several workers on one target",
                        shown(b)
                    ));
                }
                continue;
            };
            if same
                || (x.base == y.base
                    && (x.start, x.len) == (y.start, y.len)
                    && matches!(x.base, extent::Base::File(..)))
            {
                return usage(format!(
                    "target {} is named twice{}: use --jobs for several workers on one target",
                    shown(b),
                    if a.path == b.path {
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
                (Some(f), _) => crate::base::error::show_path(f),
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
    // A sequential read evicts its region at each wrap-around (the worker's
    // evict_on_wrap): only a random read can re-read from the cache.
    let rereads = !plan.workers.iter().all(|w| w.evict_on_wrap);
    if let Some(avail) = crate::device::cache::available_memory()
        .filter(|&a| working_set < a)
        .filter(|_| rereads)
    {
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
/// A file has no read-ahead of its own: its file system's device's is set,
/// which every file on that device shares; said before the run (on stderr)
/// and returned, for the document's warnings.
fn set_readahead(
    guard: &mut KnobGuard,
    targets: &[device::Inspected],
    kb: u64,
    dry_run: bool,
) -> Result<Vec<String>> {
    let mut seen = HashSet::new();
    let mut notes = Vec::new();
    for t in targets {
        let p = &t.path;
        let Some(knob) = device::readahead_path(std::path::Path::new("/sys"), t.device()) else {
            return usage(format!(
                "--readahead needs a block device under {}, and it has none (tmpfs? btrfs? a missing path?)",
                crate::base::error::show_path(p)
            ));
        };
        if t.kind == device::TargetKind::File {
            let (ma, mi) = t.device();
            let dev = device::sysfs_name(std::path::Path::new("/sys"), ma, mi)
                .unwrap_or_else(|| "its device".into());
            let note = format!(
                "--readahead {kb} on the file {}: a file has no read-ahead of its own; this sets {} of {dev}, the device under its file system, which every file on {dev} shares for the run",
                crate::base::error::show_path(p),
                knob.display()
            );
            eprintln!("stripebench: note: {note}");
            notes.push(note);
        }
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
    Ok(notes)
}
