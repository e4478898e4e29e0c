//! What a RAID level does with its members: how many carry data, parity or
//! copies, the full stripe, and the ceiling a volume of that level can reach
//! against the rate of one member. Pure arithmetic over what the walk read.

/// A striped, parity or mirrored layer's geometry.
#[derive(Debug, Clone, PartialEq)]
pub struct Geometry {
    /// `raid0`, `raid1`, `raid4`, `raid5`, `raid6`, `raid10`, `linear`, ...
    pub level: String,
    /// Members of the layer.
    pub members: u32,
    /// Members' worth of distinct data in one stripe (N for raid0, N-1 for
    /// raid5, N-2 for raid6, N/copies for raid10, 1 for raid1).
    pub data: u32,
    /// Members' worth of parity in one stripe.
    pub parity: u32,
    /// Copies of each block (1 unless the level mirrors).
    pub copies: u32,
    /// The layout, as mdadm names it: `left-symmetric`, `near=2`, ...
    pub layout: Option<String>,
    /// The chunk (stripe unit), bytes.
    pub chunk: Option<u64>,
    /// chunk × data members: the write that needs no read-modify-write.
    pub full_stripe: Option<u64>,
    /// Where each member's data begins on it, bytes, in member order (md's
    /// `data_offset`, a dm table's device offsets); empty when unknown (0).
    pub member_offsets: Vec<u64>,
}

/// The direction a ceiling is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
}

/// What a level allows, as a multiple of one member's rate measured alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Ceiling {
    /// The multiple of a member's rate.
    pub members: f64,
    /// The rule, as a reader checks it: "RAID5 writes: (N-1) × member".
    pub rule: String,
}

impl Geometry {
    /// From md's sysfs: `md/level`, `md/raid_disks`, `md/chunk_size` and
    /// `md/layout` (a number whose meaning depends on the level).
    pub fn md(level: &str, raid_disks: u32, chunk: Option<u64>, layout: Option<u32>) -> Geometry {
        let n = raid_disks;
        let (data, parity, copies, layout) = match level {
            "raid4" => (n.saturating_sub(1), 1, 1, Some("parity-last".to_string())),
            "raid5" => (
                n.saturating_sub(1),
                1,
                1,
                layout.map(|l| raid5_layout(l).to_string()),
            ),
            "raid6" => (
                n.saturating_sub(2),
                2,
                1,
                layout.map(|l| raid6_layout(l).to_string()),
            ),
            "raid1" => (1, 0, n.max(1), None),
            "raid10" => {
                let (copies, name) = layout.map(raid10_layout).unwrap_or((2, "near=2".into()));
                (n / copies.max(1), 0, copies.max(1), Some(name))
            }
            _ => (n, 0, 1, None),
        };
        let chunk = chunk.filter(|&c| c > 0 && level != "raid1");
        Geometry {
            level: level.to_string(),
            members: n,
            data,
            parity,
            copies,
            layout,
            chunk,
            full_stripe: chunk.map(|c| c * u64::from(data.max(1))),
            member_offsets: Vec::new(),
        }
    }

    /// A dm-raid target (`raid <raid_type> ...`, what `lvcreate --type
    /// raid5` builds): md's personalities under device-mapper, so the same
    /// geometry with the layout named as mdadm names it. `raid10_format`
    /// and `raid10_copies` are the table's optional parameters.
    pub fn dm_raid(
        raid_type: &str,
        members: u32,
        chunk: Option<u64>,
        raid10_format: Option<&str>,
        raid10_copies: Option<u32>,
    ) -> Option<Geometry> {
        // drivers/md/dm-raid.c, raid_types[]: dm's names and md's algorithms.
        let (level, layout): (&str, Option<u32>) = match raid_type {
            "raid0" => ("raid0", None),
            "raid1" => ("raid1", None),
            // dm's raid4 is md raid5 with the parity on the first member.
            "raid4" | "raid5_0" => ("raid4", None),
            "raid5_n" => ("raid5", Some(5)),
            "raid5_la" => ("raid5", Some(0)),
            "raid5_ra" => ("raid5", Some(1)),
            "raid5_ls" => ("raid5", Some(2)),
            "raid5_rs" => ("raid5", Some(3)),
            "raid6_zr" => ("raid6", Some(8)),
            "raid6_nr" => ("raid6", Some(9)),
            "raid6_nc" => ("raid6", Some(10)),
            "raid6_n_6" => ("raid6", Some(5)),
            "raid6_la_6" => ("raid6", Some(16)),
            "raid6_ra_6" => ("raid6", Some(17)),
            "raid6_ls_6" => ("raid6", Some(18)),
            "raid6_rs_6" => ("raid6", Some(19)),
            "raid6_0_6" => ("raid6", Some(20)),
            t if t.starts_with("raid10") => {
                let format = raid10_format
                    .or_else(|| t.strip_prefix("raid10_"))
                    .unwrap_or("near");
                let copies = raid10_copies.unwrap_or(2).clamp(1, 255);
                let word = match format {
                    "far" => (copies << 8) | 1,
                    "offset" => 0x10000 | (copies << 8) | 1,
                    _ => (1 << 8) | copies,
                };
                ("raid10", Some(word))
            }
            _ => return None,
        };
        let mut g = Geometry::md(level, members, chunk, layout);
        if raid_type == "raid4" || raid_type == "raid5_0" {
            g.layout = Some("parity-first".into());
        }
        Some(g)
    }

