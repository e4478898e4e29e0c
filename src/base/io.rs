//! What an I/O is, for every layer: a byte range of a target, a direction,
//! and the seeded generator that offsets, fill data and seeds come from.

use std::fmt;

/// A byte range of a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Region {
    pub offset: u64,
    pub length: u64,
}

impl Region {
    pub fn end(&self) -> u64 {
        self.offset + self.length
    }
}

/// Splits `region` into `jobs` disjoint slices whose starts and lengths are
/// multiples of `unit` (the request size), so that sequential streams never
/// read the same blocks. Returns `None` when a slice would be smaller than one
/// unit.
pub fn split_region(region: Region, jobs: usize, unit: u64) -> Option<Vec<Region>> {
    if jobs == 0 || unit == 0 {
        return None;
    }
    let units_total = region.length / unit;
    let per_job = units_total / jobs as u64;
    if per_job == 0 {
        return None;
    }
    Some(
        (0..jobs as u64)
            .map(|j| Region {
                offset: region.offset + j * per_job * unit,
                length: per_job * unit,
            })
            .collect(),
    )
}

/// SplitMix64: one step. Used to derive independent seeds and to seed the RNG.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256+-style fast generator (xoshiro256**): a few cycles per number,
/// good enough for offsets and fill data, reproducible from a seed.
#[derive(Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut s = [0u64; 4];
        for w in &mut s {
            x = splitmix64(x);
            *w = x;
        }
        Rng { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A number in `0..n` (Lemire's multiply-shift; bias below 2^-64 * n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Fills a buffer with pseudo-random bytes (incompressible data, so that
    /// compressing devices such as zram are not flattered).
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for c in &mut chunks {
            c.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        let last = self.next_u64().to_le_bytes();
        rest.copy_from_slice(&last[..rest.len()]);
    }
}

/// The direction of one I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    /// fio's trim: the range is discarded (a block device) or punched out
    /// (a file); it moves no data, and destroys what was there.
    Trim,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
        })
    }
}

/// The symbolic name of an errno (`EIO`); `EOF` for 0.
pub fn errno_name(errno: i32) -> String {
    if errno == 0 {
        "EOF".into()
    } else {
        format!("{:?}", nix::errno::Errno::from_raw(errno))
    }
}
