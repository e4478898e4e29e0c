//! I/O buffers. A worker's slots share one region, mapped once (never on
//! the hot path) and touched before the start, sliced into page-aligned
//! buffers. A request whose buffer is scattered over 4 KiB pages needs one
//! memory segment per page, and a queue that takes 128 or 254 segments
//! splits a 1 MiB O_DIRECT read in two; a buffer inside one 2 MiB huge page
//! is one contiguous piece. So the region is asked for in huge pages:
//! transparent huge pages (`madvise(MADV_HUGEPAGE)` on a 2 MiB-aligned
//! mapping), else reserved hugetlbfs pages (`MAP_HUGETLB`), else 4 KiB
//! pages; what was obtained is checked (`AnonHugePages` of the mapping in
//! `/proc/self/smaps`) and reported per worker.
//!
//! A `--cached` run's buffers ([`Placement::CachedCopy`]) start
//! [`CACHE_COPY_OFFSET`] bytes into a page instead: every read is the
//! kernel's copy from pages already in the page cache, and that copy runs
//! 2-5% faster into a buffer that is not cache-line aligned and lies just
//! below, not just above, the page-cache bytes modulo 4 KiB (a pread loop
//! into a cached file, 8 KiB to 1 MiB: scripts/bench-copy-offset.sh,
//! BENCHMARKS.md). fio's buffered buffers land off the page start by
//! accident, where malloc put them. Reads that fill the page cache as they
//! go (cold buffered reads, `--uncached`) measured 1-4% slower with the
//! offset, and O_DIRECT's DMA wants the page start: those keep it.

use std::ptr::NonNull;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

const HUGE: usize = 2 << 20;
const PAGE: usize = 4096;
/// Below this buffer size `--hugepages auto` uses 4 KiB pages.
pub const SMALL: usize = 128 << 10;
/// Where a `--cached` run's buffers start within their page: 16 bytes
/// short of the next page, so neither cache-line aligned nor a few bytes above a
/// page-cache page's start modulo 4 KiB (where the copy's loads would wait
/// on its own stores: 4 KiB aliasing).
pub const CACHE_COPY_OFFSET: usize = PAGE - 16;
const _: () = assert!(CACHE_COPY_OFFSET % 64 != 0 && CACHE_COPY_OFFSET < PAGE);

/// Where a worker's buffers start within their pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// At a page's start: O_DIRECT (the DMA needs it), and every run that
    /// is not `--cached`.
    #[default]
    PageAligned,
    /// [`CACHE_COPY_OFFSET`] into a page: `--cached` reads, each a copy
    /// from pages already in the page cache.
    CachedCopy,
}

impl Placement {
    /// The buffers' offset within their page.
    fn offset(self) -> usize {
        match self {
            Placement::PageAligned => 0,
            Placement::CachedCopy => CACHE_COPY_OFFSET,
        }
    }
}

/// `--hugepages` (its command-line names and help: `cli::values`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HugePages {
    /// Huge pages for buffers of 128 KiB or more when the system gives
    /// them, else 4 KiB pages, silently.
    #[default]
    Auto,
    /// Huge pages or refuse to run.
    On,
    /// 4 KiB pages.
    Off,
}

impl HugePages {
    /// What `--hugepages` asks for buffers of `bs` bytes each: `auto` keeps
    /// a buffer under [`SMALL`] in 4 KiB pages (a buffer of a few pages
    /// never meets a queue's segment limit); on and off are as they say.
    /// The one rule: the workers' buffers and the fio line that stands for
    /// them both follow it.
    pub fn for_buffer(self, bs: u64) -> HugePages {
        if self == HugePages::Auto && bs < SMALL as u64 {
            HugePages::Off
        } else {
            self
        }
    }
}

/// What a worker's buffers were made of: the facts the run document's
/// `workers[].buffer` (document::run::BufferDoc) is made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferFacts {
    /// The region's size, all slots' buffers together.
    pub bytes: u64,
    pub page_size_bytes: u64,
    pub backing: Backing,
    /// Where each buffer starts within its page: [`CACHE_COPY_OFFSET`] for
    /// a `--cached` run, else 0 (at a page's start).
    pub offset_in_page_bytes: u64,
}

/// What memory a buffer region got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backing {
    /// Transparent huge pages (2 MiB).
    Thp,
    /// Reserved hugetlbfs pages (2 MiB).
    Hugetlb,
    /// 4 KiB pages.
    Pages,
}

impl Backing {
    /// The name the JSON and the table give it.
    pub fn name(self) -> &'static str {
        match self {
            Backing::Thp => "thp",
            Backing::Hugetlb => "hugetlb",
            Backing::Pages => "pages",
        }
    }
}

/// One mapping, unmapped when the last buffer cut from it goes.
struct Region {
    ptr: NonNull<u8>,
    len: usize,
    facts: BufferFacts,
}

