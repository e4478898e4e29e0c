//! Every document records the command that made it (issue 21, item 4):
//! argv, as a list and as one shell line that repeats it byte for byte,
//! and the `--config` file's content; the HTML report shows them escaped.

use crate::common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::common::{json, sb};
use serde_json::Value;

fn doc(p: &Path) -> Value {
    json(&std::fs::read(p).unwrap())
}

/// The recorded argv, without the binary's own path.
fn argv(d: &Value) -> Vec<String> {
    let inv = &d["tool"]["invocation"];
    assert!(inv.is_object(), "no tool.invocation in {d}");
    inv["argv"].as_array().unwrap()[1..]
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

// Regression (issue 21, item 4): no document said which command made it.
#[test]
fn every_document_records_the_command_that_made_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = common::data_file(d, "t.dat", 2 << 20);
    let t = t.to_str().unwrap();
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    let base = [
        "--duration",
        "200ms",
        "--ramp",
        "0",
        "--bs",
        "64k",
        "--no-progress",
    ];
    let mut runs = Vec::new();
    for name in ["a.json", "b.json"] {
        let mut args = vec!["run".to_string()];
        args.extend(base.iter().map(|s| s.to_string()));
        args.extend(["--json".into(), p(name), t.into()]);
        sb().args(&args).assert().success();
        assert_eq!(argv(&doc(&d.join(name))), args);
        runs.push(p(name));
    }
    let mut sweep = vec!["sweep", "--param", "jobs=1,2,3", "--json"];
    let s = p("s.json");
    sweep.push(&s);
    sweep.extend(base);
    sweep.push(t);
    sb().args(&sweep).assert().success();
    let sd = doc(Path::new(&s));
    assert_eq!(argv(&sd), sweep);
    // Each point's run says the sweep made it.
    assert_eq!(argv(&sd["points"][0]["runs"][0]), sweep);
    let m = p("m.json");
    let merge = ["merge", "--force", &runs[0], &runs[1], "--json", &m];
    sb().args(merge).assert().success();
    assert_eq!(argv(&doc(Path::new(&m))), merge);
    let pl = p("p.json");
    // Two short points: the fit is not to be trusted, and no matter here.
    let plan = ["plan", "--force", &s, "--json", &pl];
    sb().args(plan).assert().success();
    assert_eq!(argv(&doc(Path::new(&pl))), plan);
    let df = p("d.json");
    let diff = ["diff", &runs[0], &runs[1], "--json", &df];
    let out = sb().args(diff).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
    assert_eq!(argv(&doc(Path::new(&df))), diff);
}

// Regression (issue 21, item 4): a run made with --config could not be
// repeated from its document: the file's content was nowhere.
#[test]
fn a_config_files_content_is_recorded_with_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let t = common::data_file(dir.path(), "t.dat", 2 << 20);
    let cfg = dir.path().join("c.toml");
    let text = "# a test\nduration = \"200ms\"\nramp = \"0s\"\nbs = \"64k\"\n";
    std::fs::write(&cfg, text).unwrap();
    let out = dir.path().join("r.json");
    sb().arg("run")
        .arg("--config")
        .arg(&cfg)
        .args(["--no-progress", "--json"])
        .arg(&out)
        .arg(&t)
        .assert()
        .success();
    let d = doc(&out);
    let inv = &d["tool"]["invocation"];
    assert_eq!(inv["config_file"]["content"], text);
    assert_eq!(inv["config_file"]["path"], cfg.to_str().unwrap());
    // argv is what was typed, not the options the file spliced in.
    assert_eq!(argv(&d)[..3], ["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(d["config"]["bs"], "65536");
}

// Regression (issue 21, item 4): the HTML report shows the command, with a
// hostile target name (markup, a terminal escape, a quote) escaped, and the
// page still well-formed.
#[test]
fn the_report_shows_the_command_with_hostile_bytes_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let name = OsStr::from_bytes(b"t<b>&\x1b[31m'x");
    let t = dir.path().join(name);
    std::fs::write(&t, vec![7u8; 1 << 20]).unwrap();
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, "duration = \"200ms\"\n# <script>alert(1)</script>\n").unwrap();
    let html = dir.path().join("r.html");
    let json_out = dir.path().join("r.json");
    sb().arg("run")
        .arg("--config")
        .arg(&cfg)
        .args(["--ramp", "0", "--bs", "64k", "--no-progress", "--html"])
        .arg(&html)
        .arg("--json")
        .arg(&json_out)
        .arg(&t)
        .assert()
        .success();
    let command = doc(&json_out)["tool"]["invocation"]["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        command.contains(" $'/") && command.ends_with("/t<b>&\\x1b[31m\\'x'"),
        "the target comes back quoted: {command}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    // The Command section (the target's name elsewhere in the page is the
    // renderers' own escaping, not this section's).
    let at = page.find("<h2>Command</h2>").expect("a Command section");
    let section = &page[at..page.find("<footer>").unwrap()];
    assert!(
        !section.contains('\x1b') && !section.contains('\x07'),
        "a raw control byte: {section}"
    );
    assert!(
        !section.contains("<b>") && !section.contains("<script>"),
        "raw markup: {section}"
    );
    assert!(
        section.contains("t&lt;b&gt;&amp;\\x1b[31m\\&#39;x"),
        "the command escaped: {section}"
    );
    assert!(
        section.contains("# &lt;script&gt;alert(1)&lt;/script&gt;"),
        "the config escaped: {section}"
    );
    roxmltree::Document::parse(&format!("<div>{section}</div>")).expect("well-formed markup");
}
