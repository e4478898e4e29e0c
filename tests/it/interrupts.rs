//! Every way a run can be stopped still reports and cleans up (issue "never
//! destroy, take two", items 7-10): every catchable terminating signal,
//! Ctrl-C during the final fsync, interrupts during a sweep and during
//! test-bed creation, and a SIGKILL that leaves a test bed behind.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{interrupt, json, ra, ra_path, sb, spawn, LoopBed};

/// Polls `cond` every 10 ms for up to a minute.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < Duration::from_secs(60), "never: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn signal(child: &std::process::Child, sig: i32) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn every_catchable_terminating_signal_restores_and_reports() {
    let bed = LoopBed::new(1, 32);
    let dev = bed.devices[0].clone();
    std::fs::write(ra_path(&dev), "128").unwrap();
    let d = tempfile::tempdir().unwrap();
    for sig in [
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGPIPE,
        libc::SIGQUIT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGSTKFLT,
        libc::SIGRTMIN(),
        libc::SIGRTMAX(),
    ] {
        let j = d.path().join(format!("{sig}.json"));
        let live = d.path().join(format!("{sig}.jsonl"));
        let child = spawn(&[
            "run",
            "--buffered",
            "--readahead",
            "4096",
            "--duration",
            "30s",
            "--ramp",
            "0",
            "--no-progress",
            "--json",
            j.to_str().unwrap(),
            "--live",
            live.to_str().unwrap(),
            &dev,
        ]);
        wait_until("the run set the read-ahead", || ra(&dev) == "4096");
        // Under way: its first second measured.
        common::wait_live_second(&live, 0);
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(128 + sig), "signal {sig}: {err}");
        assert_eq!(ra(&dev), "128", "signal {sig}: read-ahead restored");
        let doc = json(&std::fs::read(&j).unwrap());
        assert_eq!(doc["interrupted"], true, "signal {sig}");
        assert!(doc["total"]["bytes"].as_u64().unwrap() > 0, "signal {sig}");
    }
}

/// A blkio (v1) cgroup that throttles writes to one device; on drop the
/// throttle is lifted (so an abandoned fsync finishes) and the group removed.
struct WriteThrottle {
    dir: PathBuf,
    dev: String,
}

impl WriteThrottle {
    fn new(dev: &str, bytes_per_sec: u64) -> Option<WriteThrottle> {
        let numbers = std::fs::read_to_string(format!(
            "/sys/class/block/{}/dev",
            dev.trim_start_matches("/dev/")
        ))
        .ok()?;
        let dir = PathBuf::from(format!(
            "/sys/fs/cgroup/blkio/stripebench-flush-{}",
            std::process::id()
        ));
        std::fs::create_dir(&dir).ok()?;
        let t = WriteThrottle {
            dir,
            dev: numbers.trim().to_string(),
        };
        std::fs::write(
            t.dir.join("blkio.throttle.write_bps_device"),
            format!("{} {bytes_per_sec}", t.dev),
        )
        .ok()?;
        Some(t)
    }
}

