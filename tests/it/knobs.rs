//! Every knob restored: --readahead on a loop device is put back after a
//! normal run, after SIGINT (which still writes the report), and, after a
//! SIGKILL, by `stripebench restore`. Root only.

use crate::common;

use std::time::Duration;

use crate::common::{interrupt, json, ra, ra_path, sb, spawn, LoopBed};

/// Waits until the running child `pid` has set the read-ahead (it does so
/// before its workers start), then until its workers have completed reads:
/// the run is under way, with something measured.
fn wait_for(pid: u32, dev: &str, value: &str) {
    let t0 = std::time::Instant::now();
    while ra(dev) != value {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "read-ahead never became {value}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    common::wait_for("the run's first reads", || common::worker_reads(pid) > 0);
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn readahead_is_restored_after_a_run_and_after_sigint() {
    let bed = LoopBed::new(1, 32);
    let dev = bed.devices[0].clone();
    std::fs::write(ra_path(&dev), "128").unwrap();
    let doc = common::run_json(&[
        "run",
        "--buffered",
        "--readahead",
        "4096",
        "--duration",
        "300ms",
        "--ramp",
        "0",
        &dev,
    ]);
    assert_eq!(
        doc["targets"][0]["read_ahead_kb"], 4096,
        "in effect during the run"
    );
    assert_eq!(doc["config"]["readahead_kb"], 4096);
    assert_eq!(ra(&dev), "128", "restored after a normal run");

    let jpath = bed.dir().join("int.json");
    let child = spawn(&[
        "run",
        "--buffered",
        "--readahead",
        "2048",
        "--duration",
        "60s",
        "--ramp",
        "0",
        "--json",
        jpath.to_str().unwrap(),
        &dev,
    ]);
    wait_for(child.id(), &dev, "2048");
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json(&std::fs::read(&jpath).unwrap())["interrupted"], true);
    assert_eq!(ra(&dev), "128", "restored after SIGINT");
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn restore_puts_back_what_a_killed_run_left() {
    let bed = LoopBed::new(1, 32);
    let dev = bed.devices[0].clone();
    std::fs::write(ra_path(&dev), "256").unwrap();
    let mut child = spawn(&[
        "run",
        "--buffered",
        "--readahead",
        "1024",
        "--duration",
        "60s",
        "--ramp",
        "0",
        &dev,
    ]);
    wait_for(child.id(), &dev, "1024");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(ra(&dev), "1024", "SIGKILL leaves the setting changed");
    // The next run warns that a restore is pending.
    let out = sb()
        .args(["run", "--duration", "100ms", "--ramp", "0", &dev])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("stripebench restore"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A run that would change the same setting now would record the killed
    // run's value as the one to restore: it is refused until restore ran.
    let out = sb()
        .args([
            "run",
            "--buffered",
            "--readahead",
            "64",
            "-t",
            "100ms",
            "--ramp",
            "0",
            &dev,
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("run 'stripebench restore' first"), "{err}");
    assert_eq!(ra(&dev), "1024");
    let out = sb().arg("restore").output().unwrap();
    common::succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("read_ahead_kb to 256"), "{text}");
    assert_eq!(ra(&dev), "256", "restored");
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn concurrent_runs_on_one_device_leave_its_readahead_as_it_was() {
    let bed = LoopBed::new(1, 32);
    let dev = bed.devices[0].clone();
    std::fs::write(ra_path(&dev), "2560").unwrap();
    let run = |ra: &str, secs: &str, extra: &[&str]| {
        let mut a = vec![
            "run",
            "--buffered",
            "--readahead",
            ra,
            "--duration",
            secs,
            "--ramp",
            "0",
            "--no-progress",
        ];
        a.extend_from_slice(extra);
        a.push(&dev);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let a_args = run("16", "3s", &[]);
    let a = spawn(&a_args.iter().map(String::as_str).collect::<Vec<_>>());
    wait_for(a.id(), &dev, "16");
    // A second run that would change the same device is refused, naming A.
    let out = sb().args(run("64", "300ms", &[])).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("PID {}", a.id())), "{err}");
    assert_eq!(ra(&dev), "16", "the refused run changed nothing");
    // With --wait-lock it waits for A, then runs.
    let c_args = run("64", "300ms", &["--wait-lock"]);
    let c = spawn(&c_args.iter().map(String::as_str).collect::<Vec<_>>());
    let a_out = a.wait_with_output().unwrap();
    common::succeeded(&a_out);
    let c_out = c.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&c_out.stderr);
    common::succeeded(&c_out);
    assert!(err.contains("waiting for another run"), "{err}");
    assert_eq!(ra(&dev), "2560", "both runs put back the original value");
}

// Regression (issue 21, item 9): as a non-root user, `run --readahead 128
// f.dat` warned "could not restore /sys/dev/block/254:0/queue/read_ahead_kb
// to 8192 ... run 'stripebench restore'" though nothing had been changed;
// and for a file, the knob is the device's under its file system, which was
// never said.
#[test]
#[cfg_attr(
    not(all(sb_root, sb_setpriv, sb_mkfs_ext4)),
    ignore = "needs root (to make the user), setpriv and mkfs.ext4"
)]
fn readahead_on_a_file_names_its_device_and_a_refused_change_asks_no_restore() {
    use std::os::unix::fs::PermissionsExt;
    // On a file system of its own: the read-ahead of the disk that holds /
    // is never changed for a file (see the test below).
    let bed = LoopBed::new(1, 64);
    common::sh_required(
        "mkfs.ext4",
        &["-q", "-F", "-E", "nodiscard", &bed.devices[0]],
    );
    let dir = tempfile::tempdir().unwrap();
    let _m = common::mount(&[&bed.devices[0]], dir.path());
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let f = common::data_file(dir.path(), "f.dat", 1 << 20);
    // The user's own state directory (one anyone may write is refused, and
    // so is one under a directory anyone may rename things in).
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let state = home.path().join("state");
    std::fs::create_dir(&state).unwrap();
    common::sh_required("chown", &["65534", state.to_str().unwrap()]);
    let out = std::process::Command::new("setpriv")
        .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("stripebench"))
        .env("STRIPEBENCH_STATE_DIR", &state)
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(["run", "--readahead", "128", "-t", "100ms", "--ramp", "0"])
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the read-ahead of the device under its file system"),
        "the refusal names the device's setting: {err}"
    );
    assert!(err.contains("root is needed"), "{err}");
    assert!(
        !err.contains("could not restore") && !err.contains("stripebench restore"),
        "nothing was changed, nothing to restore: {err}"
    );
    let left: Vec<_> = std::fs::read_dir(&state)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("knobs-"))
        .collect();
    assert!(
        left.is_empty(),
        "no state file for a change never made: {left:?}"
    );
}

