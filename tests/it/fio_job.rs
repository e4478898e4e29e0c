//! `run --fio-job` and `sweep --fio-job`: fio's own example job files
//! (tests/data/fio-examples/, from fio's examples/) run with their
//! `filename=` replaced by a temporary file named on the command line; one
//! that uses an option stripebench cannot honour is refused with the option
//! named; a `--print-fio` line written as a job file reads back to the same
//! workload. Every file is in a temporary directory, removed on every exit.

use std::path::{Path, PathBuf};

use crate::common::{data_file, json, sb, succeeded_as};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fio-examples")
        .join(name)
}

/// `run --fio-job NAME` on `job` (the file's text, written as `dir/NAME`)
/// in `dir`, its documents `r.json` (numbered for several runs).
fn run_written(dir: &Path, name: &str, job: &str) -> std::process::Output {
    std::fs::write(dir.join(name), job).unwrap();
    sb().current_dir(dir)
        .args([
            "run",
            "--fio-job",
            name,
            "--no-progress",
            "--json",
            "r.json",
        ])
        .output()
        .unwrap()
}

/// Run `i`'s JSON document of a job file of several runs: `STEM.i.json`
/// in `dir`.
fn run_doc(dir: &Path, stem: &str, i: usize) -> serde_json::Value {
    json(&std::fs::read(dir.join(format!("{stem}.{i}.json"))).unwrap())
}

/// The `stripebench ...` lines printed on stderr.
fn commands(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.starts_with("stripebench run ") || l.starts_with("stripebench sweep "))
        .map(str::to_string)
        .collect()
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn fio_s_seq_read_example_runs_on_the_file_named_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "target", 8 << 20);
    let fs = f.to_str().unwrap();
    let job = example("fio-seq-read.fio");
    let out = sb()
        .args(["run", "--fio-job", job.to_str().unwrap()])
        .args([
            "-t",
            "1s",
            "--size",
            "4m",
            "--no-progress",
            "--json",
            "-",
            fs,
        ])
        .output()
        .unwrap();
    succeeded_as(&out, "run --fio-job fio-seq-read.fio");
    // The command it stands for: the file's options, then what was typed
    // (which replaced runtime=900, size=10G and filename=).
    assert_eq!(
        commands(&out.stderr),
        [format!(
            "stripebench run --rw=read --bs=256k --direct --ramp=0s --engine=uring --iodepth=16 --no-register --complete-min=1 --no-pin -t 1s --size 4m --no-progress --json - {fs}"
        )]
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ioengine=libaio is run with io_uring"),
        "{err}"
    );
    let doc = json(&out.stdout);
    let c = &doc["config"];
    assert_eq!(c["rw"], "read");
    assert_eq!(c["bs"], "262144");
    assert_eq!(c["direct"], true);
    assert_eq!(c["engine"], "uring");
    assert_eq!(c["iodepth"], 16);
    assert_eq!(c["register"], false);
    assert_eq!(c["ramp_sec"], 0.0);
    assert_eq!(c["size"], 4 << 20);
    assert_eq!(c["targets"], serde_json::json!([fs]));
    assert!(doc["total"]["bytes"].as_u64().unwrap_or(0) > 0, "{doc}");
}

/// `stripebench SUB --fio-job ssd-test.fio` with `outputs`, on a 2 MiB
/// file in `dir` (the 10g region cut to 1m; writes need consent).
fn ssd_test(dir: &Path, sub: &str, outputs: &[&std::ffi::OsStr]) -> std::process::Output {
    let f = data_file(dir, "target", 2 << 20);
    let job = example("ssd-test.fio");
    sb().args([sub, "--fio-job", job.to_str().unwrap()])
        .args([
            "--size",
            "1m",
            "-t",
            "5s",
            "--no-progress",
            "--allow-destructive",
        ])
        .args(outputs)
        .arg(&f)
        .output()
        .unwrap()
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn ssd_test_s_stonewall_groups_are_four_runs_with_numbered_documents() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("r.json");
    let out = ssd_test(dir.path(), "run", &["--json".as_ref(), r.as_os_str()]);
    succeeded_as(&out, "run --fio-job ssd-test.fio");
    let cmds = commands(&out.stderr);
    assert_eq!(cmds.len(), 4, "{cmds:?}");
    for (i, rw) in ["read", "randread", "write", "randwrite"]
        .iter()
        .enumerate()
    {
        let n = i + 1;
        assert!(
            cmds[i].starts_with(&format!(
                "stripebench run --rw={rw} --bs=4k --direct --passes=1"
            )),
            "{}",
            cmds[i]
        );
        let path = dir.path().join(format!("r.{n}.json"));
        assert!(
            cmds[i].contains(&format!("--json {}", path.display())),
            "{}",
            cmds[i]
        );
        let doc = json(&std::fs::read(&path).unwrap());
        assert_eq!(doc["config"]["rw"], *rw, "{}", path.display());
        assert_eq!(doc["config"]["iodepth"], 4);
        assert_eq!(doc["config"]["passes"], 1);
    }
    assert!(!r.exists(), "the unnumbered path is not written");
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn ssd_test_is_a_sweep_over_rw() {
    let dir = tempfile::tempdir().unwrap();
    let out = ssd_test(dir.path(), "sweep", &["--json".as_ref(), "-".as_ref()]);
    succeeded_as(&out, "sweep --fio-job ssd-test.fio");
    let cmds = commands(&out.stderr);
    assert_eq!(cmds.len(), 1, "{cmds:?}");
    assert!(
        cmds[0].contains("--param=rw=read,randread,write,randwrite"),
        "{}",
        cmds[0]
    );
    let doc = json(&out.stdout);
    let points = doc["points"].as_array().expect("points");
    assert_eq!(points.len(), 4, "{doc}");
}

// Issue 41: fio's tiobench example was refused over `bsrange=4k-4k` and
// then numjobs=4 on a sequential pattern. Its four groups run now, each
// with fio's four clones, every clone doing size= bytes of the whole
// region as fio's do (--jobs-share).
#[test]
fn tiobench_example_runs_its_clones_each_over_the_whole_region() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "target", 8 << 20);
    let job = example("tiobench-example.fio");
    let doc = dir.path().join("r.json");
    let out = sb()
        .args(["run", "--fio-job", job.to_str().unwrap()])
        .args(["--debug-mock-engine", "10us", "--size", "4m"])
        .args(["--allow-destructive", "--no-progress", "--json"])
        .arg(&doc)
        .arg(&f)
        .output()
        .unwrap();
    succeeded_as(&out, 0);
    for (i, rw) in ["write", "randwrite", "read", "randread"]
        .iter()
        .enumerate()
    {
        let d = json(&std::fs::read(dir.path().join(format!("r.{}.json", i + 1))).unwrap());
        assert_eq!(d["config"]["rw"], *rw);
        assert_eq!(d["config"]["bs"], "4096");
        assert_eq!(d["config"]["jobs_share"], true);
        let workers = d["workers"].as_array().unwrap();
        assert_eq!(workers.len(), 4);
        for w in workers {
            assert_eq!(w["region"]["offset"], 0, "{w}");
            assert_eq!(w["region"]["length"], 4 << 20, "{w}");
            assert_eq!(w["bytes"], 4 << 20, "{w}");
        }
    }
}

