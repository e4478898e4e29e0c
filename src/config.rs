//! `RunArgs` (what clap parsed) → a validated [`RunConfig`]: defaults
//! resolved, combinations checked. No I/O happens here; checks that need the
//! targets (block size against the device, region against its size) are made
//! by `plan`.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::cli::{BlockSizeArg, EngineArg, RunArgs, RwMode};
use crate::cpus;
use crate::engine::EngineKind;
use crate::error::UsageError;

/// Smallest built-in test-bed file: enough for a few 1 MiB requests.
pub const MIN_TESTBED_SIZE: u64 = 1 << 20;

/// Where a report goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputPath {
    Stdout,
    File(PathBuf),
}

impl OutputPath {
    fn from_arg(p: &std::path::Path) -> Self {
        if p.as_os_str() == "-" {
            OutputPath::Stdout
        } else {
            OutputPath::File(p.to_path_buf())
        }
    }
}

/// The built-in test bed used when no target is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestbedConfig {
    pub dir: PathBuf,
    pub files: usize,
    pub file_size: u64,
}

/// A validated run configuration.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Targets named by the user; empty means the built-in test bed.
    pub targets: Vec<PathBuf>,
    /// `--members VOLUME`: the targets are the volume's leaf members.
    pub members: Option<PathBuf>,
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
    pub duration: Duration,
    pub ramp: Duration,
    pub readahead_kb: Option<u64>,
    pub engine: EngineKind,
    pub iodepth: usize,
    pub register: bool,
    pub io_limit: Option<u64>,
    pub max_errors: u64,
    /// Testing only: worker 0 fails every I/O from this one on.
    pub debug_fail_from: Option<u64>,
    /// Testing only: worker 0 panics before it is ready.
    pub debug_die_in_setup: bool,
    /// Testing only (io_uring): worker 0's I/O never completes from this one on.
    pub debug_hang_from: Option<u64>,
    /// `--hang-timeout`: how long a worker waits for a completion before it
    /// reports the I/O in flight as hung.
    pub hang_timeout: Duration,
    /// `--verify`: write self-describing blocks, or check them when reading.
    pub verify: bool,
    /// Each worker reads its slice exactly once (`stripebench verify`).
    pub one_pass: bool,
    /// When the run was configured (Unix ms): the base of verify generations.
    pub start_ms: u64,
    pub size: Option<u64>,
    pub offset: u64,
    pub jobs: usize,
    /// CPUs to pin to, round-robin; `None` = not pinned.
    pub cpus: Option<Vec<usize>>,
    pub seed: u64,
    pub allow_destructive: bool,
    pub force_signature: bool,
    pub dry_run: bool,
    pub json: Option<OutputPath>,
    pub csv: Option<OutputPath>,
    pub histogram: bool,
    pub progress: bool,
    /// `--plot FILE.svg`.
    pub plot: Option<PathBuf>,
    /// `--start-at`: when the workers are released.
    pub start_at: Option<std::time::SystemTime>,
    /// `--wait-lock`: wait for a device another run is changing.
    pub wait_lock: bool,
    /// `--force-memory`: allow buffers above half the available memory.
    pub force_memory: bool,
}

/// The effective options as recorded in the JSON document.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct ConfigDoc {
    pub rw: RwMode,
    pub read_pct: u8,
    /// The requested size in bytes, or "lbs"; each target records the size it used.
    pub bs: String,
    pub direct: bool,
    /// read_ahead_kb set on the targets' devices for the run, if any.
    pub readahead_kb: Option<u64>,
    pub engine: EngineKind,
    pub iodepth: usize,
    /// io_uring: whether buffers and the file were to be registered.
    pub register: bool,
    /// Bytes each worker stopped after, when size-bounded.
    pub io_limit: Option<u64>,
    /// I/O errors after which a worker stops.
    pub max_errors: u64,
    /// `--hang-timeout`: how long an io_uring worker waits with nothing
    /// completing before it reports its I/O in flight as hung.
    #[serde(default)]
    pub hang_timeout_sec: Option<f64>,
    /// Self-describing blocks written, or checked.
    pub verify: bool,
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
}

impl RunConfig {
    /// `stripebench verify`: the run options, reading every block once and checking it.
    pub fn for_verify(
        args: &RunArgs,
        available: &[usize],
        tmpdir: Option<PathBuf>,
    ) -> Result<RunConfig, UsageError> {
        if args.rw != RwMode::Read {
            return Err(UsageError(format!(
                "verify reads: drop --rw {} (write with 'stripebench run --rw write --verify')",
                args.rw.name()
            )));
        }
        if args.targets.is_empty() {
            return Err(UsageError(
                "verify needs the targets to check: name them".into(),
            ));
        }
        if args.io_limit.is_some() {
            return Err(UsageError(
                "verify reads each slice once: drop --io-limit".into(),
            ));
        }
        let mut cfg = RunConfig::from_args(args, available, tmpdir)?;
        cfg.verify = true;
        cfg.one_pass = true;
        if args.ramp.is_none() {
            cfg.ramp = Duration::ZERO;
        }
        if args.duration.is_none() {
            // Until the pass is done: a year is "no limit" and keeps the arithmetic in range.
            cfg.duration = Duration::from_secs(365 * 86400);
        }
        Ok(cfg)
    }

