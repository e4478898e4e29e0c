//! The diff document (`diff --json`): two documents of one kind (run,
//! sweep, compare or merge) side by side, row by row (targets and the total,
//! sweep points, compare phases, hosts and the fleet), each row's MB/s,
//! IOPS and latency percentiles with their change, whether the change is
//! beyond the noise, and which rows crossed `--threshold`. The judgement
//! (the test, the change, the threshold rule) is `analysis::significance`;
//! this file gathers each row's figures and samples and writes what it said.
//!
//! The command reads both documents (`read::read` refuses, one line each, a
//! truncated file, JSON that is not a stripebench document, another schema
//! version, a diff or plan document, a document whose arithmetic does not
//! add up); [`diff`] refuses two documents of different kinds and (unless
//! `--force`) two different workloads (`workload`).

use serde::{Deserialize, Serialize};

use crate::analysis::histogram::LatencySummary;
use crate::analysis::significance::{self, Figures, RateSamples};
use crate::analysis::summary::median;
use crate::document::advise::{Finding, FindingsDocument, Measurement};
use crate::document::compare::CompareDocument;
use crate::document::error::{Error, Result};
use crate::document::merge::MergedDocument;
use crate::document::read::{Document, Given, Kind};
use crate::document::run::ConfigDoc;
use crate::document::run::{RunDocument, TargetDoc, ToolInfo, WorkerDoc, SCHEMA_VERSION};
use crate::document::sweep::SweepDocument;
use crate::document::workload::Workload;

/// The five figures of every row, in order.
pub const METRICS: [&str; significance::FIGURES] =
    ["bytes_per_sec", "iops", "p50_ns", "p99_ns", "p99_9_ns"];

/// What the test said of one change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// p < alpha: beyond the noise.
    Significant,
    /// p ≥ alpha: within the noise.
    Noise,
    /// No test: too few samples, or none to test (see `note`).
    Untested,
}

impl From<significance::Verdict> for Verdict {
    fn from(v: significance::Verdict) -> Verdict {
        match v {
            significance::Verdict::Significant => Verdict::Significant,
            significance::Verdict::Noise => Verdict::Noise,
            significance::Verdict::Untested => Verdict::Untested,
        }
    }
}

/// The two-sample test of one figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestDoc {
    pub verdict: Verdict,
    /// "mann-whitney-u" when a test ran.
    pub test: Option<String>,
    /// "exact" or "normal approximation".
    pub method: Option<String>,
    /// What was compared: "per-second intervals" or "repeats".
    pub samples: Option<String>,
    pub n_base: usize,
    pub n_new: usize,
    /// U of the base samples.
    pub u: Option<f64>,
    /// Two-sided p-value.
    pub p: Option<f64>,
    /// Why no test ran.
    pub note: Option<String>,
}

/// One figure of one row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricDiff {
    /// One of [`METRICS`].
    pub metric: String,
    pub base: Option<f64>,
    pub new: Option<f64>,
    /// (new - base) / base, in percent; null when base is 0 or either is missing.
    pub change_pct: Option<f64>,
    pub test: TestDoc,
    /// This change crossed `--threshold`.
    pub crossed: bool,
}

/// One row: a target, a point, a phase, a host, or the total.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowDiff {
    /// "target", "total", "point", "phase", "host" or "fleet".
    pub group: String,
    pub label: String,
    /// The row's name in the new document, when it differs (another target path).
    pub new_label: Option<String>,
    pub metrics: Vec<MetricDiff>,
}

/// One side of the diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideDoc {
    pub path: String,
    pub tool_version: String,
    /// The hosts it ran on.
    pub hosts: Vec<String>,
    /// The measured window (the first run's, in a sweep or compare), seconds.
    pub seconds: f64,
}

/// The diff document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffDocument {
    pub schema_version: u32,
    /// Always "diff".
    pub kind: String,
    pub tool: ToolInfo,
    /// The kind of the two documents.
    pub of: Kind,
    pub base: SideDoc,
    pub new: SideDoc,
    /// The workload both ran, in words.
    pub workload: String,
    /// Significance level of the test.
    pub alpha: f64,
    pub threshold_pct: Option<f64>,
    pub rows: Vec<RowDiff>,
    /// Rows (points, phases, hosts) found in one document only.
    pub only_in_base: Vec<String>,
    pub only_in_new: Vec<String>,
    /// Workload differences that `--force` let through.
    pub differences: Vec<String>,
    /// Differences of setup that do not make another workload (target
    /// paths, duration, host, read-ahead, ...).
    pub notes: Vec<String>,
    /// The changes that crossed `--threshold`, as "ROW METRIC CHANGE".
    pub crossed: Vec<String>,
}

/// What the diff was asked.
#[derive(Debug, Clone, Copy)]
pub struct DiffOptions {
    pub alpha: f64,
    pub threshold_pct: Option<f64>,
    pub force: bool,
}

/// The kinds diff takes.
pub const TAKES: [Kind; 5] = crate::document::kind::READ_BACK;

