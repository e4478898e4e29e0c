//! The history page (`history --html`): every disk a row, with a sparkline
//! of its most measured series' MB/s and p99, its last figures and trend,
//! and its drift and fail-slow flags; the drift and fail-slow lines below.

use std::fmt::Write;

use anyhow::Result;

use super::page::{esc, Page};
use crate::base::error::show_text;
use crate::base::units::fmt_latency_ns;
use crate::document::history::{HistoryDocument, PointDoc};

/// The page of a history document.
pub fn history(doc: &HistoryDocument) -> Result<String> {
    let mut page = Page::new("stripebench history");
    page.h(1, "Disk history");
    page.p(
        "",
        &format!(
            "{} disk(s), {} result(s), from {}. Each disk is keyed by its identity (WWN, else serial and model), whatever its device name; the sparklines are its most measured workload, oldest run on the left, runs whose figure was not the device's speed left out.",
            doc.disks.len(),
            doc.results,
            doc.database
        ),
    );
    let mut t = String::from(
        "<table>\n<thead><tr><th>disk</th><th>now</th><th>model</th><th>workload</th>\
         <th class=\"n\">runs</th><th>MB/s</th><th class=\"n\">last MB/s</th><th>p99</th>\
         <th class=\"n\">last p99</th><th class=\"n\">p99 &#916;</th><th>flags</th></tr></thead>\n<tbody>\n",
    );
    for d in &doc.disks {
        let Some(m) = &d.main else { continue };
        let good: Vec<&PointDoc> = m
            .points
            .iter()
            .filter(|p| p.not_device_speed.is_none())
            .collect();
        let rates: Vec<f64> = good.iter().map(|p| p.mb_per_sec).collect();
        let p99s: Vec<f64> = good
            .iter()
            .filter_map(|p| p.p99_ns)
            .map(|p| p as f64)
            .collect();
        let class = if d.flags.is_empty() {
            ""
        } else {
            " class=\"flag\""
        };
        let _ = writeln!(
            t,
            "<tr{class}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td>\
             <td class=\"n\">{:.1}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&show_text(&d.key)),
            esc(&show_text(&d.device)),
            esc(&show_text(d.model.as_deref().unwrap_or("-"))),
            esc(&show_text(&m.label)),
            d.results,
            sparkline(&rates, "#2b6cb0"),
            m.last.mb_per_sec,
            sparkline(&p99s, "#c05621"),
            m.last.p99_ns.map_or("-".into(), |p| fmt_latency_ns(p as f64)),
            m.p99_change_pct.map_or("-".into(), |v| format!("{v:+.0}%")),
            esc(&d.flags.join(", ")),
        );
    }
    t.push_str("</tbody>\n</table>\n");
    page.h(2, "Disks");
    page.raw(&t);
    page.raw("<style>tr.flag td { background: #fde8e8; } svg.spark { vertical-align: middle; }</style>\n");
    page.h(2, "Drift");
    if doc.drift.is_empty() {
        page.p("", "No disk drifted from its own baseline.");
    }
    for d in &doc.drift {
        page.p("warn", &d.line);
    }
    page.h(2, "Fail-slow against peers");
    if doc.fail_slow.is_empty() {
        page.p("", "No disk above its peers' prediction bound.");
    }
    for f in &doc.fail_slow {
        page.p("warn", &f.line);
    }
    for u in &doc.unfitted {
        page.p("", &format!("Too few peers to judge against: {u}."));
    }
    Ok(page.finish(&doc.tool))
}

/// An inline SVG polyline of `v` (120 × 24), scaled to its own range.
fn sparkline(v: &[f64], colour: &str) -> String {
    const W: f64 = 120.0;
    const H: f64 = 24.0;
    let v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return "-".into();
    }
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    let span = if hi > lo { hi - lo } else { 1.0 };
    let step = if v.len() > 1 {
        W / (v.len() - 1) as f64
    } else {
        0.0
    };
    let pts: Vec<String> = v
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let y = if hi > lo {
                H - 2.0 - (x - lo) / span * (H - 4.0)
            } else {
                H / 2.0
            };
            format!("{:.1},{:.1}", i as f64 * step, y)
        })
        .collect();
    let last = pts.last().cloned().unwrap_or_default();
    let (lx, ly) = last.split_once(',').unwrap_or(("0", "0"));
    format!(
        "<svg class=\"spark\" width=\"{W}\" height=\"{H}\" viewBox=\"-2 0 {} {H}\" role=\"img\"><polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" points=\"{}\"/><circle cx=\"{lx}\" cy=\"{ly}\" r=\"2\" fill=\"{colour}\"/></svg>",
        W + 4.0,
        pts.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparkline_spans_its_range_and_a_flat_one_is_level() {
        let s = sparkline(&[1.0, 2.0, 3.0], "#000");
        assert!(s.contains("points=\"0.0,22.0 60.0,12.0 120.0,2.0\""), "{s}");
        assert!(sparkline(&[5.0, 5.0], "#000").contains("0.0,12.0 120.0,12.0"));
        assert_eq!(sparkline(&[], "#000"), "-");
    }
}
