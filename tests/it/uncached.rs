//! `--uncached` (RWF_DONTCACHE, Linux 6.14+): buffered I/O that does not
//! keep its pages. A read through it leaves (nearly) none of the file in
//! the page cache, where `--buffered` leaves it there; a file system that
//! refuses the flag (tmpfs) is refused in one line before any I/O; compare
//! adds uncached phases, refused before the first phase where the volume
//! refuses the flag. The kernel this
//! runs on must have the flag (this host and CI run 6.18): on an older one
//! the first test fails, saying so.

use crate::common::{data_file, refused, run_json, sh};
use std::path::Path;

/// Pages of `file` in the page cache, by util-linux's fincore.
fn cached_pages(file: &Path) -> u64 {
    let out = std::process::Command::new("fincore")
        .args(["--bytes", "--noheadings", "--output", "PAGES"])
        .arg(file)
        .output()
        .expect("fincore (util-linux) runs");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("fincore said {:?}", out))
}

#[test]
fn an_uncached_read_leaves_the_file_out_of_the_page_cache_where_buffered_keeps_it() {
    assert!(
        sh("fincore", &["--version"]),
        "fincore (util-linux) is installed"
    );
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let size = 32 << 20;
    let file = data_file(dir.path(), "f", size);
    let f = file.to_str().unwrap();
    let pages = (size / 4096) as u64;
    // One pass over the file each (--io-limit: bytes, not a time window,
    // so a slow machine reads it all too); each run starts cold.
    let once = [
        "--rw",
        "read",
        "--bs",
        "64k",
        "--io-limit",
        "32m",
        "--no-progress",
    ];
    let buffered = run_json(&[&["run", "--buffered"][..], &once, &[f]].concat());
    assert_eq!(buffered["config"]["direct"], false);
    assert!(
        buffered["config"].get("uncached").is_none(),
        "absent when not uncached"
    );
    let kept = cached_pages(&file);
    let uncached = run_json(&[&["run", "--uncached"][..], &once, &[f]].concat());
    let left = cached_pages(&file);
    eprintln!("of {pages} pages: --buffered left {kept} cached, --uncached {left}");
    assert_eq!(uncached["config"]["uncached"], true);
    assert_eq!(uncached["config"]["direct"], false);
    assert_eq!(crate::common::u(&uncached["total"]["bytes"]), size as u64);
    assert!(
        kept > pages * 3 / 4,
        "buffered keeps the file: {kept} of {pages}"
    );
    assert!(left < pages / 2, "uncached keeps little: {left} of {pages}");
}

#[test]
fn uncached_is_refused_where_it_cannot_work() {
    // tmpfs refuses RWF_DONTCACHE: said before the first I/O, in one line.
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let file = data_file(dir.path(), "f", 1 << 20);
    refused(
        &["run", "--uncached", file.to_str().unwrap()],
        "--uncached needs RWF_DONTCACHE (Linux 6.14+, and a file system that supports it)",
    );
    refused(
        &["run", "--uncached", "--direct", file.to_str().unwrap()],
        "'--uncached' cannot be used with '--direct'",
    );
    refused(
        &[
            "compare",
            "--uncached",
            "--rw",
            "write",
            "--allow-destructive",
            file.to_str().unwrap(),
        ],
        "compare --uncached adds uncached read phases",
    );
}

/// compare --uncached reads the volume uncached beside its buffered phases;
/// a volume that refuses RWF_DONTCACHE is refused before any phase runs.
/// On 6.18 neither block devices (md, dm) nor btrfs take the flag, and the
/// lab's 6.1 kernel predates it, so this machine can show only the refusal;
/// the phases and their pairs are unit-tested (document::compare).
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices, btrfs")]
fn compare_uncached_on_a_volume_that_refuses_it_stops_before_any_phase() {
    let bed = crate::common::LoopBed::new(2, 256);
    let at = tempfile::tempdir().unwrap();
    let _m = crate::common::btrfs_raid0(&bed, at.path());
    // Refused in one line, before its test file is written.
    refused(
        &[
            "compare",
            "--uncached",
            "--no-progress",
            at.path().to_str().unwrap(),
        ],
        "--uncached needs RWF_DONTCACHE",
    );
}
