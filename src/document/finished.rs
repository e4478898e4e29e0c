//! A finished measured run (`measure::session::Finished`) as its run
//! document: the assembly of the figures, each target's storage stack, the
//! warnings said after the run, the page cache's state; then the warnings
//! grouped, so that many targets' same warning is one line in every output
//! (the text, the HTML page, the JSON `warnings`).

use std::path::PathBuf;

use crate::base::warning;
use crate::document::fio::FioDoc;
use crate::document::run::RunDocument;
use crate::engine::Sched;
use crate::measure::config::{BlockSizeArg, RunConfig};
use crate::measure::session::Finished;

/// The run document of a finished run.
pub fn document(cfg: &RunConfig, run: Finished) -> RunDocument {
    let mut doc = RunDocument::assemble(cfg, &run.plan, &run.execution, run.warnings);
    for t in &mut doc.targets {
        t.topology = run
            .stacks
            .iter()
            .find(|(p, _)| p.display().to_string() == t.path)
            .map(|(_, s)| s.clone());
    }
    doc.name_members();
    doc.warnings.extend(run.split_requests);
    if let Some(t) = &cfg.together {
        doc.warnings
            .push(warning::Warning::RanAtOnce { runs: t.runs() });
    }
    // Beside the figure: a target whose sampled reads were mostly zeros.
    let zeros = doc.zero_reads(&run.stored);
    doc.warnings.extend(zeros);
    for (t, held) in doc.targets.iter_mut().zip(run.held) {
        for h in &held {
            doc.warnings.push(warning::Warning::SettingHeldByOtherRun {
                path: t.path.clone(),
                setting: h.setting.clone(),
                own: h.own.clone(),
                in_force: h.in_force.clone(),
                pid: h.pid.clone(),
                killed: h.killed,
            });
        }
        t.held_settings = Some(held);
    }
    doc.warnings = warning::group(&doc.warnings);
    doc.cache = Some(crate::document::run::CacheDoc::of(&run.cache));
    doc.fio = Some(fio(cfg, &doc));
    // The process's CPU time in all, read again now that the document is
    // assembled: merging hundreds of workers' histograms is part of what
    // the run cost (1.3 s of a debug build's 5.7 at 256 targets), and
    // only the writing of the reports is left for wait4 to add.
    if let Some(p) = &mut doc.process {
        let (usr, sys) = crate::base::usage::ProcessCpu::now().since(&Default::default());
        (p.cpu_usr_sec, p.cpu_sys_sec) = (usr, sys);
    }
    doc
}

/// The fio command for the run's workload, on the paths its workers
/// opened (the built-in test bed's files, a volume's members); a `--bs lbs`
/// that every target resolved to one size is given as that size.
fn fio(cfg: &RunConfig, doc: &RunDocument) -> FioDoc {
    let targets: Vec<PathBuf> = doc.targets.iter().map(|t| PathBuf::from(&t.path)).collect();
    let mut bs = doc.targets.iter().map(|t| t.bs);
    let one = bs.next().filter(|&b| bs.all(|x| x == b));
    let mut c = cfg.clone();
    if let (BlockSizeArg::Logical, Some(b)) = (cfg.bs, one) {
        c.bs = BlockSizeArg::Bytes(b);
    }
    // `--sched auto` as the workers' rings resolved it.
    let rings: Vec<_> = doc.workers.iter().filter_map(|w| w.ring.as_ref()).collect();
    let batch = rings.iter().filter(|r| r.sched == Sched::Batch).count();
    let mut notes = crate::document::fio::resolve_sched(&mut c, batch, rings.len() - batch, &[]);
    // `--complete-min auto` likewise (under N, the line says N as asked).
    let (batched, n) = crate::document::run::batched(rings.iter().copied());
    notes.extend(crate::document::fio::resolve_complete_min(
        &mut c,
        batched,
        rings.len() - batched,
        n,
        &[],
    ));
    // What the workers' buffers were: huge pages in any of them asks fio
    // for huge pages too.
    let huge = doc
        .workers
        .iter()
        .filter_map(|w| w.buffer.as_ref())
        .any(|b| b.page_size_bytes > 4096);
    let mut fio = FioDoc::of(&c, &targets, huge);
    if fio.command.is_some() {
        fio.notes.extend(notes);
    }
    fio
}

/// The document of a run that a signal stopped before anything was
/// measured (while the test bed was written, or the workers set up).
#[derive(serde::Serialize)]
#[serde(tag = "kind", rename = "run")]
pub struct Unmeasured<'a> {
    schema_version: u32,
    tool: super::run::ToolInfo,
    interrupted: bool,
    measured: bool,
    stage: &'a str,
}

impl<'a> Unmeasured<'a> {
    /// Stopped at `stage` ("starting the run", ...).
    pub fn at(stage: &'a str) -> Unmeasured<'a> {
        Unmeasured {
            schema_version: super::run::SCHEMA_VERSION,
            tool: super::run::ToolInfo::this(),
            interrupted: true,
            measured: false,
            stage,
        }
    }
}
