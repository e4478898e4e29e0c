//! What `advise` reads of a volume's stack before it measures anything:
//! for every device of the stack (the volume, each layer, each member and
//! leaf) the sysfs attributes that make an array slow when they are wrong
//! or differ between members: read-ahead, request limits, the scheduler
//! and its queue, the write cache and writeback throttling, the model and
//! firmware, the NUMA node, a partition's start, and for md arrays their
//! state (degraded, resyncing) and parity tunables.
//!
//! Only reads, through the host's roots (`base::host::Host`), so every
//! check is tested on fixture trees. What a device does not expose reads
//! as unknown (`None`), never as a value.

use std::fs;
use std::path::Path;

use crate::base::host::Host;
use crate::device::topology::{Device, Topology};

/// One device's attributes, as sysfs shows them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceFacts {
    /// Kernel name (`md0`, `loop1`, `sdb1`).
    pub name: String,
    /// `disk`, `partition`, `loop`, `md`, `dm` (the topology's kind).
    pub kind: String,
    /// For a partition: its disk (whose queue it shares).
    pub parent: Option<String>,
    pub read_ahead_kb: Option<u64>,
    pub max_sectors_kb: Option<u64>,
    pub max_hw_sectors_kb: Option<u64>,
    pub max_segments: Option<u64>,
    /// The active scheduler (`[mq-deadline]` of the list), and the list.
    pub scheduler: Option<String>,
    pub schedulers: Vec<String>,
    pub nr_requests: Option<u64>,
    /// `write back` or `write through`.
    pub write_cache: Option<String>,
    pub wbt_lat_usec: Option<i64>,
    pub rotational: Option<bool>,
    pub model: Option<String>,
    pub firmware: Option<String>,
    pub numa_node: Option<i64>,
    /// The CPUs local to its controller (`device/local_cpulist`).
    pub local_cpulist: Option<String>,
    /// The PCI function it hangs off (`0000:00:1f.2`), from its device's
    /// path in sysfs: the controller; `None` for a virtual device.
    pub controller: Option<String>,
    /// A partition's first sector (512-byte units), `start`.
    pub start_sectors: Option<u64>,
    /// `alignment_offset`, bytes.
    pub alignment_offset: Option<u64>,
    pub md: Option<MdFacts>,
    /// A dm device's `linear` segments: where each maps from on its member
    /// (the member's kernel name, bytes), from the dm table (an LVM LV's
    /// offsets include its PV's pe_start).
    pub dm_linear: Vec<(String, u64)>,
    /// A dm-crypt device's cipher and optional flags, from the dm table
    /// (never its key).
    pub dm_crypt: Option<CryptFacts>,
}

/// A dm-crypt table's cipher and optional flags (`no_read_workqueue`,
/// `no_write_workqueue`, `same_cpu_crypt`, ...), as `dmsetup table` gives
/// them: `crypt CIPHER KEY IV_OFFSET DEV OFFSET [N FLAG...]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CryptFacts {
    pub cipher: String,
    pub flags: Vec<String>,
}

/// An md array's state and tunables (`md/`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MdFacts {
    /// Members missing (`md/degraded`; absent for raid0).
    pub degraded: Option<u64>,
    /// `idle`, `resync`, `recover`, `check`, `repair`, `frozen`, ...
    pub sync_action: Option<String>,
    /// `md/sync_completed`: "done / total" sectors, or "none".
    pub sync_completed: Option<String>,
    pub array_state: Option<String>,
    pub stripe_cache_size: Option<u64>,
    pub group_thread_cnt: Option<u64>,
    /// Where each member's data begins (`dev-X/offset`), bytes, by member name.
    pub data_offsets: Vec<(String, u64)>,
}

/// Every device of a volume's stack, the volume first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Survey {
    pub devices: Vec<DeviceFacts>,
    /// The stripe hints of the file system on the volume, when it holds
    /// one stripebench reads (read from the device by the caller:
    /// `device::fs_hints`).
    pub fs_hints: Option<crate::device::fs_hints::FsHints>,
    /// The host's NUMA nodes and their CPUs (`/sys/devices/system/node/
    /// nodeN/cpulist`), by node number; empty when sysfs shows none.
    pub numa_nodes: Vec<(i64, String)>,
    /// The sysfs root the facts were read under (`/sys` on the running
    /// system), as the findings' evidence and fixes name it.
    pub sys: String,
    /// The stripe members (by path) by the host adapter they are behind
    /// (`device::paths`).
    pub paths: crate::device::paths::PathGroups,
}

