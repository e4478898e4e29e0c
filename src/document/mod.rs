//! The JSON contract (`docs/json.md`): the run document and its assembly
//! from a finished run, and the merge of run documents. No I/O beyond
//! reading the documents it merges.

pub mod compare;
pub mod merge;
pub mod plan;
pub mod run;
pub mod sweep;
