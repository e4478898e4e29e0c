//! `--config FILE.toml`: options from a file, overridden by the command line.
//!
//! Keys are the long option names of the subcommand (`rw = "read"`,
//! `bs = "1m"`, `duration = "5s"`, `buffered = true`, `param = ["bs=64k,1m"]`)
//! plus `targets = [...]`. An unknown key is refused with its file and line.
//!
//! The command line wins, option by option (see [`command_line_wins`]):
//! - an option given on the command line replaces the file's value of it;
//! - it also replaces the file's options it cannot be used with (`--direct`
//!   drops the file's `buffered = true`, `--drop-caches` its `cached`);
//! - `--param NAME=...` replaces the file's `param` entry of that NAME, and
//!   adds the NAME when the file has none;
//! - targets on the command line replace the file's `targets`.
//!
//! What remains of the file is put in front of the command line.

use std::ffi::OsString;
use std::path::Path;

use crate::base::error::{ExitCoded, EXIT_USAGE};

/// What is wrong with `--config` or its file: the user's mistakes (exit 2).
/// `at` is the file as shown with its line (`x.toml line 3`), when known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigFileError {
    #[error("--config needs a FILE.toml")]
    NoFile,
    #[error("--config does not apply to '{0}'")]
    NotForCommand(String),
    #[error("cannot read config {shown}: {error}")]
    Unreadable { shown: String, error: String },
    #[error("config {at}: {message}")]
    NotToml { at: String, message: String },
    #[error("config {at}: targets must be a list of paths")]
    TargetsNotPaths { at: String },
    #[error("config {at}: target '{target}' starts with '-' and would be read as an option: write a path (./{target}), and type options on the command line")]
    TargetLikeOption { at: String, target: String },
    #[error("config {at}: '{key}' cannot come from a file: consent to destroy data must be typed on the command line (--{flag})")]
    Consent {
        at: String,
        key: String,
        flag: String,
    },
    #[error("config {at}: unknown key '{key}': {hint}")]
    UnknownKey {
        at: String,
        key: String,
        /// What to do: the file's own `# command:` when it names one.
        hint: String,
    },
    #[error("config {at}: '{key}' holds a value that is not text or a number")]
    ListItemNotScalar { at: String, key: String },
    #[error("config {at}: '{key}' must be text, a number or true/false")]
    NotScalar { at: String, key: String },
}

impl ExitCoded for ConfigFileError {
    fn exit_code(&self) -> u8 {
        EXIT_USAGE
    }
}

