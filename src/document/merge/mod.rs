//! `stripebench merge`: one document from many hosts' run documents. Workers
//! keep their host; each host keeps its totals; the fleet's latency
//! percentiles come from the exact merge of the hosts' serialized
//! histograms, never from averaging percentiles. Merging is associative: a
//! merged document can be merged again, and its hosts are taken as they are.

mod check;

pub(crate) use check::{check_document_arithmetic, check_merged_arithmetic, check_run_arithmetic};
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::analysis::histogram::{LatencyHistogram, LatencySummary};
use crate::base::error::{show_path, UsageError};
use crate::document::run::{RunDocument, ToolInfo, WorkerDoc, SCHEMA_VERSION};

/// One host's part of a fleet.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostDoc {
    pub hostname: String,
    /// The file it came from.
    pub source: String,
    pub start_unix_sec: f64,
    pub end_unix_sec: f64,
    pub seconds: f64,
    pub bytes: u64,
    pub ios: u64,
    pub errors: u64,
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub latency_ns: Option<LatencySummary>,
    pub histogram: String,
    pub interrupted: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FleetTotal {
    pub hosts: usize,
    pub bytes: u64,
    pub ios: u64,
    pub errors: u64,
    /// Sum of the hosts' rates, each over its own window.
    pub bytes_per_sec: f64,
    pub iops: f64,
    /// From the exact merge of every host's histogram.
    pub latency_ns: Option<LatencySummary>,
    pub histogram: String,
    /// The span every host was measuring (latest start to earliest end), and
    /// the spread of the start instants.
    pub overlap_sec: f64,
    pub start_skew_sec: f64,
}

/// The merged document.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MergedDocument {
    pub schema_version: u32,
    /// Always "merge": tells a merged document from a run document.
    pub kind: String,
    pub tool: ToolInfo,
    /// The workload (the first host's configuration; the others match it unless --force).
    pub config: crate::measure::config::ConfigDoc,
    pub hosts: Vec<HostDoc>,
    /// Every host's workers, with `target` prefixed by `hostname:`.
    pub workers: Vec<WorkerDoc>,
    pub total: FleetTotal,
    pub warnings: Vec<String>,
    /// Runs the launcher started that sent no document (`--missing`): the
    /// fleet is incomplete, and its totals are those of `hosts` alone.
    #[serde(default)]
    pub missing: Vec<MissingHost>,
    /// What the launcher's preflight saw on every host before any started
    /// (`--preflight`, written by scripts/fleet.sh); null when not given.
    #[serde(default)]
    pub preflight: Option<Preflight>,
}

/// A run of the fleet that sent no document, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MissingHost {
    /// As the launcher named it (the hostfile's name, not the host's own).
    pub host: String,
    pub reason: String,
}

/// `--missing HOST[=REASON]`.
pub fn parse_missing(text: &str) -> Result<MissingHost, String> {
    let (host, reason) = text.split_once('=').unwrap_or((text, "no document"));
    let (host, reason) = (host.trim(), reason.trim());
    if host.is_empty() {
        return Err("give the host that sent no document: --missing HOST or HOST=REASON".into());
    }
    Ok(MissingHost {
        host: host.into(),
        reason: if reason.is_empty() {
            "no document"
        } else {
            reason
        }
        .into(),
    })
}

/// The preflight of a fleet: each host's version and clock, checked by the
/// launcher before any host started I/O.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Preflight {
    /// ssh, pdsh, clush, local, ...
    pub launcher: String,
    /// The bound the launcher held every host's skew to.
    pub max_skew_sec: f64,
    pub connect_timeout_sec: f64,
    pub hosts: Vec<PreflightHost>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PreflightHost {
    pub host: String,
    pub version: String,
    pub schema_version: u32,
    /// The host's clock minus the launcher's (positive: ahead).
    pub skew_sec: f64,
    /// The true skew is within skew_sec +/- this.
    pub uncertainty_sec: f64,
    /// The round trip the skew was measured over.
    pub rtt_sec: f64,
    /// "ping": clock read on a line sent over the open connection (the
    /// uncertainty is rtt/2); "one-way": read before the answer arrived
    /// (launchers that do not forward standard input, pdsh).
    pub method: String,
}

