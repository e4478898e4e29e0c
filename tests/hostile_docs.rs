//! Documents edited by hand, given to the commands that read them back
//! (`diff`, `report`): each is refused in one line (exit 2) or rendered,
//! never a panic, and never drawn as if measured when it does not add up.

mod common;

use std::path::{Path, PathBuf};

use common::{data_file, refused, sb};
use serde_json::Value;

/// A real one-second run on a small data file: its document's path and JSON.
fn a_run(dir: &Path) -> (PathBuf, Value) {
    let t = data_file(dir, "t", 4 << 20);
    let p = dir.join("run.json");
    let out = sb()
        .args([
            "run",
            "--no-progress",
            "--ramp",
            "0",
            "-t",
            "1s",
            "--bs",
            "4k",
        ])
        .arg("--json")
        .arg(&p)
        .arg(&t)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    (p, v)
}

/// `v` edited by `edit`, written next to the run as `name`.
fn edited(dir: &Path, name: &str, v: &Value, edit: impl FnOnce(&mut Value)) -> String {
    let mut v = v.clone();
    edit(&mut v);
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    p.to_str().unwrap().to_string()
}

/// Regression: a window.seconds of 1e308 made diff allocate its per-second
/// samples ("capacity overflow" panic), and a window opened after the year
/// 9999 panicked report's date formatting.
#[test]
fn edited_windows_are_refused_or_shown_never_panicked_on() {
    let dir = tempfile::tempdir().unwrap();
    let (good, v) = a_run(dir.path());
    let g = good.to_str().unwrap();
    let html = dir.path().join("r.html");
    let h = html.to_str().unwrap();
    let huge = edited(dir.path(), "huge.json", &v, |v| {
        v["window"]["seconds"] = 1e308.into();
    });
    refused(
        &["diff", g, &huge],
        "window.seconds is 1e308, longer than any run",
    );
    refused(&["report", &huge, "-o", h], "window.seconds is 1e308");
    // A window longer than its own timestamps say.
    let long = edited(dir.path(), "long.json", &v, |v| {
        v["window"]["seconds"] = 1e6.into();
    });
    refused(&["diff", &long, g], "but the window runs from");
    // Far in the future, but consistent: shown as the figure it is.
    let future = edited(dir.path(), "future.json", &v, |v| {
        let s = v["window"]["seconds"].as_f64().unwrap();
        v["window"]["start_unix_sec"] = 1e12.into();
        v["window"]["end_unix_sec"] = (1e12 + s).into();
    });
    let out = sb().args(["report", &future, "-o", h]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("window opened at Unix second 1000000000000"));
}

/// Regression: report drew a hand-edited negative total as "-5000.0" MB/s;
/// it now refuses what diff and plan refuse.
#[test]
fn report_refuses_figures_that_do_not_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let (_, v) = a_run(dir.path());
    let html = dir.path().join("r.html");
    let h = html.to_str().unwrap();
    let neg = edited(dir.path(), "neg.json", &v, |v| {
        v["total"]["bytes_per_sec"] = (-5e9).into();
    });
    refused(
        &["report", &neg, "-o", h],
        "total.bytes_per_sec is -5000000000",
    );
    let sum = edited(dir.path(), "sum.json", &v, |v| {
        v["total"]["bytes"] = 1.into();
    });
    refused(
        &["report", &sum, "-o", h],
        "the document is damaged or was edited",
    );
    assert!(!html.exists(), "nothing written");
}
