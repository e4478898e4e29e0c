//! The man pages and shell completions come from the command line's own
//! definition: every option a subcommand's --help shows is in its man page
//! and in the completion scripts.

use crate::common;

/// The long options a help text lists (`--name`, at the start of a line).
fn options_of_help(help: &str) -> Vec<String> {
    help.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l
                .strip_prefix("-")
                .and_then(|s| s.split_once(", ").map(|(_, r)| r))
                .unwrap_or(l);
            let name = l.strip_prefix("--")?;
            let end = name
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .unwrap_or(name.len());
            Some(format!("--{}", &name[..end]))
        })
        .collect()
}

fn stdout(args: &[&str]) -> String {
    let o = common::sb().args(args).output().unwrap();
    common::succeeded(&o);
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn every_option_in_help_is_in_the_man_page_and_the_completions() {
    let bash = stdout(&["completions", "bash"]);
    let zsh = stdout(&["completions", "zsh"]);
    let fish = stdout(&["completions", "fish"]);
    let top = stdout(&["--help"]);
    let subs: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A name is indented by two; a wrapped description by more.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .filter(|s| s != "help")
        .collect();
    assert!(subs.len() >= 12, "{subs:?}");
    for sub in &subs {
        let help = stdout(&[sub, "--help"]);
        // roff escapes '-' as '\-'.
        let man = stdout(&["man", sub]).replace("\\-", "-");
        assert!(man.contains(&format!(".TH stripebench-{sub} 1")), "{sub}");
        let opts = options_of_help(&help);
        for o in opts.iter().filter(|o| *o != "--help" && *o != "--version") {
            assert!(man.contains(o.as_str()), "man stripebench-{sub} lacks {o}");
            assert!(bash.contains(o.as_str()), "bash completion lacks {sub} {o}");
            assert!(zsh.contains(o.as_str()), "zsh completion lacks {sub} {o}");
            assert!(
                fish.contains(&format!("-l {}", &o[2..])),
                "fish completion lacks {sub} {o}"
            );
        }
    }
    // The run page ends with the examples, a line each.
    let run = stdout(&["man", "run"]);
    let ex = run
        .split_once(".SH EXAMPLES\n.nf\n")
        .map(|(_, e)| e)
        .unwrap_or_else(|| panic!("{run}"));
    assert!(ex.starts_with("stripebench run "), "{ex}");
    assert!(ex.trim_end().ends_with(".fi"), "{ex}");
}

#[test]
fn a_man_page_of_no_subcommand_and_an_unknown_shell_are_refused_in_one_line() {
    for args in [&["man", "bogus"][..], &["completions", "tcsh"]] {
        let o = common::sb().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
