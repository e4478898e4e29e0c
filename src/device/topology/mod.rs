//! Topology: the storage stack under a target, down to the leaf disks.
//!
//! A block device, a file or a mount point is resolved to its device
//! (`stat` → `/sys/dev/block/MAJ:MIN`; btrfs, whose mounts carry an
//! anonymous device number, through `/proc/self/mountinfo` and
//! `/sys/fs/btrfs/<uuid>/devices/`). From there `slaves/` is walked
//! recursively: md arrays give level, raid_disks, chunk size and member order
//! (`md/rdN`); dm devices give their name and, from a device-mapper table
//! (`dmsetup table`, or a file given with `--dm-table`), the target type,
//! chunk size and member order of `striped` and `linear` tables, else the
//! queue limits (minimum_io_size = chunk, optimal_io_size = stripe width).
//! Leaves carry size, block sizes, rotational, scheduler, read-ahead and NUMA
//! node (a partition's come from its disk).
//!
//! The sysfs root, the mountinfo file and the table source can be pointed
//! elsewhere, so every kind of stack is tested on fixture trees.

mod walk;

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::base::error::{show_path, usage};
use crate::device::sysfs::dev_numbers;

/// Where topology is read from.
#[derive(Debug, Clone)]
pub struct Sources {
    pub sysfs: PathBuf,
    pub mountinfo: PathBuf,
    /// `dmsetup table` output: lines `name: start length target args...`.
    pub dm_table: Option<String>,
}

