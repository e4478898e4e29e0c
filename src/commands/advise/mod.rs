//! `stripebench advise VOLUME`: what is wrong with an array. The stack is
//! walked (`device::topology`) and every device of it read
//! (`device::survey`); `document::advise` plans the battery from that
//! (which checks apply, the budget of each) and makes the findings; the
//! measured checks are runs of `measure::session`, each with its settings
//! set and put back by the knob guard (as `run --readahead` does: a signal
//! or `stripebench restore` puts them back too).

mod apply;
mod battery;
mod check;
mod members;
mod paths;
mod reads;
mod requests;
mod writes;

use std::time::Instant;

use anyhow::Result;

use crate::base::error::{show_path, EXIT_FAILURE, EXIT_OK};
use crate::cli::AdviseArgs;
use crate::device::survey::Survey;
use crate::device::topology;
use crate::document::advise::{self, FindingsDocument};
use crate::measure::session;
use crate::output::{Outputs, Request};

pub fn run(args: &AdviseArgs) -> Result<u8> {
    crate::output::warn(&session::preflight()?);
    let started = Instant::now();
    let given = show_path(&args.volume);
    // Resolved once: a link re-read by every run could be pointed at
    // another device between the survey and the measurements (whose
    // read-ahead would then be set, and findings mixed from two devices).
    let args = &AdviseArgs {
        volume: resolved(&args.volume),
        ..args.clone()
    };
    let src = topology::Sources::system(args.dm_table.as_deref())?;
    let topo = topology::discover(&args.volume, &src)?;
    if let Err(why) = advise::check_medium(&topo) {
        return crate::base::error::usage(why);
    }
    let survey = battery::survey(&src, &topo);
    let protected = crate::device::protected_paths(std::slice::from_ref(&args.volume));
    let mut request = Request::json(args.json.as_deref());
    request.history = crate::cli::history_where(args.history.as_ref(), args.no_history);
    let out = Outputs::check(request, crate::report::Kind::Findings, &protected, &[])?;
    refuse_changed_settings(&topo)?;
    say_state(&topo, &survey, &out);
    // Refused before anything is measured: a budget the battery overruns
    // is not the budget the user gave.
    if let Err(why) = advise::check_budget(&topo, &survey, &battery::options(args, &topo)) {
        return crate::base::error::usage(why);
    }
    let first = battery::pass(args, &topo, &survey, &out, started)?;
    let doc = if args.apply && !first.interrupted {
        apply::apply(args, given, first, &src, &out)?
    } else {
        FindingsDocument {
            volume: given,
            ..first
        }
    };
    out.say(&crate::report::advise::render(&doc));
    out.write(crate::report::Doc::Findings(&doc))?;
    if doc.interrupted {
        return Ok(crate::base::error::exit_code(true, false));
    }
    Ok(if doc.fails(args.fail_on.0) {
        EXIT_FAILURE
    } else {
        EXIT_OK
    })
}

/// Refuses to read a stack a run changed (a killed one's setting left
/// behind, or a live one's now): findings and "the current value" would
/// be built on that run's value, not the device's.
fn refuse_changed_settings(topo: &topology::Topology) -> Result<()> {
    let mut names = Vec::new();
    stack_names(&topo.root, &mut names);
    let state = crate::device::state::state_dir()?;
    if let Some((k, killed)) = crate::device::knobs::changed_on(&state, &names).first() {
        let shown = show_path(&k.path);
        return crate::base::error::usage(if *killed {
            format!("a killed run left {shown} changed (it was {}): advise would read that run's value as the volume's: run 'stripebench restore{}' first", k.old, if crate::device::knobs::applied(&state).is_empty() { "" } else { " --keep-applied" })
        } else {
            format!("a run is changing {shown} now (it was {}): advise would read that run's value as the volume's: run advise when it has ended", k.old)
        });
    }
    Ok(())
}

/// A degraded or resyncing array is said before anything is measured:
/// every figure the battery takes is below the array's own.
fn say_state(topo: &topology::Topology, survey: &Survey, out: &Outputs) {
    for line in advise::state_words(topo, survey)
        .iter()
        .filter(|l| l.contains("degraded") || l.contains("in progress"))
    {
        out.note(&format!(
            "stripebench advise: {}: what is measured now is below what the array gives when whole and idle",
            crate::base::error::show_text(line)
        ));
    }
}

/// `volume` with its links resolved, once; as given when it cannot be
/// (the survey then says why).
fn resolved(volume: &std::path::Path) -> std::path::PathBuf {
    std::fs::canonicalize(volume).unwrap_or_else(|_| volume.to_path_buf())
}

/// The kernel names of every device of the stack (and of the disk under
/// each partition, whose queue holds the partition's settings).
fn stack_names<'a>(d: &'a topology::Device, out: &mut Vec<&'a str>) {
    out.push(&d.name);
    out.extend(d.parent.as_deref());
    for m in &d.members {
        stack_names(m, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_volume_is_resolved_once_so_a_flip_cannot_change_what_is_measured() {
        let t = tempfile::tempdir().unwrap();
        let a = t.path().join("a");
        std::fs::write(&a, b"").unwrap();
        let link = t.path().join("vol");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let at_start = resolved(&link);
        // The link flips after the survey: what the runs open does not.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        assert_eq!(at_start, std::fs::canonicalize(&a).unwrap());
        let c = crate::cli::advise::readahead_run(&at_start, 1024, 1.0, false).unwrap();
        assert_eq!(c.targets, vec![at_start.clone()]);
        // A path that does not resolve is kept for the survey to refuse.
        let gone = t.path().join("gone");
        assert_eq!(resolved(&gone), gone);
    }
}
