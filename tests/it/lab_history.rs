//! The per-disk history in the stripe lab (`scripts/lab.sh`, a throwaway
//! qemu guest with 8 virtio-scsi disks, each with a WWN and a serial):
//! a disk renamed by a detach and an attach keeps its history; a delay
//! added to one disk (cgroup v2 io.max) is drift on that disk alone; one
//! disk slowed among eight of one model is fail-slow, ranked first and
//! alone. A history lives in one boot (`$OUT` starts empty each time), so
//! each test runs its runs, its change and its `history` in one guest.
//!
//! Member i is wwn 0x5000c5000000(i+1), serial lab-m(i), model "QEMU
//! HARDDISK" rev "2.5+"; its sd name changes between boots (async probe),
//! so the scripts find disks by wwid, never by a fixed sdX.
//!
//! The guest runs under TCG on a shared machine: these tests assert which
//! disk is named, never a speed. The throttle is far below what a disk
//! does there (~250-500 IOPS each), so that it is the difference.

use serde_json::Value;

use crate::common::guest::{boot, Guest};

/// busybox sh helpers (see the lab notes): `by_wwid W` is the sd name of
/// the disk whose wwid is W, `wait_wwid W` waits for it (sd probes
/// asynchronously), `rescan HOST H:C:T:L` scans one target, `throttle DEV
/// LIMITS` caps a disk in the cgroup `slow`, `slow CMD...` runs a command
/// in it, `bench NAME DISKS...` is one short recorded run.
const HELPERS: &str = r#"
host_of() { readlink -f /sys/block/$1/device | sed -n 's#.*/\(host[0-9]*\)/.*#\1#p'; }
hctl_of() { basename "$(readlink -f /sys/block/$1/device)"; }
by_wwid() { for b in /sys/block/sd*; do [ "$(cat $b/device/wwid 2>/dev/null)" = "$1" ] && echo ${b##*/}; done; }
wait_wwid() { n=0; while [ $n -lt 100 ]; do d=$(by_wwid $1); [ -n "$d" ] && [ -b /dev/$d ] && { echo $d; return 0; }; sleep 0.1; n=$((n+1)); done; return 1; }
rescan() { h=$1; set -- $(echo $2 | tr ":" " "); echo "$2 $3 $4" > /sys/class/scsi_host/$h/scan; }
throttle() {
  mount | grep -q ' type cgroup2 ' || mount -t cgroup2 none /sys/fs/cgroup
  echo +io > /sys/fs/cgroup/cgroup.subtree_control
  mkdir -p /sys/fs/cgroup/slow
  echo "$(cat /sys/block/$1/dev) $2" > /sys/fs/cgroup/slow/io.max
  cat /sys/fs/cgroup/slow/io.max > io.max.txt
}
slow() { sh -c 'echo $$ > /sys/fs/cgroup/slow/cgroup.procs && exec "$@"' sh "$@"; }
# $OUT is the host's share, mode 0777: a history refuses a directory
# others may write to, so it lives in one of ours, copied out at the end.
mkdir -p -m 0700 /var/lib/sb-lab
DB=/var/lib/sb-lab/h.db
RUN="stripebench run --duration 1s --ramp 0 --direct --bs 4k --rw randread --no-progress --history $DB"
"#;

/// Boots `members` disks on two virtio-scsi controllers and runs HELPERS +
/// `script` there.
fn guest(members: &str, script: &str) -> Guest {
    boot(
        &[
            "--array",
            "none",
            "--controllers",
            "2",
            "--members",
            members,
            "--member-size",
            "64m",
        ],
        &format!("{HELPERS}\n{script}"),
        480,
    )
}

/// The history key of lab member `i` (its WWN).
fn key(i: usize) -> String {
    format!("wwn:0x5000c5{:010x}", i + 1)
}

/// The disk whose key is `key`.
fn disk<'a>(doc: &'a Value, key: &str) -> &'a Value {
    doc["disks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["key"] == key)
        .unwrap_or_else(|| panic!("no disk {key} in {doc}"))
}

/// Step `name` ran and recorded its results (a history that refused costs
/// no measurement: exit 0 and one line saying why).
fn ran(g: &Guest, name: &str) -> String {
    let text = g.said(name, 0);
    assert!(!text.contains("history database"), "{name}:\n{text}");
    text
}

fn keys(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|x| x["disk"].as_str().unwrap().to_string())
        .collect()
}

