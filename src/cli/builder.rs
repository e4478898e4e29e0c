//! A run's options built in code, typed: what a program (advise today)
//! would otherwise write as `run`'s command line and have clap parse
//! again. Each setter checks its value as `run`'s option parser checks
//! the same text, and [`RunBuilder::config`] validates the whole as
//! `run` does ([`crate::cli::validate::run_config`]), so a run built
//! here is refused, or configured, exactly as typed.
//!
//! No argument vector is made: a target is a path, never a word clap
//! could read as an option (a volume named `-vol` is a volume).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use super::run_args::{self as values, AlignArg, RunArgs};
use crate::base::error::UsageError;
use crate::measure::config::{RunConfig, RwMode};

/// `run`'s options, typed, from clap's defaults (as `stripebench run`
/// with nothing given) up.
#[derive(Debug, Clone)]
pub struct RunBuilder {
    args: RunArgs,
}

/// A value `run` would have refused: the option and why, as clap says
/// it of the same value typed (one line, exit 2).
fn invalid(option: &str, value: impl std::fmt::Display, why: String) -> anyhow::Error {
    UsageError(format!("invalid value '{value}' for '--{option}': {why}")).into()
}

/// A percentage as `run`'s parser takes it: 0 to 100.
fn percent(option: &str, pct: u8) -> Result<u8> {
    values::parse_pct(&pct.to_string()).map_err(|e| invalid(option, pct, e))
}

impl RunBuilder {
    /// On top of options already given (what clap parsed of a command line).
    pub fn from_args(args: RunArgs) -> Self {
        RunBuilder { args }
    }

    /// A run of `targets` (the TARGET arguments), every option at its default.
    pub fn new(targets: impl IntoIterator<Item = impl Into<PathBuf>>) -> Self {
        RunBuilder {
            args: RunArgs {
                targets: targets.into_iter().map(Into::into).collect(),
                ..RunArgs::default()
            },
        }
    }

    /// `--rw`.
    pub fn rw(mut self, rw: RwMode) -> Self {
        self.args.rw = rw;
        self
    }

    /// `--direct` (which clap holds apart from `--buffered`: one or the other).
    pub fn direct(mut self) -> Self {
        self.args.direct = true;
        self.args.buffered = false;
        self
    }

    /// `--buffered` (which clap holds apart from `--direct`: one or the other).
    pub fn buffered(mut self) -> Self {
        self.args.buffered = true;
        self.args.direct = false;
        self
    }

    /// `--bs BYTES`.
    pub fn bs(mut self, bytes: u64) -> Result<Self> {
        self.args.bs = Some(values::block_size(bytes).map_err(|e| invalid("bs", bytes, e))?);
        Ok(self)
    }

    /// `--iodepth N`.
    pub fn iodepth(mut self, n: usize) -> Result<Self> {
        if !values::DEPTH.contains(&n) {
            return Err(invalid("iodepth", n, values::not_a_depth(&n.to_string())));
        }
        self.args.iodepth = n;
        Ok(self)
    }

    /// `--jobs N`.
    pub fn jobs(mut self, n: usize) -> Result<Self> {
        if !values::COUNT.contains(&n) {
            return Err(invalid("jobs", n, values::not_a_count(&n.to_string())));
        }
        self.args.jobs = n;
        Ok(self)
    }

    /// `--steady CRITERION:LIMIT`.
    pub fn steady(mut self, c: crate::analysis::steady::Criterion) -> Self {
        self.args.steady = Some(c);
        self
    }

    /// `--steady-dur` (not 0).
    pub fn steady_dur(mut self, d: Duration) -> Result<Self> {
        let shown = humantime::format_duration(d);
        self.args.steady_dur =
            Some(values::positive_duration(d).map_err(|e| invalid("steady-dur", shown, e))?);
        Ok(self)
    }

    /// `--live-interval` (10 ms to 1 h, as its parser takes it).
    pub fn live_interval(mut self, d: Duration) -> Result<Self> {
        let shown = humantime::format_duration(d).to_string();
        self.args.live_interval =
            values::parse_live_interval(&shown).map_err(|e| invalid("live-interval", &shown, e))?;
        Ok(self)
    }

    /// `--steady-ramp` (any length, 0 included).
    pub fn steady_ramp(mut self, d: Duration) -> Self {
        self.args.steady_ramp = Some(d);
        self
    }

    /// `--jobs-share`: every job on the whole region.
    pub fn jobs_share(mut self) -> Self {
        self.args.jobs_share = true;
        self
    }

