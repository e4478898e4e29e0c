//! Workload: which bytes each worker touches. Splits a target's region into
//! disjoint per-worker slices, and generates each worker's offsets
//! (sequential, or random with a fixed, reported seed: uniformly, or in
//! one of fio's access distributions), with fio's offset modifiers
//! (`rw=read:512k` holes, `rw=read:-8k` backwards, `rw=randread:8` runs).

mod dist;

pub use crate::base::io::{split_region, splitmix64, Op, Region, Rng};
pub use dist::{Dist, Zone};

/// How a worker's offsets depart from plain sequential or uniform random:
/// fio's `random_distribution=` and the modifiers on its `rw=`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Access {
    /// Random patterns: which blocks are hot.
    pub dist: Dist,
    /// Bytes added after each sequential I/O (fio's `rw=read:512k`):
    /// positive leaves holes, negative goes back (`rw=read:-8k`).
    pub skip: i64,
    /// Random patterns: a new random offset every `seq_run` I/Os, the
    /// others following on from the last (fio's `rw=randread:8`); 0 or 1
    /// = every I/O random.
    pub seq_run: u64,
}

impl Access {
    /// Whether every I/O is the plain draw (the fast path).
    pub fn is_plain(&self) -> bool {
        self.dist.is_uniform() && self.skip == 0 && self.seq_run <= 1
    }

    /// The bytes one pass over a region of `len` bytes moves with
    /// requests of `bs`: every whole block once, or, with holes
    /// (sequential, `skip` > 0), the requests that fit before the end,
    /// where fio's pass ends (its t0007: 85 of 1m in 128m with 512k holes).
    pub fn pass_bytes(&self, len: u64, bs: u64, random: bool) -> u64 {
        let whole = len / bs * bs;
        if random || self.skip <= 0 || whole < bs {
            return whole;
        }
        ((whole - bs) / (bs + self.skip as u64) + 1) * bs
    }
}

/// Generates one worker's sequence of (operation, offset).
pub struct OffsetGen {
    base: u64,
    bs: u64,
    blocks: u64,
    random: bool,
    /// Sequential: the next block to read, and the next to write. A
    /// sequential mix (fio's rw=readwrite) goes through the region in
    /// order in each direction apart, each from the region's start, as
    /// fio keeps a position per direction.
    next_block: u64,
    next_write: u64,
    /// Completed passes over the region (sequential: by either
    /// direction), and the pass of the offset returned last.
    pass: u64,
    last_pass: u64,
    /// Read share in percent: 100 = reads only, 0 = writes only.
    read_pct: u8,
    rng: Rng,
    /// `Access` other than plain: the shaped path, one branch away.
    shape: Option<Shape>,
}

/// The shaped path's own state (`OffsetGen::with_access`).
struct Shape {
    /// Random patterns: the distribution's draw (`None`: uniform).
    draw: Option<dist::Draw>,
    skip: i64,
    seq_run: u64,
    /// I/Os left before the next random offset (`seq_run`).
    seq_left: u64,
    /// The next byte offset in the region to read, and to write: one
    /// position per direction, as the plain path's blocks.
    read_at: u64,
    write_at: u64,
}

impl OffsetGen {
    /// `region` must hold at least one block of `bs` bytes.
    pub fn new(region: Region, bs: u64, random: bool, read_pct: u8, seed: u64) -> OffsetGen {
        OffsetGen {
            base: region.offset,
            bs,
            blocks: (region.length / bs).max(1),
            random,
            next_block: 0,
            next_write: 0,
            pass: 0,
            last_pass: 0,
            read_pct,
            rng: Rng::new(seed),
            shape: None,
        }
    }

    /// The same generator with fio's distribution and offset modifiers.
    /// A `zoned_abs` span past the region is refused before (the plan).
    pub fn with_access(mut self, access: &Access) -> OffsetGen {
        if access.is_plain() {
            return self;
        }
        let draw = if self.random {
            dist::Draw::new(&access.dist, self.blocks, self.bs, &mut self.rng)
        } else {
            None
        };
        self.shape = Some(Shape {
            draw,
            skip: access.skip,
            seq_run: access.seq_run.max(1),
            // fio draws the first offset, then every seq_run-th.
            seq_left: 1,
            read_at: 0,
            write_at: 0,
        });
        self
    }

