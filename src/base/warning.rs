//! The warnings of a run: what makes its figures mean less than they seem
//! (the page cache served the reads, a window too short, requests that
//! straddle chunks), each a variant with its data, its sentence rendered
//! from it by `Display`, and [`group`] to say many targets' same warning
//! once.
//!
//! Here in `base`, not in `document`: warnings arise below the document,
//! in `measure` (the worker layout, the measured session) and `device`
//! (their checks), as well as in `document` (the run's assembly, merge,
//! plan); every one of those layers can name a type of `base`.
//!
//! In a document a warning is its sentence, as it always was (the JSON
//! contract): it serializes as that string, and a document read back gives
//! [`Warning::Text`], which keeps the sentence (the JSON keeps no kind).
//! Two warnings are the same when they say the same.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::base::units::{fmt_bytes, fmt_latency_ns, fmt_size_arg};

/// One warning. `path` fields hold a target as the warning names it
/// (escaped, or as the document spells it: the sentence is kept byte for
/// byte); `ratio` fields are fractions, printed as percentages.
#[derive(Debug, Clone)]
pub enum Warning {
    /// Known only by its sentence: read back from a document, or made by
    /// code that builds its sentence itself (a failed fsync's error, the
    /// live stream's trouble).
    Text(String),

    // --- The worker layout (measure::layout).
    /// `--io-limit` is not a whole number of requests: it rounds up.
    IoLimitRoundsUp {
        path: String,
        limit: u64,
        bs: u64,
    },
    /// A block size that is not a multiple of the stripe's chunk.
    StraddlesChunks {
        path: String,
        bs: u64,
        chunk: u64,
    },
    /// A sequential request smaller than a full stripe.
    PartialStripe {
        path: String,
        bs: u64,
        members: u64,
        chunk: u64,
    },

    // --- Before the run (the measured session; device checks).
    /// Two targets that reach the same bytes, read (writing them is refused).
    Overlap {
        a: String,
        b: String,
        on: String,
    },
    /// A file target with holes or unwritten extents, read with `--allow-holes`.
    HolesReadAnyway {
        path: String,
        /// Bytes of the region that are holes or unwritten extents.
        empty: u64,
        region: u64,
        hole_bytes: u64,
        unwritten_bytes: u64,
    },
    /// `--readahead` on a file: it sets its file system's device's.
    ReadaheadOnFile {
        kb: u64,
        path: String,
        knob: String,
        device: String,
    },
    /// A target on tmpfs (or another memory file system).
    MemoryTarget {
        path: String,
        fs: String,
        direct: bool,
    },
    /// More workers than `--cpus`.
    SharedCpus {
        workers: usize,
        cpus: usize,
    },
    /// A block size larger than one request to the device (`max_sectors_kb`).
    OversizedRequests {
        bs: u64,
        device: String,
        max_sectors_kb: u64,
        requests: u64,
    },
    /// A buffered working set that fits in free memory.
    WorkingSetFits {
        working_set: u64,
        available: u64,
    },

    // --- What the figures mean (the run's assembly).
    /// A worker on a schedule that did not keep it.
    ScheduleMissed {
        worker: usize,
        target: String,
        asked_iops: f64,
        asked_bytes_per_sec: f64,
        delivered_iops: f64,
        delivered_bytes_per_sec: f64,
        unserved_ios: u64,
        unserved_oldest_ns: u64,
        p99_ns: u64,
        max_ns: u64,
        behind_max_ns: u64,
        late_ios: u64,
    },
    /// An interrupt during the final fsync: the targets still being flushed.
    FlushInterrupted {
        targets: Vec<String>,
    },
    /// The `--live` stream's reader could not keep up.
    LiveReaderBehind {
        dropped: u64,
        lines: u64,
    },
    /// The live collector could not keep up with the workers.
    LiveCollectorBehind {
        seconds_lost: u64,
        histograms_lost: u64,
    },
    /// Buffered reads the device delivered under half of.
    CacheServedReads {
        path: String,
        ratio: f64,
    },
    /// O_DIRECT reads the device delivered under half of.
    UndeliveredDirectReads {
        path: String,
        app_read_bytes: u64,
        device: String,
        read_bytes: u64,
        ratio: f64,
    },
    /// Buffered writes the device received under half of.
    CacheKeptWrites {
        path: String,
        ratio: f64,
    },
    /// Blocks verification found never written with `--verify`.
    UnwrittenBlocks {
        path: String,
        unwritten: u64,
        blocks: u64,
    },
    /// Every worker reached its limit within a window too short to measure.
    ShortWindow {
        seconds: f64,
    },
    /// `--duration` ended the run before `--io-limit`.
    IoLimitNotReached {
        limit: u64,
        duration: Duration,
        most_bytes: u64,
    },
    /// `--duration` ended a verifying pass before every block was read;
    /// `done` is the slowest worker's fraction.
    VerifyPassIncomplete {
        duration: Duration,
        done: f64,
    },
    /// `--duration` ended the run before `--passes`.
    PassesNotCompleted {
        passes: u64,
        duration: Duration,
        done: f64,
    },
    /// Interrupted in the ramp.
    InterruptedBeforeWindow,
    ShortIos {
        count: u64,
    },
    ClampedLatencies {
        count: u64,
    },

