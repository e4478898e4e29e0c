//! `run --fio-job` with fio's verify options: a write with do_verify=1
//! (fio's default) is the write and then its read-back, a second run
//! that checks every block; a read with verify= checks what it reads, and
//! a corrupted block makes it exit 1 naming the block. fio's own t/jobs
//! (t0025, t0036, at axboe/fio f5344384) are run with what fio's
//! t/run-fio-tests.py requires of them. Every file is in a temporary
//! directory; the loop device is detached on every exit.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use crate::common::{json, sb, u};

/// Runs `job` (a job file's text) with `extra` options after it; the
/// output and the `--json` documents of its runs (`r.json`, or
/// `r.1.json`, `r.2.json`, ... for several).
fn run_job(dir: &Path, job: &str, extra: &[&str]) -> std::process::Output {
    let file = dir.join("job.fio");
    std::fs::write(&file, job).unwrap();
    sb().current_dir(dir)
        .args(["run", "--fio-job", file.to_str().unwrap(), "--no-progress"])
        .args(["--allow-destructive", "--json", "r.json"])
        .args(extra)
        .output()
        .unwrap()
}

fn doc(dir: &Path, name: &str) -> serde_json::Value {
    json(&std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// fio's t/jobs/t0025.fio: a buffered write of 128 KiB with verify=md5
/// and do_verify=1 (fio's default), which fio reads back in the same job.
/// run-fio-tests.py requires read io_kbytes == 128: the read-back run
/// reads those 128 KiB, and every block is good.
#[test]
fn fio_s_t0025_write_is_read_back_and_checked_as_a_second_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t0025file"), vec![0u8; 1 << 20]).unwrap();
    let out = run_job(
        dir.path(),
        "[job]\nfilename=t0025file\nsize=128k\nreadwrite=write\ndo_verify=1\nverify=md5\nexperimental_verify=1\n",
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("run 2 of 2 ([job]), its read-back"), "{err}");
    assert!(err.contains("# experimental_verify=1: "), "{err}");
    let w = doc(dir.path(), "r.1.json");
    let r = doc(dir.path(), "r.2.json");
    assert_eq!(w["config"]["rw"], "write", "{w}");
    assert_eq!(r["config"]["rw"], "read", "{r}");
    assert_eq!(u(&w["total"]["bytes"]), 128 << 10);
    // t0025: read io_kbytes == 128.
    assert_eq!(u(&r["total"]["bytes"]), 128 << 10);
    let v = &r["targets"][0]["verify"];
    assert_eq!((u(&v["blocks"]), u(&v["good"])), (32, 32), "{v}");
}

/// fio's t0036-pre.fio then t0036-post.fio (verify_state_save on the
/// write, verify_state_load on the read): run-fio-tests.py requires both
/// to succeed; the read checks the 128 blocks the write wrote.
#[test]
fn fio_s_t0036_pre_and_post_write_then_check_without_a_state_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t0036file"), vec![0u8; 1 << 20]).unwrap();
    let global = "[global]\nfilename=t0036file\nverify=md5\nsize=512k\n";
    let pre = run_job(
        dir.path(),
        &format!("{global}[job]\nreadwrite=write\nverify_state_save=1\n"),
        &[],
    );
    assert_eq!(
        pre.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&pre.stderr)
    );
    let post = run_job(
        dir.path(),
        &format!("{global}[job]\nreadwrite=read\nverify_state_load=1\n"),
        &[],
    );
    let err = String::from_utf8_lossy(&post.stderr);
    assert_eq!(post.status.code(), Some(0), "{err}");
    assert!(err.contains("# verify_state_load=1: "), "{err}");
    let v = &doc(dir.path(), "r.json")["targets"][0]["verify"];
    assert_eq!((u(&v["blocks"]), u(&v["good"])), (128, 128), "{v}");
    assert!(!dir.path().read_dir().unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains("verify.state")));
}

