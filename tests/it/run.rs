//! End-to-end tests of `stripebench run` on temporary files: every --rw mode,
//! disjoint regions, the JSON and CSV contracts, the built-in test bed, and
//! interruption. Short windows: these assert correctness, never speed.

use crate::common;

use crate::common::{data_file, f, interrupt, json, require, run_json, sb, spawn, u};
use predicates::prelude::*;
use serde_json::Value;

const QUICK: [&str; 4] = ["--duration", "400ms", "--ramp", "100ms"];

fn run_quick(args: &[&str]) -> Value {
    run_json(&[&["run"], &QUICK[..], args].concat())
}

/// The document's internal consistency: sums, rates, ordered percentiles.
fn check_doc(doc: &Value) {
    assert_eq!(doc["schema_version"], 1);
    let secs = f(&doc["total"]["seconds"]);
    assert!(secs > 0.0);
    let workers = doc["workers"].as_array().unwrap();
    let sum: u64 = workers.iter().map(|w| u(&w["bytes"])).sum();
    assert_eq!(
        sum,
        u(&doc["total"]["bytes"]),
        "sum of worker bytes = total bytes"
    );
    let ios: u64 = workers.iter().map(|w| u(&w["ios"])).sum();
    assert_eq!(ios, u(&doc["total"]["ios"]));
    let tsum: u64 = doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| u(&t["bytes"]))
        .sum();
    assert_eq!(tsum, sum);
    let bps = f(&doc["total"]["bytes_per_sec"]);
    assert!(
        (bps - sum as f64 / secs).abs() <= 1e-6 * bps.max(1.0),
        "bytes_per_sec = bytes / seconds"
    );
    for scope in workers.iter().chain(std::iter::once(&doc["total"])) {
        if u(&scope["ios"]) == 0 {
            continue;
        }
        let l = &scope["latency_ns"];
        let order = ["min", "p50", "p90", "p99", "p99_9", "p99_99", "max"].map(|k| u(&l[k]));
        assert!(
            order.windows(2).all(|w| w[0] <= w[1]),
            "percentiles ordered: {order:?}"
        );
    }
    // Every worker has its one-second series, and it adds up to the
    // worker's window bytes and I/Os (the total has no series of its own).
    for w in workers {
        let series = w["intervals"]
            .as_array()
            .unwrap_or_else(|| panic!("worker without intervals: {w}"));
        let bytes: u64 = series.iter().map(|i| u(&i["bytes"])).sum();
        let ios: u64 = series.iter().map(|i| u(&i["ios"])).sum();
        assert_eq!(
            bytes,
            u(&w["bytes"]),
            "intervals add up to the worker's bytes"
        );
        assert_eq!(ios, u(&w["ios"]), "intervals add up to the worker's I/Os");
    }
}

#[test]
fn every_rw_mode_moves_data_in_the_right_direction() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 4 << 20);
    for (rw, reads, writes) in [
        ("read", true, false),
        ("write", false, true),
        ("randread", true, false),
        ("randwrite", false, true),
        ("randrw", true, true),
    ] {
        let mut args = vec![
            "--rw",
            rw,
            "--bs",
            "4k",
            "--allow-destructive",
            t.to_str().unwrap(),
        ];
        if rw == "randrw" {
            args.extend(["--mix", "60"]);
        }
        let doc = run_quick(&args);
        check_doc(&doc);
        let w = &doc["workers"][0];
        assert_eq!(u(&w["read_ios"]) > 0, reads, "{rw}: reads");
        assert_eq!(u(&w["write_ios"]) > 0, writes, "{rw}: writes");
        assert_eq!(doc["config"]["rw"], rw);
        assert_eq!(u(&w["bytes"]), u(&w["ios"]) * 4096, "{rw}: full 4k I/Os");
    }
}

#[test]
fn jobs_get_disjoint_regions() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 8 << 20);
    let doc = run_quick(&["--jobs", "2", "--bs", "64k", t.to_str().unwrap()]);
    check_doc(&doc);
    let w = doc["workers"].as_array().unwrap();
    assert_eq!(w.len(), 2);
    let (a, b) = (&w[0]["region"], &w[1]["region"]);
    assert!(
        u(&a["offset"]) + u(&a["length"]) <= u(&b["offset"]),
        "regions overlap: {a} {b}"
    );
    assert!(u(&b["offset"]) + u(&b["length"]) <= 8 << 20);
    assert_eq!(u(&doc["targets"][0]["workers"]), 2);
}

