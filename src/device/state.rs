//! The state directory: where settings to restore, test-bed records and
//! per-device locks live, who may own it, and how its files are written
//! (never through a planted link).

use anyhow::{Context, Result};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where state files go, checked ([`trusted_dir`]): a directory that
/// another user owns or may write to is refused in one line, since what
/// `restore` reads there it writes to sysfs as root.
pub fn state_dir() -> Result<PathBuf> {
    let dir = state_dir_unchecked();
    trusted_dir(&dir)?;
    Ok(dir)
}

/// Where state files go: `$STRIPEBENCH_STATE_DIR` when set (documented in
/// `restore --help`; tests give each test program its own, so that what
/// other runs on the machine left behind does not reach them), else
/// `/run/stripebench` for root, else the user's runtime directory.
fn state_dir_unchecked() -> PathBuf {
    if let Some(d) = std::env::var_os("STRIPEBENCH_STATE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 && Path::new("/run").is_dir() {
        return PathBuf::from("/run/stripebench");
    }
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(d) => PathBuf::from(d).join("stripebench"),
        None => {
            // SAFETY: as above.
            let uid = unsafe { libc::geteuid() };
            let tmp = std::env::temp_dir().join(format!("stripebench-{uid}"));
            // A directory in a shared /tmp that another user made (or can
            // write to) could feed us state files: use it only if it is ours.
            match fs::symlink_metadata(&tmp) {
                Err(_) => tmp,
                Ok(m) if ours(&m, uid) => tmp,
                Ok(_) => std::env::var_os("HOME")
                    .map(|h| PathBuf::from(h).join(".local/state/stripebench"))
                    .unwrap_or_else(|| tmp.with_file_name(format!("stripebench-{uid}-private"))),
            }
        }
    }
}

/// A directory this user owns and nobody else may write to.
fn ours(m: &fs::Metadata, uid: u32) -> bool {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    m.is_dir() && m.uid() == uid && m.permissions().mode() & 0o022 == 0
}

/// Whether a state file or directory's owner and mode let us trust what it
/// holds: owned by root or by this user, and writable by nobody else. The
/// reason it is not, naming its owner and mode, otherwise.
pub fn untrusted(st: &nix::sys::stat::FileStat) -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    let mode = st.st_mode & 0o7777;
    if st.st_uid != 0 && st.st_uid != euid {
        Some(format!(
            "it is owned by {} (mode {mode:04o}): only root's or this user's state is trusted",
            crate::base::path::user_name(st.st_uid)
        ))
    } else if mode & 0o022 != 0 {
        Some(format!(
            "its mode is {mode:04o}: group or others may write to it, so anyone could have put what it holds there"
        ))
    } else {
        None
    }
}

/// Refuses a state directory, if it exists, that another user's link leads
/// to, that is not a directory, or that [`untrusted`] says anyone else could
/// have written to: one line naming it, its owner and mode, and what to do.
pub fn trusted_dir(dir: &Path) -> Result<()> {
    use crate::base::path::WalkError;
    let shown = crate::base::error::show_path(dir);
    let fix = "remove it, or set STRIPEBENCH_STATE_DIR to a directory of your own (mode 0700)";
    let refuse = |why: String| -> anyhow::Error {
        crate::base::error::UsageError(format!("state directory {shown}: {why}; {fix}")).into()
    };
    let fd = match crate::base::path::open_unplanted(dir) {
        Ok(fd) => fd,
        // Not there yet: made (0700) when first needed, and checked again.
        Err(WalkError::Sys(nix::errno::Errno::ENOENT)) => return Ok(()),
        Err(WalkError::Planted { at, owner }) => {
            return Err(refuse(WalkError::planted_text(&at, owner)))
        }
        Err(WalkError::Sys(e)) => return Err(refuse(format!("cannot open it: {}", e.desc()))),
    };
    let st = nix::sys::stat::fstat(std::os::fd::AsRawFd::as_raw_fd(&fd))
        .map_err(|e| refuse(format!("cannot inspect it: {}", e.desc())))?;
    if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
        return Err(refuse("it is not a directory".into()));
    }
    if let Some(why) = untrusted(&st) {
        return Err(refuse(why));
    }
    // Files in it are opened, renamed and removed by name: no directory on
    // the way to it may be another user's to rename.
    let real =
        crate::base::path::path_of(&fd).map_err(|_| refuse("cannot resolve where it is".into()))?;
    match crate::base::path::others_may_rename(&real) {
        Some(why) => Err(refuse(why)),
        None => Ok(()),
    }
}