/// On a loop device: a write job with do_verify=1 passes its read-back;
/// then one block is corrupted behind stripebench's back, and the read
/// job with verify= finds it: exit 1, the block named by its offset.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root for a loop device")]
fn a_block_corrupted_after_a_verified_fio_write_is_found_by_the_verifying_read() {
    let dir = tempfile::tempdir().unwrap();
    let (img, lo) = crate::common::Loop::sparse(dir.path(), "img", 8 << 20);
    let global = format!(
        "[global]\nfilename={}\nbs=64k\ndirect=1\nsize=4m\nverify=crc32c\nverify_fatal=1\n",
        lo.dev
    );
    let write = run_job(dir.path(), &format!("{global}[w]\nrw=write\n"), &[]);
    let err = String::from_utf8_lossy(&write.stderr);
    assert_eq!(write.status.code(), Some(0), "{err}");
    let v = &doc(dir.path(), "r.2.json")["targets"][0]["verify"];
    assert_eq!((u(&v["blocks"]), u(&v["good"])), (64, 64), "{v}");
    // Block 5, 100 bytes in: past its header, inside its checksum.
    let mut dev = std::fs::OpenOptions::new().write(true).open(&img).unwrap();
    dev.seek(SeekFrom::Start(5 * 65536 + 100)).unwrap();
    dev.write_all(b"not what was written").unwrap();
    dev.sync_all().unwrap();
    drop(dev);
    // The loop device reads its file with O_DIRECT: no stale page cache.
    let read = run_job(dir.path(), &format!("{global}[r]\nrw=read\n"), &[]);
    let out = String::from_utf8_lossy(&read.stdout);
    let err = String::from_utf8_lossy(&read.stderr);
    assert_eq!(read.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("BAD corrupt block at offset 327680"),
        "{out}{err}"
    );
    let v = &doc(dir.path(), "r.json")["targets"][0]["verify"];
    assert_eq!((u(&v["corrupt"]), u(&v["good"])), (1, 63), "{v}");
}

/// fio's examples/basic-verify.fio on a loop device (its filename, and
/// bs=64k to keep it short): rw=randwrite with verify=crc32c and no
/// size=, the whole device once in a random order. Every block must be
/// written once (fio's random map): a block the write skipped would be
/// read back as lost. The write moves the device's bytes exactly once.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root for a loop device")]
fn fio_s_basic_verify_random_write_covers_every_block_and_its_read_back_passes() {
    let dir = tempfile::tempdir().unwrap();
    let (_, lo) = crate::common::Loop::sparse(dir.path(), "img", 4 << 20);
    let job = format!(
        "[write-and-verify]\nrw=randwrite\nbs=64k\ndirect=1\nioengine=libaio\niodepth=16\nverify=crc32c\nfilename={}\n",
        lo.dev
    );
    let out = run_job(dir.path(), &job, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("# rw=randwrite with verify=: every block is written once a pass"),
        "{err}"
    );
    let w = doc(dir.path(), "r.1.json");
    assert_eq!(w["config"]["rw"], "randwrite", "{w}");
    assert_eq!(u(&w["total"]["bytes"]), 4 << 20);
    let v = &doc(dir.path(), "r.2.json")["targets"][0]["verify"];
    assert_eq!((u(&v["blocks"]), u(&v["good"])), (64, 64), "{v}");
}

/// On a loop device: a random verified write (fio's t0026 first job's
/// shape, loops=3, do_verify=0), then one block corrupted and one zeroed
/// behind stripebench's back; the verifying read finds both: exit 1, the
/// corrupt block by its offset, the zeroed one as a lost write (which it
/// may say only because the random write wrote every block).
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root for a loop device")]
fn a_block_damaged_after_a_random_verified_write_is_found_by_the_read() {
    let dir = tempfile::tempdir().unwrap();
    let (img, lo) = crate::common::Loop::sparse(dir.path(), "img", 8 << 20);
    let global = format!(
        "[global]\nfilename={}\nbs=64k\ndirect=1\nsize=4m\nverify=md5\nexperimental_verify=1\n",
        lo.dev
    );
    let write = run_job(
        dir.path(),
        &format!("{global}[w]\nrw=randwrite\nloops=3\ndo_verify=0\n"),
        &[],
    );
    let err = String::from_utf8_lossy(&write.stderr);
    assert_eq!(write.status.code(), Some(0), "{err}");
    assert_eq!(u(&doc(dir.path(), "r.json")["total"]["bytes"]), 12 << 20);
    let mut dev = std::fs::OpenOptions::new().write(true).open(&img).unwrap();
    dev.seek(SeekFrom::Start(5 * 65536 + 100)).unwrap();
    dev.write_all(b"not what was written").unwrap();
    dev.seek(SeekFrom::Start(9 * 65536)).unwrap();
    dev.write_all(&[0u8; 65536]).unwrap();
    dev.sync_all().unwrap();
    drop(dev);
    let read = run_job(dir.path(), &format!("{global}[r]\nrw=read\n"), &[]);
    let out = String::from_utf8_lossy(&read.stdout);
    let err = String::from_utf8_lossy(&read.stderr);
    assert_eq!(read.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("BAD corrupt block at offset 327680"),
        "{out}{err}"
    );
    assert!(
        out.contains("BAD lost block at offset 589824"),
        "{out}{err}"
    );
    let v = &doc(dir.path(), "r.json")["targets"][0]["verify"];
    assert_eq!(
        (u(&v["corrupt"]), u(&v["lost"]), u(&v["good"])),
        (1, 1, 62),
        "{v}"
    );
}

