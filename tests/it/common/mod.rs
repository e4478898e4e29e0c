//! Helpers shared by the integration tests: the binary, temporary targets,
//! loop devices (root only, removed on every exit path through Drop).
//!
//! A test that needs what this machine may lack (root, io_uring, a tool) is
//! marked `#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]`,
//! with the flags build.rs decides, so `cargo test` lists it as ignored with
//! its reason. A test that runs never skips itself: when what it needs is
//! missing after all (a stale build, or `CI=true`, which sets every flag),
//! `require` and the helpers below fail it, saying what was missing.

#![allow(dead_code)]

pub mod guest;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The latency histogram a document holds (base64), decoded.
pub fn hist(v: &Value) -> stripebench::analysis::histogram::LatencyHistogram {
    stripebench::analysis::histogram::LatencyHistogram::from_base64(v.as_str().unwrap()).unwrap()
}

/// A histogram's non-empty buckets: the highest value each stands for, and
/// its count.
pub fn buckets(
    h: &stripebench::analysis::histogram::LatencyHistogram,
) -> std::collections::BTreeMap<u64, u64> {
    h.inner()
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

/// Gives a child the default action for the signals a test sends, whatever
/// the test process inherited. A shell cannot trap a signal that was ignored
/// when it started, and `cargo test` run from a script's background job (or
/// under nohup) inherits SIGINT ignored: fleet.sh then ran its 60 s to the
/// end and exited 0 instead of stopping with 130.
pub fn default_signals(c: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: signal(2) is async-signal-safe, and only that runs between
    // fork and exec.
    unsafe {
        c.pre_exec(|| {
            for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                libc::signal(s, libc::SIG_DFL);
            }
            Ok(())
        })
    }
}

#[track_caller]
pub fn sb() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("stripebench").expect("binary built");
    c.env("STRIPEBENCH_STATE_DIR", state_dir())
        .env("STRIPEBENCH_HISTORY", history_db());
    c
}

/// The state directory (locks, settings to restore, test-bed records) of
/// the test file that calls (through `#[track_caller]` helpers), under
/// cargo's target tmpdir: what other runs on the machine left in
/// /run/stripebench never reaches these tests, and theirs never reaches the
/// machine's; and what one file's tests leave (a killed run's pending
/// restore) never reaches another file's, whose tests may run beside them
/// in the same test program. Every way these tests start the binary sets it.
#[track_caller]
pub fn state_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "state-{}-{}",
        std::process::id(),
        caller_stem()
    ))
}

/// The name of the test file that called (through `#[track_caller]`s).
#[track_caller]
fn caller_stem() -> String {
    Path::new(std::panic::Location::caller().file())
        .file_stem()
        .map_or_else(|| "tests".into(), |s| s.to_string_lossy().into_owned())
}

/// The history database the stripebench a test program runs records in
/// (`STRIPEBENCH_HISTORY`): one per test program, never the machine's.
#[track_caller]
pub fn history_db() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "history-{}-{}.db",
        std::process::id(),
        caller_stem()
    ))
}

/// A file of `size` bytes of non-zero data.
pub fn data_file(dir: &Path, name: &str, size: usize) -> PathBuf {
    let p = dir.join(name);
    let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8 + 1).collect();
    std::fs::write(&p, data).unwrap();
    p
}

/// Fails the test unless the command that gave `out` ran and succeeded,
/// showing its exit status, its stderr and (when it wrote any) its stdout:
/// the one place that says how a failed command is shown.
#[track_caller]
pub fn succeeded(out: &std::process::Output) {
    succeeded_as(out, "");
}

