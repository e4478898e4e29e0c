//! Finer streams: `--live-interval` gives the live stream one line per
//! worker, per target and the total for each interval (its own bytes,
//! IOPS and percentiles), the lines stepping by the interval, not by the
//! second; values outside 10ms..1h, and an interval other than 1 s with
//! `--metrics` (which stays at 1 s), refused in one line before any I/O.
//! No figure of the machine's speed is asserted: the lines' `t` and
//! `start_sec` are fixed by the window and the interval, however slow the
//! machine.
//!
//! `--log-interval` sets the document's per-worker `intervals` the same
//! way, each record with its own p50/p99/max; on the mock engine (a virtual
//! clock) every figure is exact. diff, merge and the plots read intervals
//! that divide a second as seconds, and refuse the others in one line.

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

/// A run on the mock engine (1 ms per I/O, a virtual clock: exact figures)
/// with `extra`, its document written to `dir/NAME.json`.
fn mock_run(dir: &std::path::Path, name: &str, extra: &[&str]) -> (std::path::PathBuf, Value) {
    let t = dir.join("t.dat");
    if !t.exists() {
        data_file(dir, "t.dat", 8 << 20);
    }
    let j = dir.join(format!("{name}.json"));
    sb().args([
        "run",
        "--debug-mock-engine",
        "1ms",
        "--ramp",
        "0",
        "--no-progress",
    ])
    .args(["--bs", "4k", "--jobs", "2", "--seed", "7"])
    .args(extra)
    .arg("--json")
    .arg(&j)
    .arg(&t)
    .assert()
    .success();
    let doc = json(&std::fs::read(&j).unwrap());
    (j, doc)
}

#[test]
fn a_100ms_log_interval_gives_twenty_records_that_add_up_with_their_latencies() {
    let d = tempfile::tempdir().unwrap();
    let (_, doc) = mock_run(d.path(), "r", &["-t", "2s", "--log-interval", "100ms"]);
    assert_eq!(u(&doc["config"]["log_interval_ms"]), 100);
    for w in doc["workers"].as_array().unwrap() {
        let iv = w["intervals"].as_array().unwrap();
        assert_eq!(iv.len(), 20, "{w}");
        for (k, i) in iv.iter().enumerate() {
            // Where it starts, in whole milliseconds: 0.3, not 0.30000000000000004.
            assert_eq!(f(&i["t"]), k as f64 / 10.0, "{i}");
            // One sync I/O a millisecond: each completes 1 ms after its issue.
            let ms = |k: &str| u(&i[k]) as f64 / 1e6;
            for k in ["p50_ns", "p99_ns", "max_ns"] {
                assert!((ms(k) - 1.0).abs() < 0.01, "{k}: {i}");
            }
        }
        let ios: u64 = iv.iter().map(|i| u(&i["ios"])).sum();
        let bytes: u64 = iv.iter().map(|i| u(&i["bytes"])).sum();
        assert_eq!((ios, bytes), (u(&w["ios"]), u(&w["bytes"])));
        // The first interval holds the I/Os completed at 1..=99 ms, the others 100.
        assert_eq!(u(&iv[0]["ios"]), 99);
        assert!(iv[1..].iter().all(|i| u(&i["ios"]) == 100), "{iv:?}");
    }
    // Whole seconds stay whole numbers in the JSON (`1`, not `1.0`), the
    // others are the shortest decimal: as parsed, an integer or a float.
    for w in doc["workers"].as_array().unwrap() {
        for (k, i) in w["intervals"].as_array().unwrap().iter().enumerate() {
            let t = &i["t"];
            if k % 10 == 0 {
                assert_eq!(t.as_u64(), Some(k as u64 / 10), "t as written: {i}");
            } else {
                assert!(t.is_f64(), "t as written: {i}");
            }
        }
    }
}

#[test]
fn the_default_log_interval_is_one_record_a_second() {
    let d = tempfile::tempdir().unwrap();
    let (_, doc) = mock_run(d.path(), "r", &["-t", "2s"]);
    assert_eq!(u(&doc["config"]["log_interval_ms"]), 1000);
    let iv = doc["workers"][0]["intervals"].as_array().unwrap();
    assert_eq!(iv.iter().map(|i| u(&i["t"])).collect::<Vec<_>>(), [0, 1]);
    assert!(iv.iter().all(|i| i["p99_ns"].is_u64()), "{iv:?}");
}

