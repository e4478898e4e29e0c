//! Stripe awareness end to end on a real striped volume: btrfs RAID0 over
//! three loop devices (root, btrfs-progs). Topology finds the members from
//! the mount point and from a file inside; `run --members` drives them;
//! `compare` runs every phase, reports an efficiency, and flags a member
//! throttled through the blkio cgroup as the slow one.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{json, mount, sb, sh, u, LoopBed, Mounted};
use serde_json::Value;

/// A throttled blkio cgroup (v1), removed on drop.
struct Throttle(PathBuf);

impl Drop for Throttle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn btrfs_raid0(bed: &LoopBed, at: &Path) -> Option<Mounted> {
    let mut args = vec!["-q", "-f", "-d", "raid0", "-m", "raid0"];
    args.extend(bed.devices.iter().map(String::as_str));
    if !sh("mkfs.btrfs", &args) {
        println!("skipped: cannot make a btrfs RAID0 (btrfs-progs missing?)");
        return None;
    }
    mount(&[&bed.devices[0]], at)
}

fn leaves(topology: &Value) -> Vec<String> {
    topology["root"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn btrfs_raid0_topology_members_and_compare_with_a_slow_member() {
    let Some(bed) = LoopBed::new(3, 160) else {
        return;
    };
    let mnt = tempfile::tempdir().unwrap();
    let Some(_m) = btrfs_raid0(&bed, mnt.path()) else {
        return;
    };
    let mut expected = bed.devices.clone();
    expected.sort();

    // Topology from the mount point and from a file inside.
    for target in [mnt.path().to_path_buf(), mnt.path().join("inside")] {
        if target.ends_with("inside") {
            std::fs::write(&target, vec![1u8; 1 << 20]).unwrap();
        }
        let out = sb()
            .arg("topology")
            .arg(&target)
            .arg("--json")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let t = json(&out.stdout);
        assert_eq!(t["root"]["kind"], "btrfs");
        assert_eq!(t["root"]["btrfs"]["data_profile"], "raid0");
        assert_eq!(u(&t["root"]["btrfs"]["stripe_len"]), 65536);
        assert_eq!(leaves(&t), expected, "{}", target.display());
    }

    // One worker per member.
    let out = sb()
        .args([
            "run",
            "--duration",
            "300ms",
            "--ramp",
            "0",
            "--json",
            "-",
            "--members",
        ])
        .arg(mnt.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json(&out.stdout);
    let targets: Vec<String> = doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(targets, expected);

    // compare, with the last member throttled to 40 MB/s for this process tree.
    let slow = expected[2].clone();
    let numbers = std::fs::read_to_string(format!(
        "/sys/class/block/{}/dev",
        slow.trim_start_matches("/dev/")
    ))
    .unwrap();
    let cg = PathBuf::from(format!(
        "/sys/fs/cgroup/blkio/stripebench-test-{}",
        std::process::id()
    ));
    let throttled = std::fs::create_dir(&cg).is_ok()
        && std::fs::write(
            cg.join("blkio.throttle.read_bps_device"),
            format!("{} 40000000", numbers.trim()),
        )
        .is_ok();
    let _guard = Throttle(cg.clone());
    let bin = assert_cmd::cargo::cargo_bin("stripebench");
    let script = format!(
        "{} exec {} compare --duration 1s --ramp 200ms --file-size 96m --json - {}",
        if throttled {
            format!("echo $$ > {}/cgroup.procs &&", cg.display())
        } else {
            String::new()
        },
        bin.display(),
        mnt.path().display()
    );
    let out = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    println!("{text}");
    assert!(out.status.success(), "{text}");
    let c = json(&out.stdout);
    let names: Vec<&str> = c["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![
            "members together, O_DIRECT",
            "volume, 1 worker, O_DIRECT",
            "volume, 3 workers, O_DIRECT",
            "volume, 3 workers, buffered"
        ]
    );
    let eff = c["efficiency"].as_f64().unwrap();
    assert!(eff > 0.0, "efficiency {eff}");
    assert!(text.contains("stripe efficiency"));
    let shares: f64 = c["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["share"].as_f64().unwrap())
        .sum();
    assert!((shares - 1.0).abs() < 1e-9);
    assert_eq!(
        std::fs::read_dir(mnt.path()).unwrap().count(),
        1,
        "the test file was removed"
    );
    if throttled {
        assert_eq!(c["slowest"], slow.as_str(), "{text}");
        assert!(text.contains("SLOW"));
    } else {
        println!("skipped the slow-member check: no blkio cgroup to throttle with");
    }
}

#[test]
fn compare_and_members_refuse_what_is_not_a_volume() {
    let Some(bed) = LoopBed::new(1, 16) else {
        return;
    };
    let dev = &bed.devices[0];
    for (args, msg) in [
        (vec!["compare", dev.as_str()], "not a volume with members"),
        (vec!["run", "--members", dev.as_str()], "has no members"),
        (
            vec!["compare", "--rw", "write", dev.as_str()],
            "compare measures reads",
        ),
        (vec!["topology", "/dev/shm"], "no block device under it"),
    ] {
        let out = sb().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(msg), "{args:?}: {err}");
    }
}
