//! advise's judgements of the stack as it is set up, as functions of plain
//! figures (what sysfs, the md and dm tables and the file system say):
//! which condition is a finding, how much it matters, and the numbers the
//! finding gives (the fix's value, how many pieces a chunk becomes).
//! `document::advise` gathers the figures from the device survey and
//! writes each finding's text from the verdict returned here; the measured
//! checks' judgements are in `analysis::advise`.

use super::advise::gain_pct;
pub use super::advise::Severity;

const KIB: u64 = 1024;
const PAGE: u64 = 4096;
const ONE_MIB: u64 = 1 << 20;

/// The chunk md assumes when none is known (its default), bytes.
const DEFAULT_CHUNK: u64 = 64 << 10;

/// mdadm's rule for an md raid4/5/6 stripe cache: four chunks' worth of
/// 4 KiB stripe heads, plus one (`chunk` in bytes, md's default when not
/// known).
pub fn stripe_cache_rule(chunk: Option<u64>) -> u64 {
    4 * chunk.unwrap_or(DEFAULT_CHUNK) / PAGE + 1
}

/// The stripe cache advise's fix sets for `rule` (mdadm's minimum): at
/// least 256 (md's default), a power of two, at most 32768.
pub fn stripe_cache_fix(rule: u64) -> u64 {
    rule.max(256).next_power_of_two().min(32768)
}

/// A stripe cache below mdadm's rule: its size, the rule, the fix's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StripeCacheSmall {
    pub severity: Severity,
    pub size: u64,
    pub rule: u64,
    pub to: u64,
}

/// Whether a stripe cache of `size` heads is below the rule for `chunk`
/// (a medium finding: full-stripe writes cannot be gathered).
pub fn stripe_cache_small(size: Option<u64>, chunk: Option<u64>) -> Option<StripeCacheSmall> {
    let rule = stripe_cache_rule(chunk);
    let size = size.filter(|&s| s < rule)?;
    Some(StripeCacheSmall {
        severity: Severity::Medium,
        size,
        rule,
        to: stripe_cache_fix(rule),
    })
}

/// What a stripe cache of `heads` costs in memory, bytes: a 4 KiB page
/// per member per head.
pub fn stripe_cache_memory(heads: u64, members: u32) -> u64 {
    heads * PAGE * u64::from(members)
}

/// dm-crypt's workqueue flags (kernel 5.9+): the ones of `flags` not set.
/// Low: the queueing costs most on fast members, and what it costs here
/// is only known by measuring (the crypt device against the one below it).
pub fn crypt_workqueues(flags: &[String]) -> Option<(Severity, Vec<&'static str>)> {
    let missing: Vec<&'static str> = ["no_read_workqueue", "no_write_workqueue"]
        .into_iter()
        .filter(|w| !flags.iter().any(|f| f == w))
        .collect();
    (!missing.is_empty()).then_some((Severity::Low, missing))
}

/// The fewest members for one parity thread to be worth a sweep of more.
pub const PARITY_THREADS_MIN_MEMBERS: u32 = 4;

/// Whether an array of `members` computes parity in one thread worth
/// saying (info, the severity returned): `group_thread_cnt` 0, with at
/// least [`PARITY_THREADS_MIN_MEMBERS`].
pub fn parity_one_thread(group_thread_cnt: Option<u64>, members: u32) -> Option<Severity> {
    (group_thread_cnt == Some(0) && members >= PARITY_THREADS_MIN_MEMBERS).then_some(Severity::Info)
}

/// A member that takes requests smaller than the chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestSplit {
    pub severity: Severity,
    /// Its max_sectors_kb.
    pub max_kb: u64,
    /// How many requests a chunk becomes on it.
    pub pieces: u64,
    /// The max_sectors_kb the fix sets: the other members' largest, at
    /// least the chunk, at most the hardware's limit.
    pub to_kb: u64,
    /// Whether `to_kb` takes a chunk whole (else only a smaller chunk
    /// helps).
    pub fixable: bool,
    /// The other members' max_sectors_kb, sorted, each once.
    pub others: Vec<u64>,
}

