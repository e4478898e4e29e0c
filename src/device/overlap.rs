//! Targets that reach the same bytes: one file named twice (through a
//! symlink or a hard link), a partition and its disk, two loop devices over
//! one image. Judged on what each name resolved to when it was inspected
//! ([`Inspected`]), never on the names again.

use anyhow::Result;

use crate::base::error::{show_path, usage};
use crate::device::{extent, Inspected};

/// Refuses a target named twice, and two targets that overlap when the run
/// writes (one would overwrite the other); when it only reads, an overlap
/// is a warning (returned), since the two targets' figures then share one
/// device and are not independent.
pub fn overlapping_targets(targets: &[Inspected], writes: bool) -> Result<Vec<String>> {
    let shown = |t: &Inspected| show_path(&t.path);
    let mut warnings = Vec::new();
    for (i, a) in targets.iter().enumerate() {
        for b in targets.iter().skip(i + 1) {
            let same = a.identity() == b.identity();
            let (Some(x), Some(y)) = (&a.extent, &b.extent) else {
                if same {
                    return usage(format!(
                        "target {} is named twice: use --jobs for several workers on one target",
                        shown(b)
                    ));
                }
                continue;
            };
            if same
                || (x.base == y.base
                    && (x.start, x.len) == (y.start, y.len)
                    && matches!(x.base, extent::Base::File(..)))
            {
                return usage(format!(
                    "target {} is named twice{}: use --jobs for several workers on one target",
                    shown(b),
                    if a.path == b.path {
                        String::new()
                    } else {
                        format!(" (it is the same file as {})", shown(a))
                    }
                ));
            }
            if !x.overlaps(y) {
                continue;
            }
            let on = match (&x.file, x.base) {
                (Some(f), _) => show_path(f),
                (None, extent::Base::Disk((ma, mi))) => {
                    crate::device::sysfs_name(std::path::Path::new("/sys"), ma, mi)
                        .unwrap_or_else(|| format!("{ma}:{mi}"))
                }
                (None, _) => "one file".into(),
            };
            if writes {
                return usage(format!(
                    "refusing to write: targets {} and {} reach the same bytes of {on}: one would overwrite the other; name one of them",
                    shown(a),
                    shown(b)
                ));
            }
            warnings.push(format!(
                "targets {} and {} overlap on {on}: they share one device, so their figures are not independent and their sum is not the device's",
                shown(a),
                shown(b)
            ));
        }
    }
    Ok(warnings)
}

/// The outputs were checked against the targets' names before the command
/// began; checked again here against what the targets resolved to, by
/// inode: a target name that moved in between cannot make a report land on
/// the file it now reaches. `outputs`: each output file with the option
/// that names it.
pub fn outputs_on_targets(
    targets: &[Inspected],
    outputs: &[(&str, &std::path::Path)],
) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let files: Vec<(u64, u64)> = targets.iter().flat_map(|t| t.files()).collect();
    for (option, p) in outputs {
        if let Ok(m) = std::fs::metadata(p) {
            if files.contains(&(m.dev(), m.ino())) {
                return usage(format!(
                    "cannot write {option} {}: it is a target (or behind one) of this command: writing the report would replace it; name another file",
                    show_path(p)
                ));
            }
        }
    }
    Ok(())
}
