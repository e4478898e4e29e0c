//! Topology: the storage stack under a target, down to the leaf disks.
//!
//! A block device, a file or a mount point is resolved to its device
//! (`stat` → `/sys/dev/block/MAJ:MIN`; btrfs, whose mounts carry an
//! anonymous device number, through `/proc/self/mountinfo` and
//! `/sys/fs/btrfs/<uuid>/devices/`). From there `slaves/` is walked
//! recursively: md arrays give level, raid_disks, chunk size and member order
//! (`md/rdN`); dm devices give their name and, from a device-mapper table
//! (`dmsetup table`, or a file given with `--dm-table`), the target type,
//! chunk size and member order of `striped` and `linear` tables, else the
//! queue limits (minimum_io_size = chunk, optimal_io_size = stripe width).
//! Leaves carry size, block sizes, rotational, scheduler, read-ahead and NUMA
//! node (a partition's come from its disk).
//!
//! The host (sysfs and procfs roots, `base::host::Host`) and the table
//! source can be pointed elsewhere, so every kind of stack is tested on
//! fixture trees.

mod walk;
pub use walk::read_limit;

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use anyhow::Result;

use crate::base::error::show_path;
use crate::base::host::Host;
use crate::device::sysfs::dev_numbers;

/// Why the stack under a target cannot be shown: the user named something
/// without one (exit 2). `shown` is the target as messages show it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    #[error("cannot read the dm table {shown}: {error}")]
    DmTableUnreadable { shown: String, error: String },
    #[error("{shown} does not exist: name a block device, a file or a mount point")]
    Missing { shown: String },
    #[error("{shown} is neither a block device, a file nor a directory")]
    NotBlockFileOrDirectory { shown: String },
    #[error("{shown} is on btrfs mounted at {at}, but its members are not in /sys/fs/btrfs")]
    BtrfsWithoutMembers { shown: String, at: String },
    #[error("{shown} has no block device under it: it is on {fstype} mounted at {at}; name a block device or a file on a disk-backed file system")]
    NotOnADisk {
        shown: String,
        fstype: String,
        at: String,
    },
    #[error("{shown} has no block device under it (device {major}:{minor})")]
    NoDevice {
        shown: String,
        major: u64,
        minor: u64,
    },
}

impl crate::base::error::ExitCoded for TopologyError {
    fn exit_code(&self) -> u8 {
        crate::base::error::EXIT_USAGE
    }
}

/// Where topology is read from: the host, and the device-mapper tables
/// (which only `dmsetup` tells).
#[derive(Debug, Clone)]
pub struct Sources {
    /// sysfs for the stack, procfs for the mounts (btrfs).
    pub host: Host,
    /// `dmsetup table` output: lines `name: start length target args...`.
    pub dm_table: Option<String>,
}

impl Sources {
    /// The running system; the dm table from `dmsetup table` when dmsetup exists.
    pub fn system(dm_table_file: Option<&Path>) -> Result<Sources> {
        let dm_table = match dm_table_file {
            Some(f) => {
                Some(
                    read_dm_table(f).map_err(|error| TopologyError::DmTableUnreadable {
                        shown: show_path(f),
                        error,
                    })?,
                )
            }
            // No dm device on the machine: no table to read, and no process
            // to start (every run discovers its targets' stripe geometry).
            None if !any_dm_device() => None,
            None => std::process::Command::new("dmsetup")
                .arg("table")
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned()),
        };
        Ok(Sources {
            host: Host::real(),
            dm_table,
        })
    }
}

/// Whether any device-mapper device exists (`/sys/class/block/dm-N`).
fn any_dm_device() -> bool {
    fs::read_dir(Host::real().class_block()).is_ok_and(|rd| {
        rd.flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("dm-"))
    })
}

#[derive(Debug, Clone, PartialEq)]
pub struct MdInfo {
    pub level: String,
    pub raid_disks: u32,
    pub chunk_size: Option<u64>,
    /// `md/layout`: the raid5/6 algorithm or the raid10 near/far word
    /// (absent from documents written before it was read).
    pub layout: Option<u32>,
    /// Its state: degraded, resyncing or recovering, and each member's
    /// (absent from documents written before it was read).
    pub state: Option<MdState>,
}

