//! Block-size distributions (`--bssplit`, fio's `bssplit=`): each I/O's
//! size drawn from weighted sizes, as fio's get_next_buflen draws it. The
//! draw is one table lookup from the worker's own generator: a 100-entry
//! table maps the percent drawn to its size, built once before the window,
//! so nothing is allocated or searched per I/O.

use crate::base::io::Rng;

/// fio allows up to 64 sizes per direction (its BSSPLIT_MAX).
pub const MAX_SIZES: usize = 64;

/// One size of a split and its share of I/Os in percent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeShare {
    pub bs: u64,
    pub pct: u8,
}

impl SizeShare {
    /// The most sizes a split holds.
    pub const MAX_SIZES: usize = MAX_SIZES;
}

/// A block-size distribution: the sizes (ascending, as fio sorts them),
/// their shares summing to 100, and the boundary offsets are aligned to
/// (fio's `blockalign=`, by default the smallest size). `writes`: fio's
/// `READS,WRITES` form, the writes' own split (`None`: writes draw from
/// `shares` too, as fio does when the write list is left out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sizes {
    pub shares: Vec<SizeShare>,
    pub align: u64,
    pub writes: Option<Vec<SizeShare>>,
}

impl Sizes {
    /// Parses fio's spelling, `4k/10:64k/50:32k/` (a blank share is an
    /// even part of what the others leave, as fio fills them), or its
    /// `READS,WRITES` form, `64k/40:1m/60,1m/100`: each direction's I/Os
    /// drawn from their own list (a blank or missing write list is the
    /// reads', fio's rule). `size` parses a byte size as the caller's
    /// units do.
    pub fn parse(s: &str, size: &dyn Fn(&str) -> Result<u64, String>) -> Result<Sizes, String> {
        let lists: Vec<&str> = s.split(',').map(str::trim).collect();
        if lists.len() > 2 {
            return Err(format!(
                "`{s}` has more than two lists; give READS[,WRITES] (trims are not issued)"
            ));
        }
        let shares = Self::parse_list(lists[0], size)?;
        let writes = match lists.get(1) {
            Some(w) if !w.is_empty() => Some(Self::parse_list(w, size)?).filter(|w| *w != shares),
            _ => None,
        };
        let align = (shares.iter().chain(writes.iter().flatten()))
            .map(|x| x.bs)
            .min()
            .unwrap_or(0);
        Ok(Sizes {
            shares,
            align,
            writes,
        })
    }

    /// One direction's list, `4k/10:64k/50:32k/`: the shares summing to
    /// 100, ascending by size, those of 0% left out.
    fn parse_list(
        s: &str,
        size: &dyn Fn(&str) -> Result<u64, String>,
    ) -> Result<Vec<SizeShare>, String> {
        let mut given: Vec<(u64, Option<u32>)> = Vec::new();
        for part in s.split(':') {
            let (b, p) = match part.split_once('/') {
                Some((b, p)) => (b, p),
                None => (part, ""),
            };
            let bs = size(b.trim()).map_err(|e| format!("`{part}` in `{s}`: {e}"))?;
            if bs == 0 {
                return Err(format!("`{part}` in `{s}`: a size must be above 0"));
            }
            let pct = match p.trim() {
                "" => None,
                p => Some(p.parse::<u32>().map_err(|_| {
                    format!(
                        "`{part}` in `{s}`: the share after `/` must be a whole percent (4k/25)"
                    )
                })?),
            };
            given.push((bs, pct));
        }
        if given.is_empty() || given.len() > MAX_SIZES {
            return Err(format!("`{s}`: give 1 to {MAX_SIZES} SIZE/PCT parts"));
        }
        let set: u32 = given.iter().filter_map(|g| g.1).sum();
        if set > 100 {
            return Err(format!("`{s}`: the shares add up to {set}%, over 100"));
        }
        let blanks = given.iter().filter(|g| g.1.is_none()).count() as u32;
        // fio: each blank gets an even part of what is left; the
        // remainder of that division goes to the first blanks, so the
        // shares sum to 100.
        let (each, mut extra) = match blanks {
            0 => (0, 0),
            n => ((100 - set) / n, (100 - set) % n),
        };
        let mut shares: Vec<SizeShare> = given
            .iter()
            .map(|&(bs, p)| {
                let pct = p.unwrap_or_else(|| {
                    let e = u32::from(extra > 0);
                    extra = extra.saturating_sub(1);
                    each + e
                });
                SizeShare { bs, pct: pct as u8 }
            })
            .collect();
        let total: u32 = shares.iter().map(|x| u32::from(x.pct)).sum();
        if total != 100 {
            return Err(format!(
                "`{s}`: the shares add up to {total}%; they must make 100 (leave one blank, 4k/, to take the rest)"
            ));
        }
        shares.sort_by_key(|x| x.bs);
        shares.retain(|x| x.pct > 0);
        Ok(shares)
    }

