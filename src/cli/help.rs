//! The help as a user reads it: the measuring options of `run`, `verify`,
//! `sweep` and `compare` in the order they are reached for (the workload,
//! then targets and stripes, then outputs, then safety), and examples at
//! the end of every subcommand's help. One arranged command serves the
//! parser, the man pages and the shell completions alike.

use clap::{Command, CommandFactory, FromArgMatches};

use super::Cli;

/// The sections of the measuring options, in order, each with its options
/// (clap ids: the field names) in the order they are shown.
pub const SECTIONS: &[(&str, &[&str])] = &[
    (
        "Workload",
        &[
            "rw",
            "mix",
            "dist",
            "skip",
            "seq_run",
            "sprandom",
            "spr_op",
            "spr_regions",
            "random_map",
            "bs",
            "bssplit",
            "blockalign",
            "duration",
            "ramp",
            "direct",
            "buffered",
            "uncached",
            "jobs",
            "jobs_share",
            "iodepth",
            "engine",
            "rate",
            "rate_iops",
            "rate_min",
            "rate_iops_min",
            "rate_cycle",
            "thinktime",
            "thinktime_spin",
            "thinktime_blocks",
            "thinktime_on_issue",
            "latency_target",
            "latency_window",
            "latency_percentile",
            "latency_run",
            "steady",
            "steady_dur",
            "steady_ramp",
            "size",
            "create",
            "create_layout",
            "offset",
            "offset_increment",
            "passes",
            "io_limit",
            "ios",
            "zones",
            "fill_device",
            "cached",
            "drop_caches",
            "readahead",
            "cpus",
            "no_pin",
            "numa_nodes",
            "numa_mem",
            "ioprio",
            "cmdprio",
            "cmdprio_bssplit",
            "seed",
            "buffer_compress",
            "dedupe",
            "dedupe_working_set",
            "dedupe_global",
            "pattern",
            "verify",
            "start_at",
            "start_delay",
            "no_register",
            "hipri",
            "sqpoll",
            "taskrun",
            "complete_min",
            "sched",
            "nowait",
            "hugepages",
        ],
    ),
    (
        "Targets and stripes",
        &[
            "members",
            "stripe",
            "align",
            "stripe_cache_size",
            "group_thread_cnt",
            "sync_speed_min",
            "sync_speed_max",
            "dir",
            "testbed_size",
            "testbed_files",
        ],
    ),
    (
        "Outputs",
        &[
            "json",
            "csv",
            "plot",
            "html",
            "fio-json",
            "live",
            "live_format",
            "live_interval",
            "log_interval",
            "fio_log",
            "fio_log_format",
            "iolog_write",
            "iolog_read",
            "metrics",
            "history",
            "no_history",
            "histogram",
            "rows",
            "no_progress",
            "config",
            "fio_job",
        ],
    ),
    (
        "Safety",
        &[
            "allow_destructive",
            "allow_holes",
            "force_signature",
            "force_memory",
            "wait_lock",
            "max_errors",
            "ignore_errors",
            "hang_timeout",
            "dry_run",
            "print_fio",
        ],
    ),
];

