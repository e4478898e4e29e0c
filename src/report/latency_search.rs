//! The lines under the table for `--latency-target` (fio's
//! latency_target=): per worker, the depth its search found, whether its
//! target was met, and each window's depth, I/Os and latency at the
//! percentile against the target.

use std::fmt::Write;

use crate::base::units::fmt_latency_ns;
use crate::document::run::RunDocument;

/// Nothing without `--latency-target`.
pub fn lines(doc: &RunDocument) -> String {
    let mut out = String::new();
    for w in &doc.workers {
        let Some(s) = &w.latency_search else { continue };
        let target = fmt_latency_ns(s.target_ns as f64);
        let p = s.percentile;
        let verdict = match (s.settled, s.met) {
            (true, _) => format!("settled at depth {}: its final window met it", s.depth),
            (false, true) => format!(
                "at depth {} when the run ended, its last window met it (not settled)",
                s.depth
            ),
            (false, false) if s.stopped => "not met even at depth 1: an I/O over the target stopped the worker (percentile 100), as fio fails the job".to_string(),
            (false, false) if s.depth == 1 => "not met even at depth 1".to_string(),
            (false, false) => format!(
                "at depth {} when the run ended, its last window did not meet it",
                s.depth
            ),
        };
        let _ = writeln!(
            out,
            "latency target, worker {}: p{p} within {target} over {} windows: {verdict} ({} window(s))",
            w.id,
            fmt_latency_ns(s.window_ns as f64),
            s.windows.len()
        );
        for (i, x) in s.windows.iter().enumerate() {
            let at = x
                .percentile_latency_ns
                .map_or("-".into(), |n| fmt_latency_ns(n as f64));
            let how = match (x.met, x.partial) {
                (_, true) => "cut short by the run's end",
                (true, _) => "met",
                (false, _) => "missed",
            };
            let _ = writeln!(
                out,
                "  window {:>3} at {:>7.2}s  depth {:>4}  {:>9} I/Os  {:>7} late  p{p} {:>9} vs {target}  {how}{}",
                i + 1,
                x.start_sec,
                x.depth,
                x.ios,
                x.late_ios,
                at,
                if x.final_window { " (final: fio reports this window)" } else { "" }
            );
        }
    }
    out
}
