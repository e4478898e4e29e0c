//! A series of measurements: the one loop behind sweep's points, compare's
//! phases and advise's battery. A planner hands out points (a label, a run
//! configuration and its targets, how many times to run it); the series
//! checks every point given to it with a dry run before any I/O, runs them
//! in order, honours a signal between points and within one (the run in
//! progress is kept, marked partial, and the series ends; a run stopped in
//! its ramp measured nothing and is left out, not drawn as 0 MB/s), and
//! hands every finished point back to its planner, which keeps it. With a
//! budget ([`Pace`]) each window is shrunk to fit what is left of it.
//!
//! The series knows runs, not documents: the planner makes each point's
//! documents of the runs it is handed, and writes them.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;

use crate::measure::config::RunConfig;
use crate::measure::live::RunOutputs;
use crate::measure::session::{measure, Finished, Outcome};
use crate::measure::together::{NotStarted, Together};

/// One point of a series.
pub struct Point {
    /// What the point is called in the table, the live stream and the dry run.
    pub label: String,
    pub config: RunConfig,
    pub targets: Vec<PathBuf>,
    /// The targets are files stripebench created (a test bed).
    pub owned: bool,
    /// How many times it runs (a sweep's `--repeat`): 1 for most.
    pub repeat: usize,
    /// Runs that go at once with it, their windows opened at the same
    /// instant (fio's jobs of one group that are different workloads):
    /// each its own run and document. Empty for most.
    pub with: Vec<Part>,
}

/// A run that goes at once with a point's own ([`Point::with`]).
pub struct Part {
    pub config: RunConfig,
    pub targets: Vec<PathBuf>,
    pub owned: bool,
}

/// A point's dry run: its label and what refuses it (empty: nothing).
pub type Verdict = (String, Vec<String>);

/// Whether an error is a refusal (the user's to fix, exit 2) rather than a
/// failure: the top of the program knows every layer's error types.
pub type IsRefusal<'a> = &'a dyn Fn(&anyhow::Error) -> bool;

/// Each point, run as a dry run: its guard checks (consent, the device's
/// state, aliases, holes) and the plan's checks (sizes, memory). A refusal
/// that is not a check (an option the target cannot take) refuses the
/// point too; any other error ends the check.
pub fn check(
    points: &[Point],
    out: &dyn RunOutputs,
    is_refusal: IsRefusal<'_>,
) -> Result<Vec<Verdict>> {
    check_but(points, out, is_refusal, &[])
}

/// [`check`], with the checks named in `later` left to the run: what a
/// point before it may change (a write group fills the holes of the read
/// group after it).
pub fn check_but(
    points: &[Point],
    out: &dyn RunOutputs,
    is_refusal: IsRefusal<'_>,
    later: &[&str],
) -> Result<Vec<Verdict>> {
    let mut verdicts = Vec::new();
    for p in points {
        let mut dry = p.config.clone();
        dry.dry_run = true;
        let refused = match measure(&dry, &p.targets, p.owned, out) {
            Ok(Outcome::DryRun(_, checks)) => checks
                .iter()
                .flat_map(|(_, cs)| {
                    cs.iter()
                        .filter(|c| !c.passed && !later.contains(&c.name.as_str()))
                })
                .map(|c| c.detail.clone())
                .collect(),
            Ok(Outcome::Done(_)) => unreachable!("a dry run measures nothing"),
            Err(e) if is_refusal(&e) => vec![format!("{e:#}")],
            Err(e) => return Err(e),
        };
        verdicts.push((p.label.clone(), refused));
    }
    Ok(verdicts)
}

/// One run of a point, as measured.
pub struct Run {
    /// The configuration it ran with (its window paced, when paced).
    pub config: RunConfig,
    pub finished: Box<Finished>,
    /// Which of the runs at once it is: 0 the point's own, k its
    /// `with[k - 1]`.
    pub part: usize,
}

/// What became of a point.
pub enum Ran {
    /// Its runs that measured something (a run stopped in its ramp is left
    /// out); `partial` when a signal cut the last one short.
    Measured { runs: Vec<Run>, partial: bool },
    /// Refused when it came to run (a lock another run holds, no root to
    /// set read-ahead): why, in one line. Only when the series was made
    /// to take refusals as results ([`Series::refusals_are_results`]).
    Refused(String),
}

