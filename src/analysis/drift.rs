//! Drift: a disk's recent results against its own baseline, per workload.
//! The figures compared are per run (one value a run: its MB/s, its p99),
//! by the test `diff` uses (`mannwhitney`, two-sided, at `alpha`); a drift
//! is a change beyond the noise *and* past the threshold: MB/s down, or
//! p99 up, by more than `threshold_pct`.

use crate::analysis::mannwhitney::{self, Outcome};
use crate::analysis::summary::median;

/// Which figure drifted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Bytes per second: a fall is worse.
    Rate,
    /// The 99th percentile latency: a rise is worse.
    P99,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::Rate => "MB/s",
            Metric::P99 => "p99",
        }
    }
}

/// How one figure of one series compares with its baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub metric: Metric,
    /// The recent runs' median against the baseline's, in percent.
    pub change_pct: f64,
    /// Two-sided p-value (None: too few runs for any p below alpha).
    pub p: Option<f64>,
    pub n_baseline: usize,
    pub n_recent: usize,
    /// Beyond the noise and past the threshold, the worse way.
    pub drifted: bool,
}

/// How a series' runs split into baseline and recent: the first
/// `baseline` runs (or those before `until`, a Unix time), and the last
/// `recent` of those after them. `times` are in order.
pub fn split(times: &[f64], baseline: usize, until: Option<f64>, recent: usize) -> (usize, usize) {
    let b = match until {
        Some(u) => times.iter().take_while(|&&t| t <= u).count(),
        None => baseline.min(times.len()),
    };
    let after = times.len() - b;
    (b, after.min(recent))
}

/// The change of `metric` from `base` to `new` (one value per run).
pub fn compare(
    metric: Metric,
    base: &[f64],
    new: &[f64],
    alpha: f64,
    threshold_pct: f64,
) -> Option<Change> {
    if base.is_empty() || new.is_empty() {
        return None;
    }
    let (b, n) = (median(base.to_vec()), median(new.to_vec()));
    if b.is_nan() || b <= 0.0 || !n.is_finite() {
        return None;
    }
    let change_pct = (n - b) / b * 100.0;
    let p = match mannwhitney::test(base, new, alpha) {
        Outcome::Tested(t) => Some(t.p),
        Outcome::TooFew { .. } => None,
    };
    let worse = match metric {
        Metric::Rate => change_pct < -threshold_pct,
        Metric::P99 => change_pct > threshold_pct,
    };
    Some(Change {
        metric,
        change_pct,
        p,
        n_baseline: base.len(),
        n_recent: new.len(),
        drifted: worse && p.is_some_and(|p| p < alpha),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_p99_risen_beyond_the_noise_and_the_threshold_is_drift() {
        let base = [1.00, 1.02, 0.98, 1.01, 0.99];
        let new = [1.41, 1.45, 1.38, 1.44, 1.40, 1.43];
        let c = compare(Metric::P99, &base, &new, 0.05, 10.0).unwrap();
        assert!(c.drifted);
        assert!((c.change_pct - 41.5).abs() < 1.0, "{}", c.change_pct);
        assert!(c.p.unwrap() < 0.01);
        assert_eq!((c.n_baseline, c.n_recent), (5, 6));
        // The same rise is no drift of a rate (higher is better there).
        assert!(
            !compare(Metric::Rate, &base, &new, 0.05, 10.0)
                .unwrap()
                .drifted
        );
    }

    #[test]
    fn noise_a_small_change_and_too_few_runs_are_not_drift() {
        let base = [1.0, 1.3, 0.8, 1.2, 0.9];
        let new = [1.1, 0.85, 1.25, 1.0, 1.2];
        assert!(
            !compare(Metric::P99, &base, &new, 0.05, 10.0)
                .unwrap()
                .drifted
        );
        let small = [1.05, 1.06, 1.05, 1.06, 1.05];
        assert!(
            !compare(Metric::P99, &[1.0; 5], &small, 0.05, 10.0)
                .unwrap()
                .drifted
        );
        let few = compare(Metric::P99, &[1.0, 1.0], &[2.0, 2.0], 0.05, 10.0).unwrap();
        assert_eq!(few.p, None);
        assert!(!few.drifted);
        assert!(compare(Metric::Rate, &[], &[1.0], 0.05, 10.0).is_none());
    }

    #[test]
    fn the_baseline_is_the_first_runs_or_those_before_a_date() {
        let t = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        assert_eq!(split(&t, 3, None, 10), (3, 5));
        assert_eq!(split(&t, 3, None, 2), (3, 2));
        assert_eq!(split(&t, 20, None, 5), (8, 0));
        assert_eq!(split(&t, 3, Some(4.5), 5), (4, 4));
    }
}
