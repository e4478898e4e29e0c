//! The built-in test bed: scratch files for a run that names no target. Each
//! file is fully written with incompressible data (not sparse, so reads reach
//! the device), flushed, and dropped from the page cache; the directory is
//! removed when the test bed is dropped and, if the process is made to quit,
//! by the signal handler.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
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
    pub files: Vec<PathBuf>,
}

impl Testbed {
    /// Creates `cfg.files` files of `cfg.file_size` bytes under `cfg.dir`,
    /// saying so on stderr first with `what` ("the built-in test bed");
    /// `fix` is what to do when it does not fit, in the command's own options.
    pub fn create(cfg: &TestbedConfig, seed: u64, what: &str, fix: &str) -> Result<Testbed> {
        if !cfg.dir.is_dir() {
            return crate::base::error::usage(if cfg.dir.exists() {
                format!(
                    "test-bed directory {} is not a directory: choose a directory with --dir",
                    cfg.dir.display()
                )
            } else {
                format!(
                    "test-bed directory {} does not exist: create it or choose another with --dir",
                    cfg.dir.display()
                )
            });
        }
        let dir = cfg.dir.join(format!(
            "stripebench-testbed-{}-{:08x}",
            std::process::id(),
            seed as u32
        ));
        let free = free_bytes(&cfg.dir).unwrap_or(u64::MAX);
        let need = cfg.file_size.saturating_mul(cfg.files as u64);
        if need > free {
            return crate::base::error::usage(format!(
                "{what} needs {} in {} but only {} is free: {fix}",
                crate::base::units::fmt_bytes(need),
                cfg.dir.display(),
                crate::base::units::fmt_bytes(free)
            ));
        }
        eprintln!(
            "stripebench: creating {what}: {} file(s) of {} in {}",
            cfg.files,
            crate::base::units::fmt_bytes(cfg.file_size),
            cfg.dir.display()
        );
        fs::create_dir(&dir).map_err(|e| {
            crate::base::error::UsageError(format!(
                "cannot create the test bed in {} ({e}): choose a writable directory with --dir",
                cfg.dir.display()
            ))
        })?;
        signals::register_cleanup(dir.clone());
        // Recorded where `stripebench restore` looks, so that a SIGKILL, which
        // no handler sees, does not leave it behind unmentioned.
        let record =
            crate::device::knobs::state_dir().join(format!("testbed-{}.path", std::process::id()));
        let record = crate::device::knobs::create_state_dir(&crate::device::knobs::state_dir())
            .and_then(|()| {
                crate::device::knobs::write_new(&record, dir.as_os_str().as_encoded_bytes())
            })
            .ok()
            .map(|()| record);
        let mut bed = Testbed {
            dir,
            record,
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
        let _ = fs::remove_dir_all(&self.dir);
        signals::unregister_cleanup(&self.dir);
        if let Some(r) = &self.record {
            let _ = fs::remove_file(r);
        }
    }
}

/// Test beds left by killed runs: (record, directory), for records whose
/// process is gone. Only directories named like ours are ever returned.
pub fn pending(state_dir: &Path) -> Vec<(PathBuf, PathBuf)> {
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
            if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
                return None;
            }
            let dir = PathBuf::from(fs::read_to_string(e.path()).ok()?);
            let ours = dir.file_name().is_some_and(|n| {
                n.to_string_lossy()
                    .starts_with(&format!("stripebench-testbed-{pid}-"))
            });
            ours.then_some((e.path(), dir))
        })
        .collect()
}

/// `stripebench restore`: removes the test beds killed runs left behind.
pub fn remove_pending(state_dir: &Path) -> Vec<String> {
    pending(state_dir)
        .into_iter()
        .map(|(record, dir)| {
            let r = if dir.exists() {
                fs::remove_dir_all(&dir)
            } else {
                Ok(())
            };
            match r {
                Ok(()) => {
                    let _ = fs::remove_file(&record);
                    format!("removed the test bed a killed run left: {}", dir.display())
                }
                Err(e) => format!("could not remove the test bed {}: {e}", dir.display()),
            }
        })
        .collect()
}

fn fill_file(path: &Path, size: u64, seed: u64) -> Result<()> {
    let mut f: File = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create test-bed file {}", path.display()))?;
    let mut rng = Rng::new(seed);
    let mut chunk = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        if signals::interrupted() {
            return Ok(());
        }
        let n = left.min(chunk.len() as u64) as usize;
        rng.fill(&mut chunk[..n]);
        f.write_all(&chunk[..n])
            .with_context(|| format!("cannot write test-bed file {}", path.display()))?;
        left -= n as u64;
    }
    f.sync_all()
        .with_context(|| format!("cannot flush test-bed file {}", path.display()))?;
    // Drop the pages we just wrote, so the first buffered read reaches the device.
    // SAFETY: the fd is open; fadvise only gives the kernel a hint.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    Ok(())
}

/// Bytes free for an unprivileged writer in the file system holding `dir`.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let s = nix::sys::statvfs::statvfs(dir).ok()?;
    Some(s.blocks_available() as u64 * s.fragment_size() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_full_files_and_removes_them() {
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
            assert!(std::os::unix::fs::MetadataExt::blocks(&m) * 512 >= 1 << 20);
        }
        let a = fs::read(&bed.files[0]).unwrap();
        let b = fs::read(&bed.files[1]).unwrap();
        assert_ne!(a, b);
        drop(bed);
        assert!(!dir.exists());
    }

    #[test]
    fn a_missing_directory_is_a_usage_error() {
        let cfg = TestbedConfig {
            dir: "/nonexistent/x".into(),
            files: 1,
            file_size: 1 << 20,
        };
        let e = Testbed::create(&cfg, 1, "a test bed", "-").unwrap_err();
        assert!(e.downcast_ref::<crate::base::error::UsageError>().is_some());
    }
}
