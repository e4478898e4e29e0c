//! `--cmdprio-bssplit` (fio's cmdprio_bssplit, engines/cmdprio.c): each
//! I/O's command priority drawn by its direction and size, and the count
//! each (direction, priority) gets, fio's clat_prio. The tables are built
//! once before the window, so the hot path is one draw and two lookups.

use super::{PrioCount, WorkerSpec};

/// Each priority a worker counts apart: per direction it issues that has
/// entries, the default (the thread's) first, then each entry's own, once
/// each, as fio's clat_prio holds them (fio keeps none for a direction
/// without entries: its I/Os all go at the default).
fn slots(spec: &WorkerSpec) -> Vec<(bool, u16)> {
    let Some(split) = &spec.cmdprio_split else {
        return Vec::new();
    };
    let mut v: Vec<(bool, u16)> = Vec::new();
    for write in [false, true] {
        let issued = if write {
            spec.read_pct < 100
        } else {
            spec.read_pct > 0
        };
        if !issued || split.of(write).is_empty() {
            continue;
        }
        let prios =
            std::iter::once(spec.default_prio).chain(split.of(write).iter().map(|e| e.prio));
        for p in prios {
            if !v.contains(&(write, p)) {
                v.push((write, p));
            }
        }
    }
    v
}

/// The worker's counts, one per priority slot, made before the window.
pub(super) fn counts(spec: &WorkerSpec) -> Vec<PrioCount> {
    (slots(spec).into_iter())
        .map(|(write, ioprio)| PrioCount {
            write,
            ioprio,
            ..PrioCount::default()
        })
        .collect()
}

/// The draw: for each direction and size index, the percent drawn (0..100)
/// to its priority's slot, fio's walk of the size's entries in order
/// (each entry the next `pct` percents; past them all, the default).
pub(super) struct PrioBySize {
    rng: crate::base::io::Rng,
    reads: Vec<[u8; 100]>,
    writes: Vec<[u8; 100]>,
    /// Each slot's ioprio value, what the SQE carries; and the default's,
    /// for a direction with no slots ([`UNCOUNTED`]).
    values: Vec<u16>,
    default: u16,
}

/// The slot of an I/O of a direction with no entries: not counted apart.
pub(super) const UNCOUNTED: u8 = u8::MAX;

impl PrioBySize {
    pub(super) fn new(spec: &WorkerSpec) -> Option<PrioBySize> {
        let split = spec.cmdprio_split.as_ref()?;
        let slots = slots(spec);
        // Each size a drawn I/O can have, by its index ([`Sizes::all`]).
        let lens: Vec<u64> = match &spec.access.sizes {
            Some(s) => s.all().map(|x| x.bs).collect(),
            None => vec![spec.bs],
        };
        let table = |write: bool| -> Vec<[u8; 100]> {
            let slot = |p: u16| {
                (slots.iter().position(|s| *s == (write, p))).map_or(UNCOUNTED, |i| i as u8)
            };
            (lens.iter())
                .map(|&len| {
                    let mut t = [slot(spec.default_prio); 100];
                    let mut at = 0usize;
                    for e in split.of(write).iter().filter(|e| e.bs == len) {
                        let end = (at + usize::from(e.pct)).min(100);
                        t[at..end].fill(slot(e.prio));
                        at = end;
                    }
                    t
                })
                .collect()
        };
        Some(PrioBySize {
            rng: crate::base::io::Rng::new(spec.seed ^ 0x4253_5052_494f_0000),
            reads: table(false),
            writes: table(true),
            values: slots.iter().map(|s| s.1).collect(),
            default: spec.default_prio,
        })
    }

    /// The next I/O's priority slot and the ioprio value its command
    /// carries.
    #[inline]
    pub(super) fn next(&mut self, write: bool, size: u8) -> (u8, u16) {
        let t = if write { &self.writes } else { &self.reads };
        let r = self.rng.below(100) as usize;
        let slot = t.get(usize::from(size)).map_or(UNCOUNTED, |t| t[r]);
        let value = self.values.get(usize::from(slot)).copied();
        (slot, value.unwrap_or(self.default))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::thread_setup::{prio_value, CmdPrioSplit};
    use crate::measure::workload::{Access, Sizes};

    fn spec(read_pct: u8, bssplit: &str, cmdprio: &str, default_prio: u16) -> WorkerSpec {
        let size = |s: &str| crate::base::units::parse_size(s);
        let mut s = super::super::tests::reader(1 << 14, 65536);
        s.read_pct = read_pct;
        s.access = Access {
            sizes: Some(Sizes::parse(bssplit, &size).unwrap()),
            ..Access::default()
        };
        s.cmdprio_split = Some(CmdPrioSplit::parse(cmdprio, &size, prio_value(1, 0, 0)).unwrap());
        s.default_prio = default_prio;
        s
    }

    // cmdprio-bssplit.fio's [cmdprio-adv-def]: of the 64k reads 25% at
    // 1/1, 75% at 3/2; every other I/O (the 1M reads, all writes) at the
    // default 2/7; each share drawn within a percent over 100k I/Os, and
    // the value given the engine is the slot's.
    #[test]
    fn each_size_s_share_goes_at_its_priority_and_the_rest_at_the_default() {
        let s = spec(
            50,
            "64k/40:1m/60,1m/100",
            "64k/25/1/1:64k/75/3/2:1m/0,1m/0",
            0x4007,
        );
        let slots = slots(&s);
        // Writes have no entries: fio keeps no per-priority count of them.
        assert_eq!(slots, [(false, 0x4007), (false, 0x2001), (false, 0x6002)]);
        let mut d = PrioBySize::new(&s).unwrap();
        let mut n = [0u64; 4];
        for _ in 0..100_000 {
            let (slot, value) = d.next(false, 0);
            assert_eq!(value, slots[usize::from(slot)].1);
            n[usize::from(slot)] += 1;
        }
        assert!(
            n[0] == 0 && (n[1] as f64 - 25_000.0).abs() < 1000.0,
            "{n:?}"
        );
        assert_eq!(n[1] + n[2], 100_000);
        assert_eq!(d.next(false, 1), (0, 0x4007));
        // Writes' 1M is index 2 (after the reads' two sizes): the default,
        // not counted apart.
        assert_eq!(d.next(true, 2), (UNCOUNTED, 0x4007));
    }
}
