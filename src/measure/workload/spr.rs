//! SPRandom's offsets (fio's `sprandom=1`, ours `--sprandom`): the
//! write order that leaves an SSD's regions at the steady-state validity
//! of [`crate::analysis::sprandom`]'s model.
//!
//! The regions are filled in turn, `region_writes` writes each. New
//! blocks come from a permutation of the target's blocks (each block at
//! most once, as fio's LFSR gives them; ours is the random map's Feistel
//! order, not fio's LFSR sequence). Each write made in region k is kept,
//! with region k's invalidation share, in a two-phase buffer; at region
//! k+1's first write the kept blocks are written again (right after that
//! write, as fio does), which invalidates them in region k, and they
//! count among region k+1's writes. It ends when the physical capacity
//! has been written (fio's io_size), when the regions are done, or when
//! every block has been drawn once.

use super::{Cover, Region, Rng};
use crate::analysis::sprandom::{SprModel, PCT_PRECISION};

/// One worker's SPRandom walk over its region.
pub struct SprGen {
    base: u64,
    bs: u64,
    order: Cover,
    /// Blocks drawn from `order` so far.
    drawn: u64,
    rng: Rng,
    invalid_pct: Vec<u32>,
    region_writes: u64,
    /// Writes left to make (the physical capacity's blocks).
    left: u64,
    /// The region being written (== the regions' count: the tail past
    /// the last whole region, which fio's io_size still writes).
    region: usize,
    /// New blocks still to draw in this region.
    remaining: u64,
    /// The buffer's two phases: kept this region, to be written again at
    /// the next; and kept last region, being written again now.
    staged: Vec<u64>,
    replay: std::collections::VecDeque<u64>,
}

impl SprGen {
    pub fn new(region: Region, model: &SprModel, seed: u64) -> SprGen {
        let mut rng = Rng::new(seed);
        let blocks = (region.length / model.bs).max(1);
        let order = Cover::new(blocks, &mut rng);
        SprGen {
            base: region.offset,
            bs: model.bs,
            order,
            drawn: 0,
            rng,
            invalid_pct: model.invalid_pct.clone(),
            region_writes: model.region_writes,
            left: model.writes(),
            region: 0,
            remaining: model.region_writes,
            // The model's bound (six sigmas over the expected count).
            staged: Vec::with_capacity(model.buffer as usize),
            replay: std::collections::VecDeque::with_capacity(model.buffer as usize),
        }
    }

    /// The region being written (the count of regions: the tail).
    pub fn region(&self) -> usize {
        self.region
    }

    /// The next write's offset, or `None` when the preconditioning is done.
    #[inline]
    pub fn next_write(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        let block = match self.replay.pop_front() {
            Some(b) => b,
            None => self.fresh()?,
        };
        self.left -= 1;
        self.keep(block);
        Some(self.base + block * self.bs)
    }

    /// A new block for this region, moving to the next region first when
    /// this one is full.
    fn fresh(&mut self) -> Option<u64> {
        if self.remaining == 0 {
            if self.region >= self.invalid_pct.len() {
                return None;
            }
            self.region += 1;
            // The kept blocks are this region's too: fewer new ones.
            self.replay.extend(self.staged.drain(..));
            self.remaining = self.region_writes.saturating_sub(self.replay.len() as u64);
        }
        if self.drawn == self.order.blocks {
            return None;
        }
        let b = self.order.block(self.drawn);
        self.drawn += 1;
        self.remaining = self.remaining.saturating_sub(1);
        Some(b)
    }

    /// Keeps `block` for the next region with this region's share (fio's
    /// draw: 0..=10000 against the share). The tail's are never written
    /// again, so none is kept there.
    fn keep(&mut self, block: u64) {
        let Some(&pct) = self.invalid_pct.get(self.region) else {
            return;
        };
        if self.rng.below(u64::from(PCT_PRECISION) + 1) <= u64::from(pct) {
            self.staged.push(block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sprandom::model;

    fn walk(len: u64, op: f64, regions: u32) -> (SprModel, Vec<u64>) {
        let m = model(len, 4096, op, regions).unwrap();
        let r = Region {
            offset: 1 << 20,
            length: len,
        };
        let mut g = SprGen::new(r, &m, 7);
        let mut out = Vec::new();
        while let Some(o) = g.next_write() {
            assert!(o >= r.offset && o + 4096 <= r.end() && o % 4096 == 0);
            out.push((o - r.offset) / 4096);
        }
        (m, out)
    }

    // 64 MiB at OP 0.15 in 100 regions: fio 3.42 writes 18841 blocks
    // (the physical 77172736 bytes), 188 per region; each region's blocks
    // written again in the next come to its invalidation share.
    #[test]
    fn the_walk_writes_the_physical_capacity_with_each_region_s_share() {
        let (m, w) = walk(64 << 20, 0.15, 100);
        assert_eq!(w.len() as u64, m.writes());
        assert_eq!(w.len(), 18_841);
        let r = m.region_writes as usize;
        let mut want = 0.0;
        let mut got = 0usize;
        for k in 0..99 {
            let this: std::collections::HashSet<u64> =
                w[k * r..(k + 1) * r].iter().copied().collect();
            let next = &w[(k + 1) * r..(k + 2) * r];
            got += next.iter().filter(|b| this.contains(b)).count();
            want += (1.0 - m.validity(k)) * r as f64;
        }
        // Over all regions, within a few percent of the model's count.
        assert!((got as f64 - want).abs() < want * 0.05, "{got} vs {want}");
        // New blocks are never repeated: the distinct blocks are the writes
        // less the rewrites.
        let distinct: std::collections::HashSet<u64> = w.iter().copied().collect();
        assert!(distinct.len() <= (64 << 20) / 4096);
        assert!(w.len() - distinct.len() >= got);
    }

    // A small target whose blocks run out before the physical capacity
    // is written: the walk ends there, as fio's ends at its LFSR's end.
    #[test]
    fn the_walk_ends_when_every_block_is_drawn() {
        // 16 blocks, 30 to write in one region (all valid: none kept).
        let (m, w) = walk(64 << 10, 0.9, 1);
        assert_eq!((m.writes(), m.region_writes), (30, 30));
        assert_eq!(w.len(), 16);
        let distinct: std::collections::HashSet<u64> = w.iter().copied().collect();
        assert_eq!(distinct.len(), 16);
    }
}
