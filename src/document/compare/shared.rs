//! The members behind one host adapter, read together (`--solo` on members
//! behind two adapters or more): each group's rate together against the
//! sum of its members' rates alone, and whether its shared path caps it
//! (`analysis::shared_path`).

use serde::{Deserialize, Serialize};

use super::health::PhaseStatus;
use super::kind::PhaseKind;
use super::phase::Phase;
use crate::analysis::shared_path::{self, GroupFigures};
use crate::analysis::summary::median;

/// One adapter's members, together and alone.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SharedPath {
    /// The adapter (a PCI function, `0000:00:05.0`; with `/expander-N:M`
    /// behind a SAS expander).
    pub adapter: String,
    /// Its members (paths), in stripe order.
    pub members: Vec<String>,
    /// The members read at once (median of the runs that did not fail), bytes/s.
    pub together_bytes_per_sec: f64,
    /// Each member alone (median of its `--solo` runs), bytes/s, in
    /// `members` order; empty when a member has no run alone.
    pub alone_bytes_per_sec: Vec<f64>,
    /// together ÷ the sum alone.
    pub share: Option<f64>,
    /// The shared path caps them: their share is far below the sum and
    /// below the other adapters' (`analysis::shared_path`).
    pub capped: bool,
}

impl SharedPath {
    /// The sum of the members' rates alone.
    pub fn alone_sum(&self) -> f64 {
        self.alone_bytes_per_sec.iter().sum()
    }

    /// The median member alone.
    pub fn alone_median(&self) -> f64 {
        median(self.alone_bytes_per_sec.clone())
    }

    /// In words (MB/s = 10^6 B/s): "controller 0000:00:05.0: 4 members
    /// together 20.9 MB/s against 4 x 19.8 alone (26%)", and, when capped,
    /// ": the shared path caps them". The adapter is shown escaped.
    pub fn describe(&self) -> String {
        let n = self.members.len();
        let alone = if self.alone_bytes_per_sec.len() == n {
            format!(
                " against {n} x {:.1} alone (sum {:.1}; {:.0}%)",
                self.alone_median() / 1e6,
                self.alone_sum() / 1e6,
                self.share.unwrap_or(0.0) * 100.0
            )
        } else {
            " (not every member was measured alone)".to_string()
        };
        format!(
            "controller {}: {n} members together {:.1} MB/s{alone}{}",
            crate::base::error::show_text(&self.adapter),
            self.together_bytes_per_sec / 1e6,
            if self.capped {
                ": the shared path caps them"
            } else {
                ""
            }
        )
    }
}

/// Every adapter group read together, in the order they ran, judged.
pub fn shared_paths(all: &[&Phase]) -> Vec<SharedPath> {
    let mut adapters: Vec<&str> = Vec::new();
    for p in all {
        if let PhaseKind::Shared { adapter } = &p.kind {
            if !adapters.contains(&adapter.as_str()) {
                adapters.push(adapter);
            }
        }
    }
    let mut out: Vec<SharedPath> = adapters.into_iter().filter_map(|a| group(all, a)).collect();
    let figures: Vec<GroupFigures> = out
        .iter()
        .map(|g| GroupFigures {
            adapter: g.adapter.clone(),
            alone: g.alone_bytes_per_sec.clone(),
            together: g.together_bytes_per_sec,
        })
        .collect();
    for c in shared_path::judge(&figures) {
        out[c.group].capped = true;
    }
    out
}

/// One adapter's figures, from its runs together that did not fail and
/// its members' runs alone.
fn group(all: &[&Phase], adapter: &str) -> Option<SharedPath> {
    let runs: Vec<&&Phase> = all
        .iter()
        .filter(|p| p.status != PhaseStatus::Failed)
        .filter(|p| matches!(&p.kind, PhaseKind::Shared { adapter: a } if a == adapter))
        .collect();
    let first = runs.first()?;
    let members: Vec<String> = first
        .document
        .targets
        .iter()
        .map(|t| t.path.clone())
        .collect();
    let together = median(runs.iter().map(|p| p.bytes_per_sec).collect());
    let alone: Vec<Option<f64>> = members
        .iter()
        .map(|m| {
            let rates: Vec<f64> = all
                .iter()
                .filter(|p| p.status != PhaseStatus::Failed)
                .filter(|p| matches!(&p.kind, PhaseKind::Alone { member } if member == m))
                .map(|p| p.bytes_per_sec)
                .collect();
            (!rates.is_empty()).then(|| median(rates))
        })
        .collect();
    let alone: Vec<f64> = alone
        .iter()
        .copied()
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default();
    let sum: f64 = alone.iter().sum();
    Some(SharedPath {
        adapter: adapter.to_string(),
        members,
        together_bytes_per_sec: together,
        share: (sum > 0.0).then(|| together / sum),
        alone_bytes_per_sec: alone,
        capped: false,
    })
}
