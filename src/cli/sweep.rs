//! The sweep's values on the command line: `--param NAME=V1,V2,...` and
//! `--curve` read, and one point's values applied to the run options, each
//! value read by the parser of the option it stands for (`--bs`, `--jobs`,
//! `--iodepth`, `--readahead`, `--stripe-cache-size`, `--group-thread-cnt`,
//! `--rw`), so that a sweep takes what the option takes; and the sweep's
//! parameters checked together. Every point is applied before any I/O.

use std::path::PathBuf;

use super::run_args::{
    parse_bs, parse_count, parse_depth, parse_group_thread_cnt, parse_readahead,
    parse_stripe_cache_size, parse_sync_speed, EngineArg, RunArgs,
};
use crate::base::error::UsageError;
use crate::document::sweep::{curve_values, Param, RateValue, CURVE_PCTS, PARAMS};
use crate::measure::config::RwMode;

/// Reads `--curve`'s percentages (each above 0 and at most 100).
pub fn parse_curve_pct(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x <= 100.0 => Ok(x),
        _ => Err(format!(
            "'{text}' is not a percentage of the unthrottled rate: give numbers above 0 and at most 100, such as 10,50,90"
        )),
    }
}

pub fn parse_param(text: &str) -> Result<Param, String> {
    let Some((name, list)) = text.split_once('=') else {
        return Err(format!(
            "--param {text}: write NAME=V1,V2,... such as readahead=0,128,1024"
        ));
    };
    let name = name.trim();
    if !PARAMS.contains(&name) {
        return Err(format!(
            "--param {text}: unknown parameter '{name}': choose from {}",
            PARAMS.join(", ")
        ));
    }
    let values: Vec<String> = list.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err(format!(
            "--param {text}: an empty value in the list: give values such as {name}=1,2,4"
        ));
    }
    if name == "target" && values != ["each"] {
        if let Some(v) = values
            .iter()
            .find(|v| v.parse::<usize>().ok().filter(|&k| k >= 1).is_none())
        {
            return Err(format!(
                "--param {text}: '{v}' is not a target's number: give each (every target in turn) or numbers such as target=1,2 (1 is the first target named)"
            ));
        }
    }
    if name == "rate" && values != ["curve"] {
        let mut max = false;
        let mut pct = false;
        for v in &values {
            match RateValue::parse(v).map_err(|e| format!("--param {text}: {e}"))? {
                RateValue::Max => max = true,
                RateValue::Pct(_) => pct = true,
                _ => {}
            }
        }
        if pct && !max {
            return Err(format!(
                "--param {text}: a percentage is of the unthrottled rate: put max in the list (or use rate=curve)"
            ));
        }
    }
    Ok(Param {
        name: name.into(),
        values,
    })
}

/// The sweep's parameters, refused before anything else: run options it
/// does not take, no parameter, a rate swept and set at once, `--curve`
/// without `rate=curve`, a parameter given twice. Returned with
/// `rate=curve` spelled out (`max`, then `--curve`'s percentages).
pub fn params(run: &RunArgs, given: &[Param], curve: &[f64]) -> Result<Vec<Param>, UsageError> {
    run.refuse_for(
        "sweep",
        &[
            "histogram",
            "start-at",
            "print-fio",
            "fio-log",
            "iolog-write",
        ],
    )?;
    if given.is_empty() {
        return Err(UsageError(
            "sweep needs at least one --param NAME=V1,V2,...".into(),
        ));
    }
    let mut params = given.to_vec();
    let rate = params.iter_mut().find(|p| p.name == "rate");
    if rate.is_some() && (run.rate.is_some() || run.rate_iops.is_some()) {
        return Err(UsageError(
            "--param rate sweeps each worker's schedule: drop --rate/--rate-iops".into(),
        ));
    }
    match rate {
        Some(p) if p.values == ["curve"] => {
            p.values = curve_values(if curve.is_empty() { &CURVE_PCTS } else { curve })
        }
        _ if !curve.is_empty() => {
            return Err(UsageError(
                "--curve chooses the points of --param rate=curve: add --param rate=curve, or drop --curve".into(),
            ))
        }
        _ => {}
    }
    if params.iter().any(|p| p.name == "target") && params.iter().any(|p| p.name == "members") {
        return Err(UsageError(
            "--param target and --param members both choose the targets of a point: give one"
                .into(),
        ));
    }
    let mut names: Vec<&str> = Vec::new();
    for p in &params {
        if names.contains(&p.name.as_str()) {
            return Err(UsageError(format!(
                "--param {} is given twice: put all its values in one list",
                p.name
            )));
        }
        names.push(&p.name);
    }
    Ok(params)
}

