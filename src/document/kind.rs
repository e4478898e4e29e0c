//! The kinds of document stripebench writes, each named by the `kind` tag
//! its documents carry.

use serde::{Deserialize, Serialize};

/// The kinds of document stripebench writes; the `kind` tag of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Run,
    Sweep,
    Compare,
    Merge,
    Diff,
    Plan,
    LatencyPlan,
    Topology,
    Findings,
}

impl Kind {
    /// The `kind` tag's value.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Sweep => "sweep",
            Kind::Compare => "compare",
            Kind::Merge => "merge",
            Kind::Diff => "diff",
            Kind::Plan => "plan",
            Kind::LatencyPlan => "latency-plan",
            Kind::Topology => "topology",
            Kind::Findings => "findings",
        }
    }

    pub(crate) fn from_tag(tag: &str) -> Option<Kind> {
        [
            Kind::Run,
            Kind::Sweep,
            Kind::Compare,
            Kind::Merge,
            Kind::Diff,
            Kind::Plan,
            Kind::LatencyPlan,
            Kind::Topology,
            Kind::Findings,
        ]
        .into_iter()
        .find(|k| k.name() == tag)
    }
}

/// The kinds a "result" is (`report`, `diff`).
pub const RESULTS: [Kind; 4] = [Kind::Run, Kind::Sweep, Kind::Compare, Kind::Merge];

/// The kinds `report` and `diff` read back: the results, and `advise`'s
/// findings.
pub const READ_BACK: [Kind; 5] = [
    Kind::Run,
    Kind::Sweep,
    Kind::Compare,
    Kind::Merge,
    Kind::Findings,
];