    /// The pass over the region of the offset `next_io` returned last (0 for random).
    pub fn last_pass(&self) -> u64 {
        self.last_pass
    }

    #[inline]
    pub fn next_io(&mut self) -> (Op, u64) {
        if self.shape.is_some() {
            return self.next_shaped();
        }
        if self.random {
            // The block first, then the direction: the order a seed has
            // always drawn them in.
            let block = self.rng.below(self.blocks);
            let op = self.op();
            return (op, self.base + block * self.bs);
        }
        let op = self.op();
        let next = match op {
            Op::Read => &mut self.next_block,
            Op::Write => &mut self.next_write,
        };
        let b = *next;
        self.last_pass = self.pass;
        *next += 1;
        if *next == self.blocks {
            *next = 0;
            self.pass += 1;
        }
        (op, self.base + b * self.bs)
    }

    /// fio's order for a shaped I/O: the direction, then its offset.
    /// Random: every `seq_run`-th offset drawn (from the distribution),
    /// starting with the first, the others following on from the last in
    /// that direction, as fio's ddir_seq_nr does; one that would pass the
    /// end is drawn instead, as fio falls back to a random block.
    /// Sequential: after each I/O, `skip` more bytes; past the end, the
    /// pass wraps (forward to the start, backward to the end less the
    /// skip, as fio's get_next_seq_offset).
    fn next_shaped(&mut self) -> (Op, u64) {
        let op = self.op();
        let (bs, len) = (self.bs, self.blocks * self.bs);
        let Some(sh) = self.shape.as_mut() else {
            unreachable!("next_shaped without a shape")
        };
        let pos = match op {
            Op::Read => &mut sh.read_at,
            Op::Write => &mut sh.write_at,
        };
        let at = *pos;
        if self.random {
            sh.seq_left -= 1;
            let at = if sh.seq_left == 0 || at + bs > len {
                if sh.seq_left == 0 {
                    sh.seq_left = sh.seq_run;
                }
                let b = match &sh.draw {
                    Some(d) => d.block(&mut self.rng, self.blocks),
                    None => self.rng.below(self.blocks),
                };
                b * bs
            } else {
                at
            };
            *pos = at + bs;
            return (op, self.base + at);
        }
        self.last_pass = self.pass;
        let mut next = at as i64 + bs as i64 + sh.skip;
        if next < 0 {
            next = len as i64 + sh.skip;
            if next < 0 || next as u64 + bs > len {
                next = 0;
            }
            self.pass += 1;
        } else if next as u64 + bs > len {
            next = 0;
            self.pass += 1;
        }
        *pos = next as u64;
        (op, self.base + at)
    }