/// Reads a preflight record (scripts/fleet.sh's OUT/preflight.json).
pub fn read_preflight(path: &Path) -> Result<Preflight, UsageError> {
    let shown = show_path(path);
    let text = crate::document::read_document(path)
        .map_err(|e| UsageError(format!("cannot read --preflight {shown}: {e}")))?;
    let p: Preflight = serde_json::from_slice(&text).map_err(|e| {
        UsageError(format!(
            "--preflight {shown} is not a preflight record ({e}): give the preflight.json that fleet.sh wrote"
        ))
    })?;
    if p.hosts.is_empty() {
        return Err(UsageError(format!(
            "--preflight {shown} lists no host: give the preflight.json that fleet.sh wrote"
        )));
    }
    for (i, h) in p.hosts.iter().enumerate() {
        for (name, x) in [
            ("skew_sec", h.skew_sec),
            ("uncertainty_sec", h.uncertainty_sec),
            ("rtt_sec", h.rtt_sec),
        ] {
            if !x.is_finite() || (name != "skew_sec" && x < 0.0) {
                return Err(UsageError(format!(
                    "--preflight {shown}: hosts[{i}].{name} is {x}: give the preflight.json that fleet.sh wrote"
                )));
            }
        }
    }
    Ok(p)
}

/// What the launcher knows beyond the documents: the preflight, and the
/// runs that sent none.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    pub preflight: Option<Preflight>,
    pub missing: Vec<MissingHost>,
}

impl MergedDocument {
    /// Whether host entry `i` shares its hostname with another (several
    /// runs on one machine): its workers cannot then be told apart.
    pub fn hostname_repeats(&self, i: usize) -> bool {
        let name = &self.hosts[i].hostname;
        self.hosts.iter().filter(|h| &h.hostname == name).count() > 1
    }

    /// Host entry `i` as reports name it: its hostname, with its file's
    /// stem when the hostname repeats.
    pub fn host_label(&self, i: usize) -> String {
        let h = &self.hosts[i];
        if self.hostname_repeats(i) {
            let file = Path::new(&h.source)
                .file_stem()
                .map_or(h.source.clone(), |f| f.to_string_lossy().into_owned());
            format!("{} ({file})", h.hostname)
        } else {
            h.hostname.clone()
        }
    }
}

/// A file to merge: a run document or an earlier merge.
enum Input {
    Run(Box<RunDocument>, String),
    Merged(Box<MergedDocument>),
}

fn read(path: &Path) -> Result<Input, UsageError> {
    let shown = show_path(path);
    let text = crate::document::read_document(path)
        .map_err(|e| UsageError(format!("cannot read {shown}: {e}")))?;
    let v: serde_json::Value = serde_json::from_slice(&text).map_err(|_| {
        UsageError(format!(
            "{shown} is not JSON: give run documents written with --json"
        ))
    })?;
    match v.get("schema_version").and_then(|s| s.as_u64()) {
        None => return Err(UsageError(format!("{shown} is not a stripebench document (no schema_version)"))),
        Some(n) if n != u64::from(SCHEMA_VERSION) => {
            return Err(UsageError(format!(
                "{shown} has schema version {n}, this stripebench reads {SCHEMA_VERSION}: merge documents of one version"
            )))
        }
        Some(_) => {}
    }
    if v.get("kind").and_then(|k| k.as_str()) == Some("merge") {
        check_merged_arithmetic(&v, &shown)?;
        let m: MergedDocument = serde_json::from_value(v)
            .map_err(|e| UsageError(format!("{shown} is not a valid merged document: {e}")))?;
        return Ok(Input::Merged(Box::new(m)));
    }
    if v.get("points").is_some() || v.get("phases").is_some() {
        return Err(UsageError(format!(
            "{shown} is a sweep or compare document: merge takes run documents"
        )));
    }
    check_run_arithmetic(&v, &shown, "")?;
    let d: RunDocument = serde_json::from_value(v)
        .map_err(|e| UsageError(format!("{shown} is not a stripebench run document: {e}")))?;
    Ok(Input::Run(Box::new(d), shown))
}

fn host_of(d: &RunDocument, source: String) -> HostDoc {
    HostDoc {
        hostname: d.host.hostname.clone(),
        source,
        start_unix_sec: d.window.start_unix_sec,
        end_unix_sec: d.window.end_unix_sec,
        seconds: d.window.seconds,
        bytes: d.total.figures.bytes,
        ios: d.total.figures.ios,
        errors: d.total.figures.errors,
        bytes_per_sec: d.total.figures.bytes_per_sec,
        iops: d.total.figures.iops,
        latency_ns: d.total.figures.latency_ns,
        histogram: d.total.figures.histogram.clone(),
        interrupted: d.interrupted,
    }
}

