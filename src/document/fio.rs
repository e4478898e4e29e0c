//! `run --print-fio`: the fio command line that runs the same workload as
//! a run's configuration, so a figure can be cross-checked with fio.
//!
//! stripebench runs one worker per target and job, each on its own slice of
//! the target's region, pinned round robin to `--cpus`; so the line has one
//! fio job (`--name=`) per worker, with that worker's file, slice and CPU.
//! What fio has no equivalent for is said in `#` lines before the command,
//! never dropped. The spellings are fio's names for the options
//! `cli::fio_words` maps the other way.
//!
//! One code path for both places the line goes: `run --print-fio` prints
//! [`Fio::text`], and every run document carries [`FioDoc`] (`fio`), made
//! from the same [`Fio`]; each first settles `--sched auto` and
//! `--complete-min auto` from what it knows of the workers
//! ([`resolve_sched`], [`resolve_complete_min`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::base::error::UsageError;
use crate::base::units::fmt_size_arg;
use crate::engine::buffer::HugePages;
use crate::engine::{CompleteMin, EngineKind};
use crate::measure::config::{BlockSizeArg, RateLimit, RunConfig, RwMode};

/// The fio command for a workload: what fio has no equivalent for, and
/// the command line itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Fio {
    /// What to do before running the line (`# run first:` lines): fio's
    /// huge-page buffers need reserved pages.
    pub setup: Vec<String>,
    /// What fio does not do as stripebench does (`# not in fio:` lines).
    pub notes: Vec<String>,
    /// `fio --rw=... --name=w0 ...`: one line, no newline.
    pub line: String,
}

impl Fio {
    /// As `--print-fio` prints it: the `# not in fio:` lines, then the
    /// command, each line ending in a newline.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for n in &self.setup {
            out.push_str("# run first: ");
            out.push_str(n);
            out.push('\n');
        }
        for n in &self.notes {
            out.push_str("# not in fio: ");
            out.push_str(n);
            out.push('\n');
        }
        out.push_str(&self.line);
        out.push('\n');
        out
    }
}

/// The run document's `fio`: the command that runs the same workload with
/// fio, or why none can be given.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FioDoc {
    /// The fio command line (as `run --print-fio` prints it), or null.
    pub command: Option<String>,
    /// What to run before it (`# run first:` lines), when anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<String>,
    /// What fio does not do as stripebench does.
    pub notes: Vec<String>,
    /// Why there is no command (null when there is one).
    pub unavailable: Option<String>,
}

impl FioDoc {
    /// The document's `fio` for a run of `cfg` on `targets`, whose
    /// workers' buffers were (`huge`) or were not in huge pages: [`fio`], or
    /// the reason it refused.
    pub fn of(cfg: &RunConfig, targets: &[PathBuf], huge: bool) -> FioDoc {
        match fio(cfg, targets, Buffers::Were(huge)) {
            Ok(f) => FioDoc {
                command: Some(f.line),
                setup: f.setup,
                notes: f.notes,
                unavailable: None,
            },
            Err(e) => FioDoc {
                command: None,
                setup: Vec::new(),
                notes: Vec::new(),
                unavailable: Some(e.0),
            },
        }
    }
}

/// What the workers' I/O buffers are made of, as far as the line's maker
/// knows: before a run (`--print-fio`), what `--hugepages` asks; after it
/// (the run document), what the workers got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buffers {
    /// Before the run: from `--hugepages` and `--bs`.
    Asked,
    /// After it: whether they were in huge pages.
    Were(bool),
}

/// The 2 MiB pages fio's `--iomem=mmaphuge` takes for one job: `iodepth`
/// buffers of `bs`, plus a page for alignment under O_DIRECT, rounded up to
/// whole huge pages (fio's `init_io_u_buffers`); then, under O_DIRECT,
/// `allocate_io_mem` adds a page again and the mapping rounds up again.
/// (Seen: a 1 MiB O_DIRECT job fails with one page reserved, runs with two.)
pub fn fio_huge_pages_per_job(bs: u64, iodepth: u64, direct: bool) -> u64 {
    const HUGE: u64 = 2 << 20;
    let pad = if direct { 4095 } else { 0 };
    let buffers = (bs.saturating_mul(iodepth.max(1)) + pad).div_ceil(HUGE);
    (buffers * HUGE + pad).div_ceil(HUGE)
}

