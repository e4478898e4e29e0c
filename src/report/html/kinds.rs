//! The pages of the documents made of runs: a sweep (its points, its plot,
//! each point's run), a compare (the phases, the members against the
//! volume, each phase's run) and a merge (the hosts, the fleet's latency).

use anyhow::Result;

use super::charts;
use super::page::{esc, Page};
use super::run::{byline, config_pairs, configuration, plots, results, topology};
use crate::analysis::histogram::{LatencyHistogram, LatencySummary};
use crate::base::units::{fmt_latency_ns, mb_per_sec};
use crate::base::warning::Warning;
use crate::document::compare::{run_label, CompareDocument, PhaseStatus};
use crate::document::merge::MergedDocument;
use crate::document::run::{Figures, RunDocument};
use crate::document::sweep::{PointDoc, SweepDocument};
use crate::report::chart::{Latency, Throughput};
use crate::report::plot::COLORS;
use plotters::style::RGBColor;

fn lat(l: &Option<LatencySummary>, f: fn(&LatencySummary) -> u64) -> String {
    l.as_ref()
        .map_or("-".into(), |l| fmt_latency_ns(f(l) as f64))
}

/// A point's (or a target's) IOPS, p50, p99, p99.9 and errors.
fn figure_cells(f: &Figures) -> [String; 5] {
    [
        format!("{:.0}", f.iops),
        lat(&f.latency_ns, |l| l.p50),
        lat(&f.latency_ns, |l| l.p99),
        lat(&f.latency_ns, |l| l.p99_9),
        f.errors.to_string(),
    ]
}

/// One run inside a larger document, folded: its results, plots and stacks.
fn folded_run(page: &mut Page, title: &str, doc: &RunDocument, open: bool) -> Result<()> {
    page.raw(&format!(
        "<details{}>\n<summary>{}</summary>\n",
        if open { " open" } else { "" },
        esc(title)
    ));
    page.p("sub", &byline(doc));
    results(page, doc, 3);
    plots(page, doc, 3)?;
    topology(page, doc, 3);
    page.raw("</details>\n");
    Ok(())
}

/// A sweep: the points' table and plot, the configuration, and each point's run.
pub fn sweep(doc: &SweepDocument) -> Result<String> {
    let names: Vec<&str> = doc.params.iter().map(|p| p.name.as_str()).collect();
    let mut page = Page::new(&format!("stripebench sweep over {}", names.join(", ")));
    page.h(1, "stripebench sweep");
    let first = doc.points.first().and_then(|p| p.runs.first());
    if let Some(r) = first {
        page.p("sub", &byline(r));
    }
    sweep_lead(&mut page, doc);
    page.h(2, "Points");
    sweep_points(&mut page, doc, &names);
    if !doc.points.is_empty() {
        sweep_charts(&mut page, doc)?;
    }
    if let Some(r) = first {
        configuration(&mut page, r, 2);
        page.p(
            "sub",
            "(the first point's options; what differs between the points is below)",
        );
        sweep_configs(&mut page, doc, &names);
    }
    page.h(2, "Each point");
    for p in &doc.points {
        let label: Vec<String> = p.values.iter().map(|(n, v)| format!("{n}={v}")).collect();
        for (k, r) in p.runs.iter().enumerate() {
            let title = if p.runs.len() > 1 {
                format!(
                    "{}: repeat {} ({:.1} MB/s)",
                    label.join(" "),
                    k + 1,
                    mb_per_sec(r.total.figures.bytes_per_sec)
                )
            } else {
                format!(
                    "{} ({:.1} MB/s)",
                    label.join(" "),
                    mb_per_sec(r.total.figures.bytes_per_sec)
                )
            };
            folded_run(&mut page, &title, r, false)?;
        }
    }
    Ok(page.finish(&doc.tool))
}

/// A sweep's lead: its parameters, its points and what its MB/s mean.
fn sweep_lead(page: &mut Page, doc: &SweepDocument) {
    page.raw("<div class=\"lead\">\n");
    for p in &doc.params {
        page.p("", &format!("{} = {}", p.name, p.values.join(", ")));
    }
    page.p(
        "",
        &format!(
            "{} point(s), {} repeat(s) each; MB/s = 10^6 B/s, a point's over the shared window of its targets (where they ended at different times, a row gives the sum of their own rates); with repeats, the run closest to the median stands for its point{}",
            doc.points.len(),
            doc.repeat,
            if doc.interrupted { "; INTERRUPTED: the points that finished" } else { "" }
        ),
    );
    page.raw("</div>\n");
}