    // --- After the run, from the device counters (the measured session).
    /// O_DIRECT requests that reached the device smaller than `--bs`;
    /// `why` is the queue limit that explains it (or that none does).
    SplitRequests {
        writes: bool,
        bs: u64,
        device: String,
        avg_bytes: u64,
        why: String,
    },
    /// A volume's member that received smaller pieces than it was sent.
    MemberSplitRequests {
        member: String,
        device: String,
        avg_bytes: u64,
        piece: u64,
        /// The piece is the volume's chunk.
        chunk: bool,
        why: String,
    },
    /// A write-only run (or phase) on a volume whose members read:
    /// read-modify-write, the parity of sub-stripe writes
    /// (`document::run::rmw`). `volume_read`: what the volume itself read
    /// in the same span (0: it was only written), which `members_read` exceeds.
    ReadModifyWrite {
        path: String,
        members_read: u64,
        volume_read: u64,
        /// Members whose counters show reads, of those that keep statistics.
        members_reading: usize,
        members: usize,
    },

    // --- Documents made of documents (merge, plan).
    /// A host's own warning, in a merge.
    OnHost {
        host: String,
        warning: Box<Warning>,
    },
    /// A run given twice, merged because of `--force`; `what` says which.
    MergedTwice {
        what: String,
    },
    /// A run of another workload, merged because of `--force`.
    DifferentWorkload {
        path: String,
        difference: String,
    },
    /// Hosts whose windows do not overlap, merged because of `--force`;
    /// `miss` says by how much.
    WindowsApart {
        miss: String,
    },
    /// Hosts that started further apart than a tenth of the shortest window.
    StartSkew {
        skew_sec: f64,
        shortest_sec: f64,
    },
    /// A plan's point of another workload, fitted because of `--force`.
    DifferentWorkloadFitted {
        path: String,
        first: String,
        difference: String,
    },
}

