//! A finished run shaped into its document: worker outcomes merged into
//! per-target and total figures once, after the run; durable bytes from the
//! device counters; and the warnings that say what the figures mean.

use std::collections::HashMap;
use std::ops::AddAssign;

use super::*;
use crate::analysis::histogram::LatencyHistogram;
use crate::base::warning::Warning;
use crate::measure::config::RunConfig;
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

/// What an entry's [`Figures`] are computed from: one worker's outcome, or
/// an [`Aggregate`] of several; borrowed, so no histogram is copied.
struct Tally<'a> {
    bytes: u64,
    ios: u64,
    errors: u64,
    short_ios: u64,
    cpu_usr_sec: f64,
    cpu_sys_sec: f64,
    /// (bytes, ios) of each direction.
    reads: (u64, u64),
    writes: (u64, u64),
    hist: &'a LatencyHistogram,
    service_hist: Option<&'a LatencyHistogram>,
    read_hist: Option<&'a LatencyHistogram>,
    write_hist: Option<&'a LatencyHistogram>,
}

impl Tally<'_> {
    fn of(w: &WorkerOutcome) -> Tally<'_> {
        Tally {
            bytes: w.bytes(),
            ios: w.ios(),
            errors: w.errors,
            short_ios: w.short_ios,
            cpu_usr_sec: w.cpu_usr_sec,
            cpu_sys_sec: w.cpu_sys_sec,
            reads: (w.read_bytes, w.read_ios),
            writes: (w.write_bytes, w.write_ios),
            hist: &w.hist,
            service_hist: w.service_hist.as_ref(),
            read_hist: w.read_hist.as_ref(),
            write_hist: w.write_hist.as_ref(),
        }
    }

    /// The figures over `secs`: rates from the counts, percentiles and
    /// histograms from the latencies.
    fn figures(&self, secs: f64) -> Figures {
        Figures {
            bytes: self.bytes,
            ios: self.ios,
            errors: self.errors,
            short_ios: self.short_ios,
            seconds: secs,
            bytes_per_sec: rate(self.bytes, secs),
            iops: rate(self.ios, secs),
            latency_ns: self.hist.summary(),
            service_latency_ns: self.service_hist.and_then(|h| h.summary()),
            by_direction: by_direction(
                self.reads,
                self.writes,
                self.read_hist,
                self.write_hist,
                secs,
            ),
            cpu_usr_sec: self.cpu_usr_sec,
            cpu_sys_sec: self.cpu_sys_sec,
            histogram: self.hist.to_base64(),
            service_histogram: self.service_hist.map(|h| h.to_base64()),
        }
    }
}

