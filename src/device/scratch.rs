//! The built-in test bed: scratch files for a run that names no target. Each
//! file is fully written with incompressible data (not sparse, so reads reach
//! the device), flushed, and dropped from the page cache; the directory is
//! removed when the test bed is dropped and, if the process is made to quit,
//! by the signal handler.
//!
//! A SIGKILL leaves it behind, for `stripebench restore`, which removes only
//! what carries the proof that a run made it: a marker file in the test bed
//! holding a random token that the run also put in its record in the state
//! directory. The run holds a lock on the marker while it lives, so a live
//! run's test bed is never taken for an orphan, whatever has its PID.

use crate::base::path::open_component;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::base::io::{splitmix64, Rng};
use crate::base::signals;

/// The built-in test bed used when no target is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestbedConfig {
    pub dir: PathBuf,
    pub files: usize,
    pub file_size: u64,
}

/// Scratch files that exist for one run.
#[derive(Debug)]
pub struct Testbed {
    dir: PathBuf,
    /// The record of it in the state directory, removed with it.
    record: Option<PathBuf>,
    /// The marker, open and locked for as long as the test bed is ours.
    _marker: Option<File>,
    pub files: Vec<PathBuf>,
}

/// Why the test bed cannot be made where asked: the user's to fix with
/// --dir or a smaller bed (exit 2). `dir` is the directory as shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TestbedError {
    #[error("test-bed directory {dir} is not a directory: choose a directory with --dir")]
    NotADirectory { dir: String },
    #[error("test-bed directory {dir} does not exist: create it or choose another with --dir")]
    Missing { dir: String },
    /// `what` names the bed, `fix` what to do in the command's options.
    #[error("{what} needs {need} in {dir} but only {free} is free: {fix}")]
    NoRoom {
        what: String,
        need: String,
        dir: String,
        free: String,
        fix: String,
    },
    /// `link` is [`crate::base::path::WalkError::planted_text`]'s.
    #[error("test-bed directory {dir}: {link}; choose a directory of your own with --dir")]
    PlantedLink { dir: String, link: String },
    /// `why` is [`crate::base::path::others_may_rename`]'s.
    #[error("test-bed directory {dir}: {why}; choose a directory of your own with --dir")]
    OthersMayRename { dir: String, why: String },
    #[error(
        "cannot create the test bed in {dir} ({error}): choose a writable directory with --dir"
    )]
    Uncreatable { dir: String, error: String },
}

impl crate::base::error::ExitCoded for TestbedError {
    fn exit_code(&self) -> u8 {
        crate::base::error::EXIT_USAGE
    }
}

