//! Layer `measure`: one measured run: the validated configuration, the
//! layout of workers over targets (regions, CPUs, seeds), the window's
//! control and start gate, the coordinator that starts and times the
//! workers, the worker's hot loop, offsets, progress, the collector of the
//! per-second live stream, the memory its buffers take (`memory`), and one
//! measured run start to finish (`session`).
//!
//! May import `engine`, `device`, `analysis`, `base`; knows nothing of the
//! command line, documents or reports.

pub mod config;
pub mod control;
pub mod coordinator;
pub mod iolog;
pub mod layout;
pub mod live;
pub mod loops;
pub mod memory;
pub mod progress;
pub mod rate_min;
pub mod series;
pub mod session;
pub mod steady;
pub mod together;
pub mod worker;
pub mod workload;
