//! The fleet recipes as far as this machine allows: scripts/fleet/slurm.sbatch
//! run as a shell script with srun faked (three "nodes" as three local
//! tasks, one of which dies), and scripts/fleet/k8s-job.yaml validated
//! against the Kubernetes schema (kubernetes-validate, offline) and read for
//! the fields a fleet needs. Neither Slurm nor a cluster runs here.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{data_file, json, u};
use serde_json::Value;

fn manifest(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn write_exec(p: &Path, text: &str) {
    std::fs::write(p, text).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// srun as Slurm runs a step with one task per node: the command once per
/// node, in parallel, SLURMD_NODENAME set; the node named in FAKE_DEAD runs
/// with DEAD_PATH first on PATH.
const FAKE_SRUN: &str = r#"#!/usr/bin/env bash
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
pids=()
for i in $(seq 1 "$FAKE_NODES"); do
  node=node$i
  if [ "$node" = "${FAKE_DEAD:-}" ]; then
    SLURMD_NODENAME=$node PATH="$DEAD_PATH:$PATH" "$@" &
  else
    SLURMD_NODENAME=$node "$@" &
  fi
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc
"#;

#[test]
fn slurm_batch_script_runs_one_task_per_node_and_merges_in_the_batch_step() {
    let dir = tempfile::tempdir().unwrap();
    let (t1, t2) = (
        data_file(dir.path(), "t1", 2 << 20),
        data_file(dir.path(), "t2", 2 << 20),
    );
    let fake = dir.path().join("bin");
    std::fs::create_dir(&fake).unwrap();
    write_exec(&fake.join("srun"), FAKE_SRUN);
    std::os::unix::fs::symlink(
        assert_cmd::cargo::cargo_bin("stripebench"),
        fake.join("stripebench"),
    )
    .unwrap();
    // The dying node's stripebench: answers the preflight, dies in the run.
    let dead = dir.path().join("dead");
    std::fs::create_dir(&dead).unwrap();
    write_exec(
        &dead.join("stripebench"),
        &format!(
            "#!/bin/sh\n[ \"$1\" = run ] && {{ echo 'killed by the test' >&2; kill -KILL $$; }}\nexec {} \"$@\"\n",
            assert_cmd::cargo::cargo_bin("stripebench").display()
        ),
    );
    let path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap());
    let batch = |out: &str, dead_node: &str| {
        let o = Command::new("bash")
            .arg(manifest("scripts/fleet/slurm.sbatch"))
            .args([&t1, &t2])
            .env("PATH", &path)
            .env("STRIPEBENCH_STATE_DIR", common::state_dir())
            .env("STRIPEBENCH_HISTORY", crate::common::history_db())
            .env("FAKE_NODES", "3")
            .env("FAKE_DEAD", dead_node)
            .env("DEAD_PATH", &dead)
            .env("SLURM_JOB_ID", "42")
            .env("OUT", dir.path().join(out))
            .env("DELAY", "2")
            .env("GRACE", "10")
            .env("RUN_OPTS", "-t 500ms --ramp 0 --bs 64k")
            .output()
            .unwrap();
        println!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        o
    };
    let o = batch("all", "");
    assert_eq!(o.status.code(), Some(0));
    let m = json(&std::fs::read(dir.path().join("all/fleet.json")).unwrap());
    assert_eq!(u(&m["total"]["hosts"]), 3);
    assert!(
        m["total"]["overlap_sec"].as_f64().unwrap() > 0.0,
        "one --start-at"
    );
    let sources: Vec<&str> = m["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["source"].as_str().unwrap())
        .collect();
    for n in ["node1", "node2", "node3"] {
        assert!(
            sources.iter().any(|s| s.ends_with(&format!("{n}.json"))),
            "{sources:?}"
        );
    }
    // node2 dies in the run: missing, the others merged, exit 3.
    let o = batch("dead", "node2");
    assert_eq!(o.status.code(), Some(3));
    let m = json(&std::fs::read(dir.path().join("dead/fleet.json")).unwrap());
    assert_eq!(u(&m["total"]["hosts"]), 2);
    assert_eq!(m["missing"][0]["host"], "node2");
    assert!(m["missing"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("killed by the test"));
}

#[test]
fn slurm_batch_script_refuses_a_node_that_hangs_in_the_preflight() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 2 << 20);
    let fake = dir.path().join("bin");
    std::fs::create_dir(&fake).unwrap();
    write_exec(&fake.join("srun"), FAKE_SRUN);
    let sb = assert_cmd::cargo::cargo_bin("stripebench");
    std::os::unix::fs::symlink(&sb, fake.join("stripebench")).unwrap();
    // node2's stripebench never answers (a hung node, a stuck mount).
    let hung = dir.path().join("hung");
    std::fs::create_dir(&hung).unwrap();
    write_exec(
        &hung.join("stripebench"),
        &format!(
            "#!/bin/sh\n[ \"$1\" = version ] && exec sleep 600\nexec {} \"$@\"\n",
            sb.display()
        ),
    );
    let started = std::time::Instant::now();
    let o = Command::new("bash")
        .arg(manifest("scripts/fleet/slurm.sbatch"))
        .arg(&t)
        .env(
            "PATH",
            format!("{}:{}", fake.display(), std::env::var("PATH").unwrap()),
        )
        .env("STRIPEBENCH_STATE_DIR", common::state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .env("FAKE_NODES", "3")
        .env("SLURM_JOB_NUM_NODES", "3")
        .env("FAKE_DEAD", "node2")
        .env("DEAD_PATH", &hung)
        .env("OUT", dir.path().join("out"))
        .env("CONNECT", "2")
        .env("RUN_OPTS", "-t 500ms --ramp 0")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    println!("after {:?}: {err}", started.elapsed());
    // Before the fix the step waited for node2 for ever (to the job's limit).
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("refused: 1 of 3 node(s) did not answer the preflight within 2s")
            && err.contains("answered: node1 node3)"),
        "{err}"
    );
    assert!(
        !dir.path().join("out/node1.json").exists(),
        "refused before any run"
    );
}

/// Runs `c` with `text` on its standard input; its output.
fn with_stdin(mut c: Command, text: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = c
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The YAML documents of a file, as JSON (PyYAML, which kubernetes-validate
/// brings).
fn yaml_docs(text: &str) -> Vec<Value> {
    let mut c = Command::new("python3");
    c.args([
        "-c",
        "import sys, yaml, json; print(json.dumps(list(yaml.safe_load_all(sys.stdin))))",
    ]);
    let o = with_stdin(c, text);
    common::succeeded(&o);
    serde_json::from_slice::<Vec<Value>>(&o.stdout).unwrap()
}

#[test]
#[cfg_attr(
    not(sb_kubernetes_validate),
    ignore = "needs kubernetes-validate (pip)"
)]
fn k8s_job_is_valid_kubernetes_and_holds_what_a_fleet_needs() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(manifest("scripts/fleet/k8s-job.yaml"))
        .unwrap()
        .replace("@START@", "1900000000");
    let validate = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let o = Command::new("kubernetes-validate")
            .args(["--strict", "-k", "1.30.0"])
            .arg(&p)
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        println!("{said}");
        (o.status.success(), said)
    };
    let (ok, said) = validate("job.yaml", &text);
    assert!(ok, "{said}");
    assert_eq!(said.matches("passed for resource").count(), 3, "{said}");
    // The validator does refuse: a field of the wrong type, and a misspelt one.
    for (name, broken) in [
        (
            "type.yaml",
            text.replace("privileged: true", "privileged: \"very\""),
        ),
        (
            "field.yaml",
            text.replace("completionMode:", "completionMod:"),
        ),
    ] {
        let (ok, said) = validate(name, &broken);
        assert!(!ok, "{name} accepted: {said}");
    }
    let docs = yaml_docs(&text);
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["PersistentVolumeClaim", "Job", "Job"]);
    let fleet = &docs[1]["spec"];
    assert_eq!(fleet["completionMode"], "Indexed");
    assert_eq!(
        fleet["completions"], fleet["parallelism"],
        "every pod at once"
    );
    let pod = &fleet["template"]["spec"];
    let anti =
        &pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
    assert_eq!(
        anti["topologyKey"], "kubernetes.io/hostname",
        "one pod per node"
    );
    let c = &pod["containers"][0];
    assert_eq!(c["securityContext"]["privileged"], true);
    let script = c["args"][0].as_str().unwrap();
    // One directory per fleet: an earlier fleet's documents are not this one's.
    for needed in [
        "--start-at \"$START\"",
        "--json -",
        "cd \"/results/$START\"",
        "mv \"$NODE.json.tmp\" \"$NODE.json\"",
    ] {
        assert!(script.contains(needed), "{needed} in {script}");
    }
    let mounts: Vec<&str> = c["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["mountPath"].as_str().unwrap())
        .collect();
    assert_eq!(mounts, ["/dev", "/results"]);
    assert_eq!(pod["volumes"][0]["hostPath"]["path"], "/dev");
    assert_eq!(
        pod["volumes"][1]["persistentVolumeClaim"]["claimName"],
        "stripebench-results"
    );
    let merge = docs[2]["spec"]["template"]["spec"]["containers"][0]["args"][0]
        .as_str()
        .unwrap();
    assert!(merge.contains("stripebench merge") && merge.contains("--missing"));
    // The merge step's shell is valid sh.
    let o = with_stdin(
        {
            let mut c = Command::new("sh");
            c.arg("-n");
            c
        },
        merge,
    );
    common::succeeded(&o);
}

