//! The compare report as text: every run of every phase (a failed or thin
//! one marked, its warnings grouped under it), the level's ceilings and the
//! stripe efficiency against one (the stripe layer and the members'
//! imbalance apart, the larger loss named), the members, and the verdict
//! with its numbers.

use std::fmt::Write;

use crate::base::error::Shown;
use crate::base::units::{fmt_bytes, fmt_latency_ns, fmt_size_arg, mb_per_sec};
use crate::base::warning::Warning;
use crate::document::compare::{
    grouped_warnings, run_label, CeilingDoc, CompareDocument, Phase, PhaseStatus, StripeEfficiency,
};

pub fn render(d: &CompareDocument) -> String {
    let mut out = String::new();
    let root = &d.topology.root;
    let c = &d.phases.first().map(|p| &p.document.config);
    let _ = writeln!(
        out,
        "compare {}: {}{}, {} member(s){}",
        Shown(&d.volume),
        root.kind,
        root.md
            .as_ref()
            .map(|m| format!(" {}", m.level))
            .or(root
                .btrfs
                .as_ref()
                .and_then(|b| b.data_profile.clone())
                .map(|p| format!(" {p}")))
            .or(root
                .dm
                .as_ref()
                .and_then(|d| d.target.clone())
                .map(|t| format!(" {t}")))
            .unwrap_or_default(),
        d.members.len(),
        root.chunk_size()
            .map(|c| format!(", chunk {}", fmt_size_arg(c)))
            .unwrap_or_default()
    );
    if let Some(c) = c {
        let _ = writeln!(
            out,
            "each phase: {} bs {}, {:.2}s window after a {:.2}s ramp, engine {} (iodepth {}); MB/s = 10^6 B/s{}",
            c.rw.name(),
            c.bs.parse::<u64>().map_or(c.bs.clone(), fmt_size_arg),
            c.duration_sec,
            c.ramp_sec,
            c.engine.name(),
            c.iodepth,
            d.test_file.as_ref().map(|f| format!("; volume phases read {}", Shown(f))).unwrap_or_default()
        );
    }
    // Under --rw write the header's workload is the members' reads.
    let written: Vec<String> = d
        .phases
        .iter()
        .filter(|p| p.kind.writes())
        .map(|p| {
            let c = &p.document.config;
            format!(
                "'{}' {} bs {}",
                p.kind,
                c.rw.name(),
                c.bs.parse::<u64>().map_or(c.bs.clone(), fmt_size_arg)
            )
        })
        .collect();
    if !written.is_empty() {
        let _ = writeln!(
            out,
            "the members are only read; the volume is written: {}",
            written.join(", ")
        );
    }
    let w = d
        .runs()
        .map(|p| p.kind.to_string().len() + run_label(&p.kind, p.repeat, d.repeat).len())
        .max()
        .unwrap_or(5)
        .max(5);
    let _ = writeln!(
        out,
        "{:<w$}  {:>10}  {:>10}  {:>9}  {:>10}  {:>8}",
        "phase", "MB/s", "IOPS", "p99", "CPU s/GB", "window s"
    );
    for first in &d.phases {
        // Each kind's runs together, then what they warned of, once.
        let runs: Vec<&Phase> = d.runs().filter(|p| p.kind == first.kind).collect();
        for p in &runs {
            phase_row(&mut out, p, d.repeat, w);
        }
        for (line, times) in grouped_warnings(runs.iter().map(|p| &p.document)) {
            let _ = match times {
                1 => writeln!(out, "    warning: {}", Shown(&line)),
                n => writeln!(out, "    warning ({n} times): {}", Shown(&line)),
            };
        }
    }
    ceilings_and_efficiency(&mut out, d);
    direct_buffered(&mut out, d);
    members(&mut out, d);
    shared_paths(&mut out, d);
    verdict(&mut out, d);
    for n in &d.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// A run's row; a run that is not ok shows no rate (a thin one) or is
/// marked (a failed one), with what is wrong under it.
fn phase_row(out: &mut String, p: &Phase, of: usize, w: usize) {
    let name = format!("{}{}", p.kind, run_label(&p.kind, p.repeat, of));
    if p.status == PhaseStatus::Thin {
        let _ = writeln!(
            out,
            "{name:<w$}  {:>10}  {:>10}  {:>9}  {:>10}  {:>8.2}",
            "-", "-", "-", "-", p.document.window.seconds
        );
    } else {
        let _ = writeln!(
            out,
            "{name:<w$}  {:>10.1}  {:>10.0}  {:>9}  {:>10}  {:>8.2}",
            mb_per_sec(p.bytes_per_sec),
            p.iops,
            p.p99_ns.map_or("-".into(), |v| fmt_latency_ns(v as f64)),
            p.cpu_sec_per_gb.map_or("-".into(), |v| format!("{v:.3}")),
            // The window its rates are over: a phase too short to mean
            // anything must show in the table, not only in the JSON.
            p.document.window.seconds
        );
    }
    // Its targets ended at different times: the phase's MB/s is their
    // bytes over the shared window, not their sum; the sum beside it.
    if let Some(line) = crate::report::table::total_line(&p.document) {
        let _ = writeln!(out, "    {line}");
    }
    if let Some(m) = p.members_read_bytes {
        // The verdict is the run's own (document::run::rmw), printed with
        // the phase's warnings below; this line gives the figures always.
        let rmw = p
            .document
            .warnings
            .iter()
            .any(|w| matches!(w, Warning::ReadModifyWrite { .. }));
        let _ = writeln!(
            out,
            "    members read {} while the volume was written (the volume read {}): {}",
            fmt_bytes(m),
            fmt_bytes(p.volume_read_bytes.unwrap_or(0)),
            if rmw {
                "read-modify-write"
            } else {
                "no read-modify-write"
            }
        );
    }
    let what = p.problems.join("; ");
    let _ = match p.status {
        PhaseStatus::Ok => Ok(()),
        PhaseStatus::Thin => writeln!(
            out,
            "    THIN: {what}: too few I/Os for a rate; kept out of the efficiency"
        ),
        PhaseStatus::Failed => writeln!(
            out,
            "    FAILED: {what}: kept out of the efficiency and the verdict"
        ),
    };
}

/// Seed 004's figures: each O_DIRECT phase against a buffered one.
fn direct_buffered(out: &mut String, d: &CompareDocument) {
    if d.direct_buffered.is_empty() {
        return;
    }
    let cpu = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3}"));
    let _ = writeln!(
        out,
        "O_DIRECT / through the page cache (buffered, or uncached) on the volume (rate ratio; CPU s/GB each):"
    );
    for p in &d.direct_buffered {
        let _ = writeln!(
            out,
            "  {} / {} = {} ({:.1} / {:.1} MB/s; CPU {} / {} s/GB)",
            p.direct,
            p.buffered,
            p.ratio.map_or("-".into(), |r| format!("{r:.2}x")),
            mb_per_sec(p.direct_bytes_per_sec),
            mb_per_sec(p.buffered_bytes_per_sec),
            cpu(p.direct_cpu_sec_per_gb),
            cpu(p.buffered_cpu_sec_per_gb),
        );
    }
}

