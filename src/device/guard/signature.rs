//! On-disk signatures (file systems, RAID and LVM members, LUKS and other
//! crypto headers, swap, partition tables), found by libblkid: the library
//! that `blkid -p`, `wipefs` and the mkfs tools use, through its low-level
//! probing, the way `wipefs -n` lists everything it would erase.
//!
//! libblkid is linked, not loaded on demand: it ships in libblkid1, which
//! util-linux (essential on Debian) depends on, so it is on every machine
//! that runs this; a hand-written fallback would be a second, weaker probe
//! that nothing exercises. Only the handful of functions used here are
//! declared, by hand (no bindgen, no clang at build time).

use std::ffi::{c_char, c_int, CStr};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// libblkid's probe handle (`struct blkid_struct_probe *`), opaque.
#[repr(C)]
struct BlkidProbe {
    _opaque: [u8; 0],
}

// Flags from <blkid/blkid.h> (util-linux 2.38; stable since 2.15-2.23).
const BLKID_SUBLKS_TYPE: c_int = 1 << 5;
const BLKID_SUBLKS_USAGE: c_int = 1 << 7;
const BLKID_SUBLKS_VERSION: c_int = 1 << 8;
const BLKID_SUBLKS_MAGIC: c_int = 1 << 9;
/// Report a superblock whose checksum is bad too: a damaged file system is
/// still somebody's data (wipefs sets it for the same reason).
const BLKID_SUBLKS_BADCSUM: c_int = 1 << 10;
/// Look for a GPT even without a protective MBR.
const BLKID_PARTS_FORCE_GPT: c_int = 1 << 1;
const BLKID_PARTS_MAGIC: c_int = 1 << 3;

// Linked by its soname, `-l:libblkid.so.1`, so that building needs only the
// runtime library (libblkid1, on every Debian), not libblkid-dev's `.so` link.
#[link(name = "libblkid.so.1", kind = "dylib", modifiers = "+verbatim")]
extern "C" {
    fn blkid_new_probe() -> *mut BlkidProbe;
    fn blkid_free_probe(pr: *mut BlkidProbe);
    fn blkid_probe_set_device(pr: *mut BlkidProbe, fd: c_int, off: i64, size: i64) -> c_int;
    fn blkid_probe_enable_superblocks(pr: *mut BlkidProbe, enable: c_int) -> c_int;
    fn blkid_probe_set_superblocks_flags(pr: *mut BlkidProbe, flags: c_int) -> c_int;
    fn blkid_probe_enable_partitions(pr: *mut BlkidProbe, enable: c_int) -> c_int;
    fn blkid_probe_set_partitions_flags(pr: *mut BlkidProbe, flags: c_int) -> c_int;
    fn blkid_do_probe(pr: *mut BlkidProbe) -> c_int;
    fn blkid_probe_lookup_value(
        pr: *mut BlkidProbe,
        name: *const c_char,
        data: *mut *const c_char,
        len: *mut usize,
    ) -> c_int;
}

/// A probe, freed when dropped.
struct Probe(*mut BlkidProbe);

impl Drop for Probe {
    fn drop(&mut self) {
        // SAFETY: self.0 came from blkid_new_probe, is non-null, and is freed
        // once, here. The descriptor it was given is not closed by libblkid
        // (only probes made from a file name own theirs).
        unsafe { blkid_free_probe(self.0) }
    }
}

impl Probe {
    /// The value `name` of the signature found by the last probing step.
    fn value(&self, name: &CStr) -> Option<String> {
        let mut data: *const c_char = std::ptr::null();
        let mut len = 0usize;
        // SAFETY: the probe is live; `name` is NUL-terminated; libblkid
        // writes a pointer to a NUL-terminated string it owns (valid until
        // the next probing step on this probe) and its length into our locals.
        let rc = unsafe { blkid_probe_lookup_value(self.0, name.as_ptr(), &mut data, &mut len) };
        if rc != 0 || data.is_null() {
            return None;
        }
        // SAFETY: non-null, NUL-terminated, and read before the next step.
        let s = unsafe { CStr::from_ptr(data) };
        let s = s.to_string_lossy().trim().to_string();
        (!s.is_empty()).then_some(s)
    }
}