/// A ratio's cell: three decimals, or "-" when there is none.
fn ratio(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.3}"))
}

/// The points' table (a row a point, and rows under it for its targets
/// where they differ), then each point's warnings.
fn sweep_points(page: &mut Page, doc: &SweepDocument, names: &[&str]) {
    let mut head: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    head.extend(
        [
            "MB/s", "min", "max", "IOPS", "p50", "p99", "p99.9", "errors", "CPU s/GB", "dev/app",
        ]
        .map(String::from),
    );
    let resync = crate::report::resync::swept(names);
    if resync {
        head.extend(["resync MB/s", "rebuild"].map(String::from));
    }
    head.push("warnings".into());
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut point_warnings: Vec<(String, Vec<&Warning>)> = Vec::new();
    for p in &doc.points {
        let warnings = point_row(p, resync, &mut rows);
        if !warnings.is_empty() {
            let label: Vec<String> = p.values.iter().map(|(n, v)| format!("{n}={v}")).collect();
            point_warnings.push((label.join(" "), warnings));
        }
        target_rows(p, head.len(), &mut rows);
    }
    page.table(&head, &rows, names.len());
    // Each point's warnings, under the table: a normal-looking row must not hide them.
    if !point_warnings.is_empty() {
        let text: Vec<String> = point_warnings
            .iter()
            .flat_map(|(label, ws)| ws.iter().map(move |w| format!("warning: {label}: {w}")))
            .collect();
        page.notes(&text.join("\n"));
    }
}

/// A point's row; its warnings (each once, over its repeats).
fn point_row<'a>(
    p: &'a PointDoc,
    resync: bool,
    rows: &mut Vec<(String, Vec<String>)>,
) -> Vec<&'a Warning> {
    let r = &p.runs[0];
    let t = &r.total;
    // With one repeat there is no range.
    let range = |v: f64| {
        if p.runs.len() > 1 {
            format!("{:.1}", mb_per_sec(v))
        } else {
            "-".into()
        }
    };
    let (dev, app) = crate::report::sweep::device_and_app_bytes(r);
    let mut warnings: Vec<&Warning> = Vec::new();
    for w in p.runs.iter().flat_map(|r| &r.warnings) {
        if !warnings.contains(&w) {
            warnings.push(w);
        }
    }
    let mut cells: Vec<String> = p.values.iter().map(|(_, v)| v.clone()).collect();
    cells.extend([
        format!("{:.1}", mb_per_sec(p.bytes_per_sec_median)),
        range(p.bytes_per_sec_min),
        range(p.bytes_per_sec_max),
    ]);
    cells.extend(figure_cells(&t.figures));
    cells.extend([
        ratio(t.cpu_sec_per_gb()),
        ratio((app > 0).then(|| dev as f64 / app as f64)),
    ]);
    if resync {
        cells.extend(crate::report::resync::cells(&r.resync));
    }
    cells.extend([if warnings.is_empty() {
        "-".into()
    } else {
        format!("{} (below)", warnings.len())
    }]);
    let class = if p.partial || !warnings.is_empty() {
        "slow"
    } else {
        ""
    };
    rows.push((class.to_string(), cells));
    warnings
}

/// The rows under a point's for its targets: one each where they are of
/// different kinds, and their own rates' sum where they ended apart.
fn target_rows(p: &PointDoc, columns: usize, rows: &mut Vec<(String, Vec<String>)>) {
    let r = &p.runs[0];
    // Targets of different kinds (a file beside a device): each its own row.
    if crate::report::sweep::targets_differ_in_kind(r) {
        for tg in &r.targets {
            let mut cells: Vec<String> = (1..p.values.len()).map(|_| String::new()).collect();
            cells.push(format!(
                "\u{2514} {} {}",
                crate::report::sweep::kind_name(tg),
                tg.path
            ));
            cells.extend([
                format!("{:.1}", mb_per_sec(tg.figures.bytes_per_sec)),
                "-".into(),
                "-".into(),
            ]);
            cells.extend(figure_cells(&tg.figures));
            cells.extend([
                ratio(crate::report::sweep::target_cpu_per_gb(tg)),
                ratio(crate::report::sweep::target_dev_app(tg)),
                String::new(),
            ]);
            rows.push(("per-target".to_string(), cells));
        }
    }
    // Targets that ended at different times: the point's MB/s is their
    // bytes over the shared window, not their sum; the sum beside it.
    if let Some(sum) = p.targets_sum_bytes_per_sec_median {
        let mut cells: Vec<String> = (1..p.values.len()).map(|_| String::new()).collect();
        cells.push(
            "\u{2514} sum of the targets' own rates (MB/s above: bytes over the shared window)"
                .into(),
        );
        cells.push(format!("{:.1}", mb_per_sec(sum)));
        cells.extend((0..columns - cells.len()).map(|_| String::new()));
        rows.push(("per-target".to_string(), cells));
    }
}

