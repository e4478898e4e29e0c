//! The run document (the JSON contract in `docs/json.md`): its types here,
//! the figures every worker, target and the total share in [`figures`],
//! the order their fields are written in in [`wire`], the engine's part of
//! a worker ([`engine`]: its ring and buffers), the options as recorded
//! ([`config`]), the page cache before the run ([`cache`]), its assembly from a
//! finished run in [`assemble`], the host it ran on in [`host`], the
//! read-modify-write note from the members' counters in [`rmw`]. Every
//! report is a pure function of a [`RunDocument`].

mod assemble;
mod cache;
mod config;
mod engine;
mod figures;
mod host;
mod resync;
pub mod rmw;
mod wire;
mod zeros;

pub use assemble::{rate, Aggregate};
pub use cache::CacheDoc;
pub use config::{ConfigDoc, ZonesDoc};
pub use engine::{batched, BufferDoc, RingDoc};
pub use figures::{DirectionDoc, DirectionsDoc, Figures};
pub use resync::ResyncDoc;

use serde::{Deserialize, Serialize};

use crate::analysis::verify::{find_lost, find_stale, BadBlock, BadKind};
use crate::base::io::Region;
use crate::device::devstat::DeviceCounters;
use crate::device::TargetKind;
use crate::measure::worker::{Ending, ErrnoCount, HungIo, Interval, IoErrorRecord, VerifyTally};

/// Version of the JSON document; raised on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
    /// How this stripebench was invoked (argv, `--config` file): what
    /// repeats the run. Absent in documents from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation: Option<crate::base::invocation::Invocation>,
}

impl ToolInfo {
    /// This build of stripebench, and how this process was invoked.
    pub fn this() -> ToolInfo {
        ToolInfo {
            name: "stripebench".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            invocation: crate::base::invocation::current(),
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

/// What the whole stripebench process took for the run, as the kernel
/// charged it: figures to check the workers' own against, like for like
/// (the workers' CPU time sums to about `window_cpu_*`, and `cpu_*` is what
/// wait4 or /usr/bin/time report for the process, less its reports).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProcessDoc {
    /// Seconds from the start of the run's preparation (guarding and
    /// opening the targets, starting and pinning the workers, allocating
    /// their buffers) to the gate that started the workers.
    pub setup_sec: f64,
    /// Every thread's CPU time over the window (getrusage(RUSAGE_SELF) and
    /// CLOCK_PROCESS_CPUTIME_ID, sampled by the coordinator when the window
    /// opened and when it closed): the workers', the coordinator's and any
    /// other thread's.
    pub window_cpu_usr_sec: f64,
    pub window_cpu_sys_sec: f64,
    /// The wall seconds between those two samples: `window.seconds` when
    /// the coordinator took them on time (with a ramp, or hundreds of
    /// workers on a few CPUs, it may wait its turn for a CPU at each edge).
    pub window_cpu_span_sec: f64,
    /// Every thread's CPU time from the process's start until this
    /// document was assembled: set-up, window, wind-down and the assembly;
    /// all that wait4 or /usr/bin/time add is the writing of the reports
    /// (and, in a sweep or a comparison, the runs after this one).
    pub cpu_usr_sec: f64,
    pub cpu_sys_sec: f64,
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
    /// Where each I/O's latency starts: "issue" (the moment it was issued),
    /// or "due" on a schedule (`--rate`, `--rate-iops`: the moment its
    /// schedule made it due, so time waiting behind a stall counts; the
    /// issue-to-completion time is then `service_latency_ns`).
    #[serde(default = "latency_from_issue")]
    pub latency_from: String,
    /// What closed the window: "duration" (the deadline), "limit" (every
    /// worker reached --io-limit), "passes" (every worker finished its
    /// passes), "latency_target" (every worker's --latency-target search
    /// stopped it), "errors" (every worker stopped on errors) or
    /// "interrupted".
    #[serde(default)]
    pub ended_by: String,
    /// The workers' clock: "tsc" (the CPU's time-stamp counter, where the
    /// kernel's clocksource is that counter), "monotonic" (clock_gettime),
    /// or "virtual" (the mock engine); "" in documents written before
    /// (and then not written back).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub clock: String,
    /// `--steady`: the criterion, and whether and when the run was steady;
    /// absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadyDoc>,
    /// `--rate-min`/`--rate-iops-min`: the cycle that fell below it (and
    /// ended the window, `ended_by` "rate_min"); absent when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below_min: Option<BelowMinDoc>,
}

/// A worker's cycle below `config.rate_min`, as fio's "rate_min=...B/s
/// not met, got ...B/s".
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BelowMinDoc {
    pub worker: usize,
    /// "read" or "write" in a mixed pattern, judged apart; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    /// The cycle, in seconds into the window.
    pub from_sec: f64,
    pub to_sec: f64,
    /// Its rate, in `config.rate_min.unit`.
    pub got: f64,
}

/// `--steady` (fio's steadystate=) as judged over the run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SteadyDoc {
    /// fio's spelling: `iops:10%`, `bw_slope:0.5%`.
    pub criterion: String,
    /// The rolling window, the time into the window before judging began,
    /// and the interval of each figure.
    pub dur_sec: f64,
    pub ramp_sec: f64,
    pub interval_sec: f64,
    /// Whether the window was steady at some interval (and the run ended there).
    pub attained: bool,
    /// Seconds into the window at the end of the steady interval.
    pub at_sec: Option<f64>,
    /// The last judgement: the criterion's value (the largest deviation or
    /// the slope's size; a percentage of the mean when the limit is one)
    /// and the window's mean figure (I/Os or bytes per second, or ns).
    pub value: Option<f64>,
    pub mean: Option<f64>,
    /// The window's figures at that judgement, oldest first.
    pub values: Vec<f64>,
    /// Intervals judged once the window was full.
    pub judged: u64,
}

/// The fsync that ends a buffered write run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FlushDoc {
    pub seconds: f64,
    /// `durable_bytes` over (window + flush): what reached stable storage
    /// per second; a target's over its own active time and its own flush
    /// (never another target's window), the total's over the shared window
    /// and the longest flush.
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

/// `--sprandom`'s model for one worker's region (analysis::sprandom):
/// what was to be written and what the SSD is expected to do after.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SprDoc {
    /// The over-provisioning asked (`--spr-op`, fio's spr_op).
    pub op: f64,
    pub regions: u32,
    /// The bytes addressed (the region), and the physical bytes written:
    /// `logical_bytes x (1 + op)`, down to a whole block.
    pub logical_bytes: u64,
    pub physical_bytes: u64,
    /// Each region's bytes, and the writes each is given.
    pub region_bytes: u64,
    pub region_writes: u64,
    /// The writes of the whole run (`physical_bytes / bs`).
    pub writes: u64,
    /// The steady-state write amplification the model expects (0.5/op + 0.7).
    pub waf: f64,
    /// The validity of the least valid region (the block greedy GC takes),
    /// and of the most valid (1).
    pub validity_min: f64,
    pub validity_max: f64,
}

