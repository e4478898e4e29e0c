//! Fail-slow against a disk's peers (the idea of Alibaba's Perseus, FAST
//! '23): among disks of one model and firmware measured with one workload,
//! a robust fit of latency against throughput, and the disks whose latency
//! lies above the fit's prediction bound at their throughput, ranked.
//!
//! - Each disk is one point: the medians of its recent runs' MB/s and p99.
//! - The fit is Theil-Sen's line through the points in log-log space (the
//!   median of the pairwise slopes; robust to nearly 3 in 10 bad points),
//!   so a few failing disks do not bend it.
//! - The bound is the fit plus `k` robust standard deviations of the
//!   residuals (1.4826 × their median absolute deviation), and at least
//!   `floor_pct` above the fit, so that disks that agree to the microsecond
//!   do not make every small difference a finding.
//! - A disk is judged at its own throughput, or at the slowest other
//!   peer's when it is slower than all of them: a fit says nothing below
//!   the throughput its peers showed, and in a closed-loop benchmark a slow
//!   disk's low throughput is the slowness itself, not a light load that
//!   would excuse its latency.

/// One disk's point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub bytes_per_sec: f64,
    pub p99_ns: f64,
}

/// The fit over one group of peers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// log(p99) = intercept + slope × log(bytes/s).
    pub slope: f64,
    pub intercept: f64,
    /// The bound's distance above the fit, in log units.
    pub margin: f64,
}

/// One disk's verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    /// Its index in the points given.
    pub index: usize,
    /// The fit's p99 at its throughput (or the slowest other's).
    pub predicted_ns: f64,
    /// The bound's p99 there.
    pub bound_ns: f64,
    /// Its p99 over the prediction.
    pub ratio: f64,
    pub above: bool,
}

/// The fewest peers a fit is made from.
pub const MIN_PEERS: usize = 4;
/// The bound: this many robust standard deviations above the fit...
pub const BOUND_SIGMAS: f64 = 3.0;
/// ... and at least this many percent above it.
pub const BOUND_FLOOR_PCT: f64 = 10.0;

/// The fit of `points` (at least [`MIN_PEERS`], every figure positive).
pub fn fit(points: &[Point], k: f64, floor_pct: f64) -> Option<Fit> {
    if points.len() < MIN_PEERS
        || points
            .iter()
            .any(|p| !(p.bytes_per_sec > 0.0 && p.p99_ns > 0.0 && p.p99_ns.is_finite()))
    {
        return None;
    }
    let xy: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.bytes_per_sec.ln(), p.p99_ns.ln()))
        .collect();
    let mut slopes = Vec::with_capacity(xy.len() * (xy.len() - 1) / 2);
    for (i, a) in xy.iter().enumerate() {
        for b in &xy[i + 1..] {
            let dx = b.0 - a.0;
            // Points at one throughput (within 0.1%) say nothing of the slope.
            if dx.abs() > 1e-3 {
                slopes.push((b.1 - a.1) / dx);
            }
        }
    }
    let slope = if slopes.is_empty() {
        0.0
    } else {
        median_of(&mut slopes)
    };
    let mut icepts: Vec<f64> = xy.iter().map(|(x, y)| y - slope * x).collect();
    let intercept = median_of(&mut icepts);
    let mut dev: Vec<f64> = xy
        .iter()
        .map(|(x, y)| (y - intercept - slope * x).abs())
        .collect();
    let mad = median_of(&mut dev);
    let margin = (k * 1.4826 * mad).max((1.0 + floor_pct / 100.0).ln());
    Some(Fit {
        slope,
        intercept,
        margin,
    })
}

/// Every point judged against `fit`, each at its throughput or the
/// slowest other's, whichever is higher; the disks above the bound first, the worst
/// (highest ratio) first, then the rest by ratio.
pub fn judge(points: &[Point], fit: &Fit) -> Vec<Judged> {
    let mut out: Vec<Judged> = (0..points.len())
        .map(|i| {
            let lo = points
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .fold(f64::INFINITY, |lo, (_, p)| lo.min(p.bytes_per_sec));
            let x = points[i].bytes_per_sec.max(lo).ln();
            let predicted = (fit.intercept + fit.slope * x).exp();
            let bound = predicted * fit.margin.exp();
            Judged {
                index: i,
                predicted_ns: predicted,
                bound_ns: bound,
                ratio: points[i].p99_ns / predicted,
                above: points[i].p99_ns > bound,
            }
        })
        .collect();
    out.sort_by(|a, b| b.above.cmp(&a.above).then(b.ratio.total_cmp(&a.ratio)));
    out
}

fn median_of(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(mb: f64, p99_us: f64) -> Point {
        Point {
            bytes_per_sec: mb * 1e6,
            p99_ns: p99_us * 1e3,
        }
    }

    #[test]
    fn of_eight_peers_the_one_planted_slow_is_ranked_first_and_alone() {
        let mut pts: Vec<Point> = [100.0, 101.0, 99.0, 100.5, 98.5, 100.2, 99.6]
            .iter()
            .zip([500.0, 495.0, 505.0, 498.0, 510.0, 502.0, 499.0])
            .map(|(&m, l)| pt(m, l))
            .collect();
        // A closed loop: half the throughput, twice the latency.
        pts.insert(3, pt(50.0, 1000.0));
        let f = fit(&pts, 3.0, 10.0).unwrap();
        let j = judge(&pts, &f);
        assert_eq!(j[0].index, 3);
        assert!(j[0].above && j[0].ratio > 1.8, "{:?}", j[0]);
        assert_eq!(j.iter().filter(|x| x.above).count(), 1, "{j:?}");
    }

    #[test]
    fn a_tail_that_rose_at_its_peers_throughput_is_above_the_bound() {
        let mut pts: Vec<Point> = (0..9)
            .map(|i| pt(100.0 + i as f64, 500.0 - i as f64))
            .collect();
        pts.push(pt(104.0, 900.0));
        let j = judge(&pts, &fit(&pts, 3.0, 10.0).unwrap());
        assert_eq!(j[0].index, 9);
        assert!(j[0].above);
        assert!(j[1..].iter().all(|x| !x.above));
    }

    #[test]
    fn a_load_the_peers_showed_excuses_its_latency() {
        // Peers spread along one curve: latency rises as throughput does.
        let pts: Vec<Point> = (1..=8)
            .map(|i| pt(10.0 * i as f64, 100.0 * i as f64))
            .collect();
        let j = judge(&pts, &fit(&pts, 3.0, 10.0).unwrap());
        assert!(j.iter().all(|x| !x.above), "{j:?}");
    }

    #[test]
    fn too_few_peers_or_a_figure_that_is_not_positive_give_no_fit() {
        assert!(fit(&[pt(1.0, 1.0); 3], 3.0, 10.0).is_none());
        assert!(fit(
            &[pt(1.0, 1.0), pt(1.0, 1.0), pt(1.0, 0.0), pt(1.0, 1.0)],
            3.0,
            10.0
        )
        .is_none());
        // Identical peers: a slope of 0, the floor as the bound.
        let f = fit(&[pt(1.0, 1.0); 5], 3.0, 10.0).unwrap();
        assert_eq!(f.slope, 0.0);
        assert!((f.margin - 1.1f64.ln()).abs() < 1e-12);
    }
}
