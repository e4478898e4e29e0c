//! Where reports go: every output path a command will write (`--json`,
//! `--csv`, `--plot`, ...) is checked before the first I/O, and each is
//! written whole or not at all (a temporary file beside it, renamed into
//! place). Standard output is written without panicking: a closed or full
//! stdout is said once on stderr and the files are still written.
//!
//! The checks refuse, with exit 2 and one line:
//! - a block or character device, a directory, a FIFO or socket;
//! - a path that is a target, or shares an inode with one (hard links and
//!   symlinks too), or with a file that backs a target (a loop device's image);
//! - two outputs on one path, or two on stdout;
//! - a path whose directory is missing or refuses a new file, or an existing
//!   file that cannot be opened for writing (read-only, immutable).

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};

use crate::base::error::{show_lines, show_path, UsageError};

/// (`st_dev`, `st_ino`): a file by identity, whatever its name.
type Inode = (u64, u64);

/// One output a command was asked to write: the option that named it and its path.
#[derive(Debug, Clone, Copy)]
pub struct Output<'a> {
    pub option: &'static str,
    pub path: &'a Path,
    /// A stream written as it goes (`--live`): a FIFO is taken too.
    pub stream: bool,
}

impl<'a> Output<'a> {
    pub fn new(option: &'static str, path: &'a Path) -> Self {
        Output {
            option,
            path,
            stream: false,
        }
    }

    /// A stream written as it goes (`--live`): a FIFO (a reader waiting on
    /// it) is taken as well as a file.
    pub fn stream(option: &'static str, path: &'a Path) -> Self {
        Output {
            option,
            path,
            stream: true,
        }
    }

    fn is_stdout(&self) -> bool {
        is_stdout(self.path)
    }
}

/// The outputs of a command that were given, by option name.
pub fn given<'a>(list: &[(&'static str, Option<&'a Path>)]) -> Vec<Output<'a>> {
    list.iter()
        .filter_map(|(o, p)| p.map(|p| Output::new(o, p)))
        .collect()
}

/// Checks every output before any I/O. `protected` are the paths the run
/// reads or writes (targets, files behind them, input documents): no output
/// may land on one of them.
pub fn check(outputs: &[Output], protected: &[PathBuf]) -> Result<(), UsageError> {
    let stdout: Vec<&Output> = outputs.iter().filter(|o| o.is_stdout()).collect();
    if stdout.len() > 1 {
        return Err(UsageError(format!(
            "{} - and {} - both want stdout: send one of them to a file",
            stdout[0].option, stdout[1].option
        )));
    }
    let protected_inodes: Vec<(PathBuf, (u64, u64))> = protected
        .iter()
        .filter_map(|p| {
            let m = fs::metadata(p).ok()?;
            Some((p.clone(), (m.dev(), m.ino())))
        })
        .collect();
    let mut seen: Vec<(&Output, PathBuf, Option<Inode>)> = Vec::new();
    for o in outputs.iter().filter(|o| !o.is_stdout()) {
        let (place, inode) = check_one(o, &protected_inodes)?;
        if let Some((other, _, _)) = seen
            .iter()
            .find(|(_, p, i)| *p == place || (inode.is_some() && *i == inode))
        {
            return Err(UsageError(format!(
                "{} {} and {} {} name the same file: give each output its own path",
                other.option,
                show_path(other.path),
                o.option,
                show_path(o.path)
            )));
        }
        seen.push((o, place, inode));
    }
    Ok(())
}