    /// `--passes N`.
    pub fn passes(mut self, n: u64) -> Result<Self> {
        if n == 0 {
            return Err(invalid("passes", n, values::not_at_least_one("0")));
        }
        self.args.passes = Some(n);
        Ok(self)
    }

    /// `--ios N`.
    pub fn ios(mut self, n: u64) -> Result<Self> {
        if n == 0 {
            return Err(invalid("ios", n, values::not_at_least_one("0")));
        }
        self.args.ios = Some(n);
        Ok(self)
    }

    /// `--start-delay A-B` (A for one time): checked as its parser checks.
    pub fn start_delay(mut self, lo: Duration, hi: Duration) -> Result<Self> {
        let shown = format!(
            "{}-{}",
            humantime::format_duration(lo),
            humantime::format_duration(hi)
        );
        let text = format!("{}us-{}us", lo.as_micros(), hi.as_micros());
        let d = crate::cli::run_args::parse_start_delay(&text)
            .map_err(|e| invalid("start-delay", shown, e))?;
        self.args.start_delay = Some(d);
        Ok(self)
    }

    /// `--readahead KB`.
    pub fn readahead_kb(mut self, kb: u64) -> Result<Self> {
        if kb > values::READAHEAD_MAX_KB {
            return Err(invalid(
                "readahead",
                kb,
                values::not_a_readahead(&kb.to_string()),
            ));
        }
        self.args.readahead = Some(kb);
        Ok(self)
    }

    /// `--stripe-cache-size N`.
    pub fn stripe_cache_size(mut self, n: u64) -> Result<Self> {
        if !values::stripe_cache_size_ok(n) {
            let why = values::not_a_stripe_cache_size(&n.to_string());
            return Err(invalid("stripe-cache-size", n, why));
        }
        self.args.stripe_cache_size = Some(n);
        Ok(self)
    }

    /// `--align stripe`.
    pub fn align_stripe(mut self) -> Self {
        self.args.align = Some(AlignArg::Stripe);
        self
    }

    /// `--allow-destructive`.
    pub fn allow_destructive(mut self) -> Self {
        self.args.allow_destructive = true;
        self
    }

    /// `--duration`.
    pub fn duration(mut self, d: Duration) -> Result<Self> {
        let shown = humantime::format_duration(d);
        self.args.duration =
            Some(values::positive_duration(d).map_err(|e| invalid("duration", shown, e))?);
        Ok(self)
    }

    /// `--ramp` (any length, 0 included).
    pub fn ramp(mut self, d: Duration) -> Self {
        self.args.ramp = Some(d);
        self
    }

    /// `--wait-lock` when `wait`.
    pub fn wait_lock(mut self, wait: bool) -> Self {
        self.args.wait_lock = wait;
        self
    }

    /// `--no-progress`.
    pub fn no_progress(mut self) -> Self {
        self.args.no_progress = true;
        self
    }

    /// `--mix PCT`.
    pub fn mix(mut self, pct: u8) -> Result<Self> {
        self.args.mix = percent("mix", pct)?;
        Ok(self)
    }

    /// `--dist DIST`, in fio's spelling.
    pub fn dist(mut self, text: &str) -> Result<Self> {
        let d = crate::measure::workload::Dist::parse(text, &crate::base::units::parse_size)
            .map_err(|e| UsageError(format!("--dist: {e}")))?;
        self.args.dist = Some(d);
        Ok(self)
    }

    /// `--bssplit SIZE/PCT:...`.
    pub fn bssplit(mut self, text: &str) -> Result<Self> {
        let s = crate::measure::workload::Sizes::parse(text, &crate::base::units::parse_size)
            .map_err(|e| UsageError(format!("--bssplit: {e}")))?;
        self.args.bssplit = Some(s);
        Ok(self)
    }

    /// `--blockalign BYTES`.
    pub fn blockalign(mut self, bytes: u64) -> Self {
        self.args.blockalign = Some(bytes);
        self
    }

    /// `--skip BYTES` (negative: back).
    pub fn skip(mut self, bytes: i64) -> Self {
        self.args.skip = Some(bytes);
        self
    }

    /// `--zones SIZE:SKIP:RANGE`.
    pub fn zones(mut self, z: crate::measure::workload::Strided) -> Self {
        self.args.zones = Some(z);
        self
    }

    /// `--sprandom --spr-op F --spr-regions N`.
    pub fn sprandom(mut self, op: f64, regions: u32) -> Self {
        self.args.sprandom = true;
        self.args.spr_op = Some(op);
        self.args.spr_regions = Some(regions);
        self
    }

