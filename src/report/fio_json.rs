//! `--fio-json`: a run in fio's own JSON output form (`--output-format=json`
//! of fio 3.x), for the scripts and plotting tools that read fio's.
//!
//! One fio job per worker, named as `--print-fio` names it (`w0`, `w1`,
//! ...), with fio's `read`/`write`/`trim`/`sync` sections, its default
//! completion-latency percentiles, its per-interval bandwidth and IOPS
//! statistics, its latency buckets and `disk_util` from the targets'
//! device counters; `global options` and each job's `job options` are
//! those of the fio command `--print-fio` gives for the run.
//!
//! What differs from fio's own, said in the document's
//! `stripebench.notes` (a key fio readers ignore): stripebench times each
//! I/O from its issue to its completion, so `clat_ns` and `lat_ns` are
//! that same latency and `slat_ns` is empty; `iodepth_level` is the depth
//! asked, not a measured distribution; `ctx`, `majf` and `minf` are not
//! counted (0).

use serde_json::{json, Map, Value};

use crate::analysis::histogram::LatencyHistogram;
use crate::document::run::{DirectionDoc, Figures, RunDocument, WorkerDoc};

/// fio's default `percentile_list`.
const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// What fio would say differently of the same run.
const NOTES: [&str; 4] = [
    "clat_ns and lat_ns are both stripebench's latency, from each I/O's issue to its completion; slat_ns is not measured (N 0)",
    "iodepth_level puts every I/O at the depth asked (--iodepth): the depth in flight is not sampled",
    "ctx, majf and minf are not counted (0)",
    "bw_* and iops_* statistics come from the --log-interval intervals (a mixed pattern's directions share them in proportion)",
];

/// The run document as fio's JSON output.
pub fn render(doc: &RunDocument) -> Vec<u8> {
    let (global, per_job) = options(doc);
    let jobs: Vec<Value> = doc
        .workers
        .iter()
        .map(|w| job(doc, w, per_job.get(w.id).cloned().unwrap_or_default()))
        .collect();
    let start = doc.window.start_unix_sec;
    let mut top = Map::new();
    top.insert(
        "fio version".into(),
        json!(format!("stripebench-{}", doc.tool.version)),
    );
    top.insert("timestamp".into(), json!(start as u64));
    top.insert("timestamp_ms".into(), json!((start * 1000.0) as u64));
    top.insert("time".into(), json!(ctime(start as i64)));
    top.insert("global options".into(), Value::Object(global));
    top.insert("jobs".into(), Value::Array(jobs));
    top.insert("disk_util".into(), disk_util(doc));
    top.insert(
        "stripebench".into(),
        json!({ "notes": NOTES, "fio_command": doc.fio.as_ref().and_then(|f| f.command.clone()) }),
    );
    let mut out = serde_json::to_vec_pretty(&Value::Object(top)).unwrap_or_default();
    out.push(b'\n');
    out
}

/// The options of the fio command `--print-fio` gave: those before the
/// first `--name` are global, each `--name` starts a job's.
fn options(doc: &RunDocument) -> (Map<String, Value>, Vec<Map<String, Value>>) {
    let mut global = Map::new();
    let mut jobs: Vec<Map<String, Value>> = Vec::new();
    let Some(cmd) = doc.fio.as_ref().and_then(|f| f.command.as_deref()) else {
        return (global, jobs);
    };
    for word in words(cmd).into_iter().skip(1) {
        let Some(opt) = word.strip_prefix("--") else {
            continue;
        };
        let (k, v) = opt.split_once('=').unwrap_or((opt, ""));
        if k == "name" {
            jobs.push(Map::new());
        }
        let into = match jobs.last_mut() {
            Some(j) => j,
            None => &mut global,
        };
        into.insert(k.to_string(), json!(v));
    }
    (global, jobs)
}