/// Applies one point's values to the run options; returns them and the
/// targets the point drives (`members=k`: the first k of `targets`).
pub fn apply(
    base: &RunArgs,
    targets: &[PathBuf],
    point: &[(String, String)],
) -> Result<(RunArgs, Vec<PathBuf>), UsageError> {
    let mut a = base.clone();
    let mut paths = targets.to_vec();
    let bad = |n: &str, v: &str, why: String| UsageError(format!("--param {n}={v}: {why}"));
    for (n, v) in point {
        match n.as_str() {
            "readahead" => {
                a.readahead =
                    Some(parse_readahead(v).map_err(|_| {
                        bad(n, v, "give read_ahead_kb in KiB, a whole number".into())
                    })?)
            }
            // md raid4/5/6's tunables, as --stripe-cache-size and
            // --group-thread-cnt take them (each target's array is checked
            // by every point's dry run, before the first point runs).
            "stripe_cache_size" => {
                a.stripe_cache_size = Some(parse_stripe_cache_size(v).map_err(|e| bad(n, v, e))?)
            }
            "sync_speed_min" => {
                a.sync_speed_min = Some(parse_sync_speed(v).map_err(|e| bad(n, v, e))?)
            }
            "sync_speed_max" => {
                a.sync_speed_max = Some(parse_sync_speed(v).map_err(|e| bad(n, v, e))?)
            }
            "group_thread_cnt" => {
                a.group_thread_cnt = Some(parse_group_thread_cnt(v).map_err(|e| bad(n, v, e))?)
            }
            "bs" => a.bs = Some(parse_bs(v).map_err(|e| bad(n, v, e))?),
            "jobs" => {
                a.jobs =
                    parse_count(v).map_err(|_| bad(n, v, "give a count from 1 to 4096".into()))?
            }
            "iodepth" => {
                a.iodepth =
                    parse_depth(v).map_err(|_| bad(n, v, "give a depth from 1 to 4096".into()))?
            }
            "mode" => match v.as_str() {
                "direct" => (a.direct, a.buffered, a.uncached) = (false, false, false),
                "buffered" => (a.direct, a.buffered, a.uncached) = (false, true, false),
                "uncached" => (a.direct, a.buffered, a.uncached) = (false, false, true),
                _ => return Err(bad(n, v, "mode is direct, buffered or uncached".into())),
            },
            "rw" => {
                a.rw = <RwMode as clap::ValueEnum>::from_str(v, true).map_err(|_| {
                    bad(
                        n,
                        v,
                        "rw is read, write, randread, randwrite or randrw".into(),
                    )
                })?
            }
            "members" => {
                let k: usize = v
                    .parse()
                    .ok()
                    .filter(|&k| k >= 1)
                    .ok_or_else(|| bad(n, v, "give how many members, at least 1".into()))?;
                if k > targets.len() {
                    return Err(bad(
                        n,
                        v,
                        format!("there are only {} targets/members", targets.len()),
                    ));
                }
                paths.truncate(k);
            }
            // `each` is spelled out (1..N) once the targets are known:
            // see [`each_target`].
            "target" => {
                let k: usize =
                    v.parse().ok().filter(|&k| k >= 1).ok_or_else(|| {
                        bad(n, v, "give a target's number, 1 for the first".into())
                    })?;
                let Some(t) = targets.get(k - 1) else {
                    return Err(bad(
                        n,
                        v,
                        format!("there are only {} targets/members", targets.len()),
                    ));
                };
                paths = vec![t.clone()];
            }
            "rate" => {
                (a.rate, a.rate_iops) = match RateValue::parse(v).map_err(|e| bad(n, v, e))? {
                    RateValue::Max => (None, None),
                    RateValue::Bytes(b) => (Some(b), None),
                    RateValue::Iops(i) => (None, Some(i)),
                    // A share of what the point's max delivers, known once
                    // that point ran; validated as 1 I/O/s.
                    RateValue::Pct(_) => (None, Some(1.0)),
                }
            }
            _ => unreachable!("parse_param admits only known names"),
        }
    }
    if a.iodepth > 1 && a.engine == EngineArg::Sync {
        a.engine = EngineArg::Auto;
    }
    // Every target the user named, whichever this point drives: a point of
    // one target still counts the others as named (the read-ahead of the
    // disk that holds / changes only when one of them is that disk).
    a.named = targets.to_vec();
    a.targets = paths.clone();
    a.formats = Default::default();
    a.members = None;
    Ok((a, paths))
}

