//! `run --print-fio`: the fio line for a run's workload, printed without
//! I/O, and run with fio itself: it ran the same targets, bs and rw.

use crate::common::{data_file, sb};

fn print_fio(args: &[&str]) -> String {
    let out = sb()
        .arg("run")
        .arg("--print-fio")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn print_fio_gives_one_job_per_worker_and_no_io() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("never-made");
    let a = a.to_str().unwrap();
    let t = print_fio(&[
        "--rw", "randrw", "--mix", "70", "--bs", "8k", "--jobs", "2", "--cpus", "0,1", "-t", "3s",
        a,
    ]);
    let line = t.lines().find(|l| l.starts_with("fio ")).expect(&t);
    for o in [
        "--rw=randrw",
        "--rwmixread=70",
        "--bs=8k",
        "--norandommap",
        "--randrepeat=0",
        "--runtime=3000ms",
        "--time_based",
        "--refill_buffers",
    ] {
        assert!(line.contains(o), "{o} missing: {line}");
    }
    assert!(
        line.contains(&format!(
            "--name=w0 --filename={a} --offset=0% --size=50% --cpus_allowed=0"
        )),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "--name=w1 --filename={a} --offset=50% --size=50% --cpus_allowed=1"
        )),
        "{line}"
    );
    assert!(t.contains("# not in fio: --jobs"), "{t}");
    assert!(!std::path::Path::new(a).exists(), "--print-fio did I/O");
}

#[test]
#[cfg_attr(not(sb_fio), ignore = "needs fio (Debian package fio)")]
fn the_printed_line_runs_with_fio_on_the_same_workload() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 4 << 20);
    let a = a.to_str().unwrap();
    let t = print_fio(&[
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--buffered",
        "-t",
        "200ms",
        "--ramp",
        "0s",
        a,
    ]);
    let line = t.lines().find(|l| l.starts_with("fio ")).expect(&t);
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{line} --output-format=json"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8(out.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(&s[s.find('{').expect(&s)..]).unwrap();
    assert_eq!(v["global options"]["bs"], "4k");
    assert_eq!(v["global options"]["rw"], "randread");
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0]["job options"]["filename"], a);
    assert_eq!(jobs[0]["error"], 0);
    assert!(jobs[0]["read"]["total_ios"].as_u64().unwrap() > 0, "{s}");
}

/// The run document carries the line `--print-fio` prints for the same
/// options (one code path), its notes, and the HTML report shows it.
#[test]
fn the_run_document_and_its_html_carry_the_print_fio_line() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 4 << 20);
    let a = a.to_str().unwrap();
    let opts = [
        "--rw", "randread", "--bs", "4k", "--jobs", "2", "-t", "300ms", "--ramp", "0s",
    ];
    let printed = print_fio(&[&opts[..], &[a]].concat());
    let html = dir.path().join("r.html");
    let out = sb()
        .args([
            "run",
            "--debug-mock-engine",
            "1ms",
            "--no-progress",
            "--json",
            "-",
        ])
        .arg("--html")
        .arg(&html)
        .args(opts)
        .arg(a)
        .output()
        .unwrap();
    crate::common::succeeded(&out);
    let v = crate::common::json(&out.stdout);
    let fio = &v["fio"];
    let line = printed.lines().find(|l| l.starts_with("fio ")).unwrap();
    assert_eq!(fio["command"], line, "{fio}");
    assert!(fio["unavailable"].is_null(), "{fio}");
    let notes: Vec<String> = printed
        .lines()
        .filter_map(|l| l.strip_prefix("# not in fio: "))
        .map(String::from)
        .collect();
    assert!(!notes.is_empty(), "{printed}");
    assert_eq!(fio["notes"], serde_json::json!(notes));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("The same workload in fio"), "no fio section");
    assert!(
        page.contains(&format!("<pre class=\"copy\" id=\"fio\">{line}</pre>")),
        "the fio line is not in one block"
    );
}

/// Where no fio line can be given, the document says why, and the run
/// itself is not refused.
#[test]
fn a_run_with_no_fio_line_says_why_in_its_document() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 4 << 20);
    let v = crate::common::run_json(&[
        "run",
        "--debug-mock-engine",
        "1ms",
        "--no-progress",
        "--jobs",
        "2",
        "--offset",
        "1m",
        "-t",
        "200ms",
        "--ramp",
        "0s",
        a.to_str().unwrap(),
    ]);
    assert!(v["fio"]["command"].is_null(), "{}", v["fio"]);
    let why = v["fio"]["unavailable"].as_str().unwrap();
    assert!(why.contains("--size"), "{why}");
}

