//! The types of the format registry ([`crate::report::FORMATS`]): a
//! document by kind ([`Doc`]), what a renderer makes ([`Rendered`]) and a
//! registered format ([`Format`]). Apart from the table itself so that a
//! renderer can name them without importing `report/mod.rs`, which names
//! every renderer (that would be a cycle).

use anyhow::Result;

use crate::document::advise::FindingsDocument;
use crate::document::compare::CompareDocument;
use crate::document::curve::LatencyPlanDoc;
use crate::document::diff::DiffDocument;
use crate::document::merge::MergedDocument;
use crate::document::plan::PlanDoc;
use crate::document::run::RunDocument;
use crate::document::sweep::SweepDocument;

/// A document a format renders, by kind.
#[derive(Clone, Copy)]
pub enum Doc<'a> {
    Run(&'a RunDocument),
    Sweep(&'a SweepDocument),
    Compare(&'a CompareDocument),
    Plan(&'a PlanDoc),
    Latency(&'a LatencyPlanDoc),
    Merge(&'a MergedDocument),
    Diff(&'a DiffDocument),
    Findings(&'a FindingsDocument),
    History(&'a crate::document::history::HistoryDocument),
}

/// The kind of a [`Doc`], for a format's list of what it renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Run,
    Sweep,
    Compare,
    Plan,
    Latency,
    Merge,
    Diff,
    Findings,
    History,
}

impl Doc<'_> {
    pub fn kind(&self) -> Kind {
        match self {
            Doc::Run(_) => Kind::Run,
            Doc::Sweep(_) => Kind::Sweep,
            Doc::Compare(_) => Kind::Compare,
            Doc::Plan(_) => Kind::Plan,
            Doc::Latency(_) => Kind::Latency,
            Doc::Merge(_) => Kind::Merge,
            Doc::Diff(_) => Kind::Diff,
            Doc::Findings(_) => Kind::Findings,
            Doc::History(_) => Kind::History,
        }
    }
}

/// What a renderer made.
#[derive(Debug, PartialEq, Eq)]
pub enum Rendered {
    /// JSON: serde escaped it already, and its strings keep the real text.
    Bytes(Vec<u8>),
    /// A text rendering (CSV, SVG, HTML): written with its control
    /// characters but newlines and tabs escaped, whatever field they came from.
    Text(String),
    /// Nothing to draw (a sweep with no point): no file is written.
    Nothing,
}

/// A format's check of a path alone: why it is refused, if it is.
pub type PathCheck = fn(&std::path::Path) -> Result<(), String>;

/// One registered document format.
#[derive(Debug)]
pub struct Format {
    /// The long option, `--` and its name.
    pub option: &'static str,
    pub value_name: &'static str,
    /// The flag's help, as `--help` shows it.
    pub help: &'static str,
    /// The kinds of document it renders, among those its command makes; a
    /// command whose document is not listed refuses the flag.
    pub kinds: &'static [Kind],
    /// A check of the path alone, before any I/O (`--plot`: an .svg name).
    pub check_path: Option<PathCheck>,
    /// Rewritten after every point of a sweep (when not on stdout), so an
    /// interrupted sweep keeps what it finished.
    pub per_point: bool,
    /// Its path is said on stderr once written (`plot: PATH`).
    pub announce: bool,
    /// `doc` is one of [`Format::kinds`].
    pub render: fn(Doc) -> Result<Rendered>,
}

impl Format {
    /// The option's name, without `--`.
    pub fn flag(&self) -> &'static str {
        let o: &'static str = self.option;
        o.strip_prefix("--").unwrap_or(o)
    }

    pub fn renders(&self, kind: Kind) -> bool {
        self.kinds.contains(&kind)
    }
}
