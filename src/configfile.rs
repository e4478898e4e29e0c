//! `--config FILE.toml`: options from a file, overridden by the command line.
//!
//! Keys are the long option names of the subcommand (`rw = "read"`,
//! `bs = "1m"`, `duration = "5s"`, `buffered = true`, `param = ["bs=64k,1m"]`)
//! plus `targets = [...]`. The file's options are put in front of the
//! command line's, and a later occurrence of an option wins, so the command
//! line overrides the file. An unknown key is refused with its file and line.

use std::ffi::OsString;
use std::path::Path;

use crate::error::UsageError;

/// Finds `--config FILE` (or `--config=FILE`) after the subcommand and
/// returns the argument list with the file's options spliced in after the
/// subcommand name. `known` lists the subcommand's long option names.
pub fn expand(
    args: Vec<OsString>,
    known: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Result<Vec<OsString>, UsageError> {
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
        None => strs
            .get(pos + 1)
            .cloned()
            .ok_or_else(|| UsageError("--config needs a FILE.toml".into()))?,
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
        return Err(UsageError(format!(
            "--config does not apply to '{}'",
            strs[sub_at]
        )));
    };
    let from_file = load(Path::new(&file), &options)?;
    let mut out: Vec<OsString> = args[..=sub_at].to_vec();
    out.extend(from_file.into_iter().map(OsString::from));
    out.extend(args[sub_at + 1..].iter().cloned());
    Ok(out)
}

/// Reads a config file into command-line arguments.
pub fn load(path: &Path, options: &[String]) -> Result<Vec<String>, UsageError> {
    let shown = crate::error::show_path(path);
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("cannot read config {shown}: {e}")))?;
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e.span().map(|s| text[..s.start].lines().count().max(1));
        UsageError(format!(
            "config {shown}{}: {}",
            line.map(|l| format!(" line {l}")).unwrap_or_default(),
            e.message()
        ))
    })?;
    let line_of = |key: &str| {
        text.lines()
            .position(|l| {
                l.trim_start().starts_with(key)
                    && l.trim_start()[key.len()..].trim_start().starts_with('=')
            })
            .map_or(String::new(), |i| format!(" line {}", i + 1))
    };
    let mut positional = Vec::new();
    let mut out = Vec::new();
    for (key, value) in &table {
        let flag = key.replace('_', "-");
        if key == "targets" {
            let toml::Value::Array(items) = value else {
                return Err(UsageError(format!(
                    "config {shown}{}: targets must be a list of paths",
                    line_of(key)
                )));
            };
            for i in items {
                positional.push(scalar(i).ok_or_else(|| {
                    UsageError(format!(
                        "config {shown}{}: targets must be a list of paths",
                        line_of(key)
                    ))
                })?);
            }
            continue;
        }
        if CONSENT.contains(&flag.as_str()) {
            return Err(UsageError(format!(
                "config {shown}{}: '{key}' cannot come from a file: consent to destroy data must be typed on the command line (--{flag})",
                line_of(key)
            )));
        }
        if !options.contains(&flag) || flag == "config" {
            return Err(UsageError(format!(
                "config {shown}{}: unknown key '{key}': use the long option names of the command (rw, bs, duration, ...) or targets",
                line_of(key)
            )));
        }
        match value {
            toml::Value::Boolean(true) => out.push(format!("--{flag}")),
            toml::Value::Boolean(false) => {}
            toml::Value::Array(items) => {
                for i in items {
                    let v = scalar(i).ok_or_else(|| {
                        UsageError(format!(
                            "config {shown}{}: '{key}' holds a value that is not text or a number",
                            line_of(key)
                        ))
                    })?;
                    out.push(format!("--{flag}={v}"));
                }
            }
            v => {
                let v = scalar(v).ok_or_else(|| {
                    UsageError(format!(
                        "config {shown}{}: '{key}' must be text, a number or true/false",
                        line_of(key)
                    ))
                })?;
                out.push(format!("--{flag}={v}"));
            }
        }
    }
    out.extend(positional);
    Ok(out)
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
        let e = load(&f, &opts()).unwrap_err().0;
        assert!(
            e.contains("line 3") && e.contains("unknown key 'speed'") && e.contains("c.toml"),
            "{e}"
        );
        std::fs::write(&f, "rw = \n").unwrap();
        assert!(load(&f, &opts()).unwrap_err().0.contains("line 1"));
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
            let e = load(&f, &with_consent).unwrap_err().0;
            assert!(
                e.contains("line 2") && e.contains("typed on the command line"),
                "{key}: {e}"
            );
        }
    }

    #[test]
    fn a_key_whose_line_is_not_found_names_no_line_0() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.toml");
        // A quoted key: its line is not found by name.
        std::fs::write(&f, "\"speed\" = 3\n").unwrap();
        let e = load(&f, &opts()).unwrap_err().0;
        assert!(
            !e.contains("line 0") && e.contains("unknown key 'speed'"),
            "{e}"
        );
    }

    #[test]
    fn the_command_line_comes_after_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.toml");
        std::fs::write(&f, "bs = \"1m\"\n").unwrap();
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
        let file_at = out.iter().position(|a| a == "--bs=1m").unwrap();
        let cli_at = out.iter().position(|a| a == "4k").unwrap();
        assert!(file_at < cli_at);
    }
}
