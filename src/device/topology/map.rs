//! Where a byte of a striped or parity volume lives: the member and the
//! offset on it, by the chunk arithmetic of md (drivers/md/raid0.c for a
//! single-zone raid0, `raid5_compute_sector` in drivers/md/raid5.c for
//! raid4/5/6 and every layout md has) and of dm `striped`, plus where the
//! member's data begins (md's `data_offset`, the dm table's offsets).
//! Mirrors have no single member for an offset, and are not mapped.

use super::level::Geometry;
use super::Device;

/// A volume offset's place on a member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberAt {
    /// Index of the member in the layer's member order (md's slot).
    pub index: u32,
    /// Its kernel name (`loop2`), when the device is known.
    pub name: String,
    /// The byte on the member, its data offset included.
    pub offset: u64,
}

impl Geometry {
    /// The member index and the offset within that member's data area (its
    /// data offset not included) of volume byte `offset`. None for a level
    /// or layout that does not map one offset to one member (mirrors,
    /// raid10, linear) or without a chunk.
    pub fn locate(&self, offset: u64) -> Option<(u32, u64)> {
        let chunk = self.chunk.filter(|&c| c > 0)?;
        let n = u64::from(self.members);
        if n == 0 || self.mirrors() {
            return None;
        }
        let (c, within) = (offset / chunk, offset % chunk);
        let (dev, stripe) = match self.level.as_str() {
            // One zone: members of one size (md raid0 over members of
            // different sizes has more zones, which this does not follow).
            "raid0" => (c % n, c / n),
            "raid4" | "raid5" | "raid6" => {
                let parity = u64::from(self.parity);
                if n <= parity {
                    return None;
                }
                let data = n - parity;
                let (stripe, dd) = (c / data, c % data);
                (self.parity_member(stripe, dd, n, data)?, stripe)
            }
            _ => return None,
        };
        Some((dev as u32, stripe * chunk + within))
    }

    /// The member holding data chunk `dd` of stripe `s`, as
    /// `raid5_compute_sector` places it for this level and layout.
    fn parity_member(&self, s: u64, dd: u64, n: u64, data: u64) -> Option<u64> {
        let layout = self.layout.as_deref().unwrap_or(match self.level.as_str() {
            "raid4" => "parity-last",
            _ => "left-symmetric",
        });
        let raid6 = self.level == "raid6";
        // RAID6 with the parity P before Q: Q D D D P (P on the last
        // member) shifts by one, D D P Q D by two.
        let asym6 = |pd: u64| {
            if pd == n - 1 {
                dd + 1
            } else if dd >= pd {
                dd + 2
            } else {
                dd
            }
        };
        let asym5 = |pd: u64| if dd >= pd { dd + 1 } else { dd };
        let dev = match (self.level.as_str(), layout) {
            ("raid4" | "raid5", "parity-first") => dd + 1,
            ("raid4" | "raid5", "parity-last") => dd,
            ("raid5", "left-asymmetric") => asym5(data - s % n),
            ("raid5", "right-asymmetric") => asym5(s % n),
            ("raid5", "left-symmetric") => (data - s % n + 1 + dd) % n,
            ("raid5", "right-symmetric") => (s % n + 1 + dd) % n,
            _ if !raid6 => return None,
            (_, "left-asymmetric") => asym6(n - 1 - s % n),
            // zero-restart: right-asymmetric, Q computed in another order.
            (_, "right-asymmetric" | "ddf-zero-restart") => asym6(s % n),
            (_, "left-symmetric") => (n - 1 - s % n + 2 + dd) % n,
            (_, "right-symmetric") => (s % n + 2 + dd) % n,
            (_, "parity-first") => dd + 2,
            (_, "parity-last") => dd,
            (_, "ddf-N-restart") => asym6(n - 1 - (s + 1) % n),
            // left-symmetric with Q before P.
            (_, "ddf-N-continue") => (n - 1 - s % n + 1 + dd) % n,
            // The raid5 layouts over N-1 members, Q on the last one.
            (_, "left-asymmetric-6") => {
                let pd = data - s % (n - 1);
                if dd >= pd {
                    dd + 1
                } else {
                    dd
                }
            }
            (_, "right-asymmetric-6") => {
                let pd = s % (n - 1);
                if dd >= pd {
                    dd + 1
                } else {
                    dd
                }
            }
            (_, "left-symmetric-6") => (data - s % (n - 1) + 1 + dd) % (n - 1),
            (_, "right-symmetric-6") => (s % (n - 1) + 1 + dd) % (n - 1),
            (_, "parity-first-6") => dd + 1,
            _ => return None,
        };
        Some(dev)
    }
}

