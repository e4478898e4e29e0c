//! `stripebench merge`: one document from many hosts' run documents. Workers
//! keep their host; each host keeps its totals; the fleet's latency
//! percentiles come from the exact merge of the hosts' serialized
//! histograms, never from averaging percentiles. Merging is associative: a
//! merged document can be merged again, and its hosts are taken as they are.

//!
//! The command reads the files; this module merges documents ([`Given`]).
//! [`merge`] goes in named steps: the request, each document (a repeated
//! run refused, another workload refused, its hosts and workers added), the
//! missing hosts, the fleet's histogram, the span the hosts shared, the
//! totals.

mod check;

pub(crate) use check::{check_document_arithmetic, check_merged_arithmetic, check_run_arithmetic};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::analysis::histogram::{LatencyHistogram, LatencySummary};
use crate::base::warning::Warning;
use crate::document::error::{Error, RepeatedRun, Result};
use crate::document::kind::Kind;
use crate::document::run::ConfigDoc;
use crate::document::run::{RunDocument, ToolInfo, WorkerDoc, SCHEMA_VERSION};
use crate::document::workload::Workload;

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
    #[serde(with = "crate::document::facts::Opt::<crate::document::facts::LatencySummaryDef>")]
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
    #[serde(with = "crate::document::facts::Opt::<crate::document::facts::LatencySummaryDef>")]
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
    pub config: ConfigDoc,
    pub hosts: Vec<HostDoc>,
    /// Every host's workers, with `target` prefixed by `hostname:`.
    pub workers: Vec<WorkerDoc>,
    pub total: FleetTotal,
    pub warnings: Vec<Warning>,
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

