//! The arithmetic of a document read from a file: fields present and
//! finite, a window of positive length, totals that are the sums of their
//! parts, rates that are bytes (I/Os) over seconds. A document that does
//! not add up is refused, naming the file and the field.
//!
//! The document is read a part at a time (`read::Object`): the top level
//! and each worker, target and host are parsed when checked and dropped,
//! so a document of a thousand targets (or a hostile one) is never held
//! whole as a `serde_json::Value`.

use serde::Deserialize;

use crate::document::error::{Error, Result};
use crate::document::kind::Kind;
use crate::document::lazy::{Lazy, Object};

/// A worker's byte and I/O counts, parsed alone (its intervals skipped).
#[derive(Deserialize, Default)]
struct Counts {
    #[serde(default)]
    bytes: serde_json::Value,
    #[serde(default)]
    ios: serde_json::Value,
}

impl Counts {
    fn of(w: Lazy) -> Counts {
        w.parse().unwrap_or_default()
    }

    fn get(&self, key: &str) -> Option<u64> {
        if key == "bytes" {
            &self.bytes
        } else {
            &self.ios
        }
        .as_u64()
    }
}

/// A worker as a `Value` without its intervals (`Null` when it is not an
/// object, as indexing a `Value` that is not one gives), and its intervals.
fn worker(w: Lazy) -> (serde_json::Value, Vec<Lazy>) {
    match w.object() {
        Some(o) => (
            o.small(&["intervals"]),
            o.get("intervals").and_then(Lazy::array).unwrap_or_default(),
        ),
        None => (serde_json::Value::Null, Vec::new()),
    }
}

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
fn finite(v: &serde_json::Value, shown: &str, at: &str, path: &str) -> Result<f64> {
    match num(v, path) {
        Some(x) if x.is_finite() => Ok(x),
        Some(x) => Err(Error::NotFinite {
            shown: shown.into(),
            at: at.into(),
            path: path.into(),
            value: shown_num(x),
        }),
        None => Err(Error::NotANumber {
            shown: shown.into(),
            at: at.into(),
            path: path.into(),
        }),
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

fn damaged(shown: &str, at: &str, what: String) -> Error {
    Error::Damaged {
        shown: shown.into(),
        at: at.into(),
        what,
    }
}

/// A run document's arithmetic: a window of positive length, totals that
/// are the sums of the workers, and rates that are bytes (I/Os) over
/// seconds. `at` prefixes the field names (a run inside a sweep).
pub(crate) fn check_run_arithmetic(run: &Object, shown: &str, at: &str) -> Result<()> {
    // All but the workers and targets, which are read one at a time.
    let v = &run.small(&["workers", "targets"]);
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
    let Some(workers) = run.get("workers").and_then(Lazy::array) else {
        return Err(damaged(shown, at, "workers is missing".into()));
    };
    let counts: Vec<Counts> = workers.iter().map(|&w| Counts::of(w)).collect();
    for key in ["bytes", "ios"] {
        let total = v["total"][key].as_u64().ok_or_else(|| {
            damaged(
                shown,
                at,
                format!("total.{key} is missing or not a whole number"),
            )
        })?;
        let sum = counts
            .iter()
            .map(|w| w.get(key))
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
    if !crate::analysis::plausible::window_plausible(seconds) {
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
    let targets = run.get("targets").and_then(Lazy::array);
    check_parts(v, &workers, targets.as_deref(), shown, at)?;
    check_in_flight(v, &workers, seconds, shown, at)?;
    // Each worker's seconds lie in the window and add up to no more than
    // the worker moved: the plots and diff index and sum them.
    for (i, &w) in workers.iter().enumerate() {
        check_worker(i, w, seconds, shown, at)?;
    }
    Ok(())
}

/// Worker `i`'s seconds: within the `seconds` s window, on a region that
/// ends inside a device, and its intervals in the window adding up to no
/// more than it moved (the plots and diff index and sum them).
fn check_worker(i: usize, w: Lazy, seconds: f64, shown: &str, at: &str) -> Result<()> {
    let (w, intervals) = worker(w);
    let w = &w;
    // A worker runs within the window (it may stop early, on errors),
    // and on a region that ends inside a device.
    let ws = finite(w, shown, at, "seconds").map_err(|_| {
        damaged(
            shown,
            at,
            format!(
                "workers[{i}].seconds is {}, not a number of seconds",
                w["seconds"]
            ),
        )
    })?;
    if !(0.0..=seconds + 1e-3).contains(&ws) {
        return Err(damaged(
            shown,
            at,
            format!(
                "workers[{i}].seconds is {}, outside the {seconds} s window",
                shown_num(ws)
            ),
        ));
    }
    if let Some(r) = w.get("region").filter(|r| !r.is_null()) {
        let end = r["offset"]
            .as_u64()
            .zip(r["length"].as_u64())
            .and_then(|(o, l)| o.checked_add(l))
            .filter(|&e| e <= i64::MAX as u64);
        if end.is_none() {
            return Err(damaged(
                shown,
                at,
                format!("workers[{i}].region is {r}, which ends past any device"),
            ));
        }
    }
    let (mut bytes, mut ios) = (0u64, 0u64);
    for iv in intervals {
        let iv = &iv.value();
        // Seconds since the window opened: fractional for intervals
        // shorter than a second (--log-interval).
        let t = iv["t"]
            .as_f64()
            .filter(|&t| (0.0..=seconds + 1.0).contains(&t));
        let sums = (iv["bytes"].as_u64(), iv["ios"].as_u64());
        let (Some(_), (Some(b), Some(n))) = (t, sums) else {
            return Err(damaged(
                shown,
                at,
                format!(
                    "workers[{i}].intervals holds {iv}, not an interval of a {seconds} s window"
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
    Ok(())
}

/// A run document's parts against each other: workers on targets that it
/// lists, each worker's bytes those of its I/Os of `bs` bytes, its reads and
/// writes adding up to it, and every latency summary the one of its histogram
/// (workers, targets, total).
fn check_parts(
    v: &serde_json::Value,
    workers: &[Lazy],
    target_list: Option<&[Lazy]>,
    shown: &str,
    at: &str,
) -> Result<()> {
    let targets = target_list.map_or(0, <[Lazy]>::len);
    // On a schedule an I/O due in the window may be counted in the histogram
    // without having completed; at full speed the histogram is the I/Os.
    let scheduled = v["window"]["latency_from"].as_str() == Some("due");
    for (i, &w) in workers.iter().enumerate() {
        let (w, _) = worker(w);
        let w = &w;
        let wat = format!("workers[{i}].");
        match w["target_index"].as_u64() {
            Some(t) if (t as usize) < targets => {}
            t => {
                return Err(damaged(
                    shown,
                    at,
                    format!(
                    "workers[{i}].target_index is {}, but the document lists {targets} target(s)",
                    t.map_or_else(|| w["target_index"].to_string(), |t| t.to_string())
                ),
                ))
            }
        }
        let whole = |key: &str| {
            w[key].as_u64().ok_or_else(|| {
                damaged(
                    shown,
                    at,
                    format!("{wat}{key} is missing or not a whole number"),
                )
            })
        };
        let (bytes, ios, bs, short) = (
            whole("bytes")?,
            whole("ios")?,
            whole("bs")?,
            whole("short_ios")?,
        );
        for (key, parts) in [
            ("bytes", ["read_bytes", "write_bytes", "trim_bytes"]),
            ("ios", ["read_ios", "write_ios", "trim_ios"]),
        ] {
            // A document from before trims has none: 0.
            let trims = match w.get(parts[2]) {
                None => 0,
                Some(_) => whole(parts[2])?,
            };
            let (a, b) = (whole(parts[0])?, whole(parts[1])? + trims);
            let total = if key == "bytes" { bytes } else { ios };
            if a.checked_add(b) != Some(total) {
                return Err(damaged(
                    shown,
                    at,
                    format!(
                        "{wat}{key} is {total}, but its {} {a} and {} {b} add up to another",
                        parts[0], parts[1]
                    ),
                ));
            }
        }
        // Every I/O moves bs bytes, a short one fewer.
        let (ios, bs, short) = (u128::from(ios), u128::from(bs), u128::from(short));
        let (least, most) = (ios.saturating_sub(short) * bs, ios * bs);
        if short > ios || !(least..=most).contains(&u128::from(bytes)) {
            return Err(damaged(
                shown,
                at,
                format!(
                    "{wat}bytes is {bytes}, but its {ios} I/O(s) of bs {bs} ({short} short) move from {least} to {most}"
                ),
            ));
        }
        check_latency(w, shown, &format!("{at}{wat}"), scheduled)?;
    }
    for (i, t) in target_list.into_iter().flatten().enumerate() {
        check_latency(&t.value(), shown, &format!("{at}targets[{i}]."), scheduled)?;
    }
    check_latency(&v["total"], shown, &format!("{at}total."), scheduled)
}

/// Little's law ([`crate::analysis::occupancy`]): the I/Os of the whole
/// run, and of each worker, spent no more time in flight than the
/// window gave --iodepth slots (times the workers). Latencies measured from
/// a schedule's due times are not bounded so, and not checked.
fn check_in_flight(
    v: &serde_json::Value,
    workers: &[Lazy],
    seconds: f64,
    shown: &str,
    at: &str,
) -> Result<()> {
    use crate::analysis::occupancy::Occupancy;
    if v["window"]["latency_from"].as_str() == Some("due") {
        return Ok(());
    }
    let depth = v["config"]["iodepth"].as_u64().unwrap_or(0);
    if depth == 0 {
        return Err(damaged(
            shown,
            at,
            format!(
                "config.iodepth is {}, not a depth of one or more",
                v["config"]["iodepth"]
            ),
        ));
    }
    let check = |part: &serde_json::Value, path: &str, slots: u64, who: String| {
        let ios = part["ios"].as_u64().unwrap_or(0);
        let (Some(mean), Some(max)) = (
            part["latency_ns"]["mean"].as_f64(),
            part["latency_ns"]["max"].as_u64(),
        ) else {
            return Ok(());
        };
        let o = Occupancy {
            ios,
            mean_ns: mean,
            max_ns: max,
            seconds,
            slots,
        };
        if o.fits() {
            return Ok(());
        }
        Err(damaged(
            shown,
            at,
            format!(
                "{path}ios is {ios} at a mean latency of {}: {:.3} s in flight, but {who} have room for {:.3} s in window.seconds {} (Little's law: I/Os x mean latency <= window x I/Os in flight)",
                crate::base::units::fmt_latency_ns(mean),
                o.busy_sec(),
                o.room_sec(),
                shown_num(seconds)
            ),
        ))
    };
    for (i, &w) in workers.iter().enumerate() {
        let (w, _) = worker(w);
        check(
            &w,
            &format!("workers[{i}]."),
            depth,
            format!("its {depth} I/O slot(s) (iodepth)"),
        )?;
    }
    let n = workers.len() as u64;
    check(
        &v["total"],
        "total.",
        depth.saturating_mul(n),
        format!("iodepth {depth} x {n} worker(s)"),
    )
}

/// `latency_ns` of `part` is the summary of its `histogram`, and the
/// histogram counts its `ios` (on a schedule, at least them).
fn check_latency(part: &serde_json::Value, shown: &str, at: &str, scheduled: bool) -> Result<()> {
    use crate::analysis::histogram::LatencyHistogram;
    let Some(text) = part["histogram"].as_str() else {
        return Err(damaged(shown, at, "histogram is missing".into()));
    };
    let h = LatencyHistogram::from_base64(text)
        .map_err(|e| damaged(shown, at, format!("histogram cannot be read ({e:#})")))?;
    let ios = part["ios"].as_u64().unwrap_or(0);
    if h.len() < ios || (!scheduled && h.len() != ios) {
        return Err(damaged(
            shown,
            at,
            format!("histogram holds {} latencies, but ios is {ios}", h.len()),
        ));
    }
    let want = h.summary();
    let have = &part["latency_ns"];
    let agree = match &want {
        None => have.is_null(),
        Some(s) => {
            let int = |k: &str, x: u64| have[k].as_u64() == Some(x);
            int("min", s.min)
                && int("p50", s.p50)
                && int("p90", s.p90)
                && int("p99", s.p99)
                && int("p99_9", s.p99_9)
                && int("p99_99", s.p99_99)
                && int("max", s.max)
                && have["mean"].as_f64().is_some_and(|m| close(m, s.mean))
        }
    };
    if !agree {
        let said = match &want {
            None => "null (it is empty)".to_string(),
            Some(s) => format!("p99 {} and max {}", s.p99, s.max),
        };
        return Err(damaged(
            shown,
            at,
            format!("latency_ns is {have}, but its histogram says {said}"),
        ));
    }
    Ok(())
}

/// The arithmetic of a document of `kind` (run, sweep, compare or merge):
/// every run inside it, as [`check_run_arithmetic`], or the merge's hosts.
pub(crate) fn check_document_arithmetic(top: &Object, shown: &str, kind: Kind) -> Result<()> {
    fn object(l: Option<Lazy>) -> Object {
        l.and_then(Lazy::object).unwrap_or_default()
    }
    fn array(l: Option<Lazy>) -> Option<Vec<Lazy>> {
        l.and_then(Lazy::array)
    }
    match kind {
        Kind::Sweep => {
            for (i, p) in array(top.get("points")).into_iter().flatten().enumerate() {
                let runs = array(p.object().and_then(|p| p.get("runs")));
                // A point stands for its runs (the first is its median run).
                if runs.as_ref().is_none_or(Vec::is_empty) {
                    return Err(damaged(
                        shown,
                        "",
                        format!("points[{i}].runs is missing or empty: a point without a run"),
                    ));
                }
                for (j, r) in runs.into_iter().flatten().enumerate() {
                    let at = format!("points[{i}].runs[{j}].");
                    check_run_arithmetic(&object(Some(r)), shown, &at)?;
                }
            }
            Ok(())
        }
        Kind::Compare => {
            for (i, p) in array(top.get("phases")).into_iter().flatten().enumerate() {
                let d = object(p.object().and_then(|p| p.get("document")));
                check_run_arithmetic(&d, shown, &format!("phases[{i}].document."))?;
            }
            Ok(())
        }
        Kind::Merge => check_merged_arithmetic(top, shown),
        // Findings hold no run's counts to add up: their typed parse is the check.
        Kind::Findings => Ok(()),
        _ => check_run_arithmetic(top, shown, ""),
    }
}

/// A merged document's arithmetic: every host's window of positive length
/// and finite rate, and totals that are the sums of the hosts.
pub(crate) fn check_merged_arithmetic(top: &Object, shown: &str) -> Result<()> {
    // All but the workers, whose counts are read one at a time.
    let v = &top.small(&["workers"]);
    let workers: Vec<Counts> = top
        .get("workers")
        .and_then(Lazy::array)
        .unwrap_or_default()
        .into_iter()
        .map(Counts::of)
        .collect();
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
        check_latency(h, shown, &at, !v["config"]["rate"].is_null())?;
    }
    // A run the launcher says sent nothing cannot also be in the fleet.
    for (i, m) in v["missing"].as_array().into_iter().flatten().enumerate() {
        if let Some(j) = hosts.iter().position(|h| h["hostname"] == m["host"]) {
            return Err(damaged(
                shown,
                "",
                format!(
                    "missing[{i}] is host {}, but hosts[{j}] is its measured run",
                    crate::base::error::show_text(m["host"].as_str().unwrap_or("?"))
                ),
            ));
        }
    }
    check_latency(&v["total"], shown, "total.", !v["config"]["rate"].is_null())?;
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
        let workers: u64 = workers.iter().filter_map(|w| w.get(key)).sum();
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
