//! `stripebench fio [fio options] FILE... [-- run options]`: fio's
//! command line with job files, read as fio's init.c reads it. What each
//! test expects is what fio 3.33 did with the same command line and files
//! (its json's total_ios for a 1 MiB read): `fio --bs=8k FILE` reads in
//! 8 KiB blocks unless FILE's `[global]` or job sets bs= (the file wins);
//! a second job file starts from fio's defaults again, after the first
//! ends; `--section=NAME` runs only the sections named. Every file is in
//! a temporary directory; the runs are dry runs.

use crate::common::{data_file, sb, succeeded_as};

/// The `stripebench run ...` lines printed, and the `#` heads.
fn said(args: &[&str], dir: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let out = sb()
        .arg("fio")
        .args(args)
        .args(["--", "--dry-run"])
        .current_dir(dir)
        .output()
        .unwrap();
    succeeded_as(&out, format!("stripebench fio {}", args.join(" ")));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let pick = |p: &str| {
        err.lines()
            .filter(|l| l.starts_with(p))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    (pick("stripebench run "), pick("# "))
}

/// A directory with a 1 MiB data file and job files reading it: `bs4k`
/// (its `[global]` sets bs=4k), `plain` (no bs=), `three` ([a] [b] [c],
/// each after the one before).
fn files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    data_file(dir.path(), "data", 1 << 20);
    let job = "filename=data\nsize=1M\nioengine=psync\n";
    std::fs::write(
        dir.path().join("bs4k.fio"),
        format!("[global]\nbs=4k\n[j]\nrw=read\n{job}"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("plain.fio"),
        format!("[j2]\nrw=read\n{job}"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("three.fio"),
        format!(
            "[global]\n{job}[a]\nrw=read\n[b]\nrw=write\nstonewall\n[c]\nrw=randread\nstonewall\n"
        ),
    )
    .unwrap();
    dir
}

#[test]
fn fio_options_before_a_job_file_are_its_defaults_and_the_file_overrides_them() {
    let dir = files();
    // fio 3.33: `fio --bs=8k plain.fio` reads 128 I/Os; its iodepth too.
    let (cmds, _) = said(&["--bs=8k", "--rw=write", "plain.fio"], dir.path());
    assert_eq!(cmds.len(), 1, "{cmds:?}");
    assert!(
        cmds[0].contains("--rw=read") && cmds[0].contains("--bs=8k"),
        "{cmds:?}"
    );
    // fio 3.33: `fio --bs=8k bs4k.fio` reads 256 (its [global] bs=4k wins);
    // and the reverse, `--bs=4k` over a job's bs=8k, reads 128.
    let (cmds, _) = said(&["--bs=8k", "bs4k.fio"], dir.path());
    assert!(cmds[0].contains("--bs=4k"), "{cmds:?}");
    // After the file too (fio's getopt moves the file names last).
    let (cmds, _) = said(&["plain.fio", "--bs=16k"], dir.path());
    assert!(cmds[0].contains("--bs=16k"), "{cmds:?}");
}

#[test]
fn fio_a_second_job_file_starts_from_fio_s_defaults_after_the_first_ends() {
    let dir = files();
    // fio 3.33: `fio --bs=8k plain.fio plain.fio`: 128 I/Os, then 256.
    let (cmds, heads) = said(&["--bs=8k", "plain.fio", "plain.fio"], dir.path());
    assert_eq!(cmds.len(), 2, "{cmds:?}");
    assert!(cmds[0].contains("--bs=8k"), "{cmds:?}");
    assert!(!cmds[1].contains("--bs=8k"), "{cmds:?}");
    assert!(
        heads
            .iter()
            .any(|h| h.contains("run 2 of 2") && h.contains("stonewall")),
        "{heads:?}"
    );
}

#[test]
fn fio_section_runs_only_the_sections_named() {
    let dir = files();
    let (cmds, heads) = said(&["--section=a", "--section=c", "three.fio"], dir.path());
    assert_eq!(cmds.len(), 2, "{cmds:?}");
    assert!(
        cmds[0].contains("--rw=read") && cmds[1].contains("--rw=randread"),
        "{cmds:?}"
    );
    assert!(!heads.iter().any(|h| h.contains("[b]")), "{heads:?}");
    // A --name that --section does not name is skipped, and the options
    // after it are the defaults (fio 3.33: [c] alone, 128 I/Os).
    let (cmds, _) = said(
        &["--section=c", "--name=x", "--bs=8k", "three.fio"],
        dir.path(),
    );
    assert_eq!(cmds.len(), 1, "{cmds:?}");
    assert!(
        cmds[0].contains("--rw=randread") && cmds[0].contains("--bs=8k"),
        "{cmds:?}"
    );
    for (args, says) in [
        (&["--section=zz", "three.fio"][..], "no [zz] in three.fio"),
        (&["--section=global", "three.fio"][..], "`--section=global`"),
    ] {
        let out = sb()
            .arg("fio")
            .args(args)
            .arg("--")
            .arg("--dry-run")
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(says) && err.lines().count() == 1, "{err}");
    }
}

/// Each job's read I/Os, in the order they ran: fio's (its json) for
/// `fio ARGS`, and stripebench's (its documents) for `stripebench fio
/// ARGS`, both run for real in `dir`.
fn ios_of_both(args: &[&str], dir: &std::path::Path) -> (Vec<u64>, Vec<u64>) {
    let out = std::process::Command::new(crate::common::tool("fio"))
        .args(args)
        .arg("--output-format=json")
        .current_dir(dir)
        .output()
        .unwrap();
    succeeded_as(&out, format!("fio {}", args.join(" ")));
    let s = String::from_utf8(out.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(&s[s.find('{').expect(&s)..]).unwrap();
    let fio = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["read"]["total_ios"].as_u64().unwrap())
        .collect();
    for f in std::fs::read_dir(dir).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_some_and(|e| e == "json") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let out = sb()
        .arg("fio")
        .args(args)
        .args(["--", "--no-progress", "--json", "r.json"])
        .current_dir(dir)
        .output()
        .unwrap();
    succeeded_as(&out, format!("stripebench fio {}", args.join(" ")));
    let mut docs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    docs.sort();
    let ours = docs
        .iter()
        .map(|p| {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
            v["workers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w["read_ios"].as_u64().unwrap())
                .sum()
        })
        .collect();
    (fio, ours)
}

#[test]
#[cfg_attr(not(sb_fio), ignore = "needs fio (Debian package fio)")]
fn fio_options_before_job_files_and_section_read_as_fio_reads_them() {
    let dir = files();
    for args in [
        &["--bs=8k", "plain.fio"][..],
        &["--bs=8k", "bs4k.fio"][..],
        &["--bs=8k", "plain.fio", "bs4k.fio"][..],
        &["plain.fio", "--bs=16k", "plain.fio"][..],
        &["--section=c", "--name=x", "--bs=8k", "three.fio"][..],
    ] {
        let (fio, ours) = ios_of_both(args, dir.path());
        assert_eq!(fio, ours, "fio {}: fio's I/Os, then ours", args.join(" "));
    }
}