/// The array's geometry's member count when the md array under the
/// volume is degraded (its `N`, which the members measured fall short of).
fn degraded(d: &CompareDocument) -> Option<u32> {
    let h = d.topology.root.md_health().filter(|h| h.degraded())?;
    Some(h.of)
}

fn ceilings_and_efficiency(out: &mut String, d: &CompareDocument) {
    if let Some(state) = &d.array_state {
        let _ = writeln!(out, "ARRAY STATE: {}", Shown(state));
    }
    if let Some(c) = d.ceilings.first() {
        let rules: Vec<&str> = d.ceilings.iter().map(|c| c.rule.as_str()).collect();
        let _ = writeln!(out, "ceilings ({}): {}", c.basis, rules.join("; "));
    }
    let n = d.members.len();
    // The volume phase the efficiency rests on: full-stripe writes under
    // --rw write, else one O_DIRECT worker per member.
    let how = if d.phases.iter().any(|p| p.kind.writes()) {
        "full-stripe writes"
    } else {
        "O_DIRECT"
    };
    if let (Some(e), Some(c)) = (&d.stripe_efficiency, &d.efficiency_ceiling) {
        stripe_efficiency(out, e, c, n, how, degraded(d));
    }
    if let Some(note) = &d.efficiency_note {
        let _ = writeln!(out, "  {note}");
    }
}

