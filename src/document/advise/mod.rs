//! `stripebench advise VOLUME`: what is wrong with an array, from what its
//! stack exposes in sysfs (`device::survey`) and from measurements, each
//! finding with its evidence, what it means, the command that fixes it (and
//! what makes the fix persist) and the measured or estimated gain.
//!
//! Here: the findings document (kind `findings`), the battery planner (the
//! topology decides which checks apply; each one that does not is skipped
//! with its reason; the budget is split between the measured ones) and the
//! checks themselves (`checks`), all functions of the topology, the survey
//! and the figures the command measured. No I/O.

mod checks;
pub mod shared_path;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

// The budget's shares and the window bounds: the pacing's judgement,
// analysis/'s; the plan here applies them to the checks that apply.
use crate::analysis::advise::{
    MIN_WINDOW_SEC, QUEUE_SHARE, READAHEAD_ALONE_SHARE, READAHEAD_SHARE, REQUEST_SHARE,
    RUN_OVERHEAD_SEC, SLOW_SHARE, WRITE_SHARE,
};
use crate::device::survey::Survey;
use crate::device::topology::{level::Geometry, Device, Topology};
use crate::document::run::{ToolInfo, SCHEMA_VERSION};

pub use checks::{
    buffered_direct, measured_splits, member_fix, member_fix_gain, queue_knee, readahead_finding,
    slow_members, state_words, static_findings, writes_findings, Split,
};

/// How much a finding matters, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing to fix.
    Info,
    /// A small or uncertain loss.
    Low,
    /// A loss the fix recovers.
    Medium,
    /// The array runs far below what it can, or is at risk.
    High,
}

impl Severity {
    pub const ALL: [Severity; 4] = [
        Severity::Info,
        Severity::Low,
        Severity::Medium,
        Severity::High,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }

    pub fn parse(text: &str) -> Option<Severity> {
        Severity::ALL.into_iter().find(|s| s.name() == text)
    }
}

impl From<crate::analysis::advise::Severity> for Severity {
    fn from(s: crate::analysis::advise::Severity) -> Severity {
        use crate::analysis::advise::Severity as S;
        match s {
            S::Info => Severity::Info,
            S::Low => Severity::Low,
            S::Medium => Severity::Medium,
            S::High => Severity::High,
        }
    }
}

/// What a fix gains, measured (before and after figures) or estimated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gain {
    /// What was measured: "buffered sequential reads of /dev/md0, 1 thread".
    pub what: String,
    pub before_bytes_per_sec: Option<f64>,
    pub after_bytes_per_sec: Option<f64>,
    /// after ÷ before − 1, in percent; null when not measured.
    pub pct: Option<f64>,
    pub measured: bool,
}

/// One thing found wrong (or worth knowing) about the array.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable across versions: scripts key on it (`readahead-low`,
    /// `request-split`, `member-mismatch`, ...).
    pub id: String,
    /// The check that found it (`readahead`, `request-limits`, ...).
    pub check: String,
    pub severity: Severity,
    /// The kernel names of the devices it is about.
    pub devices: Vec<String>,
    /// One line: what is wrong.
    pub title: String,
    /// What was read or measured, one fact a line.
    pub evidence: Vec<String>,
    /// What it does to the array.
    pub meaning: String,
    /// The commands that fix it now (empty when no command does).
    pub fix: Vec<String>,
    /// What makes the fix survive a reboot (a udev rule, ...).
    pub persist: Vec<String>,
    pub gain: Option<Gain>,
    /// The fix as sysfs writes, when it is only that and each is one
    /// `--apply` may make and `restore` put back (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<Setting>,
}

/// One sysfs write of a fix: `echo VALUE > /sys/block/DEVICE/ATTRIBUTE`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    /// The kernel name of the device (md0, loop1).
    pub device: String,
    /// Under the device's sysfs directory: `queue/read_ahead_kb`,
    /// `queue/max_sectors_kb`, `md/stripe_cache_size`.
    pub attribute: String,
    pub value: String,
}

impl Setting {
    pub fn new(device: &str, attribute: &str, value: impl ToString) -> Setting {
        Setting {
            device: device.into(),
            attribute: attribute.into(),
            value: value.to_string(),
        }
    }

    /// Its sysfs file under `sys` (`/sys` outside tests).
    pub fn path(&self, sys: &std::path::Path) -> std::path::PathBuf {
        sys.join("block").join(&self.device).join(&self.attribute)
    }

    /// Whether `--apply` may make it: an attribute `restore` puts back,
    /// with a value it would write (a number; a scheduler's name).
    pub fn appliable(&self) -> bool {
        crate::device::sysattr::RESTORABLE.contains(&self.attribute.as_str())
            && crate::device::sysattr::value_ok(std::path::Path::new(&self.attribute), &self.value)
    }
}