impl Testbed {
    /// Creates `cfg.files` files of `cfg.file_size` bytes under `cfg.dir`,
    /// saying so on stderr first with `what` ("the built-in test bed");
    /// `fix` is what to do when it does not fit, in the command's own options.
    pub fn create(cfg: &TestbedConfig, seed: u64, what: &str, fix: &str) -> Result<Testbed> {
        // Walked without following another user's link (TMPDIR through a
        // link of theirs would choose where root creates and writes), then
        // used by its real path only.
        let base = {
            use crate::base::path::WalkError;
            let dir = crate::base::error::show_path(&cfg.dir);
            match crate::base::path::real_dir(&cfg.dir) {
                Ok(real) => real,
                Err(WalkError::Planted { at, owner }) => {
                    return Err(TestbedError::PlantedLink {
                        dir,
                        link: WalkError::planted_text(&at, owner),
                    }
                    .into())
                }
                Err(WalkError::Sys(nix::errno::Errno::ENOENT)) => {
                    return Err(TestbedError::Missing { dir }.into())
                }
                Err(WalkError::Sys(nix::errno::Errno::ENOTDIR)) => {
                    return Err(TestbedError::NotADirectory { dir }.into())
                }
                Err(WalkError::Sys(e)) => {
                    return Err(TestbedError::Uncreatable {
                        dir,
                        error: e.desc().to_string(),
                    }
                    .into())
                }
            }
        };
        if let Some(why) = crate::base::path::others_may_rename(&base) {
            return Err(TestbedError::OthersMayRename {
                dir: crate::base::error::show_path(&cfg.dir),
                why,
            }
            .into());
        }
        let dir = base.join(format!(
            "stripebench-testbed-{}-{:08x}",
            std::process::id(),
            seed as u32
        ));
        let free = free_bytes(&base).unwrap_or(u64::MAX);
        let need = cfg.file_size.saturating_mul(cfg.files as u64);
        if need > free {
            return Err(TestbedError::NoRoom {
                what: what.to_string(),
                need: crate::base::units::fmt_bytes(need),
                dir: crate::base::error::show_path(&cfg.dir),
                free: crate::base::units::fmt_bytes(free),
                fix: fix.to_string(),
            }
            .into());
        }
        crate::base::notice::say(&crate::base::notice::Notice::CreatingTestbed {
            what: what.to_string(),
            files: cfg.files,
            file_size: crate::base::units::fmt_bytes(cfg.file_size),
            dir: crate::base::error::show_path(&cfg.dir),
        });
        fs::create_dir(&dir).map_err(|e| TestbedError::Uncreatable {
            dir: crate::base::error::show_path(&cfg.dir),
            error: e.to_string(),
        })?;
        signals::register_cleanup(dir.clone());
        let token = random_token();
        let marker = write_marker(&dir, &token).ok();
        // Recorded where `stripebench restore` looks, so that a SIGKILL, which
        // no handler sees, does not leave it behind unmentioned.
        let state = crate::device::knobs::state_dir()?;
        let record = state.join(format!("testbed-{}.path", std::process::id()));
        let doc = serde_json::to_vec(&Record {
            dir: dir.clone(),
            token: Some(token),
        })?;
        let record = marker
            .is_some()
            .then(|| {
                crate::device::knobs::create_state_dir(&state)
                    .and_then(|()| crate::device::knobs::write_new_whole(&record, &doc))
                    .ok()
                    .map(|()| record)
            })
            .flatten();
        let mut bed = Testbed {
            dir,
            record,
            _marker: marker,
            files: Vec::new(),
        };
        bed.files = (0..cfg.files)
            .map(|i| bed.dir.join(format!("file{i}")))
            .collect();
        bed.files
            .par_iter()
            .enumerate()
            .try_for_each(|(i, p)| fill_file(p, cfg.file_size, splitmix64(seed ^ i as u64)))?;
        if signals::interrupted() {
            return Err(crate::base::error::Interrupted(
                "while creating the test bed (nothing was measured; it was removed)",
            )
            .into());
        }
        Ok(bed)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        // The record goes first: while the directory is being removed its
        // marker is gone, and a concurrent run's preflight that still found
        // the record would call this live run's test bed left behind (it
        // re-reads the record after finding the marker unheld: see `left`).
        if let Some(r) = &self.record {
            let _ = fs::remove_file(r);
        }
        let _ = fs::remove_dir_all(&self.dir);
        signals::unregister_cleanup(&self.dir);
    }
}

/// The marker's name inside a test bed.
const MARKER: &str = ".stripebench-testbed";

/// A record in the state directory: which test bed, and the token its
/// marker holds.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Record {
    dir: PathBuf,
    /// None in records from before markers (a bare path): never removed.
    token: Option<String>,
}