#[test]
#[cfg_attr(not(sb_multi_cpu), ignore = "needs two or more CPUs")]
fn jobs_get_distinct_cpus() {
    let cpus = stripebench::base::cpus::available_cpus();
    require(cpus.len() >= 2, &format!("needs two CPUs, has {cpus:?}"));
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 8 << 20);
    let doc = run_quick(&["--jobs", "2", "--bs", "64k", t.to_str().unwrap()]);
    let w = doc["workers"].as_array().unwrap();
    assert_ne!(w[0]["pinned_cpu"], w[1]["pinned_cpu"]);
    for wk in w {
        assert_eq!(wk["cpu"], wk["pinned_cpu"], "ran where it was pinned");
    }
}

// Regression (issue 13, items 11 and 18): the interval series was sized from
// the duration, 756 MB per worker for a year; the statistics test that was
// meant to bound it added a constant instead. Here the binary runs under a
// 600 MB address-space limit with a year-long duration that the I/O limit
// ends at once.
#[test]
fn a_year_long_duration_does_not_allocate_a_year_of_intervals() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("stripebench"));
    cmd.env("STRIPEBENCH_STATE_DIR", common::state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db());
    cmd.args([
        "run",
        "--duration",
        "8760h",
        "--ramp",
        "0",
        "--io-limit",
        "256k",
        "--bs",
        "64k",
        "--jobs",
        "2",
        "--json",
        "-",
    ])
    .arg(&t);
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 600_000_000,
                rlim_max: 600_000_000,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let out = cmd.output().unwrap();
    common::succeeded(&out);
    assert_eq!(u(&json(&out.stdout)["total"]["bytes"]), 512 << 10);
}

#[test]
fn several_targets_add_up_and_csv_parses() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 2 << 20);
    let b = data_file(dir.path(), "b", 2 << 20);
    let csv_path = dir.path().join("out.csv");
    let json_path = dir.path().join("out.json");
    sb().arg("run")
        .args(QUICK)
        .args(["--bs", "16k", "--no-pin", "--histogram"])
        .arg("--csv")
        .arg(&csv_path)
        .arg("--json")
        .arg(&json_path)
        .arg(&a)
        .arg(&b)
        .assert()
        .success()
        .stdout(
            predicates::str::contains("TOTAL").and(predicates::str::contains("latency histogram")),
        );
    let doc = json(&std::fs::read(&json_path).unwrap());
    check_doc(&doc);
    assert_eq!(doc["targets"].as_array().unwrap().len(), 2);
    assert_eq!(doc["config"]["pin"], false);
    let mut r = csv::Reader::from_path(&csv_path).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.iter().filter(|r| &r[0] == "worker").count(), 2);
    assert_eq!(rows.iter().filter(|r| &r[0] == "target").count(), 2);
    let total = rows.iter().find(|r| &r[0] == "total").unwrap();
    assert_eq!(total[4].parse::<u64>().unwrap(), u(&doc["total"]["bytes"]));
}

#[test]
fn json_on_stdout_moves_the_table_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let out = sb()
        .arg("run")
        .args(QUICK)
        .args(["--bs", "4k", "--json", "-"])
        .arg(&t)
        .output()
        .unwrap();
    common::succeeded(&out);
    json(&out.stdout);
    assert!(String::from_utf8_lossy(&out.stderr).contains("TOTAL"));
}

/// Runs `randwrite` over a fresh copy of a patterned file, 16 blocks of 4 KiB
/// with `extra` options; the seed reported and the indices of the blocks
/// that changed: where the random offsets fell.
fn blocks_written(dir: &std::path::Path, name: &str, extra: &[&str]) -> (u64, Vec<usize>) {
    const BS: usize = 4096;
    let t = data_file(dir, name, 1 << 20);
    let before = std::fs::read(&t).unwrap();
    let doc = run_json(
        &[
            &[
                "run",
                "--rw",
                "randwrite",
                "--allow-destructive",
                "--bs",
                "4k",
                "--io-limit",
                "64k",
                "--duration",
                "60s",
                "--ramp",
                "0",
            ],
            extra,
            &[t.to_str().unwrap()],
        ]
        .concat(),
    );
    assert_eq!(u(&doc["total"]["ios"]), 16, "{}", doc["total"]);
    let after = std::fs::read(&t).unwrap();
    let changed = before
        .chunks(BS)
        .zip(after.chunks(BS))
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, _)| i)
        .collect();
    (u(&doc["config"]["seed"]), changed)
}

