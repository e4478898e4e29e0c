//! Live progress on stderr, only when stderr is a terminal: the aggregate
//! MB/s of the window so far and the time left.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(enabled: bool) -> Progress {
        if !enabled || !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(250));
        Progress { bar: Some(bar) }
    }

    /// `elapsed` and `left` are seconds into and left of the whole run; `ramp` the ramp length.
    pub fn update(&self, window_bytes: u64, elapsed: f64, ramp: f64, left: f64) {
        let Some(bar) = &self.bar else { return };
        let msg = if elapsed < ramp {
            format!(
                "ramp: {:.1}s until the window opens, {left:.1}s left",
                ramp - elapsed
            )
        } else {
            let w = elapsed - ramp;
            let mbps = if w > 0.0 {
                window_bytes as f64 / w / 1e6
            } else {
                0.0
            };
            format!("{mbps:.1} MB/s (10^6 B/s) over {w:.1}s, {left:.1}s left")
        };
        bar.set_message(msg);
    }

    pub fn message(&self, msg: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(msg.to_string());
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
