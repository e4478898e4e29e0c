//! Where the history database lives, and the checks before SQLite opens
//! it by name. As for the state directory, what is there is trusted only
//! when root or this user owns it and nobody else may write to it: the
//! directory is walked without following another user's links, must be
//! owned so, writable by nobody else, and on a path nobody else may rename;
//! the database file, when there, is opened without following a link and
//! must be a regular file owned so. SQLite then opens the file by the path
//! with no link left in it, and makes its `-wal` and `-shm` files in that
//! directory, where nobody else can plant anything.

use std::ffi::OsStr;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use crate::base::error::show_path;
use crate::base::path::WalkError;

/// Why a database path cannot be used: one line, naming it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("history database {shown}: {why}; {fix}")]
pub struct Refused {
    pub shown: String,
    pub why: String,
    pub fix: &'static str,
}

const FIX: &str = "give --history a file in a directory of your own (mode 0700), or --no-history";

/// The database at `path`, checked: the path SQLite may open it by (no
/// link left in it), and whether it exists yet. `make_dir`: make a missing
/// directory (mode 0700), as for the default path; `create`: make a
/// missing database file (mode 0600).
pub fn checked(path: &Path, make_dir: bool, create: bool) -> Result<(PathBuf, bool), Refused> {
    let shown = show_path(path);
    let refuse = |why: String| Refused {
        shown: shown.clone(),
        why,
        fix: FIX,
    };
    let name = path
        .file_name()
        .filter(|n| *n != OsStr::new("..") && *n != OsStr::new("."))
        .ok_or_else(|| refuse("it names no file".into()))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if make_dir && !dir.exists() {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| refuse(format!("cannot make its directory: {e}")))?;
    }
    let fd = crate::base::path::open_unplanted(&dir).map_err(|e| match e {
        WalkError::Planted { at, owner } => refuse(WalkError::planted_text(&at, owner)),
        WalkError::Sys(nix::errno::Errno::ENOENT) => refuse("its directory does not exist".into()),
        WalkError::Sys(e) => refuse(format!("cannot open its directory: {}", e.desc())),
    })?;
    let st = nix::sys::stat::fstat(fd.as_raw_fd())
        .map_err(|e| refuse(format!("cannot inspect its directory: {}", e.desc())))?;
    if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
        return Err(refuse("its directory is not a directory".into()));
    }
    if let Some(why) = crate::device::state::untrusted(&st) {
        return Err(refuse(format!("its directory: {why}")));
    }
    let real = crate::base::path::path_of(&fd)
        .map_err(|_| refuse("cannot resolve where its directory is".into()))?;
    if let Some(why) = crate::base::path::others_may_rename(&real) {
        return Err(refuse(why));
    }
    // Made here, 0600, in the directory just checked, so that SQLite's
    // own creation (by the umask) cannot leave it writable by the group.
    // Made first and inspected after, so that two runs making it at once
    // both find the one that won.
    let made = create
        && match crate::base::path::open_component(
            &fd,
            name,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
        ) {
            Ok(_) => true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
            Err(e) => return Err(refuse(format!("cannot create it: {e}"))),
        };
    let exists = match crate::base::path::open_component(&fd, name, libc::O_RDONLY) {
        Ok(f) => {
            let st = nix::sys::stat::fstat(f.as_raw_fd())
                .map_err(|e| refuse(format!("cannot inspect it: {}", e.desc())))?;
            if st.st_mode & libc::S_IFMT != libc::S_IFREG {
                return Err(refuse("it is not a regular file".into()));
            }
            if let Some(why) = crate::device::state::untrusted(&st) {
                return Err(refuse(why));
            }
            !made
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => false,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(refuse("it is a symbolic link: not followed".into()))
        }
        Err(e) => return Err(refuse(format!("cannot open it: {e}"))),
    };
    let file = real.join(name);
    Ok((file, exists))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn private_dir() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        t
    }

    #[test]
    fn a_file_in_a_private_directory_is_used_and_a_link_at_its_name_is_not() {
        let t = private_dir();
        let db = t.path().join("h.db");
        let (real, exists) = checked(&db, false, true).unwrap();
        assert!(!exists);
        assert_eq!(real.file_name().unwrap(), "h.db");
        assert!(checked(&db, false, true).unwrap().1, "made, 0600");
        std::fs::remove_file(&db).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", &db).unwrap();
        let e = checked(&db, false, true).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
    }

    #[test]
    fn runs_making_the_database_at_once_all_get_it() {
        // Two runs recording at once into a new database: the one that
        // loses the race to create it opens the winner's.
        for round in 0..20 {
            let t = private_dir();
            let db = t.path().join(format!("h{round}.db"));
            let made: Vec<bool> = std::thread::scope(|s| {
                let all: Vec<_> = (0..4)
                    .map(|_| s.spawn(|| checked(&db, false, true).map(|(_, e)| !e)))
                    .collect();
                all.into_iter()
                    .map(|h| h.join().unwrap().unwrap())
                    .collect()
            });
            assert_eq!(made.iter().filter(|m| **m).count(), 1, "{made:?}");
        }
    }

    #[test]
    fn a_directory_others_may_write_to_is_refused() {
        let t = private_dir();
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = checked(&open.join("h.db"), false, true).unwrap_err();
        assert!(e.to_string().contains("0777"), "{e}");
        assert!(e.to_string().contains("--no-history"), "{e}");
    }

    #[test]
    fn a_missing_directory_is_made_only_for_the_default() {
        let t = private_dir();
        let db = t.path().join("a/b/h.db");
        assert!(checked(&db, false, true)
            .unwrap_err()
            .to_string()
            .contains("does not exist"));
        checked(&db, true, true).unwrap();
        let mode = std::fs::metadata(t.path().join("a/b"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
