//! dm-crypt over an md array in the stripe lab (`scripts/lab.sh --array
//! dm-crypt-over-md`), issue 42 part 6: `advise` finds the crypt layer's
//! workqueues on and gives the commands that turn them off, and finds
//! nothing of them once the table carries no_read_workqueue and
//! no_write_workqueue; `compare` reads the members through the crypt
//! layer and the md under it. Assertions on words and structure, never on
//! a speed (TCG, shared machine).

use crate::common::guest::boot;

#[test]
#[cfg_attr(
    not(sb_lab),
    ignore = "needs qemu and the lab's tools, or root to install them"
)]
fn dm_crypt_over_raid5_workqueues_are_found_then_cleared_and_compare_reads_through_it() {
    let g = boot(
        &[
            "--array",
            "dm-crypt-over-md",
            "--members",
            "4",
            "--member-size",
            "32m",
        ],
        r#"
step before stripebench advise --quick --json before.json $ARRAY
# The same table with both flags (the key is shown to this shell only).
dmsetup table --showkeys labcrypt | sed 's/^[^:]*: //; s/$/ 2 no_read_workqueue no_write_workqueue/' | dmsetup reload labcrypt
dmsetup resume labcrypt
dmsetup table labcrypt > table.txt
step after stripebench advise --quick --json after.json $ARRAY
step cmp stripebench compare --duration 1s --ramp 0 --json cmp.json $ARRAY
"#,
        1200,
    );
    let finding = |doc: &serde_json::Value| {
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"].as_str().unwrap().starts_with("crypt-workqueues"))
            .cloned()
    };
    let before = g.doc("before", 0);
    let f = finding(&before).unwrap_or_else(|| panic!("no crypt finding: {before}"));
    eprintln!("before: {f}");
    assert_eq!(f["severity"], "low");
    assert!(f["fix"][0].as_str().unwrap().starts_with(
        "cryptsetup refresh --perf-no_read_workqueue --perf-no_write_workqueue labcrypt"
    ));
    assert!(
        f["gain"]["what"]
            .as_str()
            .unwrap()
            .ends_with("--direct /dev/mapper/labcrypt /dev/md0"),
        "{f}"
    );
    let table = g.text("table.txt");
    assert!(
        table
            .trim_end()
            .ends_with("2 no_read_workqueue no_write_workqueue"),
        "{table}"
    );
    assert!(
        !table.contains("labcrypt: 0") || table.contains(" 0000"),
        "dmsetup masks the key without --showkeys: {table}"
    );
    let after = g.doc("after", 0);
    assert!(finding(&after).is_none(), "{after}");
    let cmp = g.doc("cmp", 0);
    let members = cmp["members"].as_array().unwrap();
    assert_eq!(members.len(), 4, "{cmp}");
    for (m, name) in members.iter().zip(g.members()) {
        assert_eq!(m["path"], name.as_str(), "{m}");
    }
}
