//! Many hosts: merge is exact and associative, warns when windows do not
//! overlap, refuses what it cannot merge; --start-at holds a run until its
//! instant; scripts/fleet.sh runs two "hosts" on this machine (two processes
//! on two sets of loop devices) and merges them.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{buckets, data_file, hist, json, sb, u, LoopBed};
use serde_json::Value;

fn run_doc(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let t = data_file(dir, &format!("{name}.dat"), 2 << 20);
    let out = dir.join(format!("{name}.json"));
    sb().args([
        "run",
        "--duration",
        "300ms",
        "--ramp",
        "0",
        "--bs",
        "64k",
        "--json",
    ])
    .arg(&out)
    .args(extra)
    .arg(&t)
    .assert()
    .success();
    out
}

/// Runs measured together, as a fleet's hosts are: each on its own file,
/// all released at one `--start-at` instant, so their windows overlap.
fn run_docs(dir: &Path, runs: &[(&str, &[&str])]) -> Vec<PathBuf> {
    // The files first: on a loaded machine their writing could take the
    // instant's two seconds, and a run refuses a --start-at in the past.
    let targets: Vec<PathBuf> = runs
        .iter()
        .map(|(name, _)| data_file(dir, &format!("{name}.dat"), 2 << 20))
        .collect();
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        + 2.0;
    let at = format!("{at:.3}");
    let children: Vec<(PathBuf, std::process::Child)> = runs
        .iter()
        .zip(&targets)
        .map(|((name, extra), t)| {
            let out = dir.join(format!("{name}.json"));
            let child = Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
                .env("STRIPEBENCH_STATE_DIR", common::state_dir())
                .env("STRIPEBENCH_HISTORY", crate::common::history_db())
                .args(["run", "--duration", "300ms", "--ramp", "0", "--bs", "64k"])
                .args(["--no-progress", "--start-at", &at, "--json"])
                .arg(&out)
                .args(*extra)
                .arg(t)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap();
            (out, child)
        })
        .collect();
    children
        .into_iter()
        .map(|(out, mut c)| {
            assert!(c.wait().unwrap().success(), "{}", out.display());
            out
        })
        .collect()
}

fn abc(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let mut d = run_docs(dir, &[("a", &[]), ("b", &[]), ("c", &[])]).into_iter();
    (d.next().unwrap(), d.next().unwrap(), d.next().unwrap())
}

fn merge(files: &[&Path], extra: &[&str]) -> (Option<i32>, Value, String) {
    let out = sb()
        .arg("merge")
        .args(files)
        .args(["--json", "-"])
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let doc = if out.status.success() {
        json(&out.stdout)
    } else {
        Value::Null
    };
    (out.status.code(), doc, err)
}

