//! The checks on hand-made stacks and surveys: each planted fault is
//! found, with its fix, and nothing else; a clean array has nothing above
//! info.

use super::*;
use crate::device::survey::{DeviceFacts, MdFacts};
use crate::device::topology::{DmInfo, LeafInfo, MdInfo};

fn dev(name: &str, kind: &str) -> Device {
    Device {
        name: name.into(),
        dev: String::new(),
        path: format!("/dev/{name}"),
        kind: kind.into(),
        parent: None,
        md: None,
        dm: None,
        btrfs: None,
        leaf: Some(LeafInfo {
            size: 1 << 30,
            logical_block_size: 512,
            physical_block_size: 512,
            rotational: Some(false),
            scheduler: Some("none".into()),
            read_ahead_kb: Some(128),
            numa_node: None,
        }),
        queue: None,
        members: Vec::new(),
        geometry: None,
    }
}

fn md(name: &str, level: &str, chunk: u64, members: Vec<Device>) -> Device {
    let n = members.len() as u32;
    Device {
        kind: "md".into(),
        md: Some(MdInfo {
            level: level.into(),
            raid_disks: n,
            chunk_size: Some(chunk),
            layout: None,
            state: None,
        }),
        leaf: None,
        geometry: Some(Geometry::md(level, n, Some(chunk), None)),
        members,
        ..dev(name, "md")
    }
}

fn facts(name: &str, kind: &str) -> DeviceFacts {
    DeviceFacts {
        name: name.into(),
        kind: kind.into(),
        read_ahead_kb: Some(128),
        max_sectors_kb: Some(1280),
        max_hw_sectors_kb: Some(1280),
        max_segments: Some(128),
        scheduler: Some("none".into()),
        schedulers: vec!["none".into(), "mq-deadline".into()],
        nr_requests: Some(128),
        write_cache: Some("write back".into()),
        wbt_lat_usec: Some(75000),
        rotational: Some(false),
        ..Default::default()
    }
}

/// md0, RAID0 of four loops, chunk 64k, read-ahead 512 KiB (2 full
/// stripes, what the kernel gives it): clean.
fn raid0() -> (Topology, Survey) {
    let loops: Vec<Device> = (0..4).map(|i| dev(&format!("loop{i}"), "loop")).collect();
    let topo = Topology {
        target: "/dev/md0".into(),
        resolved: "block device".into(),
        root: md("md0", "raid0", 64 << 10, loops),
    };
    let mut survey = Survey {
        devices: (0..4).map(|i| facts(&format!("loop{i}"), "loop")).collect(),
        fs_hints: None,
        numa_nodes: Vec::new(),
        sys: "/sys".into(),
        paths: Default::default(),
    };
    let mut m = facts("md0", "md");
    m.read_ahead_kb = Some(512);
    m.max_sectors_kb = Some(64);
    m.md = Some(MdFacts {
        array_state: Some("clean".into()),
        ..Default::default()
    });
    survey.devices.insert(0, m);
    (topo, survey)
}

fn set(s: &mut Survey, name: &str, f: impl FnOnce(&mut DeviceFacts)) {
    f(s.devices.iter_mut().find(|d| d.name == name).unwrap());
}

fn ids(f: &[Finding]) -> Vec<String> {
    f.iter()
        .map(|f| format!("{}:{}", f.id, f.devices.join(",")))
        .collect()
}

/// A whole run's measurement of `check` at `setting`: 3 s, no other figure.
fn point(
    check: &str,
    setting: impl Into<String>,
    bytes_per_sec: f64,
    current: bool,
) -> Measurement {
    Measurement {
        check: check.into(),
        setting: setting.into(),
        bytes_per_sec,
        seconds: 3.0,
        partial: false,
        current,
        cpu_sec_per_gb: None,
        iops: None,
        p99_ns: None,
        bytes: None,
        members_read_bytes: None,
    }
}

fn options(quick: bool) -> Options {
    Options {
        budget_sec: 30.0,
        quick,
        allow_destructive: false,
        block_device: true,
    }
}

#[test]
fn a_clean_raid0_has_no_finding_and_plans_the_read_ahead_points() {
    let (t, s) = raid0();
    assert!(
        static_findings(&t, &s).is_empty(),
        "{:?}",
        ids(&static_findings(&t, &s))
    );
    assert_eq!(readahead_finding(&t, &s, &[]), None);
    let b = plan(&t, &s, &options(false));
    let ra = b.readahead.as_ref().unwrap();
    assert_eq!((ra.current_kb, ra.full_stripe_kb), (512, 256));
    assert_eq!(ra.values_kb, vec![256, 512, 1024]);
    // Three points within their share of 30 s (the slow-member runs have
    // theirs), each run's overhead kept out.
    let want = 30.0 * READAHEAD_SHARE / 3.0 - RUN_OVERHEAD_SEC;
    assert!((ra.seconds_each - want).abs() < 1e-9, "{}", ra.seconds_each);
    let total: f64 = b.checks.iter().map(|c| c.budget_sec).sum();
    assert!(total <= 30.0, "{total}");
    let status = |id: &str| b.checks.iter().find(|c| c.id == id).unwrap().status.clone();
    assert_eq!(status("readahead"), "ran");
    assert_eq!(status("parity"), "skipped");
    assert_eq!(status("writes"), "skipped");
    // Measured alike within the noise: still nothing.
    let pts = [(256, 100e6), (512, 104e6), (1024, 108e6)];
    assert_eq!(readahead_finding(&t, &s, &pts), None);
}

#[test]
fn quick_measures_nothing_and_says_so() {
    let (t, s) = raid0();
    let b = plan(&t, &s, &options(true));
    assert_eq!(b.readahead, None);
    let ra = b.checks.iter().find(|c| c.id == "readahead").unwrap();
    assert!(ra.detail.contains("--quick: not measured"), "{}", ra.detail);
}

#[test]
fn read_ahead_of_0_is_high_with_its_fix_and_the_measured_gain() {
    let (t, mut s) = raid0();
    set(&mut s, "md0", |f| f.read_ahead_kb = Some(0));
    // Static: the rule alone, two full stripes advised.
    let f = readahead_finding(&t, &s, &[]).unwrap();
    assert_eq!(
        (f.id.as_str(), f.severity),
        ("readahead-low", Severity::High)
    );
    assert_eq!(f.fix, vec!["echo 512 > /sys/block/md0/queue/read_ahead_kb"]);
    assert!(f.persist[0].contains("KERNEL==\"md0\", ATTR{queue/read_ahead_kb}=\"512\""));
    assert!(f.persist[1].contains("blockdev --setra 1024 /dev/md0"));
    assert!(!f.gain.as_ref().unwrap().measured);
    // Measured: the best point is advised, with before and after.
    let pts = [(0, 20e6), (256, 90e6), (512, 100e6), (1024, 150e6)];
    let f = readahead_finding(&t, &s, &pts).unwrap();
    assert_eq!(
        f.fix,
        vec!["echo 1024 > /sys/block/md0/queue/read_ahead_kb"]
    );
    let g = f.gain.unwrap();
    assert!(g.measured);
    assert_eq!(
        (g.before_bytes_per_sec, g.after_bytes_per_sec),
        (Some(20e6), Some(150e6))
    );
    assert!((g.pct.unwrap() - 650.0).abs() < 1e-9);
    // Nothing else is found.
    assert!(static_findings(&t, &s).is_empty());
    let b = plan(&t, &s, &options(false));
    assert_eq!(b.readahead.unwrap().values_kb, vec![0, 256, 512, 1024]);
}

