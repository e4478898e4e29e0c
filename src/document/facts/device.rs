//! The JSON shape of what `device` hands a document: a target's kind, its
//! stack (`topology`, with each level's queue limits and RAID geometry),
//! its counters over the run (`devstat`) and the settings another run held
//! (`knobs`). Each field means what the fact type's field says.

use serde::{Deserialize, Serialize};

use super::{shape, Many, Opt};
use crate::device::devstat::DeviceCounters;
use crate::device::identity::{DiskIdentity, IdentityKind};
use crate::device::knobs::HeldSetting;
use crate::device::queue::QueueLimits;
use crate::device::topology::level::Geometry;
use crate::device::topology::{
    BtrfsInfo, Device, DmInfo, LeafInfo, MdInfo, MdMember, MdState, SpeedLimit, Topology,
};
use crate::device::TargetKind;

#[derive(Serialize, Deserialize)]
#[serde(remote = "TargetKind", rename_all = "lowercase")]
pub enum TargetKindDef {
    Block,
    File,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Topology")]
pub struct TopologyDef {
    pub target: String,
    pub resolved: String,
    #[serde(with = "DeviceDef")]
    pub root: Device,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Device")]
pub struct DeviceDef {
    pub name: String,
    pub dev: String,
    pub path: String,
    pub kind: String,
    pub parent: Option<String>,
    #[serde(with = "Opt::<MdInfoDef>")]
    pub md: Option<MdInfo>,
    #[serde(with = "Opt::<DmInfoDef>")]
    pub dm: Option<DmInfo>,
    #[serde(with = "Opt::<BtrfsInfoDef>")]
    pub btrfs: Option<BtrfsInfo>,
    #[serde(with = "Opt::<LeafInfoDef>")]
    pub leaf: Option<LeafInfo>,
    /// Absent from documents written before it was read.
    #[serde(default, with = "Opt::<QueueLimitsDef>")]
    pub queue: Option<QueueLimits>,
    #[serde(with = "Many::<DeviceDef>")]
    pub members: Vec<Device>,
    /// Absent when the layer neither stripes nor mirrors, and in older documents.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "Opt::<GeometryDef>"
    )]
    pub geometry: Option<Geometry>,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "MdInfo")]
pub struct MdInfoDef {
    pub level: String,
    pub raid_disks: u32,
    pub chunk_size: Option<u64>,
    /// Absent from documents written before it was read.
    #[serde(default)]
    pub layout: Option<u32>,
    /// The array's state (degraded, resync or recovery, each member's);
    /// absent from documents written before it was read.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "Opt::<MdStateDef>"
    )]
    pub state: Option<MdState>,
}

/// `md/`'s state files, as `device::topology::MdState` says.
#[derive(Serialize, Deserialize)]
#[serde(remote = "MdState")]
pub struct MdStateDef {
    pub array_state: Option<String>,
    pub degraded: Option<u32>,
    pub sync_action: Option<String>,
    /// [sectors done, sectors in all], while a resync or recovery runs.
    pub sync_completed: Option<(u64, u64)>,
    /// KB/s.
    pub sync_speed: Option<u64>,
    #[serde(with = "Opt::<SpeedLimitDef>")]
    pub sync_speed_min: Option<SpeedLimit>,
    #[serde(with = "Opt::<SpeedLimitDef>")]
    pub sync_speed_max: Option<SpeedLimit>,
    #[serde(with = "Many::<MdMemberDef>")]
    pub members: Vec<MdMember>,
    pub missing_slots: Vec<u32>,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "SpeedLimit")]
pub struct SpeedLimitDef {
    pub kb_per_sec: u64,
    pub source: String,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "MdMember")]
pub struct MdMemberDef {
    pub name: String,
    pub slot: Option<u32>,
    pub state: Vec<String>,
    pub recovery_start: Option<u64>,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "DmInfo")]
pub struct DmInfoDef {
    pub name: String,
    pub target: Option<String>,
    pub chunk_size: Option<u64>,
    pub source: String,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "BtrfsInfo")]
pub struct BtrfsInfoDef {
    pub uuid: String,
    pub data_profile: Option<String>,
    pub stripe_len: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "LeafInfo")]
pub struct LeafInfoDef {
    pub size: u64,
    pub logical_block_size: u64,
    pub physical_block_size: u64,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    pub read_ahead_kb: Option<u64>,
    pub numa_node: Option<i64>,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "QueueLimits")]
