//! io_uring as a 6.x kernel offers it: `--sqpoll` (a kernel submission
//! thread, whose CPU time the worker counts), `--taskrun` (SINGLE_ISSUER
//! with COOP_TASKRUN or DEFER_TASKRUN), `--nowait` (RWF_NOWAIT, EAGAIN
//! counted and issued again) and `--hipri` (IOPOLL), each reported in the
//! JSON and refused in one line, before any I/O, where the kernel, the
//! device or the other options rule it out. `--hipri` on a device with poll
//! queues is proven in the lab (`lab_polled`): no device here polls.

use crate::common::{data_file, f, refused, require_uring, run_json, u, Loop};

/// io_uring is here, and a scratch file of `size` bytes on a disk-backed
/// file system (O_DIRECT, RWF_NOWAIT), removed with the directory.
fn scratch(size: usize) -> (tempfile::TempDir, String) {
    require_uring();
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = data_file(dir.path(), "f", size);
    let file = file.to_str().unwrap().to_string();
    (dir, file)
}

/// A `--nowait` buffered read of `file` with `extra`.
fn nowait_read(file: &str, extra: &[&str]) -> serde_json::Value {
    run_json(
        &[
            &[
                "run",
                "--rw",
                "read",
                "--buffered",
                "--nowait",
                "--no-progress",
            ][..],
            extra,
            &[file],
        ]
        .concat(),
    )
}

/// A 4 KiB random read of `targets`, one worker each, bounded to `limit`
/// bytes a worker, with `extra`: every I/O counts.
fn randread4k(limit: &str, targets: &[&str], extra: &[&str]) -> serde_json::Value {
    run_json(
        &[
            &["run", "--rw", "randread", "--bs", "4k", "--io-limit", limit][..],
            extra,
            &["--no-progress"],
            targets,
        ]
        .concat(),
    )
}

