//! Who a disk is, whatever its name today: `/dev/sdq` is another disk
//! after a reboot, so what a history keeps is keyed by the disk's own
//! identity. In order of trust:
//! - its WWN (`device/wwid` or `wwid`: `naa.`, `eui.`, an NVMe namespace's
//!   id), written as udev writes it (`0x5000c500a1b2c3d4` for an NAA);
//! - else its serial with its model (NVMe `device/serial`, virtio-blk
//!   `serial`, SCSI's unit serial number page `device/vpd_pg80`);
//! - else, for what has no serial, a stable name of what it is, marked as
//!   such: a loop device's backing file and the host, a zram device's index
//!   and the host, an md array's or device-mapper device's UUID and the
//!   host; a partition is its disk's identity and its number.
//! - A file is its path on its host.
//!
//! Every string comes from sysfs, which a driver fills from what the disk
//! answered: each read is bounded, and what is kept is printable ASCII, at
//! most [`MAX_TEXT`] characters.

use std::fs;
use std::io::Read;
use std::path::Path;

use crate::base::host::Host;

/// The longest identity string kept (a serial, a model, a backing file's
/// path is cut there and marked).
pub const MAX_TEXT: usize = 256;

/// How an identity was found: how far it can be trusted to name one disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IdentityKind {
    /// The disk's World Wide Name.
    Wwn,
    /// Its serial number, with its model.
    Serial,
    /// A loop device: its backing file, on its host.
    BackingFile,
    /// A zram device: its index, on its host.
    Zram,
    /// An md array or a device-mapper device: its UUID, on its host.
    Volume,
    /// Nothing better than its kernel name, on its host: not stable.
    Name,
    /// A file target: its path, on its host.
    File,
}

impl IdentityKind {
    pub fn name(self) -> &'static str {
        match self {
            IdentityKind::Wwn => "wwn",
            IdentityKind::Serial => "serial",
            IdentityKind::BackingFile => "backing-file",
            IdentityKind::Zram => "zram",
            IdentityKind::Volume => "volume",
            IdentityKind::Name => "name",
            IdentityKind::File => "file",
        }
    }

    pub fn parse(s: &str) -> Option<IdentityKind> {
        [
            IdentityKind::Wwn,
            IdentityKind::Serial,
            IdentityKind::BackingFile,
            IdentityKind::Zram,
            IdentityKind::Volume,
            IdentityKind::Name,
            IdentityKind::File,
        ]
        .into_iter()
        .find(|k| k.name() == s)
    }

    /// A disk's own identity (it travels with the disk to another slot, host
    /// or name), against one made up from where it is.
    pub fn is_disk(self) -> bool {
        matches!(self, IdentityKind::Wwn | IdentityKind::Serial)
    }
}

/// A disk's identity and what else it says of itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskIdentity {
    /// The key a history keeps it by: `wwn:0x5000c500a1b2c3d4`,
    /// `serial:MODEL:SERIAL`, `backing-file:HOST:/path`, `zram:HOST:0`,
    /// `volume:HOST:UUID`, `name:HOST:sdq`, `file:HOST:/path`; a partition's
    /// ends in `:partN`.
    pub key: String,
    pub kind: IdentityKind,
    pub wwn: Option<String>,
    pub serial: Option<String>,
    pub model: Option<String>,
    pub firmware: Option<String>,
}

/// The identity of block device `name` (a kernel name: `sdq`, `nvme0n1p2`,
/// `loop3`), on host `hostname`; `None` when sysfs does not know it.
pub fn of_device(host: &Host, hostname: &str, name: &str) -> Option<DiskIdentity> {
    let dir = host.sys.join("class/block").join(name);
    if !dir.exists() {
        return None;
    }
    if let Some(part) = read_text(&dir.join("partition"), 16) {
        let real = fs::canonicalize(&dir).ok()?;
        let parent = real.parent()?.file_name()?.to_str()?.to_string();
        let mut id = of_device(host, hostname, &parent)?;
        id.key = format!("{}:part{part}", id.key);
        return Some(id);
    }
    let dev = dir.join("device");
    let model = read_text(&dev.join("model"), MAX_TEXT);
    let firmware = read_text(&dev.join("firmware_rev"), MAX_TEXT)
        .or_else(|| read_text(&dev.join("rev"), MAX_TEXT));
    let wwn = read_text(&dev.join("wwid"), MAX_TEXT)
        .or_else(|| read_text(&dir.join("wwid"), MAX_TEXT))
        .and_then(|w| wwn_of(&w));
    let serial = read_text(&dev.join("serial"), MAX_TEXT)
        .or_else(|| read_text(&dir.join("serial"), MAX_TEXT))
        .or_else(|| vpd_serial(&dev.join("vpd_pg80")));
    let (key, kind) = if let Some(w) = &wwn {
        (format!("wwn:{w}"), IdentityKind::Wwn)
    } else if let Some(s) = &serial {
        let m = model.as_deref().unwrap_or("");
        (format!("serial:{m}:{s}"), IdentityKind::Serial)
    } else if let Some(f) = read_bytes(&dir.join("loop/backing_file"), libc::PATH_MAX as usize + 16)
        .map(|b| String::from_utf8_lossy(b.strip_suffix(b"\n").unwrap_or(&b)).into_owned())
        .filter(|f| !f.is_empty())
    {
        let f = escaped(&f, MAX_TEXT * 4);
        (
            format!("backing-file:{hostname}:{f}"),
            IdentityKind::BackingFile,
        )
    } else if let Some(i) = name.strip_prefix("zram") {
        (format!("zram:{hostname}:{i}"), IdentityKind::Zram)
    } else if let Some(u) = read_text(&dir.join("dm/uuid"), MAX_TEXT)
        .or_else(|| read_text(&dir.join("md/uuid"), MAX_TEXT))
    {
        (format!("volume:{hostname}:{u}"), IdentityKind::Volume)
    } else {
        (format!("name:{hostname}:{name}"), IdentityKind::Name)
    };
    Some(DiskIdentity {
        key,
        kind,
        wwn,
        serial,
        model,
        firmware,
    })
}

