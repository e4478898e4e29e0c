//! The front door's parsing: the process's arguments become the
//! invocations to run (one, or one per stonewall group of a fio job file),
//! each parsed by clap, and a clap refusal becomes the one line we print.
//! Pure functions of their input, so the rewriting of clap's messages is
//! tested here rather than only through the binary.

use std::ffi::OsString;

use clap::error::ErrorKind;

use crate::base::error::EXIT_USAGE;
use crate::cli::Cli;

/// One command line to run, parsed.
pub struct Invocation {
    /// clap's verdict on it.
    pub cli: Result<Cli, clap::Error>,
    /// The subcommand as typed (the first word that is not an option, when
    /// it names one), for the "see ... --help" hint.
    pub sub: Option<String>,
    /// The words after the program's name, for fio's spellings' hint.
    pub words: Vec<String>,
    /// What to print on stderr before it runs (a fio job's group line).
    pub said: String,
}

/// The invocations the process's arguments stand for: a fio job file's
/// stonewall groups, else the one command typed with `--config FILE.toml`
/// spliced in. `Err` is a usage error's text (the job or config file was
/// refused).
pub fn invocations(args: Vec<OsString>) -> Result<Vec<Invocation>, String> {
    let planned = match crate::cli::fio_job::expand(args.clone()) {
        Ok(Some(planned)) => planned,
        Ok(None) => match crate::cli::configfile::expand(args, &crate::cli::long_options) {
            Ok(argv) => vec![crate::cli::fio_job::Planned {
                argv,
                said: String::new(),
            }],
            Err(e) => return Err(e.to_string()),
        },
        Err(e) => return Err(e.to_string()),
    };
    Ok(planned.into_iter().map(|p| parse(p.argv, p.said)).collect())
}

/// Parses one command line.
pub fn parse(argv: Vec<OsString>, said: String) -> Invocation {
    let sub = argv
        .iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .find(|a| !a.starts_with('-'))
        .filter(|a| {
            use clap::CommandFactory;
            Cli::command().find_subcommand(a).is_some()
        })
        .map(str::to_string);
    let words = argv
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    Invocation {
        cli: crate::cli::help::parse_from(argv),
        sub,
        words,
        said,
    }
}

/// What to do with a clap refusal.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Help or version: clap prints it in full; exit with this code.
    Print(u8),
    /// One line for stderr (without the "stripebench: error: " prefix),
    /// and exit 2.
    Line(String),
}

/// Help and version print in full; a mistake is one line: fio's spelling
/// of an option, when the line has one, gets the stripebench spelling
/// instead of clap's "unexpected argument".
pub fn refusal(e: &clap::Error, sub: Option<&str>, words: &[String]) -> Refusal {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => Refusal::Print(0),
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => Refusal::Print(EXIT_USAGE),
        ErrorKind::UnknownArgument | ErrorKind::InvalidValue | ErrorKind::TooManyValues
            if crate::cli::fio_words::hint(words).is_some() =>
        {
            Refusal::Line(crate::cli::fio_words::hint(words).unwrap_or_default())
        }
        _ => {
            let rendered = e.render().to_string();
            // An invalid value's choices are on a line below: keep them.
            let choices = rendered
                .lines()
                .map(str::trim)
                .find_map(|l| l.strip_prefix("[possible values: "))
                .and_then(|l| l.strip_suffix(']'))
                .map(|v| format!(": give one of {v}"));
            let mut lines = rendered.lines();
            let first = lines.next().unwrap_or("invalid arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            // "the following required arguments were not provided:" names
            // them on the lines below: keep them on the one line.
            let first = match first.strip_suffix(':') {
                Some(head) => {
                    let names: Vec<&str> =
                        lines.map(str::trim).take_while(|l| !l.is_empty()).collect();
                    format!("{head}: {}", names.join(" "))
                }
                None => first.to_string() + choices.as_deref().unwrap_or(""),
            };
            let help = sub.map_or("stripebench --help".to_string(), |s| {
                format!("stripebench {s} --help")
            });
            Refusal::Line(format!("{first} (see {help})"))
        }
    }
}

/// A refusal of one of several runs, checked before any began: clap's
/// first line as it is.
pub fn first_line(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let first = rendered.lines().next().unwrap_or("invalid arguments");
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(line: &[&str]) -> Refusal {
        let argv = line.iter().map(OsString::from).collect();
        let inv = parse(argv, String::new());
        let e = inv.cli.expect_err("refused");
        refusal(&e, inv.sub.as_deref(), &inv.words)
    }

    #[test]
    fn an_unknown_option_names_the_subcommands_help() {
        let Refusal::Line(l) = refused(&["stripebench", "run", "--nonsense", "x"]) else {
            panic!("not a line")
        };
        assert!(l.starts_with("unexpected argument '--nonsense'"), "{l}");
        assert!(l.ends_with("(see stripebench run --help)"), "{l}");
        assert!(!l.contains('\n'), "{l}");
    }

    #[test]
    fn an_invalid_value_keeps_its_choices_on_the_line() {
        let Refusal::Line(l) = refused(&["stripebench", "run", "--rw", "sideways", "x"]) else {
            panic!("not a line")
        };
        assert!(l.contains("'sideways'"), "{l}");
        assert!(l.contains(": give one of "), "{l}");
        assert!(l.contains("randread"), "{l}");
    }

    #[test]
    fn a_fio_spelling_gets_ours() {
        let Refusal::Line(l) = refused(&["stripebench", "run", "--numjobs=2", "x"]) else {
            panic!("not a line")
        };
        assert!(l.contains("--numjobs=2` is fio's"), "{l}");
        assert!(l.contains("--jobs 2"), "{l}");
    }

    #[test]
    fn help_prints_and_exits_zero() {
        assert_eq!(
            refused(&["stripebench", "run", "--help"]),
            Refusal::Print(0)
        );
        assert_eq!(refused(&["stripebench", "--version"]), Refusal::Print(0));
    }

    #[test]
    fn an_unknown_subcommand_points_at_the_top_help() {
        let Refusal::Line(l) = refused(&["stripebench", "frobnicate"]) else {
            panic!("not a line")
        };
        assert!(l.ends_with("(see stripebench --help)"), "{l}");
        assert!(l.contains("frobnicate"), "{l}");
    }
}
