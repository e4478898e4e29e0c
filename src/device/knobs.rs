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

pub use crate::device::state::{create_state_dir, state_dir, write_new_whole};
use crate::device::state::{lock, lock_holder, lock_name, replace_whole};
use crate::device::sysattr::open_restorable;
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
    /// Where sysfs is (`/sys`; a fixture tree in tests).
    sys: PathBuf,
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
            sys: crate::base::host::Host::real().sys,
        }
    }

    /// Takes settings under `root` instead of /sys (tests' fixture trees).
    pub fn with_sys_root(mut self, root: PathBuf) -> Self {
        self.sys = root;
        self
    }

    /// Waits for a device another run holds, instead of refusing.
    pub fn wait_for_locks(mut self, wait: bool) -> Self {
        self.wait = wait;
        self
    }

    /// Takes the lock `name` (`lock-MAJOR:MINOR`), once.
    fn lock_for(&mut self, name: String) -> Result<()> {
        if self.locks.iter().any(|(n, _)| *n == name) {
            return Ok(());
        }
        let f = lock(&self.dir, &name, self.wait).map_err(|e| {
            // A lock held by another run, or an interrupt while waiting,
            // says so itself; a lock that cannot be opened says what stands
            // at its name (as root, no permission is missing: something was
            // put there).
            if e.downcast_ref::<crate::base::error::UsageError>().is_some()
                || crate::base::error::Interrupted::is(&e)
            {
                return e;
            }
            let facts = crate::base::error::node_facts(&self.dir.join(&name));
            anyhow::anyhow!("{e:#}{facts}")
        })?;
        self.locks.push((name, f));
        Ok(())
    }

    /// Sets `path` to `value`, after recording its old value in the state
    /// file. Only a setting in [`crate::device::sysattr::RESTORABLE`] of a
    /// device under /sys/devices can be changed (what `restore` would later
    /// agree to put back); it is recorded with its links resolved.
    pub fn set(&mut self, path: &Path, value: &str) -> Result<()> {
        let real =
            fs::canonicalize(path).with_context(|| format!("cannot find {}", path.display()))?;
        let attr = open_restorable(&self.sys, &real)
            .map_err(|why| anyhow::anyhow!("refusing to change {}: {why}", path.display()))?;
        self.lock_for(format!("lock-{}", attr.dev))?;
        let path = real.as_path();
        // A killed run left this setting changed: its value now is not the
        // one to put back, and recording it would make the change permanent.
        // We hold the device's lock now, and a live run would hold it while
        // its record exists: every other record of this setting is an orphan,
        // whatever process has the PID in its name.
        // A setting `advise --apply` left is no orphan: it stays until
        // `restore`, and this run's record of it (newer) goes back first.
        if let Some(k) = records(&self.dir)
            .iter()
            .filter(|(f, _)| *f != self.state && !is_applied(f))
            .flat_map(|(_, ks)| ks)
            .find(|k| same_setting(&k.path, path))
        {
            return crate::base::error::usage(format!(
                "a killed run left {} changed (it was {}): run 'stripebench restore' first",
                path.display(),
                k.old
            ));
        }
        let old = crate::device::sysattr::current_value(
            path,
            &fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?,
        );
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
        if let Err(e) = attr.write(value) {
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

    /// Keeps every setting as it is now (`advise --apply`): the record
    /// becomes an `applied-` file, which no later run takes for a killed
    /// run's and `stripebench restore` puts back. The device locks go with
    /// the guard. Returns the settings kept.
    pub fn keep(mut self) -> Result<Vec<Knob>> {
        let kept = std::mem::take(&mut self.changed);
        if kept.is_empty() {
            return Ok(kept);
        }
        let name = format!("{APPLIED}{}-{}.json", std::process::id(), now_ns());
        let to = self.dir.join(name);
        if let Err(e) = fs::rename(&self.state, &to) {
            // Not kept: put back as the guard would have.
            self.changed = kept;
            return Err(e).with_context(|| format!("cannot keep {}", to.display()));
        }
        if let Ok(mut g) = ACTIVE.lock() {
            g.retain(|k| !kept.contains(k));
        }
        Ok(kept)
    }

    fn save(&self) -> Result<()> {
        create_state_dir(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        replace_whole(&self.state, &serde_json::to_vec_pretty(&self.changed)?)
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

#[cfg(test)]
impl KnobGuard {
    /// As if the process were killed (SIGKILL): nothing restored, the state
    /// file left, the locks let go (the kernel drops a dead holder's).
    pub(crate) fn killed(mut self) {
        let locks = std::mem::take(&mut self.locks);
        if let Ok(mut g) = ACTIVE.lock() {
            g.retain(|k| !self.changed.contains(k));
        }
        std::mem::forget(self);
        drop(locks);
    }
}

impl Drop for KnobGuard {
    fn drop(&mut self) {
        for e in self.restore() {
            let error = crate::base::error::show_text(&e).into_owned();
            crate::base::notice::say(&crate::base::notice::Notice::NotRestored { error });
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

/// Whether two paths name one setting (a record holds the path with its
/// links resolved; a run names it through /sys/dev/block).
fn same_setting(a: &Path, b: &Path) -> bool {
    a == b || matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

/// The name a kept record (`advise --apply`) starts with.
const APPLIED: &str = "applied-";

/// Whether a record is a kept one (`advise --apply`), not a run's.
fn is_applied(file: &Path) -> bool {
    file.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with(APPLIED))
}

/// Every state file in `dir` that parses, runs' and kept ones: (file, its
/// settings).
fn records(dir: &Path) -> Vec<(PathBuf, Vec<Knob>)> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with("knobs-") || n.starts_with(APPLIED)
            })
        })
        .filter_map(|p| {
            let knobs: Vec<Knob> = serde_json::from_slice(&read_record(&p)?).ok()?;
            Some((p, knobs))
        })
        .collect()
}

/// A state file's bytes, if it is one this tool could have written (see
/// [`crate::device::state::read_trusted`]); refused ones are named by
/// [`crate::device::state::refused_files`].
fn read_record(p: &Path) -> Option<Vec<u8>> {
    crate::device::state::read_trusted(p).ok()
}

/// State files in `dir` that no live run owns: settings a killed run left
/// changed. Liveness is the device lock, never the PID in the file's name
/// (a PID is reused; an unrelated process that has it proves nothing): a
/// run takes the lock of each device before recording a setting of it, and
/// lets go only after its record is gone, so a file with any device whose
/// lock is free has no live owner (restore then takes each lock itself, and
/// leaves a setting whose device is busy).
pub fn pending(dir: &Path) -> Vec<(PathBuf, Vec<Knob>)> {
    records(dir)
        .into_iter()
        .filter(|(f, _)| !is_applied(f))
        .filter(|(_, ks)| {
            ks.is_empty()
                || ks
                    .iter()
                    .any(|k| lock_holder(dir, &lock_name(&k.path)).is_none())
        })
        .collect()
}

/// The settings of the devices named `names` (kernel names: md0, sdb1)
/// that a run changed and has not put back, each with whether that run was
/// killed (its record an orphan) or is live: what sysfs shows of them now
/// is that run's value, not the device's own.
pub fn changed_on(dir: &Path, names: &[&str]) -> Vec<(Knob, bool)> {
    let orphans: Vec<PathBuf> = pending(dir).into_iter().map(|(f, _)| f).collect();
    records(dir)
        .into_iter()
        .filter(|(f, _)| !is_applied(f))
        .flat_map(|(f, ks)| {
            let killed = orphans.contains(&f);
            ks.into_iter().map(move |k| (k, killed))
        })
        .filter(|(k, _)| {
            k.path
                .components()
                .any(|c| names.iter().any(|n| c.as_os_str() == *n))
        })
        .collect()
}

/// A setting of a target's device that another run's record holds: that
/// run changed it and has not put it back (a live run that is changing it
/// now, or a killed one that left it), so what sysfs shows is that run's
/// value, not the device's own. A run that measures the device meanwhile
/// says so and records both values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldSetting {
    /// The setting's file (links resolved, as the record holds it).
    pub setting: String,
    /// The device's own value: the one the other run will put back.
    pub own: String,
    /// The value in force as this run read it (null when it could not be read).
    pub in_force: Option<String>,
    /// The other run's process id (the lock holder's for a live run, the
    /// record's name's for a killed one).
    pub pid: String,
    /// The other run was killed: its record is an orphan, left for
    /// `stripebench restore`.
    pub killed: bool,
}

/// The settings of the devices named `names` (kernel names) that another
/// run's record holds ([`HeldSetting`]): every record in `dir` but this
/// process's own and the ones `advise --apply` kept (deliberate, not a
/// run's temporary value).
pub fn held_by_other_runs(dir: &Path, names: &[&str]) -> Vec<HeldSetting> {
    let own = dir.join(format!("knobs-{}.json", std::process::id()));
    let orphans: Vec<PathBuf> = pending(dir).into_iter().map(|(f, _)| f).collect();
    let mut out: Vec<HeldSetting> = Vec::new();
    for (file, ks) in records(dir) {
        if file == own || is_applied(&file) {
            continue;
        }
        let killed = orphans.contains(&file);
        // A name is data: shown escaped, as the lock holder's PID is.
        let named_pid = file
            .file_stem()
            .map(|s| {
                crate::base::error::show_text(s.to_string_lossy().trim_start_matches("knobs-"))
                    .into_owned()
            })
            .unwrap_or_default();
        for k in ks {
            if !k
                .path
                .components()
                .any(|c| names.iter().any(|n| c.as_os_str() == *n))
            {
                continue;
            }
            let pid = if killed {
                named_pid.clone()
            } else {
                lock_holder(dir, &lock_name(&k.path)).unwrap_or_else(|| named_pid.clone())
            };
            let held = HeldSetting {
                setting: k.path.display().to_string(),
                in_force: fs::read_to_string(&k.path)
                    .ok()
                    .map(|v| crate::device::sysattr::current_value(&k.path, &v)),
                own: k.old,
                pid,
                killed,
            };
            if !out.contains(&held) {
                out.push(held);
            }
        }
    }
    out.sort_by(|a, b| a.setting.cmp(&b.setting));
    out
}

/// The settings `advise --apply` kept, by record: what `restore` puts back
/// beside killed runs' settings.
pub fn applied(dir: &Path) -> Vec<(PathBuf, Vec<Knob>)> {
    records(dir)
        .into_iter()
        .filter(|(f, _)| is_applied(f))
        .collect()
}

/// `stripebench restore`: puts back everything killed runs left changed,
/// and what `advise --apply` kept, newest change first across all their
/// state files, so that where two runs changed one setting, the value from
/// before the first change is the one left.
/// Only the settings stripebench changes are ever written, each opened
/// under `under` (`/sys` outside tests) without following any link (see
/// `sysattr::open_restorable`): a state file is data, and must not be able
/// to name any other file. Returns what was restored, and what was refused
/// or failed; a state file is removed once all of its settings are back.
pub fn restore_pending(
    dir: &Path,
    under: &Path,
    with_applied: bool,
) -> Result<(Vec<String>, Vec<String>)> {
    let mut files = pending(dir);
    if with_applied {
        files.extend(applied(dir));
    }
    let mut all: Vec<(&Path, &Knob)> = files
        .iter()
        .flat_map(|(f, ks)| ks.iter().map(move |k| (f.as_path(), k)))
        .collect();
    all.sort_by_key(|(_, k)| std::cmp::Reverse(k.at_ns));
    let mut lines = Vec::new();
    let mut failed = Vec::new();
    // State files with a setting not put back: kept.
    let mut keep: Vec<&Path> = Vec::new();
    // A device a live run is changing is left to that run: its lock is
    // taken (without waiting) for each setting put back.
    let mut held: Vec<(String, fs::File)> = Vec::new();
    for (file, k) in all {
        // The old value is data too: a number, as sysfs shows every setting
        // stripebench changes (read_ahead_kb), or a scheduler's name
        // (sysattr::value_ok), or nothing is written.
        if !crate::device::sysattr::value_ok(&k.path, &k.old) {
            failed.push(format!(
                "refusing to write {} (named by {}): its old value {} is not a number (or, for a scheduler, a name); remove that file if no run of yours left it",
                crate::base::error::show_path(&k.path),
                crate::base::error::show_path(file),
                crate::base::error::show_text(&format!("{:?}", k.old))
            ));
            keep.push(file);
            continue;
        }
        let attr = match open_restorable(under, &k.path) {
            Ok(a) => a,
            Err(why) => {
                failed.push(format!(
                    "refusing to write {} (named by {}): {why}; remove that file if no run of yours left it",
                    crate::base::error::show_path(&k.path),
                    crate::base::error::show_path(file)
                ));
                keep.push(file);
                continue;
            }
        };
        let name = format!("lock-{}", attr.dev);
        if !held.iter().any(|(n, _)| *n == name) {
            match lock(dir, &name, false) {
                Ok(f) => held.push((name.clone(), f)),
                Err(_) => {
                    let pid = lock_holder(dir, &name).unwrap_or_default();
                    lines.push(format!(
                        "left {} alone: a live stripebench run (PID {pid}) holds device {}, and puts it back itself",
                        crate::base::error::show_path(&k.path),
                        attr.dev
                    ));
                    keep.push(file);
                    continue;
                }
            }
        }
        match attr.write(&k.old) {
            Ok(()) if is_applied(file) => lines.push(format!(
                "restored {} to {} (advise --apply had changed it)",
                crate::base::error::show_path(&k.path),
                k.old
            )),
            Ok(()) => lines.push(format!(
                "restored {} to {}",
                crate::base::error::show_path(&k.path),
                k.old
            )),
            Err(e) => {
                failed.push(format!(
                    "could not restore {} to {}: {e}",
                    crate::base::error::show_path(&k.path),
                    k.old
                ));
                keep.push(file);
            }
        }
    }
    for (file, _) in &files {
        if !keep.contains(&file.as_path()) {
            fs::remove_file(file).with_context(|| {
                format!("cannot remove {}", crate::base::error::show_path(file))
            })?;
        }
    }
    Ok((lines, failed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixture sysfs under `t`: loop9 (7:9) and its read_ahead_kb, holding
    /// `value`. Returns (the root, the setting), links resolved.
    fn fixture(t: &Path, value: &str) -> (PathBuf, PathBuf) {
        let root = fs::canonicalize(t).unwrap().join("sys");
        let d = root.join("devices/virtual/block/loop9");
        fs::create_dir_all(d.join("queue")).unwrap();
        fs::write(d.join("dev"), "7:9\n").unwrap();
        let knob = d.join("queue/read_ahead_kb");
        fs::write(&knob, value).unwrap();
        (root, knob)
    }

    /// `advise --apply`: the settings stay when the guard goes, no later
    /// run takes them for a killed run's, and `restore` puts back the value
    /// from before the apply, after a later killed run's change of it.
    #[test]
    fn kept_settings_stay_until_restore_and_are_no_killed_runs() {
        let t = tempfile::tempdir().unwrap();
        let (root, knob) = fixture(t.path(), "0\n");
        let dir = t.path().join("state");
        let mut g = KnobGuard::new(dir.clone()).with_sys_root(root.clone());
        g.set(&knob, "1024").unwrap();
        let kept = g.keep().unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].old, "0");
        assert_eq!(fs::read_to_string(&knob).unwrap(), "1024");
        assert!(pending(&dir).is_empty(), "no killed run");
        assert_eq!(applied(&dir).len(), 1);
        assert!(changed_on(&dir, &["loop9"]).is_empty());
        // A later run may change it (its old value is the applied one), and
        // is then killed.
        let mut later = KnobGuard::new(dir.clone()).with_sys_root(root.clone());
        later.set(&knob, "64").unwrap();
        later.killed();
        assert_eq!(pending(&dir).len(), 1);
        let (lines, failed) = restore_pending(&dir, &root, true).unwrap();
        assert!(failed.is_empty(), "{failed:?}");
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[1].ends_with("to 0 (advise --apply had changed it)"),
            "{lines:?}"
        );
        assert_eq!(fs::read_to_string(&knob).unwrap(), "0");
        assert!(applied(&dir).is_empty() && pending(&dir).is_empty());
        // `restore --keep-applied`: a killed run's change goes back, the
        // applied value stays.
        let mut g = KnobGuard::new(dir.clone()).with_sys_root(root.clone());
        g.set(&knob, "1024").unwrap();
        g.keep().unwrap();
        let mut later = KnobGuard::new(dir.clone()).with_sys_root(root.clone());
        later.set(&knob, "64").unwrap();
        later.killed();
        let (lines, failed) = restore_pending(&dir, &root, false).unwrap();
        assert!(
            failed.is_empty() && lines.len() == 1,
            "{lines:?} {failed:?}"
        );
        assert_eq!(fs::read_to_string(&knob).unwrap(), "1024");
        assert_eq!(applied(&dir).len(), 1);
    }

    /// Issue 39 item 7: a run that measured a device while another run
    /// held its read-ahead recorded that run's value as the device's. The
    /// other run's record names both values and its PID; this process's
    /// own record and an applied one are not another run's.
    #[test]
    fn another_runs_record_holds_the_setting_with_both_values_and_its_pid() {
        let t = tempfile::tempdir().unwrap();
        let (root, knob) = fixture(t.path(), "1024\n");
        let dir = t.path().join("state");
        create_state_dir(&dir).unwrap();
        let theirs = vec![Knob {
            path: knob.clone(),
            old: "2560".into(),
            at_ns: 1,
        }];
        fs::write(
            dir.join("knobs-999999.json"),
            serde_json::to_vec(&theirs).unwrap(),
        )
        .unwrap();
        // Live: its device's lock is held (by its holder, who wrote its PID).
        let held_lock = lock(&dir, &lock_name(&knob), false).unwrap();
        let found = held_by_other_runs(&dir, &["loop9"]);
        assert_eq!(
            found,
            vec![HeldSetting {
                setting: knob.display().to_string(),
                own: "2560".into(),
                in_force: Some("1024".into()),
                pid: std::process::id().to_string(),
                killed: false,
            }]
        );
        assert!(held_by_other_runs(&dir, &["loop1", "loop99"]).is_empty());
        // Killed: the lock is free, the PID is the record's.
        drop(held_lock);
        let found = held_by_other_runs(&dir, &["loop9"]);
        assert_eq!((found[0].pid.as_str(), found[0].killed), ("999999", true));
        // This process's own record is not another run's.
        fs::remove_file(dir.join("knobs-999999.json")).unwrap();
        let mut g = KnobGuard::new(dir.clone()).with_sys_root(root);
        g.set(&knob, "64").unwrap();
        assert!(held_by_other_runs(&dir, &["loop9"]).is_empty());
        g.keep().unwrap();
        assert!(held_by_other_runs(&dir, &["loop9"]).is_empty(), "applied");
    }

    /// Regression (hostile pass over advise --apply): a FIFO named like a
    /// record hung restore, run and advise in open(); a link to /dev/zero
    /// (or a huge file) was read whole into memory. Neither is a record.
    #[test]
    fn a_fifo_a_link_or_a_huge_file_named_like_a_record_is_skipped() {
        let t = tempfile::tempdir().unwrap();
        let (root, knob) = fixture(t.path(), "7");
        let dir = t.path().join("state");
        fs::create_dir_all(&dir).unwrap();
        let fifo =
            std::ffi::CString::new(dir.join("applied-1-2.json").as_os_str().as_encoded_bytes())
                .unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::os::unix::fs::symlink("/dev/zero", dir.join("knobs-1.json")).unwrap();
        let huge = fs::File::create(dir.join("applied-1-3.json")).unwrap();
        huge.set_len(crate::device::state::RECORD_MAX + 1).unwrap();
        let good = vec![Knob {
            path: knob.clone(),
            old: "256".into(),
            at_ns: 1,
        }];
        fs::write(
            dir.join("applied-1-4.json"),
            serde_json::to_vec(&good).unwrap(),
        )
        .unwrap();
        assert_eq!(records(&dir).len(), 1);
        let (lines, failed) = restore_pending(&dir, &root, true).unwrap();
        assert!(failed.is_empty(), "{failed:?}");
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(fs::read_to_string(&knob).unwrap(), "256");
    }

    #[test]
    fn set_records_first_then_restores_on_drop() {
        let t = tempfile::tempdir().unwrap();
        let (root, knob) = fixture(t.path(), "128\n");
        let dir = t.path().join("state");
        {
            let mut g = KnobGuard::new(dir.clone()).with_sys_root(root);
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
    fn a_killed_advise_leaves_read_ahead_that_advise_must_not_read_as_the_devices() {
        // A SIGKILLed run's read-ahead stays set: advise read it as the
        // volume's own and advised on it (and measured "the current value").
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("state");
        fs::create_dir_all(&dir).unwrap();
        let knob = PathBuf::from("/sys/devices/virtual/block/md0/queue/read_ahead_kb");
        fs::write(
            dir.join("knobs-4294967294.json"),
            serde_json::to_vec(&vec![Knob {
                path: knob.clone(),
                old: "2560".into(),
                at_ns: 1,
            }])
            .unwrap(),
        )
        .unwrap();
        let found = changed_on(&dir, &["md0", "loop0"]);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].0.path.as_path(), found[0].1),
            (knob.as_path(), true)
        );
        assert_eq!(found[0].0.old, "2560");
        // Another device's setting is not this volume's.
        assert!(changed_on(&dir, &["md1", "loop"]).is_empty());
    }

    #[test]
    fn a_killed_runs_state_is_pending_and_restorable() {
        let t = tempfile::tempdir().unwrap();
        let (root, knob) = fixture(t.path(), "7");
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
        let (lines, failed) = restore_pending(&dir, &root, true).unwrap();
        assert!(failed.is_empty(), "{failed:?}");
        assert_eq!(lines.len(), 1);
        assert_eq!(fs::read_to_string(&knob).unwrap(), "256");
        assert!(!orphan.exists());
        assert!(pending(&dir).is_empty());
    }

    /// Regression (hostile pass over issue 20, item 9): a state file's old
    /// value is data too: "128\n\e[2J" was written to the attribute, and
    /// the failure split restore's one-line error in two. An old value that
    /// is not a number, as sysfs shows one, is refused before any write.
    #[test]
    fn an_old_value_that_is_not_a_number_is_refused_unwritten() {
        let t = tempfile::tempdir().unwrap();
        let (root, knob) = fixture(t.path(), "7");
        let dir = t.path().join("state");
        fs::create_dir_all(&dir).unwrap();
        for (pid, old) in [
            (4294967290u32, "128\n\u{1b}[2J"),
            (4294967291, ""),
            (4294967292, "99999999999999"),
        ] {
            fs::write(
                dir.join(format!("knobs-{pid}.json")),
                serde_json::to_vec(&vec![Knob {
                    path: knob.clone(),
                    old: old.into(),
                    at_ns: 1,
                }])
                .unwrap(),
            )
            .unwrap();
        }
        let (lines, failed) = restore_pending(&dir, &root, true).unwrap();
        assert!(lines.is_empty(), "{lines:?}");
        assert_eq!(failed.len(), 3, "{failed:?}");
        for f in &failed {
            assert!(f.contains("is not a number"), "{f}");
            assert!(!f.contains('\n') && !f.contains('\u{1b}'), "{f:?}");
        }
        assert_eq!(fs::read_to_string(&knob).unwrap(), "7", "nothing written");
    }

    #[test]
    fn restore_applies_the_newest_change_first() {
        let t = tempfile::tempdir().unwrap();
        let (root, knob) = fixture(t.path(), "64");
        // Run A changed 2560 -> 16 and was killed; run B then changed 16 -> 64
        // and was killed. Their files sort the other way round by name.
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
        let (_, failed) = restore_pending(&dir, &root, true).unwrap();
        assert!(failed.is_empty(), "{failed:?}");
        assert_eq!(fs::read_to_string(&knob).unwrap(), "2560");
        assert!(pending(&dir).is_empty());
    }

    #[test]
    fn a_second_run_changing_the_same_device_is_refused_naming_the_holder() {
        let t = tempfile::tempdir().unwrap();
        let (root, knob) = fixture(t.path(), "128");
        let dir = t.path().join("state");
        let mut a = KnobGuard::new(dir.clone()).with_sys_root(root.clone());
        a.set(&knob, "16").unwrap();
        // flock locks belong to the open file: a second guard is a second holder.
        let mut b = KnobGuard::new(dir.clone()).with_sys_root(root.clone());
        let e = b.set(&knob, "64").unwrap_err().to_string();
        assert!(
            e.contains(&format!("PID {}", std::process::id())) && e.contains("--wait-lock"),
            "{e}"
        );
        assert_eq!(fs::read_to_string(&knob).unwrap(), "16");
        drop(b);
        drop(a);
        assert_eq!(fs::read_to_string(&knob).unwrap(), "128");
        // The lock is free once A's file is closed everywhere: a child that
        // another test forks meanwhile holds a copy of the descriptor until
        // it execs (seen once, under load), so the next holder waits for it
        // as `--wait-lock` does, rather than refusing.
        let mut c = KnobGuard::new(dir.clone())
            .with_sys_root(root)
            .wait_for_locks(true);
        c.set(&knob, "64").unwrap();
        drop(c);
        assert_eq!(fs::read_to_string(&knob).unwrap(), "128");
    }
}
