//! The guard against reading nothing: a file target whose region holds
//! holes or unwritten (fallocated) extents reads zeros from memory there,
//! never from a device (`truncate -s 512M f.dat` read at 22 GB/s). Such a
//! read is refused unless `--allow-holes`, which makes it a warning.

use std::fs::File;
use std::path::Path;

use crate::base::io::Region;
use crate::base::units::{fmt_bytes, fmt_size_arg};
use crate::base::warning::Warning;

/// The guard's verdict on one file's region.
pub struct Verdict {
    /// The region is all written data, or `--allow-holes` reads it anyway.
    pub passed: bool,
    /// What the dry run's check says (the refusal's text when not passed).
    pub detail: String,
    /// The document's warning, when read anyway (`--allow-holes`).
    pub warning: Option<Warning>,
}

/// Judges `region` of the file target `path` (open as `file`, `size`
/// bytes long); `None` when its extents cannot be read.
pub fn judge(
    path: &Path,
    file: &File,
    region: Region,
    size: u64,
    allow_holes: bool,
) -> Option<Verdict> {
    let h = crate::device::holes::of_region(file, region.offset, region.length)?;
    let shown = crate::base::error::show_path(path);
    let empty = h.empty_bytes();
    // The warning when read anyway; its amount is also the refusal's.
    let warning = Warning::HolesReadAnyway {
        path: shown.to_string(),
        empty,
        region: h.region,
        hole_bytes: h.hole_bytes,
        unwritten_bytes: h.unwritten_bytes,
    };
    let amount = warning.holes_amount().unwrap_or_default();
    Some(if empty == 0 {
        Verdict {
            passed: true,
            detail: format!("the {} region is all written data", fmt_bytes(h.region)),
            warning: None,
        }
    } else if allow_holes {
        Verdict {
            passed: true,
            detail: warning.to_string(),
            warning: Some(warning),
        }
    } else {
        let region = if (region.offset, region.length) == (0, size) {
            String::new()
        } else {
            format!(
                " --offset {} --size {}",
                fmt_size_arg(region.offset),
                fmt_size_arg(region.length)
            )
        };
        Verdict {
            passed: false,
            detail: format!(
                "refusing to read: {amount}, so the figures would measure memory. Write it first (stripebench run --rw write --passes 1 --bs 1m{region} --allow-destructive {shown}), or pass --allow-holes to read it anyway"
            ),
            warning: None,
        }
    })
}
