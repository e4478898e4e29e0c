//! `advise`'s report as text: the volume and its state first, then what
//! ran and what was skipped (with why), then the findings worst first,
//! each with what was measured, what it means, the command that fixes it,
//! what makes the fix persist and the before/after figures.

use crate::base::units::mb_per_sec;
use crate::document::advise::{FindingsDocument, Severity};

/// The whole report.
pub fn render(doc: &FindingsDocument) -> String {
    let mut s = String::new();
    let top = &doc.topology.root;
    let what = top
        .geometry()
        .map(|g| g.describe())
        .unwrap_or_else(|| top.kind.clone());
    s += &format!("stripebench advise {}: {} ({what})\n", doc.volume, top.name);
    if doc.state.is_empty() {
        s += "state: no md array to read a state from\n";
    }
    for line in &doc.state {
        s += &format!("state: {line}\n");
    }
    s += &format!(
        "battery: {:.0} s of a {:.0} s budget{}{}\n",
        doc.elapsed_sec,
        doc.budget_sec,
        if doc.quick {
            " (--quick: nothing measured)"
        } else {
            ""
        },
        if doc.interrupted {
            "; INTERRUPTED: the checks after the signal did not run"
        } else {
            ""
        }
    );
    for c in &doc.checks {
        s += &format!("  {:<8} {:<15} {}\n", c.status, c.id, c.detail);
    }
    if !doc.measurements.is_empty() {
        s += "measured:\n";
        for m in &doc.measurements {
            s += &format!(
                "  {:<15} {:<22} {:>9.1} MB/s over {:.1} s{}\n",
                m.check,
                m.setting,
                mb_per_sec(m.bytes_per_sec),
                m.seconds,
                if m.partial {
                    " (partial: not used)"
                } else {
                    ""
                }
            );
        }
    }
    if doc.findings.is_empty() {
        s += "findings: none\n";
        return s;
    }
    let counts: Vec<String> = Severity::ALL
        .iter()
        .rev()
        .filter_map(|sev| {
            let n = doc.findings.iter().filter(|f| f.severity == *sev).count();
            (n > 0).then(|| format!("{n} {}", sev.name()))
        })
        .collect();
    s += &format!("findings: {} ({})\n", doc.findings.len(), counts.join(", "));
    for f in &doc.findings {
        s += &format!("\n[{}] {}: {}\n", f.severity.name(), f.id, f.title);
        for e in &f.evidence {
            s += &format!("  evidence: {e}\n");
        }
        s += &format!("  means:    {}\n", f.meaning);
        for c in &f.fix {
            s += &format!("  fix:      {c}\n");
        }
        for c in &f.persist {
            s += &format!("  persist:  {c}\n");
        }
        if let Some(g) = &f.gain {
            match (g.before_bytes_per_sec, g.after_bytes_per_sec) {
                (Some(b), Some(a)) => {
                    s += &format!(
                        "  gain:     {:.1} → {:.1} MB/s ({:+.0}%), {}: {}\n",
                        mb_per_sec(b),
                        mb_per_sec(a),
                        g.pct.unwrap_or(0.0),
                        if g.measured { "measured" } else { "estimated" },
                        g.what.trim_start_matches("estimated: ")
                    );
                }
                _ => s += &format!("  gain:     {}\n", g.what),
            }
        }
    }
    s
}
