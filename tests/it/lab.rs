//! The stripe lab: stripebench on real md, dm and LVM arrays, built by
//! `scripts/lab.sh` in a throwaway qemu guest (this machine's kernel has no
//! md or dm). Each test boots one guest, runs a script of stripebench
//! commands there that leaves its documents, counter snapshots and exit
//! codes under `$OUT`, and checks them here against what mdadm, dmsetup and
//! the members' own `/sys/class/block/*/stat` say.
//!
//! The guest runs under TCG (emulated CPU): its speeds are not device
//! speeds, so these tests assert structure (order, chunk, bytes, errors,
//! which member is slow behind a 20 ms dm-delay), never MB/s.
//!
//! Needs qemu and the lab's tools, or root for scripts/lab.sh to install
//! them with apt (`sb_lab`, see build.rs).

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{f, u};
use serde_json::Value;

/// What a guest left behind.
struct Lab {
    stderr: String,
    out: tempfile::TempDir,
}

/// Helpers every guest script starts with: `step NAME CMD...` keeps the
/// command's output in NAME.txt and its exit status in NAME.rc; `snap NAME`
/// keeps the members' stat lines in NAME.stat.
const PRELUDE: &str = r#"
cd "$OUT"
echo "$MEMBERS" > members.list
echo "$ARRAY" > array.path
step() { n=$1; shift; "$@" > "$n.txt" 2>&1; echo $? > "$n.rc"; }
snap() { for m in $MEMBERS; do d=${m#/dev/}; echo "$d $(cat /sys/class/block/$d/stat)"; done > "$1.stat"; }
"#;

/// `scripts/lab.sh --bin <the binary under test> ARGS`.
fn lab_sh(args: &[&str]) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("stripebench");
    Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/lab.sh"))
        .args(["--bin", bin.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("scripts/lab.sh could not run: {e}"))
}

/// Boots a guest with `opts`, runs PRELUDE + `script` in it, and returns
/// what it left in `$OUT`. The guest must power off cleanly and the script
/// exit 0 (each step's own status is in its .rc file).
fn lab(opts: &[&str], script: &str) -> Lab {
    let started = std::time::Instant::now();
    let command = format!("{PRELUDE}\n{script}\nexit 0");
    let boot = || {
        let out = tempfile::tempdir().unwrap();
        let mut args = vec!["--out", out.path().to_str().unwrap(), "--timeout", "480"];
        args.extend_from_slice(opts);
        args.extend(["--", command.as_str()]);
        let o = lab_sh(&args);
        (out, o)
    };
    // A guest whose kernel stalled under TCG is booted once more, and says
    // so (common::guest::stalled): the emulator's fault, not stripebench's.
    let (mut out, mut o) = boot();
    if crate::common::guest::stalled(&o) {
        eprintln!(
            "lab {opts:?}: the guest kernel stalled (TCG) and was killed at its timeout: booting it once more\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        (out, o) = boot();
    }
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    common::succeeded_as(
        &o,
        format_args!("scripts/lab.sh {opts:?} after {:.0?}", started.elapsed()),
    );
    eprintln!("lab {opts:?}: {:.0?}\n{stderr}", started.elapsed());
    Lab { stderr, out }
}

impl Lab {
    fn path(&self, name: &str) -> PathBuf {
        self.out.path().join(name)
    }

    fn text(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_else(|e| {
            panic!("the guest left no {name} ({e}); lab said:\n{}", self.stderr)
        })
    }

    fn json(&self, name: &str) -> Value {
        let t = self.text(name);
        serde_json::from_str(&t).unwrap_or_else(|e| panic!("{name} is not JSON ({e}): {t}"))
    }

    /// The exit status of step `name`.
    fn rc(&self, name: &str) -> i32 {
        self.text(&format!("{name}.rc"))
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}.rc"))
    }

    /// Step `name` exited 0; its document.
    fn ok_json(&self, name: &str) -> Value {
        assert_eq!(
            self.rc(name),
            0,
            "{name} failed in the guest:\n{}",
            self.text(&format!("{name}.txt"))
        );
        self.json(&format!("{name}.json"))
    }

    /// `$MEMBERS` as kernel names (loop0, dm-0, loop1p1).
    fn members(&self) -> Vec<String> {
        self.text("members.list")
            .split_whitespace()
            .map(|m| m.trim_start_matches("/dev/").to_string())
            .collect()
    }

    /// Per-member stat fields of snapshot `name`.
    fn snap(&self, name: &str) -> HashMap<String, Vec<u64>> {
        self.text(&format!("{name}.stat"))
            .lines()
            .map(|l| {
                let mut w = l.split_whitespace();
                let dev = w.next().unwrap().to_string();
                (dev, w.map(|x| x.parse().unwrap()).collect())
            })
            .collect()
    }

    /// What each member did between two snapshots: (read requests counted
    /// by the device, read requests merged into others, bytes read).
    fn reads_between(&self, a: &str, b: &str) -> Vec<(String, u64, u64, u64)> {
        let (sa, sb) = (self.snap(a), self.snap(b));
        self.members()
            .into_iter()
            .map(|m| {
                let d = |i: usize| sb[&m][i] - sa[&m][i];
                (m.clone(), d(0), d(1), d(2) * 512)
            })
            .collect()
    }
}

/// The device numbers of a topology level's members, in order.
fn member_devs(level: &Value) -> Vec<String> {
    level["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["dev"].as_str().unwrap().to_string())
        .collect()
}

fn names(level: &Value) -> Vec<String> {
    level["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect()
}

/// `mdadm --detail`: (level, chunk bytes, members as MAJ:MIN in RaidDevice order).
fn mdadm_detail(text: &str) -> (String, Option<u64>, Vec<String>) {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| {
                let (k, v) = l.split_once(" : ")?;
                (k.trim() == name).then(|| v.trim().to_string())
            })
            .unwrap_or_default()
    };
    let chunk = field("Chunk Size")
        .strip_suffix('K')
        .map(|k| k.parse::<u64>().unwrap() * 1024);
    let mut rows: Vec<(u64, String)> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("Number"))
        .skip(1)
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let slot = w.get(3)?.parse().ok()?;
            Some((slot, format!("{}:{}", w[1], w[2])))
        })
        .collect();
    rows.sort();
    (
        field("Raid Level"),
        chunk,
        rows.into_iter().map(|(_, d)| d).collect(),
    )
}