impl SprDoc {
    pub fn of(m: &crate::analysis::sprandom::SprModel) -> SprDoc {
        let last = m.invalid_pct.len().saturating_sub(1);
        SprDoc {
            op: m.op,
            regions: m.regions,
            logical_bytes: m.logical,
            physical_bytes: m.physical,
            region_bytes: m.region_bytes,
            region_writes: m.region_writes,
            writes: m.writes(),
            waf: m.waf,
            validity_min: m.validity(0),
            validity_max: m.validity(last),
        }
    }
}

/// One worker: where it ran and what it did; written in the contract's
/// field order by its `Serialize` in [`wire`].
#[derive(Debug, Clone, Deserialize, PartialEq)]
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
    /// Its figures over its own active time (the window, or less when it
    /// reached its limit first).
    #[serde(flatten)]
    pub figures: Figures,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    /// `--rw trim`/`randtrim`: the bytes trimmed and the trims (in
    /// `bytes` and `ios` too); 0 in a document from before trims.
    #[serde(default)]
    pub trim_bytes: u64,
    #[serde(default)]
    pub trim_ios: u64,
    #[serde(with = "crate::document::facts::Many::<crate::document::facts::ErrnoCountDef>")]
    pub errors_by_errno: Vec<ErrnoCount>,
    /// The first few errors with their offsets.
    #[serde(with = "crate::document::facts::Many::<crate::document::facts::IoErrorRecordDef>")]
    pub error_samples: Vec<IoErrorRecord>,
    /// The worker stopped because it reached --max-errors (the others went on).
    pub stopped_on_errors: bool,
    /// `--ignore-errors`: the failures it counted and went on after, by
    /// errno (not in `errors`).
    #[serde(
        default,
        with = "crate::document::facts::Many::<crate::document::facts::ErrnoCountDef>"
    )]
    pub ignored_errors: Vec<ErrnoCount>,
    /// What stopped this worker: "duration", "limit" or "errors".
    #[serde(default, with = "crate::document::facts::EndingDef")]
    pub ended_by: Ending,
    /// I/Os that never completed: the worker gave up on them after
    /// --hang-timeout with nothing completing.
    #[serde(
        default,
        with = "crate::document::facts::Many::<crate::document::facts::HungIoDef>"
    )]
    pub hung_ios: Vec<HungIo>,
    /// On a schedule: how the worker kept it.
    #[serde(default)]
    pub rate: Option<ScheduleDoc>,
    #[serde(with = "crate::document::facts::Many::<crate::document::facts::IntervalDef>")]
    pub intervals: Vec<Interval>,
    /// `--fio-log-format each`: the window's I/Os, one record each, for
    /// fio's per-I/O log lines; kept out of the JSON (fio's log is where
    /// they go).
    #[serde(skip)]
    pub io_lines: Vec<crate::measure::worker::IoLine>,
    /// How the engine issued I/O ("pread/pwrite", "io_uring, registered buffers and file", ...).
    pub engine_path: String,
    /// io_uring: how the worker's ring was set up (`--hipri`, `--sqpoll`,
    /// `--taskrun`) and what its submission thread cost; absent for the
    /// sync engine.
    #[serde(default)]
    pub ring: Option<RingDoc>,
    /// `--nowait`: the I/Os that would have blocked (EAGAIN under
    /// RWF_NOWAIT) and were issued again without it; absent without --nowait.
    #[serde(default)]
    pub would_block_ios: Option<u64>,
    /// `--cmdprio`: the I/Os this worker issued at the command priority
    /// (ramp included, of every I/O issued); absent without --cmdprio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdprio_ios: Option<u64>,
    /// The worker's I/O buffers: `{bytes, page_size_bytes, method}`, method
    /// `thp`, `hugetlb` or `pages` (`--hugepages`).
    #[serde(default)]
    pub buffer: Option<BufferDoc>,
    /// A buffered sequential read: how often the worker evicted its region
    /// from the page cache at a wrap-around in the window, and the seconds
    /// it took (left out of `seconds`). Absent when it never did.
    #[serde(default)]
    pub cache_evictions: u64,
    #[serde(default)]
    pub cache_eviction_sec: f64,
    /// A buffered sequential write: how often the worker wrote its region
    /// back to the device at a wrap-around in the window (so every pass
    /// reaches the device), and the seconds it took (inside `seconds`: the
    /// device's time). Absent when it never did.
    #[serde(default)]
    pub wrap_flushes: u64,
    #[serde(default)]
    pub wrap_flush_sec: f64,
    /// `--sprandom`: the preconditioning model its writes followed;
    /// absent without.
    #[serde(default)]
    pub sprandom: Option<SprDoc>,
    /// Of its reads counted in the window, those checked for all zeros
    /// (one in 64, the first included), and those of them that were all
    /// zeros: answered by no medium, or zeros stored (`analysis::zeros`).
    /// Absent in a document written before the sample.
    #[serde(default)]
    pub sampled_reads: Option<u64>,
    #[serde(default)]
    pub zero_reads: Option<u64>,
    /// `--latency-target`: the queue depth the worker's search found and
    /// each of its windows; absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_search: Option<LatencySearchDoc>,
}

