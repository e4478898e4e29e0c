//! An md array's resync (recovery, resync, check, repair, reshape) over a
//! run's window: how far it had got when the window opened and when the
//! run ended, read from `/proc/mdstat`'s progress line (`mdstat`).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::device::mdstat::{parse_mdstat, read_mdstat, Progress};
use crate::device::topology::SpeedLimit;

/// One array's resync over a run: where it stood when the window opened and
/// when the run ended, and the limits md held it to.
#[derive(Debug, Clone, PartialEq)]
pub struct ResyncWindow {
    /// The array's kernel name (`md0`), as sysfs gives it.
    pub array: String,
    pub action: String,
    /// Bytes done per member device at the window's opening and the run's end.
    pub done_start_bytes: u64,
    pub done_end_bytes: u64,
    pub total_bytes: u64,
    /// Between the two readings.
    pub seconds: f64,
    /// The resync ended before the run did: `done_end_bytes` is its total,
    /// reached at some moment in between.
    pub finished: bool,
    /// `md/sync_speed_min` and `_max` when the window opened, KB/s.
    pub speed_min: Option<SpeedLimit>,
    pub speed_max: Option<SpeedLimit>,
}

/// The arrays at or under a run's targets that resync when its window opens.
#[derive(Debug, Default)]
pub struct ResyncProbe {
    proc: PathBuf,
    arrays: Vec<ArrayProbe>,
}

/// One array: its name, its `md/` directory, and what was read at the
/// window's opening (None: it ran no resync then).
#[derive(Debug)]
struct ArrayProbe {
    name: String,
    md: PathBuf,
    at: Option<(Progress, Instant)>,
}

impl ResyncProbe {
    /// The md arrays at or under the devices `devs` (each once).
    pub fn new(sys: &Path, proc: &Path, devs: &[(u64, u64)]) -> ResyncProbe {
        let mut arrays: Vec<ArrayProbe> = Vec::new();
        for &(a, b) in devs {
            let Ok(dir) = fs::canonicalize(sys.join(format!("dev/block/{a}:{b}"))) else {
                continue;
            };
            let mut found = Vec::new();
            md_dirs(&dir, &mut found, 0);
            for (name, md) in found {
                if arrays.iter().all(|a| a.name != name) {
                    arrays.push(ArrayProbe { name, md, at: None });
                }
            }
        }
        ResyncProbe {
            proc: proc.to_path_buf(),
            arrays,
        }
    }

    /// Reads each array's progress as the window opens.
    pub fn mark_window_open(&mut self) {
        if self.arrays.is_empty() {
            return;
        }
        let text = read_mdstat(&self.proc).unwrap_or_default();
        let now = Instant::now();
        for a in &mut self.arrays {
            a.at = parse_mdstat(&text, &a.name).map(|p| (p, now));
        }
    }

    /// Each array that resynced when the window opened, read again now.
    pub fn finish(&self) -> Vec<ResyncWindow> {
        if self.arrays.iter().all(|a| a.at.is_none()) {
            return Vec::new();
        }
        let text = read_mdstat(&self.proc).unwrap_or_default();
        let now = Instant::now();
        self.arrays
            .iter()
            .filter_map(|ArrayProbe { name, md, at }| {
                let (start, when) = at.as_ref()?;
                let end = parse_mdstat(&text, name).filter(|p| p.action == start.action);
                let limit = |f: &str| crate::device::topology::read_limit(&md.join(f));
                Some(ResyncWindow {
                    array: name.clone(),
                    action: start.action.clone(),
                    done_start_bytes: start.done_kib * 1024,
                    done_end_bytes: end.as_ref().map_or(start.total_kib, |e| e.done_kib) * 1024,
                    total_bytes: start.total_kib * 1024,
                    seconds: now.duration_since(*when).as_secs_f64(),
                    finished: end.is_none(),
                    speed_min: limit("sync_speed_min"),
                    speed_max: limit("sync_speed_max"),
                })
            })
            .collect()
    }
}

/// The md arrays at `dir` (a block device's sysfs directory) and under it
/// (its `slaves/`, at most 8 deep), by kernel name and `md/` directory.
fn md_dirs(dir: &Path, out: &mut Vec<(String, PathBuf)>, depth: u32) {
    let md = dir.join("md");
    if md.join("level").is_file() {
        if let Some(n) = dir.file_name() {
            out.push((n.to_string_lossy().into_owned(), md));
        }
    }
    if depth >= 8 {
        return;
    }
    let Ok(rd) = fs::read_dir(dir.join("slaves")) else {
        return;
    };
    for e in rd.flatten() {
        if let Ok(below) = fs::canonicalize(e.path()) {
            md_dirs(&below, out, depth + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::device::mdstat::MDSTAT;

    #[test]
    fn arrays_at_and_under_a_device_are_found_once_each() {
        let t = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(t.path()).unwrap();
        let dev = |name: &str, num: &str, md: bool| {
            let d = root.join("devices/virtual/block").join(name);
            fs::create_dir_all(d.join("slaves")).unwrap();
            fs::write(d.join("dev"), format!("{num}\n")).unwrap();
            if md {
                fs::create_dir_all(d.join("md")).unwrap();
                fs::write(d.join("md/level"), "raid5\n").unwrap();
                fs::write(d.join("md/sync_speed_max"), "2000 (local)\n").unwrap();
            }
            fs::create_dir_all(root.join("dev/block")).unwrap();
            std::os::unix::fs::symlink(&d, root.join("dev/block").join(num)).unwrap();
            d
        };
        let dm = dev("dm-0", "253:0", false);
        let md0 = dev("md0", "9:0", true);
        dev("loop1", "7:1", false);
        std::os::unix::fs::symlink(&md0, dm.join("slaves/md0")).unwrap();
        let proc = root.join("proc");
        fs::create_dir_all(&proc).unwrap();
        fs::write(proc.join("mdstat"), MDSTAT).unwrap();
        let mut p = ResyncProbe::new(&root, &proc, &[(253, 0), (9, 0), (7, 1)]);
        assert_eq!(p.arrays.len(), 1, "{:?}", p.arrays);
        p.mark_window_open();
        // The recovery ends before the run does: md0 has no progress line.
        fs::write(proc.join("mdstat"), MDSTAT.replace("recovery", "idle")).unwrap();
        let w = p.finish();
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].array, "md0");
        assert_eq!(w[0].done_start_bytes, 8192 * 1024);
        assert_eq!(w[0].done_end_bytes, 64512 * 1024);
        assert!(w[0].finished);
        assert_eq!(w[0].speed_max.as_ref().map(|l| l.kb_per_sec), Some(2000));
    }
}