#[test]
fn hostile_or_misplaced_job_files_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "target", 1 << 20);
    let job = dir.path().join("j.fio");
    let fs = f.to_str().unwrap();
    let js = job.to_str().unwrap();
    for (text, args, said) in [
        (
            "[j]\nsize=$(touch /tmp/x)\n",
            vec!["run", "--fio-job", js, fs],
            "command substitution",
        ),
        (
            "[j]\nsize=${STRIPEBENCH_IT_UNSET}\n",
            vec!["run", "--fio-job", js, fs],
            "STRIPEBENCH_IT_UNSET is not set",
        ),
        (
            "[j]\nsize=(4k/0)\n",
            vec!["run", "--fio-job", js, fs],
            "division by zero",
        ),
        (
            "[j]\ninclude /etc/passwd\n",
            vec!["run", "--fio-job", js, fs],
            "follows no include",
        ),
        (
            "[j]\nrw=read\n",
            vec!["compare", "--fio-job", js, fs],
            "read by run and sweep",
        ),
        (
            "[j]\nrw=read\n",
            vec!["run", "--fio-job", js],
            "no filename=",
        ),
        (
            "[j]\nrw=read\n",
            vec!["sweep", "--fio-job", js, fs],
            "one group",
        ),
        (
            "[a]\nrw=read\n[b]\nrw=write\nstonewall\n",
            vec!["run", "--fio-job", js, "--json", "-", fs],
            "--json -",
        ),
    ] {
        std::fs::write(&job, text).unwrap();
        let out = sb().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text:?} {args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(said), "{text:?} {args:?}: {err}");
    }
}

#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn environment_reserved_words_and_arithmetic_in_values_run_as_fio_evaluates_them() {
    // Regression (issue 41): `size=${SIZE}`, `bs=$pagesize` and fio's
    // arithmetic were refused ("stripebench evaluates no text").
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "target", 8 << 20);
    let fs = f.to_str().unwrap();
    let job = dir.path().join("values.fio");
    std::fs::write(
        &job,
        "[global]\nrw=read\ndirect=1\nioengine=io_uring\nbs=$pagesize\niodepth=$ncpus*2\n[j]\nsize=${SIZE}\noffset=(1m+3*1024k)\n",
    )
    .unwrap();
    let out = sb()
        .env("SIZE", "2m")
        .args(["run", "--fio-job", job.to_str().unwrap()])
        .args(["-t", "1s", "--no-progress", "--json", "-", fs])
        .output()
        .unwrap();
    succeeded_as(&out, "run --fio-job values.fio");
    let page = page_size();
    let ncpus = online_cpus();
    let err = String::from_utf8_lossy(&out.stderr);
    for said in [
        "# size=${SIZE} -> 2m (from the environment)".to_string(),
        format!("# bs=$pagesize -> {page} ($pagesize: this host's page size = {page})"),
        format!("# offset=(1m+3*1024k) -> {} (arithmetic", 4 << 20),
    ] {
        assert!(err.contains(&said), "{said}\n{err}");
    }
    let doc = json(&out.stdout);
    let c = &doc["config"];
    assert_eq!(c["size"], 2 << 20, "{c}");
    assert_eq!(c["offset"], 4 << 20, "{c}");
    assert_eq!(c["bs"], page.to_string(), "{c}");
    assert_eq!(c["iodepth"], 2 * ncpus, "{c}");
    assert!(doc["total"]["bytes"].as_u64().unwrap_or(0) > 0, "{doc}");
}

/// The online CPUs, as sysfs lists them (`0-3,6`): `$ncpus`.
fn online_cpus() -> usize {
    let list = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    list.trim()
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
            None => 1,
        })
        .sum()
}

/// The page size, as fio's `$pagesize` gives it.
fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as u64 }
}

/// A `fio ...` line as a job file: the options before the first --name=
/// under [global], each --name= a section of the options after it.
fn as_job_file(line: &str) -> String {
    let mut out = String::from("[global]\n");
    for w in line.split_whitespace().skip(1) {
        let o = w.strip_prefix("--").expect(w);
        match o.strip_prefix("name=") {
            Some(n) => out.push_str(&format!("[{n}]\n")),
            None => out.push_str(&format!("{o}\n")),
        }
    }
    out
}

fn print_fio(args: &[&str]) -> String {
    let out = sb()
        .arg("run")
        .args(args)
        .arg("--print-fio")
        .output()
        .unwrap();
    succeeded_as(&out, format_args!("{args:?}"));
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .find(|l| l.starts_with("fio "))
        .unwrap_or_else(|| panic!("{text}"))
        .to_string()
}

#[test]
fn a_print_fio_line_as_a_job_file_reads_back_to_the_same_workload() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 1 << 20);
    let b = data_file(dir.path(), "b", 1 << 20);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let job = dir.path().join("j.fio");
    for typed in [
        vec![
            "--rw",
            "randread",
            "--bs",
            "8k",
            "--iodepth",
            "8",
            "--engine",
            "uring",
            "-t",
            "3s",
            "--cpus",
            "0",
            a,
            b,
        ],
        vec![
            "--rw",
            "read",
            "--bs",
            "1m",
            "--buffered",
            "-t",
            "2s",
            "--ramp",
            "500ms",
            "--rate",
            "10m",
            a,
        ],
        vec![
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--no-pin",
            "--buffer-compress",
            "50",
            "--io-limit",
            "1m",
            a,
        ],
        // fio's sequential mix (issue 41).
        vec!["--rw", "rw", "--mix", "70", "--bs", "64k", a],
    ] {
        let line = print_fio(&typed);
        std::fs::write(&job, as_job_file(&line)).unwrap();
        let again = print_fio(&["--fio-job", job.to_str().unwrap()]);
        assert_eq!(again, line, "{typed:?} as {}", as_job_file(&line));
    }
}

