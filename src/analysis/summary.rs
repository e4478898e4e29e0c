//! Summaries of repeated measurements.

/// The median of `v` (the mean of the middle two for an even count; 0 when empty).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// A member is flagged slow this far below the median member.
pub const SLOW_BELOW_MEDIAN: f64 = 0.15;

/// Flags the slowest member when it is more than 15% below the median
/// (or, with 8 members or more, also when beyond 3 standard deviations).
pub fn flag_slow(rates: &[f64]) -> Option<usize> {
    if rates.len() < 2 {
        return None;
    }
    let median = median(rates.to_vec());
    let (i, &min) = rates.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1))?;
    let below_median = min < median * (1.0 - SLOW_BELOW_MEDIAN);
    let n = rates.len() as f64;
    let mean = rates.iter().sum::<f64>() / n;
    let sd = (rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n).sqrt();
    let beyond_3sd = rates.len() >= 8 && sd > 0.0 && mean - min > 3.0 * sd;
    (below_median || beyond_3sd).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_repeats() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(Vec::new()), 0.0);
    }

    #[test]
    fn the_slow_member_is_flagged_against_the_median() {
        assert_eq!(flag_slow(&[100.0, 98.0, 60.0]), Some(2));
        assert_eq!(flag_slow(&[100.0, 98.0, 90.0]), None, "within 15%");
        assert_eq!(flag_slow(&[100.0]), None);
        // Many members: 3 sigma, even when within 15% of the median.
        let mut many = vec![100.0; 15];
        many.push(88.0);
        assert_eq!(flag_slow(&many), Some(15));
    }
}
