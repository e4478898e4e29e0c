//! The merged fleet's text report.
use crate::analysis::histogram::LatencySummary;
use crate::base::error::Shown;
use crate::document::merge::MergedDocument;

/// The merged document as a table.
pub fn render(m: &MergedDocument) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let missing = if m.missing.is_empty() {
        String::new()
    } else {
        format!(" measured, {} missing (incomplete)", m.missing.len())
    };
    let _ = writeln!(
        out,
        "fleet of {} host(s){missing}: {} bs {}; MB/s = 10^6 B/s; latency from the merged histograms",
        m.hosts.len(),
        m.config.rw.name(),
        Shown(&m.config.bs)
    );
    let _ = writeln!(
        out,
        "{:<24} {:>10} {:>10} {:>9} {:>9} {:>9} {:>8}",
        "host", "MB/s", "IOPS", "p50", "p99", "p99.9", "window"
    );
    let lat = |l: &Option<LatencySummary>, f: fn(&LatencySummary) -> u64| {
        l.as_ref().map_or("-".into(), |l| {
            crate::base::units::fmt_latency_ns(f(l) as f64)
        })
    };
    for (i, h) in m.hosts.iter().enumerate() {
        // Hosts of one name (several runs on one machine) are told apart by their file.
        let label = m.host_label(i);
        let _ = writeln!(
            out,
            "{:<24} {:>10.1} {:>10.0} {:>9} {:>9} {:>9} {:>7.2}s",
            // A hostname is what a document says: one line, escaped.
            Shown(&label),
            h.bytes_per_sec / 1e6,
            h.iops,
            lat(&h.latency_ns, |l| l.p50),
            lat(&h.latency_ns, |l| l.p99),
            lat(&h.latency_ns, |l| l.p99_9),
            h.seconds
        );
    }
    let t = &m.total;
    let _ = writeln!(
        out,
        "{:<24} {:>10.1} {:>10.0} {:>9} {:>9} {:>9}   overlap {:.2}s, start skew {:.3}s",
        if m.is_concurrent() {
            "FLEET"
        } else {
            "FLEET, not concurrent"
        },
        t.bytes_per_sec / 1e6,
        t.iops,
        lat(&t.latency_ns, |l| l.p50),
        lat(&t.latency_ns, |l| l.p99),
        lat(&t.latency_ns, |l| l.p99_9),
        t.overlap_sec,
        t.start_skew_sec
    );
    out.push_str(&fleet_notes(m));
    for w in &m.warnings {
        let _ = writeln!(out, "warning: {}", Shown(&w.to_string()));
    }
    out
}

/// The hosts whose run failed or was cut short, the runs that sent no
/// document, and the launcher's preflight: what makes a fleet's figures
/// partial, the fleet incomplete or its clocks doubtful, for the text and
/// HTML reports.
pub fn fleet_notes(m: &MergedDocument) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    // A host's figures are not the whole story when its run failed or was
    // cut short: say so under the table, as a single run's report does.
    for (i, h) in m.hosts.iter().enumerate() {
        if h.errors > 0 {
            let _ = writeln!(
                out,
                "{:<24} {} I/O error(s): its figures count only the I/Os that succeeded",
                Shown(&m.host_label(i)),
                h.errors
            );
        }
        if h.interrupted {
            let _ = writeln!(
                out,
                "{:<24} interrupted: measured {:.2}s, not the whole run",
                Shown(&m.host_label(i)),
                h.seconds
            );
        }
    }
    for h in &m.missing {
        let _ = writeln!(out, "{:<24} missing: {}", Shown(&h.host), Shown(&h.reason));
    }
    if let Some(p) = &m.preflight {
        let worst = p
            .hosts
            .iter()
            .max_by(|a, b| a.skew_sec.abs().total_cmp(&b.skew_sec.abs()));
        let mut versions: Vec<&str> = p.hosts.iter().map(|h| h.version.as_str()).collect();
        versions.sort_unstable();
        versions.dedup();
        if let Some(w) = worst {
            // A ping brackets the clock reading; a one-way answer only
            // bounds it on one side (docs/json.md).
            let within = if w.method == "one-way" {
                format!(
                    "one-way: true skew up to {:.1}ms more",
                    w.uncertainty_sec * 1e3
                )
            } else {
                format!("+/- {:.1}ms", w.uncertainty_sec * 1e3)
            };
            let _ = writeln!(
                out,
                "preflight ({}): {} host(s), stripebench {}; largest clock skew {:+.1}ms ({}, {within}), bound {:.0}ms",
                Shown(&p.launcher),
                p.hosts.len(),
                Shown(&versions.join(", ")),
                w.skew_sec * 1e3,
                Shown(&w.host),
                p.max_skew_sec * 1e3
            );
        }
    }
    out
}
