//! Text from outside (a target's name, a document's hostname and warnings)
//! never puts raw control bytes on a terminal: every text rendering (table,
//! CSV, HTML, the live stream, the metrics file, the dry run, an error
//! message, merge, diff and report) escapes them, and the JSON keeps the
//! real text.

use crate::common;

use std::path::Path;

use crate::common::{data_file, sb};
use serde_json::Value;

/// A name that retitles the terminal's window and turns its text red.
const HOSTILE: &str = "t\u{1b}]0;pwned\u{7}\u{1b}[31m\u{8}\u{7f}\u{9b}2J";

/// The control bytes (C0 but newline and tab, DEL, and C1 as UTF-8) that
/// `bytes` holds, as (offset, byte).
fn controls(bytes: &[u8]) -> Vec<(usize, u8)> {
    let mut out: Vec<(usize, u8)> = bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f)
        .map(|(i, &b)| (i, b))
        .collect();
    // C1 controls are U+0080..U+009F: 0xC2 then 0x80..0x9F in UTF-8.
    out.extend(
        bytes
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[0] == 0xc2 && (0x80..0xa0).contains(&w[1]))
            .map(|(i, w)| (i, w[1])),
    );
    out
}

fn clean(what: &str, bytes: &[u8]) {
    let c = controls(bytes);
    assert!(
        c.is_empty(),
        "{what}: raw control bytes {:?} in {:?}",
        &c[..c.len().min(8)],
        String::from_utf8_lossy(bytes)
    );
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Regression (issue 20, item 5): a target file named with `\e]0;...\a\e[31m`
/// printed raw in the run table and the CSV, and the HTML page held raw ESC
/// bytes. A real run over such a file: every output is free of control
/// bytes, and the JSON still names the file as it is.
#[test]
fn a_hostile_target_name_reaches_no_output_raw() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), HOSTILE, 4 << 20);
    let o = |n: &str| dir.path().join(n);
    let out = sb()
        .args(["run", "--ramp", "0", "-t", "2s", "--bs", "4k"])
        .arg("--csv")
        .arg(o("r.csv"))
        .arg("--html")
        .arg(o("r.html"))
        .arg("--json")
        .arg(o("r.json"))
        .arg("--live")
        .arg(o("live.jsonl"))
        .arg("--metrics")
        .arg(o("m.prom"))
        .arg(&t)
        .output()
        .unwrap();
    common::succeeded(&out);
    clean("the table", &out.stdout);
    clean("stderr", &out.stderr);
    for f in ["r.csv", "r.html", "r.json", "live.jsonl", "m.prom"] {
        clean(f, &read(&o(f)));
    }
    let doc: Value = serde_json::from_slice(&read(&o("r.json"))).unwrap();
    assert_eq!(
        doc["targets"][0]["path"],
        t.to_str().unwrap(),
        "the JSON keeps the name"
    );
    // The live stream as CSV, to stdout.
    let out = sb()
        .args([
            "run",
            "--ramp",
            "0",
            "-t",
            "2s",
            "--bs",
            "4k",
            "--no-progress",
        ])
        .args(["--live-format", "csv", "--live", "-"])
        .arg(&t)
        .output()
        .unwrap();
    common::succeeded(&out);
    clean("--live - as CSV", &out.stdout);
    // The dry run, and a refusal naming the file.
    let out = sb().args(["run", "--dry-run"]).arg(&t).output().unwrap();
    clean("--dry-run stdout", &out.stdout);
    clean("--dry-run stderr", &out.stderr);
    let out = sb()
        .args(["run", "--rw", "write", "-t", "1s"])
        .arg(&t)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    clean("the refusal", &out.stderr);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("\\u{1b}]0;pwned"),
        "the name is shown, escaped: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Regression (issue 20, item 5): a merged document whose hostname is
