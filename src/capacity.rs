//! `stripebench plan`: capacity planning from a scaling curve. Fits the
//! Universal Scalability Law
//!
//!   X(N) = λN / (1 + σ(N−1) + κN(N−1))
//!
//! by least squares to measured (N, throughput) points: λ is one unit's
//! throughput, σ contention, κ coherency. For fixed σ and κ the best λ has a
//! closed form, so the search is over (σ, κ) only: a coarse grid, then a
//! shrinking local search. From the fit: the N of peak throughput
//! √((1−σ)/κ), predictions at given N, the N needed for a target, and the
//! knee where scaling stops being near-linear.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::error::{show_path, usage, UsageError};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Usl {
    pub lambda: f64,
    pub sigma: f64,
    pub kappa: f64,
}

impl Usl {
    pub fn predict(&self, n: f64) -> f64 {
        self.lambda * n / (1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0))
    }

    /// The N of peak throughput (infinite without coherency cost).
    pub fn peak_n(&self) -> Option<f64> {
        (self.kappa > 0.0).then(|| ((1.0 - self.sigma).max(0.0) / self.kappa).sqrt())
    }

    /// The smallest whole N with X(N) ≥ target, if the curve reaches it.
    pub fn n_for(&self, target: f64) -> Option<u64> {
        let limit = self.peak_n().map_or(1e7, |p| p.ceil().min(1e7));
        let mut n = 1u64;
        while (n as f64) <= limit {
            if self.predict(n as f64) >= target {
                return Some(n);
            }
            n += 1;
        }
        None
    }
}

fn best_lambda(points: &[(f64, f64)], sigma: f64, kappa: f64) -> (f64, f64) {
    let f = |n: f64| n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0));
    let (num, den) = points.iter().fold((0.0, 0.0), |(a, b), &(n, x)| {
        (a + x * f(n), b + f(n) * f(n))
    });
    let lambda = if den > 0.0 { num / den } else { 0.0 };
    let sse = points
        .iter()
        .map(|&(n, x)| (x - lambda * f(n)).powi(2))
        .sum();
    (lambda, sse)
}

/// Least-squares fit of the USL to (N, X) points.
pub fn fit(points: &[(f64, f64)]) -> Usl {
    let mut best = (f64::INFINITY, 0.0, 0.0, 0.0);
    let kappas: Vec<f64> = std::iter::once(0.0)
        .chain((0..=120).map(|i| 10f64.powf(-8.0 + i as f64 * 0.06)))
        .collect();
    for si in 0..=100 {
        let sigma = si as f64 / 100.0;
        for &kappa in &kappas {
            let (lambda, sse) = best_lambda(points, sigma, kappa);
            if sse < best.0 {
                best = (sse, lambda, sigma, kappa);
            }
        }
    }
    // Shrinking pattern search around the grid's best.
    let (mut sse, mut lambda, mut sigma, mut kappa) = best;
    let (mut ds, mut dk) = (0.01, kappa.max(1e-8));
    for _ in 0..200 {
        let mut improved = false;
        for (s, k) in [
            (sigma + ds, kappa),
            (sigma - ds, kappa),
            (sigma, kappa + dk),
            (sigma, kappa - dk),
        ] {
            if !(0.0..=1.0).contains(&s) || k < 0.0 {
                continue;
            }
            let (l, e) = best_lambda(points, s, k);
            if e < sse {
                (sse, lambda, sigma, kappa, improved) = (e, l, s, k, true);
            }
        }
        if !improved {
            ds /= 2.0;
            dk /= 2.0;
        }
    }
    Usl {
        lambda,
        sigma,
        kappa,
    }
}

/// A plan's result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PlanDoc {
    pub points: Vec<(f64, f64)>,
    pub unit: String,
    pub fit: Usl,
    /// Root mean square error of the fit, relative to the mean throughput.
    pub rel_rmse: f64,
    pub peak_n: Option<f64>,
    pub peak_bytes_per_sec: Option<f64>,
    /// The first measured N whose throughput is below 90% of linear (N x λ).
    pub knee_n: Option<f64>,
    pub predictions: Vec<(f64, f64)>,
    pub target: Option<TargetAnswer>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TargetAnswer {
    pub bytes_per_sec: f64,
    pub n: Option<u64>,
    pub note: String,
}

