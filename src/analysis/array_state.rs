//! An md array's health, judged from what its `md/` directory says: how
//! many members are down (a slot no device holds, a member failed, one
//! still being rebuilt), whether a resync or recovery runs and how far,
//! which members must not be judged against the others (a member being
//! rebuilt is written by md as fast as its limits allow; it is not slow,
//! it is busy), and what a degraded array's reads can reach.
//!
//! Pure functions of typed figures: `device::topology` reads them, and
//! `topology`, `compare` and `advise` say what this decides.

/// What md shows of one array, as plain figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArrayFacts<'a> {
    /// `md/raid_disks`.
    pub raid_disks: u32,
    /// `md/degraded`: md's own count of members down, when it shows one.
    pub degraded: Option<u32>,
    /// The slots no device holds.
    pub missing_slots: &'a [u32],
    /// `md/sync_action`.
    pub sync_action: Option<&'a str>,
    /// `md/sync_completed`: (sectors done, sectors in all).
    pub sync_completed: Option<(u64, u64)>,
    /// `md/sync_speed`, `md/sync_speed_min`, `md/sync_speed_max`, KB/s.
    pub sync_speed: Option<u64>,
    pub speed_min: Option<u64>,
    pub speed_max: Option<u64>,
    /// Each device in a slot: its name, its slot, and its `state` words.
    pub members: Vec<(&'a str, Option<u32>, &'a [String])>,
}

/// A resync, recovery, check or reshape under way.
#[derive(Debug, Clone, PartialEq)]
pub struct Sync {
    /// `resync`, `recover`, `check`, `repair`, `reshape`.
    pub action: String,
    /// Done, from 0 to 1, when md says how far.
    pub done: Option<f64>,
    /// KB/s now, and the limits.
    pub speed: Option<u64>,
    pub speed_min: Option<u64>,
    pub speed_max: Option<u64>,
}

/// An array's health.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Health {
    /// Members of the array (`raid_disks`).
    pub of: u32,
    /// Members down: md's `degraded`, else what the slots show.
    pub down: u32,
    /// Slots no device holds.
    pub missing_slots: Vec<u32>,
    /// Devices in a slot that are not in sync (being rebuilt), by name.
    pub rebuilding: Vec<String>,
    /// Devices md marked faulty, by name.
    pub faulty: Vec<String>,
    /// A resync, recovery, check or reshape under way.
    pub sync: Option<Sync>,
}

/// Whether a device's `state` words say it is in sync.
fn in_sync(state: &[String]) -> bool {
    state.iter().any(|w| w == "in_sync") && !state.iter().any(|w| w == "faulty")
}

/// The array's health from its facts.
pub fn judge(f: &ArrayFacts) -> Health {
    let faulty: Vec<String> = f
        .members
        .iter()
        .filter(|(_, _, s)| s.iter().any(|w| w == "faulty"))
        .map(|(n, _, _)| n.to_string())
        .collect();
    // In a slot, neither in sync nor faulty: md is rebuilding it (a spare
    // with no slot is only waiting, and holds nothing of the array).
    let rebuilding: Vec<String> = f
        .members
        .iter()
        .filter(|(_, slot, s)| slot.is_some() && !in_sync(s) && !s.iter().any(|w| w == "faulty"))
        .map(|(n, _, _)| n.to_string())
        .collect();
    let seen =
        u32::try_from(f.missing_slots.len() + rebuilding.len() + faulty.len()).unwrap_or(u32::MAX);
    let down = f.degraded.unwrap_or(seen).max(seen).min(f.raid_disks);
    let sync = f
        .sync_action
        .filter(|a| !matches!(*a, "idle" | "frozen" | ""))
        .map(|a| Sync {
            action: a.to_string(),
            done: f
                .sync_completed
                .filter(|&(_, total)| total > 0)
                .map(|(done, total)| (done as f64 / total as f64).clamp(0.0, 1.0)),
            speed: f.sync_speed,
            speed_min: f.speed_min,
            speed_max: f.speed_max,
        });
    Health {
        of: f.raid_disks,
        down,
        missing_slots: f.missing_slots.to_vec(),
        rebuilding,
        faulty,
        sync,
    }
}

