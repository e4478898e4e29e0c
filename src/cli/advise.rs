//! The options of each measured run `advise` makes, built with `run`'s
//! typed builder and validated as `run` validates them (so a read-ahead
//! point is exactly `run --buffered --readahead KB`, and a refusal is
//! `run`'s).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use super::builder::RunBuilder;
use crate::measure::config::{RunConfig, RwMode};

/// One read-ahead point: buffered sequential reads of `volume` by one
/// thread in 128 KiB requests (what cp and most readers ask), read-ahead
/// set to `kb` for the run, one pass over the volume at most, for
/// `seconds`, the cache dropped first.
pub fn readahead_run(volume: &Path, kb: u64, seconds: f64, wait_lock: bool) -> Result<RunConfig> {
    let b = advise_run([volume], RwMode::Read)?
        .buffered()
        .bs(128 << 10)?
        .passes(1)?
        .readahead_kb(kb)?;
    finish(b, seconds, wait_lock)
}

/// One slow-member run: every member read at once, O_DIRECT, one worker
/// each, sequential 1 MiB reads, for `seconds` (no ramp: the members are
/// compared with each other, in the same window).
pub fn members_run(members: &[PathBuf], seconds: f64, wait_lock: bool) -> Result<RunConfig> {
    let b = advise_run(members, RwMode::Read)?.direct().bs(1 << 20)?;
    finish(b.ramp(Duration::ZERO), seconds, wait_lock)
}

/// The request-size run: O_DIRECT sequential reads of `volume` in `bs`
/// (a full stripe), one worker, for `seconds`.
pub fn requests_run(volume: &Path, bs: u64, seconds: f64, wait_lock: bool) -> Result<RunConfig> {
    let b = advise_run([volume], RwMode::Read)?.direct().bs(bs)?;
    finish(b.ramp(Duration::ZERO), seconds, wait_lock)
}

/// One queue-depth point: O_DIRECT random 4 KiB reads of `volume` by one
/// worker at `depth` I/Os in flight, for `seconds`.
pub fn queue_run(volume: &Path, depth: u32, seconds: f64, wait_lock: bool) -> Result<RunConfig> {
    let b = advise_run([volume], RwMode::Randread)?
        .direct()
        .bs(4096)?
        .iodepth(depth as usize)?;
    finish(b.ramp(Duration::ZERO), seconds, wait_lock)
}

/// One write run of a parity array (it destroys the volume's data: advise
/// plans it only with --allow-destructive): O_DIRECT writes of `bs`,
/// sequential from full-stripe boundaries or random, with the stripe cache
/// set to `stripe_cache` for the run, for `seconds`.
pub fn writes_run(
    volume: &Path,
    bs: u64,
    random: bool,
    stripe_cache: u64,
    seconds: f64,
    wait_lock: bool,
) -> Result<RunConfig> {
    let rw = if random {
        RwMode::Randwrite
    } else {
        RwMode::Write
    };
    let mut b = advise_run([volume], rw)?
        .direct()
        .bs(bs)?
        .allow_destructive()
        .stripe_cache_size(stripe_cache)?
        .ramp(Duration::ZERO);
    if !random {
        b = b.align_stripe();
    }
    finish(b, seconds, wait_lock)
}

/// What every run of advise shares: `run --rw RW --jobs 1 --no-progress
/// TARGETS...`.
fn advise_run<P: AsRef<Path>>(
    targets: impl IntoIterator<Item = P>,
    rw: RwMode,
) -> Result<RunBuilder> {
    let targets = targets.into_iter().map(|t| t.as_ref().to_path_buf());
    Ok(RunBuilder::new(targets).rw(rw).jobs(1)?.no_progress())
}

