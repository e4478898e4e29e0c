//! Capacity planning on a members sweep the binary made (on the mock
//! engine, so the fit is exact), and the refusals when the result has no
//! scaling curve to fit.

use crate::common;

use std::path::{Path, PathBuf};

use crate::common::{data_file, json, sb};
use serde_json::{json, Value};

/// A members sweep the binary made, read back by `plan`. On the mock
/// engine (1 ms an I/O, one worker a target) each member adds exactly what
/// the first gives, so the fit is exact: lambda is one member's rate, no
/// contention, no coherency, and each prediction is n times lambda.
#[test]
fn plan_fits_a_real_members_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let members: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|n| data_file(dir.path(), n, 8 << 20))
        .collect();
    let sweep = dir.path().join("members.json");
    let out = sb()
        .args([
            "sweep",
            "--debug-mock-engine",
            "1ms",
            "--param",
            "members=1,2,3",
        ])
        .args([
            "--bs",
            "256k",
            "--duration",
            "400ms",
            "--ramp",
            "0",
            "--json",
        ])
        .arg(&sweep)
        .args(&members)
        .output()
        .unwrap();
    common::succeeded(&out);
    let svg = dir.path().join("plan.svg");
    let out = sb()
        .arg("plan")
        .arg(&sweep)
        .args([
            "--at", "8,16", "--target", "100GB/s", "--json", "-", "--force", "--plot",
        ])
        .arg(&svg)
        .output()
        .unwrap();
    common::succeeded(&out);
    let p = json(&out.stdout);
    // 399 I/Os of 256 KiB complete before the 400 ms deadline.
    let lambda = (399u64 * (256 << 10)) as f64 / 0.4;
    assert_eq!(p["fit"]["lambda"].as_f64().unwrap(), lambda, "{p}");
    assert_eq!(p["fit"]["sigma"].as_f64().unwrap(), 0.0, "{p}");
    assert_eq!(p["fit"]["kappa"].as_f64().unwrap(), 0.0, "{p}");
    assert_eq!(p["points"].as_array().unwrap().len(), 3);
    assert_eq!(
        p["predictions"],
        json!([[8.0, 8.0 * lambda], [16.0, 16.0 * lambda]])
    );
    assert!(p["target"]["note"].as_str().is_some());
    roxmltree::Document::parse(&std::fs::read_to_string(&svg).unwrap()).expect("well-formed SVG");
}

#[test]
fn plan_refuses_results_without_a_curve() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 2 << 20);
    let bs_sweep = dir.path().join("bs.json");
    sb().args([
        "sweep",
        "--param",
        "bs=64k,128k,256k",
        "--duration",
        "200ms",
        "--ramp",
        "0",
        "--json",
    ])
    .arg(&bs_sweep)
    .arg(&t)
    .assert()
    .success();
    let out = sb().arg("plan").arg(&bs_sweep).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("members or jobs"));
    let jobs = dir.path().join("jobs.json");
    sb().args([
        "sweep",
        "--param",
        "jobs=1,2",
        "--duration",
        "200ms",
        "--ramp",
        "0",
        "--json",
    ])
    .arg(&jobs)
    .arg(&t)
    .assert()
    .success();
    let out = sb().arg("plan").arg(&jobs).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("at least 3 distinct N"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = sb()
        .args(["plan", "--target", "fast"])
        .arg(&jobs)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A jobs=1,2,3 sweep on a file, as a document to damage.
fn jobs_sweep(dir: &Path) -> Value {
    let t = data_file(dir, "t", 4 << 20);
    let out = dir.join("jobs123.json");
    sb().args([
        "sweep",
        "--param",
        "jobs=1,2,3",
        "--bs",
        "64k",
        "--duration",
        "200ms",
        "--ramp",
        "0",
        "--json",
    ])
    .arg(&out)
    .arg(&t)
    .assert()
    .success();
    json(&std::fs::read(&out).unwrap())
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(v).unwrap()).unwrap();
    p
}

