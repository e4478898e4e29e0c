//! Layer `output`: where every byte a command makes goes. One [`Outputs`]
//! per command owns every destination it was given (the registered
//! document formats of [`crate::report::FORMATS`], `--live`, `--metrics`):
//! it checks them all before any I/O ([`dest::check`]), decides the one
//! rule for stdout ([`Outputs::stdout_taken`]), and does every write: the
//! last one, each sweep point's rewrite ([`Outputs::save_point`]) and the
//! per-second ones (the live hub it opens, [`live`]).
//!
//! - [`dest`]: the checks, and the files written whole through a
//!   directory descriptor (`O_CREAT|O_EXCL|O_NOFOLLOW`, `renameat`);
//! - [`stdout`]: standard output that never panics;
//! - [`live`]: the `--live` stream (non-blocking on a pipe, a FIFO or a
//!   socket) and the `--metrics` file rewritten every second.
//!
//! The renderers (`report`) make the bytes; this layer never renders.
//! May import `report` and the layers below it; never `cli` or `commands`.

pub mod dest;
pub mod history;
pub mod live;
pub mod stdout;

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::base::error::{show_path, show_text, UsageError};
use crate::base::warning::Warning;
use crate::measure::config::LiveFormat;
use crate::measure::live::{LiveHub, RunOutputs};
use crate::report::{Doc, Format, Kind, Rendered, FORMATS};

pub use dest::is_stdout;

/// The output options as parsed (the command line builds it): every
/// destination a command was given, before any is checked.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The registered formats given, each with its path (`-`: stdout).
    pub formats: Vec<(&'static Format, PathBuf)>,
    /// `--live`: the per-second stream, a path or `-` for stdout.
    pub live: Option<PathBuf>,
    pub live_format: LiveFormat,
    /// `--live-interval`: each stream line's span (default 1 s).
    pub live_interval: std::time::Duration,
    /// `--metrics`: the OpenMetrics text file rewritten every second.
    pub metrics: Option<PathBuf>,
    /// `--histogram`: each target's latency distribution as text, after the table.
    pub histogram: bool,
    /// `--rows`: the text table's worker rows at most (`None`: all).
    pub rows: Option<usize>,
    /// `--fio-log`: fio's logs, and every file they are written to.
    pub fio_log: Option<FioLogs>,
    /// `--iolog-write`: the file the run's iolog is written to (by the
    /// run; checked here as every output is, before the run begins).
    pub iolog: Option<PathBuf>,
    /// `--history`, `--no-history`: where each target's result is recorded.
    pub history: history::Where,
}

/// `--fio-log`: what is asked, and the files, known before the run (one
/// set per worker) so that each is checked as any output is.
#[derive(Debug, Clone)]
pub struct FioLogs {
    pub spec: crate::report::fio_log::Spec,
    pub files: Vec<PathBuf>,
}

impl Request {
    /// The path given to the format of `flag`, if it was given.
    pub fn path(&self, flag: &str) -> Option<&Path> {
        self.formats
            .iter()
            .find(|(f, _)| f.flag() == flag)
            .map(|(_, p)| p.as_path())
    }

    /// Gives `flag` the path `path` (or takes it away): for the commands
    /// whose own flags are not the registered ones (plan, merge, diff).
    pub fn set(&mut self, flag: &str, path: Option<PathBuf>) {
        self.formats.retain(|(f, _)| f.flag() != flag);
        if let (Some(f), Some(p)) = (crate::report::format(flag), path) {
            self.formats.push((f, p));
            // Written, and checked, in the registry's order.
            self.formats
                .sort_by_key(|(f, _)| FORMATS.iter().position(|g| g.option == f.option));
        }
    }

    /// Just `--json PATH` (merge, diff, plan).
    pub fn json(path: Option<&Path>) -> Request {
        let mut r = Request::default();
        r.set("json", path.map(Path::to_path_buf));
        r
    }

    /// The one rule for stdout: it is taken when any output names `-`
    /// (a document format or `--live`). The table, and every other text
    /// for the user, then goes to stderr, so that stdout carries the one
    /// document a pipe asked for and nothing else. (`--plot` and
    /// `--metrics` cannot name `-`: refused before.)
    pub fn stdout_taken(&self) -> bool {
        self.formats
            .iter()
            .map(|(_, p)| p.as_path())
            .chain(self.live.as_deref())
            .any(is_stdout)
    }