/// Regression (issue 38, item 9): a link or a directory planted at a device
/// lock's name in the state directory made root's run fail with "cannot
/// open lock ...: Too many levels of symbolic links (os error 40) (root is
/// needed)": root was told to be root. Root is told what stands there (its
/// kind, owner and mode) and the errno, and no hint about root.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_planted_lock_tells_root_what_stands_there_not_that_root_is_needed() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let img = common::data_file(dir.path(), "img", 4 << 20);
    let lo = common::Loop::attach(&img, &[]);
    let rdev = std::fs::metadata(&lo.dev).unwrap().rdev();
    let lock = format!("lock-{}:{}", libc::major(rdev), libc::minor(rdev));
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    for (planted, said) in [
        ("link", "is a symbolic link: not followed"),
        (
            "dir",
            "(os error 21) (there: a directory, owner uid 0 gid 0, mode",
        ),
    ] {
        let at = state.join(&lock);
        let _ = std::fs::remove_file(&at);
        let _ = std::fs::remove_dir(&at);
        if planted == "link" {
            std::os::unix::fs::symlink(dir.path().join("elsewhere"), &at).unwrap();
        } else {
            std::fs::create_dir(&at).unwrap();
        }
        let out = common::sb()
            .env("STRIPEBENCH_STATE_DIR", &state)
            .env("STRIPEBENCH_HISTORY", crate::common::history_db())
            .args(["run", "--readahead", "128", "-t", "100ms", "--ramp", "0"])
            .arg(&lo.dev)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{planted}: {err}");
        assert_eq!(err.lines().count(), 1, "{planted}: one line: {err}");
        assert!(!err.contains("root is needed"), "{planted}: {err}");
        assert!(
            err.contains(said) && err.contains(&lock),
            "{planted}: {err}"
        );
    }
}