/// Each subcommand's examples: what a newcomer types first.
const EXAMPLES: &[(&str, &str)] = &[
    (
        "run",
        "stripebench run                                  # the built-in test bed, 10 s of 1 MiB O_DIRECT reads\n  \
         stripebench run --rw randread --bs 4k --iodepth 32 /dev/nvme0n1 /dev/nvme1n1\n  \
         stripebench run --members /dev/md0 -t 30s --json md0.json   # one worker per member\n  \
         stripebench run --buffered --readahead 4096 /dev/md0        # read-ahead set, then put back\n  \
         stripebench run --rw write --allow-destructive /dev/loop0   # writes need consent\n  \
         stripebench run --fio-job seq-read.fio -t 30s /dev/sdb     # a fio job file, its filename= replaced",
    ),
    (
        "fio",
        "stripebench fio --name=seq --filename=/dev/sdb --rw=read --bs=1m --direct=1\n  \
         stripebench fio --name=t --filename=/dev/sdb --rw=randrw --bs=4k -- --json t.json\n  \
         stripebench fio job.fio -- --dry-run          # a job file, as run --fio-job reads it",
    ),
    (
        "verify",
        "stripebench run --rw write --verify --allow-destructive /dev/loop0\n  \
         stripebench verify /dev/loop0                    # reads it back: corrupt, misplaced or stale blocks",
    ),
    (
        "sweep",
        "stripebench sweep --param readahead=128,1024,4096 --buffered /dev/md0\n  \
         stripebench sweep --param jobs=1,2,4,8 --param bs=4k,1m /dev/nvme0n1\n  \
         stripebench sweep --members /dev/md0 --param members=1,2,4,8 --json scale.json\n  \
         stripebench sweep --param rate=curve --rw randread --bs 4k /dev/sdb   # latency against load\n  \
         stripebench sweep --fio-job ssd-test.fio /dev/sdb   # stonewall groups that differ in one option",
    ),
    (
        "compare",
        "stripebench compare /dev/md0                     # members together against the volume\n  \
         stripebench compare --solo --json md0.json /dev/md0   # and each member alone\n  \
         stripebench compare -t 5s --bs 64k /mnt/btrfs-raid0",
    ),
    (
        "advise",
        "stripebench advise /dev/md0                      # ~2 min: sysfs, then read-ahead measured\n  \
         stripebench advise --quick /dev/md0              # sysfs only, nothing measured\n  \
         stripebench advise --budget 30s --json md0-findings.json /dev/md0\n  \
         stripebench advise --quick --fail-on medium /dev/md0   # for monitoring: exit 1 on a finding",
    ),
    (
        "topology",
        "stripebench topology /dev/md0\n  \
         stripebench topology --json /mnt/data/file\n  \
         stripebench topology /dev/mapper/vg-lv",
    ),
    (
        "plan",
        "stripebench plan scale.json                      # the USL fit of a sweep over members\n  \
         stripebench plan --at 64 scale.json\n  \
         stripebench plan --target 5GB/s scale.json",
    ),
    (
        "merge",
        "stripebench merge --json fleet.json host1.json host2.json host3.json\n  \
         stripebench merge fleet-a.json fleet-b.json       # merges of merges",
    ),
    (
        "diff",
        "stripebench diff before.json after.json\n  \
         stripebench diff --force old-kernel.json new-kernel.json",
    ),
    (
        "history",
        "stripebench history                              # every disk: last result, trend, flags\n  \
         stripebench history sdq                          # one disk's series, by WWN, serial or name\n  \
         stripebench history --fail-on any --html disks.html   # for cron: exit 1 on drift or fail-slow\n  \
         stripebench history import hosts/*.json         # a fleet's documents, once each",
    ),
    (
        "report",
        "stripebench report run.json -o run.html\n  \
         stripebench report fleet.json -o -               # the page to stdout",
    ),
    ("membw", "stripebench membw"),
    (
        "restore",
        "stripebench restore                              # after a killed run: read-ahead and the test beds",
    ),
    (
        "completions",
        "stripebench completions bash > /etc/bash_completion.d/stripebench\n  \
         stripebench completions zsh > ~/.zfunc/_stripebench\n  \
         stripebench completions fish > ~/.config/fish/completions/stripebench.fish",
    ),
    (
        "man",
        "stripebench man run | man -l -                   # read a page without installing it\n  \
         stripebench man > stripebench.1",
    ),
    (
        "version",
        "stripebench version\n  \
         stripebench version --json",
    ),
];

/// The command tree with the sections and examples applied.
pub fn command() -> Command {
    arrange(Cli::command())
}

/// Parses `argv` with the arranged command.
pub fn parse_from(argv: impl IntoIterator<Item = std::ffi::OsString>) -> Result<Cli, clap::Error> {
    let mut cmd = command();
    let matches = cmd.try_get_matches_from_mut(argv)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// Parses `argv` as [`parse_from`] does, with the ids of the options of
/// its subcommand that the command line itself gave (not their defaults).
pub fn parse_given(
    argv: impl IntoIterator<Item = std::ffi::OsString>,
) -> Result<(Cli, Vec<String>), clap::Error> {
    let mut cmd = command();
    let matches = cmd.try_get_matches_from_mut(argv)?;
    let cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))?;
    let given = matches
        .subcommand()
        .map(|(_, sub)| {
            sub.ids()
                .filter(|id| {
                    sub.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
                })
                .map(|id| id.to_string())
                .collect()
        })
        .unwrap_or_default();
    Ok((cli, given))
}

