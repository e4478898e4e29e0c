//! What writes leave on the target: unique blocks (a deduplicating or
//! compressing device must not be flattered), the compressibility and
//! repeated share asked for, and randrw writing its own data rather than
//! what its reads left in the buffer.

use crate::common;

use std::collections::HashMap;
use std::path::Path;

use crate::common::{run_json, u};

const UNIT: usize = 4096;

fn zeroed_file(dir: &Path, name: &str, size: u64) -> String {
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().set_len(size).unwrap();
    p.to_str().unwrap().to_string()
}

fn blocks(path: &str) -> Vec<Vec<u8>> {
    std::fs::read(path)
        .unwrap()
        .chunks(UNIT)
        .map(<[u8]>::to_vec)
        .collect()
}

/// (blocks that are not all zeros, how many distinct contents they hold).
fn written_and_distinct(path: &str) -> (usize, usize) {
    let mut counts: HashMap<Vec<u8>, usize> = HashMap::new();
    for b in blocks(path)
        .into_iter()
        .filter(|b| b.iter().any(|&x| x != 0))
    {
        *counts.entry(b).or_default() += 1;
    }
    (counts.values().sum(), counts.len())
}

#[test]
#[cfg_attr(
    not(sb_uring),
    ignore = "needs io_uring (one case uses --engine uring)"
)]
fn written_blocks_are_unique_per_block() {
    let dir = tempfile::tempdir().unwrap();
    for (rw, bs, engine) in [
        ("write", "4k", "sync"),
        ("write", "1m", "sync"),
        ("randwrite", "4k", "sync"),
        ("randwrite", "64k", "uring"),
    ] {
        let f = zeroed_file(dir.path(), &format!("{rw}-{bs}"), 16 << 20);
        let d = run_json(&[
            "run",
            "--rw",
            rw,
            "--bs",
            bs,
            "--engine",
            engine,
            "--iodepth",
            if engine == "uring" { "4" } else { "1" },
            "--io-limit",
            "16m",
            "--allow-destructive",
            "--no-progress",
            &f,
        ]);
        assert_eq!(u(&d["total"]["bytes"]), 16 << 20);
        assert_eq!(u(&d["config"]["dedupe_pct"]), 0);
        assert_eq!(u(&d["config"]["buffer_compress_pct"]), 0);
        let (written, distinct) = written_and_distinct(&f);
        if rw == "write" {
            assert_eq!(written, 4096, "{rw} {bs}: every block written");
        } else {
            assert!(written > 1000, "{rw} {bs}: {written} blocks written");
        }
        assert_eq!(
            distinct, written,
            "{rw} --bs {bs}: {written} blocks written, {distinct} distinct"
        );
    }
}

#[test]
fn dedupe_repeats_about_the_share_asked() {
    let dir = tempfile::tempdir().unwrap();
    let f = zeroed_file(dir.path(), "dedupe", 16 << 20);
    let d = run_json(&[
        "run",
        "--rw",
        "write",
        "--bs",
        "4k",
        "--dedupe",
        "50",
        "--io-limit",
        "16m",
        "--allow-destructive",
        "--no-progress",
        &f,
    ]);
    assert_eq!(u(&d["config"]["dedupe_pct"]), 50);
    let mut counts: HashMap<Vec<u8>, usize> = HashMap::new();
    for b in blocks(&f) {
        *counts.entry(b).or_default() += 1;
    }
    let repeated: usize = counts.values().filter(|&&n| n > 1).sum();
    let share = repeated as f64 / 4096.0;
    assert!(
        (0.44..0.56).contains(&share),
        "--dedupe 50: {repeated} of 4096 blocks repeated ({} distinct)",
        counts.len()
    );
}

#[test]
fn buffer_compress_zeroes_the_share_asked() {
    let dir = tempfile::tempdir().unwrap();
    for pct in [0u64, 50, 90] {
        let f = zeroed_file(dir.path(), &format!("c{pct}"), 8 << 20);
        let d = run_json(&[
            "run",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--buffer-compress",
            &pct.to_string(),
            "--io-limit",
            "8m",
            "--allow-destructive",
            "--no-progress",
            &f,
        ]);
        assert_eq!(u(&d["config"]["buffer_compress_pct"]), pct);
        let data = std::fs::read(&f).unwrap();
        let zeros = data.iter().filter(|&&b| b == 0).count() as f64 / data.len() as f64;
        assert!(
            (zeros - pct as f64 / 100.0).abs() < 0.02,
            "--buffer-compress {pct}: {zeros:.3} of the bytes are zeros"
        );
        let (written, distinct) = written_and_distinct(&f);
        assert_eq!((written, distinct), (2048, 2048), "--buffer-compress {pct}");
    }
}

