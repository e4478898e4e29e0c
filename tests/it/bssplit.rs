//! `--bssplit` (fio's `bssplit=`): each I/O's size drawn by its share, and
//! counted by size, on a real device; and fio itself beside us on the same
//! job file, splitting its I/Os by size alike (fio's write_iolog gives each
//! of its I/Os' sizes).

use std::path::Path;

use serde_json::Value;

use crate::common::{data_file, f, json, sb, succeeded_as, u, Loop};

/// total.sizes as (bs, ios, bytes, share), smallest first.
fn sizes(doc: &Value) -> Vec<(u64, u64, u64, f64)> {
    let s = doc["total"]["sizes"].as_array().expect("total.sizes");
    s.iter()
        .map(|x| (u(&x["bs"]), u(&x["ios"]), u(&x["bytes"]), f(&x["share"])))
        .collect()
}

// Issue 41: fio job files with bssplit= (iometer-file-access-server.fio,
// jesd219.fio) were refused; a split run counts each size, its I/Os
// sharing the window as asked, its bytes summing to the run's.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_bssplit_run_counts_each_size_by_its_share() {
    let dir = tempfile::tempdir().unwrap();
    let file = data_file(dir.path(), "img", 64 << 20);
    let dev = Loop::attach(&file, &[]);
    let out = sb()
        .args(["run", "--rw", "randrw", "--bssplit", "4k/70:16k/20:64k/10"])
        .args([
            "--iodepth",
            "8",
            "-t",
            "2s",
            "--ramp",
            "0s",
            "--no-progress",
        ])
        .args(["--allow-destructive", "--json", "-", &dev.dev])
        .output()
        .unwrap();
    succeeded_as(&out, "run --bssplit");
    let doc = json(&out.stdout);
    let got = sizes(&doc);
    let want = [(4096, 0.70), (16384, 0.20), (65536, 0.10)];
    assert_eq!(got.len(), 3, "{got:?}");
    for ((bs, ios, bytes, share), (wbs, wshare)) in got.iter().zip(want) {
        assert_eq!(*bs, wbs);
        assert!(*ios > 200, "too few {bs}-byte I/Os to judge: {ios}");
        // Whole I/Os: each moved its size.
        assert_eq!(*bytes, ios * bs, "{bs}");
        assert!(
            (share - wshare).abs() < 0.04,
            "{bs}: share {share}, asked {wshare}"
        );
    }
    // The figures stay true: the sizes sum to the total, MB/s is bytes
    // over the window.
    let t = &doc["total"];
    assert_eq!(got.iter().map(|g| g.1).sum::<u64>(), u(&t["ios"]));
    assert_eq!(got.iter().map(|g| g.2).sum::<u64>(), u(&t["bytes"]));
    let secs = f(&doc["window"]["seconds"]);
    let rate = u(&t["bytes"]) as f64 / secs;
    assert!((f(&t["bytes_per_sec"]) - rate).abs() < rate * 1e-6);
    assert_eq!(doc["config"]["bssplit"], "4096/70:16384/20:65536/10");
    // The table says each size under the run.
    let table = sb()
        .args([
            "run",
            "--rw",
            "randread",
            "--bssplit",
            "4k/50:8k/",
            "-t",
            "1s",
        ])
        .args(["--ramp", "0s", "--no-progress", &dev.dev])
        .output()
        .unwrap();
    succeeded_as(&table, "run --bssplit (table)");
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("by size (--bssplit)"), "{text}");
    assert!(text.contains("split 4k/50:8k/50"), "{text}");
}

/// A size-bounded random read with a split, for fio and for us.
fn split_job(dir: &Path) -> std::path::PathBuf {
    data_file(dir, "bs.dat", 32 << 20);
    let job = dir.join("split.fio");
    std::fs::write(
        &job,
        "[split]\nfilename=bs.dat\nrw=randread\nbssplit=4k/70:16k/20:64k/10\n\
         direct=1\nioengine=psync\nsize=32m\nio_size=96m\nnorandommap\n",
    )
    .unwrap();
    job
}

