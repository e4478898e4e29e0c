//! How a fio job ends and when it starts, honoured from a job file (issue
//! 41): `number_ios` (`run --ios`), `io_size` without `runtime` (`run
//! --io-limit`, until done), `loops` and friends under `time_based`, and
//! `startdelay` (`run --start-delay`). Each bounded job is checked for
//! fio's count of I/Os and bytes, and where fio is installed, fio is run on
//! the same job file beside us and the counts compared exactly.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{data_file, json, refused, sb, succeeded_as};

/// A job file `job.fio` in `dir`: `[j]` reading or writing `f.dat` there
/// (made, 1 MiB) at bs=4k, with `extra` lines.
fn job(dir: &Path, extra: &str) -> std::path::PathBuf {
    data_file(dir, "f.dat", 1 << 20);
    let p = dir.join("job.fio");
    std::fs::write(
        &p,
        format!("[j]\nfilename=f.dat\nsize=1m\nbs=4k\n{extra}\n"),
    )
    .unwrap();
    p
}

/// `run --fio-job job.fio` in `dir`: the run's own JSON and its fio JSON,
/// and the command's stderr (the printed command and its `#` lines).
fn ours(dir: &Path, extra: &str) -> (Value, Value, String) {
    let j = job(dir, extra);
    let out = sb()
        .current_dir(dir)
        .args(["run", "--fio-job"])
        .arg(&j)
        .args([
            "--no-progress",
            "--allow-destructive",
            "--json",
            "r.json",
            "--fio-json",
            "f.json",
        ])
        .output()
        .unwrap();
    succeeded_as(&out, extra);
    let read = |n: &str| json(&std::fs::read(dir.join(n)).unwrap());
    (
        read("r.json"),
        read("f.json"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// (I/Os, bytes) of a fio JSON document's first job, read and write summed.
fn moved(fio_json: &Value) -> (u64, u64) {
    let j = &fio_json["jobs"][0];
    let n = |d: &str, k: &str| j[d][k].as_u64().unwrap_or_else(|| panic!("{d}.{k}: {j}"));
    (
        n("read", "total_ios") + n("write", "total_ios"),
        n("read", "io_bytes") + n("write", "io_bytes"),
    )
}

/// The bounded jobs and fio's own count for each (fio 3.33, seen): I/Os.
const BOUNDED: &[(&str, u64)] = &[
    // number_ios before the end of size=: 100 I/Os.
    ("rw=read\nnumber_ios=100", 100),
    // number_ios past the end of size=: size= ends it (256 x 4k).
    ("rw=read\nnumber_ios=1000", 256),
    // fio stops at number_ios x loops.
    ("rw=read\nnumber_ios=100\nloops=2", 200),
    // Both directions count.
    ("rw=randrw\nnumber_ios=100\nnorandommap", 100),
    // io_size past size=: round the region three times.
    ("rw=read\nio_size=3m", 768),
    // io_size and number_ios: the first reached.
    ("rw=read\nio_size=3m\nnumber_ios=500", 500),
    ("rw=write\nio_size=512k", 128),
];

// Before: `number_ios` was refused ("no equivalent"), and `io_size`
// without runtime= was refused ("give runtime= as the cap").
#[test]
fn fio_job_number_ios_and_io_size_end_where_fio_ends() {
    for (extra, ios) in BOUNDED {
        let dir = tempfile::tempdir().unwrap();
        let (doc, f, _) = ours(dir.path(), extra);
        assert_eq!(moved(&f), (*ios, ios * 4096), "{extra}: {f}");
        // Bounded, no cap: it ended on its bound, not on a 10 s clock.
        let ended = &doc["window"]["ended_by"];
        assert!(ended == "limit" || ended == "passes", "{extra}: {ended}");
    }
}

#[test]
#[cfg_attr(not(sb_fio), ignore = "needs fio (Debian package fio)")]
fn fio_beside_us_on_number_ios_and_io_size_moves_the_same_ios_and_bytes() {
    for (extra, _) in BOUNDED {
        let dir = tempfile::tempdir().unwrap();
        let j = job(dir.path(), extra);
        let theirs = crate::common::fio_on(dir.path(), &j);
        let (_, f, _) = ours(dir.path(), extra);
        assert_eq!(moved(&f), moved(&theirs), "{extra}");
    }
}

// Before: refused ("with time_based: fio repeats the job until runtime=
// ends; give one of them"). fio runs until runtime= whatever loops=,
// io_size= or number_ios= say: so does the run, and says so.
#[test]
fn fio_job_loops_under_time_based_runs_until_runtime_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (doc, _, err) = ours(
        dir.path(),
        "rw=read\nloops=3\nnumber_ios=10\ntime_based\nruntime=300ms",
    );
    assert_eq!(doc["window"]["ended_by"], "duration", "{err}");
    for key in ["loops=3", "number_ios=10"] {
        assert!(
            err.contains(&format!(
                "# `{key}` with time_based: fio runs until runtime= ends"
            )),
            "{key}: {err}"
        );
    }
    // More than loops x size= and number_ios: it went on for the runtime.
    assert!(
        crate::common::u(&doc["total"]["ios"]) > 10,
        "{}",
        doc["total"]
    );
}

// Before: `startdelay` was refused ("no equivalent"). The workers wait,
// ready, and then run as without it: the wait is in the JSON, not in the
// window.
#[test]
fn fio_job_startdelay_waits_before_the_workers_start() {
    let dir = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let (doc, f, err) = ours(dir.path(), "rw=read\nstartdelay=700ms");
    assert!(t0.elapsed() >= Duration::from_millis(700), "{err}");
    assert!(err.contains("--start-delay=700ms"), "{err}");
    assert_eq!(doc["config"]["start_delay_sec"], 0.7);
    assert_eq!(moved(&f), (256, 1 << 20));
    // The window holds the I/O alone.
    let window = doc["window"]["seconds"].as_f64().unwrap();
    assert!(window < 0.7, "window {window}s counts the delay");

    // A range: one time drawn in it, said in a `#` line.
    let dir = tempfile::tempdir().unwrap();
    let (doc, _, err) = ours(dir.path(), "rw=read\nstartdelay=100ms-300ms");
    let d = doc["config"]["start_delay_sec"].as_f64().unwrap();
    assert!((0.1..=0.3).contains(&d), "{d}");
    assert!(
        err.contains("draws each job's delay from the range"),
        "{err}"
    );
}

#[test]
fn start_delay_and_ios_refuse_what_they_cannot_take() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let t = t.to_str().unwrap();
    refused(&["run", "--start-delay", "5s-1s", t], "A at most B");
    refused(&["run", "--start-delay", "2d", t], "unknown unit");
    refused(&["run", "--start-delay", "25h", t], "at most 24h");
    refused(&["run", "--ios", "0", t], "at least 1");
    // refused() gives --ramp 0 itself: a ramp typed is checked here.
    let out = sb()
        .args(["run", "--no-progress", "--ios", "10", "--ramp", "1s", t])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--ios counts every I/O from the start"),
        "{err}"
    );
}

