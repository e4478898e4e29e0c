//! `stripebench diff` end to end: a member slowed through a blkio cgroup
//! flagged as a significant fall (and `--threshold` failing on it), an
//! unchanged run passing the threshold, diffs of sweeps (repeats and
//! per-second samples), compares and merges built from real runs, and the
//! refusals: another workload (and `--force` listing it), truncated,
//! foreign, other-version, missing, damaged and mismatched documents.

use crate::common;

use std::path::{Path, PathBuf};

use crate::common::{data_file, json, refused, sb, LoopBed, Throttle};
use serde_json::Value;

/// `stripebench CMD ARGS --json PATH INPUTS`, which must succeed; the document.
fn json_to(cmd: &str, args: &[&str], path: &Path, inputs: &[&Path]) -> Value {
    let out = sb()
        .arg(cmd)
        .args(args)
        .arg("--json")
        .arg(path)
        .args(inputs)
        .output()
        .unwrap();
    common::succeeded_as(&out, format_args!("{cmd} {args:?}"));
    read(path)
}

/// `stripebench run ARGS` (no ramp) on `target`, its document at `path`.
fn run_to(path: &Path, target: &Path, args: &[&str]) -> Value {
    let all = [&["--no-progress", "--ramp", "0"], args].concat();
    json_to("run", &all, path, &[target])
}

/// `stripebench sweep ARGS` (no ramp) on `target`, its document at `path`.
fn sweep_to(path: &Path, target: &Path, args: &[&str]) -> Value {
    let all = [&["--no-progress", "--ramp", "0"], args].concat();
    json_to("sweep", &all, path, &[target])
}

fn read(path: &Path) -> Value {
    json(&std::fs::read(path).unwrap())
}

fn write(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

/// `stripebench diff ARGS --json -`: exit code, document, text (stderr).
fn diff(args: &[&Path], extra: &[&str]) -> (i32, Value, String) {
    let out = sb()
        .arg("diff")
        .args(args)
        .args(extra)
        .args(["--json", "-"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr).to_string();
    println!("{text}");
    let code = out.status.code().unwrap_or(-1);
    assert!(code == 0 || code == 1, "exit {code}: {text}");
    (code, json(&out.stdout), text)
}

fn row<'a>(d: &'a Value, label: &str) -> &'a Value {
    d["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == label)
        .unwrap_or_else(|| panic!("no row {label}: {d}"))
}

/// A row's figure: `metric` is one of bytes_per_sec, iops, p50_ns, p99_ns, p99_9_ns.
fn metric<'a>(r: &'a Value, metric: &str) -> &'a Value {
    r["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} in {r}"))
}

