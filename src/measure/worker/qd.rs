//! The worker's side of `--latency-target` (fio's latency_target=): the
//! most I/Os it keeps in flight, changed only at a window's end by the
//! search ([`crate::analysis::qd_search`]), and each window's record.
//!
//! In the hot loop this costs, per completion, one compare, two adds and
//! a histogram record (the window's own, for its percentile latency), and
//! per reap one clock comparison; a window's end (every
//! `--latency-window`, milliseconds at least) does the rest.

use std::time::Instant;

use crate::analysis::histogram::LatencyHistogram;
use crate::analysis::qd_search::{Next, Search, Target};

/// One window of the search.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowRecord {
    /// ns since the epoch when it started (after the quiesce before it).
    pub start_ns: u64,
    pub seconds: f64,
    /// The most I/Os in flight in it.
    pub depth: u32,
    /// I/Os that completed in it, and those over the target.
    pub ios: u64,
    pub late_ios: u64,
    /// The latency at the percentile (issue to completion); `None` when
    /// nothing completed.
    pub percentile_ns: Option<u64>,
    pub met: bool,
    /// The settled depth's final window (fio's figures are this one's).
    pub final_window: bool,
    /// Cut short by the run's end: not judged by the search (`met` says
    /// how it stood).
    pub partial: bool,
}

/// The search's outcome, in the worker's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOutcome {
    pub target: Target,
    /// The depth of the last whole window: the one the search settled
    /// on, or where the run's end found it.
    pub depth: u32,
    /// It settled and its final window met the target (the worker then
    /// stopped, unless `latency_run`).
    pub settled: bool,
    /// The last whole window met the target.
    pub met: bool,
    /// The search stopped the worker: settled (and its final window met
    /// the target), or, at a percentile of 100, an I/O over the target at
    /// depth 1 (where fio fails the job).
    pub stopped: bool,
    pub windows: Vec<WindowRecord>,
}

/// The search as the loop runs it.
pub(super) struct Searcher {
    search: Search,
    epoch: Instant,
    /// The ramp's end: no window is judged before it.
    not_before: Instant,
    start: Instant,
    ios: u64,
    late: u64,
    hist: LatencyHistogram,
    /// Waiting for the I/Os in flight to complete before a window at
    /// this depth (and whether it is the final one).
    draining: Option<u32>,
    /// The most I/Os the loop may have in flight now.
    pub limit: usize,
    /// The search ended the worker's I/O.
    pub done: bool,
    settled: bool,
    windows: Vec<WindowRecord>,
}

impl Searcher {
    /// A search up to the engine's depth, its first window (depth 1)
    /// starting at `now`.
    pub fn new(
        target: Target,
        iodepth: usize,
        epoch: Instant,
        now: Instant,
        ramp_ns: u64,
    ) -> Searcher {
        let search = Search::new(target, iodepth as u32);
        Searcher {
            not_before: epoch + std::time::Duration::from_nanos(ramp_ns),
            limit: search.depth as usize,
            search,
            epoch,
            start: now,
            ios: 0,
            late: 0,
            hist: LatencyHistogram::new(),
            draining: None,
            done: false,
            settled: false,
            windows: Vec::with_capacity(64),
        }
    }

