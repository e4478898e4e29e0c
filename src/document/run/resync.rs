//! A run's `resync`: each md array at or under its targets that resynced
//! (recovered, checked, reshaped) while it ran, how far the resync got
//! over the window, its rate, and how long the whole of it takes at that
//! rate: what the users' figures beside it cost the rebuild.

use serde::{Deserialize, Serialize};

use crate::device::resync::ResyncWindow;
use crate::device::topology::SpeedLimit;
use crate::document::facts::{Opt, SpeedLimitDef};

/// One array's resync over a run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ResyncDoc {
    /// Its kernel name (`md0`).
    pub array: String,
    /// `recovery`, `resync`, `check`, `repair` or `reshape`.
    pub action: String,
    /// Bytes per member device done when the window opened and when the
    /// run ended (from /proc/mdstat's progress line), and in all.
    pub done_start_bytes: u64,
    pub done_end_bytes: u64,
    pub total_bytes: u64,
    /// Between the two readings.
    pub seconds: f64,
    /// (end - start) / seconds: bytes per member device per second, as md
    /// counts its speed.
    pub bytes_per_sec: f64,
    /// The whole resync's time at that rate (total / rate): the figure to
    /// set against the users' latency; null when it made no progress.
    pub full_seconds: Option<f64>,
    /// What was left when the run ended, at that rate.
    pub remaining_seconds: Option<f64>,
    /// It ended before the run did: the rate is a floor (it was done at
    /// some moment in the window).
    pub finished: bool,
    /// `md/sync_speed_min` and `_max` when the window opened (KB/s).
    #[serde(with = "Opt::<SpeedLimitDef>")]
    pub speed_min: Option<SpeedLimit>,
    #[serde(with = "Opt::<SpeedLimitDef>")]
    pub speed_max: Option<SpeedLimit>,
}

impl ResyncDoc {
    pub fn of(w: &ResyncWindow) -> ResyncDoc {
        let moved = w.done_end_bytes.saturating_sub(w.done_start_bytes);
        let bytes_per_sec = if w.seconds > 0.0 {
            moved as f64 / w.seconds
        } else {
            0.0
        };
        let at_rate = |bytes: u64| (bytes_per_sec > 0.0).then(|| bytes as f64 / bytes_per_sec);
        ResyncDoc {
            array: w.array.clone(),
            action: w.action.clone(),
            done_start_bytes: w.done_start_bytes,
            done_end_bytes: w.done_end_bytes,
            total_bytes: w.total_bytes,
            seconds: w.seconds,
            bytes_per_sec,
            full_seconds: at_rate(w.total_bytes),
            remaining_seconds: at_rate(w.total_bytes.saturating_sub(w.done_end_bytes)),
            finished: w.finished,
            speed_min: w.speed_min.clone(),
            speed_max: w.speed_max.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_and_the_rebuilds_time_come_from_the_windows_progress() {
        let w = ResyncWindow {
            array: "md0".into(),
            action: "recovery".into(),
            done_start_bytes: 8 << 20,
            done_end_bytes: 18 << 20,
            total_bytes: 100 << 20,
            seconds: 5.0,
            finished: false,
            speed_min: None,
            speed_max: Some(SpeedLimit {
                kb_per_sec: 2000,
                source: "local".into(),
            }),
        };
        let d = ResyncDoc::of(&w);
        assert_eq!(d.bytes_per_sec, (10 << 20) as f64 / 5.0);
        assert_eq!(d.full_seconds, Some(50.0));
        assert_eq!(d.remaining_seconds, Some(41.0));
        let still = ResyncDoc::of(&ResyncWindow {
            done_end_bytes: 8 << 20,
            ..w
        });
        assert_eq!((still.bytes_per_sec, still.full_seconds), (0.0, None));
        let j = serde_json::to_value(&d).unwrap();
        assert_eq!(j["speed_max"]["kb_per_sec"], 2000);
        assert_eq!(serde_json::from_value::<ResyncDoc>(j).unwrap(), d);
    }
}
