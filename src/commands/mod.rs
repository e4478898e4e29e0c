//! Layer `commands`, the top: one file per subcommand, the only place where
//! the layers meet. Each takes what `cli` parsed and validated, drives
//! `measure`/`device`, builds a `document` and hands it to `report`;
//! [`main`] dispatches and returns the exit code. The measured run that
//! run, verify, sweep and compare share is `measure::session`.
//!
//! May import every layer; nothing imports it but `main.rs`.

pub mod advise;
pub mod compare;
pub mod completions;
pub mod diff;
pub mod exit;
pub mod fio;
pub mod front;
pub mod history;
pub mod man;
pub mod membw;
pub mod merge;
pub mod plan;
pub mod report;
pub mod restore;
pub mod run;
pub mod source;
pub mod sweep;
pub mod topology;
pub mod version;

use anyhow::Result;

pub use exit::exit_code_for;

use crate::base::cpus;
use crate::cli::{Cli, Command};

/// Runs the parsed command line; returns the exit code.
pub fn main(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Run(args) => {
            let cfg =
                crate::cli::validate::run_config(&args, &cpus::available_cpus(), run::tmpdir())?;
            run::run(cfg, args.outputs())
        }
        Command::Verify(args) => {
            let cfg =
                crate::cli::validate::verify_config(&args, &cpus::available_cpus(), run::tmpdir())?;
            run::run(cfg, args.outputs())
        }
        Command::Advise(args) => advise::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::History(args) => history::run(&args),
        Command::Plan(args) => plan::run(&args),
        Command::Merge(args) => merge::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Membw => membw::run(),
        Command::Sweep(args) => sweep::run(&args),
        Command::Topology(args) => topology::run(&args),
        Command::Restore(a) => restore::run(&a),
        Command::Version(args) => version::run(&args),
        Command::Completions(args) => completions::run(&args),
        Command::Man(args) => man::run(&args),
        // The front door makes `stripebench fio` the runs it stands for.
        Command::Fio(_) => Err(crate::base::error::UsageError(
            "stripebench fio is read by the front door: give fio's options after it".into(),
        )
        .into()),
    }
}
