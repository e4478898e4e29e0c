//! What the `document` layer refuses, as one typed enum: a document that
//! cannot be read ([`ReadError`]: who read it, and why), figures that do
//! not add up, and the merge, diff and plan requests that make no sense of
//! the documents given. Every variant is something the user gave, so every
//! one exits with 2 ([`Error::exit_code`]); the texts are those the commands
//! have always printed, one line each.

use crate::base::error::{show_text, EXIT_USAGE};
use crate::document::kind::Kind;
use crate::document::run::SCHEMA_VERSION;

/// A refusal of the document layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The document could not be read, parsed, or is not one this command takes.
    #[error(transparent)]
    Read(#[from] ReadError),

    // The arithmetic of a document (`merge::check`).
    #[error("{shown}: {at}{path} is {value}, not a finite number: give documents as stripebench wrote them")]
    NotFinite {
        shown: String,
        at: String,
        path: String,
        value: String,
    },
    #[error(
        "{shown}: {at}{path} is missing or not a number: give documents as stripebench wrote them"
    )]
    NotANumber {
        shown: String,
        at: String,
        path: String,
    },
    #[error("{shown}: {at}{what}: the document is damaged or was edited; give documents as stripebench wrote them")]
    Damaged {
        shown: String,
        at: String,
        what: String,
    },

    // `merge --preflight`.
    // `error`, not `source`: a source would be said twice (`{e:#}`).
    #[error("cannot read --preflight {shown}: {error}")]
    PreflightUnreadable {
        shown: String,
        error: crate::base::input::InputError,
    },
    #[error("--preflight {shown} is not a preflight record ({detail}): give the preflight.json that fleet.sh wrote")]
    PreflightNotARecord { shown: String, detail: String },
    #[error("--preflight {shown} lists no host: give the preflight.json that fleet.sh wrote")]
    PreflightNoHost { shown: String },
    #[error("--preflight {shown}: hosts[{index}].{field} is {value}: give the preflight.json that fleet.sh wrote")]
    PreflightField {
        shown: String,
        index: usize,
        field: &'static str,
        value: f64,
    },

    // `merge`.
    #[error(
        "merge needs at least two documents (or one, and a --missing host or a --preflight record)"
    )]
    TooFewToMerge,
    #[error("--missing {host} is given twice: name each missing host once")]
    MissingTwice { host: String },
    #[error("{}: merging it twice would count its bytes twice; give each run once, or pass --force", .0)]
    RepeatedRun(RepeatedRun),
    #[error("{file} ran a different workload: {difference}; merge runs of one workload, or pass --force")]
    MergeWorkloads { file: String, difference: String },
    #[error("--missing {} names a host that was measured (its run is in {}): name only the runs that sent no document", show_text(.host), show_text(.source_file))]
    MissingWasMeasured { host: String, source_file: String },
    #[error("{source_file}: the histogram of host {host} cannot be read ({detail}): give the document as stripebench wrote it")]
    HostHistogram {
        source_file: String,
        host: String,
        detail: String,
    },
    #[error("the hosts' windows do not overlap by most of their length: {miss}; a fleet total only adds runs measured together: launch them with one --start-at (scripts/fleet.sh does), or pass --force")]
    NotTogether { miss: String },

    // `diff` and `merge`: per-second figures.
    #[error("{file}: {why}")]
    NotPerSecond { file: String, why: String },

    // `diff`.
    #[error("{base} is a {} document and {new} a {} document: diff two documents of one kind", .base_kind.name(), .new_kind.name())]
    KindsDiffer {
        base: String,
        base_kind: Kind,
        new: String,
        new_kind: Kind,
    },
    #[error("{base} and {new} ran different workloads: {}; diff runs of one workload, or pass --force", .differences.join(", "))]
    DiffWorkloads {
        base: String,
        new: String,
        differences: Vec<String>,
    },
    #[error("{base} and {new} have no {rows} in common: nothing to diff")]
    NothingInCommon {
        base: String,
        new: String,
        rows: &'static str,
    },

    // `plan` (the scaling fit).
    #[error("{shown}: {field} is {value}, not a whole number N of at least 1: give documents as stripebench wrote them")]
    NotAWholeN {
        shown: String,
        field: String,
        value: String,
    },
    #[error("{shown}: {field} is {value}, not a throughput (bytes per second, 0 to 10^18): give documents as stripebench wrote them")]
    NotAThroughput {
        shown: String,
        field: String,
        value: String,
    },
    #[error("{shown} sweeps {params}: plan needs a sweep over members or jobs (N)")]
    NoN { shown: String, params: String },
    #[error("{shown} sweeps {params} at once: plan needs N ({n}) to be the only parameter")]
    NotOnlyN {
        shown: String,
        params: String,
        n: String,
    },
    #[error("{shown}: points[{index}].bytes_per_sec_median is {median}, outside its runs' {low} to {high}: give documents as stripebench wrote them")]
    MedianOutsideRuns {
        shown: String,
        index: usize,
        median: f64,
        low: f64,
        high: f64,
    },
    #[error("{shown} gives N as {unit}, but {first} as {first_unit}: plan fits one kind of N; give sweeps over one parameter, or merges, or runs")]
    UnitsDiffer {
        shown: String,
        unit: String,
        first: String,
        first_unit: String,
    },
    #[error("{shown} ran a different workload than {first}: {difference}; plan fits one workload, or pass --force")]
    PlanWorkloads {
        shown: String,
        first: String,
        difference: String,
    },
    #[error("every point measured 0 B/s: there is no throughput to fit; check the runs' errors")]
    NoThroughput,
    #[error("plan needs at least 3 distinct N to fit a curve, and has {} ({}): sweep members or jobs over more values", .distinct.len(), .distinct.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", "))]
    TooFewN { distinct: Vec<f64> },

    // `plan --p99` (the latency curve).
    #[error(
        "{shown}: {field} is {value}, not a number: give a sweep document as stripebench wrote it"
    )]
    CurveNumber {
        shown: String,
        field: String,
        value: String,
    },
    #[error("{shown} sweeps {params}, not rate: plan --p99 reads a latency curve (sweep --param rate=curve)")]
    NotARateSweep { shown: String, params: String },
    #[error("{shown}: {field} is not a list of [name, value]")]
    NotValuePairs { shown: String, field: String },
    #[error("{shown}: {field} has no rate")]
    NoRate { shown: String, field: String },
    #[error("{shown} holds no point with a latency: nothing to plan from (did every point fail?)")]
    NoLatency { shown: String },
}

