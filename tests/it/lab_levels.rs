//! The lab's parity, mirrored and nested arrays (issue 23): what
//! `topology` says of md RAID5/6/10, LVM over md mirrors and an LVM RAID5
//! (dm-raid), `run --align stripe` on parity levels, and a volume error
//! on a dm stripe named by its member. Each test boots one small
//! `scripts/lab.sh` guest; like tests/it/lab.rs they assert structure
//! (counts, layout, chunk, offsets), never speed.
//!
//! Needs qemu and the lab's tools, or root for scripts/lab.sh to install
//! them with apt (`sb_lab`, see build.rs).

use crate::common::u;
use serde_json::Value;

use crate::common::guest::Guest as Lab;

/// Boots a guest with `opts` and runs `script` in it.
fn lab(opts: &[&str], script: &str) -> Lab {
    crate::common::guest::boot(opts, script, 480)
}

/// `$MEMBERS` without their /dev/.
fn members(lab: &Lab) -> Vec<String> {
    lab.members()
        .iter()
        .map(|m| m.trim_start_matches("/dev/").to_string())
        .collect()
}

/// The steps every parity guest runs: topology (JSON and text), and an
/// aligned read of whole full stripes by two workers.
const PARITY_STEPS: &str = r#"
stripebench topology --json $ARRAY > topo.json
stripebench topology $ARRAY > topo.txt
W=$(( LAB_CHUNK * $1 ))
step align stripebench run --align stripe --bs $W --jobs 2 --io-limit 2m --ramp 0 --json align.json $ARRAY
"#;