/// clap's reading of `argv` (what it gave, and from where), nothing typed.
pub fn matches(
    argv: impl IntoIterator<Item = std::ffi::OsString>,
) -> Result<clap::ArgMatches, clap::Error> {
    command().try_get_matches_from(argv)
}

/// Parses `argv` as [`parse_from`] does, with `defaults` (clap ids of
/// options of the subcommand `sub`, and their values as written) taking
/// the place of clap's own defaults: a value a `--config` file gives,
/// which the command line replaces when it gives the option. Values, never
/// words: one that starts with '-' is a value.
pub fn parse_over(
    argv: impl IntoIterator<Item = std::ffi::OsString>,
    sub: &str,
    defaults: &[(String, Vec<String>)],
) -> Result<Cli, clap::Error> {
    let mut cmd = command().mut_subcommand(sub, |mut s| {
        for (id, values) in defaults {
            s = s.mut_arg(id.as_str(), |a| a.default_values(values.clone()));
        }
        s
    });
    let matches = cmd.try_get_matches_from_mut(argv)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// Whether `words`, typed after the subcommand `sub`, name targets as
/// clap reads them (an option's value is none, `--` ends the options);
/// `None` when clap refuses the words (the refusal is reported when they
/// are parsed for the run).
pub fn names_targets(sub: &str, words: &[std::ffi::OsString]) -> Option<bool> {
    let argv = std::iter::once(std::ffi::OsString::from(sub)).chain(words.iter().cloned());
    let matches = command()
        .no_binary_name(true)
        .try_get_matches_from(argv)
        .ok()?;
    let (_, m) = matches.subcommand()?;
    Some(m.value_source("targets") == Some(clap::parser::ValueSource::CommandLine))
}

/// clap's refusal on one line: its first, with the choices of an invalid
/// value, or the names of the arguments missing, that it puts below.
pub fn one_line(e: &clap::Error) -> String {
    if let Some(line) = invalid_value_line(e) {
        return line;
    }
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
            let names: Vec<&str> = lines.map(str::trim).take_while(|l| !l.is_empty()).collect();
            format!("{head}: {}", names.join(" "))
        }
        None => first.to_string() + choices.as_deref().unwrap_or(""),
    };
    first
}

/// An invalid value's refusal built from clap's parts, the value typed
/// escaped: clap's rendering drops escape sequences and other control
/// characters from it (`\x1b[31mjunk` showed as `junk`, its byte count
/// then wrong) and a newline in it cut the line short, reason and all.
fn invalid_value_line(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if !matches!(
        e.kind(),
        ErrorKind::ValueValidation | ErrorKind::InvalidValue
    ) {
        return None;
    }
    let text = |k| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let (value, arg) = (
        text(ContextKind::InvalidValue)?,
        text(ContextKind::InvalidArg)?,
    );
    // Plain values of a line's length render well as clap renders them
    // (choices and all); a longer one is cut, so that a 10000-entry
    // --bssplit is not echoed whole into the refusal.
    const SHOWN: usize = 120;
    let long = value.chars().count() > SHOWN;
    if !long && !value.chars().any(char::is_control) {
        return None;
    }
    let shown = if long {
        let head: String = value.chars().take(SHOWN).collect();
        format!("{head}... ({} characters)", value.chars().count())
    } else {
        value.clone()
    };
    // The parser's reason quotes the value too, as typed: cut there alike.
    let why = std::error::Error::source(e)
        .map(|s| format!(": {}", s.to_string().replace(&value, &shown)))
        .unwrap_or_default();
    let value = shown;
    let line = format!("invalid value '{value}' for '{arg}'{why}");
    Some(crate::base::error::show_text(&line).into_owned())
}

