//! Opening a target: what it is, the write guard's checks for a write
//! (consent, the device's own state, every alias of its bytes), the open
//! with the right flags.
//!
//! The name is resolved exactly once, by an `O_PATH` open ([`inspect`]):
//! that opens no device and waits on no FIFO, and pins the inode. Every
//! check then runs on that inode through descriptors (`fstat` for the kind,
//! device and inode; `st_rdev` for a device's numbers; the descriptor's own
//! ioctls for its size, its loop backing file and its signature), and the
//! descriptor for I/O is opened from it through `/proc/self/fd`
//! ([`Inspected::open`]). A symlink that moves while the checks run (a
//! /dev/disk/by-* link at a hotplug, or one flipped on purpose) cannot make
//! one check look at one file and the write go to another.

use super::*;
use crate::base::error::{ExitCoded, EXIT_USAGE};
use crate::base::host::Host;
use anyhow::Result;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// A target whose name has been resolved (once) and whose checks have run
/// on what it resolved to; not yet open for I/O.
#[derive(Debug)]
pub struct Inspected {
    pub path: PathBuf,
    pub kind: TargetKind,
    /// The name as messages show it, with what it resolved to.
    shown: String,
    /// The `O_PATH` descriptor of the one resolution of the name.
    handle: File,
    /// `fstat` of `handle`.
    meta: fs::Metadata,
    /// The read-only descriptor the checks ran on, held open until the
    /// descriptor for I/O is: a loop device that is open cannot be detached
    /// and attached to another file (a detach is deferred to the last
    /// close), so the device checked is still backed by what was checked.
    probe: File,
    /// The device's size (from the descriptor), or the file's.
    size: u64,
    /// Where its bytes live, resolved from the descriptor.
    pub extent: Option<extent::Extent>,
    /// The write guard's checks (empty for reads).
    pub checks: Vec<guard::Check>,
    access: Access,
}

impl Inspected {
    /// What the name resolved to, by identity: a device's numbers, or a
    /// file's (`st_dev`, `st_ino`). Two targets with one identity are one.
    pub fn identity(&self) -> (TargetKind, u64, u64) {
        match self.kind {
            TargetKind::Block => (self.kind, self.meta.rdev(), 0),
            TargetKind::File => (self.kind, self.meta.dev(), self.meta.ino()),
        }
    }

    /// The device whose settings (read-ahead) govern this target: the
    /// device itself, or the one under the file's file system.
    pub fn device(&self) -> (u64, u64) {
        dev_numbers(match self.kind {
            TargetKind::Block => self.meta.rdev(),
            TargetKind::File => self.meta.dev(),
        })
    }

    /// The files whose bytes this target reaches, by (`st_dev`, `st_ino`):
    /// the file itself, or the file behind a loop device (at any depth).
    /// No output may replace one of them.
    pub fn files(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        if self.kind == TargetKind::File {
            out.push((self.meta.dev(), self.meta.ino()));
        }
        if let Some(extent::Base::File(d, i)) = self.extent.as_ref().map(|x| x.base) {
            if !out.contains(&(d, i)) {
                out.push((d, i));
            }
        }
        out
    }

