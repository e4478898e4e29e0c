//! `stripebench advise VOLUME`: what is wrong with an array. The stack is
//! walked (`device::topology`) and every device of it read
//! (`device::survey`); `document::advise` plans the battery from that
//! (which checks apply, the budget of each) and makes the findings; the
//! measured checks are runs of `measure::session`, each with its settings
//! set and put back by the knob guard (as `run --readahead` does: a signal
//! or `stripebench restore` puts them back too).

use std::time::Instant;

use anyhow::Result;

use crate::base::error::{show_path, EXIT_FAILURE, EXIT_OK, EXIT_USAGE};
use crate::cli::AdviseArgs;
use crate::device::survey::Survey;
use crate::device::topology;
use crate::document::advise::{self, Battery, FindingsDocument, Measurement, Options};
use crate::document::run::RunDocument;
use crate::measure::config::RunConfig;
use crate::measure::live::RunOutputs;
use crate::measure::series::{Pace, Planner, Point, Ran, Series, Step};
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
    let survey = survey(&src, &topo);
    let protected = crate::device::protected_paths(std::slice::from_ref(&args.volume));
    let out = Outputs::check(
        Request::json(args.json.as_deref()),
        crate::report::Kind::Findings,
        &protected,
        &[],
    )?;
    // A setting of the stack that a run changed (a killed one's left
    // behind, or a live one's now) reads as that run's value, not the
    // device's: findings and "the current value" would be built on it.
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
    // A degraded or resyncing array is said before anything is measured:
    // every figure the battery takes is below the array's own.
    for line in advise::state_words(&topo, &survey)
        .iter()
        .filter(|l| l.contains("degraded") || l.contains("in progress"))
    {
        eprintln!(
            "stripebench advise: {}: what is measured now is below what the array gives when whole and idle",
            crate::base::error::show_text(line)
        );
    }
    // Refused before anything is measured: a budget the battery overruns
    // is not the budget the user gave.
    if let Err(why) = advise::check_budget(&topo, &survey, &options(args, &topo)) {
        return crate::base::error::usage(why);
    }
    let first = battery_pass(args, &topo, &survey, &out, started)?;
    let doc = if args.apply && !first.interrupted {
        apply(args, given, first, &src, &out)?
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

/// The stack's sysfs facts, and the stripe hints of the file system on
/// the volume (its first 4 KiB, read from the device the stack named).
fn survey(src: &topology::Sources, topo: &topology::Topology) -> Survey {
    let mut s = Survey::read(&src.host, topo, src.dm_table.as_deref());
    let root = &topo.root;
    if !root.path.is_empty() && !root.dev.is_empty() {
        s.fs_hints = crate::device::fs_hints::read(std::path::Path::new(&root.path), &root.dev)
            .ok()
            .flatten();
    }
    s
}

/// What the battery is asked for.
fn options(args: &AdviseArgs, topo: &topology::Topology) -> Options {
    Options {
        budget_sec: args.budget.as_secs_f64(),
        quick: args.quick,
        allow_destructive: args.allow_destructive,
        block_device: topo.resolved == "block device",
    }
}

/// One battery over the stack as `topo` and `survey` found it: the static
/// findings, the measured checks, the document (its volume named as
/// resolved: the caller names it as given).
fn battery_pass(
    args: &AdviseArgs,
    topo: &topology::Topology,
    survey: &Survey,
    out: &Outputs,
    started: Instant,
) -> Result<FindingsDocument> {
    let mut battery = advise::plan(topo, survey, &options(args, topo));
    let mut findings = advise::static_findings(topo, survey);
    let mut pace = Pace::new(
        started,
        options(args, topo).budget_sec,
        (battery.windows_sec(), battery.runs()),
        advise::RUN_OVERHEAD_SEC,
        advise::MIN_WINDOW_SEC,
    );
    // A run refused when it comes to run (no root to set read-ahead, a lock
    // another run holds) skips its check, with the reason.
    let is_refusal = |e: &anyhow::Error| crate::commands::exit::exit_code_for(e) == EXIT_USAGE;
    let series = &mut Series::new()
        .paced(&mut pace)
        .refusals_are_results(&is_refusal);
    let (points, measurements) = measure_readahead(args, &mut battery, out, series)?;
    findings.extend(advise::readahead_finding(topo, survey, &points));
    let fixes: Vec<advise::Setting> = findings
        .iter()
        .filter(|f| advise::member_fix(&f.id))
        .flat_map(|f| f.settings.iter().filter(|s| s.appliable()).cloned())
        .collect();
    let (splits, measurements) =
        measure_requests(args, &mut battery, out, series, measurements, &fixes)?;
    advise::measured_splits(&mut findings, &splits);
    advise::member_fix_gain(&mut findings, &measurements);
    let (verdict, measurements) =
        match measure_members(args, &mut battery, out, series, measurements)? {
            (Some(samples), m) => {
                let crowded = Some((samples.len(), crate::base::cpus::available_cpus().len()))
                    .filter(|(w, c)| w > c);
                let (v, f) = advise::slow_members(topo, &samples, crowded);
                advise::add_slow(&mut findings, f);
                if !v.judged() {
                    if let Some(c) = battery.checks.iter_mut().find(|c| c.id == "slow-members") {
                        c.detail +=
                            &format!("; no member judged: {}", v.none.as_deref().unwrap_or("?"));
                    }
                }
                (Some(v), m)
            }
            (None, m) => (None, m),
        };
    let measurements = measure_queue(args, &mut battery, out, series, measurements)?;
    let measurements = measure_writes(args, &mut battery, out, series, measurements)?;
    advise::writes_findings(topo, &mut findings, &measurements);
    findings.extend(advise::buffered_direct(topo, &measurements));
    findings.extend(advise::queue_knee(topo, &measurements));
    Ok(advise::assemble(
        show_path(&args.volume),
        topo.clone(),
        survey,
        &battery,
        findings,
        measurements,
        verdict,
        started.elapsed().as_secs_f64(),
        crate::base::signals::interrupted(),
    ))
}

/// `--apply`: makes the appliable settings of `first`'s findings (each
/// recorded before it is changed, as a run's are), keeps them (until
/// `stripebench restore`), reads the stack again and runs the battery
/// again; the second battery's document, with what was applied and the
/// figures before and after.
fn apply(
    args: &AdviseArgs,
    given: String,
    first: FindingsDocument,
    src: &topology::Sources,
    out: &Outputs,
) -> Result<FindingsDocument> {
    let (settings, not_applied) = advise::to_apply(&first.findings);
    let sys = crate::base::host::Host::real().sys;
    let mut guard = crate::device::knobs::KnobGuard::new(crate::device::state::state_dir()?)
        .wait_for_locks(args.wait_lock);
    let mut changes = Vec::new();
    let mut refused = not_applied;
    for (finding, s) in &settings {
        // A signal (Ctrl-C) while applying, a lock waited for or not: the
        // user asked to stop, so no further setting is changed (those made
        // before it are kept, as the report says).
        if crate::base::signals::interrupted() {
            refused.push(format!(
                "{finding} ({}): interrupted before it was made",
                s.device
            ));
            continue;
        }
        let path = s.path(&sys);
        match guard.set(&path, &s.value) {
            Ok(()) => {
                // What the guard recorded to put back (each setting is made
                // once: it is the newest record).
                let old = guard.changed().last().map(|k| k.old.clone());
                eprintln!(
                    "stripebench advise: applied {} = {} ({finding}); 'stripebench restore' puts it back",
                    show_path(&path),
                    s.value
                );
                changes.push(advise::Change {
                    finding: finding.clone(),
                    device: s.device.clone(),
                    attribute: s.attribute.clone(),
                    old: old.unwrap_or_default(),
                    new: s.value.clone(),
                });
            }
            Err(e) => refused.push(format!(
                "{finding} ({}): {}",
                s.device,
                crate::base::error::show_lines(&format!("{e:#}"))
            )),
        }
    }
    // Kept before the second battery: its runs take the devices' locks
    // (this guard's would refuse them), and what was applied stays applied
    // whatever becomes of it.
    guard.keep()?;
    let started = Instant::now();
    let topo = topology::discover(&args.volume, src)?;
    let survey = survey(src, &topo);
    let second = battery_pass(args, &topo, &survey, out, started)?;
    Ok(FindingsDocument {
        volume: given,
        elapsed_sec: first.elapsed_sec + second.elapsed_sec,
        applied: Some(advise::Applied {
            changes,
            compared: advise::compared(&first.measurements, &second.measurements),
            before: first.findings,
            not_applied: refused,
        }),
        ..second
    })
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

/// One run of a measured check: its options (the window as planned: the
/// series paces it) and the line said before it, given the paced window.
type Planned<'a> = (RunConfig, Box<dyn Fn(f64) -> String + 'a>);

/// What a check's run gave: its document, or why it was refused (a usage
/// error of `run`'s, or reads no medium answered).
type Taken = std::result::Result<RunDocument, String>;

/// A measured check's runs, in order, as a series (paced to the budget):
/// each one's document, up to the first that was refused (which ends the
/// check), or what finished before a signal.
fn take(series: &mut Series<'_>, out: &Outputs, runs: Vec<Planned<'_>>) -> Result<Vec<Taken>> {
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
        }))
    }

    fn outputs(&self, _point: &Point) -> Box<dyn RunOutputs + '_> {
        Box::new(self.out.for_run(None))
    }

    fn starting(&mut self, point: &Point, _run: usize) {
        if let Some(say) = &self.say {
            eprintln!("{}", say(point.config.duration.as_secs_f64()));
        }
    }

    fn finished(&mut self, _point: Point, ran: Ran) -> Result<Step> {
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
            self.taken.push(Ok(doc));
        }
        Ok(Step::Next)
    }
}

