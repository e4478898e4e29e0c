//! `--config FILE.toml`: options from a file, overridden by the command line.
//!
//! Keys are the long option names of the subcommand (`rw = "read"`,
//! `bs = "1m"`, `duration = "5s"`, `buffered = true`, `param = ["bs=64k,1m"]`)
//! plus `targets = [...]`. An unknown key is refused with its file and line.
//!
//! The command line wins, option by option (see [`parse`]):
//! - an option given on the command line replaces the file's value of it;
//! - it also replaces the file's options it cannot be used with (`--direct`
//!   drops the file's `buffered = true`, `--drop-caches` its `cached`);
//! - `--param NAME=...` replaces the file's `param` entry of that NAME, and
//!   adds the NAME when the file has none;
//! - targets on the command line replace the file's `targets`.
//!
//! What remains of the file becomes the subcommand's values, typed, with
//! no argument vector made: clap reads the command line as typed once, to
//! learn what it gave; each of the file's values it does not replace is
//! set as its option's default, checked alone first so that a value the
//! option's parser refuses is named by the file's line; clap reads the
//! command line again with them all. What clap has no default for is set
//! typed: an option given without a value (`sqpoll = true`), and the
//! file's `param` entries, put before the command line's. A value that
//! starts with '-' is a value; a key set to `false` gives nothing.

use std::ffi::OsString;
use std::path::Path;

use clap::parser::ValueSource;

use crate::base::error::{ExitCoded, EXIT_USAGE};
use crate::cli::Cli;

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
    /// A value the option's parser refuses, or two options clap holds
    /// apart, in clap's words.
    #[error("config {at}: {message}")]
    BadValue { at: String, message: String },
}

impl ExitCoded for ConfigFileError {
    fn exit_code(&self) -> u8 {
        EXIT_USAGE
    }
}

/// The command `args` (the process's arguments) stands for when they hold
/// `--config FILE` (or `--config=FILE`) after the subcommand: clap's
/// verdict on the command line typed, the file's values under it.
/// `Ok(None)`: no `--config`. The file's mistakes, and a value of it that
/// the option's parser refuses, are `Err`, named by the file's line.
pub fn parse(args: &[OsString]) -> Result<Option<Result<Cli, clap::Error>>, ConfigFileError> {
    let strs: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let Some(pos) = strs
        .iter()
        .position(|a| a == "--config" || a.starts_with("--config="))
    else {
        return Ok(None);
    };
    let file = match strs[pos].strip_prefix("--config=") {
        Some(f) => f.to_string(),
        None => strs.get(pos + 1).cloned().ok_or(ConfigFileError::NoFile)?,
    };
    // The subcommand is the first argument that is not an option.
    let Some(sub) = strs.iter().skip(1).find(|a| !a.starts_with('-')) else {
        return Ok(None);
    };
    let root = crate::cli::help::command();
    let Some(cmd) = root.find_subcommand(sub) else {
        return Err(ConfigFileError::NotForCommand(sub.clone()));
    };
    let options: Vec<String> = cmd
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect();
    let file = load(Path::new(&file), &options)?;
    // What the command line gives, as clap reads it.
    let matches = match crate::cli::help::matches(args.iter().cloned()) {
        Ok(m) => m,
        Err(e) => return Ok(Some(Err(e))),
    };
    let Some((_, typed)) = matches.subcommand() else {
        return Ok(None);
    };
    let given: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| {
            typed.ids().any(|id| id == a.get_id())
                && typed.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine)
        })
        .collect();
    // The names the command line's --param entries sweep.
    let swept: Vec<String> = typed
        .try_get_raw("params")
        .ok()
        .flatten()
        .map(|vals| {
            vals.map(|v| {
                let v = v.to_string_lossy();
                v.split('=').next().unwrap_or("").trim().to_string()
            })
            .collect()
        })
        .unwrap_or_default();
    let values = file.values(cmd, &given, &swept)?;
    let defaults: Vec<(String, Vec<String>)> = values
        .defaults
        .iter()
        .map(|(a, v, _)| (a.get_id().to_string(), v.clone()))
        .collect();
    // All of them at once; when that is refused, each value alone by its
    // option's parser, so that the refusal names the line at fault.
    let mut cli = match crate::cli::help::parse_over(args.iter().cloned(), sub, &defaults) {
        Ok(cli) => cli,
        Err(all) => {
            for (i, (_, _, at)) in values.defaults.iter().enumerate() {
                if let Err(e) =
                    crate::cli::help::parse_over(args.iter().cloned(), sub, &defaults[i..=i])
                {
                    return Err(ConfigFileError::BadValue {
                        at: at.clone(),
                        message: crate::cli::help::one_line(&e),
                    });
                }
            }
            return Ok(Some(Err(all)));
        }
    };
    for id in &values.bare {
        given_without_value(&mut cli, id);
    }
    if let crate::cli::Command::Sweep(s) = &mut cli.command {
        s.params.splice(0..0, values.params);
    }
    Ok(Some(Ok(cli)))
}

