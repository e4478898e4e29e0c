//! fio's fill_device=1 on a regular file (issue 41): once refused ("is no
//! block device"), now fio's: the file written in order until its file
//! system says no space is left (ENOSPC), that write no error, the bytes
//! written the figure; then fio's examples/surface-scan.fio's second group
//! reads back every block written and checks the pattern. On a tmpfs of
//! 64 MiB mounted in a temporary directory (unmounted on every exit by
//! its guard), beside fio where it is installed.

use std::path::Path;

use serde_json::Value;

use crate::common::{json, sb, succeeded_as, u, warnings_of};

/// fio's examples/surface-scan.fio (axboe/fio) in `dir`, its data file
/// in `fs` (nothing else there: the file is to take all of it).
fn surface_scan(dir: &Path, fs: &Path) -> std::path::PathBuf {
    let data = fs.join("datafile.tmp");
    let job = format!(
        "; writes 512 byte verification blocks until the disk is full,\n; then verifies written data\n[global]\nthread\nbs=64k\ndirect=1\nioengine=sync\nverify=meta\nverify_pattern=0xaa555aa5\nverify_interval=512\n\n[write-phase]\nfilename={0}\t; or use a full disk, for example /dev/sda\nrw=write\nfill_device=1\ndo_verify=0\n\n[verify-phase]\nstonewall\ncreate_serialize=0\nfilename={0}\nrw=read\ndo_verify=1\n",
        data.display()
    );
    let p = dir.join("surface-scan.fio");
    std::fs::write(&p, job).unwrap();
    p
}

/// A tmpfs of 64 MiB at `dir/mnt`, unmounted when the guard drops.
fn small_fs(dir: &Path) -> (std::path::PathBuf, crate::common::Mounted) {
    let at = dir.join("mnt");
    std::fs::create_dir(&at).unwrap();
    let m = crate::common::mount(&["-t", "tmpfs", "-o", "size=64m", "tmpfs"], &at);
    (at, m)
}

fn doc(dir: &Path, name: &str) -> Value {
    json(&std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}")))
}