/// The value at quantile q of bucketed samples: the bucket holding the
/// ceil(q x n)-th smallest sample (at least the first), as HdrHistogram
/// defines it.
fn quantile(buckets: &BTreeMap<u64, u64>, q: f64) -> u64 {
    let n: u64 = buckets.values().sum();
    let rank = ((q * n as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for (&value, &count) in buckets {
        seen += count;
        if seen >= rank {
            return value;
        }
    }
    panic!("no sample at rank {rank} of {n}")
}

#[test]
fn merge_adds_up_exactly_and_is_associative() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = abc(dir.path());
    let docs: Vec<Value> = [&a, &b, &c]
        .iter()
        .map(|p| json(&std::fs::read(p).unwrap()))
        .collect();
    let (code, m, _) = merge(&[&a, &b, &c], &[]);
    assert_eq!(code, Some(0));
    assert_eq!(m["kind"], "merge");
    assert_eq!(u(&m["total"]["hosts"]), 3);
    assert_eq!(
        u(&m["total"]["bytes"]),
        docs.iter().map(|d| u(&d["total"]["bytes"])).sum::<u64>()
    );
    assert_eq!(
        u(&m["total"]["ios"]),
        docs.iter().map(|d| u(&d["total"]["ios"])).sum::<u64>()
    );
    assert_eq!(m["workers"].as_array().unwrap().len(), 3);
    // Fleet percentiles are those of every host's samples together. The
    // expectation is computed here, from the hosts' buckets, not with the
    // histogram merge under test.
    let mut all: BTreeMap<u64, u64> = BTreeMap::new();
    for d in &docs {
        for (value, count) in buckets(&hist(&d["total"]["histogram"])) {
            *all.entry(value).or_default() += count;
        }
    }
    let merged = hist(&m["total"]["histogram"]);
    assert_eq!(
        buckets(&merged),
        all,
        "the fleet histogram holds every host's samples, bucket by bucket"
    );
    let total: u64 = all.values().sum();
    assert_eq!(
        total,
        u(&m["total"]["ios"]),
        "one latency sample per I/O counted"
    );
    let fleet = &m["total"]["latency_ns"];
    for (key, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0)] {
        assert_eq!(
            u(&fleet[key]),
            quantile(&all, q),
            "fleet {key} from every sample"
        );
    }
    // merge(merge(a, b), c) == merge(a, b, c)
    let ab = dir.path().join("ab.json");
    sb().arg("merge")
        .args([&a, &b])
        .arg("--json")
        .arg(&ab)
        .assert()
        .success();
    let (_, nested, _) = merge(&[&ab, &c], &[]);
    assert_eq!(nested["total"], m["total"]);
    assert_eq!(nested["hosts"], m["hosts"]);
    assert_eq!(nested["workers"], m["workers"]);
    // Released together: their windows overlap, and nothing says otherwise.
    assert!(m["total"]["overlap_sec"].as_f64().unwrap() > 0.0);
    assert!(
        !m["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| crate::common::warning_text(w)
                .unwrap()
                .contains("do not overlap")),
        "{}",
        m["warnings"]
    );
}

