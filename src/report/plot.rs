//! SVG plots (plotters' SVG backend: no system fonts needed). For a run:
//! MB/s over time, one line per worker, and each target's latency
//! distribution on a log-scaled latency axis (the models of both, shared
//! with the HTML report, are [`crate::report::chart`]'s). For a sweep: throughput against
//! the points, one line per target plus the total (labelled as bytes over
//! the shared window, with the sum of the targets' own rates beside it,
//! when the targets ended at different times), and p99 latency below.

use std::path::Path;

use anyhow::Result;
use plotters::prelude::*;

use crate::analysis::histogram::LatencyHistogram;
use crate::document::plan::PlanDoc;
use crate::document::run::RunDocument;
use crate::document::sweep::{Param, PointDoc, SweepDocument};
use crate::report::chart;
pub(crate) use crate::report::draw::{err, palette, svg, COLORS};
use crate::report::members;

/// Refuses a plot path that is not an SVG file name, before any I/O (the
/// path itself is checked with the other outputs, by `output::dest::check`).
pub fn check_path(p: &Path) -> std::result::Result<(), String> {
    if p.extension().is_none_or(|e| e != "svg") {
        return Err(format!(
            "--plot writes SVG: name the file .svg (got {})",
            p.display()
        ));
    }
    Ok(())
}

pub(crate) type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// One labelled line in the palette's `i`-th colour.
pub(crate) fn line(
    c: &mut Chart<'_, '_>,
    pts: Vec<(f64, f64)>,
    i: usize,
    label: String,
) -> Result<()> {
    let color = COLORS[i % COLORS.len()];
    c.draw_series(LineSeries::new(pts, color.stroke_width(2)))
        .map_err(err)?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    Ok(())
}

/// The legend box, drawn once all lines are in.
pub(crate) fn legend<'a, 'b: 'a>(c: &mut Chart<'a, 'b>) -> Result<()> {
    c.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)
}

/// MB/s over time per worker (top) and latency histograms per target
/// (bottom): the charts' models ([`chart::Throughput`], [`chart::Latency`])
/// drawn as one SVG; from [`members::MANY`] members, [`many_svg`] instead.
pub fn run_svg(doc: &RunDocument) -> Result<String> {
    // Per second (an interval that does not divide one: no series).
    let workers = doc.workers_per_second().unwrap_or_default();
    if let Some(m) = members::Members::of(doc, &workers) {
        return many_svg(doc, &m);
    }
    let throughput = chart::Throughput::of(&workers, |w| format!("w{} {}", w.id, w.target));
    let shares = chart::Latency::of(target_histograms(doc)).shares();
    svg((1000, 800), |root| {
        root.fill(&WHITE).map_err(err)?;
        let (top, bottom) = root.split_vertically(400);
        let max_t = throughput.seconds.max(1) as f64;
        let max_mb = throughput.peak_worker_mb();
        let mut c = ChartBuilder::on(&top)
            .caption("MB/s (10^6 B/s) over time, per worker", ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..max_t, 0f64..max_mb * 1.1)
            .map_err(err)?;
        c.configure_mesh()
            .x_desc("seconds into the window")
            .y_desc("MB/s")
            .draw()
            .map_err(err)?;
        for (i, w) in throughput.workers.iter().enumerate() {
            line(&mut c, w.mb_points(), i, w.label.clone())?;
        }
        legend(&mut c)?;
        draw_shares(
            &bottom,
            &shares,
            "latency distribution per target (log2 scale)",
        )
    })
}

/// The latency chart: share of I/Os per power-of-two bucket, log2 of ns on x.
fn draw_shares(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    shares: &chart::Shares,
    caption: &str,
) -> Result<()> {
    let mut c = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(f64::from(shares.lo)..f64::from(shares.hi), 0f64..100f64)
        .map_err(err)?;
    c.configure_mesh()
        .x_desc("latency")
        .y_desc("% of I/Os")
        .x_label_formatter(&|v| crate::base::units::fmt_latency_ns(2f64.powf(*v)))
        .draw()
        .map_err(err)?;
    for (i, l) in shares.lines.iter().enumerate() {
        line(&mut c, l.points.clone(), i, l.label.clone())?;
    }
    legend(&mut c)
}