    /// The outputs were checked against the targets' names before the run
    /// began; checked again against what the targets resolved to (`files`:
    /// device and inode), so a target name that moved in between cannot
    /// make a report land on the file it now reaches.
    pub fn refuse_on_files(&self, files: &[(u64, u64)]) -> Result<(), UsageError> {
        use std::os::unix::fs::MetadataExt;
        for o in self.all().iter().filter(|o| !is_stdout(o.path)) {
            if let Ok(m) = std::fs::metadata(o.path) {
                if files.contains(&(m.dev(), m.ino())) {
                    return Err(UsageError(format!(
                        "cannot write {} {}: it is a target (or behind one) of this command: writing the report would replace it; name another file",
                        o.option,
                        show_path(o.path)
                    )));
                }
            }
        }
        Ok(())
    }

    /// Every destination, as the checks and messages name it.
    fn all(&self) -> Vec<dest::Output<'_>> {
        let mut v: Vec<dest::Output> = self
            .formats
            .iter()
            .map(|(f, p)| dest::Output::new(f.option, p))
            .collect();
        v.extend(
            self.live
                .as_deref()
                .map(|p| dest::Output::stream("--live", p)),
        );
        v.extend(
            self.metrics
                .as_deref()
                .map(|p| dest::Output::new("--metrics", p)),
        );
        for p in self.fio_log.iter().flat_map(|l| &l.files) {
            v.push(dest::Output::new("--fio-log", p));
        }
        v.extend(
            self.iolog
                .as_deref()
                .map(|p| dest::Output::new("--iolog-write", p)),
        );
        v
    }
}

/// Every destination of one command, checked.
#[derive(Debug)]
pub struct Outputs {
    req: Request,
    kind: Kind,
    dests: dest::Destinations,
}

/// Warnings said before a command has its outputs (what killed runs left
/// behind, a run's warnings before it measures): a line each on stderr,
/// `stripebench: warning: ` and the sentence, escaped.
pub fn warn(warnings: &[Warning]) {
    for w in warnings {
        eprintln!("stripebench: warning: {}", show_text(&w.to_string()));
    }
}

/// A line on stderr, as [`Outputs::note`] says it, for a command that
/// has no outputs of its own to check (`report` writes one file).
pub fn note(line: &str) {
    // Not eprintln!: a closed or full stderr must not turn a note into a
    // panic. One write for the line, so that another thread's does not
    // land inside it.
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
}

/// Makes [`note`] the writer of the layers below's notices
/// ([`crate::base::notice`]: a signal, a lock wait, a test bed being
/// written, a setting not put back). Called before a command runs.
pub fn install_notices() {
    crate::base::notice::install(|n| note(&n.to_string()));
}

impl Outputs {
    /// Checks every destination of `req` before any I/O, for a command
    /// whose document is of `kind`: a format's own check of its path
    /// (`--plot` names an .svg), then [`dest::check`]. `targets` are the
    /// paths the run reads or writes and the files behind them, `inputs`
    /// the documents it reads: no output may land on one of them.
    pub fn check(
        req: Request,
        kind: Kind,
        targets: &[PathBuf],
        inputs: &[PathBuf],
    ) -> Result<Outputs> {
        for (f, p) in &req.formats {
            if !f.renders(kind) {
                return Err(UsageError(format!(
                    "{} does not apply to this command's document: drop it",
                    f.option
                ))
                .into());
            }
            if let Some(check) = f.check_path {
                check(p).map_err(UsageError)?;
            }
        }
        let dests = dest::check(&req.all(), targets, inputs)?;
        Ok(Outputs { req, kind, dests })
    }

    /// The request these outputs were checked from.
    pub fn request(&self) -> &Request {
        &self.req
    }

    /// See [`Request::stdout_taken`]: the one rule, for every command.
    pub fn stdout_taken(&self) -> bool {
        self.req.stdout_taken()
    }

    /// Text for the user (the table, a sweep's rows): stdout, or stderr
    /// when stdout carries a document.
    pub fn say(&self, text: &str) {
        stdout::say(text, self.stdout_taken());
    }

    /// A line for the user about the command's progress (a phase starting,
    /// a setting applied, a note before anything is measured): always on
    /// stderr, whatever stdout carries, so that a document on stdout stays
    /// whole and a script reading stderr sees it as it happens.
    pub fn note(&self, line: &str) {
        note(line);
    }

    /// Opens `--live` and `--metrics`: the hub every run of the command
    /// hands its seconds to (`None` without either).
    pub fn live_hub(&self) -> Result<Option<LiveHub>> {
        live::open(
            self.req.live.as_deref(),
            self.req.live_format,
            self.req.live_interval,
            self.req.metrics.as_deref(),
            &self.dests,
        )
    }

