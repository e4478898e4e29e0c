//! The seed experiments in configs/ run as their seeds did: cold (every byte
//! the application reads or writes reaches the device, dev/app near 1) and,
//! for seed 003, warm on purpose (dev/app near 0). Each file runs as its
//! `# command:` line says, on a loop device whose counters see only this
//! test's I/O, with `--duration 2s` as the cap: long enough for a timed
//! point to re-read its slice from the page cache many times over, which is
//! what the configs' `passes = 1` must prevent.
//!
//! Needs root (loop devices, read-ahead): it fails, rather than passing
//! unseen, where it cannot run.

use crate::common;

use std::path::Path;

use crate::common::LoopBed;
use serde_json::Value;

/// Every run document of a `run` or `sweep` output, with a label.
fn runs(doc: &Value) -> Vec<(String, Value)> {
    match doc["points"].as_array() {
        Some(points) => points
            .iter()
            .flat_map(|p| {
                let label = p["values"].to_string();
                p["runs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(move |r| (label.clone(), r.clone()))
            })
            .collect(),
        None => vec![("run".into(), doc.clone())],
    }
}

/// Device bytes over application bytes for what the run did (reads or writes).
fn dev_app(run: &Value) -> (f64, u64) {
    let d = &run["targets"][0]["device"];
    assert!(d.is_object(), "a loop device has counters: {d}");
    let writes = run["config"]["read_pct"] == 0;
    let (dev, app) = if writes {
        ("write_bytes", "app_write_bytes")
    } else {
        ("read_bytes", "app_read_bytes")
    };
    let app = d[app].as_u64().unwrap();
    assert!(app > 0, "the run moved bytes: {d}");
    (d[dev].as_u64().unwrap() as f64 / app as f64, app)
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn every_seed_config_runs_as_its_seed_did() {
    let bed = LoopBed::new(1, 64);
    let dev = bed.devices[0].clone();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let command = text
            .lines()
            .find_map(|l| l.strip_prefix("# command: "))
            .unwrap()
            .trim()
            .to_string();
        let doc = common::run_json(&[
            command.as_str(),
            "--config",
            path.to_str().unwrap(),
            "--duration",
            "2s",
            "--allow-destructive",
            "--no-progress",
            &dev,
        ]);
        let warm = name.starts_with("seed-003");
        for (label, run) in runs(&doc) {
            let (ratio, app) = dev_app(&run);
            let secs = run["window"]["seconds"].as_f64().unwrap();
            println!("{name} {label}: dev/app {ratio:.3} of {app} B in {secs:.2}s");
            if warm {
                assert!(
                    ratio < 0.1,
                    "{name} {label}: cached on purpose, dev/app {ratio:.3}"
                );
            } else {
                assert!(
                    (0.9..1.6).contains(&ratio),
                    "{name} {label}: cold, so dev/app near 1, got {ratio:.3} ({app} B by the application)"
                );
            }
        }
    }
}