/// [`succeeded`], naming what ran (`what` comes first in the message).
#[track_caller]
pub fn succeeded_as(out: &std::process::Output, what: impl std::fmt::Display) {
    if out.status.success() {
        return;
    }
    let what = what.to_string();
    let sep = if what.is_empty() { "" } else { ": " };
    let stdout = if out.stdout.is_empty() {
        String::new()
    } else {
        format!("\n--- stdout\n{}", String::from_utf8_lossy(&out.stdout))
    };
    panic!(
        "{what}{sep}{}\n--- stderr\n{}{stdout}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `stripebench SUBCOMMAND --json - ARGS...`, which must succeed; its
/// document. `--json -` goes right after the subcommand, so ARGS may hold
/// a `--` before targets.
#[track_caller]
pub fn run_json(args: &[&str]) -> Value {
    let out = sb()
        .args(&args[..1])
        .args(["--json", "-"])
        .args(&args[1..])
        .output()
        .unwrap();
    succeeded_as(&out, format_args!("{args:?}"));
    json(&out.stdout)
}

/// `stripebench ARGS` in the background (to be signalled), output captured.
#[track_caller]
pub fn spawn(args: &[&str]) -> std::process::Child {
    Command::new(assert_cmd::cargo::cargo_bin("stripebench"))
        .env("STRIPEBENCH_STATE_DIR", state_dir())
        .env("STRIPEBENCH_HISTORY", history_db())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Sends SIGINT to a child.
pub fn interrupt(child: &std::process::Child) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
}

/// Runs a system command; true when it succeeded.
pub fn sh(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// A mount, unmounted on drop (also when an assertion fails).
pub struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Fails the running test when `ok` is false: a requirement that build.rs
/// found (or that `CI=true` demands) is missing now. Never a silent pass.
pub fn require(ok: bool, what: &str) {
    assert!(
        ok,
        "{what}: this test was built to run here (build.rs found it, or CI=true demands it); \
         provide it, or rebuild outside CI to have the test listed as ignored"
    );
}

/// Fails a test marked `sb_uring` when io_uring is unavailable after all.
pub fn require_uring() {
    let probe = stripebench::engine::uring::probe();
    require(probe.is_ok(), &format!("needs io_uring: {probe:?}"));
}

/// A system tool where build.rs looks for it: on PATH, then in the sbin
/// directories a user's PATH may lack (Debian's does, root's does not):
/// mkfs.ext4 and friends live there.
pub fn tool(cmd: &str) -> PathBuf {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .filter(|d| !d.is_empty())
        .chain(["/usr/sbin", "/sbin"])
        .map(|d| Path::new(d).join(cmd))
        .find(|p| p.is_file());
    found.unwrap_or_else(|| cmd.into())
}

/// fio itself on the job file `job`, run in `dir` (where the job's own
/// files go): its JSON output, parsed (what fio prints before it skipped).
pub fn fio_on(dir: &Path, job: &Path) -> Value {
    let out = Command::new(tool("fio"))
        .current_dir(dir)
        .arg(job)
        .arg("--output-format=json")
        .output()
        .unwrap();
    succeeded_as(&out, format_args!("fio on {}", job.display()));
    let s = String::from_utf8(out.stdout).unwrap();
    serde_json::from_str(&s[s.find('{').expect(&s)..]).unwrap()
}

/// Runs a system command that the test needs; fails the test with the
/// command's own error output when it does not succeed.
pub fn sh_required(cmd: &str, args: &[&str]) {
    let out = Command::new(tool(cmd)).args(args).output();
    match out {
        Ok(o) => succeeded_as(&o, format_args!("{cmd} {args:?} failed")),
        Err(e) => panic!("{cmd} {args:?} could not run: {e}"),
    }
}

/// `mount ARGS AT`, which must succeed.
pub fn mount(args: &[&str], at: &Path) -> Mounted {
    let mut all: Vec<&str> = args.to_vec();
    all.push(at.to_str().unwrap());
    sh_required("mount", &all);
    Mounted(at.to_path_buf())
}

pub fn json(out: &[u8]) -> Value {
    serde_json::from_slice(out)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(out)))
}

/// A document's warning as its line says it: a typed warning's `text`
/// (beside its `kind` and fields), or a warning that is only its sentence.
pub fn warning_text(w: &Value) -> Option<&str> {
    w.as_str().or_else(|| w["text"].as_str())
}

/// A document's typed warnings of one `kind`, to assert on their fields.
#[track_caller]
pub fn warnings_of<'a>(doc: &'a Value, kind: &str) -> Vec<&'a Value> {
    let all = doc["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings array: {doc}"));
    all.iter().filter(|w| w["kind"] == kind).collect()
}

/// The sentences of a document's warnings that contain `phrase`, each
/// warning on its own (a warning that is only text has no fields to read).
#[track_caller]
pub fn warnings_saying<'a>(doc: &'a Value, phrase: &str) -> Vec<&'a str> {
    let all = doc["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings array: {doc}"));
    all.iter()
        .map(|w| warning_text(w).unwrap_or_else(|| panic!("a warning without text: {w}")))
        .filter(|t| t.contains(phrase))
        .collect()
}

/// A JSON number as u64, or a panic that shows the value.
pub fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

