//! `stripebench sweep`: the cartesian product of parameter values, each point
//! a full run (cold cache for buffered reads, settings put back after it),
//! tabled as it goes, appended to the output files at once so an interrupted
//! sweep keeps every finished point, and plotted at the end.

use std::path::PathBuf;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::base::error::{usage, UsageError};
use crate::base::units::{fmt_latency_ns, mb_per_sec};
use crate::cli::{RunArgs, RwMode, SweepArgs};
use crate::commands::{measure, member_paths, Outcome};
use crate::document::run::{RunDocument, ToolInfo};
use crate::measure::config::RunConfig;

/// The parameters a sweep can vary.
pub const PARAMS: [&str; 7] = [
    "readahead",
    "bs",
    "jobs",
    "iodepth",
    "mode",
    "rw",
    "members",
];

/// One `--param NAME=V1,V2,...`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub values: Vec<String>,
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
    Ok(Param {
        name: name.into(),
        values,
    })
}

/// One point's summary over its repeats.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PointDoc {
    /// The swept values, in --param order.
    pub values: Vec<(String, String)>,
    /// Total bytes per second: median, min and max over the repeats.
    pub bytes_per_sec_median: f64,
    pub bytes_per_sec_min: f64,
    pub bytes_per_sec_max: f64,
    /// Every repeat's full run document.
    pub runs: Vec<RunDocument>,
    /// A signal ended this point's last run early: its figures cover what
    /// was measured until then.
    #[serde(default)]
    pub partial: bool,
}

/// The sweep document (`--json`): every finished point.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepDocument {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub params: Vec<Param>,
    pub repeat: usize,
    pub interrupted: bool,
    pub points: Vec<PointDoc>,
}

/// Applies one point's values to the run options; returns them and the
/// targets the point drives.
fn apply(
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
                    Some(v.parse().map_err(|_| {
                        bad(n, v, "give read_ahead_kb in KiB, a whole number".into())
                    })?)
            }
            "bs" => a.bs = Some(crate::cli::parse_bs(v).map_err(|e| bad(n, v, e))?),
            "jobs" => {
                a.jobs = v
                    .parse()
                    .ok()
                    .filter(|&j| (1..=4096).contains(&j))
                    .ok_or_else(|| bad(n, v, "give a count from 1 to 4096".into()))?
            }
            "iodepth" => {
                a.iodepth = v
                    .parse()
                    .ok()
                    .filter(|&j| (1..=4096).contains(&j))
                    .ok_or_else(|| bad(n, v, "give a depth from 1 to 4096".into()))?
            }
            "mode" => match v.as_str() {
                "direct" => (a.direct, a.buffered) = (false, false),
                "buffered" => (a.direct, a.buffered) = (false, true),
                _ => return Err(bad(n, v, "mode is direct or buffered".into())),
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
            _ => unreachable!("parse_param admits only known names"),
        }
    }
    if a.iodepth > 1 && a.engine == crate::cli::EngineArg::Sync {
        a.engine = crate::cli::EngineArg::Auto;
    }
    a.targets = paths.clone();
    a.json = None;
    a.csv = None;
    a.plot = None;
    a.members = None;
    Ok((a, paths))
}

