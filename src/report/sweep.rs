//! The sweep's text table: a header, and one row per point (with each
//! target's under it when they differ in kind, and the sum of the targets'
//! own rates when they ended at different times).

use crate::base::units::{fmt_latency_ns, mb_per_sec};
use crate::document::run::{RunDocument, TargetDoc};
use crate::document::sweep::{Param, PointDoc, SweepDocument};

/// The lines before the table: what the sweep runs and what its columns
/// mean (with `rate`, how latency is counted on a schedule).
pub fn preamble(params: &[Param], points: usize, repeat: usize) -> Vec<String> {
    let mut lines = vec![format!("sweep: {points} point(s) x {repeat} repeat(s); MB/s = 10^6 B/s; dev/app = device bytes / application bytes (<1: cache hits, >1: read-ahead); CPU% = user + system CPU time in the window as a percentage of one core, summed over the workers")];
    if params.iter().any(|p| p.name == "rate") {
        lines.push("latency: at max, from each I/O's issue; on a schedule (rate below max), from when it was due, so waiting behind a stall counts; asked IOPS/w: each worker's schedule; schedule: kept, or BEHIND when a worker did not complete what was due".to_string());
    }
    lines
}

/// The table's header and one row per point.
pub fn header(params: &[Param]) -> String {
    let mut h: Vec<String> = params.iter().map(|p| format!("{:>10}", p.name)).collect();
    h.extend(
        [
            "MB/s".to_string(),
            "min-max".into(),
            "IOPS".into(),
            "p50".into(),
            "p99".into(),
            "p99.9".into(),
            "CPU%".into(),
            "CPU s/GB".into(),
            "dev/app".into(),
            // The window each point's rates are over: one too short to mean
            // anything must show (a --passes 1 point lasted 0.16 s, said
            // only by the JSON).
            "window s".into(),
        ]
        .iter()
        .map(|s| format!("{s:>10}")),
    );
    if params.iter().any(|p| p.name == "rate") {
        // Each worker's schedule, and whether every worker kept it.
        h.extend(["asked IOPS/w", "schedule"].map(|s| format!("{s:>12}")));
    }
    if resync_swept(params) {
        // The resync beside the users: its rate and the whole rebuild's time.
        h.extend(["resync MB/s", "rebuild"].map(|s| format!("{s:>12}")));
    }
    h.join(" ")
}

/// Whether the sweep varies md's resync limits.
fn resync_swept(params: &[Param]) -> bool {
    let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
    crate::report::resync::swept(&names)
}

/// A point's schedule: the IOPS asked of each worker (their mean: a
/// `--rate` in bytes asks per worker by its own bs) and whether every
/// worker kept it; `None` at full speed.
pub fn schedule(doc: &RunDocument) -> Option<(f64, bool)> {
    let rates: Vec<_> = doc.workers.iter().filter_map(|w| w.rate.as_ref()).collect();
    if rates.is_empty() {
        return None;
    }
    let asked = rates.iter().map(|r| r.target_iops).sum::<f64>() / rates.len() as f64;
    Some((asked, rates.iter().all(|r| r.kept)))
}

/// Device bytes and the application's bytes over the same span, all targets.
pub fn device_and_app_bytes(doc: &RunDocument) -> (u64, u64) {
    doc.targets
        .iter()
        .filter_map(|t| t.device.as_ref())
        .fold((0, 0), |(d, a), c| {
            (
                d + c.read_bytes + c.write_bytes,
                a + c.app_read_bytes + c.app_write_bytes,
            )
        })
}

