//! fio users at home (issue 41): the most copied fio command line runs,
//! as a job file (`run --fio-job`) and as fio's own command line
//! (`stripebench fio ...`); fio's harmless measurement knobs are taken
//! with a `#` line saying why they change nothing of ours; and libaio on
//! buffered I/O runs as what fio really does with it, one synchronous
//! buffered I/O at a time. Every file is in a temporary directory.

use crate::common::{data_file, json, sb, succeeded_as};

/// The one-liner's options, as `--key=value` words, its size given.
fn one_liner(size: &str, filename: &str) -> Vec<String> {
    [
        "--randrepeat=1",
        "--ioengine=libaio",
        "--direct=1",
        "--gtod_reduce=1",
        "--name=test",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("--filename={filename}"),
        "--bs=4k".into(),
        "--iodepth=64".into(),
        format!("--size={size}"),
        "--readwrite=randrw".into(),
        "--rwmixread=75".into(),
    ])
    .collect()
}

/// The one-liner written as a job file: `[test]` and its options (the
/// ones before `--name` under `[global]`, as fio reads them).
fn one_liner_job(size: &str, filename: &str, extra: &str) -> String {
    let words = one_liner(size, filename);
    let mut text = String::from("[global]\n");
    for w in &words {
        let w = w.trim_start_matches("--");
        match w.strip_prefix("name=") {
            Some(n) => text.push_str(&format!("[{n}]\n")),
            None => text.push_str(&format!("{w}\n")),
        }
    }
    text + extra
}

/// A 4 GiB file for the one-liner's size=4G, sparse: a dry run reads
/// and writes none of it (so its holes are allowed: fio would have laid
/// the file out by writing it first).
fn sparse_4g(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("test");
    std::fs::File::create(&p).unwrap().set_len(4 << 30).unwrap();
    p
}

/// The `stripebench ...` lines printed on stderr.
fn commands(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.starts_with("stripebench run "))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_one_liner_as_a_job_file_is_a_dry_run_at_4g() {
    // It was refused over gtod_reduce=1, one harmless option.
    let dir = tempfile::tempdir().unwrap();
    let f = sparse_4g(dir.path());
    let job = dir.path().join("oneliner.fio");
    std::fs::write(&job, one_liner_job("4G", f.to_str().unwrap(), "")).unwrap();
    let out = sb()
        .args(["run", "--dry-run", "--fio-job"])
        .arg(&job)
        .args(["--allow-destructive", "--allow-holes"])
        .output()
        .unwrap();
    succeeded_as(&out, "run --dry-run --fio-job oneliner.fio");
    let err = String::from_utf8_lossy(&out.stderr);
    let cmds = commands(&out.stderr);
    assert_eq!(cmds.len(), 1, "{err}");
    for w in [
        "--rw=randrw",
        "--mix=75",
        "--bs=4k",
        "--direct",
        "--engine=uring",
        "--iodepth=64",
        "--size=4g",
    ] {
        assert!(cmds[0].split_whitespace().any(|x| x == w), "{w}: {err}");
    }
    assert!(err.contains("# gtod_reduce"), "{err}");
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn the_one_liner_as_a_job_file_runs_on_a_scratch_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "test", 64 << 20);
    let job = dir.path().join("oneliner.fio");
    std::fs::write(
        &job,
        one_liner_job("64m", f.to_str().unwrap(), "runtime=5\n"),
    )
    .unwrap();
    let out = sb()
        .args(["run", "--fio-job"])
        .arg(&job)
        .args(["--no-progress", "--allow-destructive", "--json", "-"])
        .output()
        .unwrap();
    succeeded_as(&out, "run --fio-job oneliner.fio");
    let doc = json(&out.stdout);
    assert_eq!(doc["config"]["rw"], "randrw", "{doc}");
    assert_eq!(doc["config"]["iodepth"], 64, "{doc}");
    assert!(doc["total"]["bytes"].as_u64().unwrap_or(0) > 0, "{doc}");
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn the_one_liner_runs_as_stripebench_fio() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "test", 64 << 20);
    let out = sb()
        .arg("fio")
        .args(one_liner("64m", f.to_str().unwrap()))
        .arg("--runtime=5")
        .args(["--", "--no-progress", "--allow-destructive", "--json", "-"])
        .output()
        .unwrap();
    succeeded_as(&out, "stripebench fio (the one-liner)");
    let err = String::from_utf8_lossy(&out.stderr);
    let cmds = commands(&out.stderr);
    assert_eq!(cmds.len(), 1, "{err}");
    assert!(
        cmds[0].contains("--mix=75") && cmds[0].contains("--iodepth=64"),
        "{err}"
    );
    let doc = json(&out.stdout);
    assert_eq!(doc["config"]["rw"], "randrw", "{doc}");
    assert_eq!(doc["config"]["engine"], "uring", "{doc}");
    assert!(doc["total"]["bytes"].as_u64().unwrap_or(0) > 0, "{doc}");
}

