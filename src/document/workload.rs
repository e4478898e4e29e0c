//! What "the same workload" is, for diff, merge and plan alike.
//!
//! A run's configuration holds two things. The **workload** is what each
//! worker was asked to do: the pattern and its read share, the request size,
//! O_DIRECT or the page cache, the engine and its queue depth, how many jobs
//! share a target, the region (size, offset), when a worker stops by itself
//! (io limit, passes), the modelled stripe, verification, the data written
//! (compressible, repeated) and the schedule (rate). Two runs that differ in
//! one of these measured different things.
//!
//! The **conditions** are what it ran under: the duration and ramp, the
//! read-ahead, buffer registration, the page cache's state, error and hang
//! limits, seed, CPUs and pinning, the start instant, the target paths, the
//! host and kernel. They are not the workload:
//! - `diff` exists to compare conditions (read-ahead before and after, one
//!   kernel against another), so it refuses another workload and notes the
//!   conditions that changed;
//! - `merge` sums hosts' rates, each over its own window: a sum of one
//!   workload measured for 10 s on one host and 20 s on another is still the
//!   fleet's rate, as long as the hosts ran together, which merge checks on
//!   its own (the windows' overlap); it refuses another workload, and whatever
//!   else would make the sum meaningless stays a named check there;
//! - `plan` fits one workload's scaling: N (targets, jobs, members or hosts)
//!   varies on purpose, so its own axis is left out ([`Workload::without`]).
//!
//! How many targets a run drove is its scale, not the workload: `diff`
//! compares totals and asks for it ([`Workload::with_targets`]); a fleet's
//! hosts may drive different numbers of disks.

use crate::document::run::ConfigDoc;

/// The options that make the workload, in the order they are named.
const NAMES: [&str; 25] = [
    "rw",
    "read_pct",
    "bs",
    "direct",
    "engine",
    "iodepth",
    "jobs",
    "jobs_share",
    "dist",
    "skip",
    "zones",
    "seq_run",
    "offset_increment",
    "size",
    "offset",
    "io_limit",
    "passes",
    "ios",
    "stripe_chunk",
    "verify",
    "buffer_compress_pct",
    "dedupe_pct",
    "pattern",
    "dedupe_set",
    "rate",
];

/// The workload of a run: its options by name, each as words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload(Vec<(&'static str, String)>);

impl Workload {
    /// The workload of a configuration.
    pub fn of(c: &ConfigDoc) -> Workload {
        let opt = |v: Option<u64>| v.map_or("none".to_string(), |v| v.to_string());
        Workload(vec![
            ("rw", c.rw.name().to_string()),
            ("read_pct", c.read_pct.to_string()),
            ("bs", c.bs.clone()),
            (
                "direct",
                if c.direct { "direct" } else { "buffered" }.to_string(),
            ),
            ("engine", c.engine.name().to_string()),
            ("iodepth", c.iodepth.to_string()),
            ("jobs", c.jobs.to_string()),
            // Jobs on one shared region read what each other read.
            ("jobs_share", c.jobs_share.to_string()),
            // Where the I/Os land is the workload too.
            ("dist", c.dist.clone().unwrap_or_else(|| "random".into())),
            (
                "skip",
                c.skip.map_or_else(|| "none".into(), |s| s.to_string()),
            ),
            (
                "zones",
                c.zones.map_or_else(
                    || "none".into(),
                    |z| format!("{}:{}:{}", z.size, z.skip, z.range),
                ),
            ),
            ("seq_run", opt(c.seq_run)),
            ("offset_increment", opt(c.offset_increment)),
            ("size", opt(c.size)),
            ("offset", c.offset.to_string()),
            ("io_limit", opt(c.io_limit)),
            ("passes", opt(c.passes)),
            ("ios", opt(c.ios)),
            ("stripe_chunk", opt(c.stripe_chunk)),
            ("verify", c.verify.to_string()),
            ("buffer_compress_pct", c.buffer_compress_pct.to_string()),
            ("dedupe_pct", c.dedupe_pct.to_string()),
            // Data a device compresses or dedupes is another workload.
            (
                "pattern",
                c.pattern.clone().unwrap_or_else(|| "none".into()),
            ),
            // What the repeats copy is what a deduplicating device sees.
            (
                "dedupe_set",
                match (c.dedupe_working_set_pct, c.dedupe_global) {
                    (None, _) => "none".to_string(),
                    (Some(p), false) => format!("{p}"),
                    (Some(p), true) => format!("{p} global"),
                },
            ),
            // A run on a schedule measures latency at that load (and from the
            // due time): another rate is another workload.
            ("rate", c.rate.map_or("none".to_string(), |r| r.label())),
        ])
    }

