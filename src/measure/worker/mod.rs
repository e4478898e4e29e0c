//! One worker: a thread pinned to one CPU that drives one slice of one target
//! through an engine. The hot loop holds only the I/O, two clock reads, a
//! histogram record, a few counters and, before a write, a 40-byte stamp per
//! 4 KiB of the block and one XOR pass over it ([`crate::engine::writedata`]):
//! no allocation (past ten
//! minutes of intervals), no lock, no syscall beyond the I/O and
//! the (vDSO) clock, except the CPU-time samples as the window opens and
//! closes. Each latency also goes into the `--log-interval` interval's own
//! histogram, whose p50/p99/max are read (a walk of its buckets, no
//! allocation) and which is emptied as the interval ends. With `--live` or `--metrics`, each latency is also recorded in
//! the second's own histogram, and once a second the worker hands that
//! second off ([`crate::measure::live`]: one `try_recv`, one `try_send`).
//!
//! Timing rule: one monotonic timestamp when the I/O is queued (with the sync
//! engine that is just before the pread/pwrite; with io_uring, just before it
//! goes into the submission ring, which is entered once per batch) and one
//! when its completion is reaped, taken for each completion on its own. An
//! I/O counts in the window in which it *completed*: from the end of the ramp
//! up to the common deadline. An I/O that completes after the deadline is
//! not counted; it (or a failure after the deadline) stops the worker, which
//! then waits for whatever is still in flight: with io_uring, until nothing
//! has completed for `--hang-timeout`, when the I/O left in flight is
//! reported as hung and the engine abandoned (its buffers leaked, never
//! freed). A sync worker cannot stop waiting for its pread/pwrite: the
//! coordinator stops waiting for it instead, `--hang-timeout` after the
//! deadline, and takes over what it counted ([`claimed`]; the sync engine
//! adds one store and one swap around each call for this,
//! [`crate::engine::watch`]).

mod hot;
mod prio;
mod qd;

pub use hot::{claimed, run};
pub use qd::{SearchOutcome, WindowRecord};

use crossbeam_channel::Sender;

use crate::analysis::histogram::{IntervalLatency, LatencyHistogram};
use crate::analysis::verify::{
    check_block, check_recorded, BadBlock, BadKind, Extent, Found, Unwritten,
};
use crate::measure::workload::{Op, Region, StripeMap};

/// What one worker does.
#[derive(Debug, Clone)]
pub struct WorkerSpec {
    pub id: usize,
    pub target_index: usize,
    /// Index of this worker among its target's workers.
    pub job: usize,
    pub region: Region,
    pub bs: u64,
    pub random: bool,
    pub read_pct: u8,
    /// fio's distribution and offset modifiers.
    pub access: crate::measure::workload::Access,
    pub seed: u64,
    /// CPU to pin to, if pinning.
    pub cpu: Option<usize>,
    /// `--cmdprio`: the share of this worker's I/Os issued at another
    /// priority, chosen by its own generator.
    pub cmdprio: Option<crate::base::thread_setup::CmdPrio>,
    /// `--cmdprio-bssplit`: each size's share of I/Os at other
    /// priorities, and the one every other I/O carries (the thread's
    /// `--ioprio` value; 0, none set).
    pub cmdprio_split: Option<crate::base::thread_setup::CmdPrioSplit>,
    pub default_prio: u16,
    /// Buffer alignment (at least the target's O_DIRECT alignment).
    pub align: usize,
    /// Stop after issuing this many bytes (`--io-limit`).
    pub io_limit: Option<u64>,
    /// Stop after this many I/O errors (`--max-errors`).
    pub max_errors: u64,
    /// `--ignore-errors`: failures counted apart, the worker going on.
    pub ignore_errors: crate::measure::config::IgnoredErrors,
    /// `--fill-device`: a write that fails for want of space (ENOSPC,
    /// EDQUOT) ends the worker as its limit, not as an error: fio's
    /// fill_device=1, whose write that hit the end is no error either.
    pub fill: bool,
    /// Self-describing blocks (`--verify`).
    pub verify: VerifyMode,
    /// `--dedupe`: share of written 4 KiB units that repeat one another.
    pub dedupe_pct: u8,
    /// `--pattern`: what every block written holds, and with
    /// [`VerifyMode::Read`] what every block read is checked to hold.
    pub pattern: Option<std::sync::Arc<crate::base::pattern::Pattern>>,
    /// `--dedupe-working-set`: this worker's share of the set its repeats
    /// copy (set by the layout once every worker's region is known).
    pub dedupe_set: Option<crate::engine::writedata::WorkingSet>,
    /// `--stripe`: this worker serves one member of a modelled RAID0.
    pub stripe: Option<StripeSpec>,
    pub ramp_ns: u64,
    /// `--log-interval` in ns: the length of each record of `intervals`.
    pub log_ns: u64,
    /// `--rate`, `--rate-iops`: nanoseconds from one I/O's due time to the
    /// next (I/O k is due k periods after the start); `None`: as fast as
    /// the target allows.
    pub rate_period_ns: Option<f64>,
    /// `--thinktime`: the pause between its I/Os.
    pub think: Option<crate::measure::config::Think>,
    /// What the worker does to its region's pages each time it wraps
    /// around the region.
    pub on_wrap: OnWrap,
    /// `--rw trim`/`randtrim`: each write the order draws is a trim of
    /// the same range instead (no data is written).
    pub trim: bool,
    /// `--iolog-write`: the records this worker's log holds at most; 0,
    /// no log (nothing recorded).
    pub iolog_cap: usize,
    /// `--fio-log-format each`: the I/O records this worker keeps at most;
    /// 0, none kept.
    pub io_lines_cap: usize,
    /// `--iolog-read`: the log whose I/Os this worker issues, in order.
    pub replay: Option<std::sync::Arc<crate::measure::iolog::Replay>>,
    /// `--sprandom`: the model its offsets walk (the plan's, for this
    /// worker's region).
    pub sprandom: Option<crate::analysis::sprandom::SprModel>,
    /// `--latency-target`: the most it keeps in flight is searched for,
    /// from 1 up to its depth, window by window.
    pub latency: Option<crate::analysis::qd_search::Target>,
}

