//! fio's SPRandom preconditioning (examples/sprandom.fio: `sprandom=1`,
//! `spr_op=`, `spr_num_regions=`), and `run --sprandom`: the run writes
//! the physical capacity fio's model gives, region by region, each
//! region's blocks rewritten in the next with the model's share; what it
//! cannot do is refused in one line before any I/O.

use crate::common::{data_file, sb};

/// fio's examples/sprandom.fio as shipped (its header's comments left out).
const SPRANDOM_FIO: &str = "[global]\nioengine=libaio\nrw=randwrite\nbs=${FIO_BS}\nblockalign=${FIO_BS}\ndirect=1\nnorandommap=1\niodepth=64\n[preconditioning]\nsprandom=1\nspr_op=0.15\nspr_num_regions=100\n";

/// The blocks written, in issue order, from a fio-format iolog.
fn written_blocks(log: &std::path::Path) -> Vec<u64> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 5 && w[2] == "write").then(|| w[3].parse::<u64>().unwrap() / 4096)
        })
        .collect()
}

/// For each region k (of `per` writes in issue order), how many of its
/// blocks the next region writes again.
fn rewritten_per_region(w: &[u64], per: usize, regions: usize) -> Vec<usize> {
    (0..regions - 1)
        .map(|k| {
            let this: std::collections::HashSet<u64> =
                w[k * per..(k + 1) * per].iter().copied().collect();
            w[(k + 1) * per..((k + 2) * per).min(w.len())]
                .iter()
                .filter(|b| this.contains(b))
                .count()
        })
        .collect()
}

// Issue 41: examples/sprandom.fio was refused ("cannot honour fio's
// `sprandom=1`"). On a 64 MiB loop device with bs 4k, fio 3.42 writes
// 18841 blocks (73.6 MiB: 64 MiB x 1.15), 100 regions of 188, and
// invalidates region 0's blocks at 24.79% down to region 98's at 0.29%.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root for a loop device")]
fn fio_s_sprandom_example_writes_the_model_s_blocks_and_shares() {
    let dir = tempfile::tempdir().unwrap();
    let (_img, lo) = crate::common::Loop::sparse(dir.path(), "img", 64 << 20);
    let job = dir.path().join("sprandom.fio");
    std::fs::write(&job, SPRANDOM_FIO).unwrap();
    let (json, log) = (dir.path().join("r.json"), dir.path().join("io.log"));
    let o = sb()
        .env("FIO_BS", "4096")
        .args(["run", "--fio-job"])
        .arg(&job)
        .args(["--no-progress", "--allow-destructive", "--json"])
        .arg(&json)
        .arg("--iolog-write")
        .arg(&log)
        .arg(&lo.dev)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("sprandom: 64.0 MiB as 73.6 MiB physical (over-provisioning 0.15), in 100 regions of 188 writes")
            && stdout.contains("write amplification 4.03"),
        "{stdout}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    // The walk's end, even before the limit, is the worker's own: the
    // window closes at its last completion, not at the (yearlong) deadline.
    assert_eq!(doc["window"]["ended_by"], "limit", "{stdout}");
    assert!(
        doc["window"]["seconds"].as_f64().unwrap() < 300.0,
        "{stdout}"
    );
    let w0 = &doc["workers"][0];
    let spr = &w0["sprandom"];
    assert_eq!(spr["physical_bytes"], 77_172_736);
    assert_eq!(spr["region_writes"], 188);
    assert_eq!(spr["writes"], 18_841);
    let blocks = written_blocks(&log);
    let ios = w0["write_ios"].as_u64().unwrap();
    assert_eq!(blocks.len() as u64, ios);
    assert_eq!(w0["write_bytes"].as_u64().unwrap(), ios * 4096);
    // fio's bound (the physical capacity), unless every block was drawn
    // first (as fio's LFSR ends, fewer rewrites drawn than the model's
    // mean: then the last region is short): each of the 16384 written.
    let distinct: std::collections::HashSet<u64> = blocks.iter().copied().collect();
    assert!(
        ios == 18_841 || (ios < 18_841 && distinct.len() == 16_384),
        "{ios} writes, {} blocks",
        distinct.len()
    );
    // Each region's blocks rewritten in the next: the model's share, each
    // within its binomial spread, and all of them within 3 sigmas.
    let m = stripebench::analysis::sprandom::model(64 << 20, 4096, 0.15, 100).unwrap();
    let got = rewritten_per_region(&blocks, 188, 100);
    let (mut sum, mut want, mut var) = (0.0, 0.0, 0.0);
    for (k, &n) in got.iter().enumerate() {
        let p = 1.0 - m.validity(k);
        let (mean, sd) = (188.0 * p, (188.0 * p * (1.0 - p)).sqrt());
        assert!(
            (n as f64 - mean).abs() <= 6.0 * sd + 2.0,
            "region {k}: {n} rewritten, the model's {mean:.1}"
        );
        sum += n as f64;
        want += mean;
        var += sd * sd;
    }
    assert!(
        (sum - want).abs() <= 3.0 * var.sqrt(),
        "{sum} rewritten, the model's {want:.0}"
    );
}