    /// Validates the parsed arguments. `available` is the list of CPUs this
    /// process may use; `default_tmp` the directory for the test bed when
    /// neither --dir nor $TMPDIR says otherwise.
    pub fn from_args(
        args: &RunArgs,
        available: &[usize],
        tmpdir: Option<PathBuf>,
    ) -> Result<RunConfig, UsageError> {
        let cpus = if args.no_pin {
            None
        } else if let Some(list) = &args.cpus {
            cpus::check_cpus(&list.0, available)?;
            Some(list.0.clone())
        } else {
            Some(available.to_vec())
        };
        if args.rw != RwMode::Randrw && args.mix != 50 {
            return Err(UsageError(format!(
                "--mix only applies to --rw randrw (got --rw {}): drop --mix or use --rw randrw",
                args.rw.name()
            )));
        }
        if let Some(0) = args.size {
            return Err(UsageError(
                "--size 0 leaves nothing to test: give a size such as 1g, or leave it out to use the whole target".into(),
            ));
        }
        if args.stripe.is_some() && (args.targets.len() < 2 && args.members.is_none()) {
            return Err(UsageError(
                "--stripe models a RAID0 over several members: name two or more TARGETs (or --members VOLUME)".into(),
            ));
        }
        if args.stripe.is_some() && args.jobs > 1 {
            return Err(UsageError(
                "--stripe gives each member one worker: drop --jobs".into(),
            ));
        }
        if args.members.is_some() && !args.targets.is_empty() {
            return Err(UsageError(
                "--members names the volume whose members are driven: name no TARGET with it"
                    .into(),
            ));
        }
        let testbed = if args.targets.is_empty() && args.members.is_none() {
            if args.testbed_size < MIN_TESTBED_SIZE {
                return Err(UsageError(format!(
                    "--testbed-size {} is too small: give at least 1m",
                    args.testbed_size
                )));
            }
            let dir = args
                .dir
                .clone()
                .or(tmpdir)
                .unwrap_or_else(|| PathBuf::from("/tmp"));
            Some(TestbedConfig {
                dir,
                files: args.testbed_files.unwrap_or(available.len().max(2)),
                file_size: args.testbed_size,
            })
        } else {
            if args.dir.is_some() || args.testbed_files.is_some() {
                return Err(UsageError(
                    "--dir and --testbed-files are for the built-in test bed: leave them out when naming targets".into(),
                ));
            }
            None
        };
        let bs = args.bs.unwrap_or(if args.rw.is_random() {
            BlockSizeArg::Bytes(4096)
        } else {
            BlockSizeArg::Bytes(1 << 20)
        });
        let engine = match (args.engine, args.iodepth) {
            (EngineArg::Auto, 1) | (EngineArg::Sync, 1) => EngineKind::Sync,
            (EngineArg::Sync, d) => {
                return Err(UsageError(format!(
                    "--iodepth {d} needs an engine that keeps several I/Os in flight: use --engine uring (or --engine auto), or --iodepth 1"
                )))
            }
            (EngineArg::Auto, _) | (EngineArg::Uring, _) => EngineKind::Uring,
        };
        if args.debug_hang_from.is_some() && engine != EngineKind::Uring {
            return Err(UsageError(
                "--debug-hang-from needs --engine uring: a hung pread would hang the test itself"
                    .into(),
            ));
        }
        if args.no_register && engine != EngineKind::Uring {
            return Err(UsageError(
                "--no-register only applies to --engine uring".into(),
            ));
        }
        let ramp = match (args.ramp, args.io_limit) {
            (Some(r), Some(_)) if !r.is_zero() => return Err(UsageError(
                "--io-limit counts every I/O from the start, so it takes no --ramp: drop --ramp"
                    .into(),
            )),
            (Some(r), _) => r,
            (None, Some(_)) => Duration::ZERO,
            (None, None) => Duration::from_secs(1),
        };
        if args.verify && !matches!(args.rw, RwMode::Write | RwMode::Read) {
            return Err(UsageError(format!(
                "--verify writes whole sequential passes and reads them back: use --rw write (or read), not --rw {}",
                args.rw.name()
            )));
        }
        if args.cached && (!args.buffered || args.rw.writes()) {
            return Err(UsageError(
                "--cached measures page-cache reads: use it with --buffered and a read --rw".into(),
            ));
        }
        if let Some(at) = args.start_at {
            let now = std::time::SystemTime::now();
            if at < now {
                return Err(UsageError(
                    "--start-at is in the past: give a time a little ahead, e.g. $(( $(date +%s) + 30 ))".into(),
                ));
            }
            // As --duration: a wait longer than a day is a typo, not a plan.
            if at
                .duration_since(now)
                .is_ok_and(|d| d > Duration::from_secs(86_400))
            {
                return Err(UsageError(
                    "--start-at is more than a day ahead: give a time within the next 24 hours"
                        .into(),
                ));
            }
        }
        let seed = args.seed.unwrap_or_else(clock_seed);
        Ok(RunConfig {
            targets: args.targets.clone(),
            members: args.members.clone(),
            stripe: args.stripe,
            align_stripe: args.align.is_some(),
            cached: args.cached,
            drop_caches: args.drop_caches,
            testbed,
            rw: args.rw,
            read_pct: match args.rw {
                RwMode::Read | RwMode::Randread => 100,
                RwMode::Write | RwMode::Randwrite => 0,
                RwMode::Randrw => args.mix,
            },
            bs,
            direct: !args.buffered,
            duration: args.duration.unwrap_or(Duration::from_secs(10)),
            ramp,
            readahead_kb: args.readahead,
            engine,
            iodepth: args.iodepth,
            register: !args.no_register,
            io_limit: args.io_limit,
            max_errors: args.max_errors,
            debug_fail_from: args.debug_fail_from,
            debug_die_in_setup: args.debug_die_in_setup,
            debug_hang_from: args.debug_hang_from,
            hang_timeout: args.hang_timeout,
            verify: args.verify,
            one_pass: false,
            start_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            size: args.size,
            offset: args.offset,
            jobs: args.jobs,
            cpus,
            seed,
            allow_destructive: args.allow_destructive,
            force_signature: args.force_signature,
            dry_run: args.dry_run,
            json: args.json.as_deref().map(OutputPath::from_arg),
            csv: args.csv.as_deref().map(OutputPath::from_arg),
            histogram: args.histogram,
            plot: args.plot.clone(),
            start_at: args.start_at,
            wait_lock: args.wait_lock,
            force_memory: args.force_memory,
            progress: !args.no_progress,
        })
    }

