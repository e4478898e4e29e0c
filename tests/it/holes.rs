//! A file's holes and unwritten extents read as zeros without any I/O to
//! a device: such a read is refused before the run, saying how much of the
//! region is empty and how to fill it, unless `--allow-holes` (a warning);
//! and after any O_DIRECT read, a device that delivered far less than the
//! application read is named, with the likely causes (issue 21, item 2).

use std::path::Path;
use std::process::Command;

use crate::common::{json, mount, sb, sh_required, LoopBed};

fn sparse(dir: &Path, name: &str, size: u64) -> String {
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().set_len(size).unwrap();
    p.to_str().unwrap().to_string()
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = sb().arg("run").args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

// Regression: `truncate -s 512M f.dat; run -t 1s --ramp 0 f.dat` printed
// 22777.2 MB/s with `vda read 0 B`, and no warning.
#[test]
fn a_sparse_file_is_refused_rather_than_read_as_disk_speed() {
    let dir = tempfile::tempdir().unwrap();
    let f = sparse(dir.path(), "f.dat", 64 << 20);
    let (code, _, err) = run(&["-t", "200ms", "--ramp", "0", &f]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("64.0 MiB of the 64.0 MiB region") && err.contains("(100.0%) are holes"),
        "{err}"
    );
    assert!(
        err.contains("stripebench run --rw write --passes 1") && err.contains("--allow-holes"),
        "says how to fill it, or how to read it anyway: {err}"
    );
    // The dry run lists it as a failed check, and exits 2.
    let (code, out, _) = run(&["--dry-run", &f]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("[REFUSED] holes"), "{out}");

    // Half written: the share is the other half; the written half reads.
    std::os::unix::fs::FileExt::write_all_at(
        &std::fs::OpenOptions::new().write(true).open(&f).unwrap(),
        &vec![0x5a; 32 << 20],
        0,
    )
    .unwrap();
    let (code, _, err) = run(&["-t", "200ms", "--ramp", "0", &f]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("32.0 MiB of the 64.0 MiB region") && err.contains("(50.0%)"),
        "{err}"
    );
    let (code, _, err) = run(&["-t", "200ms", "--ramp", "0", "--size", "32m", &f]);
    assert_eq!(code, Some(0), "the written half has no holes: {err}");
    // A write fills holes: it is never refused for them.
    let (code, _, err) = run(&["--rw", "write", "--passes", "1", "--allow-destructive", &f]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = run(&["-t", "200ms", "--ramp", "0", &f]);
    assert_eq!(code, Some(0), "written whole: {err}");
}

#[test]
fn a_fallocated_file_is_refused_for_its_unwritten_extents() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("g.dat");
    sh_required("fallocate", &["-l", "16M", f.to_str().unwrap()]);
    let (code, _, err) = run(&["-t", "200ms", "--ramp", "0", f.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("16.0 MiB of the 16.0 MiB region") && err.contains("unwritten extents"),
        "{err}"
    );
}

// With --allow-holes the sparse file is read, and two warnings say what the
// figures are: the holes named before the run, and the device's shortfall
// after it. On a file system of its own (ext4 on a loop device), the loop
// device's counters hold this run's reads alone.
#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_ext4)),
    ignore = "needs root and mkfs.ext4 (e2fsprogs)"
)]
fn allow_holes_reads_anyway_and_the_undelivered_direct_reads_are_named() {
    let bed = LoopBed::new(1, 64);
    let dev = bed.devices[0].clone();
    sh_required("mkfs.ext4", &["-q", "-F", "-E", "nodiscard", &dev]);
    let mnt = tempfile::tempdir().unwrap();
    let _m = mount(&[&dev], mnt.path());
    let f = sparse(mnt.path(), "f.dat", 32 << 20);
    let (code, out, err) = run(&[
        "-t",
        "300ms",
        "--ramp",
        "0",
        "--bs",
        "64k",
        "--allow-holes",
        "--json",
        "-",
        &f,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let doc = json(out.as_bytes());
    let warnings: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| crate::common::warning_text(w).unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("are holes") && w.contains("--allow-holes")),
        "{warnings:?}"
    );
    let d = &doc["targets"][0]["device"];
    assert_eq!(d["name"].as_str().unwrap(), dev.trim_start_matches("/dev/"));
    assert!(d["read_ratio"].as_f64().unwrap() < 0.5, "{d}");
    assert!(
        warnings.iter().any(|w| w.contains("O_DIRECT reads of")
            && w.contains("holes")
            && w.contains("in memory")
            && w.contains("cache")),
        "the shortfall is named with its likely causes: {warnings:?}"
    );
    // Same on the terminal table.
    assert!(err.contains("O_DIRECT reads of"), "{err}");
    let _ = Command::new("sync").status();
}
