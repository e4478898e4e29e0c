//! The engines: sync and io_uring move the same bytes and I/Os for a
//! size-bounded workload and write the same data; io_uring's fallback when
//! buffer registration is refused; engine/depth combinations.

use crate::common;

use std::process::Command;

use crate::common::{data_file, json, require, require_uring, run_json, sb, u};
use serde_json::Value;

fn run(args: &[&str]) -> Value {
    run_json(&[&["run"], args].concat())
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn both_engines_move_the_same_bytes_and_write_the_same_data() {
    require_uring();
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 4 << 20);
    let b = data_file(dir.path(), "b", 4 << 20);
    let common = [
        "--io-limit",
        "4m",
        "--bs",
        "64k",
        "--duration",
        "60s",
        "--seed",
        "99",
        "--allow-destructive",
        "--jobs",
        "2",
    ];
    for rw in ["read", "write", "randread"] {
        let s = run(&[
            &common[..],
            &["--rw", rw, "--engine", "sync", a.to_str().unwrap()],
        ]
        .concat());
        let q = run(&[
            &common[..],
            &[
                "--rw",
                rw,
                "--engine",
                "uring",
                "--iodepth",
                "8",
                b.to_str().unwrap(),
            ],
        ]
        .concat());
        assert_eq!(s["config"]["engine"], "sync");
        assert_eq!(q["config"]["engine"], "uring");
        for (x, y) in s["workers"]
            .as_array()
            .unwrap()
            .iter()
            .zip(q["workers"].as_array().unwrap())
        {
            // 4 MiB per worker, 64 KiB each: exactly 64 I/Os.
            assert_eq!(u(&x["ios"]), 64, "{rw} sync");
            assert_eq!(u(&y["ios"]), 64, "{rw} uring");
            assert_eq!(x["bytes"], y["bytes"]);
        }
        assert_eq!(u(&s["total"]["bytes"]), 8 << 20);
        assert_eq!(s["total"]["bytes"], q["total"]["bytes"]);
    }
    assert_eq!(
        std::fs::read(&a).unwrap(),
        std::fs::read(&b).unwrap(),
        "both engines wrote the same data"
    );
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn uring_at_depth_one_works_and_sync_refuses_depth() {
    require_uring();
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 1 << 20);
    let d = run(&[
        "--engine",
        "uring",
        "--iodepth",
        "1",
        "--bs",
        "4k",
        "--duration",
        "300ms",
        "--ramp",
        "0",
        t.to_str().unwrap(),
    ]);
    assert!(u(&d["total"]["ios"]) > 0);
    assert!(d["workers"][0]["engine_path"]
        .as_str()
        .unwrap()
        .starts_with("io_uring"));
    // auto picks uring above depth 1.
    let d = run(&[
        "--iodepth",
        "4",
        "--bs",
        "4k",
        "--duration",
        "300ms",
        "--ramp",
        "0",
        t.to_str().unwrap(),
    ]);
    assert_eq!(d["config"]["engine"], "uring");
    let d = run(&[
        "--no-register",
        "--engine",
        "uring",
        "--bs",
        "4k",
        "--duration",
        "300ms",
        "--ramp",
        "0",
        t.to_str().unwrap(),
    ]);
    let path = d["workers"][0]["engine_path"].as_str().unwrap();
    assert!(path.starts_with("io_uring, plain read/write"), "{path}");
    let out = sb()
        .args(["run", "--engine", "sync", "--iodepth", "4"])
        .arg(&t)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--engine uring"));
}

#[test]
#[cfg_attr(
    not(all(sb_uring, sb_root, sb_setpriv)),
    ignore = "needs io_uring, root, setpriv and prlimit"
)]
fn refused_buffer_registration_falls_back_to_plain_io() {
    require_uring();
    // Without CAP_IPC_LOCK and with no locked memory allowed, the kernel
    // refuses to register buffers; the run must go on, and say so.
    let probe = Command::new("setpriv")
        .args([
            "--bounding-set=-ipc_lock",
            "--inh-caps=-ipc_lock",
            "prlimit",
            "--memlock=131072:131072",
            "true",
        ])
        .status();
    require(
        probe.map(|s| s.success()).unwrap_or(false),
        "setpriv/prlimit cannot drop CAP_IPC_LOCK here",
    );
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 4 << 20);
    let out = Command::new("setpriv")
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args([
            "--bounding-set=-ipc_lock",
            "--inh-caps=-ipc_lock",
            "prlimit",
            "--memlock=131072:131072",
        ])
        .arg(assert_cmd::cargo::cargo_bin("stripebench"))
        .args([
            "run",
            "--iodepth",
            "8",
            "--bs",
            "64k",
            "--io-limit",
            "1m",
            "--json",
            "-",
        ])
        .arg(&t)
        .output()
        .unwrap();
    common::succeeded(&out);
    let d = json(&out.stdout);
    let path = d["workers"][0]["engine_path"].as_str().unwrap();
    println!("engine path: {path}");
    assert!(path.contains("buffer registration refused"), "{path}");
    assert!(path.starts_with("io_uring, plain read/write"), "{path}");
    assert_eq!(u(&d["total"]["bytes"]), 1 << 20);
}