/// What a worker does to its region's pages at a wrap-around.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnWrap {
    /// Nothing: O_DIRECT, `--cached`, a random pattern or a mix.
    Keep,
    /// A buffered sequential read (not `--cached`): drop the region from
    /// the page cache, so the next pass reads the device, not memory.
    Evict,
    /// A buffered sequential write: write the region's dirty pages to the
    /// device, wait for them and drop them, so every pass's bytes reach
    /// the device (not only the last pass's).
    Flush,
}

/// One member's place in a modelled RAID0 (`--stripe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StripeSpec {
    pub map: StripeMap,
    pub member: u64,
    /// The logical request size; the worker's own `bs` is min(logical_bs, chunk).
    pub logical_bs: u64,
}

/// What `--verify` asks of a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VerifyMode {
    #[default]
    Off,
    /// Write self-describing blocks; generations start from this run's start (Unix ms).
    Write { start_ms: u64 },
    /// Check every block read.
    Read,
    /// A random mix (fio's randrw with verify= and do_verify=1): each pass
    /// (every block once, read or written) is followed by the read-back
    /// of the blocks that pass wrote, kept in a bitmap, each checked.
    Mix { start_ms: u64 },
}

/// Most blocks a verified random mix's record covers: one bit each, so
/// the bitmap is 32 MiB at most, allocated before the first I/O.
pub const MIX_RECORD_MAX_BLOCKS: u64 = 1 << 28;

/// Intervals reserved before the run: ten minutes of them, at most this
/// many (ten minutes of 100 ms ones).
pub const INTERVALS_RESERVED: usize = 6000;

/// Most good blocks a worker remembers for the stale check (24 bytes each).
pub const VERIFY_TRACK_MAX: usize = 4 << 20;
/// Most ranges of writes (one per write and writer) a worker keeps for
/// the stale check.
pub const VERIFY_CLAIMS_MAX: usize = 256;
/// Most bad blocks a worker lists one by one.
pub const VERIFY_LIST_MAX: usize = 1000;

/// What a verifying reader found.
#[derive(Debug, Clone, Default)]
pub struct VerifyTally {
    pub checked: u64,
    pub good: u64,
    pub corrupt: u64,
    pub misplaced: u64,
    pub unwritten: u64,
    /// The unwritten blocks as runs of consecutive blocks (for the lost-write check).
    pub unwritten_runs: Vec<Unwritten>,
    /// More runs than VERIFY_TRACK_MAX: the lost-write check covers the first ones.
    pub unwritten_truncated: bool,
    pub other_size: u64,
    pub bad: Vec<BadBlock>,
    /// Good blocks as (writer, offset, generation), for the stale check.
    pub goods: Vec<(u32, u64, u64)>,
    /// More good blocks than VERIFY_TRACK_MAX: the stale check covers the first ones.
    pub goods_truncated: bool,
    /// The ranges the writes of the good blocks cover, as (run start in
    /// Unix ms, writer, range), one per write and writer (the widest seen).
    pub claims: Vec<(u64, u32, Extent)>,
    /// More writes than VERIFY_CLAIMS_MAX: the others' ranges are not known.
    pub claims_truncated: bool,
    /// The block length the first header of another size named.
    pub other_len: Option<u32>,
    /// The first other length after that one: the write drew several
    /// sizes (a --bssplit), so no one --bs reads it back.
    pub second_len: Option<u32>,
    /// A verified random mix's read-back: blocks it wrote and found
    /// holding an older write, or none (its record says they were written).
    pub stale: u64,
    pub lost: u64,
}

