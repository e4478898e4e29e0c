//! Notices: what a layer below output/ must tell the user at the moment it
//! happens, as a typed fact (a signal closing the window, a wait for
//! another run's device lock, a test bed being written, a setting that
//! could not be put back). The layers below cannot import output/, and a
//! wait or a signal cannot hand its line up through a return value, so
//! they call [`say`], and output/ installs the one sink that writes
//! ([`install`]: its own stderr writer, which a closed or full stderr
//! cannot turn into a panic). What concerns the measured figures is a
//! [`crate::base::warning::Warning`] instead, and goes into the document.

use std::fmt;
use std::sync::OnceLock;

/// One notice; its [`fmt::Display`] is the line the user sees. Each text
/// field is as shown (`base::error::show_text`, which the maker calls:
/// this module sits below `error`, which asks `signals` for the exit
/// status).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// The first signal: the window closes and what was measured is
    /// written (`measuring`), or the run stops before it measured.
    Stopping { signal: String, measuring: bool },
    /// A second signal: settings put back, what the run made removed, and
    /// the process exits now.
    QuittingAtOnce,
    /// `--wait-lock`: another run (its PID as its lock file holds it)
    /// changes a device's settings; this one waits.
    WaitingForLock { holder: String, device: String },
    /// A test bed is being written (`what`: which one, as its error
    /// messages name it), before anything is measured.
    CreatingTestbed {
        what: String,
        files: usize,
        file_size: String,
        dir: String,
    },
    /// A changed setting could not be put back (`error` says which, to
    /// what, and why).
    NotRestored { error: String },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The line break first: a `^C` or a progress line may stand on
            // the terminal's current line.
            Notice::Stopping { signal, measuring: true } => write!(
                f,
                "\nstripebench: {signal}: closing the window and writing what was measured (again to quit at once)"
            ),
            Notice::Stopping { signal, measuring: false } => write!(
                f,
                "\nstripebench: {signal}: stopping; nothing has been measured yet (again to quit at once)"
            ),
            Notice::QuittingAtOnce => write!(f, "stripebench: interrupted twice; quitting"),
            Notice::WaitingForLock { holder, device } => write!(
                f,
                "stripebench: waiting for another run (PID {holder}) to finish with device {device} (--wait-lock)"
            ),
            Notice::CreatingTestbed {
                what,
                files,
                file_size,
                dir,
            } => write!(
                f,
                "stripebench: creating {what}: {files} file(s) of {file_size} in {dir}"
            ),
            Notice::NotRestored { error } => write!(
                f,
                "stripebench: warning: {error}; run 'stripebench restore'"
            ),
        }
    }
}

static SINK: OnceLock<fn(&Notice)> = OnceLock::new();

/// Makes `sink` the one writer of notices (output/ installs it before a
/// command runs). Only the first call acts: a process has one.
pub fn install(sink: fn(&Notice)) {
    let _ = SINK.set(sink);
}

/// Says `notice` now, through the installed sink; with none installed (a
/// library's caller, a unit test) it goes nowhere. The sink must not panic
/// nor block on anything but the write: the signal thread calls it.
pub fn say(notice: &Notice) {
    if let Some(sink) = SINK.get() {
        sink(notice);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_notice_reads_as_the_line_it_replaces() {
        let said = |n: Notice| n.to_string();
        assert_eq!(
            said(Notice::Stopping {
                signal: "SIGINT".into(),
                measuring: true
            }),
            "\nstripebench: SIGINT: closing the window and writing what was measured (again to quit at once)"
        );
        assert_eq!(
            said(Notice::Stopping {
                signal: "SIGTERM".into(),
                measuring: false
            }),
            "\nstripebench: SIGTERM: stopping; nothing has been measured yet (again to quit at once)"
        );
        assert_eq!(
            said(Notice::QuittingAtOnce),
            "stripebench: interrupted twice; quitting"
        );
        assert_eq!(
            said(Notice::WaitingForLock {
                holder: "17".into(),
                device: "md0".into()
            }),
            "stripebench: waiting for another run (PID 17) to finish with device md0 (--wait-lock)"
        );
        assert_eq!(
            said(Notice::CreatingTestbed {
                what: "a test bed".into(),
                files: 2,
                file_size: "1.0 GiB".into(),
                dir: "/tmp".into()
            }),
            "stripebench: creating a test bed: 2 file(s) of 1.0 GiB in /tmp"
        );
        assert_eq!(
            said(Notice::NotRestored {
                error: "could not restore x to 1: gone".into()
            }),
            "stripebench: warning: could not restore x to 1: gone; run 'stripebench restore'"
        );
    }
}
