//! The host a run ran on, for the document.

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
            cpu_model: std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            }),
            peak_rss_bytes: crate::base::usage::peak_rss_bytes(),
        }
    }
}
