//! Aligned I/O buffers. O_DIRECT needs the memory aligned to the device's
//! requirement; we align to at least a page, allocate once per worker, and
//! never on the hot path.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// A heap buffer whose start is aligned to `align` bytes.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the buffer owns its memory exclusively; moving it to another thread
// moves that ownership.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` zeroed bytes aligned to `align` (a power of two).
    /// Returns `None` for a zero length, a bad alignment, or when memory runs out.
    pub fn new(len: usize, align: usize) -> Option<AlignedBuf> {
        if len == 0 || !align.is_power_of_two() {
            return None;
        }
        let layout = Layout::from_size_align(len, align.max(4096)).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        NonNull::new(ptr).map(|ptr| AlignedBuf { ptr, layout })
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr points to `len` initialised (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr was allocated with exactly this layout and is freed once.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_zeroed() {
        for align in [512, 4096, 65536] {
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
}
