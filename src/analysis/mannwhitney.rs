//! The two-sided Mann-Whitney U test (Wilcoxon rank-sum): whether two sets
//! of samples (per-second rates of two runs, or the figures of their
//! repeats) come from one distribution. It assumes nothing about the shape
//! of the distribution, only that the samples are independent.
//!
//! The method follows `scipy.stats.mannwhitneyu` with its defaults, and the
//! unit tests check U and p against scipy's results:
//! - U is the first sample's statistic: the pairs (x, y) with x > y, plus
//!   half the ties;
//! - exact p (the null distribution of U counted) when one sample has at
//!   most 8 values and no value repeats, for samples of up to
//!   [`EXACT_MAX_N`] values (scipy has no such cap; beyond it the normal
//!   approximation is within its own error of the exact figure);
//! - otherwise the normal approximation with the tie correction of the
//!   variance and a continuity correction of 0.5.
//!
//! [`test`] also says when the samples are too few for the test to mean
//! anything: when even the most extreme arrangement of n1 and n2 values
//! (every x above every y) gives a p-value of at least `alpha`, no result
//! could be significant, so it is not run.

/// The larger sample that still gets an exact p-value (the count is
/// O(min² × max²) additions: 64 × 10^6 at 8 and 1000).
pub const EXACT_MAX_N: usize = 1000;

/// How the p-value was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// The null distribution of U, counted.
    Exact,
    /// The normal approximation, tie-corrected, with continuity correction.
    Normal,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::Normal => "normal approximation",
        }
    }
}

/// A test's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U of the first sample.
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    pub method: Method,
    pub n1: usize,
    pub n2: usize,
    /// Some value occurs more than once (over both samples).
    pub ties: bool,
}

/// A test run, or why none was.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    Tested(MannWhitney),
    /// Too few samples: the smallest p-value n1 and n2 values can give is
    /// `smallest_p`, not below alpha.
    TooFew {
        n1: usize,
        n2: usize,
        smallest_p: f64,
    },
}

/// The smallest two-sided p-value samples of n1 and n2 values can give:
/// 2 / C(n1 + n2, n1) (every value of one sample above every value of the
/// other), at most 1; 1 when a sample is empty.
pub fn smallest_p(n1: usize, n2: usize) -> f64 {
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    let (k, n) = (n1.min(n2), n1 + n2);
    // C(n, k) as a product of k ratios; a float is enough (an overflow to
    // infinity gives 0, which is right).
    let c = (0..k).fold(1.0f64, |c, i| c * (n - i) as f64 / (i + 1) as f64);
    (2.0 / c).min(1.0)
}

/// The test, or [`Outcome::TooFew`] when no result could reach `alpha`.
pub fn test(x: &[f64], y: &[f64], alpha: f64) -> Outcome {
    let smallest = smallest_p(x.len(), y.len());
    match mann_whitney_u(x, y) {
        Some(t) if smallest < alpha => Outcome::Tested(t),
        _ => Outcome::TooFew {
            n1: x.len(),
            n2: y.len(),
            smallest_p: smallest,
        },
    }
}

/// The two-sided Mann-Whitney U test of `x` against `y`; None when either
/// is empty or holds a value that is not finite.
pub fn mann_whitney_u(x: &[f64], y: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    // Ranks over both samples, ties sharing their mean rank.
    let mut all: Vec<(f64, bool)> = x
        .iter()
        .map(|&v| (v, true))
        .chain(y.iter().map(|&v| (v, false)))
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = all.len();
    let mut rank_sum_x = 0.0;
    // Σ (t³ - t) over groups of t equal values.
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && all[j].0 == all[i].0 {
            j += 1;
        }
        // Ranks i+1 ..= j share their mean.
        let mean_rank = (i + 1 + j) as f64 / 2.0;
        let xs = all[i..j].iter().filter(|(_, is_x)| *is_x).count();
        rank_sum_x += mean_rank * xs as f64;
        let t = (j - i) as f64;
        tie_term += t * t * t - t;
        i = j;
    }
    let ties = tie_term > 0.0;
    let (f1, f2) = (n1 as f64, n2 as f64);
    let u1 = rank_sum_x - f1 * (f1 + 1.0) / 2.0;
    let u2 = f1 * f2 - u1;
    let big = u1.max(u2);
    let exact = n1.min(n2) <= 8 && n1.max(n2) <= EXACT_MAX_N && !ties;
    let (p, method) = if exact {
        // Without ties U is a whole number.
        (2.0 * exact_sf(n1, n2, big.round() as usize), Method::Exact)
    } else {
        let mu = f1 * f2 / 2.0;
        let nn = f1 + f2;
        let var = f1 * f2 / 12.0 * ((nn + 1.0) - tie_term / (nn * (nn - 1.0)));
        let p = if var <= 0.0 {
            // Every value equal: nothing tells the samples apart.
            1.0
        } else {
            let z = (big - mu - 0.5) / var.sqrt();
            2.0 * normal_sf(z)
        };
        (p, Method::Normal)
    };
    Some(MannWhitney {
        u: u1,
        p: p.clamp(0.0, 1.0),
        method,
        n1,
        n2,
        ties,
    })
}

