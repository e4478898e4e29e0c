//! System settings the tool changes (a device's `read_ahead_kb`, ...), and
//! the promise to put every one back: at normal exit, on an error, on a
//! panic (the guard's Drop), on a second Ctrl-C (the signal thread), and
//! after a SIGKILL (`stripebench restore`, from the state file written
//! *before* each change).
//!
//! State files live in `/run/stripebench/` (root) or
//! `$XDG_RUNTIME_DIR/stripebench/`, one per process (`knobs-PID.json`), and
//! are removed once everything in them is restored. The lock files beside
//! them (`*.lock`, one per device whose settings a run changed) are meant
//! to stay: a lock is the flock on the file, not the file, and removing a
//! lock file while another run waits on it would let a third run lock a new
//! file of the same name, so two runs would change one device at once.
//! They are empty, one per device ever changed, and cleared at reboot (/run).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};

pub use crate::device::state::{create_state_dir, state_dir, write_new};
use crate::device::state::{lock, lock_name};
use serde::{Deserialize, Serialize};

/// One changed setting and the value to put back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Knob {
    pub path: PathBuf,
    pub old: String,
    /// When it was changed (ns since the Unix epoch; 0 in files from before
    /// this field): restores go newest first, so the value from before the
    /// first change is the one left.
    #[serde(default)]
    pub at_ns: u64,
}

fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// What the signal thread restores if told to quit at once.
static ACTIVE: Mutex<Vec<Knob>> = Mutex::new(Vec::new());

/// Changes settings and puts them back when dropped. While it holds a
/// changed setting it holds the lock of that setting's device, so two runs
/// never change one device at once (the second would record the first's
/// value as the one to restore).
#[derive(Debug)]
pub struct KnobGuard {
    dir: PathBuf,
    state: PathBuf,
    changed: Vec<Knob>,
    /// Wait for another run's lock instead of refusing (`--wait-lock`).
    wait: bool,
    locks: Vec<(String, fs::File)>,
}

impl KnobGuard {
    pub fn new(dir: PathBuf) -> KnobGuard {
        let state = dir.join(format!("knobs-{}.json", std::process::id()));
        KnobGuard {
            dir,
            state,
            changed: Vec::new(),
            wait: false,
            locks: Vec::new(),
        }
    }

    /// Waits for a device another run holds, instead of refusing.
    pub fn wait_for_locks(mut self, wait: bool) -> Self {
        self.wait = wait;
        self
    }

    /// Takes the lock of the device that `knob` belongs to, once.
    fn lock_for(&mut self, knob: &Path) -> Result<()> {
        let name = lock_name(knob);
        if self.locks.iter().any(|(n, _)| *n == name) {
            return Ok(());
        }
        let f = lock(&self.dir, &name, self.wait)?;
        self.locks.push((name, f));
        Ok(())
    }

    /// Sets `path` to `value`, after recording its old value in the state file.
    pub fn set(&mut self, path: &Path, value: &str) -> Result<()> {
        self.lock_for(path)?;
        // A killed run left this setting changed: its value now is not the
        // one to put back, and recording it would make the change permanent.
        if let Some(k) = pending(&self.dir)
            .iter()
            .flat_map(|(_, ks)| ks)
            .find(|k| k.path == path)
        {
            return crate::base::error::usage(format!(
                "a killed run left {} changed (it was {}): run 'stripebench restore' first",
                path.display(),
                k.old
            ));
        }
        let old = fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .trim()
            .to_string();
        let recorded = self.changed.iter().any(|k| k.path == path);
        if recorded {
            // Already recorded: the first old value is the one to restore.
        } else {
            self.changed.push(Knob {
                path: path.to_path_buf(),
                old,
                at_ns: now_ns(),
            });
            self.save()?;
            if let Ok(mut g) = ACTIVE.lock() {
                g.push(self.changed[self.changed.len() - 1].clone());
            }
            // A second signal quits at once: this process's settings go back first.
            crate::base::signals::on_quit(restore_active);
        }
        if let Err(e) = fs::write(path, value) {
            // Nothing changed (no permission, a value refused): there is
            // nothing to put back, and no restore to ask for.
            if !recorded {
                if let Some(k) = self.changed.pop() {
                    if let Ok(mut g) = ACTIVE.lock() {
                        g.retain(|a| *a != k);
                    }
                }
                if self.changed.is_empty() {
                    let _ = fs::remove_file(&self.state);
                } else {
                    self.save()?;
                }
            }
            return Err(e).with_context(|| format!("cannot set {} to {value}", path.display()));
        }
        Ok(())
    }

    /// The changed settings, oldest first.
    pub fn changed(&self) -> &[Knob] {
        &self.changed
    }

    fn save(&self) -> Result<()> {
        create_state_dir(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        let tmp = self.state.with_extension("tmp");
        // Whatever stands at the name (a stale file, a planted link) goes;
        // unlinking never follows a link.
        let _ = fs::remove_file(&tmp);
        write_new(&tmp, &serde_json::to_vec_pretty(&self.changed)?)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
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
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("knobs-"))
        })
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

