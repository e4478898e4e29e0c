//! Every file stripebench reads as input, given by name: a TOML config, a
//! fio job file, the documents of report, merge, diff and plan, a preflight
//! record, a dm table. One reader for all of them ([`read`]), so that none
//! can be endless or hang: the file is looked at before it is opened and
//! opened without blocking (a FIFO with no writer hung `--config`,
//! `--fio-job`, report and merge at open for good), it must be a regular
//! file (`/dev/zero` as a config grew to 5 GB in 20 s), and it is read to a
//! stated size and refused past it. (The state files of `device::state`
//! are the tool's own and are read there.)

use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// One kind of input file: what it holds and the most of it read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// What the file should hold, as a refusal says what to give: "a TOML
    /// config file".
    pub holds: &'static str,
    /// The most bytes read: a file larger is refused.
    pub max: u64,
    /// Whether a pipe is taken too (`--dm-table <(dmsetup table)`, whose
    /// output only a pipe carries without a temporary file): read to its
    /// end or past `max`, whichever comes first; a FIFO with no writer
    /// reads as empty.
    pub pipe: bool,
}

/// The largest document read: far above what any run, sweep or fleet of
/// thousands of hosts writes, far below this machine's memory.
pub const MAX_DOCUMENT_BYTES: u64 = 256 << 20;

/// A document written with `--json` (report, merge, diff, plan).
pub const DOCUMENT: Kind = Kind {
    holds: "a document stripebench wrote (--json)",
    max: MAX_DOCUMENT_BYTES,
    pipe: false,
};

/// `merge --preflight`: fleet.sh's record of every host, as large as a
/// document may be.
pub const PREFLIGHT: Kind = Kind {
    holds: "the preflight.json that fleet.sh wrote",
    max: MAX_DOCUMENT_BYTES,
    pipe: false,
};

/// Why an input file was not read: one clause saying what is wrong and what
/// to give instead; the caller names the file ("cannot read config X: ...").
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// It could not be opened or read (the system's words).
    #[error("{0}")]
    Io(std::io::Error),
    /// It is no regular file (nor a pipe where one is taken).
    #[error("it is {what}, not a regular file{}: give {holds}", if *.pipe { " or a pipe" } else { "" })]
    NotAFile {
        what: &'static str,
        holds: &'static str,
        pipe: bool,
    },
    /// It holds more than any such file.
    #[error("it is larger than {}: not {holds}; is it the right file?", size(*.max))]
    TooLarge { max: u64, holds: &'static str },
}

/// A size limit as a refusal says it: 256 MiB, 1 MiB, 10 B.
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// What a file that is not regular is, for a refusal.
fn what(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// The file's type, refused unless `kind` takes it.
fn taken(t: std::fs::FileType, kind: &Kind) -> Result<(), InputError> {
    if t.is_file() || (kind.pipe && t.is_fifo()) {
        Ok(())
    } else {
        Err(InputError::NotAFile {
            what: what(t),
            holds: kind.holds,
            pipe: kind.pipe,
        })
    }
}

/// The bytes of the input file `path`, of `kind`: a regular file (or a pipe
/// where `kind` takes one) of at most `kind.max` bytes. A device, a
/// directory or a FIFO is refused before it is opened (so opening one has
/// no effect on it), and the open itself never blocks; a file larger than
/// `kind.max`, growing or not, is refused having read at most one byte
/// past it.
pub fn read(path: &Path, kind: &Kind) -> Result<Vec<u8>, InputError> {
    // Looked at first: nothing that is not a file is opened.
    taken(
        std::fs::metadata(path).map_err(InputError::Io)?.file_type(),
        kind,
    )?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(InputError::Io)?;
    // Again on what was opened: the name may have been pointed elsewhere.
    let meta = file.metadata().map_err(InputError::Io)?;
    taken(meta.file_type(), kind)?;
    if meta.file_type().is_fifo() {
        // Blocking again: a pipe's writer may not have written yet (with
        // none, a read says end of file at once).
        blocking(&file).map_err(InputError::Io)?;
    } else if meta.len() > kind.max {
        return Err(InputError::TooLarge {
            max: kind.max,
            holds: kind.holds,
        });
    }
    let mut bytes = Vec::new();
    file.take(kind.max + 1)
        .read_to_end(&mut bytes)
        .map_err(InputError::Io)?;
    if bytes.len() as u64 > kind.max {
        return Err(InputError::TooLarge {
            max: kind.max,
            holds: kind.holds,
        });
    }
    Ok(bytes)
}

/// Clears `O_NONBLOCK` on `file`.
fn blocking(file: &File) -> std::io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor `file` owns, for as long as it does.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Kind = Kind {
        holds: "a small file",
        max: 10,
        pipe: false,
    };

    fn fifo(dir: &Path) -> std::path::PathBuf {
        let p = dir.join("fifo");
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        p
    }

    #[test]
    fn only_a_regular_file_within_its_size_is_read() {
        let t = tempfile::tempdir().unwrap();
        let ok = t.path().join("ok");
        std::fs::write(&ok, b"0123456789").unwrap();
        assert_eq!(read(&ok, &SMALL).unwrap(), b"0123456789");
        let big = t.path().join("big");
        std::fs::write(&big, b"0123456789a").unwrap();
        let e = read(&big, &SMALL).unwrap_err().to_string();
        assert_eq!(
            e,
            "it is larger than 10 B: not a small file; is it the right file?"
        );
        let refused = |p: &Path, what: &str| {
            let e = read(p, &SMALL).unwrap_err().to_string();
            assert_eq!(
                e,
                format!("it is {what}, not a regular file: give a small file")
            );
        };
        refused(Path::new("/dev/zero"), "a character device");
        refused(t.path(), "a directory");
        refused(&fifo(t.path()), "a FIFO (named pipe)");
        let e = read(&t.path().join("none"), &SMALL)
            .unwrap_err()
            .to_string();
        assert!(e.contains("No such file"), "{e}");
    }

    #[test]
    fn a_pipe_where_one_is_taken_is_read_to_its_bound() {
        let t = tempfile::tempdir().unwrap();
        let pipe = Kind {
            pipe: true,
            ..SMALL
        };
        // No writer: empty at once, not a hang.
        assert_eq!(read(&fifo(t.path()), &pipe).unwrap(), b"");
        // A device is still no pipe.
        let e = read(Path::new("/dev/zero"), &pipe).unwrap_err().to_string();
        assert!(e.contains("not a regular file or a pipe"), "{e}");
    }
}
