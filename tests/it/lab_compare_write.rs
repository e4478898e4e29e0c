//! `compare --rw write` on a parity array in the stripe lab (a qemu guest
//! with a real md RAID5 over 6 loop devices): the members are read, the
//! volume is written in full stripes and then one chunk at a time, and the
//! sub-stripe phase is the one whose members read (read-modify-write).
//! The guest is emulated: these tests assert phases, bytes and words,
//! never a speed; the rates are printed for the reader.

use crate::common::guest::Guest;
use crate::common::u;
use serde_json::Value;

fn guest(opts: &[&str], script: &str) -> Guest {
    crate::common::guest::boot(opts, script, 900)
}

fn phase<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no phase {name}: {doc}"))
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn md_raid5_compare_writes_full_and_sub_stripes_and_names_read_modify_write() {
    let g = guest(
        &[
            "--array",
            "md-raid5",
            "--members",
            "6",
            "--chunk",
            "64k",
            "--member-size",
            "24m",
        ],
        r#"
step refused stripebench compare --rw write --duration 1s $ARRAY
step cw stripebench compare --rw write --allow-destructive --repeat 1 --duration 4s --ramp 0 --json cw.json $ARRAY
"#,
    );
    // Writes need consent, said before any I/O.
    let refused = g.said("refused", 2);
    assert!(
        refused.contains("compare --rw write writes over the whole volume and destroys its data: give --allow-destructive"),
        "{refused}"
    );
    let text = g.said("cw", 0);
    println!("{text}");
    let doc = g.json("cw.json");
    let names: Vec<&str> = doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "members together, O_DIRECT",
            "volume, 6 workers, full-stripe writes",
            "volume, 6 workers, sub-stripe writes"
        ]
    );
    // The members were only read; the volume written in 320k (64k x 5
    // data members) aligned to full stripes, then in 64k.
    let together = phase(&doc, "members together, O_DIRECT");
    assert_eq!(together["document"]["config"]["rw"], "read");
    let full = phase(&doc, "volume, 6 workers, full-stripe writes");
    let sub = phase(&doc, "volume, 6 workers, sub-stripe writes");
    assert_eq!(full["document"]["config"]["rw"], "write");
    assert_eq!(full["document"]["config"]["bs"], "327680");
    assert_eq!(sub["document"]["config"]["bs"], "65536");
    assert!(
        text.contains("the members are only read; the volume is written: 'volume, 6 workers, full-stripe writes' write bs 320k, 'volume, 6 workers, sub-stripe writes' write bs 64k"),
        "{text}"
    );
    for p in [full, sub] {
        // A phase whose workers completed too few writes in the TCG window
        // is thin (the tool right about a slow machine); its counters are
        // still what the members did.
        assert_ne!(p["status"], "failed", "{}", p["problems"]);
        assert_eq!(u(&p["volume_read_bytes"]), 0, "the volume was only written");
    }
    let (full_read, sub_read) = (
        u(&full["members_read_bytes"]),
        u(&sub["members_read_bytes"]),
    );
    let written = |p: &Value| u(&p["document"]["targets"][0]["device"]["write_bytes"]).max(1);
    println!(
        "full stripes: {:.1} MB/s, members read {full_read} B for {} B written; sub-stripe: {:.1} MB/s, members read {sub_read} B for {} B written",
        full["bytes_per_sec"].as_f64().unwrap() / 1e6,
        written(full),
        sub["bytes_per_sec"].as_f64().unwrap() / 1e6,
        written(sub)
    );
    assert!(sub_read > 0, "64k writes on raid5 read the members");
    assert!(
        (full_read as f64 / written(full) as f64) < (sub_read as f64 / written(sub) as f64) / 10.0,
        "full stripes read far less per byte written"
    );
    assert!(
        text.contains("while the volume was written (the volume read 0 B): read-modify-write"),
        "{text}"
    );
    assert!(
        text.contains("read-modify-write (sub-stripe writes)"),
        "{text}"
    );
    // The write ceiling, against the full-stripe phase, and what it rests
    // on; with no efficiency when that phase is thin, said so.
    assert!(
        text.contains("RAID5 full-stripe writes: (N-1) × member"),
        "{text}"
    );
    if full["status"] == "ok" {
        assert_eq!(doc["efficiency_ceiling"]["direction"], "write");
        assert!(
            text.contains("stripe efficiency, in two: volume (6 workers, full-stripe writes) "),
            "{text}"
        );
        assert!(
            text.contains("the write ceiling rests on the members' read rate"),
            "{text}"
        );
    } else {
        assert!(
            text.contains(
                "no efficiency: the phase 'volume, 6 workers, full-stripe writes' is thin"
            ),
            "{text}"
        );
    }
}