/// Whether a check ran, and why not when it did not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckStatus {
    pub id: String,
    pub title: String,
    /// `ran`, `skipped`.
    pub status: String,
    /// What it did, or why it was skipped.
    pub detail: String,
    /// Seconds of the budget it was given (0 for checks that only read sysfs).
    pub budget_sec: f64,
}

/// One measured point: a setting and the rate it gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub check: String,
    /// "read_ahead_kb=1024".
    pub setting: String,
    pub bytes_per_sec: f64,
    pub seconds: f64,
    /// The run was stopped (a signal) or failed: its figure is not used.
    pub partial: bool,
    /// Measured at the array's own settings (not at a value the check set
    /// for the run): what `--apply` compares before and after.
    #[serde(default)]
    pub current: bool,
    /// CPU seconds (user + system) per 10^9 bytes the run moved.
    #[serde(default)]
    pub cpu_sec_per_gb: Option<f64>,
    /// Completed I/Os per second, and the 99th percentile latency (ns).
    #[serde(default)]
    pub iops: Option<f64>,
    #[serde(default)]
    pub p99_ns: Option<u64>,
    /// Bytes the run moved (read or written).
    #[serde(default)]
    pub bytes: Option<u64>,
    /// What the volume's members read meanwhile, by their own counters
    /// (those that keep statistics): during writes, read-modify-write.
    #[serde(default)]
    pub members_read_bytes: Option<u64>,
}

impl Measurement {
    /// A run's measurement, from its document: its total's rate, IOPS,
    /// p99 and CPU per GB over its window; partial when it was stopped,
    /// had errors or completed no I/O.
    pub fn of(
        check: &str,
        setting: String,
        doc: &crate::document::run::RunDocument,
        current: bool,
    ) -> Measurement {
        let t = &doc.total.figures;
        Measurement {
            check: check.into(),
            setting,
            bytes_per_sec: t.bytes_per_sec,
            seconds: doc.window.seconds,
            partial: doc.interrupted || t.errors > 0 || t.ios == 0,
            current,
            cpu_sec_per_gb: doc.total.cpu_sec_per_gb(),
            iops: Some(t.iops),
            p99_ns: t.latency_ns.map(|l| l.p99),
            bytes: Some(t.bytes),
            members_read_bytes: {
                let m: Vec<u64> = doc
                    .targets
                    .iter()
                    .filter_map(|t| t.device.as_ref())
                    .filter(|d| d.stats)
                    .flat_map(|d| d.members.iter().filter(|m| m.stats).map(|m| m.read_bytes))
                    .collect();
                (!m.is_empty()).then(|| m.iter().sum())
            },
        }
    }
}

/// What `advise --apply` did: the settings it changed (kept until
/// `stripebench restore`), the findings before them, and what was measured
/// at the array's settings before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Applied {
    pub changes: Vec<Change>,
    /// The first battery's findings, worst first (the document's own
    /// `findings` are the second battery's, after the changes).
    pub before: Vec<Finding>,
    pub compared: Vec<BeforeAfter>,
    /// Each finding above info whose fix was not applied, and why.
    pub not_applied: Vec<String>,
}

/// One setting `--apply` changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The finding it fixes.
    pub finding: String,
    pub device: String,
    pub attribute: String,
    pub old: String,
    pub new: String,
}

/// One check's figure at the array's settings, before and after `--apply`
/// (the median of its runs at those settings that finished whole).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BeforeAfter {
    pub check: String,
    pub before_bytes_per_sec: Option<f64>,
    pub after_bytes_per_sec: Option<f64>,
}

/// The settings `--apply` makes: every appliable setting of each finding
/// above info, one per attribute of a device (the worst finding's first);
/// and each finding above info it leaves, with why.
pub fn to_apply(findings: &[Finding]) -> (Vec<(String, Setting)>, Vec<String>) {
    let mut out: Vec<(String, Setting)> = Vec::new();
    let mut left = Vec::new();
    for f in findings.iter().filter(|f| f.severity > Severity::Info) {
        let ok: Vec<&Setting> = f.settings.iter().filter(|s| s.appliable()).collect();
        if ok.is_empty() {
            left.push(format!(
                "{} ({}): {}",
                f.id,
                f.devices.join(", "),
                if f.settings.is_empty() {
                    "its fix is not a setting --apply makes: do it by hand"
                } else {
                    "its setting is not one restore can put back: do it by hand"
                }
            ));
            continue;
        }
        for s in ok {
            if !out
                .iter()
                .any(|(_, o)| o.device == s.device && o.attribute == s.attribute)
            {
                out.push((f.id.clone(), s.clone()));
            }
        }
    }
    (out, left)
}

