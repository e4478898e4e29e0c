//! The files reports go to: every output path a command will write
//! (`--json`, `--csv`, `--plot`, `--live`, `--metrics`, ...) is checked
//! before the first I/O, and each is written whole or not at all (a
//! temporary file beside it, renamed into place). Stdout is
//! [`crate::output::stdout`]'s.
//!
//! The checks refuse, with exit 2 and one line:
//! - a symbolic link as the file's own name (the link is not followed: a
//!   link planted in /tmp by another user would aim the report at a file
//!   of that user's choosing);
//! - a block or character device, a directory, a FIFO or socket;
//! - a path that is a target or an input document, or shares an inode with
//!   one (hard links too), or with a file that backs a target (a loop
//!   device's image);
//! - two outputs on one path, or two on stdout;
//! - a path whose directory is missing or refuses a new file, or an existing
//!   file that cannot be opened for writing (read-only, immutable).
//!
//! And `-` on a stdout that is closed fails with exit 1: the document would
//! be lost.
//!
//! [`check`] opens each output's directory once and keeps the descriptor
//! ([`Destinations`]): every write after it, the last one and each rewrite
//! (`--metrics` every second, sweep's save after every point, the `--live`
//! file), creates its temporary with `O_CREAT|O_EXCL|O_NOFOLLOW` in that
//! directory and renames it onto the name with `renameat`, after looking at
//! what the name holds now (`fstatat`, not following a link): a name that
//! became a link, or the same file as a target or an input (by device and
//! inode), is not replaced. A rename replaces a name, never the file a link
//! points to, so whatever a link does between the look and the rename, no
//! other file's bytes change.

use std::ffi::{CString, OsString};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{FileStat, Mode, SFlag};

use crate::base::error::{show_lines, show_path, UsageError};
use crate::base::path::WalkError as DirError;

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

/// A file no output may become, and why.
#[derive(Debug)]
struct Kept {
    path: PathBuf,
    inode: Inode,
    /// "a target (or behind one)" or "an input".
    role: &'static str,
}

/// The outputs [`check`] accepted, each with its directory open: where
/// every write of the command goes. Cheap to clone (shared).
#[derive(Debug, Clone, Default)]
pub struct Destinations {
    files: Vec<Arc<Destination>>,
}

/// One output file: its directory, held open from the check to the last
/// write, and its name in it.
#[derive(Debug)]
pub struct Destination {
    option: &'static str,
    /// The path as given (what messages show, and what callers look it up by).
    given: PathBuf,
    /// `O_PATH|O_DIRECTORY`: the directory as it was when checked, whatever
    /// is renamed or linked on the way to it later.
    dir: OwnedFd,
    name: CString,
    kept: Arc<Vec<Kept>>,
    /// Room taken on the output's file system when it was checked: a
    /// temporary file allocated to [`reserve_bytes`], which the first write
    /// fills (then trims), so a file system that fills up during the run
    /// does not lose the report. `None` once used, or for a stream.
    reserved: std::sync::Mutex<Option<(File, CString)>>,
}

/// What a document of a command over `targets` targets may need on disk,
/// reserved for each file output before the run: a run document is some
/// 10 KiB plus a few KiB a target, its HTML and SVG some 50 KiB; a sweep or
/// compare multiplies that by its points. A generous floor and a share per
/// target, bounded: a larger report that finds the disk full is still
/// rescued (see `Outputs::write`).
pub fn reserve_bytes(targets: usize) -> u64 {
    (256u64 << 10)
        .saturating_add((targets as u64).saturating_mul(32 << 10))
        .min(64 << 20)
}

impl Drop for Destination {
    fn drop(&mut self) {
        // A reservation never used (the command failed before writing):
        // its temporary goes.
        let left = self.reserved.get_mut().ok().and_then(Option::take);
        if let Some((_, tmp)) = left {
            self.unlink(&tmp);
        }
    }
}

