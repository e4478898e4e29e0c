//! A validated run configuration ([`RunConfig`]), built from the command
//! line by `cli::validate`, and the effective options as the JSON records
//! them. No I/O happens here; checks that need the targets (block size
//! against the device, region against its size) are made by the layout.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::engine::EngineKind;

/// Smallest built-in test-bed file: enough for a few 1 MiB requests.
pub const MIN_TESTBED_SIZE: u64 = 1 << 20;
/// The shortest --duration taken: below it a window holds a handful of I/Os
/// and its rates (and CPU percentages) are noise.
pub const MIN_DURATION: Duration = Duration::from_millis(10);
/// "Until done" for `verify` and `--passes`: a year keeps the arithmetic in
/// range, and nothing is allocated from a duration.
pub const NO_TIME_LIMIT: Duration = Duration::from_secs(365 * 86400);

pub use crate::device::scratch::TestbedConfig;

/// A validated run configuration.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Targets named by the user; empty means the built-in test bed.
    pub targets: Vec<PathBuf>,
    /// `--members VOLUME`: the targets are the volume's leaf members.
    pub members: Option<PathBuf>,
    /// Every target the user named (a sweep point may drive fewer): a
    /// file's read-ahead is its file system's disk's, which is changed when
    /// that disk holds / only if one of these is that disk.
    pub named: Vec<PathBuf>,
    /// `--stripe CHUNK`: model a RAID0 over the targets.
    pub stripe: Option<u64>,
    /// `--align stripe`.
    pub align_stripe: bool,
    /// `--cached`: pre-read, then measure the page cache.
    pub cached: bool,
    /// `--drop-caches` instead of per-target eviction.
    pub drop_caches: bool,
    pub testbed: Option<TestbedConfig>,
    pub rw: RwMode,
    /// Read share in percent (only used by randrw).
    pub read_pct: u8,
    pub bs: BlockSizeArg,
    pub direct: bool,
    /// `--uncached`: buffered (direct is false) with RWF_DONTCACHE.
    pub uncached: bool,
    pub duration: Duration,
    pub ramp: Duration,
    pub readahead_kb: Option<u64>,
    /// `--stripe-cache-size`, `--group-thread-cnt`: md raid4/5/6's tunables
    /// set for the run.
    pub md_tunables: crate::device::md_tunables::MdTunables,
    pub engine: EngineKind,
    pub iodepth: usize,
    pub register: bool,
    /// io_uring: `--hipri`, `--sqpoll`, `--taskrun`.
    pub ring: crate::engine::RingSetup,
    /// `--nowait`: RWF_NOWAIT first on every I/O.
    pub nowait: bool,
    pub io_limit: Option<u64>,
    pub max_errors: u64,
    /// Testing only: worker 0 fails every I/O from this one on.
    pub debug_fail_from: Option<u64>,
    /// Testing only: worker 0 panics before it is ready.
    pub debug_die_in_setup: bool,
    /// Testing only (io_uring): worker 0's I/O never completes from this one on.
    pub debug_hang_from: Option<u64>,
    /// Testing only: the mock engine serves every I/O in this latency, on
    /// a virtual clock ([`crate::engine::mock`]).
    pub debug_mock_engine: Option<Duration>,
    /// `--hang-timeout`: how long a worker waits for a completion before it
    /// reports the I/O in flight as hung.
    pub hang_timeout: Duration,
    /// `--log-interval`: the length of each record of the document's
    /// per-worker `intervals` (10 ms to 1 h, whole milliseconds).
    pub log_interval: Duration,
    /// `--hugepages`: what the I/O buffers are mapped in.
    pub hugepages: crate::engine::buffer::HugePages,
    /// `--verify`: write self-describing blocks, or check them when reading.
    pub verify: bool,
    /// `--buffer-compress`: share of each written 4 KiB unit that is zeros.
    pub buffer_compress: u8,
    /// `--dedupe`: share of written 4 KiB units that repeat one another.
    pub dedupe: u8,
    /// `--passes`: each worker covers its slice this many times and stops
    /// (`stripebench verify`: once).
    pub passes: Option<u64>,
    /// When the run was configured (Unix ms): the base of verify generations.
    pub start_ms: u64,
    pub size: Option<u64>,
    pub offset: u64,
    pub jobs: usize,
    /// CPUs to pin to, round-robin; `None` = not pinned.
    pub cpus: Option<Vec<usize>>,
    pub seed: u64,
    pub allow_destructive: bool,
    /// `--allow-holes`: read a file whose region has holes or unwritten extents.
    pub allow_holes: bool,
    pub force_signature: bool,
    pub dry_run: bool,
    /// `--print-fio`: print the equivalent fio command line, no I/O.
    pub print_fio: bool,
    /// The live progress line on stderr (a terminal only). Where the
    /// documents go is not here: `output::Outputs` owns every destination.
    pub progress: bool,
    /// `--start-at`: when the workers are released.
    pub start_at: Option<std::time::SystemTime>,
    /// `--wait-lock`: wait for a device another run is changing.
    pub wait_lock: bool,
    /// `--force-memory`: allow buffers above a quarter of the available memory.
    pub force_memory: bool,
    /// `--rate`, `--rate-iops`: each worker issues on a fixed schedule.
    pub rate: Option<RateLimit>,
}

