//! `run --print-fio`: the automatic ring settings resolved as the workers
//! would resolve them, for the fio line to say (the rest of the line is
//! `document::fio`'s).

use std::path::PathBuf;

use crate::measure::config::RunConfig;

/// `--print-fio`'s `--sched auto` and `--complete-min auto`, as the
/// workers would resolve them: batch, and several completions a wait,
/// when an io_uring worker's target has no non-blocking path (not with
/// `--sqpoll`; see `CompleteMin::resolve` for the rest); and what the line
/// must say beside them. Only block devices
/// are opened, through the checks every open makes (a write's planted-link
/// walk among them): a regular file's open can wait on a lease another
/// process holds, and break it, and a line printed must not. A file's
/// answer is left to the run, and said so.
pub(super) fn ring_autos_resolved(
    mut cfg: RunConfig,
    named: &[PathBuf],
) -> (RunConfig, Vec<String>) {
    use crate::engine::Sched;
    use std::os::unix::fs::FileTypeExt;
    // Nothing to open where no worker could batch (the line's fio runs as
    // is: `fio` takes only a resolved batch for chrt).
    use crate::engine::CompleteMin;
    if (cfg.ring.sched != Sched::Auto && cfg.ring.complete_min != CompleteMin::Auto)
        || cfg.engine != crate::engine::EngineKind::Uring
        || cfg.ring.sqpoll
    {
        return (cfg, Vec::new());
    }
    let access = crate::device::Access {
        direct: cfg.direct,
        write: cfg.rw.writes(),
        allow_destructive: cfg.allow_destructive,
        owned: false,
        force_signature: false,
        dry_run: true,
        fill: cfg.fill,
    };
    let (mut batch, mut normal, mut unknown) = (0, 0, Vec::new());
    // Of the batch ones, those in RAM: --complete-min auto's.
    let mut ram = 0;
    for p in named {
        if !std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device()) {
            unknown.push(crate::base::error::show_path(p));
            continue;
        }
        match crate::device::open(p, access) {
            Ok(t) if t.kind == crate::device::TargetKind::Block => {
                if crate::engine::punts(&t.file) {
                    batch += 1;
                    ram += usize::from(crate::device::ram_backed(&t.file));
                } else {
                    normal += 1;
                }
            }
            _ => unknown.push(crate::base::error::show_path(p)),
        }
    }
    let mut notes = crate::document::fio::resolve_sched(&mut cfg, batch, normal, &unknown);
    // What a punting RAM target's worker would wait for.
    let n = CompleteMin::Auto.resolve(
        cfg.iodepth,
        true,
        true,
        cfg.ring.waits_alone(cfg.rate.is_some()),
    );
    notes.extend(crate::document::fio::resolve_complete_min(
        &mut cfg,
        ram,
        batch + normal - ram,
        n,
        &unknown,
    ));
    (cfg, notes)
}

/// `--fio-log` in fio's words, among the line's global options (before
/// its first job, so that every job writes them): write_KIND_log=PREFIX
/// each, log_avg_msec at `--log-interval` (none with `each`, fio's line
/// per I/O), and the columns `--fio-log-format` asks; and what fio's
/// files hold otherwise.
pub(super) fn with_logs(
    fio: &mut crate::document::fio::Fio,
    spec: &crate::report::fio_log::Spec,
    interval: std::time::Duration,
) {
    use crate::report::fio_log::{kind_name, LogKind, WindowValue};
    let mut w: Vec<String> = spec
        .logs
        .iter()
        .map(|(kind, prefix)| {
            let prefix = crate::document::fio::filename(&prefix.to_string_lossy());
            format!("--write_{}_log={prefix}", kind_name(*kind))
        })
        .collect();
    if !spec.each {
        w.push(format!("--log_avg_msec={}", interval.as_millis()));
    }
    for (on, word) in [
        (spec.shared, "--per_job_logs=0"),
        (spec.offset, "--log_offset=1"),
        (spec.prio, "--log_prio=1"),
        (spec.issue_time, "--log_issue_time=1"),
        (spec.window == WindowValue::Max, "--log_window_value=max"),
        (spec.window == WindowValue::Both, "--log_window_value=both"),
    ] {
        if on {
            w.push(word.to_string());
        }
    }
    let at = fio.line.find(" --name=").unwrap_or(fio.line.len());
    fio.line.insert_str(at, &format!(" {}", w.join(" ")));
    if spec.first_job != 1 && !spec.shared {
        fio.notes.push(format!("--fio-log-format first={}: fio numbers these jobs' log files from 1, by their place on its line", spec.first_job));
    }
    if spec.logs.iter().any(|(k, _)| *k == LogKind::Lat) {
        fio.notes.push("fio's _slat log holds each I/O's submission latency, and its _clat and _lat differ by it; stripebench writes _slat empty, and _clat and _lat both issue to completion".to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fio_log::{parse_format, parse_log};

    // --print-fio printed no log at all for --fio-log: fio's line then
    // wrote none of the files the run did.
    #[test]
    fn the_logs_go_before_the_first_job_in_fio_s_words() {
        let mut fio = crate::document::fio::Fio {
            setup: Vec::new(),
            notes: Vec::new(),
            line: "fio --rw=read --name=w0 --filename=a --name=w1 --filename=b".into(),
        };
        let mut spec = parse_format("shared,max,prio").unwrap();
        spec.logs = vec![
            parse_log("lat=out/x y").unwrap(),
            parse_log("bw=out/b").unwrap(),
        ];
        with_logs(&mut fio, &spec, std::time::Duration::from_millis(250));
        assert_eq!(
            fio.line,
            "fio --rw=read --write_lat_log='out/x y' --write_bw_log=out/b --log_avg_msec=250 \
             --per_job_logs=0 --log_prio=1 --log_window_value=max --name=w0 --filename=a \
             --name=w1 --filename=b"
        );
        assert!(
            fio.notes.iter().any(|n| n.contains("_slat")),
            "{:?}",
            fio.notes
        );
        let mut each = parse_format("each").unwrap();
        each.logs = vec![parse_log("iops=i").unwrap()];
        with_logs(&mut fio, &each, std::time::Duration::from_secs(1));
        assert!(!fio.line.contains("--log_avg_msec=1000"), "{}", fio.line);
    }
}
