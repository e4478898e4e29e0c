//! The `history` command's text: the disks known (each one's last result
//! and its trend), one disk's series, and the drift and fail-slow lines.

use crate::base::error::show_text;
use crate::base::units::fmt_latency_ns;
use crate::document::history::{date_time, DiskDoc, HistoryDocument, SeriesDoc};

/// The text `history` prints.
pub fn render(doc: &HistoryDocument, detail: bool) -> String {
    let mut out = String::new();
    if detail {
        for d in &doc.disks {
            disk_detail(&mut out, d);
        }
    } else {
        list(&mut out, doc);
    }
    if !doc.drift.is_empty() {
        out.push_str("\nDRIFT (recent runs against the disk's own baseline)\n");
        for d in &doc.drift {
            out.push_str(&format!("  {}\n", show_text(&d.line)));
        }
    }
    if !doc.fail_slow.is_empty() {
        out.push_str("\nFAIL-SLOW (p99 above the bound of its peers' fit: same model, firmware and workload)\n");
        for f in &doc.fail_slow {
            out.push_str(&format!("  {}\n", show_text(&f.line)));
        }
    }
    if doc.drift.is_empty() && doc.fail_slow.is_empty() && !doc.disks.is_empty() {
        out.push_str("\nno drift and no fail-slow disk\n");
    }
    if doc.drift_tested == 0 && !doc.disks.is_empty() {
        out.push_str("note: no series has runs both in its baseline and after it: drift judged nothing (see --baseline, --baseline-until, --recent)\n");
    }
    for u in &doc.unfitted {
        out.push_str(&format!(
            "note: too few peers to judge against ({}): fail-slow needs 4 disks of one model, firmware and workload\n",
            show_text(u)
        ));
    }
    out
}

fn list(out: &mut String, doc: &HistoryDocument) {
    out.push_str(&format!(
        "{} disk(s), {} result(s) in {}\n\n",
        doc.disks.len(),
        doc.results,
        show_text(&doc.database)
    ));
    let w = doc
        .disks
        .iter()
        .map(|d| show_text(&d.key).chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 48);
    out.push_str(&format!(
        "{:<w$} {:<12} {:<18} {:>5} {:>9} {:>10} {:>8} {:>8}  {}\n",
        "DISK", "NOW", "MODEL", "RUNS", "MB/s", "p99", "MB/s Δ", "p99 Δ", "FLAGS"
    ));
    for d in &doc.disks {
        let m = d.main.as_ref();
        let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:+.0}%"));
        out.push_str(&format!(
            "{:<w$} {:<12} {:<18} {:>5} {:>9} {:>10} {:>8} {:>8}  {}\n",
            cut(&d.key, w),
            cut(&d.device, 12),
            cut(d.model.as_deref().unwrap_or("-"), 18),
            d.results,
            m.map_or("-".into(), |m| format!("{:.1}", m.last.mb_per_sec)),
            m.and_then(|m| m.last.p99_ns)
                .map_or("-".into(), |p| fmt_latency_ns(p as f64)),
            pct(m.and_then(|m| m.rate_change_pct)),
            pct(m.and_then(|m| m.p99_change_pct)),
            d.flags.join(",")
        ));
    }
}

fn disk_detail(out: &mut String, d: &DiskDoc) {
    out.push_str(&format!("{} ({})\n", show_text(&d.key), d.identity));
    let kv = [
        ("wwn", d.wwn.as_deref()),
        ("serial", d.serial.as_deref()),
        ("model", d.model.as_deref()),
        ("firmware", d.firmware.as_deref()),
    ];
    for (k, v) in kv {
        if let Some(v) = v {
            out.push_str(&format!("  {k}: {}\n", show_text(v)));
        }
    }
    out.push_str(&format!(
        "  now: {} on {}, {} result(s)\n",
        show_text(&d.device),
        show_text(&d.host),
        d.results
    ));
    for s in &d.series {
        series(out, s);
    }
    out.push('\n');
}

fn series(out: &mut String, s: &SeriesDoc) {
    out.push_str(&format!(
        "\n  {} [{}], {} run(s)\n",
        show_text(&s.label),
        show_text(&s.context),
        s.runs
    ));
    out.push_str(&format!(
        "    {:<16} {:<10} {:<14} {:>9} {:>9} {:>8} {:>10} {:>10}\n",
        "TIME (UTC)", "HOST", "DEVICE", "MB/s", "IOPS", "I/Os", "p50", "p99"
    ));
    let lat = |v: Option<u64>| v.map_or("-".into(), |v| fmt_latency_ns(v as f64));
    for p in &s.points {
        out.push_str(&format!(
            "    {:<16} {:<10} {:<14} {:>9.1} {:>9.0} {:>8} {:>10} {:>10}{}\n",
            date_time(p.time),
            cut(&p.host, 10),
            cut(&p.device, 14),
            p.mb_per_sec,
            p.iops,
            p.ios.map_or("-".into(), |n| n.to_string()),
            lat(p.p50_ns),
            lat(p.p99_ns),
            p.not_device_speed
                .as_deref()
                .map_or(String::new(), |w| format!(
                    "  (not device speed: {})",
                    cut(w, 60)
                ))
        ));
    }
    let sides = [
        ("baseline", &s.baseline_latency),
        ("recent", &s.recent_latency),
    ];
    for (side, m) in sides {
        if let Some(m) = m {
            out.push_str(&format!(
                "    {side:<8} {} run(s), {} I/Os merged: p50 {}, p99 {}, p99.9 {}\n",
                m.runs,
                m.ios,
                fmt_latency_ns(m.p50_ns as f64),
                fmt_latency_ns(m.p99_ns as f64),
                fmt_latency_ns(m.p999_ns as f64)
            ));
        }
    }
}

/// `s` escaped and cut to `n` characters (marked `~`).
fn cut(s: &str, n: usize) -> String {
    let s = show_text(s);
    if s.chars().count() > n {
        let mut c: String = s.chars().take(n - 1).collect();
        c.push('~');
        c
    } else {
        s.into_owned()
    }
}
