//! The JSON shape of what `analysis` hands a document: a latency summary,
//! a capacity fit, the foreign I/O seen on a device, and verification's bad
//! blocks. Each field means what the fact type's field says.

use serde::{Deserialize, Serialize};

use super::shape;
use crate::analysis::capacity::Usl;
use crate::analysis::foreign::Foreign;
use crate::analysis::histogram::LatencySummary;
use crate::analysis::verify::{BadBlock, BadKind};

#[derive(Serialize, Deserialize)]
#[serde(remote = "LatencySummary")]
pub struct LatencySummaryDef {
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub p99_99: u64,
    pub max: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Usl")]
pub struct UslDef {
    pub lambda: f64,
    pub sigma: f64,
    pub kappa: f64,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Foreign")]
pub struct ForeignDef {
    pub read_bytes: Option<u64>,
    pub write_bytes: Option<u64>,
    pub tolerance: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "BadKind", rename_all = "lowercase")]
pub enum BadKindDef {
    Corrupt,
    Misplaced,
    Stale,
    Lost,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "BadBlock")]
pub struct BadBlockDef {
    pub offset: u64,
    #[serde(with = "BadKindDef")]
    pub kind: BadKind,
    pub detail: String,
    /// Absent off a striped or parity volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_offset: Option<u64>,
}

shape! {
    LatencySummaryDef => LatencySummary,
    UslDef => Usl,
    ForeignDef => Foreign,
    BadKindDef => BadKind,
    BadBlockDef => BadBlock,
}