/// `--cached` reads what the page cache holds: fio is told to keep it
/// (`--invalidate=0`), and no note says stripebench evicts it first.
#[test]
fn print_fio_keeps_the_cache_for_a_cached_read() {
    let t = print_fio(&[
        "--rw",
        "read",
        "--bs",
        "32k",
        "--buffered",
        "--cached",
        "/nowhere",
    ]);
    let line = t.lines().find(|l| l.starts_with("fio ")).expect(&t);
    assert!(
        line.contains("--direct=0 ") && line.contains("--invalidate=0"),
        "{t}"
    );
    assert!(!t.contains("evicts"), "{t}");
}

#[test]
fn a_buffered_line_gives_fio_no_fadvise_hint_and_an_o_direct_one_keeps_its_default() {
    // fio's fadvise_hint=1 doubles a sequential reader's read-ahead (and
    // turns it off for a random one); stripebench gives no hint, so the
    // read-ahead of a buffered run is the device's in both tools.
    for mode in ["--buffered", "--uncached"] {
        let t = print_fio(&["--rw", "read", "--bs", "1m", mode, "/nowhere"]);
        let line = t.lines().find(|l| l.starts_with("fio ")).expect(&t);
        assert!(
            line.split(' ').any(|w| w == "--fadvise_hint=0"),
            "{mode}: {t}"
        );
    }
    let t = print_fio(&["--rw", "read", "--bs", "1m", "--direct", "/nowhere"]);
    assert!(!t.contains("fadvise_hint"), "{t}");
}

/// Issue 39, item 1: our buffers are 2 MiB huge pages from a --bs of
/// 128 KiB (--hugepages auto), fio's are 4 KiB pages unless told: the line
/// asks fio for huge pages too, and says first how many to reserve (two
/// per job here: fio pads 1 MiB by a page twice, rounding up each time).
#[test]
fn the_printed_line_asks_fio_for_the_huge_pages_our_buffers_are_in() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let t = print_fio(&["--bs", "1m", "-t", "3s", a, b]);
    let line = t.lines().find(|l| l.starts_with("fio ")).expect(&t);
    assert!(line.contains("--iomem=mmaphuge"), "{t}");
    assert!(
        t.starts_with("# run first: sysctl -w vm.nr_hugepages=4 "),
        "{t}"
    );
    assert!(t.contains("# not in fio: --hugepages auto"), "{t}");
    // io_uring at depth 4: 4 MiB and a page take three 2 MiB pages, and a
    // page more a fourth.
    let t = print_fio(&[
        "--bs",
        "1m",
        "--engine",
        "uring",
        "--iodepth",
        "4",
        "-t",
        "3s",
        a,
    ]);
    assert!(t.contains("vm.nr_hugepages=4 "), "{t}");
    // Where ours are 4 KiB pages, fio's are as they are.
    for args in [
        &["--bs", "1m", "--hugepages", "off", a][..],
        &["--bs", "4k", "--rw", "randread", a][..],
    ] {
        let t = print_fio(args);
        assert!(
            !t.contains("iomem") && !t.contains("run first"),
            "{args:?}: {t}"
        );
    }
}

/// Sectors and I/Os completed by a block device so far (`/sys/block/X/stat`).
fn sectors_and_ios(dev: &str) -> (u64, u64) {
    let name = dev.trim_start_matches("/dev/");
    let s = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let f: Vec<u64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
    (f[2], f[0])
}

/// vm.nr_hugepages set for a test, put back on drop.
struct HugePagesReserved(String);

/// Does what a printed line's `# run first: sysctl -w vm.nr_hugepages=N`
/// asks, when it asks it; put back on drop.
fn reserve_as_printed(t: &str) -> Option<HugePagesReserved> {
    let pages = t
        .split("vm.nr_hugepages=")
        .nth(1)?
        .split_whitespace()
        .next()?;
    let old = HugePagesReserved(std::fs::read_to_string("/proc/sys/vm/nr_hugepages").unwrap());
    std::fs::write("/proc/sys/vm/nr_hugepages", pages).unwrap();
    Some(old)
}

impl Drop for HugePagesReserved {
    fn drop(&mut self) {
        let _ = std::fs::write("/proc/sys/vm/nr_hugepages", &self.0);
    }
}

