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