/// Each check measured in both batteries: its figure at the array's
/// settings before and after.
pub fn compared(before: &[Measurement], after: &[Measurement]) -> Vec<BeforeAfter> {
    let at = |ms: &[Measurement], check: &str| {
        let r: Vec<f64> = ms
            .iter()
            .filter(|m| m.check == check && m.current && !m.partial)
            .map(|m| m.bytes_per_sec)
            .collect();
        (!r.is_empty()).then(|| crate::analysis::summary::median(r))
    };
    let mut checks: Vec<&str> = before.iter().map(|m| m.check.as_str()).collect();
    checks.dedup();
    checks
        .into_iter()
        .filter(|c| after.iter().any(|m| m.check == *c))
        .map(|c| BeforeAfter {
            check: c.into(),
            before_bytes_per_sec: at(before, c),
            after_bytes_per_sec: at(after, c),
        })
        .collect()
}

/// `stripebench advise --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindingsDocument {
    pub schema_version: u32,
    /// Always "findings".
    pub kind: String,
    pub tool: ToolInfo,
    /// The volume as the user named it.
    pub volume: String,
    /// Its stack, as `topology` shows it.
    #[serde(with = "crate::document::facts::TopologyDef")]
    pub topology: Topology,
    /// The array's state, said before anything else: "clean", "degraded:
    /// 1 of 4 members missing", "resync in progress (34%)".
    pub state: Vec<String>,
    pub quick: bool,
    pub budget_sec: f64,
    pub elapsed_sec: f64,
    pub interrupted: bool,
    pub checks: Vec<CheckStatus>,
    /// Worst first.
    pub findings: Vec<Finding>,
    pub measurements: Vec<Measurement>,
    /// compare's slow-member verdict over the members read together, when
    /// the slow-members check ran.
    #[serde(default)]
    pub verdict: Option<crate::document::compare::Verdict>,
    /// `--apply`: what it changed, and the findings and figures before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<Applied>,
}

impl FindingsDocument {
    /// The worst severity found, if anything was.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// Whether any finding is at `at` or worse.
    pub fn fails(&self, at: Option<Severity>) -> bool {
        at.is_some_and(|a| self.worst().is_some_and(|w| w >= a))
    }
}

/// The document, findings sorted: the array's state first (a degraded or
/// resyncing array makes every other figure low, so it is said before
/// any of them, whatever its severity), then worst first, then by check
/// and device.
#[allow(clippy::too_many_arguments)]
pub fn assemble(
    volume: String,
    topology: Topology,
    survey: &Survey,
    battery: &Battery,
    mut findings: Vec<Finding>,
    measurements: Vec<Measurement>,
    verdict: Option<crate::document::compare::Verdict>,
    elapsed_sec: f64,
    interrupted: bool,
) -> FindingsDocument {
    findings.sort_by(|a, b| {
        (a.check != "state")
            .cmp(&(b.check != "state"))
            .then(b.severity.cmp(&a.severity))
            .then(a.check.cmp(&b.check))
            .then(a.devices.cmp(&b.devices))
    });
    FindingsDocument {
        schema_version: SCHEMA_VERSION,
        kind: "findings".into(),
        tool: ToolInfo::this(),
        volume,
        state: state_words(&topology, survey),
        topology,
        quick: battery.quick,
        budget_sec: battery.budget_sec,
        elapsed_sec,
        interrupted,
        checks: battery.checks.clone(),
        findings,
        measurements,
        verdict,
        applied: None,
    }
}

/// Adds the slow-member findings to `findings`: a slow member that a
/// static check already found at fault (its request limits, another
/// scheduler, a layer in front of it) gets the measurement as that
/// finding's evidence, the measured effect of the same fault, instead of a
/// second finding.
pub fn add_slow(findings: &mut Vec<Finding>, slow: Vec<Finding>) {
    for s in slow {
        let known = findings.iter_mut().find(|f| {
            f.severity > Severity::Info && f.check != "state" && f.devices.contains(&s.devices[0])
        });
        match known {
            Some(f) => {
                f.evidence.push(format!("measured: {}", s.title));
                f.evidence.extend(s.evidence.into_iter().take(2));
            }
            None => findings.push(s),
        }
    }
}

/// The volume's striping layer (the first going down through layers of
/// one member) and its geometry, when it has one with a known chunk.
pub fn striping(topo: &Topology) -> Option<(&Device, Geometry)> {
    let mut d = &topo.root;
    loop {
        if d.is_striped() {
            return d.geometry().map(|g| (d, g));
        }
        match d.members.as_slice() {
            [only] => d = only,
            _ => return None,
        }
    }
}

