//! The built-in test bed: scratch files for a run that names no target. Each
//! file is fully written with incompressible data (not sparse, so reads reach
//! the device), flushed, and dropped from the page cache; the directory is
//! removed when the test bed is dropped and, if the process is made to quit,
//! by the signal handler.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rayon::prelude::*;

use crate::config::TestbedConfig;
use crate::signals;
use crate::workload::{splitmix64, Rng};

/// Scratch files that exist for one run.
#[derive(Debug)]
pub struct Testbed {
    dir: PathBuf,
    pub files: Vec<PathBuf>,
}

impl Testbed {
    /// Creates `cfg.files` files of `cfg.file_size` bytes under `cfg.dir`,
    /// saying so on stderr first with `what` ("the built-in test bed").
    pub fn create(cfg: &TestbedConfig, seed: u64, what: &str) -> Result<Testbed> {
        if !cfg.dir.is_dir() {
            return crate::error::usage(format!(
                "test-bed directory {} does not exist: create it or choose another with --dir",
                cfg.dir.display()
            ));
        }
        eprintln!(
            "stripebench: creating {what}: {} file(s) of {} in {}",
            cfg.files,
            crate::units::fmt_bytes(cfg.file_size),
            cfg.dir.display()
        );
        let dir = cfg.dir.join(format!(
            "stripebench-testbed-{}-{:08x}",
            std::process::id(),
            seed as u32
        ));
        fs::create_dir(&dir)
            .with_context(|| format!("cannot create test-bed directory {}", dir.display()))?;
        signals::register_cleanup(dir.clone());
        let mut bed = Testbed {
            dir,
            files: Vec::new(),
        };
        bed.files = (0..cfg.files)
            .map(|i| bed.dir.join(format!("file{i}")))
            .collect();
        let free = free_bytes(&bed.dir).unwrap_or(u64::MAX);
        let need = cfg.file_size.saturating_mul(cfg.files as u64);
        if need > free {
            bail!(
                "the test bed needs {} in {} but only {} is free: use --dir elsewhere, or a smaller --testbed-size",
                crate::units::fmt_bytes(need),
                cfg.dir.display(),
                crate::units::fmt_bytes(free)
            );
        }
        bed.files
            .par_iter()
            .enumerate()
            .try_for_each(|(i, p)| fill_file(p, cfg.file_size, splitmix64(seed ^ i as u64)))?;
        if signals::interrupted() {
            return Err(crate::error::Interrupted(
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
    }
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
        let bed = Testbed::create(&cfg, 5, "a test bed").unwrap();
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
        let e = Testbed::create(&cfg, 1, "a test bed").unwrap_err();
        assert!(e.downcast_ref::<crate::error::UsageError>().is_some());
    }
}
