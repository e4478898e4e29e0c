//! The compare document (`compare --json`): each phase's summary with its
//! full run document and its status, the repeated runs of the member
//! phases, the members' figures and shares, the level's ceilings and the
//! stripe efficiency against one of them (in two: the stripe layer, the
//! members' imbalance), and the slow-member verdict; and their
//! assembly from the phases that ran, which finds each phase by its
//! [`PhaseKind`], never by its display name. A function of the phases and
//! the topology: testable without devices.

mod ceiling;
mod direct_buffered;
mod health;
mod kind;
mod phase;
mod resync;
mod shared;
#[cfg(test)]
mod tests;
mod verdict;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

pub use ceiling::{ceilings, geometry, CeilingDoc, StripeEfficiency};
pub use direct_buffered::DirectBuffered;
pub use health::{grouped_warnings, PhaseStatus};
pub use kind::PhaseKind;
pub use phase::Phase;
pub use shared::SharedPath;
pub use verdict::{Fence, Flagged, Thin, Verdict};

use crate::analysis::slow_member::{self, host_factors, Figure, Sample};
use crate::analysis::summary::median;
use crate::device::topology::Topology;
use crate::document::run::ToolInfo;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemberResult {
    pub path: String,
    /// In the all-members-at-once phase (the median of its runs without
    /// errors).
    pub bytes_per_sec: f64,
    /// Its share of the members' total.
    pub share: f64,
    /// Alone (with --solo; the median of its runs without errors).
    pub solo_bytes_per_sec: Option<f64>,
    /// Flagged by the verdict's rule.
    pub slow: bool,
    /// The figure the verdict judged (B/s): alone with --solo, else together.
    #[serde(default)]
    pub figure_bytes_per_sec: Option<f64>,
    /// The lowest and highest rate of the runs that figure is the median of.
    #[serde(default)]
    pub range_bytes_per_sec: Option<(f64, f64)>,
    /// The median p99 of those runs.
    #[serde(default)]
    pub p99_ns: Option<f64>,
    /// Completed I/Os over those runs.
    #[serde(default)]
    pub ios: u64,
    /// I/O errors on this member over every member phase it ran in.
    #[serde(default)]
    pub errors: u64,
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
    #[serde(with = "crate::document::facts::TopologyDef")]
    pub topology: Topology,
    /// The md array's state when it is not whole or idle ("degraded: 1 of
    /// 6 members down (slot 2 empty)", "recover 12.5% done at ..."), as
    /// `analysis::array_state` says it; absent when healthy, and from
    /// older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_state: Option<String>,
    /// The file the volume phases read, on a mounted volume.
    pub test_file: Option<String>,
    /// The first run of each phase kind, in order.
    pub phases: Vec<Phase>,
    /// How many times the member phases ran (`--repeat`).
    #[serde(default = "one")]
    pub repeat: usize,
    /// The member phases' further runs (`repeat` 2 and on), in the order they ran.
    #[serde(default)]
    pub repeats: Vec<Phase>,
    /// The stripe efficiency in two: the volume with one worker per member
    /// (O_DIRECT, or full stripes written) ÷ the ceiling of its level and
    /// direction (`efficiency_ceiling`) taken at its slowest member, and
    /// the slowest member ÷ the median, from the members together; and the
    /// larger loss. Only phases whose status is ok count. (It replaces
    /// `efficiency`, the volume ÷ the members' total, which blamed the
    /// stripe layer for a slow member; an older document's is ignored.)
    #[serde(default)]
    pub stripe_efficiency: Option<StripeEfficiency>,
    /// The ceiling `stripe_efficiency` is measured against.
    #[serde(default)]
    pub efficiency_ceiling: Option<CeilingDoc>,
    /// Why there is no efficiency, or why one above 100 % can be.
    #[serde(default)]
    pub efficiency_note: Option<String>,
    /// The level's ceilings for reads and for writes.
    #[serde(default)]
    pub ceilings: Vec<CeilingDoc>,
    /// The volume read O_DIRECT against through the page cache (seed 004):
    /// rate ratios and CPU seconds per GB, from the phases that are ok.
    #[serde(default)]
    pub direct_buffered: Vec<DirectBuffered>,
    pub members: Vec<MemberResult>,
    /// The slowest member flagged, if any (every one flagged is in `verdict`).
    pub slowest: Option<String>,
    /// The slow-member verdict, with its rule's numbers.
    #[serde(default)]
    pub verdict: Option<Verdict>,
    /// With `--solo` on members behind two host adapters or more: each
    /// adapter's members together against their sum alone, and whether
    /// their shared path caps them. Absent otherwise, and from older documents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_paths: Vec<SharedPath>,
    pub notes: Vec<String>,
}

