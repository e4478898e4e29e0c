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
    let state = d.md.as_ref().and_then(|m| m.state.clone()).unwrap();
    assert_eq!(state.missing_slots, Vec::<u32>::new(), "both slots held");
    assert_eq!(
        d.md,
        Some(MdInfo {
            level: "raid0".into(),
            raid_disks: 2,
            chunk_size: Some(512 << 10),
            layout: None,
            state: Some(state),
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

fn topo(root: Device) -> Topology {
    Topology {
        target: format!("/dev/{}", root.name),
        resolved: "block device".into(),
        root,
    }
}

/// The "md raid5 (4 disks, chunk 64k)": the data/parity count, the
/// layout md/layout holds, the full stripe, and where data begins on each
/// member (md/dev-X/offset), which the mapping of an offset adds.
#[test]
fn md_raid5_and_raid6_give_their_geometry_and_full_stripe() {
    let f = Fixture::new();
    let names: Vec<String> = (0..6).map(|i| format!("loop{i}")).collect();
    for (i, n) in names.iter().enumerate() {
        f.dev(n, &format!("7:{i}"), 1 << 30);
    }
    let m: Vec<&str> = names.iter().map(String::as_str).collect();
    f.md("md5", "9:5", "raid5", 64 << 10, &m[..4]);
    let md = f.sys.join("class/block/md5/md");
    fs::write(md.join("layout"), "2\n").unwrap();
    for n in &m[..4] {
        fs::write(md.join(format!("dev-{n}/offset")), "2048\n").unwrap();
    }
    let d = f.sources(None).device("md5", 0).unwrap();
    let g = d.geometry.clone().unwrap();
    assert_eq!(
        (g.data, g.parity, g.layout.as_deref()),
        (3, 1, Some("left-symmetric"))
    );
    assert_eq!(g.full_stripe, Some(192 << 10));
    assert_eq!(g.member_offsets, vec![1 << 20; 4]);
    assert!(d.is_striped(), "a raid5's members are its stripe members");
    assert_eq!(d.stripe_members().len(), 4);
    assert_eq!(
        crate::device::stripes::stripe_of(&d).map(|s| s.width()),
        Some(192 << 10)
    );
    // 3 MiB: chunk 48, stripe 16, member 0 at 1 MiB past its data offset.
    let at = d.locate(3145728).unwrap();
    assert_eq!(
        (at.index, at.name.as_str(), at.offset),
        (0, "loop0", 2 << 20)
    );
    let text = crate::report::topology::render(&topo(d.clone()));
    assert!(
        text.contains(
            "md raid5 (4 disks: 3 data + 1 parity, left-symmetric, chunk 64k, full stripe 192k)"
        ),
        "{text}"
    );

    f.md("md6", "9:6", "raid6", 64 << 10, &m);
    fs::write(f.sys.join("class/block/md6/md/layout"), "2\n").unwrap();
    let d = f.sources(None).device("md6", 0).unwrap();
    let g = d.geometry().unwrap();
    assert_eq!((g.data, g.parity), (4, 2));
    assert_eq!(g.full_stripe, Some(256 << 10));
}

#[test]
fn md_raid1_says_copies_never_chunk_and_raid10_its_layout() {
    let f = Fixture::new();
    for i in 0..4 {
        f.dev(&format!("loop{i}"), &format!("7:{i}"), 1 << 30);
    }
    f.md("md1", "9:1", "raid1", 0, &["loop0", "loop1"]);
    let d = f.sources(None).device("md1", 0).unwrap();
    assert!(!d.is_striped());
    assert_eq!(d.chunk_size(), None);
    let text = crate::report::topology::render(&topo(d));
    assert!(text.contains("md raid1 (2 disks: 2 copies)"), "{text}");
    assert!(!text.contains("chunk ?"), "{text}");
    assert!(text.contains("; mirror of 2"), "{text}");
    f.md(
        "md10",
        "9:10",
        "raid10",
        64 << 10,
        &["loop2", "loop3", "loop0", "loop1"],
    );
    fs::write(f.sys.join("class/block/md10/md/layout"), "258\n").unwrap();
    let d = f.sources(None).device("md10", 0).unwrap();
    let text = crate::report::topology::render(&topo(d));
    assert!(
        text.contains("md raid10 (4 disks: near=2, 2 copies, chunk 64k, full stripe 128k)"),
        "{text}"
    );
}

/// `lvcreate --type raid5 -i 3`: a dm-raid table over rmeta/rimage pairs,
/// each pair dm-linear on one PV. The geometry comes from the table, and
/// the members are the rimages only, so each PV is listed once.
#[test]
fn an_lvm_raid5_gives_its_geometry_from_the_dm_raid_table_and_each_pv_once() {
    let f = Fixture::new();
    let mut table = String::new();
    let mut pairs = Vec::new();
    for i in 0..4u32 {
        let pv = format!("loop{i}");
        f.dev(&pv, &format!("7:{i}"), 1 << 30);
        let (meta, image) = (format!("dm-{}", 10 + 2 * i), format!("dm-{}", 11 + 2 * i));
        f.dm(
            &meta,
            &format!("253:{}", 10 + 2 * i),
            &format!("vg-lv_rmeta_{i}"),
            &[&pv],
        );
        f.dm(
            &image,
            &format!("253:{}", 11 + 2 * i),
            &format!("vg-lv_rimage_{i}"),
            &[&pv],
        );
        table += &format!("vg-lv_rmeta_{i}: 0 8192 linear 7:{i} 2048\n");
        table += &format!("vg-lv_rimage_{i}: 0 409600 linear 7:{i} 10240\n");
        pairs.push(format!("253:{} 253:{}", 10 + 2 * i, 11 + 2 * i));
    }
    let legs: Vec<String> = (10..18).map(|i| format!("dm-{i}")).collect();
    let legs: Vec<&str> = legs.iter().map(String::as_str).collect();
    f.dm("dm-20", "253:20", "vg-lv", &legs);
    table += &format!(
        "vg-lv: 0 1228800 raid raid5_ls 3 128 region_size 4096 4 {}\n",
        pairs.join(" ")
    );
    let d = f.sources(Some(&table)).device("dm-20", 0).unwrap();
    let g = d.geometry.clone().unwrap();
    assert_eq!(
        (
            g.level.as_str(),
            g.data,
            g.parity,
            g.layout.as_deref(),
            g.chunk
        ),
        ("raid5", 3, 1, Some("left-symmetric"), Some(64 << 10))
    );
    assert_eq!(names(&d), vec!["loop0", "loop1", "loop2", "loop3"]);
    let text = crate::report::topology::render(&topo(d.clone()));
    assert!(
        text.contains("4 leaf device(s): /dev/loop0 /dev/loop1 /dev/loop2 /dev/loop3;"),
        "{text}"
    );
    assert!(
        text.contains("raid5 (3 data + 1 parity, left-symmetric"),
        "{text}"
    );
    assert!(
        text.contains("vg-lv raid (chunk 64k, from the dm table): raid5 over 4 (3 data + 1 parity, left-symmetric, chunk 64k, full stripe 192k)"),
        "{text}"
    );
    assert_eq!(
        crate::device::stripes::stripe_of(&d).map(|s| s.width()),
        Some(192 << 10)
    );
    // raid1 and raid10 LVs, and an old-style LVM mirror (log in core).
    let raid1 = "vg-lv: 0 409600 raid raid1 3 0 region_size 4096 2 253:10 253:11 253:12 253:13\n";
    let d = f.sources(Some(raid1)).device("dm-20", 0).unwrap();
    assert_eq!(d.geometry.as_ref().map(|g| g.copies), Some(2));
    assert_eq!(d.summary().as_deref(), Some("mirror of 2"));
    let raid10 = "vg-lv: 0 409600 raid raid10 5 128 region_size 4096 raid10_copies 2 4 253:10 253:11 253:12 253:13 253:14 253:15 253:16 253:17\n";
    let g = f
        .sources(Some(raid10))
        .device("dm-20", 0)
        .unwrap()
        .geometry
        .unwrap();
    assert_eq!(
        (g.level.as_str(), g.copies, g.layout.as_deref()),
        ("raid10", 2, Some("near=2"))
    );
    let mirror = "vg-lv: 0 409600 mirror core 1 1024 2 253:11 0 253:13 0 1 handle_errors\n";
    let d = f.sources(Some(mirror)).device("dm-20", 0).unwrap();
    assert_eq!(
        d.geometry.as_ref().map(|g| (g.level.as_str(), g.copies)),
        Some(("raid1", 2))
    );
    // The legs are rimage_0 (on loop0) and rimage_1 (on loop1).
    assert_eq!(names(&d), vec!["loop0", "loop1"]);
}

/// The "4 leaf device(s) ...; striped, chunk 64k" for LVM striped
/// over two md RAID1 pairs.
#[test]
fn lvm_striped_over_md_mirrors_is_summarised_as_such() {
    let f = Fixture::new();
    for i in 0..4 {
        f.dev(&format!("loop{i}"), &format!("7:{i}"), 1 << 30);
    }
    f.md("md1", "9:1", "raid1", 0, &["loop0", "loop1"]);
    f.md("md2", "9:2", "raid1", 0, &["loop2", "loop3"]);
    f.dm("dm-0", "253:0", "vg-stripe", &["md1", "md2"]);
    let table = "vg-stripe: 0 409600 striped 2 128 9:1 2048 9:2 2048\n";
    let d = f.sources(Some(table)).device("dm-0", 0).unwrap();
    let text = crate::report::topology::render(&topo(d.clone()));
    assert!(
        text.contains("; striped (chunk 64k) over 2 mirrors of 2"),
        "{text}"
    );
    // The dm table's offsets are where each member's data begins.
    let at = d.locate(3 * (64 << 10) + 5).unwrap();
    assert_eq!(
        (at.name.as_str(), at.offset),
        ("md2", (1 << 20) + (64 << 10) + 5)
    );
}

#[test]
fn a_dm_table_that_is_dev_zero_or_a_fifo_is_not_read_forever() {
    // `--dm-table /dev/zero` was read until memory ran out; a FIFO with no
    // writer hung the command at open.
    let e = read_dm_table(Path::new("/dev/zero")).unwrap_err();
    assert!(e.contains("not a regular file"), "{e}");
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // No writer: read as empty at once (a pipe with one, `<(dmsetup
    // table)`, is read as it is written).
    assert_eq!(read_dm_table(&fifo).unwrap(), "");
    let big = t.path().join("big");
    fs::write(&big, vec![b'x'; (DM_TABLE_MAX + 1) as usize]).unwrap();
    assert!(read_dm_table(&big).unwrap_err().contains("larger than"));
    let ok = t.path().join("table");
    fs::write(&ok, "vg-lv: 0 100 linear 9:0 2048\n").unwrap();
    assert_eq!(
        read_dm_table(&ok).unwrap(),
        "vg-lv: 0 100 linear 9:0 2048\n"
    );
}

/// md's state files on array `name`, as the kernel writes them (with
/// their newlines), and each member's `state`.
fn md_state_files(f: &Fixture, name: &str, files: &[(&str, &str)], members: &[(&str, &str)]) {
    let md = f.sys.join("class/block").join(name).join("md");
    for (k, v) in files {
        fs::write(md.join(k), format!("{v}\n")).unwrap();
    }
    for (m, st) in members {
        fs::write(md.join(format!("dev-{m}/state")), format!("{st}\n")).unwrap();
    }
}

/// Issue 42: a RAID6 of 6 with member 2 failed and removed
/// (`mdadm --fail --remove`) showed four... leaves under "6 disks" and never
/// said degraded. md keeps the slot count, drops rd2 and dev-loop2, and
/// says `degraded` 1: topology shows the empty slot, each member's state,
/// and the array degraded, in text and JSON.
#[test]
fn a_degraded_raid6_shows_its_empty_slot_and_says_degraded() {
    let f = Fixture::new();
    let names: Vec<String> = (0..6).map(|i| format!("loop{i}")).collect();
    for (i, n) in names.iter().enumerate() {
        f.dev(n, &format!("7:{i}"), 1 << 30);
    }
    let alive: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| *n != "loop2")
        .collect();
    f.md("md0", "9:0", "raid6", 64 << 10, &alive);
    let md = f.sys.join("class/block/md0/md");
    // md's own slots: rd0 rd1 rd3 rd4 rd5 (slot 2 empty), 6 raid disks.
    for i in 0..5 {
        fs::remove_file(md.join(format!("rd{i}"))).unwrap();
    }
    for (slot, m) in [0, 1, 3, 4, 5].iter().zip(&alive) {
        symlink(format!("dev-{m}"), md.join(format!("rd{slot}"))).unwrap();
    }
    md_state_files(
        &f,
        "md0",
        &[
            ("raid_disks", "6"),
            ("layout", "2"),
            ("array_state", "clean"),
            ("degraded", "1"),
            ("sync_action", "idle"),
            ("sync_completed", "none"),
            ("sync_speed", "none"),
            ("sync_speed_min", "1000 (system)"),
            ("sync_speed_max", "200000 (system)"),
        ],
        &alive.iter().map(|m| (*m, "in_sync")).collect::<Vec<_>>(),
    );
    let d = f.sources(None).device("md0", 0).unwrap();
    let st = d.md.as_ref().unwrap().state.clone().unwrap();
    assert_eq!(st.missing_slots, vec![2]);
    assert_eq!(st.degraded, Some(1));
    assert_eq!(
        st.members.iter().map(|m| m.slot).collect::<Vec<_>>(),
        [0, 1, 3, 4, 5].map(Some)
    );
    assert_eq!(
        st.sync_speed_min
            .as_ref()
            .map(|l| (l.kb_per_sec, l.source.as_str())),
        Some((1000, "system"))
    );
    let h = d.md_health().unwrap();
    assert!(h.degraded());
    assert_eq!(
        h.describe().as_deref(),
        Some("degraded: 1 of 6 members down (slot 2 empty)")
    );
    let text = crate::report::topology::render(&topo(d.clone()));
    assert!(
        text.contains("md raid6 (6 disks: 4 data + 2 parity"),
        "{text}"
    );
    assert!(text.contains("state: clean; degraded: 1 of 6 members down (slot 2 empty); sync idle, speed limits min 1000 (system) max 200000 (system) KB/s"), "{text}");
    // The gap is where the member was, between loop1 and loop3.
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s}: {text}"));
    assert!(at("loop1 [") < at("(slot 2: missing, no device)"));
    assert!(at("(slot 2: missing, no device)") < at("loop3 ["));
    assert!(text.contains("md: slot 3, in_sync"), "{text}");
    assert!(
        text.ends_with("ARRAY STATE: degraded: 1 of 6 members down (slot 2 empty)\n"),
        "{text}"
    );
    // The JSON keeps it, and reads back the same.
    use crate::document::facts::{Shape, TopologyDef};
    let t = topo(d);
    let json = serde_json::to_value(TopologyDef::doc(&t)).unwrap();
    let s = &json["root"]["md"]["state"];
    assert_eq!(s["degraded"], 1);
    assert_eq!(s["missing_slots"], serde_json::json!([2]));
    assert_eq!(s["members"][2]["name"], "loop3");
    assert_eq!(s["members"][2]["state"], serde_json::json!(["in_sync"]));
    assert_eq!(s["sync_speed_max"]["kb_per_sec"], 200000);
    assert_eq!(TopologyDef::deserialize(json).unwrap(), t);
}

/// A RAID5 recovering a member added back: md gives it its slot again,
/// `spare` until it is in sync, and says how far (`sync_completed`), how
/// fast and within which limits.
#[test]
fn a_recovering_raid5_says_how_far_how_fast_and_which_member() {
    let f = Fixture::new();
    for i in 0..5 {
        f.dev(&format!("loop{i}"), &format!("7:{i}"), 1 << 30);
    }
    f.md(
        "md0",
        "9:0",
        "raid5",
        64 << 10,
        &["loop0", "loop1", "loop2", "loop3", "loop4"],
    );
    md_state_files(
        &f,
        "md0",
        &[
            ("array_state", "active"),
            ("degraded", "1"),
            ("sync_action", "recover"),
            ("sync_completed", "32768 / 131072"),
            ("sync_speed", "198"),
            ("sync_speed_min", "1 (local)"),
            ("sync_speed_max", "200 (local)"),
        ],
        &[
            ("loop0", "in_sync"),
            ("loop1", "in_sync"),
            ("loop2", "spare"),
            ("loop3", "in_sync"),
            ("loop4", "in_sync"),
        ],
    );
    fs::write(
        f.sys.join("class/block/md0/md/dev-loop2/recovery_start"),
        "32768\n",
    )
    .unwrap();
    let d = f.sources(None).device("md0", 0).unwrap();
    let h = d.md_health().unwrap();
    assert_eq!(h.rebuilding, vec!["loop2"]);
    assert!(h.excused("loop2").is_some() && h.excused("loop1").is_none());
    let said = "degraded: 1 of 5 members down (loop2 being rebuilt); recover 25.0% done at 198 KB/s (limits 1 to 200 KB/s)";
    assert_eq!(h.describe().as_deref(), Some(said));
    let text = crate::report::topology::render(&topo(d));
    assert!(
        text.contains(&format!(
            "state: active; {said}; sync_completed 32768/131072 sectors (limits: min local, max local)"
        )),
        "{text}"
    );
    assert!(
        text.contains("md: slot 2, spare (being rebuilt, 32768 sectors done)"),
        "{text}"
    );
    assert!(!text.contains("missing"), "{text}");
    // md/sync_completed lags (it moves in sixteenths of the array): where
    // /proc/mdstat shows the recovery further on, that is how far it is.
    let proc = f._t.path().join("proc");
    fs::create_dir_all(&proc).unwrap();
    fs::write(
        proc.join("mdstat"),
        "md0 : active raid5 loop4[4] loop3[3] loop2[5] loop1[1] loop0[0]\n      4190208 blocks super 1.2 level 5, 64k chunk, algorithm 2 [5/4] [UU_UU]\n      [=====>...............]  recovery = 29.6% (19392/65536) finish=3.8min speed=198K/sec\n",
    )
    .unwrap();
    let d = f.sources(None).device("md0", 0).unwrap();
    let st = d.md.as_ref().unwrap().state.as_ref().unwrap();
    assert_eq!(st.sync_completed, Some((38784, 131072)));
}

/// Hostile sysfs: a state file of a megabyte and control characters is
/// read a page at most, and printed escaped, on one line.
#[test]
fn md_state_strings_are_bounded_and_escaped() {
    let f = Fixture::new();
    for i in 0..2 {
        f.dev(&format!("loop{i}"), &format!("7:{i}"), 1 << 30);
    }
    f.md("md0", "9:0", "raid1", 0, &["loop0", "loop1"]);
    let long = format!("clean\x1b[31m\n{}", "x".repeat(1 << 20));
    md_state_files(
        &f,
        "md0",
        &[("array_state", &long)],
        &[("loop0", "in_sync\x07")],
    );
    let d = f.sources(None).device("md0", 0).unwrap();
    let st = d.md.as_ref().unwrap().state.clone().unwrap();
    assert!(st.array_state.as_ref().unwrap().len() <= 4096);
    let text = crate::report::topology::render(&topo(d));
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
}
