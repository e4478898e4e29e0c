//! The vocabulary every layer shares: errors and exit codes, units (sizes,
//! durations, rates and how they print), CPU lists, what an I/O is, the process's signal state. Imports nothing of the
//! crate.

pub mod cpus;
pub mod error;
pub mod io;
pub mod signals;
pub mod units;
