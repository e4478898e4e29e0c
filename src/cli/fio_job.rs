//! `run --fio-job FILE` and `sweep --fio-job FILE`: a fio job file read as
//! the stripebench runs it stands for.
//!
//! The file is read in fio's INI dialect (`[global]`, one `[section]` per
//! job, `key=value` and bare flags, `;` and `#` comments to the end of the
//! line), each job's options are the globals above it and its own (the
//! later wins), and each job is translated into `run`'s options, typed
//! ([`Set`]), and its `filename=` as targets. clap parses the command line
//! typed with `--fio-job` once; each group's options are set on top of it
//! with [`RunBuilder`] (each value checked as `run`'s parser checks it),
//! and `validate` checks the whole as for any typed command. The command
//! line wins option by option, as with `--config`: an option typed, or
//! one clap holds apart from it, replaces the job's; targets typed replace
//! `filename=`. What is printed before a run is the command it stands
//! for, each option as a user would type it: display, never parsed.
//! `sweep --fio-job` is one sweep: the groups' common options set so,
//! and the one option they differ in as its `--param`, typed.
//!
//! What fio would do and stripebench would not is refused by the option's
//! name, never dropped: an unknown key, a value whose meaning would change
//! (`4KiB` is 4000 bytes under fio's default kb_base=1024, and is kept as
//! 4000), a combination stripebench runs otherwise (`cpus_allowed=0-3`
//! without `cpus_allowed_policy=split`). numjobs' clones each cover the
//! job's whole region, as `--jobs N --jobs-share` do. The file is hostile input: at most [`MAX_BYTES`], text only, no
//! `include`, and no `$(...)` or backticks. What fio evaluates in a value
//! (`${VAR}`, `$pagesize`, `$mb_memory`, `$ncpus`, arithmetic) is evaluated
//! as fio does by `expr`, our own small parser, and said in a `#` line.
//!
//! Jobs between `stonewall`s run at once in fio: stripebench runs them as
//! one run when they are one workload on different files, and refuses them
//! otherwise. Each `stonewall` (or `wait_for_previous`) starts a group that
//! runs after the one before: `run` runs the groups one after another, as
//! separate runs (their output paths numbered: `r.json` becomes `r.1.json`,
//! `r.2.json`, ...), and stops at the first that fails; `sweep` takes groups
//! that differ in one parameter as the points of `--param NAME=...`.
//! `new_group` alone does not serialise jobs in fio (it starts a reporting
//! group only), and stripebench reports every target anyway: it is read and
//! changes nothing.

use crate::engine::buffer::HugePages;
use std::ffi::OsString;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use crate::base::error::{show_text, ExitCoded, EXIT_USAGE};
use crate::base::units::fmt_size_arg;
use crate::cli::builder::RunBuilder;
use crate::cli::{EngineArg, RunArgs};
use crate::measure::config::RwMode;

mod expr;
mod translate;
use translate::translate;

/// The largest job file read: fio's own examples are under 4 KiB.
pub const MAX_BYTES: u64 = 1 << 20;

/// A job file as an input file (`base::input::read`).
const INPUT: crate::base::input::Kind = crate::base::input::Kind {
    holds: "a fio job file",
    max: MAX_BYTES,
    pipe: false,
};

/// The most job sections a file may hold: each is a target of its run
/// (an open file, a worker), and fio's examples hold a handful.
pub const MAX_JOBS: usize = 256;

/// The most stonewall groups a file may hold: each is a run of its own,
/// one after another, each with its ramp and window (10000 groups of one
/// second would be three hours of runs nobody asked for by name).
pub const MAX_GROUPS: usize = 64;

/// What is wrong with `--fio-job` or its file (exit 2): one line, with the
/// file, line and section when known, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FioJobError(pub String);

impl ExitCoded for FioJobError {
    fn exit_code(&self) -> u8 {
        EXIT_USAGE
    }
}

/// `None` when `args` (the whole command line) has no `--fio-job`; else
/// the commands the job file stands for, in the order they run.
pub fn expand(args: Vec<OsString>) -> Result<Option<Expanded>, FioJobError> {
    let strs: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let options_end = strs.iter().position(|a| a == "--").unwrap_or(strs.len());
    let is_flag = |a: &String| a == "--fio-job" || a.starts_with("--fio-job=");
    let Some(pos) = strs[..options_end].iter().position(is_flag) else {
        return Ok(None);
    };
    if strs[pos + 1..options_end].iter().any(is_flag) {
        return Err(FioJobError(
            "--fio-job given twice: give one job file (its [sections] are the jobs)".into(),
        ));
    }
    // The path as given, bytes and all (not its lossy text: a name that is
    // not UTF-8 would be read as another).
    let (file, fio_words): (OsString, usize) = match strs[pos].strip_prefix("--fio-job=") {
        Some(_) => {
            use std::os::unix::ffi::{OsStrExt, OsStringExt};
            let bytes = args[pos].as_bytes()["--fio-job=".len()..].to_vec();
            (OsString::from_vec(bytes), 1)
        }
        None => match args.get(pos + 1).filter(|_| pos + 1 < options_end) {
            Some(f) => (f.clone(), 2),
            None => {
                return Err(FioJobError(
                    "--fio-job needs a FILE (a fio job file)".into(),
                ))
            }
        },
    };
    let sub_at = strs
        .iter()
        .skip(1)
        .position(|a| !a.starts_with('-'))
        .map(|i| i + 1);
    let sub =
        match sub_at {
            Some(at) if at < pos => strs[at].as_str(),
            _ => return Err(FioJobError(
                "--fio-job goes after the subcommand: stripebench run --fio-job FILE [TARGET...]"
                    .into(),
            )),
        };
    let sub_at = sub_at.unwrap_or(1);
    if sub != "run" && sub != "sweep" {
        return Err(FioJobError(format!(
            "--fio-job is read by run and sweep, not by {}: stripebench run --fio-job FILE",
            show_text(sub)
        )));
    }
    if strs[..options_end]
        .iter()
        .any(|a| a == "--config" || a.starts_with("--config="))
    {
        return Err(FioJobError(
            "--fio-job and --config both give the options: give one of them".into(),
        ));
    }
    // What was typed after the subcommand, without --fio-job FILE.
    let tail: Vec<OsString> = args[sub_at + 1..]
        .iter()
        .enumerate()
        .filter(|(i, _)| !(pos..pos + fio_words).contains(&(i + sub_at + 1)))
        .map(|(_, a)| a.clone())
        .collect();
    let path = Path::new(&file);
    let shown = crate::base::error::show_path(path);
    let text = read(path, &shown)?;
    crate::base::invocation::record_config(&path.display().to_string(), &text);
    expand_text(sub, &text, &shown, tail).map(Some)
}

/// A job file's text (`shown` as messages name it) read as `sub` reads
/// it (`run` or `sweep`), with `tail` typed after it: what `--fio-job`
/// and `stripebench fio` (fio's command line made a job) both stand for.
pub fn expand_text(
    sub: &str,
    text: &str,
    shown: &str,
    tail: Vec<OsString>,
) -> Result<Expanded, FioJobError> {
    let groups = groups(text, shown)?;
    if sub == "sweep" {
        for_the_targets(&groups, shown, sub, &tail)?;
        return Ok(Expanded::Sweep(sweep(&groups, shown, &tail)?));
    }
    let groups = groups.into_iter().map(|g| (g, shown.to_string())).collect();
    runs(groups, sub, tail).map(Expanded::Runs)
}

/// A job file named on fio's command line: its text, and how messages
/// name it.
pub(crate) struct JobFile {
    pub text: String,
    pub shown: String,
}

/// `stripebench fio`'s runs, read as fio's init.c reads its command line
/// and job files. `line` is the job text the command line's own options
/// stand for (`shown` naming it): those before any `--name` are fio's
/// def_thread, the defaults every job starts from, and each `--name` a
/// job. The first job file is read on top of them (its `[global]`
/// overrides them, its jobs start from them and run with the command
/// line's jobs); each file after it starts from fio's defaults again
/// (fio refills def_thread before each further file) and after all
/// before it ends (fio's stonewall between job files). With `only`
/// (`--section=NAME`s), a file's sections not named are skipped, all
/// but `[global]`.
pub(crate) fn expand_fio(
    line: &str,
    shown: &str,
    files: &[JobFile],
    only: &[String],
    tail: Vec<OsString>,
) -> Result<Runs, FioJobError> {
    let mut own = parse(line, shown)?;
    for o in own.iter_mut().flat_map(|s| s.opts.iter_mut()) {
        // Line 0: written on the command line, as messages say.
        o.line = 0;
    }
    // The sections there are: what a `--section=NAME` must name.
    let mut found: Vec<String> = own.iter().map(|s| s.name.clone()).collect();
    let mut parts: Vec<(Vec<Section>, &str)> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let mut sections = if i == 0 {
            std::mem::take(&mut own)
        } else {
            Vec::new()
        };
        let (text, names) = skip_sections(&f.text, only);
        found.extend(names);
        sections.extend(parse(&text, &f.shown)?);
        parts.push((sections, &f.shown));
    }
    if files.is_empty() {
        parts.push((own, shown));
    }
    if let Some(want) = only.iter().find(|w| !found.contains(w)) {
        let files: Vec<&str> = files.iter().map(|f| f.shown.as_str()).collect();
        return Err(FioJobError(format!(
            "stripebench fio: `--section={}`: no [{}] in {}: fio would run nothing of it; name a section that is there",
            show_text(want),
            show_text(want),
            if files.is_empty() { "fio's command line".to_string() } else { files.join(", ") }
        )));
    }
    let mut groups = Vec::new();
    for (sections, shown) in parts {
        groups.extend(
            groups_of(sections, shown)?
                .into_iter()
                .map(|g| (g, shown.to_string())),
        );
    }
    if groups.len() > MAX_GROUPS {
        return Err(FioJobError(format!(
            "stripebench fio: its job files are {} runs, more than stripebench runs from one command ({MAX_GROUPS}): run them in fewer at a time",
            groups.len()
        )));
    }
    runs(groups, "run", tail)
}

/// `text` with the lines of each section `only` does not name (all but
/// `[global]`; none when `only` is empty) made blank, as fio skips them
/// unread (its `${VAR}`s unevaluated), the other lines where they were;
/// and the names of all its sections.
fn skip_sections(text: &str, only: &[String]) -> (String, Vec<String>) {
    let (mut out, mut names, mut skipping) = (String::new(), Vec::new(), false);
    for raw in text.lines() {
        let l = raw.split([';', '#']).next().unwrap_or("").trim();
        if let Some(name) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            let name = name.trim().to_string();
            skipping = !only.is_empty() && name != "global" && !only.contains(&name);
            names.push(name);
        }
        if !skipping {
            out.push_str(raw);
        }
        out.push('\n');
    }
    (out, names)
}

/// Refuses a group with no file to run on: no `filename=` and no target
/// typed after it.
fn for_the_targets(
    groups: &[Group],
    shown: &str,
    sub: &str,
    tail: &[OsString],
) -> Result<(), FioJobError> {
    // Whether the command line names targets: then they replace filename=.
    // Words clap refuses are refused as typed when parsed for the run:
    // not for want of a filename= first.
    let typed_targets = super::help::names_targets(sub, tail).unwrap_or(true);
    for g in groups {
        if g.targets.is_empty() && !typed_targets {
            return Err(FioJobError(format!(
                "{shown} [{}]: no filename=: fio would name files of its own; give filename= in the file, or the targets after it on the command line",
                show_text(&g.sections[0])
            )));
        }
    }
    Ok(())
}

/// `run`'s runs of `groups` (each with the file that messages name it
/// by), one after another, with `tail` typed after them.
fn runs(groups: Vec<(Group, String)>, sub: &str, tail: Vec<OsString>) -> Result<Runs, FioJobError> {
    for (g, shown) in &groups {
        for_the_targets(std::slice::from_ref(g), shown, sub, &tail)?;
    }
    let n = groups.len();
    let mut runs = Vec::new();
    for (i, (g, shown)) in groups.into_iter().enumerate() {
        let (shown_tail, number) = if n > 1 {
            (numbered_outputs(&tail, i + 1, n)?, Some(i + 1))
        } else {
            (tail.clone(), None)
        };
        let head = if g.is_read_back {
            format!(
                "# {shown}: run {} of {n} ({}), its read-back, after the write ends (do_verify=1){}",
                i + 1,
                sections_shown(&g.sections),
                if g.with_previous {
                    ", at once with the read-back before it"
                } else {
                    ""
                }
            )
        } else if g.with_previous {
            format!(
                "# {shown}: run {} of {n} ({}), at once with the run before it: fio runs the jobs of a group together, so their windows open at the same instant; each run's figures are its own, its CPU time the process's (a --print-fio line given to fio alone runs alone: give fio such lines as the jobs of one job file, no stonewall between them)",
                i + 1,
                sections_shown(&g.sections)
            )
        } else if n > 1 && i > 0 {
            format!(
                "# {shown}: run {} of {n} ({}), after the one before ends (stonewall)",
                i + 1,
                sections_shown(&g.sections)
            )
        } else if n > 1 {
            format!("# {shown}: run 1 of {n} ({})", sections_shown(&g.sections))
        } else {
            format!("# {shown}: {}", sections_shown(&g.sections))
        };
        runs.push(RunGroup {
            head,
            notes: g.notes,
            sets: g.args,
            targets: g.targets,
            shown_tail,
            number,
            shown: shown.clone(),
            with_previous: g.with_previous,
            reads_what_was_written: g.reads_what_was_written,
            exitall: g.exitall,
        });
    }
    Ok(Runs {
        typed: tail,
        groups: runs,
    })
}

/// What a job file stands for.
pub enum Expanded {
    /// `sweep --fio-job`: one sweep over the groups.
    Sweep(SweepPlan),
    /// `run --fio-job`: its runs, one per stonewall group, in order.
    Runs(Runs),
}

/// `run --fio-job`'s runs.
pub struct Runs {
    /// What was typed after `run`, without `--fio-job FILE`: clap parses
    /// it once, and each group's options go on top of it.
    pub typed: Vec<OsString>,
    pub groups: Vec<RunGroup>,
}

/// One stonewall group: its options, typed, and what is printed before
/// it runs.
#[derive(Debug, Clone)]
pub struct RunGroup {
    head: String,
    notes: Vec<String>,
    sets: Vec<Set>,
    targets: Vec<String>,
    /// What was typed, its output paths numbered: shown, never parsed.
    shown_tail: Vec<OsString>,
    /// Its number, when the file is several runs (its outputs numbered).
    number: Option<usize>,
    /// The job file as messages name it.
    shown: String,
    /// It runs at once with the run before it.
    with_previous: bool,
    /// It reads as many bytes as the run before it wrote (a verified
    /// mix's read-back).
    reads_what_was_written: bool,
    /// The file has exitall=1: what this run's end stops.
    exitall: Option<crate::measure::together::Exitall>,
}

impl RunGroup {
    /// The file has exitall=1: what this run's end stops.
    pub fn exitall(&self) -> Option<crate::measure::together::Exitall> {
        self.exitall
    }

    /// Whether it runs at once with the run before it (jobs of one
    /// stonewall group that are different workloads).
    pub fn with_previous(&self) -> bool {
        self.with_previous
    }

    /// Whether it reads as many bytes as the run before it wrote: the
    /// read-back of a verified sequential mix, whose writes are a run of
    /// blocks from the region's start.
    pub fn reads_what_was_written(&self) -> bool {
        self.reads_what_was_written
    }

    /// The group's run: what the command line gave (`typed`, clap's
    /// parse of it, `given` the ids of the options it named), and the
    /// job's options where the command line gave neither the option nor
    /// one clap holds apart from it (`--buffered` typed drops the job's
    /// `--direct`); targets typed replace `filename=`. Then the lines
    /// printed before it runs: its `#` lines and the stripebench command
    /// it stands for.
    pub fn configure(
        &self,
        typed: &RunArgs,
        given: &[String],
    ) -> Result<(RunArgs, String), FioJobError> {
        let kept: Vec<&Set> = self
            .sets
            .iter()
            .filter(|s| !command_line_gives("run", s.id(), given))
            .filter(|s| typed.targets.is_empty() || !s.lays_out())
            .collect();
        let mut b = RunBuilder::from_args(typed.clone());
        for s in &kept {
            b = s
                .apply(b)
                .map_err(|e| FioJobError(format!("{}: {e}", self.shown)))?;
        }
        let mut args = b.args();
        let file_targets = typed.targets.is_empty();
        if file_targets {
            args.targets = self.targets.iter().map(PathBuf::from).collect();
        }
        if let Some(i) = self.number {
            for (_, p) in &mut args.formats.given {
                *p = numbered(p, i);
            }
            for p in [&mut args.live, &mut args.metrics].into_iter().flatten() {
                *p = numbered(p, i);
            }
        }
        let mut line: Vec<OsString> = vec!["run".into()];
        line.extend(kept.iter().flat_map(|s| s.words()).map(OsString::from));
        if file_targets {
            line.extend(self.targets.iter().map(OsString::from));
        }
        line.extend(self.shown_tail.iter().cloned());
        Ok((args, said(&self.head, &self.notes, &line)))
    }
}