/// `--latency-target` (fio's latency_target=): what each window had to
/// meet, the depth found, and every window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LatencySearchDoc {
    pub target_ns: u64,
    pub window_ns: u64,
    pub percentile: f64,
    /// `--latency-run`: it kept searching after settling.
    pub keep_searching: bool,
    /// The depth of the last whole window: the one the search settled on,
    /// or where the run's end (or a failure at depth 1) found it.
    pub depth: u32,
    /// It settled and its final window met the target.
    pub settled: bool,
    /// The last whole window met the target.
    pub met: bool,
    /// The search stopped the worker: settled, or (not `settled`) at
    /// `percentile` 100 an I/O over the target at depth 1, where fio fails
    /// the job ("max latency exceeded") and the run exits 1.
    #[serde(default)]
    pub stopped: bool,
    pub windows: Vec<LatencyWindowDoc>,
}

/// One window of the `--latency-target` search.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LatencyWindowDoc {
    /// Seconds after the gate opened when it started, and its length.
    pub start_sec: f64,
    pub seconds: f64,
    /// The most I/Os in flight in it.
    pub depth: u32,
    pub ios: u64,
    /// Its I/Os over the target.
    pub late_ios: u64,
    /// Its latency at the percentile (issue to completion); null when
    /// nothing completed.
    pub percentile_latency_ns: Option<u64>,
    pub met: bool,
    /// The window that settled the search (fio reports this one's figures).
    pub final_window: bool,
    /// Cut short by the run's end, not judged.
    pub partial: bool,
}

impl LatencySearchDoc {
    /// The worker's search, as the document says it.
    pub fn of(s: &crate::measure::worker::SearchOutcome) -> LatencySearchDoc {
        LatencySearchDoc {
            target_ns: s.target.target_ns,
            window_ns: s.target.window_ns,
            percentile: s.target.percentile,
            keep_searching: s.target.keep_searching,
            depth: s.depth,
            settled: s.settled,
            met: s.met,
            stopped: s.stopped,
            windows: (s.windows.iter())
                .map(|w| LatencyWindowDoc {
                    start_sec: w.start_ns as f64 / 1e9,
                    seconds: w.seconds,
                    depth: w.depth,
                    ios: w.ios,
                    late_ios: w.late_ios,
                    percentile_latency_ns: w.percentile_ns,
                    met: w.met,
                    final_window: w.final_window,
                    partial: w.partial,
                })
                .collect(),
        }
    }
}

/// How a worker on a schedule (`--rate`, `--rate-iops`) kept it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScheduleDoc {
    /// What was asked, per worker.
    pub target_iops: f64,
    pub target_bytes_per_sec: f64,
    /// What the worker delivered over the window (its `iops` and `bytes_per_sec`).
    pub delivered_iops: f64,
    pub delivered_bytes_per_sec: f64,
    /// The most an I/O due in the window was issued after its due time
    /// (issue lag; its latency, from due to completion, is in `latency_ns`
    /// and never below it).
    pub behind_max_ns: u64,
    /// I/Os due in the window issued more than 1 ms after their due time.
    pub late_ios: u64,
    /// I/Os due before the window's end that were not done by it (still in
    /// flight at the end, hung, or never issued). `latency_ns` and
    /// `histogram` hold each of them too, from its due time to its
    /// completion after the window, or to the window's end when it never
    /// completed (a lower bound): the histogram's count is `ios` plus this.
    #[serde(default)]
    pub unserved_ios: u64,
    /// How long before the window's end the oldest unserved I/O was due (0: none).
    #[serde(default)]
    pub unserved_oldest_ns: u64,
    /// The worker kept its schedule: it completed the I/Os due in the
    /// window, give or take 5% (or its --iodepth + 1 I/Os, if more).
    pub kept: bool,
}

/// One target: what it is, and its workers' figures merged; written in
/// the contract's field order by its `Serialize` in [`wire`].
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct TargetDoc {
    pub index: usize,
    pub path: String,
    #[serde(with = "crate::document::facts::TargetKindDef")]
    pub kind: TargetKind,
    pub logical_block_size: u64,
    pub size: u64,
    /// Read-ahead of the target's device during the run (KiB), when it has one.
    pub read_ahead_kb: Option<u64>,
    pub bs: u64,
    pub region: Region,
    pub workers: usize,
    /// Its workers merged, over their joined active time.
    #[serde(flatten)]
    pub figures: Figures,
    /// A worker on this target stopped on I/O errors, or had I/O that hung.
    pub failed: bool,
    pub flush: Option<FlushDoc>,
    /// The block device's own counters, when the target has one.
    #[serde(with = "crate::document::facts::Opt::<crate::document::facts::DeviceCountersDef>")]
    pub device: Option<DeviceCounters>,
    /// What verification found (verifying reads only).
    pub verify: Option<VerifyDoc>,
    /// The storage stack under the target (as `stripebench topology`
    /// prints it), read before the run; null when it could not be read
    /// (a file on tmpfs, a device sysfs does not describe).
    #[serde(
        default,
        with = "crate::document::facts::Opt::<crate::document::facts::TopologyDef>"
    )]
    pub topology: Option<crate::device::topology::Topology>,
    /// Settings of the target's device that another run's state record
    /// held during this run (its value in force and the device's own).
    /// `None`: a document written before they were recorded (the field is
    /// absent there, and stays absent when it is written again).
    #[serde(
        default,
        with = "crate::document::facts::Opt::<crate::document::facts::Many<crate::document::facts::HeldSettingDef>>"
    )]
    pub held_settings: Option<Vec<crate::device::knobs::HeldSetting>>,
    /// I/O the target's device did that was not this run's, beyond the
    /// tolerance (`analysis::foreign`): `Some(None)`, written as null, when
    /// none was seen or could be told; `None` in a document written before
    /// it was looked for (absent there, as it stays).
    #[serde(default, deserialize_with = "present")]
    pub foreign_io: Option<Option<crate::analysis::foreign::Foreign>>,
    /// The host adapter the target's disk is behind (a PCI function, or a
    /// SAS expander; a file's, its file system's disk's), by which a run
    /// over many disks is summarised per controller: `Some(None)`, written
    /// as null, for a virtual or stacked device; `None` in a document
    /// written before it (absent there, as it stays).
    #[serde(default, deserialize_with = "present_adapter")]
    pub adapter: Option<Option<String>>,
    /// Who the target's disk is, whatever its name today (its WWN, else
    /// its serial with its model, else what it is on its host, marked as
    /// such): the key of its history. `Some(None)`, written as null, when
    /// sysfs does not know it; `None` in a document written before it
    /// (absent there, as it stays).
    #[serde(default, deserialize_with = "present_identity")]
    pub identity: Option<Option<crate::device::identity::DiskIdentity>>,
}

