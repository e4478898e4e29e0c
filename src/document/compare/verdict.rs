//! The slow-member verdict as the compare and findings documents carry it
//! (`verdict`): the contract types, written from what the rule in
//! `analysis::slow_member` returned. The rule, its constants and its
//! figures live there.

use serde::{Deserialize, Serialize};

use crate::analysis::slow_member;

/// Where the members stand against the median: the figures' median, their
/// MAD, the spread the rule used (MAD, or the floor when larger) and the
/// threshold a member must pass to be flagged.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Fence {
    pub median: f64,
    pub mad: f64,
    pub spread: f64,
    pub threshold: f64,
}

/// A member the rule flagged, with the numbers that flagged it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Flagged {
    pub member: String,
    /// `rate` (below the rate threshold) or `p99` (above the p99 threshold).
    pub by: String,
    /// Its figure (B/s for a rate, ns for a p99).
    pub figure: f64,
    pub median: f64,
    pub threshold: f64,
}

/// A member with too few completed I/Os to be judged.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Thin {
    pub member: String,
    pub ios: u64,
}

/// The verdict (`verdict` in the document).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Verdict {
    /// `alone` (the --solo phases) or `together` (the members-together
    /// phase): where each member's figure comes from.
    pub source: String,
    /// The rule, in words.
    pub rule: String,
    pub k: f64,
    pub min_ios: u64,
    /// The most runs a member's figure is the median of.
    pub runs: usize,
    pub rate: Option<Fence>,
    pub p99: Option<Fence>,
    /// Every member the rule flagged, slowest rate first; empty when all
    /// are alike (or none was judged).
    pub flagged: Vec<Flagged>,
    /// Members whose median is beyond the fence while one of their runs is
    /// not (slow in some runs only: a stall, or an intermittent member):
    /// named, not flagged. Its `figure` is the median.
    #[serde(default)]
    pub some_runs: Vec<Flagged>,
    /// Members with fewer than `min_ios` completed I/Os: then no member is
    /// judged.
    pub not_enough_io: Vec<Thin>,
    /// Members with no run left to judge (all their runs failed).
    pub unmeasured: Vec<String>,
    /// Why no member was judged, when none was.
    pub none: Option<String>,
    /// What weakens the figures the rule was applied to (members measured
    /// together with more workers than CPUs), and what the rule did about it.
    #[serde(default)]
    pub caveat: Option<String>,
}

impl Verdict {
    /// Whether the rule was applied (enough I/O, enough members).
    pub fn judged(&self) -> bool {
        self.none.is_none()
    }
}

impl From<slow_member::Fence> for Fence {
    fn from(f: slow_member::Fence) -> Fence {
        Fence {
            median: f.median,
            mad: f.mad,
            spread: f.spread,
            threshold: f.threshold,
        }
    }
}

impl From<slow_member::Flagged> for Flagged {
    fn from(f: slow_member::Flagged) -> Flagged {
        Flagged {
            member: f.member,
            by: f.by,
            figure: f.figure,
            median: f.median,
            threshold: f.threshold,
        }
    }
}

impl From<slow_member::Thin> for Thin {
    fn from(t: slow_member::Thin) -> Thin {
        Thin {
            member: t.member,
            ios: t.ios,
        }
    }
}

impl From<slow_member::Verdict> for Verdict {
    fn from(v: slow_member::Verdict) -> Verdict {
        Verdict {
            source: v.source,
            rule: v.rule,
            k: v.k,
            min_ios: v.min_ios,
            runs: v.runs,
            rate: v.rate.map(Fence::from),
            p99: v.p99.map(Fence::from),
            flagged: v.flagged.into_iter().map(Flagged::from).collect(),
            some_runs: v.some_runs.into_iter().map(Flagged::from).collect(),
            not_enough_io: v.not_enough_io.into_iter().map(Thin::from).collect(),
            unmeasured: v.unmeasured,
            none: v.none,
            caveat: v.caveat,
        }
    }
}
