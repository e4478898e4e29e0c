//! The compare document (`compare --json`): each phase's summary with its
//! full run document, the members' shares, the stripe efficiency and the
//! slowest member; and its assembly from the phases that ran, which finds
//! each phase by its [`PhaseKind`], never by its display name.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::analysis::summary::flag_slow;
use crate::device::topology::Topology;
use crate::document::run::{RunDocument, ToolInfo};

/// What a phase measures. It is written as the phase's `name` (the text
/// of [`std::fmt::Display`]), and read back from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhaseKind {
    /// One member alone (`--solo`): `member PATH alone`.
    Alone { member: String },
    /// Every member at once, O_DIRECT, one worker each.
    Together,
    /// The volume with one worker, O_DIRECT.
    VolumeOneWorker,
    /// The volume with one worker per member, O_DIRECT: what the stripe
    /// efficiency sets against the members together.
    VolumePerMember { workers: usize },
    /// The volume with one worker per member, through the page cache.
    VolumeBuffered { workers: usize },
    /// A name this version does not write (a document made by hand, or by
    /// another version): kept as it was, matched by nothing.
    Other(String),
}

impl PhaseKind {
    /// A phase on the volume (rather than on its members).
    pub fn on_volume(&self) -> bool {
        matches!(
            self,
            PhaseKind::VolumeOneWorker
                | PhaseKind::VolumePerMember { .. }
                | PhaseKind::VolumeBuffered { .. }
        )
    }

    /// Reads a phase's name back: a kind only when it writes that very
    /// name again (`volume, 02 workers, ...` stays as it was, an `Other`).
    pub fn parse(name: &str) -> PhaseKind {
        let kind = PhaseKind::read(name);
        if kind.to_string() == name {
            kind
        } else {
            PhaseKind::Other(name.into())
        }
    }

    fn read(name: &str) -> PhaseKind {
        let volume = |rest: &str| -> Option<PhaseKind> {
            let (n, how) = rest.split_once(" workers, ")?;
            let workers = n.parse().ok()?;
            match how {
                "O_DIRECT" => Some(PhaseKind::VolumePerMember { workers }),
                "buffered" => Some(PhaseKind::VolumeBuffered { workers }),
                _ => None,
            }
        };
        if name == "members together, O_DIRECT" {
            PhaseKind::Together
        } else if name == "volume, 1 worker, O_DIRECT" {
            PhaseKind::VolumeOneWorker
        } else if let Some(member) = name
            .strip_prefix("member ")
            .and_then(|m| m.strip_suffix(" alone"))
        {
            PhaseKind::Alone {
                member: member.into(),
            }
        } else {
            name.strip_prefix("volume, ")
                .and_then(volume)
                .unwrap_or_else(|| PhaseKind::Other(name.into()))
        }
    }
}

impl std::fmt::Display for PhaseKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`: the table aligns phase names in a column.
        f.pad(&match self {
            PhaseKind::Alone { member } => format!("member {member} alone"),
            PhaseKind::Together => "members together, O_DIRECT".into(),
            PhaseKind::VolumeOneWorker => "volume, 1 worker, O_DIRECT".into(),
            PhaseKind::VolumePerMember { workers } => {
                format!("volume, {workers} workers, O_DIRECT")
            }
            PhaseKind::VolumeBuffered { workers } => format!("volume, {workers} workers, buffered"),
            PhaseKind::Other(name) => name.clone(),
        })
    }
}

impl Serialize for PhaseKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PhaseKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PhaseKind, D::Error> {
        Ok(PhaseKind::parse(&String::deserialize(d)?))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Phase {
    /// What the phase measures, written as its name.
    #[serde(rename = "name")]
    pub kind: PhaseKind,
    pub direct: bool,
    pub workers: usize,
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub p99_ns: Option<u64>,
    /// CPU seconds (user + system) per 10^9 bytes.
    pub cpu_sec_per_gb: Option<f64>,
    pub document: RunDocument,
}

impl Phase {
    /// A phase's summary of its run document.
    pub fn of(kind: PhaseKind, doc: RunDocument) -> Phase {
        let t = &doc.total;
        Phase {
            kind,
            direct: doc.config.direct,
            workers: doc.workers.len(),
            bytes_per_sec: t.figures.bytes_per_sec,
            iops: t.figures.iops,
            p99_ns: t.figures.latency_ns.map(|l| l.p99),
            cpu_sec_per_gb: t.cpu_sec_per_gb(),
            document: doc,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemberResult {
    pub path: String,
    /// In the all-members-at-once phase.
    pub bytes_per_sec: f64,
    /// Its share of the members' total.
    pub share: f64,
    /// Alone (with --solo).
    pub solo_bytes_per_sec: Option<f64>,
    pub slow: bool,
}

/// The compare document (`--json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename = "compare")]
pub struct CompareDocument {
    pub schema_version: u32,
    pub tool: ToolInfo,
    /// A signal ended the comparison: the phase it ended is kept (its own
    /// document says `interrupted`), the later ones did not run.
    #[serde(default)]
    pub interrupted: bool,
    pub volume: String,
    pub topology: Topology,
    /// The file the volume phases read, on a mounted volume.
    pub test_file: Option<String>,
    pub phases: Vec<Phase>,
    /// Volume with one worker per member (O_DIRECT) ÷ all members at once.
    pub efficiency: Option<f64>,
    pub members: Vec<MemberResult>,
    /// The member flagged slow, if any.
    pub slowest: Option<String>,
    pub notes: Vec<String>,
}

