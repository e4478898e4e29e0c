//! The report's own plots, drawn in memory with plotters like
//! [`crate::report::plot`]'s, from the same chart models
//! ([`crate::report::chart`]): throughput per second (each worker and the
//! total), latency against percentile (from the exact histograms), and
//! horizontal bars (compare: members against the volume).

use anyhow::Result;
use plotters::prelude::*;

use crate::base::units::fmt_latency_ns;
use crate::report::chart::{Latency, Throughput};
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

/// MB/s in each second of the window ([`Throughput`]): one line per
/// worker and a heavier one for their sum. `None` when no worker has a
/// whole second.
pub fn timeseries(throughput: &Throughput) -> Result<Option<Plot>> {
    if throughput.is_empty() {
        return Ok(None);
    }
    let max_t = throughput.seconds as f64;
    let max_mb = throughput.peak_total_mb();
    let mut legend = Vec::new();
    let chart = svg((1100, 380), |root| {
        root.fill(&WHITE).map_err(err)?;
        let mut c = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(38)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..max_t, 0f64..max_mb * 1.1)
            .map_err(err)?;
        c.configure_mesh()
            .x_desc("seconds into the window")
            .y_desc("MB/s (10^6 B/s)")
            .draw()
            .map_err(err)?;
        for (i, w) in throughput.workers.iter().enumerate() {
            draw(&mut c, &mut legend, w.mb_points(), Some(i), w.label.clone())?;
        }
        if throughput.shows_total() {
            let pts = throughput.total_points();
            draw(&mut c, &mut legend, pts, None, "total".into())?;
        }
        Ok(())
    })?;
    Ok(Some(Plot { svg: chart, legend }))
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

/// Latency against percentile ([`Latency::percentiles`]), one line per
/// histogram: the x axis in nines (p90, p99, p99.9, ... evenly spaced), the
/// y axis logarithmic. `None` when every histogram is empty.
pub fn percentiles(latency: &Latency) -> Result<Option<Plot>> {
    let Some(p) = latency.percentiles() else {
        return Ok(None);
    };
    let (max_nines, lo, hi) = (p.max_nines, p.lo, p.hi);
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
        for (i, l) in p.lines.iter().enumerate() {
            draw(
                &mut c,
                &mut legend,
                l.points.clone(),
                (!l.heavy).then_some(i),
                l.label.clone(),
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
