//! Workload: which bytes each worker touches. Splits a target's region into
//! disjoint per-worker slices, and generates each worker's offsets
//! (sequential, or random with a fixed, reported seed: uniformly, or in
//! one of fio's access distributions), with fio's offset modifiers
//! (`rw=read:512k` holes, `rw=read:-8k` backwards, `rw=randread:8` runs)
//! and strided zones (fio's `zonemode=strided`).

mod dist;
mod sizes;
mod spr;

pub use crate::base::io::{split_region, splitmix64, Op, Region, Rng};
pub use dist::{Dist, Zone};
pub use sizes::{SizeShare, SizeTable, Sizes};
pub use spr::SprGen;

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
    /// Each I/O's size drawn from these (`--bssplit`); `None`: every I/O
    /// is `--bs`.
    pub sizes: Option<Sizes>,
    /// Sequential patterns: fio's strided zones (`--zones`).
    pub zones: Option<Strided>,
    /// `--sprandom`: SSD preconditioning, fio's SPRandom.
    pub spr: Option<SprAsk>,
    /// Random patterns: every block once a pass, in an order drawn per
    /// pass (`--random-map`: fio's random map, its random_generator=lfsr);
    /// only with a plain uniform pattern (checked before).
    pub random_map: bool,
}

/// `--sprandom`'s ask: the over-provisioning and the regions (the model
/// is made per worker from its region: `analysis::sprandom::model`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SprAsk {
    pub op: f64,
    pub regions: u32,
}

/// fio's `zonemode=strided` (io_u.c setup_strided_zone_mode): `size`
/// bytes of I/O in a zone of `range` bytes (going round it again when
/// `size` is larger), then the next zone starts `range` + `skip` bytes
/// after this one's start; a zone starting at or past the region's end
/// goes back to the first. How a disk's speed varies across its surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Strided {
    pub size: u64,
    pub range: u64,
    pub skip: u64,
}

impl Strided {
    /// The bytes a run bounded by a region of `len` bytes moves with
    /// requests of `bs`, as fio's does: every whole block's worth (fio's
    /// size=, going round the zones as often as that takes), unless a
    /// zone runs past the end, where fio's run ends at the last request
    /// that fits (fio 3.42, 10m in zones of 1m every 3.25m, 64k reads:
    /// 52 reads, the last 4 in the zone at 9.75m).
    pub fn pass_bytes(&self, len: u64, bs: u64) -> u64 {
        let whole = len / bs * bs;
        // Requests per visit, and per round of the zone's range: the
        // farthest a visit reaches is the lesser of the two.
        let per_visit = self.size.div_ceil(bs);
        let reach = per_visit.min(self.range.div_ceil(bs)) * bs;
        let step = self.range + self.skip;
        if len < reach {
            // The first zone is cut: its requests that fit.
            return (len / bs * bs).min(whole);
        }
        // The first zone whose visit runs past the end.
        let cut = (len - reach) / step + 1;
        let start = cut.saturating_mul(step);
        if start >= len {
            return whole;
        }
        let before = cut.saturating_mul(per_visit).saturating_mul(bs);
        before.saturating_add((len - start) / bs * bs).min(whole)
    }
}

impl Access {
    /// Whether every I/O is the plain draw (the fast path).
    pub fn is_plain(&self) -> bool {
        self.dist.is_uniform()
            && self.skip == 0
            && self.seq_run <= 1
            && self.sizes.is_none()
            && self.zones.is_none()
            && self.spr.is_none()
    }