/// Several stonewall groups: every refusal a later run would meet (its
/// numbered output path, its write without consent) comes before the
/// first run's I/O, not after the first has run for its duration.
#[test]
fn later_groups_refusals_come_before_the_first_group_runs() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "target", 1 << 20);
    let job = dir.path().join("j.fio");
    let r = dir.path().join("r.json");
    let nodir = dir.path().join("nodir/r.json");
    std::fs::write(
        &job,
        "[global]\nrw=randread\ntime_based\nruntime=30\n[a]\n[b]\nstonewall\n[c]\nstonewall\n",
    )
    .unwrap();
    let planted = dir.path().join("planted");
    std::fs::write(&planted, "kept").unwrap();
    std::os::unix::fs::symlink(&planted, dir.path().join("r.2.json")).unwrap();
    std::fs::create_dir(dir.path().join("r.3.json")).unwrap();
    let run = |extra: &[&std::ffi::OsStr]| {
        let started = std::time::Instant::now();
        let out = sb()
            .args(["run", "--fio-job", job.to_str().unwrap(), "--no-progress"])
            .args(extra)
            .arg(&f)
            .output()
            .unwrap();
        (out, started.elapsed())
    };
    for (extra, said) in [
        (
            vec!["--json".as_ref(), r.as_os_str()],
            "r.2.json: it is a symbolic link",
        ),
        (vec!["--json".as_ref(), nodir.as_os_str()], "does not exist"),
    ] {
        let (out, took) = run(&extra);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(said) && err.contains("none ran"), "{err}");
        assert!(took < std::time::Duration::from_secs(20), "{took:?}: {err}");
        assert!(!dir.path().join("r.1.json").exists(), "run 1 ran: {err}");
    }
    assert_eq!(std::fs::read_to_string(&planted).unwrap(), "kept");
    // A write in a later group, without --allow-destructive typed: refused
    // as the typed command is, before the read group touches the file.
    std::fs::write(
        &job,
        "[global]\ntime_based\nruntime=30\n[a]\nrw=read\n[b]\nstonewall\nrw=write\n",
    )
    .unwrap();
    let (out, took) = run(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("run 2 of 2") && err.contains("--allow-destructive"),
        "{err}"
    );
    assert!(took < std::time::Duration::from_secs(20), "{took:?}: {err}");
}

/// The precheck of later groups does not refuse a sparse file that an
/// earlier group writes: a write group, then a read one, on a new file.
#[test]
fn a_read_group_after_a_write_group_is_not_refused_for_holes_the_write_fills() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("sparse");
    std::fs::File::create(&f).unwrap().set_len(2 << 20).unwrap();
    let job = dir.path().join("j.fio");
    std::fs::write(
        &job,
        "[global]\nbs=1m\nioengine=psync\n[w]\nrw=write\n[r]\nstonewall\nrw=read\n",
    )
    .unwrap();
    let out = sb()
        .args(["run", "--fio-job", job.to_str().unwrap()])
        .args(["--no-progress", "--allow-destructive"])
        .arg(&f)
        .output()
        .unwrap();
    succeeded_as(&out, "run --fio-job: write, then read");
    assert_eq!(commands(&out.stderr).len(), 2);
}

/// SIGTERM during run 1 of 3: run 1's document is written, marked
/// interrupted, the exit is 128 + 15, and runs 2 and 3 never start.
#[test]
fn a_signal_during_group_one_reports_it_and_starts_no_other_group() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "target", 1 << 20);
    let job = dir.path().join("j.fio");
    std::fs::write(
        &job,
        "[global]\nrw=randread\ntime_based\nruntime=20\n[a]\n[b]\nstonewall\n[c]\nstonewall\n",
    )
    .unwrap();
    let r = dir.path().join("r.json");
    let child = crate::common::spawn(&[
        "run",
        "--fio-job",
        job.to_str().unwrap(),
        "--no-progress",
        "--json",
        r.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(128 + 15), "{err}");
    let doc = json(&std::fs::read(dir.path().join("r.1.json")).unwrap());
    assert_eq!(doc["interrupted"], true, "{doc}");
    assert!(!dir.path().join("r.2.json").exists(), "{err}");
    assert!(!err.contains("run 2 of 3 ("), "{err}");
    assert!(err.contains("the 2 after it did not run"), "{err}");
}

/// A job file whose name is not UTF-8 is the file read, not the one its
/// lossy text names (`x\u{fffd}.fio`), given either way.
#[test]
fn a_job_file_name_that_is_not_utf8_is_read_as_given() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "target", 1 << 20);
    let name = std::ffi::OsStr::from_bytes(b"x\xff.fio");
    let job = dir.path().join(name);
    std::fs::write(&job, "[j]\nrw=read\nruntime=1\n").unwrap();
    let mut joined = std::ffi::OsString::from("--fio-job=");
    joined.push(&job);
    for words in [
        vec!["--fio-job".into(), job.clone().into_os_string()],
        vec![joined],
    ] {
        let out = sb()
            .arg("run")
            .args(&words)
            .arg("--print-fio")
            .arg(&f)
            .output()
            .unwrap();
        succeeded_as(&out, "run --fio-job x\\xff.fio --print-fio");
        assert_eq!(commands(&out.stderr).len(), 1);
    }
}

/// The sectors written to a block device since it was attached
/// (`/sys/block/NAME/stat`, field 7).
fn sectors_written(dev: &str) -> u64 {
    let name = Path::new(dev).file_name().unwrap().to_str().unwrap();
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    stat.split_whitespace().nth(6).unwrap().parse().unwrap()
}

/// A later group refused by its dry-run check (an offset past the end of
/// the device) stops the series before group 1's write begins: nothing is
/// written to the device, group 1's document is not written, and the
/// refusal names the group and says none ran.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root for a loop device")]
fn a_group_refused_at_check_time_stops_before_any_io() {
    let dir = tempfile::tempdir().unwrap();
    let img = data_file(dir.path(), "img", 8 << 20);
    let lo = crate::common::Loop::attach(&img, &[]);
    let before = crate::common::digest(img.to_str().unwrap());
    let job = dir.path().join("j.fio");
    std::fs::write(
        &job,
        "[global]\nbs=1m\nioengine=psync\ndirect=1\n[w]\nrw=write\n[r]\nstonewall\nrw=read\noffset=64m\nsize=1m\n",
    )
    .unwrap();
    let r = dir.path().join("r.json");
    let written = sectors_written(&lo.dev);
    let out = sb()
        .args(["run", "--fio-job", job.to_str().unwrap()])
        .args(["--no-progress", "--allow-destructive", "--json"])
        .arg(&r)
        .arg(&lo.dev)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("stripebench: error: run 2 of 2 (checked before any of them began; none ran): --offset 67108864 is beyond the end of"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!dir.path().join("r.1.json").exists(), "group 1 ran: {err}");
    assert_eq!(sectors_written(&lo.dev), written, "group 1 wrote: {err}");
    drop(lo);
    assert_eq!(crate::common::digest(img.to_str().unwrap()), before);
}

