//! What written blocks hold. A device that deduplicates or compresses
//! (VDO, ZFS, zram, thin pools, SSD controllers, arrays that compare 512-byte
//! sectors) is flattered by data it has seen before, so every 512-byte
//! sector a worker writes is unique and the data is incompressible, at the
//! cost of one pass of XOR over the block (vector instructions, memory the
//! CPU is about to hand to the device anyway; no allocation):
//!
//! - each write buffer is filled once with pseudo-random data (reproducible
//!   from the seed): the unit's *base*;
//! - before each write, every 4 KiB unit of the request (the unit a
//!   deduplicating device compares) gets a header, and the rest of its random
//!   bytes are its base XOR a 64-bit *key* drawn for this unit of this write
//!   (repeated over the unit's words). A key is never drawn twice by a worker
//!   (a bijective mix of a counter), so the same sector of two writes differs
//!   in every word, and no compressor finds a match between them (zstd with
//!   `--long`, lz4), however long its window. The key in force is kept in the
//!   header: the next write XORs the unit with (old key ^ new key), one pass.
//!
//! | bytes  | field |
//! |--------|-------|
//! | 0..8   | the target offset of this unit |
//! | 8..16  | the worker's write sequence number (0, 1, 2, ...) |
//! | 16..24 | the worker's seed |
//! | 24..32 | the unit's index in the request |
//! | 32..40 | the unit's key (its random bytes after the header are the base XOR this) |
//!
//! Two knobs, as fio's:
//!
//! - `--buffer-compress PCT`: each unit holds random bytes for its first
//!   (100 - PCT)% and zeros after, so a compressor saves about PCT% of it
//!   (the header is never compressible: at 100 a unit is 40 bytes of header
//!   and zeros).
//! - `--dedupe PCT`: each unit is, with probability PCT%, a repeat: its
//!   header is a constant for its position in the request and its key is 0
//!   (its bytes are the base), so it equals every other repeated unit at that
//!   position (with `--bs 4k`, every repeated block is the same block).
//!
//! With `--dedupe-working-set PCT` (fio's dedupe_mode=working_set) the
//! repeats copy the worker's first unique units instead: its first W units
//! written (W = PCT% of its region, in 4 KiB units) are the set's members,
//! each a header and key that name only the member, and a repeat is a
//! member drawn at random among those already written, byte for byte
//! ([`WorkingSet`]). Every unit of a buffer then starts from one base
//! ([`fill_uniform`]) so that a member is the same wherever in a request it
//! lands. With `--dedupe-global` the members are numbered over all the
//! workers, whose buffers share one base, and a repeat may copy any
//! worker's member.
//!
//! `--verify` writes its own self-describing blocks (see [`crate::analysis::verify`])
//! and takes neither knob.

use crate::base::io::Rng;

/// Bytes of header at the start of each unit.
pub const STAMP: usize = 40;
/// The unit that is stamped: the block a deduplicating device compares.
pub const UNIT: usize = 4096;
/// Where the unit's key lies in its header.
const KEY_AT: usize = 32;

/// How many leading bytes of a unit of `len` bytes are random at
/// `compress_pct` (the rest are zeros): never fewer than the stamp.
pub fn random_len(len: usize, compress_pct: u8) -> usize {
    let keep = len * (100 - usize::from(compress_pct.min(100))) / 100;
    keep.max(STAMP).min(len)
}

/// Fills a write buffer once, before the run: per unit, random bytes then
/// zeros as `compress_pct` asks; the random bytes are the unit's base (its
/// key is 0).
pub fn fill(buf: &mut [u8], seed: u64, compress_pct: u8) {
    let mut rng = Rng::new(seed);
    let unit = UNIT.min(buf.len()).max(1);
    for chunk in buf.chunks_mut(unit) {
        let r = random_len(chunk.len(), compress_pct);
        rng.fill(&mut chunk[..r]);
        chunk[r..].fill(0);
        if chunk.len() >= STAMP {
            chunk[KEY_AT..STAMP].fill(0);
        }
    }
}

/// Fills a write buffer as [`fill`] does, but with one base for every
/// unit (the first unit's random bytes, repeated): a working set's member
/// is then the same bytes at any position of any request.
pub fn fill_uniform(buf: &mut [u8], seed: u64, compress_pct: u8) {
    let unit = UNIT.min(buf.len()).max(1);
    let (first, rest) = buf.split_at_mut(unit);
    fill(first, seed, compress_pct);
    for chunk in rest.chunks_mut(unit) {
        let n = chunk.len();
        chunk.copy_from_slice(&first[..n]);
    }
}

/// A worker's share of a dedupe working set (fio's dedupe_mode=working_set):
/// its members are numbered `first..first + members`, out of `total` over
/// the workers that share them (`total == members` unless global); `seed`
/// names the set (one for all the workers when global).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkingSet {
    pub first: u64,
    pub members: u64,
    pub total: u64,
    pub global: bool,
    pub seed: u64,
}

