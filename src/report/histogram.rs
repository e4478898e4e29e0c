//! The latency distribution as text: power-of-two buckets with count, percent
//! and cumulative percent (`--histogram`).

use std::fmt::Write;

use crate::analysis::histogram::LatencyHistogram;
use crate::base::units::fmt_latency_ns;

/// Renders one histogram; empty string when it holds no sample.
pub fn render(title: &str, h: &LatencyHistogram) -> String {
    let inner = h.inner();
    let total = inner.len();
    let mut out = String::new();
    if total == 0 {
        return out;
    }
    let _ = writeln!(
        out,
        "latency histogram: {} ({total} I/Os)",
        crate::base::error::Shown(title)
    );
    let _ = writeln!(
        out,
        "  {:>10}  {:>10}  {:>12}  {:>7}  {:>7}",
        "from", "below", "count", "%", "cum %"
    );
    let lo_exp = 63 - inner.min().max(1).leading_zeros();
    let hi_exp = 64 - inner.max().max(1).leading_zeros();
    let mut cum = 0u64;
    for e in lo_exp..hi_exp.max(lo_exp + 1) {
        let from = 1u64 << e;
        let below = 1u64 << (e + 1);
        let count = inner.count_between(from, below - 1);
        // count_between is inclusive on bucket edges: take what is new only.
        let count = count.min(total - cum);
        cum += count;
        let _ = writeln!(
            out,
            "  {:>10}  {:>10}  {:>12}  {:>6.2}%  {:>6.2}%",
            fmt_latency_ns(from as f64),
            fmt_latency_ns(below as f64),
            count,
            count as f64 * 100.0 / total as f64,
            cum as f64 * 100.0 / total as f64
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_add_up() {
        let mut h = LatencyHistogram::new();
        for v in [100u64, 150, 300, 5_000, 5_100, 70_000] {
            h.record(v);
        }
        let text = render("t", &h);
        assert!(text.contains("(6 I/Os)"));
        let counts: u64 = text
            .lines()
            .skip(2)
            .map(|l| l.split_whitespace().nth(2).unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(counts, 6);
        assert!(text.trim_end().ends_with("100.00%"));
        assert_eq!(render("empty", &LatencyHistogram::new()), "");
    }
}
