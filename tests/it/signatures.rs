//! Every on-disk format that libblkid knows refuses a write: real images,
//! made by the real tools (cryptsetup, mkfs.*, mkswap, pvcreate, sgdisk) on
//! loop devices. The dry run names what it found the way `blkid -p` does
//! ("crypto_LUKS version 2"); the real run is refused (exit 2) and the
//! device is left as it was. (md members are made in the lab's guest, which
//! has md: see tests/it/lab.rs.)

use crate::common;

use std::path::Path;
use std::process::Command;

use crate::common::{digest_bytes, sb, sh_required, Loop};

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
