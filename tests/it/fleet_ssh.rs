//! Fleets over real ssh: three hosts on this machine, each a network
//! namespace with its own address, hostname and sshd (scripts/fleet/testnet.sh),
//! each driving its own loop devices. scripts/fleet.sh runs them with ssh,
//! pdsh and clush; the preflight refuses a skewed clock, another version and
//! a host that does not answer; a host stopped or killed mid-run is reported
//! missing while the others merge. Each test's hosts, namespaces, loop
//! devices and directories go when it ends, passed or panicked (Drop).

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::{buckets, hist, json, u, LoopBed};
use serde_json::Value;

fn manifest(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("stripebench")
}

/// Hosts made by testnet.sh; torn down on drop (sshd and everything else
/// running in the namespaces killed, the namespaces and their veths deleted,
/// the directory removed).
struct Net {
    dir: tempfile::TempDir,
    ctl: String,
    /// (namespace, address) of each host.
    hosts: Vec<(String, String)>,
}

impl Net {
    fn up(n: usize) -> Net {
        common::require(common::is_root(), "needs root: network namespaces");
        let dir = tempfile::Builder::new()
            .prefix("fleet-net")
            .tempdir()
            .unwrap();
        let out = Command::new("bash")
            .arg(manifest("scripts/fleet/testnet.sh"))
            .arg("up")
            .arg(dir.path())
            .arg(n.to_string())
            .arg(bin())
            .output()
            .unwrap();
        // Built before the check: a half-made network is torn down too.
        let net = Net {
            ctl: std::fs::read_to_string(dir.path().join("ctl"))
                .unwrap_or_default()
                .trim()
                .to_string(),
            hosts: String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            dir,
        };
        common::succeeded_as(&out, "testnet.sh up");
        assert_eq!(
            net.hosts.len(),
            n,
            "testnet.sh up: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        net
    }

    fn addr(&self, i: usize) -> &str {
        &self.hosts[i].1
    }

    /// Host i's stripebench (first on its sshd's PATH): replace it with a
    /// wrapper to give that host another clock or version.
    fn install(&self, i: usize, script: &str) {
        let p = self.dir.path().join(format!("h{}/bin/stripebench", i + 1));
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn hostfile(&self, name: &str, lines: &[String]) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        p
    }

    /// fleet.sh run from the control namespace, where the hosts' subnet is.
    fn fleet_cmd(&self, launcher: &str, hostfile: &Path, out: &Path, extra: &[&str]) -> Command {
        let mut c = Command::new("ip");
        let path = format!(
            "{}:{}",
            bin().parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        c.args(["netns", "exec", &self.ctl, "bash"])
            .arg(manifest("scripts/fleet.sh"))
            .args(["--launcher", launcher, "--ssh-config"])
            .arg(self.dir.path().join("ssh_config"))
            .arg("--out")
            .arg(out)
            .args(extra)
            .arg(hostfile)
            // The hosts' runs record nothing (ssh passes no environment:
            // they would write this machine's default history); fleet.sh
            // imports their documents into the test's own.
            .args([
                "--",
                "-t",
                "2s",
                "--ramp",
                "0",
                "--bs",
                "64k",
                "--no-history",
            ])
            .env("STRIPEBENCH_HISTORY", common::history_db())
            .env("PATH", path);
        common::default_signals(&mut c);
        c
    }

    fn fleet(&self, launcher: &str, hostfile: &Path, out: &Path, extra: &[&str]) -> Output {
        let o = self
            .fleet_cmd(launcher, hostfile, out, extra)
            .output()
            .unwrap();
        println!(
            "fleet.sh --launcher {launcher}: exit {:?}\n{}{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        o
    }

    /// The stripebench that host i runs with --start-at, once it runs.
    /// (Each --delay here is 10 s: ssh took 3.3 s to answer the preflight
    /// on this machine loaded 18 deep, and a --delay shorter than the
    /// slowest answer is refused. The wait is long for the same reason: it
    /// fails only when the run never comes.)
    fn remote_run(&self, i: usize) -> i32 {
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            let out = Command::new("ip")
                .args(["netns", "pids", &self.hosts[i].0])
                .output()
                .unwrap();
            for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
                let is_run = args.first().is_some_and(|a| a.ends_with(b"stripebench"))
                    && args.iter().any(|a| *a == b"--start-at");
                if is_run {
                    return pid.parse().unwrap();
                }
            }
            assert!(Instant::now() < deadline, "host {i}'s run never started");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(manifest("scripts/fleet/testnet.sh"))
            .arg("down")
            .arg(self.dir.path())
            .status();
    }
}

/// Three hosts' hostfile lines, two loop devices each.
fn lines(net: &Net, bed: &LoopBed) -> Vec<String> {
    (0..3)
        .map(|i| {
            format!(
                "{} {} {}",
                net.addr(i),
                bed.devices[2 * i],
                bed.devices[2 * i + 1]
            )
        })
        .collect()
}

/// The merged document adds up: its total histogram holds every host's
/// samples bucket by bucket, as read from each host's own document.
fn check_merge(m: &Value, out: &Path, hosts: &[&str]) {
    assert_eq!(u(&m["total"]["hosts"]), hosts.len() as u64);
    let mut all: BTreeMap<u64, u64> = BTreeMap::new();
    let mut bytes = 0;
    let mut starts = Vec::new();
    for h in hosts {
        let d = json(&std::fs::read(out.join(format!("{h}.json"))).unwrap());
        bytes += u(&d["total"]["bytes"]);
        starts.push(d["window"]["start_unix_sec"].as_f64().unwrap());
        for (v, c) in buckets(&hist(&d["total"]["histogram"])) {
            *all.entry(v).or_default() += c;
        }
    }
    let merged = buckets(&hist(&m["total"]["histogram"]));
    assert_eq!(merged, all, "the fleet histogram is the hosts' together");
    assert_eq!(
        merged.values().sum::<u64>(),
        u(&m["total"]["ios"]),
        "merged count = sum of the hosts' counts = the fleet's I/Os"
    );
    assert_eq!(u(&m["total"]["bytes"]), bytes);
    assert!(
        m["total"]["overlap_sec"].as_f64().unwrap() > 0.0,
        "one --start-at: the windows overlap"
    );
    // The skew is the hosts' own: latest window start less the earliest.
    let skew = m["total"]["start_skew_sec"].as_f64().unwrap();
    let first = starts.iter().cloned().fold(f64::INFINITY, f64::min);
    let last = starts.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    assert!(
        (skew - (last - first)).abs() < 1e-6,
        "{skew} against {starts:?}"
    );
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_fleet_ssh)),
    ignore = "needs root, sshd, pdsh, clush"
)]
fn ssh_pdsh_and_clush_fleets_of_three_hosts_merge_exactly() {
    let bed = LoopBed::new(6, 32);
    let net = Net::up(3);
    let hosts = net.hostfile("hosts", &lines(&net, &bed));
    for (launcher, method) in [("ssh", "ping"), ("pdsh", "one-way"), ("clush", "ping")] {
        let out = net.dir.path().join(format!("out-{launcher}"));
        // (clush, a Python program, took 4 to 7 s to answer on a machine
        // loaded 12 deep: a --delay shorter than that is refused.)
        let o = net.fleet(
            launcher,
            &hosts,
            &out,
            &["--delay", "10s", "--grace", "20s"],
        );
        assert_eq!(o.status.code(), Some(0), "{launcher}");
        let m = json(&std::fs::read(out.join("fleet.json")).unwrap());
        let addrs: Vec<&str> = (0..3).map(|i| net.addr(i)).collect();
        check_merge(&m, &out, &addrs);
        // Each host ran in its own namespace, under its own name.
        let names: Vec<&str> = m["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["hostname"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["fleet-h1", "fleet-h2", "fleet-h3"], "{launcher}");
        assert_eq!(m["workers"].as_array().unwrap().len(), 6);
        assert_eq!(m["missing"].as_array().unwrap().len(), 0);
        let p = &m["preflight"];
        assert_eq!(p["launcher"], launcher);
        let ph = p["hosts"].as_array().unwrap();
        assert_eq!(ph.len(), 3);
        for h in ph {
            assert_eq!(h["method"], method);
            assert_eq!(h["version"], env!("CARGO_PKG_VERSION"));
            assert!(h["skew_sec"].as_f64().unwrap().abs() <= p["max_skew_sec"].as_f64().unwrap());
            assert!(h["rtt_sec"].as_f64().unwrap() > 0.0);
        }
        let table = String::from_utf8_lossy(&o.stdout);
        assert!(
            table.contains("FLEET")
                && table.contains(&format!("preflight ({launcher}): 3 host(s)")),
            "{table}"
        );
    }
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_fleet_ssh)),
    ignore = "needs root, sshd, pdsh, clush, faketime"
)]
fn preflight_refuses_a_skewed_clock_another_version_and_a_silent_host() {
    let bed = LoopBed::new(6, 32);
    let net = Net::up(3);
    let hosts = net.hostfile("hosts", &lines(&net, &bed));
    let real = bin();
    let real = real.display();
    let refused = |launcher: &str, file: &Path, extra: &[&str], expect: &[&str]| {
        let out = net.dir.path().join("out-refused");
        let o = net.fleet(launcher, file, &out, extra);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{launcher}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        for e in expect {
            assert!(err.contains(e), "{launcher}: '{e}' in {err}");
        }
        // Before any host started: no run document.
        let docs = std::fs::read_dir(&out)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "json")
            })
            .count();
        assert_eq!(docs, 0, "no host started");
    };
    // Host 2's clock runs 5 s ahead (libfaketime).
    net.install(
        1,
        &format!("#!/bin/sh\nexec faketime -f +5s {real} \"$@\"\n"),
    );
    for launcher in ["ssh", "pdsh"] {
        refused(
            launcher,
            &hosts,
            &[],
            // 5 s give or take the measuring: 4.99... or 5.00...
            &[net.addr(1), "'s clock is ", "s ahead", "--max-skew 100.0ms"],
        );
    }
    // Half a second behind, within a bound of one: let through, and the
    // skew measured is recorded.
    net.install(
        1,
        &format!("#!/bin/sh\nexec faketime -f -0.5s {real} \"$@\"\n"),
    );
    let out = net.dir.path().join("out-loose");
    let o = net.fleet("ssh", &hosts, &out, &["--max-skew", "1s", "--delay", "10s"]);
    assert_eq!(o.status.code(), Some(0));
    let m = json(&std::fs::read(out.join("fleet.json")).unwrap());
    let p = &m["preflight"]["hosts"][1];
    let (skew, within) = (
        p["skew_sec"].as_f64().unwrap(),
        p["uncertainty_sec"].as_f64().unwrap(),
    );
    assert!(
        (skew + 0.5).abs() <= within + 0.01,
        "host 2 measured {skew} s +/- {within} off, set 0.5 s behind"
    );
    // Host 2 reports another version.
    net.install(
        1,
        &format!(
            "#!/bin/sh\nif [ \"$1\" = version ]; then {real} \"$@\" | sed -u 's/\"version\":\"[^\"]*\"/\"version\":\"0.0.9\"/'; exit; fi\nexec {real} \"$@\"\n"
        ),
    );
    refused(
        "ssh",
        &hosts,
        &[],
        &[
            &format!("host {} runs stripebench 0.0.9", net.addr(1)),
            "one version",
        ],
    );
    // A host that does not answer (no such address on the subnet).
    let mut l = lines(&net, &bed);
    l[1] = format!("10.231.0.99 {}", bed.devices[2]);
    l.truncate(2);
    let silent = net.hostfile("silent", &l);
    net.install(0, &format!("#!/bin/sh\nexec {real} \"$@\"\n"));
    // ssh's own connect timeout (--connect-timeout too) may end the launcher
    // before fleet.sh stops waiting, and then its words follow; on a loaded
    // machine they may come too late to be quoted. Either way the host is
    // named, with the preflight it failed. The bound is the answering
    // host's too: 2 s was too short for its ssh and stripebench to start
    // on a loaded machine, which then named both hosts.
    for launcher in ["ssh", "pdsh"] {
        refused(
            launcher,
            &silent,
            &["--connect-timeout", "8s"],
            &["host 10.231.0.99 ", "preflight"],
        );
    }
}

