//! The stripe efficiency in two: what the stripe layer delivers against
//! what its slowest member allows, and what the members' imbalance costs
//! (the slowest against the median member), and which of the two losses is
//! the larger. One figure (the volume against the members' total) blamed
//! the stripe layer for a slow member: a btrfs RAID0 of 3 with one member
//! at 41.9 MB/s read 126.4 MB/s, "3.9 %", though 3 × 41.9 is 125.7 and
//! the stripe layer did all its slowest member let it do.

use crate::analysis::summary::median;

/// Above this share of what the members allow, a volume is said to beat
/// them: two rates measured in separate windows differ by a few percent
/// from run to run (on the test VM, one loop member's three 1 s runs
/// together ranged 5987-6180 MB/s, 3 %), so 100.6 % is "all it allows",
/// not a figure that needs explaining.
pub const ABOVE_NOISE: f64 = 1.05;

/// Which loss is the larger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// The stripe layer delivers less than its members allow.
    StripeLayer,
    /// A member slower than the others holds the volume back.
    Imbalance,
    /// Neither: the volume reaches what the members allow, and they are
    /// equal.
    None,
}

impl Loss {
    /// The name the JSON gives it.
    pub fn name(self) -> &'static str {
        match self {
            Loss::StripeLayer => "stripe_layer",
            Loss::Imbalance => "imbalance",
            Loss::None => "none",
        }
    }
}

/// The efficiency, split.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// The slowest member's index in the rates given.
    pub slowest: usize,
    pub slowest_rate: f64,
    pub median_rate: f64,
    /// Whether each of the volume's requests waits for every member's
    /// piece (stripes, parity, a mirror's writes): then the slowest member
    /// sets the pace of all. A mirror's reads go to one copy, and need not.
    pub waits_for_every_piece: bool,
    /// What the members allow the volume: the level's factor × the
    /// slowest member when requests wait for every piece, else × the
    /// members' mean (their total, for a factor of N).
    pub allowed: f64,
    /// The volume over `allowed`: what the stripe layer delivers of it.
    pub stripe_layer: f64,
    /// The slowest member over the median: what the imbalance leaves (1:
    /// none lost). Costs nothing when requests need not wait for every
    /// piece.
    pub imbalance: f64,
    /// The larger of the two losses.
    pub larger: Loss,
}

/// The split of `volume` (B/s) against members measured together at
/// `members` (B/s each), for a level whose ceiling is `factor` × one
/// member. `None` without a member or with a member that moved nothing
/// (nothing to divide by).
pub fn split(
    volume: f64,
    factor: f64,
    members: &[f64],
    waits_for_every_piece: bool,
) -> Option<Split> {
    let (slowest, &slowest_rate) = members
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))?;
    let median_rate = median(members.to_vec());
    if slowest_rate <= 0.0 || median_rate <= 0.0 {
        return None;
    }
    let mean = members.iter().sum::<f64>() / members.len() as f64;
    let allowed = factor
        * if waits_for_every_piece {
            slowest_rate
        } else {
            mean
        };
    let stripe_layer = volume / allowed;
    let imbalance = slowest_rate / median_rate;
    let stripe_loss = 1.0 - stripe_layer.min(1.0);
    let imbalance_loss = if waits_for_every_piece {
        1.0 - imbalance
    } else {
        0.0
    };
    let larger = if stripe_loss <= 0.0 && imbalance_loss <= 0.0 {
        Loss::None
    } else if imbalance_loss > stripe_loss {
        Loss::Imbalance
    } else {
        Loss::StripeLayer
    };
    Some(Split {
        slowest,
        slowest_rate,
        median_rate,
        waits_for_every_piece,
        allowed,
        stripe_layer,
        imbalance,
        larger,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 39: btrfs RAID0 of 3, one member throttled to 40 MB/s.
    #[test]
    fn a_slow_member_is_the_imbalances_loss_not_the_stripe_layers() {
        let mb = 1e6;
        let s = split(
            126.4 * mb,
            3.0,
            &[1620.0 * mb, 41.9 * mb, 1579.1 * mb],
            true,
        )
        .unwrap();
        assert_eq!(s.slowest, 1);
        assert!((s.allowed - 125.7 * mb).abs() < 1.0, "{s:?}");
        assert!((s.stripe_layer - 126.4 / 125.7).abs() < 1e-9, "{s:?}");
        assert!((s.imbalance - 41.9 / 1579.1).abs() < 1e-9, "{s:?}");
        assert_eq!(s.larger, Loss::Imbalance);
    }

    #[test]
    fn equal_members_and_a_slow_volume_are_the_stripe_layers_loss() {
        let s = split(150.0, 4.0, &[100.0, 98.0, 102.0, 100.0], true).unwrap();
        assert!((s.stripe_layer - 150.0 / 392.0).abs() < 1e-12);
        assert!((s.imbalance - 0.98).abs() < 1e-12);
        assert_eq!(s.larger, Loss::StripeLayer);
        // At what the members allow, with equal members: no loss.
        let s = split(400.0, 4.0, &[100.0; 4], true).unwrap();
        assert_eq!(s.larger, Loss::None);
    }

    /// A mirror's reads go to one copy: the slow copy need not hold the
    /// volume back, so what the members allow is their total, and the
    /// imbalance costs nothing.
    #[test]
    fn a_mirrors_reads_are_measured_against_the_members_total() {
        let s = split(150.0, 2.0, &[100.0, 20.0], false).unwrap();
        assert!((s.allowed - 120.0).abs() < 1e-12);
        assert_eq!(s.larger, Loss::None);
        let s = split(60.0, 2.0, &[100.0, 20.0], false).unwrap();
        assert_eq!(s.larger, Loss::StripeLayer);
    }

    #[test]
    fn no_split_without_a_member_that_moved_something() {
        assert_eq!(split(1.0, 3.0, &[], true), None);
        assert_eq!(split(1.0, 3.0, &[5.0, 0.0, 5.0], true), None);
    }
}