    /// The next I/O's direction: the read share drawn, when there is one.
    #[inline]
    fn op(&mut self) -> Op {
        match self.read_pct {
            100 => Op::Read,
            0 => Op::Write,
            p => {
                if self.rng.below(100) < u64::from(p) {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Issue 41: fio's rw=readwrite keeps a position per direction: reads
    // and writes each go through the region in order from its start.
    #[test]
    fn a_sequential_mix_goes_through_the_region_in_order_in_each_direction() {
        let r = Region {
            offset: 8192,
            length: 10 * 4096,
        };
        let mut g = OffsetGen::new(r, 4096, false, 70, 42);
        let (mut reads, mut writes) = (Vec::new(), Vec::new());
        for _ in 0..1000 {
            match g.next_io() {
                (Op::Read, o) => reads.push(o),
                (Op::Write, o) => writes.push(o),
            }
        }
        let in_order = |v: &[u64]| {
            v.iter()
                .enumerate()
                .all(|(i, &o)| o == 8192 + (i as u64 % 10) * 4096)
        };
        assert!(in_order(&reads) && in_order(&writes));
        // About the share asked, and each wrap is a pass.
        assert!((650..750).contains(&reads.len()), "{}", reads.len());
        assert_eq!(g.pass, (reads.len() / 10 + writes.len() / 10) as u64);
    }

    #[test]
    fn regions_are_disjoint_aligned_and_inside() {
        let r = Region {
            offset: 4096,
            length: 10 * 65536 + 123,
        };
        let parts = split_region(r, 3, 65536).unwrap();
        assert_eq!(parts.len(), 3);
        for (i, p) in parts.iter().enumerate() {
            assert_eq!(p.length % 65536, 0);
            assert_eq!((p.offset - r.offset) % 65536, 0);
            assert!(p.end() <= r.end());
            if i > 0 {
                assert!(parts[i - 1].end() <= p.offset, "overlap");
            }
        }
        assert_eq!(parts[0].length, 3 * 65536);
    }

    #[test]
    fn too_small_regions_are_refused() {
        let r = Region {
            offset: 0,
            length: 65536,
        };
        assert!(split_region(r, 2, 65536).is_none());
        assert!(split_region(r, 1, 65536).is_some());
        assert!(split_region(r, 0, 4096).is_none());
    }

    #[test]
    fn sequential_offsets_wrap_within_region() {
        let r = Region {
            offset: 8192,
            length: 3 * 4096 + 100,
        };
        let mut g = OffsetGen::new(r, 4096, false, 100, 1);
        let offs: Vec<u64> = (0..5).map(|_| g.next_io().1).collect();
        assert_eq!(offs, vec![8192, 12288, 16384, 8192, 12288]);
        assert_eq!(g.last_pass(), 1);
    }

    #[test]
    fn random_offsets_are_aligned_inside_and_reproducible() {
        let r = Region {
            offset: 1 << 20,
            length: 1 << 30,
        };
        let mut a = OffsetGen::new(r, 4096, true, 100, 42);
        let mut b = OffsetGen::new(r, 4096, true, 100, 42);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let (op, off) = a.next_io();
            assert_eq!(op, Op::Read);
            assert_eq!(b.next_io().1, off);
            assert_eq!(off % 4096, 0);
            assert!(off >= r.offset && off + 4096 <= r.end());
            seen.insert(off);
        }
        assert!(seen.len() > 9000, "random offsets should rarely repeat");
    }

    #[test]
    fn mix_gives_the_read_share() {
        let r = Region {
            offset: 0,
            length: 1 << 30,
        };
        let mut g = OffsetGen::new(r, 4096, true, 70, 9);
        let reads = (0..100_000).filter(|_| g.next_io().0 == Op::Read).count();
        assert!((68_000..72_000).contains(&reads), "{reads}");
        let mut w = OffsetGen::new(r, 4096, true, 0, 9);
        assert!((0..1000).all(|_| w.next_io().0 == Op::Write));
    }

    #[test]
    fn fill_covers_odd_lengths() {
        let mut rng = Rng::new(3);
        let mut buf = vec![0u8; 13];
        rng.fill(&mut buf);
        assert!(buf.iter().filter(|&&b| b != 0).count() > 8);
    }
}

/// RAID0 geometry for `--stripe`: a logical volume made of `members` equal
/// members, `chunk` bytes at a time, round-robin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StripeMap {
    pub chunk: u64,
    pub members: u64,
}

impl StripeMap {
    /// Logical offset → (member, offset on that member).
    #[inline]
    pub fn map(&self, logical: u64) -> (u64, u64) {
        let stripe_unit = logical / self.chunk;
        (
            stripe_unit % self.members,
            (stripe_unit / self.members) * self.chunk + logical % self.chunk,
        )
    }
}

/// One member's share of a striped logical stream: draws logical requests of
/// `bs` bytes (sequential or random, as `OffsetGen` does over the logical
/// volume), splits each into pieces that do not cross a chunk, and yields the
/// pieces that land on `member`, as offsets on that member.
pub struct StripeGen {
    logical: OffsetGen,
    map: StripeMap,
    member: u64,
    bs: u64,
    piece: u64,
    pending: std::collections::VecDeque<u64>,
    op: Op,
    /// Where the member's region starts.
    base: u64,
}

impl StripeGen {
    /// `logical` must cover the whole logical region with requests of `bs`
    /// bytes; `bs` and `chunk` must divide one another.
    pub fn new(logical: OffsetGen, map: StripeMap, member: u64, bs: u64, base: u64) -> StripeGen {
        let piece = bs.min(map.chunk);
        StripeGen {
            logical,
            map,
            member,
            bs,
            piece,
            pending: std::collections::VecDeque::with_capacity((bs / piece) as usize),
            op: Op::Read,
            base,
        }
    }

    /// Size of every piece: min(bs, chunk).
    pub fn piece(&self) -> u64 {
        self.piece
    }

    pub fn last_pass(&self) -> u64 {
        self.logical.last_pass()
    }

    #[inline]
    pub fn next_io(&mut self) -> (Op, u64) {
        loop {
            if let Some(off) = self.pending.pop_front() {
                return (self.op, off);
            }
            let (op, logical) = self.logical.next_io();
            self.op = op;
            let mut l = logical;
            while l < logical + self.bs {
                let (m, off) = self.map.map(l);
                if m == self.member {
                    self.pending.push_back(self.base + off);
                }
                l += self.piece;
            }
        }
    }
}

/// Where a worker's offsets come from.
pub enum Offsets {
    Plain(OffsetGen),
    Striped(StripeGen),
    /// `--iolog-read`: a log's I/Os in order, from its start again after
    /// its end (a pass is the whole log).
    Replay(Replayer),
}

/// A replayed log's I/Os, in order.
pub struct Replayer {
    log: std::sync::Arc<crate::measure::iolog::Replay>,
    at: u64,
}

impl Replayer {
    pub fn new(log: std::sync::Arc<crate::measure::iolog::Replay>) -> Replayer {
        Replayer { log, at: 0 }
    }

    #[inline]
    fn next_io(&mut self) -> (Op, u64) {
        let n = self.log.ios.len() as u64;
        let io = self.log.ios[(self.at % n) as usize];
        self.at += 1;
        io
    }

    fn last_pass(&self) -> u64 {
        self.at.saturating_sub(1) / self.log.ios.len() as u64
    }
}

impl Offsets {
    #[inline]
    pub fn next_io(&mut self) -> (Op, u64) {
        match self {
            Offsets::Plain(g) => g.next_io(),
            Offsets::Striped(g) => g.next_io(),
            Offsets::Replay(g) => g.next_io(),
        }
    }

    pub fn last_pass(&self) -> u64 {
        match self {
            Offsets::Plain(g) => g.last_pass(),
            Offsets::Striped(g) => g.last_pass(),
            Offsets::Replay(g) => g.last_pass(),
        }
    }
}

#[cfg(test)]
mod stripe_tests {
    use super::*;

    #[test]
    fn logical_offsets_map_round_robin_by_chunk() {
        let m = StripeMap {
            chunk: 65536,
            members: 3,
        };
        assert_eq!(m.map(0), (0, 0));
        assert_eq!(m.map(65536), (1, 0));
        assert_eq!(m.map(2 * 65536 + 100), (2, 100));
        assert_eq!(m.map(3 * 65536), (0, 65536));
        assert_eq!(m.map(7 * 65536 + 4096), (1, 2 * 65536 + 4096));
    }

    #[test]
    fn members_share_a_sequential_stream_without_overlap_or_gap() {
        // 3 members of 1 MiB, chunk 64k, logical requests of 256k: every
        // member byte is covered exactly once per pass.
        let map = StripeMap {
            chunk: 65536,
            members: 3,
        };
        let logical = Region {
            offset: 0,
            length: 3 << 20,
        };
        for member in 0..3 {
            let g = OffsetGen::new(logical, 256 << 10, false, 100, 1);
            let mut s = StripeGen::new(g, map, member, 256 << 10, 0);
            assert_eq!(s.piece(), 65536);
            let mut seen: Vec<u64> = (0..16).map(|_| s.next_io().1).collect();
            seen.sort_unstable();
            assert_eq!(
                seen,
                (0..16).map(|i| i * 65536).collect::<Vec<_>>(),
                "member {member}"
            );
        }
    }

    #[test]
    fn small_requests_stay_inside_one_chunk() {
        let map = StripeMap {
            chunk: 65536,
            members: 2,
        };
        let g = OffsetGen::new(
            Region {
                offset: 0,
                length: 2 << 20,
            },
            4096,
            true,
            100,
            5,
        );
        let mut s = StripeGen::new(g, map, 1, 4096, 0);
        for _ in 0..1000 {
            let off = s.next_io().1;
            assert_eq!(off % 4096, 0);
            assert!(off < 1 << 20);
        }
    }
}

#[cfg(test)]
mod access_tests {
    use super::*;

    fn gen(blocks: u64, random: bool, access: Access) -> OffsetGen {
        let r = Region {
            offset: 0,
            length: blocks * 4096,
        };
        OffsetGen::new(r, 4096, random, 100, 5).with_access(&access)
    }

    fn blocks(g: &mut OffsetGen, n: usize) -> Vec<u64> {
        (0..n).map(|_| g.next_io().1 / 4096).collect()
    }

    // Issue 41: the offsets fio 3.33's write_iolog shows for `bs=4k
    // size=64k` with `rw=write:8k` (holes) and `rw=read:-8k` (fio's
    // backwards-read.fio): ours, exactly.
    #[test]
    fn holes_and_backward_reads_are_fio_s_offsets() {
        let holes = Access {
            skip: 8192,
            ..Access::default()
        };
        let mut g = gen(16, false, holes.clone());
        assert_eq!(blocks(&mut g, 7), [0, 3, 6, 9, 12, 15, 0]);
        // A pass is the 6 that fit: fio's size-bounded run does 6.
        assert_eq!(holes.pass_bytes(64 << 10, 4096, false), 6 * 4096);
        // fio's t0007: rw=read:512k, bs=1m, size=128m reads 87040 KiB.
        let t0007 = Access {
            skip: 512 << 10,
            ..Access::default()
        };
        assert_eq!(t0007.pass_bytes(128 << 20, 1 << 20, false) >> 10, 87040);
        let mut g = gen(
            16,
            false,
            Access {
                skip: -8192,
                ..Access::default()
            },
        );
        assert_eq!(
            blocks(&mut g, 17),
            [0, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 14]
        );
    }

    // fio's rw=randread:4 (write_iolog of fio 3.33 over 4 MiB): a random
    // offset first, then three following on, then another drawn: R S S S.
    #[test]
    fn a_seq_run_draws_every_nth_offset_and_follows_on_between() {
        let mut g = gen(
            1024,
            true,
            Access {
                seq_run: 4,
                ..Access::default()
            },
        );
        let b = blocks(&mut g, 4000);
        let mut drawn_apart = 0;
        for (i, w) in b.windows(2).enumerate() {
            if (i + 1) % 4 != 0 {
                // Follows on, unless it ran off the end (then drawn).
                assert!(w[1] == w[0] + 1 || w[0] == 1023, "{i}: {w:?}");
            } else if w[1] != w[0] + 1 {
                drawn_apart += 1;
            }
        }
        assert!(drawn_apart > 900, "{drawn_apart}");
        assert!(b.iter().all(|&x| x < 1024));
    }

    // The plain path is untouched by a plain Access: the same offsets.
    #[test]
    fn a_plain_access_leaves_the_offsets_as_they_were() {
        let r = Region {
            offset: 0,
            length: 1 << 30,
        };
        let mut a = OffsetGen::new(r, 4096, true, 70, 11);
        let mut b = OffsetGen::new(r, 4096, true, 70, 11).with_access(&Access::default());
        assert!((0..1000).all(|_| a.next_io() == b.next_io()));
    }
}
