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
//! In a document a warning is its sentence (`text`, byte for byte what the
//! table and the HTML say) with its `kind` and its fields beside it, so a
//! reader of the JSON can act on a warning without parsing its sentence, and
//! a document read back gives the same typed warning. A warning known only
//! by its sentence ([`Warning::Text`], which every warning of a document
//! written before the fields reads back as) is that string alone. Two
//! warnings are the same when they say the same.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::base::units::{fmt_bytes, fmt_latency_ns, fmt_size_arg};

/// A window shorter than this (seconds) is warned of: its rates are noise.
pub const MIN_MEANINGFUL_WINDOW_SEC: f64 = 1.0;

/// A worker that completed fewer I/Os than this in the window is warned of.
pub const MIN_MEANINGFUL_IOS: u64 = 100;

/// One warning. `path` fields hold a target as the warning names it
/// (escaped, or as the document spells it: the sentence is kept byte for
/// byte); `ratio` fields are fractions, printed as percentages.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// Known only by its sentence: read back from a document written before
    /// warnings carried their kind (or of a kind this build does not know),
    /// or made by code that builds its sentence itself (a failed fsync's
    /// error). In a document: the sentence alone, a string.
    #[serde(skip)]
    Text(String),

    /// Many targets' (devices', workers', members') same warning, said once
    /// ([`group`]): `text` names their count and a compact list of them,
    /// and gives the range of each figure that differs among `members`.
    #[serde(skip)]
    Grouped {
        text: String,
        members: Vec<Warning>,
    },

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
    /// `--fill-device` on a regular file: it grows until its file system
    /// says no space is left; `free` is what statvfs says is free now,
    /// `own` the file's bytes past --offset (rewritten, not new space).
    FillsFileSystem {
        path: String,
        free: u64,
        own: u64,
    },
    HolesReadAnyway {
        path: String,
        /// Bytes of the region that are holes or unwritten extents.
        empty: u64,
        region: u64,
        hole_bytes: u64,
        unwritten_bytes: u64,
    },
    /// A block device whose layer (a loop device's backing file, zram)
    /// holds no data for `empty` bytes of its `region`: they read as zeros
    /// (or a fill) from memory. `mostly` (half or more,
    /// `analysis::zeros::MOSTLY`): read only with `--allow-holes`, which
    /// this then says; under half, the run goes on and says how much.
    UnbackedDevice {
        path: String,
        /// "its backing file /tmp/f.img", "zram".
        layer: String,
        /// What the empty bytes are: "holes (never written)".
        what: String,
        empty: u64,
        region: u64,
        mostly: bool,
    },
    /// `--readahead` on a file: it sets its file system's device's.
    ReadaheadOnFile {
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
    /// A block device opened without `O_NOATIME`: the kernel refused it.
    AtimeChecked {
        path: String,
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
    /// O_DIRECT I/Os that reach a device whole from our huge-page buffers
    /// but that its queue would split from 4 KiB-page buffers (fio's and
    /// dd's by default): `max_segments` segments of a page each carry
    /// `segments_bytes`, less than the `bs` (or the request size) we sent.
    UnsplitByHugePages {
        bs: u64,
        device: String,
        max_segments: u64,
        segments_bytes: u64,
    },
    /// A setting of a target's device that another run's state record
    /// holds: what the run measured is under that run's value (`in_force`),
    /// not the device's own (`own`, which that run will put back).
    SettingHeldByOtherRun {
        path: String,
        /// The setting's sysfs file.
        setting: String,
        own: String,
        in_force: Option<String>,
        pid: String,
        /// The other run was killed and left it (`stripebench restore`).
        killed: bool,
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
    /// The live stream's collector thread could not be started: the run
    /// goes on without `--live` and `--metrics` lines (said on stderr as
    /// the run starts).
    LiveThreadUnstarted {
        error: String,
    },
    /// `--iolog-write`: the log holds fewer I/Os than were issued (its
    /// buffer's cap), or could not be written.
    IologCut {
        path: String,
        missing: u64,
    },
    IologUnwritten {
        path: String,
        error: String,
    },
    /// `--fio-log-format each`: the per-I/O log holds fewer I/Os than
    /// completed in the window (the records reserved before it).
    FioLogCut {
        missing: u64,
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
    /// Sampled reads of a target that came back all zeros, half or more
    /// of at least 16 (`analysis::zeros`: one read in 64 of each worker's
    /// in the window is checked). A block this run wrote never reads back
    /// as zeros, so these are blocks the device held no data for
    /// (unwritten, trimmed, thin-provisioned, a hole under a loop device)
    /// or zeros a medium stores (a disk written with zeros): the sample
    /// cannot tell them apart. Where a layer check found the region all
    /// written data (`stored`: the layer, such as a loop device's backing
    /// file), that check is authoritative: the zeros were stored, and the
    /// figure stands. Otherwise the figure is not called the device's
    /// speed: `run` exits 4, and `compare` and `advise` refuse it, unless
    /// `--allow-holes`.
    ZeroReads {
        path: String,
        sampled: u64,
        zeros: u64,
        stored: Option<String>,
    },
    /// Blocks verification found never written with `--verify`.
    UnwrittenBlocks {
        path: String,
        unwritten: u64,
        blocks: u64,
    },
    /// The run went at once with `runs - 1` others (fio's jobs of one
    /// group that are different workloads): the device counters and the
    /// process's CPU hold their I/O and time too.
    RanAtOnce {
        runs: usize,
    },
    /// Every worker reached its limit within a window too short to measure
    /// (under [`MIN_MEANINGFUL_WINDOW_SEC`]).
    ShortWindow {
        seconds: f64,
    },
    /// A window under [`MIN_MEANINGFUL_WINDOW_SEC`] that the deadline (or an
    /// interrupt) closed: `--duration` was that short.
    BriefWindow {
        seconds: f64,
        interrupted: bool,
    },
    /// Workers that completed some I/O in the window, but fewer than
    /// [`MIN_MEANINGFUL_IOS`]: their rates and percentiles rest on a
    /// handful (`fewest`: the fewest one completed).
    FewIos {
        few: usize,
        workers: usize,
        fewest: u64,
    },
    /// `--duration` ended the run before `--io-limit`.
    IoLimitNotReached {
        limit: u64,
        #[serde(rename = "duration_sec", with = "secs")]
        duration: Duration,
        most_bytes: u64,
    },
    /// `--duration` ended a verifying pass before every block was read;
    /// `done` is the slowest worker's fraction.
    VerifyPassIncomplete {
        #[serde(rename = "duration_sec", with = "secs")]
        duration: Duration,
        done: f64,
    },
    /// `--duration` ended the run before `--passes`.
    PassesNotCompleted {
        passes: u64,
        #[serde(rename = "duration_sec", with = "secs")]
        duration: Duration,
        done: f64,
    },
    /// Interrupted in the ramp.
    InterruptedBeforeWindow,
    /// Workers that completed no I/O in a window that lasted its time:
    /// each one's I/O was still in flight when it closed (a slow device,
    /// or more workers than CPUs), so their rate of 0 is no measurement.
    IdleWorkers {
        idle: usize,
        workers: usize,
        seconds: f64,
    },
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

    /// I/O on a target's device that was not this run's: its counters
    /// moved by more than this run's own bytes, beyond `tolerance` (see
    /// `analysis::foreign`). `None`: that direction could not be told
    /// (buffered, where read-ahead and write-back move the counters too).
    ForeignIo {
        path: String,
        device: String,
        read_bytes: Option<u64>,
        write_bytes: Option<u64>,
        tolerance: u64,
    },

    // --- Before a measuring command (what a killed run left behind): said
    // on stderr before it measures, in no document.
    /// A state file of ours that is not ours to trust; `why` says which
    /// and why (its path shown escaped).
    StateFileRefused {
        why: String,
    },
    /// A killed run's test bed, still on disk (`dir` shown escaped).
    TestBedLeft {
        dir: String,
    },
    /// A killed run's settings, still changed (`state`: the state
    /// directory, shown escaped).
    SettingsLeft {
        settings: usize,
        state: String,
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
        // Each theme's sentences in a function of their own; this match
        // stays exhaustive, so a new variant must be given a theme here.
        match self {
            Text(t) => f.write_str(t),
            Grouped { text, .. } => f.write_str(text),
            IoLimitRoundsUp { .. } | StraddlesChunks { .. } | PartialStripe { .. } => {
                self.fmt_layout(f)
            }
            Overlap { .. }
            | HolesReadAnyway { .. }
            | UnbackedDevice { .. }
            | ReadaheadOnFile { .. }
            | MemoryTarget { .. }
            | FillsFileSystem { .. }
            | AtimeChecked { .. }
            | SettingHeldByOtherRun { .. } => self.fmt_target(f),
            SharedCpus { .. }
            | OversizedRequests { .. }
            | UnsplitByHugePages { .. }
            | WorkingSetFits { .. } => self.fmt_resources(f),
            ZeroReads { .. }
            | ForeignIo { .. }
            | CacheServedReads { .. }
            | UndeliveredDirectReads { .. }
            | CacheKeptWrites { .. }
            | UnwrittenBlocks { .. } => self.fmt_delivery(f),
            ScheduleMissed { .. }
            | FlushInterrupted { .. }
            | LiveReaderBehind { .. }
            | LiveThreadUnstarted { .. }
            | IologCut { .. }
            | IologUnwritten { .. }
            | FioLogCut { .. }
            | LiveCollectorBehind { .. }
            | ShortIos { .. }
            | ClampedLatencies { .. } => self.fmt_run(f),
            RanAtOnce { .. }
            | ShortWindow { .. }
            | BriefWindow { .. }
            | FewIos { .. }
            | IoLimitNotReached { .. }
            | VerifyPassIncomplete { .. }
            | PassesNotCompleted { .. }
            | InterruptedBeforeWindow
            | IdleWorkers { .. } => self.fmt_window(f),
            SplitRequests { .. } | MemberSplitRequests { .. } | ReadModifyWrite { .. } => {
                self.fmt_counters(f)
            }
            StateFileRefused { .. } | TestBedLeft { .. } | SettingsLeft { .. } => {
                self.fmt_left_behind(f)
            }
            OnHost { .. }
            | MergedTwice { .. }
            | DifferentWorkload { .. }
            | WindowsApart { .. }
            | StartSkew { .. }
            | DifferentWorkloadFitted { .. } => self.fmt_merged(f),
        }
    }
}

/// The sentences, a theme a function (the sections of [`Warning`]); each
/// is called by `fmt` only for the variants of its theme.
impl Warning {
    /// The worker layout's warnings: requests against the stripe's shape.
    fn fmt_layout(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Warning::*;
        match self {
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
            _ => unreachable!("fmt calls fmt_layout only for its theme's variants"),
        }
    }

    /// Before the run, the targets' own warnings: what they share, hold or lack.
    fn fmt_target(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Warning::*;
        match self {
            Overlap { a, b, on } => write!(
                f,
                "targets {a} and {b} overlap on {on}: they share one device, so their figures are not independent and their sum is not the device's"
            ),
            HolesReadAnyway { .. } => write!(
                f,
                "{}; read anyway (--allow-holes): those reads measure memory, not the device",
                self.holes_amount().unwrap_or_default()
            ),
            UnbackedDevice {
                path,
                layer,
                what,
                empty,
                region,
                mostly,
            } => write!(
                f,
                "{path}: {} of its {} region ({:.1}%) are {what} in {layer}: they read as zeros without reaching a medium; {}",
                fmt_bytes(*empty),
                fmt_bytes(*region),
                *empty as f64 / (*region).max(1) as f64 * 100.0,
                unbacked_tail(*mostly)
            ),
            // No value in the sentence (the run's config has it): a
            // sweep's points, each with its own, say it once.
            ReadaheadOnFile { path, knob, device } => write!(
                f,
                "--readahead on the file {path}: a file has no read-ahead of its own; this sets {knob} of {device}, the device under its file system, which every file on {device} shares for the run"
            ),
            MemoryTarget { path, fs, direct } => write!(
                f,
                "{path} is on {fs}: the target is memory, not a device ({}no device counters), so these figures measure memory",
                memory_direct(fs, *direct)
            ),
            FillsFileSystem { path, free, own } => write!(
                f,
                "{path}: --fill-device writes it from --offset until its file system says no space is left (ENOSPC), as fio's fill_device=1 does: {} free now{}, so about that much; the file keeps it, and the file system stays full until the file is removed",
                fmt_bytes(*free),
                fill_own(*own)
            ),
            AtimeChecked { path } => write!(
                f,
                "{path}: opened without O_NOATIME, which the kernel grants only to the node's owner or to CAP_FOWNER: every read also checks the node's access time, kernel time per I/O (some 40 ns) that a run as root or as the node's owner does not spend"
            ),
            SettingHeldByOtherRun {
                path,
                setting,
                own,
                in_force,
                pid,
                killed,
            } => write!(
                f,
                "{path}: {setting} is {} by another stripebench run (PID {pid}{}): it was {} during this run, the device's own is {own}, so these figures are under that run's setting, not the device's",
                if *killed { "left changed" } else { "held" },
                if *killed {
                    ", killed: run 'stripebench restore'"
                } else {
                    ", running now"
                },
                in_force.as_deref().unwrap_or("unreadable"),
            ),
            _ => unreachable!("fmt calls fmt_target only for its theme's variants"),
        }
    }

    /// Before the run, the machine's: CPUs, memory and the device's queue.
    fn fmt_resources(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Warning::*;
        match self {
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
            UnsplitByHugePages {
                bs,
                device,
                max_segments,
                segments_bytes,
            } => write!(
                f,
                "{device} takes each {} I/O whole because our buffers are in huge pages; from 4 KiB-page buffers (fio's and dd's unless told otherwise) its queue (max_segments {max_segments}) splits it into requests of {}, and other tools measure less: compare with fio's --iomem=mmaphuge (--print-fio says how), or run with --hugepages off",
                fmt_bytes(*bs),
                fmt_bytes(*segments_bytes)
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
            _ => unreachable!("fmt calls fmt_resources only for its theme's variants"),
        }
    }

    /// What reached the device: the page cache, zeros, foreign I/O, unwritten blocks.
    fn fmt_delivery(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Warning::*;
        match self {
            ZeroReads {
                path,
                sampled,
                zeros,
                stored,
            } => {
                let share = *zeros as f64 / (*sampled).max(1) as f64 * 100.0;
                match stored {
                    None => write!(
                        f,
                        "{path}: {share:.0}% of sampled reads ({zeros} of {sampled}) returned only zeros: the device answered without reading media: unwritten, trimmed or thin-provisioned blocks (or a medium written with zeros), so the figure is not the device's speed"
                    ),
                    Some(layer) => write!(
                        f,
                        "{path}: {share:.0}% of sampled reads ({zeros} of {sampled}) returned only zeros, and {layer} holds the region as written data: the zeros were stored and read"
                    ),
                }
            }
            ForeignIo {
                path,
                device,
                read_bytes,
                write_bytes,
                tolerance,
            } => {
                let part = |what: &str, b: &Option<u64>| {
                    b.filter(|&b| b > 0)
                        .map(|b| format!("{} {what}", fmt_bytes(b)))
                };
                let parts: Vec<String> = [part("read", read_bytes), part("written", write_bytes)]
                    .into_iter()
                    .flatten()
                    .collect();
                write!(
                    f,
                    "{path}: {device} did I/O that was not this run's: {} beyond this run's own bytes (more than the {} tolerance): another process used the device during the run, and these figures share it",
                    parts.join(" and "),
                    fmt_bytes(*tolerance)
                )
            }
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
            _ => unreachable!("fmt calls fmt_delivery only for its theme's variants"),
        }
    }

    /// The run's own course: its schedule, its flush, its live stream.
    fn fmt_run(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Warning::*;
        let ns = |v: u64| fmt_latency_ns(v as f64);
        match self {
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
            LiveThreadUnstarted { error } => {
                write!(f, "cannot start the live stream's thread: {error}")
            }
            IologCut { path, missing } => write!(
                f,
                "the iolog {path} stops short: {missing} I/Os issued after its buffer filled are not in it (it holds 4Mi I/Os over all workers; give a shorter run or fewer I/Os to log them all)"
            ),
            IologUnwritten { path, error } => {
                write!(f, "cannot write the iolog {path}: {error}")
            }
            FioLogCut { missing } => write!(
                f,
                "the per-I/O fio logs stop short: {missing} I/Os completed after the records reserved for them filled are not in them (1Mi I/Os over all workers; give a shorter run, or log_avg_msec for a line per interval)"
            ),
            LiveCollectorBehind {
                seconds_lost,
                histograms_lost,
            } => write!(
                f,
                "the live collector fell behind the workers: {seconds_lost} worker second(s) lost, {histograms_lost} without percentiles"
            ),
            ShortIos { count } => write!(
                f,
                "{count} short I/Os (fewer bytes than requested); their bytes are counted as moved"
            ),
            ClampedLatencies { count } => write!(
                f,
                "{count} latencies above one hour were recorded as one hour"
            ),
            _ => unreachable!("fmt calls fmt_run only for its theme's variants"),
        }
    }

    /// The window: too short, too few I/Os, a limit not reached.
    fn fmt_window(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Warning::*;
        match self {
            RanAtOnce { runs } => write!(
                f,
                "this run went at once with {} other run(s) of its fio group, its window opened with theirs: its rows are its own workers', but the process's CPU holds the others' time too, and its device counters are set against the bytes of every run at once on that device",
                runs.saturating_sub(1)
            ),
            ShortWindow { seconds } => write!(
                f,
                "the window lasted {} (every worker reached its limit that soon): rates over a window this short are noise; give a larger --io-limit or more --passes",
                fmt_latency_ns(seconds * 1e9)
            ),
            BriefWindow {
                seconds,
                interrupted: false,
            } => write!(
                f,
                "the window lasted {}: rates over a window this short are noise (a second at least, and more for a device with a cache or a variable rate); raise --duration",
                fmt_latency_ns(seconds * 1e9)
            ),
            BriefWindow {
                seconds,
                interrupted: true,
            } => write!(
                f,
                "the window lasted {} (interrupted): rates over a window this short are noise",
                fmt_latency_ns(seconds * 1e9)
            ),
            FewIos {
                few,
                workers,
                fewest,
            } => write!(
                f,
                "{few} of {workers} worker(s) completed fewer than {MIN_MEANINGFUL_IOS} I/Os in the window (the fewest {fewest}): their rates and latency percentiles rest on too few to mean much; raise --duration (or --io-limit, --passes)"
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
            IdleWorkers {
                idle,
                workers,
                seconds,
            } => write!(
                f,
                "{idle} of {workers} worker(s) completed no I/O in the {} window (their first I/O was still in flight when it closed): their rate of 0 is no measurement; raise --duration",
                fmt_latency_ns(seconds * 1e9)
            ),
            _ => unreachable!("fmt calls fmt_window only for its theme's variants"),
        }
    }

    /// After the run, from the device counters: split requests and read-modify-write.
    fn fmt_counters(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Warning::*;
        match self {
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
            _ => unreachable!("fmt calls fmt_counters only for its theme's variants"),
        }
    }

    /// Before a measuring command: what a killed run left behind.
    fn fmt_left_behind(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Warning::*;
        match self {
            StateFileRefused { why } => f.write_str(why),
            TestBedLeft { dir } => write!(
                f,
                "a killed run left its test bed behind ({dir}): run 'stripebench restore' to remove it"
            ),
            SettingsLeft { settings, state } => write!(
                f,
                "a killed run left {settings} setting(s) changed (state in {state}): run 'stripebench restore'"
            ),
            _ => unreachable!("fmt calls fmt_left_behind only for its theme's variants"),
        }
    }

    /// Documents made of documents (merge, plan).
    fn fmt_merged(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Warning::*;
        match self {
            OnHost { host, warning } => write!(f, "{host}: {warning}"),
            MergedTwice { what } => write!(f, "{what}; merged twice because of --force"),
            DifferentWorkload { path, difference } => write!(
                f,
                "{path}: a different workload ({difference}), merged because of --force"
            ),
            WindowsApart { miss } => write!(
                f,
                "{WINDOWS_APART} by most of their length ({miss}): the fleet total adds runs that did not run together, merged because of --force; launch them with one --start-at"
            ),
            StartSkew {
                skew_sec,
                shortest_sec,
            } => write!(
                f,
                "{STARTED_APART}{skew_sec:.3}s apart, more than a tenth of the shortest window ({shortest_sec:.3}s): use one --start-at"
            ),
            DifferentWorkloadFitted {
                path,
                first,
                difference,
            } => write!(
                f,
                "{path}: a different workload than {first} ({difference}), fitted together because of --force"
            ),
            _ => unreachable!("fmt calls fmt_merged only for its theme's variants"),
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
        Some(format!(
            "{} of the {} region of {path} ({:.1}%) are {}: they read as zeros without any I/O to a device",
            fmt_bytes(*empty),
            fmt_bytes(*region),
            *empty as f64 / (*region).max(1) as f64 * 100.0,
            holes_what(
                *hole_bytes,
                *unwritten_bytes,
                &fmt_bytes(*hole_bytes),
                &fmt_bytes(*unwritten_bytes)
            )
        ))
    }

    /// What this warning is about when that is one of many like it: the
    /// kind of subject ("targets", "devices", "workers", "members") and its
    /// name, as the sentence names it.
    pub fn subject(&self) -> Option<(&'static str, &str)> {
        use Warning::*;
        match self {
            IoLimitRoundsUp { path, .. }
            | StraddlesChunks { path, .. }
            | PartialStripe { path, .. }
            | HolesReadAnyway { path, .. }
            | UnbackedDevice { path, .. }
            | ZeroReads { path, .. }
            | ReadaheadOnFile { path, .. }
            | MemoryTarget { path, .. }
            | FillsFileSystem { path, .. }
            | AtimeChecked { path }
            | CacheServedReads { path, .. }
            | UndeliveredDirectReads { path, .. }
            | CacheKeptWrites { path, .. }
            | UnwrittenBlocks { path, .. }
            | ReadModifyWrite { path, .. } => Some(("targets", path)),
            OversizedRequests { device, .. }
            | SplitRequests { device, .. }
            | UnsplitByHugePages { device, .. } => Some(("devices", device)),
            MemberSplitRequests { member, .. } => Some(("members", member)),
            // Its name is a number: see `subject_name`.
            ScheduleMissed { .. } => Some(("workers", "")),
            _ => None,
        }
    }

    /// The figures of a warning that groups, in the order its sentence
    /// says them (see [`Self::many`]); `None` for a kind that never groups.
    fn figures(&self) -> Option<Vec<Figure>> {
        use Warning::*;
        let share = |v: f64, places: usize| Figure::fixed(v, places, "%");
        Some(match self {
            IoLimitRoundsUp { limit, bs, .. } => vec![
                Figure::bytes(*limit),
                Figure::size(*bs),
                Figure::bytes(limit.div_ceil(*bs) * bs),
            ],
            StraddlesChunks { bs, chunk, .. } => vec![Figure::size(*bs), Figure::size(*chunk)],
            PartialStripe {
                bs, members, chunk, ..
            } => vec![
                Figure::size(*bs),
                Figure::count(*members),
                Figure::size(*chunk),
                Figure::size(chunk * members),
                Figure::size(chunk * members),
            ],
            CacheServedReads { ratio, .. } | CacheKeptWrites { ratio, .. } => {
                vec![share(pct(*ratio), 1)]
            }
            AtimeChecked { .. } | ReadaheadOnFile { .. } | MemoryTarget { .. } => vec![],
            FillsFileSystem { free, own, .. } => vec![Figure::bytes(*free), Figure::bytes(*own)],
            UnbackedDevice { empty, region, .. } => vec![
                Figure::bytes(*empty),
                Figure::bytes(*region),
                share(*empty as f64 / (*region).max(1) as f64 * 100.0, 1),
            ],
            ZeroReads { sampled, zeros, .. } => vec![
                share(*zeros as f64 / (*sampled).max(1) as f64 * 100.0, 0),
                Figure::count(*zeros),
                Figure::count(*sampled),
            ],
            UnwrittenBlocks {
                unwritten, blocks, ..
            } => vec![Figure::count(*unwritten), Figure::count(*blocks)],
            UndeliveredDirectReads {
                app_read_bytes,
                read_bytes,
                ratio,
                ..
            } => vec![
                Figure::bytes(*app_read_bytes),
                Figure::bytes(*read_bytes),
                share(pct(*ratio), 1),
            ],
            HolesReadAnyway {
                empty,
                region,
                hole_bytes,
                unwritten_bytes,
                ..
            } => {
                let mut f = vec![
                    Figure::bytes(*empty),
                    Figure::bytes(*region),
                    share(*empty as f64 / (*region).max(1) as f64 * 100.0, 1),
                ];
                if *hole_bytes > 0 && *unwritten_bytes > 0 {
                    f.extend([Figure::bytes(*hole_bytes), Figure::bytes(*unwritten_bytes)]);
                }
                f
            }
            OversizedRequests {
                bs,
                max_sectors_kb,
                requests,
                ..
            } => vec![
                Figure::bytes(*bs),
                Figure::count(*max_sectors_kb),
                Figure::count(*requests),
            ],
            SplitRequests { bs, avg_bytes, .. } => {
                vec![Figure::bytes(*bs), Figure::bytes(*avg_bytes)]
            }
            UnsplitByHugePages {
                bs,
                max_segments,
                segments_bytes,
                ..
            } => vec![
                Figure::bytes(*bs),
                Figure::count(*max_segments),
                Figure::bytes(*segments_bytes),
            ],
            MemberSplitRequests {
                avg_bytes, piece, ..
            } => vec![Figure::bytes(*avg_bytes), Figure::bytes(*piece)],
            ScheduleMissed {
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
                ..
            } => {
                let mut f = vec![
                    Figure::fixed(*asked_iops, 0, ""),
                    Figure::fixed(asked_bytes_per_sec / 1e6, 1, ""),
                    Figure::fixed(*delivered_iops, 0, ""),
                    Figure::fixed(delivered_bytes_per_sec / 1e6, 1, ""),
                ];
                if *unserved_ios > 0 {
                    f.extend([
                        Figure::count(*unserved_ios),
                        Figure::ns(*unserved_oldest_ns),
                    ]);
                }
                f.extend([
                    Figure::ns(*p99_ns),
                    Figure::ns(*max_ns),
                    Figure::ns(*behind_max_ns),
                    Figure::count(*late_ios),
                ]);
                f
            }
            _ => return None,
        })
    }

    /// The sentence said of many subjects at once, `who` in the place of
    /// the one ("64 devices (zram1-zram64)") and `f[i]` in the place of
    /// figure `i` of [`Self::figures`] (one member's, or their range).
    /// Everything else in it is the members' own words, which a group
    /// shares: said with no subject and no figures, it is the group's key.
    fn many(&self, who: &str, f: &[String]) -> String {
        use Warning::*;
        let at = |i: usize| f.get(i).map_or("", String::as_str);
        match self {
            IoLimitRoundsUp { .. } => rounds_up_many(who, at(0), at(1), at(2)),
            StraddlesChunks { .. } => format!(
                "{who}: --bs {} is not a multiple of its chunk ({}): requests straddle member boundaries",
                at(0),
                at(1)
            ),
            PartialStripe { .. } => format!(
                "{who}: --bs {} is smaller than a full stripe ({} members x {} = {}): each sequential request reaches only some members; --bs {} moves full stripes",
                at(0),
                at(1),
                at(2),
                at(3),
                at(4)
            ),
            CacheServedReads { .. } => format!(
                "{who}: the device delivered {} of the bytes read: the page cache served the rest, so these figures measure memory, not the device",
                at(0)
            ),
            CacheKeptWrites { .. } => format!(
                "{who}: the device received {} of the bytes written: the page cache merged rewrites or still holds the rest, so 'written to cache' MB/s measures memory; durable MB/s counts only what reached the device",
                at(0)
            ),
            AtimeChecked { .. } => format!(
                "{who}: opened without O_NOATIME, which the kernel grants only to the node's owner or to CAP_FOWNER: every read also checks the node's access time, kernel time per I/O (some 40 ns) that a run as root or as the node's owner does not spend"
            ),
            UnbackedDevice {
                layer, what, mostly, ..
            } => format!(
                "{who}: {} of its {} region ({}) are {what} in {layer}: they read as zeros without reaching a medium; {}",
                at(0),
                at(1),
                at(2),
                unbacked_tail(*mostly)
            ),
            ZeroReads { stored, .. } => match stored {
                None => format!(
                    "{who}: {} of sampled reads ({} of {}) returned only zeros: the device answered without reading media: unwritten, trimmed or thin-provisioned blocks (or a medium written with zeros), so the figure is not the device's speed",
                    at(0),
                    at(1),
                    at(2)
                ),
                Some(layer) => format!(
                    "{who}: {} of sampled reads ({} of {}) returned only zeros, and {layer} holds the region as written data: the zeros were stored and read",
                    at(0),
                    at(1),
                    at(2)
                ),
            },
            UnwrittenBlocks { .. } => format!(
                "{who}: {} of {} blocks carry no stripebench header: never written with --verify (or with another --bs, --offset or --size)",
                at(0),
                at(1)
            ),
            UndeliveredDirectReads { .. } => format!(
                "{who}: O_DIRECT reads of {} each reached their devices as only {} ({}): the rest never came from the device, so these figures are not its speed. Likely causes: holes or unwritten extents in a file (read as zeros without I/O), a file system that keeps the data in memory, or a cache in front of the device",
                at(0),
                at(1),
                at(2)
            ),
            HolesReadAnyway {
                hole_bytes,
                unwritten_bytes,
                ..
            } => format!(
                "{who}: {} of each one's {} region ({}) are {}: they read as zeros without any I/O to a device; read anyway (--allow-holes): those reads measure memory, not the device",
                at(0),
                at(1),
                at(2),
                holes_what(*hole_bytes, *unwritten_bytes, at(3), at(4))
            ),
            ReadaheadOnFile { knob, device, .. } => format!(
                "--readahead on {who}, files: a file has no read-ahead of its own; this sets {knob} of {device}, the device under their file system, which every file on {device} shares for the run"
            ),
            FillsFileSystem { .. } => fills_many(who, at(0), at(1)),
            MemoryTarget { fs, direct, .. } => format!(
                "{who} are on {fs}: the targets are memory, not devices ({}no device counters), so these figures measure memory",
                memory_direct(fs, *direct)
            ),
            OversizedRequests { .. } => format!(
                "{who}: --bs {} is larger than one request to them can carry (max_sectors_kb {}): each I/O reaches each of them as {} requests",
                at(0),
                at(1),
                at(2)
            ),
            SplitRequests { writes, why, .. } => format!(
                "O_DIRECT {} of {} reached {who} as requests of {} on average: {why}",
                if *writes { "writes" } else { "reads" },
                at(0),
                at(1)
            ),
            UnsplitByHugePages { .. } => format!(
                "{who} take each {} I/O whole because our buffers are in huge pages; from 4 KiB-page buffers (fio's and dd's unless told otherwise) its queue (max_segments {}) splits it into requests of {}, and other tools measure less: compare with fio's --iomem=mmaphuge (--print-fio says how), or run with --hugepages off",
                at(0),
                at(1),
                at(2)
            ),
            MemberSplitRequests {
                device, chunk, why, ..
            } => format!(
                "{who} of {device} received O_DIRECT reads as requests of {} on average, for pieces of {}{}: {why}",
                at(0),
                at(1),
                if *chunk { " (the chunk)" } else { "" }
            ),
            ScheduleMissed {
                target,
                unserved_ios,
                ..
            } => {
                // The unserved I/Os' two figures come only when there are some.
                let (unserved, rest) = if *unserved_ios > 0 {
                    (
                        format!(
                            "{} I/O(s) due in the window not done by its end (the oldest due {} before it); ",
                            at(4),
                            at(5)
                        ),
                        6,
                    )
                } else {
                    (String::new(), 4)
                };
                format!(
                    "{who} on {target} could not keep their schedule: asked {} IOPS ({} MB/s), delivered {} IOPS ({} MB/s); {unserved}latency from the due time{}: p99 {}, max {}; issued up to {} after due ({} more than 1 ms late)",
                    at(0),
                    at(1),
                    at(2),
                    at(3),
                    if *unserved_ios > 0 {
                        ", those counted at least to the window's end"
                    } else {
                        ""
                    },
                    at(rest),
                    at(rest + 1),
                    at(rest + 2),
                    at(rest + 3)
                )
            }
            _ => String::new(),
        }
    }

    /// A merge's verdict on the hosts' windows (apart, or started apart):
    /// recomputed over all hosts when a merged document is merged again.
    /// A document read back keeps only the sentence, so that is matched too.
    pub fn is_fleet_overlap(&self) -> bool {
        match self {
            Warning::WindowsApart { .. } | Warning::StartSkew { .. } => true,
            Warning::Text(t) => t.starts_with(WINDOWS_APART) || t.starts_with(STARTED_APART),
            _ => false,
        }
    }

    /// The subject's name as the group lists it (a worker as `w3`).
    fn subject_name(&self) -> Option<String> {
        match self {
            Warning::ScheduleMissed { worker, .. } => Some(format!("w{worker}")),
            w => w.subject().map(|(_, n)| n.to_string()),
        }
    }
}

/// The openings of merge's verdicts on the hosts' windows, as said and
/// as matched in a document read back.
const WINDOWS_APART: &str = "the hosts' windows do not overlap";
const STARTED_APART: &str = "the hosts started ";

/// A figure of a warning as its sentence says it: its value, to order a
/// group's members by, and its text ("1.0 MiB", "25.0%", "64k").
#[derive(Debug, Clone, PartialEq)]
struct Figure {
    value: f64,
    text: String,
}

impl Figure {
    fn bytes(b: u64) -> Figure {
        Figure {
            value: b as f64,
            text: fmt_bytes(b),
        }
    }

    /// A size as an option takes it ("64k").
    fn size(b: u64) -> Figure {
        Figure {
            value: b as f64,
            text: fmt_size_arg(b),
        }
    }

    fn count(n: u64) -> Figure {
        Figure {
            value: n as f64,
            text: n.to_string(),
        }
    }

    fn ns(v: u64) -> Figure {
        Figure {
            value: v as f64,
            text: fmt_latency_ns(v as f64),
        }
    }

    /// `v` with `places` decimals and `unit` after it ("25.0%").
    fn fixed(v: f64, places: usize, unit: &str) -> Figure {
        Figure {
            value: v,
            text: format!("{v:.places$}{unit}"),
        }
    }

    /// The text's number and its unit after it: ("1.0", " MiB").
    fn parts(&self) -> (&str, &str) {
        let end = self
            .text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(self.text.len());
        self.text.split_at(end)
    }
}

/// What a group says for one figure of its members: the text they all
/// share, or the range from the least to the greatest ("66-68", "20.0-30.0%",
/// one unit said once; "512.0 KiB-1.0 MiB" across units).
fn range(figures: &[&Figure]) -> String {
    let first = figures[0];
    if figures.iter().all(|f| f.text == first.text) {
        return first.text.clone();
    }
    let lo = figures.iter().min_by(|a, b| a.value.total_cmp(&b.value));
    let hi = figures.iter().max_by(|a, b| a.value.total_cmp(&b.value));
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return first.text.clone();
    };
    match (lo.parts(), hi.parts()) {
        ((a, unit), (b, hi_unit)) if unit == hi_unit => format!("{a}-{b}{unit}"),
        _ => format!("{}-{}", lo.text, hi.text),
    }
}

/// What a file target's empty bytes are, `hb` and `ub` said as given.
fn holes_what(hole_bytes: u64, unwritten_bytes: u64, hb: &str, ub: &str) -> String {
    match (hole_bytes, unwritten_bytes) {
        (_, 0) => "holes (never written)".to_string(),
        (0, _) => "unwritten extents (allocated by fallocate, never written)".to_string(),
        _ => format!(
            "holes ({hb} never written) and unwritten extents ({ub} allocated by fallocate)"
        ),
    }
}

/// What [`Warning::UnbackedDevice`] says the run does about it.
fn unbacked_tail(mostly: bool) -> &'static str {
    if mostly {
        "read anyway (--allow-holes): those reads measure memory, not the device"
    } else {
        "under half, so the run goes on: its figure mixes the device's reads with memory's"
    }
}

/// [`Warning::IoLimitRoundsUp`] said of many targets (`who`), with its
/// figures: the limit, the block size, what each worker moves.
fn rounds_up_many(who: &str, limit: &str, bs: &str, moves: &str) -> String {
    format!("{who}: --io-limit {limit} is not a whole number of --bs {bs} requests: it rounds up, so each worker moves {moves}")
}

/// [`Warning::FillsFileSystem`] said of many files (`who`), with the
/// figures `free` and `own`.
fn fills_many(who: &str, free: &str, own: &str) -> String {
    format!("{who}: --fill-device writes each from --offset until its file system says no space is left (ENOSPC), as fio's fill_device=1 does: {free} free now (and {own} of their own past --offset); the files keep it, and the file systems stay full until they are removed")
}

/// What [`Warning::FillsFileSystem`] says of the file's own bytes.
fn fill_own(own: u64) -> String {
    if own == 0 {
        String::new()
    } else {
        format!(
            " (and the file's own {} past --offset, written over)",
            fmt_bytes(own)
        )
    }
}

/// What [`Warning::MemoryTarget`] says of O_DIRECT on a memory file system.
fn memory_direct(fs: &str, direct: bool) -> String {
    if direct {
        format!("{fs} takes O_DIRECT but serves it from RAM like any other I/O; ")
    } else {
        String::new()
    }
}

/// Names as a compact list: runs of one prefix and consecutive numbers
/// joined ("loop0-loop3, loop7"), at most 8 runs and a count of the rest.
pub fn compact(names: &[String]) -> String {
    // Each name as (prefix, number, suffix) around its last digits.
    let split = |n: &str| -> Option<(String, u64, String)> {
        let end = n.rfind(|c: char| c.is_ascii_digit())? + 1;
        let start = n[..end]
            .rfind(|c: char| !c.is_ascii_digit())
            .map_or(0, |i| i + 1);
        let num: u64 = n[start..end].parse().ok()?;
        // "loop01" is not "loop1": a leading zero keeps its name whole.
        (n[start..end] == num.to_string())
            .then(|| (n[..start].to_string(), num, n[end..].to_string()))
    };
    let mut numbered: Vec<(String, u64, String)> = Vec::new();
    // Each entry, and how many names it stands for.
    let mut runs: Vec<(String, u64)> = Vec::new();
    for n in names {
        match split(n) {
            Some(p) => numbered.push(p),
            None => runs.push((n.clone(), 1)),
        }
    }
    numbered.sort();
    numbered.dedup();
    let mut i = 0;
    while i < numbered.len() {
        let (p, a, s) = &numbered[i];
        let mut j = i;
        while j + 1 < numbered.len()
            && numbered[j + 1].0 == *p
            && numbered[j + 1].2 == *s
            && numbered[j + 1].1 == numbered[j].1 + 1
        {
            j += 1;
        }
        let b = numbered[j].1;
        runs.push(if j == i {
            (format!("{p}{a}{s}"), 1)
        } else {
            (format!("{p}{a}{s}-{p}{b}{s}"), b - a + 1)
        });
        i = j + 1;
    }
    const RUNS: usize = 8;
    // The rest counted in names, not entries: "and 248 more" of 256
    // names, however few runs they make.
    let more: u64 = runs.iter().skip(RUNS).map(|r| r.1).sum();
    let mut shown: Vec<String> = runs.into_iter().take(RUNS).map(|r| r.0).collect();
    if more > 0 {
        shown.push(format!("and {more} more"));
    }
    shown.join(", ")
}

/// What makes warnings one group: the kind of their subject, their kind,
/// and their sentence said of no one and without its figures (their words:
/// every field that is not a figure, such as a layer's or a file's name,
/// which is compared whole, never as figures).
type Key = (&'static str, std::mem::Discriminant<Warning>, String);

/// The warnings with each kind that several subjects share said once, as
/// a [`Warning::Grouped`] at the place of the first: "64 devices
/// (zram1-zram64): --bs 1.0 MiB is larger than one request to them ...",
/// a figure that differs among them given as its range ("66-68 IOPS").
/// They group when their kinds and words are the same, whatever their
/// subjects and figures (typed fields, never read back from a sentence).
/// A warning alone of its kind, and one about no single subject, stay as
/// they are (the same sentence, byte for byte).
pub fn group(warnings: &[Warning]) -> Vec<Warning> {
    let mut lines: Vec<(Option<Key>, Vec<&Warning>)> = Vec::new();
    for w in warnings {
        let key = w.subject().zip(w.figures()).map(|((kind, _), f)| {
            let words = w.many("", &vec![String::new(); f.len()]);
            (kind, std::mem::discriminant(w), words)
        });
        match key
            .as_ref()
            .and_then(|k| lines.iter_mut().find(|(lk, _)| lk.as_ref() == Some(k)))
        {
            Some((_, members)) => members.push(w),
            None => lines.push((key, vec![w])),
        }
    }
    lines
        .into_iter()
        .map(|(key, members)| match (key, members.as_slice()) {
            (Some((kind, _, _)), [_, _, ..]) => {
                let names: Vec<String> = members.iter().filter_map(|w| w.subject_name()).collect();
                let who = format!("{} {kind} ({})", members.len(), compact(&names));
                Warning::Grouped {
                    text: merged(&members, &who),
                    members: members.into_iter().cloned().collect(),
                }
            }
            (_, ms) => ms[0].clone(),
        })
        .collect()
}

/// The members' shared sentence, `who` as its subject, each figure that
/// differs given as the range of its values.
fn merged(members: &[&Warning], who: &str) -> String {
    let figures: Vec<Vec<Figure>> = members.iter().filter_map(|w| w.figures()).collect();
    let said: Vec<String> = (0..figures[0].len())
        .map(|i| range(&figures.iter().filter_map(|f| f.get(i)).collect::<Vec<_>>()))
        .collect();
    members[0].many(who, &said)
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

/// A `Duration` in a document: seconds, as every duration there is.
mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }
}

/// A typed warning in a document: its sentence, then its kind and fields
/// (those `serde(remote = "Self")` derives for [`Warning`]).
#[derive(Serialize)]
struct Typed<'a> {
    text: String,
    #[serde(flatten)]
    fields: Fields<'a>,
}

struct Fields<'a>(&'a Warning);

impl Serialize for Fields<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Warning::serialize(self.0, s)
    }
}