/// The identity of a file target at `path` (absolute), on host `hostname`.
pub fn of_file(hostname: &str, path: &Path) -> DiskIdentity {
    DiskIdentity {
        key: format!(
            "file:{hostname}:{}",
            escaped(&path.to_string_lossy(), MAX_TEXT * 4)
        ),
        kind: IdentityKind::File,
        wwn: None,
        serial: None,
        model: None,
        firmware: None,
    }
}

/// A WWN as udev's `ID_WWN` writes it, from sysfs's `wwid`: an NAA
/// (`naa.5000c500a1b2c3d4`) as `0x5000c500a1b2c3d4`; an EUI-64 or NVMe
/// namespace id as given. A T10 vendor id (`t10.ATA  MODEL  SERIAL`) names
/// no WWN: the serial is read instead.
pub fn wwn_of(wwid: &str) -> Option<String> {
    let w = wwid.trim();
    if let Some(naa) = w.strip_prefix("naa.") {
        let hex = naa.to_ascii_lowercase();
        return (!hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()))
            .then(|| format!("0x{hex}"));
    }
    if w.starts_with("eui.") || w.starts_with("nvme.") || w.starts_with("uuid.") {
        return Some(w.to_string());
    }
    None
}

/// The serial in a SCSI unit serial number page (VPD 0x80): a 4-byte
/// header whose last byte is the length, then the serial, space padded.
fn vpd_serial(p: &Path) -> Option<String> {
    let b = read_bytes(p, 4 + 255)?;
    if b.len() < 4 || b[1] != 0x80 {
        return None;
    }
    let n = usize::from(b[3]).min(b.len() - 4);
    let s = printable(&String::from_utf8_lossy(&b[4..4 + n]), MAX_TEXT);
    (!s.is_empty()).then_some(s)
}

fn read_bytes(p: &Path, max: usize) -> Option<Vec<u8>> {
    let mut b = Vec::new();
    fs::File::open(p)
        .ok()?
        .take(max as u64)
        .read_to_end(&mut b)
        .ok()?;
    Some(b)
}

/// An attribute's text, trimmed, kept printable and at most `max`
/// characters; `None` when absent or empty.
fn read_text(p: &Path, max: usize) -> Option<String> {
    let b = read_bytes(p, max + 64)?;
    let s = printable(&String::from_utf8_lossy(&b), max);
    (!s.is_empty()).then_some(s)
}

/// A path as a key holds it, one for one: `\` as `\\`, each character
/// that is not printable ASCII as `\u{XX}`, nothing trimmed (`f1` and
/// `f1 ` are two files); cut to `max` characters (marked `~`).
pub fn escaped(s: &str, max: usize) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if c.is_ascii_graphic() || c == ' ' => out.push(c),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    // ASCII only: a byte is a character.
    if out.len() > max {
        out.truncate(max.saturating_sub(1));
        out.push('~');
    }
    out
}

