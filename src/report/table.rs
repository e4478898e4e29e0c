//! The human table: a header that says what ran, a row per worker, a row per
//! target when targets have several workers, a TOTAL row; then the device
//! counters, the flush of buffered writes, errors and warnings.

use std::fmt::Write;

use crate::analysis::histogram::LatencySummary;
use crate::base::error::{show_text, Shown};
use crate::base::units::{fmt_bytes, fmt_latency_ns, fmt_size_arg, mb_per_sec, mib_per_sec};
use crate::device::devstat::DeviceCounters;
use crate::document::run::{DirectionsDoc, Figures, FlushDoc, RunDocument};

const COLUMNS: [&str; 14] = [
    "", "target", "cpu", "MB/s", "MiB/s", "IOPS", "mean", "p50", "p99", "p99.9", "max", "usr%",
    "sys%", "errors",
];

/// A row of one entry (a worker, a target, the TOTAL): its rates and
/// latencies, its CPU time as a share of its seconds, its errors.
fn row(label: String, target: &str, cpu: String, f: &Figures) -> Vec<String> {
    let pct = |s: f64| {
        if f.seconds > 0.0 {
            format!("{:.1}", s / f.seconds * 100.0)
        } else {
            "-".into()
        }
    };
    let mut r = rate_cells(label, target, cpu, f.bytes_per_sec, f.iops, &f.latency_ns);
    r.extend([pct(f.cpu_usr_sec), pct(f.cpu_sys_sec), f.errors.to_string()]);
    r
}

/// The columns up to the latencies, which a direction of a mixed pattern
/// has too.
fn rate_cells(
    label: String,
    target: &str,
    cpu: String,
    bps: f64,
    iops: f64,
    lat: &Option<LatencySummary>,
) -> Vec<String> {
    let l =
        |f: fn(&LatencySummary) -> f64| lat.as_ref().map_or("-".into(), |x| fmt_latency_ns(f(x)));
    vec![
        label,
        target.to_string(),
        cpu,
        format!("{:.1}", mb_per_sec(bps)),
        format!("{:.1}", mib_per_sec(bps)),
        format!("{iops:.0}"),
        l(|x| x.mean),
        l(|x| x.p50 as f64),
        l(|x| x.p99 as f64),
        l(|x| x.p99_9 as f64),
        l(|x| x.max as f64),
    ]
}

/// A mixed pattern's rows for reads and writes apart, labelled
/// `{label} reads` and `{label} writes` (CPU and errors are the combined row's).
fn direction_rows(label: &str, d: &DirectionsDoc) -> Vec<Vec<String>> {
    [("reads", &d.reads), ("writes", &d.writes)]
        .iter()
        .map(|(name, x)| {
            let mut r = rate_cells(
                format!("{label} {name}"),
                "",
                "".into(),
                x.bytes_per_sec,
                x.iops,
                &x.latency_ns,
            );
            r.extend(["-", "-", "-"].map(String::from));
            r
        })
        .collect()
}