/// The cartesian product of the values, first parameter outermost.
pub fn points(params: &[Param]) -> Vec<Vec<(String, String)>> {
    params.iter().fold(vec![Vec::new()], |acc, p| {
        acc.iter()
            .flat_map(|prefix| {
                p.values.iter().map(move |v| {
                    let mut x = prefix.clone();
                    x.push((p.name.clone(), v.clone()));
                    x
                })
            })
            .collect()
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The table's header and one row per point.
pub fn header(params: &[Param]) -> String {
    let mut h: Vec<String> = params.iter().map(|p| format!("{:>10}", p.name)).collect();
    h.extend(
        [
            "MB/s".to_string(),
            "min-max".into(),
            "IOPS".into(),
            "p50".into(),
            "p99".into(),
            "CPU%".into(),
            "CPU s/GB".into(),
            "dev/app".into(),
        ]
        .iter()
        .map(|s| format!("{s:>10}")),
    );
    h.join(" ")
}

/// Device bytes and the application's bytes over the same span, all targets.
fn device_and_app_bytes(doc: &RunDocument) -> (u64, u64) {
    doc.targets
        .iter()
        .filter_map(|t| t.device.as_ref())
        .fold((0, 0), |(d, a), c| {
            (
                d + c.read_bytes + c.write_bytes,
                a + c.app_read_bytes + c.app_write_bytes,
            )
        })
}

pub fn row(p: &PointDoc) -> String {
    let doc = &p.runs[0];
    let t = &doc.total;
    let secs = t.seconds.max(1e-9);
    let cpu = t.cpu_usr_sec + t.cpu_sys_sec;
    let (dev, app) = device_and_app_bytes(doc);
    let mut cells: Vec<String> = p.values.iter().map(|(_, v)| format!("{v:>10}")).collect();
    cells.extend([
        format!("{:>10.1}", mb_per_sec(p.bytes_per_sec_median)),
        format!(
            "{:>10}",
            if p.runs.len() > 1 {
                format!(
                    "{:.0}-{:.0}",
                    mb_per_sec(p.bytes_per_sec_min),
                    mb_per_sec(p.bytes_per_sec_max)
                )
            } else {
                "-".into()
            }
        ),
        format!("{:>10.0}", t.iops),
        format!(
            "{:>10}",
            t.latency_ns
                .map_or("-".into(), |l| fmt_latency_ns(l.p50 as f64))
        ),
        format!(
            "{:>10}",
            t.latency_ns
                .map_or("-".into(), |l| fmt_latency_ns(l.p99 as f64))
        ),
        format!("{:>10.1}", cpu / secs * 100.0),
        format!(
            "{:>10}",
            t.cpu_sec_per_gb().map_or("-".into(), |v| format!("{v:.3}"))
        ),
        format!(
            "{:>10}",
            if app > 0 {
                format!("{:.3}", dev as f64 / app as f64)
            } else {
                "-".into()
            }
        ),
    ]);
    cells.join(" ")
}

pub fn run(args: &SweepArgs) -> Result<u8> {
    crate::commands::preflight();
    let base = &args.run;
    base.refuse_for("sweep", &["dry-run", "histogram", "start-at"])?;
    if args.params.is_empty() {
        return usage("sweep needs at least one --param NAME=V1,V2,...");
    }
    let mut names: Vec<&str> = Vec::new();
    for p in &args.params {
        if names.contains(&p.name.as_str()) {
            return usage(format!(
                "--param {} is given twice: put all its values in one list",
                p.name
            ));
        }
        names.push(&p.name);
    }
    let pts = points(&args.params);
    let total_points = pts.len() * args.repeat;
    if pts.len() > args.max_points {
        return usage(format!(
            "the sweep has {} points, more than --max-points {}: trim the value lists or raise --max-points",
            pts.len(),
            args.max_points
        ));
    }
    let targets: Vec<PathBuf> = match &base.members {
        Some(v) => member_paths(v)?,
        None => base.targets.clone(),
    };
    if targets.is_empty() {
        return usage("sweep needs targets: name them (or --members VOLUME)");
    }
    // Every point is validated before any I/O.
    let available = crate::base::cpus::available_cpus();
    let mut plans = Vec::new();
    for pt in &pts {
        let (a, paths) = apply(base, &targets, pt)?;
        let cfg = RunConfig::from_args(&a, &available, None)?;
        if cfg.readahead_kb.is_some() {
            for p in &paths {
                if crate::device::readahead_knob(p).is_none() {
                    return usage(format!(
                        "--param readahead: {} has no block device under it (tmpfs? btrfs?)",
                        crate::base::error::show_path(p)
                    ));
                }
            }
        }
        plans.push((pt.clone(), cfg, paths));
    }
    if let Some(plot) = &args.run.plot {
        crate::report::plot::check_path(plot)?;
    }
    crate::report::output::check(
        &crate::report::output::given(&[
            ("--json", base.json.as_deref()),
            ("--csv", base.csv.as_deref()),
            ("--plot", base.plot.as_deref()),
        ]),
        &crate::device::protected_paths(&targets),
    )?;

    let progress = crate::measure::progress::Progress::new(!base.no_progress);
    let per_point = plans[0].1.duration.as_secs_f64() + plans[0].1.ramp.as_secs_f64();
    let mut doc = SweepDocument {
        schema_version: 1,
        tool: ToolInfo::this(),
        params: args.params.clone(),
        repeat: args.repeat,
        interrupted: false,
        points: Vec::new(),
    };
    // The CSV is kept whole in memory and rewritten after every point, like
    // the JSON: an interrupted sweep keeps what it finished.
    let mut csv_text = match &base.csv {
        Some(_) => {
            let mut h: Vec<String> = args.params.iter().map(|p| p.name.clone()).collect();
            h.extend(
                [
                    "bytes_per_sec_median",
                    "bytes_per_sec_min",
                    "bytes_per_sec_max",
                    "mb_per_sec",
                    "iops",
                    "lat_p50_ns",
                    "lat_p99_ns",
                    "cpu_usr_sec",
                    "cpu_sys_sec",
                    "device_bytes",
                    "app_bytes",
                ]
                .map(String::from),
            );
            Some(h.join(",") + "\n")
        }
        None => None,
    };
    // With --json -, stdout carries only the document: the table goes to stderr.
    let to_stdout = [&base.json, &base.csv]
        .into_iter()
        .flatten()
        .any(|j| j.as_os_str() == "-");
    let say = |line: &str| crate::report::output::say(&format!("{line}\n"), to_stdout);
    say(&format!("sweep: {} point(s) x {} repeat(s); MB/s = 10^6 B/s; dev/app = device bytes / application bytes (<1: cache hits, >1: read-ahead); CPU% = user + system CPU time in the window as a percentage of one core, summed over the workers", pts.len(), args.repeat));
    say(&header(&args.params));
    let mut done_runs = 0;
    for (pt, cfg, paths) in &plans {
        if crate::measure::signals::interrupted() {
            doc.interrupted = true;
            break;
        }
        let mut runs = Vec::new();
        let mut partial = false;
        for _ in 0..args.repeat {
            let label: Vec<String> = pt.iter().map(|(n, v)| format!("{n}={v}")).collect();
            progress.message(&format!(
                "point {}/{}: {} ({:.0}s left for the sweep)",
                done_runs + 1,
                total_points,
                label.join(" "),
                (total_points - done_runs) as f64 * per_point
            ));
            let Outcome::Done(run_doc) = measure(cfg, paths, false)? else {
                unreachable!("sweep never asks for a dry run")
            };
            done_runs += 1;
            // The run in progress is kept, marked partial, and the sweep ends.
            partial = run_doc.interrupted;
            runs.push(*run_doc);
            if partial {
                break;
            }
        }
        let rates: Vec<f64> = runs.iter().map(|r| r.total.bytes_per_sec).collect();
        let med = median(rates.clone());
        // The run closest to the median stands for the point.
        runs.sort_by(|a, b| {
            (a.total.bytes_per_sec - med)
                .abs()
                .total_cmp(&(b.total.bytes_per_sec - med).abs())
        });
        let p = PointDoc {
            values: pt.clone(),
            bytes_per_sec_median: med,
            bytes_per_sec_min: rates.iter().copied().fold(f64::INFINITY, f64::min),
            bytes_per_sec_max: rates.iter().copied().fold(0.0, f64::max),
            runs,
            partial,
        };
        progress.message("");
        say(&row(&p));
        if p.partial {
            say("  (partial: interrupted during this point; its figures cover what was measured)");
        }
        if let Some(b) = p.runs[0]
            .cache
            .as_ref()
            .and_then(|c| c.memcpy_bytes_per_sec)
        {
            say(&format!(
                "  page cache preloaded (--cached); memory-copy ceiling, one thread: {:.1} MB/s",
                b / 1e6
            ));
        }
        for w in p.runs[0]
            .warnings
            .iter()
            .filter(|w| w.contains("page cache served"))
        {
            say(&format!("  warning: {w}"));
        }
        if let Some(text) = csv_text.as_mut() {
            let t = &p.runs[0].total;
            let (dev, app) = device_and_app_bytes(&p.runs[0]);
            let mut cells: Vec<String> = p.values.iter().map(|(_, v)| v.clone()).collect();
            cells.extend([
                format!("{:.1}", p.bytes_per_sec_median),
                format!("{:.1}", p.bytes_per_sec_min),
                format!("{:.1}", p.bytes_per_sec_max),
                format!("{:.3}", mb_per_sec(p.bytes_per_sec_median)),
                format!("{:.1}", t.iops),
                t.latency_ns.map_or(String::new(), |l| l.p50.to_string()),
                t.latency_ns.map_or(String::new(), |l| l.p99.to_string()),
                format!("{:.6}", t.cpu_usr_sec),
                format!("{:.6}", t.cpu_sys_sec),
                dev.to_string(),
                app.to_string(),
            ]);
            text.push_str(&cells.join(","));
            text.push('\n');
            if let Some(p) = base.csv.as_ref().filter(|p| p.as_os_str() != "-") {
                crate::report::output::write_file(p, text.as_bytes())?;
            }
        }
        doc.points.push(p);
        // Rewritten after every point: an interrupted sweep keeps what it finished.
        if let Some(j) = base.json.as_ref().filter(|j| j.as_os_str() != "-") {
            crate::report::output::write_file(j, &serde_json::to_vec_pretty(&doc)?)?;
        }
        if partial {
            doc.interrupted = true;
            break;
        }
    }
    progress.finish();
    if let Some(j) = &base.json {
        crate::report::output::write(j, &serde_json::to_vec_pretty(&doc)?)?;
    }
    if let (Some(c), Some(text)) = (&base.csv, &csv_text) {
        crate::report::output::write(c, text.as_bytes())?;
    }
    if let Some(plot) = &base.plot {
        if !doc.points.is_empty() {
            crate::report::plot::sweep(&doc, plot)?;
            eprintln!("plot: {}", plot.display());
        }
    }
    // As run: I/O errors (or bad blocks, or a failed flush) in any point exit 1.
    let failed = doc
        .points
        .iter()
        .flat_map(|p| &p.runs)
        .any(RunDocument::has_errors);
    Ok(crate::base::error::exit_code(doc.interrupted, failed))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn median_of_repeats() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