#[test]
#[cfg_attr(not(all(sb_root, sb_fleet_ssh)), ignore = "needs root, sshd")]
fn a_host_that_hangs_or_dies_mid_run_is_missing_and_the_rest_merge() {
    let bed = LoopBed::new(6, 32);
    let net = Net::up(3);
    let hosts = net.hostfile("hosts", &lines(&net, &bed));
    for (signal, expect) in [("STOP", "stopped waiting"), ("KILL", "no document (exit")] {
        let out = net.dir.path().join(format!("out-{signal}"));
        let mut c = net.fleet_cmd("ssh", &hosts, &out, &["--delay", "10s", "--grace", "3s"]);
        let child = c
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Host 2's run, waiting for its --start-at: hung (STOP) or dead (KILL).
        let pid = net.remote_run(1);
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        println!("{signal}: {}{err}", String::from_utf8_lossy(&o.stdout));
        assert_eq!(o.status.code(), Some(3), "incomplete: {err}");
        assert!(
            err.contains(&format!("host {} is missing", net.addr(1))),
            "{err}"
        );
        let m = json(&std::fs::read(out.join("fleet.json")).unwrap());
        check_merge(&m, &out, &[net.addr(0), net.addr(2)]);
        let missing = m["missing"].as_array().unwrap();
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0]["host"], net.addr(1));
        let reason = missing[0]["reason"].as_str().unwrap();
        assert!(reason.contains(expect), "{missing:?}");
        // Why it ended, not the run's last warning before it was killed.
        assert!(!reason.contains("warning"), "{missing:?}");
        assert!(String::from_utf8_lossy(&o.stdout).contains("1 missing (incomplete)"));
        // The hung process is the test's to end (the launcher only stops waiting).
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