/// The workload in words, for the report's head.
fn workload_words(c: &ConfigDoc, targets: usize, swept: &[String]) -> String {
    // A sweep's own parameters vary from point to point: left out.
    let keep = |param: &str| !swept.iter().any(|p| p == param);
    let mut parts = Vec::new();
    if keep("rw") {
        parts.push(
            match c.rw.name() {
                "randrw" | "rw" => format!("{} {}% reads", c.rw.name(), c.read_pct),
                other => other.to_string(),
            } + &c.access_words(),
        );
    }
    if keep("bs") {
        let bs =
            c.bs.parse::<u64>()
                .map_or(c.bs.clone(), crate::base::units::fmt_size_arg);
        parts.push(format!("bs {bs}"));
    }
    if keep("mode") {
        parts.push(if c.direct { "O_DIRECT" } else { "buffered" }.to_string());
    }
    parts.push(format!("engine {}", c.engine.name()));
    if keep("iodepth") {
        parts.push(format!("iodepth {}", c.iodepth));
    }
    if keep("members") {
        parts.push(format!("{targets} target(s)"));
    }
    if keep("jobs") {
        parts.push(format!(
            "{} job(s) per target{}",
            c.jobs,
            if c.jobs_share {
                " sharing its region"
            } else {
                ""
            }
        ));
    }
    if let (true, Some(r)) = (keep("rate"), c.rate) {
        parts.push(format!("rate {} per worker", r.label()));
    }
    parts.join(", ")
}

/// Setup differences worth saying (not refused).
fn setup_notes(a: &RunDocument, b: &RunDocument, at: &str, notes: &mut Vec<String>) {
    let mut say = |what: &str, x: String, y: String| {
        if x != y {
            let n = format!("{at}{what}: {x} vs {y}");
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    };
    say(
        "targets",
        a.config.targets.join(","),
        b.config.targets.join(","),
    );
    say(
        "duration",
        format!("{}s", a.config.duration_sec),
        format!("{}s", b.config.duration_sec),
    );
    say(
        "ramp",
        format!("{}s", a.config.ramp_sec),
        format!("{}s", b.config.ramp_sec),
    );
    let ra = |d: &RunDocument| {
        d.config
            .readahead_kb
            .map_or("as found".into(), |k| format!("{k} KiB"))
    };
    say("readahead", ra(a), ra(b));
    say(
        "register",
        a.config.register.to_string(),
        b.config.register.to_string(),
    );
    say("host", a.host.hostname.clone(), b.host.hostname.clone());
    say("kernel", a.host.kernel.clone(), b.host.kernel.clone());
    say(
        "stripebench",
        a.tool.version.clone(),
        b.tool.version.clone(),
    );
    let cache = |d: &RunDocument| {
        d.cache
            .as_ref()
            .map_or("unknown".into(), |c| c.state.clone())
    };
    say("page cache", cache(a), cache(b));
    let interrupted = |d: &RunDocument| {
        if d.interrupted {
            "interrupted".to_string()
        } else {
            "complete".to_string()
        }
    };
    say("run", interrupted(a), interrupted(b));
}

/// Per-second rates of some workers over a window: the sum of their
/// bytes and I/Os in each whole second of it (a second in which none of
/// them completed an I/O is 0), bytes per second and I/Os per second.
/// The window's last, partial second is left out.
fn per_second<'a>(
    workers: impl Iterator<Item = &'a WorkerDoc>,
    seconds: f64,
) -> (Vec<f64>, Vec<f64>) {
    // Whole seconds; the slack covers a deadline a hair early.
    let whole = (seconds + 1e-3).floor().max(0.0) as usize;
    let mut bytes = vec![0.0; whole];
    let mut ios = vec![0.0; whole];
    for w in workers {
        for i in &w.intervals {
            let t = i.t as usize;
            if t < whole {
                bytes[t] += i.bytes as f64;
                ios[t] += i.ios as f64;
            }
        }
    }
    (bytes, ios)
}

/// Refuses a document with a run whose intervals (`--log-interval`) do not
/// divide a second: the test's samples are per second, and [`per_second`]
/// sums shorter intervals into the second they lie in.
fn per_second_runs(g: &Given) -> Result<()> {
    let runs: Vec<&RunDocument> = match &g.document {
        Document::Run(d) => vec![d],
        Document::Sweep(s) => s.points.iter().flat_map(|p| &p.runs).collect(),
        Document::Compare(c) => c.phases.iter().map(|p| &p.document).collect(),
        _ => Vec::new(),
    };
    for r in runs {
        crate::document::run::per_second(&[], r.log_interval_ms()).map_err(|why| {
            Error::NotPerSecond {
                file: g.shown.clone(),
                why: format!("diff tests per-second samples, but {why}"),
            }
        })?;
    }
    Ok(())
}

/// Per-second samples of some workers' rates.
fn interval_samples<'a>(
    workers: impl Iterator<Item = &'a WorkerDoc>,
    seconds: f64,
) -> Option<RateSamples> {
    let (b, i) = per_second(workers, seconds);
    Some((b, i, "per-second intervals"))
}

