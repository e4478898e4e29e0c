//! What written blocks hold. A device that deduplicates or compresses
//! (VDO, ZFS, zram, thin pools, SSD controllers) is flattered by the same
//! block written everywhere, so every block a worker writes is made unique
//! at almost no cost: each write buffer is filled once with pseudo-random
//! data (reproducible from the seed), and before each write a small header
//! is stamped at the start of every 4 KiB unit of the request (the unit a
//! deduplicating device compares):
//!
//! | bytes  | field |
//! |--------|-------|
//! | 0..8   | the target offset of this unit |
//! | 8..16  | the worker's write sequence number (0, 1, 2, ...) |
//! | 16..24 | the worker's seed |
//! | 24..32 | the unit's index in the request |
//!
//! That is 32 bytes per 4 KiB, written into memory the CPU is about to hand
//! to the device anyway. Two knobs, as fio's:
//!
//! - `--buffer-compress PCT`: each unit holds random bytes for its first
//!   (100 - PCT)% and zeros after, so a compressor saves about PCT% of it
//!   (the header is never compressible: at 100 a unit is 32 random bytes
//!   and zeros).
//! - `--dedupe PCT`: each unit is, with probability PCT%, a repeat: its
//!   header is a constant for its position in the request, so it equals
//!   every other repeated unit at that position (with `--bs 4k`, every
//!   repeated block is the same block).
//!
//! `--verify` writes its own self-describing blocks (see [`crate::analysis::verify`])
//! and takes neither knob.

use crate::base::io::Rng;

/// Bytes stamped at the start of each unit.
pub const STAMP: usize = 32;
/// The unit that is stamped: the block a deduplicating device compares.
pub const UNIT: usize = 4096;

/// How many leading bytes of a unit of `len` bytes are random at
/// `compress_pct` (the rest are zeros): never fewer than the stamp.
pub fn random_len(len: usize, compress_pct: u8) -> usize {
    let keep = len * (100 - usize::from(compress_pct.min(100))) / 100;
    keep.max(STAMP).min(len)
}

/// Fills a write buffer once, before the run: per unit, random bytes then
/// zeros as `compress_pct` asks.
pub fn fill(buf: &mut [u8], seed: u64, compress_pct: u8) {
    let mut rng = Rng::new(seed);
    let unit = UNIT.min(buf.len()).max(1);
    for chunk in buf.chunks_mut(unit) {
        let r = random_len(chunk.len(), compress_pct);
        rng.fill(&mut chunk[..r]);
        chunk[r..].fill(0);
    }
}

/// One worker's stamper: its seed, its sequence and the dedupe draw.
pub struct Stamper {
    seed: u64,
    seq: u64,
    /// Chance of a repeated unit, out of 2^32 (0: never).
    dedupe: u64,
    rng: Rng,
}

impl Stamper {
    pub fn new(seed: u64, dedupe_pct: u8) -> Stamper {
        Stamper {
            seed,
            seq: 0,
            dedupe: (u64::from(dedupe_pct.min(100)) << 32) / 100,
            rng: Rng::new(seed ^ 0x5EED_DED0_0000_0001),
        }
    }

    /// Stamps every unit of `block`, about to be written at `offset`.
    #[inline]
    pub fn stamp(&mut self, block: &mut [u8], offset: u64) {
        let unit = UNIT.min(block.len()).max(1);
        for (i, chunk) in block.chunks_mut(unit).enumerate() {
            let repeat = self.dedupe > 0 && (self.rng.next_u64() >> 32) < self.dedupe;
            let header: [u64; 4] = if repeat {
                // A constant for this position: every repeated unit here is the same.
                [u64::MAX, u64::MAX, self.seed, i as u64]
            } else {
                [offset + (i * unit) as u64, self.seq, self.seed, i as u64]
            };
            let n = chunk.len().min(STAMP);
            let mut bytes = [0u8; STAMP];
            for (k, v) in header.iter().enumerate() {
                bytes[k * 8..k * 8 + 8].copy_from_slice(&v.to_le_bytes());
            }
            chunk[..n].copy_from_slice(&bytes[..n]);
        }
        self.seq += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn stamped_units_are_unique_across_offsets_and_rewrites() {
        let mut buf = vec![0u8; 64 * 1024];
        fill(&mut buf, 7, 0);
        let mut s = Stamper::new(7, 0);
        let mut seen = HashSet::new();
        // The same offsets twice (a second pass): still all distinct.
        for _ in 0..2 {
            for off in (0..32u64).map(|b| b * 65536) {
                s.stamp(&mut buf, off);
                for u in buf.chunks(UNIT) {
                    assert!(seen.insert(u.to_vec()), "a repeated unit");
                }
            }
        }
    }

    #[test]
    fn compressibility_follows_the_percentage() {
        for pct in [0u8, 25, 50, 90, 100] {
            let mut buf = vec![0u8; 1 << 20];
            fill(&mut buf, 3, pct);
            Stamper::new(3, 0).stamp(&mut buf, 0);
            let zeros = buf.iter().filter(|&&b| b == 0).count() as f64 / buf.len() as f64;
            let want = f64::from(pct) / 100.0;
            assert!(
                (zeros - want).abs() < 0.02,
                "--buffer-compress {pct}: {zeros:.3} zeros"
            );
        }
    }

    #[test]
    fn dedupe_repeats_about_the_share_asked() {
        let mut buf = vec![0u8; UNIT];
        fill(&mut buf, 9, 0);
        let mut s = Stamper::new(9, 50);
        let mut seen = HashSet::new();
        let n = 20_000u64;
        for b in 0..n {
            s.stamp(&mut buf, b * UNIT as u64);
            seen.insert(buf.clone());
        }
        let repeated = n - seen.len() as u64 + 1;
        assert!(
            (9_000..11_000).contains(&repeated),
            "{repeated} of {n} repeated"
        );
    }

    #[test]
    fn tiny_blocks_take_a_partial_stamp() {
        let mut buf = vec![0u8; 16];
        fill(&mut buf, 1, 0);
        Stamper::new(1, 0).stamp(&mut buf, 4096);
        assert_eq!(&buf[..8], &4096u64.to_le_bytes());
    }
}
