//! advise's judgements of its measured runs, as functions of their figures:
//! the queue-depth knee (the least depth past which more I/Os in flight
//! gain little, [`queue_knee`]), one buffered reader against one O_DIRECT
//! worker per member ([`buffered_direct`]) and read-modify-write in
//! full-stripe writes (the members read more than bookkeeping while a full
//! stripe was written).
//! `document::advise` gathers the figures from its measurements and writes
//! the findings from what these return. And how a budget is shared out
//! between the measured checks, with the bounds of a window: what
//! `document::advise::plan` applies and `measure::series::Pace` keeps to.

/// How much a finding matters, least first (`document::advise::Severity`
/// is its contract spelling).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Info,
    Low,
    Medium,
    High,
}

/// The percent change from `before` to `after`; `None` when `before` is
/// not positive (no rate to compare with).
pub fn gain_pct(before: f64, after: f64) -> Option<f64> {
    (before > 0.0).then(|| (after / before - 1.0) * 100.0)
}

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

/// One queue-depth run: its depth, its IOPS and its p99 (ns, when known).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DepthPoint {
    pub depth: u32,
    pub iops: f64,
    pub p99_ns: Option<u64>,
}

/// The queue-depth check's judgement: the runs that moved anything, by
/// depth; the knee among them ([`knee`]); and the deepest, whose gain past
/// the knee is paid for in p99.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueKnee {
    pub points: Vec<DepthPoint>,
    pub knee: DepthPoint,
    pub deepest: DepthPoint,
}

/// The queue-depth knee of the whole runs `points` (any order); `None`
/// without a curve to read one from (see [`knee`]).
pub fn queue_knee(mut points: Vec<DepthPoint>) -> Option<QueueKnee> {
    points.retain(|p| p.iops > 0.0);
    points.sort_by_key(|p| p.depth);
    let rates: Vec<(u32, f64)> = points.iter().map(|p| (p.depth, p.iops)).collect();
    let knee = points[knee(&rates)?];
    let deepest = *points.last()?;
    Some(QueueKnee {
        points,
        knee,
        deepest,
    })
}

/// One whole run's rate and, when known, its CPU seconds per GB.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub bytes_per_sec: f64,
    pub cpu_sec_per_gb: Option<f64>,
}

/// How many times the CPU per byte of the other's the buffered reader must
/// spend for it to be said (below it, the gap is the page cache's
/// threading and read-ahead, not its copying).
pub const CPU_GAP_FACTOR: f64 = 1.5;

/// Seed 004's comparison: one buffered reader on the volume against one
/// O_DIRECT worker per member, each the median of its runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BufferedDirect {
    pub buffered: f64,
    pub direct: f64,
    pub buffered_cpu: Option<f64>,
    pub direct_cpu: Option<f64>,
    /// The direct rate over the buffered one.
    pub ratio: f64,
    /// The buffered reader's CPU per byte over the direct workers', when
    /// it is past [`CPU_GAP_FACTOR`].
    pub cpu_ratio: Option<f64>,
}

/// The buffered-against-direct comparison of the whole runs that moved
/// anything; `None` unless both sides have one.
pub fn buffered_direct(buffered: &[Rate], direct: &[Rate]) -> Option<BufferedDirect> {
    let mid = |rs: &[Rate], f: &dyn Fn(&Rate) -> Option<f64>| {
        let v: Vec<f64> = rs
            .iter()
            .filter(|r| r.bytes_per_sec > 0.0)
            .filter_map(f)
            .collect();
        (!v.is_empty()).then(|| crate::analysis::summary::median(v))
    };
    let b = mid(buffered, &|r| Some(r.bytes_per_sec))?;
    let d = mid(direct, &|r| Some(r.bytes_per_sec))?;
    let b_cpu = mid(buffered, &|r| r.cpu_sec_per_gb);
    let d_cpu = mid(direct, &|r| r.cpu_sec_per_gb);
    Some(BufferedDirect {
        buffered: b,
        direct: d,
        buffered_cpu: b_cpu,
        direct_cpu: d_cpu,
        ratio: d / b,
        cpu_ratio: match (b_cpu, d_cpu) {
            (Some(x), Some(y)) if y > 0.0 && x > CPU_GAP_FACTOR * y => Some(x / y),
            _ => None,
        },
    })
}

/// How much each measured finding matters. A member slower than the
/// others holds the whole volume back, and a member that splits its
/// chunk for no reason a static check named costs requests: medium. The
/// queue-depth knee, buffered reads against O_DIRECT ones and what a
/// sub-stripe write costs are how the array behaves, not faults: info.
pub const SLOW_MEMBER_SEVERITY: Severity = Severity::Medium;
pub const UNEXPLAINED_SPLIT_SEVERITY: Severity = Severity::Medium;
pub const QUEUE_KNEE_SEVERITY: Severity = Severity::Info;
pub const BUFFERED_DIRECT_SEVERITY: Severity = Severity::Info;

/// A rate before and after a fix, and the percent it gained.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    pub before: f64,
    pub after: f64,
    pub pct: Option<f64>,
}

impl Change {
    pub fn of(before: f64, after: f64) -> Change {
        Change {
            before,
            after,
            pct: gain_pct(before, after),
        }
    }
}

/// A slow member's estimated gain: full-stripe reads move at `members` ×
/// the slowest member's rate (`figure`, bytes/s); with it at the median
/// member's (`median`), at `members` × that.
pub fn slow_member_gain(figure: f64, median: f64, members: f64) -> Change {
    Change {
        before: figure * members,
        after: median * members,
        pct: gain_pct(figure, median),
    }
}

