//! The sweep document (`sweep --json`): the swept parameters, and per point
//! the summary over its repeats with every repeat's full run document; the
//! points of the parameters, and a point's summary of its runs. A
//! parameter's text form (`NAME=V1,V2,...`) is parsed in `cli::sweep`.

use serde::{Deserialize, Serialize};

use crate::analysis::summary::median;
use crate::base::warning::Warning;
use crate::document::run::{RunDocument, ToolInfo};
use crate::measure::config::{RateLimit, RunConfig};

/// The parameters a sweep can vary.
pub const PARAMS: [&str; 13] = [
    "readahead",
    "stripe_cache_size",
    "group_thread_cnt",
    "sync_speed_min",
    "sync_speed_max",
    "bs",
    "jobs",
    "iodepth",
    "mode",
    "rw",
    "members",
    "target",
    "rate",
];

/// `--curve`'s default: the percentages of the unthrottled rate a latency
/// curve (`--param rate=curve`) measures, as vdbench's curve does.
pub const CURVE_PCTS: [f64; 7] = [10.0, 50.0, 70.0, 80.0, 90.0, 95.0, 100.0];

/// One value of `--param rate=...`: each worker's schedule at that point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateValue {
    /// `max`: no schedule, as fast as the target allows.
    Max,
    /// `N%`: that share of what each worker delivered at the point's `max`.
    Pct(f64),
    /// `SIZE/s`: bytes per second per worker.
    Bytes(f64),
    /// `Niops`: I/Os per second per worker.
    Iops(f64),
}

impl RateValue {
    /// Reads one value: `max`, `50%`, `100m/s` (as `--rate`), `200iops`.
    pub fn parse(v: &str) -> Result<RateValue, String> {
        let v = v.trim();
        if v == "max" {
            return Ok(RateValue::Max);
        }
        if let Some(p) = v.strip_suffix('%') {
            return match p.trim().parse::<f64>() {
                Ok(x) if x > 0.0 && x <= 100.0 => Ok(RateValue::Pct(x)),
                _ => Err(format!(
                    "'{v}' is not a percentage of the unthrottled rate: give one above 0 and at most 100"
                )),
            };
        }
        if let Some(n) = v.strip_suffix("iops") {
            return crate::base::units::parse_iops(n).map(RateValue::Iops);
        }
        crate::base::units::parse_io_rate(v).map(RateValue::Bytes)
    }
}

/// `rate=curve` as the values it stands for: `max`, then each percentage.
pub fn curve_values(pcts: &[f64]) -> Vec<String> {
    std::iter::once("max".to_string())
        .chain(pcts.iter().map(|p| format!("{p}%")))
        .collect()
}

/// One `--param NAME=V1,V2,...`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub values: Vec<String>,
}

/// One point's summary over its repeats.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PointDoc {
    /// The swept values, in --param order.
    pub values: Vec<(String, String)>,
    /// Total bytes per second: median, min and max over the repeats.
    pub bytes_per_sec_median: f64,
    pub bytes_per_sec_min: f64,
    pub bytes_per_sec_max: f64,
    /// The targets' own rates summed (each over its own active time), the
    /// median over the repeats: present when the targets of some repeat
    /// ended at different times, where the total (every target's bytes
    /// over the shared window) is not their sum and can stand below the
    /// fastest target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets_sum_bytes_per_sec_median: Option<f64>,
    /// Every repeat's full run document.
    pub runs: Vec<RunDocument>,
    /// A signal ended this point's last run early: its figures cover what
    /// was measured until then.
    #[serde(default)]
    pub partial: bool,
}

/// The sweep document (`--json`): every finished point.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename = "sweep")]
pub struct SweepDocument {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub params: Vec<Param>,
    pub repeat: usize,
    pub interrupted: bool,
    pub points: Vec<PointDoc>,
}

impl SweepDocument {
    /// A sweep of these parameters before its first point.
    pub fn new(params: Vec<Param>, repeat: usize) -> SweepDocument {
        SweepDocument {
            schema_version: super::run::SCHEMA_VERSION,
            tool: super::run::ToolInfo::this(),
            params,
            repeat,
            interrupted: false,
            points: Vec::new(),
        }
    }

    /// Whether any point's run saw I/O errors (or bad blocks, or a failed
    /// flush): the sweep exits 1, as such a run does.
    pub fn has_errors(&self) -> bool {
        self.points
            .iter()
            .flat_map(|p| &p.runs)
            .any(super::run::RunDocument::has_errors)
    }
}

/// The cartesian product of the values, first parameter outermost.
pub fn points(params: &[Param]) -> Vec<Vec<(String, String)>> {
    params.iter().fold(vec![Vec::new()], |acc, p| {
        acc.iter()
            .flat_map(|prefix| {
                p.values.iter().map(move |v| {
                    let mut x = prefix.clone();
                    x.push((p.name.clone(), v.clone()));
                    x
                })
            })
            .collect()
    })
}

