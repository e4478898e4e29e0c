//! stripebench: storage throughput for disks and striped volumes.
//!
//! The layers, top to bottom; a layer imports only those below it:
//!
//! - [`commands`]: one file per subcommand, the only place where layers meet;
//! - [`cli`]: what was typed (clap), the `--config` file, and its validation
//!   into a run configuration;
//! - [`output`]: where every byte goes: one `Outputs` per command checks
//!   every destination before any I/O, decides when stdout is taken, and
//!   writes the files whole (the last write, each sweep point's, the live
//!   stream and the metrics file every second); stdout that never panics;
//! - [`report`]: renderers (table, CSV, JSON, SVG, the one-file HTML page,
//!   the diff, the live line, the metrics text) as pure functions of
//!   documents, and the registry of document formats;
//! - [`document`]: the JSON contract (run, sweep, compare, merge, plan,
//!   diff), its assembly from a finished run or from other documents, and
//!   reading documents back (load; curve for `plan --p99`);
//! - [`measure`]: one measured run: configuration, worker layout,
//!   coordinator, the worker's hot loop (and its schedule under --rate),
//!   offsets, signals, progress, the per-second hand-off for --live;
//! - [`engine`]: how a worker does I/O (sync, io_uring, fault injection) and
//!   its buffers;
//! - [`device`]: targets, the write guard, device counters, the page cache,
//!   sysfs settings and their restore, scratch files, topology;
//! - [`analysis`]: pure math: histograms, the USL fit, block verification,
//!   the Mann-Whitney U test;
//! - [`base`]: errors and exit codes, units, CPU lists.

#![deny(clippy::dbg_macro)]

pub mod analysis;
pub mod base;
pub mod cli;
pub mod commands;
pub mod device;
pub mod document;
pub mod engine;
pub mod measure;
pub mod output;
pub mod report;
pub mod store;