    /// `--seq-run N`.
    pub fn seq_run(mut self, n: u64) -> Self {
        self.args.seq_run = Some(n);
        self
    }

    /// `--offset-increment BYTES`.
    pub fn offset_increment(mut self, bytes: u64) -> Self {
        self.args.offset_increment = Some(bytes);
        self
    }

    /// `--uncached` (which clap holds apart from `--direct` and `--buffered`).
    pub fn uncached(mut self) -> Self {
        self.args.uncached = true;
        self.args.direct = false;
        self.args.buffered = false;
        self
    }

    /// `--hugepages`.
    pub fn hugepages(mut self, h: crate::engine::buffer::HugePages) -> Self {
        self.args.hugepages = h;
        self
    }

    /// `--io-limit BYTES`.
    pub fn io_limit(mut self, bytes: u64) -> Result<Self> {
        if bytes == 0 {
            let why = "the size must be larger than 0".to_string();
            return Err(invalid("io-limit", bytes, why));
        }
        self.args.io_limit = Some(bytes);
        Ok(self)
    }

    /// `--engine`.
    pub fn engine(mut self, e: values::EngineArg) -> Self {
        self.args.engine = e;
        self
    }

    /// `--no-register`.
    pub fn no_register(mut self) -> Self {
        self.args.no_register = true;
        self
    }

    /// `--hipri`.
    pub fn hipri(mut self) -> Self {
        self.args.hipri = true;
        self
    }

    /// `--sqpoll`, or `--sqpoll=CPU`.
    pub fn sqpoll(mut self, cpu: Option<usize>) -> Self {
        self.args.sqpoll = Some(cpu);
        self
    }

    /// `--complete-min N`.
    pub fn complete_min(mut self, n: u32) -> Result<Self> {
        self.args.complete_min = crate::engine::CompleteMin::parse(&n.to_string())
            .map_err(|e| invalid("complete-min", n, e))?;
        Ok(self)
    }

    /// `--numa-nodes LIST` (fio's numa_cpu_nodes): the workers run on
    /// those nodes' CPUs, not pinned to one.
    pub fn numa_nodes(mut self, nodes: Vec<usize>) -> Self {
        self.args.numa_nodes = Some(super::run_args::NodeList(nodes));
        self.args.cpus = None;
        self.args.no_pin = false;
        self
    }

    /// `--numa-mem POLICY` (fio's numa_mem_policy).
    pub fn numa_mem(mut self, p: crate::base::thread_setup::MemPolicy) -> Self {
        self.args.numa_mem = Some(p);
        self
    }

    /// `--ioprio CLASS,LEVEL` (fio's prioclass, prio).
    pub fn ioprio(mut self, p: crate::base::thread_setup::IoPrio) -> Self {
        self.args.ioprio = Some(p);
        self
    }

    /// `--cmdprio-bssplit` (fio's cmdprio_bssplit, its entries' classes
    /// and levels made explicit).
    pub fn cmdprio_bssplit(mut self, c: crate::base::thread_setup::CmdPrioSplit) -> Self {
        self.args.cmdprio_bssplit = Some(c);
        self
    }

    /// `--cmdprio PCT:CLASS,LEVEL` (fio's cmdprio_percentage and kin).
    pub fn cmdprio(mut self, c: crate::base::thread_setup::CmdPrio) -> Self {
        self.args.cmdprio = Some(c);
        self
    }

    /// `--nowait`.
    pub fn nowait(mut self) -> Self {
        self.args.nowait = true;
        self
    }

    /// `--rate BYTES/s` (which clap holds apart from `--rate-iops`).
    pub fn rate(mut self, bytes_per_sec: u64) -> Result<Self> {
        if bytes_per_sec == 0 {
            let why = crate::base::units::parse_io_rate("0").unwrap_err();
            return Err(invalid("rate", bytes_per_sec, why));
        }
        self.args.rate = Some(bytes_per_sec as f64);
        self.args.rate_iops = None;
        Ok(self)
    }

    /// `--rate-iops N` (which clap holds apart from `--rate`).
    pub fn rate_iops(mut self, n: u64) -> Result<Self> {
        let iops = crate::base::units::parse_iops(&n.to_string())
            .map_err(|e| invalid("rate-iops", n, e))?;
        self.args.rate_iops = Some(iops);
        self.args.rate = None;
        Ok(self)
    }

