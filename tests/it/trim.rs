//! Trims (`--rw trim`/`randtrim`, fio's rw=trim/randtrim): on a file a
//! trim punches a hole (the range reads as zeros, the file's blocks drop),
//! on a block device it is a BLKDISCARD (a loop device passes it to its
//! file as a punched hole); the figures are the trims' (`trim_bytes`,
//! `trim_ios`, fio's `trim` section), and the write guard holds for them
//! as for writes. Every file is in a temporary directory; each loop device
//! is detached on drop.

use std::path::Path;

use crate::common::{self, data_file, json, sb, u};

/// The 512-byte blocks a file holds (`stat -c %b`).
fn blocks(p: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).unwrap().blocks()
}

/// A run of `rw` over the first `ios` blocks of 64 KiB of `target`, its
/// document and fio's JSON.
fn trim_run(
    dir: &Path,
    target: &Path,
    rw: &str,
    engine: &[&str],
    ios: u64,
) -> (serde_json::Value, serde_json::Value) {
    let fio = dir.join("fio.json");
    let out = sb()
        .arg("run")
        .args(["--rw", rw, "--bs", "64k", "--ios", &ios.to_string()])
        .args(engine)
        .args(["--no-progress", "--allow-destructive", "--json", "-"])
        .arg("--fio-json")
        .arg(&fio)
        .arg(target)
        .output()
        .unwrap();
    common::succeeded_as(&out, "a trim run");
    let table = String::from_utf8_lossy(&out.stderr);
    assert!(
        table.contains(&format!(
            "trimmed {} in the window",
            if ios == 16 { "1.0 MiB" } else { "16.0 MiB" }
        )),
        "{table}"
    );
    assert!(
        !table.contains("buffered writes"),
        "a trim flushes no page cache: {table}"
    );
    (json(&out.stdout), json(&std::fs::read(&fio).unwrap()))
}

#[test]
fn trim_on_a_file_punches_its_range_to_zeros_and_drops_its_blocks() {
    let d = tempfile::tempdir().unwrap();
    let t = data_file(d.path(), "t.dat", 4 << 20);
    std::fs::File::open(&t).unwrap().sync_all().unwrap();
    let before = blocks(&t);
    // Sequential: the first 16 blocks of 64 KiB, the first MiB.
    let (doc, fio) = trim_run(d.path(), &t, "trim", &["--engine", "sync"], 16);
    let w = &doc["workers"][0];
    assert_eq!(doc["config"]["rw"], "trim");
    assert_eq!((u(&w["trim_ios"]), u(&w["trim_bytes"])), (16, 1 << 20));
    assert_eq!((u(&w["ios"]), u(&w["bytes"])), (16, 1 << 20));
    assert_eq!((u(&w["write_ios"]), u(&w["read_ios"])), (0, 0));
    assert!(w["iops"].as_f64().unwrap() > 0.0, "{w}");
    let data = std::fs::read(&t).unwrap();
    assert_eq!(data.len(), 4 << 20, "a trim keeps the file's size");
    assert!(
        data[..1 << 20].iter().all(|&b| b == 0),
        "the trimmed MiB reads as zeros"
    );
    assert!(
        data[1 << 20..].iter().all(|&b| b != 0),
        "the rest is untouched"
    );
    let after = blocks(&t);
    assert!(
        after + 2048 <= before,
        "the file's blocks drop by the MiB: {before} then {after}"
    );
    // fio's JSON: the job's I/O is in its trim direction.
    let j = &fio["jobs"][0];
    assert_eq!(u(&j["trim"]["total_ios"]), 16);
    assert_eq!(u(&j["trim"]["io_bytes"]), 1 << 20);
    assert_eq!(u(&j["write"]["total_ios"]), 0);
    assert!(j["trim"]["lat_ns"]["mean"].as_f64().unwrap() > 0.0);
}

#[test]
fn trim_is_destructive_and_needs_allow_destructive_on_a_file_it_did_not_make() {
    let d = tempfile::tempdir().unwrap();
    let t = data_file(d.path(), "t.dat", 1 << 20);
    let out = sb()
        .args(["run", "--rw", "randtrim", "--ios", "4", "--no-progress"])
        .arg(&t)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--allow-destructive"), "{err}");
    assert!(std::fs::read(&t).unwrap().iter().all(|&b| b != 0));
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: attaches a loop device")]
fn trim_on_a_loop_device_discards_through_io_uring() {
    let d = tempfile::tempdir().unwrap();
    let (img, lo) = common::Loop::sparse(d.path(), "img", 16 << 20);
    // Fill it, so that its file holds every block.
    std::fs::write(&lo.dev, vec![0x5au8; 16 << 20]).unwrap();
    std::fs::File::open(&img).unwrap().sync_all().unwrap();
    let before = blocks(&img);
    assert!(before >= 32768, "{before}");
    let (doc, fio) = trim_run(
        d.path(),
        Path::new(&lo.dev),
        "trim",
        &["--engine", "uring", "--iodepth", "4"],
        256,
    );
    let w = &doc["workers"][0];
    assert_eq!(doc["config"]["rw"], "trim");
    assert_eq!((u(&w["trim_ios"]), u(&w["trim_bytes"])), (256, 16 << 20));
    assert_eq!(u(&w["errors"]), 0);
    assert_eq!(u(&fio["jobs"][0]["trim"]["total_ios"]), 256);
    // The loop device hands each discard to its file as a punched hole.
    let after = blocks(&img);
    assert!(
        after < before / 2,
        "its file's blocks drop: {before} then {after}"
    );
    let back = std::fs::read(&lo.dev).unwrap();
    assert!(
        back.iter().all(|&b| b == 0),
        "a discarded loop block reads as zeros"
    );
}
