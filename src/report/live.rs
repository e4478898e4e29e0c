//! The live renderings (`--live`, `--metrics`): a per-second line the
//! collector ([`crate::measure::live`]) hands over, as a JSON line or a CSV
//! record, and the OpenMetrics/Prometheus text of the counters so far.
//! Pure: where the bytes go, and when, is `output::live`'s.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::histogram::LatencyHistogram;
use crate::measure::config::LiveFormat;
use crate::measure::live::LiveLine;

/// The CSV header: the JSON line's fields, in order.
/// A mixed pattern fills the read_ and write_ columns (empty otherwise).
pub const CSV_HEADER: &str = "point,phase,t,seconds,kind,id,target,worker,bytes,ios,errors,bytes_per_sec,iops,p50_ns,p99_ns,max_ns,stalled,late,unix_sec,read_bytes,read_ios,read_bytes_per_sec,read_iops,read_p50_ns,read_p99_ns,read_max_ns,write_bytes,write_ios,write_bytes_per_sec,write_iops,write_p50_ns,write_p99_ns,write_max_ns,interval_sec,start_sec";

/// One direction's second in a mixed pattern (`reads`, `writes`).
#[derive(Debug, Serialize)]
pub struct DirectionLine {
    pub bytes: u64,
    pub ios: u64,
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub max_ns: Option<u64>,
}

/// Where line `l`'s interval starts, seconds since the window opened: in
/// whole nanoseconds (0.3, not 0.30000000000000004).
fn start_sec(l: &LiveLine<'_>) -> f64 {
    let ns = (l.interval_sec * 1e9).round() as u64;
    l.t.saturating_mul(ns) as f64 / 1e9
}

/// One line of the stream, as written (`docs/json.md`, "The live stream").
#[derive(Debug, Serialize)]
pub struct Line<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<&'a str>,
    /// The interval's index since the window opened.
    pub t: u64,
    pub seconds: f64,
    /// `--live-interval` in seconds, and where interval `t` starts
    /// (`t × interval_sec`, seconds since the window opened).
    pub interval_sec: f64,
    pub start_sec: f64,
    pub kind: &'static str,
    pub id: &'a str,
    pub target: Option<&'a str>,
    pub worker: Option<usize>,
    pub bytes: u64,
    pub ios: u64,
    pub errors: u64,
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub stalled: bool,
    pub late: bool,
    /// When the line was written (Unix seconds).
    pub unix_sec: f64,
    /// A mixed pattern: reads and writes apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reads: Option<DirectionLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writes: Option<DirectionLine>,
}

