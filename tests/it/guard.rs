//! The write guard on real block devices (root; loop devices from
//! scripts/testbed.sh): mounted file systems, symlinked paths, a member of a
//! mounted btrfs RAID0, signatures, a blank device, dry runs. Refused writes
//! must leave the device untouched; reads are never refused on these grounds.

use crate::common;

use std::path::Path;
use std::process::Command;

use crate::common::{digest, mount, sb, sh, sh_required, LoopBed, Mounted};

/// Mounts read-only: a file system mounted read-write writes to its device
/// on its own (journal commits), which would blur the check that a refused
/// run wrote nothing. Read-only is still mounted, which is what is refused.
fn mount_ro(dev: &str, at: &Path) -> Mounted {
    mount(&["-o", "ro", dev], at)
}

/// `stripebench run ARGS DEV` is refused (see common::refused).
fn refused(args: &[&str], dev: &str, expect: &str) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.push(dev);
    common::refused(&all, expect);
}

const WRITES: [&str; 3] = ["write", "randwrite", "randrw"];

#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_ext4)),
    ignore = "needs root and mkfs.ext4 (e2fsprogs)"
)]
fn mounted_ext4_is_refused_by_path_and_by_symlink() {
    let bed = LoopBed::new(1, 64);
    let dev = bed.devices[0].clone();
    // No lazy initialisation: a quiet file system writes nothing on its own.
    sh_required(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            // nodiscard: a discard punches the loop device's backing
            // file full of holes, whose reads are refused (issue 39).
            "lazy_itable_init=0,lazy_journal_init=0,nodiscard",
            &dev,
        ],
    );
    let mnt = tempfile::tempdir().unwrap();
    let _m = mount_ro(&dev, mnt.path());
    let link = bed.dir().join("by-id-disk");
    std::os::unix::fs::symlink(&dev, &link).unwrap();
    let link = link.to_str().unwrap();
    // Taken while mounted: mounting and unmounting write to the device themselves.
    sh("sync", &[]);
    let before = digest(&dev);
    for rw in WRITES {
        for target in [dev.as_str(), link] {
            refused(
                &["--rw", rw, "--allow-destructive"],
                target,
                "is mounted at",
            );
            refused(
                &["--rw", rw, "--allow-destructive", "--force-signature"],
                target,
                "is mounted at",
            );
        }
    }
    refused(
        &["--rw", "write", "--allow-destructive"],
        link,
        &format!("-> {dev}"),
    );
    // Reads are not refused.
    sb().args(["run", "--duration", "200ms", "--ramp", "0", &dev])
        .assert()
        .success();
    // A dry run shows the failing checks and exits 2.
    let out = sb()
        .args([
            "run",
            "--rw",
            "write",
            "--allow-destructive",
            "--dry-run",
            link,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("[REFUSED] not mounted") && text.contains("[REFUSED] no signature"),
        "{text}"
    );
    sh("sync", &[]);
    assert_eq!(
        digest(&dev),
        before,
        "refused writes left the device as it was"
    );
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_ext4)),
    ignore = "needs root and mkfs.ext4 (e2fsprogs)"
)]
fn an_unmounted_signature_needs_force_and_a_blank_device_needs_consent() {
    let bed = LoopBed::new(2, 32);
    let (fs_dev, blank) = (bed.devices[0].clone(), bed.devices[1].clone());
    sh_required("mkfs.ext4", &["-q", "-F", &fs_dev]);
    let before = digest(&fs_dev);
    refused(
        &["--rw", "write", "--allow-destructive"],
        &fs_dev,
        "carries ext4 version 1.0 (filesystem)",
    );
    assert_eq!(digest(&fs_dev), before);
    sb().args([
        "run",
        "--rw",
        "write",
        "--allow-destructive",
        "--force-signature",
        "--duration",
        "200ms",
        "--ramp",
        "0",
        &fs_dev,
    ])
    .assert()
    .success();
    // Blank (random data from testbed.sh, no signature): consent is enough.
    refused(&["--rw", "write"], &blank, "--allow-destructive");
    let out = sb()
        .args([
            "run",
            "--rw",
            "write",
            "--allow-destructive",
            "--dry-run",
            &blank,
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("every check passes"));
    sb().args([
        "run",
        "--rw",
        "randwrite",
        "--allow-destructive",
        "--duration",
        "200ms",
        "--ramp",
        "0",
        &blank,
    ])
    .assert()
    .success();
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_btrfs)),
    ignore = "needs root and mkfs.btrfs (btrfs-progs)"
)]
fn a_member_of_a_mounted_btrfs_raid0_is_refused() {
    let bed = LoopBed::new(3, 128);
    // -K: no discard, which would leave the members' backing files holes.
    let mut args = vec!["-q", "-f", "-K", "-d", "raid0", "-m", "raid0"];
    args.extend(bed.devices.iter().map(String::as_str));
    sh_required("mkfs.btrfs", &args);
    let mnt = tempfile::tempdir().unwrap();
    let _m = mount_ro(&bed.devices[0], mnt.path());
    let member = &bed.devices[1];
    sh("sync", &[]);
    let before = digest(member);
    for rw in WRITES {
        refused(
            &["--rw", rw, "--allow-destructive"],
            member,
            "member of the mounted btrfs",
        );
        // Past the signature check, the kernel's exclusive claim still refuses.
        refused(
            &["--rw", rw, "--allow-destructive", "--force-signature"],
            member,
            "is in use",
        );
    }
    sb().args(["run", "--duration", "200ms", "--ramp", "0", member])
        .assert()
        .success();
    sh("sync", &[]);
    assert_eq!(
        digest(member),
        before,
        "refused writes left the member as it was"
    );
}