/// Creates the state directory, readable by its owner only, and checks it
/// as [`trusted_dir`] does (it may have been there already, or been made by
/// someone else in the meantime).
pub fn create_state_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    trusted_dir(dir)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::PermissionDenied, e.to_string()))
}

/// " (owned by nobody (uid 65534), mode 0644)", or nothing when unknown.
fn owner_mode(st: Option<nix::sys::stat::FileStat>) -> String {
    st.map_or_else(String::new, |st| {
        format!(
            " (owned by {}, mode {:04o})",
            crate::base::path::user_name(st.st_uid),
            st.st_mode & 0o7777
        )
    })
}

/// A state file opened for reading, if this tool could have written it: a
/// regular file, not a link (opened without following one and without
/// blocking, so a FIFO planted at the name cannot hang every command that
/// reads the state directory), owned and writable as [`untrusted`] wants.
/// The reason otherwise, naming the file, its owner and mode.
pub fn open_trusted(p: &Path) -> std::result::Result<fs::File, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let shown = crate::base::error::show_path(p);
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(p)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => format!(
                "state file {shown} is a symbolic link{}: not followed",
                owner_mode(nix::sys::stat::lstat(p).ok())
            ),
            _ => format!("cannot open state file {shown}: {e}"),
        })?;
    let st = nix::sys::stat::fstat(std::os::fd::AsRawFd::as_raw_fd(&f))
        .map_err(|e| format!("cannot inspect state file {shown}: {}", e.desc()))?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(format!(
            "state file {shown} is not a regular file{}: not read",
            owner_mode(Some(st))
        ));
    }
    match untrusted(&st) {
        Some(why) => Err(format!("state file {shown} is not read: {why}")),
        None => Ok(f),
    }
}

/// The largest state file read: a record is a few settings or a path (a
/// few hundred bytes); anything bigger is not one of ours.
pub const RECORD_MAX: u64 = 1 << 20;

/// A state file's bytes, read by [`open_trusted`] and up to [`RECORD_MAX`]:
/// the reason it is refused otherwise.
pub fn read_trusted(p: &Path) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read;
    let f = open_trusted(p)?;
    let mut bytes = Vec::new();
    f.take(RECORD_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            format!(
                "cannot read state file {}: {e}",
                crate::base::error::show_path(p)
            )
        })?;
    if bytes.len() as u64 > RECORD_MAX {
        return Err(format!(
            "state file {} is larger than {RECORD_MAX} bytes: not one of ours, not read",
            crate::base::error::show_path(p)
        ));
    }
    Ok(bytes)
}

/// Whether a name in the state directory is a record this tool writes
/// there. (A lock file is judged when a run takes it, and refused then in
/// one line: see `lock`.)
fn ours_by_name(name: &str) -> bool {
    (name.starts_with("knobs-") || name.starts_with("applied")) && name.ends_with(".json")
        || name.starts_with("testbed-") && name.ends_with(".path")
}

/// The files in the state directory that carry one of our names but that
/// [`open_trusted`] refuses (another user's, writable by others, a link, a
/// FIFO): each a line that names it, its owner and mode. They are never
/// read; `restore` reports them as failures and measuring commands warn.
pub fn refused_files(dir: &Path) -> Vec<String> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = rd
        .flatten()
        .filter(|e| ours_by_name(&e.file_name().to_string_lossy()))
        .filter_map(|e| open_trusted(&e.path()).err())
        .collect();
    out.sort();
    out
}

