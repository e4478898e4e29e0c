//! Standard output, written without panicking: a closed pipe (`| head`)
//! or a full disk is said once on stderr, the run goes on and its files are
//! still written; the exit code says so afterwards ([`failed`], [`closed`]).
//! Every byte the program prints to stdout goes through here (the `outln!`
//! macro is `println!` through [`text`]).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::base::error::show_lines;

/// [`bytes`] for a text rendering: its control characters but newlines
/// and tabs escaped ([`show_lines`]), whatever field they came from.
pub fn text(text: &str) {
    bytes(show_lines(text).as_bytes());
}

/// `println!` that never panics: see [`bytes`].
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::output::stdout::text(&format!("{}\n", format_args!($($t)*)))
    };
}

static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes to stdout; a closed pipe or a full disk is said once on stderr
/// (the run goes on, and its files are still written) instead of a panic.
pub fn bytes(bytes: &[u8]) {
    if STDOUT_FAILED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        STDOUT_FAILED.store(true, Ordering::Relaxed);
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            // `| head`: the reader has what it wanted; say nothing more.
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
        } else {
            eprintln!("stripebench: error: cannot write to stdout ({e}); files named with --json, --csv or --plot are still written");
        }
    }
}

/// Text for the user: to stdout, or to stderr when stdout carries a document.
pub fn say(text: &str, stdout_taken: bool) {
    if stdout_taken {
        eprint!("{}", show_lines(text));
    } else {
        self::text(text);
    }
}

/// Whether writing to stdout failed at some point (the exit code says so).
pub fn failed() -> bool {
    STDOUT_FAILED.load(Ordering::Relaxed)
}

/// Whether stdout's reader went away (EPIPE): the exit status is then 141,
/// as a process killed by SIGPIPE would report.
pub fn closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}