    /// `--rate-min SIZE/s` (fio's rate_min=).
    pub fn rate_min(mut self, bytes_per_sec: u64) -> Result<Self> {
        let v = crate::base::units::parse_io_rate(&bytes_per_sec.to_string())
            .map_err(|e| invalid("rate-min", bytes_per_sec, e))?;
        self.args.rate_min = Some(v);
        self.args.rate_iops_min = None;
        Ok(self)
    }

    /// `--rate-iops-min N` (fio's rate_iops_min=).
    pub fn rate_iops_min(mut self, n: u64) -> Result<Self> {
        let iops = crate::base::units::parse_iops(&n.to_string())
            .map_err(|e| invalid("rate-iops-min", n, e))?;
        self.args.rate_iops_min = Some(iops);
        self.args.rate_min = None;
        Ok(self)
    }

    /// `--rate-cycle TIME` (not 0).
    pub fn rate_cycle(mut self, d: Duration) -> Result<Self> {
        let shown = humantime::format_duration(d).to_string();
        self.args.rate_cycle =
            Some(values::positive_duration(d).map_err(|e| invalid("rate-cycle", shown, e))?);
        Ok(self)
    }

    /// `--thinktime TIME` (not 0).
    pub fn thinktime(mut self, d: Duration) -> Result<Self> {
        let shown = humantime::format_duration(d).to_string();
        self.args.thinktime =
            Some(values::positive_duration(d).map_err(|e| invalid("thinktime", shown, e))?);
        Ok(self)
    }

    /// `--thinktime-spin TIME`.
    pub fn thinktime_spin(mut self, d: Duration) -> Self {
        self.args.thinktime_spin = Some(d);
        self
    }

    /// `--thinktime-blocks N` (at least 1: fio reads 0 as 1).
    pub fn thinktime_blocks(mut self, n: u64) -> Self {
        self.args.thinktime_blocks = Some(n.max(1));
        self
    }

    /// `--thinktime-on-issue`.
    pub fn thinktime_on_issue(mut self) -> Self {
        self.args.thinktime_on_issue = true;
        self
    }

    /// `--latency-target TIME` (not 0).
    pub fn latency_target(mut self, d: Duration) -> Result<Self> {
        let shown = humantime::format_duration(d).to_string();
        self.args.latency_target =
            Some(values::positive_duration(d).map_err(|e| invalid("latency-target", shown, e))?);
        Ok(self)
    }

    /// `--latency-window TIME` (0 is refused by the run's checks).
    pub fn latency_window(mut self, d: Duration) -> Self {
        self.args.latency_window = Some(d);
        self
    }

    /// `--latency-percentile P` (above 0, at most 100).
    pub fn latency_percentile(mut self, p: &str) -> Result<Self> {
        self.args.latency_percentile = Some(
            crate::cli::run_args::parse_latency_percentile(p)
                .map_err(|e| invalid("latency-percentile", p.to_string(), e))?,
        );
        Ok(self)
    }

    /// `--random-map`.
    pub fn random_map(mut self) -> Self {
        self.args.random_map = true;
        self
    }

    /// `--latency-run`.
    pub fn latency_run(mut self) -> Self {
        self.args.latency_run = true;
        self
    }

    /// `--size BYTES`.
    pub fn size(mut self, bytes: u64) -> Self {
        self.args.size = Some(bytes);
        self
    }

    /// `--offset BYTES`.
    pub fn offset(mut self, bytes: u64) -> Self {
        self.args.offset = bytes;
        self
    }

    /// `--cpus LIST` (which clap holds apart from `--no-pin`).
    pub fn cpus(mut self, cpus: Vec<usize>) -> Result<Self> {
        if cpus.is_empty() {
            let why = crate::base::cpus::parse_cpu_list("").unwrap_err();
            return Err(invalid("cpus", "", why));
        }
        self.args.cpus = Some(values::CpuList(cpus));
        self.args.no_pin = false;
        Ok(self)
    }

    /// `--no-pin` (which clap holds apart from `--cpus`).
    pub fn no_pin(mut self) -> Self {
        self.args.no_pin = true;
        self.args.cpus = None;
        self
    }

    /// `--seed N`.
    pub fn seed(mut self, n: u64) -> Self {
        self.args.seed = Some(n);
        self
    }

    /// `--buffer-compress PCT`.
    pub fn buffer_compress(mut self, pct: u8) -> Result<Self> {
        self.args.buffer_compress = percent("buffer-compress", pct)?;
        Ok(self)
    }

    /// `--fill-device`.
    pub fn fill_device(mut self) -> Self {
        self.args.fill_device = true;
        self
    }