/// P(U ≥ u) under the null hypothesis, for samples of n1 and n2 values
/// without ties: the number of arrangements with U ≥ u over C(n1 + n2, n1).
fn exact_sf(n1: usize, n2: usize, u: usize) -> f64 {
    // U's distribution is symmetric in the two samples: count with m the
    // smaller. f(m, n, u) = f(m - 1, n, u - n) + f(m, n - 1, u): the
    // largest of all m + n values is an x (above all n y's) or a y.
    let (m, n) = (n1.min(n2), n1.max(n2));
    let top = m * n;
    // counts[k][v]: arrangements of k x's and the y's so far with U = v.
    let mut counts = vec![vec![0.0f64; top + 1]; m + 1];
    for row in counts.iter_mut() {
        row[0] = 1.0;
    }
    for yn in 1..=n {
        for k in 1..=m {
            let (lower, upper) = counts.split_at_mut(k);
            let prev = &lower[k - 1];
            let row = &mut upper[0];
            for v in (yn..=k * yn).rev() {
                row[v] += prev[v - yn];
            }
        }
    }
    let dist = &counts[m];
    let total: f64 = dist.iter().sum();
    let tail: f64 = dist.iter().skip(u.min(top + 1)).sum();
    tail / total
}

/// P(Z > z) for a standard normal Z: erfc(z / √2) / 2.
fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function, to a relative error below 1.2e-7
/// (the Chebyshev fit of Numerical Recipes, `erfcc`): far finer than any
/// p-value needs.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// U and p as `scipy.stats.mannwhitneyu(x, y)` (scipy 1.17.1, default
    /// arguments: two-sided, continuity correction, method "auto") gives them.
    fn check(x: &[f64], y: &[f64], u: f64, p: f64, method: Method) {
        let t = mann_whitney_u(x, y).unwrap();
        assert_eq!(t.u, u, "U of {x:?} vs {y:?}");
        assert!(
            (t.p - p).abs() <= 1e-6 * p.max(1e-12),
            "p of {x:?} vs {y:?}: {} (scipy {p})",
            t.p
        );
        assert_eq!(t.method, method);
        // The test is symmetric: swapping the samples swaps U and keeps p.
        let s = mann_whitney_u(y, x).unwrap();
        assert_eq!(s.u, (x.len() * y.len()) as f64 - u);
        assert!((s.p - t.p).abs() <= 1e-12);
    }

    #[test]
    fn exact_p_matches_scipy_for_small_samples_without_ties() {
        check(
            &[1.1, 2.3, 3.5, 4.2, 5.0],
            &[6.1, 7.2, 8.3, 9.4, 10.5],
            0.0,
            0.007936507936507936,
            Method::Exact,
        );
        check(
            &[19.0, 22.0, 16.0, 29.0, 24.0],
            &[20.0, 11.0, 17.0, 12.0],
            17.0,
            0.1111111111111111,
            Method::Exact,
        );
        // One small sample against a larger one is still exact.
        check(
            &[3.5, 8.1, 12.0],
            &[
                1.0, 2.0, 4.0, 5.0, 6.0, 7.0, 9.0, 10.0, 11.0, 13.0, 14.0, 15.0,
            ],
            17.0,
            0.9450549450549449,
            Method::Exact,
        );
    }

    #[test]
    fn ties_use_the_tie_corrected_normal_approximation_as_scipy() {
        check(
            &[1.0, 2.0, 2.0, 3.0, 4.0],
            &[2.0, 3.0, 3.0, 5.0, 6.0, 6.0],
            6.0,
            0.1130499788563229,
            Method::Normal,
        );
        let x = [
            2., 5., 5., 1., 0., 3., 4., 4., 3., 4., 5., 5., 5., 5., 4., 5., 0., 0., 4., 2., 4., 2.,
            5., 0., 4., 0., 0., 4., 1., 5.,
        ];
        let y = [
            5., 6., 2., 2., 5., 5., 4., 1., 5., 4., 1., 1., 3., 5., 3., 6., 1., 3., 4., 6., 2., 5.,
            1., 3., 5., 4., 6., 5.,
        ];
        check(&x, &y, 336.5, 0.18764411078179444, Method::Normal);
        // Every value equal: p is 1, as scipy says.
        check(&[5.0; 9], &[5.0; 9], 40.5, 1.0, Method::Normal);
    }

    #[test]
    fn large_samples_use_the_normal_approximation_as_scipy() {
        let x = [
            100.012, 102.987, 97.259, 91.094, 95.453, 90.084, 100.601, 113.402, 95.078, 93.795,
            104.898, 103.569, 101.054, 90.695, 99.707, 106.953, 86.558, 95.424, 80.988, 87.105,
        ];
        let y = [
            88.617, 92.634, 92.389, 102.484, 82.874, 104.111, 96.428, 114.936, 115.568, 119.923,
            113.675, 105.47, 114.598, 121.055, 99.464, 112.104, 105.573, 120.4, 97.631, 102.985,
            109.623, 108.581, 89.606, 109.602, 104.815,
        ];
        check(&x, &y, 133.0, 0.007789796193647162, Method::Normal);
    }

    #[test]
    fn the_exact_distribution_is_the_textbook_one() {
        // n1 = n2 = 2: U takes 0, 1, 2, 2, 3, 4 over the C(4, 2) = 6 arrangements.
        assert_eq!(exact_sf(2, 2, 0), 1.0);
        assert!((exact_sf(2, 2, 2) - 4.0 / 6.0).abs() < 1e-15);
        assert!((exact_sf(2, 2, 4) - 1.0 / 6.0).abs() < 1e-15);
        // It sums to one and is symmetric about n1 n2 / 2.
        for (m, n) in [(3, 7), (8, 8), (1, 20)] {
            let top = m * n;
            for u in 0..=top {
                let p_eq = exact_sf(m, n, u) - exact_sf(m, n, u + 1);
                let mirror = exact_sf(m, n, top - u) - exact_sf(m, n, top - u + 1);
                assert!((p_eq - mirror).abs() < 1e-12, "({m}, {n}) at {u}");
            }
        }
    }

    #[test]
    fn too_few_samples_are_not_tested() {
        // 2 vs 2: the smallest p is 2/6; 3 vs 3 it is 2/20 = 0.1: neither reaches 0.05.
        assert!((smallest_p(2, 2) - 1.0 / 3.0).abs() < 1e-12);
        assert!((smallest_p(3, 3) - 0.1).abs() < 1e-12);
        assert!((smallest_p(4, 4) - 2.0 / 70.0).abs() < 1e-12);
        assert_eq!(smallest_p(0, 5), 1.0);
        assert!(matches!(
            test(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.05),
            Outcome::TooFew { n1: 3, n2: 3, .. }
        ));
        assert!(matches!(
            test(&[1.0, 2.0, 3.0, 3.5], &[4.0, 5.0, 6.0, 7.0], 0.05),
            Outcome::Tested(MannWhitney {
                method: Method::Exact,
                ..
            })
        ));
        assert!(matches!(test(&[], &[1.0], 0.05), Outcome::TooFew { .. }));
        assert_eq!(mann_whitney_u(&[f64::NAN], &[1.0]), None);
    }

    #[test]
    fn erfc_is_accurate() {
        // erfc(0) = 1, erfc(1) = 0.157299207050285, erfc(3) = 2.20904969985854e-5.
        for (x, want) in [
            (0.0, 1.0),
            (1.0, 0.157_299_207_050_285),
            (3.0, 2.209_049_699_858_54e-5),
            (-1.0, 1.842_700_792_949_715),
        ] {
            assert!((erfc(x) - want).abs() <= 1.2e-7 * want, "erfc({x})");
        }
    }
}
