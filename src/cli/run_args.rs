//! The options every measuring command shares (`run`, `verify`, and as a
//! base `sweep` and `compare`), and the parsers of their values.

use crate::base::units::{parse_duration, parse_size};
use crate::measure::config::{BlockSizeArg, LiveFormat, RwMode};
use crate::report::{Format, FORMATS};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Block devices or regular files to drive, one worker each (times --jobs).
    /// None: the built-in test bed of scratch files.
    #[arg(value_name = "TARGET")]
    pub targets: Vec<PathBuf>,

    /// Every target the user named, when a sweep's point drives fewer of
    /// them (`--param target`, `--param members`); empty: `targets`. Not an
    /// option.
    #[arg(skip)]
    pub named: Vec<PathBuf>,

    /// Drive every member of this striped volume (md, dm, or a btrfs mount
    /// point), one worker each, instead of naming targets: the members of
    /// its striped layer (a member behind dm-delay or dm-crypt through that
    /// layer), or the leaf disks when nothing stripes.
    #[arg(long, value_name = "VOLUME")]
    pub members: Option<PathBuf>,

    /// Model a RAID0 over the TARGETs before building it: a logical stream
    /// (--rw, --bs) is split into CHUNK-sized pieces mapped round-robin to
    /// the targets, each served by its own pinned worker.
    #[arg(long, allow_hyphen_values = true, value_name = "CHUNK", value_parser = parse_nonzero_size)]
    pub stripe: Option<u64>,

    /// `stripe`: align worker regions to full stripes of a striped target
    /// (md, dm striped) and report how requests meet its chunks.
    #[arg(long, value_enum, value_name = "WHAT")]
    pub align: Option<AlignArg>,

    /// Measure page-cache reads on purpose: read each region once first, then
    /// measure (buffered reads). The report shows the device counters and the
    /// machine's memory-copy bandwidth, the ceiling.
    #[arg(long)]
    pub cached: bool,

    /// Before a buffered read, drop all caches (/proc/sys/vm/drop_caches,
    /// root) instead of evicting only the targets' pages.
    #[arg(long, conflicts_with = "cached")]
    pub drop_caches: bool,

    /// I/O pattern.
    #[arg(long, value_enum, default_value_t = RwMode::Read)]
    pub rw: RwMode,

    /// Read share in percent for --rw randrw.
    #[arg(long, allow_hyphen_values = true, value_name = "PCT", default_value = "50", value_parser = parse_pct)]
    pub mix: u8,

    /// Random patterns: which blocks are hot, in fio's random_distribution
    /// spelling: random (every block alike, the default), zipf:THETA,
    /// pareto:H, normal:DEV (percent of the region), zoned:A/S:... (A% of
    /// I/Os to the next S% of the region, e.g. zoned:50/5:30/15:20/),
    /// zoned_abs:A/SIZE:... (sizes in bytes). Hot blocks are scattered over
    /// the region as fio scatters them.
    #[arg(long, value_name = "DIST", value_parser = parse_dist)]
    pub dist: Option<crate::measure::workload::Dist>,

    /// Sequential patterns: bytes to skip after each I/O (fio's
    /// rw=read:512k), leaving holes and ending a pass at the last request
    /// that fits; negative goes back (rw=read:-8k reads backwards).
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE", value_parser = parse_skip)]
    pub skip: Option<i64>,

    /// Sequential patterns: fio's strided zones (zonemode=strided),
    /// SIZE:SKIP[:RANGE]: SIZE bytes of I/O in a zone of RANGE bytes
    /// (default SIZE), then on to the zone RANGE+SKIP after its start,
    /// back to the first zone from the end. 256m:2g reads 256 MiB of
    /// every 2.25 GiB, how a disk's speed is profiled across its surface.
    /// A run bounded by size goes round the zones until it has moved the
    /// region's size, ending early where a zone runs past the end, as
    /// fio's does. One direction (read or write), one job.
    #[arg(long, value_name = "SIZE:SKIP[:RANGE]", value_parser = parse_zones)]
    pub zones: Option<crate::measure::workload::Strided>,

    /// Random patterns: a new random offset every N I/Os, the ones between
    /// following on sequentially (fio's rw=randread:N).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = parse_seq_run)]
    pub seq_run: Option<u64>,

    /// SSD preconditioning to steady state (fio's sprandom=1, SanDisk's
    /// SPRandom): --rw randwrite writes the target's physical capacity
    /// (its size x (1 + --spr-op)) once, region by region, each region's
    /// blocks rewritten in the next with the share that leaves it at
    /// Desnoyers' steady-state validity. Ends when written; one target,
    /// one job; prints the regions, the writes and the write
    /// amplification the model expects.
    #[arg(long)]
    pub sprandom: bool,

    /// --sprandom: the SSD's over-provisioning, a share in (0, 1), as its
    /// maker gives it (fio's spr_op). Default: 0.15.
    #[arg(long, value_name = "F", requires = "sprandom")]
    pub spr_op: Option<f64>,

    /// --sprandom: the regions the target is written in (fio's
    /// spr_num_regions); more regions, a finer curve and a smaller
    /// buffer (8 bytes for each block a region rewrites). Default: 100.
    #[arg(long, value_name = "N", requires = "sprandom")]
    pub spr_regions: Option<u32>,
    /// Random patterns: every block once per pass, in an order drawn
    /// afresh each pass (fio's random map, and its random_generator=lfsr),
    /// rather than each offset drawn on its own (fio's norandommap). Not
    /// with --dist, --seq-run, --bssplit or --stripe
    #[arg(long)]
    pub random_map: bool,

    /// Request size (k, m, g or KiB, MiB, GiB: binary, 4k = 4096 bytes), or
    /// `lbs` for the target's logical block size.
    /// Default: 1m for sequential patterns, 4k for random ones.
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE|lbs", value_parser = parse_bs)]
    pub bs: Option<BlockSizeArg>,

    /// Each I/O's size drawn from weighted sizes, in fio's bssplit
    /// spelling: SIZE/PCT:SIZE/PCT... (4k/60:64k/40; a blank PCT takes an
    /// even part of the rest, 4k/50:8k/:64k/); READS,WRITES gives writes
    /// a split of their own (64k/40:1m/60,1m/100). Buffers hold the largest
    /// size; offsets are aligned to the smallest (or --blockalign); the
    /// report gives each size's I/Os, bytes, share and mean latency. A
    /// sequential pass ends at the region's end to the byte (a size that
    /// would pass it is drawn again). With --verify (sequential only):
    /// each block is written at its size, and a read with the same --seed
    /// draws the same sizes and checks each block whole.
    #[arg(long, value_name = "SIZE/PCT:...[,SIZE/PCT:...]", value_parser = parse_bssplit, conflicts_with = "bs")]
    pub bssplit: Option<crate::measure::workload::Sizes>,

    /// With --bssplit: the boundary offsets are aligned to (fio's
    /// blockalign=). Default: the smallest size of the split.
    #[arg(long, value_name = "SIZE", value_parser = parse_blockalign, requires = "bssplit")]
    pub blockalign: Option<u64>,

    /// Bypass the page cache with O_DIRECT (the default).
    #[arg(long, conflicts_with = "buffered")]
    pub direct: bool,

    /// Go through the page cache instead of O_DIRECT. Buffered writes end with a
    /// timed fsync, reported apart.
    #[arg(long, conflicts_with = "uncached")]
    pub buffered: bool,

    /// Buffered I/O that does not keep its pages (RWF_DONTCACHE, Linux 6.14+):
    /// preadv2/pwritev2 or the io_uring SQE's flags. Writes end with a timed
    /// fsync like --buffered's.
    #[arg(long, conflicts_with = "direct")]
    pub uncached: bool,

    /// Length of the measured window (default 10s; with --io-limit, --ios or
    /// --passes, and for `verify`: until done, this a cap when given).
    #[arg(short = 't', long, allow_hyphen_values = true, value_name = "TIME", value_parser = parse_positive_duration)]
    pub duration: Option<Duration>,

    /// Warm-up before the window opens; I/O in it is not counted
    /// (default 1s; 0 with --io-limit, --ios or --passes).
    #[arg(long, allow_hyphen_values = true, value_name = "TIME", value_parser = parse_duration)]
    pub ramp: Option<Duration>,

    /// Set each target device's read-ahead (read_ahead_kb, KiB) for the run;
    /// the old value is put back afterwards, whatever happens.
    #[arg(long, allow_hyphen_values = true, value_name = "KB", value_parser = parse_readahead)]
    pub readahead: Option<u64>,

    /// md raid4/5/6 only: set the array's stripe cache (md/stripe_cache_size,
    /// stripe heads of one 4 KiB page per member, 17 to 32768) for the run;
    /// the old value is put back afterwards, whatever happens. Refused when
    /// the cache would take more than a quarter of the available memory.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = parse_stripe_cache_size)]
    pub stripe_cache_size: Option<u64>,

    /// md raid4/5/6 only: set the array's worker threads per group of CPUs
    /// (md/group_thread_cnt, 0 to 8192; 0 is md's one raid5d thread) for the
    /// run; the old value is put back afterwards, whatever happens.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = parse_group_thread_cnt)]
    pub group_thread_cnt: Option<u64>,

    /// md arrays with redundancy (raid1/4/5/6/10): set the resync's floor
    /// (md/sync_speed_min, KiB/s per member device, or `system` for the
    /// host's /proc/sys/dev/raid/speed_limit_min) for the run; put back
    /// afterwards, whatever happens.
    #[arg(long, allow_hyphen_values = true, value_name = "KIBS", value_parser = parse_sync_speed)]
    pub sync_speed_min: Option<u64>,

    /// md arrays with redundancy: set the resync's ceiling (md/sync_speed_max,
    /// KiB/s per member device, or `system`) for the run; put back afterwards.
    /// A run on a resyncing array reports the resync's rate over its window
    /// and the whole rebuild's time at that rate; sweep it to see what a
    /// faster rebuild costs the users.
    #[arg(long, allow_hyphen_values = true, value_name = "KIBS", value_parser = parse_sync_speed)]
    pub sync_speed_max: Option<u64>,

    /// Run even when the I/O buffers (workers x --iodepth x --bs) would take
    /// more than a quarter of the available memory.
    #[arg(long = "force-memory")]
    pub force_memory: bool,

    /// When another stripebench run is changing the same device's settings
    /// (--readahead), wait for it to end instead of refusing.
    #[arg(long)]
    pub wait_lock: bool,

    /// Wait until this instant (Unix seconds, or RFC 3339 such as
    /// 2026-11-30T17:00:00Z) before starting, so runs launched on many hosts
    /// start together. The window's start and end instants are in the JSON.
    #[arg(long, value_name = "TIME", value_parser = parse_start_at)]
    pub start_at: Option<std::time::SystemTime>,

    /// Wait this long once the targets are set up, before the workers start
    /// (fio's startdelay): a TIME, or A-B for a time drawn from A to B by
    /// --seed. Nothing is measured in it; the JSON records the wait.
    #[arg(long, allow_hyphen_values = true, value_name = "TIME|A-B", value_parser = parse_start_delay)]
    pub start_delay: Option<(Duration, Duration)>,

    /// How I/O is issued.
    #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
    pub engine: EngineArg,

    /// I/Os in flight per worker (io_uring).
    #[arg(long, allow_hyphen_values = true, value_name = "N", default_value = "1", value_parser = parse_depth)]
    pub iodepth: usize,

    /// Each worker issues on a fixed schedule of this many bytes per second
    /// (50m/s = 50 MiB/s, binary as every size; 500MB/s decimal): I/O k is
    /// due k x bs / RATE after the start, never issued before, and its
    /// latency runs from when it was due, so a stall is not hidden. With
    /// --iodepth > 1, up to that many due I/Os are in flight at once.
    #[arg(long, value_name = "SIZE/s", value_parser = crate::base::units::parse_io_rate)]
    pub rate: Option<f64>,

    /// As --rate, in I/Os per second per worker.
    #[arg(long, value_name = "N", conflicts_with = "rate", value_parser = crate::base::units::parse_iops)]
    pub rate_iops: Option<f64>,

    /// Fail the run when a worker's rate falls below this many bytes per
    /// second, as fio's rate_min= does: judged over each --rate-cycle from
    /// 2 s into the window, at the --live-interval figures with completions
    /// in them. The run ends there, keeps and reports what it measured,
    /// names the cycle, and exits 1. Not above --rate
    #[arg(long, value_name = "SIZE/s", value_parser = crate::base::units::parse_io_rate)]
    pub rate_min: Option<f64>,

    /// As --rate-min, in I/Os per second per worker (fio's rate_iops_min=).
    /// Not above --rate-iops
    #[arg(long, value_name = "N", conflicts_with = "rate_min", value_parser = crate::base::units::parse_iops)]
    pub rate_iops_min: Option<f64>,

    /// The cycle --rate-min and --rate-iops-min average over (fio's
    /// rate_cycle=; default 1s)
    #[arg(long, value_name = "TIME", value_parser = parse_positive_duration)]
    pub rate_cycle: Option<Duration>,

    /// Each worker pauses this long after every --thinktime-blocks I/Os
    /// (default 1), once all it has in flight completed, as fio's
    /// thinktime= does (an application's work between I/Os). The pause is
    /// in the window: the throughput and IOPS include it, as fio's do; the
    /// latencies are the I/Os' own
    #[arg(long, value_name = "TIME", value_parser = parse_positive_duration)]
    pub thinktime: Option<Duration>,

    /// The first part of each --thinktime pause spent spinning on the CPU
    /// rather than sleeping (fio's thinktime_spin=)
    #[arg(long, value_name = "TIME", value_parser = parse_duration, requires = "thinktime")]
    pub thinktime_spin: Option<Duration>,

    /// The I/Os between --thinktime pauses, counted as they complete
    /// (fio's thinktime_blocks=; default 1)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), requires = "thinktime")]
    pub thinktime_blocks: Option<u64>,

    /// Count --thinktime-blocks as the I/Os are issued, not as they
    /// complete (fio's thinktime_blocks_type=issue)
    #[arg(long, requires = "thinktime")]
    pub thinktime_on_issue: bool,

    /// Search for the deepest queue, from 1 up to --iodepth, at which
    /// --latency-percentile of each --latency-window's I/Os complete
    /// within this latency (issue to completion), as fio's
    /// latency_target= does: a window that meets it raises the depth
    /// (doubling, or halfway to the lowest depth that failed), one that
    /// does not lowers it (halfway to the highest that met it, once the
    /// I/Os in flight completed). Settled, the worker runs one more window
    /// at the depth found and stops. Needs --iodepth above 1
    #[arg(long, value_name = "TIME", value_parser = parse_positive_duration)]
    pub latency_target: Option<Duration>,

    /// The length of each window of the --latency-target search (fio's
    /// latency_window=; default 1s)
    #[arg(long, value_name = "TIME", value_parser = parse_duration, requires = "latency_target")]
    pub latency_window: Option<Duration>,

    /// The share of each window's I/Os, in percent (above 0, at most 100),
    /// that must complete within --latency-target (fio's
    /// latency_percentile=; default 100: at 100 the first I/O over the
    /// target lowers the depth at once, and at depth 1 stops the worker)
    #[arg(long, value_name = "P", value_parser = parse_latency_percentile, requires = "latency_target")]
    pub latency_percentile: Option<f64>,

    /// Keep searching after the depth settled, until the run's end,
    /// rather than stopping after its final window (fio's latency_run=1)
    #[arg(long, requires = "latency_target")]
    pub latency_run: bool,

    /// End the window once the run is steady, as fio's steadystate= judges
    /// it: over the last --steady-dur of --live-interval figures (IOPS, bytes
    /// per second or mean latency of the whole run), every one within LIMIT
    /// of their mean (iops, bw, lat), or their least-squares slope under
    /// LIMIT per interval (iops_slope, bw_slope, lat_slope); LIMIT absolute
    /// or a percentage of the mean (iops:10%, bw_slope:0.5%). The report
    /// says whether and when it was reached; --duration stays the cap
    #[arg(long, value_name = "CRITERION:LIMIT", value_parser = parse_steady)]
    pub steady: Option<crate::analysis::steady::Criterion>,

    /// --steady's rolling window (default 30s; at least two --live-interval)
    #[arg(long, value_name = "TIME", requires = "steady", value_parser = parse_positive_duration)]
    pub steady_dur: Option<Duration>,

    /// --steady: how long into the window before its figures are judged (default 0)
    #[arg(long, value_name = "TIME", requires = "steady", value_parser = parse_duration)]
    pub steady_ramp: Option<Duration>,

    /// io_uring: do not register buffers and the file (plain READ/WRITE, as fio's defaults).
    #[arg(long)]
    pub no_register: bool,

    /// io_uring: poll for completions instead of waiting for an interrupt
    /// (IORING_SETUP_IOPOLL). O_DIRECT only, on devices with poll queues
    /// (queue/io_poll 1: nvme or null_blk loaded with poll_queues=N).
    #[arg(long)]
    pub hipri: bool,

    /// io_uring: a kernel thread takes each worker's submissions
    /// (IORING_SETUP_SQPOLL), bound to CPU when given (--sqpoll=CPU). Its CPU
    /// time is counted in the worker's system time, and reported apart.
    #[arg(long, value_name = "CPU", num_args = 0..=1, require_equals = true)]
    pub sqpoll: Option<Option<usize>>,

    /// io_uring: how completions reach the worker: plain (the kernel
    /// interrupts it), coop (SINGLE_ISSUER|COOP_TASKRUN, Linux 6.0), defer
    /// (SINGLE_ISSUER|DEFER_TASKRUN, Linux 6.1: only when it waits), or auto:
    /// the first of defer, coop, plain this kernel has.
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = crate::engine::TaskRun::NAMES)]
    pub taskrun: String,

    /// io_uring: wait for N completions at a time before issuing more (fio's
    /// iodepth_batch_complete_min; at most --iodepth), or auto: 1, except on
    /// a RAM target with no non-blocking path (zram, brd, a tmpfs file:
    /// every I/O is CPU work in an io-wq kernel thread on the worker's CPU,
    /// which each wake-up of the worker can cut off) at --iodepth 8 or
    /// more, where it is a quarter of the depth (not with --rate, --hipri or
    /// --sqpoll).
    #[arg(long, value_name = "N|auto", default_value = "auto", value_parser = crate::engine::CompleteMin::parse)]
    pub complete_min: crate::engine::CompleteMin,

    /// io_uring: the workers' scheduling policy: normal, batch (SCHED_BATCH:
    /// a woken worker does not preempt the thread on its CPU), or auto:
    /// batch where the target has no non-blocking path, so that io_uring
    /// runs every I/O in an io-wq kernel thread on the worker's CPU (zram,
    /// brd), which then works through the queue instead of being preempted
    /// at each completion; normal elsewhere.
    #[arg(long, value_name = "POLICY", default_value = "auto", value_parser = crate::engine::Sched::NAMES)]
    pub sched: String,

    /// Issue each read and write with RWF_NOWAIT first: one the kernel will
    /// not do without blocking (EAGAIN, a short transfer, or EOPNOTSUPP for
    /// a buffered write the file system cannot do so) is counted
    /// (would_block_ios in the JSON) and issued again, whole, without it.
    #[arg(long)]
    pub nowait: bool,

    /// Each worker stops after this many bytes, rounded up to whole --bs
    /// requests: a size-bounded run whose byte and I/O counts are exact (the
    /// window then counts every I/O: no ramp). It runs until done; --duration,
    /// if given, is a cap. With --passes N it is fio's io_size= with loops=N:
    /// N x SIZE, the passes going round the region as needed, unless the
    /// region's pass holds less than SIZE (and does not wrap, as fio's
    /// sequential write of io_size over size does): then whole passes, N
    /// of them or as many as reach SIZE (with --verify on a write, the
    /// read-back's bytes counted too, as fio counts them).
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE", value_parser = parse_nonzero_size)]
    pub io_limit: Option<u64>,

    /// Each worker stops after N I/Os (fio's number_ios), or at its other
    /// bound (--passes, --io-limit, --duration), whichever comes first: a
    /// size-bounded run, no ramp.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = parse_max_errors)]
    pub ios: Option<u64>,

    /// Each worker covers its own region N times and stops (random patterns:
    /// N x the region's bytes); the window closes at the last completion.
    /// No ramp; --duration, if given, is a cap (default: none). With
    /// --io-limit: fio's loops= over io_size= (see --io-limit).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = parse_max_errors)]
    pub passes: Option<u64>,

    /// Bytes of each target to use, from --offset (default: to the end).
    #[arg(allow_hyphen_values = true, long, value_name = "SIZE", value_parser = parse_size)]
    pub size: Option<u64>,

    /// Create each TARGET that does not exist as a file of SIZE bytes of
    /// random data before the run (fio's filesize= on a filename= that is
    /// not there), and write to it as to a file stripebench created. A
    /// TARGET that exists is used as it is: writing to it still needs
    /// --allow-destructive. Not with --dry-run, which creates nothing.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub create: Option<u64>,

    /// How --create lays a file out: fill (every byte written with random
    /// data, fio's layout of a file a job reads), sparse (its size set,
    /// nothing written: fio's fallocate=none or truncate for a job that
    /// only writes, and create_on_open=1), allocate (its blocks allocated
    /// and not written: fio's fallocate=native or posix for such a job).
    /// Reads of a sparse file's unwritten blocks read holes (--allow-holes).
    #[arg(long, value_name = "LAYOUT", requires = "create")]
    pub create_layout: Option<crate::device::scratch::CreateLayout>,

    /// Write each target once to its end from --offset (--passes 1 unless a
    /// bound is given, no time limit unless --duration), as fio's
    /// fill_device=1 does (with --rw write, no --size): a block device to
    /// its last block; a regular file until its file system says no space
    /// is left (ENOSPC, or EDQUOT), that write no error: the bytes written
    /// are the figure, and the file, made empty if it is not there, keeps
    /// them, so the file system stays full until it is removed. The dry
    /// run says how much is free (statvfs). A file stripebench did not
    /// make still needs --allow-destructive.
    #[arg(long)]
    pub fill_device: bool,

    /// Where on each target the region starts.
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE", default_value = "0", value_parser = parse_size)]
    pub offset: u64,

    /// Job k's region starts at --offset plus k times SIZE, and is --size
    /// bytes long (to the target's end without --size), as fio's
    /// offset_increment places numjobs' clones. Needs --jobs 2 or more.
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE", value_parser = parse_size)]
    pub offset_increment: Option<u64>,

    /// Workers per target, each on its own disjoint slice of the region.
    #[arg(short = 'j', long, allow_hyphen_values = true, value_name = "N", default_value = "1", value_parser = parse_count)]
    pub jobs: usize,

    /// Every job covers the target's whole region, as fio's numjobs clones
    /// do, instead of a disjoint slice of its own: their I/Os overlap (a
    /// sequential read is read --jobs times; buffered, the page cache
    /// serves the repeats)
    #[arg(long)]
    pub jobs_share: bool,

    /// CPUs to pin workers to, round-robin, e.g. 0-3,6 (default: all online CPUs).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = parse_cpus, conflicts_with = "no_pin")]
    pub cpus: Option<CpuList>,

    /// Do not pin workers to CPUs.
    #[arg(long)]
    pub no_pin: bool,

    /// Let each worker run on any CPU of these NUMA nodes (fio's
    /// numa_cpu_nodes), e.g. 0 or 0-1, read from
    /// /sys/devices/system/node/nodeN/cpulist, instead of pinning it to
    /// one CPU. A node the machine has not is refused.
    #[arg(long, value_name = "NODES", value_parser = parse_numa_nodes, conflicts_with_all = ["cpus", "no_pin"])]
    pub numa_nodes: Option<NodeList>,

    /// Each worker's memory policy, set before its buffers are allocated
    /// (fio's numa_mem_policy): default, local, prefer:NODE, bind:NODES or
    /// interleave:NODES.
    #[arg(long, value_name = "POLICY", value_parser = parse_mem_policy)]
    pub numa_mem: Option<crate::base::thread_setup::MemPolicy>,

    /// Each worker thread's I/O priority, CLASS[,LEVEL] (fio's prioclass
    /// and prio): CLASS 1 or rt (realtime: root only), 2 or be
    /// (best-effort), 3 or idle; LEVEL 0 (highest) to 7, default 0. Set
    /// with ioprio_set on the thread: it holds for every I/O it issues.
    #[arg(long, value_name = "CLASS[,LEVEL]", value_parser = parse_ioprio)]
    pub ioprio: Option<crate::base::thread_setup::IoPrio>,

    /// PCT percent of each worker's I/Os, chosen at random, carry priority
    /// CLASS[,LEVEL] in their command (fio's cmdprio_percentage,
    /// cmdprio_class, cmdprio); the others go at the thread's priority
    /// (--ioprio). io_uring only: the sync engine has no per-command
    /// priority, and is refused with it.
    #[arg(long, value_name = "PCT:CLASS[,LEVEL]", value_parser = parse_cmdprio)]
    pub cmdprio: Option<crate::base::thread_setup::CmdPrio>,

    /// Each I/O's command priority by its size, in fio's cmdprio_bssplit
    /// spelling: READS[,WRITES], each list SIZE/PCT[/CLASS/LEVEL[/HINT]]:...
    /// (64k/25/1/1:64k/75/3/2,1m/0). PCT percent of the I/Os of SIZE carry
    /// that priority (CLASS 0-3, LEVEL 0-7, HINT 0-1023; without them
    /// realtime, level 0); every other I/O the thread's (--ioprio). The
    /// report counts each priority's I/Os and latencies apart. io_uring
    /// only, and not with --cmdprio.
    #[arg(long, value_name = "SIZE/PCT[/CLASS/LEVEL[/HINT]]:...", value_parser = parse_cmdprio_bssplit, conflicts_with = "cmdprio")]
    pub cmdprio_bssplit: Option<crate::base::thread_setup::CmdPrioSplit>,

    /// Seed for random offsets and write data (default: drawn from the clock; always reported).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = parse_seed)]
    pub seed: Option<u64>,

    /// Compressibility of written data, as fio's buffer_compress_percentage:
    /// each 4 KiB unit is this share zeros (default 0: incompressible).
    #[arg(long, allow_hyphen_values = true, value_name = "PCT", default_value = "0", value_parser = parse_pct)]
    pub buffer_compress: u8,

    /// Share of written 4 KiB units that repeat one another, as fio's
    /// dedupe_percentage (default 0: every unit written is unique).
    #[arg(long, allow_hyphen_values = true, value_name = "PCT", default_value = "0", value_parser = parse_pct)]
    pub dedupe: u8,

    /// Every written block holds this pattern, repeated from its start, in
    /// fio's syntax (buffer_pattern, verify_pattern): hex 0xaa55, a decimal
    /// number, "text", 'file' (its bytes), %o (the block's offset, 8 bytes
    /// little-endian), or several of them one after another. With --verify,
    /// the blocks hold the pattern and nothing else (fio's verify=pattern),
    /// and reading with --verify checks that every block holds it.
    #[arg(long, allow_hyphen_values = true, value_name = "PATTERN", value_parser = parse_pattern)]
    pub pattern: Option<crate::base::pattern::Pattern>,
    /// fio's dedupe_mode=working_set: the repeated units are copies of the
    /// worker's first unique units, PCT% of its region's size of them,
    /// each repeat one of them drawn at random (fio's
    /// dedupe_working_set_percentage). Without it a repeated unit is one
    /// constant per position (fio's dedupe_mode=repeat in effect).
    #[arg(long, value_name = "PCT", value_parser = parse_pct, requires = "dedupe")]
    pub dedupe_working_set: Option<u8>,

    /// fio's dedupe_global: the workers' working sets are one, shared: a
    /// repeat may copy any worker's unit, so the targets together hold
    /// fewer distinct units than each alone suggests.
    #[arg(long, requires = "dedupe_working_set")]
    pub dedupe_global: bool,

    /// Write self-describing, checksummed blocks (with --rw write, or
    /// --rw randwrite with --passes N: every block once a pass, in a random
    /// order) that `stripebench verify` checks; with --rw read, check every
    /// block read. With --rw randrw, each pass (every block once, read or
    /// written) is followed by the read-back of the blocks it wrote, each
    /// checked, a bit per block kept to know them (fio's do_verify loop).
    #[arg(long)]
    pub verify: bool,

    /// A worker stops after this many I/O errors on its target; the others go on.
    #[arg(long, allow_hyphen_values = true, value_name = "N", default_value = "1", value_parser = parse_max_errors)]
    pub max_errors: u64,

    /// I/O errors a worker counts and goes on after: `read=EIO:EILSEQ,write=ENOSPC`
    /// (fio's continue_on_error= with ignore_error=). They are counted apart
    /// (ignored_errors), not toward --max-errors, and do not fail the run;
    /// any other error still does.
    #[arg(long, value_name = "LIST", value_parser = parse_ignore_errors)]
    pub ignore_errors: Option<crate::measure::config::IgnoredErrors>,

    /// Testing only: worker 0 fails every I/O from the Nth on with EIO.
    #[arg(long, value_name = "N", hide = true, value_parser = parse_max_errors)]
    pub debug_fail_from: Option<u64>,

    /// Testing only: worker 0's Nth write reaches the target with a byte of
    /// its block flipped (past --verify's header), as a device that
    /// corrupts data would leave it.
    #[arg(long, value_name = "N", hide = true, value_parser = parse_max_errors)]
    pub debug_corrupt_write: Option<u64>,

    /// Testing only: worker 0 panics while it builds its engine, before it is ready.
    #[arg(long, hide = true)]
    pub debug_die_in_setup: bool,

    /// Testing only (io_uring): worker 0's Nth I/O, and every one after it,
    /// never completes (a read from a pipe no one writes), as on a hung device.
    #[arg(long, value_name = "N", hide = true, value_parser = parse_max_errors)]
    pub debug_hang_from: Option<u64>,

    /// Testing only: every worker's I/O is served by a mock engine that
    /// touches no device and completes each I/O this long after it was
    /// queued, on a virtual clock: the run's figures follow from its options.
    #[arg(long, value_name = "LATENCY", hide = true, value_parser = parse_positive_duration)]
    pub debug_mock_engine: Option<Duration>,

    /// A worker that gets no completion for this long gives up on the I/O
    /// it has in flight, reports it as hung (with its offsets) and leaves
    /// its buffers to the kernel; the run reports everything else and exits
    /// 1 (128 + the signal's number when a signal ended it). A run with a
    /// hung member thus ends at most about this long after its deadline or
    /// a signal. io_uring needs Linux 5.11 (a wait with a timeout); with the
    /// sync engine, a pread/pwrite still held this long after the deadline
    /// is reported with what the worker counted before it, and its thread
    /// is left in the call (the process ends without waiting for it).
    #[arg(long, allow_hyphen_values = true, value_name = "TIME", default_value = "30s", value_parser = parse_positive_duration)]
    pub hang_timeout: Duration,

    /// I/O buffers in huge pages: auto (for a --bs of 128 KiB or more, when
    /// the system gives them; else 4 KiB pages), on (or refuse to run), off. A buffer in one huge page
    /// reaches the device as one request; one of scattered 4 KiB pages may
    /// be split by the queue's segment limit.
    #[arg(long, value_name = "auto|on|off", default_value = "auto")]
    pub hugepages: crate::engine::buffer::HugePages,

    /// Allow writes that destroy data: to block devices, and to existing files
    /// that stripebench did not create.
    #[arg(long)]
    pub allow_destructive: bool,

    /// Read a file target even when part of its region is holes or
    /// unwritten (fallocated) extents, which read as zeros without any I/O
    /// to a device; a warning says how much. Without it such a read is refused.
    #[arg(long)]
    pub allow_holes: bool,

    /// Write over a recognised signature (file system, RAID, LVM, LUKS,
    /// swap, partition table) on a block device or an image file; needs
    /// --allow-destructive too. Never overrides "in use" (mounted, held,
    /// active swap, a loop device attached to the file).
    #[arg(long)]
    pub force_signature: bool,

    /// Check the targets and print what would run and which write-guard
    /// checks pass, without any I/O. Exits 0 when everything passes, 2 otherwise.
    #[arg(long)]
    pub dry_run: bool,

    /// Print the fio command line that runs the same workload (same
    /// targets, bs, rw, depth, engine, direct, duration, ramp, CPUs, rate,
    /// region, jobs, offset draw and write buffers) and exit without any
    /// I/O. Options fio has no equivalent for are named in `#` lines before it.
    #[arg(long)]
    pub print_fio: bool,

    /// `--json`, `--csv`, `--plot`, `--html`: one option per registered
    /// document format ([`crate::report::FORMATS`]), built from that table.
    #[command(flatten)]
    pub formats: FormatArgs,

    /// Stream one line per second (or --live-interval) per worker, per
    /// target and the total while the run goes (bytes, IOPS, that
    /// interval's p50/p99/max) to PATH,
    /// a file or a FIFO, or `-` for stdout (the table then goes to stderr).
    /// A reader too slow for it loses lines, counted; the run never waits.
    #[arg(long, value_name = "PATH|-")]
    pub live: Option<PathBuf>,

    /// The --live stream's format: JSON lines, or CSV with a header line.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = LiveFormat::Jsonl)]
    pub live_format: LiveFormat,

    /// The --live stream's interval, from 10ms to 1h: one line per worker,
    /// per target and the total for each (its bytes, IOPS, MB/s and its own
    /// p50/p99/max). --metrics stays at 1s: it cannot be given with another
    /// interval.
    #[arg(long, value_name = "TIME", default_value = "1s", value_parser = parse_live_interval)]
    pub live_interval: Duration,

    /// The --json document's per-worker interval series, from 10ms to 1h in
    /// whole milliseconds: each record holds the interval's bytes, I/Os and
    /// its own p50/p99/max latency. diff and merge read intervals that
    /// divide a second (10ms, 100ms, 250ms, 1s, ...). --metrics stays at 1s.
    #[arg(long, value_name = "TIME", default_value = "1s", value_parser = parse_log_interval)]
    pub log_interval: Duration,

    /// Write one of fio's logs, in fio's log format, from the --log-interval
    /// intervals: bw (KiB/s), lat (the mean latency in ns; as fio, three
    /// files: PREFIX_slat, written empty as stripebench does not measure
    /// submission apart, PREFIX_clat and PREFIX_lat, both the issue to
    /// completion latency) or iops, to PREFIX_bw.N.log (N the worker, from
    /// 1), as fio's write_bw_log=PREFIX with log_avg_msec at the
    /// --log-interval: one line per interval, `time (ms at its end), value,
    /// direction, 0, 0`. Repeat for several logs. A mixed pattern needs
    /// --fio-log-format each (the intervals count reads and writes
    /// together); needs TARGETs.
    #[arg(long, value_name = "KIND=PREFIX", value_parser = crate::report::fio_log::parse_log)]
    pub fio_log: Vec<(crate::report::fio_log::LogKind, PathBuf)>,

    /// --fio-log's columns and names, a comma list of fio's log options:
    /// shared (per_job_logs=0: one PREFIX_bw.log for every worker), offset
    /// (log_offset=1: an offset column, 0), prio (log_prio=1: the priority
    /// as 0x0000, not 0), issue-time (log_issue_time=1: a column, 0), avg,
    /// max or both (log_window_value: the latency log's mean, max, or
    /// both), each (fio's default without log_avg_msec: a line per I/O of
    /// the window, `time, value, direction, bytes[, offset], priority[,
    /// issue time]`, the priority each command's own; the records are kept
    /// in memory, 1Mi I/Os over all workers), first=N (the first worker's
    /// N; fio numbers a job by its place in the job file).
    #[arg(long, value_name = "LIST", value_parser = crate::report::fio_log::parse_format, requires = "fio_log")]
    pub fio_log_format: Option<crate::report::fio_log::Spec>,

    /// Write fio's iolog (fio 3.x's "fio version 3 iolog", as fio's
    /// write_iolog=FILE writes it) of every I/O issued: `µs FILE read|write
    /// OFFSET LENGTH`, the workers' I/Os merged by issue time, written when
    /// the run ends. fio --read_iolog=FILE replays it. Held in memory until
    /// then: at most 4Mi I/Os over all workers (at least 64Ki each); past
    /// that the log is cut short and a warning says how many are missing.
    #[arg(long, value_name = "FILE")]
    pub iolog_write: Option<PathBuf>,

    /// Replay fio's iolog (fio's read_iolog=FILE; versions 2 and 3, as fio
    /// or --iolog-write wrote it): the worker issues the log's reads and
    /// writes, in order, at the log's offsets and size (--bs and --rw are
    /// the log's), as fast as the target takes them (fio's
    /// replay_no_stall=1: the log's times are not waited for). One pass of
    /// the log, unless --duration, --passes, --io-limit or --ios says
    /// otherwise. Every line is checked: one file, the one TARGET, one
    /// size, reads and writes only, inside the target; the first that is
    /// not is refused by its number. A log that writes needs
    /// --allow-destructive as any write does.
    #[arg(long, value_name = "FILE")]
    pub iolog_read: Option<PathBuf>,

    /// Rewrite an OpenMetrics/Prometheus text file every second (atomically,
    /// for node_exporter's textfile collector): bytes, I/O and error counters
    /// and a latency histogram per worker. Always every 1s: not with
    /// another --live-interval.
    #[arg(long, value_name = "FILE.prom")]
    pub metrics: Option<PathBuf>,

    /// Record each target's result in this history database (SQLite),
    /// keyed by the disk's identity (WWN, else serial and model), for
    /// `stripebench history`. Default: $STRIPEBENCH_HISTORY, else
    /// /var/lib/stripebench/history.db as root, else
    /// $XDG_STATE_HOME/stripebench/history.db. A damaged or busy database
    /// costs no measurement: one line says so and the documents are written.
    #[arg(long, value_name = "FILE.db", conflicts_with = "no_history")]
    pub history: Option<PathBuf>,

    /// Record nothing in the history database.
    #[arg(long)]
    pub no_history: bool,

    /// Read options from a TOML file (keys are the long option names, e.g.
    /// rw = "read", bs = "1m", targets = ["/dev/sdb"], param = ["bs=64k,1m"]).
    /// The command line wins, option by option: an option given there
    /// replaces the file's value and the file's options it conflicts with
    /// (--direct replaces buffered = true); --param NAME=... replaces the
    /// file's param of that NAME (other names are kept, new ones added);
    /// targets named there replace the file's targets.
    #[arg(long, value_name = "FILE.toml")]
    pub config: Option<PathBuf>,

    /// Read the workload from a fio job file (run and sweep): `[global]`
    /// and one section per job, fio's options translated to these (fio's
    /// units: bs=4k is 4096 bytes), `filename=` as the targets. The
    /// stripebench command it stands for is printed on stderr first;
    /// options typed here win, and targets typed here replace `filename=`.
    /// Jobs without `stonewall` between them run as one run when they are
    /// one workload on different files; each `stonewall` group is a run
    /// of its own, after the one before (output paths numbered: r.json
    /// becomes r.1.json, r.2.json); `sweep` takes groups that differ in
    /// one parameter as its points. An option stripebench cannot honour is
    /// refused by name.
    #[arg(long, value_name = "FILE.fio")]
    pub fio_job: Option<PathBuf>,

    /// Print each target's latency distribution as text.
    #[arg(long)]
    pub histogram: bool,

    /// The text table's rows: past N workers it shows each column's min,
    /// p10, median, p90 and max, the slowest and fastest few, and the
    /// total; `all` shows every row. JSON, CSV and HTML hold every worker.
    #[arg(long, value_name = "N|all", default_value = "32", value_parser = parse_rows)]
    pub rows: Rows,

    /// No live progress line on stderr (it is only shown on a terminal anyway).
    #[arg(long)]
    pub no_progress: bool,

    /// Directory for the built-in test bed (default: $TMPDIR, else /tmp).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Size of each built-in test-bed file.
    #[arg(long, allow_hyphen_values = true, value_name = "SIZE", default_value = "256m", value_parser = parse_size)]
    pub testbed_size: u64,

    /// Number of built-in test-bed files (default: one per CPU, at least 2).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = parse_count)]
    pub testbed_files: Option<usize>,
}

