//! CPU time that adds up at scale (issue 39): with hundreds of targets on
//! two CPUs, the workers' CPU time in a 1 s window summed to 236 s, and a
//! worker that completed no I/O showed about 1 s of system time. Each
//! worker's CPU is its own thread's over its own window; their sum can be
//! no more than the CPUs can give in the window, and matches what the
//! kernel charged the whole process.

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use crate::common::*;

/// zram devices filled with bytes that do not compress (a read of a page
/// never written returns zeros without touching memory: no work to count).
fn filled_zram(n: usize, size_mb: usize) -> Vec<Zram> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut block = vec![0u8; size_mb << 20];
    for chunk in block.chunks_mut(8) {
        // xorshift64: fast, and incompressible enough for zram.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        chunk.copy_from_slice(&seed.to_le_bytes()[..chunk.len()]);
    }
    (0..n)
        .map(|_| {
            // Pushed before written: a failure here still removes it.
            let z = Zram::new(size_mb);
            std::fs::write(&z.dev, &block).unwrap_or_else(|e| panic!("{}: {e}", z.dev));
            z
        })
        .collect()
}

/// Runs stripebench with `args`, its report in `dir`, and returns its
/// document, its text table (stdout, with stderr), and the CPU seconds the kernel
/// charged the whole process (user, system), from wait4.
fn run_with_rusage(dir: &std::path::Path, args: &[&str]) -> (serde_json::Value, String, f64, f64) {
    let json_path = dir.join("run.json");
    let out_path = dir.join("stdout");
    let err_path = dir.join("stderr");
    // Reaped by wait4 below, for its resource usage (std's wait gives none).
    #[allow(clippy::zombie_processes)]
    let child = Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
        .env("STRIPEBENCH_STATE_DIR", state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args(["run", "--no-progress", "--json"])
        .arg(&json_path)
        .args(args)
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data, filled in by wait4.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, into locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    assert_eq!(pid, child.id() as i32, "wait4");
    let stderr =
        std::fs::read_to_string(&out_path).unwrap() + &std::fs::read_to_string(&err_path).unwrap();
    let status = std::process::ExitStatus::from_raw(status);
    assert!(status.success(), "{status}: {stderr}");
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let doc = json(&std::fs::read(&json_path).unwrap());
    (doc, stderr, secs(ru.ru_utime), secs(ru.ru_stime))
}

#[test]
#[cfg_attr(not(sb_zram), ignore = "needs root: zram devices")]
fn cpu_time_of_256_targets_adds_up() {
    let devices = filled_zram(256, 4);
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["-t", "1s", "--ramp", "0"];
    args.extend(devices.iter().map(|z| z.dev.as_str()));
    let (doc, stderr, usr, sys) = run_with_rusage(dir.path(), &args);
    let cpus = doc["host"]["cpus"].as_u64().unwrap() as f64;
    let window = f(&doc["window"]["seconds"]);
    let workers = doc["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 256);
    let cpu = |w: &serde_json::Value| f(&w["cpu_usr_sec"]) + f(&w["cpu_sys_sec"]);
    // No thread can use more CPU than the window's wall time, and all of
    // them together no more than the CPUs can give.
    for w in workers {
        assert!(
            cpu(w) <= window * 1.001,
            "worker {}: {} s in a {window} s window",
            w["id"],
            cpu(w)
        );
    }
    let total: f64 = workers.iter().map(cpu).sum();
    let p = &doc["process"];
    let window_cpu = f(&p["window_cpu_usr_sec"]) + f(&p["window_cpu_sys_sec"]);
    let all = f(&p["cpu_usr_sec"]) + f(&p["cpu_sys_sec"]);
    println!(
        "workers {total:.3} s; window {window:.3} s x {cpus} CPUs; process over the window {window_cpu:.3} s \
         (sampled {:.3} s apart), in all {all:.3} s; wait4 {usr:.3} + {sys:.3} s; set-up {:.3} s",
        f(&p["window_cpu_span_sec"]),
        f(&p["setup_sec"])
    );
    assert!(
        total <= cpus * window,
        "the workers' CPU, {total:.3} s, is more than {cpus} CPUs give in {window:.3} s\n{stderr}"
    );
    // Like for like: the workers' CPU against every thread's over the
    // window. The coordinator samples the process at the window's edges
    // and waits its turn for a CPU behind 256 workers to take the closing
    // one (20-30 ms late here): its figure is taken per second of the
    // span it covers, times the window's length, ...
    // ... which is no bound from above on a busy machine (the span then
    // runs hundreds of ms past the window, and the workers did not run
    // evenly over it): there, the workers' threads, a part of the
    // process, over the window, a part of the span, took no more than the
    // whole process over the whole span.
    let per_window = window_cpu * window / f(&p["window_cpu_span_sec"]);
    assert!(
        total >= 0.9 * per_window && total <= window_cpu * 1.001 + 0.005,
        "the workers' {total:.3} s against the process's {per_window:.3} s over the window \
         ({window_cpu:.3} s over its whole span)\n{stderr}"
    );
    // ... and the document's whole-process figure against the kernel's,
    // from outside (wait4): the same up to the reports written after it.
    let kernel = usr + sys;
    assert!(
        all <= kernel * 1.001,
        "the document's {all:.3} s > wait4's {kernel:.3} s"
    );
    assert!(
        all >= 0.9 * kernel,
        "the document's {all:.3} s against wait4's {kernel:.3} s"
    );
    assert!(window_cpu <= all, "{window_cpu} > {all}");
    assert!(f(&p["setup_sec"]) > 0.0);
    // The table says both, with the peak RSS.
    assert!(
        stderr.contains("process: set-up ") && stderr.contains("peak RSS "),
        "{stderr}"
    );
    assert!(doc["host"]["peak_rss_bytes"].as_u64().unwrap() > 0);
}
