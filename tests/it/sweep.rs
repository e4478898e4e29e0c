//! Sweeps and the page cache: points from the cartesian product, JSON/CSV
//! written as it goes, read-ahead put back (also after an interrupt),
//! cold-cache eviction and --cached proven by device counters, and
//! well-formed SVG plots with a series per target.

use crate::common;

use std::path::Path;

use std::time::Duration;

use crate::common::{data_file, interrupt, json, sb, spawn, u, LoopBed};

fn svg_texts(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text)
        .unwrap_or_else(|e| panic!("{} is not well-formed XML: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_readahead_by_mode_sweep_on_a_loop_device() {
    let bed = LoopBed::new(1, 64);
    let dev = bed.devices[0].clone();
    let ra = format!(
        "/sys/block/{}/queue/read_ahead_kb",
        dev.trim_start_matches("/dev/")
    );
    std::fs::write(&ra, "128").unwrap();
    let (j, c, p) = (
        bed.dir().join("s.json"),
        bed.dir().join("s.csv"),
        bed.dir().join("s.svg"),
    );
    let out = sb()
        .args([
            "sweep",
            "--param",
            "readahead=0,128,1024",
            "--param",
            "mode=direct,buffered",
            "--duration",
            "300ms",
            "--ramp",
            "0",
        ])
        .arg("--json")
        .arg(&j)
        .arg("--csv")
        .arg(&c)
        .arg("--plot")
        .arg(&p)
        .arg(&dev)
        .output()
        .unwrap();
    common::succeeded(&out);
    let doc = json(&std::fs::read(&j).unwrap());
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    for pt in points {
        let run = &pt["runs"][0];
        let ra_value: u64 = pt["values"][0][1].as_str().unwrap().parse().unwrap();
        assert_eq!(
            u(&run["targets"][0]["read_ahead_kb"]),
            ra_value,
            "the point ran at its read-ahead"
        );
        let direct = pt["values"][1][1] == "direct";
        assert_eq!(run["config"]["direct"], direct);
        let sum: u64 = run["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| u(&w["bytes"]))
            .sum();
        assert_eq!(sum, u(&run["total"]["bytes"]));
        assert_eq!(
            run["cache"]["state"],
            if direct { "untouched" } else { "evicted" }
        );
    }
    assert_eq!(
        std::fs::read_to_string(&c).unwrap().lines().count(),
        7,
        "header + 6 rows"
    );
    // A series for the target at each value of the second parameter.
    let texts = svg_texts(&p);
    for mode in ["direct", "buffered"] {
        assert!(
            texts.iter().any(|t| t == &format!("{dev} mode={mode}")),
            "a series for the target at mode={mode}: {texts:?}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&ra).unwrap().trim(),
        "128",
        "read-ahead put back"
    );

    // Interrupted: the finished points are kept and the setting is put back.
    let j2 = bed.dir().join("int.json");
    let live = bed.dir().join("int.jsonl");
    let child = spawn(&[
        "sweep",
        "--param",
        "readahead=512,2048",
        "--buffered",
        "--duration",
        "3s",
        "--ramp",
        "0",
        "--json",
        j2.to_str().unwrap(),
        "--live",
        live.to_str().unwrap(),
        &dev,
    ]);
    // Interrupt during the second point: once the first is in the file.
    let t0 = std::time::Instant::now();
    let finished = |p: &Path| -> usize {
        std::fs::read(p)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|d| d["points"].as_array().map(Vec::len))
            .unwrap_or(0)
    };
    while finished(&j2) == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the first point never finished"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The second point has measured its first second.
    common::wait_for("the second point's first live second", || {
        common::live_lines(&live)
            .iter()
            .any(|l| l["kind"] == "total" && l["point"] == "readahead=2048")
    });
    interrupt(&child);
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(130));
    let doc = json(&std::fs::read(&j2).unwrap());
    assert_eq!(doc["interrupted"], true);
    let points = doc["points"].as_array().unwrap();
    assert_eq!(
        points.len(),
        2,
        "the finished point and the one in progress"
    );
    assert_eq!(points[0]["partial"], false);
    assert_eq!(
        points[1]["partial"], true,
        "the point in progress is marked"
    );
    assert_eq!(
        std::fs::read_to_string(&ra).unwrap().trim(),
        "128",
        "put back after the interrupt"
    );
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn cold_by_default_cached_on_purpose() {
    // A loop device's own counters see only this test's I/O. Its pages are
    // read into the cache first; the run evicts them, so one pass reads from
    // the device. With --cached the device stays idle.
    let bed = LoopBed::new(1, 32);
    let dev = bed.devices[0].clone();
    sb().args([
        "run",
        "--buffered",
        "--io-limit",
        "32m",
        "--duration",
        "60s",
        "--no-progress",
        &dev,
    ])
    .assert()
    .success();
    let one_pass = [
        "run",
        "--buffered",
        "--io-limit",
        "32m",
        "--duration",
        "60s",
        "--json",
        "-",
    ];
    let doc = json(&sb().args(one_pass).arg(&dev).output().unwrap().stdout);
    assert_eq!(doc["cache"]["state"], "evicted");
    assert_eq!(doc["cache"]["method"], "BLKFLSBUF");
    let d = &doc["targets"][0]["device"];
    let ratio = d["read_ratio"].as_f64().unwrap();
    println!("cold: device/app read ratio {ratio:.3}");
    assert!(ratio > 0.9, "a cold read reaches the device: ratio {ratio}");
    let doc = json(
        &sb()
            .args([
                "run",
                "--buffered",
                "--cached",
                "--duration",
                "300ms",
                "--ramp",
                "0",
                "--json",
                "-",
            ])
            .arg(&dev)
            .output()
            .unwrap()
            .stdout,
    );
    assert_eq!(doc["cache"]["state"], "preloaded");
    assert!(doc["cache"]["memcpy_bytes_per_sec"].as_f64().unwrap() > 0.0);
    let d = &doc["targets"][0]["device"];
    let ratio = u(&d["read_bytes"]) as f64 / u(&d["app_read_bytes"]) as f64;
    println!("cached: device/app read ratio {ratio:.4}");
    assert!(
        ratio < 0.01,
        "cached reads leave the device idle: ratio {ratio}"
    );
}

#[test]
fn run_plot_has_a_series_per_worker_and_per_target() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 4 << 20);
    let b = data_file(dir.path(), "b", 4 << 20);
    let p = dir.path().join("run.svg");
    sb().args([
        "run",
        "--duration",
        "1200ms",
        "--ramp",
        "0",
        "--bs",
        "64k",
        "--plot",
    ])
    .arg(&p)
    .arg(&a)
    .arg(&b)
    .assert()
    .success();
    let texts = svg_texts(&p);
    for t in [&a, &b] {
        let name = t.to_str().unwrap();
        assert!(texts.iter().any(|x| x == name), "latency series for {name}");
        assert!(
            texts
                .iter()
                .any(|x| x.ends_with(name) && x.starts_with('w')),
            "throughput series for {name}"
        );
    }
}