// Before: refused ("--fill-device writes a block device to its end, and
// .../datafile.tmp is no block device").
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root to mount a tmpfs")]
fn fio_s_surface_scan_fills_a_file_system_to_enospc_then_checks_every_block() {
    let dir = tempfile::tempdir().unwrap();
    let (fs, _m) = small_fs(dir.path());
    let job = surface_scan(dir.path(), &fs);
    let out = sb()
        .current_dir(dir.path())
        .args(["run", "--fio-job"])
        .arg(&job)
        .args(["--no-progress", "--json", "r.json"])
        .output()
        .unwrap();
    // The file was not there: made, ours, so no --allow-destructive.
    succeeded_as(&out, "surface-scan.fio on a 64 MiB tmpfs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("(empty, to fill: --fill-device)"), "{err}");
    let w = doc(dir.path(), "r.1.json");
    let worker = &w["workers"][0];
    // Every byte of the file system, in whole 64k writes, and no error:
    // the write that found it full ended the fill.
    assert_eq!(u(&worker["write_bytes"]), 64 << 20, "{worker}");
    assert_eq!(u(&worker["write_ios"]), 1024, "{worker}");
    assert_eq!(u(&worker["errors"]), 0, "{worker}");
    assert_eq!(worker["ended_by"], "limit", "{worker}");
    let fill = warnings_of(&w, "fills_file_system");
    assert_eq!(fill.len(), 1, "{w}");
    assert_eq!(u(&fill[0]["free"]), 64 << 20, "{}", fill[0]);
    assert_eq!(
        std::fs::metadata(fs.join("datafile.tmp")).unwrap().len(),
        64 << 20
    );
    // The verify phase read all that was written and checked each block.
    let r = doc(dir.path(), "r.2.json");
    assert_eq!(u(&r["total"]["bytes"]), 64 << 20, "{r}");
    let v = &r["targets"][0]["verify"];
    assert_eq!((u(&v["blocks"]), u(&v["good"])), (1024, 1024), "{v}");
}

// The dry run says how much the fill would write (statvfs's free space),
// and writes nothing; a file stripebench did not make needs consent.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root to mount a tmpfs")]
fn a_dry_fill_of_a_file_says_the_free_space_and_a_file_not_ours_needs_consent() {
    let dir = tempfile::tempdir().unwrap();
    let (fs, _m) = small_fs(dir.path());
    let t = fs.join("there.dat");
    std::fs::write(&t, vec![7u8; 1 << 20]).unwrap();
    let run = |extra: &[&str]| {
        sb().args([
            "run",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--fill-device",
            "--no-progress",
        ])
        .args(extra)
        .arg(&t)
        .output()
        .unwrap()
    };
    let out = run(&["--dry-run", "--allow-destructive"]);
    succeeded_as(&out, "a dry fill");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("63.0 MiB free now (and the file's own 1.0 MiB past --offset, written over)"),
        "{text}"
    );
    assert_eq!(std::fs::metadata(&t).unwrap().len(), 1 << 20);
    let out = run(&[]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-destructive"));
    assert_eq!(std::fs::metadata(&t).unwrap().len(), 1 << 20);
}

#[test]
#[cfg_attr(not(all(sb_root, sb_fio)), ignore = "needs root and fio")]
fn fio_beside_us_on_surface_scan_writes_and_checks_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (fs, _m) = small_fs(dir.path());
    let theirs = crate::common::fio_on(dir.path(), &surface_scan(dir.path(), &fs));
    std::fs::remove_file(fs.join("datafile.tmp")).unwrap();
    let out = sb()
        .current_dir(dir.path())
        .args(["run", "--fio-job"])
        .arg(surface_scan(dir.path(), &fs))
        .args(["--no-progress", "--fio-json", "f.json"])
        .output()
        .unwrap();
    succeeded_as(&out, "surface-scan.fio");
    let n = |f: &Value, job: usize, d: &str, k: &str| u(&f["jobs"][job][d][k]);
    let (w, r) = (doc(dir.path(), "f.1.json"), doc(dir.path(), "f.2.json"));
    assert_eq!(
        n(&w, 0, "write", "io_bytes"),
        n(&theirs, 0, "write", "io_bytes")
    );
    // fio counts the write that found the file system full among its I/Os.
    assert_eq!(
        n(&w, 0, "write", "total_ios") + 1,
        n(&theirs, 0, "write", "total_ios")
    );
    assert_eq!(
        n(&r, 0, "read", "io_bytes"),
        n(&theirs, 1, "read", "io_bytes")
    );
    assert_eq!(
        n(&r, 0, "read", "total_ios"),
        n(&theirs, 1, "read", "total_ios")
    );
}

/// Filling the file system that holds / makes every other program's
/// writes fail until the file is removed: a fill there, even of a new
/// file of ours, needs --allow-destructive (checked in a dry run too).
#[test]
fn a_fill_of_the_file_system_that_holds_root_needs_consent() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root_dev = std::fs::metadata("/").unwrap().dev();
    if std::fs::metadata(dir.path()).unwrap().dev() != root_dev {
        eprintln!(
            "skipped: {} is not on the file system that holds /",
            dir.path().display()
        );
        return;
    }
    let t = dir.path().join("fill.dat");
    std::fs::write(&t, vec![7u8; 1 << 20]).unwrap();
    let run = |extra: &[&str]| {
        sb().args([
            "run",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--fill-device",
            "--dry-run",
            "--no-progress",
        ])
        .args(extra)
        .arg(&t)
        .output()
        .unwrap()
    };
    let out = run(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("would fill the file system that holds /"),
        "{err}"
    );
    succeeded_as(&run(&["--allow-destructive"]), "a dry fill with consent");
    assert_eq!(std::fs::metadata(&t).unwrap().len(), 1 << 20);
}
