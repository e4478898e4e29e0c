//! Statistics: the latency histogram every worker fills, its summary, its
//! exact merge and its wire form. (A thread's CPU time is read by
//! `base::usage`: reading it is no math.)
//!
//! Histograms cover 1 ns to one hour at 3 significant digits (fio clamps at
//! 17 s); a longer latency is recorded as one hour and counted in `clamped`.

use anyhow::Result;
use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// Highest latency a histogram holds: one hour, in nanoseconds.
pub const HIGHEST_NS: u64 = 3_600 * 1_000_000_000;
/// Significant digits kept.
pub const SIGFIG: u8 = 3;

/// A latency histogram in nanoseconds.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
    /// Samples above [`HIGHEST_NS`], recorded as HIGHEST_NS.
    pub clamped: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> LatencyHistogram {
        LatencyHistogram {
            // The bounds are constants that hdrhistogram accepts (1 ≤ low, high ≥ 2·low, sigfig ≤ 5).
            h: Histogram::new_with_bounds(1, HIGHEST_NS, SIGFIG)
                .expect("constant bounds are valid"),
            clamped: 0,
        }
    }

    /// Records one latency. No allocation: the histogram's counts are sized up front.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if ns > HIGHEST_NS {
            self.clamped += 1;
        }
        self.h.saturating_record(ns.clamp(1, HIGHEST_NS));
    }

    /// Records `n` latencies of `ns` (a bucket's worth, drained from
    /// [`crate::analysis::interval_counts::IntervalCounts`]): `clamped` is the caller's.
    #[inline]
    pub fn record_n(&mut self, ns: u64, n: u64) {
        self.h.saturating_record_n(ns.clamp(1, HIGHEST_NS), n);
    }

    /// Records the `n` values `first - i * step` for `i` in `0..n` (an
    /// arithmetic series going down, each at least 1 ns): the I/Os a
    /// schedule made due `step` apart that were still waiting at one
    /// instant. One `record_n` per bucket the series crosses, not one per
    /// value, so a long backlog costs at most a few thousand steps.
    pub fn record_descending(&mut self, first: u64, step: f64, n: u64) {
        let mut i = 0u64;
        while i < n {
            let v = (first as f64 - i as f64 * step).max(1.0) as u64;
            // The values from here down to the bottom of v's bucket (or to
            // HIGHEST_NS, above it) are one count.
            let (bottom, clamped) = if v > HIGHEST_NS {
                (HIGHEST_NS + 1, true)
            } else {
                (self.h.lowest_equivalent(v), false)
            };
            let m = if step > 0.0 {
                (((v - bottom) as f64 / step).floor() as u64).saturating_add(1)
            } else {
                n - i
            }
            .clamp(1, n - i);
            if clamped {
                self.clamped += m;
            }
            self.h.saturating_record_n(v.clamp(1, HIGHEST_NS), m);
            i += m;
        }
    }

    pub fn len(&self) -> u64 {
        self.h.len()
    }

    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }

    /// Adds every sample of `other` (exact: counts are added bucket by bucket).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Same bounds on both sides, so addition cannot fail.
        self.h.add(&other.h).expect("histograms share bounds");
        self.clamped += other.clamped;
    }

    /// Empties the histogram, keeping its counts array (no allocation).
    pub fn reset(&mut self) {
        self.h.reset();
        self.clamped = 0;
    }

    /// The latency at quantile `q` (0..=1); `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        (!self.h.is_empty()).then(|| self.h.value_at_quantile(q))
    }

    /// The highest latency recorded; `None` when empty.
    pub fn max(&self) -> Option<u64> {
        (!self.h.is_empty()).then(|| self.h.max())
    }

    /// How many samples are at most `ns` (to the histogram's resolution:
    /// a sample counts when its bucket's lowest value is at most `ns`).
    pub fn count_at_most(&self, ns: u64) -> u64 {
        self.h.count_between(0, ns.min(HIGHEST_NS))
    }

    /// The sum of the samples in nanoseconds (each taken at its bucket's middle).
    pub fn sum_ns(&self) -> f64 {
        self.h.mean() * self.h.len() as f64
    }

    pub fn inner(&self) -> &Histogram<u64> {
        &self.h
    }

    /// One interval's latency as the live stream's lines and the run
    /// document's `intervals[]` carry it: mean, p50, p99 and max.
    pub fn interval(h: Option<&LatencyHistogram>) -> IntervalLatency {
        IntervalLatency {
            mean_ns: h
                .filter(|h| !h.h.is_empty())
                .map(|h| h.h.mean().round() as u64),
            p50_ns: h.and_then(|h| h.quantile(0.5)),
            p99_ns: h.and_then(|h| h.quantile(0.99)),
            max_ns: h.and_then(LatencyHistogram::max),
        }
    }

    pub fn summary(&self) -> Option<LatencySummary> {
        if self.h.is_empty() {
            return None;
        }
        let q = |p: f64| self.h.value_at_quantile(p);
        Some(LatencySummary {
            min: self.h.min(),
            mean: self.h.mean(),
            p50: q(0.50),
            p90: q(0.90),
            p99: q(0.99),
            p99_9: q(0.999),
            p99_99: q(0.9999),
            max: self.h.max(),
        })
    }

    /// HdrHistogram V2 encoding (compressed form, cookie 0x1c849314), base64:
    /// the form in the JSON document. Any HdrHistogram library decodes it.
    pub fn to_base64(&self) -> String {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.h, &mut bytes)
            .expect("serializing to memory does not fail");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// A histogram from its wire form (see [`LatencyHistogram::to_base64`]),
    /// refused in one line when it is not one: every length it claims is
    /// checked against what its own header's range can need (and
    /// [`MAX_COUNTS`]) before anything of that length is allocated, and
    /// decompression stops there. hdrhistogram's own reader allocated the
    /// payload length a 56-character histogram claimed: 4 GiB.
    pub fn from_base64(text: &str) -> Result<LatencyHistogram> {
        let h = decode(text)?;
        let mut out = LatencyHistogram::new();
        out.h
            .add(&h)
            .map_err(|_| anyhow::anyhow!("it holds latencies above one hour"))?;
        Ok(out)
    }
}