    /// One completion, `ns` from issue to completion.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.ios += 1;
        self.late += u64::from(ns > self.search.target.target_ns);
        self.hist.record(ns);
    }

    /// After a reap, at `now`, `in_flight` I/Os out: a window that is over
    /// (or, at a percentile of 100, has a late I/O) is judged, and a
    /// quiesce that is over opens the next window.
    #[inline]
    pub fn after_reap(&mut self, now: Instant, in_flight: usize) {
        if self.done {
            return;
        }
        if self.draining.is_some() {
            if in_flight == 0 {
                self.open(now);
            }
            return;
        }
        let cut = self.search.strict() && self.late > 0;
        // fio judges no window in its ramp (ramp_time): the first one
        // holds the ramp's I/Os too.
        let short =
            (now.duration_since(self.start).as_nanos() as u64) < self.search.target.window_ns;
        if !cut && (short || now < self.not_before) {
            return;
        }
        self.close(now, in_flight, cut);
    }

    /// The window's end: its record, and the search's next step.
    #[cold]
    fn close(&mut self, now: Instant, in_flight: usize, cut: bool) {
        let met = !cut && self.search.met(self.ios, self.late);
        self.push(now, met, false);
        let next = if cut {
            self.search.failed()
        } else {
            self.search.window_end(self.ios, self.late)
        };
        match next {
            Next::Go(d) => {
                self.draining = Some(d);
                self.open(now);
            }
            Next::Quiesce(d) | Next::Final(d) => {
                self.draining = Some(d);
                self.limit = 0;
                if in_flight == 0 {
                    self.open(now);
                }
            }
            Next::Done => {
                // The window that settled it: fio's report is of this one.
                if let Some(w) = self.windows.last_mut() {
                    w.final_window = true;
                }
                self.settled = true;
                self.end();
            }
            Next::Failed => self.end(),
        }
    }

    fn end(&mut self) {
        self.done = true;
        self.limit = 0;
    }

    /// The next window opens at `now` at the depth waited for.
    fn open(&mut self, now: Instant) {
        let d = self.draining.take().unwrap_or(self.search.depth);
        self.limit = d as usize;
        self.start = now;
        self.ios = 0;
        self.late = 0;
        self.hist.reset();
    }

    fn push(&mut self, now: Instant, met: bool, partial: bool) {
        let p = self.search.target.percentile / 100.0;
        self.windows.push(WindowRecord {
            start_ns: self.start.duration_since(self.epoch).as_nanos() as u64,
            seconds: now.duration_since(self.start).as_secs_f64(),
            depth: self.limit as u32,
            ios: self.ios,
            late_ios: self.late,
            percentile_ns: self.hist.quantile(p),
            met,
            final_window: false,
            partial,
        });
    }

    /// After the loop: the windows, and a last partial one if it counted
    /// anything (the run's end cut it short; not judged).
    pub fn finish(mut self, now: Instant) -> SearchOutcome {
        let met_last = self.windows.last().is_some_and(|w| w.met);
        let depth = self.windows.last().map_or(self.search.depth, |w| w.depth);
        if self.ios > 0 && !self.done && self.draining.is_none() {
            let met = self.search.met(self.ios, self.late);
            self.push(now, met, true);
        }
        SearchOutcome {
            target: self.search.target,
            depth,
            settled: self.settled,
            met: met_last,
            stopped: self.done,
            windows: self.windows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    // Seen in the first run on a loop device: the completions still in
    // flight after the search settled judged its last window again (a
    // second "final" window at depth 0). The window closes once; the
    // quiesce holds the depth at 0 until nothing is in flight.
    #[test]
    fn the_search_settles_once_and_quiesces_between_depths() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let target = Target {
            target_ns: 1_000_000,
            window_ns: 10_000_000,
            percentile: 99.0,
            keep_searching: false,
        };
        let mut q = Searcher::new(target, 4, t0, t0, 0);
        assert_eq!(q.limit, 1);
        let mut now = 0;
        for want in [2, 4] {
            q.record(1000);
            now += 11;
            q.after_reap(ms(now), 1);
            assert_eq!(q.limit, want);
        }
        // Met at the iodepth: the final window waits for the 4 in flight.
        q.record(1000);
        now += 11;
        q.after_reap(ms(now), 3);
        assert_eq!(q.limit, 0, "quiescing");
        q.after_reap(ms(now + 1), 0);
        assert_eq!(q.limit, 4, "the final window at the depth found");
        q.record(1000);
        now += 12;
        q.after_reap(ms(now), 4);
        assert!(q.done);
        q.after_reap(ms(now + 20), 2);
        q.after_reap(ms(now + 40), 0);
        let out = q.finish(ms(now + 50));
        let depths: Vec<u32> = out.windows.iter().map(|w| w.depth).collect();
        assert_eq!(depths, [1, 2, 4, 4]);
        assert_eq!(out.windows.iter().filter(|w| w.final_window).count(), 1);
        assert!(out.windows[3].final_window && out.settled && out.stopped && out.met);
        assert_eq!(out.depth, 4);
    }
}