/// Whether the series goes on after a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Next,
    Stop,
}

/// What hands out the points of a series and keeps what they measured.
pub trait Planner {
    /// The next point to run, planned from what has finished so far
    /// (`None`: the series is over).
    fn next(&mut self) -> Result<Option<Point>>;
    /// Where the point's run sends its live seconds.
    fn outputs(&self, point: &Point) -> Box<dyn RunOutputs + '_>;
    /// Where run `part` of the runs at once sends its live seconds (0:
    /// the point's own).
    fn part_outputs(&self, point: &Point, _part: usize) -> Box<dyn RunOutputs + '_> {
        self.outputs(point)
    }
    /// Said before run `run` (from 0) of `point` begins, its window paced.
    fn starting(&mut self, _point: &Point, _run: usize) {}
    /// The point is done: keep it. A point cut by a signal ends the series
    /// whatever this returns.
    fn finished(&mut self, point: Point, ran: Ran) -> Result<Step>;
}

/// How a series ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// A signal stopped it (between points, or within one).
    pub interrupted: bool,
}

/// Runs a planner's points in order.
pub struct Series<'a> {
    pace: Option<&'a mut Pace>,
    refusals: Option<IsRefusal<'a>>,
}

impl<'a> Series<'a> {
    pub fn new() -> Series<'a> {
        Series {
            pace: None,
            refusals: None,
        }
    }

    /// Each window shrunk to fit the budget `pace` keeps.
    pub fn paced(mut self, pace: &'a mut Pace) -> Series<'a> {
        self.pace = Some(pace);
        self
    }

    /// A run refused when it comes to run (`is_refusal`) is the point's
    /// result ([`Ran::Refused`]), not the series' error.
    pub fn refusals_are_results(mut self, is_refusal: IsRefusal<'a>) -> Series<'a> {
        self.refusals = Some(is_refusal);
        self
    }

    /// One more run of `planned` seconds than the budget was planned for
    /// (a run the planner adds on what it found).
    pub fn one_more(&mut self, planned: f64) {
        if let Some(pace) = self.pace.as_deref_mut() {
            pace.add(planned);
        }
    }

    /// Runs every point the planner hands out, in order.
    pub fn run(&mut self, planner: &mut dyn Planner) -> Result<Ended> {
        loop {
            if crate::base::signals::interrupted() {
                return Ok(Ended { interrupted: true });
            }
            let Some(point) = planner.next()? else {
                return Ok(Ended { interrupted: false });
            };
            let (ran, point, failed) = if point.with.is_empty() {
                let (ran, point) = self.point(planner, point)?;
                (ran, point, None)
            } else {
                at_once(planner, point)
            };
            let cut = match &ran {
                Ran::Measured { runs, partial } => *partial || runs.is_empty(),
                Ran::Refused(_) => false,
            };
            let step = planner.finished(point, ran)?;
            // What the other runs at once measured is kept first.
            if let Some(e) = failed {
                return Err(e);
            }
            if cut {
                return Ok(Ended { interrupted: true });
            }
            if step == Step::Stop {
                return Ok(Ended { interrupted: false });
            }
        }
    }

    /// One point's runs. A signal while a run was set up (before its ramp)
    /// measured nothing, like a stop in the ramp.
    fn point(&mut self, planner: &mut dyn Planner, mut point: Point) -> Result<(Ran, Point)> {
        let mut runs = Vec::new();
        let mut partial = false;
        for i in 0..point.repeat.max(1) {
            let planned = point.config.duration.as_secs_f64();
            if let Some(pace) = self.pace.as_deref() {
                // To the millisecond, as --duration is given.
                let ms = (pace.window(planned) * 1000.0).round().max(1.0) as u64;
                point.config.duration = std::time::Duration::from_millis(ms);
            }
            planner.starting(&point, i);
            let t0 = Instant::now();
            let outcome = {
                let out = planner.outputs(&point);
                measure(&point.config, &point.targets, point.owned, &*out)
            };
            if let Some(pace) = self.pace.as_deref_mut() {
                pace.ran(planned, point.config.duration.as_secs_f64(), t0);
            }
            let finished = match outcome {
                Ok(Outcome::Done(f)) => f,
                Ok(Outcome::DryRun(..)) => unreachable!("a series never asks for a dry run"),
                Err(e) if crate::base::error::Interrupted::is(&e) => {
                    return Ok((
                        Ran::Measured {
                            runs,
                            partial: true,
                        },
                        point,
                    ))
                }
                Err(e) if self.refusals.is_some_and(|r| r(&e)) => {
                    let why = crate::base::error::show_lines(&format!("{e:#}")).into_owned();
                    return Ok((Ran::Refused(why), point));
                }
                Err(e) => return Err(e),
            };
            partial = finished.execution.interrupted;
            if !(partial && finished.execution.window_sec <= 0.0) {
                runs.push(Run {
                    config: point.config.clone(),
                    finished,
                    part: 0,
                });
            }
            if partial {
                break;
            }
        }
        Ok((Ran::Measured { runs, partial }, point))
    }
}

/// A point and its runs at once ([`Point::with`]), each on a thread of
/// its own, their windows opened together ([`Together`]); once each. What
/// they measured, in order, and the error of one that failed (the first
/// that failed on its own, not for another's sake): the others' runs are
/// kept whatever became of it. A run stopped in its ramp measured nothing
/// and is left out.
fn at_once(planner: &mut dyn Planner, mut point: Point) -> (Ran, Point, Option<anyhow::Error>) {
    let together = Together::new(1 + point.with.len());
    point.config.together = Some(together.clone());
    for p in &mut point.with {
        p.config.together = Some(together.clone());
    }
    planner.starting(&point, 0);
    let parts: Vec<(&RunConfig, &[PathBuf], bool)> =
        std::iter::once((&point.config, point.targets.as_slice(), point.owned))
            .chain(
                point
                    .with
                    .iter()
                    .map(|p| (&p.config, p.targets.as_slice(), p.owned)),
            )
            .collect();
    let outcomes: Vec<Result<Outcome>> = {
        let outs: Vec<Box<dyn RunOutputs + '_>> = (0..parts.len())
            .map(|k| planner.part_outputs(&point, k))
            .collect();
        std::thread::scope(|s| {
            let handles: Vec<_> = parts
                .iter()
                .zip(&outs)
                .enumerate()
                .map(|(k, (&(config, targets, owned), out))| {
                    let mut member = together.member(format!("run {} of the runs at once", k + 1));
                    std::thread::Builder::new()
                        .name(format!("sb-part-{k}"))
                        .spawn_scoped(s, move || {
                            let r = measure(config, targets, owned, &**out);
                            if let Err(e) = &r {
                                member.ended(format!("{e:#}"));
                            }
                            r
                        })
                })
                .collect();
            handles
                .into_iter()
                .enumerate()
                .map(|(k, h)| match h {
                    Ok(h) => h.join().unwrap_or_else(|_| {
                        Err(anyhow::anyhow!(
                            "run {} of the runs at once panicked",
                            k + 1
                        ))
                    }),
                    Err(e) => Err(anyhow::anyhow!(
                        "cannot start a thread for run {} of the runs at once: {e}",
                        k + 1
                    )),
                })
                .collect()
        })
    };
    let mut runs = Vec::new();
    let mut partial = false;
    let mut failed: Option<anyhow::Error> = None;
    for (k, outcome) in outcomes.into_iter().enumerate() {
        match outcome {
            Ok(Outcome::Done(finished)) => {
                partial |= finished.execution.interrupted;
                if !(finished.execution.interrupted && finished.execution.window_sec <= 0.0) {
                    runs.push(Run {
                        config: parts[k].0.clone(),
                        finished,
                        part: k,
                    });
                }
            }
            Ok(Outcome::DryRun(..)) => unreachable!("a series never asks for a dry run"),
            Err(e) if crate::base::error::Interrupted::is(&e) => partial = true,
            // One called off for another's failure says so; the other's
            // own error is the one to show.
            Err(e) => match &failed {
                Some(f) if !NotStarted::is(f) || NotStarted::is(&e) => {}
                _ => failed = Some(e),
            },
        }
    }
    let mut devices: Vec<&mut Vec<_>> = runs
        .iter_mut()
        .map(|r| &mut r.finished.execution.devices)
        .collect();
    crate::measure::together::pool_devices(&mut devices);
    (Ran::Measured { runs, partial }, point, failed)
}

impl Default for Series<'_> {
    fn default() -> Self {
        Series::new()
    }
}