// Regression (issue 21, item 6): two runs 8.3 s apart merged into "FLEET
// 2555.4 MB/s" with only a warning. A fleet total only means something for
// runs measured together.
#[test]
fn merge_refuses_runs_that_did_not_run_together() {
    let dir = tempfile::tempdir().unwrap();
    let a = run_doc(dir.path(), "a", &[]);
    let b = run_doc(dir.path(), "b", &[]);
    let (code, _, err) = merge(&[&a, &b], &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("do not overlap by most of their length")
            && err.contains("they miss one another by")
            && err.contains("--start-at")
            && err.contains("--force"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    let out = sb()
        .arg("merge")
        .args([&a, &b])
        .arg("--force")
        .output()
        .unwrap();
    common::succeeded(&out);
    let table = String::from_utf8_lossy(&out.stdout);
    let total = table
        .lines()
        .find(|l| l.starts_with("FLEET"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(total.starts_with("FLEET, not concurrent"), "{table}");
    assert!(table.contains("merged because of --force"), "{table}");
    // The HTML report's total row says so too.
    let j = dir.path().join("ab.json");
    sb().arg("merge")
        .args([&a, &b])
        .args(["--force", "--json"])
        .arg(&j)
        .assert()
        .success();
    let html = dir.path().join("ab.html");
    sb().arg("report")
        .arg(&j)
        .arg("-o")
        .arg(&html)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("FLEET, not concurrent"));
    // Runs released together merge without --force (the tests above).
}

#[test]
fn merge_refuses_what_it_cannot_merge() {
    let dir = tempfile::tempdir().unwrap();
    let ab = run_docs(dir.path(), &[("a", &[]), ("b", &["--rw", "randread"])]);
    let (a, b) = (ab[0].clone(), ab[1].clone());
    let (code, _, err) = merge(&[&a, &b], &[]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("different workload") && err.contains("rw"),
        "{err}"
    );
    let (code, m, _) = merge(&[&a, &b], &["--force"]);
    assert_eq!(code, Some(0));
    assert!(m["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| crate::common::warning_text(w).unwrap().contains("--force")));
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"hello\": 1}").unwrap();
    let (code, _, err) = merge(&[&a, &junk], &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("not a stripebench document"), "{err}");
    let mut v = json(&std::fs::read(&a).unwrap());
    v["schema_version"] = 99.into();
    let future = dir.path().join("future.json");
    std::fs::write(&future, serde_json::to_vec(&v).unwrap()).unwrap();
    let (code, _, err) = merge(&[&a, &future], &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("schema version 99"), "{err}");
    let (code, _, err) = merge(&[&a], &[]);
    assert_eq!(code, Some(2), "{err}");
}

// Regression (issue 13, item 6): `merge a.json a.json` reported a fleet of
// two hosts at twice the throughput.
#[test]
fn merge_refuses_the_same_run_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, _) = abc(dir.path());
    let copy = dir.path().join("copy.json");
    std::fs::copy(&a, &copy).unwrap();
    let ab = dir.path().join("ab.json");
    sb().arg("merge")
        .args([&a, &b])
        .arg("--json")
        .arg(&ab)
        .assert()
        .success();
    for files in [vec![&a, &a], vec![&a, &copy], vec![&ab, &a], vec![&b, &ab]] {
        let (code, _, err) = merge(&files.iter().map(|p| p.as_path()).collect::<Vec<_>>(), &[]);
        assert_eq!(code, Some(2), "{files:?}: {err}");
        assert!(
            err.contains("repeats the run of host") && err.contains("--force"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
    let one = u(&json(&std::fs::read(&a).unwrap())["total"]["bytes"]);
    let (code, m, _) = merge(&[&a, &a], &["--force"]);
    assert_eq!(code, Some(0));
    assert_eq!(u(&m["total"]["bytes"]), 2 * one, "--force merges as asked");
    assert!(
        m["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| crate::common::warning_text(w)
                .unwrap()
                .contains("merged twice because of --force")),
        "{}",
        m["warnings"]
    );
}

// Regression (issue 13, item 9c): merge accepted a window of 0 s, a
// document without workers but with non-zero totals, and a rate of 1e308.
#[test]
fn merge_refuses_documents_whose_arithmetic_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = abc(dir.path());
    let good = json(&std::fs::read(&b).unwrap());
    let damaged = |name: &str, edit: &dyn Fn(&mut Value)| -> PathBuf {
        let mut v = good.clone();
        edit(&mut v);
        let p = dir.path().join(name);
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        p
    };
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            damaged("w0.json", &|v| v["window"]["seconds"] = 0.0.into()),
            "window.seconds is 0",
        ),
        (
            damaged("t0.json", &|v| v["total"]["seconds"] = (-1.0).into()),
            "total.seconds is -1",
        ),
        (
            damaged("noworkers.json", &|v| v["workers"] = Value::Array(vec![])),
            "add up to 0",
        ),
        (
            damaged("huge.json", &|v| v["total"]["bytes_per_sec"] = 1e308.into()),
            "total.bytes_per_sec is 1e308",
        ),
        (
            damaged("iops.json", &|v| v["total"]["iops"] = "many".into()),
            "total.iops is missing or not a number",
        ),
        (
            damaged("ends.json", &|v| {
                let s = v["window"]["start_unix_sec"].as_f64().unwrap();
                v["window"]["end_unix_sec"] = (s - 5.0).into();
            }),
            "before it starts",
        ),
        (
            // Refused by the arithmetic check, which reads every histogram.
            damaged("hist.json", &|v| v["total"]["histogram"] = "garbage".into()),
            "total.histogram cannot be read",
        ),
    ];
    for (p, expect) in &cases {
        let (code, _, err) = merge(&[&a, p], &[]);
        assert_eq!(code, Some(2), "{}: {err}", p.display());
        let name = p.file_name().unwrap().to_str().unwrap();
        assert!(
            err.contains(name) && err.contains(expect),
            "{expect}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
    // A merged document whose total is not the sum of its hosts.
    let ab = dir.path().join("ab.json");
    sb().arg("merge")
        .args([&a, &b])
        .arg("--json")
        .arg(&ab)
        .assert()
        .success();
    let mut m = json(&std::fs::read(&ab).unwrap());
    m["total"]["bytes_per_sec"] = 1e308.into();
    let bad = dir.path().join("badmerge.json");
    std::fs::write(&bad, serde_json::to_vec(&m).unwrap()).unwrap();
    let (code, _, err) = merge(&[&bad, &c], &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("badmerge.json") && err.contains("its hosts add up to"),
        "{err}"
    );
    let mut m = json(&std::fs::read(&ab).unwrap());
    m["hosts"][0]["seconds"] = 0.0.into();
    std::fs::write(&bad, serde_json::to_vec(&m).unwrap()).unwrap();
    let (code, _, err) = merge(&[&bad, &c], &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("hosts[0].seconds is 0"), "{err}");
}

#[test]
fn start_at_waits_for_its_instant_and_refuses_the_past() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let out = sb()
        .args(["run", "--start-at", "1000000000"])
        .arg(&t)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("in the past"));
    let out = sb()
        .args(["run", "--start-at", "yesterday"])
        .arg(&t)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let at = now + 2.0;
    let d = common::run_json(&[
        "run",
        "--duration",
        "300ms",
        "--ramp",
        "0",
        "--start-at",
        &format!("{at:.3}"),
        t.to_str().unwrap(),
    ]);
    let start = d["window"]["start_unix_sec"].as_f64().unwrap();
    println!(
        "asked to start at {at:.3}, window opened at {start:.3}: {:+.3} s",
        start - at
    );
    assert!(start >= at - 0.001, "never before the instant");
    assert!((d["config"]["start_at_unix_sec"].as_f64().unwrap() - at).abs() < 0.01);
    // RFC 3339 is accepted too. Whole seconds: 3 s ahead, so that a slow
    // start on a busy machine still finds the instant ahead of it.
    let rfc = humantime::format_rfc3339_seconds(
        std::time::SystemTime::now() + std::time::Duration::from_secs(3),
    )
    .to_string();
    sb().args([
        "run",
        "--duration",
        "200ms",
        "--ramp",
        "0",
        "--start-at",
        &rfc,
    ])
    .arg(&t)
    .assert()
    .success();
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn fleet_script_on_two_local_hosts() {
    let bed = LoopBed::new(4, 32);
    let hosts = bed.dir().join("hosts");
    std::fs::write(
        &hosts,
        format!(
            "# two hosts on one machine\nhostA {} {}\nhostB {} {}\n",
            bed.devices[0], bed.devices[1], bed.devices[2], bed.devices[3]
        ),
    )
    .unwrap();
    let out_dir = bed.dir().join("fleet");
    // The launcher's history: the hosts' documents imported into it.
    let launcher = tempfile::tempdir().unwrap();
    let launcher_db = launcher.path().join("fleet.db");
    let bin = assert_cmd::cargo::cargo_bin("stripebench");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fleet.sh");
    let out = Command::new("bash")
        .env("STRIPEBENCH_STATE_DIR", common::state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .arg(&script)
        .args(["--launcher", "local", "--delay", "2", "--bin"])
        .arg(&bin)
        .arg("--out")
        .arg(&out_dir)
        .arg("--history")
        .arg(&launcher_db)
        .arg(&hosts)
        .args(["--", "--duration", "500ms", "--ramp", "100ms"])
        .output()
        .unwrap();
    println!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    common::succeeded(&out);
    let m = json(&std::fs::read(out_dir.join("fleet.json")).unwrap());
    assert_eq!(u(&m["total"]["hosts"]), 2);
    assert_eq!(m["workers"].as_array().unwrap().len(), 4);
    let skew = m["total"]["start_skew_sec"].as_f64().unwrap();
    println!("start skew between the two local hosts: {skew:.4} s");
    assert!(
        m["total"]["overlap_sec"].as_f64().unwrap() > 0.0,
        "one --start-at: the windows overlap"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("history import: 2 run document(s) recorded (4 result(s))"),
        "{err}"
    );
    let h = common::sb()
        .args(["history", "--json", "-", "--history"])
        .arg(&launcher_db)
        .output()
        .unwrap();
    common::succeeded(&h);
    let h = json(&h.stdout);
    assert_eq!(h["disks"].as_array().unwrap().len(), 4, "{h:#}");
}

#[test]
fn merge_records_the_missing_hosts_and_the_preflight() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = abc(dir.path());
    let pf = dir.path().join("preflight.json");
    let host = |h: &str, skew: f64| {
        serde_json::json!({"host": h, "version": "0.1.0", "schema_version": 1, "skew_sec": skew,
            "uncertainty_sec": 0.0004, "rtt_sec": 0.0008, "method": "ping"})
    };
    std::fs::write(
        &pf,
        serde_json::json!({"launcher": "ssh", "max_skew_sec": 0.1, "connect_timeout_sec": 10.0,
            "hosts": [host("hostA", 0.001), host("hostB", -0.003), host("hostC", 0.0)]})
        .to_string(),
    )
    .unwrap();
    let ab = dir.path().join("ab.json");
    let out = sb()
        .arg("merge")
        .args([&a, &b])
        .arg("--preflight")
        .arg(&pf)
        .args(["--missing", "hostC=no document (exit 255)", "--json"])
        .arg(&ab)
        .output()
        .unwrap();
    common::succeeded(&out);
    let table = String::from_utf8_lossy(&out.stdout);
    println!("{table}");
    assert!(table.contains("fleet of 2 host(s) measured, 1 missing (incomplete)"));
    assert!(table.contains("hostC") && table.contains("missing: no document (exit 255)"));
    assert!(table.contains(
        "preflight (ssh): 3 host(s), stripebench 0.1.0; largest clock skew -3.0ms (hostB"
    ));
    let m = json(&std::fs::read(&ab).unwrap());
    assert_eq!(
        u(&m["total"]["hosts"]),
        2,
        "the missing host is not counted"
    );
    assert_eq!(m["missing"][0]["host"], "hostC");
    assert_eq!(m["missing"][0]["reason"], "no document (exit 255)");
    assert_eq!(m["preflight"]["hosts"].as_array().unwrap().len(), 3);
    assert_eq!(m["preflight"]["hosts"][1]["skew_sec"], -0.003);
    // Merged again, the record stays.
    let (code, again, _) = merge(&[&ab, &c], &[]);
    assert_eq!(code, Some(0));
    assert_eq!(again["missing"], m["missing"]);
    assert_eq!(again["preflight"], m["preflight"]);
    // One document is a fleet when the others are missing; without, it is not.
    let (code, one, err) = merge(&[&a], &["--missing", "hostB"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(one["missing"][0]["reason"], "no document");
    // A preflight record that is not one, and a --missing without a host.
    std::fs::write(&pf, "{\"hosts\": []}").unwrap();
    let pfs = pf.to_str().unwrap();
    for (args, expect) in [
        (vec!["--preflight", pfs], "is not a preflight record"),
        (
            vec!["--missing", "=died"],
            "give the host that sent no document",
        ),
    ] {
        let (code, _, err) = merge(&[&a, &b], &args);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(expect), "{err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
}

/// scripts/fleet.sh with these arguments, run here.
fn fleet_sh(args: &[&str]) -> std::process::Output {
    Command::new("bash")
        .env("STRIPEBENCH_STATE_DIR", common::state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fleet.sh"))
        .arg("--bin")
        .arg(assert_cmd::cargo::cargo_bin("stripebench"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn fleet_script_refuses_bad_hostfiles_and_options_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let (t1, t2) = (
        data_file(dir.path(), "t1", 2 << 20),
        data_file(dir.path(), "t2", 2 << 20),
    );
    let (t1, t2) = (t1.to_str().unwrap(), t2.to_str().unwrap());
    let file = |name: &str, text: &str| -> String {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let good = file("good", &format!("hostA {t1}\nhostB {t2}\n"));
    let no_host = file("nohost", &format!("hostA {t1}\n   {t2}\n"));
    let twice = file(
        "twice",
        &format!("hostA {t1}\n# again\nhostA {t1}  # same\n"),
    );
    let per_host = file("perhost", &format!("hostA {t1}\nhostB {t2} -- --bs 4k\n"));
    let empty = file("empty", "# nobody\n\n");
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--launcher", "local", &no_host, "--", "-t", "1s"],
            "nohost line 2: '",
        ),
        (
            vec!["--launcher", "local", &twice, "--", "-t", "1s"],
            "twice line 3: host hostA with the same targets as",
        ),
        (
            vec!["--launcher", "local", &good, "--duration", "1s"],
            "--duration is not a fleet.sh option: run options go after --",
        ),
        (
            vec!["--launcher", "local", &good, "1s"],
            "'1s' after HOSTFILE",
        ),
        (
            vec!["--launcher", "local", &per_host, "--", "-t", "1s"],
            "per-host run options (--bs 4k) make hostB run another workload",
        ),
        (
            vec!["--launcher", "local", &empty, "--", "-t", "1s"],
            "no hosts in",
        ),
        (vec!["--launcher", "rsh", &good], "--launcher is auto, ssh"),
        (
            vec!["--launcher", "local", &good, "--", "--json", "x.json"],
            "fleet.sh sets --json and --start-at itself",
        ),
        (
            vec!["--launcher", "local", &good, "--", "--passes", "1"],
            "give --deadline TIME",
        ),
        (
            vec!["--launcher", "local", "--max-skew", "soon", &good],
            "--max-skew 'soon' is not a time",
        ),
    ];
    for (args, expect) in &cases {
        let mut a = vec!["--out", out];
        a.extend(args);
        let o = fleet_sh(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expect), "{args:?}: '{expect}' in {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
    assert!(
        !Path::new(out).join("hostA.json").exists(),
        "refused before any run"
    );
    // Per-host options with --force: run, merged with a warning.
    let o = fleet_sh(&[
        "--launcher",
        "local",
        "--delay",
        "1s",
        "--force",
        "--out",
        out,
        &per_host,
        "--",
        "-t",
        "300ms",
        "--ramp",
        "0",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let m = json(&std::fs::read(Path::new(out).join("fleet.json")).unwrap());
    assert_eq!(u(&m["total"]["hosts"]), 2);
    assert!(
        m["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| crate::common::warning_text(w)
                .unwrap()
                .contains("merged because of --force")),
        "{}",
        m["warnings"]
    );
}

#[test]
fn version_answers_with_version_schema_and_clock_once_per_line_on_stdin() {
    let now_ns = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
    };
    let before = now_ns();
    let out = sb().args(["version", "--json"]).output().unwrap();
    let after = now_ns();
    common::succeeded(&out);
    let v = json(&out.stdout);
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        u(&v["schema_version"]),
        u64::from(stripebench::document::run::SCHEMA_VERSION)
    );
    let clock = u(&v["clock_unix_ns"]);
    assert!(
        (before..=after).contains(&clock),
        "the clock read while it ran"
    );
    // --on-stdin: once at the start, then once for each line, until the end.
    let out = sb()
        .args(["version", "--json", "--on-stdin"])
        .write_stdin("\n\nping\n")
        .output()
        .unwrap();
    common::succeeded(&out);
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| json(l.as_bytes()))
        .collect();
    assert_eq!(lines.len(), 4);
    assert!(lines
        .windows(2)
        .all(|w| u(&w[0]["clock_unix_ns"]) <= u(&w[1]["clock_unix_ns"])));
    let text = sb().arg("version").output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.starts_with(&format!(
            "stripebench {} (JSON schema version",
            env!("CARGO_PKG_VERSION")
        )),
        "{text}"
    );
}
