//! The stripe hints a file system keeps in its superblock: ext2/3/4's RAID
//! stride and stripe width, XFS's sunit and swidth. mkfs sets them from
//! the array's geometry (or from what it is told), and the allocator then
//! places files on chunk and full-stripe boundaries; a file system made
//! before the array was grown, or on a layer that hid the geometry, keeps
//! hints that no longer fit.
//!
//! Read only: the first 4 KiB of the device, opened read-only without
//! following a link, and checked to be the block device the stack named.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// A file system's stripe hints, in bytes (`None`: not set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsHints {
    /// `ext4` (any of ext2/3/4: one superblock) or `xfs`.
    pub fs: String,
    pub block_bytes: u64,
    /// ext4 stride, XFS sunit: the chunk it assumes.
    pub unit_bytes: Option<u64>,
    /// ext4 stripe_width, XFS swidth: the full stripe (data members only).
    pub width_bytes: Option<u64>,
}

/// ext4's superblock magic, at 1024 + 0x38.
const EXT_MAGIC: u16 = 0xEF53;

/// The hints of the superblock at the head of `head` (the device's first
/// 4 KiB), when it holds one stripebench knows.
pub fn parse(head: &[u8]) -> Option<FsHints> {
    let le16 = |o: usize| head.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let le32 = |o: usize| {
        head.get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let be32 = |o: usize| {
        head.get(o..o + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let set = |blocks: u64, block: u64| (blocks > 0).then(|| blocks.saturating_mul(block));
    if head.get(..4) == Some(b"XFSB") {
        // sb_blocksize at 4, sb_unit at 184, sb_width at 188 (fs blocks).
        let block = u64::from(be32(4)?);
        if !(512..=65536).contains(&block) || !block.is_power_of_two() {
            return None;
        }
        return Some(FsHints {
            fs: "xfs".into(),
            block_bytes: block,
            unit_bytes: set(u64::from(be32(184)?), block),
            width_bytes: set(u64::from(be32(188)?), block),
        });
    }
    const SB: usize = 1024;
    if le16(SB + 0x38)? == EXT_MAGIC {
        // s_log_block_size at 0x18; s_raid_stride at 0x164, s_raid_stripe_width at 0x170.
        let log = le32(SB + 0x18)?;
        if log > 6 {
            return None;
        }
        let block = 1024u64 << log;
        return Some(FsHints {
            fs: "ext4".into(),
            block_bytes: block,
            unit_bytes: set(u64::from(le16(SB + 0x164)?), block),
            width_bytes: set(u64::from(le32(SB + 0x170)?), block),
        });
    }
    None
}

/// The hints of the file system on block device `path`, which must be
/// the device `dev` (`MAJ:MIN`) names: `None` when it holds none
/// stripebench reads.
pub fn read(path: &Path, dev: &str) -> io::Result<Option<FsHints>> {
    let f = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let m = f.metadata()?;
    let rdev = m.rdev();
    let numbers = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    if !m.file_type().is_block_device() || numbers != dev {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not the block device {dev}", path.display()),
        ));
    }
    let mut head = vec![0u8; 4096];
    let mut got = 0;
    while got < head.len() {
        match f.read_at(&mut head[got..], got as u64)? {
            0 => break,
            n => got += n,
        }
    }
    head.truncate(got);
    Ok(parse(&head))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Superblocks as mkfs writes them (mkfs.ext4 -b 4096 -E
    /// stride=16,stripe_width=64; mkfs.xfs -d su=64k,sw=4), reduced to the
    /// fields read.
    #[test]
    fn ext4_and_xfs_hints_are_read_in_bytes() {
        let mut ext = vec![0u8; 4096];
        ext[1024 + 0x38..1024 + 0x3a].copy_from_slice(&EXT_MAGIC.to_le_bytes());
        ext[1024 + 0x18..1024 + 0x1c].copy_from_slice(&2u32.to_le_bytes());
        ext[1024 + 0x164..1024 + 0x166].copy_from_slice(&16u16.to_le_bytes());
        ext[1024 + 0x170..1024 + 0x174].copy_from_slice(&64u32.to_le_bytes());
        assert_eq!(
            parse(&ext),
            Some(FsHints {
                fs: "ext4".into(),
                block_bytes: 4096,
                unit_bytes: Some(64 << 10),
                width_bytes: Some(256 << 10),
            })
        );
        let mut xfs = vec![0u8; 4096];
        xfs[..4].copy_from_slice(b"XFSB");
        xfs[4..8].copy_from_slice(&4096u32.to_be_bytes());
        xfs[184..188].copy_from_slice(&16u32.to_be_bytes());
        xfs[188..192].copy_from_slice(&64u32.to_be_bytes());
        let x = parse(&xfs).unwrap();
        assert_eq!(
            (x.unit_bytes, x.width_bytes),
            (Some(64 << 10), Some(256 << 10))
        );
        // Not set: none.
        xfs[184..192].fill(0);
        assert_eq!(parse(&xfs).unwrap().unit_bytes, None);
        // A hostile block size is no file system stripebench reads.
        xfs[4..8].copy_from_slice(&3u32.to_be_bytes());
        assert_eq!(parse(&xfs), None);
        assert_eq!(parse(&[0u8; 4096]), None);
        assert_eq!(parse(&[0u8; 100]), None);
    }

    /// The same, from images mkfs made (.ci/run installs e2fsprogs and
    /// xfsprogs). A user's PATH may lack the sbin directories they are in
    /// (Debian's does, but root's): looked for there too, as build.rs does.
    #[test]
    #[cfg_attr(
        not(all(sb_mkfs_ext4, sb_mkfs_xfs)),
        ignore = "mkfs.ext4 or mkfs.xfs is not installed (e2fsprogs, xfsprogs)"
    )]
    fn images_mkfs_made_read_back_their_hints() {
        let t = tempfile::tempdir().unwrap();
        let path = std::env::var("PATH").unwrap_or_default();
        let find = |tool: &str| {
            path.split(':')
                .chain(["/usr/sbin", "/sbin"])
                .map(|d| std::path::Path::new(d).join(tool))
                .find(|p| p.is_file())
                .unwrap_or_else(|| tool.into())
        };
        let made = |tool: &str, size: u64, args: &[&str]| {
            let img = t.path().join(format!("{tool}.img"));
            std::fs::File::create(&img).unwrap().set_len(size).unwrap();
            let ok = std::process::Command::new(find(tool))
                .args(args)
                .arg(&img)
                .status()
                .unwrap_or_else(|e| panic!("{tool}: {e} (.ci/run installs it)"));
            assert!(ok.success(), "{tool} failed");
            let head = std::fs::read(&img).unwrap();
            parse(&head[..4096]).unwrap()
        };
        let e = made(
            "mkfs.ext4",
            64 << 20,
            &["-q", "-F", "-b", "4096", "-E", "stride=16,stripe_width=48"],
        );
        assert_eq!(
            (e.fs.as_str(), e.unit_bytes, e.width_bytes),
            ("ext4", Some(64 << 10), Some(192 << 10))
        );
        let x = made("mkfs.xfs", 1 << 30, &["-q", "-f", "-d", "su=64k,sw=4"]);
        assert_eq!(
            (x.fs.as_str(), x.unit_bytes, x.width_bytes),
            ("xfs", Some(64 << 10), Some(256 << 10))
        );
        let plain = made("mkfs.ext4", 64 << 20, &["-q", "-F", "-b", "4096"]);
        assert_eq!((plain.unit_bytes, plain.width_bytes), (None, None));
    }
}
