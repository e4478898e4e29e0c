//! One measured run on named paths, start to finish, shared by run,
//! verify, sweep and compare: what every measuring command does first
//! ([`preflight`]: signals, leftovers of killed runs), then [`measure`]:
//! the engine probes, guard and open the targets, lay out the workers,
//! check memory and request sizes, prepare the page cache, run. Settings
//! changed for the run are put back before it returns.
//!
//! It returns what a finished run holds ([`Finished`]); the run's document
//! is assembled from it a layer up (`document::finished`).

use std::path::PathBuf;

use anyhow::Result;

use crate::base::error::{usage, UsageError};
use crate::base::signals;
use crate::base::warning::Warning;
use crate::device::cache::CacheFacts;
use crate::device::guard::Check;
use crate::device::knobs::{self, KnobGuard};
use crate::device::requests::{self, Sized};
use crate::device::topology::Topology;
use crate::device::{self, Access};
use crate::engine::EngineKind;
use crate::measure::config::{RunConfig, RwMode};
use crate::measure::coordinator::{self, Execution};
use crate::measure::layout::{self as plan, Plan};

/// What every measuring command (run, verify, sweep, compare) does first:
/// catch signals, and warn when a killed run left settings to restore (the
/// warnings, which the command says before it measures).
pub fn preflight() -> Result<Vec<Warning>> {
    signals::install();
    Ok(leftovers(&knobs::state_dir()?))
}

/// What killed runs left in the state directory `state`: files refused,
/// test beds, changed settings.
fn leftovers(state: &std::path::Path) -> Vec<Warning> {
    let mut warnings: Vec<Warning> = crate::device::state::refused_files(state)
        .into_iter()
        .map(|why| Warning::StateFileRefused { why })
        .collect();
    for (_, dir) in device::scratch::pending(state) {
        // The path is a state file's: data, shown escaped.
        warnings.push(Warning::TestBedLeft {
            dir: crate::base::error::show_path(&dir),
        });
    }
    let orphans = knobs::pending(state);
    if !orphans.is_empty() {
        warnings.push(Warning::SettingsLeft {
            settings: orphans.iter().map(|(_, k)| k.len()).sum(),
            state: crate::base::error::show_path(state),
        });
    }
    warnings
}

/// Each target's guard checks, by its path.
pub type Checks = Vec<(PathBuf, Vec<Check>)>;

/// What [`measure`] produced.
pub enum Outcome {
    /// A dry run: the layout and every target's guard checks, nothing done.
    DryRun(Box<Plan>, Checks),
    /// A finished run.
    Done(Box<Finished>),
}

/// What a finished run holds, for its document.
pub struct Finished {
    pub plan: Plan,
    pub execution: Execution,
    /// Said before the run (layout, overlaps, holes, read-ahead, memory
    /// targets, CPUs, request sizes, the page cache), in that order.
    pub warnings: Vec<Warning>,
    /// Said after it, from the device counters: requests split on the way.
    pub split_requests: Vec<Warning>,
    /// Every target's storage stack that could be read, by its path.
    pub stacks: Vec<(PathBuf, Topology)>,
    /// Per target (the plan's order): the layer under it that holds its
    /// whole region as written data, when a layer check saw one.
    pub stored: Vec<Option<String>>,
    pub cache: CacheFacts,
    /// Each planned target's settings that another run's record held
    /// before or after the run, in the plan's target order.
    pub held: Vec<Vec<knobs::HeldSetting>>,
}