pub fn row(p: &PointDoc) -> String {
    let doc = &p.runs[0];
    let t = &doc.total;
    let secs = t.figures.seconds.max(1e-9);
    let cpu = t.figures.cpu_usr_sec + t.figures.cpu_sys_sec;
    let (dev, app) = device_and_app_bytes(doc);
    let mut cells: Vec<String> = p.values.iter().map(|(_, v)| format!("{v:>10}")).collect();
    cells.extend([
        format!("{:>10.1}", mb_per_sec(p.bytes_per_sec_median)),
        format!(
            "{:>10}",
            if p.runs.len() > 1 {
                format!(
                    "{:.0}-{:.0}",
                    mb_per_sec(p.bytes_per_sec_min),
                    mb_per_sec(p.bytes_per_sec_max)
                )
            } else {
                "-".into()
            }
        ),
        format!("{:>10.0}", t.figures.iops),
        format!(
            "{:>10}",
            t.figures
                .latency_ns
                .map_or("-".into(), |l| fmt_latency_ns(l.p50 as f64))
        ),
        format!(
            "{:>10}",
            t.figures
                .latency_ns
                .map_or("-".into(), |l| fmt_latency_ns(l.p99 as f64))
        ),
        format!(
            "{:>10}",
            t.figures
                .latency_ns
                .map_or("-".into(), |l| fmt_latency_ns(l.p99_9 as f64))
        ),
        format!("{:>10.1}", cpu / secs * 100.0),
        format!(
            "{:>10}",
            t.cpu_sec_per_gb().map_or("-".into(), |v| format!("{v:.3}"))
        ),
        format!(
            "{:>10}",
            if app > 0 {
                format!("{:.3}", dev as f64 / app as f64)
            } else {
                "-".into()
            }
        ),
        format!("{:>10.2}", shortest_window(p)),
    ]);
    if p.values.iter().any(|(n, _)| n == "rate") {
        let (asked, kept) = match schedule(doc) {
            Some((a, true)) => (format!("{a:.0}"), "kept"),
            Some((a, false)) => (format!("{a:.0}"), "BEHIND"),
            None => ("-".into(), "unthrottled"),
        };
        cells.extend([format!("{asked:>12}"), format!("{kept:>12}")]);
    }
    let names: Vec<&str> = p.values.iter().map(|(n, _)| n.as_str()).collect();
    if crate::report::resync::swept(&names) {
        cells.extend(crate::report::resync::cells(&doc.resync).map(|c| format!("{c:>12}")));
    }
    cells.join(" ")
}

/// The shortest window of a point's runs (its repeats), in seconds.
pub fn shortest_window(p: &PointDoc) -> f64 {
    p.runs
        .iter()
        .map(|r| r.window.seconds)
        .fold(f64::INFINITY, f64::min)
}

/// Whether a run's targets differ in kind (a file beside a block device):
/// then their sum hides what each did, and each gets its own row.
pub fn targets_differ_in_kind(doc: &RunDocument) -> bool {
    doc.targets.windows(2).any(|w| w[0].kind != w[1].kind)
}

/// A target's kind, as its row names it.
pub fn kind_name(t: &TargetDoc) -> &'static str {
    match t.kind {
        crate::device::TargetKind::Block => "device",
        crate::device::TargetKind::File => "file",
    }
}

/// A target's device bytes over the application's, when its device counted.
pub fn target_dev_app(t: &TargetDoc) -> Option<f64> {
    let c = t.device.as_ref()?;
    let app = c.app_read_bytes + c.app_write_bytes;
    (app > 0).then(|| (c.read_bytes + c.write_bytes) as f64 / app as f64)
}

/// A target's CPU seconds per 10^9 bytes.
pub fn target_cpu_per_gb(t: &TargetDoc) -> Option<f64> {
    t.figures.cpu_sec_per_gb()
}

/// Each target's row under its point's (when it has more than one: a
/// member's own figures are what a sweep of members asks, and a file's
/// beside a device's are not their sum), in the point row's columns: its
/// kind under the last parameter, its path after the figures.
pub fn target_rows(p: &PointDoc) -> Vec<String> {
    let doc = &p.runs[0];
    if doc.targets.len() < 2 {
        return Vec::new();
    }
    doc.targets
        .iter()
        .map(|t| {
            let mut cells: Vec<String> =
                (1..p.values.len()).map(|_| format!("{:>10}", "")).collect();
            cells.push(format!("{:>10}", format!("└ {}", kind_name(t))));
            let lat = |f: fn(&crate::analysis::histogram::LatencySummary) -> u64| {
                format!(
                    "{:>10}",
                    t.figures
                        .latency_ns
                        .map_or("-".into(), |l| fmt_latency_ns(f(&l) as f64))
                )
            };
            let secs = t.figures.seconds.max(1e-9);
            cells.extend([
                format!("{:>10.1}", mb_per_sec(t.figures.bytes_per_sec)),
                format!("{:>10}", "-"),
                format!("{:>10.0}", t.figures.iops),
                lat(|l| l.p50),
                lat(|l| l.p99),
                lat(|l| l.p99_9),
                format!(
                    "{:>10.1}",
                    (t.figures.cpu_usr_sec + t.figures.cpu_sys_sec) / secs * 100.0
                ),
                format!(
                    "{:>10}",
                    target_cpu_per_gb(t).map_or("-".into(), |v| format!("{v:.3}"))
                ),
                format!(
                    "{:>10}",
                    target_dev_app(t).map_or("-".into(), |v| format!("{v:.3}"))
                ),
                // The point's window, in the row above.
                format!("{:>10}", ""),
                crate::base::error::show_text(&t.path).into_owned(),
            ]);
            cells.join(" ")
        })
        .collect()
}

