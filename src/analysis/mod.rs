//! Layer `analysis`: pure math over measurements: latency histograms,
//! summaries (median, the slow-member rule), the capacity (USL) fit, block
//! verification, the two-sample test that tells a change from noise and
//! diff's judgement of a change with it (`significance`), the
//! Little's-law check of a run's time in flight (`occupancy`), the stripe
//! efficiency split into the stripe layer's loss and the members'
//! imbalance (`stripe_loss`), read-modify-write's bounds (`rmw`), fio's latency-target
//! search for a queue depth (`qd_search`), what a
//! figure read back from a document may be (`plausible`), advise's
//! judgements of its runs (`advise`) and of the stack's setup
//! (`advise_stack`), fio's SPRandom preconditioning model (`sprandom`), and
//! an md array's health and a degraded array's ceilings (`array_state`), and
//! the members a shared host adapter caps together (`shared_path`).
//!
//! Imports only `base`. Touches no device, thread or clock: every function
//! here is a function of its arguments.

pub mod advise;
pub mod advise_stack;
pub mod array_state;
pub mod capacity;
pub mod drift;
pub mod fail_slow;
pub mod foreign;
pub mod histogram;
pub mod interval_counts;
pub mod mannwhitney;
pub mod occupancy;
pub mod phase_health;
pub mod plausible;
pub mod qd_search;
pub mod rate_min;
pub mod rmw;
pub mod shared_path;
pub mod significance;
pub mod slow_member;
pub mod sprandom;
pub mod steady;
pub mod stripe_loss;
pub mod summary;
pub mod verify;
pub mod zeros;
