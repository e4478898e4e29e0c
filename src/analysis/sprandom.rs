//! The arithmetic of fio's SPRandom preconditioning (`sprandom=1`, ours
//! `--sprandom`): the steady-state validity each region of an SSD holds,
//! the physical bytes to write, the write amplification expected, and
//! the invalidation buffer the offset generator keeps. Our own code of
//! fio's model (sprandom.c, after P. Desnoyers, "Analytic Models of SSD
//! Write Performance", ACM ToS 8(2), 2012):
//!
//! - a steady-state drive has `i * f(i)` constant: blocks with fewer valid
//!   pages take proportionally more of the drive;
//! - greedy GC reclaims the block of least validity, `1 - 1/WA`, with
//!   `WA = 0.5 / OP + 0.7` (Desnoyers' approximation);
//! - validities equally spaced from 1 down to the GC block's give the
//!   curve of accumulated `1/validity` against validity; resampled at
//!   equally spaced points of that accumulated size, they give each of
//!   the equal-sized regions its validity, the first region (the oldest
//!   written) the least valid.
//!
//! Each region is written with `region_bytes / bs` writes; a fraction
//! `1 - validity` of them (drawn one by one) is written again at the next
//! region's start, which is what invalidates them. The whole physical
//! capacity, `logical * (1 + OP)`, is written once.
//!
//! A function of its arguments: no I/O here (the generator that walks
//! this model is measure/workload/spr.rs).

/// fio's precision of an invalidation share: parts per 10 000.
pub const PCT_PRECISION: u32 = 10_000;

/// fio's defaults (options.c): `spr_op=0.15`, `spr_num_regions=100`.
pub const DEFAULT_OP: f64 = 0.15;
pub const DEFAULT_REGIONS: u32 = 100;

/// The most the invalidation buffer (8 bytes a block) may take: fio's
/// grows with the region, so a large device with few regions would ask
/// for gigabytes; past this, more regions are asked for.
pub const MAX_BUFFER_BYTES: u64 = 256 << 20;

/// The most regions: the per-region table stays small, and a region
/// must hold at least one block anyway.
pub const MAX_REGIONS: u32 = 1 << 20;

/// Desnoyers' approximation of the write amplification at
/// over-provisioning `op` (fio's compute_waf).
pub fn waf(op: f64) -> f64 {
    0.5 / op + 0.7
}

/// The validity of the block greedy GC reclaims at write amplification
/// `waf`: 1 - 1/WA (fio's compute_gc_validity).
pub fn gc_validity(waf: f64) -> f64 {
    1.0 - 1.0 / waf
}

/// `n` values from `start` to `end`, inclusive, equally spaced (one
/// value: `start`).
fn linspace(start: f64, end: f64, n: usize) -> Vec<f64> {
    if n == 1 {
        return vec![start];
    }
    let step = (end - start) / (n as f64 - 1.0);
    (0..n).map(|i| start + i as f64 * step).collect()
}

/// Linear interpolation of (`xs`, `ys`) at `x`, `xs` increasing; outside
/// them, the nearest end's `y` (as fio's linear_interp).
fn interp(x: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len();
    if x <= xs[0] {
        return ys[0];
    }
    if x >= xs[n - 1] {
        return ys[n - 1];
    }
    let i = xs.partition_point(|&v| v < x).max(1) - 1;
    let (x1, x2, y1, y2) = (xs[i], xs[i + 1], ys[i], ys[i + 1]);
    if (x2 - x1).abs() < 1e-9 {
        return y1;
    }
    y1 + (y2 - y1) * ((x - x1) / (x2 - x1))
}

/// The steady-state validity of each of `n` equal regions at
/// over-provisioning `op`, the first region the least valid (fio's
/// compute_validity_dist). `n` >= 1.
pub fn validity_dist(n: usize, op: f64) -> Vec<f64> {
    let valid = linspace(1.0, gc_validity(waf(op)), n);
    // The accumulated relative size of blocks of each validity.
    let mut acc = 0.0;
    let xs: Vec<f64> = valid
        .iter()
        .map(|v| {
            acc += 1.0 / v;
            acc
        })
        .collect();
    let at = linspace(xs[0], xs[n - 1], n);
    let mut out: Vec<f64> = at.iter().map(|&x| interp(x, &xs, &valid)).collect();
    out.reverse();
    out
}

