//! Whether a parity volume's members read enough while it was only written
//! to call it read-modify-write: their reads beyond the volume's own, over
//! what they wrote. `document::run::rmw` gathers the counters and words the
//! note; the bounds that decide are here.

/// Reads on the members below this share of what they wrote are not called
/// read-modify-write: a stray metadata read, a probe by udev.
pub const MIN_SHARE_OF_WRITES: f64 = 0.01;
/// Nor are reads below this many bytes, whatever the share.
pub const MIN_BYTES: u64 = 64 << 10;

/// Whether `excess` bytes read by the members (beyond what the volume read
/// itself) while they wrote `members_written` is read-modify-write: at
/// least [`MIN_BYTES`] and [`MIN_SHARE_OF_WRITES`] of the writes.
pub fn is_read_modify_write(excess: u64, members_written: u64) -> bool {
    excess >= MIN_BYTES && excess as f64 >= members_written as f64 * MIN_SHARE_OF_WRITES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_under_either_bound_are_not_read_modify_write() {
        // 64 KiB read of 1 GiB written: under 1 %.
        assert!(!is_read_modify_write(64 << 10, 1 << 30));
        // 32 KiB read of 1 MiB written: over 1 %, but under 64 KiB.
        assert!(!is_read_modify_write(32 << 10, 1 << 20));
        // 64 KiB read of 1 MiB written: both bounds met.
        assert!(is_read_modify_write(64 << 10, 1 << 20));
        // Exactly 1 % of the writes, and at least 64 KiB.
        assert!(is_read_modify_write(100 << 20, 10_000 << 20));
    }
}