    /// Opens the inode that was checked (never the name again) for I/O,
    /// with the flags the run needs.
    pub fn open(self) -> Result<Target> {
        let Inspected {
            path,
            kind,
            shown,
            handle,
            meta,
            size,
            mut checks,
            access,
            probe,
            extent,
        } = self;
        let write = access.write && !access.dry_run;
        if access.write && access.dry_run && kind == TargetKind::Block {
            checks.push(try_exclusive_claim(&handle, &path, access));
        }
        let flags = io_flags(kind, access, write);
        let mut atime_checked = false;
        let file = match reopen(&handle, write, flags) {
            // O_NOATIME is for the node's owner or CAP_FOWNER: without
            // either, the descriptor is opened as it would be without it,
            // and the run says so.
            Err(e) if e.raw_os_error() == Some(libc::EPERM) && flags & libc::O_NOATIME != 0 => {
                atime_checked = true;
                reopen(&handle, write, flags & !libc::O_NOATIME)
            }
            opened => opened,
        }
        .map_err(|e| open_error(&path, &e, access))?;
        check_same_inode(&file, kind, &meta, &shown)?;
        if write && kind == TargetKind::Block {
            check_same_bytes(&file, &extent, &shown)?;
        }
        drop(probe);
        let (lbs, device) = match kind {
            TargetKind::Block => {
                let lbs = logical_block_size(&file, &shown)?;
                if write && !access.force_signature {
                    check_signature_again(&file, size, &shown)?;
                }
                (lbs, Some(dev_numbers(meta.rdev())))
            }
            TargetKind::File => {
                // As for a device, though no claim protects a file: the
                // window since the check is narrowed, not closed.
                if write && !access.force_signature && !access.owned {
                    check_signature_again(&file, size, &shown)?;
                }
                let dev = dev_numbers(meta.dev());
                let lbs = dio_offset_align(&file)
                    .or_else(|| sysfs_lbs(&Host::real().sys, dev))
                    .unwrap_or(512);
                (lbs, Some(dev))
            }
        };
        // (A file to fill grows from nothing, as fio's fill_device=1.)
        if size == 0 && !(access.fill && kind == TargetKind::File) {
            return Err(match kind {
                TargetKind::File => OpenError::EmptyFile { shown },
                TargetKind::Block => OpenError::EmptyDevice { shown },
            }
            .into());
        }
        let host = Host::real();
        let device_name = device.and_then(|(ma, mi)| sysfs_name(&host.sys, ma, mi));
        let identity = identity_of(&host, kind, &file, device_name.as_deref());
        Ok(Target {
            path,
            kind,
            file,
            size,
            logical_block_size: lbs,
            device: device.filter(|_| device_name.is_some()),
            read_ahead_kb: device
                .and_then(|d| readahead_path(&host.sys, d))
                .and_then(|p| fs::read_to_string(p).ok()?.trim().parse().ok()),
            adapter: device_name
                .as_deref()
                .and_then(|n| crate::device::paths::adapter(&host, n)),
            identity,
            device_name,
            checks,
            stripe: None,
            atime_checked,
        })
    }
}

/// Who the target is: a device's identity from sysfs, a file's by the
/// path its descriptor holds.
fn identity_of(
    host: &Host,
    kind: TargetKind,
    file: &File,
    device_name: Option<&str>,
) -> Option<identity::DiskIdentity> {
    let hostname = nix::unistd::gethostname()
        .ok()
        .map(|h| identity::printable(&h.to_string_lossy(), identity::MAX_TEXT))
        .unwrap_or_default();
    match kind {
        TargetKind::Block => identity::of_device(host, &hostname, device_name?),
        TargetKind::File => {
            let real = fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()?;
            Some(identity::of_file(&hostname, &real))
        }
    }
}

/// Why a target cannot be used as asked, found before any I/O: the user's
/// mistakes or a refusal for safety (exit 2). `shown` is the target as
/// messages show it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    #[error("target {shown} does not exist: name an existing block device or file")]
    Missing { shown: String },
    #[error("cannot inspect target {shown}: {error}")]
    Uninspectable { shown: String, error: String },
    #[error("target {shown} is a directory: name a block device or a file inside it")]
    Directory { shown: String },
    #[error("target {shown} is neither a block device nor a regular file")]
    NotBlockOrFile { shown: String },
    /// `link` is [`crate::base::path::WalkError::planted_text`]'s.
    #[error("refusing to write: on the way to target {shown}, {link}; name the file itself")]
    PlantedLink { link: String, shown: String },
    /// No --allow-destructive: the text says what would be destroyed.
    #[error("{0}")]
    NoConsent(String),
    /// A check of the write guard failed: its detail.
    #[error("refusing to write: {0}")]
    CheckFailed(String),
    #[error("refusing {shown}: the file opened is not the one checked (is /proc mounted?): name the device itself, or run again")]
    NotTheOneChecked { shown: String },
    #[error("refusing to write: {shown} changed after the checks (it reaches other bytes now: a loop device attached to another file?): nothing was written; run again")]
    ChangedAfterChecks { shown: String },
    #[error("refusing to write: {shown} carries {signature}: writing destroys it; add --force-signature if that is intended")]
    Signature { shown: String, signature: String },
    #[error("refusing to write: cannot read {shown} to look for signatures: {error}")]
    SignatureUnreadable { shown: String, error: String },
    #[error("target {shown} is empty: a file target must already hold data (write it first, e.g. with dd)")]
    EmptyFile { shown: String },
    #[error("target {shown} is a block device of size 0 (no medium, or a loop device with nothing attached): name a device that holds data")]
    EmptyDevice { shown: String },
    #[error("the file system under {shown} refuses O_DIRECT: use --buffered to go through the page cache")]
    NoDirect { shown: String },
    #[error("refusing to write: {shown} is in use (the kernel refused an exclusive open: mounted, or claimed by md, dm, btrfs or another program)")]
    Busy { shown: String },
    #[error("refusing to write: {shown} is in use (the kernel refused to open it for writing: an active swap file, see /proc/swaps, or a running program)")]
    TextBusy { shown: String },
    /// `what` says what to do: to a user, run as root or choose a target
    /// they may read or write; to root, what stands there (root lacks no
    /// permission: a security module, or a protected file, refused it).
    #[error("cannot open {shown}: permission denied (EACCES); {what}")]
    PermissionDenied { shown: String, what: String },
    #[error("cannot open {shown}: operation not permitted (EPERM); the system protects it, choose another target")]
    NotPermitted { shown: String },
    #[error("cannot write to {shown}: it is read-only; use a read workload")]
    ReadOnly { shown: String },
    #[error("cannot open {shown}: {error}")]
    Other { shown: String, error: String },
}