impl VerifyTally {
    /// The tally of a worker that verifies what it reads, its tables
    /// reserved before the first I/O: one entry per I/O the worker issues
    /// in one bound ([`verify_table_entries`]). Its good blocks and its runs
    /// of unwritten blocks then never grow in the window (a duration-bound
    /// read that wraps around its region reads the blocks again, past the
    /// bound, and only then do they grow). Reserved, not touched: the pages
    /// are the kernel's to hand out as the entries fill them.
    pub fn reserved(spec: &WorkerSpec) -> Result<VerifyTally, String> {
        let n = verify_table_entries(spec) as usize;
        let mut t = VerifyTally::default();
        let fail = |e: std::collections::TryReserveError| {
            format!(
                "worker {}: cannot reserve the table of the blocks --verify reads ({}): {e}",
                spec.id,
                crate::base::units::fmt_bytes(verify_table_bytes(spec))
            )
        };
        t.goods.try_reserve_exact(n).map_err(fail)?;
        t.unwritten_runs.try_reserve_exact(n).map_err(fail)?;
        t.bad.try_reserve_exact(VERIFY_LIST_MAX).map_err(fail)?;
        if n > 0 {
            t.claims
                .try_reserve_exact(VERIFY_CLAIMS_MAX)
                .map_err(fail)?;
        }
        Ok(t)
    }

    /// Checks a block read against `--pattern` (fio's verify=pattern): it
    /// holds the pattern or it is corrupt. Such blocks name no writer, so
    /// they take no part in the stale and lost checks.
    fn note_pattern(&mut self, p: &crate::base::pattern::Pattern, block: &[u8], offset: u64) {
        self.checked += 1;
        if p.matches(block, offset) {
            self.good += 1;
            return;
        }
        self.corrupt += 1;
        if self.bad.len() < VERIFY_LIST_MAX {
            // Only for the bad blocks kept as samples: one copy each.
            let mut want = vec![0u8; block.len()];
            p.fill(&mut want, offset);
            let at = want
                .iter()
                .zip(block)
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            self.bad.push(BadBlock {
                offset,
                kind: BadKind::Corrupt,
                detail: format!(
                    "does not hold the pattern {}: first differs at byte {at}",
                    p.text()
                ),
                member: None,
                member_offset: None,
            });
        }
    }

    /// A block a verified random mix wrote in this pass, read back: good
    /// only if it holds that write (`worker`'s, generation `gen`).
    pub(crate) fn note_recorded(&mut self, block: &[u8], offset: u64, worker: u32, gen: u64) {
        self.checked += 1;
        let Some((kind, detail)) = check_recorded(block, offset, worker, gen) else {
            self.good += 1;
            return;
        };
        match kind {
            BadKind::Corrupt => self.corrupt += 1,
            BadKind::Misplaced => self.misplaced += 1,
            BadKind::Stale => self.stale += 1,
            BadKind::Lost => self.lost += 1,
        }
        if self.bad.len() < VERIFY_LIST_MAX {
            self.bad.push(BadBlock {
                offset,
                kind,
                detail,
                member: None,
                member_offset: None,
            });
        }
    }

    fn note(&mut self, block: &[u8], offset: u64) {
        self.checked += 1;
        let found = check_block(block, offset);
        let bad = match found {
            Found::Good {
                worker,
                gen,
                extent,
            } => {
                self.good += 1;
                if self.goods.len() < VERIFY_TRACK_MAX {
                    self.goods.push((worker, offset, gen));
                } else {
                    self.goods_truncated = true;
                }
                self.claim(gen >> 16, worker, extent);
                return;
            }
            Found::Corrupt => {
                self.corrupt += 1;
                BadKind::Corrupt
            }
            Found::Misplaced { .. } => {
                self.misplaced += 1;
                BadKind::Misplaced
            }
            Found::OtherSize { len } => {
                self.other_size += 1;
                if *self.other_len.get_or_insert(len) != len {
                    self.second_len.get_or_insert(len);
                }
                BadKind::Corrupt
            }
            Found::Unwritten => {
                self.unwritten += 1;
                let end = offset + block.len() as u64;
                let full = self.unwritten_runs.len() >= VERIFY_TRACK_MAX;
                match self.unwritten_runs.last_mut() {
                    Some(r) if r.end == offset => {
                        r.end = end;
                        r.blocks += 1;
                    }
                    _ if full => self.unwritten_truncated = true,
                    _ => self.unwritten_runs.push(Unwritten {
                        start: offset,
                        end,
                        blocks: 1,
                    }),
                }
                return;
            }
        };
        // Past the sample cap a bad block is only counted: its detail is
        // formatted (a String) for the samples kept, never for the others.
        if self.bad.len() >= VERIFY_LIST_MAX {
            return;
        }
        let detail = match found {
            Found::Misplaced { written_for } => {
                format!("holds the block written for offset {written_for}")
            }
            Found::OtherSize { len } => {
                format!("a header for a {len}-byte block: verify with the --bs it was written with (or its --bssplit and --seed)")
            }
            _ => "checksum mismatch".into(),
        };
        self.bad.push(BadBlock {
            offset,
            kind: bad,
            detail,
            member: None,
            member_offset: None,
        });
    }
}

