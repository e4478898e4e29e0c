//! I/O errors a run goes on after: `--ignore-errors` (fio's
//! continue_on_error= with ignore_error=). An ignored failure is counted
//! by errno apart from `errors` (`ignored_errors`), the worker goes on and
//! the run passes; any other error still stops the worker and fails the
//! run. fio's examples/enospc-pressure.fio (its O_DIRECT writer, shrunk) on
//! a small tmpfs that fills: its writes that hit ENOSPC are counted and
//! the run goes on, as fio's; without continue_on_error= the first ENOSPC
//! fails it. Every file is in a temporary directory; the tmpfs is
//! unmounted on every exit (`common::Mounted`).

use std::path::Path;

use crate::common::{self, data_file, json, require, sb, u};

const QUICK: [&str; 4] = ["--duration", "400ms", "--ramp", "100ms"];

/// The I/O errors of each errno a worker counted apart as ignored.
fn ignored(w: &serde_json::Value) -> Vec<(String, u64)> {
    w["ignored_errors"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| (c["name"].as_str().unwrap().to_string(), u(&c["count"])))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn ignored_errors_are_counted_apart_and_the_run_passes() {
    let d = tempfile::tempdir().unwrap();
    let t = data_file(d.path(), "t.dat", 4 << 20);
    let out = sb()
        .arg("run")
        .args(QUICK)
        .args(["--rw", "randread", "--bs", "4k", "--no-progress"])
        .args(["--debug-fail-from", "1", "--ignore-errors", "read=EIO"])
        .args(["--json", "-", "--fio-json"])
        .arg(d.path().join("fio.json"))
        .arg(&t)
        .output()
        .unwrap();
    common::succeeded_as(&out, "a run whose every failure is ignored");
    let doc = json(&out.stdout);
    let w = &doc["workers"][0];
    assert_eq!(u(&w["errors"]), 0, "an ignored failure is not an error");
    assert_eq!(w["stopped_on_errors"], false);
    let kinds = ignored(w);
    assert_eq!(kinds.len(), 1, "{kinds:?}");
    assert_eq!(kinds[0].0, "EIO");
    assert!(kinds[0].1 > 1, "it went on after the first: {kinds:?}");
    assert_eq!(doc["config"]["ignore_errors"]["read"][0], "EIO");
    // fio's JSON: a job with continue_on_error has total_err, first_error.
    let fio = json(&std::fs::read(d.path().join("fio.json")).unwrap());
    assert_eq!(u(&fio["jobs"][0]["total_err"]), kinds[0].1);
    assert_eq!(u(&fio["jobs"][0]["first_error"]), 5);
    let table = String::from_utf8_lossy(&out.stderr);
    assert!(
        table.contains("ignored: worker w0") && table.contains("(EIO x"),
        "{table}"
    );
}

#[test]
fn an_error_of_another_direction_still_stops_the_worker() {
    let d = tempfile::tempdir().unwrap();
    let t = data_file(d.path(), "t.dat", 4 << 20);
    let out = sb()
        .arg("run")
        .args(QUICK)
        .args(["--rw", "randread", "--bs", "4k", "--no-progress"])
        .args(["--debug-fail-from", "1", "--ignore-errors", "write=EIO"])
        .args(["--json", "-"])
        .arg(&t)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a read's EIO is not ignored");
    let w = &json(&out.stdout)["workers"][0];
    assert_eq!(w["stopped_on_errors"], true);
    assert!(ignored(w).is_empty());
}

#[test]
fn a_bad_ignore_errors_list_is_refused_in_one_line() {
    for (list, says) in [
        ("write", "is not DIRECTION=ERRNO"),
        ("trim=EIO", "is not a direction"),
        ("write=ENOSUCH", "is not an errno"),
        ("write=EIO,write=ENOSPC", "is given twice"),
    ] {
        let out = sb()
            .args(["run", "--dry-run", "--ignore-errors", list, "/dev/null"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{list}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{list}: {err}");
    }
}

/// fio's examples/enospc-pressure.fio's O_DIRECT writer, shrunk: a 256 MiB
/// file on a 64 MiB file system, written for 2 s.
const WRITER: &str = "[global]
ioengine=libaio
iodepth=16
continue_on_error=write
ignore_error=,ENOSPC
error_dump=0

[dio-raicer]
bs=128k
direct=1
buffered=0
rw=randwrite
runtime=2
filename=raicer
time_based
";

/// A 64 MiB tmpfs in `dir`/m holding a sparse 256 MiB `raicer` and 56 MiB
/// of other data: the writes fill the 8 MiB left early in the run, however
/// slowly a busy machine lets them go.
fn full_soon(dir: &Path) -> (std::path::PathBuf, common::Mounted) {
    let m = dir.join("m");
    std::fs::create_dir(&m).unwrap();
    let mounted = common::mount(&["-t", "tmpfs", "-o", "size=64m", "tmpfs"], &m);
    std::fs::write(m.join("filler"), vec![0u8; 56 << 20]).unwrap();
    let f = std::fs::File::create(m.join("raicer")).unwrap();
    f.set_len(256 << 20).unwrap();
    (m, mounted)
}

fn run_job(dir: &Path, at: &Path, job: &str) -> std::process::Output {
    let file = dir.join("job.fio");
    std::fs::write(&file, job).unwrap();
    sb().current_dir(at)
        .args(["run", "--fio-job", file.to_str().unwrap(), "--no-progress"])
        .args(["--allow-destructive", "--allow-holes", "--json"])
        .arg(dir.join("r.json"))
        .output()
        .unwrap()
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: mounts a tmpfs")]
fn fio_job_continue_on_error_write_goes_on_past_enospc() {
    require(common::is_root(), "needs root: mounts a tmpfs");
    let d = tempfile::tempdir().unwrap();
    let (m, _mounted) = full_soon(d.path());
    let out = run_job(d.path(), &m, WRITER);
    common::succeeded_as(&out, "writes past ENOSPC, ignored");
    let doc = json(&std::fs::read(d.path().join("r.json")).unwrap());
    let w = &doc["workers"][0];
    assert_eq!(u(&w["errors"]), 0);
    let kinds = ignored(w);
    assert_eq!(kinds.len(), 1, "{kinds:?}");
    assert_eq!(kinds[0].0, "ENOSPC", "{kinds:?}");
    assert!(kinds[0].1 > 0);
    // It wrote until the file system was full, and went on.
    assert!(u(&w["write_bytes"]) > 0);
    assert_eq!(w["ended_by"], "duration");
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: mounts a tmpfs")]
fn fio_job_without_continue_on_error_fails_at_the_first_enospc() {
    require(common::is_root(), "needs root: mounts a tmpfs");
    let d = tempfile::tempdir().unwrap();
    let (m, _mounted) = full_soon(d.path());
    let job = WRITER
        .replace("continue_on_error=write\n", "continue_on_error=none\n")
        .replace("ignore_error=,ENOSPC\n", "");
    let out = run_job(d.path(), &m, &job);
    assert_eq!(out.status.code(), Some(1));
    let text = [&out.stdout[..], &out.stderr[..]].concat();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("ERROR:")).collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(lines[0].contains("ENOSPC"), "{text}");
}

#[test]
fn print_fio_gives_fio_the_same_lists_as_ignore_error() {
    let d = tempfile::tempdir().unwrap();
    let t = data_file(d.path(), "t.dat", 4 << 20);
    let line = |list: &str| {
        let out = sb()
            .args([
                "run",
                "--print-fio",
                "--rw",
                "randrw",
                "--ignore-errors",
                list,
            ])
            .arg(&t)
            .output()
            .unwrap();
        common::succeeded(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(line("write=ENOSPC").contains(" --ignore_error=,ENOSPC "));
    // EILSEQ is only ever fio's verify type.
    assert!(line("read=EIO:EILSEQ,write=EILSEQ").contains(" --ignore_error=EIO,,EILSEQ "));
}

/// fio's examples/enospc-pressure.fio whole, shrunk (its three jobs at
/// once in `directory=`, two on the one file `raicer`): sparse files of
/// 2 GiB (size= above it, capped as fio caps it; the verifier's 1 MiB, so
/// that its pass ends, and with exitall the run, long before the trims'
/// 524288 do, however a busy machine schedules them), 3 s, depth 16, on a 64 MiB
/// tmpfs with 256 KiB free: the writer's first 16 writes of 128 KiB ask
/// eight times that, and the verifier's pass half as much again as there
/// is (about 128 writes of 4 KiB), whoever goes first and whatever the
/// trims give back (only blocks the writer got).
fn enospc_pressure(dir: &Path) -> String {
    format!(
        "[global]
ioengine=libaio
directory={}
filesize=2g
size=4g
iodepth=16
continue_on_error=write
ignore_error=,ENOSPC
error_dump=0
fallocate=none
exitall

[dio-raicer]
bs=128k
direct=1
buffered=0
rw=randwrite
runtime=3
filename=raicer
time_based

[punch_hole-raicer]
bs=4k
rw=randtrim
filename=raicer

[aio-dio-verifier]
create_on_open=1
verify=crc32c-intel
verify_fatal=1
verify_dump=1
verify_backlog=1024
verify_async=4
direct=1
bs=4k
rw=randrw
filesize=1m
filename=aio-dio-verifier
",
        dir.display()
    )
}

// Issue 41: enospc-pressure.fio was refused (fallocate=, filesize= with
// size=, rw=randtrim, create_on_open=). Run whole: the files are made
// sparse (fio's fallocate=none and create_on_open=1 lay nothing out), the
// writes that hit ENOSPC are counted and let go, the trims punch the
// raicer's blocks out (freeing room), and the verifier's blocks that were
// written verify: its writes that failed are not read back as lost (fio
// takes a failed write off its verify list).
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: mounts a tmpfs")]
fn enospc_pressure_runs_whole_its_enospc_let_go_its_trims_punched_its_blocks_verified() {
    require(common::is_root(), "needs root: mounts a tmpfs");
    let d = tempfile::tempdir().unwrap();
    let m = d.path().join("m");
    std::fs::create_dir(&m).unwrap();
    let _mounted = common::mount(&["-t", "tmpfs", "-o", "size=64m", "tmpfs"], &m);
    std::fs::write(m.join("filler"), vec![0u8; (64 << 20) - (256 << 10)]).unwrap();
    let out = run_job(d.path(), &m, &enospc_pressure(&m));
    common::succeeded_as(&out, "enospc-pressure, shrunk");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--create-layout=sparse"), "{err}");
    let doc = |n: u32| json(&std::fs::read(d.path().join(format!("r.{n}.json"))).unwrap());
    let (writer, trimmer, verifier) = (doc(1), doc(2), doc(3));
    let enospc = |w: &serde_json::Value| {
        ignored(w)
            .iter()
            .filter(|(n, _)| n == "ENOSPC")
            .map(|(_, c)| *c)
            .sum::<u64>()
    };
    let w = &writer["workers"][0];
    assert_eq!(u(&w["errors"]), 0, "{w}");
    assert!(enospc(w) > 0, "the writer hit ENOSPC and went on: {w}");
    let t = &trimmer["workers"][0];
    assert_eq!(trimmer["config"]["rw"], "randtrim");
    assert!(u(&t["trim_ios"]) > 0, "{t}");
    assert_eq!(u(&t["errors"]), 0, "{t}");
    let v = &verifier["workers"][0];
    assert!(enospc(v) > 0, "the verifier's writes hit ENOSPC too: {v}");
    // Its mix reads blocks not written yet: holes, said (--allow-holes).
    let kinds: Vec<&str> = verifier["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"holes_read_anyway"), "{kinds:?}");
    assert_eq!(
        verifier["window"]["ended_by"], "passes",
        "it ended the run (exitall)"
    );
    let check = &verifier["targets"][0]["verify"];
    assert!(u(&check["good"]) > 0, "{check}");
    assert_eq!(u(&check["good"]), u(&check["blocks"]), "{check}");
    assert_eq!(
        u(&check["good"]),
        u(&v["write_ios"]),
        "every write that succeeded is checked: {check}"
    );
}
