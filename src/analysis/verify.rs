//! Data verification: self-describing blocks.
//!
//! With `--verify`, every block a worker writes starts with a 64-byte header
//! and is protected by a CRC32C:
//!
//! | bytes  | field |
//! |--------|-------|
//! | 0..8   | magic `SBVERIF2` |
//! | 8..16  | the target offset the block was written to |
//! | 16..20 | writer worker id |
//! | 20..24 | block length (the `--bs` it was written with, or the `--bssplit` size drawn for it) |
//! | 24..32 | generation: the write run's start (Unix ms) x 65536 + the pass over the worker's region |
//! | 32..40 | seed |
//! | 40..48 | start of the range this write covers (the writer's first offset) |
//! | 48..56 | end of that range (exclusive): what this write is bound to cover |
//! | 56..60 | reserved (0) |
//! | 60..64 | CRC32C of the whole block with these 4 bytes taken as 0 |
//!
//! followed by a payload drawn from (seed, offset, generation). Blocks of
//! the earlier 48-byte layout (magic `SBVERIFY`, no range, CRC at 44) are
//! still read: they claim no range but their own.
//!
//! The range is each block's identity of its write: a size-bounded write
//! (`--io-limit`, `--passes`) knows from its first block how far it goes,
//! so a block of an older write inside that range is stale wherever it
//! lies, even past the last block the newer write's blocks show (its tail
//! lost). A duration-bound write claims, in its first pass, only as far as
//! it got; from its second pass on, its whole region.
//!
//! Reading it back finds these kinds of bad block:
//!
//! - **corrupt**: the header is there but the checksum does not match;
//! - **misplaced**: a valid block whose header names another offset (a
//!   misdirected write, what a broken stripe map produces);
//! - **stale**: a valid block of an older write inside the range a newer
//!   write covered, or of an older generation than a block its writer wrote
//!   *after* it (sequential writing never leaves an older block before a
//!   newer one of the same writer): a lost write.
//!
//! - **lost**: a block with no header that lies between two blocks its
//!   writer wrote in the same run (same writer, same run start): writers go
//!   through their slice in order from its start, so the block between them
//!   was written too, and its write was lost (a device that drops writes and
//!   returns zeros, or old data of another format).
//!
//! Any other block with no header is counted as **unwritten**.

use crate::base::io::{splitmix64, Rng};

pub const MAGIC: &[u8; 8] = b"SBVERIF2";
pub const HEADER: usize = 64;
const CRC_AT: usize = 60;
/// The earlier layout: 48 bytes, no range, the CRC at 44.
const MAGIC_V1: &[u8; 8] = b"SBVERIFY";
const HEADER_V1: usize = 48;
const CRC_AT_V1: usize = 44;

/// The offsets `[start, end)` a write covers (or claims to).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Extent {
    pub start: u64,
    pub end: u64,
}

/// The range a sequential writer's write covers, as known when it writes
/// the block at `offset` in `pass`: its region's whole requests once it
/// wraps or when `limit` (bytes, `u64::MAX` for none) reaches them, the
/// first `limit` bytes (whole requests) when it stops before, and, for a
/// duration-bound write still in its first pass, as far as it got.
pub fn write_extent(region: Extent, bs: u64, limit: u64, pass: u64, offset: u64) -> Extent {
    let whole = (region.end - region.start) / bs.max(1) * bs;
    let bounded = limit.div_ceil(bs.max(1)).saturating_mul(bs);
    let end = if pass > 0 || (limit != u64::MAX && bounded >= whole) {
        region.start + whole
    } else if limit != u64::MAX {
        region.start + bounded
    } else {
        offset + bs
    };
    Extent {
        start: region.start,
        end,
    }
}

/// The generation of a block written in `pass` by a run that started at `start_ms`.
pub fn generation(start_ms: u64, pass: u64) -> u64 {
    start_ms.saturating_mul(65536) + pass.min(65535)
}

/// The CRC32C of a block whose header is `header` bytes with the CRC in
/// its last 4, those taken as 0.
fn crc(block: &[u8], header: usize) -> u32 {
    let at = header - 4;
    let c = crc32c::crc32c(&block[..at]);
    let c = crc32c::crc32c_append(c, &[0u8; 4]);
    crc32c::crc32c_append(c, &block[header..])
}

