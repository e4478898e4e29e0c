//! Buffered writes: "durable" MB/s counts the bytes that reached the device
//! (its own counters, from the window's opening through the final fsync),
//! not rewrites the page cache merged; a device that received far fewer
//! bytes than were written is warned about, as reads are.
//!
//! Needs root (a loop device): it fails, rather than passing unseen, where
//! it cannot run.

use crate::common::{f, run_json, sb, u, LoopBed};

/// Whether the run warned that the device received far fewer bytes than
/// were written.
fn device_short(d: &serde_json::Value) -> bool {
    d["warnings"].as_array().unwrap().iter().any(|w| {
        crate::common::warning_text(w)
            .unwrap()
            .contains("the device received")
    })
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn durable_rate_counts_what_reached_the_device() {
    let bed = LoopBed::new(1, 32);
    let dev = bed.devices[0].as_str();
    // Random buffered writes of five regions' worth over 32 MiB, which the
    // page cache merges into about one region's worth of device writes.
    // Passes, not a duration: how many a second holds depends on the
    // machine's speed.
    let d = run_json(&[
        "run",
        "--rw",
        "randwrite",
        "--bs",
        "64k",
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
    // Over the target's own active time (first issue to last completion)
    // and its flush.
    let secs = f(&d["targets"][0]["seconds"]) + f(&flush["seconds"]);
    let rate = f(&flush["durable_bytes_per_sec"]);
    assert!((rate * secs - durable as f64).abs() <= 1.0 + 1e-9 * rate * secs);
    assert!(
        rate < f(&d["total"]["bytes_per_sec"]) / 2.0,
        "durable {rate} B/s is not the cache's rate"
    );
    assert_eq!(u(&d["total"]["flush"]["durable_bytes"]), durable);
    assert!(device_short(&d), "{}", d["warnings"]);

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
    assert!(d["total"].get("wrap_flushes").is_none(), "{}", d["total"]);
    assert!(!device_short(&d), "{}", d["warnings"]);
}

/// Regression (issue 39, item 6): a buffered sequential write of several
/// passes rewrote pages the page cache still held, so the device received
/// about one pass of the five counted, and the seed configs needed
/// `passes = 1` (windows of a fraction of a second) for a durable figure
/// that was the device's. Each wrap-around now writes the region back
/// first: every pass reaches the device, and the document says how often
/// and how long that took.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn every_pass_of_a_buffered_sequential_write_reaches_the_device() {
    let bed = LoopBed::new(1, 32);
    let dev = bed.devices[0].as_str();
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
    assert_eq!(app, 5 * (32 << 20));
    let flush = &d["targets"][0]["flush"];
    assert_eq!(flush["durable_basis"], "device");
    let durable = u(&flush["durable_bytes"]);
    assert!(
        durable as f64 >= 0.95 * app as f64,
        "the device received {durable} of the {app} B written"
    );
    // Four wrap-arounds inside the window (the fifth pass ends it).
    assert_eq!(u(&d["total"]["wrap_flushes"]), 4, "{}", d["total"]);
    assert_eq!(u(&d["workers"][0]["wrap_flushes"]), 4);
    assert!(f(&d["total"]["wrap_flush_sec"]) > 0.0);
    assert!(!device_short(&d), "{}", d["warnings"]);
}

/// Regression (issue 39, item 5): `run --rw write --buffered --passes 1
/// loop19 zram1` gave zram1 "durable 325.8 MB/s" over loop19's 1.18 s
/// window, though zram1 wrote for 0.29 s. Each target's durable rate is
/// over its own time and its own fsync; the TOTAL says what it is (every
/// target's bytes over the shared window) and gives the targets' own
/// rates summed beside it.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop and zram devices")]
fn a_target_that_finished_early_is_not_divided_by_another_targets_window() {
    let bed = LoopBed::new(1, 256);
    let z = crate::common::Zram::new(64);
    let dir = tempfile::tempdir().unwrap();
    let doc_path = dir.path().join("w.json");
    let out = sb()
        .args(["run", "--rw", "write", "--buffered", "--passes", "1"])
        .args(["--allow-destructive", "--no-progress", "--json"])
        .arg(&doc_path)
        .args([bed.devices[0].as_str(), z.dev.as_str()])
        .output()
        .unwrap();
    crate::common::succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    let d: serde_json::Value = serde_json::from_slice(&std::fs::read(&doc_path).unwrap()).unwrap();
    let window = f(&d["window"]["seconds"]);
    let zram = &d["targets"][1];
    let own = f(&zram["seconds"]);
    // The premise: 64 MiB of zram is written well before 256 MiB of loop.
    assert!(own < 0.9 * window, "zram {own}s, window {window}s: {text}");
    let flush = &zram["flush"];
    let want = u(&flush["durable_bytes"]) as f64 / (own + f(&flush["seconds"]));
    let got = f(&flush["durable_bytes_per_sec"]);
    assert!(
        (got - want).abs() <= 1e-6 * want,
        "zram durable {got} B/s, over its own time {want}: {text}"
    );
    // The total is bytes over the shared window; the targets' own rates
    // summed stand beside it, in the JSON and the table.
    let sum: f64 = d["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| f(&t["bytes_per_sec"]))
        .sum();
    let ts = &d["total"]["targets_sum"];
    assert!((f(&ts["bytes_per_sec"]) - sum).abs() <= 1e-6 * sum, "{ts}");
    assert!(f(&ts["durable_bytes_per_sec"]) > 0.0, "{ts}");
    assert!(
        text.contains(&format!(
            "TOTAL is every target's bytes over the shared window ({window:.3}s), not a sum of rates: the targets ended at different times; their own rates sum to {:.1} MB/s",
            sum / 1e6
        )),
        "{text}"
    );
    assert!(
        text.contains("the targets' own durable rates sum to "),
        "{text}"
    );
}
