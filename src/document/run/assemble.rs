//! A finished run shaped into its document: worker outcomes merged into
//! per-target and total figures once, after the run; durable bytes from the
//! device counters; and the warnings that say what the figures mean.

use std::collections::HashMap;
use std::ops::AddAssign;

use super::*;
use crate::analysis::histogram::LatencyHistogram;
use crate::measure::config::{RunConfig, RwMode};
use crate::measure::coordinator::Execution;
use crate::measure::layout::Plan;
use crate::measure::worker::{Ending, VerifyMode, WorkerOutcome};

/// Counters summed over any set of workers.
#[derive(Debug, Clone, Default)]
pub struct Aggregate {
    pub bytes: u64,
    pub write_bytes: u64,
    pub ios: u64,
    pub errors: u64,
    pub short_ios: u64,
    pub cpu_usr_sec: f64,
    pub cpu_sys_sec: f64,
    pub hist: LatencyHistogram,
    /// On a schedule: issue to completion (`hist` runs from the due time).
    pub service_hist: Option<LatencyHistogram>,
    /// A mixed pattern: each direction's I/Os and latencies.
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_hist: Option<LatencyHistogram>,
    pub write_hist: Option<LatencyHistogram>,
}

impl AddAssign<&WorkerOutcome> for Aggregate {
    fn add_assign(&mut self, w: &WorkerOutcome) {
        self.bytes += w.bytes();
        self.write_bytes += w.write_bytes;
        self.ios += w.ios();
        self.errors += w.errors;
        self.short_ios += w.short_ios;
        self.cpu_usr_sec += w.cpu_usr_sec;
        self.cpu_sys_sec += w.cpu_sys_sec;
        self.hist.merge(&w.hist);
        self.read_ios += w.read_ios;
        self.write_ios += w.write_ios;
        for (mine, theirs) in [
            (&mut self.read_hist, &w.read_hist),
            (&mut self.write_hist, &w.write_hist),
        ] {
            if let Some(h) = theirs {
                mine.get_or_insert_with(LatencyHistogram::new).merge(h);
            }
        }
        if let Some(h) = &w.service_hist {
            self.service_hist
                .get_or_insert_with(LatencyHistogram::new)
                .merge(h);
        }
    }
}

/// A worker's own active time, as (start, end) in ns since the epoch: from
/// its first issue (or the window's opening, if later) to its last
/// completion when it stopped on its limit (`--io-limit`, `--passes`);
/// the whole window when the deadline (or errors) stopped it. A member that
/// finishes first is not divided by the slowest one's window.
fn active_span(out: &WorkerOutcome, open_ns: u64, close_ns: u64) -> (u64, u64) {
    if out.ended_by == Ending::Limit && out.last_completion_ns > 0 {
        let end = out.last_completion_ns.clamp(open_ns, close_ns);
        (out.first_issue_ns.clamp(open_ns, end), end)
    } else {
        (open_ns, close_ns)
    }
}

/// The window's opening and closing, in ns since the epoch.
fn window_ns(cfg: &RunConfig, exec: &Execution) -> (u64, u64) {
    let open = cfg.ramp.as_nanos() as u64;
    (open, open + (exec.window_sec * 1e9).round() as u64)
}

/// The seconds of a span of ns; the window's own seconds when it is the window.
fn span_sec((start, end): (u64, u64), window: (u64, u64), window_sec: f64) -> f64 {
    if (start, end) == window {
        window_sec
    } else {
        end.saturating_sub(start) as f64 / 1e9
    }
}

