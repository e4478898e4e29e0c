//! Runs that must end: a target that fails every I/O, a worker that dies
//! before it is ready, an I/O that never completes. Each run is given a
//! generous bound (seconds where the run needs milliseconds): these tests
//! assert that a run ends and what it reports, never how fast.

use crate::common;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::common::{data_file, json, u};

/// Far more than any of these runs needs, even on a loaded machine.
const BOUND: Duration = Duration::from_secs(20);

/// Whether process `pid` has started its workers (a thread `sb-worker-0`).
fn has_workers(pid: i32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks.flatten().any(|t| {
                std::fs::read_to_string(t.path().join("comm"))
                    .is_ok_and(|c| c.trim() == "sb-worker-0")
            })
        })
        .unwrap_or(false)
}

/// Starts `stripebench ARGS`; `signals` are sent to it, in order, each after
/// its delay (the first counted from when its workers exist, so that a slow
/// start on a loaded machine is not mistaken for the run). Returns its
/// output, or fails the test (killing the child) when it is still running
/// `BOUND` after the last signal.
fn run_bounded(args: &[&str], signals: &[(Duration, i32)]) -> Output {
    let child = Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    if !signals.is_empty() {
        let t0 = std::time::Instant::now();
        while !has_workers(pid) {
            assert!(
                t0.elapsed() < BOUND,
                "{args:?}: no worker thread after {BOUND:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    for &(after, sig) in signals {
        if let Ok(out) = rx.recv_timeout(after) {
            panic!(
                "{args:?} ended before signal {sig} was sent: {:?}: {}",
                out.as_ref().map(|o| o.status),
                out.as_ref()
                    .map(|o| String::from_utf8_lossy(&o.stderr).to_string())
                    .unwrap_or_default()
            );
        }
        // SAFETY: signalling our own child, which has not been reaped (its
        // waiter has not returned).
        unsafe { libc::kill(pid, sig) };
    }
    match rx.recv_timeout(BOUND) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // SAFETY: as above; the child is still running.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("{args:?} still running {BOUND:?} after it should have ended");
        }
    }
}

#[test]
fn a_target_failing_every_io_still_ends_at_its_duration() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 1 << 20);
    let b = data_file(dir.path(), "b", 1 << 20);
    let jpath = dir.path().join("out.json");
    for engine in [
        &["--engine", "sync"][..],
        &["--engine", "uring", "--iodepth", "4"][..],
    ] {
        let args = [
            &["run", "--duration", "100ms", "--ramp", "0", "--bs", "64k"][..],
            engine,
            // Worker 0 fails every I/O, and may fail (nearly) forever.
            &["--max-errors", "1000000000000", "--debug-fail-from", "1"],
            &["--no-progress", "--json", jpath.to_str().unwrap()],
            &[a.to_str().unwrap(), b.to_str().unwrap()],
        ]
        .concat();
        let out = run_bounded(&args, &[]);
        assert_eq!(out.status.code(), Some(1), "{engine:?}: I/O errors exit 1");
        let doc = json(&std::fs::read(&jpath).unwrap());
        assert_eq!(doc["interrupted"], false, "{engine:?}");
        let w0 = &doc["workers"][0];
        assert!(u(&w0["errors"]) > 0, "{engine:?}: {w0}");
        assert_eq!(
            w0["stopped_on_errors"], false,
            "{engine:?}: it stopped at the deadline"
        );
        assert!(u(&doc["workers"][1]["ios"]) > 0, "{engine:?}");
    }
}

#[test]
fn a_target_failing_every_io_stops_at_the_first_interrupt() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 1 << 20);
    let jpath = dir.path().join("out.json");
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let args = [
            "run",
            "--duration",
            "1h",
            "--ramp",
            "0",
            "--bs",
            "64k",
            "--max-errors",
            "1000000000000",
            "--debug-fail-from",
            "1",
            "--no-progress",
            "--json",
            jpath.to_str().unwrap(),
            a.to_str().unwrap(),
        ];
        // A signal before the workers started finds no failed I/O yet (a
        // loaded machine can take half a second to get there): then again,
        // later. A machine's speed decides when, not whether, it stops.
        for (attempt, ms) in [500u64, 2_000, 8_000].into_iter().enumerate() {
            let out = run_bounded(&args, &[(Duration::from_millis(ms), sig)]);
            assert_eq!(out.status.code(), Some(code), "signal {sig}");
            let doc = json(&std::fs::read(&jpath).unwrap());
            assert_eq!(doc["interrupted"], true, "signal {sig}");
            if doc["workers"][0]["errors"].is_null() && attempt < 2 {
                continue;
            }
            assert!(
                u(&doc["workers"][0]["errors"]) > 0,
                "signal {sig} at {ms} ms"
            );
            break;
        }
    }
}