fn one() -> usize {
    1
}

impl CompareDocument {
    /// Every run, in the order of `phases` then `repeats`.
    pub fn runs(&self) -> impl Iterator<Item = &Phase> {
        self.phases.iter().chain(&self.repeats)
    }

    /// Whether any run met an I/O error (the exit status says so).
    pub fn failed(&self) -> bool {
        self.runs().any(|p| p.document.has_errors())
    }
}

/// The phases compare runs, in order, on a volume of `members` (each as
/// its name is shown): each member alone first with `solo`. With `writes`
/// (`--rw write`) the members are still only read, and the volume phases
/// write it: full stripes, then less than one. With `uncached`
/// (`--uncached`, reads only) the volume is read through the page cache
/// without keeping it too (RWF_DONTCACHE), after the buffered phases.
pub fn phase_kinds(
    members: &[String],
    shared: &[String],
    solo: bool,
    writes: bool,
    uncached: bool,
) -> Vec<PhaseKind> {
    let n = members.len();
    let alone = members
        .iter()
        .filter(|_| solo)
        .map(|m| PhaseKind::Alone { member: m.clone() });
    let volume = if writes {
        vec![
            PhaseKind::VolumeFullStripeWrites { workers: n },
            PhaseKind::VolumeSubStripeWrites { workers: n },
        ]
    } else {
        let mut v = vec![
            PhaseKind::VolumeOneWorker,
            PhaseKind::VolumePerMember { workers: n },
            PhaseKind::VolumeBuffered { workers: n },
            PhaseKind::VolumeOneBuffered,
        ];
        if uncached {
            v.push(PhaseKind::VolumeUncached { workers: n });
            v.push(PhaseKind::VolumeOneUncached);
        }
        v
    };
    // Each adapter's members together, after all of them (`--solo` only:
    // a group is judged against its members alone).
    let shared = shared
        .iter()
        .filter(|_| solo)
        .map(|a| PhaseKind::Shared { adapter: a.clone() });
    alone
        .chain(std::iter::once(PhaseKind::Together))
        .chain(shared)
        .chain(volume)
        .collect()
}

/// Every run compare makes, in order, with its repeat number: the member
/// phases `repeat` times over (all of them, then all again, so that a
/// drift of the machine touches every member alike), then the volume's.
pub fn phase_plan(
    members: &[String],
    shared: &[String],
    solo: bool,
    writes: bool,
    uncached: bool,
    repeat: usize,
) -> Vec<(PhaseKind, u32)> {
    let kinds = phase_kinds(members, shared, solo, writes, uncached);
    let (member, volume): (Vec<PhaseKind>, Vec<PhaseKind>) =
        kinds.into_iter().partition(|k| !k.on_volume());
    let mut plan = Vec::new();
    for r in 1..=u32::try_from(repeat.max(1)).unwrap_or(u32::MAX) {
        plan.extend(member.iter().cloned().map(|k| (k, r)));
    }
    plan.extend(volume.into_iter().map(|k| (k, 1)));
    plan
}

