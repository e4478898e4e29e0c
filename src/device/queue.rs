//! A block device's request-queue limits (`/sys/block/DEV/queue/`): how
//! large one request may be and how many memory segments it may gather.
//! They decide whether a large O_DIRECT I/O reaches the device whole or
//! split into several requests, which the device counters then show.

use std::fs;
use std::path::Path;

/// The limits that shape requests, as the kernel reports them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueLimits {
    /// Largest request the block layer builds, KiB.
    pub max_sectors_kb: Option<u64>,
    /// Largest request the hardware takes, KiB.
    pub max_hw_sectors_kb: Option<u64>,
    /// Memory segments one request may gather.
    pub max_segments: Option<u64>,
    /// Largest segment, bytes.
    pub max_segment_size: Option<u64>,
    pub nr_requests: Option<u64>,
    pub minimum_io_size: Option<u64>,
    pub optimal_io_size: Option<u64>,
    /// Whether the device keeps I/O statistics.
    pub iostats: Option<bool>,
    pub dax: Option<bool>,
}

fn num(dir: &Path, name: &str) -> Option<u64> {
    fs::read_to_string(dir.join(name)).ok()?.trim().parse().ok()
}

/// The page size, for the segment arithmetic.
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

impl QueueLimits {
    /// Reads a `queue/` directory; `None` when there is none.
    pub fn read(queue: &Path) -> Option<QueueLimits> {
        if !queue.is_dir() {
            return None;
        }
        Some(QueueLimits {
            max_sectors_kb: num(queue, "max_sectors_kb"),
            max_hw_sectors_kb: num(queue, "max_hw_sectors_kb"),
            max_segments: num(queue, "max_segments"),
            max_segment_size: num(queue, "max_segment_size"),
            nr_requests: num(queue, "nr_requests"),
            minimum_io_size: num(queue, "minimum_io_size"),
            optimal_io_size: num(queue, "optimal_io_size"),
            iostats: num(queue, "iostats").map(|v| v != 0),
            dax: num(queue, "dax").map(|v| v != 0),
        })
    }

    /// The queue of device `major:minor` under `sysfs` (a partition's is its disk's).
    pub fn of_device(sysfs: &Path, (major, minor): (u64, u64)) -> Option<QueueLimits> {
        let dev = sysfs.join(format!("dev/block/{major}:{minor}"));
        QueueLimits::read(&dev.join("queue")).or_else(|| QueueLimits::read(&dev.join("../queue")))
    }

    /// Whether device `major:minor` completes polled I/O (`queue/io_poll`,
    /// a partition's its disk's): `None` when it has no queue to say.
    pub fn polls(sysfs: &Path, (major, minor): (u64, u64)) -> Option<bool> {
        let dev = sysfs.join(format!("dev/block/{major}:{minor}"));
        num(&dev.join("queue"), "io_poll")
            .or_else(|| num(&dev.join("../queue"), "io_poll"))
            .map(|v| v != 0)
    }

    /// The queue of the device the kernel calls `name` (`loop0`, `md0`,
    /// `sda1`: a partition's is its disk's).
    pub fn of_name(name: &str) -> Option<QueueLimits> {
        let class = crate::base::host::Host::real().class_block().join(name);
        QueueLimits::read(&class.join("queue"))
            .or_else(|| QueueLimits::read(&class.join("../queue")))
    }

    /// Largest request in bytes, when known.
    pub fn max_request_bytes(&self) -> Option<u64> {
        self.max_sectors_kb.map(|k| k * 1024)
    }

