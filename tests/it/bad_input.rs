//! Bad input: every case exits 2 with one readable line on stderr, before any
//! I/O, and never panics.

use crate::common;

use crate::common::{data_file, sb};

fn refused(args: &[&str], expect: &str) {
    let out = sb().arg("run").args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?} should exit 2; stderr: {err}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{args:?} panicked: {err}"
    );
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line expected, got: {err}");
    assert!(lines[0].starts_with("stripebench: error: "), "{err}");
    assert!(
        err.contains(expect),
        "{args:?}: expected '{expect}' in: {err}"
    );
    assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
}

#[test]
fn targets_that_cannot_be_used() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    refused(&[&format!("{d}/missing")], "does not exist");
    refused(&[&format!("{d}/we ird\n'name\"")], "does not exist");
    refused(&[d], "is a directory");
    refused(&["/dev/null"], "neither a block device nor a regular file");
    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    refused(&[empty.to_str().unwrap()], "is empty");
    let t = data_file(dir.path(), "t", 1 << 20);
    let t = t.to_str().unwrap();
    refused(&[t, t], "named twice");
}

// Regression (issue 13, item 8): "MB" meant 2^20 in a size and 10^6 in a
// rate. Sizes now refuse it; --help states both rules.
#[test]
fn mb_in_a_size_is_refused_and_help_states_the_units_rule() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let t = t.to_str().unwrap();
    refused(&["--size", "1MB", t], "'1MB' is ambiguous");
    refused(&["--bs", "64KB", t], "write 64k or 64KiB");
    refused(&["--io-limit", "1GB", t], "ambiguous");
    let out = sb()
        .args(["plan", "--target", "5G/s", "x.json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("1 MB/s = 10^6 bytes/s") && err.contains("see stripebench plan --help"),
        "{err}"
    );
    let help = sb().arg("--help").output().unwrap();
    // Words as printed, whatever the terminal's wrapping.
    let words = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let text = words(&help.stdout);
    for rule in [
        "rates are decimal in MB/s and GB/s (1 MB/s = 10^6 bytes/s)",
        "binary in MiB/s and GiB/s",
        "sizes are binary: 4k = 4KiB = 4096 bytes",
        "a size in KB, MB, GB or TB is refused as ambiguous",
    ] {
        assert!(text.contains(rule), "--help lacks '{rule}': {text}");
    }
    let plan_help = sb().args(["plan", "--help"]).output().unwrap();
    let text = words(&plan_help.stdout);
    assert!(text.contains("1 MB/s = 10^6 bytes/s"), "{text}");
    // The same value as a binary size is accepted.
    sb().args(["run", "--dry-run", "--size", "1MiB", t])
        .assert()
        .success();
}

#[test]
fn sizes_durations_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let t = t.to_str().unwrap();
    refused(&["--bs", "0", t], "larger than 0");
    refused(&["--bs", "abc", t], "not a size");
    refused(&["--bs", "4q", t], "unknown suffix");
    refused(&["--bs", "-4k", t], "not a size");
    refused(&["--bs", "", t], "empty size");
    refused(&["--bs", "99999999999999999999", t], "too large");
    refused(&["--bs", "2m", t], "larger than the region");
    refused(
        &["--bs", "1000", t],
        "not a multiple of the logical block size",
    );
    refused(&["--bs", "1000", t], "--bs lbs");
    refused(&["--duration", "0", t], "longer than 0");
    refused(&["--duration", "1us", t], "too short to measure");
    refused(&["--passes", "0", t], "not a count");
    // --passes with --io-limit is fio's loops= with io_size= (the limit
    // each pass), taken since: tests/it/fio_io_size_loops.rs.
    refused(
        &["--passes", "2", "--ramp", "1s", t],
        "--passes counts every I/O",
    );
    refused(&["--duration", "abc", t], "not a duration");
    refused(&["--duration", "10parsecs", t], "unknown unit");
    refused(&["--ramp", "-1s", t], "not a duration");
    refused(&["--jobs", "0", t], "not a count");
    refused(&["--jobs", "lots", t], "not a count");
    refused(&["--jobs", "300", "--bs", "64k", t], "--jobs 300");
    refused(&["--offset", "2m", t], "beyond the end");
    refused(&["--offset", "100", t], "--offset 100 is not a multiple");
    refused(&["--size", "0", t], "--size 0");
    refused(&["--size", "4m", t], "runs past the end");
    refused(&["--testbed-size", "1k"], "too small");
    refused(&["--iodepth", "0", t], "not a queue depth");
    refused(&["--iodepth", "5000", t], "not a queue depth");
    refused(&["--engine", "sync", "--iodepth", "8", t], "--engine uring");
    refused(&["--no-register", t], "only applies to --engine uring");
    refused(&["--io-limit", "0", t], "larger than 0");
    refused(&["--io-limit", "1m", "--ramp", "1s", t], "drop --ramp");
    refused(&["--engine", "fast", t], "invalid value");
}

