//! fio's strided zones (issue 41, fio's `examples/disk-zone-profile.fio`):
//! `zonemode=strided` with `zonesize=`, `zonerange=` and `zoneskip=` in a
//! job file, and `run --zones`, read the offsets fio reads, I/O for I/O,
//! end where fio's run ends (a zone cut by the end of the file ends it),
//! and what stripebench cannot walk is refused by name.

use std::path::Path;
use std::process::Command;

use crate::common::{data_file, refused, sb, succeeded_as, tool};

const MIB: f64 = 1048576.0;

/// The jobs, each with fio 3.42's reads on a 10 MiB file at bs=64k, seen
/// in its write_iolog: the spans read in order, in MiB (fio 3.33 reads
/// the same).
const JOBS: &[(&str, &[(f64, f64)])] = &[
    // disk-zone-profile.fio's zones, shrunk: 1m of every 3m, round the
    // file until 10m are read.
    (
        "zonesize=1m\nzoneskip=2m",
        &[
            (0.0, 1.0),
            (3.0, 4.0),
            (6.0, 7.0),
            (9.0, 10.0),
            (0.0, 1.0),
            (3.0, 4.0),
            (6.0, 7.0),
            (9.0, 10.0),
            (0.0, 1.0),
            (3.0, 4.0),
        ],
    ),
    // A zone cut by the file's end: fio's run ends at its last read that
    // fits, 3.25 MiB in.
    (
        "zonesize=1m\nzoneskip=2304k",
        &[(0.0, 1.0), (3.25, 4.25), (6.5, 7.5), (9.75, 10.0)],
    ),
    // A zone larger than its range: each range is read twice.
    (
        "zonesize=2m\nzonerange=1m\nzoneskip=1m",
        &[
            (0.0, 1.0),
            (0.0, 1.0),
            (2.0, 3.0),
            (2.0, 3.0),
            (4.0, 5.0),
            (4.0, 5.0),
            (6.0, 7.0),
            (6.0, 7.0),
            (8.0, 9.0),
            (8.0, 9.0),
        ],
    ),
    // A zone size that is not a whole number of requests: fio moves on
    // once it has done at least the zone (two reads), and ends at the
    // read that would pass the end.
    (
        "zonesize=100k\nzoneskip=1m",
        &[
            (0.0, 0.125),
            (1.09765625, 1.22265625),
            (2.1953125, 2.3203125),
            (3.29296875, 3.41796875),
            (4.390625, 4.515625),
            (5.48828125, 5.61328125),
            (6.5859375, 6.7109375),
            (7.68359375, 7.80859375),
            (8.78125, 8.90625),
            (9.87890625, 9.94140625),
        ],
    ),
    // io_size= bounds the bytes: three zones.
    (
        "zonesize=1m\nzoneskip=2m\nio_size=3m",
        &[(0.0, 1.0), (3.0, 4.0), (6.0, 7.0)],
    ),
    // offset=: the zones start there, and go back to it from the end.
    (
        "zonesize=1m\nzoneskip=2m\noffset=1m",
        &[
            (1.0, 2.0),
            (4.0, 5.0),
            (7.0, 8.0),
            (1.0, 2.0),
            (4.0, 5.0),
            (7.0, 8.0),
            (1.0, 2.0),
            (4.0, 5.0),
            (7.0, 8.0),
        ],
    ),
];

/// The read offsets of a "fio version 3 iolog".
fn offsets(log: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(log).unwrap();
    text.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 5 && w[2] == "read").then(|| w[3].parse().unwrap())
        })
        .collect()
}

/// The 64k reads over `spans` (MiB), in order.
fn reads(spans: &[(f64, f64)]) -> Vec<u64> {
    let mut v = Vec::new();
    for &(a, b) in spans {
        let (mut at, end) = ((a * MIB) as u64, (b * MIB) as u64);
        while at < end {
            v.push(at);
            at += 65536;
        }
    }
    v
}

/// A job file in `dir` reading `data` there at bs=64k in zones (`zones`:
/// its zone lines), logging its I/Os to `log`.
fn job(dir: &Path, zones: &str, log: &str) -> std::path::PathBuf {
    let p = dir.join(format!("{log}.fio"));
    std::fs::write(
        &p,
        format!("[global]\nbs=64k\nrw=read\nzonemode=strided\n{zones}\n[z]\nfilename=data\nwrite_iolog={log}\n"),
    )
    .unwrap();
    p
}

#[test]
fn strided_zones_read_the_offsets_fio_reads_and_end_where_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    data_file(dir.path(), "data", 10 << 20);
    let fio = tool("fio");
    for (zones, spans) in JOBS {
        // fio adds to a log that is there: each run's own.
        for log in ["ours", "theirs"] {
            let _ = std::fs::remove_file(dir.path().join(log));
        }
        let out = sb()
            .current_dir(dir.path())
            .args(["run", "--fio-job"])
            .arg(job(dir.path(), zones, "ours"))
            .args(["--no-progress", "--engine", "sync"])
            .output()
            .unwrap();
        succeeded_as(&out, zones);
        let ours = offsets(&dir.path().join("ours"));
        assert_eq!(ours, reads(spans), "{zones}");
        // fio itself beside us, where it is installed: the same reads.
        if fio.is_file() {
            let out = Command::new(&fio)
                .current_dir(dir.path())
                .arg(job(dir.path(), zones, "theirs"))
                .arg("--ioengine=psync")
                .output()
                .unwrap();
            succeeded_as(&out, format_args!("fio: {zones}"));
            assert_eq!(ours, offsets(&dir.path().join("theirs")), "fio: {zones}");
        }
    }
}

