//! `--steady` (fio's `steadystate=`) while the run goes: the live
//! collector's total line of each interval is judged by
//! [`crate::analysis::steady`], and the first interval the rolling window
//! is steady ends the window (the deadline lowered to now, as an interrupt
//! would, but not marked interrupted). It sits in front of the run's live
//! sink (or alone, with no --live or --metrics) and hands every line on.

use std::sync::{Arc, Mutex};

use crate::analysis::steady::{Figure, Judged, Window};
use crate::measure::config::SteadyConfig;
use crate::measure::control::RunControl;
use crate::measure::live::{LiveKind, LiveLine, Watch};

/// What the judging saw: whether the run was steady and when, and the
/// window's figures at its last judgement (or as far as it filled).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SteadyOutcome {
    pub attained: bool,
    /// Seconds into the window at the end of the interval that was steady.
    pub at_sec: Option<f64>,
    /// The last judgement, once the window was full.
    pub last: Option<(f64, f64)>,
    /// The figures of the window at its last judgement, oldest first.
    pub values: Vec<f64>,
    /// Intervals judged (each after the window was full).
    pub judged: u64,
}

/// The watch in front of the run's sink: judges each total line.
pub struct SteadySink {
    control: Arc<RunControl>,
    cfg: SteadyConfig,
    window: Window,
    outcome: Arc<Mutex<SteadyOutcome>>,
}

impl SteadySink {
    /// Ending `control`'s window when steady; `outcome` is read after
    /// the run.
    pub fn new(
        control: Arc<RunControl>,
        cfg: SteadyConfig,
        outcome: Arc<Mutex<SteadyOutcome>>,
    ) -> SteadySink {
        SteadySink {
            control,
            window: Window::new(cfg.criterion, cfg.intervals()),
            cfg,
            outcome,
        }
    }

    /// One interval's figure of the run as a whole, as fio collects it:
    /// I/Os or bytes per second over the interval, or the mean latency.
    fn figure(&self, l: &LiveLine<'_>) -> Option<f64> {
        let secs = l.seconds;
        if secs <= 0.0 {
            return None;
        }
        Some(match self.cfg.criterion.figure {
            Figure::Iops => l.ios as f64 / secs,
            Figure::Bw => l.bytes as f64 / secs,
            Figure::Lat => {
                let h = l.hist?;
                h.sum_ns() / h.len().max(1) as f64
            }
        })
    }

    fn judge(&mut self, l: &LiveLine<'_>) {
        // Only whole intervals past --steady-ramp: the last one, cut short
        // by the window's end, is not a figure of the same kind.
        let start = l.t as f64 * l.interval_sec;
        if l.late || l.seconds + 1e-9 < l.interval_sec || start + 1e-9 < self.cfg.ramp.as_secs_f64()
        {
            return;
        }
        let Some(x) = self.figure(l) else { return };
        let judged = self.window.push(x);
        let mut o = self.outcome.lock().unwrap_or_else(|e| e.into_inner());
        if o.attained {
            return;
        }
        if let Some(Judged {
            value,
            mean,
            steady,
        }) = judged
        {
            o.judged += 1;
            o.last = Some((value, mean));
            o.values = self.window.values();
            if steady {
                o.attained = true;
                o.at_sec = Some(start + l.seconds);
                drop(o);
                self.control.end_now();
            }
        }
    }
}

impl Watch for SteadySink {
    fn see(&mut self, lines: &[LiveLine<'_>]) {
        if let Some(total) = lines.iter().find(|l| l.kind == LiveKind::Total) {
            self.judge(total);
        }
    }
}