/// Reads (N, X) from result files: a sweep over members or jobs gives one
/// point per value; a merged document gives (hosts, fleet rate); a run
/// document gives (targets, total rate).
pub fn points_from(paths: &[PathBuf]) -> Result<(Vec<(f64, f64)>, String)> {
    let mut points = Vec::new();
    let mut unit = String::new();
    for p in paths {
        let shown = show_path(p);
        let v: serde_json::Value = serde_json::from_slice(
            &std::fs::read(p).map_err(|e| UsageError(format!("cannot read {shown}: {e}")))?,
        )
        .map_err(|_| {
            UsageError(format!(
                "{shown} is not JSON: give a sweep, merge or run document"
            ))
        })?;
        if v.get("schema_version").is_none() {
            return usage(format!("{shown} is not a stripebench document"));
        }
        if let Some(pts) = v.get("points").and_then(|p| p.as_array()) {
            let params: Vec<String> = v["params"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p["name"].as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            let Some(axis) = params.iter().position(|n| n == "members" || n == "jobs") else {
                return usage(format!(
                    "{shown} sweeps {}: plan needs a sweep over members or jobs (N)",
                    params.join(", ")
                ));
            };
            if params.len() > 1 {
                return usage(format!(
                    "{shown} sweeps {} at once: plan needs N ({}) to be the only parameter",
                    params.join(", "),
                    params[axis]
                ));
            }
            unit = params[axis].clone();
            for pt in pts {
                let n: f64 = pt["values"][axis][1]
                    .as_str()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0.0);
                let x = pt["bytes_per_sec_median"].as_f64().unwrap_or(0.0);
                points.push((n, x));
            }
        } else if v.get("kind").and_then(|k| k.as_str()) == Some("merge") {
            unit = "hosts".into();
            points.push((
                v["total"]["hosts"].as_f64().unwrap_or(0.0),
                v["total"]["bytes_per_sec"].as_f64().unwrap_or(0.0),
            ));
        } else if let Some(t) = v.get("targets").and_then(|t| t.as_array()) {
            unit = "targets".into();
            points.push((
                t.len() as f64,
                v["total"]["bytes_per_sec"].as_f64().unwrap_or(0.0),
            ));
        } else {
            return usage(format!(
                "{shown} is neither a sweep, a merge nor a run document"
            ));
        }
    }
    let mut distinct: Vec<f64> = points.iter().map(|p| p.0).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < 3 {
        return usage(format!(
            "plan needs at least 3 distinct N to fit a curve, and has {} ({}): sweep members or jobs over more values",
            distinct.len(),
            distinct.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok((points, unit))
}

/// Parses a target rate: "20GB/s", "500MB/s", "2GiB/s", or bytes per second.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let body = t.strip_suffix("/s").unwrap_or(t);
    let split = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (num, unit) = body.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a rate: write 20GB/s, 500MB/s or 2GiB/s"))?;
    let m = match unit.trim() {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1048576.0,
        "GiB" => 1073741824.0,
        "TiB" => 1099511627776.0,
        u => return Err(format!("'{text}': unknown unit '{u}': use B, KB, MB, GB, TB (10^3) or KiB, MiB, GiB, TiB (2^10)")),
    };
    if v <= 0.0 || !v.is_finite() {
        return Err(format!("'{text}': the rate must be positive"));
    }
    Ok(v * m)
}

pub fn plan(points: Vec<(f64, f64)>, unit: String, at: &[f64], target: Option<f64>) -> PlanDoc {
    let fit = fit(&points);
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let rmse = (points
        .iter()
        .map(|&(n, x)| (x - fit.predict(n)).powi(2))
        .sum::<f64>()
        / points.len() as f64)
        .sqrt();
    let mut sorted = points.clone();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let knee_n = sorted
        .iter()
        .find(|&&(n, x)| x < 0.9 * fit.lambda * n)
        .map(|p| p.0);
    let peak_n = fit.peak_n();
    let target = target.map(|t| {
        let n = fit.n_for(t);
        let note = match (n, peak_n) {
            (Some(n), _) => format!("{n} {unit} reach {:.1} MB/s by the fit", fit.predict(n as f64) / 1e6),
            (None, Some(p)) => format!(
                "beyond the fitted peak: at most {:.1} MB/s, near N = {:.0}; adding {unit} past that lowers throughput",
                fit.predict(p) / 1e6,
                p
            ),
            (None, None) => "not reached within 10 million".into(),
        };
        TargetAnswer { bytes_per_sec: t, n, note }
    });
    PlanDoc {
        predictions: at.iter().map(|&n| (n, fit.predict(n))).collect(),
        peak_bytes_per_sec: peak_n.map(|p| fit.predict(p)),
        points,
        unit,
        fit,
        rel_rmse: if mean > 0.0 { rmse / mean } else { 0.0 },
        peak_n,
        knee_n,
        target,
    }
}

pub fn render(p: &PlanDoc) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Universal Scalability Law fit over {} point(s), N = {}:",
        p.points.len(),
        p.unit
    );
    let _ = writeln!(
        out,
        "  lambda {:.1} MB/s per unit, sigma (contention) {:.4}, kappa (coherency) {:.6}; error {:.1}% RMS of the mean",
        p.fit.lambda / 1e6,
        p.fit.sigma,
        p.fit.kappa,
        p.rel_rmse * 100.0
    );
    let _ = writeln!(
        out,
        "  {:>6} {:>12} {:>12} {:>10}",
        "N", "measured", "fitted", "of linear"
    );
    let mut pts = p.points.clone();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (n, x) in pts {
        let _ = writeln!(
            out,
            "  {:>6} {:>12.1} {:>12.1} {:>9.0}%",
            n,
            x / 1e6,
            p.fit.predict(n) / 1e6,
            x / (p.fit.lambda * n) * 100.0
        );
    }
    match (p.peak_n, p.peak_bytes_per_sec) {
        (Some(n), Some(x)) => {
            let _ = writeln!(out, "  peak: {:.1} MB/s at N = {:.1}", x / 1e6, n);
        }
        _ => {
            let _ = writeln!(out, "  no peak: the fit has no coherency cost (kappa 0)");
        }
    }
    match p.knee_n {
        Some(k) => {
            let _ = writeln!(out, "  knee: scaling falls below 90% of linear at N = {k}");
        }
        None => {
            let _ = writeln!(
                out,
                "  no knee: every measured point is within 90% of linear"
            );
        }
    }
    for (n, x) in &p.predictions {
        let _ = writeln!(out, "  predicted at N = {n}: {:.1} MB/s", x / 1e6);
    }
    if let Some(t) = &p.target {
        let _ = writeln!(
            out,
            "  target {:.1} MB/s: {}",
            t.bytes_per_sec / 1e6,
            t.note
        );
    }
    out
}