/// Keeps a series within its budget: each run's window is the planned
/// one, shrunk in proportion when the runs so far overran (a loaded host,
/// a slow emulator: their set-up took longer than `overhead_sec`, the
/// guess to start from), never below `min_window_sec`.
pub struct Pace {
    end: Instant,
    /// The planned windows of the runs not made yet, and how many.
    windows_left: f64,
    runs_left: usize,
    /// What a run has cost beyond its window, on average so far.
    overhead: f64,
    runs: usize,
    min_window: f64,
}

impl Pace {
    /// A budget of `budget_sec` from `started`, for `runs` runs whose
    /// planned windows add up to `windows_sec`.
    pub fn new(
        started: Instant,
        budget_sec: f64,
        (windows_sec, runs): (f64, usize),
        overhead_sec: f64,
        min_window_sec: f64,
    ) -> Pace {
        Pace {
            end: started + std::time::Duration::from_secs_f64(budget_sec.max(0.0)),
            windows_left: windows_sec,
            runs_left: runs,
            overhead: overhead_sec,
            runs: 0,
            min_window: min_window_sec,
        }
    }

    /// One more run of `planned` seconds than the plan held.
    pub fn add(&mut self, planned: f64) {
        self.runs_left += 1;
        self.windows_left += planned;
    }

