//! Plan: a validated configuration plus opened targets → the list of workers
//! to start. Checks everything that needs the targets (request size against
//! the O_DIRECT alignment, the region against the size) before any I/O.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;

use crate::base::error::usage;
use crate::base::units::{fmt_bytes, fmt_size_arg};
use crate::base::warning::Warning;
use crate::device::{Target, TargetKind};
use crate::measure::config::BlockSizeArg;
use crate::measure::config::RunConfig;
use crate::measure::config::RwMode;
use crate::measure::worker::{OnWrap, StripeSpec, VerifyMode, WorkerSpec, MIX_RECORD_MAX_BLOCKS};
use crate::measure::workload::StripeMap;
use crate::measure::workload::{split_region, splitmix64, Region};

/// A target as the run will use it.
#[derive(Debug)]
pub struct PlannedTarget {
    pub path: PathBuf,
    pub kind: TargetKind,
    pub file: Arc<File>,
    pub size: u64,
    pub logical_block_size: u64,
    pub device: Option<(u64, u64)>,
    pub device_name: Option<String>,
    /// The host adapter its device is behind, when it is a disk.
    pub adapter: Option<String>,
    /// Who its disk is, whatever its name today.
    pub identity: Option<crate::device::identity::DiskIdentity>,
    pub read_ahead_kb: Option<u64>,
    pub bs: u64,
    pub region: Region,
}