#[test]
fn cpus_mix_and_options() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let t = t.to_str().unwrap();
    refused(&["--cpus", "4096", t], "not online");
    refused(&["--cpus", "3-1", t], "runs backwards");
    refused(&["--cpus", "", t], "empty CPU list");
    refused(&["--cpus", "0,x", t], "not a CPU list");
    refused(&["--cpus", "0,0", t], "appears twice");
    refused(&["--cpus", "0", "--no-pin", t], "cannot be used with");
    refused(&["--rw", "randrw", "--mix", "101", t], "not a percentage");
    refused(&["--rw", "randrw", "--mix", "-1", t], "not a percentage");
    refused(&["--mix", "30", t], "only applies to --rw randrw");
    refused(&["--rw", "write", "--dedupe", "101", t], "not a percentage");
    refused(
        &["--rw", "write", "--buffer-compress", "x", t],
        "not a percentage",
    );
    refused(
        &["--rw", "write", "--verify", "--dedupe", "50", t],
        "drop --buffer-compress and --dedupe",
    );
    // Issue 41: a verified random write must end its passes.
    refused(&["--rw", "randwrite", "--verify", t], "give --passes N");
    refused(&["--rw", "randread", "--verify", t], "not --rw randread");
    // A verified random mix reads back what each pass (every block once) wrote.
    refused(
        &["--rw", "randrw", "--verify", "--dist", "zipf:1.2", t],
        "drop --dist and --seq-run",
    );
    refused(&["--rw", "sideways", t], "invalid value");
    refused(&["--direct", "--buffered", t], "cannot be used with");
    refused(&["--frobnicate", t], "unexpected argument");
    refused(&["--dir", "/tmp", t], "built-in test bed");
    refused(&["--json", "-", "--csv", "-", t], "both want stdout");
    refused(
        &["--json", "/nonexistent/dir/out.json", t],
        "does not exist",
    );
    refused(&["--dir", "/nonexistent/dir"], "does not exist");
}

#[test]
fn readahead_needs_a_block_device() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    refused(
        &["--readahead", "128", "--buffered", t.to_str().unwrap()],
        "needs a block device",
    );
    refused(
        &["--readahead", "lots", t.to_str().unwrap()],
        "not a read-ahead",
    );
}

#[test]
fn writes_need_consent() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let before = std::fs::read(&t).unwrap();
    for rw in ["write", "randwrite", "randrw"] {
        refused(&["--rw", rw, t.to_str().unwrap()], "--allow-destructive");
    }
    assert_eq!(
        std::fs::read(&t).unwrap(),
        before,
        "refused writes changed nothing"
    );
}

#[test]
fn no_subcommand_shows_help_and_exits_2() {
    let out = sb().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Usage"));
    sb().args(["run", "--help"]).assert().success();
    sb().arg("--version").assert().success();
}

#[test]
fn subcommands_refuse_run_options_they_cannot_honour() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let t = t.to_str().unwrap();
    for (args, msg) in [
        (
            vec!["sweep", "--param", "bs=4k", "--histogram", t],
            "sweep does not take --histogram",
        ),
        (
            vec!["compare", "--plot", "x.svg", t],
            "compare does not take --plot",
        ),
        (
            vec!["compare", "--csv", "x.csv", t],
            "compare does not take --csv",
        ),
    ] {
        let out = sb().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(msg),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Issue "never destroy, take two", items 13-14: refusals that came after
/// the run, exited 1, or said the wrong thing.
#[test]
fn refusals_before_any_io_exit_2_and_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let t = t.to_str().unwrap();
    refused(&["--testbed-size", "900t"], "is free: use --dir elsewhere");
    let file = dir.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    refused(&["--dir", file.to_str().unwrap()], "is not a directory");
    refused(&["--start-at", "99999999999", t], "more than a day ahead");
    // 4 targets x 4096 x 1 MiB = 16 GiB of buffers.
    let more: Vec<String> = (1..4)
        .map(|i| {
            data_file(dir.path(), &format!("t{i}"), 1 << 20)
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let mut args = vec!["--iodepth", "4096", "--bs", "1m", t];
    args.extend(more.iter().map(String::as_str));
    refused(&args, "--force-memory");
}

#[test]
fn a_parse_error_names_the_subcommand_typed() {
    for sub in ["merge", "plan", "topology", "sweep"] {
        let out = sb().args([sub, "--no-such-option"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("see stripebench {sub} --help")),
            "{err}"
        );
    }
}

#[test]
fn a_full_stdout_is_one_line_on_stderr_and_the_json_is_still_written() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let j = dir.path().join("r.json");
    let full = std::fs::File::create("/dev/full").unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
        .env("STRIPEBENCH_STATE_DIR", common::state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(["run", "--duration", "50ms", "--ramp", "0", "--json"])
        .arg(&j)
        .arg(&t)
        .stdout(full)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("cannot write to stdout"), "{err}");
    common::json(&std::fs::read(&j).unwrap());
}

#[test]
fn the_seed_is_also_written_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let doc = common::run_json(&[
        "run",
        "--duration",
        "20ms",
        "--ramp",
        "0",
        "--seed",
        "18446744073709551557",
        t.to_str().unwrap(),
    ]);
    assert_eq!(doc["config"]["seed_str"], "18446744073709551557");
}

