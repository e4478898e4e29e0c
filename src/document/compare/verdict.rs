//! The slow-member verdict: one robust rule applied to every member, with
//! its numbers. Each member's figure is the median of its runs (the
//! `--solo` phases when they ran, else its share of the members-together
//! phase; failed runs left out): a member is flagged when its rate is below
//! median − k × max(MAD, floor × median) of the members' figures, or its p99
//! above median + k × max(MAD, floor × median) of theirs. The floor keeps
//! equal members with a tiny spread from flagging; p99's is wider, since a
//! latency tail is noisier than a rate. None is judged on fewer than
//! [`MIN_IOS`] completed I/Os: the verdict then says so, naming the member.

use serde::{Deserialize, Serialize};

use crate::analysis::summary::median;

/// How many MADs (or floors) from the median a member must be.
pub const K: f64 = 3.0;
/// The least spread the rate rule assumes, as a share of the median rate.
pub const RATE_FLOOR: f64 = 0.05;
/// The rate floor when the figures come from members measured together with
/// more workers than CPUs: their rates then measure CPU turns as much as the
/// members (in the lab, 16 equal members on 2 busy vCPUs ranged 11-37 MB/s
/// around a median of 26), so only a member 75 % below the median is flagged.
pub const CROWDED_RATE_FLOOR: f64 = 0.25;
/// The least spread the p99 rule assumes, as a share of the median p99: a
/// p99 is flagged only at 2.5 × the median or more. In the lab (16 members
/// measured alone on 2 busy TCG vCPUs) the 15 undelayed members' p99s ranged 18-43 ms
/// around a median of 24 (CPU waits, not the devices): 25 % flagged one of
/// them, while a member behind a 10 ms dm-delay measured alone on a quieter
/// guest stood at 5.7 × the median.
pub const P99_FLOOR: f64 = 0.5;
/// A member's completed I/Os, over the runs its figure rests on, below
/// which no verdict is given.
pub const MIN_IOS: u64 = 50;

/// What one run measured of one member.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub bytes_per_sec: f64,
    pub p99_ns: Option<u64>,
    pub ios: u64,
}

/// A member's runs, summarised.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub member: String,
    /// Median rate over its runs.
    pub bytes_per_sec: f64,
    /// The lowest and highest rate of its runs.
    pub range: (f64, f64),
    /// Median p99 over its runs that have one.
    pub p99_ns: Option<f64>,
    /// Completed I/Os over its runs.
    pub ios: u64,
    pub runs: usize,
}

impl Figure {
    /// `None` without a run.
    pub fn of(member: &str, samples: &[Sample]) -> Option<Figure> {
        if samples.is_empty() {
            return None;
        }
        let rates: Vec<f64> = samples.iter().map(|s| s.bytes_per_sec).collect();
        let p99: Vec<f64> = samples
            .iter()
            .filter_map(|s| s.p99_ns)
            .map(|p| p as f64)
            .collect();
        Some(Figure {
            member: member.into(),
            bytes_per_sec: median(rates.clone()),
            range: (
                rates.iter().copied().fold(f64::INFINITY, f64::min),
                rates.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            ),
            p99_ns: (!p99.is_empty()).then(|| median(p99)),
            ios: samples.iter().map(|s| s.ios).sum(),
            runs: samples.len(),
        })
    }
}

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

fn fence(values: &[f64], floor: f64, below: bool) -> Fence {
    let m = median(values.to_vec());
    let mad = median(values.iter().map(|v| (v - m).abs()).collect());
    let spread = mad.max(floor * m.abs());
    let threshold = if below {
        m - K * spread
    } else {
        m + K * spread
    };
    Fence {
        median: m,
        mad,
        spread,
        threshold,
    }
}

