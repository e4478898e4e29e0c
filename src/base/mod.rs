//! The vocabulary every layer shares: errors and exit codes, units (sizes,
//! durations, rates and how they print), CPU lists. Imports nothing of the
//! crate.

pub mod cpus;
pub mod error;
pub mod units;
