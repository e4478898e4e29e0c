//! Results: the run document (the JSON contract in `docs/json.md`) and how
//! worker outcomes are merged into per-target and total figures, once, after
//! the run. Every report is a pure function of a [`RunDocument`].

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

use crate::analysis::histogram::{LatencyHistogram, LatencySummary};
use crate::analysis::verify::{find_lost, find_stale, BadBlock, BadKind};
use crate::base::io::Region;
use crate::device::devstat::DeviceCounters;
use crate::device::TargetKind;
use crate::measure::config::ConfigDoc;
use crate::measure::worker::{
    Ending, ErrnoCount, Interval, IoErrorRecord, VerifyMode, VerifyTally, WorkerOutcome,
};

/// Version of the JSON document; raised on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

impl ToolInfo {
    /// This build of stripebench.
    pub fn this() -> ToolInfo {
        ToolInfo {
            name: "stripebench".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    /// Online CPUs this process could use.
    pub cpus: usize,
    pub cpu_model: Option<String>,
    pub peak_rss_bytes: u64,
}

/// The common measured window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WindowDoc {
    pub ramp_sec: f64,
    /// Length of the window every rate is computed over.
    pub seconds: f64,
    /// Wall-clock instants the window opened and closed (Unix seconds).
    pub start_unix_sec: f64,
    pub end_unix_sec: f64,
    /// How latency is timed and which window an I/O counts in.
    pub rule: String,
    /// What closed the window: "duration" (the deadline), "limit" (every
    /// worker reached --io-limit), "passes" (every worker finished its
    /// passes), "errors" (every worker stopped on errors) or "interrupted".
    #[serde(default)]
    pub ended_by: String,
}

/// The fsync that ends a buffered write run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FlushDoc {
    pub seconds: f64,
    /// `durable_bytes` over (window + flush): what reached stable storage per second.
    pub durable_bytes_per_sec: f64,
    /// Bytes counted as durable: with `durable_basis` "device", what the
    /// device wrote from the window's opening through the flush (a device
    /// shared by several targets is split in proportion to their bytes),
    /// at most the window's application writes; with "application" (no
    /// device counters: tmpfs, btrfs), the window's application bytes.
    #[serde(default)]
    pub durable_bytes: u64,
    #[serde(default)]
    pub durable_basis: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkerDoc {
    pub id: usize,
    pub target: String,
    pub target_index: usize,
    pub job: usize,
    /// CPU the worker ran on (observed at its end).
    pub cpu: Option<usize>,
    /// CPU it was pinned to, or null when not pinned.
    pub pinned_cpu: Option<usize>,
    pub region: Region,
    pub bs: u64,
    pub bytes: u64,
    pub ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub errors: u64,
    pub errors_by_errno: Vec<ErrnoCount>,
    /// The first few errors with their offsets.
    pub error_samples: Vec<IoErrorRecord>,
    /// The worker stopped because it reached --max-errors (the others went on).
    pub stopped_on_errors: bool,
    /// What stopped this worker: "duration", "limit" or "errors".
    #[serde(default)]
    pub ended_by: Ending,
    /// I/Os that never completed: the worker gave up on them after
    /// --hang-timeout with nothing completing.
    #[serde(default)]
    pub hung_ios: Vec<crate::measure::worker::HungIo>,
    pub short_ios: u64,
    pub seconds: f64,
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub latency_ns: Option<LatencySummary>,
    pub cpu_usr_sec: f64,
    pub cpu_sys_sec: f64,
    pub intervals: Vec<Interval>,
    /// How the engine issued I/O ("pread/pwrite", "io_uring, registered buffers and file", ...).
    pub engine_path: String,
    pub histogram: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TargetDoc {
    pub index: usize,
    pub path: String,
    pub kind: TargetKind,
    pub logical_block_size: u64,
    pub size: u64,
    /// Read-ahead of the target's device during the run (KiB), when it has one.
    pub read_ahead_kb: Option<u64>,
    pub bs: u64,
    pub region: Region,
    pub workers: usize,
    pub bytes: u64,
    pub ios: u64,
    pub errors: u64,
    /// A worker on this target stopped on I/O errors, or had I/O that hung.
    pub failed: bool,
    pub short_ios: u64,
    pub seconds: f64,
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub latency_ns: Option<LatencySummary>,
    pub cpu_usr_sec: f64,
    pub cpu_sys_sec: f64,
    pub flush: Option<FlushDoc>,
    /// The block device's own counters, when the target has one.
    pub device: Option<DeviceCounters>,
    /// What verification found (verifying reads only).
    pub verify: Option<VerifyDoc>,
    pub histogram: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TotalDoc {
    pub bytes: u64,
    pub ios: u64,
    pub errors: u64,
    pub short_ios: u64,
    pub seconds: f64,
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub latency_ns: Option<LatencySummary>,
    pub cpu_usr_sec: f64,
    pub cpu_sys_sec: f64,
    pub flush: Option<FlushDoc>,
    /// Final fsyncs that failed (their errors are in `warnings`).
    #[serde(default)]
    pub flush_errors: u64,
    /// An interrupt came during the final fsync and the run stopped waiting
    /// for it: what was written may not all be on the device yet, and no
    /// durable figure is given.
    #[serde(default)]
    pub flush_incomplete: bool,
    pub histogram: String,
}

impl TotalDoc {
    /// CPU seconds (user + system) per 10^9 bytes moved in the window.
    pub fn cpu_sec_per_gb(&self) -> Option<f64> {
        (self.bytes > 0).then(|| (self.cpu_usr_sec + self.cpu_sys_sec) / (self.bytes as f64 / 1e9))
    }
}

/// What verification found on one target.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VerifyDoc {
    /// Blocks read whole and checked.
    pub blocks: u64,
    pub good: u64,
    pub corrupt: u64,
    pub misplaced: u64,
    pub stale: u64,
    /// Blocks with no stripebench header (never written with --verify),
    /// the lost ones apart.
    pub unwritten: u64,
    /// Blocks with no header between two blocks one writer wrote in the
    /// same run: lost writes.
    #[serde(default)]
    pub lost: u64,
    /// The bad blocks, by offset (the first 100).
    pub bad_blocks: Vec<BadBlock>,
    /// "complete", or why the stale check covered only part of the target.
    pub stale_check: String,
}

impl VerifyDoc {
    pub fn bad(&self) -> u64 {
        self.corrupt + self.misplaced + self.stale + self.lost
    }

    fn from_tallies<'a>(tallies: impl Iterator<Item = &'a VerifyTally>) -> VerifyDoc {
        let mut d = VerifyDoc {
            blocks: 0,
            good: 0,
            corrupt: 0,
            misplaced: 0,
            stale: 0,
            unwritten: 0,
            lost: 0,
            bad_blocks: Vec::new(),
            stale_check: "complete".into(),
        };
        let mut goods = Vec::new();
        let mut unwritten = Vec::new();
        for t in tallies {
            unwritten.extend_from_slice(&t.unwritten_runs);
            if t.unwritten_truncated {
                d.stale_check = format!(
                    "partial: only the first {} runs of unwritten blocks of each worker were checked for lost writes",
                    crate::measure::worker::VERIFY_TRACK_MAX
                );
            }
            d.blocks += t.checked;
            d.good += t.good;
            d.corrupt += t.corrupt + t.other_size;
            d.misplaced += t.misplaced;
            d.unwritten += t.unwritten;
            d.bad_blocks.extend(t.bad.iter().cloned());
            goods.extend_from_slice(&t.goods);
            if t.goods_truncated {
                d.stale_check = format!(
                    "partial: only the first {} good blocks of each worker were compared",
                    crate::measure::worker::VERIFY_TRACK_MAX
                );
            }
        }
        for (run, writer, before, after) in find_lost(&goods, &unwritten) {
            d.lost += run.blocks;
            d.unwritten -= run.blocks;
            let bs = (run.end - run.start) / run.blocks.max(1);
            for k in 0..run.blocks.min(100) {
                d.bad_blocks.push(BadBlock {
                    offset: run.start + k * bs,
                    kind: BadKind::Lost,
                    detail: format!(
                        "no header, between blocks writer {writer} wrote in one run (offsets {before} and {after}; {} such block(s) from {}): a lost write",
                        run.blocks, run.start
                    ),
                });
            }
        }
        for (offset, g, newer) in find_stale(goods) {
            d.stale += 1;
            d.good -= 1;
            d.bad_blocks.push(BadBlock {
                offset,
                kind: BadKind::Stale,
                detail: format!(
                    "generation {} (run {} ms, pass {}) is older than a block its writer wrote later ({} ms, pass {}): a lost write",
                    g, g >> 16, g & 0xFFFF, newer >> 16, newer & 0xFFFF
                ),
            });
        }
        d.bad_blocks.sort_by_key(|b| b.offset);
        d.bad_blocks.truncate(100);
        d
    }
}

/// One run, as written to JSON.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunDocument {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub host: HostInfo,
    pub config: ConfigDoc,
    pub interrupted: bool,
    pub window: WindowDoc,
    pub workers: Vec<WorkerDoc>,
    pub targets: Vec<TargetDoc>,
    pub total: TotalDoc,
    pub warnings: Vec<String>,
    /// What was done to the page cache before the run.
    #[serde(default)]
    pub cache: Option<crate::device::cache::CacheDoc>,
    /// `--stripe`: what the figures of a modelled RAID0 mean (null otherwise).
    #[serde(default)]
    pub stripe_model: Option<StripeModelDoc>,
}

