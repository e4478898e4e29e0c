//! `--iolog-write` (fio's write_iolog): the log lists every I/O issued, in
//! fio's version 3 form, and fio itself replays it; `--iolog-read` (fio's
//! read_iolog) replays ours and fio's to the same I/Os, and refuses a bad
//! line by its number.

use std::process::Command;

use crate::common::{data_file, sb, succeeded_as, tool, Loop};

/// The I/O lines of a v3 log: (op, offset, length), in order.
fn ios(log: &str) -> Vec<(String, u64, u64)> {
    log.lines()
        .skip(1)
        .filter_map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            match w.as_slice() {
                [_, _, op, off, len] => {
                    Some((op.to_string(), off.parse().ok()?, len.parse().ok()?))
                }
                _ => None,
            }
        })
        .collect()
}

/// A random mix of 1024 I/Os over a loop device: the log holds them all,
/// each inside the region, as fio writes its log; fio, replaying it
/// (--read_iolog), issues as many reads and writes, of the same bytes.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root (loop devices)")]
#[cfg_attr(not(sb_fio), ignore = "needs fio (Debian package fio)")]
fn write_iolog_lists_every_io_and_fio_replays_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = data_file(dir.path(), "back", 16 << 20);
    let dev = Loop::attach(&file, &[]);
    let ours = dir.path().join("ours.log");
    let out = sb()
        .args([
            "run", "--rw", "randrw", "--bs", "4k", "--size", "4m", "--passes", "1",
        ])
        .args([
            "--direct",
            "--no-progress",
            "--allow-destructive",
            "--iolog-write",
        ])
        .arg(&ours)
        .arg(&dev.dev)
        .output()
        .unwrap();
    succeeded_as(&out, 0);
    let text = std::fs::read_to_string(&ours).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("fio version 3 iolog"));
    assert_eq!(lines.next(), Some(format!("0 {} add", dev.dev).as_str()));
    assert!(text.ends_with(&format!("{} close\n", dev.dev)), "{text}");
    let logged = ios(&text);
    assert_eq!(logged.len(), 1024, "every I/O of the pass, once");
    assert!(logged
        .iter()
        .all(|(op, off, len)| (op == "read" || op == "write")
            && *len == 4096
            && off + len <= 4 << 20));
    assert!(logged.iter().any(|i| i.0 == "read") && logged.iter().any(|i| i.0 == "write"));

    // fio reads the log (and then writes none of its own): its counts of
    // each direction are the log's.
    let out = Command::new(tool("fio"))
        .args(["--name=replay", "--direct=1", "--replay_no_stall=1"])
        .args(["--output-format=json"])
        .arg(format!("--filename={}", dev.dev))
        .arg(format!("--read_iolog={}", ours.display()))
        .output()
        .unwrap();
    succeeded_as(&out, "fio --read_iolog on our log");
    let s = String::from_utf8(out.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(&s[s.find('{').expect(&s)..]).unwrap();
    let job = &v["jobs"][0];
    for dir in ["read", "write"] {
        let n = logged.iter().filter(|i| i.0 == dir).count() as u64;
        assert_eq!(job[dir]["total_ios"].as_u64(), Some(n), "fio's {dir}s");
        assert_eq!(
            job[dir]["io_bytes"].as_u64(),
            Some(n * 4096),
            "fio's {dir} bytes"
        );
    }
}

/// `run` with `args` on `dev`, which must succeed.
fn run(dev: &str, args: &[&str]) {
    let out = sb()
        .args(["run", "--direct", "--no-progress", "--allow-destructive"])
        .args(args)
        .arg(dev)
        .output()
        .unwrap();
    succeeded_as(&out, 0);
}