fn total_figures(d: &RunDocument) -> Figures {
    Figures {
        bytes_per_sec: Some(d.total.figures.bytes_per_sec),
        iops: Some(d.total.figures.iops),
        latency: pcts(&d.total.figures.latency_ns),
        rate_samples: interval_samples(d.workers.iter(), d.window.seconds),
        latency_samples: None,
    }
}

/// The document's record of what `significance::test` said.
fn test_doc(t: significance::Test) -> TestDoc {
    TestDoc {
        verdict: t.verdict.into(),
        test: t.test.map(String::from),
        method: t.method.map(String::from),
        samples: t.samples.map(String::from),
        n_base: t.n_base,
        n_new: t.n_new,
        u: t.u,
        p: t.p,
        note: t.note,
    }
}

/// One row from both sides' figures, with the threshold applied.
fn row(
    group: &str,
    label: String,
    new_label: Option<String>,
    a: &Figures,
    b: &Figures,
    o: &DiffOptions,
) -> RowDiff {
    let metrics = (0..METRICS.len())
        .map(|m| {
            let (base, new) = (a.get(m), b.get(m));
            let change_pct = significance::change_pct(base, new);
            let t = significance::test(m, a, b, o.alpha);
            let crossed = significance::crossed(m, o.threshold_pct, change_pct, t.verdict);
            let test = test_doc(t);
            MetricDiff {
                metric: METRICS[m].into(),
                base,
                new,
                change_pct,
                test,
                crossed,
            }
        })
        .collect();
    RowDiff {
        group: group.into(),
        label,
        new_label,
        metrics,
    }
}

/// Rows matched by name: (label, base index, new index) in base order,
/// then the names only the base has, then those only the new one has.
type Matched = (Vec<(String, usize, usize)>, Vec<String>, Vec<String>);

/// Matches rows by name (see [`Matched`]).
fn match_by<T>(a: &[T], b: &[T], name: impl Fn(&T) -> String) -> Matched {
    let names_a: Vec<String> = a.iter().map(&name).collect();
    let names_b: Vec<String> = b.iter().map(&name).collect();
    let mut used = vec![false; b.len()];
    let mut pairs = Vec::new();
    let mut only_a = Vec::new();
    for (i, n) in names_a.iter().enumerate() {
        match (0..b.len()).find(|&j| !used[j] && names_b[j] == *n) {
            Some(j) => {
                used[j] = true;
                pairs.push((n.clone(), i, j));
            }
            None => only_a.push(n.clone()),
        }
    }
    let only_b = (0..b.len())
        .filter(|&j| !used[j])
        .map(|j| names_b[j].clone())
        .collect();
    (pairs, only_a, only_b)
}

/// Pairs the targets of two runs, as indices into `a` and `b`: a path both
/// runs drove is one row whatever its position (the same devices named in
/// another order are not crossed); the targets left are paired in order (a
/// device renamed between the runs), and what remains is only in one run.
fn pair_targets(a: &[TargetDoc], b: &[TargetDoc]) -> (Vec<(usize, usize)>, Vec<usize>, Vec<usize>) {
    let mut used = vec![false; b.len()];
    let mut by_path = vec![None; a.len()];
    for (i, ta) in a.iter().enumerate() {
        if let Some(j) = (0..b.len()).find(|&j| !used[j] && b[j].path == ta.path) {
            used[j] = true;
            by_path[i] = Some(j);
        }
    }
    let mut rest_b = (0..b.len()).filter(|&j| !used[j]);
    let mut pairs = Vec::new();
    let mut only_a = Vec::new();
    for (i, m) in by_path.into_iter().enumerate() {
        match m.or_else(|| rest_b.next()) {
            Some(j) => pairs.push((i, j)),
            None => only_a.push(i),
        }
    }
    (pairs, only_a, rest_b.collect())
}

/// Everything a diff of one kind produces before the threshold list.
struct Parts {
    rows: Vec<RowDiff>,
    only_in_base: Vec<String>,
    only_in_new: Vec<String>,
    /// Workload differences (refused unless --force).
    differences: Vec<String>,
    notes: Vec<String>,
    workload: String,
}

fn side(shown: &str, tool: &ToolInfo, hosts: Vec<String>, seconds: f64) -> SideDoc {
    SideDoc {
        path: shown.to_string(),
        tool_version: tool.version.clone(),
        hosts,
        seconds,
    }
}