impl ExitCoded for OpenError {
    fn exit_code(&self) -> u8 {
        EXIT_USAGE
    }
}

/// A dry run of a write: the exclusive claim the real run would take,
/// tried and let go at once.
fn try_exclusive_claim(handle: &File, path: &Path, access: Access) -> guard::Check {
    let r = reopen(handle, false, libc::O_EXCL);
    guard::Check {
        name: "exclusive open".into(),
        passed: r.is_ok(),
        detail: match r {
            Ok(_) => "O_EXCL open succeeds: nothing claims the device".into(),
            Err(e) => open_error(path, &e, access).to_string(),
        },
    }
}

/// The flags of the descriptor for I/O.
fn io_flags(kind: TargetKind, access: Access, write: bool) -> libc::c_int {
    let mut flags = 0;
    if access.direct {
        flags |= libc::O_DIRECT;
    }
    if kind == TargetKind::Block {
        // A device node's access time is nobody's data, yet every read
        // through the node updates or checks it (file_accessed, then
        // touch_atime, in blkdev_read_iter): some 40 ns of kernel time per
        // I/O, 1-4% of a 4 KiB read from a RAM device. fio opens devices
        // so too (filesetup.c). A file's atime is left to its mount.
        flags |= libc::O_NOATIME;
    }
    if write && kind == TargetKind::Block {
        // O_EXCL on a block device: the kernel refuses (EBUSY) when it is
        // mounted or claimed by md, dm, btrfs or another exclusive opener.
        flags |= libc::O_EXCL;
    }
    flags
}

/// The descriptor opened is the inode checked. Through /proc/self/fd the
/// inode cannot change; this holds unless /proc is not what it should be.
fn check_same_inode(
    file: &File,
    kind: TargetKind,
    checked: &fs::Metadata,
    shown: &str,
) -> Result<()> {
    let opened = file
        .metadata()
        .map_err(|e| anyhow::anyhow!("cannot inspect {shown} once opened: {e}"))?;
    let same = match kind {
        TargetKind::Block => {
            opened.file_type().is_block_device() && opened.rdev() == checked.rdev()
        }
        TargetKind::File => (opened.dev(), opened.ino()) == (checked.dev(), checked.ino()),
    };
    if !same {
        return Err(OpenError::NotTheOneChecked {
            shown: shown.to_string(),
        }
        .into());
    }
    Ok(())
}

/// What the device reaches now, from the descriptor that will be written,
/// is what the checks judged (a loop device detached and attached to
/// another image in between reaches other bytes).
fn check_same_bytes(file: &File, checked: &Option<extent::Extent>, shown: &str) -> Result<()> {
    let now = extent::of_file(&Host::real(), file);
    let key = |x: &Option<extent::Extent>| x.as_ref().map(|x| (x.base, x.start, x.len));
    if key(&now) != key(checked) {
        return Err(OpenError::ChangedAfterChecks {
            shown: shown.to_string(),
        }
        .into());
    }
    Ok(())
}

/// The device's logical block size, from its descriptor (at least 512).
fn logical_block_size(file: &File, shown: &str) -> Result<u64> {
    let mut lbs: libc::c_int = 0;
    // SAFETY: the fd is open for the whole call; the ioctl writes
    // one c_int into memory we own.
    unsafe { blksszget(file.as_raw_fd(), &mut lbs) }
        .map_err(|e| anyhow::anyhow!("cannot read the logical block size of {shown}: {e}"))?;
    Ok(lbs.max(512) as u64)
}