/// What a config file sets under a command line: the options' values
/// (clap's defaults), the options given without a value, and `--param`s
/// (merged with the command line's by name, typed).
struct Values<'a> {
    defaults: Vec<(&'a clap::Arg, Vec<String>, String)>,
    bare: Vec<String>,
    params: Vec<crate::document::sweep::Param>,
}

impl ConfigFile {
    /// The file's values that the command line does not replace (`given`:
    /// the options of `cmd` it gave; `swept`: the names its `--param`s
    /// sweep), each checked for its kind: a flag takes true or false, an
    /// option a value (a list: each, or the last when it takes one).
    fn values<'a>(
        &self,
        cmd: &'a clap::Command,
        given: &[&clap::Arg],
        swept: &[String],
    ) -> Result<Values<'a>, ConfigFileError> {
        let mut out = Values {
            defaults: Vec::new(),
            bare: Vec::new(),
            params: Vec::new(),
        };
        let mut kept: Vec<(&clap::Arg, &Entry)> = Vec::new();
        for e in &self.options {
            let Some(arg) = cmd
                .get_arguments()
                .find(|a| a.get_long() == Some(e.flag.as_str()))
            else {
                continue;
            };
            if e.flag == "param" {
                out.params.extend(params(arg, e, swept)?);
                continue;
            }
            if given.iter().any(|g| replaces(cmd, g, arg)) {
                continue;
            }
            // Two of the file's options that clap holds apart: as typed
            // together, refused.
            if let Some((other, at)) = kept
                .iter()
                .find(|(k, _)| k.get_id() != arg.get_id() && replaces(cmd, k, arg))
                .map(|(k, o)| (k, &o.at))
            {
                return Err(ConfigFileError::BadValue {
                    at: e.at.clone(),
                    message: format!(
                        "the argument '{}' cannot be used with '{}'{}: keep one of them",
                        shown(arg),
                        shown(other),
                        at.rfind(" line ")
                            .map_or(String::new(), |i| format!(" ({})", &at[i + 1..]))
                    ),
                });
            }
            kept.push((arg, e));
            let takes = arg.get_action().takes_values();
            match (&e.value, takes) {
                (Value::On, false) => out.defaults.push((arg, vec!["true".into()], e.at.clone())),
                (Value::On, true) if bare_allowed(arg) => out.bare.push(arg.get_id().to_string()),
                (Value::On, true) => {
                    return Err(ConfigFileError::BadValue {
                        at: e.at.clone(),
                        message: format!(
                            "a value is required for '{}' but none was supplied: write {} = \"VALUE\"",
                            shown(arg),
                            e.key
                        ),
                    })
                }
                (Value::Text(v), false) => {
                    return Err(ConfigFileError::BadValue {
                        at: e.at.clone(),
                        message: format!(
                            "unexpected value '{}' for '{}' found; no more were expected: write {} = true",
                            v[0],
                            shown(arg),
                            e.key
                        ),
                    })
                }
                (Value::Text(v), true) => {
                    // An option given twice on a command line keeps the
                    // last value; one that collects them keeps each.
                    let v = if matches!(arg.get_action(), clap::ArgAction::Append) {
                        v.clone()
                    } else {
                        v[v.len() - 1..].to_vec()
                    };
                    out.defaults.push((arg, v, e.at.clone()));
                }
            }
        }
        if let Some(targets) = &self.targets {
            let positional = cmd.get_positionals().next();
            if let Some(t) = positional.filter(|t| !given.iter().any(|g| g.get_id() == t.get_id()))
            {
                out.defaults
                    .push((t, targets.clone(), self.targets_at.clone()));
            }
        }
        Ok(out)
    }
}

