//! Degraded and rebuilding md arrays in the stripe lab (`scripts/lab.sh
//! --degraded K`, `--rebuilding K`: a throwaway qemu guest), issue 42: a
//! RAID6 of 6 with member 2 failed and removed is reported degraded by
//! `topology` (text and JSON) with the empty slot where member 2 was;
//! `compare` says the array is degraded, measures it against the degraded
//! read ceiling instead of the healthy N × member, and calls no member
//! slow. The guest runs under TCG on a shared machine: the assertions are
//! on structure and words, never on a speed.

use serde_json::Value;

use crate::common::guest::{boot, Guest};

fn check_topology(g: &Guest, removed: &str) {
    let text = g.said("topo", 0);
    eprintln!("topology:\n{text}");
    assert!(
        text.contains("md raid6 (6 disks: 4 data + 2 parity"),
        "{text}"
    );
    assert!(
        text.contains("degraded: 1 of 6 members down (slot 2 empty)"),
        "{text}"
    );
    assert!(text.contains("(slot 2: missing, no device)"), "{text}");
    assert!(
        text.contains("ARRAY STATE: degraded: 1 of 6 members down (slot 2 empty)"),
        "{text}"
    );
    let leaves = text.lines().find(|l| l.contains("leaf device(s)")).unwrap();
    assert!(leaves.starts_with("5 leaf device(s)"), "{leaves}");
    assert!(!leaves.contains(&format!("{removed} ")), "{leaves}");
    let doc = g.doc("topojson", 0);
    let st = &doc["root"]["md"]["state"];
    assert_eq!(st["degraded"], 1, "{st}");
    assert_eq!(st["missing_slots"], serde_json::json!([2]), "{st}");
    assert_eq!(st["sync_action"], "idle", "{st}");
    let members = st["members"].as_array().unwrap();
    assert_eq!(members.len(), 5, "{st}");
    for m in members {
        assert_eq!(m["state"], serde_json::json!(["in_sync"]), "{m}");
        assert_ne!(m["slot"], 2, "{m}");
    }
}

