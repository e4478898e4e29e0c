//! Whether a target's device did I/O that was not the run's own: its
//! counters (`/sys/dev/block/M:m/stat`, over the run's span) against the
//! bytes the run's workers moved on it in the same span.
//!
//! Only what can be told is judged. In a direction the run did not use
//! (reads in a write run), every byte the device moved is another's. In a
//! direction it used with O_DIRECT, each of its bytes reaches the device
//! once, so what the device moved beyond them is another's. In a direction
//! it used through the page cache, read-ahead and write-back move the
//! counters by more or less than the run's bytes on their own, so nothing
//! is said of that direction. What is left after that is another's when it
//! exceeds [`tolerance`]: a file system's metadata, udev's probe of a
//! device closed after writing, the kernel's partition scan stay under it.

/// The least foreign I/O that is said: 1 MiB ...
pub const TOLERANCE_MIN_BYTES: u64 = 1 << 20;
/// ... or 1% of the run's own bytes on the device, whichever is larger.
pub const TOLERANCE_SHARE: f64 = 0.01;

/// How the run's own I/O in one direction reached the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Own {
    /// The run moved nothing in this direction.
    Nothing,
    /// O_DIRECT: each byte reaches the device once.
    Direct,
    /// Through the page cache: the counters cannot be matched to it.
    Buffered,
}

impl Own {
    /// `app_bytes` the run moved in a direction, `direct` or not.
    pub fn of(app_bytes: u64, direct: bool) -> Own {
        match (app_bytes, direct) {
            (0, _) => Own::Nothing,
            (_, true) => Own::Direct,
            (_, false) => Own::Buffered,
        }
    }
}

/// The foreign I/O found on a device: bytes beyond the run's own in each
/// direction (`None`: that direction could not be told), and the tolerance
/// they were held to. In a run document: a target's `foreign_io`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Foreign {
    pub read_bytes: Option<u64>,
    pub write_bytes: Option<u64>,
    pub tolerance: u64,
}

/// The tolerance for a run that moved `own_bytes` (both directions) on the device.
pub fn tolerance(own_bytes: u64) -> u64 {
    TOLERANCE_MIN_BYTES.max((own_bytes as f64 * TOLERANCE_SHARE).ceil() as u64)
}

/// Bytes the device moved in one direction beyond the run's own, when that
/// can be told.
fn beyond(device: u64, app: u64, own: Own) -> Option<u64> {
    match own {
        Own::Nothing => Some(device),
        Own::Direct => Some(device.saturating_sub(app)),
        Own::Buffered => None,
    }
}

/// The device's (read, written) bytes against the run's own (`app_*`,
/// `direct` or through the page cache): the foreign I/O when some direction
/// exceeds [`tolerance`], `None` when none does or none can be told.
pub fn judge(
    (device_read, device_write): (u64, u64),
    (app_read, app_write): (u64, u64),
    direct: bool,
) -> Option<Foreign> {
    let read_bytes = beyond(device_read, app_read, Own::of(app_read, direct));
    let write_bytes = beyond(device_write, app_write, Own::of(app_write, direct));
    let tolerance = tolerance(app_read + app_write);
    let over = |b: Option<u64>| b.is_some_and(|b| b > tolerance);
    (over(read_bytes) || over(write_bytes)).then_some(Foreign {
        read_bytes,
        write_bytes,
        tolerance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn direct_reads_beyond_the_runs_own_are_anothers() {
        // 400 MiB read by the run, 520 by the device: 120 MiB another's.
        let f = judge((520 * MIB, 0), (400 * MIB, 0), true).unwrap();
        assert_eq!(f.read_bytes, Some(120 * MIB));
        assert_eq!(f.write_bytes, Some(0));
        assert_eq!(f.tolerance, 4 * MIB);
        // Within 1% (or 1 MiB): nothing said.
        assert_eq!(judge((403 * MIB, 0), (400 * MIB, 0), true), None);
        assert_eq!(judge((MIB / 2, 0), (0, 0), true), None);
    }

    #[test]
    fn a_direction_the_run_did_not_use_is_all_anothers() {
        // A read-only buffered run: the reads cannot be told (read-ahead),
        // the writes can (it wrote nothing).
        let f = judge((900 * MIB, 64 * MIB), (400 * MIB, 0), false).unwrap();
        assert_eq!(f.read_bytes, None);
        assert_eq!(f.write_bytes, Some(64 * MIB));
        // Buffered reads alone, however far from the run's: nothing to tell.
        assert_eq!(judge((900 * MIB, 0), (400 * MIB, 0), false), None);
        assert_eq!(judge((10 * MIB, 0), (400 * MIB, 0), false), None);
    }

    #[test]
    fn the_tolerance_is_a_mebibyte_or_one_percent() {
        assert_eq!(tolerance(0), MIB);
        assert_eq!(tolerance(50 * MIB), MIB);
        assert_eq!(tolerance(1000 * MIB), 10 * MIB);
        // Just over: said.
        assert!(judge((0, MIB + 512), (0, 0), true).is_some());
        assert!(judge((0, MIB), (0, 0), true).is_none());
    }
}
