//! Many targets and many workers (issue 23): a warning that many share is
//! one line, the text table past `--rows` is summarised, and a run over
//! hundreds of loop devices completes with every target in its document.
//! Structure and counts only, never speed.

use crate::common::*;

/// Lines of `text` that contain `what`.
fn lines_with(text: &[u8], what: &str) -> usize {
    String::from_utf8_lossy(text)
        .lines()
        .filter(|l| l.contains(what))
        .count()
}

/// sysfs values to write back when dropped (before the loop devices,
/// declared after them, are detached).
struct Settings(Vec<(String, String)>);

impl Drop for Settings {
    fn drop(&mut self) {
        for (knob, value) in &self.0 {
            let _ = std::fs::write(knob, value);
        }
    }
}

/// Seen in the issue: 64 targets printed 64 "larger than one request"
/// lines and 64 "keeps no I/O statistics" lines.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn sixty_four_devices_with_one_limit_say_it_once() {
    let bed = LoopBed::new(64, 1);
    // Our own devices: a small request limit, and no statistics; put back
    // before they are detached (a loop device keeps its queue settings for
    // whoever attaches it next).
    let _settings = Settings(
        bed.devices
            .iter()
            .flat_map(|d| {
                let q = format!("/sys/block/{}/queue", d.trim_start_matches("/dev/"));
                [
                    (format!("{q}/max_sectors_kb"), "64"),
                    (format!("{q}/iostats"), "0"),
                ]
            })
            .map(|(knob, value)| {
                let old = std::fs::read_to_string(&knob).unwrap().trim().to_string();
                std::fs::write(&knob, value).unwrap();
                (knob, old)
            })
            .collect(),
    );
    let mut args = vec![
        "run",
        "--json",
        "-",
        "--bs",
        "256k",
        "--io-limit",
        "256k",
        "-t",
        "5s",
    ];
    args.extend(bed.devices.iter().map(String::as_str));
    let out = sb().args(&args).output().unwrap();
    succeeded(&out);
    let over = "is larger than one request to";
    // Once before the run, once in the text report (stderr: stdout holds
    // the document), each time for all 64.
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(lines_with(&out.stderr, over), 2, "{err}");
    assert!(
        err.lines()
            .filter(|l| l.contains(over))
            .all(|l| l.contains("64 devices (loop")),
        "{err}"
    );
    assert_eq!(lines_with(&out.stderr, "keep no I/O statistics"), 1);
    assert_eq!(lines_with(&out.stderr, "keeps no I/O statistics"), 0);
    let doc = json(&out.stdout);
    let said: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| crate::common::warning_text(w))
        .filter(|w| w.contains(over))
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].starts_with("64 devices (loop"), "{}", said[0]);
    // The document keeps every target.
    assert_eq!(doc["targets"].as_array().unwrap().len(), 64);
    assert_eq!(doc["workers"].as_array().unwrap().len(), 64);
}

/// Seen in the issue: `run --rate 50MB/s --jobs 200` printed 201 warning
/// lines; the workers that miss their schedule are one line.
#[test]
fn two_hundred_workers_behind_schedule_are_a_few_lines() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "f.dat", 16 << 20);
    let out = sb()
        .args([
            "run", "--rate", "50MB/s", "--jobs", "200", "--bs", "64k", "-t", "1s",
        ])
        .arg(&f)
        .output()
        .unwrap();
    succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let warnings = lines_with(&out.stdout, "warning:");
    // One per kind (and per unit a latency range crosses), not one per worker.
    assert!(warnings <= 4, "{warnings} warning lines:\n{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("warning: worker w"))
            .count(),
        0,
        "{text}"
    );
    // The table, past --rows 32: the summary rows, not 200 worker rows.
    assert!(text.lines().any(|l| l.starts_with("median ")), "{text}");
    assert!(text.contains("200 workers, past --rows 32"), "{text}");
    let rows_all = sb()
        .args([
            "run", "--rows", "all", "--jobs", "40", "--bs", "64k", "-t", "200ms",
        ])
        .arg(&f)
        .output()
        .unwrap();
    succeeded(&rows_all);
    let t = String::from_utf8_lossy(&rows_all.stdout);
    let worker_rows = t
        .lines()
        .filter(|l| l.starts_with('w') && l[1..].starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(worker_rows, 40, "{t}");
}

/// `--rows` takes a count or `all`.
#[test]
fn rows_refuses_what_is_no_count() {
    for bad in ["0", "some"] {
        let out = sb()
            .args(["run", "--rows", bad, "/nonexistent"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--rows {bad}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--rows"),
            "--rows {bad}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// One run over 256 loop devices completes, every target and worker in
/// its document (CI's 2 cores: a short window, small requests).
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_run_over_256_loop_devices_has_every_target() {
    let bed = LoopBed::new(256, 1);
    let mut args = vec!["run", "--json", "-", "--bs", "4k", "-t", "1s"];
    args.extend(bed.devices.iter().map(String::as_str));
    let out = sb().args(&args).output().unwrap();
    succeeded(&out);
    let doc = json(&out.stdout);
    let paths: std::collections::BTreeSet<&str> = doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 256);
    for d in &bed.devices {
        assert!(paths.contains(d.as_str()), "{d} missing");
    }
    assert_eq!(doc["workers"].as_array().unwrap().len(), 256);
    // The table on stderr (stdout holds the document) is summarised.
    assert!(String::from_utf8_lossy(&out.stderr).contains("256 workers, past --rows 32"));
}
