//! A minimum rate as fio checks it (`rate_min=`, `rate_iops_min=`,
//! `rate_cycle=`; its backend.c `__check_min_rate`): each worker's rate in
//! each direction, over cycles of at least `rate_cycle`, must not fall
//! below the minimum, or the job ends with an error.
//!
//! fio checks at its completions, and so do we, at the interval
//! granularity of the figures the run already collects: an interval in
//! which the direction completed I/O is a check point at its end. The
//! rules are fio's:
//! - nothing is checked in the first 2 s (fio's settle period);
//! - the first check point after it only starts the first cycle;
//! - a check point less than a cycle after the cycle's start judges
//!   nothing (a partial cycle), and the cycle goes on;
//! - otherwise the cycle's rate is its bytes (or I/Os) over its whole
//!   length, which may exceed `rate_cycle` when I/O was sparse; below the
//!   minimum it fails, else the next cycle starts there.
//!
//! With both a byte and an I/O minimum, fio checks the bytes only.

/// fio's settle period: no check in the first 2 s of a job.
pub const SETTLE_SEC: f64 = 2.0;

/// fio's `rate_cycle` default: 1000 ms.
pub const DEFAULT_CYCLE_SEC: f64 = 1.0;

/// What is checked: bytes or I/Os per second, at least this much.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Minimum {
    BytesPerSec(f64),
    Iops(f64),
}

impl Minimum {
    /// The figure's unit, as the report says it.
    pub fn unit(&self) -> &'static str {
        match self {
            Minimum::BytesPerSec(_) => "B/s",
            Minimum::Iops(_) => "IOPS",
        }
    }

    pub fn value(&self) -> f64 {
        match self {
            Minimum::BytesPerSec(v) | Minimum::Iops(v) => *v,
        }
    }
}

/// A cycle that fell below the minimum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Below {
    /// The cycle, in seconds into the window.
    pub from_sec: f64,
    pub to_sec: f64,
    /// Its rate, in the minimum's unit.
    pub got: f64,
}

/// One worker's direction, judged cycle by cycle.
#[derive(Debug, Clone)]
pub struct Cycles {
    min: Minimum,
    cycle_sec: f64,
    /// The current cycle's start (`None`: not started yet).
    start: Option<f64>,
    bytes: u64,
    ios: u64,
}

impl Cycles {
    pub fn new(min: Minimum, cycle_sec: f64) -> Cycles {
        Cycles {
            min,
            cycle_sec,
            start: None,
            bytes: 0,
            ios: 0,
        }
    }

    /// The current cycle's start: `None` until the first check point after the settle.
    pub fn started(&self) -> Option<f64> {
        self.start
    }

