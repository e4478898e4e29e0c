//! The JSON documents are a contract: each subcommand's document, run on
//! fixed inputs, is reduced to its shape (every field's path and JSON
//! type(s), arrays' elements merged under `[]`) and to the values that must
//! not drift (schema version, config values given on the command line), and
//! compared with `tests/contract/*.json`.
//!
//! The golden is the schema, and every field of it is compared:
//! - a field the document holds must be in the golden, at any depth (inside
//!   arrays too), with types the golden allows; `null` is a type like any
//!   other, so a field the golden knows only as null may not turn into a
//!   number unnoticed, and `number|null` is how the golden says "optional";
//! - a field of the golden must be in the document, by name, also when its
//!   value is null; the only fields that may be absent are those the
//!   document cannot hold this time: elements of an array it has empty,
//!   fields of an object it has null. The golden still declares those
//!   (`.warnings[]`), so an element that does appear is compared;
//! - every array the document holds must have its elements declared.
//!
//! Moving code must leave the goldens unchanged. A change on purpose:
//! `STRIPEBENCH_BLESS=1 cargo test --test it json_contract::`, which rewrites the
//! goldens (keeping what the golden declares that the run could not see, and
//! the types it allows beyond those seen), says on stderr what it blessed, and
//! then compares as always; commit the diff. Under `CI=true` blessing fails.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::common::{data_file, json, sb};
use serde_json::Value;

/// path -> JSON type(s), for every field of `v` (a field's types sorted
/// and joined with `|`; null kept).
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
    *e = join(&kinds(e).into_iter().chain([kind]).collect());
    match v {
        Value::Array(items) => items
            .iter()
            .for_each(|i| shape(i, &format!("{path}[]"), out)),
        // A warning's envelope is the contract (its sentence and its kind);
        // the fields beside them are its kind's (docs/json.md, and each
        // kind's round trip in base::warning), and which kinds a run warns
        // of depends on the machine it ran on (another process's I/O, the
        // CPUs it has), so they are not a fixed run's shape.
        Value::Object(m) if path.ends_with("warnings[]") => ["text", "kind"]
            .iter()
            .filter_map(|k| Some((k, m.get(*k)?)))
            .for_each(|(k, i)| shape(i, &format!("{path}.{k}"), out)),
        Value::Object(m) => m
            .iter()
            .for_each(|(k, i)| shape(i, &format!("{path}.{k}"), out)),
        _ => {}
    }
}

fn kinds(types: &str) -> BTreeSet<&str> {
    types.split('|').filter(|k| !k.is_empty()).collect()
}

fn join(kinds: &BTreeSet<&str>) -> String {
    kinds.iter().copied().collect::<Vec<_>>().join("|")
}

/// Whether `path` is a field the document could not hold this time: below
/// an array it holds empty, or an object it holds only as null (or below a
/// field it lacks for one of those reasons).
fn unobserved(path: &str, got: &BTreeMap<String, String>) -> bool {
    let mut cut = path.len();
    while let Some(i) = path[..cut].rfind(['.', '[']) {
        let parent = &path[..i];
        if let Some(t) = got.get(parent) {
            let t = kinds(t);
            let below_array = path[i..].starts_with("[]");
            return (below_array && !got.contains_key(&path[..i + 2]))
                || (!below_array && t == BTreeSet::from(["null"]));
        }
        cut = i;
    }
    false
}

/// What differs between the golden's shape and the document's.
struct Drift {
    missing: Vec<String>,
    added: Vec<String>,
    changed: Vec<String>,
    undeclared: Vec<String>,
}

impl Drift {
    fn of(want: &BTreeMap<String, String>, got: &BTreeMap<String, String>) -> Drift {
        let missing = want
            .keys()
            .filter(|k| !got.contains_key(*k) && !unobserved(k, got))
            .cloned()
            .collect();
        let added = got
            .keys()
            .filter(|k| !want.contains_key(*k))
            .cloned()
            .collect();
        let changed = got
            .iter()
            .filter_map(|(k, g)| {
                let w = want.get(k)?;
                (!kinds(g).is_subset(&kinds(w))).then(|| format!("{k}: {w} -> {g}"))
            })
            .collect();
        // An array the document holds whose elements the golden does not
        // declare: its elements would go uncompared whenever it is empty.
        let undeclared = got
            .iter()
            .filter(|(k, t)| kinds(t).contains("array") && !want.contains_key(&format!("{k}[]")))
            .map(|(k, _)| format!("{k}[]"))
            .collect();
        Drift {
            missing,
            added,
            changed,
            undeclared,
        }
    }

