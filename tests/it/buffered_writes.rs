//! Buffered writes: "durable" MB/s counts the bytes that reached the device
//! (its own counters, from the window's opening through the final fsync),
//! not rewrites the page cache merged; a device that received far fewer
//! bytes than were written is warned about, as reads are.
//!
//! Needs root (a loop device): it fails, rather than passing unseen, where
//! it cannot run.

use crate::common::{f, run_json, u, LoopBed};

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn durable_rate_counts_what_reached_the_device() {
    let bed = LoopBed::new(1, 32);
    let dev = bed.devices[0].as_str();
    // Five passes of sequential buffered writes over 32 MiB, which the page
    // cache merges into one region's worth of device writes. Passes, not a
    // duration: how many a second holds depends on the machine's speed.
    let d = run_json(&[
        "run",
        "--rw",
        "write",
        "--buffered",
        "--passes",
        "5",
        "--ramp",
        "0",
        "--allow-destructive",
        "--no-progress",
        dev,
    ]);
    let app = u(&d["total"]["bytes"]);
    let device = &d["targets"][0]["device"];
    let dev_written = u(&device["write_bytes"]);
    let flush = &d["targets"][0]["flush"];
    assert_eq!(flush["durable_basis"], "device");
    let durable = u(&flush["durable_bytes"]);
    assert!(
        app > 4 * (32 << 20),
        "the window rewrote the region several times: {app} B"
    );
    assert!(
        durable <= dev_written && durable <= app,
        "durable {durable} B, device wrote {dev_written} B, application {app} B"
    );
    let secs = f(&d["window"]["seconds"]) + f(&flush["seconds"]);
    let rate = f(&flush["durable_bytes_per_sec"]);
    assert!((rate * secs - durable as f64).abs() <= 1.0 + 1e-9 * rate * secs);
    assert!(
        rate < f(&d["total"]["bytes_per_sec"]) / 2.0,
        "durable {rate} B/s is not the cache's rate"
    );
    assert_eq!(u(&d["total"]["flush"]["durable_bytes"]), durable);
    let warned = d["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("the device received"));
    assert!(warned, "{}", d["warnings"]);

    // One pass: every byte written reaches the device, and nothing is warned.
    let d = run_json(&[
        "run",
        "--rw",
        "write",
        "--buffered",
        "--passes",
        "1",
        "--allow-destructive",
        "--no-progress",
        dev,
    ]);
    let app = u(&d["total"]["bytes"]);
    let durable = u(&d["targets"][0]["flush"]["durable_bytes"]);
    assert_eq!(app, 32 << 20);
    assert!(durable as f64 >= 0.95 * app as f64, "{durable} of {app} B");
    assert!(!d["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("the device received")));
}
