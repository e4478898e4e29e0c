//! The CPU model this host reports in `/proc/cpuinfo`, for the run
//! document's host. A function of the text ([`model_name`]) and one read of
//! a path ([`read_model_name`]), given by the host-environment handle
//! (`base::host::Host::cpuinfo`: the real procfs, or a fixture tree's).

use std::path::Path;

/// The first `model name` line of a `/proc/cpuinfo` text, trimmed; `None`
/// when there is none (arm64 kernels say `CPU part` instead).
pub fn model_name(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// [`model_name`] of the file at `path`; `None` when it cannot be read (the
/// document then says the model is unknown, the run goes on).
pub fn read_model_name(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| model_name(&s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_model_name_line_is_the_model() {
        let text = "processor\t: 0\nmodel name\t: Example CPU @ 2.0GHz \nmodel name\t: other\n";
        assert_eq!(model_name(text).as_deref(), Some("Example CPU @ 2.0GHz"));
        assert_eq!(model_name("processor\t: 0\nCPU part\t: 0xd0c\n"), None);
    }
}