impl TargetDoc {
    /// The adapter the target's disk is behind, when known.
    pub fn adapter(&self) -> Option<&str> {
        self.adapter.as_ref().and_then(|a| a.as_deref())
    }
}

/// `adapter` present, null or not: `Some` of its value.
fn present_adapter<'de, D>(d: D) -> Result<Option<Option<String>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Option::<String>::deserialize(d).map(Some)
}

/// `identity` present, null or not: `Some` of its value.
fn present_identity<'de, D>(
    d: D,
) -> Result<Option<Option<crate::device::identity::DiskIdentity>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    crate::document::facts::Opt::<crate::document::facts::DiskIdentityDef>::deserialize(d).map(Some)
}

/// A field that is present, null or not: `Some` of its value (absent is
/// the field's `#[serde(default)]`, `None`).
fn present<'de, D>(d: D) -> Result<Option<Option<crate::analysis::foreign::Foreign>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    crate::document::facts::Opt::<crate::document::facts::ForeignDef>::deserialize(d).map(Some)
}

/// Every worker merged, over the shared window; written in the contract's
/// field order by its `Serialize` in [`wire`].
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct TotalDoc {
    #[serde(flatten)]
    pub figures: Figures,
    pub flush: Option<FlushDoc>,
    /// Final fsyncs that failed (their errors are in `warnings`).
    #[serde(default)]
    pub flush_errors: u64,
    /// An interrupt came during the final fsync and the run stopped waiting
    /// for it: what was written may not all be on the device yet, and no
    /// durable figure is given.
    #[serde(default)]
    pub flush_incomplete: bool,
    /// The workers' evictions at wrap-arounds (see `WorkerDoc`), summed;
    /// they lie inside the shared window. Absent when none.
    #[serde(default)]
    pub cache_evictions: u64,
    #[serde(default)]
    pub cache_eviction_sec: f64,
    /// The workers' write-backs at wrap-arounds (see `WorkerDoc`), summed.
    /// Absent when none.
    #[serde(default)]
    pub wrap_flushes: u64,
    #[serde(default)]
    pub wrap_flush_sec: f64,
    /// The workers' sampled reads and all-zero ones (see `WorkerDoc`),
    /// summed; absent in a document written before the sample.
    #[serde(default)]
    pub sampled_reads: Option<u64>,
    #[serde(default)]
    pub zero_reads: Option<u64>,
    /// The targets' own rates summed, when the targets were active for
    /// different times (one stopped on --passes or --io-limit before
    /// another, or evicted at its wrap-arounds): then the total (every
    /// target's bytes over the shared window) is not their sum, and can
    /// stand below the fastest of them. Absent (`None`) when every target
    /// ran the whole window.
    #[serde(default)]
    pub targets_sum: Option<TargetsSum>,
    /// `--bssplit`: the window's I/Os of each size, smallest first; empty
    /// (absent) with one size.
    #[serde(default)]
    pub sizes: Vec<SizeDoc>,
    /// `--cmdprio-bssplit`: each direction's I/Os at each command
    /// priority (fio's per-priority clat figures); absent without.
    #[serde(default)]
    pub priorities: Vec<PrioDoc>,
    /// `--zones`: each target's zones in order, with the window's I/O in
    /// each and its MB/s (a disk's speed across its surface); absent
    /// without zones, or with more than 4096 per target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<ZoneDoc>,
}

/// One strided zone of one target (`--zones`): its I/O in the window and
/// the worker's time on it (each completion's time since the one before,
/// given to its zone), and its rate over that time.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ZoneDoc {
    /// The target's index in `targets`.
    pub target: usize,
    /// The zone's first byte on the target.
    pub offset: u64,
    pub ios: u64,
    pub bytes: u64,
    pub busy_sec: f64,
    /// `bytes` over `busy_sec` (null when none completed there).
    pub bytes_per_sec: Option<f64>,
}

impl ZoneDoc {
    /// Every worker's zones, by target and offset (one job per target).
    pub fn of(outcomes: &[crate::measure::worker::WorkerOutcome]) -> Vec<ZoneDoc> {
        let mut v: Vec<ZoneDoc> = (outcomes.iter().flat_map(|o| o.per_zone.iter()))
            .map(|z| ZoneDoc {
                target: z.target_index,
                offset: z.offset,
                ios: z.ios,
                bytes: z.bytes,
                busy_sec: z.busy_ns as f64 / 1e9,
                bytes_per_sec: (z.busy_ns > 0).then(|| z.bytes as f64 * 1e9 / z.busy_ns as f64),
            })
            .collect();
        v.sort_by_key(|z| (z.target, z.offset));
        v
    }
}

/// One direction's I/Os at one command priority (`--cmdprio-bssplit`):
/// fio's `clat prio CLASS/LEVEL/HINT` figures, with the count and share.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PrioDoc {
    /// `read` or `write`.
    pub direction: String,
    /// The ioprio value the commands carried, and its parts (fio's
    /// prioclass, prio and priohint in its JSON).
    pub ioprio: u16,
    pub prioclass: u8,
    pub prio: u8,
    pub priohint: u16,
    pub ios: u64,
    pub bytes: u64,
    /// This priority's I/Os over the direction's I/Os in the window, 0 to 1.
    pub share: f64,
    /// Their latencies (issue to completion, ns); null when none completed.
    pub latency_ns: Option<PrioLatency>,
}