/// Checks every output before any I/O. `targets` are the paths the run
/// reads or writes (and the files behind them), `inputs` the documents the
/// command reads: no output may land on one of them.
///
/// Each file output is given [`reserve_bytes`] of room on its file system
/// now: a file system without it is refused before the run.
pub fn check(outputs: &[Output], targets: &[PathBuf], inputs: &[PathBuf]) -> Result<Destinations> {
    let reserve = reserve_bytes(targets.len());
    let stdout: Vec<&Output> = outputs.iter().filter(|o| o.is_stdout()).collect();
    if stdout.len() > 1 {
        return Err(UsageError(format!(
            "{} - and {} - both want stdout: send one of them to a file",
            stdout[0].option, stdout[1].option
        ))
        .into());
    }
    if let Some(o) = stdout.first() {
        if stdout_is_closed() {
            // Not the command line's fault: exit 1, as for a failed write.
            anyhow::bail!(
                "stdout is closed (started with >&-): {} - has nowhere to go; open stdout, or give {} a file",
                o.option,
                o.option
            );
        }
    }
    let kept: Vec<Kept> = targets
        .iter()
        .map(|p| (p, "a target (or behind one)"))
        .chain(inputs.iter().map(|p| (p, "an input")))
        .filter_map(|(p, role)| {
            let st = nix::sys::stat::stat(p).ok()?;
            Some(Kept {
                path: p.clone(),
                inode: (st.st_dev, st.st_ino),
                role,
            })
        })
        .collect();
    let kept = Arc::new(kept);
    let mut seen: Vec<(&Output, Inode, Option<Inode>, OsString)> = Vec::new();
    let mut files = Vec::new();
    for o in outputs.iter().filter(|o| !o.is_stdout()) {
        let (dest, dir_inode, inode) = check_one(o, &kept, reserve)?;
        let name = OsString::from_vec(dest.name.as_bytes().to_vec());
        if let Some((other, ..)) = seen.iter().find(|(_, d, i, n)| {
            (*d == dir_inode && *n == name) || (inode.is_some() && *i == inode)
        }) {
            return Err(UsageError(format!(
                "{} {} and {} {} name the same file: give each output its own path",
                other.option,
                show_path(other.path),
                o.option,
                show_path(o.path)
            ))
            .into());
        }
        seen.push((o, dir_inode, inode, name));
        files.push(Arc::new(dest));
    }
    Ok(Destinations { files })
}

/// Whether stdout was closed when we started (`>&-`): Rust's runtime then
/// opens /dev/null in its place, read-write (a shell's `> /dev/null` opens
/// it write-only), and every write "succeeds". A stdout opened with
/// `1<>/dev/null` looks the same and is taken for closed too.
fn stdout_is_closed() -> bool {
    let Ok(st) = nix::sys::stat::fstat(1) else {
        return true;
    };
    let null = SFlag::from_bits_truncate(st.st_mode & libc::S_IFMT) == SFlag::S_IFCHR
        && st.st_rdev == libc::makedev(1, 3);
    // SAFETY: fcntl(F_GETFL) on fd 1 reads its flags; no memory is passed.
    let flags = unsafe { libc::fcntl(1, libc::F_GETFL) };
    null && flags >= 0 && flags & libc::O_ACCMODE == libc::O_RDWR
}

/// What a file's type is, for a refusal; `None` for a regular file.
fn kind_of(st: &FileStat) -> Option<&'static str> {
    match SFlag::from_bits_truncate(st.st_mode & libc::S_IFMT) {
        SFlag::S_IFREG => None,
        SFlag::S_IFBLK => Some("it is a block device"),
        SFlag::S_IFCHR => Some("it is a character device"),
        SFlag::S_IFDIR => Some("it is a directory"),
        SFlag::S_IFLNK => Some("it is a symbolic link"),
        _ => Some("it is not a regular file"),
    }
}

fn is_fifo(st: &FileStat) -> bool {
    SFlag::from_bits_truncate(st.st_mode & libc::S_IFMT) == SFlag::S_IFIFO
}

fn is_symlink(st: &FileStat) -> bool {
    SFlag::from_bits_truncate(st.st_mode & libc::S_IFMT) == SFlag::S_IFLNK
}

