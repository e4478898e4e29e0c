//! Errors and exit codes.
//!
//! Everything the user got wrong (bad options, a target that cannot be used, a
//! refused write) is a [`UsageError`] and exits with code 2. Failures during a
//! run exit with 1; an interrupted run exits with 128 + the signal's number
//! (130 for SIGINT, 143 for SIGTERM).

use std::fmt;

/// Exit code: the run completed and every I/O succeeded.
pub const EXIT_OK: u8 = 0;
/// Exit code: the run completed with I/O errors, or failed while running.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code: bad input, or a request refused for safety, before any I/O.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: interrupted by a signal (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

/// A mistake in what the user asked for: one line that says what was wrong
/// and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

impl From<String> for UsageError {
    fn from(s: String) -> Self {
        UsageError(s)
    }
}

/// Shorthand for returning a usage error from a function that returns `anyhow::Result`.
pub fn usage<T>(msg: impl Into<String>) -> anyhow::Result<T> {
    Err(UsageError(msg.into()).into())
}

/// A run stopped by a signal before anything was measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interrupted(pub &'static str);

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "interrupted {}", self.0)
    }
}

impl std::error::Error for Interrupted {}

/// The exit code of a measuring command that ran: 130 if interrupted (the
/// report still covers what was measured), 1 if it saw I/O errors, else 0.
pub fn exit_code(interrupted: bool, failed: bool) -> u8 {
    if interrupted {
        crate::base::signals::exit_status()
    } else if failed {
        EXIT_FAILURE
    } else {
        EXIT_OK
    }
}

/// The exit code for an error that reached `main`.
pub fn exit_code_for(err: &anyhow::Error) -> u8 {
    if err.downcast_ref::<UsageError>().is_some() {
        EXIT_USAGE
    } else if err.downcast_ref::<Interrupted>().is_some() {
        crate::base::signals::exit_status()
    } else {
        EXIT_FAILURE
    }
}

/// A path as shown in messages: as is, or quoted and escaped when it holds
/// control characters (a newline must not split a one-line error).
pub fn show_path(path: &std::path::Path) -> String {
    let s = path.to_string_lossy();
    if s.chars().any(char::is_control) {
        format!("{s:?}")
    } else {
        s.into_owned()
    }
}
