//! Every on-disk format that libblkid knows refuses a write: real images,
//! made by the real tools (cryptsetup, mkfs.*, mkswap, pvcreate, sgdisk) on
//! loop devices, and image files named as targets themselves. The dry run
//! names what it found the way `blkid -p` does ("crypto_LUKS version 2");
//! the real run is refused (exit 2) and the device or file is left as it
//! was. (md members are made in the lab's guest, which has md: see
//! tests/it/lab.rs.)

use crate::common;

use std::path::Path;
use std::process::Command;

use crate::common::{digest, digest_bytes, sb, sh_required, Loop};

/// A sparse backing file of `mb` MiB in `dir`, on a loop device.
fn blank(dir: &Path, mb: u64) -> Loop {
    let file = dir.join("backing.img");
    let f = std::fs::File::create(&file).unwrap();
    f.set_len(mb << 20).unwrap();
    Loop::attach(&file, &[])
}

/// The first 8 MiB and the last 1 MiB of a device (where every signature
/// and the start of every write lives), checksummed.
fn head_and_tail(dev: &str) -> u64 {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(dev).unwrap();
    let size = f.seek(SeekFrom::End(0)).unwrap();
    let mut head = vec![0u8; (8u64 << 20).min(size) as usize];
    f.seek(SeekFrom::Start(0)).unwrap();
    f.read_exact(&mut head).unwrap();
    let mut tail = vec![0u8; (1u64 << 20).min(size) as usize];
    f.seek(SeekFrom::Start(size - tail.len() as u64)).unwrap();
    f.read_exact(&mut tail).unwrap();
    head.extend_from_slice(&tail);
    digest_bytes(&head)
}

/// The dry run refuses `dev` on its signature, naming `expect`; the real
/// write is refused too, and nothing was written.
fn refused_naming(dev: &str, expect: &str) {
    let out = sb()
        .args([
            "run",
            "--rw",
            "write",
            "--allow-destructive",
            "--dry-run",
            dev,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find(|l| l.contains("no signature"))
        .unwrap_or_else(|| panic!("no signature check in:\n{text}"));
    assert!(
        line.contains("[REFUSED]") && line.contains(expect),
        "expected '{expect}' refused: {line}"
    );
    let before = head_and_tail(dev);
    for rw in ["write", "randwrite"] {
        common::refused(&["run", "--rw", rw, "--allow-destructive", dev], expect);
    }
    assert_eq!(head_and_tail(dev), before, "a refused run wrote to {dev}");
}

/// Makes a loop device of `mb` MiB, runs `tool ARGS... DEV` on it, and
/// checks that stripebench refuses it naming `expect`.
fn formatted(mb: u64, tool: &str, args: &[&str], expect: &str) {
    let t = tempfile::tempdir().unwrap();
    let l = blank(t.path(), mb);
    let mut all = args.to_vec();
    all.push(&l.dev);
    sh_required(tool, &all);
    refused_naming(&l.dev, expect);
}

fn luks(version: &str) {
    let t = tempfile::tempdir().unwrap();
    let key = t.path().join("key");
    std::fs::write(&key, "not a secret").unwrap();
    let l = blank(t.path(), 64);
    // Cheap key derivation: the header is what matters, not its strength.
    sh_required(
        "cryptsetup",
        &[
            "luksFormat",
            "--batch-mode",
            "--type",
            &format!("luks{version}"),
            "--pbkdf",
            "pbkdf2",
            "--pbkdf-force-iterations",
            "1000",
            "--key-file",
            key.to_str().unwrap(),
            &l.dev,
        ],
    );
    refused_naming(&l.dev, &format!("crypto_LUKS version {version}"));
}

#[test]
#[cfg_attr(
    not(sb_signature_tools),
    ignore = "needs root, cryptsetup, mkfs.{f2fs,xfs,vfat,minix,bfs,cramfs}, mkswap, pvcreate, sgdisk (see .ci/run)"
)]
fn a_luks2_header_is_refused() {
    luks("2");
}

#[test]
#[cfg_attr(
    not(sb_signature_tools),
    ignore = "needs root, cryptsetup, mkfs.{f2fs,xfs,vfat,minix,bfs,cramfs}, mkswap, pvcreate, sgdisk (see .ci/run)"
)]
fn a_luks1_header_is_refused() {
    luks("1");
}

#[test]
#[cfg_attr(
    not(sb_signature_tools),
    ignore = "needs root, cryptsetup, mkfs.{f2fs,xfs,vfat,minix,bfs,cramfs}, mkswap, pvcreate, sgdisk (see .ci/run)"
)]
fn an_f2fs_file_system_is_refused() {
    formatted(128, "mkfs.f2fs", &["-q", "-f"], "f2fs");
}

#[test]
#[cfg_attr(
    not(sb_signature_tools),
    ignore = "needs root, cryptsetup, mkfs.{f2fs,xfs,vfat,minix,bfs,cramfs}, mkswap, pvcreate, sgdisk (see .ci/run)"
)]
fn an_xfs_file_system_is_refused() {
    // mkfs.xfs refuses file systems under 300 MiB.
    formatted(320, "mkfs.xfs", &["-q", "-f"], "xfs");
}

