//! The resync beside a run, in words: for each md array that resynced while
//! the run ran, its rate over the window and the whole resync's time at
//! that rate (the run's text report and the sweep's table).

use crate::base::error::show_text;
use crate::base::units::fmt_bytes;
use crate::document::run::ResyncDoc;

/// A span of seconds as a reader takes it in: "42 s", "7.5 min", "3.2 h",
/// "4.1 days".
pub fn fmt_span(secs: f64) -> String {
    if secs < 90.0 {
        format!("{secs:.0} s")
    } else if secs < 5400.0 {
        format!("{:.1} min", secs / 60.0)
    } else if secs < 172_800.0 {
        format!("{:.1} h", secs / 3600.0)
    } else {
        format!("{:.1} days", secs / 86400.0)
    }
}

/// A limit as md shows it: "2000 KB/s (local)".
fn limit(l: &Option<crate::device::topology::SpeedLimit>) -> String {
    l.as_ref().map_or("?".into(), |l| {
        format!("{} KB/s ({})", l.kb_per_sec, show_text(&l.source))
    })
}

/// Whether a sweep's parameters are md's resync limits: its table then
/// gives each point's resync rate and rebuild time as columns.
pub fn swept(names: &[&str]) -> bool {
    names
        .iter()
        .any(|n| *n == "sync_speed_min" || *n == "sync_speed_max")
}

/// A run's resync over all its arrays, as a sweep's point shows it.
pub struct Totals {
    /// The arrays' rates summed, bytes per second per member device.
    pub bytes_per_sec: f64,
    /// The longest whole rebuild at its rate; None when none moved.
    pub full_seconds: Option<f64>,
    /// One ended within the run: its rate, and so its time, a bound.
    pub finished: bool,
}

/// The totals of a run's resync; None when none ran.
pub fn totals(resync: &[ResyncDoc]) -> Option<Totals> {
    (!resync.is_empty()).then(|| Totals {
        bytes_per_sec: resync.iter().map(|r| r.bytes_per_sec).sum(),
        full_seconds: resync
            .iter()
            .filter_map(|r| r.full_seconds)
            .max_by(f64::total_cmp),
        finished: resync.iter().any(|r| r.finished),
    })
}

/// A run's resync in two cells: the arrays' rates summed (MB/s per member
/// device) and the longest whole rebuild at its rate ("done" when one
/// ended in the run, "-" when none ran or none moved).
pub fn cells(resync: &[ResyncDoc]) -> [String; 2] {
    let Some(t) = totals(resync) else {
        return ["-".into(), "-".into()];
    };
    let time = if t.finished {
        "done".to_string()
    } else {
        t.full_seconds.map_or("-".into(), fmt_span)
    };
    [format!("{:.2}", t.bytes_per_sec / 1e6), time]
}

/// One line per array: what its resync did while the run ran.
pub fn lines(resync: &[ResyncDoc]) -> String {
    let mut out = String::new();
    for r in resync {
        let pct = |b: u64| 100.0 * b as f64 / r.total_bytes.max(1) as f64;
        let time = match (r.full_seconds, r.finished) {
            (_, true) => "; it finished during the run, so the rate is a floor".to_string(),
            (Some(full), false) => format!(
                "; the whole {} takes {} at that rate, {} left",
                show_text(&r.action),
                fmt_span(full),
                fmt_span(r.remaining_seconds.unwrap_or(0.0))
            ),
            (None, false) => "; it made no progress over the window".into(),
        };
        // md paces a resync by its mean speed since a mark up to 30 s back
        // (md_do_sync's SYNC_MARKS), so after slower seconds it runs above
        // a limit just raised, and after faster ones below a limit just lowered.
        let above = r
            .speed_max
            .as_ref()
            .is_some_and(|m| !r.finished && r.bytes_per_sec > m.kb_per_sec as f64 * 1024.0);
        let time = if above {
            format!("{time}; above sync_speed_max: md paces a resync by its mean speed over up to the last 30 s, so after slower seconds it runs faster than the limit for a while (give --ramp 30s to measure the limit's steady rate)")
        } else {
            time
        };
        out.push_str(&format!(
            "resync: {} {} ran beside the workload: {:.2} MB/s per member device ({:.1}% to {:.1}% of {} in {:.1} s; sync_speed_min {}, sync_speed_max {}){time}; the figures above are the users' under it, not the healthy array's\n",
            show_text(&r.array),
            show_text(&r.action),
            r.bytes_per_sec / 1e6,
            pct(r.done_start_bytes),
            pct(r.done_end_bytes),
            fmt_bytes(r.total_bytes),
            r.seconds,
            limit(&r.speed_min),
            limit(&r.speed_max),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_sum_the_rates_and_give_the_longest_rebuild() {
        assert_eq!(cells(&[]), ["-", "-"]);
        let r = |rate: f64, full: Option<f64>, finished| ResyncDoc {
            array: "md0".into(),
            action: "recovery".into(),
            done_start_bytes: 0,
            done_end_bytes: 0,
            total_bytes: 1,
            seconds: 1.0,
            bytes_per_sec: rate,
            full_seconds: full,
            remaining_seconds: None,
            finished,
            speed_min: None,
            speed_max: None,
        };
        assert_eq!(
            cells(&[r(1e6, Some(120.0), false), r(2e6, Some(7200.0), false)]),
            ["3.00", "2.0 h"]
        );
        assert_eq!(cells(&[r(1e6, Some(120.0), true)])[1], "done");
        assert_eq!(cells(&[r(0.0, None, false)]), ["0.00", "-"]);
        assert!(swept(&["bs", "sync_speed_max"]) && !swept(&["bs"]));
    }

    #[test]
    fn spans_read_in_the_unit_that_fits() {
        assert_eq!(fmt_span(42.4), "42 s");
        assert_eq!(fmt_span(450.0), "7.5 min");
        assert_eq!(fmt_span(3.2 * 3600.0), "3.2 h");
        assert_eq!(fmt_span(4.0 * 86400.0), "4.0 days");
    }

    #[test]
    fn a_line_says_the_rate_the_rebuilds_time_and_escapes_what_sysfs_gave() {
        let r = ResyncDoc {
            array: "md0\n".into(),
            action: "recovery".into(),
            done_start_bytes: 10 << 20,
            done_end_bytes: 20 << 20,
            total_bytes: 100 << 20,
            seconds: 5.0,
            bytes_per_sec: (2 << 20) as f64,
            full_seconds: Some(50.0),
            remaining_seconds: Some(40.0),
            finished: false,
            speed_min: None,
            speed_max: Some(crate::device::topology::SpeedLimit {
                kb_per_sec: 2000,
                source: "local".into(),
            }),
        };
        let l = lines(&[r]);
        assert_eq!(l.lines().count(), 1, "{l}");
        assert!(l.starts_with("resync: md0\\u{a} recovery ran beside the workload: 2.10 MB/s per member device (10.0% to 20.0% of 100.0 MiB in 5.0 s; sync_speed_min ?, sync_speed_max 2000 KB/s (local)); the whole recovery takes 50 s at that rate, 40 s left"), "{l}");
    }
}