/// The V2 encoding's cookies (hdrhistogram's, as the Java library writes
/// them): the deflate wrapper that documents carry, and the plain encoding
/// inside it.
const V2_DEFLATE_COOKIE: u32 = 0x1c84_9314;
const V2_COOKIE: u32 = 0x1c84_9313;
/// The wrapper's header: cookie and compressed length.
const OUTER_HEADER: usize = 8;
/// The plain encoding's header: cookie, payload length, normalizing offset,
/// significant digits, lowest and highest trackable value, integer-to-double
/// ratio.
const INNER_HEADER: usize = 40;

/// The most counts a histogram read from a document may have. Ours (1 ns to
/// one hour at 3 digits) have 33,792; this is 16 times that, 4 MiB of
/// counts: room for 3 digits over any range and 4 up to an hour, not for 5
/// over more than a millisecond (u64::MAX / 2 at 5 digits is 6.2 million).
pub const MAX_COUNTS: u64 = 1 << 19;
/// A count's most bytes in the payload (a LEB128 varint of 64 bits).
const MAX_VARINT: u64 = 9;
/// The longest payload any histogram within [`MAX_COUNTS`] has.
const MAX_PAYLOAD: u64 = MAX_COUNTS * MAX_VARINT;
/// The longest compressed form of that: deflate's stored blocks add 5
/// bytes per 16 KiB, zlib 6 in all.
const MAX_COMPRESSED: u64 = (INNER_HEADER as u64 + MAX_PAYLOAD) * 1_001 / 1_000 + 64;
/// The longest base64 text of that: nothing longer is decoded at all.
pub const MAX_BASE64: usize = (OUTER_HEADER + MAX_COMPRESSED as usize).div_ceil(3) * 4;

fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn be_u64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// How many counts hdrhistogram allocates for `low..=high` at `sigfig`
/// digits (its `new_with_bounds`: buckets of `sub_bucket_count` values, each
/// twice as wide as the one before, until one covers `high`); `None` when it
/// refuses those bounds.
pub fn counts_for(low: u64, high: u64, sigfig: u32) -> Option<u64> {
    if !(1..=u64::MAX / 2).contains(&low) || high < 2 * low || sigfig > 5 {
        return None;
    }
    let largest = 2 * 10u64.pow(sigfig);
    // ceil(log2(largest)) and floor(log2(low)), exactly.
    let sub_bucket_magnitude = 64 - (largest - 1).leading_zeros();
    let unit_magnitude = 63 - low.leading_zeros();
    if unit_magnitude + sub_bucket_magnitude > 63 {
        return None;
    }
    let sub_bucket_count = 1u64 << sub_bucket_magnitude;
    let mut untrackable = sub_bucket_count << unit_magnitude;
    let mut buckets = 1u64;
    while untrackable <= high {
        if untrackable > u64::MAX / 2 {
            buckets += 1;
            break;
        }
        untrackable <<= 1;
        buckets += 1;
    }
    Some((buckets + 1) * (sub_bucket_count / 2))
}

/// The V2 deflate encoding in `text`, checked header by header; see
/// [`LatencyHistogram::from_base64`].
fn decode(text: &str) -> Result<Histogram<u64>> {
    use anyhow::bail;
    use std::io::Read;
    if text.len() > MAX_BASE64 {
        bail!(
            "it is {} characters long, more than the {MAX_BASE64} of the largest histogram \
             read here",
            text.len()
        );
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| anyhow::anyhow!("it is not valid base64 ({e})"))?;
    if bytes.len() < OUTER_HEADER {
        bail!(
            "it is truncated: {} bytes, shorter than its header",
            bytes.len()
        );
    }
    match be_u32(&bytes, 0) {
        V2_DEFLATE_COOKIE => {}
        V2_COOKIE => bail!(
            "it is the uncompressed HdrHistogram V2 encoding; documents carry the compressed one \
             (cookie 0x{V2_DEFLATE_COOKIE:08x})"
        ),
        c => bail!(
            "it is not the compressed HdrHistogram V2 encoding (cookie 0x{c:08x}, not \
             0x{V2_DEFLATE_COOKIE:08x})"
        ),
    }
    let compressed = &bytes[OUTER_HEADER..];
    let claimed = u64::from(be_u32(&bytes, 4));
    match claimed.cmp(&(compressed.len() as u64)) {
        std::cmp::Ordering::Greater => bail!(
            "it is truncated: its header claims {claimed} compressed bytes, {} follow",
            compressed.len()
        ),
        std::cmp::Ordering::Less => bail!(
            "it has {} trailing bytes after the {claimed} compressed bytes its header claims",
            compressed.len() as u64 - claimed
        ),
        std::cmp::Ordering::Equal => {}
    }
    let mut z = flate2::read::ZlibDecoder::new(compressed);
    let mut inner = vec![0u8; INNER_HEADER];
    z.read_exact(&mut inner).map_err(|e| {
        anyhow::anyhow!("its compressed data does not hold the V2 header: truncated ({e})")
    })?;
    if be_u32(&inner, 0) != V2_COOKIE {
        bail!(
            "its compressed data is not the HdrHistogram V2 encoding (cookie 0x{:08x}, not \
             0x{V2_COOKIE:08x})",
            be_u32(&inner, 0)
        );
    }
    let payload_len = u64::from(be_u32(&inner, 4));
    let offset = be_u32(&inner, 8);
    let sigfig = be_u32(&inner, 12);
    let (low, high) = (be_u64(&inner, 16), be_u64(&inner, 24));
    let ratio = f64::from_be_bytes(inner[32..40].try_into().expect("8 bytes"));
    if offset != 0 || ratio != 1.0 {
        bail!(
            "its header has a normalizing offset of {offset} and an integer-to-double ratio of \
             {ratio}: a latency histogram has 0 and 1"
        );
    }
    let Some(counts) = counts_for(low, high, sigfig) else {
        bail!(
            "its header claims values {low} to {high} at {sigfig} significant digits, which no \
             HdrHistogram has"
        );
    };
    if counts > MAX_COUNTS {
        bail!(
            "its header claims values {low} to {high} at {sigfig} significant digits: {counts} \
             counts, more than the {MAX_COUNTS} of the largest histogram read here"
        );
    }
    if payload_len > counts * MAX_VARINT {
        bail!(
            "its header claims a payload of {payload_len} bytes, more than the {} its {counts} \
             counts can take",
            counts * MAX_VARINT
        );
    }
    // Bounded by the check above: at most MAX_PAYLOAD, and one byte more
    // tells a stream that goes on.
    inner.reserve_exact(payload_len as usize + 1);
    (&mut z)
        .take(payload_len + 1)
        .read_to_end(&mut inner)
        .map_err(|e| anyhow::anyhow!("its compressed data is damaged ({e})"))?;
    let got = (inner.len() - INNER_HEADER) as u64;
    if got < payload_len {
        bail!("it is truncated: its header claims a payload of {payload_len} bytes, {got} follow");
    }
    if got > payload_len {
        bail!(
            "its compressed data holds more than the {payload_len}-byte payload its header claims"
        );
    }
    let mut rest = [0u8; 1];
    let after = z
        .read(&mut rest)
        .map_err(|e| anyhow::anyhow!("its compressed data is damaged ({e})"))?;
    if after != 0 || z.total_in() != compressed.len() as u64 {
        bail!("it has trailing bytes after its compressed data");
    }
    Deserializer::new()
        .deserialize(&mut inner.as_slice())
        .map_err(|e| anyhow::anyhow!("its counts do not decode ({e})"))
}