impl Survey {
    /// Reads every device of `topo` once (a device reached twice, as a
    /// shared leaf, is read once); `dm_table` is `dmsetup table`'s output.
    pub fn read(host: &Host, topo: &Topology, dm_table: Option<&str>) -> Survey {
        let mut devices: Vec<DeviceFacts> = Vec::new();
        let mut walk = vec![&topo.root];
        while let Some(d) = walk.pop() {
            if !d.name.starts_with("btrfs:") && devices.iter().all(|f| f.name != d.name) {
                let mut f = read_device(host, d);
                if let (Some(dm), Some(t)) = (&d.dm, dm_table) {
                    f.dm_linear = linear_offsets(t, &dm.name, d);
                    f.dm_crypt = crypt_facts(t, &dm.name);
                }
                devices.push(f);
            }
            walk.extend(d.members.iter().rev());
        }
        Survey {
            devices,
            fs_hints: None,
            numa_nodes: numa_nodes(host),
            sys: host.sys.display().to_string(),
            paths: crate::device::paths::group_stacked(host, &stacked(topo)),
        }
    }

    /// The facts of the device the kernel calls `name`.
    pub fn get(&self, name: &str) -> Option<&DeviceFacts> {
        self.devices.iter().find(|d| d.name == name)
    }
}

/// The stripe members, each as (its path, the kernel names of its leaves).
pub fn stacked(topo: &Topology) -> Vec<(String, Vec<String>)> {
    topo.stripe_members()
        .iter()
        .map(|d| {
            (
                d.path.clone(),
                d.leaves().iter().map(|l| l.name.clone()).collect(),
            )
        })
        .collect()
}

/// The PCI function a device hangs off: the last PCI address
/// (`DDDD:BB:DD.F`) in its sysfs path, links resolved.
fn controller(device: &Path) -> Option<String> {
    let real = fs::canonicalize(device).ok()?;
    real.components()
        .rev()
        .filter_map(|c| c.as_os_str().to_str())
        .find(|c| crate::device::paths::is_pci_address(c))
        .map(str::to_string)
}

/// The host's NUMA nodes with their CPU lists, by number.
fn numa_nodes(host: &Host) -> Vec<(i64, String)> {
    let Ok(rd) = fs::read_dir(host.sys.join("devices/system/node")) else {
        return Vec::new();
    };
    let mut nodes: Vec<(i64, String)> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n: i64 = name.strip_prefix("node")?.parse().ok()?;
            Some((n, read_trim(&e.path().join("cpulist"))?))
        })
        .collect();
    nodes.sort();
    nodes
}

/// The `linear` segments of dm device `dm_name` in a `dmsetup table`
/// output (`name: start length linear MAJ:MIN OFFSET`): each member it maps
/// from (by its numbers among `d`'s members) and the offset, bytes.
fn linear_offsets(table: &str, dm_name: &str, d: &Device) -> Vec<(String, u64)> {
    table
        .lines()
        .filter_map(|l| {
            let (n, rest) = l.split_once(':')?;
            if n.trim() != dm_name {
                return None;
            }
            let f: Vec<&str> = rest.split_whitespace().collect();
            if f.get(2) != Some(&"linear") {
                return None;
            }
            let (dev, off) = (f.get(3)?, f.get(4)?.parse::<u64>().ok()?);
            let m = d.members.iter().find(|m| m.dev == *dev)?;
            Some((m.name.clone(), off * 512))
        })
        .collect()
}

/// The first crypt segment of dm device `dm_name` in `table`: its cipher
/// and flags (a flag's own arguments, `sector_size:4096`, kept as given).
/// The key is skipped, whatever dmsetup showed of it.
fn crypt_facts(table: &str, dm_name: &str) -> Option<CryptFacts> {
    table.lines().find_map(|l| {
        let (n, rest) = l.split_once(':')?;
        if n.trim() != dm_name {
            return None;
        }
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.get(2) != Some(&"crypt") {
            return None;
        }
        let count: usize = f.get(8).and_then(|c| c.parse().ok()).unwrap_or(0);
        Some(CryptFacts {
            cipher: f.get(3)?.to_string(),
            flags: f
                .iter()
                .skip(9)
                .take(count.min(64))
                .map(|s| s.to_string())
                .collect(),
        })
    })
}

