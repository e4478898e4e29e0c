//! How this process was invoked: its argv and, with `--config`, the config
//! file's path and content, recorded once at start-up (by `main`, and by the
//! config file's reader) so every document can say how to repeat its run.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// The command that made a document.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Invocation {
    /// The arguments as typed (without a `--config` file's values), as UTF-8
    /// (a byte that is not UTF-8 becomes U+FFFD; `command` keeps it).
    pub argv: Vec<String>,
    /// The same arguments as one POSIX shell line that gives them back
    /// byte for byte: plain words as they are, others in single quotes, and
    /// control or non-UTF-8 bytes as `$'\xNN'`.
    pub command: String,
    /// `--config`: the file as it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_file: Option<ConfigFile>,
}

/// A `--config` file as it was read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConfigFile {
    pub path: String,
    pub content: String,
}

static ARGV: OnceLock<Vec<OsString>> = OnceLock::new();
static CONFIG: OnceLock<ConfigFile> = OnceLock::new();

/// Records the process's arguments (the first call wins).
pub fn record_argv(argv: Vec<OsString>) {
    let _ = ARGV.set(argv);
}

/// Records the `--config` file read (the first call wins).
pub fn record_config(path: &str, content: &str) {
    let _ = CONFIG.set(ConfigFile {
        path: path.into(),
        content: content.into(),
    });
}

/// What was recorded; `None` when nothing was (a library caller, a unit test).
pub fn current() -> Option<Invocation> {
    let argv = ARGV.get()?;
    Some(Invocation {
        argv: argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        command: shell_line(argv),
        config_file: CONFIG.get().cloned(),
    })
}

/// Arguments as one shell line that gives them back exactly.
pub fn shell_line(argv: &[OsString]) -> String {
    argv.iter()
        .map(|a| shell_word(a.as_bytes()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One argument quoted for a shell (`$'...'` is read by bash, zsh and ksh,
/// and by POSIX shells since 2024): safe characters bare; printable text in single
/// quotes; anything with a control byte, a quote or invalid UTF-8 as
/// `$'...'` with `\xNN` escapes, so no byte reaches a terminal raw.
pub fn shell_word(bytes: &[u8]) -> String {
    let safe = |b: u8| b.is_ascii_alphanumeric() || b"_-./:=,+@%^".contains(&b);
    if !bytes.is_empty() && bytes.iter().all(|&b| safe(b)) {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    match std::str::from_utf8(bytes) {
        Ok(s) if !s.chars().any(|c| c.is_control() || c == '\'') => format!("'{s}'"),
        _ => {
            let mut out = String::from("$'");
            for chunk in bytes.utf8_chunks() {
                for c in chunk.valid().chars() {
                    match c {
                        '\\' => out.push_str("\\\\"),
                        '\'' => out.push_str("\\'"),
                        c if c.is_control() => {
                            let mut buf = [0u8; 4];
                            for b in c.encode_utf8(&mut buf).bytes() {
                                out.push_str(&format!("\\x{b:02x}"));
                            }
                        }
                        c => out.push(c),
                    }
                }
                for b in chunk.invalid() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            out.push('\'');
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_arguments_come_back_quoted_with_no_raw_control_byte() {
        assert_eq!(shell_word(b"--bs"), "--bs");
        assert_eq!(shell_word(b""), "''");
        assert_eq!(shell_word(b"a b"), "'a b'");
        assert_eq!(shell_word("é".as_bytes()), "'é'");
        assert_eq!(shell_word(b"it's"), "$'it\\'s'");
        assert_eq!(shell_word(b"\x1b[31mred\n"), "$'\\x1b[31mred\\x0a'");
        assert_eq!(shell_word(b"a\xffb\\"), "$'a\\xffb\\\\'");
        assert_eq!(shell_word("\u{85}".as_bytes()), "$'\\xc2\\x85'");
    }
}