/// Fills `block` (its length is the block size, at least [`HEADER`]) for
/// `offset`, by a write that covers `extent`.
pub fn fill_block(block: &mut [u8], offset: u64, worker: u32, gen: u64, seed: u64, extent: Extent) {
    let len = block.len();
    Rng::new(splitmix64(seed ^ offset) ^ gen).fill(&mut block[HEADER..]);
    block[0..8].copy_from_slice(MAGIC);
    block[8..16].copy_from_slice(&offset.to_le_bytes());
    block[16..20].copy_from_slice(&worker.to_le_bytes());
    block[20..24].copy_from_slice(&(len as u32).to_le_bytes());
    block[24..32].copy_from_slice(&gen.to_le_bytes());
    block[32..40].copy_from_slice(&seed.to_le_bytes());
    block[40..48].copy_from_slice(&extent.start.to_le_bytes());
    block[48..56].copy_from_slice(&extent.end.to_le_bytes());
    block[56..60].copy_from_slice(&[0; 4]);
    let c = crc(block, HEADER);
    block[CRC_AT..HEADER].copy_from_slice(&c.to_le_bytes());
}

/// What reading one block found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A valid block for this offset.
    Good {
        worker: u32,
        gen: u64,
        /// The range its write covers.
        extent: Extent,
    },
    Corrupt,
    /// A valid block written for another offset.
    Misplaced {
        written_for: u64,
    },
    Unwritten,
    /// A valid-looking header for a block of another size.
    OtherSize {
        len: u32,
    },
}

pub fn check_block(block: &[u8], offset: u64) -> Found {
    let header = match block.get(0..8) {
        Some(m) if m == MAGIC && block.len() >= HEADER => HEADER,
        Some(m) if m == MAGIC_V1 && block.len() >= HEADER_V1 => HEADER_V1,
        _ => return Found::Unwritten,
    };
    let u32_at = |i: usize| u32::from_le_bytes(block[i..i + 4].try_into().expect("4 bytes"));
    let u64_at = |i: usize| u64::from_le_bytes(block[i..i + 8].try_into().expect("8 bytes"));
    let len = u32_at(20);
    if len as usize != block.len() {
        return Found::OtherSize { len };
    }
    let crc_at = if header == HEADER { CRC_AT } else { CRC_AT_V1 };
    if crc(block, header) != u32_at(crc_at) {
        return Found::Corrupt;
    }
    let written_for = u64_at(8);
    if written_for != offset {
        return Found::Misplaced { written_for };
    }
    let extent = if header == HEADER {
        Extent {
            start: u64_at(40),
            end: u64_at(48),
        }
    } else {
        Extent {
            start: offset,
            end: offset + u64::from(len),
        }
    };
    Found::Good {
        worker: u32_at(16),
        gen: u64_at(24),
        extent,
    }
}

/// What reading back a block a verified random mix wrote in its pass
/// found, `None` if it holds that write (`worker`'s, of generation `gen`).
/// The mix keeps a record of each block it wrote (as fio does) and reads
/// back only those, so here no block is merely unwritten: one with no
/// header lost its write, and a valid block of another pass or writer is
/// an older write the newer one did not replace (stale: a lost write).
pub fn check_recorded(
    block: &[u8],
    offset: u64,
    worker: u32,
    gen: u64,
) -> Option<(BadKind, String)> {
    Some(match check_block(block, offset) {
        Found::Good { worker: w, gen: g, .. } if w == worker && g == gen => return None,
        Found::Good { worker: w, gen: g, .. } => (
            BadKind::Stale,
            format!("holds writer {w}'s block of run {} ms, pass {}, where writer {worker} wrote pass {} of this run: a lost write", g >> 16, g & 0xFFFF, gen & 0xFFFF),
        ),
        Found::Unwritten => (
            BadKind::Lost,
            "no header, where this pass of the mix wrote a block: a lost write".into(),
        ),
        Found::Misplaced { written_for } => (
            BadKind::Misplaced,
            format!("holds the block written for offset {written_for}"),
        ),
        Found::OtherSize { len } => (
            BadKind::Corrupt,
            format!("a header for a {len}-byte block where the mix wrote {}", block.len()),
        ),
        Found::Corrupt => (BadKind::Corrupt, "checksum mismatch".into()),
    })
}

/// Kinds of bad block, as reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadKind {
    Corrupt,
    Misplaced,
    Stale,
    Lost,
}

/// One bad block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadBlock {
    pub offset: u64,
    pub kind: BadKind,
    pub detail: String,
    /// On a striped or parity volume: the member that holds the offset
    /// (its kernel name) and the byte on it, from the volume's geometry.
    pub member: Option<String>,
    pub member_offset: Option<u64>,
}