    /// What one measured run of the command reaches: `hub` (the live hub,
    /// labelled with the point or phase in progress), and the check of the
    /// outputs against the targets once they are resolved.
    pub fn for_run(&self, hub: Option<LiveHub>) -> ForRun<'_> {
        ForRun { outputs: self, hub }
    }

    /// Every format given, rendered from `doc` and written whole, in the
    /// registry's order (a plot is said on stderr once written). One that
    /// fails (a full file system) stops none of the others: each failure is
    /// said in its own line, and when the JSON document was not written
    /// where asked, it is rescued ([`Outputs::rescue`]) so that nothing
    /// measured is lost. Then the error says how many failed and where the
    /// document is (exit 1).
    pub fn write(&self, doc: Doc) -> Result<()> {
        self.check_kind(doc)?;
        let mut failed = 0;
        let mut json_written = false;
        for (f, p) in &self.req.formats {
            match self.put(f, p, doc, true) {
                Ok(written) => {
                    json_written |= f.flag() == "json";
                    if written && f.announce {
                        eprintln!("{}: {}", f.flag(), show_path(p));
                    }
                }
                Err(e) => {
                    failed += 1;
                    eprintln!("stripebench: error: {e:#}");
                }
            }
        }
        let logs = self.write_fio_logs(doc);
        failed += logs.iter().filter(|r| r.is_err()).count();
        for e in logs.iter().filter_map(|r| r.as_ref().err()) {
            eprintln!("stripebench: error: {e:#}");
        }
        if failed == 0 {
            return Ok(());
        }
        let kept = if json_written {
            "the JSON document was written".to_string()
        } else {
            self.rescue(doc)
        };
        anyhow::bail!(
            "{failed} of {} outputs could not be written (each is said above); {kept}",
            self.req.formats.len() + logs.len()
        )
    }

    /// `--fio-log`'s files of a run, each written whole: one result per
    /// file (a run document's only; the files were checked before it).
    fn write_fio_logs(&self, doc: Doc) -> Vec<Result<()>> {
        let (Some(logs), Doc::Run(d)) = (&self.req.fio_log, doc) else {
            return Vec::new();
        };
        crate::report::fio_log::render(d, &logs.spec)
            .into_iter()
            .map(|(path, text)| self.dests.write_file_text(&path, &text))
            .collect()
    }

    /// The JSON document of `doc`, kept when the outputs asked for could
    /// not be written: a new file in the state directory (on tmpfs, /run,
    /// where the file system that filled up is seldom), else stdout when no
    /// document takes it, else stderr. Says where it went.
    fn rescue(&self, doc: Doc) -> String {
        let rendered = crate::report::format("json").map(|f| (f.render)(doc));
        let Some(Ok(Rendered::Bytes(json))) = rendered else {
            return "the JSON document could not be rendered".into();
        };
        let secs = std::time::UNIX_EPOCH.elapsed().map_or(0, |d| d.as_secs());
        let kept = crate::device::state::state_dir().and_then(|dir| {
            crate::device::state::create_state_dir(&dir)?;
            let path = dir.join(format!("rescued-{}-{secs}.json", std::process::id()));
            crate::device::state::write_new_whole(&path, &json)?;
            Ok(path)
        });
        match kept {
            Ok(path) => format!("the JSON document is kept in {} instead", show_path(&path)),
            Err(_) if !self.stdout_taken() => {
                stdout::bytes(&json);
                "the JSON document is written to stdout instead".into()
            }
            Err(_) => {
                eprint!("{}", String::from_utf8_lossy(&json));
                "the JSON document is written to stderr instead".into()
            }
        }
    }

    /// After each point of a sweep: the formats that keep what finished
    /// (`--json`, `--csv`) rewritten whole, files only (stdout gets the
    /// document once, at the end).
    pub fn save_point(&self, doc: Doc) -> Result<()> {
        self.check_kind(doc)?;
        for (f, p) in self.req.formats.iter().filter(|(f, _)| f.per_point) {
            if !is_stdout(p) {
                self.put(f, p, doc, false)?;
            }
        }
        Ok(())
    }

    /// `bytes` to the file of format `flag`, when it was given one (not
    /// stdout): the answer of a run that a signal stopped before it measured.
    pub fn write_file(&self, flag: &str, bytes: &[u8]) -> Result<()> {
        match self.req.path(flag) {
            Some(p) if !is_stdout(p) => self.dests.write_file(p, bytes),
            _ => Ok(()),
        }
    }

    /// See [`Request::refuse_on_files`].
    pub fn refuse_on_files(&self, files: &[(u64, u64)]) -> Result<(), UsageError> {
        self.req.refuse_on_files(files)
    }

    fn check_kind(&self, doc: Doc) -> Result<()> {
        if doc.kind() != self.kind {
            anyhow::bail!(
                "internal error: outputs checked for a {:?} document were given a {:?} one; please report it",
                self.kind,
                doc.kind()
            );
        }
        Ok(())
    }

    /// One format's rendering of `doc` to `path`; whether anything was written.
    fn put(&self, f: &Format, path: &Path, doc: Doc, allow_stdout: bool) -> Result<bool> {
        let written = match (f.render)(doc)? {
            Rendered::Nothing => return Ok(false),
            Rendered::Bytes(b) if allow_stdout => self.dests.write(path, &b),
            Rendered::Bytes(b) => self.dests.write_file(path, &b),
            Rendered::Text(t) if allow_stdout => self.dests.write_text(path, &t),
            Rendered::Text(t) => self.dests.write_file_text(path, &t),
        };
        written.map(|()| true)
    }
}