/// A JSON number as f64.
pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Loop devices made by scripts/testbed.sh; detached when dropped.
pub struct LoopBed {
    dir: tempfile::TempDir,
    pub devices: Vec<String>,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/testbed.sh")
}

impl LoopBed {
    /// N loop devices of SIZE_MB each. Fails the test when not root or when
    /// the devices cannot be attached (mark the test with `sb_root`).
    pub fn new(n: usize, size_mb: usize) -> LoopBed {
        require(is_root(), "needs root: loop devices");
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("bash")
            .arg(script())
            .args([
                "up",
                dir.path().to_str().unwrap(),
                &n.to_string(),
                &size_mb.to_string(),
            ])
            .output()
            .unwrap();
        let bed = LoopBed {
            devices: String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_string)
                .collect(),
            dir,
        };
        succeeded_as(&out, "loop devices unavailable");
        assert_eq!(
            bed.devices.len(),
            n,
            "loop devices unavailable: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        bed
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for LoopBed {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .args(["down", self.dir.path().to_str().unwrap()])
            .status();
    }
}

/// One zram device of `size_mb` MiB, added with zram-control's hot_add
/// (loading the module when it is not), reset and removed on drop. A
/// device with no non-blocking path, so io_uring hands every I/O on it to
/// an io-wq kernel thread.
pub struct Zram {
    pub dev: String,
    id: String,
}

impl Zram {
    /// A zram device written whole with incompressible data: a run reads
    /// it (a never-written one is refused: its reads are fills from
    /// memory, issue 39).
    pub fn new(size_mb: usize) -> Zram {
        let z = Zram::unwritten(size_mb);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut block = vec![0u8; size_mb << 20];
        for chunk in block.chunks_mut(8) {
            // xorshift64: incompressible enough for zram.
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            chunk.copy_from_slice(&seed.to_le_bytes()[..chunk.len()]);
        }
        std::fs::write(&z.dev, &block).unwrap_or_else(|e| panic!("{}: {e}", z.dev));
        z
    }

