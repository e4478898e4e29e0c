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
    /// It runs at once with the invocation before it (a fio job of the
    /// same group that is a different workload).
    pub with_previous: bool,
    /// It reads as many bytes as the invocation before it wrote (a
    /// verified mix's read-back).
    pub reads_what_was_written: bool,
    /// A fio job file's exitall=1: what its end stops.
    pub exitall: Option<crate::measure::together::Exitall>,
}

/// The invocations the process's arguments stand for: a fio job file's
/// stonewall groups, else the one command typed, with the values of its
/// `--config FILE.toml` under those typed. `Err` is a usage error's text (the job or config file was
/// refused).
pub fn invocations(args: Vec<OsString>) -> Result<Vec<Invocation>, String> {
    use crate::cli::fio_job::Expanded;
    match crate::cli::fio_job::expand(args.clone()) {
        Ok(Some(Expanded::Runs(runs))) => fio_runs(args, runs),
        Ok(Some(Expanded::Sweep(plan))) => Ok(vec![fio_sweep(args, plan)?]),
        Ok(None) => match crate::cli::configfile::parse(&args) {
            Ok(Some(cli)) => {
                let inv = invocation(args.clone(), cli, String::new());
                fio_command_line(args, inv)
            }
            Ok(None) => fio_command_line(args.clone(), parse(args, String::new())),
            Err(e) => Err(e.to_string()),
        },
        Err(e) => Err(e.to_string()),
    }
}

/// `stripebench fio WORDS...`: the runs fio's command line stands for,
/// as `run --fio-job` makes them; any other invocation as it is.
fn fio_command_line(args: Vec<OsString>, inv: Invocation) -> Result<Vec<Invocation>, String> {
    match &inv.cli {
        Ok(Cli {
            command: crate::cli::Command::Fio(fio),
        }) => fio_runs(
            args,
            crate::cli::fio_cmdline::expand(&fio.words).map_err(|e| e.0)?,
        ),
        _ => Ok(vec![inv]),
    }
}

/// `sweep --fio-job`: the command line typed parsed once, the job's
/// common options and its parameter set on it, typed.
fn fio_sweep(
    args: Vec<OsString>,
    plan: crate::cli::fio_job::SweepPlan,
) -> Result<Invocation, String> {
    let prog = args
        .first()
        .cloned()
        .unwrap_or_else(|| "stripebench".into());
    let mut argv = vec![prog, "sweep".into()];
    argv.extend(plan.typed.iter().cloned());
    let words: Vec<String> = argv
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let invocation = |cli, said| Invocation {
        cli,
        sub: Some("sweep".into()),
        words: words.clone(),
        said,
        with_previous: false,
        reads_what_was_written: false,
        exitall: None,
    };
    Ok(match crate::cli::help::parse_given(argv) {
        Ok((
            crate::cli::Cli {
                command: crate::cli::Command::Sweep(typed),
            },
            given,
        )) => {
            // A value of the job that sweep refuses: a usage error.
            let (args, said) = plan.configure(&typed, &given).map_err(|e| e.0)?;
            invocation(
                Ok(crate::cli::Cli {
                    command: crate::cli::Command::Sweep(Box::new(args)),
                }),
                said,
            )
        }
        Ok(_) => unreachable!("the command line is sweep's"),
        Err(e) => invocation(Err(e), String::new()),
    })
}

