//! Which block devices share a path to the machine (issue 42): members
//! behind one host adapter (32 SSDs on 2 HBAs, 58 disks on 16 controllers)
//! can be capped together by it while each alone is fine.
//!
//! A device's group is read from its resolved sysfs path
//! (`/sys/class/block/NAME` → `../../devices/pci0000:00/0000:00:05.0/
//! virtio3/host2/target2:0:0/2:0:0:0/block/sdb`): the host adapter, the
//! PCI function nearest above the `hostN` component (or, with no PCI
//! function there, the component that owns `hostN`), refined by the last
//! SAS `expander-N:M` below it when the disk sits behind an expander
//! (members of one HBA behind two expanders share the HBA and each its
//! expander: the nearer one is the tighter path). A device without `hostN`
//! (NVMe, virtio-blk) is grouped by the last PCI function on its path
//! (each its own, usually). Loop, zram, md, dm and other virtual devices
//! have no group.
//!
//! Only path operations on sysfs (no file is read); the names it returns
//! came from sysfs and are printed through `base::error::show_text`.

use std::path::Path;

use crate::base::host::Host;

/// The members that share one adapter, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathGroup {
    /// The adapter: a PCI function (`0000:00:05.0`), with the expander
    /// (`0000:03:00.0/expander-0:0`) when there is one.
    pub adapter: String,
    /// Kernel names (`sdb`, `sdc1`), in the order given.
    pub members: Vec<String>,
}

/// The devices given, by the adapter each is behind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathGroups {
    /// One per adapter, in the order of each adapter's first member.
    pub groups: Vec<PathGroup>,
    /// Devices with no adapter (virtual), or whose sysfs entry is missing.
    pub none: Vec<String>,
}

impl PathGroups {
    /// Whether the grouping can tell anything: at least two adapters, one
    /// of them with more than one member.
    pub fn shared(&self) -> bool {
        self.groups.len() >= 2 && self.groups.iter().any(|g| g.members.len() > 1)
    }

    /// The adapter of member `name`, if it has one.
    pub fn adapter_of(&self, name: &str) -> Option<&str> {
        self.groups
            .iter()
            .find(|g| g.members.iter().any(|m| m == name))
            .map(|g| g.adapter.as_str())
    }
}

/// Groups the block devices `names` (kernel names) by the adapter each is
/// behind, reading `host`'s sysfs.
pub fn group(host: &Host, names: &[String]) -> PathGroups {
    let stacked: Vec<(String, Vec<String>)> =
        names.iter().map(|n| (n.clone(), vec![n.clone()])).collect();
    group_stacked(host, &stacked)
}

/// Groups members, each given as (its label, the kernel names of the leaf
/// devices under it: itself for a disk, an md leg's disks): a member is
/// behind an adapter when all its leaves are behind that one adapter.
pub fn group_stacked(host: &Host, members: &[(String, Vec<String>)]) -> PathGroups {
    let mut out = PathGroups::default();
    for (label, leaves) in members {
        let adapters: Vec<Option<String>> = leaves.iter().map(|l| adapter(host, l)).collect();
        let one = match adapters.first() {
            Some(Some(a)) if adapters.iter().all(|b| b.as_deref() == Some(a)) => Some(a.clone()),
            _ => None,
        };
        match one {
            Some(a) => match out.groups.iter_mut().find(|g| g.adapter == a) {
                Some(g) => g.members.push(label.clone()),
                None => out.groups.push(PathGroup {
                    adapter: a,
                    members: vec![label.clone()],
                }),
            },
            None => out.none.push(label.clone()),
        }
    }
    out
}

/// The adapter block device `name` is behind, from its resolved sysfs path.
pub fn adapter(host: &Host, name: &str) -> Option<String> {
    // A kernel name is one path component: anything else is no device.
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return None;
    }
    let real = std::fs::canonicalize(host.sys.join("class/block").join(name)).ok()?;
    adapter_key(&real)
}

/// The adapter named by a resolved sysfs device path (see the module's
/// header), or `None` for a virtual device.
pub fn adapter_key(path: &Path) -> Option<String> {
    let parts: Vec<&str> = path
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .collect();
    if parts.contains(&"virtual") {
        return None;
    }
    let host = parts.iter().position(|p| is_scsi_host(p));
    let Some(host) = host else {
        return parts
            .iter()
            .rev()
            .find(|p| is_pci_address(p))
            .map(|p| p.to_string());
    };
    let owner = parts[..host]
        .iter()
        .rev()
        .find(|p| is_pci_address(p))
        .or_else(|| parts[..host].last())?;
    let expander = parts[host..]
        .iter()
        .rev()
        .find(|p| p.starts_with("expander-"));
    Some(match expander {
        Some(e) => format!("{owner}/{e}"),
        None => owner.to_string(),
    })
}