/// `--live-format` (its command-line names and help: `cli::values`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LiveFormat {
    /// One JSON object per line.
    #[default]
    Jsonl,
    /// A header line, then one comma-separated line per line of JSONL.
    Csv,
}

/// A worker's schedule (`--rate SIZE/s` or `--rate-iops N`): I/O k of a
/// worker is due k periods after the start, and its latency runs from then.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateLimit {
    /// `--rate`: bytes per second, per worker.
    BytesPerSec(f64),
    /// `--rate-iops`: I/Os per second, per worker.
    Iops(f64),
}

impl RateLimit {
    /// I/Os per second for a worker of block size `bs`.
    pub fn iops(self, bs: u64) -> f64 {
        match self {
            RateLimit::BytesPerSec(b) => b / bs as f64,
            RateLimit::Iops(n) => n,
        }
    }

    /// Nanoseconds from one I/O of `bs` bytes to the next, or why that
    /// schedule cannot be kept: below one I/O per second, or an interval
    /// below one nanosecond (what a duration can express).
    pub fn period_ns(self, bs: u64) -> Result<f64, String> {
        let iops = self.iops(bs);
        let asked = match self {
            RateLimit::BytesPerSec(b) => format!(
                "--rate {} with --bs {}",
                fmt_rate(b),
                crate::base::units::fmt_size_arg(bs)
            ),
            RateLimit::Iops(n) => format!("--rate-iops {n}"),
        };
        if iops.is_nan() || iops < 1.0 {
            return Err(format!(
                "{asked} is {iops:.3} I/Os per second, below one: give a rate of at least one request per second per worker"
            ));
        }
        if iops > 1e9 {
            return Err(format!(
                "{asked} is more than 10^9 I/Os per second: the interval between two I/Os would be below 1 ns; give a lower rate, or leave the rate out to go as fast as the device allows"
            ));
        }
        Ok(1e9 / iops)
    }

    /// The rate as typed back to a person: "50.0 MB/s" or "200 IOPS".
    pub fn label(self) -> String {
        match self {
            RateLimit::BytesPerSec(b) => fmt_rate(b),
            RateLimit::Iops(n) => format!("{n} IOPS"),
        }
    }
}

/// A byte rate with its unit: "52.4 MB/s".
fn fmt_rate(bytes_per_sec: f64) -> String {
    format!("{:.1} MB/s", bytes_per_sec / 1e6)
}

/// The effective options as recorded in the JSON document.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct ConfigDoc {
    pub rw: RwMode,
    pub read_pct: u8,
    /// The requested size in bytes, or "lbs"; each target records the size it used.
    pub bs: String,
    pub direct: bool,
    /// `--uncached`: buffered I/O with RWF_DONTCACHE (direct is false);
    /// absent when not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uncached: bool,
    /// read_ahead_kb set on the targets' devices for the run, if any.
    pub readahead_kb: Option<u64>,
    /// md/stripe_cache_size set on the targets' md raid4/5/6 arrays for
    /// the run; absent when left as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripe_cache_size: Option<u64>,
    /// md/group_thread_cnt set likewise; absent when left as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_thread_cnt: Option<u64>,
    pub engine: EngineKind,
    pub iodepth: usize,
    /// io_uring: whether buffers and the file were to be registered.
    pub register: bool,
    /// `--hipri`: polled completions (IORING_SETUP_IOPOLL); absent when not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hipri: bool,
    /// `--sqpoll`: a kernel submission thread per worker; absent when not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sqpoll: bool,
    /// `--sqpoll=CPU`: the CPU it was bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqpoll_cpu: Option<u32>,
    /// `--taskrun` as asked (plain, coop, defer); absent when auto.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taskrun: Option<crate::engine::TaskRun>,
    /// `--nowait`: RWF_NOWAIT first; absent when not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nowait: bool,
    /// `--complete-min N` as asked; absent when auto (each worker's
    /// `ring.complete_min` says what it got).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_min: Option<u32>,
    /// `--sched` as asked (normal, batch); absent when auto (each worker's
    /// `ring.sched` says what it got).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched: Option<crate::engine::Sched>,
    /// Bytes each worker stopped after, when size-bounded.
    pub io_limit: Option<u64>,
    /// `--passes` (`verify`: 1): how many times each worker covered its slice.
    #[serde(default)]
    pub passes: Option<u64>,
    /// I/O errors after which a worker stops.
    pub max_errors: u64,
    /// `--hang-timeout`: how long a worker waits with nothing completing
    /// (the sync engine: how long after the deadline a call may still hold
    /// it) before its I/O in flight is reported as hung.
    #[serde(default)]
    pub hang_timeout_sec: Option<f64>,
    /// `--log-interval` in ms: the length of each `workers[].intervals`
    /// record; absent in documents written before it (1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_interval_ms: Option<u64>,
    /// Self-describing blocks written, or checked.
    pub verify: bool,
    /// `--buffer-compress`: the share (percent) of each written 4 KiB unit that is zeros.
    #[serde(default)]
    pub buffer_compress_pct: u8,
    /// `--dedupe`: the share (percent) of written 4 KiB units that repeat one another.
    #[serde(default)]
    pub dedupe_pct: u8,
    /// `--stripe`: the chunk of the modelled RAID0.
    pub stripe_chunk: Option<u64>,
    /// `--start-at`, Unix seconds: the instant the workers were released.
    #[serde(default)]
    pub start_at_unix_sec: Option<f64>,
    pub duration_sec: f64,
    pub ramp_sec: f64,
    pub size: Option<u64>,
    pub offset: u64,
    pub jobs: usize,
    pub cpus: Option<Vec<usize>>,
    pub pin: bool,
    pub seed: u64,
    /// The seed as text: JSON readers that hold numbers as doubles lose
    /// seeds above 2^53, and a seed must reproduce exactly.
    #[serde(default)]
    pub seed_str: String,
    pub allow_destructive: bool,
    pub targets: Vec<String>,
    pub testbed: bool,
    /// `--rate` / `--rate-iops`: each worker's schedule, `{"bytes_per_sec": B}`
    /// or `{"iops": N}`; absent when the workers go as fast as they can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateLimit>,
}

