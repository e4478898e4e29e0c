//! Read-modify-write seen in the device counters: a volume that was only
//! written while its members read. A parity array (md raid4/5/6, dm-raid)
//! that gets a write smaller than a full stripe reads the old data and
//! parity (or the rest of the stripe) to compute the new parity; the
//! members' own counters, which every run of a stacked volume records
//! beside the volume's (`DeviceCounters::members`: its leaves, by sysfs's
//! `slaves/`), show those reads. A function of the counters only, so that
//! a run's assembly and compare's write phases say it alike.

use crate::base::warning::Warning;
use crate::device::devstat::DeviceCounters;
use crate::document::run::TargetDoc;

/// The read-modify-write note of one volume (`path`, as its target is
/// named) from its counters over a run or a phase: when the application
/// wrote it and read nothing, and its members, counted by their own device
/// counters, read more than the volume itself did (by at least 1 % of what
/// they wrote, and 64 KiB). Members that keep no statistics (brd) are left
/// out of the sums; none that do, or a volume without members or without
/// statistics, says nothing.
pub fn read_modify_write(path: &str, volume: &DeviceCounters) -> Option<Warning> {
    if !volume.stats || volume.app_read_bytes > 0 || volume.app_write_bytes == 0 {
        return None;
    }
    let counted: Vec<&DeviceCounters> = volume.members.iter().filter(|m| m.stats).collect();
    if counted.is_empty() {
        return None;
    }
    let members_read: u64 = counted.iter().map(|m| m.read_bytes).sum();
    let members_written: u64 = counted.iter().map(|m| m.write_bytes).sum();
    let excess = members_read.saturating_sub(volume.read_bytes);
    // The bounds that decide are analysis/'s.
    if !crate::analysis::rmw::is_read_modify_write(excess, members_written) {
        return None;
    }
    Some(Warning::ReadModifyWrite {
        path: path.to_string(),
        members_read,
        volume_read: volume.read_bytes,
        members_reading: counted.iter().filter(|m| m.read_bytes > 0).count(),
        members: counted.len(),
    })
}

/// The note for every target of a run (or a phase) whose counters show it.
pub fn seen(targets: &[TargetDoc]) -> Vec<Warning> {
    targets
        .iter()
        .filter_map(|t| read_modify_write(&t.path, t.device.as_ref()?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn counters(name: &str, read: u64, write: u64) -> DeviceCounters {
        DeviceCounters {
            name: name.into(),
            read_bytes: read,
            write_bytes: write,
            read_ios: read / 4096,
            write_ios: write / 4096,
            ios: (read + write) / 4096,
            util_pct: 50.0,
            span_seconds: 2.0,
            app_read_bytes: 0,
            app_write_bytes: 0,
            read_ratio: None,
            write_ratio: None,
            shared: false,
            window_write_bytes: None,
            stats: true,
            avg_read_request_bytes: None,
            avg_write_request_bytes: None,
            read_merges: 0,
            write_merges: 0,
            members: Vec::new(),
        }
    }

    /// md0 written `app` bytes by the run, its members having read `reads`.
    fn volume(app_write: u64, reads: &[u64]) -> DeviceCounters {
        let mut v = counters("md0", 0, app_write);
        v.app_write_bytes = app_write;
        v.members = reads
            .iter()
            .enumerate()
            .map(|(i, &r)| counters(&format!("loop{i}"), r, app_write / 3))
            .collect();
        v
    }

    #[test]
    fn members_that_read_under_a_volume_only_written_are_read_modify_write() {
        let v = volume(300 * MIB, &[103 * MIB, 103 * MIB, 103 * MIB, 103 * MIB]);
        let w = read_modify_write("/dev/md0", &v).unwrap();
        assert_eq!(
            w.to_string(),
            "/dev/md0: members read 412.0 MiB while the volume was only written: read-modify-write (sub-stripe writes); 4 of 4 members read"
        );
        assert_eq!(w.subject(), Some(("targets", "/dev/md0")));
    }

    #[test]
    fn full_stripe_writes_reads_or_a_stray_read_say_nothing() {
        // Full stripes: the members only wrote.
        assert!(read_modify_write("/dev/md0", &volume(300 * MIB, &[0, 0, 0, 0])).is_none());
        // A 4 KiB probe, and reads under 1 % of what the members wrote.
        assert!(read_modify_write("/dev/md0", &volume(300 * MIB, &[4096, 0, 0, 0])).is_none());
        assert!(read_modify_write("/dev/md0", &volume(300 * MIB, &[MIB, 0, 0, 0])).is_none());
        // A run that read the volume: the members' reads are its reads.
        let mut v = volume(300 * MIB, &[100 * MIB; 4]);
        v.app_read_bytes = 400 * MIB;
        assert!(read_modify_write("/dev/md0", &v).is_none());
        // A volume without members, or one that keeps no statistics.
        let mut v = volume(300 * MIB, &[]);
        assert!(read_modify_write("/dev/md0", &v).is_none());
        v = volume(300 * MIB, &[100 * MIB; 4]);
        v.stats = false;
        assert!(read_modify_write("/dev/md0", &v).is_none());
    }

    #[test]
    fn members_without_statistics_are_left_out_and_the_volumes_own_reads_subtracted() {
        let mut v = volume(300 * MIB, &[50 * MIB, 50 * MIB, 0, 0]);
        v.members[3].stats = false;
        v.read_bytes = 10 * MIB;
        let w = read_modify_write("/dev/md0", &v).unwrap().to_string();
        assert_eq!(
            w,
            "/dev/md0: members read 90.0 MiB more than the volume's own reads (10.0 MiB) while it was written: read-modify-write (sub-stripe writes); 2 of 3 members read"
        );
        // Every member without statistics: nothing to judge by.
        v.members.iter_mut().for_each(|m| m.stats = false);
        assert!(read_modify_write("/dev/md0", &v).is_none());
    }
}
