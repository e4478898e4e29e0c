//! The order the fields of a worker, a target and the total are written
//! in: the contract's, which interleaves each entry's [`Figures`] with its
//! own fields (a worker's `read_bytes` sits between its `ios` and its
//! `errors`). A flattened struct is written in one piece, so these three
//! are written by hand; reading back needs no order and is derived.
//! `tests::documents_main_wrote_come_back_byte_for_byte` pins the order.

use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::figures::{put_some, Fig};
use super::{Figures, TargetDoc, TotalDoc, WorkerDoc};
use crate::document::facts::{
    DeviceCountersDef, DiskIdentityDef, EndingDef, ErrnoCountDef, ForeignDef, HeldSettingDef,
    HungIoDef, IntervalDef, IoErrorRecordDef, Many, Opt, Shape, TargetKindDef, TopologyDef,
};

// Each `serialize_struct` is given the most fields the entry can have: a
// hint (serde_json and serde_json::Value ignore it, and skip_field is
// how an absent optional field is left out).

/// The rate figures, in the order every entry writes them.
const RATES: &[Fig] = &[
    Fig::ShortIos,
    Fig::Seconds,
    Fig::BytesPerSec,
    Fig::Iops,
    Fig::Latency,
    Fig::ServiceLatency,
    Fig::ByDirection,
    Fig::CpuUsr,
    Fig::CpuSys,
];

/// The histograms, last in every entry.
const HISTOGRAMS: &[Fig] = &[Fig::Histogram, Fig::ServiceHistogram];

impl Serialize for WorkerDoc {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f: &Figures = &self.figures;
        let mut m = s.serialize_struct("WorkerDoc", 42)?;
        m.serialize_field("id", &self.id)?;
        m.serialize_field("target", &self.target)?;
        m.serialize_field("target_index", &self.target_index)?;
        m.serialize_field("job", &self.job)?;
        m.serialize_field("cpu", &self.cpu)?;
        m.serialize_field("pinned_cpu", &self.pinned_cpu)?;
        m.serialize_field("region", &self.region)?;
        m.serialize_field("bs", &self.bs)?;
        f.put(&mut m, &[Fig::Bytes, Fig::Ios])?;
        m.serialize_field("read_bytes", &self.read_bytes)?;
        m.serialize_field("write_bytes", &self.write_bytes)?;
        m.serialize_field("read_ios", &self.read_ios)?;
        m.serialize_field("write_ios", &self.write_ios)?;
        // Only a trim job has them (a document from before trims, read
        // back, is written as it was).
        if self.trim_ios == 0 && self.trim_bytes == 0 {
            m.skip_field("trim_bytes")?;
            m.skip_field("trim_ios")?;
        } else {
            m.serialize_field("trim_bytes", &self.trim_bytes)?;
            m.serialize_field("trim_ios", &self.trim_ios)?;
        }
        f.put(&mut m, &[Fig::Errors])?;
        m.serialize_field(
            "errors_by_errno",
            &Many::<ErrnoCountDef>::doc(&self.errors_by_errno),
        )?;
        m.serialize_field(
            "error_samples",
            &Many::<IoErrorRecordDef>::doc(&self.error_samples),
        )?;
        m.serialize_field("stopped_on_errors", &self.stopped_on_errors)?;
        if self.ignored_errors.is_empty() {
            m.skip_field("ignored_errors")?;
        } else {
            m.serialize_field(
                "ignored_errors",
                &Many::<ErrnoCountDef>::doc(&self.ignored_errors),
            )?;
        }
        m.serialize_field("ended_by", &EndingDef::doc(&self.ended_by))?;
        m.serialize_field("hung_ios", &Many::<HungIoDef>::doc(&self.hung_ios))?;
        f.put(
            &mut m,
            &[
                Fig::ShortIos,
                Fig::Seconds,
                Fig::BytesPerSec,
                Fig::Iops,
                Fig::Latency,
                Fig::ServiceLatency,
                Fig::ByDirection,
            ],
        )?;
        put_some(&mut m, "rate", &self.rate)?;
        f.put(&mut m, &[Fig::CpuUsr, Fig::CpuSys])?;
        m.serialize_field("intervals", &Many::<IntervalDef>::doc(&self.intervals))?;
        m.serialize_field("engine_path", &self.engine_path)?;
        put_some(&mut m, "ring", &self.ring)?;
        put_some(&mut m, "would_block_ios", &self.would_block_ios)?;
        put_some(&mut m, "cmdprio_ios", &self.cmdprio_ios)?;
        m.serialize_field("buffer", &self.buffer)?;
        put_some(&mut m, "sampled_reads", &self.sampled_reads)?;
        put_some(&mut m, "zero_reads", &self.zero_reads)?;
        f.put(&mut m, HISTOGRAMS)?;
        evictions(&mut m, self.cache_evictions, self.cache_eviction_sec)?;
        wrap_flushes(&mut m, self.wrap_flushes, self.wrap_flush_sec)?;
        put_some(&mut m, "sprandom", &self.sprandom)?;
        put_some(&mut m, "latency_search", &self.latency_search)?;
        m.end()
    }
}

