//! The JSON documents are a contract: each subcommand's document, run on
//! fixed inputs, is reduced to its shape (every field's path and JSON type,
//! with arrays of objects merged) and to the values that must not drift
//! (schema version, config values given on the command line), and compared
//! with `tests/contract/*.json`. Moving code must leave them unchanged;
//! adding a field changes the shape on purpose: re-bless with
//! `STRIPEBENCH_BLESS=1 cargo test --test json_contract` and commit the diff.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{data_file, json, sb};
use serde_json::Value;

/// path -> JSON type(s), for every field of `v`.
fn shape(v: &Value, path: &str, out: &mut BTreeMap<String, String>) {
    let kind = match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let e = out.entry(path.to_string()).or_default();
    if !e.split('|').any(|k| k == kind) {
        let mut kinds: Vec<&str> = e.split('|').filter(|k| !k.is_empty()).collect();
        kinds.push(kind);
        kinds.sort_unstable();
        *e = kinds.join("|");
    }
    match v {
        Value::Array(items) => items
            .iter()
            .for_each(|i| shape(i, &format!("{path}[]"), out)),
        Value::Object(m) => m
            .iter()
            .for_each(|(k, i)| shape(i, &format!("{path}.{k}"), out)),
        _ => {}
    }
}

/// Null and a value are both fine for an optional field: the shape keeps
/// the non-null type, so a run that happened to fill one in still matches.
fn settle(mut m: BTreeMap<String, String>) -> BTreeMap<String, String> {
    for v in m.values_mut() {
        if v.contains('|') {
            *v = v
                .split('|')
                .filter(|k| *k != "null")
                .collect::<Vec<_>>()
                .join("|");
        }
    }
    m
}

fn contract_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/contract")
        .join(format!("{name}.json"))
}

/// Compares `doc` with the blessed contract `name`, field by field, and the
/// fixed values in `pinned` (JSON pointers) with their blessed values.
fn check(name: &str, doc: &Value, pinned: &[&str]) {
    let mut m = BTreeMap::new();
    shape(doc, "", &mut m);
    let got_shape = settle(m);
    let got_pins: BTreeMap<String, Value> = pinned
        .iter()
        .map(|p| {
            (
                p.to_string(),
                doc.pointer(p).cloned().unwrap_or(Value::Null),
            )
        })
        .collect();
    let got = serde_json::json!({ "shape": got_shape, "pinned": got_pins });
    let path = contract_path(name);
    if std::env::var_os("STRIPEBENCH_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        return;
    }
    let want: Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap_or_else(|e| {
            panic!("{}: {e}; bless it with STRIPEBENCH_BLESS=1", path.display())
        }))
        .unwrap();
    let (ws, gs) = (&want["shape"], &got["shape"]);
    let wm = ws.as_object().unwrap();
    let gm = gs.as_object().unwrap();
    // A field inside an array is only missing when that array had elements
    // on both sides (warnings, samples and the like are often empty).
    let absent = |k: &str, other: &serde_json::Map<String, Value>| {
        if other.contains_key(k) {
            return false;
        }
        match k.find("[]") {
            Some(i) => other.keys().any(|o| o.starts_with(&k[..i + 2])),
            None => true,
        }
    };
    let missing: Vec<&String> = wm.keys().filter(|k| absent(k, gm)).collect();
    let added: Vec<&String> = gm.keys().filter(|k| absent(k, wm)).collect();
    let changed: Vec<String> = wm
        .iter()
        .filter_map(|(k, v)| {
            let g = gm.get(k)?;
            // A field that was only ever null may have a value now, and back.
            let compatible = g == v || v == "null" || g == "null";
            (!compatible).then(|| format!("{k}: {v} -> {g}"))
        })
        .collect();
    assert!(
        missing.is_empty() && added.is_empty() && changed.is_empty(),
        "{name}: the JSON contract changed:\n  missing: {missing:?}\n  added: {added:?}\n  changed: {changed:?}\n(re-bless on purpose with STRIPEBENCH_BLESS=1)"
    );
    assert_eq!(
        want["pinned"], got["pinned"],
        "{name}: pinned values changed"
    );
}

fn run_doc(dir: &Path, name: &str, extra: &[&str]) -> (PathBuf, Value) {
    let t = data_file(dir, &format!("{name}.dat"), 4 << 20);
    let out = dir.join(format!("{name}.json"));
    sb().args(["run", "--duration", "200ms", "--ramp", "0", "--bs", "64k"])
        .args(["--seed", "7", "--cpus", "0", "--json"])
        .arg(&out)
        .args(extra)
        .arg(&t)
        .assert()
        .success();
    let doc = json(&std::fs::read(&out).unwrap());
    (out, doc)
}

