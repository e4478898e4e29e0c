//! One model per chart concept, built once from a document's figures and
//! drawn by both renderers: the SVG plot ([`crate::report::plot`], `--plot`)
//! and the HTML report ([`crate::report::html::charts`]). A model holds the
//! numbers a chart shows (its lines, their points, the axes' extent); a
//! renderer only lays them out. Two concepts are drawn by both:
//!
//! - [`Throughput`]: MB/s in each second of the window, per worker, and
//!   their sum (the HTML also lists it as a table);
//! - [`Latency`]: the latency of each target (or point, or host), as the
//!   share of I/Os per power-of-two bucket (the SVG) or as latency against
//!   percentile (the HTML).

use crate::analysis::histogram::LatencyHistogram;
use crate::document::run::WorkerDoc;

/// One line of a throughput chart: a worker's bytes in each second.
pub struct Series {
    pub label: String,
    /// (second into the window, bytes) of each interval.
    pub intervals: Vec<(f64, u64)>,
}

impl Series {
    /// The line's points: MB/s at the middle of each second.
    pub fn mb_points(&self) -> Vec<(f64, f64)> {
        self.intervals
            .iter()
            .map(|&(t, b)| (t + 0.5, b as f64 / 1e6))
            .collect()
    }

    /// The bytes of second `t`, when the worker has it.
    fn bytes_at(&self, t: u64) -> Option<u64> {
        self.intervals
            .iter()
            .find(|(s, _)| *s as u64 == t)
            .map(|&(_, b)| b)
    }
}

/// MB/s in each second of the window: one line per worker, and their sum.
/// The workers' intervals are whole seconds
/// ([`crate::document::run::RunDocument::workers_per_second`]).
pub struct Throughput {
    /// The seconds the series cover (the last interval's end); 0 when no
    /// worker has a whole second.
    pub seconds: u64,
    pub workers: Vec<Series>,
    /// The workers' bytes summed, second by second.
    pub total: Vec<u64>,
}

impl Throughput {
    /// The chart of `workers`, each line labelled by `label`.
    pub fn of(workers: &[WorkerDoc], label: impl Fn(&WorkerDoc) -> String) -> Throughput {
        let seconds = workers
            .iter()
            .flat_map(|w| w.intervals.iter().map(|i| i.t as u64 + 1))
            .max()
            .unwrap_or(0);
        let mut total = vec![0u64; seconds as usize];
        for w in workers {
            for i in &w.intervals {
                total[i.t as usize] += i.bytes;
            }
        }
        Throughput {
            seconds,
            workers: workers
                .iter()
                .map(|w| Series {
                    label: label(w),
                    intervals: w.intervals.iter().map(|i| (i.t, i.bytes)).collect(),
                })
                .collect(),
            total,
        }
    }

    /// Whether no worker has a whole second: nothing to draw.
    pub fn is_empty(&self) -> bool {
        self.seconds == 0
    }

    /// Whether the sum is a line of its own: more than one worker.
    pub fn shows_total(&self) -> bool {
        self.workers.len() > 1
    }

    /// The highest MB/s of any worker in any second, at least 1.
    pub fn peak_worker_mb(&self) -> f64 {
        self.workers
            .iter()
            .flat_map(|s| s.intervals.iter().map(|&(_, b)| b as f64 / 1e6))
            .fold(1.0, f64::max)
    }

    /// The highest MB/s of the sum in any second, at least 1.
    pub fn peak_total_mb(&self) -> f64 {
        self.total
            .iter()
            .map(|&b| b as f64 / 1e6)
            .fold(1.0, f64::max)
    }

    /// The sum's points: MB/s at the middle of each second.
    pub fn total_points(&self) -> Vec<(f64, f64)> {
        self.total
            .iter()
            .enumerate()
            .map(|(t, &b)| (t as f64 + 0.5, b as f64 / 1e6))
            .collect()
    }

    /// The chart's figures as table rows, one per second: the second, each
    /// worker's MB/s ("-" where it has none) and the sum's.
    pub fn rows(&self) -> Vec<(String, Vec<String>)> {
        (0..self.seconds)
            .map(|t| {
                let mut cells = vec![t.to_string()];
                let mut sum = 0;
                for w in &self.workers {
                    let b = w.bytes_at(t);
                    sum += b.unwrap_or(0);
                    cells.push(b.map_or("-".into(), |b| format!("{:.1}", b as f64 / 1e6)));
                }
                cells.push(format!("{:.1}", sum as f64 / 1e6));
                (String::new(), cells)
            })
            .collect()
    }
}

/// The latency of each of several I/O streams (targets, points, hosts),
/// from their exact histograms; the empty ones are left out.
pub struct Latency {
    pub series: Vec<(String, LatencyHistogram)>,
}

/// One stream's line in a latency chart.
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// The sum of the other streams (a total, a fleet): drawn heavier
    /// where the chart sets it apart.
    pub heavy: bool,
}

impl Line {
    fn new(label: &str, points: Vec<(f64, f64)>) -> Line {
        Line {
            label: label.to_string(),
            points,
            heavy: label == "total" || label == "fleet",
        }
    }
}

/// [`Latency`] as shares of I/Os per power-of-two bucket.
pub struct Shares {
    /// The buckets shown, as log2 of nanoseconds: `lo..hi`.
    pub lo: u32,
    pub hi: u32,
    /// Each stream's line: log2 ns at the bucket's middle, % of its I/Os.
    pub lines: Vec<Line>,
}