// The one-line refusals of what --sprandom cannot go with, before any I/O.
#[test]
fn sprandom_s_requirements_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 8 << 20);
    let b = data_file(dir.path(), "b", 8 << 20);
    let cases: &[(&[&str], &str)] = &[
        (&["--rw", "randread"], "give --rw randwrite"),
        (
            &["--rw", "randwrite", "--jobs", "2"],
            "give one target and --jobs 1",
        ),
        (&["--rw", "randwrite", "--passes", "1"], "drop --passes"),
        (&["--rw", "randwrite", "--spr-op", "1.5"], "between 0 and 1"),
        (
            &["--rw", "randwrite", "--spr-regions", "5000"],
            "give fewer regions",
        ),
    ];
    for (args, want) in cases {
        let o = sb()
            .args([
                "run",
                "--sprandom",
                "--bs",
                "4k",
                "--dry-run",
                "--allow-destructive",
            ])
            .args(*args)
            .arg(&a)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(want) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    let o = sb()
        .args([
            "run",
            "--sprandom",
            "--rw",
            "randwrite",
            "--dry-run",
            "--allow-destructive",
        ])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("this run has 2 target(s)"), "{err}");
}

// fio's own checks of a sprandom job (init.c, filesetup.c), and what
// stripebench does not model (spr_cs=), each refused by name.
#[test]
fn a_sprandom_job_fio_would_refuse_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 8 << 20);
    let cases = [
        (
            "rw=randread\nsprandom=1\n",
            "`sprandom=1` preconditions with random writes",
        ),
        (
            "rw=randwrite\nsprandom=1\nrandom_generator=tausworthe\n",
            "sprandom requires random_generator=lfsr",
        ),
        (
            "rw=randwrite\nsprandom=1\nnorandommap=0\n",
            "sprandom requires norandommap=1",
        ),
        (
            "rw=randwrite\nsprandom=1\nspr_cs=1m\n",
            "`spr_cs=1m` delays",
        ),
        (
            "rw=randwrite\nsprandom=1\nruntime=10\n",
            "`runtime=10` with sprandom=1",
        ),
        (
            "rw=randwrite\nsprandom=1\nbs=4k\nblockalign=8k\n",
            "`blockalign=8k` with sprandom=1 is not bs=",
        ),
        (
            "rw=randwrite\nsprandom=1\nspr_op=0\n",
            "`spr_op=0` is not an over-provisioning share",
        ),
    ];
    for (body, want) in cases {
        let job = dir.path().join("j.fio");
        std::fs::write(&job, format!("[j]\n{body}")).unwrap();
        let o = sb()
            .args(["run", "--fio-job"])
            .arg(&job)
            .args(["--dry-run", "--allow-destructive"])
            .arg(&a)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{body}: {err}");
        assert!(
            err.contains(want) && err.lines().count() == 1,
            "{body}: {err}"
        );
    }
    // random_generator=lfsr is sprandom's own: taken.
    let job = dir.path().join("j.fio");
    std::fs::write(
        &job,
        "[j]\nrw=randwrite\nsprandom=1\nrandom_generator=lfsr\nspr_op=0.21\nspr_num_regions=4\n",
    )
    .unwrap();
    let o = sb()
        .args(["run", "--fio-job"])
        .arg(&job)
        .args(["--dry-run", "--allow-destructive"])
        .arg(&a)
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("--sprandom --spr-op=0.21 --spr-regions=4"),
        "{err}"
    );
    assert!(out.contains("in 4 regions of"), "{out}");
}

// A walk that runs out of blocks before its physical capacity (16 blocks,
// 30 writes asked in one all-valid region, as fio's LFSR runs out) ends
// the run there, on a schedule too (it waited for I/O that never came
// until the yearlong deadline), and the window is the run's own.
#[test]
fn a_sprandom_walk_that_runs_out_of_blocks_ends_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 64 << 10);
    let json = dir.path().join("r.json");
    for rate in [None, Some("2000")] {
        let mut c = sb();
        c.args(["run", "--sprandom", "--spr-op", "0.9", "--spr-regions", "1"])
            .args([
                "--rw",
                "randwrite",
                "--bs",
                "4k",
                "--buffered",
                "--no-progress",
            ])
            .args(["--allow-destructive", "--json"])
            .arg(&json)
            .arg(&a)
            .timeout(std::time::Duration::from_secs(60));
        if let Some(r) = rate {
            c.args(["--rate-iops", r]);
        }
        let o = c.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{rate:?}: {err}");
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let w0 = &doc["workers"][0];
        assert_eq!(w0["sprandom"]["writes"], 30);
        assert_eq!(w0["write_ios"], 16, "{rate:?}");
        assert_eq!(doc["window"]["ended_by"], "limit", "{rate:?}");
        assert!(
            doc["window"]["seconds"].as_f64().unwrap() < 30.0,
            "{rate:?}"
        );
    }
}
