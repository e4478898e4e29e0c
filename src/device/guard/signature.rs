//! On-disk signatures: file systems, RAID and LVM superblocks, swap and
//! partition tables, from the head and tail of a device.

use std::fs;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Recognises on-disk signatures from the head and tail of a device.
/// `head` holds at least the first 68 KiB (less only if the device is
/// smaller); `tail_at(offset, len)` reads elsewhere; `size` is the device size.
pub fn find_signature(
    head: &[u8],
    size: u64,
    tail_at: &dyn Fn(u64, usize) -> Option<Vec<u8>>,
) -> Option<String> {
    let at = |off: usize, len: usize| head.get(off..off + len);
    let le32 = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    const MD_MAGIC: u32 = 0xa92b_4efc;
    if at(1080, 2) == Some(&[0x53, 0xEF]) {
        return Some("an ext2/3/4 file system".into());
    }
    if at(0, 4) == Some(b"XFSB") {
        return Some("an XFS file system".into());
    }
    if at(65536 + 64, 8) == Some(b"_BHRfS_M") {
        return Some("a btrfs file system (or btrfs member)".into());
    }
    if matches!(at(4086, 10), Some(b"SWAPSPACE2") | Some(b"SWAP-SPACE")) {
        return Some("a swap area".into());
    }
    for sector in 0..4 {
        if at(sector * 512, 8) == Some(b"LABELONE") && at(sector * 512 + 24, 8) == Some(b"LVM2 001")
        {
            return Some("an LVM2 physical volume".into());
        }
    }
    for (off, ver) in [(0usize, "1.1"), (4096, "1.2")] {
        if at(off, 4).map(le32) == Some(MD_MAGIC) {
            return Some(format!("an md RAID superblock (v{ver})"));
        }
    }
    // v0.90 sits in the last 64 KiB-aligned 64 KiB; v1.0 8 KiB from the end, 4 KiB aligned.
    if size >= 128 << 10 {
        let v090 = (size & !0xFFFF) - 0x10000;
        let v10 = (size - 8192) & !0xFFF;
        for (off, ver) in [(v090, "0.90"), (v10, "1.0")] {
            if tail_at(off, 4).as_deref().map(le32) == Some(MD_MAGIC) {
                return Some(format!("an md RAID superblock (v{ver})"));
            }
        }
    }
    if at(512, 8) == Some(b"EFI PART") || at(4096, 8) == Some(b"EFI PART") {
        return Some("a GPT partition table".into());
    }
    if at(510, 2) == Some(&[0x55, 0xAA]) {
        let used = (0..4).any(|i| head.get(446 + 16 * i + 4).is_some_and(|&t| t != 0));
        return Some(if used {
            "an MBR partition table".into()
        } else {
            "an MBR boot sector".into()
        });
    }
    None
}

/// Reads what `find_signature` needs from a device and looks.
pub fn device_signature(path: &Path, size: u64) -> std::io::Result<Option<String>> {
    signature_of(&fs::File::open(path)?, size)
}

/// Looks for a signature through an open file (the one that will be written).
pub fn signature_of(f: &fs::File, size: u64) -> std::io::Result<Option<String>> {
    let mut f = f;
    let want = (size.min(68 << 10)) as usize;
    let mut head = vec![0u8; want];
    f.read_exact(&mut head)?;
    let tail_at = |off: u64, len: usize| {
        let mut b = vec![0u8; len];
        f.read_exact_at(&mut b, off).ok().map(|()| b)
    };
    Ok(find_signature(&head, size, &tail_at))
}