/// Checks one file output; returns it with its directory open, the
/// directory's inode and the file's inode if it exists.
fn check_one(
    o: &Output,
    kept: &Arc<Vec<Kept>>,
    reserve: u64,
) -> Result<(Destination, Inode, Option<Inode>)> {
    let shown = show_path(o.path);
    let refuse = |why: String| -> anyhow::Error {
        UsageError(format!("cannot write {} {shown}: {why}", o.option)).into()
    };
    let bytes = o.path.as_os_str().as_bytes();
    if bytes.is_empty() {
        return Err(refuse(
            "the path is empty; name a file, or - for stdout".into(),
        ));
    }
    let name =
        match o.path.file_name() {
            // "x/" names a directory: Path drops the slash, the kernel would not.
            Some(n) if !bytes.ends_with(b"/") => n,
            _ => return Err(refuse(
                "it names a directory; reports go to regular files (or - for stdout): name a file"
                    .into(),
            )),
        };
    // The name itself must fit (the report is renamed to it at the end).
    if name.len() > 255 {
        return Err(refuse(
            "its file name is longer than 255 bytes: choose a shorter name".into(),
        ));
    }
    let name = CString::new(name.as_bytes())
        .map_err(|_| refuse("the path holds a NUL byte: name a file".into()))?;
    let parent = o
        .path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = open_dir(parent).map_err(|e| {
        refuse(match e {
            DirError::Planted { at, owner } => format!(
                "on the way to it, {}; name a directory of your own",
                DirError::planted_text(&at, owner)
            ),
            DirError::Sys(Errno::ENOENT) => {
                format!("directory {} does not exist", show_path(parent))
            }
            DirError::Sys(Errno::ENOTDIR) => format!("{} is not a directory", show_path(parent)),
            DirError::Sys(e) => format!(
                "cannot open its directory {}: {}",
                show_path(parent),
                e.desc()
            ),
        })
    })?;
    let dir_st = nix::sys::stat::fstat(dir.as_raw_fd()).map_err(|e| refuse(e.desc().into()))?;
    let dest = Destination {
        option: o.option,
        given: o.path.to_path_buf(),
        dir,
        name,
        kept: kept.clone(),
        reserved: std::sync::Mutex::new(None),
    };
    let st = match dest.look() {
        Ok(st) => Some(st),
        Err(Errno::ENOENT) => None,
        Err(e) => return Err(refuse(e.desc().into())),
    };
    if let Some(st) = &st {
        let inode = (st.st_dev, st.st_ino);
        if is_symlink(st) {
            // Where it points is looked at (never opened) only to say the
            // one thing more useful than "a link": that it is our own stdout.
            let stream = nix::sys::stat::stat(o.path)
                .ok()
                .and_then(|t| std_stream(t.st_dev, t.st_ino));
            return Err(refuse(match stream {
                Some(stream) => format!(
                    "it is this process's {stream}: replacing it would destroy what it holds; use - for stdout, or name a file"
                ),
                None => "it is a symbolic link: name the file itself (a link is not followed: whoever made it would choose the file written)".into(),
            }));
        }
        if !(o.stream && is_fifo(st)) {
            if let Some(what) = kind_of(st) {
                return Err(refuse(format!(
                    "{what}; reports go to regular files (or - for stdout): name a file"
                )));
            }
        }
        if let Some(stream) = std_stream(st.st_dev, st.st_ino) {
            return Err(refuse(format!(
                "it is this process's {stream}: replacing it would destroy what it holds; use - for stdout, or name a file"
            )));
        }
        if let Some(k) = dest.kept_as(inode) {
            let same = if dest.is_named(&k.path) {
                "it is".to_string()
            } else {
                format!("it is the same file as {}, which is", show_path(&k.path))
            };
            return Err(refuse(format!(
                "{same} {} of this command: writing the report would replace it; name another file",
                k.role
            )));
        }
        if is_fifo(st) {
            // A stream's FIFO is written where it is: no file is created.
            return Ok((dest, (dir_st.st_dev, dir_st.st_ino), Some(inode)));
        }
        // Read-only, immutable, a running executable: refused now, not
        // after the run. Opened without following, for writing only (no
        // O_TRUNC: nothing is changed).
        dest.open_at(
            dest.name.as_c_str(),
            OFlag::O_WRONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY,
        )
        .map_err(|e| refuse(e.desc().into()))?;
    }
    // Proof that the report can be created there: a temporary file as the
    // real write makes it. A file output keeps it, allocated to the room
    // its report will need (a stream's is removed at once: it is written
    // as it goes).
    let (probe_file, probe) = dest.create_temporary().map_err(|e| {
        refuse(format!(
            "cannot create a file in {}: {}",
            show_path(parent),
            e.desc()
        ))
    })?;
    if o.stream {
        dest.unlink(&probe);
    } else {
        if let Err(why) = allocate(&probe_file, &dest.dir, reserve) {
            dest.unlink(&probe);
            return Err(refuse(format!(
                "{why} in {}: free some space, or name another directory",
                show_path(parent)
            )));
        }
        *dest.reserved.lock().unwrap_or_else(|e| e.into_inner()) = Some((probe_file, probe));
    }
    Ok((
        dest,
        (dir_st.st_dev, dir_st.st_ino),
        st.map(|s| (s.st_dev, s.st_ino)),
    ))
}