/// A sweep's charts: throughput and p99 per point, and each point's
/// latency against percentile.
fn sweep_charts(page: &mut Page, doc: &SweepDocument) -> Result<()> {
    let names: Vec<&str> = doc.params.iter().map(|p| p.name.as_str()).collect();
    let svg = crate::report::plot::sweep_svg(doc)?;
    // A sweep of md's resync limits draws its trade-off (when a resync ran).
    let caption = if crate::report::resync::swept(&names) && svg.contains("rebuild's time") {
        "the users' p99 and MB/s against the time the whole rebuild takes at each point's resync rate"
    } else {
        "throughput per point (each target and the total) and p99 latency per point"
    };
    page.figure(&svg, caption);
    let hists: Vec<(String, LatencyHistogram)> = doc
        .points
        .iter()
        .filter_map(|p| {
            let label: Vec<String> = p.values.iter().map(|(n, v)| format!("{n}={v}")).collect();
            Some((
                label.join(" "),
                LatencyHistogram::from_base64(&p.runs[0].total.figures.histogram).ok()?,
            ))
        })
        .collect();
    if let Some(plot) = charts::percentiles(&Latency::of(hists))? {
        page.plot(
            &plot,
            "latency against percentile, one line per point (all targets)",
        );
    }
    Ok(())
}

/// Every option whose value is not the same at every point, per point.
fn sweep_configs(page: &mut Page, doc: &SweepDocument, names: &[&str]) {
    let configs: Vec<Vec<(String, String)>> = doc
        .points
        .iter()
        .map(|p| config_pairs(&serde_json::to_value(&p.runs[0].config).unwrap_or_default()))
        .collect();
    let mut differing: Vec<String> = Vec::new();
    for (k, v) in configs.iter().flatten() {
        let same = configs
            .iter()
            .all(|c| c.iter().find(|(k2, _)| k2 == k).map(|(_, v2)| v2) == Some(v));
        if !same && !differing.contains(k) && !names.contains(&k.as_str()) {
            differing.push(k.clone());
        }
    }
    page.h(3, "Configuration per point (the options that differ)");
    if differing.is_empty() {
        page.p("sub", "every point ran with the same options");
        return;
    }
    let mut head: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    head.extend(differing.iter().cloned());
    let rows: Vec<(String, Vec<String>)> = doc
        .points
        .iter()
        .zip(&configs)
        .map(|(p, c)| {
            let mut cells: Vec<String> = p.values.iter().map(|(_, v)| v.clone()).collect();
            for k in &differing {
                cells.push(
                    c.iter()
                        .find(|(k2, _)| k2 == k)
                        .map_or("-".into(), |(_, v)| v.clone()),
                );
            }
            ("config-diff".to_string(), cells)
        })
        .collect();
    page.table(&head, &rows, head.len());
}

/// A compare: the volume's stack, the phases, the members against the
/// volume, and each phase's run.
pub fn compare(doc: &CompareDocument) -> Result<String> {
    let mut page = Page::new(&format!("stripebench compare {}", doc.volume));
    page.h(1, &format!("stripebench compare {}", doc.volume));
    if let Some(r) = doc.phases.first() {
        page.p("sub", &byline(&r.document));
    }
    let text = crate::report::compare::render(doc);
    page.raw("<div class=\"lead\">\n");
    for l in text.lines().take(2) {
        page.p("", l);
    }
    page.raw("</div>\n");
    compare_phases(&mut page, doc, &text);
    compare_members(&mut page, doc)?;
    // The verdict with its numbers, as the text says it.
    let verdict: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("verdict: "))
        .take_while(|l| !l.starts_with("note: "))
        .collect();
    page.pre(&verdict.join("\n"));
    let notes: Vec<String> = doc.notes.iter().map(|n| format!("note: {n}")).collect();
    page.notes(&notes.join("\n"));
    page.h(2, "The volume's storage stack");
    page.pre(&crate::report::topology::render(&doc.topology));
    // The options as the members-together phase ran them (each phase
    // changes its targets, jobs and direct or buffered).
    let together = doc
        .phases
        .iter()
        .find(|p| p.kind == crate::document::compare::PhaseKind::Together)
        .or(doc.phases.first());
    if let Some(p) = together {
        configuration(&mut page, &p.document, 2);
        page.p(
            "sub",
            &format!("(the options of the phase '{}'; each phase sets its own targets, workers and direct or buffered)", p.kind),
        );
    }
    page.h(2, "Each phase");
    for p in doc.runs() {
        folded_run(
            &mut page,
            &format!(
                "{}{} ({:.1} MB/s)",
                p.kind,
                run_label(&p.kind, p.repeat, doc.repeat),
                mb_per_sec(p.bytes_per_sec)
            ),
            &p.document,
            false,
        )?;
    }
    Ok(page.finish(&doc.tool))
}