/// Whether a member whose max_sectors_kb is `max_kb` (hardware limit
/// `hw_kb`) splits a chunk of `chunk_kb`; `others`: the other members'
/// max_sectors_kb. A medium finding.
pub fn request_split(
    max_kb: Option<u64>,
    hw_kb: Option<u64>,
    others: &[u64],
    chunk_kb: u64,
) -> Option<RequestSplit> {
    let max_kb = max_kb.filter(|&k| k < chunk_kb)?;
    let to_kb = others
        .iter()
        .copied()
        .max()
        .unwrap_or(chunk_kb)
        .max(chunk_kb)
        .min(hw_kb.unwrap_or(u64::MAX));
    let mut sorted = others.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    Some(RequestSplit {
        severity: Severity::Medium,
        max_kb,
        pieces: chunk_kb.div_ceil(max_kb.max(1)),
        to_kb,
        fixable: to_kb >= chunk_kb,
        others: sorted,
    })
}

/// Whether a member gathering at most `max_segments` segments may split a
/// chunk of `chunk_kb` made of scattered 4 KiB pages (a low finding): the
/// severity and the segments, when it does.
pub fn segments_below_chunk(max_segments: Option<u64>, chunk_kb: u64) -> Option<(Severity, u64)> {
    max_segments
        .filter(|&s| s * (PAGE / KIB) < chunk_kb)
        .map(|s| (Severity::Low, s))
}

/// A boundary a layer's start is held against, the first it misses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boundary {
    /// The disk's physical block, bytes.
    PhysicalBlock(u64),
    FourKib,
    /// The chunk of the array below (or, for a partition, the array it is
    /// on), bytes.
    Chunk(u64),
    /// The full stripe of the array below, bytes.
    FullStripe(u64),
    OneMib,
}

/// A partition that starts `at` bytes into its disk (physical block
/// `phys` bytes, `disk_chunk` when the disk is itself striped): the first
/// boundary it misses and how much that matters; `None` when it is on
/// them all.
pub fn partition_misaligned(
    at: u64,
    phys: u64,
    disk_chunk: Option<u64>,
) -> Option<(Severity, Boundary)> {
    if at % phys.max(512) != 0 {
        Some((Severity::High, Boundary::PhysicalBlock(phys)))
    } else if at % PAGE != 0 {
        Some((Severity::Medium, Boundary::FourKib))
    } else if let Some(c) = disk_chunk.filter(|c| at % c != 0) {
        Some((Severity::Medium, Boundary::Chunk(c)))
    } else if at % ONE_MIB != 0 {
        Some((Severity::Low, Boundary::OneMib))
    } else {
        None
    }
}

/// A dm-linear segment mapped from `off` bytes into a member whose chunk
/// and full stripe (of more than one data member) are given: the first
/// boundary it misses and how much that matters; `None` when on them all.
pub fn dm_offset_misaligned(
    off: u64,
    chunk: Option<u64>,
    full: Option<u64>,
) -> Option<(Severity, Boundary)> {
    if off % PAGE != 0 {
        Some((Severity::Medium, Boundary::FourKib))
    } else if let Some(c) = chunk.filter(|c| off % c != 0) {
        Some((Severity::Medium, Boundary::Chunk(c)))
    } else {
        full.filter(|fs| off % fs != 0)
            .map(|fs| (Severity::Low, Boundary::FullStripe(fs)))
    }
}

/// The alignment a dm-linear segment's fix asks for, bytes: the member's
/// full stripe, else its chunk, else 4 KiB.
pub fn dm_fix_alignment(chunk: Option<u64>, full: Option<u64>) -> u64 {
    full.or(chunk).unwrap_or(PAGE)
}

/// Whether a member's data starting `off` bytes into it straddles its
/// 4 KiB blocks: a medium finding.
pub fn data_offset_misaligned(off: u64) -> Option<Severity> {
    (off % PAGE != 0).then_some(Severity::Medium)
}

/// A device the kernel says is misaligned by `offset` bytes
/// (`alignment_offset`), when it is: a medium finding.
pub fn alignment_offset(offset: Option<u64>) -> Option<(Severity, u64)> {
    offset.filter(|&a| a > 0).map(|a| (Severity::Medium, a))
}