/// The lines of the run's stderr that report an error.
fn error_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("stripebench: error:"))
        .map(str::to_string)
        .collect()
}

fn dies_in_setup(engine: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|n| {
            data_file(dir.path(), n, 1 << 20)
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let jpath = dir.path().join("out.json");
    let args = [
        &["run", "--duration", "100ms", "--ramp", "0", "--bs", "64k"][..],
        engine,
        // Worker 0 panics while its engine is built; the two others are
        // ready and wait for the start.
        &["--debug-die-in-setup", "--no-progress"],
        &["--json", jpath.to_str().unwrap()],
        &files.iter().map(String::as_str).collect::<Vec<_>>(),
    ]
    .concat();
    let out = run_bounded(&args, &[]);
    assert_eq!(out.status.code(), Some(1), "{engine:?}");
    let errors = error_lines(&out);
    assert_eq!(errors.len(), 1, "{engine:?}: one error line: {errors:?}");
    assert!(
        errors[0].contains(&format!(
            "worker 0 ({}) panicked before it was ready",
            files[0]
        )),
        "{engine:?}: {errors:?}"
    );
    // Called off before any I/O: nothing measured, no document.
    assert!(!jpath.exists(), "{engine:?}");
}

#[test]
fn a_worker_that_dies_before_it_is_ready_does_not_hang_the_run() {
    dies_in_setup(&["--engine", "sync"]);
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn a_worker_that_dies_before_it_is_ready_does_not_hang_the_run_uring() {
    dies_in_setup(&["--engine", "uring", "--iodepth", "4"]);
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn an_io_that_never_completes_is_reported_as_hung_and_the_run_ends() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 1 << 20);
    let b = data_file(dir.path(), "b", 1 << 20);
    let jpath = dir.path().join("out.json");
    let args = [
        "run",
        "--engine",
        "uring",
        "--iodepth",
        "4",
        "--bs",
        "64k",
        // Long enough for worker 0's first two I/Os to complete in the
        // window on a loaded machine (at the deadline it would stop
        // re-queueing, and fewer slots would hang).
        "--duration",
        "2s",
        "--ramp",
        "0",
        // Worker 0's first two I/Os complete; from the third on, none does
        // (reads from a pipe no one writes into): all 4 slots end up hung.
        "--debug-hang-from",
        "3",
        "--hang-timeout",
        "1s",
        "--no-progress",
        "--json",
        jpath.to_str().unwrap(),
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ];
    let out = run_bounded(&args, &[]);
    assert_eq!(out.status.code(), Some(1), "a hung I/O exits 1");
    let doc = json(&std::fs::read(&jpath).unwrap());
    assert_eq!(doc["config"]["hang_timeout_sec"], 1.0);
    let (w0, w1) = (&doc["workers"][0], &doc["workers"][1]);
    let hung = w0["hung_ios"].as_array().unwrap();
    assert_eq!(hung.len(), 4, "{w0}");
    let mut offsets: Vec<u64> = hung.iter().map(|h| u(&h["offset"])).collect();
    offsets.sort_unstable();
    offsets.dedup();
    assert_eq!(offsets.len(), 4, "four distinct offsets: {offsets:?}");
    assert!(offsets.iter().all(|o| o % 65536 == 0 && *o < 1 << 20));
    for h in hung {
        assert_eq!(h["op"], "read");
        assert_eq!(u(&h["bytes"]), 65536);
        assert!(common::f(&h["seconds_in_flight"]) >= 1.0, "{h}");
    }
    // What completed before the hang is still reported, and the other
    // worker went on.
    assert_eq!(u(&w0["ios"]), 2);
    assert_eq!(doc["targets"][0]["failed"], true);
    assert_eq!(doc["targets"][1]["failed"], false);
    assert!(w1["hung_ios"].as_array().unwrap().is_empty());
    assert!(u(&w1["ios"]) > 0);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("HUNG: worker w0 on") && table.contains("4 I/O(s) never completed"),
        "{table}"
    );
}

