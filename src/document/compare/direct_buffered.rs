//! Seed 004's question as figures: the volume read with O_DIRECT against
//! the volume read through the page cache, as a rate ratio beside the CPU
//! seconds per GB that explain it. Only phases whose status is ok count.

use serde::{Deserialize, Serialize};

use super::health::PhaseStatus;
use super::kind::PhaseKind;
use super::phase::Phase;

/// One O_DIRECT phase on the volume against one buffered (or, with
/// `--uncached`, uncached) phase on it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DirectBuffered {
    /// The O_DIRECT phase, by its name.
    pub direct: PhaseKind,
    /// The buffered phase, by its name.
    pub buffered: PhaseKind,
    pub direct_bytes_per_sec: f64,
    pub buffered_bytes_per_sec: f64,
    /// direct ÷ buffered; none when the buffered phase moved nothing.
    pub ratio: Option<f64>,
    pub direct_cpu_sec_per_gb: Option<f64>,
    pub buffered_cpu_sec_per_gb: Option<f64>,
}

/// The pairs compare sets side by side, first seed 004's own (one O_DIRECT
/// worker per member against one buffered thread), then the same worker
/// count each way (1 and 1, N and N). A pair needs both phases ok.
pub fn pairs(runs: &[&Phase]) -> Vec<DirectBuffered> {
    let find = |want: fn(&PhaseKind) -> bool| {
        runs.iter()
            .find(|p| want(&p.kind) && p.status == PhaseStatus::Ok)
            .copied()
    };
    let per_member = find(|k| matches!(k, PhaseKind::VolumePerMember { .. }));
    let one_direct = find(|k| *k == PhaseKind::VolumeOneWorker);
    let one_buffered = find(|k| *k == PhaseKind::VolumeOneBuffered);
    let n_buffered = find(|k| matches!(k, PhaseKind::VolumeBuffered { .. }));
    // `--uncached`: the page cache's third mode, against the same O_DIRECT phases.
    let one_uncached = find(|k| *k == PhaseKind::VolumeOneUncached);
    let n_uncached = find(|k| matches!(k, PhaseKind::VolumeUncached { .. }));
    [
        (per_member, one_buffered),
        (one_direct, one_buffered),
        (per_member, n_buffered),
        (per_member, one_uncached),
        (per_member, n_uncached),
    ]
    .into_iter()
    .filter_map(|(d, b)| Some(pair(d?, b?)))
    .collect()
}

fn pair(d: &Phase, b: &Phase) -> DirectBuffered {
    DirectBuffered {
        direct: d.kind.clone(),
        buffered: b.kind.clone(),
        direct_bytes_per_sec: d.bytes_per_sec,
        buffered_bytes_per_sec: b.bytes_per_sec,
        ratio: (b.bytes_per_sec > 0.0).then(|| d.bytes_per_sec / b.bytes_per_sec),
        direct_cpu_sec_per_gb: d.cpu_sec_per_gb,
        buffered_cpu_sec_per_gb: b.cpu_sec_per_gb,
    }
}