    fn is_empty(&self) -> bool {
        self.missing.is_empty()
            && self.added.is_empty()
            && self.changed.is_empty()
            && self.undeclared.is_empty()
    }

    fn say(&self) -> String {
        format!(
            "  missing: {:?}\n  added: {:?}\n  changed: {:?}\n  arrays whose elements the golden does not declare: {:?}",
            self.missing, self.added, self.changed, self.undeclared
        )
    }
}

/// The golden blessed from `got` over the `old` one: the document's fields,
/// with the types the old golden allowed beyond those seen (an optional
/// field stays optional, whichever it was seen as this time: device
/// counters and fits are null or not depending on the machine), and the old
/// golden's fields the document could not hold this time. A type that
/// changed is the new one.
fn blessed(
    old: &BTreeMap<String, String>,
    got: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (k, g) in got {
        let seen = kinds(g);
        let t = match old.get(k).map(|w| kinds(w)) {
            Some(w) if seen.is_subset(&w) => join(&w),
            // Seen as null now, or the golden knew it as null: optional.
            Some(w) if seen.contains("null") || w.contains("null") => {
                let values_known = seen.iter().all(|k| *k == "null" || w.contains(k));
                let base = if values_known { w } else { seen };
                join(&base.into_iter().chain(["null"]).collect())
            }
            _ => g.clone(),
        };
        out.insert(k.clone(), t);
    }
    for (k, w) in old {
        if !got.contains_key(k) && unobserved(k, got) {
            out.insert(k.clone(), w.clone());
        }
    }
    out
}

fn contract_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/contract")
        .join(format!("{name}.json"))
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

fn read_golden(path: &Path) -> Option<(BTreeMap<String, String>, Value)> {
    let bytes = std::fs::read(path).ok()?;
    let v: Value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
    let shape = serde_json::from_value(v["shape"].clone())
        .unwrap_or_else(|e| panic!("{}: shape: {e}", path.display()));
    Some((shape, v["pinned"].clone()))
}

/// Compares the documents `docs` (one kind, made on fixed inputs, whose
/// shapes are merged) with the blessed contract `name`, field by field, and
/// the fixed values in `pinned` (JSON pointers) of the first document with
/// their blessed values.
fn check(name: &str, docs: &[&Value], pinned: &[&str]) {
    let mut got = BTreeMap::new();
    for doc in docs {
        shape(doc, "", &mut got);
    }
    let got_pins: BTreeMap<String, Value> = pinned
        .iter()
        .map(|p| {
            (
                p.to_string(),
                docs[0].pointer(p).cloned().unwrap_or(Value::Null),
            )
        })
        .collect();
    let got_pins = serde_json::to_value(got_pins).unwrap();
    let path = contract_path(name);
    if std::env::var_os("STRIPEBENCH_BLESS").is_some() {
        assert!(
            !ci(),
            "{name}: STRIPEBENCH_BLESS is set under CI=true: CI compares the goldens, it never rewrites them"
        );
        let old = read_golden(&path).map(|(s, _)| s).unwrap_or_default();
        let shape = blessed(&old, &got);
        let before = Drift::of(&old, &got);
        let doc = serde_json::json!({ "shape": shape, "pinned": got_pins });
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
        // Past the test harness's capture: said also when the test passes.
        let said = if before.is_empty() {
            "unchanged".to_string()
        } else {
            format!("changed:\n{}", before.say())
        };
        let line = format!("blessed {}: {said}\n", path.display());
        std::io::stderr().write_all(line.as_bytes()).unwrap();
    }
    let (want, want_pins) = read_golden(&path).unwrap_or_else(|| {
        panic!(
            "{}: no golden; bless it with STRIPEBENCH_BLESS=1",
            path.display()
        )
    });
    let drift = Drift::of(&want, &got);
    assert!(
        drift.is_empty(),
        "{name}: the JSON contract changed:\n{}\n(re-bless on purpose with STRIPEBENCH_BLESS=1)",
        drift.say()
    );
    assert_eq!(want_pins, got_pins, "{name}: pinned values changed");
}