/// `run` with no option given: every field as clap fills it from the
/// defaults above, for the options a program builds in code
/// ([`crate::cli::builder::RunBuilder`]) rather than from a command line.
/// A test holds it equal to what clap parses from `stripebench run`.
impl Default for RunArgs {
    fn default() -> Self {
        RunArgs {
            targets: Vec::new(),
            named: Vec::new(),
            members: None,
            stripe: None,
            align: None,
            cached: false,
            drop_caches: false,
            rw: RwMode::Read,
            mix: 50,
            bs: None,
            direct: false,
            buffered: false,
            uncached: false,
            duration: None,
            ramp: None,
            readahead: None,
            stripe_cache_size: None,
            group_thread_cnt: None,
            sync_speed_min: None,
            sync_speed_max: None,
            force_memory: false,
            wait_lock: false,
            start_at: None,
            start_delay: None,
            engine: EngineArg::Auto,
            iodepth: 1,
            rate: None,
            rate_iops: None,
            rate_min: None,
            rate_iops_min: None,
            rate_cycle: None,
            thinktime: None,
            thinktime_spin: None,
            thinktime_blocks: None,
            thinktime_on_issue: false,
            steady: None,
            steady_dur: None,
            steady_ramp: None,
            no_register: false,
            hipri: false,
            sqpoll: None,
            taskrun: "auto".into(),
            complete_min: crate::engine::CompleteMin::Auto,
            sched: "auto".into(),
            nowait: false,
            io_limit: None,
            ios: None,
            passes: None,
            size: None,
            create: None,
            create_layout: None,
            fill_device: false,
            offset: 0,
            jobs: 1,
            jobs_share: false,
            dist: None,
            skip: None,
            zones: None,
            seq_run: None,
            sprandom: false,
            spr_op: None,
            spr_regions: None,
            random_map: false,
            bssplit: None,
            blockalign: None,
            offset_increment: None,
            cpus: None,
            no_pin: false,
            numa_nodes: None,
            numa_mem: None,
            ioprio: None,
            cmdprio: None,
            cmdprio_bssplit: None,
            seed: None,
            buffer_compress: 0,
            pattern: None,
            dedupe: 0,
            dedupe_working_set: None,
            dedupe_global: false,
            verify: false,
            max_errors: 1,
            ignore_errors: None,
            latency_target: None,
            latency_window: None,
            latency_percentile: None,
            latency_run: false,
            debug_fail_from: None,
            debug_corrupt_write: None,
            debug_die_in_setup: false,
            debug_hang_from: None,
            debug_mock_engine: None,
            hang_timeout: Duration::from_secs(30),
            hugepages: crate::engine::buffer::HugePages::Auto,
            allow_destructive: false,
            allow_holes: false,
            force_signature: false,
            dry_run: false,
            print_fio: false,
            formats: FormatArgs::default(),
            live: None,
            live_format: LiveFormat::Jsonl,
            live_interval: Duration::from_secs(1),
            log_interval: Duration::from_secs(1),
            fio_log: Vec::new(),
            fio_log_format: None,
            iolog_write: None,
            iolog_read: None,
            metrics: None,
            history: None,
            no_history: false,
            config: None,
            fio_job: None,
            histogram: false,
            rows: Rows(Some(32)),
            no_progress: false,
            dir: None,
            testbed_size: 256 << 20,
            testbed_files: None,
        }
    }
}

