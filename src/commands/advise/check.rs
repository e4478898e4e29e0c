//! One measured check of advise's as a series: its runs planned (each
//! with the line said before it), paced to the budget, run in order up to
//! the first refused; each run's document, or why it was refused.

use anyhow::Result;

use crate::cli::AdviseArgs;
use crate::document::advise::Battery;
use crate::document::run::RunDocument;
use crate::measure::config::RunConfig;
use crate::measure::live::RunOutputs;
use crate::measure::series::{Planner, Point, Ran, Series, Step};
use crate::output::Outputs;

/// One run of a measured check: its options (the window as planned: the
/// series paces it) and the line said before it, given the paced window.
pub(super) type Planned<'a> = (RunConfig, Box<dyn Fn(f64) -> String + 'a>);

/// What a check's run gave: its document, or why it was refused (a usage
/// error of `run`'s, or reads no medium answered).
pub(super) type Taken = std::result::Result<RunDocument, String>;

/// A measured check's runs, in order, as a series (paced to the budget):
/// each one's document, up to the first that was refused (which ends the
/// check), or what finished before a signal.
pub(super) fn take(
    series: &mut Series<'_>,
    out: &Outputs,
    runs: Vec<Planned<'_>>,
) -> Result<Vec<Taken>> {
    let mut check = Check {
        out,
        todo: runs.into_iter(),
        say: None,
        taken: Vec::new(),
    };
    series.run(&mut check)?;
    Ok(check.taken)
}

/// advise's planner for one check.
struct Check<'a, 'b> {
    out: &'a Outputs,
    todo: std::vec::IntoIter<Planned<'b>>,
    say: Option<Box<dyn Fn(f64) -> String + 'b>>,
    taken: Vec<Taken>,
}

impl Planner for Check<'_, '_> {
    fn next(&mut self) -> Result<Option<Point>> {
        let Some((config, say)) = self.todo.next() else {
            return Ok(None);
        };
        self.say = Some(say);
        Ok(Some(Point {
            label: String::new(),
            targets: config.targets.clone(),
            config,
            owned: false,
            repeat: 1,
            with: Vec::new(),
        }))
    }

    fn outputs(&self, _point: &Point) -> Box<dyn RunOutputs + '_> {
        Box::new(self.out.for_run(None))
    }

    fn starting(&mut self, point: &Point, _run: usize) {
        if let Some(say) = &self.say {
            self.out.note(&say(point.config.duration.as_secs_f64()));
        }
    }

    fn finished(&mut self, point: Point, ran: Ran) -> Result<Step> {
        let runs = match ran {
            Ran::Refused(why) => {
                self.taken.push(Err(why));
                return Ok(Step::Stop);
            }
            Ran::Measured { runs, .. } => runs,
        };
        for r in runs {
            let doc = crate::document::finished::document(&r.config, *r.finished);
            // Reads that no medium answered are no member's or volume's
            // speed: the check that needed them is refused, and says why.
            if let Some(z) = doc.zero_figures().first().filter(|_| !r.config.allow_holes) {
                self.taken.push(Err(format!(
                    "refusing to take this run's figure as the device's speed: {z}; pass --allow-holes to accept it"
                )));
                return Ok(Step::Stop);
            }
            crate::commands::history::record::record(
                self.out.request(),
                &doc,
                &format!("advise:{}", point.label),
            );
            self.taken.push(Ok(doc));
        }
        Ok(Step::Next)
    }
}

/// Marks check `id` skipped, with `detail`.
pub(super) fn skip(battery: &mut Battery, id: &str, detail: String) {
    if let Some(c) = battery.checks.iter_mut().find(|c| c.id == id) {
        c.status = "skipped".into();
        c.detail = detail;
    }
}

/// A run's options as advise's CLI layer built them, with `--allow-holes`.
pub(super) fn options_of(args: &AdviseArgs, c: Result<RunConfig>) -> Result<RunConfig> {
    let mut c = c?;
    c.allow_holes = args.allow_holes;
    Ok(c)
}

/// A line said before a run, given its paced window in seconds.
pub(super) fn said<'a>(f: impl Fn(f64) -> String + 'a) -> Box<dyn Fn(f64) -> String + 'a> {
    Box::new(f)
}