fn read_trim(p: &Path) -> Option<String> {
    fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn read_num<T: std::str::FromStr>(p: &Path) -> Option<T> {
    read_trim(p)?.parse().ok()
}

/// One device's facts: its own directory, and its queue (a partition's is
/// its disk's).
fn read_device(host: &Host, d: &Device) -> DeviceFacts {
    let dir = host.class_block().join(&d.name);
    let disk = d
        .parent
        .as_ref()
        .map_or(dir.clone(), |p| host.class_block().join(p));
    let q = disk.join("queue");
    let sched_line = read_trim(&q.join("scheduler"));
    let schedulers: Vec<String> = sched_line
        .as_deref()
        .map(|s| {
            s.split_whitespace()
                .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
                .collect()
        })
        .unwrap_or_default();
    let scheduler = sched_line.as_deref().and_then(|s| {
        s.split_whitespace()
            .find(|w| w.starts_with('['))
            .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
    });
    let dev = disk.join("device");
    let md = (d.kind == "md").then(|| {
        let m = dir.join("md");
        let data_offsets = d
            .members
            .iter()
            .filter_map(|mem| {
                let o: u64 = read_num(&m.join(format!("dev-{}/offset", mem.name)))?;
                Some((mem.name.clone(), o * 512))
            })
            .collect();
        MdFacts {
            degraded: read_num(&m.join("degraded")),
            sync_action: read_trim(&m.join("sync_action")),
            // /proc/mdstat's live progress first: md/sync_completed moves
            // only every sixteenth of the array.
            sync_completed: crate::device::mdstat::progress(&host.proc, &d.name)
                .map(|p| format!("{} / {}", p.done_kib * 2, p.total_kib * 2))
                .or_else(|| read_trim(&m.join("sync_completed"))),
            array_state: read_trim(&m.join("array_state")),
            stripe_cache_size: read_num(&m.join("stripe_cache_size")),
            group_thread_cnt: read_num(&m.join("group_thread_cnt")),
            data_offsets,
        }
    });
    DeviceFacts {
        name: d.name.clone(),
        kind: d.kind.clone(),
        parent: d.parent.clone(),
        read_ahead_kb: read_num(&q.join("read_ahead_kb")),
        max_sectors_kb: read_num(&q.join("max_sectors_kb")),
        max_hw_sectors_kb: read_num(&q.join("max_hw_sectors_kb")),
        max_segments: read_num(&q.join("max_segments")),
        scheduler,
        schedulers,
        nr_requests: read_num(&q.join("nr_requests")),
        write_cache: read_trim(&q.join("write_cache")),
        wbt_lat_usec: read_num(&q.join("wbt_lat_usec")),
        rotational: read_num::<u8>(&q.join("rotational")).map(|r| r == 1),
        model: read_trim(&dev.join("model")),
        firmware: read_trim(&dev.join("firmware_rev")).or_else(|| read_trim(&dev.join("rev"))),
        numa_node: read_num(&dev.join("numa_node")),
        local_cpulist: read_trim(&dev.join("local_cpulist"))
            .or_else(|| read_trim(&dev.join("device/local_cpulist"))),
        controller: controller(&dev),
        start_sectors: d.parent.as_ref().and_then(|_| read_num(&dir.join("start"))),
        alignment_offset: read_num(&dir.join("alignment_offset")),
        md,
        dm_linear: Vec::new(),
        dm_crypt: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_controller_is_the_last_pci_function_on_the_devices_path() {
        let t = tempfile::tempdir().unwrap();
        let real = t
            .path()
            .join("devices/pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0");
        fs::create_dir_all(&real).unwrap();
        let link = t.path().join("device");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(controller(&link).as_deref(), Some("0000:00:1f.2"));
        let virt = t.path().join("devices/virtual/block/loop0");
        fs::create_dir_all(&virt).unwrap();
        assert_eq!(controller(&virt), None);
        assert!(
            crate::device::paths::is_pci_address("0000:3b:00.0")
                && !crate::device::paths::is_pci_address("pci0000:00")
        );
    }
    use crate::device::topology::{self, Sources};
    use std::os::unix::fs::symlink;

    /// A block device `name` (numbers `dev`) in a fixture tree, with
    /// `queue/` attributes.
    fn block(sys: &Path, name: &str, dev: &str, queue: &[(&str, &str)]) -> std::path::PathBuf {
        let d = sys.join("devices/virtual/block").join(name);
        for sub in ["holders", "slaves", "queue"] {
            fs::create_dir_all(d.join(sub)).unwrap();
        }
        fs::write(d.join("dev"), dev).unwrap();
        fs::write(d.join("size"), "2097152").unwrap();
        for (f, v) in queue {
            fs::write(d.join("queue").join(f), format!("{v}\n")).unwrap();
        }
        symlink(&d, sys.join("class/block").join(name)).unwrap();
        symlink(&d, sys.join("dev/block").join(dev)).unwrap();
        d
    }

    #[test]
    fn a_linear_tables_offset_is_read_for_the_member_it_maps_from() {
        let md = Device {
            name: "md0".into(),
            dev: "9:0".into(),
            path: "/dev/md0".into(),
            kind: "md".into(),
            parent: None,
            md: None,
            dm: None,
            btrfs: None,
            leaf: None,
            queue: None,
            members: Vec::new(),
            geometry: None,
        };
        let lv = Device {
            name: "dm-0".into(),
            dev: "253:0".into(),
            members: vec![md.clone()],
            ..md.clone()
        };
        let table = "vg-lv: 0 409600 linear 9:0 2432\nother: 0 8 linear 9:0 0\nvg-lv: 409600 8 striped 2 128 9:0 0 9:1 0\n";
        assert_eq!(
            linear_offsets(table, "vg-lv", &lv),
            vec![("md0".to_string(), 2432 * 512)]
        );
        assert!(linear_offsets(table, "absent", &lv).is_empty());
    }

    #[test]
    fn reads_every_layer_and_member_of_an_md_array() {
        let t = tempfile::tempdir().unwrap();
        let sys = t.path().join("sys");
        for d in ["class/block", "dev/block", "devices/virtual/block"] {
            fs::create_dir_all(sys.join(d)).unwrap();
        }
        let q = |sched: &'static str, max: &'static str| {
            vec![
                ("scheduler", sched),
                ("max_sectors_kb", max),
                ("max_hw_sectors_kb", "1280"),
                ("nr_requests", "128"),
                ("write_cache", "write back"),
                ("wbt_lat_usec", "75000"),
                ("rotational", "0"),
                ("read_ahead_kb", "128"),
            ]
        };
        block(&sys, "loop0", "7:0", &q("[none] mq-deadline", "1280"));
        block(&sys, "loop1", "7:1", &q("none [mq-deadline]", "32"));
        let md = block(&sys, "md0", "9:0", &[("read_ahead_kb", "0")]);
        let m = md.join("md");
        fs::create_dir_all(&m).unwrap();
        for (f, v) in [
            ("level", "raid5"),
            ("raid_disks", "2"),
            ("chunk_size", "65536"),
            ("array_state", "clean"),
            ("degraded", "0"),
            ("sync_action", "idle"),
            ("stripe_cache_size", "17"),
            ("group_thread_cnt", "0"),
        ] {
            fs::write(m.join(f), format!("{v}\n")).unwrap();
        }
        for (i, l) in ["loop0", "loop1"].iter().enumerate() {
            fs::create_dir_all(m.join(format!("dev-{l}"))).unwrap();
            fs::write(m.join(format!("dev-{l}/offset")), "2048\n").unwrap();
            symlink(format!("dev-{l}"), m.join(format!("rd{i}"))).unwrap();
            symlink(
                sys.join("devices/virtual/block").join(l),
                md.join("slaves").join(l),
            )
            .unwrap();
        }
        let src = Sources {
            host: Host::fixture(t.path()),
            dm_table: None,
        };
        let topo = topology::of_kernel_name("md0", &src).unwrap();
        let s = Survey::read(&src.host, &topo, None);
        let names: Vec<&str> = s.devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, vec!["md0", "loop0", "loop1"]);
        let md0 = s.get("md0").unwrap();
        assert_eq!(md0.read_ahead_kb, Some(0));
        let mdf = md0.md.as_ref().unwrap();
        assert_eq!(mdf.stripe_cache_size, Some(17));
        assert_eq!(mdf.sync_action.as_deref(), Some("idle"));
        assert_eq!(
            mdf.data_offsets,
            vec![
                ("loop0".to_string(), 1 << 20),
                ("loop1".to_string(), 1 << 20)
            ]
        );
        let l1 = s.get("loop1").unwrap();
        assert_eq!(l1.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(l1.schedulers, vec!["none", "mq-deadline"]);
        assert_eq!(l1.max_sectors_kb, Some(32));
        assert_eq!(l1.write_cache.as_deref(), Some("write back"));
        assert_eq!(l1.wbt_lat_usec, Some(75000));
        // What a loop device has no file for reads as unknown.
        assert_eq!(
            (l1.model.clone(), l1.numa_node, l1.start_sectors),
            (None, None, None)
        );
    }

    #[test]
    fn a_crypt_table_gives_its_cipher_and_flags_and_never_its_key() {
        let t = "data: 0 190464 crypt aes-xts-plain64 :64:logon:cryptsetup:abc 0 9:0 4096 3 allow_discards no_read_workqueue sector_size:4096\nother: 0 8 linear 7:0 0\n";
        let c = crypt_facts(t, "data").unwrap();
        assert_eq!(c.cipher, "aes-xts-plain64");
        assert_eq!(
            c.flags,
            ["allow_discards", "no_read_workqueue", "sector_size:4096"]
        );
        assert!(!format!("{c:?}").contains("logon"));
        assert_eq!(crypt_facts(t, "other"), None);
        assert_eq!(
            crypt_facts("data: 0 8 crypt aes 00 0 9:0 0\n", "data")
                .unwrap()
                .flags,
            Vec::<String>::new()
        );
    }
}
