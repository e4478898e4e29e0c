//! Little's law as a check a reader can make of any run: I/Os times their
//! mean latency is the time I/Os spent in flight, and no more than the
//! I/O slots (the depth of each worker, times the workers) were ever in
//! flight over the window. A document whose I/Os would have needed more
//! time in flight than its slots had cannot come from a run, whatever its
//! rates say; a run prints the same figure as a self-check (mean I/Os in
//! flight = IOPS x mean latency, against the depth it asked for).
//!
//! The bound is exact for latencies measured from issue to completion (a
//! buffered write's excludes its flush, which is not in flight then, so the
//! bound still holds). An I/O counted in the window completed in it but
//! may have been issued before it opened (in the ramp), up to the longest
//! latency earlier: the room is the window plus that. Latencies measured
//! from a schedule's due times (`--rate`) include time waiting for a slot,
//! which no depth bounds: those are not checked. The slack covers the
//! histogram's buckets (its mean is within 1 % of the true one) and clock
//! reads.

/// What a run says of its time in flight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Occupancy {
    /// I/Os counted in the window.
    pub ios: u64,
    /// Their mean latency, issue to completion (ns).
    pub mean_ns: f64,
    /// Their longest latency (ns).
    pub max_ns: u64,
    /// The window's length (s).
    pub seconds: f64,
    /// I/Os that can be in flight at once: --iodepth x workers.
    pub slots: u64,
}

/// Relative slack: the histogram's mean is within 1 % of the latencies'.
pub const TOLERANCE: f64 = 0.02;
/// Absolute slack per slot (s): clock reads around each I/O.
const SLACK_SEC: f64 = 1e-3;

impl Occupancy {
    /// Seconds the I/Os spent in flight, summed (I/Os x mean latency).
    pub fn busy_sec(&self) -> f64 {
        self.ios as f64 * self.mean_ns / 1e9
    }

    /// Mean I/Os in flight over the window: IOPS x mean latency.
    pub fn mean_in_flight(&self) -> f64 {
        if self.seconds > 0.0 {
            self.busy_sec() / self.seconds
        } else {
            0.0
        }
    }

    /// The most seconds in flight the slots had room for: each slot over
    /// the window and the longest latency before it.
    pub fn room_sec(&self) -> f64 {
        self.slots as f64 * (self.seconds + self.max_ns as f64 / 1e9)
    }

    /// Whether the I/Os fit in the slots: `busy_sec` within `room_sec`,
    /// with the slack. No I/O always fits.
    pub fn fits(&self) -> bool {
        self.ios == 0
            || self.busy_sec()
                <= self.room_sec() * (1.0 + TOLERANCE) + self.slots as f64 * SLACK_SEC
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occ(ios: u64, mean_us: f64, max_us: u64, seconds: f64, slots: u64) -> Occupancy {
        Occupancy {
            ios,
            mean_ns: mean_us * 1e3,
            max_ns: max_us * 1000,
            seconds,
            slots,
        }
    }

    #[test]
    fn the_ios_fit_in_the_slots_or_the_document_is_impossible() {
        // (I/Os, mean µs, max µs, window s, slots, fits)
        let table = [
            // The issue's: 8672 I/Os of 115 µs, one in flight, 1 s: fits.
            (8672, 115.0, 900, 1.0, 1, true),
            // The same I/Os claimed in a tenth of the window: 0.997 s of
            // flight in 0.1 s (+0.9 ms) for one slot.
            (8672, 115.0, 900, 0.1, 1, false),
            // Eight slots have eight times the room.
            (8672, 115.0, 900, 0.13, 8, true),
            // A window of 1 s full at depth 32 over 4 workers.
            (1_000_000, 128.0, 2_000, 1.0, 128, true),
            // Within the histogram's 1 %.
            (10_000, 101.0, 150, 1.0, 1, true),
            // 5 % over: not.
            (10_000, 105.0, 150, 0.95, 1, false),
            // An I/O counted in the window may have been issued in the ramp.
            (2, 1_000_000.0, 1_000_000, 1.0, 1, true),
            // No I/O, no window to speak of.
            (0, 0.0, 0, 0.0, 1, true),
        ];
        for (ios, mean, max, secs, slots, fits) in table {
            let o = occ(ios, mean, max, secs, slots);
            assert_eq!(
                o.fits(),
                fits,
                "{o:?}: busy {} room {}",
                o.busy_sec(),
                o.room_sec()
            );
        }
    }

    #[test]
    fn mean_in_flight_is_iops_times_mean_latency() {
        let o = occ(8672, 115.0, 900, 1.0, 1);
        assert!((o.mean_in_flight() - 0.99728).abs() < 1e-9);
        assert_eq!(occ(0, 0.0, 0, 0.0, 1).mean_in_flight(), 0.0);
    }
}