/// The phases compare runs, in order, on a volume of `members` (each as
/// its name is shown): each member alone first with `solo`.
pub fn phase_kinds(members: &[String], solo: bool) -> Vec<PhaseKind> {
    let n = members.len();
    let alone = members
        .iter()
        .filter(|_| solo)
        .map(|m| PhaseKind::Alone { member: m.clone() });
    alone
        .chain([
            PhaseKind::Together,
            PhaseKind::VolumeOneWorker,
            PhaseKind::VolumePerMember { workers: n },
            PhaseKind::VolumeBuffered { workers: n },
        ])
        .collect()
}

/// What a comparison knows besides its phases.
pub struct Volume {
    /// The volume as named, shown.
    pub volume: String,
    pub topology: Topology,
    /// The test file the volume phases read, on a mounted volume.
    pub test_file: Option<String>,
    /// Said before the phases ran.
    pub notes: Vec<String>,
}

/// The compare document of the phases that ran. `signalled`: a signal
/// came (a phase it stopped says so itself).
pub fn assemble(volume: Volume, phases: Vec<Phase>, signalled: bool) -> CompareDocument {
    let interrupted = signalled || phases.iter().any(|p| p.document.interrupted);
    let (members, slow) = member_results(&phases);
    let mut notes = volume.notes;
    if interrupted {
        notes.push(format!(
            "interrupted: {} of the phases ran; the figures cover what was measured",
            phases.len()
        ));
    }
    CompareDocument {
        schema_version: crate::document::run::SCHEMA_VERSION,
        tool: ToolInfo::this(),
        interrupted,
        volume: volume.volume,
        test_file: volume.test_file,
        topology: volume.topology,
        efficiency: efficiency(&phases),
        slowest: slow.map(|i| members[i].path.clone()),
        phases,
        members,
        notes,
    }
}

fn find(phases: &[Phase], kind: impl Fn(&PhaseKind) -> bool) -> Option<&Phase> {
    phases.iter().find(|p| kind(&p.kind))
}

/// Each member in the members-together phase: its rate, its share of their
/// total, its rate alone (the `alone` phases, in member order), whether it
/// is slow; and which one is flagged slow.
pub fn member_results(phases: &[Phase]) -> (Vec<MemberResult>, Option<usize>) {
    let solo: Vec<f64> = phases
        .iter()
        .filter(|p| matches!(p.kind, PhaseKind::Alone { .. }))
        .map(|p| p.bytes_per_sec)
        .collect();
    let Some(together) = find(phases, |k| *k == PhaseKind::Together) else {
        return (Vec::new(), flag_slow(&[]));
    };
    let rates: Vec<f64> = together
        .document
        .targets
        .iter()
        .map(|t| t.figures.bytes_per_sec)
        .collect();
    let sum: f64 = rates.iter().sum();
    let slow = flag_slow(&rates);
    let members = together
        .document
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| MemberResult {
            path: t.path.clone(),
            bytes_per_sec: t.figures.bytes_per_sec,
            share: if sum > 0.0 {
                t.figures.bytes_per_sec / sum
            } else {
                0.0
            },
            solo_bytes_per_sec: solo.get(i).copied(),
            slow: slow == Some(i),
        })
        .collect();
    (members, slow)
}

