//! The report's own plots, drawn in memory with plotters like
//! [`crate::report::plot`]'s: throughput per second (each worker and the
//! total), latency against percentile (from the exact histograms), and
//! horizontal bars (compare: members against the volume).

use anyhow::Result;
use plotters::prelude::*;

use crate::analysis::histogram::LatencyHistogram;
use crate::base::units::fmt_latency_ns;
use crate::document::run::WorkerDoc;
use crate::report::plot::{err, svg, Chart, COLORS};

/// A plot and its legend, which the page writes beside it in HTML (a legend
/// inside the plot hides the lines it lies over, and grows with the workers).
pub struct Plot {
    pub svg: String,
    /// Each line's label and colour; `true` for the heavy total line.
    pub legend: Vec<(String, RGBColor, bool)>,
}

/// Draws line `i` of a plot (a heavy black one for the total) and notes it
/// in the legend.
fn draw(
    c: &mut Chart<'_, '_>,
    legend: &mut Vec<(String, RGBColor, bool)>,
    pts: Vec<(f64, f64)>,
    i: Option<usize>,
    label: String,
) -> Result<()> {
    let (color, width) = match i {
        Some(i) => (COLORS[i % COLORS.len()], 2),
        None => (BLACK, 3),
    };
    c.draw_series(LineSeries::new(pts, color.stroke_width(width)))
        .map_err(err)?;
    legend.push((label, color, i.is_none()));
    Ok(())
}

/// MB/s in each second of the window: one line per worker and a heavier
/// one for their sum. `None` when no worker has a whole second. The
/// workers' intervals are whole seconds
/// ([`crate::document::run::RunDocument::workers_per_second`]).
pub fn timeseries(
    workers: &[WorkerDoc],
    label: impl Fn(&WorkerDoc) -> String,
) -> Result<Option<Plot>> {
    let max_t = workers
        .iter()
        .flat_map(|w| w.intervals.iter().map(|i| i.t as u64 + 1))
        .max();
    let Some(max_t) = max_t else { return Ok(None) };
    let mut total = vec![0u64; max_t as usize];
    for w in workers {
        for i in &w.intervals {
            total[i.t as usize] += i.bytes;
        }
    }
    let max_mb = total.iter().map(|&b| b as f64 / 1e6).fold(1.0, f64::max);
    let mut legend = Vec::new();
    let chart = svg((1100, 380), |root| {
        root.fill(&WHITE).map_err(err)?;
        let mut c = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(38)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..max_t as f64, 0f64..max_mb * 1.1)
            .map_err(err)?;
        c.configure_mesh()
            .x_desc("seconds into the window")
            .y_desc("MB/s (10^6 B/s)")
            .draw()
            .map_err(err)?;
        for (i, w) in workers.iter().enumerate() {
            let pts = w
                .intervals
                .iter()
                .map(|iv| (iv.t + 0.5, iv.bytes as f64 / 1e6))
                .collect();
            draw(&mut c, &mut legend, pts, Some(i), label(w))?;
        }
        if workers.len() > 1 {
            let pts: Vec<(f64, f64)> = total
                .iter()
                .enumerate()
                .map(|(t, &b)| (t as f64 + 0.5, b as f64 / 1e6))
                .collect();
            draw(&mut c, &mut legend, pts, None, "total".into())?;
        }
        Ok(())
    })?;
    Ok(Some(Plot { svg: chart, legend }))
}

/// The per-second MB/s of each worker and the total, as table rows
/// (the plot's figures, for reading off).
pub fn timeseries_rows(workers: &[WorkerDoc]) -> Vec<(String, Vec<String>)> {
    let max_t = workers
        .iter()
        .flat_map(|w| w.intervals.iter().map(|i| i.t as u64 + 1))
        .max()
        .unwrap_or(0);
    (0..max_t)
        .map(|t| {
            let mut cells = vec![t.to_string()];
            let mut sum = 0;
            for w in workers {
                let b = w
                    .intervals
                    .iter()
                    .find(|i| i.t as u64 == t)
                    .map(|i| i.bytes);
                sum += b.unwrap_or(0);
                cells.push(b.map_or("-".into(), |b| format!("{:.1}", b as f64 / 1e6)));
            }
            cells.push(format!("{:.1}", sum as f64 / 1e6));
            (String::new(), cells)
        })
        .collect()
}

