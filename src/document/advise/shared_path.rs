//! advise's shared-path finding (issue 42): the members behind one host
//! adapter that each read as fast alone as the others' members, but far
//! slower together: their controller (or expander) caps them, and no
//! member is slow.

use super::Finding;
use crate::analysis::shared_path::{self, GroupFigures};
use crate::analysis::summary::median;
use crate::base::error::show_text;
use crate::base::units::mb_per_sec;

/// One suspect group as measured: its adapter, and each member's (kernel
/// name, path, rate alone, rate with every member at once), bytes/s.
pub struct Suspect {
    pub adapter: String,
    pub members: Vec<(String, String, f64, f64)>,
}

/// The finding when `suspect`'s path caps it: judged against the other
/// groups' members with every member at once (`others`, each group's
/// rates; what a member reaches together is no more than alone, so they
/// stand for their rates alone). None when its members are slow alone too.
pub fn finding(suspect: &Suspect, others: &[Vec<f64>]) -> Option<Finding> {
    let mut groups = vec![GroupFigures {
        adapter: suspect.adapter.clone(),
        alone: suspect.members.iter().map(|m| m.2).collect(),
        together: suspect.members.iter().map(|m| m.3).sum(),
    }];
    groups.extend(others.iter().map(|g| GroupFigures {
        adapter: String::new(),
        alone: g.clone(),
        together: g.iter().sum(),
    }));
    let capped = shared_path::judge(&groups)
        .into_iter()
        .find(|c| c.group == 0)?;
    let g = &groups[0];
    let n = suspect.members.len();
    let alone = median(g.alone.clone());
    let each_other = median(others.iter().flatten().copied().collect());
    let adapter = show_text(&suspect.adapter);
    Some(Finding {
        id: format!("shared-path:{}", suspect.adapter),
        check: "slow-members".into(),
        severity: capped.severity().into(),
        devices: suspect.members.iter().map(|m| m.0.clone()).collect(),
        title: format!(
            "controller {adapter}: {n} members together {:.1} MB/s against {n} x {:.1} alone: the shared path caps them",
            mb_per_sec(g.together),
            mb_per_sec(alone)
        ),
        evidence: vec![
            format!(
                "with every member read at once, the {n} members behind {adapter} reached {:.1} MB/s together ({:.0}% of their {:.1} MB/s alone); a member of the other controllers {:.1} MB/s",
                mb_per_sec(g.together),
                capped.share * 100.0,
                mb_per_sec(g.alone_sum()),
                mb_per_sec(each_other)
            ),
            format!(
                "each alone: {}",
                suspect
                    .members
                    .iter()
                    .map(|m| format!("{} {:.1} MB/s", show_text(&m.1), mb_per_sec(m.2)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "no member is slow: each reads alone as fast as the others' members".into(),
        ],
        meaning: format!(
            "the array's members behind {adapter} share its path (the controller, its PCIe link or a SAS expander), which tops out near {:.1} MB/s: the whole stripe waits on them, at about {:.1} MB/s per member",
            mb_per_sec(g.together),
            mb_per_sec(g.together / n as f64)
        ),
        fix: vec![format!(
            "spread the members over more controllers (fewer behind {adapter}), or check the controller's link width and speed (lspci -vv -s {adapter}: LnkSta against LnkCap)"
        )],
        persist: Vec::new(),
        gain: None,
        settings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suspect(alone: f64, together: f64) -> Suspect {
        Suspect {
            adapter: "0000:00:04.0".into(),
            members: (0..4)
                .map(|i| {
                    (
                        format!("sd{i}"),
                        format!("/dev/sd{i}"),
                        alone * 1e6,
                        together * 1e6,
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn a_capped_controller_is_a_finding_and_slow_members_are_not() {
        let others = vec![vec![8.1e6; 4], vec![8.0e6; 4]];
        let f = finding(&suspect(8.4, 3.0), &others).expect("capped");
        assert_eq!(f.id, "shared-path:0000:00:04.0");
        assert_eq!(f.devices, ["sd0", "sd1", "sd2", "sd3"]);
        assert!(
            f.title
                .contains("4 members together 12.0 MB/s against 4 x 8.4 alone"),
            "{}",
            f.title
        );
        // Slow alone too: the members are slow, not the path.
        assert!(finding(&suspect(3.1, 3.0), &others).is_none());
    }
}
