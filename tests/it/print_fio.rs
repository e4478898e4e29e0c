//! `run --print-fio`: the fio line for a run's workload, printed without
//! I/O, and run with fio itself: it ran the same targets, bs and rw.

use crate::common::{data_file, sb};

fn print_fio(args: &[&str]) -> String {
    let out = sb()
        .arg("run")
        .arg("--print-fio")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn print_fio_gives_one_job_per_worker_and_no_io() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("never-made");
    let a = a.to_str().unwrap();
    let t = print_fio(&[
        "--rw", "randrw", "--mix", "70", "--bs", "8k", "--jobs", "2", "--cpus", "0,1", "-t", "3s",
        a,
    ]);
    let line = t.lines().find(|l| l.starts_with("fio ")).expect(&t);
    for o in [
        "--rw=randrw",
        "--rwmixread=70",
        "--bs=8k",
        "--norandommap",
        "--randrepeat=0",
        "--runtime=3000ms",
        "--time_based",
        "--refill_buffers",
    ] {
        assert!(line.contains(o), "{o} missing: {line}");
    }
    assert!(
        line.contains(&format!(
            "--name=w0 --filename={a} --offset=0% --size=50% --cpus_allowed=0"
        )),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "--name=w1 --filename={a} --offset=50% --size=50% --cpus_allowed=1"
        )),
        "{line}"
    );
    assert!(t.contains("# not in fio: --jobs"), "{t}");
    assert!(!std::path::Path::new(a).exists(), "--print-fio did I/O");
}

#[test]
#[cfg_attr(not(sb_fio), ignore = "needs fio (Debian package fio)")]
fn the_printed_line_runs_with_fio_on_the_same_workload() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 4 << 20);
    let a = a.to_str().unwrap();
    let t = print_fio(&[
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--buffered",
        "-t",
        "200ms",
        "--ramp",
        "0s",
        a,
    ]);
    let line = t.lines().find(|l| l.starts_with("fio ")).expect(&t);
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{line} --output-format=json"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8(out.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(&s[s.find('{').expect(&s)..]).unwrap();
    assert_eq!(v["global options"]["bs"], "4k");
    assert_eq!(v["global options"]["rw"], "randread");
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0]["job options"]["filename"], a);
    assert_eq!(jobs[0]["error"], 0);
    assert!(jobs[0]["read"]["total_ios"].as_u64().unwrap() > 0, "{s}");
}

/// The run document carries the line `--print-fio` prints for the same
/// options (one code path), its notes, and the HTML report shows it.
#[test]
fn the_run_document_and_its_html_carry_the_print_fio_line() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 4 << 20);
    let a = a.to_str().unwrap();
    let opts = [
        "--rw", "randread", "--bs", "4k", "--jobs", "2", "-t", "300ms", "--ramp", "0s",
    ];
    let printed = print_fio(&[&opts[..], &[a]].concat());
    let html = dir.path().join("r.html");
    let out = sb()
        .args([
            "run",
            "--debug-mock-engine",
            "1ms",
            "--no-progress",
            "--json",
            "-",
        ])
        .arg("--html")
        .arg(&html)
        .args(opts)
        .arg(a)
        .output()
        .unwrap();
    crate::common::succeeded(&out);
    let v = crate::common::json(&out.stdout);
    let fio = &v["fio"];
    let line = printed.lines().find(|l| l.starts_with("fio ")).unwrap();
    assert_eq!(fio["command"], line, "{fio}");
    assert!(fio["unavailable"].is_null(), "{fio}");
    let notes: Vec<String> = printed
        .lines()
        .filter_map(|l| l.strip_prefix("# not in fio: "))
        .map(String::from)
        .collect();
    assert!(!notes.is_empty(), "{printed}");
    assert_eq!(fio["notes"], serde_json::json!(notes));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("The same workload in fio"), "no fio section");
    assert!(
        page.contains(&format!("<pre class=\"copy\" id=\"fio\">{line}</pre>")),
        "the fio line is not in one block"
    );
}

/// Where no fio line can be given, the document says why, and the run
/// itself is not refused.
#[test]
fn a_run_with_no_fio_line_says_why_in_its_document() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 4 << 20);
    let v = crate::common::run_json(&[
        "run",
        "--debug-mock-engine",
        "1ms",
        "--no-progress",
        "--jobs",
        "2",
        "--offset",
        "1m",
        "-t",
        "200ms",
        "--ramp",
        "0s",
        a.to_str().unwrap(),
    ]);
    assert!(v["fio"]["command"].is_null(), "{}", v["fio"]);
    let why = v["fio"]["unavailable"].as_str().unwrap();
    assert!(why.contains("--size"), "{why}");
}

/// `--cached` reads what the page cache holds: fio is told to keep it
/// (`--invalidate=0`), and no note says stripebench evicts it first.
#[test]
fn print_fio_keeps_the_cache_for_a_cached_read() {
    let t = print_fio(&[
        "--rw",
        "read",
        "--bs",
        "32k",
        "--buffered",
        "--cached",
        "/nowhere",
    ]);
    let line = t.lines().find(|l| l.starts_with("fio ")).expect(&t);
    assert!(
        line.contains("--direct=0 ") && line.contains("--invalidate=0"),
        "{t}"
    );
    assert!(!t.contains("evicts"), "{t}");
}

#[test]
fn a_buffered_line_gives_fio_no_fadvise_hint_and_an_o_direct_one_keeps_its_default() {
    // fio's fadvise_hint=1 doubles a sequential reader's read-ahead (and
    // turns it off for a random one); stripebench gives no hint, so the
    // read-ahead of a buffered run is the device's in both tools.
    for mode in ["--buffered", "--uncached"] {
        let t = print_fio(&["--rw", "read", "--bs", "1m", mode, "/nowhere"]);
        let line = t.lines().find(|l| l.starts_with("fio ")).expect(&t);
        assert!(
            line.split(' ').any(|w| w == "--fadvise_hint=0"),
            "{mode}: {t}"
        );
    }
    let t = print_fio(&["--rw", "read", "--bs", "1m", "--direct", "/nowhere"]);
    assert!(!t.contains("fadvise_hint"), "{t}");
}
