//! md raid4/5/6's tunables as run settings (`--stripe-cache-size N`,
//! `--group-thread-cnt N`, and the same as sweep parameters): each target's
//! array is checked (an md array of a parity level, the stripe cache's
//! memory) before anything is changed, then set through the knob guard, so
//! they are put back by every path that puts read-ahead back (the end of
//! the run, a signal, a panic, and `stripebench restore` after a SIGKILL).
//!
//! md names them `/sys/block/mdN/md/stripe_cache_size` (stripe heads, each
//! one page per member device) and `/sys/block/mdN/md/group_thread_cnt`
//! (worker threads per group of CPUs; 0: the array's one raid5d thread).

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::base::error::{show_path, Interrupted, UsageError};
use crate::base::units::fmt_bytes;
use crate::device::knobs::KnobGuard;

/// What md takes for `stripe_cache_size` (drivers/md/raid5.c:
/// `raid5_set_cache_size` refuses 16 and less, and more than 32768).
pub const STRIPE_CACHE_MIN: u64 = 17;
pub const STRIPE_CACHE_MAX: u64 = 32768;
/// What md takes for `group_thread_cnt` (raid5.c: "8192 should be big enough").
pub const GROUP_THREAD_MAX: u64 = 8192;
/// Bytes a stripe head holds per member device: one page (x86's 4 KiB).
const STRIPE_PAGE: u64 = 4096;

/// The tunables asked for a run; `None`: left as they are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MdTunables {
    pub stripe_cache_size: Option<u64>,
    pub group_thread_cnt: Option<u64>,
}

impl MdTunables {
    pub fn any(&self) -> bool {
        self.stripe_cache_size.is_some() || self.group_thread_cnt.is_some()
    }

    /// Each tunable asked: (its option, its md attribute, the value).
    fn asked(&self) -> Vec<(&'static str, &'static str, u64)> {
        [
            (
                "--stripe-cache-size",
                "stripe_cache_size",
                self.stripe_cache_size,
            ),
            (
                "--group-thread-cnt",
                "group_thread_cnt",
                self.group_thread_cnt,
            ),
        ]
        .into_iter()
        .filter_map(|(o, a, v)| v.map(|v| (o, a, v)))
        .collect()
    }
}

/// One md parity array a run's tunables go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Array {
    /// The target that reaches it, as the user named it.
    pub target: PathBuf,
    /// Its `md/` directory in sysfs (through /sys/dev/block).
    pub md_dir: PathBuf,
    /// `raid4`, `raid5` or `raid6`.
    pub level: String,
    /// Its member devices (`md/raid_disks`), each holding a page per stripe head.
    pub raid_disks: u64,
}

/// The checked tunables, and the arrays they go to: [`Checked::apply`]
/// changes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    tunables: MdTunables,
    arrays: Vec<Array>,
}

/// The md array behind device `dev` (the target `target`), or why there is
/// none of a parity level, as the refusal of `option` says it.
fn array_of(
    sys: &Path,
    target: &Path,
    dev: (u64, u64),
    option: &str,
    attr: &str,
) -> Result<Array, String> {
    let dir = sys.join(format!("dev/block/{}:{}", dev.0, dev.1));
    let md_dir = dir.join("md");
    let read = |name: &str| {
        fs::read_to_string(md_dir.join(name))
            .ok()
            .map(|s| s.trim().to_string())
    };
    let name = crate::device::sysfs_name(sys, dev.0, dev.1).unwrap_or_else(|| "?".into());
    let Some(level) = read("level") else {
        let what = if dir.join("dm").is_dir() {
            format!("a device-mapper device ({name}), not md (dm-raid keeps its stripe cache in its table)")
        } else {
            format!("not an md array ({name})")
        };
        return Err(format!(
            "{option}: {} is {what}; {attr} exists on md raid4/5/6 only",
            show_path(target)
        ));
    };
    if !matches!(level.as_str(), "raid4" | "raid5" | "raid6") {
        let level = if level.is_empty() {
            "an inactive md array".to_string()
        } else {
            format!("md {level}")
        };
        return Err(format!(
            "{option}: {} is {level}; {attr} exists on raid4/5/6 only",
            show_path(target)
        ));
    }
    let raid_disks = read("raid_disks")
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            format!(
                "{option}: cannot read {}: is {} an active array?",
                md_dir.join("raid_disks").display(),
                show_path(target)
            )
        })?;
    Ok(Array {
        target: target.to_path_buf(),
        md_dir,
        level,
        raid_disks,
    })
}

