//! `RunArgs` (what clap parsed) → a validated [`RunConfig`]: defaults
//! resolved, combinations checked, every refusal one line. No I/O happens
//! here; checks that need the targets are made by the layout.

use std::path::PathBuf;
use std::time::Duration;

use crate::base::cpus;
use crate::base::error::{ExitCoded, EXIT_USAGE};
use crate::cli::{EngineArg, RunArgs};
use crate::engine::{CompleteMin, EngineKind, RingSetup, TaskRun};
use crate::measure::config::*;
use crate::measure::iolog::Replay;

/// What is wrong with the options typed, before any I/O: each message
/// says what to do instead. All are the user's mistakes (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("verify reads: drop --rw {0} (write with 'stripebench run --rw write --verify')")]
    VerifyWrites(&'static str),
    #[error("verify needs the targets to check: name them")]
    VerifyWithoutTargets,
    #[error("verify reads each slice once: drop --io-limit, --ios and --passes")]
    VerifyBounded,
    #[error("--metrics - : the metrics file is rewritten every second and cannot go to stdout; name a file (e.g. /var/lib/node_exporter/textfile/stripebench.prom), or use --live - for a stream")]
    MetricsToStdout,
    #[error("--iolog-write - : the iolog is a file fio reads back (read_iolog=), not a stream: name a file")]
    IologToStdout,
    #[error("--fio-log writes a log per worker of the TARGETs named: name them (not with --members or the built-in test bed)")]
    FioLogWithoutTargets,
    #[error("--fio-log with --rw {0}: the intervals count reads and writes together, and fio logs each direction apart: give --fio-log-format each for a line per I/O, drop --fio-log, or log a read or a write run")]
    FioLogMixed(&'static str),
    #[error("--metrics is rewritten every 1s and shares the --live collector: drop --live-interval {0} or --metrics")]
    MetricsInterval(String),
    /// `--cpus` names CPUs this process may not use (the text says which).
    #[error("{0}")]
    Cpus(String),
    /// `--numa-nodes`/`--numa-mem` name a node this machine has not (the
    /// text says which).
    #[error("{0}")]
    Numa(String),
    #[error("--cmdprio and --cmdprio-bssplit set each command's priority in io_uring's SQE; the sync engine issues plain pread/pwrite, which carry only the thread's priority: use --engine uring, or --ioprio for every I/O")]
    CmdprioWithSync,
    #[error("--mix only applies to --rw randrw (got --rw {0}): drop --mix or use --rw randrw")]
    MixWithoutRandrw(&'static str),
    #[error("--size 0 leaves nothing to test: give a size such as 1g, or leave it out to use the whole target")]
    SizeZero,
    #[error("--stripe models a RAID0 over several members: name two or more TARGETs (or --members VOLUME)")]
    StripeOfOne,
    #[error("--stripe gives each member one worker: drop --jobs")]
    StripeWithJobs,
    #[error("--jobs-share lets several --jobs cover one region: give --jobs 2 or more, or drop --jobs-share")]
    ShareOfOne,
    #[error("--verify needs one writer per block, and --jobs-share gives each block --jobs of them: drop one")]
    ShareWithVerify,
    /// `--rate-min`/`--rate-iops-min` cannot be met, or `--rate-cycle` has
    /// no minimum (the text says how).
    #[error("{0}")]
    RateMin(String),
    /// `--thinktime` with what it cannot go with (the text says how).
    #[error("{0}")]
    Think(String),
    /// `--random-map` with what it cannot go with (the text says how).
    #[error("{0}")]
    RandomMap(String),
    /// `--latency-target` with what it cannot go with (the text says how).
    #[error("{0}")]
    LatencyTarget(String),
    /// `--steady`'s window and the run's do not fit (the text says how).
    #[error("{0}")]
    Steady(String),
    /// `--iolog-read`: the log, or the run with it (the text says which).
    #[error("{0}")]
    Iolog(String),
    /// `--sprandom` with what it cannot go with (the text says how).
    #[error("{0}")]
    Sprandom(String),
    #[error("--dist shapes random offsets, and --rw {0} is sequential: use --rw randread, randwrite or randrw, or drop --dist")]
    DistSequential(&'static str),
    #[error("--skip moves sequential offsets, and --rw {0} is random: use --rw read, write or rw, or --seq-run for runs between random offsets")]
    SkipRandom(&'static str),
    #[error("--seq-run sets how often random offsets are drawn, and --rw {0} is sequential: use a random --rw, or --skip")]
    SeqRunSequential(&'static str),
    #[error("--skip with --stripe: a modelled RAID0's passes are whole stripes; drop one")]
    SkipWithStripe,
    #[error("--verify checks every block of a pass in order, and a negative --skip goes back over blocks: drop one")]
    SkipWithVerify,
    #[error("--zones walks zones in order, and --rw {0} is not one direction in order: use --rw read or write")]
    ZonesPattern(&'static str),
    #[error("--zones with {0}: {1}; drop one")]
    ZonesWith(&'static str, &'static str),
    #[error("--offset-increment places each of several jobs: give --jobs 2 or more, or drop it")]
    IncrementOfOne,
    #[error("--bssplit with {0}: {1}")]
    SplitWith(&'static str, &'static str),
    #[error("--verify needs one writer per block, and --offset-increment {0} lets jobs' regions overlap (allowed for --rw write or read alone): give --size at most the increment, or drop one")]
    IncrementOverlapsVerify(u64),
    #[error("--members names the volume whose members are driven: name no TARGET with it")]
    MembersWithTargets,
    #[error("--testbed-size {0} is too small: give at least 1m")]
    TestbedTooSmall(u64),
    #[error("--dir and --testbed-files are for the built-in test bed: leave them out when naming targets")]
    TestbedOptionsWithTargets,
    #[error("--iodepth {0} needs an engine that keeps several I/Os in flight: use --engine uring (or --engine auto), or --iodepth 1")]
    DepthWithSync(usize),
    #[error("--debug-hang-from needs --engine uring: a hung pread would hang the test itself")]
    HangWithoutUring,
    #[error("--no-register only applies to --engine uring")]
    RegisterWithoutUring,
    /// `{0}`: the io_uring option given.
    #[error("{0} is an io_uring option: use --engine uring (or --engine auto), or drop {0}")]
    RingWithoutUring(&'static str),
    #[error("--hipri polls for O_DIRECT completions: the page cache completes buffered I/O itself; drop --hipri, or --buffered/--uncached")]
    HipriBuffered,
    /// `{0}`: coop or defer.
    #[error("--taskrun {0} cannot go with --sqpoll: the kernel refuses a submission thread with deferred or cooperative task work; use --taskrun plain (or auto) with --sqpoll")]
    TaskrunWithSqpoll(String),
    #[error("--sqpoll={cpu}: CPU {cpu} is not one this process may run on (allowed: {allowed}): name one of those")]
    SqpollCpu { cpu: usize, allowed: String },
    #[error("--complete-min {n} is more than --iodepth {depth}: a worker cannot wait for more I/Os than it keeps in flight; give at most {depth}")]
    CompleteMinDepth { n: u32, depth: usize },
    #[error("--complete-min {0} holds back issuing until that many complete, which a --rate schedule cannot wait for: drop one of them")]
    CompleteMinRate(u32),
    #[error("--sched batch cannot go with --sqpoll: the kernel submission thread inherits SCHED_BATCH and, polling on the worker's CPU, is not let in when the worker waits (two orders of magnitude slower on zram); use --sched normal (or auto) with --sqpoll")]
    SchedBatchSqpoll,
    /// `{0}` is what is wrong with the run for --fill-device.
    #[error("--fill-device {0}")]
    FillDevice(String),
    /// `{0}` is the bound given: `--passes`, `--io-limit` or `--ios`.
    #[error("{0} counts every I/O from the start, so it takes no --ramp: drop --ramp")]
    RampWithBound(&'static str),
    #[error("--duration {shown} is too short to measure (a rate over a window of a few I/Os means nothing): give at least {min_ms}ms")]
    DurationTooShort { shown: String, min_ms: u128 },
    #[error("--verify writes whole passes (or a mix's writes) and reads them back: use --rw write, randwrite, rw, randrw (or read), not --rw {0}")]
    VerifyRw(&'static str),
    /// `{0}` is what breaks the whole passes: an option or its absence.
    #[error("--verify with --rw randwrite writes every block once a pass, in a random order, and the read-back calls a block with no header between written ones lost: {0}")]
    VerifyRandomPasses(&'static str),
    /// `{0}` is what breaks the mix's passes.
    #[error("--verify with --rw randrw reads back, after each pass over the region (every block once, read or written), the blocks that pass wrote: {0}")]
    VerifyRandomMix(&'static str),
    #[error(
        "--verify writes self-describing blocks of its own: drop --buffer-compress and --dedupe"
    )]
    VerifyWithSyntheticData,
    /// `{0}`: what is wrong with the working set asked for.
    #[error("--dedupe-working-set {0}")]
    DedupeSet(&'static str),
    #[error(
        "--pattern is all that every written block holds: drop --buffer-compress and --dedupe"
    )]
    PatternWithSyntheticData,
    #[error("--cached measures page-cache reads: use it with --buffered and a read --rw")]
    CachedWithoutBufferedRead,
    #[error("--start-at is in the past: give a time a little ahead, e.g. $(( $(date +%s) + 30 ))")]
    StartInThePast,
    #[error("--start-at is more than a day ahead: give a time within the next 24 hours")]
    StartTooFarAhead,
    #[error("--rate and --rate-iops both set a schedule: give one")]
    TwoRates,
    /// A schedule that cannot be kept (the text says why and what to give).
    #[error("{0}")]
    Rate(String),
}

impl ExitCoded for ConfigError {
    fn exit_code(&self) -> u8 {
        EXIT_USAGE
    }
}

/// `stripebench verify`: the run options, reading every block once and checking it.
pub fn verify_config(
    args: &RunArgs,
    available: &[usize],
    tmpdir: Option<PathBuf>,
) -> Result<RunConfig, ConfigError> {
    if args.rw != RwMode::Read {
        return Err(ConfigError::VerifyWrites(args.rw.name()));
    }
    if args.targets.is_empty() {
        return Err(ConfigError::VerifyWithoutTargets);
    }
    if args.io_limit.is_some() || args.passes.is_some() || args.ios.is_some() {
        return Err(ConfigError::VerifyBounded);
    }
    if args.steady.is_some() {
        return Err(ConfigError::Steady(
            "verify checks every block once: --steady would end the check before its last block; drop --steady".into(),
        ));
    }
    if args.rate_min.is_some() || args.rate_iops_min.is_some() {
        return Err(ConfigError::RateMin(
            "verify checks every block once: a cycle below --rate-min would end the check before its last block; drop --rate-min (--rate-iops-min)".into(),
        ));
    }
    let mut cfg = run_config(args, available, tmpdir)?;
    cfg.verify = true;
    cfg.passes = Some(1);
    if args.ramp.is_none() {
        cfg.ramp = Duration::ZERO;
    }
    if args.duration.is_none() {
        cfg.duration = NO_TIME_LIMIT;
    }
    Ok(cfg)
}

/// Validates the parsed arguments. `available` is the list of CPUs this
/// process may use; `default_tmp` the directory for the test bed when
/// neither --dir nor $TMPDIR says otherwise.
///
/// The steps run in this order, so that of several mistakes the same one
/// is reported first as always.
pub fn run_config(
    args: &RunArgs,
    available: &[usize],
    tmpdir: Option<PathBuf>,
) -> Result<RunConfig, ConfigError> {
    check_outputs(args)?;
    let cpus = pinning(args, available)?;
    let thread = thread_setup(args, &crate::base::host::Host::real())?;
    check_targets(args)?;
    let testbed = testbed(args, available, tmpdir)?;
    let bs = block_size(args);
    let engine = engine(args)?;
    let ring = ring_setup(args, available)?;
    let ramp = ramp(args)?;
    check_duration(args)?;
    check_data(args)?;
    check_start_at(args)?;
    let rate = rate(args, bs)?;
    let seed = args.seed.unwrap_or_else(clock_seed);
    let replay = replay(args)?;
    let mut cfg = assemble(
        args,
        Resolved {
            cpus,
            testbed,
            bs,
            engine,
            ring,
            ramp,
            rate,
            seed,
        },
    );
    cfg.thread = thread;
    Ok(with_replay(args, cfg, replay))
}

/// `--numa-nodes`, `--numa-mem`, `--ioprio`: what each worker thread sets
/// on itself. Every node named must be one this machine has (its sysfs
/// directory), so a typo is one line here, not a kernel EINVAL per worker.
fn thread_setup(
    args: &RunArgs,
    host: &crate::base::host::Host,
) -> Result<crate::base::thread_setup::ThreadSetup, ConfigError> {
    use crate::base::thread_setup as ts;
    let numa_cpus = match &args.numa_nodes {
        Some(nodes) => {
            let cpus = ts::nodes_cpus(host, &nodes.0)
                .map_err(|e| ConfigError::Numa(format!("--numa-nodes: {e}")))?;
            if cpus.is_empty() {
                return Err(ConfigError::Numa(format!(
                    "--numa-nodes {}: those nodes have no CPUs (memory-only nodes): name a node with CPUs",
                    crate::base::cpus::format_cpu_list(&nodes.0)
                )));
            }
            Some(cpus)
        }
        None => None,
    };
    if let Some(p) = &args.numa_mem {
        if let Some(n) = p.nodes().iter().find(|&&n| !ts::node_exists(host, n)) {
            return Err(ConfigError::Numa(format!(
                "--numa-mem {p}: NUMA node {n} does not exist on this machine: name a node that `numactl --hardware` lists"
            )));
        }
    }
    Ok(ts::ThreadSetup {
        ioprio: args.ioprio,
        numa_cpus,
        mem_policy: args.numa_mem.clone(),
    })
}

/// `--iolog-read FILE`: the log read (bounded) and checked line by line,
/// and against the run: one TARGET, the log's file.
fn replay(args: &RunArgs) -> Result<Option<Replay>, ConfigError> {
    let Some(path) = &args.iolog_read else {
        return Ok(None);
    };
    let shown = crate::base::error::show_path(path);
    let bad = |why: String| ConfigError::Iolog(format!("--iolog-read {shown}: {why}"));
    const IOLOG: crate::base::input::Kind = crate::base::input::Kind {
        holds: "an iolog fio (write_iolog=) or stripebench (--iolog-write) wrote",
        max: crate::base::input::MAX_DOCUMENT_BYTES,
        pipe: false,
    };
    let bytes = crate::base::input::read(path, &IOLOG).map_err(|e| bad(e.to_string()))?;
    let log = crate::measure::iolog::parse(&bytes).map_err(bad)?;
    let [target] = args.targets.as_slice() else {
        return Err(bad(format!(
            "replays one file's I/O ({}): name that one TARGET",
            log.file
        )));
    };
    let same = std::path::Path::new(&log.file) == target.as_path()
        || matches!(
            (std::fs::canonicalize(&log.file), std::fs::canonicalize(target)),
            (Ok(a), Ok(b)) if a == b
        );
    if !same {
        return Err(bad(format!(
            "is the I/O of {}, and the TARGET is {}: replay it on {}",
            log.file,
            crate::base::error::show_path(target),
            log.file
        )));
    }
    for (given, flag) in [
        (args.stripe.is_some(), "--stripe"),
        (args.verify, "--verify"),
        (args.members.is_some(), "--members"),
    ] {
        if given {
            return Err(bad(format!(
                "issues the log's offsets, which {flag} would choose: drop {flag}"
            )));
        }
    }
    Ok(Some(log))
}

/// The run of a replayed log: its size, its mix of reads and writes (so
/// the write guard sees a log's writes), and, unless bounded otherwise,
/// one pass of it from the first I/O (no ramp, no time limit), as fio
/// replays it.
fn with_replay(args: &RunArgs, mut cfg: RunConfig, log: Option<Replay>) -> RunConfig {
    let Some(log) = log else {
        return cfg;
    };
    cfg.bs = BlockSizeArg::Bytes(log.bs);
    cfg.read_pct = log.read_pct();
    cfg.rw = match cfg.read_pct {
        100 => RwMode::Randread,
        0 => RwMode::Randwrite,
        _ => RwMode::Randrw,
    };
    // A few writes among many reads still write (the guard sees them), and
    // a few reads among writes keep their latencies apart.
    let has = |o| log.ios.iter().any(|(op, _)| *op == o);
    use crate::measure::workload::Op;
    if cfg.read_pct == 100 && has(Op::Write) {
        (cfg.rw, cfg.read_pct) = (RwMode::Randrw, 99);
    } else if cfg.read_pct == 0 && has(Op::Read) {
        (cfg.rw, cfg.read_pct) = (RwMode::Randrw, 1);
    }
    let bounded = args.duration.is_some()
        || args.passes.is_some()
        || args.io_limit.is_some()
        || args.ios.is_some();
    if !bounded {
        cfg.passes = Some(1);
        cfg.duration = NO_TIME_LIMIT;
        if args.ramp.is_none() {
            cfg.ramp = Duration::ZERO;
        }
    }
    cfg.replay = Some(std::sync::Arc::new(log));
    cfg
}

/// What the steps of [`run_config`] resolved, for [`assemble`].
struct Resolved {
    cpus: Option<Vec<usize>>,
    testbed: Option<TestbedConfig>,
    bs: BlockSizeArg,
    engine: EngineKind,
    ring: RingSetup,
    ramp: Duration,
    rate: Option<RateLimit>,
    seed: u64,
}

/// Where the reports go: what the outputs cannot be.
fn check_outputs(args: &RunArgs) -> Result<(), ConfigError> {
    if args
        .metrics
        .as_deref()
        .is_some_and(|m| m.as_os_str() == "-")
    {
        return Err(ConfigError::MetricsToStdout);
    }
    if args.iolog_write.as_deref() == Some(std::path::Path::new("-")) {
        return Err(ConfigError::IologToStdout);
    }
    if args.metrics.is_some() && args.live_interval != Duration::from_secs(1) {
        return Err(ConfigError::MetricsInterval(format!(
            "{:?}",
            args.live_interval
        )));
    }
    if !args.fio_log.is_empty() {
        if args.targets.is_empty() || args.members.is_some() {
            return Err(ConfigError::FioLogWithoutTargets);
        }
        let each = args.fio_log_format.as_ref().is_some_and(|s| s.each);
        if matches!(args.rw, RwMode::Randrw | RwMode::Rw) && !each {
            return Err(ConfigError::FioLogMixed(args.rw.name()));
        }
    }
    Ok(())
}

/// The CPUs the workers are pinned to (`None` with --no-pin).
fn pinning(args: &RunArgs, available: &[usize]) -> Result<Option<Vec<usize>>, ConfigError> {
    Ok(if args.no_pin || args.numa_nodes.is_some() {
        None
    } else if let Some(list) = &args.cpus {
        cpus::check_cpus(&list.0, available).map_err(ConfigError::Cpus)?;
        Some(list.0.clone())
    } else {
        Some(available.to_vec())
    })
}

/// What is driven: the mix, the region, and how targets, --stripe,
/// --jobs and --members go together.
fn check_targets(args: &RunArgs) -> Result<(), ConfigError> {
    if !matches!(args.rw, RwMode::Randrw | RwMode::Rw) && args.mix != 50 {
        return Err(ConfigError::MixWithoutRandrw(args.rw.name()));
    }
    if let Some(0) = args.size {
        return Err(ConfigError::SizeZero);
    }
    if args.fill_device {
        fill_device(args)?;
    }
    if args.stripe.is_some() && (args.targets.len() < 2 && args.members.is_none()) {
        return Err(ConfigError::StripeOfOne);
    }
    if args.stripe.is_some() && args.jobs > 1 {
        return Err(ConfigError::StripeWithJobs);
    }
    if args.members.is_some() && !args.targets.is_empty() {
        return Err(ConfigError::MembersWithTargets);
    }
    if args.jobs_share && args.jobs < 2 {
        return Err(ConfigError::ShareOfOne);
    }
    // (With --offset-increment each job has its region, whatever
    // --jobs-share says: its own check follows.)
    if args.jobs_share && args.verify && args.offset_increment.is_none() {
        return Err(ConfigError::ShareWithVerify);
    }
    check_access(args)
}

/// `--fill-device`: a sequential write to each device's end, or, on a
/// regular file, until its file system says no space is left (ENOSPC), as
/// fio's fill_device=1 grows a file (the layout says how much is free).
fn fill_device(args: &RunArgs) -> Result<(), ConfigError> {
    use std::os::unix::fs::FileTypeExt;
    let bad = |why: String| Err(ConfigError::FillDevice(why));
    if args.rw != RwMode::Write {
        return bad("writes a device to its end in order: give --rw write".into());
    }
    if args.size.is_some() || args.create.is_some() {
        return bad("writes each device to its end: drop --size and --create".into());
    }
    if args.targets.is_empty() {
        return bad("writes a device to its end, or a file until its file system is full, and none is named (the built-in test bed's files would fill /tmp): name the device or file".into());
    }
    for t in &args.targets {
        match std::fs::metadata(t) {
            Ok(m) if m.file_type().is_block_device() || m.file_type().is_file() => {}
            Ok(_) => return bad(format!("writes a block device to its end or a regular file until its file system is full, and {} is neither", t.display())),
            // Said by the check that the target exists.
            Err(_) => {}
        }
    }
    Ok(())
}

/// `--zones`: fio's strided walk is one direction's, one job's, of
/// one size; what would make it another walk is refused by name.
fn check_zones(args: &RunArgs) -> Result<(), ConfigError> {
    if !matches!(args.rw, RwMode::Read | RwMode::Write) {
        return Err(ConfigError::ZonesPattern(args.rw.name()));
    }
    let with: [(bool, &str, &str); 5] = [
        (
            args.skip.is_some(),
            "--skip",
            "fio's zones move by their own skip",
        ),
        (
            args.stripe.is_some(),
            "--stripe",
            "a modelled RAID0's passes are whole stripes",
        ),
        (
            args.verify,
            "--verify",
            "verify checks every block of a pass, and zones leave gaps",
        ),
        (
            args.bssplit.is_some(),
            "--bssplit",
            "a zone's bytes are counted in requests of one size",
        ),
        (
            args.jobs > 1,
            "--jobs",
            "each job would walk a slice's zones, not the target's as fio's jobs do",
        ),
    ];
    match with.into_iter().find(|w| w.0) {
        Some((_, opt, why)) => Err(ConfigError::ZonesWith(opt, why)),
        None => Ok(()),
    }
}

/// `--sprandom` writes the physical capacity once, one plain random
/// write stream: what would change its offsets or its end is refused
/// (fio's checks: rw=randwrite, the LFSR and norandommap it sets; the
/// single target and job are checked by the plan, with the model).
fn check_sprandom(args: &RunArgs) -> Result<(), ConfigError> {
    if !args.sprandom {
        return Ok(());
    }
    let fail = |why: String| Err(ConfigError::Sprandom(why));
    if args.rw != RwMode::Randwrite {
        return fail(format!(
            "--sprandom preconditions with random writes, and --rw is {}: give --rw randwrite",
            args.rw.name()
        ));
    }
    let with = [
        ("--passes", args.passes.is_some()),
        ("--io-limit", args.io_limit.is_some()),
        ("--ios", args.ios.is_some()),
        ("--duration", args.duration.is_some()),
        ("--fill-device", args.fill_device),
        (
            "--dist",
            args.dist.as_ref().is_some_and(|d| !d.is_uniform()),
        ),
        ("--seq-run", args.seq_run.is_some_and(|n| n > 1)),
        ("--bssplit", args.bssplit.is_some()),
        ("--verify", args.verify),
        ("--stripe", args.stripe.is_some()),
        ("--iolog-read", args.iolog_read.is_some()),
        ("--random-map", args.random_map),
        ("--latency-target", args.latency_target.is_some()),
    ];
    if let Some((opt, _)) = with.iter().find(|w| w.1) {
        return fail(format!(
            "--sprandom sets its own offsets and writes the physical capacity once, then ends: drop {opt}"
        ));
    }
    Ok(())
}

/// fio's distribution and offset modifiers: each for the patterns it
/// shapes, and --offset-increment for several jobs.
fn check_access(args: &RunArgs) -> Result<(), ConfigError> {
    check_sprandom(args)?;
    let random = args.rw.is_random();
    if args.dist.as_ref().is_some_and(|d| !d.is_uniform()) && !random {
        return Err(ConfigError::DistSequential(args.rw.name()));
    }
    if args.skip.is_some() && random {
        return Err(ConfigError::SkipRandom(args.rw.name()));
    }
    if args.seq_run.is_some_and(|n| n > 1) && !random {
        return Err(ConfigError::SeqRunSequential(args.rw.name()));
    }
    if args.skip.is_some() && args.stripe.is_some() {
        return Err(ConfigError::SkipWithStripe);
    }
    check_random_map(args)?;
    // Holes (a skip forward) leave blocks unwritten that the read-back, with
    // the same --skip, does not read; going back over blocks rewrites them
    // out of order, which the check of stale blocks cannot tell.
    if args.skip.is_some_and(|s| s < 0) && args.verify {
        return Err(ConfigError::SkipWithVerify);
    }
    if args.zones.is_some() {
        check_zones(args)?;
    }
    if args.bssplit.is_some() {
        // What counts or checks whole blocks of one size cannot yet take
        // a split: said by name.
        let with = [
            (
                args.stripe.is_some(),
                "--stripe",
                "a modelled RAID0 splits requests of one size; drop one",
            ),
            // A sequential verify replays the size draws (the read's
            // k-th size is the write's); a random one's record and map
            // are of blocks of one size.
            (
                args.verify && args.rw.is_random(),
                "--verify",
                "a random verified write covers its region block by block, of one size; drop one",
            ),
            // The read-back draws reads' sizes; with a write split of its
            // own they are not the sizes the write drew.
            (
                args.verify && args.bssplit.as_ref().is_some_and(|s| s.writes.is_some()),
                "--verify",
                "each block is read back at the size its write drew, and READS,WRITES draws reads from another split: give one split",
            ),
            (
                args.rate.is_some(),
                "--rate",
                "the schedule is one size's; drop one",
            ),
            (
                args.rate_iops.is_some(),
                "--rate-iops",
                "the schedule is one size's; drop one",
            ),
            (
                args.ios.is_some(),
                "--ios",
                "give a byte budget (--io-limit or --size) instead",
            ),
            (
                args.iolog_write.is_some(),
                "--iolog-write",
                "the log's lines are one size's; drop one",
            ),
            (
                args.iolog_read.is_some(),
                "--iolog-read",
                "the log gives each I/O's size; drop --bssplit",
            ),
        ];
        if let Some((_, name, why)) = with.into_iter().find(|w| w.0) {
            return Err(ConfigError::SplitWith(name, why));
        }
        // A read replays one pass's size draws from the region's start:
        // a second pass writes other sizes over the first's blocks.
        let one_pass = args.passes == Some(1) || args.io_limit.is_some();
        if args.verify && !one_pass {
            return Err(ConfigError::SplitWith("--verify", "its blocks are checked by replaying one pass's size draws, and a second pass writes other sizes over the first's: bound the run to one pass (--passes 1, or --io-limit)"));
        }
    }
    if let Some(inc) = args.offset_increment {
        if args.jobs < 2 {
            return Err(ConfigError::IncrementOfOne);
        }
        // Sequential writers whose regions overlap each still write their
        // blocks in order from their region's start, so a block one wrote
        // between two of another's was written (and holds whichever came
        // last, a good block of this run at its offset): the read-back
        // tells lost and stale blocks as with one writer. Random and mixed
        // writers keep no such order. (Readers write nothing: their
        // regions may overlap.)
        let ordered = matches!(args.rw, RwMode::Write | RwMode::Read);
        if args.verify && !ordered && args.size.is_none_or(|s| s > inc) {
            return Err(ConfigError::IncrementOverlapsVerify(inc));
        }
    }
    Ok(())
}

/// The built-in test bed, when no target is named; its options are
/// refused beside named targets.
fn testbed(
    args: &RunArgs,
    available: &[usize],
    tmpdir: Option<PathBuf>,
) -> Result<Option<TestbedConfig>, ConfigError> {
    if args.targets.is_empty() && args.members.is_none() {
        if args.testbed_size < MIN_TESTBED_SIZE {
            return Err(ConfigError::TestbedTooSmall(args.testbed_size));
        }
        let dir = args
            .dir
            .clone()
            .or(tmpdir)
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        Ok(Some(TestbedConfig {
            dir,
            files: args.testbed_files.unwrap_or(available.len().max(2)),
            file_size: args.testbed_size,
        }))
    } else {
        if args.dir.is_some() || args.testbed_files.is_some() {
            return Err(ConfigError::TestbedOptionsWithTargets);
        }
        Ok(None)
    }
}

/// --bs, or its default: 4 KiB for random I/O, 1 MiB for sequential.
fn block_size(args: &RunArgs) -> BlockSizeArg {
    // --bssplit: the buffers hold its largest size.
    if let Some(s) = &args.bssplit {
        return BlockSizeArg::Bytes(s.max());
    }
    args.bs.unwrap_or(if args.rw.is_random() {
        BlockSizeArg::Bytes(4096)
    } else {
        BlockSizeArg::Bytes(1 << 20)
    })
}

/// The first io_uring ring option given (`--hipri`, `--sqpoll`, `--taskrun`).
fn ring_option(args: &RunArgs) -> Option<&'static str> {
    if args.hipri {
        Some("--hipri")
    } else if args.sqpoll.is_some() {
        Some("--sqpoll")
    } else if args.taskrun != "auto" {
        Some("--taskrun")
    } else if !matches!(args.complete_min, CompleteMin::Auto | CompleteMin::Fixed(1)) {
        // 1 is what a sync engine does anyway (and was the default): not
        // an io_uring option.
        Some("--complete-min")
    } else if args.sched != "auto" {
        Some("--sched")
    } else {
        None
    }
}

/// The engine for --engine and --iodepth, and the options only io_uring
/// takes: a ring option makes --engine auto io_uring even at depth 1.
fn engine(args: &RunArgs) -> Result<EngineKind, ConfigError> {
    let ring = ring_option(args);
    let engine = match (args.engine, args.iodepth) {
        (EngineArg::Sync, 1) => match ring {
            Some(o) => return Err(ConfigError::RingWithoutUring(o)),
            None => EngineKind::Sync,
        },
        (EngineArg::Auto, 1) if ring.is_none() => EngineKind::Sync,
        (EngineArg::Auto, 1) => EngineKind::Uring,
        (EngineArg::Sync, d) => return Err(ConfigError::DepthWithSync(d)),
        (EngineArg::Auto, _) | (EngineArg::Uring, _) => EngineKind::Uring,
    };
    if (args.cmdprio.is_some() || args.cmdprio_bssplit.is_some()) && engine != EngineKind::Uring {
        return Err(ConfigError::CmdprioWithSync);
    }
    if args.debug_hang_from.is_some() && engine != EngineKind::Uring {
        return Err(ConfigError::HangWithoutUring);
    }
    if args.no_register && engine != EngineKind::Uring {
        return Err(ConfigError::RegisterWithoutUring);
    }
    check_latency_target(args, engine)?;
    if args.hipri && (args.buffered || args.uncached) {
        return Err(ConfigError::HipriBuffered);
    }
    if args.sqpoll.is_some() && matches!(args.taskrun.as_str(), "coop" | "defer") {
        return Err(ConfigError::TaskrunWithSqpoll(args.taskrun.clone()));
    }
    Ok(engine)
}

/// The ring's setup from --hipri, --sqpoll and --taskrun; a --sqpoll CPU
/// must be one this process may use.
fn ring_setup(args: &RunArgs, available: &[usize]) -> Result<RingSetup, ConfigError> {
    let sqpoll_cpu = args.sqpoll.flatten();
    if let Some(cpu) = sqpoll_cpu.filter(|c| !available.contains(c)) {
        return Err(ConfigError::SqpollCpu {
            cpu,
            allowed: crate::base::cpus::format_cpu_list(available),
        });
    }
    if let CompleteMin::Fixed(n) = args.complete_min {
        if n as usize > args.iodepth {
            return Err(ConfigError::CompleteMinDepth {
                n,
                depth: args.iodepth,
            });
        }
        if n > 1 && (args.rate.is_some() || args.rate_iops.is_some()) {
            return Err(ConfigError::CompleteMinRate(n));
        }
    }
    if args.sched == "batch" && args.sqpoll.is_some() {
        return Err(ConfigError::SchedBatchSqpoll);
    }
    Ok(RingSetup {
        complete_min: args.complete_min,
        sched: crate::engine::Sched::parse(&args.sched).unwrap_or_default(),
        iopoll: args.hipri,
        sqpoll: args.sqpoll.is_some(),
        sqpoll_cpu: sqpoll_cpu.map(|c| c as u32),
        taskrun: TaskRun::parse(&args.taskrun).unwrap_or_default(),
    })
}

/// The ramp before the measured window: none under a bound on the I/O
/// (--io-limit, --ios or --passes count every I/O), else 1 s unless given.
fn ramp(args: &RunArgs) -> Result<Duration, ConfigError> {
    let bound = if args.passes.is_some() {
        Some("--passes")
    } else if args.io_limit.is_some() {
        Some("--io-limit")
    } else {
        args.ios
            .map(|_| "--ios")
            .or(args.fill_device.then_some("--fill-device"))
            .or(args.sprandom.then_some("--sprandom"))
    };
    Ok(match (args.ramp, bound) {
        (Some(r), Some(opt)) if !r.is_zero() => return Err(ConfigError::RampWithBound(opt)),
        (Some(r), _) => r,
        (None, Some(_)) => Duration::ZERO,
        (None, None) => Duration::from_secs(1),
    })
}

/// A --duration long enough to measure.
fn check_duration(args: &RunArgs) -> Result<(), ConfigError> {
    check_rate_min(args)?;
    check_think(args)?;
    if let Some(d) = args.duration.filter(|&d| d < MIN_DURATION) {
        return Err(ConfigError::DurationTooShort {
            shown: humantime::format_duration(d).to_string(),
            min_ms: MIN_DURATION.as_millis(),
        });
    }
    if args.steady.is_some() {
        let dur = args.steady_dur.unwrap_or(STEADY_DUR);
        let ramp = args.steady_ramp.unwrap_or_default();
        let show = |d: Duration| humantime::format_duration(d).to_string();
        if dur < 2 * args.live_interval {
            return Err(ConfigError::Steady(format!(
                "--steady-dur {} holds fewer than two --live-interval {} figures: give a longer --steady-dur",
                show(dur),
                show(args.live_interval)
            )));
        }
        // A window shorter than the judging could never end steady.
        let cap = args.duration.unwrap_or(
            if args.passes.is_some() || args.io_limit.is_some() || args.ios.is_some() {
                NO_TIME_LIMIT
            } else {
                Duration::from_secs(10)
            },
        );
        if cap < ramp + dur {
            return Err(ConfigError::Steady(format!(
                "--steady-ramp {} and --steady-dur {} need a window of at least {}, and --duration is {}: give a longer --duration",
                show(ramp),
                show(dur),
                show(ramp + dur),
                show(cap)
            )));
        }
    }
    Ok(())
}

/// What is written and read: --verify's blocks, --cached's page cache.
fn check_data(args: &RunArgs) -> Result<(), ConfigError> {
    // A sequential mix writes each block it writes once a pass, in order
    // from the start of its slice (its own position, apart from the
    // reads'), so what it wrote is a prefix the read-back can check whole;
    // a random mix's writes land among blocks it only read, so it keeps a
    // record of them (fio's) and reads back those after each pass.
    if args.verify
        && !matches!(
            args.rw,
            RwMode::Write | RwMode::Randwrite | RwMode::Rw | RwMode::Randrw | RwMode::Read
        )
    {
        return Err(ConfigError::VerifyRw(args.rw.name()));
    }
    if args.verify && args.rw == RwMode::Randrw {
        // Each pass covers every block once (fio's random map): a shaped
        // order, a striped share or a replayed log is not such a pass.
        let why = if args.dist.as_ref().is_some_and(|d| !d.is_uniform())
            || args.seq_run.is_some_and(|n| n > 1)
        {
            "drop --dist and --seq-run, which visit some blocks more and others not at all"
        } else if args.stripe.is_some() {
            "drop --stripe, whose members' shares are not one region a pass covers"
        } else if args.iolog_read.is_some() {
            "drop --iolog-read, whose log, not a pass over the region, gives the offsets"
        } else {
            ""
        };
        if !why.is_empty() {
            return Err(ConfigError::VerifyRandomMix(why));
        }
    }
    if args.verify && args.rw == RwMode::Randwrite {
        // A write cut in the middle of a pass leaves blocks unwritten
        // among written ones, which the read-back would call lost; a
        // shaped or striped order does not visit every block once.
        let why = if args.passes.is_none() {
            "give --passes N, so that each pass ends"
        } else if args.duration.is_some() || args.io_limit.is_some() || args.ios.is_some() {
            "drop --duration, --io-limit and --ios, which can end a pass half done; --passes bounds it"
        } else if args.dist.as_ref().is_some_and(|d| !d.is_uniform())
            || args.seq_run.is_some_and(|n| n > 1)
        {
            "drop --dist and --seq-run, which visit some blocks more and others not at all"
        } else if args.stripe.is_some() {
            "drop --stripe, whose members' shares are not one region a pass covers"
        } else {
            ""
        };
        if !why.is_empty() {
            return Err(ConfigError::VerifyRandomPasses(why));
        }
    }
    if args.verify && (args.buffer_compress > 0 || args.dedupe > 0) {
        return Err(ConfigError::VerifyWithSyntheticData);
    }
    match args.dedupe_working_set {
        Some(0) => {
            return Err(ConfigError::DedupeSet(
                "0 leaves the working set empty: give a percentage from 1 to 100",
            ))
        }
        Some(_) if args.dedupe == 0 => {
            return Err(ConfigError::DedupeSet(
                "with --dedupe 0: no unit repeats, so there is nothing to copy: give --dedupe PCT",
            ))
        }
        _ => {}
    }
    if args.pattern.is_some() && (args.buffer_compress > 0 || args.dedupe > 0) {
        return Err(ConfigError::PatternWithSyntheticData);
    }
    if args.cached && (!args.buffered || args.rw.writes()) {
        return Err(ConfigError::CachedWithoutBufferedRead);
    }
    Ok(())
}

/// --start-at: ahead, and within a day.
fn check_start_at(args: &RunArgs) -> Result<(), ConfigError> {
    if let Some(at) = args.start_at {
        let now = std::time::SystemTime::now();
        if at < now {
            return Err(ConfigError::StartInThePast);
        }
        // As --duration: a wait longer than a day is a typo, not a plan.
        if at
            .duration_since(now)
            .is_ok_and(|d| d > Duration::from_secs(86_400))
        {
            return Err(ConfigError::StartTooFarAhead);
        }
    }
    Ok(())
}

/// The schedule of --rate or --rate-iops. With a known --bs it is checked
/// here; with lbs (or --stripe's pieces), by the layout, still before any I/O.
fn rate(args: &RunArgs, bs: BlockSizeArg) -> Result<Option<RateLimit>, ConfigError> {
    let rate = match (args.rate, args.rate_iops) {
        (Some(_), Some(_)) => return Err(ConfigError::TwoRates),
        (Some(b), None) => Some(RateLimit::BytesPerSec(b)),
        (None, Some(n)) => Some(RateLimit::Iops(n)),
        (None, None) => None,
    };
    if let (Some(r), BlockSizeArg::Bytes(n)) = (rate, bs) {
        r.period_ns(n).map_err(ConfigError::Rate)?;
    }
    Ok(rate)
}

/// The run configuration from the arguments and what the steps resolved.
fn assemble(args: &RunArgs, resolved: Resolved) -> RunConfig {
    let Resolved {
        cpus,
        testbed,
        bs,
        engine,
        ring,
        ramp,
        rate,
        seed,
    } = resolved;
    // --fill-device: once to each device's end, unless bounded otherwise.
    let filled = args.fill_device && args.io_limit.is_none() && args.ios.is_none();
    let passes = args.passes.or(filled.then_some(1));
    RunConfig {
        targets: args.targets.clone(),
        members: args.members.clone(),
        named: if args.named.is_empty() {
            args.targets.clone()
        } else {
            args.named.clone()
        },
        stripe: args.stripe,
        align_stripe: args.align.is_some(),
        cached: args.cached,
        drop_caches: args.drop_caches,
        testbed,
        rw: args.rw,
        read_pct: match args.rw {
            RwMode::Read | RwMode::Randread => 100,
            RwMode::Write | RwMode::Randwrite | RwMode::Trim | RwMode::Randtrim => 0,
            RwMode::Randrw | RwMode::Rw => args.mix,
        },
        bs,
        direct: !args.buffered && !args.uncached,
        uncached: args.uncached,
        // A bound (--passes, --io-limit, --ios) without --duration runs
        // until it is done, as fio's size=, io_size= and number_ios= do
        // without runtime= (a year keeps the arithmetic in range; nothing
        // is sized from it). A 10 s cut would make its counts not exact.
        duration: args.duration.unwrap_or(
            if passes.is_some() || args.io_limit.is_some() || args.ios.is_some() || args.sprandom {
                NO_TIME_LIMIT
            } else {
                Duration::from_secs(10)
            },
        ),
        ramp,
        readahead_kb: args.readahead,
        md_tunables: md_tunables(args),
        engine,
        iodepth: args.iodepth,
        register: !args.no_register,
        ring,
        nowait: args.nowait,
        io_limit: args.io_limit,
        ios: args.ios,
        max_errors: args.max_errors,
        ignore_errors: args.ignore_errors.clone().unwrap_or_default(),
        fill: args.fill_device,
        debug_fail_from: args.debug_fail_from,
        debug_corrupt_write: args.debug_corrupt_write,
        debug_die_in_setup: args.debug_die_in_setup,
        debug_hang_from: args.debug_hang_from,
        debug_mock_engine: args.debug_mock_engine,
        hang_timeout: args.hang_timeout,
        log_interval: args.log_interval,
        hugepages: args.hugepages,
        verify: args.verify,
        buffer_compress: args.buffer_compress,
        dedupe: args.dedupe,
        pattern: args.pattern.clone().map(std::sync::Arc::new),
        dedupe_set: args
            .dedupe_working_set
            .map(|pct| crate::measure::config::DedupeSet {
                pct,
                global: args.dedupe_global,
            }),
        passes,
        start_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
        size: args.size,
        offset: args.offset,
        jobs: args.jobs,
        jobs_share: args.jobs_share,
        access: crate::measure::workload::Access {
            dist: args.dist.clone().unwrap_or_default(),
            skip: args.skip.unwrap_or(0),
            zones: args.zones,
            seq_run: args.seq_run.unwrap_or(0),
            spr: args.sprandom.then(|| crate::measure::workload::SprAsk {
                op: args.spr_op.unwrap_or(crate::analysis::sprandom::DEFAULT_OP),
                regions: args
                    .spr_regions
                    .unwrap_or(crate::analysis::sprandom::DEFAULT_REGIONS),
            }),
            random_map: args.random_map,
            sizes: args.bssplit.clone().map(|mut s| {
                s.align = args.blockalign.unwrap_or(s.align);
                s
            }),
        },
        offset_increment: args.offset_increment,
        cpus,
        numa_nodes: args.numa_nodes.as_ref().map(|n| n.0.clone()),
        thread: Default::default(),
        cmdprio: args.cmdprio,
        cmdprio_split: args.cmdprio_bssplit.clone(),
        seed,
        allow_destructive: args.allow_destructive,
        create: args.create,
        create_layout: args.create_layout.unwrap_or_default(),
        allow_holes: args.allow_holes,
        force_signature: args.force_signature,
        dry_run: args.dry_run,
        print_fio: args.print_fio,
        iolog_write: args.iolog_write.clone(),
        io_lines: !args.fio_log.is_empty() && args.fio_log_format.as_ref().is_some_and(|s| s.each),
        replay: None,
        start_at: args.start_at,
        start_delay: start_delay(args.start_delay, seed),
        wait_lock: args.wait_lock,
        force_memory: args.force_memory,
        progress: !args.no_progress,
        rate,
        steady: args
            .steady
            .map(|criterion| crate::measure::config::SteadyConfig {
                criterion,
                dur: args.steady_dur.unwrap_or(STEADY_DUR),
                ramp: args.steady_ramp.unwrap_or_default(),
                interval: args.live_interval,
            }),
        rate_min: rate_min(args),
        think: args.thinktime.map(|time| crate::measure::config::Think {
            time,
            spin: args.thinktime_spin.unwrap_or_default(),
            blocks: args.thinktime_blocks.unwrap_or(1),
            on_issue: args.thinktime_on_issue,
        }),
        together: None,
        exitall: None,
        latency_search: latency_search(args),
    }
}

/// `--rate-min` or `--rate-iops-min`, over `--rate-cycle`.
fn rate_min(args: &RunArgs) -> Option<crate::measure::config::RateMinConfig> {
    use crate::analysis::rate_min::{Minimum, DEFAULT_CYCLE_SEC};
    let min = match (args.rate_min, args.rate_iops_min) {
        (Some(b), _) => Minimum::BytesPerSec(b),
        (None, Some(n)) => Minimum::Iops(n),
        (None, None) => return None,
    };
    Some(crate::measure::config::RateMinConfig {
        min,
        cycle: args
            .rate_cycle
            .unwrap_or(Duration::from_secs_f64(DEFAULT_CYCLE_SEC)),
        interval: args.live_interval,
    })
}

/// --random-map orders a plain uniform random pattern's blocks: what
/// shapes the offsets otherwise is not drawn through it.
fn check_random_map(args: &RunArgs) -> Result<(), ConfigError> {
    if !args.random_map {
        return Ok(());
    }
    let with = [
        (!args.rw.is_random(), "a sequential --rw visits every block once a pass already: drop --random-map, or give --rw randread, randwrite or randrw"),
        (args.dist.as_ref().is_some_and(|d| !d.is_uniform()), "--dist draws hot blocks more often than others, which a pass over every block once cannot: drop one"),
        (args.seq_run.is_some_and(|n| n > 1), "--seq-run follows a random offset with sequential ones: drop one"),
        (args.bssplit.is_some(), "--bssplit draws each I/O's size, and a pass of blocks has one: drop one"),
        (args.stripe.is_some(), "--stripe draws its members' offsets from the logical volume's: drop one"),
    ];
    match with.iter().find(|(bad, _)| *bad) {
        Some((_, why)) => Err(ConfigError::RandomMap(format!("--random-map: {why}"))),
        None => Ok(()),
    }
}

/// --latency-target searches depths from 1 to --iodepth: it needs an
/// engine that keeps several I/Os in flight, and a window with time in it.
fn check_latency_target(args: &RunArgs, engine: EngineKind) -> Result<(), ConfigError> {
    if args.latency_target.is_none() {
        return Ok(());
    }
    if engine != EngineKind::Uring || args.iodepth < 2 {
        let why = if args.engine == EngineArg::Sync {
            "--engine sync keeps one I/O in flight".to_string()
        } else {
            format!("--iodepth {} leaves nothing to search", args.iodepth)
        };
        return Err(ConfigError::LatencyTarget(format!(
            "--latency-target searches for a queue depth from 1 up to --iodepth, and {why}: give --iodepth 2 or more (with --engine uring or auto), or drop --latency-target"
        )));
    }
    if args.latency_window.is_some_and(|w| w.is_zero()) {
        return Err(ConfigError::LatencyTarget(
            "--latency-window is 0: each window of the --latency-target search needs time to complete I/Os in; try 1s".into(),
        ));
    }
    Ok(())
}

/// The search --latency-target asks for, with fio's defaults (a window
/// of 1 s here, fio has none; a percentile of 100).
fn latency_search(args: &RunArgs) -> Option<crate::analysis::qd_search::Target> {
    let target = args.latency_target?;
    Some(crate::analysis::qd_search::Target {
        target_ns: target.as_nanos() as u64,
        window_ns: args
            .latency_window
            .unwrap_or(Duration::from_secs(1))
            .as_nanos() as u64,
        percentile: args.latency_percentile.unwrap_or(100.0),
        keep_searching: args.latency_run,
    })
}

/// --thinktime: its spin is part of it; and a --rate schedule, whose
/// latencies run from each I/O's due time, would count the pauses as
/// lateness.
fn check_think(args: &RunArgs) -> Result<(), ConfigError> {
    let Some(time) = args.thinktime else {
        return Ok(());
    };
    if args.thinktime_spin.is_some_and(|s| s > time) {
        return Err(ConfigError::Think(
            "--thinktime-spin is the spinning part of --thinktime, and longer than it: give a spin no longer than the think time".into(),
        ));
    }
    if args.rate.is_some() || args.rate_iops.is_some() {
        return Err(ConfigError::Think(
            "--thinktime pauses a --rate schedule, whose latencies run from each I/O's due time, and would count every pause as lateness: give one of them".into(),
        ));
    }
    Ok(())
}

/// fio refuses a minimum above its own schedule ("minimum rate exceeds
/// rate"): such a run could only fail.
fn check_rate_min(args: &RunArgs) -> Result<(), ConfigError> {
    use crate::base::units::fmt_size_arg;
    if args.rate_cycle.is_some() && args.rate_min.is_none() && args.rate_iops_min.is_none() {
        return Err(ConfigError::RateMin(
            "--rate-cycle is the cycle of --rate-min or --rate-iops-min: give one of them, or drop --rate-cycle".into(),
        ));
    }
    if let (Some(min), Some(rate)) = (args.rate_min, args.rate) {
        if min > rate {
            return Err(ConfigError::RateMin(format!(
                "--rate-min {}/s is above --rate {}/s: a run on that schedule could only fail; give a --rate-min at most the --rate",
                fmt_size_arg(min as u64),
                fmt_size_arg(rate as u64)
            )));
        }
    }
    if let (Some(min), Some(rate)) = (args.rate_iops_min, args.rate_iops) {
        if min > rate {
            return Err(ConfigError::RateMin(format!(
                "--rate-iops-min {min} is above --rate-iops {rate}: a run on that schedule could only fail; give a --rate-iops-min at most the --rate-iops"
            )));
        }
    }
    Ok(())
}

/// `--steady-dur`'s default: fio's examples judge over 10 s to 5 min.
const STEADY_DUR: Duration = Duration::from_secs(30);

/// `--start-delay`: its time, or one drawn from its range A-B by the
/// run's seed (fio draws each job's from its own; one run starts once).
fn start_delay(given: Option<(Duration, Duration)>, seed: u64) -> Duration {
    let Some((lo, hi)) = given else {
        return Duration::ZERO;
    };
    let span = (hi - lo).as_micros() as u64;
    if span == 0 {
        return lo;
    }
    let draw = crate::measure::workload::splitmix64(seed ^ 0x5354_4152_5444_4c59) % (span + 1);
    lo + Duration::from_micros(draw)
}

/// A seed drawn from the clock, for runs that did not fix one.
fn clock_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    crate::measure::workload::splitmix64(nanos ^ u64::from(std::process::id()))
}

/// md's tunables as the options gave them.
fn md_tunables(args: &RunArgs) -> crate::device::md_tunables::MdTunables {
    crate::device::md_tunables::MdTunables {
        stripe_cache_size: args.stripe_cache_size,
        group_thread_cnt: args.group_thread_cnt,
        sync_speed_min: args.sync_speed_min,
        sync_speed_max: args.sync_speed_max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    #[test]
    fn start_delay_draws_within_its_range_by_the_seed() {
        let (lo, hi) = (Duration::from_millis(100), Duration::from_millis(300));
        for seed in 0..200 {
            let d = start_delay(Some((lo, hi)), seed);
            assert!(lo <= d && d <= hi, "{d:?}");
            assert_eq!(d, start_delay(Some((lo, hi)), seed), "one seed, one time");
        }
        let draws: std::collections::HashSet<_> =
            (0..50).map(|s| start_delay(Some((lo, hi)), s)).collect();
        assert!(draws.len() > 40, "{draws:?}");
        assert_eq!(start_delay(Some((lo, lo)), 7), lo);
        assert_eq!(start_delay(None, 7), Duration::ZERO);
    }

    #[test]
    fn a_bound_without_duration_runs_until_done_and_ios_is_the_first_reached() {
        let c = cfg(&["--io-limit", "1m", "t"]).unwrap();
        assert_eq!(c.duration, NO_TIME_LIMIT);
        assert_eq!(c.ramp, Duration::ZERO);
        let c = cfg(&["--ios", "10", "--passes", "2", "t"]).unwrap();
        assert_eq!(
            (c.ios, c.passes, c.duration),
            (Some(10), Some(2), NO_TIME_LIMIT)
        );
        let c = cfg(&["--ios", "10", "-t", "5s", "t"]).unwrap();
        assert_eq!(c.duration, Duration::from_secs(5));
        let c = cfg(&["t"]).unwrap();
        assert_eq!(c.duration, Duration::from_secs(10));
    }

    fn cfg(argv: &[&str]) -> Result<RunConfig, ConfigError> {
        let mut full = vec!["stripebench", "run"];
        full.extend_from_slice(argv);
        let Command::Run(args) = Cli::try_parse_from(full).expect("parses").command else {
            panic!("not a run command")
        };
        crate::cli::validate::run_config(&args, &[0, 1], Some(PathBuf::from("/scratch")))
    }

    #[test]
    fn defaults() {
        let c = cfg(&[]).unwrap();
        assert_eq!(c.rw, RwMode::Read);
        assert_eq!(c.bs, BlockSizeArg::Bytes(1 << 20));
        assert!(c.direct);
        assert_eq!(c.duration, Duration::from_secs(10));
        assert_eq!(c.ramp, Duration::from_secs(1));
        assert_eq!(c.cpus, Some(vec![0, 1]));
        let tb = c.testbed.unwrap();
        assert_eq!(tb.dir, PathBuf::from("/scratch"));
        assert_eq!(tb.files, 2);
        assert_eq!(tb.file_size, 256 << 20);
        assert_eq!(
            cfg(&["--rw", "randread"]).unwrap().bs,
            BlockSizeArg::Bytes(4096)
        );
    }

    #[test]
    fn options_resolve() {
        let c = cfg(&[
            "--rw",
            "randrw",
            "--mix",
            "70",
            "--bs",
            "lbs",
            "--buffered",
            "--no-pin",
            "--seed",
            "7",
            "x",
        ])
        .unwrap();
        assert_eq!(c.read_pct, 70);
        assert_eq!(c.bs, BlockSizeArg::Logical);
        assert!(!c.direct);
        assert_eq!(c.cpus, None);
        assert_eq!(c.seed, 7);
        assert!(c.testbed.is_none());
        assert_eq!(cfg(&["--cpus", "1"]).unwrap().cpus, Some(vec![1]));
    }

    // Issue 41: a verified random write is read back whole, so it must
    // end its passes: bounded by --passes alone, plain offsets, one region.
    #[test]
    fn a_verified_random_write_is_bounded_by_whole_passes_only() {
        let v = |extra: &[&str]| {
            let mut a = vec!["--rw", "randwrite", "--verify"];
            a.extend_from_slice(extra);
            cfg(&a)
        };
        assert!(v(&["--passes", "2"]).unwrap().verify);
        for (extra, says) in [
            (vec![], "give --passes N"),
            (vec!["--passes", "1", "--duration", "5s"], "drop --duration"),
            (vec!["--passes", "1", "--ios", "10"], "drop --duration"),
            (vec!["--passes", "1", "--dist", "zipf:1.2"], "drop --dist"),
            (vec!["--passes", "1", "--seq-run", "4"], "drop --dist"),
        ] {
            let e = v(&extra).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("lost"), "{extra:?}: {e}");
        }
        // A random mix keeps a record of its writes: it verifies, but
        // only over passes that cover the region.
        assert!(cfg(&["--rw", "randrw", "--verify"]).is_ok());
        let e = cfg(&["--rw", "randrw", "--verify", "--dist", "zipf:1.2"]).unwrap_err();
        assert!(matches!(e, ConfigError::VerifyRandomMix(_)), "{e}");
    }

    // Issue 41: each of fio's distribution and offset modifiers is for the
    // patterns it shapes, refused with what to give on the others.
    #[test]
    fn distributions_and_offset_modifiers_go_with_their_patterns() {
        let c = cfg(&["--rw", "randread", "--dist", "zipf:1.2", "--seq-run", "8"]).unwrap();
        assert_eq!(c.access.dist.to_string(), "zipf:1.2");
        assert_eq!(c.access.seq_run, 8);
        assert_eq!(cfg(&["--skip", "-8k"]).unwrap().access.skip, -8192);
        for (args, says) in [
            (vec!["--dist", "zipf:1.2"], "--dist shapes random offsets"),
            (
                vec!["--rw", "randread", "--skip", "4k"],
                "--skip moves sequential",
            ),
            (vec!["--seq-run", "8"], "--seq-run sets how often"),
            (vec!["--offset-increment", "1m"], "give --jobs 2 or more"),
            (
                vec!["--rw", "write", "--verify", "--skip", "-4k"],
                "goes back over blocks",
            ),
            (
                vec![
                    "--rw",
                    "randwrite",
                    "--verify",
                    "--jobs",
                    "2",
                    "--offset-increment",
                    "1m",
                ],
                "overlap",
            ),
        ] {
            let e = cfg(&args).unwrap_err().to_string();
            assert!(e.contains(says), "{args:?}: {e}");
        }
        let ok = [
            "--rw",
            "write",
            "--verify",
            "--jobs",
            "2",
            "--offset-increment",
            "1m",
            "--size",
            "1m",
        ];
        assert!(cfg(&ok).is_ok());
        // Holes forward, and sequential writers (or readers) over
        // overlapping regions, keep the order the read-back's check of
        // stale and lost blocks rests on.
        assert!(cfg(&["--rw", "write", "--verify", "--skip", "4k"]).is_ok());
        for rw in ["write", "read"] {
            let a = [
                "--rw",
                rw,
                "--verify",
                "--jobs",
                "2",
                "--offset-increment",
                "1m",
            ];
            assert!(cfg(&a).is_ok(), "{rw}");
        }
    }

    #[test]
    fn verify_refuses_what_would_cut_its_check_short() {
        for (opt, value, said) in [
            ("--rate-min", "1m/s", "drop --rate-min"),
            ("--steady", "iops:5%", "drop --steady"),
        ] {
            let full = ["stripebench", "verify", opt, value, "/dev/null"];
            let Command::Verify(args) = Cli::try_parse_from(full).expect("parses").command else {
                panic!("not a verify command")
            };
            let e = verify_config(&args, &[0, 1], None).unwrap_err();
            assert!(e.to_string().contains(said), "{opt}: {e}");
        }
    }

    #[test]
    fn jobs_share_needs_jobs_and_no_verify() {
        assert!(cfg(&["--jobs", "2", "--jobs-share"]).unwrap().jobs_share);
        assert!(matches!(
            cfg(&["--jobs-share"]),
            Err(ConfigError::ShareOfOne)
        ));
        assert!(matches!(
            cfg(&["--jobs", "2", "--jobs-share", "--verify", "--rw", "write"]),
            Err(ConfigError::ShareWithVerify)
        ));
    }

    #[test]
    fn bad_combinations_are_refused() {
        assert!(cfg(&["--cpus", "0-5"])
            .unwrap_err()
            .to_string()
            .contains("not online"));
        assert!(cfg(&["--mix", "30"])
            .unwrap_err()
            .to_string()
            .contains("randrw"));
        assert!(cfg(&["--size", "0", "x"])
            .unwrap_err()
            .to_string()
            .contains("--size 0"));
        assert!(cfg(&["--dir", "/d", "x"])
            .unwrap_err()
            .to_string()
            .contains("test bed"));
        assert!(cfg(&["--testbed-size", "4k"])
            .unwrap_err()
            .to_string()
            .contains("too small"));
    }

    // Issue 41 (latency-profile.fio's random_generator=lfsr): --random-map
    // orders a plain uniform random pattern only, said by name otherwise.
    #[test]
    fn random_map_goes_with_a_plain_random_pattern_only() {
        let e = |argv: &[&str]| cfg(argv).unwrap_err().to_string();
        assert!(
            cfg(&["--rw", "randread", "--random-map"])
                .unwrap()
                .access
                .random_map
        );
        assert!(e(&["--rw", "read", "--random-map"]).contains("sequential"));
        assert!(e(&["--rw", "randread", "--dist", "zipf:1.2", "--random-map"]).contains("--dist"));
        assert!(e(&["--rw", "randread", "--seq-run", "4", "--random-map"]).contains("--seq-run"));
        let s = cfg(&[
            "--rw",
            "randread",
            "--iodepth",
            "8",
            "--latency-target",
            "2ms",
        ])
        .unwrap();
        let t = s.latency_search.unwrap();
        assert_eq!(
            (t.target_ns, t.window_ns, t.percentile),
            (2_000_000, 1_000_000_000, 100.0)
        );
    }

    #[test]
    fn stdout_document_moves_the_table() {
        let outputs = |argv: &[&str]| {
            let mut full = vec!["stripebench", "run"];
            full.extend_from_slice(argv);
            let Command::Run(args) = Cli::try_parse_from(full).expect("parses").command else {
                panic!("not a run command")
            };
            args.outputs()
        };
        assert!(outputs(&["--json", "-"]).stdout_taken());
        assert!(outputs(&["--live", "-"]).stdout_taken());
        assert!(!outputs(&["--json", "out.json"]).stdout_taken());
        let o = outputs(&["--plot", "p.svg", "--html", "-", "--csv", "c"]);
        let flags: Vec<&str> = o.formats.iter().map(|(f, _)| f.flag()).collect();
        assert_eq!(flags, ["csv", "plot", "html"]);
        assert!(o.stdout_taken());
    }
}