/// A command line's words: spaces apart, single quotes around a word with
/// other characters (`--print-fio`'s quoting), `'\''` a quote inside one.
fn words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' if !quoted => {
                cur.extend(chars.next());
                any = true;
            }
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// One worker as fio's job.
fn job(doc: &RunDocument, w: &WorkerDoc, mut options: Map<String, Value>) -> Value {
    // Each of --print-fio's jobs is one thread: fio-plot and others pick a
    // file by its rw, iodepth and numjobs.
    options.entry("numjobs").or_insert_with(|| json!("1"));
    let f = &w.figures;
    let runtime_ms = (f.seconds * 1000.0).round() as u64;
    let (reads, writes) = match &f.by_direction {
        Some(d) => (Some(&d.reads), Some(&d.writes)),
        None => (None, None),
    };
    let whole = |write: bool| -> Value {
        let moved = if write { w.write_ios } else { w.read_ios } > 0;
        if !moved {
            return ddir(&Side::empty(), runtime_ms);
        }
        let side = match (write, reads, writes) {
            (false, Some(r), _) => Side::of_direction(r, f, w),
            (true, _, Some(x)) => Side::of_direction(x, f, w),
            _ => Side::of_figures(f, w),
        };
        ddir(&side, runtime_ms)
    };
    let hist = LatencyHistogram::from_base64(&f.histogram).ok();
    let depth = doc.config.iodepth.max(1);
    let mut job = json!({
        "jobname": format!("w{}", w.id),
        "groupid": 0,
        "job_start": (doc.window.start_unix_sec * 1000.0) as u64,
        "error": w.errors_by_errno.first().map_or(0, |e| e.errno),
        "eta": 0,
        "elapsed": (doc.window.ramp_sec + doc.window.seconds).round() as u64,
        "job options": Value::Object(options),
        "read": whole(false),
        "write": whole(true),
        // A trim job's trims are all its I/O (a job never mixes them with
        // reads or writes): its figures whole, in fio's trim direction.
        "trim": if w.trim_ios > 0 {
            ddir(&Side::of_figures(f, w), runtime_ms)
        } else {
            ddir(&Side::empty(), runtime_ms)
        },
        "sync": { "total_ios": 0, "lat_ns": stats(None, 0) },
        "job_runtime": runtime_ms,
        "usr_cpu": pct(f.cpu_usr_sec, f.seconds),
        "sys_cpu": pct(f.cpu_sys_sec, f.seconds),
        "ctx": 0,
        "majf": 0,
        "minf": 0,
        "iodepth_level": depth_levels(depth),
        "iodepth_submit": batch_levels(),
        "iodepth_complete": batch_levels(),
        "latency_ns": buckets(hist.as_ref(), 1, &["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"], false),
        "latency_us": buckets(hist.as_ref(), 1_000, &["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"], false),
        "latency_ms": buckets(hist.as_ref(), 1_000_000, &["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000"], true),
        "latency_depth": depth,
        "latency_target": 0,
        "latency_percentile": 100.0,
        "latency_window": 0,
    });
    // --latency-target: fio's latency_depth is the depth its search found,
    // and the target and window are in its options' unit, microseconds.
    if let Some(q) = &w.latency_search {
        job["latency_depth"] = json!(q.depth);
        job["latency_target"] = json!(q.target_ns.div_ceil(1000));
        job["latency_percentile"] = json!(q.percentile);
        job["latency_window"] = json!(q.window_ns.div_ceil(1000));
    }
    // fio adds total_err and first_error to a job with continue_on_error:
    // every error counted, ignored or not (which came first in time is not
    // kept: an ignored one is named first).
    if doc.config.ignore_errors.is_some() {
        let all = || w.ignored_errors.iter().chain(&w.errors_by_errno);
        job["total_err"] = json!(all().map(|c| c.count).sum::<u64>());
        job["first_error"] = json!(all().next().map_or(0, |c| c.errno));
    }
    job
}

/// One direction's figures, from the worker's per-direction ones or its
/// whole ones.
struct Side {
    bytes: u64,
    ios: u64,
    short_ios: u64,
    bytes_per_sec: f64,
    iops: f64,
    hist: Option<LatencyHistogram>,
    /// Per-interval rates (bytes/s, I/O/s) for fio's bw_ and iops_ statistics.
    samples: Vec<(f64, f64)>,
}

impl Side {
    fn empty() -> Side {
        Side {
            bytes: 0,
            ios: 0,
            short_ios: 0,
            bytes_per_sec: 0.0,
            iops: 0.0,
            hist: None,
            samples: Vec::new(),
        }
    }

