//! A stack said by what it is: "striped (chunk 64k) over 2 mirrors of 2",
//! "raid5 (3 data + 1 parity, left-symmetric, chunk 64k, full stripe
//! 192k)": each level with a geometry, going down through the layers that
//! only pass I/O on (dm-linear, dm-crypt, dm-delay, partitions).

use super::level::Geometry;
use super::Device;

impl Device {
    /// The stack from this device down, by level; None when no layer of it
    /// stripes, mirrors or keeps parity.
    pub fn summary(&self) -> Option<String> {
        let (d, g) = first_level(self)?;
        let mut s = phrase(&g);
        let below: Vec<Option<(String, Geometry)>> = d
            .members
            .iter()
            .map(|m| first_level(m).map(|(md, mg)| (md.summary().unwrap_or_default(), mg)))
            .collect();
        if below.is_empty() || below.iter().any(Option::is_none) {
            return Some(s);
        }
        let below: Vec<(String, Geometry)> = below.into_iter().flatten().collect();
        let n = below.len();
        if below.iter().all(|(b, _)| *b == below[0].0) {
            let (b, mg) = &below[0];
            if mg.level == "raid1" && b == &phrase(mg) {
                s += &format!(" over {n} mirrors of {}", mg.copies);
            } else {
                s += &format!(" over {n} × {b}");
            }
        } else {
            let all: Vec<&str> = below.iter().map(|(b, _)| b.as_str()).collect();
            s += &format!(" over {n} members: {}", all.join("; "));
        }
        Some(s)
    }
}

/// The first device from `d` down, through single-member layers, that has
/// a geometry, and that geometry.
fn first_level(d: &Device) -> Option<(&Device, Geometry)> {
    let mut d = d;
    loop {
        if let Some(g) = d.geometry() {
            return Some((d, g));
        }
        match d.members.as_slice() {
            [only] => d = only,
            _ => return None,
        }
    }
}

/// One level in words.
fn phrase(g: &Geometry) -> String {
    match g.level.as_str() {
        "raid1" => format!("mirror of {}", g.copies),
        "raid0" => match g.chunk {
            Some(c) => format!("striped (chunk {})", super::level::kib(c)),
            None => "striped".to_string(),
        },
        "linear" => "linear".to_string(),
        _ => match g.detail() {
            Some(d) => format!("{} ({d})", g.level),
            None => g.level.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(name: &str, geometry: Option<Geometry>, members: Vec<Device>) -> Device {
        Device {
            name: name.into(),
            dev: String::new(),
            path: format!("/dev/{name}"),
            kind: "md".into(),
            parent: None,
            md: None,
            dm: None,
            btrfs: None,
            leaf: None,
            queue: None,
            members,
            geometry,
        }
    }

    fn leaf(name: &str) -> Device {
        dev(name, None, Vec::new())
    }

    #[test]
    fn lvm_striped_over_two_md_mirrors_says_so() {
        let pair =
            |n: &str, a: &str, b: &str| dev(n, Some(Geometry::mirror(2)), vec![leaf(a), leaf(b)]);
        let top = dev(
            "dm-0",
            Some(Geometry::striped(2, 64 << 10)),
            vec![pair("md1", "loop0", "loop1"), pair("md2", "loop2", "loop3")],
        );
        assert_eq!(
            top.summary().as_deref(),
            Some("striped (chunk 64k) over 2 mirrors of 2")
        );
        // Through a dm-linear over the stripe.
        let lin = dev("dm-1", None, vec![top]);
        assert_eq!(
            lin.summary().as_deref(),
            Some("striped (chunk 64k) over 2 mirrors of 2")
        );
    }

    #[test]
    fn parity_and_raid10_name_their_layout() {
        let r5 = dev(
            "md5",
            Some(Geometry::md("raid5", 4, Some(64 << 10), Some(2))),
            (0..4).map(|i| leaf(&format!("loop{i}"))).collect(),
        );
        assert_eq!(
            r5.summary().as_deref(),
            Some("raid5 (3 data + 1 parity, left-symmetric, chunk 64k, full stripe 192k)")
        );
        let r10 = dev(
            "md10",
            Some(Geometry::md("raid10", 4, Some(64 << 10), Some(0x102))),
            (0..4).map(|i| leaf(&format!("loop{i}"))).collect(),
        );
        assert_eq!(
            r10.summary().as_deref(),
            Some("raid10 (near=2, 2 copies, chunk 64k, full stripe 128k)")
        );
        assert_eq!(leaf("sda").summary(), None);
    }
}