/// Checks the tunables against every target before anything changes:
/// each target's device (`targets`: its path and the device that holds its
/// bytes, a file's being its file system's) must be an md raid4/5/6, each
/// value in md's range, and the stripe caches (size x 4 KiB x members,
/// summed over the arrays) at most a quarter of the `available` memory
/// unless `force_memory`. Each array once, however many targets reach it.
pub fn check(
    sys: &Path,
    targets: &[(PathBuf, (u64, u64))],
    tunables: MdTunables,
    available: Option<u64>,
    force_memory: bool,
) -> Result<Checked, UsageError> {
    let mut arrays: Vec<Array> = Vec::new();
    let asked = tunables.asked();
    let Some(&(option, attr, _)) = asked.first() else {
        return Ok(Checked { tunables, arrays });
    };
    if let Some(n) = tunables
        .stripe_cache_size
        .filter(|n| !(STRIPE_CACHE_MIN..=STRIPE_CACHE_MAX).contains(n))
    {
        return Err(UsageError(format!(
            "--stripe-cache-size {n}: md takes {STRIPE_CACHE_MIN} to {STRIPE_CACHE_MAX} stripe heads"
        )));
    }
    if let Some(n) = tunables.group_thread_cnt.filter(|&n| n > GROUP_THREAD_MAX) {
        return Err(UsageError(format!(
            "--group-thread-cnt {n}: md takes 0 to {GROUP_THREAD_MAX} threads per group"
        )));
    }
    let mut seen = HashSet::new();
    for (path, dev) in targets {
        let a = array_of(sys, path, *dev, option, attr).map_err(UsageError)?;
        if seen.insert(*dev) {
            arrays.push(a);
        }
    }
    if let Some(size) = tunables.stripe_cache_size {
        check_cache_memory(&arrays, size, available, force_memory)?;
    }
    Ok(Checked { tunables, arrays })
}

/// Refuses stripe caches above a quarter of the available memory (as the
/// I/O buffers are refused), unless `--force-memory`. Unknown available
/// memory refuses nothing.
fn check_cache_memory(
    arrays: &[Array],
    size: u64,
    available: Option<u64>,
    force: bool,
) -> Result<(), UsageError> {
    let members: u64 = arrays.iter().map(|a| a.raid_disks).sum();
    let need = size.saturating_mul(STRIPE_PAGE).saturating_mul(members);
    let Some(avail) = available else {
        return Ok(());
    };
    if need <= avail / 4 || force {
        return Ok(());
    }
    let on = match arrays {
        [a] => show_path(&a.target),
        _ => format!("{} arrays", arrays.len()),
    };
    Err(UsageError(format!(
        "--stripe-cache-size {size} on {on} takes {} ({size} x 4 KiB x {members} member devices), more than a quarter of the {} of memory available: give a smaller --stripe-cache-size, or pass --force-memory",
        fmt_bytes(need),
        fmt_bytes(avail)
    )))
}

impl Checked {
    /// The arrays the tunables go to.
    pub fn arrays(&self) -> &[Array] {
        &self.arrays
    }