impl RunArgs {
    /// The output options, for `output::Outputs` to check and write.
    pub fn outputs(&self) -> crate::output::Request {
        crate::output::Request {
            formats: self.formats.given.clone(),
            live: self.live.clone(),
            live_format: self.live_format,
            live_interval: self.live_interval,
            metrics: self.metrics.clone(),
            histogram: self.histogram,
            rows: self.rows.0,
            fio_log: self.fio_logs(),
            iolog: self.iolog_write.clone(),
            history: history_where(self.history.as_ref(), self.no_history),
        }
    }

    /// `--fio-log`'s files, one set per worker: each TARGET's `--jobs`.
    fn fio_logs(&self) -> Option<crate::output::FioLogs> {
        if self.fio_log.is_empty() {
            return None;
        }
        let spec = crate::report::fio_log::Spec {
            logs: self.fio_log.clone(),
            ..self.fio_log_format.clone().unwrap_or_default()
        };
        let files = spec.files(self.targets.len() * self.jobs);
        Some(crate::output::FioLogs { spec, files })
    }

    /// Refuses the run options a subcommand that reuses them cannot honour,
    /// so no option on its help is silently ignored.
    pub fn refuse_for(
        &self,
        command: &str,
        unsupported: &[&str],
    ) -> Result<(), crate::base::error::UsageError> {
        let given = |name: &str| match name {
            "dry-run" => self.dry_run,
            "print-fio" => self.print_fio,
            _ if crate::report::format(name).is_some() => self.formats.get(name).is_some(),
            "histogram" => self.histogram,
            "fio-log" => !self.fio_log.is_empty(),
            "iolog-write" => self.iolog_write.is_some(),
            "iolog-read" => self.iolog_read.is_some(),
            "stripe" => self.stripe.is_some(),
            "start-at" => self.start_at.is_some(),
            "verify" => self.verify,
            "fill-device" => self.fill_device,
            "cached" => self.cached,
            "io-limit" => self.io_limit.is_some(),
            "ios" => self.ios.is_some(),
            "start-delay" => self.start_delay.is_some(),
            "passes" => self.passes.is_some(),
            "members" => self.members.is_some(),
            "align" => self.align.is_some(),
            _ => false,
        };
        match unsupported.iter().find(|n| given(n)) {
            Some(n) => Err(crate::base::error::UsageError(format!(
                "{command} does not take --{n}: use it with 'stripebench run'"
            ))),
            None => Ok(()),
        }
    }
}

