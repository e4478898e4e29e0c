//! A stonewall group's run checked before any of the file's runs begins:
//! its options, its outputs, its targets as a dry run sees them.

use anyhow::Result;

use super::{Checked, Group};
use crate::base::error::UsageError;
use crate::commands::run;
use crate::measure::series::{self, Point};

/// Every check a group's run makes before its first I/O, with no I/O and
/// nothing printed: its options, its outputs, then its targets as a dry
/// run sees them (the write guard's consent, signatures, mounts; not
/// holes, which an earlier group may fill).
pub(super) fn check(g: Group) -> Result<Checked> {
    let args = g.args.map_err(UsageError)?;
    let mut config = crate::cli::validate::run_config(
        &args,
        &crate::base::cpus::available_cpus(),
        run::tmpdir(),
    )?;
    config.exitall = g.exitall;
    let targets = run::named_targets(&config)?;
    let out = run::create::outputs_and_created(&config, args.outputs(), &targets)?;
    let checked = Checked {
        said: g.said,
        with_previous: g.with_previous,
        reads_what_was_written: g.reads_what_was_written,
        config,
        targets,
        out,
    };
    // --print-fio opens nothing; the built-in test bed is made by the run.
    if checked.config.print_fio || checked.config.testbed.is_some() {
        return Ok(checked);
    }
    // Files an earlier group fills (--fill-device) have no size until it
    // has run: this group's checks of them are its run's own, before its
    // first I/O.
    if !checked.config.fill && crate::device::scratch::all_filled_here(&checked.targets) {
        return Ok(checked);
    }
    let point = [Point {
        label: String::new(),
        config: checked.config.clone(),
        targets: checked.targets.clone(),
        owned: crate::device::scratch::all_created_here(&checked.targets),
        repeat: 1,
        with: Vec::new(),
    }];
    let verdicts = series::check_but(&point, &checked.out.for_run(None), &|_| false, &["holes"])?;
    if let Some(why) = verdicts.iter().find_map(|(_, refused)| refused.first()) {
        return Err(UsageError(why.clone()).into());
    }
    Ok(checked)
}
