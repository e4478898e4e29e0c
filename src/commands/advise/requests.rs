//! advise's request-size check: O_DIRECT full-stripe reads of the volume
//! and what each member's counters said of the pieces it received; then,
//! when findings name members' fixes, the same run with them set.

use anyhow::Result;

use crate::cli::AdviseArgs;
use crate::document::advise::{self, Battery, Measurement};
use crate::measure::series::Series;
use crate::output::Outputs;

use super::check::{options_of, said, take};

/// The request-size run the battery planned: O_DIRECT full-stripe reads of
/// the volume; what each member's counters said of the chunk-sized pieces
/// it received (`run`'s own split-request check, `device::requests`).
pub(super) fn measure(
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
        measurements.extend(member_fixes(args, out, series, &plan, fixes)?);
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

/// The request-size run again with the members' fixes set (a member's
/// max_sectors_kb below the chunk, a member's odd scheduler: under the knob
/// guard, put back when it ends, as a run's read-ahead is): the fixes'
/// measured gain. None when a setting is refused (its reason said) or the
/// run is.
fn member_fixes(
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
            out.note(&format!(
                "stripebench advise: the members' fixes are not measured: {}",
                crate::base::error::show_lines(&format!("{e:#}"))
            ));
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
        let error = crate::base::error::show_text(&e).into_owned();
        out.note(&crate::base::notice::Notice::NotRestored { error }.to_string());
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