/// Every target and every worker of one run.
#[derive(Debug)]
pub struct Plan {
    pub targets: Vec<PlannedTarget>,
    pub workers: Vec<WorkerSpec>,
    /// How the requests meet the targets' stripes, when that is worth saying.
    pub warnings: Vec<Warning>,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Builds the plan; every refusal is a usage error (exit 2).
pub fn build(cfg: &RunConfig, targets: Vec<Target>) -> Result<Plan> {
    let mut planned = Vec::with_capacity(targets.len());
    let mut warnings = Vec::new();
    let mut workers = Vec::new();
    if let Some(chunk) = cfg.stripe {
        check_stripe(cfg, &targets, chunk)?;
    }
    let members = targets.len() as u64;
    if cfg.access.spr.is_some() && (members != 1 || cfg.jobs != 1) {
        // fio's: "SPRandom supports only one file", and one job's LFSR.
        return usage(format!(
            "--sprandom preconditions one target with one job, and this run has {members} target(s) and --jobs {}: give one target and --jobs 1",
            cfg.jobs
        ));
    }
    for (ti, t) in targets.into_iter().enumerate() {
        let p = crate::base::error::show_path(&t.path);
        let (bs, region, lbs) = size_and_region(cfg, &t, &mut warnings)?;
        if let Some(log) = &cfg.replay {
            check_replay(cfg, log, &p, t.size, lbs)?;
        }
        // A modelled RAID0 member serves pieces of at most one chunk.
        let logical_bs = bs;
        let bs = cfg.stripe.map_or(bs, |chunk| bs.min(chunk));
        let unit = stripe_unit(cfg, &t, bs, &mut warnings)?;
        if let Some(z) = &cfg.access.zones {
            check_zones(cfg, z, bs, lbs, &p)?;
        }
        if let Some(span) = cfg.access.dist.abs_span().filter(|&s| s > region.length) {
            return usage(format!(
                "--dist {}: its zones cover {} and {p}'s region is {}: give smaller zones or a larger --size",
                cfg.access.dist,
                fmt_bytes(span),
                fmt_bytes(region.length)
            ));
        }
        // fio's numjobs clones each cover the whole region (--jobs-share),
        // or, with offset_increment, a region each, k increments on.
        let slices = if let Some(inc) = cfg.offset_increment {
            Some(incremented(cfg, &t, region, inc, unit)?)
        } else if cfg.jobs_share {
            (region.length >= unit).then(|| vec![region; cfg.jobs])
        } else {
            split_region(region, cfg.jobs, unit)
        };
        let Some(slices) = slices else {
            return usage(format!(
                "{p}'s region ({}) cannot give each of --jobs {} its own block of --bs {}: use fewer jobs or a smaller --bs",
                fmt_bytes(region.length),
                cfg.jobs,
                fmt_size_arg(bs)
            ));
        };
        // The schedule of each of this target's workers, from its own bs.
        let rate_period_ns = match cfg.rate.map(|r| r.period_ns(bs)) {
            Some(Err(e)) => return usage(format!("{p}: {e}")),
            Some(Ok(ns)) => Some(ns),
            None => None,
        };
        for (job, slice) in slices.into_iter().enumerate() {
            // A verified random mix keeps a bit for each block of its
            // slice: bounded, refused here before any I/O.
            let blocks = slice.length / bs.max(1);
            if cfg.verify && cfg.rw == RwMode::Randrw && blocks > MIX_RECORD_MAX_BLOCKS {
                return usage(format!(
                    "--verify with --rw randrw keeps a record of each block a worker's pass writes, one bit a block, and {p}'s slice has {blocks} blocks of {}, more than the {MIX_RECORD_MAX_BLOCKS} it keeps: give a smaller --size, a larger --bs or more --jobs",
                    fmt_size_arg(bs)
                ));
            }
            let id = workers.len();
            let mut spec = worker_spec(cfg, id, ti, job, slice, bs, lbs, members, logical_bs);
            if let Some(n) = io_size_loops(cfg, slice, bs, t.size) {
                spec.io_limit = Some(spec.io_limit.map_or(n, |l| l.min(n)));
            }
            spec.rate_period_ns = rate_period_ns;
            if let Some(ask) = cfg.access.spr {
                // fio's io_size: the physical capacity, written once.
                let m = crate::analysis::sprandom::model(slice.length, bs, ask.op, ask.regions)
                    .or_else(|e| usage(format!("{p}: {e}")))?;
                spec.io_limit = Some(m.physical);
                spec.sprandom = Some(m);
            }
            workers.push(spec);
        }
        planned.push(PlannedTarget {
            path: t.path,
            kind: t.kind,
            file: Arc::new(t.file),
            size: t.size,
            logical_block_size: lbs,
            device: t.device,
            device_name: t.device_name,
            adapter: t.adapter,
            identity: t.identity,
            read_ahead_kb: t.read_ahead_kb,
            bs,
            region,
        });
    }
    working_sets(cfg, &mut workers);
    Ok(Plan {
        targets: planned,
        workers,
        warnings,
    })
}

/// `--dedupe-working-set PCT`: each worker's members are PCT% of its
/// region, in 4 KiB units (at least one); numbered over all the workers
/// with `--dedupe-global`, whose set is one (named by the run's seed).
fn working_sets(cfg: &RunConfig, workers: &mut [WorkerSpec]) {
    use crate::engine::writedata::{WorkingSet, UNIT};
    let Some(set) = cfg.dedupe_set.filter(|_| cfg.dedupe > 0) else {
        return;
    };
    let members = |w: &WorkerSpec| {
        (w.region.length / UNIT as u64)
            .saturating_mul(u64::from(set.pct))
            .div_ceil(100)
            .max(1)
    };
    let total: u64 = workers.iter().map(members).sum();
    let mut first = 0u64;
    for w in workers.iter_mut() {
        let n = members(w);
        w.dedupe_set = Some(if set.global {
            WorkingSet {
                first,
                members: n,
                total,
                global: true,
                seed: crate::base::io::splitmix64(cfg.seed ^ 0x474C_4F42_414C_5345),
            }
        } else {
            WorkingSet {
                first: 0,
                members: n,
                total: n,
                global: false,
                seed: crate::base::io::splitmix64(w.seed ^ 0x574F_524B_5345_5453),
            }
        });
        first += n;
    }
}

/// `--zones` on one target: each zone's range holds a request (a range
/// smaller than --bs would read its zone's first request for ever), and
/// under O_DIRECT every zone starts, and wraps, on a logical block.
fn check_zones(
    cfg: &RunConfig,
    z: &crate::measure::workload::Strided,
    bs: u64,
    lbs: u64,
    p: &str,
) -> Result<()> {
    if z.range < bs {
        return usage(format!(
            "--zones: a zone's range ({}) is smaller than --bs {}, so no request fits in it: give a RANGE of a request or more",
            fmt_size_arg(z.range),
            fmt_size_arg(bs)
        ));
    }
    let odd = [("SKIP", z.skip), ("RANGE", z.range), ("SIZE", z.size)]
        .into_iter()
        .find(|(_, v)| v % lbs != 0);
    if let (true, Some((what, v))) = (cfg.direct, odd) {
        return usage(format!(
            "--zones: its {what} ({v} bytes) is not a multiple of the logical block size of {p} ({lbs} bytes), which O_DIRECT needs every zone to start on: give multiples of {lbs}"
        ));
    }
    Ok(())
}

/// The largest request one I/O can move (its length is a 32-bit count).
const MAX_BS: u64 = u32::MAX as u64;

/// The block size to suggest for `bs` on a target of logical block `lbs`
/// under O_DIRECT: `bs` rounded up to a multiple of `lbs`, or down when
/// that would pass [`MAX_BS`]; never 0 (`lbs` itself at least), which
/// `--bs` refuses.
fn aligned_bs(bs: u64, lbs: u64) -> u64 {
    let lbs = lbs.max(1);
    match bs.div_ceil(lbs).checked_mul(lbs) {
        Some(up) if up <= MAX_BS => up,
        _ => (MAX_BS / lbs * lbs).max(lbs),
    }
}

/// One target's block size and region, checked against the target:
/// alignment for O_DIRECT, the offset and size within it, the block within
/// the region. Returns (bs, region, lbs).
fn size_and_region(
    cfg: &RunConfig,
    t: &Target,
    warnings: &mut Vec<Warning>,
) -> Result<(u64, Region, u64)> {
    let p = crate::base::error::show_path(&t.path);
    let lbs = t.logical_block_size;
    let bs = match cfg.bs {
        BlockSizeArg::Bytes(n) => n,
        BlockSizeArg::Logical => lbs,
    };
    // Said before the alignment: rounding a size past the limit up
    // overflowed (a panic, or "use --bs 0" in a release build).
    if bs > MAX_BS {
        return usage(format!(
            "--bs {} is too large: one request can move at most 4 GiB - 1",
            fmt_size_arg(bs)
        ));
    }
    if cfg.direct && bs % lbs != 0 {
        return usage(format!(
            "--bs {bs} is not a multiple of the logical block size of {p} ({lbs} bytes), which O_DIRECT requires: use --bs {} or --bs lbs",
            fmt_size_arg(aligned_bs(bs, lbs))
        ));
    }
    // --bssplit: every size, and the alignment of the offsets, as --bs.
    if let Some(s) = cfg.access.sizes.as_ref().filter(|_| cfg.direct) {
        let odd = (s.all().map(|x| ("--bssplit size", x.bs)))
            .chain([("--blockalign", s.align)])
            .find(|(_, n)| n % lbs != 0);
        if let Some((what, n)) = odd {
            return usage(format!(
                "{what} {n} is not a multiple of the logical block size of {p} ({lbs} bytes), which O_DIRECT requires: use multiples of {}",
                fmt_size_arg(lbs)
            ));
        }
    }
    if cfg.verify && bs < crate::analysis::verify::HEADER as u64 {
        return usage(format!(
            "--verify needs blocks of at least {} bytes: use a larger --bs",
            crate::analysis::verify::HEADER
        ));
    }
    if cfg.direct && cfg.offset % lbs != 0 {
        return usage(format!(
            "--offset {} is not a multiple of the logical block size of {p} ({lbs} bytes), which O_DIRECT requires",
            cfg.offset
        ));
    }
    if cfg.fill && t.kind == TargetKind::File {
        let region = fill_region(cfg, t, bs, warnings)?;
        return Ok((bs, region, lbs));
    }
    if cfg.offset >= t.size {
        return usage(format!(
            "--offset {} is beyond the end of {p} ({} bytes): choose a smaller offset",
            cfg.offset, t.size
        ));
    }
    let length = match cfg.size {
        Some(s) if cfg.offset.checked_add(s).is_none_or(|end| end > t.size) => {
            return usage(format!(
                "--offset {} plus --size {s} runs past the end of {p} ({} bytes): choose a smaller --size",
                cfg.offset, t.size
            ))
        }
        Some(s) => s,
        None => t.size - cfg.offset,
    };
    let region = Region {
        offset: cfg.offset,
        length,
    };
    if bs > length {
        return usage(format!(
            "--bs {} is larger than the region of {p} ({}): use a smaller --bs or a larger --size",
            fmt_size_arg(bs),
            fmt_bytes(length)
        ));
    }
    if let Some(limit) = cfg.io_limit.filter(|l| l % bs != 0) {
        warnings.push(Warning::IoLimitRoundsUp { path: p, limit, bs });
    }
    Ok((bs, region, lbs))
}

/// `--fill-device` on a regular file: from --offset, until the file system
/// says no space is left (the worker ends there, `WorkerSpec::fill`). The
/// region reaches past all the space the file could take: what is free
/// now (statvfs, the blocks root may use) and the file's own bytes past
/// --offset, a block over; the fill ends at ENOSPC before its end.
fn fill_region(
    cfg: &RunConfig,
    t: &Target,
    bs: u64,
    warnings: &mut Vec<Warning>,
) -> Result<Region> {
    let p = crate::base::error::show_path(&t.path);
    let vfs = match nix::sys::statvfs::statvfs(&t.path) {
        Ok(v) => v,
        Err(e) => {
            return usage(format!(
                "--fill-device: cannot tell how much space {p}'s file system has ({e})"
            ))
        }
    };
    // Filling the file system that holds / fails every other program's
    // writes (logs, package managers, the shell's history) until the file
    // is removed: only when the user says so.
    let on_root = |path: &std::path::Path| {
        let dev = |q: &std::path::Path| nix::sys::stat::stat(q).ok().map(|s| s.st_dev);
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        let here = dev(path).or_else(|| dev(dir.unwrap_or(std::path::Path::new("."))));
        here.is_some() && here == dev(std::path::Path::new("/"))
    };
    if !cfg.allow_destructive && on_root(&t.path) {
        return usage(format!(
            "--fill-device on {p} would fill the file system that holds /, and every other program's writes would fail until the file is removed: put the file on another file system, or give --allow-destructive to fill it"
        ));
    }
    let free = (vfs.blocks_free() as u64).saturating_mul(vfs.fragment_size() as u64);
    let own = t.size.saturating_sub(cfg.offset);
    let length = (free.saturating_add(own) / bs)
        .saturating_add(1)
        .saturating_mul(bs);
    warnings.push(Warning::FillsFileSystem { path: p, free, own });
    Ok(Region {
        offset: cfg.offset,
        length,
    })
}

/// The unit a target's region is split on: the block size, or, with
/// `--align stripe`, the smallest unit holding whole requests and whole
/// stripes. Warns when requests straddle chunks or miss members.
fn stripe_unit(cfg: &RunConfig, t: &Target, bs: u64, warnings: &mut Vec<Warning>) -> Result<u64> {
    let p = crate::base::error::show_path(&t.path);
    let mut unit = bs;
    match (t.stripe, cfg.align_stripe) {
        (Some(g), align) => {
            if bs % g.chunk != 0 {
                warnings.push(Warning::StraddlesChunks {
                    path: p.clone(),
                    bs,
                    chunk: g.chunk,
                });
            } else if !cfg.rw.is_random() && bs < g.width() {
                warnings.push(Warning::PartialStripe {
                    path: p.clone(),
                    bs,
                    members: g.members,
                    chunk: g.chunk,
                });
            }
            if align {
                if cfg.offset % g.width() != 0 {
                    return usage(format!(
                        "--align stripe: --offset {} is not on a full stripe of {p} ({} bytes)",
                        cfg.offset,
                        g.width()
                    ));
                }
                // The smallest unit holding whole requests and whole stripes.
                unit = bs / gcd(bs, g.width()) * g.width();
            }
        }
        (None, true) => {
            return usage(format!(
                "--align stripe needs a striped target with a known chunk, and {p} is not one (see: stripebench topology {p})"
            ))
        }
        (None, false) => {}
    }
    Ok(unit)
}

/// fio's offset_increment: job k's region starts at --offset + k*inc and
/// is --size long (to the target's end without --size); each must fit.
fn incremented(
    cfg: &RunConfig,
    t: &Target,
    region: Region,
    inc: u64,
    unit: u64,
) -> Result<Vec<Region>> {
    let p = crate::base::error::show_path(&t.path);
    (0..cfg.jobs as u64)
        .map(|k| {
            let start = k
                .checked_mul(inc)
                .and_then(|d| region.offset.checked_add(d))
                .filter(|&s| s < t.size);
            let length = match (start, cfg.size) {
                (Some(s), Some(size)) => Some(size).filter(|_| s.saturating_add(size) <= t.size),
                (Some(s), None) => Some(t.size - s),
                _ => None,
            };
            match (start, length) {
                (Some(offset), Some(length)) if length >= unit => Ok(Region { offset, length }),
                _ => usage(format!(
                    "--offset-increment {inc}: job {k}'s region ({} on) runs past the end of {p} ({} bytes): give fewer --jobs, a smaller increment or a smaller --size",
                    region.offset.saturating_add(k.saturating_mul(inc)),
                    t.size
                )),
            }
        })
        .collect()
}

/// `--iolog-read`: every I/O of the log inside the target `p` of `size`
/// bytes, and on O_DIRECT aligned to its logical block `lbs`.
fn check_replay(
    cfg: &RunConfig,
    log: &crate::measure::iolog::Replay,
    p: &str,
    size: u64,
    lbs: u64,
) -> Result<()> {
    if log.end() > size {
        return usage(format!(
            "--iolog-read: the log's I/O reaches byte {} and {p} holds {size}: replay it on the target it was written on, or one as large",
            log.end()
        ));
    }
    if cfg.direct {
        if let Some((_, o)) = log.ios.iter().find(|(_, o)| o % lbs != 0) {
            return usage(format!(
                "--iolog-read: the log's I/O at offset {o} is not on {p}'s {lbs}-byte logical blocks, which O_DIRECT needs: replay it with --buffered"
            ));
        }
        if log.bs % lbs != 0 {
            return usage(format!(
                "--iolog-read: the log's I/O of {} bytes is not whole {lbs}-byte logical blocks of {p}, which O_DIRECT needs: replay it with --buffered",
                log.bs
            ));
        }
    }
    Ok(())
}

/// `--io-limit` with `--passes`: fio's io_size= with loops=, the bytes the
/// worker over `slice` of a target of `size` bytes does by fio's rule
/// (`measure::loops`); `None` without both.
fn io_size_loops(cfg: &RunConfig, slice: Region, bs: u64, size: u64) -> Option<u64> {
    let (io_size, loops) = (cfg.io_limit?, cfg.passes?);
    let random = cfg.rw.is_random();
    let bytes = cfg.access.pass_bytes(slice.length, bs, random);
    let skip = cfg.access.skip;
    let holed = !random && skip > 0 && cfg.access.zones.is_none() && bytes > 0;
    // With holes, fio's next position after the pass's last request,
    // counted from the region's start.
    let next = holed.then(|| (bytes / bs).saturating_mul(bs + skip as u64));
    let writes = cfg.rw.writes();
    let pass = crate::measure::loops::Pass {
        bytes,
        bs,
        wraps: !random && crate::measure::loops::wraps(writes, io_size, slice.length, next, size),
        verified: cfg.verify && writes,
    };
    Some(crate::measure::loops::bytes(io_size, loops, pass))
}

/// Worker `id`'s spec: job `job` on target `ti`, over `slice`.
#[allow(clippy::too_many_arguments)]
fn worker_spec(
    cfg: &RunConfig,
    id: usize,
    ti: usize,
    job: usize,
    slice: Region,
    bs: u64,
    lbs: u64,
    members: u64,
    logical_bs: u64,
) -> WorkerSpec {
    let ramp_ns = cfg.ramp.as_nanos() as u64;
    WorkerSpec {
        id,
        target_index: ti,
        job,
        region: slice,
        bs,
        random: cfg.rw.is_random(),
        read_pct: cfg.read_pct,
        access: cfg.access.clone(),
        seed: splitmix64(cfg.seed ^ splitmix64(id as u64 + 1)),
        cpu: cfg.cpus.as_ref().map(|c| c[id % c.len()]),
        cmdprio: cfg.cmdprio,
        cmdprio_split: cfg.cmdprio_split.clone(),
        default_prio: cfg.thread.ioprio.map_or(0, |p| p.value()),
        align: lbs.max(4096) as usize,
        // A pass is every whole request of the slice once (as --skip or
        // --seq-run lay them); --ios is a count of requests. Of the bounds
        // given, the first reached ends the worker, as fio's number_ios
        // does beside size= and io_size=.
        // (--io-limit with --passes is fio's io_size= with loops=, which
        // build() sets from the target's size: io_size_loops().)
        io_limit: [
            cfg.passes.filter(|_| cfg.io_limit.is_none()).map(|n| {
                match &cfg.replay {
                    // A replay's pass is the whole log.
                    Some(log) => (log.ios.len() as u64).saturating_mul(bs),
                    None => cfg.access.pass_bytes(slice.length, bs, cfg.rw.is_random()),
                }
                .saturating_mul(n)
            }),
            cfg.io_limit.filter(|_| cfg.passes.is_none()),
            cfg.ios.map(|n| n.saturating_mul(bs)),
        ]
        .into_iter()
        .flatten()
        .min(),
        max_errors: cfg.max_errors,
        ignore_errors: cfg.ignore_errors.clone(),
        fill: cfg.fill,
        verify: match (cfg.verify, cfg.rw) {
            (false, _) => VerifyMode::Off,
            (true, RwMode::Write | RwMode::Randwrite | RwMode::Rw) => VerifyMode::Write {
                start_ms: cfg.start_ms,
            },
            (true, RwMode::Randrw) => VerifyMode::Mix {
                start_ms: cfg.start_ms,
            },
            (true, _) => VerifyMode::Read,
        },
        dedupe_pct: cfg.dedupe,
        pattern: cfg.pattern.clone(),
        dedupe_set: None,
        stripe: cfg.stripe.map(|chunk| StripeSpec {
            map: StripeMap { chunk, members },
            member: ti as u64,
            logical_bs,
        }),
        ramp_ns,
        log_ns: cfg.log_interval.as_nanos() as u64,
        rate_period_ns: None,
        think: cfg.think,
        latency: cfg.latency_search,
        on_wrap: on_wrap(cfg),
        trim: cfg.rw.trims(),
        replay: cfg.replay.clone(),
        sprandom: None,
        io_lines_cap: match cfg.io_lines {
            true => crate::measure::worker::io_lines_per_worker(cfg.jobs * cfg.targets.len()),
            false => 0,
        },
        iolog_cap: match cfg.iolog_write {
            Some(_) => crate::measure::iolog::per_worker(cfg.jobs * cfg.targets.len()),
            None => 0,
        },
    }
}

/// What a worker does to its region's pages at a wrap-around: a buffered
/// sequential read would re-read its region from the page cache after the
/// first pass (--cached wants exactly that), and a buffered sequential
/// write's next pass would overwrite pages the page cache still holds.
/// A sequential mix does both: its writes reach the device, and its reads
/// of the next pass find no page the last one left.
fn on_wrap(cfg: &RunConfig) -> OnWrap {
    match (cfg.direct || cfg.rw.is_random(), cfg.read_pct) {
        (false, 100) if !cfg.cached => OnWrap::Evict,
        (false, 0) => OnWrap::Flush,
        (false, _) if !cfg.cached => OnWrap::Flush,
        _ => OnWrap::Keep,
    }
}

/// A modelled RAID0 needs equal members, a chunk the members can address,
/// and requests that split into whole chunks (or fit in one).
fn check_stripe(cfg: &RunConfig, targets: &[Target], chunk: u64) -> Result<()> {
    let region_of = |t: &Target| cfg.size.unwrap_or(t.size.saturating_sub(cfg.offset));
    if let Some(first) = targets.first() {
        for t in &targets[1..] {
            if region_of(t) != region_of(first) {
                return usage(format!(
                    "--stripe needs members of one size: {} has {} bytes to use, {} has {}; give --size to use the same amount of each",
                    crate::base::error::show_path(&first.path),
                    region_of(first),
                    crate::base::error::show_path(&t.path),
                    region_of(t)
                ));
            }
        }
    }
    for t in targets {
        if chunk % t.logical_block_size != 0 {
            return usage(format!(
                "--stripe {chunk} is not a multiple of the logical block size of {} ({} bytes): use a chunk such as 64k",
                crate::base::error::show_path(&t.path),
                t.logical_block_size
            ));
        }
        if region_of(t) % chunk != 0 && region_of(t) < chunk {
            return usage(format!(
                "--stripe {} is larger than {}'s region",
                fmt_size_arg(chunk),
                crate::base::error::show_path(&t.path)
            ));
        }
    }
    let bs = match cfg.bs {
        BlockSizeArg::Bytes(n) => n,
        BlockSizeArg::Logical => targets.first().map_or(512, |t| t.logical_block_size),
    };
    if bs % chunk != 0 && chunk % bs != 0 {
        return usage(format!(
            "--bs {} and --stripe {} must divide one another (a request is split into whole chunks, or fits in one)",
            fmt_size_arg(bs),
            fmt_size_arg(chunk)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suggested_block_size_is_aligned_within_the_limit_and_never_zero() {
        assert_eq!(aligned_bs(4097, 512), 4608);
        assert_eq!(aligned_bs(u64::from(u32::MAX), 512), MAX_BS / 512 * 512);
        assert_eq!(aligned_bs(u64::MAX, 4096), MAX_BS / 4096 * 4096);
        assert_eq!(aligned_bs(100, 1 << 33), 1 << 33);
    }
    use crate::base::error::UsageError;
    use crate::cli::{Cli, Command};
    use crate::device::{open, Access, StripeGeometry};
    use clap::Parser;

    fn setup(argv: &[&str], size: usize) -> (tempfile::TempDir, Result<Plan>) {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t");
        std::fs::write(&f, vec![7u8; size]).unwrap();
        let mut full = vec!["stripebench", "run"];
        full.extend_from_slice(argv);
        full.push(f.to_str().unwrap());
        let Command::Run(args) = Cli::try_parse_from(full).unwrap().command else {
            panic!("not a run command")
        };
        let cfg = crate::cli::validate::run_config(&args, &[0, 1], None).unwrap();
        let t = open(&f, Access::default()).unwrap();
        let plan = build(&cfg, vec![t]);
        (dir, plan)
    }

    fn err(r: Result<Plan>) -> String {
        r.unwrap_err().downcast::<UsageError>().unwrap().0
    }

    #[test]
    fn jobs_get_disjoint_slices_and_round_robin_cpus() {
        let (_d, plan) = setup(&["--jobs", "3", "--bs", "64k"], 1 << 20);
        let plan = plan.unwrap();
        assert_eq!(plan.workers.len(), 3);
        let cpus: Vec<_> = plan.workers.iter().map(|w| w.cpu).collect();
        assert_eq!(cpus, vec![Some(0), Some(1), Some(0)]);
        for w in plan.workers.windows(2) {
            assert!(w[0].region.end() <= w[1].region.offset);
        }
        assert_ne!(plan.workers[0].seed, plan.workers[1].seed);
    }

    #[test]
    fn direct_bs_must_fit_the_block_size() {
        let (_d, plan) = setup(&["--bs", "1000"], 1 << 20);
        let e = err(plan);
        assert!(
            e.contains("not a multiple") && e.contains("--bs lbs"),
            "{e}"
        );
        let (_d, plan) = setup(&["--bs", "lbs"], 1 << 20);
        let p = plan.unwrap();
        assert_eq!(p.workers[0].bs, p.targets[0].logical_block_size);
        // Buffered I/O takes any size.
        let (_d, plan) = setup(&["--bs", "1000", "--buffered"], 1 << 20);
        assert_eq!(plan.unwrap().workers[0].bs, 1000);
    }

    #[test]
    fn align_stripe_uses_full_stripes_and_warns_about_partial_ones() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t");
        std::fs::write(&f, vec![7u8; 8 << 20]).unwrap();
        let plan_with = |argv: &[&str], geometry: Option<StripeGeometry>| {
            let mut full = vec!["stripebench", "run"];
            full.extend_from_slice(argv);
            full.push(f.to_str().unwrap());
            let Command::Run(args) = Cli::try_parse_from(full).unwrap().command else {
                panic!("not a run command")
            };
            let cfg = crate::cli::validate::run_config(&args, &[0, 1], None).unwrap();
            let mut t = open(&f, Access::default()).unwrap();
            t.stripe = geometry;
            build(&cfg, vec![t])
        };
        let g = Some(StripeGeometry {
            chunk: 64 << 10,
            members: 3,
        });
        // 192 KiB stripes, 128 KiB requests: slices are multiples of 384 KiB.
        let p = plan_with(&["--align", "stripe", "--bs", "128k", "--jobs", "2"], g).unwrap();
        for w in &p.workers {
            assert_eq!(w.region.offset % (192 << 10), 0);
            assert_eq!(w.region.length % (384 << 10), 0);
        }
        assert!(
            p.warnings
                .iter()
                .any(|w| matches!(w, Warning::PartialStripe { members: 3, .. })),
            "{:?}",
            p.warnings
        );
        let p = plan_with(&["--bs", "96k"], g).unwrap();
        assert!(
            p.warnings
                .iter()
                .any(|w| matches!(w, Warning::StraddlesChunks { bs, .. } if *bs == 96 << 10)),
            "{:?}",
            p.warnings
        );
        let p = plan_with(&["--bs", "192k"], g).unwrap();
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert!(err(plan_with(&["--align", "stripe"], None)).contains("needs a striped target"));
    }

    #[test]
    fn regions_must_fit() {
        let (_d, p) = setup(&["--bs", "2m"], 1 << 20);
        assert!(err(p).contains("larger than the region"));
        let (_d, p) = setup(&["--offset", "2m"], 1 << 20);
        assert!(err(p).contains("beyond the end"));
        let (_d, p) = setup(&["--offset", "512k", "--size", "1m"], 1 << 20);
        assert!(err(p).contains("runs past the end"));
        let (_d, p) = setup(&["--jobs", "3", "--bs", "512k"], 1 << 20);
        assert!(err(p).contains("--jobs 3"));
        let (_d, p) = setup(
            &["--offset", "256k", "--size", "512k", "--bs", "4k"],
            1 << 20,
        );
        let p = p.unwrap();
        assert_eq!(
            p.targets[0].region,
            Region {
                offset: 256 << 10,
                length: 512 << 10
            }
        );
    }
}