/// The stripe efficiency: the volume with one worker per member (O_DIRECT)
/// ÷ the members together; none without both, or with the members at 0.
pub fn efficiency(phases: &[Phase]) -> Option<f64> {
    let together = find(phases, |k| *k == PhaseKind::Together)?;
    let volume = find(phases, |k| matches!(k, PhaseKind::VolumePerMember { .. }))?;
    (together.bytes_per_sec > 0.0).then(|| volume.bytes_per_sec / together.bytes_per_sec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::sample_doc;

    /// A run document whose total is `rate` B/s over targets of `rates`.
    fn run(rate: f64, targets: &[(&str, f64)]) -> RunDocument {
        let mut d = sample_doc();
        d.total.figures.bytes_per_sec = rate;
        let first = d.targets[0].clone();
        d.targets = targets
            .iter()
            .map(|&(path, r)| {
                let mut t = first.clone();
                t.path = path.into();
                t.figures.bytes_per_sec = r;
                t
            })
            .collect();
        d
    }

    fn volume() -> Volume {
        let root = crate::device::topology::Device {
            name: "md0".into(),
            dev: "9:0".into(),
            path: "/dev/md0".into(),
            kind: "md".into(),
            parent: None,
            md: None,
            dm: None,
            btrfs: None,
            leaf: None,
            queue: None,
            members: Vec::new(),
            geometry: None,
        };
        Volume {
            volume: "/dev/md0".into(),
            topology: Topology {
                target: "/dev/md0".into(),
                resolved: "block device".into(),
                root,
            },
            test_file: None,
            notes: vec!["said before".into()],
        }
    }

    /// Three members (the third slow), each alone, together, and the
    /// volume's three phases.
    fn phases() -> Vec<Phase> {
        let members = ["/dev/a", "/dev/b", "/dev/c"].map(String::from);
        let rates = [110.0, 105.0, 40.0, 400.0, 150.0, 360.0, 2000.0];
        let together = [("/dev/a", 150.0), ("/dev/b", 150.0), ("/dev/c", 100.0)];
        phase_kinds(&members, true)
            .into_iter()
            .zip(rates)
            .map(|(k, r)| {
                let targets: &[(&str, f64)] = if k == PhaseKind::Together {
                    &together
                } else {
                    &[("/dev/x", 0.0)]
                };
                Phase::of(k, run(r, targets))
            })
            .collect()
    }

    #[test]
    fn phases_are_named_as_compare_always_named_them() {
        let names: Vec<String> = phase_kinds(&["/dev/sdb".into(), "/dev/sdc".into()], true)
            .iter()
            .map(|k| k.to_string())
            .collect();
        assert_eq!(
            names,
            [
                "member /dev/sdb alone",
                "member /dev/sdc alone",
                "members together, O_DIRECT",
                "volume, 1 worker, O_DIRECT",
                "volume, 2 workers, O_DIRECT",
                "volume, 2 workers, buffered",
            ]
        );
        for n in &names {
            assert_eq!(PhaseKind::parse(n).to_string(), *n);
            assert!(!matches!(PhaseKind::parse(n), PhaseKind::Other(_)), "{n}");
        }
        // A one-member volume: its one worker per member is still that phase.
        assert_eq!(
            PhaseKind::parse("volume, 1 workers, O_DIRECT"),
            PhaseKind::VolumePerMember { workers: 1 }
        );
        assert_eq!(
            PhaseKind::parse("members"),
            PhaseKind::Other("members".into())
        );
        // A name this version would not write is kept as it is.
        for odd in [
            "volume, 02 workers, O_DIRECT",
            "volume, +2 workers, buffered",
        ] {
            assert_eq!(PhaseKind::parse(odd), PhaseKind::Other(odd.into()));
        }
        assert_eq!(
            format!("{:<30}|", PhaseKind::Together),
            "members together, O_DIRECT    |"
        );
    }

    #[test]
    fn a_phase_is_written_and_read_under_its_name() {
        let p = Phase::of(
            PhaseKind::Alone {
                member: "/dev/sdb".into(),
            },
            run(1.0, &[("/dev/sdb", 1.0)]),
        );
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["name"], "member /dev/sdb alone");
        assert!(v.get("kind").is_none());
        let back: Phase = serde_json::from_value(v).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn shares_efficiency_and_the_slow_member_come_from_the_phases_kinds() {
        let d = assemble(volume(), phases(), false);
        assert!(!d.interrupted);
        assert_eq!(d.notes, ["said before"]);
        // The volume with one worker per member over the members together.
        assert_eq!(d.efficiency, Some(360.0 / 400.0));
        let shares: Vec<f64> = d.members.iter().map(|m| m.share).collect();
        assert_eq!(shares, [150.0 / 400.0, 150.0 / 400.0, 100.0 / 400.0]);
        let solo: Vec<Option<f64>> = d.members.iter().map(|m| m.solo_bytes_per_sec).collect();
        assert_eq!(solo, [Some(110.0), Some(105.0), Some(40.0)]);
        assert_eq!(d.slowest.as_deref(), Some("/dev/c"));
        assert_eq!(d.members.iter().filter(|m| m.slow).count(), 1);
        assert!(d.members[2].slow);
    }

    #[test]
    fn without_the_phases_it_needs_there_is_no_efficiency_and_no_member() {
        // Interrupted after the members alone: nothing to share out.
        let mut ps = phases();
        ps.truncate(3);
        ps[2].document.interrupted = true;
        let d = assemble(volume(), ps, false);
        assert!(d.interrupted);
        assert_eq!(d.efficiency, None);
        assert!(d.members.is_empty());
        assert_eq!(d.slowest, None);
        assert_eq!(
            d.notes.last().map(String::as_str),
            Some("interrupted: 3 of the phases ran; the figures cover what was measured")
        );
        // The buffered phase and the one-worker phase are not the volume's
        // one worker per member.
        let ps: Vec<Phase> = phases()
            .into_iter()
            .filter(|p| !matches!(p.kind, PhaseKind::VolumePerMember { .. }))
            .collect();
        let d = assemble(volume(), ps, true);
        assert_eq!(d.efficiency, None);
        assert!(d.interrupted);
        assert_eq!(d.members.len(), 3);
    }
}