fn paths(dir: &Path, names: &[&str]) -> Vec<PathBuf> {
    names.iter().map(|n| dir.join(n)).collect()
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_blkio)),
    ignore = "needs root (loop devices) and a cgroup v1 blkio hierarchy"
)]
fn diff_flags_a_member_throttled_through_blkio_as_a_significant_fall() {
    let bed = LoopBed::new(2, 128);
    let (a, b) = (bed.devices[0].as_str(), bed.devices[1].as_str());
    let dir = tempfile::tempdir().unwrap();
    let [base, new] = [dir.path().join("base.json"), dir.path().join("new.json")];
    let bin = assert_cmd::cargo::cargo_bin("stripebench");
    let run = |out: &Path| {
        format!(
            "exec {} run --no-progress -t 5s --json {} {a} {b}",
            bin.display(),
            out.display()
        )
    };
    // Both members sit on one disk: slowing one frees the disk for the
    // other, whose gain would hide the total's fall. So the first member is
    // held at 8 MB/s in both runs; only the second changes, from 24 MB/s to
    // 4 MB/s. Each is a ceiling the throttle holds, well below what a loaded
    // machine still gives every second: the fall is the throttle's, not the
    // machine's pace (an unthrottled base second was at times slower than
    // the throttled ones on a busy machine).
    for (out, limits) in [
        (&base, vec![(a, 8_000_000u64), (b, 24_000_000)]),
        (&new, vec![(a, 8_000_000), (b, 4_000_000)]),
    ] {
        let t = Throttle::reads("diff", &limits);
        let o = t.shell(&run(out));
        common::succeeded(&o);
    }
    let (code, d, text) = diff(&[&base, &new], &[]);
    assert_eq!(code, 0, "no --threshold: exit 0\n{text}");
    for label in [b, "TOTAL"] {
        let m = metric(row(&d, label), "bytes_per_sec");
        assert_eq!(m["test"]["verdict"], "significant", "{label}: {m}\n{text}");
        assert_eq!(m["test"]["test"], "mann-whitney-u", "{m}");
        assert_eq!(m["test"]["samples"], "per-second intervals", "{m}");
        assert_eq!(
            (m["test"]["n_base"].as_u64(), m["test"]["n_new"].as_u64()),
            (Some(5), Some(5))
        );
        assert!(m["test"]["p"].as_f64().unwrap() < 0.05, "{m}");
        assert!(m["change_pct"].as_f64().unwrap() < -20.0, "{m}");
    }
    let line = text
        .lines()
        .find(|l| l.starts_with(b))
        .unwrap_or_else(|| panic!("no {b} row: {text}"));
    assert!(line.contains("significant"), "{line}");

    // Under --threshold 10 the fall fails the diff, naming its rows.
    let (code, d, text) = diff(&[&base, &new], &["--threshold", "10"]);
    assert_eq!(code, 1, "{text}");
    let crossed: Vec<&str> = d["crossed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(
        crossed
            .iter()
            .any(|c| c.starts_with(&format!("{b} bytes_per_sec"))),
        "{crossed:?}"
    );
    assert!(
        crossed.iter().any(|c| c.starts_with("TOTAL bytes_per_sec")),
        "{crossed:?}"
    );
    // Named in the threshold's line, wherever it stands in it: another
    // row (the throttled first member's p99, one histogram a side) may
    // cross first on a busy machine (CI under stress-ng: "/dev/loop0 p99
    // +48.6%" led the line).
    let line = text
        .lines()
        .find(|l| l.starts_with("threshold 10%: crossed by "))
        .unwrap_or_else(|| panic!("no threshold line: {text}"));
    assert!(line.contains(&format!("{b} MB/s -")), "{line}\n{text}");
}

#[test]
fn an_unchanged_run_passes_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 8 << 20);
    let [a, copy] = [dir.path().join("a.json"), dir.path().join("copy.json")];
    run_to(&a, &t, &["-t", "4s", "--bs", "64k"]);
    std::fs::copy(&a, &copy).unwrap();
    let (code, d, text) = diff(&[&a, &copy], &["--threshold", "10"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(d["crossed"], serde_json::json!([]));
    assert_eq!(d["kind"], "diff");
    assert_eq!(d["of"], "run");
    for r in d["rows"].as_array().unwrap() {
        for m in r["metrics"].as_array().unwrap() {
            assert_eq!(m["change_pct"], 0.0, "{m}");
            assert_ne!(m["test"]["verdict"], "significant", "{m}");
        }
        assert_eq!(metric(r, "bytes_per_sec")["test"]["p"], 1.0, "{r}");
    }
    assert!(
        text.contains("threshold 10%: no MB/s fall or p99 rise crossed it"),
        "{text}"
    );
    // The text goes to stdout when the document does not.
    let out = sb().arg("diff").arg(&a).arg(&copy).output().unwrap();
    common::succeeded(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("TOTAL"));
}

#[test]
fn diff_refuses_another_workload_unless_forced_and_then_lists_it() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 8 << 20);
    let [a, b] = [dir.path().join("a.json"), dir.path().join("b.json")];
    run_to(&a, &t, &["-t", "1s", "--bs", "4k"]);
    run_to(&b, &t, &["-t", "1s", "--bs", "8k", "--jobs", "2"]);
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    refused(
        &["diff", a_s, b_s],
        "ran different workloads: bs (4096 vs 8192), jobs (1 vs 2); diff runs of one workload, or pass --force",
    );
    let (code, d, text) = diff(&[&a, &b], &["--force"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        d["differences"],
        serde_json::json!(["bs (4096 vs 8192)", "jobs (1 vs 2)"])
    );
    assert!(
        text.contains(
            "warning: the workloads differ: bs (4096 vs 8192); diffed because of --force"
        ),
        "{text}"
    );
    assert!(
        text.contains("warning: the workloads differ: jobs (1 vs 2)"),
        "{text}"
    );
    // One second a side: too few samples for any test.
    assert!(text.contains("no test: n too small (1 vs 1)"), "{text}");
}