impl Health {
    /// Whether members are down.
    pub fn degraded(&self) -> bool {
        self.down > 0
    }

    /// Whether the array is in its normal state: nothing down, no resync.
    pub fn healthy(&self) -> bool {
        !self.degraded() && self.sync.is_none()
    }

    /// Why a member must not be judged against the others (`slow`), if
    /// so: it is being rebuilt, or md failed it.
    pub fn excused(&self, name: &str) -> Option<&'static str> {
        if self.rebuilding.iter().any(|n| n == name) {
            Some("being rebuilt (md writes it as fast as its resync limits allow)")
        } else if self.faulty.iter().any(|n| n == name) {
            Some("failed (md marked it faulty)")
        } else {
            None
        }
    }

    /// The state in words, for one line: "degraded: 1 of 6 members down
    /// (slot 2 empty); recover 12.5% done at 180 KB/s (limits 1 to 200
    /// KB/s)"; None when the array is healthy and idle.
    pub fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.degraded() {
            let mut why = Vec::new();
            if !self.missing_slots.is_empty() {
                let slots: Vec<String> = self.missing_slots.iter().map(u32::to_string).collect();
                why.push(format!(
                    "slot{} {} empty",
                    if slots.len() == 1 { "" } else { "s" },
                    slots.join(", ")
                ));
            }
            if !self.rebuilding.is_empty() {
                why.push(format!("{} being rebuilt", self.rebuilding.join(", ")));
            }
            if !self.faulty.is_empty() {
                why.push(format!("{} faulty", self.faulty.join(", ")));
            }
            parts.push(format!(
                "degraded: {} of {} members down{}",
                self.down,
                self.of,
                if why.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", why.join("; "))
                }
            ));
        }
        if let Some(s) = &self.sync {
            let mut line = s.action.clone();
            if let Some(d) = s.done {
                line += &format!(" {:.1}% done", d * 100.0);
            } else {
                line += " in progress";
            }
            if let Some(v) = s.speed {
                line += &format!(" at {v} KB/s");
            }
            match (s.speed_min, s.speed_max) {
                (Some(a), Some(b)) => line += &format!(" (limits {a} to {b} KB/s)"),
                (None, Some(b)) => line += &format!(" (at most {b} KB/s)"),
                _ => {}
            }
            parts.push(line);
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// What a degraded array's reads can reach, as a multiple of one
/// member's rate, and the rule: None when nothing is down or the level
/// keeps no redundancy. `data`, `parity` and `copies` are the level's
/// (`Geometry`).
pub fn degraded_read_ceiling(
    level: &str,
    members: u32,
    data: u32,
    parity: u32,
    down: u32,
) -> Option<(f64, String)> {
    if down == 0 {
        return None;
    }
    let name = level.to_uppercase();
    match level {
        "raid4" | "raid5" | "raid6" if down > parity => Some((
            0.0,
            format!(
                "{name} with {down} of {members} members down holds more losses than its {parity} parity: it cannot serve reads"
            ),
        )),
        "raid4" | "raid5" | "raid6" => Some((
            f64::from(data.max(1)),
            format!(
                "degraded {name} reads: (N-{parity}) × member ({down} of {members} down: a missing member's chunk is rebuilt from every survivor's chunk of its stripe, parity too, so no survivor skips one)"
            ),
        )),
        "raid1" | "raid10" => Some((
            f64::from(members.saturating_sub(down).max(1)),
            format!(
                "degraded {name} reads: (N-{down}) × member ({down} of {members} down: a missing member serves no reads)"
            ),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(',').map(str::to_string).collect()
    }

    #[test]
    fn a_healthy_idle_array_says_nothing() {
        let s = words("in_sync");
        let h = judge(&ArrayFacts {
            raid_disks: 2,
            degraded: Some(0),
            sync_action: Some("idle"),
            members: vec![("loop0", Some(0), &s), ("loop1", Some(1), &s)],
            ..Default::default()
        });
        assert!(h.healthy());
        assert_eq!(h.describe(), None);
        assert_eq!(h.excused("loop0"), None);
    }

    #[test]
    fn a_removed_member_is_an_empty_slot_and_degraded() {
        let s = words("in_sync");
        let members = (0..6)
            .filter(|&k| k != 2)
            .map(|k| {
                (
                    ["a", "b", "c", "d", "e", "f"][k],
                    Some(k as u32),
                    s.as_slice(),
                )
            })
            .collect();
        let h = judge(&ArrayFacts {
            raid_disks: 6,
            degraded: Some(1),
            missing_slots: &[2],
            sync_action: Some("idle"),
            sync_completed: None,
            members,
            ..Default::default()
        });
        assert!(h.degraded() && !h.healthy());
        assert_eq!(
            h.describe().as_deref(),
            Some("degraded: 1 of 6 members down (slot 2 empty)")
        );
    }

    #[test]
    fn a_member_being_rebuilt_is_excused_and_the_recovery_said_with_its_limits() {
        let ok = words("in_sync");
        let spare = words("spare");
        let h = judge(&ArrayFacts {
            raid_disks: 3,
            degraded: Some(1),
            sync_action: Some("recover"),
            sync_completed: Some((25, 200)),
            sync_speed: Some(180),
            speed_min: Some(1),
            speed_max: Some(200),
            members: vec![
                ("loop0", Some(0), &ok),
                ("loop1", Some(1), &spare),
                ("loop2", Some(2), &ok),
            ],
            ..Default::default()
        });
        assert_eq!(h.rebuilding, vec!["loop1"]);
        assert!(h.excused("loop1").unwrap().contains("rebuilt"));
        assert_eq!(h.excused("loop0"), None);
        assert_eq!(
            h.describe().as_deref(),
            Some("degraded: 1 of 3 members down (loop1 being rebuilt); recover 12.5% done at 180 KB/s (limits 1 to 200 KB/s)")
        );
    }

    #[test]
    fn a_spare_outside_the_slots_is_not_rebuilding_and_a_faulty_one_is_excused() {
        let spare = words("spare");
        let faulty = words("faulty");
        let h = judge(&ArrayFacts {
            raid_disks: 2,
            degraded: Some(1),
            members: vec![("loop2", None, &spare), ("loop1", Some(1), &faulty)],
            ..Default::default()
        });
        assert!(h.rebuilding.is_empty());
        assert_eq!(h.faulty, vec!["loop1"]);
        assert!(h.excused("loop1").is_some());
        assert_eq!(h.excused("loop2"), None);
    }

    #[test]
    fn an_initial_resync_is_said_though_nothing_is_down() {
        let h = judge(&ArrayFacts {
            raid_disks: 4,
            degraded: Some(0),
            sync_action: Some("resync"),
            sync_completed: Some((1, 4)),
            ..Default::default()
        });
        assert!(!h.degraded() && !h.healthy());
        assert_eq!(h.describe().as_deref(), Some("resync 25.0% done"));
    }

    #[test]
    fn degraded_parity_reads_reach_the_data_members_and_mirrors_the_survivors() {
        assert_eq!(degraded_read_ceiling("raid5", 5, 4, 1, 0), None);
        let (m, rule) = degraded_read_ceiling("raid5", 5, 4, 1, 1).unwrap();
        assert_eq!(m, 4.0);
        assert!(rule.starts_with("degraded RAID5 reads: (N-1) × member (1 of 5 down"));
        let (m, _) = degraded_read_ceiling("raid6", 6, 4, 2, 1).unwrap();
        assert_eq!(m, 4.0);
        let (m, _) = degraded_read_ceiling("raid6", 6, 4, 2, 2).unwrap();
        assert_eq!(m, 4.0);
        let (m, rule) = degraded_read_ceiling("raid5", 5, 4, 1, 2).unwrap();
        assert_eq!(m, 0.0);
        assert!(rule.contains("cannot serve reads"));
        let (m, _) = degraded_read_ceiling("raid1", 3, 1, 0, 1).unwrap();
        assert_eq!(m, 2.0);
        assert_eq!(degraded_read_ceiling("raid0", 4, 4, 0, 1), None);
    }
}