/// The phases' table, then the ceilings and the efficiency as the text
/// (`text`, the compare's as a table says it) says them.
fn compare_phases(page: &mut Page, doc: &CompareDocument, text: &str) {
    page.h(2, "Phases");
    // Every run; a thin one has no rate, a failed one is marked.
    let rows: Vec<(String, Vec<String>)> = doc
        .runs()
        .map(|p| {
            let thin = p.status == PhaseStatus::Thin;
            let rate = |v: String| if thin { "-".to_string() } else { v };
            (
                if p.status == PhaseStatus::Ok {
                    ""
                } else {
                    "slow"
                }
                .to_string(),
                vec![
                    format!("{}{}", p.kind, run_label(&p.kind, p.repeat, doc.repeat)),
                    rate(format!("{:.1}", mb_per_sec(p.bytes_per_sec))),
                    rate(format!("{:.0}", p.iops)),
                    rate(p.p99_ns.map_or("-".into(), |v| fmt_latency_ns(v as f64))),
                    rate(p.cpu_sec_per_gb.map_or("-".into(), |v| format!("{v:.3}"))),
                    match p.status {
                        // Its targets ended at different times: what the
                        // phase's MB/s is, and their own rates' sum.
                        PhaseStatus::Ok => crate::report::table::total_line(&p.document)
                            .map_or("ok".to_string(), |l| format!("ok; {l}")),
                        PhaseStatus::Thin => format!("THIN: {}", p.problems.join("; ")),
                        PhaseStatus::Failed => format!("FAILED: {}", p.problems.join("; ")),
                    },
                ],
            )
        })
        .collect();
    let head: Vec<String> = ["phase", "MB/s", "IOPS", "p99", "CPU s/GB", "status"]
        .map(String::from)
        .to_vec();
    page.table(&head, &rows, 1);
    // The ceilings, the efficiency and its note, as the text says them.
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("ceilings ") && !l.starts_with("stripe efficiency"))
        .take_while(|l| !l.starts_with("members ("))
        .collect();
    if !lines.is_empty() {
        page.pre(&lines.join("\n"));
    }
}

/// The members against the volume: a bar each beside their sum and the
/// volume's phases, and their table.
fn compare_members(page: &mut Page, doc: &CompareDocument) -> Result<()> {
    page.h(2, "Members against the volume");
    // Members blue (a slow one red), their sum grey, the volume green.
    let mut bars: Vec<(String, f64, RGBColor)> = doc
        .members
        .iter()
        .map(|m| {
            let color = if m.slow { COLORS[3] } else { COLORS[0] };
            (format!("member {}", m.path), m.bytes_per_sec, color)
        })
        .collect();
    if !doc.members.is_empty() {
        bars.push((
            "members together (sum)".into(),
            doc.members.iter().map(|m| m.bytes_per_sec).sum(),
            RGBColor(127, 127, 127),
        ));
    }
    bars.extend(
        doc.phases
            .iter()
            .filter(|p| p.kind.on_volume())
            .map(|p| (p.kind.to_string(), p.bytes_per_sec, COLORS[2])),
    );
    if !bars.is_empty() {
        page.figure(
            &charts::bars(&bars)?,
            "MB/s: each member in the all-members-at-once phase (blue, a slow one red), their sum (grey), and the volume's phases (green)",
        );
    }
    // The members alone only with --solo.
    let solo = doc.members.iter().any(|m| m.solo_bytes_per_sec.is_some());
    let rows: Vec<(String, Vec<String>)> = doc
        .members
        .iter()
        .map(|m| {
            let mut cells = vec![
                m.path.clone(),
                format!("{:.1}", mb_per_sec(m.bytes_per_sec)),
                format!("{:.1}%", m.share * 100.0),
            ];
            if solo {
                cells.push(
                    m.solo_bytes_per_sec
                        .map_or("-".into(), |s| format!("{:.1}", mb_per_sec(s))),
                );
            }
            cells.push(if m.slow {
                "SLOW (see the verdict)".to_string()
            } else if m.errors > 0 {
                format!("FAILING: {} I/O error(s)", m.errors)
            } else {
                String::new()
            });
            (if m.slow { "slow" } else { "" }.to_string(), cells)
        })
        .collect();
    let mut head: Vec<String> = ["member", "MB/s (all at once)", "share"]
        .map(String::from)
        .to_vec();
    if solo {
        head.push("MB/s alone".into());
    }
    head.push(String::new());
    page.table(&head, &rows, 1);
    Ok(())
}