#[test]
fn diff_refuses_what_it_cannot_read_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 4 << 20);
    let good = dir.path().join("good.json");
    let doc = run_to(&good, &t, &["-t", "1s", "--bs", "4k"]);
    let g = good.to_str().unwrap();
    let file = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_string()
    };
    let text = std::fs::read(&good).unwrap();
    let truncated = file("truncated.json", &text[..text.len() / 2]);
    refused(
        &["diff", g, &truncated],
        "ends in the middle of its JSON (truncated?)",
    );
    let garbage = file("garbage.json", b"MB/s 123\n");
    refused(&["diff", &garbage, g], "is not JSON");
    let other = file("other.json", br#"{"fio version": "fio-3.36", "jobs": []}"#);
    refused(
        &["diff", g, &other],
        "is not a stripebench document (no schema_version)",
    );
    let foreign = file(
        "foreign.json",
        br#"{"schema_version": 1, "tool": {"name": "elbencho"}}"#,
    );
    refused(
        &["diff", g, &foreign],
        "is not a stripebench document (its tool is \"elbencho\")",
    );
    let mut v2 = doc.clone();
    v2["schema_version"] = 2.into();
    let v2p = dir.path().join("v2.json");
    write(&v2p, &v2);
    refused(
        &["diff", g, v2p.to_str().unwrap()],
        "has schema version 2, this stripebench reads 1",
    );
    refused(
        &["diff", g, "/nonexistent/new.json"],
        "cannot read /nonexistent/new.json",
    );
    let mut damaged = doc.clone();
    damaged["total"]["bytes"] = 1.into();
    let dp = dir.path().join("damaged.json");
    write(&dp, &damaged);
    refused(
        &["diff", g, dp.to_str().unwrap()],
        "the document is damaged or was edited",
    );
    // A sweep against a run: two kinds.
    let sweep = dir.path().join("sweep.json");
    sweep_to(&sweep, &t, &["-t", "1s", "--param", "bs=4k"]);
    refused(
        &["diff", g, sweep.to_str().unwrap()],
        "is a run document and",
    );
    refused(
        &["diff", g, sweep.to_str().unwrap()],
        "a sweep document: diff two documents of one kind",
    );
    // A diff is not diffed again.
    let d = dir.path().join("diff.json");
    let out = sb()
        .args(["diff", g, g, "--json"])
        .arg(&d)
        .output()
        .unwrap();
    common::succeeded(&out);
    refused(&["diff", d.to_str().unwrap(), g], "is a diff document");
    // Nor written over its input.
    refused(&["diff", g, g, "--json", g], "cannot write --json");
    refused(
        &["diff", g, g, "--threshold", "0"],
        "is not a percentage above 0",
    );
    refused(
        &["diff", g, g, "--alpha", "1.5"],
        "is not a significance level",
    );
    // Regression: clap's "required arguments were not provided:" named them
    // on the next line, which the one-line error cut off.
    refused(
        &["diff", g],
        "the following required arguments were not provided: <NEW.json>",
    );
}