/// How far the figures of a modelled RAID0 (`--stripe`) can be trusted.
///
/// The members' workers run independently: each issues its own pieces of
/// the logical stream as fast as its member allows, and no logical request
/// waits for its slowest piece, as it must on a real RAID0. So the total's
/// `bytes_per_sec` is an upper bound for the volume (each member at its own
/// best pace), `iops` and `latency_ns` count pieces, not logical requests,
/// and a logical request's latency is at least its slowest piece's.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StripeModelDoc {
    /// Always `"per_member_upper_bound"` (what the figures are); a model
    /// that waited for every piece would say otherwise.
    pub figures: String,
    pub chunk: u64,
    /// The logical request size.
    pub logical_bs: u64,
    /// Pieces (member I/Os) per logical request: ceil(logical_bs / chunk).
    pub pieces_per_request: u64,
    /// What the figures mean, in words (also printed under the table).
    pub note: String,
}

/// What `--stripe` figures are: [`StripeModelDoc::note`].
pub const STRIPE_MODEL_NOTE: &str = "members run independently, so no logical request waits for its slowest piece: \
MB/s is an upper bound for the modelled RAID0 (each member at its own best pace), IOPS and latency count pieces \
(member I/Os), not logical requests, and a logical request larger than a chunk takes at least as long as its slowest piece";

