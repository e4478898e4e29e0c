//! Runs that start together: fio's jobs of one group that are different
//! workloads run at once in fio, and each is a run of its own here, on a
//! thread of its own ([`crate::measure::series`]). Each run's workers, once
//! ready, wait at this rendezvous for every other run's, so that the
//! windows open at the same instant; a run that ends before it gets there
//! (refused, failed in its set-up, panicked) releases the others with why,
//! and they are called off rather than left waiting for it.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::measure::control::RunControl;

/// fio's exit_what=: which of the jobs running a job's end stops, with
/// exitall=1 (libfio.c `fio_terminate_threads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitWhat {
    /// The jobs of its reporting group (fio's groupid: new_group or
    /// stonewall starts the next): fio's default.
    Group,
    /// Every job running.
    Stonewall,
    /// Every job running, and the ones after it never start.
    All,
}

impl ExitWhat {
    pub fn name(self) -> &'static str {
        match self {
            ExitWhat::Group => "group",
            ExitWhat::Stonewall => "stonewall",
            ExitWhat::All => "all",
        }
    }
}

/// A run of a job file with exitall=1 (fio's is for the whole file): what
/// its own end stops, and the reporting group it is in (what another's
/// exit_what=group stops).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exitall {
    pub what: ExitWhat,
    pub group: usize,
}

/// The rendezvous of `n` runs; each holds a clone (in its configuration)
/// and one [`Member`], which says when it leaves without arriving.
#[derive(Clone)]
pub struct Together(Arc<Inner>);

struct Inner {
    n: usize,
    state: Mutex<State>,
    cv: Condvar,
}

#[derive(Default)]
struct State {
    arrived: usize,
    /// Each run's window, once it arrived, and its reporting group:
    /// what another's end closes (fio's exitall).
    windows: Vec<(Arc<RunControl>, usize)>,
    /// Why a run left before it arrived: the others do not start.
    failed: Option<String>,
}

/// Why a run did not start with the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parted {
    /// A signal arrived while it waited.
    Interrupted,
    /// Another run of the group ended before its start: why.
    Failed(String),
}

/// A run called off because another of the runs at once ended before
/// its start: why.
#[derive(Debug)]
pub struct NotStarted(pub String);

impl std::fmt::Display for NotStarted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not started: {}", self.0)
    }
}

impl std::error::Error for NotStarted {}

impl NotStarted {
    /// Whether `e` is one.
    pub fn is(e: &anyhow::Error) -> bool {
        e.downcast_ref::<NotStarted>().is_some()
    }
}

impl std::fmt::Debug for Together {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Together({})", self.0.n)
    }
}

impl Together {
    /// The rendezvous of `n` runs.
    pub fn new(n: usize) -> Together {
        Together(Arc::new(Inner {
            n,
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
        }))
    }

    /// How many runs start together.
    pub fn runs(&self) -> usize {
        self.0.n
    }

    /// Run `label`'s place in the rendezvous: dropped before it arrived, it
    /// releases the others with why (`said`, or that it ended).
    pub fn member(&self, label: String) -> Member {
        Member {
            together: self.clone(),
            label,
            said: None,
        }
    }

