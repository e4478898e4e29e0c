//! The latencies of the interval in progress: what a worker records each
//! I/O's latency into, once, and drains at the interval's end into the
//! histograms that keep them (the run's total, the live tap's interval,
//! a `--log-interval` interval that spans several live ones).
//!
//! The counts have the total's buckets exactly (1 ns to one hour at 3
//! significant digits, as [`LatencyHistogram::new`]), so draining them is
//! exact: the total holds what it would have held had each latency been
//! recorded into it. Unlike the total, only the buckets between the lowest
//! and the highest recorded are walked to drain and to empty them, and only
//! their pages are ever touched: a worker whose latencies span a decade
//! pays for that decade, not for 270 KiB of counts from 1 ns to an hour
//! at every interval's end (which is why an interval's own histogram was
//! once kept at 2 digits, and each latency recorded twice).

use crate::analysis::histogram::{IntervalLatency, LatencyHistogram, HIGHEST_NS};

/// Sub-buckets per power of two, halved: 3 significant digits need 2,048
/// values at unit resolution (hdrhistogram's layout for 1 ns..1 h, 3 digits).
const HALF_MAGNITUDE: u32 = 10;
const HALF: usize = 1 << HALF_MAGNITUDE;
/// Values below this have a bucket each.
const UNIT_BELOW: u64 = 2 * HALF as u64;

/// The bucket of `v` (1..=HIGHEST_NS).
#[inline]
const fn index(v: u64) -> usize {
    if v < UNIT_BELOW {
        v as usize
    } else {
        // Above 2,048: 1,024 buckets per power of two, each 2^b wide.
        let b = 63 - v.leading_zeros() - HALF_MAGNITUDE;
        ((b as usize) << HALF_MAGNITUDE) + (v >> b) as usize
    }
}

/// The lowest value of bucket `i`.
#[inline]
fn lowest(i: usize) -> u64 {
    if i < UNIT_BELOW as usize {
        i as u64
    } else {
        let b = (i >> HALF_MAGNITUDE) - 1;
        ((i - (b << HALF_MAGNITUDE)) as u64) << b
    }
}

/// The highest value of bucket `i` (what a quantile in it reads as).
fn highest(i: usize) -> u64 {
    lowest(i + 1) - 1
}

/// Buckets from 0 to HIGHEST_NS's.
const LEN: usize = index(HIGHEST_NS) + 1;

/// One interval's latency counts (see the module's header).
pub struct IntervalCounts {
    /// Zeroed by the allocator, so a bucket never recorded into costs no
    /// memory until its page is first written.
    counts: Box<[u64]>,
    /// The lowest and highest bucket recorded since the last drain
    /// (`lo > hi` when empty).
    lo: usize,
    hi: usize,
    total: u64,
    /// Latencies above HIGHEST_NS, recorded as HIGHEST_NS.
    clamped: u64,
}

impl Default for IntervalCounts {
    fn default() -> Self {
        IntervalCounts::new()
    }
}

impl IntervalCounts {
    pub fn new() -> IntervalCounts {
        IntervalCounts {
            counts: vec![0u64; LEN].into_boxed_slice(),
            lo: LEN,
            hi: 0,
            total: 0,
            clamped: 0,
        }
    }

