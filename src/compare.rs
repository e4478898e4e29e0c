//! `stripebench compare VOLUME`: does the volume deliver what its members
//! can? The same read workload runs in phases (each member alone, all
//! members at once, the volume with one worker and with one per member, the
//! volume through the page cache), then the stripe efficiency (volume ÷
//! members together), each member's share, and the slowest member.

use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::app::{measure, Outcome};
use crate::cli::{CompareArgs, RunArgs, RwMode};
use crate::config::{RunConfig, TestbedConfig};
use crate::error::{show_path, usage};
use crate::results::{RunDocument, ToolInfo};
use crate::testbed::Testbed;
use crate::topology::{self, Topology};

/// A member is flagged slow this far below the median member.
pub const SLOW_BELOW_MEDIAN: f64 = 0.15;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Phase {
    pub name: String,
    pub direct: bool,
    pub workers: usize,
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub p99_ns: Option<u64>,
    /// CPU seconds (user + system) per 10^9 bytes.
    pub cpu_sec_per_gb: Option<f64>,
    pub document: RunDocument,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemberResult {
    pub path: String,
    /// In the all-members-at-once phase.
    pub bytes_per_sec: f64,
    /// Its share of the members' total.
    pub share: f64,
    /// Alone (with --solo).
    pub solo_bytes_per_sec: Option<f64>,
    pub slow: bool,
}

/// The compare document (`--json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CompareDocument {
    pub schema_version: u32,
    pub tool: ToolInfo,
    /// A signal ended the comparison: the phase it ended is kept (its own
    /// document says `interrupted`), the later ones did not run.
    #[serde(default)]
    pub interrupted: bool,
    pub volume: String,
    pub topology: Topology,
    /// The file the volume phases read, on a mounted volume.
    pub test_file: Option<String>,
    pub phases: Vec<Phase>,
    /// Volume with one worker per member (O_DIRECT) ÷ all members at once.
    pub efficiency: Option<f64>,
    pub members: Vec<MemberResult>,
    /// The member flagged slow, if any.
    pub slowest: Option<String>,
    pub notes: Vec<String>,
}

fn phase_args(base: &RunArgs, targets: Vec<PathBuf>, jobs: usize, buffered: bool) -> RunArgs {
    let mut a = base.clone();
    a.targets = targets;
    a.jobs = jobs;
    a.buffered = buffered;
    a.direct = false;
    a.json = None;
    a.csv = None;
    a.histogram = false;
    a.members = None;
    a
}

fn summarize(name: String, doc: RunDocument) -> Phase {
    let t = &doc.total;
    Phase {
        name,
        direct: doc.config.direct,
        workers: doc.workers.len(),
        bytes_per_sec: t.bytes_per_sec,
        iops: t.iops,
        p99_ns: t.latency_ns.map(|l| l.p99),
        cpu_sec_per_gb: t.cpu_sec_per_gb(),
        document: doc,
    }
}

/// Flags the slowest member when it is more than 15% below the median
/// (or, with 8 members or more, also when beyond 3 standard deviations).
pub fn flag_slow(rates: &[f64]) -> Option<usize> {
    if rates.len() < 2 {
        return None;
    }
    let mut sorted = rates.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = if sorted.len() % 2 == 1 {
        sorted[sorted.len() / 2]
    } else {
        (sorted[sorted.len() / 2 - 1] + sorted[sorted.len() / 2]) / 2.0
    };
    let (i, &min) = rates.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1))?;
    let below_median = min < median * (1.0 - SLOW_BELOW_MEDIAN);
    let n = rates.len() as f64;
    let mean = rates.iter().sum::<f64>() / n;
    let sd = (rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n).sqrt();
    let beyond_3sd = rates.len() >= 8 && sd > 0.0 && mean - min > 3.0 * sd;
    (below_median || beyond_3sd).then_some(i)
}

fn mem_total() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

