//! compare's verdict in the stripe lab (`scripts/lab.sh`, a throwaway
//! qemu guest): one member behind dm-delay among 16 is the only one
//! flagged, at the default bs and at 64k (measured alone, --solo: with 16
//! workers on 2 busy TCG vCPUs together, every member waits for a CPU
//! longer than for the delay, and then none is off: the verdict says so);
//! 16 equal members flag none; a failing member (dm-error) is named, and
//! the phases it failed are kept out of the efficiency and the verdict.
//!
//! The guest runs under TCG on a machine shared with other work: these
//! tests assert structure (which members are flagged, which phases are
//! marked, what is named), never a speed.

use serde_json::Value;

use crate::common::guest::Guest;

/// Boots a guest with `opts` and runs `script` there.
fn guest(opts: &[&str], script: &str) -> Guest {
    crate::common::guest::boot(opts, script, 900)
}

/// The members the verdict flagged.
fn flagged(doc: &Value) -> Vec<String> {
    doc["verdict"]["flagged"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["member"].as_str().unwrap().to_string())
        .collect()
}

/// The member behind dm-delay is flagged and leads (the slowest). Any
/// other member flagged must be so by the rule: below the fence in every
/// run (its best run too), each run taken against its neighbours in time;
/// it is said in the log. Seen in the lab with 4 guests on 2 CPUs: an
/// undelayed member of 64 ran 116.4-126.9 MB/s in both runs alone against
/// a median of 200.5 (fence 141.6), as its neighbours did not; on a quieter
/// host (3 guests) only the delayed member was flagged, of 16 and of 64, at
/// the default bs and at 64k. The lab's loop devices are alike on paper,
/// not in what the guest's memory gives each.
fn the_delayed_member_leads(doc: &Value, slow: &str, step: &str, text: &str) {
    let all = flagged(doc);
    assert_eq!(
        all.first().map(String::as_str),
        Some(slow),
        "{step}: the delayed member leads:\n{text}"
    );
    assert_eq!(doc["slowest"], slow);
    for f in doc["verdict"]["flagged"].as_array().unwrap() {
        if f["member"] == slow {
            continue;
        }
        eprintln!("{step}: also flagged: {f}");
        if f["by"] != "rate" {
            continue;
        }
        let m = doc["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["path"] == f["member"])
            .unwrap();
        let best = m["range_bytes_per_sec"][1].as_f64().unwrap();
        assert!(
            best < f["threshold"].as_f64().unwrap(),
            "{step}: {f}: {m}\n{text}"
        );
    }
}

/// The verdict's lines of a compare's text report (for the test's log:
/// the figures each verdict rested on).
fn verdict_lines(text: &str) -> String {
    text.lines()
        .skip_while(|l| !l.starts_with("verdict:"))
        .take_while(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The verdict was given (enough I/O), from `source` over `runs` runs, with
/// its numbers; no phase failed (a thin one may: the buffered phase of 16
/// workers on 2 busy vCPUs can leave workers with a handful of I/Os).
fn judged(doc: &Value, text: &str, source: &str, runs: u64) {
    let v = &doc["verdict"];
    assert!(v["none"].is_null(), "no verdict: {v}\n{text}");
    assert_eq!(v["source"], source);
    assert_eq!(v["runs"], runs);
    let r = &v["rate"];
    assert!(r["threshold"].as_f64().unwrap() < r["median"].as_f64().unwrap());
    for p in doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .chain(doc["repeats"].as_array().unwrap())
    {
        assert_ne!(
            p["status"], "failed",
            "{}: {}\n{text}",
            p["name"], p["problems"]
        );
        if p["status"] == "thin" {
            assert!(p["problems"][0].as_str().unwrap().contains("I/O"), "{p}");
        }
    }
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn one_delayed_member_of_16_is_the_only_one_flagged_at_1m_and_64k() {
    // 50 ms: at 1 MiB a 20 ms delay left the member at 36.2 MB/s against a
    // median of 155.2 on a loaded TCG host, just under the fence that the
    // spread's cap holds at a quarter of the median (38.8): a pass by luck.
    let g = guest(
        &[
            "--array",
            "md-raid0",
            "--members",
            "16",
            "--member-size",
            "32m",
            "--slow-member",
            "11:50",
        ],
        r#"
step big stripebench compare --solo --repeat 2 --duration 2s --ramp 0 --json big.json $ARRAY
step small stripebench compare --solo --repeat 2 --duration 2s --ramp 0 --bs 64k --json small.json $ARRAY
"#,
    );
    let slow = g.members()[11].clone();
    assert!(slow.starts_with("/dev/dm-"), "behind dm-delay: {slow}");
    for step in ["big", "small"] {
        let doc = g.doc(step, 0);
        let text = g.text(&format!("{step}.txt"));
        eprintln!("{step}:\n{}", verdict_lines(&text));
        judged(&doc, &text, "alone", 2);
        assert_eq!(doc["repeats"].as_array().unwrap().len(), 17);
        the_delayed_member_leads(&doc, &slow, step, &text);
        assert!(text.contains(&format!("SLOW: {slow}: ")), "{text}");
        // RAID0: the ceiling is N × member, and the text says so.
        assert_eq!(doc["ceilings"][0]["rule"], "RAID0 reads: N × member");
        assert!(text.contains("ceilings (raid0, 16 members"), "{text}");
    }
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn one_delayed_member_of_64_is_the_only_one_flagged_at_the_defaults() {
    // Issue 23's 64-member case: one of 64 was flagged from a single
    // completed I/O, and 17 were more than 15 % below the median with one
    // named. Alone (--solo), each member has the guest's 2 vCPUs to itself,
    // so the delay is what tells it apart; the verdict must rest on enough
    // I/O per member and name the delayed one alone. At the default bs
    // only: 64k is the 16-member test's, and 130 more solo windows cost CI
    // 280 s (on a host kept busy beside it the guest took over 900 s for
    // both).
    let g = crate::common::guest::boot(
        &[
            "--array",
            "md-raid0",
            "--members",
            "64",
            "--member-size",
            "8m",
            "--slow-member",
            "37:20",
        ],
        r#"
step big stripebench compare --solo --repeat 2 --duration 1s --ramp 0 --json big.json $ARRAY
"#,
        1200,
    );
    let slow = g.members()[37].clone();
    assert!(slow.starts_with("/dev/dm-"), "behind dm-delay: {slow}");
    let doc = g.doc("big", 0);
    let text = g.text("big.txt");
    eprintln!("big:\n{}", verdict_lines(&text));
    judged(&doc, &text, "alone", 2);
    assert_eq!(doc["repeats"].as_array().unwrap().len(), 65);
    the_delayed_member_leads(&doc, &slow, "big", &text);
    assert!(text.contains(&format!("SLOW: {slow}: ")), "{text}");
    assert!(text.contains("ceilings (raid0, 64 members"), "{text}");
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn sixteen_equal_members_flag_none_in_3_of_3_runs() {
    let g = guest(
        &[
            "--array",
            "md-raid0",
            "--members",
            "16",
            "--member-size",
            "32m",
        ],
        r#"
for r in 1 2 3; do
  step run$r stripebench compare --duration 2s --ramp 0 --json run$r.json $ARRAY
done
step small stripebench compare --duration 2s --ramp 0 --bs 64k --json small.json $ARRAY
"#,
    );
    // Issue 23: all-equal members flag none in 5 of 5 runs (and at 64k),
    // shown so then; 3 of 3 here keep CI within its 45 minutes as the lab
    // tests grow.
    for step in ["run1", "run2", "run3", "small"] {
        let doc = g.doc(step, 0);
        let text = g.text(&format!("{step}.txt"));
        eprintln!("{step}:\n{}", verdict_lines(&text));
        assert_eq!(flagged(&doc), Vec::<String>::new(), "{step}:\n{text}");
        assert!(doc["slowest"].is_null());
        let v = &doc["verdict"];
        if v["none"].is_null() {
            judged(&doc, &text, "together", 3);
            assert!(text.contains("no member is off"), "{text}");
        } else {
            // A busy machine can leave a member short of 50 I/Os: then the
            // verdict says so, naming it, rather than judge.
            let why = v["none"].as_str().unwrap();
            assert!(
                why.starts_with("not enough I/O to judge (member /dev/"),
                "{why}"
            );
            assert!(text.contains(why), "{text}");
            eprintln!("{step}: {why}");
        }
    }
}

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn a_failing_member_is_named_and_its_phases_kept_out() {
    let g = guest(
        &[
            "--array",
            "md-raid0",
            "--members",
            "4",
            "--member-size",
            "32m",
            "--failing-member",
            "1",
        ],
        r#"
step cmp stripebench compare --solo --repeat 2 --duration 1s --ramp 0 --json cmp.json $ARRAY
"#,
    );
    let members = g.members();
    let failing = members[1].clone();
    // I/O errors: exit 1, the document written all the same.
    let doc = g.doc("cmp", 1);
    let text = g.text("cmp.txt");
    let runs: Vec<&Value> = doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .chain(doc["repeats"].as_array().unwrap())
        .collect();
    // Each member alone and the members together, twice; the volume with
    // one worker, one per member, buffered, and one buffered thread.
    assert_eq!(runs.len(), (4 + 1) * 2 + 4, "every phase ran");
    for p in &runs {
        let errors = p["document"]["total"]["errors"].as_u64().unwrap();
        let name = p["name"].as_str().unwrap();
        if errors > 0 {
            assert_eq!(p["status"], "failed", "{name}");
        }
        // A member phase fails exactly when it reads the failing member.
        if !p["name"].as_str().unwrap().starts_with("volume") {
            let reads_it = p["document"]["targets"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["path"] == failing.as_str());
            assert_eq!(errors > 0, reads_it, "{name}: {errors} errors\n{text}");
            if reads_it {
                assert_eq!(p["failing"][0], failing.as_str(), "{name}");
            }
        }
    }
    let marked = text
        .lines()
        .filter(|l| l.trim_start().starts_with("FAILED: ") && l.contains(&failing))
        .count();
    assert!(marked >= 4, "the failing member's runs are marked:\n{text}");
    // Its phases are out of the verdict: it is not judged, the others are.
    let v = &doc["verdict"];
    assert_eq!(v["source"], "alone");
    assert_eq!(v["unmeasured"], serde_json::json!([failing]), "{v}");
    assert!(v["none"].is_null(), "the other three are judged: {v}");
    assert!(!flagged(&doc).contains(&failing));
    let m = &doc["members"][1];
    assert_eq!(m["path"], failing.as_str());
    assert!(m["errors"].as_u64().unwrap() > 0);
    assert!(
        text.contains(&format!(
            "not judged (every run of theirs failed): {failing}"
        )),
        "{text}"
    );
    // The volume phase behind the efficiency read the failing range too.
    let volume = runs
        .iter()
        .find(|p| p["name"] == "volume, 4 workers, O_DIRECT")
        .unwrap();
    if volume["status"] == "failed" {
        assert!(doc["stripe_efficiency"].is_null());
        assert!(!text.contains("stripe efficiency"), "{text}");
    }
}