/// One priority's latency figures (ns).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct PrioLatency {
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub max: u64,
}

impl PrioDoc {
    /// Every worker's count of each (direction, priority), summed, reads
    /// first, each direction's in the order the workers hold them
    /// (the default first, as fio's clat_prio).
    pub fn of(outcomes: &[crate::measure::worker::WorkerOutcome]) -> Vec<PrioDoc> {
        let mut by: Vec<crate::measure::worker::PrioCount> = Vec::new();
        for c in outcomes.iter().flat_map(|o| o.per_prio.iter()) {
            match by
                .iter_mut()
                .find(|b| (b.write, b.ioprio) == (c.write, c.ioprio))
            {
                Some(b) => {
                    b.ios += c.ios;
                    b.bytes += c.bytes;
                    b.hist.merge(&c.hist);
                }
                None => by.push(c.clone()),
            }
        }
        by.sort_by_key(|b| b.write);
        // fio's JSON leaves out a priority no I/O completed at.
        by.retain(|b| b.ios > 0);
        let all =
            |write: bool| -> u64 { by.iter().filter(|b| b.write == write).map(|b| b.ios).sum() };
        let (reads, writes) = (all(false), all(true));
        by.iter()
            .map(|b| {
                let (prioclass, prio, priohint) = crate::base::thread_setup::prio_parts(b.ioprio);
                let of = if b.write { writes } else { reads };
                PrioDoc {
                    direction: if b.write { "write" } else { "read" }.into(),
                    ioprio: b.ioprio,
                    prioclass,
                    prio,
                    priohint,
                    ios: b.ios,
                    bytes: b.bytes,
                    share: if of == 0 {
                        0.0
                    } else {
                        b.ios as f64 / of as f64
                    },
                    latency_ns: b.hist.summary().map(|s| PrioLatency {
                        min: s.min,
                        mean: s.mean,
                        p50: s.p50,
                        p90: s.p90,
                        p99: s.p99,
                        p99_9: s.p99_9,
                        max: s.max,
                    }),
                }
            })
            .collect()
    }
}

/// One size of a `--bssplit` run: its I/Os, bytes, share of the I/Os and
/// their mean latency.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SizeDoc {
    pub bs: u64,
    pub ios: u64,
    pub bytes: u64,
    /// This size's I/Os over all I/Os in the window, 0 to 1.
    pub share: f64,
    /// Mean latency of this size's I/Os (null when none completed).
    pub latency_mean_ns: Option<f64>,
}

impl SizeDoc {
    /// Every worker's count of each size, summed by size.
    pub fn of(outcomes: &[crate::measure::worker::WorkerOutcome]) -> Vec<SizeDoc> {
        let mut by: Vec<crate::measure::worker::SizeCount> = Vec::new();
        for c in outcomes.iter().flat_map(|o| o.per_size.iter()) {
            match by.iter_mut().find(|b| b.bs == c.bs) {
                Some(b) => {
                    b.ios += c.ios;
                    b.bytes += c.bytes;
                    b.latency_ns += c.latency_ns;
                }
                None => by.push(*c),
            }
        }
        by.sort_by_key(|b| b.bs);
        let all: u64 = by.iter().map(|b| b.ios).sum();
        by.iter()
            .map(|b| SizeDoc {
                bs: b.bs,
                ios: b.ios,
                bytes: b.bytes,
                share: if all == 0 {
                    0.0
                } else {
                    b.ios as f64 / all as f64
                },
                latency_mean_ns: (b.ios > 0).then(|| b.latency_ns as f64 / b.ios as f64),
            })
            .collect()
    }
}

/// The targets' own rates summed (each over its own active time): what
/// the total is not, when they ended at different times.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TargetsSum {
    /// Each target's `bytes_per_sec` summed.
    pub bytes_per_sec: f64,
    /// Each target's `flush.durable_bytes_per_sec` summed (a buffered
    /// write's; null when no target has one).
    pub durable_bytes_per_sec: Option<f64>,
}

impl TargetsSum {
    /// The sum, when some target was active for less than the shared
    /// window of `window_sec` (its own `seconds`); `None` when all ran
    /// the whole of it, or there is one target.
    pub fn of(targets: &[TargetDoc], window_sec: f64) -> Option<TargetsSum> {
        let apart = targets.len() > 1
            && targets
                .iter()
                .any(|t| (t.figures.seconds - window_sec).abs() > 1e-9);
        if !apart {
            return None;
        }
        let durable: Vec<f64> = targets
            .iter()
            .filter_map(|t| t.flush.as_ref().map(|f| f.durable_bytes_per_sec))
            .collect();
        Some(TargetsSum {
            bytes_per_sec: targets.iter().map(|t| t.figures.bytes_per_sec).sum(),
            durable_bytes_per_sec: (!durable.is_empty()).then(|| durable.iter().sum()),
        })
    }
}

impl TotalDoc {
    /// CPU seconds (user + system) per 10^9 bytes moved in the window.
    pub fn cpu_sec_per_gb(&self) -> Option<f64> {
        self.figures.cpu_sec_per_gb()
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
    #[serde(with = "crate::document::facts::Many::<crate::document::facts::BadBlockDef>")]
    pub bad_blocks: Vec<BadBlock>,
    /// "complete", or why the stale check covered only part of the target.
    pub stale_check: String,
    /// The block size the headers say the target was written with, when
    /// no block checked good with the `--bs` it was read with: the cause,
    /// not corruption (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_bs: Option<u64>,
    /// With `written_bs`: the headers name another size too, so the write
    /// drew several (a `--bssplit`); `written_bs` is the first seen.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub written_split: bool,
}

impl VerifyDoc {
    pub fn bad(&self) -> u64 {
        self.corrupt + self.misplaced + self.stale + self.lost
    }