fn lines(list: &Value) -> String {
    list.as_array()
        .unwrap()
        .iter()
        .map(|x| x["line"].as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn a_disk_renamed_by_a_detach_and_attach_keeps_its_history() {
    // Members 0 and 2 (both on host0): delete both, scan the later-named
    // one's target first, and it takes the lower free name: they swap.
    let g = guest(
        "4",
        r#"
set -- $LOOPS; A=${1#/dev/}; B=${3#/dev/}
WA=$(cat /sys/block/$A/device/wwid); WB=$(cat /sys/block/$B/device/wwid)
echo "$A $WA $B $WB" > before.txt
step run1 $RUN /dev/$A /dev/$B
if [ "$B" \< "$A" ]; then X=$B; Y=$A; else X=$A; Y=$B; fi
WX=$(cat /sys/block/$X/device/wwid); WY=$(cat /sys/block/$Y/device/wwid)
HX=$(host_of $X); CX=$(hctl_of $X); HY=$(host_of $Y); CY=$(hctl_of $Y)
echo 1 > /sys/block/$X/device/delete
echo 1 > /sys/block/$Y/device/delete
rescan $HY $CY; wait_wwid $WY > /dev/null
rescan $HX $CX; wait_wwid $WX > /dev/null
echo "$(by_wwid $WA) $(by_wwid $WB)" > after.txt
step run2 $RUN /dev/$A /dev/$B
step hist stripebench history --history $DB --json $OUT/hist.json
step one stripebench history --history $DB lab-m000 --json $OUT/one.json
"#,
    );
    let before: Vec<String> = g.value("before.txt").split(' ').map(String::from).collect();
    let after: Vec<String> = g.value("after.txt").split(' ').map(String::from).collect();
    eprintln!(
        "before: {before:?}; after (sd of {}, {}): {after:?}",
        before[1], before[3]
    );
    assert_eq!(before[1], "naa.5000c50000000001", "{before:?}");
    assert_eq!(before[3], "naa.5000c50000000003", "{before:?}");
    // The names swapped: member 0 is now where member 2 was.
    assert_eq!(after, [before[2].clone(), before[0].clone()], "{before:?}");
    ran(&g, "run1");
    ran(&g, "run2");
    let doc = g.ok_json("hist");
    eprintln!("{}", g.text("hist.txt"));
    let all: Vec<&str> = doc["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["key"].as_str().unwrap())
        .collect();
    assert_eq!(all, [key(0), key(2)], "two disks, each by its WWN");
    for (i, now) in [(0, &before[2]), (2, &before[0])] {
        let d = disk(&doc, &key(i));
        assert_eq!(d["identity"], "wwn", "{d}");
        assert_eq!(d["results"], 2, "{d}");
        assert_eq!(d["serial"], format!("lab-m{i:03}"), "{d}");
        assert_eq!(d["model"], "QEMU HARDDISK", "trimmed: {d}");
        assert_eq!(d["firmware"], "2.5+", "{d}");
        assert_eq!(d["device"], format!("/dev/{now}"), "its name now: {d}");
        assert_eq!(d["main"]["runs"], 2, "both runs in one series: {d}");
    }
    // By its serial: the one disk, its two results under its two names
    // (the list above keeps each point's rates only, not its device).
    let one = g.ok_json("one");
    let disks = one["disks"].as_array().unwrap();
    assert_eq!(disks.len(), 1, "{one}");
    assert_eq!(disks[0]["key"], key(0));
    let points = disks[0]["main"]["points"].as_array().unwrap();
    let names: Vec<&str> = points
        .iter()
        .map(|p| p["device"].as_str().unwrap())
        .collect();
    eprintln!("lab-m000's results were on {names:?}");
    assert_eq!(
        names,
        [format!("/dev/{}", before[0]), format!("/dev/{}", before[2])],
        "{one}"
    );
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn a_delay_added_to_one_disk_is_drift_on_that_disk_only() {
    // Member 1 capped at 100 reads/s after 5 runs of the four together
    // (each does ~500 IOPS there): it keeps some I/O, so a p99 too.
    let g = guest(
        "4",
        r#"
set -- $LOOPS; S=${2#/dev/}; D="$1 $2 $3 $4"
cat /sys/block/$S/device/wwid > slow.wwid
for r in 1 2 3 4 5; do step base$r $RUN $D; done
throttle $S riops=100
for r in 1 2 3 4 5; do step slow$r slow $RUN $D; done
step hist stripebench history --history $DB --baseline 5 --recent 5 --json $OUT/hist.json
step hist50 stripebench history --history $DB --baseline 5 --recent 5 --threshold 50 --json $OUT/hist50.json
step failon stripebench history --history $DB --baseline 5 --recent 5 --fail-on drift
"#,
    );
    assert_eq!(g.value("slow.wwid"), "naa.5000c50000000002");
    eprintln!("io.max: {}", g.value("io.max.txt"));
    for r in 1..=5 {
        ran(&g, &format!("base{r}"));
        ran(&g, &format!("slow{r}"));
    }
    eprintln!("a throttled run:\n{}", g.text("slow5.txt"));
    // At the default threshold (10%) the throttled disk drifted, both ways,
    // and leads (the worst change first). Other disks' figures move with
    // the host's load over the ten runs (seen: p99 +21% to +31%, MB/s -9%
    // to +20%, none significant); any such drift is shown, not judged here.
    let doc = g.ok_json("hist");
    let said = g.text("hist.txt");
    eprintln!("{said}");
    let drift = &doc["drift"];
    eprintln!("drift:\n{}", lines(drift));
    let slow = key(1);
    let on_slow: Vec<&Value> = drift
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["disk"] == slow.as_str())
        .collect();
    let metrics: Vec<&str> = on_slow
        .iter()
        .map(|d| d["metric"].as_str().unwrap())
        .collect();
    assert!(
        metrics.contains(&"p99") || metrics.contains(&"MB/s"),
        "the throttled disk drifted:\n{said}"
    );
    assert_eq!(drift[0]["disk"], slow.as_str(), "it leads:\n{said}");
    for d in &on_slow {
        let c = d["change_pct"].as_f64().unwrap();
        match d["metric"].as_str().unwrap() {
            "p99" => assert!(c > 10.0, "{d}"),
            "MB/s" => assert!(c < -10.0, "{d}"),
            m => panic!("metric {m}: {d}"),
        }
        assert!(d["p"].as_f64().unwrap() < 0.05, "{d}");
        assert_eq!(
            (d["n_baseline"].as_u64(), d["n_recent"].as_u64()),
            (Some(5), Some(5))
        );
        assert_eq!(d["device"], disk(&doc, &slow)["device"], "{d}");
    }
    assert!(disk(&doc, &slow)["flags"]
        .as_array()
        .unwrap()
        .contains(&"drift".into()));
    // Past 50%, which the load does not reach and the throttle does
    // (a tenth of its reads), the throttled disk is the only drift.
    let big = g.ok_json("hist50");
    assert_eq!(
        keys(&big["drift"])
            .iter()
            .collect::<std::collections::BTreeSet<_>>(),
        [&slow].into(),
        "drift past 50% on the throttled disk only:\n{}",
        g.text("hist50.txt")
    );
    for i in [0, 2, 3] {
        let flags = &disk(&big, &key(i))["flags"];
        assert!(
            !flags.as_array().unwrap().contains(&"drift".into()),
            "disk {i}: {flags}"
        );
    }
    // --fail-on drift: exit 1, and the line said.
    let text = g.said("failon", 1);
    assert!(
        text.contains(lines(drift).lines().next().unwrap()),
        "{text}"
    );
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn one_slow_disk_among_eight_of_one_model_is_fail_slow() {
    // Member 5 capped at 5 reads/s from the start (the eight together do
    // 150-380 IOPS each in the guest). io.max delays in slices of ~100 ms,
    // so a cap of 25-50/s left its p99 at 100-107 ms, while the others'
    // reached 20-40 ms on a busy host and the bound 65-75 ms (ratio 2.4x
    // and 3.3x, but only 1.3x over the bound); at 5/s each read waits
    // ~200 ms and the disk still does a few in each run.
    let g = guest(
        "8",
        r#"
set -- $LOOPS; shift 5; S=${1#/dev/}
cat /sys/block/$S/device/wwid > slow.wwid
throttle $S riops=5
for r in 1 2 3; do step run$r slow $RUN $LOOPS; done
step hist stripebench history --history $DB --json $OUT/hist.json
"#,
    );
    assert_eq!(g.value("slow.wwid"), "naa.5000c50000000006");
    eprintln!("io.max: {}", g.value("io.max.txt"));
    for r in 1..=3 {
        eprintln!("run{r}:\n{}", ran(&g, &format!("run{r}")));
    }
    let doc = g.ok_json("hist");
    let said = g.text("hist.txt");
    eprintln!("{said}");
    let fs = &doc["fail_slow"];
    eprintln!("fail-slow:\n{}", lines(fs));
    assert_eq!(doc["unfitted"], serde_json::json!([]), "{said}");
    let first = &fs[0];
    assert_eq!(
        first["disk"],
        key(5).as_str(),
        "the throttled disk first:\n{said}"
    );
    assert_eq!(first["rank"], 1);
    assert_eq!(first["peers"], 8);
    assert_eq!(first["model"], "QEMU HARDDISK");
    let ratio = first["ratio"].as_f64().unwrap();
    assert!(ratio > 1.0, "{first}");
    assert!(disk(&doc, &key(5))["flags"]
        .as_array()
        .unwrap()
        .contains(&"fail-slow".into()));
    // On a quiet host it is the only one (seen: 10x to 25x the fit, the
    // others within the bound). On a host so busy that the guest's other
    // disks complete a few dozen reads a second, their p99 is their
    // slowest read or two, and one may pass the bound too (seen beside
    // stress-ng: 3.1x and 1.5x, against the throttled disk's 6.2x): the
    // throttled disk is still the furthest above the fit, by far.
    for other in fs.as_array().unwrap().iter().skip(1) {
        let r = other["ratio"].as_f64().unwrap();
        assert!(ratio > 1.5 * r, "{other}:\n{said}");
    }
}
