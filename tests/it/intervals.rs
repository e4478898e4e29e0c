//! Finer streams: `--live-interval` gives the live stream one line per
//! worker, per target and the total for each interval (its own bytes,
//! IOPS and percentiles), the lines stepping by the interval, not by the
//! second; values outside 10ms..1h, and an interval other than 1 s with
//! `--metrics` (which stays at 1 s), refused in one line before any I/O.
//! No figure of the machine's speed is asserted: the lines' `t` and
//! `start_sec` are fixed by the window and the interval, however slow the
//! machine.

use crate::common::{data_file, f, json, refused, sb, u};
use crate::live::lines;
use serde_json::Value;
use std::collections::BTreeMap;

/// Runs 1 s on two files with `--live FILE` and `extra`: (lines, document).
fn live_run(extra: &[&str]) -> (Vec<Value>, Value) {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a.dat", 4 << 20);
    let b = data_file(d.path(), "b.dat", 4 << 20);
    let live = d.path().join("live.jsonl");
    let out = d.path().join("run.json");
    sb().args(["run", "--buffered", "--bs", "64k", "--no-progress"])
        .args(["--duration", "1s", "--ramp", "0"])
        .args(extra)
        .arg(&a)
        .arg(&b)
        .arg("--live")
        .arg(&live)
        .arg("--json")
        .arg(&out)
        .assert()
        .success();
    let doc = json(&std::fs::read(&out).unwrap());
    (lines(&live), doc)
}

#[test]
fn a_100ms_live_interval_steps_by_the_interval() {
    let (ls, doc) = live_run(&["--live-interval", "100ms"]);
    let live = &doc["live"];
    assert_eq!(f(&live["interval_sec"]), 0.1, "{live}");
    // Every interval of the window is written, stalled or not: a 1 s window
    // is ten of them, however few I/Os a loaded machine completes.
    assert_eq!(u(&live["lines_dropped"]), 0, "{live}");
    let totals: Vec<&Value> = ls
        .iter()
        .filter(|l| l["kind"] == "total" && l["late"] == false)
        .collect();
    let ts: Vec<u64> = totals.iter().map(|l| u(&l["t"])).collect();
    assert_eq!(
        ts,
        (0..10).collect::<Vec<u64>>(),
        "one total line per 100 ms"
    );
    assert_eq!(u(&live["seconds"]), 10, "{live}");
    let mut span = 0.0;
    for l in &totals {
        assert_eq!(f(&l["interval_sec"]), 0.1, "{l}");
        let start = f(&l["start_sec"]);
        assert!((start - u(&l["t"]) as f64 * 0.1).abs() < 1e-9, "{l}");
        let secs = f(&l["seconds"]);
        assert!(secs > 0.0 && secs <= 0.1 + 1e-9, "{l}");
        span += secs;
        // The rates are over the interval, not over a second.
        let rate = f(&l["bytes_per_sec"]);
        assert!((rate - u(&l["bytes"]) as f64 / secs).abs() <= 1.0, "{l}");
        if u(&l["ios"]) > 0 {
            let (p50, p99, max) = (u(&l["p50_ns"]), u(&l["p99_ns"]), u(&l["max_ns"]));
            assert!(p50 <= p99 && p99 <= max, "{l}");
        }
    }
    assert!(
        (span - 1.0).abs() < 1e-6,
        "the intervals cover the window: {span}"
    );
    // Per interval, the worker lines add up to the total; over the run to
    // the document's total.
    let mut by_t: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for l in ls.iter().filter(|l| l["kind"] == "worker") {
        let e = by_t.entry(u(&l["t"])).or_default();
        (e.0, e.1) = (e.0 + u(&l["bytes"]), e.1 + u(&l["ios"]));
    }
    let late: u64 = ls
        .iter()
        .filter(|l| l["kind"] == "total" && l["late"] == true)
        .map(|l| u(&l["bytes"]))
        .sum();
    for l in &totals {
        let t = u(&l["t"]);
        let late_t: u64 = ls
            .iter()
            .filter(|x| x["kind"] == "total" && x["late"] == true && u(&x["t"]) == t)
            .map(|x| u(&x["bytes"]))
            .sum();
        assert_eq!(by_t[&t].0, u(&l["bytes"]) + late_t, "interval {t}");
    }
    let all: u64 = totals.iter().map(|l| u(&l["bytes"])).sum::<u64>() + late;
    assert_eq!(
        all,
        u(&doc["total"]["bytes"]),
        "the lines add up to the run"
    );
}

#[test]
fn the_default_interval_is_one_second() {
    let (ls, doc) = live_run(&[]);
    assert_eq!(f(&doc["live"]["interval_sec"]), 1.0);
    for l in &ls {
        assert_eq!(f(&l["interval_sec"]), 1.0, "{l}");
        assert_eq!(f(&l["start_sec"]), u(&l["t"]) as f64, "{l}");
    }
}

#[test]
fn csv_lines_say_their_interval() {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a.dat", 1 << 20);
    let live = d.path().join("live.csv");
    sb().args(["run", "--buffered", "--no-progress"])
        .args(["--duration", "300ms", "--ramp", "0"])
        .args(["--live-format", "csv", "--live-interval", "100ms"])
        .arg(&a)
        .arg("--live")
        .arg(&live)
        .assert()
        .success();
    let text = std::fs::read_to_string(&live).unwrap();
    let mut rows = text.lines();
    let head: Vec<&str> = rows.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (t, iv, start, kind) = (col("t"), col("interval_sec"), col("start_sec"), col("kind"));
    let totals: Vec<Vec<&str>> = rows
        .map(|r| r.split(',').collect::<Vec<_>>())
        .filter(|r| r[kind] == "total")
        .collect();
    assert_eq!(totals.len(), 3, "{text}");
    for r in &totals {
        assert_eq!(r[iv], "0.1", "{text}");
        let want = r[t].parse::<u64>().unwrap() as f64 * 0.1;
        assert!(
            (r[start].parse::<f64>().unwrap() - want).abs() < 1e-9,
            "{text}"
        );
    }
}

#[test]
fn bad_intervals_are_refused_before_any_io() {
    let d = tempfile::tempdir().unwrap();
    // A target that is not there: a refusal that reached the run would
    // say so instead.
    let missing = d.path().join("missing");
    let m = missing.to_str().unwrap();
    for bad in ["5ms", "2h", "0", "1.5x"] {
        refused(
            &["run", "--live", "-", "--live-interval", bad, m],
            "--live-interval",
        );
    }
    refused(&["run", "--live-interval", "9ms", m], "outside 10ms to 1h");
    let prom = d.path().join("m.prom");
    refused(
        &[
            "run",
            "--metrics",
            prom.to_str().unwrap(),
            "--live-interval",
            "100ms",
            m,
        ],
        "--metrics is rewritten every 1s",
    );
    assert!(!prom.exists(), "nothing written");
}
