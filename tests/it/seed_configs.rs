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

/// The lines of a sweep's table (stdout) and its document, run from
/// `configs/NAME` with `extra` options on `targets`.
fn seed_sweep(name: &str, extra: &[&str], targets: &[&str]) -> (String, String, Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("configs")
        .join(name);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let out = common::sb()
        .args(["sweep", "--config", path.to_str().unwrap(), "--no-progress"])
        .args(["--json", json.to_str().unwrap()])
        .args(extra)
        .args(targets)
        .output()
        .unwrap();
    common::succeeded(&out);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        common::json(&std::fs::read(&json).unwrap()),
    )
}

// Regression (issue 39, item 10): seed 000's config read the file and the
// raw device at the same time (the seed read them one after the other), so
// each shared the device with the other; and it printed its read-ahead
// note about 18 times (each point's dry run and run on stderr, and each
// point's table).
#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_ext4)),
    ignore = "needs root (loop devices, read-ahead) and mkfs.ext4"
)]
fn seed_000_reads_the_file_then_the_device_and_says_its_note_once() {
    let bed = LoopBed::new(2, 64);
    common::sh_required(
        "mkfs.ext4",
        &["-q", "-F", "-E", "nodiscard", &bed.devices[0]],
    );
    let mnt = tempfile::tempdir().unwrap();
    let _m = common::mount(&[&bed.devices[0]], mnt.path());
    let file = common::data_file(mnt.path(), "f.dat", 32 << 20);
    let (table, err, doc) = seed_sweep(
        "seed-000-readahead.toml",
        &["--duration", "1s", "--param", "readahead=64,512"],
        &[file.to_str().unwrap(), &bed.devices[1]],
    );
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 4, "{table}");
    let mut driven: Vec<(String, String)> = points
        .iter()
        .map(|p| {
            let targets = p["runs"][0]["targets"].as_array().unwrap();
            assert_eq!(targets.len(), 1, "one target at a time: {table}");
            (
                p["runs"][0]["config"]["readahead_kb"].to_string(),
                targets[0]["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // In the order the parameters come (the command line's readahead
    // after the file's target): every pair, each point alone.
    driven.sort();
    let f = file.to_str().unwrap().to_string();
    let d = bed.devices[1].clone();
    assert_eq!(
        driven,
        [
            ("512".into(), d.clone()),
            ("512".into(), f.clone()),
            ("64".into(), d),
            ("64".into(), f),
        ],
        "the file and the device, each alone, at each read-ahead"
    );
    let said = |s: &str| s.matches("a file has no read-ahead of its own").count();
    assert_eq!(said(&table) + said(&err), 1, "said once:\n{table}\n{err}");
}

// Regression (issue 39, item 10): seed 004's config showed totals only
// (every member a block device, so no member's row), and its buffered
// write MB/s was the page cache's rate with nothing saying so.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn seed_004_shows_each_member_and_says_what_its_buffered_write_rate_is() {
    let bed = LoopBed::new(2, 32);
    let (table, _, doc) = seed_sweep(
        "seed-004-members.toml",
        &[
            "--allow-destructive",
            "--param",
            "mode=buffered",
            "--param",
            "rw=read,write",
        ],
        &[&bed.devices[0], &bed.devices[1]],
    );
    assert_eq!(doc["points"].as_array().unwrap().len(), 2, "{table}");
    for dev in &bed.devices {
        assert_eq!(
            table
                .lines()
                .filter(|l| l.contains("└ device") && l.ends_with(dev.as_str()))
                .count(),
            2,
            "a row for member {dev} at each point:\n{table}"
        );
    }
    let write = doc["points"][1]["runs"][0]["total"]["flush"]["durable_bytes_per_sec"]
        .as_f64()
        .expect("a buffered write's durable rate");
    let line = table
        .lines()
        .find(|l| l.contains("rate into the page cache"))
        .unwrap_or_else(|| panic!("the buffered write's rate is named:\n{table}"));
    assert!(
        line.contains(&format!("durable {:.1} MB/s", write / 1e6)),
        "{line}"
    );
    // Regression (issue 39, item 6): the config needed `passes = 1`, and
    // its windows lasted a fraction of a second on small targets. Each
    // point's window is now its duration, and the buffered write's
    // durable figure is still the device's: every pass reached it.
    for p in doc["points"].as_array().unwrap() {
        let run = &p["runs"][0];
        let secs = run["window"]["seconds"].as_f64().unwrap();
        assert!(secs >= 2.0, "a window of {secs} s:\n{table}");
    }
    let total = &doc["points"][1]["runs"][0]["total"];
    let (app, durable) = (
        total["bytes"].as_u64().unwrap(),
        total["flush"]["durable_bytes"].as_u64().unwrap(),
    );
    assert!(total["wrap_flushes"].as_u64().unwrap() >= 1, "{total}");
    assert!(
        durable as f64 >= 0.9 * app as f64,
        "the devices received {durable} of the {app} B written"
    );
}