/// Issue 39, item 1: `run --bs 1m` read at twice the figure of the fio
/// command it printed, on a queue that takes 128 segments (a loop device):
/// our huge-page buffers reach it as 1 MiB requests, fio's 4 KiB pages as
/// two of 512 KiB. The printed line (run as it says, its huge pages
/// reserved first) moves the same requests as the run. Requests, not speed, are compared
/// here (a test asserts what can be checked exactly); scripts/crosscheck.sh
/// compares the figures.
#[test]
#[cfg_attr(
    not(all(sb_root, sb_fio)),
    ignore = "needs root (loop devices, vm.nr_hugepages) and fio"
)]
fn the_printed_line_moves_the_same_requests_as_the_run_on_a_queue_with_few_segments() {
    let bed = crate::common::LoopBed::new(1, 64);
    let dev = bed.devices[0].clone();
    let name = dev.trim_start_matches("/dev/");
    let segs: u64 = std::fs::read_to_string(format!("/sys/block/{name}/queue/max_segments"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    crate::common::require(
        segs * 4096 < 1 << 20,
        "needs a queue that splits 1 MiB of 4 KiB pages (max_segments below 256)",
    );
    // The run: its requests, and the warning that says why fio differs.
    let (s0, i0) = sectors_and_ios(&dev);
    let out = sb()
        .args([
            "run",
            "--bs",
            "1m",
            "--io-limit",
            "32m",
            "--ramp",
            "0",
            "--no-progress",
        ])
        .arg(&dev)
        .output()
        .unwrap();
    crate::common::succeeded(&out);
    let (s1, i1) = sectors_and_ios(&dev);
    let ours = (s1 - s0) * 512 / (i1 - i0);
    assert_eq!(ours, 1 << 20, "our requests");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains(&format!(
            "{name} takes each 1.0 MiB I/O whole because our buffers are in huge pages"
        )),
        "{table}"
    );
    // The printed line, run as it says.
    let t = print_fio(&["--bs", "1m", "--io-limit", "32m", "--ramp", "0", &dev]);
    let line = t.lines().find(|l| l.starts_with("fio ")).expect(&t);
    let _reserved = reserve_as_printed(&t).expect(&t);
    let fio_requests = |line: &str| {
        let (s0, i0) = sectors_and_ios(&dev);
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{line} --output-format=json"))
            .output()
            .unwrap();
        crate::common::succeeded_as(&out, line);
        let (s1, i1) = sectors_and_ios(&dev);
        (s1 - s0) * 512 / (i1 - i0)
    };
    assert_eq!(fio_requests(line), ours, "the printed line: {line}");
    // (Without huge pages the same line's requests are mostly split to
    // max_segments pages, but not always: 4 KiB pages that happen to be
    // contiguous in physical memory merge into one segment. Nothing exact
    // to assert there.)
}

/// The device's counters over one command: bytes read and read requests.
fn device_reads(dev: &str, run: impl FnOnce()) -> (u64, u64) {
    let (s0, i0) = sectors_and_ios(dev);
    run();
    let (s1, i1) = sectors_and_ios(dev);
    ((s1 - s0) * 512, i1 - i0)
}

/// Issue 39, item 1, the other two workloads: O_DIRECT 4 KiB random reads
/// and a buffered sequential read. The printed fio line, run as it says,
/// reaches the device with the same requests as the run (the same count
/// and size for the random reads, every one 4 KiB; the same read-ahead
/// pieces within a tenth for the buffered read, whose first requests depend
/// on how the read-ahead window opens). The figures are compared by
/// scripts/crosscheck.sh, a benchmark: a test cannot tell a slow machine
/// from a slow tool.
#[test]
#[cfg_attr(
    not(all(sb_root, sb_fio)),
    ignore = "needs root (loop devices, the page cache) and fio"
)]
fn the_printed_line_moves_the_same_requests_for_random_4k_and_buffered_reads() {
    let bed = crate::common::LoopBed::new(1, 64);
    let dev = bed.devices[0].clone();
    for (what, opts) in [
        (
            "O_DIRECT 4 KiB random reads",
            &["--rw", "randread", "--bs", "4k", "--io-limit", "4m"][..],
        ),
        (
            "a buffered sequential read",
            &["--buffered", "--bs", "1m", "--io-limit", "32m"][..],
        ),
    ] {
        let common = [opts, &["--ramp", "0", "--no-progress"][..]].concat();
        let ours = device_reads(&dev, || {
            let out = sb().arg("run").args(&common).arg(&dev).output().unwrap();
            crate::common::succeeded(&out);
        });
        let t = print_fio(&[&common[..], &[dev.as_str()]].concat());
        // Huge-page buffers (the buffered 1 MiB read's) need pages
        // reserved first, as the line says.
        let _reserved = reserve_as_printed(&t);
        let line = t.lines().find(|l| l.starts_with("fio ")).expect(&t);
        let theirs = device_reads(&dev, || {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("{line} --output-format=json"))
                .output()
                .unwrap();
            crate::common::succeeded_as(&out, line);
        });
        if opts.contains(&"randread") {
            assert_eq!(ours, (4 << 20, 1024), "{what}: ours");
            assert_eq!(theirs, ours, "{what}: the printed line {line}");
        } else {
            // Both read the 32 MiB cold, through the same read-ahead.
            let within = |a: u64, b: u64| a.abs_diff(b) * 10 <= a.max(b);
            assert!(
                ours.0 >= 32 << 20 && theirs.0 >= 32 << 20,
                "{what}: {ours:?} {theirs:?}"
            );
            assert!(
                within(ours.0, theirs.0),
                "{what}: bytes {ours:?} against {theirs:?}: {line}"
            );
            assert!(
                within(ours.1, theirs.1),
                "{what}: requests {ours:?} against {theirs:?}: {line}"
            );
        }
    }
}