/// Reads a preflight record (scripts/fleet.sh's OUT/preflight.json), from
/// the bytes the command read from `shown`.
pub fn read_preflight(bytes: &[u8], shown: &str) -> Result<Preflight> {
    let shown = shown.to_string();
    let p: Preflight = serde_json::from_slice(bytes).map_err(|e| Error::PreflightNotARecord {
        shown: shown.clone(),
        detail: e.to_string(),
    })?;
    if p.hosts.is_empty() {
        return Err(Error::PreflightNoHost { shown });
    }
    for (i, h) in p.hosts.iter().enumerate() {
        for (name, x) in [
            ("skew_sec", h.skew_sec),
            ("uncertainty_sec", h.uncertainty_sec),
            ("rtt_sec", h.rtt_sec),
        ] {
            if !x.is_finite() || (name != "skew_sec" && x < 0.0) {
                return Err(Error::PreflightField {
                    shown,
                    index: i,
                    field: name,
                    value: x,
                });
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

/// The kinds merge takes.
pub const TAKES: [Kind; 2] = [Kind::Run, Kind::Merge];

/// A document to merge, as the command read it: the file as shown, and
/// the document (`read::read` with `Reader::Merge` gives a run or a merge).
pub struct Given {
    pub shown: String,
    pub input: Input,
}

/// A file to merge: a run document or an earlier merge.
pub enum Input {
    Run(Box<RunDocument>),
    Merged(Box<MergedDocument>),
}

impl Given {
    fn split(self) -> (Input, String) {
        (self.input, self.shown)
    }
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

/// The host entries of a document read from `file`, for repeat checks.
fn entries(input: &Input, file: &str) -> Vec<Seen> {
    match input {
        Input::Run(d) => {
            let run = (
                d.config.seed,
                d.workers.iter().map(|w| w.intervals.clone()).collect(),
            );
            vec![Seen {
                host: host_of(d, file.to_string()),
                file: file.to_string(),
                run: Some(run),
            }]
        }
        Input::Merged(m) => m
            .hosts
            .iter()
            .map(|host| Seen {
                host: host.clone(),
                file: file.to_string(),
                run: None,
            })
            .collect(),
    }
}

/// Why `name`, a hostname a document gives, is not a host name (RFC 1123:
/// labels of letters, digits and '-', not at either end, of 1 to 63
/// characters, joined by dots; at most 253 in all), if it is not.
pub fn not_a_host_name(name: &str) -> Option<String> {
    let label_ok = |l: &str| {
        (1..=63).contains(&l.len())
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if (1..=253).contains(&name.len()) && name.split('.').all(label_ok) {
        return None;
    }
    // The name as shown: escaped, and cut (a host may send a megabyte).
    let cut: String = name.chars().take(100).collect();
    Some(format!(
        "its document gives the hostname \"{}\"{}, which is not a host name (letters, digits and '-' in labels of 1 to 63 characters joined by dots, at most 253 in all)",
        crate::base::error::show_text(&cut),
        if cut.len() < name.len() { "..." } else { "" }
    ))
}

/// Each document (by its index among `inputs`) that a launcher leaves out,
/// with why: one that repeats a run of one given before it, or whose
/// hostname is not a host name (text a host chose, that reports would
/// print as a row's name). `merge --list-repeats`, for a launcher that
/// names those missing and merges the rest (scripts/fleet.sh). The
/// documents are read one by one, as the command reads them.
pub fn repeats(inputs: impl Iterator<Item = Result<Given>>) -> Result<Vec<(usize, String)>> {
    let mut seen: Vec<Seen> = Vec::new();
    let mut found = Vec::new();
    for (i, given) in inputs.enumerate() {
        let (input, file) = given?.split();
        let es = entries(&input, &file);
        if let Some(why) = es.iter().find_map(|e| not_a_host_name(&e.host.hostname)) {
            found.push((i, why));
            continue;
        }
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
/// `inputs` yields each document as the command reads it (one at a time, so
/// that a refusal of the first files comes before a later file is read).
pub fn merge(
    inputs: impl ExactSizeIterator<Item = Result<Given>>,
    force: bool,
    launch: Launch,
) -> Result<MergedDocument> {
    check_request(inputs.len(), &launch)?;
    let mut fleet = Fleet {
        missing: launch.missing,
        preflight: launch.preflight,
        ..Fleet::default()
    };
    // Each host entry read so far, with the file it came from.
    let mut seen: Vec<Seen> = Vec::new();
    for given in inputs {
        let (input, file) = given?.split();
        for e in entries(&input, &file) {
            refuse_repeat(&seen, &e, &file, force, &mut fleet.warnings)?;
            seen.push(e);
        }
        fleet.add(input, &file, force)?;
    }
    check_missing_unmeasured(&fleet.missing, &fleet.hosts)?;
    let Some(config) = fleet.config.take() else {
        // check_request let no empty list through.
        return Err(Error::TooFewToMerge);
    };
    // Deterministic order whatever the grouping: merge(merge(a, b), c) == merge(a, b, c).
    fleet
        .hosts
        .sort_by(|a, b| (&a.hostname, &a.source).cmp(&(&b.hostname, &b.source)));
    let hist = fleet_histogram(&fleet.hosts)?;
    let span = Span::of(&fleet.hosts);
    let own_warnings = span.verdict(force)?;
    // An earlier merge's own overlap verdict is recomputed over all hosts.
    fleet.warnings.retain(|w| !w.is_fleet_overlap());
    fleet.warnings.extend(own_warnings);
    let total = fleet_total(&fleet.hosts, &hist, &span);
    fleet
        .workers
        .sort_by(|a, b| a.target.cmp(&b.target).then(a.id.cmp(&b.id)));
    Ok(MergedDocument {
        schema_version: SCHEMA_VERSION,
        kind: "merge".into(),
        tool: ToolInfo::this(),
        config,
        hosts: fleet.hosts,
        workers: fleet.workers,
        total,
        warnings: fleet.warnings,
        missing: fleet.missing,
        preflight: fleet.preflight,
    })
}

/// Enough documents (a fleet of one needs a missing host or a preflight
/// record beside it), and each missing host named once.
fn check_request(documents: usize, launch: &Launch) -> Result<()> {
    // One document launched as a fleet (a --preflight record: fleet.sh with
    // one host) is a fleet of one, as is one beside a missing host.
    let fleet = launch.missing.len() + usize::from(launch.preflight.is_some());
    if documents == 0 || documents + fleet < 2 {
        return Err(Error::TooFewToMerge);
    }
    for (i, m) in launch.missing.iter().enumerate() {
        if launch.missing[..i].iter().any(|o| o.host == m.host) {
            return Err(Error::MissingTwice {
                host: m.host.clone(),
            });
        }
    }
    Ok(())
}

/// Refuses (or, with `force`, warns of) host entry `e` of `file` when it
/// repeats a run already seen: its bytes would count twice.
fn refuse_repeat(
    seen: &[Seen],
    e: &Seen,
    file: &str,
    force: bool,
    warnings: &mut Vec<Warning>,
) -> Result<()> {
    let Some((s, rule)) = seen.iter().find_map(|s| repeat_of(s, e).map(|r| (s, r))) else {
        return Ok(());
    };
    let repeat = RepeatedRun {
        file: file.to_string(),
        host: show_name(&s.host.hostname),
        start_unix_sec: s.host.start_unix_sec,
        earlier: s.file.clone(),
        rule,
    };
    if !force {
        return Err(Error::RepeatedRun(repeat));
    }
    warnings.push(Warning::MergedTwice {
        what: repeat.to_string(),
    });
    Ok(())
}

/// The fleet as it is gathered, document by document.
#[derive(Default)]
struct Fleet {
    /// The workload: the first document's configuration.
    config: Option<ConfigDoc>,
    hosts: Vec<HostDoc>,
    workers: Vec<WorkerDoc>,
    warnings: Vec<Warning>,
    missing: Vec<MissingHost>,
    preflight: Option<Preflight>,
}

impl Fleet {
    /// Adds one document's hosts, workers and warnings, once its workload
    /// is the fleet's (or `force` lets another through, with a warning).
    fn add(&mut self, input: Input, file: &str, force: bool) -> Result<()> {
        let (cfg, hosts, workers, warnings) = match input {
            Input::Run(d) => {
                let host = host_of(&d, file.to_string());
                // A fleet's workers keep whole seconds (what diff tests
                // and the plots draw): shorter intervals are summed.
                let per_second = d.workers_per_second().map_err(|why| Error::NotPerSecond {
                    file: file.to_string(),
                    why: format!("merge keeps per-second intervals, but {why}"),
                })?;
                let workers: Vec<WorkerDoc> = per_second
                    .into_iter()
                    .map(|mut w| {
                        w.target = format!("{}:{}", d.host.hostname, w.target);
                        w
                    })
                    .collect();
                let warnings = d
                    .warnings
                    .iter()
                    .map(|w| Warning::OnHost {
                        host: d.host.hostname.clone(),
                        warning: Box::new(w.clone()),
                    })
                    .collect::<Vec<_>>();
                let mut cfg = d.config.clone();
                // The merged workers' intervals are whole seconds.
                cfg.log_interval_ms = None;
                (cfg, vec![host], workers, warnings)
            }
            Input::Merged(m) => {
                // An earlier fleet's missing runs and preflight stay on record.
                self.missing.extend(m.missing);
                self.preflight = join_preflights(self.preflight.take(), m.preflight);
                (m.config, m.hosts, m.workers, m.warnings)
            }
        };
        match &self.config {
            None => self.config = Some(cfg),
            Some(first) => {
                let differences = Workload::of(first).differences(&Workload::of(&cfg), "");
                if let Some(difference) = differences.into_iter().next() {
                    if !force {
                        return Err(Error::MergeWorkloads {
                            file: file.to_string(),
                            difference,
                        });
                    }
                    self.warnings.push(Warning::DifferentWorkload {
                        path: file.to_string(),
                        difference,
                    });
                }
            }
        }
        self.hosts.extend(hosts);
        self.workers.extend(workers);
        self.warnings.extend(warnings);
        Ok(())
    }
}

/// Two fleets' preflights as one: every host's record, the widest bounds.
fn join_preflights(a: Option<Preflight>, b: Option<Preflight>) -> Option<Preflight> {
    match (a, b) {
        (None, p) | (p, None) => p,
        (Some(mut a), Some(b)) => {
            a.max_skew_sec = a.max_skew_sec.max(b.max_skew_sec);
            a.connect_timeout_sec = a.connect_timeout_sec.max(b.connect_timeout_sec);
            a.hosts.extend(b.hosts);
            Some(a)
        }
    }
}

/// A host the launcher says sent nothing cannot be one that was measured.
fn check_missing_unmeasured(missing: &[MissingHost], hosts: &[HostDoc]) -> Result<()> {
    if let Some((m, h)) = missing
        .iter()
        .find_map(|m| Some((m, hosts.iter().find(|h| h.hostname == m.host)?)))
    {
        return Err(Error::MissingWasMeasured {
            host: m.host.clone(),
            source_file: h.source.clone(),
        });
    }
    Ok(())
}

/// The exact merge of every host's latency histogram.
fn fleet_histogram(hosts: &[HostDoc]) -> Result<LatencyHistogram> {
    let mut hist = LatencyHistogram::new();
    for h in hosts {
        let hh = LatencyHistogram::from_base64(&h.histogram).map_err(|e| Error::HostHistogram {
            source_file: h.source.clone(),
            host: h.hostname.clone(),
            detail: e.to_string(),
        })?;
        hist.merge(&hh);
    }
    Ok(hist)
}

/// When the hosts measured: the span all of them shared, and how far apart
/// they started.
struct Span {
    latest_start: f64,
    earliest_end: f64,
    /// Latest start to earliest end, or 0.
    overlap: f64,
    /// Latest start minus earliest start.
    skew: f64,
    /// The shortest host window.
    shortest: f64,
}

impl Span {
    fn of(hosts: &[HostDoc]) -> Span {
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
        Span {
            latest_start,
            earliest_end,
            overlap: (earliest_end - latest_start).max(0.0),
            skew: latest_start - earliest_start,
            shortest: hosts.iter().map(|h| h.seconds).fold(f64::MAX, f64::min),
        }
    }

    /// Refuses hosts that did not run together (unless `force`: a warning),
    /// and warns of hosts that started far apart.
    fn verdict(&self, force: bool) -> Result<Vec<Warning>> {
        let (overlap, shortest, skew) = (self.overlap, self.shortest, self.skew);
        let mut warnings = Vec::new();
        if !concurrent(overlap, shortest) {
            let miss = if overlap > 0.0 {
                format!(
                    "they share only {overlap:.3}s of the shortest window's {shortest:.3}s ({:.0}%)",
                    overlap / shortest.max(f64::MIN_POSITIVE) * 100.0
                )
            } else {
                format!(
                    "they miss one another by {:.3}s (the last starts {:.3}s after the first ends)",
                    self.latest_start - self.earliest_end,
                    self.latest_start - self.earliest_end
                )
            };
            if !force {
                return Err(Error::NotTogether { miss });
            }
            warnings.push(Warning::WindowsApart { miss });
        } else if skew > 0.1 * shortest {
            warnings.push(Warning::StartSkew {
                skew_sec: skew,
                shortest_sec: shortest,
            });
        }
        Ok(warnings)
    }
}

/// The fleet's totals: the hosts' sums, the merged histogram, the span.
fn fleet_total(hosts: &[HostDoc], hist: &LatencyHistogram, span: &Span) -> FleetTotal {
    FleetTotal {
        hosts: hosts.len(),
        bytes: hosts.iter().map(|h| h.bytes).sum(),
        ios: hosts.iter().map(|h| h.ios).sum(),
        errors: hosts.iter().map(|h| h.errors).sum(),
        bytes_per_sec: hosts.iter().map(|h| h.bytes_per_sec).sum(),
        iops: hosts.iter().map(|h| h.iops).sum(),
        latency_ns: hist.summary(),
        histogram: hist.to_base64(),
        overlap_sec: span.overlap,
        start_skew_sec: span.skew,
    }
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

#[cfg(test)]
mod tests {
    use super::not_a_host_name;

    #[test]
    fn a_host_name_is_rfc_1123_labels_joined_by_dots() {
        for ok in ["vm", "node-1", "a.b.example", "0x", &"a".repeat(63)] {
            assert_eq!(not_a_host_name(ok), None, "{ok}");
        }
        let long = ["a"; 128].join("."); // 255 characters
        for bad in [
            "",
            "evil \nFLEET 999999.9",
            "-a",
            "a-",
            "a..b",
            "a_b",
            "é",
            &"a".repeat(64),
            &long,
        ] {
            let why = not_a_host_name(bad).unwrap_or_else(|| panic!("{bad:?} passed"));
            assert!(!why.contains('\n'), "{why}");
        }
        let why = not_a_host_name(&"\n".repeat(1 << 20)).unwrap();
        assert!(why.len() < 1000, "cut: {} bytes", why.len());
    }
}