/// 128 random bits, in hex.
fn random_token() -> String {
    let mut b = [0u8; 16];
    // SAFETY: getrandom writes at most b.len() bytes into b, which we own.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != b.len() as isize {
        // No getrandom: the kernel's pool through the file, else time and PID
        // (unguessable enough for a marker only root's state names).
        let ok = File::open("/dev/urandom").and_then(|mut f| {
            use std::io::Read;
            f.read_exact(&mut b)
        });
        if ok.is_err() {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            b[..8].copy_from_slice(&splitmix64(t ^ u64::from(std::process::id())).to_le_bytes());
            b[8..].copy_from_slice(&splitmix64(t.rotate_left(17)).to_le_bytes());
        }
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Writes the marker (a new file) and takes its lock.
fn write_marker(dir: &Path, token: &str) -> std::io::Result<File> {
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(dir.join(MARKER))?;
    f.write_all(token.as_bytes())?;
    crate::device::state::hold(&f)?;
    Ok(f)
}

/// A test bed a killed run left: where its record is, and what it says.
#[derive(Debug)]
pub struct Left {
    record: PathBuf,
    pub dir: PathBuf,
    token: Option<String>,
}

/// Test beds left by killed runs: records whose test bed no live run holds
/// (its marker is not locked). Liveness is the marker's lock, never the PID
/// in the record's name. Only directories named like ours are returned.
pub fn pending(state_dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    left(state_dir)
        .into_iter()
        .map(|l| (l.record, l.dir))
        .collect()
}

fn left(state_dir: &Path) -> Vec<Left> {
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(rd) = fs::read_dir(state_dir) else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid: u32 = name
                .strip_prefix("testbed-")?
                .strip_suffix(".path")?
                .parse()
                .ok()?;
            let bytes = crate::device::state::read_trusted(&e.path()).ok()?;
            let rec = serde_json::from_slice::<Record>(&bytes).unwrap_or_else(|_| Record {
                dir: PathBuf::from(
                    <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(&bytes),
                ),
                token: None,
            });
            let ours = rec.dir.file_name().is_some_and(|n| {
                n.to_string_lossy()
                    .starts_with(&format!("stripebench-testbed-{pid}-"))
            });
            if !ours {
                return None;
            }
            // Non-blocking: a FIFO planted at the marker's name must not
            // hang every run's preflight.
            let live = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(rec.dir.join(MARKER))
                .is_ok_and(|m| crate::device::state::is_held(&m));
            // A run that ends removes its record before its test bed: a
            // record that is gone by now was a run ending, not a killed one.
            let still_recorded =
                crate::device::state::read_trusted(&e.path()).is_ok_and(|now| now == bytes);
            (!live && still_recorded).then_some(Left {
                record: e.path(),
                dir: rec.dir,
                token: rec.token,
            })
        })
        .collect()
}

/// `stripebench restore`: removes the test beds killed runs left behind,
/// each only if its marker holds the token of its record; (what was
/// removed, what was refused or failed).
pub fn remove_pending(state_dir: &Path) -> (Vec<String>, Vec<String>) {
    let mut done = Vec::new();
    let mut failed = Vec::new();
    for l in left(state_dir) {
        match remove_marked(&l) {
            Ok(true) => {
                let _ = fs::remove_file(&l.record);
                done.push(format!(
                    "removed the test bed a killed run left: {}",
                    l.dir.display()
                ));
            }
            Ok(false) => {
                let _ = fs::remove_file(&l.record);
                done.push(format!(
                    "the test bed a killed run left is gone already: {}",
                    l.dir.display()
                ));
            }
            Err(why) => {
                // The record is dropped: it proves nothing, and would warn forever.
                let _ = fs::remove_file(&l.record);
                failed.push(format!(
                    "left {} alone: {why} (its record {} was dropped; remove the directory yourself if a run of yours left it)",
                    l.dir.display(),
                    l.record.display()
                ));
            }
        }
    }
    (done, failed)
}

/// Removes the test bed `l` names if it carries the marker with its token,
/// through descriptors: the directory is opened without following a link,
/// the marker read inside it, and only the files a test bed holds are
/// unlinked from it. Ok(false): there was nothing there.
fn remove_marked(l: &Left) -> std::result::Result<bool, String> {
    let Some(token) = &l.token else {
        return Err(
            "its record carries no marker token (it predates markers, or is not ours)".into(),
        );
    };
    let (Some(parent), Some(name)) = (l.dir.parent(), l.dir.file_name()) else {
        return Err("it names no directory".into());
    };
    let parent =
        File::open(parent).map_err(|e| format!("cannot open {}: {e}", parent.display()))?;
    let dir =
        match open_component(&parent, name, libc::O_RDONLY | libc::O_DIRECTORY).map(File::from) {
            Ok(d) => d,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(false),
            Err(e) => return Err(format!("it is a symbolic link or cannot be opened ({e})")),
        };
    let mut found = String::new();
    open_component(&dir, std::ffi::OsStr::new(MARKER), libc::O_RDONLY)
        .map(File::from)
        .and_then(|mut m| {
            use std::io::Read;
            (&mut m).take(256).read_to_string(&mut found)
        })
        .map_err(|e| format!("it carries no stripebench marker ({e})"))?;
    if found.trim() != token {
        return Err("its marker does not hold the token its record holds".into());
    }
    // Only names a test bed holds: fileN and the marker.
    let names: Vec<std::ffi::OsString> = fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd()))
        .map_err(|e| format!("cannot list it: {e}"))?
        .flatten()
        .map(|e| e.file_name())
        .collect();
    for n in &names {
        let s = n.to_string_lossy();
        let known = s == MARKER
            || s.strip_prefix("file")
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()));
        if !known {
            return Err(format!("it holds {s}, which no test bed holds"));
        }
    }
    for n in &names {
        unlinkat(&dir, n, 0).map_err(|e| format!("cannot remove {}: {e}", n.to_string_lossy()))?;
    }
    unlinkat(&parent, name, libc::AT_REMOVEDIR)
        .map_err(|e| format!("cannot remove the directory: {e}"))?;
    Ok(true)
}