/// `--history` and `--no-history` as the output request holds them.
pub fn history_where(path: Option<&PathBuf>, off: bool) -> crate::output::history::Where {
    use crate::output::history::Where;
    match (path, off) {
        (_, true) => Where::Off,
        (Some(p), false) => Where::Path(p.clone()),
        (None, false) => Where::Default,
    }
}

/// The options of the registered document formats, one `--FLAG PATH` each
/// (`-`: stdout), made from [`crate::report::FORMATS`] with clap's builder:
/// a format registered there is an option here, its help its entry's.
#[derive(Debug, Clone, Default)]
pub struct FormatArgs {
    /// The formats given, in the registry's order, each with its path.
    pub given: Vec<(&'static Format, PathBuf)>,
}

impl FormatArgs {
    /// The path given to `flag`, if it was given.
    pub fn get(&self, flag: &str) -> Option<&std::path::Path> {
        self.given
            .iter()
            .find(|(f, _)| f.flag() == flag)
            .map(|(_, p)| p.as_path())
    }
}

impl clap::FromArgMatches for FormatArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut a = FormatArgs::default();
        a.update_from_arg_matches(m)?;
        Ok(a)
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        for f in FORMATS {
            if let Some(p) = m.get_one::<PathBuf>(f.flag()) {
                self.given.retain(|(g, _)| g.option != f.option);
                self.given.push((f, p.clone()));
            }
        }
        self.given
            .sort_by_key(|(f, _)| FORMATS.iter().position(|g| g.option == f.option));
        Ok(())
    }
}

