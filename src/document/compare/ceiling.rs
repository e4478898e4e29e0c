//! The ceiling a volume's level allows, from the members measured together,
//! and the stripe efficiency against it, in two (`analysis::stripe_loss`):
//! the volume against the ceiling's factor × its slowest member (what the
//! stripe layer does with the members it has), and the slowest member
//! against the median (what their imbalance costs). The level's rule comes
//! from `device::topology::level` (its `Geometry::ceiling`); a volume
//! without a RAID geometry there (dm-stripe, an LVM striped LV, btrfs) is
//! taken as RAID0: N × member. Above 100 % the figure comes with why that
//! can happen, never bare.

use serde::{Deserialize, Serialize};

use super::health::PhaseStatus;
use super::kind::PhaseKind;
use super::phase::Phase;
use crate::analysis::array_state::degraded_read_ceiling;
use crate::analysis::stripe_loss::{split, ABOVE_NOISE};
use crate::analysis::summary::median;
use crate::device::topology::level::{Direction, Geometry};
use crate::device::topology::{Device, Topology};

/// One direction's ceiling, as the document keeps it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CeilingDoc {
    /// `read` or `write`.
    pub direction: String,
    /// The level's rule: "RAID5 reads: N × member (parity rotates over all members)".
    pub rule: String,
    /// The rule's factor: the ceiling is this many members' rate.
    pub members: f64,
    /// What the rule rests on: the level's geometry ("raid5, 4 members: 3
    /// data + 1 parity, ..."), or why RAID0's rule is assumed.
    pub basis: String,
}

/// The geometry the ceilings come from, and what it rests on: the first
/// layer going down (through single-member layers) that has one, else
/// RAID0 over the `n` members measured.
pub fn geometry(topo: &Topology, n: usize) -> (Geometry, String) {
    let mut d: &Device = &topo.root;
    loop {
        if let Some(g) = d.geometry() {
            let basis = g.describe();
            return (g, basis);
        }
        match d.members.as_slice() {
            [only] => d = only,
            _ => break,
        }
    }
    let root = &topo.root;
    let what = root
        .dm
        .as_ref()
        .and_then(|m| m.target.clone())
        .map(|t| format!("dm {t}"))
        .or(root
            .btrfs
            .as_ref()
            .map(|b| format!("btrfs {}", b.data_profile.as_deref().unwrap_or("?"))))
        .unwrap_or_else(|| root.kind.clone());
    let g = Geometry::md(
        "raid0",
        u32::try_from(n).unwrap_or(u32::MAX),
        root.chunk_size(),
        None,
    );
    (g, format!("{what}: no RAID geometry known, taken as RAID0"))
}

/// The read and the write ceiling of the volume. On a degraded md array
/// the read ceiling is the degraded one (`analysis::array_state`): a read
/// of a missing member's chunk reads every survivor's chunk of its stripe,
/// so the healthy N × member does not hold.
pub fn ceilings(topo: &Topology, n: usize) -> Vec<CeilingDoc> {
    let (g, basis) = geometry(topo, n);
    let health = topo.root.md_health().filter(|h| h.degraded());
    [(Direction::Read, "read"), (Direction::Write, "write")]
        .into_iter()
        .map(|(dir, name)| {
            let c = g.ceiling(dir);
            let degraded = health
                .as_ref()
                .filter(|_| dir == Direction::Read)
                .and_then(|h| {
                    degraded_read_ceiling(&g.level, g.members, g.data, g.parity, h.down)
                        .map(|(members, rule)| (members, rule, h.describe().unwrap_or_default()))
                });
            match degraded {
                Some((members, rule, state)) => CeilingDoc {
                    direction: name.into(),
                    rule,
                    members,
                    basis: format!("{basis}; {state}"),
                },
                None => CeilingDoc {
                    direction: name.into(),
                    rule: c.rule,
                    members: c.members,
                    basis: basis.clone(),
                },
            }
        })
        .collect()
}

/// The stripe efficiency, split in two (see `analysis::stripe_loss`): the
/// volume against what its slowest member allows, and the slowest member
/// against the median one; with the figures each rests on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StripeEfficiency {
    /// The volume phase it rests on: one O_DIRECT worker per member, or
    /// full-stripe writes under `--rw write`.
    pub phase: String,
    pub volume_bytes_per_sec: f64,
    /// The slowest member in the members-together phase, and its rate (the
    /// median of its ok runs).
    pub slowest: String,
    pub slowest_bytes_per_sec: f64,
    /// The median member's rate there.
    pub median_bytes_per_sec: f64,
    /// Whether each of the volume's requests waits for every member's
    /// piece (false for a mirror's reads): then the slowest sets the pace.
    pub waits_for_every_piece: bool,
    /// What the members allow: the ceiling's factor × the slowest member
    /// (× the members' mean when requests need not wait for every piece).
    pub allowed_bytes_per_sec: f64,
    /// volume ÷ allowed: what the stripe layer delivers of it.
    pub stripe_layer: f64,
    /// slowest ÷ median: what the members' imbalance leaves (1: no loss).
    pub imbalance: f64,
    /// The larger loss: `stripe_layer`, `imbalance` or `none`.
    pub larger_loss: String,
}