/// Finds `--config FILE` (or `--config=FILE`) after the subcommand and
/// returns the argument list with the file's options spliced in after the
/// subcommand name. `known` lists the subcommand's long option names.
pub fn expand(
    args: Vec<OsString>,
    known: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Result<Vec<OsString>, ConfigFileError> {
    let strs: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let Some(pos) = strs
        .iter()
        .position(|a| a == "--config" || a.starts_with("--config="))
    else {
        return Ok(args);
    };
    let file = match strs[pos].strip_prefix("--config=") {
        Some(f) => f.to_string(),
        None => strs.get(pos + 1).cloned().ok_or(ConfigFileError::NoFile)?,
    };
    // The subcommand is the first argument that is not an option.
    let Some(sub_at) = strs
        .iter()
        .skip(1)
        .position(|a| !a.starts_with('-'))
        .map(|i| i + 1)
    else {
        return Ok(args);
    };
    let Some(options) = known(&strs[sub_at]) else {
        return Err(ConfigFileError::NotForCommand(strs[sub_at].clone()));
    };
    let from_file = load(Path::new(&file), &options)?;
    let from_file = command_line_wins(&strs[sub_at], from_file, &strs[sub_at + 1..]);
    let mut out: Vec<OsString> = args[..=sub_at].to_vec();
    out.extend(from_file.into_iter().map(OsString::from));
    out.extend(args[sub_at + 1..].iter().cloned());
    Ok(out)
}

/// A config file as an input file (`base::input::read`): a page of options
/// (those in configs/ are 1 KiB); `/dev/zero` was read until memory ran out.
const INPUT: crate::base::input::Kind = crate::base::input::Kind {
    holds: "a TOML config file",
    max: 1 << 20,
    pipe: false,
};

/// Reads a config file into command-line arguments.
pub fn load(path: &Path, options: &[String]) -> Result<Vec<String>, ConfigFileError> {
    let shown = crate::base::error::show_path(path);
    let unreadable = |error: String| ConfigFileError::Unreadable {
        shown: shown.clone(),
        error,
    };
    let bytes = crate::base::input::read(path, &INPUT).map_err(|e| unreadable(e.to_string()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| unreadable("it is not UTF-8 text: give a TOML config file".into()))?;
    // Every document records the file as it was read.
    crate::base::invocation::record_config(&path.display().to_string(), &text);
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e.span().map(|s| text[..s.start].lines().count().max(1));
        ConfigFileError::NotToml {
            at: format!(
                "{shown}{}",
                line.map(|l| format!(" line {l}")).unwrap_or_default()
            ),
            message: if looks_like_fio(&text) {
                format!(
                    "{}; this looks like a fio job file: read it with --fio-job {shown} (--config reads TOML: keys are the long option names, e.g. bs = \"1m\"; see configs/)",
                    one_line(e.message())
                )
            } else {
                one_line(e.message())
            },
        }
    })?;
    let line_of = |key: &str| {
        text.lines()
            .position(|l| {
                l.trim_start().starts_with(key)
                    && l.trim_start()[key.len()..].trim_start().starts_with('=')
            })
            .map_or(String::new(), |i| format!(" line {}", i + 1))
    };
    // The file and the key's line, as the messages name them.
    let at = |key: &str| format!("{shown}{}", line_of(key));
    let mut positional = Vec::new();
    let mut out = Vec::new();
    for (key, value) in &table {
        let flag = key.replace('_', "-");
        if key == "targets" {
            let toml::Value::Array(items) = value else {
                return Err(ConfigFileError::TargetsNotPaths { at: at(key) });
            };
            for i in items {
                let t =
                    scalar(i).ok_or_else(|| ConfigFileError::TargetsNotPaths { at: at(key) })?;
                // Targets join the command line as words: one that starts
                // with '-' would be read as an option (--allow-destructive).
                if t.starts_with('-') {
                    return Err(ConfigFileError::TargetLikeOption {
                        at: at(key),
                        target: t,
                    });
                }
                positional.push(t);
            }
            continue;
        }
        if CONSENT.contains(&flag.as_str()) {
            return Err(ConfigFileError::Consent {
                at: at(key),
                key: key.clone(),
                flag,
            });
        }
        if !options.contains(&flag) || flag == "config" {
            return Err(ConfigFileError::UnknownKey {
                at: at(key),
                key: key.clone(),
                hint: unknown_key_hint(&text, &shown),
            });
        }
        match value {
            toml::Value::Boolean(true) => out.push(format!("--{flag}")),
            toml::Value::Boolean(false) => {}
            toml::Value::Array(items) => {
                for i in items {
                    let v = scalar(i).ok_or_else(|| ConfigFileError::ListItemNotScalar {
                        at: at(key),
                        key: key.clone(),
                    })?;
                    out.push(format!("--{flag}={v}"));
                }
            }
            v => {
                let v = scalar(v).ok_or_else(|| ConfigFileError::NotScalar {
                    at: at(key),
                    key: key.clone(),
                })?;
                out.push(format!("--{flag}={v}"));
            }
        }
    }
    out.extend(positional);
    Ok(out)
}

/// What an unknown key asks for: the subcommand the file's own
/// `# command: NAME` line names (the seed configs have one), else the keys
/// a config holds.
fn unknown_key_hint(text: &str, shown: &str) -> String {
    let named = text.lines().find_map(|l| {
        let c = l
            .trim()
            .strip_prefix('#')?
            .trim()
            .strip_prefix("command:")?
            .trim();
        let c = c.split_whitespace().next()?;
        c.bytes()
            .all(|b| b.is_ascii_lowercase())
            .then(|| c.to_string())
    });
    match named {
        Some(c) => {
            format!("the file says '# command: {c}': run it as 'stripebench {c} --config {shown}'")
        }
        None => {
            "use the long option names of the command (rw, bs, duration, ...) or targets".into()
        }
    }
}

/// toml's message on one line ("invalid string\nexpected ..." has two).
fn one_line(m: &str) -> String {
    m.trim_end().replace('\n', ": ")
}

/// A fio job file given as a config: a `[section]` line and bare
/// `key=value` lines, which TOML refuses.
fn looks_like_fio(text: &str) -> bool {
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with(';'));
    let section = |l: &str| l.starts_with('[') && l.ends_with(']');
    lines.any(section)
        && text.lines().map(str::trim).any(|l| {
            l.split_once('=').is_some_and(|(_, v)| {
                !v.trim().is_empty()
                    && !v.trim().starts_with(['"', '\'', '['])
                    && v.trim().parse::<f64>().is_err()
                    && v.trim() != "true"
                    && v.trim() != "false"
            })
        })
}

/// Options that consent to destroying data: never taken from a file, where
/// they could be inherited, copied or forgotten.
const CONSENT: [&str; 2] = ["allow-destructive", "force-signature"];

