//! Opening a path that another user may have planted links on: a walk of
//! our own, component by component, that follows a symbolic link only when
//! root or the running user owns it, at any depth, whatever
//! `fs.protected_symlinks` says. Used for everything we create or write by
//! name: outputs' directories, write targets, the test bed's directory, the
//! state directory and its files.

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
    /// A link on the way belongs to a user other than root and us: the
    /// path where it was met, and its owner.
    Planted {
        at: PathBuf,
        owner: u32,
    },
}

impl WalkError {
    /// What to say of a refused link, for a message that goes on with what
    /// to do: "h/alice/reports is a symbolic link owned by nobody (uid
    /// 65534): only links owned by root or by this user are followed".
    pub fn planted_text(at: &Path, owner: u32) -> String {
        format!(
            "{} is a symbolic link owned by {}: only links owned by root or by this user are followed (whoever owns it would choose what we open)",
            crate::base::error::show_path(at),
            user_name(owner)
        )
    }
}

/// "nobody (uid 65534)", or "uid 65534" where the user has no name.
pub fn user_name(uid: u32) -> String {
    match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) {
        Ok(Some(u)) => format!("{} (uid {uid})", crate::base::error::show_text(&u.name)),
        _ => format!("uid {uid}"),
    }
}

/// Whether a link owned by `uid` may be followed: root's, or ours.
fn trusted_owner(uid: u32) -> bool {
    // SAFETY: geteuid takes nothing and cannot fail.
    let euid = unsafe { libc::geteuid() };
    uid == 0 || uid == euid
}

impl From<Errno> for WalkError {
    fn from(e: Errno) -> Self {
        WalkError::Sys(e)
    }
}

/// Opens `path` as `O_PATH` by a walk of our own, one component at a
/// time, never letting the kernel follow a link: a link on the way (the
/// last component too) is read and followed by us only when root or the
/// running user owns it, wherever it lies. `fs.protected_symlinks=1`
/// stops only links in sticky, world-writable directories (and its
/// default is 0): a link `reports -> /etc` that a user made in a directory
/// of their own would otherwise aim what root writes at a file of that
/// user's choosing. Callers that create the last component open it with
/// `O_NOFOLLOW` ([`open_component`]), so it is never a link at all.
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
            if !trusted_owner(st.st_uid) {
                return Err(WalkError::Planted {
                    at: walked,
                    owner: st.st_uid,
                });
            }
            // readlinkat(fd, "") reads the link an O_PATH descriptor holds.
            let to = nix::fcntl::readlinkat(Some(next.as_raw_fd()), "")?;
            let to = to.as_bytes();
            // Where the walk is now: the link's directory, or / for an
            // absolute link (so a refusal further on names the real place).
            walked.pop();
            if to.starts_with(b"/") {
                at = open(None, b"/", OFlag::O_DIRECTORY)?;
                walked = PathBuf::from("/");
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

/// The directory `path` names, walked by [`open_unplanted`], as a path with
/// no link left in it (what the kernel says the descriptor holds): what a
/// command then creates files under by name (the test bed, the state
/// directory) no longer passes through any link, ours or another user's.
pub fn real_dir(path: &Path) -> std::result::Result<PathBuf, WalkError> {
    let fd = open_unplanted(path)?;
    let st = nix::sys::stat::fstat(fd.as_raw_fd())?;
    if SFlag::from_bits_truncate(st.st_mode & libc::S_IFMT) != SFlag::S_IFDIR {
        return Err(WalkError::Sys(Errno::ENOTDIR));
    }
    Ok(path_of(&fd)?)
}

/// The path the kernel says an open descriptor holds, when it is one a
/// later open by name reaches (absolute, not deleted).
pub fn path_of(fd: &OwnedFd) -> nix::Result<PathBuf> {
    let real = nix::fcntl::readlink(format!("/proc/self/fd/{}", fd.as_raw_fd()).as_str())?;
    let real = PathBuf::from(real);
    // "/x (deleted)" or an unreachable "(unreachable)/x": not a path to use.
    if !real.is_absolute() || real.to_string_lossy().ends_with(" (deleted)") {
        return Err(Errno::ENOENT);
    }
    Ok(real)
}

/// Whether what we create by name under `real` (a path with no link in it,
/// from [`real_dir`]) stays where we put it: every directory from / down to
/// `real` must be owned by root or by us and writable by nobody else, or
/// be sticky (there nobody else may rename or remove what is ours). The
/// first directory that fails, with why, otherwise: its owner could swap a
/// directory we made in it for a link of theirs, between our mkdir and our
/// next open by name, and choose where root's files go.
pub fn others_may_rename(real: &Path) -> Option<String> {
    let mut at = PathBuf::new();
    for c in real.components() {
        at.push(c);
        let Ok(st) = nix::sys::stat::lstat(&at) else {
            return Some(format!(
                "{} cannot be looked at",
                crate::base::error::show_path(&at)
            ));
        };
        if is_symlink(&st) {
            return Some(format!(
                "{} became a symbolic link",
                crate::base::error::show_path(&at)
            ));
        }
        let sticky = st.st_mode & libc::S_ISVTX != 0;
        let open = st.st_mode & 0o022 != 0;
        if !sticky && (open || !trusted_owner(st.st_uid)) {
            return Some(format!(
                "{} belongs to {} (mode {:04o}), who may rename what is made in it (a directory swapped for a link between its making and its use)",
                crate::base::error::show_path(&at),
                user_name(st.st_uid),
                st.st_mode & 0o7777
            ));
        }
    }
    None
}

/// `openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)`: one
/// component, never through a link at it, and non-blocking (a FIFO planted
/// at a name must not hang the opener). With `O_CREAT` a file it makes has
/// mode 0600 (less the umask): readable by its owner alone.
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
            0o600 as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just returned by openat and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
