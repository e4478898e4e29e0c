//! The topology's text report: one device a line, indented by depth, each
//! with its queue limits, and the leaf devices at the end.

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
        if let Some(m) = &d.md {
            desc.push_str(&format!(
                " {} ({} disks, chunk {})",
                m.level,
                m.raid_disks,
                m.chunk_size
                    .map_or("?".into(), crate::base::units::fmt_size_arg)
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
        let _ = writeln!(
            out,
            "{pad}{} [{}] {desc}",
            d.name,
            if d.dev.is_empty() { "-" } else { &d.dev }
        );
        if let Some(q) = &d.queue {
            let _ = writeln!(out, "{pad}  {}", q.render());
        }
        for m in &d.members {
            line(m, depth + 1, out);
        }
    }
    let mut out = format!("{} ({})\n", t.target, t.resolved);
    line(&t.root, 1, &mut out);
    let leaves = t.leaves();
    out.push_str(&format!(
        "{} leaf device(s): {}{}\n",
        leaves.len(),
        leaves
            .iter()
            .map(|l| l.path.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        match (t.root.is_striped(), t.root.chunk_size()) {
            (true, Some(c)) => format!("; striped, chunk {}", crate::base::units::fmt_size_arg(c)),
            _ => String::new(),
        }
    ));
    out
}