impl VerifyTally {
    /// Notes the range a good block's write covers: the widest of those its
    /// blocks name (a duration-bound write's first pass claims as far as it
    /// got, and each block goes further).
    fn claim(&mut self, run: u64, worker: u32, e: Extent) {
        if let Some((_, _, have)) = self
            .claims
            .iter_mut()
            .find(|(r, w, _)| *r == run && *w == worker)
        {
            have.start = have.start.min(e.start);
            have.end = have.end.max(e.end);
        } else if self.claims.len() < VERIFY_CLAIMS_MAX {
            self.claims.push((run, worker, e));
        } else {
            self.claims_truncated = true;
        }
    }
}

/// Entries a verifying worker's tables are reserved for: one per I/O it
/// issues in one bound (`--io-limit`, `--passes`, verify's one pass; else
/// one pass over its region), at most [`VERIFY_TRACK_MAX`]. 0 for a worker
/// that does not verify what it reads.
pub fn verify_table_entries(spec: &WorkerSpec) -> u64 {
    let bs = smallest_io(spec);
    if spec.verify != VerifyMode::Read || bs == 0 {
        return 0;
    }
    let ios = match spec.io_limit {
        Some(l) => l.div_ceil(bs),
        None => spec.region.length / bs,
    };
    ios.min(VERIFY_TRACK_MAX as u64)
}

/// The smallest I/O a worker issues: `--bssplit`'s smallest size, else
/// its one size. Counting I/Os by it bounds how many a byte budget makes.
fn smallest_io(spec: &WorkerSpec) -> u64 {
    spec.access.sizes.as_ref().map_or(spec.bs, |s| s.min())
}

/// Bytes of memory a verifying worker's tables can come to fill: an I/O
/// adds at most one entry (24 bytes) to one of its two tables (a good
/// block, or a new run of unwritten ones), each table at most
/// [`VERIFY_TRACK_MAX`] entries.
pub fn verify_table_bytes(spec: &WorkerSpec) -> u64 {
    let bs = smallest_io(spec);
    let ios = match spec.io_limit {
        Some(l) if bs > 0 => l.div_ceil(bs),
        _ => spec.region.length / bs.max(1),
    };
    let entries = if verify_table_entries(spec) == 0 {
        0
    } else {
        ios.min(2 * VERIFY_TRACK_MAX as u64)
    };
    entries * std::mem::size_of::<(u32, u64, u64)>() as u64
}

/// One interval of a worker's window (`--log-interval`, 1 s by default;
/// the last one may be shorter): its I/O and its own latencies.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Interval {
    /// Where it starts, seconds since the window opened: written whole
    /// (`3`) when it is, fractional (`0.3`) for sub-second intervals.
    pub t: f64,
    pub bytes: u64,
    pub ios: u64,
    /// The interval's own mean (what fio's windowed latency log writes),
    /// p50, p99 and max latency (ns): absent when nothing completed in
    /// it, and in documents written before them.
    pub mean_ns: Option<u64>,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub max_ns: Option<u64>,
}

impl Interval {
    /// Interval `k` of `len_ns` nanoseconds: where it starts, in whole
    /// nanoseconds (0.3, not 0.30000000000000004), with its I/O and latencies.
    pub fn at(k: u64, len_ns: u64, bytes: u64, ios: u64, lat: IntervalLatency) -> Interval {
        Interval {
            t: k.saturating_mul(len_ns) as f64 / 1e9,
            bytes,
            ios,
            mean_ns: lat.mean_ns,
            p50_ns: lat.p50_ns,
            p99_ns: lat.p99_ns,
            max_ns: lat.max_ns,
        }
    }
}

/// What stopped a worker.
/// Written `duration`, `limit`, `errors` (`document::facts::EndingDef`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ending {
    /// The window's deadline (`--duration`, or an interrupt that lowered it).
    #[default]
    Deadline,
    /// Its byte limit (`--io-limit`, `--passes`, verify's one pass), or
    /// the end of `--sprandom`'s walk, before the deadline.
    Limit,
    /// `--max-errors`, or the engine failed.
    Errors,
}

