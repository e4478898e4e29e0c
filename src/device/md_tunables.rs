//! md's tunables as run settings (raid4/5/6's `--stripe-cache-size N` and
//! `--group-thread-cnt N`, the resync's `--sync-speed-min`/`--sync-speed-max`
//! on any md level with redundancy, and the same as sweep parameters): each
//! target's array is checked (an md array of a level that has the setting,
//! the stripe cache's memory, the resync limits' order) before anything is
//! changed, then set through the knob guard, so
//! they are put back by every path that puts read-ahead back (the end of
//! the run, a signal, a panic, and `stripebench restore` after a SIGKILL).
//!
//! md names them `/sys/block/mdN/md/stripe_cache_size` (stripe heads, each
//! one page per member device) and `/sys/block/mdN/md/group_thread_cnt`
//! (worker threads per group of CPUs; 0: the array's one raid5d thread).
//! `md/sync_speed_min` and `md/sync_speed_max` are KiB/s per member device
//! (md's "K/sec"), or `system` for the host's `/proc/sys/dev/raid/speed_limit_*`;
//! md resyncs at least at min, and above min only while at most max (and,
//! when other I/O is on the array, only as fast as that leaves it).

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
/// What md takes for `sync_speed_min`/`_max` (kstrtouint, and 0 refused):
/// 1 to u32's largest; [`SYNC_SYSTEM`] stands for `system`.
pub const SYNC_SPEED_MAX: u64 = u32::MAX as u64;
/// The resync limit `system`: md's own 0 (the host's default in force).
pub const SYNC_SYSTEM: u64 = 0;
/// Bytes a stripe head holds per member device: one page (x86's 4 KiB).
const STRIPE_PAGE: u64 = 4096;

/// The levels with a stripe cache and raid5d's threads.
const PARITY: &[&str] = &["raid4", "raid5", "raid6"];
/// The levels that resync (every one with redundancy).
const REDUNDANT: &[&str] = &["raid1", "raid4", "raid5", "raid6", "raid10"];

/// The tunables asked for a run; `None`: left as they are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MdTunables {
    pub stripe_cache_size: Option<u64>,
    pub group_thread_cnt: Option<u64>,
    /// KiB/s, or [`SYNC_SYSTEM`].
    pub sync_speed_min: Option<u64>,
    pub sync_speed_max: Option<u64>,
}

/// One tunable asked: its option, its md attribute, the levels that have
/// it, and the value as md is given it.
struct Asked {
    option: &'static str,
    attr: &'static str,
    levels: &'static [&'static str],
    value: u64,
}

impl Asked {
    fn text(&self) -> String {
        if self.attr.starts_with("sync_speed") && self.value == SYNC_SYSTEM {
            "system".into()
        } else {
            self.value.to_string()
        }
    }
}

impl MdTunables {
    pub fn any(&self) -> bool {
        !self.asked().is_empty()
    }