// Issue 41: fio's sequential mix (rw=rw, readwrite=readwrite) was refused
// ("stripebench mixes at random offsets only"); it runs now, reads and
// writes each in order through the region, at the share asked.
#[test]
fn fio_s_sequential_mix_runs_at_its_share() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a", 8 << 20);
    let job = dir.path().join("mix.fio");
    let out = dir.path().join("r.json");
    std::fs::write(&job, "[mix]\nreadwrite=readwrite\nrwmixwrite=30\nbs=4k\n").unwrap();
    let o = sb()
        .args(["run", "--fio-job"])
        .arg(&job)
        .args([
            "--debug-mock-engine",
            "1ms",
            "-t",
            "2s",
            "--ramp",
            "0",
            "--no-progress",
            "--allow-destructive",
            "--json",
        ])
        .arg(&out)
        .arg(&a)
        .output()
        .unwrap();
    succeeded_as(&o, 0);
    assert!(
        commands(&o.stderr)[0].contains("--rw=rw --mix=70"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let d = json(&std::fs::read(&out).unwrap());
    assert_eq!(d["config"]["rw"], "rw");
    let w = &d["workers"][0];
    let (r, wr) = (
        w["read_ios"].as_u64().unwrap(),
        w["write_ios"].as_u64().unwrap(),
    );
    let share = 100.0 * r as f64 / (r + wr) as f64;
    assert!(
        r + wr > 1500 && (65.0..75.0).contains(&share),
        "{r} reads, {wr} writes"
    );
}

/// A log line's fields as fio's t/run-fio-tests.py reads them for t0033
/// and t0034: `d` a number (`\d+`), `0` the number 0, `x` a hex priority
/// (`0x[\da-f]+`); whether `line` matches `pattern` written so.
fn fio_log_line_is(line: &str, pattern: &str) -> bool {
    let fields: Vec<&str> = line.split(", ").collect();
    let want: Vec<&str> = pattern.split(',').collect();
    fields.len() == want.len()
        && fields.iter().zip(&want).all(|(f, w)| match *w {
            "0" => *f == "0",
            "x" => f
                .strip_prefix("0x")
                .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit())),
            _ => !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()),
        })
}

/// fio's t0033 and t0034 (its log format tests) as fio has them: jobs of
/// one group, different workloads, run at once, on their 8k file. Every
/// log fio's check reads is written, its first line in the form the check
/// requires; t0034's slat log is written empty (stripebench does not
/// measure submission apart); the runs' windows open together (each
/// starts well within half a window of the others: one after another they
/// would be a whole window apart).
#[test]
fn fio_s_log_format_tests_t0033_and_t0034_pass_on_our_logs() {
    let global = "[global]\nrw=read\nfilename=t0033file\nsize=8k\ntime_based\nruntime=1s\nioengine=libaio\niodepth=1\n";
    let t0033 = format!("{global}[job1]\nwrite_bw_log=log\nlog_prio=1\n[job2]\nwrite_lat_log=log\nlog_avg_msec=100\nlog_window_value=both\n[job3]\nwrite_iops_log=log\nlog_offset=1\nlog_prio=1\n[job4]\nwrite_iops_log=log\nlog_avg_msec=100\nlog_window_value=both\nlog_offset=1\n");
    let t0034 = format!("{global}[job1]\nwrite_lat_log=log\nlog_offset=1\nlog_issue_time=1\n[job2]\nwrite_lat_log=log\nlog_offset=1\nlog_issue_time=1\nlog_avg_msec=100\nlog_window_value=both\n[job3]\nwrite_lat_log=log\nwrite_bw_log=log\nwrite_iops_log=log\nlog_offset=1\nlog_issue_time=1\n");
    let checks: [(&str, &[(&str, &str)]); 2] = [
        (
            &t0033,
            &[
                ("log_bw.1.log", "d,d,d,d,x"),
                ("log_clat.2.log", "d,d,d,d,0,d"),
                ("log_iops.3.log", "d,d,d,d,d,x"),
                ("log_iops.4.log", "d,d,d,d,0,0,d"),
            ],
        ),
        (
            &t0034,
            &[
                ("log_clat.1.log", "d,d,d,d,d,d,d"),
                ("log_lat.1.log", "d,d,d,d,d,d,0"),
                ("log_clat.2.log", "d,d,d,d,0,0,d,0"),
                ("log_bw.3.log", "d,d,d,d,d,d,0"),
                ("log_iops.3.log", "d,d,d,d,d,d,0"),
            ],
        ),
    ];
    for (text, files) in checks {
        let dir = tempfile::tempdir().unwrap();
        data_file(dir.path(), "t0033file", 8192);
        let o = run_written(dir.path(), "t.fio", text);
        succeeded_as(&o, "run --fio-job t0033/t0034");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("a line per I/O"), "{err}");
        assert!(err.contains("at once with the run before it"), "{err}");
        let runs = if text.contains("[job4]") { 4 } else { 3 };
        let starts: Vec<f64> = (1..=runs)
            .map(|i| {
                let doc = run_doc(dir.path(), "r", i);
                assert_eq!(
                    crate::common::warnings_of(&doc, "ran_at_once").len(),
                    1,
                    "run {i}"
                );
                doc["window"]["start_unix_sec"].as_f64().unwrap()
            })
            .collect();
        let spread = starts.iter().cloned().fold(f64::MIN, f64::max)
            - starts.iter().cloned().fold(f64::MAX, f64::min);
        assert!(
            spread < 0.5,
            "the windows opened {spread:.3} s apart: {starts:?}"
        );
        for (file, pattern) in files {
            let text = std::fs::read_to_string(dir.path().join(file))
                .unwrap_or_else(|e| panic!("{file}: {e}\n{err}"));
            let first = text.lines().next().unwrap_or("");
            assert!(
                fio_log_line_is(first, pattern),
                "{file}: {first:?} is not {pattern}"
            );
            // Each line at its interval's end, in order, within the run.
            let times: Vec<u64> = text
                .lines()
                .map(|l| l.split(", ").next().unwrap().parse().unwrap())
                .collect();
            assert!(times.windows(2).all(|w| w[0] < w[1]), "{file}: {times:?}");
            assert!(
                times.last().is_some_and(|&t| (50..=1100).contains(&t)),
                "{file}: {times:?}"
            );
        }
        if text.contains("log_issue_time") {
            let slat = std::fs::read_to_string(dir.path().join("log_slat.1.log")).unwrap();
            assert_eq!(slat, "", "t0034's slat log");
        }
    }
}