/// The efficiency in two, and the larger loss named: the stripe layer
/// against what its slowest member allows, the slowest member against the
/// median. A slow member is the imbalance's loss, not the stripe layer's.
/// `degraded`: the array's member count when it is degraded: the
/// figure is then against the degraded ceiling, and its loss is the
/// reconstruction's, not the stripe layer's.
fn stripe_efficiency(
    out: &mut String,
    e: &StripeEfficiency,
    c: &CeilingDoc,
    n: usize,
    how: &str,
    degraded: Option<u32>,
) {
    let pct = |f: f64| f * 100.0;
    let _ = match degraded {
        None => writeln!(
            out,
            "stripe efficiency, in two: volume ({n} workers, {how}) {:.1} MB/s, against {} (N = {n})",
            mb_per_sec(e.volume_bytes_per_sec),
            c.rule,
        ),
        Some(all) => writeln!(
            out,
            "degraded array, efficiency against its degraded ceiling, in two: volume ({n} workers, {how}) {:.1} MB/s, against {} (N = {all}, {n} members measured)",
            mb_per_sec(e.volume_bytes_per_sec),
            c.rule,
        ),
    };
    if e.waits_for_every_piece {
        let _ = writeln!(
            out,
            "  stripe layer: {:.1} MB/s of the {:.1} MB/s its slowest member allows ({} × {:.1} MB/s, {}) = {:.1}%",
            mb_per_sec(e.volume_bytes_per_sec),
            mb_per_sec(e.allowed_bytes_per_sec),
            fmt_factor(c.members),
            mb_per_sec(e.slowest_bytes_per_sec),
            Shown(&e.slowest),
            pct(e.stripe_layer)
        );
        let _ = writeln!(
            out,
            "  members' imbalance: the slowest {:.1} MB/s / the median {:.1} MB/s = {:.1}%",
            mb_per_sec(e.slowest_bytes_per_sec),
            mb_per_sec(e.median_bytes_per_sec),
            pct(e.imbalance)
        );
    } else {
        let _ = writeln!(
            out,
            "  stripe layer: {:.1} MB/s of the {:.1} MB/s the members allow together ({} × their mean; a read goes to one copy, so none waits for the slowest) = {:.1}%",
            mb_per_sec(e.volume_bytes_per_sec),
            mb_per_sec(e.allowed_bytes_per_sec),
            fmt_factor(c.members),
            pct(e.stripe_layer)
        );
        let _ = writeln!(
            out,
            "  members' imbalance: the slowest {:.1} MB/s / the median {:.1} MB/s = {:.1}% (no loss: a mirror's reads need not wait for it)",
            mb_per_sec(e.slowest_bytes_per_sec),
            mb_per_sec(e.median_bytes_per_sec),
            pct(e.imbalance)
        );
    }
    let _ = match e.larger_loss.as_str() {
        "imbalance" => writeln!(
            out,
            "  the larger loss: the members' imbalance ({} at {:.1}% of the median member); the stripe layer delivers {:.1}% of what that member allows",
            Shown(&e.slowest),
            pct(e.imbalance),
            pct(e.stripe_layer)
        ),
        "stripe_layer" if degraded.is_some() => writeln!(
            out,
            "  the larger loss: the degraded array's reconstruction ({:.1}% of what its survivors allow: md rebuilds each missing chunk from the survivors' chunks of its stripe, through its stripe cache, which splits the members' requests); the members' imbalance costs {:.1}%",
            pct(e.stripe_layer),
            pct(1.0 - e.imbalance).max(0.0)
        ),
        "stripe_layer" => writeln!(
            out,
            "  the larger loss: the stripe layer ({:.1}% of what its members allow); the members' imbalance costs {:.1}%",
            pct(e.stripe_layer),
            if e.waits_for_every_piece {
                pct(1.0 - e.imbalance)
            } else {
                0.0
            }
        ),
        _ => writeln!(
            out,
            "  no loss: the volume delivers what its members allow, and they are equal"
        ),
    };
}

fn fmt_factor(f: f64) -> String {
    if f.fract() == 0.0 {
        format!("{f:.0}")
    } else {
        format!("{f:.2}")
    }
}