/// `dmsetup table` lines of device `name`: the target and its arguments.
fn dm_table<'a>(table: &'a str, name: &str) -> Vec<Vec<&'a str>> {
    table
        .lines()
        .filter_map(|l| {
            let (n, rest) = l.split_once(": ")?;
            (n == name).then(|| rest.split_whitespace().collect())
        })
        .collect()
}

/// A striped table's chunk in bytes and its devices in order.
fn striped(table: &str, name: &str) -> (u64, Vec<String>) {
    let seg = &dm_table(table, name)[0];
    assert_eq!(seg[2], "striped", "{name}: {seg:?}");
    let chunk = seg[4].parse::<u64>().unwrap() * 512;
    let devs = seg[5..].iter().step_by(2).map(|s| s.to_string()).collect();
    (chunk, devs)
}

/// `run --members`: one pinned worker per member, in order, and each
/// member's device counters about equal to its own bytes (O_DIRECT).
fn check_members_run(doc: &Value, members: &[String]) {
    let targets = doc["targets"].as_array().unwrap();
    let paths: Vec<String> = targets
        .iter()
        .map(|t| {
            t["path"]
                .as_str()
                .unwrap()
                .trim_start_matches("/dev/")
                .to_string()
        })
        .collect();
    assert_eq!(paths, members, "one target per member, in stripe order");
    assert_eq!(doc["workers"].as_array().unwrap().len(), members.len());
    assert!(doc["config"]["direct"].as_bool().unwrap());
    let workers = doc["workers"].as_array().unwrap();
    for w in workers {
        assert!(!w["pinned_cpu"].is_null(), "worker not pinned: {w}");
    }
    // Every worker moved bytes on a small array; on 64 members sharing 2
    // TCG vCPUs for a second, a worker may complete no I/O at all when the
    // machine is busy (that failed only then): the run as a whole moved
    // bytes, and each member's counters match its own (below).
    let moved = workers.iter().filter(|w| u(&w["bytes"]) > 0).count();
    if workers.len() <= 8 {
        assert_eq!(moved, workers.len(), "every worker moved bytes");
    } else {
        assert!(moved > 0, "no worker moved a byte");
    }
    for t in targets {
        let d = &t["device"];
        assert_eq!(
            d["name"].as_str(),
            Some(t["path"].as_str().unwrap().trim_start_matches("/dev/")),
            "counters of the member itself"
        );
        assert_eq!(d["stats"], true, "{} keeps statistics: {d}", t["path"]);
        let ratio = f(&d["read_ratio"]);
        assert!(
            (0.99..=1.01).contains(&ratio),
            "{}: device read {} for the application's {} (ratio {ratio})",
            t["path"],
            d["read_bytes"],
            d["app_read_bytes"]
        );
    }
}

