//! The checks of `advise`, each a function of the volume's topology, the
//! survey of its stack's sysfs attributes and (read-ahead) the rates
//! measured: what each finds, with its evidence, fix and gain.

use std::collections::BTreeMap;

use super::{striping, Finding, Gain, Setting, Severity};
use crate::analysis::advise as rules;
use crate::analysis::advise_stack::{self as stack_rules, Boundary, MemberAttr};
use crate::base::units::mb_per_sec;
use crate::device::survey::{DeviceFacts, Survey};
use crate::device::topology::{Device, Topology};

/// Every device of the stack, the volume first (depth first).
fn stack(topo: &Topology) -> Vec<&Device> {
    let mut out = Vec::new();
    let mut walk = vec![&topo.root];
    while let Some(d) = walk.pop() {
        out.push(d);
        walk.extend(d.members.iter().rev());
    }
    out
}

/// The sysfs directory whose `queue/` governs `f` (a partition's disk).
fn queue_dev(f: &DeviceFacts) -> &str {
    f.parent.as_deref().unwrap_or(&f.name)
}

/// A name or path as one shell word: a dm name is chosen by whoever made
/// the device (spaces, quotes, `;` are allowed), so a fix that names one
/// must quote it to be the command it says.
fn sh(word: &str) -> String {
    crate::base::invocation::shell_word(word.as_bytes())
}

/// A udev rule that sets `attr` of the device named `name` at every boot;
/// a dm device by its dm name (its dm-N number can change).
fn udev_rule(d: &Device, attr: &str, value: &str, file: &str) -> String {
    let matcher = match &d.dm {
        Some(dm) if !dm.name.is_empty() => format!("ENV{{DM_NAME}}==\"{}\"", dm.name),
        _ => format!("KERNEL==\"{}\"", d.parent.as_deref().unwrap_or(&d.name)),
    };
    let rule = format!(
        "ACTION==\"add|change\", SUBSYSTEM==\"block\", {matcher}, ATTR{{{attr}}}=\"{value}\""
    );
    format!("echo {} >> /etc/udev/rules.d/{file}", sh(&rule))
}

fn kib(b: u64) -> String {
    if b >= 1 << 20 && b % (1 << 20) == 0 {
        format!("{} MiB", b >> 20)
    } else {
        format!("{} KiB", b >> 10)
    }
}

/// The array's state in words, said before anything else.
pub fn state_words(topo: &Topology, survey: &Survey) -> Vec<String> {
    let mut out = Vec::new();
    for d in stack(topo).into_iter().filter(|d| d.md.is_some()) {
        let Some(md) = survey.get(&d.name).and_then(|f| f.md.as_ref()) else {
            continue;
        };
        let n = d.md.as_ref().map_or(0, |m| m.raid_disks);
        let mut words = vec![md
            .array_state
            .clone()
            .unwrap_or_else(|| "state unknown".into())];
        if let Some((_, k)) = stack_rules::degraded(md.degraded) {
            words.push(format!("degraded: {k} of {n} members missing"));
        }
        if let Some(a) = stack_rules::sync_said(md.sync_action.as_deref()) {
            words.push(format!(
                "{a} in progress{}",
                md.sync_completed
                    .as_deref()
                    .and_then(stack_rules::sync_pct)
                    .map_or(String::new(), |p| format!(" ({p:.0}% done)"))
            ));
        }
        out.push(format!("{}: {}", d.name, words.join(", ")));
    }
    out
}

/// Every check that reads what the stack exposes only (read-ahead aside:
/// see [`readahead_finding`], which also weighs what was measured).
pub fn static_findings(topo: &Topology, survey: &Survey) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(state(topo, survey));
    out.extend(alignment(topo, survey));
    out.extend(fs_hints(topo, survey));
    out.extend(request_limits(topo, survey));
    out.extend(mismatch(topo, survey));
    out.extend(parity(topo, survey));
    out.extend(crypt(topo, survey));
    out.extend(numa(topo, survey));
    out
}

/// A dm-crypt layer that hands every I/O to its workqueues: the flags that
/// process it in the submitting context, the commands that set them, and
/// the measurement of what the layer costs against the device under it
/// (the most the flags can win back).
fn crypt(topo: &Topology, survey: &Survey) -> Vec<Finding> {
    let mut out = Vec::new();
    for d in stack(topo) {
        let (Some(dm), Some(c)) = (&d.dm, survey.get(&d.name).and_then(|f| f.dm_crypt.as_ref()))
        else {
            continue;
        };
        let Some((severity, missing)) = stack_rules::crypt_workqueues(&c.flags) else {
            continue;
        };
        let below = d.members.first().map(|m| format!("/dev/{}", m.name));
        let name = sh(&dm.name);
        let path = sh(&format!("/dev/mapper/{}", dm.name));
        out.push(Finding {
            settings: Vec::new(),
            id: "crypt-workqueues".into(),
            check: "crypt".into(),
            severity: severity.into(),
            devices: vec![d.name.clone()],
            title: format!(
                "dm-crypt {} queues its I/O to kcryptd's workqueues ({} off)",
                d.name,
                missing.join(" and ")
            ),
            evidence: vec![format!(
                "dmsetup table {name}: crypt {} ... ({})",
                crate::base::error::show_text(&c.cipher),
                if c.flags.is_empty() {
                    "no optional flags".to_string()
                } else {
                    format!("flags {}", crate::base::error::show_text(&c.flags.join(" ")))
                }
            )],
            meaning: "each read is decrypted, and each write encrypted and issued, by a workqueue thread instead of where it was submitted: on SSD and NVMe members, and arrays of them, the queueing more than the cipher is what caps the layer and adds latency".into(),
            fix: vec![
                format!("cryptsetup refresh --perf-no_read_workqueue --perf-no_write_workqueue {name}   # LUKS2: add --persistent to keep them (cryptsetup 2.3.4+, kernel 5.9+)"),
                format!("plain dm-crypt: dmsetup table --showkeys {name}, append '2 no_read_workqueue no_write_workqueue' to its line (or add them to its flags), then dmsetup reload {name} and dmsetup resume {name}"),
            ],
            persist: Vec::new(),
            gain: below.map(|b| Gain {
                what: format!("measure what the crypt layer costs, the most the flags can win back: stripebench sweep --param target=each --rw read --bs 1m --direct {path} {b}"),
                before_bytes_per_sec: None,
                after_bytes_per_sec: None,
                pct: None,
                measured: false,
            }),
        });
    }
    out
}

