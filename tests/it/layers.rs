//! scripts/check-layers.py, the layer check `.ci/run` runs: it passes on
//! this tree, and its size rules (issue 40: a commands/ file under 200
//! lines, no function outside tests over 150) refuse a tree made to break
//! them, counting what a brace matcher should and nothing else.

use std::path::Path;
use std::process::Command;

fn check(root: Option<&Path>) -> (bool, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check-layers.py");
    let mut c = Command::new("python3");
    c.arg(script);
    if let Some(r) = root {
        c.arg("--root").arg(r);
    }
    let o = c.output().expect("python3 runs scripts/check-layers.py");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn the_layer_check_passes_on_this_tree() {
    let (ok, out) = check(None);
    assert!(ok, "{out}");
    assert!(
        out.ends_with("layer check: no upward import, no cycle, no rule broken\n"),
        "{out}"
    );
}

/// A function of `n` lines, from its `fn` line to its closing brace, whose
/// body holds braces in a string, a char and a comment (none of which may
/// count).
fn function(name: &str, n: usize) -> String {
    let mut f = format!("fn {name}() -> char {{\n    let _ = \"}}}}\"; // }}\n");
    for _ in 0..n - 4 {
        f.push_str("    let _ = 1;\n");
    }
    f.push_str("    '}'\n}\n");
    assert_eq!(f.lines().count(), n);
    f
}

#[test]
fn a_long_command_file_and_a_long_function_are_refused_but_tests_are_not() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path();
    std::fs::create_dir_all(src.join("commands")).unwrap();
    std::fs::create_dir_all(src.join("measure")).unwrap();
    // 199 lines: under the bound. 200: not.
    let short = "//! short\n".to_string() + &"\n".repeat(198);
    let long = "//! long\n".to_string() + &"\n".repeat(199);
    std::fs::write(src.join("commands/short.rs"), short).unwrap();
    std::fs::write(src.join("commands/long.rs"), long).unwrap();
    // 150 lines pass, 151 do not; a test's 400 lines are nobody's concern.
    let code = format!(
        "//! functions\n{}{}#[cfg(test)]\nmod tests {{\n{}}}\n",
        function("fits", 150),
        function("overruns", 151),
        function("a_test", 400)
    );
    std::fs::write(src.join("measure/f.rs"), code).unwrap();
    let (ok, out) = check(Some(src));
    assert!(!ok, "{out}");
    let fails: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("FAIL ") && !l.contains("lists"))
        .collect();
    assert_eq!(
        fails,
        [
            "FAIL commands/long.rs: 200 lines, a commands/ file has fewer than 200: split what it owns into files of its own (or move it to its layer)",
            "FAIL measure/f.rs: fn overruns (line 152) is 151 lines, over 150: split it into named steps",
        ],
        "{out}"
    );
}

/// Issue 40 item 5: a line for the user below the output layer goes up as a
/// typed fact; the print macros are refused there (they panic on a closed
/// or full stream), in output/ and in tests they are not.
#[test]
fn a_print_below_the_output_layer_is_refused_but_output_and_tests_are_not() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path();
    for d in ["device", "output"] {
        std::fs::create_dir_all(src.join(d)).unwrap();
    }
    let says = "//! says\npub fn f() {\n    eprintln!(\"x\");\n    print!(\"y\");\n}\n";
    let tested = "//! tested\n#[cfg(test)]\nmod tests {\n    fn t() {\n        println!(\"z\");\n    }\n}\n// eprintln! in a comment\npub fn g() -> &'static str {\n    \"eprintln!(in a string)\"\n}\n";
    std::fs::write(src.join("device/says.rs"), says).unwrap();
    std::fs::write(src.join("device/tested.rs"), tested).unwrap();
    std::fs::write(src.join("output/mod.rs"), says).unwrap();
    let (ok, out) = check(Some(src));
    assert!(!ok, "{out}");
    // (The lists of what is left name files this small tree has not.)
    let fails: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("FAIL ") && !l.contains("lists"))
        .collect();
    assert_eq!(
        fails,
        [
            "FAIL device/says.rs: `eprintln!` (line 3) below the output layer: hand the line up as a Warning or a base::notice::Notice, which output/ writes",
            "FAIL device/says.rs: `print!` (line 4) below the output layer: hand the line up as a Warning or a base::notice::Notice, which output/ writes",
        ],
        "{out}"
    );
}

/// document/advise/checks.rs once found sysfs by asking `Host::real()`
/// itself: a pure layer looked at the machine it ran on. The lookup is
/// the caller's (device/, measure/, commands/), handed down as data.
#[test]
fn a_pure_layer_that_looks_up_the_running_host_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path();
    for d in ["device", "document"] {
        std::fs::create_dir_all(src.join(d)).unwrap();
    }
    let looks = "//! looks\npub fn sys() -> String {\n    crate::base::host::Host::real().sys.display().to_string()\n}\n";
    std::fs::write(src.join("device/looks.rs"), looks).unwrap();
    std::fs::write(src.join("document/looks.rs"), looks).unwrap();
    let (ok, out) = check(Some(src));
    assert!(!ok, "{out}");
    let fails: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("FAIL ") && !l.contains("lists"))
        .collect();
    assert_eq!(
        fails,
        ["FAIL document/looks.rs: document/ names the running host (Host::real): it must be a function of its inputs"],
        "{out}"
    );
}

/// advise's checks in document/ once gave each finding its severity
/// (`severity: Severity::Medium`): how much a condition matters is
/// judgement, and comes with the verdict from analysis/. Tests may still
/// write one.
#[test]
fn a_severity_chosen_in_document_is_refused_but_not_in_its_tests() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path();
    std::fs::create_dir_all(src.join("document")).unwrap();
    let chooses =
        "//! chooses\npub fn f() -> Finding {\n    Finding { severity: Severity::Medium }\n}\n";
    let tested = "//! tested\npub fn f(v: Verdict) -> Finding {\n    Finding { severity: v.severity.into() }\n}\n#[cfg(test)]\nmod tests {\n    fn t() -> Finding {\n        Finding { severity: Severity::High }\n    }\n}\n";
    std::fs::write(src.join("document/chooses.rs"), chooses).unwrap();
    std::fs::write(src.join("document/tested.rs"), tested).unwrap();
    let (ok, out) = check(Some(src));
    assert!(!ok, "{out}");
    let fails: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("FAIL ") && !l.contains("lists"))
        .collect();
    assert_eq!(
        fails,
        ["FAIL document/chooses.rs: document/ defines or calls a severity literal for a finding (the verdict from analysis/ carries how much it matters): `severity: Severity::Medium`: judgement belongs in analysis/"],
        "{out}"
    );
}