// --print-fio writes fio's spelling: number_ios per loop (fio multiplies
// it by loops=), io_size= for --ios alone (fio's number_ios stops at
// size=, --ios goes round), no runtime= unless --duration capped the run.
#[test]
fn print_fio_spells_ios_and_start_delay_as_fio_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let line = |args: &[&str]| {
        let out = sb()
            .args(["run", "--print-fio", "--bs", "4k"])
            .args(args)
            .arg(&t)
            .output()
            .unwrap();
        succeeded_as(&out, format_args!("{args:?}"));
        String::from_utf8(out.stdout).unwrap()
    };
    let l = line(&["--ios", "100"]);
    assert!(l.contains("--io_size=409600 --number_ios=100"), "{l}");
    assert!(
        !l.contains("--runtime") && !l.contains("--time_based"),
        "{l}"
    );
    let l = line(&["--ios", "100", "--passes", "2", "-t", "5s"]);
    assert!(
        l.contains("--loops=2 --number_ios=50 --runtime=5000ms"),
        "{l}"
    );
    let l = line(&["--ios", "101", "--passes", "2"]);
    assert!(
        l.contains("--number_ios=51") && l.contains("counts number_ios per loop"),
        "{l}"
    );
    let l = line(&["--start-delay", "1500ms", "--io-limit", "1m"]);
    assert!(
        l.contains("--io_size=1048576 --startdelay=1500000us"),
        "{l}"
    );
    assert!(!l.contains("--runtime"), "{l}");
    // --io-limit with --passes is fio's io_size= with loops=: both spelled.
    let l = line(&["--io-limit", "1m", "--passes", "2", "--ios", "100"]);
    assert!(
        l.contains("--io_size=1048576 --loops=2 --number_ios=50"),
        "{l}"
    );
}

/// The write jobs that end with fio's fsync, and the words of their `#`
/// line.
const END_SYNCS: &[(&str, &str)] = &[
    (
        "rw=write\nend_fsync=1",
        "durable MB/s over the window and the fsync",
    ),
    (
        "rw=write\nfsync_on_close=1",
        "durable MB/s over the window and the fsync",
    ),
    (
        "rw=write\ndirect=1\nend_fsync=1",
        "O_DIRECT writes end without one",
    ),
    ("rw=read\nend_fsync=1", "fsyncs only a job that writes"),
];

// Before: `fsync_on_close` was refused ("no equivalent") and `end_fsync`
// taken silently. A buffered write ends with one fsync, timed apart; the
// `#` line says how that stands to fio's runtime.
#[test]
fn fio_job_end_fsync_and_fsync_on_close_say_where_the_fsync_counts() {
    for (extra, said) in END_SYNCS {
        let dir = tempfile::tempdir().unwrap();
        let (doc, f, err) = ours(dir.path(), extra);
        assert!(err.contains(said), "{extra}: {err}");
        assert_eq!(moved(&f), (256, 1 << 20), "{extra}");
        let flushed = doc["total"]["flush"].is_object();
        assert_eq!(
            flushed,
            !extra.contains("direct") && extra.contains("write"),
            "{extra}: {}",
            doc["total"]
        );
    }
}

#[test]
#[cfg_attr(not(sb_fio), ignore = "needs fio (Debian package fio)")]
fn fio_beside_us_on_end_fsync_writes_the_same_ios_and_bytes() {
    for (extra, _) in END_SYNCS {
        let dir = tempfile::tempdir().unwrap();
        let j = job(dir.path(), extra);
        let theirs = crate::common::fio_on(dir.path(), &j);
        let (_, f, _) = ours(dir.path(), extra);
        assert_eq!(moved(&f), moved(&theirs), "{extra}");
        // fio counts no end fsync among its syncs; nor does our fio JSON.
        let syncs = |d: &Value| d["jobs"][0]["sync"]["total_ios"].as_u64().unwrap_or(0);
        assert_eq!(syncs(&f), syncs(&theirs), "{extra}");
    }
}