/// The signature is read again through the descriptor that will be
/// written, now that it holds the exclusive claim: nothing written onto the
/// device since the check goes unseen.
fn check_signature_again(file: &File, size: u64, shown: &str) -> Result<(), OpenError> {
    // Through /proc/self/fd: the very file opened, without O_DIRECT
    // (whose alignment rules a small read would break).
    let again = File::open(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .and_then(|f| guard::signature_of(&f, size));
    match again {
        Ok(None) => Ok(()),
        Ok(Some(signature)) => Err(OpenError::Signature {
            shown: shown.to_string(),
            signature,
        }),
        Err(e) => Err(OpenError::SignatureUnreadable {
            shown: shown.to_string(),
            error: e.to_string(),
        }),
    }
}

/// Checks, guards and opens one target.
pub fn open(path: &Path, access: Access) -> Result<Target> {
    inspect(path, access)?.open()
}

/// Opens the inode behind `handle` (an `O_PATH` descriptor) again, through
/// `/proc/self/fd`: the magic link leads to the inode itself, not to a name.
fn reopen(handle: &File, write: bool, flags: libc::c_int) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(flags | libc::O_NOCTTY)
        .open(format!("/proc/self/fd/{}", handle.as_raw_fd()))
}

/// Resolves `path` once and runs the write guard's checks (for a write) on
/// what it resolved to. Refuses (exit 2) a failed check unless a dry run.
pub fn inspect(path: &Path, access: Access) -> Result<Inspected> {
    let shown = crate::base::error::show_path(path);
    let handle = resolve_once(path, access, &shown)?;
    let meta = handle.metadata().map_err(|e| OpenError::Uninspectable {
        shown: shown.clone(),
        error: e.to_string(),
    })?;
    let kind = kind_of(&meta, &shown)?;
    let shown = shown_with_real_name(&handle, path, shown);
    // A read-only descriptor of the same inode, for the checks' ioctls and reads.
    let probe = reopen(&handle, false, 0).map_err(|e| open_error(path, &e, access))?;
    let size = match kind {
        TargetKind::Block => {
            let mut size = 0u64;
            // SAFETY: the fd is open; the ioctl writes one u64 we own.
            unsafe { blkgetsize64(probe.as_raw_fd(), &mut size) }
                .map_err(|e| anyhow::anyhow!("cannot read the size of {shown}: {e}"))?;
            size
        }
        TargetKind::File => meta.len(),
    };
    let host = Host::real();
    let extent = extent::of_file(&host, &probe);
    let checks = if access.write {
        let target = Checked {
            shown: &shown,
            kind,
            meta: &meta,
            probe: &probe,
            size,
            extent: extent.as_ref(),
        };
        write_checks(&host, &target, access)?
    } else {
        Vec::new()
    };
    Ok(Inspected {
        path: path.to_path_buf(),
        kind,
        shown,
        handle,
        meta,
        size,
        extent,
        checks,
        access,
        probe,
    })
}

/// The one resolution of the name, as an `O_PATH` descriptor. Symlinks are
/// followed (/dev/disk/by-id/... names the device it points at), once.
/// For a write, by a walk that follows no link another user planted in a
/// sticky, world-writable directory (/tmp): such a link would choose the
/// file written (fs.protected_symlinks, whose default is 0, would stop the
/// kernel's own walk only when set).
fn resolve_once(path: &Path, access: Access, shown: &str) -> Result<File, OpenError> {
    let opened = if access.write {
        match crate::base::path::open_unplanted(path) {
            Ok(fd) => Ok(File::from(fd)),
            Err(crate::base::path::WalkError::Planted { at, owner }) => {
                return Err(OpenError::PlantedLink {
                    link: crate::base::path::WalkError::planted_text(&at, owner),
                    shown: shown.to_string(),
                })
            }
            Err(crate::base::path::WalkError::Sys(e)) => Err(io::Error::from(e)),
        }
    } else {
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH)
            .open(path)
    };
    opened.map_err(|e| {
        let shown = shown.to_string();
        if e.kind() == io::ErrorKind::NotFound {
            OpenError::Missing { shown }
        } else {
            OpenError::Uninspectable {
                shown,
                error: e.to_string(),
            }
        }
    })
}