#[test]
#[cfg_attr(
    not(sb_uring),
    ignore = "needs io_uring (one case uses --engine uring)"
)]
fn randrw_writes_its_own_data_not_what_it_read() {
    let dir = tempfile::tempdir().unwrap();
    for engine in ["sync", "uring"] {
        let f = zeroed_file(dir.path(), &format!("rw-{engine}"), 8 << 20);
        let d = run_json(&[
            "run",
            "--rw",
            "randrw",
            "--bs",
            "4k",
            "--engine",
            engine,
            "--iodepth",
            if engine == "uring" { "8" } else { "1" },
            "--io-limit",
            "8m",
            "--allow-destructive",
            // Its reads start on a sparse file: what matters here is what it writes.
            "--allow-holes",
            "--no-progress",
            &f,
        ]);
        assert!(u(&d["total"]["bytes"]) > 0);
        let write_ios = u(&d["workers"][0]["write_ios"]);
        assert!(write_ios > 100, "{engine}: {write_ios} writes");
        let mut stamped = 0;
        for (i, b) in blocks(&f).iter().enumerate() {
            if b.iter().all(|&x| x == 0) {
                continue;
            }
            // Every written block carries the stamp of where it was written.
            let at = u64::from_le_bytes(b[..8].try_into().unwrap());
            assert_eq!(at, (i * UNIT) as u64, "{engine}: block {i}");
            // And random data after the stamp, not the zeros a read brought in.
            let random = b[32..].iter().filter(|&&x| x != 0).count();
            assert!(
                random > (UNIT - 32) * 9 / 10,
                "{engine}: block {i}: {random} non-zero bytes"
            );
            stamped += 1;
        }
        assert!(
            stamped > 100,
            "{engine}: {stamped} blocks hold written data after {write_ios} writes"
        );
    }
}

/// How many bytes `tool ARGS` makes of `path`'s contents (compressed to stdout).
fn compressed_len(tool: &str, args: &[&str], path: &str) -> usize {
    let out = std::process::Command::new(tool)
        .args(args)
        .args(["-c", path])
        .output()
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    common::succeeded_as(&out, format_args!("{tool} {args:?}"));
    out.stdout.len()
}

/// Regression: each 4 KiB unit was stamped in its first 32 bytes and the
/// rest of the buffer was the same in every write, so after
/// `--rw write --passes 1 --bs 1m` 112,896 of 131,072 512-byte sectors
/// repeated and 16 MiB compressed to 1.85 MB with `zstd -3`: an array that
/// deduplicates at 512 bytes, or a compressor with a long window, was
/// flattered. Every sector written is now unique and the data incompressible.
#[test]
#[cfg_attr(
    not(all(sb_compressors, sb_uring)),
    ignore = "needs zstd and lz4 (and io_uring for one case)"
)]
fn written_sectors_are_unique_and_incompressible() {
    common::require(
        std::process::Command::new("zstd")
            .arg("--version")
            .output()
            .is_ok(),
        "zstd",
    );
    common::require(
        std::process::Command::new("lz4")
            .arg("--version")
            .output()
            .is_ok(),
        "lz4",
    );
    let dir = tempfile::tempdir().unwrap();
    for (rw, bs, engine, depth) in [
        ("write", "1m", "sync", "1"),
        ("write", "4k", "sync", "1"),
        ("randwrite", "64k", "uring", "4"),
    ] {
        let f = zeroed_file(dir.path(), &format!("{rw}-{bs}"), 16 << 20);
        let mut args = vec![
            "run",
            "--rw",
            rw,
            "--bs",
            bs,
            "--engine",
            engine,
            "--iodepth",
            depth,
            "--allow-destructive",
            "--no-progress",
        ];
        if rw == "write" {
            args.extend(["--passes", "1"]);
        } else {
            args.extend(["--io-limit", "16m"]);
        }
        args.push(&f);
        let d = run_json(&args);
        assert_eq!(u(&d["total"]["bytes"]), 16 << 20, "{rw} {bs}");
        let data = std::fs::read(&f).unwrap();
        let mut seen: HashMap<&[u8], usize> = HashMap::new();
        let mut written = 0usize;
        for s in data.chunks(512).filter(|s| s.iter().any(|&b| b != 0)) {
            *seen.entry(s).or_default() += 1;
            written += 1;
        }
        if rw == "write" {
            assert_eq!(written, 32768, "{rw} --bs {bs}: every sector written");
        }
        let repeats: usize = seen.values().filter(|&&n| n > 1).sum();
        assert_eq!(
            repeats, 0,
            "{rw} --bs {bs}: {repeats} of {written} written 512-byte sectors repeat"
        );
        if rw != "write" {
            continue;
        }
        // zstd -19 is slow: it reads the first 3 MiB (three rounds of the
        // 1 MiB buffer that used to repeat); the other levels read it all.
        let prefix = dir.path().join("prefix");
        std::fs::write(&prefix, &data[..3 << 20]).unwrap();
        let prefix = prefix.to_str().unwrap();
        for (tool, how, path, len) in [
            ("zstd", &["-1"][..], f.as_str(), data.len()),
            ("zstd", &["-3"], &f, data.len()),
            ("zstd", &["-9"], &f, data.len()),
            ("zstd", &["-3", "--long=27"], &f, data.len()),
            ("zstd", &["-19", "--long=27"], prefix, 3 << 20),
            ("lz4", &["-1"], &f, data.len()),
            ("lz4", &["-9"], &f, data.len()),
        ] {
            // Only the 40-byte headers (offsets, sequence numbers) compress.
            let n = compressed_len(tool, how, path);
            assert!(
                n >= len * 99 / 100,
                "{rw} --bs {bs}: {tool} {how:?} made {n} bytes of {len}"
            );
        }
    }
}