    /// Every size a worker counts apart: the reads' (or both directions')
    /// then, with a write split of its own, the writes' (the index a
    /// drawn size carries, [`SizeTable::writes`]).
    pub fn all(&self) -> impl Iterator<Item = &SizeShare> {
        self.shares.iter().chain(self.writes.iter().flatten())
    }

    /// The largest size: what each buffer must hold.
    pub fn max(&self) -> u64 {
        self.all().map(|x| x.bs).max().unwrap_or(0)
    }

    /// The smallest size.
    pub fn min(&self) -> u64 {
        self.all().map(|x| x.bs).min().unwrap_or(0)
    }

    /// The mean request size the shares make: what byte budgets are
    /// divided by to count I/Os.
    pub fn mean(&self) -> f64 {
        self.shares
            .iter()
            .map(|x| x.bs as f64 * f64::from(x.pct) / 100.0)
            .sum()
    }

    /// fio's spelling, as parsed: `512/10:4k/90` (sizes in bytes), and
    /// `,` and the writes' list when they have their own.
    pub fn fio_spelling(&self) -> String {
        let list = |v: &[SizeShare]| -> String {
            let parts: Vec<String> = v.iter().map(|x| format!("{}/{}", x.bs, x.pct)).collect();
            parts.join(":")
        };
        match &self.writes {
            Some(w) => format!("{},{}", list(&self.shares), list(w)),
            None => list(&self.shares),
        }
    }
}

/// A worker's draw: which size each I/O has, and for each size how many
/// aligned places in the region it fits at. Built once per worker.
#[derive(Debug, Clone)]
pub struct SizeTable {
    /// The percent drawn (0..100) to its size's index: reads' (or both
    /// directions'), and the writes' own with a write split.
    pick: [u8; 100],
    write_pick: Option<[u8; 100]>,
    /// The smallest size each direction draws (reads', writes'): what a
    /// sequential pass's end must hold for a size to be drawn again.
    smallest: [u64; 2],
    /// Each size's bytes and the aligned offsets it fits at, in
    /// [`Sizes::all`]'s order.
    pub lens: Vec<u64>,
    pub places: Vec<u64>,
}

/// The percent drawn to the index of its size: `first` is the index of
/// the list's first size among [`Sizes::all`].
fn pick_table(shares: &[SizeShare], first: usize) -> [u8; 100] {
    let mut pick = [0u8; 100];
    let mut at = 0usize;
    for (i, x) in shares.iter().enumerate() {
        for p in &mut pick[at..at + usize::from(x.pct)] {
            *p = (first + i) as u8;
        }
        at += usize::from(x.pct);
    }
    pick
}

impl SizeTable {
    /// The table for a region of `len` bytes, which holds the largest size
    /// (the plan makes sure it does).
    pub fn new(sizes: &Sizes, len: u64) -> SizeTable {
        let pick = pick_table(&sizes.shares, 0);
        let write_pick = (sizes.writes.as_ref()).map(|w| pick_table(w, sizes.shares.len()));
        let lens: Vec<u64> = sizes.all().map(|x| x.bs).collect();
        let places = (lens.iter())
            .map(|&bs| (len.saturating_sub(bs) / sizes.align + 1).max(1))
            .collect();
        let least = |l: &[SizeShare]| l.iter().map(|x| x.bs).min().unwrap_or(u64::MAX);
        let reads = least(&sizes.shares);
        let smallest = [reads, sizes.writes.as_deref().map_or(reads, least)];
        SizeTable {
            pick,
            write_pick,
            smallest,
            lens,
            places,
        }
    }

    /// The next I/O's size index: one draw, one lookup, in the write
    /// split when the I/O is a write and writes have their own.
    #[inline]
    pub fn pick(&self, rng: &mut Rng, write: bool) -> usize {
        let t = match &self.write_pick {
            Some(w) if write => w,
            _ => &self.pick,
        };
        usize::from(t[rng.below(100) as usize])
    }

    /// The smallest size the direction draws.
    #[inline]
    pub fn smallest(&self, write: bool) -> u64 {
        self.smallest[usize::from(write)]
    }