// Regression (issue 13, item 18): this test checked that a seed was
// reported, never that it reproduces the offsets.
#[test]
fn the_seed_is_reported_and_reproduces_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let (seed, a) = blocks_written(dir.path(), "a", &["--seed", "1234"]);
    assert_eq!(seed, 1234);
    assert!(a.len() > 1, "random writes landed on several blocks: {a:?}");
    assert!(
        a.windows(2).any(|w| w[1] != w[0] + 1),
        "not one sequential run: {a:?}"
    );
    let (_, again) = blocks_written(dir.path(), "b", &["--seed", "1234"]);
    assert_eq!(again, a, "the same seed writes the same blocks");
    let (_, other) = blocks_written(dir.path(), "c", &["--seed", "1235"]);
    assert_ne!(other, a, "another seed writes other blocks");
    // A drawn seed is reported, and naming it reproduces the run.
    let (drawn, d) = blocks_written(dir.path(), "d", &[]);
    let (_, replay) = blocks_written(dir.path(), "e", &["--seed", &drawn.to_string()]);
    assert_eq!(
        replay, d,
        "the reported seed {drawn} reproduces the offsets"
    );
}

#[test]
fn buffered_writes_report_the_flush_apart() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 4 << 20);
    let doc = run_quick(&[
        "--rw",
        "write",
        "--buffered",
        "--bs",
        "64k",
        "--allow-destructive",
        t.to_str().unwrap(),
    ]);
    check_doc(&doc);
    let flush = &doc["total"]["flush"];
    // An fsync of the bytes just written takes time, and the durable rate
    // is those bytes over the window and the flush together.
    let flush_sec = f(&flush["seconds"]);
    assert!(flush_sec > 0.0, "{flush}");
    let over = f(&flush["durable_bytes"]) / (f(&doc["window"]["seconds"]) + flush_sec);
    assert!(
        (f(&flush["durable_bytes_per_sec"]) - over).abs() <= over * 1e-6,
        "{flush}"
    );
    let durable = f(&flush["durable_bytes_per_sec"]);
    assert!(
        durable > 0.0 && durable <= f(&doc["total"]["bytes_per_sec"]),
        "durable rate includes the flush time"
    );
    assert_eq!(doc["config"]["direct"], false);
    // O_DIRECT writes and buffered reads have no flush.
    let doc = run_quick(&["--rw", "read", "--buffered", t.to_str().unwrap()]);
    assert!(doc["total"]["flush"].is_null());
}

#[test]
fn built_in_test_bed_runs_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let doc = run_quick(&[
        "--testbed-size",
        "8m",
        "--testbed-files",
        "2",
        "--dir",
        dir.path().to_str().unwrap(),
    ]);
    check_doc(&doc);
    assert_eq!(doc["config"]["testbed"], true);
    assert_eq!(doc["targets"].as_array().unwrap().len(), 2);
    assert_eq!(u(&doc["targets"][0]["size"]), 8 << 20);
    assert!(u(&doc["total"]["ios"]) > 0);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "test bed removed"
    );
}

#[test]
fn interrupt_reports_what_was_measured() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 4 << 20);
    let jpath = dir.path().join("out.json");
    let live = dir.path().join("live.jsonl");
    let child = spawn(&[
        "run",
        "--duration",
        "60s",
        "--ramp",
        "0",
        "--bs",
        "4k",
        "--json",
        jpath.to_str().unwrap(),
        "--live",
        live.to_str().unwrap(),
        t.to_str().unwrap(),
    ]);
    // Measuring: its first second is out.
    common::wait_live_second(&live, 0);
    interrupt(&child);
    let start = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    println!("stopped {:?} after SIGINT", start.elapsed());
    assert_eq!(out.status.code(), Some(130));
    let doc = json(&std::fs::read(&jpath).unwrap());
    assert_eq!(doc["interrupted"], true);
    check_doc(&doc);
    assert!(f(&doc["total"]["seconds"]) < 60.0);
    assert!(u(&doc["total"]["ios"]) > 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("INTERRUPTED"));
}