/// Measured points, the fitted curve and the linear ideal.
pub fn draw(p: &PlanDoc, path: &Path) -> Result<()> {
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
    crate::report::plot::to_file(path, (900, 600), |root| {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_known_sigma_and_kappa() {
        for truth in [
            Usl {
                lambda: 500e6,
                sigma: 0.05,
                kappa: 0.002,
            },
            Usl {
                lambda: 1e9,
                sigma: 0.2,
                kappa: 0.0,
            },
            Usl {
                lambda: 80e6,
                sigma: 0.01,
                kappa: 0.0005,
            },
        ] {
            let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
                .iter()
                .map(|&n| (n, truth.predict(n)))
                .collect();
            let f = fit(&pts);
            assert!(
                (f.lambda - truth.lambda).abs() / truth.lambda < 0.01,
                "{f:?} vs {truth:?}"
            );
            assert!((f.sigma - truth.sigma).abs() < 0.005, "{f:?} vs {truth:?}");
            assert!((f.kappa - truth.kappa).abs() < 0.0002, "{f:?} vs {truth:?}");
        }
    }

    #[test]
    fn noisy_points_still_fit_closely() {
        let truth = Usl {
            lambda: 300e6,
            sigma: 0.03,
            kappa: 0.001,
        };
        let noise = [1.02, 0.98, 1.01, 0.99, 1.015, 0.985];
        let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
            .iter()
            .zip(noise)
            .map(|(&n, e)| (n, truth.predict(n) * e))
            .collect();
        let f = fit(&pts);
        assert!(
            (f.lambda - truth.lambda).abs() / truth.lambda < 0.05,
            "{f:?}"
        );
        assert!((f.sigma - truth.sigma).abs() < 0.03, "{f:?}");
    }

    #[test]
    fn predictions_peak_and_target_arithmetic() {
        let u = Usl {
            lambda: 100.0,
            sigma: 0.0,
            kappa: 0.01,
        };
        // X(N) = 100N / (1 + 0.01 N(N-1)); peak at sqrt(1/0.01) = 10.
        assert!((u.peak_n().unwrap() - 10.0).abs() < 1e-9);
        assert!((u.predict(10.0) - 1000.0 / 1.9).abs() < 1e-9);
        assert_eq!(u.n_for(100.0), Some(1));
        assert_eq!(u.n_for(400.0), Some(5)); // X(4) = 357.1, X(5) = 416.7
        assert_eq!(u.n_for(10_000.0), None, "beyond the peak");
        let p = plan(
            vec![(1.0, 100.0), (2.0, 196.0), (4.0, 350.0), (8.0, 470.0)],
            "members".into(),
            &[16.0],
            Some(1e9),
        );
        assert!(p.target.unwrap().note.contains("beyond the fitted peak"));
        assert_eq!(p.predictions.len(), 1);
        assert!(p.knee_n.is_some());
    }

    #[test]
    fn rates_parse_with_units() {
        assert_eq!(parse_rate("20GB/s").unwrap(), 20e9);
        assert_eq!(parse_rate("500MB/s").unwrap(), 500e6);
        assert_eq!(parse_rate("2GiB/s").unwrap(), 2.0 * 1073741824.0);
        assert_eq!(parse_rate("1000").unwrap(), 1000.0);
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("5XB/s").is_err());
        assert!(parse_rate("-1GB/s").is_err());
    }
}
