//! `stripebench plan`: capacity planning from a scaling curve. Fits the
//! Universal Scalability Law
//!
//!   X(N) = λN / (1 + σ(N−1) + κN(N−1))
//!
//! by least squares to measured (N, throughput) points: λ is one unit's
//! throughput, σ contention, κ coherency, both kept in [0, 1): at σ = 1 the
//! law's peak √((1−σ)/κ) is 0, where X is 0/0. For fixed σ and κ the best λ
//! has a closed form, so the search is over (σ, κ) only: a coarse grid, then
//! a shrinking local search. From the fit: the N of peak throughput
//! √((1−σ)/κ) (at least 1), or without coherency cost the ceiling λ/σ that
//! a saturating curve approaches (none for a linear one), predictions at
//! given N, the N needed for a target, and the knee where scaling stops
//! being near-linear.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::base::error::{show_path, usage, UsageError};

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

    /// The N of peak throughput (none without coherency cost). The law
    /// holds from one unit up, so a peak below N = 1 is at N = 1.
    pub fn peak_n(&self) -> Option<f64> {
        (self.kappa > 0.0).then(|| ((1.0 - self.sigma).max(0.0) / self.kappa).sqrt().max(1.0))
    }

    /// Without coherency cost and with contention, the throughput that the
    /// curve approaches as N grows and never reaches: λ/σ.
    pub fn ceiling(&self) -> Option<f64> {
        (self.kappa == 0.0 && self.sigma > 0.0).then(|| self.lambda / self.sigma)
    }

    /// The smallest whole N with X(N) ≥ target, if the curve reaches it.
    pub fn n_for(&self, target: f64) -> Option<u64> {
        if self.ceiling().is_some_and(|c| target >= c) {
            return None;
        }
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

/// Least-squares fit of the USL to (N, X) points, N ≥ 1, with σ and κ in
/// [0, 1).
pub fn fit(points: &[(f64, f64)]) -> Usl {
    let mut best = (f64::INFINITY, 0.0, 0.0, 0.0);
    let kappas: Vec<f64> = std::iter::once(0.0)
        .chain((0..=120).map(|i| 10f64.powf(-8.0 + i as f64 * 0.06)))
        .collect();
    for si in 0..100 {
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
            if !(0.0..1.0).contains(&s) || !(0.0..1.0).contains(&k) {
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
    /// Without a peak (kappa 0) and with contention: the rate λ/σ that the
    /// curve approaches as N grows.
    pub ceiling_bytes_per_sec: Option<f64>,
    /// The first measured N whose throughput is below 90% of linear (N x λ).
    pub knee_n: Option<f64>,
    pub predictions: Vec<(f64, f64)>,
    pub target: Option<TargetAnswer>,
    /// What `--force` let through (results of different workloads).
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TargetAnswer {
    pub bytes_per_sec: f64,
    pub n: Option<u64>,
    pub note: String,
}

/// Measured (N, bytes per second) points.
pub type Points = Vec<(f64, f64)>;

/// No storage moves 10^18 bytes per second: a larger figure is damage, and
/// its square would overflow the least-squares sums.
const MAX_RATE: f64 = 1e18;

/// N as a document gives it: a whole number, at least 1.
fn whole_n(v: &serde_json::Value, shown: &str, field: &str) -> Result<f64, UsageError> {
    let n = match v {
        serde_json::Value::String(s) => s.trim().parse::<f64>().ok(),
        other => other.as_f64(),
    };
    match n {
        Some(n) if n.is_finite() && n >= 1.0 && n.fract() == 0.0 => Ok(n),
        _ => Err(UsageError(format!(
            "{shown}: {field} is {v}, not a whole number N of at least 1: give documents as stripebench wrote them"
        ))),
    }
}

/// A throughput as a document gives it: finite, not negative, below 10^18 B/s.
fn rate_field(v: &serde_json::Value, shown: &str, field: &str) -> Result<f64, UsageError> {
    match v.as_f64() {
        Some(x) if x.is_finite() && (0.0..MAX_RATE).contains(&x) => Ok(x),
        _ => Err(UsageError(format!(
            "{shown}: {field} is {v}, not a throughput (bytes per second, 0 to 10^18): give documents as stripebench wrote them"
        ))),
    }
}

/// One result file's points, what N counts, and the workload that ran.
fn points_of(p: &Path) -> Result<(Points, String, serde_json::Value), UsageError> {
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
        return Err(UsageError(format!("{shown} is not a stripebench document")));
    }
    let mut points = Vec::new();
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
            return Err(UsageError(format!(
                "{shown} sweeps {}: plan needs a sweep over members or jobs (N)",
                params.join(", ")
            )));
        };
        if params.len() > 1 {
            return Err(UsageError(format!(
                "{shown} sweeps {} at once: plan needs N ({}) to be the only parameter",
                params.join(", "),
                params[axis]
            )));
        }
        let unit = params[axis].clone();
        let mut config = serde_json::Value::Null;
        for (i, pt) in pts.iter().enumerate() {
            let n = whole_n(
                &pt["values"][axis][1],
                &shown,
                &format!("points[{i}].values[{axis}] ({unit})"),
            )?;
            let x = rate_field(
                &pt["bytes_per_sec_median"],
                &shown,
                &format!("points[{i}].bytes_per_sec_median"),
            )?;
            let runs = pt["runs"].as_array().map_or(&[][..], Vec::as_slice);
            let mut rates = Vec::new();
            for (j, run) in runs.iter().enumerate() {
                let at = format!("points[{i}].runs[{j}].");
                crate::document::merge::check_run_arithmetic(run, &shown, &at)?;
                rates.push(run["total"]["bytes_per_sec"].as_f64().unwrap_or(0.0));
                if config.is_null() {
                    config = run["config"].clone();
                }
            }
            let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = rates.iter().copied().fold(0.0, f64::max);
            if !rates.is_empty() && (x < lo * (1.0 - 1e-9) || x > hi * (1.0 + 1e-9)) {
                return Err(UsageError(format!(
                    "{shown}: points[{i}].bytes_per_sec_median is {x}, outside its runs' {lo} to {hi}: give documents as stripebench wrote them"
                )));
            }
            points.push((n, x));
        }
        return Ok((points, unit, config));
    }
    if v.get("kind").and_then(|k| k.as_str()) == Some("merge") {
        crate::document::merge::check_merged_arithmetic(&v, &shown)?;
        let n = whole_n(&v["total"]["hosts"], &shown, "total.hosts")?;
        let x = rate_field(&v["total"]["bytes_per_sec"], &shown, "total.bytes_per_sec")?;
        return Ok((vec![(n, x)], "hosts".into(), v["config"].clone()));
    }
    if let Some(t) = v.get("targets").and_then(|t| t.as_array()) {
        crate::document::merge::check_run_arithmetic(&v, &shown, "")?;
        let n = whole_n(&t.len().into(), &shown, "targets (their count)")?;
        let x = rate_field(&v["total"]["bytes_per_sec"], &shown, "total.bytes_per_sec")?;
        return Ok((vec![(n, x)], "targets".into(), v["config"].clone()));
    }
    Err(UsageError(format!(
        "{shown} is neither a sweep, a merge nor a run document"
    )))
}

/// Reads (N, X) from result files: a sweep over members or jobs gives one
/// point per value; a merged document gives (hosts, fleet rate); a run
/// document gives (targets, total rate). Every file must count N the same
/// way and, unless `force`, run the same workload (as `merge` requires);
/// with `force` the differences are returned as warnings.
pub fn points_from(paths: &[PathBuf], force: bool) -> Result<(Points, String, Vec<String>)> {
    let mut points = Vec::new();
    let mut first: Option<(String, String, serde_json::Value)> = None;
    let mut warnings = Vec::new();
    for p in paths {
        let shown = show_path(p);
        let (pts, unit, config) = points_of(p)?;
        match &first {
            None => first = Some((shown, unit, config)),
            Some((f, u, c)) => {
                if *u != unit {
                    return usage(format!(
                        "{shown} gives N as {unit}, but {f} as {u}: plan fits one kind of N; give sweeps over one parameter, or merges, or runs"
                    ));
                }
                // N itself differs from file to file, as it should.
                let ignore: &[&str] = if unit == "jobs" { &["jobs"] } else { &[] };
                if let Some(diff) = crate::document::merge::config_difference(c, &config, ignore) {
                    if !force {
                        return usage(format!(
                            "{shown} ran a different workload than {f}: {diff}; plan fits one workload, or pass --force"
                        ));
                    }
                    warnings.push(format!(
                        "{shown}: a different workload than {f} ({diff}), fitted together because of --force"
                    ));
                }
            }
        }
        points.extend(pts);
    }
    let unit = first.map(|f| f.1).unwrap_or_default();
    if points.iter().all(|p| p.1 == 0.0) {
        return usage(
            "every point measured 0 B/s: there is no throughput to fit; check the runs' errors",
        );
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
    Ok((points, unit, warnings))
}

/// Parses a target rate: "20GB/s", "500MB/s" (decimal), "2GiB/s" (binary),
/// or bytes per second: the units rule of `crate::base::units`. A unit without
/// its B ("5G/s"), or in lower case ("5gb/s", which reads as bits), is
/// refused rather than guessed.
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
        u => return Err(format!("'{text}': unknown unit '{u}' in a rate: write B/s, KB/s, MB/s, GB/s, TB/s (decimal: 1 MB/s = 10^6 bytes/s) or KiB/s, MiB/s, GiB/s, TiB/s (binary: 1 MiB/s = 2^20 bytes/s)")),
    };
    if v <= 0.0 || !v.is_finite() {
        return Err(format!("'{text}': the rate must be positive"));
    }
    Ok(v * m)
}

