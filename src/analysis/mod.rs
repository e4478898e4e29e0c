//! Layer `analysis`: pure math over measurements: latency histograms,
//! summaries (median, the slow-member rule), the capacity (USL) fit, block
//! verification, the two-sample test that tells a change from noise, the
//! Little's-law check of a run's time in flight (`occupancy`).
//!
//! Imports only `base`. Touches no device, thread or clock: every function
//! here is a function of its arguments.

pub mod capacity;
pub mod foreign;
pub mod histogram;
pub mod mannwhitney;
pub mod occupancy;
pub mod summary;
pub mod verify;