impl Serialize for TargetDoc {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f: &Figures = &self.figures;
        let mut m = s.serialize_struct("TargetDoc", 31)?;
        m.serialize_field("index", &self.index)?;
        m.serialize_field("path", &self.path)?;
        m.serialize_field("kind", &TargetKindDef::doc(&self.kind))?;
        m.serialize_field("logical_block_size", &self.logical_block_size)?;
        m.serialize_field("size", &self.size)?;
        m.serialize_field("read_ahead_kb", &self.read_ahead_kb)?;
        m.serialize_field("bs", &self.bs)?;
        m.serialize_field("region", &self.region)?;
        m.serialize_field("workers", &self.workers)?;
        f.put(&mut m, &[Fig::Bytes, Fig::Ios, Fig::Errors])?;
        m.serialize_field("failed", &self.failed)?;
        f.put(&mut m, RATES)?;
        m.serialize_field("flush", &self.flush)?;
        m.serialize_field("device", &Opt::<DeviceCountersDef>::doc(&self.device))?;
        m.serialize_field("verify", &self.verify)?;
        m.serialize_field("topology", &Opt::<TopologyDef>::doc(&self.topology))?;
        // Absent in a document written before they were recorded (it
        // comes back byte for byte).
        match &self.held_settings {
            Some(h) => m.serialize_field("held_settings", &Many::<HeldSettingDef>::doc(h))?,
            None => m.skip_field("held_settings")?,
        }
        match &self.foreign_io {
            Some(f) => m.serialize_field("foreign_io", &Opt::<ForeignDef>::doc(f))?,
            None => m.skip_field("foreign_io")?,
        }
        match &self.adapter {
            Some(a) => m.serialize_field("adapter", a)?,
            None => m.skip_field("adapter")?,
        }
        match &self.identity {
            Some(i) => m.serialize_field("identity", &Opt::<DiskIdentityDef>::doc(i))?,
            None => m.skip_field("identity")?,
        }
        f.put(&mut m, HISTOGRAMS)?;
        m.end()
    }
}

impl Serialize for TotalDoc {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f: &Figures = &self.figures;
        let mut m = s.serialize_struct("TotalDoc", 24)?;
        f.put(&mut m, &[Fig::Bytes, Fig::Ios, Fig::Errors])?;
        f.put(&mut m, RATES)?;
        m.serialize_field("flush", &self.flush)?;
        m.serialize_field("flush_errors", &self.flush_errors)?;
        m.serialize_field("flush_incomplete", &self.flush_incomplete)?;
        put_some(&mut m, "sampled_reads", &self.sampled_reads)?;
        put_some(&mut m, "zero_reads", &self.zero_reads)?;
        f.put(&mut m, HISTOGRAMS)?;
        evictions(&mut m, self.cache_evictions, self.cache_eviction_sec)?;
        wrap_flushes(&mut m, self.wrap_flushes, self.wrap_flush_sec)?;
        // Absent when every target ran the whole window (documents written
        // before it come back byte for byte).
        match &self.targets_sum {
            Some(t) => m.serialize_field("targets_sum", t)?,
            None => m.skip_field("targets_sum")?,
        }
        // --bssplit's per-size figures; absent with one size.
        if self.sizes.is_empty() {
            m.skip_field("sizes")?;
        } else {
            m.serialize_field("sizes", &self.sizes)?;
        }
        // --cmdprio-bssplit's per-priority figures; absent without.
        if self.priorities.is_empty() {
            m.skip_field("priorities")?;
        } else {
            m.serialize_field("priorities", &self.priorities)?;
        }
        // --zones' per-zone figures; absent without.
        if self.zones.is_empty() {
            m.skip_field("zones")?;
        } else {
            m.serialize_field("zones", &self.zones)?;
        }
        m.end()
    }
}