/// How many errors to keep with their offsets, per worker.
pub const ERROR_SAMPLES: usize = 8;

/// Errors of one errno.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrnoCount {
    pub errno: i32,
    /// Symbolic name (`EIO`), or `EOF` for an unexpected end of file.
    pub name: String,
    pub count: u64,
}

/// One I/O error, with where it happened.
#[derive(Debug, Clone, PartialEq)]
pub struct IoErrorRecord {
    /// errno, or 0 for an unexpected end of file.
    pub errno: i32,
    pub message: String,
    pub op: String,
    pub offset: u64,
    /// On a striped or parity volume: the member that holds the offset
    /// (its kernel name) and the byte on it, from the volume's geometry.
    pub member: Option<String>,
    pub member_offset: Option<u64>,
}

/// One size's share of the window's I/Os (`--bssplit`): its I/Os, bytes
/// and the sum of their latencies (a mean, once divided).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SizeCount {
    pub bs: u64,
    pub ios: u64,
    pub bytes: u64,
    pub latency_ns: u64,
}

/// The I/O records (`--fio-log-format each`) all workers of a run keep
/// at most, reserved before the window: 32 MiB of them.
pub const IO_LINES_BUDGET: usize = 1 << 20;

/// Each worker's share of [`IO_LINES_BUDGET`] (64Ki at the least).
pub fn io_lines_per_worker(workers: usize) -> usize {
    (IO_LINES_BUDGET / workers.max(1)).max(64 << 10)
}

/// One I/O completed in the window, as fio's per-I/O log line holds it
/// (`--fio-log-format each`): when it completed and was issued (ns since
/// the window opened; issued before it, 0), its latency, offset, bytes,
/// direction and the ioprio its command carried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoLine {
    pub done_ns: u64,
    pub issued_ns: u64,
    pub lat_ns: u64,
    pub offset: u64,
    pub len: u32,
    pub write: bool,
    pub ioprio: u16,
}

/// One direction's I/Os at one command priority in the window
/// (`--cmdprio-bssplit`), and their latencies.
#[derive(Debug, Clone, Default)]
pub struct PrioCount {
    pub write: bool,
    /// The ioprio value the I/Os carried (`class << 13 | hint << 3 | level`).
    pub ioprio: u16,
    pub ios: u64,
    pub bytes: u64,
    pub hist: crate::analysis::histogram::LatencyHistogram,
}

/// One strided zone's part of the window (`--zones`): its I/Os and bytes,
/// and the time the worker spent on it, each completion's time since the
/// one before it (the first's since the first issue) given to the
/// completion's zone: the device's time on that zone's bytes, as the
/// worker saw it, whatever the depth.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ZoneCount {
    pub target_index: usize,
    /// The zone's first byte on the target.
    pub offset: u64,
    pub ios: u64,
    pub bytes: u64,
    pub busy_ns: u64,
}

/// At most this many zones are counted one by one (a 1 TB disk in
/// 256m:2g zones has 440): finer zones over a large target are not.
pub const MAX_ZONES: u64 = 4096;

