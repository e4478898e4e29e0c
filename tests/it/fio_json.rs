//! `--fio-json`: a run in fio's own JSON output form, read by what reads
//! fio's (issue 41 item 3). The figures fio's readers take (IOPS,
//! bandwidth, latency mean and percentiles, CPU) are the run document's;
//! fio-plot (PyPI) picks our files by rw, iodepth and numjobs as it picks
//! fio's, reads the same numbers and draws them. The mock engine makes the
//! runs exact and fast; every file is in a temporary directory.

use std::path::Path;

use serde_json::Value;

use crate::common::{data_file, json, sb, succeeded};

/// A mock-engine randread run at `depth`, its run document and its fio JSON.
fn run(dir: &Path, target: &Path, depth: u32) -> (Value, Value) {
    let (doc, fio) = (
        dir.join(format!("qd{depth}.run.json")),
        dir.join(format!("qd{depth}.json")),
    );
    let out = sb()
        .args([
            "run",
            "--debug-mock-engine",
            "100us",
            "--rw",
            "randread",
            "--bs",
            "4k",
        ])
        .args([
            "--iodepth",
            &depth.to_string(),
            "-t",
            "2s",
            "--ramp",
            "0",
            "--no-progress",
        ])
        .arg("--json")
        .arg(&doc)
        .arg("--fio-json")
        .arg(&fio)
        .arg(target)
        .output()
        .unwrap();
    succeeded(&out);
    (
        json(&std::fs::read(&doc).unwrap()),
        json(&std::fs::read(&fio).unwrap()),
    )
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn fio_json_has_fio_s_shape_and_the_run_s_figures() {
    let d = tempfile::tempdir().unwrap();
    let t = data_file(d.path(), "t.dat", 8 << 20);
    let (doc, fio) = run(d.path(), &t, 4);
    for k in [
        "fio version",
        "timestamp",
        "timestamp_ms",
        "time",
        "global options",
        "jobs",
        "disk_util",
    ] {
        assert!(fio.get(k).is_some(), "no {k:?}: {fio}");
    }
    let g = &fio["global options"];
    assert_eq!(
        (g["rw"].as_str(), g["bs"].as_str(), g["iodepth"].as_str()),
        (Some("randread"), Some("4k"), Some("4"))
    );
    let jobs = fio["jobs"].as_array().unwrap();
    let workers = doc["workers"].as_array().unwrap();
    assert_eq!(jobs.len(), workers.len());
    for (j, w) in jobs.iter().zip(workers) {
        assert_eq!(j["jobname"], format!("w{}", w["id"]));
        assert_eq!(j["job options"]["numjobs"], "1");
        let (r, wr) = (&j["read"], &j["write"]);
        assert_eq!(r["total_ios"], w["ios"]);
        assert_eq!(wr["total_ios"], 0);
        assert_eq!(r["io_bytes"], w["bytes"]);
        assert!((f(&r["iops"]) - f(&w["iops"])).abs() < 1e-9, "{r}");
        assert_eq!(
            r["bw_bytes"].as_u64(),
            Some(f(&w["bytes_per_sec"]).round() as u64)
        );
        assert_eq!(
            r["bw"].as_u64(),
            Some((f(&w["bytes_per_sec"]) / 1024.0).round() as u64)
        );
        let lat = &w["latency_ns"];
        for k in ["clat_ns", "lat_ns"] {
            assert_eq!(f(&r[k]["mean"]), f(&lat["mean"]), "{k}");
            assert_eq!(r[k]["min"], lat["min"], "{k}");
            assert_eq!(r[k]["max"], lat["max"], "{k}");
            assert_eq!(r[k]["N"], w["ios"], "{k}");
        }
        let p = &r["clat_ns"]["percentile"];
        assert_eq!(p["50.000000"], lat["p50"]);
        assert_eq!(p["99.000000"], lat["p99"]);
        assert_eq!(p["99.900000"], lat["p99_9"]);
        assert_eq!(p.as_object().unwrap().len(), 17, "fio's default list");
        // Every I/O in one of fio's latency buckets.
        let sum: f64 = ["latency_ns", "latency_us", "latency_ms"]
            .iter()
            .flat_map(|k| j[*k].as_object().unwrap().values())
            .map(f)
            .sum();
        assert!((sum - 100.0).abs() < 1e-6, "buckets add to {sum}");
        assert!((f(&j["usr_cpu"]) - 100.0 * f(&w["cpu_usr_sec"]) / f(&w["seconds"])).abs() < 1e-9);
    }
    // What differs from fio's own is said.
    assert!(fio["stripebench"]["notes"].as_array().unwrap().len() >= 3);
}

// fio-plot reads a directory of fio JSON files: it picks ours by rw,
// iodepth and numjobs, reads their IOPS and mean latency (the figures it
// draws), and draws the chart.
#[test]
#[cfg_attr(
    not(sb_fio_plot),
    ignore = "fio-plot (PyPI) is not installed: python3 -m pip install fio-plot"
)]
fn fio_plot_reads_and_draws_our_fio_json() {
    let d = tempfile::tempdir().unwrap();
    let t = data_file(d.path(), "t.dat", 8 << 20);
    let files = d.path().join("fio");
    std::fs::create_dir(&files).unwrap();
    let mut ours = Vec::new();
    for depth in [1, 4, 16] {
        let (doc, _) = run(&files, &t, depth);
        ours.push((
            depth,
            f(&doc["total"]["iops"]),
            f(&doc["total"]["latency_ns"]["mean"]),
        ));
    }
    // Only fio's form in the directory fio-plot reads.
    for e in std::fs::read_dir(&files).unwrap() {
        let p = e.unwrap().path();
        if p.to_string_lossy().ends_with(".run.json") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let png = d.path().join("chart.png");
    let args = [
        "-i",
        files.to_str().unwrap(),
        "-T",
        "stripebench",
        "-l",
        "-r",
        "randread",
        "-d",
        "1",
        "4",
        "16",
        "-n",
        "1",
        "-o",
        png.to_str().unwrap(),
    ];
    // Its own reading of our files, through its data functions.
    let read = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, json\n\
             sys.argv = ['fio-plot'] + sys.argv[1:]\n\
             import fio_plot\n\
             from fio_plot.fiolib import getdata\n\
             _, s = fio_plot.get_settings()\n\
             r = getdata.get_routing_dict()\n\
             s = getdata.configure_default_settings(s, r, s['graphtype'])\n\
             data = r[s['graphtype']]['get_data'](s)\n\
             print(json.dumps([{'iodepth': int(x['iodepth']), 'iops': float(x['iops']), 'lat': float(x['lat'])} for d in data for x in d['data']]))",
        )
        .args(args)
        .output()
        .unwrap();
    succeeded(&read);
    let seen = json(&read.stdout);
    let seen = seen.as_array().unwrap();
    assert_eq!(seen.len(), 3, "{seen:?}");
    for (depth, iops, lat) in ours {
        let s = seen
            .iter()
            .find(|s| s["iodepth"] == depth)
            .unwrap_or_else(|| panic!("fio-plot did not pick iodepth {depth}: {seen:?}"));
        assert!(
            (f(&s["iops"]) - iops).abs() < 1e-6 * iops,
            "iodepth {depth}: {s} against {iops}"
        );
        assert!(
            (f(&s["lat"]) - lat).abs() < 1e-6 * lat,
            "iodepth {depth}: {s} against {lat}"
        );
    }
    // And it draws them.
    let drawn = std::process::Command::new("fio-plot")
        .args(args)
        .output()
        .unwrap();
    succeeded(&drawn);
    assert!(std::fs::metadata(&png).unwrap().len() > 10_000, "no chart");
}
