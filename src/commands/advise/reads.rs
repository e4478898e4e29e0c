//! advise's read-ahead and queue-depth checks: their runs planned from the
//! battery, and each finished run's measurement.

use anyhow::Result;

use crate::base::error::show_path;
use crate::cli::AdviseArgs;
use crate::document::advise::{Battery, Measurement};
use crate::measure::series::Series;
use crate::output::Outputs;

use super::check::{options_of, said, skip, take};

/// The read-ahead rates of the runs that finished whole (KiB, bytes/s),
/// and every run's measurement.
type Measured = (Vec<(u64, f64)>, Vec<Measurement>);

/// The read-ahead points the battery planned, each a buffered run with
/// read-ahead set for it: the rates (KiB, bytes/s) of the runs that
/// finished whole, and every run's measurement. A refusal (no root to set
/// read-ahead, a lock another run holds) skips the check with its reason.
pub(super) fn readahead(
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
pub(super) fn queue(
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