/// Settles `--sched auto` in `cfg` as the workers do (batch when any of
/// them runs SCHED_BATCH: the line then runs fio under `chrt --batch 0`),
/// from `batch` and `normal` workers (or targets) and the targets not known
/// until the run opens them; returns what the line must say beside it.
/// Leaves any other `--sched` as asked.
pub fn resolve_sched(
    cfg: &mut RunConfig,
    batch: usize,
    normal: usize,
    unknown: &[String],
) -> Vec<String> {
    if cfg.ring.sched != crate::engine::Sched::Auto {
        return Vec::new();
    }
    cfg.ring.sched = crate::engine::Sched::Auto.resolve(batch > 0);
    let mut notes = Vec::new();
    if batch > 0 && normal > 0 {
        notes.push(format!(
            "--sched auto: {batch} of {} run SCHED_BATCH (their targets have no non-blocking path), the others normal; under chrt --batch 0 every fio job runs batch",
            batch + normal
        ));
    }
    if !unknown.is_empty() {
        notes.push(format!(
            "--sched auto: {} not opened here (a file, or a device that cannot be opened): a worker runs SCHED_BATCH where its target has no non-blocking path; the run document's fio line says what the workers got",
            some_of(unknown)
        ));
    }
    notes
}

/// Settles `--complete-min auto` in `cfg` as the workers do: `batched`
/// workers (or targets) wait for `n` completions at a time, `single` ones
/// for one ([`CompleteMin::resolve`]); `unknown`: targets not opened yet.
/// fio has one iodepth_batch_complete_min for the line: returns what the
/// line must say beside it. Leaves `--complete-min N` as asked.
pub fn resolve_complete_min(
    cfg: &mut RunConfig,
    batched: usize,
    single: usize,
    n: u32,
    unknown: &[String],
) -> Vec<String> {
    if cfg.ring.complete_min != CompleteMin::Auto || cfg.engine != EngineKind::Uring {
        return Vec::new();
    }
    let mut notes = Vec::new();
    if batched > 0 && n > 1 {
        cfg.ring.complete_min = CompleteMin::Fixed(n);
        if single > 0 {
            notes.push(format!(
                "--complete-min auto: {batched} of {} wait for {n} completions at a time, the others for one; the line gives every fio job {n}",
                batched + single
            ));
        }
    } else {
        cfg.ring.complete_min = CompleteMin::Fixed(1);
    }
    if !unknown.is_empty() {
        notes.push(format!(
            "--complete-min auto: {} not opened here (a file, or a device that cannot be opened): a worker waits for several completions at a time where its target has no non-blocking path; the run document's fio line says what the workers got",
            some_of(unknown)
        ));
    }
    notes
}