/// How a run is told apart from the other runs of its kind, after its
/// name: " (run 2 of 3)" for a repeated member phase; nothing for a phase
/// that runs once.
pub fn run_label(kind: &PhaseKind, repeat: u32, of: usize) -> String {
    if kind.on_volume() || of <= 1 {
        String::new()
    } else {
        format!(" (run {repeat} of {of})")
    }
}

/// A run's `phase` in the live stream: its name for the first run of its
/// kind (the name `phases` holds), with its run label for a later one (one
/// of `repeats`), so that each run's lines add up to its own document.
pub fn live_label(kind: &PhaseKind, repeat: u32, of: usize) -> String {
    if repeat <= 1 {
        kind.to_string()
    } else {
        format!("{kind}{}", run_label(kind, repeat, of))
    }
}

/// What a comparison knows besides its phases.
pub struct Volume {
    /// The volume as named, shown.
    pub volume: String,
    pub topology: Topology,
    /// The test file the volume phases read, on a mounted volume.
    pub test_file: Option<String>,
    /// Said before the phases ran.
    pub notes: Vec<String>,
    /// `--repeat`: runs of each member phase.
    pub repeat: usize,
}

impl Volume {
    /// A volume as named (`shown`), its stack, the test file its phases
    /// read, a note said before them, and `--repeat`.
    pub fn new(
        shown: String,
        topology: Topology,
        test_file: Option<String>,
        note: Option<String>,
        repeat: usize,
    ) -> Volume {
        Volume {
            volume: shown,
            topology,
            test_file,
            notes: note.into_iter().collect(),
            repeat,
        }
    }
}

/// Why `compare` cannot compare a volume: the user named something without
/// members (the command refuses it as a usage error, exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{shown} is not a volume with members ({name} is a {kind}): compare needs md, dm or a btrfs mount point")]
pub struct NotAVolume {
    pub shown: String,
    pub name: String,
    pub kind: String,
}

/// The members compare drives (see `Topology::stripe_members`), or why the
/// volume has none. `shown`: the volume as messages show it.
pub fn members_of(topo: &Topology, shown: &str) -> Result<Vec<String>, NotAVolume> {
    if topo.root.members.is_empty() {
        return Err(NotAVolume {
            shown: shown.into(),
            name: topo.root.name.clone(),
            kind: topo.root.kind.clone(),
        });
    }
    Ok(topo
        .stripe_members()
        .iter()
        .map(|l| l.path.clone())
        .collect())
}

/// The compare document of the runs that ran, in any order (a run of
/// `repeat` 2 or more goes to `repeats`). `signalled`: a signal came (a
/// phase it stopped says so itself).
pub fn assemble(volume: Volume, runs: Vec<Phase>, signalled: bool) -> CompareDocument {
    let interrupted = signalled || runs.iter().any(|p| p.document.interrupted);
    let count = runs.len();
    let repeat = runs
        .iter()
        .map(|p| p.repeat as usize)
        .fold(volume.repeat.max(1), usize::max);
    let (phases, repeats): (Vec<Phase>, Vec<Phase>) = runs.into_iter().partition(|p| p.repeat <= 1);
    let all: Vec<&Phase> = phases.iter().chain(&repeats).collect();
    let health = volume.topology.root.md_health();
    let excused = excused_members(&volume.topology, health.as_ref());
    let (mut members, verdict) = member_results(&all, &excused);
    let n = members.len();
    let ceilings = ceilings(&volume.topology, n);
    let (geometry, _) = geometry(&volume.topology, n);
    let excused_paths: Vec<String> = excused.iter().map(|(p, _)| p.clone()).collect();
    let (stripe_efficiency, efficiency_ceiling, efficiency_note) =
        ceiling::efficiency(&all, &ceilings, &geometry, &excused_paths);
    let direct_buffered = direct_buffered::pairs(&all);
    let shared_paths = shared::shared_paths(&all);
    let mut notes = volume.notes;
    let array_state = health.as_ref().and_then(|h| h.describe());
    if let Some(h) = health.as_ref().filter(|h| h.degraded()) {
        notes.push(format!(
            "the array is degraded ({} of {} members down): its figures are a degraded array's, not what it gives whole; the read ceiling is the degraded one",
            h.down, h.of
        ));
    }
    for (path, why) in &excused {
        notes.push(format!(
            "{path} is not judged against the other members: it is {why}"
        ));
    }
    notes.extend(resync::notes(
        &all,
        health.as_ref().is_some_and(|h| h.sync.is_some()),
    ));
    if interrupted {
        notes.push(format!(
            "interrupted: {count} of the phases ran; the figures cover what was measured"
        ));
    }
    let flagged: Vec<&str> = verdict
        .as_ref()
        .map(|v| v.flagged.iter().map(|f| f.member.as_str()).collect())
        .unwrap_or_default();
    for m in &mut members {
        m.slow = flagged.contains(&m.path.as_str());
    }
    CompareDocument {
        schema_version: crate::document::run::SCHEMA_VERSION,
        tool: ToolInfo::this(),
        interrupted,
        array_state,
        volume: volume.volume,
        test_file: volume.test_file,
        topology: volume.topology,
        stripe_efficiency,
        efficiency_ceiling,
        efficiency_note,
        ceilings,
        direct_buffered,
        slowest: flagged.first().map(|s| s.to_string()),
        verdict,
        phases,
        repeat,
        repeats,
        members,
        shared_paths,
        notes,
    }
}