/// A buffered sequential read's evictions at wrap-arounds: absent when none.
fn evictions<S: SerializeStruct>(m: &mut S, n: u64, sec: f64) -> Result<(), S::Error> {
    if n == 0 {
        m.skip_field("cache_evictions")?;
    } else {
        m.serialize_field("cache_evictions", &n)?;
    }
    if sec == 0.0 {
        m.skip_field("cache_eviction_sec")
    } else {
        m.serialize_field("cache_eviction_sec", &sec)
    }
}

/// A buffered sequential write's write-backs at wrap-arounds: absent when none.
fn wrap_flushes<S: SerializeStruct>(m: &mut S, n: u64, sec: f64) -> Result<(), S::Error> {
    if n == 0 {
        m.skip_field("wrap_flushes")?;
        m.skip_field("wrap_flush_sec")
    } else {
        m.serialize_field("wrap_flushes", &n)?;
        m.serialize_field("wrap_flush_sec", &sec)
    }
}

#[cfg(test)]
mod tests {
    use super::super::RunDocument;
    use super::*;

    /// Documents written before the figures were one struct, by that build
    /// (a mixed pattern on a schedule; a buffered read that evicted at its
    /// wrap-arounds; a buffered write with its flush).
    const WRITTEN_BEFORE: [(&str, &str); 3] = [
        ("randrw-rate", include_str!("testdata/randrw-rate.json")),
        ("buffered-read", include_str!("testdata/buffered-read.json")),
        (
            "buffered-write",
            include_str!("testdata/buffered-write.json"),
        ),
    ];

    fn pretty(doc: &RunDocument) -> String {
        serde_json::to_string_pretty(doc).unwrap() + "\n"
    }

    #[test]
    fn documents_main_wrote_come_back_byte_for_byte() {
        for (name, text) in WRITTEN_BEFORE {
            let doc: RunDocument = serde_json::from_str(text).unwrap();
            let again = pretty(&doc);
            // Written before the documents had their kind: the one line
            // this build adds, first, is the only difference allowed.
            let text = text.replacen("{\n", "{\n  \"kind\": \"run\",\n", 1);
            if again != text {
                let line = again
                    .lines()
                    .zip(text.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                panic!(
                    "{name}: written differently from line {}: {:?} against {:?}",
                    line + 1,
                    again.lines().nth(line),
                    text.lines().nth(line)
                );
            }
        }
    }

    /// The keys of an entry, in the order it writes them.
    fn keys<T: Serialize>(entry: &T) -> Vec<String> {
        // Pretty-printed alone, its own keys are the lines indented once.
        serde_json::to_string_pretty(entry)
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix("  \"")?.split_once("\":"))
            .map(|(k, _)| k.to_string())
            .collect()
    }

    #[test]
    fn every_entry_writes_each_figure_once_in_one_order() {
        let (_, text) = WRITTEN_BEFORE[0];
        let doc: RunDocument = serde_json::from_str(text).unwrap();
        let all: Vec<&str> = Fig::ALL.iter().map(|f| f.name()).collect();
        for keys in [
            keys(&doc.workers[0]),
            keys(&doc.targets[0]),
            keys(&doc.total),
        ] {
            let figures: Vec<&str> = keys
                .iter()
                .map(String::as_str)
                .filter(|k| all.contains(k))
                .collect();
            // A mixed pattern on a schedule has every figure.
            assert_eq!(figures, all, "{keys:?}");
        }
    }

    #[test]
    fn an_older_entry_reads_back_through_the_flattened_figures() {
        // Whole numbers where floats go, no schedule or mixed-pattern
        // fields, a null latency: what hand-made or older documents hold.
        let t: TotalDoc = serde_json::from_str(
            r#"{"bytes": 4096, "ios": 1, "errors": 0, "short_ios": 0, "seconds": 2,
                "bytes_per_sec": 2048, "iops": 0, "latency_ns": null, "cpu_usr_sec": 0,
                "cpu_sys_sec": 1, "flush": null, "histogram": "", "unknown": [1, 2]}"#,
        )
        .unwrap();
        assert_eq!(t.figures.seconds, 2.0);
        assert_eq!(t.figures.bytes_per_sec, 2048.0);
        assert_eq!(t.figures.latency_ns, None);
        assert_eq!(t.figures.service_histogram, None);
        assert_eq!((t.flush_errors, t.cache_evictions), (0, 0));
        // What is missing is still said by name.
        let e = serde_json::from_str::<TotalDoc>(r#"{"bytes": 1, "flush": null}"#).unwrap_err();
        assert!(e.to_string().contains("missing field `ios`"), "{e}");
    }
}
