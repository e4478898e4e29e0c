//! compare's phases as a series: every phase guarded (as its dry run)
//! before the first runs, then run in order on one live stream; a phase
//! refused for its zeros stops the comparison and keeps what finished.

use anyhow::Result;

use crate::base::error::usage;
use crate::cli::compare::{config, Planned};
use crate::document::compare::{self, Phase};
use crate::measure::live::RunOutputs;
use crate::measure::series::{self, Planner, Point, Ran, Series, Step};
use crate::output::Outputs;

/// Every phase is guarded (as its dry run) before the first one runs, so
/// that a phase refused late does not waste the ones before it; a repeat
/// has the options of its first run.
pub(super) fn guard(plan: &[Planned], out: &Outputs) -> Result<()> {
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
                with: Vec::new(),
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
pub(super) struct ZeroPhase {
    kind: compare::PhaseKind,
    zeros: String,
}

impl ZeroPhase {
    /// The note the comparison's document carries.
    pub(super) fn note(&self) -> String {
        format!(
            "phase {} stopped the comparison: {}; its figures are left out and the phases after it did not run (pass --allow-holes to accept them)",
            self.kind, self.zeros
        )
    }

    /// The error line.
    pub(super) fn line(&self) -> String {
        format!(
            "refusing the comparison: phase {}: {}; the phases before it are written; pass --allow-holes to accept it",
            self.kind, self.zeros
        )
    }
}

/// Phases run in order (a series), on one live stream whose lines say
/// their phase; an interrupt ends the phase running and skips the rest,
/// as a phase refused for its zeros does.
pub(super) fn run(
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
            with: Vec::new(),
        }))
    }

    fn outputs(&self, point: &Point) -> Box<dyn RunOutputs + '_> {
        Box::new(self.out.for_run(self.hub.clone().map(|mut h| {
            h.label = Some(("phase", point.label.clone()));
            h
        })))
    }

    fn starting(&mut self, point: &Point, _run: usize) {
        self.out
            .note(&format!("stripebench compare: {}", point.label));
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
                crate::commands::history::record::record(
                    self.out.request(),
                    &doc,
                    &format!("compare:{kind}"),
                );
                self.done.push(Phase::run(kind.clone(), repeat, doc));
            }
        }
        Ok(Step::Next)
    }
}