/// Whether the command line gave `id` (clap's id of one of `run`'s
/// options), or an option clap holds apart from it: then it, not the
/// job, says what that option is.
fn command_line_gives(sub: &str, id: &str, given: &[String]) -> bool {
    use clap::CommandFactory;
    let root = crate::cli::Cli::command();
    let Some(cmd) = root.find_subcommand(sub) else {
        return false;
    };
    let arg = |id: &str| cmd.get_arguments().find(|a| a.get_id() == id);
    let Some(a) = arg(id) else {
        return false;
    };
    given
        .iter()
        .filter_map(|g| arg(g))
        .any(|g| super::configfile::replaces(cmd, g, a))
}

/// Whether an output path, as typed, may be numbered for each of `n`
/// runs: a path run would refuse (a directory, a device, a FIFO, stdout
/// under another name) must not become a new file beside it
/// (`/dev/null` → `/dev/null.1`, `out/` → `out.1`), so only a file path
/// is: one that names no existing file, or a regular file, outside
/// /dev and /proc.
fn numberable(flag: &str, path: &Path, n: usize) -> Result<(), FioJobError> {
    let refuse = |what: &str| {
        Err(FioJobError(format!(
            "--{flag} {}: {what}; the job file is {n} runs (stonewall), each writing its own numbered file (r.json: r.1.json, r.2.json, ...): give a file path",
            crate::base::error::show_path(path)
        )))
    };
    let text = path.as_os_str().as_encoded_bytes();
    if text.ends_with(b"/") || path.ends_with(".") || path.ends_with("..") {
        return refuse("it names a directory");
    }
    if crate::base::host::Host::real().holds_special(path) {
        return refuse("it lies in /dev, /proc or /sys, where a run's output is a device, a stream or a kernel file, not a file");
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => refuse("it names a directory"),
        Ok(m) if !m.is_file() => refuse("it is not a regular file (a device, a FIFO or a socket)"),
        _ => Ok(()),
    }
}

/// `path` with `i` before its extension (`r.json` → `r.2.json`).
fn numbered(path: &std::path::Path, i: usize) -> PathBuf {
    let stem = path.file_stem().unwrap_or(path.as_os_str());
    let mut name = stem.to_os_string();
    name.push(format!(".{i}"));
    if let Some(ext) = path.extension() {
        name.push(".");
        name.push(ext);
    }
    path.with_file_name(name)
}

/// The file's text: at most [`MAX_BYTES`], UTF-8, no control character but
/// tab and the line ends.
pub(crate) fn read(path: &Path, shown: &str) -> Result<String, FioJobError> {
    let bytes = crate::base::input::read(path, &INPUT)
        .map_err(|e| FioJobError(format!("cannot read fio job file {shown}: {e}")))?;
    let line_at = |i: usize| bytes[..i].iter().filter(|&&b| b == b'\n').count() + 1;
    let text = String::from_utf8(bytes.clone()).map_err(|e| {
        FioJobError(format!(
            "fio job file {shown} line {}: not UTF-8 text; a job file is text",
            line_at(e.utf8_error().valid_up_to())
        ))
    })?;
    // A carriage return ends a line only before a line feed (CRLF): alone,
    // it would hide the rest of the line in the value before it.
    if let Some(i) = text
        .char_indices()
        .find(|&(i, c)| c == '\r' && text.as_bytes().get(i + 1) != Some(&b'\n'))
        .map(|(i, _)| i)
    {
        return Err(FioJobError(format!(
            "fio job file {shown} line {}: a carriage return inside a line (not before its line feed): end lines with LF or CRLF",
            line_at(i)
        )));
    }
    if let Some((i, c)) = text
        .char_indices()
        .find(|&(_, c)| !matches!(c, '\n' | '\r' | '\t') && crate::base::error::hostile(c))
    {
        return Err(FioJobError(format!(
            "fio job file {shown} line {}: a control or invisible character ({}) in the text; a job file holds none: remove it",
            line_at(i),
            show_text(&c.to_string())
        )));
    }
    Ok(text)
}

/// One `key` or `key=value` line of a section.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Opt {
    key: String,
    value: Option<String>,
    /// Its line in the file; 0 when given on fio's command line
    /// (`stripebench fio`'s options before its job files).
    line: usize,
    /// The section it is written in (`global` for the globals).
    section: String,
    /// The `#` line saying how its value was evaluated, when it was.
    evaluated: Option<String>,
}

/// A `[name]` and its options, in the file's order.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Section {
    name: String,
    opts: Vec<Opt>,
}

/// fio's INI dialect: sections, options, comments; values evaluated as
/// fio evaluates them (`expr`), and nothing else.
fn parse(text: &str, shown: &str) -> Result<Vec<Section>, FioJobError> {
    let mut sections: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let at = || format!("fio job file {shown} line {line}");
        // fio ends a line at its first ';' or '#', wherever it is.
        let l = raw.split([';', '#']).next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        if let Some(rest) = l.strip_prefix('[') {
            let name = rest.strip_suffix(']').map(str::trim).unwrap_or("");
            if name.is_empty() {
                return Err(FioJobError(format!(
                    "{}: `{}` is no section: write [global] or [NAME]",
                    at(),
                    show_text(l)
                )));
            }
            sections.push(Section {
                name: name.to_string(),
                opts: Vec::new(),
            });
            continue;
        }
        if l == "include" || l.starts_with("include ") || l.starts_with("include\t") {
            return Err(FioJobError(format!(
                "{}: `{}`: stripebench follows no include: put the included options in this file",
                at(),
                show_text(l)
            )));
        }
        let (key, value) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (l, None),
        };
        if key.is_empty()
            || !key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(FioJobError(format!(
                "{}: `{}` is no option: write key=value or a bare flag",
                at(),
                show_text(l)
            )));
        }
        // What fio evaluates in a value (`${VAR}`, `$pagesize`, arithmetic),
        // evaluated as fio does by expr; nothing else is.
        let (value, evaluated) = match value {
            Some(v) => match expr::evaluate(canonical(key), &v, &expr::Sources::REAL)
                .map_err(|e| FioJobError(format!("{}: {e}", at())))?
            {
                Some(e) => (Some(e.value), Some(e.note)),
                None => (Some(v), None),
            },
            None => (None, None),
        };
        let Some(section) = sections.last_mut() else {
            return Err(FioJobError(format!(
                "{}: `{}` comes before any [section]: put it under [global] or a [job]",
                at(),
                show_text(l)
            )));
        };
        section.opts.push(Opt {
            key: canonical(key).to_string(),
            value,
            line,
            section: section.name.clone(),
            evaluated,
        });
    }
    Ok(sections)
}

/// fio's aliases, spelled as the table below knows them.
fn canonical(key: &str) -> &str {
    match key {
        "readwrite" => "rw",
        "blocksize" => "bs",
        "blocksize_range" => "bsrange",
        "ba" => "blockalign",
        "timeout" => "runtime",
        "wait_for_previous" => "stonewall",
        "io_limit" => "io_size",
        "disable_bw" => "disable_bw_measurement",
        "ss" => "steadystate",
        "ss_dur" => "steadystate_duration",
        "ss_ramp" => "steadystate_ramp_time",
        "ss_interval" => "steadystate_check_interval",
        "allrandrepeat" => "randrepeat",
        "ratemin" => "rate_min",
        "ratecycle" => "rate_cycle",
        k => k,
    }
}

/// One job: its section's name and options (the globals above it first).
struct Job {
    name: String,
    opts: Vec<Opt>,
}

impl Job {
    /// The last value given for `key` (the job's own over the globals').
    fn get(&self, key: &str) -> Option<&Opt> {
        self.opts.iter().rev().find(|o| o.key == key)
    }
}

/// The jobs of the file, each with the globals above it.
fn jobs(sections: Vec<Section>) -> Vec<Job> {
    let mut global: Vec<Opt> = Vec::new();
    let mut out = Vec::new();
    for s in sections {
        if s.name == "global" {
            global.extend(s.opts);
        } else {
            let mut opts = global.clone();
            opts.extend(s.opts);
            out.push(Job { name: s.name, opts });
        }
    }
    out
}

/// What one job stands for: stripebench's arguments (`--long=value` or
/// `--flag`, in a fixed order) and its targets, and the notes to print.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Translated {
    args: Vec<Set>,
    targets: Vec<String>,
    notes: Vec<String>,
    /// A verified write that fio reads back in the same job
    /// (do_verify=1): its read-back is the run after it.
    read_back: bool,
    /// fio's exitall=1 in this job (fio's is the whole file's), and its
    /// exit_what=.
    exitall: bool,
    exit_what: crate::measure::together::ExitWhat,
    /// fio's reporting group (groupid: each new_group or stonewall after
    /// the first job starts the next), what exit_what=group stops.
    report_group: usize,
}

/// One of `run`'s options as a job sets it, typed: applied to the run
/// with [`RunBuilder`]'s setter (validated as `run`'s parser validates
/// the same text), and shown as the word a user would type for it, in
/// the command printed before the run. The word is display: it is never
/// parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Set {
    Rw(RwMode),
    Mix(u8),
    /// fio's random_distribution, in its spelling (parsed as `--dist` is).
    Dist(String),
    Skip(i64),
    /// fio's zonemode=strided with zonesize=, zonerange=, zoneskip=.
    Zones(crate::measure::workload::Strided),
    SeqRun(u64),
    /// fio's sprandom=1 with spr_op= (as written, checked to be a share)
    /// and spr_num_regions= (their defaults when not given).
    Sprandom(String, u32),
    Bs(u64),
    /// fio's bssplit=, in its spelling with sizes in bytes (parsed as
    /// `--bssplit` is).
    Bssplit(String),
    Blockalign(u64),
    Direct,
    Buffered,
    Uncached,
    HugePages(HugePages),
    Duration(Duration),
    IoLimit(u64),
    Passes(u64),
    /// fio's number_ios (times loops=).
    Ios(u64),
    /// fio's startdelay: a time, or a range (the same time twice when not).
    StartDelay(Duration, Duration),
    Ramp(Duration),
    Jobs(usize),
    JobsShare,
    /// fio's CRITERION:LIMIT, checked (`analysis::steady::Criterion`).
    Steady(String),
    SteadyDur(Duration),
    SteadyRamp(Duration),
    /// `--live-interval`: the steady state's check interval (ss_interval).
    LiveInterval(Duration),
    Engine(EngineArg),
    Iodepth(usize),
    NoRegister,
    Hipri,
    Sqpoll(Option<u64>),
    CompleteMin(u64),
    Nowait,
    Rate(u64),
    RateIops(u64),
    /// fio's rate_min= (bytes per second).
    RateMin(u64),
    /// fio's rate_iops_min=.
    RateIopsMin(u64),
    /// fio's rate_cycle= (milliseconds in fio).
    RateCycle(Duration),
    /// fio's thinktime= (microseconds in fio) and its companions.
    Thinktime(Duration),
    ThinktimeSpin(Duration),
    ThinktimeBlocks(u64),
    ThinktimeOnIssue,
    /// fio's random_generator=lfsr: every block once a pass.
    RandomMap,
    /// fio's latency_target= family (microseconds in fio).
    LatencyTarget(Duration),
    LatencyWindow(Duration),
    /// The percentile as typed (a float, so kept as its text).
    LatencyPercentile(String),
    LatencyRun,
    Size(u64),
    Offset(u64),
    OffsetIncrement(u64),
    /// fio's CPU list, as written (without spaces).
    Cpus(String),
    NoPin,
    /// fio's numa_cpu_nodes, parsed.
    NumaNodes(Vec<usize>),
    /// fio's numa_mem_policy, parsed.
    NumaMem(crate::base::thread_setup::MemPolicy),
    /// fio's prioclass and prio.
    IoPrio(crate::base::thread_setup::IoPrio),
    /// fio's cmdprio_percentage, cmdprio_class and cmdprio.
    CmdPrio(crate::base::thread_setup::CmdPrio),
    /// fio's cmdprio_bssplit, each entry's priority made explicit.
    CmdPrioSplit(crate::base::thread_setup::CmdPrioSplit),
    Seed(u64),
    BufferCompress(u8),
    Dedupe(u8),
    /// fio's buffer_pattern or verify_pattern, parsed (its file read).
    Pattern(crate::base::pattern::Pattern),
    /// fio's fill_device=1.
    FillDevice,
    /// fio's dedupe_mode=working_set with dedupe_working_set_percentage.
    DedupeWorkingSet(u8),
    /// fio's dedupe_global.
    DedupeGlobal,
    Verify,
    /// fio's continue_on_error= with ignore_error=.
    IgnoreErrors(crate::measure::config::IgnoredErrors),
    LogInterval(Duration),
    /// `--create SIZE`: fio's filesize= on a file that is not there.
    Create(u64),
    /// `--create-layout`: fio's fallocate= and create_on_open=.
    CreateLayout(crate::device::scratch::CreateLayout),
    /// fio's `write_bw_log=PREFIX` and its kin.
    FioLog(crate::report::fio_log::LogKind, String),
    /// `--fio-log-format`'s comma list.
    FioLogFormat(String),
    /// fio's `write_iolog=FILE`.
    IologWrite(String),
    /// fio's `read_iolog=FILE`.
    IologRead(String),
}