impl PointDoc {
    /// A point's summary of its repeats (`runs`, none empty): the median,
    /// min and max of their total rates, and the runs ordered by distance
    /// from the median, so that the first one stands for the point.
    pub fn summarize(
        values: Vec<(String, String)>,
        mut runs: Vec<RunDocument>,
        partial: bool,
    ) -> PointDoc {
        let rates: Vec<f64> = runs.iter().map(|r| r.total.figures.bytes_per_sec).collect();
        let med = median(rates.clone());
        // A repeat whose targets ran the whole window: its total is their sum.
        let targets_sum = runs.iter().any(|r| r.total.targets_sum.is_some()).then(|| {
            median(
                runs.iter()
                    .map(|r| {
                        r.total
                            .targets_sum
                            .as_ref()
                            .map_or(r.total.figures.bytes_per_sec, |t| t.bytes_per_sec)
                    })
                    .collect(),
            )
        });
        runs.sort_by(|a, b| {
            (a.total.figures.bytes_per_sec - med)
                .abs()
                .total_cmp(&(b.total.figures.bytes_per_sec - med).abs())
        });
        PointDoc {
            values,
            bytes_per_sec_median: med,
            bytes_per_sec_min: rates.iter().copied().fold(f64::INFINITY, f64::min),
            bytes_per_sec_max: rates.iter().copied().fold(0.0, f64::max),
            targets_sum_bytes_per_sec_median: targets_sum,
            runs,
            partial,
        }
    }

    /// Every warning of the point's runs, each once, in order.
    pub fn warnings(&self) -> Vec<&Warning> {
        let mut out: Vec<&Warning> = Vec::new();
        for w in self.runs.iter().flat_map(|r| &r.warnings) {
            // Equal warnings (same kind and data, or the same sentence read
            // back from a document) are said once.
            if !out.contains(&w) {
                out.push(w);
            }
        }
        out
    }
}

/// The rate of a point's `rate` value, when it has one.
fn rate_of(point: &[(String, String)]) -> Option<RateValue> {
    point
        .iter()
        .find(|(n, _)| n == "rate")
        .and_then(|(_, v)| RateValue::parse(v).ok())
}

/// The share of the unthrottled rate a point asks for (`rate=N%`).
pub fn pct_of(point: &[(String, String)]) -> Option<f64> {
    match rate_of(point) {
        Some(RateValue::Pct(p)) => Some(p),
        _ => None,
    }
}

/// The point of `done` that ran `point`'s other values at `rate=max`.
pub fn max_point<'a>(done: &'a [PointDoc], point: &[(String, String)]) -> Option<&'a PointDoc> {
    let same = |p: &PointDoc| {
        p.values.len() == point.len()
            && p.values.iter().zip(point).all(|((n, v), (pn, pv))| {
                n == pn
                    && if n == "rate" {
                        RateValue::parse(v) == Ok(RateValue::Max)
                    } else {
                        v == pv
                    }
            })
    };
    done.iter().find(|p| same(p))
}

/// A point at a share of the unthrottled rate (`rate=N%`) gets its
/// schedule from the point with the same other values at `rate=max`, which
/// ran before it (in `done`): N% of what each of its workers delivered
/// (their mean), in I/Os per second. Other points keep their `cfg`. The
/// error says why the point is skipped.
pub fn schedule(
    pt: &[(String, String)],
    cfg: &RunConfig,
    done: &[PointDoc],
) -> Result<RunConfig, String> {
    let Some(pct) = pct_of(pt) else {
        return Ok(cfg.clone());
    };
    let Some(max) = max_point(done, pt) else {
        return Err("its rate=max point did not run".into());
    };
    let run = &max.runs[0];
    let per_worker = run.total.figures.iops / run.workers.len().max(1) as f64;
    let iops = per_worker * pct / 100.0;
    let rate = RateLimit::Iops(iops);
    // A curve's point below one I/O per second measures next to nothing in
    // a point's window, though a schedule may go as low as one a minute.
    if iops.is_nan() || iops < 1.0 || rate.period_ns(1).is_err() {
        return Err(format!(
            "{pct}% of the {per_worker:.1} IOPS per worker delivered at max is below one I/O per second"
        ));
    }
    let mut c = cfg.clone();
    c.rate = Some(rate);
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::sample_doc;

    fn point(values: &[(&str, &str)], rates: &[f64]) -> PointDoc {
        let runs = rates
            .iter()
            .map(|&r| {
                let mut d = sample_doc();
                d.total.figures.bytes_per_sec = r;
                d
            })
            .collect();
        let values = values.iter().map(|&(n, v)| (n.into(), v.into())).collect();
        PointDoc::summarize(values, runs, false)
    }

    #[test]
    fn a_point_is_summarized_by_the_run_nearest_its_median() {
        let p = point(&[("bs", "4k")], &[10.0, 40.0, 25.0]);
        assert_eq!(p.bytes_per_sec_median, 25.0);
        assert_eq!((p.bytes_per_sec_min, p.bytes_per_sec_max), (10.0, 40.0));
        let order: Vec<f64> = p
            .runs
            .iter()
            .map(|r| r.total.figures.bytes_per_sec)
            .collect();
        assert_eq!(order, [25.0, 10.0, 40.0]);
        assert!(!p.partial);
    }

    #[test]
    fn a_share_of_the_rate_finds_the_max_point_of_its_other_values() {
        let done = [
            point(&[("bs", "4k"), ("rate", "max")], &[1.0]),
            point(&[("bs", "8k"), ("rate", "max")], &[2.0]),
        ];
        let pt: Vec<(String, String)> = [("bs", "8k"), ("rate", "50%")]
            .map(|(n, v)| (n.into(), v.into()))
            .to_vec();
        assert_eq!(pct_of(&pt), Some(50.0));
        assert_eq!(
            max_point(&done, &pt).map(|p| p.bytes_per_sec_median),
            Some(2.0)
        );
        assert_eq!(pct_of(&done[0].values), None);
        let other: Vec<(String, String)> = [("bs", "16k"), ("rate", "50%")]
            .map(|(n, v)| (n.into(), v.into()))
            .to_vec();
        assert!(max_point(&done, &other).is_none());
    }
}
