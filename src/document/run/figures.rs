//! The figures a worker, a target and the total each have: bytes and I/Os
//! moved, errors, their rates over the entry's own seconds, latency, CPU
//! time and the latency histogram. One struct, read back flattened into
//! each entry (`#[serde(flatten)]`); written among each entry's own fields
//! in the contract's order by [`Figures::put`] (see [`super::wire`]). A
//! mixed pattern's reads and writes apart are figures too: [`DirectionsDoc`].

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize};

use crate::analysis::histogram::LatencySummary;
use crate::document::facts::{LatencySummaryDef, Opt, Shape};

/// One entry's figures over its `seconds`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Figures {
    pub bytes: u64,
    pub ios: u64,
    pub errors: u64,
    pub short_ios: u64,
    /// The time the rates run over: the window for the total, each
    /// worker's (and target's) own active time, less cache evictions.
    pub seconds: f64,
    pub bytes_per_sec: f64,
    pub iops: f64,
    #[serde(with = "crate::document::facts::Opt::<crate::document::facts::LatencySummaryDef>")]
    pub latency_ns: Option<LatencySummary>,
    /// On a schedule (`window.latency_from` "due"): issue to completion.
    #[serde(
        default,
        with = "crate::document::facts::Opt::<crate::document::facts::LatencySummaryDef>"
    )]
    pub service_latency_ns: Option<LatencySummary>,
    /// A mixed pattern (`randrw`): reads and writes apart, beside the
    /// combined figures. Absent otherwise.
    #[serde(default)]
    pub by_direction: Option<DirectionsDoc>,
    pub cpu_usr_sec: f64,
    pub cpu_sys_sec: f64,
    /// The latency histogram (base64 of hdrhistogram's V2 deflate encoding).
    pub histogram: String,
    /// On a schedule: the service-time histogram (as `histogram`).
    #[serde(default)]
    pub service_histogram: Option<String>,
}

/// One field of [`Figures`], named for [`Figures::put`]: each entry of the
/// document writes its figures in runs among its own fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fig {
    Bytes,
    Ios,
    Errors,
    ShortIos,
    Seconds,
    BytesPerSec,
    Iops,
    Latency,
    ServiceLatency,
    ByDirection,
    CpuUsr,
    CpuSys,
    Histogram,
    ServiceHistogram,
}

impl Fig {
    /// Every field, in the order the contract lists them in the total.
    #[cfg(test)]
    pub(super) const ALL: [Fig; 14] = [
        Fig::Bytes,
        Fig::Ios,
        Fig::Errors,
        Fig::ShortIos,
        Fig::Seconds,
        Fig::BytesPerSec,
        Fig::Iops,
        Fig::Latency,
        Fig::ServiceLatency,
        Fig::ByDirection,
        Fig::CpuUsr,
        Fig::CpuSys,
        Fig::Histogram,
        Fig::ServiceHistogram,
    ];

    pub(super) fn name(self) -> &'static str {
        match self {
            Fig::Bytes => "bytes",
            Fig::Ios => "ios",
            Fig::Errors => "errors",
            Fig::ShortIos => "short_ios",
            Fig::Seconds => "seconds",
            Fig::BytesPerSec => "bytes_per_sec",
            Fig::Iops => "iops",
            Fig::Latency => "latency_ns",
            Fig::ServiceLatency => "service_latency_ns",
            Fig::ByDirection => "by_direction",
            Fig::CpuUsr => "cpu_usr_sec",
            Fig::CpuSys => "cpu_sys_sec",
            Fig::Histogram => "histogram",
            Fig::ServiceHistogram => "service_histogram",
        }
    }
}

/// Writes `value` as field `name`, or skips the field when it is `None`.
pub(super) fn put_some<S: SerializeStruct, T: serde::Serialize>(
    s: &mut S,
    name: &'static str,
    value: &Option<T>,
) -> Result<(), S::Error> {
    match value {
        Some(v) => s.serialize_field(name, v),
        None => s.skip_field(name),
    }
}

impl Figures {
    /// Writes the fields `which`, in that order, into an entry being
    /// serialized. The schedule's and the mixed pattern's fields are left
    /// out when absent (documents of plain runs never had them).
    pub(super) fn put<S: SerializeStruct>(&self, s: &mut S, which: &[Fig]) -> Result<(), S::Error> {
        for &f in which {
            let name = f.name();
            match f {
                Fig::Bytes => s.serialize_field(name, &self.bytes)?,
                Fig::Ios => s.serialize_field(name, &self.ios)?,
                Fig::Errors => s.serialize_field(name, &self.errors)?,
                Fig::ShortIos => s.serialize_field(name, &self.short_ios)?,
                Fig::Seconds => s.serialize_field(name, &self.seconds)?,
                Fig::BytesPerSec => s.serialize_field(name, &self.bytes_per_sec)?,
                Fig::Iops => s.serialize_field(name, &self.iops)?,
                Fig::Latency => {
                    s.serialize_field(name, &Opt::<LatencySummaryDef>::doc(&self.latency_ns))?
                }
                Fig::ServiceLatency => put_some(
                    s,
                    name,
                    &self.service_latency_ns.as_ref().map(LatencySummaryDef::doc),
                )?,
                Fig::ByDirection => put_some(s, name, &self.by_direction)?,
                Fig::CpuUsr => s.serialize_field(name, &self.cpu_usr_sec)?,
                Fig::CpuSys => s.serialize_field(name, &self.cpu_sys_sec)?,
                Fig::Histogram => s.serialize_field(name, &self.histogram)?,
                Fig::ServiceHistogram => put_some(s, name, &self.service_histogram)?,
            }
        }
        Ok(())
    }

    /// CPU seconds (user + system) per 10^9 bytes moved.
    pub fn cpu_sec_per_gb(&self) -> Option<f64> {
        (self.bytes > 0).then(|| (self.cpu_usr_sec + self.cpu_sys_sec) / (self.bytes as f64 / 1e9))
    }
}

/// A mixed pattern's reads and writes, each on its own.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DirectionsDoc {
    /// The share of completed I/Os that were reads, in percent: what
    /// `--mix` achieved (`config.read_pct` is what it asked).
    pub read_pct: f64,
    pub reads: DirectionDoc,
    pub writes: DirectionDoc,
}

/// One direction's figures, over the same seconds as the combined ones.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DirectionDoc {
    pub bytes: u64,
    pub ios: u64,
    pub bytes_per_sec: f64,
    pub iops: f64,
    #[serde(with = "crate::document::facts::Opt::<crate::document::facts::LatencySummaryDef>")]
    pub latency_ns: Option<LatencySummary>,
    /// Its latency histogram (as `histogram`).
    pub histogram: String,
}