/// `--param target=each` spelled out as every target's number (1..N),
/// once the targets are known; other lists are left as given.
pub fn each_target(params: &mut [Param], targets: usize) {
    for p in params.iter_mut() {
        if p.name == "target" && p.values == ["each"] {
            p.values = (1..=targets).map(|k| k.to_string()).collect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::sweep::points;

    #[test]
    fn params_parse_and_multiply() {
        let a = parse_param("readahead=0,128,1024").unwrap();
        let b = parse_param("mode=direct,buffered").unwrap();
        let p = points(&[a, b]);
        assert_eq!(p.len(), 6);
        assert_eq!(
            p[0],
            vec![
                ("readahead".into(), "0".into()),
                ("mode".into(), "direct".into())
            ]
        );
        assert_eq!(
            p[5],
            vec![
                ("readahead".into(), "1024".into()),
                ("mode".into(), "buffered".into())
            ]
        );
        assert!(parse_param("speed=1,2")
            .unwrap_err()
            .contains("unknown parameter"));
        assert!(parse_param("bs=").unwrap_err().contains("empty value"));
        assert!(parse_param("bs=4k,,8k")
            .unwrap_err()
            .contains("empty value"));
        assert!(parse_param("bs").unwrap_err().contains("NAME=V1"));
    }
}

#[cfg(test)]
mod md_tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn sweep_base() -> RunArgs {
        let Command::Sweep(s) = Cli::try_parse_from(["stripebench", "sweep", "/dev/md0"])
            .expect("parses")
            .command
        else {
            unreachable!("a sweep")
        };
        s.run
    }

    #[test]
    fn md_tunables_are_sweep_parameters_read_as_their_options_are() {
        let base = sweep_base();
        let t = [PathBuf::from("/dev/md0")];
        let p = |n: &str, v: &str| vec![(n.to_string(), v.to_string())];
        let (a, _) = apply(&base, &t, &p("stripe_cache_size", "4096")).unwrap();
        assert_eq!(a.stripe_cache_size, Some(4096));
        let (a, _) = apply(&base, &t, &p("group_thread_cnt", "0")).unwrap();
        assert_eq!(a.group_thread_cnt, Some(0));
        let e = apply(&base, &t, &p("stripe_cache_size", "16"))
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("--param stripe_cache_size=16: '16' is not a stripe cache size"),
            "{e}"
        );
        let e = apply(&base, &t, &p("group_thread_cnt", "x")).unwrap_err().0;
        assert!(e.contains("md takes 0 to 8192"), "{e}");
        assert!(parse_param("stripe_cache_size=256,1024,4096").is_ok());
        assert!(parse_param("group_thread_cnt=0,2,4").is_ok());
    }
}