const RUN_PINS: [&str; 6] = [
    "/schema_version",
    "/config/rw",
    "/config/bs",
    "/config/seed",
    "/config/direct",
    "/tool/name",
];

#[test]
fn run_document_keeps_its_contract() {
    let d = tempfile::tempdir().unwrap();
    let (_, doc) = run_doc(d.path(), "r", &[]);
    check("run", &doc, &RUN_PINS);
    let (_, doc) = run_doc(
        d.path(),
        "w",
        &["--rw", "randwrite", "--buffered", "--allow-destructive"],
    );
    check("run-buffered-write", &doc, &RUN_PINS);
}

#[test]
fn sweep_merge_and_plan_documents_keep_their_contract() {
    let d = tempfile::tempdir().unwrap();
    let t = data_file(d.path(), "t.dat", 4 << 20);
    let sj = d.path().join("sweep.json");
    sb().args([
        "sweep",
        "--param",
        "jobs=1,2,3",
        "--duration",
        "150ms",
        "--ramp",
        "0",
    ])
    .args(["--bs", "64k", "--seed", "7", "--no-progress", "--json"])
    .arg(&sj)
    .arg(&t)
    .assert()
    .success();
    let sweep = json(&std::fs::read(&sj).unwrap());
    check("sweep", &sweep, &["/schema_version", "/params", "/repeat"]);

    let (a, _) = run_doc(d.path(), "a", &[]);
    let (b, _) = run_doc(d.path(), "b", &[]);
    let out = sb()
        .arg("merge")
        .arg(&a)
        .arg(&b)
        // Run one after another: not concurrent, merged all the same.
        .args(["--force", "--json", "-"])
        .output()
        .unwrap();
    common::succeeded(&out);
    check("merge", &json(&out.stdout), &["/schema_version", "/kind"]);

    let out = sb()
        .arg("plan")
        .arg(&sj)
        // A short sweep on a shared machine may fit poorly: predict anyway.
        .args(["--at", "8", "--force", "--json", "-"])
        .output()
        .unwrap();
    common::succeeded(&out);
    check("plan", &json(&out.stdout), &["/unit"]);
}

#[test]
fn diff_document_keeps_its_contract() {
    let d = tempfile::tempdir().unwrap();
    let (a, _) = run_doc(d.path(), "a", &[]);
    let (b, _) = run_doc(d.path(), "b", &[]);
    let out = sb()
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .args(["--threshold", "1000", "--json", "-"])
        .output()
        .unwrap();
    common::succeeded(&out);
    check(
        "diff",
        &json(&out.stdout),
        &["/schema_version", "/kind", "/of", "/threshold_pct"],
    );
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: a loop device")]
fn topology_document_keeps_its_contract() {
    let bed = common::LoopBed::new(1, 8);
    let out = sb()
        .args(["topology", "--json", &bed.devices[0]])
        .output()
        .unwrap();
    common::succeeded(&out);
    check("topology", &json(&out.stdout), &["/root/kind"]);
}

#[test]
fn scheduled_run_curve_and_latency_plan_documents_keep_their_contract() {
    let d = tempfile::tempdir().unwrap();
    // On a schedule: rate per worker, service latency and its histogram.
    let (_, doc) = run_doc(
        d.path(),
        "s",
        &["--rate-iops", "500", "--buffered", "--no-progress"],
    );
    check(
        "run-scheduled",
        &doc,
        &[&RUN_PINS[..], &["/config/rate", "/window/latency_from"]].concat(),
    );
    let t = data_file(d.path(), "c.dat", 4 << 20);
    let cj = d.path().join("curve.json");
    sb().args(["sweep", "--param", "rate=curve", "--curve", "50"])
        .args(["--duration", "150ms", "--ramp", "0", "--buffered"])
        .args(["--bs", "64k", "--seed", "7", "--no-progress", "--json"])
        .arg(&cj)
        .arg(&t)
        .assert()
        .success();
    check(
        "sweep-curve",
        &json(&std::fs::read(&cj).unwrap()),
        &["/schema_version", "/params", "/repeat"],
    );
    let out = sb()
        .arg("plan")
        .arg(&cj)
        .args(["--p99", "1h", "--json", "-"])
        .output()
        .unwrap();
    common::succeeded(&out);
    check(
        "plan-latency",
        &json(&out.stdout),
        &["/p99_limit_ns", "/groups/0/answer/rate"],
    );
}