/// An md array's state as `md/` shows it; what is not there reads as
/// unknown (`None`). Strings are as sysfs wrote them, trimmed: escape them
/// before printing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MdState {
    /// `md/array_state`: `clean`, `active`, `read-auto`, `inactive`, ...
    pub array_state: Option<String>,
    /// `md/degraded`: members missing or not yet in sync.
    pub degraded: Option<u32>,
    /// `md/sync_action`: `idle`, `resync`, `recover`, `check`, `repair`,
    /// `reshape`, `frozen`.
    pub sync_action: Option<String>,
    /// `md/sync_completed` (sectors done, sectors in all), when one runs.
    pub sync_completed: Option<(u64, u64)>,
    /// `md/sync_speed`: KB/s over the last seconds, when one runs.
    pub sync_speed: Option<u64>,
    /// `md/sync_speed_min` and `md/sync_speed_max`, KB/s, and whether
    /// each is the system's (`/proc/sys/dev/raid/speed_limit_*`) or the
    /// array's own ("1000 (system)" / "200 (local)").
    pub sync_speed_min: Option<SpeedLimit>,
    pub sync_speed_max: Option<SpeedLimit>,
    /// Every device md holds (`md/dev-*`), in slot order, spares last.
    pub members: Vec<MdMember>,
    /// The slots (0 to raid_disks-1) no device holds: members missing.
    pub missing_slots: Vec<u32>,
}

/// A resync speed limit, KB/s.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeedLimit {
    pub kb_per_sec: u64,
    /// `system` or `local`, as md says it.
    pub source: String,
}

/// One device of an md array (`md/dev-NAME/`).
#[derive(Debug, Clone, PartialEq)]
pub struct MdMember {
    /// Kernel name (`loop2`).
    pub name: String,
    /// `slot`: its place in the array; None for a spare (`none`).
    pub slot: Option<u32>,
    /// `state`'s words: `in_sync`, `faulty`, `spare`, `write_mostly`,
    /// `blocked`, `want_replacement`, `replacement`, ...
    pub state: Vec<String>,
    /// `recovery_start`: sectors of it rebuilt so far, while it recovers
    /// (`none` when it is in sync).
    pub recovery_start: Option<u64>,
}

impl MdState {
    /// Its health, judged (`analysis::array_state`): `raid_disks` is the
    /// array's member count.
    pub fn health(&self, raid_disks: u32) -> crate::analysis::array_state::Health {
        use crate::analysis::array_state::{judge, ArrayFacts};
        judge(&ArrayFacts {
            raid_disks,
            degraded: self.degraded,
            missing_slots: &self.missing_slots,
            sync_action: self.sync_action.as_deref(),
            sync_completed: self.sync_completed,
            sync_speed: self.sync_speed,
            speed_min: self.sync_speed_min.as_ref().map(|l| l.kb_per_sec),
            speed_max: self.sync_speed_max.as_ref().map(|l| l.kb_per_sec),
            members: self
                .members
                .iter()
                .map(|m| (m.name.as_str(), m.slot, m.state.as_slice()))
                .collect(),
        })
    }
}

impl Device {
    /// The health of the first md array going down from here (through
    /// single-member layers, such as dm-linear over md), when it shows
    /// its state; None for a stack without one.
    pub fn md_health(&self) -> Option<crate::analysis::array_state::Health> {
        let mut d = self;
        loop {
            if let Some(m) = &d.md {
                return m.state.as_ref().map(|s| s.health(m.raid_disks));
            }
            match d.members.as_slice() {
                [only] => d = only,
                _ => return None,
            }
        }
    }
}

