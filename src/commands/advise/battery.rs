//! One battery of advise's checks, in sequence: the static findings, then
//! each measured check (read-ahead, request sizes and the members' fixes,
//! slow members, queue depth, writes) as a paced series, each one's
//! findings made from what it measured before the next one runs; and what
//! a battery starts from (the stack's survey, the options asked for).

use std::time::Instant;

use anyhow::Result;

use crate::base::error::{show_path, EXIT_USAGE};
use crate::cli::AdviseArgs;
use crate::device::survey::Survey;
use crate::device::topology;
use crate::document::advise::{self, Battery, FindingsDocument, Options};
use crate::measure::series::{Pace, Series};
use crate::output::Outputs;

use super::members::MemberSamples;

/// The stack's sysfs facts, and the stripe hints of the file system on
/// the volume (its first 4 KiB, read from the device the stack named).
pub(super) fn survey(src: &topology::Sources, topo: &topology::Topology) -> Survey {
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
pub(super) fn options(args: &AdviseArgs, topo: &topology::Topology) -> Options {
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
pub(super) fn pass(
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
        crate::analysis::advise::RUN_OVERHEAD_SEC,
        crate::analysis::advise::MIN_WINDOW_SEC,
    );
    // A run refused when it comes to run (no root to set read-ahead, a lock
    // another run holds) skips its check, with the reason.
    let is_refusal = |e: &anyhow::Error| crate::commands::exit::exit_code_for(e) == EXIT_USAGE;
    let series = &mut Series::new()
        .paced(&mut pace)
        .refusals_are_results(&is_refusal);
    let (points, measurements) = super::reads::readahead(args, &mut battery, out, series)?;
    findings.extend(advise::readahead_finding(topo, survey, &points));
    let fixes: Vec<advise::Setting> = findings
        .iter()
        .filter(|f| advise::member_fix(&f.id))
        .flat_map(|f| f.settings.iter().filter(|s| s.appliable()).cloned())
        .collect();
    let (splits, measurements) =
        super::requests::measure(args, &mut battery, out, series, measurements, &fixes)?;
    advise::measured_splits(&mut findings, &splits);
    advise::member_fix_gain(&mut findings, &measurements);
    let (verdict, measurements) =
        match super::members::measure(args, &mut battery, out, series, measurements)? {
            (Some(mut samples), mut m) => {
                // A controller that caps its members is found before the
                // slow-member rule judges them (issue 42).
                let shared = super::paths::check(
                    args,
                    &battery,
                    topo,
                    survey,
                    out,
                    series,
                    &mut samples,
                    &mut m,
                )?;
                findings.extend(shared);
                (
                    Some(slow_verdict(topo, &mut battery, &mut findings, &samples)),
                    m,
                )
            }
            (None, m) => (None, m),
        };
    let measurements = super::reads::queue(args, &mut battery, out, series, measurements)?;
    let measurements = super::writes::measure(args, &mut battery, out, series, measurements)?;
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

/// The slow-member verdict of the members' samples, its findings added;
/// when no member could be judged, the check says why.
fn slow_verdict(
    topo: &topology::Topology,
    battery: &mut Battery,
    findings: &mut Vec<advise::Finding>,
    samples: &MemberSamples,
) -> crate::document::compare::Verdict {
    let crowded =
        Some((samples.len(), crate::base::cpus::available_cpus().len())).filter(|(w, c)| w > c);
    let (v, f) = advise::slow_members(topo, samples, crowded);
    advise::add_slow(findings, f);
    if !v.judged() {
        if let Some(c) = battery.checks.iter_mut().find(|c| c.id == "slow-members") {
            c.detail += &format!("; no member judged: {}", v.none.as_deref().unwrap_or("?"));
        }
    }
    v
}