/// A parity array's geometry in `topology --json`, and `run --align
/// stripe` accepted with regions on its full stripe (chunk × data members).
fn check_parity(lab: &Lab, level: &str, n: u64, parity: u64, layout: &str) {
    let chunk = 64u64 << 10;
    let g = &lab.json("topo.json")["root"]["geometry"];
    assert_eq!(g["level"], level, "{g}");
    assert_eq!(u(&g["members"]), n);
    assert_eq!(u(&g["data"]), n - parity);
    assert_eq!(u(&g["parity"]), parity);
    assert_eq!(g["layout"], layout);
    assert_eq!(u(&g["chunk"]), chunk);
    let width = chunk * (n - parity);
    assert_eq!(u(&g["full_stripe"]), width);
    let text = lab.text("topo.txt");
    assert!(
        text.contains(&format!("{} data + {parity} parity, {layout}", n - parity)),
        "{text}"
    );
    let doc = lab.ok_json("align");
    let workers = doc["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 2);
    for w in workers {
        assert_eq!(
            u(&w["region"]["offset"]) % width,
            0,
            "on a full stripe: {w}"
        );
        assert_eq!(u(&w["region"]["length"]) % width, 0, "whole stripes: {w}");
        assert_eq!(u(&w["bs"]), width);
    }
    assert!(u(&doc["total"]["bytes"]) > 0);
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn md_raid5_over_6_members_gives_data_parity_layout_and_aligns_to_its_full_stripe() {
    let lab = lab(
        &[
            "--array",
            "md-raid5",
            "--members",
            "6",
            "--member-size",
            "32m",
            "--chunk",
            "64k",
        ],
        &PARITY_STEPS.replace("$1", "5"),
    );
    check_parity(&lab, "raid5", 6, 1, "left-symmetric");
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn md_raid6_over_6_members_gives_its_layout_and_aligns_to_its_full_stripe() {
    let lab = lab(
        &[
            "--array",
            "md-raid6",
            "--members",
            "6",
            "--member-size",
            "32m",
            "--chunk",
            "64k",
            "--layout",
            "left-asymmetric",
        ],
        &PARITY_STEPS.replace("$1", "4"),
    );
    check_parity(&lab, "raid6", 6, 2, "left-asymmetric");
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn md_raid10_says_near_2_and_its_copies() {
    let lab = lab(
        &[
            "--array",
            "md-raid10",
            "--members",
            "4",
            "--member-size",
            "32m",
            "--chunk",
            "64k",
        ],
        "stripebench topology --json $ARRAY > topo.json\nstripebench topology $ARRAY > topo.txt",
    );
    let g = &lab.json("topo.json")["root"]["geometry"];
    assert_eq!(g["level"], "raid10");
    assert_eq!((u(&g["copies"]), u(&g["data"])), (2, 2));
    assert_eq!(g["layout"], "near=2");
    let text = lab.text("topo.txt");
    assert!(
        text.contains("md raid10 (4 disks: near=2, 2 copies, chunk 64k"),
        "{text}"
    );
}

/// The issue's "4 leaf device(s) ...; striped, chunk 64k" for LVM striped
/// over two md RAID1 pairs.
#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn lvm_over_md_raid1_is_summarised_as_stripes_over_mirrors() {
    let lab = lab(
        &[
            "--array",
            "lvm-over-md-raid1",
            "--members",
            "4",
            "--chunk",
            "64k",
        ],
        "stripebench topology --json $ARRAY > topo.json\nstripebench topology $ARRAY > topo.txt",
    );
    let text = lab.text("topo.txt");
    assert!(
        text.contains("; striped (chunk 64k) over 2 mirrors of 2"),
        "{text}"
    );
    assert!(!text.contains("chunk ?"), "{text}");
    let root = &lab.json("topo.json")["root"];
    let top = if root["geometry"].is_null() {
        &root["members"][0]
    } else {
        root
    };
    assert_eq!(top["geometry"]["level"], "raid0", "{root}");
    for pair in top["members"].as_array().unwrap() {
        assert_eq!(pair["geometry"]["level"], "raid1", "{pair}");
        assert_eq!(u(&pair["geometry"]["copies"]), 2);
        assert!(pair["geometry"]["chunk"].is_null(), "a mirror has no chunk");
    }
}

/// `lvcreate --type raid5`: the geometry from the dm-raid table, each PV
/// listed once (not once for its rmeta and once for its rimage), and
/// `--align stripe` accepted.
#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn lvm_raid5_gives_its_dm_raid_geometry_and_each_pv_once() {
    let lab = lab(
        &["--array", "lvm-raid5", "--members", "4", "--chunk", "64k"],
        &PARITY_STEPS.replace("$1", "3"),
    );
    let root = &lab.json("topo.json")["root"];
    assert_eq!(root["dm"]["target"], "raid", "{root}");
    check_parity(&lab, "raid5", 4, 1, "left-symmetric");
    let text = lab.text("topo.txt");
    let leaves = text
        .lines()
        .find(|l| l.contains("leaf device(s)"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(leaves.starts_with("4 leaf device(s)"), "{leaves}");
    assert_eq!(root["members"].as_array().unwrap().len(), 4, "the rimages");
}

/// A read error on a dm stripe names the member it lies on and the offset
/// there, and that offset is inside the member's dm-error range.
#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn a_read_error_on_a_dm_stripe_names_its_member_and_offset() {
    let lab = lab(
        &[
            "--array",
            "dm-stripe",
            "--members",
            "4",
            "--member-size",
            "32m",
            "--chunk",
            "64k",
            "--failing-member",
            "1",
        ],
        r#"
echo "$LAB_FAIL_START $LAB_FAIL_END" > fail.range
size=$(blockdev --getsize64 $ARRAY)
# Half-way into the volume is the start of each member's third quarter.
step err stripebench run --bs 64k --offset $((size / 2)) --duration 2s --ramp 0 --json err.json $ARRAY
"#,
    );
    let range: Vec<u64> = lab
        .text("fail.range")
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let members = members(&lab);
    let doc = lab.json("err.json");
    let samples: Vec<&Value> = doc["workers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|w| w["error_samples"].as_array().unwrap())
        .collect();
    assert!(!samples.is_empty(), "{}", lab.text("err.txt"));
    for s in samples {
        assert_eq!(s["member"].as_str(), Some(members[1].as_str()), "{s}");
        let at = u(&s["member_offset"]);
        assert!(
            (range[0]..range[1]).contains(&at),
            "{at} not in {range:?}: {s}"
        );
        // A full stripe of 4 × 64k holds 64k of each member.
        let off = u(&s["offset"]);
        assert_eq!(at, off / (256 << 10) * (64 << 10) + off % (64 << 10), "{s}");
    }
    let text = lab.text("err.txt");
    assert!(text.contains(&format!("= {} at ", members[1])), "{text}");
}