    /// A zram device never written: every read is a fill from memory.
    pub fn unwritten(size_mb: usize) -> Zram {
        require(is_root(), "needs root: zram devices");
        let control = Path::new("/sys/class/zram-control/hot_add");
        if !control.exists() {
            let _ = Command::new("modprobe")
                .args(["zram", "num_devices=0"])
                .status();
        }
        let id = std::fs::read_to_string(control);
        require(id.is_ok(), &format!("needs zram: {control:?}: {id:?}"));
        let id = id.unwrap().trim().to_string();
        let z = Zram {
            dev: format!("/dev/zram{id}"),
            id,
        };
        std::fs::write(
            format!("/sys/block/zram{}/disksize", z.id),
            format!("{size_mb}M"),
        )
        .unwrap_or_else(|e| panic!("zram{} disksize: {e}", z.id));
        z
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        // Both refuse (EBUSY) while anything has the device open, as a
        // parallel test's probe of every block device may for a moment
        // (seen: a 16 MiB zram0 left after a CI run): try for a while.
        let reset = format!("/sys/block/zram{}/reset", self.id);
        for _ in 0..500 {
            if std::fs::write(&reset, "1").is_ok()
                && std::fs::write("/sys/class/zram-control/hot_remove", &self.id).is_ok()
            {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        eprintln!("zram{}: still busy after 10 s, not removed", self.id);
    }
}

/// One loop device over `file` (extra `losetup` options such as `-o`,
/// `--sizelimit`, `-r`), detached on drop while still backed by that file.
pub struct Loop {
    pub dev: String,
    file: PathBuf,
}

impl Loop {
    /// Attaches a loop device, which must succeed (root; see `require`).
    pub fn attach(file: &Path, extra: &[&str]) -> Loop {
        require(is_root(), "needs root to attach loop devices");
        let out = Command::new("losetup")
            .args(["-f", "--show", "--direct-io=on"])
            .args(extra)
            .arg(file)
            .output()
            .unwrap_or_else(|e| panic!("losetup could not run: {e}"));
        succeeded_as(&out, format_args!("losetup {extra:?} {}", file.display()));
        Loop {
            dev: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            file: file.to_path_buf(),
        }
    }

    /// A loop device over a sparse file `name` of `bytes` in `dir` (the
    /// file too, to damage blocks behind stripebench's back).
    pub fn sparse(dir: &Path, name: &str, bytes: u64) -> (PathBuf, Loop) {
        let img = dir.join(name);
        std::fs::File::create(&img).unwrap().set_len(bytes).unwrap();
        let lo = Loop::attach(&img, &[]);
        (img, lo)
    }
}

impl Loop {
    /// Takes over `dev`, attached (by the test, by hand) to `file`: detached
    /// on drop while still backed by it.
    pub fn adopt(dev: &str, file: &Path) -> Loop {
        Loop {
            dev: dev.to_string(),
            file: file.to_path_buf(),
        }
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let back = Command::new("losetup")
            .args(["-n", "-O", "BACK-FILE", &self.dev])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        let ours = std::fs::canonicalize(&self.file).unwrap_or_else(|_| self.file.clone());
        if Path::new(&back) == ours || Path::new(&back) == self.file {
            let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        }
    }
}

/// A checksum of a whole file or device (FNV-1a over 8-byte words).
pub fn digest(path: &str) -> u64 {
    digest_bytes(&std::fs::read(path).unwrap())
}

/// FNV-1a over 8-byte words of `data`.
pub fn digest_bytes(data: &[u8]) -> u64 {
    data.chunks(8).fold(0xcbf2_9ce4_8422_2325u64, |h, c| {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        (h ^ u64::from_le_bytes(w)).wrapping_mul(0x100_0000_01b3)
    })
}

/// A loop device's `read_ahead_kb` file.
pub fn ra_path(dev: &str) -> String {
    format!(
        "/sys/block/{}/queue/read_ahead_kb",
        dev.trim_start_matches("/dev/")
    )
}

/// A loop device's read-ahead now, in KiB.
pub fn ra(dev: &str) -> String {
    std::fs::read_to_string(ra_path(dev))
        .unwrap()
        .trim()
        .to_string()
}

/// `stripebench ARGS` must refuse with exit 2, one line holding `expect`,
/// before any I/O: with a 60 s duration, a refusal that came after the run
/// would show as a run.
#[track_caller]
pub fn refused(args: &[&str], expect: &str) {
    let mut cmd = sb();
    cmd.args(args);
    if matches!(args[0], "run" | "sweep") {
        cmd.args(["--duration", "60s", "--ramp", "0", "--no-progress"]);
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.contains(expect),
        "{args:?}: expected '{expect}' in {err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        out.stdout.is_empty(),
        "nothing ran: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A blkio cgroup (v1) throttling reads from some block devices, removed on
/// drop. Processes started with [`Throttle::shell`] run inside it, so only
/// their reads are slowed.
pub struct Throttle(PathBuf);

impl Throttle {
    /// A new cgroup `/sys/fs/cgroup/blkio/stripebench-test-NAME-PID` that
    /// limits reads from each device (`/dev/loopN`) to its bytes per second.
    /// Fails the test when it cannot be made (see `require`).
    pub fn reads(name: &str, limits: &[(&str, u64)]) -> Throttle {
        let cg = PathBuf::from(format!(
            "/sys/fs/cgroup/blkio/stripebench-test-{name}-{}",
            std::process::id()
        ));
        require(
            std::fs::create_dir(&cg).is_ok(),
            &format!("cannot create the blkio cgroup {}", cg.display()),
        );
        let t = Throttle(cg);
        for (dev, bps) in limits {
            t.limit(dev, *bps);
        }
        t
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Reads of `dev` (`/dev/loopN`) limited to `bytes_per_sec` (0: no
    /// limit), from now on: for a throttle that comes and goes mid-run.
    pub fn limit(&self, dev: &str, bytes_per_sec: u64) {
        let numbers = std::fs::read_to_string(format!(
            "/sys/class/block/{}/dev",
            dev.trim_start_matches("/dev/")
        ))
        .unwrap_or_else(|e| panic!("{dev}: no major:minor ({e})"));
        require(
            std::fs::write(
                self.0.join("blkio.throttle.read_bps_device"),
                format!("{} {bytes_per_sec}", numbers.trim()),
            )
            .is_ok(),
            "cannot throttle reads through blkio.throttle.read_bps_device",
        );
    }

    /// Reads of `dev` (`/dev/loopN`) limited to `iops` I/Os per second (0:
    /// no limit), from now on.
    pub fn limit_iops(&self, dev: &str, iops: u64) {
        let numbers = std::fs::read_to_string(format!(
            "/sys/class/block/{}/dev",
            dev.trim_start_matches("/dev/")
        ))
        .unwrap_or_else(|e| panic!("{dev}: no major:minor ({e})"));
        require(
            std::fs::write(
                self.0.join("blkio.throttle.read_iops_device"),
                format!("{} {iops}", numbers.trim()),
            )
            .is_ok(),
            "cannot throttle reads through blkio.throttle.read_iops_device",
        );
    }

    /// `stripebench ARGS` started inside this cgroup (a shell moves itself
    /// in, then `exec`s it), stdout and stderr piped: to be watched and
    /// signalled while it runs.
    #[track_caller]
    pub fn spawn(&self, args: &[&str]) -> std::process::Child {
        let bin = assert_cmd::cargo::cargo_bin("stripebench");
        Command::new("sh")
            .env("STRIPEBENCH_STATE_DIR", state_dir())
            .env("STRIPEBENCH_HISTORY", history_db())
            .arg("-c")
            .arg(format!(
                "echo $$ > {}/cgroup.procs && exec \"$0\" \"$@\"",
                self.0.display()
            ))
            .arg(bin)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// `sh -c SCRIPT` with the shell moved into this cgroup first (so what
    /// it `exec`s runs inside), the test state directory set.
    #[track_caller]
    pub fn shell(&self, script: &str) -> std::process::Output {
        Command::new("sh")
            .env("STRIPEBENCH_STATE_DIR", state_dir())
            .env("STRIPEBENCH_HISTORY", history_db())
            .arg("-c")
            .arg(format!(
                "echo $$ > {}/cgroup.procs && {script}",
                self.0.display()
            ))
            .output()
            .unwrap()
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// A btrfs RAID0 (data and metadata) over the bed's devices, mounted at `at`.
/// Made without discarding (`-K`): mkfs's discard punches the loop
/// devices' backing files full of holes, and their members then read
/// zeros from memory (issue 39), which `run` refuses.
pub fn btrfs_raid0(bed: &LoopBed, at: &Path) -> Mounted {
    let mut args = vec!["-q", "-f", "-K", "-d", "raid0", "-m", "raid0"];
    args.extend(bed.devices.iter().map(String::as_str));
    sh_required("mkfs.btrfs", &args);
    mount(&[&bed.devices[0]], at)
}

/// Waits (polling) until `cond` holds; fails the test after a minute.
pub fn wait_for(what: &str, cond: impl Fn() -> bool) {
    let t0 = std::time::Instant::now();
    while !cond() {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "never: {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The complete lines of a `--live` JSON-lines file written so far.
pub fn live_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Whether the `--live` file holds the total line of second `t`.
pub fn live_has_second(path: &Path, t: u64) -> bool {
    live_lines(path)
        .iter()
        .any(|l| l["kind"] == "total" && l["t"] == t)
}

/// Waits until the `--live` file holds the total line of second `t`: the
/// run has measured for `t + 1` seconds, whatever the machine's speed.
pub fn wait_live_second(path: &Path, t: u64) {
    wait_for(&format!("the live line of second {t}"), || {
        live_has_second(path, t)
    });
}

/// How many threads of process `pid` have a name that starts with
/// `prefix` (the coordinator names its workers `sb-worker-N`).
pub fn threads_named(pid: u32, prefix: &str) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.trim_end().starts_with(prefix))
        })
        .count()
}

/// Waits until process `pid` runs its workers: a run's (or a sweep
/// point's) setup is done and its measuring under way.
pub fn wait_workers(pid: u32) {
    wait_for("the run's workers", || threads_named(pid, "sb-worker-") > 0);
}

/// Whether process `pid` has ended (a zombie its parent has not reaped yet,
/// or gone), read from /proc without reaping it.
pub fn ended(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            // The state follows the command name in parentheses.
            s.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']))
        })
        .unwrap_or(true)
}

/// Whether a thread of process `pid` is blocked in write(2) on one of
/// `fds` (/proc/PID/task/TID/syscall: the call's number, then its
/// arguments in hex): it waits for a reader.
pub fn blocked_writing(pid: u32, fds: &[u32]) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        let text = std::fs::read_to_string(t.path().join("syscall")).unwrap_or_default();
        let mut f = text.split_whitespace();
        let call = f.next().and_then(|n| n.parse::<i64>().ok());
        let fd = f
            .next()
            .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok());
        call == Some(libc::SYS_write)
            && fd.is_some_and(|fd| fds.iter().any(|&w| u64::from(w) == fd))
    })
}

/// Bytes waiting to be read in a pipe or FIFO (FIONREAD on its read end).
pub fn pending(fd: &impl std::os::fd::AsRawFd) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer we pass.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) };
    assert_eq!(rc, 0, "FIONREAD: {}", std::io::Error::last_os_error());
    n as usize
}

