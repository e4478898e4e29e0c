//! Real block devices (loop devices over files, attached with --direct-io=on
//! by scripts/testbed.sh): device counters against the application's bytes,
//! the write guard, and file systems that refuse O_DIRECT. Root only: without
//! root each test is listed as ignored, with its reason (build.rs; under
//! CI=true they run and fail instead). Every device and mount is removed by a
//! guard's Drop, also when an assertion fails.

use crate::common;

use crate::common::{is_root, mount, require, sb, sh_required, u, LoopBed};

fn head(dev: &str) -> Vec<u8> {
    let mut f = std::fs::File::open(dev).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    std::io::Read::read_exact(&mut f, &mut buf).unwrap();
    buf
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn direct_reads_match_the_device_counters() {
    let bed = LoopBed::new(2, 64);
    let mut args = vec!["run", "--duration", "1s", "--ramp", "200ms"];
    args.extend(bed.devices.iter().map(String::as_str));
    let doc = common::run_json(&args);
    for t in doc["targets"].as_array().unwrap() {
        assert_eq!(t["kind"], "block");
        assert_eq!(u(&t["logical_block_size"]), 512);
        let d = &t["device"];
        let name = t["path"].as_str().unwrap().trim_start_matches("/dev/");
        assert_eq!(d["name"], name);
        let (dev, app) = (u(&d["read_bytes"]) as f64, u(&d["app_read_bytes"]) as f64);
        assert!(app > 0.0);
        println!(
            "{name}: device {dev} B, application {app} B, ratio {:.4}",
            dev / app
        );
        assert!(
            (dev - app).abs() / app < 0.01,
            "{name}: device bytes {dev} not within 1% of application bytes {app}"
        );
        assert!(
            u(&t["bytes"]) as f64 <= app,
            "window bytes are part of the span's bytes"
        );
    }
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn block_device_writes_need_consent_and_then_work() {
    let bed = LoopBed::new(1, 32);
    let dev = &bed.devices[0];
    let before = head(dev);
    for rw in ["write", "randwrite", "randrw"] {
        let out = sb()
            .args(["run", "--duration", "200ms", "--ramp", "0", "--rw", rw, dev])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{rw}: {err}");
        assert!(
            err.contains("refusing to write to block device") && err.contains(dev.as_str()),
            "{err}"
        );
    }
    assert_eq!(head(dev), before, "a refused write changed the device");
    // Reads are never refused.
    sb().args([
        "run",
        "--duration",
        "200ms",
        "--ramp",
        "0",
        "--bs",
        "lbs",
        dev,
    ])
    .assert()
    .success();
    let doc = common::run_json(&[
        "run",
        "--duration",
        "500ms",
        "--ramp",
        "0",
        "--rw",
        "write",
        "--allow-destructive",
        dev,
    ]);
    let d = &doc["targets"][0]["device"];
    let (dev_w, app_w) = (u(&d["write_bytes"]) as f64, u(&d["app_write_bytes"]) as f64);
    assert!(
        app_w > 0.0 && (dev_w - app_w).abs() / app_w < 0.01,
        "device {dev_w} vs app {app_w}"
    );
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_ext4)),
    ignore = "needs root and mkfs.ext4 (e2fsprogs)"
)]
fn a_mounted_device_is_refused_even_with_consent() {
    let bed = LoopBed::new(1, 64);
    let dev = bed.devices[0].clone();
    sh_required("mkfs.ext4", &["-q", "-F", "-E", "nodiscard", &dev]);
    let mnt = tempfile::tempdir().unwrap();
    let _m = mount(&[&dev], mnt.path());
    let out = sb()
        .args([
            "run",
            "--duration",
            "200ms",
            "--rw",
            "write",
            "--allow-destructive",
            &dev,
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is in use"), "{err}");
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: mounts a ramfs")]
fn a_file_system_without_o_direct_is_explained() {
    require(is_root(), "needs root: mounts a ramfs");
    let mnt = tempfile::tempdir().unwrap();
    let _m = mount(&["-t", "ramfs", "none"], mnt.path());
    let f = mnt.path().join("t");
    std::fs::write(&f, vec![1u8; 1 << 20]).unwrap();
    let out = sb()
        .args(["run", "--duration", "200ms"])
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("refuses O_DIRECT") && err.contains("--buffered"),
        "{err}"
    );
    sb().args(["run", "--duration", "200ms", "--ramp", "0", "--buffered"])
        .arg(&f)
        .assert()
        .success();
}

/// The flags (octal, /proc/PID/fdinfo) of process `pid`'s descriptor of `dev`.
fn fd_flags_of(pid: u32, dev: &str) -> Option<u32> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    let fd = fds
        .flatten()
        .find(|e| std::fs::read_link(e.path()).is_ok_and(|l| l == std::path::Path::new(dev)))?;
    let info =
        std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_str()?)).ok()?;
    let flags = info.lines().find_map(|l| l.strip_prefix("flags:"))?;
    u32::from_str_radix(flags.trim(), 8).ok()
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: zram devices")]
fn a_device_is_read_without_touching_its_access_time() {
    // Every read through a node without O_NOATIME checks (and, under
    // relatime, now and then writes) the node's atime: kernel time per I/O
    // that fio does not spend on a device either.
    let z = common::Zram::new(16);
    let child = common::spawn(&[
        "run",
        "--duration",
        "30s",
        "--no-progress",
        "--bs",
        "4k",
        &z.dev,
    ]);
    common::wait_workers(child.id());
    let flags = fd_flags_of(child.id(), &z.dev);
    common::interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let flags = flags.expect("the run holds a descriptor of the device");
    println!("{}: flags {flags:o}", z.dev);
    assert_ne!(flags & libc::O_NOATIME as u32, 0, "no O_NOATIME: {flags:o}");
    assert_ne!(flags & libc::O_DIRECT as u32, 0, "no O_DIRECT: {flags:o}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("O_NOATIME"),
        "{out:?}"
    );
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_setpriv)),
    ignore = "needs root and setpriv: zram devices, a capability dropped"
)]
fn a_device_node_the_user_does_not_own_is_still_read() {
    // O_NOATIME is the owner's or CAP_FOWNER's: root without CAP_FOWNER,
    // on a node another user owns, is refused it (EPERM) and must read
    // the device all the same.
    let z = common::Zram::new(16);
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("zram-node");
    let rdev = std::os::unix::fs::MetadataExt::rdev(&std::fs::metadata(&z.dev).unwrap());
    let (major, minor) = (libc::major(rdev).to_string(), libc::minor(rdev).to_string());
    let node_s = node.to_str().unwrap();
    sh_required("mknod", &[node_s, "b", &major, &minor]);
    sh_required("chown", &["65534", node_s]);
    let no_fowner = ["--bounding-set=-fowner", "--inh-caps=-fowner"];
    // The premise: this node, without CAP_FOWNER, refuses O_NOATIME.
    let dd = std::process::Command::new("setpriv")
        .args(no_fowner)
        .args(["dd", "iflag=noatime", "count=1", "of=/dev/null"])
        .arg(format!("if={node_s}"))
        .output()
        .unwrap();
    assert!(!dd.status.success(), "dd iflag=noatime was not refused");
    assert!(
        String::from_utf8_lossy(&dd.stderr).contains("not permitted"),
        "{}",
        String::from_utf8_lossy(&dd.stderr)
    );
    let out = std::process::Command::new("setpriv")
        .args(no_fowner)
        .arg(assert_cmd::cargo::cargo_bin("stripebench"))
        .env("STRIPEBENCH_STATE_DIR", common::state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(["run", "--no-progress", "--io-limit", "1m", "--json", "-"])
        .arg(&node)
        .output()
        .unwrap();
    common::succeeded(&out);
    let doc = common::json(&out.stdout);
    assert_eq!(u(&doc["total"]["bytes"]), 1 << 20);
    // ... and says that it read without O_NOATIME.
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| crate::common::warning_text(w)
            .unwrap()
            .contains("opened without O_NOATIME")),
        "{warnings:?}"
    );
}
