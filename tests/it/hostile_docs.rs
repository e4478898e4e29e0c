//! The document consumers (`diff`, `report`) and the documents stripebench
//! writes, tried as a hostile user would: documents edited by hand are
//! refused in one line (exit 2) or rendered, never a panic, and never drawn
//! as if measured when they do not add up; targets given in another order,
//! an incomplete fleet, a sweep interrupted in a ramp, and a compare --size
//! its test file cannot hold.

use crate::common;

use std::path::Path;

use crate::common::{btrfs_raid0, data_file, interrupt, refused, sb, spawn, LoopBed};
use serde_json::Value;

/// `stripebench ARGS --json DIR/NAME`, which must succeed: the path and JSON.
fn written(dir: &Path, name: &str, args: &[&str]) -> (String, Value) {
    let p = dir.join(name);
    let out = sb().args(args).arg("--json").arg(&p).output().unwrap();
    common::succeeded(&out);
    let v = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    (p.to_str().unwrap().to_string(), v)
}

/// A real one-second run of 4k reads on `targets`: its document's path and JSON.
fn run_on(dir: &Path, name: &str, targets: &[&Path]) -> (String, Value) {
    let mut args = vec![
        "run",
        "--no-progress",
        "--ramp",
        "0",
        "-t",
        "1s",
        "--bs",
        "4k",
    ];
    args.extend(targets.iter().map(|t| t.to_str().unwrap()));
    written(dir, name, &args)
}

/// A run on a small data file.
fn a_run(dir: &Path) -> (String, Value) {
    let t = data_file(dir, "t", 4 << 20);
    run_on(dir, "run.json", &[&t])
}

/// `v` edited by `edit`, written next to the run as `name`.
fn edited(dir: &Path, name: &str, v: &Value, edit: impl FnOnce(&mut Value)) -> String {
    let mut v = v.clone();
    edit(&mut v);
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    p.to_str().unwrap().to_string()
}

/// Regression: a window.seconds of 1e308 made diff allocate its per-second
/// samples ("capacity overflow" panic), and a window opened after the year
/// 9999 panicked report's date formatting.
#[test]
fn edited_windows_are_refused_or_shown_never_panicked_on() {
    let dir = tempfile::tempdir().unwrap();
    let (good, v) = a_run(dir.path());
    let g = good.as_str();
    let html = dir.path().join("r.html");
    let h = html.to_str().unwrap();
    let huge = edited(dir.path(), "huge.json", &v, |v| {
        v["window"]["seconds"] = 1e308.into();
    });
    refused(
        &["diff", g, &huge],
        "window.seconds is 1e308, longer than any run",
    );
    refused(&["report", &huge, "-o", h], "window.seconds is 1e308");
    // A window longer than its own timestamps say.
    let long = edited(dir.path(), "long.json", &v, |v| {
        v["window"]["seconds"] = 1e6.into();
    });
    refused(&["diff", &long, g], "but the window runs from");
    // Regression: a second at t = 10^15 made report's plot allocate 8 PB
    // (abort, "memory allocation failed"); seconds adding up to more than
    // the worker moved overflowed the per-second total.
    let late = edited(dir.path(), "late.json", &v, |v| {
        let iv = serde_json::json!({"t": 1_000_000_000_000_000u64, "bytes": 1, "ios": 1});
        v["workers"][0]["intervals"]
            .as_array_mut()
            .unwrap()
            .push(iv);
    });
    refused(&["report", &late, "-o", h], "not an interval of a");
    refused(&["diff", g, &late], "not an interval of a");
    let over = edited(dir.path(), "over.json", &v, |v| {
        v["workers"][0]["intervals"][0]["bytes"] = u64::MAX.into();
    });
    refused(&["report", &over, "-o", h], "more than the worker's");
    // Far in the future, but consistent: shown as the figure it is.
    let future = edited(dir.path(), "future.json", &v, |v| {
        let s = v["window"]["seconds"].as_f64().unwrap();
        v["window"]["start_unix_sec"] = 1e12.into();
        v["window"]["end_unix_sec"] = (1e12 + s).into();
    });
    let out = sb().args(["report", &future, "-o", h]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("window opened at Unix second 1000000000000"));
}

