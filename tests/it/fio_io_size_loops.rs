//! fio's io_size= with loops= from a job file (issue 41): once refused
//! ("fio's count of io_size= over loops= depends on the region"), now run
//! by fio's rule (`--io-limit` with `--passes`, measure::loops): io_size x
//! loops where the region holds io_size, whole passes where it does not.
//! The counts are what fio 3.42 did on the same jobs; fio is run beside us
//! where it is installed and agrees (fio 3.33 differs on a write of
//! io_size over size, which it stopped after one io_size). And fio's
//! examples/cross-stripe-verify.fio, shrunk onto a loop device: each job's
//! bytes as fio's, and its read-back passes.

use std::path::Path;

use serde_json::Value;

use crate::common::{data_file, json, sb, succeeded_as, u};

/// `job.fio` in `dir` over `f.dat` (made, 2 MiB), bs=4k and size=1m
/// (unless `extra` gives one), with `extra` lines.
fn job(dir: &Path, extra: &str) -> std::path::PathBuf {
    data_file(dir, "f.dat", 2 << 20);
    let p = dir.join("job.fio");
    let sized = extra.lines().any(|l| l.starts_with("size="));
    let size = if sized { "" } else { "size=1m\n" };
    let text = format!("[j]\nfilename=f.dat\n{size}bs=4k\n{extra}\n");
    std::fs::write(&p, text).unwrap();
    p
}

/// `run --fio-job FILE`'s fio JSON (its first run's) and its stderr.
fn ours(dir: &Path, file: &Path) -> (Value, String) {
    let out = sb()
        .current_dir(dir)
        .args(["run", "--fio-job"])
        .arg(file)
        .args([
            "--no-progress",
            "--allow-destructive",
            "--fio-json",
            "f.json",
        ])
        .output()
        .unwrap();
    succeeded_as(&out, file.display());
    let f = std::fs::read(dir.join("f.json")).or_else(|_| std::fs::read(dir.join("f.1.json")));
    (
        json(&f.unwrap()),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// (I/Os, bytes) of a fio JSON document's first job, reads and writes.
fn moved(f: &Value) -> (u64, u64) {
    let j = &f["jobs"][0];
    let n = |d: &str, k: &str| j[d][k].as_u64().unwrap_or_else(|| panic!("{d}.{k}: {j}"));
    (
        n("read", "total_ios") + n("write", "total_ios"),
        n("read", "io_bytes") + n("write", "io_bytes"),
    )
}

/// Jobs of io_size= with loops= and the I/Os fio 3.42 did (4 KiB each),
/// and whether fio 3.33 (the packaged one) did the same.
const LOOPED: &[(&str, u64, bool)] = &[
    // The region holds io_size: io_size x loops.
    ("rw=read\nio_size=512k\nloops=3", 384, true),
    // A read of io_size over size: whole passes, loops or up to io_size.
    ("rw=read\nio_size=3m\nloops=2", 768, true),
    ("rw=read\nio_size=1536k\nloops=2", 512, true),
    ("rw=read\nio_size=3m\nloops=4", 1024, true),
    // A write of io_size over size wraps round its region: x loops
    // (fio 3.33 stopped after one io_size: 768).
    ("rw=write\nio_size=3m\nloops=2", 1536, false),
    // Holes: a pass of [120k, 1144k) is 32 blocks (128k); passes until
    // io_size, three of them.
    ("rw=write:28k\noffset=120k\nio_size=300k\nloops=2", 96, true),
    // Holes over the whole file: the pass wraps (fio's next position,
    // counted from the region's start, is past the file's end): x loops.
    ("rw=write:28k\nsize=2m\nio_size=512k\nloops=2", 256, true),
    // A random write: no wrap, whole passes up to io_size.
    ("rw=randwrite\nio_size=3m\nloops=2", 768, true),
];

// Before: refused ("`loops=2` with io_size=...: fio's count of io_size=
// over loops= depends on the region ... give one of them").
#[test]
fn fio_job_io_size_with_loops_moves_what_fio_moves() {
    for (extra, ios, _) in LOOPED {
        let dir = tempfile::tempdir().unwrap();
        let (f, err) = ours(dir.path(), &job(dir.path(), extra));
        assert_eq!(moved(&f), (*ios, ios * 4096), "{extra}: {err}");
        assert!(err.contains("--passes="), "{extra}: {err}");
    }
}

#[test]
#[cfg_attr(not(sb_fio), ignore = "needs fio (Debian package fio)")]
fn fio_beside_us_on_io_size_with_loops_moves_the_same_ios_and_bytes() {
    for (extra, ..) in LOOPED.iter().filter(|c| c.2) {
        let dir = tempfile::tempdir().unwrap();
        let j = job(dir.path(), extra);
        let theirs = crate::common::fio_on(dir.path(), &j);
        let (f, _) = ours(dir.path(), &j);
        assert_eq!(moved(&f), moved(&theirs), "{extra}");
    }
}

/// examples/cross-stripe-verify.fio (axboe/fio) shrunk: bs=16k to 4k,
/// write:112k to write:28k, offset_increment=124g to 1m, io_size=120g to
/// 300k, numjobs=30 to 3, on a 4 MiB device. Job k's region runs from
/// 120k + k x 1m to the device's end (no size=): its pass is 125, 93 and
/// 61 blocks. fio 3.42 wrote 600k, 600k and 488k (the last job's region
/// holds less than io_size: two whole passes, its verify's reads making
/// up io_size), 422 writes in all. The read-back checks each job's
/// region once: 279 blocks, all good (the regions overlap, and a block
/// two jobs wrote holds the later write, a good block of this run).
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root for a loop device")]
fn fio_s_cross_stripe_verify_shrunk_writes_each_job_s_bytes_as_fio_and_reads_back_clean() {
    let dir = tempfile::tempdir().unwrap();
    let (_, lo) = crate::common::Loop::sparse(dir.path(), "img", 4 << 20);
    let file = dir.path().join("cross.fio");
    let text = format!(
        "[global]\nbs=4k\ndirect=1\nrw=write:28k\nverify=crc32c\nfilename={}\nverify_backlog=1\noffset_increment=1m\nio_size=300k\noffset=120k\ngroup_reporting\nverify_dump=1\nloops=2\n\n[write-verify]\nnumjobs=3\n",
        lo.dev
    );
    std::fs::write(&file, text).unwrap();
    let out = sb()
        .current_dir(dir.path())
        .args(["run", "--fio-job"])
        .arg(&file)
        .args(["--no-progress", "--allow-destructive", "--json", "r.json"])
        .output()
        .unwrap();
    succeeded_as(&out, "cross-stripe-verify, shrunk");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("# loops=2 with io_size=300k: "), "{err}");
    let doc = |n: &str| json(&std::fs::read(dir.path().join(n)).unwrap());
    let w = doc("r.1.json");
    let per: Vec<(u64, u64)> = w["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (u(&x["write_bytes"]) >> 10, u(&x["write_ios"])))
        .collect();
    assert_eq!(per, [(600, 150), (600, 150), (488, 122)], "{w}");
    assert_eq!(u(&w["total"]["ios"]), 422);
    let v = &doc("r.2.json")["targets"][0]["verify"];
    assert_eq!((u(&v["blocks"]), u(&v["good"])), (279, 279), "{v}");
}
