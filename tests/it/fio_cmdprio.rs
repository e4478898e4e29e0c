//! fio's examples/cmdprio-bssplit.fio (per-direction `bssplit=`, and
//! `cmdprio_bssplit=` in its simple and advanced forms, with a default
//! priority and with hints) run for real on a loop device: each of its four
//! jobs, one after another, draws its reads' and writes' sizes from their
//! own lists and each size's priorities by their shares, counts each
//! priority apart (`total.priorities`), and writes fio's per-I/O latency
//! log with each I/O's own priority in its column (`log_prio=1`). The job
//! is fio's with its sizes scaled down (64k -> 4k, 1024k -> 64k, 1M/2M ->
//! 64k/128k) and 160 MiB of I/O a job (io_size= for its runtime=: some
//! 1600 to 3000 I/Os to judge shares by, however slow the machine).

use std::collections::HashMap;

use serde_json::Value;

use crate::common::{data_file, f, sb, succeeded_as, u, Loop};

/// fio's example, sizes scaled as said above, on `dev`.
fn job(dev: &str) -> String {
    format!(
        "[global]
filename={dev}
direct=1
write_lat_log=prio-run.log
log_prio=1
rw=randrw
ioengine=libaio
iodepth=16
io_size=160m

[cmdprio]
bssplit=4k/40:64k/60,64k/100
cmdprio_bssplit=4k/100:64k/0,64k/0
cmdprio_class=1
cmdprio=0

[cmdprio-adv]
stonewall
bssplit=4k/40:64k/60,64k/100
cmdprio_bssplit=4k/25/1/1:4k/75/3/2:64k/0,64k/0

[cmdprio-adv-def]
stonewall
prioclass=2
prio=7
bssplit=4k/40:64k/60,64k/100
cmdprio_bssplit=4k/25/1/1:4k/75/3/2:64k/0,64k/0

[cmdprio-hints]
stonewall
rw=randread
bssplit=64k/40:128k/60
cmdprio_bssplit=64k/10/2/0/1:64k/30/2/0/2:64k/60/2/0/0:128k/10/2/0/3:128k/90/2/0/0
"
    )
}

/// A run's `total.priorities` as (direction, ioprio) -> (ios, share): the
/// writes, which have no cmdprio_bssplit entry in the job, have none (as
/// in fio's JSON).
fn priorities(doc: &Value) -> HashMap<(String, u64), (u64, f64)> {
    let p = doc["total"]["priorities"]
        .as_array()
        .expect("total.priorities");
    p.iter()
        .map(|x| {
            let dir = x["direction"].as_str().unwrap().to_string();
            ((dir, u(&x["ioprio"])), (u(&x["ios"]), f(&x["share"])))
        })
        .collect()
}

/// `share` of `n` I/Os is `want` within sampling error (4 sigma, and a
/// point for the I/Os in flight at the window's end).
fn near(what: &str, share: f64, want: f64, n: u64) {
    let sigma = (want * (1.0 - want) / n as f64).sqrt();
    assert!(
        (share - want).abs() <= 4.0 * sigma + 0.01,
        "{what}: share {share:.4} of {n}, fio's job asks {want}"
    );
}

/// The share of each (direction, ioprio) among its direction's I/Os in
/// run `doc`, checked against `want`, over at least `least` I/Os.
fn check(doc: &Value, want: &[(&str, u64, f64)], least: u64) {
    let got = priorities(doc);
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (dir, ioprio, share) in want {
        let n: u64 = (got.iter())
            .filter(|((d, _), _)| d == dir)
            .map(|(_, (n, _))| n)
            .sum();
        assert!(n >= least, "too few {dir}s to judge: {n}");
        let (_, s) = got
            .get(&(dir.to_string(), *ioprio))
            .unwrap_or_else(|| panic!("no {dir} at {ioprio:#06x}: {got:?}"));
        near(&format!("{dir} {ioprio:#06x}"), *s, *share, n);
    }
}