/// Regression: report drew a hand-edited negative total as "-5000.0" MB/s;
/// it now refuses what diff and plan refuse.
#[test]
fn report_refuses_figures_that_do_not_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let (_, v) = a_run(dir.path());
    let html = dir.path().join("r.html");
    let h = html.to_str().unwrap();
    let neg = edited(dir.path(), "neg.json", &v, |v| {
        v["total"]["bytes_per_sec"] = (-5e9).into();
    });
    refused(
        &["report", &neg, "-o", h],
        "total.bytes_per_sec is -5000000000",
    );
    let sum = edited(dir.path(), "sum.json", &v, |v| {
        v["total"]["bytes"] = 1.into();
    });
    refused(
        &["report", &sum, "-o", h],
        "the document is damaged or was edited",
    );
    assert!(!html.exists(), "nothing written");
}

/// Regression: diff paired targets by position, so the same two files given
/// in the other order were compared crosswise (t1's base rate against t2's
/// new one, labelled "t1 -> t2"). A path both runs drove is now one row.
#[test]
fn diff_pairs_targets_by_path_before_position() {
    let dir = tempfile::tempdir().unwrap();
    let t1 = data_file(dir.path(), "t1", 4 << 20);
    let t2 = data_file(dir.path(), "t2", 4 << 20);
    let t3 = data_file(dir.path(), "t3", 4 << 20);
    let (base, vb) = run_on(dir.path(), "base.json", &[&t1, &t2]);
    let (swapped, vs) = run_on(dir.path(), "swapped.json", &[&t2, &t1]);
    let (renamed, vr) = run_on(dir.path(), "renamed.json", &[&t3, &t1]);
    let rate = |v: &Value, t: &Path| -> f64 {
        let t = t.to_str().unwrap();
        let target = v["targets"].as_array().unwrap().iter();
        target.clone().find(|x| x["path"] == t).unwrap()["bytes_per_sec"]
            .as_f64()
            .unwrap()
    };
    let diffed = |new: &str| -> Value {
        let out = sb()
            .args(["diff", &base, new, "--json", "-"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let rows = |d: &Value| -> Vec<(String, Value, f64, f64)> {
        d["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["group"] == "target")
            .map(|r| {
                let m = &r["metrics"][0];
                assert_eq!(m["metric"], "bytes_per_sec");
                (
                    r["label"].as_str().unwrap().to_string(),
                    r["new_label"].clone(),
                    m["base"].as_f64().unwrap(),
                    m["new"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    // The same two files in the other order: each is its own row.
    for (label, new_label, b, n) in rows(&diffed(&swapped)) {
        let t = Path::new(&label);
        assert!(new_label.is_null(), "{label} paired with {new_label}");
        assert_eq!(b, rate(&vb, t));
        assert_eq!(n, rate(&vs, t));
    }
    // t2 replaced by t3 (in first place): t1 still meets t1, t2 meets t3.
    let r = rows(&diffed(&renamed));
    let t1s = t1.to_str().unwrap();
    let t1row = r.iter().find(|x| x.0 == t1s).unwrap();
    assert!(t1row.1.is_null());
    assert_eq!(t1row.3, rate(&vr, &t1));
    let t2row = r.iter().find(|x| x.0 == t2.to_str().unwrap()).unwrap();
    assert_eq!(t2row.1, t3.to_str().unwrap());
    assert_eq!(t2row.3, rate(&vr, &t3));
}

/// Regression: compare sized its test file from the free space alone, so a
/// --size larger than the file passed every check, the members phase
/// measured, and the first volume phase refused ("--size runs past the end
/// of .../file0"), exit 2 and nothing written. Both are refused before any I/O.
#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_btrfs)),
    ignore = "needs root and mkfs.btrfs (btrfs-progs)"
)]
fn compare_refuses_a_size_its_test_file_cannot_hold_before_measuring() {
    let bed = LoopBed::new(2, 160);
    let mnt = tempfile::tempdir().unwrap();
    let _m = btrfs_raid0(&bed, mnt.path());
    let m = mnt.path().to_str().unwrap();
    refused(
        &[
            "compare",
            m,
            "-t",
            "1s",
            "--size",
            "100m",
            "--file-size",
            "64m",
        ],
        "--file-size 64.0 MiB is smaller than --offset + --size (100.0 MiB)",
    );
    // Most of the volume taken: the default test file would be smaller than
    // --size, which each member still holds.
    let filler = mnt.path().join("filler");
    std::fs::write(&filler, vec![7u8; 200 << 20]).unwrap();
    let out = std::process::Command::new("sync").status().unwrap();
    assert!(out.success());
    refused(
        &["compare", m, "-t", "1s", "--size", "140m"],
        "give a smaller --size",
    );
}

/// Regression: a sweep interrupted in a point's ramp kept that point with a
/// run of a 0 s window that ends before it opens, drawn as 0.0 MB/s; diff
/// (and report, which now checks the same arithmetic) refused the document
/// stripebench had written as "damaged or edited". The point is left out.
#[test]
fn a_sweep_interrupted_in_a_ramp_keeps_no_empty_point() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 4 << 20);
    let (json, html) = (dir.path().join("s.json"), dir.path().join("s.html"));
    let mut child = spawn(&[
        "sweep",
        "--no-progress",
        "-t",
        "1s",
        "--ramp",
        "60s",
        "--param",
        "bs=4k",
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        t.to_str().unwrap(),
    ]);
    // The table's head is printed before the first point starts its ramp.
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("MB/s") || line.starts_with("sweep:") {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the sweep ended early"
        );
    }
    // Into the 60 s ramp: the point's setup is done once its workers run.
    common::wait_workers(child.id());
    interrupt(&child);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(rest.contains("nothing measured, no row"), "{rest}");
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["points"].as_array().unwrap().len(), 0, "{v}");
    // What stripebench wrote, report reads: the same page as --html.
    let again = dir.path().join("again.html");
    let out = sb()
        .arg("report")
        .arg(&json)
        .arg("-o")
        .arg(&again)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&html).unwrap(),
        std::fs::read(&again).unwrap()
    );
}

/// A fleet merged with --missing totals fewer hosts: diff said nothing, so
/// a FLEET fall read as the hosts slowing down. It now says which runs are
/// missing, on which side.
#[test]
fn diff_names_the_missing_runs_of_an_incomplete_fleet() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 4 << 20);
    let (r1, _) = run_on(dir.path(), "r1.json", &[&t]);
    let (r2, _) = run_on(dir.path(), "r2.json", &[&t]);
    let merged = |name: &str, extra: &[&str]| -> String {
        // Run one after another: not concurrent, merged all the same.
        written(
            dir.path(),
            name,
            &[&["merge", "--force", &r1, &r2], extra].concat(),
        )
        .0
    };
    let whole = merged("whole.json", &[]);
    let short = merged("short.json", &["--missing", "node9=died in the ramp"]);
    let out = sb()
        .args(["diff", &whole, &short, "--json", "-"])
        .output()
        .unwrap();
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes: Vec<&str> = d["notes"]
        .as_array()
        .unwrap_or_else(|| panic!("no notes: {d}"))
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let incomplete: Vec<&&str> = notes
        .iter()
        .filter(|n| n.contains("fleet is incomplete"))
        .collect();
    assert!(
        incomplete.len() == 1
            && incomplete[0].contains("new fleet is incomplete")
            && incomplete[0].contains("node9 (died in the ramp)"),
        "{notes:?}"
    );
    assert!(!notes.iter().any(|n| n.contains("base fleet")), "{notes:?}");
}