fn diff_runs(a: &RunDocument, b: &RunDocument, o: &DiffOptions) -> Parts {
    let wa = Workload::of(&a.config).with_targets(a.targets.len());
    let wb = Workload::of(&b.config).with_targets(b.targets.len());
    let mut notes = Vec::new();
    setup_notes(a, b, "", &mut notes);
    let mut rows = Vec::new();
    let (pairs, only_a, only_b) = pair_targets(&a.targets, &b.targets);
    for (ta, tb) in pairs.iter().map(|&(i, j)| (&a.targets[i], &b.targets[j])) {
        let fa = Figures {
            bytes_per_sec: Some(ta.figures.bytes_per_sec),
            iops: Some(ta.figures.iops),
            latency: pcts(&ta.figures.latency_ns),
            rate_samples: interval_samples(
                a.workers.iter().filter(|w| w.target_index == ta.index),
                a.window.seconds,
            ),
            latency_samples: None,
        };
        let fb = Figures {
            bytes_per_sec: Some(tb.figures.bytes_per_sec),
            iops: Some(tb.figures.iops),
            latency: pcts(&tb.figures.latency_ns),
            rate_samples: interval_samples(
                b.workers.iter().filter(|w| w.target_index == tb.index),
                b.window.seconds,
            ),
            latency_samples: None,
        };
        let new_label = (tb.path != ta.path).then(|| tb.path.clone());
        rows.push(row("target", ta.path.clone(), new_label, &fa, &fb, o));
    }
    rows.push(row(
        "total",
        "TOTAL".into(),
        None,
        &total_figures(a),
        &total_figures(b),
        o,
    ));
    // A mixed pattern on both sides: reads and writes apart (their rates
    // have no per-second samples of their own, so they are not tested).
    if let (Some(da), Some(db)) = (&a.total.figures.by_direction, &b.total.figures.by_direction) {
        let fig = |d: &crate::document::run::DirectionDoc| Figures {
            bytes_per_sec: Some(d.bytes_per_sec),
            iops: Some(d.iops),
            latency: pcts(&d.latency_ns),
            rate_samples: None,
            latency_samples: None,
        };
        for (label, x, y) in [
            ("TOTAL reads", &da.reads, &db.reads),
            ("TOTAL writes", &da.writes, &db.writes),
        ] {
            rows.push(row("total", label.into(), None, &fig(x), &fig(y), o));
        }
    }
    let only_in_base = only_a.iter().map(|&i| a.targets[i].path.clone()).collect();
    let only_in_new = only_b.iter().map(|&j| b.targets[j].path.clone()).collect();
    Parts {
        rows,
        only_in_base,
        only_in_new,
        differences: wa.differences(&wb, ""),
        notes,
        workload: workload_words(&a.config, a.targets.len(), &[]),
    }
}

/// p50, p99 and p99.9 of a latency summary, in ns.
fn pcts(l: &Option<LatencySummary>) -> Option<[f64; 3]> {
    l.as_ref()
        .map(|l| [l.p50 as f64, l.p99 as f64, l.p99_9 as f64])
}

/// A sweep point's figures: the median of its repeats' rates, IOPS and
/// latency percentiles; samples from the repeats when there are enough of
/// them on both sides, else from every repeat's per-second totals.
fn point_figures(p: &crate::document::sweep::PointDoc, repeats_testable: bool) -> Figures {
    let iops: Vec<f64> = p.runs.iter().map(|r| r.total.figures.iops).collect();
    let lat: Vec<[f64; 3]> = p
        .runs
        .iter()
        .filter_map(|r| pcts(&r.total.figures.latency_ns))
        .collect();
    let lat_k = |k: usize| -> Vec<f64> { lat.iter().map(|l| l[k]).collect() };
    let mut f = Figures {
        bytes_per_sec: Some(p.bytes_per_sec_median),
        iops: (!iops.is_empty()).then(|| median(iops.clone())),
        latency: (!lat.is_empty()).then(|| [0, 1, 2].map(|k| median(lat_k(k)))),
        ..Figures::default()
    };
    if repeats_testable {
        let rates = p
            .runs
            .iter()
            .map(|r| r.total.figures.bytes_per_sec)
            .collect();
        f.rate_samples = Some((rates, iops, "repeats"));
        f.latency_samples = Some([lat_k(0), lat_k(1), lat_k(2)]);
    } else {
        let (mut b, mut i) = (Vec::new(), Vec::new());
        for r in &p.runs {
            let (rb, ri) = per_second(r.workers.iter(), r.window.seconds);
            b.extend(rb);
            i.extend(ri);
        }
        f.rate_samples = Some((b, i, "per-second intervals"));
    }
    f
}

