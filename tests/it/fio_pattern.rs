//! fio's data patterns (buffer_pattern, verify_pattern, verify=pattern)
//! run from job files: the bytes written are fio's, byte for byte, and a
//! read that checks the pattern finds a block that does not hold it. fio's
//! own check of its t0027 (t/run-fio-tests.py: the file written equals the
//! pattern file) is made on our run. Every file is in a temporary
//! directory, removed on every exit.

use std::path::Path;

use crate::common::{sb, succeeded_as};

/// `run --fio-job NAME` in `dir` on the job text `job` (written there),
/// with `extra` options.
fn run_job(dir: &Path, name: &str, job: &str, extra: &[&str]) -> std::process::Output {
    std::fs::write(dir.join(name), job).unwrap();
    sb().current_dir(dir)
        .args(["run", "--fio-job", name, "--no-progress"])
        .args(extra)
        .output()
        .unwrap()
}

/// What a run printed: its report (stdout) and its stderr.
fn said(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// fio's t/jobs/t0027.fio, as fio ships it.
const T0027: &str = "[global]\nfilename=t0027file\nsize=16k\nbs=16k\n\n[write_job]\nreadwrite=write\nbuffer_pattern='t0027.pattern'\n\n[read_job]\nstonewall=1\nreadwrite=read\nverify=pattern\nverify_pattern='t0027.pattern'\n";

/// fio's t0027 was refused (`buffer_pattern='t0027.pattern'`); now its
/// write leaves the file equal to the pattern file (fio's check), and its
/// read job, verify=pattern, passes on it and fails on a changed byte.
#[test]
fn fio_s_t0027_buffer_pattern_file_is_written_byte_for_byte_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    // As fio's test: 16 KiB of random bytes.
    let pattern: Vec<u8> = (0..16u32 << 10)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(dir.path().join("t0027.pattern"), &pattern).unwrap();
    // fio lays the missing file out; stripebench writes only a file that is
    // there (or one of its --create), so it is made here, zeros.
    std::fs::File::create(dir.path().join("t0027file"))
        .unwrap()
        .set_len(16 << 10)
        .unwrap();
    let o = run_job(dir.path(), "t0027.fio", T0027, &["--allow-destructive"]);
    succeeded_as(&o, "fio's t0027");
    let written = std::fs::read(dir.path().join("t0027file")).unwrap();
    assert!(
        written == pattern,
        "fio's check: t0027file equals t0027.pattern"
    );
    let err = said(&o);
    assert!(
        err.contains("verify t0027file: 1 blocks checked: 1 good, 0 corrupt"),
        "{err}"
    );

    // The read job alone on a file with one byte changed: found, exit 1.
    let mut bad = written;
    bad[5000] ^= 0xff;
    std::fs::write(dir.path().join("t0027file"), &bad).unwrap();
    let read = "[r]\nfilename=t0027file\nsize=16k\nbs=16k\nreadwrite=read\nverify=pattern\nverify_pattern='t0027.pattern'\n";
    let o = run_job(dir.path(), "read.fio", read, &[]);
    assert_eq!(o.status.code(), Some(1), "a changed byte fails the check");
    let err = said(&o);
    assert!(
        err.contains("corrupt block at offset 0: does not hold the pattern 't0027.pattern': first differs at byte 5000"),
        "{err}"
    );
}