/// Regression: a sweep point with no run (edited) panicked report's points
/// table ("index out of bounds: the len is 0").
#[test]
fn a_sweep_point_without_a_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 4 << 20);
    let args = [
        "sweep",
        "--no-progress",
        "--ramp",
        "0",
        "-t",
        "1s",
        "--param",
        "bs=4k,8k",
    ];
    let (_, v) = written(
        dir.path(),
        "s.json",
        &[&args[..], &[t.to_str().unwrap()]].concat(),
    );
    let empty = edited(dir.path(), "empty.json", &v, |v| {
        v["points"][1]["runs"] = serde_json::json!([]);
    });
    let html = dir.path().join("r.html");
    refused(
        &["report", &empty, "-o", html.to_str().unwrap()],
        "points[1].runs is missing or empty",
    );
    refused(
        &["diff", &empty, &empty],
        "points[1].runs is missing or empty",
    );
}

/// Regression (issue 20, item 10): documents edited to contradict
/// themselves were accepted: a p99 of u64::MAX ns beside a max of 36 ms
/// (`diff --threshold 5` then exited 1 showing "18446744073.710s"), bytes
/// halved with the I/Os unchanged, bytes and I/Os 0 beside full
/// histograms, `targets: []` beside workers, a `target_index` of 99. Each
/// is refused (exit 2), naming the field, by diff and report alike.
#[test]
fn documents_that_contradict_themselves_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (good, v) = a_run(dir.path());
    let html = dir.path().join("r.html");
    let h = html.to_str().unwrap();
    let secs = v["total"]["seconds"].as_f64().unwrap();
    let p99 = edited(dir.path(), "p99.json", &v, |v| {
        v["workers"][0]["latency_ns"]["p99"] = u64::MAX.into();
        v["total"]["latency_ns"]["p99"] = u64::MAX.into();
    });
    // Scale bytes (and their rates and intervals) by `num / den`, I/Os left alone.
    let scaled = |v: &mut Value, num: u64, den: u64, ios_too: bool| {
        let keys: &[&str] = if ios_too {
            &["bytes", "read_bytes", "ios", "read_ios"]
        } else {
            &["bytes", "read_bytes"]
        };
        for pointer in ["/workers/0", "/targets/0", "/total"] {
            let part = v.pointer_mut(pointer).unwrap();
            for k in keys {
                if let Some(x) = part[*k].as_u64() {
                    part[*k] = (x * num / den).into();
                }
            }
            let (b, n) = (
                part["bytes"].as_u64().unwrap(),
                part["ios"].as_u64().unwrap(),
            );
            part["bytes_per_sec"] = (b as f64 / secs).into();
            part["iops"] = (n as f64 / secs).into();
        }
        for iv in v["workers"][0]["intervals"].as_array_mut().unwrap() {
            for k in if ios_too {
                &["bytes", "ios"][..]
            } else {
                &["bytes"]
            } {
                iv[*k] = (iv[*k].as_u64().unwrap() * num / den).into();
            }
        }
    };
    let halved = edited(dir.path(), "halved.json", &v, |v| scaled(v, 1, 2, false));
    let zeroed = edited(dir.path(), "zeroed.json", &v, |v| scaled(v, 0, 1, true));
    let no_targets = edited(dir.path(), "no-targets.json", &v, |v| {
        v["targets"] = serde_json::json!([]);
    });
    let index99 = edited(dir.path(), "index99.json", &v, |v| {
        v["workers"][0]["target_index"] = 99.into();
    });
    for (doc, why) in [
        (&p99, "workers[0].latency_ns is {"),
        (&halved, "workers[0].bytes is"),
        (&zeroed, "workers[0].histogram holds"),
        (
            &no_targets,
            "workers[0].target_index is 0, but the document lists 0 target(s)",
        ),
        (
            &index99,
            "workers[0].target_index is 99, but the document lists 1 target(s)",
        ),
    ] {
        refused(&["diff", &good, doc, "--threshold", "5"], why);
        refused(&["report", doc, "-o", h], why);
    }
    assert!(!html.exists(), "nothing written");
    // What the p99 edit looked like: u64::MAX beside the real max.
    refused(&["diff", &good, &p99], "but its histogram says p99");
}