/// One write run's figures: bytes written, what the members read meanwhile
/// (both when known), its rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WriteRun {
    pub bytes: Option<u64>,
    pub members_read: Option<u64>,
    pub bytes_per_sec: f64,
}

/// The write runs' judgement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Writes {
    /// Full-stripe writes at the current stripe cache that did
    /// read-modify-write ([`full_stripe_rmw`]): medium, with the share the
    /// members read.
    pub full_stripe_rmw: Option<(Severity, f64)>,
    /// Random chunk-sized writes beside full-stripe ones: info, what a
    /// sub-stripe write costs (with the share the members read, when known).
    pub sub_stripe: Option<(Severity, Option<f64>)>,
    /// Full-stripe writes at the stripe cache's fix against the current.
    pub cache_gain: Option<Change>,
}

/// The write runs: full-stripe writes at the current stripe cache
/// (`full_now`) and at its fix (`full_fixed`), random chunk-sized writes
/// (`random`).
pub fn writes(
    full_now: Option<WriteRun>,
    random: Option<WriteRun>,
    full_fixed: Option<WriteRun>,
) -> Writes {
    let share = |r: &WriteRun| read_share(r.members_read, r.bytes);
    Writes {
        full_stripe_rmw: full_now
            .as_ref()
            .and_then(share)
            .filter(|&s| full_stripe_rmw(s))
            .map(|s| (Severity::Medium, s)),
        sub_stripe: match (random, full_now) {
            (Some(r), Some(_)) => Some((Severity::Info, share(&r))),
            _ => None,
        },
        cache_gain: match (full_now, full_fixed) {
            (Some(now), Some(fixed)) => Some(Change::of(now.bytes_per_sec, fixed.bytes_per_sec)),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gain_is_a_percent_of_a_positive_before() {
        assert_eq!(gain_pct(100.0, 150.0), Some(50.0));
        assert_eq!(gain_pct(0.0, 150.0), None);
        assert_eq!(gain_pct(-1.0, 150.0), None);
    }

    #[test]
    fn the_queue_knee_sorts_drops_idle_runs_and_names_the_deepest() {
        let p = |depth, iops| DepthPoint {
            depth,
            iops,
            p99_ns: Some(u64::from(depth)),
        };
        let q = queue_knee(vec![
            p(64, 1000.0),
            p(1, 100.0),
            p(8, 0.0),
            p(16, 900.0),
            p(4, 350.0),
        ])
        .unwrap();
        assert_eq!(
            q.points.iter().map(|p| p.depth).collect::<Vec<_>>(),
            [1, 4, 16, 64]
        );
        assert_eq!(q.knee, p(16, 900.0));
        assert_eq!(q.deepest, p(64, 1000.0));
        assert_eq!(queue_knee(vec![p(1, 100.0), p(4, 0.0), p(16, 900.0)]), None);
    }

    #[test]
    fn buffered_against_direct_takes_medians_and_says_a_cpu_gap_past_its_factor() {
        let r = |bytes_per_sec, cpu| Rate {
            bytes_per_sec,
            cpu_sec_per_gb: cpu,
        };
        let bd = buffered_direct(
            &[r(100.0, Some(3.0)), r(0.0, Some(99.0)), r(300.0, Some(1.0))],
            &[r(800.0, Some(1.0))],
        )
        .unwrap();
        // The idle run is no figure: the median of 100 and 300, of 3 and 1.
        assert_eq!((bd.buffered, bd.direct, bd.ratio), (200.0, 800.0, 4.0));
        assert_eq!(bd.buffered_cpu, Some(2.0));
        assert_eq!(bd.cpu_ratio, Some(2.0));
        // 1.5 × is not past the factor.
        let bd = buffered_direct(&[r(100.0, Some(1.5))], &[r(800.0, Some(1.0))]).unwrap();
        assert_eq!(bd.cpu_ratio, None);
        assert_eq!(buffered_direct(&[], &[r(800.0, None)]), None);
    }

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

    #[test]
    fn write_runs_say_rmw_past_its_share_and_what_the_cache_fix_gained() {
        let run = |bytes, read, rate| WriteRun {
            bytes: Some(bytes),
            members_read: Some(read),
            bytes_per_sec: rate,
        };
        // 5% read is bookkeeping; 6% is read-modify-write.
        let w = writes(Some(run(100, 5, 200.0)), None, None);
        assert_eq!(
            w,
            Writes {
                full_stripe_rmw: None,
                sub_stripe: None,
                cache_gain: None
            }
        );
        let w = writes(
            Some(run(100, 6, 200.0)),
            Some(run(100, 90, 50.0)),
            Some(run(100, 0, 300.0)),
        );
        assert_eq!(w.full_stripe_rmw, Some((Severity::Medium, 0.06)));
        assert_eq!(w.sub_stripe, Some((Severity::Info, Some(0.9))));
        assert_eq!(
            w.cache_gain,
            Some(Change {
                before: 200.0,
                after: 300.0,
                pct: Some(50.0)
            })
        );
        // Random writes without full-stripe ones to weigh them against: nothing.
        assert_eq!(
            writes(None, Some(run(100, 90, 50.0)), None).sub_stripe,
            None
        );
    }

    #[test]
    fn a_slow_members_gain_is_the_stripe_at_the_median_members_pace() {
        let g = slow_member_gain(50.0, 100.0, 4.0);
        assert_eq!(
            g,
            Change {
                before: 200.0,
                after: 400.0,
                pct: Some(100.0)
            }
        );
        assert_eq!(slow_member_gain(0.0, 100.0, 4.0).pct, None);
    }
}