/// Distinct 4 KiB blocks over `paths` together, as a share of all of
/// them (fio's t/fio-dedupe counts so).
fn distinct_share(paths: &[&Path]) -> f64 {
    let mut counts: HashMap<Vec<u8>, usize> = HashMap::new();
    for p in paths {
        for b in blocks(p.to_str().unwrap()) {
            *counts.entry(b).or_default() += 1;
        }
    }
    counts.len() as f64 / counts.values().sum::<usize>() as f64
}

/// fio's examples/dedupe-global.fio, as fio ships it, on two files of
/// 16 MiB: fio (3.33, 100 MiB each) leaves 0.657 and 0.664 of each file's
/// blocks distinct and 0.503 of both together, the working set shared.
/// Before dedupe_mode=working_set was honoured the job was refused.
#[test]
fn fio_s_dedupe_global_example_shares_its_working_set_over_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let job = "[global]\nioengine=libaio\niodepth=256\nsize=16m\ndedupe_mode=working_set\ndedupe_global=1\ndedupe_percentage=50\nblocksize=4k\nrw=write\nbuffer_compress_percentage=50\ndedupe_working_set_percentage=50\n\n[a]\n\n[b]\n";
    std::fs::write(dir.path().join("dg.fio"), job).unwrap();
    let out = common::sb()
        .current_dir(dir.path())
        .args([
            "run",
            "--fio-job",
            "dg.fio",
            "--no-progress",
            "--json",
            "r.json",
        ])
        .args(["--create", "16m", "a.0.0", "b.0.0"])
        .output()
        .unwrap();
    common::succeeded_as(&out, "dedupe-global.fio");
    let d = common::json(&std::fs::read(dir.path().join("r.json")).unwrap());
    assert_eq!(d["config"]["dedupe_working_set_pct"], 50);
    assert_eq!(d["config"]["dedupe_global"], true);
    let (a, b) = (dir.path().join("a.0.0"), dir.path().join("b.0.0"));
    for f in [&a, &b] {
        let s = distinct_share(&[f]);
        assert!((0.6..0.78).contains(&s), "{f:?}: {s:.3} distinct");
    }
    let both = distinct_share(&[&a, &b]);
    assert!(
        (0.47..0.53).contains(&both),
        "both files: {both:.3} distinct"
    );
    // Each repeat is a member some worker wrote: without the shared set,
    // the two files would share nothing.
    let own = common::sb()
        .current_dir(dir.path())
        .args(["run", "--rw", "write", "--bs", "4k", "--dedupe", "50"])
        .args([
            "--dedupe-working-set",
            "50",
            "--allow-destructive",
            "--no-progress",
        ])
        .args(["--passes", "1", "a.0.0", "b.0.0"])
        .output()
        .unwrap();
    common::succeeded_as(&own, "--dedupe-working-set without --dedupe-global");
    let both = distinct_share(&[&a, &b]);
    let one = distinct_share(&[&a]);
    assert!(
        (both - one).abs() < 0.03,
        "apart, both {both:.3} and one {one:.3} distinct"
    );
}

/// The command line and fio's job keys agree on an empty working set, and
/// a working set with no repeats to copy is said, not run (a hostile
/// review found `--dedupe-working-set 0` ran a set of one unit, and
/// `--dedupe 0` with it ran silently).
#[test]
fn a_working_set_that_is_empty_or_has_nothing_to_copy_is_refused() {
    common::refused(
        &[
            "run",
            "--rw",
            "write",
            "--dedupe",
            "50",
            "--dedupe-working-set",
            "0",
        ],
        "--dedupe-working-set 0 leaves the working set empty",
    );
    common::refused(
        &[
            "run",
            "--rw",
            "write",
            "--dedupe",
            "0",
            "--dedupe-working-set",
            "50",
        ],
        "with --dedupe 0: no unit repeats",
    );
}