/// The value most members have, and the members (with theirs) that have
/// another; `None` unless at least two values are seen. A tie goes to the
/// value that sorts last.
pub fn odd_ones<'a>(
    values: &[(&'a str, Option<String>)],
) -> Option<(String, Vec<(&'a str, String)>)> {
    let mut count: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for (_, v) in values {
        if let Some(v) = v {
            *count.entry(v.as_str()).or_default() += 1;
        }
    }
    if count.len() < 2 {
        return None;
    }
    let common = count.iter().max_by_key(|(_, n)| **n)?.0.to_string();
    let odd = values
        .iter()
        .filter_map(|(m, v)| {
            v.as_ref()
                .filter(|v| **v != common)
                .map(|v| (*m, v.clone()))
        })
        .collect();
    Some((common, odd))
}

/// How much faster (percent) the best measured read-ahead must read than
/// the current one for it to be recommended.
pub const READAHEAD_GAIN_PCT: f64 = 10.0;

/// The read-ahead check's verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Readahead {
    pub severity: Severity,
    /// The read-ahead recommended, KiB.
    pub rec_kb: u64,
    /// Whether the current one is below a full stripe.
    pub low: bool,
    /// The rate measured at the current value, bytes/s.
    pub at_cur: Option<f64>,
    /// How much faster the best value read than the current one.
    pub gain_pct: Option<f64>,
}

/// Read-ahead `cur_kb` against a full stripe of `full_kb`; `measured`:
/// buffered sequential reads' rates (bytes/s) at each value (KiB), the
/// current one among them when measured. Measured, the best value is
/// recommended when it beats the current one by [`READAHEAD_GAIN_PCT`]
/// (high from none, medium from below a full stripe, info from at or
/// above one: within a loaded machine's noise); a read-ahead below the
/// stripe the measurements do not improve on is low, at twice the
/// stripe. Not measured, the rule alone: below a full stripe is medium
/// (high at 0), recommending twice the stripe. `None`: nothing to say.
pub fn readahead(cur_kb: u64, full_kb: u64, measured: &[(u64, f64)]) -> Option<Readahead> {
    let at_cur = measured.iter().find(|(k, _)| *k == cur_kb).map(|m| m.1);
    let best = measured
        .iter()
        .copied()
        .filter(|(_, r)| r.is_finite() && *r > 0.0)
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let gain = match (at_cur, best) {
        (Some(c), Some((_, b))) => gain_pct(c, b),
        _ => None,
    };
    let low = cur_kb < full_kb;
    let (severity, rec_kb) = match (best, gain) {
        (Some((k, _)), Some(p)) if k != cur_kb && p >= READAHEAD_GAIN_PCT => (
            if low && cur_kb == 0 {
                Severity::High
            } else if low {
                Severity::Medium
            } else {
                Severity::Info
            },
            k,
        ),
        (Some(_), Some(_)) if low => (Severity::Low, 2 * full_kb),
        (Some(_), Some(_)) => return None,
        _ if low && cur_kb == 0 => (Severity::High, 2 * full_kb),
        _ if low => (Severity::Medium, 2 * full_kb),
        _ => return None,
    };
    Some(Readahead {
        severity,
        rec_kb,
        low,
        at_cur,
        gain_pct: gain,
    })
}

/// The stripe hints that match a `chunk` and a `full` stripe (bytes), in
/// the file system's units: XFS's sunit and swidth in 512-byte sectors,
/// ext4's stride and stripe_width in its blocks of `block` bytes.
pub fn fs_hint_values(xfs: bool, block: u64, chunk: u64, full: u64) -> (u64, u64) {
    let unit = if xfs { 512 } else { block };
    (chunk / unit, full / unit)
}

/// How many of the data members a sequential buffered reader with a
/// read-ahead of `cur_kb` reads at once: the chunks it spans (`chunk`,
/// else the `full` stripe, bytes), at least one.
pub fn readahead_members_at_once(cur_kb: u64, chunk: Option<u64>, full: u64) -> u64 {
    (cur_kb * KIB).div_ceil(chunk.unwrap_or(full)).max(1)
}

/// A file system's stripe hints (`unit`, `width`, bytes, as it holds
/// them) against the array's `chunk` and `full` stripe: `None` when they
/// match; else whether they are unset (low: the allocator ignores the
/// stripe) and the severity (medium when set and wrong: it aligns to
/// boundaries that are not the stripe's).
pub fn fs_hints(
    unit: Option<u64>,
    width: Option<u64>,
    chunk: u64,
    full: u64,
) -> Option<(Severity, bool)> {
    if unit == Some(chunk) && width == Some(full) {
        return None;
    }
    let unset = unit.is_none() && width.is_none();
    Some((
        if unset {
            Severity::Low
        } else {
            Severity::Medium
        },
        unset,
    ))
}

/// The members missing from an md array whose `md/degraded` says `k`,
/// when any are: high (one more failure may lose data).
pub fn degraded(k: Option<u64>) -> Option<(Severity, u64)> {
    k.filter(|&k| k > 0).map(|k| (Severity::High, k))
}

/// The sync action an md array runs that lowers what is measured (any but
/// `idle` and `frozen`): medium.
pub fn resync(action: Option<&str>) -> Option<(Severity, &str)> {
    action
        .filter(|a| !matches!(*a, "idle" | "frozen"))
        .map(|a| (Severity::Medium, a))
}

/// The sync action an md array's state words name: any but `idle` (a
/// frozen one is said, though it lowers nothing measured).
pub fn sync_said(action: Option<&str>) -> Option<&str> {
    action.filter(|a| *a != "idle")
}

/// `md/sync_completed` ("done / total") as a percentage.
pub fn sync_pct(s: &str) -> Option<f64> {
    let (a, b) = s.split_once('/')?;
    let (a, b): (f64, f64) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (b > 0.0).then(|| a / b * 100.0)
}

/// Whether NUMA placement is worth a word: on a host of more than one
/// node, info (where to run the workers, not a fault).
pub fn numa_placement(nodes: usize) -> Option<Severity> {
    (nodes >= 2).then_some(Severity::Info)
}

/// An attribute of the stripe members the mismatch check compares, in the
/// order it compares them (the scheduler before nr_requests, which a
/// scheduler change resets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberAttr {
    Scheduler,
    NrRequests,
    WriteCache,
    WbtLatUsec,
    Rotational,
    Model,
    Firmware,
    NumaNode,
    Controller,
}

