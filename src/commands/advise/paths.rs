//! advise's shared-path check (issue 42): after the members were read all
//! at once, the members of a host adapter that read far slower than the
//! other adapters' are read alone, one at a time; when each alone is as
//! fast as the others, their adapter caps them (a finding), and the
//! slow-member rule judges them by their rates alone, so that no member is
//! called slow for its controller's ceiling.

use anyhow::Result;

use crate::analysis::slow_member::Sample;
use crate::analysis::summary::median;
use crate::cli::AdviseArgs;
use crate::device::survey::Survey;
use crate::device::topology::Topology;
use crate::document::advise::shared_path::{self, Suspect};
use crate::document::advise::{Battery, Finding, Measurement};
use crate::measure::series::Series;
use crate::output::Outputs;

use super::check::{options_of, said, take};
use super::members::MemberSamples;

/// The findings of the shared-path check; `samples` of a capped group's
/// members replaced by their runs alone.
#[allow(clippy::too_many_arguments)]
pub(super) fn check(
    args: &AdviseArgs,
    battery: &Battery,
    topo: &Topology,
    survey: &Survey,
    out: &Outputs,
    series: &mut Series<'_>,
    samples: &mut MemberSamples,
    measurements: &mut Vec<Measurement>,
) -> Result<Vec<Finding>> {
    let (Some(plan), true) = (battery.slow.as_ref(), survey.paths.shared()) else {
        return Ok(Vec::new());
    };
    let rate = |m: &str| -> Option<f64> {
        let s = &samples.iter().find(|(p, _)| p == m)?.1;
        (!s.is_empty()).then(|| median(s.iter().map(|x| x.bytes_per_sec).collect()))
    };
    // Each group's members' rates together (a group with a member unmeasured is left out).
    let groups: Vec<(&str, &[String], Vec<f64>)> = survey
        .paths
        .groups
        .iter()
        .filter_map(|g| {
            let r: Option<Vec<f64>> = g.members.iter().map(|m| rate(m)).collect();
            Some((g.adapter.as_str(), g.members.as_slice(), r?))
        })
        .collect();
    let rates: Vec<Vec<f64>> = groups.iter().map(|g| g.2.clone()).collect();
    let mut findings = Vec::new();
    for i in crate::analysis::shared_path::suspects(&rates) {
        let (adapter, members, together) = &groups[i];
        let mut alone = Vec::new();
        let runs = members
            .iter()
            .map(|m| {
                let c = crate::cli::advise::members_run(
                    &[m.into()],
                    plan.seconds_each,
                    args.wait_lock,
                );
                let m = m.clone();
                Ok((
                    options_of(args, c)?,
                    said(move |secs| {
                        format!("stripebench advise: {m} alone (its controller's members read slowly together), {secs:.0} s")
                    }),
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        for (m, taken) in members.iter().zip(take(series, out, runs)?) {
            let Ok(doc) = taken else { break };
            let me = Measurement::of("shared-path", format!("{m} alone"), &doc, true);
            let partial = me.partial;
            measurements.push(me);
            if partial {
                break;
            }
            let t = &doc.total.figures;
            alone.push(Sample::measured(
                t.bytes_per_sec,
                t.latency_ns.map(|l| l.p99),
                t.ios,
            ));
        }
        if alone.len() != members.len() {
            continue;
        }
        let name = |p: &str| {
            topo.stripe_members()
                .iter()
                .find(|d| d.path == p)
                .map_or(p.to_string(), |d| d.name.clone())
        };
        let suspect = Suspect {
            adapter: adapter.to_string(),
            members: members
                .iter()
                .zip(&alone)
                .zip(together)
                .map(|((m, a), t)| (name(m), m.clone(), a.bytes_per_sec, *t))
                .collect(),
        };
        let others: Vec<Vec<f64>> = rates
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, r)| r.clone())
            .collect();
        if let Some(f) = shared_path::finding(&suspect, &others) {
            findings.push(f);
            for (m, a) in members.iter().zip(alone) {
                if let Some((_, s)) = samples.iter_mut().find(|(p, _)| p == m) {
                    *s = vec![a];
                }
            }
        }
    }
    Ok(findings)
}