/// Every signature libblkid finds through `f`, which may be a block device
/// or an image file (its current offset is moved). Each is named the way
/// `blkid -p` names it: "crypto_LUKS version 2 (crypto)", "ext4 version 1.0
/// (filesystem)", "gpt partition table". Empty when there is none.
pub fn signatures_of(f: &File) -> io::Result<Vec<String>> {
    // SAFETY: no preconditions; a null return means out of memory.
    let raw = unsafe { blkid_new_probe() };
    if raw.is_null() {
        return Err(io::Error::other("libblkid could not allocate a probe"));
    }
    let pr = Probe(raw);
    // SAFETY: pr.0 is a live probe; the descriptor stays open for the whole
    // function (it is borrowed from `f`), longer than the probe, which is
    // dropped first. Offset 0 and size 0 mean the whole device or file.
    if unsafe { blkid_probe_set_device(pr.0, f.as_raw_fd(), 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above; these only set the probe's own flags.
    unsafe {
        blkid_probe_enable_superblocks(pr.0, 1);
        blkid_probe_set_superblocks_flags(
            pr.0,
            BLKID_SUBLKS_TYPE
                | BLKID_SUBLKS_USAGE
                | BLKID_SUBLKS_VERSION
                | BLKID_SUBLKS_MAGIC
                | BLKID_SUBLKS_BADCSUM,
        );
        blkid_probe_enable_partitions(pr.0, 1);
        blkid_probe_set_partitions_flags(pr.0, BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT);
    }
    let mut found = Vec::new();
    // Like `wipefs -n`: each step returns the next signature (0), until
    // there is none left (1) or reading failed (-1). Bounded, in case a
    // library bug kept returning the same one.
    for _ in 0..64 {
        // SAFETY: pr.0 is a live probe with a device set.
        match unsafe { blkid_do_probe(pr.0) } {
            0 => {}
            1 => return Ok(found),
            _ => {
                let e = io::Error::last_os_error();
                return Err(if e.raw_os_error().unwrap_or(0) == 0 {
                    io::Error::other("libblkid could not probe it")
                } else {
                    e
                });
            }
        }
        let what = if let Some(pt) = pr.value(c"PTTYPE") {
            format!("{pt} partition table")
        } else if let Some(ty) = pr.value(c"TYPE") {
            let mut s = ty;
            if let Some(v) = pr.value(c"VERSION") {
                s.push_str(&format!(" version {v}"));
            }
            if let Some(u) = pr.value(c"USAGE") {
                s.push_str(&format!(" ({u})"));
            }
            s
        } else {
            // A step that set neither (should not happen): say what we know.
            "an unnamed signature".to_string()
        };
        if !found.contains(&what) {
            found.push(what);
        }
    }
    Ok(found)
}

/// Opens `path` read-only and looks (see `signature_of`).
pub fn device_signature(path: &Path, size: u64) -> io::Result<Option<String>> {
    signature_of(&File::open(path)?, size)
}

/// Looks for a signature through an open file (the one that will be
/// written): every one libblkid finds, joined, or None. `size` is unused
/// (libblkid asks the descriptor) and kept for the callers' convenience.
pub fn signature_of(f: &File, _size: u64) -> io::Result<Option<String>> {
    let all = signatures_of(f)?;
    Ok((!all.is_empty()).then(|| all.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn image(bytes: &[(usize, &[u8])], size: usize) -> tempfile::NamedTempFile {
        let mut buf = vec![0u8; size];
        for (off, b) in bytes {
            buf[*off..off + b.len()].copy_from_slice(b);
        }
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&buf).unwrap();
        f
    }

    #[test]
    fn zeros_carry_no_signature() {
        let f = image(&[], 4 << 20);
        assert_eq!(signature_of(f.as_file(), 4 << 20).unwrap(), None);
    }

    #[test]
    fn a_swap_header_is_named_with_its_version() {
        // mkswap's header: "SWAPSPACE2" at the end of the first 4 KiB page,
        // version 1 and the last page number after the boot block.
        let mut hdr = vec![0u8; 12];
        hdr[0..4].copy_from_slice(&1u32.to_le_bytes());
        hdr[4..8].copy_from_slice(&1023u32.to_le_bytes());
        let f = image(&[(1024, &hdr), (4086, b"SWAPSPACE2")], 4 << 20);
        let s = signature_of(f.as_file(), 4 << 20).unwrap().unwrap();
        assert!(s.starts_with("swap"), "{s}");
    }

    #[test]
    fn an_mbr_with_a_partition_is_a_dos_partition_table() {
        // One Linux partition from sector 2048, 4096 sectors long.
        let mut entry = [0u8; 16];
        entry[4] = 0x83;
        entry[8..12].copy_from_slice(&2048u32.to_le_bytes());
        entry[12..16].copy_from_slice(&4096u32.to_le_bytes());
        let f = image(&[(446, &entry), (510, &[0x55, 0xAA])], 4 << 20);
        let s = signature_of(f.as_file(), 4 << 20).unwrap().unwrap();
        assert!(s.contains("dos partition table"), "{s}");
    }
}