#[test]
#[cfg_attr(
    not(sb_kubernetes_validate),
    ignore = "needs PyYAML (kubernetes-validate)"
)]
fn k8s_merge_job_merges_only_this_fleet_and_counts_pods_that_never_ran() {
    let dir = tempfile::tempdir().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // This fleet's START, its deadline (START + 120 s) already past.
    let (start, earlier) = (now - 200, now - 5000);
    let text = std::fs::read_to_string(manifest("scripts/fleet/k8s-job.yaml"))
        .unwrap()
        .replace("@START@", &start.to_string());
    let docs = yaml_docs(&text);
    let merge = &docs[2]["spec"]["template"]["spec"]["containers"][0];
    let script = merge["args"][0].as_str().unwrap();
    let fake = dir.path().join("bin");
    std::fs::create_dir(&fake).unwrap();
    std::os::unix::fs::symlink(
        assert_cmd::cargo::cargo_bin("stripebench"),
        fake.join("stripebench"),
    )
    .unwrap();
    let results = dir.path().join("results");
    let t = data_file(dir.path(), "t", 2 << 20);
    // An earlier fleet's three documents on the volume, and this fleet's:
    // node-a measured, node-b died (a log, no document), and the third pod
    // never ran.
    for (fleet, node) in [
        (earlier, "node-a"),
        (earlier, "node-b"),
        (earlier, "node-c"),
        (start, "node-a"),
    ] {
        let d = results.join(fleet.to_string());
        std::fs::create_dir_all(&d).unwrap();
        common::sb()
            .args(["run", "-t", "200ms", "--ramp", "0", "--json"])
            .arg(d.join(format!("{node}.json")))
            .arg(&t)
            .assert()
            .success();
        std::fs::write(d.join(format!("{node}.log")), "ok\n").unwrap();
    }
    let this = results.join(start.to_string());
    std::fs::write(this.join("node-b.log"), "killed\n").unwrap();
    let mut c = Command::new("sh");
    c.args(["-c", script])
        .current_dir(dir.path())
        .env(
            "PATH",
            format!("{}:{}", fake.display(), std::env::var("PATH").unwrap()),
        )
        .env("STRIPEBENCH_STATE_DIR", common::state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .env("RESULTS", &results);
    for e in merge["env"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        if name != "RESULTS" {
            c.env(name, e["value"].as_str().unwrap());
        }
    }
    let o = c.output().unwrap();
    println!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(3), "incomplete");
    let m = json(&std::fs::read(this.join("fleet.json")).unwrap());
    assert_eq!(u(&m["total"]["hosts"]), 1, "only this fleet's document");
    let missing: Vec<&str> = m["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host"].as_str().unwrap())
        .collect();
    assert_eq!(missing, ["node-b", "pod-3"]);
    assert!(!results
        .join(earlier.to_string())
        .join("fleet.json")
        .exists());
}