#[test]
#[cfg_attr(not(all(sb_root, sb_fleet_ssh)), ignore = "needs root, sshd")]
fn a_test_that_panics_leaves_no_host_behind() {
    let (tx, rx) = std::sync::mpsc::channel();
    let crashed = std::thread::spawn(move || {
        let net = Net::up(2);
        let pids: Vec<String> = (1..=2)
            .map(|i| {
                std::fs::read_to_string(net.dir.path().join(format!("h{i}/sshd.pid")))
                    .unwrap()
                    .trim()
                    .to_string()
            })
            .collect();
        let mut names: Vec<String> = net.hosts.iter().map(|h| h.0.clone()).collect();
        names.push(net.ctl.clone());
        tx.send((net.dir.path().to_path_buf(), names, pids))
            .unwrap();
        panic!("a test failing with its hosts up");
    })
    .join();
    assert!(crashed.is_err());
    let (dir, names, pids) = rx.recv().unwrap();
    let list = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    for n in &names {
        assert!(
            !list.contains(n.as_str()),
            "namespace {n} left behind: {list}"
        );
    }
    for p in &pids {
        // Gone, or dead and not yet reaped by whoever adopted the daemon.
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        let state = stat.rsplit(") ").next().and_then(|r| r.chars().next());
        assert!(
            stat.is_empty() || state == Some('Z'),
            "sshd {p} left running: {stat}"
        );
    }
    assert!(!dir.exists(), "{} left behind", dir.display());
}

