//! The topology's text report: one device a line, indented by depth, each
//! with its queue limits, and the leaf devices at the end.

use crate::base::error::Shown;
use crate::device::paths::PathGroups;
use crate::device::topology::{Device, Topology};

/// The leaves by the host adapter they are behind: one line per adapter
/// (`controller 0000:00:05.0: sdc sdf sdi sdl`), and the leaves behind none.
/// Empty when no leaf is behind an adapter.
pub fn render_paths(p: &PathGroups) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    if p.groups.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "paths: the leaves behind {} controller(s){}",
        p.groups.len(),
        if p.shared() {
            " (members of one controller share its path: compare --solo reads each controller's together)"
        } else {
            ""
        }
    );
    let shown = |names: &[String]| {
        names
            .iter()
            .map(|n| Shown(n).to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    for g in &p.groups {
        let _ = writeln!(
            out,
            "  controller {}: {} member(s): {}",
            Shown(&g.adapter),
            g.members.len(),
            shown(&g.members)
        );
    }
    if !p.none.is_empty() {
        let _ = writeln!(out, "  behind no controller: {}", shown(&p.none));
    }
    out
}

/// The topology document with `paths` added: `[{"adapter": "0000:00:05.0",
/// "members": ["sdc", ...]}, ...]` (the leaves behind each host adapter;
/// empty when none is) and `no_path` (the leaves behind none).
pub fn with_paths<T: serde::Serialize>(topology: &T, p: &PathGroups) -> serde_json::Value {
    let mut v = serde_json::to_value(topology).unwrap_or(serde_json::Value::Null);
    if let Some(o) = v.as_object_mut() {
        let groups: Vec<serde_json::Value> = p
            .groups
            .iter()
            .map(|g| serde_json::json!({"adapter": g.adapter, "members": g.members}))
            .collect();
        o.insert("paths".into(), serde_json::Value::Array(groups));
        o.insert("no_path".into(), serde_json::json!(p.none));
    }
    v
}

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
        members(d, depth, out, line);
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
    // Said last too, where a reader's eye ends: the array is not whole.
    if let Some(d) = t.root.md_health().and_then(|h| h.describe()) {
        out.push_str(&format!("ARRAY STATE: {}\n", Shown(&d)));
    }
    out
}

/// "state: clean; degraded: 1 of 6 members down (slot 2 empty); sync
/// idle" or "state: clean, all 6 members in sync".
fn md_state_line(st: &crate::device::topology::MdState, raid_disks: u32) -> String {
    let h = st.health(raid_disks);
    let mut s = format!("state: {}", st.array_state.as_deref().unwrap_or("?"));
    match h.describe() {
        Some(d) => s += &format!("; {}", d),
        None => s += &format!(", all {raid_disks} members in sync"),
    }
    let limits = |l: &Option<crate::device::topology::SpeedLimit>| {
        l.as_ref()
            .map_or("?".into(), |l| format!("{} ({})", l.kb_per_sec, l.source))
    };
    if h.sync.is_none() {
        s += &format!(
            "; sync {}, speed limits min {} max {} KB/s",
            st.sync_action.as_deref().unwrap_or("?"),
            limits(&st.sync_speed_min),
            limits(&st.sync_speed_max)
        );
    } else if let Some((done, total)) = st.sync_completed {
        // The limits' figures are in the words above; here, whose they are.
        let whose = |l: &Option<crate::device::topology::SpeedLimit>| {
            l.as_ref().map_or("?", |l| l.source.as_str()).to_string()
        };
        s += &format!(
            "; sync_completed {done}/{total} sectors (limits: min {}, max {})",
            whose(&st.sync_speed_min),
            whose(&st.sync_speed_max)
        );
    }
    s
}
/// A member's role in its array: "slot 2, in_sync" or "slot 2, spare
/// (being rebuilt, 4096 sectors done)".
fn member_state(m: &crate::device::topology::MdMember) -> String {
    let mut s = match m.slot {
        Some(k) => format!("slot {k}, "),
        None => "no slot, ".into(),
    };
    s += &if m.state.is_empty() {
        "state ?".to_string()
    } else {
        m.state.join(",")
    };
    let in_sync = m.state.iter().any(|w| w == "in_sync");
    if !in_sync && m.slot.is_some() && !m.state.iter().any(|w| w == "faulty") {
        s += " (being rebuilt";
        if let Some(r) = m.recovery_start {
            s += &format!(", {r} sectors done");
        }
        s += ")";
    }
    s
}

/// A device's md state line, then its members, each followed by its role
/// in the array, with a line for each empty slot where its member was.
fn members(d: &Device, depth: usize, out: &mut String, line: fn(&Device, usize, &mut String)) {
    use std::fmt::Write;
    let pad = "  ".repeat(depth);
    let state = d.md.as_ref().and_then(|m| m.state.as_ref());
    if let (Some(m), Some(st)) = (&d.md, state) {
        let _ = writeln!(out, "{pad}  {}", Shown(&md_state_line(st, m.raid_disks)));
    }
    let mut missing = state
        .map_or(&[][..], |s| &s.missing_slots[..])
        .iter()
        .peekable();
    for (k, m) in d.members.iter().enumerate() {
        // An empty slot where the member was: md's order, with the gap.
        while let Some(&&slot) = missing.peek() {
            let at = state
                .and_then(|s| s.members.iter().find(|x| x.name == m.name))
                .and_then(|x| x.slot)
                .unwrap_or(u32::try_from(k).unwrap_or(u32::MAX));
            if slot > at {
                break;
            }
            let _ = writeln!(out, "{pad}  (slot {slot}: missing, no device)");
            missing.next();
        }
        line(m, depth + 1, out);
        if let Some(x) = state.and_then(|s| s.members.iter().find(|x| x.name == m.name)) {
            let _ = writeln!(out, "{pad}    md: {}", Shown(&member_state(x)));
        }
    }
    for slot in missing {
        let _ = writeln!(out, "{pad}  (slot {slot}: missing, no device)");
    }
}