impl Drop for WriteThrottle {
    fn drop(&mut self) {
        let _ = std::fs::write(
            self.dir.join("blkio.throttle.write_bps_device"),
            format!("{} 0", self.dev),
        );
        let t0 = Instant::now();
        while std::fs::remove_dir(&self.dir).is_err() && t0.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The children of `pid`.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect()
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_blkio)),
    ignore = "needs root and a blkio cgroup (v1) to throttle writes"
)]
fn ctrl_c_during_the_final_fsync_is_reported_and_ends_the_wait() {
    let bed = LoopBed::new(1, 64);
    let dev = bed.devices[0].clone();
    // 64 MiB dirty at 1 MB/s: a flush of about a minute.
    let throttle = WriteThrottle::new(&dev, 1_000_000);
    common::require(throttle.is_some(), "a blkio cgroup to throttle writes with");
    let throttle = throttle.unwrap();
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("flush.json");
    let bin = assert_cmd::cargo::cargo_bin("stripebench");
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec {} run --rw write --buffered --allow-destructive --duration 300ms --ramp 0 --no-progress --json {} {}",
        throttle.dir.display(),
        bin.display(),
        j.display(),
        dev
    );
    let child = std::process::Command::new("sh")
        .env("STRIPEBENCH_STATE_DIR", common::state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(["-c", &script])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // The fsync runs in a child that names itself sb-fsync (other children,
    // such as dmsetup between its fork and exec, are not it).
    let is_fsync = |p: u32| {
        std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "sb-fsync")
    };
    wait_until("the final fsync started", || {
        children(pid).into_iter().any(is_fsync)
    });
    let t0 = Instant::now();
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    let waited = t0.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    // Not a speed check: the flush left takes about a minute, and the run
    // must not have waited it out.
    assert!(
        waited < Duration::from_secs(30),
        "waited {waited:?} for the fsync"
    );
    let doc =
        json(&std::fs::read(&j).unwrap_or_else(|e| panic!("{}: {e}; stderr: {err}", j.display())));
    assert_eq!(doc["interrupted"], true);
    assert_eq!(doc["total"]["flush_incomplete"], true);
    assert!(doc["total"]["flush"].is_null(), "no durable figure");
    assert!(
        doc["warnings"]
            .to_string()
            .contains("goes on in the kernel"),
        "{}",
        doc["warnings"]
    );
    drop(throttle);
}

#[test]
fn an_interrupted_sweep_keeps_the_point_in_progress() {
    let d = tempfile::tempdir().unwrap();
    let t = common::data_file(d.path(), "t.dat", 8 << 20);
    let j = d.path().join("sweep.json");
    let live = d.path().join("live.jsonl");
    let child = spawn(&[
        "sweep",
        "--param",
        "bs=64k,128k",
        "--duration",
        "30s",
        "--ramp",
        "0",
        "--no-progress",
        "--json",
        j.to_str().unwrap(),
        "--live",
        live.to_str().unwrap(),
        t.to_str().unwrap(),
    ]);
    // The first point under way: its first second measured.
    common::wait_live_second(&live, 0);
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let doc = json(&std::fs::read(&j).unwrap());
    assert_eq!(doc["interrupted"], true);
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "the point in progress is kept");
    assert_eq!(points[0]["partial"], true);
    assert_eq!(points[0]["runs"][0]["interrupted"], true);
}