/// A document that repeats a run already given (`merge`): which, and why.
#[derive(Debug)]
pub struct RepeatedRun {
    /// The later file.
    pub file: String,
    /// The earlier run's host, as shown.
    pub host: String,
    pub start_unix_sec: f64,
    /// The file the earlier run came from.
    pub earlier: String,
    /// The rule that matched (`merge::repeat_of`).
    pub rule: &'static str,
}

impl std::fmt::Display for RepeatedRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} repeats the run of host {} that started at {:.6} (Unix s), already given in {} ({}), whatever hostname it gives",
            self.file, self.host, self.start_unix_sec, self.earlier, self.rule
        )
    }
}

impl crate::base::error::ExitCoded for Error {
    /// The exit code of this refusal: every one is about what was given (2).
    fn exit_code(&self) -> u8 {
        EXIT_USAGE
    }
}

/// Which command reads: each words its refusals as it always has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    Report,
    Diff,
    Merge,
    Plan,
    Curve,
}

/// Where a document came from: the file as shown in messages, and who reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub shown: String,
    pub reader: Reader,
}

impl Origin {
    pub fn new(path: &std::path::Path, reader: Reader) -> Origin {
        Origin {
            shown: crate::base::error::show_path(path),
            reader,
        }
    }
}

/// Why a document is not one a command can read.
#[derive(Debug, PartialEq)]
pub enum Why {
    /// Not JSON: the parser's message, and whether the text ended early.
    NotJson { detail: String, eof: bool },
    /// The top level is not an object.
    NotAnObject,
    /// No `schema_version`.
    NoSchemaVersion,
    /// Another tool's (`tool.name`, as JSON, or "missing").
    OtherTool(String),
    /// Another schema version (as the document gives it).
    SchemaVersion(String),
    /// A run interrupted before anything was measured.
    Unmeasured,
    /// A kind this command does not take; `None` when it is no kind at all.
    WrongKind(Option<Kind>),
    /// Its typed form does not parse.
    Invalid { kind: Kind, detail: String },
}

/// A document a command cannot read: from where, and why.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The command could not read the file.
    // `error`, not `source`: a source was said twice ("larger than 256
    // MiB: ...: larger than 256 MiB: ...").
    #[error("cannot read {shown}: {error}")]
    Unreadable {
        shown: String,
        error: crate::base::input::InputError,
    },
    /// The bytes are no document this command takes.
    #[error("{}", refusal(.origin, .why))]
    Refused { origin: Origin, why: Why },
}

const DIFF_TAKES: &str =
    "diff takes run, sweep, compare, merge or findings (advise) documents written with --json";