/// Regression (issue 20, item 10): `merge --missing HOST` for a host whose
/// run was merged too made a fleet that counted the host both measured and
/// missing. merge refuses it, and so do diff and report when a merged
/// document is edited to say so.
#[test]
fn a_missing_host_that_was_also_measured_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 4 << 20);
    let (r1, v) = run_on(dir.path(), "r1.json", &[&t]);
    let (r2, _) = run_on(dir.path(), "r2.json", &[&t]);
    let host = v["host"]["hostname"].as_str().unwrap().to_string();
    refused(
        &[
            "merge",
            "--force",
            &r1,
            &r2,
            "--missing",
            &format!("{host}=died"),
        ],
        &format!("--missing {host} names a host that was measured"),
    );
    let (m, mv) = written(
        dir.path(),
        "m.json",
        &["merge", "--force", &r1, &r2, "--missing", "node9=died"],
    );
    let both = edited(dir.path(), "both.json", &mv, |v| {
        v["missing"][0]["host"] = host.clone().into();
    });
    let why = format!("missing[0] is host {host}, but hosts[0] is its measured run");
    refused(&["diff", &m, &both], &why);
    let html = dir.path().join("r.html");
    refused(&["report", &both, "-o", html.to_str().unwrap()], &why);
}

/// Regression (hostile pass over issue 20, item 10): a worker whose
/// `seconds` was edited to -1e308 (or longer than the window), or whose
/// region ran past the end of any device (offset and length u64::MAX), was
/// accepted by report, diff and merge. Each is refused, naming the field.
#[test]
fn a_workers_seconds_or_region_that_cannot_be_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (good, v) = a_run(dir.path());
    let html = dir.path().join("r.html");
    let h = html.to_str().unwrap();
    let window = v["window"]["seconds"].as_f64().unwrap();
    let negative = edited(dir.path(), "neg.json", &v, |v| {
        v["workers"][0]["seconds"] = (-1e308).into();
    });
    let longer = edited(dir.path(), "longer.json", &v, |v| {
        v["workers"][0]["seconds"] = (window * 2.0 + 5.0).into();
    });
    let region = edited(dir.path(), "region.json", &v, |v| {
        v["workers"][0]["region"]["offset"] = u64::MAX.into();
        v["workers"][0]["region"]["length"] = u64::MAX.into();
    });
    for (doc, why) in [
        (&negative, "workers[0].seconds is -1e308"),
        (&longer, "workers[0].seconds is"),
        (&region, "workers[0].region"),
    ] {
        refused(&["diff", &good, doc], why);
        refused(&["report", doc, "-o", h], why);
        refused(&["merge", &good, doc, "--force"], why);
    }
    assert!(!html.exists(), "nothing written");
}

