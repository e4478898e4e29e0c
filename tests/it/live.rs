//! The live stream (`--live`, `--live-format`) and the metrics file
//! (`--metrics`): lines per second per worker, per target and the total
//! that add up to the run's document, percentiles of each second's own
//! latencies, a reader that does not read losing lines and not time, the
//! CSV form, the metrics file read by a real parser, and bad paths refused
//! before any I/O.

use crate::common;

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{data_file, interrupt, json, refused, sb, spawn, u};
use serde_json::Value;

pub(crate) fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn doc(path: &Path) -> Value {
    json(&std::fs::read(path).unwrap())
}

/// Per second (on-time lines only): (worker lines, target lines, total line).
type Second = (Vec<Value>, Vec<Value>, Vec<Value>);

fn by_second(ls: &[Value]) -> BTreeMap<u64, Second> {
    let mut m: BTreeMap<u64, Second> = BTreeMap::new();
    for l in ls.iter().filter(|l| l["late"] == false) {
        let e = m.entry(u(&l["t"])).or_default();
        match l["kind"].as_str().unwrap() {
            "worker" => e.0.push(l.clone()),
            "target" => e.1.push(l.clone()),
            "total" => e.2.push(l.clone()),
            k => panic!("kind {k}"),
        }
    }
    m
}

/// p50 <= p99 <= max on every line that has latencies, none on one without I/O.
fn percentiles_ordered(ls: &[Value]) {
    for l in ls {
        if u(&l["ios"]) == 0 {
            assert!(l["p50_ns"].is_null(), "{l}");
            continue;
        }
        let (p50, p99, max) = (u(&l["p50_ns"]), u(&l["p99_ns"]), u(&l["max_ns"]));
        assert!(p50 <= p99 && p99 <= max, "{l}");
    }
}

#[test]
fn lines_come_per_worker_target_and_total_and_add_up_to_the_document() {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a.dat", 8 << 20);
    let b = data_file(d.path(), "b.dat", 8 << 20);
    let live = d.path().join("live.jsonl");
    let out = d.path().join("run.json");
    sb().args([
        "run",
        "--buffered",
        "--bs",
        "4k",
        "--jobs",
        "2",
        "--no-progress",
    ])
    .args(["--duration", "3.5s", "--ramp", "300ms"])
    .arg(&a)
    .arg(&b)
    .arg("--live")
    .arg(&live)
    .arg("--json")
    .arg(&out)
    .assert()
    .success();
    let doc = doc(&out);
    let ls = lines(&live);
    percentiles_ordered(&ls);
    let secs = by_second(&ls);
    // 3.5 s: seconds 0..=3, the last one half a second long.
    assert_eq!(secs.keys().copied().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    for (t, (workers, targets, total)) in &secs {
        assert_eq!(workers.len(), 4, "second {t}");
        assert_eq!(targets.len(), 2, "second {t}");
        assert_eq!(total.len(), 1, "second {t}");
        let sum = |v: &[Value], k: &str| v.iter().map(|l| u(&l[k])).sum::<u64>();
        for tl in targets {
            let mine: Vec<Value> = workers
                .iter()
                .filter(|w| w["target"] == tl["id"])
                .cloned()
                .collect();
            assert_eq!(mine.len(), 2, "second {t}");
            assert_eq!(sum(&mine, "bytes"), u(&tl["bytes"]), "second {t}");
            assert_eq!(sum(&mine, "ios"), u(&tl["ios"]), "second {t}");
        }
        assert_eq!(sum(workers, "bytes"), u(&total[0]["bytes"]), "second {t}");
        assert_eq!(sum(targets, "ios"), u(&total[0]["ios"]), "second {t}");
        let want = if *t == 3 { 0.5 } else { 1.0 };
        assert!(
            (total[0]["seconds"].as_f64().unwrap() - want).abs() < 1e-6,
            "{t}: {}",
            total[0]
        );
        let bps = total[0]["bytes_per_sec"].as_f64().unwrap();
        assert!(
            (bps - u(&total[0]["bytes"]) as f64 / want).abs() < 1.0,
            "{}",
            total[0]
        );
    }
    // Every second of every worker: the window's bytes, exactly (nothing
    // dropped). A worker that a loaded machine held up past its second's
    // total comes after it in a line of its own, marked late (the second's
    // line for it said "stalled"): its bytes are counted there.
    let late: Vec<&Value> = ls
        .iter()
        .filter(|l| l["late"] == true && l["kind"] == "worker")
        .collect();
    let late_bytes: u64 = late.iter().map(|l| u(&l["bytes"])).sum();
    let total: u64 = secs.values().map(|s| u(&s.2[0]["bytes"])).sum();
    assert_eq!(total + late_bytes, u(&doc["total"]["bytes"]));
    assert_eq!(
        late.is_empty(),
        u(&doc["live"]["late_lines"]) == 0,
        "late lines said"
    );
    for w in doc["workers"].as_array().unwrap() {
        let id = u(&w["id"]).to_string();
        let mine: u64 = secs
            .values()
            .flat_map(|s| &s.0)
            .chain(late.iter().copied())
            .filter(|l| l["id"] == id.as_str())
            .map(|l| u(&l["ios"]))
            .sum();
        assert_eq!(mine, u(&w["ios"]), "worker {id}");
    }
    // Each second's percentiles are its own: the highest per-second maximum is
    // the run's maximum, and a second whose maximum is below it is not the
    // running histogram (whose maximum can only grow).
    let maxima: Vec<u64> = secs
        .values()
        .map(|s| u(&s.2[0]["max_ns"]))
        .chain(late.iter().filter_map(|l| l["max_ns"].as_u64()))
        .collect();
    let run_max = u(&doc["total"]["latency_ns"]["max"]);
    assert_eq!(maxima.iter().copied().max(), Some(run_max));
    assert!(
        maxima.windows(2).any(|w| w[1] < w[0]) || maxima[0] < run_max,
        "{maxima:?}"
    );
    let l = &doc["live"];
    assert_eq!(l["lines_written"], ls.len() as u64, "{l}");
    assert_eq!((u(&l["lines_dropped"]), u(&l["seconds"])), (0, 4), "{l}");
    assert_eq!(l["format"], "jsonl");
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_blkio)),
    ignore = "needs root and a cgroup v1 blkio hierarchy"
)]
fn a_throttled_second_has_its_own_percentiles() {
    let d = tempfile::tempdir().unwrap();
    let img = data_file(d.path(), "img", 32 << 20);
    let lo = common::Loop::attach(&img, &[]);
    let th = common::Throttle::reads("live-test", &[]);
    let live = d.path().join("live.jsonl");
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec {} run --rw randread --bs 64k --engine sync --duration 6s --ramp 0 --no-progress --live {} {}",
        th.path().display(),
        assert_cmd::cargo::cargo_bin("stripebench").display(),
        live.display(),
        lo.dev
    );
    let mut child = Command::new("sh")
        .env("STRIPEBENCH_STATE_DIR", common::state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(["-c", &script])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Unthrottled for second 0, then at 1 MB/s (16 reads a second) from
    // its end to the end of second 2, then unthrottled again.
    common::wait_live_second(&live, 0);
    th.limit(&lo.dev, 1_000_000);
    common::wait_live_second(&live, 2);
    th.limit(&lo.dev, 0);
    assert!(child.wait().unwrap().success());
    let ls = lines(&live);
    percentiles_ordered(&ls);
    let totals: Vec<&Value> = ls
        .iter()
        .filter(|l| l["kind"] == "total" && l["late"] == false)
        .collect();
    let p50: Vec<u64> = totals.iter().map(|l| u(&l["p50_ns"])).collect();
    let slow = (1..p50.len()).max_by_key(|&i| p50[i]).unwrap();
    // A throttled second's median is its own: the thousands of fast reads
    // of second 0 would hold a running histogram's median down.
    assert!(p50[slow] > 10 * p50[0], "{p50:?}");
    // And it does not carry over into the seconds after the throttle.
    let last = p50.len() - 1;
    assert!(slow < last && p50[last] * 10 < p50[slow], "{p50:?}");
}