    /// Whether the table must go to stderr because stdout carries a document.
    pub fn stdout_taken(&self) -> bool {
        self.json == Some(OutputPath::Stdout) || self.csv == Some(OutputPath::Stdout)
    }

    pub fn doc(&self, targets: &[String]) -> ConfigDoc {
        ConfigDoc {
            rw: self.rw,
            read_pct: self.read_pct,
            bs: match self.bs {
                BlockSizeArg::Bytes(n) => n.to_string(),
                BlockSizeArg::Logical => "lbs".into(),
            },
            direct: self.direct,
            readahead_kb: self.readahead_kb,
            engine: self.engine,
            iodepth: self.iodepth,
            register: self.engine == EngineKind::Uring && self.register,
            io_limit: self.io_limit,
            max_errors: self.max_errors,
            hang_timeout_sec: Some(self.hang_timeout.as_secs_f64()),
            verify: self.verify,
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
        }
    }
}

/// A seed drawn from the clock, for runs that did not fix one.
fn clock_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    crate::workload::splitmix64(nanos ^ u64::from(std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn cfg(argv: &[&str]) -> Result<RunConfig, UsageError> {
        let mut full = vec!["stripebench", "run"];
        full.extend_from_slice(argv);
        let Command::Run(args) = Cli::try_parse_from(full).expect("parses").command else {
            panic!("not a run command")
        };
        RunConfig::from_args(&args, &[0, 1], Some(PathBuf::from("/scratch")))
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

    #[test]
    fn bad_combinations_are_refused() {
        assert!(cfg(&["--cpus", "0-5"])
            .unwrap_err()
            .0
            .contains("not online"));
        assert!(cfg(&["--mix", "30"]).unwrap_err().0.contains("randrw"));
        assert!(cfg(&["--size", "0", "x"])
            .unwrap_err()
            .0
            .contains("--size 0"));
        assert!(cfg(&["--dir", "/d", "x"])
            .unwrap_err()
            .0
            .contains("test bed"));
        assert!(cfg(&["--testbed-size", "4k"])
            .unwrap_err()
            .0
            .contains("too small"));
    }

    #[test]
    fn stdout_document_moves_the_table() {
        assert!(cfg(&["--json", "-"]).unwrap().stdout_taken());
        assert!(!cfg(&["--json", "out.json"]).unwrap().stdout_taken());
    }
}
