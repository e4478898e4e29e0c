//! advise's judgements of its measured runs, as functions of their figures:
//! the queue-depth knee (the least depth past which more I/Os in flight
//! gain little) and read-modify-write in full-stripe writes (the members
//! read more than bookkeeping while a full stripe was written).
//! `document::advise` gathers the figures from its measurements and writes
//! the findings from what these return. And how a budget is shared out
//! between the measured checks, with the bounds of a window: what
//! `document::advise::plan` applies and `measure::series::Pace` keeps to.

/// The share of the budget for the read-ahead points, for the members,
/// for the request sizes and for the queue depths (what is left: the
/// batteries' setup beyond [`RUN_OVERHEAD_SEC`]).
pub const READAHEAD_SHARE: f64 = 0.35;
pub const SLOW_SHARE: f64 = 0.25;
pub const REQUEST_SHARE: f64 = 0.1;
pub const QUEUE_SHARE: f64 = 0.1;
/// The read-ahead points' share when the members are not measured (a
/// volume of one device): theirs is given to read-ahead.
pub const READAHEAD_ALONE_SHARE: f64 = 0.8;
/// The write runs' share (only with --allow-destructive, on parity RAID).
pub const WRITE_SHARE: f64 = 0.15;
/// Seconds a measured run costs beyond its window (dropping the cache,
/// opening, setting read-ahead), kept out of the windows.
pub const RUN_OVERHEAD_SEC: f64 = 1.0;
/// The shortest window worth measuring.
pub const MIN_WINDOW_SEC: f64 = 1.0;

/// The share of the best IOPS a depth must reach to be the knee: past it,
/// more I/Os in flight gain less than this.
pub const KNEE_SHARE: f64 = 0.9;

/// The knee of `points` (depth, IOPS), sorted by depth: the first that
/// reached [`KNEE_SHARE`] of the best IOPS, by its index. `None` with
/// fewer than 3 points (no curve to read a knee from).
pub fn knee(points: &[(u32, f64)]) -> Option<usize> {
    if points.len() < 3 {
        return None;
    }
    let best = points.iter().map(|p| p.1).fold(0.0, f64::max);
    points.iter().position(|p| p.1 >= KNEE_SHARE * best)
}

/// The share of the bytes written that the members may read during
/// full-stripe writes before it counts as read-modify-write (md reads a
/// little for its own bookkeeping).
pub const RMW_SHARE: f64 = 0.05;

/// What the members read over what was written; `None` when either is not
/// known or nothing was written.
pub fn read_share(members_read: Option<u64>, written: Option<u64>) -> Option<f64> {
    match (members_read, written) {
        (Some(r), Some(w)) if w > 0 => Some(r as f64 / w as f64),
        _ => None,
    }
}

/// Whether full-stripe writes whose members read `share` of what was
/// written did read-modify-write: more than [`RMW_SHARE`].
pub fn full_stripe_rmw(share: f64) -> bool {
    share > RMW_SHARE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_knee_is_the_first_depth_at_its_share_of_the_best() {
        let pts = [(1, 100.0), (4, 350.0), (16, 900.0), (64, 1000.0)];
        assert_eq!(knee(&pts), Some(2));
        // 899 is short of 90% of 1000: the knee moves deeper.
        let pts = [(1, 100.0), (4, 350.0), (16, 899.0), (64, 1000.0)];
        assert_eq!(knee(&pts), Some(3));
        assert_eq!(knee(&pts[..2]), None);
    }

    #[test]
    fn members_reading_past_the_share_is_read_modify_write() {
        assert_eq!(read_share(Some(5), Some(100)), Some(0.05));
        assert_eq!(read_share(Some(5), Some(0)), None);
        assert_eq!(read_share(None, Some(100)), None);
        assert!(!full_stripe_rmw(0.05));
        assert!(full_stripe_rmw(0.051));
    }
}
