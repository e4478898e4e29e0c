//! The shared-path rule (issue 42): members behind one host adapter that
//! together reach far less than the sum of what each reaches alone, and
//! less than the other adapters' members reach together, are capped by
//! their shared path, not by any one of them.
//!
//! Each group's figure is its share: its members' rate together ÷ the sum
//! of their rates alone. A group is named when its share is below
//! [`SUM_SHARE`] and below [`OTHERS_SHARE`] × the best share of the other
//! groups, and its rate together below the best other group's: members
//! that are all slow together (a CPU-bound host, a busy bus upstream of
//! every adapter) name no group; one slow member makes its group's sum
//! small, not its share, so it names the member (the slow-member rule),
//! not the group.
//!
//! A function of typed figures; `document::compare` writes what it returns.

/// A group is named only when its members together reach less than this
/// share of the sum of their rates alone. In the lab (12 members of 8 MiB/s
/// each, 3 virtio-scsi controllers, one capped at 12 MiB/s) the capped
/// group's share was 0.36 and the others' 0.96.
pub const SUM_SHARE: f64 = 0.6;
/// ... and less than this many times the best share of the other groups.
pub const OTHERS_SHARE: f64 = 0.75;

/// What was measured of one group.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupFigures {
    /// The adapter's name (a PCI function).
    pub adapter: String,
    /// Each member's rate alone (bytes/s), in the group's order.
    pub alone: Vec<f64>,
    /// The group's members read at once (bytes/s).
    pub together: f64,
}

impl GroupFigures {
    /// The sum of the members' rates alone.
    pub fn alone_sum(&self) -> f64 {
        self.alone.iter().sum()
    }

    /// Together ÷ the sum alone; `None` when nothing was measured alone.
    pub fn share(&self) -> Option<f64> {
        let sum = self.alone_sum();
        (sum > 0.0 && sum.is_finite() && self.together.is_finite()).then(|| self.together / sum)
    }
}

/// A group its shared path caps.
#[derive(Debug, Clone, PartialEq)]
pub struct Capped {
    /// Index into the groups judged.
    pub group: usize,
    pub share: f64,
    /// The best share among the other groups.
    pub others_share: f64,
    /// The best rate together among the other groups.
    pub others_together: f64,
}

impl Capped {
    /// How much it matters: a loss a change of the layout recovers (the
    /// whole stripe waits on the capped members), not a member at risk.
    pub fn severity(&self) -> crate::analysis::advise::Severity {
        crate::analysis::advise::Severity::Medium
    }
}

/// The groups (of two or more members, at least two groups) that their
/// shared path caps; none when fewer than two groups can be judged.
pub fn judge(groups: &[GroupFigures]) -> Vec<Capped> {
    let judged: Vec<(usize, f64)> = groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.alone.len() >= 2)
        .filter_map(|(i, g)| g.share().map(|s| (i, s)))
        .collect();
    if judged.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for &(i, share) in &judged {
        let others = judged.iter().filter(|(j, _)| *j != i);
        let others_share = others.clone().map(|(_, s)| *s).fold(0.0, f64::max);
        let others_together = others.map(|(j, _)| groups[*j].together).fold(0.0, f64::max);
        if share < SUM_SHARE
            && share < OTHERS_SHARE * others_share
            && groups[i].together < others_together
        {
            out.push(Capped {
                group: i,
                share,
                others_share,
                others_together,
            });
        }
    }
    out
}

/// A group is suspect (worth reading its members alone) when its median
/// member, read with every member at once, is below this share of the
/// median member of the other groups.
pub const SUSPECT: f64 = 0.75;

/// The groups (each its members' rates with every member read at once,
/// two members or more, at least two groups) whose median member is below
/// [`SUSPECT`] × the other groups' median member: their members may be
/// slow, or their path shared. Reading them alone tells which.
pub fn suspects(groups: &[Vec<f64>]) -> Vec<usize> {
    use crate::analysis::summary::median;
    if groups.len() < 2 {
        return Vec::new();
    }
    (0..groups.len())
        .filter(|&i| groups[i].len() >= 2)
        .filter(|&i| {
            let others: Vec<f64> = groups
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .flat_map(|(_, g)| g.iter().copied())
                .collect();
            !others.is_empty() && median(groups[i].clone()) < SUSPECT * median(others)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(adapter: &str, alone: &[f64], together: f64) -> GroupFigures {
        GroupFigures {
            adapter: adapter.into(),
            alone: alone.to_vec(),
            together,
        }
    }

    #[test]
    fn a_capped_group_is_named() {
        // The lab's numbers (MB/s): controller 1 capped at 12 MiB/s.
        let groups = [
            g("0000:00:03.0", &[8.8, 8.8, 8.8, 8.8], 34.0),
            g("0000:00:04.0", &[8.8, 8.7, 8.8, 8.8], 12.8),
            g("0000:00:05.0", &[8.8, 8.8, 8.8, 8.8], 33.5),
        ];
        let c = judge(&groups);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].group, 1);
        assert!((c[0].share - 12.8 / 35.1).abs() < 1e-9);
        assert_eq!(c[0].others_together, 34.0);
    }

    #[test]
    fn equal_groups_name_none_even_when_all_are_slow_together() {
        let equal = [
            g("a", &[100.0, 100.0], 195.0),
            g("b", &[100.0, 100.0], 190.0),
        ];
        assert!(judge(&equal).is_empty());
        // A CPU-bound host: every group at a third of its sum.
        let crowded = [
            g("a", &[500.0, 500.0, 500.0], 520.0),
            g("b", &[500.0, 500.0, 500.0], 480.0),
            g("c", &[500.0, 500.0, 500.0], 500.0),
        ];
        assert!(judge(&crowded).is_empty());
    }

    #[test]
    fn one_slow_member_names_no_group() {
        // Member 4 of group b is slow alone; together its group reaches the
        // sum of what its members reach alone: the member is slow, not the path.
        let groups = [
            g("a", &[100.0, 100.0, 100.0, 100.0], 390.0),
            g("b", &[100.0, 100.0, 100.0, 10.0], 300.0),
        ];
        assert!(judge(&groups).is_empty());
    }

    #[test]
    fn a_group_slow_together_is_suspect_and_equal_groups_are_not() {
        let lab = vec![
            vec![8.1, 8.0, 8.1, 8.0],
            vec![3.0, 3.1, 3.0, 3.1],
            vec![8.0, 8.1, 8.0, 8.1],
        ];
        assert_eq!(suspects(&lab), [1]);
        assert!(suspects(&[vec![8.0, 8.1], vec![7.9, 8.0]]).is_empty());
        // One slow member does not make its group's median slow.
        assert!(suspects(&[vec![8.0, 8.0, 8.0, 1.0], vec![8.0, 8.0, 8.0, 8.0]]).is_empty());
        assert!(suspects(&[vec![3.0, 3.0]]).is_empty());
    }

    #[test]
    fn one_group_or_single_members_are_not_judged() {
        assert!(judge(&[g("a", &[100.0, 100.0], 20.0)]).is_empty());
        assert!(judge(&[g("a", &[100.0], 20.0), g("b", &[100.0], 100.0)]).is_empty());
        assert!(judge(&[g("a", &[0.0, 0.0], 20.0), g("b", &[1.0, 1.0], 2.0)]).is_empty());
    }
}