impl Device {
    /// The member and member offset of byte `offset` of this device, when
    /// its geometry maps one offset to one member.
    pub fn locate(&self, offset: u64) -> Option<MemberAt> {
        let g = self.geometry()?;
        let (index, within) = g.locate(offset)?;
        let data_offset = g.member_offsets.get(index as usize).copied().unwrap_or(0);
        Some(MemberAt {
            index,
            name: self
                .members
                .get(index as usize)
                .map(|m| m.name.clone())
                .unwrap_or_else(|| format!("member {index}")),
            offset: within + data_offset,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K64: u64 = 64 << 10;

    fn at(g: &Geometry, chunk_no: u64) -> (u32, u64) {
        g.locate(chunk_no * K64 + 512).unwrap()
    }

    #[test]
    fn md_raid0_goes_round_the_members_chunk_by_chunk() {
        // 3 MiB is chunk 48: on 4 members, member 48 % 4 = 0, row 12.
        let g = Geometry::md("raid0", 4, Some(K64), None);
        assert_eq!(g.locate(3145728), Some((0, 12 * K64)));
        // On 3 members: member 0, row 16 = 1 MiB (the issue's "loop2 at
        // 1048576" when loop2 is the first member and data starts at 0).
        let g = Geometry::md("raid0", 3, Some(K64), None);
        assert_eq!(g.locate(3145728), Some((0, 1048576)));
        assert_eq!(g.locate(3145728 + K64 + 7), Some((1, 1048576 + 7)));
        // The volume read error at 524521472 on 4 × 64k: chunk 8003
        // (+ 36864), member 8003 % 4 = 3, row 2000.
        let g = Geometry::md("raid0", 4, Some(K64), None);
        assert_eq!(g.locate(524521472), Some((3, 2000 * K64 + 36864)));
    }

    /// md's raid5 layouts on 4 members, chunk by chunk (D = data chunk
    /// number, P = parity), as drawn in mdadm's documentation:
    ///
    /// left-symmetric    left-asymmetric   right-symmetric   right-asymmetric
    /// D0 D1 D2 P        D0 D1 D2 P        P  D0 D1 D2       P  D0 D1 D2
    /// D4 D5 P  D3       D3 D4 P  D5       D5 P  D3 D4       D3 P  D4 D5
    /// D8 P  D6 D7       D6 P  D7 D8       D7 D8 P  D6       D6 D7 P  D8
    /// P  D9 D10 D11     P  D9 D10 D11     D9 D10 D11 P      D9 D10 D11 P
    #[test]
    fn raid5_layouts_rotate_parity_as_md_does() {
        let table: [(u32, [u32; 12]); 4] = [
            (2, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]),
            (0, [0, 1, 2, 0, 1, 3, 0, 2, 3, 1, 2, 3]),
            (3, [1, 2, 3, 2, 3, 0, 3, 0, 1, 0, 1, 2]),
            (1, [1, 2, 3, 0, 2, 3, 0, 1, 3, 0, 1, 2]),
        ];
        for (layout, members) in table {
            let g = Geometry::md("raid5", 4, Some(K64), Some(layout));
            for (d, &m) in members.iter().enumerate() {
                let (dev, off) = at(&g, d as u64);
                assert_eq!(dev, m, "{:?} chunk D{d}", g.layout);
                assert_eq!(off, (d as u64 / 3) * K64 + 512, "row of D{d}");
            }
        }
        // The 3 MiB on md raid5 4 × 64k left-symmetric: chunk 48,
        // stripe 16 (16 % 4 = 0: parity last), member 0 at 1 MiB.
        let g = Geometry::md("raid5", 4, Some(K64), Some(2));
        assert_eq!(g.locate(3145728), Some((0, 1048576)));
        // parity-first and parity-last (raid4) put parity on one member.
        let g = Geometry::md("raid5", 4, Some(K64), Some(4));
        assert_eq!((at(&g, 0).0, at(&g, 4).0), (1, 2));
        let g = Geometry::md("raid4", 4, Some(K64), None);
        assert_eq!((at(&g, 0).0, at(&g, 5).0), (0, 2));
    }

    /// md raid6 on 6 members, chunk by chunk (P, Q the syndromes):
    ///
    /// left-symmetric (md's default)   ddf-N-continue
    /// Q  D0 D1 D2 D3 P                D0 D1 D2 D3 Q  P
    /// D4 D5 D6 D7 P  Q                D5 D6 D7 Q  P  D4
    /// D9 D10 D11 P Q D8               ...
    #[test]
    fn raid6_rotates_p_and_q_as_md_does() {
        let g = Geometry::md("raid6", 6, Some(K64), Some(2));
        let want = [1, 2, 3, 4, 0, 1, 2, 3, 5, 0, 1, 2];
        for (d, &m) in want.iter().enumerate() {
            assert_eq!(at(&g, d as u64).0, m, "left-symmetric D{d}");
        }
        // left-asymmetric: Q D0 D1 D2 D3 P, D4 D5 D6 D7 P Q, D8 D9 D10 P Q D11.
        let g = Geometry::md("raid6", 6, Some(K64), Some(0));
        let want = [1, 2, 3, 4, 0, 1, 2, 3, 0, 1, 2, 5];
        for (d, &m) in want.iter().enumerate() {
            assert_eq!(at(&g, d as u64).0, m, "left-asymmetric D{d}");
        }
        // ddf-N-continue: P on the last member, Q before it; data from 0.
        let g = Geometry::md("raid6", 6, Some(K64), Some(10));
        assert_eq!(
            (0..8).map(|d| at(&g, d).0).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 5, 0, 1, 2]
        );
        // ddf-zero-restart (LVM's raid6_zr): P on member 0 in stripe 0,
        // Q on member 1, data after them.
        let g = Geometry::dm_raid("raid6_zr", 6, Some(K64), None, None).unwrap();
        assert_eq!(
            (0..8).map(|d| at(&g, d).0).collect::<Vec<_>>(),
            vec![2, 3, 4, 5, 0, 3, 4, 5]
        );
        // left-symmetric-6: raid5 left-symmetric over 5, Q on the last.
        let g = Geometry::md("raid6", 6, Some(K64), Some(18));
        assert_eq!(
            (0..8).map(|d| at(&g, d).0).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4, 0, 1, 2]
        );
        // parity-first-6 and parity-last.
        let g = Geometry::md("raid6", 6, Some(K64), Some(20));
        assert_eq!(at(&g, 0).0, 1);
        let g = Geometry::md("raid6", 6, Some(K64), Some(5));
        assert_eq!((at(&g, 0).0, at(&g, 4).0), (0, 0));
    }

    #[test]
    fn mirrors_and_raid10_are_not_mapped() {
        assert_eq!(Geometry::mirror(2).locate(0), None);
        assert_eq!(
            Geometry::md("raid10", 4, Some(K64), Some(0x102)).locate(0),
            None
        );
        assert_eq!(Geometry::md("raid0", 4, None, None).locate(0), None);
    }
}