/// `evil\e]52;c;...\a\e[2J` (a clipboard write, then a screen clear) and a
/// warning `\e[31mfake all-clear` came out raw from merge and diff. merge,
/// diff and report over such documents print none of it raw.
#[test]
fn hostile_document_text_reaches_no_output_raw() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 4 << 20);
    let mut docs = Vec::new();
    for name in ["a.json", "b.json"] {
        let p = dir.path().join(name);
        let out = sb()
            .args([
                "run",
                "--no-progress",
                "--ramp",
                "0",
                "-t",
                "1s",
                "--bs",
                "4k",
            ])
            .arg(&t)
            .arg("--json")
            .arg(&p)
            .output()
            .unwrap();
        common::succeeded(&out);
        let mut v: Value = serde_json::from_slice(&read(&p)).unwrap();
        v["host"]["hostname"] = format!("evil{name}\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[2J").into();
        v["warnings"] = serde_json::json!(["\u{1b}[31mfake all-clear\u{9b}K"]);
        v["host"]["kernel"] = "6.1\u{1b}[2J".into();
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        docs.push(p);
    }
    let m = dir.path().join("m.json");
    let out = sb()
        .arg("merge")
        // The runs went one after the other: not concurrent, merged anyway.
        .arg("--force")
        .args(&docs)
        .arg("--json")
        .arg(&m)
        .output()
        .unwrap();
    common::succeeded(&out);
    clean("merge stdout", &out.stdout);
    clean("merge stderr", &out.stderr);
    // merge to the terminal (its table), diff of the runs and of the merge.
    let runs: Vec<&Path> = docs.iter().map(|p| p.as_path()).collect();
    for args in [
        vec![Path::new("merge"), Path::new("--force"), runs[0], runs[1]],
        vec![Path::new("diff"), runs[0], runs[1]],
        vec![Path::new("diff"), &m, &m],
    ] {
        let out = sb().args(&args).output().unwrap();
        assert!(
            out.status.code().is_some_and(|c| c < 2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        clean(&format!("{args:?} stdout"), &out.stdout);
        clean(&format!("{args:?} stderr"), &out.stderr);
    }
    for (doc, name) in [(runs[0], "a.html"), (&m, "m.html")] {
        let html = dir.path().join(name);
        let out = sb()
            .arg("report")
            .arg(doc)
            .arg("-o")
            .arg(&html)
            .output()
            .unwrap();
        common::succeeded(&out);
        clean("report stderr", &out.stderr);
        clean(name, &read(&html));
    }
    // The merged JSON keeps the real hostname.
    let v: Value = serde_json::from_slice(&read(&m)).unwrap();
    assert!(v["hosts"][0]["hostname"]
        .as_str()
        .unwrap()
        .contains('\u{1b}'));
}

/// Invisible characters that reorder or hide text beyond the bidi overrides
/// (found by a hostile pass over issue 20): the Arabic letter mark U+061C (a
/// bidi mark), U+2028/U+2029 (line and paragraph separators), the word
/// joiner and invisible operators U+2060..U+2064, the deprecated format
/// controls U+206A..U+206F, U+180E, U+FFF9..U+FFFB and the tag characters
/// U+E0000..U+E007F (text a terminal shows as nothing: "ASCII smuggling").
const INVISIBLE: &[char] = &[
    '\u{61c}',
    '\u{2028}',
    '\u{2029}',
    '\u{2060}',
    '\u{2064}',
    '\u{206a}',
    '\u{206f}',
    '\u{180e}',
    '\u{fff9}',
    '\u{e0001}',
    '\u{e0041}',
    '\u{e007f}',
    '\u{ad}',
];

/// Regression (hostile pass, issue 20 item 5): a document whose hostname and
/// warning held U+061C, U+2028 and tag characters came out of diff and
/// report with them raw (only C0, C1, DEL, bidi overrides and isolates and
/// zero-width characters were escaped).
#[test]
fn invisible_format_characters_in_a_document_are_escaped_too() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 4 << 20);
    let p = dir.path().join("a.json");
    let out = sb()
        .args([
            "run",
            "--no-progress",
            "--ramp",
            "0",
            "-t",
            "300ms",
            "--bs",
            "4k",
        ])
        .arg(&t)
        .arg("--json")
        .arg(&p)
        .output()
        .unwrap();
    common::succeeded(&out);
    let mut v: Value = serde_json::from_slice(&read(&p)).unwrap();
    let payload: String = INVISIBLE.iter().flat_map(|&c| [c, 'x']).collect();
    v["host"]["hostname"] = format!("evil{payload}").into();
    v["warnings"] = serde_json::json!([format!("fake{payload}")]);
    let e = dir.path().join("e.json");
    std::fs::write(&e, serde_json::to_vec(&v).unwrap()).unwrap();
    let html = dir.path().join("e.html");
    let runs = [
        sb().arg("diff").arg(&e).arg(&p).output().unwrap(),
        sb().arg("report")
            .arg(&e)
            .arg("-o")
            .arg(&html)
            .output()
            .unwrap(),
    ];
    let mut texts = vec![read(&html)];
    for o in runs {
        assert!(
            o.status.code().is_some_and(|c| c < 2),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        texts.push(o.stdout);
        texts.push(o.stderr);
    }
    for t in texts {
        let s = String::from_utf8_lossy(&t);
        let raw: Vec<String> = s
            .chars()
            .filter(|c| INVISIBLE.contains(c))
            .map(|c| format!("U+{:04X}", u32::from(c)))
            .collect();
        assert!(raw.is_empty(), "raw {raw:?} in {s}");
    }
}