fn check_compare(doc: &Value, text: &str) {
    assert!(
        doc["array_state"]
            .as_str()
            .unwrap()
            .starts_with("degraded: 1 of 6 members down (slot 2 empty)"),
        "{}",
        doc["array_state"]
    );
    let read = doc["ceilings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["direction"] == "read")
        .unwrap();
    assert_eq!(read["members"], 4.0, "{read}");
    assert!(
        read["rule"]
            .as_str()
            .unwrap()
            .starts_with("degraded RAID6 reads: (N-2) × member (1 of 6 down"),
        "{read}"
    );
    assert!(!text.contains("RAID6 reads: N × member"), "{text}");
    assert!(text.contains("ARRAY STATE: degraded"), "{text}");
    assert_eq!(doc["members"].as_array().unwrap().len(), 5);
    for m in doc["members"].as_array().unwrap() {
        assert_eq!(m["slow"], false, "{m}");
    }
    assert!(doc["slowest"].is_null(), "{}", doc["slowest"]);
    assert!(!text.contains("SLOW"), "{text}");
    if doc["stripe_efficiency"].is_object() {
        assert!(
            text.contains("degraded array, efficiency against its degraded ceiling"),
            "{text}"
        );
        assert_eq!(doc["efficiency_ceiling"]["members"], 4.0);
    }
    assert!(
        doc["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("the array is degraded (1 of 6")),
        "{}",
        doc["notes"]
    );
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn a_raid6_with_a_member_removed_is_degraded_in_topology_and_compare_and_none_is_slow() {
    let g = boot(
        &[
            "--array",
            "md-raid6",
            "--members",
            "6",
            "--member-size",
            "32m",
            "--degraded",
            "2",
        ],
        r#"
echo "$LAB_DEGRADED" > degraded.txt
step topo stripebench topology $ARRAY
step topojson stripebench topology --json $ARRAY
cp topojson.txt topojson.json
step cmp stripebench compare --duration 2s --ramp 0 --json cmp.json $ARRAY
"#,
        1500,
    );
    assert_eq!(g.value("degraded.txt"), "2");
    let removed = g.members()[2].clone();
    check_topology(&g, &removed);
    let doc = g.doc("cmp", 0);
    let text = g.text("cmp.txt");
    eprintln!("compare:\n{text}");
    check_compare(&doc, &text);
}

/// `--degraded` and `--rebuilding` refuse what the lab cannot fail, in one
/// line, exit 2, before anything is fetched or booted.
#[test]
fn degraded_and_rebuilding_refuse_what_has_no_member_to_fail() {
    for (args, says) in [
        (
            &["--array", "md-raid0", "--degraded", "1", "--", "true"][..],
            "md-raid0 has no redundancy",
        ),
        (
            &["--array", "lvm-raid5", "--rebuilding", "1", "--", "true"],
            "--rebuilding: not for lvm-raid5",
        ),
        (
            &["--array", "md-raid5", "--degraded", "4", "--", "true"],
            "members 0 to 3",
        ),
        (
            &[
                "--array",
                "md-raid5",
                "--degraded",
                "1",
                "--rebuilding",
                "2",
                "--",
                "true",
            ],
            "give one",
        ),
        (
            &[
                "--array",
                "md-raid5",
                "--rebuilding",
                "1",
                "--sync-speed",
                "0",
                "--",
                "true",
            ],
            "--sync-speed '0'",
        ),
    ] {
        let o = std::process::Command::new("bash")
            .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/lab.sh"))
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(
            err.starts_with("lab: ") && err.contains(says),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty());
    }
}

/// The rebuild's cost, measured (issue 42, part 3): a RAID5 of 4 recovering
/// member 1, swept over three `sync_speed_max` values with a random-read
/// workload beside it. Each point reports the resync's rate over its window
/// (from /proc/mdstat) and the whole rebuild's time at that rate; a faster
/// resync costs the users latency, so from the lowest ceiling to the
/// highest the rebuild time falls while the users' p99 rises. The limits
/// are put back when the sweep ends. Under TCG the resync's parity work
/// and the users' reads share two emulated CPUs, so the effect is large;
/// the assertions are on directions, never on a speed.
#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn a_recovering_raid5_swept_over_sync_speed_max_trades_user_p99_for_rebuild_time() {
    let g = boot(
        &[
            "--array",
            "md-raid5",
            "--members",
            "4",
            "--member-size",
            "160m",
            "--rebuilding",
            "1",
            "--sync-speed",
            "200",
        ],
        r#"
step sweep stripebench sweep --param sync_speed_max=300,3000,30000 --sync-speed-min 1 --rw randread --bs 4k --direct --duration 4 --ramp 0 --no-progress --json sweep.json $ARRAY
cat /sys/block/${ARRAY#/dev/}/md/sync_speed_max /sys/block/${ARRAY#/dev/}/md/sync_speed_min > limits.txt
"#,
        1500,
    );
    let text = g.said("sweep", 0);
    eprintln!("sweep:\n{text}");
    assert!(text.contains("resync MB/s      rebuild"), "{text}");
    assert_eq!(
        text.matches("  resync: md").count(),
        3,
        "a resync line under each point: {text}"
    );
    let doc = g.json("sweep.json");
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    // (resync bytes/s, whole rebuild s, users' p99 ns) per point.
    let fig: Vec<(f64, f64, f64)> = points
        .iter()
        .zip(["300", "3000", "30000"])
        .map(|(p, max)| {
            let r = &p["runs"][0];
            assert_eq!(r["config"]["sync_speed_max"], max, "{}", r["config"]);
            assert_eq!(r["config"]["sync_speed_min"], "1");
            let rs = r["resync"].as_array().expect("a resync per point");
            assert_eq!(rs.len(), 1, "{rs:?}");
            assert_eq!(rs[0]["action"], "recovery", "{}", rs[0]);
            assert_eq!(rs[0]["speed_max"]["kb_per_sec"].to_string(), max);
            (
                rs[0]["bytes_per_sec"].as_f64().unwrap(),
                rs[0]["full_seconds"].as_f64().unwrap(),
                r["total"]["latency_ns"]["p99"].as_f64().unwrap(),
            )
        })
        .collect();
    eprintln!("(resync B/s, rebuild s, p99 ns) per point: {fig:?}");
    let (low, high) = (fig[0], fig[2]);
    assert!(high.0 > low.0, "the resync went faster: {fig:?}");
    assert!(high.1 < low.1, "the rebuild's time fell: {fig:?}");
    assert!(high.2 > low.2, "the users' p99 rose: {fig:?}");
    // Put back as they were: the lab's 200 and 1, both set on the array.
    assert_eq!(g.text("limits.txt"), "200 (local)\n1 (local)\n");
}
