//! Opening a path that another user may have planted links on: a walk of
//! our own, component by component, that follows a link only where the
//! kernel's `fs.protected_symlinks=1` would, whatever that sysctl says.
//! Used for everything root writes by name: outputs' directories and
//! write targets.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::{Mode, SFlag};

fn is_symlink(st: &nix::sys::stat::FileStat) -> bool {
    SFlag::from_bits_truncate(st.st_mode & libc::S_IFMT) == SFlag::S_IFLNK
}

/// Why a path could not be opened.
#[derive(Debug)]
pub enum WalkError {
    Sys(Errno),
    /// A link on the way sits in a sticky, world-writable directory (/tmp)
    /// and belongs to neither us nor that directory's owner: the path
    /// where it was met.
    Planted(PathBuf),
}

impl From<Errno> for WalkError {
    fn from(e: Errno) -> Self {
        WalkError::Sys(e)
    }
}

/// Opens `path` as `O_PATH` by a walk of our own, one component at a
/// time, never letting the kernel follow a link: a link on the way (the
/// last component too) is read and followed by us, unless it sits in a
/// sticky, world-writable directory and belongs to neither us nor that
/// directory's owner. That is the rule of `fs.protected_symlinks=1`,
/// applied whatever the sysctl says (its default is 0): a `/tmp/results`
/// or `/tmp/scratch.dat` that another user made a link would otherwise
/// aim what root writes at a file of that user's choosing.
pub fn open_unplanted(path: &Path) -> std::result::Result<OwnedFd, WalkError> {
    use std::collections::VecDeque;
    let flags = OFlag::O_PATH | OFlag::O_CLOEXEC;
    let open = |at: Option<&OwnedFd>, name: &[u8], more: OFlag| -> nix::Result<OwnedFd> {
        let name = CString::new(name).map_err(|_| Errno::EINVAL)?;
        let fd = nix::fcntl::openat(
            at.map(|f| f.as_raw_fd()),
            name.as_c_str(),
            flags | more,
            Mode::empty(),
        )?;
        // SAFETY: `openat` just returned this descriptor; nothing else owns it.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let components = |p: &[u8]| -> VecDeque<Vec<u8>> {
        p.split(|&b| b == b'/')
            .filter(|c| !c.is_empty() && *c != b".")
            .map(<[u8]>::to_vec)
            .collect()
    };
    let bytes = path.as_os_str().as_bytes();
    let mut at = open(
        None,
        if bytes.starts_with(b"/") { b"/" } else { b"." },
        OFlag::O_DIRECTORY,
    )?;
    let mut todo = components(bytes);
    // Where the walk is, for the message.
    let mut walked = PathBuf::from(if bytes.starts_with(b"/") { "/" } else { "" });
    let mut links = 0;
    while let Some(c) = todo.pop_front() {
        walked.push(std::ffi::OsStr::from_bytes(&c));
        let next = open(Some(&at), &c, OFlag::O_NOFOLLOW)?;
        let st = nix::sys::stat::fstat(next.as_raw_fd())?;
        if is_symlink(&st) {
            links += 1;
            if links > 40 {
                return Err(WalkError::Sys(Errno::ELOOP));
            }
            let here = nix::sys::stat::fstat(at.as_raw_fd())?;
            let open_sticky = libc::S_ISVTX | libc::S_IWOTH;
            let sticky_open = here.st_mode & open_sticky == open_sticky;
            // SAFETY: geteuid takes nothing and cannot fail.
            let euid = unsafe { libc::geteuid() };
            if sticky_open && st.st_uid != euid && st.st_uid != here.st_uid {
                return Err(WalkError::Planted(walked));
            }
            // readlinkat(fd, "") reads the link an O_PATH descriptor holds.
            let to = nix::fcntl::readlinkat(Some(next.as_raw_fd()), "")?;
            let to = to.as_bytes();
            if to.starts_with(b"/") {
                at = open(None, b"/", OFlag::O_DIRECTORY)?;
            }
            for c in components(to).into_iter().rev() {
                todo.push_front(c);
            }
            continue;
        }
        // Not a directory: the next component's openat says ENOTDIR.
        at = next;
    }
    Ok(at)
}

/// `openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)`: one
/// component, never through a link at it, and non-blocking (a FIFO planted
/// at a name must not hang the opener).
pub fn open_component(
    dir: &impl AsRawFd,
    name: &std::ffi::OsStr,
    flags: libc::c_int,
) -> std::io::Result<OwnedFd> {
    let c = CString::new(name.as_bytes()).map_err(|_| std::io::Error::other("a NUL in a name"))?;
    // SAFETY: `dir` is an open descriptor, `c` a NUL-terminated name; the
    // returned descriptor, when valid, is new and ours alone.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just returned by openat and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
