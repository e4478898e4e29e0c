//! The Universal Scalability Law, fitted to a scaling curve. Fits
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

/// Above this error (RMS, relative to the mean throughput) a fit does not
/// describe the points well enough to predict from.
pub const MAX_REL_RMSE: f64 = 0.10;
/// Bootstrap resamples, their seed (fixed, so a plan is reproducible) and
/// the share of the refitted predictions an interval holds.
pub const BOOTSTRAP_RESAMPLES: usize = 200;
pub const BOOTSTRAP_SEED: u64 = 21;
pub const BOOTSTRAP_LEVEL: f64 = 0.90;

/// Whether a fit whose error (RMS over the mean throughput) is `rel_rmse`
/// is trusted to predict from: within [`MAX_REL_RMSE`].
pub fn fit_trusted(rel_rmse: f64) -> bool {
    rel_rmse <= MAX_REL_RMSE
}

#[derive(Debug, Clone, Copy, PartialEq)]
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

/// The fit's uncertainty: the law refitted to `resamples` bootstrap
/// resamples of the points (drawn with replacement, from `seed`), leaving
/// out resamples with fewer than 3 distinct N (no curve to fit).
pub fn bootstrap(points: &[(f64, f64)], resamples: usize, seed: u64) -> Vec<Usl> {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        crate::base::io::splitmix64(state)
    };
    let mut fits = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let sample: Vec<(f64, f64)> = (0..points.len())
            .map(|_| points[(next() % points.len() as u64) as usize])
            .collect();
        let mut ns: Vec<u64> = sample.iter().map(|p| p.0.to_bits()).collect();
        ns.sort_unstable();
        ns.dedup();
        if ns.len() >= 3 {
            fits.push(fit(&sample));
        }
    }
    fits
}

/// The `q` quantile (0..=1) of `values`, by nearest rank; `None` when empty.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    Some(v[i])
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
}
