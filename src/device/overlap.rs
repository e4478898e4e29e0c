//! Targets that reach the same bytes: one file named twice (through a
//! symlink or a hard link), a partition and its disk, two loop devices over
//! one image. Judged on what each name resolved to when it was inspected
//! ([`Inspected`]), never on the names again.

use anyhow::Result;

use crate::base::error::{show_path, usage};
use crate::base::warning::Warning;
use crate::device::{extent, Inspected};

/// Refuses a target named twice, and two targets that overlap when the run
/// writes (one would overwrite the other); when it only reads, an overlap
/// is a warning (returned), since the two targets' figures then share one
/// device and are not independent.
pub fn overlapping_targets(targets: &[Inspected], writes: bool) -> Result<Vec<Warning>> {
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
                    crate::device::sysfs_name(&crate::base::host::Host::real().sys, ma, mi)
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
            warnings.push(Warning::Overlap {
                a: shown(a).to_string(),
                b: shown(b).to_string(),
                on: on.to_string(),
            });
        }
    }
    Ok(warnings)
}