    pub(crate) fn from_tallies<'a>(tallies: impl Iterator<Item = &'a VerifyTally>) -> VerifyDoc {
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
            written_bs: None,
            written_split: false,
        };
        let mut goods = Vec::new();
        let mut unwritten = Vec::new();
        let mut claims = Vec::new();
        let mut other = (0, None);
        let mut second = None;
        for t in tallies {
            claims.extend(t.claims.iter().map(|&(run, _, e)| (run, e)));
            other = (other.0 + t.other_size, other.1.or(t.other_len));
            second = second
                .or(t.second_len)
                .or(t.other_len.filter(|l| Some(*l) != other.1));
            if t.claims_truncated {
                d.stale_check = format!(
                    "partial: only the ranges of the first {} writes of each worker were known",
                    crate::measure::worker::VERIFY_CLAIMS_MAX
                );
            }
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
            // A verified random mix's own finds (its record says which
            // blocks it wrote): counted as they are.
            d.stale += t.stale;
            d.lost += t.lost;
            d.bad_blocks.extend(t.bad.iter().cloned());
            goods.extend_from_slice(&t.goods);
            if t.goods_truncated {
                d.stale_check = format!(
                    "partial: only the first {} good blocks of each worker were compared",
                    crate::measure::worker::VERIFY_TRACK_MAX
                );
            }
        }
        // Headers for blocks of another size: this read's sizes or offsets
        // are not the write's (another --bs, --bssplit, --seed or --skip),
        // so it lands inside blocks, where no header is: no lost write
        // can be told from that.
        if other.0 > 0 {
            unwritten.clear();
            d.stale_check = format!(
                "partial: {} block(s) carry a header for a block of another size, so this read's sizes or offsets are not the write's (read back with its --bs, or its --bssplit, --seed and --skip); blocks without a header are not judged lost writes",
                other.0
            );
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
                    member: None,
                    member_offset: None,
                });
            }
        }
        // Every header found names another block size, and none checked
        // good: the --bs is wrong, and its blocks are not corrupt.
        if let Some(bs) = crate::analysis::verify::wrong_bs(d.good, other.1) {
            d.written_bs = Some(bs);
            d.written_split = second.is_some();
            d.corrupt -= other.0;
            d.bad_blocks.retain(|b| {
                !(b.kind == BadKind::Corrupt && b.detail.starts_with("a header for a "))
            });
        }
        for s in find_stale(goods, &claims) {
            let (g, newer) = (s.gen, s.newer);
            d.stale += 1;
            d.good -= 1;
            let detail = if s.in_range {
                format!(
                    "written by an older write (run {} ms, pass {}), inside the range a later write (run {} ms) covers: a lost write (or that write stopped early)",
                    g >> 16, g & 0xFFFF, newer >> 16
                )
            } else {
                format!(
                    "generation {} (run {} ms, pass {}) is older than a block its writer wrote later ({} ms, pass {}): a lost write",
                    g, g >> 16, g & 0xFFFF, newer >> 16, newer & 0xFFFF
                )
            };
            d.bad_blocks.push(BadBlock {
                offset: s.offset,
                kind: BadKind::Stale,
                detail,
                member: None,
                member_offset: None,
            });
        }
        d.bad_blocks.sort_by_key(|b| b.offset);
        d.bad_blocks.truncate(100);
        d
    }
}

/// One run, as written to JSON.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename = "run")]
pub struct RunDocument {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub host: HostInfo,
    /// What the whole process took (set-up time, CPU time), to check the
    /// workers' figures against; absent in documents from before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessDoc>,
    pub config: ConfigDoc,
    pub interrupted: bool,
    pub window: WindowDoc,
    pub workers: Vec<WorkerDoc>,
    pub targets: Vec<TargetDoc>,
    pub total: TotalDoc,
    /// What makes the figures mean less than they seem; each is its
    /// sentence in the JSON.
    pub warnings: Vec<crate::base::warning::Warning>,
    /// What was done to the page cache before the run.
    #[serde(default)]
    pub cache: Option<CacheDoc>,
    /// `--stripe`: what the figures of a modelled RAID0 mean (null otherwise).
    #[serde(default)]
    pub stripe_model: Option<StripeModelDoc>,
    /// `--live`/`--metrics`: where the per-second lines went and how many
    /// the reader kept up with (absent without them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveDoc>,
    /// The fio command that runs the same workload (`run --print-fio`'s),
    /// or why none can be given; absent in documents from before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio: Option<crate::document::fio::FioDoc>,
    /// The run's own Little's-law check (absent in documents from before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<InFlightDoc>,
    /// The md arrays at or under the targets that resynced while the run
    /// ran, and what the resync did meanwhile (absent when none did).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resync: Vec<ResyncDoc>,
}

/// A run's Little's-law self-check: the mean I/Os it had in flight over the
/// window (IOPS x mean latency), against the I/Os its depth allowed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct InFlightDoc {
    /// total.iops x total.latency_ns.mean (in seconds).
    pub mean: f64,
    /// --iodepth x workers: the most I/Os that could be in flight at once.
    pub slots: u64,
    /// Whether the I/Os fit in those slots over the window (the bound a
    /// reader checks, `analysis::occupancy`); null when latency runs from
    /// a schedule's due times (`--rate`), which includes waiting for a slot.
    pub fits: Option<bool>,
}

impl InFlightDoc {
    /// The check of a run's totals, with `slots` I/Os allowed in flight.
    pub fn of(total: &Figures, window_sec: f64, slots: u64, scheduled: bool) -> InFlightDoc {
        let o = crate::analysis::occupancy::Occupancy {
            ios: total.ios,
            mean_ns: total.latency_ns.as_ref().map_or(0.0, |l| l.mean),
            max_ns: total.latency_ns.as_ref().map_or(0, |l| l.max),
            seconds: window_sec,
            slots,
        };
        InFlightDoc {
            mean: o.mean_in_flight(),
            slots,
            fits: (!scheduled).then(|| o.fits()),
        }
    }
}

