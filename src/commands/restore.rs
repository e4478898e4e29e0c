//! `stripebench restore`: put back what killed runs left changed, and remove
//! the test beds they left behind.

use anyhow::Result;

use crate::base::error::EXIT_OK;
use crate::device::knobs;

pub fn run() -> Result<u8> {
    let dir = knobs::state_dir();
    let (mut lines, mut failed) =
        knobs::restore_pending(&dir, &crate::base::host::Host::real().sys)?;
    let (beds, beds_failed) = crate::device::scratch::remove_pending(&dir);
    lines.extend(beds);
    failed.extend(beds_failed);
    if lines.is_empty() && failed.is_empty() {
        crate::outln!(
            "nothing to restore: no settings or test beds left by killed runs in {}",
            dir.display()
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