    /// Why an I/O of `bs` bytes may reach the device as several requests,
    /// naming the limit: the request size first (certain), then the segment
    /// count (when the buffer is in pages of `page` bytes that are not
    /// contiguous in physical memory, each page is a segment).
    pub fn split_reason(&self, bs: u64, page: u64) -> Option<String> {
        if let Some(max) = self.max_request_bytes().filter(|&m| bs > m) {
            return Some(format!(
                "max_sectors_kb is {} (one request carries at most {}), so each I/O becomes {} requests",
                max / 1024,
                crate::base::units::fmt_bytes(max),
                bs.div_ceil(max)
            ));
        }
        // A striped volume (md, dm-stripe, an LVM striped LV) advertises its
        // chunk as minimum_io_size and its full stripe as optimal_io_size,
        // and splits an I/O at its chunks, one piece per member it reaches:
        // dm counts each piece as a request.
        if let (Some(min), Some(opt)) = (self.minimum_io_size, self.optimal_io_size) {
            if min > 4096 && opt > min && opt % min == 0 && bs > min {
                return Some(format!(
                    "it stripes in chunks of {} (a full stripe is {}): each I/O is cut at its chunks, one request per piece",
                    crate::base::units::fmt_bytes(min),
                    crate::base::units::fmt_bytes(opt)
                ));
            }
        }
        if let Some(segs) = self.max_segments.filter(|&s| bs > s * page) {
            return Some(format!(
                "max_segments is {segs}: a buffer of scattered {} pages needs one segment per page, so one request carries at most {} (huge-page buffers avoid this)",
                crate::base::units::fmt_bytes(page),
                crate::base::units::fmt_bytes(segs * page)
            ));
        }
        if let Some(seg) = self.max_segment_size.filter(|&s| s < page) {
            return Some(format!(
                "max_segment_size is {seg} bytes, smaller than a page"
            ));
        }
        None
    }

    /// One line for `topology`.
    pub fn render(&self) -> String {
        let n = |v: Option<u64>| v.map_or("?".into(), |v| v.to_string());
        let b = |v: Option<bool>| match v {
            Some(true) => "on",
            Some(false) => "off",
            None => "?",
        };
        format!(
            "queue: max_sectors_kb {} (hw {}), max_segments {}, max_segment_size {}, nr_requests {}, io min {} opt {}, iostats {}, dax {}",
            n(self.max_sectors_kb),
            n(self.max_hw_sectors_kb),
            n(self.max_segments),
            n(self.max_segment_size),
            n(self.nr_requests),
            n(self.minimum_io_size),
            n(self.optimal_io_size),
            b(self.iostats),
            b(self.dax)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_kb: u64, segs: u64) -> QueueLimits {
        QueueLimits {
            max_sectors_kb: Some(max_kb),
            max_segments: Some(segs),
            max_segment_size: Some(65536),
            ..Default::default()
        }
    }

    #[test]
    fn the_limit_that_splits_a_request_is_named() {
        let r = limits(128, 254).split_reason(1 << 20, 4096).unwrap();
        assert!(
            r.contains("max_sectors_kb is 128") && r.contains("8 requests"),
            "{r}"
        );
        let r = limits(1280, 254).split_reason(1 << 20, 4096).unwrap();
        assert!(r.contains("max_segments is 254"), "{r}");
        assert_eq!(limits(1280, 254).split_reason(512 << 10, 4096), None);
        assert_eq!(limits(1280, 512).split_reason(1 << 20, 4096), None);
    }

    #[test]
    fn a_striped_volume_splits_at_its_chunks_not_at_max_segments() {
        // Seen in the lab: 1 MiB O_DIRECT reads of a dm-stripe (chunk 64k)
        // counted as 64 KiB requests, blamed on max_segments (512 KiB).
        let mut q = limits(1280, 128);
        q.minimum_io_size = Some(65536);
        q.optimal_io_size = Some(262144);
        let r = q.split_reason(1 << 20, 4096).unwrap();
        assert!(r.contains("chunks of 64.0 KiB"), "{r}");
        assert!(!r.contains("max_segments"), "{r}");
        // A request of one chunk is not split by the striping.
        assert_eq!(q.split_reason(65536, 4096), None);
    }

    #[test]
    fn reads_a_queue_directory() {
        let t = tempfile::tempdir().unwrap();
        let q = t.path().join("queue");
        fs::create_dir(&q).unwrap();
        for (f, v) in [
            ("max_sectors_kb", "1280"),
            ("max_hw_sectors_kb", "2560"),
            ("max_segments", "254"),
            ("iostats", "0"),
        ] {
            fs::write(q.join(f), format!("{v}\n")).unwrap();
        }
        let l = QueueLimits::read(&q).unwrap();
        assert_eq!(l.max_sectors_kb, Some(1280));
        assert_eq!(l.max_segments, Some(254));
        assert_eq!(l.iostats, Some(false));
        assert_eq!(l.dax, None);
        assert!(QueueLimits::read(&t.path().join("none")).is_none());
    }
}
