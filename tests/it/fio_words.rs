//! fio's spellings on the command line: refused with exit 2 and one line
//! that gives stripebench's spelling, before anything is opened.

use crate::common;

#[test]
fn fio_spellings_are_refused_with_the_stripebench_spelling() {
    for (args, said) in [
        (
            &["run", "--numjobs=2", "/dev/null"][..],
            "`--numjobs=2` is fio's: stripebench says `--jobs 2 --jobs-share`",
        ),
        (
            &["run", "--direct=1"],
            "`--direct=1` is fio's: stripebench says `--direct` (its default)",
        ),
        (
            &["sweep", "--runtime=10"],
            "`--runtime=10` is fio's: stripebench says `-t 10s`",
        ),
        (
            &["compare", "--ioengine=io_uring", "/dev/null"],
            "`--ioengine=io_uring` is fio's: stripebench says `--engine uring`",
        ),
        (
            &["run", "--time_based"],
            "`--time_based` is fio's and has no equivalent",
        ),
    ] {
        let o = common::sb().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("stripebench: error: {said}")),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn stripebench_spellings_still_parse_and_unknown_options_keep_clap_s_message() {
    let o = common::sb().args(["run", "--bogus"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("unexpected argument '--bogus'"), "{err}");
    // A valid line with --rate=50m (fio's unit is stripebench's too) parses:
    // the dry run answers.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t");
    std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    let o = common::sb()
        .args(["run", "--dry-run", "--rate=50m", "--bs", "64k"])
        .arg(&f)
        .output()
        .unwrap();
    common::succeeded(&o);
}

#[test]
fn run_help_is_in_sections_with_examples() {
    let o = common::sb().args(["run", "-h"]).output().unwrap();
    common::succeeded(&o);
    let h = String::from_utf8_lossy(&o.stdout);
    let at = |s: &str| h.find(s).unwrap_or_else(|| panic!("{s} not in\n{h}"));
    assert!(at("--rw <RW>") < at("--members <VOLUME>"));
    assert!(at("Workload:") < at("Targets and stripes:"));
    assert!(at("Outputs:") < at("Safety:"));
    assert!(at("Examples:") > at("Safety:"));
}
