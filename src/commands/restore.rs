//! `stripebench restore`: put back what killed runs left changed, and remove
//! the test beds they left behind.

use anyhow::Result;

use crate::base::error::EXIT_OK;
use crate::device::knobs;

pub fn run(args: &crate::cli::RestoreArgs) -> Result<u8> {
    let dir = knobs::state_dir()?;
    let (mut lines, mut failed) = knobs::restore_pending(
        &dir,
        &crate::base::host::Host::real().sys,
        !args.keep_applied,
    )?;
    let (beds, beds_failed) = crate::device::scratch::remove_pending(&dir);
    // Files with our names that are not ours to trust: never read, named.
    failed.extend(crate::device::state::refused_files(&dir));
    lines.extend(beds);
    failed.extend(beds_failed);
    if lines.is_empty() && failed.is_empty() {
        crate::outln!(
            "nothing to restore: no settings left by killed runs{} and no test beds in {}",
            if args.keep_applied {
                ""
            } else {
                " or kept by advise --apply"
            },
            dir.display()
        );
    }
    let kept: usize = knobs::applied(&dir).iter().map(|(_, k)| k.len()).sum();
    if args.keep_applied && kept > 0 {
        crate::outln!(
            "kept: {kept} setting(s) advise --apply made ('stripebench restore' without --keep-applied puts them back)"
        );
    }
    for l in lines {
        crate::outln!("{l}");
    }
    if !failed.is_empty() {
        anyhow::bail!("{}", failed.join("; "));
    }
    Ok(EXIT_OK)
}