impl Set {
    /// The id of `run`'s option it sets (clap's: what the command line
    /// gave is known by it).
    pub fn id(&self) -> &'static str {
        match self {
            Set::Rw(_) => "rw",
            Set::Mix(_) => "mix",
            Set::Dist(_) => "dist",
            Set::Skip(_) => "skip",
            Set::Zones(_) => "zones",
            Set::SeqRun(_) => "seq_run",
            Set::Sprandom(..) => "sprandom",
            Set::OffsetIncrement(_) => "offset_increment",
            Set::Bs(_) => "bs",
            Set::Bssplit(_) => "bssplit",
            Set::Blockalign(_) => "blockalign",
            Set::Direct => "direct",
            Set::Buffered => "buffered",
            Set::Uncached => "uncached",
            Set::HugePages(_) => "hugepages",
            Set::Duration(_) => "duration",
            Set::IoLimit(_) => "io_limit",
            Set::Passes(_) => "passes",
            Set::Ios(_) => "ios",
            Set::StartDelay(..) => "start_delay",
            Set::Ramp(_) => "ramp",
            Set::Jobs(_) => "jobs",
            Set::JobsShare => "jobs_share",
            Set::Steady(_) => "steady",
            Set::SteadyDur(_) => "steady_dur",
            Set::SteadyRamp(_) => "steady_ramp",
            Set::LiveInterval(_) => "live_interval",
            Set::Engine(_) => "engine",
            Set::Iodepth(_) => "iodepth",
            Set::NoRegister => "no_register",
            Set::Hipri => "hipri",
            Set::Sqpoll(_) => "sqpoll",
            Set::CompleteMin(_) => "complete_min",
            Set::Nowait => "nowait",
            Set::Rate(_) => "rate",
            Set::RateIops(_) => "rate_iops",
            Set::RateMin(_) => "rate_min",
            Set::RateIopsMin(_) => "rate_iops_min",
            Set::RateCycle(_) => "rate_cycle",
            Set::Thinktime(_) => "thinktime",
            Set::ThinktimeSpin(_) => "thinktime_spin",
            Set::ThinktimeBlocks(_) => "thinktime_blocks",
            Set::ThinktimeOnIssue => "thinktime_on_issue",
            Set::RandomMap => "random_map",
            Set::LatencyTarget(_) => "latency_target",
            Set::LatencyWindow(_) => "latency_window",
            Set::LatencyPercentile(_) => "latency_percentile",
            Set::LatencyRun => "latency_run",
            Set::Size(_) => "size",
            Set::Offset(_) => "offset",
            Set::Cpus(_) => "cpus",
            Set::NoPin => "no_pin",
            Set::NumaNodes(_) => "numa_nodes",
            Set::NumaMem(_) => "numa_mem",
            Set::IoPrio(_) => "ioprio",
            Set::CmdPrio(_) => "cmdprio",
            Set::CmdPrioSplit(_) => "cmdprio_bssplit",
            Set::Seed(_) => "seed",
            Set::BufferCompress(_) => "buffer_compress",
            Set::Dedupe(_) => "dedupe",
            Set::Pattern(_) => "pattern",
            Set::FillDevice => "fill_device",
            Set::DedupeWorkingSet(_) => "dedupe_working_set",
            Set::DedupeGlobal => "dedupe_global",
            Set::Verify => "verify",
            Set::IgnoreErrors(_) => "ignore_errors",
            Set::LogInterval(_) => "log_interval",
            Set::Create(_) => "create",
            Set::CreateLayout(_) => "create_layout",
            Set::FioLog(..) => "fio_log",
            Set::FioLogFormat(_) => "fio_log_format",
            Set::IologWrite(_) => "iolog_write",
            Set::IologRead(_) => "iolog_read",
        }
    }

    /// The words a user would type for it: one (`--bs=4k`), or, for an
    /// option with companions, each of them.
    pub fn words(&self) -> Vec<String> {
        match self {
            Set::Sprandom(op, n) => vec![
                "--sprandom".into(),
                format!("--spr-op={op}"),
                format!("--spr-regions={n}"),
            ],
            _ => vec![self.word()],
        }
    }

    /// Whether it makes the job's file (`--create`, `--create-layout`):
    /// targets typed replace the job's files, and are used as they are.
    fn lays_out(&self) -> bool {
        matches!(self, Set::Create(_) | Set::CreateLayout(_))
    }

    /// The word a user would type for it (`--bs=4k`; an option with
    /// companions, all of them: see [`Set::words`]).
    pub fn word(&self) -> String {
        use clap::ValueEnum;
        let named = |v: &dyn Fn() -> Option<clap::builder::PossibleValue>| {
            v().map_or(String::new(), |p| p.get_name().to_string())
        };
        match self {
            Set::Rw(rw) => format!("--rw={}", named(&|| rw.to_possible_value())),
            Set::Mix(p) => format!("--mix={p}"),
            Set::Dist(d) => format!("--dist={d}"),
            Set::Skip(n) if *n < 0 => format!("--skip=-{}", fmt_size_arg(n.unsigned_abs())),
            Set::Skip(n) => format!("--skip={}", fmt_size_arg(*n as u64)),
            Set::Zones(z) => format!(
                "--zones={}:{}:{}",
                fmt_size_arg(z.size),
                if z.skip == 0 {
                    "0".into()
                } else {
                    fmt_size_arg(z.skip)
                },
                fmt_size_arg(z.range)
            ),
            Set::SeqRun(n) => format!("--seq-run={n}"),
            Set::Sprandom(op, n) => format!("--sprandom --spr-op={op} --spr-regions={n}"),
            Set::OffsetIncrement(b) => format!("--offset-increment={}", fmt_size_arg(*b)),
            Set::Bs(b) => format!("--bs={}", fmt_size_arg(*b)),
            Set::Bssplit(s) => format!("--bssplit={s}"),
            Set::Blockalign(b) => format!("--blockalign={}", fmt_size_arg(*b)),
            Set::Direct => "--direct".into(),
            Set::Buffered => "--buffered".into(),
            Set::Uncached => "--uncached".into(),
            Set::HugePages(h) => format!("--hugepages={}", named(&|| h.to_possible_value())),
            Set::Duration(d) => format!("--duration={}", fmt_duration(*d)),
            Set::IoLimit(n) => format!("--io-limit={n}"),
            Set::Passes(n) => format!("--passes={n}"),
            Set::Ios(n) => format!("--ios={n}"),
            Set::StartDelay(lo, hi) if lo == hi => format!("--start-delay={}", fmt_duration(*lo)),
            Set::StartDelay(lo, hi) => {
                format!("--start-delay={}-{}", fmt_duration(*lo), fmt_duration(*hi))
            }
            Set::Ramp(d) => format!("--ramp={}", fmt_duration(*d)),
            Set::Jobs(n) => format!("--jobs={n}"),
            Set::JobsShare => "--jobs-share".into(),
            Set::Steady(c) => format!("--steady={c}"),
            Set::SteadyDur(d) => format!("--steady-dur={}", fmt_duration(*d)),
            Set::SteadyRamp(d) => format!("--steady-ramp={}", fmt_duration(*d)),
            Set::LiveInterval(d) => format!("--live-interval={}", fmt_duration(*d)),
            Set::Engine(e) => format!("--engine={}", named(&|| e.to_possible_value())),
            Set::Iodepth(n) => format!("--iodepth={n}"),
            Set::NoRegister => "--no-register".into(),
            Set::Hipri => "--hipri".into(),
            Set::Sqpoll(None) => "--sqpoll".into(),
            Set::Sqpoll(Some(c)) => format!("--sqpoll={c}"),
            Set::CompleteMin(n) => format!("--complete-min={n}"),
            Set::Nowait => "--nowait".into(),
            Set::Rate(b) => format!("--rate={}", fmt_size_arg(*b)),
            Set::RateIops(n) => format!("--rate-iops={n}"),
            Set::RateMin(b) => format!("--rate-min={}", fmt_size_arg(*b)),
            Set::RateIopsMin(n) => format!("--rate-iops-min={n}"),
            Set::RateCycle(d) => format!("--rate-cycle={}", fmt_duration(*d)),
            Set::Thinktime(d) => format!("--thinktime={}", fmt_duration(*d)),
            Set::ThinktimeSpin(d) => format!("--thinktime-spin={}", fmt_duration(*d)),
            Set::ThinktimeBlocks(n) => format!("--thinktime-blocks={n}"),
            Set::ThinktimeOnIssue => "--thinktime-on-issue".into(),
            Set::RandomMap => "--random-map".into(),
            Set::LatencyTarget(d) => format!("--latency-target={}", fmt_duration(*d)),
            Set::LatencyWindow(d) => format!("--latency-window={}", fmt_duration(*d)),
            Set::LatencyPercentile(p) => format!("--latency-percentile={p}"),
            Set::LatencyRun => "--latency-run".into(),
            Set::Size(b) => format!("--size={}", fmt_size_arg(*b)),
            Set::Offset(b) => format!("--offset={}", fmt_size_arg(*b)),
            Set::Cpus(v) => format!("--cpus={v}"),
            Set::NoPin => "--no-pin".into(),
            Set::NumaNodes(n) => format!("--numa-nodes={}", crate::base::cpus::format_cpu_list(n)),
            Set::NumaMem(p) => format!("--numa-mem={p}"),
            Set::IoPrio(p) => format!("--ioprio={p}"),
            Set::CmdPrio(c) => format!("--cmdprio={c}"),
            Set::CmdPrioSplit(c) => format!("--cmdprio-bssplit={c}"),
            Set::Seed(n) => format!("--seed={n}"),
            Set::BufferCompress(p) => format!("--buffer-compress={p}"),
            Set::Dedupe(p) => format!("--dedupe={p}"),
            Set::Pattern(p) => format!("--pattern={}", p.text()),
            Set::FillDevice => "--fill-device".into(),
            Set::DedupeWorkingSet(p) => format!("--dedupe-working-set={p}"),
            Set::DedupeGlobal => "--dedupe-global".into(),
            Set::Verify => "--verify".into(),
            Set::IgnoreErrors(e) => format!("--ignore-errors={}", e.text()),
            Set::LogInterval(d) => format!("--log-interval={}", fmt_duration(*d)),
            Set::Create(b) => format!("--create={}", fmt_size_arg(*b)),
            Set::CreateLayout(l) => format!("--create-layout={}", l.name()),
            Set::FioLog(k, p) => format!("--fio-log={}={p}", crate::report::fio_log::kind_name(*k)),
            Set::FioLogFormat(l) => format!("--fio-log-format={l}"),
            Set::IologWrite(f) => format!("--iolog-write={f}"),
            Set::IologRead(f) => format!("--iolog-read={f}"),
        }
    }

    /// Sets it on `b`, as `run`'s parser would have set the word.
    fn apply(&self, b: RunBuilder) -> anyhow::Result<RunBuilder> {
        let too_big = |option: &str, n: u64| {
            anyhow::Error::from(crate::base::error::UsageError(format!(
                "invalid value '{n}' for '--{option}': too large"
            )))
        };
        Ok(match self {
            Set::Rw(rw) => b.rw(*rw),
            Set::Mix(p) => b.mix(*p)?,
            Set::Dist(d) => b.dist(d)?,
            Set::Skip(n) => b.skip(*n),
            Set::Zones(z) => b.zones(*z),
            Set::SeqRun(n) => b.seq_run(*n),
            Set::Sprandom(op, n) => b.sprandom(op.parse().unwrap_or(f64::NAN), *n),
            Set::OffsetIncrement(n) => b.offset_increment(*n),
            Set::Bs(n) => b.bs(*n)?,
            Set::Bssplit(s) => b.bssplit(s)?,
            Set::Blockalign(n) => b.blockalign(*n),
            Set::Direct => b.direct(),
            Set::Buffered => b.buffered(),
            Set::Uncached => b.uncached(),
            Set::HugePages(h) => b.hugepages(*h),
            Set::Duration(d) => b.duration(*d)?,
            Set::IoLimit(n) => b.io_limit(*n)?,
            Set::Passes(n) => b.passes(*n)?,
            Set::Ios(n) => b.ios(*n)?,
            Set::StartDelay(lo, hi) => b.start_delay(*lo, *hi)?,
            Set::Ramp(d) => b.ramp(*d),
            Set::Jobs(n) => b.jobs(*n)?,
            Set::JobsShare => b.jobs_share(),
            Set::Steady(c) => {
                b.steady(crate::analysis::steady::Criterion::parse(c).map_err(|e| {
                    crate::base::error::UsageError(format!(
                        "invalid value '{c}' for '--steady': {e}"
                    ))
                })?)
            }
            Set::SteadyDur(d) => b.steady_dur(*d)?,
            Set::SteadyRamp(d) => b.steady_ramp(*d),
            Set::LiveInterval(d) => b.live_interval(*d)?,
            Set::Engine(e) => b.engine(*e),
            Set::Iodepth(n) => b.iodepth(*n)?,
            Set::NoRegister => b.no_register(),
            Set::Hipri => b.hipri(),
            Set::Sqpoll(c) => b.sqpoll(
                c.map(|c| usize::try_from(c).map_err(|_| too_big("sqpoll", c)))
                    .transpose()?,
            ),
            Set::CompleteMin(n) => {
                b.complete_min(u32::try_from(*n).map_err(|_| too_big("complete-min", *n))?)?
            }
            Set::Nowait => b.nowait(),
            Set::NumaNodes(n) => b.numa_nodes(n.clone()),
            Set::NumaMem(p) => b.numa_mem(p.clone()),
            Set::IoPrio(p) => b.ioprio(*p),
            Set::CmdPrio(c) => b.cmdprio(*c),
            Set::CmdPrioSplit(c) => b.cmdprio_bssplit(c.clone()),
            Set::Rate(n) => b.rate(*n)?,
            Set::RateIops(n) => b.rate_iops(*n)?,
            Set::RateMin(n) => b.rate_min(*n)?,
            Set::RateIopsMin(n) => b.rate_iops_min(*n)?,
            Set::RateCycle(d) => b.rate_cycle(*d)?,
            Set::Thinktime(d) => b.thinktime(*d)?,
            Set::ThinktimeSpin(d) => b.thinktime_spin(*d),
            Set::ThinktimeBlocks(n) => b.thinktime_blocks(*n),
            Set::ThinktimeOnIssue => b.thinktime_on_issue(),
            Set::RandomMap => b.random_map(),
            Set::LatencyTarget(d) => b.latency_target(*d)?,
            Set::LatencyWindow(d) => b.latency_window(*d),
            Set::LatencyPercentile(p) => b.latency_percentile(p)?,
            Set::LatencyRun => b.latency_run(),
            Set::Size(n) => b.size(*n),
            Set::Offset(n) => b.offset(*n),
            Set::Cpus(v) => {
                let cpus = crate::base::cpus::parse_cpu_list(v).map_err(|e| {
                    crate::base::error::UsageError(format!("invalid value '{v}' for '--cpus': {e}"))
                })?;
                b.cpus(cpus)?
            }
            Set::NoPin => b.no_pin(),
            Set::Seed(n) => b.seed(*n),
            Set::BufferCompress(p) => b.buffer_compress(*p)?,
            Set::Dedupe(p) => b.dedupe(*p)?,
            Set::Pattern(p) => b.pattern(p.clone()),
            Set::FillDevice => b.fill_device(),
            Set::DedupeWorkingSet(p) => b.dedupe_working_set(*p)?,
            Set::DedupeGlobal => b.dedupe_global(),
            Set::Verify => b.verify(),
            Set::IgnoreErrors(e) => b.ignore_errors(e.clone()),
            Set::LogInterval(d) => b.log_interval(*d)?,
            Set::Create(n) => b.create(*n),
            Set::CreateLayout(l) => b.create_layout(*l),
            Set::FioLog(k, p) => b.fio_log(*k, PathBuf::from(p)),
            Set::FioLogFormat(l) => b.fio_log_format(l)?,
            Set::IologWrite(f) => b.iolog_write(PathBuf::from(f)),
            Set::IologRead(f) => b.iolog_read(PathBuf::from(f)),
        })
    }
}

/// The words a user would type for `sets`.
fn words(sets: &[Set]) -> Vec<String> {
    sets.iter().map(Set::word).collect()
}

/// fio's measurement knobs that change what fio records, never what the
/// I/O does: each, when on, is said in a `#` line (what it changes in
/// fio, and why not our figures); `(option, refusal)` for a value that
/// is not fio's or that would change the I/O.
const HARMLESS: &[(&str, &str)] = &[
    ("gtod_reduce", "gtod_reduce: fio then reads the clock for few I/Os and keeps no latency or bandwidth samples (no percentiles); stripebench reads its clock at each I/O's submission and completion always, so its throughput is the same and its latencies are still reported"),
    ("disable_lat", "disable_lat: fio keeps no total latency statistics (submission to completion); stripebench times every I/O always: the throughput is the same, and its latencies are reported"),
    ("disable_clat", "disable_clat: fio keeps no completion latency statistics or percentiles; stripebench times every I/O always: the throughput is the same, and its latencies are reported"),
    ("disable_slat", "disable_slat: fio keeps no submission latency statistics; stripebench's per-I/O clock reads are its own and always on: no figure changes"),
    ("disable_bw_measurement", "disable_bw_measurement: fio keeps no per-interval bandwidth samples; stripebench's interval figures are its own and always on: no figure changes"),
    ("group_reporting", "group_reporting: fio sums a group's jobs into one report; stripebench reports the run as a whole and per target anyway: no figure changes"),
    ("thread", "thread: fio runs its jobs as threads of one process, not forked processes; stripebench's workers are threads always, and neither changes the I/O"),
];

/// Whether the job asks for fio's SPRandom (sprandom=1, or bare).
fn sprandom_on(job: &Job) -> bool {
    job.get("sprandom")
        .is_some_and(|o| matches!(o.value.as_deref(), None | Some("1")))
}

/// The `#` lines of the job's measurement knobs ([`HARMLESS`], `threads`,
/// `name`, `random_generator`), or the option refused and why.
fn harmless(job: &Job) -> Result<Vec<String>, (&Opt, String)> {
    let mut said = Vec::new();
    for (key, note) in HARMLESS {
        let Some(o) = job.get(key) else { continue };
        match o.value.as_deref() {
            None | Some("1") => said.push(note.to_string()),
            Some("0") => {}
            Some(_) => return Err((o, "takes 0 or 1".into())),
        }
    }
    if let Some(o) = job.get("threads") {
        if o.value.as_deref().is_none_or(|v| v.parse::<u64>().is_err()) {
            return Err((o, "is not a whole number".into()));
        }
        said.push("threads: an option of fio's tiobench profile (profiles/tiobench.c), which a job not run with --profile=tiobench does not use: fio ignores it here, and so does stripebench".into());
    }
    // `name=` in a section: fio's name for the job in its report.
    if let Some(o) = job.opts.iter().rev().find(|o| o.key == "name") {
        said.push(format!("name={}: fio's name for the job in its report; stripebench's report names the targets, and the line above names the section", show_text(o.value.as_deref().unwrap_or(""))));
    }
    if let Some(o) = job.get("random_generator") {
        match o.value.as_deref() {
            Some("tausworthe" | "tausworthe64") if sprandom_on(job) => return Err((o, "with sprandom=1: fio refuses it (\"sprandom requires random_generator=lfsr\"): drop it".into())),
            Some("tausworthe" | "tausworthe64") => said.push(format!("random_generator={}: the generator fio draws its uniform random offsets with; stripebench draws them uniform with its own: which generator draws them does not change the figure", o.value.as_deref().unwrap_or(""))),
            // fio's sprandom draws its new blocks from the LFSR.
            Some("lfsr") if sprandom_on(job) => said.push("random_generator=lfsr: sprandom's new blocks, each once, in the LFSR's order; stripebench's --sprandom draws each once too, in its own order".into()),
            // Honoured by the random offsets' step (--random-map).
            Some("lfsr") => {}
            _ => return Err((o, "is not one of fio's generators (tausworthe, lfsr, tausworthe64)".into())),
        }
    }
    Ok(said)
}

/// fio's `randrepeat=1`: the same random offsets every run, fio's seed
/// its default randseed (0x89). stripebench's `--seed` does the same with
/// its own generator: the seed, and the `#` line that says so.
fn repeatable_seed() -> (u64, String) {
    (0x89, "randrepeat=1: fio draws the same random offsets every run (its randseed, 0x89, by default); stripebench does the same with --seed=137 (its own generator, so not fio's offsets): uniform either way, so the figure is the same".into())
}

