//! The stonewall groups' planner: each group one point of the series (its
//! jobs that are different workloads, runs at once), each run's documents
//! written under its own (numbered) outputs as the group ends, and the
//! exit code of the group that stopped the series kept for the process.

use anyhow::Result;

use super::{print_said, stdout_code, Checked};
use crate::base::error::{UsageError, EXIT_OK};
use crate::commands::run;
use crate::measure::live::{LiveHub, RunOutputs};
use crate::measure::series::{Part, Planner, Point, Ran, Step};
use crate::output::Outputs;

/// The groups' planner: each group one point, its runs' documents written
/// under their own (numbered) outputs as it ends.
pub(super) struct Groups {
    /// Each group: its runs, at once when more than one.
    pub(super) groups: std::vec::IntoIter<Vec<Checked>>,
    /// How many runs there are.
    pub(super) n: usize,
    /// How many runs have begun.
    pub(super) begun: usize,
    /// The group running: each run's outputs, and its live stream.
    pub(super) hubs: Vec<(Outputs, Option<LiveHub>)>,
    /// The exit code of the group that stopped the series (0: none did).
    pub(super) code: u8,
    /// What the last verified sequential mix wrote, for its read-back:
    /// its one worker's bytes from its region's start, capped at the
    /// region (fio's record of the mix's writes).
    pub(super) written: Option<u64>,
}

impl Planner for Groups {
    fn next(&mut self) -> Result<Option<Point>> {
        let Some(batch) = self.groups.next() else {
            return Ok(None);
        };
        let first = self.begun + 1;
        self.begun += batch.len();
        let label = if batch.len() == 1 {
            format!("run {first} of {}", self.n)
        } else {
            format!("runs {first} to {} of {}, at once", self.begun, self.n)
        };
        crate::output::warn(&crate::measure::session::preflight()?);
        self.hubs.clear();
        let mut parts = Vec::with_capacity(batch.len());
        // Runs at once pin their workers round-robin from where the run
        // before them left off, not each from the list's first CPU.
        let mut pinned = 0usize;
        for mut c in batch {
            if c.reads_what_was_written {
                // The mix's writes went in order from the region's start:
                // the read-back reads those bytes, as fio's verify reads
                // the blocks its record holds, and no more.
                let Some(w) = self.written.take() else {
                    return Err(UsageError("a verified mix's read-back came with no mix run before it: run this job with fio".into()).into());
                };
                if w == 0 {
                    anyhow::bail!("the verified mix wrote nothing (its reads drew every I/O), so its read-back has nothing to check: give the mix a write share (rwmixread= below 100)");
                }
                c.config.passes = None;
                c.config.io_limit = Some(w);
            }
            print_said(&c.said);
            if let Some(cpus) = c.config.cpus.as_mut().filter(|l| !l.is_empty()) {
                let by = pinned % cpus.len();
                cpus.rotate_left(by);
            }
            pinned += c.targets.len().max(1) * c.config.jobs.max(1);
            let hub = c.out.live_hub()?;
            self.hubs.push((c.out, hub));
            parts.push(Part {
                owned: crate::device::scratch::all_created_here(&c.targets),
                config: c.config,
                targets: c.targets,
            });
        }
        let own = parts.remove(0);
        Ok(Some(Point {
            label,
            config: own.config,
            owned: own.owned,
            targets: own.targets,
            repeat: 1,
            with: parts,
        }))
    }

    fn outputs(&self, point: &Point) -> Box<dyn RunOutputs + '_> {
        self.part_outputs(point, 0)
    }

    fn part_outputs(&self, _point: &Point, part: usize) -> Box<dyn RunOutputs + '_> {
        let (out, hub) = self.hubs.get(part).expect("a group's run is running");
        Box::new(out.for_run(hub.clone()))
    }

    fn finished(&mut self, _point: Point, ran: Ran) -> Result<Step> {
        let hubs = std::mem::take(&mut self.hubs);
        let (runs, partial) = match ran {
            Ran::Measured { runs, partial } => (runs, partial),
            Ran::Refused(why) => return Err(UsageError(why).into()),
        };
        // A run stopped by a signal before its window opened (its start
        // delay, or all of them at once): its --json says so, as the
        // typed run's does.
        let e = crate::base::error::Interrupted("starting the run");
        if partial {
            let doc = crate::document::finished::Unmeasured::at(e.0);
            for (k, (out, _)) in hubs.iter().enumerate() {
                if !runs.iter().any(|r| r.part == k) {
                    out.write_file("json", &crate::report::json::render(&doc))?;
                }
            }
        }
        if runs.is_empty() {
            // None measured: a signal, or every run failed (the series
            // then says why).
            return if partial {
                Err(e.into())
            } else {
                Ok(Step::Stop)
            };
        }
        // fio's exit_what=all: a run's end stops every job, those after it
        // never start.
        let all = runs.iter().any(|r| {
            (r.config.exitall).is_some_and(|e| e.what == crate::measure::together::ExitWhat::All)
        });
        // Each run's documents, in the runs' order; the first exit code
        // that is not 0 is the group's.
        for r in runs {
            if r.config.verify && r.config.rw == crate::measure::config::RwMode::Rw {
                let f = &r.finished;
                let region = f.plan.workers.iter().map(|w| w.region.length).min();
                let wrote: u64 = f
                    .execution
                    .outcomes
                    .iter()
                    .map(|o| o.span_write_bytes)
                    .sum();
                self.written = Some(region.map_or(wrote, |l| wrote.min(l)));
            }
            let (out, _) = &hubs[r.part];
            let doc = crate::document::finished::document(&r.config, *r.finished);
            run::emit(&doc, out)?;
            let code = stdout_code(run::exit_code(&doc, &r.config, out)?);
            if self.code == EXIT_OK {
                self.code = code;
            }
        }
        let left = self.n - self.begun;
        if all && self.code == EXIT_OK && left > 0 {
            crate::base::error::say(format_args!(
                "stripebench: exit_what=all (fio's exitall): run {} ended, so the {left} after it do not run, as fio starts none of its jobs after",
                self.begun
            ));
            return Ok(Step::Stop);
        }
        Ok(if self.code == EXIT_OK {
            Step::Next
        } else {
            Step::Stop
        })
    }
}
