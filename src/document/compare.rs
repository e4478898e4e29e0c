//! The compare document (`compare --json`): each phase's summary with its
//! full run document, the members' shares, the stripe efficiency and the
//! slowest member.

use serde::{Deserialize, Serialize};

use crate::device::topology::Topology;
use crate::document::run::{RunDocument, ToolInfo};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Phase {
    pub name: String,
    pub direct: bool,
    pub workers: usize,
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub p99_ns: Option<u64>,
    /// CPU seconds (user + system) per 10^9 bytes.
    pub cpu_sec_per_gb: Option<f64>,
    pub document: RunDocument,
}

impl Phase {
    /// A phase's summary of its run document.
    pub fn of(name: String, doc: RunDocument) -> Phase {
        let t = &doc.total;
        Phase {
            name,
            direct: doc.config.direct,
            workers: doc.workers.len(),
            bytes_per_sec: t.bytes_per_sec,
            iops: t.iops,
            p99_ns: t.latency_ns.map(|l| l.p99),
            cpu_sec_per_gb: t.cpu_sec_per_gb(),
            document: doc,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemberResult {
    pub path: String,
    /// In the all-members-at-once phase.
    pub bytes_per_sec: f64,
    /// Its share of the members' total.
    pub share: f64,
    /// Alone (with --solo).
    pub solo_bytes_per_sec: Option<f64>,
    pub slow: bool,
}

/// The compare document (`--json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename = "compare")]
pub struct CompareDocument {
    pub schema_version: u32,
    pub tool: ToolInfo,
    /// A signal ended the comparison: the phase it ended is kept (its own
    /// document says `interrupted`), the later ones did not run.
    #[serde(default)]
    pub interrupted: bool,
    pub volume: String,
    pub topology: Topology,
    /// The file the volume phases read, on a mounted volume.
    pub test_file: Option<String>,
    pub phases: Vec<Phase>,
    /// Volume with one worker per member (O_DIRECT) ÷ all members at once.
    pub efficiency: Option<f64>,
    pub members: Vec<MemberResult>,
    /// The member flagged slow, if any.
    pub slowest: Option<String>,
    pub notes: Vec<String>,
}
