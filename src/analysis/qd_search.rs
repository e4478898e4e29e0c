//! fio's latency-target search for a queue depth (`--latency-target`,
//! fio's latency_target=, io_u.c `lat_target_*`), as a function of each
//! window's counts: the worker starts at depth 1, and after each
//! `--latency-window` asks [`Search::window_end`] what depth to run next,
//! given how many of the window's I/Os completed and how many took longer
//! than the target.
//!
//! fio's arithmetic, kept exactly so that the depths it walks through are
//! fio's: a window that meets the target raises the depth (doubling while
//! no depth has failed, else halfway to the lowest depth that failed), one
//! that does not lowers it halfway to the highest depth that met it, after
//! the I/Os in flight at the higher depth completed (fio's
//! `io_u_quiesce`). When a met window leaves the depth where it was, the
//! search has settled: one more window runs at that depth (fio resets its
//! figures there, so that its report is that depth's), and when it meets
//! the target too the job ends, unless `latency_run` keeps it searching.
//! With a percentile of 100 fio does not wait for the window's end: the
//! first I/O over the target lowers the depth at once, and at depth 1 it
//! fails the job ("max latency exceeded").

/// `--latency-target`, `--latency-window`, `--latency-percentile`,
/// `--latency-run`: what each window must meet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// The latency an I/O must complete within, in ns (fio's
    /// latency_target=, issue to completion).
    pub target_ns: u64,
    /// The length of each window, in ns (fio's latency_window=).
    pub window_ns: u64,
    /// The share of a window's I/Os, in percent (0 < p <= 100), that must
    /// complete within the target (fio's latency_percentile=).
    pub percentile: f64,
    /// Keep searching after settling, until the run's own end (fio's
    /// latency_run=1).
    pub keep_searching: bool,
}

/// What the worker does after a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Run the next window at this depth at once (the same one, a higher
    /// one, or depth 1 again after depth 1 failed).
    Go(u32),
    /// Wait for every I/O in flight to complete, then run the next window
    /// at this (lower) depth.
    Quiesce(u32),
    /// Settled at this depth: wait for every I/O in flight, then run one
    /// more window at it, the final one.
    Final(u32),
    /// The final window met the target too: the worker stops.
    Done,
    /// A percentile of 100 and an I/O over the target at depth 1: fio
    /// fails the job here; the worker stops.
    Failed,
}

/// The search's state (fio's `latency_qd`, `_low`, `_high`,
/// `latency_stable_count`, `latency_end_run`).
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    pub target: Target,
    /// The job's iodepth: the deepest the search may go.
    max: u32,
    /// The depth of the window running now.
    pub depth: u32,
    low: u32,
    high: u32,
    stable: u32,
    /// The settled depth's final window is running (or ran).
    pub final_window: bool,
}

impl Search {
    /// A search up to `iodepth`, at depth 1 (fio's `lat_target_init`).
    pub fn new(target: Target, iodepth: u32) -> Search {
        let max = iodepth.max(1);
        Search {
            target,
            max,
            depth: 1,
            low: 1,
            high: max,
            stable: 0,
            final_window: false,
        }
    }

    /// Whether a window of `ios` completions, `late` of them over the
    /// target, met it: fio's success rate, (ios - late) / ios in percent,
    /// at least the percentile. A window with no completion did not
    /// (fio's 0/0 is not a number, and so not at least anything).
    pub fn met(&self, ios: u64, late: u64) -> bool {
        ios > 0 && (ios - late.min(ios)) as f64 / ios as f64 * 100.0 >= self.target.percentile
    }

    /// Whether a percentile of 100 makes one late I/O end the window at
    /// once (fio's `lat_target_failed`).
    pub fn strict(&self) -> bool {
        self.target.percentile >= 100.0
    }

    /// The window ended with `ios` completions, `late` over the target:
    /// the next step (fio's `lat_target_check`).
    pub fn window_end(&mut self, ios: u64, late: u64) -> Next {
        if self.met(ios, late) {
            self.success()
        } else {
            self.failed()
        }
    }