pub struct QueueLimitsDef {
    pub max_sectors_kb: Option<u64>,
    pub max_hw_sectors_kb: Option<u64>,
    pub max_segments: Option<u64>,
    pub max_segment_size: Option<u64>,
    pub nr_requests: Option<u64>,
    pub minimum_io_size: Option<u64>,
    pub optimal_io_size: Option<u64>,
    pub iostats: Option<bool>,
    pub dax: Option<bool>,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Geometry")]
pub struct GeometryDef {
    pub level: String,
    pub members: u32,
    pub data: u32,
    pub parity: u32,
    pub copies: u32,
    pub layout: Option<String>,
    pub chunk: Option<u64>,
    pub full_stripe: Option<u64>,
    /// Absent when unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub member_offsets: Vec<u64>,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "DeviceCounters")]
pub struct DeviceCountersDef {
    pub name: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub ios: u64,
    pub util_pct: f64,
    pub span_seconds: f64,
    pub app_read_bytes: u64,
    pub app_write_bytes: u64,
    pub read_ratio: Option<f64>,
    pub write_ratio: Option<f64>,
    pub shared: bool,
    // The fields below are absent from documents written before each was
    // counted; `stats` then reads as true (the counters were taken as good).
    #[serde(default)]
    pub window_write_bytes: Option<u64>,
    #[serde(default = "yes")]
    pub stats: bool,
    #[serde(default)]
    pub avg_read_request_bytes: Option<f64>,
    #[serde(default)]
    pub avg_write_request_bytes: Option<f64>,
    #[serde(default)]
    pub read_merges: u64,
    #[serde(default)]
    pub write_merges: u64,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "Many::<DeviceCountersDef>"
    )]
    pub members: Vec<DeviceCounters>,
}

fn yes() -> bool {
    true
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "HeldSetting")]
pub struct HeldSettingDef {
    pub setting: String,
    pub own: String,
    pub in_force: Option<String>,
    pub pid: String,
    pub killed: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "IdentityKind", rename_all = "kebab-case")]
pub enum IdentityKindDef {
    Wwn,
    Serial,
    BackingFile,
    Zram,
    Volume,
    Name,
    File,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "DiskIdentity")]
pub struct DiskIdentityDef {
    pub key: String,
    #[serde(with = "IdentityKindDef")]
    pub kind: IdentityKind,
    pub wwn: Option<String>,
    pub serial: Option<String>,
    pub model: Option<String>,
    pub firmware: Option<String>,
}

shape! {
    DiskIdentityDef => DiskIdentity,
    TargetKindDef => TargetKind,
    TopologyDef => Topology,
    DeviceDef => Device,
    MdInfoDef => MdInfo,
    MdStateDef => MdState,
    SpeedLimitDef => SpeedLimit,
    MdMemberDef => MdMember,
    DmInfoDef => DmInfo,
    BtrfsInfoDef => BtrfsInfo,
    LeafInfoDef => LeafInfo,
    QueueLimitsDef => QueueLimits,
    GeometryDef => Geometry,
    DeviceCountersDef => DeviceCounters,
    HeldSettingDef => HeldSetting,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::facts::Shape;

    fn disk(name: &str) -> Device {
        Device {
            name: name.into(),
            dev: "7:0".into(),
            path: format!("/dev/{name}"),
            kind: "loop".into(),
            parent: None,
            md: None,
            dm: None,
            btrfs: None,
            leaf: None,
            queue: None,
            members: vec![],
            geometry: None,
        }
    }

    /// A layer's geometry is written on it; a leaf, which has none, writes
    /// no `geometry` key at all (older documents had none); and what is
    /// written reads back the same.
    #[test]
    fn a_striped_layer_writes_its_geometry_and_a_leaf_none() {
        let mut md = disk("md5");
        md.kind = "md".into();
        md.geometry = Some(Geometry::md("raid5", 4, Some(64 << 10), Some(2)));
        md.members = (0..4).map(|i| disk(&format!("loop{i}"))).collect();
        let t = Topology {
            target: "/dev/md5".into(),
            resolved: "block device".into(),
            root: md,
        };
        let json = serde_json::to_value(TopologyDef::doc(&t)).unwrap();
        assert_eq!(json["root"]["geometry"]["parity"], 1);
        assert_eq!(json["root"]["geometry"]["full_stripe"], 192 << 10);
        assert!(
            json["root"]["members"][0].get("geometry").is_none(),
            "a leaf has none"
        );
        let back = TopologyDef::deserialize(json).unwrap();
        assert_eq!(back, t);
    }
}
