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

/// `--ignore-errors` (fio's continue_on_error= and ignore_error=): the
/// errnos an I/O of each direction may fail with and its worker go on.
/// Such a failure is counted apart (`ignored_errors`), not toward
/// `--max-errors`, and does not fail the run; any other still does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IgnoredErrors {
    pub read: Vec<i32>,
    pub write: Vec<i32>,
}

impl IgnoredErrors {
    pub fn is_empty(&self) -> bool {
        self.read.is_empty() && self.write.is_empty()
    }

    /// Whether an I/O of `op` that failed with `errno` is to be ignored.
    pub fn ignores(&self, op: crate::base::io::Op, errno: i32) -> bool {
        match op {
            crate::base::io::Op::Read => self.read.contains(&errno),
            // fio files a trim's error under write (td_error_type).
            crate::base::io::Op::Write | crate::base::io::Op::Trim => self.write.contains(&errno),
        }
    }

    /// `read=EIO:EILSEQ,write=ENOSPC`: each direction given at most once,
    /// each errno by its name or number.
    pub fn parse(text: &str) -> Result<IgnoredErrors, String> {
        let mut out = IgnoredErrors::default();
        for part in text.split(',').map(str::trim) {
            let Some((dir, list)) = part.split_once('=') else {
                return Err(format!("`{part}` is not DIRECTION=ERRNO[:ERRNO...]: give e.g. write=ENOSPC or read=EIO:EILSEQ"));
            };
            let into = match dir.trim() {
                "read" => &mut out.read,
                "write" => &mut out.write,
                other => return Err(format!("`{other}` is not a direction: give read or write")),
            };
            if !into.is_empty() {
                return Err(format!(
                    "`{dir}` is given twice: give each direction once, its errnos joined by `:`"
                ));
            }
            for e in list.split(':').map(str::trim) {
                let errno = errno_of(e).ok_or_else(|| {
                    format!("`{e}` is not an errno: give its name (ENOSPC) or its number (28)")
                })?;
                if !into.contains(&errno) {
                    into.push(errno);
                }
            }
        }
        Ok(out)
    }

    /// fio's ignore_error=READ,WRITE,VERIFY for the same lists: a list
    /// given turns its type on (no continue_on_error= needed), and EILSEQ
    /// is only ever the verify type's in fio (td_error.c).
    pub fn fio_text(&self) -> String {
        let eilseq = nix::libc::EILSEQ;
        let list = |v: &[i32]| {
            v.iter()
                .filter(|&&n| n != eilseq)
                .map(|&n| crate::base::io::errno_name(n))
                .collect::<Vec<_>>()
                .join(":")
        };
        let verify = if self.read.contains(&eilseq) || self.write.contains(&eilseq) {
            ",EILSEQ"
        } else {
            ""
        };
        format!("{},{}{verify}", list(&self.read), list(&self.write))
    }