/// A fio job file's runs: the command line typed is parsed once, and
/// each stonewall group's options are set, typed, on top of it. `Err`: a
/// value of the job that `run` refuses (a usage error, before any run).
fn fio_runs(
    args: Vec<OsString>,
    runs: crate::cli::fio_job::Runs,
) -> Result<Vec<Invocation>, String> {
    let prog = args
        .first()
        .cloned()
        .unwrap_or_else(|| "stripebench".into());
    let mut argv = vec![prog, "run".into()];
    argv.extend(runs.typed);
    let words: Vec<String> = argv
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let n = runs.groups.len();
    let (typed, given) = match crate::cli::help::parse_given(argv) {
        Ok((
            crate::cli::Cli {
                command: crate::cli::Command::Run(typed),
            },
            given,
        )) => (typed, given),
        Ok(_) => unreachable!("the command line is run's"),
        // Several runs: refused before any began, in clap's first line.
        Err(e) if n > 1 => {
            return Err(format!(
                "run 1 of {n} (checked before any of them began; none ran): {}",
                first_line(&e)
            ))
        }
        // The command line typed is refused as typed (help printed, a
        // mistake in one line).
        Err(e) => {
            return Ok(vec![Invocation {
                cli: Err(e),
                sub: Some("run".into()),
                words,
                said: String::new(),
                with_previous: false,
                reads_what_was_written: false,
                exitall: None,
            }])
        }
    };
    let mut out = Vec::with_capacity(n);
    for (i, g) in runs.groups.iter().enumerate() {
        let (args, said) = g.configure(&typed, &given).map_err(|e| {
            if n > 1 {
                format!(
                    "run {} of {n} (checked before any of them began; none ran): {e}",
                    i + 1
                )
            } else {
                e.to_string()
            }
        })?;
        out.push(Invocation {
            cli: Ok(crate::cli::Cli {
                command: crate::cli::Command::Run(Box::new(args)),
            }),
            sub: Some("run".into()),
            words: words.clone(),
            said,
            with_previous: g.with_previous(),
            reads_what_was_written: g.reads_what_was_written(),
            exitall: g.exitall(),
        });
    }
    Ok(out)
}

/// Parses one command line.
pub fn parse(argv: Vec<OsString>, said: String) -> Invocation {
    let cli = crate::cli::help::parse_from(argv.clone());
    invocation(argv, cli, said)
}