#[test]
fn zones_go_round_again_in_a_time_based_run_as_fio_does() {
    // fio 3.42, time_based: the zone cut at the end (9.75m) is read from
    // its start again until the zone's 1m is done, then back to 0.
    let dir = tempfile::tempdir().unwrap();
    data_file(dir.path(), "data", 10 << 20);
    let out = sb()
        .current_dir(dir.path())
        .args([
            "run", "data", "--rw", "read", "--bs", "64k", "--engine", "sync",
        ])
        .args([
            "--zones",
            "1m:2304k",
            "--ios",
            "100",
            "--iolog-write",
            "log",
        ])
        .arg("--no-progress")
        .output()
        .unwrap();
    succeeded_as(&out, "--zones --ios");
    let once = [(0.0, 1.0), (3.25, 4.25), (6.5, 7.5)];
    let cut = [(9.75, 10.0); 4];
    let want: Vec<u64> = [reads(&once), reads(&cut), reads(&once)].concat();
    assert_eq!(offsets(&dir.path().join("log")), want[..100]);
}

#[test]
fn zones_stripebench_cannot_walk_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let j = |name: &str, body: &str| {
        let p = Path::new(d).join(name);
        std::fs::write(&p, format!("[j]\nfilename=f\nrw=read\n{body}\n")).unwrap();
        p.to_str().unwrap().to_string()
    };
    refused(
        &[
            "run",
            "--fio-job",
            &j("zbd.fio", "zonemode=zbd\nzonesize=1m"),
        ],
        "`zonemode=zbd` drives a zoned block device's zones",
    );
    refused(
        &["run", "--fio-job", &j("size.fio", "zonesize=1m\nsize=5m")],
        "`size=5m` with zonesize=: fio's zones run past size=",
    );
    refused(
        &["run", "--fio-job", &j("nosize.fio", "zonemode=strided")],
        "needs zonesize=",
    );
    refused(
        &["run", "f", "--rw", "randread", "--zones", "1m:2m"],
        "--zones walks zones in order, and --rw randread",
    );
    refused(
        &[
            "run", "f", "--rw", "read", "--zones", "1m:2m", "--jobs", "2",
        ],
        "--zones with --jobs",
    );
    refused(&["run", "f", "--zones", "1m"], "is not SIZE:SKIP");
}

#[test]
fn a_zone_profile_reports_each_zones_bytes_and_rate() {
    // What disk-zone-profile.fio is for: MB/s against offset. 10 MiB in
    // 1m zones every 3m: zones at 0, 3m, 6m, 9m, read 3, 3, 2 and 2 MiB
    // (round the zones until the file's 10 MiB are done, as fio does).
    let dir = tempfile::tempdir().unwrap();
    data_file(dir.path(), "data", 10 << 20);
    let out = sb()
        .current_dir(dir.path())
        .args([
            "run", "data", "--rw", "read", "--bs", "64k", "--engine", "sync",
        ])
        .args(["--zones", "1m:2m", "--passes", "1", "--ramp", "0"])
        .args(["--no-progress", "--json", "r.json"])
        .output()
        .unwrap();
    succeeded_as(&out, "--zones");
    let doc = crate::common::json(&std::fs::read(dir.path().join("r.json")).unwrap());
    let zones = doc["total"]["zones"].as_array().expect("total.zones");
    let got: Vec<(u64, u64)> = zones
        .iter()
        .map(|z| {
            (
                z["offset"].as_u64().unwrap() >> 20,
                z["bytes"].as_u64().unwrap() >> 20,
            )
        })
        .collect();
    assert_eq!(got, [(0, 3), (3, 3), (6, 2), (9, 2)]);
    let window = doc["window"]["seconds"].as_f64().unwrap();
    let mut busy = 0.0;
    for z in zones {
        let (b, s) = (
            z["bytes"].as_f64().unwrap(),
            z["busy_sec"].as_f64().unwrap(),
        );
        assert!(s > 0.0, "{z}");
        let rate = z["bytes_per_sec"].as_f64().unwrap();
        assert!((rate - b / s).abs() <= rate * 1e-9, "{z}");
        busy += s;
    }
    // The zones' times are the window's, shared out: no more than it.
    assert!(busy <= window * 1.0001, "{busy} s of zones in {window} s");
    // And the table says each zone's MB/s.
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("by zone (--zones)"), "{table}");
}

/// Zones a hostile review found accepted: a RANGE + SKIP past 2^64
/// wrapped round (a 1048575-byte step, then EINVAL mid-run), and a range
/// smaller than --bs read its zone's first request for ever. Both are
/// refused before any I/O, in one line.
#[test]
fn zones_that_wrap_round_or_hold_no_request_are_refused_before_any_io() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "f", 4 << 20);
    let f = f.to_str().unwrap();
    refused(
        &[
            "run",
            f,
            "--rw",
            "read",
            "--zones",
            "1m:18446744073709551615",
        ],
        "RANGE + SKIP is past any device's size",
    );
    refused(
        &[
            "run",
            f,
            "--rw",
            "read",
            "--zones",
            "9223372036854775808:9223372036854775808",
        ],
        "RANGE + SKIP is past any device's size",
    );
    refused(
        &[
            "run",
            f,
            "--rw",
            "read",
            "--bs",
            "64k",
            "--zones",
            "1m:1m:1000",
        ],
        "a zone's range (1000) is smaller than --bs 64k",
    );
}