// Regression (issue 21, item 9): `--rw seqread` did not list the valid
// values, and the header printed `bs lbs` instead of the size it resolved to.
#[test]
fn rw_lists_its_values_and_the_header_shows_the_resolved_block_size() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let out = sb()
        .args(["run", "--rw", "seqread"])
        .arg(&t)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("give one of read, write, randread, randwrite, randrw"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    let out = sb()
        .args([
            "run", "--bs", "lbs", "-t", "100ms", "--ramp", "0", "--json", "-",
        ])
        .arg(&t)
        .output()
        .unwrap();
    common::succeeded(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bs = doc["targets"][0]["bs"].as_u64().unwrap();
    let table = String::from_utf8_lossy(&out.stderr);
    let head = table.lines().next().unwrap();
    assert!(!head.contains("bs lbs"), "{head}");
    let shown = stripebench::base::units::fmt_size_arg(bs);
    assert!(
        head.contains(&format!("bs {shown} (lbs: the logical block size)")),
        "{head}"
    );
}

/// Regression (hostile pass over issue 20): an error line written to a
/// standard error whose reader has gone (`2>&1 | head -c 200`, a launcher
/// that hung up) panicked in eprintln!, the panic hook's own eprintln!
/// panicked again, and the process aborted (exit 134, SIGABRT) instead of
/// exiting 2.
#[test]
fn an_error_to_a_closed_stderr_exits_2_without_aborting() {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: a two-int array for pipe to fill.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just made by pipe and are ours.
    let (read, write) = unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    };
    drop(read);
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
        .env("STRIPEBENCH_STATE_DIR", common::state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args([
            "report",
            "/nonexistent/doc.json",
            "-o",
            "/nonexistent/r.html",
        ])
        .stderr(write)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{:?}", out.status);
}

/// Regression (issue 38, item 9): the O_DIRECT alignment refusal rounded
/// `--bs` up to a multiple of the logical block size, and a size near 2^64
/// overflowed: a panic in a debug build, "use --bs 0" (which --bs refuses)
/// in a release one. Each refusal's suggested `--bs` is accepted by the
/// same run, and a size past what one request can move says so.
#[test]
fn the_block_size_an_alignment_refusal_suggests_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    // Sparse (a dry run does no I/O), and large enough for the largest block.
    let f = dir.path().join("big");
    std::fs::File::create(&f).unwrap().set_len(8 << 30).unwrap();
    let f = f.to_str().unwrap();
    refused(
        &["--dry-run", "--bs", "18446744073709551615", f],
        "is too large: one request can move at most 4 GiB - 1",
    );
    for bs in ["4097", "4294967295"] {
        let out = sb()
            .args(["run", "--dry-run", "--allow-holes", "--bs", bs, f])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bs}: {err}");
        let suggested = err
            .split("use --bs ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .unwrap_or_else(|| panic!("{bs}: no suggestion in {err}"));
        let out = sb()
            .args(["run", "--dry-run", "--allow-holes", "--bs", suggested, f])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{bs} -> --bs {suggested}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A value holding control characters is refused in one line, escaped,
/// its reason kept: clap's rendering cut it at a newline (`invalid value
/// 'junk` and no reason) and dropped an escape sequence's ESC and a BEL
/// (so `\x1b[31mjunk` showed as `junk`, the byte named then wrong).
#[test]
fn a_value_with_control_characters_is_refused_escaped_in_one_line() {
    for (args, expect) in [
        (
            ["run", "--pattern", "junk\n2"],
            "'junk\\u{a}2' for '--pattern <PATTERN>': no number",
        ),
        (
            ["run", "--pattern", "\x1b[31mjunk\x07"],
            "'\\u{1b}[31mjunk\\u{7}'",
        ),
        (["run", "--bs", "4\nk"], "'4\\u{a}k' has an unknown suffix"),
    ] {
        crate::common::refused(&args, expect);
    }
}