/// `plan ARGS`: exit code, stdout, stderr.
fn plan(args: &[&Path], extra: &[&str]) -> (Option<i32>, String, String) {
    let out = sb().arg("plan").args(args).args(extra).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn refused(args: &[&Path], extra: &[&str], expect: &[&str]) {
    let (code, _, err) = plan(args, extra);
    assert_eq!(code, Some(2), "{args:?}: {err}");
    for e in expect {
        assert!(err.contains(e), "expected '{e}' in: {err}");
    }
    assert_eq!(err.lines().count(), 1, "one line: {err}");
}

// Regression (issue 13, item 7): unparseable or missing values became 0 and
// entered the fit, N = 0 printed inf%, N = -1 was fitted, all-zero points
// printed NaN%.
#[test]
fn plan_refuses_garbage_naming_the_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let good = jobs_sweep(dir.path());
    assert_eq!(good["points"].as_array().unwrap().len(), 3);
    let g = write(dir.path(), "good.json", &good);
    // --force: a short sweep on a shared machine may fit poorly; this test is about garbage.
    let (code, _, err) = plan(&[&g], &["--force"]);
    assert_eq!(code, Some(0), "{err}");

    for (name, value, field) in [
        ("abc.json", json!("abc"), "points[0].values[0] (jobs)"),
        ("zero.json", json!("0"), "points[0].values[0] (jobs)"),
        ("neg.json", json!("-1"), "points[0].values[0] (jobs)"),
        ("half.json", json!("1.5"), "points[0].values[0] (jobs)"),
        ("none.json", Value::Null, "points[0].values[0] (jobs)"),
    ] {
        let mut v = good.clone();
        v["points"][0]["values"][0][1] = value;
        let p = write(dir.path(), name, &v);
        refused(&[&p], &[], &[name, field, "whole number"]);
    }
    for (name, value) in [("huge.json", json!(1e308)), ("text.json", json!("fast"))] {
        let mut v = good.clone();
        v["points"][1]["bytes_per_sec_median"] = value;
        let p = write(dir.path(), name, &v);
        refused(&[&p], &[], &[name, "points[1].bytes_per_sec_median"]);
    }
    let mut v = good.clone();
    v["points"][2]
        .as_object_mut()
        .unwrap()
        .remove("bytes_per_sec_median");
    let p = write(dir.path(), "missing.json", &v);
    refused(
        &[&p],
        &[],
        &["missing.json", "points[2].bytes_per_sec_median"],
    );
    // A median its runs do not support.
    let mut v = good.clone();
    let m = v["points"][0]["bytes_per_sec_median"].as_f64().unwrap();
    v["points"][0]["bytes_per_sec_median"] = json!(m * 10.0);
    let p = write(dir.path(), "median.json", &v);
    refused(&[&p], &[], &["median.json", "outside its runs'"]);
    // A run inside the sweep whose rate is not its bytes over its window.
    let mut v = good.clone();
    v["points"][1]["runs"][0]["total"]["bytes_per_sec"] = json!(1e308);
    let p = write(dir.path(), "run.json", &v);
    refused(
        &[&p],
        &[],
        &["run.json", "points[1].runs[0].total.bytes_per_sec"],
    );
    // Every point at 0 B/s: nothing to fit.
    let mut v = good.clone();
    for pt in v["points"].as_array_mut().unwrap() {
        pt["bytes_per_sec_median"] = json!(0.0);
        pt["runs"] = json!([]);
    }
    let p = write(dir.path(), "zeros.json", &v);
    refused(&[&p], &[], &["every point measured 0 B/s"]);
}

/// A run document on `n` files, with `extra` options.
fn run_on(dir: &Path, name: &str, n: usize, extra: &[&str]) -> PathBuf {
    let files: Vec<PathBuf> = (0..n)
        .map(|i| data_file(dir, &format!("{name}{i}.dat"), 1 << 20))
        .collect();
    let out = dir.join(format!("{name}.json"));
    sb().args(["run", "--duration", "200ms", "--ramp", "0", "--bs", "64k"])
        .args(extra)
        .arg("--json")
        .arg(&out)
        .args(&files)
        .assert()
        .success();
    out
}