#[test]
fn a_reader_that_does_not_read_loses_lines_not_time() {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a.dat", 4 << 20);
    let b = data_file(d.path(), "b.dat", 4 << 20);
    let fifo = d.path().join("live.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    // The reader: opens the FIFO and never reads it, with the smallest pipe
    // buffer the kernel allows (one page), so it fills within a second.
    let reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags_nonblock()
        .open(&fifo)
        .unwrap();
    // SAFETY: fcntl on our own descriptor.
    unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETPIPE_SZ, 4096) };
    let out = d.path().join("run.json");
    let start = Instant::now();
    let mut child = sb_spawn(&[
        "run",
        "--buffered",
        "--bs",
        "4k",
        "--jobs",
        "4",
        "--duration",
        "4s",
        "--ramp",
        "0",
        "--no-progress",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--live",
        fifo.to_str().unwrap(),
        "--json",
        out.to_str().unwrap(),
    ]);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the run waits for the reader"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success());
    let doc = doc(&out);
    assert_eq!(doc["window"]["ended_by"], "duration");
    let l = &doc["live"];
    let (written, dropped) = (u(&l["lines_written"]), u(&l["lines_dropped"]));
    // 8 workers, 2 targets and the total, every second; and for each late
    // worker line (a worker stalled past its second's end on a loaded
    // machine) its own worker, target and total lines, marked late.
    assert_eq!(
        written + dropped,
        11 * u(&l["seconds"]) + 3 * u(&l["late_lines"]),
        "{l}"
    );
    assert!(dropped > 0 && written > 0, "{l}");
    let warned = doc["warnings"].as_array().unwrap().iter().any(|w| {
        crate::common::warning_text(w)
            .unwrap()
            .contains(&format!("{dropped} of"))
    });
    assert!(warned, "{}", doc["warnings"]);
    // What the pipe holds is whole lines: nothing was written by halves.
    let mut held = Vec::new();
    let _ = std::io::Read::read_to_end(&mut &reader, &mut held);
    let text = String::from_utf8(held).unwrap();
    assert_eq!(text.lines().count() as u64, written);
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
}