// fio on the same job: its I/Os split by size (from its write_iolog) and
// ours (total.sizes) agree within noise (~7000 I/Os: a share's sd is
// under 0.6 points), and so does the mean I/O size.
#[test]
#[cfg_attr(not(sb_fio), ignore = "needs fio (Debian package fio)")]
fn fio_beside_us_splits_the_ios_by_size_alike() {
    let dir = tempfile::tempdir().unwrap();
    let job = split_job(dir.path());
    let out = std::process::Command::new(crate::common::tool("fio"))
        .current_dir(dir.path())
        .arg(&job)
        .arg("--write_iolog=io.log")
        .arg("--output-format=json")
        .output()
        .unwrap();
    succeeded_as(&out, "fio");
    let log = std::fs::read_to_string(dir.path().join("io.log")).unwrap();
    let mut theirs = std::collections::BTreeMap::<u64, u64>::new();
    for l in log.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        // "FILE read OFFSET LENGTH": the I/O lines of iolog v2/v3.
        if w.len() >= 4 && w[w.len() - 3] == "read" {
            *theirs.entry(w[w.len() - 1].parse().unwrap()).or_default() += 1;
        }
    }
    let all: u64 = theirs.values().sum();
    assert!(all > 3000, "fio's iolog: {all} reads");
    let out = sb()
        .current_dir(dir.path())
        .args(["run", "--fio-job"])
        .arg(&job)
        .args(["--no-progress", "--json", "-", "bs.dat"])
        .output()
        .unwrap();
    succeeded_as(&out, "run --fio-job (bssplit)");
    let doc = json(&out.stdout);
    let ours = sizes(&doc);
    assert_eq!(ours.len(), theirs.len(), "{ours:?} vs {theirs:?}");
    for (bs, _, _, share) in &ours {
        let t = theirs[bs] as f64 / all as f64;
        assert!((share - t).abs() < 0.03, "{bs}: ours {share}, fio's {t}");
    }
    let mean = |bytes: u64, ios: u64| bytes as f64 / ios as f64;
    let t_bytes: u64 = theirs.iter().map(|(b, n)| b * n).sum();
    let ours_mean = mean(u(&doc["total"]["bytes"]), u(&doc["total"]["ios"]));
    let fio_mean = mean(t_bytes, all);
    assert!(
        (ours_mean - fio_mean).abs() < fio_mean * 0.05,
        "mean I/O size: ours {ours_mean}, fio's {fio_mean}"
    );
}

// A split that cannot be drawn, or with what counts one size, is one line
// and exit 2 before any target is touched (a zero alignment divided by
// zero in the worker).
#[test]
fn bad_splits_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "f", 1 << 20);
    let f = f.to_str().unwrap();
    for (args, expect) in [
        (vec!["--bssplit", "4k/60:8k/60"], "over 100"),
        // READS,WRITES runs (each direction its own list); a third list
        // or a write list short of 100 does not.
        (vec!["--bssplit", "4k/100,8k/100,4k/100"], "two lists"),
        (vec!["--bssplit", "4k/50:8k/50,8k/90"], "make 100"),
        (
            vec!["--bssplit", "4k/50:8k/", "--blockalign", "0"],
            "aligns to nothing",
        ),
        (
            vec!["--bssplit", "4k/50:8k/", "--ios", "10"],
            "--bssplit with --ios",
        ),
        (vec!["--blockalign", "4k"], "--bssplit"),
        // An iolog line holds no size of its own here: one size's log.
        (
            vec!["--bssplit", "4k/50:8k/", "--iolog-write", "log"],
            "--bssplit with --iolog-write",
        ),
    ] {
        let mut all = vec!["run", "--rw", "randread"];
        all.extend(args);
        all.push(f);
        crate::common::refused(&all, expect);
    }
}

/// A verify reads each block back at the size its write drew: a split
/// whose writes draw from a list of their own cannot be read back so.
#[test]
fn a_verify_with_a_write_split_of_its_own_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "f", 1 << 20);
    let f = f.to_str().unwrap();
    crate::common::refused(
        &[
            "run",
            "--rw",
            "write",
            "--verify",
            "--passes",
            "1",
            "--bssplit",
            "4k/50:8k/50,8k/100",
            "--allow-destructive",
            f,
        ],
        "--bssplit with --verify",
    );
}

// A --bssplit write read back with other sizes or another seed: a plain
// --bs was told "verify with --bs 12k" (one size the headers named), and
// another --seed reported a thousand lost writes where its reads only
// landed inside the write's blocks.
#[test]
fn a_split_write_read_back_otherwise_is_said_so_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    let f = f.to_str().unwrap();
    let write = sb()
        .args(["run", "--rw", "write", "--verify", "--passes", "1"])
        .args(["--bssplit", "4k/50:12k/50", "--seed", "7", "--create", "4m"])
        .args(["--no-progress", f])
        .output()
        .unwrap();
    succeeded_as(&write, "the split write");
    let verify = |extra: &[&str]| {
        sb().arg("verify")
            .args(extra)
            .args(["--no-progress", "--json", "-", f])
            .output()
            .unwrap()
    };
    let plain = verify(&["--bs", "64k"]);
    assert_eq!(plain.status.code(), Some(2));
    let err = String::from_utf8_lossy(&plain.stderr);
    assert!(
        err.contains("written in several sizes") && err.contains("--bssplit, --seed and --skip"),
        "{err}"
    );
    let other_seed = verify(&["--bssplit", "4k/50:12k/50", "--seed", "8"]);
    let doc = json(&other_seed.stdout);
    let v = &doc["targets"][0]["verify"];
    assert_eq!(u(&v["lost"]), 0, "{v}");
    assert!(
        v["stale_check"]
            .as_str()
            .unwrap()
            .contains("not the write's"),
        "{v}"
    );
    let same = verify(&["--bssplit", "4k/50:12k/50", "--seed", "7"]);
    succeeded_as(&same, "verify with the write's own split and seed");
    let v = &json(&same.stdout)["targets"][0]["verify"];
    assert_eq!(u(&v["good"]), u(&v["blocks"]), "{v}");
}
