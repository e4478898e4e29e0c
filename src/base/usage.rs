//! What this process and its threads have used so far: a thread's CPU time
//! (getrusage's user/system split, CLOCK_THREAD_CPUTIME_ID's total) and the
//! process's peak resident memory. These read the kernel, so they live here
//! at the bottom, beside the other process state, and not in `analysis`
//! (pure math over what was measured).

/// User and system CPU seconds used by the calling thread so far.
pub fn thread_cpu_seconds() -> (f64, f64) {
    use nix::sys::resource::{getrusage, UsageWho};
    match getrusage(UsageWho::RUSAGE_THREAD) {
        Ok(u) => {
            let s = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
            (s(u.user_time()), s(u.system_time()))
        }
        Err(_) => (0.0, 0.0),
    }
}

/// CPU seconds used by the calling thread so far, to the nanosecond
/// (CLOCK_THREAD_CPUTIME_ID; getrusage's figures move by whole ticks).
pub fn thread_cpu_clock() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid one we pass.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
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
    }
}