    /// The bytes one pass over a region of `len` bytes moves with
    /// requests of `bs`: every whole block once, or, with holes
    /// (sequential, `skip` > 0), the requests that fit before the end,
    /// where fio's pass ends (its t0007: 85 of 1m in 128m with 512k holes).
    pub fn pass_bytes(&self, len: u64, bs: u64, random: bool) -> u64 {
        if let (Some(z), false) = (&self.zones, random) {
            return z.pass_bytes(len, bs);
        }
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
    /// Random: every block once per pass, in an order drawn per pass
    /// (fio's random map), rather than each I/O drawn on its own.
    cover: Option<Cover>,
    /// The size of the I/O `next_io` returned last, and its index in the
    /// split (`--bssplit`; else `bs` and 0, never changed).
    last_len: u64,
    last_size: u8,
    /// The worker's seed: the size draws' own generators start from it.
    seed: u64,
}

/// A random order that visits each of `blocks` blocks once per pass: a
/// Feistel network over the next even power of two at least `blocks`,
/// walked until it lands inside (at most a few steps: the power is
/// under 4 x `blocks`), keyed afresh each pass. A bijection needs no map
/// of the blocks done, so a pass over any region costs no memory.
struct Cover {
    blocks: u64,
    /// The index within the pass of the next block.
    next: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Cover {
    fn new(blocks: u64, rng: &mut Rng) -> Cover {
        let bits = (64 - blocks.saturating_sub(1).leading_zeros()).max(2);
        let mut c = Cover {
            blocks,
            next: 0,
            half_bits: bits.div_ceil(2),
            keys: [0; 4],
        };
        c.rekey(rng);
        c
    }

    fn rekey(&mut self, rng: &mut Rng) {
        for k in &mut self.keys {
            *k = rng.next_u64();
        }
    }

    fn feistel(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for k in self.keys {
            (l, r) = (r, l ^ (splitmix64(r ^ k) & mask));
        }
        (l << self.half_bits) | r
    }

    /// The block at index `i` of this pass.
    fn block(&self, i: u64) -> u64 {
        let mut x = self.feistel(i);
        while x >= self.blocks {
            x = self.feistel(x);
        }
        x
    }
}

/// The shaped path's own state (`OffsetGen::with_access`).
struct Shape {
    /// Random patterns: the distribution's draw (`None`: uniform).
    draw: Option<dist::Draw>,
    skip: i64,
    seq_run: u64,
    /// I/Os left before the next random offset (`seq_run`).
    seq_left: u64,
    /// `--bssplit`: each I/O's size drawn here; `bs` is then the
    /// alignment offsets keep (fio's blockalign).
    sizes: Option<SizeTable>,
    /// The size draws' generators, reads' and writes', apart from the
    /// offsets' and directions' and seeded alike (fio's bsrange_state,
    /// whose read and write seeds are one when it verifies): the k-th
    /// write of a run and the k-th read of a later run with the same
    /// seed are the same size, so a read replays a write's blocks, and a
    /// mix's read-back (reads only) replays the sizes the mix wrote.
    size_rngs: [Rng; 2],
    /// The next byte offset in the region to read, and to write: one
    /// position per direction, as the plain path's blocks.
    read_at: u64,
    write_at: u64,
    /// `--zones`: the zone's start in the region, and the bytes done in
    /// it this visit.
    zones: Option<(Strided, ZoneAt)>,
}

/// Where a strided walk is: its zone's start, and the bytes moved in it.
#[derive(Default)]
struct ZoneAt {
    start: u64,
    bytes: u64,
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
            cover: None,
            last_len: bs,
            last_size: 0,
            seed,
        }
    }

