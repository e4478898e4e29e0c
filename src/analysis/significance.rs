//! The judgement of `diff`: whether a change of one figure is beyond the
//! noise (`mannwhitney` on per-second rates, or on repeats), what the
//! change is in percent, and whether it crossed `--threshold`. Functions
//! of typed figures ([`Figures`], one row of one side); `document::diff`
//! pairs the rows and writes the document from what these return.

use crate::analysis::mannwhitney::{self, Outcome};

/// How many figures a row has: MB/s, IOPS, p50, p99 and p99.9, in that
/// order (the document names them).
pub const FIGURES: usize = 5;
/// The index of the rate (bytes per second) among a row's figures.
pub const RATE: usize = 0;
/// The index of p99 among a row's figures.
pub const P99: usize = 3;

/// Samples of the rates: bytes per second, I/Os per second, and what they are.
pub type RateSamples = (Vec<f64>, Vec<f64>, &'static str);

/// One row's figures and samples, from one side.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub bytes_per_sec: Option<f64>,
    pub iops: Option<f64>,
    /// p50, p99 and p99.9 in ns.
    pub latency: Option<[f64; 3]>,
    /// Samples of the rates (bytes/s, IOPS) and what they are.
    pub rate_samples: Option<RateSamples>,
    /// Per-repeat latency percentiles (p50, p99, p99.9), with enough repeats.
    pub latency_samples: Option<[Vec<f64>; 3]>,
}

impl Figures {
    /// The figure at `metric` (0..[`FIGURES`]).
    pub fn get(&self, metric: usize) -> Option<f64> {
        match metric {
            0 => self.bytes_per_sec,
            1 => self.iops,
            2..=4 => self.latency.map(|l| l[metric - 2]),
            _ => None,
        }
    }
}

/// What the test said of one change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// p < alpha: beyond the noise.
    Significant,
    /// p ≥ alpha: within the noise.
    Noise,
    /// No test: too few samples, or none to test (see `note`).
    Untested,
}

/// The two-sample test of one figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    pub verdict: Verdict,
    /// "mann-whitney-u" when a test ran.
    pub test: Option<&'static str>,
    /// "exact" or "normal approximation".
    pub method: Option<&'static str>,
    /// What was compared: "per-second intervals" or "repeats".
    pub samples: Option<&'static str>,
    pub n_base: usize,
    pub n_new: usize,
    /// U of the base samples.
    pub u: Option<f64>,
    /// Two-sided p-value.
    pub p: Option<f64>,
    /// Why no test ran.
    pub note: Option<String>,
}

/// Whether a sweep point's repeats (`n_base` and `n_new` of them) can give
/// a p-value below `alpha`: then they are the samples, else the repeats'
/// per-second totals are.
pub fn repeats_testable(n_base: usize, n_new: usize, alpha: f64) -> bool {
    mannwhitney::smallest_p(n_base, n_new) < alpha
}

/// (new - base) / base, in percent; 0 when both are 0; `None` when base is
/// 0 (and new is not) or either is missing.
pub fn change_pct(base: Option<f64>, new: Option<f64>) -> Option<f64> {
    match (base, new) {
        (Some(x), Some(y)) if x > 0.0 => Some((y - x) / x * 100.0),
        (Some(x), Some(y)) if x == 0.0 && y == 0.0 => Some(0.0),
        _ => None,
    }
}

/// Whether a change crossed `threshold_pct`: a rate ([`RATE`]) fall or a
/// p99 ([`P99`]) rise past it, unless the test found it within the noise.
pub fn crossed(
    metric: usize,
    threshold_pct: Option<f64>,
    change_pct: Option<f64>,
    verdict: Verdict,
) -> bool {
    match (threshold_pct, change_pct) {
        (Some(t), Some(c)) => {
            let past = (metric == RATE && c < -t) || (metric == P99 && c > t);
            past && verdict != Verdict::Noise
        }
        _ => false,
    }
}

/// The test of one figure (`metric`, 0..[`FIGURES`]), from both sides' samples.
pub fn test(metric: usize, a: &Figures, b: &Figures, alpha: f64) -> Test {
    let untested = |note: String, na: usize, nb: usize| Test {
        verdict: Verdict::Untested,
        test: None,
        method: None,
        samples: None,
        n_base: na,
        n_new: nb,
        u: None,
        p: None,
        note: Some(note),
    };
    let (xs, ys, what): (&[f64], &[f64], &'static str) = if metric < 2 {
        match (&a.rate_samples, &b.rate_samples) {
            (Some(x), Some(y)) => {
                fn pick(s: &RateSamples, metric: usize) -> &[f64] {
                    if metric == 0 {
                        &s.0
                    } else {
                        &s.1
                    }
                }
                // Repeats on one side and intervals on the other are not one kind of sample.
                let what = if x.2 == y.2 {
                    x.2
                } else {
                    "per-second intervals"
                };
                (pick(x, metric), pick(y, metric), what)
            }
            _ => {
                return untested(
                    "no per-second samples on one side: a merged host whose hostname repeats"
                        .into(),
                    0,
                    0,
                )
            }
        }
    } else {
        match (&a.latency_samples, &b.latency_samples) {
            (Some(x), Some(y)) => (&x[metric - 2], &y[metric - 2], "repeats"),
            _ => {
                return untested(
                    "one latency histogram per side: percentiles have no per-second samples".into(),
                    0,
                    0,
                )
            }
        }
    };
    match mannwhitney::test(xs, ys, alpha) {
        Outcome::Tested(t) => Test {
            verdict: if t.p < alpha {
                Verdict::Significant
            } else {
                Verdict::Noise
            },
            test: Some("mann-whitney-u"),
            method: Some(t.method.name()),
            samples: Some(what),
            n_base: t.n1,
            n_new: t.n2,
            u: Some(t.u),
            p: Some(t.p),
            note: None,
        },
        Outcome::TooFew { n1, n2, smallest_p } => untested(
            format!(
                "n too small: {n1} vs {n2} {what} cannot give a p-value below {alpha} (at best {smallest_p:.3})"
            ),
            n1,
            n2,
        ),
    }
}