/// A pattern fio takes and stripebench cannot (or that fio refuses too)
/// is refused in one line naming it, exit 2, nothing written.
#[test]
fn patterns_that_cannot_be_honoured_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    for (job, said) in [
        (
            "[j]\nfilename=f\nsize=16k\nrw=write\nbuffer_pattern=%o\n",
            "`buffer_pattern=%o` is not a pattern fio takes",
        ),
        (
            "[j]\nfilename=f\nsize=16k\nrw=write\nverify_pattern='missing.pattern'\n",
            "cannot read the pattern file 'missing.pattern'",
        ),
        (
            "[j]\nfilename=f\nsize=16k\nrw=write\nverify=pattern\n",
            "add verify_pattern=",
        ),
    ] {
        let o = run_job(dir.path(), "j.fio", job, &["--dry-run"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{job}: {err}");
        assert!(err.contains(said), "{job}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    // A pattern file that is no regular file (endless /dev/zero) is
    // refused before it is read.
    let o = sb()
        .current_dir(dir.path())
        .args(["run", "--pattern", "'/dev/zero'", "--dry-run", "f"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not a regular file"), "{err}");
}

/// verify_pattern with %o (the block's offset) and every kind of piece
/// writes, under stripebench, the bytes fio writes (fio run beside us).
#[test]
#[cfg_attr(not(sb_fio), ignore = "needs fio (Debian package fio)")]
fn verify_pattern_with_offset_writes_the_bytes_fio_writes() {
    let dir = tempfile::tempdir().unwrap();
    let job = |file: &str| {
        format!("[w]\nfilename={file}\nrw=write\nbs=4k\nsize=64k\nverify=pattern\nverify_pattern=-100xab\"1\"%o\"2\"0xaaa\ndo_verify=0\n")
    };
    for f in ["ours", "fios"] {
        std::fs::File::create(dir.path().join(f))
            .unwrap()
            .set_len(64 << 10)
            .unwrap();
    }
    std::fs::write(dir.path().join("fio.fio"), job("fios")).unwrap();
    crate::common::fio_on(dir.path(), Path::new("fio.fio"));
    let o = run_job(
        dir.path(),
        "ours.fio",
        &job("ours"),
        &["--allow-destructive"],
    );
    succeeded_as(&o, "the %o pattern's write");
    let ours = std::fs::read(dir.path().join("ours")).unwrap();
    let fios = std::fs::read(dir.path().join("fios")).unwrap();
    assert!(ours == fios, "stripebench wrote other bytes than fio");
    // The offset of the block at 8 KiB is in it, little-endian.
    assert_eq!(&ours[8192 + 6..8192 + 14], &8192u64.to_le_bytes());
}

/// fio's examples/surface-scan.fio (fill_device=1, verify=meta with
/// verify_pattern, create_serialize=0) was refused; on a block device it
/// now writes the pattern to the device's end and its verify phase checks
/// every block of it. (On a file, which fio grows until ENOSPC, so does
/// stripebench: tests/it/fio_fill.rs.)
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root for a loop device")]
fn fio_s_surface_scan_fills_a_device_with_its_pattern_and_checks_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_, lo) = crate::common::Loop::sparse(dir.path(), "scan.img", 8 << 20);
    let job = "; writes 512 byte verification blocks until the disk is full,\n; then verifies written data\n[global]\nthread\nbs=64k\ndirect=1\nioengine=sync\nverify=meta\nverify_pattern=0xaa555aa5\nverify_interval=512\n\n[write-phase]\nfilename=datafile.tmp\t; or use a full disk, for example /dev/sda\nrw=write\nfill_device=1\ndo_verify=0\n\n[verify-phase]\nstonewall\ncreate_serialize=0\nfilename=datafile.tmp\nrw=read\ndo_verify=1\n";
    std::fs::write(dir.path().join("surface-scan.fio"), job).unwrap();
    let run = |target: &str| {
        sb().current_dir(dir.path())
            .args(["run", "--fio-job", "surface-scan.fio", "--no-progress"])
            .args([target, "--allow-destructive"])
            .output()
            .unwrap()
    };
    let o = run(&lo.dev);
    succeeded_as(&o, "surface-scan on a loop device");
    let err = said(&o);
    assert!(err.contains("--fill-device"), "{err}");
    assert!(err.contains("# create_serialize=0:"), "{err}");
    assert!(
        err.contains("128 blocks checked: 128 good, 0 corrupt"),
        "the verify phase checks every 64k block of the 8 MiB: {err}"
    );
    let bytes = std::fs::read(&lo.dev).unwrap();
    assert_eq!(bytes.len(), 8 << 20);
    assert!(
        bytes.chunks(4).all(|c| c == [0xaa, 0x55, 0x5a, 0xa5]),
        "the device holds the pattern to its end"
    );
    // On a file it fills the file system: tests/it/fio_fill.rs, on a tmpfs.
}

/// `run --fill-device` typed on the command line writes each device once
/// to its end, as the job file's fill_device=1 does. It ran a 10 s write
/// round and round the device (42.5 GiB over 64 MiB), and on no target
/// wrote the test bed's files.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root for a loop device")]
fn fill_device_on_the_command_line_writes_the_device_once_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let (_, lo) = crate::common::Loop::sparse(dir.path(), "fill.img", 8 << 20);
    let json = dir.path().join("r.json");
    let o = sb()
        .args([
            "run",
            "--fill-device",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--no-progress",
        ])
        .args([lo.dev.as_str(), "--allow-destructive", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    succeeded_as(&o, "--fill-device");
    let d = crate::common::json(&std::fs::read(&json).unwrap());
    assert_eq!(
        d["total"]["bytes"].as_u64(),
        Some(8 << 20),
        "{}",
        d["total"]
    );
    assert_eq!(d["config"]["passes"].as_u64(), Some(1));
    // No device named: the test bed is files, which it does not fill.
    let o = sb()
        .args([
            "run",
            "--fill-device",
            "--rw",
            "write",
            "--allow-destructive",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", said(&o));
    assert!(said(&o).contains("none is named"), "{}", said(&o));
}