#[test]
fn one_members_max_sectors_below_the_chunk_is_found_on_it_alone() {
    let (t, mut s) = raid0();
    set(&mut s, "loop2", |f| f.max_sectors_kb = Some(32));
    let all = static_findings(&t, &s);
    assert_eq!(ids(&all), vec!["request-split:loop2"]);
    let f = &all[0];
    assert_eq!(f.severity, Severity::Medium);
    assert!(f.title.contains("as 2 requests"), "{}", f.title);
    assert_eq!(
        f.fix,
        vec!["echo 1280 > /sys/block/loop2/queue/max_sectors_kb"]
    );
    assert!(f.persist[0].contains("KERNEL==\"loop2\""));
}

#[test]
fn a_member_whose_hardware_limit_is_below_the_chunk_gets_no_echo() {
    let (t, mut s) = raid0();
    set(&mut s, "loop1", |f| {
        f.max_sectors_kb = Some(32);
        f.max_hw_sectors_kb = Some(32);
    });
    let all = static_findings(&t, &s);
    assert_eq!(ids(&all), vec!["request-split:loop1"]);
    assert!(
        all[0].fix[0].contains("chunk of at most 32 KiB"),
        "{:?}",
        all[0].fix
    );
    assert!(all[0].persist.is_empty());
}

#[test]
fn one_member_with_another_scheduler_is_named_with_the_others_value() {
    let (t, mut s) = raid0();
    set(&mut s, "loop1", |f| {
        f.scheduler = Some("mq-deadline".into())
    });
    let all = static_findings(&t, &s);
    assert_eq!(ids(&all), vec!["member-scheduler-differs:loop1"]);
    assert_eq!(
        all[0].fix,
        vec!["echo none > /sys/block/loop1/queue/scheduler"]
    );
    assert_eq!(all[0].evidence.len(), 4);
    // A member that does not offer the others' scheduler is told so.
    let mut s2 = s.clone();
    set(&mut s2, "loop1", |f| {
        f.schedulers = vec!["mq-deadline".into(), "bfq".into()]
    });
    let f = static_findings(&t, &s2);
    assert!(
        f[0].fix[0].contains("does not offer none (it offers mq-deadline, bfq)"),
        "{:?}",
        f[0].fix
    );
    // The kernel sets nr_requests with the scheduler: said with it, not
    // a finding of its own.
    set(&mut s, "loop1", |f| f.nr_requests = Some(256));
    let all = static_findings(&t, &s);
    assert_eq!(ids(&all), vec!["member-scheduler-differs:loop1"]);
    assert!(
        all[0].evidence[4].contains("nr_requests is 256"),
        "{:?}",
        all[0].evidence
    );
    // Another member's nr_requests, with the common scheduler, is its own finding.
    set(&mut s, "loop3", |f| f.nr_requests = Some(64));
    assert_eq!(
        ids(&static_findings(&t, &s)),
        vec![
            "member-scheduler-differs:loop1",
            "member-nr_requests-differs:loop3"
        ]
    );
}

#[test]
fn settings_never_told_about_are_compared_too() {
    let (t, mut s) = raid0();
    set(&mut s, "loop3", |f| f.wbt_lat_usec = Some(0));
    set(&mut s, "loop0", |f| {
        f.write_cache = Some("write through".into())
    });
    set(&mut s, "loop2", |f| f.rotational = Some(true));
    let mut got = ids(&static_findings(&t, &s));
    got.sort();
    assert_eq!(
        got,
        vec![
            "member-rotational-differs:loop2",
            "member-wbt_lat_usec-differs:loop3",
            "member-write-cache-differs:loop0",
        ]
    );
}

/// The RAID0 with its second member behind a dm-delay device named `name`.
fn behind_dm_delay(name: &str) -> (Topology, Survey) {
    let (mut t, mut s) = raid0();
    let lp = t.root.members[1].clone();
    t.root.members[1] = Device {
        kind: "dm".into(),
        dm: Some(DmInfo {
            name: name.into(),
            target: Some("delay".into()),
            chunk_size: None,
            source: "dm table".into(),
        }),
        leaf: None,
        members: vec![lp],
        ..dev("dm-0", "dm")
    };
    let mut d = facts("dm-0", "dm");
    d.nr_requests = None;
    d.scheduler = Some("none".into());
    d.max_sectors_kb = Some(1280);
    s.devices.push(d);
    (t, s)
}

#[test]
fn a_member_behind_dm_delay_is_one_finding_not_one_per_setting() {
    let (t, s) = behind_dm_delay("slow1");
    let all = static_findings(&t, &s);
    assert_eq!(ids(&all), vec!["member-stack-differs:dm-0"]);
    assert!(
        all[0].title.contains("dm-0 is dm delay over loop"),
        "{}",
        all[0].title
    );
}

/// md1, a clean RAID5 of 4 loop devices, chunk 64k, stripe cache 256.
fn raid5_array() -> (Topology, Survey) {
    let loops: Vec<Device> = (0..4).map(|i| dev(&format!("loop{i}"), "loop")).collect();
    let t = Topology {
        target: "/dev/md1".into(),
        resolved: "block device".into(),
        root: md("md1", "raid5", 64 << 10, loops),
    };
    let mut s = Survey {
        devices: (0..4).map(|i| facts(&format!("loop{i}"), "loop")).collect(),
        fs_hints: None,
        numa_nodes: Vec::new(),
        sys: "/sys".into(),
        paths: Default::default(),
    };
    let mut m = facts("md1", "md");
    m.read_ahead_kb = Some(384);
    m.md = Some(MdFacts {
        array_state: Some("clean".into()),
        sync_action: Some("idle".into()),
        degraded: Some(0),
        stripe_cache_size: Some(256),
        group_thread_cnt: Some(0),
        ..Default::default()
    });
    s.devices.push(m);
    (t, s)
}

