//! Block-device counters from `/sys/dev/block/MAJ:MIN/stat`, read before and
//! after a run, so the device's own bytes stand beside the application's:
//! far fewer device bytes mean cache hits, far more mean read-ahead.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Bytes per sector in the stat file: always 512, whatever the device's block size.
const SECTOR: u64 = 512;

/// One reading of a stat file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DevStat {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    /// Milliseconds the device had I/O in flight (field 10).
    pub io_ticks_ms: u64,
}

impl DevStat {
    /// Parses the fields of `Documentation/block/stat.rst`.
    pub fn parse(text: &str) -> Option<DevStat> {
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|w| w.parse().ok())
            .collect::<Option<Vec<u64>>>()?;
        if f.len() < 11 {
            return None;
        }
        Some(DevStat {
            read_ios: f[0],
            read_merges: f[1],
            read_sectors: f[2],
            write_ios: f[4],
            write_merges: f[5],
            write_sectors: f[6],
            io_ticks_ms: f[9],
        })
    }

    pub fn read(path: &Path) -> Option<DevStat> {
        DevStat::parse(&fs::read_to_string(path).ok()?)
    }
}

/// The sysfs stat file of device `major:minor` under `sysfs` (normally `/sys`).
pub fn stat_path(sysfs: &Path, major: u64, minor: u64) -> PathBuf {
    sysfs.join(format!("dev/block/{major}:{minor}/stat"))
}

/// A device's counters over a span, next to the application's bytes in the same span.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceCounters {
    /// Kernel name of the device (`loop0`, `sda1`).
    pub name: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub ios: u64,
    /// Share of the span during which the device had I/O in flight.
    pub util_pct: f64,
    /// The span the counters cover: from just before the workers start to
    /// after the last I/O (ramp, window and any final fsync).
    pub span_seconds: f64,
    /// Bytes this run's workers read and wrote on the target in the same span.
    pub app_read_bytes: u64,
    pub app_write_bytes: u64,
    /// device read bytes ÷ application read bytes: ≪ 1 cache hits, ≫ 1 read-ahead.
    pub read_ratio: Option<f64>,
    pub write_ratio: Option<f64>,
    /// Other targets of this run sit on the same device, or on a related
    /// one (a partition and its disk, a volume and its member): its
    /// counters hold their I/O too.
    pub shared: bool,
    /// Bytes the device wrote from the window's opening to the end of the
    /// span (the window, the I/O past the deadline and the final fsync):
    /// what a buffered write's durable rate is computed from.
    pub window_write_bytes: Option<u64>,
    /// Whether the device keeps I/O statistics at all (`queue/iostats` is 1
    /// and its counters have ever moved: brd ram disks never count). When
    /// false, every count here is meaningless and the ratios are null.
    pub stats: bool,
    /// Bytes per completed request, as the device saw them: smaller than
    /// the application's block size means each I/O was split on the way.
    pub avg_read_request_bytes: Option<f64>,
    pub avg_write_request_bytes: Option<f64>,
    /// Requests the block layer merged with a neighbour before the device.
    pub read_merges: u64,
    pub write_merges: u64,
    /// A stacked device's leaf members (md, dm): each one's own counters
    /// over the same span, so that requests split on the way down show.
    /// Their `app_*` bytes and ratios are empty (the application sees only
    /// the volume).
    pub members: Vec<DeviceCounters>,
}