/// A bijection of u64 (MurmurHash3's finaliser): distinct counters give
/// distinct keys that look random.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// XORs `bytes` with `key` repeated over its 8-byte words (the last partial
/// word with the key's first bytes). The loop compiles to vector XORs.
#[inline]
fn xor_words(bytes: &mut [u8], key: u64) {
    let k = key.to_ne_bytes();
    let mut words = bytes.chunks_exact_mut(8);
    for w in &mut words {
        if let Ok(a) = <[u8; 8]>::try_from(&*w) {
            w.copy_from_slice(&(u64::from_ne_bytes(a) ^ key).to_ne_bytes());
        }
    }
    for (b, k) in words.into_remainder().iter_mut().zip(k) {
        *b ^= k;
    }
}

/// One worker's stamper: its seed, its sequence, its key counter and the
/// dedupe draw.
pub struct Stamper {
    seed: u64,
    seq: u64,
    /// Keys are `mix(key_base + n)` for the n-th unit stamped: never repeated.
    key_base: u64,
    keys: u64,
    /// How many leading bytes of a unit are random (`--buffer-compress`).
    compress_pct: u8,
    /// Chance of a repeated unit, out of 2^32 (0: never).
    dedupe: u64,
    rng: Rng,
    /// fio's working set: what repeats copy, and how many of this
    /// worker's members it has written so far.
    set: Option<WorkingSet>,
    members_written: u64,
}

impl Stamper {
    /// A worker's stamper for buffers [`fill`]ed at `compress_pct`.
    pub fn new(seed: u64, dedupe_pct: u8, compress_pct: u8) -> Stamper {
        Stamper {
            seed,
            seq: 0,
            key_base: mix(seed ^ 0x6B65_7973_0000_0001),
            keys: 0,
            compress_pct,
            dedupe: (u64::from(dedupe_pct.min(100)) << 32) / 100,
            rng: Rng::new(seed ^ 0x5EED_DED0_0000_0001),
            set: None,
            members_written: 0,
        }
    }

    /// Repeats copy members of `set` (buffers [`fill_uniform`]ed).
    pub fn with_working_set(mut self, set: Option<WorkingSet>) -> Stamper {
        self.set = set.filter(|s| s.members > 0 && s.total > 0);
        self
    }

    /// The header and key of the unit at `i` of a request at `offset`:
    /// a repeat, a member of the working set, or a unique unit.
    #[inline]
    fn unit_id(&mut self, offset: u64, i: usize, unit: usize) -> ([u64; 4], u64) {
        let repeat = self.dedupe > 0 && (self.rng.next_u64() >> 32) < self.dedupe;
        if let Some(s) = self.set {
            // A member is its number alone: the same bytes wherever,
            // by whichever worker, it is written.
            let member = |g: u64| {
                (
                    [u64::MAX, u64::MAX - 1, s.seed, g],
                    mix(s.seed ^ 0x5345_5400_0000_0000 ^ g),
                )
            };
            let written = self.members_written;
            if repeat && (s.global || written > 0) {
                // fio draws among the set's buffers: here among the members
                // this worker has written (or any worker's, when global).
                let g = if s.global {
                    self.rng.below(s.total)
                } else {
                    s.first + self.rng.below(written)
                };
                return member(g);
            }
            if written < s.members {
                self.members_written += 1;
                return member(s.first + written);
            }
        } else if repeat {
            // A constant for this position: every repeated unit here is the same.
            return ([u64::MAX, u64::MAX, self.seed, i as u64], 0);
        }
        self.keys += 1;
        (
            [offset + (i * unit) as u64, self.seq, self.seed, i as u64],
            mix(self.key_base.wrapping_add(self.keys)),
        )
    }