fn run_doc(dir: &Path, name: &str, extra: &[&str]) -> (PathBuf, Value) {
    run_doc_exiting(dir, name, extra, 0)
}

/// A run on a fresh 4 MiB file `NAME.dat` that exits with `code`; its
/// document's path and JSON.
fn run_doc_exiting(dir: &Path, name: &str, extra: &[&str], code: i32) -> (PathBuf, Value) {
    let t = data_file(dir, &format!("{name}.dat"), 4 << 20);
    let out = dir.join(format!("{name}.json"));
    sb().args(["run", "--duration", "200ms", "--ramp", "0", "--bs", "64k"])
        .args(["--seed", "7", "--cpus", "0", "--json"])
        .arg(&out)
        .args(extra)
        .arg(&t)
        .assert()
        .code(code);
    let doc = json(&std::fs::read(&out).unwrap());
    (out, doc)
}

/// A run whose reads fail from the 5th on, stopping at 3 errors: its
/// workers' error samples and errno counts are filled in (exit 1).
fn failing_run_doc(dir: &Path) -> Value {
    let extra = ["--max-errors", "3", "--debug-fail-from", "5"];
    run_doc_exiting(dir, "e", &extra, 1).1
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
    check("run", &[&doc, &failing_run_doc(d.path())], &RUN_PINS);
    let (_, doc) = run_doc(
        d.path(),
        "w",
        &["--rw", "randwrite", "--buffered", "--allow-destructive"],
    );
    check("run-buffered-write", &[&doc], &RUN_PINS);
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
    check(
        "sweep",
        &[&sweep],
        &["/schema_version", "/params", "/repeat"],
    );

    let (a, _) = run_doc(d.path(), "a", &[]);
    let (b, _) = run_doc(d.path(), "b", &[]);
    let merged = |extra: &[&str]| {
        let out = sb()
            .arg("merge")
            .arg(&a)
            .arg(&b)
            // Run one after another: not concurrent, merged all the same.
            .args(["--force", "--json", "-"])
            .args(extra)
            .output()
            .unwrap();
        common::succeeded(&out);
        json(&out.stdout)
    };
    // And a fleet with a host that sent nothing: its `missing` filled in.
    check(
        "merge",
        &[&merged(&[]), &merged(&["--missing", "host9=gone"])],
        &["/schema_version", "/kind"],
    );

    let out = sb()
        .arg("plan")
        .arg(&sj)
        // A short sweep on a shared machine may fit poorly: predict anyway.
        .args(["--at", "8", "--force", "--json", "-"])
        .output()
        .unwrap();
    common::succeeded(&out);
    check("plan", &[&json(&out.stdout)], &["/unit"]);
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
    // Exit 1 when a row crossed the threshold: two 200 ms runs on a loaded
    // machine can differ by more than 1000% (a p99). The shape is the same.
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 1)),
        "exit {code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let same = json(&out.stdout);
    // Another workload (4k, and a second target) compared both ways, so
    // the lists of differences, of crossed rows and of the targets only one
    // side has are filled in. It exits 1 when a row crossed the threshold.
    let (c, _) = run_doc(
        d.path(),
        "c",
        &["--bs", "4k", a.with_extension("dat").to_str().unwrap()],
    );
    let other = |base: &Path, new: &Path| {
        let out = sb()
            .arg("diff")
            .arg(base)
            .arg(new)
            .args(["--threshold", "0.001", "--force", "--json", "-"])
            .output()
            .unwrap();
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "exit {code:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        json(&out.stdout)
    };
    check(
        "diff",
        &[&same, &other(&a, &c), &other(&c, &a)],
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
    check("topology", &[&json(&out.stdout)], &["/root/kind"]);
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
        &[&doc],
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
        &[&json(&std::fs::read(&cj).unwrap())],
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
        &[&json(&out.stdout)],
        &["/p99_limit_ns", "/groups/0/answer/rate"],
    );
}
