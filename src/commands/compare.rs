//! `stripebench compare VOLUME`: does the volume deliver what its members
//! can? The same read workload runs in phases (each member alone, all
//! members at once, each `--repeat` times; the volume with one worker and
//! with one per member, the volume through the page cache);
//! `document::compare` makes the ceilings, the efficiency, each member's
//! figure and the slow-member verdict of them.

use std::path::PathBuf;

use anyhow::Result;

use crate::base::error::{show_path, usage};
use crate::cli::compare::{config, phase_args, plan_phases, refuse_options, Planned, WriteSizes};
use crate::cli::CompareArgs;
use crate::device::topology;
use crate::document::compare::{self, Phase, Volume};
use crate::measure::live::RunOutputs;
use crate::measure::series::{self, Planner, Point, Ran, Series, Step};
use crate::measure::session;
use crate::output::Outputs;

pub fn run(args: &CompareArgs) -> Result<u8> {
    crate::output::warn(&session::preflight()?);
    let base = &args.run;
    refuse_options(base)?;
    let volume = &base.targets[0];
    let topo = topology::discover(volume, &topology::Sources::system(None)?)?;
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
    let plan = plan_phases(args, &members, &vol_target, bed.is_some(), writes);
    guard_phases(&plan, &out)?;
    let (runs, refused) = run_phases(plan, args.repeat, &out)?;
    let test_file = bed.as_ref().map(|_| vol_target.display().to_string());
    let volume = Volume::new(show_path(volume), topo, test_file, note, args.repeat);
    let mut doc = compare::assemble(volume, runs, crate::base::signals::interrupted());
    if let Some(why) = &refused {
        doc.notes.push(why.note());
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

/// Every phase is guarded (as its dry run) before the first one runs, so
/// that a phase refused late does not waste the ones before it; a repeat
/// has the options of its first run.
fn guard_phases(plan: &[Planned], out: &Outputs) -> Result<()> {
    let firsts = plan
        .iter()
        .filter(|p| p.1 == 1)
        .map(|(kind, _, a, owned)| {
            let config = config(a)?;
            Ok(Point {
                label: kind.to_string(),
                targets: config.targets.clone(),
                config,
                owned: *owned,
                repeat: 1,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    // Any error but a failed check is the comparison's own.
    let verdicts = series::check(&firsts, &out.for_run(None), &|_| false)?;
    if let Some((kind, refused)) = verdicts.iter().find(|v| !v.1.is_empty()) {
        return usage(format!(
            "refusing the comparison before any phase runs: phase {kind}: {}",
            refused[0]
        ));
    }
    Ok(())
}

/// A phase whose reads were mostly zeros (no medium answered them),
/// without --allow-holes: it ended the comparison and its figures are
/// left out of it.
struct ZeroPhase {
    kind: compare::PhaseKind,
    zeros: String,
}

impl ZeroPhase {
    /// The note the comparison's document carries.
    fn note(&self) -> String {
        format!(
            "phase {} stopped the comparison: {}; its figures are left out and the phases after it did not run (pass --allow-holes to accept them)",
            self.kind, self.zeros
        )
    }

    /// The error line.
    fn line(&self) -> String {
        format!(
            "refusing the comparison: phase {}: {}; the phases before it are written; pass --allow-holes to accept it",
            self.kind, self.zeros
        )
    }
}

/// Phases run in order (a series), on one live stream whose lines say
/// their phase; an interrupt ends the phase running and skips the rest,
/// as a phase refused for its zeros does.
fn run_phases(
    plan: Vec<Planned>,
    of: usize,
    out: &Outputs,
) -> Result<(Vec<Phase>, Option<ZeroPhase>)> {
    let mut phases = Phases {
        plan: plan.into_iter(),
        of,
        out,
        hub: out.live_hub()?,
        running: None,
        done: Vec::new(),
        refused: None,
    };
    Series::new().run(&mut phases)?;
    Ok((phases.done, phases.refused))
}

/// compare's planner: its phases, each one point.
struct Phases<'a> {
    plan: std::vec::IntoIter<Planned>,
    of: usize,
    out: &'a Outputs,
    hub: Option<crate::measure::live::LiveHub>,
    /// The phase running: its kind and which run of its kind.
    running: Option<(compare::PhaseKind, u32)>,
    done: Vec<Phase>,
    refused: Option<ZeroPhase>,
}

impl Planner for Phases<'_> {
    fn next(&mut self) -> Result<Option<Point>> {
        let Some((kind, repeat, a, owned)) = self.plan.next() else {
            return Ok(None);
        };
        let label = compare::live_label(&kind, repeat, self.of);
        // measure() starts a buffered read cold itself.
        let config = config(&a)?;
        self.running = Some((kind, repeat));
        Ok(Some(Point {
            label,
            targets: config.targets.clone(),
            config,
            owned,
            repeat: 1,
        }))
    }

    fn outputs(&self, point: &Point) -> Box<dyn RunOutputs + '_> {
        Box::new(self.out.for_run(self.hub.clone().map(|mut h| {
            h.label = Some(("phase", point.label.clone()));
            h
        })))
    }

    fn starting(&mut self, point: &Point, _run: usize) {
        eprintln!("stripebench compare: {}", point.label);
    }

    fn finished(&mut self, _point: Point, ran: Ran) -> Result<Step> {
        let (kind, repeat) = self.running.take().expect("a phase was running");
        if let Ran::Measured { runs, .. } = ran {
            for r in runs {
                let doc = crate::document::finished::document(&r.config, *r.finished);
                // Reads that no medium answered are no member's (or volume's) speed.
                if let Some(z) = doc.zero_figures().first().filter(|_| !r.config.allow_holes) {
                    self.refused = Some(ZeroPhase {
                        kind,
                        zeros: z.to_string(),
                    });
                    return Ok(Step::Stop);
                }
                self.done.push(Phase::run(kind.clone(), repeat, doc));
            }
        }
        Ok(Step::Next)
    }
}