    /// A plain stripe (dm `striped`, btrfs raid0): every member carries data.
    pub fn striped(members: u32, chunk: u64) -> Geometry {
        Geometry::md("raid0", members, Some(chunk), None)
    }

    /// A mirror of `members` copies (dm `mirror`, an LVM mirror).
    pub fn mirror(members: u32) -> Geometry {
        Geometry::md("raid1", members, None, None)
    }

    /// Whether it spreads data over its members in chunks: raid0 and the
    /// parity levels, and raid10 (which stripes its copies).
    pub fn stripes(&self) -> bool {
        self.chunk.is_some() && self.level != "raid1" && self.level != "linear"
    }

    /// Whether each block lives on more than one member.
    pub fn mirrors(&self) -> bool {
        self.copies > 1
    }

    /// Whether the level keeps parity (a write smaller than the full stripe
    /// reads before it writes).
    pub fn has_parity(&self) -> bool {
        self.parity > 0
    }

    /// The ceiling for one direction, against one member's rate alone.
    pub fn ceiling(&self, dir: Direction) -> Ceiling {
        let n = f64::from(self.members);
        let name = self.level.to_uppercase();
        let (members, rule) = match (self.level.as_str(), dir) {
            ("raid4", Direction::Read) => (
                n - 1.0,
                "reads: (N-1) × member (the parity member holds no data)".to_string(),
            ),
            ("raid5" | "raid6", Direction::Read) => (
                n,
                "reads: N × member (parity rotates over all members)".to_string(),
            ),
            ("raid5" | "raid4", Direction::Write) => {
                (n - 1.0, "full-stripe writes: (N-1) × member".to_string())
            }
            ("raid6", Direction::Write) => {
                (n - 2.0, "full-stripe writes: (N-2) × member".to_string())
            }
            ("raid1", Direction::Read) => {
                (n, "reads: up to N × member, with N streams".to_string())
            }
            ("raid1", Direction::Write) => (
                1.0,
                "writes: 1 × member (every member writes every block)".to_string(),
            ),
            ("raid10", Direction::Read) => (n, "reads: N × member".to_string()),
            ("raid10", Direction::Write) => (
                n / f64::from(self.copies.max(1)),
                format!(
                    "writes: N/{} × member (each block written {} times)",
                    self.copies, self.copies
                ),
            ),
            (_, Direction::Read) => (n, "reads: N × member".to_string()),
            (_, Direction::Write) => (n, "writes: N × member".to_string()),
        };
        Ceiling {
            members: members.max(1.0),
            rule: format!("{name} {rule}"),
        }
    }

    /// What the level does with its members, for a device line of
    /// `topology`: "3 data + 1 parity, left-symmetric, chunk 64k, full
    /// stripe 192k", "near=2, 2 copies, chunk 64k, ...", "2 copies",
    /// "chunk 64k, full stripe 256k"; None when there is nothing to say.
    pub fn detail(&self) -> Option<String> {
        let mut parts: Vec<String> = Vec::new();
        if self.has_parity() {
            parts.push(format!("{} data + {} parity", self.data, self.parity));
        }
        if let Some(l) = &self.layout {
            parts.push(l.clone());
        }
        if self.mirrors() {
            parts.push(format!("{} copies", self.copies));
        }
        if let Some(c) = self.chunk {
            parts.push(format!("chunk {}", kib(c)));
        }
        if let Some(f) = self.full_stripe.filter(|_| self.data > 1) {
            parts.push(format!("full stripe {}", kib(f)));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }

    /// One line: "raid5, 4 members: 3 data + 1 parity, left-symmetric,
    /// chunk 64k, full stripe 192k".
    pub fn describe(&self) -> String {
        let mut s = format!("{}, {} members", self.level, self.members);
        if self.has_parity() {
            s += &format!(": {} data + {} parity", self.data, self.parity);
        } else if self.mirrors() && self.level == "raid1" {
            s += &format!(": {} copies", self.copies);
        } else if self.mirrors() {
            s += &format!(
                ": {} copies, {} members' worth of data",
                self.copies, self.data
            );
        }
        if let Some(l) = &self.layout {
            s += &format!(", {l}");
        }
        if let Some(c) = self.chunk {
            s += &format!(", chunk {}", kib(c));
        }
        if let Some(f) = self.full_stripe.filter(|_| self.data > 1) {
            s += &format!(", full stripe {}", kib(f));
        }
        s
    }
}

pub(super) fn kib(b: u64) -> String {
    if b % (1 << 20) == 0 {
        format!("{}M", b >> 20)
    } else {
        format!("{}k", b >> 10)
    }
}

/// md's raid5 layouts (drivers/md/raid5.h, ALGORITHM_*).
fn raid5_layout(l: u32) -> &'static str {
    match l {
        0 => "left-asymmetric",
        1 => "right-asymmetric",
        2 => "left-symmetric",
        3 => "right-symmetric",
        4 => "parity-first",
        5 => "parity-last",
        _ => "unknown layout",
    }
}