fn testbed_dirs(under: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(under)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("stripebench-testbed-"))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn an_interrupt_while_the_test_bed_is_written_still_writes_the_json() {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("r.json");
    let bed_dir = d.path().join("bed");
    std::fs::create_dir(&bed_dir).unwrap();
    let child = spawn(&[
        "run",
        "--dir",
        bed_dir.to_str().unwrap(),
        // 2 x 512 MiB: long enough to write that a 10 ms poll sees it
        // under way, small enough for a CI disk that holds two builds.
        "--testbed-size",
        "512m",
        "--testbed-files",
        "2",
        "--no-progress",
        "--json",
        j.to_str().unwrap(),
    ]);
    let mut child = child;
    wait_until("the test bed is being written", || {
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            panic!("stripebench ended ({status}) before its test bed was seen: {err}");
        }
        !testbed_dirs(&bed_dir).is_empty()
    });
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let doc = json(&std::fs::read(&j).unwrap());
    assert_eq!(doc["interrupted"], true);
    assert_eq!(doc["measured"], false);
    assert!(
        testbed_dirs(&bed_dir).is_empty(),
        "the test bed was removed"
    );
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_test_bed_left_by_sigkill_is_named_and_removed_by_restore() {
    let d = tempfile::tempdir().unwrap();
    let bed_dir = d.path().join("bed");
    std::fs::create_dir(&bed_dir).unwrap();
    let mut child = spawn(&[
        "run",
        "--dir",
        bed_dir.to_str().unwrap(),
        "--testbed-size",
        "8m",
        "--duration",
        "30s",
        "--no-progress",
    ]);
    let pid = child.id();
    let record = common::state_dir().join(format!("testbed-{pid}.path"));
    wait_until("the test bed is recorded", || record.exists());
    child.kill().unwrap();
    child.wait().unwrap();
    let left = testbed_dirs(&bed_dir);
    assert_eq!(left.len(), 1, "SIGKILL left it behind");
    // The next run says so.
    let t = common::data_file(d.path(), "t.dat", 1 << 20);
    let out = sb()
        .args([
            "run",
            "--duration",
            "50ms",
            "--ramp",
            "0",
            t.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("left its test bed behind") && err.contains(left[0].to_str().unwrap()),
        "{err}"
    );
    // restore removes it.
    let out = sb().arg("restore").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    common::succeeded(&out);
    assert!(text.contains(left[0].to_str().unwrap()), "{text}");
    assert!(testbed_dirs(&bed_dir).is_empty());
    assert!(!record.exists());
}

/// Ctrl-C closes the window at once even when saying so cannot be written
/// yet: stderr is a pipe whose reader has paused (full). The message used to
/// come first and block, so the run went on measuring until the reader read.
#[test]
fn an_interrupt_closes_the_window_while_stderr_is_full() {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    let d = tempfile::tempdir().unwrap();
    let a = common::data_file(d.path(), "a.dat", 4 << 20);
    let out = d.path().join("run.json");
    let live = d.path().join("live.jsonl");
    let (mut r, mut w) = std::io::pipe().unwrap();
    // Fill a one-page pipe, then hand it over blocking, as a paused reader's.
    // SAFETY: fcntl on our own descriptor.
    unsafe {
        libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, 4096);
        libc::fcntl(w.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK);
    }
    while w.write(&[b'x'; 512]).is_ok() {}
    // SAFETY: as above.
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETFL, 0) };
    // A state directory of its own: a warning about what another test's
    // killed run left behind would block on the full stderr before the run.
    let state = d.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
        .env("STRIPEBENCH_STATE_DIR", &state)
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(["run", "--buffered", "--bs", "4k", "--duration", "120s"])
        .args(["--ramp", "0", "--no-progress", "--json"])
        .arg(&out)
        .arg("--live")
        .arg(&live)
        .arg(&a)
        .stdout(std::process::Stdio::null())
        .stderr(w)
        .spawn()
        .unwrap();
    // Measuring: its first second is out.
    wait_until("the first live line", || {
        std::fs::metadata(&live).is_ok_and(|m| m.len() > 0)
    });
    interrupt(&child);
    // The reader stays away until the run has ended or waits on its full
    // stderr, then reads it all.
    let pid = child.id();
    wait_until("the run ended, or waiting for its reader", || {
        common::ended(pid) || common::blocked_writing(pid, &[2])
    });
    let drain = std::thread::spawn(move || {
        let mut all = Vec::new();
        r.read_to_end(&mut all).unwrap();
        String::from_utf8_lossy(&all).into_owned()
    });
    let status = child.wait().unwrap();
    let err = drain.join().unwrap();
    // (Its message may be lost: the run can end before the reader reads.)
    assert_eq!(
        status.code(),
        Some(130),
        "{}",
        &err[err.len().saturating_sub(600)..]
    );
    let doc = json(&std::fs::read(&out).unwrap());
    assert_eq!(doc["window"]["ended_by"], "interrupted");
    // Closed at the interrupt (about 1 s in), not when the reader came back (20 s later).
    let secs = doc["window"]["seconds"].as_f64().unwrap();
    assert!(secs < 15.0, "the window ran {secs} s");
}

#[test]
fn an_interrupt_before_the_window_opens_still_writes_the_json() {
    // Regression: a signal while the workers were set up, or waited for
    // --start-at, ended the run with "interrupted before the run started"
    // and no --json at all: a script waiting for the document found none.
    let d = tempfile::tempdir().unwrap();
    let t = common::data_file(d.path(), "t.dat", 1 << 20);
    let j = d.path().join("r.json");
    let start = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600;
    let child = spawn(&[
        "run",
        "--start-at",
        &start.to_string(),
        "--duration",
        "1s",
        "--no-progress",
        "--json",
        j.to_str().unwrap(),
        t.to_str().unwrap(),
    ]);
    // Its workers exist: set up, and waiting for the start ten minutes away.
    let pid = child.id();
    wait_until("the run's workers are set up", || {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .map(|tasks| {
                tasks.flatten().any(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|c| c.starts_with("sb-worker-"))
                })
            })
            .unwrap_or(false)
    });
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let written = std::fs::read(&j).unwrap_or_else(|e| panic!("no --json ({e}): {err}"));
    let doc = json(&written);
    assert_eq!(doc["kind"], "run");
    assert_eq!(doc["interrupted"], true);
    assert_eq!(doc["measured"], false);
    assert_eq!(doc["stage"], "starting the run");
}