/// The inner (uncompressed) V2 histogram encoding: its 40-byte header, then
/// `payload`. `payload_len` is what the header claims.
fn v2(payload_len: u32, sigfig: u32, low: u64, high: u64, payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(0x1c84_9313u32.to_be_bytes());
    b.extend(payload_len.to_be_bytes());
    b.extend(0u32.to_be_bytes()); // normalizing offset
    b.extend(sigfig.to_be_bytes());
    b.extend(low.to_be_bytes());
    b.extend(high.to_be_bytes());
    b.extend(1.0f64.to_be_bytes()); // integer to double ratio
    b.extend(payload);
    b
}

/// `inner` zlib-compressed behind the V2 deflate header (cookie, length).
fn deflated(inner: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(inner).unwrap();
    let z = z.finish().unwrap();
    let mut b = Vec::new();
    b.extend(0x1c84_9314u32.to_be_bytes());
    b.extend((z.len() as u32).to_be_bytes());
    b.extend(z);
    b
}

/// Regression: a 56-character histogram whose header claimed a 4 GiB
/// payload made merge, diff and report allocate it (4.2 GB resident, 30 s,
/// before exit 2; SIGABRT under a memory limit); 1 GiB took 1.05 GB. A
/// histogram is now decoded only as far as its header's range and counts
/// allow, and refused in one line that names the document and the field.
#[test]
fn a_histogram_claiming_gigabytes_is_refused_before_it_is_allocated() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let (good, v) = a_run(dir.path());
    let hour = 3_600_000_000_000u64;
    let valid = base64::engine::general_purpose::STANDARD
        .decode(v["total"]["histogram"].as_str().unwrap())
        .unwrap();
    let mut garbage = valid.clone();
    garbage.extend(b"trailing garbage");
    // 64 MiB of zero bytes inflated from a few KiB, behind a header that
    // claims 100: decompression must stop at what the header claims.
    let bomb = deflated(&v2(100, 3, 1, hour, &vec![0u8; 64 << 20]));
    let cases: [(&str, Vec<u8>, &str); 7] = [
        ("4gib", deflated(&v2(u32::MAX, 3, 1, hour, &[])), "payload"),
        ("1gib", deflated(&v2(1 << 30, 3, 1, hour, &[])), "payload"),
        (
            "wide",
            deflated(&v2(0, 5, 1, u64::MAX / 2, &[])),
            "significant digits",
        ),
        ("truncated", valid[..valid.len() - 5].to_vec(), "truncated"),
        ("plain", v2(0, 3, 1, hour, &[]), "compressed"),
        ("garbage", garbage, "trailing"),
        ("bomb", bomb, "more than"),
    ];
    let html = dir.path().join("r.html");
    for (name, bytes, why) in cases {
        let text = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let bad = edited(dir.path(), &format!("{name}.json"), &v, |v| {
            for w in v["workers"].as_array_mut().unwrap() {
                w["histogram"] = text.clone().into();
            }
            v["targets"][0]["histogram"] = text.clone().into();
            v["total"]["histogram"] = text.clone().into();
        });
        for args in [
            vec!["merge", &bad, &good],
            vec!["diff", &good, &bad],
            vec!["report", &bad, "-o", html.to_str().unwrap()],
        ] {
            let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
            let m = common::measured(&args, std::time::Duration::from_secs(60));
            let err = m.stderr.trim_end();
            assert!(!m.killed, "{args:?} ({name}): still running after 60 s");
            assert!(
                m.peak_kib < 100 << 10,
                "{args:?} ({name}): peak resident memory {} MiB",
                m.peak_kib >> 10
            );
            assert_eq!(m.code, Some(2), "{args:?} ({name}): {err}");
            assert_eq!(err.lines().count(), 1, "{args:?} ({name}): {err}");
            assert!(
                err.contains(&format!("{name}.json: workers[0].histogram")) && err.contains(why),
                "{args:?} ({name}): expected the field and '{why}' in {err}"
            );
        }
    }
    assert!(!html.exists(), "no report written");
}