/// [`randread4k`] of 8 MiB of `file`.
fn read4k(file: &str, extra: &[&str]) -> serde_json::Value {
    randread4k("8m", &[file], extra)
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn sqpoll_runs_on_its_cpu_and_the_worker_counts_its_thread() {
    let (_dir, file) = scratch(8 << 20);
    let d = read4k(&file, &["--iodepth", "4", "--sqpoll=0", "--cpus", "1"]);
    assert_eq!(d["config"]["sqpoll"], true);
    assert_eq!(d["config"]["sqpoll_cpu"], 0);
    let w = &d["workers"][0];
    assert_eq!(u(&w["ios"]), 2048, "every I/O of the 8 MiB done");
    assert_eq!(u(&w["errors"]), 0);
    let ring = &w["ring"];
    assert_eq!(ring["sqpoll"], true, "{ring}");
    assert_eq!(ring["sqpoll_cpu"], 0, "bound where asked: {ring}");
    assert!(
        w["engine_path"]
            .as_str()
            .unwrap()
            .contains("SQPOLL thread on CPU 0"),
        "{}",
        w["engine_path"]
    );
    // The submission thread did the I/O: its time is the worker's too.
    let sq = f(&ring["sqpoll_cpu_sec"]);
    assert!(sq > 0.0, "the submission thread's CPU time: {ring}");
    assert!(
        f(&w["cpu_sys_sec"]) >= sq,
        "system time {} holds the thread's {sq}",
        w["cpu_sys_sec"]
    );
    // Without --sqpoll: no thread, none of its time.
    let d = read4k(&file, &["--iodepth", "4"]);
    let ring = &d["workers"][0]["ring"];
    assert_eq!(ring["sqpoll"], false);
    assert_eq!(f(&ring["sqpoll_cpu_sec"]), 0.0);
    assert!(d["config"].get("sqpoll").is_none(), "absent when not asked");
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn each_taskrun_mode_is_the_one_the_ring_got_and_auto_takes_the_best_the_kernel_has() {
    let (_dir, file) = scratch(8 << 20);
    let file = file.as_str();
    for (mode, path) in [
        ("plain", None),
        ("coop", Some("SINGLE_ISSUER|COOP_TASKRUN")),
        ("defer", Some("SINGLE_ISSUER|DEFER_TASKRUN")),
    ] {
        let d = read4k(file, &["--iodepth", "8", "--taskrun", mode]);
        let w = &d["workers"][0];
        assert_eq!(u(&w["ios"]), 2048, "{mode}");
        assert_eq!(w["ring"]["taskrun"], mode);
        assert_eq!(d["config"]["taskrun"], mode);
        assert_eq!(w["ring"]["ring_fd_registered"], true, "Linux 5.18+");
        let p = w["engine_path"].as_str().unwrap();
        match path {
            Some(flags) => assert!(p.contains(flags), "{mode}: {p}"),
            None => assert!(!p.contains("TASKRUN"), "{mode}: {p}"),
        }
    }
    // auto (the default): defer on a 6.1+ kernel, said as such.
    let d = read4k(file, &["--iodepth", "8"]);
    assert!(d["config"].get("taskrun").is_none(), "auto is not said");
    assert_eq!(d["workers"][0]["ring"]["taskrun"], "defer", "6.1+ kernel");
    // A depth of 1 with a ring option is io_uring too (auto engine).
    let d = read4k(file, &["--taskrun", "coop"]);
    assert_eq!(d["config"]["engine"], "uring");
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn nowait_counts_the_reads_that_would_block_and_still_reads_everything() {
    let (_dir, file) = scratch(16 << 20);
    let file = file.as_str();
    // Buffered reads of a file evicted first (the default): the first read
    // finds no page, so RWF_NOWAIT must say EAGAIN at least once.
    for engine in [&["--engine", "sync"][..], &["--iodepth", "4"][..]] {
        let d = nowait_read(
            file,
            &[&["--bs", "64k", "--io-limit", "16m"][..], engine].concat(),
        );
        let w = &d["workers"][0];
        assert_eq!(d["config"]["nowait"], true);
        assert_eq!(u(&w["bytes"]), 16 << 20, "{engine:?}: every byte read");
        assert_eq!(u(&w["errors"]), 0, "{engine:?}: EAGAIN is no error");
        let blocked = u(&w["would_block_ios"]);
        assert!(
            (1..=256).contains(&blocked),
            "{engine:?}: {blocked} of 256 reads would have blocked"
        );
        assert!(
            w["engine_path"]
                .as_str()
                .unwrap()
                .contains("RWF_NOWAIT first"),
            "{}",
            w["engine_path"]
        );
    }
    // 1 MiB buffered reads of a cold file on the sync engine: RWF_NOWAIT
    // hands back the cached part of a block; that read goes again, whole.
    let d = nowait_read(
        file,
        &["--bs", "1m", "--engine", "sync", "--io-limit", "16m"],
    );
    let w = &d["workers"][0];
    assert_eq!(u(&w["bytes"]), 16 << 20);
    assert_eq!(
        u(&w["short_ios"]),
        0,
        "a short read under RWF_NOWAIT went again"
    );
    // A window after a ramp: only the window's I/Os are counted, so never
    // more would have blocked than were done (SIGINT or the deadline alike).
    let d = nowait_read(
        file,
        &[
            "--bs",
            "64k",
            "--iodepth",
            "4",
            "--duration",
            "300ms",
            "--ramp",
            "200ms",
        ],
    );
    let w = &d["workers"][0];
    assert!(
        u(&w["would_block_ios"]) <= u(&w["ios"]),
        "{} would have blocked of {} I/Os",
        w["would_block_ios"],
        w["ios"]
    );
    // Without --nowait the count is not there at all.
    let d = read4k(file, &[]);
    assert!(d["workers"][0].get("would_block_ios").is_none());
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn hipri_on_a_device_without_poll_queues_is_refused_before_any_io() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = data_file(dir.path(), "f", 8 << 20);
    let dev = Loop::attach(&file, &[]);
    let polls = std::fs::read_to_string(format!(
        "/sys/block/{}/queue/io_poll",
        dev.dev.trim_start_matches("/dev/")
    ))
    .unwrap();
    assert_eq!(polls.trim(), "0", "a loop device has no poll queues");
    refused(
        &[
            "run",
            "--hipri",
            "--rw",
            "randread",
            "--iodepth",
            "4",
            &dev.dev,
        ],
        "its device has no poll queues (queue/io_poll is 0)",
    );
}

#[test]
fn ring_options_that_cannot_work_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = data_file(dir.path(), "f", 1 << 20);
    let file = file.to_str().unwrap();
    refused(
        &["run", "--engine", "sync", "--hipri", file],
        "--hipri is an io_uring option",
    );
    refused(
        &["run", "--engine", "sync", "--taskrun", "defer", file],
        "--taskrun is an io_uring option",
    );
    refused(
        &["run", "--buffered", "--hipri", file],
        "--hipri polls for O_DIRECT completions",
    );
    refused(
        &["run", "--sqpoll", "--taskrun", "defer", file],
        "--taskrun defer cannot go with --sqpoll",
    );
    refused(
        &["run", "--sqpoll=4096", file],
        "--sqpoll=4096: CPU 4096 is not one this process may run on",
    );
    refused(&["run", "--taskrun", "sometimes", file], "sometimes");
    refused(
        &["run", "--iodepth", "8", "--complete-min", "9", file],
        "--complete-min 9 is more than --iodepth 8",
    );
    refused(
        &[
            "run",
            "--iodepth",
            "8",
            "--complete-min",
            "2",
            "--rate-iops",
            "100",
            file,
        ],
        "--complete-min 2 holds back issuing until that many complete",
    );
    refused(&["run", "--complete-min", "0", file], "--complete-min");
    // 1 is no io_uring option: the sync engine takes it, as before auto.
    let out = crate::common::sb()
        .args([
            "run",
            "--engine",
            "sync",
            "--complete-min",
            "1",
            "--print-fio",
            file,
        ])
        .output()
        .unwrap();
    crate::common::succeeded(&out);
    // Above 1 it is.
    refused(
        &["run", "--engine", "sync", "--complete-min", "2", file],
        "--complete-min is an io_uring option",
    );
    refused(
        &["run", "--engine", "sync", "--sched", "batch", file],
        "--sched is an io_uring option",
    );
    refused(&["run", "--sched", "fifo", file], "fifo");
}

/// The `fio ...` line `stripebench run --print-fio ARGS` prints.
fn fio_line(args: &[&str]) -> String {
    let out = crate::common::sb()
        .args([&["run", "--print-fio"][..], args].concat())
        .output()
        .unwrap();
    crate::common::succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find(|l| l.starts_with("fio ") || l.starts_with("chrt --batch 0 fio "))
        .unwrap_or_else(|| panic!("no fio line in {text}"))
        .to_string()
}

#[test]
fn print_fio_spells_the_ring_options_as_fio_does() {
    let line = fio_line(&[
        "--rw",
        "randread",
        "--iodepth",
        "8",
        "--hipri",
        "--sqpoll=1",
        "--nowait",
        "/dev/null",
    ]);
    for o in [
        "--ioengine=io_uring",
        "--hipri",
        "--sqthread_poll=1",
        "--sqthread_poll_cpu=1",
        "--nowait=1",
    ] {
        assert!(line.split(' ').any(|w| w == o), "{o} in {line}");
    }
    // RWF_* flags on the sync engine are fio's pvsync2.
    let line = fio_line(&["--uncached", "--rw", "read", "/dev/null"]);
    assert!(
        line.contains("--ioengine=pvsync2") && line.contains("--uncached=1"),
        "{line}"
    );
}

#[test]
fn nowait_buffered_writes_that_ext4_will_not_try_so_go_again_on_the_sync_engine() {
    // ext4 answers a buffered write under RWF_NOWAIT with EOPNOTSUPP: each
    // goes again without the flag and is counted, no error.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = data_file(dir.path(), "f", 4 << 20);
    let d = run_json(&[
        "run",
        "--rw",
        "write",
        "--bs",
        "64k",
        "--buffered",
        "--nowait",
        "--engine",
        "sync",
        "--allow-destructive",
        "--io-limit",
        "4m",
        "--no-progress",
        file.to_str().unwrap(),
    ]);
    let w = &d["workers"][0];
    assert_eq!(u(&w["errors"]), 0, "{w}");
    assert_eq!(u(&w["bytes"]), 4 << 20);
    assert!(u(&w["would_block_ios"]) <= u(&w["ios"]));
}

#[test]
fn hipri_with_the_built_in_test_bed_is_refused_before_it_is_written() {
    // The test bed's file system (a virtio disk or tmpfs here) has no poll
    // queues: one line, and nothing written first.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    refused(
        &["run", "--hipri", "--dir", dir.path().to_str().unwrap()],
        "--hipri needs polled completions",
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// `stripebench run --dry-run --fio-job` of a job file holding `text`.
fn dry_fio_job(text: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("j.fio");
    std::fs::write(&job, text).unwrap();
    crate::common::sb()
        .args(["run", "--dry-run", "--fio-job"])
        .arg(&job)
        .output()
        .unwrap()
}

#[test]
fn a_fio_job_with_the_ring_options_reads_back_as_print_fio_writes_them() {
    let out = dry_fio_job(
        "[j]\nioengine=io_uring\niodepth=8\ndirect=1\nrw=randread\nbs=4k\nhipri\nsqthread_poll=1\nsqthread_poll_cpu=1\nnowait=1\niodepth_batch_complete_min=4\nfilename=/dev/null\n",
    );
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    for o in [
        "--hipri",
        "--sqpoll=1",
        "--nowait",
        "--engine=uring",
        "--complete-min=4",
    ] {
        assert!(said.split_whitespace().any(|w| w == o), "{o} in {said}");
    }
    // sqthread_poll_cpu alone is refused, by name.
    let out = dry_fio_job("[j]\nioengine=io_uring\nsqthread_poll_cpu=1\nfilename=/dev/null\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without sqthread_poll=1"));
}

/// [`randread4k`] of 4 MiB of each of `targets`, O_DIRECT at depth 8.
fn read_targets(targets: &[&str], extra: &[&str]) -> serde_json::Value {
    randread4k(
        "4m",
        targets,
        &[&["--direct", "--iodepth", "8"][..], extra].concat(),
    )
}

#[test]
#[cfg_attr(not(all(sb_uring, sb_zram)), ignore = "needs io_uring and zram (root)")]
fn sched_auto_batches_the_worker_whose_target_punts_every_io_and_no_other() {
    require_uring();
    let zram = crate::common::Zram::new(16);
    let bed = crate::common::LoopBed::new(1, 16);
    let d = read_targets(&[&zram.dev, &bed.devices[0]], &[]);
    let (z, l) = (&d["workers"][0], &d["workers"][1]);
    assert_eq!(z["target"], zram.dev.as_str(), "{d}");
    // zram has no non-blocking path: RWF_NOWAIT is refused, and io_uring
    // hands each I/O to io-wq; the loop device (blk-mq) has one.
    assert_eq!(z["ring"]["punted"], true, "{z}");
    assert_eq!(z["ring"]["sched"], "batch", "{z}");
    assert_eq!(l["ring"]["punted"], false, "{l}");
    assert_eq!(l["ring"]["sched"], "normal", "{l}");
    for w in [z, l] {
        assert_eq!(u(&w["ios"]), 1024, "every I/O of the 4 MiB done: {w}");
        assert_eq!(u(&w["errors"]), 0);
    }
    assert!(d["config"].get("sched").is_none(), "auto is not written");
    // The run's fio line runs fio as the workers ran.
    let fio = d["fio"]["command"].as_str().unwrap();
    assert!(fio.starts_with("chrt --batch 0 fio "), "{fio}");
    // --sched normal holds even where auto would batch; --print-fio
    // resolves auto from the targets as the workers do.
    let d = read_targets(&[&zram.dev], &["--sched", "normal"]);
    assert_eq!(d["workers"][0]["ring"]["sched"], "normal");
    assert_eq!(d["config"]["sched"], "normal");
    assert!(d["fio"]["command"].as_str().unwrap().starts_with("fio "));
    let line = fio_line(&["--rw", "randread", "--iodepth", "8", "--direct", &zram.dev]);
    assert!(line.starts_with("chrt --batch 0 fio "), "{line}");
    let line = fio_line(&[
        "--rw",
        "randread",
        "--iodepth",
        "8",
        "--direct",
        &bed.devices[0],
    ]);
    assert!(line.starts_with("fio "), "{line}");
    // Both: fio under chrt, and a note that not every worker batched.
    let out = crate::common::sb()
        .args(["run", "--print-fio", "--rw", "randread", "--iodepth", "8"])
        .args([&zram.dev, &bed.devices[0]])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("--sched auto: 1 of 2 run SCHED_BATCH"),
        "{text}"
    );
    // With --sqpoll, auto stays normal: its kernel thread would inherit
    // SCHED_BATCH and starve on the worker's CPU; batch with it is refused.
    let d = read_targets(&[&zram.dev], &["--sqpoll"]);
    assert_eq!(d["workers"][0]["ring"]["punted"], true);
    assert_eq!(d["workers"][0]["ring"]["sched"], "normal");
    // Nor does --complete-min auto wait for several: the thread polls.
    assert_eq!(d["workers"][0]["ring"]["complete_min"], 1);
    refused(
        &["run", "--sched", "batch", "--sqpoll", &zram.dev],
        "--sched batch cannot go with --sqpoll",
    );
}

#[test]
#[cfg_attr(not(all(sb_uring, sb_zram)), ignore = "needs io_uring and zram (root)")]
fn complete_min_auto_waits_for_a_quarter_of_the_depth_only_where_the_target_punts() {
    require_uring();
    let zram = crate::common::Zram::new(16);
    let bed = crate::common::LoopBed::new(1, 16);
    // Depth 8: the zram worker (every I/O in io-wq) waits for 2, the loop
    // device's (blk-mq, a non-blocking path) for 1, and all of it is done.
    let out = crate::common::sb()
        .args(["run", "--rw", "randread", "--bs", "4k", "--io-limit", "4m"])
        .args(["--direct", "--iodepth", "8", "--no-progress", "--json", "-"])
        .args([&zram.dev, &bed.devices[0]])
        .output()
        .unwrap();
    crate::common::succeeded(&out);
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let (z, l) = (&d["workers"][0], &d["workers"][1]);
    assert_eq!(z["ring"]["punted"], true, "{z}");
    assert_eq!(z["ring"]["complete_min"], 2, "{z}");
    assert_eq!(l["ring"]["punted"], false, "{l}");
    assert_eq!(l["ring"]["complete_min"], 1, "{l}");
    for w in [z, l] {
        assert_eq!(u(&w["ios"]), 1024, "every I/O of the 4 MiB done: {w}");
        assert_eq!(u(&w["errors"]), 0);
    }
    assert!(
        d["config"].get("complete_min").is_none(),
        "auto is not written: {}",
        d["config"]
    );
    // The report says who waited for several, and the run's fio line asks
    // fio for the same, with a note that only one of the two did.
    let report = String::from_utf8_lossy(&out.stderr);
    assert!(
        report.contains("--complete-min auto: 1 of 2 worker(s) waited for 2 completions at a time"),
        "{report}"
    );
    let fio = d["fio"]["command"].as_str().unwrap();
    assert!(
        fio.split(' ')
            .any(|w| w == "--iodepth_batch_complete_min=2"),
        "{fio}"
    );
    let notes = d["fio"]["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("1 of 2 wait for 2 completions")),
        "{notes:?}"
    );
    // --print-fio resolves it from the targets as the workers do: a
    // quarter of 32 on zram, nothing on the loop device.
    let line = fio_line(&["--rw", "randread", "--iodepth", "32", "--direct", &zram.dev]);
    assert!(
        line.split(' ')
            .any(|w| w == "--iodepth_batch_complete_min=8"),
        "{line}"
    );
    let line = fio_line(&[
        "--rw",
        "randread",
        "--iodepth",
        "32",
        "--direct",
        &bed.devices[0],
    ]);
    assert!(!line.contains("iodepth_batch_complete_min"), "{line}");
    // Asked for, 1 holds on zram, and is written as asked.
    let d = read_targets(&[&zram.dev], &["--complete-min", "1"]);
    assert_eq!(d["workers"][0]["ring"]["complete_min"], 1);
    assert_eq!(d["config"]["complete_min"], 1);
    assert!(!d["fio"]["command"]
        .as_str()
        .unwrap()
        .contains("iodepth_batch_complete_min"));
    // Under a --rate schedule each wait ends when the next I/O is due: one.
    let d = read_targets(&[&zram.dev], &["--rate-iops", "4000"]);
    assert_eq!(d["workers"][0]["ring"]["complete_min"], 1);
    assert_eq!(u(&d["workers"][0]["ios"]), 1024);
    // Below depth 8 a quarter is less than 2: one.
    let d = randread4k("4m", &[&zram.dev], &["--direct", "--iodepth", "7"]);
    assert_eq!(d["workers"][0]["ring"]["complete_min"], 1);
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn complete_min_is_what_each_wait_asks_and_every_io_still_completes() {
    let (_dir, file) = scratch(8 << 20);
    let d = read_targets(&[&file], &["--complete-min", "4"]);
    let w = &d["workers"][0];
    assert_eq!(w["ring"]["complete_min"], 4, "{w}");
    assert_eq!(d["config"]["complete_min"], 4);
    assert_eq!(u(&w["ios"]), 1024, "every I/O of the 4 MiB done: {w}");
    assert_eq!(u(&w["errors"]), 0);
    let line = fio_line(&[
        "--rw",
        "randread",
        "--iodepth",
        "8",
        "--complete-min",
        "4",
        &file,
    ]);
    assert!(
        line.split(' ')
            .any(|w| w == "--iodepth_batch_complete_min=4"),
        "{line}"
    );
}