/// Regression (issue 40 item 5): the signal thread said "closing the
/// window" with `eprintln!`, which panics when stderr cannot be written
/// (`2>/dev/full`, a reader gone). The thread died with the message, so a
/// second interrupt no longer quit at once: here the run, blocked on a
/// stdout whose reader paused, went on waiting.
#[test]
fn a_second_interrupt_quits_at_once_when_stderr_cannot_be_written() {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    let d = tempfile::tempdir().unwrap();
    let a = common::data_file(d.path(), "a.dat", 4 << 20);
    let live = d.path().join("live.jsonl");
    // stdout: a one-page pipe, full, its reader paused.
    let (mut r, mut w) = std::io::pipe().unwrap();
    // SAFETY: fcntl on our own descriptor.
    unsafe {
        libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, 4096);
        libc::fcntl(w.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK);
    }
    while w.write(&[b'x'; 512]).is_ok() {}
    // SAFETY: as above.
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETFL, 0) };
    // stderr: every write fails (ENOSPC).
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let state = d.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
        .env("STRIPEBENCH_STATE_DIR", &state)
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(["run", "--buffered", "--bs", "4k", "--duration", "120s"])
        .args(["--ramp", "0", "--no-progress", "--live"])
        .arg(&live)
        .arg(&a)
        .stdout(w)
        .stderr(full)
        .spawn()
        .unwrap();
    wait_until("the first live line", || {
        std::fs::metadata(&live).is_ok_and(|m| m.len() > 0)
    });
    interrupt(&child);
    // The window closed; the table waits for the paused reader.
    let pid = child.id();
    wait_until("the run waits for its stdout's reader", || {
        common::blocked_writing(pid, &[1])
    });
    interrupt(&child);
    let t0 = Instant::now();
    while !common::ended(pid) && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let quit = common::ended(pid);
    // Either way, let it end.
    let drain = std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = r.read_to_end(&mut all);
    });
    let mut child = child;
    let status = child.wait().unwrap();
    drain.join().unwrap();
    assert!(
        quit,
        "the second interrupt did not quit at once (the signal thread is gone)"
    );
    assert_eq!(status.code(), Some(130));
}

/// An interrupt with stderr a pipe whose reader is gone: saying "closing
/// the window" meets EPIPE and raises a SIGPIPE, which must not count as
/// the second interrupt that quits at once (it did, once the signal thread
/// stopped dying of the failed write: no --json was written).
#[test]
fn an_interrupt_with_stderr_gone_still_writes_the_json() {
    let d = tempfile::tempdir().unwrap();
    let a = common::data_file(d.path(), "a.dat", 4 << 20);
    let out = d.path().join("run.json");
    let live = d.path().join("live.jsonl");
    let (r, w) = std::io::pipe().unwrap();
    drop(r);
    let state = d.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
        .env("STRIPEBENCH_STATE_DIR", &state)
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(["run", "--buffered", "--bs", "4k", "--duration", "120s"])
        .args(["--ramp", "0", "--no-progress", "--json"])
        .arg(&out)
        .arg("--live")
        .arg(&live)
        .arg(&a)
        .stdout(std::process::Stdio::null())
        .stderr(w)
        .spawn()
        .unwrap();
    wait_until("the first live line", || {
        std::fs::metadata(&live).is_ok_and(|m| m.len() > 0)
    });
    interrupt(&child);
    let mut child = child;
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let doc = json(&std::fs::read(&out).expect("the --json document"));
    assert_eq!(doc["window"]["ended_by"], "interrupted");
}