    /// Stamps every unit of `block`, about to be written at `offset`, and
    /// gives its random bytes a key of their own.
    #[inline]
    pub fn stamp(&mut self, block: &mut [u8], offset: u64) {
        let unit = UNIT.min(block.len()).max(1);
        for (i, chunk) in block.chunks_mut(unit).enumerate() {
            let (header, key) = self.unit_id(offset, i, unit);
            let mut bytes = [0u8; STAMP];
            for (k, v) in header.iter().chain([&key]).enumerate() {
                bytes[k * 8..k * 8 + 8].copy_from_slice(&v.to_le_bytes());
            }
            if chunk.len() > STAMP {
                let mut old = [0u8; 8];
                old.copy_from_slice(&chunk[KEY_AT..STAMP]);
                let delta = u64::from_le_bytes(old) ^ key;
                let r = random_len(chunk.len(), self.compress_pct);
                xor_words(&mut chunk[STAMP..r], delta);
            }
            let n = chunk.len().min(STAMP);
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
    fn stamped_sectors_are_unique_across_offsets_rewrites_and_slots() {
        // Two slots' buffers, filled alike (as the engine fills them).
        let mut bufs = [vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]];
        for b in &mut bufs {
            fill(b, 7, 0);
        }
        let mut s = Stamper::new(7, 0, 0);
        let mut seen = HashSet::new();
        // The same offsets twice (a second pass): still all distinct.
        for _ in 0..2 {
            for off in (0..32u64).map(|b| b * 65536) {
                let b = &mut bufs[(off / 65536) as usize % 2];
                s.stamp(b, off);
                for sector in b.chunks(512) {
                    assert!(seen.insert(sector.to_vec()), "a repeated sector");
                }
            }
        }
    }

    #[test]
    fn a_rewrite_changes_every_word_of_the_unit() {
        let mut buf = vec![0u8; UNIT];
        fill(&mut buf, 5, 0);
        let mut s = Stamper::new(5, 0, 0);
        s.stamp(&mut buf, 0);
        let first = buf.clone();
        s.stamp(&mut buf, 0);
        for (i, (a, b)) in first.chunks(8).zip(buf.chunks(8)).enumerate().skip(4) {
            assert_ne!(a, b, "word {i} unchanged by the rewrite");
        }
    }

    #[test]
    fn compressibility_follows_the_percentage() {
        for pct in [0u8, 25, 50, 90, 100] {
            let mut buf = vec![0u8; 1 << 20];
            fill(&mut buf, 3, pct);
            Stamper::new(3, 0, pct).stamp(&mut buf, 0);
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
        let mut s = Stamper::new(9, 50, 0);
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

    /// A working set of `members` for one worker (not global).
    fn own_set(members: u64, seed: u64) -> Option<WorkingSet> {
        Some(WorkingSet {
            first: 0,
            members,
            total: members,
            global: false,
            seed,
        })
    }

    #[test]
    fn working_set_repeats_copy_members_already_written_byte_for_byte() {
        // fio's dedupe_mode=working_set: 16 KiB requests, 50% repeats, a
        // set of 200 units. Every repeat equals a member written before
        // it, wherever in its request either landed.
        let mut buf = vec![0u8; 4 * UNIT];
        fill_uniform(&mut buf, 4, 0);
        let mut s = Stamper::new(4, 50, 0).with_working_set(own_set(200, 77));
        let mut first_seen = std::collections::HashMap::new();
        let (mut units, mut copies) = (0u64, 0u64);
        for b in 0..5_000u64 {
            s.stamp(&mut buf, b * 4 * UNIT as u64);
            for unit in buf.chunks(UNIT) {
                units += 1;
                if first_seen.insert(unit.to_vec(), units).is_some() {
                    copies += 1;
                    // A copy is a member: its header names the set.
                    assert_eq!(&unit[8..16], &(u64::MAX - 1).to_le_bytes());
                }
            }
        }
        let members = first_seen
            .keys()
            .filter(|u| u[8..16] == (u64::MAX - 1).to_le_bytes())
            .count();
        assert_eq!(members, 200, "the set's members, each written");
        // The repeats drawn (about half), less the few drawn before the
        // first member was written.
        let share = copies as f64 / units as f64;
        assert!(
            (0.47..0.53).contains(&share),
            "{copies} of {units} repeated"
        );
    }

    #[test]
    fn a_global_working_set_is_the_same_bytes_from_every_worker() {
        // Two workers sharing a set of 2 x 50 members, their buffers from
        // one base (fio's dedupe_global): worker B's copies include A's
        // members, equal to what A wrote.
        let set = |first| WorkingSet {
            first,
            members: 50,
            total: 100,
            global: true,
            seed: 5,
        };
        let written = |worker_seed: u64, first: u64| {
            let mut buf = vec![0u8; UNIT];
            fill_uniform(&mut buf, 5, 0);
            let mut s = Stamper::new(worker_seed, 50, 0).with_working_set(Some(set(first)));
            let mut out = HashSet::new();
            for b in 0..2_000u64 {
                s.stamp(&mut buf, b * UNIT as u64);
                out.insert(buf.clone());
            }
            out
        };
        let (a, b) = (written(1, 0), written(2, 50));
        let shared = a.intersection(&b).count();
        // All 100 members turn up in both (each worker draws ~1000
        // repeats over 100 members), and nothing else is shared.
        assert_eq!(shared, 100, "{shared} units common to both workers");
    }

    #[test]
    fn tiny_blocks_take_a_partial_stamp() {
        let mut buf = vec![0u8; 16];
        fill(&mut buf, 1, 0);
        Stamper::new(1, 0, 0).stamp(&mut buf, 4096);
        assert_eq!(&buf[..8], &4096u64.to_le_bytes());
    }
}
