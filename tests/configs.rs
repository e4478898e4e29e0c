//! Every ready-made experiment in configs/ parses and validates, as the
//! binary would read it with --config (no I/O).

use std::ffi::OsString;

use clap::Parser;
use stripebench::cli::{Cli, Command};
use stripebench::config::RunConfig;

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
        let argv = stripebench::configfile::expand(argv, &stripebench::cli::long_options)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
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
        RunConfig::from_args(&args, &[0, 1], None)
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
    let out = assert_cmd::Command::cargo_bin("stripebench")
        .unwrap()
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