#[test]
fn io_errors_stop_one_worker_and_the_others_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 4 << 20);
    let b = data_file(dir.path(), "b", 4 << 20);
    for engine in [
        &["--engine", "sync"][..],
        &["--engine", "uring", "--iodepth", "4"][..],
    ] {
        let out = sb()
            .arg("run")
            .args(QUICK)
            .args(engine)
            .args([
                "--bs",
                "64k",
                "--max-errors",
                "3",
                "--debug-fail-from",
                "5",
                "--json",
                "-",
            ])
            .arg(&a)
            .arg(&b)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{engine:?}: I/O errors exit 1");
        let doc = json(&out.stdout);
        let (w0, w1) = (&doc["workers"][0], &doc["workers"][1]);
        // The worker stops issuing at the 3rd error; I/Os already in flight
        // (up to iodepth - 1) still complete and are counted.
        let depth = u(&doc["config"]["iodepth"]);
        let errors = u(&w0["errors"]);
        assert!(
            (3..=3 + depth - 1).contains(&errors),
            "{engine:?}: {errors} errors"
        );
        assert_eq!(w0["stopped_on_errors"], true);
        assert_eq!(w0["errors_by_errno"][0]["name"], "EIO");
        assert_eq!(u(&w0["errors_by_errno"][0]["count"]), errors);
        let offsets: Vec<u64> = w0["error_samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| u(&e["offset"]))
            .collect();
        assert_eq!(offsets.len() as u64, errors);
        assert!(
            offsets.iter().all(|o| o % 65536 == 0 && *o < 4 << 20),
            "{offsets:?}"
        );
        assert_eq!(doc["targets"][0]["failed"], true);
        assert_eq!(doc["targets"][1]["failed"], false);
        assert_eq!(u(&w1["errors"]), 0);
        assert!(u(&w1["ios"]) > 0, "the other worker went on");
        assert_eq!(u(&doc["total"]["errors"]), errors);
        let table = String::from_utf8_lossy(&out.stderr);
        assert!(
            table.contains("ERROR: worker w0") && table.contains(&format!("EIO x{errors}")),
            "{table}"
        );
    }
}