/// `unlinkat(dir, name, flags)`: never follows a link (it removes names).
fn unlinkat(dir: &File, name: &std::ffi::OsStr, flags: libc::c_int) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| std::io::Error::other("a NUL in a name"))?;
    // SAFETY: an open directory descriptor and a NUL-terminated name.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), flags) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn fill_file(path: &Path, size: u64, seed: u64) -> Result<()> {
    fill_new(path, size, seed, "test-bed file").map(|_| ())
}

/// Makes `path`, a new file (never one that exists: `O_EXCL`, which
/// follows no symlink), `size` bytes of random data, flushed and out of
/// the page cache; `what` names it in errors. Returns the file made, as
/// (device, inode): what it is, whatever its path later names.
/// How `--create` lays a missing file out (fio's layout, and its
/// fallocate= for a job that only writes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CreateLayout {
    /// Every byte written with random data (fio's layout of a file a job
    /// reads).
    #[default]
    Fill,
    /// Its size set and nothing written or allocated: all holes (fio's
    /// fallocate=none or truncate for a job that only writes, and
    /// create_on_open=1).
    Sparse,
    /// Its blocks allocated and not written (unwritten extents, which read
    /// as zeros): fio's fallocate=native or posix for a job that only writes.
    Allocate,
}

impl CreateLayout {
    pub fn name(self) -> &'static str {
        match self {
            CreateLayout::Fill => "fill",
            CreateLayout::Sparse => "sparse",
            CreateLayout::Allocate => "allocate",
        }
    }
}

/// A new file at `path` of `size` bytes laid out as `layout`: written with
/// `seed`'s random data ([`fill_new`]), or sized and left sparse, or its
/// blocks allocated; its (device, inode).
fn make_new(
    path: &Path,
    size: u64,
    seed: u64,
    layout: CreateLayout,
    what: &str,
) -> Result<(u64, u64)> {
    if layout == CreateLayout::Fill {
        return fill_new(path, size, seed, what);
    }
    let (f, made_as) = create_own(path, what)?;
    if layout == CreateLayout::Allocate {
        // SAFETY: the fd is open for writing; fallocate reads no memory.
        let r = unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, size as libc::off_t) };
        if r != 0 {
            return Err(std::io::Error::last_os_error()).with_context(|| {
                format!(
                    "cannot allocate {what} {} (--create-layout allocate)",
                    path.display()
                )
            });
        }
    } else {
        f.set_len(size)
            .with_context(|| format!("cannot size {what} {}", path.display()))?;
    }
    Ok(made_as)
}

/// A file made here and nowhere else (O_EXCL), with the (device, inode)
/// it was made as.
fn create_own(path: &Path, what: &str) -> Result<(File, (u64, u64))> {
    let f: File = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create {what} {}", path.display()))?;
    let made_as = f
        .metadata()
        .map(|m| (m.dev(), m.ino()))
        .with_context(|| format!("cannot stat {what} {}", path.display()))?;
    Ok((f, made_as))
}

fn fill_new(path: &Path, size: u64, seed: u64, what: &str) -> Result<(u64, u64)> {
    let (mut f, made_as) = create_own(path, what)?;
    let mut rng = Rng::new(seed);
    let mut chunk = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        if signals::interrupted() {
            return Ok(made_as);
        }
        let n = left.min(chunk.len() as u64) as usize;
        rng.fill(&mut chunk[..n]);
        f.write_all(&chunk[..n])
            .with_context(|| format!("cannot write {what} {}", path.display()))?;
        left -= n as u64;
    }
    f.sync_all()
        .with_context(|| format!("cannot flush {what} {}", path.display()))?;
    // Drop the pages we just wrote, so the first buffered read reaches the device.
    // SAFETY: the fd is open; fadvise only gives the kernel a hint.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    Ok(made_as)
}

/// Bytes free for an unprivileged writer in the file system holding `dir`.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let s = nix::sys::statvfs::statvfs(dir).ok()?;
    Some(s.blocks_available() as u64 * s.fragment_size() as u64)
}

