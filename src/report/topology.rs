//! The topology's text report: one device a line, indented by depth, each
//! with its queue limits, and the leaf devices at the end.

use crate::base::error::Shown;
use crate::device::topology::{Device, Topology};

/// A text rendering of the stack, one device a line.
pub fn render(t: &Topology) -> String {
    fn line(d: &Device, depth: usize, out: &mut String) {
        use std::fmt::Write;
        let pad = "  ".repeat(depth);
        let mut desc = d.kind.clone();
        if let Some(p) = &d.parent {
            desc.push_str(&format!(" of {p}"));
        }
        let geometry = d.geometry();
        if let Some(m) = &d.md {
            // "md raid5 (4 disks: 3 data + 1 parity, left-symmetric, chunk
            // 64k, full stripe 192k)", "md raid1 (2 disks: 2 copies)".
            let detail = geometry.as_ref().and_then(|g| g.detail());
            desc.push_str(&format!(
                " {} ({} disks{})",
                m.level,
                m.raid_disks,
                match detail {
                    Some(x)
                        if geometry
                            .as_ref()
                            .is_some_and(|g| g.has_parity() || g.mirrors()) =>
                        format!(": {x}"),
                    Some(x) => format!(", {x}"),
                    None => String::new(),
                }
            ));
        }
        if let Some(dm) = &d.dm {
            desc.push_str(&format!(
                " {} {} (chunk {}, from the {})",
                dm.name,
                dm.target.as_deref().unwrap_or("?"),
                dm.chunk_size
                    .map_or("-".into(), crate::base::units::fmt_size_arg),
                dm.source
            ));
            // dm-raid, striped and mirror targets: what md would say.
            if let Some(g) = geometry.as_ref() {
                desc.push_str(&format!(
                    ": {} over {} {}",
                    g.level,
                    g.members,
                    g.detail().map_or(String::new(), |x| format!("({x})"))
                ));
                let t = desc.trim_end().to_string();
                desc = t;
            }
        }
        if let Some(b) = &d.btrfs {
            desc.push_str(&format!(
                " data {} (stripe {})",
                b.data_profile.as_deref().unwrap_or("?"),
                crate::base::units::fmt_size_arg(b.stripe_len)
            ));
        }
        if let Some(l) = &d.leaf {
            desc.push_str(&format!(
                ": {}, lbs {} pbs {}, {}, scheduler {}, read-ahead {} KiB, NUMA {}",
                crate::base::units::fmt_bytes(l.size),
                l.logical_block_size,
                l.physical_block_size,
                match l.rotational {
                    Some(true) => "rotational",
                    Some(false) => "non-rotational",
                    None => "rotational ?",
                },
                l.scheduler.as_deref().unwrap_or("?"),
                l.read_ahead_kb.map_or("?".into(), |r| r.to_string()),
                l.numa_node.map_or("?".into(), |n| n.to_string())
            ));
        }
        // Names from sysfs (a dm name is the user's choice): one line a
        // device, whatever they hold.
        let _ = writeln!(
            out,
            "{pad}{} [{}] {}",
            Shown(&d.name),
            Shown(if d.dev.is_empty() { "-" } else { &d.dev }),
            Shown(&desc)
        );
        if let Some(q) = &d.queue {
            let _ = writeln!(out, "{pad}  {}", q.render());
        }
        for m in &d.members {
            line(m, depth + 1, out);
        }
    }
    let mut out = format!("{} ({})\n", Shown(&t.target), Shown(&t.resolved));
    line(&t.root, 1, &mut out);
    // A disk under two branches (LVM legs on one PV) is named once.
    let mut leaves = t.leaves();
    let mut seen = std::collections::HashSet::new();
    leaves.retain(|l| seen.insert(l.name.clone()));
    out.push_str(&format!(
        "{} leaf device(s): {}{}\n",
        leaves.len(),
        Shown(
            &leaves
                .iter()
                .map(|l| l.path.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ),
        match (t.root.summary(), t.root.is_striped(), t.root.chunk_size()) {
            (Some(s), _, _) => format!("; {s}"),
            (None, true, Some(c)) =>
                format!("; striped, chunk {}", crate::base::units::fmt_size_arg(c)),
            _ => String::new(),
        }
    ));
    out
}
