//! `--create SIZE` (fio's `filesize=` on a `filename=` that is not
//! there): the targets that do not exist are made before the run, after
//! its outputs are checked and before its targets are, so a file one
//! stonewall group makes is there for the groups after it.

use std::path::PathBuf;

use anyhow::Result;

use crate::measure::config::RunConfig;
use crate::output::{Outputs, Request};

/// The run's outputs checked, then `--create`'s targets made: a file a
/// stonewall group makes (fio's filesize=) is there for the checks of the
/// groups after it, as fio's layout would be.
pub(crate) fn outputs_and_created(
    cfg: &RunConfig,
    req: Request,
    named: &[PathBuf],
) -> Result<Outputs> {
    let out = check_outputs(req, named)?;
    create_targets(cfg, named, &out)?;
    Ok(out)
}

/// `--create SIZE`: the targets that do not exist, made (not on a dry
/// run, which creates nothing), each said on stderr.
fn create_targets(cfg: &RunConfig, named: &[PathBuf], out: &Outputs) -> Result<()> {
    // --fill-device grows a file from nothing, as fio's fill_device=1
    // creates the file it fills: a missing one is made empty, ours.
    if cfg.fill && !cfg.print_fio {
        crate::device::scratch::mark_filled(named);
    }
    let create = cfg.create.or(cfg.fill.then_some(0));
    let Some(size) = create.filter(|_| !cfg.print_fio) else {
        return Ok(());
    };
    if cfg.dry_run {
        for p in named
            .iter()
            .filter(|p| std::fs::symlink_metadata(p).is_err())
        {
            let what = match cfg.create {
                Some(_) => format!(
                    "--create would make {} ({})",
                    crate::base::error::show_path(p),
                    crate::base::units::fmt_bytes(size)
                ),
                None => format!(
                    "--fill-device would make {} (empty, then filled)",
                    crate::base::error::show_path(p)
                ),
            };
            out.note(&format!(
                "stripebench: {what}; a dry run makes nothing, so its checks of it cannot pass"
            ));
        }
        return Ok(());
    }
    use crate::device::scratch::CreateLayout;
    let layout = match cfg.create_layout {
        CreateLayout::Fill => "random data",
        CreateLayout::Sparse => "sparse: no block written or allocated",
        CreateLayout::Allocate => "its blocks allocated, none written",
    };
    for p in crate::device::scratch::create_missing(named, size, cfg.seed, cfg.create_layout)? {
        let how = match cfg.create {
            Some(_) => format!(
                "{}, {layout}: --create",
                crate::base::units::fmt_bytes(size)
            ),
            None => "empty, to fill: --fill-device".to_string(),
        };
        out.note(&format!(
            "stripebench: created {} ({how})",
            crate::base::error::show_path(&p)
        ));
    }
    Ok(())
}

/// The run's outputs, checked against the targets named.
pub(crate) fn check_outputs(req: Request, named: &[PathBuf]) -> Result<Outputs> {
    Outputs::check(
        req,
        crate::report::Kind::Run,
        &crate::device::protected_paths(named),
        &[],
    )
}