/// The options that make two runs the same workload (not where, nor when, nor which seed).
fn workload_differences(
    a: &crate::measure::config::ConfigDoc,
    b: &crate::measure::config::ConfigDoc,
) -> Option<String> {
    config_difference(
        &serde_json::to_value(a).unwrap_or_default(),
        &serde_json::to_value(b).unwrap_or_default(),
        &[],
    )
}

/// The first workload option in which two documents' `config` differ, as
/// "name (a vs b)", leaving out where, when and with which seed they ran,
/// and the keys in `ignore`. `plan` uses it too.
pub(crate) fn config_difference(
    a: &serde_json::Value,
    b: &serde_json::Value,
    ignore: &[&str],
) -> Option<String> {
    let strip = |c: &serde_json::Value| {
        let mut v = c.clone();
        if let Some(o) = v.as_object_mut() {
            for k in ignore {
                o.remove(*k);
            }
            for k in [
                "targets",
                "testbed",
                "seed",
                "seed_str",
                "cpus",
                "pin",
                "start_at_unix_sec",
                "allow_destructive",
            ] {
                o.remove(k);
            }
        }
        v
    };
    let (va, vb) = (strip(a), strip(b));
    let (Some(oa), Some(ob)) = (va.as_object(), vb.as_object()) else {
        return None;
    };
    oa.iter()
        .find(|(k, v)| ob.get(*k) != Some(v))
        .map(|(k, v)| format!("{k} ({v} vs {})", ob.get(k).cloned().unwrap_or_default()))
}

/// A host entry read, with what else its run document said of the run.
struct Seen {
    host: HostDoc,
    /// The file it came from, as shown.
    file: String,
    /// A run document's seed and its workers' interval series (a merged
    /// document's host entries carry neither).
    run: Option<(u64, Vec<Vec<crate::measure::worker::Interval>>)>,
}

/// Why entry `b` repeats the run of entry `a`, whatever hostname either
/// gives (a host can return a copy of another's document, renamed): the same
/// seed and window start, to the nanosecond; the same interval series and
/// latency histogram; or the same measurement (window length to the
/// nanosecond, bytes, I/Os and latency histogram). Two real runs never share
/// these, even two processes on one machine started by one `--start-at` with
/// one `--seed` (their start instants differ by the microseconds their wake-up
/// takes, their latencies differ); a document given twice, copied, or inside
/// an earlier merge does.
fn repeat_of(a: &Seen, b: &Seen) -> Option<&'static str> {
    let (x, y) = (&a.host, &b.host);
    if let (Some((sa, ia)), Some((sb, ib))) = (&a.run, &b.run) {
        if sa == sb && x.start_unix_sec.to_bits() == y.start_unix_sec.to_bits() {
            return Some("the same seed and start instant");
        }
        if ia == ib && ia.iter().any(|w| !w.is_empty()) && x.histogram == y.histogram {
            return Some("the same interval series and latency histogram");
        }
    }
    let same_measure = x.seconds.to_bits() == y.seconds.to_bits()
        && x.bytes == y.bytes
        && x.ios == y.ios
        && x.histogram == y.histogram;
    let same_window = x.start_unix_sec.to_bits() == y.start_unix_sec.to_bits()
        && x.end_unix_sec.to_bits() == y.end_unix_sec.to_bits();
    (same_measure || (same_window && x.bytes == y.bytes && x.histogram == y.histogram))
        .then_some("the same window, bytes, I/Os and latency histogram")
}

/// A hostname as shown in messages: quoted and escaped when it holds
/// control characters (it is what a host said).
fn show_name(name: &str) -> String {
    if name.chars().any(char::is_control) {
        format!("{name:?}")
    } else {
        name.to_string()
    }
}

/// The host entries of a document read from `path`, for repeat checks.
fn entries(input: &Input, path: &Path) -> Vec<Seen> {
    let file = show_path(path);
    match input {
        Input::Run(d, src) => {
            let run = (
                d.config.seed,
                d.workers.iter().map(|w| w.intervals.clone()).collect(),
            );
            vec![Seen {
                host: host_of(d, src.clone()),
                file,
                run: Some(run),
            }]
        }
        Input::Merged(m) => m
            .hosts
            .iter()
            .map(|host| Seen {
                host: host.clone(),
                file: file.clone(),
                run: None,
            })
            .collect(),
    }
}

