//! `stripebench restore`: put back what killed runs left changed, and remove
//! the test beds they left behind.

use anyhow::Result;

use crate::base::error::EXIT_OK;
use crate::device::knobs;

pub fn run() -> Result<u8> {
    let dir = knobs::state_dir();
    let mut lines = knobs::restore_pending(&dir, std::path::Path::new("/sys"))?;
    lines.extend(crate::device::scratch::remove_pending(&dir));
    if lines.is_empty() {
        crate::outln!(
            "nothing to restore: no settings or test beds left by killed runs in {}",
            dir.display()
        );
    }
    for l in lines {
        crate::outln!("{l}");
    }
    Ok(EXIT_OK)
}