/// A run of many members ([`members::MANY`] or more): the heatmap, the
/// sorted members with the verdict's fence, and the latency of all
/// targets together (a line per target would be a tangle too), one SVG.
fn many_svg(doc: &RunDocument, m: &members::Members) -> Result<String> {
    let heat = members::heatmap_svg(m);
    let sorted = members::sorted_svg(m);
    let total = LatencyHistogram::from_base64(&doc.total.figures.histogram)
        .map(|h| vec![("all targets".to_string(), h)])
        .unwrap_or_default();
    let shares = chart::Latency::of(total).shares();
    let w = members::WIDTH;
    let latency = svg((w, 380), |root| {
        root.fill(&WHITE).map_err(err)?;
        draw_shares(
            root,
            &shares,
            "latency distribution, all targets (log2 scale)",
        )
    })?;
    let parts = [heat, sorted, latency];
    let heights: Vec<u32> = parts.iter().map(|p| members::svg_height(p)).collect();
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n",
        h = heights.iter().sum::<u32>()
    );
    let mut y = 0;
    for (p, h) in parts.iter().zip(&heights) {
        out.push_str(&format!("<g transform=\"translate(0,{y})\">\n"));
        out.push_str(p.trim_start_matches(|c| c != '<'));
        out.push_str("</g>\n");
        y += h;
    }
    out.push_str("</svg>\n");
    Ok(out)
}

/// Each target's latency histogram, by path (one that does not decode is left out).
pub(crate) fn target_histograms(doc: &RunDocument) -> Vec<(String, LatencyHistogram)> {
    doc.targets
        .iter()
        .filter_map(|t| {
            Some((
                t.path.clone(),
                LatencyHistogram::from_base64(&t.figures.histogram).ok()?,
            ))
        })
        .collect()
}

/// A latency curve (`--param rate=...`): p50, p99 and p99.9 against the
/// delivered throughput, latency on a log scale, one set of lines per
/// combination of the other parameters; each point labelled with its rate.
pub fn curve_svg(doc: &SweepDocument) -> Result<String> {
    /// One point: its rate value, delivered MB/s, p50/p99/p99.9 in us, the
    /// IOPS asked of each worker (none at max) and whether it was kept.
    struct Pt {
        rate: String,
        mb: f64,
        lat: [f64; 3],
        asked: Option<f64>,
        kept: bool,
    }
    let mut groups: Vec<(String, Vec<Pt>)> = Vec::new();
    for p in &doc.points {
        let Some(l) = p.runs[0].total.figures.latency_ns else {
            continue;
        };
        let others: Vec<String> = p
            .values
            .iter()
            .filter(|(n, _)| n != "rate")
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        let key = others.join(" ");
        let schedule = crate::report::sweep::schedule(&p.runs[0]);
        let pt = Pt {
            rate: p
                .values
                .iter()
                .find(|(n, _)| n == "rate")
                .map_or(String::new(), |(_, v)| v.clone()),
            mb: p.bytes_per_sec_median / 1e6,
            lat: [l.p50, l.p99, l.p99_9].map(|ns| ns.max(1) as f64 / 1e3),
            asked: schedule.map(|s| s.0),
            kept: schedule.is_none_or(|s| s.1),
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, pts)) => pts.push(pt),
            None => groups.push((key, vec![pt])),
        }
    }
    // In the order of the rate asked: a device pushed past what it can
    // delivers less, and the curve bends back instead of zig-zagging.
    for (_, pts) in &mut groups {
        pts.sort_by(|a, b| {
            a.asked
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.asked.unwrap_or(f64::INFINITY))
                .then(a.mb.total_cmp(&b.mb))
        });
    }
    let all = || groups.iter().flat_map(|(_, p)| p.iter());
    let max_mb = all().map(|p| p.mb).fold(1e-3, f64::max) * 1.15;
    let lo = all().map(|p| p.lat[0]).fold(f64::INFINITY, f64::min) / 2.0;
    let hi = all().map(|p| p.lat[2]).fold(0.0, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > 0.0 {
        (lo / 2.0, hi * 2.0)
    } else {
        (1.0, 1000.0)
    };
    svg((1000, 650), |root| {
        root.fill(&WHITE).map_err(err)?;
        let mut c = ChartBuilder::on(root)
            .caption(
                "latency against delivered throughput (on a schedule: from each I/O's due time)",
                ("sans-serif", 18),
            )
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(0f64..max_mb, (lo..hi).log_scale())
            .map_err(err)?;
        c.configure_mesh()
            .x_desc("delivered MB/s (10^6 B/s), all targets; points joined in the order of the rate asked; x: behind schedule")
            .y_desc("latency (log scale)")
            .y_label_formatter(&|v| crate::base::units::fmt_latency_ns(*v * 1e3))
            .draw()
            .map_err(err)?;
        for (g, (key, pts)) in groups.iter().enumerate() {
            for (q, name) in ["p50", "p99", "p99.9"].iter().enumerate() {
                let color = COLORS[(g * 3 + q) % COLORS.len()];
                // The scheduled points make the curve; max (unthrottled,
                // timed from issue) stands apart as a hollow mark, and a
                // point that fell behind its schedule is a cross.
                let sched: Vec<&Pt> = pts.iter().filter(|p| p.asked.is_some()).collect();
                let line: Vec<(f64, f64)> = sched.iter().map(|p| (p.mb, p.lat[q])).collect();
                let label = if key.is_empty() {
                    name.to_string()
                } else {
                    format!("{name} {key}")
                };
                c.draw_series(LineSeries::new(line, color.stroke_width(2)))
                    .map_err(err)?
                    .label(label)
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                    });
                c.draw_series(
                    sched
                        .iter()
                        .filter(|p| p.kept)
                        .map(|p| Circle::new((p.mb, p.lat[q]), 3, color.filled())),
                )
                .map_err(err)?;
                c.draw_series(
                    sched
                        .iter()
                        .filter(|p| !p.kept)
                        .map(|p| Cross::new((p.mb, p.lat[q]), 5, color.stroke_width(2))),
                )
                .map_err(err)?;
                c.draw_series(
                    pts.iter()
                        .filter(|p| p.asked.is_none())
                        .map(|p| Circle::new((p.mb, p.lat[q]), 5, color.stroke_width(2))),
                )
                .map_err(err)?;
            }
            // Each point's rate (50%, 100m/s) over its p99.9 mark; max's
            // under its p50 mark, clear of the 100% point beside it.
            c.draw_series(pts.iter().map(|p| {
                let (text, y) = match (p.asked, p.kept) {
                    (None, _) => ("max (unthrottled)".to_string(), p.lat[0] * 0.55),
                    (Some(_), true) => (p.rate.clone(), p.lat[2] * 1.25),
                    (Some(_), false) => (format!("{} behind", p.rate), p.lat[2] * 1.25),
                };
                Text::new(
                    text,
                    (p.mb, y),
                    ("sans-serif", 13).into_font().color(&BLACK),
                )
            }))
            .map_err(err)?;
        }
        c.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        Ok(())
    })
}

