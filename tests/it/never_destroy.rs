//! Regression tests for the ways a hostile test destroyed data around the
//! write guard (issue "never destroy, take two", items 1-4): report paths
//! that land on targets, devices or each other; a second loop device over the
//! image of a mounted one; consent from a config file; overlapping targets.
//! Every case checksums the data before and after.

use crate::common;

use std::path::Path;

use crate::common::{digest, digest_bytes, mount, refused, sb, sh, Loop, Mounted};

/// A file of `mb` MiB of non-zero data.
fn image(dir: &Path, name: &str, mb: usize) -> std::path::PathBuf {
    common::data_file(dir, name, mb << 20)
}

/// An ext4 image, mounted read-only through a loop device (read-only, so the
/// file system itself writes nothing and the checksum only moves if we do).
fn mounted_ext4(img: &Path, at: &Path, extra: &[&str]) -> (Loop, Mounted) {
    let l = Loop::attach(img, extra);
    common::sh_required("mkfs.ext4", &["-q", "-F", "-E", "nodiscard", &l.dev]);
    let m = mount(&["-o", "ro", &l.dev], at);
    (l, m)
}

#[test]
fn report_output_on_the_target_file_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let t = image(d.path(), "f2.dat", 4);
    let link = d.path().join("hard.dat");
    std::fs::hard_link(&t, &link).unwrap();
    let sym = d.path().join("sym.dat");
    std::os::unix::fs::symlink(&t, &sym).unwrap();
    let before = digest(t.to_str().unwrap());
    let ts = t.to_str().unwrap();
    for out in [ts, link.to_str().unwrap()] {
        for opt in ["--json", "--csv", "--plot"] {
            let out = if opt == "--plot" {
                // A plot must be .svg: the same file under that name.
                let p = d.path().join("f2.svg");
                let _ = std::fs::hard_link(&t, &p);
                p.to_str().unwrap().to_string()
            } else {
                out.to_string()
            };
            refused(&["run", ts, opt, &out], "a target (or behind one)");
        }
    }
    // A link is not followed, whatever it points to (tests/it/hostile_outputs.rs).
    for opt in ["--json", "--csv"] {
        refused(
            &["run", ts, opt, sym.to_str().unwrap()],
            "is a symbolic link",
        );
    }
    assert_eq!(digest(ts), before, "the target is as it was");
}

#[test]
fn report_output_on_a_device_fifo_or_directory_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let t = image(d.path(), "t.dat", 2);
    let ts = t.to_str().unwrap();
    refused(&["run", ts, "--json", "/dev/full"], "character device");
    refused(&["run", ts, "--csv", "/dev/null"], "character device");
    refused(
        &["run", ts, "--json", d.path().to_str().unwrap()],
        "is a directory",
    );
    refused(&["run", ts, "--json", "/proc/version"], "/proc/version");
    refused(
        &["run", ts, "--json", "/no/such/dir/x.json"],
        "does not exist",
    );
    let fifo = d.path().join("fifo");
    assert!(sh("mkfifo", &[fifo.to_str().unwrap()]));
    refused(
        &["run", ts, "--json", fifo.to_str().unwrap()],
        "not a regular file",
    );
    // Every subcommand that writes reports checks them the same way.
    refused(
        &[
            "sweep",
            "--param",
            "bs=4k",
            ts,
            "--json",
            d.path().to_str().unwrap(),
        ],
        "is a directory",
    );
    refused(&["plan", ts, "--json", "/dev/full"], "character device");
    refused(&["merge", ts, "--json", ts], "an input of this command");
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn report_output_on_a_block_device_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let img = image(d.path(), "dev.img", 8);
    let l = Loop::attach(&img, &[]);
    let t = image(d.path(), "t.dat", 2);
    let before = digest(&l.dev);
    refused(
        &["run", t.to_str().unwrap(), "--json", &l.dev],
        "block device",
    );
    refused(&["run", &l.dev, "--json", &l.dev], "block device");
    assert_eq!(digest(&l.dev), before);
}

