//! `--dry-run`: what a run would do, and which write-guard checks pass,
//! printed before (instead of) any I/O.

use std::fmt::Write;
use std::path::PathBuf;

use crate::base::error::Shown;
use crate::base::units::{fmt_bytes, fmt_size_arg};
use crate::device::guard::Check;
use crate::measure::config::RunConfig;
use crate::measure::layout::Plan;

/// The report, and whether every check passed.
pub fn render(cfg: &RunConfig, plan: &Plan, checks: &[(PathBuf, Vec<Check>)]) -> (String, bool) {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "dry run: {} {}, {}, engine {} (iodepth {}), {:.2}s window after a {:.2}s ramp, seed {}; no I/O was done",
        cfg.rw.name(),
        if cfg.rw.writes() { "(destroys data)" } else { "(reads only)" },
        if cfg.direct {
            "O_DIRECT"
        } else if cfg.uncached {
            "uncached (RWF_DONTCACHE)"
        } else {
            "buffered"
        },
        cfg.engine.name(),
        cfg.iodepth,
        cfg.duration.as_secs_f64(),
        cfg.ramp.as_secs_f64(),
        cfg.seed
    );
    let mut all_pass = true;
    for t in &plan.targets {
        let _ = writeln!(
            out,
            "target {} ({}, {}, logical block {} B, bs {}): region {}+{}",
            crate::base::error::show_path(&t.path),
            match t.kind {
                crate::device::TargetKind::Block => "block device",
                crate::device::TargetKind::File => "file",
            },
            fmt_bytes(t.size),
            t.logical_block_size,
            // A split's sizes, not the largest (its buffers' and alignment's).
            cfg.access
                .sizes
                .as_ref()
                .map_or(fmt_size_arg(t.bs), |s| format!(
                    "split {}",
                    crate::report::table::split_shown(&s.fio_spelling())
                )),
            t.region.offset,
            t.region.length
        );
        // --fill-device on a file: how much it would write (what is free).
        let shown = crate::base::error::show_path(&t.path);
        for w in &plan.warnings {
            if matches!(w, crate::base::warning::Warning::FillsFileSystem { path, .. } if *path == shown)
            {
                let _ = writeln!(out, "  fill: {w}");
            }
        }
        for w in plan
            .workers
            .iter()
            .filter(|w| plan.targets[w.target_index].path == t.path)
        {
            let _ = writeln!(
                out,
                "  worker w{}: bytes {}..{}, CPU {}{}",
                w.id,
                w.region.offset,
                w.region.end(),
                w.cpu.map_or("not pinned".to_string(), |c| c.to_string()),
                w.rate_period_ns.map_or(String::new(), |ns| format!(
                    ", on a schedule of {:.1} I/Os per second (one every {})",
                    1e9 / ns,
                    crate::base::units::fmt_latency_ns(ns)
                ))
            );
            if let Some(m) = &w.sprandom {
                let doc = crate::document::run::SprDoc::of(m);
                let _ = writeln!(out, "  {}", super::table::spr_line(&doc));
            }
        }
        if let Some((_, cs)) = checks.iter().find(|(p, _)| *p == t.path) {
            for c in cs {
                all_pass &= c.passed;
                let _ = writeln!(
                    out,
                    "  [{}] {}: {}",
                    if c.passed { "ok" } else { "REFUSED" },
                    c.name,
                    // One line a check: whatever name its detail holds.
                    Shown(&c.detail)
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "{}",
        if all_pass {
            "every check passes: the run would go ahead"
        } else {
            "a check fails: the run would be refused (exit code 2)"
        }
    );
    (out, all_pass)
}

/// `run --dry-run` with no target: the test bed the run would create and
/// what it would run on it.
pub fn testbed(cfg: &RunConfig, tb: &crate::measure::config::TestbedConfig) -> String {
    format!(
        "dry run: would create the built-in test bed ({} files of {} in {}) and run {} on it for {:.2}s after a {:.2}s ramp; no I/O was done\n",
        tb.files,
        fmt_bytes(tb.file_size),
        crate::base::error::show_path(&tb.dir),
        cfg.rw.name(),
        cfg.duration.as_secs_f64(),
        cfg.ramp.as_secs_f64()
    )
}