/// A window's figures are the run's: log_avg_msec=200 over 1 s gives five
/// lines, whose KiB/s and IOPS agree with the document's bytes and I/Os.
#[test]
fn a_windowed_fio_log_holds_the_run_s_figures() {
    let dir = tempfile::tempdir().unwrap();
    data_file(dir.path(), "f", 1 << 20);
    std::fs::write(
        dir.path().join("w.fio"),
        "[w]\nrw=randread\nbs=4k\nfilename=f\ntime_based\nruntime=1\nwrite_bw_log=w\nwrite_iops_log=w\nwrite_lat_log=w\nlog_avg_msec=200\n",
    )
    .unwrap();
    let o = sb()
        .current_dir(dir.path())
        .args([
            "run",
            "--fio-job",
            "w.fio",
            "--debug-mock-engine",
            "1ms",
            "--no-progress",
            "--json",
            "r.json",
        ])
        .output()
        .unwrap();
    succeeded_as(&o, "run --fio-job w.fio");
    let doc = json(&std::fs::read(dir.path().join("r.json")).unwrap());
    let w = &doc["workers"][0];
    let read = |f: &str| -> Vec<Vec<u64>> {
        std::fs::read_to_string(dir.path().join(f))
            .unwrap()
            .lines()
            .map(|l| l.split(", ").map(|v| v.parse().unwrap()).collect())
            .collect()
    };
    let (bw, iops, lat) = (
        read("w_bw.1.log"),
        read("w_iops.1.log"),
        read("w_lat.1.log"),
    );
    assert_eq!(bw.len(), 5, "{bw:?}");
    assert_eq!(
        iops.iter().map(|l| l[0]).collect::<Vec<_>>(),
        [200, 400, 600, 800, 1000]
    );
    // KiB/s over 200 ms windows back to bytes, and I/O/s back to I/Os.
    let bytes: u64 = bw.iter().map(|l| l[1] * 1024 / 5).sum();
    let ios: u64 = iops.iter().map(|l| l[1] / 5).sum();
    let (want_bytes, want_ios) = (w["bytes"].as_u64().unwrap(), w["ios"].as_u64().unwrap());
    assert!(
        bytes.abs_diff(want_bytes) <= 5 * 1024,
        "{bytes} vs {want_bytes}"
    );
    assert!(ios.abs_diff(want_ios) <= 5, "{ios} vs {want_ios}");
    // Read direction, windowed block size 0; the mock's 1 ms latency.
    assert!(
        bw.iter().all(|l| l[2] == 0 && l[3] == 0 && l.len() == 5),
        "{bw:?}"
    );
    assert!(
        lat.iter().all(|l| (900_000..2_000_000).contains(&l[1])),
        "{lat:?}"
    );
}

/// fio's filesize= with a filename= (and no size=): the job uses the
/// file's first filesize bytes; a file that is not there is made that size
/// (random data, as fio lays it out) and written to as stripebench's own,
/// with no --allow-destructive; one that exists, or one made by an
/// earlier command, keeps the write guard's rule; a dry run makes nothing.
#[test]
fn fio_s_filesize_makes_a_missing_file_that_size_and_uses_its_first_bytes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.fio"),
        "[test]\nfilename=new\nfilesize=256K\ntime_based\nruntime=1s\nrw=randwrite\nbs=4k\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        sb().current_dir(dir.path())
            .args(["run", "--fio-job", "t.fio", "-t", "300ms", "--no-progress"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&["--dry-run"]);
    assert!(!dir.path().join("new").exists(), "a dry run made the file");
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&["--json", "r.json"]);
    succeeded_as(&o, "filesize= on a missing file");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--size=256k --create=256k"), "{err}");
    assert!(err.contains("stripebench: created new (256.0 KiB"), "{err}");
    let data = std::fs::read(dir.path().join("new")).unwrap();
    assert_eq!(data.len(), 256 << 10);
    assert!(
        data.iter().filter(|&&b| b == 0).count() < data.len() / 8,
        "not random data"
    );
    let doc = json(&std::fs::read(dir.path().join("r.json")).unwrap());
    assert_eq!(doc["config"]["size"], 256 << 10);
    assert!(doc["total"]["ios"].as_u64().unwrap() > 0, "{doc}");
    // Made by an earlier command: the write guard's consent again.
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("a file stripebench did not create"), "{err}");
    // A file that exists, larger, is used as it is: not cut, not refilled.
    let old = data_file(dir.path(), "old", 1 << 20);
    std::fs::write(
        dir.path().join("r.fio"),
        "[r]\nfilename=old\nfilesize=256K\nrw=read\nbs=4k\n",
    )
    .unwrap();
    let o = sb()
        .current_dir(dir.path())
        .args([
            "run",
            "--fio-job",
            "r.fio",
            "--no-progress",
            "--json",
            "r2.json",
        ])
        .output()
        .unwrap();
    succeeded_as(&o, "filesize= on a file that exists");
    assert_eq!(std::fs::metadata(&old).unwrap().len(), 1 << 20);
    let doc = json(&std::fs::read(dir.path().join("r2.json")).unwrap());
    assert_eq!(
        doc["total"]["bytes"],
        256 << 10,
        "one pass over the first 256 KiB"
    );
    // size= beside it, or a range, is refused by name.
    for (text, said) in [
        (
            "[j]\nfilename=x\nfilesize=2m\nsize=1m\n",
            "`filesize=2m` with a size= below it",
        ),
        (
            "[j]\nfilename=x\nfilesize=1m-2m\n",
            "`filesize=1m-2m` is a range",
        ),
    ] {
        std::fs::write(dir.path().join("bad.fio"), text).unwrap();
        let o = sb()
            .current_dir(dir.path())
            .args(["run", "--fio-job", "bad.fio", "--dry-run"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(said) && err.lines().count() == 1, "{err}");
    }
}

