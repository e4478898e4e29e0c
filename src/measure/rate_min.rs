//! `--rate-min`/`--rate-iops-min` (fio's `rate_min=`, `rate_iops_min=`)
//! while the run goes: each worker's line of each interval, from the live
//! collector (no work on the I/O path), is judged by
//! [`crate::analysis::rate_min`], each direction apart in a mixed pattern
//! as fio judges each direction; the first cycle below the minimum ends the
//! window (as `--steady` does), marked so that the run reports it and
//! exits 1. It sits in front of the run's live sink (or alone) and hands
//! every line on.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::analysis::rate_min::{Below, Cycles};
use crate::measure::config::RateMinConfig;
use crate::measure::control::RunControl;
use crate::measure::live::{LiveKind, LiveLine, Watch};

/// The cycle that fell below the minimum: whose, and its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct RateMinOutcome {
    pub worker: usize,
    /// "read" or "write" in a mixed pattern; `None` otherwise.
    pub direction: Option<&'static str>,
    pub below: Below,
}

/// The watch in front of the run's sink: judges each worker line.
pub struct RateMinSink {
    control: Arc<RunControl>,
    cfg: RateMinConfig,
    /// Per (worker, direction: 0 the whole or reads, 1 writes).
    cycles: BTreeMap<(usize, usize), Cycles>,
    outcome: Arc<Mutex<Option<RateMinOutcome>>>,
}

impl RateMinSink {
    pub fn new(
        control: Arc<RunControl>,
        cfg: RateMinConfig,
        outcome: Arc<Mutex<Option<RateMinOutcome>>>,
    ) -> RateMinSink {
        RateMinSink {
            control,
            cfg,
            cycles: BTreeMap::new(),
            outcome,
        }
    }

    fn judge(&mut self, l: &LiveLine<'_>) -> Option<RateMinOutcome> {
        let worker = l.worker?;
        let end = l.t as f64 * l.interval_sec + l.seconds;
        let parts: Vec<(usize, Option<&'static str>, u64, u64)> = match &l.dirs {
            Some([r, w]) => vec![
                (0, Some("read"), r.bytes, r.ios),
                (1, Some("write"), w.bytes, w.ios),
            ],
            None => vec![(0, None, l.bytes, l.ios)],
        };
        let (min, cycle) = (self.cfg.min, self.cfg.cycle.as_secs_f64());
        for (d, direction, bytes, ios) in parts {
            let c = self
                .cycles
                .entry((worker, d))
                .or_insert_with(|| Cycles::new(min, cycle));
            if let Some(below) = c.interval(end, bytes, ios) {
                return Some(RateMinOutcome {
                    worker,
                    direction,
                    below,
                });
            }
        }
        None
    }
}

impl Watch for RateMinSink {
    fn see(&mut self, lines: &[LiveLine<'_>]) {
        let done = self
            .outcome
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some();
        if done {
            return;
        }
        let first = lines
            .iter()
            .filter(|l| l.kind == LiveKind::Worker)
            .find_map(|l| self.judge(l));
        if let Some(o) = first {
            *self.outcome.lock().unwrap_or_else(|e| e.into_inner()) = Some(o);
            self.control.end_below_min();
        }
    }
}