    /// `--pattern PATTERN`, parsed.
    pub fn pattern(mut self, p: crate::base::pattern::Pattern) -> Self {
        self.args.pattern = Some(p);
        self
    }

    /// `--dedupe PCT`.
    pub fn dedupe(mut self, pct: u8) -> Result<Self> {
        self.args.dedupe = percent("dedupe", pct)?;
        Ok(self)
    }

    /// `--dedupe-working-set PCT`.
    pub fn dedupe_working_set(mut self, pct: u8) -> Result<Self> {
        self.args.dedupe_working_set = Some(percent("dedupe-working-set", pct)?);
        Ok(self)
    }

    /// `--dedupe-global`.
    pub fn dedupe_global(mut self) -> Self {
        self.args.dedupe_global = true;
        self
    }

    /// `--verify`.
    pub fn verify(mut self) -> Self {
        self.args.verify = true;
        self
    }

    /// `--ignore-errors LIST`.
    pub fn ignore_errors(mut self, e: crate::measure::config::IgnoredErrors) -> Self {
        self.args.ignore_errors = Some(e);
        self
    }

    /// `--create SIZE`.
    pub fn create(mut self, bytes: u64) -> Self {
        self.args.create = Some(bytes);
        self
    }

    /// `--create-layout LAYOUT`.
    pub fn create_layout(mut self, l: crate::device::scratch::CreateLayout) -> Self {
        self.args.create_layout = Some(l);
        self
    }

    /// `--log-interval TIME` (10 ms to 1 h, whole milliseconds).
    pub fn log_interval(mut self, d: Duration) -> Result<Self> {
        let ms = format!("{}ms", d.as_millis());
        self.args.log_interval =
            values::parse_log_interval(&ms).map_err(|e| invalid("log-interval", ms, e))?;
        Ok(self)
    }

    /// `--fio-log KIND=PREFIX`, one more log.
    pub fn fio_log(mut self, kind: crate::report::fio_log::LogKind, prefix: PathBuf) -> Self {
        self.args.fio_log.push((kind, prefix));
        self
    }

    /// `--iolog-write FILE`.
    pub fn iolog_write(mut self, file: PathBuf) -> Self {
        self.args.iolog_write = Some(file);
        self
    }

    /// `--iolog-read FILE`.
    pub fn iolog_read(mut self, file: PathBuf) -> Self {
        self.args.iolog_read = Some(file);
        self
    }

    /// `--fio-log-format LIST`.
    pub fn fio_log_format(mut self, list: &str) -> Result<Self> {
        let spec = crate::report::fio_log::parse_format(list)
            .map_err(|e| invalid("fio-log-format", list, e))?;
        self.args.fio_log_format = Some(spec);
        Ok(self)
    }

    /// The options as set, before `run`'s validation of the whole.
    pub fn args(self) -> RunArgs {
        self.args
    }

    /// The options as `run` validates them, on the CPUs this process may use.
    pub fn config(self) -> Result<RunConfig> {
        let available = crate::base::cpus::available_cpus();
        Ok(super::validate::run_config(&self.args, &available, None)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    #[test]
    fn a_run_with_nothing_set_is_what_clap_parses_from_a_bare_run() {
        let Command::Run(parsed) = Cli::try_parse_from(["stripebench", "run"]).unwrap().command
        else {
            panic!("not a run")
        };
        assert_eq!(format!("{:?}", RunArgs::default()), format!("{parsed:?}"));
    }

    #[test]
    fn a_value_run_refuses_is_refused_with_the_option_and_its_parser_s_words() {
        let e = RunBuilder::new(["/dev/null"]).iodepth(0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid value '0' for '--iodepth': '0' is not a queue depth: give a whole number from 1 to 4096"
        );
        assert!(e.downcast_ref::<UsageError>().is_some(), "exit 2: {e}");
        let e = RunBuilder::new(["/dev/null"])
            .stripe_cache_size(16)
            .unwrap_err();
        assert!(
            e.to_string().starts_with(
                "invalid value '16' for '--stripe-cache-size': '16' is not a stripe cache size"
            ),
            "{e}"
        );
        let e = RunBuilder::new(["/dev/null"]).bs(0).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid value '0' for '--bs': the block size must be larger than 0"),
            "{e}"
        );
    }

    #[test]
    fn the_whole_is_validated_as_run_validates_it() {
        let e = RunBuilder::new(["/dev/null"])
            .duration(Duration::from_millis(2))
            .unwrap()
            .config()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "--duration 2ms is too short to measure (a rate over a window of a few I/Os means nothing): give at least 10ms"
        );
    }
}