/// Counters summed over any set of workers.
#[derive(Debug, Clone, Default)]
pub struct Aggregate {
    pub bytes: u64,
    pub write_bytes: u64,
    pub ios: u64,
    pub errors: u64,
    pub short_ios: u64,
    pub cpu_usr_sec: f64,
    pub cpu_sys_sec: f64,
    pub hist: LatencyHistogram,
}

impl AddAssign<&WorkerOutcome> for Aggregate {
    fn add_assign(&mut self, w: &WorkerOutcome) {
        self.bytes += w.bytes();
        self.write_bytes += w.write_bytes;
        self.ios += w.ios();
        self.errors += w.errors;
        self.short_ios += w.short_ios;
        self.cpu_usr_sec += w.cpu_usr_sec;
        self.cpu_sys_sec += w.cpu_sys_sec;
        self.hist.merge(&w.hist);
    }
}

/// `count / seconds`, or 0 for an empty window.
pub fn rate(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

impl Aggregate {
    pub fn bytes_per_sec(&self, seconds: f64) -> f64 {
        rate(self.bytes, seconds)
    }

    pub fn iops(&self, seconds: f64) -> f64 {
        rate(self.ios, seconds)
    }

    /// The flush of buffered writes: `durable` is (bytes, basis), see [`FlushDoc`].
    pub fn flush(
        &self,
        window: f64,
        flush_sec: Option<f64>,
        durable: (u64, &str),
    ) -> Option<FlushDoc> {
        flush_sec.map(|f| FlushDoc {
            seconds: f,
            durable_bytes_per_sec: rate(durable.0, window + f),
            durable_bytes: durable.0,
            durable_basis: durable.1.into(),
        })
    }
}

impl RunDocument {
    /// Whether any worker met an I/O error or had I/O that hung, a final
    /// flush failed, or verification found a bad block.
    pub fn has_errors(&self) -> bool {
        self.total.errors > 0
            || self.total.flush_errors > 0
            || self.bad_blocks() > 0
            || self.workers.iter().any(|w| !w.hung_ios.is_empty())
    }

    /// Bad blocks found by verification, over all targets.
    pub fn bad_blocks(&self) -> u64 {
        self.targets
            .iter()
            .filter_map(|t| t.verify.as_ref())
            .map(VerifyDoc::bad)
            .sum()
    }
}

/// How latency is timed and which window an I/O counts in (also in the README).
pub const WINDOW_RULE: &str = "one monotonic timestamp before each I/O is issued and one when it completes; \
an I/O counts in the window in which it completed; every worker shares one window that opens after the ramp \
and closes at one deadline";

impl HostInfo {
    pub fn current() -> HostInfo {
        let uname = nix::sys::utsname::uname().ok();
        HostInfo {
            hostname: nix::unistd::gethostname()
                .ok()
                .and_then(|h| h.into_string().ok())
                .unwrap_or_default(),
            kernel: uname
                .map(|u| u.release().to_string_lossy().into_owned())
                .unwrap_or_default(),
            cpus: crate::base::cpus::available_cpus().len(),
            cpu_model: std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            }),
            peak_rss_bytes: crate::analysis::histogram::peak_rss_bytes(),
        }
    }
}