// SAFETY: the region is plain memory owned by the Arc that holds it; the
// buffers cut from it never overlap, and each is used by one thread at a time.
unsafe impl Send for Region {}
// SAFETY: as above; shared references only read the mapping's address.
unsafe impl Sync for Region {}

impl Region {
    fn new(ptr: NonNull<u8>, len: usize, page: usize, backing: Backing) -> Region {
        Region {
            ptr,
            len,
            facts: BufferFacts {
                bytes: len as u64,
                page_size_bytes: page as u64,
                backing,
                offset_in_page_bytes: 0,
            },
        }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly what mmap returned (or trimmed to), unmapped once.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// Anonymous memory of `len` bytes with `extra` mmap flags.
fn mmap(len: usize, extra: libc::c_int) -> Option<NonNull<u8>> {
    // SAFETY: an anonymous private mapping; no file, no fixed address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | extra,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED)
        .then(|| NonNull::new(p.cast()))
        .flatten()
}

/// Faults every page in now, so the I/O never waits on a page fault.
fn touch(ptr: NonNull<u8>, len: usize) {
    for off in (0..len).step_by(PAGE) {
        // SAFETY: off < len, inside the mapping we own.
        unsafe { ptr.as_ptr().add(off).write_volatile(0) };
    }
}

/// Bytes of the mapping at `addr` backed by transparent huge pages.
fn thp_bytes(addr: usize) -> u64 {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return 0;
    };
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((range, _)) = line.split_once(' ') {
            if let Some((start, _)) = range.split_once('-') {
                if start.len() >= 8 && start.chars().all(|c| c.is_ascii_hexdigit()) {
                    inside = usize::from_str_radix(start, 16) == Ok(addr);
                    continue;
                }
            }
        }
        if inside {
            if let Some(kb) = line.strip_prefix("AnonHugePages:") {
                return kb
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .unwrap_or(0)
                    * 1024;
            }
        }
    }
    0
}

/// A 2 MiB-aligned mapping asked for in transparent huge pages.
fn map_thp(len: usize) -> Option<Region> {
    let total = round_up(len, HUGE);
    let raw = mmap(total + HUGE, 0)?;
    // Trim to a 2 MiB-aligned start and length: THP backs aligned 2 MiB ranges.
    let start = round_up(raw.as_ptr() as usize, HUGE);
    let head = start - raw.as_ptr() as usize;
    // SAFETY: trimming the unaligned head and the tail of our own mapping.
    unsafe {
        if head > 0 {
            libc::munmap(raw.as_ptr().cast(), head);
        }
        let tail = HUGE - head;
        if tail > 0 {
            libc::munmap((start + total) as *mut libc::c_void, tail);
        }
    }
    let ptr = NonNull::new(start as *mut u8)?;
    // SAFETY: advice on our own mapping.
    let advised = unsafe { libc::madvise(ptr.as_ptr().cast(), total, libc::MADV_HUGEPAGE) } == 0;
    touch(ptr, total);
    let got = if advised { thp_bytes(start) } else { 0 };
    Some(if got >= total as u64 {
        Region::new(ptr, total, HUGE, Backing::Thp)
    } else {
        Region::new(ptr, total, PAGE, Backing::Pages)
    })
}

/// A mapping of reserved hugetlbfs pages (`vm.nr_hugepages`).
fn map_hugetlb(len: usize) -> Option<Region> {
    let total = round_up(len, HUGE);
    let ptr = mmap(total, libc::MAP_HUGETLB)?;
    touch(ptr, total);
    Some(Region::new(ptr, total, HUGE, Backing::Hugetlb))
}

fn map_pages(len: usize) -> Option<Region> {
    let total = round_up(len.max(1), PAGE);
    let ptr = mmap(total, 0)?;
    touch(ptr, total);
    Some(Region::new(ptr, total, PAGE, Backing::Pages))
}

/// Maps a region of at least `len` bytes as `want` asks.
fn map(len: usize, want: HugePages) -> Result<Region, String> {
    let failed =
        || format!("could not map {len} bytes of I/O buffers: try a smaller --bs or --iodepth");
    if want == HugePages::Off {
        return map_pages(len).ok_or_else(failed);
    }
    if let Some(r) = map_thp(len) {
        if r.facts.backing == Backing::Thp {
            return Ok(r);
        }
    }
    if let Some(r) = map_hugetlb(len) {
        return Ok(r);
    }
    if want == HugePages::On {
        return Err("--hugepages on: no huge pages to be had: enable transparent huge pages (echo madvise > /sys/kernel/mm/transparent_hugepage/enabled) or reserve some (sysctl vm.nr_hugepages=N), or use --hugepages auto".into());
    }
    map_pages(len).ok_or_else(failed)
}

/// Whether `--hugepages on` can be honoured: a 2 MiB region is mapped the
/// same way, before any target is touched.
pub fn probe(want: HugePages) -> Result<(), String> {
    map(HUGE, want).map(drop)
}