/// The text of a refusal, as each command has always said it.
fn refusal(o: &Origin, why: &Why) -> String {
    let s = &o.shown;
    let v = SCHEMA_VERSION;
    match (o.reader, why) {
        (Reader::Report, Why::NotJson { detail, eof }) => {
            let why = if *eof {
                "it ends early (truncated?)".to_string()
            } else {
                detail.clone()
            };
            format!("{s} is not a JSON document: {why}; give a document written with --json")
        }
        (Reader::Diff, Why::NotJson { eof: true, .. }) => format!(
            "{s} ends in the middle of its JSON (truncated?): give the whole document"
        ),
        (Reader::Diff, Why::NotJson { detail, .. }) => {
            format!("{s} is not JSON ({detail}): {DIFF_TAKES}")
        }
        (Reader::Merge, Why::NotJson { .. }) => {
            format!("{s} is not JSON: give run documents written with --json")
        }
        (Reader::Plan, Why::NotJson { .. }) => {
            format!("{s} is not JSON: give a sweep, merge or run document")
        }
        (Reader::Curve, Why::NotJson { .. }) => format!(
            "{s} is not JSON: give a sweep document (sweep --param rate=curve --json)"
        ),
        (Reader::Report, Why::NoSchemaVersion | Why::NotAnObject) => format!(
            "{s} is not a stripebench document (no schema_version): give a document written with --json"
        ),
        (Reader::Diff, Why::NotAnObject) => format!(
            "{s} is not a stripebench document (not a JSON object): {DIFF_TAKES}"
        ),
        (Reader::Diff, Why::NoSchemaVersion) => format!(
            "{s} is not a stripebench document (no schema_version): {DIFF_TAKES}"
        ),
        (Reader::Diff, Why::OtherTool(tool)) => format!(
            "{s} is not a stripebench document (its tool is {tool}): {DIFF_TAKES}"
        ),
        (Reader::Merge, Why::NoSchemaVersion | Why::NotAnObject | Why::OtherTool(_)) => {
            format!("{s} is not a stripebench document (no schema_version)")
        }
        (
            Reader::Plan | Reader::Curve | Reader::Report,
            Why::NoSchemaVersion | Why::NotAnObject | Why::OtherTool(_),
        ) => format!("{s} is not a stripebench document"),
        (Reader::Report, Why::SchemaVersion(n)) => format!(
            "{s} has schema version {n}, this stripebench reads {v}: use the stripebench that wrote it"
        ),
        (Reader::Diff, Why::SchemaVersion(n)) => format!(
            "{s} has schema version {n}, this stripebench reads {v}: diff documents of version {v}, or use the stripebench that wrote them"
        ),
        (_, Why::SchemaVersion(n)) => format!(
            "{s} has schema version {n}, this stripebench reads {v}: merge documents of one version"
        ),
        (Reader::Diff, Why::Unmeasured) => format!(
            "{s} is a run interrupted before anything was measured: there is nothing to diff"
        ),
        (_, Why::Unmeasured) => format!(
            "{s} is the document of a run interrupted before anything was measured: there is nothing to report"
        ),
        (Reader::Report, Why::WrongKind(_)) => format!(
            "{s} is a stripebench document of a kind this command does not take: give a run, sweep, compare, merge or findings document"
        ),
        (Reader::Diff, Why::WrongKind(Some(k @ (Kind::Plan | Kind::Topology | Kind::Diff)))) => {
            format!("{s} is a {} document: {DIFF_TAKES}", k.name())
        }
        (Reader::Diff, Why::WrongKind(_)) => format!(
            "{s} is a stripebench document of no kind diff knows: {DIFF_TAKES}"
        ),
        (Reader::Merge, Why::WrongKind(_)) => {
            format!("{s} is a sweep or compare document: merge takes run documents")
        }
        (Reader::Plan, Why::WrongKind(_)) => {
            format!("{s} is neither a sweep, a merge nor a run document")
        }
        (Reader::Curve, Why::WrongKind(_)) => format!(
            "{s} is not a sweep document: plan --p99 reads a latency curve (sweep --param rate=curve --json)"
        ),
        (Reader::Merge, Why::Invalid { kind: Kind::Merge, detail }) => {
            format!("{s} is not a valid merged document: {detail}")
        }
        (Reader::Merge, Why::Invalid { detail, .. }) => {
            format!("{s} is not a stripebench run document: {detail}")
        }
        (_, Why::Invalid { kind, detail }) => {
            format!("{s} is not a valid {} document: {detail}", kind.name())
        }
    }
}

/// A result of the document layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;