/// Nines of a quantile: 0 for p0, 1 for p90, 2 for p99, 3 for p99.9.
fn nines_label(x: f64) -> String {
    let pct = 100.0 * (1.0 - 10f64.powf(-x));
    if x < 0.01 {
        "p0".into()
    } else if pct < 99.0 {
        format!("p{pct:.0}")
    } else {
        // As many decimals as it takes: p99, p99.9, p99.99.
        let decimals = (x.round() as usize).saturating_sub(2);
        format!("p{pct:.decimals$}")
    }
}

/// Latency against percentile, one line per histogram: the x axis in
/// nines (p90, p99, p99.9, ... evenly spaced), the y axis logarithmic.
/// `None` when every histogram is empty.
pub fn percentiles(series: &[(String, LatencyHistogram)]) -> Result<Option<Plot>> {
    let series: Vec<&(String, LatencyHistogram)> =
        series.iter().filter(|(_, h)| !h.is_empty()).collect();
    if series.is_empty() {
        return Ok(None);
    }
    // As far as the largest histogram has samples to tell a percentile, at most p99.9999.
    let max_nines = series
        .iter()
        .map(|(_, h)| (h.len() as f64).log10())
        .fold(1.0, f64::max)
        .min(6.0);
    // To the next half nine: the lines reach across the plot.
    let max_nines = (max_nines * 2.0).ceil() / 2.0;
    let lo = series
        .iter()
        .map(|(_, h)| (h.inner().min().max(1) as f64).log10())
        .fold(f64::MAX, f64::min)
        .floor();
    let hi = series
        .iter()
        .map(|(_, h)| (h.inner().max().max(1) as f64).log10())
        .fold(0.0, f64::max)
        .ceil()
        .max(lo + 1.0);
    let mut legend = Vec::new();
    let chart = svg((1100, 420), |root| {
        root.fill(&WHITE).map_err(err)?;
        let mut c = ChartBuilder::on(root)
            .margin(12)
            .margin_right(40)
            .x_label_area_size(38)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..max_nines, lo..hi)
            .map_err(err)?;
        c.configure_mesh()
            .x_labels(max_nines.floor() as usize + 1)
            .x_label_formatter(&|x| nines_label(*x))
            // One label a decade: 10us, 100us, 1ms, ...
            .y_labels((hi - lo) as usize + 1)
            .y_label_formatter(&|y| fmt_latency_ns(10f64.powf(*y)))
            .x_desc("percentile")
            .y_desc("latency (log scale)")
            .draw()
            .map_err(err)?;
        for (i, (name, h)) in series.iter().enumerate() {
            let top = (h.len() as f64).log10().min(max_nines);
            let steps = (top * 40.0).ceil().max(1.0) as usize;
            let pts: Vec<(f64, f64)> = (0..=steps)
                .map(|k| {
                    let x = top * k as f64 / steps as f64;
                    let q = 1.0 - 10f64.powf(-x);
                    let v = h.inner().value_at_quantile(q).max(1) as f64;
                    (x, v.log10())
                })
                .collect();
            let heavy = name == "total" || name == "fleet";
            draw(
                &mut c,
                &mut legend,
                pts,
                (!heavy).then_some(i),
                name.clone(),
            )?;
        }
        Ok(())
    })?;
    Ok(Some(Plot { svg: chart, legend }))
}

/// Horizontal bars, one per (label, bytes per second, colour), with the
/// figure in MB/s at each bar's end.
pub fn bars(items: &[(String, f64, RGBColor)]) -> Result<String> {
    let max = items.iter().map(|i| i.1).fold(1.0, f64::max);
    let height = 40 + 34 * items.len() as u32;
    svg((1100, height), |root| {
        root.fill(&WHITE).map_err(err)?;
        let (left, right) = (330i32, 980i32);
        let scale = f64::from(right - left) / max;
        let font = ("sans-serif", 15).into_font();
        for (k, (label, v, color)) in items.iter().enumerate() {
            let y = 20 + 34 * k as i32;
            let w = (v * scale).round() as i32;
            root.draw(&Text::new(label.clone(), (10, y + 6), font.clone()))
                .map_err(err)?;
            root.draw(&Rectangle::new(
                [(left, y), (left + w.max(1), y + 24)],
                color.filled(),
            ))
            .map_err(err)?;
            root.draw(&Text::new(
                format!("{:.1} MB/s", v / 1e6),
                (left + w + 8, y + 6),
                font.clone(),
            ))
            .map_err(err)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nines_read_as_percentiles() {
        assert_eq!(nines_label(0.0), "p0");
        assert_eq!(nines_label(1.0), "p90");
        assert_eq!(nines_label(2.0), "p99");
        assert_eq!(nines_label(3.0), "p99.9");
        assert_eq!(nines_label(4.0), "p99.99");
    }
}