    /// The same as `parse` reads it.
    pub fn text(&self) -> String {
        let names = |v: &[i32]| {
            v.iter()
                .map(|&e| crate::base::io::errno_name(e))
                .collect::<Vec<_>>()
                .join(":")
        };
        [("read", &self.read), ("write", &self.write)]
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(d, v)| format!("{d}={}", names(v)))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// An errno by its name (`ENOSPC`) or its number (1 to 4095).
pub fn errno_of(text: &str) -> Option<i32> {
    if let Ok(n) = text.parse::<i32>() {
        return (1..4096).contains(&n).then_some(n);
    }
    // The names nix knows, as errno_name writes them.
    (1..200).find(|&n| text.starts_with('E') && crate::base::io::errno_name(n) == text)
}

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
    /// `--ios`: each worker stops after this many I/Os (fio's number_ios),
    /// or at its other bound, whichever first.
    pub ios: Option<u64>,
    pub max_errors: u64,
    /// `--ignore-errors`: the errnos an I/O may fail with, per direction,
    /// and its worker go on.
    pub ignore_errors: IgnoredErrors,
    /// `--fill-device`: write until no space is left; on a file, from
    /// --offset until its file system says ENOSPC (fio's fill_device=1).
    pub fill: bool,
    /// Testing only: worker 0 fails every I/O from this one on.
    pub debug_fail_from: Option<u64>,
    /// Testing only: worker 0's Nth write goes out with a byte flipped.
    pub debug_corrupt_write: Option<u64>,
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
    /// `--pattern`: what every written block holds (and, with `verify`,
    /// what every block read is checked to hold).
    pub pattern: Option<std::sync::Arc<crate::base::pattern::Pattern>>,
    /// `--dedupe-working-set`, `--dedupe-global`: what the repeats copy.
    pub dedupe_set: Option<DedupeSet>,
    /// `--passes`: each worker covers its slice this many times and stops
    /// (`stripebench verify`: once).
    pub passes: Option<u64>,
    /// When the run was configured (Unix ms): the base of verify generations.
    pub start_ms: u64,
    pub size: Option<u64>,
    pub offset: u64,
    pub jobs: usize,
    /// `--jobs-share`: each job covers the whole region (fio's numjobs
    /// clones), not a slice of its own.
    pub jobs_share: bool,
    /// fio's random_distribution and rw= offset modifiers (`--dist`,
    /// `--skip`, `--seq-run`).
    pub access: crate::measure::workload::Access,
    /// `--offset-increment`: job k's region starts k times this after
    /// --offset (fio's offset_increment).
    pub offset_increment: Option<u64>,
    /// CPUs to pin to, round-robin; `None` = not pinned.
    pub cpus: Option<Vec<usize>>,
    /// `--numa-nodes`: the nodes whose CPUs the workers run on (their
    /// CPUs are in `thread.numa_cpus`).
    pub numa_nodes: Option<Vec<usize>>,
    /// `--numa-nodes`, `--numa-mem`, `--ioprio`: what each worker thread
    /// sets on itself before it builds its engine.
    pub thread: crate::base::thread_setup::ThreadSetup,
    /// `--cmdprio`: the share of I/Os issued at another priority.
    pub cmdprio: Option<crate::base::thread_setup::CmdPrio>,
    /// `--cmdprio-bssplit`: each size's share of I/Os at other priorities.
    pub cmdprio_split: Option<crate::base::thread_setup::CmdPrioSplit>,
    pub seed: u64,
    pub allow_destructive: bool,
    /// `--create SIZE`: the targets that do not exist are made, this size.
    pub create: Option<u64>,
    /// `--create-layout`: how such a file is laid out.
    pub create_layout: crate::device::scratch::CreateLayout,
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
    /// `--start-delay`: how long the workers wait, ready, before they
    /// start (drawn from its range, if one was given).
    pub start_delay: Duration,
    /// `--wait-lock`: wait for a device another run is changing.
    pub wait_lock: bool,
    /// `--force-memory`: allow buffers above a quarter of the available memory.
    pub force_memory: bool,
    /// `--rate`, `--rate-iops`: each worker issues on a fixed schedule.
    pub rate: Option<RateLimit>,
    /// `--steady`: the window ends once the run is steady.
    pub steady: Option<SteadyConfig>,
    /// `--rate-min`/`--rate-iops-min`: the window ends, failed, when a
    /// worker's cycle falls below it.
    pub rate_min: Option<RateMinConfig>,
    /// A fio job file's exitall=1: what this run's end stops of the runs
    /// at once with it (and after it), and its reporting group.
    pub exitall: Option<crate::measure::together::Exitall>,
    /// `--thinktime`: each worker pauses between its I/Os.
    pub think: Option<Think>,
    /// `--latency-target`: each worker searches for the deepest queue
    /// (1 to --iodepth) whose windows meet it (fio's latency_target=).
    pub latency_search: Option<crate::analysis::qd_search::Target>,
    /// The run starts together with others (fio's jobs of one group that
    /// differ, each a run): its window opens when all of theirs are ready.
    pub together: Option<crate::measure::together::Together>,
    /// `--iolog-write`: fio's iolog of every I/O issued, written here.
    pub iolog_write: Option<PathBuf>,
    /// `--fio-log-format each`: each worker keeps a record of every I/O
    /// completed in the window, for fio's per-I/O log lines.
    pub io_lines: bool,
    /// `--iolog-read`: the log each worker replays (read and checked).
    pub replay: Option<std::sync::Arc<crate::measure::iolog::Replay>>,
}