/// `--duration SECONDS` (in whole milliseconds, at least one)
/// `[--wait-lock]`, validated as `run` validates it.
fn finish(b: RunBuilder, seconds: f64, wait_lock: bool) -> Result<RunConfig> {
    let ms = (seconds * 1000.0).round().max(1.0) as u64;
    b.duration(Duration::from_millis(ms))?
        .wait_lock(wait_lock)
        .config()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{parse_fail_on, FailOn};
    use crate::document::advise::Severity;

    #[test]
    fn fail_on_takes_the_severities_and_none() {
        assert_eq!(parse_fail_on("none"), Ok(FailOn(None)));
        assert_eq!(parse_fail_on("medium"), Ok(FailOn(Some(Severity::Medium))));
        assert!(parse_fail_on("warning").unwrap_err().contains("info, low"));
    }

    #[test]
    fn a_readahead_point_is_a_buffered_single_pass_read_with_read_ahead_set() {
        let c = readahead_run(Path::new("/dev/null"), 1024, 2.5, false).unwrap();
        assert_eq!(c.readahead_kb, Some(1024));
        assert!(!c.direct);
        assert!(!c.rw.writes());
        assert!(!c.progress);
    }

    #[test]
    fn a_queue_point_is_direct_random_4k_at_its_depth() {
        let c = queue_run(Path::new("/dev/null"), 16, 2.0, false).unwrap();
        assert_eq!(c.iodepth, 16);
        assert_eq!(c.bs, crate::measure::config::BlockSizeArg::Bytes(4096));
        assert!(c.direct && c.rw == crate::measure::config::RwMode::Randread);
    }

    #[test]
    fn a_members_run_reads_every_member_direct_with_one_worker_each() {
        let m: Vec<std::path::PathBuf> = vec!["/dev/null".into(), "/dev/zero".into()];
        let c = members_run(&m, 3.0, false).unwrap();
        assert_eq!(c.targets, m);
        assert!(c.direct && !c.rw.writes());
        assert_eq!(c.readahead_kb, None);
    }

    /// What advise's runs were before they were built in code: `run`'s
    /// command line, parsed and validated as `run`'s (kept here as the
    /// reference the builders must match, option by option).
    fn argv_config(
        words: &[&str],
        seconds: f64,
        wait_lock: bool,
        targets: &[&str],
    ) -> Result<RunConfig> {
        let ms = (seconds * 1000.0).round().max(1.0) as u64;
        let mut argv = vec!["stripebench", "run", "--jobs", "1", "--no-progress"];
        if !words.contains(&"--rw") {
            argv.extend(["--rw", "read"]);
        }
        argv.extend(words);
        let duration = format!("{ms}ms");
        argv.extend(["--duration", &duration]);
        if wait_lock {
            argv.push("--wait-lock");
        }
        argv.extend(targets);
        let cli = crate::cli::help::parse_from(argv.into_iter().map(Into::into))?;
        let crate::cli::Command::Run(a) = cli.command else {
            panic!("not a run")
        };
        let mut c =
            crate::cli::validate::run_config(&a, &crate::base::cpus::available_cpus(), None)?;
        c.progress = false;
        Ok(c)
    }

    /// A config as text, without what each validation draws afresh (the
    /// seed from the clock, the instant it was made); a refusal as
    /// "refused", whatever its words (clap's and the builder's differ).
    fn shown(c: Result<RunConfig>) -> String {
        match c {
            Ok(mut c) => {
                c.seed = 0;
                c.start_ms = 0;
                format!("{c:?}")
            }
            Err(_) => "refused".into(),
        }
    }

    #[test]
    fn each_advise_run_is_the_run_its_command_line_was() {
        let v = Path::new("/dev/null");
        for (seconds, wait) in [(2.5, false), (0.004, true), (0.01, false), (7.0, true)] {
            for kb in [0, 128, 4096, 1 << 30, (1 << 30) + 1] {
                let k = kb.to_string();
                let want = argv_config(
                    &[
                        "--buffered",
                        "--bs",
                        "128k",
                        "--passes",
                        "1",
                        "--readahead",
                        &k,
                    ],
                    seconds,
                    wait,
                    &["/dev/null"],
                );
                assert_eq!(shown(readahead_run(v, kb, seconds, wait)), shown(want));
            }
            for depth in [0, 1, 16, 4096, 4097] {
                let d = depth.to_string();
                let want = argv_config(
                    &[
                        "--rw",
                        "randread",
                        "--direct",
                        "--bs",
                        "4k",
                        "--iodepth",
                        &d,
                        "--ramp",
                        "0",
                    ],
                    seconds,
                    wait,
                    &["/dev/null"],
                );
                assert_eq!(shown(queue_run(v, depth, seconds, wait)), shown(want));
            }
            for bs in [0, 4096, 65536, 3 << 20] {
                let b = bs.to_string();
                let want = argv_config(
                    &["--direct", "--bs", &b, "--ramp", "0"],
                    seconds,
                    wait,
                    &["/dev/null"],
                );
                assert_eq!(shown(requests_run(v, bs, seconds, wait)), shown(want));
            }
            let members = ["/dev/null", "/dev/zero", "/dev/full"];
            let paths: Vec<std::path::PathBuf> = members.iter().map(Into::into).collect();
            let want = argv_config(
                &["--direct", "--bs", "1m", "--ramp", "0"],
                seconds,
                wait,
                &members,
            );
            assert_eq!(shown(members_run(&paths, seconds, wait)), shown(want));
            for (bs, random, cache) in [
                (1 << 20, false, 256),
                (4096, true, 4096),
                (196608, false, 32768),
                (1 << 20, false, 16),
                (0, true, 256),
                (4096, true, 32769),
            ] {
                let (b, n) = (bs.to_string(), cache.to_string());
                let mut words = vec![
                    "--rw",
                    if random { "randwrite" } else { "write" },
                    "--direct",
                    "--bs",
                    &b,
                    "--allow-destructive",
                    "--stripe-cache-size",
                    &n,
                    "--ramp",
                    "0",
                ];
                if !random {
                    words.extend(["--align", "stripe"]);
                }
                let want = argv_config(&words, seconds, wait, &["/dev/null"]);
                let got = writes_run(v, bs, random, cache, seconds, wait);
                assert_eq!(shown(got), shown(want));
            }
        }
    }

    /// A name the old command line would have read as an option
    /// ("unexpected argument '-v'"): a target is a path, whatever it spells.
    #[test]
    fn a_target_whose_name_begins_with_a_dash_is_a_target_not_an_option() {
        let c = readahead_run(Path::new("-vol"), 1024, 2.0, false).unwrap();
        assert_eq!(c.targets, [Path::new("-vol")]);
        let m: Vec<std::path::PathBuf> = vec!["--dry-run".into(), "-x".into()];
        let c = members_run(&m, 2.0, false).unwrap();
        assert_eq!(c.targets, m);
        assert!(!c.dry_run);
    }
}
