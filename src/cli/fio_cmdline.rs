//! `stripebench fio [FIO OPTIONS...] [JOBFILE...] [-- RUN OPTIONS...]`:
//! fio's command line read as fio reads it, made the job text it stands
//! for, and run as `run --fio-job` runs a file (same translation, same
//! refusals, the stripebench command printed first).
//!
//! fio's parser (init.c, getopt_long_only over its job options): options
//! before the first `--name` are fio's def_thread, the defaults every job
//! starts from; each `--name=NAME` starts a job (`--name=global` the
//! defaults again); `--opt=value`, or `--opt value` for an option that
//! takes a value (all but fio's bare flags, which take a value only after
//! `=`), one dash or two. A word that is no option is a job file, wherever
//! it stands (GNU getopt moves them last): read after the command line's
//! options, as `fio_job::expand_fio` reads them (the file overrides the
//! defaults; `--section=NAME` keeps only the sections named; each further
//! file starts from fio's defaults after the one before ends). fio's own
//! program options (`--output`, `--eta`, ...) are not a job's and are
//! refused by name; stripebench's own options go after `--`. The command
//! line's options are built as text and read by `fio_job`'s reader, so a
//! value fio would evaluate (`$VAR`) is evaluated or refused as in a file.

use std::ffi::OsString;

use super::fio_job::{expand_fio, FioJobError, JobFile, Runs};
use crate::base::error::show_text;

/// How messages name the job made from the command line.
const SHOWN: &str = "(fio's command line)";

/// fio's bare flags (FIO_OPT_STR_SET in options.c and the local engines'
/// options): `--flag` takes no next word, only `--flag=value`.
const FLAGS: &[&str] = &[
    "blocksize_unaligned",
    "bs_unaligned",
    "exitall",
    "exitall_on_error",
    "fixedbufs",
    "group_reporting",
    "hipri",
    "new_group",
    "norandommap",
    "refill_buffers",
    "registerfiles",
    "sqthread_poll",
    "stonewall",
    "thread",
    "time_based",
    "userspace_reap",
    "verify_only",
    "wait_for_previous",
    "zero_buffers",
];

/// fio's program options (init.c's l_opts): how fio runs or reports,
/// not a job's options.
const PROGRAM: &[&str] = &[
    "output",
    "latency-log",
    "bandwidth-log",
    "minimal",
    "output-format",
    "append-terse",
    "version",
    "help",
    "cmdhelp",
    "enghelp",
    "showcmd",
    "readonly",
    "eta",
    "eta-interval",
    "eta-newline",
    "debug",
    "parse-only",
    "inflate-log",
    "alloc-size",
    "profile",
    "warnings-fatal",
    "max-jobs",
    "terse-version",
    "server",
    "daemonize",
    "client",
    "remote-config",
    "status-interval",
    "trigger-file",
    "trigger-timeout",
    "trigger",
    "trigger-remote",
    "aux-path",
];

/// A section's options as given: `key`, and `value` unless a bare flag.
type Opts = Vec<(String, Option<String>)>;

/// fio's command line, parsed: its sections in order (`global` for the
/// options before the first `--name`), and the job files named.
#[derive(Debug, Default, PartialEq, Eq)]
struct Parsed {
    sections: Vec<(String, Opts)>,
    files: Vec<String>,
    /// `--section=NAME`s: the only sections of the job files to run.
    only: Vec<String>,
}