/// `--steady`, `--steady-dur`, `--steady-ramp`, judged every
/// `--live-interval`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyConfig {
    pub criterion: crate::analysis::steady::Criterion,
    pub dur: Duration,
    pub ramp: Duration,
    pub interval: Duration,
}

impl SteadyConfig {
    /// The intervals in the rolling window (fio: ss_dur / ss_interval).
    pub fn intervals(&self) -> usize {
        (self.dur.as_nanos() / self.interval.as_nanos().max(1)) as usize
    }
}

/// `--rate-min SIZE/s` or `--rate-iops-min N`, over `--rate-cycle`,
/// judged on each worker's `--live-interval` figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateMinConfig {
    pub min: crate::analysis::rate_min::Minimum,
    pub cycle: Duration,
    pub interval: Duration,
}

/// `--thinktime` and its companions, fio's thinktime= family: after
/// every `blocks` I/Os (issued, or completed), the worker waits for all
/// it has in flight, spins for `spin`, then sleeps for the rest of
/// `time` (backend.c `handle_thinktime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Think {
    pub time: Duration,
    pub spin: Duration,
    pub blocks: u64,
    /// Counted as they are issued (fio's thinktime_blocks_type=issue),
    /// else as they complete (its default).
    pub on_issue: bool,
}

/// `--live-format` (its command-line names and help: `cli::values`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LiveFormat {
    /// One JSON object per line.
    #[default]
    Jsonl,
    /// A header line, then one comma-separated line per line of JSONL.
    Csv,
}

/// The sparsest schedule: one I/O a minute per worker.
const MIN_IOPS: f64 = 1.0 / 60.0;

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
    /// schedule cannot be kept: below one I/O a minute (fio's jobs go as
    /// low as one every few seconds: examples/1mbs_clients.fio's 1250 B/s
    /// of 4 KiB blocks), or an interval below one nanosecond (what a
    /// duration can express).
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
        if iops.is_nan() || iops < MIN_IOPS {
            return Err(format!(
                "{asked} is {iops:.3} I/Os per second, below one a minute: give a rate of at least one request per minute per worker"
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
    /// Sequential reads and writes (fio's rw=readwrite); --mix sets the
    /// read share. Each direction goes through the region in order from
    /// its start, apart from the other, as fio keeps a position per
    /// direction.
    Rw,
    /// Sequential trims (fio's rw=trim): BLKDISCARD on a block device, a
    /// punched hole on a file (destroys data on the target).
    Trim,
    /// Random trims (fio's rw=randtrim).
    Randtrim,
}

impl RwMode {
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::Randread | RwMode::Randwrite | RwMode::Randrw | RwMode::Randtrim
        )
    }

    /// Whether it changes what the target holds: writes, and trims (which
    /// destroy data as writes do, so the write guard's rules hold for them).
    pub fn writes(self) -> bool {
        matches!(
            self,
            RwMode::Write
                | RwMode::Randwrite
                | RwMode::Randrw
                | RwMode::Rw
                | RwMode::Trim
                | RwMode::Randtrim
        )
    }

    /// Whether it writes data (a trim writes none: no page cache to flush).
    pub fn writes_data(self) -> bool {
        self.writes() && !self.trims()
    }

    /// Whether it reads.
    pub fn reads(self) -> bool {
        matches!(
            self,
            RwMode::Read | RwMode::Randread | RwMode::Randrw | RwMode::Rw
        )
    }

    /// Whether its I/Os are trims: the worker's writes become trims.
    pub fn trims(self) -> bool {
        matches!(self, RwMode::Trim | RwMode::Randtrim)
    }

    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::Randread => "randread",
            RwMode::Randwrite => "randwrite",
            RwMode::Randrw => "randrw",
            RwMode::Rw => "rw",
            RwMode::Trim => "trim",
            RwMode::Randtrim => "randtrim",
        }
    }
}

/// `--bs`: a size, or `lbs` for each target's logical block size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockSizeArg {
    Bytes(u64),
    Logical,
}

/// fio's dedupe_mode=working_set: the repeated units copy the first unique
/// units written, `pct`% of each worker's region of them; `global`: one set
/// over all the workers (fio's dedupe_global).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DedupeSet {
    pub pct: u8,
    pub global: bool,
}