fn pct(ratio: f64) -> f64 {
    ratio * 100.0
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Warning::*;
        let ns = |v: u64| fmt_latency_ns(v as f64);
        match self {
            Text(t) => f.write_str(t),
            IoLimitRoundsUp { path, limit, bs } => write!(
                f,
                "{path}: --io-limit {} is not a whole number of --bs {} requests: it rounds up, so each worker moves {}",
                fmt_bytes(*limit),
                fmt_size_arg(*bs),
                fmt_bytes(limit.div_ceil(*bs) * bs)
            ),
            StraddlesChunks { path, bs, chunk } => write!(
                f,
                "{path}: --bs {} is not a multiple of its chunk ({}): requests straddle member boundaries",
                fmt_size_arg(*bs),
                fmt_size_arg(*chunk)
            ),
            PartialStripe {
                path,
                bs,
                members,
                chunk,
            } => {
                let width = fmt_size_arg(chunk * members);
                write!(
                    f,
                    "{path}: --bs {} is smaller than a full stripe ({members} members x {} = {width}): each sequential request reaches only some members; --bs {width} moves full stripes",
                    fmt_size_arg(*bs),
                    fmt_size_arg(*chunk),
                )
            }
            Overlap { a, b, on } => write!(
                f,
                "targets {a} and {b} overlap on {on}: they share one device, so their figures are not independent and their sum is not the device's"
            ),
            HolesReadAnyway { .. } => write!(
                f,
                "{}; read anyway (--allow-holes): those reads measure memory, not the device",
                self.holes_amount().unwrap_or_default()
            ),
            ReadaheadOnFile {
                kb,
                path,
                knob,
                device,
            } => write!(
                f,
                "--readahead {kb} on the file {path}: a file has no read-ahead of its own; this sets {knob} of {device}, the device under its file system, which every file on {device} shares for the run"
            ),
            MemoryTarget { path, fs, direct } => write!(
                f,
                "{path} is on {fs}: the target is memory, not a device ({}no device counters), so these figures measure memory",
                if *direct {
                    format!("{fs} takes O_DIRECT but serves it from RAM like any other I/O; ")
                } else {
                    String::new()
                }
            ),
            SharedCpus { workers, cpus } => write!(
                f,
                "{workers} workers share {cpus} CPU(s): workers on one CPU take turns, which can limit what they measure"
            ),
            OversizedRequests {
                bs,
                device,
                max_sectors_kb,
                requests,
            } => write!(
                f,
                "--bs {} is larger than one request to {device} can carry (max_sectors_kb {max_sectors_kb}): each I/O reaches the device as {requests} requests",
                fmt_bytes(*bs)
            ),
            WorkingSetFits {
                working_set,
                available,
            } => write!(
                f,
                "the buffered working set ({}) fits in free memory ({}): once read, it can be served from the page cache; the device counters show whether it was",
                fmt_bytes(*working_set),
                fmt_bytes(*available)
            ),
            ScheduleMissed {
                worker,
                target,
                asked_iops,
                asked_bytes_per_sec,
                delivered_iops,
                delivered_bytes_per_sec,
                unserved_ios,
                unserved_oldest_ns,
                p99_ns,
                max_ns,
                behind_max_ns,
                late_ios,
            } => {
                let unserved = if *unserved_ios > 0 {
                    format!(
                        "{unserved_ios} I/O(s) due in the window not done by its end (the oldest due {} before it); ",
                        ns(*unserved_oldest_ns)
                    )
                } else {
                    String::new()
                };
                write!(
                    f,
                    "worker w{worker} on {target} could not keep its schedule: asked {asked_iops:.0} IOPS ({:.1} MB/s), delivered {delivered_iops:.0} IOPS ({:.1} MB/s); {unserved}latency from the due time{}: p99 {}, max {}; issued up to {} after due ({late_ios} more than 1 ms late)",
                    asked_bytes_per_sec / 1e6,
                    delivered_bytes_per_sec / 1e6,
                    if *unserved_ios > 0 {
                        ", those counted at least to the window's end"
                    } else {
                        ""
                    },
                    ns(*p99_ns),
                    ns(*max_ns),
                    ns(*behind_max_ns),
                )
            }
            FlushInterrupted { targets } => write!(
                f,
                "interrupted during the final fsync: stopped waiting for {} (the fsync goes on in the kernel); the flush is incomplete and no durable figure is given",
                targets.join(", ")
            ),
            LiveReaderBehind { dropped, lines } => write!(
                f,
                "the --live stream's reader fell behind: {dropped} of {lines} lines were dropped (the run did not wait for it)"
            ),
            LiveCollectorBehind {
                seconds_lost,
                histograms_lost,
            } => write!(
                f,
                "the live collector fell behind the workers: {seconds_lost} worker second(s) lost, {histograms_lost} without percentiles"
            ),
            CacheServedReads { path, ratio } => write!(
                f,
                "{path}: the device delivered {:.1}% of the bytes read: the page cache served the rest, so these figures measure memory, not the device",
                pct(*ratio)
            ),
            UndeliveredDirectReads {
                path,
                app_read_bytes,
                device,
                read_bytes,
                ratio,
            } => write!(
                f,
                "{path}: O_DIRECT reads of {} reached {device} as only {} ({:.1}%): the rest never came from the device, so these figures are not its speed. Likely causes: holes or unwritten extents in a file (read as zeros without I/O), a file system that keeps the data in memory, or a cache in front of the device",
                fmt_bytes(*app_read_bytes),
                fmt_bytes(*read_bytes),
                pct(*ratio)
            ),
            CacheKeptWrites { path, ratio } => write!(
                f,
                "{path}: the device received {:.1}% of the bytes written: the page cache merged rewrites or still holds the rest, so 'written to cache' MB/s measures memory; durable MB/s counts only what reached the device",
                pct(*ratio)
            ),
            UnwrittenBlocks {
                path,
                unwritten,
                blocks,
            } => write!(
                f,
                "{path}: {unwritten} of {blocks} blocks carry no stripebench header: never written with --verify (or with another --bs, --offset or --size)"
            ),
            ShortWindow { seconds } => write!(
                f,
                "the window lasted {} (every worker reached its limit that soon): rates over a window this short are noise; give a larger --io-limit or more --passes",
                fmt_latency_ns(seconds * 1e9)
            ),
            IoLimitNotReached {
                limit,
                duration,
                most_bytes,
            } => write!(
                f,
                "--io-limit {} was not reached: the --duration ({}) ended the run first, after {} at most per worker; raise --duration to reach the limit",
                fmt_bytes(*limit),
                humantime::format_duration(*duration),
                fmt_bytes(*most_bytes)
            ),
            VerifyPassIncomplete { duration, done } => write!(
                f,
                "verify: the --duration ({}) ended the pass before every block was read: the slowest worker checked {:.1}% of its slice",
                humantime::format_duration(*duration),
                done.min(1.0) * 100.0
            ),
            PassesNotCompleted {
                passes,
                duration,
                done,
            } => write!(
                f,
                "--passes {passes} were not completed: the --duration ({}) ended the run first, with the slowest worker {:.1}% through; raise --duration (or leave it out)",
                humantime::format_duration(*duration),
                done.min(1.0) * 100.0
            ),
            InterruptedBeforeWindow => {
                f.write_str("interrupted before the window opened: nothing was measured")
            }
            ShortIos { count } => write!(
                f,
                "{count} short I/Os (fewer bytes than requested); their bytes are counted as moved"
            ),
            ClampedLatencies { count } => write!(
                f,
                "{count} latencies above one hour were recorded as one hour"
            ),
            SplitRequests {
                writes,
                bs,
                device,
                avg_bytes,
                why,
            } => write!(
                f,
                "O_DIRECT {} of {} reached {device} as requests of {} on average: {why}",
                if *writes { "writes" } else { "reads" },
                fmt_bytes(*bs),
                fmt_bytes(*avg_bytes)
            ),
            MemberSplitRequests {
                member,
                device,
                avg_bytes,
                piece,
                chunk,
                why,
            } => write!(
                f,
                "member {member} of {device} received O_DIRECT reads as requests of {} on average, for pieces of {}{}: {why}",
                fmt_bytes(*avg_bytes),
                fmt_bytes(*piece),
                if *chunk { " (the chunk)" } else { "" }
            ),
            ReadModifyWrite {
                path,
                members_read,
                volume_read,
                members_reading,
                members,
            } => {
                let reads = if *volume_read == 0 {
                    format!("members read {} while the volume was only written", fmt_bytes(*members_read))
                } else {
                    format!(
                        "members read {} more than the volume's own reads ({}) while it was written",
                        fmt_bytes(members_read.saturating_sub(*volume_read)),
                        fmt_bytes(*volume_read)
                    )
                };
                write!(
                    f,
                    "{path}: {reads}: read-modify-write (sub-stripe writes); {members_reading} of {members} members read"
                )
            }
            OnHost { host, warning } => write!(f, "{host}: {warning}"),
            MergedTwice { what } => write!(f, "{what}; merged twice because of --force"),
            DifferentWorkload { path, difference } => write!(
                f,
                "{path}: a different workload ({difference}), merged because of --force"
            ),
            WindowsApart { miss } => write!(
                f,
                "the hosts' windows do not overlap by most of their length ({miss}): the fleet total adds runs that did not run together, merged because of --force; launch them with one --start-at"
            ),
            StartSkew {
                skew_sec,
                shortest_sec,
            } => write!(
                f,
                "the hosts started {skew_sec:.3}s apart, more than a tenth of the shortest window ({shortest_sec:.3}s): use one --start-at"
            ),
            DifferentWorkloadFitted {
                path,
                first,
                difference,
            } => write!(
                f,
                "{path}: a different workload than {first} ({difference}), fitted together because of --force"
            ),
        }
    }
}