/// NUMA placement, on a host of more than one node: the nodes the stripe
/// members hang off, against where stripebench's workers run by default
/// (every CPU it may use, in turn): a worker on another node than its
/// member reads through the interconnect. Info, with the `--cpus` list
/// that keeps the workers local (a member on another node than the rest is
/// `member-numa-node-differs`, from the mismatch check).
fn numa(topo: &Topology, survey: &Survey) -> Option<Finding> {
    let severity = stack_rules::numa_placement(survey.numa_nodes.len())?;
    let members = topo.stripe_members();
    let mut by_node: BTreeMap<i64, Vec<&str>> = BTreeMap::new();
    for m in &members {
        if let Some(n) = survey
            .get(&m.name)
            .and_then(|f| f.numa_node)
            .filter(|&n| n >= 0)
        {
            by_node.entry(n).or_default().push(&m.name);
        }
    }
    if by_node.is_empty() {
        return None;
    }
    let cpus_of = |n: i64| {
        survey
            .numa_nodes
            .iter()
            .find(|(k, _)| *k == n)
            .map_or("?".to_string(), |(_, c)| c.clone())
    };
    let vol = &topo.root.name;
    let nodes: Vec<String> = by_node
        .iter()
        .map(|(n, ms)| format!("node {n} (CPUs {}): {}", cpus_of(*n), ms.join(", ")))
        .collect();
    let (title, fix) = if by_node.len() == 1 {
        let (n, _) = by_node.iter().next()?;
        (
            format!("every member of {vol} is on NUMA node {n} of {}: workers on the other nodes' CPUs read across the interconnect", survey.numa_nodes.len()),
            vec![format!("stripebench run --cpus {} ...   # pin the workers to node {n}'s CPUs (numactl --cpunodebind={n} for other programs)", cpus_of(*n))],
        )
    } else {
        (
            format!("the members of {vol} hang off {} NUMA nodes: each member's I/O is best issued from its own node's CPUs", by_node.len()),
            vec!["stripebench run --members ... --cpus LIST   # with LIST the CPUs of the members' nodes, in member order; or one run per node with that node's members and CPUs".into()],
        )
    };
    Some(Finding {
        id: "numa-placement".into(),
        check: "numa".into(),
        severity: severity.into(),
        devices: by_node.values().flatten().map(|m| m.to_string()).collect(),
        title,
        evidence: nodes,
        meaning: "I/O issued from a CPU of another node than the controller's crosses the interconnect twice (the request and the data): higher latency, and at high rates a lower ceiling".into(),
        fix,
        persist: Vec::new(),
        gain: None,
        settings: Vec::new(),
    })
}

/// Degraded and resyncing md arrays: every figure measured now is low.
fn state(topo: &Topology, survey: &Survey) -> Vec<Finding> {
    let sys = survey.sys.as_str();
    let mut out = Vec::new();
    for d in stack(topo).into_iter().filter(|d| d.md.is_some()) {
        let Some(md) = survey.get(&d.name).and_then(|f| f.md.as_ref()) else {
            continue;
        };
        let n = d.md.as_ref().map_or(0, |m| m.raid_disks);
        if let Some((severity, k)) = stack_rules::degraded(md.degraded) {
            out.push(Finding {
                settings: Vec::new(),
                id: "degraded".into(),
                check: "state".into(),
                severity: severity.into(),
                devices: vec![d.name.clone()],
                title: format!("{} is degraded: {k} of {n} members missing", d.name),
                evidence: vec![format!("{sys}/block/{}/md/degraded is {k}", d.name)],
                meaning: "reads of the missing members' data are rebuilt from the others (parity) or served by fewer copies; one more failure may lose data; every figure measured now is below the array's own".into(),
                fix: vec![format!("mdadm --detail /dev/{}   # which member is missing; then mdadm /dev/{} --add NEWDISK", d.name, d.name)],
                persist: Vec::new(),
                gain: None,
            });
        }
        if let Some((severity, a)) = stack_rules::resync(md.sync_action.as_deref()) {
            let pct = md.sync_completed.as_deref().and_then(stack_rules::sync_pct);
            out.push(Finding {
                settings: Vec::new(),
                id: "resync".into(),
                check: "state".into(),
                severity: severity.into(),
                devices: vec![d.name.clone()],
                title: format!(
                    "{} is running {a}{}",
                    d.name,
                    pct.map_or(String::new(), |p| format!(" ({p:.0}% done)"))
                ),
                evidence: vec![format!("{sys}/block/{}/md/sync_action is {a}", d.name)],
                meaning: format!("the {a} reads (and writes) every member meanwhile: what is measured now is below the array's own; measure again when it is idle"),
                fix: vec![
                    format!("cat /proc/mdstat   # wait for the {a} to finish (or: echo idle > /sys/block/{}/md/sync_action, and run it later)", d.name),
                    format!("stripebench sweep --param sync_speed_max=1000,10000,100000 --sync-speed-min 1 --rw randread --bs 4k --direct --ramp 30s /dev/{}   # what a faster {a} costs the users: their p99 against the time it takes", d.name),
                ],
                persist: Vec::new(),
                gain: None,
            });
        }
    }
    out
}

