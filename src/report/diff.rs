//! The diff report as text: one line per figure of each row (target,
//! point, phase, host, total), base and new side by side with the change,
//! the test's p-value and verdict, and the rows that crossed `--threshold`.

use std::fmt::Write;

use crate::base::error::{show_text, Shown};
use crate::base::units::{fmt_latency_ns, mb_per_sec};
use crate::document::diff::{DiffDocument, MetricDiff, TestDoc, Verdict};

/// A figure as the table shows it.
fn figure(metric: &str, v: Option<f64>) -> String {
    match (metric, v) {
        (_, None) => "-".into(),
        ("bytes_per_sec", Some(v)) => format!("{:.1}", mb_per_sec(v)),
        ("iops", Some(v)) => format!("{v:.0}"),
        (_, Some(v)) => fmt_latency_ns(v),
    }
}

/// A metric's name as the table shows it.
fn metric_name(metric: &str) -> &str {
    match metric {
        "bytes_per_sec" => "MB/s",
        "iops" => "IOPS",
        "p50_ns" => "p50",
        "p99_ns" => "p99",
        "p99_9_ns" => "p99.9",
        other => other,
    }
}

fn p_value(p: f64) -> String {
    if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

fn verdict(t: &TestDoc) -> String {
    let method = t.method.as_deref().unwrap_or("");
    match t.verdict {
        Verdict::Significant => format!("significant ({method})"),
        Verdict::Noise => format!("noise ({method})"),
        Verdict::Untested => {
            let note = t.note.as_deref().unwrap_or("");
            if note.starts_with("n too small") {
                format!("no test: n too small ({} vs {})", t.n_base, t.n_new)
            } else if note.starts_with("one latency histogram") {
                "no test: one histogram per side".into()
            } else {
                format!("no test: {note}")
            }
        }
    }
}

/// What the samples were, over the whole diff.
fn samples(d: &DiffDocument) -> String {
    let mut kinds: Vec<&str> = Vec::new();
    for m in d.rows.iter().flat_map(|r| &r.metrics) {
        if let Some(s) = m.test.samples.as_deref() {
            if !kinds.contains(&s) {
                kinds.push(s);
            }
        }
    }
    if kinds.is_empty() {
        "no samples (see each row)".into()
    } else {
        kinds.join(" and ")
    }
}

fn change(m: &MetricDiff) -> String {
    m.change_pct.map_or("-".into(), |c| format!("{c:+.1}%"))
}

pub fn render(d: &DiffDocument) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "diff of two {} documents: base {} -> new {}",
        d.of.name(),
        Shown(&d.base.path),
        Shown(&d.new.path)
    );
    let _ = writeln!(out, "workload: {}; MB/s = 10^6 B/s", Shown(&d.workload));
    for w in &d.differences {
        let _ = writeln!(
            out,
            "warning: the workloads differ: {}; diffed because of --force",
            Shown(w)
        );
    }
    for n in &d.notes {
        let _ = writeln!(out, "note: {}", Shown(n));
    }
    let _ = writeln!(
        out,
        "test: two-sided Mann-Whitney U on {} (exact for up to 8 samples a side without ties, else the tie-corrected normal approximation); significant at p < {}",
        samples(d),
        d.alpha
    );
    // A row's label names targets and hosts (as the documents spell them):
    // one line, escaped, whatever they hold.
    let label = |r: &crate::document::diff::RowDiff| match &r.new_label {
        Some(n) => format!("{} -> {}", Shown(&r.label), Shown(n)),
        None => show_text(&r.label).into_owned(),
    };
    let w = d
        .rows
        .iter()
        .map(|r| label(r).chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let _ = writeln!(
        out,
        "{:<w$}  {:<6} {:>10} {:>10} {:>9} {:>7} {:>8}  verdict",
        "row", "metric", "base", "new", "change", "n", "p"
    );
    for r in &d.rows {
        let label = label(r);
        for (i, m) in r.metrics.iter().enumerate() {
            let n = if m.test.n_base + m.test.n_new > 0 {
                format!("{}/{}", m.test.n_base, m.test.n_new)
            } else {
                "-".into()
            };
            let mut line = format!(
                "{:<w$}  {:<6} {:>10} {:>10} {:>9} {:>7} {:>8}  {}",
                if i == 0 { label.as_str() } else { "" },
                metric_name(&m.metric),
                figure(&m.metric, m.base),
                figure(&m.metric, m.new),
                change(m),
                n,
                m.test.p.map_or("-".into(), p_value),
                verdict(&m.test)
            );
            if m.crossed {
                let _ = write!(line, "  << past {}%", d.threshold_pct.unwrap_or_default());
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    if !d.only_in_base.is_empty() {
        let _ = writeln!(out, "only in base: {}", Shown(&d.only_in_base.join(", ")));
    }
    if !d.only_in_new.is_empty() {
        let _ = writeln!(out, "only in new: {}", Shown(&d.only_in_new.join(", ")));
    }
    if let Some(t) = d.threshold_pct {
        let crossed: Vec<String> = d
            .rows
            .iter()
            .flat_map(|r| {
                r.metrics.iter().filter(|m| m.crossed).map(move |m| {
                    format!(
                        "{} {} {}{}",
                        Shown(&r.label),
                        metric_name(&m.metric),
                        change(m),
                        m.test
                            .p
                            .map_or(String::new(), |p| format!(" (p={})", p_value(p)))
                    )
                })
            })
            .collect();
        if crossed.is_empty() {
            let _ = writeln!(out, "threshold {t}%: no MB/s fall or p99 rise crossed it");
        } else {
            let _ = writeln!(out, "threshold {t}%: crossed by {}", crossed.join(", "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::histogram::LatencyHistogram;
    use crate::document::diff::{diff, DiffOptions};
    use crate::document::run::RunDocument;
    use crate::measure::worker::Interval;
    use crate::report::fixtures::sample_doc;

    /// The sample run over a 6 s window, each worker's rate steady with a
    /// little wobble, every rate times `scale`.
    fn doc(scale: f64) -> RunDocument {
        let mut d = sample_doc();
        d.window.seconds = 6.0;
        d.window.end_unix_sec = d.window.start_unix_sec + 6.0;
        for w in &mut d.workers {
            let per = w.figures.bytes / 6;
            w.intervals = (0..6)
                .map(|t| {
                    // Even, so that half the rate is exactly half.
                    let ios = ((2 * (per / 8192 + t)) as f64 * scale) as u64;
                    Interval {
                        t: t as f64,
                        bytes: ios * 4096,
                        ios,
                        ..Interval::default()
                    }
                })
                .collect();
            w.figures.bytes = w.intervals.iter().map(|i| i.bytes).sum();
            w.figures.ios = w.intervals.iter().map(|i| i.ios).sum();
            (w.read_bytes, w.read_ios) = (w.figures.bytes, w.figures.ios);
            // A histogram of as many latencies as I/Os (the documents
            // read back are checked for it).
            let mut h = LatencyHistogram::new();
            for i in 0..w.figures.ios {
                h.record(1000 + i * 10);
            }
            (w.figures.histogram, w.figures.latency_ns) = (h.to_base64(), h.summary());
        }
        let mut all = LatencyHistogram::new();
        for w in &d.workers {
            all.merge(&LatencyHistogram::from_base64(&w.figures.histogram).unwrap());
        }
        let t = &mut d.total;
        t.figures.bytes = d.workers.iter().map(|w| w.figures.bytes).sum();
        t.figures.ios = d.workers.iter().map(|w| w.figures.ios).sum();
        t.figures.bytes_per_sec = t.figures.bytes as f64 / t.figures.seconds;
        t.figures.iops = t.figures.ios as f64 / t.figures.seconds;
        (t.figures.histogram, t.figures.latency_ns) = (all.to_base64(), all.summary());
        let target = &mut d.targets[0];
        (target.figures.bytes, target.figures.ios) = (t.figures.bytes, t.figures.ios);
        target.figures.bytes_per_sec = t.figures.bytes_per_sec;
        target.figures.iops = t.figures.iops;
        (target.figures.histogram, target.figures.latency_ns) =
            (t.figures.histogram.clone(), t.figures.latency_ns);
        d
    }

    #[test]
    fn renders_rows_tests_and_the_threshold() {
        let given = |shown: &str, d: &crate::document::run::RunDocument| {
            let origin = crate::document::Origin {
                shown: shown.into(),
                reader: crate::document::Reader::Diff,
            };
            let bytes = crate::report::json::render(d);
            crate::document::Given {
                shown: shown.into(),
                document: crate::document::read(&bytes, &origin, &crate::document::diff::TAKES)
                    .unwrap(),
            }
        };
        let (a, b) = (given("base.json", &doc(1.0)), given("new.json", &doc(0.5)));
        let o = DiffOptions {
            alpha: 0.05,
            threshold_pct: Some(10.0),
            force: false,
        };
        let d = diff(&a, &b, &o).unwrap();
        let text = render(&d);
        assert!(
            text.starts_with("diff of two run documents: base "),
            "{text}"
        );
        let total = text
            .lines()
            .find(|l| l.starts_with("TOTAL"))
            .unwrap_or_else(|| panic!("{text}"));
        let cols: Vec<&str> = total.split_whitespace().collect();
        // TOTAL MB/s base new change n p verdict (method)
        assert_eq!(cols[1], "MB/s", "{total}");
        assert_eq!(cols[4], "-50.0%", "{total}");
        assert_eq!(cols[5], "6/6", "{total}");
        assert_eq!(cols[7], "significant", "{total}");
        assert!(total.ends_with("<< past 10%"), "{total}");
        assert!(text.contains("no test: one histogram per side"), "{text}");
        assert!(text.contains("threshold 10%: crossed by "), "{text}");
        assert_eq!(
            d.crossed.len(),
            2,
            "the target and the total: {:?}",
            d.crossed
        );
        // The JSON round-trips.
        let back: DiffDocument = serde_json::from_slice(&crate::report::json::render(&d)).unwrap();
        assert_eq!(back, d);
        // The same document twice: no change, noise, nothing crossed.
        let d = diff(&a, &a, &o).unwrap();
        assert!(d.crossed.is_empty());
        let text = render(&d);
        assert!(text.contains("noise (normal approximation)"), "{text}");
        assert!(
            text.contains("no MB/s fall or p99 rise crossed it"),
            "{text}"
        );
    }
}