/// The first three of `names` and how many more.
fn some_of(names: &[String]) -> String {
    let named: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
    let more = names.len().saturating_sub(3);
    format!(
        "{}{}",
        named.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
}

/// fio's keys for what each worker thread sets on itself: prioclass/prio
/// (`--ioprio`), cmdprio_* (`--cmdprio`), numa_cpu_nodes and
/// numa_mem_policy (`--numa-nodes`, `--numa-mem`).
fn thread_flags(cfg: &RunConfig, g: &mut Vec<String>) {
    if let Some(p) = cfg.thread.ioprio {
        g.push(format!("--prioclass={}", p.class));
        g.push(format!("--prio={}", p.level));
    }
    if let Some(c) = cfg.cmdprio {
        g.push(format!("--cmdprio_percentage={}", c.pct));
        g.push(format!("--cmdprio_class={}", c.prio.class));
        g.push(format!("--cmdprio={}", c.prio.level));
    }
    if let Some(c) = &cfg.cmdprio_split {
        g.push(format!("--cmdprio_bssplit={c}"));
    }
    if let Some(n) = &cfg.numa_nodes {
        g.push(format!(
            "--numa_cpu_nodes={}",
            crate::base::cpus::format_cpu_list(n)
        ));
    }
    if let Some(p) = &cfg.thread.mem_policy {
        g.push(format!("--numa_mem_policy={p}"));
    }
}

/// The fio command for `cfg` on `targets` (the paths the workers open),
/// or why fio cannot be given the same workload on one line.
///
/// Our buffers are 2 MiB huge pages for a `--bs` of 128 KiB or more
/// (`--hugepages auto`) and fio's and dd's are 4 KiB pages: on a queue
/// with few segments (`max_segments`) that alone halves a 1 MiB figure. So
/// where ours are huge the line asks fio for huge pages too
/// (`--iomem=mmaphuge`, reserved hugetlb pages), says first how many to
/// reserve, and says what differs where it cannot be the same.
pub fn fio(cfg: &RunConfig, targets: &[PathBuf], buffers: Buffers) -> Result<Fio, UsageError> {
    let bs = block_size(cfg, targets)?;
    let mut notes = Vec::new();
    let mut g = workload_options(cfg, bs);
    if cfg.stripe.is_some() {
        notes.push("--stripe: fio has no RAID0 model; each target is its own job here");
    }
    if cfg.rw.trims() && !targets.iter().all(|t| t.starts_with("/dev/")) {
        notes.push("trims on a file: fio's psync, libaio and io_uring send BLKDISCARD, which a file refuses (ENOTTY); stripebench punches a hole, as fio's --ioengine=falloc does");
    }
    if cfg.cached {
        // fio keeps what is cached (its default invalidate=1 would drop it).
        g.push("--invalidate=0".into());
        notes.push("--cached: fio does not pre-read the region; the page cache is what it finds");
    }
    if !cfg.direct && !cfg.drop_caches && !cfg.cached && !cfg.rw.writes() {
        notes.push("buffered reads: stripebench evicts the targets' pages first (fio: invalidate=1, its default)");
    }
    if cfg.drop_caches {
        notes.push("--drop-caches: fio does not drop all caches; run `echo 3 > /proc/sys/vm/drop_caches` first");
    }
    if cfg.readahead_kb.is_some() {
        notes.push(
            "--readahead: fio does not set the device's read-ahead; set it with blockdev --setra",
        );
    }
    if cfg.md_tunables.any() {
        notes.push("md's tunables (--stripe-cache-size, --group-thread-cnt, --sync-speed-min/-max): fio sets none of them; echo each value to /sys/block/mdN/md/ first, and put it back after");
    }
    verify_words(cfg, &mut g, &mut notes);
    timing_notes(cfg, &mut notes);
    if let (Some(n), Some(loops)) = (cfg.ios, cfg.passes) {
        if n % loops != 0 {
            notes.push("--ios with --passes: fio counts number_ios per loop (number_ios x loops in all), so it stops at the next multiple of --passes");
        }
    }
    if cfg.register && cfg.engine == EngineKind::Uring {
        g.push("--fixedbufs".into());
        g.push("--registerfiles".into());
    }
    if !cfg.direct {
        // fio's default fadvise_hint=1 advises POSIX_FADV_SEQUENTIAL (twice
        // the file's read-ahead) or RANDOM (none); stripebench gives no
        // hint, so a buffered run's read-ahead is the device's.
        g.push("--fadvise_hint=0".into());
    }
    if cfg.uncached {
        g.push("--uncached=1".into());
        notes.push("--uncached: fio's uncached=1 is in fio 3.40 and later");
    }
    if cfg.nowait {
        g.push("--nowait=1".into());
        notes.push("--nowait: fio fails an I/O that would block (EAGAIN); stripebench counts it and issues it again without RWF_NOWAIT");
    }
    thread_flags(cfg, &mut g);
    if cfg.ring.iopoll {
        g.push("--hipri".into());
    }
    if cfg.ring.sqpoll {
        g.push("--sqthread_poll=1".into());
        if let Some(cpu) = cfg.ring.sqpoll_cpu {
            g.push(format!("--sqthread_poll_cpu={cpu}"));
        }
    }
    // `--complete-min` as the workers get it (auto settled by the caller,
    // from the targets; unsettled, it is one).
    match cfg.ring.complete_min {
        CompleteMin::Fixed(n) if n > 1 && cfg.engine == EngineKind::Uring => {
            g.push(format!("--iodepth_batch_complete_min={n}"));
        }
        _ => {}
    }
    // `--sched` as the workers get it (auto resolved by the caller, from
    // the targets): fio has no option for it, so the line runs under chrt.
    let batch = cfg.engine == EngineKind::Uring && cfg.ring.sched == crate::engine::Sched::Batch;
    if batch {
        notes.push("--sched: the workers run SCHED_BATCH; fio has no option for it, so the line runs fio under chrt --batch 0");
    }
    match cfg.ring.taskrun {
        crate::engine::TaskRun::Auto | crate::engine::TaskRun::Defer => {}
        t => notes.push(if t == crate::engine::TaskRun::Coop {
            "--taskrun coop: fio's io_uring asks SINGLE_ISSUER|DEFER_TASKRUN where the kernel has them, and has no option for COOP_TASKRUN alone"
        } else {
            "--taskrun plain: fio's io_uring asks SINGLE_ISSUER|DEFER_TASKRUN where the kernel has them, and has no option for a plain ring"
        }),
    }
    error_words(cfg, &mut g, &mut notes);
    zones_fit(cfg)?;
    let split = cfg.jobs > 1 && !cfg.jobs_share && cfg.offset_increment.is_none();
    if split && cfg.size.is_none() && cfg.offset > 0 {
        return Err(UsageError(
            "--print-fio with --jobs and --offset needs --size: fio's shares are of the whole file; give --size".into(),
        ));
    }
    if let Some(t) = targets
        .iter()
        .find(|t| t.to_string_lossy().chars().any(char::is_control))
    {
        return Err(UsageError(format!(
            "--print-fio: the target {} has a control character, which no command line should carry; rename it",
            crate::base::error::show_text(&t.to_string_lossy())
        )));
    }
    if cfg.steady.is_some() {
        notes.push("--steady: fio reads each job's figures for its steady state at its own check, about each ss_interval; stripebench judges each whole --live-interval of the run's total, the last one cut short by the window's end left out");
    }
    if split && cfg.size.is_none() {
        notes.push("--jobs: each fio job gets the same share of the region; fio rounds its slice otherwise than stripebench (to the block size)");
    }
    let mut setup = Vec::new();
    let mut owned_notes: Vec<String> = Vec::new();
    let depth = match cfg.engine {
        EngineKind::Sync => 1,
        EngineKind::Uring => cfg.iodepth as u64,
    };
    let huge = match buffers {
        Buffers::Were(h) => h,
        Buffers::Asked => cfg.hugepages.for_buffer(bs) != HugePages::Off,
    };
    if huge {
        g.push("--iomem=mmaphuge".into());
        // fio's own default differs by platform: the pages reserved below are 2 MiB.
        g.push("--hugepage-size=2m".into());
        let jobs_all = targets.len() as u64 * cfg.jobs.max(1) as u64;
        let pages = jobs_all * fio_huge_pages_per_job(bs, depth, cfg.direct);
        setup.push(format!(
            "sysctl -w vm.nr_hugepages={pages}   # fio's --iomem=mmaphuge takes {pages} reserved 2 MiB page(s) for its buffers, as stripebench's buffers are huge pages; with pages already in use, add them (HugePages_Total - HugePages_Free in /proc/meminfo); put the old value back afterwards"
        ));
        if buffers == Buffers::Asked && cfg.hugepages == HugePages::Auto {
            owned_notes.push("--hugepages auto: stripebench's buffers are transparent huge pages when the system gives them, else reserved ones, else 4 KiB pages (the run document's workers[].buffer says which); fio's only huge-page buffers are reserved ones (--iomem=mmaphuge). Without it, fio's and dd's 4 KiB-page buffers are split by a queue with few segments (max_segments) and can read half as fast".into());
        }
    }
    let mut out = String::from(if batch { "chrt --batch 0 fio" } else { "fio" });
    for o in &g {
        out.push(' ');
        out.push_str(o);
    }
    push_jobs(cfg, targets, &mut out);
    Ok(Fio {
        setup,
        notes: notes
            .into_iter()
            .map(String::from)
            .chain(owned_notes)
            .collect(),
        line: out,
    })
}

/// Where fio starts, orders or reports the workload otherwise: said.
fn timing_notes(cfg: &RunConfig, notes: &mut Vec<&'static str>) {
    if cfg.start_at.is_some() {
        notes.push("--start-at: fio starts at once");
    }
    if cfg.access.random_map {
        notes.push("--random-map: fio's random map visits every block once a pass too, in an order of its own");
    }
    if cfg.access.spr.is_some() {
        notes.push("--sprandom: fio's sprandom=1 is in fio 3.41 and later; its new blocks come in its LFSR's order, ours in an order of our own, the same blocks and shares");
    }
    if cfg.latency_search.is_some() {
        notes.push("--latency-target: fio's figures are of its final window alone (it resets them when the search settles); stripebench's cover every window, the final window's own in its window line");
    }
}

/// `--verify`: with `--pattern`, fio's verify=pattern, the same check of
/// the same bytes; else said to be no fio verify.
/// `--max-errors` and `--ignore-errors` in fio's words.
fn error_words(cfg: &RunConfig, g: &mut Vec<String>, notes: &mut Vec<&'static str>) {
    if cfg.max_errors > 1 {
        notes.push(
            "--max-errors: fio stops at the first error (its --continue_on_error is the nearest)",
        );
    }
    if !cfg.ignore_errors.is_empty() {
        g.push(format!("--ignore_error={}", cfg.ignore_errors.fio_text()));
    }
}

fn verify_words(cfg: &RunConfig, g: &mut Vec<String>, notes: &mut Vec<&'static str>) {
    match &cfg.pattern {
        // fio's verify=pattern is the same check of the same bytes.
        Some(p) if cfg.verify => {
            g.push("--verify=pattern".into());
            g.push(format!("--verify_pattern={}", word(p.text())));
        }
        _ if cfg.verify => notes
            .push("--verify: stripebench's self-describing blocks are not fio's verify headers"),
        _ => {}
    }
}

/// The block size the line gives fio; refused when there is none to give
/// yet (no named target, `--bs lbs`), both read at run time.
fn block_size(cfg: &RunConfig, targets: &[PathBuf]) -> Result<u64, UsageError> {
    if targets.is_empty() {
        return Err(UsageError(
            "--print-fio needs named targets: the built-in test bed is made at run time; name a file or device".into(),
        ));
    }
    match cfg.bs {
        BlockSizeArg::Bytes(b) => Ok(b),
        BlockSizeArg::Logical => Err(UsageError(
            "--print-fio needs --bs as a size: `lbs` is read from the target at run time; give --bs 4k or the like".into(),
        )),
    }
}

/// `--zones` with `--size`: fio's strided zones ignore its size= (they
/// go on to the file's end), so no fio job walks ours.
fn zones_fit(cfg: &RunConfig) -> Result<(), UsageError> {
    if cfg.access.zones.is_some() && cfg.size.is_some() {
        return Err(UsageError(
            "--print-fio with --zones and --size: fio's zones run past its size= to the file's end; drop --size (--io-limit bounds the bytes as fio's io_size= does)".into(),
        ));
    }
    Ok(())
}

/// The fio options of the workload itself: the pattern, the engine and
/// its depth, how the run ends, the ramp, the rate, and the data written.
fn workload_options(cfg: &RunConfig, bs: u64) -> Vec<String> {
    let mut g: Vec<String> = vec![
        format!("--rw={}{}", rw(cfg.rw), rw_modifier(cfg)),
        format!("--bs={}", fmt_size_arg(bs)),
        format!(
            "--ioengine={}",
            match cfg.engine {
                // RWF_* flags: fio's pvsync2, not psync, takes them.
                EngineKind::Sync if cfg.uncached || cfg.nowait => "pvsync2",
                EngineKind::Sync => "psync",
                EngineKind::Uring => "io_uring",
            }
        ),
        format!(
            "--iodepth={}",
            match cfg.engine {
                EngineKind::Sync => 1,
                EngineKind::Uring => cfg.iodepth,
            }
        ),
        format!("--direct={}", u8::from(cfg.direct)),
        "--thread".into(),
    ];
    if let Some(s) = &cfg.access.sizes {
        // --bssplit: fio's own bssplit= (it decides over bs=) and the
        // alignment its random offsets keep.
        g.push(format!("--bssplit={}", s.fio_spelling()));
        g.push(format!("--blockalign={}", s.align));
    }
    if let Some(z) = &cfg.access.zones {
        g.push("--zonemode=strided".into());
        g.push(format!("--zonesize={}", z.size));
        g.push(format!("--zonerange={}", z.range));
        g.push(format!("--zoneskip={}", z.skip));
    }
    if matches!(cfg.rw, RwMode::Randrw | RwMode::Rw) {
        g.push(format!("--rwmixread={}", cfg.read_pct));
    }
    if cfg.rw.is_random() {
        // stripebench draws each offset afresh, from a seed of its own;
        // with --random-map each block once a pass, as fio's map does.
        if !cfg.access.random_map {
            g.push("--norandommap".into());
        }
        g.push("--randrepeat=0".into());
        if !cfg.access.dist.is_uniform() {
            g.push(format!("--random_distribution={}", cfg.access.dist));
        }
    }
    match (cfg.io_limit, cfg.passes, cfg.ios) {
        (Some(n), loops, _) => {
            g.push(format!("--io_size={n}"));
            // --io-limit with --passes is fio's io_size= with loops=.
            if let Some(l) = loops.filter(|&l| l > 1) {
                g.push(format!("--loops={l}"));
            }
        }
        (None, Some(n), _) => g.push(format!("--loops={n}")),
        // --ios alone goes round the region until its count, which fio's
        // number_ios does not (it stops at size=): io_size= lets it.
        (None, None, Some(n)) => g.push(format!("--io_size={}", n.saturating_mul(bs))),
        // --sprandom ends when its walk has written the physical
        // capacity, as fio's sprandom=1 does without a runtime.
        (None, None, None) if cfg.access.spr.is_some() => {}
        (None, None, None) => {
            g.push(format!("--runtime={}ms", cfg.duration.as_millis()));
            g.push("--time_based".into());
        }
    }
    if let Some(n) = cfg.ios {
        // fio stops at number_ios x loops I/Os (exceeds_number_ios()): a
        // count of --passes' loops is given per loop, rounded up (the note
        // says when that is not exact).
        let loops = cfg.passes.unwrap_or(1);
        g.push(format!("--number_ios={}", n.div_ceil(loops)));
    }
    // Without time_based, fio's runtime is a cap: as --duration is to a
    // bound, when one was given.
    let bounded = cfg.io_limit.is_some() || cfg.passes.is_some() || cfg.ios.is_some();
    if bounded && cfg.duration < crate::measure::config::NO_TIME_LIMIT {
        g.push(format!("--runtime={}ms", cfg.duration.as_millis()));
    }
    if !cfg.start_delay.is_zero() {
        // fio draws a range per job; the run drew one time for all.
        g.push(format!("--startdelay={}us", cfg.start_delay.as_micros()));
    }
    if !cfg.ramp.is_zero() {
        g.push(format!("--ramp_time={}ms", cfg.ramp.as_millis()));
    }
    if let Some(s) = cfg.steady {
        g.push(format!("--steadystate={}", s.criterion.spelling()));
        g.push(format!("--ss_dur={}ms", s.dur.as_millis()));
        // fio counts ss_ramp from the job's start, its ramp_time included.
        g.push(format!("--ss_ramp={}ms", (cfg.ramp + s.ramp).as_millis()));
        // fio's default interval is 1 s; older fio (3.33) has no option for it.
        if s.interval != std::time::Duration::from_secs(1) {
            g.push(format!("--ss_interval={}ms", s.interval.as_millis()));
        }
        // fio judges each job apart unless they report as a group;
        // stripebench judges the run's total.
        g.push("--group_reporting".into());
    }
    match cfg.rate {
        Some(RateLimit::BytesPerSec(b)) => g.push(format!("--rate={}", b.round() as u64)),
        Some(RateLimit::Iops(n)) => g.push(format!("--rate_iops={}", n.round() as u64)),
        None => {}
    }
    if let Some(m) = cfg.rate_min {
        use crate::analysis::rate_min::Minimum;
        match m.min {
            Minimum::BytesPerSec(b) => g.push(format!("--rate_min={}", b.round() as u64)),
            Minimum::Iops(n) => g.push(format!("--rate_iops_min={}", n.round() as u64)),
        }
        if m.cycle != std::time::Duration::from_secs(1) {
            g.push(format!("--rate_cycle={}", m.cycle.as_millis()));
        }
    }
    g.extend(written_data(cfg));
    g.extend(paced_and_searched(cfg));
    if let Some(p) = &cfg.iolog_write {
        g.push(format!("--write_iolog={}", p.display()));
    }
    g
}

/// fio's words for what paces, shapes or ends a worker's I/O besides its
/// bound: --thinktime, --latency-target's search, --sprandom's walk and
/// --fill-device.
fn paced_and_searched(cfg: &RunConfig) -> Vec<String> {
    let mut g = Vec::new();
    // fio's times take us at the finest; ours are whole microseconds or
    // more where they come from its words, rounded up otherwise.
    let us = |d: std::time::Duration| d.as_nanos().div_ceil(1000);
    if let Some(t) = &cfg.think {
        g.push(format!("--thinktime={}us", us(t.time)));
        if !t.spin.is_zero() {
            g.push(format!("--thinktime_spin={}us", us(t.spin)));
        }
        if t.blocks > 1 {
            g.push(format!("--thinktime_blocks={}", t.blocks));
        }
        if t.on_issue {
            g.push("--thinktime_blocks_type=issue".into());
        }
    }
    if let Some(q) = &cfg.latency_search {
        g.push(format!("--latency_target={}us", q.target_ns.div_ceil(1000)));
        g.push(format!("--latency_window={}us", q.window_ns.div_ceil(1000)));
        g.push(format!("--latency_percentile={}", q.percentile));
        if q.keep_searching {
            g.push("--latency_run=1".into());
        }
    }
    if let Some(s) = &cfg.access.spr {
        // fio's sprandom takes its new blocks from the LFSR, without a map.
        g.push("--sprandom=1".into());
        g.push(format!("--spr_op={}", crate::base::units::fmt_share(s.op)));
        g.push(format!("--spr_num_regions={}", s.regions));
        g.push("--random_generator=lfsr".into());
    }
    if cfg.fill {
        g.push("--fill_device=1".into());
    }
    g
}

/// What the written blocks hold: a pattern, or unique data made
/// compressible or duplicated as asked, and the buffered write's fsync.
fn written_data(cfg: &RunConfig) -> Vec<String> {
    let mut g = Vec::new();
    match &cfg.pattern {
        // fio takes %o only in verify_pattern, which it writes without
        // verify= too (and checks only with it): see `fio` for --verify.
        Some(p) if cfg.rw.writes_data() && !cfg.verify => {
            let key = if p.has_offset() {
                "verify_pattern"
            } else {
                "buffer_pattern"
            };
            g.push(format!("--{key}={}", word(p.text())));
            if p.has_offset() {
                g.push("--verify=pattern".into());
                g.push("--do_verify=0".into());
            }
        }
        _ => {}
    }
    if cfg.rw.writes_data() {
        // Unique data in every block, made compressible or duplicated as
        // asked (a pattern is the same in every block, or but its %o).
        if cfg.pattern.is_none() {
            g.push("--refill_buffers".into());
        }
        if cfg.buffer_compress > 0 {
            g.push(format!(
                "--buffer_compress_percentage={}",
                cfg.buffer_compress
            ));
            g.push("--buffer_compress_chunk=4k".into());
        }
        if cfg.dedupe > 0 {
            g.push(format!("--dedupe_percentage={}", cfg.dedupe));
            if let Some(s) = cfg.dedupe_set {
                g.push("--dedupe_mode=working_set".into());
                g.push(format!("--dedupe_working_set_percentage={}", s.pct));
                if s.global {
                    g.push("--dedupe_global=1".into());
                }
            }
        }
        if !cfg.direct {
            // Buffered writes end with one fsync, timed apart.
            g.push("--end_fsync=1".into());
        }
    }
    g
}

/// One fio job per target and `--jobs`, each on its share of the region
/// (the whole region with --jobs-share) and its CPU, appended to `out`.
fn push_jobs(cfg: &RunConfig, targets: &[PathBuf], out: &mut String) {
    let jobs = cfg.jobs.max(1) as u64;
    for (ti, t) in targets.iter().enumerate() {
        for job in 0..jobs {
            let id = ti as u64 * jobs + job;
            let mut w = vec![
                format!("--name=w{id}"),
                format!("--filename={}", filename(&t.to_string_lossy())),
            ];
            match cfg.size {
                // fio's offset_increment, written out per job.
                _ if cfg.offset_increment.is_some() => {
                    let inc = cfg.offset_increment.unwrap_or(0);
                    let at = cfg.offset + job * inc;
                    if at > 0 {
                        w.push(format!("--offset={at}"));
                    }
                    if let Some(size) = cfg.size {
                        w.push(format!("--size={size}"));
                    }
                }
                _ if cfg.jobs_share => {
                    if cfg.offset > 0 {
                        w.push(format!("--offset={}", cfg.offset));
                    }
                    if let Some(size) = cfg.size {
                        w.push(format!("--size={size}"));
                    }
                }
                Some(size) => {
                    let share = size / jobs;
                    w.push(format!("--offset={}", cfg.offset + job * share));
                    w.push(format!("--size={share}"));
                }
                None if jobs > 1 => {
                    // fio's percentages are of the whole file, so a region
                    // from --offset to the end is given in bytes, or not at all.
                    w.push(format!("--offset={}%", job * 100 / jobs));
                    w.push(format!("--size={}%", 100 / jobs));
                }
                None if cfg.offset > 0 => w.push(format!("--offset={}", cfg.offset)),
                None => {}
            }
            if let Some(c) = &cfg.cpus {
                w.push(format!("--cpus_allowed={}", c[id as usize % c.len()]));
            }
            for o in w {
                out.push(' ');
                out.push_str(&o);
            }
        }
    }
}

/// fio's offset modifier on rw=: `:512k` (skip, or `:-8k` back) for a
/// sequential pattern, `:8` (I/Os per random offset) for a random one.
fn rw_modifier(cfg: &RunConfig) -> String {
    if cfg.access.skip != 0 {
        format!(":{}", cfg.access.skip)
    } else if cfg.access.seq_run > 1 {
        format!(":{}", cfg.access.seq_run)
    } else {
        String::new()
    }
}

fn rw(rw: RwMode) -> &'static str {
    match rw {
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

/// A value as one shell word: single quotes around anything but plain
/// characters (a pattern's "text" and 'file').
fn word(v: &str) -> String {
    if v.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+,=%".contains(&b))
    {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', "'\\''"))
    }
}

/// A path as one shell word fio takes as one file: `:` escaped (fio's list
/// separator), single quotes around anything but plain characters.
pub fn filename(p: &str) -> String {
    let p = p.replace(':', "\\:");
    if p.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+,=".contains(&b))
    {
        p
    } else {
        format!("'{}'", p.replace('\'', "'\\''"))
    }
}