#[test]
fn a_modelled_raid0_splits_the_stream_over_its_members() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = (0..3)
        .map(|i| {
            data_file(dir.path(), &format!("m{i}"), 3 << 20)
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let mut args = vec!["--stripe", "64k", "--bs", "256k"];
    args.extend(files.iter().map(String::as_str));
    let doc = run_quick(&args);
    check_doc(&doc);
    assert_eq!(u(&doc["config"]["stripe_chunk"]), 65536);
    for w in doc["workers"].as_array().unwrap() {
        assert_eq!(u(&w["bs"]), 65536, "each member serves chunk-sized pieces");
        assert!(u(&w["ios"]) > 0);
    }
    let sum: u64 = doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| u(&t["bytes"]))
        .sum();
    assert_eq!(
        sum,
        u(&doc["total"]["bytes"]),
        "the volume moves the sum of its member rows"
    );
    // Refusals: unequal members, a chunk the members cannot address, sizes that do not divide.
    let small = data_file(dir.path(), "small", 1 << 20);
    for (extra, msg) in [
        (
            vec![
                "--stripe",
                "64k",
                files[0].as_str(),
                small.to_str().unwrap(),
            ],
            "members of one size",
        ),
        (
            vec!["--stripe", "1000", files[0].as_str(), files[1].as_str()],
            "not a multiple of the logical block size",
        ),
        (
            vec![
                "--stripe",
                "64k",
                "--bs",
                "96k",
                files[0].as_str(),
                files[1].as_str(),
            ],
            "must divide one another",
        ),
        (vec!["--stripe", "64k", files[0].as_str()], "two or more"),
        (
            vec![
                "--stripe",
                "64k",
                "--jobs",
                "2",
                files[0].as_str(),
                files[1].as_str(),
            ],
            "drop --jobs",
        ),
    ] {
        let out = sb().arg("run").args(QUICK).args(&extra).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(msg),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The value of `v`'s histogram count (its base64 `histogram`).
fn hist_count(v: &serde_json::Value) -> u64 {
    common::hist(v).inner().len()
}

// Regression (issue 21, item 3): randrw had one latency and one rate for
// both directions. Reads and writes now each have their own figures in the
// JSON (workers, targets, total), the table and the CSV, beside the
// combined ones, and the header says what share of reads --mix achieved.
#[test]
fn a_mixed_pattern_reports_reads_and_writes_apart() {
    let dir = tempfile::tempdir().unwrap();
    let t = common::data_file(dir.path(), "t", 4 << 20);
    let csv = dir.path().join("r.csv");
    let out = common::sb()
        .args(["run", "--rw", "randrw", "--mix", "70", "--jobs", "2"])
        .args(["--duration", "300ms", "--ramp", "0", "--bs", "4k"])
        .args([
            "--allow-destructive",
            "--no-progress",
            "--json",
            "-",
            "--csv",
        ])
        .arg(&csv)
        .arg(&t)
        .output()
        .unwrap();
    common::succeeded(&out);
    let d = common::json(&out.stdout);
    let table = String::from_utf8_lossy(&out.stderr).to_string();
    let mut scopes: Vec<&serde_json::Value> = d["workers"].as_array().unwrap().iter().collect();
    scopes.extend(d["targets"].as_array().unwrap());
    scopes.push(&d["total"]);
    for s in &scopes {
        let b = &s["by_direction"];
        let (r, w) = (&b["reads"], &b["writes"]);
        assert_eq!(u(&r["ios"]) + u(&w["ios"]), u(&s["ios"]), "{s}");
        assert_eq!(u(&r["bytes"]) + u(&w["bytes"]), u(&s["bytes"]));
        assert!(u(&r["ios"]) > 0 && u(&w["ios"]) > 0, "{b}");
        // One latency per I/O, in the histogram of its direction.
        assert_eq!(hist_count(&r["histogram"]), u(&r["ios"]));
        assert_eq!(hist_count(&w["histogram"]), u(&w["ios"]));
        assert_eq!(hist_count(&s["histogram"]), u(&s["ios"]));
        let secs = f(&s["seconds"]);
        assert!(
            (f(&r["bytes_per_sec"]) - u(&r["bytes"]) as f64 / secs).abs()
                < 1e-6 * f(&r["bytes_per_sec"])
        );
        assert!(r["latency_ns"]["p99"].is_u64() && w["latency_ns"]["p99"].is_u64());
        let achieved = f(&b["read_pct"]);
        assert!((achieved - 100.0 * u(&r["ios"]) as f64 / u(&s["ios"]) as f64).abs() < 1e-9);
    }
    let tot = &d["total"]["by_direction"];
    // The table: the share achieved, and a row per direction.
    assert!(
        table.contains(&format!(
            "70% reads asked, {:.1}% achieved",
            f(&tot["read_pct"])
        )),
        "{table}"
    );
    for (label, key) in [("TOTAL reads", "reads"), ("TOTAL writes", "writes")] {
        let line = table
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no '{label}' row: {table}"));
        let mb = format!("{:.1}", f(&tot[key]["bytes_per_sec"]) / 1e6);
        assert_eq!(line.split_whitespace().nth(2), Some(mb.as_str()), "{line}");
    }
    // The CSV: the total's read and write rows beside the combined one.
    let mut r = csv::Reader::from_path(&csv).unwrap();
    let head = r.headers().unwrap().clone();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    for (dir_name, key) in [("read", "reads"), ("write", "writes")] {
        let row = rows
            .iter()
            .find(|x| &x[col("scope")] == "total" && &x[col("direction")] == dir_name)
            .unwrap_or_else(|| panic!("no total {dir_name} row"));
        assert_eq!(row[col("ios")].parse::<u64>().unwrap(), u(&tot[key]["ios"]));
    }
    // The HTML report: the same rows.
    let doc_path = dir.path().join("r.json");
    std::fs::write(&doc_path, &out.stdout).unwrap();
    let html = dir.path().join("r.html");
    sb().arg("report")
        .arg(&doc_path)
        .arg("-o")
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    for label in ["TOTAL reads", "TOTAL writes"] {
        assert!(
            page.contains(&format!("<td>{label}</td>")),
            "no {label} row in the HTML"
        );
    }
    // The diff: reads and writes rows beside the TOTAL's.
    let copy = dir.path().join("r2.json");
    std::fs::copy(&doc_path, &copy).unwrap();
    let o = sb()
        .arg("diff")
        .arg(&doc_path)
        .arg(&copy)
        .args(["--json", "-"])
        .output()
        .unwrap();
    let dd = common::json(&o.stdout);
    let labels: Vec<&str> = dd["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert!(
        labels.contains(&"TOTAL reads") && labels.contains(&"TOTAL writes"),
        "{labels:?}"
    );
    // A pattern in one direction has no split.
    let d = run_json(&[
        "run",
        "--duration",
        "100ms",
        "--ramp",
        "0",
        "--bs",
        "64k",
        "--no-progress",
        t.to_str().unwrap(),
    ]);
    assert!(d["total"].get("by_direction").is_none());
}
