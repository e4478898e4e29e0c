//! Fixture sysfs trees: md, dm, btrfs, partitions, stacked layers.

use super::*;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

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
        // The tree has no proc/: no mounts (btrfs tests name their members).
        Sources {
            host: Host::fixture(self._t.path()),
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
    let table = "vg-lin: 0 2097152 linear 8:65 2048\nvg-lin: 2097152 2097152 linear 8:49 2048\n";
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

/// A 1024-member md (the size the walk is parallel for): every member is
/// found, in slot order, whatever order the walk visits them in.
#[test]
fn a_1024_member_md_keeps_its_slot_order() {
    let f = Fixture::new();
    let members: Vec<String> = (0..1024).map(|i| format!("sd{i}")).collect();
    for (i, m) in members.iter().enumerate() {
        f.dev(m, &format!("8:{}", i + 16), 1 << 30);
    }
    // Slots in reverse name order: the order is the slots', not the names'.
    let slots: Vec<&str> = members.iter().rev().map(String::as_str).collect();
    f.md("md0", "9:0", "raid0", 512 << 10, &slots);
    let src = f.sources(None);
    let t0 = std::time::Instant::now();
    let d = src.device("md0", 0).unwrap();
    if std::env::var_os("STRIPEBENCH_TIME_WALK").is_some() {
        eprintln!("walk of 1024 members: {:?}", t0.elapsed());
    }
    assert_eq!(names(&d), slots);
    assert!(d.members.iter().all(|m| m.leaf.is_some()));
}
