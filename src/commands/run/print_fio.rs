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