/// A stale block: a valid block of a write some later write replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stale {
    pub offset: u64,
    /// Its generation.
    pub gen: u64,
    /// The newer generation that shows it stale: a later block of its
    /// writer's, or (`in_range`) the later write whose range holds it
    /// (its run, pass 0).
    pub newer: u64,
    /// Found by a newer write's range, rather than by its writer's order.
    pub in_range: bool,
}

/// The stale blocks among good ones, given as (writer, offset,
/// generation), by offset. `claims` are the ranges writes cover, as (run
/// start in Unix ms, range): a block lying in the range of a write that
/// started after its own is stale, wherever in that range it lies. Apart
/// from that, a writer writes its blocks in ascending offset order, pass
/// after pass, so along its offsets generations never increase; a block
/// older than any block after it was lost.
pub fn find_stale(mut good: Vec<(u32, u64, u64)>, claims: &[(u64, Extent)]) -> Vec<Stale> {
    // Newest write first: the first claim holding an offset is the newest
    // write that covers it.
    let mut claims = claims.to_vec();
    claims.sort_unstable_by(|a, b| b.cmp(a));
    let covered_by_newer = |off: u64, gen: u64| {
        claims
            .iter()
            .take_while(|(run, _)| *run > gen >> 16)
            .find(|(_, e)| (e.start..e.end).contains(&off))
            .map(|(run, _)| run << 16)
    };
    good.sort_unstable();
    let mut stale = Vec::new();
    let mut i = good.len();
    let mut newest_after: Option<(u32, u64)> = None; // (writer, generation)
    while i > 0 {
        i -= 1;
        let (w, off, g) = good[i];
        if let Some(newer) = covered_by_newer(off, g) {
            stale.push(Stale {
                offset: off,
                gen: g,
                newer,
                in_range: true,
            });
            continue;
        }
        match newest_after {
            Some((nw, ng)) if nw == w && g < ng => stale.push(Stale {
                offset: off,
                gen: g,
                newer: ng,
                in_range: false,
            }),
            Some((nw, ng)) if nw == w => newest_after = Some((w, ng.max(g))),
            _ => newest_after = Some((w, g)),
        }
    }
    stale.sort_unstable_by_key(|s| s.offset);
    stale
}

/// The block size the headers of a target say it was written with, when it
/// is not the `--bs` it was read with: no block read checked good, and
/// some carried a header for blocks of `other_len` bytes. `None` when the
/// `--bs` is right (or nothing says otherwise): the blocks of another size
/// among good ones are then damage to report one by one.
pub fn wrong_bs(good: u64, other_len: Option<u32>) -> Option<u64> {
    other_len.filter(|_| good == 0).map(u64::from)
}

/// A run of consecutive blocks without a header: `[start, end)`, `blocks` of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unwritten {
    pub start: u64,
    pub end: u64,
    pub blocks: u64,
}