/// Turns swap off on drop.
struct Swap(String);

impl Drop for Swap {
    fn drop(&mut self) {
        let _ = Command::new("swapoff").arg(&self.0).status();
    }
}

#[test]
#[cfg_attr(not(all(sb_root, sb_swap)), ignore = "needs root, mkswap and swapon")]
fn active_swap_is_refused() {
    let bed = LoopBed::new(1, 32);
    let dev = bed.devices[0].clone();
    sh_required("mkswap", &[&dev]);
    sh_required("swapon", &[&dev]);
    let _swap = Swap(dev.clone());
    refused(
        &["--rw", "write", "--allow-destructive"],
        &dev,
        "is active swap",
    );
    refused(
        &["--rw", "write", "--allow-destructive", "--force-signature"],
        &dev,
        "is active swap",
    );
    sb().args(["run", "--duration", "200ms", "--ramp", "0", &dev])
        .assert()
        .success();
}

#[test]
#[cfg_attr(not(all(sb_root, sb_swap)), ignore = "needs root, mkswap and swapon")]
fn an_active_swap_file_is_refused_before_the_run() {
    // Hostile test: an active swap file passed --dry-run ("every check
    // passes") and the run then failed on ETXTBSY with exit 1.
    // Not under /tmp: swapon needs a file system that can hold swap (not tmpfs).
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let f = d.path().join("swap file");
    std::fs::write(&f, vec![0u8; 16 << 20]).unwrap();
    std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    sh_required("mkswap", &[f.to_str().unwrap()]);
    sh_required("swapon", &[f.to_str().unwrap()]);
    let _swap = Swap(f.to_str().unwrap().to_string());
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&f, &link).unwrap();
    for target in [&f, &link] {
        refused(
            &["--rw", "write", "--allow-destructive"],
            target.to_str().unwrap(),
            "is an active swap file (/proc/swaps lists it",
        );
    }
    let out = sb()
        .args(["run", "--rw", "write", "--allow-destructive", "--dry-run"])
        .arg(&f)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("[REFUSED] not swap"), "{text}");
    // Reading it is not refused.
    sb().args(["run", "--duration", "200ms", "--ramp", "0"])
        .arg(&f)
        .assert()
        .success();
}

#[test]
#[cfg_attr(not(all(sb_root, sb_swap)), ignore = "needs root, mkswap and swapon")]
fn a_loop_device_over_an_active_swap_file_is_refused_even_with_force_signature() {
    // Hostile test: `mkswap F; swapon F; losetup -f --show F`, then
    // `run --rw write --allow-destructive --force-signature --dry-run LOOP`
    // said "every check passes"; the real run failed with EIO mid-run, only
    // because the kernel refuses writes to a swap file. /proc/swaps names
    // the file (escaped: a space is \040), never the loop device.
    // Not under /tmp: swapon needs a file system that can hold swap (not tmpfs).
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let f = d.path().join("swap file");
    // Written out, not sparse: swapon refuses a file with holes.
    std::fs::write(&f, vec![0u8; 16 << 20]).unwrap();
    std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let name = f.to_str().unwrap();
    sh_required("mkswap", &[name]);
    sh_required("swapon", &[name]);
    let _swap = Swap(name.to_string());
    let l = common::Loop::attach(&f, &[]);
    // Only the header page: the kernel may swap pages out into the rest.
    let header = |f: &Path| std::fs::read(f).unwrap()[..4096].to_vec();
    let before = header(&f);
    for force in [false, true] {
        let mut args = vec!["--rw", "write", "--allow-destructive"];
        if force {
            args.push("--force-signature");
        }
        refused(&args, &l.dev, "is an active swap file");
        // The file itself, too: in use twice over (swap, and the loop).
        refused(&args, name, "is an active swap file");
    }
    let out = sb()
        .args(["run", "--rw", "write", "--allow-destructive"])
        .args(["--force-signature", "--dry-run", &l.dev])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("[REFUSED] not swap") && text.contains("its backing file"),
        "{text}"
    );
    assert!(header(&f) == before, "the swap header is as it was");
    // Reading through the loop device is not refused.
    sb().args(["run", "--duration", "200ms", "--ramp", "0", &l.dev])
        .assert()
        .success();
}