/// What the battery was asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    pub budget_sec: f64,
    pub quick: bool,
    pub allow_destructive: bool,
    /// The volume is a block device (a mount point's read-ahead is its
    /// file system's, and is not measured here).
    pub block_device: bool,
}

/// The read-ahead measurement's plan: the values, and each run's length.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadaheadPlan {
    /// The volume's kernel name (whose `queue/read_ahead_kb` is set).
    pub device: String,
    pub current_kb: u64,
    pub full_stripe_kb: u64,
    /// The values to measure, ascending, the current one among them.
    pub values_kb: Vec<u64>,
    pub seconds_each: f64,
}

/// The slow-member measurement's plan: every stripe member read at once
/// (O_DIRECT, one worker each), `repeats` times.
#[derive(Debug, Clone, PartialEq)]
pub struct SlowPlan {
    /// The members' device nodes, in stripe order.
    pub members: Vec<String>,
    pub repeats: usize,
    pub seconds_each: f64,
}

/// The request-size measurement's plan: O_DIRECT reads of the volume, one
/// full stripe each, for `seconds`; the members' counters say what size of
/// request each received for its chunk-sized pieces.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestPlan {
    pub bs: u64,
    pub chunk: u64,
    pub seconds: f64,
}

/// Which checks run, which are skipped and why, and the budget of each.
#[derive(Debug, Clone, PartialEq)]
pub struct Battery {
    pub quick: bool,
    pub budget_sec: f64,
    pub checks: Vec<CheckStatus>,
    pub readahead: Option<ReadaheadPlan>,
    pub slow: Option<SlowPlan>,
    pub requests: Option<RequestPlan>,
    pub queue: Option<QueuePlan>,
    pub writes: Option<WritePlan>,
}

/// The write runs' plan (parity RAID, --allow-destructive): O_DIRECT
/// full-stripe sequential writes at the array's stripe cache and, when it
/// is below mdadm's rule, at the fix's value; and chunk-sized random
/// writes (sub-stripe), each `seconds_each`, the members' counters read.
#[derive(Debug, Clone, PartialEq)]
pub struct WritePlan {
    pub full_stripe: u64,
    pub chunk: u64,
    /// The stripe cache values the full-stripe writes run at: the array's,
    /// then the fix's (when it differs).
    pub stripe_caches: Vec<u64>,
    pub seconds_each: f64,
}

impl WritePlan {
    /// The runs it makes.
    pub fn runs(&self) -> usize {
        self.stripe_caches.len().max(1) + 1
    }
}

/// The queue-depth measurement's plan: O_DIRECT random 4 KiB reads of the
/// volume by one worker at each depth, `seconds_each`.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuePlan {
    pub depths: Vec<u32>,
    pub seconds_each: f64,
}

impl Battery {
    /// The measured runs it plans.
    pub fn runs(&self) -> usize {
        self.readahead.as_ref().map_or(0, |p| p.values_kb.len())
            + usize::from(self.requests.is_some())
            + self.slow.as_ref().map_or(0, |p| p.repeats)
            + self.queue.as_ref().map_or(0, |q| q.depths.len())
            + self.writes.as_ref().map_or(0, WritePlan::runs)
    }

    /// The planned windows of its runs, all told (no overheads).
    pub fn windows_sec(&self) -> f64 {
        self.readahead
            .as_ref()
            .map_or(0.0, |p| p.seconds_each * p.values_kb.len() as f64)
            + self.requests.as_ref().map_or(0.0, |r| r.seconds)
            + self
                .slow
                .as_ref()
                .map_or(0.0, |p| p.seconds_each * p.repeats as f64)
            + self
                .queue
                .as_ref()
                .map_or(0.0, |q| q.seconds_each * q.depths.len() as f64)
            + self
                .writes
                .as_ref()
                .map_or(0.0, |w| w.seconds_each * w.runs() as f64)
    }

    /// Seconds the measured checks take, all told (windows and overheads).
    pub fn planned_sec(&self) -> f64 {
        self.checks.iter().map(|c| c.budget_sec).sum()
    }
}