/// md's raid6 layouts: the raid5 ones, the rotating-Q variants (8-10) and
/// the raid5-compatible ones with Q on the last member (16-20).
fn raid6_layout(l: u32) -> &'static str {
    match l {
        0..=5 => raid5_layout(l),
        // raid5.h: ROTATING_ZERO_RESTART 8, ROTATING_N_RESTART 9,
        // ROTATING_N_CONTINUE 10; mdadm calls them ddf-*.
        8 => "ddf-zero-restart",
        9 => "ddf-N-restart",
        10 => "ddf-N-continue",
        16 => "left-asymmetric-6",
        17 => "right-asymmetric-6",
        18 => "left-symmetric-6",
        19 => "right-symmetric-6",
        20 => "parity-first-6",
        _ => "unknown layout",
    }
}

/// md's raid10 layout word: near copies in bits 0-7, far copies in 8-15,
/// bit 16 for "offset" (far copies rotated by one chunk).
fn raid10_layout(l: u32) -> (u32, String) {
    let near = l & 0xff;
    let far = (l >> 8) & 0xff;
    let offset = l & 0x10000 != 0;
    let copies = near.max(1) * far.max(1);
    let name = if far > 1 && offset {
        format!("offset={far}")
    } else if far > 1 && near > 1 {
        format!("near={near}, far={far}")
    } else if far > 1 {
        format!("far={far}")
    } else {
        format!("near={near}")
    };
    (copies, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parity_levels_count_data_and_parity_and_their_full_stripe() {
        let g = Geometry::md("raid5", 4, Some(65536), Some(2));
        assert_eq!((g.data, g.parity, g.copies), (3, 1, 1));
        assert_eq!(g.full_stripe, Some(3 * 65536));
        assert_eq!(
            g.describe(),
            "raid5, 4 members: 3 data + 1 parity, left-symmetric, chunk 64k, full stripe 192k"
        );
        let g = Geometry::md("raid6", 6, Some(524288), Some(2));
        assert_eq!((g.data, g.parity), (4, 2));
        assert_eq!(g.ceiling(Direction::Write).members, 4.0);
        assert_eq!(g.ceiling(Direction::Read).members, 6.0);
        assert_eq!(g.full_stripe, Some(4 * 524288));
    }

    #[test]
    fn mirrors_count_copies_and_write_at_the_rate_the_copies_allow() {
        let g = Geometry::md("raid1", 2, Some(0), None);
        assert_eq!((g.data, g.copies, g.chunk), (1, 2, None));
        assert_eq!(g.ceiling(Direction::Write).members, 1.0);
        assert_eq!(g.describe(), "raid1, 2 members: 2 copies");
        // near=2 is md's default (layout 0x102 is near=2 far=1).
        let g = Geometry::md("raid10", 4, Some(65536), Some(0x102));
        assert_eq!((g.data, g.copies), (2, 2));
        assert_eq!(g.layout.as_deref(), Some("near=2"));
        assert_eq!(g.ceiling(Direction::Write).members, 2.0);
        let g = Geometry::md("raid10", 4, Some(65536), Some(0x201));
        assert_eq!(g.layout.as_deref(), Some("far=2"));
        let g = Geometry::md("raid10", 4, Some(65536), Some(0x10201));
        assert_eq!(g.layout.as_deref(), Some("offset=2"));
    }

    #[test]
    fn raid0_reaches_n_members_both_ways() {
        let g = Geometry::md("raid0", 8, Some(65536), None);
        assert_eq!(g.ceiling(Direction::Read).members, 8.0);
        assert_eq!(g.ceiling(Direction::Write).members, 8.0);
        assert_eq!(g.full_stripe, Some(8 * 65536));
        assert!(g.ceiling(Direction::Write).rule.starts_with("RAID0 "));
    }
}