    /// fio's `__lat_target_failed`: halfway down to the highest depth that
    /// met the target. At depth 1 there is nowhere lower: the search stays
    /// (fio keeps running at depth 1), or with a percentile of 100 fails.
    pub fn failed(&mut self) -> Next {
        if self.depth == 1 {
            return if self.strict() {
                Next::Failed
            } else {
                Next::Go(1)
            };
        }
        self.high = self.depth;
        if self.depth == self.low {
            self.low -= 1;
        }
        self.depth = (self.depth + self.low) / 2;
        self.stable = 0;
        Next::Quiesce(self.depth)
    }

    /// fio's `lat_target_success`.
    fn success(&mut self) -> Next {
        let was = self.depth;
        self.low = self.depth;
        if self.depth + 1 == self.high {
            // Settled one below a depth that failed: three met windows in
            // a row try one deeper (fio's "naive heuristic").
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.depth = if self.high != self.max {
            (self.depth + self.high) / 2
        } else {
            self.depth * 2
        };
        self.depth = self.depth.min(self.max);
        if self.target.keep_searching || self.depth != was {
            return Next::Go(self.depth);
        }
        if self.final_window {
            return Next::Done;
        }
        self.final_window = true;
        Next::Final(self.depth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(p: f64, depth: u32) -> Search {
        Search::new(
            Target {
                target_ns: 1000,
                window_ns: 1000,
                percentile: p,
                keep_searching: false,
            },
            depth,
        )
    }

    #[test]
    fn a_target_always_met_doubles_to_the_iodepth_then_runs_one_final_window() {
        let mut s = search(99.9, 128);
        let mut steps = vec![];
        loop {
            let n = s.window_end(100, 0);
            steps.push(n);
            if n == Next::Done {
                break;
            }
        }
        use Next::*;
        assert_eq!(
            steps,
            [
                Go(2),
                Go(4),
                Go(8),
                Go(16),
                Go(32),
                Go(64),
                Go(128),
                Final(128),
                Done
            ]
        );
    }

    #[test]
    fn a_depth_that_fails_is_bisected_toward_the_last_good_one() {
        // Depths up to 12 meet the target; 13 and deeper do not.
        let mut s = search(99.0, 64);
        let mut walked = vec![];
        for _ in 0..40 {
            let late = if s.depth > 12 { 50 } else { 0 };
            let n = s.window_end(100, late);
            walked.push(s.depth);
            if n == Next::Done {
                break;
            }
        }
        // 1 2 4 8 16(fails) -> 12 -> 14(fails) -> 13(fails) -> 12, which
        // met stays at 12 (halfway to 13): settled, so a final window at
        // 12, which met ends the search.
        assert_eq!(walked, [2, 4, 8, 16, 12, 14, 13, 12, 12, 12]);
        assert_eq!(s.depth, 12, "{walked:?}");
        assert!(s.final_window);
    }

    #[test]
    fn an_unmeetable_target_stays_at_depth_one_and_with_100_percent_fails() {
        let mut s = search(99.9, 32);
        assert_eq!(s.window_end(100, 100), Next::Go(1));
        assert_eq!(s.depth, 1);
        let mut s = search(100.0, 32);
        assert_eq!(s.failed(), Next::Failed);
    }

    #[test]
    fn a_window_meets_its_percentile_as_fio_counts_it() {
        let s = search(99.9, 8);
        assert!(s.met(1000, 1));
        assert!(!s.met(1000, 2));
        assert!(!s.met(0, 0), "no I/O is not a met window");
        assert!(search(100.0, 8).met(5, 0));
    }

    #[test]
    fn latency_run_keeps_searching_after_settling() {
        let mut s = search(50.0, 4);
        s.target.keep_searching = true;
        for _ in 0..10 {
            assert!(matches!(s.window_end(10, 0), Next::Go(_)));
        }
        assert_eq!(s.depth, 4);
    }
}
