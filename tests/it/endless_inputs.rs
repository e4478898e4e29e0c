//! Files given by name that never end, never open or are no file:
//! `/dev/zero`, `/dev/urandom`, a FIFO with no writer and a directory, as
//! each input stripebench reads (a TOML config, a fio job file, the
//! documents of report, merge, diff and plan, a preflight record). Each is
//! refused at once in one line naming it (exit 2), having read nothing.

use crate::common;

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

/// Far more than a refusal needs, even on a loaded machine; what hung
/// before hung for good.
const BOUND: Duration = Duration::from_secs(10);

/// Regression: `run --config /dev/zero --dry-run` reached 5 GB resident in
/// 20 s and was still reading, and a FIFO with no writer hung --config,
/// --fio-job, report, merge and diff for ever at open; /dev/zero as a
/// document was read to its 256 MiB cap first. Every input file is now
/// opened without blocking, must be a regular file, and is read to a
/// stated size.
#[test]
fn an_endless_or_unopenable_input_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let t = common::data_file(dir.path(), "t", 2 << 20);
    let good = dir.path().join("run.json");
    common::sb()
        .args(["run", "-t", "200ms", "--ramp", "0", "--json"])
        .arg(&good)
        .arg(&t)
        .assert()
        .success();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let html = dir.path().join("r.html");
    let good = good.as_os_str();
    for bad in [
        Path::new("/dev/zero"),
        Path::new("/dev/urandom"),
        &fifo,
        dir.path(),
    ] {
        let x = bad.as_os_str();
        let o = OsStr::new;
        for args in [
            vec![o("run"), o("--config"), x, o("--dry-run")],
            vec![o("run"), o("--fio-job"), x, o("--dry-run")],
            vec![o("report"), x, o("-o"), html.as_os_str()],
            vec![o("merge"), x, good],
            vec![o("merge"), good, o("--preflight"), x],
            vec![o("diff"), good, x],
            vec![o("plan"), x, good],
        ] {
            let m = common::measured(&args, BOUND);
            let err = m.stderr.trim_end();
            assert!(!m.killed, "{args:?}: still running after {BOUND:?}");
            assert_eq!(m.code, Some(2), "{args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(
                err.contains(&bad.display().to_string()) && err.contains("not a regular file"),
                "{args:?}: expected the file and 'not a regular file' in {err}"
            );
            assert!(
                m.peak_kib < 100 << 10,
                "{args:?}: peak resident memory {} MiB",
                m.peak_kib >> 10
            );
        }
    }
    assert!(!html.exists(), "no report written");
}