trait NonBlock {
    fn custom_flags_nonblock(&mut self) -> &mut Self;
}

impl NonBlock for std::fs::OpenOptions {
    fn custom_flags_nonblock(&mut self) -> &mut Self {
        std::os::unix::fs::OpenOptionsExt::custom_flags(self, libc::O_NONBLOCK)
    }
}

fn sb_spawn(args: &[&str]) -> std::process::Child {
    Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
        .env("STRIPEBENCH_STATE_DIR", common::state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn csv_on_stdout_sends_the_table_to_stderr() {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a,\"odd\".dat", 4 << 20);
    let out = sb()
        .args([
            "run",
            "--buffered",
            "--duration",
            "2.2s",
            "--ramp",
            "0",
            "--no-progress",
        ])
        .arg(&a)
        .args(["--live", "-", "--live-format", "csv"])
        .output()
        .unwrap();
    common::succeeded(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("TOTAL"));
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    for k in [
        "t",
        "kind",
        "id",
        "bytes",
        "ios",
        "errors",
        "bytes_per_sec",
        "iops",
        "p50_ns",
        "p99_ns",
        "max_ns",
    ] {
        assert!(header.iter().any(|h| h == k), "{header:?}");
    }
    let col = |k: &str| header.iter().position(|h| h == k).unwrap();
    let all: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    // A worker that a busy machine kept from handing in its second in time
    // gets a stalled line of zeros, and its figures follow as a late line
    // (tests below cover both): that happened only under load.
    let rows: Vec<csv::StringRecord> = all
        .iter()
        .filter(|r| &r[col("late")] != "true")
        .cloned()
        .collect();
    // Seconds 0, 1 and 2 (0.2 s): a worker, a target and the total each.
    assert_eq!(rows.len(), 9, "{text}");
    let target: Vec<&csv::StringRecord> = rows
        .iter()
        .filter(|r| &r[col("kind")] == "target")
        .collect();
    assert_eq!(&target[0][col("id")], a.to_str().unwrap());
    for r in rows.iter().filter(|r| &r[col("stalled")] != "true") {
        let (p50, max) = (&r[col("p50_ns")], &r[col("max_ns")]);
        if p50.is_empty() {
            // A second with no completion (a loaded machine) has none.
            assert!(max.is_empty(), "{text}");
            continue;
        }
        let p50: u64 = p50.parse().unwrap();
        let max: u64 = max.parse().unwrap();
        assert!(p50 <= max);
    }
}

#[test]
fn a_sweep_labels_each_line_with_its_point() {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a.dat", 4 << 20);
    let live = d.path().join("live.jsonl");
    sb().args([
        "sweep",
        "--param",
        "bs=4k,64k",
        "--buffered",
        "--duration",
        "1.5s",
        "--ramp",
        "0",
        "--no-progress",
    ])
    .arg(&a)
    .arg("--live")
    .arg(&live)
    .assert()
    .success();
    let ls = lines(&live);
    let points: Vec<&str> = ls
        .iter()
        .filter(|l| l["kind"] == "total")
        .map(|l| l["point"].as_str().unwrap())
        .collect();
    assert_eq!(points, ["bs=4k", "bs=4k", "bs=64k", "bs=64k"]);
}

#[test]
fn an_interrupted_run_writes_its_last_second_and_a_whole_metrics_file() {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a.dat", 4 << 20);
    let live = d.path().join("live.jsonl");
    let prom = d.path().join("m.prom");
    let out = d.path().join("run.json");
    let child = spawn(&[
        "run",
        "--buffered",
        "--duration",
        "60s",
        "--ramp",
        "0",
        "--no-progress",
        a.to_str().unwrap(),
        "--live",
        live.to_str().unwrap(),
        "--metrics",
        prom.to_str().unwrap(),
        "--json",
        out.to_str().unwrap(),
    ]);
    // Two whole seconds out, the third under way.
    common::wait_live_second(&live, 1);
    interrupt(&child);
    let done = child.wait_with_output().unwrap();
    assert_eq!(done.status.code(), Some(130));
    let doc = doc(&out);
    assert_eq!(doc["interrupted"], true);
    let ls = lines(&live);
    let totals: Vec<&Value> = ls.iter().filter(|l| l["kind"] == "total").collect();
    let last = totals.last().unwrap();
    // The second the interrupt cut short is written, at its own length.
    let window = doc["window"]["seconds"].as_f64().unwrap();
    assert_eq!(u(&last["t"]), window.floor() as u64, "{last}");
    assert!((last["seconds"].as_f64().unwrap() - (window - window.floor())).abs() < 1e-3);
    let sum: u64 = totals.iter().map(|l| u(&l["bytes"])).sum();
    assert_eq!(sum, u(&doc["total"]["bytes"]));
    let text = std::fs::read_to_string(&prom).unwrap();
    // Each series labelled with the disk behind its target: a file is its
    // path on its host.
    let series = format!(
        "stripebench_bytes_total{{target=\"{}\",worker=\"0\",disk=\"file:",
        a.display()
    );
    let tail = format!(":{}\"}} {sum}", a.display());
    assert!(
        text.lines()
            .any(|l| l.starts_with(&series) && l.ends_with(&tail)),
        "{text}"
    );
    // Only the file itself: no temporary left beside it.
    let names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

#[test]
#[cfg_attr(
    not(sb_prometheus_client),
    ignore = "needs Python's prometheus_client (apt python3-prometheus-client)"
)]
fn the_metrics_file_is_read_by_prometheus_client_during_and_after_the_run() {
    let d = tempfile::tempdir().unwrap();
    // A target whose name needs escaping in a label value.
    let a = data_file(d.path(), "a\"b\\c.dat", 4 << 20);
    let prom = d.path().join("m.prom");
    let out = d.path().join("run.json");
    let child = spawn(&[
        "run",
        "--buffered",
        "--jobs",
        "2",
        "--duration",
        "3s",
        "--ramp",
        "0",
        "--no-progress",
        a.to_str().unwrap(),
        "--metrics",
        prom.to_str().unwrap(),
        "--json",
        out.to_str().unwrap(),
    ]);
    // The first second's metrics are out (the run goes on for two more).
    common::wait_for("the metrics file", || {
        std::fs::read_to_string(&prom).is_ok_and(|t| t.contains("stripebench_bytes_total"))
    });
    let during = parse_metrics(&prom);
    assert!(during.contains("stripebench_bytes_total"), "{during}");
    common::succeeded(&child.wait_with_output().unwrap());
    let after = parse_metrics(&prom);
    let doc = doc(&out);
    for w in doc["workers"].as_array().unwrap() {
        let key = format!("{}|{}", a.display(), u(&w["id"]));
        for (name, field) in [
            ("stripebench_bytes_total", "bytes"),
            ("stripebench_ios_total", "ios"),
            ("stripebench_latency_seconds_count", "ios"),
            ("stripebench_latency_seconds_bucket+Inf", "ios"),
        ] {
            let want = format!("{name} {key} {}", u(&w[field]));
            assert!(after.lines().any(|l| l == want), "{want} in\n{after}");
        }
    }
}

