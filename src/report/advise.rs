//! `advise`'s report as text: the volume and its state first, then what
//! ran and what was skipped (with why), then the findings worst first,
//! each with what was measured, what it means, the command that fixes it,
//! what makes the fix persist and the before/after figures.

use crate::base::error::Shown;
use crate::base::units::mb_per_sec;
use crate::document::advise::{Applied, Finding, FindingsDocument, Severity};

/// The whole report.
pub fn render(doc: &FindingsDocument) -> String {
    let mut s = String::new();
    // Each line below is one line whatever its fields hold: device names
    // from sysfs, and whatever a findings document read back says.
    s += &format!(
        "stripebench advise {}: {}\n",
        Shown(&doc.volume),
        Shown(&volume(doc))
    );
    if doc.state.is_empty() {
        s += "state: no md array to read a state from\n";
    }
    for line in &doc.state {
        s += &format!("state: {}\n", Shown(line));
    }
    s += &format!("battery: {}\n", battery(doc));
    for c in &doc.checks {
        s += &format!(
            "  {:<8} {:<15} {}\n",
            Shown(&c.status),
            Shown(&c.id),
            Shown(&c.detail)
        );
    }
    if !doc.measurements.is_empty() {
        s += "measured:\n";
        let width = doc
            .measurements
            .iter()
            .map(|m| m.setting.chars().count())
            .max()
            .unwrap_or(0);
        for m in &doc.measurements {
            s += &format!(
                "  {:<15} {:<width$} {:>9.1} MB/s over {:.1} s{}\n",
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
    if let Some(a) = &doc.applied {
        applied(&mut s, a, &doc.findings);
    }
    if doc.findings.is_empty() {
        s += "findings: none\n";
        return s;
    }
    s += &format!(
        "findings: {} ({})\n",
        doc.findings.len(),
        counts(&doc.findings)
    );
    for f in &doc.findings {
        s += &format!(
            "\n[{}] {}: {}\n",
            f.severity.name(),
            Shown(&f.id),
            Shown(&f.title)
        );
        for e in &f.evidence {
            s += &format!("  evidence: {}\n", Shown(e));
        }
        s += &format!("  means:    {}\n", Shown(&f.meaning));
        for c in &f.fix {
            s += &format!("  fix:      {}\n", Shown(c));
        }
        for c in &f.persist {
            s += &format!("  persist:  {}\n", Shown(c));
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

/// The volume's name and what it is: "md0 (raid0, 4 members, ...)".
pub fn volume(doc: &FindingsDocument) -> String {
    let top = &doc.topology.root;
    let what = top
        .geometry()
        .map(|g| g.describe())
        .unwrap_or_else(|| top.kind.clone());
    format!("{} ({what})", top.name)
}

/// The time the battery took against its budget, and whether it was cut.
pub fn battery(doc: &FindingsDocument) -> String {
    format!(
        "{:.0} s of a {}{:.0} s budget{}{}",
        doc.elapsed_sec,
        if doc.applied.is_some() { "2 × " } else { "" },
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
    )
}

/// The findings by severity, worst first: "2 high, 1 medium"; "none".
pub fn counts(findings: &[Finding]) -> String {
    let c: Vec<String> = Severity::ALL
        .iter()
        .rev()
        .filter_map(|sev| {
            let n = findings.iter().filter(|f| f.severity == *sev).count();
            (n > 0).then(|| format!("{n} {}", sev.name()))
        })
        .collect();
    if c.is_empty() {
        "none".into()
    } else {
        c.join(", ")
    }
}

/// `--apply`: each change, each finding of the first battery beside what
/// the second found of it, and each check's figure before and after.
fn applied(s: &mut String, a: &Applied, after: &[Finding]) {
    let fixable = a
        .before
        .iter()
        .any(|f| f.severity > Severity::Info && f.settings.iter().any(|x| x.appliable()));
    if a.changes.is_empty() && fixable {
        *s += "applied: nothing (each fix --apply would make was refused: see below)\n";
    } else if a.changes.is_empty() {
        *s += "applied: nothing (no finding above info has a fix --apply makes)\n";
    } else {
        *s += "applied (kept until 'stripebench restore'):\n";
    }
    for c in &a.changes {
        *s += &format!(
            "  {} {}: {} → {}   ({})\n",
            c.device, c.attribute, c.old, c.new, c.finding
        );
    }
    for n in &a.not_applied {
        *s += &format!("  not applied: {n}\n");
    }
    let before: Vec<&Finding> = a
        .before
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .collect();
    if !before.is_empty() {
        *s += "before → after:\n";
    }
    for f in before {
        let now = after
            .iter()
            .find(|g| g.id == f.id && g.devices == f.devices)
            .map_or("gone".to_string(), |g| {
                format!("still there [{}]", g.severity.name())
            });
        *s += &format!(
            "  [{}] {} ({}): {now}\n",
            f.severity.name(),
            f.id,
            f.devices.join(", ")
        );
    }
    for c in &a.compared {
        let mb = |b: Option<f64>| b.map_or("-".to_string(), |b| format!("{:.1}", mb_per_sec(b)));
        let pct = match (c.before_bytes_per_sec, c.after_bytes_per_sec) {
            (Some(b), Some(x)) if b > 0.0 => format!(" ({:+.0}%)", (x / b - 1.0) * 100.0),
            _ => String::new(),
        };
        *s += &format!(
            "  {:<15} {} → {} MB/s at the array's settings, before and after{pct}\n",
            c.check,
            mb(c.before_bytes_per_sec),
            mb(c.after_bytes_per_sec)
        );
    }
}