/// The invocation `argv` stands for, clap's verdict on it `cli`.
fn invocation(argv: Vec<OsString>, cli: Result<Cli, clap::Error>, said: String) -> Invocation {
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
        cli,
        sub,
        words,
        said,
        with_previous: false,
        reads_what_was_written: false,
        exitall: None,
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
            let help = sub.map_or("stripebench --help".to_string(), |s| {
                format!("stripebench {s} --help")
            });
            Refusal::Line(format!("{} (see {help})", crate::cli::help::one_line(e)))
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

    // A 10000-entry --bssplit was echoed whole (262 KB), twice.
    #[test]
    fn a_long_invalid_value_is_cut_in_the_refusal() {
        let split = vec!["4k/0"; 10000].join(",");
        let Refusal::Line(l) = refused(&["stripebench", "run", "--bssplit", &split, "x"]) else {
            panic!("not a line")
        };
        assert!(l.len() < 1000, "{} bytes", l.len());
        assert!(l.contains("... (49999 characters)"), "{l}");
        assert!(l.contains("give READS[,WRITES]"), "{l}");
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

    /// `stripebench run --fio-job FILE WORDS...` for a job file holding
    /// `job`, as the front door reads it: each group's run, typed, and
    /// the lines said before it.
    fn fio_runs(job: &str, words: &[&str]) -> Vec<(crate::cli::RunArgs, String)> {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("j.fio");
        std::fs::write(&f, job).unwrap();
        let mut argv: Vec<OsString> = vec!["stripebench".into(), "run".into(), "--fio-job".into()];
        argv.push(f.clone().into());
        argv.extend(words.iter().map(OsString::from));
        invocations(argv)
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .map(|inv| match inv.cli {
                Ok(Cli {
                    command: crate::cli::Command::Run(args),
                }) => (*args, inv.said),
                Ok(_) => panic!("not a run"),
                Err(e) => panic!("{e}"),
            })
            .collect()
    }

    #[test]
    fn a_job_s_globals_and_two_stonewall_groups_are_two_typed_runs() {
        use crate::measure::config::RwMode;
        let runs = fio_runs(
            "[global]\nbs=64k\ndirect=1\ntime_based\nruntime=2\nfilename=/dev/null\n[w]\nrw=randwrite\niodepth=8\nioengine=io_uring\n[r]\nstonewall\nrw=read\nbs=1m\n",
            &["--no-progress", "--json", "r.json"],
        );
        assert_eq!(runs.len(), 2);
        let (w, r) = (&runs[0].0, &runs[1].0);
        assert_eq!(w.rw, RwMode::Randwrite);
        assert_eq!(r.rw, RwMode::Read);
        assert_eq!(
            w.bs,
            Some(crate::measure::config::BlockSizeArg::Bytes(64 << 10))
        );
        assert_eq!(
            r.bs,
            Some(crate::measure::config::BlockSizeArg::Bytes(1 << 20))
        );
        assert!(w.direct && r.direct && !w.buffered);
        assert_eq!(w.duration, Some(std::time::Duration::from_secs(2)));
        assert_eq!(w.ramp, Some(std::time::Duration::ZERO));
        assert_eq!(w.engine, crate::cli::EngineArg::Uring);
        assert_eq!((w.iodepth, r.iodepth), (8, 1));
        assert_eq!(r.engine, crate::cli::EngineArg::Sync);
        assert!(w.no_pin && w.no_progress);
        assert_eq!(w.targets, [std::path::PathBuf::from("/dev/null")]);
        // The command line's --json, which the job does not give, holds,
        // numbered for each run.
        assert_eq!(
            w.formats.get("json"),
            Some(std::path::Path::new("r.1.json"))
        );
        assert_eq!(
            r.formats.get("json"),
            Some(std::path::Path::new("r.2.json"))
        );
        let said = runs[1].1.lines().last().unwrap();
        assert_eq!(
            said,
            "stripebench run --rw=read --bs=1m --direct --duration=2s --ramp=0s --engine=sync --no-pin /dev/null --no-progress --json r.2.json"
        );
    }

    /// Today's rule, kept: the command line wins option by option, an
    /// option typed also dropping the job's options clap holds apart from
    /// it (`--buffered` drops `direct=1`, `--cpus` drops the job's
    /// `--no-pin`), and targets typed replace `filename=`.
    #[test]
    fn the_command_line_wins_over_the_job_option_by_option() {
        let runs = fio_runs(
            "[j]\nrw=randread\nbs=64k\ndirect=1\ntime_based\nruntime=30\nfilename=/dev/job\n",
            &[
                "--bs",
                "4k",
                "--buffered",
                "-t",
                "1s",
                "--cpus",
                "0",
                "/dev/typed",
            ],
        );
        let (a, said) = &runs[0];
        assert_eq!(
            a.bs,
            Some(crate::measure::config::BlockSizeArg::Bytes(4096))
        );
        assert!(a.buffered && !a.direct, "{a:?}");
        assert_eq!(a.duration, Some(std::time::Duration::from_secs(1)));
        assert!(!a.no_pin && a.cpus.is_some(), "{a:?}");
        assert_eq!(a.targets, [std::path::PathBuf::from("/dev/typed")]);
        assert_eq!(a.rw, crate::measure::config::RwMode::Randread);
        assert_eq!(
            said.lines().last().unwrap(),
            "stripebench run --rw=randread --ramp=0s --engine=sync --bs 4k --buffered -t 1s --cpus 0 /dev/typed"
        );
    }

    #[test]
    fn a_sweep_job_is_one_typed_sweep_whose_param_a_typed_one_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("j.fio");
        std::fs::write(
            &f,
            "[global]\nbs=4k\ntime_based\nruntime=1\nfilename=/dev/null\n[a]\nrw=read\n[b]\nstonewall\nrw=write\n",
        )
        .unwrap();
        let sweep = |words: &[&str]| {
            let mut argv: Vec<OsString> =
                vec!["stripebench".into(), "sweep".into(), "--fio-job".into()];
            argv.push(f.clone().into());
            argv.extend(words.iter().map(OsString::from));
            let mut inv = invocations(argv).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(inv.len(), 1);
            let inv = inv.pop().unwrap();
            match inv.cli {
                Ok(Cli {
                    command: crate::cli::Command::Sweep(args),
                }) => (*args, inv.said),
                _ => panic!("not a sweep"),
            }
        };
        let (a, said) = sweep(&[]);
        let params: Vec<(&str, Vec<&str>)> = a
            .params
            .iter()
            .map(|p| {
                (
                    p.name.as_str(),
                    p.values.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(params, [("rw", vec!["read", "write"])]);
        assert_eq!(
            a.run.bs,
            Some(crate::measure::config::BlockSizeArg::Bytes(4096))
        );
        assert_eq!(a.run.targets, [std::path::PathBuf::from("/dev/null")]);
        assert!(
            said.ends_with("--param=rw=read,write /dev/null\n"),
            "{said}"
        );
        let (a, said) = sweep(&["--param", "rw=randread"]);
        assert_eq!(a.params.len(), 1);
        assert_eq!(a.params[0].values, ["randread"]);
        assert!(!said.contains("--param=rw="), "{said}");
    }
}

/// `--config`: the file's values under the command line's, typed.
#[cfg(test)]
mod config_tests {
    use super::*;

    /// The command `stripebench WORDS...` stands for with `--config FILE`
    /// holding `toml` (FILE is put after the subcommand).
    fn configured(toml: &str, words: &[&str]) -> Result<Cli, String> {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.toml");
        std::fs::write(&f, toml).unwrap();
        let mut argv: Vec<OsString> = vec!["stripebench".into(), words[0].into()];
        argv.extend(["--config".into(), f.clone().into_os_string()]);
        argv.extend(words[1..].iter().map(OsString::from));
        let mut inv = invocations(argv)?;
        assert_eq!(inv.len(), 1);
        inv.pop().unwrap().cli.map_err(|e| first_line(&e))
    }

    fn sweep(toml: &str, words: &[&str]) -> crate::cli::SweepArgs {
        match configured(toml, words) {
            Ok(Cli {
                command: crate::cli::Command::Sweep(s),
            }) => *s,
            other => panic!("not a sweep: {:?}", other.err()),
        }
    }

    fn run(toml: &str, words: &[&str]) -> crate::cli::RunArgs {
        match configured(toml, words) {
            Ok(Cli {
                command: crate::cli::Command::Run(a),
            }) => *a,
            other => panic!("not a run: {:?}", other.err()),
        }
    }

    /// The rules of the module header, seen typed: `--direct` over the
    /// file's `buffered = true`, `--param` merged by name (the file's
    /// other names first), targets typed replacing the file's, the file
    /// standing where the command line says nothing.
    #[test]
    fn a_config_and_the_command_line_make_one_typed_sweep() {
        use crate::measure::config::{BlockSizeArg, RwMode};
        use std::path::PathBuf;
        let file = "rw = \"randread\"\nbs = \"64k\"\nbuffered = true\nduration = \"5s\"\nparam = [\"bs=4k,1m\", \"jobs=1,2\"]\ntargets = [\"/dev/file-target\"]\n";
        let s = sweep(file, &["sweep"]);
        assert_eq!(s.run.rw, RwMode::Randread);
        assert_eq!(s.run.bs, Some(BlockSizeArg::Bytes(64 << 10)));
        assert!(s.run.buffered && !s.run.direct);
        assert_eq!(s.run.duration, Some(std::time::Duration::from_secs(5)));
        assert_eq!(s.run.targets, [PathBuf::from("/dev/file-target")]);
        let names = |s: &crate::cli::SweepArgs| -> Vec<String> {
            s.params
                .iter()
                .map(|p| format!("{}={}", p.name, p.values.join(",")))
                .collect()
        };
        assert_eq!(names(&s), ["bs=4k,1m", "jobs=1,2"]);
        let s = sweep(
            file,
            &[
                "sweep",
                "--direct",
                "--param",
                "jobs=8",
                "-t",
                "1s",
                "/dev/typed",
            ],
        );
        assert!(s.run.direct && !s.run.buffered, "--direct wins");
        assert_eq!(names(&s), ["bs=4k,1m", "jobs=8"]);
        assert_eq!(s.run.duration, Some(std::time::Duration::from_secs(1)));
        assert_eq!(s.run.targets, [PathBuf::from("/dev/typed")]);
        assert_eq!(s.run.rw, RwMode::Randread, "the file stands");
        // A name the file does not sweep is added after the file's.
        let s = sweep(file, &["sweep", "--param=iodepth=1,4"]);
        assert_eq!(names(&s), ["bs=4k,1m", "jobs=1,2", "iodepth=1,4"]);
        // --drop-caches drops the file's `cached`, the other way round.
        let r = run("cached = true\njobs = 4\n", &["run", "--drop-caches"]);
        assert!(r.drop_caches && !r.cached && r.jobs == 4);
    }

    /// Regression: the file's options were spliced in front of the command
    /// line, and what the command line gave was read by a tokenizer of our
    /// own, which took `--sqpoll` (its value only ever `--sqpoll=CPU`) to
    /// take the next word: the target typed after it was not seen as one,
    /// and the run drove the file's target and the typed one together.
    #[test]
    fn a_target_typed_after_sqpoll_replaces_the_configs_targets() {
        let r = run(
            "targets = [\"/dev/file-target\"]\n",
            &["run", "--sqpoll", "/dev/typed"],
        );
        assert_eq!(r.targets, [std::path::PathBuf::from("/dev/typed")]);
        assert_eq!(r.sqpoll, Some(None));
        // From the file, `sqpoll = true` is `--sqpoll`, `sqpoll = 2` is
        // `--sqpoll=2`.
        assert_eq!(run("sqpoll = true\n", &["run"]).sqpoll, Some(None));
        assert_eq!(run("sqpoll = 2\n", &["run"]).sqpoll, Some(Some(2)));
    }

    /// Regression: `duration = true` became `--duration`, and clap took
    /// the word spliced after it (the file's target) for its value:
    /// "invalid value '/dev/file-target' for '--duration <TIME>'", a
    /// message about a word the user never wrote there.
    #[test]
    fn an_option_set_true_in_a_config_is_refused_at_its_line_not_fed_the_next_word() {
        let e = configured(
            "duration = true\ntargets = [\"/dev/file-target\"]\n",
            &["run"],
        )
        .err()
        .unwrap();
        assert!(
            e.starts_with("config ") && e.contains("c.toml line 1: "),
            "{e}"
        );
        assert!(e.contains("a value is required for '--duration"), "{e}");
        assert!(!e.contains("file-target"), "{e}");
    }

    /// A bad value in the file is named by the file's line, in clap's words.
    #[test]
    fn a_bad_value_in_a_config_names_the_files_line() {
        let e = configured("bs = \"1m\"\nrw = \"sideways\"\n", &["run"])
            .err()
            .unwrap();
        assert!(
            e.contains(
                "c.toml line 2: invalid value 'sideways' for '--rw <RW>': give one of read, write"
            ),
            "{e}"
        );
        let e = configured("param = [\"bs=4k\", \"speed=1\"]\n", &["sweep"])
            .err()
            .unwrap();
        assert!(
            e.contains("c.toml line 1: invalid value 'speed=1' for '--param"),
            "{e}"
        );
        // Two options the file holds that clap holds apart (the keys are
        // read in their order by name: buffered, then direct).
        let e = configured("direct = true\nbuffered = true\n", &["run"])
            .err()
            .unwrap();
        assert!(
            e.ends_with("c.toml line 1: the argument '--direct' cannot be used with '--buffered' (line 2): keep one of them"),
            "{e}"
        );
    }

    /// A value that starts with '-' is a value, from the file as typed.
    #[test]
    fn a_configs_value_that_starts_with_a_dash_is_a_value() {
        let r = run("members = \"-vol\"\n", &["run"]);
        assert_eq!(r.members, Some(std::path::PathBuf::from("-vol")));
    }
}
