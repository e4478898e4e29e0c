//! Every knob restored: --readahead on a loop device is put back after a
//! normal run, after SIGINT (which still writes the report), and, after a
//! SIGKILL, by `stripebench restore`. Root only.

mod common;

use std::time::Duration;

use common::{interrupt, json, sb, spawn, LoopBed};

fn ra_path(dev: &str) -> String {
    format!(
        "/sys/block/{}/queue/read_ahead_kb",
        dev.trim_start_matches("/dev/")
    )
}

fn ra(dev: &str) -> String {
    std::fs::read_to_string(ra_path(dev))
        .unwrap()
        .trim()
        .to_string()
}

/// Waits until the running child has set the read-ahead (it does so before
/// its workers start), then a little longer so the run is under way.
fn wait_for(dev: &str, value: &str) {
    let t0 = std::time::Instant::now();
    while ra(dev) != value {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "read-ahead never became {value}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn readahead_is_restored_after_a_run_and_after_sigint() {
    let bed = LoopBed::new(1, 32);
    let dev = bed.devices[0].clone();
    std::fs::write(ra_path(&dev), "128").unwrap();
    let out = sb()
        .args([
            "run",
            "--buffered",
            "--readahead",
            "4096",
            "--duration",
            "300ms",
            "--ramp",
            "0",
            "--json",
            "-",
            &dev,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json(&out.stdout);
    assert_eq!(
        doc["targets"][0]["read_ahead_kb"], 4096,
        "in effect during the run"
    );
    assert_eq!(doc["config"]["readahead_kb"], 4096);
    assert_eq!(ra(&dev), "128", "restored after a normal run");

    let jpath = bed.dir().join("int.json");
    let child = spawn(&[
        "run",
        "--buffered",
        "--readahead",
        "2048",
        "--duration",
        "60s",
        "--ramp",
        "0",
        "--json",
        jpath.to_str().unwrap(),
        &dev,
    ]);
    wait_for(&dev, "2048");
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json(&std::fs::read(&jpath).unwrap())["interrupted"], true);
    assert_eq!(ra(&dev), "128", "restored after SIGINT");
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn restore_puts_back_what_a_killed_run_left() {
    let bed = LoopBed::new(1, 32);
    let dev = bed.devices[0].clone();
    std::fs::write(ra_path(&dev), "256").unwrap();
    let mut child = spawn(&[
        "run",
        "--buffered",
        "--readahead",
        "1024",
        "--duration",
        "60s",
        "--ramp",
        "0",
        &dev,
    ]);
    wait_for(&dev, "1024");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(ra(&dev), "1024", "SIGKILL leaves the setting changed");
    // The next run warns that a restore is pending.
    let out = sb()
        .args(["run", "--duration", "100ms", "--ramp", "0", &dev])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("stripebench restore"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = sb().arg("restore").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("read_ahead_kb to 256"), "{text}");
    assert_eq!(ra(&dev), "256", "restored");
}