/// `run --fio-job` on fio's example `name` over `f`, with `args`; its
/// JSON document, its printed command and its table.
fn run_example(
    dir: &Path,
    name: &str,
    f: &Path,
    args: &[&str],
) -> (serde_json::Value, String, String) {
    let doc = dir.join(format!("{name}.json"));
    let out = sb()
        .args(["run", "--fio-job", example(name).to_str().unwrap()])
        .args(["--debug-mock-engine", "10us", "--no-progress", "--json"])
        .arg(&doc)
        .args(args)
        .arg(f)
        .output()
        .unwrap();
    succeeded_as(&out, 0);
    let cmd = commands(&out.stderr).join("\n");
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    (json(&std::fs::read(&doc).unwrap()), cmd, table)
}

// Issue 41: fio's rand-zones.fio (random_distribution=zoned:50/5:30/15:20/)
// was refused by the option's name; it runs with --dist, recorded in the
// run's config as fio spells it (the last zone's size filled in).
#[test]
fn rand_zones_example_runs_with_its_zoned_distribution() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "target", 8 << 20);
    let (d, cmd, table) = run_example(
        dir.path(),
        "rand-zones.fio",
        &f,
        &["--size", "8m", "-t", "1s"],
    );
    assert!(cmd.contains("--dist=zoned:50/5:30/15:20/80"), "{cmd}");
    assert!(
        table.contains("randread, dist zoned:50/5:30/15:20/80, bs 4k"),
        "{table}"
    );
    assert_eq!(d["config"]["dist"], "zoned:50/5:30/15:20/80");
    assert_eq!(d["config"]["rw"], "randread");
    assert!(d["total"]["ios"].as_u64().unwrap() > 0);
}

// Issue 41: fio's backwards-read.fio (rw=read:-8k, bs=4k, size=128m)
// was refused over the offset modifier; it reads size= bytes going back
// 4 KiB at a time, as fio does.
#[test]
fn backwards_read_example_reads_its_size_going_back() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "target", 1 << 20);
    let (d, cmd, table) = run_example(dir.path(), "backwards-read.fio", &f, &["--size", "1m"]);
    assert!(table.contains("read, back 8k, bs 4k"), "{table}");
    assert!(cmd.contains("--skip=-8k"), "{cmd}");
    assert_eq!(d["config"]["skip"], -8192);
    assert_eq!(d["total"]["bytes"], 1 << 20);
}