impl<'a> Line<'a> {
    pub fn of(l: &'a LiveLine<'a>) -> Line<'a> {
        let label = |k: &str| {
            l.label
                .filter(|(key, _)| *key == k)
                .map(|(_, v)| v.as_str())
        };
        // Rates over the second's length (shorter for the window's last second).
        let per = |x: u64| {
            if l.seconds > 0.0 {
                x as f64 / l.seconds
            } else {
                0.0
            }
        };
        let dir = |d: &crate::measure::live::LiveDirection<'_>| {
            let lat = LatencyHistogram::interval(d.hist);
            DirectionLine {
                bytes: d.bytes,
                ios: d.ios,
                bytes_per_sec: per(d.bytes),
                iops: per(d.ios),
                p50_ns: lat.p50_ns,
                p99_ns: lat.p99_ns,
                max_ns: lat.max_ns,
            }
        };
        let lat = LatencyHistogram::interval(l.hist);
        Line {
            point: label("point"),
            phase: label("phase"),
            t: l.t,
            seconds: l.seconds,
            interval_sec: l.interval_sec,
            start_sec: start_sec(l),
            kind: l.kind.name(),
            id: &l.id,
            target: l.target,
            worker: l.worker,
            bytes: l.bytes,
            ios: l.ios,
            errors: l.errors,
            bytes_per_sec: per(l.bytes),
            iops: per(l.ios),
            p50_ns: lat.p50_ns,
            p99_ns: lat.p99_ns,
            max_ns: lat.max_ns,
            stalled: l.stalled,
            late: l.late,
            unix_sec: l.unix_sec,
            reads: l.dirs.map(|d| dir(&d[0])),
            writes: l.dirs.map(|d| dir(&d[1])),
        }
    }

    pub fn jsonl(&self) -> Vec<u8> {
        // Plain data: serializing cannot fail.
        let mut v = serde_json::to_vec(self).expect("a line serializes");
        v.push(b'\n');
        crate::report::json::escape_controls(v)
    }

    pub fn csv(&self) -> Vec<u8> {
        let opt = |x: Option<u64>| x.map(|v| v.to_string()).unwrap_or_default();
        let mut w = csv::Writer::from_writer(Vec::new());
        let dir = |d: &Option<DirectionLine>| -> [String; 7] {
            match d {
                Some(d) => [
                    d.bytes.to_string(),
                    d.ios.to_string(),
                    format!("{:.0}", d.bytes_per_sec),
                    format!("{:.1}", d.iops),
                    opt(d.p50_ns),
                    opt(d.p99_ns),
                    opt(d.max_ns),
                ],
                None => Default::default(),
            }
        };
        let mut record = vec![
            self.point.unwrap_or_default().to_string(),
            self.phase.unwrap_or_default().to_string(),
            self.t.to_string(),
            format!("{:.3}", self.seconds),
            self.kind.to_string(),
            self.id.to_string(),
            self.target.unwrap_or_default().to_string(),
            self.worker.map(|w| w.to_string()).unwrap_or_default(),
            self.bytes.to_string(),
            self.ios.to_string(),
            self.errors.to_string(),
            format!("{:.0}", self.bytes_per_sec),
            format!("{:.1}", self.iops),
            opt(self.p50_ns),
            opt(self.p99_ns),
            opt(self.max_ns),
            self.stalled.to_string(),
            self.late.to_string(),
            format!("{:.3}", self.unix_sec),
        ];
        record.extend(dir(&self.reads));
        record.extend(dir(&self.writes));
        record.push(self.interval_sec.to_string());
        record.push(self.start_sec.to_string());
        // Writing to memory does not fail.
        w.write_record(record)
            .expect("writing to memory does not fail");
        // A text rendering: a target's control characters escaped.
        crate::base::error::show_lines_bytes(&w.into_inner().unwrap_or_default()).into_owned()
    }
}

/// One line as the stream writes it, in its format.
pub fn line(l: &LiveLine<'_>, format: LiveFormat) -> Vec<u8> {
    let line = Line::of(l);
    match format {
        LiveFormat::Jsonl => line.jsonl(),
        LiveFormat::Csv => line.csv(),
    }
}

/// The stream's first bytes: the CSV header, nothing for JSON lines.
pub fn header(format: LiveFormat) -> Option<String> {
    (format == LiveFormat::Csv).then(|| format!("{CSV_HEADER}\n"))
}

/// Latency histogram buckets (upper bounds, seconds) of `--metrics`.
pub const BUCKETS_SEC: [f64; 19] = [
    10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3,
    250e-3, 500e-3, 1.0, 2.5, 5.0, 10.0,
];

/// One worker's figures since the command started.
#[derive(Default)]
struct Cumulative {
    bytes: u64,
    ios: u64,
    errors: u64,
    hist: LatencyHistogram,
    /// A mixed pattern: reads and writes apart (bytes, I/Os, latencies).
    dirs: Option<[(u64, u64, LatencyHistogram); 2]>,
    /// I/Os counted whose latencies the collector lost (it fell behind the
    /// workers and a second's histogram was dropped): in `ios`, not in
    /// `hist`; reads' and writes' apart for a mixed pattern.
    lost: u64,
    dir_lost: [u64; 2],
}

/// The `--metrics` counters since the command started, and their text.
#[derive(Default)]
pub struct MetricsText {
    /// (target, worker) → its counters.
    workers: BTreeMap<(String, usize), Cumulative>,
    /// The last second written (seconds since its run's window opened).
    last_t: f64,
    /// Each target's disk (its identity key), when known.
    disks: BTreeMap<String, String>,
}

impl MetricsText {
    pub fn new() -> MetricsText {
        MetricsText::default()
    }

    /// Who each target's disk is (path, identity key): a `disk` label on
    /// its series, so that Prometheus keeps a disk's figures whatever its
    /// device name.
    pub fn set_disks(&mut self, disks: &[(String, String)]) {
        self.disks.extend(disks.iter().cloned());
    }