// Issue 41: --dist, --seq-run, --skip and --offset-increment are written
// in fio's spelling (random_distribution=, rw=PATTERN:MOD, each job's
// offset k increments on).
#[test]
fn print_fio_writes_distributions_modifiers_and_increments_as_fio_spells_them() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("never-made");
    let a = a.to_str().unwrap();
    let t = print_fio(&[
        "--rw",
        "randread",
        "--dist",
        "zoned:50/5:30/15:20/",
        "--seq-run",
        "8",
        a,
    ]);
    let line = t.lines().find(|l| l.starts_with("fio ")).expect(&t);
    assert!(line.contains("--rw=randread:8 "), "{line}");
    assert!(
        line.contains("--random_distribution=zoned:50/5:30/15:20/80"),
        "{line}"
    );
    let t = print_fio(&["--rw", "read", "--skip", "-8k", a]);
    assert!(t.contains("--rw=read:-8192 "), "{t}");
    let t = print_fio(&[
        "--rw",
        "read",
        "--jobs",
        "2",
        "--offset-increment",
        "32m",
        "--size",
        "16m",
        a,
    ]);
    assert!(
        t.contains(&format!(
            "--name=w1 --filename={a} --offset=33554432 --size=16777216"
        )),
        "{t}"
    );
}

/// What paces, searches or walks a worker's I/O is in the fio line too:
/// without it, fio would run another workload (a sprandom walk for a
/// year, a search at a fixed depth, no pauses, a map it was not given).
#[test]
fn print_fio_spells_thinktime_the_latency_search_the_random_map_and_sprandom() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "f", 8 << 20);
    let f = f.to_str().unwrap();
    let cases: &[(&[&str], &[&str], &[&str])] = &[
        (
            &["--rw", "randread", "--random-map"],
            &["--randrepeat=0", "# not in fio: --random-map"],
            &["--norandommap"],
        ),
        (
            &[
                "--rw",
                "randread",
                "--iodepth",
                "8",
                "--latency-target",
                "2ms",
                "--latency-window",
                "500ms",
                "--latency-percentile",
                "99.9",
                "--latency-run",
            ],
            &[
                "--latency_target=2000us",
                "--latency_window=500000us",
                "--latency_percentile=99.9",
                "--latency_run=1",
            ],
            &[],
        ),
        (
            &[
                "--rw",
                "randwrite",
                "--sprandom",
                "--spr-op",
                "0.2",
                "--allow-destructive",
            ],
            &[
                "--sprandom=1",
                "--spr_op=0.2",
                "--spr_num_regions=100",
                "--random_generator=lfsr",
                "--norandommap",
            ],
            &["--time_based", "--runtime="],
        ),
        (
            &[
                "--rw",
                "read",
                "--thinktime",
                "1500us",
                "--thinktime-blocks",
                "4",
            ],
            &["--thinktime=1500us", "--thinktime_blocks=4"],
            &["--thinktime_spin"],
        ),
        (
            &["--rw", "write", "--fill-device", "--allow-destructive"],
            &["--fill_device=1"],
            &["--time_based"],
        ),
    ];
    for (args, has, lacks) in cases {
        let mut all = args.to_vec();
        all.push(f);
        let t = print_fio(&all);
        for o in *has {
            assert!(t.contains(o), "{args:?}: {o} missing: {t}");
        }
        let line = t.lines().find(|l| l.starts_with("fio ")).expect(&t);
        for o in *lacks {
            assert!(
                !line.contains(o),
                "{args:?}: {o} should not be there: {line}"
            );
        }
    }
}