// As typed, in an empty directory: `--filename=test` is not there, and
// fio lays it out size= long. stripebench refused it as a missing target;
// now it makes the file (--create: ours, so no --allow-destructive) and
// runs on it, then keeps it, as fio does.
#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn the_one_liner_in_an_empty_directory_makes_its_file_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = sb()
        .arg("fio")
        .args(one_liner("8m", "test"))
        .args(["--", "--no-progress", "--json", "-"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    succeeded_as(&out, "stripebench fio (the one-liner, no file)");
    let err = String::from_utf8_lossy(&out.stderr);
    let cmds = commands(&out.stderr);
    assert!(cmds[0].contains("--create=8m"), "{err}");
    assert!(
        err.contains("stripebench: created test (8.0 MiB, random data"),
        "{err}"
    );
    let made = std::fs::metadata(dir.path().join("test")).unwrap();
    assert_eq!(made.len(), 8 << 20);
    let doc = json(&out.stdout);
    // One pass of size= (fio's size= without time_based), 8 MiB in 4 KiB I/Os.
    assert_eq!(doc["total"]["bytes"], 8 << 20, "{doc}");
    assert_eq!(doc["total"]["ios"], 2048, "{doc}");
}

#[test]
fn the_one_liner_as_stripebench_fio_is_a_dry_run_at_4g() {
    let dir = tempfile::tempdir().unwrap();
    let f = sparse_4g(dir.path());
    let out = sb()
        .arg("fio")
        .args(one_liner("4G", f.to_str().unwrap()))
        .args(["--", "--dry-run", "--allow-destructive", "--allow-holes"])
        .output()
        .unwrap();
    succeeded_as(&out, "stripebench fio (the one-liner) -- --dry-run");
    let err = String::from_utf8_lossy(&out.stderr);
    let cmds = commands(&out.stderr);
    assert_eq!(cmds.len(), 1, "{err}");
    assert!(cmds[0].contains("--size=4g"), "{err}");
}

#[test]
fn a_harmless_knob_is_taken_with_a_line_saying_why_it_changes_nothing_of_ours() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "t", 1 << 20);
    for (knob, said) in [
        ("gtod_reduce=1", "# gtod_reduce"),
        ("disable_lat=1", "# disable_lat"),
        ("disable_clat=1", "# disable_clat"),
        ("disable_slat=1", "# disable_slat"),
        ("disable_bw_measurement=1", "# disable_bw_measurement"),
        ("group_reporting", "# group_reporting"),
        ("thread", "# thread"),
        ("threads=1", "# threads"),
        ("random_generator=tausworthe", "# random_generator"),
    ] {
        let job = dir.path().join("k.fio");
        std::fs::write(
            &job,
            format!(
                "[k]\nrw=randread\nfilename={}\nruntime=1\n{knob}\n",
                f.display()
            ),
        )
        .unwrap();
        let out = sb()
            .args(["run", "--dry-run", "--fio-job"])
            .arg(&job)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(2), "{knob} refused: {err}");
        assert!(
            err.lines().any(|l| l.starts_with(said)),
            "{knob}: no `{said}` line in {err}"
        );
    }
}

#[test]
fn libaio_on_buffered_io_runs_as_sync_buffered_as_fio_s_does() {
    // fio's libaio with direct=0: Linux does buffered AIO inside
    // io_submit, one at a time. It was refused.
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "t", 4 << 20);
    let job = dir.path().join("l.fio");
    std::fs::write(
        &job,
        format!(
            "[l]\nioengine=libaio\niodepth=16\ndirect=0\nrw=randread\nbs=4k\nsize=4m\nruntime=1\nfilename={}\n",
            f.display()
        ),
    )
    .unwrap();
    let out = sb()
        .args(["run", "--fio-job"])
        .arg(&job)
        .args(["--no-progress", "--json", "-"])
        .output()
        .unwrap();
    succeeded_as(&out, "run --fio-job (libaio, direct=0)");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines()
            .any(|l| l.starts_with("# ioengine=libaio") && l.contains("one at a time")),
        "{err}"
    );
    let doc = json(&out.stdout);
    assert_eq!(doc["config"]["engine"], "sync", "{doc}");
    assert_eq!(doc["config"]["direct"], false, "{doc}");
    assert!(doc["total"]["bytes"].as_u64().unwrap_or(0) > 0, "{doc}");
}