/// `hostN`: a SCSI host (an HBA's, a virtio-scsi controller's, libata's port).
fn is_scsi_host(s: &str) -> bool {
    s.strip_prefix("host")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// `DDDD:BB:DD.F`, hex digits.
pub(crate) fn is_pci_address(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && b.iter()
            .enumerate()
            .all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    fn key(p: &str) -> Option<String> {
        adapter_key(&PathBuf::from(p))
    }

    #[test]
    fn the_adapter_is_the_pci_function_above_the_scsi_host() {
        assert_eq!(
            key("/sys/devices/pci0000:00/0000:00:05.0/virtio3/host2/target2:0:0/2:0:0:0/block/sdb")
                .as_deref(),
            Some("0000:00:05.0")
        );
        // A partition shares its disk's adapter.
        assert_eq!(
            key("/sys/devices/pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0/block/sda/sda1")
                .as_deref(),
            Some("0000:00:1f.2")
        );
        // Behind a PCIe switch: the HBA's own function, the last one.
        assert_eq!(
            key("/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/host7/target7:0:3/7:0:3:0/block/sdk")
                .as_deref(),
            Some("0000:3b:00.0")
        );
    }

    #[test]
    fn a_sas_expander_refines_the_adapter() {
        let behind = |e: &str, end: &str| {
            format!("/sys/devices/pci0000:00/0000:03:00.0/host0/port-0:0/{e}/port-0:0:{end}/end_device-0:0:{end}/target0:0:{end}/0:0:{end}:0/block/sd{end}")
        };
        let a = key(&behind("expander-0:0", "1")).unwrap();
        let b = key(&behind("expander-0:0", "2")).unwrap();
        let c = key(&behind("expander-0:1", "3")).unwrap();
        assert_eq!(a, "0000:03:00.0/expander-0:0");
        assert_eq!(a, b);
        assert_ne!(a, c);
        // Cascaded expanders: the nearer one.
        let cascaded = "/sys/devices/pci0000:00/0000:03:00.0/host0/port-0:0/expander-0:0/port-0:0:0/expander-0:1/port-0:1:4/end_device-0:1:4/target0:0:4/0:0:4:0/block/sde";
        assert_eq!(key(cascaded).as_deref(), Some("0000:03:00.0/expander-0:1"));
        // Direct-attached SAS: each disk its own phy, one HBA.
        let direct = "/sys/devices/pci0000:00/0000:03:00.0/host0/port-0:5/end_device-0:5/target0:0:5/0:0:5:0/block/sdf";
        assert_eq!(key(direct).as_deref(), Some("0000:03:00.0"));
    }

    #[test]
    fn virtual_devices_have_no_adapter_and_nvme_its_own_function() {
        assert_eq!(key("/sys/devices/virtual/block/loop0"), None);
        assert_eq!(key("/sys/devices/virtual/block/md0"), None);
        assert_eq!(
            key("/sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme1/nvme1n1").as_deref(),
            Some("0000:3d:00.0")
        );
        // No PCI function above the host (scsi_debug): the host's owner.
        assert_eq!(
            key("/sys/devices/pseudo_0/adapter0/host3/target3:0:0/3:0:0:0/block/sdc").as_deref(),
            Some("adapter0")
        );
        assert!(!is_scsi_host("host") && !is_scsi_host("hostx1") && is_scsi_host("host12"));
    }

    /// A fixture sysfs tree: 6 disks on 3 controllers, two loop devices.
    #[test]
    fn members_are_grouped_by_adapter_in_a_fixture_tree() {
        let t = tempfile::tempdir().unwrap();
        let sys = t.path().join("sys");
        fs::create_dir_all(sys.join("class/block")).unwrap();
        let mut names = Vec::new();
        for i in 0..6 {
            let c = i % 3;
            let name = format!("sd{}", (b'a' + i as u8) as char);
            let d = sys.join(format!(
                "devices/pci0000:00/0000:00:0{}.0/virtio{c}/host{c}/target{c}:0:{i}/{c}:0:{i}:0/block/{name}",
                3 + c
            ));
            fs::create_dir_all(&d).unwrap();
            symlink(&d, sys.join("class/block").join(&name)).unwrap();
            names.push(name);
        }
        for l in ["loop0", "loop1"] {
            let d = sys.join("devices/virtual/block").join(l);
            fs::create_dir_all(&d).unwrap();
            symlink(&d, sys.join("class/block").join(l)).unwrap();
            names.push(l.into());
        }
        names.push("sdz".into()); // missing
        names.push("../x".into()); // not a kernel name
        let g = group(&Host::fixture(t.path()), &names);
        assert_eq!(g.groups.len(), 3);
        assert_eq!(g.groups[0].adapter, "0000:00:03.0");
        assert_eq!(g.groups[0].members, ["sda", "sdd"]);
        assert_eq!(g.groups[1].members, ["sdb", "sde"]);
        assert_eq!(g.groups[2].adapter, "0000:00:05.0");
        assert_eq!(g.none, ["loop0", "loop1", "sdz", "../x"]);
        assert!(g.shared());
        assert_eq!(g.adapter_of("sde"), Some("0000:00:04.0"));
        // Stacked: a leg on one adapter is behind it; across two, behind none.
        let legs = group_stacked(
            &Host::fixture(t.path()),
            &[
                ("md1".into(), vec!["sda".into(), "sdd".into()]),
                ("md2".into(), vec!["sdb".into(), "sdc".into()]),
            ],
        );
        assert_eq!(legs.groups.len(), 1);
        assert_eq!(legs.groups[0].members, ["md1"]);
        assert_eq!(legs.none, ["md2"]);
        // Loop devices only: nothing shared.
        let loops = group(&Host::fixture(t.path()), &["loop0".into(), "loop1".into()]);
        assert!(loops.groups.is_empty() && !loops.shared());
    }
}