impl Aggregate {
    fn tally(&self) -> Tally<'_> {
        Tally {
            bytes: self.bytes,
            ios: self.ios,
            errors: self.errors,
            short_ios: self.short_ios,
            cpu_usr_sec: self.cpu_usr_sec,
            cpu_sys_sec: self.cpu_sys_sec,
            reads: (self.bytes - self.write_bytes, self.read_ios),
            writes: (self.write_bytes, self.write_ios),
            hist: &self.hist,
            service_hist: self.service_hist.as_ref(),
            read_hist: self.read_hist.as_ref(),
            write_hist: self.write_hist.as_ref(),
        }
    }

    /// The figures of these workers over `secs`.
    pub fn figures(&self, secs: f64) -> Figures {
        self.tally().figures(secs)
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
        mut warnings: Vec<Warning>,
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
        warnings.extend(schedule_missed(&workers));
        if !exec.flush_abandoned.is_empty() {
            warnings.push(Warning::FlushInterrupted {
                targets: exec.flush_abandoned.clone(),
            });
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
                        // The coordinator's sentence: which target, which error.
                        warnings.push(Warning::Text(e.clone()));
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
                // Its durable rate over its own time and its own flush: a
                // target that finished early is never divided by another's
                // window (zram's 64 MiB over a loop device's 13.5 s read
                // 4.9 MB/s, over its own 3.9 s 16.8).
                let mut t = target_doc(
                    plan,
                    exec,
                    i,
                    own,
                    &agg,
                    agg.flush(own, flush_sec, durable[i]),
                );
                t.foreign_io = Some(foreign_io(cfg, t.device.as_ref()));
                t
            })
            .collect();
        warnings.extend(what_the_figures_mean(cfg, plan, exec, &targets, &total));
        let targets_sum = TargetsSum::of(&targets, secs);
        let live = exec.live.as_ref().map(|l| live_doc(l, &mut warnings));
        let paths: Vec<String> = plan
            .targets
            .iter()
            .map(|t| t.path.display().to_string())
            .collect();
        RunDocument {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo::this(),
            host: HostInfo::from(&exec.host),
            process: Some(process_doc(exec)),
            config: super::ConfigDoc::of(cfg, &paths),
            interrupted: exec.interrupted,
            window: window_doc(cfg, exec),
            workers,
            targets,
            total: TotalDoc {
                figures: total.figures(secs),
                flush: total.flush(
                    secs,
                    max_flush.filter(|_| exec.flush_abandoned.is_empty()),
                    total_durable,
                ),
                flush_errors,
                flush_incomplete: !exec.flush_abandoned.is_empty(),
                cache_evictions: exec.outcomes.iter().map(|o| o.cache_evictions).sum(),
                cache_eviction_sec: exec
                    .outcomes
                    .iter()
                    .map(|o| o.cache_eviction_ns as f64 / 1e9)
                    .sum(),
                wrap_flushes: exec.outcomes.iter().map(|o| o.wrap_flushes).sum(),
                wrap_flush_sec: exec
                    .outcomes
                    .iter()
                    .map(|o| o.wrap_flush_ns as f64 / 1e9)
                    .sum(),
                sampled_reads: Some(exec.outcomes.iter().map(|o| o.sampled_reads).sum()),
                zero_reads: Some(exec.outcomes.iter().map(|o| o.zero_reads).sum()),
                targets_sum,
                sizes: super::SizeDoc::of(&exec.outcomes),
                priorities: super::PrioDoc::of(&exec.outcomes),
                zones: super::ZoneDoc::of(&exec.outcomes),
            },
            warnings,
            cache: None,
            stripe_model: stripe_model(plan),
            live,
            // The paths the workers opened are known here; `finished` sets it.
            fio: None,
            in_flight: Some(super::InFlightDoc::of(
                &total.figures(secs),
                secs,
                (cfg.iodepth as u64).saturating_mul(plan.workers.len() as u64),
                cfg.rate.is_some(),
            )),
            resync: exec.resync.iter().map(super::ResyncDoc::of).collect(),
        }
    }
}

/// A warning for each worker whose `--rate` schedule was not kept.
fn schedule_missed(workers: &[WorkerDoc]) -> Vec<Warning> {
    let mut out = Vec::new();
    for w in workers {
        let Some(r) = w.rate.as_ref().filter(|r| !r.kept) else {
            continue;
        };
        // Every figure here is latency from the due time (the
        // histogram's, unserved I/Os included) or the issue lag, which
        // is never above it: the sentence cannot contradict the table.
        let (p99_ns, max_ns) = w.figures.latency_ns.map_or((0, 0), |l| (l.p99, l.max));
        out.push(Warning::ScheduleMissed {
            worker: w.id,
            target: w.target.clone(),
            asked_iops: r.target_iops,
            asked_bytes_per_sec: r.target_bytes_per_sec,
            delivered_iops: r.delivered_iops,
            delivered_bytes_per_sec: r.delivered_bytes_per_sec,
            unserved_ios: r.unserved_ios,
            unserved_oldest_ns: r.unserved_oldest_ns,
            p99_ns,
            max_ns,
            behind_max_ns: r.behind_max_ns,
            late_ios: r.late_ios,
        });
    }
    out
}

/// The run's window: its bounds, how it ended, the rule that made it.
fn window_doc(cfg: &RunConfig, exec: &Execution) -> WindowDoc {
    WindowDoc {
        ramp_sec: cfg.ramp.as_secs_f64(),
        seconds: exec.window_sec,
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
        clock: exec.clock.into(),
        steady: cfg
            .steady
            .zip(exec.steady.as_ref())
            .map(|(s, o)| SteadyDoc {
                criterion: s.criterion.spelling(),
                dur_sec: s.dur.as_secs_f64(),
                ramp_sec: s.ramp.as_secs_f64(),
                interval_sec: s.interval.as_secs_f64(),
                attained: o.attained,
                at_sec: o.at_sec,
                value: o.last.map(|l| l.0),
                mean: o.last.map(|l| l.1),
                values: o.values.clone(),
                judged: o.judged,
            }),
        below_min: exec.rate_min.as_ref().map(|o| super::BelowMinDoc {
            worker: o.worker,
            direction: o.direction.map(Into::into),
            from_sec: o.below.from_sec,
            to_sec: o.below.to_sec,
            got: o.below.got,
        }),
    }
}