    /// One interval ending `end_sec` into the window, in which `ios` I/Os
    /// of `bytes` completed: the cycle that fell below the minimum, if
    /// this check point judged one that did. Figures that come late (a
    /// worker hands a second off at its first completion after it, so a
    /// sparse schedule's seconds all come late, after zeros written for
    /// them) are given the same way: they count in the cycle, and check it
    /// when their interval ends after its start.
    pub fn interval(&mut self, end_sec: f64, bytes: u64, ios: u64) -> Option<Below> {
        let Some(start) = self.start else {
            // Not a check point, or still settling: no cycle yet.
            if ios > 0 && end_sec + 1e-9 >= SETTLE_SEC {
                self.start = Some(end_sec);
            }
            return None;
        };
        self.bytes += bytes;
        self.ios += ios;
        let spent = end_sec - start;
        if ios == 0 || spent <= 0.0 || spent + 1e-9 < self.cycle_sec {
            return None;
        }
        let got = match self.min {
            Minimum::BytesPerSec(_) => self.bytes as f64 / spent,
            Minimum::Iops(_) => self.ios as f64 / spent,
        };
        if got < self.min.value() {
            return Some(Below {
                from_sec: start,
                to_sec: end_sec,
                got,
            });
        }
        self.start = Some(end_sec);
        self.bytes = 0;
        self.ios = 0;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds 1 s intervals of `per_sec` bytes (one I/O each when non-zero).
    fn run(c: &mut Cycles, per_sec: &[u64]) -> Option<Below> {
        per_sec
            .iter()
            .enumerate()
            .find_map(|(i, &b)| c.interval(i as f64 + 1.0, b, u64::from(b > 0)))
    }

    #[test]
    fn the_first_two_seconds_are_never_judged() {
        // fio's settle period: a job that starts slow is not failed for it.
        let mut c = Cycles::new(Minimum::BytesPerSec(100.0), 1.0);
        assert_eq!(c.interval(1.0, 1, 1), None);
        assert_eq!(c.started(), None);
        assert_eq!(c.interval(2.0, 1, 1), None);
        assert_eq!(
            c.started(),
            Some(2.0),
            "the first check point after the settle starts a cycle"
        );
    }

    #[test]
    fn the_first_check_point_only_starts_the_first_cycle() {
        // Slow at 2 s (the first check point) but never judged for it.
        let mut c = Cycles::new(Minimum::BytesPerSec(100.0), 1.0);
        assert_eq!(run(&mut c, &[1000, 1, 1000, 1000, 1000]), None);
    }

    #[test]
    fn a_cycle_below_the_minimum_fails_with_its_span_and_rate() {
        let mut c = Cycles::new(Minimum::BytesPerSec(100.0), 1.0);
        let b = run(&mut c, &[1000, 1000, 1000, 50, 1000]).expect("below");
        assert_eq!((b.from_sec, b.to_sec, b.got), (3.0, 4.0, 50.0));
    }

    #[test]
    fn a_partial_cycle_judges_nothing_and_the_cycle_goes_on() {
        // A 3 s cycle: the check points at 3 s and 4 s are partial; at 5 s
        // the whole cycle (2..5) averages 200 B/s.
        let mut c = Cycles::new(Minimum::BytesPerSec(150.0), 3.0);
        assert_eq!(run(&mut c, &[1, 1, 10, 10, 580]), None);
        // The next cycle (5..8) averages 100 B/s: below.
        let b = c
            .interval(6.0, 100, 1)
            .or(c.interval(7.0, 100, 1))
            .or(c.interval(8.0, 100, 1))
            .expect("below");
        assert_eq!((b.from_sec, b.to_sec, b.got), (5.0, 8.0, 100.0));
    }

    #[test]
    fn sparse_io_stretches_the_cycle_to_the_next_completion() {
        // fio's 1mbs_clients: 4 KiB every ~3.3 s at rate=1250, ratemin=1024.
        // Intervals with no completion are no check point, so the cycle
        // runs completion to completion and averages 1250 B/s: not below.
        let mut c = Cycles::new(Minimum::BytesPerSec(1024.0), 1.0);
        let mut per_sec = vec![0u64; 40];
        for k in 0..12 {
            per_sec[(k * 10) / 3] = 4096;
        }
        assert_eq!(run(&mut c, &per_sec), None);
    }

    #[test]
    fn iops_are_judged_by_ios_not_bytes() {
        let mut c = Cycles::new(Minimum::Iops(10.0), 1.0);
        assert_eq!(c.interval(2.0, 1 << 30, 5), None);
        let b = c.interval(3.0, 1 << 30, 5).expect("5 IOPS is below 10");
        assert_eq!(b.got, 5.0);
        assert_eq!(Minimum::Iops(10.0).unit(), "IOPS");
    }

    #[test]
    fn late_figures_count_in_the_cycle_and_check_it_at_their_interval() {
        let mut c = Cycles::new(Minimum::BytesPerSec(100.0), 1.0);
        assert_eq!(c.interval(2.0, 100, 1), None);
        // 3 s and 4 s written as stalled (zeros: no check point)...
        assert_eq!(c.interval(3.0, 0, 0), None);
        assert_eq!(c.interval(4.0, 0, 0), None);
        // ...then 3 s's figures, late: 2..3 is 150 B/s, not below.
        assert_eq!(c.interval(3.0, 150, 1), None);
        // A late figure for a time before the cycle's start judges nothing.
        assert_eq!(c.interval(2.5, 1, 1), None);
        // 3..5: 1 + 50 bytes over 2 s: below.
        let b = c.interval(5.0, 50, 1).expect("below");
        assert_eq!((b.from_sec, b.to_sec, b.got), (3.0, 5.0, 25.5));
    }
}