/// fio's t/jobs/t0026.fio, verbatim, as run-fio-tests.py runs it (it
/// requires exit 0): job1 a randwrite loops=8 read back; job2 a randrw
/// over the same 1 MiB, time_based runtime=5 with verify=md5 and
/// do_verify=1, once refused. fio mixes size= bytes (every block once,
/// read or written), reads back and checks the blocks that pass wrote,
/// and again until the runtime; so here, within the run. Every block read
/// back is good, and each is a block the mix wrote: the read-backs' bytes
/// are within what it wrote (a pass the deadline cut is not read back)
/// and within what it read.
#[test]
fn fio_s_t0026_time_bound_verified_random_mix_reads_back_each_pass_s_writes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t0026file"), vec![0u8; 1 << 20]).unwrap();
    let job = "[job1]\nfilename=t0026file\nsize=1M\nreadwrite=randwrite\nloops=8\ndo_verify=1\nverify=md5\nexperimental_verify=1\n\n[job2]\nstonewall=1\nfilename=t0026file\nsize=1M\nreadwrite=randrw\ntime_based\nruntime=5\ndo_verify=1\nverify=md5\nexperimental_verify=1\n";
    let out = run_job(dir.path(), job, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("# do_verify=1 with rw=randrw: "), "{err}");
    // job1: 8 passes written, the 1 MiB read back.
    assert_eq!(u(&doc(dir.path(), "r.1.json")["total"]["bytes"]), 8 << 20);
    let v = &doc(dir.path(), "r.2.json")["targets"][0]["verify"];
    assert_eq!((u(&v["blocks"]), u(&v["good"])), (256, 256), "{v}");
    // job2: the mix and its read-backs, one run.
    let mix = doc(dir.path(), "r.3.json");
    assert_eq!(mix["config"]["rw"], "randrw", "{mix}");
    let v = &mix["targets"][0]["verify"];
    let checked = u(&v["blocks"]);
    assert!(checked > 0, "{v}");
    assert_eq!(u(&v["good"]), checked, "{v}");
    assert_eq!(v["bad_blocks"].as_array().map(Vec::len), Some(0), "{v}");
    let dirs = &mix["total"]["by_direction"];
    let (reads, writes) = (u(&dirs["reads"]["bytes"]), u(&dirs["writes"]["bytes"]));
    assert!(
        checked * 4096 <= writes,
        "{checked} blocks, {writes} B written"
    );
    assert!(checked * 4096 <= reads, "{checked} blocks, {reads} B read");
}

/// A verified random mix (fio's randrw, loops=1) whose third write
/// reaches the file with a byte flipped (the hidden --debug-corrupt-write,
/// as a device that corrupts data): the pass's read-back finds that block
/// corrupt: exit 1, the block named, every other block it wrote good. Its
/// read figure is fio's: the mix's reads and the read-back's, together
/// the 1 MiB the pass moved (its writes read back once each).
#[test]
fn a_write_corrupted_on_its_way_in_a_verified_random_mix_is_found_by_its_read_back() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), vec![0u8; 1 << 20]).unwrap();
    let job = "[mix]\nfilename=f\nsize=1M\nreadwrite=randrw\nverify=crc32c\n";
    let out = run_job(dir.path(), job, &["--debug-corrupt-write", "3"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}{err}");
    assert!(text.contains("BAD corrupt block at offset "), "{text}{err}");
    let d = doc(dir.path(), "r.json");
    let v = &d["targets"][0]["verify"];
    let dirs = &d["total"]["by_direction"];
    let writes = u(&dirs["writes"]["bytes"]);
    assert_eq!(u(&v["blocks"]) * 4096, writes, "{v}");
    assert_eq!(
        (u(&v["corrupt"]), u(&v["good"]) + 1),
        (1, writes / 4096),
        "{v}"
    );
    assert_eq!(u(&dirs["reads"]["bytes"]), 1 << 20, "{d}");
}