/// The physical bytes of a device of `logical` bytes with `op`
/// over-provisioning, down to a whole `bs` (fio's sprandom_physical_size).
pub fn physical_size(op: f64, logical: u64, bs: u64) -> u64 {
    let size = logical + (logical as f64 * op).ceil() as u64;
    size - size % bs
}

/// The invalidation buffer a region of `writes` blocks of validity
/// `validity` needs: the expected count of blocks to rewrite plus six
/// standard deviations of the binomial draw (fio's estimate_inv_capacity).
pub fn buffer_capacity(writes: u64, validity: f64) -> u64 {
    let sigma = (writes as f64 * validity * (1.0 - validity)).sqrt();
    (writes as f64 * (1.0 - validity) + 6.0 * sigma).ceil() as u64
}

/// SPRandom's plan for one target.
#[derive(Debug, Clone, PartialEq)]
pub struct SprModel {
    pub op: f64,
    pub regions: u32,
    pub bs: u64,
    /// The bytes addressed: the target's region.
    pub logical: u64,
    /// The bytes written: `logical * (1 + op)`, down to a whole block.
    pub physical: u64,
    pub region_bytes: u64,
    /// Writes per region (`region_bytes / bs`).
    pub region_writes: u64,
    /// Each region's share of its writes invalidated at the next region,
    /// in parts per [`PCT_PRECISION`].
    pub invalid_pct: Vec<u32>,
    /// Blocks the invalidation buffer holds at most.
    pub buffer: u64,
    /// The write amplification the model expects at steady state.
    pub waf: f64,
}

impl SprModel {
    /// The writes the run makes: the physical capacity once.
    pub fn writes(&self) -> u64 {
        self.physical / self.bs
    }

    /// The validity the model gives region `k` (1 - its invalidated share).
    pub fn validity(&self, k: usize) -> f64 {
        1.0 - f64::from(self.invalid_pct[k]) / f64::from(PCT_PRECISION)
    }
}