fn arrange(cmd: Command) -> Command {
    let mut cmd = cmd;
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        cmd = cmd.mut_subcommand(&name, |mut sub| {
            let ids: Vec<String> = sub
                .get_arguments()
                .map(|a| a.get_id().to_string())
                .collect();
            let mut order = 0;
            for (heading, args) in SECTIONS {
                for id in *args {
                    order += 1;
                    if ids.iter().any(|i| i == id) {
                        let o = order;
                        sub = sub.mut_arg(*id, |a| a.help_heading(*heading).display_order(o));
                    }
                }
            }
            if let Some((_, ex)) = EXAMPLES.iter().find(|(n, _)| *n == name) {
                sub = sub.after_help(format!("Examples:\n  {ex}"));
            }
            sub
        });
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_measuring_option_is_in_a_section_and_every_section_entry_exists() {
        let cmd = command();
        let run = cmd.find_subcommand("run").unwrap();
        let listed: Vec<&str> = SECTIONS
            .iter()
            .flat_map(|(_, a)| a.iter().copied())
            .collect();
        for a in run.get_arguments() {
            let id = a.get_id().as_str();
            if a.is_positional() || a.is_hide_set() || id == "help" {
                continue;
            }
            assert!(listed.contains(&id), "run --{id} is in no help section");
        }
        for id in &listed {
            assert!(
                run.get_arguments().any(|a| a.get_id() == *id),
                "section entry {id} is no run option"
            );
        }
    }

    #[test]
    fn run_help_starts_with_the_workload_and_ends_with_examples() {
        let mut cmd = command();
        let help = cmd
            .find_subcommand_mut("run")
            .unwrap()
            .render_help()
            .to_string();
        let at = |s: &str| help.find(s).unwrap_or_else(|| panic!("{s} not in\n{help}"));
        assert!(at("--rw <RW>") < at("--bs <SIZE|lbs>"));
        assert!(at("--bs <SIZE|lbs>") < at("--members <VOLUME>"));
        assert!(at("Workload:") < at("Targets and stripes:"));
        assert!(at("Targets and stripes:") < at("Outputs:"));
        assert!(at("Outputs:") < at("Safety:"));
        assert!(at("Safety:") < at("Examples:"));
    }

    /// The command lines a help text shows: each line of its Examples
    /// block, and each `stripebench ...` quoted in its text; a comment
    /// (`  # ...`) and what a shell does after it (`|`, `>`) cut off.
    fn command_lines(help: &str) -> Vec<String> {
        let mut lines: Vec<String> = help
            .lines()
            .skip_while(|l| l.trim() != "Examples:")
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            // A line that does not start with the program is a comment's
            // end, wrapped to the terminal's width.
            .filter(|l| l.trim_start().starts_with("stripebench"))
            .map(str::to_string)
            .collect();
        lines.extend(
            help.split('`')
                .skip(1)
                .step_by(2)
                .filter(|q| q.starts_with("stripebench "))
                .map(str::to_string),
        );
        lines
            .iter()
            .map(|l| {
                let l = l.split("  #").next().unwrap_or(l);
                let l = l.split(" | ").next().unwrap_or(l);
                l.split(" > ").next().unwrap_or(l).trim().to_string()
            })
            .collect()
    }

    /// Regression (issue 38, item 9): `report --help` showed
    /// `stripebench report run.json --html run.html`, which report refuses
    /// (its flag is -o). Every command line any help shows parses with the
    /// real command line, so that an example cannot rot again.
    #[test]
    fn every_command_line_a_help_shows_parses() {
        let mut cmd = command();
        let mut helps = vec![cmd.render_long_help().to_string()];
        let names: Vec<String> = cmd
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .collect();
        for n in &names {
            let sub = cmd.find_subcommand_mut(n).unwrap();
            helps.push(sub.render_long_help().to_string());
            helps.push(sub.render_help().to_string());
        }
        let mut seen = 0;
        for help in &helps {
            for line in command_lines(help) {
                let words: Vec<std::ffi::OsString> =
                    line.split_whitespace().map(Into::into).collect();
                assert_eq!(words.first().map(|w| w.to_str()), Some(Some("stripebench")));
                if let Err(e) = parse_from(words) {
                    panic!("the help shows `{line}`, which does not parse:\n{e}");
                }
                seen += 1;
            }
        }
        // Every subcommand's examples were found (not a silent pass).
        assert!(seen > 2 * names.len(), "only {seen} command lines found");
    }

    #[test]
    fn every_subcommand_has_examples() {
        for sub in command().get_subcommands() {
            let n = sub.get_name();
            if n == "help" {
                continue;
            }
            assert!(EXAMPLES.iter().any(|(e, _)| *e == n), "{n} has no examples");
        }
    }
}
