//! What the storage stack under a target says about striping: the chunk
//! and data-member count of a striped or parity block device (md raid0/4/5/6/10,
//! dm striped, dm-raid), and the members of a volume for `--members`.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::base::error::{show_path, usage};
use crate::device::topology::{self, Topology};
use crate::device::{StripeGeometry, Target, TargetKind};

/// Reads every target's storage stack (for the document) and sets the
/// stripe geometry of every striped block-device target from it. A stack
/// that cannot be read (tmpfs) is left out.
pub fn learn_geometry(targets: &mut [Target]) -> Vec<(PathBuf, Topology)> {
    let Ok(src) = topology::Sources::system(None) else {
        return Vec::new();
    };
    let mut stacks = Vec::new();
    for t in targets.iter_mut() {
        let Ok(topo) = topology::discover(&t.path, &src) else {
            continue;
        };
        if t.kind == TargetKind::Block {
            t.stripe = stripe_of(&topo.root);
        }
        stacks.push((t.path.clone(), topo));
    }
    stacks
}

/// The members of a volume, for `--members`: those of its striped layer,
/// each with what stands above its disk (`Topology::stripe_members`).
pub fn member_paths(volume: &Path) -> Result<Vec<PathBuf>> {
    let src = topology::Sources::system(None)?;
    let t = topology::discover(volume, &src)?;
    if t.root.members.is_empty() {
        return usage(format!(
            "--members {}: {} has no members (a plain disk or partition): name it as a TARGET instead",
            show_path(volume),
            t.root.name
        ));
    }
    Ok(t.stripe_members()
        .iter()
        .map(|l| PathBuf::from(&l.path))
        .collect())
}

/// The chunk and the members' worth of data in a full stripe: chunk ×
/// data members is the full stripe (a raid5 of 4 has 3 data members, so
/// `--align stripe` aligns to 3 chunks, and a write of a full stripe needs
/// no read-modify-write).
pub fn stripe_of(root: &topology::Device) -> Option<StripeGeometry> {
    if !root.is_striped() {
        return None;
    }
    let chunk = root.chunk_size()?;
    let members = match root.geometry() {
        Some(g) => u64::from(g.data.max(1)),
        // A dm stripe known from its queue limits only.
        None => root.members.len() as u64,
    };
    Some(StripeGeometry { chunk, members })
}
