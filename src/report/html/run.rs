//! A run's page, and its sections that the sweep, compare and merge pages
//! reuse for each of their runs: the configuration, the results table,
//! the device counters and notes, each target's storage stack, the time
//! series and the latency percentiles.

use anyhow::Result;

use super::charts;
use super::page::Page;
use crate::analysis::histogram::LatencyHistogram;
use crate::base::units::{fmt_bytes, fmt_latency_ns};
use crate::document::run::RunDocument;
use crate::report::chart::{Latency, Throughput};
use crate::report::table;

/// The whole page of one run.
pub fn run(doc: &RunDocument) -> Result<String> {
    let mut page = Page::new(&format!(
        "stripebench run on {}: {} target(s), {:.1} MB/s",
        doc.host.hostname,
        doc.targets.len(),
        doc.total.figures.bytes_per_sec / 1e6
    ));
    page.h(1, "stripebench run");
    page.p("sub", &byline(doc));
    results(&mut page, doc, 2);
    plots(&mut page, doc, 2)?;
    configuration(&mut page, doc, 2);
    fio(&mut page, doc, 2);
    topology(&mut page, doc, 2);
    Ok(page.finish(&doc.tool))
}

/// When the window opened, in RFC 3339 (UTC), or the raw figure when it is
/// no time humantime can write (before 1970, after 9999: an edited document).
fn window_opened(unix_sec: f64) -> String {
    const YEAR_10000: f64 = 253_402_300_800.0;
    if (0.0..YEAR_10000).contains(&unix_sec) {
        humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(unix_sec),
        )
        .to_string()
    } else {
        format!("at Unix second {unix_sec}")
    }
}

/// Host, kernel, when, and whether a signal cut the run short.
pub fn byline(doc: &RunDocument) -> String {
    let when = window_opened(doc.window.start_unix_sec);
    format!(
        "{} (kernel {}, {} CPUs{}), window opened {when}, stripebench {}{}",
        doc.host.hostname,
        doc.host.kernel,
        doc.host.cpus,
        doc.host
            .cpu_model
            .as_ref()
            .map(|m| format!(", {m}"))
            .unwrap_or_default(),
        doc.tool.version,
        if doc.interrupted {
            "; INTERRUPTED: the figures cover what was measured"
        } else {
            ""
        }
    )
}

/// What ran (the text report's heading), the table of workers, targets and
/// the TOTAL, what the figures mean, the device counters and the warnings.
pub fn results(page: &mut Page, doc: &RunDocument, level: u8) {
    page.h(level, "Results");
    page.raw("<div class=\"lead\">\n");
    for l in table::heading(doc).lines() {
        page.p("", l);
    }
    page.raw("</div>\n");
    let rows = table::rows(doc);
    let mut head = rows[0].clone();
    head[0] = String::new();
    let body: Vec<(String, Vec<String>)> = rows[1..]
        .iter()
        .map(|r| {
            let class = match r[0].as_str() {
                "target" => "target",
                // A mixed pattern's reads and writes apart: plain rows.
                l if l.ends_with(" reads") || l.ends_with(" writes") => "",
                l if l.starts_with("TOTAL") => "total",
                _ => "",
            };
            (class.to_string(), r.clone())
        })
        .collect();
    page.table(&head, &body, 2);
    page.notes(&table::summary(doc));
    devices(page, doc, level + 1);
    let notes = table::notes(doc);
    if !notes.trim().is_empty() {
        page.h(level + 1, "Errors and warnings");
        page.notes(&notes);
    }
}

/// The block devices' own counters against the run's bytes, one row per device.
fn devices(page: &mut Page, doc: &RunDocument, level: u8) {
    let mut seen: Vec<&str> = Vec::new();
    let mut rows = Vec::new();
    for t in &doc.targets {
        let Some(d) = &t.device else { continue };
        if seen.contains(&d.name.as_str()) {
            continue;
        }
        seen.push(&d.name);
        let ratio = |r: Option<f64>| r.map_or("-".into(), |r| format!("{r:.3}"));
        let req = |r: Option<f64>| r.map_or("-".into(), |r| fmt_bytes(r as u64));
        let mut cells = vec![d.name.clone(), t.path.clone()];
        if d.stats {
            cells.extend([
                fmt_bytes(d.read_bytes),
                fmt_bytes(d.app_read_bytes),
                ratio(d.read_ratio),
                req(d.avg_read_request_bytes),
                fmt_bytes(d.write_bytes),
                fmt_bytes(d.app_write_bytes),
                ratio(d.write_ratio),
                req(d.avg_write_request_bytes),
                d.ios.to_string(),
                (d.read_merges + d.write_merges).to_string(),
                format!("{:.0}", d.util_pct),
                if d.shared { "yes" } else { "no" }.into(),
            ]);
        } else {
            cells.push("keeps no I/O statistics".into());
            cells.extend(std::iter::repeat_n(String::new(), 11));
        }
        rows.push((String::new(), cells));
    }
    if rows.is_empty() {
        return;
    }
    page.h(level, "Device counters");
    page.p(
        "sub",
        "From /sys/block/*/stat over the whole run (ramp, window and flush), against this run's own bytes: a read ratio below 1 means the page cache served reads, above 1 read-ahead; an average request smaller than the block size means each I/O was split on the way.",
    );
    let head: Vec<String> = [
        "device",
        "target",
        "read",
        "app read",
        "ratio",
        "avg req",
        "written",
        "app written",
        "ratio",
        "avg req",
        "I/Os",
        "merges",
        "util %",
        "shared",
    ]
    .map(String::from)
    .to_vec();
    page.table(&head, &rows, 2);
}