/// Checks one file output; returns where it will land and its inode if it exists.
fn check_one(
    o: &Output,
    protected: &[(PathBuf, (u64, u64))],
) -> Result<(PathBuf, Option<(u64, u64)>), UsageError> {
    let shown = show_path(o.path);
    let refuse = |why: String| {
        Err(UsageError(format!(
            "cannot write {} {shown}: {why}",
            o.option
        )))
    };
    if o.path.as_os_str().is_empty() {
        return refuse("the path is empty; name a file, or - for stdout".into());
    }
    let meta = fs::metadata(o.path).ok();
    if let Some(m) = meta
        .as_ref()
        .filter(|m| o.stream && m.file_type().is_fifo())
    {
        return Ok((landing(o.path), Some((m.dev(), m.ino()))));
    }
    if let Some(m) = &meta {
        let ft = m.file_type();
        let what = if ft.is_block_device() {
            Some("it is a block device")
        } else if ft.is_char_device() {
            Some("it is a character device")
        } else if ft.is_dir() {
            Some("it is a directory")
        } else if ft.is_fifo() || ft.is_socket() {
            Some("it is not a regular file")
        } else {
            None
        };
        if let Some(what) = what {
            return refuse(format!(
                "{what}; reports go to regular files (or - for stdout): name a file"
            ));
        }
        if let Some(stream) = std_stream(m.dev(), m.ino()) {
            return refuse(format!(
                "it is this process's {stream}: replacing it would destroy what it holds; use - for stdout, or name a file"
            ));
        }
        if let Some((p, _)) = protected.iter().find(|(_, i)| *i == (m.dev(), m.ino())) {
            let same = if fs::canonicalize(p).ok() == fs::canonicalize(o.path).ok() {
                "it is".to_string()
            } else {
                format!("it is the same file as {}, which is", show_path(p))
            };
            return refuse(format!(
                "{same} a target (or behind one) of this command: writing the report would replace it; name another file"
            ));
        }
        if let Err(e) = OpenOptions::new().write(true).open(o.path) {
            return refuse(format!("{e}"));
        }
    }
    let place = landing(o.path);
    let dir = place.parent().unwrap_or(Path::new("."));
    if !dir.is_dir() {
        let why = if dir.exists() {
            format!("{} is not a directory", show_path(dir))
        } else {
            format!("directory {} does not exist", show_path(dir))
        };
        return refuse(why);
    }
    // The name itself must fit (the report is renamed to it at the end).
    if place.file_name().is_some_and(|n| n.len() > 255) {
        return refuse("its file name is longer than 255 bytes: choose a shorter name".into());
    }
    // Proof that the report can be created there: a temporary file as the
    // real write makes it, removed at once.
    match create_temporary(dir) {
        Ok((_, probe)) => {
            let _ = fs::remove_file(&probe);
        }
        Err(e) => return refuse(format!("cannot create a file in {}: {e}", show_path(dir))),
    }
    Ok((place, meta.map(|m| (m.dev(), m.ino()))))
}

/// Which of this process's standard streams is the file (`dev`, `ino`):
/// `/dev/stdout`, `/proc/self/fd/1` or the log file that `>> log` opened.
fn std_stream(dev: u64, ino: u64) -> Option<&'static str> {
    [
        (0, "standard input"),
        (1, "standard output"),
        (2, "standard error"),
    ]
    .into_iter()
    .find(|&(fd, _)| nix::sys::stat::fstat(fd).is_ok_and(|st| (st.st_dev, st.st_ino) == (dev, ino)))
    .map(|(_, name)| name)
}

/// Where a report for `path` is renamed to: the file a symlink points at,
/// or the path itself made absolute.
fn landing(path: &Path) -> PathBuf {
    if let Ok(real) = fs::canonicalize(path) {
        return real;
    }
    let parent = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
    match path.file_name() {
        Some(name) => dir.join(name),
        None => path.to_path_buf(),
    }
}

/// Writes `bytes` to `path` whole: into a temporary file beside it, flushed,
/// then renamed into place, so a failure never leaves half a report (and
/// never writes through into whatever the path named before).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    replace(path, bytes, true)
}

/// [`write_file`] without the fsync: for a file rewritten every second
/// (`--metrics`), whose readers need it whole, not durable.
pub fn replace_file(path: &Path, bytes: &[u8]) -> Result<()> {
    replace(path, bytes, false)
}

fn replace(path: &Path, bytes: &[u8], sync: bool) -> Result<()> {
    let place = landing(path);
    let dir = place.parent().unwrap_or(Path::new("."));
    let (mut f, tmp) =
        create_temporary(dir).with_context(|| format!("cannot write {}", show_path(path)))?;
    let result = (|| -> std::io::Result<()> {
        f.write_all(bytes)?;
        if sync {
            f.sync_data()?;
        }
        fs::rename(&tmp, &place)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write {}", show_path(path)))
}

/// A new file in `dir` under a name nobody can have prepared: created with
/// O_EXCL (which also refuses to follow a symlink planted at that name) and
/// a fresh random suffix on every try.
fn create_temporary(dir: &Path) -> std::io::Result<(fs::File, PathBuf)> {
    let mut last = None;
    for attempt in 0..16u64 {
        let nanos = std::time::UNIX_EPOCH
            .elapsed()
            .map_or(0, |d| d.as_nanos() as u64);
        let tag =
            crate::base::io::splitmix64(nanos ^ (u64::from(std::process::id()) << 20) ^ attempt);
        let tmp = dir.join(format!(".stripebench-{tag:016x}.tmp"));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no temporary name")))
}

/// `-` names stdout, for every output option.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// [`write`] for a text rendering (CSV, HTML, SVG, a table): its control
/// characters but newlines and tabs escaped ([`show_lines`]), whatever
/// field they came from. JSON goes through [`write`] as it is: serde
/// escapes it, and its strings keep the real text.
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    write(path, show_lines(text).as_bytes())
}

/// [`write_file`] for a text rendering, as [`write_text`].
pub fn write_file_text(path: &Path, text: &str) -> Result<()> {
    write_file(path, show_lines(text).as_bytes())
}

/// [`replace_file`] for a text rendering, as [`write_text`].
pub fn replace_file_text(path: &Path, text: &str) -> Result<()> {
    replace_file(path, show_lines(text).as_bytes())
}

/// [`stdout`] for text, as [`write_text`].
pub fn stdout_text(text: &str) {
    stdout(show_lines(text).as_bytes());
}

/// Writes `bytes` to `path`, or to stdout when the path is `-`.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    if is_stdout(path) {
        stdout(bytes);
        Ok(())
    } else {
        write_file(path, bytes)
    }
}