/// What the live stream of a run did.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LiveDoc {
    /// `--live`: a path, `-` for stdout, or null.
    pub path: Option<String>,
    /// `jsonl` or `csv`.
    pub format: String,
    /// `--metrics`, or null.
    pub metrics: Option<String>,
    /// `--live-interval` in seconds: each line's span (absent in documents
    /// from before it: 1).
    #[serde(default = "one_second")]
    pub interval_sec: f64,
    /// Intervals written (seconds with the default interval).
    pub seconds: u64,
    pub lines_written: u64,
    /// Lines the stream's reader had no room for: dropped, never waited for.
    pub lines_dropped: u64,
    /// Worker lines written as zeros: nothing came by the second's end + 0.3 s.
    pub stalled_lines: u64,
    /// Worker lines for a second already written, marked `late`.
    pub late_lines: u64,
    /// Seconds a worker could not hand off (the collector was behind).
    pub seconds_lost: u64,
    /// Lines written without percentiles for the same reason.
    pub histograms_lost: u64,
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

impl RunDocument {
    /// `--log-interval` in ms: each `intervals` record's length (1000 in
    /// documents written before it).
    pub fn log_interval_ms(&self) -> u64 {
        self.config.log_interval_ms.unwrap_or(1000)
    }

    /// The workers with their intervals as whole seconds ([`per_second`]),
    /// what the per-second readers (diff's test, merge, the plots) take;
    /// why not, when the intervals do not divide a second.
    pub fn workers_per_second(&self) -> Result<Vec<WorkerDoc>, String> {
        let ms = self.log_interval_ms();
        self.workers
            .iter()
            .map(|w| {
                Ok(WorkerDoc {
                    intervals: per_second(&w.intervals, ms)?,
                    ..w.clone()
                })
            })
            .collect()
    }

    /// Whether any worker met an I/O error or had I/O that hung, a final
    /// flush failed, or verification found a bad block.
    pub fn has_errors(&self) -> bool {
        self.total.figures.errors > 0
            || self.total.flush_errors > 0
            || self.bad_blocks() > 0
            || self.workers.iter().any(|w| !w.hung_ios.is_empty())
    }

    /// A `--latency-target` search at a percentile of 100 that an I/O
    /// over the target stopped at depth 1, in one line (fio fails the job
    /// there: "max latency exceeded"); `None` otherwise.
    pub fn latency_exceeded_line(&self) -> Option<String> {
        let (w, s) = (self.workers.iter()).find_map(|w| {
            Some((
                w,
                w.latency_search
                    .as_ref()
                    .filter(|s| s.stopped && !s.settled)?,
            ))
        })?;
        let late = s
            .windows
            .last()
            .and_then(|x| x.percentile_latency_ns)
            .unwrap_or(0);
        Some(format!(
            "latency target not met: worker {}'s I/O took {} at depth 1, over --latency-target {} with --latency-percentile 100 (every I/O within it); the worker stopped there, as fio's job fails (max latency exceeded), and the run exits 1",
            w.id,
            crate::base::units::fmt_latency_ns(late as f64),
            crate::base::units::fmt_latency_ns(s.target_ns as f64)
        ))
    }

    /// The cycle below `--rate-min`/`--rate-iops-min`, in one line: whose,
    /// when, what it got and what it had to keep (fio's "rate_min=...
    /// not met, got ..."); `None` when no cycle fell below it.
    pub fn below_min_line(&self) -> Option<String> {
        let b = self.window.below_min.as_ref()?;
        let m = self.config.rate_min.as_ref()?;
        let (flag, min, got) = if m.unit == "IOPS" {
            (
                "--rate-iops-min",
                format!("{}", m.min),
                format!("{:.1} IOPS", b.got),
            )
        } else {
            (
                "--rate-min",
                format!("{}/s", crate::base::units::fmt_size_arg(m.min as u64)),
                format!("{:.0} B/s", b.got),
            )
        };
        Some(format!(
            "below the minimum rate: worker {}{}'s cycle {:.2}s-{:.2}s into the window got {got}, under {flag} {min} (over --rate-cycle {}s cycles); the run ended there and exits 1",
            b.worker,
            b.direction
                .as_deref()
                .map(|d| format!(" {d}s"))
                .unwrap_or_default(),
            b.from_sec,
            b.to_sec,
            m.cycle_sec
        ))
    }

