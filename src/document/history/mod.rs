//! A disk's history: what a run document gives it (one [`Entry`] per
//! target whose disk is known), and the `history` command's document
//! (kind "history", docs/json.md): the disks known, each one's series per
//! workload, and the drift and fail-slow verdicts `analysis/` gave them.

mod doc;

pub use doc::*;

use crate::base::warning::Warning;
use crate::device::identity::DiskIdentity;
use crate::document::run::RunDocument;
use crate::document::workload::Workload;

/// One target's result, as a history keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub identity: DiskIdentity,
    pub host: String,
    /// The target's path at the time (a device name is not the disk).
    pub device: String,
    /// When the run's window opened (Unix seconds).
    pub time: f64,
    /// The workload key ([`Workload`] with the number of targets).
    pub workload: String,
    /// The workload in a few words: "randread 4k qd1 direct".
    pub label: String,
    /// What measured it: "run", "compare:member-alone", "advise:read-ahead".
    pub context: String,
    pub bytes_per_sec: f64,
    pub iops: f64,
    /// The I/Os its figures rest on (None: recorded before it was kept).
    pub ios: Option<u64>,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub p999_ns: Option<u64>,
    /// The latency histogram as the document holds it (hdrhistogram V2
    /// deflate, base64), so that results merge exactly.
    pub histogram: String,
    /// Why the figure is not the device's speed (the page cache, holes,
    /// blocks never written, an interrupted run, failed I/O): kept, never
    /// judged.
    pub not_device_speed: Option<String>,
}

/// The entries of a run document: one per target whose disk is known.
pub fn entries(doc: &RunDocument, context: &str) -> Vec<Entry> {
    let workload = Workload::of(&doc.config).with_targets(doc.targets.len());
    let label = label(doc);
    let whole_run = run_not_device_speed(doc);
    doc.targets
        .iter()
        .filter_map(|t| {
            let identity = t.identity.clone().flatten()?;
            let lat = t.figures.latency_ns.as_ref();
            let not_device_speed = whole_run.clone().or_else(|| {
                (t.failed || t.figures.errors > 0).then(|| "I/O failed on it".to_string())
            });
            Some(Entry {
                identity,
                host: doc.host.hostname.clone(),
                device: t.path.clone(),
                time: doc.window.start_unix_sec,
                workload: workload.key(),
                label: label.clone(),
                context: context.to_string(),
                bytes_per_sec: t.figures.bytes_per_sec,
                iops: t.figures.iops,
                ios: Some(t.figures.ios),
                p50_ns: lat.map(|l| l.p50),
                p99_ns: lat.map(|l| l.p99),
                p999_ns: lat.map(|l| l.p99_9),
                histogram: t.figures.histogram.clone(),
                not_device_speed,
            })
        })
        .collect()
}

/// The workload in a few words.
pub fn label(doc: &RunDocument) -> String {
    let c = &doc.config;
    let rw = if c.read_pct > 0 && c.read_pct < 100 {
        format!("{} {}%", c.rw.name(), c.read_pct)
    } else {
        c.rw.name().to_string()
    };
    let bs =
        c.bs.parse::<u64>()
            .map(crate::base::units::fmt_size_arg)
            .unwrap_or_else(|_| c.bs.clone());
    let mut words = format!(
        "{rw} {bs} qd{} {}",
        c.iodepth,
        if c.direct { "direct" } else { "buffered" }
    );
    if c.jobs > 1 {
        words.push_str(&format!(" x{}", c.jobs));
    }
    if doc.targets.len() > 1 {
        words.push_str(&format!(", {} at once", doc.targets.len()));
    }
    words
}

/// Why none of a run's figures is a device's speed, when one of its
/// warnings says so, or it was interrupted.
fn run_not_device_speed(doc: &RunDocument) -> Option<String> {
    fn walk(w: &Warning) -> Option<String> {
        match w {
            Warning::Grouped { members, .. } => members.iter().find_map(walk),
            Warning::HolesReadAnyway { .. }
            | Warning::UnbackedDevice { .. }
            | Warning::MemoryTarget { .. }
            | Warning::CacheServedReads { .. }
            | Warning::CacheKeptWrites { .. }
            | Warning::ZeroReads { .. }
            | Warning::UnwrittenBlocks { .. } => Some(w.to_string()),
            _ => None,
        }
    }
    if doc.interrupted {
        return Some("the run was interrupted".into());
    }
    doc.warnings.iter().find_map(walk)
}

#[cfg(test)]
mod tests;
