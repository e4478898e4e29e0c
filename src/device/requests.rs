//! How a run's requests reach a device: an I/O larger than one request to
//! the device can carry is split by the kernel whatever the tool does
//! (said before the run), and the device's own counters show the requests
//! it received (said after it, with the queue limit that explains a split).

use std::collections::HashSet;

use crate::base::warning::Warning;
use crate::device::devstat::DeviceCounters;
use crate::device::queue::{page_size, QueueLimits};

/// A target as the request checks see it: its device, its block size.
pub struct Sized<'a> {
    /// `major:minor` of its device, when it has one.
    pub device: Option<(u64, u64)>,
    /// The kernel's name of that device, for the message.
    pub device_name: Option<&'a str>,
    pub bs: u64,
    pub logical_block_size: u64,
}

/// Before an O_DIRECT run: a block size larger than one request to the
/// target's device can carry (`max_sectors_kb`), each device said once.
pub fn oversized(targets: &[Sized]) -> Vec<Warning> {
    let mut seen = HashSet::new();
    targets
        .iter()
        .filter_map(|t| {
            let dev = t.device?;
            let q = QueueLimits::of_device(&crate::base::host::Host::real().sys, dev)?;
            let max = q.max_request_bytes()?;
            (t.bs > max && seen.insert(dev)).then(|| Warning::OversizedRequests {
                bs: t.bs,
                device: t.device_name.unwrap_or("its device").to_string(),
                max_sectors_kb: max / 1024,
                requests: t.bs.div_ceil(max),
            })
        })
        .collect()
}

/// After an O_DIRECT run whose buffers were huge pages: the devices that
/// took each I/O whole but whose queue would split it from buffers of
/// scattered 4 KiB pages, as fio's and dd's are by default (one segment a
/// page, `max_segments` at most in a request): the same workload run by
/// those tools reads less, for a reason that is theirs, not the device's.
/// `targets`: each with the page size of its workers' buffers.
pub fn unsplit_by_huge_pages(targets: &[(Sized, u64)]) -> Vec<Warning> {
    let small = page_size();
    let mut seen = HashSet::new();
    targets
        .iter()
        .filter(|(_, page)| *page > small)
        .filter_map(|(t, page)| {
            let dev = t.device?;
            let q = QueueLimits::of_device(&crate::base::host::Host::real().sys, dev)?;
            let segs = q.max_segments?;
            // What one request carries at most whatever the buffer.
            let piece = q.max_request_bytes().map_or(t.bs, |m| m.min(t.bs));
            let small_fits = segs.saturating_mul(small);
            let huge_fits = segs.saturating_mul(*page);
            (piece > small_fits && piece <= huge_fits && seen.insert(dev)).then(|| {
                Warning::UnsplitByHugePages {
                    bs: t.bs,
                    device: t.device_name.unwrap_or("its device").to_string(),
                    max_segments: segs,
                    segments_bytes: small_fits,
                }
            })
        })
        .collect()
}

/// After an O_DIRECT run: requests that reached a device (or a stacked
/// device's member) smaller than the block size, by the device's counters
/// over the run (`devices`, one per target beside it), and the queue limit
/// that explains it. A device shared by targets, or without statistics,
/// says nothing.
pub fn split(targets: &[(Sized, Option<&DeviceCounters>)]) -> Vec<Warning> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for (t, d) in targets {
        let Some(d) = d.filter(|d| d.stats && !d.shared) else {
            continue;
        };
        if !seen.insert(d.name.clone()) {
            continue;
        }
        // Reads the device mostly never saw (holes, a cache) say nothing
        // of how this run's requests were split: the warning about them does.
        let ours = d.read_ratio.is_none_or(|r| r >= 0.5);
        for (what, avg) in [
            (
                "reads",
                d.avg_read_request_bytes
                    .filter(|_| ours && d.app_read_bytes > 0),
            ),
            (
                "writes",
                d.avg_write_request_bytes.filter(|_| d.app_write_bytes > 0),
            ),
        ] {
            let Some(avg) = avg.filter(|&a| a < t.bs as f64 * 0.98) else {
                continue;
            };
            let why = QueueLimits::of_name(&d.name)
                .and_then(|q| q.split_reason(t.bs, page_size()))
                .unwrap_or_else(|| {
                    "no queue limit explains it (the device or a layer above it splits requests)"
                        .into()
                });
            out.push(Warning::SplitRequests {
                writes: what == "writes",
                bs: t.bs,
                device: d.name.clone(),
                avg_bytes: avg as u64,
                why,
            });
        }
        // A stacked volume's members get pieces of at most one chunk (the
        // volume's minimum_io_size); smaller than that, a member's own
        // queue split them.
        let chunk = QueueLimits::of_name(&d.name)
            .and_then(|q| q.minimum_io_size)
            .filter(|&c| c > t.logical_block_size);
        let piece = chunk.map_or(t.bs, |c| c.min(t.bs));
        for m in d.members.iter().filter(|m| m.stats) {
            let Some(avg) = m
                .avg_read_request_bytes
                .filter(|&a| a < piece as f64 * 0.98)
            else {
                continue;
            };
            let why = QueueLimits::of_name(&m.name)
                .and_then(|q| q.split_reason(piece, page_size()))
                .or_else(|| degraded_md(&d.name).map(|k| format!(
                    "{} is degraded ({k} member(s) down): md rebuilds each missing chunk from the survivors' pieces of its stripe through its stripe cache, in 4 KiB units, which reach the members merged only in part",
                    d.name
                )))
                .unwrap_or_else(|| "no queue limit of the member explains it".into());
            out.push(Warning::MemberSplitRequests {
                member: m.name.clone(),
                device: d.name.clone(),
                avg_bytes: avg as u64,
                piece,
                chunk: chunk.is_some(),
                why,
            });
        }
    }
    out
}

/// The members an md array has down (`md/degraded`), when it is one and
/// has any; read a few bytes at most.
fn degraded_md(name: &str) -> Option<u64> {
    use std::io::Read;
    let path = crate::base::host::Host::real()
        .class_block()
        .join(name)
        .join("md/degraded");
    let mut s = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(64)
        .read_to_string(&mut s)
        .ok()?;
    s.trim().parse().ok().filter(|&k: &u64| k > 0)
}