/// A log written, replayed with a log of the replay written too: the two
/// list the same I/Os in the same order.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root (loop devices)")]
fn read_iolog_replays_the_logged_ios_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let file = data_file(dir.path(), "back", 16 << 20);
    let dev = Loop::attach(&file, &[]);
    let first = dir.path().join("first.log");
    let again = dir.path().join("again.log");
    let (f, a) = (first.to_str().unwrap(), again.to_str().unwrap());
    run(
        &dev.dev,
        &[
            "--rw",
            "randrw",
            "--bs",
            "8k",
            "--size",
            "2m",
            "--passes",
            "1",
            "--iolog-write",
            f,
        ],
    );
    run(&dev.dev, &["--iolog-read", f, "--iolog-write", a]);
    let one = ios(&std::fs::read_to_string(&first).unwrap());
    let two = ios(&std::fs::read_to_string(&again).unwrap());
    assert_eq!(one.len(), 256);
    assert_eq!(one, two);
}

/// fio's own log (fio --write_iolog over the device) replayed by us.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root (loop devices)")]
#[cfg_attr(not(sb_fio), ignore = "needs fio (Debian package fio)")]
fn read_iolog_replays_fio_s_own_log() {
    let dir = tempfile::tempdir().unwrap();
    let file = data_file(dir.path(), "back", 16 << 20);
    let dev = Loop::attach(&file, &[]);
    let theirs = dir.path().join("fio.log");
    let ours = dir.path().join("ours.log");
    let out = Command::new(tool("fio"))
        .args([
            "--name=w",
            "--direct=1",
            "--rw=randrw",
            "--bs=4k",
            "--size=1m",
        ])
        .arg(format!("--filename={}", dev.dev))
        .arg(format!("--write_iolog={}", theirs.display()))
        .output()
        .unwrap();
    succeeded_as(&out, "fio --write_iolog");
    run(
        &dev.dev,
        &[
            "--iolog-read",
            theirs.to_str().unwrap(),
            "--iolog-write",
            ours.to_str().unwrap(),
        ],
    );
    let a = ios(&std::fs::read_to_string(&theirs).unwrap());
    assert_eq!(a.len(), 256);
    assert_eq!(a, ios(&std::fs::read_to_string(&ours).unwrap()));
}

/// A hostile log: each bad line refused by its number, exit 2, nothing run.
#[test]
fn read_iolog_refuses_a_bad_line_by_its_number() {
    let dir = tempfile::tempdir().unwrap();
    let target = data_file(dir.path(), "t", 1 << 20);
    let t = target.to_str().unwrap();
    for (body, says) in [
        (
            format!("1 {t} read 0 4096\n2 {t} read x 4096\n"),
            "line 3 has the offset \"x\"",
        ),
        (
            "1 /etc/passwd read 0 4096\n".to_string(),
            "is the I/O of /etc/passwd",
        ),
        (format!("1 {t} read 1048576 4096\n"), "reaches byte 1052672"),
        (format!("1 {t} trim 0 4096\n"), "line 2 asks trim"),
    ] {
        let log = dir.path().join("bad.log");
        std::fs::write(&log, format!("fio version 3 iolog\n{body}")).unwrap();
        let out = sb()
            .args(["run", "--no-progress", "--allow-holes", "--iolog-read"])
            .arg(&log)
            .arg(&target)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{body}: {err}");
        assert!(err.contains(says), "{body}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// `--iolog-write` is an output like any: checked before the run (a link
/// planted at its name, a device, stdout, a target, a missing directory
/// each refused in one line, exit 2, nothing written), and the file the
/// link pointed at is untouched. Seen failing: the log was written with
/// File::create, through the link, after the run.
#[test]
fn iolog_write_follows_no_link_and_writes_into_no_device() {
    let dir = tempfile::tempdir().unwrap();
    let f = crate::common::data_file(dir.path(), "f", 1 << 20);
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "secret").unwrap();
    let link = dir.path().join("link.log");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let f = f.to_str().unwrap();
    for (log, expect) in [
        (link.to_str().unwrap(), "a symbolic link"),
        ("/dev/null", "character device"),
        ("-", "--iolog-write -"),
        (f, "is a target"),
        ("/nonexistent-sb/x.log", "does not exist"),
    ] {
        crate::common::refused(
            &[
                "run",
                "--rw",
                "read",
                "--bs",
                "4k",
                "-t",
                "200ms",
                "--iolog-write",
                log,
                f,
            ],
            expect,
        );
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "secret");
    assert!(!std::path::Path::new("-").exists());
}
