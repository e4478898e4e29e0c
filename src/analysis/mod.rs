//! Pure math over measurements: latency histograms, the capacity (USL) fit,
//! block verification. Touches no device, thread or clock.

pub mod capacity;
pub mod histogram;
pub mod summary;
pub mod verify;
