//! `run --steady` (fio's steadystate=): the window ends the first interval
//! the run's figures are steady, and the report says whether and when;
//! a criterion never met leaves the run to its --duration and says so.
//! `--print-fio` writes fio's steadystate options, and fio reads them.

use crate::common::{data_file, json, sb, succeeded_as};

fn run(args: &[&str]) -> (serde_json::Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "target", 16 << 20);
    let doc = dir.path().join("r.json");
    let out = sb()
        .args([
            "run",
            "--bs",
            "4k",
            "--rw",
            "randread",
            "--buffered",
            "--ramp",
            "0",
        ])
        .args(args)
        .args(["--no-progress", "--json"])
        .arg(&doc)
        .arg(&f)
        .output()
        .unwrap();
    succeeded_as(&out, 0);
    (
        json(&std::fs::read(&doc).unwrap()),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

// Issue 41: fio's ss= had no equivalent. On a schedule of 500 I/Os per
// second the IOPS are steady at once: the window ends after the first
// full window of figures, long before --duration.
#[test]
fn a_steady_run_ends_when_its_window_is_steady() {
    let (d, table) = run(&[
        "--rate-iops",
        "500",
        "--steady",
        "iops:50%",
        "--steady-dur",
        "2s",
        "-t",
        "60s",
    ]);
    let w = &d["window"];
    assert_eq!(w["ended_by"], "steady", "{w}");
    let s = &w["steady"];
    assert_eq!(s["criterion"], "iops:50%");
    assert_eq!(s["attained"], true, "{s}");
    let at = s["at_sec"].as_f64().unwrap();
    assert!((2.0..60.0).contains(&at), "{s}");
    // The window closed there (within the interval's hand-off).
    let secs = w["seconds"].as_f64().unwrap();
    assert!(secs >= at - 0.01 && secs < 60.0, "{secs} vs {at}");
    let values = s["values"].as_array().unwrap();
    assert_eq!(values.len(), 2, "{s}");
    let mean = s["mean"].as_f64().unwrap();
    assert!(values
        .iter()
        .all(|v| (v.as_f64().unwrap() - mean).abs() < 0.5 * mean));
    assert!(
        table.contains("steady state (--steady iops:50%")
            && table.contains("and the window ended there"),
        "{table}"
    );
}

// A criterion no run meets (every second's IOPS within 1 of the mean, on
// reads as fast as they go): the run lasts its --duration and the report
// says steady state was not reached, with the last judgement.
#[test]
fn an_unsteady_run_lasts_its_duration_and_says_so() {
    let (d, table) = run(&["--steady", "iops:1", "--steady-dur", "2s", "-t", "4s"]);
    let w = &d["window"];
    assert_eq!(w["ended_by"], "duration", "{w}");
    let s = &w["steady"];
    assert_eq!(s["attained"], false, "{s}");
    assert!(s["at_sec"].is_null(), "{s}");
    assert!(s["judged"].as_u64().unwrap() >= 1, "{s}");
    assert!(s["value"].as_f64().unwrap() >= 1.0, "{s}");
    assert!(table.contains("NOT reached in"), "{table}");
}

#[test]
fn steady_options_that_cannot_work_are_refused_before_any_io() {
    for (args, said) in [
        (
            &["--steady", "iops:5%", "-t", "10s"][..],
            "--steady-dur 30s need a window of at least 30s",
        ),
        (
            &["--steady", "iops:5%", "--steady-dur", "1s"][..],
            "fewer than two",
        ),
        (&["--steady", "fast:5%"][..], "'fast' is not a criterion"),
        (&["--steady-dur", "5s"][..], "--steady <CRITERION:LIMIT>"),
    ] {
        let out = sb()
            .args(["run", "--no-progress"])
            .args(args)
            .arg("/dev/null")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(said) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}

#[test]
fn print_fio_writes_fio_s_steady_state_options() {
    let out = sb()
        .args([
            "run",
            "--print-fio",
            "--steady",
            "bw_slope:1%",
            "--steady-dur",
            "10s",
        ])
        .args([
            "--steady-ramp",
            "5s",
            "--ramp",
            "2s",
            "-t",
            "60s",
            "/dev/null",
        ])
        .output()
        .unwrap();
    succeeded_as(&out, 0);
    let t = String::from_utf8_lossy(&out.stdout);
    let line = t.lines().find(|l| l.starts_with("fio ")).expect(&t);
    for w in [
        "--steadystate=bw_slope:1%",
        "--ss_dur=10000ms",
        "--ss_ramp=7000ms",
        "--group_reporting",
    ] {
        assert!(line.split(' ').any(|x| x == w), "{w}: {line}");
    }
    assert!(!line.contains("ss_interval"), "{line}");
}