/// What the process used: its setup, and its CPU over the window and in all.
fn process_doc(exec: &Execution) -> ProcessDoc {
    ProcessDoc {
        setup_sec: exec.process.setup_sec,
        window_cpu_usr_sec: exec.process.window_cpu.0,
        window_cpu_sys_sec: exec.process.window_cpu.1,
        window_cpu_span_sec: exec.process.window_cpu_span_sec,
        cpu_usr_sec: exec.process.cpu.0,
        cpu_sys_sec: exec.process.cpu.1,
    }
}

/// The stripe model the workers' figures were split by, when they were.
fn stripe_model(plan: &Plan) -> Option<StripeModelDoc> {
    plan.workers
        .iter()
        .find_map(|w| w.stripe)
        .map(|st| StripeModelDoc {
            figures: "per_member_upper_bound".into(),
            chunk: st.map.chunk,
            logical_bs: st.logical_bs,
            pieces_per_request: st.logical_bs.div_ceil(st.map.chunk),
            note: STRIPE_MODEL_NOTE.into(),
        })
}

/// The live stream's account, and a warning for each thing it lost.
fn live_doc(l: &crate::measure::live::LiveStats, warnings: &mut Vec<Warning>) -> super::LiveDoc {
    // Lines lost to a failed stream (a full disk) are said by `trouble`:
    // no reader fell behind for them.
    let slow = l.lines_dropped.saturating_sub(l.lines_failed);
    if slow > 0 {
        warnings.push(Warning::LiveReaderBehind {
            dropped: slow,
            lines: l.lines_dropped + l.lines_written,
        });
    }
    if l.seconds_lost > 0 || l.histograms_lost > 0 {
        warnings.push(Warning::LiveCollectorBehind {
            seconds_lost: l.seconds_lost,
            histograms_lost: l.histograms_lost,
        });
    }
    if let Some(t) = &l.trouble {
        // The stream's own sentence: what failed, the lines it cost.
        warnings.push(Warning::Text(t.clone()));
    }
    super::LiveDoc {
        path: l.shown.path.clone(),
        format: l.shown.format.clone(),
        metrics: l.shown.metrics.clone(),
        interval_sec: l.shown.interval_sec,
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
        figures: Tally::of(out).figures(secs),
        read_bytes: out.read_bytes,
        write_bytes: out.write_bytes,
        read_ios: out.read_ios,
        write_ios: out.write_ios,
        trim_bytes: out.trim_bytes,
        trim_ios: out.trim_ios,
        errors_by_errno: out.errors_by_errno.clone(),
        error_samples: out.error_samples.clone(),
        stopped_on_errors: out.stopped_on_errors,
        ignored_errors: out.ignored_by_errno.clone(),
        ended_by: out.ended_by,
        hung_ios: out.hung_ios.clone(),
        rate: rate_doc,
        intervals: out.intervals.clone(),
        io_lines: out.io_lines.clone(),
        engine_path: (out.engine.as_ref())
            .map(|e| e.path.clone())
            .unwrap_or_default(),
        ring: (out.engine.as_ref())
            .and_then(|e| e.ring.as_ref())
            .map(|r| super::RingDoc::of(r, out.sqpoll_cpu_sec)),
        would_block_ios: cfg.nowait.then_some(out.would_block),
        cmdprio_ios: cfg.cmdprio.map(|_| out.cmdprio_ios),
        buffer: (out.engine.as_ref()).map(|e| super::BufferDoc::of(&e.buffers)),
        cache_evictions: out.cache_evictions,
        cache_eviction_sec: out.cache_eviction_ns as f64 / 1e9,
        wrap_flushes: out.wrap_flushes,
        wrap_flush_sec: out.wrap_flush_ns as f64 / 1e9,
        sprandom: spec.sprandom.as_ref().map(super::SprDoc::of),
        sampled_reads: Some(out.sampled_reads),
        zero_reads: Some(out.zero_reads),
        latency_search: (out.latency_search.as_ref()).map(super::LatencySearchDoc::of),
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
        figures: agg.figures(secs),
        failed: on_target().any(|(_, o)| o.stopped_on_errors || !o.hung_ios.is_empty()),
        flush,
        device: exec.devices[i].clone(),
        verify: on_target()
            .any(|(w, _)| matches!(w.verify, VerifyMode::Read | VerifyMode::Mix { .. }))
            .then(|| VerifyDoc::from_tallies(on_target().map(|(_, o)| &o.verify))),
        // Read by the command before the run (the document does no I/O).
        topology: None,
        held_settings: Some(Vec::new()),
        foreign_io: None,
        adapter: Some(t.adapter.clone()),
        identity: Some(t.identity.clone()),
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
) -> Vec<Warning> {
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
                warnings.push(Warning::CacheServedReads {
                    path: t.path.clone(),
                    ratio: r,
                });
            }
        }
    }
    warnings.extend(undelivered_direct_reads(cfg, targets));
    for t in targets {
        if let (Some(Some(f)), Some(d)) = (&t.foreign_io, &t.device) {
            warnings.push(Warning::ForeignIo {
                path: t.path.clone(),
                device: d.name.clone(),
                read_bytes: f.read_bytes,
                write_bytes: f.write_bytes,
                tolerance: f.tolerance,
            });
        }
    }
    warnings.extend(super::rmw::seen(targets));
    if !cfg.direct && cfg.rw.writes_data() {
        for t in targets {
            if let Some(r) = t
                .device
                .as_ref()
                .and_then(|d| d.write_ratio)
                .filter(|&r| r < 0.5)
            {
                warnings.push(Warning::CacheKeptWrites {
                    path: t.path.clone(),
                    ratio: r,
                });
            }
        }
    }
    for t in targets {
        if let Some(v) = t.verify.as_ref().filter(|v| v.unwritten > 0) {
            warnings.push(Warning::UnwrittenBlocks {
                path: t.path.clone(),
                unwritten: v.unwritten,
                blocks: v.blocks,
            });
        }
    }
    // A window under a second is warned of however it closed (seen: a
    // --passes 1 sweep whose windows lasted 0.16-0.28 s, said only by the
    // JSON's window.seconds).
    if secs > 0.0 && secs < crate::base::warning::MIN_MEANINGFUL_WINDOW_SEC {
        warnings.push(if matches!(exec.ended_by, "limit" | "passes") {
            Warning::ShortWindow { seconds: secs }
        } else {
            Warning::BriefWindow {
                seconds: secs,
                interrupted: exec.interrupted,
            }
        });
    }
    warnings.extend(limit_not_reached(cfg, plan, exec));
    if exec.interrupted && secs == 0.0 {
        warnings.push(Warning::InterruptedBeforeWindow);
    }
    // A worker that stopped on errors, or whose I/O hung, has said so; one
    // that reached its limit did I/O. The others with nothing in a window
    // that lasted were still waiting on their first I/O when it closed.
    let idle = exec
        .outcomes
        .iter()
        .filter(|o| o.ios() == 0 && o.errors == 0 && !o.stopped_on_errors && o.hung_ios.is_empty())
        .count();
    if idle > 0 && secs > 0.0 && matches!(exec.ended_by, "duration" | "interrupted") {
        warnings.push(Warning::IdleWorkers {
            idle,
            workers: exec.outcomes.len(),
            seconds: secs,
        });
    }
    // Workers with a few I/Os (those with none are said above, or stopped
    // on errors): rates and percentiles over a handful.
    let few: Vec<u64> = exec
        .outcomes
        .iter()
        .map(WorkerOutcome::ios)
        .filter(|&n| n > 0 && n < crate::base::warning::MIN_MEANINGFUL_IOS)
        .collect();
    if let Some(&fewest) = few.iter().min() {
        warnings.push(Warning::FewIos {
            few: few.len(),
            workers: exec.outcomes.len(),
            fewest,
        });
    }
    if total.short_ios > 0 {
        warnings.push(Warning::ShortIos {
            count: total.short_ios,
        });
    }
    if total.hist.clamped > 0 {
        warnings.push(Warning::ClampedLatencies {
            count: total.hist.clamped,
        });
    }
    warnings
}