/// Writes `bytes` whole and synced under a hidden name beside `path`
/// (`.NAME.new-PID`, whatever stood there removed first: unlinking never
/// follows a link), for the caller to put in place in one step; returns
/// that name.
fn write_aside(path: &Path, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let tmp = path.with_file_name(format!(
        ".{}.new-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let _ = fs::remove_file(&tmp);
    write_new(&tmp, bytes)?;
    Ok(tmp)
}

/// Writes a new file that must not exist, whole or not at all: written
/// aside and linked to `path` (link(2) refuses an existing name, a planted
/// link among them), so that a SIGKILL while it is written never leaves an
/// empty record at `path`, which the next run could not read (seen: a
/// killed run's test bed not named).
pub fn write_new_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = write_aside(path, bytes)?;
    let linked = fs::hard_link(&tmp, path);
    let _ = fs::remove_file(&tmp);
    linked
}

/// Replaces `path` (or creates it) whole or not at all: written aside and
/// renamed over it (rename(2) replaces a planted link, never follows it).
pub fn replace_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = write_aside(path, bytes)?;
    fs::rename(&tmp, path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// Writes a new file that must not exist (O_EXCL: a symlink planted at the
/// name is refused, not followed).
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// The lock of the device a setting belongs to: `lock-MAJOR:MINOR`, from
/// the `dev` file of the device that owns the setting's `queue/`.
pub(crate) fn lock_name(knob: &Path) -> String {
    let real = fs::canonicalize(knob).unwrap_or_else(|_| knob.to_path_buf());
    real.parent()
        .and_then(Path::parent)
        .and_then(|d| fs::read_to_string(d.join("dev")).ok())
        .map(|d| d.trim().to_string())
        // Numbers only: a name that is joined to the state directory.
        .filter(|d| {
            d.split_once(':').is_some_and(|(a, b)| {
                [a, b]
                    .iter()
                    .all(|x| !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit()))
            })
        })
        .map(|d| format!("lock-{d}"))
        .unwrap_or_else(|| {
            let flat: String = real
                .to_string_lossy()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            format!("lock-{flat}")
        })
}

/// An open-file-description lock (`F_OFD_SETLK`) on the whole of `f`.
/// Like flock it belongs to the open file, so it dies with its holder
/// however that ends (SIGKILL included) and never outlives it; unlike flock,
/// another process can ask whether it is held (`F_OFD_GETLK`) without taking
/// it, and so without making a real taker fail for the instant it held it.
fn ofd_lock(f: &fs::File, cmd: libc::c_int) -> std::io::Result<libc::flock> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: all-zero is a valid `struct flock` (whole file from offset 0).
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: fcntl on an fd we own, with a pointer to a struct flock we own
    // (F_OFD_* require l_pid to be 0, which it is).
    if unsafe { libc::fcntl(f.as_raw_fd(), cmd, &mut fl) } == 0 {
        Ok(fl)
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Takes the exclusive lock of an open file (see `ofd_lock`), without waiting.
pub(crate) fn hold(f: &fs::File) -> std::io::Result<()> {
    ofd_lock(f, libc::F_OFD_SETLK).map(|_| ())
}

/// Whether another open file holds `f`'s lock (a live holder, see `hold`).
pub(crate) fn is_held(f: &fs::File) -> bool {
    ofd_lock(f, libc::F_OFD_GETLK).is_ok_and(|fl| fl.l_type != libc::F_UNLCK as libc::c_short)
}

/// Whether a live process holds the lock `dir/name` (see `lock`): the PID
/// it wrote, if so. This is how a state file's liveness is judged: a holder
/// takes the lock before it records anything and keeps it until its record
/// is gone, so a record whose lock is free is an orphan, whatever process
/// now has the PID in its name.
pub(crate) fn lock_holder(dir: &Path, name: &str) -> Option<String> {
    let path = dir.join(name);
    // Read-only, never created, never through a link: a missing lock file
    // means nobody ever held it.
    let f = open_trusted(&path).ok()?;
    let fl = ofd_lock(&f, libc::F_OFD_GETLK).ok()?;
    if fl.l_type == libc::F_UNLCK as libc::c_short {
        return None;
    }
    Some(holder_pid(&f))
}

/// The PID a lock's holder wrote into it: at most a few bytes, read from
/// the open file (never by name again), shown escaped.
fn holder_pid(f: &fs::File) -> String {
    use std::os::unix::fs::FileExt;
    let mut b = [0u8; 32];
    let n = f.read_at(&mut b, 0).unwrap_or(0);
    crate::base::error::show_text(String::from_utf8_lossy(&b[..n]).trim()).into_owned()
}

/// An exclusive lock on `dir/name` (an OFD lock, see `ofd_lock`), held as
/// long as the file is open. The holder writes its PID into the file, so a
/// refusal can name it.
pub(crate) fn lock(dir: &Path, name: &str, wait: bool) -> Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    create_state_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(name);
    // O_NOFOLLOW: a link planted at the lock's name is refused, never
    // followed (the holder truncates the file to write its PID).
    // O_NONBLOCK: a FIFO planted there must not hang us either. What is
    // there must be a regular file of root's or ours, writable by nobody
    // else: anything else names itself, its owner and mode.
    let shown = crate::base::error::show_path(&path);
    let mut f = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => anyhow::Error::from(crate::base::error::UsageError(format!(
                "lock {shown} is a symbolic link: not followed; remove it (a run never makes one)"
            ))),
            _ => anyhow::Error::from(e).context(format!("cannot open lock {shown}")),
        })?;
    {
        let st = nix::sys::stat::fstat(std::os::fd::AsRawFd::as_raw_fd(&f))
            .with_context(|| format!("cannot inspect lock {shown}"))?;
        let why = if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            Some("it is not a regular file".to_string())
        } else {
            untrusted(&st)
        };
        if let Some(why) = why {
            return crate::base::error::usage(format!(
                "lock {shown}: {why}; remove it (a run makes its locks itself)"
            ));
        }
    }
    let device = name.trim_start_matches("lock-");
    let mut said = false;
    loop {
        match ofd_lock(&f, libc::F_OFD_SETLK) {
            Ok(_) => break,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EACCES)) => {}
            Err(e) => return Err(e).with_context(|| format!("cannot lock {}", path.display())),
        }
        let holder = holder_pid(&f);
        if !wait {
            return crate::base::error::usage(format!(
                "device {device} is having its settings changed by another stripebench run (PID {holder}): wait for it to end, or pass --wait-lock"
            ));
        }
        if !said {
            crate::base::notice::say(&crate::base::notice::Notice::WaitingForLock {
                holder,
                device: crate::base::error::show_text(device).into_owned(),
            });
            said = true;
        }
        if crate::base::signals::interrupted() {
            return Err(crate::base::error::Interrupted("while waiting for a device lock").into());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    f.set_len(0)?;
    f.write_all(format!("{}\n", std::process::id()).as_bytes())?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_new_file_is_written_once_and_leaves_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("testbed-1.path");
        write_new_whole(&path, b"{\"dir\":\"/x\"}").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"{\"dir\":\"/x\"}");
        // A name that exists, a planted link among them, is refused.
        assert!(write_new_whole(&path, b"other").is_err());
        assert_eq!(fs::read(&path).unwrap(), b"{\"dir\":\"/x\"}");
        let link = dir.path().join("testbed-2.path");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
        assert!(write_new_whole(&link, b"x").is_err());
        assert!(!dir.path().join("elsewhere").exists());
        // Only the two names: no hidden file left.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_replaced_file_is_whole_and_a_planted_link_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("knobs-1.json");
        replace_whole(&path, b"[1]").unwrap();
        replace_whole(&path, b"[2]").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"[2]");
        let link = dir.path().join("knobs-2.json");
        let elsewhere = dir.path().join("elsewhere");
        fs::write(&elsewhere, b"theirs").unwrap();
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        replace_whole(&link, b"[3]").unwrap();
        assert_eq!(fs::read(&elsewhere).unwrap(), b"theirs");
        assert!(!fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&link).unwrap(), b"[3]");
        // Only the three names: no hidden file left.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 3);
    }
}
