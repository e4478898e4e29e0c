//! One measured run: the validated configuration, the layout of workers over
//! targets (regions, CPUs, seeds), the coordinator that starts and times
//! them, the worker's hot loop, offsets, signals and progress. Knows nothing
//! of the command line's parsing or of reports.

pub mod config;
pub mod control;
pub mod coordinator;
pub mod layout;
pub mod progress;
pub mod worker;
pub mod workload;
