//! `run --fio-job` with blocks of several sizes under verify: fio's
//! t/jobs/t0002-13af05ae-pre.fio then -post.fio (axboe/fio f5344384),
//! as run-fio-tests.py runs them (pre, then post; both must exit 0). The
//! write draws each block's size from bssplit=512/50:1M/50, and the read
//! replays the same seeded draws (fio's randrepeat), so each block is
//! checked at the size it was written. The job files are fio's, verbatim,
//! with only the 1G of each job shrunk (to keep the test short), on a
//! 5 GiB sparse file named as the job names it, in a temporary directory
//! (run-fio-tests.py's rule: on a file system that takes 512-byte direct
//! I/O). Not a loop device: the two jobs of a group run at once, and a
//! block device is opened exclusively by each run that writes it.

use std::path::Path;

use crate::common::{json, sb, u};

/// fio's t/jobs/t0002-13af05ae-pre.fio.
const PRE: &str = "[global]\nioengine=libaio\ndirect=1\nfilename=t0002file\niodepth=128\nsize=1G\nloops=1\ngroup_reporting=1\nreadwrite=write\ndo_verify=0\nverify=md5\nnumjobs=1\nthread\nbssplit=512/50:1M/50\n\n[thread0]\noffset=0G\n\n[thread-mix0]\noffset=4G\nreadwrite=rw\nsize=1G\nbsrange=512:1M\n";
/// fio's t/jobs/t0002-13af05ae-post.fio.
const POST: &str = "[global]\nioengine=libaio\ndirect=1\nfilename=t0002file\niodepth=128\nsize=1G\nloops=1\ngroup_reporting=1\nreadwrite=read\ndo_verify=1\nverify=md5\nverify_fatal=1\nnumjobs=1\nthread\nbssplit=512/50:1M/50\n\n[thread0]\noffset=0G\n\n[thread-mix0]\noffset=4G\nsize=1G\nreadwrite=rw\nbsrange=512:1M\n";

/// Runs `job` with its 1G shrunk to 64m, its `--json` documents in `dir`
/// named after `name`. The mixes read what is still a hole of the
/// file (fio reads it too).
fn run(dir: &Path, name: &str, job: &str, extra: &[&str]) -> std::process::Output {
    let file = dir.join(format!("{name}.fio"));
    let job = job.replace("size=1G", "size=64m");
    std::fs::write(&file, job).unwrap();
    sb().current_dir(dir)
        .args(["run", "--fio-job", file.to_str().unwrap(), "--no-progress"])
        .args(["--allow-destructive", "--allow-holes"])
        .args(["--json", &format!("{name}.json")])
        .args(extra)
        .output()
        .unwrap()
}

/// t0002file: 5 GiB, sparse (the mix is at 4 GiB).
fn scratch(dir: &Path) {
    let f = std::fs::File::create(dir.join("t0002file")).unwrap();
    f.set_len(5 << 30).unwrap();
}

fn doc(dir: &Path, name: &str) -> serde_json::Value {
    json(&std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// The bytes and I/Os a run moved (all of them), and a mix's writes.
fn moved(d: &serde_json::Value) -> (u64, u64) {
    (u(&d["total"]["bytes"]), u(&d["total"]["ios"]))
}

fn mix_writes(d: &serde_json::Value) -> (u64, u64) {
    let w = &d["total"]["by_direction"]["writes"];
    (u(&w["bytes"]), u(&w["ios"]))
}

/// Pre writes 64 MiB at 0 in blocks of 512 B and 1 MiB (and a mix at
/// 4 GiB); post reads them back at the sizes they were written and checks
/// every one, and checks the blocks its own mix wrote: both exit 0, and
/// the blocks and bytes checked are the blocks and bytes written.
#[test]
fn fio_s_t0002_blocks_written_at_several_sizes_are_each_checked_at_their_size() {
    let dir = tempfile::tempdir().unwrap();
    scratch(dir.path());
    let pre = run(dir.path(), "pre", PRE, &[]);
    let err = String::from_utf8_lossy(&pre.stderr);
    assert_eq!(pre.status.code(), Some(0), "{err}");
    let post = run(dir.path(), "post", POST, &[]);
    let out = String::from_utf8_lossy(&post.stdout);
    let err = String::from_utf8_lossy(&post.stderr);
    assert_eq!(post.status.code(), Some(0), "{out}{err}");
    // Pre's write: 64 MiB to the byte (the last size drawn fits before
    // the end, as fio redraws one that would not), both sizes among them.
    let (bytes, ios) = moved(&doc(dir.path(), "pre.1.json"));
    assert_eq!(bytes, 64 << 20);
    assert!(ios > 64 && ios < 64 * 2048, "{ios} writes");
    // Post's read checked each of them, whole, good.
    let read = doc(dir.path(), "post.1.json");
    assert_eq!(u(&read["total"]["bytes"]), 64 << 20, "{read}");
    let v = &read["targets"][0]["verify"];
    assert_eq!((u(&v["blocks"]), u(&v["good"])), (ios, ios), "{v}");
    // Post's mix, then its read-back of exactly the blocks it wrote.
    let (mix_bytes, mix_ios) = mix_writes(&doc(dir.path(), "post.2.json"));
    let back = doc(dir.path(), "post.3.json");
    assert_eq!(u(&back["total"]["bytes"]), mix_bytes, "{back}");
    let v = &back["targets"][0]["verify"];
    assert_eq!((u(&v["blocks"]), u(&v["good"])), (mix_ios, mix_ios), "{v}");
}

/// Pre's third write reaches the device with a byte flipped (the hidden
/// --debug-corrupt-write, as a device that corrupts data): post's read
/// of thread0 finds that block corrupt, names it, and exits 1; every
/// other block it checked is good.
#[test]
fn fio_s_t0002_a_block_corrupted_on_its_way_in_is_found_by_the_read_at_its_size() {
    let dir = tempfile::tempdir().unwrap();
    scratch(dir.path());
    let pre = run(dir.path(), "pre", PRE, &["--debug-corrupt-write", "3"]);
    let err = String::from_utf8_lossy(&pre.stderr);
    assert_eq!(pre.status.code(), Some(0), "{err}");
    let (_, ios) = moved(&doc(dir.path(), "pre.1.json"));
    let post = run(dir.path(), "post", POST, &[]);
    let out = String::from_utf8_lossy(&post.stdout);
    let err = String::from_utf8_lossy(&post.stderr);
    assert_eq!(post.status.code(), Some(1), "{out}{err}");
    let at = out
        .split("BAD corrupt block at offset ")
        .nth(1)
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no bad block named: {out}{err}"));
    // The third write: past the first two (each 512 B or 1 MiB).
    assert!((1024..=2 << 20).contains(&at), "{at}");
    let v = &doc(dir.path(), "post.1.json")["targets"][0]["verify"];
    assert_eq!(u(&v["corrupt"]), 1, "{v}");
    assert_eq!(u(&v["good"]) + 1, u(&v["blocks"]), "{v}");
    assert!(u(&v["blocks"]) <= ios, "{v}");
}