impl clap::Args for FormatArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        FORMATS.iter().fold(cmd, |cmd, f| {
            cmd.arg(
                clap::Arg::new(f.flag())
                    .long(f.flag())
                    .value_name(f.value_name)
                    .help(f.help)
                    .action(clap::ArgAction::Set)
                    .value_parser(clap::value_parser!(PathBuf)),
            )
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// `--align`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AlignArg {
    /// Worker regions start and end on full stripes (chunk x members).
    Stripe,
}

/// `--engine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// uring when --iodepth > 1, sync otherwise.
    Auto,
    /// pread/pwrite, one I/O in flight per worker.
    Sync,
    /// io_uring, --iodepth I/Os in flight per worker, submitted and reaped in batches.
    Uring,
}

/// `--numa-nodes`: a parsed NUMA node list (a newtype, so clap takes it
/// as one value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeList(pub Vec<usize>);

pub(crate) fn parse_numa_nodes(text: &str) -> Result<NodeList, String> {
    crate::base::thread_setup::parse_node_list(text).map(NodeList)
}

pub(crate) fn parse_mem_policy(text: &str) -> Result<crate::base::thread_setup::MemPolicy, String> {
    crate::base::thread_setup::MemPolicy::parse(text)
}

pub(crate) fn parse_ioprio(text: &str) -> Result<crate::base::thread_setup::IoPrio, String> {
    crate::base::thread_setup::IoPrio::parse(text)
}

