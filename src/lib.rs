//! stripebench: storage throughput for disks and striped volumes.
//!
//! Data flows one way: [`cli`] (what was typed) → [`config`] (validated, no
//! I/O) → [`target`] (opened, guarded) → [`plan`] (workers and regions) →
//! [`coordinator`] and [`worker`] (the measurement) → [`results`] (the
//! document) → [`report`] (table, JSON, CSV). [`app`] strings them together.

#![deny(clippy::dbg_macro)]

pub mod app;
pub mod buffer;
pub mod cache;
pub mod capacity;
pub mod cli;
pub mod compare;
pub mod config;
pub mod configfile;
pub mod coordinator;
pub mod cpus;
pub mod engine;
pub mod error;
pub mod knobs;
pub mod merge;
pub mod output;
pub mod plan;
pub mod progress;
pub mod report;
pub mod results;
pub mod signals;
pub mod stats;
pub mod sweep;
pub mod target;
pub mod testbed;
pub mod topology;
pub mod units;
pub mod verify;
pub mod worker;
pub mod workload;
pub mod writedata;
