//! The compare report as text.

use std::fmt::Write;

use crate::base::units::{fmt_latency_ns, fmt_size_arg, mb_per_sec};
use crate::document::compare::CompareDocument;

pub fn render(d: &CompareDocument) -> String {
    let mut out = String::new();
    let root = &d.topology.root;
    let c = &d.phases.first().map(|p| &p.document.config);
    let _ = writeln!(
        out,
        "compare {}: {}{}, {} member(s){}",
        d.volume,
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
            d.test_file.as_ref().map(|f| format!("; volume phases read {f}")).unwrap_or_default()
        );
    }
    let w = d
        .phases
        .iter()
        .map(|p| p.kind.to_string().len())
        .max()
        .unwrap_or(5)
        .max(5);
    let _ = writeln!(
        out,
        "{:<w$}  {:>10}  {:>10}  {:>9}  {:>10}",
        "phase", "MB/s", "IOPS", "p99", "CPU s/GB"
    );
    for p in &d.phases {
        let _ = writeln!(
            out,
            "{:<w$}  {:>10.1}  {:>10.0}  {:>9}  {:>10}",
            p.kind,
            mb_per_sec(p.bytes_per_sec),
            p.iops,
            p.p99_ns.map_or("-".into(), |v| fmt_latency_ns(v as f64)),
            p.cpu_sec_per_gb.map_or("-".into(), |v| format!("{v:.3}"))
        );
    }
    if let Some(e) = d.efficiency {
        let _ = writeln!(
            out,
            "stripe efficiency: volume ({} workers, O_DIRECT) / members together = {:.1}%",
            d.members.len(),
            e * 100.0
        );
    }
    let _ = writeln!(out, "members (all at once):");
    for m in &d.members {
        let _ = writeln!(
            out,
            "  {:<14} {:>10.1} MB/s  {:>5.1}% of the members' total{}{}",
            m.path,
            mb_per_sec(m.bytes_per_sec),
            m.share * 100.0,
            m.solo_bytes_per_sec
                .map(|s| format!(", alone {:.1} MB/s", mb_per_sec(s)))
                .unwrap_or_default(),
            if m.slow {
                "  <- SLOW: more than 15% below the median member"
            } else {
                ""
            }
        );
    }
    match &d.slowest {
        Some(s) => {
            let _ = writeln!(out, "slowest member: {s}");
        }
        None => {
            let _ = writeln!(out, "no member is more than 15% below the median");
        }
    }
    for n in &d.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
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
            volume: "/dev/mapper/stripe".into(),
            topology: Topology {
                target: "/dev/mapper/stripe".into(),
                resolved: "block device".into(),
                root,
            },
            test_file: None,
            phases: Vec::new(),
            efficiency: None,
            members: Vec::new(),
            slowest: None,
            notes: Vec::new(),
        };
        let text = render(&d);
        assert!(
            text.starts_with("compare /dev/mapper/stripe: dm striped, 0 member(s), chunk 64k\n"),
            "{text}"
        );
    }
}