/// The targets `--create` made in this process, as named: a later run of
/// the same command (the next stonewall group of a job file) writes to
/// them as to files stripebench created; a file made by an earlier
/// command is not among them, and the write guard's consent holds for it.
/// Each with the file it made, (device, inode).
static CREATED: std::sync::Mutex<Vec<(PathBuf, (u64, u64))>> = std::sync::Mutex::new(Vec::new());

/// `--create SIZE` (fio's `filesize=` on a `filename=` that is not
/// there): each of `paths` that does not exist is made, `size` bytes of
/// random data (fio lays a missing file out before it reads it); the ones
/// made, in order. One that exists is left as it is.
pub fn create_missing(
    paths: &[PathBuf],
    size: u64,
    seed: u64,
    layout: CreateLayout,
) -> Result<Vec<PathBuf>> {
    let mut made = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        match fs::symlink_metadata(p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            _ => continue,
        }
        let made_as = make_new(
            p,
            size,
            splitmix64(seed ^ i as u64),
            layout,
            "--create file",
        )?;
        CREATED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((p.clone(), made_as));
        made.push(p.clone());
    }
    Ok(made)
}

/// The files a `--fill-device` run of this process fills (marked when its
/// run is checked): their size is known only once filled, so the checks
/// of a later run over them (the next stonewall group of a job file, fio's
/// surface-scan.fio reading back what it wrote) are that run's own.
static FILLED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Marks `paths` as filled by a `--fill-device` run of this process.
pub fn mark_filled(paths: &[PathBuf]) {
    let mut filled = FILLED.lock().unwrap_or_else(|e| e.into_inner());
    filled.extend(paths.iter().cloned());
}

/// Whether every one of `paths` is a file a `--fill-device` run of this
/// process fills (see [`mark_filled`]).
pub fn all_filled_here(paths: &[PathBuf]) -> bool {
    let filled = FILLED.lock().unwrap_or_else(|e| e.into_inner());
    !paths.is_empty() && paths.iter().all(|p| filled.contains(p))
}