    /// Random: each block once per pass, in an order drawn per pass,
    /// counting passes as sequential does (fio's random map, which a
    /// verified random write needs: its read-back calls a block with no
    /// header between written ones lost). A plain random write, or a
    /// verified random mix (each block read or written once a pass).
    pub fn covering(mut self) -> OffsetGen {
        if self.random {
            self.cover = Some(Cover::new(self.blocks, &mut self.rng));
        }
        self
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
            sizes: (access.sizes.as_ref()).map(|s| SizeTable::new(s, self.blocks * self.bs)),
            size_rngs: [0, 1].map(|_| Rng::new(splitmix64(self.seed ^ 0x5349_5A45_5300_0001))),
            read_at: 0,
            write_at: 0,
            zones: access.zones.map(|z| (z, ZoneAt::default())),
        });
        self
    }

    /// The pass over the region of the offset `next_io` returned last (0 for random).
    pub fn last_pass(&self) -> u64 {
        self.last_pass
    }

    /// The size in bytes of the I/O `next_io` returned last, and its
    /// index among `--bssplit`'s sizes (0 without).
    #[inline]
    pub fn last_size(&self) -> (u64, u8) {
        (self.last_len, self.last_size)
    }

    #[inline]
    pub fn next_io(&mut self) -> (Op, u64) {
        if self.shape.is_some() {
            return self.next_shaped();
        }
        if let Some(c) = self.cover.as_mut() {
            let b = c.block(c.next);
            self.last_pass = self.pass;
            c.next += 1;
            if c.next == c.blocks {
                c.next = 0;
                self.pass += 1;
                c.rekey(&mut self.rng);
            }
            // A verified random mix covers the region too (fio's random
            // map is over blocks, whichever way each goes): its direction
            // drawn after the block, as a plain random I/O's is. A plain
            // write draws none, so its sequence is as it was.
            let op = if self.read_pct > 0 {
                self.op()
            } else {
                Op::Write
            };
            return (op, self.base + b * self.bs);
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
            Op::Write | Op::Trim => &mut self.next_write,
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
        let (unit, len) = (self.bs, self.blocks * self.bs);
        let Some(sh) = self.shape.as_mut() else {
            unreachable!("next_shaped without a shape")
        };
        let pos = match op {
            Op::Read => &mut sh.read_at,
            Op::Write | Op::Trim => &mut sh.write_at,
        };
        // --bssplit: this I/O's size, and the aligned places it fits at
        // (`unit` is then the alignment); else every I/O is one unit.
        let (bs, places) = match &sh.sizes {
            Some(t) => {
                let write = op != Op::Read;
                let rng = &mut sh.size_rngs[usize::from(write)];
                // Sequential: a size that would run past the end is drawn
                // again while the smallest still fits (fio's
                // get_next_buflen), so the pass ends at the region's end
                // to the byte; past that, the next pass starts.
                let room = len.saturating_sub(*pos);
                let i = if !self.random && room >= t.smallest(write) {
                    t.pick_fitting(rng, write, room)
                } else {
                    t.pick(rng, write)
                };
                self.last_size = i as u8;
                self.last_len = t.lens[i];
                (t.lens[i], t.places[i])
            }
            None => (unit, self.blocks),
        };
        let at = *pos;
        if self.random {
            sh.seq_left -= 1;
            let at = if sh.seq_left == 0 || at + bs > len {
                if sh.seq_left == 0 {
                    sh.seq_left = sh.seq_run;
                }
                match &sh.draw {
                    // A drawn block that the size would run past the end
                    // from moves back to the last place it fits.
                    Some(d) => {
                        (d.block(&mut self.rng, self.blocks) * unit).min((places - 1) * unit)
                    }
                    None => self.rng.below(places) * unit,
                }
            } else {
                at
            };
            *pos = at + bs;
            return (op, self.base + at);
        }
        if let Some((z, zat)) = sh.zones.as_mut() {
            let at = zoned_offset(z, zat, pos, bs, len, &mut self.pass);
            self.last_pass = self.pass;
            return (op, self.base + at);
        }
        self.last_pass = self.pass;
        let (at, wrapped) = if at + bs > len {
            (0, true)
        } else {
            (at, false)
        };
        if wrapped {
            // A size that does not fit before the end starts the next pass.
            self.pass += 1;
            self.last_pass = self.pass;
        }
        let mut next = at as i64 + bs as i64 + sh.skip;
        if next < 0 {
            next = len as i64 + sh.skip;
            if next < 0 || next as u64 + unit > len {
                next = 0;
            }
            self.pass += 1;
        } else if next as u64 + unit > len {
            next = 0;
            self.pass += 1;
        }
        *pos = next as u64;
        (op, self.base + at)
    }

    /// The next I/O's direction: the read share drawn, when there is one.
    ///
    /// (Strided zones' offsets are [`zoned_offset`]'s.)
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

/// The next offset of a strided walk (fio's setup_strided_zone_mode,
/// then get_next_seq_offset), `pos` the direction's next position: once
/// `size` bytes are done in a zone, the next starts `range` + `skip`
/// after it (back at the region's start from its end, a new pass); a
/// position past the zone's range goes back to the zone's start, and so
/// does one that would pass the region's end, as fio's time-based run
/// does (a run bounded by bytes ends before: `Strided::pass_bytes`).
fn zoned_offset(
    z: &Strided,
    at: &mut ZoneAt,
    pos: &mut u64,
    bs: u64,
    len: u64,
    pass: &mut u64,
) -> u64 {
    if at.bytes >= z.size {
        at.bytes = 0;
        at.start += z.range + z.skip;
        if at.start >= len {
            at.start = 0;
            *pass += 1;
        }
        *pos = at.start;
    }
    if *pos >= at.start + z.range || *pos + bs > len {
        *pos = at.start;
    }
    let o = *pos;
    *pos += bs;
    at.bytes += bs;
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    // Issue 41: a size-bounded run in strided zones moves what fio's
    // does (fio 3.42's write_iolog, 10 MiB file, 64k reads): the whole
    // file round the zones, or up to the read a cut zone cannot fit.
    #[test]
    fn strided_zones_bound_a_pass_where_fio_ends() {
        let (k, m) = (1024u64, 1u64 << 20);
        let z = |size, skip, range| Strided { size, skip, range };
        let ios = |s: Strided| s.pass_bytes(10 * m, 64 * k) / (64 * k);
        assert_eq!(ios(z(m, 2 * m, m)), 160);
        assert_eq!(ios(z(m, 2304 * k, m)), 52);
        assert_eq!(ios(z(100 * k, m, 100 * k)), 19);
        assert_eq!(ios(z(2 * m, m, m)), 160);
        assert_eq!(ios(z(m, m, 2 * m)), 160);
        // A region smaller than one zone: its whole requests.
        assert_eq!(z(m, 0, m).pass_bytes(200 * k, 64 * k), 192 * k);
    }

    // Issue 41: a verified random write is read back whole, so it must
    // write every block of its region once per pass, as fio's random map
    // does; and its passes are counted, for the generation in each block.
    #[test]
    fn a_covering_random_write_visits_every_block_once_per_pass() {
        for blocks in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let r = Region {
                offset: 4096,
                length: blocks * 512 + 100,
            };
            let mut g = OffsetGen::new(r, 512, true, 0, 9).covering();
            let mut orders = Vec::new();
            for pass in 0..3 {
                let mut seen: Vec<u64> = (0..blocks)
                    .map(|_| {
                        let (op, o) = g.next_io();
                        assert_eq!((op, g.last_pass()), (Op::Write, pass));
                        (o - 4096) / 512
                    })
                    .collect();
                orders.push(seen.clone());
                seen.sort_unstable();
                assert_eq!(seen, (0..blocks).collect::<Vec<_>>(), "{blocks} blocks");
            }
            if blocks >= 64 {
                assert_ne!(orders[0], orders[1], "each pass draws its own order");
                let in_order = orders[0].windows(2).filter(|w| w[1] == w[0] + 1).count();
                assert!(in_order < blocks as usize / 4, "not sequential: {in_order}");
            }
        }
    }

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
                (Op::Trim, _) => unreachable!("the order draws no trims"),
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
    /// `--sprandom`: writes only, ending when the walk is done.
    Spr(SprGen),
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
    /// The next I/O; `None` only when `--sprandom`'s walk is done.
    #[inline]
    pub fn next_io(&mut self) -> Option<(Op, u64)> {
        Some(match self {
            Offsets::Plain(g) => g.next_io(),
            Offsets::Striped(g) => g.next_io(),
            Offsets::Replay(g) => g.next_io(),
            Offsets::Spr(g) => return g.next_write().map(|o| (Op::Write, o)),
        })
    }

    pub fn last_pass(&self) -> u64 {
        match self {
            Offsets::Plain(g) => g.last_pass(),
            Offsets::Striped(g) => g.last_pass(),
            Offsets::Replay(g) => g.last_pass(),
            // One pass over the physical capacity.
            Offsets::Spr(_) => 0,
        }
    }

    /// The last I/O's size and its index among `--bssplit`'s sizes
    /// (a modelled stripe's pieces are all one size: `piece`, 0).
    #[inline]
    pub fn last_size(&self, piece: u64) -> (u64, u8) {
        match self {
            Offsets::Plain(g) => g.last_size(),
            Offsets::Striped(_) => (piece, 0),
            // A replayed log is of one size (`--iolog-read` checks it).
            Offsets::Replay(g) => (g.log.bs, 0),
            Offsets::Spr(_) => (piece, 0),
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

#[cfg(test)]
mod size_tests {
    use super::*;

    fn split(text: &str) -> Access {
        Access {
            sizes: Some(Sizes::parse(text, &crate::base::units::parse_size).unwrap()),
            ..Access::default()
        }
    }

    // Issue 41: random offsets with a split fall on the alignment (the
    // smallest size, or blockalign) where the drawn size fits; the sizes
    // keep their shares.
    #[test]
    fn split_offsets_are_aligned_and_each_size_fits() {
        let r = Region {
            offset: 1 << 20,
            length: 1 << 20,
        };
        let mut a = split("512/50:64k/50");
        let mut g = OffsetGen::new(r, 512, true, 100, 3).with_access(&a);
        let mut big = 0;
        for _ in 0..20_000 {
            let (_, off) = g.next_io();
            let (len, i) = g.last_size();
            assert_eq!(off % 512, 0);
            assert!(off >= r.offset && off + len <= r.end(), "{off}+{len}");
            big += usize::from(i == 1);
        }
        assert!((9_000..11_000).contains(&big), "{big}");
        // blockalign=4k: every offset on 4k.
        a.sizes.as_mut().unwrap().align = 4096;
        let mut g = OffsetGen::new(r, 4096, true, 100, 3).with_access(&a);
        assert!((0..5000).all(|_| g.next_io().1 % 4096 == 0));
    }

    // A sequential split advances by each I/O's size; a size that would
    // run past the end is drawn again (fio's get_next_buflen), so each
    // pass ends at the region's end to the byte and the next starts at 0.
    #[test]
    fn a_sequential_split_advances_by_each_size_and_ends_each_pass_at_the_end() {
        let r = Region {
            offset: 0,
            length: 64 << 10,
        };
        let mut g = OffsetGen::new(r, 4096, false, 100, 8).with_access(&split("4k/50:16k/50"));
        let (mut at, mut ends) = (0, 0);
        for _ in 0..200 {
            let (_, off) = g.next_io();
            let (len, _) = g.last_size();
            assert_eq!(off, at);
            at += len;
            assert!(at <= r.length, "{off}+{len} past the end");
            if at == r.length {
                at = 0;
                ends += 1;
            }
        }
        assert!(ends > 5 && g.last_pass() >= ends - 1, "{ends} passes");
    }

    // Issue 41 (fio's t0002): a sequential read with the write's seed
    // draws the write's sizes, block for block, and a mix's writes are
    // the sizes a read-only pass with its seed draws, in order, from the
    // region's start: the read-back reads each block at its size.
    #[test]
    fn a_read_with_the_write_s_seed_replays_its_block_sizes() {
        let r = Region {
            offset: 1 << 30,
            length: 8 << 20,
        };
        let a = split("512/50:1m/50");
        let blocks = |read_pct: u8, op: Op, n: usize| {
            let mut g = OffsetGen::new(r, 512, false, read_pct, 137).with_access(&a);
            let mut v = Vec::new();
            while v.len() < n {
                let (o, off) = g.next_io();
                if o == op {
                    v.push((off, g.last_size().0));
                }
            }
            v
        };
        let written = blocks(0, Op::Write, 3000);
        assert_eq!(blocks(100, Op::Read, 3000), written);
        assert!(written.iter().any(|b| b.1 == 512) && written.iter().any(|b| b.1 == 1 << 20));
        assert_eq!(blocks(50, Op::Write, 1000), blocks(100, Op::Read, 1000));
        // Another seed draws other sizes.
        let mut g = OffsetGen::new(r, 512, false, 0, 138).with_access(&a);
        let other: Vec<_> = (0..3000)
            .map(|_| (g.next_io().1, g.last_size().0))
            .collect();
        assert_ne!(other, written);
    }
}