/// Err when the battery this volume needs does not fit in the budget:
/// each measured run has a window of at least [`MIN_WINDOW_SEC`] beside
/// its overhead, so a short budget (`--budget 1ms`) was overrun, silently,
/// by as much as the whole battery. The message names the least budget (in
/// whole seconds) that fits, and --quick.
pub fn check_budget(topo: &Topology, survey: &Survey, o: &Options) -> Result<(), String> {
    let fits = |b: f64| {
        plan(
            topo,
            survey,
            &Options {
                budget_sec: b,
                ..*o
            },
        )
        .planned_sec()
            <= b + 1e-9
    };
    if fits(o.budget_sec) {
        return Ok(());
    }
    // The battery's length grows slower than the budget (its shares add up
    // to less than 1): the first whole second that fits is the least.
    let least = (1..=86_400u32).map(f64::from).find(|&b| fits(b));
    Err(match least {
        Some(b) => format!(
            "--budget {:?}: the checks {} needs take {:.0} s at least (each measured run has a window of {MIN_WINDOW_SEC:.0} s or more, and {RUN_OVERHEAD_SEC:.0} s to set up): give --budget {b:.0}s or more, or --quick to measure nothing",
            std::time::Duration::from_secs_f64(o.budget_sec),
            topo.root.name,
            plan(topo, survey, &Options { budget_sec: 0.0, ..*o }).planned_sec()
        ),
        None => format!("--budget: the checks {} needs do not fit in a day: use --quick", topo.root.name),
    })
}

/// Err when a device of the stack has no medium (size 0: a loop device with
/// no backing file, a drive with no disc): every check of it is empty, and
/// "findings: none" said of it read as a clean bill.
pub fn check_medium(topo: &Topology) -> Result<(), String> {
    match topo
        .leaves()
        .into_iter()
        .find(|d| d.leaf.as_ref().is_some_and(|l| l.size == 0))
    {
        Some(d) => Err(format!(
            "{} has no medium (its size is 0: a loop device with no backing file, a drive with no disc): nothing to advise on",
            d.name
        )),
        None => Ok(()),
    }
}

/// The runs of each member's figure: compare's default `--repeat`.
pub const SLOW_REPEATS: usize = 3;
/// The I/Os in flight the queue-depth check measures.
pub const QUEUE_DEPTHS: [u32; 4] = [1, 4, 16, 64];

