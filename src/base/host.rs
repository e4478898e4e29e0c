//! The host environment: where sysfs, procfs and the device nodes are.
//!
//! One [`Host`] handle carries the three roots, and every read of the
//! machine's state (a device's sysfs directory, the mount table, swap
//! areas, memory, CPUs) goes through it: [`Host::real`] on the running
//! system, [`Host::fixture`] on a fake tree in tests. It lives in `base`
//! because layers below `device` read the host too (the online CPUs, the
//! THP mode); it only joins paths and never opens anything itself.
//!
//! What a process learns about itself (`/proc/self/fd/N` of its own
//! descriptors, its own `smaps`) is not the host environment and stays on
//! the real `/proc`: a fixture tree has none of this process's descriptors.
//! Writes go through the component-wise `O_NOFOLLOW` opens of
//! `base::path` and `device::sysattr`, under these same roots.

use std::path::{Path, PathBuf};

/// The roots of the host's sysfs, procfs and `/dev`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// sysfs: `/sys`.
    pub sys: PathBuf,
    /// procfs: `/proc`.
    pub proc: PathBuf,
    /// The device nodes: `/dev`.
    pub dev: PathBuf,
}

impl Default for Host {
    fn default() -> Self {
        Host::real()
    }
}

impl Host {
    /// The running system.
    pub fn real() -> Host {
        Host {
            sys: PathBuf::from("/sys"),
            proc: PathBuf::from("/proc"),
            dev: PathBuf::from("/dev"),
        }
    }

    /// A fake tree under `root`: `root/sys`, `root/proc` and `root/dev`
    /// (each may be missing: what is not there reads as unknown).
    pub fn fixture(root: &Path) -> Host {
        Host {
            sys: root.join("sys"),
            proc: root.join("proc"),
            dev: root.join("dev"),
        }
    }

    /// Whether `path` (made absolute) lies in the host's /dev, /proc or
    /// /sys: where a name is a device, a stream or a kernel file, never a
    /// file a run may create.
    pub fn holds_special(&self, path: &Path) -> bool {
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        [&self.dev, &self.proc, &self.sys]
            .iter()
            .any(|root| abs.starts_with(root))
    }

    /// Whether this is the running system's sysfs (where what is opened
    /// must also prove to be on sysfs), not a fixture tree.
    pub fn is_real_sys(&self) -> bool {
        self.sys == Path::new("/sys")
    }

    /// The sysfs directory of block device `major:minor`
    /// (`/sys/dev/block/MAJOR:MINOR`, a link into `/sys/devices`).
    pub fn block_dev(&self, (major, minor): (u64, u64)) -> PathBuf {
        self.sys.join(format!("dev/block/{major}:{minor}"))
    }

    /// Every block device by its kernel name: `/sys/class/block`.
    pub fn class_block(&self) -> PathBuf {
        self.sys.join("class/block")
    }

    /// The online CPUs: `/sys/devices/system/cpu/online`.
    pub fn cpus_online(&self) -> PathBuf {
        self.sys.join("devices/system/cpu/online")
    }

    /// NUMA node `node`'s CPUs: `/sys/devices/system/node/nodeN/cpulist`.
    pub fn numa_node_cpulist(&self, node: usize) -> PathBuf {
        self.sys
            .join(format!("devices/system/node/node{node}/cpulist"))
    }

    /// The kernel's clocksource (what CLOCK_MONOTONIC reads):
    /// `/sys/devices/system/clocksource/clocksource0/current_clocksource`.
    pub fn clocksource(&self) -> PathBuf {
        self.sys
            .join("devices/system/clocksource/clocksource0/current_clocksource")
    }

    /// The transparent huge page mode: `/sys/kernel/mm/transparent_hugepage/enabled`.
    pub fn thp_enabled(&self) -> PathBuf {
        self.sys.join("kernel/mm/transparent_hugepage/enabled")
    }

    /// This process's mount table: `/proc/self/mountinfo`.
    pub fn mountinfo(&self) -> PathBuf {
        self.proc.join("self/mountinfo")
    }

    /// The swap areas in use: `/proc/swaps`.
    pub fn swaps(&self) -> PathBuf {
        self.proc.join("swaps")
    }

    /// Memory figures: `/proc/meminfo`.
    pub fn meminfo(&self) -> PathBuf {
        self.proc.join("meminfo")
    }

    /// The CPUs' model names and flags: `/proc/cpuinfo`.
    pub fn cpuinfo(&self) -> PathBuf {
        self.proc.join("cpuinfo")
    }

    /// The page cache's drop switch: `/proc/sys/vm/drop_caches`.
    pub fn drop_caches(&self) -> PathBuf {
        self.proc.join("sys/vm/drop_caches")
    }

    /// The node of a device the kernel calls `name`: `/dev/NAME`.
    pub fn dev_node(&self, name: &str) -> PathBuf {
        self.dev.join(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_host_is_the_running_system() {
        let h = Host::real();
        assert!(h.is_real_sys());
        assert_eq!(h.block_dev((8, 16)), Path::new("/sys/dev/block/8:16"));
        assert_eq!(h.mountinfo(), Path::new("/proc/self/mountinfo"));
        assert_eq!(h.swaps(), Path::new("/proc/swaps"));
        assert_eq!(h.drop_caches(), Path::new("/proc/sys/vm/drop_caches"));
        assert_eq!(h.dev_node("sda"), Path::new("/dev/sda"));
        assert_eq!(Host::default(), h);
    }

    /// Every read a fixture host leads to stays inside its tree, and what
    /// the tree holds is what is read.
    #[test]
    fn a_fixture_host_reads_its_own_tree() {
        let t = tempfile::tempdir().unwrap();
        let h = Host::fixture(t.path());
        assert!(!h.is_real_sys());
        std::fs::create_dir_all(h.block_dev((7, 0))).unwrap();
        std::fs::write(h.block_dev((7, 0)).join("size"), "2048\n").unwrap();
        std::fs::create_dir_all(h.mountinfo().parent().unwrap()).unwrap();
        std::fs::write(h.mountinfo(), "").unwrap();
        std::fs::create_dir_all(h.cpus_online().parent().unwrap()).unwrap();
        std::fs::write(h.cpus_online(), "0-3\n").unwrap();
        for p in [
            h.block_dev((7, 0)),
            h.class_block(),
            h.cpus_online(),
            h.numa_node_cpulist(0),
            h.thp_enabled(),
            h.mountinfo(),
            h.swaps(),
            h.meminfo(),
            h.cpuinfo(),
            h.drop_caches(),
            h.dev_node("loop0"),
        ] {
            assert!(p.starts_with(t.path()), "{} leaves the tree", p.display());
        }
        let size = std::fs::read_to_string(h.block_dev((7, 0)).join("size")).unwrap();
        assert_eq!(size.trim(), "2048");
        assert_eq!(crate::base::cpus::online_cpus(&h), Some(vec![0, 1, 2, 3]));
    }
}
