//! Reads that never reached a medium pass as device speed no more (issue
//! 39, item 2): a loop device over a sparse file and a never-written zram
//! are refused before the run by the layer under them; a device that
//! answers with zeros where no layer is seen (a loop device over a
//! never-written zram, as a thin volume's unprovisioned blocks) is caught by the sample of what reads
//! return and fails the run unless `--allow-holes`; a loop device over a
//! file of written zeros passes its layer check, and the sample says the
//! zeros were stored.

use std::path::Path;

use crate::common::{json, sb, u, Loop, Zram};

/// A run of `args`. The reads that need sampling are counted
/// (`--io-limit 8m --bs 4k`: 2048 reads, 32 of them sampled) rather than
/// timed: on a loaded machine 300 ms may hold a handful.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = sb().arg("run").args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn warnings(doc: &serde_json::Value) -> Vec<String> {
    doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| crate::common::warning_text(w).unwrap().to_string())
        .collect()
}

/// A file of `size` bytes: a hole, or written whole with `byte`.
fn file(dir: &Path, name: &str, size: usize, byte: Option<u8>) -> std::path::PathBuf {
    let p = dir.join(name);
    match byte {
        None => std::fs::File::create(&p)
            .unwrap()
            .set_len(size as u64)
            .unwrap(),
        Some(b) => std::fs::write(&p, vec![b; size]).unwrap(),
    }
    p
}

// Regression: `truncate -s 512M f; losetup -f --show --direct-io=on f;
// run -t 1s --ramp 0 /dev/loopN` printed 40912 MB/s, device ratio 1.000,
// no warning, exit 0.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_loop_device_over_a_sparse_file_is_refused_not_read_at_memory_speed() {
    let dir = tempfile::tempdir().unwrap();
    let f = file(dir.path(), "sparse.img", 64 << 20, None);
    let l = Loop::attach(&f, &[]);
    let (code, _, err) = run(&["-t", "300ms", "--ramp", "0", &l.dev]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    for part in [
        &format!("refusing to read {}", l.dev)[..],
        "64.0 MiB of its 64.0 MiB region (100.0%) are holes (never written)",
        &format!("its backing file {}", f.display()),
        "--allow-holes",
    ] {
        assert!(err.contains(part), "no {part:?} in: {err}");
    }
    // Read anyway: both checks say so beside the figure, and the run,
    // accepted, exits 0.
    let (code, out, err) = run(&[
        "-t",
        "60s",
        "--io-limit",
        "8m",
        "--ramp",
        "0",
        "--bs",
        "4k",
        "--allow-holes",
        "--json",
        "-",
        &l.dev,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let doc = json(out.as_bytes());
    let w = warnings(&doc);
    assert!(
        w.iter()
            .any(|w| w.contains("(100.0%) are holes (never written) in its backing file")),
        "{w:?}"
    );
    let (sampled, zeros) = (
        u(&doc["total"]["sampled_reads"]),
        u(&doc["total"]["zero_reads"]),
    );
    assert!(sampled >= 16, "sampled {sampled}");
    assert_eq!(zeros, sampled);
    assert_eq!(u(&doc["workers"][0]["sampled_reads"]), sampled);
    assert!(
        w.iter()
            .any(|w| w.contains("100% of sampled reads") && w.contains("returned only zeros")),
        "{w:?}"
    );
}

// Regression: a never-written zram device read at 34.3 GB/s, no warning.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: zram devices")]
fn a_never_written_zram_is_refused_not_read_at_memory_speed() {
    let z = Zram::unwritten(64);
    let (code, _, err) = run(&["-t", "300ms", "--ramp", "0", &z.dev]);
    assert_eq!(code, Some(2), "{err}");
    for part in [
        &format!("refusing to read {}", z.dev)[..],
        "(100.0%) are pages that hold no data",
        "64.0 MiB never written",
        "in zram",
        "--allow-holes",
    ] {
        assert!(err.contains(part), "no {part:?} in: {err}");
    }
    // Written with data, it is read.
    drop(z);
    let z = Zram::new(16);
    let (code, out, err) = run(&[
        "-t",
        "60s",
        "--io-limit",
        "8m",
        "--ramp",
        "0",
        "--bs",
        "4k",
        "--json",
        "-",
        &z.dev,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let doc = json(out.as_bytes());
    assert!(u(&doc["total"]["sampled_reads"]) >= 16, "{}", doc["total"]);
    assert_eq!(u(&doc["total"]["zero_reads"]), 0);
}

// What no layer check sees (a thin volume's unprovisioned blocks, an
// SSD's deallocated ones; here a loop device over a never-written zram,
// whose layer check stops at the loop's backing device) the sample does:
// mostly zeros fails the run.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: zram and loop devices")]
fn a_device_that_answers_every_read_with_zeros_fails_the_run_unless_allowed() {
    let z = Zram::unwritten(64);
    let l = Loop::attach(Path::new(&z.dev), &[]);
    let (code, out, err) = run(&[
        "-t",
        "60s",
        "--io-limit",
        "8m",
        "--ramp",
        "0",
        "--bs",
        "4k",
        "--json",
        "-",
        &l.dev,
    ]);
    assert_eq!(code, Some(4), "{err}");
    assert!(
        err.contains("returned mostly zeros") && err.contains("--allow-holes"),
        "{err}"
    );
    let doc = json(out.as_bytes());
    let w = warnings(&doc);
    assert!(
        w.iter().any(|w| w.contains("100% of sampled reads")
            && w.contains("the device answered without reading media: unwritten, trimmed or thin-provisioned blocks")),
        "{w:?}"
    );
    let (code, _, err) = run(&[
        "-t",
        "60s",
        "--io-limit",
        "8m",
        "--ramp",
        "0",
        "--bs",
        "4k",
        "--allow-holes",
        &l.dev,
    ]);
    assert_eq!(code, Some(0), "{err}");
}

// A loop device over written zeros: the layer check passes (the data is
// written) and is authoritative; the sample still says what it saw.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_loop_device_over_written_zeros_reads_and_says_the_zeros_were_stored() {
    let dir = tempfile::tempdir().unwrap();
    let f = file(dir.path(), "zeros.img", 32 << 20, Some(0));
    let l = Loop::attach(&f, &[]);
    let (code, out, err) = run(&[
        "-t",
        "60s",
        "--io-limit",
        "8m",
        "--ramp",
        "0",
        "--bs",
        "4k",
        "--json",
        "-",
        &l.dev,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let w = warnings(&json(out.as_bytes()));
    assert!(
        w.iter().any(|w| w.contains("returned only zeros")
            && w.contains(&format!(
                "its backing file {} holds the region as written data",
                f.display()
            ))),
        "{w:?}"
    );
    // A file of data: nothing said.
    let g = file(dir.path(), "data.img", 32 << 20, Some(0x5a));
    let m = Loop::attach(&g, &[]);
    let (code, out, err) = run(&[
        "-t",
        "60s",
        "--io-limit",
        "8m",
        "--ramp",
        "0",
        "--bs",
        "4k",
        "--json",
        "-",
        &m.dev,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let doc = json(out.as_bytes());
    // Sampled (the first read is), none zeros.
    assert!(u(&doc["total"]["sampled_reads"]) >= 1, "{}", doc["total"]);
    assert_eq!(u(&doc["total"]["zero_reads"]), 0);
    assert!(
        !warnings(&doc).iter().any(|w| w.contains("zeros")),
        "{:?}",
        warnings(&doc)
    );
}