#[test]
#[cfg_attr(
    not(sb_signature_tools),
    ignore = "needs root, cryptsetup, mkfs.{f2fs,xfs,vfat,minix,bfs,cramfs}, mkswap, pvcreate, sgdisk (see .ci/run)"
)]
fn a_vfat_file_system_is_refused() {
    formatted(64, "mkfs.vfat", &[], "vfat version FAT16");
}

#[test]
#[cfg_attr(
    not(sb_signature_tools),
    ignore = "needs root, cryptsetup, mkfs.{f2fs,xfs,vfat,minix,bfs,cramfs}, mkswap, pvcreate, sgdisk (see .ci/run)"
)]
fn a_minix_file_system_is_refused() {
    formatted(64, "mkfs.minix", &[], "minix version 1");
}

#[test]
#[cfg_attr(
    not(sb_signature_tools),
    ignore = "needs root, cryptsetup, mkfs.{f2fs,xfs,vfat,minix,bfs,cramfs}, mkswap, pvcreate, sgdisk (see .ci/run)"
)]
fn a_bfs_file_system_is_refused() {
    // BFS addresses at most 32 MiB in 512-byte blocks of 16-bit inodes.
    formatted(16, "mkfs.bfs", &[], "bfs");
}

#[test]
#[cfg_attr(
    not(sb_signature_tools),
    ignore = "needs root, cryptsetup, mkfs.{f2fs,xfs,vfat,minix,bfs,cramfs}, mkswap, pvcreate, sgdisk (see .ci/run)"
)]
fn a_swap_area_is_refused() {
    formatted(64, "mkswap", &[], "swap version 1");
}

#[test]
#[cfg_attr(
    not(sb_signature_tools),
    ignore = "needs root, cryptsetup, mkfs.{f2fs,xfs,vfat,minix,bfs,cramfs}, mkswap, pvcreate, sgdisk (see .ci/run)"
)]
fn a_gpt_is_refused() {
    formatted(
        64,
        "sgdisk",
        &["-o", "-n", "1:2048:+1M"],
        "gpt partition table",
    );
}

#[test]
#[cfg_attr(
    not(sb_signature_tools),
    ignore = "needs root, cryptsetup, mkfs.{f2fs,xfs,vfat,minix,bfs,cramfs}, mkswap, pvcreate, sgdisk (see .ci/run)"
)]
fn an_lvm2_physical_volume_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let l = blank(t.path(), 64);
    sh_required("pvcreate", &["-q", "-ff", "-y", &l.dev]);
    // Whatever happens below, the PV label goes before the loop device does.
    struct Pv(String);
    impl Drop for Pv {
        fn drop(&mut self) {
            let _ = Command::new("pvremove")
                .args(["-q", "-ff", "-y", &self.0])
                .status();
        }
    }
    let _pv = Pv(l.dev.clone());
    refused_naming(&l.dev, "LVM2_member");
}

#[test]
#[cfg_attr(
    not(sb_signature_tools),
    ignore = "needs root, cryptsetup, mkfs.{f2fs,xfs,vfat,minix,bfs,cramfs}, mkswap, pvcreate, sgdisk (see .ci/run)"
)]
fn a_cramfs_image_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("file"), "cramfs content\n").unwrap();
    let img = t.path().join("cramfs.img");
    sh_required(
        "mkfs.cramfs",
        &[src.to_str().unwrap(), img.to_str().unwrap()],
    );
    // A loop device is a whole number of 512-byte sectors: pad the image.
    let f = std::fs::OpenOptions::new().write(true).open(&img).unwrap();
    f.set_len(1 << 20).unwrap();
    let l = Loop::attach(&img, &[]);
    refused_naming(&l.dev, "cramfs");
}

/// Whether `blkid -p` finds a signature of type `ty` on `path` (a file or a
/// device): the independent witness that a refused run left it there.
fn blkid_finds(path: &Path, ty: &str) -> bool {
    let out = Command::new(crate::common::tool("blkid"))
        .arg("-p")
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("blkid could not run: {e}"));
    String::from_utf8_lossy(&out.stdout).contains(&format!("TYPE=\"{ty}\""))
}

