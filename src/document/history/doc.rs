//! The `history` command's document: the disks a history knows, each with
//! its last result and its trend, one disk's series per workload, and the
//! drift and fail-slow verdicts (judged in `analysis::drift` and
//! `analysis::fail_slow`; gathered and worded here).

use std::collections::BTreeMap;

use serde::Serialize;

use super::Entry;
use crate::analysis::drift::{self, Change, Metric};
use crate::analysis::fail_slow::{self, Point};
use crate::analysis::summary::median;
use crate::device::identity::DiskIdentity;
use crate::document::run::ToolInfo;

/// How the verdicts are made (`history`'s options).
#[derive(Debug, Clone)]
pub struct Judging {
    /// The baseline: a series' first `baseline` runs...
    pub baseline: usize,
    /// ... or its runs up to this Unix time.
    pub until: Option<f64>,
    /// The recent runs: the last `recent` after the baseline.
    pub recent: usize,
    pub alpha: f64,
    pub threshold_pct: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct HistoryDocument {
    pub kind: &'static str,
    pub schema_version: u32,
    pub tool: ToolInfo,
    /// The database read.
    pub database: String,
    /// Results in it (of the disks shown).
    pub results: usize,
    pub disks: Vec<DiskDoc>,
    /// Series with runs on both sides of the baseline: those drift judged.
    pub drift_tested: usize,
    /// Series that drifted from their baseline, the worst change first.
    pub drift: Vec<DriftDoc>,
    /// Disks above their peers' prediction bound, worst first, per group.
    pub fail_slow: Vec<FailSlowDoc>,
    /// Groups of peers too small to fit (fewer than 4 disks of one model,
    /// firmware and workload), as "MODEL FIRMWARE, WORKLOAD: N disks".
    pub unfitted: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DiskDoc {
    pub key: String,
    /// How the key was found: wwn, serial, backing-file, zram, volume,
    /// name, file.
    pub identity: &'static str,
    pub wwn: Option<String>,
    pub serial: Option<String>,
    pub model: Option<String>,
    pub firmware: Option<String>,
    /// Its host and device name at its last result.
    pub host: String,
    pub device: String,
    pub results: usize,
    /// Its most measured series: its last result, the change of its recent
    /// runs' median MB/s against its baseline's, and its MB/s in order.
    pub main: Option<SeriesDoc>,
    /// Every series (with `history DISK`), the most measured first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<SeriesDoc>,
    /// "drift", "fail-slow", or both.
    pub flags: Vec<&'static str>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SeriesDoc {
    pub workload: String,
    pub label: String,
    pub context: String,
    pub runs: usize,
    pub last: PointDoc,
    /// Recent median MB/s against the baseline's, percent (None: no runs
    /// after the baseline).
    pub rate_change_pct: Option<f64>,
    pub p99_change_pct: Option<f64>,
    /// The latency of every I/O of the baseline's runs and of the recent
    /// runs, their histograms merged (with `history DISK`; None in the
    /// list, or when no run of that side kept a histogram).
    pub baseline_latency: Option<MergedDoc>,
    pub recent_latency: Option<MergedDoc>,
    pub points: Vec<PointDoc>,
}

/// Runs' latencies merged from their histograms: the percentiles of all
/// their I/Os together, as exact as one run as long as theirs (a median of
/// the runs' p99s is not).
#[derive(Debug, Clone, Serialize)]
pub struct MergedDoc {
    /// Runs merged: those whose histogram was kept and could be read.
    pub runs: usize,
    pub ios: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PointDoc {
    pub time: f64,
    pub host: String,
    pub device: String,
    pub mb_per_sec: f64,
    pub iops: f64,
    /// The I/Os the figures rest on (None: recorded before it was kept).
    pub ios: Option<u64>,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub p999_ns: Option<u64>,
    /// Why this figure is not the device's speed; such runs are shown,
    /// never judged.
    pub not_device_speed: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DriftDoc {
    pub disk: String,
    pub device: String,
    pub label: String,
    pub context: String,
    /// "MB/s" or "p99".
    pub metric: &'static str,
    pub change_pct: f64,
    pub p: f64,
    pub n_baseline: usize,
    pub n_recent: usize,
    /// When the baseline began (Unix seconds).
    pub since: f64,
    pub line: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct FailSlowDoc {
    pub rank: usize,
    pub disk: String,
    pub host: String,
    pub device: String,
    pub model: String,
    pub firmware: String,
    pub label: String,
    pub context: String,
    pub peers: usize,
    pub mb_per_sec: f64,
    pub p99_ns: f64,
    pub predicted_p99_ns: f64,
    pub bound_p99_ns: f64,
    pub ratio: f64,
    /// The median I/Os of the runs its p99 came from (None: not kept).
    /// Under [`FEW_IOS`] the p99 is little more than the slowest I/O, and
    /// the line says so.
    pub ios_per_run: Option<u64>,
    pub line: String,
}

/// Fewer I/Os a run than this, and a p99 is one of the slowest few.
pub const FEW_IOS: u64 = 100;

/// One disk's entries, by series.
struct Disk<'a> {
    id: &'a DiskIdentity,
    last: &'a Entry,
    count: usize,
    series: BTreeMap<(&'a str, &'a str), Vec<&'a Entry>>,
}

/// The document of `entries` (in time order), every disk judged.
/// `only`: the disks shown (with every series of each, not only its main
/// one), and the verdicts on them; all, with their main series, when `None`.
pub fn assemble(
    database: String,
    entries: &[Entry],
    j: &Judging,
    only: Option<&[String]>,
) -> HistoryDocument {
    let detail = only.is_some();
    let mut disks: BTreeMap<&str, Disk> = BTreeMap::new();
    for e in entries {
        let d = disks
            .entry(e.identity.key.as_str())
            .or_insert_with(|| Disk {
                id: &e.identity,
                last: e,
                count: 0,
                series: BTreeMap::new(),
            });
        d.count += 1;
        d.last = e;
        d.id = &e.identity;
        d.series
            .entry((e.workload.as_str(), e.context.as_str()))
            .or_default()
            .push(e);
    }
    let mut drifts = Vec::new();
    let mut docs = Vec::new();
    let mut tested = 0;
    for d in disks.values() {
        let mut series: Vec<SeriesDoc> = Vec::new();
        for runs in d.series.values() {
            let (s, changes) = series_doc(runs, j);
            tested += usize::from(!changes.is_empty());
            for c in changes.into_iter().filter(|c| c.drifted) {
                drifts.push(drift_doc(d, runs, &c));
            }
            series.push(s);
        }
        series.sort_by(|a, b| b.runs.cmp(&a.runs).then(a.label.cmp(&b.label)));
        docs.push(DiskDoc {
            key: d.id.key.clone(),
            identity: d.id.kind.name(),
            wwn: d.id.wwn.clone(),
            serial: d.id.serial.clone(),
            model: d.id.model.clone(),
            firmware: d.id.firmware.clone(),
            host: d.last.host.clone(),
            device: d.last.device.clone(),
            results: d.count,
            main: series.first().cloned(),
            series: if detail { series } else { Vec::new() },
            flags: Vec::new(),
        });
    }
    drifts.sort_by(|a, b| b.change_pct.abs().total_cmp(&a.change_pct.abs()));
    let (mut fail_slow, unfitted) = peers(&disks, j);
    for d in &mut docs {
        if drifts.iter().any(|x| x.disk == d.key) {
            d.flags.push("drift");
        }
        if fail_slow.iter().any(|x| x.disk == d.key) {
            d.flags.push("fail-slow");
        }
        if !detail {
            if let Some(m) = &mut d.main {
                // The list keeps each disk's rates, not every point's detail.
                m.points.iter_mut().for_each(|p| {
                    p.host.clear();
                    p.device.clear();
                });
            }
        }
    }
    if let Some(keys) = only {
        let shown = |k: &String| keys.contains(k);
        docs.retain(|d| shown(&d.key));
        drifts.retain(|d| shown(&d.disk));
        fail_slow.retain(|f| shown(&f.disk));
    }
    let results = docs.iter().map(|d| d.results).sum();
    HistoryDocument {
        kind: "history",
        schema_version: crate::document::run::SCHEMA_VERSION,
        tool: ToolInfo::this(),
        database,
        results,
        drift_tested: tested,
        disks: docs,
        drift: drifts,
        fail_slow,
        unfitted,
    }
}

fn point(e: &Entry) -> PointDoc {
    PointDoc {
        time: e.time,
        host: e.host.clone(),
        device: e.device.clone(),
        mb_per_sec: e.bytes_per_sec / 1e6,
        iops: e.iops,
        ios: e.ios,
        p50_ns: e.p50_ns,
        p99_ns: e.p99_ns,
        p999_ns: e.p999_ns,
        not_device_speed: e.not_device_speed.clone(),
    }
}

/// The runs that are the device's speed.
fn judged<'a>(runs: &[&'a Entry]) -> Vec<&'a Entry> {
    runs.iter()
        .copied()
        .filter(|e| e.not_device_speed.is_none())
        .collect()
}

/// A series' document, and its changes against its baseline.
fn series_doc(runs: &[&Entry], j: &Judging) -> (SeriesDoc, Vec<Change>) {
    let good = judged(runs);
    let times: Vec<f64> = good.iter().map(|e| e.time).collect();
    let (nb, nr) = drift::split(&times, j.baseline, j.until, j.recent);
    let base = &good[..nb];
    let recent = &good[good.len() - nr..];
    let rate = |s: &[&Entry]| s.iter().map(|e| e.bytes_per_sec).collect::<Vec<f64>>();
    let p99 = |s: &[&Entry]| {
        s.iter()
            .filter_map(|e| e.p99_ns)
            .map(|p| p as f64)
            .collect::<Vec<f64>>()
    };
    let changes: Vec<Change> = [
        drift::compare(
            Metric::Rate,
            &rate(base),
            &rate(recent),
            j.alpha,
            j.threshold_pct,
        ),
        drift::compare(
            Metric::P99,
            &p99(base),
            &p99(recent),
            j.alpha,
            j.threshold_pct,
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    let last = runs[runs.len() - 1];
    let doc = SeriesDoc {
        workload: last.workload.clone(),
        label: last.label.clone(),
        context: last.context.clone(),
        runs: runs.len(),
        last: point(last),
        rate_change_pct: changes
            .iter()
            .find(|c| c.metric == Metric::Rate)
            .map(|c| c.change_pct),
        p99_change_pct: changes
            .iter()
            .find(|c| c.metric == Metric::P99)
            .map(|c| c.change_pct),
        baseline_latency: merged(base),
        recent_latency: if nr > 0 { merged(recent) } else { None },
        points: runs.iter().map(|e| point(e)).collect(),
    };
    (doc, changes)
}

/// The latency of all of `runs`' I/Os, from the histograms they kept (a
/// histogram that does not decode is left out, and `runs` says so).
fn merged(runs: &[&Entry]) -> Option<MergedDoc> {
    use crate::analysis::histogram::LatencyHistogram;
    let mut all = LatencyHistogram::new();
    let mut n = 0;
    for e in runs.iter().filter(|e| !e.histogram.is_empty()) {
        if let Ok(h) = LatencyHistogram::from_base64(&e.histogram) {
            all.merge(&h);
            n += 1;
        }
    }
    let s = all.summary()?;
    Some(MergedDoc {
        runs: n,
        ios: all.len(),
        p50_ns: s.p50,
        p99_ns: s.p99,
        p999_ns: s.p99_9,
    })
}

fn drift_doc(d: &Disk, runs: &[&Entry], c: &Change) -> DriftDoc {
    let since = judged(runs).first().map_or(0.0, |e| e.time);
    let p = c.p.unwrap_or(1.0);
    let shown_p = if p < 0.001 {
        "p < 0.001".to_string()
    } else {
        format!("p = {p:.3}")
    };
    let label = &d.last.label;
    let line = format!(
        "{} (now {}): {label} {} {:+.0}% against its baseline from {} ({shown_p}, {} runs against {})",
        show_key(d.id),
        crate::base::error::show_text(&d.last.device),
        c.metric.name(),
        c.change_pct,
        date(since),
        c.n_recent,
        c.n_baseline,
    );
    DriftDoc {
        disk: d.id.key.clone(),
        device: d.last.device.clone(),
        label: label.clone(),
        context: d.last.context.clone(),
        metric: c.metric.name(),
        change_pct: c.change_pct,
        p,
        n_baseline: c.n_baseline,
        n_recent: c.n_recent,
        since,
        line,
    }
}

/// Bytes per second as MB/s, to three significant digits below 100
/// (a throttled disk's 0.012 MB/s is not 0.0).
fn mb(bytes_per_sec: f64) -> String {
    let v = bytes_per_sec / 1e6;
    match v {
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 10.0 => format!("{v:.1}"),
        v if v >= 1.0 => format!("{v:.2}"),
        v => format!("{v:.3}"),
    }
}

/// A disk's key as a line shows it: "WWN 0x5000...", "serial S123 (MODEL)".
pub fn show_key(id: &DiskIdentity) -> String {
    use crate::base::error::show_text;
    use crate::device::identity::IdentityKind;
    match (id.kind, &id.wwn, &id.serial) {
        (IdentityKind::Wwn, Some(w), _) => format!("WWN {}", show_text(w)),
        (IdentityKind::Serial, _, Some(s)) => format!(
            "serial {} ({})",
            show_text(s),
            show_text(id.model.as_deref().unwrap_or("no model"))
        ),
        _ => show_text(&id.key).into_owned(),
    }
}

/// A Unix time as a UTC date and minute, "2026-11-02 14:05".
pub fn date_time(t: f64) -> String {
    let day = date(t);
    if !t.is_finite() || day.starts_with('(') {
        return day;
    }
    let secs = t.rem_euclid(86400.0) as u64;
    format!("{day} {:02}:{:02}", secs / 3600, secs % 3600 / 60)
}

/// A Unix time as a UTC date, "2026-11-02".
pub fn date(t: f64) -> String {
    // Years 0 to 9999: a time outside them (a damaged database's) has no date.
    if !(-62_167_219_200.0..253_402_300_800.0).contains(&t) {
        return "(no date)".into();
    }
    let (y, m, d) = crate::base::units::civil_from_days((t / 86400.0).floor() as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

type PeerKey<'a> = (String, String, &'a str, &'a str);

/// A disk in a group of peers: its point (recent median MB/s and p99), and
/// the median I/Os of the runs behind it.
type Peer<'a> = (&'a Disk<'a>, Point, Option<u64>);

/// The fail-slow verdicts: per model, firmware and series, each disk's
/// recent medians against its peers' fit.
fn peers(disks: &BTreeMap<&str, Disk>, j: &Judging) -> (Vec<FailSlowDoc>, Vec<String>) {
    let mut groups: BTreeMap<PeerKey, Vec<Peer>> = BTreeMap::new();
    for d in disks.values() {
        // Only a disk's own identity has peers: a model to be one of.
        let (Some(model), true) = (&d.id.model, d.id.kind.is_disk()) else {
            continue;
        };
        for (&(w, c), runs) in &d.series {
            let good = judged(runs);
            let recent = &good[good.len().saturating_sub(j.recent.max(1))..];
            let p99: Vec<f64> = recent
                .iter()
                .filter_map(|e| e.p99_ns)
                .map(|p| p as f64)
                .collect();
            if recent.is_empty() || p99.is_empty() {
                continue;
            }
            let point = Point {
                bytes_per_sec: median(recent.iter().map(|e| e.bytes_per_sec).collect()),
                p99_ns: median(p99),
            };
            // A figure that is no rate or latency (a damaged database's)
            // joins no group: it would stop the group's fit.
            let ok = |v: f64| v.is_finite() && v > 0.0;
            if !ok(point.bytes_per_sec) || !ok(point.p99_ns) {
                continue;
            }
            let ios: Vec<f64> = recent
                .iter()
                .filter_map(|e| e.ios)
                .map(|n| n as f64)
                .collect();
            let ios = (!ios.is_empty()).then(|| median(ios) as u64);
            let fw = d.id.firmware.clone().unwrap_or_default();
            groups
                .entry((model.clone(), fw, w, c))
                .or_default()
                .push((d, point, ios));
        }
    }
    let mut out = Vec::new();
    let mut unfitted = Vec::new();
    for ((model, fw, _, _), members) in &groups {
        let pts: Vec<Point> = members.iter().map(|m| m.1).collect();
        let label = &members[0].0.last.label;
        let Some(fit) = fail_slow::fit(&pts, fail_slow::BOUND_SIGMAS, fail_slow::BOUND_FLOOR_PCT)
        else {
            unfitted.push(format!(
                "{} {}, {label}: {} disk(s)",
                crate::base::error::show_text(model),
                crate::base::error::show_text(fw),
                members.len()
            ));
            continue;
        };
        let mut rank = 0;
        for v in fail_slow::judge(&pts, &fit).into_iter().filter(|v| v.above) {
            rank += 1;
            let (d, p, ios) = members[v.index];
            let few = ios.filter(|&n| n < FEW_IOS).map_or(String::new(), |n| {
                format!("; its p99 rests on {n} I/Os a run: little more than its slowest")
            });
            out.push(FailSlowDoc {
                rank,
                disk: d.id.key.clone(),
                host: d.last.host.clone(),
                device: d.last.device.clone(),
                model: model.clone(),
                firmware: fw.clone(),
                label: label.clone(),
                context: d.last.context.clone(),
                peers: members.len(),
                mb_per_sec: p.bytes_per_sec / 1e6,
                p99_ns: p.p99_ns,
                predicted_p99_ns: v.predicted_ns,
                bound_p99_ns: v.bound_ns,
                ratio: v.ratio,
                ios_per_run: ios,
                line: format!(
                    "{rank}. {} (now {} on {}): {label} p99 {} at {} MB/s, {:.1}x the fit over {} {} disks ({} there; bound {}){few}",
                    show_key(d.id),
                    crate::base::error::show_text(&d.last.device),
                    crate::base::error::show_text(&d.last.host),
                    crate::base::units::fmt_latency_ns(p.p99_ns),
                    mb(p.bytes_per_sec),
                    v.ratio,
                    members.len(),
                    crate::base::error::show_text(model),
                    crate::base::units::fmt_latency_ns(v.predicted_ns),
                    crate::base::units::fmt_latency_ns(v.bound_ns),
                ),
            });
        }
    }
    (out, unfitted)
}
