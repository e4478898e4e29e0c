//! Trims (fio's rw=trim/randtrim): what a trim does to the target. On a
//! block device, BLKDISCARD over the range, as fio's os_trim does; on a
//! regular file, fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE),
//! which is what fio's falloc engine does for a trim (fio's sync, libaio
//! and io_uring engines send BLKDISCARD to a file too, and the file
//! system refuses it with ENOTTY): the range then reads as zeros and its
//! blocks go back to the file system.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// `_IO(0x12, 119)`: discard a byte range of a block device.
const BLKDISCARD: libc::c_ulong = 0x1277;

/// How a target is trimmed, found once when its engine is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimKind {
    /// A block device: BLKDISCARD.
    Discard,
    /// Anything else (a regular file): punch a hole, keeping the size.
    PunchHole,
}

impl TrimKind {
    /// The kind for `file`: a block device is discarded, all else punched.
    pub fn of(file: &File) -> io::Result<TrimKind> {
        use std::os::unix::fs::FileTypeExt;
        Ok(if file.metadata()?.file_type().is_block_device() {
            TrimKind::Discard
        } else {
            TrimKind::PunchHole
        })
    }

    /// The system call, in words (for the engine's description).
    pub fn call(self) -> &'static str {
        match self {
            TrimKind::Discard => "ioctl(BLKDISCARD)",
            TrimKind::PunchHole => "fallocate(PUNCH_HOLE|KEEP_SIZE)",
        }
    }
}

/// Trims `len` bytes at `offset` of `file`; the bytes trimmed (all of
/// them) or the call's error.
pub fn trim(file: &File, kind: TrimKind, offset: u64, len: usize) -> io::Result<usize> {
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is open for the call's length (the engine holds `file`);
    // BLKDISCARD reads two u64 from `range`, which lives across the call.
    let r = unsafe {
        match kind {
            TrimKind::Discard => {
                let range: [u64; 2] = [offset, len as u64];
                libc::ioctl(fd, BLKDISCARD, range.as_ptr())
            }
            TrimKind::PunchHole => libc::fallocate(
                fd,
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                len as libc::off_t,
            ),
        }
    };
    if r == 0 {
        Ok(len)
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom, Write};

    #[test]
    fn a_punched_range_of_a_file_reads_as_zeros_and_keeps_the_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        f.write_all(&[0xa5u8; 64 << 10]).unwrap();
        f.sync_all().unwrap();
        assert_eq!(TrimKind::of(&f).unwrap(), TrimKind::PunchHole);
        match trim(&f, TrimKind::PunchHole, 16 << 10, 16 << 10) {
            Ok(n) => assert_eq!(n, 16 << 10),
            // A file system with no hole punching (tmpfs has it; some do not).
            Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => return,
            Err(e) => panic!("{e}"),
        }
        assert_eq!(f.metadata().unwrap().len(), 64 << 10);
        let mut all = Vec::new();
        f.seek(SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut all).unwrap();
        assert!(all[..16 << 10].iter().all(|&b| b == 0xa5));
        assert!(all[16 << 10..32 << 10].iter().all(|&b| b == 0));
        assert!(all[32 << 10..].iter().all(|&b| b == 0xa5));
    }
}