#[test]
fn sweep_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "t", 1 << 20);
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let g = data_file(shm.path(), "t", 1 << 20);
    for (args, msg) in [
        (vec!["sweep", "--param", "speed=1,2"], "unknown parameter"),
        (vec!["sweep", "--param", "bs="], "empty value"),
        (vec!["sweep", "--param", "bs=4k,zz"], "--param bs=zz"),
        (vec!["sweep", "--param", "jobs=0"], "--param jobs=0"),
        (vec!["sweep"], "at least one --param"),
        (
            vec!["sweep", "--param", "bs=4k,8k", "--param", "bs=16k"],
            "given twice",
        ),
        (
            vec![
                "sweep",
                "--param",
                "jobs=1,2,3,4,5,6,7,8,9,10,11",
                "--param",
                "bs=4k,8k,16k,32k,64k,128k,256k,512k,1m,2m",
            ],
            "more than --max-points 100",
        ),
        (vec!["sweep", "--param", "members=3"], "only 1 targets"),
    ] {
        let out = sb().args(&args).arg(&f).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(msg), "{args:?}: {err}");
    }
    let out = sb()
        .args(["sweep", "--param", "readahead=0,128", "--buffered"])
        .arg(&g)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no block device"));
}

// Regression (issue 13, item 16): `sweep --csv -` wrote nothing.
#[test]
fn sweep_csv_to_stdout_writes_a_row_per_point() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 2 << 20);
    // On the mock engine (1 ms an I/O): each point's rate is exact.
    let out = sb()
        .args([
            "sweep",
            "--debug-mock-engine",
            "1ms",
            "--param",
            "bs=64k,128k",
            "--duration",
            "100ms",
            "--ramp",
            "0",
            "--csv",
            "-",
        ])
        .arg(&t)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    common::succeeded(&out);
    let mut r = csv::Reader::from_reader(&out.stdout[..]);
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header[0], "bs");
    assert!(header.contains(&"bytes_per_sec_median".to_string()));
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let bs: Vec<&str> = rows.iter().map(|r| &r[0]).collect();
    assert_eq!(
        bs,
        ["64k", "128k"],
        "one row per point, nothing else on stdout"
    );
    let col = header
        .iter()
        .position(|h| h == "bytes_per_sec_median")
        .unwrap();
    for (row, bs) in rows.iter().zip([64u64 << 10, 128 << 10]) {
        // 99 I/Os complete before the 100 ms deadline.
        let rate: f64 = row[col].parse().unwrap();
        assert_eq!(rate, (99 * bs) as f64 / 0.1, "{row:?}");
    }
    // The table moved to stderr.
    assert!(err.contains("sweep: 2 point(s)"), "{err}");
    // Both documents cannot have stdout.
    let out = sb()
        .args(["sweep", "--param", "bs=64k", "--json", "-", "--csv", "-"])
        .arg(&t)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("both want stdout"), "{err}");
    assert!(out.stdout.is_empty());
}