pub(crate) fn parse_cmdprio_bssplit(
    text: &str,
) -> Result<crate::base::thread_setup::CmdPrioSplit, String> {
    use crate::base::thread_setup::{prio_value, CmdPrioSplit, CLASS_RT};
    CmdPrioSplit::parse(text, &parse_size, prio_value(CLASS_RT, 0, 0))
}

pub(crate) fn parse_cmdprio(text: &str) -> Result<crate::base::thread_setup::CmdPrio, String> {
    crate::base::thread_setup::CmdPrio::parse(text)
}

/// `--cpus`: a parsed CPU list (a newtype, so clap takes it as one value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// `--latency-percentile`: a share in percent, above 0 and at most 100.
pub(crate) fn parse_latency_percentile(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err("the percentile must be above 0 and at most 100: try 99.9".into()),
    }
}

pub(crate) fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    positive_duration(parse_duration(text)?)
}

/// A duration longer than 0 (`--duration`, `--hang-timeout`), typed or parsed.
pub(crate) fn positive_duration(d: Duration) -> Result<Duration, String> {
    if d.is_zero() {
        return Err("the duration must be longer than 0: try 10s".into());
    }
    Ok(d)
}

/// `--live-interval`: 10 ms (the collector's resolution) to 1 h.
/// `--steady`: fio's CRITERION:LIMIT.
pub(crate) fn parse_steady(text: &str) -> Result<crate::analysis::steady::Criterion, String> {
    crate::analysis::steady::Criterion::parse(text)
}

