//! Data verification: self-describing blocks.
//!
//! With `--verify`, every block a worker writes starts with a 48-byte header
//! and is protected by a CRC32C:
//!
//! | bytes  | field |
//! |--------|-------|
//! | 0..8   | magic `SBVERIFY` |
//! | 8..16  | the target offset the block was written to |
//! | 16..20 | writer worker id |
//! | 20..24 | block length |
//! | 24..32 | generation: the write run's start (Unix ms) x 65536 + the pass over the worker's region |
//! | 32..40 | seed |
//! | 40..44 | reserved (0) |
//! | 44..48 | CRC32C of the whole block with these 4 bytes taken as 0 |
//!
//! followed by a payload drawn from (seed, offset, generation). Reading it
//! back finds three kinds of bad block:
//!
//! - **corrupt**: the header is there but the checksum does not match;
//! - **misplaced**: a valid block whose header names another offset (a
//!   misdirected write, what a broken stripe map produces);
//! - **stale**: a valid block from an older generation than a block its
//!   writer wrote *after* it (sequential writing never leaves an older block
//!   before a newer one of the same writer): a lost write.
//!
//! - **lost**: a block with no header that lies between two blocks its
//!   writer wrote in the same run (same writer, same run start): writers go
//!   through their slice in order from its start, so the block between them
//!   was written too, and its write was lost (a device that drops writes and
//!   returns zeros, or old data of another format).
//!
//! Any other block with no header is counted as **unwritten**.

use serde::{Deserialize, Serialize};

use crate::base::io::{splitmix64, Rng};

pub const MAGIC: &[u8; 8] = b"SBVERIFY";
pub const HEADER: usize = 48;
const CRC_AT: usize = 44;

/// The generation of a block written in `pass` by a run that started at `start_ms`.
pub fn generation(start_ms: u64, pass: u64) -> u64 {
    start_ms.saturating_mul(65536) + pass.min(65535)
}

fn crc(block: &[u8]) -> u32 {
    let c = crc32c::crc32c(&block[..CRC_AT]);
    let c = crc32c::crc32c_append(c, &[0u8; 4]);
    crc32c::crc32c_append(c, &block[HEADER..])
}

/// Fills `block` (its length is the block size, at least [`HEADER`]) for `offset`.
pub fn fill_block(block: &mut [u8], offset: u64, worker: u32, gen: u64, seed: u64) {
    let len = block.len();
    Rng::new(splitmix64(seed ^ offset) ^ gen).fill(&mut block[HEADER..]);
    block[0..8].copy_from_slice(MAGIC);
    block[8..16].copy_from_slice(&offset.to_le_bytes());
    block[16..20].copy_from_slice(&worker.to_le_bytes());
    block[20..24].copy_from_slice(&(len as u32).to_le_bytes());
    block[24..32].copy_from_slice(&gen.to_le_bytes());
    block[32..40].copy_from_slice(&seed.to_le_bytes());
    block[40..44].copy_from_slice(&[0; 4]);
    let c = crc(block);
    block[CRC_AT..HEADER].copy_from_slice(&c.to_le_bytes());
}

/// What reading one block found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A valid block for this offset.
    Good {
        worker: u32,
        gen: u64,
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
    if block.len() < HEADER || &block[0..8] != MAGIC {
        return Found::Unwritten;
    }
    let u32_at = |i: usize| u32::from_le_bytes(block[i..i + 4].try_into().expect("4 bytes"));
    let u64_at = |i: usize| u64::from_le_bytes(block[i..i + 8].try_into().expect("8 bytes"));
    let len = u32_at(20);
    if len as usize != block.len() {
        return Found::OtherSize { len };
    }
    if crc(block) != u32_at(CRC_AT) {
        return Found::Corrupt;
    }
    let written_for = u64_at(8);
    if written_for != offset {
        return Found::Misplaced { written_for };
    }
    Found::Good {
        worker: u32_at(16),
        gen: u64_at(24),
    }
}

/// Kinds of bad block, as reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BadKind {
    Corrupt,
    Misplaced,
    Stale,
    Lost,
}

/// One bad block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadBlock {
    pub offset: u64,
    pub kind: BadKind,
    pub detail: String,
    /// On a striped or parity volume: the member that holds the offset
    /// (its kernel name) and the byte on it, from the volume's geometry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_offset: Option<u64>,
}

/// Offsets of stale blocks among good ones, given as (writer, offset, generation).
/// A writer writes its blocks in ascending offset order, pass after pass, so
/// along its offsets generations never increase; a block older than any
/// block after it was lost.
pub fn find_stale(mut good: Vec<(u32, u64, u64)>) -> Vec<(u64, u64, u64)> {
    good.sort_unstable();
    let mut stale = Vec::new();
    let mut i = good.len();
    let mut newest_after: Option<(u32, u64)> = None; // (writer, generation)
    while i > 0 {
        i -= 1;
        let (w, off, g) = good[i];
        match newest_after {
            Some((nw, ng)) if nw == w && g < ng => stale.push((off, g, ng)),
            Some((nw, ng)) if nw == w => newest_after = Some((w, ng.max(g))),
            _ => newest_after = Some((w, g)),
        }
    }
    stale.reverse();
    stale
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

    #[test]
    fn a_written_block_checks_good_and_damage_is_classified() {
        let mut b = vec![0u8; 4096];
        fill_block(&mut b, 8192, 3, generation(1000, 2), 42);
        assert_eq!(
            check_block(&b, 8192),
            Found::Good {
                worker: 3,
                gen: generation(1000, 2)
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
        fill_block(&mut a, 0, 0, 1, 7);
        fill_block(&mut b, 512, 0, 1, 7);
        fill_block(&mut c, 0, 0, 2, 7);
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
        assert_eq!(find_stale(v), vec![(1, g(2), g(3))]);
        assert!(find_stale(vec![(0, 0, 9), (0, 1, 9), (0, 2, 8)]).is_empty());
        // Two lost writes in a row are both found.
        assert_eq!(
            find_stale(vec![(0, 0, 9), (0, 1, 8), (0, 2, 8), (0, 3, 9)]).len(),
            2
        );
    }
}