/// Everything a worker measured; merged by the coordinator once, at the end.
#[derive(Debug, Clone, Default)]
pub struct WorkerOutcome {
    pub id: usize,
    /// The CPU the thread was on when it finished.
    pub cpu: Option<usize>,
    /// In-window figures.
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    /// `--rw trim`/`randtrim`: the range trimmed, and the trims (fio's
    /// trim direction).
    pub trim_bytes: u64,
    pub trim_ios: u64,
    pub short_ios: u64,
    pub errors: u64,
    pub errors_by_errno: Vec<ErrnoCount>,
    /// The first [`ERROR_SAMPLES`] errors.
    pub error_samples: Vec<IoErrorRecord>,
    /// The worker stopped because it reached --max-errors.
    pub stopped_on_errors: bool,
    /// `--ignore-errors`: the failures it counted and went on after (fio's
    /// non-fatal errors, its total_err), by errno, in the order first seen;
    /// not in `errors`.
    pub ignored_by_errno: Vec<ErrnoCount>,
    /// With `fill`: the worker stopped where a write found no space left.
    pub filled: bool,
    /// Bytes moved over the whole run (ramp, window, and the I/O after the
    /// deadline): what the device counters are compared with.
    pub span_read_bytes: u64,
    pub span_write_bytes: u64,
    pub hist: LatencyHistogram,
    /// A mixed pattern (`randrw`): the writes' latencies, apart. In the
    /// loop `hist` holds the reads only (one record per I/O, in the
    /// histogram of its direction); the worker's end moves them to
    /// `read_hist` and makes `hist` both merged.
    pub write_hist: Option<LatencyHistogram>,
    pub read_hist: Option<LatencyHistogram>,
    pub cpu_usr_sec: f64,
    pub cpu_sys_sec: f64,
    pub intervals: Vec<Interval>,
    /// Evictions of the region from the page cache at a wrap-around
    /// (`OnWrap::Evict`) in the window, and the ns they took.
    pub cache_evictions: u64,
    pub cache_eviction_ns: u64,
    /// Write-backs of the region at a wrap-around (`OnWrap::Flush`) in
    /// the window, and the ns they took (inside the worker's own time).
    pub wrap_flushes: u64,
    pub wrap_flush_ns: u64,
    /// ns since the epoch of the worker's first issue (its own active time
    /// runs from here, or from the window's opening if later).
    pub first_issue_ns: u64,
    /// `--iolog-write`: every I/O issued, as far as the buffer held.
    pub iolog: Option<crate::measure::iolog::IoLogBuf>,
    /// `--fio-log-format each`: every I/O completed in the window, as far
    /// as the records reserved before it held, and those left out.
    pub io_lines: Vec<IoLine>,
    pub io_lines_lost: u64,
    /// ns since the epoch of the last I/O counted in the window; on a
    /// schedule, for a worker that stopped at its limit, the end of its last
    /// I/O's interval when that is later.
    pub last_completion_ns: u64,
    /// What stopped the worker.
    pub ended_by: Ending,
    /// What the engine said of itself ([`crate::engine::Engine::describe`]):
    /// how it issued I/O, its buffers, its ring. `None` when it was never
    /// built.
    pub engine: Option<crate::engine::EngineFacts>,
    /// `--sqpoll`: the CPU seconds of the ring's submission thread in the
    /// window (counted in `cpu_sys_sec` too).
    pub sqpoll_cpu_sec: f64,
    /// `--nowait`: I/Os that would have blocked (EAGAIN) and went again.
    pub would_block: u64,
    /// `--cmdprio`: I/Os issued at the command priority (of all issued,
    /// ramp included).
    pub cmdprio_ios: u64,
    /// Of the reads counted in the window, those sampled for zeros (one in
    /// `analysis::zeros::SAMPLE_EVERY`), and those of them that came back
    /// all zeros: answered by no medium, or zeros stored as data.
    pub sampled_reads: u64,
    pub zero_reads: u64,
    /// What `--verify` reading found.
    pub verify: VerifyTally,
    /// `--bssplit`: the window's I/Os of each size (empty with one size).
    pub per_size: Vec<SizeCount>,
    /// `--cmdprio-bssplit`: a count and latencies per direction and
    /// command priority (fio's clat_prio), made before the window.
    pub per_prio: Vec<PrioCount>,
    /// `--zones`: the window's part of each zone, in the order of the
    /// region (empty without, or with more than [`MAX_ZONES`]).
    pub per_zone: Vec<ZoneCount>,
    /// I/Os in flight when nothing had completed for `--hang-timeout`: the
    /// worker gave up on them (and left their buffers to the kernel).
    pub hung_ios: Vec<HungIo>,
    /// On a schedule (`--rate`): `hist` runs from each I/O's due time (and
    /// holds the unserved I/Os too, see [`ScheduleTally::unserved_ios`]),
    /// and this one from its issue (the service time) for every I/O that
    /// completed, in the window or after it.
    pub service_hist: Option<LatencyHistogram>,
    /// On a schedule: how well the worker kept it.
    pub schedule: Option<ScheduleTally>,
    /// `--latency-target`: the depth the search found, and its windows.
    pub latency_search: Option<SearchOutcome>,
}

/// How a worker on a schedule (`--rate`) kept it, over the window.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ScheduleTally {
    /// Nanoseconds between two due times.
    pub period_ns: f64,
    /// The most an I/O due in the window was issued after its due time.
    pub behind_max_ns: u64,
    /// I/Os due in the window issued more than [`LATE_NS`] after their due time.
    pub late_ios: u64,
    /// I/Os due in the window that were issued.
    pub issued: u64,
    /// I/Os due before the window's end that were not done by it (still in
    /// flight, hung, or never issued): each is in `hist` all the same, from
    /// its due time to its completion after the window, or to the window's
    /// end when it never completed (a lower bound).
    pub unserved_ios: u64,
    /// How long before the window's end the oldest of them was due.
    pub unserved_oldest_ns: u64,
}

/// An I/O issued this long after it was due counts as late (1 ms).
pub const LATE_NS: u64 = 1_000_000;

/// An I/O that never completed: its worker gave up on it after
/// `--hang-timeout` with nothing completing.
#[derive(Debug, Clone, PartialEq)]
pub struct HungIo {
    pub op: String,
    pub offset: u64,
    /// Bytes asked for.
    pub bytes: u64,
    /// How long it had been in flight when the worker gave up on it.
    pub seconds_in_flight: f64,
    /// On a striped or parity volume: the member that holds the offset
    /// (its kernel name) and the byte on it, from the volume's geometry.
    pub member: Option<String>,
    pub member_offset: Option<u64>,
}

