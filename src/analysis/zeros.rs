//! Reads that never reached a medium. A device answers a read of a block
//! it holds no data for (never written, trimmed, a thin volume's
//! unprovisioned block, a loop device's hole, a never-written zram page)
//! with zeros from memory, at memory speed: a figure no medium gave. Every
//! worker checks a sample of the reads it completed in the window for
//! "every byte zero" ([`all_zero`]), one read in [`SAMPLE_EVERY`]; a run
//! whose sampled reads are mostly zeros ([`mostly_zeros`]) says so beside
//! its figure.
//!
//! A block this run wrote never reads back as all zeros: every 4 KiB unit
//! of a written block carries a header with a key drawn from a bijection of
//! a counter that is never 0 (`crate::engine::writedata`), or, with
//! `--verify`, the block's magic; so a zero read is never one of this
//! run's own writes, and needs no map of what the run wrote.
//!
//! The sample cannot tell zeros that a medium holds (a disk written with
//! zeros, which it reads) from zeros no medium held; where a layer check
//! knows the layer under the target (a loop device's backing file, zram),
//! that check is authoritative, and the sample only says what it saw.

/// One read in this many (of each worker's reads completed in the window,
/// the first included) is checked for all zeros. A real block's first
/// bytes are almost never zero, so the check of one stops at once; only
/// a zero block is read to its end, once in 64 I/Os.
pub const SAMPLE_EVERY: u64 = 64;

/// Fewer sampled reads than this never make a verdict: too few to say
/// "most".
pub const MIN_SAMPLES: u64 = 16;

/// The share of sampled reads that came back all zeros at which the run's
/// figure is called not the device's: half or more.
pub const MOSTLY: f64 = 0.5;

/// A page of zeros, what [`all_zero`] compares with.
static ZEROS: [u8; 4096] = [0; 4096];

/// Whether every byte of `buf` is zero: a page at a time against a page
/// of zeros (slice equality is `memcmp`, the C library's vector compare,
/// in a debug build too), stopping at the first page that differs.
#[inline]
pub fn all_zero(buf: &[u8]) -> bool {
    buf.chunks(ZEROS.len()).all(|c| c == &ZEROS[..c.len()])
}

/// The share of `sampled` reads that were all zeros, when it is [`MOSTLY`]
/// or more of at least [`MIN_SAMPLES`]; `None` otherwise.
pub fn mostly_zeros(sampled: u64, zeros: u64) -> Option<f64> {
    if sampled < MIN_SAMPLES {
        return None;
    }
    let share = zeros.min(sampled) as f64 / sampled as f64;
    (share >= MOSTLY).then_some(share)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_set_bit_anywhere_makes_a_block_not_zero() {
        // Lengths with and without a remainder past the 64-byte blocks.
        for len in [0usize, 1, 63, 64, 65, 4096, 4096 + 17] {
            let mut b = vec![0u8; len];
            assert!(all_zero(&b), "len {len}");
            for at in [0, len / 2, len.saturating_sub(1)] {
                if len == 0 {
                    continue;
                }
                b[at] = 0x10;
                assert!(!all_zero(&b), "len {len}, bit at {at}");
                b[at] = 0;
            }
        }
    }

    #[test]
    fn half_or_more_of_enough_samples_is_mostly_zeros() {
        assert_eq!(mostly_zeros(MIN_SAMPLES - 1, MIN_SAMPLES - 1), None);
        assert_eq!(mostly_zeros(100, 49), None);
        assert_eq!(mostly_zeros(100, 50), Some(0.5));
        assert_eq!(mostly_zeros(100, 83), Some(0.83));
        assert_eq!(mostly_zeros(0, 0), None);
    }

    /// What makes "a region this run wrote is not counted" hold without a
    /// map of the writes: no block the run writes is all zeros, even at
    /// the settings that put the most zeros in it (every byte after the
    /// header compressible, every unit a repeat, seed 0, offset 0).
    #[test]
    fn no_block_this_run_writes_reads_back_as_all_zeros() {
        use crate::engine::writedata::{fill, Stamper};
        for (compress, dedupe) in [(0u8, 0u8), (100, 0), (100, 100), (0, 100)] {
            let mut buf = vec![0u8; 64 << 10];
            fill(&mut buf, 0, compress);
            let mut s = Stamper::new(0, dedupe, compress);
            for offset in [0u64, 4096, 1 << 20] {
                s.stamp(&mut buf, offset);
                for unit in buf.chunks(4096) {
                    assert!(
                        !all_zero(unit),
                        "compress {compress} dedupe {dedupe} offset {offset}: a zero unit"
                    );
                }
            }
        }
    }
}