pub(crate) fn parse_live_interval(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d < Duration::from_millis(10) || d > Duration::from_secs(3600) {
        return Err(format!(
            "'{text}' is outside 10ms to 1h: give an interval such as 100ms, 1s or 10s"
        ));
    }
    Ok(d)
}

/// `--log-interval`: as `--live-interval`, in whole milliseconds (the
/// document records it as `log_interval_ms`).
pub(crate) fn parse_log_interval(text: &str) -> Result<Duration, String> {
    let d = parse_live_interval(text)?;
    if d.subsec_nanos() % 1_000_000 != 0 {
        return Err(format!(
            "'{text}' is not a whole number of milliseconds: give an interval such as 10ms, 100ms or 1s"
        ));
    }
    Ok(d)
}

/// `--pattern`: fio's pattern syntax, `%o` taken (as in verify_pattern).
fn parse_pattern(text: &str) -> Result<crate::base::pattern::Pattern, String> {
    use crate::base::pattern::{read_pattern_file, Formats, Pattern};
    Pattern::parse(text, Formats::Offset, &read_pattern_file)
        .map_err(|e| format!("{e}; give fio's pattern syntax, e.g. 0xaa55, \"text\", 'file' or %o"))
}

pub(crate) fn parse_pct(text: &str) -> Result<u8, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n <= 100 => Ok(n as u8),
        _ => Err(format!(
            "'{text}' is not a percentage: give a whole number from 0 to 100"
        )),
    }
}

fn parse_dist(text: &str) -> Result<crate::measure::workload::Dist, String> {
    crate::measure::workload::Dist::parse(text.trim(), &parse_size)
}

/// A byte count with a sign: `512k` forward, `-8k` back.
fn parse_blockalign(text: &str) -> Result<u64, String> {
    match parse_size(text)? {
        0 => Err(format!(
            "'{text}' aligns to nothing: give a size such as 4k"
        )),
        n => Ok(n),
    }
}

fn parse_bssplit(text: &str) -> Result<crate::measure::workload::Sizes, String> {
    crate::measure::workload::Sizes::parse(text, &parse_size)
}

pub(crate) fn parse_skip(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let n =
        i64::try_from(parse_size(body)?).map_err(|_| format!("'{text}' is too large a skip"))?;
    if n == 0 {
        return Err(format!(
            "'{text}' skips nothing: give a size such as 512k or -8k, or no --skip"
        ));
    }
    Ok(if neg { -n } else { n })
}