/// The file's `param` entries whose NAME the command line does not sweep,
/// typed by `--param`'s own parser.
fn params(
    arg: &clap::Arg,
    e: &Entry,
    swept: &[String],
) -> Result<Vec<crate::document::sweep::Param>, ConfigFileError> {
    let Value::Text(values) = &e.value else {
        return Err(ConfigFileError::BadValue {
            at: e.at.clone(),
            message: format!(
                "a value is required for '{}' but none was supplied: write {} = [\"NAME=V1,V2\"]",
                shown(arg),
                e.key
            ),
        });
    };
    let mut out = Vec::new();
    for v in values {
        let name = v.split('=').next().unwrap_or("").trim();
        if swept.iter().any(|s| s == name) {
            continue;
        }
        let p = crate::cli::sweep::parse_param(v).map_err(|why| ConfigFileError::BadValue {
            at: e.at.clone(),
            message: format!("invalid value '{v}' for '{}': {why}", shown(arg)),
        })?;
        out.push(p);
    }
    Ok(out)
}

/// An option as clap's messages show it: `--rw <RW>`, `--direct`.
fn shown(arg: &clap::Arg) -> String {
    let long = format!("--{}", arg.get_long().unwrap_or(arg.get_id().as_str()));
    if !arg.get_action().takes_values() {
        return long;
    }
    let names: Vec<String> = arg
        .get_value_names()
        .map(|n| n.iter().map(|n| format!("<{n}>")).collect())
        .unwrap_or_else(|| vec![format!("<{}>", arg.get_id().as_str().to_uppercase())]);
    format!("{long} {}", names.join(" "))
}

/// The options that take a value yet may be given without one, as
/// `sqpoll = true` gives `--sqpoll`: clap has no default for "given, no
/// value", so [`given_without_value`] sets each typed.
const BARE: [&str; 1] = ["sqpoll"];

fn bare_allowed(arg: &clap::Arg) -> bool {
    BARE.contains(&arg.get_id().as_str())
}

/// Sets `id`, one of [`BARE`], as given without a value.
fn given_without_value(cli: &mut Cli, id: &str) {
    use crate::cli::Command;
    let run = match &mut cli.command {
        Command::Run(a) | Command::Verify(a) => a,
        Command::Sweep(s) => &mut s.run,
        Command::Compare(c) => &mut c.run,
        _ => return,
    };
    if id == "sqpoll" {
        run.sqpoll = Some(None);
    }
}

/// A config file as an input file (`base::input::read`): a page of options
/// (those in configs/ are 1 KiB); `/dev/zero` was read until memory ran out.
const INPUT: crate::base::input::Kind = crate::base::input::Kind {
    holds: "a TOML config file",
    max: 1 << 20,
    pipe: false,
};

/// A config file, read and checked: its options in the file's order and
/// its targets, each with where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    pub options: Vec<Entry>,
    /// `targets = [...]`, when the file has them.
    pub targets: Option<Vec<String>>,
    targets_at: String,
}

/// One option of a config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The key as written (`drop_caches`).
    pub key: String,
    /// The option's long name (`drop-caches`).
    pub flag: String,
    /// The file and the key's line, as messages name them.
    pub at: String,
    pub value: Value,
}

/// What a key holds (`false` holds nothing: the key is left out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// `true`: a flag set.
    On,
    /// Text or numbers as written, one or a list.
    Text(Vec<String>),
}

