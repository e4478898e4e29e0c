//! The integration tests, as one test program (as ripgrep's tests are):
//! one binary to link instead of one per file. Each module is the file of
//! the same name, its tests named `module::test`; `common` holds the
//! helpers they share. Run one file's tests with `cargo test --test it
//! module::`.

mod common;

mod advise;
mod bad_input;
mod buffered_reads;
mod buffered_writes;
mod compare;
mod configs;
mod cpu_time;
mod devices;
mod diff;
mod endless_inputs;
mod engines;
mod escapes;
mod fio_job;
mod fio_oneliner;
mod fio_words;
mod fleet;
mod fleet_hostile;
mod fleet_recipes;
mod fleet_ssh;
mod guard;
mod hangs;
mod holes;
mod hostile_docs;
mod hostile_outputs;
mod html;
mod interrupts;
mod intervals;
mod invocation;
mod json_contract;
mod knobs;
mod lab;
mod lab_advise;
mod lab_compare;
mod lab_compare_write;
mod lab_levels;
mod lab_polled;
mod lab_writes;
mod layers;
mod live;
mod manuals;
mod memory_targets;
mod never_destroy;
mod pipeline;
mod plan;
mod print_fio;
mod rate;
mod requests;
mod restore;
mod ring;
mod run;
mod scale;
mod seed_configs;
mod signatures;
mod stripe_model;
mod sweep;
mod uncached;
mod verify;
mod window_end;
mod written_data;
mod zero_reads;
