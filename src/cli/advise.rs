//! The options of each measured run `advise` makes, built as `run`'s
//! command line and validated as `run` validates it (so a
//! read-ahead point is exactly `run --buffered --readahead KB`).

use std::path::Path;

use anyhow::Result;

use crate::measure::config::RunConfig;

/// One read-ahead point: buffered sequential reads of `volume` by one
/// thread in 128 KiB requests (what cp and most readers ask), read-ahead
/// set to `kb` for the run, one pass over the volume at most, for
/// `seconds`, the cache dropped first.
pub fn readahead_run(volume: &Path, kb: u64, seconds: f64, wait_lock: bool) -> Result<RunConfig> {
    let kb = kb.to_string();
    let words = [
        "--buffered",
        "--bs",
        "128k",
        "--passes",
        "1",
        "--readahead",
        &kb,
    ];
    parse_run(run_argv(&words, seconds, wait_lock, [volume]))
}

/// One slow-member run: every member read at once, O_DIRECT, one worker
/// each, sequential 1 MiB reads, for `seconds` (no ramp: the members are
/// compared with each other, in the same window).
pub fn members_run(
    members: &[std::path::PathBuf],
    seconds: f64,
    wait_lock: bool,
) -> Result<RunConfig> {
    let words = ["--direct", "--bs", "1m", "--ramp", "0"];
    parse_run(run_argv(
        &words,
        seconds,
        wait_lock,
        members.iter().map(|m| m.as_path()),
    ))
}

/// The request-size run: O_DIRECT sequential reads of `volume` in `bs`
/// (a full stripe), one worker, for `seconds`.
pub fn requests_run(volume: &Path, bs: u64, seconds: f64, wait_lock: bool) -> Result<RunConfig> {
    let bs = bs.to_string();
    let words = ["--direct", "--bs", &bs, "--ramp", "0"];
    parse_run(run_argv(&words, seconds, wait_lock, [volume]))
}

/// One queue-depth point: O_DIRECT random 4 KiB reads of `volume` by one
/// worker at `depth` I/Os in flight, for `seconds`.
pub fn queue_run(volume: &Path, depth: u32, seconds: f64, wait_lock: bool) -> Result<RunConfig> {
    let depth = depth.to_string();
    let words = [
        "--rw",
        "randread",
        "--direct",
        "--bs",
        "4k",
        "--iodepth",
        &depth,
        "--ramp",
        "0",
    ];
    parse_run(run_argv(&words, seconds, wait_lock, [volume]))
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
    let (bs, cache) = (bs.to_string(), stripe_cache.to_string());
    let mut words = vec![
        "--rw",
        if random { "randwrite" } else { "write" },
        "--direct",
        "--bs",
        &bs,
        "--allow-destructive",
        "--stripe-cache-size",
        &cache,
        "--ramp",
        "0",
    ];
    if !random {
        words.extend(["--align", "stripe"]);
    }
    parse_run(run_argv(&words, seconds, wait_lock, [volume]))
}

/// `stripebench run [--rw read] --jobs 1 --no-progress WORDS --duration
/// SECONDS [--wait-lock] TARGETS...`: what every run of advise shares
/// (sequential reads unless WORDS say --rw).
fn run_argv<'a>(
    words: &[&str],
    seconds: f64,
    wait_lock: bool,
    targets: impl IntoIterator<Item = &'a Path>,
) -> Vec<std::ffi::OsString> {
    let ms = (seconds * 1000.0).round().max(1.0) as u64;
    let common = ["stripebench", "run", "--jobs", "1", "--no-progress"];
    let rw: &[&str] = if words.contains(&"--rw") {
        &[]
    } else {
        &["--rw", "read"]
    };
    let mut argv: Vec<std::ffi::OsString> = common
        .iter()
        .chain(rw)
        .chain(words)
        .map(Into::into)
        .collect();
    argv.extend(["--duration".into(), format!("{ms}ms").into()]);
    if wait_lock {
        argv.push("--wait-lock".into());
    }
    argv.extend(targets.into_iter().map(|t| t.as_os_str().into()));
    argv
}

/// `argv` as `run` parses and validates it.
fn parse_run(argv: Vec<std::ffi::OsString>) -> Result<RunConfig> {
    let cli = super::help::parse_from(argv)
        .map_err(|e| anyhow::anyhow!("internal error: advise's run options: {e}"))?;
    let super::Command::Run(a) = cli.command else {
        anyhow::bail!("internal error: advise's run options are not a run");
    };
    let mut c = super::validate::run_config(&a, &crate::base::cpus::available_cpus(), None)?;
    c.progress = false;
    Ok(c)
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
}
