//! Buffered writes: "durable" MB/s counts the bytes that reached the device
//! (its own counters, from the window's opening through the final fsync),
//! not rewrites the page cache merged; a device that received far fewer
//! bytes than were written is warned about, as reads are.
//!
//! The device tests need root (a loop device): they fail, rather than
//! passing unseen, where they cannot run. What is arithmetic over the
//! targets' times runs on the mock engine, without root.

use crate::common::{data_file, f, json, run_json, sb, u, LoopBed};

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
/// rates summed beside it. The point is that arithmetic, not the devices:
/// on the mock engine (1 ms an I/O) an 8 MiB and a 2 MiB file written in
/// 1 MiB blocks end at exactly 8 ms and 2 ms.
#[test]
fn a_target_that_finished_early_is_not_divided_by_another_targets_window() {
    let dir = tempfile::tempdir().unwrap();
    let long = data_file(dir.path(), "long", 8 << 20);
    let short = data_file(dir.path(), "short", 2 << 20);
    let doc_path = dir.path().join("w.json");
    let out = sb()
        .args(["run", "--debug-mock-engine", "1ms", "--ramp", "0"])
        .args(["--rw", "write", "--bs", "1m", "--buffered", "--passes", "1"])
        .args(["--allow-destructive", "--no-progress", "--json"])
        .arg(&doc_path)
        .arg(&long)
        .arg(&short)
        .output()
        .unwrap();
    crate::common::succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let d = json(&std::fs::read(&doc_path).unwrap());
    // The premise, exactly: 8 and 2 I/Os of 1 ms; the window is the longer.
    assert_eq!(f(&d["window"]["seconds"]), 0.008, "{text}");
    let own: Vec<f64> = d["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| f(&t["seconds"]))
        .collect();
    assert_eq!(own, [0.008, 0.002], "{text}");
    // Each target's rate is over its own time: 1 MiB a millisecond each.
    for t in d["targets"].as_array().unwrap() {
        assert_eq!(f(&t["bytes_per_sec"]), (1u64 << 20) as f64 * 1e3, "{t}");
    }
    let early = &d["targets"][1];
    let flush = &early["flush"];
    assert_eq!(u(&flush["durable_bytes"]), 2 << 20, "{flush}");
    let want = (2u64 << 20) as f64 / (0.002 + f(&flush["seconds"]));
    let got = f(&flush["durable_bytes_per_sec"]);
    assert!(
        (got - want).abs() <= 1e-6 * want,
        "durable {got} B/s, over its own time and fsync {want}: {text}"
    );
    // The total is bytes over the shared window; the targets' own rates
    // summed stand beside it, in the JSON and the table.
    assert_eq!(
        f(&d["total"]["bytes_per_sec"]),
        (10u64 << 20) as f64 / 0.008
    );
    let sum = 2.0 * (1u64 << 20) as f64 * 1e3;
    let ts = &d["total"]["targets_sum"];
    assert_eq!(f(&ts["bytes_per_sec"]), sum, "{ts}");
    let durable_sum: f64 = d["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| f(&t["flush"]["durable_bytes_per_sec"]))
        .sum();
    assert!(
        (f(&ts["durable_bytes_per_sec"]) - durable_sum).abs() <= 1e-6 * durable_sum,
        "{ts}"
    );
    assert!(
        text.contains(&format!(
            "TOTAL is every target's bytes over the shared window (0.008s), not a sum of rates: the targets ended at different times; their own rates sum to {:.1} MB/s",
            sum / 1e6
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "the targets' own durable rates sum to {:.1} MB/s",
            durable_sum / 1e6
        )),
        "{text}"
    );
}
