//! `--stripe` models a RAID0 whose members run independently: no logical
//! request waits for its slowest piece. Until that is modelled, the figures
//! must say that they are per-member upper bounds, in the table and the JSON.

use crate::common;

use crate::common::{data_file, json, sb, u};

#[test]
fn a_modelled_raid0_labels_its_figures_as_per_member_upper_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = (0..3)
        .map(|i| {
            data_file(dir.path(), &format!("m{i}"), 3 << 20)
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let jpath = dir.path().join("s.json");
    let run = |extra: &[&str]| {
        let out = sb()
            .args(["run", "--duration", "300ms", "--ramp", "0", "--no-progress"])
            .args(extra)
            .args(["--json", jpath.to_str().unwrap()])
            .args(&files)
            .output()
            .unwrap();
        common::succeeded_as(&out, format_args!("{extra:?}"));
        let table = String::from_utf8_lossy(&out.stdout).to_string();
        (json(&std::fs::read(&jpath).unwrap()), table)
    };

    let (doc, table) = run(&["--stripe", "64k", "--bs", "256k"]);
    let m = &doc["stripe_model"];
    assert_eq!(m["figures"], "per_member_upper_bound", "{doc}");
    assert_eq!(u(&m["chunk"]), 65536);
    assert_eq!(u(&m["logical_bs"]), 262144);
    assert_eq!(u(&m["pieces_per_request"]), 4);
    assert!(m["note"].as_str().unwrap().contains("upper bound"));
    assert!(table.contains("\nTOTAL* "), "{table}");
    assert!(
        table.contains("* per-member upper bounds (4 piece(s) per logical request)"),
        "{table}"
    );

    // Without --stripe nothing is marked.
    let (doc, table) = run(&["--bs", "256k"]);
    assert!(doc["stripe_model"].is_null(), "{doc}");
    assert!(
        table.contains("\nTOTAL ") && !table.contains("TOTAL*"),
        "{table}"
    );
}
