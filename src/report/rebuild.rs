//! The rebuild's trade-off, drawn: a sweep of md's resync limits
//! (`--param sync_speed_max=...`) as the users' p99 and MB/s against the
//! time the whole rebuild takes at each point's resync rate. Faster
//! rebuilds sit left; the price the users pay for them shows as the
//! curve climbs (p99) or falls (MB/s) there.

use anyhow::Result;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;

use crate::document::sweep::SweepDocument;
use crate::report::draw::{err, svg, COLORS};

/// One point: its label (the swept values), the rebuild's time at its
/// resync rate (seconds), the users' p99 (ms) and MB/s.
struct Pt {
    label: String,
    secs: f64,
    p99_ms: f64,
    mb: f64,
}

/// The points a trade-off chart can place: each with a resync that moved
/// and latency figures.
fn points(doc: &SweepDocument) -> Vec<Pt> {
    let mut pts: Vec<Pt> = doc
        .points
        .iter()
        .filter_map(|p| {
            let r = &p.runs[0];
            let t = crate::report::resync::totals(&r.resync)?;
            let full = t.full_seconds?;
            let l = r.total.figures.latency_ns?;
            let mut label: Vec<String> = p.values.iter().map(|(n, v)| format!("{n}={v}")).collect();
            if t.finished {
                // Done within the window: its rate, and so its time, a bound.
                label.push("(finished in the run: at most this)".into());
            }
            Some(Pt {
                label: label.join(" "),
                secs: full,
                p99_ms: l.p99.max(1) as f64 / 1e6,
                mb: p.bytes_per_sec_median / 1e6,
            })
        })
        .collect();
    pts.sort_by(|a, b| a.secs.total_cmp(&b.secs));
    pts
}

/// The trade-off chart, or None when no point's resync moved (none ran,
/// or the array was idle: nothing to trade).
pub fn svg_of(doc: &SweepDocument) -> Result<Option<String>> {
    let pts = points(doc);
    if pts.is_empty() {
        return Ok(None);
    }
    // The time axis in the unit that fits its longest rebuild.
    let longest = pts.iter().map(|p| p.secs).fold(0.0, f64::max);
    let (unit, per) = if longest < 5400.0 {
        ("minutes", 60.0)
    } else {
        ("hours", 3600.0)
    };
    let x = |p: &Pt| p.secs / per;
    let max_h = (longest / per * 1.15).max(1e-3);
    let x_desc = format!("{unit} the whole rebuild takes at the resync rate measured");
    let lo = pts.iter().map(|p| p.p99_ms).fold(f64::INFINITY, f64::min) / 2.0;
    let hi = pts.iter().map(|p| p.p99_ms).fold(0.0, f64::max) * 2.0;
    let max_mb = pts.iter().map(|p| p.mb).fold(1e-3, f64::max) * 1.15;
    svg((1000, 800), |root| {
        root.fill(&WHITE).map_err(err)?;
        let (top, bottom) = root.split_vertically(420);
        let mut c = ChartBuilder::on(&top)
            .caption(
                "the users' p99 against the rebuild's time at each point's resync rate",
                ("sans-serif", 18),
            )
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(0f64..max_h, (lo..hi).log_scale())
            .map_err(err)?;
        let marks = |y: fn(&Pt) -> f64, lift: f64| -> Vec<(f64, f64, f64, String)> {
            pts.iter()
                .map(|p| (x(p), y(p), y(p) * lift, p.label.clone()))
                .collect()
        };
        let desc = (x_desc.as_str(), "users' p99 latency, ms (log scale)");
        draw_line(&mut c, desc, &marks(|p| p.p99_ms, 1.2), COLORS[3])?;
        let mut c = ChartBuilder::on(&bottom)
            .caption(
                "the users' MB/s against the rebuild's time",
                ("sans-serif", 18),
            )
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(0f64..max_h, 0f64..max_mb)
            .map_err(err)?;
        let desc = (x_desc.as_str(), "users' MB/s (10^6 B/s)");
        draw_line(&mut c, desc, &marks(|p| p.mb, 1.03), COLORS[0])?;
        Ok(())
    })
    .map(Some)
}

/// A panel's mesh (`desc`: the x and y axes' words), and its points
/// `(x, y, label's y, label)` joined in order, each marked and labelled.
fn draw_line<DB: DrawingBackend, X, Y>(
    c: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    desc: (&str, &str),
    pts: &[(f64, f64, f64, String)],
    color: RGBColor,
) -> Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    c.configure_mesh()
        .x_desc(desc.0)
        .y_desc(desc.1)
        .light_line_style(WHITE)
        .draw()
        .map_err(err)?;
    let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
    c.draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
        .map_err(err)?;
    c.draw_series(line.iter().map(|&xy| Circle::new(xy, 4, color.filled())))
        .map_err(err)?;
    c.draw_series(pts.iter().map(|p| {
        Text::new(
            p.3.clone(),
            (p.0, p.2),
            ("sans-serif", 13).into_font().color(&BLACK),
        )
    }))
    .map_err(err)?;
    Ok(())
}
