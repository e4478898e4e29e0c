//! advise's slow-member check: every member read at once, O_DIRECT, one
//! worker each, `repeats` times; each member's sample of each run that
//! finished whole.

use anyhow::Result;

use crate::cli::AdviseArgs;
use crate::document::advise::{Battery, Measurement};
use crate::measure::series::Series;
use crate::output::Outputs;

use super::check::{options_of, said, skip, take};

/// Each member's runs read together (its device node, its samples).
pub(super) type MemberSamples = Vec<(String, Vec<crate::analysis::slow_member::Sample>)>;

/// The slow-member runs the battery planned: every member read at once,
/// O_DIRECT, one worker each, `repeats` times; each member's sample of
/// each run that finished whole. None when the check did not run (not
/// planned, refused: its reason is said in the battery).
pub(super) fn measure(
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