// Regression (issue 21, item 7): `sweep --config configs/seed-004-members.toml`
// over three loop devices printed the direct/read row, then failed at the
// first write point with "refusing to write to block device ... pass
// --allow-destructive", exit 2. Every point is now guarded before any runs.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_sweep_guards_every_point_before_the_first_one_runs() {
    let bed = LoopBed::new(3, 16);
    let config =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/seed-004-members.toml");
    let sweep = |extra: &[&str]| {
        let out = sb()
            .arg("sweep")
            .arg("--config")
            .arg(&config)
            .args(["--no-progress", "--duration", "1s"])
            .args(extra)
            .args(&bed.devices)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = sweep(&[]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        err.contains("refusing the sweep before any point runs")
            && err.contains("point mode=direct rw=write")
            && err.contains("--allow-destructive")
            && err.contains("2 of 4 points are refused"),
        "{err}"
    );
    assert!(out.is_empty(), "no point ran, no row printed: {out}");
    // The dry run gives each point's verdict.
    let (code, out, err) = sweep(&["--dry-run"]);
    assert_eq!(code, Some(2), "{out}{err}");
    for line in [
        "point mode=direct rw=read: ok",
        "point mode=direct rw=write: REFUSED",
        "point mode=buffered rw=read: ok",
        "point mode=buffered rw=write: REFUSED",
        "2 point(s) fail",
    ] {
        assert!(out.contains(line), "expected '{line}' in: {out}");
    }
    assert!(
        out.contains("[REFUSED] refusing to write to block device"),
        "{out}"
    );
    let (code, out, err) = sweep(&["--dry-run", "--allow-destructive"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("every point passes"), "{out}");
}

// Regression (issue 21, item 8): at seed 002, point readahead=0/jobs=1
// showed 20.3 MB/s as a normal row, while "--passes 1 were not completed"
// was in the JSON and HTML only.
#[test]
fn a_points_warnings_are_marked_in_the_table_and_listed_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 8 << 20);
    // A schedule of 1 MiB/s cannot cover 8 MiB in 200 ms: the pass is cut short.
    let out = sb()
        .args([
            "sweep", "--param", "jobs=1,2", "--passes", "1", "-t", "200ms",
        ])
        .args(["--rate", "1m/s", "--bs", "64k", "--no-progress"])
        .arg(&t)
        .output()
        .unwrap();
    common::succeeded(&out);
    let table = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.trim_start().starts_with(['1', '2']))
        .collect();
    assert_eq!(rows.len(), 2, "{table}");
    for r in rows {
        assert!(r.contains("! ") && r.contains("warning(s)"), "{table}");
    }
    assert_eq!(
        table
            .lines()
            .filter(|l| l.starts_with("  warning: --passes 1 were not completed"))
            .count(),
        2,
        "{table}"
    );
}