/// The outputs as one measured run sees them ([`Outputs::for_run`]).
pub struct ForRun<'a> {
    outputs: &'a Outputs,
    hub: Option<LiveHub>,
}

impl RunOutputs for ForRun<'_> {
    fn live(&self) -> Option<&LiveHub> {
        self.hub.as_ref()
    }

    fn refuse_on_files(&self, files: &[(u64, u64)]) -> Result<(), UsageError> {
        self.outputs.refuse_on_files(files)
    }

    fn warn(&self, warnings: &[Warning]) {
        warn(warnings);
    }
}

/// The outputs asked for, before they are checked: what a dry run that
/// comes before the check (a sweep's guard of its points) sees, with no hub.
impl RunOutputs for Request {
    fn live(&self) -> Option<&LiveHub> {
        None
    }

    fn refuse_on_files(&self, files: &[(u64, u64)]) -> Result<(), UsageError> {
        Request::refuse_on_files(self, files)
    }

    fn warn(&self, warnings: &[Warning]) {
        warn(warnings);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(formats: &[(&str, &str)], live: Option<&str>) -> Request {
        let mut r = Request::default();
        for (flag, p) in formats {
            r.set(flag, Some(PathBuf::from(p)));
        }
        r.live = live.map(PathBuf::from);
        r
    }

    #[test]
    fn stdout_is_taken_by_any_output_on_dash_and_by_nothing_else() {
        assert!(!req(&[], None).stdout_taken());
        assert!(!req(&[("json", "a.json"), ("csv", "a.csv")], Some("l")).stdout_taken());
        for flag in ["json", "csv", "html"] {
            assert!(req(&[(flag, "-")], None).stdout_taken(), "--{flag} -");
        }
        assert!(
            req(&[("json", "a.json")], Some("-")).stdout_taken(),
            "--live -"
        );
        // --metrics is never stdout (refused before): it takes nothing.
        let mut m = req(&[], None);
        m.metrics = Some(PathBuf::from("-"));
        assert!(!m.stdout_taken());
    }

    #[test]
    fn formats_keep_the_registry_order_whatever_order_they_were_given_in() {
        let r = req(&[("html", "h"), ("json", "j"), ("plot", "p.svg")], None);
        let flags: Vec<&str> = r.formats.iter().map(|(f, _)| f.flag()).collect();
        assert_eq!(flags, ["json", "plot", "html"]);
        assert_eq!(r.path("plot"), Some(Path::new("p.svg")));
    }

    #[test]
    fn a_format_is_checked_for_its_kind_and_its_path_before_any_io() {
        let d = tempfile::tempdir().unwrap();
        let svg = d.path().join("x.png");
        let e = Outputs::check(
            req(&[("plot", svg.to_str().unwrap())], None),
            Kind::Run,
            &[],
            &[],
        )
        .unwrap_err();
        assert!(e.to_string().contains("--plot writes SVG"), "{e}");
        let e =
            Outputs::check(req(&[("csv", "x.csv")], None), Kind::Compare, &[], &[]).unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some(), "{e}");
        assert!(std::fs::read_dir(d.path()).unwrap().next().is_none());
    }

    #[test]
    fn a_sweep_point_rewrites_the_files_that_keep_what_finished() {
        let d = tempfile::tempdir().unwrap();
        let (j, h) = (d.path().join("s.json"), d.path().join("s.html"));
        let r = req(
            &[("json", j.to_str().unwrap()), ("html", h.to_str().unwrap())],
            None,
        );
        let out = Outputs::check(r, Kind::Sweep, &[], &[]).unwrap();
        let doc = crate::document::sweep::SweepDocument {
            schema_version: crate::document::run::SCHEMA_VERSION,
            tool: crate::document::run::ToolInfo::this(),
            params: Vec::new(),
            repeat: 1,
            interrupted: false,
            points: Vec::new(),
        };
        out.save_point(Doc::Sweep(&doc)).unwrap();
        assert_eq!(
            std::fs::read(&j).unwrap(),
            crate::report::json::render(&doc)
        );
        assert!(!h.exists(), "HTML is written once, at the end");
        // A document of another kind is refused, not written.
        assert!(out
            .write(Doc::Run(&crate::report::fixtures::sample_doc()))
            .is_err());
    }
}