#[test]
#[cfg_attr(not(sb_promtool), ignore = "needs promtool (apt prometheus)")]
fn the_metrics_file_passes_promtool() {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a\"b\\c.dat", 4 << 20);
    let prom = d.path().join("m.prom");
    sb().args([
        "run",
        "--buffered",
        "--jobs",
        "2",
        "--duration",
        "1.5s",
        "--ramp",
        "0",
    ])
    .arg(&a)
    .arg("--metrics")
    .arg(&prom)
    .assert()
    .success();
    let out = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(&prom).unwrap())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // No error and no lint.
    common::succeeded(&out);
    assert!(said.trim().is_empty(), "{said}");
}

/// The file through `text_string_to_metric_families`: one line per sample,
/// `NAME[+Inf] TARGET|WORKER VALUE` (buckets: only +Inf), after checking
/// that each histogram's buckets never decrease.
fn parse_metrics(path: &Path) -> String {
    let script = r#"
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
for fam in text_string_to_metric_families(text):
    assert fam.documentation, fam.name
    last = {}
    for s in fam.samples:
        key = s.labels.get("target", "") + "|" + s.labels.get("worker", "")
        if "direction" in s.labels:
            key += "|" + s.labels["direction"]
        if s.name.endswith("_bucket"):
            assert s.value >= last.get(key, 0), (s, last)
            last[key] = s.value
            if s.labels["le"] != "+Inf":
                continue
            print(f"{s.name}+Inf {key} {int(s.value)}")
        else:
            print(f"{s.name} {key} {int(s.value)}")
"#;
    // The python3 on PATH, or Debian's (where apt installs the package).
    let py = ["python3", "/usr/bin/python3"]
        .into_iter()
        .find(|py| {
            Command::new(py)
                .args(["-c", "import prometheus_client.parser"])
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect("a python3 with prometheus_client");
    let out = Command::new(py)
        .args(["-c", script])
        .arg(path)
        .output()
        .unwrap();
    common::succeeded_as(&out, "prometheus_client refused the file");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn bad_live_and_metrics_paths_are_refused_before_any_io() {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a.dat", 1 << 20);
    let t = a.to_str().unwrap();
    let dir = d.path().to_str().unwrap();
    let json = d.path().join("x.json");
    let j = json.to_str().unwrap();
    refused(
        &["run", t, "--live", "/nonexistent-dir/x.jsonl"],
        "does not exist",
    );
    refused(&["run", t, "--live", dir], "is a directory");
    refused(&["run", t, "--live", t], "a target");
    refused(&["run", t, "--live", "/dev/null"], "character device");
    refused(&["run", t, "--metrics", dir], "is a directory");
    refused(&["run", t, "--metrics", t], "a target");
    refused(&["run", t, "--live", j, "--json", j], "name the same file");
    refused(
        &["run", t, "--live", j, "--metrics", j],
        "name the same file",
    );
    refused(
        &["run", t, "--live", "-", "--json", "-"],
        "both want stdout",
    );
    refused(&["run", t, "--metrics", "-"], "--metrics -");
    refused(
        &["sweep", "--param", "bs=4k,8k", t, "--live", dir],
        "is a directory",
    );
    // A FIFO that nobody reads yet: said before the run, not waited on.
    let fifo = d.path().join("f");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    refused(
        &["run", t, "--live", fifo.to_str().unwrap()],
        "has no reader",
    );
    // Nothing was created where the refused outputs pointed.
    assert!(!json.exists());
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn a_stalled_worker_still_gets_its_lines_while_the_run_goes() {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a.dat", 1 << 20);
    let b = data_file(d.path(), "b.dat", 1 << 20);
    let live = d.path().join("live.jsonl");
    // Worker 0's I/O never completes from its third on (reads from a pipe
    // no one writes): a stalled device. Worker 1 goes on.
    let child = spawn(&[
        "run",
        "--engine",
        "uring",
        "--iodepth",
        "2",
        "--bs",
        "64k",
        "--duration",
        "4s",
        "--ramp",
        "0",
        "--debug-hang-from",
        "3",
        // Longer than the window: worker 0 is there, stalled, to its end.
        "--hang-timeout",
        "6s",
        "--no-progress",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--live",
        live.to_str().unwrap(),
    ]);
    // Mid-window: seconds 0 and 1 are written, worker 0's second 1 as stalled zeros.
    common::wait_live_second(&live, 1);
    let during = lines(&live);
    let w0: Vec<&Value> = during
        .iter()
        .filter(|l| l["kind"] == "worker" && l["id"] == "0")
        .collect();
    let w1 = during
        .iter()
        .filter(|l| l["kind"] == "worker" && l["id"] == "1")
        .count();
    assert!(w0.len() >= 2 && w1 >= 2, "{during:?}");
    let stalled = &w0[1];
    assert_eq!(stalled["stalled"], true, "{stalled}");
    assert_eq!((u(&stalled["bytes"]), u(&stalled["ios"])), (0, 0));
    assert!(stalled["p50_ns"].is_null());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "a hung I/O exits 1");
    // Every second of the window has its line for worker 0, stalled; and
    // the two reads it completed in second 0 come when it gives up, late.
    let after = lines(&live);
    let w0: Vec<(u64, bool, bool, u64)> = after
        .iter()
        .filter(|l| l["kind"] == "worker" && l["id"] == "0")
        .map(|l| {
            (
                u(&l["t"]),
                l["stalled"] == true,
                l["late"] == true,
                u(&l["ios"]),
            )
        })
        .collect();
    assert_eq!(
        w0,
        [
            (0, true, false, 0),
            (1, true, false, 0),
            (2, true, false, 0),
            (3, true, false, 0),
            (0, false, true, 2)
        ]
    );
    let late_total: Vec<&Value> = after
        .iter()
        .filter(|l| l["kind"] == "total" && l["late"] == true)
        .collect();
    assert_eq!(late_total.len(), 1);
    assert_eq!(u(&late_total[0]["ios"]), 2);
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_btrfs)),
    ignore = "needs root and mkfs.btrfs (btrfs-progs)"
)]
fn compare_streams_every_phase_on_stdout_and_its_table_on_stderr() {
    let bed = common::LoopBed::new(2, 160);
    let mnt = tempfile::tempdir().unwrap();
    let mut args = vec!["-q", "-f", "-K", "-d", "raid0", "-m", "raid0"];
    args.extend(bed.devices.iter().map(String::as_str));
    common::sh_required("mkfs.btrfs", &args);
    let _m = common::mount(&[&bed.devices[0]], mnt.path());
    let d = tempfile::tempdir().unwrap();
    let doc_path = d.path().join("c.json");
    let out = sb()
        .args([
            "compare",
            "--duration",
            "1.2s",
            "--ramp",
            "0",
            "--file-size",
            "64m",
        ])
        .args(["--no-progress", "--live", "-", "--json"])
        .arg(&doc_path)
        .arg(mnt.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    common::succeeded(&out);
    assert!(err.contains("stripe efficiency"), "{err}");
    let ls: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let mut phases: Vec<&str> = ls
        .iter()
        .filter(|l| l["kind"] == "total")
        .map(|l| l["phase"].as_str().unwrap())
        .collect();
    phases.dedup();
    // The members together ran 3 times (compare's default --repeat): a
    // later run's lines say which run they are.
    assert_eq!(
        phases,
        [
            "members together, O_DIRECT",
            "members together, O_DIRECT (run 2 of 3)",
            "members together, O_DIRECT (run 3 of 3)",
            "volume, 1 worker, O_DIRECT",
            "volume, 2 workers, O_DIRECT",
            "volume, 2 workers, buffered",
            "volume, 1 worker, buffered"
        ]
    );
    // Each run's lines add up to its own document.
    let c = doc(&doc_path);
    let runs = c["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p, String::new()));
    let repeats = c["repeats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p, format!(" (run {} of 3)", p["repeat"])));
    for (p, label) in runs.chain(repeats) {
        let name = format!("{}{label}", p["name"].as_str().unwrap());
        let name = name.as_str();
        let sum: u64 = ls
            .iter()
            .filter(|l| l["kind"] == "total" && l["phase"] == name)
            .map(|l| u(&l["bytes"]))
            .sum();
        assert_eq!(sum, u(&p["document"]["total"]["bytes"]), "{name}");
        assert_eq!(p["document"]["live"]["path"], "-");
    }
}

#[test]
fn a_reader_that_goes_away_does_not_end_the_run() {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a.dat", 4 << 20);
    let fifo = d.path().join("live.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags_nonblock()
        .open(&fifo)
        .unwrap();
    let out = d.path().join("run.json");
    let mut child = sb_spawn(&[
        "run",
        "--buffered",
        "--duration",
        "3s",
        "--ramp",
        "0",
        "--no-progress",
        a.to_str().unwrap(),
        "--live",
        fifo.to_str().unwrap(),
        "--json",
        out.to_str().unwrap(),
    ]);
    // The first second's lines reach the reader, which then closes its end.
    common::wait_for("the first second's lines in the FIFO", || {
        common::pending(&reader) > 0
    });
    drop(reader);
    assert!(
        child.wait().unwrap().success(),
        "the run went on to its end"
    );
    let doc = doc(&out);
    assert_eq!(doc["interrupted"], false);
    assert_eq!(doc["window"]["ended_by"], "duration");
    let said = crate::common::warnings_saying(&doc, "Broken pipe");
    assert_eq!(said.len(), 1, "{}", doc["warnings"]);
    let l = &doc["live"];
    // A worker, a target and the total a second, for 3 seconds, and the
    // three lines of each late worker line (a stall on a loaded machine).
    assert_eq!(
        u(&l["lines_written"]) + u(&l["lines_dropped"]),
        9 + 3 * u(&l["late_lines"]),
        "{l}"
    );
}

#[test]
fn a_size_bounded_run_rates_its_last_second_over_the_window_it_had() {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a.dat", 8 << 20);
    let live = d.path().join("live.jsonl");
    let out = d.path().join("run.json");
    sb().args([
        "run",
        "--buffered",
        "--bs",
        "64k",
        "--io-limit",
        "8m",
        "--no-progress",
    ])
    .arg(&a)
    .arg("--live")
    .arg(&live)
    .arg("--json")
    .arg(&out)
    .assert()
    .success();
    let doc = doc(&out);
    assert_eq!(doc["window"]["ended_by"], "limit");
    let window = doc["window"]["seconds"].as_f64().unwrap();
    let ls = lines(&live);
    let last = ls.iter().rfind(|l| l["kind"] == "total").unwrap();
    let t = u(&last["t"]) as f64;
    // The window closed at the last completion, inside its last second.
    let seconds = last["seconds"].as_f64().unwrap();
    assert!(
        (seconds - (window - t)).abs() < 1e-6,
        "{last} vs a window of {window}s"
    );
    let sum: u64 = ls
        .iter()
        .filter(|l| l["kind"] == "total")
        .map(|l| u(&l["bytes"]))
        .sum();
    assert_eq!(sum, 8 << 20);
}

/// A worker whose target starts failing mid-run shows its errors in the
/// seconds they happen, not as "stalled" seconds with no errors until a
/// "late" line at the end; and a worker that fails everything in the window
/// still has its errors in the stream and the metrics file.
#[test]
fn a_failing_worker_streams_its_errors_in_the_seconds_they_happen() {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a.dat", 8 << 20);
    let live = d.path().join("live.jsonl");
    let metrics = d.path().join("m.prom");
    let out = d.path().join("run.json");
    // 1000 I/Os per second; from the 1500th (about 1.5 s in) every one
    // fails. (From the 2500th, a busy machine's debug build sometimes did
    // not get that far in 4 s.)
    sb().args(["run", "--buffered", "--rw", "randread", "--bs", "4k"])
        .args(["--rate-iops", "1000", "--ramp", "0", "--duration", "4s"])
        .args(["--debug-fail-from", "1500", "--max-errors", "100000000"])
        .args(["--no-progress"])
        .arg(&a)
        .arg("--live")
        .arg(&live)
        .arg("--metrics")
        .arg(&metrics)
        .arg("--json")
        .arg(&out)
        .assert()
        .code(1);
    let first = doc(&out);
    let ls = lines(&live);
    let workers: Vec<&Value> = ls.iter().filter(|l| l["kind"] == "worker").collect();
    for l in &workers {
        assert_eq!(l["stalled"], false, "{l}");
        assert_eq!(l["late"], false, "{l}");
    }
    let errors: u64 = workers.iter().map(|l| u(&l["errors"])).sum();
    assert_eq!(errors, u(&first["total"]["errors"]));
    assert!(errors > 0);
    let failing = workers.iter().filter(|l| u(&l["errors"]) > 0).count();
    assert!(failing >= 2, "errors in {failing} second(s): {workers:?}");

    // Every I/O fails (from the first): the errors still reach both outputs.
    let out2 = d.path().join("run2.json");
    let live2 = d.path().join("live2.jsonl");
    sb().args(["run", "--buffered", "--rw", "randread", "--bs", "4k"])
        .args(["--rate-iops", "1000", "--ramp", "0", "--duration", "2s"])
        .args(["--debug-fail-from", "1", "--max-errors", "100000000"])
        .args(["--no-progress"])
        .arg(&a)
        .arg("--live")
        .arg(&live2)
        .arg("--metrics")
        .arg(&metrics)
        .arg("--json")
        .arg(&out2)
        .assert()
        .code(1);
    let want = u(&doc(&out2)["total"]["errors"]);
    assert!(want > 0);
    let streamed: u64 = lines(&live2)
        .iter()
        .filter(|l| l["kind"] == "total")
        .map(|l| u(&l["errors"]))
        .sum();
    assert_eq!(streamed, want);
    let m = std::fs::read_to_string(&metrics).unwrap();
    assert!(
        m.lines()
            .any(|l| l.starts_with("stripebench_errors_total{") && l.ends_with(&format!(" {want}"))),
        "{m}"
    );
}

/// `--live - 2>&1` into a reader slower than the stream (a pipe, a socket):
/// stdout and stderr share one open file, so the stream must not make it
/// non-blocking, or the sweep's table, written to stderr while the pipe is
/// full, fails (it aborted the sweep). The lines may be dropped; the table
/// waits for the reader and comes whole.
#[test]
fn a_slow_reader_of_live_stdout_and_stderr_together_gets_the_whole_table() {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a.dat", 4 << 20);
    let b = data_file(d.path(), "b.dat", 4 << 20);
    let run = |out: std::os::fd::OwnedFd, mut read: Box<dyn std::io::Read + Send>| {
        let err = out.try_clone().unwrap();
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
            .env("STRIPEBENCH_STATE_DIR", common::state_dir())
            .env("STRIPEBENCH_HISTORY", crate::common::history_db())
            .args(["sweep", "--buffered", "--jobs", "2", "--param", "bs=4k,8k"])
            .args([
                "--duration",
                "2s",
                "--ramp",
                "0",
                "--no-progress",
                "--live",
                "-",
            ])
            .arg(&a)
            .arg(&b)
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap();
        // Reads nothing until the lines (over 4 KiB a second) have filled
        // what the pipe holds and the table waits for the reader (or the
        // sweep is over), then everything.
        let pid = child.id();
        let reader = std::thread::spawn(move || {
            common::wait_for("the table waiting for the reader", || {
                common::blocked_writing(pid, &[1, 2]) || common::ended(pid)
            });
            let mut text = Vec::new();
            read.read_to_end(&mut text).unwrap();
            String::from_utf8_lossy(&text).into_owned()
        });
        let status = child.wait().unwrap();
        let text = reader.join().unwrap();
        assert!(status.success(), "{status:?}: {text}");
        let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('{')).collect();
        assert!(
            rows.iter().any(|l| l.trim_start().starts_with("4k ")),
            "{text}"
        );
        assert!(
            rows.iter().any(|l| l.trim_start().starts_with("8k ")),
            "{text}"
        );
    };
    // A pipe of one page.
    let (r, w) = std::io::pipe().unwrap();
    // SAFETY: fcntl on our own descriptor.
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, 4096) };
    run(w.into(), Box::new(r));
    // A socket with a small send buffer.
    let (r, w) = std::os::unix::net::UnixStream::pair().unwrap();
    let size: libc::c_int = 4096;
    // SAFETY: setsockopt on our own socket with an int option.
    unsafe {
        libc::setsockopt(
            w.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    run(w.into(), Box::new(r));
}

// Regression (issue 21, item 3): in a mixed pattern the live stream and
// the metrics file showed reads and writes combined only. Each line now
// carries `reads` and `writes` (bytes, ios, rates, that second's
// percentiles), the CSV their columns, the metrics file `direction` labels.
#[test]
fn a_mixed_pattern_streams_reads_and_writes_apart() {
    let d = tempfile::tempdir().unwrap();
    let a = data_file(d.path(), "a.dat", 8 << 20);
    let live = d.path().join("live.jsonl");
    let csv = d.path().join("live.csv");
    let prom = d.path().join("m.prom");
    let out = d.path().join("run.json");
    sb().args([
        "run", "--rw", "randrw", "--mix", "70", "--jobs", "2", "--bs", "4k",
    ])
    .args([
        "--duration",
        "2.5s",
        "--ramp",
        "0",
        "--allow-destructive",
        "--no-progress",
    ])
    .arg(&a)
    .arg("--live")
    .arg(&live)
    .arg("--metrics")
    .arg(&prom)
    .arg("--json")
    .arg(&out)
    .assert()
    .success();
    let doc = doc(&out);
    let ls = lines(&live);
    assert!(!ls.is_empty());
    let mut per_worker: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for l in &ls {
        let (r, w) = (&l["reads"], &l["writes"]);
        assert!(r.is_object() && w.is_object(), "no reads/writes: {l}");
        assert_eq!(u(&r["bytes"]) + u(&w["bytes"]), u(&l["bytes"]), "{l}");
        assert_eq!(u(&r["ios"]) + u(&w["ios"]), u(&l["ios"]), "{l}");
        for x in [r, w] {
            if u(&x["ios"]) == 0 {
                assert!(x["p50_ns"].is_null(), "{l}");
                continue;
            }
            if x["p50_ns"].is_null() {
                // A second whose histogram the collector, behind on a busy
                // machine, lost: counted, and said so in the document.
                assert!(
                    u(&doc["live"]["histograms_lost"]) > 0,
                    "percentiles missing, none said lost: {l}"
                );
                continue;
            }
            let (p50, p99, max) = (u(&x["p50_ns"]), u(&x["p99_ns"]), u(&x["max_ns"]));
            assert!(p50 <= p99 && p99 <= max && max <= u(&l["max_ns"]), "{l}");
            let rate = x["bytes_per_sec"].as_f64().unwrap();
            let want = u(&x["bytes"]) as f64 / l["seconds"].as_f64().unwrap();
            assert!((rate - want).abs() < 1.0, "{l}");
        }
        if u(&r["ios"]) > 0 && u(&w["ios"]) > 0 && !r["max_ns"].is_null() && !w["max_ns"].is_null()
        {
            // The combined maximum is one direction's.
            assert_eq!(u(&l["max_ns"]), u(&r["max_ns"]).max(u(&w["max_ns"])), "{l}");
        }
        if l["kind"] == "worker" {
            let e = per_worker
                .entry(l["id"].as_str().unwrap().to_string())
                .or_default();
            e.0 += u(&r["ios"]);
            e.1 += u(&w["ios"]);
        }
    }
    // Each worker's seconds add up to its reads and writes in the document.
    for w in doc["workers"].as_array().unwrap() {
        let id = u(&w["id"]).to_string();
        let bd = &w["by_direction"];
        assert_eq!(
            per_worker[&id],
            (u(&bd["reads"]["ios"]), u(&bd["writes"]["ios"])),
            "worker {id}"
        );
    }
    // The metrics file: read and write series per worker, adding up.
    let m = parse_metrics(&prom);
    let sample = |name: &str, key: &str| -> u64 {
        m.lines()
            .find_map(|l| {
                let mut f = l.split(' ');
                (f.next() == Some(name) && f.next() == Some(key))
                    .then(|| f.next().unwrap().parse().unwrap())
            })
            .unwrap_or_else(|| panic!("no {name} {key} in:\n{m}"))
    };
    let t = a.to_str().unwrap();
    for w in doc["workers"].as_array().unwrap() {
        let k = format!("{t}|{}", u(&w["id"]));
        let bd = &w["by_direction"];
        let (r, wr) = (
            sample("stripebench_direction_ios_total", &format!("{k}|read")),
            sample("stripebench_direction_ios_total", &format!("{k}|write")),
        );
        assert_eq!(r + wr, sample("stripebench_ios_total", &k));
        assert_eq!((r, wr), (u(&bd["reads"]["ios"]), u(&bd["writes"]["ios"])));
        // Every write is in the latency histogram, or counted as one whose
        // latency the collector lost (on a busy host: CI saw 150 of 3039).
        let lost = if m
            .lines()
            .any(|l| l.starts_with("stripebench_direction_latency_lost_ios_total "))
        {
            sample(
                "stripebench_direction_latency_lost_ios_total",
                &format!("{k}|write"),
            )
        } else {
            0
        };
        assert_eq!(
            sample(
                "stripebench_direction_latency_seconds_bucket+Inf",
                &format!("{k}|write")
            ) + lost,
            wr
        );
        assert!(
            lost == 0 || u(&doc["live"]["histograms_lost"]) > 0,
            "lost latencies, none said lost in the document"
        );
    }

    // The CSV form: the read_ and write_ columns, adding up.
    sb().args(["run", "--rw", "randrw", "--mix", "50", "--bs", "4k"])
        .args([
            "--duration",
            "1.2s",
            "--ramp",
            "0",
            "--allow-destructive",
            "--no-progress",
        ])
        .args(["--live-format", "csv", "--live"])
        .arg(&csv)
        .arg(&a)
        .assert()
        .success();
    let mut r = csv::Reader::from_path(&csv).unwrap();
    let head = r.headers().unwrap().clone();
    let col = |n: &str| {
        head.iter()
            .position(|h| h == n)
            .unwrap_or_else(|| panic!("no {n}"))
    };
    let mut rows = 0;
    for rec in r.records() {
        let rec = rec.unwrap();
        let num = |n: &str| rec[col(n)].parse::<u64>().unwrap();
        assert_eq!(
            num("read_bytes") + num("write_bytes"),
            num("bytes"),
            "{rec:?}"
        );
        assert_eq!(num("read_ios") + num("write_ios"), num("ios"), "{rec:?}");
        rows += 1;
    }
    assert!(rows >= 3, "{rows} rows");
}