/// Every option the run used, as the document records it, with the window
/// and the host beside it.
pub fn configuration(page: &mut Page, doc: &RunDocument, level: u8) {
    page.h(level, "Configuration");
    page.raw("<div class=\"cols\">\n<div>\n");
    page.kv(&config_pairs(
        &serde_json::to_value(&doc.config).unwrap_or_default(),
    ));
    page.raw("</div>\n<div>\n");
    let w = &doc.window;
    let mut pairs = vec![
        (
            "window".to_string(),
            format!("{:.3}s after a {:.3}s ramp", w.seconds, w.ramp_sec),
        ),
        ("ended by".to_string(), w.ended_by.clone()),
        ("timing".to_string(), w.rule.clone()),
        ("host".to_string(), doc.host.hostname.clone()),
        ("kernel".to_string(), doc.host.kernel.clone()),
        ("CPUs".to_string(), doc.host.cpus.to_string()),
        ("peak RSS".to_string(), fmt_bytes(doc.host.peak_rss_bytes)),
    ];
    if let Some(line) = doc.below_min_line() {
        pairs.push(("minimum rate".into(), line));
    }
    if let Some(m) = &doc.host.cpu_model {
        pairs.push(("CPU model".into(), m.clone()));
    }
    if let Some(c) = &doc.cache {
        pairs.push((
            "page cache".into(),
            format!("{} ({}, {:.3}s)", c.state, c.method, c.seconds),
        ));
    }
    for w in &doc.workers {
        pairs.push((
            format!("w{}", w.id),
            format!(
                "{} on CPU {}{}, {}",
                w.target,
                w.cpu.map_or("?".into(), |c| c.to_string()),
                if w.pinned_cpu.is_some() {
                    " (pinned)"
                } else {
                    ""
                },
                w.engine_path
            ),
        ));
    }
    page.kv(&pairs);
    page.raw("</div>\n</div>\n");
}

/// The fio command that runs the same workload (`fio` of the document), in
/// a block one click selects whole, with what fio does otherwise; or why
/// there is none. Nothing for a document from before it was recorded.
pub fn fio(page: &mut Page, doc: &RunDocument, level: u8) {
    let Some(f) = &doc.fio else { return };
    page.h(level, "The same workload in fio");
    match &f.command {
        Some(c) => {
            // One line, whatever the document says: paths are
            // shell-quoted by the line's maker, which refuses control
            // characters, but a document read back may be anyone's, and a
            // newline here would put a line of its choosing in the box a
            // reader copies and runs.
            page.raw(&format!(
                "<pre class=\"copy\" id=\"fio\">{}</pre>\n",
                super::page::esc(&crate::base::error::show_text(c))
            ));
            for n in &f.notes {
                page.p("", &format!("not in fio: {n}"));
            }
        }
        None => {
            page.p(
                "",
                &format!(
                    "none: {}",
                    f.unavailable.as_deref().unwrap_or("not recorded")
                ),
            );
        }
    }
}

/// A JSON object's fields as names and readable values.
pub fn config_pairs(v: &serde_json::Value) -> Vec<(String, String)> {
    let show = |v: &serde_json::Value| -> String {
        match v {
            serde_json::Value::Null => "-".into(),
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(a) => a
                .iter()
                .map(|x| x.as_str().map_or(x.to_string(), String::from))
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        }
    };
    v.as_object()
        .map(|o| o.iter().map(|(k, v)| (k.clone(), show(v))).collect())
        .unwrap_or_default()
}

/// Each target's storage stack, as `stripebench topology` prints it.
pub fn topology(page: &mut Page, doc: &RunDocument, level: u8) {
    page.h(level, "Targets and their storage stacks");
    for t in &doc.targets {
        page.h(level + 1, &t.path);
        page.p(
            "",
            &format!(
                "{}, {}, logical block {} B, region {} from offset {}, {} worker(s), bs {}{}",
                match t.kind {
                    crate::device::TargetKind::Block => "block device",
                    crate::device::TargetKind::File => "file",
                },
                fmt_bytes(t.size),
                t.logical_block_size,
                fmt_bytes(t.region.length),
                t.region.offset,
                t.workers,
                fmt_bytes(t.bs),
                t.read_ahead_kb
                    .map(|r| format!(", read-ahead {r} KiB"))
                    .unwrap_or_default()
            ),
        );
        match &t.topology {
            Some(s) => page.pre(&crate::report::topology::render(s)),
            None => page.p("sub", "(its storage stack was not recorded)"),
        };
    }
}

