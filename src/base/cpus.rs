//! CPUs: parsing CPU lists (`0-3,6`), finding the online CPUs this process may
//! run on, pinning the calling thread, and asking where it runs.

use std::fs;

/// Parses a CPU list in the kernel's format: `0-3,6,8-9`. Order is kept (it is
/// the round-robin order workers are placed in); duplicates are refused.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty CPU list: give CPUs such as 0-3,6".into());
    }
    let mut cpus = Vec::new();
    for part in t.split(',') {
        let part = part.trim();
        let num = |s: &str| -> Result<usize, String> {
            let s = s.trim();
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!(
                    "'{text}' is not a CPU list: '{part}' should be a CPU number or a range such as 0-3"
                ));
            }
            s.parse::<usize>()
                .ok()
                .filter(|&n| n < 1 << 20)
                .ok_or_else(|| format!("CPU number '{s}' in '{text}' is too large"))
        };
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let n = num(part)?;
                (n, n)
            }
        };
        if lo > hi {
            return Err(format!(
                "CPU range '{part}' in '{text}' runs backwards: write it low-high, such as {hi}-{lo}"
            ));
        }
        for c in lo..=hi {
            if cpus.contains(&c) {
                return Err(format!("CPU {c} appears twice in '{text}'"));
            }
            cpus.push(c);
        }
    }
    Ok(cpus)
}

/// The online CPUs of `host`, as sysfs lists them.
pub fn online_cpus(host: &crate::base::host::Host) -> Option<Vec<usize>> {
    fs::read_to_string(host.cpus_online())
        .ok()
        .and_then(|s| parse_cpu_list(&s).ok())
}

/// The online CPUs (from sysfs) that this process is allowed to run on.
pub fn available_cpus() -> Vec<usize> {
    let online = online_cpus(&crate::base::host::Host::real());
    let allowed: Option<Vec<usize>> =
        core_affinity::get_core_ids().map(|ids| ids.into_iter().map(|c| c.id).collect());
    match (online, allowed) {
        (Some(on), Some(al)) => on.into_iter().filter(|c| al.contains(c)).collect(),
        (Some(on), None) => on,
        (None, Some(al)) => al,
        (None, None) => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
}

/// Checks a requested CPU list against the available CPUs.
pub fn check_cpus(requested: &[usize], available: &[usize]) -> Result<(), String> {
    let missing: Vec<String> = requested
        .iter()
        .filter(|c| !available.contains(c))
        .map(|c| c.to_string())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "--cpus names CPU {} that is not online or not allowed for this process: choose from {}",
            missing.join(", "),
            format_cpu_list(available)
        ))
    }
}

/// Formats a CPU list compactly (`0-3,6`).
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

/// Pins the calling thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> bool {
    core_affinity::set_for_current(core_affinity::CoreId { id: cpu })
}

/// The CPU the calling thread is running on now.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes no arguments and only reads per-thread state.
    let c = unsafe { libc::sched_getcpu() };
    usize::try_from(c).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-3,6").unwrap(), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list("5").unwrap(), vec![5]);
        assert_eq!(parse_cpu_list("3,1").unwrap(), vec![3, 1]);
        assert_eq!(parse_cpu_list("0-1\n").unwrap(), vec![0, 1]);
    }

    #[test]
    fn odd_cpu_lists_are_refused() {
        for bad in [
            "",
            ",",
            "a",
            "1-",
            "-1",
            "3-1",
            "1,1",
            "0-2,2",
            "1.5",
            "99999999999",
        ] {
            assert!(parse_cpu_list(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cpu_lists_format_and_check() {
        assert_eq!(format_cpu_list(&[6, 0, 1, 2, 3]), "0-3,6");
        assert!(check_cpus(&[0, 1], &[0, 1]).is_ok());
        let e = check_cpus(&[0, 7], &[0, 1]).unwrap_err();
        assert!(e.contains("CPU 7") && e.contains("0-1"), "{e}");
    }

    #[test]
    fn this_machine_has_cpus() {
        assert!(!available_cpus().is_empty());
    }
}
