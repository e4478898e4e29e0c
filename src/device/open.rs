//! Opening a target: what it is, the write guard's checks for a write
//! (consent, the device's own state, every alias of its bytes), the open
//! with the right flags, and the proof that the file opened is the one
//! checked.

use super::*;
use crate::base::error::usage;
use anyhow::Result;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Checks, guards and opens one target.
pub fn open(path: &Path, access: Access) -> Result<Target> {
    let shown = crate::base::error::show_path(path);
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return usage(format!(
                "target {shown} does not exist: name an existing block device or file"
            ))
        }
        Err(e) => return usage(format!("cannot inspect target {shown}: {e}")),
    };
    let ft = meta.file_type();
    let kind = if ft.is_block_device() {
        TargetKind::Block
    } else if ft.is_file() {
        TargetKind::File
    } else if ft.is_dir() {
        return usage(format!(
            "target {shown} is a directory: name a block device or a file inside it"
        ));
    } else {
        return usage(format!(
            "target {shown} is neither a block device nor a regular file"
        ));
    };

    // Symlinks such as /dev/disk/by-id/... name the device they point at.
    let real = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let shown = if real != path {
        format!("{shown} (-> {})", crate::base::error::show_path(&real))
    } else {
        shown
    };
    let mut checks = Vec::new();
    if access.write {
        let consent = access.allow_destructive || (kind == TargetKind::File && access.owned);
        let what = match kind {
            TargetKind::Block => format!(
                "refusing to write to block device {shown}: it destroys the data on it; pass --allow-destructive if that is what you want"
            ),
            TargetKind::File => format!(
                "refusing to overwrite {shown}, a file stripebench did not create: pass --allow-destructive if its contents may be destroyed"
            ),
        };
        checks.push(guard::Check {
            name: "consent".into(),
            passed: consent,
            detail: if consent {
                "destructive writes allowed".into()
            } else {
                what.clone()
            },
        });
        if !consent && !access.dry_run {
            return usage(what);
        }
        if kind == TargetKind::Block {
            let size = File::open(path)
                .ok()
                .and_then(|f| {
                    let mut size = 0u64;
                    // SAFETY: the fd is open; the ioctl writes one u64 we own.
                    unsafe { blkgetsize64(f.as_raw_fd(), &mut size) }
                        .ok()
                        .map(|_| size)
                })
                .unwrap_or(0);
            let dev = dev_numbers(meta.rdev());
            let env = guard::GuardEnv::default();
            checks.push(guard::check_writable(&env, &shown, dev));
            checks.extend(guard::check_device(
                &env,
                &real,
                &shown,
                dev,
                size,
                access.force_signature,
            ));
        }
        // Every write, to a device or a file: no other device that reaches
        // the same bytes (a second loop over the image, a loop over this
        // file, the disk under a partition) may be in use.
        let sys = extent::Sys::default();
        if let Some(x) = extent::of_path(&sys, &real) {
            let own = (kind == TargetKind::Block).then(|| dev_numbers(meta.rdev()));
            checks.push(guard::check_aliases(
                &guard::GuardEnv::default(),
                &sys,
                &shown,
                &x,
                own,
            ));
        }
        if !access.dry_run {
            if let Some(c) = checks.iter().find(|c| !c.passed) {
                return usage(format!("refusing to write: {}", c.detail));
            }
        }
    }
    let write = access.write && !access.dry_run;
    if access.write && access.dry_run && kind == TargetKind::Block {
        // The exclusive claim the real run would take, tried and let go at once.
        let r = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(path);
        checks.push(guard::Check {
            name: "exclusive open".into(),
            passed: r.is_ok(),
            detail: match r {
                Ok(_) => "O_EXCL open succeeds: nothing claims the device".into(),
                Err(e) => open_error(path, &e, access).to_string(),
            },
        });
    }

    let mut opts = OpenOptions::new();
    opts.read(true).write(write);
    let mut flags = 0;
    if access.direct {
        flags |= libc::O_DIRECT;
    }
    if write && kind == TargetKind::Block {
        // O_EXCL on a block device: the kernel refuses (EBUSY) when it is
        // mounted or claimed by md, dm, btrfs or another exclusive opener.
        flags |= libc::O_EXCL;
    }
    opts.custom_flags(flags);
    let file = opts.open(path).map_err(|e| open_error(path, &e, access))?;
    // The path was checked, then opened: a symlink (a /dev/disk/by-* link
    // at a hotplug, or one flipped on purpose) may name another file by now.
    // The file opened must be the one checked.
    let opened = file
        .metadata()
        .map_err(|e| anyhow::anyhow!("cannot inspect {shown} once opened: {e}"))?;
    let same = match kind {
        TargetKind::Block => opened.file_type().is_block_device() && opened.rdev() == meta.rdev(),
        TargetKind::File => (opened.dev(), opened.ino()) == (meta.dev(), meta.ino()),
    };
    if !same {
        return usage(format!(
            "refusing {shown}: it changed between its checks and its opening (a symlink that moved?): name the device itself, or run again"
        ));
    }

    let (size, lbs, device) = match kind {
        TargetKind::Block => {
            let mut size = 0u64;
            let mut lbs: libc::c_int = 0;
            // SAFETY: the fd is open for the whole call; each ioctl writes one
            // value of the declared type into memory we own.
            unsafe {
                blkgetsize64(file.as_raw_fd(), &mut size)
                    .map_err(|e| anyhow::anyhow!("cannot read the size of {shown}: {e}"))?;
                blksszget(file.as_raw_fd(), &mut lbs).map_err(|e| {
                    anyhow::anyhow!("cannot read the logical block size of {shown}: {e}")
                })?;
            }
            // The signature is read again through the descriptor that will be
            // written, so what was checked is what is written.
            if write && !access.force_signature {
                // Through /proc/self/fd: the very file opened, without O_DIRECT
                // (whose alignment rules a small read would break).
                let again = File::open(format!("/proc/self/fd/{}", file.as_raw_fd()))
                    .and_then(|f| guard::signature_of(&f, size));
                match again {
                    Ok(None) => {}
                    Ok(Some(sig)) => return usage(format!(
                        "refusing to write: {shown} carries {sig}: writing destroys it; add --force-signature if that is intended"
                    )),
                    Err(e) => return usage(format!(
                        "refusing to write: cannot read {shown} to look for signatures: {e}"
                    )),
                }
            }
            let rdev = meta.rdev();
            (size, lbs.max(512) as u64, Some(dev_numbers(rdev)))
        }
        TargetKind::File => {
            let dev = dev_numbers(meta.dev());
            let lbs = dio_offset_align(&file)
                .or_else(|| sysfs_lbs(Path::new("/sys"), dev))
                .unwrap_or(512);
            (meta.len(), lbs, Some(dev))
        }
    };
    if size == 0 {
        return usage(match kind {
            TargetKind::File => format!(
                "target {shown} is empty: a file target must already hold data (write it first, e.g. with dd)"
            ),
            TargetKind::Block => format!(
                "target {shown} is a block device of size 0 (no medium, or a loop device with nothing attached): name a device that holds data"
            ),
        });
    }
    let device_name = device.and_then(|(ma, mi)| sysfs_name(Path::new("/sys"), ma, mi));
    Ok(Target {
        path: path.to_path_buf(),
        kind,
        file,
        size,
        logical_block_size: lbs,
        device: device.filter(|_| device_name.is_some()),
        read_ahead_kb: device
            .and_then(|d| readahead_path(Path::new("/sys"), d))
            .and_then(|p| fs::read_to_string(p).ok()?.trim().parse().ok()),
        device_name,
        checks,
        stripe: None,
    })
}

fn open_error(path: &Path, e: &io::Error, access: Access) -> anyhow::Error {
    let shown = crate::base::error::show_path(path);
    let msg = match e.raw_os_error() {
        Some(libc::EINVAL) if access.direct => format!(
            "the file system under {shown} refuses O_DIRECT: use --buffered to go through the page cache"
        ),
        Some(libc::EBUSY) => format!(
            "refusing to write: {shown} is in use (the kernel refused an exclusive open: mounted, or claimed by md, dm, btrfs or another program)"
        ),
        Some(libc::EACCES) => format!(
            "cannot open {shown}: permission denied; run as root or choose a target you may {}",
            if access.write { "write" } else { "read" }
        ),
        Some(libc::EPERM) => format!(
            "cannot open {shown}: operation not permitted (EPERM); the system protects it, choose another target"
        ),
        Some(libc::EROFS) => format!("cannot write to {shown}: it is read-only; use a read workload"),
        _ => format!("cannot open {shown}: {e}"),
    };
    crate::base::error::UsageError(msg).into()
}
