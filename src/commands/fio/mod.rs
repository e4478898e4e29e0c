//! `run --fio-job FILE` with several stonewall groups: each group is one
//! run, and the groups are a series (`measure::series`). Every group is
//! checked before any of them begins (its options, its numbered outputs,
//! its targets as a dry run sees them), so that a refusal group 3 would
//! meet costs nothing of groups 1 and 2; then they run in order, each
//! one's documents written under its numbered paths as it ends, and a
//! failure or a signal stops the ones after it.
//!
//! Jobs of one group that are different workloads run at once in fio:
//! each is a run of its own here (its own numbered documents), and the
//! runs of one group go together, their windows opened at the same
//! instant (`measure::series`'s runs at once).
//!
//! A job file of one run is an ordinary `run`, and never comes here.

use std::path::PathBuf;

use crate::base::error::say;
use crate::base::error::{show_lines, EXIT_FAILURE, EXIT_OK};
use crate::cli::RunArgs;
use crate::commands::{exit_code_for, run};
use crate::measure::config::RunConfig;
use crate::measure::series::Series;
use crate::output::Outputs;

/// One stonewall group: what to print before it runs (its `#` lines and
/// the stripebench command it stands for), and its options, or the line
/// that refuses them.
pub struct Group {
    pub said: String,
    pub args: std::result::Result<RunArgs, String>,
    /// It runs at once with the group before it (no stonewall between
    /// fio jobs that are different workloads).
    pub with_previous: bool,
    /// The read-back of a verified sequential mix: it reads as many
    /// bytes as the run before it wrote, set when that run ends.
    pub reads_what_was_written: bool,
    /// The file has exitall=1: what its end stops (runs at once; with
    /// exit_what=all, the runs after it too).
    pub exitall: Option<crate::measure::together::Exitall>,
}

/// Runs the groups; the exit code.
pub fn run(groups: Vec<Group>) -> u8 {
    match std::panic::catch_unwind(move || run_groups(groups)) {
        Ok(code) => code,
        Err(_) => EXIT_FAILURE,
    }
}

/// One group, checked: its configuration, its targets, its outputs.
struct Checked {
    said: String,
    with_previous: bool,
    reads_what_was_written: bool,
    config: RunConfig,
    targets: Vec<PathBuf>,
    out: Outputs,
}

fn run_groups(groups: Vec<Group>) -> u8 {
    let n = groups.len();
    let mut checked = Vec::with_capacity(n);
    for (i, g) in groups.into_iter().enumerate() {
        match check(g) {
            Ok(c) => checked.push(c),
            Err(e) => {
                let before = format!(
                    "run {} of {n} (checked before any of them began; none ran)",
                    i + 1
                );
                say(format_args!(
                    "stripebench: error: {before}: {}",
                    show_lines(&format!("{e:#}"))
                ));
                return exit_code_for(&e);
            }
        }
    }
    // --print-fio and --dry-run do no I/O: each group prints what the
    // typed command prints.
    if checked
        .iter()
        .any(|c| c.config.print_fio || c.config.dry_run)
    {
        return print_each(checked);
    }
    let mut batches: Vec<Vec<Checked>> = Vec::new();
    for c in checked {
        match batches.last_mut() {
            Some(b) if c.with_previous => b.push(c),
            _ => batches.push(vec![c]),
        }
    }
    let mut planner = Groups {
        groups: batches.into_iter(),
        n,
        begun: 0,
        hubs: Vec::new(),
        code: EXIT_OK,
        written: None,
    };
    let ended = Series::new().run(&mut planner);
    let done = planner.begun;
    let code = match ended {
        Err(e) => {
            say(format_args!(
                "stripebench: error: {}",
                show_lines(&format!("{e:#}"))
            ));
            exit_code_for(&e)
        }
        Ok(_) if planner.code != EXIT_OK => planner.code,
        // A signal after run `done`'s window closed (while its report was
        // written): the runs after it do not start.
        Ok(ended) if ended.interrupted => {
            say(format_args!(
                "stripebench: interrupted after run {done} of {n}: the {} after it did not run",
                n - done
            ));
            return crate::base::signals::exit_status();
        }
        Ok(_) => EXIT_OK,
    };
    if code != EXIT_OK && done < n {
        say(format_args!(
            "stripebench: run {done} of {n} exited {code}: the {} after it did not run",
            n - done
        ));
    }
    code
}

/// `--print-fio` or `--dry-run`: each group's line, then what `run`
/// prints of it, until one says no.
fn print_each(checked: Vec<Checked>) -> u8 {
    let n = checked.len();
    for (i, c) in checked.into_iter().enumerate() {
        print_said(&c.said);
        let code = match run::run(c.config, c.out.request().clone()) {
            Ok(code) => stdout_code(code),
            Err(e) => {
                say(format_args!(
                    "stripebench: error: {}",
                    show_lines(&format!("{e:#}"))
                ));
                exit_code_for(&e)
            }
        };
        if code != EXIT_OK {
            if i + 1 < n {
                say(format_args!(
                    "stripebench: run {} of {n} exited {code}: the {} after it did not run",
                    i + 1,
                    n - i - 1
                ));
            }
            return code;
        }
    }
    EXIT_OK
}

fn print_said(said: &str) {
    if !said.is_empty() {
        let _ = std::io::Write::write_all(&mut std::io::stderr(), show_lines(said).as_bytes());
    }
}

/// A run's code once its report went out: one that could not reach
/// stdout is a failure, even when the run was fine (a closed pipe exits
/// as SIGPIPE would, 141; a full disk 1).
fn stdout_code(code: u8) -> u8 {
    if code != EXIT_OK || !crate::output::stdout::failed() {
        code
    } else if crate::output::stdout::closed() {
        128 + libc::SIGPIPE as u8
    } else {
        EXIT_FAILURE
    }
}

mod check;
mod groups;
use check::check;
use groups::Groups;