/// The kernel names whose settings govern a target: its device's, the
/// whole disk's when that is a partition (a partition's queue is its
/// disk's), and every device of its storage stack.
fn device_names(
    t: &crate::measure::layout::PlannedTarget,
    stacks: &[(PathBuf, Topology)],
) -> Vec<String> {
    fn stack(d: &crate::device::topology::Device, out: &mut Vec<String>) {
        out.push(d.name.clone());
        out.extend(d.parent.clone());
        d.members.iter().for_each(|m| stack(m, out));
    }
    let mut out: Vec<String> = t.device_name.iter().cloned().collect();
    if let Some((ma, mi)) = t.device {
        let sys = crate::base::host::Host::real().sys;
        if let Ok(dir) = std::fs::canonicalize(sys.join(format!("dev/block/{ma}:{mi}"))) {
            if dir.join("partition").is_file() {
                out.extend(
                    dir.parent()
                        .and_then(|p| p.file_name())
                        .map(|n| n.to_string_lossy().into_owned()),
                );
            }
        }
    }
    if let Some((_, topo)) = stacks.iter().find(|(p, _)| *p == t.path) {
        stack(&topo.root, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

/// `--rw trim`/`randtrim` on a block device: the device must discard
/// (`queue/discard_max_bytes` above 0), else every trim would fail
/// (EOPNOTSUPP), as fio's do; said before the first I/O. A file's trims
/// are punched holes, which its file system is asked for at the first.
fn check_discard(cfg: &RunConfig, inspected: &[device::Inspected]) -> Result<()> {
    if !cfg.rw.trims() {
        return Ok(());
    }
    let sys = crate::base::host::Host::real().sys;
    for t in inspected {
        if t.kind != device::TargetKind::Block {
            continue;
        }
        let max = device::sysfs_discard_max(&sys, t.device());
        if let Some(why) = cannot_discard(cfg.rw, &t.path, max) {
            return usage(why);
        }
    }
    Ok(())
}

/// Why a trim job cannot run on the block device `path` whose discard
/// limit is `max` (`None`: not known, so let its trims say): 0 discards
/// nothing.
fn cannot_discard(
    rw: crate::measure::config::RwMode,
    path: &std::path::Path,
    max: Option<u64>,
) -> Option<String> {
    (max == Some(0)).then(|| format!(
        "--rw {}: {} cannot discard (its queue/discard_max_bytes is 0), so every trim would fail: give a device that discards, or a file (whose trims punch holes)",
        rw.name(),
        path.display()
    ))
}

/// One measured run on `paths` (`owned`: files stripebench created):
/// guard and open the targets, plan, run. Settings changed for the run are
/// put back before it returns.
pub fn measure(
    cfg: &RunConfig,
    paths: &[PathBuf],
    owned: bool,
    out: &dyn crate::measure::live::RunOutputs,
) -> Result<Outcome> {
    // The run's set-up time runs from here to the workers' gate.
    let began = std::time::Instant::now();
    probe_engine(cfg)?;
    // Each name is resolved once, here; every check from now on is on what
    // it resolved to, and the I/O goes to that same inode.
    let inspected = paths
        .iter()
        .map(|p| device::inspect(p, access(cfg, owned)))
        .collect::<Result<Vec<_>>>()?;
    check_discard(cfg, &inspected)?;
    let overlaps = device::overlap::overlapping_targets(&inspected, cfg.rw.writes())?;
    // The outputs were checked against the targets' names before this
    // command began; again now against what the targets resolved to.
    let files: Vec<(u64, u64)> = inspected.iter().flat_map(|t| t.files()).collect();
    out.refuse_on_files(&files)?;
    // Read-ahead is set before the targets are opened for I/O: a file takes
    // its read-ahead window from the device when it is opened.
    // md's tunables are checked (the level of every target's array, the
    // stripe cache's memory) before any setting changes.
    let md_tunables = check_md_tunables(cfg, &inspected)?;
    let mut knob_guard = KnobGuard::new(knobs::state_dir()?).wait_for_locks(cfg.wait_lock);
    let mut readahead_notes = Vec::new();
    if let Some(kb) = cfg.readahead_kb {
        readahead_notes =
            device::readahead::set(&mut knob_guard, &inspected, kb, cfg.dry_run, &cfg.named)?;
    }
    md_tunables.apply(&mut knob_guard, cfg.dry_run)?;
    let mut targets = inspected
        .into_iter()
        .map(device::Inspected::open)
        .collect::<Result<Vec<_>>>()?;
    let atime_checked = atime_checked(&targets);
    let stacks = device::stripes::learn_geometry(&mut targets);
    let mut checks: Checks = targets
        .iter()
        .map(|t| (t.path.clone(), t.checks.clone()))
        .collect();
    let plan = plan::build(cfg, targets)?;
    check_buffer_memory(cfg, &plan)?;
    check_ring(cfg)?;
    check_files(
        cfg,
        plan.targets.iter().map(|t| (&*t.file, t.path.as_path())),
    )?;
    let (holes, stored) = check_holes(cfg, &plan, &mut checks)?;
    if cfg.dry_run {
        return Ok(Outcome::DryRun(Box::new(plan), checks));
    }

    // The session's own warnings, after the layout's.
    let mut warnings = plan.warnings.clone();
    warnings.extend(overlaps);
    warnings.extend(holes);
    warnings.extend(readahead_notes);
    warnings.extend(atime_checked);
    warnings.extend(memory_targets(cfg, &plan));
    warnings.extend(shared_cpus(cfg, &plan));
    // Said now too, before the run: many devices' same limit is one line.
    let oversized = oversized_requests(cfg, &plan);
    out.warn(&crate::base::warning::group(&oversized));
    warnings.extend(oversized);
    let cache = prepare_cache(cfg, &plan, &mut warnings)?;
    // Another run's record of a setting of a target's device, before the
    // run and after it (a run that began or ended meanwhile): what sysfs
    // showed is that run's value, not the device's.
    let state = knobs::state_dir()?;
    let names: Vec<Vec<String>> = plan
        .targets
        .iter()
        .map(|t| device_names(t, &stacks))
        .collect();
    let held_now = || -> Vec<Vec<knobs::HeldSetting>> {
        names
            .iter()
            .map(|n| {
                let n: Vec<&str> = n.iter().map(String::as_str).collect();
                knobs::held_by_other_runs(&state, &n)
            })
            .collect()
    };
    let mut held = held_now();
    let execution = coordinator::execute(cfg, &plan, out, began)?;
    for (mine, after) in held.iter_mut().zip(held_now()) {
        for h in after {
            if !mine
                .iter()
                .any(|m| m.setting == h.setting && m.pid == h.pid)
            {
                mine.push(h);
            }
        }
    }
    let split_requests = split_requests(cfg, &plan, &execution);
    warnings.extend(execution.warnings.iter().cloned());
    drop(knob_guard);
    Ok(Outcome::Done(Box::new(Finished {
        plan,
        execution,
        warnings,
        split_requests,
        stacks,
        stored,
        cache,
        held,
    })))
}

/// Here, not in one command: a sweep point or compare phase may ask for
/// huge pages or io_uring too.
fn probe_engine(cfg: &RunConfig) -> Result<()> {
    if cfg.hugepages == crate::engine::buffer::HugePages::On {
        crate::engine::buffer::probe(cfg.hugepages).map_err(UsageError)?;
    }
    if cfg.engine == EngineKind::Uring {
        crate::engine::uring::probe().map_err(UsageError)?;
    }
    Ok(())
}

/// How the targets are opened and guarded.
fn access(cfg: &RunConfig, owned: bool) -> Access {
    Access {
        direct: cfg.direct,
        write: cfg.rw.writes(),
        allow_destructive: cfg.allow_destructive,
        owned,
        force_signature: cfg.force_signature,
        dry_run: cfg.dry_run,
        fill: cfg.fill,
    }
}

/// `--stripe-cache-size`, `--group-thread-cnt`: every target's array
/// checked ([`device::md_tunables::check`]) before anything changes.
fn check_md_tunables(
    cfg: &RunConfig,
    targets: &[device::Inspected],
) -> Result<device::md_tunables::Checked> {
    let on: Vec<(PathBuf, (u64, u64))> = if cfg.md_tunables.any() {
        targets
            .iter()
            .map(|t| (t.path.clone(), t.device()))
            .collect()
    } else {
        Vec::new()
    };
    device::md_tunables::check(
        &crate::base::host::Host::real().sys,
        &on,
        cfg.md_tunables,
        device::cache::available_memory(),
        cfg.force_memory,
    )
    .map_err(Into::into)
}

/// What the run asks of each file it will do I/O on, checked before the
/// first I/O (in a dry run too, as compare guards its phases): `--uncached`
/// RWF_DONTCACHE and `--nowait` RWF_NOWAIT, each probed with one read that
/// reads nothing ([`crate::engine::probe_rw_flags`]; for RWF_NOWAIT, EAGAIN
/// is an answer, EOPNOTSUPP is not), and
/// `--hipri` poll queues on the device under it. `files` are what was
/// opened, with the name to show.
fn check_files<'a>(
    cfg: &RunConfig,
    files: impl IntoIterator<Item = (&'a std::fs::File, &'a std::path::Path)>,
) -> Result<()> {
    let hipri = cfg.ring.iopoll && cfg.engine == EngineKind::Uring;
    if !cfg.uncached && !cfg.nowait && !hipri {
        return Ok(());
    }
    let sys = crate::base::host::Host::real().sys;
    for (file, path) in files {
        let shown = crate::base::error::show_path(path);
        if cfg.uncached {
            if let Err(e) = crate::engine::probe_dontcache(file, 4096) {
                return usage(format!(
                    "{shown}: --uncached needs RWF_DONTCACHE (Linux 6.14+, and a file system that supports it), refused here ({e}): use --buffered or --direct"
                ));
            }
        }
        if cfg.nowait {
            match crate::engine::probe_rw_flags(file, 4096, crate::engine::RWF_NOWAIT) {
                Err(e) if e.raw_os_error() != Some(libc::EAGAIN) => {
                    return usage(format!(
                        "{shown}: --nowait needs RWF_NOWAIT (Linux 4.14+, and a file or device that supports it), refused here ({e}): drop --nowait"
                    ))
                }
                _ => {}
            }
        }
        if hipri {
            let why = match device::device_of_file(file)
                .and_then(|d| crate::device::queue::QueueLimits::polls(&sys, d))
            {
                Some(true) => continue,
                Some(false) => "its device has no poll queues (queue/io_poll is 0)",
                None => "its device's queue does not say whether it polls (no queue/io_poll)",
            };
            return usage(format!(
                "{shown}: --hipri needs polled completions, and {why}: load the driver with poll queues (nvme poll_queues=N, null_blk poll_queues=N), or drop --hipri"
            ));
        }
    }
    Ok(())
}

/// io_uring's setup (`--hipri`, `--sqpoll`, `--taskrun`): this kernel
/// builds such a ring, checked before the first I/O, the refusal naming
/// the option and the kernel it needs.
fn check_ring(cfg: &RunConfig) -> Result<()> {
    let setup = cfg.ring;
    if cfg.engine != EngineKind::Uring || setup == Default::default() {
        return Ok(());
    }
    // auto falls back to what the kernel has: the ring is probed without it.
    let mut probe = setup;
    if probe.taskrun == crate::engine::TaskRun::Auto {
        probe.taskrun = crate::engine::TaskRun::Plain;
    }
    let Err(e) = crate::engine::uring::builder(probe).build(2) else {
        return Ok(());
    };
    let (what, since) = if !matches!(
        setup.taskrun,
        crate::engine::TaskRun::Auto | crate::engine::TaskRun::Plain
    ) {
        (
            format!("--taskrun {}", setup.taskrun.name()),
            setup.taskrun.since(),
        )
    } else if setup.sqpoll {
        ("--sqpoll".to_string(), "5.11 (5.1 as root)")
    } else {
        ("--hipri".to_string(), "5.1")
    };
    usage(format!(
        "{what}: this kernel ({}) refused the io_uring setup{} ({e}); it needs Linux {since} or later: drop {what}",
        nix::sys::utsname::uname()
            .map(|u| u.release().to_string_lossy().into_owned())
            .unwrap_or_else(|_| "unknown".into()),
        crate::engine::uring::describe(setup)
    ))
}

/// Before a test file is written into `dir` (the built-in test bed, or
/// compare's file on a mounted volume): [`check_files`] on a small probe
/// file of its own there, so that a refusal comes before gigabytes are
/// written.
pub fn check_test_dir(cfg: &RunConfig, dir: &std::path::Path) -> Result<()> {
    if !cfg.uncached && !cfg.nowait && !cfg.ring.iopoll {
        return Ok(());
    }
    let path = dir.join(format!(
        ".stripebench-probe-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    let made = {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .and_then(|mut f| f.write_all(&[0x5a; 4096]).map(|()| f))
    };
    let result = match &made {
        Ok(file) => check_files(cfg, [(file, dir)]),
        // No probe file: the test bed's own writing will say why.
        Err(_) => Ok(()),
    };
    drop(made);
    let _ = std::fs::remove_file(&path);
    result
}

/// Refuses I/O buffers above a quarter of the available memory, before any
/// of it is allocated, unless `--force-memory` ([`super::memory`]).
fn check_buffer_memory(cfg: &RunConfig, plan: &Plan) -> Result<()> {
    let workers: Vec<(u64, u8)> = plan.workers.iter().map(|w| (w.bs, w.read_pct)).collect();
    super::memory::check_buffers(
        &workers,
        cfg.iodepth,
        device::cache::available_memory(),
        cfg.force_memory,
    )
    .map_err(|e| UsageError(e).into())
}

/// Before the run: the hole guard ([`device::hole_guard`]) on every file
/// target a read reaches; each verdict is a check of its target's (seen in
/// a dry run). `verify`'s read-back reads holes on purpose: they are its
/// unwritten blocks; a verified mix's own reads are judged as any read.
///
/// A block device is judged by the layer under it, where one is seen
/// (a loop device's backing file, zram). Returns the warnings, and per
/// target the layer that holds its whole region as written data (what a
/// sample of zero reads on it is told: the zeros were stored).
fn check_holes(
    cfg: &RunConfig,
    plan: &Plan,
    checks: &mut Checks,
) -> Result<(Vec<Warning>, Vec<Option<String>>)> {
    let mut stored = vec![None; plan.targets.len()];
    let reads = cfg.rw.reads();
    // A verified read-back reads only what the run wrote; a verified mix
    // (randrw, rw) also reads, as its mix, blocks no pass has written
    // yet, which are holes in a sparse file (create_on_open=1).
    let mixes = matches!(cfg.rw, RwMode::Randrw | RwMode::Rw);
    if !reads || (cfg.verify && !mixes) {
        return Ok((Vec::new(), stored));
    }
    let mut warnings = Vec::new();
    for (i, t) in plan.targets.iter().enumerate() {
        let v = match (t.kind, t.device) {
            (device::TargetKind::File, _) => {
                device::hole_guard::judge(&t.path, &t.file, t.region, t.size, cfg.allow_holes)
                    .map(|v| (v.passed, v.detail, v.warning, None))
            }
            (device::TargetKind::Block, Some(dev)) => {
                device::hole_guard::judge_layer(&t.path, &t.file, dev, t.region, cfg.allow_holes)
                    .map(|v| (v.passed, v.detail, v.warning, v.stored))
            }
            _ => None,
        };
        let Some((passed, detail, warning, layer)) = v else {
            continue;
        };
        if !passed && !cfg.dry_run {
            return usage(detail);
        }
        warnings.extend(warning);
        stored[i] = layer;
        if let Some((_, cs)) = checks.iter_mut().find(|(p, _)| *p == t.path) {
            cs.push(Check {
                name: "holes".into(),
                passed,
                detail,
            });
        }
    }
    Ok((warnings, stored))
}

/// Devices the kernel would not open O_NOATIME: each read checks the node's atime.
fn atime_checked(targets: &[device::Target]) -> Vec<Warning> {
    targets
        .iter()
        .filter(|t| t.atime_checked)
        .map(|t| Warning::AtimeChecked {
            path: crate::base::error::show_path(&t.path),
        })
        .collect()
}

/// A target on tmpfs (or another memory file system) is memory, not a device.
fn memory_targets(cfg: &RunConfig, plan: &Plan) -> Vec<Warning> {
    plan.targets
        .iter()
        .filter_map(|t| {
            device::memory_fs(&t.file).map(|fs| Warning::MemoryTarget {
                path: t.path.display().to_string(),
                fs: fs.to_string(),
                direct: cfg.direct,
            })
        })
        .collect()
}

/// More workers than `--cpus` gives them: they take turns.
fn shared_cpus(cfg: &RunConfig, plan: &Plan) -> Option<Warning> {
    let c = cfg.cpus.as_ref()?;
    (plan.workers.len() > c.len()).then_some(Warning::SharedCpus {
        workers: plan.workers.len(),
        cpus: c.len(),
    })
}

/// The targets as the request checks see them.
fn sized(plan: &Plan) -> Vec<Sized<'_>> {
    plan.targets
        .iter()
        .map(|t| Sized {
            device: t.device,
            device_name: t.device_name.as_deref(),
            bs: t.bs,
            logical_block_size: t.logical_block_size,
        })
        .collect()
}

/// Before an O_DIRECT run: block sizes the device's requests cannot carry.
fn oversized_requests(cfg: &RunConfig, plan: &Plan) -> Vec<Warning> {
    if !cfg.direct {
        return Vec::new();
    }
    requests::oversized(&sized(plan))
}

/// After an O_DIRECT run: requests the device's counters show split.
fn split_requests(cfg: &RunConfig, plan: &Plan, exec: &Execution) -> Vec<Warning> {
    // Runs at once: the counters hold the others' requests too.
    // --bssplit: requests of many sizes, whose mean is below the largest
    // with nothing split: no sign to read from the mean.
    if !cfg.direct || cfg.together.is_some() || cfg.access.sizes.is_some() {
        return Vec::new();
    }
    let seen: Vec<_> = sized(plan)
        .into_iter()
        .zip(exec.devices.iter().map(Option::as_ref))
        .collect();
    let mut out = requests::split(&seen);
    // The page size of each target's buffers (the largest of its workers').
    let mut pages = vec![0u64; plan.targets.len()];
    for (w, o) in plan.workers.iter().zip(&exec.outcomes) {
        if let (Some(p), Some(e)) = (pages.get_mut(w.target_index), &o.engine) {
            *p = (*p).max(e.buffers.page_size_bytes);
        }
    }
    let paged: Vec<_> = sized(plan).into_iter().zip(pages).collect();
    out.extend(requests::unsplit_by_huge_pages(&paged));
    out
}

/// Cold cache for buffered reads (evicted, timed apart), or warm on purpose
/// with --cached; untouched for O_DIRECT and writes.
fn prepare_cache(cfg: &RunConfig, plan: &Plan, warnings: &mut Vec<Warning>) -> Result<CacheFacts> {
    if cfg.direct || cfg.rw.writes() {
        return Ok(CacheFacts::untouched());
    }
    if cfg.cached {
        let regions: Vec<(PathBuf, crate::base::io::Region)> = plan
            .targets
            .iter()
            .map(|t| (t.path.clone(), t.region))
            .collect();
        return device::cache::preload(&regions);
    }
    let working_set: u64 = plan.targets.iter().map(|t| t.region.length).sum();
    // A sequential read evicts its region at each wrap-around (the worker's
    // OnWrap::Evict): only a random read can re-read from the cache; and
    // --uncached (RWF_DONTCACHE) keeps no page to re-read.
    let rereads = !cfg.uncached
        && !plan
            .workers
            .iter()
            .all(|w| w.on_wrap == crate::measure::worker::OnWrap::Evict);
    if let Some(avail) = device::cache::available_memory()
        .filter(|&a| working_set < a)
        .filter(|_| rereads)
    {
        warnings.push(Warning::WorkingSetFits {
            working_set,
            available: avail,
        });
    }
    let paths: Vec<PathBuf> = plan.targets.iter().map(|t| t.path.clone()).collect();
    device::cache::make_cold(&paths, cfg.drop_caches)
}

#[cfg(test)]
mod tests {
    use super::*;

    // A device that discards nothing is refused before the first trim,
    // by name (a device's limit cannot be lowered for a test and put
    // back: the loop driver keeps a lowered limit across attachments).
    #[test]
    fn a_trim_job_on_a_device_that_discards_nothing_is_refused_by_name() {
        let p = std::path::Path::new("/dev/sdz");
        let why = cannot_discard(RwMode::Randtrim, p, Some(0)).unwrap();
        assert!(
            why.starts_with("--rw randtrim: /dev/sdz cannot discard"),
            "{why}"
        );
        assert_eq!(cannot_discard(RwMode::Trim, p, Some(4096)), None);
        assert_eq!(cannot_discard(RwMode::Trim, p, None), None);
    }
}