/// Each (direction, bytes, priority column) of a per-I/O log, counted.
fn log_lines(path: &std::path::Path) -> HashMap<(u8, u64, String), u64> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut m = HashMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(", ").collect();
        assert_eq!(
            f.len(),
            5,
            "time, latency, direction, bytes, priority: {line}"
        );
        let key = (
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
            f[4].to_string(),
        );
        *m.entry(key).or_insert(0) += 1;
    }
    m
}

// Issue 41: examples/cmdprio-bssplit.fio was refused (`stripebench cannot
// honour fio's cmdprio_bssplit=64k/100:1024k/0,1024k/0`).
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn cmdprio_bssplit_example_runs_each_priority_by_its_share() {
    let dir = tempfile::tempdir().unwrap();
    let file = data_file(dir.path(), "img", 64 << 20);
    let dev = Loop::attach(&file, &[]);
    std::fs::write(dir.path().join("cmdprio-bssplit.fio"), job(&dev.dev)).unwrap();
    let out = sb()
        .current_dir(dir.path())
        .args(["run", "--fio-job", "cmdprio-bssplit.fio", "--no-progress"])
        .args(["--allow-destructive", "--json", "sb.json"])
        .output()
        .unwrap();
    succeeded_as(&out, "cmdprio-bssplit.fio");
    let doc = |n: usize| -> Value {
        let p = dir.path().join(format!("sb.{n}.json"));
        serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap()
    };
    // [cmdprio]: the 4k reads (40% of reads) at realtime 0, the rest none.
    check(&doc(1), &[("read", 0, 0.6), ("read", 0x2000, 0.4)], 500);
    // [cmdprio-adv]: of the 4k reads 25% at 1/1, 75% at 3/2.
    check(
        &doc(2),
        &[
            ("read", 0, 0.6),
            ("read", 0x2001, 0.1),
            ("read", 0x6002, 0.3),
        ],
        500,
    );
    // [cmdprio-adv-def]: the same, every other I/O at be 7 (0x4007).
    let d3 = doc(3);
    check(
        &d3,
        &[
            ("read", 0x4007, 0.6),
            ("read", 0x2001, 0.1),
            ("read", 0x6002, 0.3),
        ],
        500,
    );
    assert_eq!(d3["config"]["ioprio"], "be,7");
    // [cmdprio-hints]: 4% hint 1, 12% hint 2, 6% hint 3, 78% none, all be 0;
    // the default (none set) has no I/O, and is left out as fio leaves it.
    check(
        &doc(4),
        &[
            ("read", 0x4000 | 1 << 3, 0.04),
            ("read", 0x4000 | 2 << 3, 0.12),
            ("read", 0x4000, 0.78),
            ("read", 0x4000 | 3 << 3, 0.06),
        ],
        1000,
    );
    // The per-I/O log (fio's, without log_avg_msec): every 4k read of
    // [cmdprio] carries 0x2000, every 64k read and every write 0x0000;
    // [cmdprio-adv-def]'s 64k I/Os 0x4007, its 4k reads 1/1 or 3/2.
    let l1 = log_lines(&dir.path().join("prio-run.log_clat.1.log"));
    let keys: Vec<_> = l1.keys().cloned().collect();
    for k in &keys {
        let want = if k.0 == 0 && k.1 == 4096 {
            "0x2000"
        } else {
            "0x0000"
        };
        assert_eq!(k.2, want, "{k:?}");
    }
    assert!(l1.len() == 3 && l1.values().all(|&n| n > 100), "{l1:?}");
    let l3 = log_lines(&dir.path().join("prio-run.log_clat.3.log"));
    for k in l3.keys() {
        match (k.0, k.1) {
            (0, 4096) => assert!(k.2 == "0x2001" || k.2 == "0x6002", "{k:?}"),
            _ => assert_eq!((k.1, k.2.as_str()), (65536, "0x4007"), "{k:?}"),
        }
    }
    // The log holds each I/O of the window: as many lines as I/Os counted.
    let ios = u(&doc(3)["total"]["ios"]);
    assert_eq!(l3.values().sum::<u64>(), ios);
}
