//! A file on tmpfs is memory, not a device: tmpfs takes O_DIRECT and serves
//! it from RAM, with no device counters to give it away, so the report must
//! say so itself.

use crate::common;

use crate::common::{run_json, sb};

#[test]
fn o_direct_on_tmpfs_says_the_target_is_memory() {
    let dir = tempfile::tempdir_in("/dev/shm").expect("a tmpfs at /dev/shm");
    let t = dir.path().join("t");
    std::fs::write(&t, vec![1u8; 8 << 20]).unwrap();
    let t = t.to_str().unwrap();
    for mode in ["--direct", "--buffered"] {
        let d = run_json(&[
            "run",
            mode,
            "--duration",
            "50ms",
            "--ramp",
            "0",
            "--no-progress",
            t,
        ]);
        assert!(d["targets"][0]["device"].is_null());
        let said = d["warnings"].as_array().unwrap().iter().any(|w| {
            let w = crate::common::warning_text(w).unwrap();
            w.contains("is on tmpfs: the target is memory, not a device")
        });
        assert!(said, "{mode}: {}", d["warnings"]);
    }
    let out = sb()
        .args(["run", "--duration", "50ms", "--no-progress", t])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("tmpfs takes O_DIRECT but serves it from RAM"),
        "{text}"
    );
}

#[test]
fn a_file_on_a_disk_is_not_called_memory() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let t = common::data_file(dir.path(), "t", 1 << 20);
    let d = run_json(&[
        "run",
        "--duration",
        "50ms",
        "--ramp",
        "0",
        "--no-progress",
        t.to_str().unwrap(),
    ]);
    assert!(!d["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| crate::common::warning_text(w)
            .unwrap()
            .contains("the target is memory")));
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_block_device_is_not_called_memory_for_its_devtmpfs_node() {
    // The node /dev/loopN sits on devtmpfs, whose statfs says tmpfs; the
    // device's data does not live there.
    let bed = common::LoopBed::new(1, 8);
    let out = common::sb()
        .args(["run", "-t", "100ms", "--ramp", "0", &bed.devices[0]])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr) + String::from_utf8_lossy(&out.stdout);
    common::succeeded(&out);
    assert!(!err.contains("the target is memory"), "{err}");
}