impl RunConfig {
    pub fn doc(&self, targets: &[String]) -> ConfigDoc {
        ConfigDoc {
            rw: self.rw,
            read_pct: self.read_pct,
            bs: match self.bs {
                BlockSizeArg::Bytes(n) => n.to_string(),
                BlockSizeArg::Logical => "lbs".into(),
            },
            direct: self.direct,
            uncached: self.uncached,
            readahead_kb: self.readahead_kb,
            stripe_cache_size: self.md_tunables.stripe_cache_size,
            group_thread_cnt: self.md_tunables.group_thread_cnt,
            engine: self.engine,
            iodepth: self.iodepth,
            register: self.engine == EngineKind::Uring && self.register,
            hipri: self.ring.iopoll,
            sqpoll: self.ring.sqpoll,
            sqpoll_cpu: self.ring.sqpoll_cpu,
            taskrun: (self.ring.taskrun != crate::engine::TaskRun::Auto)
                .then_some(self.ring.taskrun),
            nowait: self.nowait,
            complete_min: match self.ring.complete_min {
                crate::engine::CompleteMin::Fixed(n) => Some(n),
                crate::engine::CompleteMin::Auto => None,
            },
            sched: (self.ring.sched != crate::engine::Sched::Auto).then_some(self.ring.sched),
            io_limit: self.io_limit,
            passes: self.passes,
            max_errors: self.max_errors,
            hang_timeout_sec: Some(self.hang_timeout.as_secs_f64()),
            log_interval_ms: Some(self.log_interval.as_millis() as u64),
            verify: self.verify,
            buffer_compress_pct: self.buffer_compress,
            dedupe_pct: self.dedupe,
            stripe_chunk: self.stripe,
            start_at_unix_sec: self
                .start_at
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs_f64()),
            duration_sec: self.duration.as_secs_f64(),
            ramp_sec: self.ramp.as_secs_f64(),
            size: self.size,
            offset: self.offset,
            jobs: self.jobs,
            cpus: self.cpus.clone(),
            pin: self.cpus.is_some(),
            seed: self.seed,
            seed_str: self.seed.to_string(),
            allow_destructive: self.allow_destructive,
            targets: targets.to_vec(),
            testbed: self.testbed.is_some(),
            rate: self.rate,
        }
    }
}

/// What each I/O does, and in which order (`--rw`; its command-line names
/// and help: `cli::values`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    /// Sequential reads.
    Read,
    /// Sequential writes (destroys data on the target).
    Write,
    /// Random reads.
    Randread,
    /// Random writes (destroys data on the target).
    Randwrite,
    /// Random reads and writes; --mix sets the read share.
    Randrw,
}

impl RwMode {
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::Randread | RwMode::Randwrite | RwMode::Randrw)
    }

    pub fn writes(self) -> bool {
        matches!(self, RwMode::Write | RwMode::Randwrite | RwMode::Randrw)
    }

    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::Randread => "randread",
            RwMode::Randwrite => "randwrite",
            RwMode::Randrw => "randrw",
        }
    }
}

/// `--bs`: a size, or `lbs` for each target's logical block size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockSizeArg {
    Bytes(u64),
    Logical,
}
