//! The arithmetic of a document read from a file: fields present and
//! finite, a window of positive length, totals that are the sums of their
//! parts, rates that are bytes (I/Os) over seconds. A document that does
//! not add up is refused, naming the file and the field.

use crate::base::error::UsageError;
use anyhow::Result;

/// A figure read from a document, for the arithmetic checks.
fn num(v: &serde_json::Value, path: &str) -> Option<f64> {
    path.split('.')
        .try_fold(v, |v, k| v.get(k))
        .and_then(serde_json::Value::as_f64)
}

/// `a` and `b` agree as two computations of one rate should (the JSON
/// round-trips floats exactly; the slack covers summation order).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

/// Reads the number at `path` (dotted) of a document, which must be finite.
fn finite(v: &serde_json::Value, shown: &str, at: &str, path: &str) -> Result<f64, UsageError> {
    match num(v, path) {
        Some(x) if x.is_finite() => Ok(x),
        Some(x) => Err(UsageError(format!(
            "{shown}: {at}{path} is {}, not a finite number: give documents as stripebench wrote them",
            shown_num(x)
        ))),
        None => Err(UsageError(format!(
            "{shown}: {at}{path} is missing or not a number: give documents as stripebench wrote them"
        ))),
    }
}

/// A figure for a message: plain, or in exponent form when it is huge or tiny.
fn shown_num(x: f64) -> String {
    if x != 0.0 && !(1e-6..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

fn damaged(shown: &str, at: &str, what: String) -> UsageError {
    UsageError(format!(
        "{shown}: {at}{what}: the document is damaged or was edited; give documents as stripebench wrote them"
    ))
}

/// A run document's arithmetic: a window of positive length, totals that
/// are the sums of the workers, and rates that are bytes (I/Os) over
/// seconds. `at` prefixes the field names (a run inside a sweep).
pub(crate) fn check_run_arithmetic(
    v: &serde_json::Value,
    shown: &str,
    at: &str,
) -> Result<(), UsageError> {
    for path in ["window.seconds", "total.seconds"] {
        let s = finite(v, shown, at, path)?;
        if s <= 0.0 {
            return Err(damaged(
                shown,
                at,
                format!("{path} is {s}, not a window of positive length"),
            ));
        }
    }
    let secs = finite(v, shown, at, "total.seconds")?;
    let Some(workers) = v.get("workers").and_then(|w| w.as_array()) else {
        return Err(damaged(shown, at, "workers is missing".into()));
    };
    for key in ["bytes", "ios"] {
        let total = v["total"][key].as_u64().ok_or_else(|| {
            damaged(
                shown,
                at,
                format!("total.{key} is missing or not a whole number"),
            )
        })?;
        let sum = workers
            .iter()
            .map(|w| w[key].as_u64())
            .try_fold(0u64, |s, x| x.and_then(|x| s.checked_add(x)));
        match sum {
            Some(sum) if sum == total => {}
            Some(sum) => {
                return Err(damaged(
                    shown,
                    at,
                    format!(
                        "total.{key} is {total}, but its {} worker(s) add up to {sum}",
                        workers.len()
                    ),
                ))
            }
            None => {
                return Err(damaged(
                    shown,
                    at,
                    format!("a worker's {key} is missing or not a whole number"),
                ))
            }
        }
        let rate_key = if key == "bytes" {
            "bytes_per_sec"
        } else {
            "iops"
        };
        let rate = finite(v, shown, at, &format!("total.{rate_key}"))?;
        let expect = total as f64 / secs;
        if !close(rate, expect) {
            return Err(damaged(
                shown,
                at,
                format!(
                    "total.{rate_key} is {}, but total.{key} / total.seconds is {}",
                    shown_num(rate),
                    shown_num(expect)
                ),
            ));
        }
    }
    let start = finite(v, shown, at, "window.start_unix_sec")?;
    let end = finite(v, shown, at, "window.end_unix_sec")?;
    if end < start {
        return Err(damaged(
            shown,
            at,
            format!("window ends ({end}) before it starts ({start})"),
        ));
    }
    // The window's length is its end minus its start (one clock, f64
    // rounding of Unix seconds aside), and no run is longer than the year
    // --duration allows plus a year of ramp: a longer one would have its
    // per-second samples allocated by diff.
    let seconds = finite(v, shown, at, "window.seconds")?;
    if seconds > MAX_WINDOW_SEC {
        return Err(damaged(
            shown,
            at,
            format!(
                "window.seconds is {}, longer than any run (two years)",
                shown_num(seconds)
            ),
        ));
    }
    if (seconds - (end - start)).abs() > 1e-3 {
        return Err(damaged(
            shown,
            at,
            format!(
                "window.seconds is {}, but the window runs from {start} to {end}",
                shown_num(seconds)
            ),
        ));
    }
    // Each worker's seconds lie in the window and add up to no more than
    // the worker moved: the plots and diff index and sum them.
    for (i, w) in workers.iter().enumerate() {
        let (mut bytes, mut ios) = (0u64, 0u64);
        for iv in w["intervals"].as_array().into_iter().flatten() {
            let t = iv["t"].as_u64().filter(|&t| t as f64 <= seconds + 1.0);
            let sums = (iv["bytes"].as_u64(), iv["ios"].as_u64());
            let (Some(_), (Some(b), Some(n))) = (t, sums) else {
                return Err(damaged(
                    shown,
                    at,
                    format!(
                        "workers[{i}].intervals holds {iv}, not a second of a {seconds} s window"
                    ),
                ));
            };
            bytes = bytes.saturating_add(b);
            ios = ios.saturating_add(n);
        }
        if Some(bytes) > w["bytes"].as_u64() || Some(ios) > w["ios"].as_u64() {
            return Err(damaged(
                shown,
                at,
                format!(
                    "workers[{i}].intervals add up to {bytes} bytes and {ios} I/Os, more than the worker's {} and {}",
                    w["bytes"], w["ios"]
                ),
            ));
        }
    }
    Ok(())
}

/// The longest window a run can have: --duration's year, with room.
const MAX_WINDOW_SEC: f64 = 2.0 * 365.0 * 86400.0;

/// The arithmetic of a document of `kind` (run, sweep, compare or merge):
/// every run inside it, as [`check_run_arithmetic`], or the merge's hosts.
pub(crate) fn check_document_arithmetic(
    v: &serde_json::Value,
    shown: &str,
    kind: &str,
) -> Result<(), UsageError> {
    match kind {
        "run" => check_run_arithmetic(v, shown, ""),
        "sweep" => {
            for (i, p) in v["points"].as_array().into_iter().flatten().enumerate() {
                // A point stands for its runs (the first is its median run).
                if p["runs"].as_array().is_none_or(Vec::is_empty) {
                    return Err(damaged(
                        shown,
                        "",
                        format!("points[{i}].runs is missing or empty: a point without a run"),
                    ));
                }
                for (j, r) in p["runs"].as_array().into_iter().flatten().enumerate() {
                    check_run_arithmetic(r, shown, &format!("points[{i}].runs[{j}]."))?;
                }
            }
            Ok(())
        }
        "compare" => {
            for (i, p) in v["phases"].as_array().into_iter().flatten().enumerate() {
                check_run_arithmetic(&p["document"], shown, &format!("phases[{i}].document."))?;
            }
            Ok(())
        }
        _ => check_merged_arithmetic(v, shown),
    }
}

/// A merged document's arithmetic: every host's window of positive length
/// and finite rate, and totals that are the sums of the hosts.
pub(crate) fn check_merged_arithmetic(
    v: &serde_json::Value,
    shown: &str,
) -> Result<(), UsageError> {
    let Some(hosts) = v
        .get("hosts")
        .and_then(|h| h.as_array())
        .filter(|h| !h.is_empty())
    else {
        return Err(damaged(shown, "", "hosts is missing or empty".into()));
    };
    let mut rate_sum = 0.0;
    for (i, h) in hosts.iter().enumerate() {
        let at = format!("hosts[{i}].");
        let s = finite(h, shown, &at, "seconds")?;
        if s <= 0.0 {
            return Err(damaged(
                shown,
                &at,
                format!("seconds is {s}, not a window of positive length"),
            ));
        }
        let r = finite(h, shown, &at, "bytes_per_sec")?;
        let bytes = h["bytes"].as_u64().unwrap_or(0);
        // The host's rate was checked against its own run document's
        // total.seconds when it was first merged; here it must at least be a
        // rate of the bytes it holds.
        if r < 0.0 || (bytes == 0 && r > 0.0) {
            return Err(damaged(
                shown,
                &at,
                format!("bytes_per_sec is {} for {bytes} bytes", shown_num(r)),
            ));
        }
        rate_sum += r;
    }
    if v["total"]["hosts"].as_u64() != Some(hosts.len() as u64) {
        return Err(damaged(
            shown,
            "",
            format!(
                "total.hosts is {}, but it lists {} host(s)",
                v["total"]["hosts"],
                hosts.len()
            ),
        ));
    }
    for key in ["bytes", "ios"] {
        let sum: u64 = hosts.iter().filter_map(|h| h[key].as_u64()).sum();
        let workers: u64 = v["workers"]
            .as_array()
            .map_or(0, |w| w.iter().filter_map(|w| w[key].as_u64()).sum());
        let total = v["total"][key].as_u64();
        if total != Some(sum) || workers != sum {
            return Err(damaged(
                shown,
                "",
                format!(
                    "total.{key} is {}, its hosts add up to {sum} and its workers to {workers}",
                    v["total"][key]
                ),
            ));
        }
    }
    let rate = finite(v, shown, "", "total.bytes_per_sec")?;
    if !close(rate, rate_sum) {
        return Err(damaged(
            shown,
            "",
            format!(
                "total.bytes_per_sec is {}, but its hosts add up to {}",
                shown_num(rate),
                shown_num(rate_sum)
            ),
        ));
    }
    Ok(())
}
