//! `advise`'s page: the volume and its state, the findings worst first
//! (each with its evidence, what it means, the fix to copy, what makes it
//! persist and the gain), what `--apply` changed, the read-ahead points as
//! bars, and the battery (which checks ran, which were skipped and why).

use anyhow::Result;
use plotters::style::RGBColor;

use super::charts;
use super::page::{esc, Page};
use crate::base::units::mb_per_sec;
use crate::document::advise::{Finding, FindingsDocument, Severity};
use crate::report::advise as text;

/// The page of a findings document.
pub fn findings(doc: &FindingsDocument) -> Result<String> {
    let title = format!("stripebench advise {}", doc.volume);
    let mut page = Page::new(&title);
    page.h(1, &title);
    let mut lead = vec![
        ("volume".to_string(), text::volume(doc)),
        ("battery".to_string(), text::battery(doc)),
        ("findings".to_string(), text::counts(&doc.findings)),
    ];
    lead.extend(doc.state.iter().map(|s| ("state".to_string(), s.clone())));
    page.kv(&lead);
    if let Some(a) = &doc.applied {
        page.h(2, "Applied (kept until 'stripebench restore')");
        let rows: Vec<(String, Vec<String>)> = a
            .changes
            .iter()
            .map(|c| {
                (
                    String::new(),
                    vec![
                        format!("{} {}", c.device, c.attribute),
                        c.old.clone(),
                        c.new.clone(),
                        c.finding.clone(),
                        // The finding on this change's device: another
                        // device's finding of the same kind is not this one.
                        if doc.findings.iter().any(|f| {
                            f.id == c.finding
                                && (f.devices.contains(&c.device)
                                    || f.settings.iter().any(|s| {
                                        s.device == c.device && s.attribute == c.attribute
                                    }))
                        }) {
                            "still there".into()
                        } else {
                            "gone".into()
                        },
                    ],
                )
            })
            .collect();
        page.table(
            &["setting", "was", "now", "finding", "after"].map(String::from),
            &rows,
            9,
        );
        let cmp: Vec<(String, Vec<String>)> = a
            .compared
            .iter()
            .map(|c| {
                let mb = |b: Option<f64>| b.map_or("-".into(), |b| format!("{:.1}", mb_per_sec(b)));
                (
                    String::new(),
                    vec![
                        c.check.clone(),
                        mb(c.before_bytes_per_sec),
                        mb(c.after_bytes_per_sec),
                    ],
                )
            })
            .collect();
        if !cmp.is_empty() {
            page.table(
                &[
                    "check, at the array's settings",
                    "before MB/s",
                    "after MB/s",
                ]
                .map(String::from),
                &cmp,
                1,
            );
        }
        let left: String = a
            .not_applied
            .iter()
            .map(|n| format!("not applied: {n}\n"))
            .collect();
        page.notes(&left);
    }
    page.h(2, "Findings");
    if doc.findings.is_empty() {
        page.p(
            "",
            "None: nothing the battery checks is wrong with this array.",
        );
    }
    for f in &doc.findings {
        finding(&mut page, f);
    }
    readahead(&mut page, doc)?;
    page.h(2, "Battery");
    let rows: Vec<(String, Vec<String>)> = doc
        .checks
        .iter()
        .map(|c| {
            (
                String::new(),
                vec![
                    c.id.clone(),
                    c.status.clone(),
                    c.detail.clone(),
                    format!("{:.0}", c.budget_sec),
                ],
            )
        })
        .collect();
    page.table(
        &["check", "status", "what it did, or why not", "budget s"].map(String::from),
        &rows,
        3,
    );
    if !doc.measurements.is_empty() {
        let rows: Vec<(String, Vec<String>)> = doc
            .measurements
            .iter()
            .map(|m| {
                (
                    if m.partial {
                        "slow".into()
                    } else {
                        String::new()
                    },
                    vec![
                        m.check.clone(),
                        m.setting.clone(),
                        if m.partial {
                            "partial: not used".into()
                        } else {
                            String::new()
                        },
                        format!("{:.1}", mb_per_sec(m.bytes_per_sec)),
                        format!("{:.1}", m.seconds),
                    ],
                )
            })
            .collect();
        page.h(3, "Measured");
        page.table(
            &["check", "setting", "", "MB/s", "seconds"].map(String::from),
            &rows,
            3,
        );
    }
    Ok(page.finish(&doc.tool))
}

/// One finding: its severity and title, then what was seen, what it
/// means, the fix (to copy) and the gain.
fn finding(page: &mut Page, f: &Finding) {
    let bad = if f.severity >= Severity::Medium {
        " bad"
    } else {
        ""
    };
    page.raw(&format!(
        "<h3><span class=\"badge{bad}\">{}</span>{}: {}</h3>\n",
        f.severity.name(),
        esc(&f.id),
        esc(&f.title)
    ));
    let evidence: String = f.evidence.iter().map(|e| format!("{e}\n")).collect();
    page.notes(&evidence);
    page.p("", &format!("What it means: {}", f.meaning));
    if !f.fix.is_empty() {
        page.raw(&format!(
            "<pre class=\"copy\">{}</pre>\n",
            esc(&one_per_line(&f.fix))
        ));
    }
    if !f.persist.is_empty() {
        page.p("", "To keep it after a reboot:");
        page.raw(&format!(
            "<pre class=\"copy\">{}</pre>\n",
            esc(&one_per_line(&f.persist))
        ));
    }
    if let Some(g) = &f.gain {
        let text = match (g.before_bytes_per_sec, g.after_bytes_per_sec) {
            (Some(b), Some(a)) => format!(
                "Gain, {}: {:.1} → {:.1} MB/s ({:+.0}%): {}",
                if g.measured { "measured" } else { "estimated" },
                mb_per_sec(b),
                mb_per_sec(a),
                g.pct.unwrap_or(0.0),
                g.what
            ),
            _ => format!("Gain: {}", g.what),
        };
        page.p("", &text);
    }
}

/// The read-ahead points measured, as bars (the array's own value grey).
fn readahead(page: &mut Page, doc: &FindingsDocument) -> Result<()> {
    let points: Vec<(String, f64, RGBColor)> = doc
        .measurements
        .iter()
        .filter(|m| m.check == "readahead" && !m.partial)
        .map(|m| {
            (
                m.setting.clone(),
                m.bytes_per_sec,
                if m.current {
                    RGBColor(127, 127, 127)
                } else {
                    crate::report::plot::COLORS[0]
                },
            )
        })
        .collect();
    if points.len() < 2 {
        return Ok(());
    }
    page.h(2, "Read-ahead");
    let svg = charts::bars(&points)?;
    page.figure(
        &svg,
        "buffered sequential reads of the volume, one thread, cold cache, at each read_ahead_kb (grey: the array's own value)",
    );
    Ok(())
}

/// Commands a reader copies and runs, one line each: a newline inside one
/// (a findings document read back says anything) is shown, not obeyed.
fn one_per_line(commands: &[String]) -> String {
    commands
        .iter()
        .map(|c| crate::base::error::show_text(c).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}