/// Reads fio's words as fio's getopt_long_only does.
fn parse(words: &[String]) -> Result<Parsed, FioJobError> {
    let mut p = Parsed {
        sections: vec![("global".into(), Vec::new())],
        files: Vec::new(),
        only: Vec::new(),
    };
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let Some(opt) = w.strip_prefix("--").or_else(|| w.strip_prefix('-')) else {
            p.files.push(w.clone());
            continue;
        };
        let (key, value) = match opt.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (opt, None),
        };
        if key.is_empty() {
            return Err(FioJobError(format!(
                "stripebench fio: `{}` is no option: write --OPTION=VALUE",
                show_text(w)
            )));
        }
        if PROGRAM.contains(&key) {
            return Err(FioJobError(format!(
                "stripebench fio: `{}` is fio's own program option, not a job's: stripebench writes its own reports; give stripebench's options after `--` (such as `-- --json r.json`)",
                show_text(w)
            )));
        }
        let value = match value {
            Some(v) => Some(v),
            None if FLAGS.contains(&key) => None,
            // fio's getopt takes the next word as the value.
            None => match it.next() {
                Some(v) => Some(v.clone()),
                None => {
                    return Err(FioJobError(format!(
                        "stripebench fio: `{}` needs a value: give --{key}=VALUE",
                        show_text(w)
                    )))
                }
            },
        };
        if let Some(v) = &value {
            if v.contains([';', '#', '\n', '\r']) {
                return Err(FioJobError(format!(
                    "stripebench fio: `{}={}`: a value with ';', '#' or a line end, which a job file would cut: give the value without it",
                    show_text(key),
                    show_text(v)
                )));
            }
        }
        if key == "section" {
            let name = value.unwrap_or_default();
            if name.is_empty() || name.contains(['[', ']']) || name == "global" {
                return Err(FioJobError(format!(
                    "stripebench fio: `--section={}` names no job section: give --section=NAME, a [NAME] of the job file ([global] is always read)",
                    show_text(&name)
                )));
            }
            p.only.push(name);
            continue;
        }
        if key == "name" {
            let name = value.unwrap_or_default();
            if name.is_empty() || name.contains(['[', ']']) {
                return Err(FioJobError(format!(
                    "stripebench fio: `--name={}` names no job: give --name=NAME",
                    show_text(&name)
                )));
            }
            // fio skips a job --section does not name (as the --sections
            // given so far say), and the options after it, up to the next
            // --name, go to its defaults (init.c: no job open, so the
            // next option opens def_thread).
            let skipped = !p.only.is_empty() && name != "global" && !p.only.contains(&name);
            p.sections
                .push((if skipped { "global".into() } else { name }, Vec::new()));
            continue;
        }
        if let Some((_, opts)) = p.sections.last_mut() {
            opts.push((key.to_string(), value));
        }
    }
    Ok(p)
}

/// The job file text the sections stand for.
fn text(p: &Parsed) -> String {
    let mut out = String::new();
    for (name, opts) in &p.sections {
        out.push_str(&format!("[{name}]\n"));
        for (k, v) in opts {
            match v {
                Some(v) => out.push_str(&format!("{k}={v}\n")),
                None => out.push_str(&format!("{k}\n")),
            }
        }
    }
    out
}