impl WorkerOutcome {
    /// Counts an error; true when the worker has reached `max_errors` and must stop.
    /// `message` is only formatted for the errors kept as samples, so an
    /// error storm does not allocate per I/O.
    fn record_error(
        &mut self,
        errno: i32,
        message: impl FnOnce() -> String,
        op: Op,
        offset: u64,
        max_errors: u64,
    ) -> bool {
        self.errors += 1;
        match self.errors_by_errno.iter_mut().find(|c| c.errno == errno) {
            Some(c) => c.count += 1,
            None => self.errors_by_errno.push(ErrnoCount {
                errno,
                name: errno_name(errno),
                count: 1,
            }),
        }
        if self.error_samples.len() < ERROR_SAMPLES {
            self.error_samples.push(IoErrorRecord {
                errno,
                message: message(),
                op: op.to_string(),
                offset,
                member: None,
                member_offset: None,
            });
        }
        if self.errors >= max_errors {
            self.stopped_on_errors = true;
        }
        self.stopped_on_errors
    }

    /// Counts a failure `--ignore-errors` lets the worker go on after.
    fn record_ignored(&mut self, errno: i32) {
        match self.ignored_by_errno.iter_mut().find(|c| c.errno == errno) {
            Some(c) => c.count += 1,
            None => self.ignored_by_errno.push(ErrnoCount {
                errno,
                name: errno_name(errno),
                count: 1,
            }),
        }
    }

    pub fn bytes(&self) -> u64 {
        self.read_bytes + self.write_bytes + self.trim_bytes
    }

    pub fn ios(&self) -> u64 {
        self.read_ios + self.write_ios + self.trim_ios
    }
}

/// How a worker tells the coordinator that it is ready, or why it cannot
/// be: exactly once, whatever happens. A worker whose thread ends without
/// having said (a return, or a panic caught by the coordinator's thread)
/// says it on drop, so the coordinator never waits for a worker that is gone.
pub struct Ready {
    tx: Sender<Result<(), String>>,
    id: usize,
    sent: bool,
}

impl Ready {
    pub fn new(tx: Sender<Result<(), String>>, id: usize) -> Ready {
        Ready {
            tx,
            id,
            sent: false,
        }
    }

    /// Says it, unless it was said already; true when this call said it.
    pub fn send(&mut self, what: Result<(), String>) -> bool {
        if self.sent {
            return false;
        }
        self.sent = true;
        // The coordinator gone means there is no one left to tell.
        let _ = self.tx.send(what);
        true
    }
}

impl Drop for Ready {
    fn drop(&mut self) {
        let id = self.id;
        self.send(Err(format!("worker {id} ended before it was ready")));
    }
}

pub use crate::base::io::errno_name;

#[cfg(test)]
mod tests {
    use super::*;

    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    /// Counts the allocations of the calling thread (each test runs in its
    /// own thread, so the others' do not count): what a test of "no
    /// allocation in the window" reads before and after the code it watches.
    struct Counting;

    thread_local! {
        static ALLOCS: Cell<u64> = const { Cell::new(0) };
    }

    fn count() {
        // A const thread-local without a destructor is never torn down.
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
    }

    fn allocs() -> u64 {
        ALLOCS.with(Cell::get)
    }