/// Plans the battery from the topology and the survey.
pub fn plan(topo: &Topology, survey: &Survey, o: &Options) -> Battery {
    let stripe = striping(topo);
    let members = topo.stripe_members();
    // Every member read at once, each judged against the others by
    // compare's rule: it needs three members for a median to mean anything.
    let slow_why = slow_why(&members, o);
    let slow = slow_why.is_ok().then(|| SlowPlan {
        members: members.iter().map(|m| m.path.clone()).collect(),
        repeats: SLOW_REPEATS,
        seconds_each: (o.budget_sec * SLOW_SHARE / SLOW_REPEATS as f64 - RUN_OVERHEAD_SEC)
            .max(MIN_WINDOW_SEC),
    });
    let ra_share = if slow.is_some() {
        READAHEAD_SHARE
    } else {
        READAHEAD_ALONE_SHARE
    };
    let mut checks = Vec::new();
    let mut add = |id: &str, title: &str, ran: Result<String, String>, budget: f64| {
        checks.push(check_status(id, title, ran, budget));
    };
    add(
        "state",
        "array state (degraded, resync)",
        if has_md(topo, &|_| true) {
            Ok("md/degraded, md/sync_action, md/array_state of every md array".into())
        } else {
            Err("no md array in the stack (dm and btrfs state is not read)".into())
        },
        0.0,
    );
    let (readahead, ra_detail) = readahead_plan(topo, survey, &stripe, o, ra_share);
    let ra_budget = readahead.as_ref().map_or(0.0, |p| {
        (p.seconds_each + RUN_OVERHEAD_SEC) * p.values_kb.len() as f64
    });
    add(
        "readahead",
        "read-ahead against the full stripe",
        ra_detail,
        ra_budget,
    );
    add(
        "alignment",
        "alignment of every layer",
        Ok("partition starts, md data offsets, dm table offsets (an LVM volume's include its PV's pe_start) and alignment_offset against 4 KiB, the chunk and the full stripe; the file system's stripe hints (ext4 stride and stripe_width, XFS sunit and swidth) against the chunk and the full stripe".into()),
        0.0,
    );
    let requests = requests_plan(&stripe, o);
    add(
        "request-limits",
        "members' request limits against the chunk",
        requests_detail(&stripe, &requests, members.len()),
        requests
            .as_ref()
            .map_or(0.0, |r| r.seconds + RUN_OVERHEAD_SEC),
    );
    add(
        "mismatch",
        "members that differ",
        if members.len() >= 2 {
            Ok(format!(
                "the stack, scheduler, nr_requests, write cache, wbt_lat_usec, rotational, model, firmware, NUMA node and controller (PCI function) of {} members",
                members.len()
            ))
        } else {
            Err("fewer than two members".into())
        },
        0.0,
    );
    add(
        "parity",
        "parity RAID tunables",
        if has_md(topo, &|d| d.geometry().is_some_and(|g| g.has_parity())) {
            Ok("stripe_cache_size against 4 × chunk / 4096 + 1, group_thread_cnt".into())
        } else {
            Err("no md raid4/5/6 in the stack".into())
        },
        0.0,
    );
    add("crypt", "dm-crypt's workqueues", crypt_detail(survey), 0.0);
    add("numa", "NUMA placement", numa_detail(survey), 0.0);
    let slow_budget = slow.as_ref().map_or(0.0, |p| {
        (p.seconds_each + RUN_OVERHEAD_SEC) * p.repeats as f64
    });
    add(
        "slow-members",
        "slow members",
        slow_detail(&slow, slow_why),
        slow_budget,
    );
    let q_each = o.budget_sec * QUEUE_SHARE / QUEUE_DEPTHS.len() as f64 - RUN_OVERHEAD_SEC;
    let queue_why = queue_why(o, q_each);
    let queue = queue_why.is_ok().then(|| QueuePlan {
        depths: QUEUE_DEPTHS.to_vec(),
        seconds_each: q_each,
    });
    add(
        "queue-depth",
        "the volume's queue-depth knee",
        queue_detail(&queue, queue_why),
        queue.as_ref().map_or(0.0, |q| {
            (q.seconds_each + RUN_OVERHEAD_SEC) * q.depths.len() as f64
        }),
    );
    add(
        "buffered-direct",
        "one buffered reader against O_DIRECT per member",
        match (&readahead, &slow) {
            (Some(_), Some(_)) => Ok("one buffered thread on the volume (the read-ahead run at the array's own value) against one O_DIRECT worker per member (the slow-member runs): MB/s and CPU seconds per GB, from runs already made".into()),
            (None, _) => Err("the read-ahead runs were not made: no buffered figure".into()),
            (_, None) => Err("the slow-member runs were not made: no O_DIRECT figure".into()),
        },
        0.0,
    );
    let parity_md = parity_array(topo, survey);
    let writes_why = write_plan(&stripe, &parity_md, o);
    let writes = writes_why.as_ref().ok().cloned();
    add(
        "writes",
        "write checks (parity RAID)",
        writes_detail(&writes_why),
        writes.as_ref().map_or(0.0, |w| {
            (w.seconds_each + RUN_OVERHEAD_SEC) * w.runs() as f64
        }),
    );
    Battery {
        quick: o.quick,
        budget_sec: o.budget_sec,
        checks,
        readahead,
        slow,
        requests,
        queue,
        writes,
    }
}

/// Why the slow-member check is not measured, if it is not: every member
/// read at once, each judged against the others by compare's rule, needs
/// three members for a median to mean anything.
fn slow_why(members: &[&Device], o: &Options) -> Result<(), String> {
    if o.quick {
        Err("--quick: not measured".into())
    } else if !o.block_device {
        Err("not a block device (a file, directory or mount point on one): name the device, or run `stripebench compare` on it".into())
    } else if members.len() < 3 {
        Err(format!(
            "{} member(s): the verdict needs at least 3 to have a median",
            members.len()
        ))
    } else if members.iter().any(|m| m.path.is_empty()) {
        Err("a member has no device node".into())
    } else {
        Ok(())
    }
}

/// The request-size run: O_DIRECT full-stripe reads of a striped volume
/// with a known chunk.
fn requests_plan(stripe: &Option<(&Device, Geometry)>, o: &Options) -> Option<RequestPlan> {
    match stripe {
        Some((_, g)) if o.block_device && !o.quick => match (g.chunk, g.full_stripe) {
            (Some(chunk), Some(bs)) if bs >= chunk && bs % 4096 == 0 => Some(RequestPlan {
                bs,
                chunk,
                seconds: (o.budget_sec * REQUEST_SHARE - RUN_OVERHEAD_SEC).max(MIN_WINDOW_SEC),
            }),
            _ => None,
        },
        _ => None,
    }
}

/// Why the queue-depth check is not measured, if it is not: with
/// `q_each` seconds per depth.
fn queue_why(o: &Options, q_each: f64) -> Result<(), String> {
    if o.quick {
        Err("--quick: not measured".into())
    } else if !o.block_device {
        Err("not a block device: name the device".into())
    } else if q_each < MIN_WINDOW_SEC {
        let least =
            ((MIN_WINDOW_SEC + RUN_OVERHEAD_SEC) * QUEUE_DEPTHS.len() as f64 / QUEUE_SHARE).ceil();
        Err(format!(
            "the budget leaves under {MIN_WINDOW_SEC:.0} s per depth: --budget {least:.0}s or more measures it"
        ))
    } else {
        Ok(())
    }
}

