//! What a compare phase measures ([`PhaseKind`]), written as the phase's
//! name and read back from it: phases are found by their kind, never by
//! matching display text.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a phase measures. It is written as the phase's `name` (the text
/// of [`std::fmt::Display`]), and read back from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhaseKind {
    /// One member alone (`--solo`): `member PATH alone`.
    Alone { member: String },
    /// Every member at once, O_DIRECT, one worker each.
    Together,
    /// The members behind one host adapter at once (`--solo`, when the
    /// members are behind two adapters or more): `members behind ADAPTER
    /// together`.
    Shared { adapter: String },
    /// The volume with one worker, O_DIRECT.
    VolumeOneWorker,
    /// The volume with one worker per member, O_DIRECT: what the stripe
    /// efficiency sets against the members together.
    VolumePerMember { workers: usize },
    /// The volume with one worker per member, through the page cache.
    VolumeBuffered { workers: usize },
    /// The volume read by one thread through the page cache: seed 004's
    /// "one buffered dd on the whole volume", against one O_DIRECT worker
    /// per member.
    VolumeOneBuffered,
    /// `compare --uncached`: the volume with one worker per member,
    /// through the page cache without keeping it (RWF_DONTCACHE).
    VolumeUncached { workers: usize },
    /// `compare --uncached`: the volume read by one thread so.
    VolumeOneUncached,
    /// `compare --rw write`: the volume written by one worker per member,
    /// each I/O a full stripe at a full-stripe boundary (no parity to read).
    VolumeFullStripeWrites { workers: usize },
    /// `compare --rw write`: the volume written one chunk at a time, less
    /// than a full stripe (a parity level reads to write it).
    VolumeSubStripeWrites { workers: usize },
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
                | PhaseKind::VolumeOneBuffered
                | PhaseKind::VolumeUncached { .. }
                | PhaseKind::VolumeOneUncached
                | PhaseKind::VolumeFullStripeWrites { .. }
                | PhaseKind::VolumeSubStripeWrites { .. }
        )
    }

    /// A phase that writes the volume (`compare --rw write`).
    pub fn writes(&self) -> bool {
        matches!(
            self,
            PhaseKind::VolumeFullStripeWrites { .. } | PhaseKind::VolumeSubStripeWrites { .. }
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
                "uncached" => Some(PhaseKind::VolumeUncached { workers }),
                "full-stripe writes" => Some(PhaseKind::VolumeFullStripeWrites { workers }),
                "sub-stripe writes" => Some(PhaseKind::VolumeSubStripeWrites { workers }),
                _ => None,
            }
        };
        if name == "members together, O_DIRECT" {
            PhaseKind::Together
        } else if let Some(adapter) = name
            .strip_prefix("members behind ")
            .and_then(|m| m.strip_suffix(" together"))
        {
            PhaseKind::Shared {
                adapter: adapter.into(),
            }
        } else if name == "volume, 1 worker, O_DIRECT" {
            PhaseKind::VolumeOneWorker
        } else if name == "volume, 1 worker, buffered" {
            PhaseKind::VolumeOneBuffered
        } else if name == "volume, 1 worker, uncached" {
            PhaseKind::VolumeOneUncached
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
            PhaseKind::Shared { adapter } => format!("members behind {adapter} together"),
            PhaseKind::VolumeOneWorker => "volume, 1 worker, O_DIRECT".into(),
            PhaseKind::VolumePerMember { workers } => {
                format!("volume, {workers} workers, O_DIRECT")
            }
            PhaseKind::VolumeBuffered { workers } => format!("volume, {workers} workers, buffered"),
            PhaseKind::VolumeOneBuffered => "volume, 1 worker, buffered".into(),
            PhaseKind::VolumeUncached { workers } => format!("volume, {workers} workers, uncached"),
            PhaseKind::VolumeOneUncached => "volume, 1 worker, uncached".into(),
            PhaseKind::VolumeFullStripeWrites { workers } => {
                format!("volume, {workers} workers, full-stripe writes")
            }
            PhaseKind::VolumeSubStripeWrites { workers } => {
                format!("volume, {workers} workers, sub-stripe writes")
            }
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