/// The time series (per worker and total) and the latency percentiles
/// (per target and total).
pub fn plots(page: &mut Page, doc: &RunDocument, level: u8) -> Result<()> {
    page.h(level, "Throughput over time");
    let workers = match doc.workers_per_second() {
        Ok(w) => w,
        Err(why) => {
            page.p("sub", &format!("No time series: {why}."));
            Vec::new()
        }
    };
    if let Some(m) = crate::report::members::Members::of(doc, &workers) {
        return many_plots(page, doc, &m, level);
    }
    let throughput = Throughput::of(&workers, |w| format!("w{} {}", w.id, w.target));
    match charts::timeseries(&throughput)? {
        _ if workers.is_empty() && !doc.workers.is_empty() => {}
        Some(plot) => {
            page.plot(
                &plot,
                "MB/s (10^6 B/s) in each whole second of the window: one line per worker, the total in black",
            );
            let mut head = vec!["second".to_string()];
            head.extend(doc.workers.iter().map(|w| format!("w{} MB/s", w.id)));
            head.push("total MB/s".into());
            page.raw("<details>\n<summary>the figures, second by second</summary>\n");
            page.table(&head, &throughput.rows(), 1);
            page.raw("</details>\n");
        }
        None => {
            page.p("sub", "The window held no whole second: no time series.");
        }
    }
    latency(
        page,
        doc,
        level,
        crate::report::plot::target_histograms(doc),
    )
}

/// Many members ([`crate::report::members`]): the heatmap and the sorted
/// members with the verdict's fence instead of a line per worker; the
/// latency of all targets together instead of a line per target.
fn many_plots(
    page: &mut Page,
    doc: &RunDocument,
    m: &crate::report::members::Members,
    level: u8,
) -> Result<()> {
    use crate::report::members::{heatmap_svg, sorted_svg};
    if m.columns.is_empty() {
        page.p("sub", "The window held no whole second: no time series.");
    } else {
        page.figure(
            &heatmap_svg(m),
            &format!(
                "MB/s of each of the {} {}s in each stretch of the window, a row each, sorted by the {}'s rate (slowest on top); the red line parts those below the verdict's fence; the JSON holds every interval",
                m.rows.len(),
                m.unit,
                m.unit
            ),
        );
    }
    page.figure(
        &sorted_svg(m),
        &format!(
            "each {}'s MB/s over its own active time, sorted; red: below the fence of compare's slow-member rule, applied to these {}s",
            m.unit, m.unit
        ),
    );
    latency(page, doc, level, Vec::new())
}

/// The latency percentiles: a line per target in `series` and the total in
/// black (the total alone when `series` is empty), and their table.
fn latency(
    page: &mut Page,
    doc: &RunDocument,
    level: u8,
    mut series: Vec<(String, LatencyHistogram)>,
) -> Result<()> {
    page.h(level, "Latency percentiles");
    let lines = if series.is_empty() {
        "all targets together (the table gives each)"
    } else {
        "one line per target, the total in black"
    };
    if doc.targets.len() > 1 || series.is_empty() {
        if let Ok(h) = LatencyHistogram::from_base64(&doc.total.figures.histogram) {
            series.push(("total".into(), h));
        }
    }
    match charts::percentiles(&Latency::of(series))? {
        Some(plot) => {
            // On a schedule (--rate), latency runs from each I/O's due time.
            let from = if doc.window.latency_from == "due" {
                "due time to completion"
            } else {
                "issue to completion"
            };
            page.plot(
                &plot,
                &format!("latency of each I/O, {from}, against its percentile, from the exact histograms: {lines}"),
            );
        }
        None => {
            page.p("sub", "No I/O completed: no latencies.");
        }
    }
    let rows: Vec<(String, Vec<String>)> = doc
        .targets
        .iter()
        .map(|t| (t.path.clone(), t.figures.latency_ns, t.figures.ios))
        .chain(std::iter::once((
            "TOTAL".to_string(),
            doc.total.figures.latency_ns,
            doc.total.figures.ios,
        )))
        .map(|(name, l, ios)| {
            let f = |g: fn(&crate::analysis::histogram::LatencySummary) -> f64| {
                l.as_ref().map_or("-".into(), |l| fmt_latency_ns(g(l)))
            };
            let class = if name == "TOTAL" { "total" } else { "" };
            (
                class.to_string(),
                vec![
                    name,
                    ios.to_string(),
                    f(|l| l.min as f64),
                    f(|l| l.mean),
                    f(|l| l.p50 as f64),
                    f(|l| l.p90 as f64),
                    f(|l| l.p99 as f64),
                    f(|l| l.p99_9 as f64),
                    f(|l| l.p99_99 as f64),
                    f(|l| l.max as f64),
                ],
            )
        })
        .collect();
    let head: Vec<String> = [
        "", "I/Os", "min", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max",
    ]
    .map(String::from)
    .to_vec();
    page.table(&head, &rows, 1);
    Ok(())
}