/// `s` trimmed, each character that is not printable ASCII as `?`, cut
/// to `max` characters (the cut marked with `~`).
pub fn printable(s: &str, max: usize) -> String {
    let t: String = s
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .collect();
    if t.chars().count() > max {
        let mut cut: String = t.chars().take(max.saturating_sub(1)).collect();
        cut.push('~');
        cut
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(root: &Path) -> Host {
        Host {
            sys: root.join("sys"),
            proc: root.join("proc"),
            dev: root.join("dev"),
        }
    }

    fn disk(root: &Path, name: &str, files: &[(&str, &[u8])]) {
        let d = root.join("sys/devices/pci/host0").join(name);
        for (f, v) in files {
            let p = d.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, v).unwrap();
        }
        fs::create_dir_all(d.join("device")).unwrap();
        fs::create_dir_all(root.join("sys/class/block")).unwrap();
        std::os::unix::fs::symlink(&d, root.join("sys/class/block").join(name)).unwrap();
    }

    #[test]
    fn a_scsi_disk_is_its_wwn_and_keeps_its_serial_model_and_firmware() {
        let t = tempfile::tempdir().unwrap();
        let mut pg80 = vec![0u8, 0x80, 0, 8];
        pg80.extend_from_slice(b"lab-m003");
        disk(
            t.path(),
            "sdq",
            &[
                ("device/wwid", b"naa.5000C50000000004\n"),
                ("device/model", b"QEMU HARDDISK   \n"),
                ("device/rev", b"2.5+\n"),
                ("device/vpd_pg80", &pg80),
            ],
        );
        let id = of_device(&host(t.path()), "h", "sdq").unwrap();
        assert_eq!(id.key, "wwn:0x5000c50000000004");
        assert_eq!(id.kind, IdentityKind::Wwn);
        assert_eq!(id.serial.as_deref(), Some("lab-m003"));
        assert_eq!(id.model.as_deref(), Some("QEMU HARDDISK"));
        assert_eq!(id.firmware.as_deref(), Some("2.5+"));
    }

    #[test]
    fn without_a_wwn_the_serial_and_model_name_it_and_a_t10_id_is_no_wwn() {
        let t = tempfile::tempdir().unwrap();
        disk(
            t.path(),
            "nvme0n1",
            &[
                ("wwid", b"t10.ATA     SOMEDISK   S123\n"),
                ("device/serial", b"  S123  \n"),
                ("device/model", b"SOMEDISK\n"),
                ("device/firmware_rev", b"FW1\n"),
            ],
        );
        let id = of_device(&host(t.path()), "h", "nvme0n1").unwrap();
        assert_eq!(id.key, "serial:SOMEDISK:S123");
        assert_eq!(id.kind, IdentityKind::Serial);
        assert_eq!(id.firmware.as_deref(), Some("FW1"));
    }

    #[test]
    fn a_loop_device_is_its_backing_file_and_a_zram_its_index_on_the_host() {
        let t = tempfile::tempdir().unwrap();
        disk(
            t.path(),
            "loop7",
            &[("loop/backing_file", b"/srv/img/a.img\n")],
        );
        disk(t.path(), "zram2", &[("size", b"1\n")]);
        let h = host(t.path());
        let l = of_device(&h, "box1", "loop7").unwrap();
        assert_eq!(l.key, "backing-file:box1:/srv/img/a.img");
        assert_eq!(l.kind, IdentityKind::BackingFile);
        assert!(!l.kind.is_disk());
        assert_eq!(of_device(&h, "box1", "zram2").unwrap().key, "zram:box1:2");
        assert!(of_device(&h, "box1", "sdz").is_none());
    }

    #[test]
    fn hostile_strings_are_kept_printable_and_bounded() {
        let t = tempfile::tempdir().unwrap();
        let long = "X".repeat(5000);
        disk(
            t.path(),
            "sdb",
            &[
                ("device/serial", b"ab\x1b[2Jc\nd"),
                ("device/model", long.as_bytes()),
            ],
        );
        let id = of_device(&host(t.path()), "h", "sdb").unwrap();
        assert_eq!(id.serial.as_deref(), Some("ab?[2Jc?d"));
        assert_eq!(id.model.as_ref().unwrap().chars().count(), MAX_TEXT);
        assert!(id.model.unwrap().ends_with('~'));
    }

    #[test]
    fn paths_are_kept_one_for_one() {
        assert_ne!(
            of_file("h", Path::new("/a/f1")).key,
            of_file("h", Path::new("/a/f1 ")).key
        );
        assert_eq!(escaped("a\x1b[b\\\n", 64), "a\\u{1b}[b\\\\\\u{a}");
        assert_ne!(escaped("ev\nl", 64), escaped("ev?l", 64));
        assert_ne!(escaped("ev\nl", 64), escaped("ev\tl", 64));
    }

    #[test]
    fn wwids() {
        assert_eq!(wwn_of("naa.600A0B80").as_deref(), Some("0x600a0b80"));
        assert_eq!(wwn_of("naa.zz"), None);
        assert_eq!(wwn_of("eui.0025388b").as_deref(), Some("eui.0025388b"));
        assert_eq!(wwn_of("t10.ATA x"), None);
    }
}
