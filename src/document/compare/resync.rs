//! What a resync took from the comparison: while md recovers (or resyncs,
//! checks, reshapes) an array, its own reads and writes land on the
//! members beside compare's, so each member's counters hold more than
//! compare read. These notes give, from the all-members-at-once phase,
//! each member's counters against compare's bytes, and, from the volume's
//! phases, the resync's rate over each.

use super::kind::PhaseKind;
use super::phase::Phase;
use crate::base::units::fmt_bytes;

/// The notes, empty when no resync ran (none was seen by topology, and no
/// phase's run saw one).
pub fn notes(all: &[&Phase], resyncing: bool) -> Vec<String> {
    let any_run = all.iter().any(|p| !p.document.resync.is_empty());
    if !resyncing && !any_run {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Some(t) = all
        .iter()
        .find(|p| matches!(p.kind, PhaseKind::Together) && p.repeat <= 1)
    {
        let mut parts = Vec::new();
        let (mut dev_all, mut app_all) = (0u64, 0u64);
        for tg in &t.document.targets {
            let Some(d) = tg.device.as_ref().filter(|d| d.stats && !d.shared) else {
                continue;
            };
            let dev = d.read_bytes + d.write_bytes;
            let app = d.app_read_bytes + d.app_write_bytes;
            dev_all += dev;
            app_all += app;
            let other = dev.saturating_sub(app);
            parts.push(format!(
                "{} {} read and {} written against our {} ({:.0}% not ours)",
                tg.path,
                fmt_bytes(d.read_bytes),
                fmt_bytes(d.write_bytes),
                fmt_bytes(app),
                100.0 * other as f64 / dev.max(1) as f64
            ));
        }
        if !parts.is_empty() {
            out.push(format!(
                "the resync's share of the members' I/O while they were read at once, by their own counters: {:.0}% of {} ({}); what is not ours is the resync's (or another process's)",
                100.0 * dev_all.saturating_sub(app_all) as f64 / dev_all.max(1) as f64,
                fmt_bytes(dev_all),
                parts.join("; ")
            ));
        }
    }
    for p in all.iter().filter(|p| p.kind.on_volume()) {
        for r in &p.document.resync {
            out.push(format!(
                "during phase {}: {} {} ran at {:.2} MB/s per member device{}",
                p.kind,
                crate::base::error::show_text(&r.array),
                crate::base::error::show_text(&r.action),
                r.bytes_per_sec / 1e6,
                match (r.finished, r.full_seconds) {
                    (true, _) => " and finished within it".to_string(),
                    (false, Some(s)) => format!(" (the whole of it: {s:.0} s at that rate)"),
                    (false, None) => ", no progress".to_string(),
                }
            ));
        }
    }
    out
}