/// One member's samples in the runs of `kind`-matching phases that did not
/// fail: from the target of that path (a member alone has one target).
fn samples(runs: &[&Phase], path: &str, together: bool) -> Vec<Sample> {
    samples_of(runs, path, together, false, &HashMap::new())
}

/// The host's moment of each member's run alone, by round and member.
type Moments<'a> = HashMap<(u32, &'a str), (f64, f64)>;

/// As [`samples`], with the failed runs too when `failed`, each run
/// carrying the host's moment of it when `moments` has it.
fn samples_of(
    runs: &[&Phase],
    path: &str,
    together: bool,
    failed: bool,
    moments: &Moments,
) -> Vec<Sample> {
    runs.iter()
        .filter(|p| failed || p.status != PhaseStatus::Failed)
        .filter(|p| match &p.kind {
            PhaseKind::Alone { member } => !together && member == path,
            PhaseKind::Together => together,
            _ => false,
        })
        .filter_map(|p| {
            let t = p.document.targets.iter().find(|t| t.path == path)?;
            let mut s = Sample::measured(
                t.figures.bytes_per_sec,
                t.figures.latency_ns.map(|l| l.p99),
                t.figures.ios,
            );
            if let Some(&(rate, p99)) = moments.get(&(p.repeat, path)) {
                s.host_rate = rate;
                s.host_p99 = p99;
            }
            Some(s)
        })
        .collect()
}

/// The host's moment of each member's run alone ([`host_factors`], from
/// the members measured just before and after it), by round (`repeat`)
/// and member: the runs of one round in the order they ran, failed ones
/// left out.
fn alone_moments<'a>(runs: &[&'a Phase]) -> Moments<'a> {
    let mut moments = HashMap::new();
    let mut rounds: Vec<u32> = runs.iter().map(|p| p.repeat).collect();
    rounds.sort_unstable();
    rounds.dedup();
    for r in rounds {
        let round: Vec<(&str, f64, Option<f64>)> = runs
            .iter()
            .filter(|p| p.repeat == r && p.status != PhaseStatus::Failed)
            .filter_map(|p| match &p.kind {
                PhaseKind::Alone { member } => {
                    let t = p.document.targets.iter().find(|t| &t.path == member)?;
                    Some((
                        member.as_str(),
                        t.figures.bytes_per_sec,
                        t.figures.latency_ns.map(|l| l.p99 as f64),
                    ))
                }
                _ => None,
            })
            .collect();
        let rates: Vec<f64> = round.iter().map(|x| x.1).collect();
        let p99s: Vec<Option<f64>> = round.iter().map(|x| x.2).collect();
        for ((m, _, _), f) in round.iter().zip(host_factors(&rates, &p99s)) {
            moments.insert((r, *m), f);
        }
    }
    moments
}

