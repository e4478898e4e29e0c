//! The compare document assembled from phases made by hand: kinds, shares,
//! ceilings, the verdict and the phases kept out of them.

use super::*;
use crate::document::run::RunDocument;
use crate::report::fixtures::sample_doc;

/// A clean run document (no errors, every worker with 1000 I/Os) whose
/// total is `rate` B/s over targets of `rates`, each with 1000 I/Os.
fn run(rate: f64, targets: &[(&str, f64)]) -> RunDocument {
    let mut d = sample_doc();
    for w in &mut d.workers {
        w.figures.errors = 0;
        w.figures.ios = 1000;
        w.errors_by_errno.clear();
        w.error_samples.clear();
        w.stopped_on_errors = false;
        w.ended_by = crate::measure::worker::Ending::Deadline;
    }
    // As many CPUs as any test's workers: not crowded (unless a test says).
    d.host.cpus = 64;
    d.total.figures.errors = 0;
    d.total.figures.ios = 1000;
    d.total.figures.bytes_per_sec = rate;
    let mut first = d.targets[0].clone();
    first.figures.errors = 0;
    first.failed = false;
    first.figures.ios = 1000;
    d.targets = targets
        .iter()
        .enumerate()
        .map(|(i, &(path, r))| {
            let mut t = first.clone();
            t.index = i;
            t.path = path.into();
            t.figures.bytes_per_sec = r;
            t
        })
        .collect();
    d
}

/// A volume whose root is `md` (level, members, chunk), or no md at all.
fn volume_of(md: Option<(&str, u32)>) -> Volume {
    let root = crate::device::topology::Device {
        name: "md0".into(),
        dev: "9:0".into(),
        path: "/dev/md0".into(),
        kind: "md".into(),
        parent: None,
        md: md.map(|(level, n)| crate::device::topology::MdInfo {
            level: level.into(),
            raid_disks: n,
            chunk_size: Some(65536),
            layout: None,
            state: None,
        }),
        dm: None,
        btrfs: None,
        leaf: None,
        queue: None,
        geometry: None,
        members: Vec::new(),
    };
    Volume {
        volume: "/dev/md0".into(),
        topology: Topology {
            target: "/dev/md0".into(),
            resolved: "block device".into(),
            root,
        },
        test_file: None,
        notes: vec!["said before".into()],
        repeat: 1,
    }
}

fn volume() -> Volume {
    volume_of(None)
}

/// Three members (the third slow), each alone, together, and the
/// volume's four phases.
fn phases() -> Vec<Phase> {
    let members = ["/dev/a", "/dev/b", "/dev/c"].map(String::from);
    let rates = [110.0, 105.0, 40.0, 400.0, 150.0, 360.0, 2000.0, 90.0];
    let together = [("/dev/a", 150.0), ("/dev/b", 150.0), ("/dev/c", 100.0)];
    phase_kinds(&members, &[], true, false, false)
        .into_iter()
        .zip(rates)
        .map(|(k, r)| {
            let targets: Vec<(&str, f64)> = match &k {
                PhaseKind::Together => together.to_vec(),
                PhaseKind::Alone { member } => vec![(member.as_str(), r)],
                _ => vec![("/dev/md0", r)],
            };
            Phase::of(k.clone(), run(r, &targets))
        })
        .collect()
}

/// `n` members, every member phase run `repeats` times: member `i`'s rate
/// in run `r` is `rate(i, r)`; the volume's phases after them.
fn members_together(n: usize, repeats: u32, rate: impl Fn(usize, u32) -> f64) -> Vec<Phase> {
    let names: Vec<String> = (0..n).map(|i| format!("/dev/loop{i}")).collect();
    let mut runs = Vec::new();
    for (k, r) in phase_plan(&names, &[], false, false, false, repeats as usize) {
        let targets: Vec<(&str, f64)> = match &k {
            PhaseKind::Together => names
                .iter()
                .enumerate()
                .map(|(i, m)| (m.as_str(), rate(i, r)))
                .collect(),
            _ => vec![("/dev/md0", 0.9e8 * n as f64)],
        };
        let total: f64 = targets.iter().map(|t| t.1).sum();
        let total = if k == PhaseKind::Together {
            total
        } else {
            0.9e8 * n as f64
        };
        runs.push(Phase::run(k, r, run(total, &targets)));
    }
    runs
}

