//! A sweep's points measured, each with its repeats, as a
//! `measure::series` whose planner is here: each point scheduled from what
//! the points before it delivered, each finished one a row and a rewrite
//! of the documents.

use anyhow::Result;

use crate::cli::SweepArgs;
use crate::document::run::RunDocument;
use crate::document::sweep::{PointDoc, SweepDocument};
use crate::measure::live::RunOutputs;
use crate::measure::series::{Planner, Point, Ran, Series, Step};
use crate::output::Outputs;

use super::points::{label, PointPlan};

/// Runs the points in order (a series), each row printed and the
/// documents rewritten after it; a signal ends the sweep after the point it
/// stopped.
pub fn run_points(
    args: &SweepArgs,
    plans: &[PointPlan],
    doc: &mut SweepDocument,
    out: &Outputs,
    hub: Option<crate::measure::live::LiveHub>,
) -> Result<()> {
    let say = |line: &str| out.say(&format!("{line}\n"));
    for line in crate::report::sweep::preamble(&doc.params, plans.len(), args.repeat) {
        say(&line);
    }
    // `--param target`: which target each number is.
    let mut legend: Vec<String> = Vec::new();
    for (pt, _, paths) in plans {
        if let (Some((_, k)), [path]) = (pt.iter().find(|(n, _)| n == "target"), &paths[..]) {
            let line = format!("{k} = {}", crate::base::error::show_path(path));
            if !legend.contains(&line) {
                legend.push(line);
            }
        }
    }
    if !legend.is_empty() {
        say(&format!(
            "target: {} (one at a time: each point drives one target alone)",
            legend.join(", ")
        ));
    }
    say(&crate::report::sweep::header(&doc.params));
    let mut points = Points {
        repeat: args.repeat,
        plans: plans.iter(),
        doc,
        out,
        hub,
        progress: crate::measure::progress::Progress::new(!args.run.no_progress),
        total_runs: plans.len() * args.repeat,
        per_run: plans[0].1.duration.as_secs_f64() + plans[0].1.ramp.as_secs_f64(),
        done_runs: 0,
        said: Vec::new(),
        running: None,
    };
    let ended = Series::new().run(&mut points)?;
    points.progress.finish();
    if ended.interrupted {
        points.doc.interrupted = true;
    }
    Ok(())
}

/// sweep's planner: its points in order, each scheduled from what the
/// points before it delivered, each finished point a row and a rewrite of
/// the documents.
struct Points<'a, 'd> {
    repeat: usize,
    plans: std::slice::Iter<'a, PointPlan>,
    doc: &'d mut SweepDocument,
    out: &'a Outputs,
    hub: Option<crate::measure::live::LiveHub>,
    progress: crate::measure::progress::Progress,
    total_runs: usize,
    per_run: f64,
    done_runs: usize,
    /// The warnings listed so far: each is listed once in the sweep.
    said: Vec<String>,
    /// The values of the point running.
    running: Option<&'a Vec<(String, String)>>,
}

impl Points<'_, '_> {
    fn say(&self, line: &str) {
        self.out.say(&format!("{line}\n"));
    }
}

impl Planner for Points<'_, '_> {
    fn next(&mut self) -> Result<Option<Point>> {
        while let Some((pt, cfg, paths)) = self.plans.next() {
            // A share of the unthrottled rate: from what that point delivered.
            match crate::document::sweep::schedule(pt, cfg, &self.doc.points) {
                Ok(config) => {
                    self.running = Some(pt);
                    return Ok(Some(Point {
                        label: label(pt),
                        config,
                        targets: paths.clone(),
                        owned: false,
                        repeat: self.repeat,
                        with: Vec::new(),
                    }));
                }
                Err(why) => {
                    self.say(&format!("  skipped {}: {why}", label(pt)));
                    self.done_runs += self.repeat;
                }
            }
        }
        Ok(None)
    }

    fn outputs(&self, point: &Point) -> Box<dyn RunOutputs + '_> {
        Box::new(self.out.for_run(self.hub.clone().map(|mut h| {
            h.label = Some(("point", point.label.clone()));
            h
        })))
    }

    fn starting(&mut self, point: &Point, run: usize) {
        self.progress.message(&format!(
            "point {}/{}: {} ({:.0}s left for the sweep)",
            self.done_runs + run + 1,
            self.total_runs,
            point.label,
            (self.total_runs - self.done_runs - run) as f64 * self.per_run
        ));
    }

    fn finished(&mut self, _point: Point, ran: Ran) -> Result<Step> {
        let pt = self.running.take().expect("a point was running");
        // Past a point cut short the sweep ends: only whole points count on.
        self.done_runs += self.repeat;
        let Ran::Measured { runs, partial } = ran else {
            unreachable!("a sweep's refusals are errors")
        };
        if runs.is_empty() {
            self.say("  (interrupted in the ramp of this point: nothing measured, no row)");
            return Ok(Step::Stop);
        }
        let runs: Vec<RunDocument> = runs
            .into_iter()
            .map(|r| crate::document::finished::document(&r.config, *r.finished))
            .collect();
        let at: Vec<String> = pt.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for r in &runs {
            crate::commands::history::record::record(
                self.out.request(),
                r,
                &format!("sweep:{}", at.join(",")),
            );
        }
        let p = PointDoc::summarize(pt.clone(), runs, partial);
        self.progress.message("");
        for line in crate::report::sweep::point_lines(&p, &mut self.said) {
            self.say(&line);
        }
        self.doc.points.push(p);
        // Rewritten whole after every point (the JSON, the CSV): an
        // interrupted sweep keeps what it finished.
        self.out.save_point(crate::report::Doc::Sweep(self.doc))?;
        Ok(Step::Next)
    }
}