impl Warning {
    /// A file target's holes: how much of its region they are, as the
    /// warning and the refusal to read it both say it.
    pub fn holes_amount(&self) -> Option<String> {
        let Warning::HolesReadAnyway {
            path,
            empty,
            region,
            hole_bytes,
            unwritten_bytes,
        } = self
        else {
            return None;
        };
        let what = match (hole_bytes, unwritten_bytes) {
            (_, 0) => "holes (never written)".to_string(),
            (0, _) => "unwritten extents (allocated by fallocate, never written)".to_string(),
            (hb, ub) => format!(
                "holes ({} never written) and unwritten extents ({} allocated by fallocate)",
                fmt_bytes(*hb),
                fmt_bytes(*ub)
            ),
        };
        Some(format!(
            "{} of the {} region of {path} ({:.1}%) are {what}: they read as zeros without any I/O to a device",
            fmt_bytes(*empty),
            fmt_bytes(*region),
            *empty as f64 / (*region).max(1) as f64 * 100.0
        ))
    }

    /// The one target this warning is about, when it is about one target.
    pub fn target(&self) -> Option<&str> {
        use Warning::*;
        match self {
            IoLimitRoundsUp { path, .. }
            | StraddlesChunks { path, .. }
            | PartialStripe { path, .. }
            | HolesReadAnyway { path, .. }
            | MemoryTarget { path, .. }
            | CacheServedReads { path, .. }
            | UndeliveredDirectReads { path, .. }
            | CacheKeptWrites { path, .. }
            | UnwrittenBlocks { path, .. }
            | ReadModifyWrite { path, .. } => Some(path),
            _ => None,
        }
    }
}