    /// The workload of a configuration read from a document as JSON (`plan`
    /// reads documents a part at a time): as [`Workload::of`] when it is a
    /// configuration stripebench wrote, else each option's JSON as it stands,
    /// so that two damaged ones still compare.
    pub fn of_json(v: &serde_json::Value) -> Workload {
        match serde_json::from_value::<ConfigDoc>(v.clone()) {
            Ok(c) => Workload::of(&c),
            Err(_) => Workload(
                NAMES
                    .iter()
                    .map(|&name| (name, v.get(name).map_or("none".into(), |x| x.to_string())))
                    .collect(),
            ),
        }
    }

    /// With the number of targets, after `jobs` (diff compares totals).
    pub fn with_targets(mut self, targets: usize) -> Workload {
        let at = self
            .0
            .iter()
            .position(|e| e.0 == "jobs")
            .map_or(0, |i| i + 1);
        self.0.insert(at, ("targets", targets.to_string()));
        self
    }

    /// The workload as one line of `name=value` words, in [`NAMES`]' order:
    /// the key a disk's history groups its results by.
    pub fn key(&self) -> String {
        self.0
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Without one option (a sweep's own parameter, plan's N).
    pub fn without(mut self, name: &str) -> Workload {
        self.0.retain(|e| e.0 != name);
        self
    }

    /// The options in which `self` and `other` differ, as "name (a vs b)";
    /// `at` names where (a sweep point, a phase) or is empty.
    pub fn differences(&self, other: &Workload, at: &str) -> Vec<String> {
        self.0
            .iter()
            .filter_map(|(name, a)| {
                let b = other.0.iter().find(|e| e.0 == *name).map(|e| &e.1);
                (b != Some(a))
                    .then(|| format!("{at}{name} ({a} vs {})", b.map_or("none", String::as_str)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each option of a configuration, changed alone: whether it is the
    /// workload (diff, merge and plan refuse it) or a condition (they do not).
    #[test]
    fn each_option_is_the_workload_or_a_condition() {
        let base = crate::report::fixtures::sample_doc().config;
        type Edit = fn(&mut ConfigDoc);
        let cases: &[(&str, Edit, bool)] = &[
            (
                "rw",
                |c| c.rw = crate::measure::config::RwMode::Randread,
                true,
            ),
            ("read_pct", |c| c.read_pct = 30, true),
            ("bs", |c| c.bs = "8192".into(), true),
            ("direct", |c| c.direct = !c.direct, true),
            ("iodepth", |c| c.iodepth += 1, true),
            ("jobs", |c| c.jobs += 1, true),
            ("jobs_share", |c| c.jobs_share = true, true),
            ("dist", |c| c.dist = Some("zipf:1.2".into()), true),
            ("skip", |c| c.skip = Some(4096), true),
            (
                "zones",
                |c| {
                    c.zones = Some(crate::document::run::ZonesDoc {
                        size: 1 << 20,
                        range: 1 << 20,
                        skip: 2 << 20,
                    })
                },
                true,
            ),
            ("seq_run", |c| c.seq_run = Some(8), true),
            (
                "offset_increment",
                |c| c.offset_increment = Some(1 << 20),
                true,
            ),
            ("size", |c| c.size = Some(1 << 30), true),
            ("offset", |c| c.offset += 4096, true),
            ("io_limit", |c| c.io_limit = Some(1 << 20), true),
            ("passes", |c| c.passes = Some(2), true),
            ("ios", |c| c.ios = Some(100), true),
            ("stripe_chunk", |c| c.stripe_chunk = Some(65536), true),
            ("verify", |c| c.verify = !c.verify, true),
            ("buffer_compress_pct", |c| c.buffer_compress_pct = 50, true),
            ("dedupe_pct", |c| c.dedupe_pct = 50, true),
            ("pattern", |c| c.pattern = Some("0xaa".into()), true),
            ("dedupe_set", |c| c.dedupe_working_set_pct = Some(5), true),
            (
                "rate",
                |c| c.rate = Some(crate::measure::config::RateLimit::Iops(100.0)),
                true,
            ),
            ("duration", |c| c.duration_sec += 5.0, false),
            ("ramp", |c| c.ramp_sec += 1.0, false),
            ("readahead", |c| c.readahead_kb = Some(4096), false),
            ("register", |c| c.register = !c.register, false),
            ("max_errors", |c| c.max_errors += 1, false),
            ("hang_timeout", |c| c.hang_timeout_sec = Some(9.0), false),
            ("log_interval", |c| c.log_interval_ms = Some(100), false),
            ("start_at", |c| c.start_at_unix_sec = Some(1e9), false),
            ("start_delay", |c| c.start_delay_sec = Some(1.0), false),
            ("seed", |c| c.seed += 1, false),
            ("cpus", |c| c.cpus = Some(vec![1]), false),
            ("pin", |c| c.pin = !c.pin, false),
            ("targets", |c| c.targets = vec!["/elsewhere".into()], false),
        ];
        for (name, edit, is_workload) in cases {
            let mut other = base.clone();
            edit(&mut other);
            let d = Workload::of(&base).differences(&Workload::of(&other), "");
            assert_eq!(!d.is_empty(), *is_workload, "{name}: {d:?}");
            let j = serde_json::to_value(&other).unwrap();
            assert_eq!(
                Workload::of_json(&j),
                Workload::of(&other),
                "{name}: the JSON reads as the document"
            );
        }
        let d = Workload::of(&base)
            .with_targets(1)
            .differences(&Workload::of(&base).with_targets(2), "");
        assert_eq!(d, vec!["targets (1 vs 2)"]);
        let mut j = serde_json::to_value(&base).unwrap();
        j["bs"] = serde_json::json!(["not", "a", "size"]);
        let d = Workload::of_json(&j).differences(&Workload::of(&base), "");
        assert!(
            d.contains(&format!("bs ([\"not\",\"a\",\"size\"] vs {})", base.bs)),
            "{d:?}"
        );
    }

    /// Two hosts' runs of one workload, told apart as real runs are (their
    /// own host, seed and start instant), `b` edited by `edit`.
    fn two_runs(
        edit: fn(&mut ConfigDoc),
    ) -> (
        crate::document::run::RunDocument,
        crate::document::run::RunDocument,
    ) {
        let a = crate::report::fixtures::sample_doc();
        let mut b = a.clone();
        b.host.hostname = "other".into();
        b.config.seed += 1;
        b.window.start_unix_sec += 1e-3;
        b.window.end_unix_sec += 1e-3;
        b.window.seconds += 1e-9;
        // Another run's seconds: not the interval series of `a`.
        b.workers[0].intervals.clear();
        edit(&mut b.config);
        (a, b)
    }

    fn merged(edit: fn(&mut ConfigDoc)) -> Result<(), String> {
        use crate::document::merge::{merge, Given, Input, Launch};
        let (a, b) = two_runs(edit);
        let given = [("a.json", a), ("b.json", b)].map(|(shown, d)| {
            Ok(Given {
                shown: shown.into(),
                input: Input::Run(Box::new(d)),
            })
        });
        merge(given.into_iter(), false, Launch::default())
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn diffed(edit: fn(&mut ConfigDoc)) -> Result<(), String> {
        use crate::document::diff::{diff, DiffOptions};
        use crate::document::read::{Document, Given};
        let (a, b) = two_runs(edit);
        let [a, b] = [("a.json", a), ("b.json", b)].map(|(shown, d)| Given {
            shown: shown.into(),
            document: Document::Run(Box::new(d)),
        });
        let o = DiffOptions {
            alpha: 0.05,
            threshold_pct: None,
            force: false,
        };
        diff(&a, &b, &o).map(|_| ()).map_err(|e| e.to_string())
    }

    // Regression: merge refused runs that differed in duration or
    // read-ahead (any option but a few, a denylist) while diff accepted them
    // (an allowlist). Both now refuse the workload and accept the conditions.
    #[test]
    fn merge_and_diff_refuse_the_same_workloads_and_accept_the_same_conditions() {
        type Edit = fn(&mut ConfigDoc);
        let cases: &[(&str, Edit, bool)] = &[
            ("nothing", |_| {}, false),
            ("bs", |c| c.bs = "8192".into(), true),
            (
                "rw",
                |c| c.rw = crate::measure::config::RwMode::Randread,
                true,
            ),
            ("iodepth", |c| c.iodepth += 1, true),
            ("jobs", |c| c.jobs += 1, true),
            ("direct", |c| c.direct = !c.direct, true),
            (
                "rate",
                |c| c.rate = Some(crate::measure::config::RateLimit::Iops(100.0)),
                true,
            ),
            ("verify", |c| c.verify = !c.verify, true),
            ("duration", |c| c.duration_sec += 5.0, false),
            ("ramp", |c| c.ramp_sec += 1.0, false),
            ("readahead", |c| c.readahead_kb = Some(4096), false),
            ("register", |c| c.register = !c.register, false),
            ("max_errors", |c| c.max_errors += 1, false),
            ("targets", |c| c.targets = vec!["/elsewhere".into()], false),
        ];
        for (name, edit, refused) in cases {
            let (m, d) = (merged(*edit), diffed(*edit));
            assert_eq!(m.is_err(), *refused, "merge, {name}: {m:?}");
            assert_eq!(d.is_err(), *refused, "diff, {name}: {d:?}");
            if *refused {
                let (m, d) = (m.unwrap_err(), d.unwrap_err());
                assert!(m.contains("ran a different workload: "), "{m}");
                assert!(d.contains("ran different workloads: "), "{d}");
            }
        }
    }
}
