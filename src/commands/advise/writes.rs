//! advise's write check (parity RAID, `--allow-destructive`): full-stripe
//! writes at each stripe cache value, then chunk-sized random writes at the
//! array's.

use anyhow::Result;

use crate::base::error::show_path;
use crate::cli::AdviseArgs;
use crate::document::advise::{Battery, Measurement};
use crate::measure::series::Series;
use crate::output::Outputs;

use super::check::{options_of, said, skip, take};

/// The write runs the battery planned (parity RAID, --allow-destructive):
/// full-stripe writes at each stripe cache value, then chunk-sized random
/// writes at the array's; their measurements, added.
pub(super) fn measure(
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
