//! Whether a compare phase's figures can be used: a phase with I/O errors
//! or workers that stopped on them is *failed* (its figures are shown,
//! marked, and kept out of the efficiency and the verdict); one whose
//! workers completed no I/O, or only a handful, is *thin* (never summarised
//! as a rate, kept out of the efficiency). What is wrong is said in words,
//! with the targets whose I/O failed. The rule is
//! `analysis::phase_health`; this file gathers its counts and says them.

use serde::{Deserialize, Serialize};

use crate::analysis::phase_health::{self, Status, MIN_WORKER_IOS};
use crate::document::run::RunDocument;
use crate::measure::worker::Ending;

/// What a phase's figures are good for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PhaseStatus {
    /// Every worker ran without error and completed enough I/O.
    #[default]
    Ok,
    /// Some worker completed no I/O or too few: not a rate.
    Thin,
    /// I/O errors, hung I/O, or workers stopped on errors.
    Failed,
}

/// A phase's status, what is wrong with it, and the targets whose I/O
/// failed (in target order).
pub fn check(doc: &RunDocument) -> (PhaseStatus, Vec<String>, Vec<String>) {
    let mut problems = Vec::new();
    let n = doc.workers.len();
    let errors = doc.total.figures.errors;
    let failing: Vec<String> = doc
        .targets
        .iter()
        .filter(|t| {
            t.failed
                || t.figures.errors > 0
                || doc
                    .workers
                    .iter()
                    .any(|w| w.target_index == t.index && !w.hung_ios.is_empty())
        })
        .map(|t| t.path.clone())
        .collect();
    if errors > 0 {
        let mut by_errno: Vec<(String, u64)> = Vec::new();
        for e in doc.workers.iter().flat_map(|w| &w.errors_by_errno) {
            match by_errno.iter_mut().find(|(name, _)| *name == e.name) {
                Some((_, c)) => *c += e.count,
                None => by_errno.push((e.name.clone(), e.count)),
            }
        }
        let kinds: Vec<String> = by_errno.iter().map(|(n, c)| format!("{n} {c}")).collect();
        problems.push(format!(
            "{errors} I/O error(s){}{}",
            if kinds.is_empty() {
                String::new()
            } else {
                format!(" ({})", kinds.join(", "))
            },
            if failing.is_empty() {
                String::new()
            } else {
                format!(" on {}", failing.join(", "))
            }
        ));
    }
    let stopped = doc
        .workers
        .iter()
        .filter(|w| w.stopped_on_errors || w.ended_by == Ending::Errors)
        .count();
    if stopped > 0 {
        problems.push(format!("{stopped} of {n} worker(s) stopped on errors"));
    }
    let hung: usize = doc.workers.iter().map(|w| w.hung_ios.len()).sum();
    if hung > 0 {
        problems.push(format!("{hung} I/O(s) hung"));
    }
    if doc.total.flush_errors > 0 {
        problems.push(format!("{} flush error(s)", doc.total.flush_errors));
    }
    let worker_ios: Vec<u64> = doc.workers.iter().map(|w| w.figures.ios).collect();
    let health = phase_health::judge(
        doc.has_errors(),
        stopped,
        doc.total.figures.ios,
        &worker_ios,
    );
    let (idle, few) = (health.idle, health.few);
    if doc.total.figures.ios == 0 {
        problems.push("no I/O completed".to_string());
    } else {
        if idle > 0 {
            problems.push(format!("{idle} of {n} worker(s) completed no I/O"));
        }
        if few > 0 {
            problems.push(format!(
                "{few} of {n} worker(s) completed fewer than {MIN_WORKER_IOS} I/Os"
            ));
        }
    }
    let status = match health.status {
        Status::Ok => PhaseStatus::Ok,
        Status::Thin => PhaseStatus::Thin,
        Status::Failed => PhaseStatus::Failed,
    };
    (status, problems, failing)
}

/// A phase's warnings as the text shows them: grouped as a run groups them
/// (one line for a kind many targets share), and identical lines once, with
/// how many times they came (over the runs of one phase kind, too).
pub fn grouped_warnings<'a>(
    docs: impl IntoIterator<Item = &'a RunDocument>,
) -> Vec<(String, usize)> {
    let mut lines: Vec<(String, usize)> = Vec::new();
    for d in docs {
        for w in crate::base::warning::group(&d.warnings) {
            let l = w.to_string();
            match lines.iter_mut().find(|(t, _)| *t == l) {
                Some((_, c)) => *c += 1,
                None => lines.push((l, 1)),
            }
        }
    }
    lines
}
