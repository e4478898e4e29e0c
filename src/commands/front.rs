//! The front door's running: the invocations `cli::front` parsed run in
//! order, each one's checks made before any of them begins when there are
//! several, and each outcome mapped to the process's exit code.

use crate::base::error::{show_lines, EXIT_FAILURE, EXIT_USAGE};
use crate::cli::front::{first_line, refusal, Invocation, Refusal};
use crate::commands::exit_code_for;

/// Runs the invocations in order; the exit code. Several (stonewall
/// groups): every check each makes before its I/O is made for all of them
/// before the first begins; a failure or a signal stops the ones after it.
pub fn run(invocations: Vec<Invocation>) -> u8 {
    let n = invocations.len();
    if n > 1 {
        for (i, inv) in invocations.iter().enumerate() {
            if let Err(code) = precheck_one(inv, i + 1, n) {
                return code;
            }
        }
    }
    for (i, inv) in invocations.into_iter().enumerate() {
        // A signal that came after run i's window closed (while its report
        // was written): the runs after it do not start.
        if i > 0 && crate::base::signals::interrupted() {
            say(format_args!(
                "stripebench: interrupted after run {i} of {n}: the {} after it did not run",
                n - i
            ));
            return crate::base::signals::exit_status();
        }
        if !inv.said.is_empty() {
            let _ =
                std::io::Write::write_all(&mut std::io::stderr(), show_lines(&inv.said).as_bytes());
        }
        let code = run_one(inv);
        if code != 0 {
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
    0
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

/// Run `i` of `n`'s checks, before any of them runs: the exit code of
/// its refusal, said on one line.
fn precheck_one(inv: &Invocation, i: usize, n: usize) -> Result<(), u8> {
    let before = format!("run {i} of {n} (checked before any of them began; none ran)");
    let cli = match &inv.cli {
        Ok(cli) => cli.clone(),
        Err(e) => {
            say(format_args!(
                "stripebench: error: {before}: {}",
                show_lines(&first_line(e))
            ));
            return Err(EXIT_USAGE);
        }
    };
    match std::panic::catch_unwind(|| crate::commands::precheck(cli)) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => {
            say(format_args!(
                "stripebench: error: {before}: {}",
                show_lines(&format!("{e:#}"))
            ));
            Err(exit_code_for(&e))
        }
        Err(_) => Err(EXIT_FAILURE),
    }
}

/// One line on standard error, whatever becomes of it: a closed or full
/// stderr (`2>&1 | head`, a launcher that hung up) must not turn an error
/// into a panic, nor a panic into an abort (eprintln! panics there).
pub fn say(msg: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{msg}");
}