/// A latency in ms for an axis: as many decimals as it needs.
fn fmt_ms(v: f64) -> String {
    let s = if v >= 10.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        let d = (-v.log10()).ceil().max(1.0) as usize + 1;
        format!("{v:.d$}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s} ms")
}

/// Whether a parameter's values are all numbers (sizes such as 64k
/// included): drawn as lines; else they are categories, drawn as points.
pub fn numeric(values: &[String]) -> bool {
    values
        .iter()
        .all(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit()))
}

/// Width of the sweep plot's drawing, and of the legend column right of it.
pub const SWEEP_PLOT_W: u32 = 780;
pub const SWEEP_LEGEND_W: u32 = 300;

/// [`sweep`]'s drawing, in memory: for a rate sweep, its latency curve.
///
/// The first parameter is the x axis (its values in order: a line joins
/// them when they are numbers, points stand apart, side by side per
/// series, when they are categories); every value of the other parameters
/// makes its own series. Throughput on top (the total, and each target when
/// there are several), p99 below on a log scale in ms; the legend in a
/// column right of the plots, clear of every line.
pub fn sweep_svg(doc: &SweepDocument) -> Result<String> {
    if doc.params.iter().any(|p| p.name == "rate") {
        return curve_svg(doc);
    }
    // md's resync limits swept: the users' figures against the rebuild's time.
    let names: Vec<&str> = doc.params.iter().map(|p| p.name.as_str()).collect();
    if crate::report::resync::swept(&names) {
        if let Some(svg) = crate::report::rebuild::svg_of(doc)? {
            return Ok(svg);
        }
    }
    let Some(xp) = doc.params.first() else {
        return svg((SWEEP_PLOT_W + SWEEP_LEGEND_W, 800), |root| {
            root.fill(&WHITE).map_err(err)
        });
    };
    let axis = SweepAxis::new(doc, xp);
    let series = throughput_series(doc, &axis);
    let p99 = p99_series(doc, &axis);
    let colors = palette(series.len());
    let p99_colors = palette(p99.len());
    svg((SWEEP_PLOT_W + SWEEP_LEGEND_W, 800), |root| {
        root.fill(&WHITE).map_err(err)?;
        let (plots, side) = root.split_horizontally(SWEEP_PLOT_W);
        let (top, bottom) = plots.split_vertically(420);
        draw_throughput(&top, &axis, &series, &colors)?;
        draw_p99(&bottom, &axis, &p99, &p99_colors)?;
        // The legends, in the column right of the plots.
        let items = |s: &Series, colors: &[RGBColor]| {
            s.iter()
                .zip(colors)
                .map(|((l, _), c)| (l.clone(), *c))
                .collect()
        };
        sweep_legend(&side, 40, items(&series, &colors), axis.lines)?;
        sweep_legend(&side, 460, items(&p99, &p99_colors), axis.lines)?;
        Ok(())
    })
}