/// The write runs (parity RAID, --allow-destructive): full-stripe writes
/// at the stripe cache as it is (and as mdadm's rule would have it), then
/// chunk-sized random writes; or why they are not made.
fn write_plan(
    stripe: &Option<(&Device, Geometry)>,
    parity_md: &Option<(u64, u64)>,
    o: &Options,
) -> Result<WritePlan, String> {
    match (stripe, parity_md) {
        _ if !o.allow_destructive => {
            Err("advise is read-only: write checks need --allow-destructive".into())
        }
        _ if o.quick => Err("--quick: not measured".into()),
        _ if !o.block_device => Err("not a block device: name the device".into()),
        (_, None) => Err("no md raid4/5/6 in the stack: the write checks are parity RAID's (read-modify-write, the stripe cache)".into()),
        (Some((_, g)), Some((cache, rule))) => match (g.chunk, g.full_stripe) {
            (Some(chunk), Some(full)) => {
                let mut caches = vec![*cache];
                if cache < rule {
                    caches.push(stripe_cache_fix(*rule));
                }
                let runs = caches.len() + 1;
                let each = o.budget_sec * WRITE_SHARE / runs as f64 - RUN_OVERHEAD_SEC;
                if each < MIN_WINDOW_SEC {
                    let least = ((MIN_WINDOW_SEC + RUN_OVERHEAD_SEC) * runs as f64 / WRITE_SHARE).ceil();
                    Err(format!("the budget leaves under {MIN_WINDOW_SEC:.0} s per write run: --budget {least:.0}s or more measures them"))
                } else {
                    Ok(WritePlan {
                        full_stripe: full,
                        chunk,
                        stripe_caches: caches,
                        seconds_each: each,
                    })
                }
            }
            _ => Err("the parity array's chunk is not known".into()),
        },
        (None, Some(_)) => Err("the parity array is not the volume's striping layer".into()),
    }
}

