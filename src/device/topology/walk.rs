//! Walking sysfs down from one device: partitions, loops, md (slot
//! order), dm (the table's order and chunk), btrfs, and the leaves'
//! attributes.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::*;

/// A sysfs attribute, trimmed: a page at most (what sysfs shows of one;
/// a fixture tree's file is cut there too), so a hostile or endless file
/// costs no more than that.
pub(super) fn read_trim(p: &Path) -> Option<String> {
    use std::io::Read;
    let mut buf = Vec::new();
    fs::File::open(p)
        .ok()?
        .take(4096)
        .read_to_end(&mut buf)
        .ok()?;
    Some(String::from_utf8_lossy(&buf).trim().to_string())
}

pub(super) fn read_num<T: std::str::FromStr>(p: &Path) -> Option<T> {
    read_trim(p)?.parse().ok()
}

pub(super) fn parse_dev(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

impl Sources {
    pub(super) fn sys_dev(&self, (ma, mi): (u64, u64)) -> PathBuf {
        self.host.block_dev((ma, mi))
    }

    pub(super) fn class(&self, name: &str) -> PathBuf {
        self.host.class_block().join(name)
    }

    pub(super) fn name_of(&self, dev: (u64, u64)) -> Option<String> {
        let link = fs::read_link(self.sys_dev(dev)).ok()?;
        Some(link.file_name()?.to_string_lossy().into_owned())
    }

    /// Builds the device `name` and everything under it.
    pub(super) fn device(&self, name: &str, depth: usize) -> Result<Device> {
        if depth > 16 {
            anyhow::bail!("the stack under {name} is deeper than 16 levels: a loop in sysfs?");
        }
        let dir = self.class(name);
        let dev = read_trim(&dir.join("dev")).unwrap_or_default();
        let is_partition = dir.join("partition").exists();
        let parent = is_partition
            .then(|| {
                fs::canonicalize(&dir)
                    .ok()?
                    .parent()?
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .flatten();
        let queue_dir = match &parent {
            Some(p) => self.class(p).join("queue"),
            None => dir.join("queue"),
        };
        let mut d = Device {
            name: name.to_string(),
            dev,
            path: format!("/dev/{name}"),
            kind: "disk".into(),
            parent: parent.clone(),
            md: None,
            dm: None,
            btrfs: None,
            leaf: None,
            queue: crate::device::queue::QueueLimits::read(&queue_dir),
            members: Vec::new(),
            geometry: None,
        };
        let mut member_names: Vec<String> = Vec::new();
        if is_partition {
            d.kind = "partition".into();
        } else if dir.join("loop").is_dir() {
            d.kind = "loop".into();
        } else if dir.join("md").is_dir() {
            d.kind = "md".into();
            let md = dir.join("md");
            let info = MdInfo {
                level: read_trim(&md.join("level")).unwrap_or_default(),
                raid_disks: read_num(&md.join("raid_disks")).unwrap_or(0),
                chunk_size: read_num(&md.join("chunk_size")).filter(|&c: &u64| c > 0),
                layout: read_num(&md.join("layout")),
                state: None,
            };
            // rd0, rd1, ... link to dev-<member>: the member order.
            let mut slots: Vec<(u32, String)> = fs::read_dir(&md)
                .map(|rd| {
                    rd.flatten()
                        .filter_map(|e| {
                            let n = e.file_name().to_string_lossy().into_owned();
                            let slot = n.strip_prefix("rd")?.parse().ok()?;
                            let target = fs::read_link(e.path()).ok()?;
                            let member = target
                                .file_name()?
                                .to_string_lossy()
                                .strip_prefix("dev-")?
                                .to_string();
                            Some((slot, member))
                        })
                        .collect()
                })
                .unwrap_or_default();
            slots.sort();
            let mut state = md_state(&md, info.raid_disks, &slots);
            // md/sync_completed moves in sixteenths of the array: how far
            // the resync is now comes from /proc/mdstat's progress line.
            if let Some(p) = crate::device::mdstat::progress(&self.host.proc, &d.name) {
                state.sync_completed = Some((p.done_kib * 2, p.total_kib * 2));
            }
            member_names = slots.into_iter().map(|(_, m)| m).collect();
            let mut g =
                level::Geometry::md(&info.level, info.raid_disks, info.chunk_size, info.layout);
            // Where each member's data begins (`dev-X/offset`, sectors):
            // a volume offset on a member is past it.
            g.member_offsets = member_names
                .iter()
                .map(|m| read_num::<u64>(&md.join(format!("dev-{m}/offset"))).unwrap_or(0) * 512)
                .collect();
            if g.member_offsets.iter().all(|&o| o == 0) {
                g.member_offsets.clear();
            }
            d.geometry = Some(g);
            d.md = Some(MdInfo {
                state: Some(state),
                ..info
            });
        } else if dir.join("dm").is_dir() {
            d.kind = "dm".into();
            let dm_name = read_trim(&dir.join("dm/name")).unwrap_or_default();
            let (info, order, geometry) = self.dm_geometry(&dm_name, &queue_dir);
            d.dm = Some(info);
            d.geometry = geometry;
            member_names = order
                .into_iter()
                .filter_map(|dv| self.name_of(dv))
                .collect();
        }
        if member_names.is_empty() && !is_partition {
            let mut slaves: Vec<String> = fs::read_dir(dir.join("slaves"))
                .map(|rd| {
                    rd.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            slaves.sort();
            member_names = slaves;
        }
        for m in &member_names {
            d.members.push(self.device(m, depth + 1)?);
        }
        if d.members.is_empty() {
            d.leaf = Some(LeafInfo {
                size: read_num::<u64>(&dir.join("size")).unwrap_or(0) * 512,
                logical_block_size: read_num(&queue_dir.join("logical_block_size")).unwrap_or(512),
                physical_block_size: read_num(&queue_dir.join("physical_block_size"))
                    .unwrap_or(512),
                rotational: read_num::<u8>(&queue_dir.join("rotational")).map(|r| r == 1),
                scheduler: read_trim(&queue_dir.join("scheduler")).map(|s| {
                    s.split_whitespace()
                        .find(|w| w.starts_with('['))
                        .map_or(s.clone(), |w| {
                            w.trim_matches(|c| c == '[' || c == ']').to_string()
                        })
                }),
                read_ahead_kb: read_num(&queue_dir.join("read_ahead_kb")),
                numa_node: read_num(
                    &self
                        .class(parent.as_deref().unwrap_or(name))
                        .join("device/numa_node"),
                ),
            });
        }
        Ok(d)
    }

    /// A dm device's target, chunk, member order and geometry, from the
    /// table when there is one, else from the queue limits.
    pub(super) fn dm_geometry(
        &self,
        dm_name: &str,
        queue: &Path,
    ) -> (DmInfo, Vec<(u64, u64)>, Option<level::Geometry>) {
        // Every segment of the device: "name: start length target args...".
        let segments: Vec<Vec<String>> = self
            .dm_table
            .as_deref()
            .map(|t| {
                t.lines()
                    .filter_map(|l| {
                        let (n, rest) = l.split_once(':')?;
                        (n.trim() == dm_name)
                            .then(|| rest.split_whitespace().map(str::to_string).collect())
                    })
                    .collect()
            })
            .unwrap_or_default();
        if let Some(target) = segments.first().and_then(|f| f.get(2)).cloned() {
            let mut chunk = None;
            let mut geometry = None;
            let mut order: Vec<(u64, u64)> = Vec::new();
            for f in &segments {
                let args = &f[3.min(f.len())..];
                let t = f.get(2).map(String::as_str);
                let devs: Vec<&String> = match t {
                    Some("striped") => {
                        let c = args
                            .get(1)
                            .and_then(|c| c.parse::<u64>().ok())
                            .map(|s| s * 512);
                        chunk = chunk.or(c);
                        // One segment maps offsets; an LV extended over
                        // several has a stripe per segment.
                        if segments.len() == 1 {
                            geometry = striped_geometry(args, c);
                        }
                        args.iter().skip(2).step_by(2).collect()
                    }
                    Some("raid") => {
                        let raid = parse_dm_raid(args);
                        chunk = chunk.or(raid.as_ref().and_then(|r| r.0.chunk));
                        match raid {
                            Some((g, data)) => {
                                if geometry.is_none() && segments.len() == 1 {
                                    geometry = Some(g);
                                }
                                data
                            }
                            None => args.iter().filter(|a| a.contains(':')).collect(),
                        }
                    }
                    Some("mirror") => match parse_dm_mirror(args) {
                        Some(legs) => {
                            if segments.len() == 1 {
                                geometry = Some(level::Geometry::mirror(legs.len() as u32));
                            }
                            legs
                        }
                        None => args.iter().filter(|a| a.contains(':')).collect(),
                    },
                    _ => args.iter().filter(|a| a.contains(':')).collect(),
                };
                for d in devs.into_iter().filter_map(|d| parse_dev(d)) {
                    if !order.contains(&d) {
                        order.push(d);
                    }
                }
            }
            return (
                DmInfo {
                    name: dm_name.into(),
                    target: Some(target),
                    chunk_size: chunk,
                    source: "dm table".into(),
                },
                order,
                geometry,
            );
        }
        let min_io: Option<u64> = read_num(&queue.join("minimum_io_size"));
        let opt_io: Option<u64> = read_num(&queue.join("optimal_io_size"));
        // A striped volume advertises its chunk as minimum_io_size and its
        // full stripe as optimal_io_size (a multiple of the chunk, > it).
        let striped =
            matches!((min_io, opt_io), (Some(m), Some(o)) if m > 512 && o > m && o % m == 0);
        (
            DmInfo {
                name: dm_name.into(),
                target: striped.then(|| "striped".to_string()),
                chunk_size: if striped { min_io } else { None },
                source: "queue limits".into(),
            },
            Vec::new(),
            None,
        )
    }

    /// A btrfs file system by uuid: its members and profile.
    pub(super) fn btrfs(&self, uuid: &str) -> Result<Device> {
        let dir = self.host.sys.join("fs/btrfs").join(uuid);
        let mut names: Vec<String> = fs::read_dir(dir.join("devices"))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        // By name: a btrfs chunk picks its own stripe order among the members.
        names.sort();
        let profile = fs::read_dir(dir.join("allocation/data"))
            .ok()
            .and_then(|rd| {
                rd.flatten()
                    .filter(|e| e.path().is_dir())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .find(|n| n.starts_with("raid") || n == "single" || n == "dup")
            });
        let mut d = Device {
            name: format!("btrfs:{uuid}"),
            dev: String::new(),
            path: String::new(),
            kind: "btrfs".into(),
            parent: None,
            md: None,
            dm: None,
            btrfs: Some(BtrfsInfo {
                uuid: uuid.into(),
                data_profile: profile,
                stripe_len: 64 << 10,
            }),
            leaf: None,
            queue: None,
            members: Vec::new(),
            geometry: None,
        };
        for n in &names {
            d.members.push(self.device(n, 1)?);
        }
        // Only raid0 is a plain stripe; btrfs places each chunk of the
        // other profiles on devices of its choosing.
        if d.btrfs.as_ref().and_then(|b| b.data_profile.as_deref()) == Some("raid0") {
            d.geometry = Some(level::Geometry::striped(d.members.len() as u32, 64 << 10));
        }
        Ok(d)
    }

    /// The btrfs file system that has block device `name` as a member.
    pub(super) fn btrfs_with_member(&self, name: &str) -> Option<String> {
        fs::read_dir(self.host.sys.join("fs/btrfs"))
            .ok()?
            .flatten()
            .find_map(|e| {
                e.path()
                    .join("devices")
                    .join(name)
                    .exists()
                    .then(|| e.file_name().to_string_lossy().into_owned())
            })
    }
}

/// A dm `striped` table's geometry: `<#stripes> <chunk> (<dev> <offset>)...`,
/// the offsets (sectors) being where each member's data begins.
fn striped_geometry(args: &[String], chunk: Option<u64>) -> Option<level::Geometry> {
    let n: u32 = args.first()?.parse().ok()?;
    let mut g = level::Geometry::striped(n, chunk?);
    g.member_offsets = args
        .iter()
        .skip(3)
        .step_by(2)
        .map(|o| o.parse::<u64>().unwrap_or(0) * 512)
        .collect();
    if g.member_offsets.iter().all(|&o| o == 0) {
        g.member_offsets.clear();
    }
    Some(g)
}

/// A dm-raid table (Documentation/admin-guide/device-mapper/dm-raid.rst):
/// `<raid_type> <#raid_params> <chunk_size> [<key> <value>|sync|nosync]...
/// <#raid_devs> (<metadata_dev> <data_dev>)...`. Returns the geometry and
/// the data devices only: LVM puts an rmeta and an rimage of each leg on
/// the same PV, and listing both would show each disk twice.
fn parse_dm_raid(args: &[String]) -> Option<(level::Geometry, Vec<&String>)> {
    let raid_type = args.first()?;
    let nparams: usize = args.get(1)?.parse().ok()?;
    let params = args.get(2..2 + nparams)?;
    let chunk = params
        .first()
        .and_then(|c| c.parse::<u64>().ok())
        .map(|s| s * 512)
        .filter(|&c| c > 0);
    let mut format = None;
    let mut copies = None;
    let mut data_offset = 0;
    let mut i = 1;
    while i < params.len() {
        match params[i].as_str() {
            // The flags without a value.
            "sync" | "nosync" => i += 1,
            key => {
                let value = params.get(i + 1).map(String::as_str);
                match (key, value) {
                    ("raid10_format", Some(v)) => format = Some(v),
                    ("raid10_copies", Some(v)) => copies = v.parse().ok(),
                    ("data_offset", Some(v)) => data_offset = v.parse::<u64>().unwrap_or(0) * 512,
                    _ => {}
                }
                i += 2;
            }
        }
    }
    let ndevs: usize = args.get(2 + nparams)?.parse().ok()?;
    let pairs = args.get(3 + nparams..3 + nparams + 2 * ndevs)?;
    let data: Vec<&String> = pairs.iter().skip(1).step_by(2).collect();
    let mut g = level::Geometry::dm_raid(raid_type, ndevs as u32, chunk, format, copies)?;
    if data_offset > 0 {
        g.member_offsets = vec![data_offset; ndevs];
    }
    Some((g, data))
}

/// A dm `mirror` table: `<log_type> <#log_args> <log_args>... <#devs>
/// (<dev> <offset>)... [<#features> <features>...]`; the legs, without
/// the log device.
fn parse_dm_mirror(args: &[String]) -> Option<Vec<&String>> {
    let nlog: usize = args.get(1)?.parse().ok()?;
    let ndevs: usize = args.get(2 + nlog)?.parse().ok()?;
    let legs = args.get(3 + nlog..3 + nlog + 2 * ndevs)?;
    Some(legs.iter().step_by(2).collect())
}

/// The most `md/dev-*` entries read: md allows at most a few thousand
/// devices in an array.
const MD_DEVS_MAX: usize = 4096;

/// An md array's state (`md/`), its devices (`md/dev-*`) in slot order
/// and the slots of `raid_disks` that none holds. `slots`: the `rdN`
/// links (slot, member), which say what holds each slot.
pub(super) fn md_state(md: &Path, raid_disks: u32, slots: &[(u32, String)]) -> MdState {
    let word = |name: &str| read_trim(&md.join(name)).filter(|s| !s.is_empty());
    let mut members: Vec<MdMember> = fs::read_dir(md)
        .map(|rd| {
            rd.flatten()
                .take(MD_DEVS_MAX)
                .filter_map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    let name = n.strip_prefix("dev-")?.to_string();
                    let dir = e.path();
                    let slot = slots
                        .iter()
                        .find(|(_, m)| *m == name)
                        .map(|(k, _)| *k)
                        .or_else(|| read_num(&dir.join("slot")));
                    Some(MdMember {
                        slot,
                        state: read_trim(&dir.join("state"))
                            .map(|s| {
                                s.split(',')
                                    .map(|w| w.trim().to_string())
                                    .filter(|w| !w.is_empty())
                                    .collect()
                            })
                            .unwrap_or_default(),
                        recovery_start: read_num(&dir.join("recovery_start")),
                        name,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    members.sort_by(|a, b| {
        (a.slot.is_none(), a.slot, &a.name).cmp(&(b.slot.is_none(), b.slot, &b.name))
    });
    let missing_slots = if slots.is_empty() {
        // No rdN at all (an inactive array, or a tree without them): say nothing.
        Vec::new()
    } else {
        (0..raid_disks.min(MD_DEVS_MAX as u32))
            .filter(|s| slots.iter().all(|(k, _)| k != s))
            .collect()
    };
    MdState {
        array_state: word("array_state"),
        degraded: read_num(&md.join("degraded")),
        sync_action: word("sync_action"),
        sync_completed: word("sync_completed").and_then(|s| parse_completed(&s)),
        sync_speed: read_num(&md.join("sync_speed")),
        sync_speed_min: word("sync_speed_min").and_then(|s| parse_limit(&s)),
        sync_speed_max: word("sync_speed_max").and_then(|s| parse_limit(&s)),
        members,
        missing_slots,
    }
}

/// `md/sync_completed`: "done / total" sectors; "none" when none runs.
fn parse_completed(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.split_once('/')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// The resync speed limit in the file `path` (`md/sync_speed_min` or `_max`).
pub fn read_limit(path: &Path) -> Option<SpeedLimit> {
    read_trim(path).and_then(|s| parse_limit(&s))
}

/// `md/sync_speed_min`/`_max`: "1000 (system)" or "200 (local)".
fn parse_limit(s: &str) -> Option<SpeedLimit> {
    let mut w = s.split_whitespace();
    let kb_per_sec = w.next()?.parse().ok()?;
    let source = w
        .next()
        .map(|x| x.trim_matches(|c| c == '(' || c == ')'))
        .filter(|x| *x == "system" || *x == "local")
        .unwrap_or("local")
        .to_string();
    Some(SpeedLimit { kb_per_sec, source })
}
