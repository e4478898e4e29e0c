//! Buffered reads stay cold over the whole window: a timed sequential read
//! that wraps around its region evicts the region again before re-reading
//! it, so the device delivers what the application reads.
//!
//! Needs root (a loop device): it fails, rather than passing unseen, where
//! it cannot run.

use crate::common::{data_file, f, run_json, u, LoopBed};

// Regression (issue 21, item 10): a timed buffered read that finished its
// region re-read it from the page cache (dev/app 0.099 over a 1 GiB loop
// device read for 3 s: memory, not the device).
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_buffered_read_that_wraps_around_its_region_reads_the_device_again() {
    let bed = LoopBed::new(1, 4);
    let dev = bed.devices[0].as_str();
    let d = run_json(&[
        "run",
        "--buffered",
        "--bs",
        "64k",
        "--duration",
        "1s",
        "--ramp",
        "0",
        "--no-progress",
        dev,
    ]);
    let t = &d["targets"][0];
    let app = u(&t["device"]["app_read_bytes"]);
    let region = u(&t["region"]["length"]);
    assert!(
        app >= 3 * region,
        "the run wrapped around: {app} of {region}"
    );
    let ratio = f(&t["device"]["read_ratio"]);
    assert!(
        (0.8..1.5).contains(&ratio),
        "dev/app {ratio}: the device delivered {} of {app} bytes read",
        u(&t["device"]["read_bytes"])
    );
    let w = &d["workers"][0];
    let passes = app / region;
    let evictions = u(&w["cache_evictions"]);
    // One eviction per wrap-around (the last pass may be partial).
    assert!(
        evictions + 1 >= passes && evictions <= passes,
        "{evictions} evictions over {passes} passes"
    );
    assert!(f(&w["cache_eviction_sec"]) > 0.0);
    assert_eq!(u(&d["total"]["cache_evictions"]), evictions);
    // Its own seconds leave the eviction time out.
    let own = f(&w["seconds"]);
    let window = f(&d["window"]["seconds"]);
    assert!(
        (own + f(&w["cache_eviction_sec"]) - window).abs() < 1e-6,
        "{own} + eviction = {window}"
    );
    assert_eq!(
        crate::common::warnings_of(&d, "cache_served_reads"),
        Vec::<&serde_json::Value>::new()
    );
}

// Issue 25, fifth round: a --cached run's buffer starts 16 bytes short of
// a page's end (the kernel's copy from cached pages runs faster into a
// buffer that is not cache-line aligned); a cold buffered read (which
// fills the page cache as it goes, and measured slower so) and a buffered
// write keep the page start. The run document says which, and each reads
// or writes without error wherever the buffer sits.
#[test]
fn only_a_cached_run_puts_its_buffer_off_the_page_start_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = data_file(dir.path(), "data", 4 << 20);
    let file = file.to_str().unwrap();
    for (rw, extra, at) in [
        ("read", &["--cached"][..], 4080),
        ("read", &[], 0),
        ("write", &["--allow-destructive"], 0),
    ] {
        let mut args = vec![
            "run",
            "--rw",
            rw,
            "--buffered",
            "--bs",
            "32k",
            "--size",
            "1m",
            "--duration",
            "200ms",
            "--ramp",
            "0",
            "--no-progress",
        ];
        args.extend_from_slice(extra);
        args.push(file);
        let d = run_json(&args);
        let w = &d["workers"][0];
        // At a page's start the document says nothing of an offset.
        let offset = &w["buffer"]["offset_in_page_bytes"];
        if at == 0 {
            assert!(offset.is_null(), "{rw} {extra:?}: {w}");
        } else {
            assert_eq!(u(offset), at, "{rw} {extra:?}: {w}");
        }
        assert_eq!(
            u(&w["buffer"]["page_size_bytes"]),
            4096,
            "{rw} {extra:?}: {w}"
        );
        assert!(u(&d["total"]["ios"]) > 0, "{rw} {extra:?}: {d}");
        assert_eq!(u(&d["total"]["errors"]), 0, "{rw} {extra:?}: {d}");
    }
}
