//! fio's latency-target search (issue 41, examples/latency-profile.fio):
//! `run --latency-target` and a job file's latency_target= search for the
//! deepest queue, from 1 up to iodepth, whose windows meet the target,
//! settle, run one final window and stop, as fio's io_u.c `lat_target_*`
//! do; a target no I/O can meet leaves the depth at 1 and is said to be
//! missed; bad values are refused in one line before any I/O.

use std::path::Path;

use serde_json::Value;

use crate::common::{data_file, json, refused, sb, succeeded_as, Loop};

/// A loop device over 32 MiB of data (no holes: reads reach the file).
fn device(dir: &Path) -> Loop {
    let img = data_file(dir, "lat.img", 32 << 20);
    Loop::attach(&img, &[])
}

/// The run's JSON (`r.json` in `dir`) and its stderr and stdout, joined.
fn run(dir: &Path, args: &[&str]) -> (Value, String) {
    let out = sb()
        .current_dir(dir)
        .args(["run", "--no-progress", "--json", "r.json"])
        .args(args)
        .output()
        .unwrap();
    succeeded_as(&out, format_args!("{args:?}"));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    (json(&std::fs::read(dir.join("r.json")).unwrap()), said)
}

fn depths(s: &Value) -> Vec<u64> {
    s["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["depth"].as_u64().unwrap())
        .collect()
}

/// latency-profile.fio shrunk (iodepth 8, 200 ms windows, a run cap of
/// 30 s, time-based: a fast device reads the 32 MiB device through before
/// five windows end, and the search would be cut short): a 500 ms target is met at every depth, so the depth doubles to
/// 8, stays, runs its final window and the job ends long before 30 s, as
/// fio's does (6 windows at iodepth 16 in fio 3.33's --debug=rate).
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root for a loop device")]
fn a_generous_latency_target_climbs_to_the_iodepth_and_ends_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let lo = device(dir.path());
    let job = format!("[global]\nbs=4k\nrw=randread\nrandom_generator=lfsr\ndirect=1\nioengine=libaio\niodepth=8\nlatency_target=500000\nlatency_window=200000\nlatency_percentile=99.9\nruntime=30\ntime_based=1\n\n[device]\nfilename={}\n", lo.dev);
    std::fs::write(dir.path().join("lp.fio"), job).unwrap();
    let (d, said) = run(
        dir.path(),
        &["--fio-job", "lp.fio", "--fio-json", "fj.json"],
    );
    assert!(said.contains("--latency-target=500ms"), "{said}");
    // fio's JSON: the depth the search found, the target and window in
    // fio's unit (us), as fio's readers of latency-profile runs expect.
    let fj = json(&std::fs::read(dir.path().join("fj.json")).unwrap());
    let job = &fj["jobs"][0];
    assert_eq!(job["latency_depth"], 8, "{job}");
    assert_eq!(job["latency_target"], 500000, "{job}");
    assert_eq!(job["latency_window"], 200000, "{job}");
    assert_eq!(job["latency_percentile"], 99.9, "{job}");
    let s = &d["workers"][0]["latency_search"];
    assert_eq!(depths(s), [1, 2, 4, 8, 8], "{s}");
    assert_eq!(s["depth"], 8, "{s}");
    assert_eq!(s["settled"], true, "{s}");
    assert_eq!(s["met"], true, "{s}");
    let last = s["windows"].as_array().unwrap().last().unwrap();
    assert_eq!(last["final_window"], true, "{s}");
    assert!(s["windows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w["met"] == true && w["ios"].as_u64() > Some(0)));
    assert_eq!(d["window"]["ended_by"], "latency_target");
    assert!(
        d["window"]["seconds"].as_f64().unwrap() < 10.0,
        "{}",
        d["window"]
    );
    assert!(said.contains("settled at depth 8"), "{said}");
}

/// A 1 us target no read of a loop device meets: every window misses at
/// depth 1, the depth stays there until the run's end (fio too keeps
/// running at depth 1), and the report says the target was not met.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root for a loop device")]
fn a_latency_target_no_io_meets_stays_at_depth_one_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let lo = device(dir.path());
    let (d, said) = run(
        dir.path(),
        &[
            "--rw",
            "randread",
            "--iodepth",
            "8",
            "-t",
            "1500ms",
            "--ramp",
            "0",
            "--latency-target",
            "1us",
            "--latency-window",
            "300ms",
            "--latency-percentile",
            "99",
            &lo.dev,
        ],
    );
    let s = &d["workers"][0]["latency_search"];
    let ds = depths(s);
    assert!(ds.len() >= 4 && ds.iter().all(|&x| x == 1), "{s}");
    assert_eq!(s["depth"], 1);
    assert_eq!(s["met"], false);
    assert_eq!(s["settled"], false);
    let whole: Vec<&Value> = (s["windows"].as_array().unwrap().iter())
        .filter(|w| w["partial"] == false)
        .collect();
    assert!(
        whole
            .iter()
            .all(|w| w["met"] == false && w["late_ios"] == w["ios"]),
        "{s}"
    );
    assert_eq!(d["window"]["ended_by"], "duration");
    assert!(said.contains("not met even at depth 1"), "{said}");
}

/// At fio's default percentile of 100, the first I/O over the target at
/// depth 1 ends the search: fio fails the job ("max latency exceeded",
/// exit 1), and so does the run, saying so in one line.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root for a loop device")]
fn a_latency_target_at_100_percent_missed_at_depth_one_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let lo = device(dir.path());
    let out = sb()
        .args([
            "run",
            "--no-progress",
            "--rw",
            "randread",
            "--iodepth",
            "4",
            "-t",
            "20s",
        ])
        .args([
            "--ramp",
            "0",
            "--latency-target",
            "1us",
            "--latency-window",
            "1s",
            &lo.dev,
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("latency target not met: worker 0's I/O took"),
        "{err}"
    );
    assert!(err.contains("max latency exceeded"), "{err}");
}

/// What the search cannot take is refused in one line, exit 2, nothing run.
#[test]
fn bad_latency_target_values_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "f.dat", 1 << 20);
    let f = f.to_str().unwrap();
    let base = [
        "run",
        "--rw",
        "randread",
        "--iodepth",
        "8",
        "--latency-target",
        "1ms",
    ];
    fn with<'a>(base: &[&'a str], extra: &[&'a str], f: &'a str) -> Vec<&'a str> {
        base.iter().chain(extra).chain([&f]).copied().collect()
    }
    refused(
        &with(&base, &["--latency-percentile", "0"], f),
        "above 0 and at most 100",
    );
    refused(
        &with(&base, &["--latency-percentile", "100.1"], f),
        "above 0 and at most 100",
    );
    refused(
        &with(&base, &["--latency-window", "0"], f),
        "--latency-window is 0",
    );
    refused(
        &with(&base, &["--engine", "sync", "--iodepth", "1"], f),
        "--engine sync keeps one I/O in flight",
    );
    refused(
        &with(&base, &["--iodepth", "1"], f),
        "leaves nothing to search",
    );
    refused(&["run", "--latency-window", "1s", f], "--latency-target");
}