/// Whether some process holds a flock(2) or POSIX lock on `path`
/// (/proc/locks names the locked file by device and inode).
pub fn locked(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(path).unwrap().ino();
    std::fs::read_to_string("/proc/locks")
        .unwrap()
        .lines()
        .any(|l| {
            l.split_whitespace()
                .nth(5)
                .is_some_and(|id| id.rsplit(':').next() == Some(&ino.to_string()))
        })
}

/// The read calls that process `pid`'s workers (`sb-worker-N` threads)
/// have completed (each thread's syscr in /proc/PID/task/TID/io: a
/// pread is counted when it returns). Sync engine only: io_uring's reads
/// are no read calls.
pub fn worker_reads(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.trim_end().starts_with("sb-worker-"))
        })
        .filter_map(|t| std::fs::read_to_string(t.path().join("io")).ok())
        .filter_map(|io| {
            io.lines()
                .find_map(|l| l.strip_prefix("syscr: "))
                .and_then(|n| n.trim().parse::<u64>().ok())
        })
        .sum()
}

/// What [`measured`] saw of one `stripebench` process.
pub struct Measured {
    /// The exit code; `None` when a signal ended it (or the bound did).
    pub code: Option<i32>,
    pub stderr: String,
    /// The process's peak resident memory (its rusage `ru_maxrss`), in KiB.
    pub peak_kib: u64,
    /// Whether it was still running at the bound and was killed.
    pub killed: bool,
}

