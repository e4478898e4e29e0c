//! The state directory: where settings to restore, test-bed records and
//! per-device locks live, who may own it, and how its files are written
//! (never through a planted link).

use anyhow::{Context, Result};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where state files go: `$STRIPEBENCH_STATE_DIR` when set (tests give each
/// test program its own, so that what other runs on the machine left behind
/// does not reach them), else `/run/stripebench` for root, else the user's
/// runtime directory.
pub fn state_dir() -> PathBuf {
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

/// Creates the state directory, readable by its owner only.
pub fn create_state_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
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
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(name);
    // Read-only, never created, never through a link: a missing lock file
    // means nobody ever held it.
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .ok()?;
    let fl = ofd_lock(&f, libc::F_OFD_GETLK).ok()?;
    if fl.l_type == libc::F_UNLCK as libc::c_short {
        return None;
    }
    Some(
        fs::read_to_string(&path)
            .unwrap_or_default()
            .trim()
            .to_string(),
    )
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
    let mut f = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .with_context(|| format!("cannot open lock {}", path.display()))?;
    let device = name.trim_start_matches("lock-");
    let mut said = false;
    loop {
        match ofd_lock(&f, libc::F_OFD_SETLK) {
            Ok(_) => break,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EACCES)) => {}
            Err(e) => return Err(e).with_context(|| format!("cannot lock {}", path.display())),
        }
        let holder = fs::read_to_string(&path).unwrap_or_default();
        let holder = holder.trim();
        if !wait {
            return crate::base::error::usage(format!(
                "device {device} is having its settings changed by another stripebench run (PID {holder}): wait for it to end, or pass --wait-lock"
            ));
        }
        if !said {
            eprintln!(
                "stripebench: waiting for another run (PID {holder}) to finish with device {} (--wait-lock)",
                crate::base::error::show_text(device)
            );
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
