//! Layer `document`: the JSON contract (`docs/json.md`): the run, sweep,
//! compare, merge, plan and diff documents, and their assembly from a finished
//! run or from other documents. No I/O beyond reading the documents it
//! merges, plans from, diffs or renders (`load`).
//!
//! May import `measure` (what a finished run holds), `device`, `analysis`,
//! `base`; never `report`, `cli` or `commands`.

pub mod compare;
pub mod curve;
pub mod diff;
pub mod load;
pub mod merge;
pub mod plan;
pub mod run;
pub mod sweep;
