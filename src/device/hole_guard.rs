//! The guard against reading nothing: a file target whose region holds
//! holes or unwritten (fallocated) extents reads zeros from memory there,
//! never from a device (`truncate -s 512M f.dat` read at 22 GB/s). Such a
//! read is refused unless `--allow-holes`, which makes it a warning.
//!
//! A block device is judged by the layer under it where one is seen
//! (`layers`: a loop device's backing file, zram): half or more of its
//! region holding no data is refused the same way; less is a warning.

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

/// The guard's verdict on a block device's region, by the layer under it.
pub struct LayerVerdict {
    /// Not mostly empty, or `--allow-holes` reads it anyway.
    pub passed: bool,
    /// What the dry run's check says (the refusal's text when not passed).
    pub detail: String,
    /// The document's warning: some of the region is empty.
    pub warning: Option<Warning>,
    /// The layer, when it holds the whole region as written data: what a
    /// sample of zero reads is then told (the zeros were stored).
    pub stored: Option<String>,
}

/// Judges `region` of the block device `path` (open as `file`, numbers
/// `dev`) by the layer under it; `None` when no layer is seen.
pub fn judge_layer(
    path: &Path,
    file: &File,
    dev: (u64, u64),
    region: Region,
    allow_holes: bool,
) -> Option<LayerVerdict> {
    let host = crate::base::host::Host::real();
    let b = crate::device::layers::backing(&host, file, dev, region.offset, region.length)?;
    let shown = crate::base::error::show_path(path).to_string();
    if b.empty == 0 {
        return Some(LayerVerdict {
            passed: true,
            detail: format!(
                "{} holds the {} region as written data",
                b.layer,
                fmt_bytes(b.region)
            ),
            warning: None,
            stored: Some(b.layer),
        });
    }
    let mostly = b.empty as f64 / b.region.max(1) as f64 >= crate::analysis::zeros::MOSTLY;
    let warning = Warning::UnbackedDevice {
        path: shown.clone(),
        layer: b.layer,
        what: b.what,
        empty: b.empty,
        region: b.region,
        mostly,
    };
    Some(if mostly && !allow_holes {
        let text = warning.to_string();
        let amount = text
            .strip_suffix("read anyway (--allow-holes): those reads measure memory, not the device")
            .unwrap_or(&text)
            .trim_end_matches("; ");
        LayerVerdict {
            passed: false,
            detail: format!(
                "refusing to read {amount}, so the figures would measure memory: write the device first, or pass --allow-holes to read it anyway"
            ),
            warning: None,
            stored: None,
        }
    } else {
        LayerVerdict {
            passed: true,
            detail: warning.to_string(),
            warning: Some(warning),
            stored: None,
        }
    })
}