/// The engines fio runs one I/O at a time whatever iodepth says, run as
/// stripebench's sync engine: `Some(Ok(the # line))`, `Some(Err(why
/// refused))`, or `None` for an engine not of them (the match above has
/// the others).
fn one_at_a_time(engine: &str, direct: bool, depth: u64) -> Option<Result<String, String>> {
    let deep = if depth > 1 {
        format!(" (iodepth={depth} is 1 in effect)")
    } else {
        String::new()
    };
    Some(match (engine, direct) {
        // Linux does buffered AIO inside io_submit (fio's HOWTO: queued
        // only with direct=1).
        ("libaio", false) => Ok(format!("ioengine=libaio with direct=0: Linux performs buffered AIO inside io_submit, one at a time{deep} (fio's HOWTO: libaio queues only with direct=1); run as stripebench's sync engine, buffered")),
        // glibc's aio_read hands each file descriptor's requests to one
        // helper thread, in turn (rt/aio_misc.c: a request on a
        // descriptor already worked on is queued behind it).
        ("posixaio", _) => Ok(format!("ioengine=posixaio: glibc's aio_read/aio_write run a file descriptor's requests one at a time in a helper thread{deep}; run as stripebench's sync engine ({}), without the hand-off to glibc's thread", if direct { "O_DIRECT" } else { "buffered" })),
        ("vsync", _) if depth > 1 => Err(format!("with iodepth={depth}: fio's vsync gathers adjacent I/Os of its queue into one readv/writev, which stripebench does not: give iodepth=1, or ioengine=psync")),
        ("vsync", _) => Ok("ioengine=vsync at iodepth=1: one readv/writev per I/O, as stripebench's sync engine's one pread/pwrite".into()),
        ("mmap", true) => Err("with direct=1: fio's mmap engine copies through the mapping, then msyncs and drops each block's pages, which is not O_DIRECT and stripebench has no equivalent of: give direct=0, or ioengine=psync".into()),
        ("mmap", false) => Ok(format!("ioengine=mmap: fio maps the file and memcpys each block (reads fault pages in through the page cache, writes dirty mapped pages written back later, no system call per I/O){deep}; stripebench runs it as buffered pread/pwrite through the same page cache: the fault and copy costs, and fio's madvise hint, are not ours")),
        _ => return None,
    })
}

/// fio's `:`-separated file list, `\:` a colon in a name.
fn list(v: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                if let Some(last) = out.last_mut() {
                    last.push(':');
                }
            }
            ':' => out.push(String::new()),
            c => {
                if let Some(last) = out.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    out
}

/// A size as fio reads it: a whole number with an optional suffix. Under
/// fio's default kb_base=1024, k, kb, m, mb, ... are binary (4k = 4096)
/// and kib, mib, ... decimal (4kib = 4000): fio's compatibility mode,
/// kept as fio means it. kb_base=1000 swaps them.
fn fio_size(v: &str, kb_base: u64) -> Result<u64, String> {
    let digits = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, suffix) = v.split_at(digits);
    let n: u64 = num.parse().map_err(|_| {
        "is not a size stripebench reads: give a whole number with k, m, g or t, such as 4k"
            .to_string()
    })?;
    if suffix.starts_with(['+', '-', '*', '/', '%', '^']) {
        // fio evaluates arithmetic only in parentheses (or beside its `$`
        // words): it reads `5*1024*1024` as 5.
        return Err(format!(
            "is arithmetic without parentheses, which fio reads as {n}: write ({v}) for fio's arithmetic"
        ));
    }
    let suffix = suffix.to_ascii_lowercase();
    let (power, si) = match suffix.as_str() {
        "" => (0, false),
        "k" | "kb" => (1, false),
        "m" | "mb" => (2, false),
        "g" | "gb" => (3, false),
        "t" | "tb" => (4, false),
        "p" | "pb" => (5, false),
        "kib" => (1, true),
        "mib" => (2, true),
        "gib" => (3, true),
        "tib" => (4, true),
        "pib" => (5, true),
        _ => {
            return Err(
                "has a suffix stripebench does not read: give a whole number with k, m, g or t, such as 4k"
                    .into(),
            )
        }
    };
    // kb_base=1024: the short suffixes binary, the IEC ones decimal.
    let base: u64 = match (kb_base, si) {
        (1024, false) | (1000, true) => 1024,
        _ => 1000,
    };
    base.checked_pow(power)
        .and_then(|m| n.checked_mul(m))
        .ok_or_else(|| "is too large".to_string())
}

/// A time as fio reads it: a whole number, seconds unless a unit follows.
fn fio_time(v: &str) -> Result<Duration, String> {
    let digits = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(digits);
    let n: u64 = num.parse().map_err(|_| {
        "is not a time stripebench reads: give whole seconds, or a number with us, ms, s, m, h or d"
            .to_string()
    })?;
    let micros: u64 = match unit.to_ascii_lowercase().as_str() {
        "us" | "usec" => 1,
        "ms" | "msec" => 1_000,
        "" | "s" | "sec" => 1_000_000,
        "m" | "min" => 60_000_000,
        "h" => 3_600_000_000,
        "d" => 86_400_000_000,
        _ => return Err("has a unit stripebench does not read: give us, ms, s, m, h or d".into()),
    };
    n.checked_mul(micros)
        .filter(|&us| us <= 366 * 86_400_000_000)
        .map(Duration::from_micros)
        .ok_or_else(|| "is longer than a year".to_string())
}

/// A duration as stripebench reads it back exactly.
fn fmt_duration(d: Duration) -> String {
    let us = d.as_micros();
    if us % 1_000_000 == 0 {
        format!("{}s", us / 1_000_000)
    } else if us % 1_000 == 0 {
        format!("{}ms", us / 1_000)
    } else {
        format!("{us}us")
    }
}

/// Jobs that run at once (no stonewall between them), as one run.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Group {
    sections: Vec<String>,
    args: Vec<Set>,
    targets: Vec<String>,
    notes: Vec<String>,
    /// A verified write whose read-back (fio's do_verify=1) is the group
    /// after it.
    then_read_back: bool,
    /// The read-back of the group before it: that group's region read
    /// once and every block checked.
    is_read_back: bool,
    /// It runs at once with the run before it: jobs of one stonewall
    /// group that are different workloads, each a run.
    with_previous: bool,
    /// The read-back of a verified sequential mix: it reads as many bytes
    /// as the mix wrote (fio's record of the mix's writes).
    reads_what_was_written: bool,
    /// The file has exitall=1: what this run's end stops.
    exitall: Option<crate::measure::together::Exitall>,
}

/// The file's groups, each one run.
fn groups(text: &str, shown: &str) -> Result<Vec<Group>, FioJobError> {
    groups_of(parse(text, shown)?, shown)
}

/// The groups of a file's sections (`shown` naming the file).
fn groups_of(sections: Vec<Section>, shown: &str) -> Result<Vec<Group>, FioJobError> {
    let jobs = jobs(sections);
    if jobs.is_empty() {
        return Err(FioJobError(format!(
            "fio job file {shown} has no job section, only [global]: fio would run nothing; add a [job] section"
        )));
    }
    if jobs.len() > MAX_JOBS {
        return Err(FioJobError(format!(
            "fio job file {shown} has {} job sections, more than stripebench takes from one file ({MAX_JOBS}): split it into files of fewer jobs",
            jobs.len()
        )));
    }
    // Each group's jobs, translated, with their cpus_allowed apart.
    let mut runs: Vec<Vec<(&Job, Translated, Option<String>)>> = Vec::new();
    // Each group's first job's number, as fio numbers its jobs (and their
    // numjobs clones) in the file's order: its logs' `.N`.
    let (mut firsts, mut next_job) = (Vec::new(), 1usize);
    let mut report_group = 0usize;
    for (i, job) in jobs.iter().enumerate() {
        let mut t = translate(job, shown)?;
        let on = |key: &str| {
            job.get(key)
                .is_some_and(|o| o.value.as_deref() != Some("0"))
        };
        if i > 0 && (on("stonewall") || on("new_group") || on("wait_for_previous")) {
            report_group += 1;
        }
        t.report_group = report_group;
        t.notes.splice(0..0, evaluated_notes(job));
        let cpus = t
            .args
            .iter()
            .position(|a| matches!(a, Set::Cpus(_)))
            .and_then(|p| match t.args.remove(p) {
                Set::Cpus(c) => Some(c),
                _ => None,
            });
        let stonewall = job
            .get("stonewall")
            .is_some_and(|o| o.value.as_deref() != Some("0"))
            || waits_for_the_group_before(job, runs.last(), shown)?;
        let clones = clones(&t);
        match runs.last_mut() {
            Some(g) if !(stonewall && i > 0) => g.push((job, t, cpus)),
            _ => {
                runs.push(vec![(job, t, cpus)]);
                firsts.push(next_job);
            }
        }
        next_job += clones;
    }
    if runs.len() > MAX_GROUPS {
        return Err(FioJobError(format!(
            "fio job file {shown} has {} stonewall groups, each a run of its own, more than stripebench runs from one file ({MAX_GROUPS}): split it into files of fewer groups",
            runs.len()
        )));
    }
    // fio's exitall=1 in any job is the whole file's (exitall_on_terminate).
    let exitall = runs.iter().flatten().any(|(_, t, _)| t.exitall);
    let mut out = Vec::new();
    for (g, first) in runs.iter().zip(firsts) {
        // The group's runs at once, then the read-back of each verified
        // write among them (at once too: after every write has ended).
        let mut backs: Vec<Group> = Vec::new();
        let mut number = first;
        for (k, part) in parts(g).into_iter().enumerate() {
            let mut p = numbered_logs(group(part, shown)?, number);
            number += part.iter().map(|(_, t, _)| clones(t)).sum::<usize>();
            p.with_previous = k > 0;
            if exitall {
                exits(&mut p, part, g.len() > 1);
            }
            if let Some(mut b) = runs_read_back(&p) {
                b.with_previous = !backs.is_empty();
                b.exitall = None;
                backs.push(b);
            }
            out.push(p);
        }
        out.extend(backs);
    }
    if out.len() > MAX_GROUPS {
        return Err(FioJobError(format!(
            "fio job file {shown} is {} runs (its stonewall groups and the read-back of each verified write), more than stripebench runs from one file ({MAX_GROUPS}): split it into files of fewer groups",
            out.len()
        )));
    }
    Ok(out)
}

/// Whether `job`'s `wait_for=NAME` makes it start after the group
/// before it: fio starts it when the job NAME ends, which is a stonewall
/// when NAME's jobs are all the group before it holds. A NAME that is
/// another's, or no job before it, is refused: stripebench starts a run
/// with the jobs before it or after all of them, not after some.
fn waits_for_the_group_before(
    job: &Job,
    group: Option<&Vec<(&Job, Translated, Option<String>)>>,
    shown: &str,
) -> Result<bool, FioJobError> {
    let Some(o) = job.get("wait_for") else {
        return Ok(false);
    };
    let name = o.value.as_deref().unwrap_or_default();
    let at = format!(
        "fio job file {shown} line {} [{}]: `wait_for={}`",
        o.line,
        show_text(&job.name),
        show_text(name)
    );
    let Some(g) = group else {
        return Err(FioJobError(format!(
            "{at}: no job before it has that name (fio waits only for a job defined before it): name a job above it"
        )));
    };
    if g.iter().all(|(j, _, _)| j.name == name) {
        return Ok(true);
    }
    let others: Vec<String> = g
        .iter()
        .filter(|(j, _, _)| j.name != name)
        .map(|(j, _, _)| format!("[{}]", show_text(&j.name)))
        .collect();
    Err(FioJobError(if g.iter().any(|(j, _, _)| j.name == name) {
        format!(
            "{at}: fio starts [{}] when that one job ends, while {} may still be running; stripebench starts a job with the jobs before it or after all of them: give `stonewall` for after all, or run this job with fio",
            show_text(&job.name),
            others.join(", ")
        )
    } else {
        format!(
            "{at}: no job of the group before it has that name (it holds {}): name one of them, or give `stonewall`",
            others.join(", ")
        )
    }))
}

/// A job's numjobs: how many jobs fio numbers it as.
fn clones(t: &Translated) -> usize {
    t.args
        .iter()
        .find_map(|a| match a {
            Set::Jobs(n) => Some(*n),
            _ => None,
        })
        .unwrap_or(1)
}

/// A stonewall group's jobs as the runs that go at once: each run the
/// jobs next to one another that are one workload (the same options, the
/// same read-back), on their own files. fio runs every job of the group
/// together; so do these runs, their windows opened at the same instant.
fn parts<'a, 'j>(
    jobs: &'a [(&'j Job, Translated, Option<String>)],
) -> Vec<&'a [(&'j Job, Translated, Option<String>)]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=jobs.len() {
        let alike = |a: &Translated, b: &Translated| a.args == b.args && a.read_back == b.read_back;
        // Alike jobs on a file one of them already names are two fio jobs
        // on one file, each over all of it: runs at once, not one run
        // naming the file twice.
        let shares_a_file = |i: usize| {
            jobs[start..i]
                .iter()
                .any(|(_, t, _)| t.targets.iter().any(|f| jobs[i].1.targets.contains(f)))
        };
        if i == jobs.len() || !alike(&jobs[start].1, &jobs[i].1) || shares_a_file(i) {
            out.push(&jobs[start..i]);
            start = i;
        }
    }
    out
}

/// The read-back of `g` when it is a verified write fio reads back in
/// the same job (do_verify=1): the same region, targets and engine, read
/// once from its start with no ramp and no time limit (`stripebench
/// verify`'s run), each block checked.
fn runs_read_back(g: &Group) -> Option<Group> {
    if !g.then_read_back {
        return None;
    }
    let mut args = Vec::new();
    let mut bounded = false;
    let mix = g.args.contains(&Set::Rw(RwMode::Rw));
    for a in &g.args {
        match a {
            Set::Rw(_) => args.push(Set::Rw(RwMode::Read)),
            // fio reads back what was written, once, whatever bounded
            // the write (runtime=, io_size=, loops=, number_ios=).
            Set::Duration(_) | Set::IoLimit(_) | Set::Passes(_) | Set::Ios(_) => {
                if !bounded {
                    bounded = true;
                    args.push(Set::Passes(1));
                }
            }
            Set::Ramp(_) => args.push(Set::Ramp(Duration::ZERO)),
            // The write's logs are the write's: the read-back would
            // write over them.
            Set::FioLog(..) | Set::FioLogFormat(_) | Set::IologWrite(_) => {}
            // fio's job reads back right after its write: no second delay.
            Set::StartDelay(..) => {}
            a => args.push(a.clone()),
        }
    }
    Some(Group {
        sections: g.sections.clone(),
        args,
        targets: g.targets.clone(),
        notes: vec![if mix {
            "the read-back of the mix before (fio's do_verify=1): as many bytes as the mix wrote, read from its region's start, where its writes went in order (the --passes=1 below becomes --io-limit of those bytes when the mix ends), every block checked (exit 1 if any is corrupt, misplaced, stale or lost)"
        } else {
            "the read-back of the write before (fio's do_verify=1): its region read once from the start, every block checked (exit 1 if any is corrupt, misplaced, stale or lost)"
        }
        .into()],
        then_read_back: false,
        is_read_back: true,
        with_previous: false,
        reads_what_was_written: mix,
        exitall: None,
    })
}

/// A group's `--fio-log` files numbered from its first job's number, as
/// fio numbers them, when that is not 1.
fn numbered_logs(mut g: Group, first: usize) -> Group {
    if first == 1 || !g.args.iter().any(|a| matches!(a, Set::FioLog(..))) {
        return g;
    }
    let word = format!("first={first}");
    match g.args.iter_mut().find_map(|a| match a {
        Set::FioLogFormat(l) => Some(l),
        _ => None,
    }) {
        Some(l) => *l = format!("{l},{word}"),
        None => g.args.push(Set::FioLogFormat(word)),
    }
    g
}

/// The `#` lines of the job's evaluated values, those it reads (an
/// option overridden by a later one is not read).
fn evaluated_notes(job: &Job) -> Vec<String> {
    job.opts
        .iter()
        .filter(|o| job.get(&o.key).is_some_and(|w| std::ptr::eq(w, *o)))
        .filter_map(|o| o.evaluated.clone())
        .collect()
}

/// A run of a file with exitall=1: what its end stops (the widest
/// exit_what of its jobs), its reporting group, and the `#` line that
/// says so (`at_once`: other runs start with it).
fn exits(p: &mut Group, part: &[(&Job, Translated, Option<String>)], at_once: bool) {
    use crate::measure::together::{ExitWhat, Exitall};
    let what = part
        .iter()
        .map(|(_, t, _)| t.exit_what)
        .max()
        .unwrap_or(ExitWhat::Group);
    p.exitall = Some(Exitall {
        what,
        group: part[0].1.report_group,
    });
    let stops = match what {
        ExitWhat::Group if at_once => {
            "the runs at once with it of its reporting group (new_group) close their windows then"
        }
        ExitWhat::Group => "nothing else runs with it, so it stops nothing",
        ExitWhat::Stonewall if at_once => "the runs at once with it close their windows then",
        ExitWhat::Stonewall => "nothing else runs with it, so it stops nothing",
        ExitWhat::All => {
            "the runs at once with it close their windows then, and the runs after it do not start"
        }
    };
    p.notes.push(format!(
        "exitall=1, exit_what={}: when this run ends, {stops} (their window.ended_by \"exitall\"), as fio stops its other jobs; a run's own workers (numjobs) each still run to their own end, where fio stops a job's clones with the first that ends",
        what.name()
    ));
}