/// Each document (by its index in `paths`) that repeats a run of one given
/// before it, with why: `merge --list-repeats`, for a launcher that names the
/// later of two as missing and merges the rest (scripts/fleet.sh).
pub fn repeats(paths: &[PathBuf]) -> Result<Vec<(usize, String)>, UsageError> {
    let mut seen: Vec<Seen> = Vec::new();
    let mut found = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        let es = entries(&read(p)?, p);
        let why = es.iter().find_map(|e| {
            seen.iter().find_map(|s| {
                repeat_of(s, e).map(|rule| {
                    format!(
                        "its document repeats the run of host {} in {} ({rule})",
                        show_name(&s.host.hostname),
                        s.file
                    )
                })
            })
        });
        if let Some(why) = why {
            found.push((i, why));
        } else {
            seen.extend(es);
        }
    }
    Ok(found)
}

/// Merges run documents and earlier merges, with what the launcher knows.
pub fn merge(paths: &[PathBuf], force: bool, launch: Launch) -> Result<MergedDocument> {
    // One document launched as a fleet (a --preflight record: fleet.sh with
    // one host) is a fleet of one, as is one beside a missing host.
    let fleet = launch.missing.len() + usize::from(launch.preflight.is_some());
    if paths.is_empty() || paths.len() + fleet < 2 {
        return crate::base::error::usage(
            "merge needs at least two documents (or one, and a --missing host or a --preflight record)",
        );
    }
    for (i, m) in launch.missing.iter().enumerate() {
        if launch.missing[..i].iter().any(|o| o.host == m.host) {
            return crate::base::error::usage(format!(
                "--missing {} is given twice: name each missing host once",
                m.host
            ));
        }
    }
    let mut missing = launch.missing;
    let mut preflight = launch.preflight;
    let mut hosts = Vec::new();
    let mut workers = Vec::new();
    let mut config = None;
    let mut warnings = Vec::new();
    // Each host entry read so far, with the file it came from.
    let mut seen: Vec<Seen> = Vec::new();
    for p in paths {
        let input = read(p)?;
        for e in entries(&input, p) {
            if let Some((s, rule)) = seen.iter().find_map(|s| repeat_of(s, &e).map(|r| (s, r))) {
                let what = format!(
                    "{} repeats the run of host {} that started at {:.6} (Unix s), already given in {} ({rule}), whatever hostname it gives",
                    show_path(p),
                    show_name(&s.host.hostname),
                    s.host.start_unix_sec,
                    s.file
                );
                if !force {
                    return crate::base::error::usage(format!(
                        "{what}: merging it twice would count its bytes twice; give each run once, or pass --force"
                    ));
                }
                warnings.push(format!("{what}; merged twice because of --force"));
            }
            seen.push(e);
        }
        let (cfg, hs, ws, ww) = match input {
            Input::Run(d, src) => {
                let host = host_of(&d, src);
                let ws: Vec<WorkerDoc> = d
                    .workers
                    .iter()
                    .cloned()
                    .map(|mut w| {
                        w.target = format!("{}:{}", d.host.hostname, w.target);
                        w
                    })
                    .collect();
                (
                    d.config.clone(),
                    vec![host],
                    ws,
                    d.warnings
                        .iter()
                        .map(|w| format!("{}: {w}", d.host.hostname))
                        .collect::<Vec<_>>(),
                )
            }
            Input::Merged(m) => {
                // An earlier fleet's missing runs and preflight stay on record.
                missing.extend(m.missing);
                preflight = match (preflight, m.preflight) {
                    (None, p) | (p, None) => p,
                    (Some(mut a), Some(b)) => {
                        a.max_skew_sec = a.max_skew_sec.max(b.max_skew_sec);
                        a.connect_timeout_sec = a.connect_timeout_sec.max(b.connect_timeout_sec);
                        a.hosts.extend(b.hosts);
                        Some(a)
                    }
                };
                (m.config, m.hosts, m.workers, m.warnings)
            }
        };
        match &config {
            None => config = Some(cfg),
            Some(first) => {
                if let Some(diff) = workload_differences(first, &cfg) {
                    if !force {
                        return crate::base::error::usage(format!(
                            "{} ran a different workload: {diff}; merge runs of one workload, or pass --force",
                            show_path(p)
                        ));
                    }
                    warnings.push(format!(
                        "{}: a different workload ({diff}), merged because of --force",
                        show_path(p)
                    ));
                }
            }
        }
        hosts.extend(hs);
        workers.extend(ws);
        warnings.extend(ww);
    }
    if let Some((m, h)) = missing
        .iter()
        .find_map(|m| Some((m, hosts.iter().find(|h| h.hostname == m.host)?)))
    {
        return crate::base::error::usage(format!(
            "--missing {} names a host that was measured (its run is in {}): name only the runs that sent no document",
            crate::base::error::show_text(&m.host),
            crate::base::error::show_text(&h.source)
        ));
    }
    let config = config.expect("at least two inputs were read");
    // Deterministic order whatever the grouping: merge(merge(a, b), c) == merge(a, b, c).
    hosts.sort_by(|a, b| (&a.hostname, &a.source).cmp(&(&b.hostname, &b.source)));
    let mut hist = LatencyHistogram::new();
    for h in &hosts {
        let hh = LatencyHistogram::from_base64(&h.histogram).map_err(|e| {
            crate::base::error::UsageError(format!(
                "{}: the histogram of host {} cannot be read ({e}): give the document as stripebench wrote it",
                h.source, h.hostname
            ))
        })?;
        hist.merge(&hh);
    }
    let latest_start = hosts
        .iter()
        .map(|h| h.start_unix_sec)
        .fold(f64::MIN, f64::max);
    let earliest_start = hosts
        .iter()
        .map(|h| h.start_unix_sec)
        .fold(f64::MAX, f64::min);
    let earliest_end = hosts
        .iter()
        .map(|h| h.end_unix_sec)
        .fold(f64::MAX, f64::min);
    let overlap = (earliest_end - latest_start).max(0.0);
    let skew = latest_start - earliest_start;
    let shortest = hosts.iter().map(|h| h.seconds).fold(f64::MAX, f64::min);
    let mut own_warnings: Vec<String> = Vec::new();
    if !concurrent(overlap, shortest) {
        let miss = if overlap > 0.0 {
            format!(
                "they share only {overlap:.3}s of the shortest window's {shortest:.3}s ({:.0}%)",
                overlap / shortest.max(f64::MIN_POSITIVE) * 100.0
            )
        } else {
            format!(
                "they miss one another by {:.3}s (the last starts {:.3}s after the first ends)",
                latest_start - earliest_end,
                latest_start - earliest_end
            )
        };
        if !force {
            return crate::base::error::usage(format!(
                "the hosts' windows do not overlap by most of their length: {miss}; a fleet total only adds runs measured together: launch them with one --start-at (scripts/fleet.sh does), or pass --force"
            ));
        }
        own_warnings.push(format!(
            "the hosts' windows do not overlap by most of their length ({miss}): the fleet total adds runs that did not run together, merged because of --force; launch them with one --start-at"
        ));
    } else if skew > 0.1 * shortest {
        own_warnings.push(format!(
            "the hosts started {skew:.3}s apart, more than a tenth of the shortest window ({shortest:.3}s): use one --start-at"
        ));
    }
    // An earlier merge's own overlap verdict is recomputed over all hosts.
    warnings
        .retain(|w| !w.starts_with("the hosts' windows") && !w.starts_with("the hosts started"));
    warnings.extend(own_warnings);
    let total = FleetTotal {
        hosts: hosts.len(),
        bytes: hosts.iter().map(|h| h.bytes).sum(),
        ios: hosts.iter().map(|h| h.ios).sum(),
        errors: hosts.iter().map(|h| h.errors).sum(),
        bytes_per_sec: hosts.iter().map(|h| h.bytes_per_sec).sum(),
        iops: hosts.iter().map(|h| h.iops).sum(),
        latency_ns: hist.summary(),
        histogram: hist.to_base64(),
        overlap_sec: overlap,
        start_skew_sec: skew,
    };
    workers.sort_by(|a, b| a.target.cmp(&b.target).then(a.id.cmp(&b.id)));
    Ok(MergedDocument {
        schema_version: SCHEMA_VERSION,
        kind: "merge".into(),
        tool: ToolInfo::this(),
        config,
        hosts,
        workers,
        total,
        warnings,
        missing,
        preflight,
    })
}

/// Whether windows that all share `overlap` seconds, the shortest lasting
/// `shortest`, were measured together: they overlap by most (more than
/// half) of the shortest one.
pub fn concurrent(overlap: f64, shortest: f64) -> bool {
    overlap > 0.5 * shortest
}

impl MergedDocument {
    /// Whether the hosts' windows overlap by most of their length, so that
    /// the fleet total is a rate measured together.
    pub fn is_concurrent(&self) -> bool {
        let shortest = self
            .hosts
            .iter()
            .map(|h| h.seconds)
            .fold(f64::MAX, f64::min);
        concurrent(self.total.overlap_sec, shortest)
    }
}