/// The table's and the page's per-target rows: their layout is the point,
/// not the I/O, so the sweeps run on the mock engine (1 ms an I/O), where
/// each target moves exactly one block a millisecond. The device is a real
/// one all the same: its kind comes from what the target is.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn sweep_shows_each_target_when_a_file_and_a_device_run_side_by_side() {
    let bed = LoopBed::new(1, 32);
    let dev = bed.devices[0].clone();
    let file = data_file(bed.dir(), "f.dat", 8 << 20);
    let html = bed.dir().join("s.html");
    let out = sb()
        .args(["sweep", "--debug-mock-engine", "1ms"])
        .args(["--param", "bs=64k,1m", "--duration", "300ms"])
        .args(["--ramp", "0", "--no-progress", "--json", "-", "--html"])
        .arg(&html)
        .arg(&dev)
        .arg(&file)
        .output()
        .unwrap();
    common::succeeded(&out);
    let d = json(&out.stdout);
    let table = String::from_utf8_lossy(&out.stderr).to_string();
    let page = std::fs::read_to_string(&html).unwrap();
    let file = file.to_str().unwrap();
    let points = d["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{table}");
    for (p, bs) in points.iter().zip([64u64 << 10, 1 << 20]) {
        let run = &p["runs"][0];
        for (t, kind, doc_kind) in [(&dev.as_str(), "device", "block"), (&file, "file", "file")] {
            let doc = run["targets"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["path"] == **t)
                .unwrap();
            assert_eq!(doc["kind"], doc_kind, "{t}");
            // 299 I/Os complete before the 300 ms deadline.
            let rate = (299 * bs) as f64 / 0.3;
            assert_eq!(doc["bytes_per_sec"].as_f64().unwrap(), rate, "{t}");
            let mbs = format!("{:.1}", rate / 1e6);
            // Terminal: "└ device  MB/s ... path".
            assert!(
                table.lines().any(|l| l.contains(&format!("└ {kind}"))
                    && l.contains(&mbs)
                    && l.trim_end().ends_with(*t)),
                "no {kind} row with {mbs} MB/s for {t}:\n{table}"
            );
            assert!(
                page.contains(&format!("<td>└ {kind} {t}</td><td class=\"n\">{mbs}</td>")),
                "no HTML {kind} row for {t} at {mbs}"
            );
        }
    }
    assert_eq!(page.matches("<tr class=\"per-target\">").count(), 4);

    // Two files: one kind, still a row each (issue 39, item 10: seed 004's
    // members, all block devices, showed totals only).
    let other = data_file(bed.dir(), "g.dat", 8 << 20);
    let out = sb()
        .args(["sweep", "--debug-mock-engine", "1ms"])
        .args(["--param", "bs=64k,1m", "--duration", "200ms"])
        .args(["--ramp", "0", "--no-progress"])
        .arg(file)
        .arg(&other)
        .output()
        .unwrap();
    common::succeeded(&out);
    let table = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(table.contains("64k"), "{table}");
    assert_eq!(
        table.lines().filter(|l| l.contains("└ file")).count(),
        4,
        "two points, two files each:\n{table}"
    );
}

/// Regression (issue 39, item 5): seed 000's read-ahead sweep read a file
/// and a device at once; at read-ahead 256 its TOTAL of 454.9 MB/s stood
/// below the file's 790.4, with nothing saying the total was every
/// target's bytes over the shared window, and the plot drew it under a
/// part. A target that finishes its pass before the other: each point
/// gives the sum of the targets' own rates beside the total, in the
/// table, the JSON and the plot. The point is that arithmetic, so it runs
/// on the mock engine (1 ms an I/O), where a 4 MiB and a 16 MiB file end
/// exactly when their I/O counts say.
#[test]
fn targets_that_end_apart_give_their_sum_beside_the_total() {
    let dir = tempfile::tempdir().unwrap();
    let short = data_file(dir.path(), "short", 4 << 20);
    let long = data_file(dir.path(), "long", 16 << 20);
    let (j, p) = (dir.path().join("s.json"), dir.path().join("s.svg"));
    let out = sb()
        .args([
            "sweep",
            "--debug-mock-engine",
            "1ms",
            "--param",
            "bs=64k,1m",
        ])
        .args(["--passes", "1", "--ramp", "0", "--no-progress", "--json"])
        .arg(&j)
        .arg("--plot")
        .arg(&p)
        .arg(&short)
        .arg(&long)
        .output()
        .unwrap();
    common::succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let doc = json(&std::fs::read(&j).unwrap());
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{doc}");
    for (pt, bs) in points.iter().zip([64u64 << 10, 1 << 20]) {
        let run = &pt["runs"][0];
        let ios = |size: u64| size / bs;
        // The premise, exactly: each target ends after its own I/O count
        // in milliseconds, and the window is the longer one's.
        let own: Vec<f64> = run["targets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["seconds"].as_f64().unwrap())
            .collect();
        let (a, b) = (ios(4 << 20) as f64 / 1e3, ios(16 << 20) as f64 / 1e3);
        assert_eq!(own, [a, b], "{text}");
        assert_eq!(run["window"]["seconds"].as_f64().unwrap(), b, "{text}");
        // Each target moves bs a millisecond over its own time; the total
        // is every byte over the shared window.
        let sum = 2.0 * bs as f64 * 1e3;
        let total = (20u64 << 20) as f64 / b;
        let median = pt["targets_sum_bytes_per_sec_median"].as_f64().unwrap();
        assert_eq!(median, sum, "{}", pt["values"]);
        let at = pt["bytes_per_sec_median"].as_f64().unwrap();
        assert_eq!(at, total, "{}", pt["values"]);
        assert!(
            text.contains(&format!(
                "  MB/s {:.1} is every target's bytes over the shared window, not a sum of rates: the targets ended at different times; their own rates sum to {:.1} MB/s",
                total / 1e6,
                sum / 1e6
            )),
            "{text}"
        );
    }
    let texts = svg_texts(&p);
    assert!(
        texts.iter().any(|t| t == "total: bytes / shared window"),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t == "sum of the targets' own rates"),
        "{texts:?}"
    );
}