#[test]
fn raid5_with_the_smallest_stripe_cache_and_a_resync_is_found() {
    let (t, mut s) = raid5_array();
    set(&mut s, "md1", |f| {
        f.md = Some(MdFacts {
            array_state: Some("active".into()),
            sync_action: Some("resync".into()),
            sync_completed: Some("500 / 2000".into()),
            degraded: Some(1),
            stripe_cache_size: Some(17),
            group_thread_cnt: Some(0),
            ..Default::default()
        })
    });
    let all = static_findings(&t, &s);
    let mut got = ids(&all);
    got.sort();
    assert_eq!(
        got,
        vec![
            "degraded:md1",
            "parity-one-thread:md1",
            "resync:md1",
            "stripe-cache-small:md1"
        ]
    );
    let sc = all.iter().find(|f| f.id == "stripe-cache-small").unwrap();
    assert!(sc.title.contains("= 65"), "{}", sc.title);
    assert!(sc.fix[0].starts_with("echo 256 > /sys/block/md1/md/stripe_cache_size"));
    assert_eq!(
        state_words(&t, &s),
        vec!["md1: active, degraded: 1 of 4 members missing, resync in progress (25% done)"]
    );
    let b = plan(&t, &s, &options(false));
    let status = |id: &str| b.checks.iter().find(|c| c.id == id).unwrap().status.clone();
    assert_eq!(status("parity"), "ran");
    assert_eq!(status("state"), "ran");
    // The state comes first among the findings of its severity.
    let doc = assemble(
        "/dev/md1".into(),
        t,
        &s,
        &b,
        all,
        Vec::new(),
        None,
        1.0,
        false,
    );
    assert_eq!(doc.findings[0].id, "degraded");
    assert_eq!(doc.findings[1].id, "resync");
    assert!(doc.fails(Some(Severity::High)));
    assert!(!doc.fails(None));
}

#[test]
fn a_misaligned_partition_under_md_is_found() {
    let (mut t, mut s) = raid0();
    let mut p = dev("loop0p1", "partition");
    p.parent = Some("loop0".into());
    t.root.members[0] = p;
    let mut f = facts("loop0p1", "partition");
    f.parent = Some("loop0".into());
    f.start_sectors = Some(2049);
    s.devices.push(f);
    let all = static_findings(&t, &s);
    assert_eq!(
        ids(&all),
        vec![
            "partition-misaligned:loop0p1",
            "member-stack-differs:loop0p1"
        ]
    );
    assert_eq!(all[0].severity, Severity::Medium);
    assert!(all[0].title.contains("sector 2049"), "{}", all[0].title);
    // At 1 MiB: nothing about the partition.
    set(&mut s, "loop0p1", |f| f.start_sectors = Some(2048));
    assert!(!ids(&static_findings(&t, &s))[0].starts_with("partition"));
}

#[test]
fn the_document_round_trips_through_json() {
    let (t, mut s) = raid0();
    set(&mut s, "md0", |f| f.read_ahead_kb = Some(0));
    let b = plan(&t, &s, &options(true));
    let f: Vec<Finding> = readahead_finding(&t, &s, &[]).into_iter().collect();
    let doc = assemble(
        "/dev/md0".into(),
        t,
        &s,
        &b,
        f,
        Vec::new(),
        None,
        0.2,
        false,
    );
    let text = serde_json::to_string(&doc).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["kind"], "findings");
    assert_eq!(v["findings"][0]["severity"], "high");
    let back: FindingsDocument = serde_json::from_str(&text).unwrap();
    assert_eq!(back, doc);
}

#[test]
fn the_slow_member_is_judged_by_compares_verdict_with_its_figures_beside_the_median() {
    use crate::analysis::slow_member::Sample;
    let (t, s) = raid0();
    let sample = |mb: f64| Sample::measured(mb * 1e6, Some(5_000_000), 200);
    let runs = |mb: [f64; 3]| mb.iter().map(|&m| sample(m)).collect::<Vec<_>>();
    let samples = vec![
        ("/dev/loop0".to_string(), runs([100.0, 102.0, 98.0])),
        ("/dev/loop1".to_string(), runs([101.0, 99.0, 100.0])),
        ("/dev/loop2".to_string(), runs([30.0, 31.0, 29.0])),
        ("/dev/loop3".to_string(), runs([99.0, 100.0, 103.0])),
    ];
    let (v, f) = slow_members(&t, &samples, None);
    assert!(v.judged());
    assert_eq!(ids(&f), vec!["slow-member:loop2"]);
    assert!(f[0].title.contains("30.0 MB/s"), "{}", f[0].title);
    assert!(
        f[0].evidence[0].contains("the median member"),
        "{:?}",
        f[0].evidence
    );
    assert!(f[0].fix[0].starts_with("smartctl -x /dev/loop2"));
    let g = f[0].gain.as_ref().unwrap();
    assert!(!g.measured);
    // Alike members: none flagged.
    let alike: Vec<(String, Vec<Sample>)> = (0..4)
        .map(|i| (format!("/dev/loop{i}"), runs([100.0, 97.0, 103.0])))
        .collect();
    let (v, f) = slow_members(&t, &alike, None);
    assert!(v.judged() && f.is_empty());
    // A slow member a static check found at fault: one finding, with the
    // measurement as its evidence.
    let mut s2 = s.clone();
    set(&mut s2, "loop2", |f| f.max_sectors_kb = Some(32));
    let mut all = static_findings(&t, &s2);
    let (_, slow) = slow_members(&t, &samples, None);
    add_slow(&mut all, slow);
    assert_eq!(ids(&all), vec!["request-split:loop2"]);
    assert!(
        all[0]
            .evidence
            .iter()
            .any(|e| e.starts_with("measured: member loop2 is slow")),
        "{:?}",
        all[0].evidence
    );
    // Static checks alone plan it, with the budget split.
    let b = plan(&t, &s, &options(false));
    let p = b.slow.unwrap();
    assert_eq!(p.members.len(), 4);
    assert_eq!(p.repeats, SLOW_REPEATS);
    assert!(plan(&t, &s, &options(true)).slow.is_none());
}

#[test]
fn measured_request_sizes_back_a_finding_or_name_a_split_nobody_planted() {
    let (t, mut s) = raid0();
    set(&mut s, "loop1", |f| f.max_sectors_kb = Some(32));
    let mut all = static_findings(&t, &s);
    let why = "max_sectors_kb is 32".to_string();
    measured_splits(
        &mut all,
        &[
            ("loop1".into(), 32 << 10, 64 << 10, why.clone()),
            (
                "loop3".into(),
                16 << 10,
                64 << 10,
                "no queue limit of the member explains it".into(),
            ),
        ],
    );
    assert_eq!(
        ids(&all),
        vec!["request-split:loop1", "request-split-measured:loop3"]
    );
    assert!(all[0]
        .evidence
        .last()
        .unwrap()
        .contains("requests of 32 KiB on average, for pieces of 64 KiB"));
    assert_eq!(all[1].severity, Severity::Medium);
    assert!(
        all[1].evidence[1].contains("no queue limit"),
        "{:?}",
        all[1].evidence
    );
    // Planned with the others, within the budget.
    let b = plan(&t, &s, &options(false));
    let r = b.requests.unwrap();
    assert_eq!((r.bs, r.chunk), (256 << 10, 64 << 10));
    let total: f64 = b.checks.iter().map(|c| c.budget_sec).sum();
    assert!(total <= 30.0, "{total}");
}

