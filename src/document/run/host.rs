//! The host a run ran on, for the document: the facts `device::host_facts`
//! read when the run ended. This layer reads nothing itself.

use super::HostInfo;
use crate::device::host_facts::HostFacts;

impl From<&HostFacts> for HostInfo {
    fn from(f: &HostFacts) -> HostInfo {
        HostInfo {
            hostname: f.hostname.clone(),
            kernel: f.kernel.clone(),
            cpus: f.cpus,
            cpu_model: f.cpu_model.clone(),
            peak_rss_bytes: f.peak_rss_bytes,
        }
    }
}