/// When a point's targets ended at different times: what its MB/s is
/// (every target's bytes over the shared window, which can stand below the
/// fastest target: seed 000's file at 790.4 MB/s beside a TOTAL of 454.9)
/// and the sum of the targets' own rates beside it.
pub fn sum_line(p: &PointDoc) -> Option<String> {
    let sum = p.targets_sum_bytes_per_sec_median?;
    Some(format!(
        "  MB/s {:.1} is every target's bytes over the shared window, not a sum of rates: the targets ended at different times; their own rates sum to {:.1} MB/s",
        mb_per_sec(p.bytes_per_sec_median),
        mb_per_sec(sum)
    ))
}

/// A buffered write point's MB/s is the rate into the page cache: said
/// under its rows, with what reached the device (durable: over the window
/// and the final fsync), for the point and for each of its targets.
pub fn durable_lines(p: &PointDoc) -> Vec<String> {
    let doc = &p.runs[0];
    let Some(f) = &doc.total.flush else {
        return Vec::new();
    };
    let basis = |f: &crate::document::run::FlushDoc| match f.durable_basis.as_str() {
        "device" => "what the device wrote",
        _ => "no device counters: the bytes written",
    };
    let mut out = vec![format!(
        "  buffered write: MB/s above is the rate into the page cache, not to the device; durable {:.1} MB/s ({}, over the window and the final fsync of {:.3}s)",
        mb_per_sec(f.durable_bytes_per_sec),
        basis(f),
        f.seconds
    )];
    if doc.targets.len() > 1 {
        out.extend(doc.targets.iter().filter_map(|t| {
            let f = t.flush.as_ref()?;
            Some(format!(
                "    durable {:.1} MB/s {}",
                mb_per_sec(f.durable_bytes_per_sec),
                crate::base::error::show_text(&t.path)
            ))
        }));
    }
    out
}

/// The sweep as CSV: the swept parameters, then one row per point.
pub fn csv(doc: &SweepDocument) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = doc.params.iter().map(|p| p.name.clone()).collect();
    header.extend(
        [
            "bytes_per_sec_median",
            "bytes_per_sec_min",
            "bytes_per_sec_max",
            "mb_per_sec",
            "iops",
            "lat_p50_ns",
            "lat_p99_ns",
            "lat_p99_9_ns",
            "cpu_usr_sec",
            "cpu_sys_sec",
            "device_bytes",
            "app_bytes",
            "resync_bytes_per_sec",
            "rebuild_seconds",
        ]
        .map(String::from),
    );
    // Writing to a Vec cannot fail.
    let _ = w.write_record(&header);
    for p in &doc.points {
        let t = &p.runs[0].total;
        let (dev, app) = device_and_app_bytes(&p.runs[0]);
        let mut cells: Vec<String> = p.values.iter().map(|(_, v)| v.clone()).collect();
        cells.extend([
            format!("{:.1}", p.bytes_per_sec_median),
            format!("{:.1}", p.bytes_per_sec_min),
            format!("{:.1}", p.bytes_per_sec_max),
            format!("{:.3}", mb_per_sec(p.bytes_per_sec_median)),
            format!("{:.1}", t.figures.iops),
            t.figures
                .latency_ns
                .map_or(String::new(), |l| l.p50.to_string()),
            t.figures
                .latency_ns
                .map_or(String::new(), |l| l.p99.to_string()),
            t.figures
                .latency_ns
                .map_or(String::new(), |l| l.p99_9.to_string()),
            format!("{:.6}", t.figures.cpu_usr_sec),
            format!("{:.6}", t.figures.cpu_sys_sec),
            dev.to_string(),
            app.to_string(),
        ]);
        // The resync beside the point: its rate summed over the arrays, and
        // the longest whole rebuild at its rate (empty when none ran).
        let rs = crate::report::resync::totals(&p.runs[0].resync);
        cells.push(
            rs.as_ref()
                .map_or(String::new(), |t| format!("{:.1}", t.bytes_per_sec)),
        );
        cells.push(
            rs.and_then(|t| t.full_seconds)
                .map_or(String::new(), |s| format!("{s:.1}")),
        );
        let _ = w.write_record(&cells);
    }
    w.into_inner().unwrap_or_default()
}

