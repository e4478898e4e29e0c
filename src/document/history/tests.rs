use super::*;
use crate::device::identity::{DiskIdentity, IdentityKind};

#[test]
fn a_run_gives_an_entry_per_target_whose_disk_is_known() {
    let mut doc = crate::report::fixtures::sample_doc();
    // The fixture runs a file: it is its path on its host.
    let e = entries(&doc, "run");
    assert_eq!(e.len(), doc.targets.len());
    assert_eq!(e[0].identity.kind, IdentityKind::File);
    assert_eq!(e[0].context, "run");
    assert!(e[0].workload.contains("targets="), "{}", e[0].workload);
    assert!(e[0].label.contains("direct") || e[0].label.contains("buffered"));
    assert_eq!(e[0].bytes_per_sec, doc.targets[0].figures.bytes_per_sec);
    assert!(!e[0].histogram.is_empty());
    // Unknown disks give nothing; an interrupted run is kept, not judged.
    doc.targets[0].identity = Some(None);
    doc.interrupted = true;
    let e = entries(&doc, "run");
    assert_eq!(e.len(), doc.targets.len() - 1);
    assert!(e
        .iter()
        .all(|x| x.not_device_speed.as_deref() == Some("the run was interrupted")));
}

fn entry(disk: usize, run: usize, mb: f64, p99_us: f64) -> Entry {
    let wwn = format!("0x5000c5000000{disk:04x}");
    Entry {
        identity: DiskIdentity {
            key: format!("wwn:{wwn}"),
            kind: IdentityKind::Wwn,
            wwn: Some(wwn),
            serial: Some(format!("lab-m{disk:03}")),
            model: Some("QEMU HARDDISK".into()),
            firmware: Some("2.5+".into()),
        },
        host: "lab".into(),
        device: format!("/dev/sd{}", (b'a' + disk as u8) as char),
        time: 1_780_000_000.0 + run as f64 * 60.0,
        workload: "rw=randread bs=4096 targets=8".into(),
        label: "randread 4k qd1 direct, 8 at once".into(),
        context: "run".into(),
        bytes_per_sec: mb * 1e6,
        iops: mb * 1e6 / 4096.0,
        p50_ns: Some((p99_us * 300.0) as u64),
        p99_ns: Some((p99_us * 1000.0) as u64),
        p999_ns: Some((p99_us * 2000.0) as u64),
        histogram: String::new(),
        ios: Some(1000),
        not_device_speed: None,
    }
}

/// Eight disks, ten runs each with a little noise; disk 3 slowed from run
/// 5 on, and one run of disk 0 read from the page cache.
fn fleet() -> Vec<Entry> {
    let mut out = Vec::new();
    for run in 0..10 {
        for disk in 0..8 {
            let noise = 1.0 + ((disk * 7 + run * 3) % 5) as f64 / 100.0;
            let (mut mb, mut p99) = (8.6 * noise, 1000.0 * noise);
            if disk == 3 && run >= 5 {
                mb /= 10.0;
                p99 *= 20.0;
            }
            let mut e = entry(disk, run, mb, p99);
            if disk == 0 && run == 9 {
                e.bytes_per_sec *= 100.0;
                e.not_device_speed = Some("the page cache served the reads".into());
            }
            out.push(e);
        }
    }
    out
}

fn judging() -> Judging {
    Judging {
        baseline: 5,
        until: None,
        recent: 5,
        alpha: 0.05,
        threshold_pct: 10.0,
    }
}

#[test]
fn the_slowed_disk_drifts_and_is_fail_slow_and_no_other_is() {
    let doc = assemble("h.db".into(), &fleet(), &judging(), None);
    assert_eq!(doc.disks.len(), 8);
    assert_eq!(doc.results, 80);
    let slow = "wwn:0x5000c50000000003";
    assert!(!doc.drift.is_empty());
    assert!(doc.drift.iter().all(|d| d.disk == slow), "{:#?}", doc.drift);
    let line = &doc.drift.iter().find(|d| d.metric == "p99").unwrap().line;
    assert!(
        line.starts_with(
            "WWN 0x5000c50000000003 (now /dev/sdd): randread 4k qd1 direct, 8 at once p99 +"
        ),
        "{line}"
    );
    assert!(line.contains("(p = 0.008, 5 runs against 5)"), "{line}");
    assert_eq!(doc.fail_slow.len(), 1, "{:#?}", doc.fail_slow);
    let f = &doc.fail_slow[0];
    assert_eq!((f.rank, f.disk.as_str(), f.peers), (1, slow, 8));
    assert!(f.ratio > 5.0, "{f:#?}");
    let flagged: Vec<&str> = doc
        .disks
        .iter()
        .filter(|d| !d.flags.is_empty())
        .map(|d| d.key.as_str())
        .collect();
    assert_eq!(flagged, [slow]);
    // The cached run is shown and never judged: disk 0 did not speed up.
    let d0 = &doc.disks[0];
    let main = d0.main.as_ref().unwrap();
    assert_eq!(main.runs, 10);
    assert!(main.rate_change_pct.unwrap().abs() < 10.0);
    assert!(
        d0.series.is_empty(),
        "the list holds each disk's main series only"
    );
}