/// A deterministic noise in [-1, 1] (no RNG crate: a hash of the inputs).
fn noise(i: usize, r: u32) -> f64 {
    let x = (i as u64 * 2654435761 + u64::from(r) * 40503).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((x >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

#[test]
fn phases_are_named_as_compare_always_named_them() {
    let names: Vec<String> = phase_kinds(
        &["/dev/sdb".into(), "/dev/sdc".into()],
        &[],
        true,
        false,
        false,
    )
    .iter()
    .map(|k| k.to_string())
    .collect();
    assert_eq!(
        names,
        [
            "member /dev/sdb alone",
            "member /dev/sdc alone",
            "members together, O_DIRECT",
            "volume, 1 worker, O_DIRECT",
            "volume, 2 workers, O_DIRECT",
            "volume, 2 workers, buffered",
            "volume, 1 worker, buffered",
        ]
    );
    for n in &names {
        assert_eq!(PhaseKind::parse(n).to_string(), *n);
        assert!(!matches!(PhaseKind::parse(n), PhaseKind::Other(_)), "{n}");
    }
    // A one-member volume: its one worker per member is still that phase.
    assert_eq!(
        PhaseKind::parse("volume, 1 workers, O_DIRECT"),
        PhaseKind::VolumePerMember { workers: 1 }
    );
    assert_eq!(
        PhaseKind::parse("members"),
        PhaseKind::Other("members".into())
    );
    // A name this version would not write is kept as it is.
    for odd in [
        "volume, 02 workers, O_DIRECT",
        "volume, +2 workers, buffered",
    ] {
        assert_eq!(PhaseKind::parse(odd), PhaseKind::Other(odd.into()));
    }
    assert_eq!(
        format!("{:<30}|", PhaseKind::Together),
        "members together, O_DIRECT    |"
    );
}

#[test]
fn under_rw_write_the_members_are_read_and_the_volume_written_in_full_and_sub_stripes() {
    let names: Vec<String> = phase_kinds(
        &["/dev/sdb".into(), "/dev/sdc".into()],
        &[],
        false,
        true,
        false,
    )
    .iter()
    .map(|k| k.to_string())
    .collect();
    assert_eq!(
        names,
        [
            "members together, O_DIRECT",
            "volume, 2 workers, full-stripe writes",
            "volume, 2 workers, sub-stripe writes",
        ]
    );
    for n in &names {
        let k = PhaseKind::parse(n);
        assert_eq!(k.to_string(), *n);
        assert_eq!(k.writes(), n.ends_with("writes"), "{n}");
        assert!(!matches!(k, PhaseKind::Other(_)), "{n}");
    }
    // The efficiency is the full-stripe phase's, against the write
    // ceiling (RAID5 of 3: 2 data members), with what it rests on.
    let members = [("/dev/a", 100.0), ("/dev/b", 100.0), ("/dev/c", 100.0)];
    let mut full = run(150.0, &[("/dev/md0", 150.0)]);
    full.config.rw = crate::measure::config::RwMode::Write;
    let mut sub = full.clone();
    sub.total.figures.bytes_per_sec = 30.0;
    let runs = vec![
        Phase::of(PhaseKind::Together, run(300.0, &members)),
        Phase::of(PhaseKind::VolumeFullStripeWrites { workers: 3 }, full),
        Phase::of(PhaseKind::VolumeSubStripeWrites { workers: 3 }, sub),
    ];
    let d = assemble(volume_of(Some(("raid5", 3))), runs, false);
    assert_eq!(d.efficiency_ceiling.as_ref().unwrap().direction, "write");
    let e = d.stripe_efficiency.as_ref().unwrap();
    assert!((e.stripe_layer - 0.75).abs() < 1e-9, "{e:?}");
    assert_eq!(e.larger_loss, "stripe_layer", "{e:?}");
    assert!(
        d.efficiency_note
            .as_deref()
            .unwrap()
            .contains("the write ceiling rests on the members' read rate"),
        "{:?}",
        d.efficiency_note
    );
    assert!(d.direct_buffered.is_empty());
}

#[test]
fn the_volume_direct_against_buffered_gives_seed_004s_ratios_from_ok_phases_only() {
    // Phases: 1 worker O_DIRECT 150, 3 workers O_DIRECT 360, 3 buffered
    // 2000 (cached), 1 buffered 90.
    let d = assemble(volume(), phases(), false);
    let got: Vec<(String, String, f64)> = d
        .direct_buffered
        .iter()
        .map(|p| {
            (
                p.direct.to_string(),
                p.buffered.to_string(),
                p.ratio.unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "volume, 3 workers, O_DIRECT".into(),
                "volume, 1 worker, buffered".into(),
                4.0
            ),
            (
                "volume, 1 worker, O_DIRECT".into(),
                "volume, 1 worker, buffered".into(),
                150.0 / 90.0
            ),
            (
                "volume, 3 workers, O_DIRECT".into(),
                "volume, 3 workers, buffered".into(),
                0.18
            ),
        ]
    );
    let p = &d.direct_buffered[0];
    assert_eq!(p.direct_cpu_sec_per_gb, d.phases[5].cpu_sec_per_gb);
    assert!(p.direct_cpu_sec_per_gb.is_some());
    let text = crate::report::compare::render(&d);
    assert!(
        text.contains("  volume, 3 workers, O_DIRECT / volume, 1 worker, buffered = 4.00x (0.0 / 0.0 MB/s; CPU "),
        "{text}"
    );
    // A failed buffered phase pairs with nothing.
    let mut runs = phases();
    let last = runs.len() - 1;
    runs[last].status = PhaseStatus::Failed;
    let d = assemble(volume(), runs, false);
    assert_eq!(d.direct_buffered.len(), 1, "{:?}", d.direct_buffered);
    assert_eq!(
        d.direct_buffered[0].buffered.to_string(),
        "volume, 3 workers, buffered"
    );
}

#[test]
fn a_phase_is_written_and_read_under_its_name() {
    let p = Phase::of(
        PhaseKind::Alone {
            member: "/dev/sdb".into(),
        },
        run(1.0, &[("/dev/sdb", 1.0)]),
    );
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(v["name"], "member /dev/sdb alone");
    assert!(v.get("kind").is_none());
    let back: Phase = serde_json::from_value(v).unwrap();
    assert_eq!(back, p);
}

#[test]
fn shares_efficiency_and_the_slow_member_come_from_the_phases_kinds() {
    let d = assemble(volume(), phases(), false);
    assert!(!d.interrupted);
    assert_eq!(d.notes, ["said before"]);
    // The volume with one worker per member over 3 × its slowest member
    // together (100), and that member over the median (150).
    let e = d.stripe_efficiency.as_ref().unwrap();
    assert!((e.stripe_layer - 360.0 / 300.0).abs() < 1e-12, "{e:?}");
    assert!((e.imbalance - 100.0 / 150.0).abs() < 1e-12, "{e:?}");
    assert_eq!(e.slowest, "/dev/c");
    assert_eq!(e.larger_loss, "imbalance");
    // No RAID geometry on this root: RAID0's rule, said so.
    let c = d.efficiency_ceiling.as_ref().unwrap();
    assert_eq!(c.rule, "RAID0 reads: N × member");
    assert_eq!(c.members, 3.0);
    assert!(c.basis.contains("taken as RAID0"), "{}", c.basis);
    assert!(
        d.efficiency_note
            .as_deref()
            .unwrap()
            .starts_with("above 100%"),
        "{:?}",
        d.efficiency_note
    );
    let shares: Vec<f64> = d.members.iter().map(|m| m.share).collect();
    assert_eq!(shares, [150.0 / 400.0, 150.0 / 400.0, 100.0 / 400.0]);
    let solo: Vec<Option<f64>> = d.members.iter().map(|m| m.solo_bytes_per_sec).collect();
    assert_eq!(solo, [Some(110.0), Some(105.0), Some(40.0)]);
    assert_eq!(d.slowest.as_deref(), Some("/dev/c"));
    assert_eq!(d.members.iter().filter(|m| m.slow).count(), 1);
    assert!(d.members[2].slow);
}

#[test]
fn without_the_phases_it_needs_there_is_no_efficiency_and_no_member() {
    // Interrupted after the members alone: nothing to share out.
    let mut ps = phases();
    ps.truncate(3);
    ps[2].document.interrupted = true;
    let d = assemble(volume(), ps, false);
    assert!(d.interrupted);
    assert_eq!(d.stripe_efficiency, None);
    assert!(d.members.is_empty());
    assert_eq!(d.slowest, None);
    assert_eq!(
        d.notes.last().map(String::as_str),
        Some("interrupted: 3 of the phases ran; the figures cover what was measured")
    );
    // The buffered phase and the one-worker phase are not the volume's
    // one worker per member.
    let ps: Vec<Phase> = phases()
        .into_iter()
        .filter(|p| !matches!(p.kind, PhaseKind::VolumePerMember { .. }))
        .collect();
    let d = assemble(volume(), ps, true);
    assert_eq!(d.stripe_efficiency, None);
    assert!(d.interrupted);
    assert_eq!(d.members.len(), 3);
}

/// Regression (issue 23): with one member behind a delay among 16, the
/// minimum of a noisy together phase was named, and only ever one member.
#[test]
fn one_slow_member_of_16_is_the_only_one_flagged() {
    let runs = members_together(16, 3, |i, r| {
        if i == 11 {
            50.0e6
        } else {
            75.0e6 * (1.0 + 0.08 * noise(i, r))
        }
    });
    let d = assemble(volume(), runs, false);
    assert_eq!(d.repeats.len(), 2, "two more runs of the together phase");
    assert_eq!(d.phases.len(), 5);
    let v = d.verdict.as_ref().unwrap();
    assert!(v.judged(), "{v:?}");
    assert_eq!(v.source, "together");
    assert_eq!(v.runs, 3);
    let flagged: Vec<&str> = v.flagged.iter().map(|f| f.member.as_str()).collect();
    assert_eq!(flagged, ["/dev/loop11"]);
    let f = &v.flagged[0];
    assert_eq!(f.by, "rate");
    assert_eq!(f.figure, 50.0e6);
    assert!(f.figure < f.threshold && f.threshold < f.median, "{f:?}");
    assert_eq!(d.slowest.as_deref(), Some("/dev/loop11"));
    assert_eq!(d.members.iter().filter(|m| m.slow).count(), 1);
    assert!(d.members[11].slow);
    // Each member: the median of its 3 runs, their range, its I/Os.
    let m = &d.members[0];
    let (lo, hi) = m.range_bytes_per_sec.unwrap();
    assert!(lo <= m.figure_bytes_per_sec.unwrap() && m.figure_bytes_per_sec.unwrap() <= hi);
    assert_eq!(m.ios, 3000);
    let text = crate::report::compare::render(&d);
    println!("{text}");
    assert!(
        text.contains("SLOW: /dev/loop11: 50.0 MB/s below"),
        "{text}"
    );
    assert!(
        text.contains("members together, O_DIRECT (run 3 of 3)"),
        "{text}"
    );
    assert!(text.contains("slowest member: /dev/loop11"), "{text}");
}

#[test]
fn several_slow_members_are_each_flagged_slowest_first() {
    let runs = members_together(16, 1, |i, _| match i {
        3 => 40.0e6,
        9 => 30.0e6,
        _ => 75.0e6,
    });
    let d = assemble(volume(), runs, false);
    let v = d.verdict.as_ref().unwrap();
    let flagged: Vec<&str> = v.flagged.iter().map(|f| f.member.as_str()).collect();
    assert_eq!(flagged, ["/dev/loop9", "/dev/loop3"]);
    assert_eq!(d.slowest.as_deref(), Some("/dev/loop9"));
}

#[test]
fn equal_members_with_noise_flag_none() {
    for seed in 0..5u32 {
        let runs = members_together(16, 3, |i, r| 75.0e6 * (1.0 + 0.04 * noise(i, r + 7 * seed)));
        let d = assemble(volume(), runs, false);
        let v = d.verdict.as_ref().unwrap();
        assert!(v.judged());
        assert!(v.flagged.is_empty(), "seed {seed}: {:?}", v.flagged);
        assert_eq!(d.slowest, None);
        // The floor: exactly equal members have a MAD of 0 and flag none.
        let runs = members_together(8, 1, |_, _| 75.0e6);
        let v = assemble(volume(), runs, false).verdict.unwrap();
        assert!(v.flagged.is_empty());
        let r = v.rate.unwrap();
        assert_eq!(r.mad, 0.0);
        assert!((r.spread - crate::analysis::slow_member::RATE_FLOOR * 75.0e6).abs() < 1.0);
    }
    let text = crate::report::compare::render(&assemble(
        volume(),
        members_together(4, 1, |_, _| 75.0e6),
        false,
    ));
    assert!(text.contains("no member is off"), "{text}");
}

/// Regression (issue 23): on 64 members one member was flagged from a
/// single completed I/O.
#[test]
fn a_member_with_3_ios_is_not_judged_and_named() {
    let mut runs = members_together(8, 1, |i, _| if i == 5 { 1.0e6 } else { 75.0e6 });
    for p in runs.iter_mut().filter(|p| p.kind == PhaseKind::Together) {
        p.document.targets[5].figures.ios = 3;
    }
    let d = assemble(volume(), runs, false);
    let v = d.verdict.as_ref().unwrap();
    assert!(!v.judged());
    assert!(v.flagged.is_empty());
    assert_eq!(d.slowest, None);
    assert_eq!(
        v.not_enough_io,
        [Thin {
            member: "/dev/loop5".into(),
            ios: 3
        }]
    );
    let text = crate::report::compare::render(&d);
    assert!(
        text.contains("not enough I/O to judge (member /dev/loop5: 3 I/Os"),
        "{text}"
    );
    assert!(!text.contains("SLOW"), "{text}");
}

/// Regression (issue 23): a failing member's phases gave the efficiency
/// and the slowest member, and the text showed no error at all.
#[test]
fn a_failing_phase_is_marked_named_and_kept_out() {
    let mut runs = members_together(8, 3, |i, _| if i == 2 { 10.0e6 } else { 75.0e6 });
    // Run 2 of the together phase: member 2 fails and its worker stops.
    let p = runs
        .iter_mut()
        .find(|p| p.kind == PhaseKind::Together && p.repeat == 2)
        .unwrap();
    p.document.targets[2].figures.errors = 7;
    p.document.total.figures.errors = 7;
    p.document.workers[0].stopped_on_errors = true;
    p.document.workers[0].errors_by_errno = vec![crate::measure::worker::ErrnoCount {
        errno: 5,
        name: "EIO".into(),
        count: 7,
    }];
    p.document.targets[2].figures.bytes_per_sec = 1.0e3;
    let doc = p.document.clone();
    *p = Phase::run(PhaseKind::Together, 2, doc);
    assert_eq!(p.status, PhaseStatus::Failed);
    assert_eq!(p.failing, ["/dev/loop2"]);
    // The volume phase with one worker per member failed too.
    let v = runs
        .iter_mut()
        .find(|p| matches!(p.kind, PhaseKind::VolumePerMember { .. }))
        .unwrap();
    let mut doc = v.document.clone();
    doc.total.figures.errors = 1;
    doc.targets[0].figures.errors = 1;
    *v = Phase::of(v.kind.clone(), doc);
    let d = assemble(volume(), runs, false);
    assert!(d.failed());
    assert_eq!(d.stripe_efficiency, None, "the volume phase failed");
    assert!(d.efficiency_note.as_deref().unwrap().contains("failed"));
    // The verdict rests on runs 1 and 3 only: member 2's failed run is out.
    let v = d.verdict.as_ref().unwrap();
    assert_eq!(v.runs, 2);
    assert_eq!(d.members[2].ios, 2000);
    assert_eq!(d.members[2].errors, 7);
    assert_eq!(d.members[2].figure_bytes_per_sec, Some(10.0e6));
    let text = crate::report::compare::render(&d);
    println!("{text}");
    assert!(
        text.contains("FAILED: 7 I/O error(s) (EIO 7) on /dev/loop2; 1 of 2 worker(s) stopped on errors: kept out of the efficiency and the verdict"),
        "{text}"
    );
    assert!(text.contains("7 I/O error(s): FAILING"), "{text}");
    assert!(!text.contains("stripe efficiency"), "{text}");
}

/// Regression (issue 23): a phase with no I/O gave "stripe efficiency
/// 0.0%", and one where most workers did nothing was shown as a rate.
#[test]
fn a_phase_without_io_is_thin_and_never_a_rate() {
    let mut runs = members_together(4, 1, |_, _| 75.0e6);
    let v = runs
        .iter_mut()
        .find(|p| matches!(p.kind, PhaseKind::VolumePerMember { .. }))
        .unwrap();
    let mut doc = v.document.clone();
    doc.workers[1].figures.ios = 0;
    *v = Phase::of(v.kind.clone(), doc);
    assert_eq!(v.status, PhaseStatus::Thin);
    assert_eq!(v.problems, ["1 of 2 worker(s) completed no I/O"]);
    let d = assemble(volume(), runs.clone(), false);
    assert_eq!(d.stripe_efficiency, None);
    let text = crate::report::compare::render(&d);
    assert!(
        text.contains("volume, 4 workers, O_DIRECT           -"),
        "{text}"
    );
    assert!(
        text.contains("THIN: 1 of 2 worker(s) completed no I/O"),
        "{text}"
    );
    assert!(!text.contains("stripe efficiency"), "{text}");
    let mut doc = runs[1].document.clone();
    doc.total.figures.ios = 0;
    assert_eq!(health::check(&doc).1, ["no I/O completed"]);
}

#[test]
fn warnings_are_printed_under_their_phase_once_with_a_count() {
    let mut runs = members_together(4, 3, |_, _| 75.0e6);
    for p in runs.iter_mut().filter(|p| p.kind == PhaseKind::Together) {
        p.document.warnings = vec![
            "4 workers share 2 CPUs".to_string().into(),
            "4 workers share 2 CPUs".to_string().into(),
        ];
    }
    let text = crate::report::compare::render(&assemble(volume(), runs, false));
    assert_eq!(text.matches("4 workers share 2 CPUs").count(), 1, "{text}");
    assert!(
        text.contains("(run 3 of 3)")
            && text.contains("    warning (6 times): 4 workers share 2 CPUs"),
        "{text}"
    );
}

#[test]
fn ceilings_follow_the_level() {
    let cases = [
        ("raid0", 4, 4.0, 4.0, "RAID0 reads: N × member"),
        ("raid5", 4, 4.0, 3.0, "RAID5 reads: N × member"),
        ("raid6", 6, 6.0, 4.0, "RAID6 reads: N × member"),
        ("raid1", 2, 2.0, 1.0, "RAID1 reads: up to N × member"),
        ("raid10", 4, 4.0, 2.0, "RAID10 reads: N × member"),
    ];
    for (level, n, read, write, rule) in cases {
        let v = volume_of(Some((level, n)));
        let c = ceilings(&v.topology, n as usize);
        assert_eq!(c[0].direction, "read");
        assert_eq!((c[0].members, c[1].members), (read, write), "{level}");
        assert!(c[0].rule.starts_with(rule), "{level}: {}", c[0].rule);
        assert!(
            c[0].basis.starts_with(&format!("{level}, {n} members")),
            "{}",
            c[0].basis
        );
    }
    // RAID5 reads over 4 members: the members together, per member, × 4.
    let runs = members_together(4, 1, |_, _| 100.0e6);
    let d = assemble(volume_of(Some(("raid5", 4))), runs, false);
    assert!((d.stripe_efficiency.as_ref().unwrap().stripe_layer - 360.0 / 400.0).abs() < 1e-12);
    let text = crate::report::compare::render(&d);
    assert!(
        text.contains("ceilings (raid5, 4 members: 3 data + 1 parity"),
        "{text}"
    );
    assert!(
        text.contains(
            "against RAID5 reads: N × member (parity rotates over all members) (N = 4)\n  stripe layer: 360.0 MB/s of the 400.0 MB/s its slowest member allows (4 × 100.0 MB/s, /dev/loop0) = 90.0%"
        ),
        "{text}"
    );
}

#[test]
fn above_100_percent_says_why() {
    let mut runs = members_together(2, 1, |_, _| 100.0e6);
    // The volume (raid1 of 2, reads) at 230 MB/s against 2 × 100.
    for p in runs.iter_mut().filter(|p| p.kind.on_volume()) {
        p.bytes_per_sec = 230.0e6;
    }
    let d = assemble(volume_of(Some(("raid1", 2))), runs, false);
    assert!(d.stripe_efficiency.as_ref().unwrap().stripe_layer > 1.0);
    let note = d.efficiency_note.as_deref().unwrap();
    assert!(note.starts_with("above 100%"), "{note}");
    for why in ["merge", "cache", "balances reads over its 2 copies"] {
        assert!(note.contains(why), "{why}: {note}");
    }
    let text = crate::report::compare::render(&d);
    assert!(text.contains("  above 100%: "), "{text}");
}

#[test]
fn the_plan_repeats_the_member_phases_and_runs_the_volume_once() {
    let plan = phase_plan(
        &["/dev/a".into(), "/dev/b".into()],
        &[],
        true,
        false,
        false,
        2,
    );
    let shown: Vec<String> = plan
        .iter()
        .map(|(k, r)| format!("{k}{}", run_label(k, *r, 2)))
        .collect();
    assert_eq!(
        shown,
        [
            "member /dev/a alone (run 1 of 2)",
            "member /dev/b alone (run 1 of 2)",
            "members together, O_DIRECT (run 1 of 2)",
            "member /dev/a alone (run 2 of 2)",
            "member /dev/b alone (run 2 of 2)",
            "members together, O_DIRECT (run 2 of 2)",
            "volume, 1 worker, O_DIRECT",
            "volume, 2 workers, O_DIRECT",
            "volume, 2 workers, buffered",
            "volume, 1 worker, buffered",
        ]
    );
}

/// An older document (without status, repeats, ceilings or verdict) still reads.
#[test]
fn a_document_without_the_new_fields_reads() {
    let d = assemble(volume(), phases(), false);
    let mut v = serde_json::to_value(&d).unwrap();
    for f in [
        "repeat",
        "repeats",
        "ceilings",
        "efficiency_ceiling",
        "efficiency_note",
        "verdict",
    ] {
        v.as_object_mut().unwrap().remove(f);
    }
    for p in v["phases"].as_array_mut().unwrap() {
        for f in ["repeat", "status", "problems", "failing"] {
            p.as_object_mut().unwrap().remove(f);
        }
    }
    let back: CompareDocument = serde_json::from_value(v).unwrap();
    assert_eq!(back.repeat, 1);
    assert_eq!(back.phases, d.phases);
}

/// Measured together by more workers than CPUs, the rate floor widens with
/// the crowding (2 workers on 1 CPU: 10 %; 16 on 2 reach the 25 % cap, see
/// analysis::slow_member::tests), and the verdict says why.
#[test]
fn members_together_on_too_few_cpus_widen_the_floor_and_say_so() {
    let mut runs = members_together(8, 1, |i, _| if i == 3 { 70.0e6 } else { 75.0e6 });
    for p in &mut runs {
        p.document.host.cpus = 1;
    }
    let v = assemble(volume(), runs.clone(), false).verdict.unwrap();
    assert!(v.flagged.is_empty(), "{v:?}");
    assert!(v
        .caveat
        .as_deref()
        .unwrap()
        .contains("2 workers on 1 CPU(s)"));
    assert!(
        v.rule.contains("between 10% and 25% of the median"),
        "{}",
        v.rule
    );
    // Far enough below, a member is flagged all the same.
    let runs = members_together(8, 1, |i, _| if i == 3 { 10.0e6 } else { 75.0e6 });
    let mut runs = runs;
    for p in &mut runs {
        p.document.host.cpus = 1;
    }
    let d = assemble(volume(), runs, false);
    assert_eq!(d.slowest.as_deref(), Some("/dev/loop3"));
    assert!(crate::report::compare::render(&d).contains("  caveat: the members together ran"));
}

#[test]
fn uncached_adds_two_volume_phases_after_the_buffered_ones_and_pairs_them_with_o_direct() {
    let members: Vec<String> = vec!["/dev/a".into(), "/dev/b".into()];
    let names: Vec<String> = phase_kinds(&members, &[], false, false, true)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        names,
        [
            "members together, O_DIRECT",
            "volume, 1 worker, O_DIRECT",
            "volume, 2 workers, O_DIRECT",
            "volume, 2 workers, buffered",
            "volume, 1 worker, buffered",
            "volume, 2 workers, uncached",
            "volume, 1 worker, uncached",
        ]
    );
    // Each name reads back as its kind, on the volume.
    for n in &names[5..] {
        let k = PhaseKind::parse(n);
        assert!(k.on_volume() && !matches!(k, PhaseKind::Other(_)), "{n}");
    }
    // Writes take no uncached phase.
    assert!(!phase_kinds(&members, &[], false, true, true)
        .iter()
        .any(|k| k.to_string().contains("uncached")));
}

/// Regression (issue 39, item 4): btrfs RAID0 of 3 with one member
/// throttled to 40 MB/s read 126.4 MB/s, and "stripe efficiency ... =
/// 3.9%" blamed the stripe layer, though 3 × the slow member's 41.9 MB/s
/// is 125.7: the stripe layer did all its slowest member allows, and the
/// loss is the members' imbalance.
#[test]
fn stripe_efficiency_blames_the_imbalance_not_the_stripe_layer_for_a_slow_member() {
    let mb = 1e6;
    let members = [
        ("/dev/loop2", 1620.0 * mb),
        ("/dev/loop3", 1579.1 * mb),
        ("/dev/loop4", 41.9 * mb),
    ];
    let runs = vec![
        Phase::of(PhaseKind::Together, run(3241.0 * mb, &members)),
        Phase::of(
            PhaseKind::VolumePerMember { workers: 3 },
            run(126.4 * mb, &[("/dev/md0", 126.4 * mb)]),
        ),
    ];
    let d = assemble(volume(), runs, false);
    let text = crate::report::compare::render(&d);
    assert!(!text.contains("= 3.9%"), "{text}");
    assert!(
        text.contains("  stripe layer: 126.4 MB/s of the 125.7 MB/s its slowest member allows (3 × 41.9 MB/s, /dev/loop4) = 100.6%"),
        "{text}"
    );
    assert!(
        text.contains(
            "  members' imbalance: the slowest 41.9 MB/s / the median 1579.1 MB/s = 2.7%"
        ),
        "{text}"
    );
    assert!(
        text.contains("  the larger loss: the members' imbalance"),
        "{text}"
    );
}

/// A RAID6 of 6 with slot 5 empty and loop3 being rebuilt (md writes it
/// as its resync limits allow), as `topology` reads it.
fn degraded_raid6() -> Volume {
    use crate::device::topology::{Device, MdMember, MdState};
    let mut v = volume_of(Some(("raid6", 6)));
    let leaf = |i: usize| Device {
        name: format!("loop{i}"),
        dev: format!("7:{i}"),
        path: format!("/dev/loop{i}"),
        kind: "loop".into(),
        parent: None,
        md: None,
        dm: None,
        btrfs: None,
        leaf: None,
        queue: None,
        geometry: None,
        members: Vec::new(),
    };
    let root = &mut v.topology.root;
    root.members = (0..5).map(leaf).collect();
    root.md.as_mut().unwrap().state = Some(MdState {
        array_state: Some("active".into()),
        degraded: Some(2),
        sync_action: Some("recover".into()),
        sync_completed: Some((1024, 131072)),
        sync_speed: Some(200),
        members: (0..5)
            .map(|i| MdMember {
                name: format!("loop{i}"),
                slot: Some(i as u32),
                state: vec![if i == 3 { "spare" } else { "in_sync" }.into()],
                recovery_start: None,
            })
            .collect(),
        missing_slots: vec![5],
        ..Default::default()
    });
    v
}

/// Issue 42: on a degraded RAID5 compare said nothing of it, measured the
/// volume against the healthy "N × member" reads and would call a member
/// being rebuilt slow. The read ceiling is the degraded one, the member
/// being rebuilt is measured but never judged (nor taken as the
/// slowest), and the array's state is said.
#[test]
fn a_degraded_array_gets_its_degraded_ceiling_and_a_member_being_rebuilt_is_never_slow() {
    let runs = members_together(5, 3, |i, r| {
        if i == 3 {
            10.0e6
        } else {
            75.0e6 * (1.0 + 0.05 * noise(i, r))
        }
    });
    let d = assemble(degraded_raid6(), runs, false);
    let read = d.ceilings.iter().find(|c| c.direction == "read").unwrap();
    assert_eq!(read.members, 4.0, "(N-2) × member, not N");
    assert!(
        read.rule
            .starts_with("degraded RAID6 reads: (N-2) × member (2 of 6 down"),
        "{read:?}"
    );
    assert!(
        read.basis
            .contains("degraded: 2 of 6 members down (slot 5 empty; loop3 being rebuilt)"),
        "{read:?}"
    );
    let v = d.verdict.as_ref().unwrap();
    assert!(v.flagged.is_empty(), "{v:?}");
    assert!(!d.members[3].slow);
    assert_eq!(d.slowest, None);
    let e = d.stripe_efficiency.as_ref().unwrap();
    assert_ne!(
        e.slowest, "/dev/loop3",
        "the rebuilt member is not the slowest"
    );
    assert_eq!(
        d.array_state.as_deref(),
        Some("degraded: 2 of 6 members down (slot 5 empty; loop3 being rebuilt); recover 0.8% done at 200 KB/s")
    );
    assert!(
        d.notes.iter().any(|n| n
            .contains("/dev/loop3 is not judged against the other members: it is being rebuilt")),
        "{:?}",
        d.notes
    );
    let text = crate::report::compare::render(&d);
    assert!(
        text.contains("ARRAY STATE: degraded: 2 of 6 members down"),
        "{text}"
    );
    assert!(
        text.contains("degraded array, efficiency against its degraded ceiling, in two:"),
        "{text}"
    );
    assert!(text.contains("(N = 6, 5 members measured)"), "{text}");
    assert!(!text.contains("SLOW"), "{text}");
    assert!(!text.contains("RAID6 reads: N × member"), "{text}");
    // The JSON says it too, and reads back.
    let json = serde_json::to_value(&d).unwrap();
    assert_eq!(json["array_state"], d.array_state.clone().unwrap());
    let back: CompareDocument = serde_json::from_value(json).unwrap();
    assert_eq!(back, d);
}

/// A healthy array keeps the healthy ceiling and says no state.
#[test]
fn a_whole_array_keeps_n_times_member_and_says_no_state() {
    let mut v = degraded_raid6();
    let st = v.topology.root.md.as_mut().unwrap().state.as_mut().unwrap();
    st.degraded = Some(0);
    st.sync_action = Some("idle".into());
    st.missing_slots.clear();
    st.members[3].state = vec!["in_sync".into()];
    v.topology.root.md.as_mut().unwrap().raid_disks = 5;
    let d = assemble(v, members_together(5, 1, |_, _| 75.0e6), false);
    let read = d.ceilings.iter().find(|c| c.direction == "read").unwrap();
    assert_eq!(read.members, 5.0);
    assert_eq!(d.array_state, None);
    assert!(!crate::report::compare::render(&d).contains("ARRAY STATE"));
}

/// Issue 42: while md recovers a member, its own reads and writes land on
/// the members beside compare's. The members' counters in the
/// all-at-once phase are set against compare's bytes, per member and in
/// all, and the volume phases' resync rate is said.
#[test]
fn a_recovering_arrays_members_counters_give_the_resyncs_share_of_their_io() {
    use crate::device::devstat::DeviceCounters;
    use crate::document::run::ResyncDoc;
    let counters = |name: &str, read: u64, write: u64, app: u64| DeviceCounters {
        name: name.into(),
        read_bytes: read,
        write_bytes: write,
        read_ios: 1,
        write_ios: 1,
        ios: 2,
        util_pct: 50.0,
        span_seconds: 2.0,
        app_read_bytes: app,
        app_write_bytes: 0,
        read_ratio: None,
        write_ratio: None,
        shared: false,
        window_write_bytes: None,
        stats: true,
        avg_read_request_bytes: None,
        avg_write_request_bytes: None,
        read_merges: 0,
        write_merges: 0,
        members: Vec::new(),
    };
    let mut runs = members_together(5, 1, |_, _| 75.0e6);
    for p in &mut runs {
        if p.kind == PhaseKind::Together {
            for (i, t) in p.document.targets.iter_mut().enumerate() {
                // loop3 is being rebuilt: the recovery writes it; the
                // others give it their reads.
                t.device = Some(if i == 3 {
                    counters("loop3", 40 << 20, 60 << 20, 40 << 20)
                } else {
                    counters(&format!("loop{i}"), 100 << 20, 0, 80 << 20)
                });
            }
        } else if p.kind.on_volume() {
            p.document.resync = vec![ResyncDoc {
                array: "md0".into(),
                action: "recovery".into(),
                done_start_bytes: 0,
                done_end_bytes: 8 << 20,
                total_bytes: 64 << 20,
                seconds: 4.0,
                bytes_per_sec: (2 << 20) as f64,
                full_seconds: Some(32.0),
                remaining_seconds: Some(28.0),
                finished: false,
                speed_min: None,
                speed_max: None,
            }];
        }
    }
    let d = assemble(degraded_raid6(), runs, false);
    let share = d
        .notes
        .iter()
        .find(|n| n.starts_with("the resync's share of the members' I/O"))
        .unwrap_or_else(|| panic!("{:?}", d.notes));
    // 4 × 100 + 100 MiB counted, 4 × 80 + 40 ours: 140 of 500 not ours.
    assert!(share.contains(": 28% of 500.0 MiB ("), "{share}");
    assert!(
        share.contains(
            "/dev/loop3 40.0 MiB read and 60.0 MiB written against our 40.0 MiB (60% not ours)"
        ),
        "{share}"
    );
    assert!(
        d.notes.iter().any(|n| n.contains(
            "md0 recovery ran at 2.10 MB/s per member device (the whole of it: 32 s at that rate)"
        )),
        "{:?}",
        d.notes
    );
    // A healthy array's comparison says none of it.
    let mut v = degraded_raid6();
    let st = v.topology.root.md.as_mut().unwrap().state.as_mut().unwrap();
    st.sync_action = Some("idle".into());
    let d = assemble(v, members_together(5, 1, |_, _| 75.0e6), false);
    assert!(
        !d.notes
            .iter()
            .any(|n| n.contains("resync's share") || n.contains(" ran at ")),
        "{:?}",
        d.notes
    );
}

/// Issue 42: 6 members on 3 controllers, every member 8 MB/s alone; the
/// members of controller b reach 4 MB/s together (capped), those of a and
/// c 16: compare names b, calls no member slow, says so, and the phase
/// name and the document read back.
#[test]
fn a_capped_controller_is_named_and_no_member_slow() {
    let members: Vec<String> = (0..6).map(|i| format!("/dev/sd{i}")).collect();
    let adapters: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let group = |a: &str| -> Vec<&str> {
        let k = adapters.iter().position(|x| x == a).unwrap();
        members
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 3 == k)
            .map(|(_, m)| m.as_str())
            .collect()
    };
    let runs: Vec<Phase> = phase_kinds(&members, &adapters, true, false, false)
        .into_iter()
        .map(|k| {
            let (total, targets): (f64, Vec<(&str, f64)>) = match &k {
                PhaseKind::Alone { member } => (8e6, vec![(member.as_str(), 8e6)]),
                PhaseKind::Together => (
                    40e6,
                    members
                        .iter()
                        .enumerate()
                        .map(|(i, m)| (m.as_str(), if i % 3 == 1 { 2e6 } else { 8e6 }))
                        .collect(),
                ),
                PhaseKind::Shared { adapter } => {
                    let each = if adapter == "b" { 2e6 } else { 8e6 };
                    (
                        each * 2.0,
                        group(adapter).into_iter().map(|m| (m, each)).collect(),
                    )
                }
                _ => (40e6, vec![("/dev/md0", 40e6)]),
            };
            Phase::of(k.clone(), run(total, &targets))
        })
        .collect();
    assert_eq!(
        runs.iter()
            .filter(|p| matches!(p.kind, PhaseKind::Shared { .. }))
            .count(),
        3
    );
    let doc = assemble(volume(), runs, false);
    let capped: Vec<&str> = doc
        .shared_paths
        .iter()
        .filter(|g| g.capped)
        .map(|g| g.adapter.as_str())
        .collect();
    assert_eq!(capped, ["b"]);
    let b = &doc.shared_paths[1];
    assert_eq!(b.members, ["/dev/sd1", "/dev/sd4"]);
    assert_eq!(b.alone_bytes_per_sec, [8e6, 8e6]);
    assert!((b.share.unwrap() - 0.25).abs() < 1e-9);
    assert!(doc.members.iter().all(|m| !m.slow), "{:?}", doc.members);
    assert_eq!(doc.slowest, None);
    let text = crate::report::compare::render(&doc);
    assert!(
        text.contains("controller b: 2 members together 4.0 MB/s against 2 x 8.0 alone (sum 16.0; 25%): the shared path caps them"),
        "{text}"
    );
    assert!(text.contains("bottleneck: controller b"), "{text}");
    let json = serde_json::to_string(&doc).unwrap();
    let back: CompareDocument = serde_json::from_str(&json).unwrap();
    assert_eq!(back.shared_paths, doc.shared_paths);
    assert_eq!(
        PhaseKind::parse("members behind 0000:00:04.0 together"),
        PhaseKind::Shared {
            adapter: "0000:00:04.0".into()
        }
    );
}