/// A run that the clock ended before its `--io-limit` or `--passes`:
/// how far it got (the most a worker moved, or the share of the passes
/// done).
fn limit_not_reached(cfg: &RunConfig, plan: &Plan, exec: &Execution) -> Option<Warning> {
    if exec.ended_by != "duration" {
        return None;
    }
    let most = exec
        .outcomes
        .iter()
        .map(WorkerOutcome::bytes)
        .max()
        .unwrap_or(0);
    let duration = cfg.duration;
    if let Some(limit) = cfg.io_limit {
        return Some(Warning::IoLimitNotReached {
            limit,
            duration,
            most_bytes: most,
        });
    }
    let n = cfg.passes?;
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
    Some(if cfg.verify && !cfg.rw.writes() {
        Warning::VerifyPassIncomplete { duration, done }
    } else {
        Warning::PassesNotCompleted {
            passes: n,
            duration,
            done,
        }
    })
}

/// The I/O a target's device did beyond this run's own
/// (`analysis::foreign`). Not judged on a device that keeps no statistics,
/// nor on one whose counters hold another target's I/O of this run too
/// (`shared`: a partition and its disk, a volume and its member), where
/// the run's own bytes on it cannot be told from another's; nor on the
/// test-only mock engine, whose I/O never reaches the device.
fn foreign_io(
    cfg: &RunConfig,
    d: Option<&crate::device::devstat::DeviceCounters>,
) -> Option<crate::analysis::foreign::Foreign> {
    if cfg.debug_mock_engine.is_some() {
        return None;
    }
    let d = d.filter(|d| d.stats && !d.shared)?;
    crate::analysis::foreign::judge(
        (d.read_bytes, d.write_bytes),
        (d.app_read_bytes, d.app_write_bytes),
        cfg.direct,
    )
}

