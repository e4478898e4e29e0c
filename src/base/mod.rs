//! Layer `base`, the bottom: the vocabulary every layer shares: errors and
//! exit codes, where the host's sysfs and procfs are (`host`), the warnings
//! of a run, units (sizes, durations, rates and how they print), CPU lists, what a
//! worker thread sets on itself (I/O priority, NUMA CPUs and memory policy),
//! how the process was invoked, what it has used (CPU time, memory), fio's
//! data patterns (`pattern`), what an
//! I/O is (region, direction, the seeded generator), the one bounded read of
//! every input file given by name (`input`), what must be said to the user
//! as it happens (`notice`: typed, written by the sink output/ installs), and the
//! process's signal state (what an interrupt closes is a trait the layers
//! above implement; what a second signal undoes is a hook they register).
//!
//! Imports nothing of the crate.

pub mod cpus;
pub mod error;
pub mod host;
pub mod input;
pub mod invocation;
pub mod io;
pub mod notice;
pub mod path;
pub mod pattern;
pub mod signals;
pub mod thread_setup;
pub mod units;
pub mod usage;
pub mod warning;