/// The reaper [`measured`] runs `stripebench` under: it forks the child
/// itself and reports that child's own rusage. Spawned straight from the
/// test harness (vfork or fork, then exec), the child's `ru_maxrss` starts
/// at the harness's own peak (exec takes the old address space's high-water
/// mark), which with many tests running passes 100 MiB by itself; forked
/// from this small process it starts at the reaper's few MiB.
/// Prints `PEAK_KIB KILLED` on its stdout and exits with the child's code
/// (128 + N for a signal).
const REAPER: &str = r#"
import os, signal, sys
bound = float(sys.argv[1])
pid = os.fork()
if pid == 0:
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.execv(sys.argv[2], sys.argv[2:])
killed = []
def stop(*_):
    killed.append(1)
    os.kill(pid, signal.SIGKILL)
signal.signal(signal.SIGALRM, stop)
signal.setitimer(signal.ITIMER_REAL, bound)
while True:
    try:
        _, status, ru = os.wait4(pid, 0)
        break
    except InterruptedError:
        continue
signal.setitimer(signal.ITIMER_REAL, 0)
sys.stdout.write("%d %d\n" % (ru.ru_maxrss, 1 if killed else 0))
sys.stdout.flush()
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"#;

/// Runs `stripebench ARGS` (stdin and stdout to /dev/null), killing it when
/// it is still running after `bound`: its exit code, stderr, and peak
/// resident memory as the kernel counted it for that one child (`wait4`,
/// in the small reaper above), so a refusal that first allocated gigabytes
/// shows, however fast it was.
pub fn measured(args: &[&std::ffi::OsStr], bound: std::time::Duration) -> Measured {
    let out = Command::new("python3")
        .arg("-c")
        .arg(REAPER)
        .arg(bound.as_secs_f64().to_string())
        .arg(assert_cmd::cargo::cargo_bin("stripebench"))
        .args(args)
        .env("STRIPEBENCH_STATE_DIR", state_dir())
        .env("STRIPEBENCH_HISTORY", history_db())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("python3 runs the reaper");
    let said = String::from_utf8_lossy(&out.stdout);
    let mut words = said.split_whitespace();
    let peak_kib = words
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("the reaper said no peak: {said:?}"));
    let killed = words.next() == Some("1");
    let code = out.status.code().filter(|c| *c < 128);
    Measured {
        code,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        peak_kib,
        killed,
    }
}

/// A small run document written by root in `dir`, as the input of the
/// document commands.
pub fn run_document(dir: &Path, name: &str) -> PathBuf {
    let t = data_file(dir, &format!("{name}.dat"), 1 << 20);
    let j = dir.join(name);
    sb().args([
        "run",
        "-t",
        "100ms",
        "--ramp",
        "0",
        "--no-progress",
        "--json",
    ])
    .arg(&j)
    .arg(&t)
    .assert()
    .success();
    j
}
