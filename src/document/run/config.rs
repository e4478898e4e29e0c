//! The run document's `config`: the effective options as recorded, made
//! from the validated [`RunConfig`] and the targets it ran on.

use serde::{Deserialize, Serialize};

use crate::engine::EngineKind;
use crate::measure::config::{BlockSizeArg, RateLimit, RunConfig, RwMode};

/// `--zones` in the JSON document: fio's zonesize, zonerange and
/// zoneskip, in bytes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct ZonesDoc {
    pub size: u64,
    pub range: u64,
    pub skip: u64,
}

/// The effective options as recorded in the JSON document.
/// `--ignore-errors` as the document records it: errno names by direction.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IgnoreErrorsDoc {
    pub read: Vec<String>,
    pub write: Vec<String>,
}

fn names(errnos: &[i32]) -> Vec<String> {
    errnos
        .iter()
        .map(|&e| crate::measure::worker::errno_name(e))
        .collect()
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
    /// md/sync_speed_min and _max set on the targets' md arrays for the
    /// run, KiB/s ("system": md's default); absent when left as they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_speed_min: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_speed_max: Option<String>,
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
    /// `--ios`: the I/Os each worker stopped after, or at its other bound,
    /// whichever first; absent when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ios: Option<u64>,
    /// I/O errors after which a worker stops.
    pub max_errors: u64,
    /// `--ignore-errors`: the errnos (by name) each direction's I/O may
    /// fail with and its worker go on; absent when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_errors: Option<IgnoreErrorsDoc>,
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
    /// `--pattern`, as given: what every written block held; absent
    /// without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// `--dedupe-working-set`: the repeats copy members of a working set
    /// this share (percent) of each worker's region; absent: each repeat
    /// is one constant unit per position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe_working_set_pct: Option<u8>,
    /// `--dedupe-global`: one working set over all the workers.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dedupe_global: bool,
    /// `--stripe`: the chunk of the modelled RAID0.
    pub stripe_chunk: Option<u64>,
    /// `--start-at`, Unix seconds: the instant the workers were released.
    #[serde(default)]
    pub start_at_unix_sec: Option<f64>,
    /// `--start-delay`: how long the workers waited, ready, before they
    /// started (the time drawn, when a range was given); absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_delay_sec: Option<f64>,
    pub duration_sec: f64,
    pub ramp_sec: f64,
    pub size: Option<u64>,
    pub offset: u64,
    pub jobs: usize,
    /// `--jobs-share`: every job covered the whole region; absent when
    /// each had a slice of its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub jobs_share: bool,
    /// `--dist`: random offsets' distribution in fio's spelling; absent
    /// when uniform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dist: Option<String>,
    /// `--skip`: bytes skipped (negative: gone back) after each
    /// sequential I/O; absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<i64>,
    /// `--zones`: fio's strided zones, in bytes; absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<ZonesDoc>,
    /// `--seq-run`: I/Os per random offset; absent when every one is random.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_run: Option<u64>,
    /// `--bssplit`: the sizes and their shares in fio's spelling, sizes
    /// in bytes (`512/10:4096/90`; `bs` is then the largest); absent with
    /// one size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bssplit: Option<String>,
    /// `--bssplit`'s offset alignment in bytes (`--blockalign`, else the
    /// smallest size); absent with one size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blockalign: Option<u64>,
    /// `--offset-increment`: job k's region began k times this after
    /// `offset`; absent when jobs split (or shared) the region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_increment: Option<u64>,
    pub cpus: Option<Vec<usize>>,
    pub pin: bool,
    /// `--numa-nodes`: the NUMA nodes whose CPUs every worker ran on (then
    /// `cpus` is null and `pin` false); absent when not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_nodes: Option<Vec<usize>>,
    /// `--numa-mem`: each worker's memory policy (`bind:0`,
    /// `interleave:0-1`, `prefer:0`, `local`, `default`); absent when not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_mem: Option<String>,
    /// `--ioprio`: each worker thread's I/O priority, `CLASS,LEVEL` (`rt`,
    /// `be`, `idle`; 0-7); absent when not (the process's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ioprio: Option<String>,
    /// `--cmdprio`: `PCT:CLASS,LEVEL`, the share of I/Os issued at that
    /// priority in their command; absent when not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdprio: Option<String>,
    /// `--cmdprio-bssplit`: `READS,WRITES`, each `SIZE/PCT/CLASS/LEVEL/HINT:...`
    /// (sizes in bytes); absent when not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdprio_bssplit: Option<String>,
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
    /// `--rate-min` / `--rate-iops-min` over `--rate-cycle`; absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_min: Option<RateMinDoc>,
}

/// The minimum rate each worker must keep (fio's `rate_min=`,
/// `rate_iops_min=`, `rate_cycle=`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RateMinDoc {
    /// At least this many of `unit` ("B/s" or "IOPS") per second.
    pub min: f64,
    pub unit: String,
    pub cycle_sec: f64,
}