/// A point's row, each target's row, and what comes with the figures, as
/// the sweep says them when the point ends. A point whose figures come
/// with warnings is marked, and each is listed under it: a normal-looking
/// row must not hide them.
///
/// `said`: the warnings earlier points listed (the sweep's, as it goes): a
/// warning every point gives alike (a file's read-ahead note, a queue's
/// limit) is listed once, at its first point, and counted after that.
pub fn point_lines(p: &PointDoc, said: &mut Vec<String>) -> Vec<String> {
    let warnings = p.warnings();
    let mut out = vec![if warnings.is_empty() {
        row(p)
    } else {
        format!("{}  ! {} warning(s)", row(p), warnings.len())
    }];
    out.extend(target_rows(p));
    if let Some(line) = sum_line(p) {
        out.push(line);
    }
    out.extend(
        crate::report::resync::lines(&p.runs[0].resync)
            .lines()
            .map(|l| format!("  {l}")),
    );
    out.extend(durable_lines(p));
    if p.partial {
        out.push(
            "  (partial: interrupted during this point; its figures cover what was measured)"
                .into(),
        );
    }
    if let Some(b) = p.runs[0]
        .cache
        .as_ref()
        .and_then(|c| c.memcpy_bytes_per_sec)
    {
        out.push(format!(
            "  page cache preloaded (--cached); memory-copy ceiling, one thread: {:.1} MB/s",
            b / 1e6
        ));
    }
    let mut again = 0;
    for w in &warnings {
        let text = w.to_string();
        if said.contains(&text) {
            again += 1;
        } else {
            out.push(format!("  warning: {w}"));
            said.push(text);
        }
    }
    if again > 0 {
        out.push(format!(
            "  ({again} warning(s) as at an earlier point, listed there)"
        ));
    }
    out
}

