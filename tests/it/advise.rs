//! `advise` end to end without a lab: on a file of this machine's disk
//! (no striped layer: every check that needs one is skipped with its
//! reason), its document on stdout with `--json -`, and the options it
//! refuses in one line (exit 2).

use crate::common::{json, sb};

#[test]
fn quick_on_a_plain_disk_skips_what_needs_a_stripe_and_writes_its_document() {
    let dir = tempfile::tempdir().unwrap();
    let out = sb()
        .args(["advise", "--quick", "--fail-on", "info", "--json", "-"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Nothing found on a plain disk, or what was found is in the document:
    // --fail-on info exits 1 exactly when there is a finding.
    let doc = json(&out.stdout);
    assert_eq!(doc["kind"], "findings");
    assert_eq!(doc["quick"], true);
    let found = !doc["findings"].as_array().unwrap().is_empty();
    assert_eq!(out.status.code(), Some(i32::from(found)), "{stderr}");
    // The report went to stderr, stdout being the document's.
    assert!(stderr.contains("stripebench advise"), "{stderr}");
    let checks = doc["checks"].as_array().unwrap();
    let status = |id: &str| {
        checks
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("{id}: {doc}"))["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Read-only without --allow-destructive, and said so.
    assert_eq!(status("writes"), "skipped");
    assert_eq!(status("alignment"), "ran");
    // A mount point's directory: nothing is measured (no block device to
    // set read-ahead on, --quick anyway).
    assert!(doc["measurements"].as_array().unwrap().is_empty());
    for c in checks {
        assert!(!c["detail"].as_str().unwrap().is_empty(), "{c}");
    }
}

#[test]
fn a_severity_it_does_not_know_and_a_missing_volume_are_refused_in_one_line() {
    let out = sb()
        .args(["advise", "--fail-on", "warning", "/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("give info, low, medium, high or none"), "{e}");
    let out = sb()
        .args(["advise", "--quick", "/nonexistent/volume"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("does not exist"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
}

#[test]
fn quick_with_a_budget_is_refused_in_one_line() {
    // --quick measures nothing: a budget beside it was silently ignored.
    let out = sb()
        .args(["advise", "--quick", "--budget", "5s", "/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("--budget"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
}

#[test]
fn read_ahead_a_killed_run_left_changed_is_refused_not_advised_on() {
    // A SIGKILLed run leaves its read-ahead set: advise read that value as
    // the volume's own, and advised on it (or measured it as "current").
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let out = sb()
        .env("STRIPEBENCH_STATE_DIR", state.path())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(["advise", "--quick", "--json", "-"])
        .arg(dir.path())
        .output()
        .unwrap();
    let name = json(&out.stdout)["topology"]["root"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let record = format!(
        r#"[{{"path":"/sys/devices/virtual/block/{name}/queue/read_ahead_kb","old":"2560","at_ns":1}}]"#
    );
    std::fs::write(state.path().join("knobs-4294967294.json"), record).unwrap();
    let out = sb()
        .env("STRIPEBENCH_STATE_DIR", state.path())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(["advise", "--quick"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("(it was 2560)"), "{e}");
    assert!(e.contains("run 'stripebench restore' first"), "{e}");
}