#[test]
fn diff_and_merge_read_sub_second_intervals_as_seconds_and_refuse_others() {
    let d = tempfile::tempdir().unwrap();
    let (a, _) = mock_run(d.path(), "a", &["-t", "3s", "--log-interval", "100ms"]);
    let (b, _) = mock_run(d.path(), "b", &["-t", "3s"]);
    // Diff: the 100 ms intervals summed into seconds are the same samples
    // as the other run's seconds (the mock engine is exact).
    let out = sb()
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .args(["--json", "-"])
        .output()
        .unwrap();
    crate::common::succeeded(&out);
    let v = json(&out.stdout);
    let total = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["group"] == "total")
        .unwrap();
    let m = &total["metrics"][0];
    assert_eq!(m["test"]["n_base"], 3, "{m}");
    assert_eq!(m["test"]["n_new"], 3, "{m}");
    assert_eq!(m["change_pct"], 0.0, "{m}");
    // Merge sums them into seconds too, and the merged document says no interval.
    let out = sb()
        .arg("merge")
        .arg(&a)
        .arg(&b)
        .args(["--force", "--json", "-"])
        .output()
        .unwrap();
    crate::common::succeeded(&out);
    let m = json(&out.stdout);
    let iv = m["workers"][0]["intervals"].as_array().unwrap();
    assert_eq!(iv.iter().map(|i| u(&i["t"])).collect::<Vec<_>>(), [0, 1, 2]);
    assert!(
        m["config"].get("log_interval_ms").is_none(),
        "{}",
        m["config"]
    );
    // 300 ms intervals do not divide a second: refused in one line, naming the file.
    let (c, _) = mock_run(d.path(), "c", &["-t", "1200ms", "--log-interval", "300ms"]);
    let (c2, _) = mock_run(d.path(), "c2", &["-t", "1200ms", "--log-interval", "300ms"]);
    for args in [&["diff"][..], &["merge", "--force"]] {
        let out = sb()
            .args(&args[..1])
            .arg(&c)
            .arg(&c2)
            .args(&args[1..])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("c.json") && err.contains("300 ms") && err.contains("--log-interval 1s"),
            "{err}"
        );
    }
    // The HTML report of such a run says why it has no time series.
    let html = d.path().join("c.html");
    sb().arg("report")
        .arg(&c)
        .arg("-o")
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("No time series: its intervals are 300 ms long"),
        "no reason given"
    );
}

#[test]
fn bad_log_intervals_are_refused_before_any_io() {
    let d = tempfile::tempdir().unwrap();
    let m = d.path().join("missing");
    let m = m.to_str().unwrap();
    refused(&["run", "--log-interval", "5ms", m], "outside 10ms to 1h");
    refused(&["run", "--log-interval", "2h", m], "outside 10ms to 1h");
    refused(
        &["run", "--log-interval", "10500us", m],
        "not a whole number of milliseconds",
    );
    refused(
        &["sweep", "--log-interval", "0", "--param", "bs=4k", m],
        "--log-interval",
    );
}

// Issue 40, item 6: each latency is recorded once, into the interval's
// counts, and drained at each interval's end into the run's total, the
// live tap's interval and (when a live interval ends inside a
// --log-interval one, as 300 ms inside 1 s) the --log-interval interval's
// counts. Whatever path a latency took, every place that keeps it holds
// each one exactly once, at the total's resolution.
#[test]
fn a_live_interval_inside_a_log_interval_keeps_every_latency_once_everywhere() {
    let d = tempfile::tempdir().unwrap();
    let live = d.path().join("live.jsonl");
    let live_arg = live.to_str().unwrap();
    let (_, doc) = mock_run(
        d.path(),
        "r",
        &[
            "-t",
            "2s",
            "--rw",
            "randrw",
            "--mix",
            "70",
            "--allow-destructive",
            "--live",
            live_arg,
            "--live-interval",
            "300ms",
        ],
    );
    let ls = lines(&live);
    for w in doc["workers"].as_array().unwrap() {
        let ios = u(&w["ios"]);
        assert!(ios > 1500, "{w}");
        // The total: every I/O once, reads and writes apart and together.
        assert_eq!(crate::common::hist(&w["histogram"]).inner().len(), ios);
        let max = u(&w["latency_ns"]["max"]);
        // Intervals: their I/Os add up, and their latencies are the
        // total's, to the nanosecond (the mock's latency is constant).
        let iv = w["intervals"].as_array().unwrap();
        assert_eq!(iv.len(), 2, "{w}");
        assert_eq!(iv.iter().map(|i| u(&i["ios"])).sum::<u64>(), ios);
        for i in iv {
            for k in ["p50_ns", "p99_ns", "max_ns"] {
                assert_eq!(u(&i[k]), max, "{k}: {i}");
            }
        }
        // The live lines: each I/O in one line, reads and writes apart.
        let mine: Vec<&Value> = ls
            .iter()
            .filter(|l| l["kind"] == "worker" && u(&l["worker"]) == u(&w["id"]))
            .collect();
        assert!(mine.len() >= 6, "{mine:?}");
        assert_eq!(mine.iter().map(|l| u(&l["ios"])).sum::<u64>(), ios);
        let dir_ios = |d: &str| mine.iter().map(|l| u(&l[d]["ios"])).sum::<u64>();
        assert_eq!(
            (dir_ios("reads"), dir_ios("writes")),
            (u(&w["read_ios"]), u(&w["write_ios"]))
        );
        for l in &mine {
            if u(&l["ios"]) > 0 && !l["p99_ns"].is_null() {
                assert_eq!(u(&l["p99_ns"]), max, "{l}");
            }
        }
    }
}