/// Marks check `id` skipped, with `detail`.
fn skip(battery: &mut Battery, id: &str, detail: String) {
    if let Some(c) = battery.checks.iter_mut().find(|c| c.id == id) {
        c.status = "skipped".into();
        c.detail = detail;
    }
}

/// The read-ahead rates of the runs that finished whole (KiB, bytes/s),
/// and every run's measurement.
type Measured = (Vec<(u64, f64)>, Vec<Measurement>);

/// A run's options as advise's CLI layer built them, with `--allow-holes`.
fn options_of(args: &AdviseArgs, c: Result<RunConfig>) -> Result<RunConfig> {
    let mut c = c?;
    c.allow_holes = args.allow_holes;
    Ok(c)
}

/// A line said before a run, given its paced window in seconds.
fn said<'a>(f: impl Fn(f64) -> String + 'a) -> Box<dyn Fn(f64) -> String + 'a> {
    Box::new(f)
}

/// The read-ahead points the battery planned, each a buffered run with
/// read-ahead set for it: the rates (KiB, bytes/s) of the runs that
/// finished whole, and every run's measurement. A refusal (no root to set
/// read-ahead, a lock another run holds) skips the check with its reason.
fn measure_readahead(
    args: &AdviseArgs,
    battery: &mut Battery,
    out: &Outputs,
    series: &mut Series<'_>,
) -> Result<Measured> {
    let mut points = Vec::new();
    let mut measurements = Vec::new();
    let Some(plan) = battery.readahead.clone() else {
        return Ok((points, measurements));
    };
    let runs = plan
        .values_kb
        .iter()
        .map(|&kb| {
            let c = crate::cli::advise::readahead_run(&args.volume, kb, plan.seconds_each, args.wait_lock);
            let device = &plan.device;
            Ok((
                options_of(args, c)?,
                said(move |secs| {
                    format!("stripebench advise: read-ahead {kb} KiB on {device}: buffered sequential reads, {secs:.0} s")
                }),
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    for (kb, taken) in plan.values_kb.iter().zip(take(series, out, runs)?) {
        let doc = match taken {
            Ok(doc) => doc,
            Err(why) => {
                skip(
                    battery,
                    "readahead",
                    format!("read_ahead_kb against the full stripe (static); not measured: {why}"),
                );
                points.clear();
                break;
            }
        };
        let m = Measurement::of(
            "readahead",
            format!("read_ahead_kb={kb}"),
            &doc,
            *kb == plan.current_kb,
        );
        if !m.partial {
            points.push((*kb, m.bytes_per_sec));
        }
        measurements.push(m);
    }
    Ok((points, measurements))
}

/// The queue-depth points the battery planned, each an O_DIRECT random
/// 4 KiB read run of the volume at one depth: their measurements, added.
fn measure_queue(
    args: &AdviseArgs,
    battery: &mut Battery,
    out: &Outputs,
    series: &mut Series<'_>,
    mut measurements: Vec<Measurement>,
) -> Result<Vec<Measurement>> {
    let Some(plan) = battery.queue.clone() else {
        return Ok(measurements);
    };
    let volume = show_path(&args.volume);
    let runs = plan
        .depths
        .iter()
        .map(|&depth| {
            let c = crate::cli::advise::queue_run(&args.volume, depth, plan.seconds_each, args.wait_lock);
            let volume = &volume;
            Ok((
                options_of(args, c)?,
                said(move |secs| {
                    format!("stripebench advise: {depth} I/Os in flight on {volume}: O_DIRECT random 4 KiB reads, {secs:.0} s")
                }),
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    for (depth, taken) in plan.depths.iter().zip(take(series, out, runs)?) {
        let doc = match taken {
            Ok(doc) => doc,
            Err(why) => {
                skip(battery, "queue-depth", format!("not measured: {why}"));
                break;
            }
        };
        measurements.push(Measurement::of(
            "queue-depth",
            format!("iodepth={depth}"),
            &doc,
            false,
        ));
    }
    Ok(measurements)
}

/// The request-size run again with the members' fixes set (a member's
/// max_sectors_kb below the chunk, a member's odd scheduler: under the knob
/// guard, put back when it ends, as a run's read-ahead is): the fixes'
/// measured gain. None when a setting is refused (its reason said) or the
/// run is.
fn measure_member_fixes(
    args: &AdviseArgs,
    out: &Outputs,
    series: &mut Series<'_>,
    plan: &advise::RequestPlan,
    fixes: &[advise::Setting],
) -> Result<Option<Measurement>> {
    let sys = crate::base::host::Host::real().sys;
    let mut guard = crate::device::knobs::KnobGuard::new(crate::device::state::state_dir()?)
        .wait_for_locks(args.wait_lock);
    for s in fixes {
        let path = s.path(&sys);
        if let Err(e) = guard.set(&path, &s.value) {
            eprintln!(
                "stripebench advise: the members' fixes are not measured: {}",
                crate::base::error::show_lines(&format!("{e:#}"))
            );
            return Ok(None);
        }
    }
    series.one_more(plan.seconds);
    let made: Vec<String> = fixes
        .iter()
        .map(|s| format!("{} {}={}", s.device, s.attribute, s.value))
        .collect();
    let c = crate::cli::advise::requests_run(&args.volume, plan.bs, plan.seconds, args.wait_lock);
    let run = (
        options_of(args, c)?,
        said(|secs| {
            format!(
                "stripebench advise: the same with {} set as the fix says, {secs:.0} s (put back after)",
                made.join(", ")
            )
        }),
    );
    let taken = take(series, out, vec![run]);
    for e in guard.restore() {
        eprintln!(
            "stripebench: warning: {}; run 'stripebench restore'",
            crate::base::error::show_text(&e)
        );
    }
    Ok(taken?.into_iter().next().and_then(|r| r.ok()).map(|doc| {
        Measurement::of(
            "request-limits",
            format!("O_DIRECT bs={}k, members as fixed", plan.bs / 1024),
            &doc,
            false,
        )
    }))
}

/// The write runs the battery planned (parity RAID, --allow-destructive):
/// full-stripe writes at each stripe cache value, then chunk-sized random
/// writes at the array's; their measurements, added.
fn measure_writes(
    args: &AdviseArgs,
    battery: &mut Battery,
    out: &Outputs,
    series: &mut Series<'_>,
    mut measurements: Vec<Measurement>,
) -> Result<Vec<Measurement>> {
    let Some(plan) = battery.writes.clone() else {
        return Ok(measurements);
    };
    let current = plan.stripe_caches[0];
    let planned: Vec<(bool, u64, u64)> = plan
        .stripe_caches
        .iter()
        .map(|&c| (false, plan.full_stripe, c))
        .chain([(true, plan.chunk, current)])
        .collect();
    let volume = show_path(&args.volume);
    let runs = planned
        .iter()
        .map(|&(random, bs, cache)| {
            let c = crate::cli::advise::writes_run(&args.volume, bs, random, cache, plan.seconds_each, args.wait_lock);
            let what = if random {
                format!("random {} KiB writes", bs / 1024)
            } else {
                format!("full-stripe ({} KiB) writes", bs / 1024)
            };
            let volume = &volume;
            Ok((
                options_of(args, c)?,
                said(move |secs| {
                    format!("stripebench advise: {what} of {volume} at stripe_cache_size {cache}, O_DIRECT, {secs:.0} s (destroys its data: --allow-destructive)")
                }),
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    for (&(random, _, cache), taken) in planned.iter().zip(take(series, out, runs)?) {
        let doc = match taken {
            Ok(doc) => doc,
            Err(why) => {
                skip(battery, "writes", format!("not measured: {why}"));
                break;
            }
        };
        measurements.push(Measurement::of(
            "writes",
            format!(
                "{} stripe_cache_size={cache}",
                if random { "random" } else { "full-stripe" }
            ),
            &doc,
            cache == current,
        ));
    }
    Ok(measurements)
}

/// Each member's runs read together (its device node, its samples).
type MemberSamples = Vec<(String, Vec<crate::analysis::slow_member::Sample>)>;

/// The slow-member runs the battery planned: every member read at once,
/// O_DIRECT, one worker each, `repeats` times; each member's sample of
/// each run that finished whole. None when the check did not run (not
/// planned, refused: its reason is said in the battery).
fn measure_members(
    args: &AdviseArgs,
    battery: &mut Battery,
    out: &Outputs,
    series: &mut Series<'_>,
    mut measurements: Vec<Measurement>,
) -> Result<(Option<MemberSamples>, Vec<Measurement>)> {
    let Some(plan) = battery.slow.clone() else {
        return Ok((None, measurements));
    };
    let paths: Vec<std::path::PathBuf> = plan.members.iter().map(Into::into).collect();
    let mut samples: MemberSamples = plan
        .members
        .iter()
        .map(|m| (m.clone(), Vec::new()))
        .collect();
    let (n, repeats) = (paths.len(), plan.repeats);
    let runs = (1..=repeats)
        .map(|r| {
            let c = crate::cli::advise::members_run(&paths, plan.seconds_each, args.wait_lock);
            Ok((
                options_of(args, c)?,
                said(move |secs| {
                    format!("stripebench advise: every member at once ({n} members, O_DIRECT), run {r} of {repeats}, {secs:.0} s")
                }),
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    for (r, taken) in (1..=repeats).zip(take(series, out, runs)?) {
        let doc = match taken {
            Ok(doc) => doc,
            Err(why) => {
                skip(
                    battery,
                    "slow-members",
                    format!("the members could not be read: {why}"),
                );
                return Ok((None, measurements));
            }
        };
        let m = Measurement::of(
            "slow-members",
            format!("members together, run {r}"),
            &doc,
            true,
        );
        let partial = m.partial;
        measurements.push(m);
        if partial {
            continue;
        }
        for (m, s) in samples.iter_mut() {
            if let Some(td) = doc.targets.iter().find(|td| td.path == *m) {
                s.push(crate::analysis::slow_member::Sample::measured(
                    td.figures.bytes_per_sec,
                    td.figures.latency_ns.map(|l| l.p99),
                    td.figures.ios,
                ));
            }
        }
    }
    Ok((Some(samples), measurements))
}

/// The request-size run the battery planned: O_DIRECT full-stripe reads of
/// the volume; what each member's counters said of the chunk-sized pieces
/// it received (`run`'s own split-request check, `device::requests`).
fn measure_requests(
    args: &AdviseArgs,
    battery: &mut Battery,
    out: &Outputs,
    series: &mut Series<'_>,
    mut measurements: Vec<Measurement>,
    fixes: &[advise::Setting],
) -> Result<(Vec<advise::Split>, Vec<Measurement>)> {
    let Some(plan) = battery.requests.clone() else {
        return Ok((Vec::new(), measurements));
    };
    let c = crate::cli::advise::requests_run(&args.volume, plan.bs, plan.seconds, args.wait_lock);
    let kib = plan.bs / 1024;
    let run = (
        options_of(args, c)?,
        said(move |secs| {
            format!("stripebench advise: O_DIRECT reads of a full stripe ({kib} KiB), {secs:.0} s: the members' request sizes")
        }),
    );
    let doc = match take(series, out, vec![run])?.into_iter().next() {
        None => return Ok((Vec::new(), measurements)),
        Some(Ok(doc)) => doc,
        Some(Err(why)) => {
            if let Some(c) = battery.checks.iter_mut().find(|c| c.id == "request-limits") {
                c.detail += &format!("; not measured: {why}");
            }
            return Ok((Vec::new(), measurements));
        }
    };
    let m = Measurement::of("request-limits", format!("O_DIRECT bs={kib}k"), &doc, true);
    let partial = m.partial;
    measurements.push(m);
    if partial {
        return Ok((Vec::new(), measurements));
    }
    if !fixes.is_empty() && !crate::base::signals::interrupted() {
        measurements.extend(measure_member_fixes(args, out, series, &plan, fixes)?);
    }
    let splits = doc
        .warnings
        .iter()
        .filter_map(|w| match w {
            crate::base::warning::Warning::MemberSplitRequests {
                member,
                avg_bytes,
                piece,
                why,
                ..
            } => Some((member.clone(), *avg_bytes, *piece, why.clone())),
            _ => None,
        })
        .collect();
    Ok((splits, measurements))
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