    fn of_figures(f: &Figures, w: &WorkerDoc) -> Side {
        Side {
            bytes: f.bytes,
            ios: f.ios,
            short_ios: f.short_ios,
            bytes_per_sec: f.bytes_per_sec,
            iops: f.iops,
            hist: LatencyHistogram::from_base64(&f.histogram).ok(),
            samples: samples(w, 1.0),
        }
    }

    fn of_direction(d: &DirectionDoc, f: &Figures, w: &WorkerDoc) -> Side {
        let share = if f.bytes > 0 {
            d.bytes as f64 / f.bytes as f64
        } else {
            0.0
        };
        Side {
            bytes: d.bytes,
            ios: d.ios,
            short_ios: 0,
            bytes_per_sec: d.bytes_per_sec,
            iops: d.iops,
            hist: LatencyHistogram::from_base64(&d.histogram).ok(),
            samples: samples(w, share),
        }
    }
}

/// The worker's per-interval rates, `share` of each (a direction's).
fn samples(w: &WorkerDoc, share: f64) -> Vec<(f64, f64)> {
    let len = |i: usize| -> f64 {
        match (w.intervals.get(i), w.intervals.get(i + 1)) {
            (Some(a), Some(b)) if b.t > a.t => b.t - a.t,
            _ => 0.0,
        }
    };
    // Whole intervals only: the last may be a part (its length unknown here).
    (0..w.intervals.len().saturating_sub(1))
        .filter(|&i| len(i) > 0.0)
        .map(|i| {
            let iv = &w.intervals[i];
            (
                share * iv.bytes as f64 / len(i),
                share * iv.ios as f64 / len(i),
            )
        })
        .collect()
}

/// fio's section of one data direction.
fn ddir(s: &Side, runtime_ms: u64) -> Value {
    let kib = |b: f64| b / 1024.0;
    let bw: Vec<f64> = s.samples.iter().map(|x| kib(x.0)).collect();
    let iops: Vec<f64> = s.samples.iter().map(|x| x.1).collect();
    let (bw_mean, bw_dev) = mean_dev(&bw);
    let (iops_mean, iops_dev) = mean_dev(&iops);
    let mut clat = stats(s.hist.as_ref(), s.ios);
    if let (Some(h), Value::Object(m)) = (&s.hist, &mut clat) {
        if s.ios > 0 {
            let p: Map<String, Value> = PERCENTILES
                .iter()
                .map(|q| (format!("{q:.6}"), json!(h.quantile(q / 100.0).unwrap_or(0))))
                .collect();
            m.insert("percentile".into(), Value::Object(p));
        }
    }
    json!({
        "io_bytes": s.bytes,
        "io_kbytes": s.bytes / 1024,
        "bw_bytes": s.bytes_per_sec.round() as u64,
        "bw": kib(s.bytes_per_sec).round() as u64,
        "iops": s.iops,
        "runtime": if s.ios > 0 { runtime_ms } else { 0 },
        "total_ios": s.ios,
        "short_ios": s.short_ios,
        "drop_ios": 0,
        "slat_ns": stats(None, 0),
        "clat_ns": clat,
        "lat_ns": stats(s.hist.as_ref(), s.ios),
        "bw_min": extent(&bw).0,
        "bw_max": extent(&bw).1,
        "bw_agg": if s.ios > 0 { 100.0 } else { 0.0 },
        "bw_mean": bw_mean,
        "bw_dev": bw_dev,
        "bw_samples": bw.len(),
        "iops_min": extent(&iops).0,
        "iops_max": extent(&iops).1,
        "iops_mean": iops_mean,
        "iops_stddev": iops_dev,
        "iops_samples": iops.len(),
    })
}

/// The least and greatest sample, rounded as fio writes them (0 and 0
/// without samples).
fn extent(v: &[f64]) -> (u64, u64) {
    let lo = v.iter().copied().reduce(f64::min).unwrap_or(0.0);
    let hi = v.iter().copied().reduce(f64::max).unwrap_or(0.0);
    (lo.round() as u64, hi.round() as u64)
}