impl MemberAttr {
    pub const ALL: [MemberAttr; 9] = [
        MemberAttr::Scheduler,
        MemberAttr::NrRequests,
        MemberAttr::WriteCache,
        MemberAttr::WbtLatUsec,
        MemberAttr::Rotational,
        MemberAttr::Model,
        MemberAttr::Firmware,
        MemberAttr::NumaNode,
        MemberAttr::Controller,
    ];

    /// How much members differing in it matters: what changes how a
    /// member handles requests is medium; firmware, the NUMA node and the
    /// controller, which may not, are low.
    pub fn severity(self) -> Severity {
        match self {
            MemberAttr::Firmware | MemberAttr::NumaNode | MemberAttr::Controller => Severity::Low,
            _ => Severity::Medium,
        }
    }
}

/// Whether a member whose queue offers `offered` schedulers (none known:
/// any) can be set to `wanted`; if not, the others' must change instead.
pub fn scheduler_offered(offered: &[String], wanted: &str) -> bool {
    offered.is_empty() || offered.iter().any(|o| o == wanted)
}

/// Members built differently: a medium finding, before any setting is
/// compared.
pub const MEMBER_STACK_SEVERITY: Severity = Severity::Medium;

/// Each member's value of one attribute (member, value when known).
pub type MemberValues<'a> = Vec<(&'a str, Option<String>)>;

/// The members whose values (member, value) differ in one attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch<'a> {
    pub attr: MemberAttr,
    pub severity: Severity,
    /// The value most members have.
    pub common: String,
    /// The members that have another, with theirs.
    pub odd: Vec<(&'a str, String)>,
    /// Every member's value compared (the evidence).
    pub values: MemberValues<'a>,
    /// For the scheduler: the nr_requests of each member with another
    /// scheduler, where it differs from the others' (its scheduler set
    /// it: the scheduler's fix puts both back).
    pub set_with_scheduler: MemberValues<'a>,
}