fn point_label(p: &crate::document::sweep::PointDoc) -> String {
    p.values
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn diff_sweeps(a: &SweepDocument, b: &SweepDocument, o: &DiffOptions) -> Parts {
    let mut differences = Vec::new();
    let names = |d: &SweepDocument| {
        d.params
            .iter()
            .map(|p| p.name.clone())
            .collect::<Vec<_>>()
            .join(",")
    };
    if names(a) != names(b) {
        differences.push(format!("params ({} vs {})", names(a), names(b)));
    }
    let swept: Vec<String> = a.params.iter().map(|p| p.name.clone()).collect();
    let mut notes = Vec::new();
    if a.repeat != b.repeat {
        notes.push(format!("repeat: {} vs {}", a.repeat, b.repeat));
    }
    let (pairs, only_in_base, only_in_new) = match_by(&a.points, &b.points, point_label);
    let mut rows = Vec::new();
    let mut workload = String::new();
    for (label, i, j) in pairs {
        let (pa, pb) = (&a.points[i], &b.points[j]);
        let (Some(ra), Some(rb)) = (pa.runs.first(), pb.runs.first()) else {
            continue;
        };
        if workload.is_empty() {
            workload = workload_words(&ra.config, ra.targets.len(), &swept);
        }
        let at = format!("{label}: ");
        // A swept rate is matched by the point's label: a curve's "50%" is
        // half of each side's own unthrottled point, another IOPS on
        // each side, and still the same point of the curve.
        let of = |r: &RunDocument| {
            let w = Workload::of(&r.config).with_targets(r.targets.len());
            if swept.iter().any(|p| p == "rate") {
                w.without("rate")
            } else {
                w
            }
        };
        for d in of(ra).differences(&of(rb), &at) {
            differences.push(d);
        }
        setup_notes(ra, rb, &at, &mut notes);
        let repeats = significance::repeats_testable(pa.runs.len(), pb.runs.len(), o.alpha);
        rows.push(row(
            "point",
            label,
            None,
            &point_figures(pa, repeats),
            &point_figures(pb, repeats),
            o,
        ));
    }
    Parts {
        rows,
        only_in_base,
        only_in_new,
        differences,
        notes,
        workload: format!("sweep of {}; every point: {workload}", names(a)),
    }
}

fn diff_compares(a: &CompareDocument, b: &CompareDocument, o: &DiffOptions) -> Parts {
    let (pairs, only_in_base, only_in_new) = match_by(&a.phases, &b.phases, |p| p.kind.to_string());
    let mut differences = Vec::new();
    let mut notes = Vec::new();
    if a.volume != b.volume {
        notes.push(format!("volume: {} vs {}", a.volume, b.volume));
    }
    let mut rows = Vec::new();
    let mut workload = String::new();
    for (label, i, j) in pairs {
        let (da, db) = (&a.phases[i].document, &b.phases[j].document);
        if workload.is_empty() {
            // Phases differ in their targets and workers by design.
            workload = workload_words(&da.config, 0, &["members".to_string(), "jobs".to_string()]);
        }
        let at = format!("{label}: ");
        differences.extend(
            Workload::of(&da.config)
                .with_targets(da.targets.len())
                .differences(
                    &Workload::of(&db.config).with_targets(db.targets.len()),
                    &at,
                ),
        );
        // The phases run on other targets by design (members, the volume):
        // only a change of the other setup is worth a note.
        let mut phase_notes = Vec::new();
        setup_notes(da, db, &at, &mut phase_notes);
        notes.extend(
            phase_notes
                .into_iter()
                .filter(|n| !n.contains(": targets: ")),
        );
        rows.push(row(
            "phase",
            label,
            None,
            &total_figures(da),
            &total_figures(db),
            o,
        ));
    }
    Parts {
        rows,
        only_in_base,
        only_in_new,
        differences,
        notes,
        workload: format!("compare of {} ({workload})", a.volume),
    }
}

fn host_figures(m: &MergedDocument, i: usize) -> Figures {
    let h = &m.hosts[i];
    let mut f = Figures {
        bytes_per_sec: Some(h.bytes_per_sec),
        iops: Some(h.iops),
        latency: pcts(&h.latency_ns),
        ..Figures::default()
    };
    // A host's workers carry `hostname:` in their target; two runs of one
    // host cannot be told apart there, so they get no samples.
    if !m.hostname_repeats(i) {
        let prefix = format!("{}:", h.hostname);
        f.rate_samples = interval_samples(
            m.workers.iter().filter(|w| w.target.starts_with(&prefix)),
            h.seconds,
        );
    }
    f
}

fn diff_merges(a: &MergedDocument, b: &MergedDocument, o: &DiffOptions) -> Parts {
    let mut differences = Workload::of(&a.config)
        .with_targets(a.config.targets.len())
        .differences(
            &Workload::of(&b.config).with_targets(b.config.targets.len()),
            "",
        );
    if a.hosts.len() != b.hosts.len() {
        differences.push(format!("hosts ({} vs {})", a.hosts.len(), b.hosts.len()));
    }
    let labels_a: Vec<String> = (0..a.hosts.len()).map(|i| a.host_label(i)).collect();
    let labels_b: Vec<String> = (0..b.hosts.len()).map(|j| b.host_label(j)).collect();
    let (pairs, only_in_base, only_in_new) = match_by(&labels_a, &labels_b, String::clone);
    let mut rows: Vec<RowDiff> = pairs
        .into_iter()
        .map(|(label, i, j)| {
            row(
                "host",
                label,
                None,
                &host_figures(a, i),
                &host_figures(b, j),
                o,
            )
        })
        .collect();
    let fleet = |m: &MergedDocument| {
        let shortest = m
            .hosts
            .iter()
            .map(|h| h.seconds)
            .fold(f64::INFINITY, f64::min);
        Figures {
            bytes_per_sec: Some(m.total.bytes_per_sec),
            iops: Some(m.total.iops),
            latency: pcts(&m.total.latency_ns),
            rate_samples: interval_samples(m.workers.iter(), shortest),
            latency_samples: None,
        }
    };
    rows.push(row("fleet", "FLEET".into(), None, &fleet(a), &fleet(b), o));
    // A fleet with runs that sent no document totals fewer hosts: said, so
    // a FLEET fall is not read as the hosts slowing down.
    let mut notes = Vec::new();
    for (side, m) in [("base", a), ("new", b)] {
        if !m.missing.is_empty() {
            let hosts: Vec<String> = m
                .missing
                .iter()
                .map(|h| format!("{} ({})", h.host, h.reason))
                .collect();
            notes.push(format!(
                "{side} fleet is incomplete, its FLEET row without {} missing run(s): {}",
                hosts.len(),
                hosts.join(", ")
            ));
        }
    }
    Parts {
        rows,
        only_in_base,
        only_in_new,
        differences,
        notes,
        workload: format!(
            "fleet, {}",
            workload_words(&a.config, a.config.targets.len(), &[])
        ),
    }
}

fn side_of(g: &Given) -> SideDoc {
    let path = g.shown.as_str();
    match &g.document {
        Document::Run(r) => side(
            path,
            &r.tool,
            vec![r.host.hostname.clone()],
            r.window.seconds,
        ),
        Document::Sweep(s) => {
            let first = s.points.first().and_then(|p| p.runs.first());
            side(
                path,
                &s.tool,
                first
                    .map(|r| vec![r.host.hostname.clone()])
                    .unwrap_or_default(),
                first.map_or(0.0, |r| r.window.seconds),
            )
        }
        Document::Compare(c) => {
            let first = c.phases.first().map(|p| &p.document);
            side(
                path,
                &c.tool,
                first
                    .map(|r| vec![r.host.hostname.clone()])
                    .unwrap_or_default(),
                first.map_or(0.0, |r| r.window.seconds),
            )
        }
        Document::Merge(m) => side(
            path,
            &m.tool,
            m.hosts.iter().map(|h| h.hostname.clone()).collect(),
            m.hosts.iter().map(|h| h.seconds).fold(0.0, f64::max),
        ),
        Document::Findings(f) => side(path, &f.tool, Vec::new(), f.elapsed_sec),
    }
}

/// Two findings documents (`advise --json`, before and after a fix): the
/// findings resolved (in the base only) and new (in the new only), each
/// "id devices (severity)"; a finding in both whose severity changed is a
/// note; the measurements both made (same check, same setting) are the
/// rows, MB/s untested (one run each). Another volume is a difference.
fn diff_findings(a: &FindingsDocument, b: &FindingsDocument, o: &DiffOptions) -> Parts {
    let key = |f: &Finding| format!("{} {}", f.id, f.devices.join(","));
    let shown = |f: &Finding| format!("finding {} ({})", key(f), f.severity.name());
    let mut notes = Vec::new();
    let mut only_in_base = Vec::new();
    for f in &a.findings {
        match b.findings.iter().find(|g| key(g) == key(f)) {
            Some(g) if g.severity != f.severity => notes.push(format!(
                "finding {}: {} -> {}",
                key(f),
                f.severity.name(),
                g.severity.name()
            )),
            Some(_) => {}
            None => only_in_base.push(shown(f)),
        }
    }
    let only_in_new = b
        .findings
        .iter()
        .filter(|g| a.findings.iter().all(|f| key(f) != key(g)))
        .map(shown)
        .collect();
    let figures = |m: &Measurement| Figures {
        bytes_per_sec: Some(m.bytes_per_sec),
        iops: None,
        latency: None,
        rate_samples: None,
        latency_samples: None,
    };
    let label = |m: &Measurement| format!("{} {}", m.check, m.setting);
    let rows = a
        .measurements
        .iter()
        .filter(|m| !m.partial)
        .filter_map(|m| {
            let n = b
                .measurements
                .iter()
                .find(|n| !n.partial && label(n) == label(m))?;
            Some(row(
                "measurement",
                label(m),
                None,
                &figures(m),
                &figures(n),
                o,
            ))
        })
        .collect();
    let mut differences = Vec::new();
    if a.volume != b.volume {
        differences.push(format!("volume ({} vs {})", a.volume, b.volume));
    }
    Parts {
        rows,
        only_in_base,
        only_in_new,
        differences,
        notes,
        workload: format!(
            "advise {}: {} finding(s) before, {} after",
            b.volume,
            a.findings.len(),
            b.findings.len()
        ),
    }
}

/// Diffs two documents the command read (with [`TAKES`]): refuses two of
/// different kinds, two without a row in common, and different workloads
/// unless `o.force`.
pub fn diff(base: &Given, new: &Given, o: &DiffOptions) -> Result<DiffDocument> {
    per_second_runs(base)?;
    per_second_runs(new)?;
    let (a, b) = (&base.document, &new.document);
    let parts = match (a, b) {
        (Document::Run(x), Document::Run(y)) => diff_runs(x, y, o),
        (Document::Sweep(x), Document::Sweep(y)) => diff_sweeps(x, y, o),
        (Document::Compare(x), Document::Compare(y)) => diff_compares(x, y, o),
        (Document::Merge(x), Document::Merge(y)) => diff_merges(x, y, o),
        (Document::Findings(x), Document::Findings(y)) => diff_findings(x, y, o),
        _ => {
            return Err(Error::KindsDiffer {
                base: base.shown.clone(),
                base_kind: a.kind(),
                new: new.shown.clone(),
                new_kind: b.kind(),
            })
        }
    };
    if !parts.differences.is_empty() && !o.force {
        return Err(Error::DiffWorkloads {
            base: base.shown.clone(),
            new: new.shown.clone(),
            differences: parts.differences,
        });
    }
    // Two findings documents say what changed in their findings even
    // without a measurement in common (two --quick runs).
    if parts.rows.is_empty() && a.kind() != Kind::Findings {
        return Err(Error::NothingInCommon {
            base: base.shown.clone(),
            new: new.shown.clone(),
            rows: match a.kind() {
                Kind::Sweep => "point",
                Kind::Compare => "phase",
                _ => "row",
            },
        });
    }
    let crossed = parts
        .rows
        .iter()
        .flat_map(|r| {
            r.metrics.iter().filter(|m| m.crossed).map(move |m| {
                format!(
                    "{} {} {:+.1}%",
                    r.label,
                    m.metric,
                    m.change_pct.unwrap_or(0.0)
                )
            })
        })
        .collect();
    Ok(DiffDocument {
        schema_version: SCHEMA_VERSION,
        kind: "diff".into(),
        tool: ToolInfo::this(),
        of: a.kind(),
        base: side_of(base),
        new: side_of(new),
        workload: parts.workload,
        alpha: o.alpha,
        threshold_pct: o.threshold_pct,
        rows: parts.rows,
        only_in_base: parts.only_in_base,
        only_in_new: parts.only_in_new,
        differences: parts.differences,
        notes: parts.notes,
        crossed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::worker::Interval;
    use crate::report::fixtures::sample_doc;

    fn samples(v: &[f64]) -> Option<RateSamples> {
        Some((v.to_vec(), v.to_vec(), "per-second intervals"))
    }

    fn figures(rate: f64, p99: u64, s: &[f64]) -> Figures {
        Figures {
            bytes_per_sec: Some(rate),
            iops: Some(rate / 4096.0),
            latency: Some([p99 as f64 / 2.0, p99 as f64, p99 as f64 * 2.0]),
            rate_samples: samples(s),
            latency_samples: None,
        }
    }

    fn opts(threshold: Option<f64>) -> DiffOptions {
        DiffOptions {
            alpha: 0.05,
            threshold_pct: threshold,
            force: false,
        }
    }

    #[test]
    fn per_second_sums_workers_fills_silent_seconds_and_drops_the_partial_one() {
        let mut d = sample_doc();
        d.workers[0].intervals = vec![
            Interval {
                t: 0.0,
                bytes: 10,
                ios: 1,
                ..Interval::default()
            },
            Interval {
                t: 2.0,
                bytes: 30,
                ios: 3,
                ..Interval::default()
            },
            Interval {
                t: 3.0,
                bytes: 99,
                ios: 9,
                ..Interval::default()
            },
        ];
        d.workers[1].intervals = vec![
            Interval {
                t: 0.0,
                bytes: 5,
                ios: 1,
                ..Interval::default()
            },
            Interval {
                t: 1.0,
                bytes: 7,
                ios: 1,
                ..Interval::default()
            },
        ];
        // A window of 3.4 s: seconds 0, 1 and 2 are whole; second 3 is not.
        let (b, i) = per_second(d.workers.iter(), 3.4);
        assert_eq!(b, vec![15.0, 7.0, 30.0]);
        assert_eq!(i, vec![2.0, 1.0, 3.0]);
        // A deadline a hair early still counts its last second.
        assert_eq!(per_second(d.workers.iter(), 3.9999).0.len(), 4);
    }

    #[test]
    fn a_significant_fall_past_the_threshold_crosses_it() {
        let base = figures(100e6, 1_000_000, &[100.0, 101.0, 99.0, 102.0, 98.0]);
        let new = figures(50e6, 1_000_000, &[50.0, 51.0, 49.0, 52.0, 48.0]);
        let r = row("target", "t".into(), None, &base, &new, &opts(Some(10.0)));
        let mbs = &r.metrics[0];
        assert_eq!(mbs.change_pct, Some(-50.0));
        assert_eq!(mbs.test.verdict, Verdict::Significant);
        assert!((mbs.test.p.unwrap() - 0.007936507936507936).abs() < 1e-12);
        assert_eq!(mbs.test.method.as_deref(), Some("exact"));
        assert!(mbs.crossed);
        // IOPS fell as much, but only MB/s and p99 count for the threshold.
        assert!(!r.metrics[1].crossed);
        // The p99 did not move: not crossed; untested (one histogram a side).
        assert_eq!(r.metrics[3].test.verdict, Verdict::Untested);
        assert!(!r.metrics[3].crossed);
        // Past 60% it is not.
        let r = row("target", "t".into(), None, &base, &new, &opts(Some(60.0)));
        assert!(!r.metrics[0].crossed);
        let r = row("target", "t".into(), None, &base, &new, &opts(None));
        assert!(r.metrics.iter().all(|m| !m.crossed));
    }

    #[test]
    fn a_fall_within_the_noise_does_not_cross_but_an_untested_p99_rise_does() {
        let s = [100.0, 40.0, 160.0, 90.0, 110.0];
        let base = figures(100e6, 1_000_000, &s);
        let new = figures(80e6, 2_000_000, &[95.0, 45.0, 150.0, 60.0, 50.0]);
        let r = row("target", "t".into(), None, &base, &new, &opts(Some(10.0)));
        assert_eq!(r.metrics[0].test.verdict, Verdict::Noise);
        assert!(
            !r.metrics[0].crossed,
            "a change within the noise does not fail"
        );
        assert_eq!(r.metrics[3].change_pct, Some(100.0));
        assert!(
            r.metrics[3].crossed,
            "an untested p99 rise counts on its size"
        );
        // A p99 fall never crosses.
        let r = row("target", "t".into(), None, &new, &base, &opts(Some(10.0)));
        assert!(!r.metrics[3].crossed);
    }

    #[test]
    fn too_few_seconds_are_not_tested() {
        let base = figures(100e6, 1, &[100.0, 101.0, 99.0]);
        let new = figures(50e6, 1, &[50.0, 51.0, 49.0]);
        let r = row("target", "t".into(), None, &base, &new, &opts(Some(10.0)));
        let t = &r.metrics[0].test;
        assert_eq!(t.verdict, Verdict::Untested);
        assert!(
            t.note.as_deref().unwrap().starts_with("n too small"),
            "{t:?}"
        );
        assert_eq!((t.n_base, t.n_new), (3, 3));
        // Untested: the size alone decides.
        assert!(r.metrics[0].crossed);
    }

    #[test]
    fn workload_options_differ_but_paths_and_durations_are_setup() {
        let a = sample_doc();
        let mut b = a.clone();
        b.config.bs = "8192".into();
        b.config.jobs = 4;
        b.config.direct = false;
        b.config.targets = vec!["/elsewhere".into()];
        b.config.duration_sec = 9.0;
        b.config.rate = Some(crate::measure::config::RateLimit::Iops(200.0));
        let d = Workload::of(&a.config)
            .with_targets(1)
            .differences(&Workload::of(&b.config).with_targets(2), "");
        assert_eq!(
            d,
            vec![
                "bs (4096 vs 8192)",
                "direct (direct vs buffered)",
                "jobs (2 vs 4)",
                "targets (1 vs 2)",
                "rate (none vs 200 IOPS)"
            ]
        );
        let mut notes = Vec::new();
        setup_notes(&a, &b, "", &mut notes);
        assert!(
            notes.iter().any(|n| n.starts_with("targets: ")),
            "{notes:?}"
        );
        assert!(notes.iter().any(|n| n == "duration: 2s vs 9s"), "{notes:?}");
    }

    #[test]
    fn kinds_are_told_apart_and_others_refused() {
        let kind_of = |v: &serde_json::Value, shown: &str| {
            let bytes = serde_json::to_vec(v).unwrap();
            let origin = crate::document::read::Origin {
                shown: shown.into(),
                reader: crate::document::read::Reader::Diff,
            };
            crate::document::read::open(&bytes, &origin)
                .map(|o| o.kind)
                .map_err(|e| e.to_string())
        };
        let run = serde_json::to_value(sample_doc()).unwrap();
        assert_eq!(kind_of(&run, "f").unwrap(), Some(Kind::Run));
        let mut v = run.clone();
        v["kind"] = "merge".into();
        assert_eq!(kind_of(&v, "f").unwrap(), Some(Kind::Merge));
        let tool = run["tool"].clone();
        let sweep = serde_json::json!({"schema_version": 1, "tool": tool, "points": []});
        assert_eq!(kind_of(&sweep, "f").unwrap(), Some(Kind::Sweep));
        let cmp = serde_json::json!({"schema_version": 1, "tool": tool, "phases": []});
        assert_eq!(kind_of(&cmp, "f").unwrap(), Some(Kind::Compare));
        let refused = |v: serde_json::Value, want: &str| {
            let e = kind_of(&v, "f").unwrap_err();
            assert!(e.contains(want), "{e}");
        };
        refused(serde_json::json!([1, 2]), "not a stripebench document");
        refused(serde_json::json!({"a": 1}), "no schema_version");
        refused(
            serde_json::json!({"schema_version": 1, "tool": {"name": "fio"}}),
            "its tool is \"fio\"",
        );
        refused(
            serde_json::json!({"schema_version": 2, "tool": tool, "workers": []}),
            "schema version 2",
        );
        refused(
            serde_json::json!({"schema_version": 1, "tool": tool, "kind": "diff"}),
            "is a diff document",
        );
        refused(
            serde_json::json!({"points": [], "fit": {}, "predictions": []}),
            "is a plan document",
        );
        refused(
            serde_json::json!({"schema_version": 1, "tool": tool, "interrupted": true, "measured": false}),
            "nothing to diff",
        );
    }
}