/// fio's t/jobs/t0008-ae2fafc8.fio, verbatim (a 50/50 sequential mix
/// over 32 MiB with verify=crc32c, do_verify=1, verify_backlog=1), once
/// refused. run-fio-tests.py requires write io_kbytes within 3% of 16384
/// and read io_kbytes == 32768: the mix's reads plus the verify's, which
/// read back exactly what the mix wrote. Here those are the mix run's
/// reads plus its read-back run's, and every block the mix wrote is
/// checked good. The file holds data, not zeros, so the mix's reads of
/// blocks it has not written are not taken for unwritten media.
#[test]
fn fio_s_t0008_sequential_verified_mix_reads_back_exactly_what_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t0008file");
    std::fs::write(&file, vec![0xa5u8; 32 << 20]).unwrap();
    let job = "# Expected result: fio writes 16MB, reads 16+16MB\n# Buggy result: fio writes 16MB, reads ~21MB\n[global]\nbs=4k\nverify=crc32c\nrw=readwrite\ndirect=1\n\n[foo]\nsize=32m\ndo_verify=1\nverify_backlog=1\n";
    let out = run_job(dir.path(), job, &[file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("# do_verify=1 with rw=readwrite: "), "{err}");
    assert!(err.contains("run 2 of 2 ([foo]), its read-back"), "{err}");
    let mix = doc(dir.path(), "r.1.json");
    let back = doc(dir.path(), "r.2.json");
    let dirs = &mix["total"]["by_direction"];
    let (mix_reads, writes) = (u(&dirs["reads"]["bytes"]), u(&dirs["writes"]["bytes"]));
    assert_eq!(mix_reads + writes, 32 << 20, "{mix}");
    // fio's check: write io_kbytes / 16384 within 0.97..1.03.
    let ratio = (writes >> 10) as f64 / 16384.0;
    assert!((0.97..=1.03).contains(&ratio), "writes {writes} B");
    // fio's check: read io_kbytes == 32768, the verify's reads among them.
    assert_eq!(u(&back["total"]["bytes"]), writes, "{back}");
    assert_eq!((mix_reads + u(&back["total"]["bytes"])) >> 10, 32768);
    let v = &back["targets"][0]["verify"];
    assert_eq!(u(&v["blocks"]), writes / 4096, "{v}");
    assert_eq!(u(&v["good"]), writes / 4096, "{v}");
}

/// A verified random mix keeps a bit for each block of its region: over
/// a region of more blocks than that record holds (2 TiB of 4 KiB blocks,
/// a sparse file), the run is refused before any I/O (exit 2, one line
/// saying what to give), and the file is left a hole.
#[test]
fn a_verified_random_mix_over_too_many_blocks_for_its_record_is_refused_before_any_io() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(2 << 40)
        .unwrap();
    let out = sb()
        .args([
            "run", "--rw", "randrw", "--verify", "--passes", "1", "--bs", "4k",
        ])
        .arg(&big)
        .args(["--no-progress", "--allow-destructive"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("536870912 blocks of 4k"), "{err}");
    assert!(
        err.contains("give a smaller --size, a larger --bs or more --jobs"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::metadata(&big).unwrap().blocks(), 0);
}

/// fio's t/jobs/t0006-82af2a7c.fio (a random mix with verify=meta and
/// verify_pattern=0xaaa, verify_backlog=1024), on 8 MiB rather than 4 GiB.
/// run-fio-tests.py requires read io_kbytes = 2 x write: the mix's reads
/// and the read-back's, which reads back what the mix wrote; exactly, the
/// reads are size= and the read-back holds the writes. The mix writes the
/// pattern, and its read-back checked each block as a self-describing
/// one: all of them "lost", exit 1, until the read-back checked the
/// pattern.
#[test]
fn fio_s_t0006_random_mix_with_a_verify_pattern_reads_back_its_pattern() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("foo"), vec![0x5au8; 8 << 20]).unwrap();
    let job = "[global]\nrw=randrw\nbs=4k\nioengine=libaio\niodepth=32\nverify=meta\nverify_backlog=1024\nverify_fatal=1\n\n[ver-test]\nfilename=foo\nsize=8m\nverify_pattern=0xaaa\n";
    let out = run_job(dir.path(), job, &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}{err}");
    let d = doc(dir.path(), "r.json");
    let v = &d["targets"][0]["verify"];
    let dirs = &d["total"]["by_direction"];
    let writes = u(&dirs["writes"]["bytes"]);
    assert_eq!(
        (u(&v["good"]), u(&v["blocks"])),
        (writes / 4096, writes / 4096),
        "{v}"
    );
    assert_eq!(u(&dirs["reads"]["bytes"]), 8 << 20, "{d}");
    // fio's check, at this size within the draw's noise: reads / writes.
    let ratio = (8u64 << 20) as f64 / writes as f64;
    assert!((1.85..2.15).contains(&ratio), "{ratio}");
}