/// `compare`: every phase ran and read, the stripe efficiency is the volume
/// ÷ N × the slowest member together and that member ÷ the median, and the member behind the 20 ms dm-delay is the one flagged.
fn check_compare(doc: &Value, members: &[String], slow: Option<usize>) {
    let n = members.len();
    let phases = doc["phases"].as_array().unwrap();
    let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    let together = "members together, O_DIRECT".to_string();
    let voln = format!("volume, {n} workers, O_DIRECT");
    assert_eq!(
        names,
        vec![
            together.as_str(),
            "volume, 1 worker, O_DIRECT",
            voln.as_str(),
            &format!("volume, {n} workers, buffered"),
            "volume, 1 worker, buffered"
        ]
    );
    for p in phases {
        // A phase whose workers completed too few I/Os (64 buffered workers
        // on 2 busy TCG vCPUs) is marked thin and given no rate: that is
        // the tool being right about a slow machine, not a failure.
        if p["status"] == "thin" {
            // Thin says why, and its figure is its document's, kept out
            // of the efficiency.
            assert!(
                !p["problems"].as_array().unwrap().is_empty(),
                "{}",
                p["name"]
            );
            assert_eq!(
                p["bytes_per_sec"], p["document"]["total"]["bytes_per_sec"],
                "{}",
                p["name"]
            );
            continue;
        }
        assert!(f(&p["bytes_per_sec"]) > 0.0, "{}", p["name"]);
        assert_eq!(u(&p["document"]["total"]["errors"]), 0, "{}", p["name"]);
    }
    assert_eq!(phases[3]["direct"], false);
    let rate = |name: &str| f(&phases.iter().find(|p| p["name"] == name).unwrap()["bytes_per_sec"]);
    // Against RAID0's ceiling, N × member: the median of the members
    // together's runs (compare's default --repeat 3).
    let mut together_runs: Vec<f64> = phases
        .iter()
        .chain(doc["repeats"].as_array().unwrap())
        .filter(|p| p["name"] == together.as_str())
        .map(|p| f(&p["bytes_per_sec"]))
        .collect();
    assert_eq!(together_runs.len(), 3);
    together_runs.sort_by(f64::total_cmp);
    // No efficiency is given when a phase it rests on was marked thin or
    // failed (64 workers on 2 busy TCG vCPUs): then that phase says so.
    let status = |name: &str| phases.iter().find(|p| p["name"] == name).unwrap()["status"].clone();
    let e = &doc["stripe_efficiency"];
    if e.is_null() {
        assert!(
            status(&voln) != "ok" || status(&together) != "ok",
            "no efficiency, yet its phases are ok"
        );
    } else {
        // Each member's median over the together runs compare kept (status
        // ok); the stripe layer against N × the slowest of them, the
        // slowest against the median member.
        let ok: Vec<&Value> = phases
            .iter()
            .chain(doc["repeats"].as_array().unwrap())
            .filter(|p| p["name"] == together.as_str() && p["status"] == "ok")
            .collect();
        let median = stripebench::analysis::summary::median;
        let rates: Vec<f64> = members
            .iter()
            .map(|m| {
                median(
                    ok.iter()
                        .flat_map(|p| p["document"]["targets"].as_array().unwrap())
                        // The members are named as the kernel names them
                        // (loop0), the targets by their nodes (/dev/loop0).
                        .filter(|t| {
                            t["path"].as_str().map(|p| p.trim_start_matches("/dev/"))
                                == Some(m.as_str())
                        })
                        .map(|t| f(&t["bytes_per_sec"]))
                        .collect(),
                )
            })
            .collect();
        assert!(rates.iter().all(|r| r.is_finite() && *r > 0.0), "{rates:?}");
        let slowest = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let layer = f(&e["stripe_layer"]);
        assert!(
            (layer - rate(&voln) / (n as f64 * slowest)).abs() < 1e-9,
            "stripe layer {layer}: {e}"
        );
        let imbalance = f(&e["imbalance"]);
        assert!(
            (imbalance - slowest / median(rates.clone())).abs() < 1e-9,
            "imbalance {imbalance}: {e}"
        );
        assert_eq!(doc["efficiency_ceiling"]["members"], n as f64);
    }
    let paths: Vec<String> = doc["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m["path"]
                .as_str()
                .unwrap()
                .trim_start_matches("/dev/")
                .to_string()
        })
        .collect();
    assert_eq!(paths, members, "compare reads the array's members");
    let share: f64 = doc["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| f(&m["share"]))
        .sum();
    assert!((share - 1.0).abs() < 1e-6);
    if let Some(k) = slow {
        assert_eq!(
            doc["slowest"]
                .as_str()
                .map(|s| s.trim_start_matches("/dev/")),
            Some(members[k].as_str()),
            "the member behind dm-delay is the slowest: {}",
            doc["members"]
        );
        assert_eq!(doc["members"][k]["slow"], true);
    }
}

/// `--align stripe`: every member request of an aligned full-stripe run is
/// one whole chunk; the same run shifted by half a chunk straddles, and the
/// counters see it (a member gets more, smaller pieces), so the check can fail.
fn check_align(lab: &Lab, chunk: u64, aligned: (&str, &str), shifted: (&str, &str)) {
    let n = lab.members().len() as u64;
    let doc = lab.ok_json("align");
    let width = chunk * n;
    for w in doc["workers"].as_array().unwrap() {
        assert_eq!(
            u(&w["region"]["offset"]) % width,
            0,
            "region on a full stripe: {w}"
        );
        assert_eq!(u(&w["bs"]), width);
    }
    let total = u(&doc["total"]["bytes"]);
    for (m, ios, merges, bytes) in lab.reads_between(aligned.0, aligned.1) {
        assert_eq!(bytes, total / n, "{m}: its share of the aligned run");
        assert_eq!(
            (ios + merges) * chunk,
            bytes,
            "{m}: {ios} requests (+{merges} merged) for {bytes} bytes: a request straddled a chunk"
        );
    }
    assert_eq!(u(&lab.ok_json("straddle")["total"]["bytes"]), total);
    let pieces: u64 = lab
        .reads_between(shifted.0, shifted.1)
        .iter()
        .map(|(_, ios, merges, _)| ios + merges)
        .sum();
    assert!(
        pieces > total / chunk,
        "shifted by half a chunk, {pieces} pieces for {total} bytes: straddling must show"
    );
}

/// The write guard refuses a member of a running array and a device held by
/// dm; `--dry-run` lists the failed checks and exits 2.
fn check_guard(lab: &Lab, step: &str, holder: &str) {
    assert_eq!(lab.rc(step), 2);
    let t = lab.text(&format!("{step}.txt"));
    assert!(
        t.contains("[REFUSED] no holders") && t.contains(&format!("is held by {holder}")),
        "{t}"
    );
    assert!(t.contains("[REFUSED] exclusive open"), "{t}");
    assert!(t.contains("[ok] not mounted"), "{t}");
}