#[test]
fn two_reports_on_one_path_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let t = image(d.path(), "t.dat", 2);
    let x = d.path().join("x");
    let ts = t.to_str().unwrap();
    let xs = x.to_str().unwrap();
    refused(
        &["run", ts, "--json", xs, "--csv", xs],
        "name the same file",
    );
    refused(
        &["run", ts, "--json", "-", "--csv", "-"],
        "both want stdout",
    );
    assert!(!x.exists());
}

#[test]
fn reports_are_written_whole_through_a_rename() {
    let d = tempfile::tempdir().unwrap();
    let t = image(d.path(), "t.dat", 2);
    let j = d.path().join("r.json");
    std::fs::write(&j, "old").unwrap();
    let out = sb()
        .args([
            "run",
            t.to_str().unwrap(),
            "--duration",
            "100ms",
            "--ramp",
            "0",
        ])
        .args([
            "--json",
            j.to_str().unwrap(),
            "--csv",
            d.path().join("r.csv").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    common::succeeded(&out);
    common::json(&std::fs::read(&j).unwrap());
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["r.csv", "r.json", "t.dat"],
        "no temporary left behind"
    );
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_ext4)),
    ignore = "needs root and mkfs.ext4 (e2fsprogs)"
)]
fn a_second_loop_over_the_image_of_a_mounted_one_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let img = image(d.path(), "small.img", 32);
    let mnt = tempfile::tempdir().unwrap();
    let (_l7, _m) = mounted_ext4(&img, mnt.path(), &[]);
    let l9 = Loop::attach(&img, &[]);
    sh("sync", &[]);
    let before = digest(img.to_str().unwrap());
    for rw in ["write", "randwrite", "randrw"] {
        refused(
            &[
                "run",
                "--rw",
                rw,
                "--allow-destructive",
                "--force-signature",
                &l9.dev,
            ],
            "is in use through another device",
        );
    }
    // The backing file of the mounted loop device, as a file target.
    refused(
        &[
            "run",
            "--rw",
            "write",
            "--allow-destructive",
            img.to_str().unwrap(),
        ],
        "is in use through another device",
    );
    // Nor may a report land on the image behind a target.
    refused(
        &["run", &l9.dev, "--json", img.to_str().unwrap()],
        "a target (or behind one)",
    );
    // The dry run says why, and that --force-signature does not override it.
    let out = sb()
        .args([
            "run",
            "--rw",
            "write",
            "--allow-destructive",
            "--force-signature",
            "--dry-run",
            &l9.dev,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("[REFUSED] no alias in use"), "{text}");
    assert!(text.contains("overrides this check only"), "{text}");
    sh("sync", &[]);
    assert_eq!(
        digest(img.to_str().unwrap()),
        before,
        "the mounted file system is as it was"
    );
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_ext4)),
    ignore = "needs root and mkfs.ext4 (e2fsprogs)"
)]
fn an_offset_loop_over_a_mounted_range_is_refused_and_one_beside_it_is_not() {
    let d = tempfile::tempdir().unwrap();
    let img = image(d.path(), "part.img", 48);
    let mnt = tempfile::tempdir().unwrap();
    // The "partition": 1 MiB in, 20 MiB long, mounted.
    let (_p1, _m) = mounted_ext4(&img, mnt.path(), &["-o", "1MiB", "--sizelimit", "20MiB"]);
    let inside = Loop::attach(&img, &["-o", "8MiB", "--sizelimit", "8MiB"]);
    let beside = Loop::attach(&img, &["-o", "21MiB", "--sizelimit", "20MiB"]);
    sh("sync", &[]);
    let halves = |img: &Path| {
        let d = std::fs::read(img).unwrap();
        (digest_bytes(&d[..21 << 20]), digest_bytes(&d[21 << 20..]))
    };
    let (mounted_before, beside_before) = halves(&img);
    refused(
        &[
            "run",
            "--rw",
            "write",
            "--allow-destructive",
            "--force-signature",
            &inside.dev,
        ],
        "is in use through another device",
    );
    // Beside the mounted range: allowed, and it writes only its own range.
    let out = sb()
        .args([
            "run",
            "--rw",
            "write",
            "--allow-destructive",
            "--duration",
            "200ms",
            "--ramp",
            "0",
            &beside.dev,
        ])
        .output()
        .unwrap();
    common::succeeded(&out);
    sh("sync", &[]);
    let (mounted_after, beside_after) = halves(&img);
    assert_eq!(
        mounted_after, mounted_before,
        "the mounted range is untouched"
    );
    assert_ne!(
        beside_after, beside_before,
        "the range beside it was written"
    );
}