pub fn run(args: &CompareArgs) -> Result<u8> {
    crate::app::preflight();
    let base = &args.run;
    if base.targets.len() != 1 {
        return usage("compare takes exactly one VOLUME: a striped block device or the mount point of a striped file system");
    }
    if base.rw != RwMode::Read && base.rw != RwMode::Randread {
        return usage(format!(
            "compare measures reads: use --rw read or randread, not --rw {}",
            base.rw.name()
        ));
    }
    base.refuse_for(
        "compare",
        &[
            "dry-run",
            "plot",
            "csv",
            "histogram",
            "stripe",
            "start-at",
            "verify",
            "cached",
            "io-limit",
            "align",
        ],
    )?;
    if base.members.is_some() || base.buffered || base.direct {
        return usage("compare chooses the members, and direct or buffered, per phase: drop --members, --direct and --buffered");
    }
    let volume = &base.targets[0];
    let src = topology::Sources::system(None)?;
    let topo = topology::discover(volume, &src)?;
    let members: Vec<PathBuf> = topo
        .stripe_members()
        .iter()
        .map(|l| PathBuf::from(&l.path))
        .collect();
    if topo.root.members.is_empty() {
        return usage(format!(
            "{} is not a volume with members ({} is a {}): compare needs md, dm or a btrfs mount point",
            show_path(volume),
            topo.root.name,
            topo.root.kind
        ));
    }
    // Validate the options once, as run would, before any I/O.
    let cfg_of = |a: &RunArgs| -> Result<RunConfig> {
        let mut c = RunConfig::from_args(a, &crate::cpus::available_cpus(), None)?;
        c.progress = !a.no_progress;
        Ok(c)
    };
    cfg_of(&phase_args(base, members.clone(), 1, false))?;
    for m in &members {
        if let Err(e) = std::fs::File::open(m) {
            return usage(format!(
                "cannot read member {} ({e}): compare needs root to read the raw members",
                m.display()
            ));
        }
    }

    let mut protected = members.clone();
    protected.push(volume.clone());
    crate::output::check(
        &crate::output::given(&[("--json", base.json.as_deref())]),
        &crate::target::protected_paths(&protected),
    )?;
    let mut notes = Vec::new();
    let meta = std::fs::metadata(volume)
        .with_context(|| format!("cannot inspect {}", volume.display()))?;
    let mut bed: Option<Testbed> = None;
    let vol_target: PathBuf = if meta.is_dir() {
        let free = crate::testbed::free_bytes(volume).unwrap_or(0);
        let size = args
            .file_size
            .unwrap_or_else(|| (2 * mem_total()).min(free / 10 * 9))
            & !((1 << 20) - 1);
        if size < 1 << 20 {
            return usage(format!(
                "{} has too little free space for a test file: free some, or give --file-size",
                show_path(volume)
            ));
        }
        if size < mem_total() {
            notes.push(format!(
                "the test file ({}) fits in memory: the buffered phase is read cold (evicted first), but a long phase may re-read cached data (see its device counters)",
                crate::units::fmt_bytes(size)
            ));
        }
        let tb = Testbed::create(
            &TestbedConfig {
                dir: volume.clone(),
                files: 1,
                file_size: size,
            },
            base.seed.unwrap_or(1),
            "the volume phases' test file",
            "give a smaller --file-size",
        )?;
        let f = tb.files[0].clone();
        bed = Some(tb);
        f
    } else if meta.file_type().is_file() {
        return usage(format!(
            "{} is a file: give the volume (a block device or a mount point)",
            show_path(volume)
        ));
    } else {
        volume.clone()
    };

    let run_phase = |name: String, a: RunArgs, owned: bool| -> Result<Phase> {
        eprintln!("stripebench compare: {name}");
        // measure() starts a buffered read cold itself.
        let cfg = cfg_of(&a)?;
        match measure(&cfg, &cfg.targets, owned)? {
            Outcome::Done(doc) => Ok(summarize(name, *doc)),
            Outcome::DryRun(..) => unreachable!("compare never asks for a dry run"),
        }
    };
    let n = members.len();
    let owned = bed.is_some();
    let together_name = "members together, O_DIRECT".to_string();
    let voln_name = format!("volume, {n} workers, O_DIRECT");
    let mut plan: Vec<(String, RunArgs, bool)> = Vec::new();
    if args.solo {
        for m in &members {
            plan.push((
                format!("member {} alone", m.display()),
                phase_args(base, vec![m.clone()], 1, false),
                false,
            ));
        }
    }
    plan.push((
        together_name.clone(),
        phase_args(base, members.clone(), 1, false),
        false,
    ));
    plan.push((
        "volume, 1 worker, O_DIRECT".into(),
        phase_args(base, vec![vol_target.clone()], 1, false),
        owned,
    ));
    plan.push((
        voln_name.clone(),
        phase_args(base, vec![vol_target.clone()], n, false),
        owned,
    ));
    plan.push((
        format!("volume, {n} workers, buffered"),
        phase_args(base, vec![vol_target.clone()], n, true),
        owned,
    ));
    // Phases run in order; an interrupt ends the phase running and skips the
    // rest, and the report covers what was measured.
    let mut phases: Vec<Phase> = Vec::new();
    for (name, a, owned) in plan {
        if crate::signals::interrupted() {
            break;
        }
        let p = run_phase(name, a, owned)?;
        let stop = p.document.interrupted;
        phases.push(p);
        if stop {
            break;
        }
    }
    let interrupted =
        crate::signals::interrupted() || phases.iter().any(|p| p.document.interrupted);
    let solo: Vec<f64> = phases
        .iter()
        .filter(|p| p.name.ends_with(" alone"))
        .map(|p| p.bytes_per_sec)
        .collect();
    let together = phases.iter().find(|p| p.name == together_name);
    let voln = phases.iter().find(|p| p.name == voln_name);
    let rates: Vec<f64> = together
        .map(|t| t.document.targets.iter().map(|t| t.bytes_per_sec).collect())
        .unwrap_or_default();
    let sum: f64 = rates.iter().sum();
    let slow = flag_slow(&rates);
    let members_out: Vec<MemberResult> = together
        .map(|t| {
            t.document
                .targets
                .iter()
                .enumerate()
                .map(|(i, t)| MemberResult {
                    path: t.path.clone(),
                    bytes_per_sec: t.bytes_per_sec,
                    share: if sum > 0.0 {
                        t.bytes_per_sec / sum
                    } else {
                        0.0
                    },
                    solo_bytes_per_sec: solo.get(i).copied(),
                    slow: slow == Some(i),
                })
                .collect()
        })
        .unwrap_or_default();
    let efficiency = match (together, voln) {
        (Some(t), Some(v)) if t.bytes_per_sec > 0.0 => Some(v.bytes_per_sec / t.bytes_per_sec),
        _ => None,
    };
    if interrupted {
        notes.push(format!(
            "interrupted: {} of the phases ran; the figures cover what was measured",
            phases.len()
        ));
    }
    let doc = CompareDocument {
        schema_version: 1,
        tool: ToolInfo::this(),
        interrupted,
        volume: show_path(volume),
        test_file: bed.as_ref().map(|_| vol_target.display().to_string()),
        topology: topo,
        phases,
        efficiency,
        slowest: slow.map(|i| members_out[i].path.clone()),
        members: members_out,
        notes,
    };
    crate::report::emit(
        &crate::report::compare::render(&doc),
        base.json.as_deref(),
        &doc,
    )?;
    drop(bed);
    let failed = doc.phases.iter().any(|p| p.document.has_errors());
    Ok(crate::error::exit_code(interrupted, failed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slow_member_is_flagged_against_the_median() {
        assert_eq!(flag_slow(&[100.0, 98.0, 60.0]), Some(2));
        assert_eq!(flag_slow(&[100.0, 98.0, 90.0]), None, "within 15%");
        assert_eq!(flag_slow(&[100.0]), None);
        // Many members: 3 sigma, even when within 15% of the median.
        let mut many = vec![100.0; 15];
        many.push(88.0);
        assert_eq!(flag_slow(&many), Some(15));
    }
}