/// A block device or a regular file; anything else is refused.
fn kind_of(meta: &fs::Metadata, shown: &str) -> Result<TargetKind, OpenError> {
    let ft = meta.file_type();
    let shown = shown.to_string();
    if ft.is_block_device() {
        Ok(TargetKind::Block)
    } else if ft.is_file() {
        Ok(TargetKind::File)
    } else if ft.is_dir() {
        Err(OpenError::Directory { shown })
    } else {
        Err(OpenError::NotBlockOrFile { shown })
    }
}

/// The name as messages show it, with what the kernel calls the inode
/// opened (for messages only: it is never looked up).
fn shown_with_real_name(handle: &File, path: &Path, shown: String) -> String {
    let real = fs::read_link(format!("/proc/self/fd/{}", handle.as_raw_fd()))
        .unwrap_or_else(|_| path.to_path_buf());
    if real != path {
        format!("{shown} (-> {})", crate::base::error::show_path(&real))
    } else {
        shown
    }
}

/// What the write guard's checks look at: the inode resolved, through
/// its read-only descriptor.
struct Checked<'a> {
    shown: &'a str,
    kind: TargetKind,
    meta: &'a fs::Metadata,
    probe: &'a File,
    size: u64,
    extent: Option<&'a extent::Extent>,
}

/// The write guard, in order: consent, the device's (or file's) own state,
/// then every alias of its bytes. A failed check refuses the write, unless
/// a dry run, which reports them all.
fn write_checks(host: &Host, t: &Checked, access: Access) -> Result<Vec<guard::Check>> {
    let mut checks = Vec::new();
    let shown = t.shown;
    let consent = access.allow_destructive || (t.kind == TargetKind::File && access.owned);
    let what = match t.kind {
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
        return Err(OpenError::NoConsent(what).into());
    }
    match t.kind {
        TargetKind::Block => {
            let dev = dev_numbers(t.meta.rdev());
            let backing = match t.extent.map(|x| x.base) {
                Some(extent::Base::File(d, i)) => Some((d, i)),
                _ => None,
            };
            checks.push(guard::check_writable(host, shown, dev));
            checks.extend(guard::check_device(
                host,
                t.probe,
                shown,
                dev,
                t.size,
                backing,
                access.force_signature,
            ));
            // No other device that reaches the same bytes (a second loop
            // over the image, the disk under a partition) may be in use.
            if let Some(x) = t.extent {
                checks.push(guard::check_aliases(host, shown, x, Some(dev)));
            }
        }
        TargetKind::File => {
            // A file is checked as the image it may be: in use first
            // (never overridden), then what it carries.
            checks.push(guard::check_swap_file(
                host,
                shown,
                (t.meta.dev(), t.meta.ino()),
            ));
            if let Some(x) = t.extent {
                // Which loop device over it is mounted, held or swap, when
                // one is: the more telling reason, so it comes first.
                checks.push(guard::check_aliases(host, shown, x, None));
                checks.push(guard::check_no_loop(host, shown, x));
            }
            // The test bed's files hold only what this run wrote into them
            // (random data): nobody else's, so nothing to recognise.
            if !access.owned {
                checks.push(guard::check_signature(
                    t.probe,
                    shown,
                    t.size,
                    access.force_signature,
                ));
            }
        }
    }
    if !access.dry_run {
        if let Some(c) = checks.iter().find(|c| !c.passed) {
            return Err(OpenError::CheckFailed(c.detail.clone()).into());
        }
    }
    Ok(checks)
}

fn open_error(path: &Path, e: &io::Error, access: Access) -> anyhow::Error {
    let shown = crate::base::error::show_path(path);
    match e.raw_os_error() {
        Some(libc::EINVAL) if access.direct => OpenError::NoDirect { shown },
        Some(libc::EBUSY) => OpenError::Busy { shown },
        Some(libc::ETXTBSY) => OpenError::TextBusy { shown },
        Some(libc::EACCES) => OpenError::PermissionDenied {
            shown,
            what: if crate::base::error::is_root() {
                format!(
                    "refused to root{}: a security module (SELinux, AppArmor) or the file system refuses it; choose another target",
                    crate::base::error::node_facts(path)
                )
            } else {
                format!(
                    "run as root or choose a target you may {}",
                    if access.write { "write" } else { "read" }
                )
            },
        },
        Some(libc::EPERM) => OpenError::NotPermitted { shown },
        Some(libc::EROFS) => OpenError::ReadOnly { shown },
        _ => OpenError::Other {
            shown,
            error: e.to_string(),
        },
    }
    .into()
}