/// A findings document as `advise --json` writes it, with `ra` as the
/// volume's read-ahead and a read-ahead measurement at 512 KiB.
fn written(ra: u64, at_512: f64) -> Vec<u8> {
    let (t, mut s) = raid0();
    set(&mut s, "md0", |f| f.read_ahead_kb = Some(ra));
    let b = plan(&t, &s, &options(true));
    let f: Vec<Finding> = readahead_finding(&t, &s, &[]).into_iter().collect();
    let m = vec![point("readahead", "read_ahead_kb=512", at_512, false)];
    let doc = assemble("/dev/md0".into(), t, &s, &b, f, m, None, 1.0, false);
    serde_json::to_vec_pretty(&doc).unwrap()
}

fn given(bytes: &[u8], shown: &str) -> crate::document::Given {
    use crate::document::read::{read, Origin, Reader, READ_BACK};
    let origin = Origin {
        shown: shown.into(),
        reader: Reader::Diff,
    };
    crate::document::Given {
        shown: shown.into(),
        document: read(bytes, &origin, &READ_BACK).unwrap(),
    }
}

#[test]
fn report_and_diff_read_a_findings_document_back() {
    let before = written(0, 80e6);
    let after = written(512, 100e6);
    let doc = crate::document::load::load(&before, "before.json").unwrap();
    assert_eq!(doc.kind(), crate::document::Kind::Findings);
    let (a, b) = (given(&before, "before.json"), given(&after, "after.json"));
    let d = crate::document::diff::diff(
        &a,
        &b,
        &crate::document::diff::DiffOptions {
            alpha: 0.05,
            threshold_pct: None,
            force: false,
        },
    )
    .unwrap();
    // The fix resolved the read-ahead finding; the measurement both made is a row.
    assert_eq!(d.only_in_base, vec!["finding readahead-low md0 (high)"]);
    assert!(d.only_in_new.is_empty());
    assert_eq!(d.rows.len(), 1);
    assert_eq!(d.rows[0].label, "readahead read_ahead_kb=512");
    let mb = &d.rows[0].metrics[0];
    assert_eq!((mb.base, mb.new), (Some(80e6), Some(100e6)));
    // Nothing measured in common (two --quick runs) still diffs.
    let quick = |ra| {
        let (t, mut s) = raid0();
        set(&mut s, "md0", |f| f.read_ahead_kb = Some(ra));
        let b = plan(&t, &s, &options(true));
        let f: Vec<Finding> = readahead_finding(&t, &s, &[]).into_iter().collect();
        serde_json::to_vec(&assemble(
            "/dev/md0".into(),
            t,
            &s,
            &b,
            f,
            Vec::new(),
            None,
            0.1,
            false,
        ))
        .unwrap()
    };
    let d = crate::document::diff::diff(
        &given(&quick(512), "a.json"),
        &given(&quick(0), "b.json"),
        &crate::document::diff::DiffOptions {
            alpha: 0.05,
            threshold_pct: None,
            force: false,
        },
    )
    .unwrap();
    assert_eq!(d.only_in_new, vec!["finding readahead-low md0 (high)"]);
}

#[test]
fn an_lvm_volume_off_the_stripe_of_the_md_under_it_is_found() {
    let (md0, mut s) = raid0();
    let mut md_dev = md0.root;
    md_dev.dev = "9:0".into();
    let lv = Device {
        kind: "dm".into(),
        dm: Some(DmInfo {
            name: "vg-lv".into(),
            target: Some("linear".into()),
            chunk_size: None,
            source: "dm table".into(),
        }),
        leaf: None,
        members: vec![md_dev],
        ..dev("dm-0", "dm")
    };
    let t = Topology {
        target: "/dev/dm-0".into(),
        resolved: "block device".into(),
        root: lv,
    };
    let mut f = facts("dm-0", "dm");
    // pe_start 1 MiB + 192 KiB: on the chunk, off the full stripe (256k).
    f.dm_linear = vec![("md0".into(), (1 << 20) + (192 << 10))];
    s.devices.insert(0, f);
    let all = static_findings(&t, &s);
    assert_eq!(ids(&all), vec!["dm-offset-misaligned:dm-0,md0"]);
    assert_eq!(all[0].severity, Severity::Low);
    assert!(
        all[0].fix[0].contains("--dataalignment 256k /dev/md0"),
        "{:?}",
        all[0].fix
    );
    assert_eq!(
        all[0].evidence,
        vec!["dmsetup table vg-lv: linear 9:0 2432"]
    );
    // At 1 MiB: aligned to the full stripe; nothing.
    set(&mut s, "dm-0", |f| {
        f.dm_linear = vec![("md0".into(), 1 << 20)]
    });
    assert!(static_findings(&t, &s).is_empty());
}

#[test]
fn a_dm_name_with_shell_characters_is_quoted_in_the_fix() {
    // dmsetup takes any name but '/': a fix printed with it bare ran
    // another command than the one it said (here: `rm` after the `;`).
    let (t, s) = behind_dm_delay("slow 1;rm x");
    let all = static_findings(&t, &s);
    assert_eq!(ids(&all), vec!["member-stack-differs:dm-0"]);
    assert!(
        all[0].fix[0].starts_with("dmsetup table 'slow 1;rm x'   #"),
        "{:?}",
        all[0].fix
    );
}

#[test]
fn a_member_path_with_shell_characters_is_quoted_in_the_fix() {
    use crate::analysis::slow_member::Sample;
    let (t, _) = raid0();
    let runs = |mb: f64| {
        (0..3)
            .map(|_| Sample::measured(mb * 1e6, Some(5_000_000), 200))
            .collect::<Vec<_>>()
    };
    let mut samples = vec![
        ("/dev/loop0".to_string(), runs(100.0)),
        ("/dev/loop1".to_string(), runs(100.0)),
        ("/dev/loop2".to_string(), runs(30.0)),
        ("/dev/loop3".to_string(), runs(100.0)),
    ];
    // The member's node is whatever path the stack gave: quoted whole.
    let mut t = t;
    t.root.members[2].path = "/dev/disk/by-id/a b$(x)".into();
    samples[2].0 = "/dev/disk/by-id/a b$(x)".into();
    let (_, f) = slow_members(&t, &samples, None);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].fix[0].starts_with("smartctl -x '/dev/disk/by-id/a b$(x)'   #"),
        "{:?}",
        f[0].fix
    );
}

