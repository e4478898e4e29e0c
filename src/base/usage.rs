//! What this process and its threads have used so far: a thread's CPU time
//! (getrusage's user/system split, CLOCK_THREAD_CPUTIME_ID's total), the
//! whole process's (every thread's, those ended included) and its peak
//! resident memory. These read the kernel, so they live here
//! at the bottom, beside the other process state, and not in `analysis`
//! (pure math over what was measured).

/// User and system CPU seconds `who` used so far, by getrusage.
fn rusage_seconds(who: nix::sys::resource::UsageWho) -> (f64, f64) {
    match nix::sys::resource::getrusage(who) {
        Ok(u) => {
            let s = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
            (s(u.user_time()), s(u.system_time()))
        }
        Err(_) => (0.0, 0.0),
    }
}

/// The CPU-time clock `clock` in seconds, to the nanosecond; `None` when it
/// cannot be read.
fn cpu_clock(clock: libc::clockid_t) -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid one we pass.
    (unsafe { libc::clock_gettime(clock, &mut ts) } == 0)
        .then(|| ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9)
}

/// A CPU time's exact `total` split into (user, system) in the proportion
/// getrusage charged (`usr`, `sys`: its deltas over the same span); all
/// user when it charged nothing, as the kernel's own cputime_adjust does.
pub fn split_cpu(total: f64, usr: f64, sys: f64) -> (f64, f64) {
    let (total, u, s) = (total.max(0.0), usr.max(0.0), sys.max(0.0));
    if u + s > 0.0 {
        (total * u / (u + s), total * s / (u + s))
    } else {
        (total, 0.0)
    }
}

/// User and system CPU seconds used by the calling thread so far.
pub fn thread_cpu_seconds() -> (f64, f64) {
    rusage_seconds(nix::sys::resource::UsageWho::RUSAGE_THREAD)
}

/// CPU seconds used by the calling thread so far, to the nanosecond
/// (CLOCK_THREAD_CPUTIME_ID; getrusage's figures move by whole ticks).
pub fn thread_cpu_clock() -> f64 {
    cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0.0)
}

/// The whole process's CPU time at one instant: every thread's, those
/// that ended included (what wait4 reports for it at its exit).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcessCpu {
    /// getrusage(RUSAGE_SELF)'s user and system seconds.
    pub usr: f64,
    pub sys: f64,
    /// CLOCK_PROCESS_CPUTIME_ID, to the nanosecond.
    pub total: f64,
}

impl ProcessCpu {
    /// Now.
    pub fn now() -> ProcessCpu {
        let (usr, sys) = rusage_seconds(nix::sys::resource::UsageWho::RUSAGE_SELF);
        let total = cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID).unwrap_or(usr + sys);
        ProcessCpu { usr, sys, total }
    }

    /// (user, system) seconds from `before` to this sample: the clock's
    /// total, split in the proportion getrusage gives ([`split_cpu`]).
    pub fn since(&self, before: &ProcessCpu) -> (f64, f64) {
        split_cpu(
            self.total - before.total,
            self.usr - before.usr,
            self.sys - before.sys,
        )
    }
}

/// Peak resident memory of this process, in bytes.
pub fn peak_rss_bytes() -> u64 {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_SELF).map_or(0, |u| u.max_rss().max(0) as u64 * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_cpu_time_moves() {
        let (u0, s0) = thread_cpu_seconds();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let (u1, s1) = thread_cpu_seconds();
        assert!(u1 + s1 > u0 + s0);
        let c0 = thread_cpu_clock();
        let mut y = 0u64;
        for i in 0..1_000_000u64 {
            y = y.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(y);
        assert!(thread_cpu_clock() > c0);
        assert!(peak_rss_bytes() > 0);
        let p0 = ProcessCpu::now();
        let mut z = 0u64;
        for i in 0..1_000_000u64 {
            z = z.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(z);
        let (pu, ps) = ProcessCpu::now().since(&p0);
        assert!(pu + ps > 0.0);
        assert!(ProcessCpu::now().total >= thread_cpu_clock());
    }
}