/// Whether every one of `paths` was made by [`create_missing`] in this
/// process and still names the file made (the same device and inode, not
/// a link): then writing to them needs no --allow-destructive. A path
/// that another file or a link took the place of since is not ours.
pub fn all_created_here(paths: &[PathBuf]) -> bool {
    let made = CREATED.lock().unwrap_or_else(|e| e.into_inner());
    !paths.is_empty()
        && paths.iter().all(|p| {
            let now = fs::symlink_metadata(p)
                .ok()
                .filter(|m| m.file_type().is_file())
                .map(|m| (m.dev(), m.ino()));
            now.is_some() && made.iter().any(|(q, id)| q == p && Some(*id) == now)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparse_created_file_has_its_size_and_no_block() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sparse");
        create_missing(std::slice::from_ref(&p), 1 << 20, 1, CreateLayout::Sparse).unwrap();
        let m = fs::metadata(&p).unwrap();
        assert_eq!((m.len(), m.blocks()), (1 << 20, 0));
        assert!(all_created_here(std::slice::from_ref(&p)));
        let q = dir.path().join("allocated");
        match create_missing(std::slice::from_ref(&q), 1 << 20, 1, CreateLayout::Allocate) {
            Ok(_) => {
                let m = fs::metadata(&q).unwrap();
                assert_eq!(m.len(), 1 << 20);
                assert!(m.blocks() >= 2048, "{}", m.blocks());
                assert!(fs::read(&q).unwrap().iter().all(|&b| b == 0));
            }
            // A file system without fallocate: said, not a panic.
            Err(e) => assert!(
                format!("{e:#}").contains("--create-layout allocate"),
                "{e:#}"
            ),
        }
    }

    // A path --create made is ours only while it names the file made: one
    // put in its place since (another file, or a link to the file made)
    // is not, and would be written without consent if it counted.
    #[test]
    fn a_created_path_is_ours_only_while_it_names_the_file_made() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("made");
        let made = create_missing(std::slice::from_ref(&p), 4096, 1, CreateLayout::Fill).unwrap();
        assert_eq!(made, std::slice::from_ref(&p));
        assert!(all_created_here(std::slice::from_ref(&p)));
        // A link to the file made, in its place.
        let kept = dir.path().join("kept");
        fs::rename(&p, &kept).unwrap();
        std::os::unix::fs::symlink(&kept, &p).unwrap();
        assert!(!all_created_here(std::slice::from_ref(&p)));
        // Another file of the same name.
        fs::remove_file(&p).unwrap();
        fs::write(&p, b"someone else's").unwrap();
        assert!(!all_created_here(std::slice::from_ref(&p)));
        // A path never made.
        assert!(!all_created_here(&[dir.path().join("never")]));
    }

    /// A process records one test bed (`testbed-PID.path`): the tests that
    /// create one take turns.
    static ONE_BED: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn creates_full_files_and_removes_them() {
        let _one = ONE_BED.lock().unwrap_or_else(|e| e.into_inner());
        let tmp = tempfile::tempdir().unwrap();
        let cfg = TestbedConfig {
            dir: tmp.path().to_path_buf(),
            files: 3,
            file_size: 1 << 20,
        };
        let bed = Testbed::create(&cfg, 5, "a test bed", "-").unwrap();
        let dir = bed.dir().to_path_buf();
        assert_eq!(bed.files.len(), 3);
        for f in &bed.files {
            let m = fs::metadata(f).unwrap();
            assert_eq!(m.len(), 1 << 20);
            // Fully allocated, not sparse.
            assert!(m.blocks() * 512 >= 1 << 20);
        }
        let a = fs::read(&bed.files[0]).unwrap();
        let b = fs::read(&bed.files[1]).unwrap();
        assert_ne!(a, b);
        drop(bed);
        assert!(!dir.exists());
    }

    #[test]
    fn a_run_ending_beside_a_preflight_is_not_called_killed() {
        // Regression: a run's test bed was removed before its record, so a
        // concurrent run's preflight saw a record whose marker was gone and
        // warned that a killed run had left its test bed behind.
        let _one = ONE_BED.lock().unwrap_or_else(|e| e.into_inner());
        let tmp = tempfile::tempdir().unwrap();
        let state = crate::device::knobs::state_dir().unwrap();
        let cfg = TestbedConfig {
            dir: tmp.path().to_path_buf(),
            files: 1,
            file_size: 1 << 16,
        };
        let bed = Testbed::create(&cfg, 9, "a test bed", "-").unwrap();
        let dir = bed.dir().to_path_buf();
        let ours = |state: &Path| pending(state).iter().any(|(_, d)| *d == dir);
        let record = bed.record.clone().expect("recorded");
        assert!(!ours(&state), "a live run's bed is not pending");
        drop(bed);
        assert!(!record.exists(), "the record went with the test bed");
        assert!(!ours(&state));
        // The race itself: beds created and dropped while another thread
        // runs a preflight's check over and over; it never names one.
        let stop = std::sync::atomic::AtomicBool::new(false);
        let seen = std::thread::scope(|s| {
            let watcher = s.spawn(|| {
                let mut seen = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    seen += pending(&state)
                        .iter()
                        .filter(|(_, d)| d.starts_with(tmp.path()))
                        .count();
                }
                seen
            });
            for seed in 0..100 {
                drop(Testbed::create(&cfg, seed, "a test bed", "-").unwrap());
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            watcher.join().unwrap()
        });
        assert_eq!(seen, 0, "a live run's ending was called a killed run");
        // A killed run: the record stays, the marker is no longer held.
        let state = tmp.path().join("state");
        fs::create_dir(&state).unwrap();
        let dir = tmp.path().join("stripebench-testbed-4242-00000001");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join(MARKER), "t").unwrap();
        let rec = serde_json::to_vec(&Record {
            dir: dir.clone(),
            token: Some("t".into()),
        })
        .unwrap();
        fs::write(state.join("testbed-4242.path"), rec).unwrap();
        assert_eq!(
            pending(&state).len(),
            1,
            "a killed run's bed is still named"
        );
    }

    #[test]
    fn a_missing_directory_is_a_usage_error() {
        let cfg = TestbedConfig {
            dir: "/nonexistent/x".into(),
            files: 1,
            file_size: 1 << 20,
        };
        let e = Testbed::create(&cfg, 1, "a test bed", "-").unwrap_err();
        assert!(matches!(
            e.downcast_ref::<TestbedError>(),
            Some(TestbedError::Missing { .. })
        ));
        assert_eq!(crate::commands::exit::exit_code_for(&e), 2);
    }
}