/// [`Latency`] against percentile.
pub struct Percentiles {
    /// The x axis in nines (1 is p90, 2 is p99), `0..max_nines`.
    pub max_nines: f64,
    /// The y axis, log10 of nanoseconds: `lo..hi`, whole decades.
    pub lo: f64,
    pub hi: f64,
    /// Each stream's line: nines, log10 ns.
    pub lines: Vec<Line>,
}

impl Latency {
    pub fn of(series: Vec<(String, LatencyHistogram)>) -> Latency {
        Latency {
            series: series.into_iter().filter(|(_, h)| !h.is_empty()).collect(),
        }
    }

    /// Share of I/Os per power-of-two bucket, from the fastest stream's
    /// lowest bucket to the slowest's highest (`0..1` with no stream).
    pub fn shares(&self) -> Shares {
        let lo = (self.series.iter())
            .map(|(_, h)| 63 - h.inner().min().max(1).leading_zeros())
            .min()
            .unwrap_or(0);
        let hi = (self.series.iter())
            .map(|(_, h)| 64 - h.inner().max().max(1).leading_zeros())
            .max()
            .unwrap_or(1)
            .max(lo + 1);
        let lines = (self.series.iter())
            .map(|(name, h)| {
                let total = h.len() as f64;
                let pts = (lo..hi)
                    .map(|e| {
                        let n = h.inner().count_between(1 << e, (1u64 << (e + 1)) - 1);
                        (f64::from(e) + 0.5, n as f64 * 100.0 / total)
                    })
                    .collect();
                Line::new(name, pts)
            })
            .collect();
        Shares { lo, hi, lines }
    }

    /// Latency against percentile, as far as the largest stream has
    /// samples to tell one (at most p99.9999); `None` with no stream.
    pub fn percentiles(&self) -> Option<Percentiles> {
        if self.series.is_empty() {
            return None;
        }
        let max_nines = (self.series.iter())
            .map(|(_, h)| (h.len() as f64).log10())
            .fold(1.0, f64::max)
            .min(6.0);
        // To the next half nine: the lines reach across the plot.
        let max_nines = (max_nines * 2.0).ceil() / 2.0;
        let lo = (self.series.iter())
            .map(|(_, h)| (h.inner().min().max(1) as f64).log10())
            .fold(f64::MAX, f64::min)
            .floor();
        let hi = (self.series.iter())
            .map(|(_, h)| (h.inner().max().max(1) as f64).log10())
            .fold(0.0, f64::max)
            .ceil()
            .max(lo + 1.0);
        let lines = (self.series.iter())
            .map(|(name, h)| {
                let top = (h.len() as f64).log10().min(max_nines);
                let steps = (top * 40.0).ceil().max(1.0) as usize;
                let pts = (0..=steps)
                    .map(|k| {
                        let x = top * k as f64 / steps as f64;
                        let q = 1.0 - 10f64.powf(-x);
                        let v = h.inner().value_at_quantile(q).max(1) as f64;
                        (x, v.log10())
                    })
                    .collect();
                Line::new(name, pts)
            })
            .collect();
        Some(Percentiles {
            max_nines,
            lo,
            hi,
            lines,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::sample_doc;

    #[test]
    fn throughput_rows_say_each_worker_and_the_sum_and_mark_a_missing_second() {
        let mut doc = sample_doc();
        // Worker 0 has no second 1.
        doc.workers[0].intervals.truncate(1);
        let (b0, b1) = (
            doc.workers[0].intervals[0].bytes,
            doc.workers[1].intervals[1].bytes,
        );
        let t = Throughput::of(&doc.workers, |w| format!("w{}", w.id));
        assert_eq!(t.seconds, 2);
        assert!(t.shows_total());
        let mb = |b: u64| format!("{:.1}", b as f64 / 1e6);
        let rows: Vec<Vec<String>> = t.rows().into_iter().map(|(_, c)| c).collect();
        assert_eq!(rows[1], vec!["1".to_string(), "-".into(), mb(b1), mb(b1)]);
        assert_eq!(rows[0][3], mb(b0 + doc.workers[1].intervals[0].bytes));
        // The sum peaks above either worker; each is at least 1 MB/s.
        assert!(t.peak_total_mb() >= t.peak_worker_mb());
        assert_eq!(t.total_points()[1], (1.5, b1 as f64 / 1e6));
        assert_eq!(t.workers[0].mb_points(), vec![(0.5, b0 as f64 / 1e6)]);
        assert!(Throughput::of(&[], |_| String::new()).is_empty());
    }

    #[test]
    fn latency_shares_add_up_to_all_io_and_the_total_is_drawn_heavy() {
        let mut h = LatencyHistogram::new();
        for ns in [1000, 1500, 3000, 70_000] {
            h.record(ns);
        }
        let l = Latency::of(vec![
            ("a".into(), h.clone()),
            ("empty".into(), LatencyHistogram::new()),
            ("total".into(), h),
        ]);
        assert_eq!(l.series.len(), 2, "the empty histogram is left out");
        let s = l.shares();
        // 1000 ns is in the bucket from 2^9; 70 us in the one below 2^17.
        assert_eq!((s.lo, s.hi), (9, 17));
        for l in &s.lines {
            let sum: f64 = l.points.iter().map(|p| p.1).sum();
            assert!((sum - 100.0).abs() < 1e-9, "{sum}");
        }
        let p = l.percentiles().unwrap();
        let heavy: Vec<bool> = p.lines.iter().map(|l| l.heavy).collect();
        assert_eq!(heavy, vec![false, true]);
        assert_eq!((p.lo, p.hi), (3.0, 5.0));
        assert!(Latency::of(Vec::new()).percentiles().is_none());
    }
}