#[test]
fn a_figure_that_is_no_rate_keeps_no_group_from_its_fit() {
    let mut f = fleet();
    for e in f.iter_mut().filter(|e| e.identity.key.ends_with("0005")) {
        e.bytes_per_sec = 0.0;
    }
    let doc = assemble("h.db".into(), &f, &judging(), None);
    assert_eq!(doc.fail_slow.len(), 1, "{:?}", doc.unfitted);
    assert!(doc.unfitted.is_empty());
}

#[test]
fn one_disk_asked_shows_its_series_and_only_its_verdicts() {
    let slow = "wwn:0x5000c50000000003".to_string();
    let doc = assemble(
        "h.db".into(),
        &fleet(),
        &judging(),
        Some(std::slice::from_ref(&slow)),
    );
    assert_eq!(doc.disks.len(), 1);
    assert_eq!(doc.disks[0].series.len(), 1);
    assert_eq!(doc.disks[0].series[0].points.len(), 10);
    assert_eq!(doc.results, 10);
    assert_eq!(doc.fail_slow.len(), 1, "judged against every peer");
    let other = "wwn:0x5000c50000000001".to_string();
    let doc = assemble(
        "h.db".into(),
        &fleet(),
        &judging(),
        Some(std::slice::from_ref(&other)),
    );
    assert!(doc.drift.is_empty() && doc.fail_slow.is_empty());
}

#[test]
fn too_few_peers_are_said_and_a_baseline_until_a_date_is_used() {
    let few: Vec<Entry> = fleet()
        .into_iter()
        .filter(|e| e.identity.key.as_str() < "wwn:0x5000c50000000003")
        .collect();
    let doc = assemble("h.db".into(), &few, &judging(), None);
    assert!(doc.fail_slow.is_empty());
    assert_eq!(doc.unfitted.len(), 1, "{:?}", doc.unfitted);
    assert!(doc.unfitted[0].contains("3 disk(s)"), "{:?}", doc.unfitted);
    // Up to the time of run 4: the first five runs are the baseline.
    let j = Judging {
        until: Some(1_780_000_000.0 + 4.0 * 60.0),
        baseline: 1,
        ..judging()
    };
    let doc = assemble("h.db".into(), &fleet(), &j, None);
    assert!(doc
        .drift
        .iter()
        .any(|d| d.n_baseline == 5 && d.n_recent == 5));
    assert_eq!(date(1_780_000_000.0), "2026-05-28");
    assert_eq!(date_time(1_780_000_000.0), "2026-05-28 20:26");
    for t in [1e300, f64::INFINITY, f64::NAN, -1e18] {
        assert_eq!(date_time(t), "(no date)");
    }
}

#[test]
fn a_disk_asked_merges_its_runs_histograms_exactly() {
    use crate::analysis::histogram::LatencyHistogram;
    // Five baseline runs of 1,000 I/Os at 100 us; one of them has 60 at
    // 5 ms. Each run's p99 but that one's is 100 us, so their median is;
    // over all 5,000 I/Os 1.2% took 5 ms, and the merged p99 says so.
    let run = |slow: u64| {
        let mut h = LatencyHistogram::new();
        h.record_n(100_000, 1000 - slow);
        h.record_n(5_000_000, slow);
        h.to_base64()
    };
    let mut runs: Vec<Entry> = (0..7).map(|i| entry(0, i, 8.6, 100.0)).collect();
    for (i, e) in runs.iter_mut().enumerate() {
        e.histogram = run(if i == 2 { 60 } else { 0 });
    }
    runs[6].histogram = "not a histogram".into();
    let key = runs[0].identity.key.clone();
    let doc = assemble(
        "h.db".into(),
        &runs,
        &judging(),
        Some(std::slice::from_ref(&key)),
    );
    let s = &doc.disks[0].series[0];
    let base = s.baseline_latency.as_ref().unwrap();
    assert_eq!((base.runs, base.ios), (5, 5000));
    let close = |ns: u64, want: u64| ns.abs_diff(want) * 100 < want;
    assert!(close(base.p50_ns, 100_000), "{base:?}");
    assert!(close(base.p99_ns, 5_000_000), "{base:?}");
    let recent = s.recent_latency.as_ref().unwrap();
    assert_eq!((recent.runs, recent.ios), (1, 1000), "one did not decode");
    assert!(close(recent.p99_ns, 100_000), "{recent:?}");
    // The text says both sides.
    let text = crate::report::history::render(&doc, true);
    assert!(
        text.contains("baseline 5 run(s), 5000 I/Os merged: p50 "),
        "{text}"
    );
    assert!(
        text.contains("recent   1 run(s), 1000 I/Os merged"),
        "{text}"
    );
}

#[test]
fn a_fail_slow_p99_of_few_ios_says_so() {
    // Disk 3's recent runs did 20 I/Os each: its p99 is its slowest.
    let f: Vec<Entry> = fleet()
        .into_iter()
        .map(|mut e| {
            if e.identity.key.ends_with("0003") && e.time >= 1_780_000_000.0 + 5.0 * 60.0 {
                e.ios = Some(20);
            }
            e
        })
        .collect();
    let doc = assemble("h.db".into(), &f, &judging(), None);
    let slow = &doc.fail_slow[0];
    assert_eq!(slow.ios_per_run, Some(20));
    assert!(
        slow.line
            .ends_with("; its p99 rests on 20 I/Os a run: little more than its slowest"),
        "{}",
        slow.line
    );
    let doc = assemble("h.db".into(), &fleet(), &judging(), None);
    assert!(!doc.fail_slow[0].line.contains("rests on"));
}