/// `run --rw write --allow-destructive --dry-run TARGET`: its exit code and
/// report.
fn dry_run(target: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let out = sb()
        .args(["run", "--rw", "write", "--allow-destructive", "--dry-run"])
        .args(extra)
        .arg(target)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// An image file carrying `expect` (blkid's TYPE `ty`), attached to
/// nothing: a write with --allow-destructive alone is refused in one line
/// naming it, and the file keeps it; with --force-signature, the user's
/// explicit consent, the write goes ahead and reaches the header.
fn image_file_refused_until_forced(img: &Path, ty: &str, expect: &str) {
    let name = img.to_str().unwrap();
    assert!(blkid_finds(img, ty), "the test's own image carries {ty}");
    let before = digest(name);
    for rw in ["write", "randwrite"] {
        common::refused(&["run", "--rw", rw, "--allow-destructive", name], expect);
    }
    let (code, text) = dry_run(img, &[]);
    assert_eq!(code, Some(2), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("no signature"))
        .unwrap_or_else(|| panic!("no signature check in:\n{text}"));
    assert!(
        line.contains("[REFUSED]") && line.contains(expect),
        "{line}"
    );
    assert_eq!(digest(name), before, "a refused run wrote to {name}");
    assert!(blkid_finds(img, ty), "{ty} is still on {name}");
    let out = sb()
        .args([
            "run",
            "--rw",
            "write",
            "--allow-destructive",
            "--force-signature",
        ])
        .args(["--io-limit", "1m", "--ramp", "0", "--no-progress", name])
        .output()
        .unwrap();
    common::succeeded(&out);
    assert!(!blkid_finds(img, ty), "the forced write reached the header");
}

#[test]
#[cfg_attr(not(sb_mkfs_ext4), ignore = "needs mkfs.ext4 (e2fsprogs)")]
fn an_ext4_image_file_is_refused_until_force_signature() {
    // Hostile test: an ext4 image file, attached to nothing, was overwritten
    // with --allow-destructive alone: only block devices were probed.
    let t = tempfile::tempdir().unwrap();
    let img = t.path().join("ext4.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    sh_required("mkfs.ext4", &["-q", "-F", img.to_str().unwrap()]);
    image_file_refused_until_forced(&img, "ext4", "carries ext4 version 1.0 (filesystem)");
}

#[test]
#[cfg_attr(not(all(sb_root, sb_cryptsetup)), ignore = "needs root and cryptsetup")]
fn a_luks2_container_file_is_refused_until_force_signature() {
    // Hostile test: a copy of a LUKS2 container file was wiped by
    // `run --rw write --allow-destructive FILE`.
    let t = tempfile::tempdir().unwrap();
    let key = t.path().join("key");
    std::fs::write(&key, "not a secret").unwrap();
    let img = t.path().join("luks.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    sh_required(
        "cryptsetup",
        &[
            "luksFormat",
            "--batch-mode",
            "--type",
            "luks2",
            "--pbkdf",
            "pbkdf2",
            "--pbkdf-force-iterations",
            "1000",
            "--key-file",
            key.to_str().unwrap(),
            img.to_str().unwrap(),
        ],
    );
    image_file_refused_until_forced(&img, "crypto_LUKS", "carries crypto_LUKS version 2");
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_xfs)),
    ignore = "needs root and mkfs.xfs (xfsprogs)"
)]
fn an_xfs_image_file_behind_a_loop_device_is_refused_even_with_force_signature() {
    // Hostile test: mkfs.xfs on an image file, the file attached to a loop
    // device, then `run --rw write --allow-destructive FILE` exited 0 and
    // blkid found nothing on the file nor on the loop device afterwards
    // (the loop device itself was refused: "carries xfs").
    let t = tempfile::tempdir().unwrap();
    let img = t.path().join("xfs.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(320 << 20)
        .unwrap();
    // mkfs.xfs refuses file systems under 300 MiB.
    sh_required("mkfs.xfs", &["-q", "-f", img.to_str().unwrap()]);
    let l = Loop::attach(&img, &[]);
    let name = img.to_str().unwrap();
    let loop_name = l.dev.trim_start_matches("/dev/");
    let before = digest(name);
    for extra in [&[][..], &["--force-signature"][..]] {
        let mut args = vec!["run", "--rw", "write", "--allow-destructive"];
        args.extend_from_slice(extra);
        args.push(name);
        common::refused(
            &args,
            &format!("is in use: loop device {loop_name} is attached to it"),
        );
    }
    // The dry run names both reasons, and --force-signature answers only one.
    let (code, text) = dry_run(&img, &["--force-signature"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("[REFUSED] no loop device"), "{text}");
    let (code, text) = dry_run(&img, &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("[REFUSED] no signature") && text.contains("carries xfs"),
        "{text}"
    );
    // Through the loop device, as before.
    common::refused(
        &["run", "--rw", "write", "--allow-destructive", &l.dev],
        "carries xfs",
    );
    assert_eq!(digest(name), before, "a refused run wrote to {name}");
    assert!(blkid_finds(&img, "xfs"), "xfs is still on the file");
    assert!(blkid_finds(Path::new(&l.dev), "xfs"), "and on {}", l.dev);
}

#[test]
fn a_file_of_random_data_is_still_written() {
    // Nothing recognisable in random bytes: the signature check of a file
    // target must not refuse an ordinary data file.
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("random.dat");
    let mut data = vec![0u8; 8 << 20];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for c in data.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c.copy_from_slice(&x.to_le_bytes());
    }
    std::fs::write(&f, &data).unwrap();
    let out = sb()
        .args(["run", "--rw", "write", "--allow-destructive"])
        .args(["--io-limit", "1m", "--ramp", "0", "--no-progress"])
        .arg(&f)
        .output()
        .unwrap();
    common::succeeded(&out);
}