fn members(out: &mut String, d: &CompareDocument) {
    let runs = if d.repeat > 1 {
        format!("; the median of {} runs", d.repeat)
    } else {
        String::new()
    };
    let _ = writeln!(out, "members (all at once{runs}):");
    for m in &d.members {
        let range = match (m.range_bytes_per_sec, d.verdict.as_ref().map(|v| v.runs)) {
            (Some((lo, hi)), Some(r)) if r > 1 => {
                format!(", runs {:.1}-{:.1} MB/s", mb_per_sec(lo), mb_per_sec(hi))
            }
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {:<14} {:>10.1} MB/s  {:>5.1}% of the members' total{}{}{}{}{}",
            crate::base::error::Shown(&m.path),
            mb_per_sec(m.bytes_per_sec),
            m.share * 100.0,
            m.solo_bytes_per_sec
                .map(|s| format!(", alone {:.1} MB/s", mb_per_sec(s)))
                .unwrap_or_default(),
            range,
            m.p99_ns
                .map(|p| format!(", p99 {}", fmt_latency_ns(p)))
                .unwrap_or_default(),
            if m.errors > 0 {
                format!(", {} I/O error(s): FAILING", m.errors)
            } else {
                String::new()
            },
            if m.slow { "  <- SLOW" } else { "" }
        );
    }
}

