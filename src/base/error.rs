//! Errors and exit codes.
//!
//! Everything the user got wrong (bad options, a target that cannot be used, a
//! refused write) exits with code 2. Failures during a run exit with 1; an
//! interrupted run exits with 128 + the signal's number (130 for SIGINT, 143
//! for SIGTERM).
//!
//! Each layer's error enum says its own code through [`ExitCoded`]; the top
//! (`commands::exit_code_for`) walks an error's chain and asks the first one
//! it knows. [`UsageError`] is what is left for one-off messages.

use std::fmt;

/// Exit code: the run completed and every I/O succeeded.
pub const EXIT_OK: u8 = 0;
/// Exit code: the run completed with I/O errors, or failed while running.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code: bad input, or a request refused for safety, before any I/O.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: the run completed, but most of the reads sampled on a
/// target came back all zeros with no layer check vouching that they were
/// stored: the figure is not the device's (`analysis::zeros`). Not with
/// `--allow-holes`. (3 is the fleet scripts' "incomplete".)
pub const EXIT_ZERO_READS: u8 = 4;
/// Exit code: interrupted by a signal (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

/// An error that knows the exit code it ends the program with: the user's
/// mistakes [`EXIT_USAGE`], failures during a run [`EXIT_FAILURE`].
pub trait ExitCoded: std::error::Error + Send + Sync + 'static {
    /// The code `main` exits with when this error reaches it.
    fn exit_code(&self) -> u8;
}

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

impl ExitCoded for UsageError {
    fn exit_code(&self) -> u8 {
        EXIT_USAGE
    }
}

impl From<String> for UsageError {
    fn from(s: String) -> Self {
        UsageError(s)
    }
}

/// Shorthand for returning a usage error from a function that returns `anyhow::Result`.
pub fn usage<T>(msg: impl Into<String>) -> anyhow::Result<T> {
    Err(UsageError(msg.into()).into())
}

/// A figure refused because most of its sampled reads came back all
/// zeros (`analysis::zeros`): exits [`EXIT_ZERO_READS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZeroReadsRefused(pub String);

impl fmt::Display for ZeroReadsRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ZeroReadsRefused {}

impl ExitCoded for ZeroReadsRefused {
    fn exit_code(&self) -> u8 {
        EXIT_ZERO_READS
    }
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

impl Interrupted {
    /// Whether `e` is a signal's stop.
    pub fn is(e: &anyhow::Error) -> bool {
        e.downcast_ref::<Interrupted>().is_some()
    }
}

impl ExitCoded for Interrupted {
    /// 128 + the signal that stopped the run.
    fn exit_code(&self) -> u8 {
        crate::base::signals::exit_status()
    }
}

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

/// Whether `c` must not reach a terminal as is: a control character (C0,
/// DEL, C1: ESC starts the sequences that retitle a window, write the
/// clipboard or clear the screen) or an invisible one that reorders or
/// hides text: every format character (Unicode category Cf: bidi marks,
/// overrides and isolates, the Arabic letter mark, zero-width characters,
/// the soft hyphen, invisible operators, tag characters that hide a whole
/// message) and the line and paragraph separators (Zl, Zp).
pub fn hostile(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{ad}'
                | '\u{600}'..='\u{605}'
                | '\u{61c}'
                | '\u{6dd}'
                | '\u{70f}'
                | '\u{890}'..='\u{891}'
                | '\u{8e2}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{110bd}'
                | '\u{110cd}'
                | '\u{13430}'..='\u{1343f}'
                | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0001}'
                | '\u{e0020}'..='\u{e007f}'
        )
}

/// Text that came from outside (a path, a device or host name, a document's
/// field, a message read back from a document) as printed for a person, on
/// a terminal, in a table, a CSV cell, an HTML page or an error line: as is,
/// or with each control or invisible character written as `\u{1b}`. The
/// one escaping every text rendering uses; JSON keeps the real text (serde
/// escapes it there).
pub fn show_text(s: &str) -> std::borrow::Cow<'_, str> {
    escape(s, hostile)
}