// Regression (issue 13, items 7 and 9c): sweeps over jobs and runs (N =
// targets) were fitted together, and so were runs of different workloads.
#[test]
fn plan_refuses_mixed_kinds_of_n_and_mixed_workloads() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write(dir.path(), "jobs.json", &jobs_sweep(dir.path()));
    let r1 = run_on(dir.path(), "r1", 1, &[]);
    let r2 = run_on(dir.path(), "r2", 2, &[]);
    let r3 = run_on(dir.path(), "r3", 3, &[]);
    // --force: three short runs on a shared machine may fit poorly.
    let (code, out, err) = plan(&[&r1, &r2, &r3], &["--force"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("N = targets"), "{out}");
    refused(
        &[&sweep, &r1],
        &[],
        &["r1.json gives N as targets", "jobs.json as jobs"],
    );
    let rand = run_on(dir.path(), "rand", 3, &["--rw", "randread", "--bs", "4k"]);
    refused(
        &[&r1, &r2, &rand],
        &[],
        &[
            "rand.json ran a different workload than",
            "r1.json",
            "--force",
        ],
    );
    let (code, out, err) = plan(&[&r1, &r2, &rand], &["--force"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("warning: ") && out.contains("fitted together because of --force"),
        "{out}"
    );
}

/// Run documents on 1..=4 files, each made `f[i]` times the first one's
/// rate by stretching its window (as if it had taken that much longer for
/// the same bytes): real runs, with a curve chosen by the test.
fn curve(dir: &Path, f: &[f64]) -> Vec<PathBuf> {
    let docs: Vec<PathBuf> = (0..f.len())
        .map(|i| run_on(dir, &format!("c{i}"), i + 1, &[]))
        .collect();
    // The scale that only ever lengthens a window (k >= 1 below): a
    // shorter one would hold I/Os that need more time in flight than it has
    // (Little's law), and be refused as edited.
    let base = docs
        .iter()
        .zip(f)
        .map(|(p, &fi)| {
            json(&std::fs::read(p).unwrap())["total"]["bytes_per_sec"]
                .as_f64()
                .unwrap()
                / fi
        })
        .fold(f64::INFINITY, f64::min);
    docs.iter()
        .zip(f)
        .map(|(p, &fi)| {
            let mut v = json(&std::fs::read(p).unwrap());
            let k = v["total"]["bytes_per_sec"].as_f64().unwrap() / (base * fi);
            let secs = v["window"]["seconds"].as_f64().unwrap() * k;
            let start = v["window"]["start_unix_sec"].as_f64().unwrap();
            v["window"]["seconds"] = secs.into();
            v["window"]["end_unix_sec"] = (start + secs).into();
            v["total"]["seconds"] = secs.into();
            for key in ["bytes_per_sec", "iops"] {
                let x = v["total"][key].as_f64().unwrap() / k;
                v["total"][key] = x.into();
            }
            // Workers and targets keep their own seconds inside the window
            // (a document whose worker outlasts its window is refused).
            for list in ["workers", "targets"] {
                for e in v[list].as_array_mut().unwrap() {
                    let secs = e["seconds"].as_f64().unwrap() * k;
                    e["seconds"] = secs.into();
                    for key in ["bytes_per_sec", "iops"] {
                        let x = e[key].as_f64().unwrap() / k;
                        e[key] = x.into();
                    }
                }
            }
            write(dir, p.file_name().unwrap().to_str().unwrap(), &v)
        })
        .collect()
}

// Regression (issue 21, item 5): plan fitted with "error 50.8% RMS" and
// still predicted N=16 = 166.8 MB/s.
#[test]
fn plan_refuses_to_predict_from_a_fit_it_should_not_trust() {
    let dir = tempfile::tempdir().unwrap();
    let docs = curve(dir.path(), &[1.0, 0.3, 2.5, 0.4]);
    let files: Vec<&Path> = docs.iter().map(PathBuf::as_path).collect();
    let (code, out, err) = plan(&files, &["--at", "16"]);
    assert_eq!(code, Some(2), "{out}{err}");
    // The fit and its residuals are printed, and no prediction.
    assert!(
        out.contains("RMS of the mean (predictions need at most 10%)"),
        "{out}{err}"
    );
    assert!(out.contains("residual"), "{out}");
    assert!(!out.contains("predicted at"), "{out}");
    for e in [
        "refusing to predict",
        "above the 10%",
        "more points past the knee",
        "--repeat",
        "--force",
    ] {
        assert!(err.contains(e), "expected '{e}' in: {err}");
    }
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    // --force predicts, says so, and gives the interval.
    let (code, out, err) = plan(&files, &["--at", "16", "--force"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("warning: predicted anyway (--force)"), "{out}");
    assert!(
        out.contains("predicted at N = 16:") && out.contains("interval"),
        "{out}"
    );

    // A curve the law describes: predictions with an interval from the
    // bootstrap, whose seed is reported.
    let dir = tempfile::tempdir().unwrap();
    let docs = curve(dir.path(), &[1.0, 1.9, 2.6, 3.0]);
    let files: Vec<&Path> = docs.iter().map(PathBuf::as_path).collect();
    let (code, out, err) = plan(&files, &["--at", "6,16", "--json", "-"]);
    assert_eq!(code, Some(0), "{err}");
    let p = json(out.as_bytes());
    assert_eq!(p["trusted"], true, "{p}");
    assert_eq!(p["max_rel_rmse"], 0.1);
    assert_eq!(p["bootstrap"]["seed"], 21);
    assert_eq!(p["residuals"].as_array().unwrap().len(), 4);
    let iv = p["intervals"].as_array().unwrap();
    assert_eq!(iv.len(), 2, "{p}");
    for (i, pred) in iv.iter().zip(p["predictions"].as_array().unwrap()) {
        let (lo, hi) = (
            i["low_bytes_per_sec"].as_f64().unwrap(),
            i["high_bytes_per_sec"].as_f64().unwrap(),
        );
        let x = pred[1].as_f64().unwrap();
        assert!(lo <= hi && lo > 0.0, "{i}");
        assert!(lo <= x * 1.0001 && x <= hi * 1.0001, "{x} outside {i}");
    }
    // The same points, the same seed: the same interval.
    let (_, again, _) = plan(&files, &["--at", "6,16", "--json", "-"]);
    assert_eq!(json(again.as_bytes())["intervals"], p["intervals"]);
}