/// fio's min/max/mean/stddev/N of a latency, in ns.
fn stats(h: Option<&LatencyHistogram>, n: u64) -> Value {
    match h.filter(|h| !h.is_empty()) {
        Some(h) => {
            let i = h.inner();
            json!({ "min": i.min(), "max": i.max(), "mean": i.mean(), "stddev": i.stdev(), "N": n })
        }
        None => json!({ "min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0 }),
    }
}

/// The mean and the sample standard deviation (fio's).
fn mean_dev(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    if v.len() < 2 {
        return (m, 0.0);
    }
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64;
    (m, var.sqrt())
}

fn pct(sec: f64, of: f64) -> f64 {
    if of > 0.0 {
        100.0 * sec / of
    } else {
        0.0
    }
}

/// fio's depth buckets, every I/O at `depth`'s.
fn depth_levels(depth: usize) -> Value {
    let keys = ["1", "2", "4", "8", "16", "32", ">=64"];
    let at = match depth {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    };
    Value::Object(
        keys.iter()
            .enumerate()
            .map(|(i, k)| (k.to_string(), json!(if i == at { 100.0 } else { 0.0 })))
            .collect(),
    )
}

/// fio's submission and completion batch buckets: one I/O at a time here
/// as far as is counted (fio's "4" holds 1 to 4).
fn batch_levels() -> Value {
    let keys = ["0", "4", "8", "16", "32", "64", ">=64"];
    Value::Object(
        keys.iter()
            .map(|k| (k.to_string(), json!(if *k == "4" { 100.0 } else { 0.0 })))
            .collect(),
    )
}

/// fio's latency buckets in `unit` ns: each key's share (percent) of the
/// I/Os at most that many units and above the key before; `and_above`
/// adds `>=` the last key.
fn buckets(h: Option<&LatencyHistogram>, unit: u64, keys: &[&str], and_above: bool) -> Value {
    let total = h.map_or(0, LatencyHistogram::len);
    let share = |n: u64| {
        if total > 0 {
            100.0 * n as f64 / total as f64
        } else {
            0.0
        }
    };
    let at_most = |ns: u64| h.map_or(0, |h| h.count_at_most(ns));
    let mut m = Map::new();
    // The unit's first bucket starts where the one below ended (1000 of it).
    let mut below = if unit > 1 { at_most(unit - 1) } else { 0 };
    for k in keys {
        let upto = k.parse::<u64>().unwrap_or(0) * unit;
        let n = at_most(upto);
        m.insert(k.to_string(), json!(share(n.saturating_sub(below))));
        below = n;
    }
    if and_above {
        let last = keys.last().and_then(|k| k.parse::<u64>().ok()).unwrap_or(0);
        m.insert(
            format!(">={last}"),
            json!(share(total.saturating_sub(below))),
        );
    }
    Value::Object(m)
}

/// The targets' device counters as fio's `disk_util`.
fn disk_util(doc: &RunDocument) -> Value {
    Value::Array(
        doc.targets
            .iter()
            .filter_map(|t| t.device.as_ref())
            .map(|d| {
                json!({
                    "name": d.name,
                    "read_ios": d.read_ios,
                    "write_ios": d.write_ios,
                    "read_merges": 0,
                    "write_merges": 0,
                    "read_ticks": 0,
                    "write_ticks": 0,
                    "in_queue": 0,
                    "util": d.util_pct,
                })
            })
            .collect(),
    )
}

/// `ctime`'s form of a UTC time (`Sun Dec  6 13:18:17 2026`), as fio's `time`.
fn ctime(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let (year, month, day) = crate::base::units::civil_from_days(days);
    let weekday = (days + 4).rem_euclid(7) as usize;
    const WD: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MO: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        WD[weekday],
        MO[(month - 1) as usize],
        day,
        secs / 3600,
        secs % 3600 / 60,
        secs % 60,
        year
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_is_fio_s_time_form() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        // The `date` of this module's first run.
        assert_eq!(ctime(1_796_563_097), "Sun Dec  6 13:18:17 2026");
        assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000");
    }

    #[test]
    fn print_fio_words_split_as_a_shell_would() {
        assert_eq!(
            words(r"fio --rw=read --name=w0 --filename='/tmp/a b' --x='' --y='it'\''s'"),
            [
                "fio",
                "--rw=read",
                "--name=w0",
                "--filename=/tmp/a b",
                "--x=",
                "--y=it's"
            ]
        );
    }
}
