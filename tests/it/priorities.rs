//! fio's I/O priorities and NUMA placement (`--ioprio`, `--cmdprio`,
//! `--numa-nodes`, `--numa-mem`; fio's prioclass/prio, cmdprio_*,
//! numa_cpu_nodes, numa_mem_policy): read back from the kernel on the
//! running worker threads, and fio's own examples/cmdprio-percentage.fio
//! and examples/numa.fio run end to end on a loop device.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{data_file, json, sb, spawn, succeeded_as, Loop};

use stripebench::base::host::Host;
use stripebench::base::thread_setup;

/// The thread id of `sb-worker-0` in process `pid`, once it is running.
fn worker_tid(pid: u32) -> libc::pid_t {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for t in tasks.flatten() {
                let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
                if comm.trim() == "sb-worker-0" {
                    return t.file_name().to_str().unwrap().parse().unwrap();
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no sb-worker-0 thread in process {pid} within 10 s");
}

/// The memory policies numa_maps shows for thread `tid`'s mappings (a
/// mapping without its own policy shows the thread's).
fn numa_maps_policies(pid: u32, tid: libc::pid_t) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/numa_maps")).unwrap_or_default()
}

/// The worker thread runs at the --ioprio asked, on the CPUs of the node
/// --numa-nodes names (not pinned to one), under the --numa-mem policy;
/// --cmdprio raises about its share of the I/Os, as the JSON counts.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root (loop devices)")]
fn worker_threads_take_ioprio_numa_cpus_and_mem_policy() {
    let dir = tempfile::tempdir().unwrap();
    let file = data_file(dir.path(), "back", 16 << 20);
    let dev = Loop::attach(&file, &[]);
    let json_path = dir.path().join("run.json");
    let child = spawn(&[
        "run",
        "--json",
        json_path.to_str().unwrap(),
        "--rw",
        "randread",
        "--iodepth",
        "4",
        "-t",
        "2s",
        "--ramp",
        "0s",
        "--ioprio",
        "idle",
        "--cmdprio",
        "25:be,1",
        "--numa-nodes",
        "0",
        "--numa-mem",
        "bind:0",
        &dev.dev,
    ]);
    let tid = worker_tid(child.id());
    // The kernel's own answers, from another process.
    let prio = thread_setup::thread_ioprio(tid).unwrap();
    let cpus = thread_setup::thread_cpus(tid).unwrap();
    let maps = numa_maps_policies(child.id(), tid);
    let out = child.wait_with_output().unwrap();
    succeeded_as(&out, "run with --ioprio/--cmdprio/--numa-*");
    assert_eq!(prio, 3 << 13, "the worker's I/O priority is idle, level 0");
    let node0 = thread_setup::node_cpus(&Host::real(), 0).unwrap();
    let mut want = node0.clone();
    want.sort_unstable();
    assert_eq!(
        cpus, want,
        "the worker may run on node 0's CPUs, all of them"
    );
    assert!(
        maps.lines().any(|l| l.split(' ').nth(1) == Some("bind:0")),
        "numa_maps shows no mapping under bind:0:\n{maps}"
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    let c = &doc["config"];
    assert_eq!(c["ioprio"], "idle,0");
    assert_eq!(c["cmdprio"], "25:be,1");
    assert_eq!(c["numa_nodes"], serde_json::json!([0]));
    assert_eq!(c["numa_mem"], "bind:0");
    assert_eq!(c["pin"], false);
    let w = &doc["workers"][0];
    let raised = w["cmdprio_ios"].as_u64().unwrap() as f64;
    let all = (w["read_ios"].as_u64().unwrap()) as f64;
    assert!(all > 200.0, "too few I/Os to judge the share: {all}");
    // 25% drawn per I/O: the share of a few hundred or more lies well
    // within 15-35% (the window's count excludes none: no ramp).
    let share = raised / all;
    assert!(
        (0.15..=0.35).contains(&share),
        "{raised} of {all} I/Os raised: not about 25%"
    );
}

/// The sync engine issues pread/pwrite, which have no command priority:
/// --cmdprio with it is one line, exit 2.
#[test]
fn cmdprio_with_the_sync_engine_is_refused() {
    let out = sb()
        .args([
            "run",
            "--engine",
            "sync",
            "--cmdprio",
            "20:1",
            "--dry-run",
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--cmdprio and --cmdprio-bssplit set each command's priority")
            && err.contains("use --engine uring"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// A NUMA node this machine has not is one line naming it, exit 2.
#[test]
fn a_numa_node_that_is_not_there_is_refused() {
    for (opt, val) in [("--numa-nodes", "63"), ("--numa-mem", "interleave:0,63")] {
        let out = sb()
            .args(["run", opt, val, "--dry-run", "/dev/null"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{opt} {val}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("NUMA node 63 does not exist"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

/// fio's example job file, from fio's repository as shipped.
fn example(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/fio-examples")
            .join(name),
    )
    .unwrap()
}

/// fio's examples/cmdprio-percentage.fio runs on a loop device (its
/// filename= replaced on the command line): idle class for the job,
/// realtime for 20% of its commands, and its latency log with log_prio.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root (loop devices)")]
fn fio_example_cmdprio_percentage_runs() {
    let dir = tempfile::tempdir().unwrap();
    let file = data_file(dir.path(), "back", 16 << 20);
    let dev = Loop::attach(&file, &[]);
    let job = dir.path().join("cmdprio-percentage.fio");
    std::fs::write(&job, example("cmdprio-percentage.fio")).unwrap();
    let out = sb()
        .current_dir(dir.path())
        .args([
            "run",
            "--json",
            "-",
            "--fio-job",
            job.to_str().unwrap(),
            "-t",
            "1s",
            &dev.dev,
        ])
        .output()
        .unwrap();
    succeeded_as(&out, "cmdprio-percentage.fio");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--ioprio=idle,0 --cmdprio=20:rt,0"), "{err}");
    assert!(
        err.contains("log_prio=1 with cmdprio_percentage=20"),
        "{err}"
    );
    let doc = json(&out.stdout);
    assert_eq!(doc["config"]["ioprio"], "idle,0");
    assert!(doc["workers"][0]["cmdprio_ios"].as_u64().unwrap() > 0);
    // The log's priority column, in hex: the job's class, idle (3 << 13),
    // or, for the fifth of I/Os cmdprio picks, rt level 0 (1 << 13).
    let log = std::fs::read_to_string(dir.path().join("prio-run.log_lat.1.log")).unwrap();
    let idle = log.lines().filter(|l| l.ends_with(", 0x6000")).count();
    let rt = log.lines().filter(|l| l.ends_with(", 0x2000")).count();
    assert!(idle > 0 && idle + rt == log.lines().count(), "{log}");
}

/// fio's examples/numa.fio: as shipped its second job names node 1, which
/// a one-node machine has not (refused by name before any run); with that
/// job on node 0, both jobs run at once on the loop device.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root (loop devices)")]
fn fio_example_numa_runs() {
    let dir = tempfile::tempdir().unwrap();
    let file = data_file(dir.path(), "back", 16 << 20);
    let dev = Loop::attach(&file, &[]);
    let shipped = example("numa.fio");
    let job = dir.path().join("numa.fio");
    std::fs::write(&job, &shipped).unwrap();
    let run = || {
        sb().args([
            "run",
            "--fio-job",
            job.to_str().unwrap(),
            "-t",
            "1s",
            "--size",
            "8m",
            &dev.dev,
        ])
        .output()
        .unwrap()
    };
    if !thread_setup::node_exists(&Host::real(), 1) {
        let out = run();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("NUMA node 1 does not exist"), "{err}");
        std::fs::write(
            &job,
            shipped
                .replace("numa_cpu_nodes=0-1", "numa_cpu_nodes=0")
                .replace("interleave:0-1", "interleave:0"),
        )
        .unwrap();
    }
    let out = run();
    succeeded_as(&out, "numa.fio");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--numa-nodes=0 --numa-mem=bind:0"), "{err}");
    assert!(err.contains("--numa-mem=interleave:"), "{err}");
}