    /// The first target verified with a `--bs` other than the one its
    /// blocks were written with, as one line naming both and what to do.
    pub fn wrong_bs(&self) -> Option<String> {
        use crate::base::units::fmt_size_arg;
        self.targets.iter().find_map(|t| {
            let v = t.verify.as_ref()?;
            let written = v.written_bs?;
            if v.written_split {
                return Some(format!(
                    "verify {}: its blocks were written in several sizes (their headers name {} and others: a --bssplit), not the --bs {} it was read with: verify with the write's own --bssplit, --seed and --skip (its run document's config has them)",
                    crate::base::error::show_text(&t.path),
                    fmt_size_arg(written),
                    fmt_size_arg(t.bs)
                ));
            }
            Some(format!(
                "verify {}: its blocks were written with --bs {} (their headers say so), not the --bs {} it was read with: verify with --bs {}",
                crate::base::error::show_text(&t.path),
                fmt_size_arg(written),
                fmt_size_arg(t.bs),
                fmt_size_arg(written)
            ))
        })
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

/// A worker's intervals of `ms` milliseconds as whole seconds: those of a
/// second each as they are; shorter ones that divide a second summed into
/// the second they lie in (its max latency the highest of theirs; no p50
/// or p99, which do not add up); why not, for intervals that do not divide
/// a second (longer ones hold several seconds each).
pub fn per_second(intervals: &[Interval], ms: u64) -> Result<Vec<Interval>, String> {
    if ms == 1000 {
        return Ok(intervals.to_vec());
    }
    if ms == 0 || 1000 % ms != 0 {
        return Err(format!(
            "its intervals are {ms} ms long (--log-interval), which does not divide a second:              no per-second figures can be made of them; run with --log-interval 1s, or one that              divides a second (10ms, 100ms, 250ms, ...)"
        ));
    }
    let mut out: Vec<Interval> = Vec::new();
    for i in intervals {
        // Interval k starts at k × ms: its second is k × ms / 1000.
        let k = (i.t * 1000.0 / ms as f64).round() as u64;
        let t = (k * ms / 1000) as f64;
        match out.last_mut().filter(|l| l.t == t) {
            Some(l) => {
                l.bytes += i.bytes;
                l.ios += i.ios;
                l.max_ns = l.max_ns.max(i.max_ns);
            }
            None => out.push(Interval {
                t,
                bytes: i.bytes,
                ios: i.ios,
                max_ns: i.max_ns,
                ..Interval::default()
            }),
        }
    }
    Ok(out)
}

/// Documents from before `window.latency_from` timed every I/O from its issue.
fn latency_from_issue() -> String {
    "issue".into()
}

/// How latency is timed and which window an I/O counts in (also in docs/numbers.md).
pub const WINDOW_RULE: &str = "one monotonic timestamp before each I/O is issued and one when it completes; \
an I/O counts in the window in which it completed; every worker shares one window that opens after the ramp \
and closes at one deadline";

/// [`WINDOW_RULE`] on a schedule (`--rate`, `--rate-iops`).
pub const WINDOW_RULE_SCHEDULED: &str = "on a schedule (--rate): I/O k of a worker is due k intervals after the start and \
never issued before; its latency runs from when it was due to when it completed (so time spent behind a stall \
counts), its service time from its issue; an I/O counts in the window in which it completed; every worker shares \
one window that opens after the ramp and closes at one deadline";

fn one_second() -> f64 {
    1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    // A --bssplit write read back with another --seed: its reads land
    // inside the write's blocks, where no header is, and 1006 of them were
    // called lost writes; with only the sizes wrong (no good block), the
    // one --bs the first header named was advised.
    #[test]
    fn a_read_whose_sizes_are_not_the_write_s_calls_no_block_lost() {
        use crate::analysis::verify::Unwritten;
        use crate::measure::worker::VerifyTally;
        let t = VerifyTally {
            checked: 4,
            good: 2,
            unwritten: 1,
            unwritten_runs: vec![Unwritten {
                start: 4096,
                end: 8192,
                blocks: 1,
            }],
            other_size: 1,
            other_len: Some(12288),
            goods: vec![(0, 0, 1 << 16), (0, 8192, 1 << 16)],
            ..VerifyTally::default()
        };
        let d = VerifyDoc::from_tallies(std::iter::once(&t));
        assert_eq!((d.lost, d.unwritten), (0, 1), "{d:?}");
        assert!(
            d.stale_check.contains("not judged lost"),
            "{}",
            d.stale_check
        );
        // Without the header of another size, the same run is a lost write.
        let t = VerifyTally {
            other_size: 0,
            other_len: None,
            ..t
        };
        assert_eq!(VerifyDoc::from_tallies(std::iter::once(&t)).lost, 1);
        // No good block, headers of two sizes: a split write, not one --bs.
        let split = VerifyTally {
            checked: 2,
            other_size: 2,
            other_len: Some(4096),
            second_len: Some(12288),
            ..VerifyTally::default()
        };
        let d = VerifyDoc::from_tallies(std::iter::once(&split));
        assert_eq!((d.written_bs, d.written_split), (Some(4096), true));
    }

    fn iv(t: f64, bytes: u64, max_ns: Option<u64>) -> Interval {
        Interval {
            t,
            bytes,
            ios: 1,
            mean_ns: max_ns,
            p50_ns: max_ns,
            p99_ns: max_ns,
            max_ns,
        }
    }

    #[test]
    fn sub_second_intervals_sum_into_their_second() {
        let v: Vec<Interval> = (0..25)
            .map(|k| iv(k as f64 * 0.1, 10, (k % 2 == 0).then_some(k)))
            .collect();
        let s = per_second(&v, 100).unwrap();
        assert_eq!(s.iter().map(|i| i.t).collect::<Vec<_>>(), [0.0, 1.0, 2.0]);
        assert_eq!(
            s.iter().map(|i| i.bytes).collect::<Vec<_>>(),
            [100, 100, 50]
        );
        assert_eq!(s.iter().map(|i| i.ios).collect::<Vec<_>>(), [10, 10, 5]);
        // The highest of their max; percentiles do not add up: none.
        assert_eq!(s[1].max_ns, Some(18));
        assert_eq!((s[1].p50_ns, s[1].p99_ns), (None, None));
        // Seconds stay as they are.
        assert_eq!(per_second(&v, 1000).unwrap(), v);
    }

    #[test]
    fn intervals_that_do_not_divide_a_second_are_refused_with_the_way_out() {
        for ms in [300, 1500, 5000] {
            let e = per_second(&[], ms).unwrap_err();
            assert!(
                e.contains(&format!("{ms} ms")) && e.contains("--log-interval 1s"),
                "{e}"
            );
        }
    }

    #[test]
    fn whole_seconds_are_written_as_whole_numbers_and_others_as_they_are() {
        use crate::document::facts::{IntervalDef, Shape};
        let none = crate::analysis::histogram::IntervalLatency::default();
        let at = |k| {
            let i = Interval::at(k, 100_000_000, 0, 0, none);
            serde_json::to_string(&IntervalDef::doc(&i)).unwrap()
        };
        assert_eq!(at(3), r#"{"t":0.3,"bytes":0,"ios":0}"#);
        assert_eq!(at(10), r#"{"t":1,"bytes":0,"ios":0}"#);
        // Read back from either.
        let mut de = serde_json::Deserializer::from_str(r#"{"t":2,"bytes":1,"ios":1}"#);
        let i = IntervalDef::deserialize(&mut de).unwrap();
        assert_eq!((i.t, i.max_ns), (2.0, None));
    }
}