/// Two warnings are the same when they say the same: a warning made in
/// this run equals its sentence read back from a document.
impl PartialEq for Warning {
    fn eq(&self, other: &Warning) -> bool {
        match (self, other) {
            (Warning::Text(a), Warning::Text(b)) => a == b,
            _ => self.to_string() == other.to_string(),
        }
    }
}

impl From<String> for Warning {
    fn from(text: String) -> Warning {
        Warning::Text(text)
    }
}

impl Serialize for Warning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Warning::Text(t) => s.serialize_str(t),
            w => s.collect_str(w),
        }
    }
}

impl<'de> Deserialize<'de> for Warning {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Warning, D::Error> {
        String::deserialize(d).map(Warning::Text)
    }
}

/// The warnings of a run over `targets` targets, one line per kind of
/// warning about single targets: those that several targets share become
/// "12 of 256 targets: <the first one's sentence>; likewise <the others>",
/// at the place of the first. A kind only one target has, and a warning
/// about no single target, stay as they are. (For runs over many targets;
/// the table and the documents still list every warning.)
pub fn group(warnings: &[Warning], targets: usize) -> Vec<String> {
    // Each line: a warning, or the first of its kind and the targets of the others.
    let mut lines: Vec<(&Warning, Vec<&str>)> = Vec::new();
    for w in warnings {
        let same_kind = w.target().and_then(|_| {
            lines.iter_mut().find(|(first, _)| {
                first.target().is_some()
                    && std::mem::discriminant(*first) == std::mem::discriminant(w)
            })
        });
        match (same_kind, w.target()) {
            (Some((_, others)), Some(t)) => others.push(t),
            _ => lines.push((w, Vec::new())),
        }
    }
    const NAMED: usize = 8;
    lines
        .into_iter()
        .map(|(first, others)| {
            if others.is_empty() {
                return first.to_string();
            }
            let named: Vec<&str> = others.iter().copied().take(NAMED).collect();
            let more = others.len().saturating_sub(NAMED);
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!(
                "{} of {targets} targets: {first}; likewise {}{more}",
                others.len() + 1,
                named.join(", ")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Warning::*;

    fn says(w: Warning, text: &str) {
        assert_eq!(w.to_string(), text);
        // In a document it is that sentence, and it reads back as the same warning.
        let json = serde_json::to_string(&w).unwrap();
        assert_eq!(json, serde_json::to_string(text).unwrap());
        let back: Warning = serde_json::from_str(&json).unwrap();
        assert!(matches!(&back, Text(t) if t == text));
        assert_eq!(back, w);
    }

    #[test]
    fn each_layout_warning_says_what_it_always_said() {
        says(
            IoLimitRoundsUp {
                path: "/dev/sdb".into(),
                limit: 1000,
                bs: 4096,
            },
            "/dev/sdb: --io-limit 1000 B is not a whole number of --bs 4k requests: it rounds up, so each worker moves 4.0 KiB",
        );
        says(
            StraddlesChunks {
                path: "/dev/md0".into(),
                bs: 96 << 10,
                chunk: 64 << 10,
            },
            "/dev/md0: --bs 96k is not a multiple of its chunk (64k): requests straddle member boundaries",
        );
        says(
            PartialStripe {
                path: "/dev/md0".into(),
                bs: 128 << 10,
                members: 3,
                chunk: 64 << 10,
            },
            "/dev/md0: --bs 128k is smaller than a full stripe (3 members x 64k = 192k): each sequential request reaches only some members; --bs 192k moves full stripes",
        );
    }

    #[test]
    fn each_warning_before_the_run_says_what_it_always_said() {
        says(
            Overlap {
                a: "/dev/sda1".into(),
                b: "/dev/sda".into(),
                on: "sda".into(),
            },
            "targets /dev/sda1 and /dev/sda overlap on sda: they share one device, so their figures are not independent and their sum is not the device's",
        );
        let holes = |hole_bytes, unwritten_bytes| HolesReadAnyway {
            path: "f.dat".into(),
            empty: 1 << 20,
            region: 4 << 20,
            hole_bytes,
            unwritten_bytes,
        };
        says(
            holes(1 << 20, 0),
            "1.0 MiB of the 4.0 MiB region of f.dat (25.0%) are holes (never written): they read as zeros without any I/O to a device; read anyway (--allow-holes): those reads measure memory, not the device",
        );
        says(
            holes(0, 1 << 20),
            "1.0 MiB of the 4.0 MiB region of f.dat (25.0%) are unwritten extents (allocated by fallocate, never written): they read as zeros without any I/O to a device; read anyway (--allow-holes): those reads measure memory, not the device",
        );
        says(
            holes(512 << 10, 512 << 10),
            "1.0 MiB of the 4.0 MiB region of f.dat (25.0%) are holes (512.0 KiB never written) and unwritten extents (512.0 KiB allocated by fallocate): they read as zeros without any I/O to a device; read anyway (--allow-holes): those reads measure memory, not the device",
        );
        says(
            ReadaheadOnFile {
                kb: 512,
                path: "f.dat".into(),
                knob: "/sys/block/vdb/queue/read_ahead_kb".into(),
                device: "vdb".into(),
            },
            "--readahead 512 on the file f.dat: a file has no read-ahead of its own; this sets /sys/block/vdb/queue/read_ahead_kb of vdb, the device under its file system, which every file on vdb shares for the run",
        );
        for (direct, middle) in [
            (false, ""),
            (
                true,
                "tmpfs takes O_DIRECT but serves it from RAM like any other I/O; ",
            ),
        ] {
            says(
                MemoryTarget {
                    path: "/dev/shm/t".into(),
                    fs: "tmpfs".into(),
                    direct,
                },
                &format!("/dev/shm/t is on tmpfs: the target is memory, not a device ({middle}no device counters), so these figures measure memory"),
            );
        }
        says(
            SharedCpus { workers: 4, cpus: 1 },
            "4 workers share 1 CPU(s): workers on one CPU take turns, which can limit what they measure",
        );
        says(
            OversizedRequests {
                bs: 1 << 20,
                device: "sdb".into(),
                max_sectors_kb: 128,
                requests: 8,
            },
            "--bs 1.0 MiB is larger than one request to sdb can carry (max_sectors_kb 128): each I/O reaches the device as 8 requests",
        );
        says(
            WorkingSetFits {
                working_set: 8 << 20,
                available: 1 << 30,
            },
            "the buffered working set (8.0 MiB) fits in free memory (1.0 GiB): once read, it can be served from the page cache; the device counters show whether it was",
        );
    }

    #[test]
    fn each_warning_on_the_figures_says_what_it_always_said() {
        let missed = |unserved_ios| ScheduleMissed {
            worker: 3,
            target: "/dev/sdb".into(),
            asked_iops: 1000.0,
            asked_bytes_per_sec: 4.096e6,
            delivered_iops: 812.4,
            delivered_bytes_per_sec: 3.3275e6,
            unserved_ios,
            unserved_oldest_ns: 2_000_000,
            p99_ns: 15_000_000,
            max_ns: 40_000_000,
            behind_max_ns: 30_000_000,
            late_ios: 17,
        };
        says(
            missed(0),
            "worker w3 on /dev/sdb could not keep its schedule: asked 1000 IOPS (4.1 MB/s), delivered 812 IOPS (3.3 MB/s); latency from the due time: p99 15.00ms, max 40.00ms; issued up to 30.00ms after due (17 more than 1 ms late)",
        );
        says(
            missed(5),
            "worker w3 on /dev/sdb could not keep its schedule: asked 1000 IOPS (4.1 MB/s), delivered 812 IOPS (3.3 MB/s); 5 I/O(s) due in the window not done by its end (the oldest due 2.00ms before it); latency from the due time, those counted at least to the window's end: p99 15.00ms, max 40.00ms; issued up to 30.00ms after due (17 more than 1 ms late)",
        );
        says(
            FlushInterrupted {
                targets: vec!["a.dat".into(), "b.dat".into()],
            },
            "interrupted during the final fsync: stopped waiting for a.dat, b.dat (the fsync goes on in the kernel); the flush is incomplete and no durable figure is given",
        );
        says(
            LiveReaderBehind {
                dropped: 3,
                lines: 40,
            },
            "the --live stream's reader fell behind: 3 of 40 lines were dropped (the run did not wait for it)",
        );
        says(
            LiveCollectorBehind {
                seconds_lost: 2,
                histograms_lost: 1,
            },
            "the live collector fell behind the workers: 2 worker second(s) lost, 1 without percentiles",
        );
        says(
            CacheServedReads {
                path: "a.dat".into(),
                ratio: 0.0123,
            },
            "a.dat: the device delivered 1.2% of the bytes read: the page cache served the rest, so these figures measure memory, not the device",
        );
        says(
            UndeliveredDirectReads {
                path: "a.dat".into(),
                app_read_bytes: 4 << 20,
                device: "vdb".into(),
                read_bytes: 1 << 20,
                ratio: 0.25,
            },
            "a.dat: O_DIRECT reads of 4.0 MiB reached vdb as only 1.0 MiB (25.0%): the rest never came from the device, so these figures are not its speed. Likely causes: holes or unwritten extents in a file (read as zeros without I/O), a file system that keeps the data in memory, or a cache in front of the device",
        );
        says(
            CacheKeptWrites {
                path: "a.dat".into(),
                ratio: 0.5 - 1e-9,
            },
            "a.dat: the device received 50.0% of the bytes written: the page cache merged rewrites or still holds the rest, so 'written to cache' MB/s measures memory; durable MB/s counts only what reached the device",
        );
        says(
            UnwrittenBlocks {
                path: "a.dat".into(),
                unwritten: 12,
                blocks: 64,
            },
            "a.dat: 12 of 64 blocks carry no stripebench header: never written with --verify (or with another --bs, --offset or --size)",
        );
        says(
            ShortWindow { seconds: 0.0042 },
            "the window lasted 4.20ms (every worker reached its limit that soon): rates over a window this short are noise; give a larger --io-limit or more --passes",
        );
        let d = Duration::from_secs(5);
        says(
            IoLimitNotReached {
                limit: 1 << 30,
                duration: d,
                most_bytes: 300 << 20,
            },
            "--io-limit 1.0 GiB was not reached: the --duration (5s) ended the run first, after 300.0 MiB at most per worker; raise --duration to reach the limit",
        );
        says(
            VerifyPassIncomplete {
                duration: d,
                done: 0.4567,
            },
            "verify: the --duration (5s) ended the pass before every block was read: the slowest worker checked 45.7% of its slice",
        );
        says(
            PassesNotCompleted {
                passes: 2,
                duration: d,
                done: 1.5,
            },
            "--passes 2 were not completed: the --duration (5s) ended the run first, with the slowest worker 100.0% through; raise --duration (or leave it out)",
        );
        says(
            InterruptedBeforeWindow,
            "interrupted before the window opened: nothing was measured",
        );
        says(
            ShortIos { count: 7 },
            "7 short I/Os (fewer bytes than requested); their bytes are counted as moved",
        );
        says(
            ClampedLatencies { count: 1 },
            "1 latencies above one hour were recorded as one hour",
        );
        says(
            Text("fsync of a.dat failed: Input/output error (os error 5)".into()),
            "fsync of a.dat failed: Input/output error (os error 5)",
        );
    }

    #[test]
    fn each_warning_after_the_run_and_of_merged_documents_says_what_it_always_said() {
        says(
            SplitRequests {
                writes: false,
                bs: 1 << 20,
                device: "sdb".into(),
                avg_bytes: 128 << 10,
                why: "max_sectors_kb is 128".into(),
            },
            "O_DIRECT reads of 1.0 MiB reached sdb as requests of 128.0 KiB on average: max_sectors_kb is 128",
        );
        says(
            SplitRequests {
                writes: true,
                bs: 1 << 20,
                device: "sdb".into(),
                avg_bytes: 128 << 10,
                why: "max_sectors_kb is 128".into(),
            },
            "O_DIRECT writes of 1.0 MiB reached sdb as requests of 128.0 KiB on average: max_sectors_kb is 128",
        );
        says(
            MemberSplitRequests {
                member: "sdc".into(),
                device: "md0".into(),
                avg_bytes: 32 << 10,
                piece: 64 << 10,
                chunk: true,
                why: "no queue limit of the member explains it".into(),
            },
            "member sdc of md0 received O_DIRECT reads as requests of 32.0 KiB on average, for pieces of 64.0 KiB (the chunk): no queue limit of the member explains it",
        );
        says(
            OnHost {
                host: "node1".into(),
                warning: Box::new(InterruptedBeforeWindow),
            },
            "node1: interrupted before the window opened: nothing was measured",
        );
        says(
            MergedTwice {
                what: "b.json repeats the run of host n1".into(),
            },
            "b.json repeats the run of host n1; merged twice because of --force",
        );
        says(
            DifferentWorkload {
                path: "b.json".into(),
                difference: "bs 4k against 64k".into(),
            },
            "b.json: a different workload (bs 4k against 64k), merged because of --force",
        );
        says(
            WindowsApart {
                miss: "they miss one another by 1.000s".into(),
            },
            "the hosts' windows do not overlap by most of their length (they miss one another by 1.000s): the fleet total adds runs that did not run together, merged because of --force; launch them with one --start-at",
        );
        says(
            StartSkew {
                skew_sec: 0.25,
                shortest_sec: 2.0,
            },
            "the hosts started 0.250s apart, more than a tenth of the shortest window (2.000s): use one --start-at",
        );
        says(
            DifferentWorkloadFitted {
                path: "b.json".into(),
                first: "a.json".into(),
                difference: "rw read against write".into(),
            },
            "b.json: a different workload than a.json (rw read against write), fitted together because of --force",
        );
    }

    #[test]
    fn many_targets_same_warning_is_one_line() {
        let served = |i: usize| CacheServedReads {
            path: format!("/dev/sd{i}"),
            ratio: 0.1,
        };
        let mut ws: Vec<Warning> = (0..12).map(served).collect();
        ws.insert(
            1,
            SharedCpus {
                workers: 256,
                cpus: 2,
            },
        );
        ws.push(UnwrittenBlocks {
            path: "/dev/sd3".into(),
            unwritten: 1,
            blocks: 2,
        });
        let lines = group(&ws, 256);
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert_eq!(
            lines[0],
            format!(
                "12 of 256 targets: {}; likewise /dev/sd1, /dev/sd2, /dev/sd3, /dev/sd4, /dev/sd5, /dev/sd6, /dev/sd7, /dev/sd8 and 3 more",
                served(0)
            )
        );
        // Warnings about no single target, and a kind one target has, stay as they are.
        assert_eq!(lines[1], ws[1].to_string());
        assert_eq!(lines[2], ws[13].to_string());
    }

    #[test]
    fn a_few_targets_are_all_named_and_sentences_alone_stay() {
        let kept = |p: &str| CacheKeptWrites {
            path: p.into(),
            ratio: 0.2,
        };
        let ws = [kept("a"), Text("a: read back".into()), kept("b")];
        assert_eq!(
            group(&ws, 2),
            [
                format!("2 of 2 targets: {}; likewise b", kept("a")),
                "a: read back".to_string()
            ]
        );
        assert!(group(&[], 4).is_empty());
    }
}
