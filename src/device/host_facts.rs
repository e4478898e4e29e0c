//! What a run's document says of the host it ran on: its name, kernel
//! release, usable CPUs, CPU model and the process's peak memory, read from
//! the system when the run ends (`measure::coordinator` carries them in its
//! `Execution`), so that `document/` assembles them without a syscall.

use crate::base::host::Host;

/// The host's facts, as read at the end of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostFacts {
    pub hostname: String,
    pub kernel: String,
    /// Online CPUs this process could use.
    pub cpus: usize,
    pub cpu_model: Option<String>,
    pub peak_rss_bytes: u64,
}

/// The facts of this host, now (`host`: where its procfs is).
pub fn gather(host: &Host) -> HostFacts {
    let uname = nix::sys::utsname::uname().ok();
    HostFacts {
        hostname: nix::unistd::gethostname()
            .ok()
            .and_then(|h| h.into_string().ok())
            .unwrap_or_default(),
        kernel: uname
            .map(|u| u.release().to_string_lossy().into_owned())
            .unwrap_or_default(),
        cpus: crate::base::cpus::available_cpus().len(),
        cpu_model: crate::device::cpuinfo::read_model_name(&host.cpuinfo()),
        peak_rss_bytes: crate::base::usage::peak_rss_bytes(),
    }
}