/// `n` buffers of `len` bytes each, cut from one region, each starting at
/// `place`'s offset within a page.
pub fn buffers(
    n: usize,
    len: usize,
    want: HugePages,
    place: Placement,
) -> Result<Vec<AlignedBuf>, String> {
    if n == 0 || len == 0 {
        return Err("no buffer to allocate".into());
    }
    let skip = place.offset();
    let stride = round_up(len + skip, PAGE);
    // A buffer of a few pages never meets a queue's segment limit (the
    // lowest seen take 128 KiB of 4 KiB pages): `auto` then keeps to 4 KiB
    // pages rather than map (and touch) a 2 MiB page per worker.
    let want = want.for_buffer(len as u64);
    let mut region = map(stride * n, want)?;
    region.facts.offset_in_page_bytes = skip as u64;
    let region = Arc::new(region);
    Ok((0..n)
        .map(|i| AlignedBuf {
            region: region.clone(),
            offset: i * stride + skip,
            len,
        })
        .collect())
}

/// One slot's buffer: a slice of its worker's region, at a page's start or
/// [`CACHE_COPY_OFFSET`] into it.
pub struct AlignedBuf {
    region: Arc<Region>,
    offset: usize,
    len: usize,
}

impl AlignedBuf {
    /// One buffer of `len` bytes aligned to `align` (a power of two up to a
    /// page), in 4 KiB pages. `None` for a zero length or a bad alignment.
    pub fn new(len: usize, align: usize) -> Option<AlignedBuf> {
        if len == 0 || !align.is_power_of_two() || align > PAGE {
            return None;
        }
        buffers(1, len, HugePages::Off, Placement::PageAligned)
            .ok()?
            .pop()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// What the buffer's region is made of.
    pub fn facts(&self) -> BufferFacts {
        self.region.facts
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: offset + len lies inside the region, which lives as long
        // as self (the Arc); the buffers of one region never overlap.
        unsafe { std::slice::from_raw_parts(self.region.ptr.as_ptr().add(self.offset), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above; &mut self is the only handle to this slice.
        unsafe {
            std::slice::from_raw_parts_mut(self.region.ptr.as_ptr().add(self.offset), self.len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_zeroed() {
        for align in [512, 4096] {
            let mut b = AlignedBuf::new(12288, align).unwrap();
            assert_eq!(b.as_slice().as_ptr() as usize % align, 0);
            assert_eq!(b.len(), 12288);
            assert!(b.as_slice().iter().all(|&x| x == 0));
            b.as_mut_slice()[5] = 7;
            assert_eq!(b.as_slice()[5], 7);
        }
        assert!(AlignedBuf::new(0, 4096).is_none());
        assert!(AlignedBuf::new(4096, 3000).is_none());
    }

    #[test]
    fn slots_share_one_region_without_overlap() {
        for (place, at) in [
            (Placement::PageAligned, 0),
            (Placement::CachedCopy, CACHE_COPY_OFFSET),
        ] {
            let mut bufs = buffers(4, 6000, HugePages::Off, place).unwrap();
            for (i, b) in bufs.iter_mut().enumerate() {
                assert_eq!(b.as_slice().as_ptr() as usize % PAGE, at, "{place:?}");
                assert_eq!(b.len(), 6000);
                b.as_mut_slice().fill(i as u8 + 1);
            }
            for (i, b) in bufs.iter().enumerate() {
                assert!(b.as_slice().iter().all(|&x| x == i as u8 + 1));
            }
            let doc = bufs[0].facts();
            assert_eq!(doc.backing, Backing::Pages);
            assert_eq!(doc.offset_in_page_bytes, at as u64);
        }
    }

    #[test]
    fn a_buffer_off_its_page_start_fits_its_region() {
        // The last slot's last byte is inside the region, huge pages or not.
        for want in [HugePages::Off, HugePages::Auto] {
            let mut bufs = buffers(3, 1 << 20, want, Placement::CachedCopy).unwrap();
            let last = bufs.last_mut().unwrap();
            let n = last.len();
            last.as_mut_slice()[n - 1] = 9;
            assert!(last.offset + n <= last.region.len);
        }
    }

    #[test]
    fn the_buffer_is_huge_page_backed_when_thp_allows_it() {
        let mode = std::fs::read_to_string(crate::base::host::Host::real().thp_enabled())
            .unwrap_or_default();
        let thp = mode.contains("[madvise]") || mode.contains("[always]");
        let bufs = buffers(2, 1 << 20, HugePages::Auto, Placement::PageAligned).unwrap();
        let doc = bufs[0].facts();
        if thp {
            // THP in madvise or always mode: a 2 MiB-aligned, advised, touched
            // region is backed by huge pages (unless memory is too fragmented
            // to give one, which the method then says).
            assert!(
                doc.backing == Backing::Thp || doc.backing == Backing::Hugetlb,
                "THP is {mode:?} but the buffer got {doc:?}"
            );
            assert_eq!(doc.page_size_bytes, 2 << 20);
        } else {
            assert!(
                [Backing::Pages, Backing::Hugetlb].contains(&doc.backing),
                "{doc:?}"
            );
        }
    }
}