/// `println!` that never panics: see [`stdout`].
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::report::output::stdout_text(&format!("{}\n", format_args!($($t)*)))
    };
}

static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes to stdout; a closed pipe or a full disk is said once on stderr
/// (the run goes on, and its files are still written) instead of a panic.
pub fn stdout(bytes: &[u8]) {
    if STDOUT_FAILED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        STDOUT_FAILED.store(true, Ordering::Relaxed);
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            // `| head`: the reader has what it wanted; say nothing more.
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
        } else {
            eprintln!("stripebench: error: cannot write to stdout ({e}); files named with --json, --csv or --plot are still written");
        }
    }
}

/// Text for the user: to stdout, or to stderr when stdout carries a document.
pub fn say(text: &str, stdout_taken: bool) {
    if stdout_taken {
        eprint!("{}", show_lines(text));
    } else {
        stdout_text(text);
    }
}

/// Whether writing to stdout failed at some point (the exit code says so).
pub fn stdout_failed() -> bool {
    STDOUT_FAILED.load(Ordering::Relaxed)
}

/// Whether stdout's reader went away (EPIPE): the exit status is then 141,
/// as a process killed by SIGPIPE would report.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out<'a>(o: &'static str, p: &'a Path) -> Output<'a> {
        Output::new(o, p)
    }

    #[test]
    fn output_on_a_device_is_refused() {
        let e = check(&[out("--json", Path::new("/dev/null"))], &[]).unwrap_err();
        assert!(e.0.contains("character device"), "{e}");
    }

    #[test]
    fn output_on_a_target_or_its_hard_link_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("t.dat");
        fs::write(&t, b"data").unwrap();
        let link = d.path().join("link.dat");
        fs::hard_link(&t, &link).unwrap();
        let e = check(&[out("--json", &t)], std::slice::from_ref(&t)).unwrap_err();
        assert!(e.0.contains("it is a target"), "{e}");
        let e = check(&[out("--csv", &link)], std::slice::from_ref(&t)).unwrap_err();
        assert!(e.0.contains("same file as"), "{e}");
        assert_eq!(fs::read(&t).unwrap(), b"data");
    }

    #[test]
    fn two_outputs_on_one_path_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let x = d.path().join("x");
        let e = check(&[out("--json", &x), out("--csv", &x)], &[]).unwrap_err();
        assert!(e.0.contains("name the same file"), "{e}");
        let e = check(
            &[out("--json", Path::new("-")), out("--csv", Path::new("-"))],
            &[],
        )
        .unwrap_err();
        assert!(e.0.contains("both want stdout"), "{e}");
        // Through a symlink to the same place.
        fs::write(&x, b"").unwrap();
        let l = d.path().join("l");
        std::os::unix::fs::symlink(&x, &l).unwrap();
        assert!(check(&[out("--json", &x), out("--csv", &l)], &[]).is_err());
    }

    #[test]
    fn output_in_a_missing_or_unwritable_directory_is_refused() {
        let e = check(&[out("--json", Path::new("/nonexistent-dir/x.json"))], &[]).unwrap_err();
        assert!(e.0.contains("does not exist"), "{e}");
        let e = check(&[out("--json", Path::new("/proc/version"))], &[]).unwrap_err();
        assert!(e.0.contains("/proc/version"), "{e}");
        let d = tempfile::tempdir().unwrap();
        let e = check(&[out("--json", d.path())], &[]).unwrap_err();
        assert!(e.0.contains("is a directory"), "{e}");
    }

    #[test]
    fn write_file_replaces_whole_and_leaves_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        fs::write(&p, b"old old old old").unwrap();
        write_file(&p, b"new").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        let names: Vec<_> = fs::read_dir(d.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1);
        // Through a symlink: the file it points at is replaced, the link stays.
        let l = d.path().join("l.json");
        std::os::unix::fs::symlink(&p, &l).unwrap();
        write_file(&l, b"via link").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"via link");
        assert!(fs::symlink_metadata(&l).unwrap().file_type().is_symlink());
    }
}