/// The runs of `unwritten` that are lost writes, with the writer and the
/// offsets of the good blocks around them. `good` is (writer, offset,
/// generation) of every good block of the target, in any order; a run is
/// lost when the nearest good block before it and the nearest after it
/// were written by the same writer in the same run (generation >> 16).
pub fn find_lost(
    good: &[(u32, u64, u64)],
    unwritten: &[Unwritten],
) -> Vec<(Unwritten, u32, u64, u64)> {
    let mut by_offset: Vec<(u64, u32, u64)> = good.iter().map(|&(w, o, g)| (o, w, g)).collect();
    by_offset.sort_unstable();
    unwritten
        .iter()
        .filter_map(|u| {
            let after = by_offset.partition_point(|&(o, _, _)| o < u.end);
            let before = by_offset.partition_point(|&(o, _, _)| o < u.start);
            let (b, a) = (
                by_offset.get(before.checked_sub(1)?)?,
                by_offset.get(after)?,
            );
            (b.1 == a.1 && b.2 >> 16 == a.2 >> 16).then_some((*u, b.1, b.0, a.0))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // A random mix reads back only blocks its record says it wrote: one
    // with no header lost its write, an older one's block is stale.
    #[test]
    fn a_block_a_random_mix_wrote_is_good_only_if_it_holds_that_write() {
        let own = |o: u64| Extent {
            start: o,
            end: o + 4096,
        };
        let mut b = vec![0u8; 4096];
        fill_block(&mut b, 8192, 1, generation(1000, 5), 7, own(8192));
        assert_eq!(check_recorded(&b, 8192, 1, generation(1000, 5)), None);
        let kind = |b: &[u8], w, g| check_recorded(b, 8192, w, g).map(|(k, _)| k);
        assert_eq!(kind(&b, 1, generation(1000, 6)), Some(BadKind::Stale));
        assert_eq!(kind(&b, 2, generation(1000, 5)), Some(BadKind::Stale));
        assert_eq!(kind(&[0u8; 4096], 1, 5), Some(BadKind::Lost));
        assert_eq!(
            check_recorded(&b, 12288, 1, generation(1000, 5)).map(|(k, _)| k),
            Some(BadKind::Misplaced)
        );
        let mut flipped = b.clone();
        flipped[100] ^= 0x5a;
        assert_eq!(
            kind(&flipped, 1, generation(1000, 5)),
            Some(BadKind::Corrupt)
        );
    }

    #[test]
    fn a_written_block_checks_good_and_damage_is_classified() {
        let mut b = vec![0u8; 4096];
        let e = Extent {
            start: 0,
            end: 1 << 20,
        };
        fill_block(&mut b, 8192, 3, generation(1000, 2), 42, e);
        assert_eq!(
            check_block(&b, 8192),
            Found::Good {
                worker: 3,
                gen: generation(1000, 2),
                extent: e
            }
        );
        assert_eq!(
            check_block(&b, 12288),
            Found::Misplaced { written_for: 8192 }
        );
        let mut flipped = b.clone();
        flipped[2000] ^= 0x10;
        assert_eq!(check_block(&flipped, 8192), Found::Corrupt);
        let mut hdr = b.clone();
        hdr[30] ^= 1;
        assert_eq!(
            check_block(&hdr, 8192),
            Found::Corrupt,
            "the header is covered too"
        );
        assert_eq!(check_block(&[0u8; 4096], 0), Found::Unwritten);
        assert_eq!(
            check_block(&b[..2048], 8192),
            Found::OtherSize { len: 4096 }
        );
    }

    #[test]
    fn payload_depends_on_offset_and_generation() {
        let (mut a, mut b, mut c) = (vec![0u8; 512], vec![0u8; 512], vec![0u8; 512]);
        let e = Extent { start: 0, end: 0 };
        fill_block(&mut a, 0, 0, 1, 7, e);
        fill_block(&mut b, 512, 0, 1, 7, e);
        fill_block(&mut c, 0, 0, 2, 7, e);
        assert_ne!(a[HEADER..], b[HEADER..]);
        assert_ne!(a[HEADER..], c[HEADER..]);
    }

    #[test]
    fn a_gap_inside_one_writers_sequence_is_lost() {
        let g = |run, pass| generation(run, pass);
        let run = |start, end| Unwritten {
            start,
            end,
            blocks: (end - start) / 10,
        };
        let good = [
            (0, 0, g(5, 0)),
            (0, 10, g(5, 0)),
            (0, 40, g(5, 0)),
            (1, 50, g(5, 0)),
            (1, 60, g(5, 0)),
            (2, 90, g(6, 0)),
        ];
        let lost = find_lost(&good, &[run(20, 40), run(70, 90), run(100, 200)]);
        // 20..40 lies inside writer 0's sequence; 70..90 between writers 1
        // and 2 (writer 1's slice may end there); 100.. after everything.
        assert_eq!(lost, vec![(run(20, 40), 0, 10, 40)]);
        // The same writer in two runs: not one sequence.
        assert!(find_lost(&[(0, 0, g(5, 0)), (0, 20, g(6, 0))], &[run(10, 20)]).is_empty());
    }

    #[test]
    fn stale_blocks_are_older_than_a_later_block_of_the_same_writer() {
        let g = |p| generation(5, p);
        // Writer 0: pass 3 reached offset 2, the rest is pass 2; offset 1 lost its write.
        let mut v = vec![
            (0, 0, g(3)),
            (0, 1, g(2)),
            (0, 2, g(3)),
            (0, 3, g(2)),
            (0, 4, g(2)),
        ];
        // Writer 1, a clean wrap: pass 1 then pass 0.
        v.extend([(1, 10, g(1)), (1, 11, g(1)), (1, 12, g(0))]);
        let offsets = |v: Vec<Stale>| {
            v.iter()
                .map(|s| (s.offset, s.gen, s.newer))
                .collect::<Vec<_>>()
        };
        assert_eq!(offsets(find_stale(v, &[])), vec![(1, g(2), g(3))]);
        assert!(find_stale(vec![(0, 0, 9), (0, 1, 9), (0, 2, 8)], &[]).is_empty());
        // Two lost writes in a row are both found.
        assert_eq!(
            find_stale(vec![(0, 0, 9), (0, 1, 8), (0, 2, 8), (0, 3, 9)], &[]).len(),
            2
        );
    }

    // Regression (issue 39, item 9): the blocks at the end of a writer's
    // slice put back from an earlier write had no newer block after them,
    // and verified good.
    #[test]
    fn a_block_of_an_older_write_inside_a_newer_writes_range_is_stale_wherever_it_lies() {
        let range = |start, end| Extent { start, end };
        // Write 5 covered 0..8 (blocks of 1): blocks 0..6 are its, 6 and 7
        // are write 4's, put back; 8 and 9 lie past its range.
        let mut good: Vec<(u32, u64, u64)> = (0..6).map(|o| (0, o, generation(5, 0))).collect();
        good.extend([6, 7, 8, 9].map(|o| (0, o, generation(4, 0))));
        let claims = [(4, range(0, 10)), (5, range(0, 8))];
        let stale = find_stale(good.clone(), &claims);
        assert_eq!(
            stale
                .iter()
                .map(|s| (s.offset, s.in_range))
                .collect::<Vec<_>>(),
            vec![(6, true), (7, true)]
        );
        assert_eq!(stale[0].newer >> 16, 5);
        // At the start of the slice too, and by another writer of the older write.
        let good = vec![(1, 0, generation(4, 0)), (0, 1, generation(5, 0))];
        assert_eq!(find_stale(good, &claims).len(), 1);
        // Without the newer write's range (its blocks of the 48-byte
        // layout claim only themselves), the tail is not found.
        assert!(find_stale(
            (0..4)
                .map(|o| (0, o, generation(5 - o / 2, 0)))
                .collect::<Vec<_>>(),
            &[(5, range(0, 1)), (5, range(1, 2))]
        )
        .is_empty());
    }

    #[test]
    fn a_write_claims_what_it_is_bound_to_cover() {
        let region = Extent {
            start: 1000,
            end: 1000 + 10 * 64 + 5,
        };
        let ext = |limit, pass, offset| {
            let e = write_extent(region, 64, limit, pass, offset);
            (e.start, e.end)
        };
        let whole = 1000 + 640;
        assert_eq!(
            ext(u64::MAX, 0, 1128),
            (1000, 1192),
            "duration-bound: as far as it got"
        );
        assert_eq!(
            ext(u64::MAX, 1, 1128),
            (1000, whole),
            "a second pass covered it all"
        );
        assert_eq!(
            ext(100, 0, 1000),
            (1000, 1128),
            "--io-limit rounds up to whole requests"
        );
        assert_eq!(ext(640, 0, 1000), (1000, whole));
        assert_eq!(ext(1 << 40, 0, 1000), (1000, whole));
    }

    #[test]
    fn blocks_of_the_earlier_48_byte_layout_still_check() {
        let mut b = vec![0u8; 512];
        Rng::new(1).fill(&mut b[HEADER_V1..]);
        b[0..8].copy_from_slice(MAGIC_V1);
        b[8..16].copy_from_slice(&1024u64.to_le_bytes());
        b[20..24].copy_from_slice(&512u32.to_le_bytes());
        b[24..32].copy_from_slice(&7u64.to_le_bytes());
        b[40..44].copy_from_slice(&[0; 4]);
        let c = crc(&b, HEADER_V1);
        b[CRC_AT_V1..HEADER_V1].copy_from_slice(&c.to_le_bytes());
        assert_eq!(
            check_block(&b, 1024),
            Found::Good {
                worker: 0,
                gen: 7,
                extent: Extent {
                    start: 1024,
                    end: 1536
                }
            }
        );
        b[300] ^= 1;
        assert_eq!(check_block(&b, 1024), Found::Corrupt);
    }

    #[test]
    fn the_wrong_bs_is_named_only_when_no_block_checked_good() {
        assert_eq!(wrong_bs(0, Some(65536)), Some(65536));
        assert_eq!(wrong_bs(3, Some(65536)), None);
        assert_eq!(wrong_bs(0, None), None);
    }
}