/// An O_DIRECT read bypasses the page cache, so its bytes should all reach
/// the device: when the device's counters show far less (under half), the
/// figures are not the device's, whatever the cause. Said after every run,
/// beside the causes that make it so.
fn undelivered_direct_reads(cfg: &RunConfig, targets: &[TargetDoc]) -> Vec<Warning> {
    if !cfg.direct || !cfg.rw.reads() {
        return Vec::new();
    }
    targets
        .iter()
        .filter_map(|t| {
            let d = t.device.as_ref()?;
            let r = d.read_ratio.filter(|&r| r < 0.5)?;
            Some(Warning::UndeliveredDirectReads {
                path: t.path.clone(),
                app_read_bytes: d.app_read_bytes,
                device: d.name.clone(),
                read_bytes: d.read_bytes,
                ratio: r,
            })
        })
        .collect()
}

impl RunDocument {
    /// Names the member and the offset on it of every error sample, hung
    /// I/O and verify finding on a block-device target whose stack maps an
    /// offset to one member (md raid0/4/5/6, dm striped, dm-raid parity):
    /// "offset 3145728 of /dev/md0 = loop2 at 1048576". Needs each
    /// target's topology, so it runs once they are attached.
    pub fn name_members(&mut self) {
        for t in &mut self.targets {
            if t.kind != crate::device::TargetKind::Block {
                continue;
            }
            let Some(root) = t.topology.as_ref().map(|s| &s.root) else {
                continue;
            };
            let at = |offset: u64| root.locate(offset).map(|m| (m.name, m.offset));
            for w in self
                .workers
                .iter_mut()
                .filter(|w| w.target_index == t.index)
            {
                for e in &mut w.error_samples {
                    (e.member, e.member_offset) = at(e.offset).unzip();
                }
                for h in &mut w.hung_ios {
                    (h.member, h.member_offset) = at(h.offset).unzip();
                }
            }
            if let Some(v) = &mut t.verify {
                for b in &mut v.bad_blocks {
                    (b.member, b.member_offset) = at(b.offset).unzip();
                }
            }
        }
    }
}