/// The file's arguments (`--flag`, `--flag=value`, then targets) without
/// those that the command line `cli` (what follows the subcommand) replaces:
/// the options it gives, the options those cannot be used with, the `param`
/// entries of the names it sweeps, and the targets when it names any.
pub fn command_line_wins(subcommand: &str, file: Vec<String>, cli: &[String]) -> Vec<String> {
    use clap::CommandFactory;
    let root = crate::cli::Cli::command();
    let Some(cmd) = root.find_subcommand(subcommand) else {
        return file;
    };
    let by_long = |name: &str| cmd.get_arguments().find(|a| a.get_long() == Some(name));
    let takes_value = |a: &clap::Arg| a.get_action().takes_values();
    // What the command line gives.
    let mut given: Vec<&clap::Arg> = Vec::new();
    let mut params: Vec<String> = Vec::new();
    let mut targets = false;
    let mut i = 0;
    while i < cli.len() {
        let tok = cli[i].as_str();
        i += 1;
        if tok == "--" {
            targets |= i < cli.len();
            break;
        }
        let (arg, inline) = if let Some(long) = tok.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            (by_long(name), value)
        } else if tok.len() >= 2 && tok.starts_with('-') && !tok.starts_with("--") {
            let c = tok[1..].chars().next();
            let arg = cmd.get_arguments().find(|a| a.get_short() == c);
            let rest = &tok[1 + c.map_or(0, char::len_utf8)..];
            (arg, (!rest.is_empty()).then(|| rest.to_string()))
        } else {
            targets = true;
            continue;
        };
        let Some(arg) = arg else { continue };
        let value = match inline {
            Some(v) => Some(v),
            None if takes_value(arg) => {
                i += 1;
                cli.get(i - 1).cloned()
            }
            None => None,
        };
        if arg.get_long() == Some("param") {
            if let Some(v) = value {
                params.push(v.split('=').next().unwrap_or("").trim().to_string());
            }
        } else {
            given.push(arg);
        }
    }
    let replaced = |a: &clap::Arg| given.iter().any(|g| replaces(cmd, g, a));
    file.into_iter()
        .filter(|f| {
            let Some(long) = f.strip_prefix("--") else {
                return !targets;
            };
            let (name, value) = long.split_once('=').unwrap_or((long, ""));
            match by_long(name) {
                Some(a) if a.get_long() == Some("param") => {
                    let swept = value.split('=').next().unwrap_or("").trim();
                    !params.iter().any(|p| p == swept)
                }
                Some(a) => !replaced(a),
                None => true,
            }
        })
        .collect()
}

fn scalar(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        _ => None,
    }
}

