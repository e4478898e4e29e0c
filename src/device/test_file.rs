//! The test file a command reads on a mounted volume (`compare` on a
//! striped file system): how large to make it, within the free space.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::base::error::{show_path, usage};
use crate::base::units::fmt_bytes;
use crate::device::scratch::{Testbed, TestbedConfig};

const MIB: u64 = 1 << 20;

/// How large to make the test file, and what to say.
pub struct Sizing {
    /// Whole MiB.
    pub size: u64,
    /// What a refused creation suggests.
    pub fix: &'static str,
    /// Said in the document: the file fits in memory.
    pub note: Option<String>,
}

/// The test file's size in the directory `dir`: `file_size` (`--file-size`)
/// or twice the machine's memory (so the page cache cannot hold it) within
/// 90% of the free space, and at least `--offset` + `--size` (`offset`,
/// `region`): a shorter file would be refused only at the first volume
/// phase, after the member phases had measured (and their figures were lost).
pub fn size(
    dir: &Path,
    file_size: Option<u64>,
    offset: u64,
    region: Option<u64>,
) -> Result<Sizing> {
    let total = crate::device::cache::meminfo("MemTotal").unwrap_or(0);
    let free = crate::device::scratch::free_bytes(dir).unwrap_or(0);
    let mut size = file_size.unwrap_or_else(|| (2 * total).min(free / 10 * 9)) & !(MIB - 1);
    let mut fix = "give a smaller --file-size";
    if let Some(region) = region {
        let end = offset.saturating_add(region);
        let need = end.saturating_add(MIB - 1) & !(MIB - 1);
        if let Some(f) = file_size.filter(|&f| f < end) {
            return usage(format!(
                "--file-size {} is smaller than --offset + --size ({}): the volume phases read that much of the test file; give a larger --file-size or a smaller --size",
                fmt_bytes(f),
                fmt_bytes(end)
            ));
        }
        if size < need {
            size = need;
            fix = "give a smaller --size";
        }
    }
    if size < MIB {
        return usage(format!(
            "{} has too little free space for a test file: free some, or give --file-size",
            show_path(dir)
        ));
    }
    let note = (size < total).then(|| {
        format!(
            "the test file ({}) fits in memory: the buffered phase is read cold (evicted first), but a long phase may re-read cached data (see its device counters)",
            fmt_bytes(size)
        )
    });
    Ok(Sizing { size, fix, note })
}

/// What a command's volume phases read on `volume`: the block device
/// itself, or on a mounted volume (a directory) a test file made for them
/// ([`size`]; removed when the returned bed is dropped), with the note
/// [`size`] makes. A file is refused: it is no volume.
pub fn for_volume(
    volume: &Path,
    file_size: Option<u64>,
    offset: u64,
    region: Option<u64>,
    seed: u64,
) -> Result<(PathBuf, Option<Testbed>, Option<String>)> {
    let meta = std::fs::metadata(volume)
        .with_context(|| format!("cannot inspect {}", volume.display()))?;
    if meta.file_type().is_file() {
        return usage(format!(
            "{} is a file: give the volume (a block device or a mount point)",
            show_path(volume)
        ));
    }
    if !meta.is_dir() {
        return Ok((volume.to_path_buf(), None, None));
    }
    let sizing = size(volume, file_size, offset, region)?;
    let tb = Testbed::create(
        &TestbedConfig {
            dir: volume.to_path_buf(),
            files: 1,
            file_size: sizing.size,
        },
        seed,
        "the volume phases' test file",
        sizing.fix,
    )?;
    Ok((tb.files[0].clone(), Some(tb), sizing.note))
}