fn layout(rows: &[Vec<String>]) -> String {
    // Each cell is one line: a newline in a target's or a device's name
    // would start a row of its own.
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| show_text(c).into_owned()).collect())
        .collect();
    let rows = &rows;
    let mut widths = [0usize; COLUMNS.len()];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            // Labels and paths left-aligned, figures right-aligned.
            if i < 2 {
                let _ = write!(line, "{c:<w$}  ", w = widths[i]);
            } else {
                let _ = write!(line, "{c:>w$}  ", w = widths[i]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A buffered write's flush: its durable rate over `over` (the window, or
/// the target's own time) and its final fsync.
fn flush_line(label: &str, bytes_per_sec: f64, f: &FlushDoc, over: &str) -> String {
    format!(
        "  {}: written to cache {:.1} MB/s; durable {:.1} MB/s ({} over {over} and the final fsync, {:.3}s)\n",
        Shown(label),
        mb_per_sec(bytes_per_sec),
        mb_per_sec(f.durable_bytes_per_sec),
        match f.durable_basis.as_str() {
            "device" => format!("{} the device wrote", fmt_bytes(f.durable_bytes)),
            "application" => format!("{} written, no device counters", fmt_bytes(f.durable_bytes)),
            _ => fmt_bytes(f.durable_bytes),
        },
        f.seconds
    )
}

/// The engine paths the workers used, once each: "; io_uring, registered buffers and file".
fn engine_paths(doc: &RunDocument) -> String {
    let mut paths: Vec<&str> = Vec::new();
    for w in &doc.workers {
        if !w.engine_path.is_empty() && !paths.contains(&w.engine_path.as_str()) {
            paths.push(&w.engine_path);
        }
    }
    let mut kinds: Vec<String> = Vec::new();
    for b in doc.workers.iter().filter_map(|w| w.buffer.as_ref()) {
        let k = match b.method.as_str() {
            "thp" => "buffers in 2 MiB huge pages (THP)".to_string(),
            "hugetlb" => "buffers in 2 MiB huge pages (hugetlbfs)".to_string(),
            _ => format!("buffers in {} pages", fmt_bytes(b.page_size_bytes)),
        };
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    paths
        .iter()
        .map(|p| format!("; {p}"))
        .chain(kinds.iter().map(|k| format!("; {k}")))
        .collect()
}

/// The text report: [`heading`], the table of [`rows`], its [`summary`],
/// the [`devices`] and the [`notes`] (the HTML report shows the same parts its own way).
pub fn render(doc: &RunDocument) -> String {
    render_rows(doc, None)
}

/// How many of the slowest and of the fastest a summarised table shows.
const EXTREMES: usize = 3;

/// [`render`] with at most `limit` worker rows (`--rows`; `None`: all):
/// past it, the workers' rows give way to [`summarised_rows`].
pub fn render_rows(doc: &RunDocument, limit: Option<usize>) -> String {
    let mut out = heading(doc);
    match limit.filter(|&n| doc.workers.len() > n) {
        Some(n) => {
            out.push_str(&layout(&summarised_rows(doc, n)));
            let _ = writeln!(
                out,
                "{} workers, past --rows {n}: each column's min, p10, median, p90 and max over them (each column on its own, not one worker's row), then the {EXTREMES} slowest and the {EXTREMES} fastest by MB/s; --rows all shows every row, and the JSON, CSV and HTML hold every one",
                doc.workers.len()
            );
        }
        None => out.push_str(&layout(&rows(doc))),
    }
    out.push_str(&summary(doc));
    out.push_str(&devices_rows(doc, limit));
    out.push_str(&notes(doc));
    out
}

/// A --bssplit as fio spells it (`4096/50:12288/50`, a second list after
/// a comma for the writes), each size in units: `4k/50:12k/50`.
pub fn split_shown(split: &str) -> String {
    let list = |l: &str| -> String {
        let parts: Vec<String> = l
            .split(':')
            .map(|p| match p.split_once('/') {
                Some((b, pct)) => b
                    .parse::<u64>()
                    .map_or(p.to_string(), |b| format!("{}/{pct}", fmt_size_arg(b))),
                None => p.to_string(),
            })
            .collect();
        parts.join(":")
    };
    let lists: Vec<String> = split.split(',').map(list).collect();
    lists.join(",")
}

/// The lines above the table: what ran, the window, what the columns mean.
pub fn heading(doc: &RunDocument) -> String {
    let c = &doc.config;
    let mut out = String::new();
    let bs = if let Some(split) = &c.bssplit {
        format!("split {}", split_shown(split))
    } else if c.bs == "lbs" {
        // The size it resolved to, per target where they differ.
        let mut sizes: Vec<u64> = doc.targets.iter().map(|t| t.bs).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let sizes: Vec<String> = sizes.into_iter().map(fmt_size_arg).collect();
        format!("{} (lbs: the logical block size)", sizes.join("/"))
    } else {
        c.bs.parse::<u64>().map_or(c.bs.clone(), fmt_size_arg)
    };
    let _ = writeln!(
        out,
        "stripebench {}: {}{}{}, bs {}, {}, engine {} (iodepth {}{}), {} target(s) x {} job(s){}, seed {}",
        Shown(&doc.tool.version),
        c.rw.name(),
        match (c.rw.name(), &doc.total.figures.by_direction) {
            ("randrw" | "rw", Some(d)) => format!(" ({}% reads asked, {:.1}% achieved)", c.read_pct, d.read_pct),
            ("randrw" | "rw", None) => format!(" ({}% reads)", c.read_pct),
            _ => String::new(),
        },
        // fio's distribution and offset modifiers change where I/Os land.
        Shown(&c.access_words()),
        Shown(&bs),
        if c.direct {
            "O_DIRECT"
        } else if c.uncached {
            "uncached (page cache, RWF_DONTCACHE)"
        } else {
            "buffered (page cache)"
        },
        c.engine.name(),
        c.iodepth,
        Shown(&engine_paths(doc)),
        doc.targets.len(),
        c.jobs,
        if c.jobs_share {
            " sharing each target's region"
        } else {
            ""
        },
        c.seed
    );
    let _ = writeln!(
        out,
        "window {:.2}s after a {:.2}s ramp{}{}; MB/s = 10^6 B/s, MiB/s = 2^20 B/s; latency per I/O, {}",
        doc.window.seconds,
        doc.window.ramp_sec,
        match doc.window.ended_by.as_str() {
            "limit" => " (closed at the last completion: every worker reached --io-limit)",
            "passes" => " (closed at the last completion: every worker finished its passes)",
            "latency_target" => " (closed at the last completion: every worker's --latency-target search ended, below)",
            "errors" => " (every worker stopped on errors)",
            "steady" => " (closed when the run was steady: --steady, below)",
            "rate_min" => " (closed when a worker fell below its minimum rate, below)",
            "exitall" => " (closed when a run at once with it ended: fio's exitall)",
            _ => "",
        },
        if c.pin { "; workers pinned" } else { "; workers not pinned" },
        match &c.rate {
            Some(r) => format!(
                "due time to completion (on a schedule of {} per worker; service time below)",
                r.label()
            ),
            None => "issue to completion".into(),
        }
    );
    let _ = writeln!(
        out,
        "usr%, sys%: CPU time in the window as a percentage of one core (CPU% of one core); target and TOTAL rows sum their workers, up to 100% each"
    );
    if let Some(line) = own_time_line(doc) {
        let _ = writeln!(out, "{line}");
    }
    for w in &doc.workers {
        if let Some(s) = &w.sprandom {
            let _ = writeln!(out, "w{} {}; {} written", w.id, spr_line(s), w.write_ios);
        }
    }
    if let Some(s) = &doc.window.steady {
        let _ = writeln!(out, "{}", steady_line(s));
    }
    if let Some(line) = doc.below_min_line() {
        let _ = writeln!(out, "{line}");
    }
    if let Some(chunk) = c.stripe_chunk {
        let _ = writeln!(
            out,
            "modelled RAID0 (--stripe): a logical stream over {} members, chunk {}; each member row is its worker's share; figures are per-member upper bounds (TOTAL*, see below)",
            doc.targets.len(),
            fmt_size_arg(chunk)
        );
    }
    if let Some(cache) = doc.cache.as_ref().filter(|c| c.state != "untouched") {
        let _ = writeln!(
            out,
            "page cache: {} before the run ({}, {:.3}s, not counted){}",
            Shown(&cache.state),
            Shown(&cache.method),
            cache.seconds,
            cache
                .memcpy_bytes_per_sec
                .map(|b| format!("; memory-copy ceiling (one thread): {:.1} MB/s", b / 1e6))
                .unwrap_or_default()
        );
    }
    if let Some(kb) = c.readahead_kb {
        let _ = writeln!(
            out,
            "read-ahead set to {kb} KiB on the targets' devices for the run (put back afterwards)"
        );
    }
    let md: Vec<String> = [
        (
            "stripe_cache_size",
            c.stripe_cache_size.map(|v| v.to_string()),
        ),
        (
            "group_thread_cnt",
            c.group_thread_cnt.map(|v| v.to_string()),
        ),
        ("sync_speed_min", c.sync_speed_min.clone()),
        ("sync_speed_max", c.sync_speed_max.clone()),
    ]
    .iter()
    .filter_map(|(n, v)| v.as_ref().map(|v| format!("{n} {}", show_text(v))))
    .collect();
    if !md.is_empty() {
        let _ = writeln!(
            out,
            "md {} set on the targets' arrays for the run (put back afterwards)",
            md.join(", ")
        );
    }
    if doc.interrupted {
        let _ = writeln!(
            out,
            "INTERRUPTED: the window was closed early; figures cover the {:.2}s measured",
            doc.window.seconds
        );
    }
    out
}

/// When some worker or target was active for less than the window (it
/// stopped on its --io-limit or --passes before the last one did): the
/// line that says its rates run over its own time, and how long each was.
pub fn own_time_line(doc: &RunDocument) -> Option<String> {
    let win = doc.window.seconds;
    let shorter = |s: f64| (s - win).abs() > 1e-9;
    if !doc.workers.iter().any(|w| shorter(w.figures.seconds)) {
        return None;
    }
    let mut each: Vec<String> = doc
        .workers
        .iter()
        .take(8)
        .map(|w| format!("w{} {:.3}s", w.id, w.figures.seconds))
        .collect();
    if doc.workers.len() > 8 {
        let (lo, hi) = doc.workers.iter().fold((f64::MAX, 0.0f64), |(lo, hi), w| {
            (lo.min(w.figures.seconds), hi.max(w.figures.seconds))
        });
        each.push(format!(
            "... {} workers, {lo:.3}s to {hi:.3}s",
            doc.workers.len()
        ));
    }
    Some(format!(
        "worker and target rows: MB/s, IOPS and CPU% over each one's own active time, first issue to last completion less page-cache evictions ({}); TOTAL over the shared window ({win:.3}s)",
        each.join(", ")
    ))
}

/// When the targets ended at different times: what the TOTAL is (every
/// target's bytes over the shared window, which can stand below the
/// fastest target) and the sum of the targets' own rates beside it. The
/// run, sweep and compare tables say it in these words.
pub fn total_line(doc: &RunDocument) -> Option<String> {
    let sum = doc.total.targets_sum.as_ref()?;
    Some(format!(
        "TOTAL is every target's bytes over the shared window ({:.3}s), not a sum of rates: the targets ended at different times; their own rates sum to {:.1} MB/s",
        doc.window.seconds,
        mb_per_sec(sum.bytes_per_sec)
    ))
}

/// The table: the column names, a row per worker, per target (with several
/// workers each) and the TOTAL.
pub fn rows(doc: &RunDocument) -> Vec<Vec<String>> {
    let mut rows = vec![COLUMNS.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    let multi_job = doc.targets.iter().any(|t| t.workers > 1);
    for t in &doc.targets {
        for w in doc.workers.iter().filter(|w| w.target_index == t.index) {
            let cpu = w.cpu.map_or("-".into(), |c| c.to_string());
            rows.push(row(format!("w{}", w.id), &w.target, cpu, &w.figures));
        }
        if multi_job {
            rows.push(row("target".into(), &t.path, "".into(), &t.figures));
        }
        if let Some(d) = t
            .figures
            .by_direction
            .as_ref()
            .filter(|_| doc.targets.len() > 1)
        {
            rows.extend(direction_rows("target", d));
        }
    }
    let tot = &doc.total;
    // Marked when the figures are upper bounds (--stripe), with the
    // reason under the table.
    let label = if doc.stripe_model.is_some() {
        "TOTAL*"
    } else {
        "TOTAL"
    };
    rows.push(row(label.into(), "", "".into(), &tot.figures));
    if let Some(d) = &tot.figures.by_direction {
        rows.extend(direction_rows("TOTAL", d));
    }
    rows
}

/// The quantile `q` (0 to 1, nearest rank) of `v`, sorted in place.
fn quantile<T: Copy + PartialOrd>(v: &mut [T], q: f64) -> Option<T> {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let i = ((v.len().max(1) - 1) as f64 * q).round() as usize;
    v.get(i).copied()
}

/// Rows that summarise `entries` (label, figures): each column's min,
/// p10, median, p90 and max over them, each column on its own.
fn quantile_rows(prefix: &str, entries: &[&Figures]) -> Vec<Vec<String>> {
    let of = |q: f64, f: &dyn Fn(&Figures) -> Option<f64>| -> Option<f64> {
        let mut v: Vec<f64> = entries.iter().filter_map(|e| f(e)).collect();
        quantile(&mut v, q)
    };
    let share = |s: fn(&Figures) -> f64| {
        move |f: &Figures| (f.seconds > 0.0).then(|| s(f) / f.seconds * 100.0)
    };
    [
        ("min", 0.0),
        ("p10", 0.1),
        ("median", 0.5),
        ("p90", 0.9),
        ("max", 1.0),
    ]
    .iter()
    .map(|&(name, q)| {
        let lat = |g: fn(&LatencySummary) -> u64| {
            of(q, &|f: &Figures| f.latency_ns.as_ref().map(|l| g(l) as f64)).map(|x| x as u64)
        };
        let summary = (|| {
            Some(LatencySummary {
                min: lat(|l| l.min)?,
                mean: of(q, &|f: &Figures| f.latency_ns.as_ref().map(|l| l.mean))?,
                p50: lat(|l| l.p50)?,
                p90: lat(|l| l.p90)?,
                p99: lat(|l| l.p99)?,
                p99_9: lat(|l| l.p99_9)?,
                p99_99: lat(|l| l.p99_99)?,
                max: lat(|l| l.max)?,
            })
        })();
        let mut r = rate_cells(
            format!("{prefix}{name}"),
            &format!("({} of them)", entries.len()),
            "".into(),
            of(q, &|f: &Figures| Some(f.bytes_per_sec)).unwrap_or(0.0),
            of(q, &|f: &Figures| Some(f.iops)).unwrap_or(0.0),
            &summary,
        );
        let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
        r.extend([
            pct(of(q, &share(|f| f.cpu_usr_sec))),
            pct(of(q, &share(|f| f.cpu_sys_sec))),
            of(q, &|f: &Figures| Some(f.errors as f64)).map_or("-".into(), |e| format!("{e:.0}")),
        ]);
        r
    })
    .collect()
}

/// The table past `--rows n`: the workers' [`quantile_rows`], their
/// slowest and fastest by MB/s, the targets' rows (summarised the same
/// way when there are more than `n` of them) and the TOTAL.
pub fn summarised_rows(doc: &RunDocument, n: usize) -> Vec<Vec<String>> {
    let mut rows = vec![COLUMNS.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    let figures: Vec<&Figures> = doc.workers.iter().map(|w| &w.figures).collect();
    rows.extend(quantile_rows("", &figures));
    let mut by_rate: Vec<_> = doc.workers.iter().collect();
    by_rate.sort_by(|a, b| a.figures.bytes_per_sec.total_cmp(&b.figures.bytes_per_sec));
    let k = EXTREMES.min(by_rate.len() / 2);
    let fastest = by_rate.iter().rev().take(k).rev();
    for (tag, w) in by_rate
        .iter()
        .take(k)
        .map(|w| ("slow", w))
        .chain(fastest.map(|w| ("fast", w)))
    {
        let cpu = w.cpu.map_or("-".into(), |c| c.to_string());
        rows.push(row(format!("{tag} w{}", w.id), &w.target, cpu, &w.figures));
    }
    if doc.targets.iter().any(|t| t.workers > 1) {
        if doc.targets.len() > n {
            let figures: Vec<&Figures> = doc.targets.iter().map(|t| &t.figures).collect();
            rows.extend(quantile_rows("target ", &figures));
        } else {
            for t in &doc.targets {
                rows.push(row("target".into(), &t.path, "".into(), &t.figures));
            }
        }
    }
    let full = self::rows(doc);
    // The TOTAL rows, as the full table has them.
    if let Some(i) = full
        .iter()
        .rposition(|r| r[0].starts_with("TOTAL") && r[0].len() <= 6)
    {
        rows.extend(full[i..].iter().cloned());
    }
    rows
}

/// The lines under the table: what `--stripe` figures are, CPU per GB, the
/// flush of buffered writes.
pub fn summary(doc: &RunDocument) -> String {
    let tot = &doc.total;
    let mut out = String::new();
    if let Some(line) = total_line(doc) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(m) = &doc.stripe_model {
        let _ = writeln!(
            out,
            "* per-member upper bounds ({} piece(s) per logical request): {}",
            m.pieces_per_request, m.note
        );
    }
    if let Some(per_gb) = tot.cpu_sec_per_gb() {
        let _ = writeln!(
            out,
            "{} {} in the window; CPU {:.3}s user + {:.3}s system = {:.2} CPU-seconds per GB (10^9 B)",
            // A trim moves no data: it discards (or punches out) its range.
            if doc.config.rw.trims() { "trimmed" } else { "moved" },
            fmt_bytes(tot.figures.bytes),
            tot.figures.cpu_usr_sec,
            tot.figures.cpu_sys_sec,
            per_gb
        );
    }
    out.push_str(&size_lines(&doc.total.sizes));
    out.push_str(&prio_lines(&doc.total.priorities));
    out.push_str(&zone_lines(&doc.total.zones, doc.targets.len() > 1));
    if let Some(f) = &doc.in_flight {
        let _ = writeln!(out, "{}", in_flight_line(f));
    }
    if let Some(p) = &doc.process {
        // The whole process as the kernel charged it: what the workers'
        // figures above are checked against (they sum to about its CPU over
        // the window), and what a run of many targets costs to set up.
        let _ = writeln!(
            out,
            "process: set-up {:.3}s; CPU over the window {:.3}s user + {:.3}s system (every thread, sampled {:.3}s apart; {} CPU(s) give {:.3}s), {:.3}s + {:.3}s in all; peak RSS {}",
            p.setup_sec,
            p.window_cpu_usr_sec,
            p.window_cpu_sys_sec,
            p.window_cpu_span_sec,
            doc.host.cpus,
            doc.host.cpus as f64 * doc.window.seconds,
            p.cpu_usr_sec,
            p.cpu_sys_sec,
            fmt_bytes(doc.host.peak_rss_bytes)
        );
    }
    let rings: Vec<_> = doc.workers.iter().filter_map(|w| w.ring.as_ref()).collect();
    if rings.iter().any(|r| r.sqpoll) {
        let secs: f64 = rings.iter().map(|r| r.sqpoll_cpu_sec).sum();
        let mut cpus: Vec<usize> = rings.iter().filter_map(|r| r.sqpoll_cpu).collect();
        cpus.sort_unstable();
        cpus.dedup();
        let _ = writeln!(
            out,
            "--sqpoll: {} kernel submission thread(s), on CPU {}, took {:.3} CPU-seconds in the window (in the system time above)",
            rings.iter().filter(|r| r.sqpoll).count(),
            if cpus.is_empty() {
                "?".to_string()
            } else {
                crate::base::cpus::format_cpu_list(&cpus)
            },
            secs
        );
    }
    let punted = rings.iter().filter(|r| r.punted).count();
    let batch = rings
        .iter()
        .filter(|r| r.sched == crate::engine::Sched::Batch)
        .count();
    if punted > 0 {
        let _ = writeln!(
            out,
            "io_uring: {punted} of {} worker(s) have a target with no non-blocking path, so io_uring runs each of their I/Os in an io-wq kernel thread on the worker's CPU; that thread's CPU time is in no figure above",
            rings.len()
        );
    }
    if batch > 0 {
        let _ = writeln!(
            out,
            "--sched: {batch} of {} worker(s) ran SCHED_BATCH: woken, a worker does not preempt the thread on its CPU (an io-wq thread works through the queue instead of stopping at each completion)",
            rings.len()
        );
    }
    let (batched, n) = crate::document::run::batched(rings.iter().copied());
    if doc.config.complete_min.is_none() && batched > 0 {
        let _ = writeln!(
            out,
            "--complete-min auto: {batched} of {} worker(s) waited for {n} completions at a time (a quarter of the depth), as their targets are RAM with no non-blocking path: fewer wake-ups that cut their io-wq thread off",
            rings.len()
        );
    }
    if doc.workers.iter().any(|w| w.would_block_ios.is_some()) {
        let blocked: u64 = doc.workers.iter().filter_map(|w| w.would_block_ios).sum();
        let ios: u64 = doc.workers.iter().map(|w| w.figures.ios).sum();
        let _ = writeln!(
            out,
            "--nowait: {blocked} of {ios} I/Os in the window would have blocked (EAGAIN, a short transfer, or EOPNOTSUPP under RWF_NOWAIT) and went again without it; their latency holds both tries"
        );
    }
    if tot.cache_evictions > 0 {
        let _ = writeln!(
            out,
            "page cache: each buffered worker evicted its region again when it wrapped around it ({} time(s), {:.3}s in all), so every pass reads the device; worker and target rows leave that time out, TOTAL's shared window holds it",
            tot.cache_evictions, tot.cache_eviction_sec
        );
    }
    if tot.wrap_flushes > 0 {
        let _ = writeln!(
            out,
            "page cache: each buffered writer wrote its region back to the device and dropped it when it wrapped around it ({} time(s), {:.3}s in all, inside the window), so every pass reaches the device rather than overwriting pages still in memory",
            tot.wrap_flushes, tot.wrap_flush_sec
        );
    }

    if doc.targets.iter().any(|t| t.flush.is_some()) {
        out.push_str("buffered writes (the window counts writes into the page cache):\n");
        let apart = tot.targets_sum.is_some();
        for t in &doc.targets {
            if let Some(f) = &t.flush {
                let over = if apart {
                    format!("its own {:.3}s", t.figures.seconds)
                } else {
                    "the window".to_string()
                };
                out.push_str(&flush_line(&t.path, t.figures.bytes_per_sec, f, &over));
            }
        }
        if let Some(f) = &tot.flush {
            let mut line = flush_line("TOTAL", tot.figures.bytes_per_sec, f, "the shared window");
            if let Some(d) = tot
                .targets_sum
                .as_ref()
                .and_then(|t| t.durable_bytes_per_sec)
            {
                line.pop();
                let _ = writeln!(
                    line,
                    "; the targets' own durable rates sum to {:.1} MB/s",
                    mb_per_sec(d)
                );
            }
            out.push_str(&line);
        }
    }

    out
}

/// The device counters, one device a line.
pub fn devices(doc: &RunDocument) -> String {
    devices_rows(doc, None)
}

/// A device's counters against the run's own bytes within 1 %, both ways:
/// nothing for the eye past `--rows` (no cache hit, no read-ahead).
fn as_asked(d: &DeviceCounters) -> bool {
    let near = |r: Option<f64>| r.is_none_or(|r| (r - 1.0).abs() <= 0.01);
    near(d.read_ratio) && near(d.write_ratio)
}

/// The run's Little's-law self-check, as one line.
/// `--bssplit`: each size's I/Os, share of the I/Os, bytes and mean
/// latency, a line each under a head; nothing with one size.
pub fn size_lines(sizes: &[crate::document::run::SizeDoc]) -> String {
    if sizes.is_empty() {
        return String::new();
    }
    let mut rows = vec![vec![
        "by size (--bssplit)".to_string(),
        String::new(),
        "I/Os".into(),
        "share".into(),
        "bytes".into(),
        "mean".into(),
    ]];
    for s in sizes {
        rows.push(vec![
            format!("  {}", fmt_size_arg(s.bs)),
            String::new(),
            s.ios.to_string(),
            format!("{:.1}%", s.share * 100.0),
            fmt_bytes(s.bytes),
            s.latency_mean_ns
                .map_or("-".into(), crate::base::units::fmt_latency_ns),
        ]);
    }
    layout(&rows)
}

/// `--cmdprio-bssplit`: each direction's I/Os at each command priority
/// (`CLASS/LEVEL/HINT`, fio's `clat prio` naming), their share of the
/// direction's I/Os and latency percentiles.
pub fn prio_lines(prios: &[crate::document::run::PrioDoc]) -> String {
    if prios.is_empty() {
        return String::new();
    }
    let mut rows = vec![vec![
        "by priority (--cmdprio-bssplit)".to_string(),
        "I/Os".into(),
        "share".into(),
        "mean".into(),
        "p50".into(),
        "p99".into(),
        "max".into(),
    ]];
    let lat = |p: &crate::document::run::PrioDoc,
               f: fn(&crate::document::run::PrioLatency) -> u64| {
        p.latency_ns.as_ref().map_or("-".into(), |l| {
            crate::base::units::fmt_latency_ns(f(l) as f64)
        })
    };
    for p in prios {
        rows.push(vec![
            format!(
                "  {} prio {}/{}/{}",
                p.direction, p.prioclass, p.prio, p.priohint
            ),
            p.ios.to_string(),
            format!("{:.1}%", p.share * 100.0),
            p.latency_ns
                .as_ref()
                .map_or("-".into(), |l| crate::base::units::fmt_latency_ns(l.mean)),
            lat(p, |l| l.p50),
            lat(p, |l| l.p99),
            lat(p, |l| l.max),
        ]);
    }
    layout(&rows)
}

/// Past this many zones the table gives the slowest and fastest only (the
/// JSON keeps each).
const ZONE_ROWS: usize = 64;

/// `--zones`: each zone's offset, I/Os, bytes and MB/s (the worker's time
/// on it), a line each under a head; with many, the slowest and fastest.
pub fn zone_lines(zones: &[crate::document::run::ZoneDoc], many_targets: bool) -> String {
    use crate::base::units::fmt_size_arg;
    if zones.is_empty() {
        return String::new();
    }
    let mbs = |z: &crate::document::run::ZoneDoc| {
        z.bytes_per_sec
            .map_or("-".into(), |b| format!("{:.1}", b / 1e6))
    };
    let at = |z: &crate::document::run::ZoneDoc| {
        if many_targets {
            format!("t{} {}", z.target, fmt_size_arg(z.offset))
        } else {
            fmt_size_arg(z.offset)
        }
    };
    if zones.len() > ZONE_ROWS {
        let rated = || zones.iter().filter(|z| z.bytes_per_sec.is_some());
        let key = |z: &&crate::document::run::ZoneDoc| z.bytes_per_sec.unwrap_or(0.0);
        let slow = rated().min_by(|a, b| key(a).total_cmp(&key(b)));
        let fast = rated().max_by(|a, b| key(a).total_cmp(&key(b)));
        return match (slow, fast) {
            (Some(s), Some(f)) => format!(
                "by zone (--zones): {} zones, slowest {} MB/s at {}, fastest {} MB/s at {}; each in the JSON's total.zones\n",
                zones.len(),
                mbs(s),
                at(s),
                mbs(f),
                at(f)
            ),
            _ => format!("by zone (--zones): {} zones, none completed an I/O in the window\n", zones.len()),
        };
    }
    let mut rows = vec![vec![
        "by zone (--zones)".to_string(),
        String::new(),
        "I/Os".into(),
        "bytes".into(),
        "MB/s".into(),
    ]];
    for z in zones {
        rows.push(vec![
            format!("  {}", at(z)),
            String::new(),
            z.ios.to_string(),
            fmt_bytes(z.bytes),
            mbs(z),
        ]);
    }
    layout(&rows)
}

fn in_flight_line(f: &crate::document::run::InFlightDoc) -> String {
    let verdict = match f.fits {
        Some(true) => "fits (Little's law)",
        Some(false) => "MORE than the depth allows: the latencies or the window are wrong",
        None => "not bounded: latency runs from the schedule's due times",
    };
    format!(
        "in flight: mean {:.2} I/Os (IOPS x mean latency) of the {} the depth allows (--iodepth x workers): {verdict}",
        f.mean, f.slots
    )
}

/// The one line of the devices past `--rows` that moved what was asked.
fn folded_line(folded: &[&DeviceCounters], rows: usize) -> String {
    let span = |v: Vec<u64>| {
        let (lo, hi) = (
            v.iter().min().copied().unwrap_or(0),
            v.iter().max().copied().unwrap_or(0),
        );
        if lo == hi {
            fmt_bytes(lo)
        } else {
            format!("{}-{}", fmt_bytes(lo), fmt_bytes(hi))
        }
    };
    let names: Vec<String> = folded
        .iter()
        .map(|f| show_text(&f.name).into_owned())
        .collect();
    let bytes = span(
        folded
            .iter()
            .map(|f| f.read_bytes + f.write_bytes)
            .collect(),
    );
    let reqs = span(
        folded
            .iter()
            .filter_map(|f| f.avg_read_request_bytes.or(f.avg_write_request_bytes))
            .map(|r| r as u64)
            .collect(),
    );
    format!(
        "  {} devices ({}) moved what the run asked of them (ratios within 1%): {bytes} each, avg request {reqs}; past --rows {rows}: --rows all lists each, the JSON holds every one\n",
        folded.len(),
        crate::base::warning::compact(&names),
    )
}

/// [`devices`] with at most `limit` device lines (`--rows`): past it, the
/// devices whose counters match the run's bytes within 1 % are one line
/// (how many, which, their range of bytes and requests), and those that
/// depart are listed, up to `limit`.
pub fn devices_rows(doc: &RunDocument, limit: Option<usize>) -> String {
    let mut out = String::new();
    // Each device once (several targets may sit on one), in target order.
    let mut devs: Vec<(&crate::document::run::TargetDoc, &DeviceCounters)> = Vec::new();
    for t in &doc.targets {
        if let Some(d) = &t.device {
            if !devs.iter().any(|(_, s)| s.name == d.name) {
                devs.push((t, d));
            }
        }
    }
    // Runs at once (a fio group) pool their counters: `app` is theirs.
    let at_once = doc
        .warnings
        .iter()
        .any(|w| matches!(w, crate::base::warning::Warning::RanAtOnce { .. }));
    if !devs.is_empty() {
        out.push_str(if at_once {
            "device counters (/sys/block/*/stat, whole run: ramp, window and flush), against the bytes of every run at once on each device:\n"
        } else {
            "device counters (/sys/block/*/stat, whole run: ramp, window and flush), against this run's own bytes:\n"
        });
        // Those without statistics are one line, however many they are.
        let silent: Vec<String> = devs
            .iter()
            .filter(|(_, d)| !d.stats)
            .map(|(_, d)| show_text(&d.name).into_owned())
            .collect();
        let counted = devs.iter().filter(|(_, d)| d.stats).count();
        let fold =
            |d: &DeviceCounters| limit.is_some_and(|n| counted > n) && d.stats && as_asked(d);
        let folded: Vec<&DeviceCounters> =
            devs.iter().map(|(_, d)| *d).filter(|d| fold(d)).collect();
        for (t, d) in devs {
            if fold(d) {
                if folded[0].name == d.name {
                    out.push_str(&folded_line(&folded, limit.unwrap_or(0)));
                }
                continue;
            }
            if !d.stats {
                if silent.len() == 1 {
                    let _ = writeln!(
                        out,
                        "  {:<8} keeps no I/O statistics (queue/iostats is 0, or its driver never counts, as brd does): no device figures, no ratios",
                        Shown(&d.name)
                    );
                } else if silent.first().map(String::as_str) == Some(&*show_text(&d.name)) {
                    let _ = writeln!(
                        out,
                        "  {} devices ({}) keep no I/O statistics (queue/iostats is 0, or their driver never counts, as brd does): no device figures, no ratios",
                        silent.len(),
                        crate::base::warning::compact(&silent)
                    );
                }
                continue;
            }
            let ratio = |r: Option<f64>| r.map_or("-".into(), |r| format!("{r:.3}"));
            let req = |r: Option<f64>| {
                r.map_or(String::new(), |r| {
                    format!(", avg request {}", fmt_bytes(r as u64))
                })
            };
            let _ = writeln!(
                out,
                "  {:<8} read {} (app {}, ratio {}{}), written {} (app {}, ratio {}{}), {} I/Os, util {:.0}%{}",
                Shown(&d.name),
                fmt_bytes(d.read_bytes),
                fmt_bytes(d.app_read_bytes),
                ratio(d.read_ratio),
                req(d.avg_read_request_bytes),
                fmt_bytes(d.write_bytes),
                fmt_bytes(d.app_write_bytes),
                ratio(d.write_ratio),
                req(d.avg_write_request_bytes),
                d.ios,
                d.util_pct,
                if at_once { String::new() } else if d.shared { format!(" (holds several targets of this run, {} among them: counts are for all)", Shown(&t.path)) } else { String::new() }
            );
            if !d.members.is_empty() {
                let each: Vec<String> = d
                    .members
                    .iter()
                    .map(|m| {
                        match (
                            m.stats,
                            m.avg_read_request_bytes.or(m.avg_write_request_bytes),
                        ) {
                            (true, Some(a)) => {
                                format!("{} {}", Shown(&m.name), fmt_bytes(a as u64))
                            }
                            (true, None) => format!("{} -", Shown(&m.name)),
                            (false, _) => format!("{} (no statistics)", Shown(&m.name)),
                        }
                    })
                    .collect();
                let _ = writeln!(
                    out,
                    "           members, average request: {}",
                    each.join(", ")
                );
            }
        }
    }
    out
}

/// Each worker's schedule (on `--rate`), its `--latency-target` search, hung I/O, I/O errors, what
/// verification found, and the warnings.
pub fn notes(doc: &RunDocument) -> String {
    let mut out = schedule_lines(doc);
    out.push_str(&super::resync::lines(&doc.resync));
    out.push_str(&super::groups::lines(doc));
    out.push_str(&super::latency_search::lines(doc));
    for w in doc.workers.iter().filter(|w| !w.hung_ios.is_empty()) {
        let ios: Vec<String> = w
            .hung_ios
            .iter()
            .map(|h| {
                format!(
                    "{} {}{} ({:.1}s)",
                    h.op,
                    h.offset,
                    on_member(&w.target, &h.member, h.member_offset),
                    h.seconds_in_flight
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "HUNG: worker w{} on {}: {} I/O(s) never completed (no completion for --hang-timeout {}): {}; the run gave up on them (a sync worker's thread was left in its call) and left their buffers to the kernel, the other workers went on",
            w.id,
            Shown(&w.target),
            w.hung_ios.len(),
            doc.config
                .hang_timeout_sec
                .map_or("?".to_string(), |s| format!("{s}s")),
            ios.join(", ")
        );
    }
    for w in doc.workers.iter().filter(|w| !w.ignored_errors.is_empty()) {
        let kinds: Vec<String> = w
            .ignored_errors
            .iter()
            .map(|c| format!("{} x{}", c.name, c.count))
            .collect();
        let _ = writeln!(
            out,
            "ignored: worker w{} on {}: {} I/O error(s) it went on after ({}), as --ignore-errors lets it",
            w.id,
            Shown(&w.target),
            w.ignored_errors.iter().map(|c| c.count).sum::<u64>(),
            kinds.join(", "),
        );
    }
    for w in doc.workers.iter().filter(|w| w.figures.errors > 0) {
        let kinds: Vec<String> = w
            .errors_by_errno
            .iter()
            .map(|c| format!("{} x{}", c.name, c.count))
            .collect();
        let offsets: Vec<String> = w
            .error_samples
            .iter()
            .map(|e| {
                format!(
                    "{} {}{}",
                    e.op,
                    e.offset,
                    on_member(&w.target, &e.member, e.member_offset)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "ERROR: worker w{} on {}: {} I/O error(s) ({}); first at {}{}",
            w.id,
            Shown(&w.target),
            w.figures.errors,
            kinds.join(", "),
            offsets.join(", "),
            if w.stopped_on_errors {
                format!(
                    "; it stopped at --max-errors {}, the other workers went on",
                    doc.config.max_errors
                )
            } else {
                String::new()
            }
        );
        if let Some(e) = w.error_samples.first() {
            // The message usually names the error already ("Input/output
            // error (os error 5)"); the errno is added only when it does not.
            if e.message.contains("os error") {
                let _ = writeln!(out, "       {}", Shown(&e.message));
            } else {
                let _ = writeln!(out, "       {} (errno {})", Shown(&e.message), e.errno);
            }
        }
    }
    for t in &doc.targets {
        let Some(v) = &t.verify else { continue };
        let _ = writeln!(
            out,
            "verify {}: {} blocks checked: {} good, {} corrupt, {} misplaced, {} stale, {} lost, {} unwritten{}",
            Shown(&t.path),
            v.blocks,
            v.good,
            v.corrupt,
            v.misplaced,
            v.stale,
            v.lost,
            v.unwritten,
            if v.stale_check == "complete" { String::new() } else { format!(" (stale check {})", v.stale_check) }
        );
        for b in &v.bad_blocks {
            let kind = match b.kind {
                crate::analysis::verify::BadKind::Corrupt => "corrupt",
                crate::analysis::verify::BadKind::Misplaced => "misplaced",
                crate::analysis::verify::BadKind::Stale => "stale",
                crate::analysis::verify::BadKind::Lost => "lost",
            };
            let _ = writeln!(
                out,
                "  BAD {kind} block at offset {}{}: {}",
                b.offset,
                on_member(&t.path, &b.member, b.member_offset),
                Shown(&b.detail)
            );
        }
        if v.bad() as usize > v.bad_blocks.len() {
            let _ = writeln!(
                out,
                "  ... {} more bad blocks (the JSON lists the first 100)",
                v.bad() as usize - v.bad_blocks.len()
            );
        }
    }
    for warn in &doc.warnings {
        // One line each: a warning read back from a document is any text.
        let _ = writeln!(out, "warning: {}", Shown(&warn.to_string()));
    }
    out
}

/// Where a volume offset lies, when the run's geometry said: " of
/// /dev/md0 = loop2 at 1048576" (after the offset).
fn on_member(volume: &str, member: &Option<String>, at: Option<u64>) -> String {
    match (member, at) {
        (Some(m), Some(at)) => format!(" of {} = {} at {at}", Shown(volume), Shown(m)),
        _ => String::new(),
    }
}

/// On a schedule: each worker's asked and delivered rate, how late its
/// I/Os went, and the service time (issue to completion) beside the
/// latency from the due time that the table shows.
fn schedule_lines(doc: &RunDocument) -> String {
    let mut out = String::new();
    if !doc.workers.iter().any(|w| w.rate.is_some()) {
        return out;
    }
    let lat = |l: &Option<LatencySummary>| {
        l.map_or("-".into(), |l| {
            format!(
                "p50 {} p99 {} p99.9 {}",
                fmt_latency_ns(l.p50 as f64),
                fmt_latency_ns(l.p99 as f64),
                fmt_latency_ns(l.p99_9 as f64)
            )
        })
    };
    out.push_str("schedule (latency above runs from each I/O's due time, and counts the unserved ones: due before the window's end, not done by it, at least up to the end; service time = issue to completion):\n");
    let unserved = |n: u64, oldest: u64| {
        if n > 0 {
            format!(
                "; {n} unserved (oldest due {} before the end)",
                fmt_latency_ns(oldest as f64)
            )
        } else {
            "; 0 unserved".into()
        }
    };
    let (mut total_unserved, mut total_oldest) = (0, 0);
    for w in &doc.workers {
        let Some(r) = &w.rate else { continue };
        total_unserved += r.unserved_ios;
        total_oldest = total_oldest.max(r.unserved_oldest_ns);
        let _ = writeln!(
            out,
            "  w{}: asked {:.0} IOPS ({:.1} MB/s), delivered {:.0} IOPS ({:.1} MB/s){}; from due time {}{}; issued at most {} after due, {} I/O(s) more than 1 ms late; service {}",
            w.id,
            r.target_iops,
            r.target_bytes_per_sec / 1e6,
            r.delivered_iops,
            r.delivered_bytes_per_sec / 1e6,
            if r.kept { "" } else { " BEHIND SCHEDULE" },
            lat(&w.figures.latency_ns),
            unserved(r.unserved_ios, r.unserved_oldest_ns),
            fmt_latency_ns(r.behind_max_ns as f64),
            r.late_ios,
            lat(&w.figures.service_latency_ns)
        );
    }
    let _ = writeln!(
        out,
        "  TOTAL: from due time {}{}; service {}",
        lat(&doc.total.figures.latency_ns),
        unserved(total_unserved, total_oldest),
        lat(&doc.total.figures.service_latency_ns)
    );
    out
}

/// `--steady`'s verdict in one line: the criterion, and whether and when
/// the run was steady, with the last judgement's figures.
fn steady_line(s: &crate::document::run::SteadyDoc) -> String {
    let (name, limit) = s.criterion.split_once(':').unwrap_or((&s.criterion, ""));
    let (figure, unit) = match name.trim_end_matches("_slope") {
        "iops" => ("IOPS", " IOPS"),
        "bw" => ("throughput", " B/s"),
        _ => ("mean latency", " ns"),
    };
    let pct = limit.ends_with('%');
    let judged = |v: f64| {
        if pct {
            format!("{v:.2}%")
        } else {
            format!("{v:.1}{unit}")
        }
    };
    let how = if name.ends_with("_slope") {
        "the least-squares slope of"
    } else {
        "the largest deviation from their mean of"
    };
    let head = format!(
        "steady state (--steady {}, over {}s of {}s figures, judged from {}s into the window):",
        Shown(&s.criterion),
        s.dur_sec,
        s.interval_sec,
        s.ramp_sec
    );
    match (s.attained, s.value, s.mean) {
        (true, Some(v), Some(m)) => format!(
            "{head} reached {:.1}s into the window, and the window ended there: {how} the {figure} figures was {} (mean {:.1}{unit})",
            s.at_sec.unwrap_or_default(),
            judged(v),
            m
        ),
        (false, Some(v), Some(m)) => format!(
            "{head} NOT reached in {} judgements: at the last, {how} the {figure} figures was {} (mean {:.1}{unit}), over the limit",
            s.judged,
            judged(v),
            m
        ),
        _ => format!("{head} NOT judged: the window ended before {}s of figures were in", s.dur_sec),
    }
}

/// `--sprandom`'s model in one line: the regions, the writes, the
/// over-provisioning, and the write amplification it expects.
pub fn spr_line(s: &crate::document::run::SprDoc) -> String {
    format!(
        "sprandom: {} as {} physical (over-provisioning {}), in {} regions of {} writes, validity {:.2} to {:.2}: {} writes; the model expects write amplification {} at steady state",
        fmt_bytes(s.logical_bytes),
        fmt_bytes(s.physical_bytes),
        crate::base::units::fmt_share(s.op),
        s.regions,
        s.region_writes,
        s.validity_min,
        s.validity_max,
        s.writes,
        // Over-provisioning near 0 sends the model's figure to infinity.
        if s.waf < 1e6 {
            format!("{:.2}", s.waf)
        } else {
            format!("{:.3e}", s.waf)
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // A per-direction split showed its write list's first size raw
    // (`4k/100,65536/100`).
    #[test]
    fn a_split_is_shown_in_units_each_list() {
        assert_eq!(split_shown("4096/50:12288/50"), "4k/50:12k/50");
        assert_eq!(split_shown("4096/100,65536/100"), "4k/100,64k/100");
    }
    use crate::report::fixtures::sample_doc;

    /// The "BAD corrupt block at offset 3145728" on md RAID0: the
    /// finding, the error sample and the hung I/O name the member.
    #[test]
    fn errors_findings_and_hung_ios_on_a_striped_volume_name_the_member() {
        use crate::device::topology::{level::Geometry, Device, Topology};
        let mut doc = sample_doc();
        let leaf = |n: &str| Device {
            name: n.into(),
            dev: String::new(),
            path: format!("/dev/{n}"),
            kind: "loop".into(),
            parent: None,
            md: None,
            dm: None,
            btrfs: None,
            leaf: None,
            queue: None,
            members: Vec::new(),
            geometry: None,
        };
        // md raid0 of 3 × 64k over loop2, loop3, loop4; data 1 MiB in.
        let mut g = Geometry::md("raid0", 3, Some(64 << 10), None);
        g.member_offsets = vec![1 << 20; 3];
        let mut root = leaf("md0");
        root.kind = "md".into();
        root.members = vec![leaf("loop2"), leaf("loop3"), leaf("loop4")];
        root.geometry = Some(g);
        doc.targets[0].kind = crate::device::TargetKind::Block;
        doc.targets[0].path = "/dev/md0".into();
        doc.targets[0].topology = Some(Topology {
            target: "/dev/md0".into(),
            resolved: "block device".into(),
            root,
        });
        doc.workers[1].target = "/dev/md0".into();
        doc.workers[1].error_samples[0].offset = 3145728;
        doc.workers[1].hung_ios = vec![crate::measure::worker::HungIo {
            op: "read".into(),
            offset: (64 << 10) + 512,
            bytes: 4096,
            seconds_in_flight: 2.0,
            member: None,
            member_offset: None,
        }];
        let mut v = crate::document::run::VerifyDoc::from_tallies(std::iter::empty());
        v.corrupt = 1;
        v.bad_blocks = vec![crate::analysis::verify::BadBlock {
            offset: 3145728,
            kind: crate::analysis::verify::BadKind::Corrupt,
            detail: "checksum mismatch".into(),
            member: None,
            member_offset: None,
        }];
        doc.targets[0].verify = Some(v);
        doc.name_members();
        let e = &doc.workers[1].error_samples[0];
        // Chunk 48: member 48 % 3 = 0 (loop2), row 16 = 1 MiB, + 1 MiB.
        assert_eq!(
            (e.member.as_deref(), e.member_offset),
            (Some("loop2"), Some(2 << 20))
        );
        let h = &doc.workers[1].hung_ios[0];
        assert_eq!(
            (h.member.as_deref(), h.member_offset),
            (Some("loop3"), Some((1 << 20) + 512))
        );
        let text = notes(&doc);
        assert!(
            text.contains("BAD corrupt block at offset 3145728 of /dev/md0 = loop2 at 2097152: checksum mismatch"),
            "{text}"
        );
        assert!(
            text.contains("first at read 3145728 of /dev/md0 = loop2 at 2097152"),
            "{text}"
        );
        assert!(
            text.contains("read 66048 of /dev/md0 = loop3 at 1049088 (2.0s)"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::to_value(&doc.targets[0].verify).unwrap();
        assert_eq!(json["bad_blocks"][0]["member"], "loop2");
        assert_eq!(json["bad_blocks"][0]["member_offset"], 2 << 20);
    }

    #[test]
    fn table_has_worker_target_and_total_rows() {
        let doc = sample_doc();
        assert_eq!(doc.total.figures.bytes, 4096 * 3000);
        assert!((doc.total.figures.bytes_per_sec - 4096.0 * 3000.0 / 2.0).abs() < 1e-6);
        let text = render(&doc);
        assert!(text.contains("\nw0 "), "{text}");
        assert!(text.contains("\nw1 "));
        assert!(text.contains("\ntarget "));
        assert!(text.contains("\nTOTAL "));
        assert!(text.contains("ERROR: worker w1"));
        assert!(text.contains("MB/s = 10^6 B/s"));
        // Each row's figures, counted from the right (target and cpu may be
        // empty): MB/s, MiB/s, IOPS, 5 latencies, usr%, sys%, errors.
        let figures = |label: &str| -> [String; 4] {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("{label} ")))
                .unwrap_or_else(|| panic!("no {label} row: {text}"));
            let cols: Vec<&str> = line.split_whitespace().collect();
            let n = cols.len();
            [n - 11, n - 10, n - 9, n - 1].map(|i| cols[i].to_string())
        };
        let usr_sys = |label: &str| -> (String, String) {
            let line = text.lines().find(|l| l.starts_with(label)).unwrap();
            let cols: Vec<&str> = line.split_whitespace().collect();
            let n = cols.len();
            (cols[n - 3].to_string(), cols[n - 2].to_string())
        };
        // w0: 1000 x 4096 B over 2 s = 2.048 MB/s = 1.95 MiB/s, 500 IOPS.
        assert_eq!(figures("w0"), ["2.0", "2.0", "500", "0"], "{text}");
        // w1: twice that, and its one error.
        assert_eq!(figures("w1"), ["4.1", "3.9", "1000", "1"], "{text}");
        // TOTAL: 3000 x 4096 B over 2 s = 6.144 MB/s = 5.86 MiB/s, 1500 IOPS.
        assert_eq!(figures("TOTAL"), ["6.1", "5.9", "1500", "1"], "{text}");
        // CPU: 0.1 s user and 0.5 s system per worker over 2 s; summed in TOTAL.
        assert_eq!(usr_sys("w0"), ("5.0".into(), "25.0".into()), "{text}");
        assert_eq!(usr_sys("TOTAL"), ("10.0".into(), "50.0".into()), "{text}");
    }

    /// Regression (issue 23, a run over 256 loop devices): the device
    /// counters printed one line per device, 256 of them, past --rows.
    #[test]
    fn past_rows_devices_that_moved_what_was_asked_are_one_line() {
        let mut doc = sample_doc();
        let t0 = doc.targets[0].clone();
        doc.targets = (0..40)
            .map(|i| {
                let mut t = t0.clone();
                t.path = format!("/dev/loop{i}");
                t.device = Some(DeviceCounters {
                    name: format!("loop{i}"),
                    read_bytes: 20 << 20,
                    write_bytes: 0,
                    read_ios: 320,
                    write_ios: 0,
                    ios: 320,
                    util_pct: 95.0,
                    span_seconds: 3.0,
                    app_read_bytes: if i == 7 { 10 << 20 } else { 20 << 20 },
                    app_write_bytes: 0,
                    // loop7 read twice what the run asked: read-ahead.
                    read_ratio: Some(if i == 7 { 2.0 } else { 1.0 }),
                    write_ratio: None,
                    shared: false,
                    window_write_bytes: None,
                    stats: true,
                    avg_read_request_bytes: Some(65536.0),
                    avg_write_request_bytes: None,
                    read_merges: 0,
                    write_merges: 0,
                    members: Vec::new(),
                });
                t
            })
            .collect();
        let folded = devices_rows(&doc, Some(32));
        let lines: Vec<&str> = folded.lines().collect();
        assert_eq!(lines.len(), 3, "{folded}");
        assert!(
            lines[2].starts_with("  loop7 "),
            "the one that departs is listed: {folded}"
        );
        assert!(
            lines[1].starts_with("  39 devices (loop0-loop6, loop8-loop39) ")
                && lines[1].contains("20.0 MiB each, avg request 64.0 KiB; past --rows 32"),
            "{folded}"
        );
        // At or under the limit, and with --rows all, a line each.
        for t in [devices_rows(&doc, Some(40)), devices(&doc)] {
            assert_eq!(t.lines().count(), 41, "{t}");
        }
    }

    #[test]
    fn past_rows_the_table_shows_quantiles_extremes_and_the_total() {
        let mut doc = sample_doc();
        let w0 = doc.workers[0].clone();
        doc.workers = (0..40)
            .map(|i| {
                let mut w = w0.clone();
                w.id = i;
                // w17 the slowest, w3 the fastest.
                w.figures.bytes_per_sec = match i {
                    17 => 1e6,
                    3 => 9e9,
                    _ => 1e8 + i as f64 * 1e6,
                };
                w
            })
            .collect();
        let text = render_rows(&doc, Some(32));
        let labels: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("  "))
            .skip(1)
            .map(|l| l.split("  ").next().unwrap_or(""))
            .take_while(|l| !l.is_empty() && !l.contains("workers, past"))
            .collect();
        assert_eq!(
            labels,
            [
                "min", "p10", "median", "p90", "max", "slow w17", "slow w0", "slow w1", "fast w38",
                "fast w39", "fast w3", "target", "TOTAL"
            ],
            "{text}"
        );
        let mbs = |label: &str| {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("{label} ")))
                .unwrap();
            let cols: Vec<&str> = line.split_whitespace().collect();
            cols[cols.len() - 11].to_string()
        };
        assert_eq!(mbs("min"), "1.0", "{text}");
        assert_eq!(mbs("max"), "9000.0", "{text}");
        assert!(text.contains("40 workers, past --rows 32:"), "{text}");
        // At or under the limit, and with --rows all, every row.
        for t in [render_rows(&doc, Some(40)), render_rows(&doc, None)] {
            assert_eq!(
                t.lines()
                    .filter(
                        |l| l.starts_with('w') && l[1..].starts_with(|c: char| c.is_ascii_digit())
                    )
                    .count(),
                40,
                "{t}"
            );
            assert!(!t.contains("past --rows"));
        }
    }
}
