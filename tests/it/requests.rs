//! What the device saw of each request (issue "truth on real block
//! stacks"): the average request size from the device's counters, the
//! warning that names the queue limit splitting O_DIRECT requests, the queue
//! limits in `topology`, and devices that keep no statistics. Loop devices.

use crate::common;

use crate::common::{json, run_json, sb, u, LoopBed};

fn queue_file(dev: &str, name: &str) -> String {
    format!(
        "/sys/block/{}/queue/{name}",
        dev.trim_start_matches("/dev/")
    )
}

/// The tests here change and read loop devices' queue settings; run one at
/// a time (seen: a device's max_sectors_kb of 128 from the limit test
/// while the huge-page test measured, when both ran at once).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sets a queue attribute for the test and puts it back on drop.
struct QueueSetting {
    path: String,
    old: String,
}

impl QueueSetting {
    fn set(dev: &str, name: &str, value: &str) -> QueueSetting {
        let path = queue_file(dev, name);
        let old = std::fs::read_to_string(&path).unwrap().trim().to_string();
        std::fs::write(&path, value).unwrap();
        QueueSetting { path, old }
    }
}

impl Drop for QueueSetting {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.path, &self.old);
    }
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_request_limit_below_bs_is_named_and_the_average_request_shows_it() {
    let _one = serial();
    let bed = LoopBed::new(1, 64);
    let dev = bed.devices[0].clone();
    let _limit = QueueSetting::set(&dev, "max_sectors_kb", "128");
    let out = sb()
        .args(["run", "--bs", "1m", "--duration", "300ms", "--ramp", "0"])
        .args(["--json", "-", &dev])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    common::succeeded(&out);
    // Said before the run starts, and again with the evidence after it.
    assert!(err.contains("larger than one request"), "{err}");
    let doc = json(&out.stdout);
    let d = &doc["targets"][0]["device"];
    assert_eq!(d["stats"], true);
    let avg = d["avg_read_request_bytes"].as_f64().unwrap();
    assert!(
        (avg - 131072.0).abs() < 131072.0 * 0.02,
        "average request {avg}, expected 128 KiB"
    );
    let split = common::warnings_of(&doc, "split_requests");
    assert_eq!(split.len(), 1, "{}", doc["warnings"]);
    let w = split[0];
    assert_eq!(w["writes"], false, "{w}");
    assert_eq!(u(&w["bs"]), 1 << 20, "{w}");
    assert_eq!(u(&w["avg_bytes"]), avg as u64, "the device's figure: {w}");
    let why = w["why"].as_str().unwrap();
    assert!(why.contains("max_sectors_kb is 128"), "{w}");
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn a_device_without_io_statistics_gets_no_ratio() {
    let _one = serial();
    let bed = LoopBed::new(1, 32);
    let dev = bed.devices[0].clone();
    let _off = QueueSetting::set(&dev, "iostats", "0");
    let out = sb()
        .args([
            "run",
            "--buffered",
            "--duration",
            "300ms",
            "--ramp",
            "0",
            &dev,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    common::succeeded(&out);
    assert!(text.contains("keeps no I/O statistics"), "{text}");
    assert!(!text.contains("ratio 0.000"), "{text}");
    assert!(!text.contains("page cache served"), "{text}");
    let doc = run_json(&["run", "--duration", "200ms", "--ramp", "0", &dev]);
    let d = &doc["targets"][0]["device"];
    assert_eq!(d["stats"], false);
    assert!(d["read_ratio"].is_null() && d["avg_read_request_bytes"].is_null());
}

#[test]
#[cfg_attr(not(sb_root), ignore = "needs root: loop devices")]
fn topology_shows_the_queue_limits() {
    let _one = serial();
    let bed = LoopBed::new(1, 16);
    let dev = bed.devices[0].clone();
    let out = sb().args(["topology", &dev]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("queue: max_sectors_kb"), "{text}");
    let out = sb().args(["topology", "--json", &dev]).output().unwrap();
    let t = json(&out.stdout);
    let want = std::fs::read_to_string(queue_file(&dev, "max_segments")).unwrap();
    assert_eq!(
        t["root"]["queue"]["max_segments"].as_u64(),
        want.trim().parse::<u64>().ok()
    );
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_thp)),
    ignore = "needs root (loop devices) and transparent huge pages (THP is [never] here)"
)]
fn a_huge_page_buffer_reaches_the_device_as_one_request() {
    let thp =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    common::require(
        thp.contains("[always]") || thp.contains("[madvise]"),
        &format!("needs transparent huge pages, and THP is {thp:?}"),
    );
    let _one = serial();
    // A loop device's queue takes 128 segments: a 1 MiB buffer of scattered
    // 4 KiB pages is split in two 512 KiB requests, one in a huge page is not.
    let bed = LoopBed::new(1, 64);
    let dev = bed.devices[0].clone();
    let run = |hp: &str| {
        run_json(&[
            "run",
            "--bs",
            "1m",
            "--duration",
            "300ms",
            "--ramp",
            "0",
            "--hugepages",
            hp,
            &dev,
        ])
    };
    let off = run("off");
    assert_eq!(off["workers"][0]["buffer"]["method"], "pages");
    // O_DIRECT: at a page's start, as the device's DMA wants; the document
    // then says no offset (4080 only for --cached runs).
    assert!(off["workers"][0]["buffer"]["offset_in_page_bytes"].is_null());
    let auto = run("auto");
    let method = auto["workers"][0]["buffer"]["method"]
        .as_str()
        .unwrap()
        .to_string();
    let avg = auto["targets"][0]["device"]["avg_read_request_bytes"]
        .as_f64()
        .unwrap();
    // THP is on (checked above): auto must have had its huge page.
    assert_ne!(method, "pages", "THP is {thp:?}, buffer {method}");
    assert_eq!(auto["workers"][0]["buffer"]["page_size_bytes"], 2 << 20);
    assert!(
        (avg - 1048576.0).abs() <= 1048576.0 * 0.02,
        "{method} buffer: average request {avg}, expected 1 MiB"
    );
}