impl MdMember {
    /// In sync: it holds what the array holds, and serves reads.
    pub fn in_sync(&self) -> bool {
        self.state.iter().any(|w| w == "in_sync") && !self.state.iter().any(|w| w == "faulty")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct DmInfo {
    pub name: String,
    /// `striped`, `linear`, ... (from the table), or null when no table was found.
    pub target: Option<String>,
    pub chunk_size: Option<u64>,
    /// Where the geometry came from: "dm table" or "queue limits".
    pub source: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BtrfsInfo {
    pub uuid: String,
    /// Data profile (`raid0`, `single`, `raid1`, ...), when sysfs shows it.
    pub data_profile: Option<String>,
    /// btrfs stripes data in 64 KiB units.
    pub stripe_len: u64,
}

/// What a leaf device is like.
#[derive(Debug, Clone, PartialEq)]
pub struct LeafInfo {
    pub size: u64,
    pub logical_block_size: u64,
    pub physical_block_size: u64,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    pub read_ahead_kb: Option<u64>,
    pub numa_node: Option<i64>,
}

/// One device of the stack.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// Kernel name (`sda1`, `md0`, `dm-0`, `loop2`), or `btrfs:<uuid>` for a btrfs file system.
    pub name: String,
    /// `MAJ:MIN` (empty for a btrfs file system).
    pub dev: String,
    /// `/dev/<name>`.
    pub path: String,
    /// `disk`, `partition`, `loop`, `md`, `dm`, `btrfs`.
    pub kind: String,
    /// For a partition: the disk it is part of.
    pub parent: Option<String>,
    pub md: Option<MdInfo>,
    pub dm: Option<DmInfo>,
    pub btrfs: Option<BtrfsInfo>,
    pub leaf: Option<LeafInfo>,
    /// The request-queue limits at this level of the stack.
    pub queue: Option<crate::device::queue::QueueLimits>,
    /// Members, in stripe order where it is known.
    pub members: Vec<Device>,
    /// What the layer does with its members (md arrays, dm `striped`,
    /// `raid` and `mirror` targets, btrfs raid0); absent when it does
    /// none of that (a disk, dm-linear) and in older documents.
    pub geometry: Option<level::Geometry>,
}

impl Device {
    /// The leaves under this device, in order (itself if it is one).
    pub fn leaves(&self) -> Vec<&Device> {
        if self.members.is_empty() {
            vec![self]
        } else {
            self.members.iter().flat_map(Device::leaves).collect()
        }
    }

    /// The devices a measurement of this volume drives as its members: those
    /// of the first striped layer going down (through layers with a single
    /// member, such as dm-linear over md), each taken whole, with whatever
    /// stands between it and its disk (dm-delay, dm-crypt, a partition):
    /// reading the disk under such a member would bypass what the volume
    /// goes through. Without a striped layer, the leaves.
    pub fn stripe_members(&self) -> Vec<&Device> {
        let mut d = self;
        loop {
            if d.is_striped() {
                return d.members.iter().collect();
            }
            match d.members.as_slice() {
                [only] => d = only,
                _ => return self.leaves(),
            }
        }
    }

    /// The chunk (stripe unit) of this device, when it stripes.
    pub fn chunk_size(&self) -> Option<u64> {
        if let Some(g) = &self.geometry {
            return g.chunk.filter(|_| g.stripes());
        }
        self.md
            .as_ref()
            .and_then(|m| m.chunk_size)
            .or(self.dm.as_ref().and_then(|d| d.chunk_size))
            .or(self.btrfs.as_ref().map(|b| b.stripe_len))
    }

    /// Its RAID geometry: the one the walk found, or, in a document written
    /// before the walk kept one, the md array's (from its level and layout).
    pub fn geometry(&self) -> Option<level::Geometry> {
        if let Some(g) = &self.geometry {
            return Some(g.clone());
        }
        let md = self.md.as_ref()?;
        Some(level::Geometry::md(
            &md.level,
            md.raid_disks,
            md.chunk_size,
            md.layout,
        ))
    }

    /// Whether it spreads data over its members in chunks: RAID0-like
    /// stripes and the parity levels (whose members are all stripe
    /// members: parity rotates over them), and raid10; not a mirror.
    pub fn is_striped(&self) -> bool {
        if let Some(g) = self.geometry() {
            return g.stripes();
        }
        let md = self.md.as_ref().is_some_and(|m| m.level == "raid0");
        let dm = self
            .dm
            .as_ref()
            .is_some_and(|d| d.target.as_deref() == Some("striped"));
        let btrfs = self
            .btrfs
            .as_ref()
            .is_some_and(|b| b.data_profile.as_deref() == Some("raid0"));
        md || dm || btrfs
    }
}

/// A target's stack.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    pub target: String,
    /// How the target led to the top device ("file on btrfs ...", ...).
    pub resolved: String,
    pub root: Device,
}

impl Topology {
    pub fn leaves(&self) -> Vec<&Device> {
        self.root.leaves()
    }