    /// The next size that fits in `room` bytes, which must hold the
    /// direction's smallest ([`SizeTable::smallest`]): drawn again while
    /// the one drawn does not fit, as fio's get_next_buflen does (every
    /// size kept has a share, so the smallest comes up one draw in 100
    /// at worst).
    #[inline]
    pub fn pick_fitting(&self, rng: &mut Rng, write: bool, room: u64) -> usize {
        loop {
            let i = self.pick(rng, write);
            if self.lens[i] <= room {
                return i;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(s: &str) -> Result<u64, String> {
        crate::base::units::parse_size(s)
    }

    fn parse(s: &str) -> Result<Sizes, String> {
        Sizes::parse(s, &bytes)
    }

    /// A sequential pass's end is judged against the smallest size of the
    /// I/O's own direction: a write split of larger sizes than the reads'
    /// must not be drawn again and again for room only a read size fits.
    #[test]
    fn each_direction_s_smallest_size_is_its_own_list_s() {
        let t = SizeTable::new(&parse("4k/50:8k/50,64k/100").unwrap(), 1 << 20);
        assert_eq!((t.smallest(false), t.smallest(true)), (4096, 65536));
        let one = SizeTable::new(&parse("4k/50:8k/50").unwrap(), 1 << 20);
        assert_eq!((one.smallest(false), one.smallest(true)), (4096, 4096));
        let mut rng = Rng::new(7);
        for _ in 0..100 {
            assert_eq!(t.lens[t.pick_fitting(&mut rng, true, 65536)], 65536);
        }
    }

    #[test]
    fn blank_shares_take_an_even_part_of_the_rest_and_sizes_sort() {
        let s = parse("4k/50:1k/:32k/").unwrap();
        let got: Vec<(u64, u8)> = s.shares.iter().map(|x| (x.bs, x.pct)).collect();
        assert_eq!(got, [(1024, 25), (4096, 50), (32768, 25)]);
        assert_eq!(s.align, 1024);
        assert_eq!(s.max(), 32768);
        // Three blanks of 100: 34, 33, 33.
        let t = parse("1k/:2k/:4k/").unwrap();
        assert_eq!(t.shares.iter().map(|x| u32::from(x.pct)).sum::<u32>(), 100);
    }

    #[test]
    fn bad_splits_are_refused_with_the_reason() {
        assert!(parse("4k/60:8k/60").unwrap_err().contains("over 100"));
        assert!(parse("4k/60:8k/30").unwrap_err().contains("make 100"));
        assert!(parse("4k/50,8k/100,4k/100")
            .unwrap_err()
            .contains("two lists"));
        assert!(parse("4k/50:8k/50,8k/90").unwrap_err().contains("make 100"));
        assert!(parse("4k/x").unwrap_err().contains("whole percent"));
        assert!(parse("0/100").unwrap_err().contains("above 0"));
    }

    // The draw gives each size its share (a fixed seed, 100k draws, within
    // half a percent) and every size fits the region at its aligned places.
    #[test]
    fn the_picker_gives_each_size_its_share() {
        let s = parse("512/10:1k/5:4k/60:64k/25").unwrap();
        let t = SizeTable::new(&s, 1 << 20);
        let mut rng = Rng::new(7);
        let mut n = [0u64; 4];
        for _ in 0..100_000 {
            n[t.pick(&mut rng, false)] += 1;
        }
        for (i, x) in s.shares.iter().enumerate() {
            let want = f64::from(x.pct) * 1000.0;
            assert!(
                (n[i] as f64 - want).abs() < 500.0,
                "{}: {} vs {want}",
                x.bs,
                n[i]
            );
        }
        // 64k fits at (1M - 64k) / 512 + 1 places.
        assert_eq!(t.places[3], ((1 << 20) - 65536) / 512 + 1);
    }

    // fio's `READS,WRITES` form (cmdprio-bssplit.fio's
    // `64k/40:1024k/60,1024k/100`): reads draw from their list, writes from
    // theirs, each size an index of its own after the reads'; a write
    // list left blank or equal to the reads' is the reads'.
    #[test]
    fn a_write_split_of_its_own_draws_writes_from_it() {
        let s = parse("64k/40:1m/60,1m/100").unwrap();
        assert_eq!(s.fio_spelling(), "65536/40:1048576/60,1048576/100");
        assert_eq!((s.max(), s.align), (1 << 20, 65536));
        let t = SizeTable::new(&s, 1 << 30);
        assert_eq!(t.lens, [65536, 1 << 20, 1 << 20]);
        let mut rng = Rng::new(3);
        let mut n = [0u64; 3];
        for i in 0..100_000 {
            n[t.pick(&mut rng, i % 2 == 1)] += 1;
        }
        assert!((n[0] as f64 - 20_000.0).abs() < 500.0, "{n:?}");
        assert!((n[1] as f64 - 30_000.0).abs() < 500.0, "{n:?}");
        assert_eq!(n[2], 50_000, "{n:?}");
        assert_eq!(parse("4k/50:8k/50,").unwrap().writes, None);
        assert_eq!(parse("4k/50:8k/50,8k/50:4k/50").unwrap().writes, None);
    }
}