pub fn plan(
    points: Vec<(f64, f64)>,
    unit: String,
    at: &[f64],
    target: Option<f64>,
    warnings: Vec<String>,
) -> PlanDoc {
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
            (None, None) => match fit.ceiling() {
                Some(c) => format!(
                    "beyond the fitted ceiling: throughput approaches {:.1} MB/s as {unit} are added, and never reaches it",
                    c / 1e6
                ),
                None => format!("not reached within 10 million {unit}"),
            },
        };
        TargetAnswer { bytes_per_sec: t, n, note }
    });
    PlanDoc {
        predictions: at.iter().map(|&n| (n, fit.predict(n))).collect(),
        peak_bytes_per_sec: peak_n.map(|p| fit.predict(p)),
        ceiling_bytes_per_sec: fit.ceiling(),
        points,
        unit,
        fit,
        rel_rmse: if mean > 0.0 { rmse / mean } else { 0.0 },
        peak_n,
        knee_n,
        target,
        warnings,
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
        let linear = p.fit.lambda * n;
        let _ = writeln!(
            out,
            "  {:>6} {:>12.1} {:>12.1} {:>10}",
            n,
            x / 1e6,
            p.fit.predict(n) / 1e6,
            if linear > 0.0 {
                format!("{:.0}%", x / linear * 100.0)
            } else {
                "-".into()
            }
        );
    }
    match (p.peak_n, p.peak_bytes_per_sec, p.ceiling_bytes_per_sec) {
        (Some(n), Some(x), _) => {
            let _ = writeln!(out, "  peak: {:.1} MB/s at N = {:.1}", x / 1e6, n);
        }
        (_, _, Some(c)) => {
            let _ = writeln!(
                out,
                "  no peak (kappa 0): throughput approaches lambda/sigma = {:.1} MB/s as N grows",
                c / 1e6
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "  no peak: the fit scales linearly (sigma and kappa 0)"
            );
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
    for w in &p.warnings {
        let _ = writeln!(out, "warning: {w}");
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
            vec![],
        );
        assert!(p.target.unwrap().note.contains("beyond the fitted peak"));
        assert_eq!(p.predictions.len(), 1);
        assert!(p.knee_n.is_some());
    }

    /// Every figure of a plan is finite and its text shows no NaN or inf.
    fn assert_finite(p: &PlanDoc) {
        let text = render(p);
        assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
        let json = serde_json::to_value(p).unwrap();
        for key in [
            "rel_rmse",
            "peak_n",
            "peak_bytes_per_sec",
            "ceiling_bytes_per_sec",
        ] {
            assert!(
                json[key].is_null() || json[key].as_f64().is_some_and(f64::is_finite),
                "{key} = {}: {text}",
                json[key]
            );
        }
        for (n, x) in &p.predictions {
            assert!(x.is_finite(), "prediction at {n}: {x}");
        }
    }

    // Regression (issue 13, item 9c): on a real members sweep sigma reached
    // 1.0, and the peak printed as "NaN MB/s at N = 0.0" (JSON null).
    #[test]
    fn saturated_and_falling_curves_fit_without_nan() {
        for pts in [
            vec![(1.0, 1e9), (2.0, 1e9), (3.0, 1e9), (4.0, 1e9)],
            vec![(1.0, 1e9), (2.0, 0.9e9), (3.0, 0.8e9), (4.0, 0.7e9)],
            vec![(1.0, 1e9), (2.0, 0.5e9), (3.0, 0.33e9), (4.0, 0.25e9)],
            vec![(1.0, 983e6), (2.0, 1180e6), (3.0, 1290e6), (4.0, 1340e6)],
        ] {
            let p = plan(
                pts.clone(),
                "members".into(),
                &[8.0, 64.0],
                Some(5e9),
                vec![],
            );
            assert!((0.0..1.0).contains(&p.fit.sigma), "{:?} {pts:?}", p.fit);
            assert!((0.0..1.0).contains(&p.fit.kappa), "{:?} {pts:?}", p.fit);
            assert!(p.fit.lambda > 0.0, "{:?}", p.fit);
            if let Some(n) = p.peak_n {
                assert!(n >= 1.0, "peak at N = {n}");
            }
            assert_finite(&p);
            assert!(
                p.target.unwrap().n.is_none(),
                "5 GB/s is beyond these curves"
            );
        }
    }

    #[test]
    fn a_linear_curve_has_no_peak_and_reaches_any_target() {
        let p = plan(
            vec![(1.0, 1e9), (2.0, 2e9), (3.0, 3e9), (4.0, 4e9)],
            "jobs".into(),
            &[10.0],
            Some(5.5e9),
            vec![],
        );
        assert_eq!((p.fit.sigma, p.fit.kappa), (0.0, 0.0));
        assert_eq!((p.peak_n, p.ceiling_bytes_per_sec), (None, None));
        assert_eq!(p.target.as_ref().unwrap().n, Some(6));
        assert!((p.predictions[0].1 - 10e9).abs() < 1.0);
        assert!(render(&p).contains("scales linearly"));
        assert_finite(&p);
    }

    #[test]
    fn a_saturating_curve_without_coherency_reports_its_ceiling() {
        let truth = Usl {
            lambda: 1e9,
            sigma: 0.5,
            kappa: 0.0,
        };
        let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0]
            .iter()
            .map(|&n| (n, truth.predict(n)))
            .collect();
        let p = plan(pts, "members".into(), &[], Some(2.5e9), vec![]);
        let c = p.ceiling_bytes_per_sec.expect("a ceiling");
        assert!((c - 2e9).abs() / 2e9 < 0.01, "ceiling {c}");
        let t = p.target.as_ref().unwrap();
        assert_eq!(t.n, None);
        assert!(t.note.contains("ceiling"), "{}", t.note);
        assert_finite(&p);
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

    // Regression (issue 13, item 8): rates are decimal in MB/s, binary in
    // MiB/s, and a unit that could be either is refused, not guessed.
    #[test]
    fn rates_are_decimal_in_mb_and_binary_in_mib() {
        assert_eq!(parse_rate("1MB/s").unwrap(), 1e6);
        assert_eq!(parse_rate("1MiB/s").unwrap(), 1048576.0);
        assert_eq!(parse_rate("1.5GB/s").unwrap(), 1.5e9);
        assert_eq!(parse_rate("1KB/s").unwrap(), 1e3);
        assert_eq!(parse_rate("1kB/s").unwrap(), 1e3);
        assert_eq!(parse_rate("1TiB/s").unwrap(), 1099511627776.0);
        for bad in ["5G/s", "5g/s", "5gb/s", "5Gb/s", "5m", "5GIB/s"] {
            let e = parse_rate(bad).unwrap_err();
            assert!(
                e.contains("MB/s = 10^6") && e.contains("MiB/s = 2^20"),
                "{bad}: {e}"
            );
        }
    }
}