/// Allocates `bytes` to `f` (`fallocate`), or where the file system cannot
/// allocate ahead (EOPNOTSUPP), checks that its free room holds them: why
/// not, when it does not.
fn allocate(f: &File, dir: &OwnedFd, bytes: u64) -> std::result::Result<(), String> {
    let kib = bytes >> 10;
    match nix::fcntl::fallocate(
        f.as_raw_fd(),
        nix::fcntl::FallocateFlags::empty(),
        0,
        bytes as libc::off_t,
    ) {
        Ok(()) => Ok(()),
        Err(Errno::ENOSPC) | Err(Errno::EDQUOT) => Err(format!(
            "there is not the room its report needs ({kib} KiB, reserved before the run)"
        )),
        Err(Errno::EOPNOTSUPP) | Err(Errno::ENOSYS) | Err(Errno::EINVAL) => {
            // `O_PATH` descriptors take fstatvfs.
            match nix::sys::statvfs::fstatvfs(dir) {
                Ok(v) if v.blocks_available().saturating_mul(v.fragment_size()) < bytes => Err(
                    format!("there is not the room its report needs ({kib} KiB)"),
                ),
                _ => Ok(()),
            }
        }
        Err(e) => Err(format!("cannot reserve room for its report: {}", e.desc())),
    }
}

