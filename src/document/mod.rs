//! Layer `document`: the JSON contract (`docs/json.md`): the run, sweep,
//! compare, merge, plan and diff documents, and their assembly from a finished
//! run or from other documents; reading documents back from the bytes a
//! command read (`read`, one reader for every command); what "the same
//! workload" is (`workload`); and what this layer refuses (`error`). No I/O:
//! the commands read the files (`base::input::read`).
//!
//! May import `measure` (what a finished run holds), `device`, `analysis`,
//! `base`; never `report`, `cli` or `commands`.

pub mod advise;
pub mod compare;
pub mod curve;
pub mod diff;
pub mod error;
pub mod facts;
pub mod finished;
pub mod fio;
pub mod history;
pub mod kind;
mod lazy;
pub mod load;
pub mod merge;
pub mod plan;
pub mod read;
pub mod run;
pub mod sweep;
pub mod version;
pub mod workload;

pub use error::Error;
pub use read::{read, Document, Given, Kind, Origin, Reader};