impl ConfigDoc {
    /// Where the I/Os land beyond the pattern, for the table's and diff's
    /// heads: `, dist zipf:1.2`, `, skip 512k`, `, 8 I/Os per random
    /// offset`, `, job k at +k x 1m`; empty when plain.
    pub fn access_words(&self) -> String {
        use crate::base::units::fmt_size_arg;
        let mut w = String::new();
        if let Some(d) = &self.dist {
            w.push_str(&format!(", dist {d}"));
        }
        match self.skip {
            Some(s) if s < 0 => w.push_str(&format!(", back {}", fmt_size_arg(s.unsigned_abs()))),
            Some(s) => w.push_str(&format!(", skip {}", fmt_size_arg(s as u64))),
            None => {}
        }
        if let Some(z) = &self.zones {
            w.push_str(&format!(
                ", zones of {} every {}",
                fmt_size_arg(z.size),
                fmt_size_arg(z.range + z.skip)
            ));
            if z.range != z.size {
                w.push_str(&format!(" (range {})", fmt_size_arg(z.range)));
            }
        }
        if let Some(n) = self.seq_run {
            w.push_str(&format!(", {n} I/Os per random offset"));
        }
        if let Some(i) = self.offset_increment {
            w.push_str(&format!(", job k at +k x {}", fmt_size_arg(i)));
        }
        w
    }

    /// The options of `cfg`, as run on `targets`.
    pub fn of(c: &RunConfig, targets: &[String]) -> ConfigDoc {
        ConfigDoc {
            rw: c.rw,
            read_pct: c.read_pct,
            bs: match c.bs {
                BlockSizeArg::Bytes(n) => n.to_string(),
                BlockSizeArg::Logical => "lbs".into(),
            },
            direct: c.direct,
            uncached: c.uncached,
            readahead_kb: c.readahead_kb,
            stripe_cache_size: c.md_tunables.stripe_cache_size,
            group_thread_cnt: c.md_tunables.group_thread_cnt,
            sync_speed_min: c.md_tunables.sync_speed_min.map(sync_speed_text),
            sync_speed_max: c.md_tunables.sync_speed_max.map(sync_speed_text),
            engine: c.engine,
            iodepth: c.iodepth,
            register: c.engine == EngineKind::Uring && c.register,
            hipri: c.ring.iopoll,
            sqpoll: c.ring.sqpoll,
            sqpoll_cpu: c.ring.sqpoll_cpu,
            taskrun: (c.ring.taskrun != crate::engine::TaskRun::Auto).then_some(c.ring.taskrun),
            nowait: c.nowait,
            complete_min: match c.ring.complete_min {
                crate::engine::CompleteMin::Fixed(n) => Some(n),
                crate::engine::CompleteMin::Auto => None,
            },
            sched: (c.ring.sched != crate::engine::Sched::Auto).then_some(c.ring.sched),
            io_limit: c.io_limit,
            passes: c.passes,
            ios: c.ios,
            max_errors: c.max_errors,
            ignore_errors: (!c.ignore_errors.is_empty()).then(|| IgnoreErrorsDoc {
                read: names(&c.ignore_errors.read),
                write: names(&c.ignore_errors.write),
            }),
            hang_timeout_sec: Some(c.hang_timeout.as_secs_f64()),
            log_interval_ms: Some(c.log_interval.as_millis() as u64),
            verify: c.verify,
            buffer_compress_pct: c.buffer_compress,
            dedupe_pct: c.dedupe,
            pattern: c.pattern.as_ref().map(|p| p.text().to_string()),
            dedupe_working_set_pct: c.dedupe_set.map(|s| s.pct),
            dedupe_global: c.dedupe_set.is_some_and(|s| s.global),
            stripe_chunk: c.stripe,
            start_at_unix_sec: c
                .start_at
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs_f64()),
            start_delay_sec: (!c.start_delay.is_zero()).then_some(c.start_delay.as_secs_f64()),
            duration_sec: c.duration.as_secs_f64(),
            ramp_sec: c.ramp.as_secs_f64(),
            size: c.size,
            offset: c.offset,
            jobs: c.jobs,
            jobs_share: c.jobs_share,
            dist: Some(c.access.dist.to_string()).filter(|_| !c.access.dist.is_uniform()),
            skip: Some(c.access.skip).filter(|&s| s != 0),
            zones: c.access.zones.map(|z| ZonesDoc {
                size: z.size,
                range: z.range,
                skip: z.skip,
            }),
            seq_run: Some(c.access.seq_run).filter(|&n| n > 1),
            bssplit: c.access.sizes.as_ref().map(|s| s.fio_spelling()),
            blockalign: c.access.sizes.as_ref().map(|s| s.align),
            offset_increment: c.offset_increment,
            numa_nodes: c.numa_nodes.clone(),
            numa_mem: c.thread.mem_policy.as_ref().map(|p| p.to_string()),
            ioprio: c.thread.ioprio.map(|p| p.to_string()),
            cmdprio: c.cmdprio.map(|p| p.to_string()),
            cmdprio_bssplit: c.cmdprio_split.as_ref().map(|p| p.to_string()),
            cpus: c.cpus.clone(),
            pin: c.cpus.is_some(),
            seed: c.seed,
            seed_str: c.seed.to_string(),
            allow_destructive: c.allow_destructive,
            targets: targets.to_vec(),
            testbed: c.testbed.is_some(),
            rate: c.rate,
            rate_min: c.rate_min.map(|r| RateMinDoc {
                min: r.min.value(),
                unit: r.min.unit().into(),
                cycle_sec: r.cycle.as_secs_f64(),
            }),
        }
    }
}

/// A resync limit as the document says it: KiB/s, or "system".
fn sync_speed_text(v: u64) -> String {
    if v == crate::device::md_tunables::SYNC_SYSTEM {
        "system".into()
    } else {
        v.to_string()
    }
}