    /// Each tunable asked.
    fn asked(&self) -> Vec<Asked> {
        [
            (
                "--stripe-cache-size",
                "stripe_cache_size",
                PARITY,
                self.stripe_cache_size,
            ),
            (
                "--group-thread-cnt",
                "group_thread_cnt",
                PARITY,
                self.group_thread_cnt,
            ),
            (
                "--sync-speed-min",
                "sync_speed_min",
                REDUNDANT,
                self.sync_speed_min,
            ),
            (
                "--sync-speed-max",
                "sync_speed_max",
                REDUNDANT,
                self.sync_speed_max,
            ),
        ]
        .into_iter()
        .filter_map(|(option, attr, levels, v)| {
            v.map(|value| Asked {
                option,
                attr,
                levels,
                value,
            })
        })
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
fn array_of(sys: &Path, target: &Path, dev: (u64, u64), asked: &Asked) -> Result<Array, String> {
    let (option, attr) = (asked.option, asked.attr);
    let on = if asked.levels == PARITY {
        "raid4/5/6"
    } else {
        "raid1/4/5/6/10"
    };
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
            "{option}: {} is {what}; {attr} exists on md {on} only",
            show_path(target)
        ));
    };
    if !asked.levels.contains(&level.as_str()) {
        let level = if level.is_empty() {
            "an inactive md array".to_string()
        } else {
            format!("md {level}")
        };
        return Err(format!(
            "{option}: {} is {}; {attr} exists on {on} only",
            show_path(target),
            crate::base::error::show_text(&level)
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
    if asked.is_empty() {
        return Ok(Checked { tunables, arrays });
    }
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
    check_sync_speeds(&tunables)?;
    let mut seen = HashSet::new();
    for (path, dev) in targets {
        let mut array = None;
        for a in &asked {
            array = Some(array_of(sys, path, *dev, a).map_err(UsageError)?);
        }
        if let Some(a) = array.filter(|_| seen.insert(*dev)) {
            check_against_limits(&a, &tunables)?;
            arrays.push(a);
        }
    }
    if let Some(size) = tunables.stripe_cache_size {
        check_cache_memory(&arrays, size, available, force_memory)?;
    }
    Ok(Checked { tunables, arrays })
}

/// The resync limits in md's range, and min at most max when both are given.
fn check_sync_speeds(t: &MdTunables) -> Result<(), UsageError> {
    for (option, v) in [
        ("--sync-speed-min", t.sync_speed_min),
        ("--sync-speed-max", t.sync_speed_max),
    ] {
        if let Some(n) = v.filter(|&n| n > SYNC_SPEED_MAX) {
            return Err(UsageError(format!(
                "{option} {n}: md takes 1 to {SYNC_SPEED_MAX} KiB/s, or system"
            )));
        }
    }
    if let (Some(min), Some(max)) = (t.sync_speed_min, t.sync_speed_max) {
        if min != SYNC_SYSTEM && max != SYNC_SYSTEM && min > max {
            return Err(UsageError(format!(
                "--sync-speed-min {min} is above --sync-speed-max {max}: md resyncs at least at min, so max would change nothing; give a min at most the max"
            )));
        }
    }
    Ok(())
}

/// A max below the array's own min (the one left in force) changes
/// nothing: md resyncs at least at min. Refused, saying what to give.
fn check_against_limits(a: &Array, t: &MdTunables) -> Result<(), UsageError> {
    let Some(max) = t.sync_speed_max.filter(|&m| m != SYNC_SYSTEM) else {
        return Ok(());
    };
    if t.sync_speed_min.is_some() {
        return Ok(());
    }
    let Some(min) = crate::device::topology::read_limit(&a.md_dir.join("sync_speed_min")) else {
        return Ok(());
    };
    if min.kb_per_sec > max {
        return Err(UsageError(format!(
            "--sync-speed-max {max}: {}'s sync_speed_min is {} KiB/s ({}), and md resyncs at least at min, so the max would change nothing; give --sync-speed-min too (such as --sync-speed-min 1)",
            show_path(&a.target),
            min.kb_per_sec,
            crate::base::error::show_text(&min.source)
        )));
    }
    Ok(())
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
            for asked in self.tunables.asked() {
                let (option, attr, value) = (asked.option, asked.attr, asked.text());
                guard.set(&a.md_dir.join(attr), &value).map_err(|e| {
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
                fs::write(d.join("md/sync_speed_min"), "1000 (system)\n").unwrap();
                fs::write(d.join("md/sync_speed_max"), "200000 (system)\n").unwrap();
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
        sync_speed_min: None,
        sync_speed_max: None,
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
            sync_speed_min: None,
            sync_speed_max: None,
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
            sync_speed_min: None,
            sync_speed_max: None,
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
            sync_speed_min: None,
            sync_speed_max: None,
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
            sync_speed_min: None,
            sync_speed_max: None,
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
            sync_speed_min: None,
            sync_speed_max: None,
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

    fn sync(min: Option<u64>, max: Option<u64>) -> MdTunables {
        MdTunables {
            sync_speed_min: min,
            sync_speed_max: max,
            ..MdTunables::default()
        }
    }

    #[test]
    fn resync_limits_go_to_any_level_with_redundancy_and_only_there() {
        let t = tempfile::tempdir().unwrap();
        let root = fixture(t.path(), "raid0", 4);
        let e = check(
            &root,
            &[on("/dev/md0", (9, 0))],
            sync(None, Some(5000)),
            None,
            false,
        )
        .unwrap_err()
        .0;
        assert_eq!(
            e,
            "--sync-speed-max: /dev/md0 is md raid0; sync_speed_max exists on raid1/4/5/6/10 only"
        );
        for level in ["raid1", "raid10", "raid6"] {
            let t = tempfile::tempdir().unwrap();
            let root = fixture(t.path(), level, 4);
            check(
                &root,
                &[on("/dev/md0", (9, 0))],
                sync(Some(1), Some(5000)),
                None,
                false,
            )
            .unwrap();
        }
        // The stripe cache stays raid4/5/6's, whatever comes with it.
        let t = tempfile::tempdir().unwrap();
        let root = fixture(t.path(), "raid1", 2);
        let both = MdTunables {
            stripe_cache_size: Some(256),
            ..sync(None, Some(5000))
        };
        let e = check(&root, &[on("/dev/md0", (9, 0))], both, None, false).unwrap_err();
        assert!(e.0.contains("exists on raid4/5/6 only"), "{}", e.0);
    }

    #[test]
    fn a_max_that_would_change_nothing_is_refused_saying_what_to_give() {
        let t = tempfile::tempdir().unwrap();
        let root = fixture(t.path(), "raid5", 4);
        let md0 = [on("/dev/md0", (9, 0))];
        let e = check(&root, &md0, sync(Some(6000), Some(5000)), None, false).unwrap_err();
        assert!(
            e.0.starts_with("--sync-speed-min 6000 is above --sync-speed-max 5000"),
            "{}",
            e.0
        );
        // The array's own min (1000, the system's) is above the max asked.
        let e = check(&root, &md0, sync(None, Some(500)), None, false).unwrap_err();
        assert_eq!(e.0, "--sync-speed-max 500: /dev/md0's sync_speed_min is 1000 KiB/s (system), and md resyncs at least at min, so the max would change nothing; give --sync-speed-min too (such as --sync-speed-min 1)");
        check(&root, &md0, sync(Some(1), Some(500)), None, false).unwrap();
        check(&root, &md0, sync(None, Some(SYNC_SYSTEM)), None, false).unwrap();
        let e = check(
            &root,
            &md0,
            sync(None, Some(SYNC_SPEED_MAX + 1)),
            None,
            false,
        )
        .unwrap_err();
        assert!(
            e.0.contains("md takes 1 to 4294967295 KiB/s, or system"),
            "{}",
            e.0
        );
    }

    #[test]
    fn resync_limits_are_set_and_put_back_as_md_takes_them() {
        let t = tempfile::tempdir().unwrap();
        let root = fixture(t.path(), "raid5", 4);
        let md = root.join("devices/virtual/block/md0/md");
        fs::write(md.join("sync_speed_min"), "5 (local)\n").unwrap();
        let checked = check(
            &root,
            &[on("/dev/md0", (9, 0))],
            sync(Some(SYNC_SYSTEM), Some(20000)),
            None,
            false,
        )
        .unwrap();
        let value = |a: &str| fs::read_to_string(md.join(a)).unwrap().trim().to_string();
        {
            let mut g = KnobGuard::new(t.path().join("state")).with_sys_root(root.clone());
            checked.apply(&mut g, false).unwrap();
            assert_eq!(value("sync_speed_min"), "system");
            assert_eq!(value("sync_speed_max"), "20000");
        }
        // md's "5 (local)" goes back as 5, "200000 (system)" as system.
        assert_eq!(value("sync_speed_min"), "5");
        assert_eq!(value("sync_speed_max"), "system");
    }
}