/// `sweep --dry-run`: each point's verdict (its label, and what refuses
/// it: empty, nothing), and whether the sweep would go ahead.
pub fn dry_run(verdicts: &[(String, Vec<String>)]) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "dry run: sweep of {} point(s), each checked as 'run --dry-run' would; no I/O was done\n",
        verdicts.len()
    );
    for (label, refused) in verdicts {
        if refused.is_empty() {
            let _ = writeln!(out, "point {label}: ok");
        } else {
            let _ = writeln!(out, "point {label}: REFUSED");
            for r in refused {
                let _ = writeln!(out, "  [REFUSED] {r}");
            }
        }
    }
    let bad = verdicts.iter().filter(|v| !v.1.is_empty()).count();
    let _ = writeln!(
        out,
        "{}",
        if bad == 0 {
            "every point passes: the sweep would go ahead".to_string()
        } else {
            format!("{bad} point(s) fail: the sweep would be refused before any point runs (exit code 2)")
        }
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::run::TargetsSum;
    use crate::report::fixtures::sample_doc;

    /// Seed 000's point read-ahead 256: the file read 790.4 MB/s and
    /// finished early, the device read 227.5 MB/s for the whole window,
    /// and their bytes over the shared window made a TOTAL of 454.9.
    fn file_and_device_apart() -> RunDocument {
        let mut d = sample_doc();
        d.window.seconds = 2.0;
        let mut file = d.targets[0].clone();
        file.kind = crate::device::TargetKind::File;
        file.figures.seconds = 0.58;
        file.figures.bytes_per_sec = 790.4e6;
        let mut dev = file.clone();
        dev.index = 1;
        dev.path = "/dev/loop9".into();
        dev.kind = crate::device::TargetKind::Block;
        dev.figures.seconds = 2.0;
        dev.figures.bytes_per_sec = 227.5e6;
        d.targets = vec![file, dev];
        d.total.figures.seconds = 2.0;
        d.total.figures.bytes_per_sec = 454.9e6;
        d.total.targets_sum = TargetsSum::of(&d.targets, d.window.seconds);
        d
    }

    /// Regression (issue 39, item 5): seed 000's sweep showed a TOTAL of
    /// 454.9 MB/s below the file's 790.4 with nothing saying what it was,
    /// and the plot drew the total under a part.
    #[test]
    fn a_total_below_one_of_its_parts_says_what_it_is_and_gives_their_sum() {
        let p = PointDoc::summarize(
            vec![("readahead".into(), "256".into())],
            vec![file_and_device_apart()],
            false,
        );
        assert_eq!(p.targets_sum_bytes_per_sec_median, Some(1017.9e6));
        let lines = point_lines(&p, &mut Vec::new());
        assert!(
            lines.contains(&"  MB/s 454.9 is every target's bytes over the shared window, not a sum of rates: the targets ended at different times; their own rates sum to 1017.9 MB/s".to_string()),
            "{lines:#?}"
        );
        let doc = SweepDocument {
            params: vec![Param {
                name: "readahead".into(),
                values: vec!["256".into()],
            }],
            points: vec![p],
            ..SweepDocument::new(Vec::new(), 1)
        };
        let svg = crate::report::plot::sweep_svg(&doc).unwrap();
        assert!(
            svg.contains("total: bytes / shared window"),
            "no total label"
        );
        assert!(svg.contains("sum of the targets"), "no sum drawn");
        let html = crate::report::html::sweep(&doc).unwrap();
        assert!(
            html.contains("sum of the targets"),
            "no sum row in the HTML"
        );
        // Targets that ran the whole window: their total is their sum, and
        // nothing more is said.
        let mut whole = file_and_device_apart();
        whole.targets[0].figures.seconds = 2.0;
        whole.total.targets_sum = TargetsSum::of(&whole.targets, 2.0);
        assert_eq!(whole.total.targets_sum, None);
        let p = PointDoc::summarize(Vec::new(), vec![whole], false);
        assert_eq!(sum_line(&p), None);
    }

    /// A sweep of md's resync ceiling: each point's resync rate and the
    /// whole rebuild's time stand beside the users' figures in the table,
    /// the CSV and the HTML, and the plot is the trade-off between them.
    #[test]
    fn a_resync_sweep_gives_the_rebuild_time_beside_the_users_p99() {
        use crate::document::run::ResyncDoc;
        let point = |max: &str, rate: f64, p99: u64| {
            let mut d = sample_doc();
            if let Some(l) = d.total.figures.latency_ns.as_mut() {
                l.p99 = p99;
            }
            d.resync = vec![ResyncDoc {
                array: "md0".into(),
                action: "recovery".into(),
                done_start_bytes: 10 << 20,
                done_end_bytes: (10 << 20) + (rate * 5.0) as u64,
                total_bytes: 1 << 30,
                seconds: 5.0,
                bytes_per_sec: rate,
                full_seconds: Some((1u64 << 30) as f64 / rate),
                remaining_seconds: Some(1.0),
                finished: false,
                speed_min: None,
                speed_max: None,
            }];
            PointDoc::summarize(vec![("sync_speed_max".into(), max.into())], vec![d], false)
        };
        let params = vec![Param {
            name: "sync_speed_max".into(),
            values: vec!["1000".into(), "10000".into()],
        }];
        let pts = vec![
            point("1000", 1e6, 2_000_000),
            point("10000", 1e7, 9_000_000),
        ];
        assert!(
            header(&params).contains("resync MB/s"),
            "{}",
            header(&params)
        );
        let slow = row(&pts[0]);
        assert!(slow.contains("1.00") && slow.contains("17.9 min"), "{slow}");
        assert!(row(&pts[1]).contains("10.00"), "{}", row(&pts[1]));
        let lines = point_lines(&pts[0], &mut Vec::new());
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("  resync: md0 recovery ran beside the workload")),
            "{lines:#?}"
        );
        let doc = SweepDocument {
            params,
            points: pts,
            ..SweepDocument::new(Vec::new(), 1)
        };
        let csv = String::from_utf8(csv(&doc)).unwrap();
        assert!(csv
            .lines()
            .next()
            .unwrap()
            .ends_with("resync_bytes_per_sec,rebuild_seconds"));
        assert!(
            csv.lines().nth(1).unwrap().ends_with(",1000000.0,1073.7"),
            "{csv}"
        );
        let svg = crate::report::plot::sweep_svg(&doc).unwrap();
        assert!(svg.contains("rebuild"), "no trade-off chart");
        assert!(svg.contains("sync_speed_max=10000"), "points unlabelled");
        let html = crate::report::html::sweep(&doc).unwrap();
        assert!(html.contains("resync MB/s") && html.contains("17.9 min"));
    }

    #[test]
    fn each_point_shows_its_window() {
        // Seen: --passes 1 points of 0.16-0.28 s, said only by the JSON.
        let runs = [0.28, 0.16, 2.5]
            .iter()
            .map(|&s| {
                let mut d = sample_doc();
                d.window.seconds = s;
                d
            })
            .collect();
        let p = PointDoc::summarize(vec![("readahead".into(), "128".into())], runs, false);
        let params = [Param {
            name: "readahead".into(),
            values: vec!["128".into()],
        }];
        let head: Vec<String> = header(&params)
            .split("  ")
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(
            head.last().map(String::as_str),
            Some("window s"),
            "{head:?}"
        );
        // The shortest of its repeats, in the last column.
        let row = row(&p);
        assert_eq!(row.split_whitespace().last(), Some("0.16"), "{row}");
    }
}