/// `stripebench fio WORDS...`: the runs fio's command line (or the job
/// file it names) stands for, as `run --fio-job` makes them; the words
/// after `--` are stripebench's own, typed after the job's.
pub fn expand(words: &[OsString]) -> Result<Runs, FioJobError> {
    let end = words.iter().position(|w| w == "--").unwrap_or(words.len());
    let tail: Vec<OsString> = words.get(end + 1..).unwrap_or_default().to_vec();
    let fio: Vec<String> = words[..end]
        .iter()
        .map(|w| {
            w.to_str().map(str::to_string).ok_or_else(|| {
                FioJobError(format!(
                    "stripebench fio: `{}` is not UTF-8 text: give fio's options as text",
                    show_text(&w.to_string_lossy())
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    if fio.is_empty() {
        return Err(FioJobError(
            "stripebench fio: no fio options: give fio's command line, such as --name=test --filename=/dev/sdX --rw=randread (see stripebench fio --help)".into(),
        ));
    }
    let p = parse(&fio)?;
    let mut files = Vec::new();
    for file in &p.files {
        let path = std::path::Path::new(file);
        let shown = crate::base::error::show_path(path);
        let text = super::fio_job::read(path, &shown)?;
        crate::base::invocation::record_config(file, &text);
        files.push(JobFile { text, shown });
    }
    expand_fio(&text(&p), SHOWN, &files, &p.only, tail).map_err(lineless)
}

/// A refusal of the job made from the command line, without the line
/// numbers of a text the user never saw (the section and option named
/// are what finds it).
fn lineless(e: FioJobError) -> FioJobError {
    let from = format!("fio job file {SHOWN}");
    let mut out = String::new();
    let mut rest = e.0.as_str();
    while let Some(at) = rest.find(&from) {
        out.push_str(&rest[..at]);
        out.push_str("fio's command line");
        rest = &rest[at + from.len()..];
        if let Some(after) = rest.strip_prefix(" line ") {
            rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
        }
    }
    out.push_str(rest);
    FioJobError(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn options_before_the_first_name_are_global_and_each_name_starts_a_job() {
        let p = parse(&words(&[
            "--randrepeat=1",
            "--ioengine",
            "libaio",
            "--name=a",
            "--bs=4k",
            "--time_based",
            "--runtime",
            "5",
            "-name=b",
            "--rw=read",
            "--name=global",
            "--direct=1",
        ]))
        .unwrap();
        let names: Vec<&str> = p.sections.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["global", "a", "b", "global"]);
        assert_eq!(
            p.sections[0].1,
            [
                ("randrepeat".to_string(), Some("1".to_string())),
                ("ioengine".to_string(), Some("libaio".to_string()))
            ]
        );
        // A bare flag takes no next word; an option with a value does.
        assert_eq!(
            p.sections[1].1,
            [
                ("bs".to_string(), Some("4k".to_string())),
                ("time_based".to_string(), None),
                ("runtime".to_string(), Some("5".to_string()))
            ]
        );
        assert_eq!(text(&p), "[global]\nrandrepeat=1\nioengine=libaio\n[a]\nbs=4k\ntime_based\nruntime=5\n[b]\nrw=read\n[global]\ndirect=1\n");
        assert!(p.files.is_empty());
    }

    #[test]
    fn a_word_that_is_no_option_is_a_job_file_and_fio_s_program_options_are_refused() {
        let p = parse(&words(&["job.fio"])).unwrap();
        assert_eq!(p.files, ["job.fio"]);
        let e = parse(&words(&["--output-format=json", "--name=a"])).unwrap_err();
        assert!(
            e.0.contains("`--output-format=json`") && e.0.contains("after `--`"),
            "{e}"
        );
        let e = parse(&words(&["--name=a", "--bs"])).unwrap_err();
        assert!(e.0.contains("needs a value"), "{e}");
        let e = parse(&words(&["--name=a", "--description=x;y"])).unwrap_err();
        assert!(e.0.contains("';'"), "{e}");
    }

    #[test]
    fn section_is_kept_and_a_name_it_does_not_name_opens_the_defaults_again() {
        let p = parse(&words(&[
            "--section=b",
            "--name=a",
            "--bs=8k",
            "--name=b",
            "--rw=read",
            "job.fio",
        ]))
        .unwrap();
        assert_eq!(p.only, ["b"]);
        assert_eq!(p.files, ["job.fio"]);
        // fio skips [a]; its --bs=8k goes to the defaults (init.c).
        assert_eq!(text(&p), "[global]\n[global]\nbs=8k\n[b]\nrw=read\n");
        // A --section after a --name does not skip it (fio reads in order).
        let p = parse(&words(&["--name=a", "--section=b"])).unwrap();
        assert_eq!(text(&p), "[global]\n[a]\n");
        let e = parse(&words(&["--section=global"])).unwrap_err();
        assert!(e.0.contains("`--section=global`"), "{e}");
    }

    #[test]
    fn a_refusal_names_the_command_line_not_a_line_of_a_text_never_seen() {
        let os: Vec<OsString> = ["--name=t", "--filename=/dev/null", "--flow=2"]
            .iter()
            .map(OsString::from)
            .collect();
        let e = match expand(&os) {
            Err(e) => e.0,
            Ok(_) => panic!("not refused"),
        };
        assert!(e.starts_with("fio's command line [t]: "), "{e}");
        assert!(e.contains("`flow=2`") && !e.contains("line 4"), "{e}");
    }
}