/// The stripe efficiency and what it is measured against: the volume with
/// one worker per member (O_DIRECT), or full stripes written, against the
/// ceiling's factor × its slowest member, and the slowest member against
/// the median, from the members together. Only phases whose status is ok
/// count; each member's rate is the median of its ok runs. With the note a
/// reader needs: why there is none, or why above 100 % can be.
/// `excused`: members left out of the slowest and the median (a member
/// md is rebuilding is busy with the rebuild's writes, not slow).
pub fn efficiency(
    runs: &[&Phase],
    ceilings: &[CeilingDoc],
    geometry: &Geometry,
    excused: &[String],
) -> (Option<StripeEfficiency>, Option<CeilingDoc>, Option<String>) {
    let ok = |p: &&&Phase| p.status == PhaseStatus::Ok;
    let together: Vec<&Phase> = runs
        .iter()
        .filter(|p| p.kind == PhaseKind::Together)
        .copied()
        .collect();
    let volume: Vec<&Phase> = runs
        .iter()
        .filter(|p| {
            matches!(
                p.kind,
                PhaseKind::VolumePerMember { .. } | PhaseKind::VolumeFullStripeWrites { .. }
            )
        })
        .copied()
        .collect();
    if together.is_empty() || volume.is_empty() {
        return (None, None, None);
    }
    let good_together: Vec<&Phase> = together.iter().filter(ok).copied().collect();
    let Some(vol) = volume.iter().find(ok) else {
        return (
            None,
            None,
            Some(format!(
                "no efficiency: the phase '{}' is {}",
                volume[0].kind,
                status_word(volume[0].status)
            )),
        );
    };
    if good_together.is_empty() {
        return (
            None,
            None,
            Some(format!(
                "no efficiency: every run of '{}' is failed or thin",
                PhaseKind::Together
            )),
        );
    }
    // Each member's rate: the median of its ok runs together.
    let paths: Vec<&str> = together[0]
        .document
        .targets
        .iter()
        .map(|t| t.path.as_str())
        .filter(|p| !excused.iter().any(|e| e == p))
        .collect();
    let rates: Vec<f64> = paths
        .iter()
        .map(|path| {
            median(
                good_together
                    .iter()
                    .filter_map(|p| p.document.targets.iter().find(|t| t.path == *path))
                    .map(|t| t.figures.bytes_per_sec)
                    .collect(),
            )
        })
        .collect();
    let writes = vol.document.config.rw.writes();
    let dir = if writes { "write" } else { "read" };
    let Some(c) = ceilings.iter().find(|c| c.direction == dir).cloned() else {
        return (None, None, None);
    };
    if c.members <= 0.0 {
        // A degraded array past what its parity holds: nothing to reach.
        return (
            None,
            Some(c.clone()),
            Some(format!("no efficiency: {}", c.rule)),
        );
    }
    // A mirror's read goes to one copy; everything else (stripes, parity,
    // every copy written) waits for each member's piece.
    let waits = writes || !geometry.mirrors();
    let Some(s) = split(vol.bytes_per_sec, c.members, &rates, waits) else {
        return (None, Some(c), None);
    };
    let mut note = (s.stripe_layer > ABOVE_NOISE).then(|| above_ceiling(geometry, writes));
    if writes {
        // compare never writes the members (they are in the array).
        let read = "the write ceiling rests on the members' read rate: compare never writes the members, and a member may write slower than it reads";
        note = Some(match note {
            Some(n) => format!("{n}; {read}"),
            None => read.into(),
        });
    }
    let e = StripeEfficiency {
        phase: vol.kind.to_string(),
        volume_bytes_per_sec: vol.bytes_per_sec,
        slowest: paths[s.slowest].to_string(),
        slowest_bytes_per_sec: s.slowest_rate,
        median_bytes_per_sec: s.median_rate,
        waits_for_every_piece: s.waits_for_every_piece,
        allowed_bytes_per_sec: s.allowed,
        stripe_layer: s.stripe_layer,
        imbalance: s.imbalance,
        larger_loss: s.larger.name().into(),
    };
    (Some(e), Some(c), note)
}

fn status_word(s: PhaseStatus) -> &'static str {
    match s {
        PhaseStatus::Ok => "ok",
        PhaseStatus::Thin => "thin (too few I/Os for a rate)",
        PhaseStatus::Failed => "failed (I/O errors or stopped workers)",
    }
}

/// Why a volume can beat what its members allow: they were measured with
/// one worker each, and the volume is not obliged to do what they did.
fn above_ceiling(g: &Geometry, writes: bool) -> String {
    let mut why = vec![
        "the volume's requests merge into fewer, larger member requests than the members' own"
            .to_string(),
        "a member's cache (or the device under a loop member) serves what the volume asks again"
            .to_string(),
    ];
    if g.mirrors() && !writes {
        why.push(format!(
            "{} balances reads over its {} copies, so each member streams less than a whole member's worth",
            g.level, g.copies
        ));
    }
    format!(
        "above 100%: the volume beat what its members measured together allow; this happens when {}",
        why.join("; when ")
    )
}
