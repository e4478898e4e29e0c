//! The front door's running: the invocations `cli::front` parsed run in
//! order, each one's checks made before any of them begins when there are
//! several, and each outcome mapped to the process's exit code.

use crate::base::error::{show_lines, EXIT_FAILURE, EXIT_USAGE};
use crate::cli::front::{first_line, refusal, Invocation, Refusal};
use crate::commands::exit_code_for;

/// Runs the invocations: one command, or a fio job file's stonewall
/// groups, which are a series of runs (`commands::fio`).
pub fn run(mut invocations: Vec<Invocation>) -> u8 {
    // Before anything can wait, write a test bed or be interrupted.
    crate::output::install_notices();
    if invocations.len() > 1 {
        return crate::commands::fio::run(invocations.into_iter().map(group).collect());
    }
    let Some(inv) = invocations.pop() else {
        return 0;
    };
    if !inv.said.is_empty() {
        let _ = std::io::Write::write_all(&mut std::io::stderr(), show_lines(&inv.said).as_bytes());
    }
    run_one(inv)
}

/// A stonewall group's invocation as the series takes it: `run`'s
/// options, or the line that refuses them.
fn group(inv: Invocation) -> crate::commands::fio::Group {
    let args = match inv.cli {
        Ok(crate::cli::Cli {
            command: crate::cli::Command::Run(args),
            ..
        }) => Ok(*args),
        Ok(_) => Err("a fio job file's stonewall groups are runs".to_string()),
        Err(e) => Err(first_line(&e)),
    };
    crate::commands::fio::Group {
        said: inv.said,
        args,
        with_previous: inv.with_previous,
        reads_what_was_written: inv.reads_what_was_written,
        exitall: inv.exitall,
    }
}

/// A usage error found before anything was parsed (a job or config file
/// refused): one line, exit 2.
pub fn usage_error(msg: &str) -> u8 {
    say(format_args!("stripebench: error: {}", show_lines(msg)));
    EXIT_USAGE
}

/// Runs one invocation; its exit code.
fn run_one(inv: Invocation) -> u8 {
    let cli = match inv.cli {
        Ok(cli) => cli,
        Err(e) => {
            return match refusal(&e, inv.sub.as_deref(), &inv.words) {
                Refusal::Print(code) => {
                    let _ = e.print();
                    code
                }
                Refusal::Line(line) => {
                    say(format_args!("stripebench: error: {}", show_lines(&line)));
                    EXIT_USAGE
                }
            };
        }
    };
    match std::panic::catch_unwind(|| crate::commands::main(cli)) {
        // A report that could not reach stdout is a failure, even when the run was fine.
        Ok(Ok(0)) if crate::output::stdout::failed() => {
            // A closed pipe (`| head`) exits as SIGPIPE would, 141; a full disk 1.
            if crate::output::stdout::closed() {
                128 + libc::SIGPIPE as u8
            } else {
                EXIT_FAILURE
            }
        }
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            say(format_args!(
                "stripebench: error: {}",
                show_lines(&format!("{e:#}"))
            ));
            exit_code_for(&e)
        }
        Err(_) => EXIT_FAILURE,
    }
}

pub use crate::base::error::say;