#[test]
fn the_hang_timeout_is_documented_and_defaults_to_30s() {
    let out = common::sb().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--hang-timeout <TIME>"), "{help}");
    assert!(help.contains("[default: 30s]"), "{help}");
    let out = common::sb()
        .args(["run", "--engine", "sync", "--debug-hang-from", "1", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(error_lines(&out).len(), 1);
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn an_interrupt_with_a_hung_io_ends_the_run_and_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 1 << 20);
    let b = data_file(dir.path(), "b", 1 << 20);
    let jpath = dir.path().join("out.json");
    let args = [
        "run",
        "--engine",
        "uring",
        "--iodepth",
        "2",
        "--bs",
        "64k",
        "--duration",
        "1h",
        "--ramp",
        "0",
        "--debug-hang-from",
        "1",
        "--hang-timeout",
        "1s",
        "--no-progress",
        "--json",
        jpath.to_str().unwrap(),
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ];
    // The interrupt closes the window; the hung worker gives up on its I/O
    // within the hang timeout after it, and the run reports.
    let out = run_bounded(&args, &[(Duration::from_millis(500), libc::SIGINT)]);
    assert_eq!(out.status.code(), Some(130));
    let doc = json(&std::fs::read(&jpath).unwrap());
    assert_eq!(doc["interrupted"], true);
    assert_eq!(doc["workers"][0]["hung_ios"].as_array().unwrap().len(), 2);
    assert_eq!(doc["targets"][0]["failed"], true);
    assert!(u(&doc["workers"][1]["ios"]) > 0);
}

/// The state letter (R, S, D, ...) of process `pid`'s thread named `name`.
fn thread_state(pid: u32, name: &str) -> Option<char> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
        .find(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
        .and_then(|t| std::fs::read_to_string(t.path().join("stat")).ok())
        // "TID (comm) S ...": the state follows the command's closing parenthesis.
        .and_then(|s| {
            s.rsplit_once(')')
                .and_then(|(_, r)| r.trim().chars().next())
        })
}

/// A sync worker blocked in a pread on a stalled device cannot be
/// cancelled: the run waited for it past SIGTERM (still alive 10 s later,
/// no document; a second signal quit without one). The document must be
/// written within --hang-timeout of the signal, naming the blocked worker
/// as hung with its offset, and the process must not wait for the pread.
#[test]
#[cfg_attr(
    not(all(sb_root, sb_blkio)),
    ignore = "needs root (loop device) and a cgroup v1 blkio hierarchy"
)]
fn a_sync_worker_blocked_on_a_stalled_device_does_not_hold_the_run_past_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let img = data_file(dir.path(), "img", 16 << 20);
    let lo = common::Loop::attach(&img, &[]);
    let cg = common::Throttle::reads("sync-stall", &[]);
    let live = dir.path().join("live.jsonl");
    let jpath = dir.path().join("run.json");
    let child = cg.spawn(&[
        "run",
        "--engine",
        "sync",
        "--bs",
        "256k",
        "-t",
        "1h",
        "--ramp",
        "0",
        "--hang-timeout",
        "1s",
        "--no-progress",
        "--live",
        live.to_str().unwrap(),
        "--json",
        jpath.to_str().unwrap(),
        &lo.dev,
    ]);
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    // Measuring; then reads of 256 KiB at 4096 B/s: each takes a minute.
    common::wait_for("the first live second", || {
        common::live_has_second(&live, 0)
    });
    cg.limit(&lo.dev, 4096);
    // Blocked in a throttled read: a whole second with nothing done (a
    // read already under way when the throttle came still completes).
    common::wait_for("a second with nothing done", || {
        common::live_lines(&live)
            .iter()
            .any(|l| l["kind"] == "worker" && l["ios"] == 0)
    });
    assert_eq!(thread_state(pid, "sb-worker-0"), Some('D'));
    // SAFETY: signalling our own child (its waiter has not returned).
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let sent = std::time::Instant::now();
    // Within the hang timeout (1 s) and a generous slack, far less than
    // the minute the read is held: the document, complete.
    let doc = loop {
        let doc = std::fs::read(&jpath)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
        if let Some(doc) = doc {
            break doc;
        }
        if sent.elapsed() > Duration::from_secs(15) {
            cg.limit(&lo.dev, 0);
            let _ = rx.recv_timeout(BOUND);
            panic!("no document 15 s after SIGTERM (hang timeout 1 s)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The read is still held by the throttle: the run did not wait for it.
    assert_eq!(thread_state(pid, "sb-worker-0"), Some('D'));
    assert_eq!(doc["interrupted"], true);
    let w = &doc["workers"][0];
    let hung = w["hung_ios"].as_array().unwrap();
    assert_eq!(hung.len(), 1, "{w}");
    assert_eq!(hung[0]["op"], "read");
    assert_eq!(u(&hung[0]["bytes"]), 256 << 10);
    assert!(u(&hung[0]["offset"]) % (256 << 10) == 0 && u(&hung[0]["offset"]) < 16 << 20);
    assert!(common::f(&hung[0]["seconds_in_flight"]) >= 1.0, "{w}");
    // What completed before the stall is there.
    assert!(u(&w["ios"]) > 0, "{w}");
    assert_eq!(doc["targets"][0]["failed"], true);
    // The exit waits only for the kernel to let the thread go: lift the throttle.
    cg.limit(&lo.dev, 0);
    let out = rx.recv_timeout(BOUND).expect("exited").unwrap();
    assert_eq!(out.status.code(), Some(143));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("HUNG: worker w0 on"), "{table}");
}