/// `count / seconds`, or 0 for an empty window.
pub fn rate(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// Reads and writes apart over `secs`, when both histograms are there (a
/// mixed pattern); `(bytes, ios)` of each direction.
fn by_direction(
    reads: (u64, u64),
    writes: (u64, u64),
    read_hist: Option<&LatencyHistogram>,
    write_hist: Option<&LatencyHistogram>,
    secs: f64,
) -> Option<DirectionsDoc> {
    let (rh, wh) = (read_hist?, write_hist?);
    let one = |(bytes, ios): (u64, u64), h: &LatencyHistogram| DirectionDoc {
        bytes,
        ios,
        bytes_per_sec: rate(bytes, secs),
        iops: rate(ios, secs),
        latency_ns: h.summary(),
        histogram: h.to_base64(),
    };
    let all = reads.1 + writes.1;
    Some(DirectionsDoc {
        read_pct: if all > 0 {
            reads.1 as f64 * 100.0 / all as f64
        } else {
            0.0
        },
        reads: one(reads, rh),
        writes: one(writes, wh),
    })
}

impl Aggregate {
    /// Reads and writes apart over `secs` (a mixed pattern only).
    pub fn by_direction(&self, secs: f64) -> Option<DirectionsDoc> {
        by_direction(
            (self.bytes - self.write_bytes, self.read_ios),
            (self.write_bytes, self.write_ios),
            self.read_hist.as_ref(),
            self.write_hist.as_ref(),
            secs,
        )
    }

    pub fn bytes_per_sec(&self, seconds: f64) -> f64 {
        rate(self.bytes, seconds)
    }

    pub fn iops(&self, seconds: f64) -> f64 {
        rate(self.ios, seconds)
    }

    /// The flush of buffered writes: `durable` is (bytes, basis), see [`FlushDoc`].
    pub fn flush(
        &self,
        window: f64,
        flush_sec: Option<f64>,
        durable: (u64, &str),
    ) -> Option<FlushDoc> {
        flush_sec.map(|f| FlushDoc {
            seconds: f,
            durable_bytes_per_sec: rate(durable.0, window + f),
            durable_bytes: durable.0,
            durable_basis: durable.1.into(),
        })
    }
}

impl RunDocument {
    /// Shapes what a run measured into the document.
    pub fn assemble(
        cfg: &RunConfig,
        plan: &Plan,
        exec: &Execution,
        mut warnings: Vec<String>,
    ) -> RunDocument {
        let secs = exec.window_sec;
        let mut total = Aggregate::default();
        let mut per_target: Vec<Aggregate> = vec![Aggregate::default(); plan.targets.len()];
        let mut workers = Vec::with_capacity(plan.workers.len());
        let window = window_ns(cfg, exec);
        // Each target's active span: its workers' spans joined.
        let mut target_spans: Vec<Option<(u64, u64)>> = vec![None; plan.targets.len()];
        // Each target's workers' eviction seconds (a buffered read's wrap-arounds), summed.
        let mut target_evict = vec![0.0f64; plan.targets.len()];
        for (spec, out) in plan.workers.iter().zip(&exec.outcomes) {
            per_target[spec.target_index] += out;
            total += out;
            let span = active_span(out, window.0, window.1);
            let t = &mut target_spans[spec.target_index];
            *t = Some(t.map_or(span, |(a, b)| (a.min(span.0), b.max(span.1))));
            let evict = out.cache_eviction_ns as f64 / 1e9;
            target_evict[spec.target_index] += evict;
            let own = (span_sec(span, window, secs) - evict).max(0.0);
            workers.push(worker_doc(cfg, plan, spec, out, own));
        }
        for w in &workers {
            let Some(r) = w.rate.as_ref().filter(|r| !r.kept) else {
                continue;
            };
            // Every figure here is latency from the due time (the
            // histogram's, unserved I/Os included) or the issue lag, which
            // is never above it: the sentence cannot contradict the table.
            let ns = |v: u64| crate::base::units::fmt_latency_ns(v as f64);
            let (p99, max) = w.latency_ns.map_or((0, 0), |l| (l.p99, l.max));
            let unserved = if r.unserved_ios > 0 {
                format!(
                    "{} I/O(s) due in the window not done by its end (the oldest due {} before it); ",
                    r.unserved_ios,
                    ns(r.unserved_oldest_ns)
                )
            } else {
                String::new()
            };
            warnings.push(format!(
                "worker w{} on {} could not keep its schedule: asked {:.0} IOPS ({:.1} MB/s), delivered {:.0} IOPS ({:.1} MB/s); {unserved}latency from the due time{}: p99 {}, max {}; issued up to {} after due ({} more than 1 ms late)",
                w.id,
                w.target,
                r.target_iops,
                r.target_bytes_per_sec / 1e6,
                r.delivered_iops,
                r.delivered_bytes_per_sec / 1e6,
                if r.unserved_ios > 0 { ", those counted at least to the window's end" } else { "" },
                ns(p99),
                ns(max),
                ns(r.behind_max_ns),
                r.late_ios
            ));
        }
        if !exec.flush_abandoned.is_empty() {
            warnings.push(format!(
                "interrupted during the final fsync: stopped waiting for {} (the fsync goes on in the kernel); the flush is incomplete and no durable figure is given",
                exec.flush_abandoned.join(", ")
            ));
        }
        let durable = durable_bytes(&per_target, exec);
        let total_durable = (
            durable.iter().map(|d| d.0).sum::<u64>(),
            if durable.iter().all(|d| d.1 == "device") {
                "device"
            } else if durable.iter().all(|d| d.1 == "application") {
                "application"
            } else {
                "device and application"
            },
        );
        let flush_errors = exec
            .flush
            .iter()
            .filter(|f| matches!(f, Some(Err(_))))
            .count() as u64;
        let mut max_flush: Option<f64> = None;
        let targets: Vec<TargetDoc> = plan
            .targets
            .iter()
            .zip(per_target)
            .enumerate()
            .map(|(i, (_, agg))| {
                let flush_sec = match &exec.flush[i] {
                    Some(Ok(s)) => Some(*s),
                    Some(Err(e)) => {
                        warnings.push(e.clone());
                        None
                    }
                    None => None,
                };
                if let Some(f) = flush_sec {
                    max_flush = Some(max_flush.map_or(f, |m: f64| m.max(f)));
                }
                // Less its workers' mean eviction time: the target's own
                // time when each evicts as often as the others.
                let workers = plan.workers.iter().filter(|w| w.target_index == i).count();
                let own = target_spans[i].map_or(secs, |sp| span_sec(sp, window, secs))
                    - target_evict[i] / workers.max(1) as f64;
                let own = own.max(0.0);
                target_doc(
                    plan,
                    exec,
                    i,
                    own,
                    &agg,
                    agg.flush(secs, flush_sec, durable[i]),
                )
            })
            .collect();
        warnings.extend(what_the_figures_mean(cfg, plan, exec, &targets, &total));
        let live = exec.live.as_ref().map(|l| live_doc(l, &mut warnings));
        let paths: Vec<String> = plan
            .targets
            .iter()
            .map(|t| t.path.display().to_string())
            .collect();
        RunDocument {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo::this(),
            host: HostInfo::current(),
            config: cfg.doc(&paths),
            interrupted: exec.interrupted,
            window: WindowDoc {
                ramp_sec: cfg.ramp.as_secs_f64(),
                seconds: secs,
                start_unix_sec: exec.start_unix_sec,
                end_unix_sec: exec.end_unix_sec,
                rule: if cfg.rate.is_some() {
                    WINDOW_RULE_SCHEDULED
                } else {
                    WINDOW_RULE
                }
                .into(),
                latency_from: if cfg.rate.is_some() { "due" } else { "issue" }.into(),
                ended_by: exec.ended_by.into(),
            },
            workers,
            targets,
            total: TotalDoc {
                bytes: total.bytes,
                ios: total.ios,
                errors: total.errors,
                short_ios: total.short_ios,
                seconds: secs,
                bytes_per_sec: total.bytes_per_sec(secs),
                iops: total.iops(secs),
                latency_ns: total.hist.summary(),
                service_latency_ns: total.service_hist.as_ref().and_then(|h| h.summary()),
                by_direction: total.by_direction(secs),
                cpu_usr_sec: total.cpu_usr_sec,
                cpu_sys_sec: total.cpu_sys_sec,
                flush: total.flush(
                    secs,
                    max_flush.filter(|_| exec.flush_abandoned.is_empty()),
                    total_durable,
                ),
                flush_errors,
                flush_incomplete: !exec.flush_abandoned.is_empty(),
                histogram: total.hist.to_base64(),
                service_histogram: total.service_hist.as_ref().map(|h| h.to_base64()),
                cache_evictions: exec.outcomes.iter().map(|o| o.cache_evictions).sum(),
                cache_eviction_sec: exec
                    .outcomes
                    .iter()
                    .map(|o| o.cache_eviction_ns as f64 / 1e9)
                    .sum(),
            },
            warnings,
            cache: None,
            stripe_model: plan
                .workers
                .iter()
                .find_map(|w| w.stripe)
                .map(|st| StripeModelDoc {
                    figures: "per_member_upper_bound".into(),
                    chunk: st.map.chunk,
                    logical_bs: st.logical_bs,
                    pieces_per_request: st.logical_bs.div_ceil(st.map.chunk),
                    note: STRIPE_MODEL_NOTE.into(),
                }),
            live,
        }
    }
}

/// The live stream's account, and a warning for each thing it lost.
fn live_doc(l: &crate::measure::live::LiveStats, warnings: &mut Vec<String>) -> super::LiveDoc {
    // Lines lost to a failed stream (a full disk) are said by `trouble`:
    // no reader fell behind for them.
    let slow = l.lines_dropped.saturating_sub(l.lines_failed);
    if slow > 0 {
        warnings.push(format!(
            "the --live stream's reader fell behind: {} of {} lines were dropped (the run did not wait for it)",
            slow,
            l.lines_dropped + l.lines_written
        ));
    }
    if l.seconds_lost > 0 || l.histograms_lost > 0 {
        warnings.push(format!(
            "the live collector fell behind the workers: {} worker second(s) lost, {} without percentiles",
            l.seconds_lost, l.histograms_lost
        ));
    }
    if let Some(t) = &l.trouble {
        warnings.push(t.clone());
    }
    super::LiveDoc {
        path: l.shown.path.clone(),
        format: l.shown.format.clone(),
        metrics: l.shown.metrics.clone(),
        seconds: l.seconds,
        lines_written: l.lines_written,
        lines_dropped: l.lines_dropped,
        stalled_lines: l.stalled_lines,
        late_lines: l.late_lines,
        seconds_lost: l.seconds_lost,
        histograms_lost: l.histograms_lost,
    }
}

/// One worker's figures over its own active time `secs` (see [`active_span`]).
fn worker_doc(
    cfg: &RunConfig,
    plan: &Plan,
    spec: &crate::measure::worker::WorkerSpec,
    out: &WorkerOutcome,
    secs: f64,
) -> WorkerDoc {
    let rate_doc = out.schedule.map(|s| {
        let target_iops = 1e9 / s.period_ns;
        let delivered_iops = rate(out.ios(), secs);
        // A worker that stopped on its own (--io-limit, errors) owed no more.
        let expected = target_iops * secs;
        let missing = expected - out.ios() as f64;
        let kept = out.ended_by != Ending::Deadline
            || missing <= (0.05 * expected).max(cfg.iodepth as f64 + 1.0);
        ScheduleDoc {
            target_iops,
            target_bytes_per_sec: target_iops * spec.bs as f64,
            delivered_iops,
            delivered_bytes_per_sec: rate(out.bytes(), secs),
            behind_max_ns: s.behind_max_ns,
            late_ios: s.late_ios,
            unserved_ios: s.unserved_ios,
            unserved_oldest_ns: s.unserved_oldest_ns,
            kept,
        }
    });
    WorkerDoc {
        id: spec.id,
        target: plan.targets[spec.target_index].path.display().to_string(),
        target_index: spec.target_index,
        job: spec.job,
        cpu: out.cpu,
        pinned_cpu: spec.cpu,
        region: spec.region,
        bs: spec.bs,
        bytes: out.bytes(),
        ios: out.ios(),
        read_bytes: out.read_bytes,
        write_bytes: out.write_bytes,
        read_ios: out.read_ios,
        write_ios: out.write_ios,
        errors: out.errors,
        errors_by_errno: out.errors_by_errno.clone(),
        error_samples: out.error_samples.clone(),
        stopped_on_errors: out.stopped_on_errors,
        ended_by: out.ended_by,
        hung_ios: out.hung_ios.clone(),
        short_ios: out.short_ios,
        seconds: secs,
        bytes_per_sec: rate(out.bytes(), secs),
        iops: rate(out.ios(), secs),
        latency_ns: out.hist.summary(),
        service_latency_ns: out.service_hist.as_ref().and_then(|h| h.summary()),
        by_direction: by_direction(
            (out.read_bytes, out.read_ios),
            (out.write_bytes, out.write_ios),
            out.read_hist.as_ref(),
            out.write_hist.as_ref(),
            secs,
        ),
        rate: rate_doc,
        cpu_usr_sec: out.cpu_usr_sec,
        cpu_sys_sec: out.cpu_sys_sec,
        intervals: out.intervals.clone(),
        engine_path: out.engine_path.clone(),
        buffer: out.buffer.clone(),
        histogram: out.hist.to_base64(),
        service_histogram: out.service_hist.as_ref().map(|h| h.to_base64()),
        cache_evictions: out.cache_evictions,
        cache_eviction_sec: out.cache_eviction_ns as f64 / 1e9,
    }
}

/// Durable bytes of each target and where the figure comes from: its
/// device's counters (split between the targets sharing a device in
/// proportion to their window writes, and never more than they wrote), else
/// its own bytes.
fn durable_bytes(per_target: &[Aggregate], exec: &Execution) -> Vec<(u64, &'static str)> {
    let mut written_on: HashMap<&str, u64> = HashMap::new();
    for (i, agg) in per_target.iter().enumerate() {
        if let Some(d) = &exec.devices[i] {
            *written_on.entry(d.name.as_str()).or_default() += agg.write_bytes;
        }
    }
    per_target
        .iter()
        .enumerate()
        .map(|(i, agg)| {
            match exec.devices[i].as_ref().and_then(|d| {
                let dev = d.window_write_bytes?;
                let all = written_on.get(d.name.as_str()).copied().unwrap_or(0);
                Some(if all == 0 {
                    0
                } else {
                    (dev as f64 * agg.write_bytes as f64 / all as f64) as u64
                })
            }) {
                Some(share) => (share.min(agg.write_bytes), "device"),
                None => (agg.bytes, "application"),
            }
        })
        .collect()
}

/// One target's figures: its workers merged, its flush, its device's
/// counters and what verification found on it.
/// Its rates run over `secs`, its workers' joined active time.
fn target_doc(
    plan: &Plan,
    exec: &Execution,
    i: usize,
    secs: f64,
    agg: &Aggregate,
    flush: Option<FlushDoc>,
) -> TargetDoc {
    let t = &plan.targets[i];
    let on_target = || {
        plan.workers
            .iter()
            .zip(&exec.outcomes)
            .filter(move |(w, _)| w.target_index == i)
    };
    TargetDoc {
        index: i,
        path: t.path.display().to_string(),
        kind: t.kind,
        logical_block_size: t.logical_block_size,
        size: t.size,
        read_ahead_kb: t.read_ahead_kb,
        bs: t.bs,
        region: t.region,
        workers: on_target().count(),
        bytes: agg.bytes,
        ios: agg.ios,
        errors: agg.errors,
        failed: on_target().any(|(_, o)| o.stopped_on_errors || !o.hung_ios.is_empty()),
        short_ios: agg.short_ios,
        seconds: secs,
        bytes_per_sec: agg.bytes_per_sec(secs),
        iops: agg.iops(secs),
        latency_ns: agg.hist.summary(),
        service_latency_ns: agg.service_hist.as_ref().and_then(|h| h.summary()),
        by_direction: agg.by_direction(secs),
        cpu_usr_sec: agg.cpu_usr_sec,
        cpu_sys_sec: agg.cpu_sys_sec,
        flush,
        device: exec.devices[i].clone(),
        verify: on_target()
            .any(|(w, _)| w.verify == VerifyMode::Read)
            .then(|| VerifyDoc::from_tallies(on_target().map(|(_, o)| &o.verify))),
        // Read by the command before the run (the document does no I/O).
        topology: None,
        histogram: agg.hist.to_base64(),
        service_histogram: agg.service_hist.as_ref().map(|h| h.to_base64()),
    }
}

/// The warnings that say what the figures mean: a page cache that served
/// the reads or kept the writes, blocks verification could not read, a
/// window too short, a limit not reached, short I/Os, clamped latencies.
fn what_the_figures_mean(
    cfg: &RunConfig,
    plan: &Plan,
    exec: &Execution,
    targets: &[TargetDoc],
    total: &Aggregate,
) -> Vec<String> {
    let secs = exec.window_sec;
    let mut warnings = Vec::new();
    if !cfg.direct && !cfg.cached {
        for t in targets {
            if let Some(r) = t
                .device
                .as_ref()
                .and_then(|d| d.read_ratio)
                .filter(|&r| r < 0.5)
            {
                warnings.push(format!(
                    "{}: the device delivered {:.1}% of the bytes read: the page cache served the rest, so these figures measure memory, not the device",
                    t.path,
                    r * 100.0
                ));
            }
        }
    }
    warnings.extend(undelivered_direct_reads(cfg, targets));
    if !cfg.direct && cfg.rw.writes() {
        for t in targets {
            if let Some(r) = t
                .device
                .as_ref()
                .and_then(|d| d.write_ratio)
                .filter(|&r| r < 0.5)
            {
                warnings.push(format!(
                    "{}: the device received {:.1}% of the bytes written: the page cache merged rewrites or still holds the rest, so 'written to cache' MB/s measures memory; durable MB/s counts only what reached the device",
                    t.path,
                    r * 100.0
                ));
            }
        }
    }
    for t in targets {
        if let Some(v) = t.verify.as_ref().filter(|v| v.unwritten > 0) {
            warnings.push(format!(
                "{}: {} of {} blocks carry no stripebench header: never written with --verify (or with another --bs, --offset or --size)",
                t.path, v.unwritten, v.blocks
            ));
        }
    }
    if matches!(exec.ended_by, "limit" | "passes")
        && secs < crate::measure::config::MIN_DURATION.as_secs_f64()
    {
        warnings.push(format!(
            "the window lasted {} (every worker reached its limit that soon): rates over a window this short are noise; give a larger --io-limit or more --passes",
            crate::base::units::fmt_latency_ns(secs * 1e9)
        ));
    }
    if exec.ended_by == "duration" {
        let most = exec
            .outcomes
            .iter()
            .map(WorkerOutcome::bytes)
            .max()
            .unwrap_or(0);
        let d = humantime::format_duration(cfg.duration);
        if let Some(limit) = cfg.io_limit {
            warnings.push(format!(
                "--io-limit {} was not reached: the --duration ({d}) ended the run first, after {} at most per worker; raise --duration to reach the limit",
                crate::base::units::fmt_bytes(limit),
                crate::base::units::fmt_bytes(most)
            ));
        } else if let Some(n) = cfg.passes {
            let done = plan
                .workers
                .iter()
                .zip(&exec.outcomes)
                .filter_map(|(w, o)| {
                    w.io_limit
                        .filter(|&l| l > 0)
                        .map(|l| o.bytes() as f64 / l as f64)
                })
                .fold(f64::INFINITY, f64::min);
            warnings.push(if cfg.verify && !cfg.rw.writes() {
                format!(
                    "verify: the --duration ({d}) ended the pass before every block was read: the slowest worker checked {:.1}% of its slice",
                    done.min(1.0) * 100.0
                )
            } else {
                format!(
                    "--passes {n} were not completed: the --duration ({d}) ended the run first, with the slowest worker {:.1}% through; raise --duration (or leave it out)",
                    done.min(1.0) * 100.0
                )
            });
        }
    }
    if exec.interrupted && secs == 0.0 {
        warnings.push("interrupted before the window opened: nothing was measured".into());
    }
    if total.short_ios > 0 {
        warnings.push(format!(
            "{} short I/Os (fewer bytes than requested); their bytes are counted as moved",
            total.short_ios
        ));
    }
    if total.hist.clamped > 0 {
        warnings.push(format!(
            "{} latencies above one hour were recorded as one hour",
            total.hist.clamped
        ));
    }
    warnings
}

/// An O_DIRECT read bypasses the page cache, so its bytes should all reach
/// the device: when the device's counters show far less (under half), the
/// figures are not the device's, whatever the cause. Said after every run,
/// beside the causes that make it so.
fn undelivered_direct_reads(cfg: &RunConfig, targets: &[TargetDoc]) -> Vec<String> {
    if !cfg.direct || matches!(cfg.rw, RwMode::Write | RwMode::Randwrite) {
        return Vec::new();
    }
    targets
        .iter()
        .filter_map(|t| {
            let d = t.device.as_ref()?;
            let r = d.read_ratio.filter(|&r| r < 0.5)?;
            Some(format!(
                "{}: O_DIRECT reads of {} reached {} as only {} ({:.1}%): the rest never came from the device, so these figures are not its speed. Likely causes: holes or unwritten extents in a file (read as zeros without I/O), a file system that keeps the data in memory, or a cache in front of the device",
                t.path,
                crate::base::units::fmt_bytes(d.app_read_bytes),
                d.name,
                crate::base::units::fmt_bytes(d.read_bytes),
                r * 100.0
            ))
        })
        .collect()
}