const ALIGN_STEPS: &str = r#"
W=$((LAB_CHUNK * 4))
snap a0; step align stripebench run --align stripe --bs $W --jobs 2 --io-limit 2m --json align.json $ARRAY; snap a1
step straddle stripebench run --offset $((LAB_CHUNK / 2)) --bs $W --io-limit 4m --json straddle.json $ARRAY; snap a2
"#;

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn md_raid0_topology_members_compare_align_and_write_guard() {
    let lab = lab(
        &[
            "--array",
            "md-raid0",
            "--members",
            "4",
            "--chunk",
            "64k",
            "--slow-member",
            "2:20",
        ],
        &format!(
            r#"
stripebench topology --json $ARRAY > topo.json
mdadm --detail $ARRAY > mdadm.txt
step members stripebench run --members $ARRAY --duration 2s --ramp 0 --json members.json
step compare stripebench compare --duration 2s --ramp 0 --json compare.json $ARRAY
{ALIGN_STEPS}
step guard_md stripebench run --rw write --allow-destructive --dry-run /dev/loop0
step guard_dm stripebench run --rw write --allow-destructive --dry-run /dev/loop2
step guard_md_real stripebench run --rw write --allow-destructive --bs 64k --io-limit 64k /dev/loop1
echo 32 > /sys/block/loop1/queue/max_sectors_kb
step leaf stripebench run --bs 1m --duration 1s --ramp 0 --json leaf.json $ARRAY
"#
        ),
    );
    let members = lab.members();
    assert_eq!(members, ["loop0", "loop1", "dm-0", "loop3"]);

    // Topology against mdadm --detail.
    let topo = lab.json("topo.json");
    let root = &topo["root"];
    let (level, chunk, order) = mdadm_detail(&lab.text("mdadm.txt"));
    assert_eq!(root["kind"], "md");
    assert_eq!(root["md"]["level"].as_str(), Some(level.as_str()));
    assert_eq!(level, "raid0");
    assert_eq!(root["md"]["chunk_size"].as_u64(), chunk);
    assert_eq!(chunk, Some(64 << 10));
    assert_eq!(u(&root["md"]["raid_disks"]), 4);
    assert_eq!(
        member_devs(root),
        order,
        "member order is mdadm's RaidDevice order"
    );
    assert_eq!(names(root), members);
    // The slow member is dm-delay over loop2, and the stack shows it.
    assert_eq!(root["members"][2]["dm"]["target"], "delay");
    assert_eq!(names(&root["members"][2]), ["loop2"]);

    check_members_run(&lab.ok_json("members"), &members);
    check_compare(&lab.ok_json("compare"), &members, Some(2));
    check_align(&lab, 64 << 10, ("a0", "a1"), ("a1", "a2"));

    check_guard(&lab, "guard_md", "md0");
    check_guard(&lab, "guard_dm", "dm-0");
    assert_eq!(lab.rc("guard_md_real"), 2, "refused without --dry-run too");
    let t = lab.text("guard_md_real.txt");
    assert!(t.contains("loop1 is held by md0"), "{t}");

    // Requests split below the volume: every leaf member's own counters,
    // and a warning naming the member and its limit (loop1 takes 32 KiB
    // requests, the chunk is 64 KiB).
    let leaf = lab.ok_json("leaf");
    let d = &leaf["targets"][0]["device"];
    let ms: Vec<&str> = d["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(ms.len(), 4, "{ms:?}");
    for want in ["loop0", "loop1", "loop2", "loop3"] {
        assert!(ms.contains(&want), "{ms:?}");
    }
    let l1 = d["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "loop1")
        .unwrap();
    let avg = f(&l1["avg_read_request_bytes"]);
    assert!(
        (avg - 32768.0).abs() < 32768.0 * 0.05,
        "loop1 average request {avg}"
    );
    let w = leaf["warnings"].to_string();
    assert!(
        w.contains("member loop1 of md0") && w.contains("max_sectors_kb is 32"),
        "{w}"
    );
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn dm_stripe_table_compare_align_model_and_write_guard() {
    let lab = lab(
        &[
            "--array",
            "dm-stripe",
            "--members",
            "4",
            "--chunk",
            "128k",
            "--slow-member",
            "2:20",
        ],
        &format!(
            r#"
stripebench topology --json $ARRAY > topo.json
dmsetup table > table.txt
step members stripebench run --members $ARRAY --duration 2s --ramp 0 --json members.json
step compare stripebench compare --duration 2s --ramp 0 --json compare.json $ARRAY
{ALIGN_STEPS}
snap s0; step model stripebench run --stripe 128k --bs 512k --io-limit 2m --json model.json $MEMBERS; snap s1
step real stripebench run --bs 512k --io-limit 8m --json real.json $ARRAY; snap s2
step guard_dm stripebench run --rw write --allow-destructive --dry-run /dev/loop0
"#
        ),
    );
    let members = lab.members();
    assert_eq!(members, ["loop0", "loop1", "dm-0", "loop3"]);

    // Topology against dmsetup table.
    let topo = lab.json("topo.json");
    let root = &topo["root"];
    let table = lab.text("table.txt");
    let (chunk, order) = striped(&table, "stripe");
    assert_eq!(root["kind"], "dm");
    assert_eq!(root["dm"]["name"], "stripe");
    assert_eq!(root["dm"]["target"], "striped");
    assert_eq!(root["dm"]["source"], "dm table");
    assert_eq!(root["dm"]["chunk_size"].as_u64(), Some(chunk));
    assert_eq!(chunk, 128 << 10);
    assert_eq!(member_devs(root), order, "member order is the table's");
    assert_eq!(names(root), members);

    check_members_run(&lab.ok_json("members"), &members);
    check_compare(&lab.ok_json("compare"), &members, Some(2));
    check_align(&lab, 128 << 10, ("a0", "a1"), ("a1", "a2"));

    // The model (--stripe over the members) against the real dm-stripe over
    // the same members, for the same 8 MiB logical stream: each member gets
    // the same bytes in the same chunk-sized pieces.
    let model = lab.ok_json("model");
    let real = lab.ok_json("real");
    assert_eq!(model["config"]["stripe_chunk"].as_u64(), Some(128 << 10));
    assert_eq!(u(&model["total"]["bytes"]), 8 << 20);
    assert_eq!(u(&real["total"]["bytes"]), 8 << 20);
    let by_model = lab.reads_between("s0", "s1");
    let by_real = lab.reads_between("s1", "s2");
    for ((m, ios, merges, bytes), (_, rios, rmerges, rbytes)) in by_model.iter().zip(&by_real) {
        assert_eq!(*bytes, 2 << 20, "{m}: the model's share");
        assert_eq!(
            bytes, rbytes,
            "{m}: model and real dm-stripe move the same bytes"
        );
        assert_eq!(ios + merges, rios + rmerges, "{m}: in the same pieces");
        assert_eq!((ios + merges) * (128 << 10), *bytes, "{m}: one chunk each");
    }
    for w in model["workers"].as_array().unwrap() {
        assert_eq!(
            u(&w["bs"]),
            128 << 10,
            "each member serves chunk-sized pieces"
        );
    }

    check_guard(&lab, "guard_dm", "dm-1");
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn lvm_striped_lv_matches_its_dm_table() {
    let lab = lab(
        // A member behind dm-delay: LVM must take the PV on it, not the
        // same signature on the loop device under it.
        &[
            "--array",
            "lvm-stripe",
            "--members",
            "3",
            "--chunk",
            "32k",
            "--slow-member",
            "1:5",
        ],
        r#"
stripebench topology --json $ARRAY > topo.json
dmsetup table > table.txt
step members stripebench run --members $ARRAY --duration 1s --ramp 0 --json members.json
"#,
    );
    let members = lab.members();
    let root = &lab.json("topo.json")["root"];
    let (chunk, order) = striped(&lab.text("table.txt"), "lab-stripe");
    assert_eq!(chunk, 32 << 10);
    assert_eq!(members, ["loop0", "dm-0", "loop2"]);
    assert_eq!(root["dm"]["name"], "lab-stripe");
    assert_eq!(root["dm"]["target"], "striped");
    assert_eq!(root["dm"]["chunk_size"].as_u64(), Some(chunk));
    assert_eq!(member_devs(root), order);
    assert_eq!(names(root), members);
    check_members_run(&lab.ok_json("members"), &members);
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn md_raid10_matches_mdadm_detail() {
    let lab = lab(
        &["--array", "md-raid10", "--members", "4", "--chunk", "64k"],
        r#"
stripebench topology --json $ARRAY > topo.json
mdadm --detail $ARRAY > mdadm.txt
"#,
    );
    let root = &lab.json("topo.json")["root"];
    let (level, chunk, order) = mdadm_detail(&lab.text("mdadm.txt"));
    assert_eq!(level, "raid10");
    assert_eq!(root["md"]["level"].as_str(), Some("raid10"));
    assert_eq!(root["md"]["chunk_size"].as_u64(), chunk);
    assert_eq!(chunk, Some(64 << 10));
    assert_eq!(member_devs(root), order);
    assert_eq!(names(root), lab.members());
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn dm_linear_over_partitions_reaches_the_partitions_and_their_disks() {
    let lab = lab(
        &["--array", "dm-linear", "--members", "2"],
        r#"
stripebench topology --json $ARRAY > topo.json
dmsetup table > table.txt
step members stripebench run --members $ARRAY --duration 1s --ramp 0 --json members.json
"#,
    );
    let members = lab.members();
    assert_eq!(members, ["loop0p1", "loop1p1"]);
    let root = &lab.json("topo.json")["root"];
    let table = lab.text("table.txt");
    let segs = dm_table(&table, "linear");
    assert_eq!(root["dm"]["target"], "linear");
    assert_eq!(root["dm"]["chunk_size"], Value::Null);
    let order: Vec<String> = segs.iter().map(|s| s[3].to_string()).collect();
    assert_eq!(member_devs(root), order, "segment order");
    for (i, m) in root["members"].as_array().unwrap().iter().enumerate() {
        assert_eq!(m["kind"], "partition");
        assert_eq!(m["parent"].as_str(), Some(format!("loop{i}").as_str()));
        assert_eq!(m["name"].as_str(), Some(members[i].as_str()));
        // 1 MiB for the partition table, the rest of the 64 MiB member.
        assert_eq!(u(&m["leaf"]["size"]), (64 << 20) - (1 << 20));
    }
    // Not striped: the members are the leaves, the partitions.
    check_members_run(&lab.ok_json("members"), &members);
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn dm_over_md_walks_the_whole_stack_to_the_leaves() {
    let lab = lab(
        &["--array", "dm-on-md", "--members", "3", "--chunk", "64k"],
        r#"
stripebench topology --json $ARRAY > topo.json
dmsetup table > table.txt
mdadm --detail /dev/md0 > mdadm.txt
step members stripebench run --members $ARRAY --duration 1s --ramp 0 --json members.json
"#,
    );
    let members = lab.members();
    let root = &lab.json("topo.json")["root"];
    let table = lab.text("table.txt");
    let segs = dm_table(&table, "onmd");
    assert_eq!(root["dm"]["target"], "linear");
    assert_eq!(member_devs(root), [segs[0][3].to_string()]);
    let md = &root["members"][0];
    assert_eq!(md["kind"], "md");
    let (level, chunk, order) = mdadm_detail(&lab.text("mdadm.txt"));
    assert_eq!(md["md"]["level"].as_str(), Some(level.as_str()));
    assert_eq!(md["md"]["chunk_size"].as_u64(), chunk);
    assert_eq!(member_devs(md), order);
    assert_eq!(names(md), members);
    // --members goes through the linear layer to the md members.
    check_members_run(&lab.ok_json("members"), &members);
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn md_raid0_over_partitions_names_each_partition_and_its_disk() {
    let lab = lab(
        &[
            "--array",
            "md-on-partitions",
            "--members",
            "3",
            "--chunk",
            "32k",
        ],
        r#"
stripebench topology --json $ARRAY > topo.json
mdadm --detail $ARRAY > mdadm.txt
"#,
    );
    let members = lab.members();
    assert_eq!(members, ["loop0p1", "loop1p1", "loop2p1"]);
    let root = &lab.json("topo.json")["root"];
    let (level, chunk, order) = mdadm_detail(&lab.text("mdadm.txt"));
    assert_eq!((level.as_str(), chunk), ("raid0", Some(32 << 10)));
    assert_eq!(root["md"]["chunk_size"].as_u64(), chunk);
    assert_eq!(member_devs(root), order);
    for (i, m) in root["members"].as_array().unwrap().iter().enumerate() {
        assert_eq!(m["kind"], "partition");
        assert_eq!(m["name"].as_str(), Some(members[i].as_str()));
        assert_eq!(m["parent"].as_str(), Some(format!("loop{i}").as_str()));
    }
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn btrfs_raid0_mount_point_resolves_to_its_members() {
    let lab = lab(
        &["--array", "btrfs-raid0", "--members", "3"],
        r#"
stripebench topology --json $ARRAY > topo.json
step members stripebench run --members $ARRAY --duration 1s --ramp 0 --json members.json
"#,
    );
    let members = lab.members();
    let topo = lab.json("topo.json");
    let root = &topo["root"];
    assert_eq!(root["kind"], "btrfs");
    assert_eq!(root["btrfs"]["data_profile"], "raid0");
    assert_eq!(root["btrfs"]["stripe_len"].as_u64(), Some(64 << 10));
    assert_eq!(names(root), members, "btrfs members, by name");
    check_members_run(&lab.ok_json("members"), &members);
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn a_failing_member_reports_errno_and_offsets_and_the_others_finish() {
    let lab = lab(
        &[
            "--array",
            "md-raid0",
            "--members",
            "4",
            "--failing-member",
            "1",
        ],
        r#"
echo "$LAB_FAIL_START $LAB_FAIL_END" > fail.range
step fail stripebench run --members $ARRAY --duration 3s --ramp 0 --json fail.json
"#,
    );
    assert_eq!(lab.rc("fail"), 1, "{}", lab.text("fail.txt"));
    let text = lab.text("fail.txt");
    assert!(text.contains("EIO"), "{text}");
    let range: Vec<u64> = lab
        .text("fail.range")
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let doc = lab.json("fail.json");
    let members = lab.members();
    assert_eq!(
        members[1], "dm-0",
        "the failing member is the dm-error device"
    );
    let window = f(&doc["window"]["seconds"]);
    for w in doc["workers"].as_array().unwrap() {
        let target = w["target"].as_str().unwrap().trim_start_matches("/dev/");
        if target == members[1] {
            assert!(u(&w["errors"]) >= 1);
            assert_eq!(w["stopped_on_errors"], true);
            assert_eq!(w["errors_by_errno"][0]["name"], "EIO", "{w}");
            for s in w["error_samples"].as_array().unwrap() {
                let off = u(&s["offset"]);
                assert!(
                    (range[0]..range[1]).contains(&off),
                    "error at {off}, outside the dm-error range {range:?}"
                );
                assert_eq!(s["op"], "read");
            }
        } else {
            assert_eq!(u(&w["errors"]), 0, "{target}");
            assert_eq!(w["stopped_on_errors"], false);
            assert!(u(&w["bytes"]) > 0);
            assert!(
                (f(&w["seconds"]) - window).abs() < 1e-6,
                "{target} ran the whole window"
            );
        }
    }
    assert_eq!(doc["targets"][1]["failed"], true);
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn seed_004_one_worker_per_disk_against_a_64_member_dm_stripe() {
    // Seed 004: 64 disks, a dm stripe with 64 KiB chunks; one O_DIRECT
    // thread per disk against the stripe read buffered (one thread, and one
    // per disk) and O_DIRECT. TCG speeds: the structure is asserted.
    let lab = lab(
        &[
            "--array",
            "dm-stripe",
            "--members",
            "64",
            "--member-size",
            "8m",
            "--chunk",
            "64k",
        ],
        r#"
stripebench topology --json $ARRAY > topo.json
dmsetup table > table.txt
step compare stripebench compare --duration 1s --ramp 0 --json compare.json $ARRAY
step buffered1 stripebench run --buffered --duration 1s --ramp 0 --json buffered1.json $ARRAY
step sweep stripebench sweep --config /configs/seed-004-members.toml --param rw=read --duration 1s --ramp 0 --json sweep.json $MEMBERS
"#,
    );
    let members = lab.members();
    assert_eq!(members.len(), 64);
    let root = &lab.json("topo.json")["root"];
    let (chunk, order) = striped(&lab.text("table.txt"), "stripe");
    assert_eq!((chunk, order.len()), (64 << 10, 64));
    assert_eq!(member_devs(root), order);
    assert_eq!(root["dm"]["chunk_size"].as_u64(), Some(64 << 10));

    let cmp = lab.ok_json("compare");
    check_compare(&cmp, &members, None);
    let together = &cmp["phases"][0]["document"];
    check_members_run(together, &members);

    let b1 = lab.ok_json("buffered1");
    assert_eq!(b1["config"]["direct"], false);
    assert_eq!(b1["workers"].as_array().unwrap().len(), 1);
    assert_eq!(
        b1["cache"]["state"], "evicted",
        "read cold: {}",
        b1["cache"]
    );

    // The seed's per-disk experiment: O_DIRECT and buffered, one worker per disk.
    let sweep = lab.ok_json("sweep");
    let points = sweep["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for p in points {
        let run = &p["runs"][0];
        assert_eq!(run["workers"].as_array().unwrap().len(), 64);
        // 64 buffered workers on 2 TCG vCPUs (CI: beside other guests) can
        // complete no read in 1 s; the run must say so, not pass 0 for a rate.
        let idle = run["warnings"].as_array().unwrap().iter().any(|w| {
            crate::common::warning_text(w)
                .unwrap()
                .contains("worker(s) completed no I/O in the")
        });
        assert!(
            f(&p["bytes_per_sec_median"]) > 0.0 || idle,
            "{}: {}",
            run["config"]["direct"],
            run["warnings"]
        );
    }
    let modes: Vec<bool> = points
        .iter()
        .map(|p| p["runs"][0]["config"]["direct"].as_bool().unwrap())
        .collect();
    assert_eq!(modes, [true, false]);
}

#[test]
fn bad_input_is_one_line_and_exit_2_before_anything_is_fetched() {
    for (args, says) in [
        (
            &["--array", "raid7", "--", "true"][..],
            "unknown --array 'raid7'",
        ),
        (
            &["--array", "dm-stripe", "--members", "1", "--", "true"],
            "needs at least 2 members",
        ),
        (
            &["--members", "64", "--member-size", "1g", "--", "true"],
            "does not fit",
        ),
        (
            &["--memory", "600", "--", "true"],
            "do not fit in a guest of 600 MiB",
        ),
        (&["--chunk", "48k", "--", "true"], "a power of two"),
        (&["--member-size", "64MB", "--", "true"], "not a size"),
        (&["--slow-member", "4:20", "--", "true"], "members 0 to 3"),
        (&["--failing-member", "x", "--", "true"], "a member number"),
        (
            &["--controllers", "5", "--", "true"],
            "more controllers than",
        ),
        (
            &[
                "--controllers",
                "2",
                "--controller-limit",
                "2:20m",
                "--",
                "true",
            ],
            "controllers 0 to 1",
        ),
        (
            &[
                "--controllers",
                "2",
                "--controller-limit",
                "1:fast",
                "--",
                "true",
            ],
            "K:RATE",
        ),
        (
            &["--controller-limit", "0:20m", "--", "true"],
            "give --controllers",
        ),
        (
            &["--controllers", "2", "--member-rate", "8x", "--", "true"],
            "bytes per second",
        ),
        (&["--array", "md-raid0"], "no COMMAND"),
        (&["--frobnicate", "--", "true"], "unknown option"),
    ] {
        let o = lab_sh(args);
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

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn the_commands_stdout_stderr_and_exit_status_are_the_scripts_own() {
    let o = lab_sh(&[
        "--array",
        "none",
        "--members",
        "2",
        "--",
        "echo \"out $MEMBERS\"; echo err-line >&2; exit 7",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(7), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "out /dev/loop0 /dev/loop1\n"
    );
    assert!(err.lines().any(|l| l == "err-line"), "{err}");
    assert!(err.contains("lab: MEMBERS=/dev/loop0 /dev/loop1"), "{err}");
    assert!(err.contains("lab: TCG: "), "says which accelerator: {err}");
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn a_hung_guest_is_killed_at_the_timeout_and_its_console_shown() {
    // 60 s, not 15: the console's last lines are asserted, and a TCG guest
    // on a busy 2-CPU machine took more than 15 s to reach its kernel (the
    // test failed only then). The guest's command never ends, so the
    // timeout is what ends it, whatever the machine's speed.
    let started = std::time::Instant::now();
    let o = lab_sh(&["--timeout", "60", "--", "echo before; sleep 600"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{err}");
    assert!(started.elapsed().as_secs() < 300, "killed at the timeout");
    assert!(
        err.contains("did not finish within --timeout 60 s (TCG): killed"),
        "{err}"
    );
    assert!(
        err.contains("  | LAB: ARRAY=/dev/md0"),
        "the console's last lines: {err}"
    );
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn a_panicked_guest_is_reported_with_its_last_console_lines() {
    let o = lab_sh(&[
        "--timeout",
        "120",
        "--",
        "echo c > /proc/sysrq-trigger; sleep 600",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{err}");
    assert!(
        err.contains("the guest panicked (TCG): Kernel panic - not syncing: sysrq triggered crash"),
        "{err}"
    );
    assert!(err.contains("  | "), "the console's last lines: {err}");
}

/// An md member's superblock refuses a write by its signature alone: each
/// metadata version is made by mdadm in the guest (this machine's kernel
/// has no md), the array stopped (so no holder is left to refuse it), and
/// the dry run must name what libblkid found, as `blkid -p` does.
#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn a_stopped_md_members_superblock_is_refused_by_its_signature() {
    let lab = lab(
        &["--array", "none", "--members", "2", "--member-size", "64m"],
        r#"
set -- $MEMBERS
for v in 1.2 1.1 1.0 0.90; do
  mdadm --zero-superblock "$1" "$2" 2>/dev/null
  mdadm --create /dev/md9 --run --assume-clean --level=1 --raid-devices=2 --metadata=$v "$1" "$2" > create-$v.txt 2>&1
  mdadm --stop /dev/md9 >> create-$v.txt 2>&1
  step md-$v stripebench run --rw write --allow-destructive --dry-run "$1"
done
"#,
    );
    for v in ["1.2", "1.1", "1.0", "0.90"] {
        let t = lab.text(&format!("md-{v}.txt"));
        assert_eq!(
            lab.rc(&format!("md-{v}")),
            2,
            "{t}{}",
            lab.text(&format!("create-{v}.txt"))
        );
        let line = t.lines().find(|l| l.contains("no signature")).unwrap_or("");
        assert!(
            line.contains("[REFUSED]") && line.contains(&format!("linux_raid_member version {v}")),
            "metadata {v}: {t}"
        );
        assert!(t.contains("[ok] no holders"), "the array was stopped: {t}");
    }
}

/// Members on shared controllers (issue 42): `--controllers 3` puts member
/// i on virtio-scsi controller i mod 3, so the four members of a controller
/// share its PCI function and the three controllers differ; each member is
/// a real sd disk with the serial the lab gave it. With every disk at 8 MiB/s
/// and controller 1 capped at 12 MiB/s (the other controllers' four reach
/// about 32 together), `topology` groups the members by controller,
/// `compare --solo` names controller 1 as the bottleneck and no member slow,
/// and `advise` makes it a finding.
#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn members_on_shared_controllers_land_where_asked() {
    let lab = lab(
        &[
            "--array",
            "md-raid0",
            "--members",
            "12",
            "--member-size",
            "32m",
            "--controllers",
            "3",
            "--controller-limit",
            "1:12m",
            "--member-rate",
            "8m",
        ],
        r#"
stripebench topology --json $ARRAY > topo.json
step compare stripebench compare --solo --repeat 1 --duration 1s --ramp 0 --json compare.json $ARRAY
step advise stripebench advise --budget 20s --json advise.json $ARRAY
echo "$LAB_CONTROLLERS" > controllers.txt
echo "$LAB_MEMBER_CONTROLLER" > member-controller.txt
for m in $MEMBERS; do d=${m#/dev/}; echo "$d $(readlink -f /sys/block/$d) $(tail -c +5 /sys/block/$d/device/vpd_pg80 | tr -d '\000')"; done > placement.txt
"#,
    );
    let members = lab.members();
    assert_eq!(members.len(), 12);
    assert_eq!(lab.text("controllers.txt").trim(), "3");
    let want: Vec<String> = (0..12).map(|i| (i % 3).to_string()).collect();
    assert_eq!(
        lab.text("member-controller.txt")
            .split_whitespace()
            .collect::<Vec<_>>(),
        want
    );
    let placement = lab.text("placement.txt");
    let rows: Vec<Vec<&str>> = placement
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 12, "{placement}");
    // The PCI function above each disk's hostN.
    let mut adapters = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[0], members[i], "{placement}");
        assert!(
            row[0].starts_with("sd"),
            "member {i} is a disk: {placement}"
        );
        assert_eq!(
            row.get(2).copied(),
            Some(format!("lab-m{i:03}").as_str()),
            "serial: {placement}"
        );
        let parts: Vec<&str> = row[1].split('/').collect();
        let host = parts
            .iter()
            .position(|p| p.starts_with("host"))
            .expect(row[1]);
        let pci = parts[..host]
            .iter()
            .rev()
            .find(|p| p.contains(':') && p.contains('.'))
            .expect(row[1]);
        adapters.push(pci.to_string());
    }
    for i in 0..12 {
        for j in 0..12 {
            assert_eq!(
                adapters[i] == adapters[j],
                i % 3 == j % 3,
                "members {i} and {j}: {placement}"
            );
        }
    }
    // topology: the leaves by controller, in member order.
    let topo = lab.json("topo.json");
    let paths = topo["paths"].as_array().expect("topology has paths");
    assert_eq!(paths.len(), 3, "{topo}");
    for (k, p) in paths.iter().enumerate() {
        assert_eq!(p["adapter"].as_str(), Some(adapters[k].as_str()), "{p}");
        let want: Vec<&str> = (0..12)
            .filter(|i| i % 3 == k)
            .map(|i| members[i].as_str())
            .collect();
        let got: Vec<&str> = p["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        assert_eq!(got, want, "{p}");
    }
    // compare --solo: each controller's four read together; controller 1's
    // capped, no member slow (each alone is as fast as the others).
    let c = lab.ok_json("compare");
    let said = lab.text("compare.txt");
    let shared = c["shared_paths"]
        .as_array()
        .expect("compare has shared_paths");
    assert_eq!(shared.len(), 3, "{said}");
    let capped: Vec<&str> = shared
        .iter()
        .filter(|g| g["capped"] == true)
        .map(|g| g["adapter"].as_str().unwrap())
        .collect();
    assert_eq!(capped, [adapters[1].as_str()], "{said}");
    for g in shared {
        assert_eq!(g["members"].as_array().unwrap().len(), 4, "{g}");
        assert_eq!(g["alone_bytes_per_sec"].as_array().unwrap().len(), 4, "{g}");
    }
    assert!(
        c["members"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["slow"] == false),
        "{said}"
    );
    assert!(c["slowest"].is_null(), "{said}");
    assert!(said.contains("the shared path caps them"), "{said}");
    // advise: the controller is a finding; no member is slow.
    let a = lab.ok_json("advise");
    let ids: Vec<&str> = a["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    let want = format!("shared-path:{}", adapters[1]);
    assert!(
        ids.contains(&want.as_str()),
        "{ids:?}\n{}",
        lab.text("advise.txt")
    );
    assert!(
        !ids.contains(&"slow-member"),
        "{ids:?}\n{}",
        lab.text("advise.txt")
    );
}
