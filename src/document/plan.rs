//! The plan document (`plan --json`): a capacity plan from measured
//! scaling points. Reads run, sweep and merge documents from the bytes the
//! command read (refusing garbage, naming the file and field), fits the law (`analysis::capacity`), and
//! answers peak, ceiling, knee, predictions and a target.

use serde::{Deserialize, Serialize};
use serde_json::Value;

// When a fit is trusted and how its intervals are drawn: analysis/'s.
use crate::analysis::capacity::{
    fit, fit_trusted, Usl, BOOTSTRAP_LEVEL, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, MAX_REL_RMSE,
};
use crate::base::warning::Warning;
use crate::document::error::{Error, Result};
use crate::document::read::{self, Kind, Lazy, Object, Origin, ReadError, Reader, Source, Why};
use crate::document::workload::Workload;

/// A plan's result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename = "plan")]
pub struct PlanDoc {
    /// The stripebench that wrote it, and how it was invoked.
    #[serde(default)]
    pub tool: Option<crate::document::run::ToolInfo>,
    pub points: Vec<(f64, f64)>,
    pub unit: String,
    #[serde(with = "crate::document::facts::UslDef")]
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
    /// Each prediction's interval from the fit's uncertainty (the bootstrap).
    pub intervals: Vec<Interval>,
    /// Each point's measured minus fitted throughput, bytes per second.
    pub residuals: Vec<(f64, f64)>,
    /// The largest `rel_rmse` a prediction is trusted at ([`MAX_REL_RMSE`](crate::analysis::capacity::MAX_REL_RMSE)).
    pub max_rel_rmse: f64,
    /// `rel_rmse` is within `max_rel_rmse`: plan predicts without `--force`.
    pub trusted: bool,
    /// How the intervals were drawn.
    pub bootstrap: Bootstrap,
    pub target: Option<TargetAnswer>,
    /// What `--force` let through (results of different workloads).
    pub warnings: Vec<Warning>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Interval {
    pub n: f64,
    /// The central `bootstrap.level` of the refitted predictions at `n`.
    pub low_bytes_per_sec: f64,
    pub high_bytes_per_sec: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Bootstrap {
    pub resamples: usize,
    /// Resamples with at least 3 distinct N, which were refitted.
    pub fitted: usize,
    pub seed: u64,
    pub level: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TargetAnswer {
    pub bytes_per_sec: f64,
    pub n: Option<u64>,
    pub note: String,
}

/// Measured (N, bytes per second) points.
pub type Points = Vec<(f64, f64)>;

/// N as a document gives it: a whole number, at least 1.
fn whole_n(v: &Value, shown: &str, field: &str) -> Result<f64> {
    let n = match v {
        Value::String(s) => s.trim().parse::<f64>().ok(),
        other => other.as_f64(),
    };
    match n {
        Some(n) if n.is_finite() && n >= 1.0 && n.fract() == 0.0 => Ok(n),
        _ => Err(Error::NotAWholeN {
            shown: shown.into(),
            field: field.into(),
            value: v.to_string(),
        }),
    }
}

/// A throughput as a document gives it: finite, not negative, below 10^18 B/s.
fn rate_field(v: &Value, shown: &str, field: &str) -> Result<f64> {
    match v.as_f64() {
        Some(x) if crate::analysis::plausible::rate_plausible(x) => Ok(x),
        _ => Err(Error::NotAThroughput {
            shown: shown.into(),
            field: field.into(),
            value: v.to_string(),
        }),
    }
}

/// One result file's points, what N counts, and the workload that ran.
/// The document is read a part at a time (a point, a run), never whole.
fn points_of(source: &Source) -> Result<(Points, String, Value)> {
    let origin = Origin {
        shown: source.shown.clone(),
        reader: Reader::Plan,
    };
    let o = read::open(&source.bytes, &origin)?;
    let shown = origin.shown.as_str();
    let top = &o.top;
    let points = top.get("points").and_then(Lazy::array);
    let targets = top.get("targets").and_then(Lazy::array);
    match (o.kind, points, targets) {
        (Some(Kind::Sweep), Some(pts), _) => sweep_points(top, &pts, shown),
        (Some(Kind::Merge), _, _) => {
            crate::document::merge::check_merged_arithmetic(top, shown)?;
            let total = top.value("total");
            let n = whole_n(&total["hosts"], shown, "total.hosts")?;
            let x = rate_field(&total["bytes_per_sec"], shown, "total.bytes_per_sec")?;
            Ok((vec![(n, x)], "hosts".into(), top.value("config")))
        }
        (Some(Kind::Run), _, Some(t)) => {
            crate::document::merge::check_run_arithmetic(top, shown, "")?;
            let n = whole_n(&t.len().into(), shown, "targets (their count)")?;
            let total = top.value("total");
            let x = rate_field(&total["bytes_per_sec"], shown, "total.bytes_per_sec")?;
            Ok((vec![(n, x)], "targets".into(), top.value("config")))
        }
        (kind, _, _) => Err(ReadError::Refused {
            origin,
            why: Why::WrongKind(kind),
        }
        .into()),
    }
}

/// A sweep's points: one per value of N (members or jobs, the only swept
/// parameter), each the median of its runs, which must add up.
fn sweep_points(top: &Object, pts: &[Lazy], shown: &str) -> Result<(Points, String, Value)> {
    let params: Vec<String> = top
        .value("params")
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let Some(axis) = params.iter().position(|n| n == "members" || n == "jobs") else {
        return Err(Error::NoN {
            shown: shown.into(),
            params: params.join(", "),
        });
    };
    if params.len() > 1 {
        return Err(Error::NotOnlyN {
            shown: shown.into(),
            params: params.join(", "),
            n: params[axis].clone(),
        });
    }
    let unit = params[axis].clone();
    let mut config = Value::Null;
    let mut points = Vec::new();
    for (i, pt) in pts.iter().enumerate() {
        let pt = pt.object().unwrap_or_default();
        let n = whole_n(
            &pt.value("values")[axis][1],
            shown,
            &format!("points[{i}].values[{axis}] ({unit})"),
        )?;
        let x = rate_field(
            &pt.value("bytes_per_sec_median"),
            shown,
            &format!("points[{i}].bytes_per_sec_median"),
        )?;
        let runs = pt.get("runs").and_then(Lazy::array).unwrap_or_default();
        let mut rates = Vec::new();
        for (j, run) in runs.iter().enumerate() {
            let run = run.object().unwrap_or_default();
            let at = format!("points[{i}].runs[{j}].");
            crate::document::merge::check_run_arithmetic(&run, shown, &at)?;
            rates.push(run.value("total")["bytes_per_sec"].as_f64().unwrap_or(0.0));
            if config.is_null() {
                config = run.value("config");
            }
        }
        let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = rates.iter().copied().fold(0.0, f64::max);
        if !rates.is_empty() && (x < lo * (1.0 - 1e-9) || x > hi * (1.0 + 1e-9)) {
            return Err(Error::MedianOutsideRuns {
                shown: shown.into(),
                index: i,
                median: x,
                low: lo,
                high: hi,
            });
        }
        points.push((n, x));
    }
    Ok((points, unit, config))
}

/// Reads (N, X) from result files, each read by the command as it comes: a
/// sweep over members or jobs gives one point per value; a merged document
/// gives (hosts, fleet rate); a run document gives (targets, total rate).
/// Every file must count N the same way and, unless `force`, run the same
/// workload (`workload::Workload`, N left out); with `force` the
/// differences are returned as warnings.
pub fn points_from(
    sources: impl Iterator<Item = Result<Source>>,
    force: bool,
) -> Result<(Points, String, Vec<Warning>)> {
    let mut points = Vec::new();
    let mut first: Option<(String, String, Workload)> = None;
    let mut warnings = Vec::new();
    for source in sources {
        let source = source?;
        let shown = source.shown.clone();
        let (pts, unit, config) = points_of(&source)?;
        // N itself differs from file to file, as it should.
        let workload = Workload::of_json(&config);
        let workload = if unit == "jobs" {
            workload.without("jobs")
        } else {
            workload
        };
        match &first {
            None => first = Some((shown, unit, workload)),
            Some((f, u, w)) => {
                if *u != unit {
                    return Err(Error::UnitsDiffer {
                        shown,
                        unit,
                        first: f.clone(),
                        first_unit: u.clone(),
                    });
                }
                if let Some(difference) = w.differences(&workload, "").into_iter().next() {
                    if !force {
                        return Err(Error::PlanWorkloads {
                            shown,
                            first: f.clone(),
                            difference,
                        });
                    }
                    warnings.push(Warning::DifferentWorkloadFitted {
                        path: shown.to_string(),
                        first: f.clone(),
                        difference,
                    });
                }
            }
        }
        points.extend(pts);
    }
    let unit = first.map(|f| f.1).unwrap_or_default();
    if points.iter().all(|p| p.1 == 0.0) {
        return Err(Error::NoThroughput);
    }
    let mut distinct: Vec<f64> = points.iter().map(|p| p.0).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < 3 {
        return Err(Error::TooFewN { distinct });
    }
    Ok((points, unit, warnings))
}

pub fn plan(
    points: Vec<(f64, f64)>,
    unit: String,
    at: &[f64],
    target: Option<f64>,
    warnings: Vec<Warning>,
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
    let rel_rmse = if mean > 0.0 { rmse / mean } else { 0.0 };
    let fits = crate::analysis::capacity::bootstrap(&points, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED);
    let tail = (1.0 - BOOTSTRAP_LEVEL) / 2.0;
    let intervals = at
        .iter()
        .filter_map(|&n| {
            let xs: Vec<f64> = fits.iter().map(|f| f.predict(n)).collect();
            use crate::analysis::capacity::quantile;
            Some(Interval {
                n,
                low_bytes_per_sec: quantile(&xs, tail)?,
                high_bytes_per_sec: quantile(&xs, 1.0 - tail)?,
            })
        })
        .collect();
    PlanDoc {
        tool: Some(crate::document::run::ToolInfo::this()),
        intervals,
        residuals: points
            .iter()
            .map(|&(n, x)| (n, x - fit.predict(n)))
            .collect(),
        max_rel_rmse: MAX_REL_RMSE,
        trusted: fit_trusted(rel_rmse),
        bootstrap: Bootstrap {
            resamples: BOOTSTRAP_RESAMPLES,
            fitted: fits.len(),
            seed: BOOTSTRAP_SEED,
            level: BOOTSTRAP_LEVEL,
        },
        predictions: at.iter().map(|&n| (n, fit.predict(n))).collect(),
        peak_bytes_per_sec: peak_n.map(|p| fit.predict(p)),
        ceiling_bytes_per_sec: fit.ceiling(),
        points,
        unit,
        fit,
        rel_rmse,
        peak_n,
        knee_n,
        target,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::plan::render;

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
}