#[test]
fn a_dm_name_with_a_quote_keeps_the_udev_rule_one_shell_word() {
    let (mut t, mut s) = raid0();
    t.root.dm = Some(DmInfo {
        name: "it's".into(),
        target: Some("striped".into()),
        chunk_size: None,
        source: "dm table".into(),
    });
    set(&mut s, "md0", |f| f.read_ahead_kb = Some(0));
    let f = readahead_finding(&t, &s, &[]).unwrap();
    let rule = &f.persist[0];
    assert!(rule.starts_with("echo $'ACTION=="), "{rule}");
    assert!(rule.contains("it\\'s"), "{rule}");
}

#[test]
fn a_budget_the_battery_overruns_is_refused_with_the_least_that_fits() {
    // --budget 1ms planned 1 s windows anyway: the battery ran for many
    // seconds past the budget, said nowhere before it started.
    let (t, s) = raid0();
    let o = |b: f64| Options {
        budget_sec: b,
        ..options(false)
    };
    let e = check_budget(&t, &s, &o(0.001)).unwrap_err();
    assert!(e.starts_with("--budget 1ms: the checks md0 needs"), "{e}");
    let least: f64 = e
        .split("give --budget ")
        .nth(1)
        .and_then(|r| r.split('s').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{e}"));
    // The least it names fits, a second less does not, and what fits is
    // planned within the budget.
    assert!(check_budget(&t, &s, &o(least)).is_ok(), "{e}");
    assert!(check_budget(&t, &s, &o(least - 1.0)).is_err(), "{e}");
    assert!(plan(&t, &s, &o(least)).planned_sec() <= least + 1e-9);
    // The default and --quick fit whatever the budget.
    assert!(check_budget(&t, &s, &o(120.0)).is_ok());
    assert!(check_budget(
        &t,
        &s,
        &Options {
            budget_sec: 0.001,
            ..options(true)
        }
    )
    .is_ok());
}

#[test]
fn a_file_or_directory_is_not_called_a_mount_point() {
    // `advise /tmp/x` (a file, or a directory that mounts nothing) said
    // "a mount point" of it: it is neither, and the device is what to name.
    let (t, s) = raid0();
    let b = plan(
        &t,
        &s,
        &Options {
            block_device: false,
            ..options(false)
        },
    );
    for c in &b.checks {
        assert!(
            !c.detail.contains("a mount point:"),
            "{}: {}",
            c.id,
            c.detail
        );
    }
    let slow = b.checks.iter().find(|c| c.id == "slow-members").unwrap();
    assert!(
        slow.detail.starts_with("not a block device"),
        "{}",
        slow.detail
    );
    assert!(b.readahead.is_none() && b.slow.is_none() && b.requests.is_none());
}

#[test]
fn a_loop_device_with_no_backing_file_is_refused_not_found_clean() {
    // `advise /dev/loop5` (detached, size 0) said "findings: none".
    let (mut t, _) = raid0();
    assert_eq!(check_medium(&t), Ok(()));
    t.root.members[2].leaf.as_mut().unwrap().size = 0;
    let e = check_medium(&t).unwrap_err();
    assert!(e.starts_with("loop2 has no medium"), "{e}");
}

/// `--apply` makes each fix that is a setting restore can put back (the
/// read-ahead, a member's max_sectors_kb, a member's scheduler) and names
/// the one it leaves (nr_requests: not a setting stripebench changes).
#[test]
fn apply_makes_the_restorable_settings_and_names_the_fix_it_leaves() {
    let (t, mut s) = raid0();
    set(&mut s, "md0", |f| f.read_ahead_kb = Some(0));
    set(&mut s, "loop2", |f| f.max_sectors_kb = Some(32));
    set(&mut s, "loop1", |f| {
        f.scheduler = Some("mq-deadline".into())
    });
    let mut all = static_findings(&t, &s);
    all.extend(readahead_finding(&t, &s, &[(0, 20e6), (1024, 150e6)]));
    let (made, left) = to_apply(&all);
    let made: Vec<(String, String, String, String)> = made
        .into_iter()
        .map(|(f, x)| (f, x.device, x.attribute, x.value))
        .collect();
    let want = |f: &str, d: &str, a: &str, v: &str| (f.into(), d.into(), a.into(), v.into());
    assert!(
        made.contains(&want("readahead-low", "md0", "queue/read_ahead_kb", "1024")),
        "{made:?}"
    );
    assert!(
        made.contains(&want(
            "request-split",
            "loop2",
            "queue/max_sectors_kb",
            "1280"
        )),
        "{made:?}"
    );
    assert!(
        made.contains(&want(
            "member-scheduler-differs",
            "loop1",
            "queue/scheduler",
            "none"
        )),
        "{made:?}"
    );
    assert_eq!(made.len(), 3, "{made:?}");
    assert!(left.is_empty(), "{left:?}");
    set(&mut s, "loop3", |f| f.nr_requests = Some(64));
    let (_, left) = to_apply(&static_findings(&t, &s));
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(
        left[0].starts_with(
            "member-nr_requests-differs (loop3): its setting is not one restore can put back"
        ),
        "{left:?}"
    );
    // What was measured at the array's settings, before and after.
    let m = |check: &str, setting: &str, mb: f64, current: bool| {
        point(check, setting, mb * 1e6, current)
    };
    let before = [
        m("readahead", "read_ahead_kb=0", 20.0, true),
        m("readahead", "read_ahead_kb=1024", 150.0, false),
        m("slow-members", "run 1", 400.0, true),
    ];
    let after = [
        m("readahead", "read_ahead_kb=256", 120.0, false),
        m("readahead", "read_ahead_kb=1024", 148.0, true),
        m("slow-members", "run 1", 410.0, true),
    ];
    let c = compared(&before, &after);
    assert_eq!(c.len(), 2);
    assert_eq!(
        (
            c[0].check.as_str(),
            c[0].before_bytes_per_sec,
            c[0].after_bytes_per_sec
        ),
        ("readahead", Some(20e6), Some(148e6))
    );
}

/// The HTML page: each finding with its severity, the fix to copy, the
/// read-ahead points as bars, what --apply changed; text from the stack
/// (a device's name) escaped.
#[test]
fn the_html_page_shows_findings_fixes_bars_and_what_was_applied() {
    let (t, mut s) = raid0();
    set(&mut s, "md0", |f| f.read_ahead_kb = Some(0));
    let pts = [(0, 20e6), (256, 90e6), (1024, 150e6)];
    let mut f: Vec<Finding> = readahead_finding(&t, &s, &pts).into_iter().collect();
    f[0].evidence.push("<script>alert(1)</script>".into());
    let m: Vec<Measurement> = pts
        .iter()
        .map(|(kb, r)| point("readahead", format!("read_ahead_kb={kb}"), *r, *kb == 0))
        .collect();
    let b = plan(&t, &s, &options(false));
    let mut doc = assemble(
        "/dev/md0".into(),
        t,
        &s,
        &b,
        Vec::new(),
        m.clone(),
        None,
        1.0,
        false,
    );
    doc.applied = Some(Applied {
        changes: vec![Change {
            finding: "readahead-low".into(),
            device: "md0".into(),
            attribute: "queue/read_ahead_kb".into(),
            old: "0".into(),
            new: "1024".into(),
        }],
        before: f.clone(),
        compared: compared(&m, &m),
        not_applied: vec!["member-scheduler-differs (loop1): by hand".into()],
    });
    let html = crate::report::html::findings(&doc).unwrap();
    assert!(
        html.contains("<td>md0 queue/read_ahead_kb</td><td>0</td><td>1024</td>"),
        "{html}"
    );
    assert!(html.contains("gone"));
    assert!(html.contains("not applied: member-scheduler-differs"));
    assert!(html.contains("None: nothing the battery checks is wrong"));
    assert!(html.contains("<svg"), "the read-ahead bars");
    // With the finding itself on the page.
    doc.findings = f;
    doc.applied = None;
    let html = crate::report::html::findings(&doc).unwrap();
    assert!(
        html.contains("<span class=\"badge bad\">high</span>readahead-low: "),
        "{html}"
    );
    assert!(
        html.contains(
            "<pre class=\"copy\">echo 1024 &gt; /sys/block/md0/queue/read_ahead_kb</pre>"
        ),
        "{html}"
    );
    assert!(
        html.contains("Gain, measured: 20.0 → 150.0 MB/s (+650%)"),
        "{html}"
    );
    assert!(!html.contains("<script>alert"), "escaped");
    assert!(html.contains("&lt;script&gt;"));
}

/// Seed 004 from runs already made: one buffered reader (the read-ahead
/// run at the array's value) against the members read O_DIRECT together,
/// with the CPU per byte of each; info, never a fault.
#[test]
fn one_buffered_reader_is_set_against_direct_per_member_with_its_cpu() {
    let (t, _) = raid0();
    let m = |check: &str, mb: f64, current: bool, cpu: f64| Measurement {
        cpu_sec_per_gb: Some(cpu),
        ..point(check, "", mb * 1e6, current)
    };
    let ms = [
        m("readahead", 931.0, true, 1.9),
        m("readahead", 1200.0, false, 1.7),
        m("slow-members", 2785.0, true, 0.2),
        m("slow-members", 2700.0, true, 0.2),
        m("slow-members", 2900.0, true, 0.2),
    ];
    let f = buffered_direct(&t, &ms).unwrap();
    assert_eq!(
        (f.id.as_str(), f.severity),
        ("buffered-direct-gap", Severity::Info)
    );
    assert!(
        f.title.contains("931.0 MB/s") && f.title.contains("2785.0 MB/s (3.0 ×)"),
        "{}",
        f.title
    );
    assert!(
        f.meaning.contains("9.5 × the CPU per byte"),
        "{}",
        f.meaning
    );
    // Without a buffered run at the array's value there is nothing to set
    // against.
    assert!(buffered_direct(&t, &ms[1..]).is_none());
}

/// The file system's stripe hints against the array: unset is low, wrong
/// is medium (each with the command that sets them), right is nothing.
#[test]
fn file_system_stripe_hints_are_weighed_against_the_chunk_and_full_stripe() {
    use crate::device::fs_hints::FsHints;
    let (t, mut s) = raid0();
    let hints = |fs: &str, unit: Option<u64>, width: Option<u64>| FsHints {
        fs: fs.into(),
        block_bytes: 4096,
        unit_bytes: unit,
        width_bytes: width,
    };
    s.fs_hints = Some(hints("ext4", None, None));
    let f = static_findings(&t, &s);
    assert_eq!(ids(&f), vec!["fs-stripe-hints-unset:md0"]);
    assert_eq!(f[0].severity, Severity::Low);
    assert_eq!(
        f[0].fix,
        vec!["tune2fs -E stride=16,stripe_width=64 /dev/md0"]
    );
    // An array grown from 3 to 4 members after mkfs.xfs: swidth is 3 chunks.
    s.fs_hints = Some(hints("xfs", Some(64 << 10), Some(192 << 10)));
    let f = static_findings(&t, &s);
    assert_eq!(ids(&f), vec!["fs-stripe-hints-wrong:md0"]);
    assert_eq!(f[0].severity, Severity::Medium);
    assert!(f[0].title.contains("swidth of 192 KiB"), "{}", f[0].title);
    assert!(
        f[0].fix[0].contains("sunit=128,swidth=512"),
        "{:?}",
        f[0].fix
    );
    s.fs_hints = Some(hints("xfs", Some(64 << 10), Some(256 << 10)));
    assert!(static_findings(&t, &s).is_empty());
}

/// The queue-depth knee: the least depth at 90 % of the best IOPS, with
/// what the deepest run paid in p99 for what it gained; planned only when
/// the budget leaves a window at each depth.
#[test]
fn the_queue_depth_knee_is_the_least_depth_near_the_best_rate() {
    let (t, s) = raid0();
    let m = |d: u32, iops: f64, p99_us: u64| Measurement {
        iops: Some(iops),
        p99_ns: Some(p99_us * 1000),
        ..point("queue-depth", format!("iodepth={d}"), iops * 4096.0, false)
    };
    let ms = [
        m(1, 10_000.0, 150),
        m(4, 36_000.0, 200),
        m(16, 41_000.0, 700),
        m(64, 42_000.0, 3100),
    ];
    let f = queue_knee(&t, &ms).unwrap();
    assert_eq!(
        (f.id.as_str(), f.severity),
        ("queue-depth-knee", Severity::Info)
    );
    assert!(f.title.contains("at 16 I/Os in flight (41000 IOPS); at 64 in flight it made +2% I/Os per second for a p99 of 3.10 ms (at 16: 0.70 ms)"), "{}", f.title);
    assert_eq!(f.evidence.len(), 4);
    assert!(
        queue_knee(&t, &ms[..2]).is_none(),
        "two points are no curve"
    );
    // Planned at the default budget, skipped with the least budget at 30 s.
    let b = plan(
        &t,
        &s,
        &Options {
            budget_sec: 120.0,
            ..options(false)
        },
    );
    assert_eq!(b.queue.as_ref().unwrap().depths, vec![1, 4, 16, 64]);
    let b = plan(
        &t,
        &s,
        &Options {
            budget_sec: 30.0,
            ..options(false)
        },
    );
    assert!(b.queue.is_none());
    let q = b.checks.iter().find(|c| c.id == "queue-depth").unwrap();
    assert!(q.detail.contains("--budget 80s or more"), "{}", q.detail);
    assert!(b.planned_sec() <= 30.0);
}

/// --allow-destructive on parity RAID: full-stripe writes at the array's
/// stripe cache and at the fix's, and random chunk-sized writes; the
/// members' reads during full stripes are read-modify-write (medium), the
/// random writes' cost is said (info), and the stripe cache's finding gets
/// its measured gain.
#[test]
fn parity_write_runs_find_read_modify_write_and_measure_the_stripe_cache() {
    let (t, mut s) = raid5_array();
    set(&mut s, "md1", |f| {
        f.md.as_mut().unwrap().stripe_cache_size = Some(17)
    });
    let o = Options {
        allow_destructive: true,
        budget_sec: 120.0,
        ..options(false)
    };
    let b = plan(&t, &s, &o);
    let w = b.writes.clone().expect("planned with --allow-destructive");
    assert!(b.planned_sec() <= 120.0);
    assert_eq!(w.stripe_caches, vec![17, 256]);
    assert_eq!((w.full_stripe, w.chunk), (192 << 10, 64 << 10));
    let c = b.checks.iter().find(|c| c.id == "writes").unwrap();
    assert!(
        c.detail.starts_with("DESTROYS the volume's data"),
        "{}",
        c.detail
    );
    let ro = Options {
        allow_destructive: false,
        ..o
    };
    assert!(plan(&t, &s, &ro).writes.is_none(), "read-only without it");
    let m = |setting: &str, mb: f64, current: bool, read: u64| Measurement {
        bytes: Some(300 << 20),
        members_read_bytes: Some(read),
        ..point("writes", setting, mb * 1e6, current)
    };
    let ms = [
        m("full-stripe stripe_cache_size=17", 40.0, true, 90 << 20),
        m("full-stripe stripe_cache_size=256", 120.0, false, 1 << 20),
        m("random stripe_cache_size=17", 8.0, true, 250 << 20),
    ];
    let mut f = static_findings(&t, &s);
    writes_findings(&t, &mut f, &ms);
    let found = ids(&f);
    assert!(
        found.contains(&"rmw-full-stripe:md1".to_string()),
        "{found:?}"
    );
    assert!(
        found.contains(&"rmw-sub-stripe:md1".to_string()),
        "{found:?}"
    );
    let sc = f.iter().find(|x| x.id == "stripe-cache-small").unwrap();
    let g = sc.gain.as_ref().unwrap();
    assert!(g.measured);
    assert_eq!(
        (g.before_bytes_per_sec, g.after_bytes_per_sec),
        (Some(40e6), Some(120e6))
    );
    // Full stripes that read nothing: no read-modify-write finding.
    let clean = [
        m("full-stripe stripe_cache_size=256", 120.0, true, 0),
        m("random stripe_cache_size=256", 8.0, true, 250 << 20),
    ];
    let mut f = Vec::new();
    writes_findings(&t, &mut f, &clean);
    assert_eq!(ids(&f), vec!["rmw-sub-stripe:md1"]);
}

/// NUMA placement: on one node nothing (skipped, said why); on two, the
/// members' node with the --cpus list that keeps workers local.
#[test]
fn numa_placement_names_the_members_node_and_its_cpus() {
    let (t, mut s) = raid0();
    let b = plan(&t, &s, &options(true));
    let c = b.checks.iter().find(|c| c.id == "numa").unwrap();
    assert_eq!(
        (c.status.as_str(), c.detail.as_str()),
        ("skipped", "one NUMA node: nothing to place")
    );
    s.numa_nodes = vec![(0, "0-7".into()), (1, "8-15".into())];
    for i in 0..4 {
        set(&mut s, &format!("loop{i}"), |f| f.numa_node = Some(1));
    }
    let f = static_findings(&t, &s);
    assert_eq!(ids(&f), vec!["numa-placement:loop0,loop1,loop2,loop3"]);
    assert_eq!(f[0].severity, Severity::Info);
    assert!(
        f[0].fix[0].starts_with("stripebench run --cpus 8-15 "),
        "{:?}",
        f[0].fix
    );
    assert_eq!(
        f[0].evidence,
        vec!["node 1 (CPUs 8-15): loop0, loop1, loop2, loop3"]
    );
    let b = plan(&t, &s, &options(true));
    assert_eq!(
        b.checks.iter().find(|c| c.id == "numa").unwrap().status,
        "ran"
    );
}

/// The battery's runs and windows add up to what it plans, with one
/// overhead per run.
#[test]
fn the_battery_counts_its_runs_and_windows() {
    let (t, s) = raid5_array();
    let o = Options {
        allow_destructive: true,
        budget_sec: 120.0,
        ..options(false)
    };
    let b = plan(&t, &s, &o);
    assert_eq!(
        b.runs(),
        3 + 1 + 3 + 4 + 2,
        "read-ahead, request, members, depths, writes"
    );
    let want = b.windows_sec() + b.runs() as f64 * RUN_OVERHEAD_SEC;
    assert!(
        (b.planned_sec() - want).abs() < 1e-9,
        "{} vs {want}",
        b.planned_sec()
    );
}

/// Regression (hostile pass over advise --apply): the page said a change
/// left its finding "still there" when only another device's finding of
/// the same kind was (one member's max_sectors_kb fixed, another's refused);
/// the text report, which matches the devices too, said "gone".
#[test]
fn the_html_page_judges_each_change_by_its_own_devices_finding() {
    let (t, mut s) = raid0();
    set(&mut s, "md0", |f| f.read_ahead_kb = Some(0));
    let pts = [(0, 20e6), (1024, 150e6)];
    let mut f: Vec<Finding> = readahead_finding(&t, &s, &pts).into_iter().collect();
    // The same finding, left on another device (md1).
    f[0].devices = vec!["md1".into()];
    f[0].settings = vec![Setting::new("md1", "queue/read_ahead_kb", 1024)];
    let b = plan(&t, &s, &options(false));
    let mut doc = assemble(
        "/dev/md0".into(),
        t,
        &s,
        &b,
        f.clone(),
        Vec::new(),
        None,
        1.0,
        false,
    );
    doc.applied = Some(Applied {
        changes: vec![Change {
            finding: f[0].id.clone(),
            device: "md0".into(),
            attribute: "queue/read_ahead_kb".into(),
            old: "0".into(),
            new: "1024".into(),
        }],
        before: f,
        compared: Vec::new(),
        not_applied: Vec::new(),
    });
    let html = crate::report::html::findings(&doc).unwrap();
    let row = html
        .split("<tr>")
        .find(|r| r.contains("<td>md0 queue/read_ahead_kb</td>"))
        .expect("the change's row");
    assert!(row.contains("<td>gone</td>"), "{row}");
}

/// The request-split fix, measured: the request run at the members' limits
/// and again with the fix's max_sectors_kb is the finding's gain.
#[test]
fn the_request_split_fix_gets_its_measured_gain() {
    let (t, mut s) = raid0();
    set(&mut s, "loop2", |f| f.max_sectors_kb = Some(32));
    let mut f = static_findings(&t, &s);
    let m = |mb: f64, current: bool| point("request-limits", "", mb * 1e6, current);
    member_fix_gain(&mut f, &[m(300.0, true), m(390.0, false)]);
    let g = f[0].gain.as_ref().unwrap();
    assert!(g.measured);
    assert_eq!(
        (g.before_bytes_per_sec, g.after_bytes_per_sec),
        (Some(300e6), Some(390e6))
    );
    assert!((g.pct.unwrap() - 30.0).abs() < 1e-9);
}

/// One member on another controller (PCI function) than the others: low,
/// named with the others' controller.
#[test]
fn a_member_on_another_controller_is_found() {
    let (t, mut s) = raid0();
    for i in 0..4 {
        let c = if i == 3 {
            "0000:5e:00.0"
        } else {
            "0000:00:1f.2"
        };
        set(&mut s, &format!("loop{i}"), |f| {
            f.controller = Some(c.into())
        });
    }
    let f = static_findings(&t, &s);
    assert_eq!(ids(&f), vec!["member-controller-differs:loop3"]);
    assert_eq!(f[0].severity, Severity::Low);
    assert!(
        f[0].title.contains("the others have 0000:00:1f.2"),
        "{}",
        f[0].title
    );
}

/// Issue 42: a member md is rebuilding is written by the recovery as fast
/// as its limits allow: slow beside the others, but busy, not at fault;
/// advise never flags it. And an array resyncing (medium) is said before
/// a high finding of another check: every other figure is low meanwhile.
#[test]
fn a_member_being_rebuilt_is_never_slow_and_the_arrays_state_ranks_first() {
    use crate::analysis::slow_member::Sample;
    use crate::device::topology::{MdMember, MdState};
    let (mut t, s) = raid5_array();
    t.root.md.as_mut().unwrap().state = Some(MdState {
        degraded: Some(1),
        sync_action: Some("recover".into()),
        members: (0..4)
            .map(|i| MdMember {
                name: format!("loop{i}"),
                slot: Some(i),
                state: vec![if i == 2 { "spare" } else { "in_sync" }.into()],
                recovery_start: None,
            })
            .collect(),
        ..Default::default()
    });
    let sample = |mb: f64| Sample::measured(mb * 1e6, Some(5_000_000), 200);
    let runs = |mb: [f64; 3]| mb.iter().map(|&m| sample(m)).collect::<Vec<_>>();
    let samples = vec![
        ("/dev/loop0".to_string(), runs([100.0, 102.0, 98.0])),
        ("/dev/loop1".to_string(), runs([101.0, 99.0, 100.0])),
        ("/dev/loop2".to_string(), runs([30.0, 31.0, 29.0])),
        ("/dev/loop3".to_string(), runs([99.0, 100.0, 103.0])),
    ];
    let (v, slow) = slow_members(&t, &samples, None);
    assert!(v.judged() && v.flagged.is_empty(), "{v:?}");
    assert!(slow.is_empty());
    // A resync (medium) before a high finding of another check.
    let mut s2 = s.clone();
    set(&mut s2, "md1", |f| {
        f.md = Some(MdFacts {
            sync_action: Some("resync".into()),
            degraded: Some(0),
            ..Default::default()
        })
    });
    let mut all = static_findings(&t, &s2);
    let mut high = all.iter().find(|f| f.id == "resync").unwrap().clone();
    high.id = "made-up-high".into();
    high.check = "queue".into();
    high.severity = Severity::High;
    all.push(high);
    let b = plan(&t, &s2, &options(false));
    let doc = assemble(
        "/dev/md1".into(),
        t,
        &s2,
        &b,
        all,
        Vec::new(),
        None,
        1.0,
        false,
    );
    assert_eq!(doc.findings[0].id, "resync", "{:?}", ids(&doc.findings));
}

/// dm-crypt over a RAID5 (issue 42, part 6): without no_read_workqueue and
/// no_write_workqueue the layer is a finding, with the commands that set
/// them and the sweep that measures the layer against the md below; with
/// both set, none. The key dmsetup shows is never read.
#[test]
fn dm_crypt_without_its_workqueue_flags_is_found_with_the_commands_that_set_them() {
    use crate::device::survey::CryptFacts;
    let (md1, mut s) = raid5_array();
    let crypt = Device {
        kind: "dm".into(),
        dm: Some(DmInfo {
            name: "data".into(),
            target: Some("crypt".into()),
            chunk_size: None,
            source: "dm table".into(),
        }),
        leaf: None,
        members: vec![md1.root],
        ..dev("dm-0", "dm")
    };
    let t = Topology {
        target: "/dev/mapper/data".into(),
        resolved: "block device".into(),
        root: crypt,
    };
    let mut f = facts("dm-0", "dm");
    f.dm_crypt = Some(CryptFacts {
        cipher: "aes-xts-plain64".into(),
        flags: vec!["same_cpu_crypt".into()],
    });
    s.devices.insert(0, f);
    let crypt_only = |s: &Survey| -> Vec<Finding> {
        static_findings(&t, s)
            .into_iter()
            .filter(|f| f.check == "crypt")
            .collect()
    };
    let all = crypt_only(&s);
    assert_eq!(ids(&all), vec!["crypt-workqueues:dm-0"]);
    let c = &all[0];
    assert_eq!(c.severity, Severity::Low);
    assert!(
        c.title
            .contains("no_read_workqueue and no_write_workqueue off"),
        "{}",
        c.title
    );
    assert_eq!(
        c.evidence,
        vec!["dmsetup table data: crypt aes-xts-plain64 ... (flags same_cpu_crypt)"]
    );
    assert!(c.fix[0]
        .starts_with("cryptsetup refresh --perf-no_read_workqueue --perf-no_write_workqueue data"));
    let gain = c.gain.as_ref().unwrap();
    assert!(
        gain.what.ends_with("stripebench sweep --param target=each --rw read --bs 1m --direct /dev/mapper/data /dev/md1"),
        "{}",
        gain.what
    );
    set(&mut s, "dm-0", |f| {
        f.dm_crypt.as_mut().unwrap().flags =
            vec!["no_read_workqueue".into(), "no_write_workqueue".into()]
    });
    assert!(crypt_only(&s).is_empty());
}