impl RunDocument {
    /// Shapes what a run measured into the document.
    pub fn assemble(
        cfg: &crate::measure::config::RunConfig,
        plan: &crate::measure::layout::Plan,
        exec: &crate::measure::coordinator::Execution,
        mut warnings: Vec<String>,
    ) -> RunDocument {
        let secs = exec.window_sec;
        let mut total = Aggregate::default();
        let mut per_target: Vec<Aggregate> = vec![Aggregate::default(); plan.targets.len()];
        let mut workers = Vec::with_capacity(plan.workers.len());
        for (spec, out) in plan.workers.iter().zip(&exec.outcomes) {
            per_target[spec.target_index] += out;
            total += out;
            workers.push(WorkerDoc {
                id: spec.id,
                target: plan.targets[spec.target_index].path.display().to_string(),
                target_index: spec.target_index,
                job: spec.job,
                cpu: out.cpu,
                pinned_cpu: spec.cpu,
                region: spec.region,
                bs: spec.bs,
                bytes: out.bytes(),
                ios: out.ios(),
                read_bytes: out.read_bytes,
                write_bytes: out.write_bytes,
                read_ios: out.read_ios,
                write_ios: out.write_ios,
                errors: out.errors,
                errors_by_errno: out.errors_by_errno.clone(),
                error_samples: out.error_samples.clone(),
                stopped_on_errors: out.stopped_on_errors,
                ended_by: out.ended_by,
                hung_ios: out.hung_ios.clone(),
                short_ios: out.short_ios,
                seconds: secs,
                bytes_per_sec: rate(out.bytes(), secs),
                iops: rate(out.ios(), secs),
                latency_ns: out.hist.summary(),
                cpu_usr_sec: out.cpu_usr_sec,
                cpu_sys_sec: out.cpu_sys_sec,
                intervals: out.intervals.clone(),
                engine_path: out.engine_path.clone(),
                histogram: out.hist.to_base64(),
            });
        }
        if !exec.flush_abandoned.is_empty() {
            warnings.push(format!(
                "interrupted during the final fsync: stopped waiting for {} (the fsync goes on in the kernel); the flush is incomplete and no durable figure is given",
                exec.flush_abandoned.join(", ")
            ));
        }
        let mut max_flush: Option<f64> = None;
        // Durable bytes of each target: from its device's counters (split
        // between the targets sharing a device in proportion to their
        // window writes, and never more than they wrote), else its own bytes.
        let mut written_on: std::collections::HashMap<&str, u64> = Default::default();
        for (i, agg) in per_target.iter().enumerate() {
            if let Some(d) = &exec.devices[i] {
                *written_on.entry(d.name.as_str()).or_default() += agg.write_bytes;
            }
        }
        let durable: Vec<(u64, &str)> = per_target
            .iter()
            .enumerate()
            .map(|(i, agg)| {
                match exec.devices[i].as_ref().and_then(|d| {
                    let dev = d.window_write_bytes?;
                    let all = written_on.get(d.name.as_str()).copied().unwrap_or(0);
                    Some(if all == 0 {
                        0
                    } else {
                        (dev as f64 * agg.write_bytes as f64 / all as f64) as u64
                    })
                }) {
                    Some(share) => (share.min(agg.write_bytes), "device"),
                    None => (agg.bytes, "application"),
                }
            })
            .collect();
        let total_durable = (
            durable.iter().map(|d| d.0).sum::<u64>(),
            if durable.iter().all(|d| d.1 == "device") {
                "device"
            } else if durable.iter().all(|d| d.1 == "application") {
                "application"
            } else {
                "device and application"
            },
        );
        let flush_errors = exec
            .flush
            .iter()
            .filter(|f| matches!(f, Some(Err(_))))
            .count() as u64;
        let targets: Vec<TargetDoc> = plan
            .targets
            .iter()
            .zip(per_target)
            .enumerate()
            .map(|(i, (t, agg))| {
                let flush_sec = match &exec.flush[i] {
                    Some(Ok(s)) => Some(*s),
                    Some(Err(e)) => {
                        warnings.push(e.clone());
                        None
                    }
                    None => None,
                };
                if let Some(f) = flush_sec {
                    max_flush = Some(max_flush.map_or(f, |m: f64| m.max(f)));
                }
                TargetDoc {
                    index: i,
                    path: t.path.display().to_string(),
                    kind: t.kind,
                    logical_block_size: t.logical_block_size,
                    size: t.size,
                    read_ahead_kb: t.read_ahead_kb,
                    bs: t.bs,
                    region: t.region,
                    workers: plan.workers.iter().filter(|w| w.target_index == i).count(),
                    bytes: agg.bytes,
                    ios: agg.ios,
                    errors: agg.errors,
                    failed: plan.workers.iter().zip(&exec.outcomes).any(|(w, o)| {
                        w.target_index == i && (o.stopped_on_errors || !o.hung_ios.is_empty())
                    }),
                    short_ios: agg.short_ios,
                    seconds: secs,
                    bytes_per_sec: agg.bytes_per_sec(secs),
                    iops: agg.iops(secs),
                    latency_ns: agg.hist.summary(),
                    cpu_usr_sec: agg.cpu_usr_sec,
                    cpu_sys_sec: agg.cpu_sys_sec,
                    flush: agg.flush(secs, flush_sec, durable[i]),
                    device: exec.devices[i].clone(),
                    verify: plan
                        .workers
                        .iter()
                        .any(|w| w.target_index == i && w.verify == VerifyMode::Read)
                        .then(|| {
                            VerifyDoc::from_tallies(
                                plan.workers
                                    .iter()
                                    .zip(&exec.outcomes)
                                    .filter(|(w, _)| w.target_index == i)
                                    .map(|(_, o)| &o.verify),
                            )
                        }),
                    histogram: agg.hist.to_base64(),
                }
            })
            .collect();
        if !cfg.direct && !cfg.cached {
            for t in &targets {
                let t: &TargetDoc = t;
                if let Some(r) = t
                    .device
                    .as_ref()
                    .and_then(|d| d.read_ratio)
                    .filter(|&r| r < 0.5)
                {
                    warnings.push(format!(
                        "{}: the device delivered {:.1}% of the bytes read: the page cache served the rest, so these figures measure memory, not the device",
                        t.path,
                        r * 100.0
                    ));
                }
            }
        }
        if !cfg.direct && cfg.rw.writes() {
            for t in &targets {
                if let Some(r) = t
                    .device
                    .as_ref()
                    .and_then(|d| d.write_ratio)
                    .filter(|&r| r < 0.5)
                {
                    warnings.push(format!(
                        "{}: the device received {:.1}% of the bytes written: the page cache merged rewrites or still holds the rest, so 'written to cache' MB/s measures memory; durable MB/s counts only what reached the device",
                        t.path,
                        r * 100.0
                    ));
                }
            }
        }
        for t in &targets {
            if let Some(v) = t.verify.as_ref().filter(|v| v.unwritten > 0) {
                warnings.push(format!(
                    "{}: {} of {} blocks carry no stripebench header: never written with --verify (or with another --bs, --offset or --size)",
                    t.path, v.unwritten, v.blocks
                ));
            }
        }
        if matches!(exec.ended_by, "limit" | "passes")
            && secs < crate::measure::config::MIN_DURATION.as_secs_f64()
        {
            warnings.push(format!(
                "the window lasted {} (every worker reached its limit that soon): rates over a window this short are noise; give a larger --io-limit or more --passes",
                crate::base::units::fmt_latency_ns(secs * 1e9)
            ));
        }
        if exec.ended_by == "duration" {
            let most = exec
                .outcomes
                .iter()
                .map(WorkerOutcome::bytes)
                .max()
                .unwrap_or(0);
            let d = humantime::format_duration(cfg.duration);
            if let Some(limit) = cfg.io_limit {
                warnings.push(format!(
                    "--io-limit {} was not reached: the --duration ({d}) ended the run first, after {} at most per worker; raise --duration to reach the limit",
                    crate::base::units::fmt_bytes(limit),
                    crate::base::units::fmt_bytes(most)
                ));
            } else if let Some(n) = cfg.passes {
                let done = plan
                    .workers
                    .iter()
                    .zip(&exec.outcomes)
                    .filter_map(|(w, o)| {
                        w.io_limit
                            .filter(|&l| l > 0)
                            .map(|l| o.bytes() as f64 / l as f64)
                    })
                    .fold(f64::INFINITY, f64::min);
                warnings.push(if cfg.verify && !cfg.rw.writes() {
                    format!(
                        "verify: the --duration ({d}) ended the pass before every block was read: the slowest worker checked {:.1}% of its slice",
                        done.min(1.0) * 100.0
                    )
                } else {
                    format!(
                        "--passes {n} were not completed: the --duration ({d}) ended the run first, with the slowest worker {:.1}% through; raise --duration (or leave it out)",
                        done.min(1.0) * 100.0
                    )
                });
            }
        }
        if exec.interrupted && secs == 0.0 {
            warnings.push("interrupted before the window opened: nothing was measured".into());
        }
        if total.short_ios > 0 {
            warnings.push(format!(
                "{} short I/Os (fewer bytes than requested); their bytes are counted as moved",
                total.short_ios
            ));
        }
        if total.hist.clamped > 0 {
            warnings.push(format!(
                "{} latencies above one hour were recorded as one hour",
                total.hist.clamped
            ));
        }
        let paths: Vec<String> = plan
            .targets
            .iter()
            .map(|t| t.path.display().to_string())
            .collect();
        RunDocument {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo::this(),
            host: HostInfo::current(),
            config: cfg.doc(&paths),
            interrupted: exec.interrupted,
            window: WindowDoc {
                ramp_sec: cfg.ramp.as_secs_f64(),
                seconds: secs,
                start_unix_sec: exec.start_unix_sec,
                end_unix_sec: exec.end_unix_sec,
                rule: WINDOW_RULE.into(),
                ended_by: exec.ended_by.into(),
            },
            workers,
            targets,
            total: TotalDoc {
                bytes: total.bytes,
                ios: total.ios,
                errors: total.errors,
                short_ios: total.short_ios,
                seconds: secs,
                bytes_per_sec: total.bytes_per_sec(secs),
                iops: total.iops(secs),
                latency_ns: total.hist.summary(),
                cpu_usr_sec: total.cpu_usr_sec,
                cpu_sys_sec: total.cpu_sys_sec,
                flush: total.flush(
                    secs,
                    max_flush.filter(|_| exec.flush_abandoned.is_empty()),
                    total_durable,
                ),
                flush_errors,
                flush_incomplete: !exec.flush_abandoned.is_empty(),
                histogram: total.hist.to_base64(),
            },
            warnings,
            cache: None,
            stripe_model: plan
                .workers
                .iter()
                .find_map(|w| w.stripe)
                .map(|st| StripeModelDoc {
                    figures: "per_member_upper_bound".into(),
                    chunk: st.map.chunk,
                    logical_bs: st.logical_bs,
                    pieces_per_request: st.logical_bs.div_ceil(st.map.chunk),
                    note: STRIPE_MODEL_NOTE.into(),
                }),
        }
    }
}
