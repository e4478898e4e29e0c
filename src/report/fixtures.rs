//! A run document assembled from synthetic worker outcomes on a real
//! temporary file (whose name holds a comma), for the renderers' tests.

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::device::{open, Access};
use crate::document::run::RunDocument;
use crate::measure::coordinator::Execution;
use crate::measure::worker::{ErrnoCount, Interval, IoErrorRecord, WorkerOutcome};

/// A document assembled from synthetic outcomes on a real (temporary) file
/// whose name holds a comma.
pub fn sample_doc() -> RunDocument {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a,b");
    std::fs::write(&f, vec![1u8; 1 << 20]).unwrap();
    let Command::Run(args) = Cli::try_parse_from([
        "sb",
        "run",
        "--jobs",
        "2",
        "--bs",
        "4k",
        "--duration",
        "2s",
        "--seed",
        "1",
        f.to_str().unwrap(),
    ])
    .unwrap()
    .command
    else {
        panic!("not a run command")
    };
    let cfg = crate::cli::validate::run_config(&args, &[0, 1], None).unwrap();
    let t = open(&f, Access::default()).unwrap();
    let plan = crate::measure::layout::build(&cfg, vec![t]).unwrap();
    let mut outcomes = Vec::new();
    for id in 0..2 {
        let mut o = WorkerOutcome {
            id,
            cpu: Some(id),
            read_bytes: 4096 * 1000 * (id as u64 + 1),
            read_ios: 1000 * (id as u64 + 1),
            ..Default::default()
        };
        for i in 0..o.read_ios {
            o.hist.record(1000 + i * 10);
        }
        o.intervals = vec![
            Interval {
                t: 0.0,
                bytes: o.read_bytes / 2,
                ios: o.read_ios / 2,
                ..Interval::default()
            },
            Interval {
                t: 1.0,
                bytes: o.read_bytes / 2,
                ios: o.read_ios / 2,
                ..Interval::default()
            },
        ];
        o.cpu_usr_sec = 0.1;
        o.cpu_sys_sec = 0.5;
        if id == 1 {
            o.errors = 1;
            o.stopped_on_errors = true;
            o.errors_by_errno = vec![ErrnoCount {
                errno: 5,
                name: "EIO".into(),
                count: 1,
            }];
            o.error_samples = vec![IoErrorRecord {
                errno: 5,
                message: "Input/output error".into(),
                op: "read".into(),
                offset: 8192,
                member: None,
                member_offset: None,
            }];
        }
        outcomes.push(o);
    }
    let exec = Execution {
        flush_abandoned: Vec::new(),
        resync: Vec::new(),
        outcomes,
        window_sec: 2.0,
        start_unix_sec: 1e9,
        end_unix_sec: 1e9 + 2.0,
        interrupted: false,
        ended_by: "duration",
        clock: "virtual",
        flush: vec![None],
        devices: vec![None],
        live: None,
        steady: None,
        rate_min: None,
        host: Default::default(),
        warnings: Vec::new(),
        process: crate::measure::coordinator::ProcessUse {
            setup_sec: 0.25,
            window_cpu: (0.15, 0.55),
            window_cpu_span_sec: 2.0,
            cpu: (0.2, 0.7),
        },
    };
    RunDocument::assemble(&cfg, &plan, &exec, vec![])
}

/// A run of `n` targets (`/dev/zram0`...), one worker each, over `seconds`
/// whole seconds, from [`sample_doc`]'s first target and worker: member
/// `i` runs at (100 + i) MB/s, but for a few planted ones: member 3 at
/// 20 MB/s (beyond any fence), member 5 stalls in its second half, and
/// member 7 is named hostilely (markup and a control character).
pub fn many_doc(n: usize, seconds: u64) -> RunDocument {
    let mut doc = sample_doc();
    let (t0, w0) = (doc.targets[0].clone(), doc.workers[0].clone());
    doc.targets.clear();
    doc.workers.clear();
    for i in 0..n {
        let rate = match i {
            3 => 20e6,
            _ => (100 + i) as f64 * 1e6,
        };
        let mut t = t0.clone();
        t.index = i;
        t.path = if i == 7 {
            "/dev/<b>&\"x'\u{1b}[31m".into()
        } else {
            format!("/dev/zram{i}")
        };
        t.figures.bytes_per_sec = rate;
        t.figures.ios = 10_000;
        let mut w = w0.clone();
        w.id = i;
        w.target_index = i;
        w.target = t.path.clone();
        w.figures = t.figures.clone();
        w.intervals = (0..seconds)
            .map(|s| Interval {
                t: s as f64,
                bytes: if i == 5 && s >= seconds / 2 {
                    rate as u64 / 10
                } else {
                    rate as u64
                },
                ios: 100,
                ..Interval::default()
            })
            .collect();
        doc.targets.push(t);
        doc.workers.push(w);
    }
    doc.host.cpus = n;
    doc
}
