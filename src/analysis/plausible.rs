//! What a figure read back from a document can be and still be a
//! measurement: bounds past which it is damage, not a device's speed or a
//! run's length. `document::merge` and `document::plan` read documents and
//! refuse a figure these call implausible.

/// The longest window a run can have: --duration's year, with room.
pub const MAX_WINDOW_SEC: f64 = 2.0 * 365.0 * 86400.0;

/// No storage moves 10^18 bytes per second: a larger figure is damage, and
/// its square would overflow the least-squares sums.
pub const MAX_RATE: f64 = 1e18;

/// Whether `seconds` is a window some run could have had (not longer than
/// [`MAX_WINDOW_SEC`]).
pub fn window_plausible(seconds: f64) -> bool {
    seconds <= MAX_WINDOW_SEC
}

/// Whether `bytes_per_sec` is a throughput some device could have given:
/// finite, not negative, below [`MAX_RATE`].
pub fn rate_plausible(bytes_per_sec: f64) -> bool {
    bytes_per_sec.is_finite() && (0.0..MAX_RATE).contains(&bytes_per_sec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_longer_than_two_years_is_damage() {
        assert!(window_plausible(MAX_WINDOW_SEC));
        assert!(!window_plausible(MAX_WINDOW_SEC + 1.0));
        assert!(!window_plausible(f64::INFINITY));
    }

    #[test]
    fn a_rate_must_be_finite_non_negative_and_below_10_18() {
        assert!(rate_plausible(0.0));
        assert!(rate_plausible(1e9));
        assert!(!rate_plausible(-1.0));
        assert!(!rate_plausible(1e18));
        assert!(!rate_plausible(f64::NAN));
    }
}