/// The model for `logical` bytes in blocks of `bs`, or what is wrong
/// with the request, in one line (the option names are `--spr-op` and
/// `--spr-regions`; fio's `spr_op`, `spr_num_regions`).
pub fn model(logical: u64, bs: u64, op: f64, regions: u32) -> Result<SprModel, String> {
    if !(op > 0.0 && op < 1.0) {
        return Err(format!(
            "--spr-op {op}: the over-provisioning is a share between 0 and 1 (exclusive), as the SSD's maker gives it (fio's default 0.15)"
        ));
    }
    if regions == 0 || regions > MAX_REGIONS {
        return Err(format!(
            "--spr-regions {regions}: give 1 to {MAX_REGIONS} regions (fio's default 100)"
        ));
    }
    let physical = physical_size(op, logical, bs);
    let region_bytes = physical / u64::from(regions);
    let region_writes = region_bytes / bs;
    if region_writes == 0 {
        return Err(format!(
            "--spr-regions {regions}: {physical} bytes to write make regions under one block of {bs}: give fewer regions (at most {})",
            physical / bs
        ));
    }
    let valid = validity_dist(regions as usize, op);
    let buffer = buffer_capacity(region_writes, valid[0]);
    if buffer.saturating_mul(8) > MAX_BUFFER_BYTES {
        // The buffer grows with the region: find the regions that keep it under.
        let per_block = buffer as f64 / region_writes as f64;
        let most = (MAX_BUFFER_BYTES / 8) as f64 / per_block;
        let least = (physical as f64 / bs as f64 / most).ceil() as u64;
        return Err(format!(
            "--spr-regions {regions}: regions of {region_bytes} bytes need an invalidation buffer of {} MiB (over {} MiB): give at least {least} regions",
            (buffer * 8) >> 20,
            MAX_BUFFER_BYTES >> 20
        ));
    }
    let invalid_pct = valid
        .iter()
        .map(|v| ((1.0 - v) * f64::from(PCT_PRECISION)).round() as u32)
        .collect();
    Ok(SprModel {
        op,
        regions,
        bs,
        logical,
        physical,
        region_bytes,
        region_writes,
        invalid_pct,
        buffer,
        waf: waf(op),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // fio 3.42's --debug=sprandom over a 64 MiB file, bs=4k, spr_op=0.15,
    // spr_num_regions=100: "physical_size: 77172736", "region_size:
    // 771727", "region_write_count: 188", "invalid_capacity: 83", the
    // linspace "start=1.00 end=0.75" and "end=114.94", and its
    // "Invalidation[k]" lines' shares of region k-1: 0.2479, 0.2458, ...
    // 0.1315 (k=51), ... 0.0029 (k=99); the last region keeps all.
    #[test]
    fn the_model_gives_fio_s_figures_for_64_mib_at_op_0_15() {
        let m = model(64 << 20, 4096, 0.15, 100).unwrap();
        assert_eq!(m.physical, 77_172_736);
        assert_eq!(m.region_bytes, 771_727);
        assert_eq!(m.region_writes, 188);
        assert_eq!(m.buffer, 83);
        assert_eq!(m.writes(), 18_841);
        assert_eq!(m.invalid_pct[0], 2479);
        assert_eq!(m.invalid_pct[1], 2458);
        assert_eq!(m.invalid_pct[50], 1315);
        assert_eq!(m.invalid_pct[98], 29);
        assert_eq!(m.invalid_pct[99], 0);
        assert!(m.invalid_pct.windows(2).all(|w| w[0] >= w[1]));
    }

    #[test]
    fn write_amplification_and_the_gc_block_follow_desnoyers() {
        // OP 0.15: WA = 0.5/0.15 + 0.7 = 4.0333..., the GC block 75.2% valid.
        assert!((waf(0.15) - 4.033_333_333).abs() < 1e-6);
        assert!((gc_validity(waf(0.15)) - 0.752_066).abs() < 1e-6);
        assert!((waf(0.5) - 1.7).abs() < 1e-12);
        // The least valid region is the GC block's validity; the last, 1.
        let v = validity_dist(100, 0.15);
        assert!((v[0] - gc_validity(waf(0.15))).abs() < 1e-12);
        assert!((v[99] - 1.0).abs() < 1e-12);
        // One region: all valid (fio's linspace of one value is its start).
        assert_eq!(validity_dist(1, 0.15), vec![1.0]);
    }

    // i * f(i) = k: blocks of low validity take more of the drive, so
    // resampled to equal sizes, validity changes slower from region to
    // region where it is low than where it is high.
    #[test]
    fn the_validity_curve_is_desnoyers_steady_state() {
        let v = validity_dist(100, 0.15);
        let first = v[1] - v[0];
        let last = v[99] - v[98];
        assert!(last > first && first > 0.0, "{first} {last}");
        // The mean validity weighted as written is below 1 and above the GC block.
        let mean = v.iter().sum::<f64>() / 100.0;
        assert!((0.85..0.9).contains(&mean), "{mean}");
    }

    #[test]
    fn the_physical_size_is_rounded_up_then_down_to_a_block() {
        assert_eq!(physical_size(0.15, 1000, 1), 1150);
        assert_eq!(physical_size(0.1, 1001, 1), 1001 + 101);
        assert_eq!(physical_size(0.21, 4096 * 10, 4096), 4096 * 12);
    }

    #[test]
    fn what_cannot_be_modelled_is_said_in_one_line() {
        let bad = |op, n, logical| model(logical, 4096, op, n).unwrap_err();
        assert!(bad(0.0, 100, 1 << 30).contains("between 0 and 1"));
        assert!(bad(1.0, 100, 1 << 30).contains("between 0 and 1"));
        assert!(bad(0.15, 0, 1 << 30).contains("give 1 to"));
        assert!(bad(0.15, 100, 64 << 10).contains("give fewer regions (at most 18)"));
        // 4 TiB in two regions: a buffer of a GiB.
        let e = bad(0.15, 2, 4 << 40);
        assert!(e.contains("give at least"), "{e}");
        let least: u32 = e.rsplit(' ').nth(1).unwrap().parse().unwrap();
        assert!(model(4 << 40, 4096, 0.15, least).is_ok());
        assert!(!e.contains('\n'));
    }
}