/// A group in a document: its line, and each member as it would stand alone.
#[derive(Serialize)]
struct GroupedDoc<'a> {
    text: &'a str,
    kind: &'static str,
    members: &'a [Warning],
}

/// In a document a warning is its sentence (`text`, the line a reader
/// sees), with its `kind` and its fields beside it; one known only by its
/// sentence ([`Warning::Text`]) is that string alone, as every warning was
/// before the fields.
impl Serialize for Warning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Warning::Text(t) => s.serialize_str(t),
            Warning::Grouped { text, members } => GroupedDoc {
                text,
                kind: "grouped",
                members,
            }
            .serialize(s),
            w => Typed {
                text: w.to_string(),
                fields: Fields(w),
            }
            .serialize(s),
        }
    }
}

/// A warning read back: a string is [`Warning::Text`] (a document written
/// before warnings carried their kind); an object is its kind with its
/// fields when this build knows the kind and renders the document's very
/// sentence from them, and otherwise its sentence alone, so a document
/// read back always says what it said.
impl<'de> Deserialize<'de> for Warning {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Warning, D::Error> {
        use serde::de::Error;
        use serde_json::Value;
        let mut fields = match Value::deserialize(d)? {
            Value::String(t) => return Ok(Warning::Text(t)),
            Value::Object(m) => m,
            other => {
                return Err(D::Error::custom(format!(
                    "a warning is a string or an object with its text, not {other}"
                )))
            }
        };
        let text = match fields.remove("text") {
            Some(Value::String(t)) => t,
            _ => return Err(D::Error::missing_field("text")),
        };
        if fields.get("kind").and_then(Value::as_str) == Some("grouped") {
            let members = fields
                .remove("members")
                .map(Vec::<Warning>::deserialize)
                .transpose()
                .map_err(D::Error::custom)?
                .unwrap_or_default();
            return Ok(Warning::Grouped { text, members });
        }
        Ok(match Warning::deserialize(Value::Object(fields)) {
            Ok(w) if w.to_string() == text => w,
            _ => Warning::Text(text),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Warning::*;

    fn says(w: Warning, text: &str) {
        assert_eq!(w.to_string(), text);
        // In a document it is that sentence with its kind and fields beside
        // it, and it reads back as the same warning, field for field.
        let v = serde_json::to_value(&w).unwrap();
        let back: Warning = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(back, w);
        match &w {
            Text(t) => assert_eq!(v, serde_json::Value::String(t.clone())),
            _ => {
                assert_eq!(v["text"], text, "{v}");
                assert!(v["kind"].is_string(), "{v}");
                assert_eq!(format!("{back:?}"), format!("{w:?}"));
            }
        }
        // Written before the fields, it is the sentence alone: text.
        let old: Warning = serde_json::from_value(serde_json::Value::String(text.into())).unwrap();
        assert!(matches!(&old, Text(t) if t == text));
        assert_eq!(old, w);
    }

    #[test]
    fn json_carries_each_warnings_kind_and_fields_beside_its_text() {
        let w = CacheKeptWrites {
            path: "a.dat".into(),
            ratio: 0.25,
        };
        let v = serde_json::to_value(&w).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "text": w.to_string(),
                "kind": "cache_kept_writes",
                "path": "a.dat",
                "ratio": 0.25,
            })
        );
        let back: Warning = serde_json::from_value(v).unwrap();
        assert!(
            matches!(&back, CacheKeptWrites { path, ratio } if path == "a.dat" && *ratio == 0.25),
            "{back:?}"
        );
        // A document written before the fields: its sentence, which stays text.
        let old: Warning = serde_json::from_value(serde_json::json!(w.to_string())).unwrap();
        assert!(matches!(&old, Text(t) if *t == w.to_string()));
        // A kind this build does not know, or fields that do not say the
        // document's sentence: the sentence, as the document said it.
        for v in [
            serde_json::json!({"text": "said", "kind": "from_the_future", "x": 1}),
            serde_json::json!({"text": "said", "kind": "cache_kept_writes", "path": "a", "ratio": 0.5}),
            serde_json::json!({"text": "said", "kind": "cache_kept_writes"}),
        ] {
            let back: Warning = serde_json::from_value(v).unwrap();
            assert!(matches!(&back, Text(t) if t == "said"), "{back:?}");
        }
        // An object without its sentence is no warning.
        assert!(serde_json::from_value::<Warning>(
            serde_json::json!({"kind": "short_ios", "count": 1})
        )
        .is_err());
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
                path: "f.dat".into(),
                knob: "/sys/block/vdb/queue/read_ahead_kb".into(),
                device: "vdb".into(),
            },
            "--readahead on the file f.dat: a file has no read-ahead of its own; this sets /sys/block/vdb/queue/read_ahead_kb of vdb, the device under its file system, which every file on vdb shares for the run",
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
            UnsplitByHugePages {
                bs: 1 << 20,
                device: "loop0".into(),
                max_segments: 128,
                segments_bytes: 512 << 10,
            },
            "loop0 takes each 1.0 MiB I/O whole because our buffers are in huge pages; from 4 KiB-page buffers (fio's and dd's unless told otherwise) its queue (max_segments 128) splits it into requests of 512.0 KiB, and other tools measure less: compare with fio's --iomem=mmaphuge (--print-fio says how), or run with --hugepages off",
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
            LiveThreadUnstarted {
                error: "Resource temporarily unavailable (os error 11)".into(),
            },
            "cannot start the live stream's thread: Resource temporarily unavailable (os error 11)",
        );
        says(
            IologCut {
                path: "log".into(),
                missing: 7,
            },
            "the iolog log stops short: 7 I/Os issued after its buffer filled are not in it (it holds 4Mi I/Os over all workers; give a shorter run or fewer I/Os to log them all)",
        );
        says(
            FioLogCut { missing: 3 },
            "the per-I/O fio logs stop short: 3 I/Os completed after the records reserved for them filled are not in them (1Mi I/Os over all workers; give a shorter run, or log_avg_msec for a line per interval)",
        );
        says(
            LiveCollectorBehind {
                seconds_lost: 2,
                histograms_lost: 1,
            },
            "the live collector fell behind the workers: 2 worker second(s) lost, 1 without percentiles",
        );
        says(
            SettingHeldByOtherRun {
                path: "/dev/loop0".into(),
                setting: "/sys/devices/virtual/block/loop0/queue/read_ahead_kb".into(),
                own: "2560".into(),
                in_force: Some("1024".into()),
                pid: "4242".into(),
                killed: false,
            },
            "/dev/loop0: /sys/devices/virtual/block/loop0/queue/read_ahead_kb is held by another stripebench run (PID 4242, running now): it was 1024 during this run, the device's own is 2560, so these figures are under that run's setting, not the device's",
        );
        says(
            SettingHeldByOtherRun {
                path: "/dev/md0".into(),
                setting: "/sys/devices/virtual/block/md0/queue/read_ahead_kb".into(),
                own: "128".into(),
                in_force: None,
                pid: "17".into(),
                killed: true,
            },
            "/dev/md0: /sys/devices/virtual/block/md0/queue/read_ahead_kb is left changed by another stripebench run (PID 17, killed: run 'stripebench restore'): it was unreadable during this run, the device's own is 128, so these figures are under that run's setting, not the device's",
        );
        says(
            ForeignIo {
                path: "/dev/loop0".into(),
                device: "loop0".into(),
                read_bytes: Some(1 << 30),
                write_bytes: Some(0),
                tolerance: 14 << 20,
            },
            "/dev/loop0: loop0 did I/O that was not this run's: 1.0 GiB read beyond this run's own bytes (more than the 14.0 MiB tolerance): another process used the device during the run, and these figures share it",
        );
        says(
            ForeignIo {
                path: "f.dat".into(),
                device: "vdb".into(),
                read_bytes: None,
                write_bytes: Some(3 << 20),
                tolerance: 1 << 20,
            },
            "f.dat: vdb did I/O that was not this run's: 3.0 MiB written beyond this run's own bytes (more than the 1.0 MiB tolerance): another process used the device during the run, and these figures share it",
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
            RanAtOnce { runs: 3 },
            "this run went at once with 2 other run(s) of its fio group, its window opened with theirs: its rows are its own workers', but the process's CPU holds the others' time too, and its device counters are set against the bytes of every run at once on that device",
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
            IdleWorkers {
                idle: 64,
                workers: 64,
                seconds: 1.0,
            },
            "64 of 64 worker(s) completed no I/O in the 1.000s window (their first I/O was still in flight when it closed): their rate of 0 is no measurement; raise --duration",
        );
        says(
            BriefWindow {
                seconds: 0.25,
                interrupted: false,
            },
            "the window lasted 250.00ms: rates over a window this short are noise (a second at least, and more for a device with a cache or a variable rate); raise --duration",
        );
        says(
            BriefWindow {
                seconds: 0.5,
                interrupted: true,
            },
            "the window lasted 500.00ms (interrupted): rates over a window this short are noise",
        );
        says(
            FewIos {
                few: 3,
                workers: 4,
                fewest: 12,
            },
            "3 of 4 worker(s) completed fewer than 100 I/Os in the window (the fewest 12): their rates and latency percentiles rest on too few to mean much; raise --duration (or --io-limit, --passes)",
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
            TestBedLeft {
                dir: "/tmp/.stripebench-1".into(),
            },
            "a killed run left its test bed behind (/tmp/.stripebench-1): run 'stripebench restore' to remove it",
        );
        says(
            SettingsLeft {
                settings: 2,
                state: "/run/stripebench".into(),
            },
            "a killed run left 2 setting(s) changed (state in /run/stripebench): run 'stripebench restore'",
        );
        says(
            StateFileRefused {
                why: "/run/stripebench/x.json is not owned by root".into(),
            },
            "/run/stripebench/x.json is not owned by root",
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

    /// Two warnings of each kind that groups, of two subjects, whose
    /// figures differ (the second's larger).
    fn pairs() -> Vec<[Warning; 2]> {
        let mib = 1u64 << 20;
        vec![
            [0, 1].map(|i| IoLimitRoundsUp {
                path: format!("/dev/sd{}", ["b", "c"][i]),
                limit: 1000 + i as u64 * 1000,
                bs: 4096,
            }),
            [0, 1].map(|i| StraddlesChunks {
                path: format!("/dev/md{i}"),
                bs: 96 << 10,
                chunk: (64 << 10) * (1 + i as u64),
            }),
            [0, 1].map(|i| PartialStripe {
                path: format!("/dev/md{i}"),
                bs: 128 << 10,
                members: 3 + i as u64,
                chunk: 64 << 10,
            }),
            [0, 1].map(|i| CacheServedReads {
                path: format!("a{i}.dat"),
                ratio: 0.1 + i as f64 * 0.2,
            }),
            [0, 1].map(|i| CacheKeptWrites {
                path: format!("a{i}.dat"),
                ratio: 0.1 + i as f64 * 0.2,
            }),
            [0, 1].map(|i| AtimeChecked {
                path: format!("/dev/sd{}", ["b", "c"][i]),
            }),
            [0, 1].map(|i| UnbackedDevice {
                path: format!("/dev/loop{i}"),
                layer: "zram".into(),
                what: "holes (never written)".into(),
                empty: mib * (1 + i as u64),
                region: 4 * mib,
                mostly: false,
            }),
            [0, 1].map(|i| ZeroReads {
                path: format!("/dev/loop{i}"),
                sampled: 64,
                zeros: 40 + i as u64,
                stored: None,
            }),
            [0, 1].map(|i| UnwrittenBlocks {
                path: format!("f{i}.dat"),
                unwritten: 12 + i as u64,
                blocks: 64,
            }),
            [0, 1].map(|i| UndeliveredDirectReads {
                path: format!("f{i}.dat"),
                app_read_bytes: 4 * mib,
                device: format!("vd{}", ["b", "c"][i]),
                read_bytes: mib * (1 + i as u64),
                ratio: 0.25 * (1 + i) as f64,
            }),
            [0, 1].map(|i| HolesReadAnyway {
                path: format!("f{i}.dat"),
                empty: mib * (1 + i as u64),
                region: 4 * mib,
                hole_bytes: mib / 2,
                unwritten_bytes: mib / 2 + i as u64 * mib,
            }),
            [0, 1].map(|i| ReadaheadOnFile {
                path: format!("f{i}.dat"),
                knob: "/sys/block/vdb/queue/read_ahead_kb".into(),
                device: "vdb".into(),
            }),
            [0, 1].map(|i| MemoryTarget {
                path: format!("/dev/shm/t{i}"),
                fs: "tmpfs".into(),
                direct: true,
            }),
            [0, 1].map(|i| OversizedRequests {
                bs: mib,
                device: format!("sd{}", ["b", "c"][i]),
                max_sectors_kb: 128 * (1 + i as u64),
                requests: 8 / (1 + i as u64),
            }),
            [0, 1].map(|i| SplitRequests {
                writes: true,
                bs: mib,
                device: format!("loop{i}"),
                avg_bytes: (128 << 10) * (1 + i as u64),
                why: "max_sectors_kb is 128".into(),
            }),
            [0, 1].map(|i| UnsplitByHugePages {
                bs: mib,
                device: format!("loop{i}"),
                max_segments: 128 * (1 + i as u64),
                segments_bytes: (512 << 10) * (1 + i as u64),
            }),
            [0, 1].map(|i| MemberSplitRequests {
                member: format!("sd{}", ["c", "d"][i]),
                device: "md0".into(),
                avg_bytes: (32 << 10) * (1 + i as u64),
                piece: 64 << 10,
                chunk: false,
                why: "no queue limit of the member explains it".into(),
            }),
            [0, 1].map(|i| ScheduleMissed {
                worker: i,
                target: "f.dat".into(),
                asked_iops: 1000.0,
                asked_bytes_per_sec: 4.096e6,
                delivered_iops: 800.0 + i as f64 * 100.0,
                delivered_bytes_per_sec: 3.2e6 + i as f64 * 4e5,
                unserved_ios: 5 + i as u64,
                unserved_oldest_ns: 2_000_000,
                p99_ns: 15_000_000,
                max_ns: 40_000_000 + i as u64 * 1_000_000,
                behind_max_ns: 30_000_000,
                late_ios: 17,
            }),
        ]
    }

    #[test]
    fn each_kind_that_groups_says_its_group_as_it_always_did() {
        // Byte for byte what grouping said when it read the figures back
        // out of the sentences, except the three whose figures differ in
        // unit (1000 B and 2.0 KiB), which that never grouped.
        let said: Vec<String> = pairs()
            .into_iter()
            .map(|p| {
                let g = group(&p);
                assert_eq!(g.len(), 1, "{g:#?}");
                g[0].to_string()
            })
            .collect();
        assert_eq!(
            said,
            [
            "2 targets (/dev/sdb, /dev/sdc): --io-limit 1000 B-2.0 KiB is not a whole number of --bs 4k requests: it rounds up, so each worker moves 4.0 KiB",
            "2 targets (/dev/md0-/dev/md1): --bs 96k is not a multiple of its chunk (64-128k): requests straddle member boundaries",
            "2 targets (/dev/md0-/dev/md1): --bs 128k is smaller than a full stripe (3-4 members x 64k = 192-256k): each sequential request reaches only some members; --bs 192-256k moves full stripes",
            "2 targets (a0.dat-a1.dat): the device delivered 10.0-30.0% of the bytes read: the page cache served the rest, so these figures measure memory, not the device",
            "2 targets (a0.dat-a1.dat): the device received 10.0-30.0% of the bytes written: the page cache merged rewrites or still holds the rest, so 'written to cache' MB/s measures memory; durable MB/s counts only what reached the device",
            "2 targets (/dev/sdb, /dev/sdc): opened without O_NOATIME, which the kernel grants only to the node's owner or to CAP_FOWNER: every read also checks the node's access time, kernel time per I/O (some 40 ns) that a run as root or as the node's owner does not spend",
            "2 targets (/dev/loop0-/dev/loop1): 1.0-2.0 MiB of its 4.0 MiB region (25.0-50.0%) are holes (never written) in zram: they read as zeros without reaching a medium; under half, so the run goes on: its figure mixes the device's reads with memory's",
            "2 targets (/dev/loop0-/dev/loop1): 62-64% of sampled reads (40-41 of 64) returned only zeros: the device answered without reading media: unwritten, trimmed or thin-provisioned blocks (or a medium written with zeros), so the figure is not the device's speed",
            "2 targets (f0.dat-f1.dat): 12-13 of 64 blocks carry no stripebench header: never written with --verify (or with another --bs, --offset or --size)",
            "2 targets (f0.dat-f1.dat): O_DIRECT reads of 4.0 MiB each reached their devices as only 1.0-2.0 MiB (25.0-50.0%): the rest never came from the device, so these figures are not its speed. Likely causes: holes or unwritten extents in a file (read as zeros without I/O), a file system that keeps the data in memory, or a cache in front of the device",
            "2 targets (f0.dat-f1.dat): 1.0-2.0 MiB of each one's 4.0 MiB region (25.0-50.0%) are holes (512.0 KiB never written) and unwritten extents (512.0 KiB-1.5 MiB allocated by fallocate): they read as zeros without any I/O to a device; read anyway (--allow-holes): those reads measure memory, not the device",
            "--readahead on 2 targets (f0.dat-f1.dat), files: a file has no read-ahead of its own; this sets /sys/block/vdb/queue/read_ahead_kb of vdb, the device under their file system, which every file on vdb shares for the run",
            "2 targets (/dev/shm/t0-/dev/shm/t1) are on tmpfs: the targets are memory, not devices (tmpfs takes O_DIRECT but serves it from RAM like any other I/O; no device counters), so these figures measure memory",
            "2 devices (sdb, sdc): --bs 1.0 MiB is larger than one request to them can carry (max_sectors_kb 128-256): each I/O reaches each of them as 4-8 requests",
            "O_DIRECT writes of 1.0 MiB reached 2 devices (loop0-loop1) as requests of 128.0-256.0 KiB on average: max_sectors_kb is 128",
            "2 devices (loop0-loop1) take each 1.0 MiB I/O whole because our buffers are in huge pages; from 4 KiB-page buffers (fio's and dd's unless told otherwise) its queue (max_segments 128-256) splits it into requests of 512.0 KiB-1.0 MiB, and other tools measure less: compare with fio's --iomem=mmaphuge (--print-fio says how), or run with --hugepages off",
            "2 members (sdc, sdd) of md0 received O_DIRECT reads as requests of 32.0-64.0 KiB on average, for pieces of 64.0 KiB: no queue limit of the member explains it",
            "2 workers (w0-w1) on f.dat could not keep their schedule: asked 1000 IOPS (4.1 MB/s), delivered 800-900 IOPS (3.2-3.6 MB/s); 5-6 I/O(s) due in the window not done by its end (the oldest due 2.00ms before it); latency from the due time, those counted at least to the window's end: p99 15.00ms, max 40.00-41.00ms; issued up to 30.00ms after due (17 more than 1 ms late)",
            ]
        );
    }

    #[test]
    fn grouping_never_ranges_a_number_inside_a_name() {
        // Two loop devices over backing files /tmp/1.img and /tmp/2.img:
        // their words differ (the file's name), so they are two lines, not
        // one that names a file "/tmp/1-2.img" that does not exist.
        let unbacked = |i: u64| UnbackedDevice {
            path: format!("/dev/loop{i}"),
            layer: format!("its backing file /tmp/{i}.img"),
            what: "holes (never written)".into(),
            empty: 1 << 20,
            region: 4 << 20,
            mostly: false,
        };
        let lines = group(&[unbacked(1), unbacked(2)]);
        assert_eq!(lines, [unbacked(1), unbacked(2)]);
        let stored = |i: u64| ZeroReads {
            path: format!("/dev/loop{i}"),
            sampled: 64,
            zeros: 64,
            stored: Some(format!("its backing file /tmp/{i}.img")),
        };
        let lines = group(&[stored(1), stored(2)]);
        assert_eq!(lines, [stored(1), stored(2)]);
        // The same file for both: one line.
        let same = |i: u64| {
            let mut w = unbacked(i);
            if let UnbackedDevice { layer, .. } = &mut w {
                *layer = "its backing file /tmp/1.img".into();
            }
            w
        };
        assert_eq!(
            group(&[same(1), same(2)])[0].to_string(),
            "2 targets (/dev/loop1-/dev/loop2): 1.0 MiB of its 4.0 MiB region (25.0%) are holes (never written) in its backing file /tmp/1.img: they read as zeros without reaching a medium; under half, so the run goes on: its figure mixes the device's reads with memory's"
        );
    }

    #[test]
    fn names_compact_into_runs_of_consecutive_numbers() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let loops: Vec<String> = (0..64).map(|i| format!("loop{i}")).collect();
        assert_eq!(compact(&loops), "loop0-loop63");
        assert_eq!(
            compact(&names(&["loop7", "loop0", "loop1", "loop2", "loop3"])),
            "loop0-loop3, loop7"
        );
        assert_eq!(
            compact(&names(&["/dev/loop10", "/dev/loop9", "/dev/sdb"])),
            "/dev/sdb, /dev/loop9-/dev/loop10"
        );
        assert_eq!(
            compact(&names(&["f1.dat", "f2.dat", "g3.dat"])),
            "f1.dat-f2.dat, g3.dat"
        );
        // A leading zero is part of the name, not a number to count on from.
        assert_eq!(compact(&names(&["d01", "d02"])), "d01, d02");
        let odd: Vec<String> = (0..20).map(|i| format!("sd{}", i * 2)).collect();
        assert_eq!(
            compact(&odd),
            "sd0, sd2, sd4, sd6, sd8, sd10, sd12, sd14, and 12 more"
        );
        // Seen: 256 targets f000-f255 said "(f000, ..., f007, and 93 more)":
        // 93 entries (f008-f099 one each, f100-f255 one run), 248 names.
        let many: Vec<String> = (0..256).map(|i| format!("f{i:03}")).collect();
        assert!(
            compact(&many).ends_with("f007, and 248 more"),
            "{}",
            compact(&many)
        );
    }

    #[test]
    fn many_devices_same_warning_is_one_line() {
        let over = |i: usize| OversizedRequests {
            bs: 1 << 20,
            device: format!("zram{i}"),
            max_sectors_kb: 128,
            requests: 8,
        };
        let mut ws: Vec<Warning> = (1..=64).map(over).collect();
        ws.insert(
            1,
            SharedCpus {
                workers: 256,
                cpus: 2,
            },
        );
        let lines = group(&ws);
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert_eq!(
            lines[0].to_string(),
            "64 devices (zram1-zram64): --bs 1.0 MiB is larger than one request to them can carry (max_sectors_kb 128): each I/O reaches each of them as 8 requests"
        );
        assert!(matches!(&lines[0], Grouped { members, .. } if members.len() == 64));
        // In a document the group is its line, with each member beside it.
        let v = serde_json::to_value(&lines[0]).unwrap();
        assert_eq!(v["text"], lines[0].to_string());
        assert_eq!(v["kind"], "grouped");
        assert_eq!(v["members"].as_array().map(Vec::len), Some(64));
        assert_eq!(v["members"][0]["kind"], "oversized_requests");
        let back: Warning = serde_json::from_value(v).unwrap();
        assert!(
            matches!(&back, Grouped { members, .. } if members.len() == 64 && members[0] == ws[0])
        );
        assert_eq!(back, lines[0]);
        // A warning about no single subject stays as it was.
        assert_eq!(lines[1].to_string(), ws[1].to_string());
    }

    #[test]
    fn figures_that_differ_become_their_range() {
        let missed = |worker: usize, delivered: f64| ScheduleMissed {
            worker,
            target: "f2.dat".into(),
            asked_iops: 763.0,
            asked_bytes_per_sec: 50e6,
            delivered_iops: delivered,
            delivered_bytes_per_sec: delivered * 65536.0,
            unserved_ios: 0,
            unserved_oldest_ns: 0,
            p99_ns: 15_000_000,
            max_ns: 40_000_000,
            behind_max_ns: 30_000_000,
            late_ios: 17,
        };
        let ws: Vec<Warning> = (0..200).map(|w| missed(w, 66.0 + (w % 3) as f64)).collect();
        let lines = group(&ws);
        assert_eq!(lines.len(), 1, "{lines:#?}");
        assert_eq!(
            lines[0].to_string(),
            "200 workers (w0-w199) on f2.dat could not keep their schedule: asked 763 IOPS (50.0 MB/s), delivered 66-68 IOPS (4.3-4.5 MB/s); latency from the due time: p99 15.00ms, max 40.00ms; issued up to 30.00ms after due (17 more than 1 ms late)"
        );
        // Other targets' workers are other lines.
        let mut two = ws[..2].to_vec();
        if let ScheduleMissed { target, .. } = &mut two[1] {
            *target = "f3.dat".into();
        }
        assert_eq!(group(&two).len(), 2);
    }

    #[test]
    fn a_warning_alone_of_its_kind_says_its_own_sentence() {
        let kept = |p: &str, ratio| CacheKeptWrites {
            path: p.into(),
            ratio,
        };
        let ws = [kept("a", 0.2), Text("a: read back".into()), kept("b", 0.3)];
        let lines: Vec<String> = group(&ws).iter().map(|w| w.to_string()).collect();
        assert_eq!(
            lines,
            [
                "2 targets (a, b): the device received 20.0-30.0% of the bytes written: the page cache merged rewrites or still holds the rest, so 'written to cache' MB/s measures memory; durable MB/s counts only what reached the device".to_string(),
                "a: read back".to_string()
            ]
        );
        assert_eq!(group(&ws[..2]), ws[..2]);
        assert!(group(&[]).is_empty());
        // Every kind that groups says its plural sentence.
        let holes = |p: &str| HolesReadAnyway {
            path: p.into(),
            empty: 1 << 20,
            region: 4 << 20,
            hole_bytes: 1 << 20,
            unwritten_bytes: 0,
        };
        assert_eq!(
            group(&[holes("f1"), holes("f2")])[0].to_string(),
            "2 targets (f1-f2): 1.0 MiB of each one's 4.0 MiB region (25.0%) are holes (never written): they read as zeros without any I/O to a device; read anyway (--allow-holes): those reads measure memory, not the device"
        );
        let mem = |p: &str| MemoryTarget {
            path: p.into(),
            fs: "tmpfs".into(),
            direct: false,
        };
        assert_eq!(
            group(&[mem("t1"), mem("t2")])[0].to_string(),
            "2 targets (t1-t2) are on tmpfs: the targets are memory, not devices (no device counters), so these figures measure memory"
        );
        let atime = |p: &str| AtimeChecked { path: p.into() };
        says(
            atime("/dev/sdb"),
            "/dev/sdb: opened without O_NOATIME, which the kernel grants only to the node's owner or to CAP_FOWNER: every read also checks the node's access time, kernel time per I/O (some 40 ns) that a run as root or as the node's owner does not spend",
        );
        assert_eq!(
            group(&[atime("/dev/sdb"), atime("/dev/sdc")])[0].to_string(),
            "2 targets (/dev/sdb, /dev/sdc): opened without O_NOATIME, which the kernel grants only to the node's owner or to CAP_FOWNER: every read also checks the node's access time, kernel time per I/O (some 40 ns) that a run as root or as the node's owner does not spend"
        );
        let split = |d: &str| SplitRequests {
            writes: false,
            bs: 1 << 20,
            device: d.into(),
            avg_bytes: 128 << 10,
            why: "max_sectors_kb is 128".into(),
        };
        assert_eq!(
            group(&[split("loop0"), split("loop1")])[0].to_string(),
            "O_DIRECT reads of 1.0 MiB reached 2 devices (loop0-loop1) as requests of 128.0 KiB on average: max_sectors_kb is 128"
        );
        let member = |m: &str| MemberSplitRequests {
            member: m.into(),
            device: "md0".into(),
            avg_bytes: 32 << 10,
            piece: 64 << 10,
            chunk: true,
            why: "no queue limit of the member explains it".into(),
        };
        assert_eq!(
            group(&[member("sdc"), member("sdd")])[0].to_string(),
            "2 members (sdc, sdd) of md0 received O_DIRECT reads as requests of 32.0 KiB on average, for pieces of 64.0 KiB (the chunk): no queue limit of the member explains it"
        );
    }
}