/// A sweep plot's series: each a label and its points (the index of its
/// x value, and its value).
type Series = Vec<(String, Vec<(usize, f64)>)>;

/// A sweep plot's x axis, the first parameter, and its series' keys: the
/// other parameters' values, in the order met.
struct SweepAxis<'a> {
    xp: &'a Param,
    keys: Vec<String>,
    /// Its values are numbers: a line joins them (else categories).
    lines: bool,
}

impl<'a> SweepAxis<'a> {
    fn new(doc: &SweepDocument, xp: &'a Param) -> Self {
        let mut axis = SweepAxis {
            xp,
            keys: Vec::new(),
            lines: numeric(&xp.values),
        };
        for p in &doc.points {
            let k = axis.key_of(p);
            if !axis.keys.contains(&k) {
                axis.keys.push(k);
            }
        }
        axis
    }

    fn key_of(&self, p: &PointDoc) -> String {
        p.values
            .iter()
            .filter(|(n, _)| *n != self.xp.name)
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn x_of(&self, p: &PointDoc) -> Option<usize> {
        let v = &p.values.iter().find(|(n, _)| *n == self.xp.name)?.1;
        self.xp.values.iter().position(|x| x == v)
    }

    /// The points of the series `key`: `f` of each point that has it.
    fn points(
        &self,
        doc: &SweepDocument,
        key: &str,
        f: &dyn Fn(&PointDoc) -> Option<f64>,
    ) -> Vec<(usize, f64)> {
        doc.points
            .iter()
            .filter(|p| self.key_of(p) == key)
            .filter_map(|p| Some((self.x_of(p)?, f(p)?)))
            .collect()
    }

    /// The x axis' label: the parameter, and for categories, that they are.
    fn desc(&self) -> String {
        if self.lines {
            self.xp.name.clone()
        } else {
            format!("{} (categories: points, not a series)", self.xp.name)
        }
    }

    /// A tick's label: the value at a whole index, else none.
    fn label(&self, v: &f64) -> String {
        self.xp
            .values
            .get(v.round().max(0.0) as usize)
            .filter(|_| (v - v.round()).abs() < 1e-6)
            .cloned()
            .unwrap_or_default()
    }

    /// Categories: series `s` of `count` a little apart from the others,
    /// side by side at its value.
    fn offset(&self, s: usize, count: usize) -> f64 {
        if self.lines || count < 2 {
            0.0
        } else {
            (s as f64 - (count as f64 - 1.0) / 2.0) * 0.7 / count as f64
        }
    }
}

/// The throughput series, per key: the total, and each target's when
/// there are several.
fn throughput_series(doc: &SweepDocument, axis: &SweepAxis) -> Series {
    let targets: Vec<String> = doc
        .points
        .first()
        .map(|p| p.runs[0].targets.iter().map(|t| t.path.clone()).collect())
        .unwrap_or_default();
    let mut series: Series = Vec::new();
    for key in &axis.keys {
        let suffix = |s: &str| {
            if key.is_empty() {
                s.to_string()
            } else {
                format!("{s} {key}")
            }
        };
        let pts = |f: &dyn Fn(&PointDoc) -> Option<f64>| axis.points(doc, key, f);
        // One target: its name, for it is the total. Targets that ended at
        // different times: the total is their bytes over the shared window,
        // which can stand below the fastest of them, so its label says so
        // and the sum of their own rates is drawn beside it.
        let apart = doc
            .points
            .iter()
            .any(|p| p.targets_sum_bytes_per_sec_median.is_some());
        let total = match targets.as_slice() {
            [one] => one.as_str(),
            _ if apart => "total: bytes / shared window",
            _ => "total",
        };
        series.push((suffix(total), pts(&|p| Some(p.bytes_per_sec_median / 1e6))));
        if apart && targets.len() > 1 {
            series.push((
                suffix("sum of the targets' own rates"),
                pts(&|p| {
                    Some(
                        p.targets_sum_bytes_per_sec_median
                            .unwrap_or(p.bytes_per_sec_median)
                            / 1e6,
                    )
                }),
            ));
        }
        if targets.len() > 1 {
            for t in &targets {
                series.push((
                    suffix(t),
                    pts(&|p| {
                        p.runs[0]
                            .targets
                            .iter()
                            .find(|x| &x.path == t)
                            .map(|x| x.figures.bytes_per_sec / 1e6)
                    }),
                ));
            }
        }
    }
    series
}

/// The p99 series (all targets), in ms: one per key.
fn p99_series(doc: &SweepDocument, axis: &SweepAxis) -> Series {
    axis.keys
        .iter()
        .map(|key| {
            let label = if key.is_empty() {
                "p99".to_string()
            } else {
                format!("p99 {key}")
            };
            let pts = axis.points(doc, key, &|p| {
                Some(p.runs[0].total.figures.latency_ns?.p99.max(1) as f64 / 1e6)
            });
            (label, pts)
        })
        .collect()
}

/// Each series' points in its colour (joined by a line when the axis
/// has lines), at its offset and through `y` (the log for p99).
fn draw_dots(
    c: &mut Chart<'_, '_>,
    axis: &SweepAxis,
    series: &Series,
    colors: &[RGBColor],
    y: fn(f64) -> f64,
) -> Result<()> {
    for (i, (_, pts)) in series.iter().enumerate() {
        let color = colors[i];
        let xy: Vec<(f64, f64)> = pts
            .iter()
            .map(|&(x, v)| (x as f64 + axis.offset(i, series.len()), y(v)))
            .collect();
        if axis.lines {
            c.draw_series(LineSeries::new(xy.clone(), color.stroke_width(2)))
                .map_err(err)?;
        }
        c.draw_series(xy.iter().map(|&p| Circle::new(p, 4, color.filled())))
            .map_err(err)?;
    }
    Ok(())
}

/// The top plot: throughput per point, MB/s from 0.
fn draw_throughput(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    axis: &SweepAxis,
    series: &Series,
    colors: &[RGBColor],
) -> Result<()> {
    let n = axis.xp.values.len();
    let max_mb = series
        .iter()
        .flat_map(|(_, s)| s.iter().map(|p| p.1))
        .fold(1.0, f64::max);
    let mut c = ChartBuilder::on(area)
        .caption("throughput per point: MB/s (10^6 B/s)", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..max_mb * 1.1)
        .map_err(err)?;
    c.configure_mesh()
        .x_labels(n.max(2))
        .x_label_formatter(&|v| axis.label(v))
        .x_desc(axis.desc().as_str())
        .y_desc("MB/s")
        .draw()
        .map_err(err)?;
    draw_dots(&mut c, axis, series, colors, |v| v)
}

/// The bottom plot: p99 per point (all targets), on a log scale in ms.
fn draw_p99(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    axis: &SweepAxis,
    p99: &Series,
    colors: &[RGBColor],
) -> Result<()> {
    let n = axis.xp.values.len();
    let (lo, hi) = decades(p99);
    let mut c = ChartBuilder::on(area)
        .caption(
            "p99 latency per point (all targets), log scale",
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), lo..hi)
        .map_err(err)?;
    c.configure_mesh()
        .x_labels(n.max(2))
        .x_label_formatter(&|v| axis.label(v))
        .y_labels((hi - lo) as usize + 1)
        .y_label_formatter(&|v| fmt_ms(10f64.powf(*v)))
        .x_desc(axis.desc().as_str())
        .y_desc("p99 (ms, log scale)")
        .draw()
        .map_err(err)?;
    draw_dots(&mut c, axis, p99, colors, f64::log10)
}

