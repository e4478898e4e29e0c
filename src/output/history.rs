//! Where the per-disk history is recorded (`--history`, `--no-history`,
//! `$STRIPEBENCH_HISTORY`): the choice, and the default path. The database
//! itself, and the checks before it is opened, are `store::`'s.

use std::path::{Path, PathBuf};

/// The file name of the default database.
pub const FILE: &str = "history.db";

/// `--history`, `--no-history`: where results are recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Where {
    /// `$STRIPEBENCH_HISTORY`, else `/var/lib/stripebench/history.db` for
    /// root, else `$XDG_STATE_HOME/stripebench/history.db` (by default
    /// `~/.local/state/stripebench/history.db`).
    #[default]
    Default,
    Path(PathBuf),
    /// `--no-history`, or `STRIPEBENCH_HISTORY=off`.
    Off,
}

impl Where {
    /// The database's path, `None` when recording is off.
    pub fn path(&self) -> Option<PathBuf> {
        match self {
            Where::Off => None,
            Where::Path(p) => Some(p.clone()),
            Where::Default => match std::env::var_os("STRIPEBENCH_HISTORY") {
                Some(v) if v.eq_ignore_ascii_case("off") => None,
                Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
                _ => Some(default_path()),
            },
        }
    }

    /// Whether a missing directory is made for it: the default's and
    /// `$STRIPEBENCH_HISTORY`'s are; a path given with `--history` must be
    /// in a directory that exists (a typo is not made into a tree).
    pub fn is_default(&self) -> bool {
        *self == Where::Default
    }
}

fn default_path() -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return Path::new("/var/lib/stripebench").join(FILE);
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| Path::new(v).is_absolute())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(|| PathBuf::from("/nonexistent"));
    state.join("stripebench").join(FILE)
}