#[test]
#[cfg_attr(not(all(sb_root, sb_fleet_ssh)), ignore = "needs root, sshd, pdsh")]
fn an_interrupted_fleet_stops_the_remote_runs_and_merges_what_they_measured() {
    let bed = LoopBed::new(6, 32);
    let net = Net::up(3);
    let hosts = net.hostfile("hosts", &lines(&net, &bed));
    // `kill PID` (fleet.sh alone), and Ctrl-C (its whole process group).
    for (launcher, signal, code, group) in [
        ("ssh", libc::SIGTERM, 143, false),
        ("pdsh", libc::SIGINT, 130, true),
    ] {
        let out = net.dir.path().join(format!("out-int-{launcher}"));
        let mut c = net.fleet_cmd(launcher, &hosts, &out, &["--delay", "10s"]);
        // A long run (the last -t wins), to be cut short.
        c.args(["-t", "10m"]);
        let child = std::os::unix::process::CommandExt::process_group(&mut c, 0)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let remote: Vec<i32> = (0..3).map(|i| net.remote_run(i)).collect();
        // Each host measuring: its run's workers have completed reads (the
        // window opened after the --delay).
        common::wait_for("every host measuring", || {
            remote.iter().all(|&p| common::worker_reads(p as u32) > 0)
        });
        let pid = child.id() as i32;
        // SAFETY: signalling our own child (ip netns exec, which execs bash),
        // or the process group it leads.
        unsafe { libc::kill(if group { -pid } else { pid }, signal) };
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        println!("{launcher}: {}{err}", String::from_utf8_lossy(&o.stdout));
        assert_eq!(o.status.code(), Some(code), "{launcher}: {err}");
        // The hosts' runs were stopped, not left going behind the launcher.
        for pid in &remote {
            assert!(
                !Path::new(&format!("/proc/{pid}")).exists(),
                "{launcher}: remote run {pid} still going"
            );
        }
        let m = json(&std::fs::read(out.join("fleet.json")).unwrap());
        let addrs: Vec<&str> = (0..3).map(|i| net.addr(i)).collect();
        check_merge(&m, &out, &addrs);
        for h in m["hosts"].as_array().unwrap() {
            assert_eq!(h["interrupted"], true, "{launcher}");
            assert!(h["seconds"].as_f64().unwrap() < 600.0);
        }
    }
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_fleet_ssh)),
    ignore = "needs root, sshd, pdsh, clush"
)]
fn a_dash_login_shell_gets_every_target_byte_for_byte() {
    // The hosts' login shell is dash (testnet.sh). fleet.sh quoted with
    // bash's printf %q: under LC_ALL=C, /tmp/café.dat arrived as
    // "$/tmp/caf\303\251.dat", and a control character beside a quote gave
    // "Unterminated quoted string".
    let net = Net::up(2);
    let dir = net.dir.path();
    let t: Vec<String> = ["café.dat", "it's\x01\x1b[31m'\\'.dat"]
        .iter()
        .map(|n| {
            common::data_file(dir, n, 4 << 20)
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let hosts = net.hostfile(
        "odd-names",
        &[
            format!("{} {}", net.addr(0), t[0]),
            format!("{} {}", net.addr(1), t[1]),
        ],
    );
    for launcher in ["ssh", "pdsh", "clush"] {
        let out = dir.join(format!("out-names-{launcher}"));
        // (clush, a Python program, takes seconds to start on a loaded
        // machine: a --delay shorter than that is refused.)
        let mut c = net.fleet_cmd(launcher, &hosts, &out, &["--delay", "10s"]);
        c.env("LC_ALL", "C");
        let o = c.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        println!("{launcher}: {}{err}", String::from_utf8_lossy(&o.stdout));
        assert_eq!(o.status.code(), Some(0), "{launcher}: {err}");
        for (i, t) in t.iter().enumerate() {
            let d = json(&std::fs::read(out.join(format!("{}.json", net.addr(i)))).unwrap());
            assert_eq!(d["targets"][0]["path"], t.as_str(), "{launcher}");
        }
    }
}