/// A node's own words reach the launcher's terminal as text: its last log
/// line, quoted as the reason it is missing, had its escape sequences
/// printed raw (issue 20, item 5).
#[test]
fn slurm_batch_script_quotes_a_failing_nodes_log_printable() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 2 << 20);
    let fake = dir.path().join("bin");
    std::fs::create_dir(&fake).unwrap();
    write_exec(&fake.join("srun"), FAKE_SRUN);
    let sb = assert_cmd::cargo::cargo_bin("stripebench");
    std::os::unix::fs::symlink(&sb, fake.join("stripebench")).unwrap();
    // node2 answers the preflight, then its run says only escapes and fails.
    let evil = dir.path().join("evil");
    std::fs::create_dir(&evil).unwrap();
    write_exec(
        &evil.join("stripebench"),
        &format!(
            "#!/bin/sh\n[ \"$1\" = run ] && {{ printf '\\033]52;c;cHduZWQ=\\007\\033[2Jall clear\\n' >&2; exit 1; }}\nexec {} \"$@\"\n",
            sb.display()
        ),
    );
    let o = Command::new("bash")
        .arg(manifest("scripts/fleet/slurm.sbatch"))
        .arg(&t)
        .env(
            "PATH",
            format!("{}:{}", fake.display(), std::env::var("PATH").unwrap()),
        )
        .env("STRIPEBENCH_STATE_DIR", common::state_dir())
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .env("FAKE_NODES", "3")
        .env("SLURM_JOB_NUM_NODES", "3")
        .env("FAKE_DEAD", "node2")
        .env("DEAD_PATH", &evil)
        .env("OUT", dir.path().join("out"))
        .env("RUN_OPTS", "-t 500ms --ramp 0")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    println!("{err}");
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        !o.stderr.contains(&0x1b) && !o.stderr.contains(&0x07),
        "{err}"
    );
    assert!(err.contains("node node2 is missing"), "{err}");
    assert!(err.contains("?[2Jall clear"), "{err}");
}