/// Jobs that run at once as one run: one workload on different files
/// ([`parts`] makes them alike).
/// Their cpus_allowed, one CPU per one-worker job, become one --cpus list
/// in the jobs' order (each worker pinned to its job's CPU, as
/// `--print-fio` writes a run); else they must be the same.
fn group(jobs: &[(&Job, Translated, Option<String>)], shown: &str) -> Result<Group, FioJobError> {
    let (first, t0, _) = &jobs[0];
    let mut g = Group {
        then_read_back: t0.read_back,
        is_read_back: false,
        with_previous: false,
        reads_what_was_written: false,
        exitall: None,
        sections: jobs.iter().map(|(j, _, _)| j.name.clone()).collect(),
        args: t0.args.clone(),
        targets: jobs
            .iter()
            .flat_map(|(_, t, _)| t.targets.clone())
            .collect(),
        notes: Vec::new(),
    };
    for n in jobs.iter().flat_map(|(_, t, _)| &t.notes) {
        if !g.notes.contains(n) {
            g.notes.push(n.clone());
        }
    }
    let cpus: Vec<&Option<String>> = jobs.iter().map(|(_, _, c)| c).collect();
    if cpus.iter().all(|c| *c == cpus[0]) {
        if let Some(c) = cpus[0] {
            g.args.push(Set::Cpus(c.clone()));
        }
        return Ok(g);
    }
    let one_each = jobs.iter().all(|(_, t, c)| {
        t.targets.len() == 1
            && !t.args.iter().any(|a| matches!(a, Set::Jobs(_)))
            && c.as_deref()
                .is_some_and(|c| c.bytes().all(|b| b.is_ascii_digit()))
    });
    let list: Vec<&str> = cpus.iter().filter_map(|c| c.as_deref()).collect();
    let distinct = list.iter().enumerate().all(|(i, c)| !list[..i].contains(c));
    if !(one_each && distinct) {
        return Err(FioJobError(format!(
            "fio job file {shown}: [{}] and the jobs that run with it have different cpus_allowed; stripebench pins the workers of one run round-robin over one list: give each job one CPU of its own and one file, or the same cpus_allowed",
            show_text(&first.name)
        )));
    }
    g.args.push(Set::Cpus(list.join(",")));
    Ok(g)
}

/// The output options (a path each) that every run of several writes.
fn output_flags() -> Vec<String> {
    crate::report::FORMATS
        .iter()
        .map(|f| f.flag().to_string())
        .chain(["live".to_string(), "metrics".to_string()])
        .collect()
}

/// The command line for run `i` of `n`: each output path with the run's
/// number before its extension (`r.json` → `r.2.json`); `-` (stdout)
/// refused, where the documents would run together.
fn numbered_outputs(tail: &[OsString], i: usize, n: usize) -> Result<Vec<OsString>, FioJobError> {
    let flags = output_flags();
    let number = |flag: &str, p: &OsString| -> Result<OsString, FioJobError> {
        if p == "-" {
            return Err(FioJobError(format!(
                "--{flag} -: the job file is {n} runs (stonewall), whose documents would run together on stdout: give a path, which each run numbers (r.json: r.1.json, r.2.json, ...)"
            )));
        }
        numberable(flag, Path::new(p), n)?;
        Ok(numbered(Path::new(p), i).into_os_string())
    };
    let mut out = Vec::with_capacity(tail.len());
    let mut it = tail.iter();
    while let Some(a) = it.next() {
        let s = a.to_string_lossy();
        if s == "--" {
            out.push(a.clone());
            out.extend(it.cloned());
            break;
        }
        let Some(long) = s.strip_prefix("--") else {
            out.push(a.clone());
            continue;
        };
        match long.split_once('=') {
            Some((f, v)) if flags.iter().any(|x| x == f) => {
                let mut w = OsString::from(format!("--{f}="));
                w.push(number(f, &OsString::from(v))?);
                out.push(w);
            }
            None if flags.iter().any(|x| x == long) => {
                out.push(a.clone());
                if let Some(p) = it.next() {
                    out.push(number(long, p)?);
                }
            }
            _ => out.push(a.clone()),
        }
    }
    Ok(out)
}

/// The sweep parameter that the groups' differing options are, with each
/// group's value, or why there is none.
fn sweep_param(of: &[Group]) -> Result<(String, Vec<String>, Vec<Set>), String> {
    let groups: Vec<Vec<String>> = of.iter().map(|g| words(&g.args)).collect();
    let key = |a: &str| a.split('=').next().unwrap_or(a).to_string();
    let value = |g: &Vec<String>, k: &str| -> Option<String> {
        g.iter().find(|a| key(a) == k).map(|a| {
            a.split_once('=')
                .map_or(String::new(), |(_, v)| v.to_string())
        })
    };
    let mut keys: Vec<String> = Vec::new();
    for g in &groups {
        for a in g {
            if !keys.contains(&key(a)) {
                keys.push(key(a));
            }
        }
    }
    // How a missing file is laid out is the first group's: fio's first
    // job lays it out, and the later ones find it there (ssd-test.fio's
    // reads, then writes). The sweep makes it once, so.
    let differ: Vec<String> = keys
        .iter()
        .filter(|k| k.as_str() != "--create-layout")
        .filter(|k| groups.iter().any(|g| value(g, k) != value(&groups[0], k)))
        .cloned()
        .collect();
    let named = |d: &[String]| d.join(", ");
    let is = |set: &[&str]| !differ.is_empty() && differ.iter().all(|d| set.contains(&d.as_str()));
    // The parameters that are one option, and its value when not given.
    let single = [
        ("rw", "--rw", ""),
        ("bs", "--bs", ""),
        ("jobs", "--jobs", "1"),
        ("iodepth", "--iodepth", "1"),
    ];
    let (name, values): (&str, Vec<String>) = if let Some((name, flag, default)) =
        single.iter().find(|(_, flag, _)| is(&[flag]))
    {
        (
            name,
            groups
                .iter()
                .map(|g| value(g, flag).unwrap_or(default.to_string()))
                .collect(),
        )
    } else if is(&["--direct", "--buffered"]) {
        (
            "mode",
            groups
                .iter()
                .map(|g| {
                    if value(g, "--direct").is_some() {
                        "direct"
                    } else {
                        "buffered"
                    }
                    .to_string()
                })
                .collect(),
        )
    } else if is(&["--rate", "--rate-iops"]) {
        (
            "rate",
            groups
                .iter()
                .map(|g| match (value(g, "--rate"), value(g, "--rate-iops")) {
                    (Some(r), _) => format!("{r}/s"),
                    (None, Some(n)) => format!("{n}iops"),
                    (None, None) => "max".to_string(),
                })
                .collect(),
        )
    } else if differ.is_empty() {
        return Err("its groups are one workload: a sweep needs them to differ in one parameter; run it with run --fio-job".into());
    } else {
        return Err(format!(
            "its groups differ in {}, not in one parameter a sweep takes (rw, bs, jobs, iodepth, direct/buffered, rate): run them one after another with run --fio-job",
            named(&differ)
        ));
    };
    let common: Vec<Set> = of[0]
        .args
        .iter()
        .filter(|a| !differ.contains(&key(&a.word())))
        .cloned()
        .collect();
    Ok((name.to_string(), values, common))
}

/// `sweep --fio-job`: the groups as the points of one --param.
fn sweep(groups: &[Group], shown: &str, tail: &[OsString]) -> Result<SweepPlan, FioJobError> {
    if let Some(g) = groups.iter().find(|g| g.then_read_back) {
        return Err(FioJobError(format!(
            "sweep --fio-job {shown}: [{}] writes and reads its blocks back (verify= with do_verify=1), two runs that are no one point of a sweep: add do_verify=0 (and check with `stripebench verify` after), or run it with run --fio-job",
            show_text(&g.sections[0])
        )));
    }
    if let Some(g) = groups.iter().find(|g| g.with_previous) {
        return Err(FioJobError(format!(
            "sweep --fio-job {shown}: [{}] runs at once with the job before it but is a different workload; a sweep's point is one workload: add `stonewall` to it, or run the file with run --fio-job",
            show_text(&g.sections[0])
        )));
    }
    if groups.len() < 2 {
        return Err(FioJobError(format!(
            "sweep --fio-job {shown}: the file is one group of jobs (no stonewall between sections): a sweep needs groups that differ in one parameter; run it with run --fio-job"
        )));
    }
    let (name, values, common) = sweep_param(groups)
        .map_err(|why| FioJobError(format!("sweep --fio-job {shown}: {why}")))?;
    if groups.iter().any(|g| g.targets != groups[0].targets)
        && !super::help::names_targets("sweep", tail).unwrap_or(true)
    {
        return Err(FioJobError(format!(
            "sweep --fio-job {shown}: the groups name different files; a sweep drives the same targets at every point: give the targets on the command line"
        )));
    }
    let mut notes: Vec<String> = Vec::new();
    for n in groups.iter().flat_map(|g| &g.notes) {
        if !notes.contains(n) {
            notes.push(n.clone());
        }
    }
    let head = format!(
        "# {shown}: {} groups, one point each of --param {name}: {}",
        groups.len(),
        groups
            .iter()
            .map(|g| sections_shown(&g.sections))
            .collect::<Vec<_>>()
            .join(" ")
    );
    Ok(SweepPlan {
        head,
        notes,
        common,
        param: crate::document::sweep::Param { name, values },
        targets: groups[0].targets.clone(),
        typed: tail.to_vec(),
        shown: shown.to_string(),
    })
}

/// `sweep --fio-job`: the groups' common options, typed, and the one
/// parameter they differ in, as the sweep's `--param`.
#[derive(Debug, Clone)]
pub struct SweepPlan {
    head: String,
    notes: Vec<String>,
    common: Vec<Set>,
    param: crate::document::sweep::Param,
    targets: Vec<String>,
    /// What was typed after `sweep`, without `--fio-job FILE`: clap parses
    /// it once.
    pub typed: Vec<OsString>,
    shown: String,
}

impl SweepPlan {
    /// The sweep: what the command line gave (`typed`, `given` as for
    /// [`RunGroup::configure`]) with the job's common options where it
    /// gave none of them, the job's parameter first unless a `--param` of
    /// the same name was typed, and targets typed replacing `filename=`;
    /// and the lines printed before it.
    pub fn configure(
        &self,
        typed: &crate::cli::SweepArgs,
        given: &[String],
    ) -> Result<(crate::cli::SweepArgs, String), FioJobError> {
        let kept: Vec<&Set> = self
            .common
            .iter()
            .filter(|s| !command_line_gives("sweep", s.id(), given))
            .filter(|s| typed.run.targets.is_empty() || !s.lays_out())
            .collect();
        let mut b = RunBuilder::from_args(typed.run.clone());
        for s in &kept {
            b = s
                .apply(b)
                .map_err(|e| FioJobError(format!("{}: {e}", self.shown)))?;
        }
        let mut args = typed.clone();
        args.run = b.args();
        let param_word = format!(
            "--param={}={}",
            self.param.name,
            self.param.values.join(",")
        );
        let param_kept = !typed.params.iter().any(|p| p.name == self.param.name);
        if param_kept {
            // Checked as sweep's parser checks the value typed.
            let p = super::sweep::parse_param(&param_word["--param=".len()..])
                .map_err(|e| FioJobError(format!("sweep --fio-job {}: {e}", self.shown)))?;
            args.params.insert(0, p);
        }
        let file_targets = typed.run.targets.is_empty();
        if file_targets {
            args.run.targets = self.targets.iter().map(PathBuf::from).collect();
        }
        let mut line: Vec<OsString> = vec!["sweep".into()];
        line.extend(kept.iter().flat_map(|s| s.words()).map(OsString::from));
        if param_kept {
            line.push(param_word.into());
        }
        if file_targets {
            line.extend(self.targets.iter().map(OsString::from));
        }
        line.extend(self.typed.iter().cloned());
        Ok((args, said(&self.head, &self.notes, &line)))
    }
}

