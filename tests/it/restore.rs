//! `stripebench restore` against hostile or misleading state: a state file
//! named after a live but unrelated process, a state file naming a link
//! planted under /sys or a setting stripebench never changes, and a test-bed
//! record naming somebody else's directory. Each test has its own state
//! directory, so no other test's restore sees what it plants. Root only.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use crate::common::{ra, ra_path, LoopBed};

/// `stripebench ARGS` with `state` as the state directory.
fn sb_in(state: &Path, args: &[&str]) -> std::process::Output {
    common::sb()
        .env("STRIPEBENCH_STATE_DIR", state)
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(args)
        .output()
        .unwrap()
}

/// A state file as a run writes it: one setting, its old value.
fn state_file(state: &Path, pid: u32, path: &Path, old: &str) -> PathBuf {
    fs::create_dir_all(state).unwrap();
    let f = state.join(format!("knobs-{pid}.json"));
    let doc = serde_json::json!([{ "path": path, "old": old, "at_ns": 1 }]);
    fs::write(&f, serde_json::to_vec(&doc).unwrap()).unwrap();
    f
}

/// A `sleep` that lives as long as the test (killed on drop).
struct Sleeper(Child);

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A loop device's read-ahead file, as a run records it (links resolved,
/// under /sys/devices).
fn real_ra(dev: &str) -> PathBuf {
    fs::canonicalize(ra_path(dev)).unwrap()
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_state_file_named_after_a_live_unrelated_pid_is_still_pending() {
    let bed = LoopBed::new(1, 16);
    let dev = bed.devices[0].clone();
    let state = tempfile::tempdir().unwrap();
    // A killed run changed 2560 to 4096; its PID now belongs to a sleep.
    fs::write(ra_path(&dev), "4096").unwrap();
    let sleep = Sleeper(Command::new("sleep").arg("600").spawn().unwrap());
    let file = state_file(state.path(), sleep.0.id(), &real_ra(&dev), "2560");
    // A run that would change it is refused: it would record 4096 as the
    // value to put back.
    let out = sb_in(
        state.path(),
        &[
            "run",
            "--buffered",
            "--readahead",
            "8192",
            "-t",
            "100ms",
            "--ramp",
            "0",
            &dev,
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("run 'stripebench restore' first"), "{err}");
    assert_eq!(ra(&dev), "4096");
    // restore puts back 2560: no live run holds the device's lock.
    let out = sb_in(state.path(), &["restore"]);
    let text = String::from_utf8_lossy(&out.stdout);
    common::succeeded(&out);
    assert!(text.contains("read_ahead_kb to 2560"), "{text}");
    assert_eq!(ra(&dev), "2560");
    assert!(!file.exists(), "the state file is done with");
}

/// A directory on the tmpfs at /sys/fs/cgroup (cgroup v1), handed to
/// another uid, removed on drop.
struct Planted(PathBuf);

impl Drop for Planted {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_blkio, sb_setpriv)),
    ignore = "needs root, setpriv and cgroup v1 (a tmpfs at /sys/fs/cgroup)"
)]
fn restore_never_writes_through_a_link_planted_under_sys() {
    let cg = Path::new("/sys/fs/cgroup");
    // SAFETY: all-zero is a valid statfs.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a statfs we own.
    let tmpfs = unsafe { libc::statfs(c"/sys/fs/cgroup".as_ptr(), &mut st) } == 0
        && st.f_type as i64 == 0x0102_1994;
    common::require(tmpfs, "needs a tmpfs at /sys/fs/cgroup (cgroup v1)");
    let t = tempfile::tempdir().unwrap();
    let victim = t.path().join("victim");
    fs::create_dir(&victim).unwrap();
    fs::write(victim.join("read_ahead_kb"), "precious\n").unwrap();
    fs::write(victim.join("secret.conf"), "precious\n").unwrap();
    let planted = Planted(cg.join(format!("sb-restore-{}", std::process::id())));
    fs::create_dir(&planted.0).unwrap();
    common::sh_required("chown", &["54321:54321", planted.0.to_str().unwrap()]);
    // The links are made by another user: one for a directory on the way,
    // one for the file itself.
    for (target, name) in [
        (victim.clone(), "queue"),
        (victim.join("secret.conf"), "read_ahead_kb"),
    ] {
        common::sh_required(
            "setpriv",
            &[
                "--reuid",
                "54321",
                "--regid",
                "54321",
                "--clear-groups",
                "ln",
                "-s",
                target.to_str().unwrap(),
                planted.0.join(name).to_str().unwrap(),
            ],
        );
    }
    let state = t.path().join("state");
    state_file(
        &state,
        4_000_001,
        &planted.0.join("queue/read_ahead_kb"),
        "pwned",
    );
    state_file(&state, 4_000_003, &planted.0.join("read_ahead_kb"), "pwned");
    let out = sb_in(&state, &["restore"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("refusing to write"), "{err}");
    for f in ["read_ahead_kb", "secret.conf"] {
        assert_eq!(
            fs::read_to_string(victim.join(f)).unwrap(),
            "precious\n",
            "{f} was written through a planted link"
        );
    }
}

/// A sysfs attribute set for a test and put back on drop, on every exit path.
struct PutBack(PathBuf, String);

impl PutBack {
    fn set(path: &Path, value: &str) -> PutBack {
        let old = fs::read_to_string(path).unwrap().trim().to_string();
        fs::write(path, value).unwrap();
        PutBack(path.to_path_buf(), old)
    }
}

impl Drop for PutBack {
    fn drop(&mut self) {
        let _ = fs::write(&self.0, &self.1);
    }
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn restore_writes_only_its_own_settings_and_follows_no_sysfs_link() {
    let bed = LoopBed::new(2, 16);
    let (a, b) = (bed.devices[0].clone(), bed.devices[1].clone());
    let name = |d: &str| d.trim_start_matches("/dev/").to_string();
    let a_dir = fs::canonicalize(format!("/sys/block/{}", name(&a))).unwrap();
    fs::write(ra_path(&b), "512").unwrap();
    // nr_requests: stripebench never changes it (max_sectors_kb, which
    // this test named before, is now one `advise --apply` sets and restore
    // puts back).
    let max_sectors = a_dir.join("queue/nr_requests");
    // Put back when the test ends: a loop device keeps its queue settings
    // after it is detached, and the next test to attach it would inherit it.
    let _limit = PutBack::set(&max_sectors, "64");
    let state = tempfile::tempdir().unwrap();
    // Under /sys/devices, but through a link (loopA/subsystem is
    // /sys/class/block, whose loopB leads to B's directory).
    let through_link = a_dir.join(format!("subsystem/{}/queue/read_ahead_kb", name(&b)));
    assert!(through_link.exists());
    state_file(state.path(), 4_000_001, &through_link, "2048");
    // A real attribute of a real device, that stripebench never changes.
    state_file(state.path(), 4_000_003, &max_sectors, "32");
    let out = sb_in(state.path(), &["restore"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("refusing to write"), "{err}");
    assert_eq!(ra(&b), "512", "written through a link");
    assert_eq!(
        fs::read_to_string(&max_sectors).unwrap().trim(),
        "64",
        "an attribute stripebench never changes was written"
    );
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: the state directory of root")]
fn restore_removes_no_test_bed_it_did_not_mark() {
    let t = tempfile::tempdir().unwrap();
    let precious = t.path().join("precious/stripebench-testbed-4000002-keep");
    fs::create_dir_all(&precious).unwrap();
    fs::write(precious.join("thesis.tex"), "years of work\n").unwrap();
    let state = t.path().join("state");
    fs::create_dir(&state).unwrap();
    fs::write(
        state.join("testbed-4000002.path"),
        precious.as_os_str().as_encoded_bytes(),
    )
    .unwrap();
    let out = sb_in(&state, &["restore"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        precious.join("thesis.tex").exists(),
        "restore deleted a tree it did not create: {text}"
    );
    assert!(text.contains("left") && text.contains("alone"), "{text}");
    // A record in the new form, with a token, beside a marker holding
    // another one (copied from somebody's test bed, say): still kept.
    let other = t.path().join("precious/stripebench-testbed-4000004-keep");
    fs::create_dir_all(&other).unwrap();
    fs::write(other.join(".stripebench-testbed"), "0123456789abcdef").unwrap();
    fs::write(other.join("file0"), "data\n").unwrap();
    let rec = serde_json::json!({ "dir": other, "token": "fedcba9876543210" });
    fs::write(
        state.join("testbed-4000004.path"),
        serde_json::to_vec(&rec).unwrap(),
    )
    .unwrap();
    let out = sb_in(&state, &["restore"]);
    assert!(
        other.join("file0").exists(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: the state directory of root")]
fn a_fifo_planted_as_a_test_beds_marker_hangs_nothing() {
    let t = tempfile::tempdir().unwrap();
    let bed = t.path().join("stripebench-testbed-4000006-x");
    fs::create_dir(&bed).unwrap();
    common::sh_required(
        "mkfifo",
        &[bed.join(".stripebench-testbed").to_str().unwrap()],
    );
    let state = t.path().join("state");
    fs::create_dir(&state).unwrap();
    let rec = serde_json::json!({ "dir": bed, "token": "00" });
    fs::write(
        state.join("testbed-4000006.path"),
        serde_json::to_vec(&rec).unwrap(),
    )
    .unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
        .env("STRIPEBENCH_STATE_DIR", &state)
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .arg("restore")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if t0.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.is_some(), "restore hung opening a FIFO");
    assert!(
        bed.exists(),
        "a directory without a real marker was removed"
    );
}

/// Issue 38, item 7: a state directory anyone may write to (1777), or a
/// state file another user owns in it, fed `restore` settings to write to
/// sysfs as root (seen: loop1's max_sectors_kb set to 4).
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices and chown")]
fn restore_trusts_no_state_directory_or_file_anyone_else_could_write() {
    use std::os::unix::fs::PermissionsExt;
    let bed = LoopBed::new(1, 16);
    let dev = bed.devices[0].clone();
    let before = fs::read_to_string(ra_path(&dev)).unwrap();
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let file = state_file(&state, 4_000_001, &real_ra(&dev), "4");
    // A directory anyone may write to: refused whole, in one line, naming its mode.
    fs::set_permissions(&state, fs::Permissions::from_mode(0o1777)).unwrap();
    let out = sb_in(&state, &["restore"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("its mode is 1777"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // The same for every measuring command, before any I/O.
    let out = sb_in(&state, &["run", "-t", "1s", "--ramp", "0", &dev]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("state directory"));
    // A private directory, but the file is another user's: not read, named
    // with its owner and mode, and nothing is written.
    fs::set_permissions(&state, fs::Permissions::from_mode(0o700)).unwrap();
    common::sh_required("chown", &["54321", file.to_str().unwrap()]);
    let out = sb_in(&state, &["restore"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("owned by uid 54321 (mode 0644)"), "{err}");
    // A file of root's that group or others may write: the same.
    common::sh_required("chown", &["0", file.to_str().unwrap()]);
    fs::set_permissions(&file, fs::Permissions::from_mode(0o666)).unwrap();
    let out = sb_in(&state, &["restore"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("its mode is 0666"), "{err}");
    assert_eq!(fs::read_to_string(ra_path(&dev)).unwrap(), before);
    // A FIFO planted at a record's name: named with its owner and mode.
    let fifo = state.join("knobs-4000002.json");
    common::sh_required("mkfifo", &["-m", "0600", fifo.to_str().unwrap()]);
    let out = sb_in(&state, &["restore"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is not a regular file (owned by root (uid 0), mode 0600): not read"),
        "{err}"
    );
    fs::remove_file(&fifo).unwrap();
    // Root's own, 0600: put back as before.
    fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
    let out = sb_in(&state, &["restore"]);
    common::succeeded(&out);
    assert_eq!(fs::read_to_string(ra_path(&dev)).unwrap().trim(), "4");
    fs::write(ra_path(&dev), before.trim()).unwrap();
}

/// Issue 38, item 7: a FIFO or a link planted at a device's lock name gave
/// "Permission denied ... (root is needed)" to root; now the lock is named
/// with what is wrong with it.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_planted_lock_is_named_for_what_it_is_not_blamed_on_permissions() {
    let bed = LoopBed::new(1, 16);
    let dev = bed.devices[0].clone();
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    fs::create_dir(&state).unwrap();
    let numbers = fs::read_to_string(format!(
        "/sys/class/block/{}/dev",
        dev.trim_start_matches("/dev/")
    ))
    .unwrap();
    let lock = state.join(format!("lock-{}", numbers.trim()));
    let run = |why: &str| {
        let out = sb_in(
            &state,
            &[
                "run",
                "--buffered",
                "--readahead",
                "512",
                "-t",
                "1s",
                "--ramp",
                "0",
                "--no-progress",
                &dev,
            ],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(why), "expected '{why}': {err}");
        assert!(!err.contains("root is needed"), "{err}");
    };
    common::sh_required("mkfifo", &[lock.to_str().unwrap()]);
    run("it is not a regular file");
    fs::remove_file(&lock).unwrap();
    std::os::unix::fs::symlink(t.path().join("elsewhere"), &lock).unwrap();
    run("is a symbolic link: not followed");
    assert!(!t.path().join("elsewhere").exists());
}