/// Regression (hostile pass, issue 20 item 5): a test-bed record in the
/// state directory naming `/tmp/\e]0;PWN\a\e[2J/stripebench-testbed-N-x`
/// put those escapes raw on the terminal in every measuring command's
/// warning that a killed run left its test bed behind.
#[test]
fn a_test_bed_record_with_escapes_in_its_path_is_warned_about_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let t = data_file(dir.path(), "t", 4 << 20);
    std::fs::write(
        state.join("testbed-4000001.path"),
        serde_json::to_vec(&serde_json::json!({
            "dir": "/tmp/\u{1b}]0;PWN\u{7}\u{1b}[2J\u{9b}K/stripebench-testbed-4000001-x",
            "token": "abc"
        }))
        .unwrap(),
    )
    .unwrap();
    let out = sb()
        .env("STRIPEBENCH_STATE_DIR", &state)
        .env("STRIPEBENCH_HISTORY", crate::common::history_db())
        .args([
            "run",
            "--no-progress",
            "--ramp",
            "0",
            "-t",
            "200ms",
            "--bs",
            "4k",
        ])
        .arg(&t)
        .output()
        .unwrap();
    common::succeeded(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("left its test bed behind"), "{err}");
    clean("the warning", &out.stderr);
}

/// The stdout lines of `out` that start with `prefix`: a field's newline
/// that became a line of its own.
fn lines_starting(out: &[u8], prefix: &str) -> Vec<String> {
    String::from_utf8_lossy(out)
        .lines()
        .filter(|l| l.trim_start().starts_with(prefix))
        .map(String::from)
        .collect()
}

/// Regression (issue 38, item 6): a target file named `x\ny.dat` added a row
/// `y.dat ...` to the run table (show_lines keeps a rendering's newlines, and
/// the name went into the table raw); the same in the CSV on stdout and in
/// diff's table. Each shows the name on one line, its newline escaped.
#[test]
fn a_newline_in_a_target_name_forges_no_row() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "x\ny.dat", 4 << 20);
    let quick = ["--ramp", "0", "-t", "300ms", "--bs", "64k", "--no-progress"];
    let out = sb().arg("run").args(quick).arg(&t).output().unwrap();
    common::succeeded(&out);
    assert_eq!(lines_starting(&out.stdout, "y.dat"), Vec::<String>::new());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("x\\u{a}y.dat"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = sb()
        .arg("run")
        .args(quick)
        .args(["--csv", "-"])
        .arg(&t)
        .output()
        .unwrap();
    common::succeeded(&out);
    assert_eq!(lines_starting(&out.stdout, "y.dat"), Vec::<String>::new());
    let doc = dir.path().join("r.json");
    let out = sb()
        .arg("run")
        .args(quick)
        .arg("--json")
        .arg(&doc)
        .arg(&t)
        .output()
        .unwrap();
    common::succeeded(&out);
    let out = sb().arg("diff").arg(&doc).arg(&doc).output().unwrap();
    common::succeeded(&out);
    assert_eq!(lines_starting(&out.stdout, "y.dat"), Vec::<String>::new());
}