    /// Adds a second's lines to the counters.
    pub fn add(&mut self, lines: &[LiveLine<'_>]) {
        for l in lines {
            if let (Some(target), Some(w)) = (l.target, l.worker) {
                let c = self.workers.entry((target.to_string(), w)).or_default();
                c.bytes += l.bytes;
                c.ios += l.ios;
                c.errors += l.errors;
                if let Some(h) = l.hist {
                    c.hist.merge(h);
                } else {
                    c.lost += l.ios;
                }
                if let Some(d) = &l.dirs {
                    let cd = c.dirs.get_or_insert_with(Default::default);
                    let mut lost = 0;
                    for (k, d) in d.iter().enumerate() {
                        cd[k].0 += d.bytes;
                        cd[k].1 += d.ios;
                        match d.hist {
                            Some(h) => cd[k].2.merge(h),
                            None => {
                                c.dir_lost[k] += d.ios;
                                lost += d.ios;
                            }
                        }
                    }
                    // The line's histogram is both directions': one lost
                    // leaves the other's in it.
                    if l.hist.is_some() {
                        c.lost += lost;
                    }
                }
                self.last_t = self.last_t.max(start_sec(l) + l.seconds);
            }
        }
    }

    /// The exposition text (Prometheus text format 0.0.4, which
    /// OpenMetrics parsers read too).
    pub fn render(&self) -> String {
        let mut s = String::new();
        let labels = |(t, w): &(String, usize)| match self.disks.get(t) {
            Some(d) => format!(
                "target=\"{}\",worker=\"{w}\",disk=\"{}\"",
                escape_label(t),
                escape_label(d)
            ),
            None => format!("target=\"{}\",worker=\"{w}\"", escape_label(t)),
        };
        for (name, help, get) in [
            (
                "stripebench_bytes_total",
                "Bytes moved in the measured windows.",
                (|c: &Cumulative| c.bytes) as fn(&Cumulative) -> u64,
            ),
            (
                "stripebench_ios_total",
                "I/Os completed in the measured windows.",
                |c| c.ios,
            ),
            ("stripebench_errors_total", "I/O errors.", |c| c.errors),
        ] {
            s.push_str(&format!("# HELP {name} {help}\n# TYPE {name} counter\n"));
            for (k, c) in &self.workers {
                s.push_str(&format!("{name}{{{}}} {}\n", labels(k), get(c)));
            }
        }
        // A mixed pattern: each direction's bytes, I/Os and latencies.
        let dir = ["read", "write"];
        for (name, help, get) in [
            (
                "stripebench_direction_bytes_total",
                "Bytes moved in the measured windows, by direction (a mixed pattern).",
                (|c: &(u64, u64, LatencyHistogram)| c.0)
                    as fn(&(u64, u64, LatencyHistogram)) -> u64,
            ),
            (
                "stripebench_direction_ios_total",
                "I/Os completed in the measured windows, by direction (a mixed pattern).",
                |c| c.1,
            ),
        ] {
            if self.workers.values().all(|c| c.dirs.is_none()) {
                break;
            }
            s.push_str(&format!("# HELP {name} {help}\n# TYPE {name} counter\n"));
            for (k, c) in &self.workers {
                for (d, x) in c.dirs.iter().flatten().enumerate() {
                    s.push_str(&format!(
                        "{name}{{{},direction=\"{}\"}} {}\n",
                        labels(k),
                        dir[d],
                        get(x)
                    ));
                }
            }
        }
        let name = "stripebench_latency_seconds";
        s.push_str(&format!(
            "# HELP {name} I/O latency, from the issue to completion (from the due time under --rate or --rate-iops).\n# TYPE {name} histogram\n"
        ));
        for (k, c) in &self.workers {
            let l = labels(k);
            for le in BUCKETS_SEC {
                let n = c.hist.count_at_most((le * 1e9) as u64);
                s.push_str(&format!("{name}_bucket{{{l},le=\"{le}\"}} {n}\n"));
            }
            let n = c.hist.len();
            s.push_str(&format!("{name}_bucket{{{l},le=\"+Inf\"}} {n}\n"));
            s.push_str(&format!("{name}_sum{{{l}}} {}\n", c.hist.sum_ns() / 1e9));
            s.push_str(&format!("{name}_count{{{l}}} {n}\n"));
        }
        let name = "stripebench_direction_latency_seconds";
        if self.workers.values().any(|c| c.dirs.is_some()) {
            s.push_str(&format!(
                "# HELP {name} I/O latency by direction (a mixed pattern), as stripebench_latency_seconds.\n# TYPE {name} histogram\n"
            ));
        }
        for (k, c) in &self.workers {
            for (d, (_, _, h)) in c.dirs.iter().flatten().enumerate() {
                let l = format!("{},direction=\"{}\"", labels(k), dir[d]);
                for le in BUCKETS_SEC {
                    let n = h.count_at_most((le * 1e9) as u64);
                    s.push_str(&format!("{name}_bucket{{{l},le=\"{le}\"}} {n}\n"));
                }
                let n = h.len();
                s.push_str(&format!("{name}_bucket{{{l},le=\"+Inf\"}} {n}\n"));
                s.push_str(&format!("{name}_sum{{{l}}} {}\n", h.sum_ns() / 1e9));
                s.push_str(&format!("{name}_count{{{l}}} {n}\n"));
            }
        }
        let name = "stripebench_latency_lost_ios_total";
        if self.workers.values().any(|c| c.lost > 0) {
            s.push_str(&format!(
                "# HELP {name} I/Os in stripebench_ios_total whose latencies are not in stripebench_latency_seconds: the collector fell behind the workers and dropped their second's histogram (the run document counts such seconds in live.histograms_lost).\n# TYPE {name} counter\n"
            ));
            for (k, c) in &self.workers {
                s.push_str(&format!("{name}{{{}}} {}\n", labels(k), c.lost));
            }
        }
        let name = "stripebench_direction_latency_lost_ios_total";
        if self.workers.values().any(|c| c.dir_lost != [0, 0]) {
            s.push_str(&format!(
                "# HELP {name} I/Os by direction whose latencies are not in stripebench_direction_latency_seconds, as stripebench_latency_lost_ios_total.\n# TYPE {name} counter\n"
            ));
            for (k, c) in self.workers.iter().filter(|(_, c)| c.dirs.is_some()) {
                for (d, n) in c.dir_lost.iter().enumerate() {
                    s.push_str(&format!(
                        "{name}{{{},direction=\"{}\"}} {n}\n",
                        labels(k),
                        dir[d]
                    ));
                }
            }
        }
        let name = "stripebench_window_seconds";
        s.push_str(&format!(
            "# HELP {name} How far the run in progress is into its measured window.\n# TYPE {name} gauge\n{name} {}\n",
            self.last_t
        ));
        s
    }
}

/// A label value as the text format wants it: `\`, `"` and newlines escaped.
pub fn escape_label(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::live::LiveKind;

    fn line<'a>(
        h: Option<&'a LatencyHistogram>,
        label: Option<&'a (&'static str, String)>,
    ) -> LiveLine<'a> {
        LiveLine {
            label,
            t: 3,
            seconds: 0.5,
            interval_sec: 1.0,
            kind: LiveKind::Worker,
            id: "1".into(),
            target: Some("/dev/a \"b\"\n,c"),
            worker: Some(1),
            bytes: 1000,
            ios: 10,
            errors: 0,
            hist: h,
            dirs: None,
            stalled: false,
            late: false,
            unix_sec: 1.0,
        }
    }

    #[test]
    fn a_line_rates_over_its_own_length_and_carries_its_label() {
        let mut h = LatencyHistogram::new();
        for ns in [100, 200, 300] {
            h.record(ns);
        }
        let label = ("point", "bs=4k".to_string());
        let l = line(Some(&h), Some(&label));
        let v: serde_json::Value = serde_json::from_slice(&Line::of(&l).jsonl()).unwrap();
        assert_eq!(v["bytes_per_sec"], 2000.0);
        assert_eq!(v["iops"], 20.0);
        assert_eq!(v["point"], "bs=4k");
        assert!(v.get("phase").is_none());
        assert_eq!(v["p50_ns"], 200);
        assert_eq!(v["max_ns"], 300);
        let empty = line(None, None);
        let v: serde_json::Value = serde_json::from_slice(&Line::of(&empty).jsonl()).unwrap();
        assert!(v["p99_ns"].is_null());
        // CSV: as many cells as the header, the awkward target quoted.
        let csv = Line::of(&l).csv();
        let text = [format!("{CSV_HEADER}\n").as_bytes(), &csv[..]].concat();
        let mut r = csv::Reader::from_reader(&text[..]);
        let rec = r.records().next().unwrap().unwrap();
        assert_eq!(rec.len(), CSV_HEADER.split(',').count());
        assert_eq!(&rec[6], "/dev/a \"b\"\n,c");
    }

    #[test]
    fn the_metrics_text_is_a_function_of_the_lines_it_was_given() {
        let mut h = LatencyHistogram::new();
        h.record(2_000);
        let l = line(Some(&h), None);
        let mut a = MetricsText::new();
        a.add(std::slice::from_ref(&l));
        let mut b = MetricsText::new();
        b.add(std::slice::from_ref(&l));
        assert_eq!(a.render(), b.render());
        let t = a.render();
        assert!(
            t.contains(
                "stripebench_bytes_total{target=\"/dev/a \\\"b\\\"\\n,c\",worker=\"1\"} 1000\n"
            ),
            "{t}"
        );
        assert!(t.contains("stripebench_window_seconds 3.5\n"), "{t}");
        // Its disk, once known, labels every series of the target.
        a.set_disks(&[("/dev/a \"b\"\n,c".into(), "wwn:0x5000c500a1b2c3d4".into())]);
        let t = a.render();
        assert!(
            t.contains("stripebench_ios_total{target=\"/dev/a \\\"b\\\"\\n,c\",worker=\"1\",disk=\"wwn:0x5000c500a1b2c3d4\"} 10\n"),
            "{t}"
        );
        assert_eq!(header(LiveFormat::Csv).unwrap(), format!("{CSV_HEADER}\n"));
        assert!(header(LiveFormat::Jsonl).is_none());
        assert_eq!(super::line(&l, LiveFormat::Jsonl), Line::of(&l).jsonl());
    }

    #[test]
    fn ios_whose_latencies_the_collector_lost_are_counted_apart() {
        use crate::measure::live::LiveDirection;
        // A busy host: the collector dropped a second's write histogram
        // (CI saw the writes' +Inf bucket 150 below their I/Os).
        let mut r = LatencyHistogram::new();
        r.record_n(1_000, 7);
        let mut w = LatencyHistogram::new();
        w.record_n(3_000, 3);
        let mut rw = LatencyHistogram::new();
        rw.merge(&r);
        rw.merge(&w);
        fn second<'a>(
            t: u64,
            all: Option<&'a LatencyHistogram>,
            r: Option<&'a LatencyHistogram>,
            w: Option<&'a LatencyHistogram>,
        ) -> LiveLine<'a> {
            let d = |bytes, ios, hist| LiveDirection { bytes, ios, hist };
            LiveLine {
                t,
                hist: all,
                dirs: Some([d(700, 7, r), d(300, 3, w)]),
                ..line(None, None)
            }
        }
        let both = second(0, Some(&rw), Some(&r), Some(&w));
        let mut m = MetricsText::new();
        m.add(&[both]);
        assert!(!m.render().contains("lost"), "nothing lost, nothing said");
        m.add(&[
            second(1, Some(&r), Some(&r), None),
            second(2, None, None, None),
        ]);
        let t = m.render();
        let k = "target=\"/dev/a \\\"b\\\"\\n,c\",worker=\"1\"";
        let has = |l: String| assert!(t.contains(&l), "{l} in:\n{t}");
        // 30 I/Os; 17 with latencies (7+3, 7, none); 3+3 writes and 7 reads lost.
        has(format!("stripebench_ios_total{{{k}}} 30\n"));
        has(format!("stripebench_latency_seconds_count{{{k}}} 17\n"));
        has(format!("stripebench_latency_lost_ios_total{{{k}}} 13\n"));
        has(format!(
            "stripebench_direction_latency_seconds_bucket{{{k},direction=\"write\",le=\"+Inf\"}} 3\n"
        ));
        has(format!(
            "stripebench_direction_latency_lost_ios_total{{{k},direction=\"write\"}} 6\n"
        ));
        has(format!(
            "stripebench_direction_latency_lost_ios_total{{{k},direction=\"read\"}} 7\n"
        ));
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