/// `--zones SIZE:SKIP[:RANGE]`: sizes as everywhere; SKIP may be 0.
pub(crate) fn parse_zones(text: &str) -> Result<crate::measure::workload::Strided, String> {
    let parts: Vec<&str> = text.split(':').map(str::trim).collect();
    let bad = || {
        format!("'{text}' is not SIZE:SKIP or SIZE:SKIP:RANGE: give e.g. 256m:2g (256 MiB read in every 2.25 GiB)")
    };
    let (size, skip, range) = match parts[..] {
        [a, b] => (a, b, a),
        [a, b, c] => (a, b, c),
        _ => return Err(bad()),
    };
    let skip = if skip == "0" { 0 } else { parse_size(skip)? };
    let (size, range) = (parse_size(size)?, parse_size(range)?);
    if size == 0 || range == 0 {
        return Err(format!(
            "'{text}' has a zone of no bytes: give a SIZE (and RANGE) of a request or more"
        ));
    }
    // Zone k starts k x (RANGE + SKIP) on: a step past 2^62 is no disk's.
    if range.checked_add(skip).is_none_or(|step| step > 1 << 62) {
        return Err(format!(
            "'{text}': RANGE + SKIP is past any device's size: give sizes a device has"
        ));
    }
    Ok(crate::measure::workload::Strided { size, range, skip })
}

fn parse_seq_run(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if (1..=1 << 32).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{text}' is not a count of I/Os: give a whole number from 1 up"
        )),
    }
}

pub(crate) fn parse_count(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if COUNT.contains(&n) => Ok(n),
        _ => Err(not_a_count(text)),
    }
}

/// What `--jobs` and `--testbed-files` take.
pub(crate) const COUNT: std::ops::RangeInclusive<usize> = 1..=4096;

pub(crate) fn not_a_count(text: &str) -> String {
    format!("'{text}' is not a count: give a whole number from 1 to 4096")
}

pub(crate) fn parse_cpus(text: &str) -> Result<CpuList, String> {
    crate::base::cpus::parse_cpu_list(text).map(CpuList)
}

pub(crate) fn parse_depth(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if DEPTH.contains(&n) => Ok(n),
        _ => Err(not_a_depth(text)),
    }
}

/// What `--iodepth` takes.
pub(crate) const DEPTH: std::ops::RangeInclusive<usize> = 1..=4096;

pub(crate) fn not_a_depth(text: &str) -> String {
    format!("'{text}' is not a queue depth: give a whole number from 1 to 4096")
}

/// `--start-delay`: TIME, or A-B (fio's startdelay range), each up to a
/// day (a longer wait is a typo, as for --start-at).
pub(crate) fn parse_start_delay(text: &str) -> Result<(Duration, Duration), String> {
    let t = text.trim();
    // A range's dash is the one after its first character (no negative times).
    let (lo, hi) = match t.get(1..).and_then(|rest| rest.find('-')) {
        Some(i) => (parse_duration(&t[..=i])?, parse_duration(&t[i + 2..])?),
        None => {
            let d = parse_duration(t)?;
            (d, d)
        }
    };
    if lo > hi {
        return Err(format!(
            "'{text}' is a range from a longer time to a shorter one: give A-B with A at most B, such as 1s-5s"
        ));
    }
    if hi > Duration::from_secs(86_400) {
        return Err(format!(
            "'{text}' is more than a day: give a delay of at most 24h"
        ));
    }
    Ok((lo, hi))
}

pub(crate) fn parse_nonzero_size(text: &str) -> Result<u64, String> {
    match parse_size(text)? {
        0 => Err("the size must be larger than 0".into()),
        n => Ok(n),
    }
}

pub(crate) fn parse_ignore_errors(
    text: &str,
) -> Result<crate::measure::config::IgnoredErrors, String> {
    crate::measure::config::IgnoredErrors::parse(text)
}

pub(crate) fn parse_max_errors(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(not_at_least_one(text)),
    }
}

/// What `--max-errors` and `--passes` refuse: a count below 1.
pub(crate) fn not_at_least_one(text: &str) -> String {
    format!("'{text}' is not a count: give a whole number of at least 1")
}

pub(crate) fn parse_readahead(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n <= READAHEAD_MAX_KB => Ok(n),
        _ => Err(not_a_readahead(text)),
    }
}

/// The largest `--readahead` taken, in KiB.
pub(crate) const READAHEAD_MAX_KB: u64 = 1 << 30;

pub(crate) fn not_a_readahead(text: &str) -> String {
    format!("'{text}' is not a read-ahead: give a whole number of KiB, such as 128 or 4096")
}

pub(crate) fn parse_stripe_cache_size(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if stripe_cache_size_ok(n) => Ok(n),
        _ => Err(not_a_stripe_cache_size(text)),
    }
}

/// What md takes as `stripe_cache_size`.
pub(crate) fn stripe_cache_size_ok(n: u64) -> bool {
    use crate::device::md_tunables::{STRIPE_CACHE_MAX, STRIPE_CACHE_MIN};
    (STRIPE_CACHE_MIN..=STRIPE_CACHE_MAX).contains(&n)
}

pub(crate) fn not_a_stripe_cache_size(text: &str) -> String {
    use crate::device::md_tunables::{STRIPE_CACHE_MAX, STRIPE_CACHE_MIN};
    format!("'{text}' is not a stripe cache size: md takes {STRIPE_CACHE_MIN} to {STRIPE_CACHE_MAX} stripe heads, such as 256 or 4096")
}

pub(crate) fn parse_group_thread_cnt(text: &str) -> Result<u64, String> {
    use crate::device::md_tunables::GROUP_THREAD_MAX;
    match text.trim().parse::<u64>() {
        Ok(n) if n <= GROUP_THREAD_MAX => Ok(n),
        _ => Err(format!(
            "'{text}' is not a thread count: md takes 0 to {GROUP_THREAD_MAX} threads per group"
        )),
    }
}

/// md's resync limit: a whole number of KiB/s (1 and up), or `system`
/// (md's own 0).
pub(crate) fn parse_sync_speed(text: &str) -> Result<u64, String> {
    use crate::device::md_tunables::{SYNC_SPEED_MAX, SYNC_SYSTEM};
    let t = text.trim();
    if t == "system" {
        return Ok(SYNC_SYSTEM);
    }
    match t.parse::<u64>() {
        Ok(n) if (1..=SYNC_SPEED_MAX).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{text}' is not a resync speed: give KiB/s per member device as md takes them (1 to {SYNC_SPEED_MAX}, such as 10000), or system"
        )),
    }
}

pub(crate) fn parse_start_at(text: &str) -> Result<std::time::SystemTime, String> {
    let t = text.trim();
    if let Ok(secs) = t.parse::<f64>() {
        if (0.0..1e11).contains(&secs) {
            return Ok(std::time::UNIX_EPOCH + Duration::from_secs_f64(secs));
        }
    }
    humantime::parse_rfc3339_weak(t).map_err(|_| {
        format!("'{text}' is not a time: give Unix seconds (1795000000) or RFC 3339 (2026-11-30T17:00:00Z)")
    })
}

pub(crate) fn parse_seed(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| format!("'{text}' is not a seed: give a whole number from 0 to 2^64-1"))
}

pub fn parse_bs(text: &str) -> Result<BlockSizeArg, String> {
    if text.trim().eq_ignore_ascii_case("lbs") {
        return Ok(BlockSizeArg::Logical);
    }
    block_size(parse_size(text)?)
}

/// A block size of `bytes`, typed or parsed: larger than 0.
pub(crate) fn block_size(bytes: u64) -> Result<BlockSizeArg, String> {
    match bytes {
        0 => Err("the block size must be larger than 0: try 4k, 1m, or lbs for the device's logical block size".into()),
        n => Ok(BlockSizeArg::Bytes(n)),
    }
}

/// `--rows`: at most this many rows (`None`: all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rows(pub Option<usize>);

/// `--rows N` (at least 1) or `--rows all`.
pub fn parse_rows(s: &str) -> Result<Rows, String> {
    if s == "all" {
        return Ok(Rows(None));
    }
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(Rows(Some(n))),
        _ => Err(format!(
            "'{s}' is not a number of rows (1 or more) or 'all'"
        )),
    }
}
