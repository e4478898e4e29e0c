//! The exit code of an error that reached the top: the one place that knows
//! every layer's error type. Each type says its own code
//! ([`ExitCoded::exit_code`]); this walks the error's chain (its contexts
//! and sources, outermost first) and asks the first one it recognises.
//! Anything unrecognised is a failure during a run: exit 1.

use crate::base::error::{ExitCoded, Interrupted, UsageError, ZeroReadsRefused, EXIT_FAILURE};

/// The exit code for an error that reached `main`.
pub fn exit_code_for(err: &anyhow::Error) -> u8 {
    // Types are tried in this order; within one type the whole chain is
    // searched, so a usage mistake wrapped in context still exits 2.
    macro_rules! first_of {
        ($($t:ty),* $(,)?) => {
            $(
                if let Some(code) = code_as::<$t>(err) {
                    return code;
                }
            )*
        };
    }
    first_of!(
        UsageError,
        Interrupted,
        ZeroReadsRefused,
        crate::cli::validate::ConfigError,
        crate::cli::configfile::ConfigFileError,
        crate::device::OpenError,
        crate::device::topology::TopologyError,
        crate::device::scratch::TestbedError,
        crate::document::Error,
    );
    EXIT_FAILURE
}

/// The code of the first error of type `T` in `err`: anyhow's own downcast
/// (which also sees a context value of type `T`), else any link of the
/// chain (which sees a `T` kept as another error's `#[source]`).
fn code_as<T: ExitCoded>(err: &anyhow::Error) -> Option<u8> {
    if let Some(e) = err.downcast_ref::<T>() {
        return Some(e.exit_code());
    }
    err.chain()
        .find_map(|cause| cause.downcast_ref::<T>())
        .map(ExitCoded::exit_code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::error::{EXIT_INTERRUPTED, EXIT_USAGE};
    use anyhow::Context;

    #[test]
    fn usage_error_exits_2_bare_and_under_context() {
        let bare = anyhow::Error::from(UsageError("bad".into()));
        assert_eq!(exit_code_for(&bare), EXIT_USAGE);
        let wrapped = Err::<(), _>(UsageError("bad".into()))
            .context("while checking")
            .unwrap_err();
        assert_eq!(exit_code_for(&wrapped), EXIT_USAGE);
    }

    #[test]
    fn interrupted_exits_with_the_signal_status() {
        // No signal was received in this test process: SIGINT's 130.
        let e = anyhow::Error::from(Interrupted("before the run"));
        assert_eq!(exit_code_for(&e), EXIT_INTERRUPTED);
    }

    #[test]
    fn anything_else_exits_1() {
        let e = anyhow::anyhow!("disk on fire");
        assert_eq!(exit_code_for(&e), EXIT_FAILURE);
        let io = anyhow::Error::from(std::io::Error::other("eio")).context("reading");
        assert_eq!(exit_code_for(&io), EXIT_FAILURE);
    }

    #[test]
    fn the_options_mistakes_exit_2() {
        use crate::cli::configfile::ConfigFileError;
        use crate::cli::validate::ConfigError;
        for e in [
            anyhow::Error::from(ConfigError::SizeZero),
            anyhow::Error::from(ConfigError::Cpus("CPU 7 is not online".into())),
            anyhow::Error::from(ConfigFileError::NoFile),
            anyhow::Error::from(ConfigFileError::UnknownKey {
                at: "x.toml line 2".into(),
                key: "frobnicate".into(),
                hint: String::new(),
            })
            .context("reading the config"),
        ] {
            assert_eq!(exit_code_for(&e), EXIT_USAGE, "{e:#}");
        }
        assert_eq!(
            ConfigFileError::UnknownKey {
                at: "x.toml line 2".into(),
                key: "k".into(),
                hint: "use the long option names of the command (rw, bs, duration, ...) or targets"
                    .into(),
            }
            .to_string(),
            "config x.toml line 2: unknown key 'k': use the long option names of the command (rw, bs, duration, ...) or targets"
        );
    }

    #[test]
    fn the_devices_refusals_exit_2() {
        use crate::device::scratch::TestbedError;
        use crate::device::topology::TopologyError;
        use crate::device::OpenError;
        for e in [
            anyhow::Error::from(OpenError::Directory { shown: "/x".into() }),
            anyhow::Error::from(OpenError::CheckFailed("sdz is mounted".into()))
                .context("opening the targets"),
            anyhow::Error::from(TopologyError::Missing { shown: "/x".into() }),
            anyhow::Error::from(TestbedError::Missing { dir: "/x".into() }),
        ] {
            assert_eq!(exit_code_for(&e), EXIT_USAGE, "{e:#}");
        }
        assert_eq!(
            OpenError::CheckFailed("sdz is mounted at /srv".into()).to_string(),
            "refusing to write: sdz is mounted at /srv"
        );
    }

    /// An error kept as another's source (thiserror's `#[source]`) is found
    /// by the chain walk, where anyhow's downcast alone would miss it.
    #[test]
    fn usage_error_as_a_source_exits_2() {
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] UsageError);
        let e = anyhow::Error::from(Outer(UsageError("inner".into())));
        assert_eq!(exit_code_for(&e), EXIT_USAGE);
    }
}