/// Read-ahead against the full stripe; `measured` holds the rates of
/// buffered sequential reads at each value (KiB, bytes/s), the current one
/// among them. Without measurements the finding is the static rule's.
pub fn readahead_finding(
    topo: &Topology,
    survey: &Survey,
    measured: &[(u64, f64)],
) -> Option<Finding> {
    let sys = survey.sys.as_str();
    let (_, g) = striping(topo)?;
    let full = g.full_stripe?;
    let vol = &topo.root;
    let cur = survey.get(&vol.name)?.read_ahead_kb?;
    let fs_kb = full / 1024;
    let stack_rules::Readahead {
        severity,
        rec_kb: rec,
        low,
        at_cur,
        gain_pct,
    } = stack_rules::readahead(cur, fs_kb, measured)?;
    let severity = Severity::from(severity);
    let mut evidence = vec![format!(
        "{sys}/block/{}/queue/read_ahead_kb is {cur}; the full stripe is {} ({})",
        vol.name,
        kib(full),
        g.describe()
    )];
    if !measured.is_empty() {
        evidence.push(format!(
            "buffered sequential reads, one thread, cold cache: {}",
            measured
                .iter()
                .map(|(k, r)| format!("{k} KiB {:.1} MB/s", mb_per_sec(*r)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let meaning = if cur == 0 {
        "with no read-ahead every buffered read goes to the array as it is asked, page by page for small reads: one member at a time is busy and the others wait".to_string()
    } else if low {
        format!("a sequential buffered reader asks for {cur} KiB ahead, less than one full stripe: at most {} of the {} data members are read at once", stack_rules::readahead_members_at_once(cur, g.chunk, full), g.data)
    } else {
        format!("a larger read-ahead measured faster ({rec} KiB), though {cur} KiB already covers a full stripe")
    };
    Some(Finding {
        settings: vec![Setting::new(&vol.name, "queue/read_ahead_kb", rec)],
        id: if low { "readahead-low" } else { "readahead-larger" }.into(),
        check: "readahead".into(),
        severity,
        devices: vec![vol.name.clone()],
        title: if low {
            format!("{} read-ahead is {cur} KiB, below its full stripe ({fs_kb} KiB)", vol.name)
        } else {
            format!("{} read faster with read-ahead {rec} KiB than {cur} KiB", vol.name)
        },
        evidence,
        meaning,
        fix: vec![format!(
            "echo {rec} > /sys/block/{}/queue/read_ahead_kb",
            vol.name
        )],
        persist: vec![
            udev_rule(vol, "queue/read_ahead_kb", &rec.to_string(), "60-readahead.rules"),
            format!(
                "or at boot: blockdev --setra {} /dev/{}   # 512-byte sectors",
                rec * 2,
                vol.name
            ),
        ],
        gain: Some(match (at_cur, measured.iter().find(|(k, _)| *k == rec)) {
            (Some(b), Some((_, a))) => Gain {
                what: format!(
                    "buffered sequential reads of /dev/{}, one thread: read_ahead_kb {cur} → {rec}",
                    vol.name
                ),
                before_bytes_per_sec: Some(b),
                after_bytes_per_sec: Some(*a),
                pct: gain_pct,
                measured: true,
            },
            _ => Gain {
                what: format!(
                    "estimated: a sequential buffered reader keeps all {} data members busy (not measured)",
                    g.data
                ),
                before_bytes_per_sec: None,
                after_bytes_per_sec: None,
                pct: None,
                measured: false,
            },
        }),
    })
}

/// The file system's stripe hints against the array's chunk and full
/// stripe: ext4 stride and stripe_width, XFS sunit and swidth. Not set:
/// low (the allocator ignores the stripe); set and wrong (an array grown or
/// reshaped after mkfs, a layer that hid the geometry): medium, since the
/// allocator then aligns to boundaries that are not the stripe's.
fn fs_hints(topo: &Topology, survey: &Survey) -> Option<Finding> {
    let h = survey.fs_hints.as_ref()?;
    let (_, g) = striping(topo)?;
    let (chunk, full) = (g.chunk?, g.full_stripe?);
    let vol = &topo.root.name;
    let (severity, unset) = stack_rules::fs_hints(h.unit_bytes, h.width_bytes, chunk, full)?;
    let shown = |b: Option<u64>| b.map_or("not set".to_string(), kib);
    let (unit_name, width_name) = if h.fs == "xfs" {
        ("sunit", "swidth")
    } else {
        ("stride", "stripe_width")
    };
    let (fix, persist) = if h.fs == "xfs" {
        // XFS takes both at mount, in 512-byte sectors.
        let (su, sw) = stack_rules::fs_hint_values(true, h.block_bytes, chunk, full);
        (
            vec![format!("umount /dev/{vol} && mount -o sunit={su},swidth={sw} /dev/{vol} MOUNTPOINT   # XFS takes them at mount, in 512-byte units")],
            vec![format!("in /etc/fstab, the options of /dev/{vol}: sunit={su},swidth={sw}")],
        )
    } else {
        let (st, sw) = stack_rules::fs_hint_values(false, h.block_bytes, chunk, full);
        (
            vec![format!(
                "tune2fs -E stride={st},stripe_width={sw} /dev/{vol}"
            )],
            vec!["tune2fs writes them into the superblock: they stay".into()],
        )
    };
    Some(Finding {
        settings: Vec::new(),
        id: if unset {
            "fs-stripe-hints-unset"
        } else {
            "fs-stripe-hints-wrong"
        }
        .into(),
        check: "alignment".into(),
        severity: severity.into(),
        devices: vec![vol.clone()],
        title: if unset {
            format!("the {} file system on {vol} has no stripe hints: its allocator does not know the chunk ({}) or the full stripe ({})", h.fs, kib(chunk), kib(full))
        } else {
            format!("the {} file system on {vol} assumes a {unit_name} of {} and a {width_name} of {}; the array's chunk is {} and its full stripe {}", h.fs, shown(h.unit_bytes), shown(h.width_bytes), kib(chunk), kib(full))
        },
        evidence: vec![
            format!(
                "{} superblock of /dev/{vol}: block {}, {unit_name} {}, {width_name} {}",
                h.fs,
                kib(h.block_bytes),
                shown(h.unit_bytes),
                shown(h.width_bytes)
            ),
            g.describe(),
        ],
        meaning: if unset {
            "files and their metadata are placed without regard to the stripe: large files may start mid-chunk, and a write that could fill a full stripe straddles two (on parity RAID, a read-modify-write)".into()
        } else {
            "the allocator aligns files to boundaries that are not the array's: large writes straddle chunks and stripes it thinks it keeps whole".into()
        },
        fix,
        persist,
        gain: None,
    })
}

/// Where each layer's data starts, against 4 KiB, 1 MiB, the chunk and
/// the full stripe.
fn alignment(topo: &Topology, survey: &Survey) -> Vec<Finding> {
    let sys = survey.sys.as_str();
    let mut out = Vec::new();
    let all = stack(topo);
    for d in &all {
        let Some(f) = survey.get(&d.name) else {
            continue;
        };
        // An aligned partition ends its device's checks here (as it always
        // has: the checks below are not made of it).
        match partition_misaligned(d, f, &all, sys) {
            Some(None) => continue,
            Some(Some(finding)) => out.push(finding),
            None => {}
        }
        if let Some((severity, a)) = stack_rules::alignment_offset(f.alignment_offset) {
            out.push(Finding {
                settings: Vec::new(),
                id: "alignment-offset".into(),
                check: "alignment".into(),
                severity: severity.into(),
                devices: vec![d.name.clone()],
                title: format!("the kernel says {} is misaligned by {a} bytes", d.name),
                evidence: vec![format!("{sys}/class/block/{}/alignment_offset is {a}", d.name)],
                meaning: "the device's data does not start on its physical (or stripe) boundary: aligned I/O above it is not aligned on it".into(),
                fix: vec![format!("move the start of {} (or of what it is built on) by {a} bytes", d.name)],
                persist: Vec::new(),
                gain: None,
            });
        }
        // A dm-linear segment (an LVM LV: its offsets include the PV's
        // pe_start) against the stripe of the member it maps from.
        for (m, off) in &f.dm_linear {
            let Some(md) = d.members.iter().find(|x| x.name == *m) else {
                continue;
            };
            let g = md.geometry().filter(|g| g.stripes());
            let full = g
                .as_ref()
                .and_then(|g| g.full_stripe.filter(|_| g.data > 1));
            let chunk = g.as_ref().and_then(|g| g.chunk);
            let Some((severity, missed)) = stack_rules::dm_offset_misaligned(*off, chunk, full)
            else {
                continue;
            };
            let severity = Severity::from(severity);
            let against = match missed {
                Boundary::Chunk(c) => format!("the chunk of {m} ({})", kib(c)),
                Boundary::FullStripe(fs) => format!("the full stripe of {m} ({})", kib(fs)),
                other => boundary_words(other),
            };
            let dm_name = d.dm.as_ref().map_or(d.name.as_str(), |x| x.name.as_str());
            let stripe = stack_rules::dm_fix_alignment(chunk, full);
            out.push(Finding {
                settings: Vec::new(),
                id: "dm-offset-misaligned".into(),
                check: "alignment".into(),
                severity,
                devices: vec![d.name.clone(), m.clone()],
                title: format!(
                    "{} ({dm_name}) maps from {off} bytes into {m}, not on a multiple of {against}",
                    d.name
                ),
                evidence: vec![format!(
                    "dmsetup table {dm_name}: linear {} {}",
                    md.dev,
                    off / 512
                )],
                meaning: format!("every stripe-aligned I/O of {} lands across two of {m}'s chunks or stripes: it reaches more members than it needs, and parity RAID reads before it writes", d.name),
                fix: vec![format!(
                    "LVM: recreate the PV with pvcreate --dataalignment {}k /dev/{m} (and extents a multiple of it); plain dm: reload the table with an offset that is a multiple of {} (dmsetup reload)",
                    stripe / 1024,
                    kib(stripe)
                )],
                persist: Vec::new(),
                gain: None,
            });
        }
        // Where each member's data starts on it: md's data_offset, a dm
        // table's offsets.
        if let Some(g) = d.geometry.as_ref() {
            for (i, off) in g.member_offsets.iter().enumerate() {
                if let Some(severity) = stack_rules::data_offset_misaligned(*off) {
                    let m = d.members.get(i).map_or("?".to_string(), |m| m.name.clone());
                    out.push(Finding {
                        settings: Vec::new(),
                        id: "data-offset-misaligned".into(),
                        check: "alignment".into(),
                        severity: severity.into(),
                        devices: vec![d.name.clone(), m.clone()],
                        title: format!("{}'s data starts {off} bytes into member {m}, not on 4 KiB", d.name),
                        evidence: vec![if d.md.is_some() {
                            format!("{sys}/block/{}/md/dev-{m}/offset is {} sectors", d.name, off / 512)
                        } else {
                            format!("the dm table of {} maps {m} from sector {}", d.name, off / 512)
                        }],
                        meaning: "every chunk of this member straddles its 4 KiB blocks".into(),
                        fix: vec![if d.md.is_some() {
                            "recreate the array with an aligned --data-offset (mdadm --create ... --data-offset=1M): its data must be moved off first".to_string()
                        } else {
                            format!("reload {}'s table with 4 KiB-aligned offsets (dmsetup reload)", d.name)
                        }],
                        persist: Vec::new(),
                        gain: None,
                    });
                }
            }
        }
    }
    out
}

/// A partition's start against its disk's physical block, 4 KiB, and, when
/// the disk is itself striped (a partition of md0), its stripe: the finding
/// when it is off the first of them it misses; `Some(None)` when it is on
/// them all, `None` when `d` is no partition.
fn partition_misaligned(
    d: &Device,
    f: &DeviceFacts,
    all: &[&Device],
    sys: &str,
) -> Option<Option<Finding>> {
    // A partition: against its disk's physical block, 4 KiB, and, when
    // the disk is itself striped (a partition of md0), its stripe.
    let start = f.start_sectors?;
    Some(partition_finding(d, f, all, sys, start))
}

/// [`partition_misaligned`] of a partition that starts at sector `start`.
fn partition_finding(
    d: &Device,
    f: &DeviceFacts,
    all: &[&Device],
    sys: &str,
    start: u64,
) -> Option<Finding> {
    let at = start * 512;
    let phys = d.leaf.as_ref().map_or(512, |l| l.physical_block_size);
    let disk_stripe = f
        .parent
        .as_ref()
        .and_then(|p| all.iter().find(|x| x.name == *p))
        .and_then(|p| p.geometry())
        .filter(|g| g.stripes());
    let (severity, missed) =
        stack_rules::partition_misaligned(at, phys, disk_stripe.as_ref().and_then(|g| g.chunk))?;
    let severity = Severity::from(severity);
    let against = match missed {
        Boundary::Chunk(c) => format!("the chunk of the array it is on ({})", kib(c)),
        other => boundary_words(other),
    };
    Some(Finding {
        settings: Vec::new(),
        id: "partition-misaligned".into(),
        check: "alignment".into(),
        severity,
        devices: vec![d.name.clone()],
        title: format!(
            "partition {} starts at sector {start} ({at} bytes), not on a multiple of {against}",
            d.name
        ),
        evidence: vec![format!("{sys}/class/block/{}/start is {start}", d.name)],
        meaning: "every chunk-aligned I/O of the layers above straddles two of the disk's blocks (or stripes): the disk reads (and for writes, reads and rewrites) both".into(),
        fix: vec![format!(
            "recreate the partition at a 1 MiB boundary (parted -a optimal /dev/{} mkpart ... 1MiB ...): its data must be moved off first",
            f.parent.as_deref().unwrap_or("DISK")
        )],
        persist: Vec::new(),
        gain: None,
    })
}

/// A missed boundary in a finding's title ("not on a multiple of ...");
/// a chunk or a full stripe is named with its array by the caller.
fn boundary_words(b: Boundary) -> String {
    match b {
        Boundary::PhysicalBlock(phys) => format!("its disk's physical block ({phys} bytes)"),
        Boundary::FourKib => "4 KiB".to_string(),
        Boundary::Chunk(c) => format!("the chunk ({})", kib(c)),
        Boundary::FullStripe(fs) => format!("the full stripe ({})", kib(fs)),
        Boundary::OneMib => "1 MiB".to_string(),
    }
}

/// Each stripe member's request limits against the chunk: a chunk-sized
/// piece the array sends is split when a member takes less.
fn request_limits(topo: &Topology, survey: &Survey) -> Vec<Finding> {
    let sys = survey.sys.as_str();
    let mut out = Vec::new();
    let Some((layer, g)) = striping(topo) else {
        return out;
    };
    let Some(chunk) = g.chunk else {
        return out;
    };
    let chunk_kb = chunk / 1024;
    let members: Vec<(&Device, &DeviceFacts)> = layer
        .members
        .iter()
        .filter_map(|m| Some((m, survey.get(&m.name)?)))
        .collect();
    for (m, f) in &members {
        let q = queue_dev(f);
        let hw = f.max_hw_sectors_kb;
        let others: Vec<u64> = members
            .iter()
            .filter(|(o, _)| o.name != m.name)
            .filter_map(|(_, o)| o.max_sectors_kb)
            .collect();
        if let Some(stack_rules::RequestSplit {
            severity,
            max_kb: max,
            pieces,
            to_kb: to,
            fixable,
            others,
        }) = stack_rules::request_split(f.max_sectors_kb, hw, &others, chunk_kb)
        {
            out.push(Finding {
                settings: if fixable {
                    vec![Setting::new(q, "queue/max_sectors_kb", to)]
                } else {
                    Vec::new()
                },
                id: "request-split".into(),
                check: "request-limits".into(),
                severity: severity.into(),
                devices: vec![m.name.clone()],
                title: format!(
                    "member {} takes requests of at most {max} KiB, less than the chunk ({chunk_kb} KiB): each chunk reaches it as {} requests",
                    m.name, pieces
                ),
                evidence: vec![
                    format!(
                        "{sys}/block/{q}/queue/max_sectors_kb is {max} (the hardware allows {})",
                        hw.map_or("?".into(), |h| h.to_string())
                    ),
                    format!("the chunk of {} is {chunk_kb} KiB", layer.name),
                    format!(
                        "the other members take {}",
                        if others.is_empty() {
                            "?".to_string()
                        } else {
                            others.iter().map(|k| format!("{k} KiB")).collect::<Vec<_>>().join(", ")
                        }
                    ),
                ],
                meaning: format!("{} splits every chunk-sized piece the array sends it: more requests, more per-request overhead, and on a disk that seeks, the pieces may not be merged back", m.name),
                fix: if fixable {
                    vec![format!("echo {to} > /sys/block/{q}/queue/max_sectors_kb")]
                } else {
                    vec![format!("the hardware limit of {q} is below the chunk: recreate the array with a chunk of at most {} KiB", hw.unwrap_or(max))]
                },
                persist: if fixable {
                    vec![udev_rule(m, "queue/max_sectors_kb", &to.to_string(), "60-max-sectors.rules")]
                } else {
                    Vec::new()
                },
                gain: None,
            });
        }
        // Scattered pages: one segment each (huge-page buffers aside).
        if let Some((severity, segs)) = stack_rules::segments_below_chunk(f.max_segments, chunk_kb)
        {
            out.push(Finding {
                settings: Vec::new(),
                id: "segments-below-chunk".into(),
                check: "request-limits".into(),
                severity: severity.into(),
                devices: vec![m.name.clone()],
                title: format!(
                    "member {} gathers at most {segs} segments: a chunk ({chunk_kb} KiB) of scattered 4 KiB pages needs {}",
                    m.name,
                    chunk_kb / 4
                ),
                evidence: vec![format!("{sys}/block/{q}/queue/max_segments is {segs}")],
                meaning: "a chunk-sized request from page-cache (buffered) I/O may be split by the segment limit".into(),
                fix: vec![format!("a driver or controller limit: a chunk of at most {} KiB avoids it", segs * 4)],
                persist: Vec::new(),
                gain: None,
            });
        }
    }
    out
}

/// One attribute of the stripe members, as the mismatch check compares it.
/// Its words; which it is, and so how much a difference matters, is
/// `analysis::advise_stack::MemberAttr`'s.
struct Attr {
    name: &'static str,
    attr: MemberAttr,
    /// The sysfs file under `queue/` that sets it, when one does.
    knob: Option<&'static str>,
    get: fn(&DeviceFacts) -> Option<String>,
}

const ATTRS: &[Attr] = &[
    Attr {
        name: "scheduler",
        attr: MemberAttr::Scheduler,
        knob: Some("queue/scheduler"),
        get: |f| f.scheduler.clone(),
    },
    Attr {
        name: "nr_requests",
        attr: MemberAttr::NrRequests,
        knob: Some("queue/nr_requests"),
        get: |f| f.nr_requests.map(|v| v.to_string()),
    },
    Attr {
        name: "write cache",
        attr: MemberAttr::WriteCache,
        knob: Some("queue/write_cache"),
        get: |f| f.write_cache.clone(),
    },
    Attr {
        name: "wbt_lat_usec",
        attr: MemberAttr::WbtLatUsec,
        knob: Some("queue/wbt_lat_usec"),
        get: |f| f.wbt_lat_usec.map(|v| v.to_string()),
    },
    Attr {
        name: "rotational",
        attr: MemberAttr::Rotational,
        knob: None,
        get: |f| {
            f.rotational
                .map(|r| if r { "1 (disk)" } else { "0 (ssd)" }.to_string())
        },
    },
    Attr {
        name: "model",
        attr: MemberAttr::Model,
        knob: None,
        get: |f| f.model.clone(),
    },
    Attr {
        name: "firmware",
        attr: MemberAttr::Firmware,
        knob: None,
        get: |f| f.firmware.clone(),
    },
    Attr {
        name: "NUMA node",
        attr: MemberAttr::NumaNode,
        knob: None,
        get: |f| f.numa_node.filter(|&n| n >= 0).map(|n| n.to_string()),
    },
    Attr {
        name: "controller",
        attr: MemberAttr::Controller,
        knob: None,
        get: |f| f.controller.clone(),
    },
];

/// What a member is built of: its own kind and those under it
/// ("loop", "dm>loop", "partition"): a member behind an extra layer
/// (dm-delay, dm-crypt) differs from the others.
fn stack_word(d: &Device) -> String {
    let mut words = vec![match &d.dm {
        Some(dm) => format!("dm {}", dm.target.as_deref().unwrap_or("?")),
        None => d.kind.clone(),
    }];
    if let Some(only) = d.members.first() {
        words.push(stack_word(only));
    }
    words.join(" over ")
}

/// Members that differ from the others: what they are built of, then
/// (among those built alike) their queue settings and hardware.
fn mismatch(topo: &Topology, survey: &Survey) -> Vec<Finding> {
    let sys = survey.sys.as_str();
    let mut out = Vec::new();
    let members = topo.stripe_members();
    if members.len() < 2 {
        return out;
    }
    let stacks: Vec<(&str, Option<String>)> = members
        .iter()
        .map(|m| (m.name.as_str(), Some(stack_word(m))))
        .collect();
    let mut alike: Vec<&Device> = members.clone();
    if let Some((common, odd)) = stack_rules::odd_ones(&stacks) {
        alike.retain(|m| odd.iter().all(|(o, _)| *o != m.name));
        out.push(Finding {
            settings: Vec::new(),
            id: "member-stack-differs".into(),
            check: "mismatch".into(),
            severity: stack_rules::MEMBER_STACK_SEVERITY.into(),
            devices: odd.iter().map(|(m, _)| m.to_string()).collect(),
            title: format!(
                "{} of {} members {} built differently: {}",
                odd.len(),
                members.len(),
                if odd.len() == 1 { "is" } else { "are" },
                odd.iter().map(|(m, s)| format!("{m} is {s}")).collect::<Vec<_>>().join("; ")
            ),
            evidence: vec![format!("the other members are each {common}")],
            meaning: "a layer in front of one member (dm-delay, dm-crypt, a cache) gives it other latency and limits: a stripe waits for its slowest member".into(),
            fix: odd
                .iter()
                .map(|(m, s)| match members.iter().find(|d| d.name == *m).and_then(|d| d.dm.as_ref()) {
                    Some(dm) => format!("dmsetup table {}   # {m} is {s}: take it out from in front of the member, or put the same in front of every member", sh(&dm.name)),
                    None => format!("lsblk -s /dev/{m}   # {m} is {s}: build every member alike"),
                })
                .collect(),
            persist: Vec::new(),
            gain: None,
        });
    }
    if alike.len() < 2 {
        return out;
    }
    // A scheduler change resets nr_requests (to twice the tag depth with
    // one, the tag depth without): a member with another scheduler has
    // another nr_requests because of it, and the scheduler's fix puts both
    // back. Its nr_requests is said in the scheduler's finding.
    let values = ATTRS
        .iter()
        .map(|a| {
            let vs = alike
                .iter()
                .map(|m| (m.name.as_str(), survey.get(&m.name).and_then(a.get)))
                .collect();
            (a.attr, vs)
        })
        .collect();
    for mm in stack_rules::member_mismatches(values) {
        let Some(a) = ATTRS.iter().find(|a| a.attr == mm.attr) else {
            continue;
        };
        let stack_rules::Mismatch {
            severity,
            common,
            odd,
            values,
            set_with_scheduler,
            ..
        } = mm;
        let facts = |m: &str| survey.get(m);
        let fix = attr_fix(a, &odd, &common, survey);
        let persist: Vec<String> = match a.knob {
            Some(k) => odd
                .iter()
                .filter_map(|(m, _)| alike.iter().find(|d| d.name == *m))
                .map(|d| udev_rule(d, k, &common, "60-members.rules"))
                .collect(),
            None => Vec::new(),
        };
        out.push(Finding {
            settings: match a.knob {
                Some(k) => odd
                    .iter()
                    .filter_map(|(m, _)| facts(m))
                    .filter(|f| {
                        a.attr != MemberAttr::Scheduler
                            || stack_rules::scheduler_offered(&f.schedulers, &common)
                    })
                    .map(|f| Setting::new(queue_dev(f), k, &common))
                    .collect(),
                None => Vec::new(),
            },
            id: format!("member-{}-differs", a.name.replace(' ', "-").to_lowercase()),
            check: "mismatch".into(),
            severity: severity.into(),
            devices: odd.iter().map(|(m, _)| m.to_string()).collect(),
            title: format!(
                "{} differs between members: {}; the others have {common}",
                a.name,
                odd.iter().map(|(m, v)| format!("{m} has {v}")).collect::<Vec<_>>().join(", ")
            ),
            evidence: values
                .iter()
                .map(|(m, v)| {
                    let f = facts(m);
                    let file = match (a.knob, f) {
                        (Some(k), Some(f)) => format!("{sys}/block/{}/{k}", queue_dev(f)),
                        _ => format!("{m}'s {}", a.name),
                    };
                    format!("{file}: {}", v.as_deref().unwrap_or("?"))
                })
                .chain(set_with_scheduler.iter().map(|(m, v)| {
                    format!(
                        "{m}'s nr_requests is {} (set with its scheduler)",
                        v.as_deref().unwrap_or("?")
                    )
                }))
                .collect(),
            meaning: format!("members that handle requests differently finish their share of a stripe at different times: the stripe waits for the slowest (the {} of one member differs)", a.name),
            fix,
            persist,
            gain: None,
        });
    }
    out
}

/// The fix of attribute `a` on the `odd` members (to `common`, the
/// others' value): a line to set it where a setting does, else what to
/// replace.
fn attr_fix(a: &Attr, odd: &[(&str, String)], common: &String, survey: &Survey) -> Vec<String> {
    match a.knob {
        Some(k) => odd
            .iter()
            .filter_map(|(m, _)| survey.get(m))
            .map(|f| {
                // A scheduler the member's queue does not offer cannot
                // be echoed: the others' must change instead.
                if a.attr == MemberAttr::Scheduler
                    && !stack_rules::scheduler_offered(&f.schedulers, common)
                {
                    format!(
                        "{} does not offer {common} (it offers {}): set the same one of those on every member",
                        f.name,
                        f.schedulers.join(", ")
                    )
                } else {
                    format!("echo {common} > /sys/block/{}/{k}", queue_dev(f))
                }
            })
            .collect(),
        None => vec![format!(
            "no setting changes the {}: replace or move the odd member(s) so that all are alike",
            a.name
        )],
    }
}

/// md raid4/5/6: the stripe cache against mdadm's rule (four chunks'
/// worth of stripe heads, plus one), and the parity threads.
fn parity(topo: &Topology, survey: &Survey) -> Vec<Finding> {
    let sys = survey.sys.as_str();
    let mut out = Vec::new();
    for d in stack(topo) {
        let Some(g) = d.geometry().filter(|g| g.has_parity() && d.md.is_some()) else {
            continue;
        };
        let Some(md) = survey.get(&d.name).and_then(|f| f.md.as_ref()) else {
            continue;
        };
        let chunk = g.chunk.unwrap_or(64 << 10);
        if let Some(stack_rules::StripeCacheSmall {
            severity,
            size,
            rule,
            to,
        }) = stack_rules::stripe_cache_small(md.stripe_cache_size, g.chunk)
        {
            out.push(Finding {
                settings: vec![Setting::new(&d.name, "md/stripe_cache_size", to)],
                id: "stripe-cache-small".into(),
                check: "parity".into(),
                severity: severity.into(),
                devices: vec![d.name.clone()],
                title: format!(
                    "{}'s stripe cache holds {size} stripe heads, below 4 × chunk / 4096 + 1 = {rule}",
                    d.name
                ),
                evidence: vec![
                    format!("{sys}/block/{}/md/stripe_cache_size is {size}", d.name),
                    format!("chunk {} ({})", kib(chunk), g.describe()),
                ],
                meaning: "writes wait for free stripe heads, and full-stripe writes cannot be gathered: parity is read and rewritten instead".into(),
                fix: vec![format!(
                    "echo {to} > /sys/block/{}/md/stripe_cache_size   # {} of memory ({} members × 4 KiB per head)",
                    d.name,
                    crate::base::units::fmt_bytes(stack_rules::stripe_cache_memory(to, g.members)),
                    g.members
                )],
                persist: vec![udev_rule(d, "md/stripe_cache_size", &to.to_string(), "60-md-stripe-cache.rules")],
                gain: Some(Gain {
                    what: format!("measure it: stripebench sweep --param stripe_cache_size={size},{to} --rw write --allow-destructive /dev/{}", d.name),
                    before_bytes_per_sec: None,
                    after_bytes_per_sec: None,
                    pct: None,
                    measured: false,
                }),
            });
        }
        if let Some(severity) = stack_rules::parity_one_thread(md.group_thread_cnt, g.members) {
            out.push(Finding {
                settings: Vec::new(),
                id: "parity-one-thread".into(),
                check: "parity".into(),
                severity: severity.into(),
                devices: vec![d.name.clone()],
                title: format!("{}'s parity is computed by one thread (group_thread_cnt 0)", d.name),
                evidence: vec![format!("{sys}/block/{}/md/group_thread_cnt is 0", d.name)],
                meaning: "on fast members, one raid5d thread can be the ceiling of writes".into(),
                fix: vec![format!("stripebench sweep --param group_thread_cnt=0,2,4 --rw write --allow-destructive /dev/{}   # then echo N > /sys/block/{}/md/group_thread_cnt", d.name, d.name)],
                persist: Vec::new(),
                gain: None,
            });
        }
    }
    out
}

/// The slow-member check: compare's verdict (`analysis::slow_member::judge`)
/// over each member's runs read together (`samples`, by device node, in
/// stripe order); each member it flags is a finding with its figures beside
/// the median's. `crowded`: (workers, CPUs) when the members outnumbered
/// the CPUs, which widens the verdict's floor.
pub fn slow_members(
    topo: &Topology,
    samples: &[(String, Vec<crate::analysis::slow_member::Sample>)],
    crowded: Option<(usize, usize)>,
) -> (crate::document::compare::Verdict, Vec<Finding>) {
    use crate::analysis::slow_member::{judge, Figure};
    let members = topo.stripe_members();
    // A member md is rebuilding (or failed) is busy, not slow: never judged.
    let health = topo.root.md_health();
    let excused = |path: &str| {
        health.as_ref().is_some_and(|h| {
            members
                .iter()
                .any(|d| d.path == path && h.excused(&d.name).is_some())
        })
    };
    let figures: Vec<(String, Option<Figure>)> = samples
        .iter()
        .filter(|(m, _)| !excused(m))
        .map(|(m, s)| (m.clone(), Figure::of(m, s)))
        .collect();
    let v = judge(&figures, "together", crowded);
    let mb = |b: f64| format!("{:.1} MB/s", mb_per_sec(b));
    let ms = |ns: f64| format!("{:.1} ms", ns / 1e6);
    let mut out = Vec::new();
    for f in &v.flagged {
        let dev = members.iter().find(|d| d.path == f.member);
        let name = dev.map_or(f.member.clone(), |d| d.name.clone());
        let fig = figures
            .iter()
            .find(|(m, _)| *m == f.member)
            .and_then(|(_, fg)| fg.as_ref());
        let (figure, median, threshold) = if f.by == "rate" {
            (mb(f.figure), mb(f.median), mb(f.threshold))
        } else {
            (ms(f.figure), ms(f.median), ms(f.threshold))
        };
        let mut evidence = vec![format!(
            "{name}: {} {figure}; the median member {median}; flagged {} {threshold}",
            if f.by == "rate" {
                "reads at"
            } else {
                "has a p99 of"
            },
            if f.by == "rate" { "below" } else { "above" }
        )];
        if let Some(fg) = fig {
            evidence.push(format!(
                "{name} over {} runs: {} to {}{}",
                fg.runs,
                mb(fg.range.0),
                mb(fg.range.1),
                fg.p99_ns
                    .map_or(String::new(), |p| format!(", p99 {}", ms(p)))
            ));
        }
        evidence.push(format!(
            "every member: {}",
            figures
                .iter()
                .filter_map(|(m, fg)| fg.as_ref().map(|fg| (m, fg)))
                .map(|(m, fg)| {
                    let n = members
                        .iter()
                        .find(|d| d.path == *m)
                        .map_or(m.as_str(), |d| d.name.as_str());
                    format!("{n} {}", mb(fg.bytes_per_sec))
                })
                .collect::<Vec<_>>()
                .join(", ")
        ));
        evidence.push(v.rule.clone());
        if let Some(c) = &v.caveat {
            evidence.push(c.clone());
        }
        let fix = match dev.and_then(|d| d.dm.as_ref()) {
            Some(dm) => vec![format!("dmsetup table {}; dmsetup status {}   # what stands in front of this member", sh(&dm.name), sh(&dm.name))],
            None => vec![format!("smartctl -x {}   # errors, reallocated or pending sectors, link speed; then replace it or move it to another port", sh(&f.member))],
        };
        let n = members.len() as f64;
        out.push(Finding {
            settings: Vec::new(),
            id: "slow-member".into(),
            check: "slow-members".into(),
            severity: rules::SLOW_MEMBER_SEVERITY.into(),
            devices: vec![name.clone()],
            title: format!(
                "member {name} is slow: {} {figure} against the median member's {median}",
                if f.by == "rate" { "it reads at" } else { "its p99 is" }
            ),
            evidence,
            meaning: "a read of a full stripe ends when its slowest member's chunk arrives: the whole volume moves at this member's pace".into(),
            fix,
            persist: Vec::new(),
            gain: (f.by == "rate").then(|| {
                let g = rules::slow_member_gain(f.figure, f.median, n);
                Gain {
                    what: format!(
                        "estimated: full-stripe reads move at {} members × the slowest rate; with {name} at the median, up to {} members × {median}",
                        n, n
                    ),
                    before_bytes_per_sec: Some(g.before),
                    after_bytes_per_sec: Some(g.after),
                    pct: g.pct,
                    measured: false,
                }
            }),
        });
    }
    (v.into(), out)
}

/// What a member's counters said of the O_DIRECT full-stripe reads: it
/// received its chunk-sized pieces as smaller requests (`member`, the
/// average request in bytes, the piece, the queue limit that explains it).
pub type Split = (String, u64, u64, String);

/// The measured request sizes: a member with a request-limits finding
/// gets them as its evidence; a member split by what no static check
/// named (a limit nobody told us about) is a finding of its own.
pub fn measured_splits(findings: &mut Vec<Finding>, splits: &[Split]) {
    for (m, avg, piece, why) in splits {
        let line = format!(
            "measured: O_DIRECT full-stripe reads of the volume reached {m} as requests of {} on average, for pieces of {}",
            kib(*avg),
            kib(*piece)
        );
        match findings
            .iter_mut()
            .find(|f| f.check == "request-limits" && f.devices.contains(m))
        {
            Some(f) => f.evidence.push(line),
            None => findings.push(Finding {
                settings: Vec::new(),
                id: "request-split-measured".into(),
                check: "request-limits".into(),
                severity: rules::UNEXPLAINED_SPLIT_SEVERITY.into(),
                devices: vec![m.clone()],
                title: format!(
                    "member {m} receives the chunk ({}) as requests of {} on average",
                    kib(*piece),
                    kib(*avg)
                ),
                evidence: vec![line, format!("why: {why}")],
                meaning: format!("something between the array and {m} splits each chunk: more requests for the same bytes"),
                fix: vec![format!("cat /sys/block/{m}/queue/max_sectors_kb /sys/block/{m}/queue/max_segments /sys/block/{m}/queue/max_segment_size   # the limit below the chunk; raise it, or use a chunk it takes whole")],
                persist: Vec::new(),
                gain: None,
            }),
        }
    }
}

/// Whether finding `id` is about one member's settings, whose fix the
/// battery measures by making it for one request run: a request limit
/// below the chunk, a setting that differs from the other members'.
pub fn member_fix(id: &str) -> bool {
    id == "request-split" || (id.starts_with("member-") && id.ends_with("-differs"))
}

/// The member fixes' measured gain: the full-stripe O_DIRECT read run at
/// the members' settings, and again with every member fix made (then put
/// back); each finding whose fix was made gets the pair.
pub fn member_fix_gain(findings: &mut [Finding], measured: &[super::Measurement]) {
    let run = |current: bool| {
        measured
            .iter()
            .find(|m| m.check == "request-limits" && m.current == current && !m.partial)
    };
    let (Some(before), Some(after)) = (run(true), run(false)) else {
        return;
    };
    let made: Vec<String> = findings
        .iter()
        .filter(|f| member_fix(&f.id))
        .flat_map(|f| f.settings.iter().filter(|s| s.appliable()))
        .map(|s| format!("{} {}={}", s.device, s.attribute, s.value))
        .collect();
    let change = rules::Change::of(before.bytes_per_sec, after.bytes_per_sec);
    for f in findings
        .iter_mut()
        .filter(|f| member_fix(&f.id) && f.settings.iter().any(super::Setting::appliable))
    {
        f.gain = Some(Gain {
            what: format!(
                "O_DIRECT full-stripe reads of the volume, with the members' fixes made for one run ({}), then put back",
                made.join(", ")
            ),
            before_bytes_per_sec: Some(change.before),
            after_bytes_per_sec: Some(change.after),
            pct: change.pct,
            measured: true,
        });
    }
}

/// Seed 004's question: one buffered thread on the volume (the read-ahead
/// run at the array's own value) against one O_DIRECT worker per member
/// read together (the slow-member runs), with the CPU seconds per GB that
/// tell why. A property of the page cache, not a fault: info, with what a
/// reader that needs the array's rate does instead. The comparison is
/// `analysis::advise::buffered_direct`'s; this gathers and words it.
pub fn buffered_direct(topo: &Topology, measured: &[super::Measurement]) -> Option<Finding> {
    let whole = |check: &str| -> Vec<rules::Rate> {
        measured
            .iter()
            .filter(|m| m.check == check && m.current && !m.partial)
            .map(|m| rules::Rate {
                bytes_per_sec: m.bytes_per_sec,
                cpu_sec_per_gb: m.cpu_sec_per_gb,
            })
            .collect()
    };
    let rules::BufferedDirect {
        buffered: b,
        direct: d,
        buffered_cpu: b_cpu,
        direct_cpu: d_cpu,
        ratio,
        cpu_ratio,
    } = rules::buffered_direct(&whole("readahead"), &whole("slow-members"))?;
    let n = topo.stripe_members().len();
    let vol = &topo.root.name;
    let cpu = |c: Option<f64>| c.map_or("?".to_string(), |c| format!("{c:.2}"));
    Some(Finding {
        id: "buffered-direct-gap".into(),
        check: "buffered-direct".into(),
        severity: rules::BUFFERED_DIRECT_SEVERITY.into(),
        devices: vec![vol.clone()],
        title: format!(
            "one buffered reader gets {:.1} MB/s from {vol}; one O_DIRECT worker per member, {n} together, {:.1} MB/s ({ratio:.1} ×)",
            mb_per_sec(b),
            mb_per_sec(d)
        ),
        evidence: vec![
            format!(
                "buffered sequential reads of /dev/{vol}, one thread, 128 KiB requests, at the array's read-ahead: {:.1} MB/s, {} CPU s/GB",
                mb_per_sec(b),
                cpu(b_cpu)
            ),
            format!(
                "O_DIRECT sequential 1 MiB reads, one worker per member, {n} at once: {:.1} MB/s, {} CPU s/GB",
                mb_per_sec(d),
                cpu(d_cpu)
            ),
        ],
        meaning: format!(
            "a single buffered stream (cp, dd, a backup) is bound by one thread copying through the page cache and by read-ahead; the members together give {ratio:.1} × as much{}",
            cpu_ratio.map_or(String::new(), |r| format!(
                ", and the buffered reader spends {r:.1} × the CPU per byte"
            ))
        ),
        fix: vec![
            format!("readers that need the array's rate: O_DIRECT, one stream per member (stripebench run --direct --members /dev/{vol} shows what it gives)"),
            "one buffered stream: a read-ahead of several full stripes (see readahead), and large reads".into(),
        ],
        persist: Vec::new(),
        gain: None,
        settings: Vec::new(),
    })
}

/// The volume's queue-depth knee from the queue-depth runs: the least depth
/// that reached `KNEE_SHARE` of the best IOPS (`analysis::advise::queue_knee`),
/// and what the deepest run paid in p99 for what it gained beyond it.
/// Info: what to run the array at, not a fault.
pub fn queue_knee(topo: &Topology, measured: &[super::Measurement]) -> Option<Finding> {
    let runs = measured
        .iter()
        .filter(|m| m.check == "queue-depth" && !m.partial)
        .filter_map(|m| {
            Some(rules::DepthPoint {
                depth: m.setting.strip_prefix("iodepth=")?.parse().ok()?,
                iops: m.iops?,
                p99_ns: m.p99_ns,
            })
        })
        .collect();
    let rules::QueueKnee {
        points,
        knee,
        deepest,
    } = rules::queue_knee(runs)?;
    let vol = &topo.root.name;
    let ms = |ns: Option<u64>| ns.map_or("?".to_string(), |n| format!("{:.2} ms", n as f64 / 1e6));
    let beyond = if deepest.depth > knee.depth {
        format!(
            "; at {} in flight it made {:+.0}% I/Os per second for a p99 of {} (at {}: {})",
            deepest.depth,
            (deepest.iops / knee.iops - 1.0) * 100.0,
            ms(deepest.p99_ns),
            knee.depth,
            ms(knee.p99_ns)
        )
    } else {
        " (the deepest measured: the knee may lie deeper)".to_string()
    };
    Some(Finding {
        id: "queue-depth-knee".into(),
        check: "queue-depth".into(),
        severity: rules::QUEUE_KNEE_SEVERITY.into(),
        devices: vec![vol.clone()],
        title: format!(
            "{vol} reaches {:.0}% of its best random 4 KiB read rate at {} I/Os in flight ({:.0} IOPS){beyond}",
            rules::KNEE_SHARE * 100.0,
            knee.depth,
            knee.iops
        ),
        evidence: points
            .iter()
            .map(|p| format!("iodepth {}: {:.0} IOPS, p99 {}", p.depth, p.iops, ms(p.p99_ns)))
            .collect(),
        meaning: format!(
            "past {} I/Os in flight the array queues rather than works: latency grows with little more throughput",
            knee.depth
        ),
        fix: vec![format!(
            "run random I/O on {vol} at about {} in flight in all (stripebench run --rw randread --iodepth {} --direct /dev/{vol} confirms it)",
            knee.depth, knee.depth
        )],
        persist: Vec::new(),
        gain: None,
        settings: Vec::new(),
    })
}

/// The write runs (parity RAID, --allow-destructive): full-stripe writes
/// that made the members read are read-modify-write where there should be
/// none (medium); chunk-sized random writes show what a sub-stripe write
/// costs (info); and the stripe cache's finding gets its measured gain.
pub fn writes_findings(
    topo: &Topology,
    findings: &mut Vec<Finding>,
    measured: &[super::Measurement],
) {
    let runs: Vec<&super::Measurement> = measured
        .iter()
        .filter(|m| m.check == "writes" && !m.partial)
        .collect();
    if runs.is_empty() {
        return;
    }
    let vol = &topo.root.name;
    let mib = |b: Option<u64>| {
        b.map_or("?".to_string(), |b| {
            format!("{:.1} MiB", b as f64 / 1048576.0)
        })
    };
    let full_now = runs
        .iter()
        .find(|m| m.current && m.setting.starts_with("full-stripe"));
    let random = runs.iter().find(|m| m.setting.starts_with("random"));
    // The stripe cache's fix, measured.
    let at_fix = runs
        .iter()
        .find(|m| !m.current && m.setting.starts_with("full-stripe"));
    let figures = |m: &&super::Measurement| rules::WriteRun {
        bytes: m.bytes,
        members_read: m.members_read_bytes,
        bytes_per_sec: m.bytes_per_sec,
    };
    let verdict = rules::writes(
        full_now.map(figures),
        random.map(figures),
        at_fix.map(figures),
    );
    if let Some(f) = full_now {
        if let Some((severity, share)) = verdict.full_stripe_rmw {
            findings.push(Finding {
                id: "rmw-full-stripe".into(),
                check: "writes".into(),
                severity: severity.into(),
                devices: vec![vol.clone()],
                title: format!("full-stripe writes to {vol} made its members read {:.0}% of what was written: read-modify-write where a full stripe needs none", share * 100.0),
                evidence: vec![format!(
                    "O_DIRECT full-stripe sequential writes ({}): {} written at {:.1} MB/s; the members read {}",
                    f.setting,
                    mib(f.bytes),
                    mb_per_sec(f.bytes_per_sec),
                    mib(f.members_read_bytes)
                )],
                meaning: "the array cannot gather whole stripes: its stripe cache is too small for them, or the writes do not reach it on stripe boundaries (a layer above it offset from the full stripe); every write then reads old data or parity first".into(),
                // `--bs` only of a full stripe known: "--bs 0" is refused.
                fix: vec![format!("see stripe-cache-small and the alignment findings for /dev/{vol}; stripebench sweep --param stripe_cache_size=256,1024,4096 --rw write --direct{} --align stripe --allow-destructive /dev/{vol} measures the cache", topo_full_stripe(topo).map_or(String::new(), |b| format!(" --bs {}", crate::base::units::fmt_size_arg(b))))],
                persist: Vec::new(),
                gain: None,
                settings: Vec::new(),
            });
        }
    }
    if let (Some(r), Some(f), Some((severity, share))) = (random, full_now, verdict.sub_stripe) {
        findings.push(Finding {
            id: "rmw-sub-stripe".into(),
            check: "writes".into(),
            severity: severity.into(),
            devices: vec![vol.clone()],
            title: format!(
                "writes smaller than a full stripe cost {vol} a read-modify-write: random chunk-sized writes ran at {:.1} MB/s against {:.1} MB/s for full stripes",
                mb_per_sec(r.bytes_per_sec),
                mb_per_sec(f.bytes_per_sec)
            ),
            evidence: vec![
                format!("random chunk-sized writes: {} written, the members read {}{}", mib(r.bytes), mib(r.members_read_bytes), share.map_or(String::new(), |s| format!(" ({:.0}% of it)", s * 100.0))),
                format!("full-stripe writes: {} written, the members read {}", mib(f.bytes), mib(f.members_read_bytes)),
            ],
            meaning: "parity RAID rewrites parity for every write: a write of less than a full stripe first reads the old data and parity (or the rest of the stripe)".into(),
            fix: vec!["write in full stripes where the writer allows it (large sequential writes, a file system with its stripe hints set, a database page or log write size of a full stripe)".into()],
            persist: Vec::new(),
            gain: None,
            settings: Vec::new(),
        });
    }
    // The stripe cache's finding: its fix measured.
    if let (Some(now), Some(fixed), Some(change)) = (full_now, at_fix, verdict.cache_gain) {
        if let Some(f) = findings.iter_mut().find(|f| f.id == "stripe-cache-small") {
            let to = fixed.setting.rsplit('=').next().unwrap_or("?").to_string();
            let from = now.setting.rsplit('=').next().unwrap_or("?").to_string();
            f.gain = Some(Gain {
                what: format!(
                    "O_DIRECT full-stripe writes of /dev/{vol}: stripe_cache_size {from} → {to}"
                ),
                before_bytes_per_sec: Some(change.before),
                after_bytes_per_sec: Some(change.after),
                pct: change.pct,
                measured: true,
            });
        }
    }
}

/// The full stripe of the volume's striping layer, bytes.
fn topo_full_stripe(topo: &Topology) -> Option<u64> {
    striping(topo)?.1.full_stripe
}