/// The p99 axis, log10 of the ms, from a whole decade to a whole decade
/// (a label on each: 0.1 ms, 1 ms, 10 ms); 1 µs to 1 ms with no value.
fn decades(p99: &Series) -> (f64, f64) {
    let lo = p99
        .iter()
        .flat_map(|(_, s)| s.iter().map(|p| p.1))
        .fold(f64::INFINITY, f64::min);
    let hi = p99
        .iter()
        .flat_map(|(_, s)| s.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    if lo.is_finite() && hi > 0.0 {
        let lo = lo.log10().floor();
        (lo, hi.log10().ceil().max(lo + 1.0))
    } else {
        (-3.0, 0.0)
    }
}

/// A legend box at `y0` in the column right of the plots: a mark (and a
/// stroke, when the axis has lines) and a label per series.
fn sweep_legend(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    y0: i32,
    items: Vec<(String, RGBColor)>,
    lines: bool,
) -> Result<()> {
    let font = ("sans-serif", 13).into_font();
    let h = 12 + 18 * items.len() as i32;
    area.draw(&Rectangle::new(
        [(6, y0), (SWEEP_LEGEND_W as i32 - 6, y0 + h)],
        BLACK.stroke_width(1),
    ))
    .map_err(err)?;
    for (k, (label, color)) in items.into_iter().enumerate() {
        let y = y0 + 15 + 18 * k as i32;
        if lines {
            area.draw(&PathElement::new(
                vec![(14, y), (34, y)],
                color.stroke_width(2),
            ))
            .map_err(err)?;
        }
        area.draw(&Circle::new((24, y), 4, color.filled()))
            .map_err(err)?;
        area.draw(&Text::new(label, (42, y - 7), font.clone()))
            .map_err(err)?;
    }
    Ok(())
}

/// Measured points, the fitted curve and the linear ideal.
pub fn plan_svg(p: &PlanDoc) -> Result<String> {
    use plotters::prelude::*;
    let e = |e: &dyn std::fmt::Debug| anyhow::anyhow!("drawing the plot failed: {e:?}");
    let max_n = p
        .points
        .iter()
        .map(|x| x.0)
        .fold(1.0, f64::max)
        .max(p.peak_n.unwrap_or(0.0).min(1e4))
        * 1.2;
    let max_x = p
        .points
        .iter()
        .map(|x| x.1)
        .fold(1.0, f64::max)
        .max(p.peak_bytes_per_sec.unwrap_or(0.0))
        * 1.3
        / 1e6;
    svg((900, 600), |root| {
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let mut c = ChartBuilder::on(root)
            .caption(
                "scaling: measured, USL fit, linear ideal",
                ("sans-serif", 18),
            )
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..max_n, 0f64..max_x)
            .map_err(|x| e(&x))?;
        c.configure_mesh()
            .x_desc(format!("N ({})", p.unit))
            .y_desc("MB/s")
            .draw()
            .map_err(|x| e(&x))?;
        let steps = 200;
        // The law holds from one unit up.
        let curve: Vec<(f64, f64)> = (0..=steps)
            .map(|i| 1.0 + (max_n - 1.0) * i as f64 / steps as f64)
            .map(|n| (n, p.fit.predict(n) / 1e6))
            .collect();
        let blue = RGBColor(31, 119, 180);
        let grey = RGBColor(150, 150, 150);
        let red = RGBColor(214, 39, 40);
        c.draw_series(LineSeries::new(curve, blue.stroke_width(2)))
            .map_err(|x| e(&x))?
            .label("USL fit")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], blue));
        let ideal = p.fit.lambda / 1e6;
        c.draw_series(LineSeries::new(
            vec![(0.0, 0.0), (max_x / ideal, max_x)],
            grey.stroke_width(1),
        ))
        .map_err(|x| e(&x))?
        .label("linear ideal")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], grey));
        c.draw_series(
            p.points
                .iter()
                .map(|&(n, x)| Circle::new((n, x / 1e6), 4, red.filled())),
        )
        .map_err(|x| e(&x))?
        .label("measured")
        .legend(move |(x, y)| Circle::new((x + 10, y), 4, red.filled()));
        c.configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|x| e(&x))?;
        Ok(())
    })
}