#[test]
fn consent_from_a_config_file_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let t = image(d.path(), "t.dat", 2);
    let before = digest(t.to_str().unwrap());
    for key in ["allow_destructive", "force_signature"] {
        let c = d.path().join("c.toml");
        std::fs::write(&c, format!("rw = \"write\"\n{key} = true\n")).unwrap();
        let out = sb()
            .args(["run", "--config", c.to_str().unwrap(), t.to_str().unwrap()])
            .args(["--duration", "100ms", "--ramp", "0"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("typed on the command line"), "{err}");
    }
    assert_eq!(digest(t.to_str().unwrap()), before);
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn overlapping_targets_refuse_writes_and_warn_on_reads() {
    let d = tempfile::tempdir().unwrap();
    let t = image(d.path(), "t.dat", 2);
    let link = d.path().join("hard.dat");
    std::fs::hard_link(&t, &link).unwrap();
    // Hard links are one target named twice, as symlinks already were.
    refused(
        &["run", t.to_str().unwrap(), link.to_str().unwrap()],
        "named twice",
    );
    // Two loop devices over one image overlap (a disk and its partition do
    // the same; this kernel has no partitions, the fixture test covers them).
    let img = image(d.path(), "img", 16);
    let a = Loop::attach(&img, &[]);
    let b = Loop::attach(&img, &["-o", "4MiB"]);
    let before = digest(img.to_str().unwrap());
    refused(
        &[
            "run",
            "--rw",
            "write",
            "--allow-destructive",
            &a.dev,
            &b.dev,
        ],
        "reach the same bytes",
    );
    refused(
        &[
            "run",
            "--rw",
            "write",
            "--allow-destructive",
            "--dry-run",
            &a.dev,
            &b.dev,
        ],
        "reach the same bytes",
    );
    assert_eq!(digest(img.to_str().unwrap()), before);
    // Reads are allowed and warned about. What is read does not matter
    // here (the mock engine serves it); the warning comes from the plan.
    let doc = common::run_json(&[
        "run",
        "--debug-mock-engine",
        "1ms",
        "--duration",
        "100ms",
        "--ramp",
        "0",
        &a.dev,
        &b.dev,
    ]);
    let overlaps = common::warnings_of(&doc, "overlap");
    assert_eq!(overlaps.len(), 1, "{}", doc["warnings"]);
    let w = overlaps[0];
    assert_eq!(
        (&w["a"], &w["b"]),
        (&serde_json::json!(a.dev), &serde_json::json!(b.dev)),
        "{w}"
    );
    assert_eq!(w["on"], serde_json::json!(img.to_str().unwrap()), "{w}");
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_read_only_device_fails_the_write_checks_and_an_empty_one_is_named_so() {
    let d = tempfile::tempdir().unwrap();
    let img = image(d.path(), "ro.img", 8);
    let l = Loop::attach(&img, &["-r"]);
    let out = sb()
        .args([
            "run",
            "--rw",
            "write",
            "--allow-destructive",
            "--dry-run",
            &l.dev,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("[REFUSED] writable"), "{text}");
    refused(
        &["run", "--rw", "write", "--allow-destructive", &l.dev],
        "is read-only",
    );
}

#[test]
fn a_config_target_that_is_an_option_is_refused() {
    // Hostile test: `targets = ["--allow-destructive", FILE]` reached clap as
    // an option and the file was overwritten without consent on the command line.
    let d = tempfile::tempdir().unwrap();
    let t = image(d.path(), "f.dat", 2);
    let before = digest(t.to_str().unwrap());
    let c = d.path().join("c1.toml");
    std::fs::write(
        &c,
        format!(
            "rw = \"write\"\ntargets = [\"--allow-destructive\", \"{}\"]\n",
            t.display()
        ),
    )
    .unwrap();
    let out = sb()
        .args([
            "run",
            "--config",
            c.to_str().unwrap(),
            "-t",
            "100ms",
            "--ramp",
            "0",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("read as an option"), "{err}");
    assert_eq!(digest(t.to_str().unwrap()), before);
}

#[test]
fn a_report_on_this_process_standard_output_is_refused() {
    // Hostile test: `--json /dev/stdout >> log` renamed the report over the log.
    let d = tempfile::tempdir().unwrap();
    let t = image(d.path(), "t.dat", 2);
    let log = d.path().join("important.log");
    std::fs::write(&log, "1\n2\n3\n").unwrap();
    for (opt, path) in [("--json", "/dev/stdout"), ("--csv", "/proc/self/fd/1")] {
        let f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
            .env("STRIPEBENCH_STATE_DIR", common::state_dir())
            .env("STRIPEBENCH_HISTORY", crate::common::history_db())
            .args(["run", "-t", "100ms", "--ramp", "0", opt, path])
            .arg(&t)
            .stdout(f)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("standard output"), "{err}");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "1\n2\n3\n");
    }
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_ext4)),
    ignore = "needs root and mkfs.ext4 (e2fsprogs)"
)]
fn a_file_under_an_overlay_is_the_same_file_as_its_upper_layer() {
    // Hostile test: a loop over merged/o.img (mounted) and a write to
    // upper/o.img were not seen as one file: the overlay reports its own
    // device number for the file the upper layer holds.
    let d = tempfile::tempdir().unwrap();
    let (l, u, w, m) = (
        d.path().join("L"),
        d.path().join("U"),
        d.path().join("W"),
        d.path().join("M"),
    );
    for x in [&l, &u, &w, &m] {
        std::fs::create_dir(x).unwrap();
    }
    let opts = format!(
        "lowerdir={},upperdir={},workdir={}",
        l.display(),
        u.display(),
        w.display()
    );
    let _overlay = mount(&["-t", "overlay", "overlay", "-o", &opts], &m);
    let upper = image(&u, "o.img", 32);
    let merged = m.join("o.img");
    let mnt = tempfile::tempdir().unwrap();
    let (_loop, _mounted) = mounted_ext4(&merged, mnt.path(), &[]);
    sh("sync", &[]);
    let before = digest(upper.to_str().unwrap());
    refused(
        &[
            "run",
            "--rw",
            "write",
            "--allow-destructive",
            upper.to_str().unwrap(),
        ],
        "is in use through another device",
    );
    refused(
        &["run", merged.to_str().unwrap(), upper.to_str().unwrap()],
        "named twice",
    );
    assert_eq!(digest(upper.to_str().unwrap()), before);
}

