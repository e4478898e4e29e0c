//! Writes on a parity array in the stripe lab (`scripts/lab.sh`, a qemu
//! guest with a real md RAID5 over loop devices on its own tmpfs): the
//! read-modify-write that sub-stripe writes cause, seen in the members'
//! device counters and named in the run's document, and md's tunables
//! (`--stripe-cache-size`, `--group-thread-cnt`, a sweep's `--param`) put
//! back at the end of a sweep, after SIGINT, and by `stripebench restore`
//! after SIGKILL.
//!
//! One guest runs every step (a TCG boot is the slow part, on 2 CPUs other
//! tests share). The guest is emulated: these tests assert bytes, counts
//! and values, never a speed. Every write goes to the guest's own array
//! (`--allow-destructive`, as the lab's other write steps).

use crate::common::u;
use serde_json::Value;
use std::process::Command;

use crate::common::guest::Guest;

/// (After common::guest's PRELUDE.) `md ATTR` prints the array's md/ATTR; `until_md ATTR
/// V` waits (up to 120 s, polling: the state, not a guess) until it reads V;
/// `until_writing` until the array's write counter moves (the window is open).
const PRELUDE: &str = r#"
md() { cat /sys/block/${ARRAY#/dev/}/md/$1; }
until_md() { i=0; while [ "$(md $1)" != "$2" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; }
written() { set -- $(cat /sys/block/${ARRAY#/dev/}/stat); echo $7; }
until_writing() { b=$(written); i=0; while [ "$(written)" = "$b" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; }
"#;

/// Boots a guest with `opts` and runs PRELUDE + `script` in it.
fn guest(opts: &[&str], script: &str) -> Guest {
    crate::common::guest::boot(opts, &format!("{PRELUDE}\n{script}"), 900)
}

/// A run document's warnings.
fn warnings(doc: &Value) -> Vec<String> {
    doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| crate::common::warning_text(w).unwrap().to_string())
        .collect()
}

/// The volume's counters in a run document of one target: (bytes the
/// volume read, bytes its members read, how many members were counted).
fn reads(doc: &Value) -> (u64, u64, usize) {
    let dev = &doc["targets"][0]["device"];
    let members = dev["members"].as_array().unwrap();
    (
        u(&dev["read_bytes"]),
        members.iter().map(|m| u(&m["read_bytes"])).sum(),
        members.len(),
    )
}

/// The array's chunk (64k) times its data members (3 of 4): one full stripe.
const FULL_STRIPE: &str = "192k";

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn md_raid5_sub_stripe_writes_read_the_members_and_its_tunables_are_put_back() {
    let w = "--rw write --allow-destructive --ramp 0";
    let g = guest(
        &[
            "--array",
            "md-raid5",
            "--members",
            "4",
            "--chunk",
            "64k",
            "--member-size",
            "24m",
        ],
        &format!(
            r#"
md stripe_cache_size > scs.orig
md group_thread_cnt > gtc.orig
# Full stripes: --bs one stripe from offset 0 (sequential, one worker: each
# write covers one stripe whole); then 4k writes, a part of one chunk each.
step full stripebench run {w} --bs {FULL_STRIPE} --offset 0 --jobs 1 --duration 2s --json full.json $ARRAY
step sub stripebench run --rw randwrite --allow-destructive --ramp 0 --bs 4k --jobs 1 --duration 2s --json sub.json $ARRAY
# The tunables on what is no parity md: refused before any I/O.
step refused stripebench run --stripe-cache-size 1024 --duration 1s /dev/loop0
step refused_gtc stripebench sweep --param group_thread_cnt=0,2 --duration 1s /dev/loop0
# A sweep of the stripe cache: its points set it, its end puts it back.
step sweep stripebench sweep --param stripe_cache_size=512,2048 {w} --bs {FULL_STRIPE} --duration 1s --json sweep.json $ARRAY
md stripe_cache_size > scs.after_sweep
# The same interrupted (SIGINT) once its first point has set the cache.
stripebench sweep --param stripe_cache_size=4096,1024 {w} --bs {FULL_STRIPE} --duration 120s --json sweep_int.json $ARRAY > sweep_int.txt 2>&1 &
pid=$!
until_md stripe_cache_size 4096
until_writing
md stripe_cache_size > scs.during_sweep
kill -INT $pid
wait $pid
echo $? > sweep_int.rc
md stripe_cache_size > scs.after_sweep_int
# A run killed (SIGKILL) once it has set both: restore puts them back.
stripebench run --stripe-cache-size 1024 --group-thread-cnt 2 {w} --bs {FULL_STRIPE} --duration 120s $ARRAY > killed.txt 2>&1 &
pid=$!
until_md stripe_cache_size 1024
until_md group_thread_cnt 2
until_writing
kill -KILL $pid
wait $pid
echo $? > killed.rc
md stripe_cache_size > scs.killed
md group_thread_cnt > gtc.killed
step restore stripebench restore
md stripe_cache_size > scs.restored
md group_thread_cnt > gtc.restored
ls /run/stripebench/ | grep -c '^knobs-.*\.json$' > records.left
"#
        ),
    );

    // --- Read-modify-write.
    let full = g.ok_json("full");
    let sub = g.ok_json("sub");
    let (full_vol, full_members, n) = reads(&full);
    let (sub_vol, sub_members, n_sub) = reads(&sub);
    // Every member is counted, in both runs.
    assert_eq!((n, n_sub), (4, 4), "the members' counters of md0");
    assert_eq!(
        (full_vol, sub_vol),
        (0, 0),
        "the volume itself was only written"
    );
    let rmw = |doc: &Value| {
        warnings(doc)
            .into_iter()
            .filter(|w| w.contains("read-modify-write"))
            .collect::<Vec<_>>()
    };
    assert!(sub_members > 0, "4k writes on raid5 read the members");
    let said = rmw(&sub);
    assert_eq!(said.len(), 1, "{:?}", warnings(&sub));
    assert!(
        said[0].starts_with(&format!(
            "/dev/md0: members read {} while the volume was only written: read-modify-write (sub-stripe writes); ",
            stripebench::base::units::fmt_bytes(sub_members)
        )),
        "{}",
        said[0]
    );
    assert!(
        g.text("sub.txt")
            .contains("read-modify-write (sub-stripe writes)"),
        "the table says it too:\n{}",
        g.text("sub.txt")
    );
    // Full stripes are computed from what is written: md reads nothing, or
    // (its stripe cache handing a stripe over before all of it arrived) far
    // less than the sub-stripe run, byte for byte written.
    let written = |doc: &Value| u(&doc["targets"][0]["device"]["write_bytes"]).max(1) as f64;
    eprintln!(
        "members read {full_members} B for {} B written to md0 in full stripes, {sub_members} B for {} B in 4k writes",
        written(&full),
        written(&sub)
    );
    assert!(
        rmw(&full).is_empty(),
        "full-stripe writes: members read {full_members} B: {:?}",
        warnings(&full)
    );
    assert!(
        (full_members as f64 / written(&full)) < (sub_members as f64 / written(&sub)) / 10.0,
        "full stripes: {full_members} B read for {} written; 4k: {sub_members} B read for {} written",
        written(&full),
        written(&sub)
    );

    // --- The tunables.
    let orig = g.value("scs.orig");
    let orig_gtc = g.value("gtc.orig");
    assert_ne!(orig, "4096", "the sweep's values differ from md's own");
    let refused = g.said("refused", 2);
    assert_eq!(
        refused.trim().lines().last(),
        Some("stripebench: error: --stripe-cache-size: /dev/loop0 is not an md array (loop0); stripe_cache_size exists on md raid4/5/6 only"),
        "{refused}"
    );
    let refused = g.said("refused_gtc", 2);
    assert!(
        refused.contains("group_thread_cnt exists on md raid4/5/6 only"),
        "{refused}"
    );
    // Each point ran with its value, and the sweep's end put md's back.
    let sweep = g.ok_json("sweep");
    let values: Vec<u64> = sweep["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| u(&p["runs"][0]["config"]["stripe_cache_size"]))
        .collect();
    assert_eq!(values, [512, 2048]);
    assert_eq!(g.value("scs.after_sweep"), orig);
    // SIGINT in the first point: the value was set, and is back.
    assert_eq!(g.value("scs.during_sweep"), "4096");
    assert_eq!(g.rc("sweep_int"), 130, "{}", g.text("sweep_int.txt"));
    let doc: Value = std::fs::read(g.path("sweep_int.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_else(|| panic!("no sweep_int.json: {}", g.text("sweep_int.txt")));
    assert_eq!(doc["interrupted"], true);
    assert_eq!(g.value("scs.after_sweep_int"), orig);
    // SIGKILL: nothing put back, until restore.
    assert_eq!(g.value("killed.rc"), "137", "{}", g.text("killed.txt"));
    assert_eq!(
        (g.value("scs.killed"), g.value("gtc.killed")),
        ("1024".to_string(), "2".to_string())
    );
    let restored = g.said("restore", 0);
    assert!(
        restored.contains("md/stripe_cache_size to ")
            && restored.contains("md/group_thread_cnt to "),
        "{restored}"
    );
    assert_eq!(
        (g.value("scs.restored"), g.value("gtc.restored")),
        (orig, orig_gtc)
    );
    assert_eq!(g.value("records.left"), "0", "the state file is gone");
}

/// On the host (no md here): the tunables on a target that is no md array
/// are refused in one line, exit 2, before any I/O; so is a sweep of them,
/// before its first point; and values outside md's ranges by the parser.
#[test]
fn md_tunables_on_a_target_that_is_not_md_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.dat");
    std::fs::write(&file, vec![1u8; 1 << 20]).unwrap();
    let f = file.to_str().unwrap();
    for (args, says) in [
        (
            &["run", "--stripe-cache-size", "1024", "-t", "1s", f][..],
            "stripe_cache_size exists on md raid4/5/6 only",
        ),
        (
            &["run", "--group-thread-cnt", "2", "-t", "1s", f],
            "group_thread_cnt exists on md raid4/5/6 only",
        ),
        (
            &["sweep", "--param", "stripe_cache_size=256,4096", "-t", "1s", f],
            "refusing the sweep before any point runs: point stripe_cache_size=256: --stripe-cache-size: ",
        ),
        (
            &["run", "--stripe-cache-size", "16", f],
            "md takes 17 to 32768 stripe heads",
        ),
        (
            &["sweep", "--param", "group_thread_cnt=0,8193", f],
            "--param group_thread_cnt=8193: '8193' is not a thread count: md takes 0 to 8192",
        ),
    ] {
        let o = Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// 4k random writes on `kind` (4 members, chunk 64k) carry the note, with
/// every member counted and the volume read nothing; `--stripe-cache-size`
/// on it is refused (`refusal`) or taken (None: md), in the same guest.
fn sub_stripe_writes_are_named_on(kind: &str, refusal: Option<&str>) {
    let g = guest(
        &[
            "--array",
            kind,
            "--members",
            "4",
            "--chunk",
            "64k",
            "--member-size",
            "24m",
        ],
        r#"
step sub stripebench run --rw randwrite --allow-destructive --ramp 0 --bs 4k --jobs 1 --duration 2s --json sub.json $ARRAY
step scs stripebench run --stripe-cache-size 512 --duration 1s --ramp 0 $ARRAY
echo "$ARRAY" > array.path
"#,
    );
    let sub = g.ok_json("sub");
    let (vol, members, n) = reads(&sub);
    assert_eq!(n, 4, "{kind}: every member's counters");
    assert_eq!(vol, 0, "{kind}: the volume was only written");
    assert!(members > 0, "{kind}: 4k writes read the members");
    let said: Vec<String> = warnings(&sub)
        .into_iter()
        .filter(|w| w.contains("read-modify-write (sub-stripe writes)"))
        .collect();
    assert_eq!(said.len(), 1, "{kind}: {:?}", warnings(&sub));
    assert!(
        said[0].contains(&format!(
            ": members read {} while the volume was only written",
            stripebench::base::units::fmt_bytes(members)
        )),
        "{}",
        said[0]
    );
    match refusal {
        Some(says) => {
            let err = g.said("scs", 2);
            assert!(
                err.contains(&format!(
                    "stripebench: error: --stripe-cache-size: {} is {says}",
                    g.value("array.path")
                )),
                "{err}"
            );
        }
        None => {
            g.said("scs", 0);
        }
    }
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn md_raid6_sub_stripe_writes_are_named_read_modify_write() {
    sub_stripe_writes_are_named_on("md-raid6", None);
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn dm_raid5_sub_stripe_writes_are_named_and_md_tunables_refused() {
    sub_stripe_writes_are_named_on("lvm-raid5", Some("a device-mapper device (dm-"));
}