    /// Sets every tunable asked on every array, each recorded first in the
    /// guard's state file (none in a dry run).
    pub fn apply(&self, guard: &mut KnobGuard, dry_run: bool) -> Result<()> {
        if dry_run {
            return Ok(());
        }
        for a in &self.arrays {
            for (option, attr, value) in self.tunables.asked() {
                guard
                    .set(&a.md_dir.join(attr), &value.to_string())
                    .map_err(|e| {
                        // A lock held by another run, or an interrupt while waiting, says so itself.
                        if e.downcast_ref::<UsageError>().is_some() || Interrupted::is(&e) {
                            return e;
                        }
                        UsageError(format!(
                            "{option} {value}: cannot set {attr} of {}: {e:#}{}",
                            show_path(&a.target),
                            crate::base::error::root_needed()
                        ))
                        .into()
                    })?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixture sysfs: md0 (9:0) of `level` over `disks` members, md1
    /// (9:1) raid5 over 4, loop3 (7:3), and dm-2 (253:2). Returns the root.
    fn fixture(t: &Path, level: &str, disks: u64) -> PathBuf {
        let root = fs::canonicalize(t).unwrap().join("sys");
        let dev = |name: &str, num: &str, md: Option<(&str, u64)>| {
            let d = root.join("devices/virtual/block").join(name);
            fs::create_dir_all(&d).unwrap();
            fs::write(d.join("dev"), format!("{num}\n")).unwrap();
            if let Some((level, disks)) = md {
                fs::create_dir_all(d.join("md")).unwrap();
                fs::write(d.join("md/level"), format!("{level}\n")).unwrap();
                fs::write(d.join("md/raid_disks"), format!("{disks}\n")).unwrap();
                fs::write(d.join("md/stripe_cache_size"), "256\n").unwrap();
                fs::write(d.join("md/group_thread_cnt"), "0\n").unwrap();
            }
            if name.starts_with("dm-") {
                fs::create_dir_all(d.join("dm")).unwrap();
            }
            fs::create_dir_all(root.join("dev/block")).unwrap();
            std::os::unix::fs::symlink(&d, root.join("dev/block").join(num)).unwrap();
            fs::create_dir_all(root.join("class/block")).unwrap();
            std::os::unix::fs::symlink(&d, root.join("class/block").join(name)).unwrap();
        };
        dev("md0", "9:0", Some((level, disks)));
        dev("md1", "9:1", Some(("raid5", 4)));
        dev("loop3", "7:3", None);
        dev("dm-2", "253:2", None);
        root
    }

    fn on(path: &str, dev: (u64, u64)) -> (PathBuf, (u64, u64)) {
        (PathBuf::from(path), dev)
    }

    const SCS: MdTunables = MdTunables {
        stripe_cache_size: Some(1024),
        group_thread_cnt: None,
    };

    #[test]
    fn a_target_that_is_no_parity_md_is_refused_in_one_line_naming_its_level() {
        let t = tempfile::tempdir().unwrap();
        let root = fixture(t.path(), "raid0", 4);
        let no = |target: (PathBuf, (u64, u64)), tun| {
            check(&root, &[target], tun, None, false).unwrap_err().0
        };
        assert_eq!(
            no(on("/dev/md0", (9, 0)), SCS),
            "--stripe-cache-size: /dev/md0 is md raid0; stripe_cache_size exists on raid4/5/6 only"
        );
        let gtc = MdTunables {
            stripe_cache_size: None,
            group_thread_cnt: Some(2),
        };
        assert_eq!(
            no(on("/dev/loop3", (7, 3)), gtc),
            "--group-thread-cnt: /dev/loop3 is not an md array (loop3); group_thread_cnt exists on md raid4/5/6 only"
        );
        let e = no(on("/dev/mapper/vg-r5", (253, 2)), SCS);
        assert!(
            e.starts_with(
                "--stripe-cache-size: /dev/mapper/vg-r5 is a device-mapper device (dm-2), not md"
            ),
            "{e}"
        );
        for e in [no(on("/dev/md0", (9, 0)), SCS), e] {
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn values_outside_mds_range_are_refused_before_the_targets_are_read() {
        let t = tempfile::tempdir().unwrap();
        let root = fixture(t.path(), "raid5", 4);
        let tgt = [on("/dev/md0", (9, 0))];
        let with = |scs, gtc| MdTunables {
            stripe_cache_size: scs,
            group_thread_cnt: gtc,
        };
        for n in [0, 16, 32769] {
            let e = check(&root, &tgt, with(Some(n), None), None, false).unwrap_err();
            assert_eq!(
                e.0,
                format!("--stripe-cache-size {n}: md takes 17 to 32768 stripe heads")
            );
        }
        let e = check(&root, &tgt, with(None, Some(8193)), None, false).unwrap_err();
        assert!(e.0.contains("md takes 0 to 8192"), "{}", e.0);
        for ok in [with(Some(17), Some(0)), with(Some(32768), Some(8192))] {
            check(&root, &tgt, ok, None, false).unwrap();
        }
    }

    #[test]
    fn a_stripe_cache_above_a_quarter_of_memory_is_refused_unless_forced() {
        let t = tempfile::tempdir().unwrap();
        let root = fixture(t.path(), "raid6", 6);
        // 4096 x 4 KiB x 6 members = 96 MiB; md1 is raid5 over 4: 64 MiB more.
        let tun = MdTunables {
            stripe_cache_size: Some(4096),
            group_thread_cnt: None,
        };
        let md0 = [on("/dev/md0", (9, 0)), on("/dev/md0p1-alias", (9, 0))];
        check(&root, &md0, tun, Some(384 << 20), false).unwrap();
        let e = check(&root, &md0, tun, Some((384 << 20) - 4), false).unwrap_err();
        assert!(
            e.0.starts_with("--stripe-cache-size 4096 on /dev/md0 takes 96.0 MiB (4096 x 4 KiB x 6 member devices), more than a quarter of the "),
            "{}",
            e.0
        );
        assert!(e.0.ends_with("or pass --force-memory"), "{}", e.0);
        check(&root, &md0, tun, Some(1 << 20), true).unwrap();
        let both = [on("/dev/md0", (9, 0)), on("/dev/md1", (9, 1))];
        let e = check(&root, &both, tun, Some(600 << 20), false).unwrap_err();
        assert!(e.0.contains("on 2 arrays takes 160.0 MiB"), "{}", e.0);
    }

    #[test]
    fn applied_tunables_are_recorded_first_and_put_back_when_the_guard_drops() {
        let t = tempfile::tempdir().unwrap();
        let root = fixture(t.path(), "raid5", 4);
        let state = t.path().join("state");
        let tun = MdTunables {
            stripe_cache_size: Some(4096),
            group_thread_cnt: Some(4),
        };
        let checked = check(&root, &[on("/dev/md0", (9, 0))], tun, None, false).unwrap();
        let md = root.join("devices/virtual/block/md0/md");
        let value = |a: &str| fs::read_to_string(md.join(a)).unwrap().trim().to_string();
        {
            let mut g = KnobGuard::new(state.clone()).with_sys_root(root.clone());
            checked.apply(&mut g, true).unwrap();
            assert!(g.changed().is_empty(), "a dry run changes nothing");
            checked.apply(&mut g, false).unwrap();
            assert_eq!(value("stripe_cache_size"), "4096");
            assert_eq!(value("group_thread_cnt"), "4");
            let olds: Vec<(String, String)> = g
                .changed()
                .iter()
                .map(|k| {
                    let name = k.path.file_name().unwrap().to_string_lossy().into_owned();
                    (name, k.old.clone())
                })
                .collect();
            assert_eq!(
                olds,
                [
                    ("stripe_cache_size".to_string(), "256".to_string()),
                    ("group_thread_cnt".to_string(), "0".to_string())
                ]
            );
        }
        assert_eq!(value("stripe_cache_size"), "256");
        assert_eq!(value("group_thread_cnt"), "0");
    }

    /// What `stripebench restore` does after a SIGKILL: the state file
    /// names the md attributes, and restore writes them back (they are in
    /// sysattr's list of settings it may write).
    #[test]
    fn a_killed_runs_tunables_are_put_back_by_restore() {
        let t = tempfile::tempdir().unwrap();
        let root = fixture(t.path(), "raid6", 5);
        let state = t.path().join("state");
        let tun = MdTunables {
            stripe_cache_size: Some(2048),
            group_thread_cnt: Some(2),
        };
        let checked = check(&root, &[on("/dev/md0", (9, 0))], tun, None, false).unwrap();
        let mut g = KnobGuard::new(state.clone()).with_sys_root(root.clone());
        checked.apply(&mut g, false).unwrap();
        let record: Vec<crate::device::knobs::Knob> = serde_json::from_slice(
            &fs::read(state.join(format!("knobs-{}.json", std::process::id()))).unwrap(),
        )
        .unwrap();
        assert_eq!(record.len(), 2);
        g.killed();
        let (lines, failed) = crate::device::knobs::restore_pending(&state, &root, true).unwrap();
        assert!(failed.is_empty(), "{failed:?}");
        assert_eq!(lines.len(), 2, "{lines:?}");
        let md = root.join("devices/virtual/block/md0/md");
        assert_eq!(
            fs::read_to_string(md.join("stripe_cache_size")).unwrap(),
            "256"
        );
        assert_eq!(
            fs::read_to_string(md.join("group_thread_cnt")).unwrap(),
            "0"
        );
    }
}