/// The mismatch check over the members built alike: `values` holds, for
/// each attribute of [`MemberAttr::ALL`], each member's value. A member
/// with another scheduler has its nr_requests left out of nr_requests'
/// comparison (said with the scheduler's mismatch instead).
pub fn member_mismatches<'a>(values: Vec<(MemberAttr, MemberValues<'a>)>) -> Vec<Mismatch<'a>> {
    let mut out: Vec<Mismatch<'a>> = Vec::new();
    let mut other_scheduler: Vec<&str> = Vec::new();
    for (attr, mut vs) in values {
        if attr == MemberAttr::NrRequests && !other_scheduler.is_empty() {
            let (explained, rest): (Vec<_>, Vec<_>) = vs
                .into_iter()
                .partition(|(m, _)| other_scheduler.contains(m));
            vs = rest;
            let common = odd_ones(&vs)
                .map(|c| c.0)
                .or_else(|| vs.first().and_then(|v| v.1.clone()));
            if let Some(s) = out.iter_mut().find(|m| m.attr == MemberAttr::Scheduler) {
                s.set_with_scheduler = explained
                    .into_iter()
                    .filter(|(_, v)| *v != common)
                    .collect();
            }
        }
        let Some((common, odd)) = odd_ones(&vs) else {
            continue;
        };
        if attr == MemberAttr::Scheduler {
            other_scheduler = odd.iter().map(|(m, _)| *m).collect();
        }
        out.push(Mismatch {
            attr,
            severity: attr.severity(),
            common,
            odd,
            values: vs,
            set_with_scheduler: Vec::new(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stripe_cache_is_small_below_four_chunks_of_heads_plus_one() {
        // 512 KiB chunk: 4 × 128 + 1 = 513 heads.
        assert_eq!(stripe_cache_rule(Some(512 << 10)), 513);
        assert_eq!(stripe_cache_rule(None), 65);
        assert_eq!(
            stripe_cache_small(Some(512), Some(512 << 10)),
            Some(StripeCacheSmall {
                severity: Severity::Medium,
                size: 512,
                rule: 513,
                to: 1024
            })
        );
        assert_eq!(stripe_cache_small(Some(513), Some(512 << 10)), None);
        assert_eq!(stripe_cache_small(None, Some(512 << 10)), None);
        assert_eq!(stripe_cache_fix(65), 256);
        assert_eq!(stripe_cache_fix(40000), 32768);
    }

    #[test]
    fn the_numbers_a_fix_gives_are_in_its_own_units() {
        // 1024 heads × 4 KiB × 4 members.
        assert_eq!(stripe_cache_memory(1024, 4), 16 << 20);
        assert_eq!(dm_fix_alignment(Some(64 << 10), Some(256 << 10)), 256 << 10);
        assert_eq!(dm_fix_alignment(Some(64 << 10), None), 64 << 10);
        assert_eq!(dm_fix_alignment(None, None), 4096);
        assert_eq!(fs_hint_values(true, 4096, 64 << 10, 256 << 10), (128, 512));
        assert_eq!(fs_hint_values(false, 4096, 64 << 10, 256 << 10), (16, 64));
        // 128 KiB over 64 KiB chunks: two at once; 0 still reads one.
        assert_eq!(readahead_members_at_once(128, Some(64 << 10), 256 << 10), 2);
        assert_eq!(readahead_members_at_once(129, Some(64 << 10), 256 << 10), 3);
        assert_eq!(readahead_members_at_once(0, Some(64 << 10), 256 << 10), 1);
        assert_eq!(readahead_members_at_once(128, None, 256 << 10), 1);
    }

    #[test]
    fn one_parity_thread_is_said_from_four_members() {
        assert_eq!(parity_one_thread(Some(0), 3), None);
        assert_eq!(parity_one_thread(Some(0), 4), Some(Severity::Info));
        assert_eq!(parity_one_thread(Some(2), 4), None);
        assert_eq!(parity_one_thread(None, 4), None);
    }

    #[test]
    fn a_member_splits_a_chunk_it_takes_less_of() {
        assert_eq!(request_split(Some(512), None, &[], 512), None);
        let s = request_split(Some(511), Some(1024), &[1024, 512, 1024], 512).unwrap();
        assert_eq!(
            (s.max_kb, s.pieces, s.to_kb, s.fixable),
            (511, 2, 1024, true)
        );
        assert_eq!(s.others, [512, 1024]);
        // The hardware caps the fix below the chunk: not fixable.
        let s = request_split(Some(128), Some(256), &[1024], 512).unwrap();
        assert_eq!((s.pieces, s.to_kb, s.fixable), (4, 256, false));
        // No other member: the chunk itself.
        assert_eq!(request_split(Some(64), None, &[], 512).unwrap().to_kb, 512);
    }

    #[test]
    fn segments_split_a_chunk_of_more_pages_than_they_gather() {
        assert_eq!(segments_below_chunk(Some(128), 512), None);
        assert_eq!(
            segments_below_chunk(Some(127), 512),
            Some((Severity::Low, 127))
        );
        assert_eq!(segments_below_chunk(None, 512), None);
    }

    #[test]
    fn a_partition_is_held_against_its_first_missed_boundary() {
        use Boundary::*;
        assert_eq!(
            partition_misaligned(63 * 512, 4096, None),
            Some((Severity::High, PhysicalBlock(4096)))
        );
        assert_eq!(
            partition_misaligned(63 * 512, 512, None),
            Some((Severity::Medium, FourKib))
        );
        assert_eq!(
            partition_misaligned(64 << 10, 512, Some(128 << 10)),
            Some((Severity::Medium, Chunk(128 << 10)))
        );
        assert_eq!(
            partition_misaligned((1 << 20) - 4096, 512, None),
            Some((Severity::Low, OneMib))
        );
        assert_eq!(partition_misaligned(1 << 20, 4096, Some(512 << 10)), None);
    }

    #[test]
    fn a_dm_offset_is_held_against_4k_the_chunk_and_the_full_stripe() {
        use Boundary::*;
        let (c, fs) = (Some(64 << 10), Some(128 << 10));
        assert_eq!(
            dm_offset_misaligned(512, c, fs),
            Some((Severity::Medium, FourKib))
        );
        assert_eq!(
            dm_offset_misaligned(4096, c, fs),
            Some((Severity::Medium, Chunk(64 << 10)))
        );
        assert_eq!(
            dm_offset_misaligned(64 << 10, c, fs),
            Some((Severity::Low, FullStripe(128 << 10)))
        );
        assert_eq!(dm_offset_misaligned(128 << 10, c, fs), None);
        assert_eq!(dm_offset_misaligned(4096, None, None), None);
        assert_eq!(data_offset_misaligned(4095), Some(Severity::Medium));
        assert_eq!(data_offset_misaligned(4096), None);
        assert_eq!(alignment_offset(Some(0)), None);
        assert_eq!(alignment_offset(Some(512)), Some((Severity::Medium, 512)));
    }

    #[test]
    fn the_odd_ones_are_those_off_the_most_common_value() {
        let v = |s: &str| Some(s.to_string());
        let values = [("a", v("x")), ("b", v("y")), ("c", v("x")), ("d", None)];
        assert_eq!(
            odd_ones(&values),
            Some(("x".to_string(), vec![("b", "y".to_string())]))
        );
        assert_eq!(odd_ones(&[("a", v("x")), ("b", v("x")), ("c", None)]), None);
        // A tie: the value that sorts last is the common one.
        assert_eq!(odd_ones(&[("a", v("y")), ("b", v("x"))]).unwrap().0, "y");
    }

    #[test]
    fn read_ahead_is_recommended_past_its_gain_or_below_the_stripe() {
        // Not measured: the rule alone.
        let r = readahead(0, 1024, &[]).unwrap();
        assert_eq!((r.severity, r.rec_kb, r.low), (Severity::High, 2048, true));
        assert_eq!(
            readahead(1023, 1024, &[]).unwrap().severity,
            Severity::Medium
        );
        assert_eq!(readahead(1024, 1024, &[]), None);
        // Measured: 10% is enough, just under is not.
        let r = readahead(128, 1024, &[(128, 100.0), (4096, 110.0)]).unwrap();
        assert_eq!((r.severity, r.rec_kb), (Severity::Medium, 4096));
        assert_eq!(r.at_cur, Some(100.0));
        let r = readahead(128, 1024, &[(128, 100.0), (4096, 109.9)]).unwrap();
        assert_eq!((r.severity, r.rec_kb), (Severity::Low, 2048));
        // At a full stripe already: a hint past the gain, else nothing.
        let r = readahead(1024, 1024, &[(1024, 100.0), (4096, 110.0)]).unwrap();
        assert_eq!((r.severity, r.low), (Severity::Info, false));
        assert_eq!(readahead(1024, 1024, &[(1024, 100.0), (4096, 109.9)]), None);
    }

    #[test]
    fn stripe_hints_unset_are_low_and_wrong_are_medium() {
        assert_eq!(fs_hints(Some(64), Some(128), 64, 128), None);
        assert_eq!(fs_hints(None, None, 64, 128), Some((Severity::Low, true)));
        assert_eq!(
            fs_hints(Some(64), Some(192), 64, 128),
            Some((Severity::Medium, false))
        );
        assert_eq!(
            fs_hints(Some(64), None, 64, 128),
            Some((Severity::Medium, false))
        );
    }

    #[test]
    fn an_array_state_is_said_when_degraded_or_syncing() {
        assert_eq!(degraded(Some(0)), None);
        assert_eq!(degraded(Some(1)), Some((Severity::High, 1)));
        assert_eq!(resync(Some("idle")), None);
        assert_eq!(resync(Some("frozen")), None);
        assert_eq!(resync(Some("recover")), Some((Severity::Medium, "recover")));
        assert_eq!(sync_said(Some("idle")), None);
        assert_eq!(sync_said(Some("frozen")), Some("frozen"));
        assert_eq!(sync_pct("50 / 200"), Some(25.0));
        assert_eq!(sync_pct("none"), None);
        assert_eq!(sync_pct("5 / 0"), None);
        assert_eq!(numa_placement(1), None);
        assert_eq!(numa_placement(2), Some(Severity::Info));
    }

    #[test]
    fn members_differing_in_scheduler_keep_their_nr_requests_out_of_its_comparison() {
        let v = |s: &str| Some(s.to_string());
        let got = member_mismatches(vec![
            (
                MemberAttr::Scheduler,
                vec![("a", v("none")), ("b", v("none")), ("c", v("mq-deadline"))],
            ),
            (
                MemberAttr::NrRequests,
                vec![("a", v("64")), ("b", v("64")), ("c", v("128"))],
            ),
            (
                MemberAttr::Firmware,
                vec![("a", v("1")), ("b", v("2")), ("c", v("2"))],
            ),
            (
                MemberAttr::Model,
                vec![("a", v("x")), ("b", v("x")), ("c", None)],
            ),
        ]);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].attr, MemberAttr::Scheduler);
        assert_eq!(got[0].severity, Severity::Medium);
        assert_eq!(got[0].odd, [("c", "mq-deadline".to_string())]);
        assert_eq!(got[0].set_with_scheduler, [("c", v("128"))]);
        assert_eq!(got[1].attr, MemberAttr::Firmware);
        assert_eq!(got[1].severity, Severity::Low);
        assert_eq!(
            (got[1].common.as_str(), got[1].odd.clone()),
            ("2", vec![("a", "1".to_string())])
        );
        // The same nr_requests as the others: nothing to say of it.
        let got = member_mismatches(vec![
            (
                MemberAttr::Scheduler,
                vec![("a", v("none")), ("b", v("none")), ("c", v("bfq"))],
            ),
            (
                MemberAttr::NrRequests,
                vec![("a", v("64")), ("b", v("64")), ("c", v("64"))],
            ),
        ]);
        assert_eq!(got.len(), 1);
        assert!(got[0].set_with_scheduler.is_empty());
        let offered = ["none".to_string(), "mq-deadline".to_string()];
        assert!(scheduler_offered(&offered, "none"));
        assert!(!scheduler_offered(&offered, "bfq"));
        assert!(scheduler_offered(&[], "bfq"));
    }
}