    /// Records one latency: one increment and two comparisons.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if ns > HIGHEST_NS {
            self.clamped += 1;
        }
        let i = index(ns.clamp(1, HIGHEST_NS));
        self.counts[i] += 1;
        self.lo = self.lo.min(i);
        self.hi = self.hi.max(i);
        self.total += 1;
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub fn len(&self) -> u64 {
        self.total
    }

    /// p50, p99 and max of these counts and `other`'s together (a mixed
    /// pattern's reads and writes), read as the total's histogram reads
    /// them (hdrhistogram's quantile: the highest value of the bucket
    /// where the count reaches ⌈q·n⌉).
    pub fn interval(&self, other: Option<&IntervalCounts>) -> IntervalLatency {
        let parts = || std::iter::once(self).chain(other);
        let total: u64 = parts().map(|p| p.total).sum();
        if total == 0 {
            return IntervalLatency::default();
        }
        // An empty part's `lo > hi` stays out of the walk's bounds.
        let lo = parts().map(|p| p.lo).min().unwrap_or(LEN);
        let hi = parts()
            .filter(|p| p.total > 0)
            .map(|p| p.hi)
            .max()
            .unwrap_or(0);
        let target = |q: f64| ((q * total as f64).ceil() as u64).max(1);
        let (t50, t99) = (target(0.5), target(0.99));
        let (mut p50, mut p99) = (None, None);
        let mut seen = 0u64;
        // The mean, each latency at its bucket's middle, summed as the
        // total's histogram sums it (so the two agree to the last digit):
        // the walk goes on to `hi`.
        let mut mean = 0.0f64;
        for i in lo..=hi {
            let c = parts().map(|p| p.counts[i]).sum::<u64>();
            if c == 0 {
                continue;
            }
            seen += c;
            let middle = lowest(i) + (highest(i) + 1 - lowest(i)) / 2;
            mean += middle as f64 * c as f64 / total as f64;
            if p50.is_none() && seen >= t50 {
                p50 = Some(highest(i));
            }
            if p99.is_none() && seen >= t99 {
                p99 = Some(highest(i));
            }
        }
        IntervalLatency {
            mean_ns: Some(mean.round() as u64),
            p50_ns: p50,
            p99_ns: p99,
            max_ns: Some(highest(hi)),
        }
    }

    /// Adds every latency here to each of `into` and to `also` (when
    /// given), then empties these counts: one walk from the lowest bucket
    /// recorded to the highest.
    pub fn drain(
        &mut self,
        into: &mut [&mut LatencyHistogram],
        mut also: Option<&mut IntervalCounts>,
    ) {
        if self.total == 0 {
            return;
        }
        for i in self.lo..=self.hi {
            let c = std::mem::take(&mut self.counts[i]);
            if c == 0 {
                continue;
            }
            let v = lowest(i);
            for h in into.iter_mut() {
                h.record_n(v, c);
            }
            if let Some(a) = also.as_deref_mut() {
                a.counts[i] += c;
            }
        }
        for h in into.iter_mut() {
            h.clamped += self.clamped;
        }
        if let Some(a) = also {
            a.lo = a.lo.min(self.lo);
            a.hi = a.hi.max(self.hi);
            a.total += self.total;
            a.clamped += self.clamped;
        }
        (self.lo, self.hi, self.total, self.clamped) = (LEN, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spread of latencies from 1 ns to past an hour, deterministic.
    fn latencies() -> Vec<u64> {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut v = vec![
            0,
            1,
            2,
            2047,
            2048,
            2049,
            4095,
            4096,
            HIGHEST_NS,
            HIGHEST_NS + 5,
        ];
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Spread over every power of two up to 2^42.
            v.push(x >> (22 + x % 42));
        }
        v
    }

    #[test]
    fn the_buckets_are_the_total_histograms_buckets() {
        let h = LatencyHistogram::new();
        for v in latencies().into_iter().map(|v| v.clamp(1, HIGHEST_NS)) {
            let i = index(v);
            assert!(i < LEN, "{v} -> {i} beyond {LEN}");
            assert_eq!(lowest(i), h.inner().lowest_equivalent(v), "lowest of {v}");
            assert_eq!(
                highest(i),
                h.inner().highest_equivalent(v),
                "highest of {v}"
            );
        }
        assert_eq!(index(HIGHEST_NS), LEN - 1);
    }

    #[test]
    fn drained_counts_equal_recording_each_latency_into_the_total() {
        let (mut direct, mut drained, mut tap) = (
            LatencyHistogram::new(),
            LatencyHistogram::new(),
            LatencyHistogram::new(),
        );
        let mut cur = IntervalCounts::new();
        let mut log = IntervalCounts::new();
        for (k, v) in latencies().into_iter().enumerate() {
            direct.record(v);
            cur.record(v);
            if k % 997 == 0 {
                cur.drain(&mut [&mut drained, &mut tap], Some(&mut log));
            }
        }
        cur.drain(&mut [&mut drained, &mut tap], Some(&mut log));
        assert!(cur.is_empty());
        assert_eq!(drained.to_base64(), direct.to_base64());
        assert_eq!(tap.to_base64(), direct.to_base64());
        assert_eq!(
            (drained.clamped, log.clamped),
            (direct.clamped, direct.clamped)
        );
        assert_eq!(drained.summary(), direct.summary());
        // The interval read from the accumulated counts is the total's.
        assert_eq!(
            log.interval(None),
            LatencyHistogram::interval(Some(&direct))
        );
    }

    #[test]
    fn an_intervals_quantiles_are_the_total_histograms_quantiles() {
        let all = latencies();
        for n in [1usize, 2, 3, 99, 100, 101, 5000] {
            let (mut reads, mut writes, mut h) = (
                IntervalCounts::new(),
                IntervalCounts::new(),
                LatencyHistogram::new(),
            );
            for (k, &v) in all.iter().take(n).enumerate() {
                h.record(v);
                if k % 3 == 0 {
                    writes.record(v)
                } else {
                    reads.record(v)
                }
            }
            assert_eq!(
                reads.interval(Some(&writes)),
                LatencyHistogram::interval(Some(&h)),
                "n = {n}"
            );
        }
        let empty = IntervalCounts::new();
        assert_eq!(
            empty.interval(Some(&IntervalCounts::new())),
            LatencyHistogram::interval(None)
        );
    }
}
