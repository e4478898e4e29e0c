//! The plan's text report.

use crate::document::curve::LatencyPlanDoc;
use crate::document::plan::PlanDoc;

/// The fit and each point's residual: what plan prints, trusted or not.
pub fn render_fit(p: &PlanDoc) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Universal Scalability Law fit over {} point(s), N = {}:",
        p.points.len(),
        p.unit
    );
    let _ = writeln!(
        out,
        "  lambda {:.1} MB/s per unit, sigma (contention) {:.4}, kappa (coherency) {:.6}; error {:.1}% RMS of the mean (predictions need at most {:.0}%)",
        p.fit.lambda / 1e6,
        p.fit.sigma,
        p.fit.kappa,
        p.rel_rmse * 100.0,
        p.max_rel_rmse * 100.0
    );
    let _ = writeln!(
        out,
        "  {:>6} {:>12} {:>12} {:>10} {:>10}",
        "N", "measured", "fitted", "residual", "of linear"
    );
    let mut pts = p.points.clone();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (n, x) in pts {
        let linear = p.fit.lambda * n;
        let fitted = p.fit.predict(n);
        let _ = writeln!(
            out,
            "  {:>6} {:>12.1} {:>12.1} {:>10} {:>10}",
            n,
            x / 1e6,
            fitted / 1e6,
            if fitted > 0.0 {
                format!("{:+.1}%", (x - fitted) / fitted * 100.0)
            } else {
                "-".into()
            },
            if linear > 0.0 {
                format!("{:.0}%", x / linear * 100.0)
            } else {
                "-".into()
            }
        );
    }
    out
}

/// Why an untrusted fit predicts nothing, and what data would make it
/// trustworthy.
pub fn untrusted(p: &PlanDoc) -> String {
    let past = p
        .knee_n
        .or_else(|| p.points.iter().map(|q| q.0).reduce(f64::max))
        .unwrap_or(1.0);
    format!(
        "the fit's error is {:.1}% RMS of the mean, above the {:.0}% a prediction needs: the law does not describe these points (see the residuals). A trustworthy fit needs more points past the knee (N beyond {past}, up to and past where throughput stops rising) and repeats of each point (sweep --repeat 3) so that noise averages out; or pass --force to predict anyway",
        p.rel_rmse * 100.0,
        p.max_rel_rmse * 100.0
    )
}

pub fn render(p: &PlanDoc) -> String {
    use std::fmt::Write;
    let mut out = render_fit(p);
    if !p.trusted {
        let _ = writeln!(out, "warning: predicted anyway (--force): {}", untrusted(p));
    }
    match (p.peak_n, p.peak_bytes_per_sec, p.ceiling_bytes_per_sec) {
        (Some(n), Some(x), _) => {
            let _ = writeln!(out, "  peak: {:.1} MB/s at N = {:.1}", x / 1e6, n);
        }
        (_, _, Some(c)) => {
            let _ = writeln!(
                out,
                "  no peak (kappa 0): throughput approaches lambda/sigma = {:.1} MB/s as N grows",
                c / 1e6
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "  no peak: the fit scales linearly (sigma and kappa 0)"
            );
        }
    }
    match p.knee_n {
        Some(k) => {
            let _ = writeln!(out, "  knee: scaling falls below 90% of linear at N = {k}");
        }
        None => {
            let _ = writeln!(
                out,
                "  no knee: every measured point is within 90% of linear"
            );
        }
    }
    for (n, x) in &p.predictions {
        let within = p
            .intervals
            .iter()
            .find(|i| i.n == *n)
            .map_or(String::new(), |i| {
                format!(
                    " ({:.0}% interval {:.1} to {:.1} MB/s, bootstrap of {} resamples, seed {})",
                    p.bootstrap.level * 100.0,
                    i.low_bytes_per_sec / 1e6,
                    i.high_bytes_per_sec / 1e6,
                    p.bootstrap.fitted,
                    p.bootstrap.seed
                )
            });
        let _ = writeln!(out, "  predicted at N = {n}: {:.1} MB/s{within}", x / 1e6);
    }
    if let Some(t) = &p.target {
        let _ = writeln!(
            out,
            "  target {:.1} MB/s: {}",
            t.bytes_per_sec / 1e6,
            t.note
        );
    }
    for w in &p.warnings {
        let _ = writeln!(
            out,
            "warning: {}",
            crate::base::error::Shown(&w.to_string())
        );
    }
    out
}

/// The latency plan (`plan --p99`): each curve's points, which meet the
/// objective, and the answer.
pub fn render_latency(p: &LatencyPlanDoc) -> String {
    use crate::base::units::fmt_latency_ns;
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "latency curve {}: p99 objective {} (at max, latency from issue; on a schedule, from the due time)",
        crate::base::error::Shown(&p.file),
        fmt_latency_ns(p.p99_limit_ns as f64)
    );
    for g in &p.groups {
        if !g.values.is_empty() {
            let v: Vec<String> = g.values.iter().map(|(n, v)| format!("{n}={v}")).collect();
            let _ = writeln!(out, "{}:", v.join(" "));
        }
        let _ = writeln!(
            out,
            "  {:>10} {:>10} {:>10} {:>12} {:>12} {:>8}",
            "rate", "MB/s", "IOPS", "asked IOPS/w", "p99", "meets"
        );
        for pt in &g.points {
            let _ = writeln!(
                out,
                "  {:>10} {:>10.1} {:>10.0} {:>12} {:>12} {:>8}",
                pt.rate,
                pt.bytes_per_sec / 1e6,
                pt.iops,
                pt.asked_iops_per_worker
                    .map_or("-".into(), |a| format!("{a:.0}")),
                fmt_latency_ns(pt.p99_ns as f64),
                match (pt.rate == "max", pt.meets, pt.kept) {
                    (true, true, _) => "(yes)",
                    (true, false, _) => "(no)",
                    (false, true, _) => "yes",
                    (false, false, true) => "no",
                    (false, false, false) => "no, behind",
                }
            );
        }
        if g.points.iter().any(|p| p.rate == "max") {
            let _ = writeln!(
                out,
                "  (max: unthrottled, timed from issue with the device setting the pace, which hides queueing: never the answer)"
            );
        }
        let _ = writeln!(
            out,
            "  {}: {}",
            if g.answer.is_some() {
                "answer"
            } else {
                "NO ANSWER"
            },
            g.note
        );
    }
    out
}
