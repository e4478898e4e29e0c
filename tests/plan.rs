//! Capacity planning on a real members sweep over loop devices, and the
//! refusals when the result has no scaling curve to fit.

mod common;

use common::{data_file, json, sb, LoopBed};

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn plan_fits_a_real_members_sweep() {
    let bed = LoopBed::new(3, 32);
    let sweep = bed.dir().join("members.json");
    sb().args([
        "sweep",
        "--param",
        "members=1,2,3",
        "--bs",
        "256k",
        "--duration",
        "400ms",
        "--ramp",
        "0",
        "--json",
    ])
    .arg(&sweep)
    .args(&bed.devices)
    .assert()
    .success();
    let svg = bed.dir().join("plan.svg");
    let out = sb()
        .arg("plan")
        .arg(&sweep)
        .args([
            "--at", "8,16", "--target", "100GB/s", "--json", "-", "--plot",
        ])
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p = json(&out.stdout);
    println!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(p["fit"]["lambda"].as_f64().unwrap() > 0.0);
    assert_eq!(p["points"].as_array().unwrap().len(), 3);
    assert_eq!(p["predictions"].as_array().unwrap().len(), 2);
    assert!(p["target"]["note"].as_str().is_some());
    roxmltree::Document::parse(&std::fs::read_to_string(&svg).unwrap()).expect("well-formed SVG");
}

#[test]
fn plan_refuses_results_without_a_curve() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 2 << 20);
    let bs_sweep = dir.path().join("bs.json");
    sb().args([
        "sweep",
        "--param",
        "bs=64k,128k,256k",
        "--duration",
        "200ms",
        "--ramp",
        "0",
        "--json",
    ])
    .arg(&bs_sweep)
    .arg(&t)
    .assert()
    .success();
    let out = sb().arg("plan").arg(&bs_sweep).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("members or jobs"));
    let jobs = dir.path().join("jobs.json");
    sb().args([
        "sweep",
        "--param",
        "jobs=1,2",
        "--duration",
        "200ms",
        "--ramp",
        "0",
        "--json",
    ])
    .arg(&jobs)
    .arg(&t)
    .assert()
    .success();
    let out = sb().arg("plan").arg(&jobs).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("at least 3 distinct N"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = sb()
        .args(["plan", "--target", "fast"])
        .arg(&jobs)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