/// The rule, applied to every member's figure. `members`: every member in
/// order, with its figure when a run of it is left; `source`: where the
/// figures come from.
///
/// `crowded`: the figures come from members measured together by more
/// workers than CPUs (workers, CPUs): the rate floor widens to
/// [`CROWDED_RATE_FLOOR`], and the verdict says why.
pub fn judge(
    members: &[(String, Option<Figure>)],
    source: &str,
    crowded: Option<(usize, usize)>,
) -> Verdict {
    let rate_floor = if crowded.is_some() {
        CROWDED_RATE_FLOOR
    } else {
        RATE_FLOOR
    };
    let rule = format!(
        "flagged: a rate below median - {K} x max(MAD, {:.0}% of the median), or a p99 above median + {K} x max(MAD, {:.0}% of the median), over the members' medians; each member needs {MIN_IOS} completed I/Os",
        rate_floor * 100.0,
        P99_FLOOR * 100.0
    );
    let caveat = crowded.map(|(w, c)| {
        format!(
            "the members together ran {w} workers on {c} CPU(s): their rates measure CPU turns as much as the members, so the rate floor is {:.0}% (not {:.0}%); --solo judges each member alone",
            CROWDED_RATE_FLOOR * 100.0,
            RATE_FLOOR * 100.0
        )
    });
    let figures: Vec<&Figure> = members.iter().filter_map(|(_, f)| f.as_ref()).collect();
    let mut v = Verdict {
        source: source.into(),
        rule,
        k: K,
        min_ios: MIN_IOS,
        runs: figures.iter().map(|f| f.runs).max().unwrap_or(0),
        rate: None,
        p99: None,
        flagged: Vec::new(),
        not_enough_io: figures
            .iter()
            .filter(|f| f.ios < MIN_IOS)
            .map(|f| Thin {
                member: f.member.clone(),
                ios: f.ios,
            })
            .collect(),
        unmeasured: members
            .iter()
            .filter(|(_, f)| f.is_none())
            .map(|(m, _)| m.clone())
            .collect(),
        none: None,
        caveat,
    };
    if figures.is_empty() {
        v.none = Some("no member phase ran without errors: no member to judge".into());
        return v;
    }
    if !v.not_enough_io.is_empty() {
        let named: Vec<String> = v
            .not_enough_io
            .iter()
            .map(|t| format!("member {}: {} I/Os", t.member, t.ios))
            .collect();
        v.none = Some(format!(
            "not enough I/O to judge ({}; the verdict needs {MIN_IOS} per member: a longer --duration or a smaller --bs gives more)",
            named.join(", ")
        ));
        return v;
    }
    if figures.len() < 3 {
        v.none = Some(format!(
            "{} member(s) measured: the rule needs 3 to tell which one is off",
            figures.len()
        ));
        return v;
    }
    let rates: Vec<f64> = figures.iter().map(|f| f.bytes_per_sec).collect();
    let rate = fence(&rates, rate_floor, true);
    for f in &figures {
        if f.bytes_per_sec < rate.threshold {
            v.flagged.push(Flagged {
                member: f.member.clone(),
                by: "rate".into(),
                figure: f.bytes_per_sec,
                median: rate.median,
                threshold: rate.threshold,
            });
        }
    }
    let p99s: Vec<f64> = figures.iter().filter_map(|f| f.p99_ns).collect();
    if p99s.len() >= 3 {
        let p99 = fence(&p99s, P99_FLOOR, false);
        for f in &figures {
            match f.p99_ns {
                Some(p) if p > p99.threshold && !v.flagged.iter().any(|x| x.member == f.member) => {
                    v.flagged.push(Flagged {
                        member: f.member.clone(),
                        by: "p99".into(),
                        figure: p,
                        median: p99.median,
                        threshold: p99.threshold,
                    })
                }
                _ => {}
            }
        }
        v.p99 = Some(p99);
    }
    v.rate = Some(rate);
    // Slowest first: the member the document calls `slowest` leads.
    let rate_of = |m: &str| {
        figures
            .iter()
            .find(|f| f.member == m)
            .map_or(f64::INFINITY, |f| f.bytes_per_sec)
    };
    v.flagged
        .sort_by(|a, b| rate_of(&a.member).total_cmp(&rate_of(&b.member)));
    v
}