/// Reads a config file: its keys checked against `options`, the long
/// option names of the subcommand.
pub fn load(path: &Path, options: &[String]) -> Result<ConfigFile, ConfigFileError> {
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
    let mut positional = None;
    let mut out = Vec::new();
    for (key, value) in &table {
        let flag = key.replace('_', "-");
        if key == "targets" {
            let toml::Value::Array(items) = value else {
                return Err(ConfigFileError::TargetsNotPaths { at: at(key) });
            };
            let mut targets = Vec::new();
            for i in items {
                let t =
                    scalar(i).ok_or_else(|| ConfigFileError::TargetsNotPaths { at: at(key) })?;
                // A target that reads as an option (--allow-destructive) is
                // refused: consent and options belong on the command line,
                // and a path that starts with '-' is written ./-x.
                if t.starts_with('-') {
                    return Err(ConfigFileError::TargetLikeOption {
                        at: at(key),
                        target: t,
                    });
                }
                targets.push(t);
            }
            positional = Some((targets, at(key)));
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
        let value = match value {
            toml::Value::Boolean(true) => Value::On,
            toml::Value::Boolean(false) => continue,
            toml::Value::Array(items) => Value::Text(
                items
                    .iter()
                    .map(|i| {
                        scalar(i).ok_or_else(|| ConfigFileError::ListItemNotScalar {
                            at: at(key),
                            key: key.clone(),
                        })
                    })
                    .collect::<Result<_, _>>()?,
            ),
            v => Value::Text(vec![scalar(v).ok_or_else(|| {
                ConfigFileError::NotScalar {
                    at: at(key),
                    key: key.clone(),
                }
            })?]),
        };
        // An empty list gives nothing, as no option typed.
        if value == Value::Text(Vec::new()) {
            continue;
        }
        out.push(Entry {
            key: key.clone(),
            flag,
            at: at(key),
            value,
        });
    }
    let (targets, targets_at) = match positional {
        Some((t, at)) => (Some(t), at),
        None => (None, String::new()),
    };
    Ok(ConfigFile {
        options: out,
        targets,
        targets_at,
    })
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
        std::fs::write(&f, "# a comment\nrw = \"read\"\nbs = \"1m\"\nbuffered = true\nduration = false\nparam = [\"bs=64k,1m\"]\ntargets = [\"/dev/loop0\"]\n").unwrap();
        let c = load(&f, &opts()).unwrap();
        let entry = |flag: &str| c.options.iter().find(|e| e.flag == flag).map(|e| &e.value);
        assert_eq!(entry("rw"), Some(&Value::Text(vec!["read".into()])));
        assert_eq!(entry("buffered"), Some(&Value::On));
        assert_eq!(entry("duration"), None, "false gives nothing");
        assert_eq!(entry("param"), Some(&Value::Text(vec!["bs=64k,1m".into()])));
        assert_eq!(c.targets, Some(vec!["/dev/loop0".to_string()]));
        let rw = c.options.iter().find(|e| e.flag == "rw").unwrap();
        assert!(rw.at.ends_with("c.toml line 2"), "{rw:?}");
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

    /// Every option that takes a value yet may be given without one is
    /// one whose typed field [`given_without_value`] sets: `x = true` in a
    /// file is then what `--x` typed is.
    #[test]
    fn every_option_given_without_a_value_is_set_typed() {
        let root = crate::cli::help::command();
        let mut seen = 0;
        for sub in ["run", "verify", "sweep", "compare"] {
            let cmd = root.find_subcommand(sub).unwrap();
            for a in cmd.get_arguments() {
                let bare = a.get_action().takes_values()
                    && a.get_num_args().is_some_and(|n| n.min_values() == 0);
                assert_eq!(bare, bare_allowed(a), "{sub} --{}", a.get_id());
                seen += usize::from(bare);
            }
        }
        assert_eq!(seen, 4, "sqpoll in each");
        let mut cli =
            crate::cli::help::parse_from(["stripebench", "run"].map(OsString::from)).unwrap();
        given_without_value(&mut cli, "sqpoll");
        let crate::cli::Command::Run(a) = cli.command else {
            panic!("not a run")
        };
        assert_eq!(a.sqpoll, Some(None));
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

    /// `stripebench WORDS...` with `--config FILE` holding `toml`, typed.
    fn parsed(toml: &str, words: &[&str]) -> Result<crate::cli::Cli, String> {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.toml");
        std::fs::write(&f, toml).unwrap();
        let mut argv: Vec<OsString> = vec!["stripebench".into(), words[0].into()];
        argv.extend(["--config".into(), f.into_os_string()]);
        argv.extend(words[1..].iter().map(OsString::from));
        match parse(&argv) {
            Ok(Some(Ok(cli))) => Ok(cli),
            Ok(Some(Err(e))) => Err(crate::cli::help::one_line(&e)),
            Ok(None) => Err("no --config".into()),
            Err(e) => Err(e.to_string()),
        }
    }

    fn run_of(cli: crate::cli::Cli) -> crate::cli::RunArgs {
        match cli.command {
            crate::cli::Command::Run(a) => *a,
            crate::cli::Command::Sweep(s) => s.run,
            _ => panic!("neither run nor sweep"),
        }
    }

    #[test]
    fn the_command_line_wins_option_by_option() {
        use std::path::PathBuf;
        let file = "buffered = true\nduration = \"5s\"\njobs = 4\nbs = \"1m\"\ncached = true\ntargets = [\"/dev/loop0\"]\n";
        let run = |words: &[&str]| run_of(parsed(file, words).unwrap_or_else(|e| panic!("{e}")));
        let secs = |s| Some(std::time::Duration::from_secs(s));
        // Nothing given: the file stands.
        let a = run(&["run"]);
        assert!(a.buffered && a.cached && a.jobs == 4 && a.duration == secs(5));
        assert_eq!(a.targets, [PathBuf::from("/dev/loop0")]);
        // Long, long=value, short, short-joined; conflicts in both directions.
        let a = run(&["run", "--direct", "-t", "1s", "-j2", "--bs=4k"]);
        assert!(a.direct && !a.buffered && a.cached, "{a:?}");
        assert_eq!((a.jobs, a.duration), (2, secs(1)));
        assert_eq!(
            a.bs,
            Some(crate::measure::config::BlockSizeArg::Bytes(4096))
        );
        let a = run(&["run", "--drop-caches"]);
        assert!(a.drop_caches && !a.cached && a.buffered, "{a:?}");
        // Targets replace targets; an option's value is not a target.
        let one = |t: &str| vec![PathBuf::from(t)];
        assert_eq!(
            run(&["run", "--bs", "4k", "/dev/loop1"]).targets,
            one("/dev/loop1")
        );
        assert_eq!(run(&["run", "--bs", "4k"]).targets, one("/dev/loop0"));
        assert_eq!(run(&["run", "--", "/dev/loop1"]).targets, one("/dev/loop1"));
        // param: by the name it sweeps.
        let sweep = "param = [\"bs=4k,1m\", \"jobs=1,2\"]\nduration = \"1s\"\n";
        let names = |words: &[&str]| -> Vec<String> {
            match parsed(sweep, words).unwrap().command {
                crate::cli::Command::Sweep(s) => s
                    .params
                    .iter()
                    .map(|p| format!("{}={}", p.name, p.values.join(",")))
                    .collect(),
                _ => panic!("not a sweep"),
            }
        };
        assert_eq!(
            names(&["sweep", "--param", "jobs=8"]),
            ["bs=4k,1m", "jobs=8"]
        );
        assert_eq!(
            names(&["sweep", "--param=iodepth=1,4"]),
            ["bs=4k,1m", "jobs=1,2", "iodepth=1,4"]
        );
    }

    /// A list for an option that takes one value keeps the last, as the
    /// option typed twice does; a flag takes true or false.
    #[test]
    fn a_list_for_one_value_keeps_the_last_and_a_flag_takes_no_text() {
        let a = run_of(parsed("bs = [\"4k\", \"8k\"]\n", &["run"]).unwrap());
        assert_eq!(
            a.bs,
            Some(crate::measure::config::BlockSizeArg::Bytes(8192))
        );
        let e = parsed("\nbuffered = \"yes\"\n", &["run"]).unwrap_err();
        assert!(
            e.contains("c.toml line 2: unexpected value 'yes' for '--buffered'")
                && e.ends_with("write buffered = true"),
            "{e}"
        );
        let e = parsed("bs = true\n", &["run"]).unwrap_err();
        assert!(
            e.contains("line 1: a value is required for '--bs <SIZE|lbs>'"),
            "{e}"
        );
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