/// `v` with every `seconds` divided by `by` and every rate multiplied by
/// it (the window's end moved to match): the same I/Os claimed in a
/// shorter window, every rate and total still adding up.
fn squeezed(v: &Value, by: f64) -> Value {
    fn walk(v: &mut Value, by: f64) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    match (k.as_str(), x.as_f64()) {
                        ("seconds", Some(s)) => *x = (s / by).into(),
                        ("bytes_per_sec" | "iops", Some(r)) => *x = (r * by).into(),
                        _ => walk(x, by),
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, by)),
            _ => {}
        }
    }
    let mut v = v.clone();
    walk(&mut v, by);
    let start = v["window"]["start_unix_sec"].as_f64().unwrap();
    let secs = v["window"]["seconds"].as_f64().unwrap();
    v["window"]["end_unix_sec"] = (start + secs).into();
    v
}

// Regression (issue 39, item 8): a real run's document with every seconds
// divided by 10 and every rate multiplied by 10 was merged (the host at ten
// times its rate) and diffed (+900%): its I/Os at their mean latency need
// ten times the window its one I/O in flight had.
#[test]
fn a_document_whose_ios_need_more_time_in_flight_than_its_window_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (r, v) = a_run(dir.path());
    let f = v["in_flight"]["mean"].as_f64().unwrap();
    assert!(
        f > 0.0 && f <= 1.02 && v["in_flight"]["slots"] == 1 && v["in_flight"]["fits"] == true,
        "the run's own check: {}",
        v["in_flight"]
    );
    let t = dir.path().join("t.json");
    std::fs::write(&t, serde_json::to_vec(&squeezed(&v, 10.0)).unwrap()).unwrap();
    let t = t.to_str().unwrap();
    let why = format!("{t}: workers[0].ios is {}", v["workers"][0]["ios"]);
    let html = dir.path().join("r.html");
    for args in [
        vec!["merge", "--force", &r, t],
        vec!["diff", &r, t],
        vec!["report", t, "-o", html.to_str().unwrap()],
    ] {
        refused(&args, &why);
        refused(&args, "Little's law");
    }
    // The same edit changing nothing: the real figures are still read.
    let s = edited(dir.path(), "s.json", &squeezed(&v, 1.0), |_| {});
    sb().args(["diff", &r, &s]).assert().success();
}

// Issue 39, item 8: what Little's law must not refuse: a run interrupted,
// one on a schedule (latency from due times), buffered writes (latency
// without the flush), several workers at depth.
#[test]
fn real_documents_fit_in_their_slots() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 16 << 20);
    let t = t.to_str().unwrap();
    let base = ["run", "--no-progress", "--ramp", "0", "-t", "1s"];
    let mut docs = vec![
        written(
            dir.path(),
            "rate.json",
            &[&base[..], &["--rate", "4m", t]].concat(),
        ),
        written(
            dir.path(),
            "buffered.json",
            &[
                &base[..],
                &["--rw", "write", "--buffered", "--allow-destructive", t],
            ]
            .concat(),
        ),
        written(
            dir.path(),
            "deep.json",
            &[
                &base[..],
                &["--jobs", "2", "--iodepth", "4", "--bs", "4k", t],
            ]
            .concat(),
        ),
    ];
    let p = dir.path().join("int.json");
    let child = spawn(&[
        "run",
        "--no-progress",
        "-t",
        "60s",
        "--json",
        p.to_str().unwrap(),
        t,
    ]);
    std::thread::sleep(std::time::Duration::from_millis(2500));
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    docs.push((p.to_str().unwrap().to_string(), v));
    for (path, v) in &docs {
        assert_ne!(v["in_flight"]["fits"], false, "{path}: {}", v["in_flight"]);
        let out = sb().args(["diff", path, path]).output().unwrap();
        common::succeeded_as(&out, path);
    }
    assert_eq!(
        docs[0].1["in_flight"]["fits"],
        Value::Null,
        "--rate: not bounded"
    );
}