// Issue 41: offset_increment with numjobs: clone k starts k increments
// on, each over size= bytes, as fio's get_start_offset places them.
#[test]
fn offset_increment_places_each_clone_k_increments_on() {
    let dir = tempfile::tempdir().unwrap();
    let f = data_file(dir.path(), "target", 4 << 20);
    let job = dir.path().join("inc.fio");
    std::fs::write(
        &job,
        "[j]\nrw=read\nbs=64k\nnumjobs=3\nsize=512k\noffset=256k\noffset_increment=1m\n",
    )
    .unwrap();
    let doc = dir.path().join("r.json");
    let out = sb()
        .args(["run", "--fio-job", job.to_str().unwrap()])
        .args(["--debug-mock-engine", "10us", "--no-progress", "--json"])
        .arg(&doc)
        .arg(&f)
        .output()
        .unwrap();
    succeeded_as(&out, 0);
    let d = json(&std::fs::read(&doc).unwrap());
    assert_eq!(d["config"]["offset_increment"], 1 << 20);
    let w = d["workers"].as_array().unwrap();
    assert_eq!(w.len(), 3);
    for (k, w) in w.iter().enumerate() {
        assert_eq!(w["region"]["offset"], (256 << 10) + k * (1 << 20), "{w}");
        assert_eq!(w["region"]["length"], 512 << 10, "{w}");
        assert_eq!(w["bytes"], 512 << 10, "{w}");
    }
    // One too many for the target: said, exit 2.
    let out = sb()
        .args(["run", "--fio-job", job.to_str().unwrap()])
        .args(["--debug-mock-engine", "10us", "--jobs", "5"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = e.lines().filter(|l| l.contains("error:")).collect();
    assert!(
        errors.len() == 1 && errors[0].contains("job 4's region"),
        "{e}"
    );
}

/// fio's t0003 (a bug of verify with two block sizes): its pre-job's two
/// writers run at once on one file (512-byte blocks at 0, 1 MiB ones at
/// 1 GiB) and exit 0; its post-job reads each region with the other's
/// block size, verifying, and fio's t/run-fio-tests.py requires that it
/// fail (SUCCESS_NONZERO): it does, naming the block size written.
#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn fio_s_t0003_writes_at_once_and_its_mismatched_verify_fails() {
    let dir = tempfile::tempdir().unwrap();
    let foo = std::fs::File::create(dir.path().join("foo")).unwrap();
    foo.set_len((1 << 30) + (10 << 20)).unwrap();
    let global = "[global]\nioengine=libaio\ndirect=1\nfilename=foo\niodepth=128\nloops=1\ngroup_reporting=1\nverify=md5\nnumjobs=1\nthread\nverify_dump=1\n";
    let pre = format!("{global}size=10M\nreadwrite=write\ndo_verify=0\n[small_writes]\noffset=0G\nblocksize=512\n[large_writes]\noffset=1G\nblocksize=1M\n");
    let post = format!("{global}size=1M\nreadwrite=read\ndo_verify=1\nverify_fatal=1\nbs=4k\n[large_reads]\noffset=0G\nblocksize=1M\n[small_reads]\noffset=1G\nblocksize=512\n");
    std::fs::write(dir.path().join("pre.fio"), pre).unwrap();
    std::fs::write(dir.path().join("post.fio"), post).unwrap();
    let run = |file: &str, extra: &[&str]| {
        sb().current_dir(dir.path())
            .args(["run", "--fio-job", file, "--no-progress"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run("pre.fio", &["--allow-destructive", "--json", "pre.json"]);
    succeeded_as(&o, "t0003's pre-job");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("run 2 of 2 ([large_writes]), at once"),
        "{err}"
    );
    for (i, bytes) in [(1, 10u64 << 20), (2, 10 << 20)] {
        let doc = run_doc(dir.path(), "pre", i);
        assert_eq!(
            doc["total"]["bytes"].as_u64(),
            Some(bytes),
            "pre-job run {i} wrote its 10 MiB: {}",
            doc["total"]
        );
    }
    let o = run("post.fio", &["--allow-holes"]);
    assert_ne!(
        o.status.code(),
        Some(0),
        "fio's check: t0003's post-job fails"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("written with --bs 512"), "{err}");
}

/// An interrupt while a group's runs go at once stops every one of them,
/// and each keeps what it measured in its own document (none is lost, and
/// none is left waiting).
#[test]
fn an_interrupt_stops_every_run_at_once_and_each_keeps_its_figures() {
    let dir = tempfile::tempdir().unwrap();
    data_file(dir.path(), "f", 1 << 20);
    let job = "[global]\nfilename=f\nsize=1m\ntime_based\nruntime=60s\n[a]\nrw=read\nbs=4k\n[b]\nrw=randread\nbs=8k\n[c]\nrw=read\nbs=4k\nstartdelay=60s\n";
    std::fs::write(dir.path().join("t.fio"), job).unwrap();
    let json = dir.path().join("r.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
        .env("STRIPEBENCH_STATE_DIR", crate::common::state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .current_dir(dir.path())
        .args(["run", "--fio-job", "t.fio", "--no-progress", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    crate::common::wait_for("the three runs' workers", || {
        crate::common::threads_named(pid, "sb-worker-") >= 3
    });
    std::thread::sleep(std::time::Duration::from_millis(700));
    crate::common::interrupt(&child);
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for i in 1..=2 {
        let doc = run_doc(dir.path(), "r", i);
        assert_eq!(
            doc["window"]["ended_by"], "interrupted",
            "run {i}: {}",
            doc["window"]
        );
        assert!(
            doc["total"]["ios"].as_u64().unwrap() > 0,
            "run {i}: {}",
            doc["total"]
        );
    }
    // The third was still in its startdelay: its --json says it measured
    // nothing, rather than being left unwritten.
    let third = std::fs::read_to_string(dir.path().join("r.3.json")).unwrap();
    assert!(
        third.contains("interrupted") && !third.contains("\"total\""),
        "{third}"
    );
}

/// fio's examples/aio-read.fio (its size made small): no filename=, a
/// directory=: each job's file is fio's `$jobname.$jobnum.$filenum` there,
/// laid out as it is not there, and the four jobs (each its own iodepth)
/// run at once, each reading its file once.
#[test]
#[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
fn fio_s_aio_read_example_names_its_files_in_the_directory_and_runs_at_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data1")).unwrap();
    let job = "[global]\nioengine=libaio\nbuffered=0\nrw=randread\nbs=128k\nsize=4m\ndirectory=data1\n[file1]\niodepth=4\n[file2]\niodepth=32\n[file3]\niodepth=8\n[file4]\niodepth=16\n";
    let o = run_written(dir.path(), "aio-read.fio", job);
    succeeded_as(&o, "aio-read.fio");
    for i in 1..=4 {
        let file = dir.path().join(format!("data1/file{i}.0.0"));
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 4 << 20, "{file:?}");
        let doc = run_doc(dir.path(), "r", i);
        assert_eq!(doc["total"]["bytes"].as_u64(), Some(4 << 20), "run {i}");
        assert_eq!(
            doc["config"]["iodepth"].as_u64(),
            Some([4, 32, 8, 16][i - 1]),
            "run {i}"
        );
    }
}

/// Runs at once on one device pool its counters: each run's device
/// bytes are set against the bytes of every run on it, so two buffered
/// reads of one small region, served by the page cache, are each told
/// they measured memory (seen: with each run's ratio dropped, neither
/// was, at 2.7 GB/s from a 1 MiB file).
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root for a loop device")]
fn runs_at_once_on_one_device_judge_the_cache_over_all_their_bytes() {
    let bed = crate::common::LoopBed::new(1, 16);
    let dev = &bed.devices[0];
    let dir = tempfile::tempdir().unwrap();
    let job = format!("[global]\nfilename={dev}\nsize=1m\ntime_based\nruntime=1s\n[a]\nrw=read\nbs=4k\n[b]\nrw=randread\nbs=8k\n");
    let o = run_written(dir.path(), "t.fio", &job);
    succeeded_as(&o, "two buffered reads at once");
    let docs: Vec<serde_json::Value> = (1..=2).map(|i| run_doc(dir.path(), "r", i)).collect();
    let app = |d: &serde_json::Value| {
        d["targets"][0]["device"]["app_read_bytes"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(app(&docs[0]), app(&docs[1]), "one pool");
    let own: u64 = docs
        .iter()
        .map(|d| d["total"]["bytes"].as_u64().unwrap())
        .sum();
    assert!(
        app(&docs[0]) >= own,
        "the pool holds both runs' bytes: {} < {own}",
        app(&docs[0])
    );
    for d in &docs {
        assert_eq!(
            crate::common::warnings_of(d, "cache_served_reads").len(),
            1,
            "{}",
            d["warnings"]
        );
    }
}

/// fio's t0031: its pre-job writes for a second, logging each I/O
/// (write_iolog), and t0031 replays that log (read_iolog) with a latency
/// log. fio's t/run-fio-tests.py requires both to exit 0 (SUCCESS_DEFAULT).
/// The replay moves the bytes the log holds: every I/O the pre-job did.
#[test]
fn fio_s_t0031_replays_the_iolog_its_pre_job_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let pre = "[job]\nrw=write\nioengine=libaio\nsize=1mb\ntime_based=1\nruntime=1\nfilename=t0030file\nwrite_iolog=iolog\n";
    let job = "[job]\nrw=read\nioengine=libaio\niodepth=128\nfilename=t0030file\nread_iolog=iolog\nwrite_lat_log=lat_log\n";
    std::fs::write(dir.path().join("t0031-pre.fio"), pre).unwrap();
    std::fs::write(dir.path().join("t0031.fio"), job).unwrap();
    let run = |file: &str, json: &str, extra: &[&str]| {
        sb().current_dir(dir.path())
            .args(["run", "--fio-job", file, "--no-progress", "--json", json])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run("t0031-pre.fio", "pre.json", &["--create", "1m"]);
    succeeded_as(&o, "t0031's pre-job");
    let pre = json(&std::fs::read(dir.path().join("pre.json")).unwrap());
    let written = pre["total"]["bytes"].as_u64().unwrap();
    assert!(written >= 4096, "{}", pre["total"]);
    let log = std::fs::read_to_string(dir.path().join("iolog")).unwrap();
    assert!(
        log.starts_with("fio version 3 iolog\n"),
        "{}",
        &log[..40.min(log.len())]
    );
    // The replay writes again what the log wrote: consent, as fio's
    // runner gives it by running it at all.
    let o = run("t0031.fio", "job.json", &["--allow-destructive"]);
    succeeded_as(&o, "t0031");
    let doc = json(&std::fs::read(dir.path().join("job.json")).unwrap());
    // The log holds every I/O issued, the one in flight at the pre-job's
    // close too (its window did not count it): the replay moves them all.
    let logged: u64 = log
        .lines()
        .filter_map(|l| l.split_whitespace().nth(4)?.parse::<u64>().ok())
        .sum();
    assert_eq!(
        doc["total"]["bytes"].as_u64(),
        Some(logged),
        "{}",
        doc["total"]
    );
    assert!(
        (written..=written + 4096).contains(&logged),
        "{written} {logged}"
    );
    let lat = std::fs::read_to_string(dir.path().join("lat_log_clat.1.log")).unwrap();
    assert!(!lat.trim().is_empty());
}

// Issue 41: examples/exitwhat.fio's thinktime=2000 was refused as unknown.
// fio pauses after each I/O (here 20 ms after each of 20): the window
// holds the pauses, so the rate includes them as fio's does, while the
// latencies stay the I/Os' own. Lower bounds only: a slow machine makes
// the window longer, never shorter.
#[test]
fn thinktime_pauses_after_each_io_and_the_window_holds_the_pauses() {
    let dir = tempfile::tempdir().unwrap();
    data_file(dir.path(), "a", 1 << 20);
    let job = "[j]\nfilename=a\nrw=read\nbs=4k\nioengine=psync\nthinktime=20000\nnumber_ios=20\n";
    let o = run_written(dir.path(), "think.fio", job);
    succeeded_as(&o, "thinktime=20000");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        commands(&o.stderr)[0].contains("--thinktime=20ms"),
        "{stderr}"
    );
    let d = json(&std::fs::read(dir.path().join("r.json")).unwrap());
    let t = &d["total"];
    assert_eq!(t["ios"], 20, "{t}");
    // 20 pauses of 20 ms, less the last (nothing is left to issue).
    let secs = d["window"]["seconds"].as_f64().unwrap();
    assert!(secs >= 0.38, "19 pauses of 20 ms in {secs} s");
    let p50 = t["latency_ns"]["p50"].as_u64().unwrap();
    assert!(
        p50 < 20_000_000,
        "the latencies hold the pauses: p50 {p50} ns"
    );
    // Every fourth I/O: four pauses (the last not taken) in 20 I/Os.
    let job = job.replace("number_ios=20", "number_ios=20\nthinktime_blocks=4");
    let o = run_written(dir.path(), "think4.fio", &job);
    succeeded_as(&o, "thinktime_blocks=4");
    let d = json(&std::fs::read(dir.path().join("r.json")).unwrap());
    let secs = d["window"]["seconds"].as_f64().unwrap();
    assert!(secs >= 0.078, "4 pauses of 20 ms in {secs} s");
}

// Issue 41: examples/exitwhat.fio's exitall=1 was refused as unknown. fio
// stops the jobs running when one ends (exit_what=stonewall: every one
// running): the run at once with it closes its window then, and says so,
// rather than running its 4 MiB at 100 KiB/s (40 s). Measured with fio
// 3.42 on such a file: the fast job ended with the slow one.
#[test]
fn exitall_closes_the_runs_at_once_when_one_ends() {
    let dir = tempfile::tempdir().unwrap();
    data_file(dir.path(), "a", 4 << 20);
    let job = "[global]\nfilename=a\nbs=4k\nioengine=psync\nexitall=1\n\
               [slow]\nrw=read\nthinktime=2000\nnumber_ios=50\nexit_what=stonewall\n\
               [fast]\nnew_group\nrw=randread\nrate=100k\n";
    let o = run_written(dir.path(), "exit.fio", job);
    succeeded_as(&o, "exitall=1");
    let slow = run_doc(dir.path(), "r", 1);
    let fast = run_doc(dir.path(), "r", 2);
    assert_eq!(slow["window"]["ended_by"], "limit", "{}", slow["window"]);
    assert_eq!(slow["total"]["ios"], 50);
    assert_eq!(fast["window"]["ended_by"], "exitall", "{}", fast["window"]);
    let secs = fast["window"]["seconds"].as_f64().unwrap();
    assert!(secs < 20.0, "the fast run went on for {secs} s");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("fio's exitall"), "{table}");
}

// exit_what=all: the runs after the one that ended never start, as fio
// starts none of its jobs after; without exitall they run.
#[test]
fn exit_what_all_starts_no_run_after_it() {
    let dir = tempfile::tempdir().unwrap();
    data_file(dir.path(), "a", 1 << 20);
    let job = "[global]\nfilename=a\nbs=4k\nioengine=psync\n\
               [first]\nrw=read\nnumber_ios=10\nexitall=1\nexit_what=all\n\
               [second]\nstonewall\nrw=read\nnumber_ios=10\n";
    let o = run_written(dir.path(), "all.fio", job);
    succeeded_as(&o, "exit_what=all");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("exit_what=all"), "{stderr}");
    assert!(dir.path().join("r.1.json").exists());
    assert!(!dir.path().join("r.2.json").exists(), "{stderr}");
    let o = run_written(dir.path(), "plain.fio", &job.replace("exitall=1\n", ""));
    succeeded_as(&o, "no exitall");
    assert!(dir.path().join("r.2.json").exists());
}

/// Two alike fio jobs on one file are two jobs each over all of it (fio's
/// exitwhat.fio: fast2 and runsnever): runs at once. They were one run
/// naming the file twice, refused ("named twice") once its check came.
#[test]
fn alike_jobs_on_one_file_run_at_once_not_as_one_run_naming_it_twice() {
    let dir = tempfile::tempdir().unwrap();
    data_file(dir.path(), "f", 1 << 20);
    let job = "[global]\nfilename=f\nsize=1m\nbs=4k\nrw=read\nnumber_ios=64\n[a]\n[b]\n";
    let out = run_written(dir.path(), "t.fio", job);
    succeeded_as(&out, "two alike jobs on one file");
    for i in 1..=2 {
        let d = run_doc(dir.path(), "r", i);
        assert_eq!(
            d["total"]["ios"].as_u64(),
            Some(64),
            "run {i}: {}",
            d["total"]
        );
    }
}