/// Regression (issue 38, item 6): a run document whose hostname is
/// `evil\nFLEET 999999.9 ...` printed a forged FLEET row in merge's table
/// (and a forged row in diff's of the merged documents). The hostname is
/// shown on its row, escaped.
#[test]
fn a_newline_in_a_documents_hostname_forges_no_row() {
    let dir = tempfile::tempdir().unwrap();
    let t = data_file(dir.path(), "t", 4 << 20);
    let p = dir.path().join("a.json");
    let out = sb()
        .args(["run", "--no-progress", "--ramp", "0", "-t", "300ms"])
        .args(["--bs", "64k", "--json"])
        .arg(&p)
        .arg(&t)
        .output()
        .unwrap();
    common::succeeded(&out);
    let mut v: Value = serde_json::from_slice(&read(&p)).unwrap();
    v["host"]["hostname"] = "evil\nFLEET 999999.9 999999 1us 1us 1us".into();
    v["warnings"] = serde_json::json!(["fine\nFORGED warning"]);
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    let m = dir.path().join("m.json");
    let merge = ["merge", p.to_str().unwrap(), "--missing", "gone=no answer"];
    let out = sb().args(merge).arg("--json").arg(&m).output().unwrap();
    common::succeeded(&out);
    let m = m.to_str().unwrap();
    for args in [merge.to_vec(), vec!["diff", m, m]] {
        let out = sb().args(&args).output().unwrap();
        assert!(out.status.code().is_some_and(|c| c < 2), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            lines_starting(&out.stdout, "FLEET 999999"),
            Vec::<String>::new(),
            "{args:?}: {text}"
        );
        assert_eq!(lines_starting(&out.stdout, "FORGED"), Vec::<String>::new());
        assert!(text.contains("evil\\u{a}FLEET"), "{args:?}: {text}");
    }
}

/// Regression (issue 38, item 6): a device mounted at a directory named
/// `m\n  [ok] not mounted: FAKE` put a fake `[ok]` line under the real
/// REFUSED line of a dry run (mountinfo's `\012` decoded, and printed raw),
/// and the same line in the refusal of a real run.
#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices, mount")]
fn a_newline_in_a_mount_point_forges_no_dry_run_line() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    common::sh_required("mkfs.ext4", &["-q", img.to_str().unwrap()]);
    let lo = common::Loop::attach(&img, &[]);
    let at = dir.path().join("m\n  [ok] not mounted: FAKE");
    std::fs::create_dir(&at).unwrap();
    let _m = common::mount(&[&lo.dev], &at);
    let write = ["run", "--rw", "write", "--allow-destructive", "-t", "1s"];
    let out = sb()
        .args(write)
        .arg("--dry-run")
        .arg(&lo.dev)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("[REFUSED] not mounted"), "{text}");
    assert_eq!(
        lines_starting(&out.stdout, "[ok] not mounted: FAKE"),
        Vec::<String>::new(),
        "{text}"
    );
    assert!(text.contains("m\\u{a}  [ok] not mounted: FAKE"), "{text}");
    let out = sb().args(write).arg(&lo.dev).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        lines_starting(&out.stderr, "[ok]"),
        Vec::<String>::new(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 38, hostile review: a document's `fio.command` and
/// `tool.invocation.command` reached the HTML report's `<pre>` blocks with
/// their newlines, so a crafted document put a line of its own in the box a
/// reader copies and runs ("The same workload in fio"). Each is one line.
#[test]
fn a_newline_in_a_documents_commands_forges_no_line_in_the_html() {
    let d = tempfile::tempdir().unwrap();
    let j = common::run_document(d.path(), "r.json");
    let mut v: Value = serde_json::from_slice(&read(&j)).unwrap();
    v["fio"]["command"] = "fio --name=x --filename=/dev/sdz --rw=write\nFAKEFIO".into();
    v["tool"]["invocation"]["command"] = "stripebench run\nFAKECMD".into();
    v["host"]["hostname"] = "h\nFAKEHOST".into();
    std::fs::write(&j, serde_json::to_vec(&v).unwrap()).unwrap();
    let h = d.path().join("r.html");
    sb().arg("report")
        .arg(&j)
        .arg("-o")
        .arg(&h)
        .assert()
        .success();
    let html = String::from_utf8(read(&h)).unwrap();
    for fake in ["FAKEFIO", "FAKECMD"] {
        let line = html.lines().find(|l| l.contains(fake)).expect(fake);
        assert!(
            !line.starts_with(fake),
            "{fake} has a line of its own: {line}"
        );
        assert!(line.contains(&format!("\\u{{a}}{fake}")), "{line}");
    }
    assert!(!html.contains("\nFAKEHOST"), "the title or a heading");
}