/// Text from outside as a `format!` argument: [`show_text`], keeping the
/// width and alignment asked for (`{:<24}` pads the escaped text). What
/// renderings wrap a field in where it enters a line, so that a newline in
/// a name cannot start a line of its own (a forged row, a fake `[ok]`):
/// [`show_lines`] at the output seam keeps newlines, as they are the
/// rendering's own layout.
pub struct Shown<'a>(pub &'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&show_text(self.0))
    }
}

/// [`show_text`] for a whole rendering (a table, a CSV file, an HTML page,
/// a message of several lines): newlines and tabs are its own layout and
/// stay; every other control or invisible character is escaped. The last
/// line of defence at the output seam, whatever field the text came from.
pub fn show_lines(s: &str) -> std::borrow::Cow<'_, str> {
    escape(s, |c| c != '\n' && c != '\t' && hostile(c))
}

/// [`show_lines`] for bytes meant as text (invalid UTF-8 is shown as U+FFFD).
pub fn show_lines_bytes(b: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    match std::str::from_utf8(b) {
        Ok(s) => match show_lines(s) {
            std::borrow::Cow::Borrowed(_) => std::borrow::Cow::Borrowed(b),
            std::borrow::Cow::Owned(o) => std::borrow::Cow::Owned(o.into_bytes()),
        },
        Err(_) => std::borrow::Cow::Owned(
            show_lines(&String::from_utf8_lossy(b))
                .into_owned()
                .into_bytes(),
        ),
    }
}

fn escape(s: &str, bad: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(&bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if bad(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether this process runs as root (effective uid 0): to root, "root is
/// needed" is no help, and a refusal it meets is something else (a link or
/// a directory where a file should be, a security module, a protected file
/// in a sticky directory), which its error must say instead.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `" (root is needed)"`, the hint after a failure to change a setting or
/// read a device, for a user who is not root; nothing for root.
pub fn root_needed() -> &'static str {
    if is_root() {
        ""
    } else {
        " (root is needed)"
    }
}

/// What stands at `path` (not followed), for an error that root met there:
/// `" (there: a symbolic link, owner uid 1000 gid 1000, mode 0777)"`, or
/// nothing when nothing stands there.
pub fn node_facts(path: &std::path::Path) -> String {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return String::new();
    };
    let t = m.file_type();
    let kind = if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a regular file"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_fifo() {
        "a FIFO"
    } else {
        "a socket"
    };
    format!(
        " (there: {kind}, owner uid {} gid {}, mode {:04o})",
        m.uid(),
        m.gid(),
        m.mode() & 0o7777
    )
}

/// A path as shown in messages: as is, or quoted and escaped by
/// [`show_text`] when it holds control characters (a newline must not split
/// a one-line error, an escape must not reach the terminal).
pub fn show_path(path: &std::path::Path) -> String {
    let s = path.to_string_lossy();
    match show_text(&s) {
        std::borrow::Cow::Borrowed(_) => s.into_owned(),
        std::borrow::Cow::Owned(e) => format!("\"{e}\""),
    }
}

/// One line on standard error, whatever becomes of it: a closed or full
/// stderr (`2>&1 | head`, a launcher that hung up) must not turn an error
/// into a panic, nor a panic into an abort (eprintln! panics there).
pub fn say(msg: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{msg}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn show_text_escapes_every_control_and_invisible_character() {
        assert_eq!(show_text("plain/path é"), "plain/path é");
        let hostile = "a\u{1b}]0;t\u{7}\u{1b}[31m\n\t\u{7f}\u{9b}\u{202e}b";
        let shown = show_text(hostile);
        assert!(!shown.chars().any(|c| c.is_control()), "{shown}");
        assert_eq!(
            shown,
            "a\\u{1b}]0;t\\u{7}\\u{1b}[31m\\u{a}\\u{9}\\u{7f}\\u{9b}\\u{202e}b"
        );
        assert_eq!(show_path(std::path::Path::new("x\ny")), "\"x\\u{a}y\"");
        assert_eq!(show_lines("a\tb\n\u{1b}[2J\n"), "a\tb\n\\u{1b}[2J\n");
        assert_eq!(format!("[{:<6}]", Shown("a\nb")), "[a\\u{a}b]");
        assert_eq!(format!("[{:<6}]", Shown("ab")), "[ab    ]");
    }
}