/// A sparse file of `mb` MiB (no data written: fast, and reads back zeros).
fn sparse(dir: &Path, name: &str, mb: u64) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::File::create(&p)
        .unwrap()
        .set_len(mb << 20)
        .unwrap();
    p
}

/// `len` bytes of `path` at `at`.
fn bytes_at(path: &Path, at: u64, len: usize) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let mut b = vec![0u8; len];
    std::fs::File::open(path)
        .unwrap()
        .read_exact_at(&mut b, at)
        .unwrap();
    b
}

/// A symlink `link` at the bottom of 900 nested directories (every lookup of
/// its name walks all of them, which widens any window between two lookups),
/// swapped by a thread every ~0.3 ms between pointing at `a` and at `b`:
/// two prepared links exchange names atomically (renameat2 RENAME_EXCHANGE),
/// so the name always exists. Stopped when dropped.
struct Flipper {
    link: std::path::PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl Flipper {
    fn new(dir: &Path, name: &str, a: &Path, b: &Path) -> Flipper {
        use std::os::unix::ffi::OsStrExt;
        let mut deep = dir.join(format!("deep-{name}"));
        for _ in 0..900 {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        let link = deep.join(name);
        let other = deep.join(format!(".{name}"));
        std::os::unix::fs::symlink(a, &link).unwrap();
        std::os::unix::fs::symlink(b, &other).unwrap();
        let c = |p: &Path| std::ffi::CString::new(p.file_name().unwrap().as_bytes()).unwrap();
        let (l, o) = (c(&link), c(&other));
        let dirfd = std::fs::File::open(&deep).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let halt = stop.clone();
        let thread = std::thread::spawn(move || {
            use std::os::unix::io::AsRawFd;
            let fd = dirfd.as_raw_fd();
            let mut flips = 0u64;
            while !halt.load(std::sync::atomic::Ordering::Relaxed) {
                // SAFETY: both names are NUL-terminated and live; fd is an open directory.
                let rc = unsafe {
                    libc::renameat2(fd, l.as_ptr(), fd, o.as_ptr(), libc::RENAME_EXCHANGE)
                };
                assert_eq!(rc, 0, "renameat2: {}", std::io::Error::last_os_error());
                flips += 1;
                std::thread::sleep(std::time::Duration::from_micros(300));
            }
            flips
        });
        Flipper {
            link,
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the thread; how many times it flipped.
    fn stop(&mut self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.take().map_or(0, |t| t.join().unwrap())
    }
}

impl Drop for Flipper {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs `run --rw write --allow-destructive --io-limit 4k --bs 4k --offset
/// OFF EXTRA LINK` 300 times while the link flips between a harmless target
/// and one that reaches a mounted file system's bytes; after every attempt
/// the 4 KiB at OFF of `image` must be as they were. Returns (written,
/// refused): the harmless side was written, the other refused.
fn flip_attempts(flip: &Flipper, image: &Path, off_mb: u64, extra: &[&str]) -> (u32, u32) {
    let at = off_mb << 20;
    let before = bytes_at(image, at, 4096);
    let (mut written, mut refused) = (0, 0);
    let off = format!("{off_mb}m");
    for attempt in 1..=300 {
        let out = sb()
            .args([
                "run",
                "--rw",
                "write",
                "--allow-destructive",
                "--no-progress",
            ])
            .args(["--offset", &off, "--io-limit", "4k", "--bs", "4k"])
            .args(extra)
            .arg(&flip.link)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => written += 1,
            Some(2) => refused += 1,
            other => panic!("attempt {attempt}: exit {other:?}: {err}"),
        }
        assert!(
            bytes_at(image, at, 4096) == before,
            "attempt {attempt} (exit {:?}) wrote into the mounted image at {off_mb} MiB: {err}",
            out.status.code()
        );
    }
    (written, refused)
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_ext4)),
    ignore = "needs root and mkfs.ext4 (e2fsprogs)"
)]
fn a_link_flipped_to_a_mounted_image_during_the_guard_never_reaches_it() {
    // Hostile test: `$DEEP/tl` flipped every 0.3 ms between a harmless file
    // and img3, the backing file of a mounted ext4: the guard stat'ed one,
    // ran the alias check on the other, and the write reached img3 at 200 MiB.
    let d = tempfile::tempdir().unwrap();
    let img = sparse(d.path(), "img3", 256);
    let harmless = sparse(d.path(), "harmless", 256);
    let mnt = tempfile::tempdir().unwrap();
    let (_l, _m) = mounted_ext4(&img, mnt.path(), &[]);
    sh("sync", &[]);
    let before = digest(img.to_str().unwrap());
    let mut flip = Flipper::new(d.path(), "tl", &harmless, &img);
    let (written, refused) = flip_attempts(&flip, &img, 200, &[]);
    let flips = flip.stop();
    sh("sync", &[]);
    assert_eq!(digest(img.to_str().unwrap()), before, "img3 is as it was");
    // The link was met both ways: the race was really run.
    assert!(
        written > 0 && refused > 0,
        "{written} written, {refused} refused, {flips} flips"
    );
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_ext4)),
    ignore = "needs root and mkfs.ext4 (e2fsprogs)"
)]
fn a_link_flipped_to_an_alias_of_a_mounted_device_never_reaches_it() {
    // Hostile test: the same flip between a harmless loop device and a second
    // loop device over the image of a mounted one, with --force-signature:
    // written at 201 MiB.
    let d = tempfile::tempdir().unwrap();
    let img = sparse(d.path(), "img3", 256);
    let mnt = tempfile::tempdir().unwrap();
    let (_l7, _m) = mounted_ext4(&img, mnt.path(), &[]);
    let l9 = Loop::attach(&img, &[]);
    let harmless = sparse(d.path(), "harmless", 256);
    let ly = Loop::attach(&harmless, &[]);
    sh("sync", &[]);
    let before = digest(img.to_str().unwrap());
    let mut flip = Flipper::new(d.path(), "tb", Path::new(&ly.dev), Path::new(&l9.dev));
    let (written, refused) = flip_attempts(&flip, &img, 201, &["--force-signature"]);
    let flips = flip.stop();
    sh("sync", &[]);
    assert_eq!(digest(img.to_str().unwrap()), before, "img3 is as it was");
    assert!(
        written > 0 && refused > 0,
        "{written} written, {refused} refused, {flips} flips"
    );
}