fn sections_shown(s: &[String]) -> String {
    s.iter()
        .map(|n| format!("[{}]", show_text(n)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The lines printed before a command runs: the `#` lines, then the
/// command (`line`, after the program's name) as a shell line. Display:
/// nothing parses it.
fn said(head: &str, notes: &[String], line: &[OsString]) -> String {
    let mut out = format!("{head}\n");
    for n in notes {
        out.push_str(&format!("# {n}\n"));
    }
    out.push_str(&format!(
        "stripebench {}\n",
        crate::base::invocation::shell_line(line)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Result<Translated, FioJobError> {
        let jobs = jobs(parse(text, "j.fio")?);
        translate(&jobs[0], "j.fio")
    }

    #[test]
    fn allow_file_create_0_makes_no_file_and_changes_nothing_without_filesize() {
        let t = one("[j]\nfilename=f\nfilesize=1m\nallow_file_create=0\n").unwrap();
        assert!(
            !t.args.iter().any(|a| matches!(a, Set::Create(_))),
            "{:?}",
            t.args
        );
        assert!(t.args.contains(&Set::Size(1 << 20)), "{:?}", t.args);
        assert!(
            t.notes.iter().any(|n| n.contains("no --create")),
            "{:?}",
            t.notes
        );
        let t = one("[j]\nfilename=f\nallow_file_create=0\n").unwrap();
        assert!(
            t.notes.iter().any(|n| n.contains("changes nothing")),
            "{:?}",
            t.notes
        );
        let e = one("[j]\nfilename=f\nallow_file_create=2\n").unwrap_err();
        assert!(e.0.contains("takes 0 or 1"), "{e}");
    }

    #[test]
    fn section_skips_the_lines_of_the_sections_not_named_unread() {
        let (text, names) = skip_sections(
            "[global]\nbs=4k\n[a]\nrw=${NOT_SET}\n[b] ; b\nrw=read\n",
            &["b".to_string()],
        );
        assert_eq!(names, ["global", "a", "b"]);
        // Blank where [a] was: the lines after keep their numbers.
        assert_eq!(text, "[global]\nbs=4k\n\n\n[b] ; b\nrw=read\n");
        let (all, _) = skip_sections("[a]\nrw=read\n", &[]);
        assert_eq!(all, "[a]\nrw=read\n");
    }

    fn args(text: &str) -> Vec<String> {
        words(&one(text).unwrap_or_else(|e| panic!("{e}")).args)
    }

    fn refused(text: &str) -> String {
        let e = match groups(text, "j.fio") {
            Err(e) => e.0,
            Ok(g) => panic!("not refused: {g:?}"),
        };
        assert!(!e.contains('\n'), "{e}");
        e
    }

    // Issue 41: examples/latency-profile.fio was refused at
    // latency_target= (no search) and then at random_generator=lfsr;
    // fio's search is run's --latency-target family (microseconds without
    // a unit), and the LFSR's every-block-once order is --random-map.
    #[test]
    fn latency_profile_s_search_and_lfsr_are_run_s_options() {
        let a = args("[global]\nbs=4k\nrw=randread\nrandom_generator=lfsr\ndirect=1\nioengine=libaio\niodepth=128\nlatency_target=500000\nlatency_window=5000000\nlatency_percentile=99.9\n[device]\nfilename=/dev/sda\n");
        for w in [
            "--iodepth=128",
            "--latency-target=500ms",
            "--latency-window=5s",
            "--latency-percentile=99.9",
            "--random-map",
        ] {
            assert!(a.iter().any(|x| x == w), "{w} in {a:?}");
        }
        let a = args("[j]\nrw=randread\nioengine=io_uring\niodepth=4\nlatency_target=2ms\nlatency_window=1s\nlatency_run=1\n");
        assert!(a.iter().any(|x| x == "--latency-run"), "{a:?}");
        assert!(
            !a.iter().any(|x| x.starts_with("--latency-percentile")),
            "fio's 100 is run's default: {a:?}"
        );
        // fio's default window of 0 judges each reap: refused by name.
        assert!(
            refused("[j]\nrw=randread\nlatency_target=500\n").contains("without latency_window")
        );
        for bad in ["0", "100.5", "x"] {
            let e = refused(&format!("[j]\nrw=randread\nlatency_target=500\nlatency_window=1s\nlatency_percentile={bad}\n"));
            assert!(e.contains(&format!("latency_percentile={bad}")), "{e}");
        }
        // A sequential pattern draws no random offset: said, not refused.
        assert!(!args("[j]\nrw=read\nrandom_generator=lfsr\n")
            .iter()
            .any(|x| x == "--random-map"));
    }

    // Issue 41: examples/exitwhat.fio's thinktime=2000 was refused as
    // unknown; fio's family (microseconds without a unit) is run's
    // --thinktime and its companions, and what is not is refused by name.
    #[test]
    fn fio_s_thinktime_is_run_s_thinktime() {
        let t = one("[j]\nthinktime=2000\nthinktime_spin=500\nthinktime_blocks=4\nthinktime_blocks_type=issue\n").unwrap();
        let a = words(&t.args);
        for w in [
            "--thinktime=2ms",
            "--thinktime-spin=500us",
            "--thinktime-blocks=4",
            "--thinktime-on-issue",
        ] {
            assert!(a.contains(&w.to_string()), "{w}: {a:?}");
        }
        assert!(
            t.notes.iter().any(|n| n.contains("include the pauses")),
            "{:?}",
            t.notes
        );
        // The command line's year holds for the job's pause too (a hostile
        // review found thinktime=18446744073709551615 printed and run).
        let e = refused("[j]\nthinktime=18446744073709551615\n");
        assert!(e.contains("is longer than a year"), "{e}");
        let a = args("[j]\nthinktime=0\nthinktime_blocks=3\n");
        assert!(!a.iter().any(|w| w.starts_with("--thinktime")), "{a:?}");
        for (text, named) in [
            (
                "[j]\nthinktime=10\nthinktime_iotime=1s\n",
                "thinktime_iotime=1s",
            ),
            (
                "[j]\nthinktime=10\nthinktime_spin=20\n",
                "thinktime_spin=20",
            ),
            ("[j]\nthinktime=10\nrate=1m\n", "thinktime=10"),
            (
                "[j]\nthinktime=10\nthinktime_blocks_type=x\n",
                "thinktime_blocks_type=x",
            ),
        ] {
            let e = refused(text);
            assert!(e.contains(&format!("`{named}`")), "{text:?}: {e}");
        }
    }

    // Issue 41: examples/enospc-pressure.fio's punch_hole job
    // (rw=randtrim) was refused: trims are --rw trim/randtrim, a trim
    // job's rate is the trims' (third) value, trimwrite is refused by name.
    #[test]
    fn fio_s_trims_are_rw_trim_and_randtrim_with_the_trims_rate() {
        let a = args("[j]\nrw=randtrim\nbs=4k\n");
        assert!(a.contains(&"--rw=randtrim".to_string()), "{a:?}");
        let a = args("[j]\nrw=trim\nrate=1m,2m,3m\n");
        assert!(a.contains(&"--rw=trim".to_string()), "{a:?}");
        assert!(a.contains(&"--rate=3m".to_string()), "{a:?}");
        let t = one("[j]\nrw=randtrim\n").unwrap();
        assert!(
            t.notes.iter().any(|n| n.contains("ENOTTY")),
            "{:?}",
            t.notes
        );
        let e = one("[j]\nrw=trimwrite\n").unwrap_err().to_string();
        assert!(e.contains("trims and writes the same blocks"), "{e}");
    }

    // Issue 41: enospc-pressure.fio's fallocate=none, create_on_open=1
    // and filesize= with a larger size= were refused. fio lays out a file
    // a job only writes by fallocate= alone (none: nothing), one a job
    // reads in full; create_on_open lays out nothing; size= above the
    // file's filesize= is capped to it.
    #[test]
    fn fio_s_fallocate_and_create_on_open_are_the_created_file_s_layout() {
        let a = args("[j]\nrw=randwrite\nfilename=f\nfilesize=1m\nfallocate=none\n");
        assert!(a.contains(&"--create-layout=sparse".to_string()), "{a:?}");
        let a = args("[j]\nrw=write\nfilename=f\nfilesize=1m\nfallocate=posix\n");
        assert!(a.contains(&"--create-layout=allocate".to_string()), "{a:?}");
        // A job that reads: fio writes every byte after preallocating.
        let a = args("[j]\nrw=randrw\nfilename=f\nfilesize=1m\nfallocate=none\n");
        assert!(!a.iter().any(|w| w.starts_with("--create-layout")), "{a:?}");
        let a = args("[j]\nrw=randrw\nfilename=f\nfilesize=1m\ncreate_on_open=1\n");
        assert!(a.contains(&"--create-layout=sparse".to_string()), "{a:?}");
        // No file made: nothing to lay out.
        let a = args("[j]\nrw=write\nfilename=f\nfallocate=none\n");
        assert!(!a.iter().any(|w| w.starts_with("--create-layout")), "{a:?}");
        let e = one("[j]\nrw=write\nfilename=f\nfilesize=1m\nfallocate=sometimes\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is not none, native, posix, keep or truncate"),
            "{e}"
        );
    }

    #[test]
    fn a_size_at_least_filesize_on_one_file_is_the_file_s_size() {
        let a = args("[j]\nrw=write\nfilename=f\nfilesize=1m\nsize=999m\n");
        assert!(a.contains(&"--size=1m".to_string()), "{a:?}");
        assert!(!a.contains(&"--size=999m".to_string()), "{a:?}");
        let e = one("[j]\nrw=write\nfilename=f\nfilesize=4m\nsize=1m\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("with a size= below it"), "{e}");
    }

    // Issue 41: examples/exitwhat.fio's `rate=300,300,300` (reads,
    // writes, trims) was refused; a pair in the mix's proportion is one
    // --rate of their sum, the direction a job does not issue is ignored
    // as fio ignores it, and a pair out of proportion is refused by name.
    #[test]
    fn fio_s_rates_per_direction_are_one_rate_in_the_mix_s_proportion() {
        let has = |text: &str, w: &str| {
            let a = args(text);
            assert!(a.contains(&w.to_string()), "{text:?}: {w} in {a:?}");
        };
        has("[j]\nrw=randrw\nrate=300,300,300\n", "--rate=600");
        has("[j]\nrw=randrw\nrate=1m\n", "--rate=2m");
        has("[j]\nrw=randrw\nrwmixread=75\nrate=3m,1m\n", "--rate=4m");
        has("[j]\nrw=read\nrate=1m,5m,7m\n", "--rate=1m");
        has("[j]\nrw=randwrite\nrate=1m,5m\n", "--rate=5m");
        has("[j]\nrw=randrw\nrate_iops=100,100\n", "--rate-iops=200");
        let a = args("[j]\nrw=write\nrate=1m,\n");
        assert!(
            !a.iter().any(|w| w.starts_with("--rate")),
            "writes free: {a:?}"
        );
        for (text, why) in [
            ("[j]\nrw=randrw\nrate=1m,3m\n", "proportion (50:50)"),
            ("[j]\nrw=randrw\nrate=,3m\n", "caps only the writes"),
            ("[j]\nrw=read\nrate=1,2,3,4\n", "more than three"),
        ] {
            let e = refused(text);
            assert!(e.contains("`rate=") && e.contains(why), "{text:?}: {e}");
        }
    }

    // Issue 41: fio's ratemin= (1mbs_clients.fio), rate_iops_min= and
    // ratecycle= were refused as unknown; they are run's --rate-min,
    // --rate-iops-min and --rate-cycle now.
    #[test]
    fn fio_s_minimum_rate_is_rate_min() {
        let a = args("[j]\nrate=1250\nratemin=1024\n");
        assert!(a.contains(&"--rate-min=1k".to_string()), "{a:?}");
        assert!(
            !a.iter().any(|w| w.starts_with("--rate-cycle")),
            "1000 ms is the default: {a:?}"
        );
        let a = args("[j]\nrate_iops_min=50\nratecycle=500\n");
        for w in ["--rate-iops-min=50", "--rate-cycle=500ms"] {
            assert!(a.contains(&w.to_string()), "{w}: {a:?}");
        }
        // Both: fio checks rate_min alone, and a line says so.
        let t = one("[j]\nrate_min=1m\nrate_iops_min=50\n").unwrap();
        let w = words(&t.args);
        assert!(
            w.contains(&"--rate-min=1m".to_string())
                && !w.iter().any(|w| w.starts_with("--rate-iops-min")),
            "{w:?}"
        );
        assert!(
            t.notes.iter().any(|n| n.contains("rate_min alone")),
            "{:?}",
            t.notes
        );
        // A cycle with no minimum judges nothing, in fio and here.
        assert!(!args("[j]\nratecycle=500\n")
            .iter()
            .any(|w| w.starts_with("--rate-cycle")));
        assert!(refused("[j]\nratemin=1m,2m\n").contains("their own minimum"));
        assert!(refused("[j]\nratemin=1m\nratecycle=0\n").contains("`rate_cycle=0`"));
    }

    /// fio's priorities and NUMA keys become --ioprio, --cmdprio,
    /// --numa-nodes and --numa-mem; cmdprio_class defaults to realtime as
    /// in fio's cmdprio.c.
    #[test]
    fn priorities_and_numa_keys_translate() {
        let w = args(
            "[j]\nrw=randread\nioengine=io_uring\niodepth=8\nprioclass=3\ncmdprio_percentage=20\n",
        );
        assert!(w.contains(&"--ioprio=idle,0".to_string()), "{w:?}");
        assert!(w.contains(&"--cmdprio=20:rt,0".to_string()), "{w:?}");
        let w = args("[j]\nrw=randread\nprioclass=2\nprio=5\nnuma_cpu_nodes=0\nnuma_mem_policy=interleave:0\n");
        assert!(w.contains(&"--ioprio=be,5".to_string()), "{w:?}");
        assert!(w.contains(&"--numa-nodes=0".to_string()), "{w:?}");
        assert!(w.contains(&"--numa-mem=interleave:0".to_string()), "{w:?}");
        let t = one("[j]\nrw=randread\nprio=4\n").unwrap();
        assert!(words(&t.args).contains(&"--ioprio=be,4".to_string()));
        assert!(
            t.notes
                .iter()
                .any(|n| n.contains("prio= without prioclass=")),
            "{:?}",
            t.notes
        );
    }

    // Issue 41: examples/cmdprio-bssplit.fio was refused
    // (`cmdprio_bssplit=64k/100:1024k/0,1024k/0`); each of its forms is
    // --cmdprio-bssplit with every entry's class/level/hint explicit: the
    // simple form's from cmdprio_class/cmdprio (realtime, 0 by default),
    // the advanced forms' their own; libaio with direct=1 runs it on io_uring.
    #[test]
    fn cmdprio_bssplit_translates_each_of_fio_s_forms() {
        let head = "[j]\nrw=randrw\nioengine=libaio\ndirect=1\niodepth=16\nbssplit=64k/40:1024k/60,1024k/100\n";
        let w = args(&format!(
            "{head}cmdprio_bssplit=64k/100:1024k/0,1024k/0\ncmdprio_class=1\ncmdprio=0\n"
        ));
        assert!(
            w.contains(&"--cmdprio-bssplit=65536/100/1/0/0,512/0".to_string()),
            "{w:?}"
        );
        assert!(
            w.contains(&"--bssplit=65536/40:1048576/60,1048576/100".to_string()),
            "{w:?}"
        );
        let w = args(&format!(
            "{head}cmdprio_bssplit=64k/100\ncmdprio_class=3\ncmdprio=5\ncmdprio_hint=2\n"
        ));
        assert!(
            w.contains(&"--cmdprio-bssplit=65536/100/3/5/2,65536/100/3/5/2".to_string()),
            "{w:?}"
        );
        let w = args(&format!(
            "{head}prioclass=2\nprio=7\ncmdprio_bssplit=64k/25/1/1:64k/75/3/2:1024k/0,1024k/0\n"
        ));
        assert!(
            w.contains(&"--cmdprio-bssplit=65536/25/1/1/0:65536/75/3/2/0,512/0".to_string()),
            "{w:?}"
        );
        assert!(w.contains(&"--ioprio=be,7".to_string()), "{w:?}");
        let w = args("[j]\nrw=randread\nioengine=io_uring\nbssplit=1M/40:2M/60\ncmdprio_bssplit=1M/10/2/0/1:1M/90/2/0/0:2M/10/2/0/3\n");
        assert!(
            w.iter().any(|a| a.starts_with(
                "--cmdprio-bssplit=1048576/10/2/0/1:1048576/90/2/0/0:2097152/10/2/0/3,"
            )),
            "{w:?}"
        );
        for (job, says) in [
            (
                "ioengine=psync\ncmdprio_bssplit=4k/10\n",
                "ioengine=io_uring or libaio",
            ),
            (
                "ioengine=libaio\ncmdprio_bssplit=4k/10\n",
                "ioengine=io_uring or libaio",
            ),
            (
                "ioengine=io_uring\ncmdprio_bssplit=4k/10\ncmdprio_percentage=5\n",
                "exclude each other",
            ),
            (
                "ioengine=io_uring\ncmdprio_bssplit=4k/60/1/0:4k/50/2/0\n",
                "over 100",
            ),
            (
                "ioengine=io_uring\ncmdprio_bssplit=4k/10/4/0\n",
                "class '4'",
            ),
            (
                "ioengine=io_uring\ncmdprio_bssplit=4k/10/1/9\n",
                "level '9'",
            ),
            (
                "ioengine=io_uring\ncmdprio_bssplit=4k/10\ncmdprio_class=5\n",
                "cmdprio_class=5",
            ),
            (
                "ioengine=io_uring\ncmdprio_hint=3\ncmdprio_percentage=5\n",
                "cmdprio_hint=3",
            ),
        ] {
            let e = refused(&format!("[j]\nrw=randread\n{job}"));
            assert!(e.contains(says), "{job}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }

    /// Bad priority and NUMA values are one line naming the key.
    #[test]
    fn bad_priorities_and_numa_values_are_refused() {
        for (job, key) in [
            ("prioclass=4\n", "prioclass=4"),
            ("prio=8\nprioclass=2\n", "prio"),
            ("prioclass=1,3\n", "prioclass=1,3"),
            (
                "ioengine=io_uring\niodepth=4\ncmdprio_percentage=101\n",
                "cmdprio_percentage=101",
            ),
            (
                "ioengine=io_uring\niodepth=4\ncmdprio_class=1\n",
                "cmdprio_class=1",
            ),
            (
                "ioengine=psync\ncmdprio_percentage=20\n",
                "cmdprio_percentage=20",
            ),
            ("numa_cpu_nodes=a\n", "numa_cpu_nodes=a"),
            ("numa_mem_policy=bind\n", "numa_mem_policy=bind"),
            ("numa_mem_policy=prefer:0-1\n", "numa_mem_policy=prefer:0-1"),
        ] {
            let e = refused(&format!("[j]\nrw=randread\n{job}"));
            assert!(e.contains(key), "{job}: {e}");
        }
    }

    // Issue 41: fio's steadystate (ss=, ss_dur=, ss_ramp=) was refused as
    // having no equivalent; it is run's --steady now.
    #[test]
    fn fio_s_steady_state_is_steady() {
        let a =
            args("[j]\nrw=write\nss=iops:10%\nss_dur=30s\nss_ramp=10s\ntime_based\nruntime=5m\n");
        for w in ["--steady=iops:10%", "--steady-dur=30s", "--steady-ramp=10s"] {
            assert!(a.contains(&w.to_string()), "{w}: {a:?}");
        }
        // fio's ss_ramp counts from the job's start, ramp_time included.
        let a = args("[j]\nsteadystate=bw_slope:1%\nsteadystate_duration=10\nss_ramp=5\nramp_time=2\ntime_based\nruntime=60\n");
        assert!(a.contains(&"--steady-ramp=3s".to_string()), "{a:?}");
        // Without ss_dur fio judges nothing: neither do we, and a line says so.
        let t = one("[j]\nss=iops:10%\n").unwrap();
        assert!(!words(&t.args).iter().any(|w| w.starts_with("--steady")));
        assert!(
            t.notes.iter().any(|n| n.contains("without ss_dur")),
            "{:?}",
            t.notes
        );
        assert!(args("[j]\nss=iops:10%\nss_dur=30\nss_interval=2\n")
            .contains(&"--live-interval=2s".to_string()));
        assert!(refused("[j]\nss=iops:10%\nss_dur=30\nss_interval=20\n")
            .contains("`steadystate_check_interval=20`"));
        assert!(refused("[j]\nss=speed:1%\nss_dur=30\n").contains("`steadystate=speed:1%`"));
    }

    // Issue 41: fio's offset modifiers, random_distribution and
    // offset_increment were refused by name; each is run's option now.
    #[test]
    fn offset_modifiers_distributions_and_increments_become_run_s_options() {
        let has = |text: &str, want: &str| {
            let a = args(text);
            assert!(a.contains(&want.to_string()), "{text:?}: {a:?}");
        };
        has("[j]\nrw=read:512k\n", "--skip=512k");
        has("[j]\nrw=read:-8k\n", "--skip=-8k");
        has("[j]\nrw=randread:8\n", "--seq-run=8");
        has(
            "[j]\nrw=randread\nrandom_distribution=zipf:1.2\n",
            "--dist=zipf:1.2",
        );
        has(
            "[j]\nrw=randread\nrandom_distribution=zoned:50/5:30/15:20/\n",
            "--dist=zoned:50/5:30/15:20/80",
        );
        has(
            "[j]\nrw=read\nnumjobs=2\nsize=1m\noffset_increment=1m\n",
            "--offset-increment=1m",
        );
        // fio ignores what has nothing to shape: said, not passed on.
        for text in [
            "[j]\nrw=read\nrandom_distribution=zipf:1.2\n",
            "[j]\nrw=read\noffset_increment=1m\n",
        ] {
            let t = one(text).unwrap();
            let a = words(&t.args);
            assert!(
                !a.iter()
                    .any(|w| w.starts_with("--dist") || w.starts_with("--offset-inc")),
                "{a:?}"
            );
            assert!(!t.notes.is_empty(), "{text:?}");
        }
        for (text, named) in [
            ("[j]\nrw=randread:x\n", "rw=randread:x"),
            ("[j]\nrw=read:4q\n", "rw=read:4q"),
            (
                "[j]\nrw=randread\nrandom_distribution=zipf:1\n",
                "random_distribution=zipf:1",
            ),
        ] {
            let e = refused(text);
            assert!(e.contains(named), "{e}");
        }
    }

    // Issue 41: numjobs=4 on a sequential pattern, or bounded by size=,
    // was refused: fio's clones each cover the job's whole region, which
    // stripebench's --jobs (a slice each) did not do. --jobs-share does.
    #[test]
    fn numjobs_clones_each_cover_the_whole_region() {
        for text in [
            "[j]\nrw=read\nnumjobs=4\ntime_based\nruntime=10\n",
            "[j]\nrw=randread\nnumjobs=4\n",
            "[j]\nrw=rw\nnumjobs=4\n",
        ] {
            let a = args(text);
            assert!(
                a.contains(&"--jobs=4".to_string()) && a.contains(&"--jobs-share".to_string()),
                "{text:?}: {a:?}"
            );
        }
        // Bounded by size=: each clone does one pass of it.
        let a = args("[j]\nrw=read\nnumjobs=2\nsize=1m\n");
        assert!(a.contains(&"--passes=1".to_string()), "{a:?}");
        // One job has nothing to share.
        assert!(!args("[j]\nnumjobs=1\n").contains(&"--jobs-share".to_string()));
    }

    #[test]
    fn a_job_is_its_globals_and_its_own_options_the_later_winning() {
        let t = one("; a comment\n[global]\nrw=randread\nbs=4k  ; inline\ndirect=1\ntime_based\nruntime=30\n# another\n[job1]\nbs=64k\nfilename=/dev/a:/dev/b\niodepth=8\nioengine=io_uring\n").unwrap();
        assert_eq!(
            words(&t.args),
            [
                "--rw=randread",
                "--bs=64k",
                "--direct",
                "--duration=30s",
                "--ramp=0s",
                "--engine=uring",
                "--iodepth=8",
                "--no-register",
                "--complete-min=1",
                "--no-pin"
            ]
        );
        assert_eq!(t.targets, ["/dev/a", "/dev/b"]);
    }

    #[test]
    fn fio_defaults_are_said_where_stripebench_s_differ() {
        // fio: buffered, 4k, psync, no ramp, size= once.
        assert_eq!(
            args("[j]\nrw=read\n"),
            [
                "--rw=read",
                "--bs=4k",
                "--buffered",
                "--passes=1",
                "--ramp=0s",
                "--engine=sync",
                "--no-pin"
            ]
        );
    }

    #[test]
    fn sizes_are_fio_s_kb_base_1024_units_kept_exact() {
        assert_eq!(fio_size("4k", 1024), Ok(4096));
        assert_eq!(fio_size("4K", 1024), Ok(4096));
        assert_eq!(fio_size("4KB", 1024), Ok(4096));
        // fio's compatibility mode: the IEC suffix is decimal.
        assert_eq!(fio_size("4KiB", 1024), Ok(4000));
        assert_eq!(fio_size("4KiB", 1000), Ok(4096));
        assert_eq!(fio_size("4k", 1000), Ok(4000));
        assert_eq!(fio_size("10G", 1024), Ok(10 << 30));
        assert!(fio_size("1.5g", 1024).is_err());
        assert!(fio_size("4x", 1024).is_err());
        assert!(fio_size("99999999999p", 1024).is_err());
        assert_eq!(args("[j]\nbs=4KiB\n")[1], "--bs=4000");
        assert!(args("[j]\nrate=500k\nrw=read\n").contains(&"--rate=500k".to_string()));
    }

    #[test]
    fn times_are_seconds_unless_a_unit_says_otherwise() {
        assert_eq!(fio_time("900"), Ok(Duration::from_secs(900)));
        assert_eq!(fio_time("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(fio_time("1500ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(fmt_duration(Duration::from_millis(1500)), "1500ms");
        assert!(fio_time("1.5").is_err());
        assert!(fio_time("400d").is_err());
    }

    // Issue 41 (fio's t0002): a verified write of several sizes and its
    // read run, each with fio's randrepeat seed, so the read's size draws
    // replay the write's; a random one, a read with randrepeat=0 and a
    // bsrange= that would bound the split otherwise are refused by name.
    #[test]
    fn verified_blocks_of_several_sizes_are_read_with_the_write_s_seed() {
        let g = "[global]\nverify=md5\nbssplit=512/50:1M/50\n";
        for rw in ["write", "read", "rw"] {
            let a = args(&format!("{g}[j]\nrw={rw}\nbsrange=512:1M\n"));
            for w in ["--bssplit=512/50:1048576/50", "--seed=137", "--verify"] {
                assert!(a.contains(&w.to_string()), "{rw} {w}: {a:?}");
            }
        }
        let a = args(&format!("{g}[j]\nrw=write\nrandseed=7\n"));
        assert!(a.contains(&"--seed=7".to_string()), "{a:?}");
        let e = refused(&format!("{g}[j]\nrw=randwrite\n"));
        assert!(e.contains("of one size"), "{e}");
        let e = refused(&format!("{g}[j]\nrw=read\nrandrepeat=0\n"));
        assert!(e.contains("`randrepeat=0`"), "{e}");
        let e = refused(&format!("{g}[j]\nrw=write\nbsrange=4k-64k\n"));
        assert!(e.contains("give bsrange=512-1m"), "{e}");
        let e = refused(&format!("{g}[j]\nrw=write\nloops=2\n"));
        assert!(e.contains("over more than one pass"), "{e}");
    }

    // Issue 41: bssplit= (iometer-file-access-server.fio, jesd219.fio)
    // was refused; it runs as --bssplit, its READS,WRITES form when the
    // pattern uses one list or both are alike, and bsrange= when its
    // uniform draw is whole percents.
    #[test]
    fn bssplit_and_bsrange_run_as_a_split() {
        let a = args(
            "[j]
rw=randrw
bssplit=512/10:1k/:4k/60
ba=4k
bs=8k
",
        );
        assert!(
            a.contains(&"--bssplit=512/10:1024/30:4096/60".to_string())
                && a.contains(&"--blockalign=4k".to_string())
                && !a.iter().any(|w| w.starts_with("--bs=")),
            "{a:?}"
        );
        let a = args(
            "[j]
rw=randread
bssplit=64k/40:1m/60,1m/100
",
        );
        assert!(
            a.contains(&"--bssplit=65536/40:1048576/60".to_string()),
            "{a:?}"
        );
        let a = args(
            "[j]
rw=write
bssplit=64k/40:1m/60,1m/100
",
        );
        assert!(a.contains(&"--bs=1m".to_string()), "{a:?}");
        // A mix draws each direction from its own list.
        let a = args(
            "[j]
rw=randrw
bssplit=64k/40:1m/60,1m/100
",
        );
        assert!(
            a.contains(&"--bssplit=65536/40:1048576/60,1048576/100".to_string()),
            "{a:?}"
        );
        let a = args(
            "[j]
rw=randread
bsrange=4k-16k
",
        );
        assert!(
            a.contains(&"--bssplit=4096/25:8192/25:12288/25:16384/25".to_string()),
            "{a:?}"
        );
        let e = refused(
            "[j]
rw=randread
bsrange=512-1m
",
        );
        assert!(e.contains("2048 multiples of 512"), "{e}");
    }

    #[test]
    fn unknown_options_are_refused_by_name_with_the_nearest_option() {
        let e = refused("[global]\nbsrange=4k-64k\n[f1]\nrw=write\n");
        assert!(
            e.contains("line 2 [global] (for [f1])") && e.contains("`bsrange=4k-64k`"),
            "{e}"
        );
        // One size is one size, whatever bs= says (fio's bsrange decides).
        let a = args("[j]\nbs=64k\nblocksize_range=8k-8k\n");
        assert!(a.contains(&"--bs=8k".to_string()), "{a:?}");
        let e = refused("[j]\niodepth_batch=8\n");
        assert!(
            e.contains("`iodepth_batch=8` is fio's") && e.contains("--iodepth N"),
            "{e}"
        );
        // fio's sequential mix is ours too (issue 41): a position per direction.
        for text in [
            "[j]\nrw=rw\nrwmixread=70\n",
            "[j]\nreadwrite=readwrite\nrwmixwrite=30\n",
        ] {
            let a = args(text);
            assert!(
                a.contains(&"--rw=rw".to_string()) && a.contains(&"--mix=70".to_string()),
                "{text:?}: {a:?}"
            );
        }
        let e = refused("[j]\nioengine=splice\n");
        assert!(e.contains("splice") && e.contains("--engine"), "{e}");
    }

    #[test]
    fn what_would_change_meaning_is_refused_by_name() {
        for (text, named) in [
            ("[j]\nioengine=vsync\niodepth=16\n", "ioengine=vsync"),
            ("[j]\nioengine=mmap\ndirect=1\n", "ioengine=mmap"),
            (
                "[j]\nrw=randread\nrandom_distribution=zipf:1.2\nrandom_generator=lfsr\n",
                "random_generator=lfsr",
            ),
            ("[j]\ngtod_reduce=2\n", "gtod_reduce=2"),
            ("[j]\nrw=randread\ncpus_allowed=0-3\n", "cpus_allowed=0-3"),
            ("[j]\nbs=4k,64k\n", "bs=4k,64k"),
            ("[j]\nrw=randrw\nrwmixread=70\nrate=10m\n", "rate=10m"),
            ("[j]\nsize=50%\n", "size=50%"),
            ("[j]\ntime_based\n", "time_based"),
            // A random mix's record lives only while it runs.
            (
                "[j]\nrw=randrw\nverify=crc32c\ndo_verify=0\n",
                "verify=crc32c",
            ),
            ("[j]\nrwmixread=70\nrwmixwrite=40\n", "rwmixwrite=40"),
            ("[j]\nioengine=io_uring\nfixedbufs\n", "fixedbufs"),
            ("[j]\ninvalidate=0\n", "invalidate=0"),
        ] {
            let e = refused(text);
            assert!(e.contains(&format!("`{named}`")), "{text:?}: {e}");
        }
        // Said in full, they are honoured.
        let a = args("[j]\nrw=randread\ncpus_allowed=0-3\ncpus_allowed_policy=split\n");
        assert!(a.contains(&"--cpus=0-3".to_string()), "{a:?}");
        let a = args("[j]\nrw=write\nbuffer_compress_percentage=50\nbuffer_compress_chunk=4k\n");
        assert!(a.contains(&"--buffer-compress=50".to_string()), "{a:?}");
        // fio's default chunk (512) is the same share of zeros, said so.
        let a = args("[j]\nrw=write\nbuffer_compress_percentage=50\n");
        assert!(a.contains(&"--buffer-compress=50".to_string()), "{a:?}");
        // fio's dedupe-global example: its working set, shared.
        let a = args("[j]\nrw=write\ndedupe_percentage=50\ndedupe_mode=working_set\ndedupe_working_set_percentage=50\ndedupe_global=1\n");
        for w in ["--dedupe=50", "--dedupe-working-set=50", "--dedupe-global"] {
            assert!(a.contains(&w.to_string()), "{w}: {a:?}");
        }
        let e = refused("[j]\nrw=write\ndedupe_percentage=50\ndedupe_global=1\n");
        assert!(
            e.contains("`dedupe_global=1` with dedupe_mode=repeat"),
            "{e}"
        );
        let e = refused("[j]\nrw=write\ndedupe_percentage=50\ndedupe_mode=elsewhere\n");
        assert!(e.contains("`dedupe_mode=elsewhere` is not one of"), "{e}");
        let a = args("[j]\nrw=write\nverify=crc32c\ndo_verify=0\n");
        assert!(a.contains(&"--verify".to_string()), "{a:?}");
        let a = args("[j]\nrw=randrw\nrwmixwrite=30\n");
        assert!(a.contains(&"--mix=70".to_string()), "{a:?}");
    }

    #[test]
    fn randommap_asked_for_by_name_is_refused_and_randrepeat_is_a_fixed_seed() {
        let e = refused("[j]\nrw=randread\nnorandommap=0\n");
        assert!(e.contains("`norandommap=0`"), "{e}");
        // randrepeat: the same offsets every run, as --seed gives them.
        for text in [
            "[j]\nrw=randread\nrandrepeat=1\n",
            "[j]\nrw=randread\nrandrepeat\n",
        ] {
            let t = one(text).unwrap();
            assert!(words(&t.args).contains(&"--seed=137".to_string()), "{t:?}");
            assert!(
                t.notes.iter().any(|n| n.starts_with("randrepeat=1")),
                "{t:?}"
            );
        }
        assert!(!args("[j]\nrw=randread\nrandrepeat=0\n")
            .iter()
            .any(|a| a.starts_with("--seed")));
        let a = args("[j]\nrw=randread\nrandrepeat=1\nrandseed=7\nnorandommap\n");
        assert!(a.contains(&"--seed=7".to_string()), "{a:?}");
        // fio's default random map is not kept: said, not silent.
        let t = one("[j]\nrw=randread\n").unwrap();
        assert!(
            t.notes.iter().any(|n| n.contains("norandommap")),
            "{:?}",
            t.notes
        );
        assert!(one("[j]\nrw=read\ndirect=1\n").unwrap().notes.is_empty());
        // Buffered: fio's fadvise_hint (on unless 0) is said, not silent.
        let t = one("[j]\nrw=read\n").unwrap();
        assert!(
            t.notes.iter().any(|n| n.contains("fadvise_hint")),
            "{:?}",
            t.notes
        );
        assert!(one("[j]\nrw=read\nfadvise_hint=0\n")
            .unwrap()
            .notes
            .is_empty());
    }

    #[test]
    fn iodepth_batch_complete_and_its_min_are_one_option_the_last_of_which_holds() {
        let head = "[j]\nioengine=io_uring\niodepth=8\n";
        let a = args(&format!(
            "{head}iodepth_batch_complete_min=2\niodepth_batch_complete=4\n"
        ));
        assert!(a.contains(&"--complete-min=4".to_string()), "{a:?}");
        let a = args(&format!(
            "{head}iodepth_batch_complete=4\niodepth_batch_complete_min=2\n"
        ));
        assert!(a.contains(&"--complete-min=2".to_string()), "{a:?}");
        let a = args(&format!(
            "{head}iodepth_batch_complete=4\niodepth_batch_complete_min=1\n"
        ));
        assert!(a.contains(&"--complete-min=1".to_string()), "{a:?}");
        // Not given: fio's default, 1, not stripebench's auto.
        let a = args(head);
        assert!(a.contains(&"--complete-min=1".to_string()), "{a:?}");
        // 0, fio's "do not wait": a wait for one, as any waiting enter.
        let a = args(&format!("{head}iodepth_batch_complete_min=0\n"));
        assert!(a.contains(&"--complete-min=1".to_string()), "{a:?}");
        // Given to another engine as 1: nothing to wait for, nothing passed.
        let a = args("[j]\niodepth_batch_complete_min=1\n");
        assert!(!a.iter().any(|a| a.starts_with("--complete-min")), "{a:?}");
        let e = refused(&format!("{head}iodepth_batch_complete_min=9\n"));
        assert!(e.contains("`iodepth_batch_complete_min=9`"), "{e}");
    }

    #[test]
    fn runtime_0_is_no_limit_and_ramp_time_without_time_based_is_refused_by_name() {
        // fio: runtime=0 is no limit; stripebench's --duration=0s is refused.
        let a = args("[j]\nrw=read\nruntime=0\n");
        assert!(!a.iter().any(|a| a.starts_with("--duration")), "{a:?}");
        let e = refused("[j]\nrw=read\ntime_based\nruntime=0\n");
        assert!(e.contains("`time_based` without runtime="), "{e}");
        let e = refused("[j]\nrw=read\nramp_time=5\n");
        assert!(e.contains("`ramp_time=5` without time_based"), "{e}");
        let e = refused("[j]\nrw=read\nramp_time=5\nio_size=1m\nruntime=10\n");
        assert!(e.contains("`ramp_time=5`"), "{e}");
        let a = args("[j]\nrw=read\nramp_time=0\n");
        assert!(a.contains(&"--ramp=0s".to_string()), "{a:?}");
        let a = args("[j]\nrw=read\nramp_time=5\ntime_based\nruntime=10\n");
        assert!(a.contains(&"--ramp=5s".to_string()), "{a:?}");
    }

    #[test]
    fn a_cpu_list_with_spaces_is_kept_whole_not_cut_at_its_first_space() {
        // It was `--cpus=0`: one CPU of the two, silently.
        let a = args("[j]\nrw=randread\ncpus_allowed=0 ,1\ncpus_allowed_policy=split\n");
        assert!(a.contains(&"--cpus=0,1".to_string()), "{a:?}");
        let a = args("[j]\nrw=randread\ncpus_allowed=0, 1\ncpus_allowed_policy=split\n");
        assert!(a.contains(&"--cpus=0,1".to_string()), "{a:?}");
    }

    #[test]
    fn a_mix_or_verify_on_a_pattern_that_cannot_take_it_is_refused_by_the_job_s_option() {
        // They became --mix / --verify and were refused naming those.
        let e = refused("[j]\nrw=randread\nrwmixread=70\n");
        assert!(e.contains("`rwmixread=70` with rw=randread"), "{e}");
        let e = refused("[j]\nrw=write\nrwmixwrite=30\n");
        assert!(e.contains("`rwmixwrite=30`"), "{e}");
        let e = refused("[j]\nrw=randrw\nverify=crc32c\ndo_verify=0\n");
        assert!(e.contains("`verify=crc32c` with rw=randrw"), "{e}");
        assert!(args("[j]\nrw=read\nverify=crc32c\n").contains(&"--verify".to_string()));
    }

    #[test]
    fn a_lone_carriage_return_is_refused_with_its_line() {
        // Regression: `filename=f1\rrw=write` read as the file name
        // "f1\rrw=write", which a terminal shows as `rw=write`.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.fio");
        std::fs::write(&p, "[a]\nfilename=f1\rrw=write\n").unwrap();
        let e = read(&p, "j.fio").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("carriage return"), "{e}");
        std::fs::write(&p, "[a]\r\nfilename=f1\r\n").unwrap();
        assert!(read(&p, "j.fio").is_ok());
    }

    #[test]
    fn hostile_text_is_refused_and_never_evaluated() {
        for (text, said) in [
            ("[j]\nfilename=$HOME/x\n", "as text, not the environment"),
            (
                "[j]\nfilename=${STRIPEBENCH_TEST_UNSET_VAR}\n",
                "STRIPEBENCH_TEST_UNSET_VAR is not set",
            ),
            ("[j]\nsize=$(rm -rf /)\n", "command substitution"),
            ("[j]\nfilename=`id`\n", "command substitution"),
            ("[j]\nsize=(1024*4)/0\n", "division by zero"),
            (
                "[j]\nsize=5*1024*1024\n",
                "which fio reads as 5: write (5*1024*1024)",
            ),
            ("include other.fio\n[j]\n", "follows no include"),
            ("[j]\ninclude /etc/passwd\n", "follows no include"),
            ("rw=read\n[j]\n", "before any [section]"),
            ("[]\n", "no section"),
            ("[j]\nb s=4k\n", "is no option"),
            ("[global]\nrw=read\n", "no job section"),
        ] {
            let e = refused(text);
            assert!(e.contains(said), "{text:?}: {e}");
        }
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("j.fio");
        std::fs::write(&f, "[j]\nfilename=a\u{1b}[31m\n").unwrap();
        let e = read(&f, "j.fio").unwrap_err().0;
        assert!(
            e.contains("line 2") && e.contains("\\u{1b}") && !e.contains('\u{1b}'),
            "{e}"
        );
        std::fs::write(&f, b"[j]\n\x00\n").unwrap();
        assert!(read(&f, "j.fio").unwrap_err().0.contains("line 2"));
        std::fs::write(&f, b"[j]\nfilename=\xff\n").unwrap();
        assert!(read(&f, "j.fio").unwrap_err().0.contains("not UTF-8"));
        std::fs::write(&f, vec![b';'; MAX_BYTES as usize + 1]).unwrap();
        assert!(read(&f, "j.fio").unwrap_err().0.contains("larger than"));
    }

    #[test]
    fn thousands_of_sections_or_stonewall_groups_are_refused_not_planned() {
        let sections: String = (0..10_000).map(|i| format!("[j{i}]\n")).collect();
        let e = refused(&format!("[global]\nfilename=f\n{sections}"));
        assert!(
            e.contains("10000 job sections") && e.contains("split it"),
            "{e}"
        );
        let groups_text: String = (0..MAX_GROUPS + 1)
            .map(|i| format!("[j{i}]\nstonewall\n"))
            .collect();
        let e = refused(&format!("[global]\nfilename=f\n{groups_text}"));
        assert!(
            e.contains("65 stonewall groups") && e.contains("split it"),
            "{e}"
        );
        let at_most: String = (0..MAX_GROUPS)
            .map(|i| format!("[j{i}]\nstonewall\n"))
            .collect();
        assert_eq!(
            groups(&format!("[global]\nfilename=f\n{at_most}"), "j.fio")
                .unwrap()
                .len(),
            MAX_GROUPS
        );
    }

    /// fio's logs: `--fio-log` each, windowed at log_avg_msec (said when
    /// fio would log each I/O), their columns as `--fio-log-format`, named
    /// after the job when bare, numbered from the group's first job.
    #[test]
    fn fio_logs_are_fio_log_options_in_fio_s_windowed_form() {
        let t = one("[j]\nrw=read\nwrite_bw_log=out/b\nwrite_lat_log\nlog_avg_msec=100\nlog_window_value=both\nlog_offset=1\nper_job_logs=0\n").unwrap();
        assert_eq!(
            words(&t.args)
                .into_iter()
                .filter(|w| w.contains("log"))
                .collect::<Vec<_>>(),
            [
                "--fio-log=bw=out/b",
                "--fio-log=lat=j",
                "--log-interval=100ms",
                "--fio-log-format=shared,offset,both"
            ]
        );
        assert!(
            !t.notes.iter().any(|n| n.contains("per I/O")),
            "{:?}",
            t.notes
        );
        let t = one("[j]\nrw=read\nwrite_iops_log=x\nlog_prio=1\nlog_max_value=1\n").unwrap();
        let w = words(&t.args);
        assert!(
            w.contains(&"--fio-log-format=prio,max".to_string()),
            "{w:?}"
        );
        assert!(!w.iter().any(|a| a.starts_with("--log-interval")), "{w:?}");
        assert!(
            t.notes.iter().any(|n| n.contains("a line per I/O")),
            "{:?}",
            t.notes
        );
        // Shaping options without a log change nothing.
        assert!(!args("[j]\nlog_avg_msec=500\nlog_offset=1\n")
            .iter()
            .any(|a| a.contains("log")));
        // A mix: fio's line per I/O (each line has its direction); with
        // log_avg_msec, refused (the intervals count both directions).
        let w = args("[j]\nrw=randrw\nwrite_bw_log=b\n");
        assert!(w.contains(&"--fio-log-format=each".to_string()), "{w:?}");
        let e = refused("[j]\nrw=randrw\nwrite_bw_log=b\nlog_avg_msec=500\n");
        assert!(
            e.contains("`log_avg_msec=500` with rw=randrw") && e.contains("each direction a line"),
            "{e}"
        );
        let e = refused("[j]\nwrite_bw_log=b\nlog_avg_msec=5\n");
        assert!(e.contains("`log_avg_msec=5` is outside 10"), "{e}");
        let e = refused("[j]\nwrite_bw_log=b\nlog_window_value=median\n");
        assert!(e.contains("is not avg, max or both"), "{e}");
        // The second group's job is fio's job 3 (the first has 2 clones).
        let g = groups("[a]\nrw=randread\nnumjobs=2\ntime_based\nruntime=1\nwrite_bw_log=l\n[b]\nstonewall\nwrite_bw_log=l\nlog_offset=1\n", "j.fio").unwrap();
        assert!(
            !words(&g[0].args).iter().any(|w| w.contains("first")),
            "{:?}",
            g[0].args
        );
        assert!(
            words(&g[1].args).contains(&"--fio-log-format=offset,first=3".to_string()),
            "{:?}",
            g[1].args
        );
    }

    #[test]
    fn jobs_at_once_are_one_run_only_when_one_workload() {
        let g = groups(
            "[global]\nrw=randread\ndirect=1\n[a]\nfilename=/dev/a\n[b]\nfilename=/dev/b\n",
            "j.fio",
        )
        .unwrap();
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].targets, ["/dev/a", "/dev/b"]);
        assert_eq!(g[0].sections, ["a", "b"]);
        // Two workloads: two runs, the second at once with the first.
        let g = groups(
            "[global]\nrw=randread\n[a]\niodepth=4\nioengine=io_uring\n[b]\niodepth=32\nioengine=io_uring\n[c]\niodepth=32\nioengine=io_uring\n",
            "j.fio",
        )
        .unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].sections, ["a"]);
        assert_eq!(g[1].sections, ["b", "c"]);
        assert!(!g[0].with_previous && g[1].with_previous);
        // stonewall: one after the other; new_group alone does not serialise.
        let g = groups("[a]\n[b]\nstonewall\n[c]\nwait_for_previous\n", "j.fio").unwrap();
        assert_eq!(g.len(), 3);
        assert!(g.iter().all(|g| !g.with_previous));
        let g = groups("[a]\n[b]\nnew_group\n", "j.fio").unwrap();
        assert_eq!(g.len(), 1);
    }

    #[test]
    fn wait_for_the_whole_group_before_is_a_stonewall_and_any_other_is_refused() {
        // fio's examples/waitfor.fio: each job waits for the one before.
        let g = groups(
            "[w]\nrw=write\nnumjobs=2\n[r]\nnew_group\nwait_for=w\nrw=randread\n",
            "j.fio",
        )
        .unwrap();
        assert_eq!(g.len(), 2);
        assert!(!g[1].with_previous);
        let e = refused("[a]\n[b]\nrw=write\n[c]\nwait_for=a\n");
        assert!(
            e.contains("`wait_for=a`") && e.contains("[b] may still be running"),
            "{e}"
        );
        let e = refused("[a]\n[c]\nwait_for=zz\n");
        assert!(
            e.contains("no job of the group before it has that name"),
            "{e}"
        );
        let e = refused("[a]\nwait_for=a\n");
        assert!(e.contains("names the job itself"), "{e}");
    }

    #[test]
    fn jobs_at_once_on_a_cpu_each_are_one_run_pinned_as_print_fio_writes_it() {
        let g = groups(
            "[global]\nrw=randread\n[w0]\nfilename=a\ncpus_allowed=3\n[w1]\nfilename=b\ncpus_allowed=1\n",
            "j.fio",
        )
        .unwrap();
        assert_eq!(g.len(), 1);
        assert!(
            words(&g[0].args).contains(&"--cpus=3,1".to_string()),
            "{:?}",
            g[0].args
        );
        assert!(!words(&g[0].args).contains(&"--no-pin".to_string()));
        let e = refused("[global]\nrw=randread\n[w0]\nfilename=a:c\ncpus_allowed=3\n[w1]\nfilename=b\ncpus_allowed=1\n");
        assert!(e.contains("different cpus_allowed"), "{e}");
    }

    #[test]
    fn a_sweep_takes_groups_that_differ_in_one_parameter() {
        let g = groups(
            "[global]\nbs=4k\ndirect=1\n[r]\nrw=read\nstonewall\n[w]\nrw=randread\nstonewall\n",
            "j.fio",
        )
        .unwrap();
        let (name, values, common) = sweep_param(&g).unwrap();
        assert_eq!(
            (name.as_str(), values),
            ("rw", vec!["read".to_string(), "randread".to_string()])
        );
        assert!(!words(&common).iter().any(|a| a.starts_with("--rw")));
        let g = groups("[a]\ndirect=1\n[b]\nstonewall\n", "j.fio").unwrap();
        assert_eq!(sweep_param(&g).unwrap().1, ["direct", "buffered"]);
        let g = groups("[a]\nrw=read\n[b]\nrw=write\nbs=1m\nstonewall\n", "j.fio").unwrap();
        let e = sweep_param(&g).unwrap_err();
        assert!(e.contains("--rw, --bs"), "{e}");
    }

    #[test]
    fn an_output_path_run_would_refuse_is_refused_not_numbered_into_a_new_file() {
        // Regression: `--json od/` (a directory) became od.1 and od.2, and
        // `--json /dev/null` /dev/null.1, a new file in /dev, as root.
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        for (flag, p, why) in [
            ("--json", format!("{d}/"), "names a directory"),
            ("--json", d.to_string(), "names a directory"),
            ("--csv", "/dev/null".to_string(), "/dev, /proc or /sys"),
            ("--live", "/dev/stdout".to_string(), "/dev, /proc or /sys"),
            (
                "--json",
                "/proc/self/fd/1".to_string(),
                "/dev, /proc or /sys",
            ),
        ] {
            let t: Vec<OsString> = vec![flag.into(), p.clone().into()];
            let e = numbered_outputs(&t, 1, 2).unwrap_err().to_string();
            assert!(
                e.contains(why) && e.contains("give a file path"),
                "{p}: {e}"
            );
            let t: Vec<OsString> = vec![format!("{flag}={p}").into()];
            assert!(numbered_outputs(&t, 1, 2).is_err(), "{flag}={p}");
        }
        let t: Vec<OsString> = vec!["--json".into(), format!("{d}/r.json").into()];
        let n = numbered_outputs(&t, 2, 3).unwrap();
        assert_eq!(n[1], OsString::from(format!("{d}/r.2.json")));
    }

    #[test]
    fn several_runs_number_their_output_paths_and_refuse_stdout() {
        let t: Vec<OsString> = [
            "--json",
            "out/r.json",
            "--csv=r.csv",
            "--histogram",
            "/tmp/x",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let n = numbered_outputs(&t, 2, 3).unwrap();
        assert_eq!(
            n,
            [
                "--json",
                "out/r.2.json",
                "--csv=r.2.csv",
                "--histogram",
                "/tmp/x"
            ]
        );
        let t: Vec<OsString> = ["--json", "-"].iter().map(OsString::from).collect();
        assert!(numbered_outputs(&t, 1, 2)
            .unwrap_err()
            .0
            .contains("--json -"));
    }

    #[test]
    fn a_rate_shared_by_a_filename_list_is_refused_not_given_to_each_file() {
        // size= and io_size= are divided among the files, as fio does
        // (translate's size_over_a_list_of_files_is_divided_among_them_as_fio_does).
        for (opt, named) in [
            ("rate=10m", "`rate=10m`"),
            ("rate_iops=100", "`rate_iops=100`"),
        ] {
            let e = refused(&format!("[j]\nrw=read\nfilename=a:b\n{opt}\n"));
            assert!(e.contains(named) && e.contains("listing 2 files"), "{e}");
        }
        // One file per section: each job's own, as stripebench's per target.
        let g = groups(
            "[global]\nsize=1g\n[a]\nfilename=a\n[b]\nfilename=b\n",
            "j.fio",
        )
        .unwrap();
        assert!(
            words(&g[0].args).contains(&"--size=1g".to_string()),
            "{:?}",
            g[0].args
        );
    }

    #[test]
    fn engines_fio_runs_one_io_at_a_time_are_sync_and_say_so() {
        for (text, direct, said) in [
            (
                "[j]\nioengine=libaio\niodepth=16\n",
                "--buffered",
                "ioengine=libaio with direct=0",
            ),
            (
                "[j]\nioengine=posixaio\niodepth=8\ndirect=1\n",
                "--direct",
                "ioengine=posixaio",
            ),
            (
                "[j]\nioengine=posixaio\n",
                "--buffered",
                "ioengine=posixaio",
            ),
            ("[j]\nioengine=mmap\n", "--buffered", "ioengine=mmap"),
            ("[j]\nioengine=vsync\n", "--buffered", "ioengine=vsync"),
        ] {
            let t = one(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            let w = words(&t.args);
            assert!(w.contains(&"--engine=sync".to_string()), "{text:?}: {w:?}");
            assert!(w.contains(&direct.to_string()), "{text:?}: {w:?}");
            assert!(
                !w.iter()
                    .any(|a| a.starts_with("--iodepth") || a.starts_with("--complete-min")),
                "{text:?}: {w:?}"
            );
            assert!(
                t.notes.iter().any(|n| n.starts_with(said)),
                "{text:?}: {:?}",
                t.notes
            );
        }
        // libaio with direct=1 keeps its depth, on io_uring.
        let a = args("[j]\nioengine=libaio\niodepth=16\ndirect=1\n");
        assert!(a.contains(&"--iodepth=16".to_string()), "{a:?}");
        for e in ["sync", "psync", "pvsync", "pvsync2"] {
            assert!(args(&format!("[j]\nioengine={e}\n")).contains(&"--engine=sync".to_string()));
        }
    }

    #[test]
    fn measurement_knobs_are_taken_each_with_its_line_and_off_without_one() {
        for key in [
            "gtod_reduce",
            "disable_lat",
            "disable_clat",
            "disable_slat",
            "disable_bw_measurement",
            "group_reporting",
            "thread",
        ] {
            let t = one(&format!("[j]\nrw=read\ndirect=1\n{key}=1\n")).unwrap();
            assert!(
                t.notes.iter().any(|n| n.starts_with(&format!("{key}:"))),
                "{key}: {:?}",
                t.notes
            );
            let t = one(&format!("[j]\nrw=read\ndirect=1\n{key}=0\n")).unwrap();
            assert!(t.notes.is_empty(), "{key}=0: {:?}", t.notes);
        }
        // fio's aliases read as the option.
        let t = one("[j]\nrw=read\ndirect=1\ndisable_bw=1\n").unwrap();
        assert!(
            t.notes
                .iter()
                .any(|n| n.starts_with("disable_bw_measurement:")),
            "{:?}",
            t.notes
        );
        let t = one("[j]\nrw=read\ndirect=1\nthreads=1\n").unwrap();
        assert!(
            t.notes.iter().any(|n| n.contains("tiobench")),
            "{:?}",
            t.notes
        );
        assert!(refused("[j]\nthreads=x\n").contains("`threads=x`"));
    }

    #[test]
    fn filename_lists_split_on_unescaped_colons() {
        assert_eq!(list("/dev/a:/dev/b"), ["/dev/a", "/dev/b"]);
        assert_eq!(list("a\\:b:c"), ["a:b", "c"]);
        let t = one("[j]\ndirectory=/mnt\nfilename=f1:/abs\n").unwrap();
        assert_eq!(t.targets, ["/mnt/f1", "/abs"]);
        let e = refused("[j]\nfilename=-x\n");
        assert!(e.contains("./NAME"), "{e}");
    }
}
