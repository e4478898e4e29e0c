//! Outputs that follow no planted link (issue 20, items 1 and 15).
//!
//! A hostile test as root found that every output (`--json`, `--csv`,
//! `--html`, `--plot`, `--metrics`, `--live`, `report -o`, `merge`, `diff`
//! and `plan --json`, sweep's per-point saves) resolved its path with
//! `fs::canonicalize` and renamed the new file onto the link's target: a
//! link made by another user in a sticky directory replaced that user's
//! victim file (fs.protected_symlinks does not stop a rename onto a path
//! read with readlink), and a link flipped mid-run replaced or truncated a
//! target. Also its messages: a full file system under `--live` blamed a
//! slow reader and left a cut line, `--json -` to a closed stdout lost the
//! document with exit 0, an input document given as an output was called
//! "a target". Every case checksums what must not change.

use crate::common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{
    data_file, digest, json, refused, require, run_document, sb, sh_required, spawn,
};

/// The other user: what it makes, the tests' root process must not follow.
const OTHER: &str = "54321";

/// `cmd ARGS` as uid and gid 54321, without supplementary groups; must succeed.
fn as_other(cmd: &str, args: &[&str]) {
    let mut all = vec![
        "--reuid",
        OTHER,
        "--regid",
        OTHER,
        "--clear-groups",
        "--",
        cmd,
    ];
    all.extend_from_slice(args);
    sh_required("setpriv", &all);
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `fs.protected_symlinks=1` while alive (the hardened setting the issue
/// was found under), the value before put back on drop. One at a time: two
/// tests that each saved the other's value left the machine at 1.
/// (The guard is held, never read; it is released after the drop restores.)
struct ProtectedSymlinks(
    String,
    #[allow(dead_code)] std::sync::MutexGuard<'static, ()>,
);

static SYSCTL: std::sync::Mutex<()> = std::sync::Mutex::new(());

const PROTECTED_SYMLINKS: &str = "/proc/sys/fs/protected_symlinks";

impl ProtectedSymlinks {
    fn on() -> ProtectedSymlinks {
        Self::set("1")
    }

    /// `fs.protected_symlinks=0`, the kernel's default: nothing in the
    /// kernel stops root following another user's link in /tmp.
    fn off() -> ProtectedSymlinks {
        Self::set("0")
    }

    fn set(v: &str) -> ProtectedSymlinks {
        let held = SYSCTL.lock().unwrap_or_else(|e| e.into_inner());
        let old = std::fs::read_to_string(PROTECTED_SYMLINKS).unwrap();
        std::fs::write(PROTECTED_SYMLINKS, v).unwrap();
        ProtectedSymlinks(old.trim().to_string(), held)
    }
}

impl Drop for ProtectedSymlinks {
    fn drop(&mut self) {
        let _ = std::fs::write(PROTECTED_SYMLINKS, &self.0);
    }
}

/// A directory the other user may reach: the test's temporary directory
/// opened to everyone for search (it is 0700 when made).
fn reachable_tempdir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    chmod(d.path(), 0o755);
    d
}

/// A file's bytes and mode, to compare before and after.
fn state(p: &Path) -> (u64, u32, u64) {
    let m = std::fs::symlink_metadata(p).unwrap();
    (digest(p.to_str().unwrap()), m.mode(), m.len())
}

/// Waits (up to a minute) for `p` to exist: a state, not a fixed sleep.
fn wait_for(p: &Path) {
    let t0 = Instant::now();
    while std::fs::symlink_metadata(p).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "{} never came",
            p.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
#[cfg_attr(not(all(sb_root, sb_setpriv)), ignore = "needs root and setpriv")]
fn an_output_on_a_link_another_user_planted_is_refused_and_the_victim_kept() {
    require(common::is_root(), "needs root: a link made by another uid");
    let _protected = ProtectedSymlinks::on();
    let d = reachable_tempdir();
    // The victim: another file of root's, private.
    let victim_dir = d.path().join("victim");
    std::fs::create_dir(&victim_dir).unwrap();
    let secret = victim_dir.join("secret.conf");
    std::fs::write(&secret, "password = hunter2\n".repeat(100)).unwrap();
    chmod(&secret, 0o600);
    let before = state(&secret);
    // A sticky, world-writable directory as /tmp is, where uid 54321 plants links.
    let sticky = d.path().join("tmp");
    std::fs::create_dir(&sticky).unwrap();
    chmod(&sticky, 0o1777);
    let link = |name: &str| {
        let l = sticky.join(name);
        as_other("ln", &["-s", secret.to_str().unwrap(), l.to_str().unwrap()]);
        assert_eq!(std::fs::symlink_metadata(&l).unwrap().uid(), 54321);
        l.to_str().unwrap().to_string()
    };
    let (out, svg, prom, live) = (
        link("sb-out.json"),
        link("sb-out.svg"),
        link("sb-out.prom"),
        link("sb-out.jsonl"),
    );
    let docs = d.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    let r1 = run_document(&docs, "r1.json");
    let r1 = r1.to_str().unwrap();
    let t = data_file(&docs, "t.dat", 2 << 20);
    let t = t.to_str().unwrap();
    let why = "is a symbolic link: name the file itself";
    refused(&["report", r1, "-o", &out], why);
    for opt in ["--json", "--csv", "--html"] {
        refused(&["run", t, opt, &out], why);
    }
    refused(&["run", t, "--plot", &svg], why);
    refused(&["run", t, "--metrics", &prom], why);
    refused(&["run", t, "--live", &live], why);
    refused(&["sweep", "--param", "bs=4k,8k", t, "--json", &out], why);
    refused(&["sweep", "--param", "bs=4k,8k", t, "--csv", &out], why);
    refused(&["merge", r1, "--json", &out], why);
    refused(&["diff", r1, r1, "--json", &out], why);
    refused(&["plan", r1, "--json", &out], why);
    assert_eq!(state(&secret), before, "the victim is as it was");
    for l in [&out, &svg, &prom, &live] {
        assert!(std::fs::symlink_metadata(l).unwrap().is_symlink());
    }
}

#[test]
#[cfg_attr(not(all(sb_root, sb_setpriv)), ignore = "needs root and setpriv")]
fn an_output_under_a_directory_link_another_user_planted_is_refused_even_unprotected() {
    require(common::is_root(), "needs root: a link made by another uid");
    // The kernel's default (and this machine's): the kernel itself lets
    // root follow uid 54321's link in a sticky directory.
    let _unprotected = ProtectedSymlinks::off();
    let d = reachable_tempdir();
    let victim_dir = d.path().join("victim");
    std::fs::create_dir(&victim_dir).unwrap();
    let secret = victim_dir.join("r.json");
    std::fs::write(&secret, "password = hunter2\n".repeat(100)).unwrap();
    chmod(&secret, 0o600);
    let before = state(&secret);
    let sticky = d.path().join("tmp");
    std::fs::create_dir(&sticky).unwrap();
    chmod(&sticky, 0o1777);
    // /tmp/results, which root takes for a directory of results, is uid
    // 54321's link to the victim's directory; and one more link deep.
    let results = sticky.join("results");
    as_other(
        "ln",
        &[
            "-s",
            victim_dir.to_str().unwrap(),
            results.to_str().unwrap(),
        ],
    );
    let own = d.path().join("own");
    std::fs::create_dir(&own).unwrap();
    // A link of root's own to the planted one: followed, then the planted one is not.
    let via = own.join("via");
    std::os::unix::fs::symlink(&results, &via).unwrap();
    let docs = d.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    let r1 = run_document(&docs, "r1.json");
    let r1 = r1.to_str().unwrap();
    let t = data_file(&docs, "t.dat", 2 << 20);
    let t = t.to_str().unwrap();
    let why = "is a symbolic link owned by uid 54321";
    for dir in [&results, &via, &results.join(".")] {
        let out = dir.join("r.json");
        let out = out.to_str().unwrap();
        refused(&["report", r1, "-o", out], why);
        refused(&["run", t, "--json", out], why);
        refused(&["run", t, "--metrics", out], why);
        refused(&["run", t, "--live", out], why);
        refused(&["merge", r1, "--json", out], why);
    }
    assert_eq!(state(&secret), before, "the victim is as it was");
    // A link of root's own in the sticky directory is followed as before.
    let mine = sticky.join("mine");
    std::os::unix::fs::symlink(&own, &mine).unwrap();
    let out = mine.join("ok.html");
    sb().args(["report", r1, "-o"]).arg(&out).assert().success();
    assert!(own.join("ok.html").is_file());
}

#[test]
#[cfg_attr(not(all(sb_root, sb_setpriv)), ignore = "needs root and setpriv")]
fn a_write_target_through_a_link_another_user_planted_is_refused_even_unprotected() {
    require(common::is_root(), "needs root: a link made by another uid");
    let _unprotected = ProtectedSymlinks::off();
    let d = reachable_tempdir();
    let victim_dir = d.path().join("victim");
    std::fs::create_dir(&victim_dir).unwrap();
    let precious = data_file(&victim_dir, "precious.dat", 4 << 20);
    let before = state(&precious);
    let sticky = d.path().join("tmp");
    std::fs::create_dir(&sticky).unwrap();
    chmod(&sticky, 0o1777);
    // /tmp/scratch.dat, the file root means to overwrite, and /tmp/work,
    // a directory it means to write in: uid 54321's links.
    let scratch = sticky.join("scratch.dat");
    as_other(
        "ln",
        &["-s", precious.to_str().unwrap(), scratch.to_str().unwrap()],
    );
    let work = sticky.join("work");
    as_other(
        "ln",
        &["-s", victim_dir.to_str().unwrap(), work.to_str().unwrap()],
    );
    let why = "is a symbolic link owned by uid 54321";
    for t in [scratch.clone(), work.join("precious.dat")] {
        let t = t.to_str().unwrap();
        for extra in [&[][..], &["--buffered"][..]] {
            let mut args = vec![
                "run",
                "--rw",
                "write",
                "--allow-destructive",
                "--io-limit",
                "64k",
                t,
            ];
            args.extend_from_slice(extra);
            refused(&args, why);
        }
    }
    assert_eq!(state(&precious), before, "the victim is as it was");
    // Reading through the link is no harm and goes on as before.
    sb().args(["run", "-t", "100ms", "--ramp", "0", "--no-progress"])
        .arg(&scratch)
        .assert()
        .success();
}

/// A directory that belongs to uid 54321 (it may rename anything in it).
fn others_dir(parent: &Path) -> PathBuf {
    let a = parent.join("others");
    std::fs::create_dir(&a).unwrap();
    sh_required("chown", &[OTHER, a.to_str().unwrap()]);
    a
}

/// The other user replaces `name` in its directory with a link to `to`, in
/// one rename (a link made beside it, then moved over).
fn flip_as_other(name: &Path, to: &Path) {
    let tmp = name.with_extension("flip");
    as_other("ln", &["-s", to.to_str().unwrap(), tmp.to_str().unwrap()]);
    as_other(
        "mv",
        &["-fT", tmp.to_str().unwrap(), name.to_str().unwrap()],
    );
}

#[test]
#[cfg_attr(not(all(sb_root, sb_setpriv)), ignore = "needs root and setpriv")]
fn a_metrics_file_turned_into_a_link_to_the_target_mid_run_leaves_the_target_alone() {
    // Hostile test: --metrics /tmp/mlink flipped to a target after 2 s
    // replaced that 8 MiB target with metrics text.
    require(common::is_root(), "needs root: a link made by another uid");
    let d = reachable_tempdir();
    let own = d.path().join("own");
    std::fs::create_dir(&own).unwrap();
    let target = data_file(&own, "t.dat", 8 << 20);
    let before = state(&target);
    let a = others_dir(d.path());
    let metrics = a.join("mlink");
    let doc = own.join("r.json");
    let child = spawn(&[
        "run",
        target.to_str().unwrap(),
        "-t",
        "4s",
        "--ramp",
        "0",
        "--no-progress",
        "--metrics",
        metrics.to_str().unwrap(),
        "--json",
        doc.to_str().unwrap(),
    ]);
    // The first second's metrics are written: now the link.
    wait_for(&metrics);
    flip_as_other(&metrics, &target);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(state(&target), before, "the target is as it was: {err}");
    assert!(std::fs::symlink_metadata(&metrics).unwrap().is_symlink());
    // The run still measured, and says the metrics file was not replaced.
    assert_eq!(out.status.code(), Some(0), "{err}");
    let doc = json(&std::fs::read(&doc).unwrap());
    let said = common::warnings_saying(&doc, "became a symbolic link");
    assert!(
        said.len() == 1 && said[0].contains("--metrics"),
        "{}",
        doc["warnings"]
    );
}

#[test]
#[cfg_attr(not(all(sb_root, sb_setpriv)), ignore = "needs root and setpriv")]
fn a_sweep_json_turned_into_a_link_between_points_leaves_the_target_alone() {
    // Sweep saves its JSON after every point: each save is checked again.
    require(common::is_root(), "needs root: a link made by another uid");
    let d = reachable_tempdir();
    let own = d.path().join("own");
    std::fs::create_dir(&own).unwrap();
    let target = data_file(&own, "t.dat", 8 << 20);
    let before = state(&target);
    let a = others_dir(d.path());
    let saved = a.join("s.json");
    let child = spawn(&[
        "sweep",
        "--param",
        "bs=4k,8k,16k",
        target.to_str().unwrap(),
        "-t",
        "1s",
        "--ramp",
        "0",
        "--no-progress",
        "--json",
        saved.to_str().unwrap(),
    ]);
    wait_for(&saved);
    flip_as_other(&saved, &target);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(state(&target), before, "the target is as it was: {err}");
    assert!(std::fs::symlink_metadata(&saved).unwrap().is_symlink());
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("became a symbolic link"), "{err}");
}

#[test]
fn a_live_stream_whose_name_flips_to_a_target_never_truncates_it() {
    // Hostile test: --live on a name flipped between a file and a link to a
    // target truncated the target to 0 bytes (checked once, opened later
    // with O_TRUNC through the link).
    let d = tempfile::tempdir().unwrap();
    let target = data_file(d.path(), "t.dat", 1 << 20);
    let before = state(&target);
    let live = d.path().join("live.jsonl");
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (stop, live, target) = (stop.clone(), live.clone(), target.clone());
        let (l, f) = (live.with_extension("l"), live.with_extension("f"));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = std::os::unix::fs::symlink(&target, &l);
                let _ = std::fs::rename(&l, &live);
                let _ = std::fs::write(&f, b"");
                let _ = std::fs::rename(&f, &live);
            }
        })
    };
    let mut outcomes = [0usize; 2];
    for _ in 0..40 {
        let out = sb()
            .args([
                "run",
                "-t",
                "100ms",
                "--ramp",
                "0",
                "--no-progress",
                "--live",
            ])
            .arg(&live)
            .arg(&target)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if state(&target) != before {
            stop.store(true, Ordering::Relaxed);
            panic!("the target changed (exit {:?}): {err}", out.status.code());
        }
        match out.status.code() {
            Some(0) => outcomes[0] += 1,
            // Refused: the name was a link when it was checked.
            Some(2) => {
                assert!(
                    err.contains("symbolic link") || err.contains("a target"),
                    "{err}"
                );
                outcomes[1] += 1;
            }
            c => panic!("exit {c:?}: {err}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    flipper.join().unwrap();
    eprintln!("runs: {} measured, {} refused", outcomes[0], outcomes[1]);
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: mounts a tmpfs")]
fn live_on_a_full_file_system_says_so_and_leaves_no_cut_line() {
    require(common::is_root(), "needs root: mounts a tmpfs");
    let d = tempfile::tempdir().unwrap();
    let t = data_file(d.path(), "t.dat", 4 << 20);
    let m = d.path().join("m");
    std::fs::create_dir(&m).unwrap();
    let _mounted = common::mount(&["-t", "tmpfs", "-o", "size=64k", "tmpfs"], &m);
    // All but one page taken: the stream fills it within its first seconds.
    std::fs::write(m.join("filler"), vec![1u8; 60 << 10]).unwrap();
    let live = m.join("live.jsonl");
    let doc = d.path().join("r.json");
    let out = sb()
        .args(["run", "-t", "4s", "--ramp", "0", "-j", "4", "--no-progress"])
        .arg("--live")
        .arg(&live)
        .arg("--json")
        .arg(&doc)
        .arg(&t)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let doc = json(&std::fs::read(&doc).unwrap());
    let expect = format!("no space left on the file system of {}", live.display());
    assert_eq!(
        common::warnings_saying(&doc, &expect).len(),
        1,
        "{}",
        doc["warnings"]
    );
    let behind = common::warnings_saying(&doc, "fell behind");
    assert!(behind.is_empty(), "{behind:?}");
    // Whole lines only: the one that did not fit is not half there.
    let text = std::fs::read_to_string(&live).unwrap();
    assert!(!text.is_empty(), "some lines fit");
    assert!(
        text.ends_with('\n'),
        "a cut line: {:?}",
        &text[text.len().saturating_sub(80)..]
    );
    for l in text.lines() {
        serde_json::from_str::<serde_json::Value>(l).unwrap_or_else(|e| panic!("{e}: {l}"));
    }
}

/// `stripebench ARGS` started by a shell with stdout closed (`>&-`).
fn with_stdout_closed(args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg("exec \"$@\" >&-")
        .arg("sh")
        .arg(assert_cmd::cargo::cargo_bin("stripebench"))
        .args(args)
        .env("STRIPEBENCH_STATE_DIR", common::state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .output()
        .unwrap()
}

#[test]
fn a_document_for_a_closed_stdout_fails_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    let r1 = run_document(d.path(), "r1.json");
    let t = data_file(d.path(), "t.dat", 1 << 20);
    let t = t.to_str().unwrap();
    let r1 = r1.to_str().unwrap();
    for args in [
        &["run", t, "-t", "100ms", "--ramp", "0", "--json", "-"][..],
        &["report", r1, "-o", "-"],
        &["merge", r1, "--json", "-"],
    ] {
        let out = with_stdout_closed(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains("stdout is closed"), "{args:?}: {err}");
    }
    // Stdout sent to /dev/null on purpose is not closed.
    let out = Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
        .args(["report", r1, "-o", "-"])
        .stdout(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_input_document_as_an_output_is_refused_as_an_input() {
    let d = tempfile::tempdir().unwrap();
    let a = run_document(d.path(), "a.json");
    let b = run_document(d.path(), "b.json");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let before = (digest(a), digest(b));
    let why = "it is an input of this command";
    refused(&["report", a, "-o", a], why);
    refused(&["diff", a, b, "--json", a], why);
    refused(&["diff", a, b, "--json", b], why);
    refused(&["merge", a, b, "--json", b], why);
    refused(&["plan", a, "--json", a], why);
    // Its hard link is the same file.
    let hard = d.path().join("hard.json");
    std::fs::hard_link(a, &hard).unwrap();
    refused(
        &["report", a, "-o", hard.to_str().unwrap()],
        "which is an input of this command",
    );
    assert_eq!((digest(a), digest(b)), before);
}

/// Issue 38, item 1: a link another user made in a directory of their own
/// (not a sticky one) was followed: `--json h/alice/reports/passwd` with
/// `reports -> victim` replaced the victim's passwd. Outputs, the test
/// bed's directory (`--dir` and TMPDIR) and write targets all refuse such
/// a link, at any depth, naming it and its owner.
#[test]
#[cfg_attr(not(all(sb_root, sb_setpriv)), ignore = "needs root and setpriv")]
fn a_link_another_user_owns_in_their_own_directory_is_never_followed() {
    require(common::is_root(), "needs root: a link made by another uid");
    let _unprotected = ProtectedSymlinks::off();
    let d = reachable_tempdir();
    let victim = d.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    let passwd = victim.join("passwd");
    std::fs::write(&passwd, "SECRET\n").unwrap();
    let before = state(&passwd);
    // alice's home: hers, 0755, not sticky; the link in it is hers.
    let alice = d.path().join("alice");
    std::fs::create_dir(&alice).unwrap();
    sh_required("chown", &[OTHER, alice.to_str().unwrap()]);
    let reports = alice.join("reports");
    as_other(
        "ln",
        &["-s", victim.to_str().unwrap(), reports.to_str().unwrap()],
    );
    // One of root's own links to hers: followed, then hers is not.
    let via = d.path().join("via");
    std::os::unix::fs::symlink(&reports, &via).unwrap();
    let docs = d.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    let r1 = run_document(&docs, "r1.json");
    let r1 = r1.to_str().unwrap();
    let t = data_file(&docs, "t.dat", 2 << 20);
    let t = t.to_str().unwrap();
    let why = format!(
        "{} is a symbolic link owned by uid {OTHER}",
        reports.display()
    );
    for dir in [&reports, &via] {
        let out = dir.join("passwd");
        let out = out.to_str().unwrap();
        refused(&["run", t, "--json", out], &why);
        refused(&["report", r1, "-o", out], &why);
        refused(&["merge", r1, "--json", out], &why);
        // A write target through it.
        refused(&["run", "--rw", "write", "--allow-destructive", out], &why);
        // The test bed's directory, by --dir and by TMPDIR.
        let dir = dir.to_str().unwrap();
        refused(&["run", "--dir", dir], &why);
        let out = sb()
            .env("TMPDIR", dir)
            .args(["run", "-t", "1s", "--ramp", "0", "--no-progress"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "TMPDIR={dir}: {err}");
        assert!(err.contains(&why), "TMPDIR={dir}: {err}");
    }
    assert_eq!(state(&passwd), before, "the victim is as it was");
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 1);
}

/// Waits (up to a minute) until `dir` holds `n` temporaries of ours: the
/// room each of its `n` outputs reserved before the run, so the run is
/// under way (the outputs are checked one after the other: fewer would
/// leave the rest to find the file system full, refused before the run).
fn wait_for_reservation(dir: &Path, n: usize) {
    let t0 = Instant::now();
    loop {
        let reserved = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.starts_with(".stripebench-") && n.ends_with(".tmp")
            })
            .count();
        if reserved >= n {
            return;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no reservation in {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Issue 38, item 8: on a full file system, `run --json --csv --html
/// --plot` measured, failed on the JSON (exit 1), and never tried the rest.
/// A file system without room for the reports is refused before the run.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: mounts a tmpfs")]
fn a_full_file_system_is_refused_before_the_run_not_after_it() {
    require(common::is_root(), "needs root: mounts a tmpfs");
    let d = tempfile::tempdir().unwrap();
    let t = data_file(d.path(), "t.dat", 4 << 20);
    let m = d.path().join("full");
    std::fs::create_dir(&m).unwrap();
    let _mounted = common::mount(&["-t", "tmpfs", "-o", "size=1m", "tmpfs"], &m);
    // Filled to the last block.
    let _ = Command::new("dd")
        .arg("if=/dev/zero")
        .arg(format!("of={}", m.join("fill").display()))
        .arg("bs=4k")
        .output()
        .unwrap();
    let out = sb()
        .args(["run", "-t", "1s", "--ramp", "0", "--no-progress"])
        .arg("--json")
        .arg(m.join("r.json"))
        .arg("--csv")
        .arg(m.join("r.csv"))
        .arg(&t)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("there is not the room its report needs"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty(), "nothing was measured");
    assert_eq!(std::fs::read_dir(&m).unwrap().count(), 1, "only the filler");
}

/// Issue 38, item 8: the room reserved before the run is what the reports
/// are written into, so a file system that fills up during the run loses
/// none of them.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: mounts a tmpfs")]
fn a_file_system_that_fills_during_the_run_still_gets_every_report() {
    require(common::is_root(), "needs root: mounts a tmpfs");
    let d = tempfile::tempdir().unwrap();
    let t = data_file(d.path(), "t.dat", 4 << 20);
    let m = d.path().join("fills");
    std::fs::create_dir(&m).unwrap();
    let _mounted = common::mount(&["-t", "tmpfs", "-o", "size=4m", "tmpfs"], &m);
    let mut args: Vec<String> = ["run", "-t", "3s", "--ramp", "0", "--no-progress"]
        .map(String::from)
        .to_vec();
    for (opt, name) in [
        ("--json", "r.json"),
        ("--csv", "r.csv"),
        ("--html", "r.html"),
        ("--plot", "r.svg"),
    ] {
        args.push(opt.into());
        args.push(m.join(name).to_str().unwrap().into());
    }
    args.push(t.to_str().unwrap().into());
    let child = spawn(&args.iter().map(String::as_str).collect::<Vec<_>>());
    wait_for_reservation(&m, 4);
    let _ = Command::new("dd")
        .arg("if=/dev/zero")
        .arg(format!("of={}", m.join("fill").display()))
        .arg("bs=4k")
        .output()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        json(&std::fs::read(m.join("r.json")).unwrap())["kind"],
        "run"
    );
    for name in ["r.csv", "r.html", "r.svg"] {
        assert!(
            std::fs::metadata(m.join(name)).unwrap().len() > 0,
            "{name} is empty"
        );
    }
    // No reservation is left behind.
    let left: Vec<_> = std::fs::read_dir(&m)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Issue 38, item 8: every output is attempted whatever the others do;
/// each failure is said in its own line, and the run document, which could
/// not be written where asked, is kept in a stated place (exit 1).
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: the state directory's rescue")]
fn outputs_that_fail_are_each_named_and_the_run_document_is_kept() {
    require(common::is_root(), "needs root");
    let d = tempfile::tempdir().unwrap();
    let t = data_file(d.path(), "t.dat", 4 << 20);
    let gone = d.path().join("gone");
    let kept = d.path().join("kept");
    std::fs::create_dir(&gone).unwrap();
    std::fs::create_dir(&kept).unwrap();
    let state = d.path().join("state");
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("stripebench"));
    cmd.env("STRIPEBENCH_STATE_DIR", &state)
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .args(["run", "-t", "3s", "--ramp", "0", "--no-progress"])
        .arg("--json")
        .arg(gone.join("r.json"))
        .arg("--csv")
        .arg(gone.join("r.csv"))
        .arg("--html")
        .arg(kept.join("r.html"))
        .arg(&t);
    let child = cmd.spawn().unwrap();
    // The directory of two outputs goes away while the run measures.
    wait_for_reservation(&gone, 2);
    std::fs::remove_dir_all(&gone).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write --json"), "{err}");
    assert!(err.contains("cannot write --csv"), "{err}");
    assert!(err.contains("2 of 3 outputs could not be written"), "{err}");
    assert!(std::fs::metadata(kept.join("r.html")).unwrap().len() > 0);
    // The document is where the last line says, whole.
    let at = err
        .split("the JSON document is kept in ")
        .nth(1)
        .and_then(|s| s.split(" instead").next())
        .unwrap_or_else(|| panic!("no place said: {err}"));
    let doc = json(&std::fs::read(at).unwrap());
    assert_eq!(doc["kind"], "run");
    assert!(Path::new(at).starts_with(&state), "{at}");
    // The table still reached stdout.
    assert!(!out.stdout.is_empty());
}

/// Issue 38, hostile review: a test bed made under a directory of another
/// user's (not sticky) was created by mkdir and then filled by name, so
/// that user swapped the new directory for a link and root wrote its files
/// where the link pointed (won on the first try). The same for a state
/// directory under such a directory (root made a lock file elsewhere).
/// Both are refused before anything is made, naming the directory and its
/// owner; a sticky directory (/tmp) and root's own are fine.
#[test]
#[cfg_attr(not(all(sb_root, sb_setpriv)), ignore = "needs root and chown")]
fn nothing_is_made_under_a_directory_another_user_may_rename_in() {
    require(common::is_root(), "needs root: another uid's directory");
    let d = reachable_tempdir();
    let theirs = d.path().join("theirs");
    let real = theirs.join("real");
    std::fs::create_dir_all(&real).unwrap();
    sh_required("chown", &["-R", OTHER, theirs.to_str().unwrap()]);
    let why = format!("{} belongs to uid {OTHER} (mode 0755)", theirs.display());
    refused(&["run", "--dir", real.to_str().unwrap()], &why);
    assert_eq!(std::fs::read_dir(&real).unwrap().count(), 0, "nothing made");
    // A state directory of root's own, 0700, but in their directory.
    let state = real.join("state");
    std::fs::create_dir(&state).unwrap();
    chmod(&state, 0o700);
    let t = data_file(d.path(), "t.dat", 1 << 20);
    let out = sb()
        .env("STRIPEBENCH_STATE_DIR", &state)
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(["run", "-t", "100ms", "--ramp", "0", "--no-progress"])
        .arg(&t)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("state directory {}", state.display())) && err.contains(&why),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&state).unwrap().count(),
        0,
        "nothing made"
    );
    // A sticky directory anyone may write (as /tmp is) takes a test bed.
    let sticky = d.path().join("sticky");
    std::fs::create_dir(&sticky).unwrap();
    chmod(&sticky, 0o1777);
    sb().args(["run", "-t", "100ms", "--ramp", "0", "--no-progress"])
        .args(["--testbed-size", "8m", "--testbed-files", "1", "--dir"])
        .arg(&sticky)
        .assert()
        .success();
}