/// Each host adapter's members together against their sum alone; a
/// capped one marked, and named as the bottleneck.
fn shared_paths(out: &mut String, d: &CompareDocument) {
    if d.shared_paths.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "members behind one controller (together against alone):"
    );
    for g in &d.shared_paths {
        let _ = writeln!(
            out,
            "  {}{}",
            g.describe(),
            if g.capped { "  <- BOTTLENECK" } else { "" }
        );
        let _ = writeln!(
            out,
            "    {}",
            g.members
                .iter()
                .map(|m| crate::base::error::show_text(m).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    let capped: Vec<&str> = d
        .shared_paths
        .iter()
        .filter(|g| g.capped)
        .map(|g| g.adapter.as_str())
        .collect();
    if capped.is_empty() {
        let _ = writeln!(out, "no controller caps its members");
    } else {
        let _ = writeln!(
            out,
            "bottleneck: controller {} (its members are fine alone: the shared path caps them together)",
            capped
                .iter()
                .map(|a| crate::base::error::show_text(a).into_owned())
                .collect::<Vec<_>>()
                .join(", controller ")
        );
    }
}

/// The verdict with its rule's numbers: every member flagged, or none, or
/// why none was judged.
fn verdict(out: &mut String, d: &CompareDocument) {
    let Some(v) = &d.verdict else {
        return;
    };
    let from = match v.source.as_str() {
        "alone" => "each member alone (--solo)",
        _ => "the members together",
    };
    let _ = writeln!(
        out,
        "verdict: from {from}, the median of up to {} run(s) per member; {}",
        v.runs, v.rule
    );
    if let Some(c) = &v.caveat {
        let _ = writeln!(out, "  caveat: {c}");
    }
    if !v.unmeasured.is_empty() {
        let _ = writeln!(
            out,
            "  not judged (every run of theirs failed): {}",
            v.unmeasured.join(", ")
        );
    }
    if let Some(why) = &v.none {
        let _ = writeln!(out, "  {why}");
        return;
    }
    if let Some(r) = &v.rate {
        let _ = writeln!(
            out,
            "  rate: median {:.1} MB/s, MAD {:.1}, spread used {:.1}: flagged below {:.1} MB/s",
            mb_per_sec(r.median),
            mb_per_sec(r.mad),
            mb_per_sec(r.spread),
            mb_per_sec(r.threshold)
        );
    }
    if let Some(p) = &v.p99 {
        let _ = writeln!(
            out,
            "  p99: median {}, MAD {}, spread used {}: flagged above {}",
            fmt_latency_ns(p.median),
            fmt_latency_ns(p.mad),
            fmt_latency_ns(p.spread),
            fmt_latency_ns(p.threshold)
        );
    }
    for f in &v.flagged {
        let _ = match f.by.as_str() {
            "p99" => writeln!(
                out,
                "  SLOW: {}: p99 {} above {} (median {})",
                f.member,
                fmt_latency_ns(f.figure),
                fmt_latency_ns(f.threshold),
                fmt_latency_ns(f.median)
            ),
            _ => writeln!(
                out,
                "  SLOW: {}: {:.1} MB/s below {:.1} MB/s (median {:.1} MB/s)",
                f.member,
                mb_per_sec(f.figure),
                mb_per_sec(f.threshold),
                mb_per_sec(f.median)
            ),
        };
    }
    for f in &v.some_runs {
        let _ = match f.by.as_str() {
            "p99" => writeln!(
                out,
                "  not flagged, beyond in some runs only: {}: median p99 {} above {}, a run of it below",
                f.member,
                fmt_latency_ns(f.figure),
                fmt_latency_ns(f.threshold)
            ),
            _ => writeln!(
                out,
                "  not flagged, beyond in some runs only: {}: median {:.1} MB/s below {:.1} MB/s, a run of it above",
                f.member,
                mb_per_sec(f.figure),
                mb_per_sec(f.threshold)
            ),
        };
    }
    match &d.slowest {
        Some(s) => {
            let _ = writeln!(out, "slowest member: {s}");
        }
        None => {
            let _ = writeln!(
                out,
                "no member is off: every member is within the thresholds"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::topology::{Device, DmInfo, Topology};
    use crate::document::run::ToolInfo;

    #[test]
    fn the_header_names_a_dm_volumes_target() {
        // Seen in the lab: "compare /dev/mapper/stripe: dm, 4 member(s)",
        // where an md volume says "md raid0".
        let root = Device {
            name: "dm-1".into(),
            dev: "253:1".into(),
            path: "/dev/dm-1".into(),
            kind: "dm".into(),
            parent: None,
            md: None,
            dm: Some(DmInfo {
                name: "stripe".into(),
                target: Some("striped".into()),
                chunk_size: Some(65536),
                source: "dm table".into(),
            }),
            btrfs: None,
            leaf: None,
            queue: None,
            members: Vec::new(),
            geometry: None,
        };
        let d = CompareDocument {
            schema_version: 1,
            tool: ToolInfo::this(),
            interrupted: false,
            array_state: None,
            volume: "/dev/mapper/stripe".into(),
            topology: Topology {
                target: "/dev/mapper/stripe".into(),
                resolved: "block device".into(),
                root,
            },
            test_file: None,
            phases: Vec::new(),
            repeat: 1,
            repeats: Vec::new(),
            stripe_efficiency: None,
            efficiency_ceiling: None,
            efficiency_note: None,
            ceilings: Vec::new(),
            direct_buffered: Vec::new(),
            verdict: None,
            members: Vec::new(),
            slowest: None,
            shared_paths: Vec::new(),
            notes: Vec::new(),
        };
        let text = render(&d);
        assert!(
            text.starts_with("compare /dev/mapper/stripe: dm striped, 0 member(s), chunk 64k\n"),
            "{text}"
        );
    }

    /// Issue 39, item 5: a phase whose targets ended at different times
    /// says what its MB/s is and gives their own rates' sum.
    #[test]
    fn a_phase_whose_targets_ended_apart_gives_their_sum() {
        use crate::document::compare::{Phase, PhaseKind};
        use crate::document::run::TargetsSum;
        let mut doc = crate::report::fixtures::sample_doc();
        let mut other = doc.targets[0].clone();
        other.index = 1;
        other.figures.seconds = doc.window.seconds / 2.0;
        other.figures.bytes_per_sec = 300e6;
        doc.targets[0].figures.bytes_per_sec = 100e6;
        doc.targets.push(other);
        doc.total.targets_sum = TargetsSum::of(&doc.targets, doc.window.seconds);
        let mut out = String::new();
        phase_row(&mut out, &Phase::of(PhaseKind::Together, doc), 1, 8);
        assert!(
            out.contains("    TOTAL is every target's bytes over the shared window (2.000s), not a sum of rates: the targets ended at different times; their own rates sum to 400.0 MB/s"),
            "{out}"
        );
    }

    #[test]
    fn each_phase_shows_its_window() {
        use crate::document::compare::{Phase, PhaseKind};
        let mut doc = crate::report::fixtures::sample_doc();
        doc.window.seconds = 0.23;
        let mut out = String::new();
        phase_row(&mut out, &Phase::of(PhaseKind::Together, doc), 1, 8);
        let first = out.lines().next().unwrap();
        assert_eq!(first.split_whitespace().last(), Some("0.23"), "{out}");
    }
}
