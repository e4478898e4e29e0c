//! The run document's `cache`: what was done to the page cache before the
//! run, made from the facts `device::cache` gave ([`CacheFacts`]).

use serde::{Deserialize, Serialize};

use crate::device::cache::CacheFacts;

/// What was done to the page cache before a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheDoc {
    /// `evicted` (the targets' pages dropped), `dropped` (/proc/sys/vm/drop_caches),
    /// `preloaded` (--cached: the regions read once first), or `untouched` (O_DIRECT or writes).
    pub state: String,
    /// How: "fadvise(DONTNEED)", "BLKFLSBUF", "drop_caches", "read once".
    pub method: String,
    /// Time spent on it, apart from the measured window.
    pub seconds: f64,
    /// With --cached: the machine's single-thread memory-copy bandwidth, the ceiling of a cached read.
    pub memcpy_bytes_per_sec: Option<f64>,
}

impl CacheDoc {
    pub fn of(c: &CacheFacts) -> CacheDoc {
        CacheDoc {
            state: c.state.name().to_string(),
            method: c.method.to_string(),
            seconds: c.seconds,
            memcpy_bytes_per_sec: c.memcpy_bytes_per_sec,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untouched_cache_is_written_as_before() {
        let v = serde_json::to_value(CacheDoc::of(&CacheFacts::untouched())).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"state": "untouched", "method": "-", "seconds": 0.0, "memcpy_bytes_per_sec": null})
        );
    }
}