#[test]
fn sweeps_are_diffed_point_by_point_on_repeats_or_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 8 << 20);
    let [base, copy, new] = [
        dir.path().join("base.json"),
        dir.path().join("copy.json"),
        dir.path().join("new.json"),
    ];
    sweep_to(
        &base,
        &t,
        &["-t", "1s", "--param", "bs=4k,64k", "--repeat", "4"],
    );
    std::fs::copy(&base, &copy).unwrap();
    // Four repeats a side: the repeats are the samples, latency tested too.
    let (code, d, text) = diff(&[&base, &copy], &["--threshold", "5"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(d["of"], "sweep");
    for label in ["bs=4k", "bs=64k"] {
        let r = row(&d, label);
        assert_eq!(r["group"], "point");
        for name in ["bytes_per_sec", "p99_ns"] {
            let m = metric(r, name);
            assert_eq!(m["test"]["samples"], "repeats", "{m}");
            assert_eq!(m["test"]["n_base"], 4, "{m}");
            assert_eq!(m["test"]["verdict"], "noise", "{m}");
        }
    }
    // One 4 s repeat against four of 1 s: every repeat's seconds, pooled.
    sweep_to(&new, &t, &["-t", "4s", "--param", "bs=4k"]);
    let (code, d, text) = diff(&[&base, &new], &[]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(d["only_in_base"], serde_json::json!(["bs=64k"]));
    assert_eq!(d["only_in_new"], serde_json::json!([]));
    let m = metric(row(&d, "bs=4k"), "bytes_per_sec");
    assert_eq!(m["test"]["samples"], "per-second intervals", "{m}");
    assert_eq!(
        (m["test"]["n_base"].as_u64(), m["test"]["n_new"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(
        metric(row(&d, "bs=4k"), "p99_ns")["test"]["verdict"],
        "untested"
    );
    assert!(text.contains("note: repeat: 4 vs 1"), "{text}");
    assert!(text.contains("only in base: bs=64k"), "{text}");
    // Sweeps of other parameters are other workloads.
    let other = dir.path().join("other.json");
    sweep_to(&other, &t, &["-t", "1s", "--param", "jobs=1"]);
    refused(
        &["diff", base.to_str().unwrap(), other.to_str().unwrap()],
        "params (bs vs jobs)",
    );
}

/// A compare document around real run documents as its phases (compare
/// itself needs a striped volume; diff reads only its phases).
fn compare_doc(dir: &Path, target: &Path, phases: &[(&str, &Value)]) -> Value {
    let out = sb()
        .arg("topology")
        .arg("--json")
        .arg(target)
        .output()
        .unwrap();
    common::succeeded(&out);
    let topology = json(&out.stdout);
    let phases: Vec<Value> = phases
        .iter()
        .map(|(name, d)| {
            serde_json::json!({
                "name": name, "direct": true, "workers": d["workers"].as_array().unwrap().len(),
                "bytes_per_sec": d["total"]["bytes_per_sec"], "iops": d["total"]["iops"],
                "p99_ns": d["total"]["latency_ns"]["p99"], "cpu_sec_per_gb": null, "document": d,
            })
        })
        .collect();
    serde_json::json!({
        "schema_version": 1, "tool": phases[0]["document"]["tool"], "interrupted": false,
        "volume": dir.display().to_string(), "topology": topology, "test_file": null,
        "phases": phases, "stripe_efficiency": null, "members": [], "slowest": null, "notes": [],
    })
}

#[test]
fn compares_are_diffed_phase_by_phase() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 8 << 20);
    let runs: Vec<Value> = paths(dir.path(), &["r1.json", "r2.json", "r3.json"])
        .iter()
        .map(|p| run_to(p, &t, &["-t", "4s", "--bs", "64k"]))
        .collect();
    let [base, new] = [dir.path().join("base.json"), dir.path().join("new.json")];
    write(
        &base,
        &compare_doc(
            dir.path(),
            &t,
            &[("members", &runs[0]), ("volume", &runs[1])],
        ),
    );
    write(&new, &compare_doc(dir.path(), &t, &[("members", &runs[2])]));
    let (code, d, text) = diff(&[&base, &new], &[]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(d["of"], "compare");
    let r = row(&d, "members");
    assert_eq!(r["group"], "phase");
    let m = metric(r, "bytes_per_sec");
    assert_eq!(m["base"], runs[0]["total"]["bytes_per_sec"]);
    assert_eq!(m["new"], runs[2]["total"]["bytes_per_sec"]);
    assert_eq!(m["test"]["n_base"], 4, "{m}");
    assert!(m["test"]["p"].is_number(), "{m}");
    assert_eq!(d["only_in_base"], serde_json::json!(["volume"]));
    assert!(text.contains("only in base: volume"), "{text}");
}

#[test]
fn merges_are_diffed_host_by_host_and_as_a_fleet() {
    let dir = tempfile::tempdir().unwrap();
    let t1 = data_file(dir.path(), "t1", 8 << 20);
    let t2 = data_file(dir.path(), "t2", 8 << 20);
    let mut merged = Vec::new();
    for side in ["base", "new"] {
        // Two "hosts": this machine's runs, named node1 and node2.
        let mut docs = Vec::new();
        for (host, t) in [("node1", &t1), ("node2", &t2)] {
            let p = dir.path().join(format!("{side}-{host}.json"));
            let mut v = run_to(&p, t, &["-t", "4s", "--bs", "64k"]);
            v["host"]["hostname"] = host.into();
            write(&p, &v);
            docs.push(p);
        }
        let m = dir.path().join(format!("{side}.json"));
        let inputs: Vec<&Path> = docs.iter().map(PathBuf::as_path).collect();
        // Run one after another: not concurrent, merged all the same.
        json_to("merge", &["--force"], &m, &inputs);
        merged.push(m);
    }
    let (code, d, text) = diff(&[&merged[0], &merged[1]], &[]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(d["of"], "merge");
    for (label, group) in [("node1", "host"), ("node2", "host"), ("FLEET", "fleet")] {
        let r = row(&d, label);
        assert_eq!(r["group"], group);
        let m = metric(r, "bytes_per_sec");
        assert_eq!(m["test"]["n_base"], 4, "{label}: {m}");
        assert!(m["test"]["p"].is_number(), "{m}");
    }
    let fleet = metric(row(&d, "FLEET"), "bytes_per_sec");
    assert_eq!(fleet["base"], read(&merged[0])["total"]["bytes_per_sec"]);
    assert!(text.contains("FLEET"), "{text}");
    // A fleet of another size is another workload.
    let three = dir.path().join("three.json");
    let inputs = paths(
        dir.path(),
        &["base-node1.json", "base-node2.json", "new-node1.json"],
    );
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    json_to("merge", &["--force"], &three, &inputs);
    refused(
        &["diff", merged[0].to_str().unwrap(), three.to_str().unwrap()],
        "ran different workloads: hosts (2 vs 3)",
    );
    // Two runs of one hostname: told apart by file, but their workers are
    // not, so their rows are untested (the fleet is).
    let (code, d, text) = diff(&[&three, &three], &[]);
    assert_eq!(code, 0, "{text}");
    let m = metric(row(&d, "node1 (base-node1)"), "bytes_per_sec");
    assert_eq!(m["test"]["verdict"], "untested", "{m}");
    assert!(
        m["test"]["note"]
            .as_str()
            .unwrap()
            .contains("hostname repeats"),
        "{m}"
    );
    let fleet = metric(row(&d, "FLEET"), "bytes_per_sec");
    assert_eq!(fleet["test"]["verdict"], "noise", "{fleet}");
}

/// A run on a schedule measures latency at that load: runs at two rates are
/// two workloads. A curve's points are matched by their share ("50%"), not
/// by the IOPS each side worked out from its own unthrottled point.
#[test]
fn runs_at_different_rates_are_refused_and_curves_are_diffed_by_share() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 8 << 20);
    let [a, b] = [dir.path().join("a.json"), dir.path().join("b.json")];
    run_to(&a, &t, &["-t", "1s", "--bs", "4k", "--rate-iops", "100"]);
    run_to(&b, &t, &["-t", "1s", "--bs", "4k", "--rate-iops", "200"]);
    refused(
        &["diff", a.to_str().unwrap(), b.to_str().unwrap()],
        "ran different workloads: rate (100 IOPS vs 200 IOPS); diff runs of one workload, or pass --force",
    );
    let [c, d] = [dir.path().join("c.json"), dir.path().join("d.json")];
    for p in [&c, &d] {
        sweep_to(
            p,
            &t,
            &[
                "-t",
                "1s",
                "--bs",
                "4k",
                "--param",
                "rate=curve",
                "--curve",
                "50",
            ],
        );
    }
    let (code, doc, text) = diff(&[&c, &d], &[]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(doc["differences"], serde_json::json!([]), "{text}");
    for label in ["rate=max", "rate=50%"] {
        row(&doc, label);
    }
}
