//! The host a run ran on, for the document. The CPU model is read by
//! `device::cpuinfo`: this layer opens no file.

use super::HostInfo;

impl HostInfo {
    pub fn current() -> HostInfo {
        let uname = nix::sys::utsname::uname().ok();
        HostInfo {
            hostname: nix::unistd::gethostname()
                .ok()
                .and_then(|h| h.into_string().ok())
                .unwrap_or_default(),
            kernel: uname
                .map(|u| u.release().to_string_lossy().into_owned())
                .unwrap_or_default(),
            cpus: crate::base::cpus::available_cpus().len(),
            cpu_model: crate::device::cpuinfo::read_model_name(
                &crate::base::host::Host::real().cpuinfo(),
            ),
            peak_rss_bytes: crate::base::usage::peak_rss_bytes(),
        }
    }
}
