//! `stripebench compare VOLUME`: does the volume deliver what its members
//! can? The same read workload runs in phases (each member alone, all
//! members at once, each `--repeat` times; the volume with one worker and
//! with one per member, the volume through the page cache);
//! `document::compare` makes the ceilings, the efficiency, each member's
//! figure and the slow-member verdict of them.

mod phases;

use std::path::PathBuf;

use anyhow::Result;

use crate::base::error::{show_path, usage};
use crate::cli::compare::{config, phase_args, plan_phases, refuse_options, WriteSizes};
use crate::cli::CompareArgs;
use crate::device::topology;
use crate::document::compare::{self, Volume};
use crate::measure::session;
use crate::output::Outputs;

pub fn run(args: &CompareArgs) -> Result<u8> {
    crate::output::warn(&session::preflight()?);
    let base = &args.run;
    refuse_options(base)?;
    let volume = &base.targets[0];
    let sources = topology::Sources::system(None)?;
    let topo = topology::discover(volume, &sources)?;
    let members: Vec<PathBuf> = match compare::members_of(&topo, &show_path(volume)) {
        Ok(m) => m.into_iter().map(PathBuf::from).collect(),
        Err(e) => return usage(e.to_string()),
    };
    // Writes need a block device with a known stripe: said before the test
    // file of a mount point is made.
    let writes = write_sizes(args, &topo, members.len())?;
    // Validate the options once, as run would, before any I/O.
    config(&phase_args(base, members.clone(), 1, false))?;
    for m in &members {
        if let Err(e) = std::fs::File::open(m) {
            return usage(if crate::base::error::is_root() {
                format!(
                    "cannot read member {} ({e}){}",
                    crate::base::error::show_path(m),
                    crate::base::error::node_facts(m)
                )
            } else {
                format!(
                    "cannot read member {} ({e}): compare needs root to read the raw members",
                    crate::base::error::show_path(m)
                )
            });
        }
    }
    let protected: Vec<PathBuf> = members.iter().chain([volume]).cloned().collect();
    let protected = crate::device::protected_paths(&protected);
    let out = Outputs::check(
        base.outputs(),
        crate::report::Kind::Compare,
        &protected,
        &[],
    )?;
    // What the phases ask of a mounted volume's file system (--uncached,
    // --nowait, --hipri), checked before its test file is written.
    if volume.is_dir() {
        let mut asked = config(&phase_args(base, members.clone(), 1, false))?;
        asked.uncached = base.uncached;
        session::check_test_dir(&asked, volume)?;
    }
    let (vol_target, bed, note) = crate::device::test_file::for_volume(
        volume,
        args.file_size,
        base.offset,
        base.size,
        base.seed.unwrap_or(1),
    )?;
    let shared = shared_paths(&topo, &sources.host);
    let plan = plan_phases(args, &members, &shared, &vol_target, bed.is_some(), writes);
    phases::guard(&plan, &out)?;
    let (runs, refused) = phases::run(plan, args.repeat, &out)?;
    let test_file = bed.as_ref().map(|_| vol_target.display().to_string());
    let volume = Volume::new(show_path(volume), topo, test_file, note, args.repeat);
    let mut doc = compare::assemble(volume, runs, crate::base::signals::interrupted());
    if let Some(why) = &refused {
        doc.notes.push(why.note());
    }
    if !shared.is_empty() && !args.solo {
        doc.notes.push(format!(
            "{} host adapter(s) each carry several of the members: a member slow together may be its controller's ceiling, not its own; --solo reads each member alone and each controller's members together, and tells which",
            shared.len()
        ));
    }
    // With --json -, --live - or --html -, stdout carries that: the table goes to stderr.
    out.say(&crate::report::compare::render(&doc));
    out.write(crate::report::Doc::Compare(&doc))?;
    drop(bed);
    // What finished is written first: a phase refused for its zeros costs
    // none of the phases before it.
    if let Some(why) = refused {
        return Err(crate::base::error::ZeroReadsRefused(why.line()).into());
    }
    Ok(crate::base::error::exit_code(doc.interrupted, doc.failed()))
}

/// The host adapters that two or more members share, each with its
/// members' paths, when the members are behind two adapters or more:
/// `--solo` reads each such group together.
fn shared_paths(
    topo: &topology::Topology,
    host: &crate::base::host::Host,
) -> Vec<(String, Vec<PathBuf>)> {
    let members = crate::device::survey::stacked(topo);
    let groups = crate::device::paths::group_stacked(host, &members);
    if !groups.shared() {
        return Vec::new();
    }
    groups
        .groups
        .into_iter()
        .filter(|g| g.members.len() > 1)
        .map(|g| {
            (
                g.adapter,
                g.members.into_iter().map(PathBuf::from).collect(),
            )
        })
        .collect()
}

/// What `compare --rw write` writes: a full stripe and one chunk of the
/// volume's level, which must be known; and only on a block device (a
/// test file on a file system has no stripe to align to). None for reads.
fn write_sizes(
    args: &CompareArgs,
    topo: &topology::Topology,
    n: usize,
) -> Result<Option<WriteSizes>> {
    if !args.run.rw.writes() {
        return Ok(None);
    }
    if topo.resolved != "block device" {
        return usage("compare --rw write writes a block device volume (md, dm): on a mount point, compare reads; write a file with run --rw write");
    }
    let (g, basis) = compare::geometry(topo, n);
    match (g.chunk, g.full_stripe) {
        (Some(chunk), Some(full_stripe)) if chunk > 0 && full_stripe > chunk => {
            Ok(Some(WriteSizes { chunk, full_stripe }))
        }
        _ => usage(format!(
            "compare --rw write needs a striped or parity volume with a known chunk, to write full stripes and less than one ({basis}): measure a mirror with run --rw write"
        )),
    }
}