impl Sources {
    /// The running system; the dm table from `dmsetup table` when dmsetup exists.
    pub fn system(dm_table_file: Option<&Path>) -> Result<Sources> {
        let dm_table = match dm_table_file {
            Some(f) => Some(fs::read_to_string(f).map_err(|e| {
                crate::base::error::UsageError(format!(
                    "cannot read the dm table {}: {e}",
                    show_path(f)
                ))
            })?),
            None => std::process::Command::new("dmsetup")
                .arg("table")
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned()),
        };
        Ok(Sources {
            sysfs: "/sys".into(),
            mountinfo: "/proc/self/mountinfo".into(),
            dm_table,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MdInfo {
    pub level: String,
    pub raid_disks: u32,
    pub chunk_size: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DmInfo {
    pub name: String,
    /// `striped`, `linear`, ... (from the table), or null when no table was found.
    pub target: Option<String>,
    pub chunk_size: Option<u64>,
    /// Where the geometry came from: "dm table" or "queue limits".
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BtrfsInfo {
    pub uuid: String,
    /// Data profile (`raid0`, `single`, `raid1`, ...), when sysfs shows it.
    pub data_profile: Option<String>,
    /// btrfs stripes data in 64 KiB units.
    pub stripe_len: u64,
}

/// What a leaf device is like.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeafInfo {
    pub size: u64,
    pub logical_block_size: u64,
    pub physical_block_size: u64,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    pub read_ahead_kb: Option<u64>,
    pub numa_node: Option<i64>,
}

/// One device of the stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// Kernel name (`sda1`, `md0`, `dm-0`, `loop2`), or `btrfs:<uuid>` for a btrfs file system.
    pub name: String,
    /// `MAJ:MIN` (empty for a btrfs file system).
    pub dev: String,
    /// `/dev/<name>`.
    pub path: String,
    /// `disk`, `partition`, `loop`, `md`, `dm`, `btrfs`.
    pub kind: String,
    /// For a partition: the disk it is part of.
    pub parent: Option<String>,
    pub md: Option<MdInfo>,
    pub dm: Option<DmInfo>,
    pub btrfs: Option<BtrfsInfo>,
    pub leaf: Option<LeafInfo>,
    /// The request-queue limits at this level of the stack.
    #[serde(default)]
    pub queue: Option<crate::device::queue::QueueLimits>,
    /// Members, in stripe order where it is known.
    pub members: Vec<Device>,
}

impl Device {
    /// The leaves under this device, in order (itself if it is one).
    pub fn leaves(&self) -> Vec<&Device> {
        if self.members.is_empty() {
            vec![self]
        } else {
            self.members.iter().flat_map(Device::leaves).collect()
        }
    }

    /// The devices a measurement of this volume drives as its members: those
    /// of the first striped layer going down (through layers with a single
    /// member, such as dm-linear over md), each taken whole, with whatever
    /// stands between it and its disk (dm-delay, dm-crypt, a partition):
    /// reading the disk under such a member would bypass what the volume
    /// goes through. Without a striped layer, the leaves.
    pub fn stripe_members(&self) -> Vec<&Device> {
        let mut d = self;
        loop {
            if d.is_striped() {
                return d.members.iter().collect();
            }
            match d.members.as_slice() {
                [only] => d = only,
                _ => return self.leaves(),
            }
        }
    }

    /// The chunk (stripe unit) of this device, when it stripes.
    pub fn chunk_size(&self) -> Option<u64> {
        self.md
            .as_ref()
            .and_then(|m| m.chunk_size)
            .or(self.dm.as_ref().and_then(|d| d.chunk_size))
            .or(self.btrfs.as_ref().map(|b| b.stripe_len))
    }

    /// Whether it spreads data over its members in chunks (RAID0-like).
    pub fn is_striped(&self) -> bool {
        let md = self.md.as_ref().is_some_and(|m| m.level == "raid0");
        let dm = self
            .dm
            .as_ref()
            .is_some_and(|d| d.target.as_deref() == Some("striped"));
        let btrfs = self
            .btrfs
            .as_ref()
            .is_some_and(|b| b.data_profile.as_deref() == Some("raid0"));
        md || dm || btrfs
    }
}

/// A target's stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    pub target: String,
    /// How the target led to the top device ("file on btrfs ...", ...).
    pub resolved: String,
    pub root: Device,
}

impl Topology {
    pub fn leaves(&self) -> Vec<&Device> {
        self.root.leaves()
    }

    /// What `compare` and `run --members` drive: see `Device::stripe_members`.
    pub fn stripe_members(&self) -> Vec<&Device> {
        self.root.stripe_members()
    }
}

/// Resolves `target` and walks its stack.
pub fn discover(target: &Path, src: &Sources) -> Result<Topology> {
    let shown = show_path(target);
    let meta = match fs::metadata(target) {
        Ok(m) => m,
        Err(_) => {
            return usage(format!(
                "{shown} does not exist: name a block device, a file or a mount point"
            ))
        }
    };
    let (dev, how) = if meta.file_type().is_block_device() {
        (dev_numbers(meta.rdev()), "block device".to_string())
    } else if meta.is_file() || meta.is_dir() {
        (
            dev_numbers(meta.dev()),
            format!("{} on", if meta.is_dir() { "directory" } else { "file" }),
        )
    } else {
        return usage(format!(
            "{shown} is neither a block device, a file nor a directory"
        ));
    };
    if let Some(name) = src.name_of(dev) {
        let root = src.device(&name, 0)?;
        let resolved = if how == "block device" {
            how
        } else {
            format!("{how} /dev/{name}")
        };
        return Ok(Topology {
            target: shown,
            resolved,
            root,
        });
    }
    // No block device by that number: btrfs (anonymous device), or none at all.
    // The mount that holds the path: the longest mount point above it (a btrfs
    // subvolume's st_dev differs from the number mountinfo shows).
    let real = fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
    let mount = fs::read_to_string(&src.mountinfo).ok().and_then(|t| {
        t.lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                let sep = f.iter().position(|&x| x == "-")?;
                let at = super::sysfs::unescape_mount(f.get(4)?);
                let (fstype, source) = (
                    f.get(sep + 1)?.to_string(),
                    super::sysfs::unescape_mount(f.get(sep + 2)?),
                );
                real.starts_with(&at).then_some((at, fstype, source))
            })
            .max_by_key(|(at, _, _)| at.len())
    });
    match mount {
        Some((at, fstype, source)) if fstype == "btrfs" => {
            let member = fs::metadata(&source).ok().map(|m| dev_numbers(m.rdev())).and_then(|d| src.name_of(d));
            let uuid = member.as_deref().and_then(|m| src.btrfs_with_member(m));
            let Some(uuid) = uuid else {
                return usage(format!("{shown} is on btrfs mounted at {at}, but its members are not in /sys/fs/btrfs"));
            };
            Ok(Topology { target: shown, resolved: format!("{how} btrfs mounted at {at}"), root: src.btrfs(&uuid)? })
        }
        Some((at, fstype, _)) => usage(format!(
            "{shown} has no block device under it: it is on {fstype} mounted at {at}; name a block device or a file on a disk-backed file system"
        )),
        None => usage(format!("{shown} has no block device under it (device {}:{})", dev.0, dev.1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// Builds fixture sysfs trees.
    struct Fixture {
        _t: tempfile::TempDir,
        sys: PathBuf,
    }

    impl Fixture {
        fn new() -> Fixture {
            let t = tempfile::tempdir().unwrap();
            let sys = t.path().join("sys");
            for d in [
                "class/block",
                "dev/block",
                "devices/virtual/block",
                "fs/btrfs",
            ] {
                fs::create_dir_all(sys.join(d)).unwrap();
            }
            Fixture { _t: t, sys }
        }

        /// A block device at `rel` (e.g. "sdb" or "sdb/sdb1") with numbers and size in bytes.
        fn dev(&self, rel: &str, numbers: &str, size: u64) -> PathBuf {
            let d = self.sys.join("devices/virtual/block").join(rel);
            for sub in ["holders", "slaves", "queue"] {
                fs::create_dir_all(d.join(sub)).unwrap();
            }
            fs::write(d.join("dev"), format!("{numbers}\n")).unwrap();
            fs::write(d.join("size"), format!("{}\n", size / 512)).unwrap();
            let name = Path::new(rel).file_name().unwrap();
            symlink(&d, self.sys.join("class/block").join(name)).unwrap();
            symlink(&d, self.sys.join("dev/block").join(numbers)).unwrap();
            if !rel.contains('/') {
                let q = d.join("queue");
                for (f, v) in [
                    ("logical_block_size", "512"),
                    ("physical_block_size", "4096"),
                    ("rotational", "0"),
                    ("scheduler", "[none] mq-deadline"),
                    ("read_ahead_kb", "128"),
                ] {
                    fs::write(q.join(f), v).unwrap();
                }
            } else {
                fs::write(d.join("partition"), "1").unwrap();
            }
            d
        }

        fn stack(&self, upper: &str, lower: &str) {
            let (u, l) = (
                self.sys.join("class/block").join(upper),
                self.sys.join("class/block").join(lower),
            );
            symlink(
                fs::canonicalize(&l).unwrap(),
                fs::canonicalize(&u).unwrap().join("slaves").join(lower),
            )
            .unwrap();
            symlink(
                fs::canonicalize(&u).unwrap(),
                fs::canonicalize(&l).unwrap().join("holders").join(upper),
            )
            .unwrap();
        }

        fn md(&self, name: &str, numbers: &str, level: &str, chunk: u64, members: &[&str]) {
            let d = self.dev(name, numbers, 1 << 30);
            let md = d.join("md");
            fs::create_dir_all(&md).unwrap();
            fs::write(md.join("level"), level).unwrap();
            fs::write(md.join("raid_disks"), members.len().to_string()).unwrap();
            fs::write(md.join("chunk_size"), chunk.to_string()).unwrap();
            for (i, m) in members.iter().enumerate() {
                fs::create_dir_all(md.join(format!("dev-{m}"))).unwrap();
                symlink(format!("dev-{m}"), md.join(format!("rd{i}"))).unwrap();
                self.stack(name, m);
            }
        }

        fn dm(&self, name: &str, numbers: &str, dm_name: &str, members: &[&str]) -> PathBuf {
            let d = self.dev(name, numbers, 1 << 30);
            fs::create_dir_all(d.join("dm")).unwrap();
            fs::write(d.join("dm/name"), dm_name).unwrap();
            for m in members {
                self.stack(name, m);
            }
            d
        }

        fn sources(&self, table: Option<&str>) -> Sources {
            Sources {
                sysfs: self.sys.clone(),
                mountinfo: self.sys.join("none"),
                dm_table: table.map(str::to_string),
            }
        }
    }

    fn names(d: &Device) -> Vec<String> {
        d.leaves().iter().map(|l| l.name.clone()).collect()
    }

    #[test]
    fn md_raid0_members_in_slot_order() {
        let f = Fixture::new();
        f.dev("sdb", "8:16", 1 << 30);
        f.dev("sdc", "8:32", 1 << 30);
        // Slot 0 is sdc: the order comes from rdN, not from the names.
        f.md("md0", "9:0", "raid0", 512 << 10, &["sdc", "sdb"]);
        let d = f.sources(None).device("md0", 0).unwrap();
        assert_eq!(d.kind, "md");
        assert_eq!(
            d.md,
            Some(MdInfo {
                level: "raid0".into(),
                raid_disks: 2,
                chunk_size: Some(512 << 10)
            })
        );
        assert_eq!(names(&d), vec!["sdc", "sdb"]);
        assert!(d.is_striped());
        assert_eq!(d.chunk_size(), Some(512 << 10));
        let leaf = d.members[0].leaf.as_ref().unwrap();
        assert_eq!(
            (leaf.size, leaf.physical_block_size, leaf.rotational),
            (1 << 30, 4096, Some(false))
        );
        assert_eq!(leaf.scheduler.as_deref(), Some("none"));
    }

    #[test]
    fn dm_striped_from_the_table_and_from_queue_limits() {
        let f = Fixture::new();
        f.dev("sdb", "8:16", 1 << 30);
        f.dev("sdc", "8:32", 1 << 30);
        let dm = f.dm("dm-0", "253:0", "vg-lvstripe", &["sdb", "sdc"]);
        let table =
            "vg-lvstripe: 0 409600 striped 2 128 8:32 2048 8:16 2048\nother: 0 10 linear 8:16 0\n";
        let d = f.sources(Some(table)).device("dm-0", 0).unwrap();
        let info = d.dm.clone().unwrap();
        assert_eq!(
            (info.name.as_str(), info.target.as_deref(), info.chunk_size),
            ("vg-lvstripe", Some("striped"), Some(65536))
        );
        assert_eq!(names(&d), vec!["sdc", "sdb"], "table order");
        // No table: the queue limits give the chunk; members by name.
        fs::write(dm.join("queue/minimum_io_size"), "65536").unwrap();
        fs::write(dm.join("queue/optimal_io_size"), "131072").unwrap();
        let d = f.sources(None).device("dm-0", 0).unwrap();
        let info = d.dm.clone().unwrap();
        assert_eq!(
            (
                info.target.as_deref(),
                info.chunk_size,
                info.source.as_str()
            ),
            (Some("striped"), Some(65536), "queue limits")
        );
        assert_eq!(names(&d), vec!["sdb", "sdc"]);
    }

    #[test]
    fn dm_linear_over_partitions_reaches_the_disks_attributes() {
        let f = Fixture::new();
        f.dev("sdd", "8:48", 2 << 30);
        f.dev("sdd/sdd1", "8:49", 1 << 30);
        f.dev("sde", "8:64", 2 << 30);
        f.dev("sde/sde1", "8:65", 1 << 30);
        f.dm("dm-1", "253:1", "vg-lin", &["sdd1", "sde1"]);
        let table =
            "vg-lin: 0 2097152 linear 8:65 2048\nvg-lin: 2097152 2097152 linear 8:49 2048\n";
        let d = f.sources(Some(table)).device("dm-1", 0).unwrap();
        assert_eq!(d.dm.as_ref().unwrap().target.as_deref(), Some("linear"));
        assert!(!d.is_striped());
        assert_eq!(names(&d), vec!["sde1", "sdd1"], "segment order");
        let p = &d.members[0];
        assert_eq!(
            (p.kind.as_str(), p.parent.as_deref()),
            ("partition", Some("sde"))
        );
        assert_eq!(
            p.leaf.as_ref().unwrap().physical_block_size,
            4096,
            "from the disk's queue"
        );
        assert_eq!(p.leaf.as_ref().unwrap().size, 1 << 30);
    }

    #[test]
    fn dm_over_md_walks_both_layers() {
        let f = Fixture::new();
        for (n, num) in [("sdb", "8:16"), ("sdc", "8:32"), ("sdd", "8:48")] {
            f.dev(n, num, 1 << 30);
        }
        f.md("md0", "9:0", "raid0", 64 << 10, &["sdb", "sdc", "sdd"]);
        f.dm("dm-2", "253:2", "vg-onmd", &["md0"]);
        let d = f
            .sources(Some("vg-onmd: 0 100 linear 9:0 0\n"))
            .device("dm-2", 0)
            .unwrap();
        assert_eq!(d.members.len(), 1);
        assert_eq!(d.members[0].kind, "md");
        assert_eq!(names(&d), vec!["sdb", "sdc", "sdd"]);
    }

    #[test]
    fn a_member_behind_dm_delay_is_driven_through_it_not_under_it() {
        // md RAID0 over loop0, dm-0 (dm-delay over loop1), loop2: the lab's
        // --slow-member. Reading loop1 would bypass the delay, and compare
        // flagged another member as slow instead.
        let f = Fixture::new();
        for (n, num) in [("loop0", "7:0"), ("loop1", "7:1"), ("loop2", "7:2")] {
            f.dev(n, num, 1 << 30);
        }
        f.dm("dm-0", "253:0", "slow1", &["loop1"]);
        f.md("md0", "9:0", "raid0", 64 << 10, &["loop0", "dm-0", "loop2"]);
        f.dm("dm-1", "253:1", "onmd", &["md0"]);
        let table = "slow1: 0 100 delay 7:1 0 20\nonmd: 0 100 linear 9:0 0\n";
        let src = f.sources(Some(table));
        let names = |v: Vec<&Device>| v.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
        let md = src.device("md0", 0).unwrap();
        assert_eq!(names(md.leaves()), vec!["loop0", "loop1", "loop2"]);
        assert_eq!(names(md.stripe_members()), vec!["loop0", "dm-0", "loop2"]);
        // Through a single-member layer above the stripe (dm over md).
        let onmd = src.device("dm-1", 0).unwrap();
        assert_eq!(names(onmd.stripe_members()), vec!["loop0", "dm-0", "loop2"]);
        // No striped layer (dm-linear over two disks): the leaves.
        f.dm("dm-2", "253:2", "lin", &["loop0", "loop2"]);
        let lin = f
            .sources(Some("lin: 0 10 linear 7:0 0\nlin: 10 10 linear 7:2 0\n"))
            .device("dm-2", 0)
            .unwrap();
        assert_eq!(names(lin.stripe_members()), vec!["loop0", "loop2"]);
    }

    #[test]
    fn btrfs_raid0_over_three_devices() {
        let f = Fixture::new();
        for (n, num) in [("sdf", "8:80"), ("sdg", "8:96"), ("sdh", "8:112")] {
            f.dev(n, num, 1 << 30);
            let d = f.sys.join("fs/btrfs/0f0e-uuid/devices");
            fs::create_dir_all(&d).unwrap();
            symlink(f.sys.join("class/block").join(n), d.join(n)).unwrap();
        }
        fs::create_dir_all(f.sys.join("fs/btrfs/0f0e-uuid/allocation/data/raid0")).unwrap();
        let src = f.sources(None);
        assert_eq!(src.btrfs_with_member("sdg").as_deref(), Some("0f0e-uuid"));
        let d = src.btrfs("0f0e-uuid").unwrap();
        assert_eq!(d.kind, "btrfs");
        assert_eq!(names(&d), vec!["sdf", "sdg", "sdh"]);
        assert_eq!(
            d.btrfs.as_ref().unwrap().data_profile.as_deref(),
            Some("raid0")
        );
        assert!(d.is_striped());
        assert_eq!(d.chunk_size(), Some(64 << 10));
    }

    #[test]
    fn a_partition_of_a_plain_disk_is_a_leaf_with_its_parent() {
        let f = Fixture::new();
        f.dev("sda", "8:0", 4 << 30);
        f.dev("sda/sda1", "8:1", 1 << 30);
        let d = f.sources(None).device("sda1", 0).unwrap();
        assert_eq!(
            (d.kind.as_str(), d.parent.as_deref()),
            ("partition", Some("sda"))
        );
        assert!(d.members.is_empty());
        assert_eq!(d.leaf.as_ref().unwrap().read_ahead_kb, Some(128));
        assert!(!d.is_striped());
        assert!(crate::report::topology::render(&Topology {
            target: "/dev/sda1".into(),
            resolved: "block device".into(),
            root: d
        })
        .contains("partition of sda"));
    }
}
