//! The stonewall groups' planner: each group one point of the series, its
//! documents written under its own (numbered) outputs as it ends, and the
//! exit code of the group that stopped the series kept for the process.

use anyhow::Result;

use super::{print_said, stdout_code, Checked};
use crate::base::error::{UsageError, EXIT_OK};
use crate::commands::run;
use crate::measure::live::{LiveHub, RunOutputs};
use crate::measure::series::{Planner, Point, Ran, Step};
use crate::output::Outputs;

/// The groups' planner: each group one point, its documents written under
/// its own (numbered) outputs as it ends.
pub(super) struct Groups {
    pub(super) groups: std::vec::IntoIter<Checked>,
    pub(super) n: usize,
    /// How many groups have begun.
    pub(super) begun: usize,
    /// The group running: its outputs, and its live stream.
    pub(super) hub: Option<(Outputs, Option<LiveHub>)>,
    /// The exit code of the group that stopped the series (0: none did).
    pub(super) code: u8,
}

impl Planner for Groups {
    fn next(&mut self) -> Result<Option<Point>> {
        let Some(c) = self.groups.next() else {
            return Ok(None);
        };
        self.begun += 1;
        print_said(&c.said);
        crate::output::warn(&crate::measure::session::preflight()?);
        let hub = c.out.live_hub()?;
        self.hub = Some((c.out, hub));
        Ok(Some(Point {
            label: format!("run {} of {}", self.begun, self.n),
            config: c.config,
            owned: crate::device::scratch::all_created_here(&c.targets),
            targets: c.targets,
            repeat: 1,
        }))
    }

    fn outputs(&self, _point: &Point) -> Box<dyn RunOutputs + '_> {
        let (out, hub) = self.hub.as_ref().expect("a group is running");
        Box::new(out.for_run(hub.clone()))
    }

    fn finished(&mut self, point: Point, ran: Ran) -> Result<Step> {
        let (out, _) = self.hub.take().expect("a group was running");
        let runs = match ran {
            Ran::Measured { runs, .. } => runs,
            Ran::Refused(why) => return Err(UsageError(why).into()),
        };
        let Some(r) = runs.into_iter().next() else {
            // Stopped by a signal before its window opened: the --json
            // says so, as the typed run's does.
            let e = crate::base::error::Interrupted("starting the run");
            let doc = crate::document::finished::Unmeasured::at(e.0);
            out.write_file("json", &crate::report::json::render(&doc))?;
            return Err(e.into());
        };
        let doc = crate::document::finished::document(&r.config, *r.finished);
        run::emit(&doc, &out)?;
        self.code = stdout_code(run::exit_code(&doc, &point.config, &out)?);
        Ok(if self.code == EXIT_OK {
            Step::Next
        } else {
            Step::Stop
        })
    }
}