/// `stripebench restore`: puts back everything killed runs left changed,
/// newest change first across all their state files, so that where two
/// killed runs changed one setting, the value from before the first change
/// is the one left.
/// Only settings under `under` (`/sys` outside tests) are ever written: a
/// state file is data, and must not be able to name any other file.
pub fn restore_pending(dir: &Path, under: &Path) -> Result<Vec<String>> {
    let files = pending(dir);
    let mut all: Vec<&Knob> = files.iter().flat_map(|(_, k)| k).collect();
    all.sort_by_key(|k| std::cmp::Reverse(k.at_ns));
    let mut lines = Vec::new();
    let mut failed = Vec::new();
    // A device a live run is changing is left to that run: its lock is
    // taken (without waiting) for each setting put back.
    let mut held: Vec<(String, fs::File)> = Vec::new();
    let mut busy: Vec<String> = Vec::new();
    for k in all {
        if !k.path.starts_with(under)
            || k.path
                .components()
                .any(|c| c == std::path::Component::ParentDir)
        {
            failed.push(format!(
                "refusing to write {}: a state file may only name settings under {}",
                k.path.display(),
                under.display()
            ));
            continue;
        }
        let name = lock_name(&k.path);
        if !held.iter().any(|(n, _)| *n == name) {
            match lock(dir, &name, false) {
                Ok(f) => held.push((name.clone(), f)),
                Err(e) => {
                    busy.push(format!("{} not restored: {e:#}", k.path.display()));
                    continue;
                }
            }
        }
        match fs::write(&k.path, &k.old) {
            Ok(()) => lines.push(format!("restored {} to {}", k.path.display(), k.old)),
            Err(e) => failed.push(format!(
                "could not restore {} to {}: {e}",
                k.path.display(),
                k.old
            )),
        }
    }
    if !failed.is_empty() {
        anyhow::bail!("{}", failed.join("; "));
    }
    if !busy.is_empty() {
        // Keep every state file: run restore again once the device is free.
        lines.extend(busy);
        return Ok(lines);
    }
    for (file, _) in &files {
        fs::remove_file(file).with_context(|| format!("cannot remove {}", file.display()))?;
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
                    old: "128".into(),
                    at_ns: state[0].at_ns,
                }]
            );
        }
        assert_eq!(fs::read_to_string(&knob).unwrap(), "128");
        let left: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .collect();
        assert!(left.is_empty(), "state file removed");
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
                at_ns: 1,
            }])
            .unwrap(),
        )
        .unwrap();
        assert_eq!(pending(&dir).len(), 1);
        let lines = restore_pending(&dir, t.path()).unwrap();
        assert_eq!(lines.len(), 1);
        assert_eq!(fs::read_to_string(&knob).unwrap(), "256");
        assert!(!orphan.exists());
        assert!(pending(&dir).is_empty());
    }

    #[test]
    fn restore_applies_the_newest_change_first() {
        let t = tempfile::tempdir().unwrap();
        let knob = t.path().join("read_ahead_kb");
        // Run A changed 2560 -> 16 and was killed; run B then changed 16 -> 64
        // and was killed. Their files sort the other way round by name.
        fs::write(&knob, "64").unwrap();
        let dir = t.path().join("state");
        fs::create_dir_all(&dir).unwrap();
        let state = |pid: u32, old: &str, at_ns: u64| {
            let k = vec![Knob {
                path: knob.clone(),
                old: old.into(),
                at_ns,
            }];
            fs::write(
                dir.join(format!("knobs-{pid}.json")),
                serde_json::to_vec(&k).unwrap(),
            )
            .unwrap();
        };
        state(4294967290, "16", 2_000);
        state(4294967291, "2560", 1_000);
        restore_pending(&dir, t.path()).unwrap();
        assert_eq!(fs::read_to_string(&knob).unwrap(), "2560");
        assert!(pending(&dir).is_empty());
    }

    #[test]
    fn a_second_run_changing_the_same_device_is_refused_naming_the_holder() {
        let t = tempfile::tempdir().unwrap();
        let knob = t.path().join("read_ahead_kb");
        fs::write(&knob, "128").unwrap();
        let dir = t.path().join("state");
        let mut a = KnobGuard::new(dir.clone());
        a.set(&knob, "16").unwrap();
        // flock locks belong to the open file: a second guard is a second holder.
        let mut b = KnobGuard::new(dir.clone());
        let e = b.set(&knob, "64").unwrap_err().to_string();
        assert!(
            e.contains(&format!("PID {}", std::process::id())) && e.contains("--wait-lock"),
            "{e}"
        );
        assert_eq!(fs::read_to_string(&knob).unwrap(), "16");
        drop(a);
        assert_eq!(fs::read_to_string(&knob).unwrap(), "128");
        b.set(&knob, "64").unwrap();
        drop(b);
        assert_eq!(fs::read_to_string(&knob).unwrap(), "128");
    }
}