    /// The window of the next run, planned `planned` seconds.
    pub fn window(&self, planned: f64) -> f64 {
        let left = self
            .end
            .saturating_duration_since(Instant::now())
            .as_secs_f64();
        let for_windows = left - self.overhead * self.runs_left as f64;
        let scale = if self.windows_left > 0.0 {
            (for_windows / self.windows_left).clamp(0.0, 1.0)
        } else {
            1.0
        };
        (planned * scale).max(self.min_window)
    }

    /// A run planned `planned` seconds, given `window`, began at `t0` and
    /// is over: learn what it cost beyond its window.
    fn ran(&mut self, planned: f64, window: f64, t0: Instant) {
        let extra = (t0.elapsed().as_secs_f64() - window).max(0.0);
        self.overhead = (self.overhead * self.runs as f64 + extra) / (self.runs + 1) as f64;
        self.runs += 1;
        self.runs_left = self.runs_left.saturating_sub(1);
        self.windows_left = (self.windows_left - planned).max(0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pace_with_time_to_spare_keeps_the_planned_window() {
        let p = Pace::new(Instant::now(), 100.0, (10.0, 2), 1.0, 0.5);
        assert_eq!(p.window(5.0), 5.0);
    }

    #[test]
    fn a_pace_short_of_time_shrinks_each_window_in_proportion_but_not_below_the_floor() {
        // 10 s left, 2 runs of 1 s overhead each: 8 s for 16 s of windows.
        let p = Pace::new(Instant::now(), 10.0, (16.0, 2), 1.0, 0.5);
        let w = p.window(8.0);
        assert!((3.9..=4.0).contains(&w), "{w}");
        let spent = Pace::new(Instant::now(), 0.0, (16.0, 2), 1.0, 0.5);
        assert_eq!(spent.window(8.0), 0.5);
    }

    #[test]
    fn a_pace_learns_the_overhead_of_the_runs_made() {
        let mut p = Pace::new(Instant::now(), 1000.0, (20.0, 2), 0.0, 0.1);
        // A run planned 10 s, given 0 s of window, that took its time: all
        // of it was overhead.
        let t0 = Instant::now() - std::time::Duration::from_secs(3);
        p.ran(10.0, 0.0, t0);
        assert!(p.overhead >= 3.0, "{}", p.overhead);
        assert_eq!(p.runs_left, 1);
        assert_eq!(p.windows_left, 10.0);
    }
}