/// Latency figures in nanoseconds.
/// One interval's own latencies (a live line's, a document interval's):
/// each `None` when nothing completed in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntervalLatency {
    /// The mean, each latency taken at its bucket's middle (what fio's
    /// windowed latency log writes: `--fio-log`).
    pub mean_ns: Option<u64>,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub max_ns: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencySummary {
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub p99_99: u64,
    pub max: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_descending_series_is_recorded_as_each_value_would_be() {
        for (first, step, n) in [
            (5_000_000_000u64, 2e6, 2_000u64),
            (10_000, 3.5, 2_900),
            (7, 0.0, 5),
            (100, 40.0, 10),
        ] {
            let mut one = LatencyHistogram::new();
            for i in 0..n {
                one.record((first as f64 - i as f64 * step).max(1.0) as u64);
            }
            let mut series = LatencyHistogram::new();
            series.record_descending(first, step, n);
            assert_eq!(series.len(), n);
            let b = |h: &LatencyHistogram| {
                h.inner()
                    .iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(b(&series), b(&one), "{first} {step} {n}");
        }
    }

    #[test]
    fn merge_is_exact() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for i in 1..=10_000u64 {
            let v = i * 997 % 5_000_000 + 1;
            if i % 3 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        let mut m = a.clone();
        m.merge(&b);
        assert_eq!(m.len(), 10_000);
        assert_eq!(m.summary(), all.summary());
    }

    #[test]
    fn covers_one_ns_to_one_hour() {
        let mut h = LatencyHistogram::new();
        h.record(0);
        h.record(1);
        h.record(HIGHEST_NS);
        h.record(HIGHEST_NS * 2);
        let s = h.summary().unwrap();
        assert_eq!(s.min, 1);
        assert!(s.max >= HIGHEST_NS && s.max <= HIGHEST_NS + HIGHEST_NS / 500);
        assert_eq!(h.clamped, 1);
    }

    #[test]
    fn percentiles_are_ordered_and_precise() {
        let mut h = LatencyHistogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        let s = h.summary().unwrap();
        assert!(s.min <= s.p50 && s.p50 <= s.p90 && s.p90 <= s.p99);
        assert!(s.p99 <= s.p99_9 && s.p99_9 <= s.p99_99 && s.p99_99 <= s.max);
        assert!(
            (s.p50 as f64 - 500_000.0).abs() / 500_000.0 < 0.002,
            "{}",
            s.p50
        );
    }

    #[test]
    fn base64_round_trip() {
        let mut h = LatencyHistogram::new();
        for v in [5, 50, 500, 5_000, 5_000_000] {
            h.record(v);
        }
        let back = LatencyHistogram::from_base64(&h.to_base64()).unwrap();
        assert_eq!(back.summary(), h.summary());
        assert!(LatencyHistogram::from_base64("not base64!").is_err());
        assert!(LatencyHistogram::from_base64("AAAA").is_err());
    }

    #[test]
    fn counts_for_is_what_hdrhistogram_allocates() {
        for (low, high, sigfig) in [
            (1, HIGHEST_NS, 3),
            (1, HIGHEST_NS, 2),
            (1, HIGHEST_NS, 4),
            (1, 2, 0),
            (1000, 17_000_000_000, 3),
            (1, u64::MAX, 3),
            (1, u64::MAX / 2, 5),
            (3, 1 << 40, 1),
        ] {
            let h = Histogram::<u64>::new_with_bounds(low, high, sigfig as u8).unwrap();
            assert_eq!(
                counts_for(low, high, sigfig),
                Some(h.distinct_values() as u64),
                "{low} {high} {sigfig}"
            );
        }
        for (low, high, sigfig) in [(0, 10, 3), (5, 9, 3), (1, 10, 6), (1 << 60, u64::MAX, 5)] {
            assert!(Histogram::<u64>::new_with_bounds(low, high, sigfig as u8).is_err());
            assert_eq!(counts_for(low, high, sigfig), None, "{low} {high} {sigfig}");
        }
    }

    #[test]
    fn a_histogram_of_another_range_within_the_ceiling_is_read() {
        // 4 digits up to an hour: 475,136 counts, under MAX_COUNTS.
        let mut h = Histogram::<u64>::new_with_bounds(1, HIGHEST_NS, 4).unwrap();
        assert!(h.distinct_values() as u64 <= MAX_COUNTS);
        for v in [1, 7, 1_000, 123_456_789, HIGHEST_NS] {
            h.record(v).unwrap();
        }
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&h, &mut bytes)
            .unwrap();
        let text = base64::engine::general_purpose::STANDARD.encode(bytes);
        assert!(text.len() <= MAX_BASE64);
        let back = LatencyHistogram::from_base64(&text).unwrap();
        assert_eq!(back.len(), 5);
        // 5 digits up to an hour: 3.4 million counts, refused unread.
        let wide = Histogram::<u64>::new_with_bounds(1, HIGHEST_NS, 5).unwrap();
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&wide, &mut bytes)
            .unwrap();
        let e =
            LatencyHistogram::from_base64(&base64::engine::general_purpose::STANDARD.encode(bytes))
                .unwrap_err();
        assert!(e.to_string().contains("3407872 counts, more than"), "{e}");
    }

    // Regression (issue 13, item 18): this test added a constant (600
    // intervals) to the histogram's size, so it could not see how much a
    // worker really allocates. It now measures the histogram only, before and
    // after recording across its whole range; the interval series is checked
    // end to end in tests/run.rs.
    #[test]
    fn a_worker_histogram_is_allocated_once_and_stays_under_one_mib() {
        let mut h = LatencyHistogram::new();
        let slots = h.inner().distinct_values();
        let bytes = slots * std::mem::size_of::<u64>();
        assert!(bytes < 1 << 20, "histogram counts take {bytes} B");
        for ns in [
            1,
            999,
            1_000_000,
            1_000_000_000,
            HIGHEST_NS,
            HIGHEST_NS * 10,
        ] {
            h.record(ns);
        }
        assert_eq!(
            h.inner().distinct_values(),
            slots,
            "recording over the whole range never grows the counts"
        );
        assert_eq!(h.len(), 6);
        assert_eq!(h.clamped, 1);
    }
}