/// The members compare drives that must not be judged against the
/// others (`analysis::array_state::Health::excused`: being rebuilt, or
/// failed), by path, with why.
fn excused_members(
    topo: &Topology,
    health: Option<&crate::analysis::array_state::Health>,
) -> Vec<(String, String)> {
    let Some(h) = health else {
        return Vec::new();
    };
    topo.stripe_members()
        .iter()
        .filter_map(|d| h.excused(&d.name).map(|w| (d.path.clone(), w.to_string())))
        .collect()
}

/// Each member of the members-together phase: its rate (the median of the
/// runs without errors), its share of their total, its rate alone, its
/// figure for the verdict; and the verdict. No member without that phase.
/// The members `excused` (by path) are measured and shown, never judged.
pub fn member_results(
    runs: &[&Phase],
    excused: &[(String, String)],
) -> (Vec<MemberResult>, Option<Verdict>) {
    let Some(together) = runs.iter().find(|p| p.kind == PhaseKind::Together) else {
        return (Vec::new(), None);
    };
    let paths: Vec<String> = together
        .document
        .targets
        .iter()
        .map(|t| t.path.clone())
        .collect();
    let solo = runs
        .iter()
        .any(|p| matches!(p.kind, PhaseKind::Alone { .. }));
    let errors = |path: &str| -> u64 {
        runs.iter()
            .filter(|p| !p.kind.on_volume())
            .flat_map(|p| &p.document.targets)
            .filter(|t| t.path == path)
            .map(|t| t.figures.errors)
            .sum()
    };
    let rate =
        |s: &[Sample]| (!s.is_empty()).then(|| median(s.iter().map(|x| x.bytes_per_sec).collect()));
    let moments = if solo {
        alone_moments(runs)
    } else {
        HashMap::new()
    };
    let figures: Vec<(String, Option<Figure>)> = paths
        .iter()
        .map(|p| {
            let s = samples_of(runs, p, !solo, false, &moments);
            (p.clone(), Figure::of(p, &s))
        })
        .collect();
    // The members' rates together: from the runs without errors, else (every
    // run failed) from the failed ones, which the text marks.
    let together_rates: Vec<f64> = paths
        .iter()
        .map(|p| {
            rate(&samples(runs, p, true))
                .or_else(|| rate(&samples_of(runs, p, true, true, &HashMap::new())))
                .unwrap_or(0.0)
        })
        .collect();
    let sum: f64 = together_rates.iter().sum();
    let members = paths
        .iter()
        .zip(&figures)
        .zip(&together_rates)
        .map(|((path, (_, fig)), &r)| MemberResult {
            path: path.clone(),
            bytes_per_sec: r,
            share: if sum > 0.0 { r / sum } else { 0.0 },
            solo_bytes_per_sec: if solo {
                rate(&samples(runs, path, false))
            } else {
                None
            },
            slow: false,
            figure_bytes_per_sec: fig.as_ref().map(|f| f.bytes_per_sec),
            range_bytes_per_sec: fig.as_ref().map(|f| f.range),
            p99_ns: fig.as_ref().and_then(|f| f.p99_ns),
            ios: fig.as_ref().map_or(0, |f| f.ios),
            errors: errors(path),
        })
        .collect();
    let source = if solo { "alone" } else { "together" };
    let d = &together.document;
    let crowded =
        (!solo && d.workers.len() > d.host.cpus).then_some((d.workers.len(), d.host.cpus));
    let judged: Vec<(String, Option<Figure>)> = figures
        .into_iter()
        .filter(|(p, _)| !excused.iter().any(|(e, _)| e == p))
        .collect();
    (
        members,
        Some(slow_member::judge(&judged, source, crowded).into()),
    )
}
