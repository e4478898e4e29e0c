//! System settings the tool changes (a device's `read_ahead_kb`, ...), and
//! the promise to put every one back: at normal exit, on an error, on a
//! panic (the guard's Drop), on a second Ctrl-C (the signal thread), and
//! after a SIGKILL (`stripebench restore`, from the state file written
//! *before* each change).
//!
//! State files live in `/run/stripebench/` (root) or
//! `$XDG_RUNTIME_DIR/stripebench/`, one per process (`knobs-PID.json`), and
//! are removed once everything in them is restored.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// One changed setting and the value to put back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Knob {
    pub path: PathBuf,
    pub old: String,
}

/// What the signal thread restores if told to quit at once.
static ACTIVE: Mutex<Vec<Knob>> = Mutex::new(Vec::new());

/// Where state files go.
pub fn state_dir() -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 && Path::new("/run").is_dir() {
        return PathBuf::from("/run/stripebench");
    }
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(d) => PathBuf::from(d).join("stripebench"),
        // SAFETY: as above.
        None => std::env::temp_dir().join(format!("stripebench-{}", unsafe { libc::geteuid() })),
    }
}

/// Changes settings and puts them back when dropped.
#[derive(Debug)]
pub struct KnobGuard {
    dir: PathBuf,
    state: PathBuf,
    changed: Vec<Knob>,
}

impl KnobGuard {
    pub fn new(dir: PathBuf) -> KnobGuard {
        let state = dir.join(format!("knobs-{}.json", std::process::id()));
        KnobGuard {
            dir,
            state,
            changed: Vec::new(),
        }
    }

    /// Sets `path` to `value`, after recording its old value in the state file.
    pub fn set(&mut self, path: &Path, value: &str) -> Result<()> {
        let old = fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .trim()
            .to_string();
        if self.changed.iter().any(|k| k.path == path) {
            // Already recorded: the first old value is the one to restore.
        } else {
            self.changed.push(Knob {
                path: path.to_path_buf(),
                old,
            });
            self.save()?;
            if let Ok(mut g) = ACTIVE.lock() {
                g.push(self.changed[self.changed.len() - 1].clone());
            }
        }
        fs::write(path, value).with_context(|| format!("cannot set {} to {value}", path.display()))
    }

    /// The changed settings, oldest first.
    pub fn changed(&self) -> &[Knob] {
        &self.changed
    }

    fn save(&self) -> Result<()> {
        fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        let tmp = self.state.with_extension("tmp");
        let mut f =
            fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
        f.write_all(&serde_json::to_vec_pretty(&self.changed)?)?;
        f.sync_all()?;
        fs::rename(&tmp, &self.state)
            .with_context(|| format!("cannot write {}", self.state.display()))
    }

    /// Puts every setting back; returns what could not be restored.
    pub fn restore(&mut self) -> Vec<String> {
        let failed = restore_knobs(&self.changed);
        if failed.is_empty() {
            let _ = fs::remove_file(&self.state);
        }
        if let Ok(mut g) = ACTIVE.lock() {
            g.retain(|k| !self.changed.contains(k));
        }
        self.changed.clear();
        failed
    }
}

impl Drop for KnobGuard {
    fn drop(&mut self) {
        for e in self.restore() {
            eprintln!("stripebench: warning: {e}; run 'stripebench restore'");
        }
    }
}

fn restore_knobs(knobs: &[Knob]) -> Vec<String> {
    // Newest first, so a setting changed twice ends at its first old value.
    knobs
        .iter()
        .rev()
        .filter_map(|k| {
            fs::write(&k.path, &k.old)
                .err()
                .map(|e| format!("could not restore {} to {}: {e}", k.path.display(), k.old))
        })
        .collect()
}

/// For the signal thread: restores whatever this process changed.
pub fn restore_active() {
    if let Ok(g) = ACTIVE.lock() {
        let _ = restore_knobs(&g);
    }
}

/// State files in `dir` whose process is gone: settings a killed run left changed.
pub fn pending(dir: &Path) -> Vec<(PathBuf, Vec<Knob>)> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| {
            let pid = p
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| s.strip_prefix("knobs-"))
                .and_then(|s| s.parse::<u32>().ok());
            // A live process owns its file; only orphans are pending.
            pid.is_none_or(|pid| {
                pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
            })
        })
        .filter_map(|p| {
            let knobs: Vec<Knob> = serde_json::from_slice(&fs::read(&p).ok()?).ok()?;
            Some((p, knobs))
        })
        .collect()
}

/// `stripebench restore`: puts back everything killed runs left changed.
pub fn restore_pending(dir: &Path) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for (file, knobs) in pending(dir) {
        let failed = restore_knobs(&knobs);
        for k in &knobs {
            lines.push(format!("restored {} to {}", k.path.display(), k.old));
        }
        if failed.is_empty() {
            fs::remove_file(&file).with_context(|| format!("cannot remove {}", file.display()))?;
        } else {
            anyhow::bail!("{}", failed.join("; "));
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_records_first_then_restores_on_drop() {
        let t = tempfile::tempdir().unwrap();
        let knob = t.path().join("read_ahead_kb");
        fs::write(&knob, "128\n").unwrap();
        let dir = t.path().join("state");
        {
            let mut g = KnobGuard::new(dir.clone());
            g.set(&knob, "4096").unwrap();
            g.set(&knob, "0").unwrap();
            assert_eq!(fs::read_to_string(&knob).unwrap(), "0");
            let state: Vec<Knob> = serde_json::from_slice(&fs::read(&g.state).unwrap()).unwrap();
            assert_eq!(
                state,
                vec![Knob {
                    path: knob.clone(),
                    old: "128".into()
                }]
            );
        }
        assert_eq!(fs::read_to_string(&knob).unwrap(), "128");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0, "state file removed");
    }

    #[test]
    fn a_killed_runs_state_is_pending_and_restorable() {
        let t = tempfile::tempdir().unwrap();
        let knob = t.path().join("knob");
        fs::write(&knob, "7").unwrap();
        let dir = t.path().join("state");
        fs::create_dir_all(&dir).unwrap();
        // A state file from a process that no longer exists (pid beyond pid_max).
        let orphan = dir.join("knobs-4294967294.json");
        fs::write(
            &orphan,
            serde_json::to_vec(&vec![Knob {
                path: knob.clone(),
                old: "256".into(),
            }])
            .unwrap(),
        )
        .unwrap();
        assert_eq!(pending(&dir).len(), 1);
        let lines = restore_pending(&dir).unwrap();
        assert_eq!(lines.len(), 1);
        assert_eq!(fs::read_to_string(&knob).unwrap(), "256");
        assert!(!orphan.exists());
        assert!(pending(&dir).is_empty());
    }
}
