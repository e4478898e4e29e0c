//! What stripebench keeps between runs: the per-disk history database
//! ([`history`]), and where it lives and who may own it ([`place`]).

pub mod history;
pub mod place;