/// An OFD lock on `path` (as stripebench's device locks are), held while
/// the file is open.
fn ofd_lock(path: &Path) -> std::fs::File {
    use std::os::fd::AsRawFd;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .unwrap();
    // SAFETY: a zeroed flock is a valid "whole file" request once the type is set.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: the fd is open; the kernel reads the flock we own.
    let r = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_OFD_SETLK, &fl) };
    assert_eq!(r, 0, "lock {}", path.display());
    f
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_ext4)),
    ignore = "needs root and mkfs.ext4 (e2fsprogs)"
)]
fn a_loop_device_repointed_between_the_checks_and_the_open_never_reaches_the_new_image() {
    // Hostile test: the guard checked /dev/loopN over a harmless image, then
    // waited (--wait-lock, another run holding the device's lock); meanwhile
    // loopN was detached and attached again over the image of a mounted
    // ext4. The open for I/O went through the checked device node, now
    // backed by the mounted image, and --force-signature skipped the
    // signature's second look: the write landed at 20 MiB of that image.
    use std::io::{BufRead, BufReader};
    let d = tempfile::tempdir().unwrap();
    let victim = sparse(d.path(), "victim.img", 64);
    let harmless = sparse(d.path(), "harmless.img", 64);
    let mnt = tempfile::tempdir().unwrap();
    let (_vl, _m) = mounted_ext4(&victim, mnt.path(), &[]);
    sh("sync", &[]);
    let before = digest(victim.to_str().unwrap());
    let l = Loop::attach(&harmless, &[]);
    let dev = l.dev.clone();
    let rdev = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&dev).unwrap().rdev()
    };
    let lock_name = format!(
        "lock-{}:{}",
        libc::major(rdev as libc::dev_t),
        libc::minor(rdev as libc::dev_t)
    );
    let held = ofd_lock(&common::state_dir().join(lock_name));
    let mut child = common::spawn(&[
        "run",
        "--rw",
        "write",
        "--allow-destructive",
        "--force-signature",
        "--readahead",
        "256",
        "--wait-lock",
        "-t",
        "1",
        "--ramp",
        "0",
        "--io-limit",
        "4k",
        "--bs",
        "4k",
        "--offset",
        "20m",
        "--no-progress",
        &dev,
    ]);
    // The checks have passed when it says it waits for the lock.
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        said.push_str(&line);
        if line.contains("waiting for another run") {
            break;
        }
    }
    assert!(said.contains("waiting for another run"), "{said}");
    // Re-point the checked device at the mounted image.
    drop(l);
    let re = std::process::Command::new("losetup")
        .args([&dev, victim.to_str().unwrap()])
        .status()
        .unwrap();
    let _repointed = Loop::adopt(&dev, &victim);
    if !re.success() {
        // The checked device is held open from the checks to the I/O: its
        // detach is deferred to the last close, and it cannot be attached
        // to another file meanwhile.
        eprintln!("losetup {dev} could not re-attach: the device is pinned");
    }
    drop(held);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let status = child.wait().unwrap();
    sh("sync", &[]);
    assert_eq!(
        digest(victim.to_str().unwrap()),
        before,
        "the mounted image is as it was"
    );
    if re.success() {
        assert_eq!(status.code(), Some(2), "{said}{rest}");
        assert!(rest.contains("changed after the checks"), "{rest}");
    }
}