    /// This run's workers are ready: waits for every other run's (`Ok`), a
    /// run that ended before it got here, or a signal. A run that arrives
    /// after the others were released for a failure is not started either.
    pub fn arrive(&self) -> Result<(), Parted> {
        let inner = &*self.0;
        let mut s = inner.state.lock().unwrap_or_else(|e| e.into_inner());
        s.arrived += 1;
        inner.cv.notify_all();
        loop {
            if let Some(why) = &s.failed {
                return Err(Parted::Failed(why.clone()));
            }
            if s.arrived >= inner.n {
                return Ok(());
            }
            if crate::base::signals::interrupted() {
                return Err(Parted::Interrupted);
            }
            // A signal sets a flag, not this condition: look again often.
            s = inner
                .cv
                .wait_timeout(s, Duration::from_millis(20))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Run `control` (of reporting group `group`) is one of them: another
    /// run's [`exit`](Self::exit) may close its window.
    pub fn enlist(&self, control: &Arc<RunControl>, group: usize) {
        let mut s = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        s.windows.push((control.clone(), group));
    }

    /// Run `own` ended (fio's exitall): closes the windows `what` names of
    /// the others still open. Returns how many it closed.
    pub fn exit(&self, own: &Arc<RunControl>, what: Exitall) -> usize {
        let s = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut closed = 0;
        for (c, group) in &s.windows {
            if Arc::ptr_eq(c, own) || (what.what == ExitWhat::Group && *group != what.group) {
                continue;
            }
            if c.end_ns() > c.epoch().map_or(0, |e| e.elapsed().as_nanos() as u64) {
                c.end_by_exit();
                closed += 1;
            }
        }
        closed
    }

    fn leave(&self, why: String) {
        let inner = &*self.0;
        let mut s = inner.state.lock().unwrap_or_else(|e| e.into_inner());
        // Once all have arrived the windows are open: a run that ends
        // after that ends alone.
        if s.arrived < inner.n && s.failed.is_none() {
            s.failed = Some(why);
        }
        inner.cv.notify_all();
    }
}

/// One run's place in a [`Together`]: its drop, before every run arrived,
/// releases the others (a run that ends, whichever way, never leaves them
/// waiting).
pub struct Member {
    together: Together,
    label: String,
    said: Option<String>,
}

impl Member {
    /// Why the run ended before its start, for the others' message.
    pub fn ended(&mut self, why: String) {
        self.said = Some(why);
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let why = match self.said.take() {
            Some(w) => format!("{} ended before its start: {w}", self.label),
            None => format!("{} ended before its start", self.label),
        };
        self.together.leave(why);
    }
}

/// The device counters of runs that went at once, pooled: each run's
/// probe of a device spans its own run, and all of them the same window,
/// so the device's bytes are the most any run's probe saw, and the
/// application's are every run's on it, added. Each run's counters of
/// that device then say so, their ratios (device to application bytes)
/// over the pool: the page cache's share of reads is judged for the
/// runs together, where it is true, not for each against I/O it did not
/// do.
pub fn pool_devices(runs: &mut [&mut Vec<Option<crate::device::devstat::DeviceCounters>>]) {
    use std::collections::HashMap;
    // name -> (app read, app write, device read, device write)
    let mut pool: HashMap<String, (u64, u64, u64, u64)> = HashMap::new();
    for devices in runs.iter() {
        let mut seen: Vec<&str> = Vec::new();
        for d in devices.iter().flatten() {
            if seen.contains(&d.name.as_str()) {
                continue;
            }
            seen.push(&d.name);
            let e = pool.entry(d.name.clone()).or_default();
            e.0 += d.app_read_bytes;
            e.1 += d.app_write_bytes;
            e.2 = e.2.max(d.read_bytes);
            e.3 = e.3.max(d.write_bytes);
        }
    }
    for devices in runs.iter_mut() {
        for d in devices.iter_mut().flatten() {
            let Some(&(ar, aw, dr, dw)) = pool.get(&d.name) else {
                continue;
            };
            let ratio = |dev: u64, app: u64| (d.stats && app > 0).then(|| dev as f64 / app as f64);
            (d.read_ratio, d.write_ratio) = (ratio(dr, ar), ratio(dw, aw));
            (d.app_read_bytes, d.app_write_bytes) = (ar, aw);
            (d.read_bytes, d.write_bytes) = (dr, dw);
            d.shared = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_that_all_arrive_start_together() {
        let t = Together::new(3);
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..3)
                .map(|i| {
                    let t = t.clone();
                    s.spawn(move || {
                        let _m = t.member(format!("run {i}"));
                        t.arrive()
                    })
                })
                .collect();
            for h in hs {
                assert_eq!(h.join().unwrap(), Ok(()));
            }
        });
    }

    #[test]
    fn a_run_that_ends_before_its_start_releases_the_others_with_why() {
        let t = Together::new(2);
        std::thread::scope(|s| {
            let waiter = {
                let t = t.clone();
                s.spawn(move || {
                    let _m = t.member("run 1".into());
                    t.arrive()
                })
            };
            let mut m = t.member("run 2".into());
            m.ended("no such file".into());
            drop(m);
            match waiter.join().unwrap() {
                Err(Parted::Failed(why)) => {
                    assert!(
                        why.contains("run 2") && why.contains("no such file"),
                        "{why}"
                    )
                }
                other => panic!("{other:?}"),
            }
        });
    }

    #[test]
    fn a_run_that_ends_after_all_arrived_changes_nothing_for_the_others() {
        let t = Together::new(1);
        let m = t.member("run 1".into());
        assert_eq!(t.arrive(), Ok(()));
        drop(m);
        assert_eq!(
            t.arrive(),
            Ok(()),
            "a late arrival after all arrived starts"
        );
    }
}