/// The leaf devices under a stacked device (`slaves/`, recursively), by
/// name and number; empty for a device that stacks on nothing.
pub fn leaves(sysfs: &Path, (major, minor): (u64, u64)) -> Vec<(String, (u64, u64))> {
    fn walk(sysfs: &Path, dir: &Path, out: &mut Vec<(String, (u64, u64))>, depth: u32) {
        let Ok(rd) = fs::read_dir(dir.join("slaves")) else {
            return;
        };
        let mut names: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for n in names {
            let d = sysfs.join("class/block").join(&n);
            let has_slaves = fs::read_dir(d.join("slaves")).is_ok_and(|mut r| r.next().is_some());
            if has_slaves && depth < 8 {
                walk(sysfs, &d, out, depth + 1);
            } else if let Some(dev) = fs::read_to_string(d.join("dev")).ok().and_then(|s| {
                let (a, b) = s.trim().split_once(':')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            }) {
                if !out.iter().any(|(_, x)| *x == dev) {
                    out.push((n, dev));
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(
        sysfs,
        &sysfs.join(format!("dev/block/{major}:{minor}")),
        &mut out,
        0,
    );
    out
}

/// The devices whose counters hold device `major:minor`'s I/O, or whose
/// I/O its counters hold: every device under it (its `slaves/`, at every
/// depth) and the whole disk of each partition among them and of itself.
/// Two targets of one run on related devices make each other's I/O look
/// like another process's on the device's counters.
pub fn related(sysfs: &Path, (major, minor): (u64, u64)) -> Vec<(u64, u64)> {
    fn dev_of(dir: &Path) -> Option<(u64, u64)> {
        let s = fs::read_to_string(dir.join("dev")).ok()?;
        let (a, b) = s.trim().split_once(':')?;
        Some((a.parse().ok()?, b.parse().ok()?))
    }
    fn walk(dir: &Path, out: &mut Vec<(u64, u64)>, depth: u32) {
        // A partition's whole disk is the directory above it.
        if dir.join("partition").is_file() {
            if let Some(d) = dir.parent().and_then(dev_of) {
                if !out.contains(&d) {
                    out.push(d);
                }
            }
        }
        let Ok(rd) = fs::read_dir(dir.join("slaves")) else {
            return;
        };
        for e in rd.flatten() {
            let Ok(below) = fs::canonicalize(e.path()) else {
                continue;
            };
            if let Some(d) = dev_of(&below) {
                if !out.contains(&d) {
                    out.push(d);
                }
            }
            if depth < 8 {
                walk(&below, out, depth + 1);
            }
        }
    }
    let mut out = Vec::new();
    if let Ok(dir) = fs::canonicalize(sysfs.join(format!("dev/block/{major}:{minor}"))) {
        walk(&dir, &mut out, 0);
    }
    out
}

/// Whether the device at `stat` (its sysfs stat file) keeps statistics:
/// `queue/iostats` is not 0 (a partition's queue is its disk's). A device
/// whose counters are all zero after I/O never counted (brd): see `finish`.
/// device-mapper devices are the exception: their `queue/iostats` reads 0
/// (6.1) while dm accounts every bio itself, so for them only the counters
/// having moved at all decides.
fn iostats_enabled(stat: &Path) -> bool {
    let Some(dir) = stat.parent() else {
        return true;
    };
    if dir.join("dm").is_dir() {
        return true;
    }
    [dir.join("queue/iostats"), dir.join("../queue/iostats")]
        .iter()
        .find_map(|p| fs::read_to_string(p).ok())
        .is_none_or(|v| v.trim() != "0")
}

/// A started measurement of one device.
#[derive(Debug, Clone)]
pub struct DevProbe {
    pub name: String,
    path: PathBuf,
    before: DevStat,
    at: Instant,
    /// The counters when the window opened.
    window: Option<DevStat>,
}

impl DevProbe {
    pub fn start(name: String, path: PathBuf) -> Option<DevProbe> {
        let before = DevStat::read(&path)?;
        Some(DevProbe {
            name,
            path,
            before,
            at: Instant::now(),
            window: None,
        })
    }

    /// Reads the counters as the window opens (with no ramp: the start).
    pub fn mark_window_open(&mut self) {
        self.window = DevStat::read(&self.path);
    }

    /// Reads the counters again and computes the deltas.
    pub fn finish(
        &self,
        app_read_bytes: u64,
        app_write_bytes: u64,
        shared: bool,
    ) -> Option<DeviceCounters> {
        let after = DevStat::read(&self.path)?;
        let span = self.at.elapsed().as_secs_f64();
        let d = |a: u64, b: u64| a.saturating_sub(b);
        let read_bytes = d(after.read_sectors, self.before.read_sectors) * SECTOR;
        let write_bytes = d(after.write_sectors, self.before.write_sectors) * SECTOR;
        let read_ios = d(after.read_ios, self.before.read_ios);
        let write_ios = d(after.write_ios, self.before.write_ios);
        let ticks = d(after.io_ticks_ms, self.before.io_ticks_ms) as f64 / 1e3;
        // A device that never counted shows all zeros even after this run's I/O.
        let stats = iostats_enabled(&self.path) && after != DevStat::default();
        let ratio = |dev: u64, app: u64| (stats && app > 0).then(|| dev as f64 / app as f64);
        let avg = |bytes: u64, ios: u64| (stats && ios > 0).then(|| bytes as f64 / ios as f64);
        Some(DeviceCounters {
            name: self.name.clone(),
            read_bytes,
            write_bytes,
            read_ios,
            write_ios,
            ios: read_ios + write_ios,
            util_pct: if span > 0.0 {
                (ticks / span * 100.0).min(100.0)
            } else {
                0.0
            },
            span_seconds: span,
            app_read_bytes,
            app_write_bytes,
            read_ratio: ratio(read_bytes, app_read_bytes),
            write_ratio: ratio(write_bytes, app_write_bytes),
            shared,
            stats,
            avg_read_request_bytes: avg(read_bytes, read_ios),
            avg_write_request_bytes: avg(write_bytes, write_ios),
            read_merges: d(after.read_merges, self.before.read_merges),
            write_merges: d(after.write_merges, self.before.write_merges),
            members: Vec::new(),
            window_write_bytes: self
                .window
                .map(|w| d(after.write_sectors, w.write_sectors) * SECTOR),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernel_format() {
        let s = "    4533     2486   761666     2516      406     3350   253320     1490        0     1288     4188     3005       37    37616      180        6        0\n";
        let d = DevStat::parse(s).unwrap();
        assert_eq!(d.read_ios, 4533);
        assert_eq!(d.read_sectors, 761666);
        assert_eq!(d.write_ios, 406);
        assert_eq!(d.write_sectors, 253320);
        assert_eq!(d.io_ticks_ms, 1288);
        assert!(DevStat::parse("1 2 3").is_none());
        assert!(DevStat::parse("a b c d e f g h i j k").is_none());
    }

    #[test]
    fn deltas_and_ratios_on_a_fixture() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("stat");
        fs::write(&p, "10 0 100 5 20 0 200 5 0 50 10\n").unwrap();
        let mut probe = DevProbe::start("fake0".into(), p.clone()).unwrap();
        fs::write(&p, "20 0 1000 5 30 0 300 5 0 55 10\n").unwrap();
        probe.mark_window_open();
        fs::write(&p, "30 0 2148 5 40 0 400 5 0 60 10\n").unwrap();
        let c = probe.finish(1024 * 1024, 0, false).unwrap();
        assert_eq!(c.write_bytes, 200 * 512);
        assert_eq!(c.window_write_bytes, Some(100 * 512));
        assert_eq!(c.read_bytes, 2048 * 512);
        assert_eq!(c.read_ios, 20);
        assert_eq!(c.read_ratio, Some(1.0));
        assert_eq!(c.write_ratio, None);
    }

    #[test]
    fn request_sizes_and_merges_come_from_the_counters() {
        let t = tempfile::tempdir().unwrap();
        let dev = t.path().join("loop9");
        fs::create_dir_all(dev.join("queue")).unwrap();
        fs::write(dev.join("queue/iostats"), "1\n").unwrap();
        let stat = dev.join("stat");
        // before: 10 reads of 100 sectors; after: +8 reads, +2048 sectors, +3 merges.
        fs::write(&stat, "10 1 100 5 0 0 0 0 0 50 10\n").unwrap();
        let p = DevProbe::start("loop9".into(), stat.clone()).unwrap();
        fs::write(&stat, "18 4 2148 5 0 0 0 0 0 60 10\n").unwrap();
        let c = p.finish(1 << 20, 0, false).unwrap();
        assert!(c.stats);
        assert_eq!(c.avg_read_request_bytes, Some(131072.0));
        assert_eq!(c.read_merges, 3);
        assert_eq!(c.avg_write_request_bytes, None, "no writes");
        assert_eq!(c.read_ratio, Some(1.0));
    }

    #[test]
    fn a_device_that_keeps_no_statistics_gives_no_ratio() {
        let t = tempfile::tempdir().unwrap();
        // brd: counters stay zero whatever is done.
        let brd = t.path().join("ram0");
        fs::create_dir_all(brd.join("queue")).unwrap();
        fs::write(brd.join("queue/iostats"), "1\n").unwrap();
        let stat = brd.join("stat");
        fs::write(&stat, "0 0 0 0 0 0 0 0 0 0 0\n").unwrap();
        let c = DevProbe::start("ram0".into(), stat)
            .unwrap()
            .finish(1 << 30, 0, false)
            .unwrap();
        assert!(!c.stats);
        assert_eq!(c.read_ratio, None, "never a ratio of 0.000");
        // iostats switched off: counters frozen at whatever they were.
        let off = t.path().join("loop3");
        fs::create_dir_all(off.join("queue")).unwrap();
        fs::write(off.join("queue/iostats"), "0\n").unwrap();
        let stat = off.join("stat");
        fs::write(&stat, "5 0 40 1 0 0 0 0 0 3 1\n").unwrap();
        let c = DevProbe::start("loop3".into(), stat)
            .unwrap()
            .finish(1 << 20, 0, false)
            .unwrap();
        assert!(!c.stats);
        assert_eq!((c.read_ratio, c.avg_read_request_bytes), (None, None));
    }

    #[test]
    fn a_dm_device_counts_although_its_queue_says_iostats_0() {
        // Seen in the lab (Debian 6.1): every dm device (dm-stripe, an LVM LV,
        // dm-delay) shows queue/iostats 0, yet its stat counts each request;
        // stripebench said "keeps no I/O statistics" for all of them.
        let t = tempfile::tempdir().unwrap();
        let dm = t.path().join("dm-1");
        fs::create_dir_all(dm.join("queue")).unwrap();
        fs::create_dir_all(dm.join("dm")).unwrap();
        fs::write(dm.join("queue/iostats"), "0\n").unwrap();
        let stat = dm.join("stat");
        fs::write(&stat, "0 0 0 0 0 0 0 0 0 0 0\n").unwrap();
        let p = DevProbe::start("dm-1".into(), stat.clone()).unwrap();
        fs::write(&stat, "116 0 237568 1924 0 0 0 0 0 1924 1924\n").unwrap();
        let c = p.finish(116 << 20, 0, false).unwrap();
        assert!(c.stats);
        assert_eq!(c.read_ratio, Some(1.0));
        assert_eq!(c.avg_read_request_bytes, Some((1 << 20) as f64));
        // A dm device whose counters never moved (a kernel where dm does
        // honour iostats 0) still gives no figures rather than a ratio of 0.
        fs::write(&stat, "0 0 0 0 0 0 0 0 0 0 0\n").unwrap();
        let c = DevProbe::start("dm-1".into(), stat)
            .unwrap()
            .finish(1 << 20, 0, false)
            .unwrap();
        assert!(!c.stats);
        assert_eq!(c.read_ratio, None);
    }

    #[test]
    fn related_devices_are_those_below_and_the_whole_disks_of_partitions() {
        // md0 over sda1 and loop1; sda1 is a partition of sda.
        let t = tempfile::tempdir().unwrap();
        let sys = t.path();
        let put = |dir: &Path, num: &str| {
            fs::create_dir_all(dir.join("slaves")).unwrap();
            fs::write(dir.join("dev"), format!("{num}\n")).unwrap();
            fs::create_dir_all(sys.join("dev/block")).unwrap();
            std::os::unix::fs::symlink(dir, sys.join("dev/block").join(num)).unwrap();
        };
        let sda = sys.join("devices/sda");
        put(&sda, "8:0");
        let sda1 = sda.join("sda1");
        put(&sda1, "8:1");
        fs::write(sda1.join("partition"), "1\n").unwrap();
        let loop1 = sys.join("devices/loop1");
        put(&loop1, "7:1");
        let md0 = sys.join("devices/md0");
        put(&md0, "9:0");
        std::os::unix::fs::symlink(&sda1, md0.join("slaves/sda1")).unwrap();
        std::os::unix::fs::symlink(&loop1, md0.join("slaves/loop1")).unwrap();
        let mut r = related(sys, (9, 0));
        r.sort();
        assert_eq!(r, [(7, 1), (8, 0), (8, 1)]);
        assert_eq!(related(sys, (8, 1)), [(8, 0)], "a partition: its disk");
        assert!(related(sys, (8, 0)).is_empty(), "a whole disk alone");
    }

    #[test]
    fn the_leaves_under_a_stacked_device_are_found_through_its_slaves() {
        // md0 over loop0 and dm-0, dm-0 over loop1: the leaves are loop0, loop1.
        let t = tempfile::tempdir().unwrap();
        let sys = t.path();
        let dev = |name: &str, num: &str, slaves: &[&str]| {
            let d = sys.join("devices").join(name);
            fs::create_dir_all(d.join("slaves")).unwrap();
            fs::write(d.join("dev"), format!("{num}\n")).unwrap();
            for s in slaves {
                fs::write(d.join("slaves").join(s), "").unwrap();
            }
            fs::create_dir_all(sys.join("class/block")).unwrap();
            std::os::unix::fs::symlink(&d, sys.join("class/block").join(name)).unwrap();
            fs::create_dir_all(sys.join("dev/block")).unwrap();
            std::os::unix::fs::symlink(&d, sys.join("dev/block").join(num)).unwrap();
        };
        dev("loop0", "7:0", &[]);
        dev("loop1", "7:1", &[]);
        dev("dm-0", "253:0", &["loop1"]);
        dev("md0", "9:0", &["dm-0", "loop0"]);
        let names: Vec<String> = leaves(sys, (9, 0)).into_iter().map(|l| l.0).collect();
        assert_eq!(names, ["loop1", "loop0"]);
        assert!(leaves(sys, (7, 0)).is_empty(), "a plain device has none");
    }
}
