//! The whole pipeline (command line, configuration, plan, workers, the
//! documents and their JSON, CSV and table) on the mock engine of the
//! hidden `--debug-mock-engine LATENCY`: every I/O completes exactly that
//! long after it was queued, on a virtual clock, and touches no device. So
//! each figure here is computed from the options alone, exactly: no root,
//! no device, nothing that depends on this machine's speed or load.

use crate::common::{data_file, f, json, sb, u};
use serde_json::Value;
use stripebench::analysis::histogram::LatencyHistogram;
use stripebench::measure::workload::{splitmix64, OffsetGen, Op, Region};

/// 1 ms an I/O: one sync worker completes its k-th I/O at k ms.
const LATENCY_NS: u64 = 1_000_000;

struct Ran {
    doc: Value,
    csv: String,
    table: String,
}

/// `stripebench run` on the mock engine (1 ms per I/O, no ramp, seed 7)
/// with `args`, on an 8 MiB file; the JSON, the CSV and the table.
fn mock_run(args: &[&str]) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 8 << 20);
    let (j, c) = (dir.path().join("run.json"), dir.path().join("run.csv"));
    let out = sb()
        .args(["run", "--debug-mock-engine", "1ms", "--ramp", "0"])
        .args(["--seed", "7", "--no-progress", "--allow-destructive"])
        .args(args)
        .arg("--json")
        .arg(&j)
        .arg("--csv")
        .arg(&c)
        .arg(&t)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Ran {
        doc: json(&std::fs::read(&j).unwrap()),
        csv: std::fs::read_to_string(&c).unwrap(),
        table: String::from_utf8(out.stdout).unwrap(),
    }
}

/// Every latency is LATENCY_NS: the percentiles are what a histogram of
/// that one value says (to its 3 significant digits).
fn latency(n: u64) -> (u64, u64, u64) {
    let mut h = LatencyHistogram::new();
    for _ in 0..n {
        h.record(LATENCY_NS);
    }
    let s = h.summary().unwrap();
    (s.min, s.p50, s.max)
}

/// A scope's figures: `ios` I/Os of `bs` bytes over `seconds`.
fn check_scope(scope: &Value, ios: u64, bs: u64, seconds: f64) {
    assert_eq!(u(&scope["ios"]), ios, "{scope}");
    assert_eq!(u(&scope["bytes"]), ios * bs, "{scope}");
    assert_eq!(f(&scope["seconds"]), seconds, "{scope}");
    assert_eq!(f(&scope["iops"]), ios as f64 / seconds, "{scope}");
    assert_eq!(
        f(&scope["bytes_per_sec"]),
        (ios * bs) as f64 / seconds,
        "{scope}"
    );
    let (min, p50, max) = latency(ios);
    let l = &scope["latency_ns"];
    assert_eq!((u(&l["min"]), u(&l["p50"]), u(&l["max"])), (min, p50, max));
    assert_eq!(u(&l["p99_99"]), max);
}

/// The CSV row of `scope` (worker, target, total) number `id` ("" for the
/// total), in the direction `dir`: its bytes, I/Os, seconds and IOPS.
fn csv_row(csv: &str, scope: &str, id: &str, dir: &str) -> (u64, u64, String, String) {
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let row: Vec<&str> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|r| r[col("scope")] == scope && r[col("id")] == id && r[col("direction")] == dir)
        .unwrap_or_else(|| panic!("no {scope} {id} {dir} row in\n{csv}"));
    (
        row[col("bytes")].parse().unwrap(),
        row[col("ios")].parse().unwrap(),
        row[col("seconds")].to_string(),
        row[col("iops")].to_string(),
    )
}

