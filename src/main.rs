//! The `stripebench` binary: parse, run, map the outcome to an exit code.

use std::process::ExitCode;

use clap::error::ErrorKind;

use stripebench::base::error::{EXIT_FAILURE, EXIT_USAGE};
use stripebench::cli::Cli;
use stripebench::commands::exit_code_for;

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        // Not eprintln!: it panics when stderr is gone, and a panic in the
        // hook aborts.
        say(format_args!(
            "stripebench: internal error: {info}; please report it"
        ));
    }));
    // As typed, before --config is spliced in: what the documents record.
    stripebench::base::invocation::record_argv(std::env::args_os().collect());
    // A fio job file stands for one command per stonewall group, each
    // printed before it runs; else the one command typed (--config spliced in).
    let runs = match stripebench::cli::fio_job::expand(std::env::args_os().collect()) {
        Ok(Some(planned)) => planned,
        Ok(None) => match expand_config() {
            Ok(argv) => vec![stripebench::cli::fio_job::Planned {
                argv,
                said: String::new(),
            }],
            Err(e) => return usage_error(&e.to_string()),
        },
        Err(e) => return usage_error(&e.to_string()),
    };
    let n = runs.len();
    // Several runs (stonewall groups): every check each makes before its
    // I/O is made for all of them before the first begins.
    if n > 1 {
        for (i, run) in runs.iter().enumerate() {
            if let Err(code) = precheck_one(run.argv.clone(), i + 1, n) {
                return ExitCode::from(code);
            }
        }
    }
    for (i, run) in runs.into_iter().enumerate() {
        // A signal that came after run i's window closed (while its report
        // was written): the runs after it do not start.
        if i > 0 && stripebench::base::signals::interrupted() {
            say(format_args!(
                "stripebench: interrupted after run {i} of {n}: the {} after it did not run",
                n - i
            ));
            return ExitCode::from(stripebench::base::signals::exit_status());
        }
        if !run.said.is_empty() {
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                stripebench::base::error::show_lines(&run.said).as_bytes(),
            );
        }
        let code = run_one(run.argv);
        if code != 0 {
            if i + 1 < n {
                say(format_args!(
                    "stripebench: run {} of {n} exited {code}: the {} after it did not run",
                    i + 1,
                    n - i - 1
                ));
            }
            return ExitCode::from(code);
        }
    }
    ExitCode::SUCCESS
}

fn usage_error(msg: &str) -> ExitCode {
    say(format_args!(
        "stripebench: error: {}",
        stripebench::base::error::show_lines(msg)
    ));
    ExitCode::from(EXIT_USAGE)
}

/// Parses one command line and runs it; its exit code.
fn run_one(argv: Vec<std::ffi::OsString>) -> u8 {
    // The subcommand as typed (the first word that is not an option), for
    // the "see ... --help" hint.
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
    let words: Vec<String> = argv
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let cli = match stripebench::cli::help::parse_from(argv) {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e, sub.as_deref(), &words),
    };
    match std::panic::catch_unwind(|| stripebench::commands::main(cli)) {
        // A report that could not reach stdout is a failure, even when the run was fine.
        Ok(Ok(0)) if stripebench::output::stdout::failed() => {
            // A closed pipe (`| head`) exits as SIGPIPE would, 141; a full disk 1.
            if stripebench::output::stdout::closed() {
                128 + libc::SIGPIPE as u8
            } else {
                EXIT_FAILURE
            }
        }
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            say(format_args!(
                "stripebench: error: {}",
                stripebench::base::error::show_lines(&format!("{e:#}"))
            ));
            exit_code_for(&e)
        }
        Err(_) => EXIT_FAILURE,
    }
}

/// Run `i` of `n`'s checks, before any of them runs: the exit code of
/// its refusal, said on one line.
fn precheck_one(argv: Vec<std::ffi::OsString>, i: usize, n: usize) -> Result<(), u8> {
    let before = format!("run {i} of {n} (checked before any of them began; none ran)");
    let cli = match stripebench::cli::help::parse_from(argv) {
        Ok(cli) => cli,
        Err(e) => {
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or("invalid arguments");
            say(format_args!(
                "stripebench: error: {before}: {}",
                stripebench::base::error::show_lines(
                    first.strip_prefix("error: ").unwrap_or(first)
                )
            ));
            return Err(EXIT_USAGE);
        }
    };
    match std::panic::catch_unwind(|| stripebench::commands::precheck(cli)) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => {
            say(format_args!(
                "stripebench: error: {before}: {}",
                stripebench::base::error::show_lines(&format!("{e:#}"))
            ));
            Err(exit_code_for(&e))
        }
        Err(_) => Err(EXIT_FAILURE),
    }
}

/// Splices `--config FILE.toml` options in front of the command line's.
fn expand_config() -> Result<Vec<std::ffi::OsString>, stripebench::cli::configfile::ConfigFileError>
{
    stripebench::cli::configfile::expand(
        std::env::args_os().collect(),
        &stripebench::cli::long_options,
    )
}

/// Help and version print in full; a mistake prints one line and exits 2:
/// fio's spelling of an option, when the line has one, gets the
/// stripebench spelling instead of clap's "unexpected argument".
fn clap_exit(e: &clap::Error, sub: Option<&str>, words: &[String]) -> u8 {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            0
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            EXIT_USAGE
        }
        ErrorKind::UnknownArgument | ErrorKind::InvalidValue | ErrorKind::TooManyValues
            if stripebench::cli::fio_words::hint(words).is_some() =>
        {
            let hint = stripebench::cli::fio_words::hint(words).unwrap_or_default();
            say(format_args!("stripebench: error: {hint}"));
            EXIT_USAGE
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
            say(format_args!(
                "stripebench: error: {} (see {help})",
                stripebench::base::error::show_lines(&first.to_string())
            ));
            EXIT_USAGE
        }
    }
}

/// One line on standard error, whatever becomes of it: a closed or full
/// stderr (`2>&1 | head`, a launcher that hung up) must not turn an error
/// into a panic, nor a panic into an abort (eprintln! panics there).
fn say(msg: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{msg}");
}
