//! One run of a compare phase: its summary of its run document, which run
//! of its kind it is, and whether its figures can be used (see `health`).

use serde::{Deserialize, Serialize};

use super::health::{self, PhaseStatus};
use super::kind::PhaseKind;
use crate::document::run::RunDocument;

fn first_run() -> u32 {
    1
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Phase {
    /// What the phase measures, written as its name.
    #[serde(rename = "name")]
    pub kind: PhaseKind,
    /// Which run of its kind this is, from 1 (the member phases repeat
    /// `--repeat` times; the volume phases run once).
    #[serde(default = "first_run")]
    pub repeat: u32,
    pub direct: bool,
    pub workers: usize,
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub p99_ns: Option<u64>,
    /// CPU seconds (user + system) per 10^9 bytes.
    pub cpu_sec_per_gb: Option<f64>,
    /// `ok`; `thin` (a worker completed no I/O or too few: not a rate,
    /// kept out of the efficiency); `failed` (I/O errors or workers stopped
    /// on them: kept out of the efficiency and the verdict).
    #[serde(default)]
    pub status: PhaseStatus,
    /// What is wrong with the phase, in words (empty when ok).
    #[serde(default)]
    pub problems: Vec<String>,
    /// The targets whose I/O failed (members, or the volume).
    #[serde(default)]
    pub failing: Vec<String>,
    /// A phase that wrote the volume: what its members read meanwhile, by
    /// their own device counters (those that keep statistics), and what
    /// the volume itself read. Reads there are read-modify-write.
    #[serde(default)]
    pub members_read_bytes: Option<u64>,
    #[serde(default)]
    pub volume_read_bytes: Option<u64>,
    pub document: RunDocument,
}

impl Phase {
    /// A phase's summary of its run document (its first run).
    pub fn of(kind: PhaseKind, doc: RunDocument) -> Phase {
        Phase::run(kind, 1, doc)
    }

    /// Run `repeat` of a phase kind.
    pub fn run(kind: PhaseKind, repeat: u32, doc: RunDocument) -> Phase {
        let t = &doc.total;
        let (status, problems, failing) = health::check(&doc);
        let counted = || {
            doc.targets
                .iter()
                .filter_map(|t| t.device.as_ref())
                .filter(|d| d.stats)
        };
        let (members_read_bytes, volume_read_bytes) = if kind.writes() {
            let members: Vec<u64> = counted()
                .flat_map(|d| d.members.iter().filter(|m| m.stats).map(|m| m.read_bytes))
                .collect();
            (
                (!members.is_empty()).then(|| members.iter().sum()),
                Some(counted().map(|d| d.read_bytes).sum()),
            )
        } else {
            (None, None)
        };
        Phase {
            kind,
            repeat,
            direct: doc.config.direct,
            workers: doc.workers.len(),
            bytes_per_sec: t.figures.bytes_per_sec,
            iops: t.figures.iops,
            p99_ns: t.figures.latency_ns.map(|l| l.p99),
            cpu_sec_per_gb: t.cpu_sec_per_gb(),
            status,
            problems,
            failing,
            members_read_bytes,
            volume_read_bytes,
            document: doc,
        }
    }
}
