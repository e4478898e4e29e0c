//! An md array's resync (recovery, resync, check, repair, reshape) over a
//! run's window: how far it had got when the window opened and when the
//! run ended, read from `/proc/mdstat`'s progress line.
//!
//! Not from `md/sync_completed`: md moves that on only every sixteenth of
//! the array or every few minutes (seen in the lab: "16144 / 129024" for
//! four seconds while /proc/mdstat's "(2176/64512)" went to "(8192/64512)"),
//! so over a window of seconds it reads as no progress at all. The
//! progress line counts the blocks done as the resync does them.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::device::topology::SpeedLimit;

/// The most of /proc/mdstat read: about 300 bytes an array, so thousands of
/// arrays fit; a larger one is cut there (an array past it is not seen).
const MDSTAT_MAX: u64 = 4 << 20;

/// An array's resync as /proc/mdstat shows it at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// `recovery`, `resync`, `check`, `repair` or `reshape`.
    pub action: String,
    /// KiB done and in all, per member device (md's 1 KiB blocks).
    pub done_kib: u64,
    pub total_kib: u64,
}

/// The progress of array `name` (a kernel name: `md0`) in /proc/mdstat's
/// `text`: its block is its `name : ...` line and the indented lines
/// after it. None when it runs none (or waits: `resync=DELAYED`).
pub fn parse_mdstat(text: &str, name: &str) -> Option<Progress> {
    let mut lines = text.lines();
    lines.find(|l| {
        l.split_once(" : ")
            .is_some_and(|(n, _)| n.trim_end() == name)
    })?;
    for l in lines.take_while(|l| l.starts_with(char::is_whitespace) && !l.trim().is_empty()) {
        if let Some(p) = progress_of(l) {
            return Some(p);
        }
    }
    None
}

/// A progress line: `[==>....]  recovery = 12.5% (8192/64512) finish=...`.
fn progress_of(line: &str) -> Option<Progress> {
    let (before, after) = line.split_once(" = ")?;
    let action = before.split_whitespace().last()?;
    if !matches!(
        action,
        "recovery" | "resync" | "check" | "repair" | "reshape"
    ) {
        return None;
    }
    let inner = after.split_once('(')?.1.split_once(')')?.0;
    let (done, total) = inner.split_once('/')?;
    let done_kib = done.trim().parse().ok()?;
    let total_kib: u64 = total.trim().parse().ok()?;
    (total_kib > 0).then(|| Progress {
        action: action.to_string(),
        done_kib,
        total_kib,
    })
}

/// /proc/mdstat under `proc`, at most [`MDSTAT_MAX`] bytes of it.
fn read_mdstat(proc: &Path) -> Option<String> {
    let mut s = String::new();
    let f = fs::File::open(proc.join("mdstat")).ok()?;
    let mut bytes = Vec::new();
    f.take(MDSTAT_MAX).read_to_end(&mut bytes).ok()?;
    s.push_str(&String::from_utf8_lossy(&bytes));
    Some(s)
}

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

    /// /proc/mdstat as the lab's kernel (6.1) wrote it, a RAID5 of 4
    /// recovering member 1, beside a clean RAID1 and a delayed resync.
    const MDSTAT: &str = "Personalities : [raid6] [raid5] [raid4] [raid1]
md10 : active raid1 loop5[1] loop4[0]
      65472 blocks super 1.2 [2/2] [UU]
      resync=DELAYED

md0 : active raid5 loop1[4] loop3[3] loop2[2] loop0[0]
      193536 blocks super 1.2 level 5, 64k chunk, algorithm 2 [4/3] [U_UU]
      [==>..................]  recovery = 12.5% (8192/64512) finish=0.4min speed=2048K/sec
      
md1 : active raid1 loop7[1] loop6[0]
      65472 blocks super 1.2 [2/2] [UU]
      
unused devices: <none>
";

    #[test]
    fn the_progress_line_of_the_named_array_is_read_and_no_other() {
        assert_eq!(
            parse_mdstat(MDSTAT, "md0"),
            Some(Progress {
                action: "recovery".into(),
                done_kib: 8192,
                total_kib: 64512
            })
        );
        // md1 is clean, md10 waits (DELAYED): neither resyncs now.
        assert_eq!(parse_mdstat(MDSTAT, "md1"), None);
        assert_eq!(parse_mdstat(MDSTAT, "md10"), None);
        // "md" is no array: a prefix of a name is not the name.
        assert_eq!(parse_mdstat(MDSTAT, "md"), None);
        assert_eq!(parse_mdstat(MDSTAT, "md2"), None);
    }

    #[test]
    fn each_action_is_read_and_a_mangled_line_is_none() {
        for action in ["resync", "check", "repair", "reshape"] {
            let t = format!("md3 : active raid6 a[0]\n      [>...]  {action} =  0.1% (5/100) finish=1min speed=1K/sec\n");
            assert_eq!(parse_mdstat(&t, "md3").unwrap().action, action);
        }
        for bad in [
            "md3 : active\n      [>..]  recovery = 1% (x/100)\n",
            "md3 : active\n      [>..]  recovery = 1% (5/0)\n",
            "md3 : active\n      [>..]  rebuild = 1% (5/100)\n",
            "md3 : active\n      [>..]  recovery = 1% 5/100\n",
            "md3 : active\n",
        ] {
            assert_eq!(parse_mdstat(bad, "md3"), None, "{bad}");
        }
    }

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
