//! Every ready-made experiment in configs/ parses and validates, as the
//! binary would read it with --config (no I/O).

use crate::common;

use std::ffi::OsString;

use stripebench::cli::Command;

#[test]
fn every_config_parses_and_validates() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let command = text
            .lines()
            .find_map(|l| l.strip_prefix("# command: "))
            .unwrap_or_else(|| panic!("{} has no '# command:' header", path.display()))
            .trim()
            .to_string();
        assert!(
            text.lines().filter(|l| l.starts_with('#')).count() >= 3,
            "{}: a comment header says what it shows",
            path.display()
        );
        let argv: Vec<OsString> = [
            "stripebench",
            &command,
            "--config",
            path.to_str().unwrap(),
            "/dev/null",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let mut invocations = stripebench::cli::front::invocations(argv)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(invocations.len(), 1);
        let cli = invocations
            .pop()
            .unwrap()
            .cli
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let args = match cli.command {
            Command::Run(a) => *a,
            Command::Sweep(s) => {
                assert!(
                    !s.params.is_empty(),
                    "{}: a sweep sweeps something",
                    path.display()
                );
                s.run
            }
            _ => panic!("{}: configs are for run and sweep", path.display()),
        };
        stripebench::cli::validate::run_config(&args, &[0, 1], None)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        seen += 1;
    }
    assert!(seen >= 6, "the seed experiments are all there ({seen})");
}

#[test]
fn a_bad_config_is_refused_with_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.toml");
    std::fs::write(&f, "rw = \"read\"\nfrobnicate = 1\n").unwrap();
    let out = common::sb()
        .args(["run", "--config"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 2") && err.contains("frobnicate") && err.contains("bad.toml"),
        "{err}"
    );
}

/// A config file in `dir` with `text`.
fn config(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    f
}

/// `stripebench SUBCOMMAND --json - ARGS...`, which must succeed; its document.
fn doc(args: &[&str]) -> serde_json::Value {
    common::run_json(args)
}

fn sb() -> assert_cmd::Command {
    common::sb()
}

// Regression (issue 13, item 15): a file with `buffered = true` plus
// `--direct` on the command line exited 2 ("cannot be used with").
#[test]
fn the_command_line_mode_replaces_the_files_conflicting_mode() {
    let dir = tempfile::tempdir().unwrap();
    let t = data(dir.path(), "t");
    let b = config(
        dir.path(),
        "b.toml",
        "buffered = true\nduration = \"200ms\"\nramp = \"0\"\n",
    );
    let d = doc(&["run", "--config", b.to_str().unwrap(), "--direct", &t]);
    assert_eq!(d["config"]["direct"], true, "--direct wins over the file");
    let d = doc(&["run", "--config", b.to_str().unwrap(), &t]);
    assert_eq!(d["config"]["direct"], false, "the file applies otherwise");
    let o = config(
        dir.path(),
        "o.toml",
        "direct = true\nduration = \"200ms\"\nramp = \"0\"\n",
    );
    let d = doc(&["run", "--config", o.to_str().unwrap(), "--buffered", &t]);
    assert_eq!(
        d["config"]["direct"], false,
        "--buffered wins over the file"
    );
    // A plain override, long and short.
    let d = doc(&["run", "--config", b.to_str().unwrap(), "-t", "100ms", &t]);
    assert!((d["window"]["seconds"].as_f64().unwrap() - 0.1).abs() < 0.05);
}

// Regression (issue 13, item 15): a file's `param` plus `--param` was
// refused as given twice.
#[test]
fn the_command_line_param_replaces_the_files_param_of_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let t = data(dir.path(), "t");
    let p = config(
        dir.path(),
        "p.toml",
        "param = [\"bs=64k,128k\", \"jobs=1,2\"]\nduration = \"100ms\"\nramp = \"0\"\n",
    );
    let p = p.to_str().unwrap();
    let params = |d: &serde_json::Value| -> Vec<(String, Vec<String>)> {
        d["params"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["name"].as_str().unwrap().to_string(),
                    p["values"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap().to_string())
                        .collect(),
                )
            })
            .collect()
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    // Replaces bs, keeps the file's jobs.
    let d = doc(&["sweep", "--config", p, "--param", "bs=4k", &t]);
    assert_eq!(
        params(&d),
        vec![("jobs".into(), s(&["1", "2"])), ("bs".into(), s(&["4k"]))]
    );
    assert_eq!(d["points"].as_array().unwrap().len(), 2);
    // A name the file does not sweep is added.
    let d = doc(&["sweep", "--config", p, "--param=iodepth=1", &t]);
    assert_eq!(
        params(&d),
        vec![
            ("bs".into(), s(&["64k", "128k"])),
            ("jobs".into(), s(&["1", "2"])),
            ("iodepth".into(), s(&["1"]))
        ]
    );
    // The same name twice on the command line is still refused.
    let out = sb()
        .args([
            "sweep", "--config", p, "--param", "bs=4k", "--param", "bs=8k",
        ])
        .arg(&t)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("given twice"));
}

// Regression (issue 13, item 15): the file's targets and the command line's
// were added together.
#[test]
fn the_command_line_targets_replace_the_files_targets() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (data(dir.path(), "a"), data(dir.path(), "b"));
    let f = config(
        dir.path(),
        "t.toml",
        &format!("targets = [\"{a}\"]\nduration = \"100ms\"\nramp = \"0\"\n"),
    );
    let f = f.to_str().unwrap();
    let paths = |d: &serde_json::Value| -> Vec<String> {
        d["targets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(paths(&doc(&["run", "--config", f, &b])), vec![b.clone()]);
    assert_eq!(paths(&doc(&["run", "--config", f])), vec![a.clone()]);
    // After --, too; and an option's value is not taken for a target.
    assert_eq!(
        paths(&doc(&["run", "--config", f, "--bs", "64k", "--", &b])),
        vec![b.clone()]
    );
    assert_eq!(paths(&doc(&["run", "--config", f, "--bs", "64k"])), vec![a]);
}

/// A 2 MiB data file; its path.
fn data(dir: &std::path::Path, name: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, vec![7u8; 2 << 20]).unwrap();
    p.to_str().unwrap().to_string()
}

// Regression (issue 39, item 6): the seed configs ran `passes = 1`, so on
// the built-in test bed (256 MiB files, one pass in 0.16-0.28 s) their
// windows measured nothing. A config whose window is fixed in time lasts
// its `duration` on any target, small or large: each seed's must be at
// least 2 s, with no byte limit (passes, io_limit) to end it sooner. Seed
// 004 too, now that a buffered write's every pass reaches the device.
#[test]
fn every_seed_configs_window_is_fixed_in_time_and_at_least_2s() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let value: toml::Value = toml::from_str(&text).unwrap();
        for key in ["passes", "io_limit"] {
            assert!(
                value.get(key).is_none(),
                "{name}: {key} ends the window by bytes, short on a small target"
            );
        }
        let duration = value
            .get("duration")
            .and_then(|v| v.as_str())
            .unwrap_or_else(|| panic!("{name}: a duration"));
        let secs = stripebench::base::units::parse_duration(duration)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .as_secs_f64();
        assert!(secs >= 2.0, "{name}: a {secs} s window");
        checked += 1;
    }
    assert!(checked >= 6, "{checked}");
}