    // SAFETY: every call goes to the system allocator unchanged; the
    // counter is a thread-local Cell, which allocates nothing.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            count();
            unsafe { System.alloc(l) }
        }
        unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
            count();
            unsafe { System.alloc_zeroed(l) }
        }
        unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
            count();
            unsafe { System.realloc(p, l, n) }
        }
        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            unsafe { System.dealloc(p, l) }
        }
    }

    #[global_allocator]
    static COUNTING: Counting = Counting;

    pub(super) fn reader(blocks: u64, bs: u64) -> WorkerSpec {
        WorkerSpec {
            id: 0,
            target_index: 0,
            job: 0,
            region: Region {
                offset: 0,
                length: blocks * bs,
            },
            bs,
            random: false,
            read_pct: 100,
            access: Default::default(),
            seed: 1,
            cpu: None,
            cmdprio: None,
            cmdprio_split: None,
            default_prio: 0,
            align: 4096,
            io_limit: Some(blocks * bs),
            max_errors: 1,
            ignore_errors: Default::default(),
            fill: false,
            verify: VerifyMode::Read,
            dedupe_pct: 0,
            pattern: None,
            dedupe_set: None,
            stripe: None,
            ramp_ns: 0,
            log_ns: 1_000_000_000,
            rate_period_ns: None,
            think: None,
            latency: None,
            iolog_cap: 0,
            io_lines_cap: 0,
            replay: None,
            sprandom: None,
            on_wrap: OnWrap::Keep,
            trim: false,
        }
    }

    // Regression (issue 22, item 9): the good blocks' table grew by
    // doubling mid-window (to 4M entries), and every bad block built its
    // detail String, even past the 1000 kept. Now the tables are reserved
    // before the first I/O, and past the cap a bad block is only counted.
    #[test]
    fn verify_allocates_nothing_in_the_window_past_its_samples() {
        use crate::analysis::verify::{fill_block, generation, Extent};
        let bs = 4096u64;
        let blocks = 6_000u64;
        let spec = reader(blocks, bs);
        let mut t = VerifyTally::reserved(&spec).unwrap();
        let caps = (t.goods.capacity(), t.unwritten_runs.capacity());
        let gen = generation(1_000, 0);
        let e = Extent {
            start: 0,
            end: blocks * bs,
        };
        let (mut block, mut wide) = (vec![0u8; bs as usize], vec![0u8; 2 * bs as usize]);
        // Allocations while noting blocks that keep no sample (good and
        // unwritten ones throughout, bad ones once 1000 are kept).
        let mut watched = 0;
        for i in 0..blocks {
            let offset = i * bs;
            // Good, corrupt, unwritten (each its own run), misplaced, of another size.
            match i % 5 {
                0 | 1 => fill_block(&mut block, offset, 0, gen, 1, e),
                2 => block.fill(0),
                3 => fill_block(&mut block, offset + bs, 0, gen, 1, e),
                _ => {
                    fill_block(&mut wide, offset, 0, gen, 1, e);
                    block.copy_from_slice(&wide[..bs as usize]);
                }
            }
            if i % 5 == 1 {
                block[100] ^= 1;
            }
            let keeps_sample = i % 5 != 0 && i % 5 != 2 && t.bad.len() < VERIFY_LIST_MAX;
            let before = allocs();
            t.note(&block, offset);
            if !keeps_sample {
                watched += allocs() - before;
            }
        }
        assert_eq!(watched, 0, "allocations in the window past the samples");
        assert_eq!((t.goods.capacity(), t.unwritten_runs.capacity()), caps);
        assert_eq!(caps, (blocks as usize, blocks as usize));
        assert_eq!(
            verify_table_bytes(&spec),
            blocks * 24,
            "an I/O adds at most one 24-byte entry"
        );
        assert_eq!(t.checked, blocks);
        assert_eq!(t.good, blocks / 5);
        assert_eq!(t.corrupt, blocks / 5);
        assert_eq!(t.unwritten, blocks / 5);
        assert_eq!(t.unwritten_runs.len() as u64, blocks / 5);
        assert_eq!(t.misplaced, blocks / 5);
        assert_eq!(t.other_size, blocks / 5);
        assert_eq!(t.bad.len(), VERIFY_LIST_MAX);
        assert_eq!(t.bad[0].detail, "checksum mismatch");
        assert_eq!(
            t.bad[1].detail,
            format!("holds the block written for offset {}", 4 * bs)
        );
        assert_eq!(
            t.bad[2].detail,
            "a header for a 8192-byte block: verify with the --bs it was written with (or its --bssplit and --seed)"
        );
    }

    #[test]
    fn the_verify_tables_are_sized_from_the_region_and_capped() {
        let mut spec = reader(10, 4096);
        spec.io_limit = None;
        assert_eq!(verify_table_entries(&spec), 10);
        // Two passes: each I/O may add an entry.
        spec.io_limit = Some(20 * 4096);
        assert_eq!(verify_table_entries(&spec), 20);
        spec.io_limit = Some(u64::MAX);
        assert_eq!(verify_table_entries(&spec), VERIFY_TRACK_MAX as u64);
        assert_eq!(
            verify_table_bytes(&spec),
            2 * VERIFY_TRACK_MAX as u64 * 24,
            "two tables of at most VERIFY_TRACK_MAX entries"
        );
        spec.verify = VerifyMode::Off;
        assert_eq!(verify_table_bytes(&spec), 0);
        assert_eq!(VerifyTally::reserved(&spec).unwrap().goods.capacity(), 0);
    }

    #[test]
    fn a_worker_that_ends_before_it_is_ready_still_answers() {
        let (tx, rx) = crossbeam_channel::unbounded();
        drop(Ready::new(tx.clone(), 3));
        assert_eq!(
            rx.try_recv().unwrap(),
            Err("worker 3 ended before it was ready".to_string())
        );
        // Said once, and only once.
        let mut r = Ready::new(tx, 4);
        assert!(r.send(Ok(())));
        assert!(!r.send(Err("late".into())));
        drop(r);
        assert_eq!(rx.try_recv().unwrap(), Ok(()));
        assert!(rx.try_recv().is_err());
    }
}