// Regression (issue 39, item 7): `run --buffered --readahead 1024 -t 3s
// /dev/loopN &`, then `run --buffered -t 1s --json c.json /dev/loopN`: the
// second document recorded read_ahead_kb 1024 as the device's (its own was
// 2560), and nothing said another run was driving the same device.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn another_runs_temporary_readahead_is_named_not_taken_for_the_devices() {
    let bed = LoopBed::new(1, 64);
    let dev = bed.devices[0].clone();
    std::fs::write(ra_path(&dev), "2560").unwrap();
    let a = spawn(&[
        "run",
        "--buffered",
        "--readahead",
        "1024",
        "-t",
        "60s",
        "--ramp",
        "0",
        "--no-progress",
        &dev,
    ]);
    let pid = a.id();
    wait_for(pid, &dev, "1024");
    let doc = common::run_json(&["run", "--buffered", "-t", "300ms", "--ramp", "0", &dev]);
    interrupt(&a);
    let a_out = a.wait_with_output().unwrap();
    assert_eq!(a_out.status.code(), Some(130));
    let t = &doc["targets"][0];
    assert_eq!(t["read_ahead_kb"], 1024, "the value in force is recorded");
    let held = t["held_settings"].as_array().expect("held_settings");
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0]["own"], "2560", "the device's own value too");
    assert_eq!(held[0]["in_force"], "1024");
    assert_eq!(held[0]["pid"], pid.to_string());
    assert_eq!(held[0]["killed"], false);
    assert!(held[0]["setting"]
        .as_str()
        .unwrap()
        .ends_with("queue/read_ahead_kb"));
    let said: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| crate::common::warning_text(w))
        .filter(|w| w.contains("another stripebench run"))
        .collect();
    assert_eq!(said.len(), 1, "one warning: {:?}", doc["warnings"]);
    assert!(
        said[0].contains(&format!("PID {pid}"))
            && said[0].contains("it was 1024 during this run, the device's own is 2560"),
        "{}",
        said[0]
    );
    assert_eq!(ra(&dev), "2560", "put back by the run that changed it");
}

// Regression (issue 39, item 7): a run whose device another process read
// at the same time gave figures shared with it, and nothing said so; its
// device counters showed the other's bytes beside its own.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn io_on_the_device_that_was_not_the_runs_is_said_with_its_bytes() {
    let bed = LoopBed::new(1, 64);
    let dev = bed.devices[0].clone();
    // Alone: no foreign I/O.
    let doc = common::run_json(&["run", "--direct", "-t", "300ms", "--ramp", "0", &dev]);
    assert!(doc["targets"][0]["foreign_io"].is_null(), "{doc}");
    // Another reader of the same device for the whole run.
    let mut other = std::process::Command::new("sh")
        .args([
            "-c",
            &format!("while :; do dd if={dev} of=/dev/null iflag=direct bs=1M 2>/dev/null; done"),
        ])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let out = sb()
        .args([
            "run", "--json", "-", "--direct", "-t", "500ms", "--ramp", "0", &dev,
        ])
        .output()
        .unwrap();
    // SAFETY: our own child (the shell; dd ends at the device's end).
    unsafe { libc::kill(other.id() as i32, libc::SIGKILL) };
    other.wait().unwrap();
    common::succeeded(&out);
    let doc = json(&out.stdout);
    let f = &doc["targets"][0]["foreign_io"];
    let foreign = f["read_bytes"].as_u64().expect("foreign reads counted");
    assert!(foreign > f["tolerance"].as_u64().unwrap(), "{f}");
    assert_eq!(f["write_bytes"], 0);
    let said = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| crate::common::warning_text(w))
        .find(|w| w.contains("not this run's"))
        .unwrap_or_else(|| panic!("no warning: {:?}", doc["warnings"]));
    assert!(said.contains(" read beyond this run's own bytes"), "{said}");
}

// Regression (issue 39, item 10): seed 000's read-ahead sweep on a file on
// the root file system changed the read-ahead of the disk that holds /
// (every point set it, for everything the machine runs), though the user
// named only the file. Refused, before anything is set or measured, in one
// line; a dry run says so too, and never touches the disk.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: read-ahead")]
fn readahead_on_a_file_never_changes_the_disk_that_holds_root_unless_named() {
    let root_knob = stripebench::device::readahead_knob(std::path::Path::new("/"));
    common::require(
        root_knob.is_some(),
        "needs / on a block device with a read_ahead_kb",
    );
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let f = common::data_file(dir.path(), "f.dat", 1 << 20);
    assert_eq!(
        stripebench::device::readahead_knob(&f),
        root_knob,
        "the file is on the disk that holds /"
    );
    let before = std::fs::read_to_string(root_knob.as_ref().unwrap()).unwrap();
    for args in [
        vec!["run", "--dry-run", "--buffered", "--readahead", "64"],
        vec![
            "sweep",
            "--param",
            "readahead=64,128",
            "--buffered",
            "-t",
            "1s",
        ],
    ] {
        let out = sb().args(&args).arg(&f).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let text = format!("{}{err}", String::from_utf8_lossy(&out.stdout));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(
            text.contains("the disk that holds /")
                && text.contains("name that disk among the targets"),
            "{args:?}: {text}"
        );
        assert_eq!(
            err.lines()
                .filter(|l| l.contains("disk that holds /"))
                .count(),
            1,
            "one line: {err}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(root_knob.as_ref().unwrap()).unwrap(),
        before,
        "never changed"
    );
}