/// The directory of an output, opened once as `O_PATH` (it is only ever
/// used to name files in) by [`crate::base::path::open_unplanted`]: a link
/// another user planted in /tmp on the way is not followed, whatever
/// `fs.protected_symlinks` says.
fn open_dir(dir: &Path) -> std::result::Result<OwnedFd, DirError> {
    let fd = crate::base::path::open_unplanted(dir)?;
    let st = nix::sys::stat::fstat(fd.as_raw_fd())?;
    if SFlag::from_bits_truncate(st.st_mode & libc::S_IFMT) != SFlag::S_IFDIR {
        return Err(DirError::Sys(Errno::ENOTDIR));
    }
    Ok(fd)
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

impl Destinations {
    /// The checked output at `path` (as the command was given it).
    pub fn file(&self, path: &Path) -> Result<&Arc<Destination>> {
        self.files.iter().find(|d| d.given == path).ok_or_else(|| {
            anyhow::anyhow!(
                "internal error: {} was not checked as an output; please report it",
                show_path(path)
            )
        })
    }

    /// Writes `bytes` to `path` whole (see [`Destination::replace`]), or to
    /// stdout when the path is `-`.
    pub fn write(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        if is_stdout(path) {
            crate::output::stdout::bytes(bytes);
            Ok(())
        } else {
            self.write_file(path, bytes)
        }
    }

    /// Writes `bytes` to the file output `path` whole, flushed to disk.
    pub fn write_file(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        self.file(path)?.replace(bytes, true)
    }

    /// [`Destinations::write`] for a text rendering (CSV, HTML, SVG, a
    /// table): its control characters but newlines and tabs escaped
    /// ([`show_lines`]), whatever field they came from. JSON goes through
    /// [`Destinations::write`] as it is: serde escapes it, and its strings
    /// keep the real text.
    pub fn write_text(&self, path: &Path, text: &str) -> Result<()> {
        self.write(path, show_lines(text).as_bytes())
    }

    /// [`Destinations::write_file`] for a text rendering, as [`Destinations::write_text`].
    pub fn write_file_text(&self, path: &Path, text: &str) -> Result<()> {
        self.write_file(path, show_lines(text).as_bytes())
    }
}

impl Destination {
    /// The path as given, for messages.
    pub fn shown(&self) -> String {
        show_path(&self.given)
    }

    fn fail(&self, why: impl std::fmt::Display) -> anyhow::Error {
        anyhow::anyhow!("cannot write {} {}: {why}", self.option, self.shown())
    }

    /// What the name holds now, without following a link.
    fn look(&self) -> nix::Result<FileStat> {
        nix::sys::stat::fstatat(
            Some(self.dir.as_raw_fd()),
            self.name.as_c_str(),
            AtFlags::AT_SYMLINK_NOFOLLOW,
        )
    }

    fn kept_as(&self, inode: Inode) -> Option<&Kept> {
        self.kept.iter().find(|k| k.inode == inode)
    }

    /// Whether `path` names this output itself (not another name of its file).
    fn is_named(&self, path: &Path) -> bool {
        let Some(parent) = path.parent() else {
            return false;
        };
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        let same_dir = nix::sys::stat::stat(parent)
            .ok()
            .zip(nix::sys::stat::fstat(self.dir.as_raw_fd()).ok())
            .is_some_and(|(a, b)| (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino));
        same_dir && path.file_name().map(OsStrExt::as_bytes) == Some(self.name.as_bytes())
    }

    /// Why the name may not be replaced now, if it may not: looked at again
    /// before every rename, since anyone who can write the directory can
    /// change it during the run.
    fn refusal(&self) -> Option<String> {
        let st = match self.look() {
            Ok(st) => st,
            Err(Errno::ENOENT) => return None,
            Err(e) => return Some(e.desc().to_string()),
        };
        if is_symlink(&st) {
            return Some(
                "it became a symbolic link after the command checked it: not replaced, and the file the link points to is left alone; name the file itself".into(),
            );
        }
        if let Some(what) = kind_of(&st) {
            return Some(format!(
                "{what} now (the command checked a regular file or nothing there): not replaced"
            ));
        }
        self.kept_as((st.st_dev, st.st_ino)).map(|k| {
            format!(
                "it became the same file as {}, which is {} of this command: not replaced",
                show_path(&k.path),
                k.role
            )
        })
    }

    fn open_at(&self, name: &std::ffi::CStr, flags: OFlag) -> nix::Result<File> {
        let fd = nix::fcntl::openat(
            Some(self.dir.as_raw_fd()),
            name,
            flags | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o666),
        )?;
        // SAFETY: `openat` just returned this descriptor; nothing else owns it.
        Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// A new file in the directory under a name nobody can have prepared:
    /// created with O_EXCL and O_NOFOLLOW (a link planted at that name is
    /// refused, not followed) and a fresh random suffix on every try.
    fn create_temporary(&self) -> nix::Result<(File, CString)> {
        let mut last = Errno::EEXIST;
        for attempt in 0..16u64 {
            let nanos = std::time::UNIX_EPOCH
                .elapsed()
                .map_or(0, |d| d.as_nanos() as u64);
            let tag = crate::base::io::splitmix64(
                nanos ^ (u64::from(std::process::id()) << 20) ^ attempt,
            );
            let Ok(tmp) = CString::new(format!(".stripebench-{tag:016x}.tmp")) else {
                continue;
            };
            match self.open_at(
                &tmp,
                OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW,
            ) {
                Ok(f) => return Ok((f, tmp)),
                Err(Errno::EEXIST) => last = Errno::EEXIST,
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    fn unlink(&self, name: &std::ffi::CStr) {
        let _ = nix::unistd::unlinkat(
            Some(self.dir.as_raw_fd()),
            name,
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        );
    }

    /// Renames the temporary onto the name, unless the name may not be
    /// replaced now (then the temporary is removed).
    fn rename_into_place(&self, tmp: &std::ffi::CStr) -> Result<()> {
        if let Some(why) = self.refusal() {
            self.unlink(tmp);
            return Err(self.fail(why));
        }
        nix::fcntl::renameat(
            Some(self.dir.as_raw_fd()),
            tmp,
            Some(self.dir.as_raw_fd()),
            self.name.as_c_str(),
        )
        .map_err(|e| {
            self.unlink(tmp);
            self.fail(e.desc())
        })
    }

    /// Writes `bytes` whole: into a temporary file in the directory
    /// (flushed to disk when `sync`), then renamed onto the name, so a
    /// failure never leaves half a report and never writes through into
    /// whatever the name held before. Without `sync` for a file rewritten
    /// every second (`--metrics`), whose readers need it whole, not durable.
    pub fn replace(&self, bytes: &[u8], sync: bool) -> Result<()> {
        // The room reserved when the output was checked, for the first
        // write: written from its start and trimmed to what was written.
        let reserved = self
            .reserved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let (mut f, tmp) = match reserved {
            Some(r) => r,
            None => self.create_temporary().map_err(|e| self.fail(e.desc()))?,
        };
        let written = f
            .write_all(bytes)
            .and_then(|()| f.set_len(bytes.len() as u64))
            .and_then(|()| if sync { f.sync_data() } else { Ok(()) });
        if let Err(e) = written {
            self.unlink(&tmp);
            return Err(self.fail(no_space_or(&e, &self.shown())));
        }
        self.rename_into_place(&tmp)
    }

    /// [`Destination::replace`] for a text rendering (`--metrics`): its
    /// control characters but newlines and tabs escaped ([`show_lines`]).
    pub fn replace_text(&self, text: &str, sync: bool) -> Result<()> {
        self.replace(show_lines(text).as_bytes(), sync)
    }

    /// Opens the output for a stream (`--live`): a FIFO where the name is
    /// one (opened non-blocking, without following a link; a FIFO without
    /// a reader is `ENXIO`), else a new empty file renamed onto the name,
    /// so nothing the name held before is truncated or written into.
    pub fn open_stream(&self) -> std::result::Result<File, StreamOpenError> {
        if self.look().is_ok_and(|st| is_fifo(&st)) {
            let f = self
                .open_at(
                    self.name.as_c_str(),
                    OFlag::O_WRONLY | OFlag::O_NONBLOCK | OFlag::O_NOFOLLOW | OFlag::O_NOCTTY,
                )
                .map_err(|e| {
                    if e == Errno::ENXIO {
                        StreamOpenError::NoReader
                    } else {
                        StreamOpenError::Other(self.fail(e.desc()))
                    }
                })?;
            // What was opened is what was looked at: a FIFO still.
            return match nix::sys::stat::fstat(f.as_raw_fd()) {
                Ok(st) if is_fifo(&st) => Ok(f),
                _ => Err(StreamOpenError::Other(
                    self.fail("it stopped being a FIFO after the command checked it"),
                )),
            };
        }
        let (f, tmp) = self
            .create_temporary()
            .map_err(|e| StreamOpenError::Other(self.fail(e.desc())))?;
        self.rename_into_place(&tmp)
            .map_err(StreamOpenError::Other)?;
        Ok(f)
    }
}

/// Why a `--live` file could not be opened.
#[derive(Debug)]
pub enum StreamOpenError {
    /// A FIFO nobody reads yet.
    NoReader,
    Other(anyhow::Error),
}

/// An I/O error as said to the user: a full file system named as such.
pub fn no_space_or(e: &std::io::Error, shown: &str) -> String {
    if e.raw_os_error() == Some(libc::ENOSPC) {
        format!("no space left on the file system of {shown}")
    } else {
        e.to_string()
    }
}

/// `-` names stdout, for every output option.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn out<'a>(o: &'static str, p: &'a Path) -> Output<'a> {
        Output::new(o, p)
    }

    fn refusal(outputs: &[Output], targets: &[PathBuf], inputs: &[PathBuf]) -> String {
        let e = check(outputs, targets, inputs).unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some(), "exit 2: {e}");
        e.to_string()
    }

    #[test]
    fn output_on_a_device_is_refused() {
        let e = refusal(&[out("--json", Path::new("/dev/null"))], &[], &[]);
        assert!(e.contains("character device"), "{e}");
    }

    #[test]
    fn output_on_a_target_an_input_or_their_hard_links_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("t.dat");
        fs::write(&t, b"data").unwrap();
        let link = d.path().join("link.dat");
        fs::hard_link(&t, &link).unwrap();
        let e = refusal(&[out("--json", &t)], std::slice::from_ref(&t), &[]);
        assert!(e.contains("it is a target"), "{e}");
        let e = refusal(&[out("--csv", &link)], std::slice::from_ref(&t), &[]);
        assert!(e.contains("same file as"), "{e}");
        let e = refusal(&[out("--json", &t)], &[], std::slice::from_ref(&t));
        assert!(e.contains("it is an input of this command"), "{e}");
        assert_eq!(fs::read(&t).unwrap(), b"data");
    }

    #[test]
    fn output_on_a_symbolic_link_is_refused_whatever_it_points_to() {
        let d = tempfile::tempdir().unwrap();
        let x = d.path().join("x");
        fs::write(&x, b"keep").unwrap();
        let l = d.path().join("l");
        std::os::unix::fs::symlink(&x, &l).unwrap();
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("nothing"), &dangling).unwrap();
        for p in [&l, &dangling] {
            let e = refusal(&[out("--json", p)], &[], &[]);
            assert!(
                e.contains("is a symbolic link: name the file itself"),
                "{e}"
            );
        }
        assert_eq!(fs::read(&x).unwrap(), b"keep");
        assert!(!d.path().join("nothing").exists());
    }

    #[test]
    fn two_outputs_on_one_path_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let x = d.path().join("x");
        let e = refusal(&[out("--json", &x), out("--csv", &x)], &[], &[]);
        assert!(e.contains("name the same file"), "{e}");
        let e = refusal(
            &[out("--json", Path::new("-")), out("--csv", Path::new("-"))],
            &[],
            &[],
        );
        assert!(e.contains("both want stdout"), "{e}");
        // By another way to the same directory, or a hard link.
        let other = d.path().join(".").join("x");
        assert!(check(&[out("--json", &x), out("--csv", &other)], &[], &[]).is_err());
        fs::write(&x, b"").unwrap();
        let h = d.path().join("h");
        fs::hard_link(&x, &h).unwrap();
        assert!(check(&[out("--json", &x), out("--csv", &h)], &[], &[]).is_err());
    }

    #[test]
    fn output_in_a_missing_or_unwritable_directory_is_refused() {
        let e = refusal(
            &[out("--json", Path::new("/nonexistent-dir/x.json"))],
            &[],
            &[],
        );
        assert!(e.contains("does not exist"), "{e}");
        let e = refusal(&[out("--json", Path::new("/proc/version"))], &[], &[]);
        assert!(e.contains("/proc/version"), "{e}");
        let d = tempfile::tempdir().unwrap();
        let e = refusal(&[out("--json", d.path())], &[], &[]);
        assert!(e.contains("is a directory"), "{e}");
        let slash = d.path().join("new/");
        let e = refusal(&[out("--json", &slash)], &[], &[]);
        assert!(e.contains("names a directory"), "{e}");
    }

    #[test]
    fn a_write_replaces_whole_and_leaves_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        fs::write(&p, b"old old old old").unwrap();
        let dests = check(&[out("--json", &p)], &[], &[]).unwrap();
        dests.write(&p, b"new").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        let names: Vec<_> = fs::read_dir(d.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1);
        // A path that was not checked is not written.
        let other = d.path().join("other.json");
        assert!(dests.write(&other, b"x").is_err());
        assert!(!other.exists());
    }

    #[test]
    fn a_rewrite_never_replaces_a_name_that_became_a_link_or_a_target() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("t.dat");
        fs::write(&t, b"target").unwrap();
        let p = d.path().join("m.prom");
        let dests = check(&[out("--metrics", &p)], std::slice::from_ref(&t), &[]).unwrap();
        let m = dests.file(&p).unwrap();
        m.replace(b"1", false).unwrap();
        // The name becomes a link to the target: not replaced.
        fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(&t, &p).unwrap();
        let e = m.replace(b"2", false).unwrap_err().to_string();
        assert!(e.contains("became a symbolic link"), "{e}");
        assert!(fs::symlink_metadata(&p).unwrap().is_symlink());
        // A hard link to the target: the same file, by inode.
        fs::remove_file(&p).unwrap();
        fs::hard_link(&t, &p).unwrap();
        let e = m.replace(b"3", false).unwrap_err().to_string();
        assert!(e.contains("became the same file as"), "{e}");
        assert_eq!(fs::read(&t).unwrap(), b"target");
        // No temporary left behind by the refusals.
        let names: Vec<_> = fs::read_dir(d.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 2, "{names:?}");
        // Back to a file of its own: rewritten again.
        fs::remove_file(&p).unwrap();
        m.replace(b"4", false).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"4");
    }

    #[test]
    fn the_directory_is_the_one_checked_even_when_its_path_moves() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        fs::create_dir(&a).unwrap();
        let p = a.join("r.json");
        let dests = check(&[out("--json", &p)], &[], &[]).unwrap();
        // The directory's path now leads elsewhere: the write still lands
        // in the directory that was checked.
        let moved = d.path().join("moved");
        fs::rename(&a, &moved).unwrap();
        let elsewhere = d.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &a).unwrap();
        dests.write(&p, b"here").unwrap();
        assert_eq!(fs::read(moved.join("r.json")).unwrap(), b"here");
        assert!(!elsewhere.join("r.json").exists());
    }
}