    /// What `compare` and `run --members` drive: see `Device::stripe_members`.
    pub fn stripe_members(&self) -> Vec<&Device> {
        self.root.stripe_members()
    }
}

/// The stack under the block device the kernel calls `name` (`md0`), as
/// [`discover`] finds it for its device node.
pub fn of_kernel_name(name: &str, src: &Sources) -> Result<Topology> {
    Ok(Topology {
        target: format!("/dev/{name}"),
        resolved: "block device".into(),
        root: src.device(name, 0)?,
    })
}

/// The most of a `--dm-table` file read: `dmsetup table` of thousands of
/// devices is well under it.
const DM_TABLE_MAX: u64 = 16 << 20;

/// A `--dm-table` file as an input file (`base::input::read`): a regular
/// file or a pipe (`<(dmsetup table)`), at most [`DM_TABLE_MAX`] bytes.
/// `/dev/zero` was read until memory ran out, and a FIFO with no writer
/// hung the command at open for good (it now reads as empty).
const DM_TABLE_INPUT: crate::base::input::Kind = crate::base::input::Kind {
    holds: "`dmsetup table` output",
    max: DM_TABLE_MAX,
    pipe: true,
};

/// A `--dm-table` file's text.
fn read_dm_table(f: &Path) -> Result<String, String> {
    let bytes = crate::base::input::read(f, &DM_TABLE_INPUT).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|_| "it is not text: give `dmsetup table` output".into())
}

/// Resolves `target` and walks its stack.
pub fn discover(target: &Path, src: &Sources) -> Result<Topology> {
    let shown = show_path(target);
    let meta = match fs::metadata(target) {
        Ok(m) => m,
        Err(_) => return Err(TopologyError::Missing { shown }.into()),
    };
    let (dev, how) = if meta.file_type().is_block_device() {
        (dev_numbers(meta.rdev()), "block device".to_string())
    } else if meta.is_file() || meta.is_dir() {
        (
            dev_numbers(meta.dev()),
            format!("{} on", if meta.is_dir() { "directory" } else { "file" }),
        )
    } else {
        return Err(TopologyError::NotBlockFileOrDirectory { shown }.into());
    };
    if let Some(name) = src.name_of(dev) {
        let root = src.device(&name, 0)?;
        let resolved = if how == "block device" {
            how
        } else {
            format!("{how} /dev/{name}")
        };
        return Ok(Topology {
            target: shown,
            resolved,
            root,
        });
    }
    // No block device by that number: btrfs (anonymous device), or none at all.
    // The mount that holds the path: the longest mount point above it (a btrfs
    // subvolume's st_dev differs from the number mountinfo shows).
    let real = fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
    let mount = super::sysfs::mounts(&src.host.mountinfo())
        .into_iter()
        .filter(|m| real.starts_with(&m.at))
        .max_by_key(|m| m.at.len())
        // The mount point and type only go into messages, one line each.
        .map(|m| {
            (
                crate::base::error::show_path(Path::new(&m.at)),
                crate::base::error::show_text(&m.fstype).into_owned(),
                m.source,
            )
        });
    match mount {
        Some((at, fstype, source)) if fstype == "btrfs" => {
            let member = fs::metadata(&source)
                .ok()
                .map(|m| dev_numbers(m.rdev()))
                .and_then(|d| src.name_of(d));
            let uuid = member.as_deref().and_then(|m| src.btrfs_with_member(m));
            let Some(uuid) = uuid else {
                return Err(TopologyError::BtrfsWithoutMembers { shown, at }.into());
            };
            Ok(Topology {
                target: shown,
                resolved: format!("{how} btrfs mounted at {at}"),
                root: src.btrfs(&uuid)?,
            })
        }
        Some((at, fstype, _)) => Err(TopologyError::NotOnADisk { shown, fstype, at }.into()),
        None => Err(TopologyError::NoDevice {
            shown,
            major: dev.0,
            minor: dev.1,
        }
        .into()),
    }
}

pub mod level;
pub mod map;
mod summary;

#[cfg(test)]
mod tests;