/// The table's line that starts with `label`, split into its columns.
fn table_row(table: &str, label: &str) -> Vec<String> {
    table
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label} line in\n{table}"))
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_sequential_read_on_the_mock_engine_gives_exact_figures() {
    let r = mock_run(&["--rw", "read", "--bs", "4k", "--duration", "2s"]);
    let d = &r.doc;
    // Completions at 1, 2, ... ms: those before the 2 s deadline count.
    let ios = 1999;
    check_scope(&d["total"], ios, 4096, 2.0);
    check_scope(&d["workers"][0], ios, 4096, 2.0);
    assert_eq!(d["window"]["seconds"], 2.0);
    assert_eq!(d["window"]["ended_by"], "duration");
    // Seconds by completion time: 1..999 ms, then 1000..1999 ms.
    let series: Vec<(u64, u64)> = d["workers"][0]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (u(&i["t"]), u(&i["ios"])))
        .collect();
    assert_eq!(series, vec![(0, 999), (1, 1000)]);
    assert_eq!(d["warnings"], serde_json::json!([]));
    assert_eq!(
        csv_row(&r.csv, "total", "", "all"),
        (ios * 4096, ios, "2.000000".into(), "999.5".into())
    );
    // TOTAL  MB/s  MiB/s  IOPS  mean  p50  p99  p99.9  max ...
    let total = table_row(&r.table, "TOTAL");
    assert_eq!(total[1..5], ["4.1", "3.9", "1000", "1.00ms"], "{}", r.table);
    assert_eq!(total[5..9], ["1.00ms"; 4]);
}

#[test]
fn a_mixed_pattern_splits_reads_and_writes_as_its_offsets_say() {
    let r = mock_run(&["--rw", "randrw", "--bs", "4k", "--duration", "1s"]);
    let d = &r.doc;
    let ios = 999;
    // The worker's own generator, replayed: worker 0's seed from --seed 7.
    let seed = splitmix64(7 ^ splitmix64(1));
    let region = Region {
        offset: 0,
        length: 8 << 20,
    };
    let mut gen = OffsetGen::new(region, 4096, true, 50, seed);
    let reads = (0..ios).filter(|_| gen.next_io().0 == Op::Read).count() as u64;
    let w = &d["workers"][0];
    check_scope(w, ios, 4096, 1.0);
    assert_eq!(
        (u(&w["read_ios"]), u(&w["write_ios"])),
        (reads, ios - reads)
    );
    assert_eq!(
        (u(&w["read_bytes"]), u(&w["write_bytes"])),
        (reads * 4096, (ios - reads) * 4096)
    );
    assert!(reads > 400 && reads < 600, "a 50% mix: {reads}");
    assert_eq!(csv_row(&r.csv, "total", "", "read").1, reads, "{}", r.csv);
    assert_eq!(csv_row(&r.csv, "total", "", "write").1, ios - reads);
    assert_eq!(table_row(&r.table, "TOTAL reads")[4], reads.to_string());
    assert_eq!(
        table_row(&r.table, "TOTAL writes")[4],
        (ios - reads).to_string()
    );
}

#[test]
fn passes_and_io_limit_end_the_window_at_the_last_completion() {
    // 8 MiB in 1 MiB requests, twice: 16 I/Os, the last done at 16 ms.
    let r = mock_run(&["--rw", "read", "--bs", "1m", "--passes", "2"]);
    check_scope(&r.doc["total"], 16, 1 << 20, 0.016);
    assert_eq!(r.doc["window"]["ended_by"], "passes");
    assert_eq!(
        csv_row(&r.csv, "worker", "0", "all"),
        (16 << 20, 16, "0.016000".into(), "1000.0".into())
    );
    // 3 MiB: 3 I/Os in 3 ms.
    let r = mock_run(&["--rw", "write", "--bs", "1m", "--io-limit", "3m"]);
    check_scope(&r.doc["total"], 3, 1 << 20, 0.003);
    assert_eq!(r.doc["window"]["ended_by"], "limit");
    assert_eq!(table_row(&r.table, "TOTAL")[3], "1000", "{}", r.table);
}

#[test]
fn several_workers_each_give_their_own_exact_figures() {
    let r = mock_run(&[
        "--rw",
        "read",
        "--bs",
        "4k",
        "--jobs",
        "2",
        "--duration",
        "1s",
    ]);
    let d = &r.doc;
    for w in d["workers"].as_array().unwrap() {
        check_scope(w, 999, 4096, 1.0);
        assert_eq!(u(&w["region"]["length"]), 4 << 20);
    }
    assert_eq!(d["workers"].as_array().unwrap().len(), 2);
    check_scope(&d["total"], 2 * 999, 4096, 1.0);
    assert_eq!(
        csv_row(&r.csv, "total", "", "all"),
        (2 * 999 * 4096, 1998, "1.000000".into(), "1998.0".into())
    );
    assert_eq!(table_row(&r.table, "TOTAL")[3], "1998");
}
