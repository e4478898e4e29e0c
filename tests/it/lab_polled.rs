//! `--hipri` (IORING_SETUP_IOPOLL) on a device with poll queues: null_blk
//! loaded with `poll_queues=2` in the lab guest, where a polled ring's
//! completions arrive only when the worker polls for them, so every I/O
//! that completes proves polling works. Beside it, a loop device (no poll
//! queues) is refused in one line before any I/O. TCG speed is not the
//! point: bytes, I/Os, errors and the ring's report are.
//!
//! Needs what the lab needs (`sb_lab`, see build.rs).

use crate::common::u;

#[test]
#[cfg_attr(not(sb_lab), ignore = "needs the lab: qemu, root")]
fn hipri_polls_null_blk_with_poll_queues_and_refuses_a_device_without() {
    let script = r#"
modprobe null_blk nr_devices=1 queue_mode=2 poll_queues=2 gb=1 bs=4096
cat /sys/block/nullb0/queue/io_poll > io_poll.txt
step hipri stripebench run --hipri --rw randread --bs 4k --iodepth 8 --io-limit 16m --no-progress --allow-holes --json hipri.json /dev/nullb0
step hipri_read stripebench run --hipri --rw read --bs 64k --iodepth 4 --io-limit 32m --no-progress --allow-holes --json hipri_read.json /dev/nullb0
set -- $MEMBERS
step nopoll stripebench run --hipri --rw randread --iodepth 4 --duration 60s --ramp 0 --no-progress $1
"#;
    let g = crate::common::guest::boot(&["--array", "none", "--members", "1"], script, 480);
    assert_eq!(
        g.value("io_poll.txt"),
        "1",
        "null_blk with poll_queues polls"
    );
    // 64k, not more: null_blk takes at most 124 KiB per request, and on this
    // 6.1 kernel a polled I/O the block layer splits never completes (seen
    // with 128k: stripebench reported the 4 in flight hung after
    // --hang-timeout, as it should).
    // null_blk holds nothing: it answers every read with zeros, which the
    // run says (and, without --allow-holes, fails: this test is about
    // polling, so it allows them).
    for (name, ios) in [("hipri", 4096), ("hipri_read", 512)] {
        let d = g.ok_json(name);
        assert_eq!(d["config"]["hipri"], true, "{name}");
        let sampled = u(&d["total"]["sampled_reads"]);
        assert!(sampled > 0, "{name}: reads were sampled");
        assert_eq!(
            u(&d["total"]["zero_reads"]),
            sampled,
            "{name}: null_blk returns zeros"
        );
        let w = &d["workers"][0];
        assert_eq!(u(&w["ios"]), ios, "{name}: every I/O completed, by polling");
        assert_eq!(u(&w["errors"]), 0, "{name}");
        assert_eq!(w["ring"]["iopoll"], true, "{name}: {}", w["ring"]);
        assert!(
            w["engine_path"]
                .as_str()
                .unwrap()
                .contains("polled (IOPOLL)"),
            "{name}: {}",
            w["engine_path"]
        );
    }
    let said = g.said("nopoll", 2);
    assert!(
        said.contains("--hipri needs polled completions")
            && said.contains("no poll queues (queue/io_poll is 0)"),
        "{said}"
    );
    assert_eq!(said.trim().lines().count(), 1, "one line: {said}");
}