/// The read-ahead measurement (the current value and 1, 2, 4 full
/// stripes, sharing `ra_share` of the budget), and what the check says of
/// itself.
fn readahead_plan(
    topo: &Topology,
    survey: &Survey,
    stripe: &Option<(&Device, Geometry)>,
    o: &Options,
    ra_share: f64,
) -> (Option<ReadaheadPlan>, Result<String, String>) {
    // The read-ahead measurement: the current value and 1, 2, 4 full stripes.
    let vol = survey.get(&topo.root.name);
    let readahead = match (stripe, vol.and_then(|v| v.read_ahead_kb)) {
        (Some((_, g)), Some(cur)) if o.block_device && !o.quick => {
            g.full_stripe.filter(|&f| f >= 1024).map(|f| {
                let fs_kb = f / 1024;
                let mut values: Vec<u64> = vec![cur, fs_kb, 2 * fs_kb, 4 * fs_kb];
                values.sort_unstable();
                values.dedup();
                let n = values.len() as f64;
                let share = o.budget_sec * ra_share / n - RUN_OVERHEAD_SEC;
                ReadaheadPlan {
                    device: topo.root.name.clone(),
                    current_kb: cur,
                    full_stripe_kb: fs_kb,
                    values_kb: values,
                    seconds_each: share.max(MIN_WINDOW_SEC),
                }
            })
        }
        _ => None,
    };
    let ra_detail = match (stripe, vol.and_then(|v| v.read_ahead_kb)) {
        (None, _) => Err("no striped layer with a known chunk: no full stripe to weigh read-ahead against".to_string()),
        (_, None) => Err(format!("{} has no queue/read_ahead_kb", topo.root.name)),
        (Some(_), Some(_)) => Ok(match &readahead {
            Some(p) => format!(
                "read_ahead_kb against the full stripe; buffered sequential reads, one thread, cold cache, {:.0} s each at {} KiB",
                p.seconds_each,
                p.values_kb
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None if o.quick => "read_ahead_kb against the full stripe (--quick: not measured)".into(),
            None => "read_ahead_kb against the full stripe (not a block device: not measured)".into(),
        }),
    };
    (readahead, ra_detail)
}

/// Whether an md array of the stack answers `pred`.
fn has_md(topo: &Topology, pred: &dyn Fn(&Device) -> bool) -> bool {
    let mut stack = vec![&topo.root];
    while let Some(d) = stack.pop() {
        if d.md.is_some() && pred(d) {
            return true;
        }
        stack.extend(d.members.iter());
    }
    false
}

/// What the write check says of itself.
fn writes_detail(writes: &Result<WritePlan, String>) -> Result<String, String> {
    match writes {
        Ok(w) => Ok(format!(
            "DESTROYS the volume's data: O_DIRECT full-stripe ({} KiB) sequential writes at stripe_cache_size {}, and chunk-sized random writes, {:.0} s each; the members' reads meanwhile are read-modify-write",
            w.full_stripe / 1024,
            w.stripe_caches.iter().map(u64::to_string).collect::<Vec<_>>().join(" and "),
            w.seconds_each
        )),
        Err(why) => Err(why.clone()),
    }
}

/// What the slow-member check says of itself.
fn slow_detail(slow: &Option<SlowPlan>, why: Result<(), String>) -> Result<String, String> {
    match (slow, why) {
        (Some(p), _) => Ok(format!(
            "every member read at once (O_DIRECT, one worker each), {} runs of {:.0} s; compare's verdict over the members' medians (`stripebench compare` also reads each alone, --solo)",
            p.repeats, p.seconds_each
        )),
        (None, Err(why)) => Err(why),
        (None, Ok(())) => Err("not planned".into()),
    }
}

/// What the queue-depth check says of itself.
fn queue_detail(queue: &Option<QueuePlan>, why: Result<(), String>) -> Result<String, String> {
    match (queue, why) {
        (Some(q), _) => Ok(format!(
            "O_DIRECT random 4 KiB reads of the volume, one worker, {:.0} s at each of {} I/Os in flight: the depth past which latency grows with no gain",
            q.seconds_each,
            q.depths.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        )),
        (None, Err(why)) => Err(why),
        (None, Ok(())) => Err("not planned".into()),
    }
}

/// What the request-limits check says of itself, for `n` members.
fn requests_detail(
    stripe: &Option<(&Device, Geometry)>,
    requests: &Option<RequestPlan>,
    n: usize,
) -> Result<String, String> {
    match (stripe, requests) {
        (Some((_, g)), r) => Ok(format!(
            "max_sectors_kb and max_segments of {} member(s) against the chunk ({} KiB){}",
            n,
            g.chunk.unwrap_or(0) / 1024,
            r.as_ref().map_or(String::new(), |r| format!(
                "; O_DIRECT full-stripe reads of the volume for {:.0} s, each member's average request against the chunk",
                r.seconds
            ))
        )),
        (None, _) => Err("no striped layer with a known chunk".into()),
    }
}

/// A check's line in the battery: ran (with what it does) or skipped
/// (with why), and its share of the budget in seconds.
fn check_status(id: &str, title: &str, ran: Result<String, String>, budget: f64) -> CheckStatus {
    let (status, detail) = match ran {
        Ok(d) => ("ran", d),
        Err(d) => ("skipped", d),
    };
    CheckStatus {
        id: id.into(),
        title: title.into(),
        status: status.into(),
        detail,
        budget_sec: budget,
    }
}

/// What the crypt check reads, or why it has nothing to read.
fn crypt_detail(survey: &Survey) -> Result<String, String> {
    if survey.devices.iter().any(|f| f.dm_crypt.is_some()) {
        Ok("no_read_workqueue and no_write_workqueue in every dm-crypt table of the stack; not measured (the finding gives the sweep that measures the layer's cost)".into())
    } else {
        Err("no dm-crypt device in the stack (or no dm table to read)".into())
    }
}

/// What the NUMA check weighs, or why it has nothing to place.
fn numa_detail(survey: &Survey) -> Result<String, String> {
    if survey.numa_nodes.len() >= 2 {
        Ok(format!(
            "the members' NUMA nodes against the host's {} nodes (where stripebench's workers run); not measured",
            survey.numa_nodes.len()
        ))
    } else {
        Err("one NUMA node: nothing to place".into())
    }
}

/// The stack's md raid4/5/6 array, as (its stripe_cache_size, mdadm's
/// rule for it: 4 × chunk / 4096 + 1).
fn parity_array(topo: &Topology, survey: &Survey) -> Option<(u64, u64)> {
    let mut stack = vec![&topo.root];
    while let Some(d) = stack.pop() {
        if let (Some(g), Some(_)) = (d.geometry().filter(|g| g.has_parity()), &d.md) {
            let cache = survey.get(&d.name)?.md.as_ref()?.stripe_cache_size?;
            return Some((
                cache,
                crate::analysis::advise_stack::stripe_cache_rule(g.chunk),
            ));
        }
        stack.extend(d.members.iter());
    }
    None
}

pub use crate::analysis::advise_stack::stripe_cache_fix;