/// A merge: the hosts and the fleet, the fleet's latency, the workers'
/// time series, the workload.
pub fn merge(doc: &MergedDocument) -> Result<String> {
    let t = &doc.total;
    let mut page = Page::new(&format!(
        "stripebench fleet of {} host(s): {:.1} MB/s",
        doc.hosts.len(),
        mb_per_sec(t.bytes_per_sec)
    ));
    let missing = if doc.missing.is_empty() {
        String::new()
    } else {
        format!(" measured, {} missing (incomplete)", doc.missing.len())
    };
    page.h(
        1,
        &format!("stripebench fleet of {} host(s){missing}", doc.hosts.len()),
    );
    page.p(
        "sub",
        &format!(
            "{} bs {}; overlap {:.2}s, start skew {:.3}s; MB/s = 10^6 B/s; latency from the merged histograms",
            doc.config.rw.name(),
            doc.config
                .bs
                .parse::<u64>()
                .map_or(doc.config.bs.clone(), crate::base::units::fmt_size_arg),
            t.overlap_sec,
            t.start_skew_sec
        ),
    );
    page.h(2, "Hosts");
    let mut rows: Vec<(String, Vec<String>)> = doc
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            (
                String::new(),
                vec![
                    doc.host_label(i),
                    h.source.clone(),
                    format!("{:.1}", mb_per_sec(h.bytes_per_sec)),
                    format!("{:.0}", h.iops),
                    lat(&h.latency_ns, |l| l.p50),
                    lat(&h.latency_ns, |l| l.p99),
                    lat(&h.latency_ns, |l| l.p99_9),
                    format!("{:.2}s", h.seconds),
                    h.errors.to_string(),
                ],
            )
        })
        .collect();
    rows.push((
        "total".into(),
        vec![
            if doc.is_concurrent() {
                "FLEET"
            } else {
                "FLEET, not concurrent"
            }
            .into(),
            String::new(),
            format!("{:.1}", mb_per_sec(t.bytes_per_sec)),
            format!("{:.0}", t.iops),
            lat(&t.latency_ns, |l| l.p50),
            lat(&t.latency_ns, |l| l.p99),
            lat(&t.latency_ns, |l| l.p99_9),
            format!("{:.2}s", t.overlap_sec),
            t.errors.to_string(),
        ],
    ));
    let head: Vec<String> = [
        "host", "document", "MB/s", "IOPS", "p50", "p99", "p99.9", "window", "errors",
    ]
    .map(String::from)
    .to_vec();
    page.table(&head, &rows, 2);
    let warnings: Vec<String> = doc
        .warnings
        .iter()
        .map(|w| format!("warning: {w}"))
        .collect();
    page.notes(&format!(
        "{}{}",
        crate::report::merge::fleet_notes(doc),
        warnings.join("\n")
    ));
    page.h(2, "Latency percentiles");
    let mut hists: Vec<(String, LatencyHistogram)> = doc
        .hosts
        .iter()
        .enumerate()
        .filter_map(|(i, h)| {
            Some((
                doc.host_label(i),
                LatencyHistogram::from_base64(&h.histogram).ok()?,
            ))
        })
        .collect();
    if let Ok(h) = LatencyHistogram::from_base64(&t.histogram) {
        hists.push(("fleet".into(), h));
    }
    if let Some(plot) = charts::percentiles(&Latency::of(hists))? {
        page.plot(
            &plot,
            "latency against percentile: one line per host, the fleet in black",
        );
    }
    page.h(2, "Throughput over time");
    if let Some(plot) = charts::timeseries(&Throughput::of(&doc.workers, |w| w.target.clone()))? {
        page.plot(
            &plot,
            "MB/s in each second of each host's own window: one line per worker (host:target), their sum in black",
        );
    }
    page.h(2, "Workload");
    page.raw("<div class=\"cols\">\n<div>\n");
    page.kv(&config_pairs(
        &serde_json::to_value(&doc.config).unwrap_or_default(),
    ));
    page.raw("</div>\n</div>\n");
    Ok(page.finish(&doc.tool))
}