/// Whether `given`, typed on the command line, replaces `a` from a file
/// (a config or a fio job): the same option, or one clap holds apart from
/// it (`--direct` and `buffered = true`), either way round.
pub(crate) fn replaces(cmd: &clap::Command, given: &clap::Arg, a: &clap::Arg) -> bool {
    given.get_id() == a.get_id()
        || cmd
            .get_arg_conflicts_with(given)
            .iter()
            .any(|c| c.get_id() == a.get_id())
        || cmd
            .get_arg_conflicts_with(a)
            .iter()
            .any(|c| c.get_id() == given.get_id())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> Vec<String> {
        ["rw", "bs", "buffered", "param", "duration"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn keys_become_options_and_unknown_keys_name_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.toml");
        std::fs::write(&f, "# a comment\nrw = \"read\"\nbs = \"1m\"\nbuffered = true\nparam = [\"bs=64k,1m\"]\ntargets = [\"/dev/loop0\"]\n").unwrap();
        let args = load(&f, &opts()).unwrap();
        assert!(
            args.contains(&"--rw=read".to_string()) && args.contains(&"--buffered".to_string())
        );
        assert!(args.contains(&"--param=bs=64k,1m".to_string()));
        assert_eq!(args.last().unwrap(), "/dev/loop0");
        std::fs::write(&f, "rw = \"read\"\n\nspeed = 3\n").unwrap();
        let e = load(&f, &opts()).unwrap_err().to_string();
        assert!(
            e.contains("line 3") && e.contains("unknown key 'speed'") && e.contains("c.toml"),
            "{e}"
        );
        std::fs::write(&f, "rw = \n").unwrap();
        assert!(load(&f, &opts())
            .unwrap_err()
            .to_string()
            .contains("line 1"));
    }

    #[test]
    fn consent_to_destroy_is_refused_from_a_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.toml");
        let mut with_consent = opts();
        with_consent.extend([
            "allow-destructive".to_string(),
            "force-signature".to_string(),
        ]);
        for key in ["allow_destructive", "force_signature", "allow-destructive"] {
            std::fs::write(&f, format!("rw = \"write\"\n{key} = true\n")).unwrap();
            let e = load(&f, &with_consent).unwrap_err().to_string();
            assert!(
                e.contains("line 2") && e.contains("typed on the command line"),
                "{key}: {e}"
            );
        }
    }

    #[test]
    fn a_target_that_is_an_option_is_refused_from_a_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.toml");
        std::fs::write(
            &f,
            "rw = \"write\"\ntargets = [\"--allow-destructive\", \"/tmp/f.dat\"]\n",
        )
        .unwrap();
        let e = load(&f, &opts()).unwrap_err().to_string();
        assert!(
            e.contains("line 2") && e.contains("read as an option"),
            "{e}"
        );
    }

    #[test]
    fn a_key_whose_line_is_not_found_names_no_line_0() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.toml");
        // A quoted key: its line is not found by name.
        std::fs::write(&f, "\"speed\" = 3\n").unwrap();
        let e = load(&f, &opts()).unwrap_err().to_string();
        assert!(
            !e.contains("line 0") && e.contains("unknown key 'speed'"),
            "{e}"
        );
    }

    #[test]
    fn the_command_line_comes_after_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.toml");
        std::fs::write(&f, "bs = \"1m\"\nrw = \"randread\"\n").unwrap();
        let argv: Vec<OsString> = [
            "stripebench",
            "run",
            "--config",
            f.to_str().unwrap(),
            "--bs",
            "4k",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let known = |_: &str| Some(opts());
        let out: Vec<String> = expand(argv, &known)
            .unwrap()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let file_at = out.iter().position(|a| a == "--rw=randread").unwrap();
        let cli_at = out.iter().position(|a| a == "4k").unwrap();
        assert!(file_at < cli_at);
        assert!(
            !out.contains(&"--bs=1m".to_string()),
            "the command line's --bs replaces the file's: {out:?}"
        );
    }

    fn wins(sub: &str, file: &[&str], cli: &[&str]) -> Vec<String> {
        command_line_wins(
            sub,
            file.iter().map(|s| s.to_string()).collect(),
            &cli.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
    }

    #[test]
    fn the_command_line_wins_option_by_option() {
        let file = [
            "--buffered",
            "--duration=5s",
            "--jobs=4",
            "--bs=1m",
            "--cached",
            "/dev/loop0",
        ];
        // Nothing given: the file stands.
        assert_eq!(wins("run", &file, &[]), file);
        // Long, long=value, short, short-joined; conflicts in both directions.
        assert_eq!(
            wins("run", &file, &["--direct", "-t", "1s", "-j2", "--bs=4k"]),
            ["--cached", "/dev/loop0"]
        );
        assert_eq!(
            wins("run", &file, &["--drop-caches"]),
            [
                "--buffered",
                "--duration=5s",
                "--jobs=4",
                "--bs=1m",
                "/dev/loop0"
            ]
        );
        // Targets replace targets; an option's value is not a target.
        assert_eq!(
            wins("run", &file, &["--bs", "4k", "/dev/loop1"]),
            ["--buffered", "--duration=5s", "--jobs=4", "--cached"]
        );
        assert_eq!(
            wins("run", &file, &["--bs", "4k"]).last().unwrap(),
            "/dev/loop0"
        );
        assert_eq!(
            wins("run", &file, &["--", "/dev/loop1"]).last().unwrap(),
            "--cached"
        );
        // param: by the name it sweeps.
        let sweep = ["--param=bs=4k,1m", "--param=jobs=1,2", "--duration=1s"];
        assert_eq!(
            wins("sweep", &sweep, &["--param", "jobs=8"]),
            ["--param=bs=4k,1m", "--duration=1s"]
        );
        assert_eq!(wins("sweep", &sweep, &["--param=iodepth=1,4"]), sweep);
    }

    #[test]
    fn a_key_of_another_subcommand_names_the_files_own_command() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.toml");
        std::fs::write(&f, "# command: sweep\nparam = [\"bs=4k,1m\"]\n").unwrap();
        // run's options: no `param`.
        let run: Vec<String> = opts().into_iter().filter(|o| o != "param").collect();
        let e = load(&f, &run).unwrap_err().to_string();
        assert!(e.contains("line 2: unknown key 'param'"), "{e}");
        assert!(
            e.ends_with(&format!(
                "the file says '# command: sweep': run it as 'stripebench sweep --config {}'",
                f.display()
            )),
            "{e}"
        );
    }

    #[test]
    fn a_fio_job_file_is_named_as_one_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("j.fio");
        std::fs::write(
            &f,
            "[global]\nrw=randread\nbs=4k\n[job1]\nfilename=/dev/sdb\n",
        )
        .unwrap();
        let e = load(&f, &opts()).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
        assert!(
            e.contains("line 2") && e.contains("this looks like a fio job file"),
            "{e}"
        );
        assert!(
            e.contains(&format!("read it with --fio-job {}", f.display())),
            "{e}"
        );
        // A TOML mistake that is no job file says nothing of fio.
        let t = dir.path().join("c.toml");
        std::fs::write(&t, "rw = \n").unwrap();
        let e = load(&t, &opts()).unwrap_err().to_string();
        assert!(!e.contains("fio"), "{e}");
    }
}
