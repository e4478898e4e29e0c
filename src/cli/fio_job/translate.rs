//! One fio job translated into `run`'s options: a table of steps, one per
//! family of fio options, run in order over a [`Reader`] of the job.
//!
//! The steps' order is the order of the options in the command printed
//! before a run, and the order in which a job's faults are found (the
//! first refused is the one said), so both stay as they are when a step
//! is added. Each step names the fio keys it reads; together they are the
//! keys a job file may hold, and any other is refused by name before any
//! step runs.
//!
//! To honour another fio option: add its key to the step of its family
//! in [`STEPS`] and read it there (or add a step where its `run` option
//! falls in the printed command), with [`Reader`]'s typed accessors,
//! which refuse a bad value in the one shape every refusal has.

use std::fmt::Display;
use std::time::Duration;

use super::{fio_size, fio_time, list, FioJobError, Job, Opt, Set, Translated};
use crate::base::error::show_text;
use crate::cli::fio_words;
use crate::cli::EngineArg;
use crate::engine::buffer::HugePages;
use crate::measure::config::RwMode;
use crate::measure::together::ExitWhat;

/// One family of fio options: the keys it reads, and what it makes of
/// them.
struct Step {
    keys: &'static [&'static str],
    run: fn(&Reader, &mut Draft) -> Result<(), FioJobError>,
}

/// Keys a job may hold that no step reads: a job's name and description
/// (stripebench names each target by its file), and kb_base, which the
/// [`Reader`] reads for every size.
const READ_BY_NONE: &[&str] = &["name", "description", "kb_base"];

/// The steps, in the order of the options they set.
const STEPS: &[Step] = &[
    Step {
        keys: &["rw", "rwmixread", "rwmixwrite"],
        run: pattern,
    },
    Step {
        keys: &["random_distribution"],
        run: distribution,
    },
    Step {
        keys: &["sprandom", "spr_op", "spr_num_regions", "spr_cs"],
        run: sprandom,
    },
    Step {
        keys: &["bs", "bsrange", "bssplit", "blockalign"],
        run: block_size,
    },
    Step {
        keys: &["direct", "buffered", "uncached"],
        run: cache_mode,
    },
    Step {
        // hugepage-size: the size of fio's reserved pages; ours are the
        // system's 2 MiB ones.
        keys: &["iomem", "mem", "hugepage-size"],
        run: buffers,
    },
    Step {
        keys: &["fadvise_hint"],
        run: fadvise,
    },
    Step {
        keys: &[
            "steadystate",
            "steadystate_duration",
            "steadystate_ramp_time",
            "steadystate_check_interval",
        ],
        run: steady,
    },
    Step {
        keys: &[
            "time_based",
            "runtime",
            "ramp_time",
            "io_size",
            "loops",
            "number_ios",
            "numjobs",
            "startdelay",
        ],
        run: how_long,
    },
    Step {
        keys: &["ioengine", "iodepth", "fixedbufs", "registerfiles"],
        run: engine,
    },
    Step {
        keys: &["hipri", "sqthread_poll", "sqthread_poll_cpu"],
        run: ring,
    },
    Step {
        keys: &["iodepth_batch_complete_min", "iodepth_batch_complete"],
        run: completions,
    },
    Step {
        keys: &["nowait"],
        run: rwf_flags,
    },
    Step {
        keys: &[
            "prioclass",
            "prio",
            "cmdprio_percentage",
            "cmdprio_class",
            "cmdprio",
            "cmdprio_hint",
            "cmdprio_bssplit",
        ],
        run: priorities,
    },
    Step {
        keys: &["numa_cpu_nodes", "numa_mem_policy"],
        run: numa,
    },
    Step {
        keys: &["rate", "rate_iops"],
        run: rate,
    },
    Step {
        keys: &["rate_min", "rate_iops_min", "rate_cycle"],
        run: rate_min,
    },
    Step {
        keys: &[
            "thinktime",
            "thinktime_spin",
            "thinktime_blocks",
            "thinktime_blocks_type",
            "thinktime_iotime",
        ],
        run: think,
    },
    Step {
        keys: &[
            "latency_target",
            "latency_window",
            "latency_percentile",
            "latency_run",
        ],
        run: latency_search,
    },
    Step {
        keys: &["size", "offset", "filesize", "offset_increment"],
        run: region,
    },
    Step {
        keys: &["zonemode", "zonesize", "zonerange", "zoneskip"],
        run: zones,
    },
    Step {
        keys: &["cpus_allowed", "cpus_allowed_policy"],
        run: cpus,
    },
    Step {
        keys: &["randseed", "randrepeat", "norandommap"],
        run: random_offsets,
    },
    Step {
        keys: &[
            "refill_buffers",
            "scramble_buffers",
            "thread",
            "group_reporting",
            "stonewall",
            "new_group",
            "invalidate",
        ],
        run: plain_flags,
    },
    Step {
        keys: &["wait_for"],
        run: wait_for,
    },
    Step {
        keys: &["exitall", "exit_what"],
        run: exits,
    },
    Step {
        keys: &["continue_on_error", "ignore_error", "error_dump"],
        run: on_errors,
    },
    Step {
        keys: &["end_fsync", "fsync_on_close"],
        run: end_sync,
    },
    Step {
        // fio's measurement knobs, each said in a `#` line (HARMLESS).
        keys: &[
            "gtod_reduce",
            "disable_lat",
            "disable_clat",
            "disable_slat",
            "disable_bw_measurement",
            "threads",
            "random_generator",
        ],
        run: measurement_knobs,
    },
    Step {
        keys: &[
            "buffer_compress_percentage",
            "buffer_compress_chunk",
            "dedupe_percentage",
            "dedupe_mode",
            "dedupe_working_set_percentage",
            "dedupe_global",
            "buffer_pattern",
        ],
        run: written_data,
    },
    Step {
        keys: &[
            "verify",
            "do_verify",
            "verify_fatal",
            "verify_dump",
            "experimental_verify",
            "verify_state_save",
            "verify_state_load",
            "verify_interval",
            "verify_offset",
            "verify_backlog",
            "verify_pattern",
            "verify_async",
        ],
        run: verify,
    },
    Step {
        keys: &[
            "write_bw_log",
            "write_lat_log",
            "write_iops_log",
            "log_avg_msec",
            "per_job_logs",
            "log_offset",
            "log_prio",
            "log_issue_time",
            "log_window_value",
            "log_max_value",
        ],
        run: logs,
    },
    Step {
        keys: &["write_iolog", "read_iolog", "replay_no_stall"],
        run: iolog,
    },
    Step {
        keys: &["filename", "directory", "filename_format", "nrfiles"],
        run: files,
    },
    Step {
        keys: &["fill_device", "create_serialize", "allow_file_create"],
        run: fill_device,
    },
    Step {
        keys: &["fallocate", "create_on_open", "overwrite"],
        run: layout,
    },
];

/// Whether a job file may hold `key`: some step reads it.
fn known(key: &str) -> bool {
    READ_BY_NONE.contains(&key) || STEPS.iter().any(|s| s.keys.contains(&key))
}

/// Translates one job; `shown` is the file as messages name it.
pub(super) fn translate(job: &Job, shown: &str) -> Result<Translated, FioJobError> {
    let r = Reader {
        job,
        shown,
        kb_base: 1024,
    };
    // A zoned device's job first: its zbd keys (max_open_zones and the
    // like) are unknown because the mode is, and the mode is the reason.
    if let Some(o) = job
        .get("zonemode")
        .filter(|o| o.value.as_deref().map(str::trim) == Some("zbd"))
    {
        return r.refuse(o, ZBD);
    }
    // Every key first, in the file's order: the first unknown is named.
    if let Some(o) = job.opts.iter().find(|o| !known(&o.key)) {
        let said = fio_words::explain(&r.written(o), &o.key, o.value.as_deref());
        return Err(FioJobError(match said {
            Some(said) => format!(
                "{}: {said}; stripebench cannot honour it from a job file: remove it, or run this job with fio",
                r.at(o)
            ),
            None => format!(
                "{}: stripebench cannot honour fio's `{}` (it has no equivalent): remove it, or run this job with fio",
                r.at(o),
                show_text(&r.written(o))
            ),
        }));
    }
    let kb_base = match job.get("kb_base") {
        None => 1024,
        Some(o) => match o.value.as_deref() {
            Some("1024") => 1024,
            Some("1000") => 1000,
            _ => return r.refuse(o, "is not 1000 or 1024: give kb_base=1024 (fio's default)"),
        },
    };
    let r = Reader { kb_base, ..r };
    let mut d = Draft::default();
    for step in STEPS {
        (step.run)(&r, &mut d)?;
    }
    // A verified mix's read-back reads as many bytes as its one worker
    // wrote (the files are named after `verify` reads the job).
    if d.read_back && (d.rw == "rw" || d.rw == "readwrite") && d.targets.len() > 1 {
        if let Some(o) = job.get("verify") {
            return r.refuse(o, format!("with rw={} on {} files: stripebench reads back as many bytes as the mix wrote, and each file's mix writes a share of its own: give one file (or a job section for each), or run this job with fio", d.rw, d.targets.len()));
        }
    }
    Ok(Translated {
        args: d.args,
        targets: d.targets,
        notes: d.notes,
        read_back: d.read_back,
        exitall: d.exitall,
        exit_what: d.exit_what,
        report_group: 0,
    })
}

/// A job as the steps read it: each value typed, or refused in one shape
/// (`fio job file F line N [section]: `key=value` why`).
struct Reader<'a> {
    job: &'a Job,
    /// The file as messages name it.
    shown: &'a str,
    kb_base: u64,
}

impl Reader<'_> {
    /// The last value given for `key` (the job's own over the globals').
    fn get(&self, key: &str) -> Option<&Opt> {
        self.job.get(key)
    }

    /// `key`'s option, or the job's first where the refusal is of a
    /// value `key` takes without being given.
    fn get_or_first(&self, key: &str) -> &Opt {
        self.job.get(key).unwrap_or(&self.job.opts[0])
    }

    /// Where `o` is written, and for which job when it is a global.
    fn at(&self, o: &Opt) -> String {
        let whose = if o.section == self.job.name {
            String::new()
        } else {
            format!(" (for [{}])", show_text(&self.job.name))
        };
        if o.line == 0 {
            // Given on fio's command line, before the job files.
            return format!("fio's command line [{}]{whose}", show_text(&o.section));
        }
        format!(
            "fio job file {} line {} [{}]{whose}",
            self.shown,
            o.line,
            show_text(&o.section)
        )
    }

    /// `o` as written: `key=value`, or the bare `key`.
    fn written(&self, o: &Opt) -> String {
        match &o.value {
            Some(v) => format!("{}={v}", o.key),
            None => o.key.clone(),
        }
    }

    /// `Err` of any Ok type: what `o` is refused for.
    fn refuse<T>(&self, o: &Opt, why: impl Display) -> Result<T, FioJobError> {
        Err(FioJobError(format!(
            "{}: `{}` {why}",
            self.at(o),
            show_text(&self.written(o))
        )))
    }

    /// A size, under the job's kb_base.
    fn size(&self, o: &Opt) -> Result<u64, FioJobError> {
        let v = o.value.as_deref().unwrap_or("");
        fio_size(v, self.kb_base).or_else(|why| self.refuse(o, why))
    }

    /// The time `key` gives, when it is given.
    fn time_of(&self, key: &str) -> Result<Option<Duration>, FioJobError> {
        self.get(key).map(|o| self.time(o)).transpose()
    }

    fn time(&self, o: &Opt) -> Result<Duration, FioJobError> {
        let v = o.value.as_deref().unwrap_or("");
        fio_time(v).or_else(|why| self.refuse(o, why))
    }

    /// A 0-or-1 option: `None` when not given, bare is 1.
    fn flag(&self, key: &str) -> Result<Option<bool>, FioJobError> {
        match self.get(key) {
            None => Ok(None),
            Some(o) => match o.value.as_deref() {
                None | Some("1") => Ok(Some(true)),
                Some("0") => Ok(Some(false)),
                Some(_) => self.refuse(o, "takes 0 or 1"),
            },
        }
    }

    fn count(&self, o: &Opt) -> Result<u64, FioJobError> {
        match o.value.as_deref().map(str::parse::<u64>) {
            Some(Ok(n)) => Ok(n),
            _ => self.refuse(o, "is not a whole number"),
        }
    }

    fn pct(&self, o: &Opt) -> Result<u64, FioJobError> {
        match self.count(o)? {
            n if n <= 100 => Ok(n),
            _ => self.refuse(o, "is not a percentage from 0 to 100"),
        }
    }

    /// An RWF_* flag fio sets on io_uring and pvsync2 (its engine is
    /// checked by [`rwf_flags`]): on when given bare or non-zero.
    fn rwf(&self, key: &str) -> Result<bool, FioJobError> {
        match self.get(key) {
            None => Ok(false),
            Some(o) if o.value.is_none() => Ok(true),
            Some(o) => Ok(self.count(o)? > 0),
        }
    }
}

/// What the steps have made so far, and the facts of the job that later
/// steps judge by (each set by its step; before it, fio's default).
struct Draft {
    args: Vec<Set>,
    notes: Vec<String>,
    targets: Vec<String>,
    /// fio's rw=, as given.
    rw: String,
    random: bool,
    /// The read share of a mix (rwmixread; fio's default 50).
    mix: u64,
    bs: u64,
    direct: bool,
    /// fio's ioengine=, as given.
    engine: String,
    depth: u64,
    /// A verified write to be read back and checked after it (fio's
    /// do_verify=1), as a run of its own.
    read_back: bool,
    /// fio's sprandom=1: its offsets and its end are its own.
    sprandom: bool,
    /// fio's exitall=1 (for the whole file, in fio) and exit_what=.
    exitall: bool,
    exit_what: ExitWhat,
}

impl Default for Draft {
    fn default() -> Self {
        Draft {
            args: Vec::new(),
            notes: Vec::new(),
            targets: Vec::new(),
            rw: "read".into(),
            random: false,
            mix: 50,
            bs: 4096,
            direct: false,
            engine: "psync".into(),
            depth: 1,
            read_back: false,
            sprandom: false,
            exitall: false,
            exit_what: ExitWhat::Group,
        }
    }
}

impl Draft {
    fn uring(&self) -> bool {
        self.engine == "io_uring"
    }
}

/// The pattern (fio's default: read) and a mix's read share.
fn pattern(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let rw_opt = r.get("rw");
    let written = rw_opt.and_then(|o| o.value.as_deref()).unwrap_or("read");
    // fio's offset modifier (`rw=read:512k`, `rw=randread:8`), read once
    // the pattern is known.
    let (rw, modifier) = match written.split_once(':') {
        Some((p, m)) => (p, Some(m)),
        None => (written, None),
    };
    match rw {
        "read" | "write" | "randread" | "randwrite" | "randrw" | "rw" | "readwrite" | "trim"
        | "randtrim" => {}
        _ => {
            let Some(o) = rw_opt else {
                unreachable!("the default is read")
            };
            let why = if rw.contains("trim") {
                "trims and writes the same blocks, which stripebench does not: give trim or randtrim, and a job of write or randwrite after it"
                    .to_string()
            } else if let Some(s) = fio_words::explain(&r.written(o), "rw", Some(rw)) {
                format!("cannot be honoured: {s}")
            } else {
                "is no pattern stripebench has: give read, write, randread, randwrite or randrw"
                    .to_string()
            };
            return Err(FioJobError(format!(
                "{}: {}",
                r.at(o),
                why.strip_prefix("cannot be honoured: ")
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("`{}` {why}", show_text(&r.written(o))))
            )));
        }
    }
    d.rw = rw.to_string();
    d.random = rw.starts_with("rand");
    d.args.push(Set::Rw(match rw {
        "read" => RwMode::Read,
        "write" => RwMode::Write,
        "randread" => RwMode::Randread,
        "randwrite" => RwMode::Randwrite,
        "rw" | "readwrite" => RwMode::Rw,
        "trim" => RwMode::Trim,
        "randtrim" => RwMode::Randtrim,
        _ => RwMode::Randrw,
    }));
    if let (Some(o), true) = (rw_opt, rw.contains("trim")) {
        d.notes.push(format!(
            "{}: on a file each trim punches a hole (fallocate PUNCH_HOLE|KEEP_SIZE, as fio's falloc engine does); fio's other engines send BLKDISCARD, which a file refuses (ENOTTY); on a block device both discard",
            show_text(&r.written(o))
        ));
    }
    if let (Some(o), Some(m)) = (rw_opt, modifier) {
        offset_modifier(r, d, o, m)?;
    }
    // The read share: rwmixread, or 100 - rwmixwrite; both must agree.
    let mixr = r.get("rwmixread");
    let mixw = r.get("rwmixwrite");
    let mix = match (mixr, mixw) {
        (Some(mr), Some(mw)) => {
            let (rp, wp) = (r.pct(mr)?, r.pct(mw)?);
            if rp + wp != 100 {
                return r.refuse(
                    mw,
                    format!("and rwmixread={rp} do not add up to 100: give one of them"),
                );
            }
            Some(rp)
        }
        (Some(mr), None) => Some(r.pct(mr)?),
        (None, Some(mw)) => Some(100 - r.pct(mw)?),
        (None, None) => None,
    };
    let mixes = matches!(rw, "randrw" | "rw" | "readwrite");
    if let Some(o) = mixr.or(mixw).filter(|_| !mixes) {
        return r.refuse(o, format!("with rw={rw}: a read share is for rw=randrw or rw=rw, which mix (fio ignores it here): drop it"));
    }
    if let Some(m) = mix {
        d.mix = m;
        d.args.push(Set::Mix(m as u8));
    }
    Ok(())
}

/// fio's `rw=PATTERN:MOD` (HOWTO rw=, io_u.c get_next_seq_offset):
/// sequential, bytes added after each I/O (`--skip`; negative goes
/// back); random, the I/Os per random offset (`--seq-run`), the others
/// sequential, as fio's default rw_sequencer=sequential has them.
fn offset_modifier(r: &Reader, d: &mut Draft, o: &Opt, m: &str) -> Result<(), FioJobError> {
    if d.random {
        match m.trim().parse::<u64>() {
            Ok(n) if (1..=u64::from(u32::MAX)).contains(&n) => {
                if n > 1 {
                    d.args.push(Set::SeqRun(n));
                }
                Ok(())
            }
            _ => r.refuse(
                o,
                "has a modifier that is not a count of I/Os per random offset: give e.g. rw=randread:8",
            ),
        }
    } else {
        let (neg, body) = match m.trim().strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, m.trim()),
        };
        let n = fio_size(body, r.kb_base).or_else(|why| r.refuse(o, why))?;
        let Ok(n) = i64::try_from(n) else {
            return r.refuse(o, "skips more than stripebench can count");
        };
        if n != 0 {
            d.args.push(Set::Skip(if neg { -n } else { n }));
        }
        Ok(())
    }
}

/// fio's SPRandom preconditioning (sprandom=1, spr_op=, spr_num_regions=):
/// `--sprandom`, with fio's checks (init.c fixup_options, filesetup.c):
/// a random write, bs= the blockalign=, the LFSR and norandommap (which
/// fio sets when not given; [`random_offsets`] and the generator check
/// refuse the others). spr_cs= (a cache the rewrites wait a region past)
/// is not modelled: refused unless 0.
fn sprandom(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let on = r.flag("sprandom")?.unwrap_or(false);
    if !on {
        for key in ["spr_op", "spr_num_regions", "spr_cs"] {
            if let Some(o) = r.get(key) {
                d.notes.push(format!("{}: an option of fio's sprandom=1, which this job does not ask for: fio ignores it, and so does stripebench", show_text(&r.written(o))));
            }
        }
        return Ok(());
    }
    let o = r.get_or_first("sprandom");
    if d.rw != "randwrite" {
        return r.refuse(o, format!("preconditions with random writes, and rw={}: give rw=randwrite (stripebench's --sprandom is a pure random write)", d.rw));
    }
    if let Some(c) = r.get("spr_cs").filter(|c| c.value.as_deref() != Some("0")) {
        return r.refuse(c, "delays each region's rewrites a region more, past the SSD's cache; stripebench's --sprandom does not: drop it, or give spr_cs=0");
    }
    for key in ["bsrange", "bssplit"] {
        if let Some(b) = r.get(key) {
            return r.refuse(
                b,
                "with sprandom=1: sprandom writes blocks of one size, bs=: drop it",
            );
        }
    }
    if let (Some(b), Some(a)) = (r.get("bs"), r.get("blockalign")) {
        if !r.written(b).contains(',') && r.size(b)? != r.size(a)? {
            return r.refuse(a, "with sprandom=1 is not bs=: sprandom's blocks are bs= apart: give blockalign= as bs=, or drop it");
        }
    }
    let op = match r.get("spr_op") {
        Some(p) => match p.value.as_deref().map(|v| v.trim().parse::<f64>()) {
            Some(Ok(f)) if f > 0.0 && f < 1.0 => f.to_string(),
            _ => return r.refuse(p, "is not an over-provisioning share between 0 and 1 (exclusive), such as spr_op=0.15"),
        },
        None => crate::analysis::sprandom::DEFAULT_OP.to_string(),
    };
    let regions = match r.get("spr_num_regions") {
        Some(n) => match u32::try_from(r.count(n)?) {
            Ok(k @ 1..) if k <= crate::analysis::sprandom::MAX_REGIONS => k,
            _ => {
                return r.refuse(
                    n,
                    format!(
                        "is not a count of regions from 1 to {}",
                        crate::analysis::sprandom::MAX_REGIONS
                    ),
                )
            }
        },
        None => crate::analysis::sprandom::DEFAULT_REGIONS,
    };
    d.sprandom = true;
    d.args.push(Set::Sprandom(op, regions));
    Ok(())
}

/// fio's random_distribution=: `--dist` for a random pattern; fio ignores
/// it on a sequential one, and so do we, saying so.
fn distribution(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let Some(o) = r.get("random_distribution") else {
        return Ok(());
    };
    let v = o.value.as_deref().unwrap_or("").trim();
    let size = |t: &str| fio_size(t, r.kb_base);
    let dist = crate::measure::workload::Dist::parse(v, &size).or_else(|why| r.refuse(o, why))?;
    if dist.is_uniform() {
        return Ok(());
    }
    if !d.random {
        d.notes.push(format!(
            "{}: fio draws no random offsets on rw={}, so it has nothing to shape; nor has stripebench",
            show_text(&r.written(o)),
            d.rw
        ));
        return Ok(());
    }
    d.args.push(Set::Dist(dist.to_string()));
    Ok(())
}

/// Why zonemode=zbd is refused.
const ZBD: &str = "drives a zoned block device's zones by their write pointers; stripebench has no zoned mode: run this job with fio";

/// fio's strided zones (`--zones`): zonemode=strided, or none with a
/// zonesize= (fio's init.c makes that strided), with zonerange=
/// defaulting to zonesize=. zonemode=zbd (zoned block devices' own
/// zones, their write pointers) is another thing, refused by name.
fn zones(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let mode = r.get("zonemode");
    let size = r.get("zonesize");
    match mode.map(|o| (o, o.value.as_deref().unwrap_or("").trim())) {
        Some((o, "zbd")) => return r.refuse(o, ZBD),
        Some((_, "none")) => {
            if let Some(z) = size {
                return r.refuse(z, "with zonemode=none: fio refuses the pair; drop one");
            }
            return Ok(());
        }
        Some((_, "strided")) | None => {}
        Some((o, _)) => return r.refuse(o, "is not strided, zbd or none"),
    }
    let Some(z) = size else {
        return match mode.or(r.get("zonerange")).or(r.get("zoneskip")) {
            Some(o) if o.key == "zonemode" => r.refuse(
                o,
                "needs zonesize= (fio refuses it without): give zonesize=",
            ),
            // fio ignores the range and skip without zones.
            Some(o) => {
                d.notes.push(format!(
                    "{}: without zonesize= fio walks no zones, and neither does stripebench",
                    show_text(&r.written(o))
                ));
                Ok(())
            }
            None => Ok(()),
        };
    };
    let size_b = r.size(z)?;
    let range = match r.get("zonerange") {
        Some(o) => r.size(o)?,
        None => size_b,
    };
    let skip = match r.get("zoneskip") {
        Some(o) => r.size(o)?,
        None => 0,
    };
    if size_b == 0 || range == 0 {
        return r.refuse(
            z,
            "is a zone of no bytes: give zonesize= (and zonerange=) of a block or more",
        );
    }
    if let Some(o) = r.get("size") {
        return r.refuse(o, "with zonesize=: fio's zones run past size= to the file's end, which stripebench's region would not; give io_size= to bound the bytes, or run this job with fio");
    }
    d.args.push(Set::Zones(crate::measure::workload::Strided {
        size: size_b,
        range,
        skip,
    }));
    Ok(())
}

/// The request size (fio's default: 4k, for every pattern). fio's
/// bsrange=MIN-MAX, when given, decides it whatever bs= says: one size
/// when MIN is MAX.
fn block_size(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    if let Some(o) = r.get("bssplit") {
        return block_split(r, d, o);
    }
    if let Some(o) = r.get("blockalign") {
        d.notes.push(format!(
            "{}: with one size stripebench aligns offsets to the size itself; fio's blockalign= would align random ones finer",
            show_text(&r.written(o))
        ));
    }
    if let Some(o) = r.get("bsrange") {
        let v = o.value.as_deref().unwrap_or("");
        let Some((lo, hi)) = v.split_once(['-', ':']).filter(|_| !v.contains(',')) else {
            return r.refuse(o, "is not one MIN-MAX range: give bsrange=4k-4k, or bs=");
        };
        let (lo, hi) = (
            fio_size(lo, r.kb_base).or_else(|why| r.refuse(o, why))?,
            fio_size(hi, r.kb_base).or_else(|why| r.refuse(o, why))?,
        );
        if lo == 0 || hi < lo {
            return r.refuse(
                o,
                "is not a MIN-MAX range of sizes above 0: give bsrange=4k-16k, or bs=",
            );
        }
        if lo != hi {
            return bsrange_split(r, d, o, lo, hi);
        }
        if let Some(b) = r.get("bs") {
            d.notes.push(format!(
                "{}: fio's bsrange= decides the size when given, so stripebench's --bs is {}",
                show_text(&r.written(b)),
                crate::base::units::fmt_size_arg(lo)
            ));
        }
        d.bs = lo;
        d.args.push(Set::Bs(lo));
        return Ok(());
    }
    d.bs =
        match r.get("bs") {
            Some(o) if o.value.as_deref().is_some_and(|v| v.contains(',')) => return r.refuse(
                o,
                "gives reads and writes their own size, which stripebench does not: give one size",
            ),
            Some(o) => match r.size(o)? {
                0 => return r.refuse(o, "is 0: give a block size such as 4k"),
                n => n,
            },
            None => 4096,
        };
    d.args.push(Set::Bs(d.bs));
    Ok(())
}

/// fio's bsrange=MIN-MAX with MIN below MAX: fio draws each size
/// uniformly among the multiples of MIN up to MAX (get_next_buflen: MIN
/// plus a share of MAX, aligned down to MIN, capped at MAX; each of the K
/// multiples 1/K). Run as `--bssplit` with K equal shares when K whole
/// percents make them exactly (K divides 100); else refused, saying why.
fn bsrange_split(r: &Reader, d: &mut Draft, o: &Opt, lo: u64, hi: u64) -> Result<(), FioJobError> {
    let k = hi / lo;
    if hi % lo != 0 || k > crate::measure::workload::SizeShare::MAX_SIZES as u64 || 100 % k != 0 {
        return r.refuse(o, format!(
            "draws each size uniformly among the {k} multiples of {} up to {}, which --bssplit's whole percents cannot give exactly: give a range of 2, 4, 5, 10, 20, 25 or 50 sizes (bsrange=4k-16k), or bssplit=",
            crate::base::units::fmt_size_arg(lo),
            crate::base::units::fmt_size_arg(hi)
        ));
    }
    let parts: Vec<String> = (1..=k).map(|i| format!("{}/{}", i * lo, 100 / k)).collect();
    d.bs = hi;
    d.args.push(Set::Bssplit(parts.join(":")));
    d.notes.push(format!(
        "{}: fio draws each of the {k} multiples of {} up to {} alike, as --bssplit with equal shares does",
        show_text(&r.written(o)),
        crate::base::units::fmt_size_arg(lo),
        crate::base::units::fmt_size_arg(hi)
    ));
    Ok(())
}

/// fio's bsrange= beside bssplit=: fio draws from the split, then
/// aligns the size down to bsrange's smallest and caps it at its largest
/// (get_next_buflen), which leave the split's sizes as they are only when
/// they are the split's own smallest and largest; other bounds refused.
fn split_bounds(
    r: &Reader,
    d: &mut Draft,
    b: &Opt,
    sizes: &crate::measure::workload::Sizes,
) -> Result<(), FioJobError> {
    let v = b.value.as_deref().unwrap_or("");
    let bound = |t: &str| fio_size(t, r.kb_base).ok();
    let given = v
        .split_once(['-', ':'])
        .and_then(|(lo, hi)| Some((bound(lo)?, bound(hi)?)));
    if given != Some((sizes.min(), sizes.max())) {
        return r.refuse(b, format!("beside bssplit=: fio draws each size from the split, then aligns it down to bsrange's smallest and caps it at its largest, which stripebench does not: give bsrange={}-{} (the split's own), or drop it", crate::base::units::fmt_size_arg(sizes.min()), crate::base::units::fmt_size_arg(sizes.max())));
    }
    d.notes.push(format!("{}: fio's bssplit= decides the sizes; bsrange= sets only the smallest and largest, here the split's own", show_text(&r.written(b))));
    Ok(())
}

/// fio's bssplit=: `--bssplit`, each I/O's size drawn from weighted
/// sizes (and fio's blockalign= as `--blockalign`). fio's `READS,WRITES`
/// form: a pattern of one direction runs its list; a mix runs both, each
/// direction drawing from its own (a blank write list is the reads').
fn block_split(r: &Reader, d: &mut Draft, o: &Opt) -> Result<(), FioJobError> {
    let v = o.value.as_deref().unwrap_or("").trim();
    let mut lists = v.split(',').map(str::trim);
    let reads = lists.next().unwrap_or("");
    // A write list left out (or blank) is the reads' (fio's rule); a
    // third (trims') is never used, as no trim is issued.
    let writes = lists.next().filter(|w| !w.is_empty()).unwrap_or(reads);
    let name = d.rw.split(':').next().unwrap_or("");
    let list = match name {
        "read" | "randread" => reads.to_string(),
        "write" | "randwrite" | "trimwrite" => writes.to_string(),
        _ => format!("{reads},{writes}"),
    };
    let size = |t: &str| fio_size(t, r.kb_base);
    let sizes =
        crate::measure::workload::Sizes::parse(&list, &size).or_else(|why| r.refuse(o, why))?;
    if let Some(b) = r.get("bs") {
        d.notes.push(format!(
            "{}: fio's bssplit= decides the sizes when given",
            show_text(&r.written(b))
        ));
    }
    if let Some(b) = r.get("bsrange") {
        split_bounds(r, d, b, &sizes)?;
    }
    d.bs = sizes.max();
    // One size (a write-only job's list `1m/100`) is --bs.
    if sizes.shares.len() == 1 && sizes.writes.is_none() {
        d.args.push(Set::Bs(d.bs));
        return Ok(());
    }
    d.args.push(Set::Bssplit(sizes.fio_spelling()));
    if let Some(a) = r.get("blockalign") {
        let av = a.value.as_deref().unwrap_or("");
        let mut parts = av.split(',').map(str::trim).filter(|p| !p.is_empty());
        let first = parts.next().unwrap_or("");
        if parts.any(|p| p != first) {
            return r.refuse(
                a,
                "aligns reads and writes apart; stripebench aligns both alike: give one size",
            );
        }
        let n = fio_size(first, r.kb_base).or_else(|why| r.refuse(a, why))?;
        if n == 0 {
            return r.refuse(a, "is 0: give an alignment such as 4k");
        }
        d.args.push(Set::Blockalign(n));
    }
    Ok(())
}

/// O_DIRECT or the page cache: the later of direct= and buffered= wins
/// (fio's default: buffered); uncached=1 on buffered I/O is
/// stripebench's third mode.
fn cache_mode(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let mut direct = false;
    for o in r
        .job
        .opts
        .iter()
        .filter(|o| o.key == "direct" || o.key == "buffered")
    {
        let on = match o.value.as_deref() {
            None | Some("1") => true,
            Some("0") => false,
            Some(_) => return r.refuse(o, "takes 0 or 1"),
        };
        direct = if o.key == "direct" { on } else { !on };
    }
    let uncached = !direct && r.rwf("uncached")?;
    d.direct = direct;
    d.args.push(match (direct, uncached) {
        (true, _) => Set::Direct,
        (false, true) => Set::Uncached,
        (false, false) => Set::Buffered,
    });
    Ok(())
}

/// fio's buffers: huge pages where it reserves them (mmaphuge, shmhuge),
/// else 4 KiB pages; ours follow. Not given, --hugepages auto holds: huge
/// from a bs of 128 KiB, said in a note.
fn buffers(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    match r.get("iomem").or_else(|| r.get("mem")) {
        Some(o) => {
            let v = o.value.as_deref().unwrap_or("");
            // `mmaphuge:/hugetlbfs/file`: the file is fio's business.
            let kind = v.split(':').next().unwrap_or("");
            match kind {
                "mmaphuge" | "shmhuge" => d.args.push(Set::HugePages(HugePages::On)),
                "malloc" | "mmap" | "mmapshared" | "shm" => {
                    d.args.push(Set::HugePages(HugePages::Off))
                }
                _ => return r.refuse(o, "names buffers stripebench cannot make (fio's iomem: malloc, mmap, mmapshared, shm, mmaphuge or shmhuge)"),
            }
        }
        None if HugePages::Auto.for_buffer(d.bs) != HugePages::Off => d.notes.push(
            "iomem (fio's default malloc, 4 KiB pages): stripebench's buffers are huge pages from a bs of 128 KiB (--hugepages auto), which a queue with few segments does not split as it splits fio's; add iomem=mmaphuge to the job for fio's huge pages, or iomem=malloc for 4 KiB pages here too".into(),
        ),
        None => {}
    }
    Ok(())
}

/// fio's fadvise_hint (1 unless given): POSIX_FADV_SEQUENTIAL, which
/// doubles a file's read-ahead, or POSIX_FADV_RANDOM, which turns it off.
/// stripebench gives no hint: the device's read_ahead_kb holds.
fn fadvise(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    if !d.direct {
        let hint = r.get("fadvise_hint").and_then(|o| o.value.clone());
        if !matches!(hint.as_deref(), Some("0" | "false" | "off" | "no")) {
            d.notes.push("fadvise_hint (fio's default 1): fio advises POSIX_FADV_SEQUENTIAL (twice the read-ahead) or RANDOM (none) for buffered I/O; stripebench gives no hint, the device's read_ahead_kb (--readahead) holds".into());
        }
    }
    Ok(())
}

/// fio's steady state (steadystate.c): judged over ss_dur (0, its default,
/// judges nothing), from ss_ramp, every ss_interval (1 s); stripebench's
/// --steady judges the run's total, as fio's group_reporting does.
fn steady(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let dur = r.time_of("steadystate_duration")?.filter(|t| !t.is_zero());
    let Some(o) = r.get("steadystate") else {
        return Ok(());
    };
    let Some(dur) = dur else {
        d.notes.push(format!(
            "{}: without ss_dur (its default 0) fio judges no steady state, nor does stripebench",
            show_text(&r.written(o))
        ));
        return Ok(());
    };
    let c = crate::analysis::steady::Criterion::parse(o.value.as_deref().unwrap_or(""))
        .or_else(|why| r.refuse(o, why))?;
    // fio's check interval is the interval of stripebench's figures.
    if let Some(i) = r.get("steadystate_check_interval") {
        let iv = r.time(i)?;
        if iv.is_zero() || dur < 2 * iv {
            return r.refuse(i, "leaves fewer than two figures in ss_dur: give an interval of at most half of ss_dur");
        }
        if iv != Duration::from_secs(1) {
            d.args.push(Set::LiveInterval(iv));
        }
    }
    d.args.push(Set::Steady(c.spelling()));
    d.args.push(Set::SteadyDur(dur));
    // fio counts ss_ramp from the job's start, ramp_time included;
    // stripebench's --steady-ramp from the window's opening, after --ramp.
    let ss_ramp = r.time_of("steadystate_ramp_time")?;
    let ramp = r.time_of("ramp_time")?;
    if let Some(ss_ramp) = ss_ramp {
        d.args.push(Set::SteadyRamp(
            ss_ramp.saturating_sub(ramp.unwrap_or_default()),
        ));
    }
    if r.get("group_reporting").is_none() {
        if let Some(n) = r
            .get("numjobs")
            .and_then(|o| o.value.as_deref())
            .filter(|n| *n != "1")
        {
            d.notes.push(format!("ss= without group_reporting: fio judges each of its {n} clones apart and stops each when steady; stripebench judges the run's total and stops the run"));
        }
    }
    Ok(())
}

/// How long: time based, or until size= (io_size=, loops=, number_ios=)
/// is done; the ramp; numjobs, which each of them bounds; and startdelay.
fn how_long(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    // fio's runtime=0 is no limit, as if not given.
    let runtime = r.time_of("runtime")?.filter(|t| !t.is_zero());
    let ramp = r.time_of("ramp_time")?;
    let time_based = r.flag("time_based")?.unwrap_or(false);
    if let Some(o) = r.get("ramp_time").filter(|_| !time_based) {
        if ramp.is_some_and(|t| !t.is_zero()) {
            return r.refuse(o, "without time_based: stripebench counts every I/O of a run bounded by size= (io_size=, loops=) from the start, with no ramp: add time_based and runtime=, or drop it");
        }
    }
    let numjobs = match r.get("numjobs") {
        Some(o) => match r.count(o)? {
            n @ 1..=4096 => Some((o, n)),
            _ => return r.refuse(o, "is not a count from 1 to 4096"),
        },
        None => None,
    };
    if let Some(t) = runtime.filter(|_| !d.sprandom) {
        d.args.push(Set::Duration(t));
    }
    let loops = match r.get("loops") {
        Some(o) => match r.count(o)? {
            0 => return r.refuse(o, "is 0: give loops=1 or more"),
            n => Some((o, n)),
        },
        None => None,
    };
    // fio's number_ios=0 and io_size=0 are its defaults: no such bound.
    let number_ios = match r.get("number_ios") {
        Some(o) => Some(r.count(o)?).filter(|&n| n > 0),
        None => None,
    };
    let io_size = match r.get("io_size") {
        Some(o) => Some(r.size(o)?).filter(|&n| n > 0).map(|n| (o, n)),
        None => None,
    };
    if d.sprandom {
        // fio's sprandom sets io_size= to the physical capacity itself.
        for key in ["time_based", "runtime", "io_size", "loops", "number_ios"] {
            if let Some(o) = r.get(key) {
                return r.refuse(o, "with sprandom=1: sprandom writes the physical capacity (size x (1 + spr_op)) once, then ends: drop it");
            }
        }
    } else if time_based {
        if runtime.is_none() {
            return r.refuse(
                r.get_or_first("time_based"),
                "without runtime= would run until stopped: give runtime=, such as runtime=60",
            );
        }
        // fio's keep_running() and do_io() go on while time_based, whatever
        // loops=, io_size= or number_ios= say (seen with fio 3.33: loops=3
        // size=1m time_based runtime=1 reads for the whole second): so
        // does this run, until runtime=.
        for key in ["loops", "io_size", "number_ios"] {
            if let Some(o) = r.get(key) {
                d.notes.push(format!(
                    "`{}` with time_based: fio runs until runtime= ends whatever it says, and so does this run",
                    show_text(&r.written(o))
                ));
            }
        }
    } else {
        let n_loops = loops.map_or(1, |(_, n)| n);
        if let Some((o, bytes)) = io_size {
            // fio's io_size is a byte count over the region of size=, round
            // it as many times as it takes: --io-limit, which wraps so.
            d.args.push(Set::IoLimit(bytes));
            // With loops=, fio's count depends on each job's region (a
            // region that holds io_size does it loops times; a smaller one
            // whole passes): --io-limit with --passes follows fio's rule,
            // worker by worker (measure::loops).
            if let Some((lo, n)) = loops.filter(|(_, n)| *n > 1) {
                d.args.push(Set::Passes(n));
                d.notes.push(format!("{} with {}: fio does io_size x loops where a job's region holds io_size (or its sequential write of io_size over size wraps round the region), and else whole passes over the region, loops of them or as many as reach io_size (a verify's reads counted in), as fio's current code does (fio 3.33 stopped a write of io_size over size after one io_size); so does each worker here (--io-limit with --passes)", show_text(&r.written(lo)), show_text(&r.written(o))));
            }
        } else {
            // fio does size= once (loops= times), then ends; runtime= caps it.
            // Each of numjobs' clones does so over the whole region: so do
            // stripebench's --jobs with --jobs-share, a pass each.
            d.args.push(Set::Passes(n_loops));
        }
        // fio stops a job at number_ios x loops I/Os (exceeds_number_ios()),
        // or at its other bound, whichever first: as --ios does.
        if let Some(n) = number_ios {
            match n.checked_mul(n_loops) {
                Some(total) => d.args.push(Set::Ios(total)),
                None => {
                    return r.refuse(
                        r.get_or_first("number_ios"),
                        "times loops= is too many I/Os: give a smaller count",
                    )
                }
            }
        }
    }
    if let Some(o) = r.get("startdelay") {
        let v = o.value.as_deref().unwrap_or("");
        let time = |t: &str| fio_time(t).or_else(|why| r.refuse(o, why));
        // fio's irange: a time, or A-B.
        let (lo, hi) = match v.split_once('-') {
            Some((a, b)) => (time(a)?, time(b)?),
            None => (time(v)?, time(v)?),
        };
        if lo > hi {
            return r.refuse(
                o,
                "is a range from a longer time to a shorter one: give A-B with A at most B",
            );
        }
        if !hi.is_zero() {
            if lo != hi {
                d.notes.push(format!("`{}`: fio draws each job's delay from the range; this run draws one (from --seed), and all its workers start together after it", show_text(&r.written(o))));
            }
            d.args.push(Set::StartDelay(lo, hi));
        }
    }
    // fio's default ramp is none; stripebench's is 1 s: always say it.
    d.args.push(Set::Ramp(ramp.unwrap_or_default()));
    // fio's numjobs clones each cover the job's whole region: stripebench's
    // --jobs with --jobs-share.
    if let Some((_, n)) = numjobs.filter(|(_, n)| *n > 1) {
        d.args.push(Set::Jobs(n as usize));
        d.args.push(Set::JobsShare);
    }
    Ok(())
}

/// The engine (fio's default: psync) and its depth.
fn engine(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let engine_opt = r.get("ioengine");
    let engine = engine_opt
        .and_then(|o| o.value.as_deref())
        .unwrap_or("psync");
    let depth = match r.get("iodepth") {
        Some(o) => match r.count(o)? {
            n @ 1..=4096 => n,
            _ => return r.refuse(o, "is not a queue depth from 1 to 4096"),
        },
        None => 1,
    };
    d.engine = engine.to_string();
    d.depth = depth;
    let fixedbufs = r.flag("fixedbufs")?.unwrap_or(false);
    let registerfiles = r.flag("registerfiles")?.unwrap_or(false);
    let sync = matches!(engine, "psync" | "sync" | "pvsync" | "pvsync2");
    // The option that registers: fixedbufs where given, else registerfiles.
    let registering = || {
        r.get("fixedbufs")
            .or(r.get("registerfiles"))
            .unwrap_or(&r.job.opts[0])
    };
    if !matches!(engine, "io_uring") && (fixedbufs || registerfiles) {
        return r.refuse(
            registering(),
            "is io_uring's: give ioengine=io_uring, or drop it",
        );
    }
    match engine {
        _ if sync => {
            d.args.push(Set::Engine(EngineArg::Sync));
            if depth > 1 {
                d.notes.push(format!("iodepth={depth} with ioengine={engine}: fio's sync engines keep one I/O in flight, so does stripebench's"));
            }
        }
        _ if super::one_at_a_time(engine, d.direct, depth).is_some() => {
            match super::one_at_a_time(engine, d.direct, depth) {
                Some(Ok(said)) => {
                    d.args.push(Set::Engine(EngineArg::Sync));
                    d.notes.push(said);
                }
                refused => {
                    let o = engine_opt.unwrap_or(&r.job.opts[0]);
                    let why = refused.and_then(Result::err).unwrap_or_default();
                    return r.refuse(o, why);
                }
            }
        }
        "io_uring" => {
            d.args.push(Set::Engine(EngineArg::Uring));
            d.args.push(Set::Iodepth(depth as usize));
            match (fixedbufs, registerfiles) {
                (true, true) => {}
                (false, false) => d.args.push(Set::NoRegister),
                _ => {
                    return r.refuse(registering(), "alone: stripebench registers the buffers and the file together, or neither (--no-register): give both fixedbufs and registerfiles, or neither");
                }
            }
        }
        "libaio" => {
            // With direct=0 it is one of those fio runs one at a time, above.
            d.args.push(Set::Engine(EngineArg::Uring));
            d.args.push(Set::Iodepth(depth as usize));
            d.args.push(Set::NoRegister);
            d.notes.push("ioengine=libaio is run with io_uring (stripebench has no libaio engine; both keep iodepth O_DIRECT I/Os in flight)".into());
        }
        _ => {
            let o = engine_opt.unwrap_or(&r.job.opts[0]);
            let said =
                fio_words::explain(&r.written(o), "ioengine", Some(engine)).unwrap_or_default();
            return Err(FioJobError(format!(
                "{}: {said}; stripebench cannot honour it",
                r.at(o)
            )));
        }
    }
    Ok(())
}

/// io_uring's ring options: polled completions, a polling thread.
fn ring(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let uring = d.uring();
    if r.flag("hipri")?.unwrap_or(false) {
        if !uring {
            return r.refuse(
                r.get_or_first("hipri"),
                "polls io_uring completions: give ioengine=io_uring, or drop it",
            );
        }
        d.args.push(Set::Hipri);
    }
    if r.flag("sqthread_poll")?.unwrap_or(false) {
        if !uring {
            return r.refuse(
                r.get_or_first("sqthread_poll"),
                "is io_uring's: give ioengine=io_uring, or drop it",
            );
        }
        match r.get("sqthread_poll_cpu") {
            Some(c) => d.args.push(Set::Sqpoll(Some(r.count(c)?))),
            None => d.args.push(Set::Sqpoll(None)),
        }
    } else if let Some(o) = r.get("sqthread_poll_cpu") {
        return r.refuse(o, "without sqthread_poll=1: give both, or neither");
    }
    Ok(())
}

/// fio's iodepth_batch_complete_min (iodepth_batch_complete, its old
/// name, one option): how many completions each wait asks for; the last
/// one given holds, as in fio.
fn completions(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let uring = d.uring();
    let batch = r.job.opts.iter().rev().find(|o| {
        matches!(
            o.key.as_str(),
            "iodepth_batch_complete_min" | "iodepth_batch_complete"
        )
    });
    // Not given, it is fio's default, 1 (stripebench's own is auto): the
    // job runs as fio runs it. 0 ("do not wait", fio's HOWTO pairs it with
    // iodepth_batch_complete_max) is a wait for at least one here, as any
    // io_uring_enter that waits. An engine other than io_uring has no wait.
    let mut n = 1;
    if let Some(o) = batch {
        n = r.count(o)?;
        if n > 1 && !uring {
            return r.refuse(
                o,
                "waits for several completions of io_uring: give ioengine=io_uring, or drop it",
            );
        }
        if n > d.depth {
            return r.refuse(o, "is more than iodepth: fio cannot wait for more I/Os than it keeps in flight; give at most iodepth");
        }
    }
    // libaio runs on io_uring too, and fio's libaio waits for one as well.
    if uring || (d.engine == "libaio" && d.direct) {
        d.args.push(Set::CompleteMin(n.max(1)));
    }
    Ok(())
}

/// The RWF_* flags, which fio sets on io_uring and pvsync2 (uncached=
/// is read by [`cache_mode`], and its engine checked here).
fn rwf_flags(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    for key in ["nowait", "uncached"] {
        if r.rwf(key)? && !d.uring() && d.engine != "pvsync2" {
            return r.refuse(r.get_or_first(key), "is an RWF_* flag, which fio sets with ioengine=io_uring or pvsync2: give one of those, or drop it");
        }
    }
    if r.rwf("nowait")? {
        d.args.push(Set::Nowait);
    }
    Ok(())
}

/// fio's I/O priorities: the job's (prioclass, prio: ioprio_set on the
/// thread) and its commands' (cmdprio_percentage of the I/Os at
/// cmdprio_class, default realtime as fio's cmdprio.c, and cmdprio).
fn priorities(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    use crate::base::thread_setup::{CmdPrio, IoPrio};
    // One value for reads and writes: fio's `READ,WRITE` form would need
    // a priority per direction, which stripebench has not.
    let one = |key: &str| -> Result<Option<(&Opt, String)>, FioJobError> {
        let Some(o) = r.get(key) else { return Ok(None) };
        let v = o.value.as_deref().unwrap_or("").trim().to_string();
        match v.split_once(',') {
            Some((a, b)) if a.trim() != b.trim() => r.refuse(o, "gives reads and writes their own priority, which stripebench does not: give one value"),
            Some((a, _)) => Ok(Some((o, a.trim().to_string()))),
            None => Ok(Some((o, v))),
        }
    };
    let class = one("prioclass")?;
    let level = one("prio")?;
    if class.is_some() || level.is_some() {
        let text = format!(
            "{},{}",
            class.as_ref().map_or("2", |(_, c)| c.as_str()),
            level.as_ref().map_or("0", |(_, l)| l.as_str())
        );
        let o = class
            .as_ref()
            .or(level.as_ref())
            .map(|(o, _)| *o)
            .expect("one is set");
        let p = IoPrio::parse(&text).or_else(|e| r.refuse(o, e))?;
        if class.is_none() {
            d.notes.push(format!("prio= without prioclass=: fio asks for class 0 (none) at that level, which the kernel runs as best-effort; stripebench asks for best-effort, level {}", p.level));
        }
        d.args.push(Set::IoPrio(p));
    }
    let pct = one("cmdprio_percentage")?;
    let cclass = one("cmdprio_class")?;
    let clevel = one("cmdprio")?;
    let chint = one("cmdprio_hint")?;
    if let Some(o) = r.get("cmdprio_bssplit") {
        return cmdprio_bssplit(r, d, o, [&pct, &cclass, &clevel, &chint]);
    }
    if let Some((o, _)) = &chint {
        return r.refuse(o, "gives a hint, which stripebench sends only with cmdprio_bssplit=: drop it, or give the sizes' priorities in cmdprio_bssplit=");
    }
    match pct {
        None => {
            if let Some((o, _)) = cclass.as_ref().or(clevel.as_ref()) {
                return r.refuse(o, "needs cmdprio_percentage= or cmdprio_bssplit=: give the share of I/Os it is for");
            }
        }
        Some((o, pct)) => {
            if pct.trim() == "0" {
                return Ok(());
            }
            let text = format!(
                "{pct}:{},{}",
                cclass.as_ref().map_or("1", |(_, c)| c.as_str()),
                clevel.as_ref().map_or("0", |(_, l)| l.as_str())
            );
            let c = CmdPrio::parse(&text).or_else(|e| r.refuse(o, e))?;
            cmdprio_engine(r, d, o)?;
            if r.flag("log_prio")? == Some(true) {
                d.notes.push(format!("log_prio=1 with cmdprio_percentage={}: fio logs each I/O's own priority; stripebench's log lines are intervals, and write the job's (prioclass) on each: the share issued at cmdprio_class is workers[].cmdprio_ios in the JSON", c.pct));
            }
            d.args.push(Set::CmdPrio(c));
        }
    }
    Ok(())
}

/// fio sets a command's priority with ioprio engines only: io_uring, and
/// libaio with direct=1 (which runs as io_uring here).
fn cmdprio_engine(r: &Reader, d: &Draft, o: &Opt) -> Result<(), FioJobError> {
    if !(d.uring() || (d.engine == "libaio" && d.direct)) {
        return r.refuse(o, "sets each command's priority, which fio does with ioengine=io_uring or libaio (direct=1): give one of those, or use prioclass= for every I/O");
    }
    Ok(())
}

/// fio's cmdprio_bssplit: `--cmdprio-bssplit`, each entry given its
/// class, level and hint (an entry of the simple form takes
/// cmdprio_class, default realtime as fio's cmdprio.c, cmdprio and
/// cmdprio_hint). fio refuses it beside cmdprio_percentage; so does this.
fn cmdprio_bssplit(
    r: &Reader,
    d: &mut Draft,
    o: &Opt,
    [pct, class, level, hint]: [&Option<(&Opt, String)>; 4],
) -> Result<(), FioJobError> {
    if let Some((p, _)) = pct {
        return r.refuse(
            p,
            "and cmdprio_bssplit= exclude each other in fio: give one",
        );
    }
    let num = |v: &Option<(&Opt, String)>, max: u32, dflt: u32| -> Result<u32, FioJobError> {
        match v {
            None => Ok(dflt),
            Some((k, t)) => match t.parse::<u32>() {
                Ok(n) if n <= max => Ok(n),
                _ => r.refuse(k, format!("is not 0 to {max}")),
            },
        }
    };
    use crate::base::thread_setup::{prio_value, CmdPrioSplit};
    let implicit = prio_value(
        num(class, 3, 1)? as u8,
        num(level, 7, 0)? as u8,
        num(hint, 1023, 0)? as u16,
    );
    let v = o.value.as_deref().unwrap_or("").trim();
    let size = |t: &str| fio_size(t, r.kb_base);
    let split = CmdPrioSplit::parse(v, &size, implicit).or_else(|e| r.refuse(o, e))?;
    cmdprio_engine(r, d, o)?;
    if split.reads.is_empty() && split.writes.is_empty() {
        // Every entry 0%: fio sets no priority on any command.
        return Ok(());
    }
    d.args.push(Set::CmdPrioSplit(split));
    Ok(())
}

/// fio's NUMA placement: the nodes whose CPUs the job runs on, and its
/// memory policy (checked against the machine's nodes when the run is
/// validated).
fn numa(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    use crate::base::thread_setup::{parse_node_list, MemPolicy};
    if let Some(o) = r.get("numa_cpu_nodes") {
        let nodes =
            parse_node_list(o.value.as_deref().unwrap_or("")).or_else(|e| r.refuse(o, e))?;
        d.args.push(Set::NumaNodes(nodes));
    }
    if let Some(o) = r.get("numa_mem_policy") {
        let p = MemPolicy::parse(o.value.as_deref().unwrap_or("")).or_else(|e| r.refuse(o, e))?;
        d.args.push(Set::NumaMem(p));
    }
    Ok(())
}

/// A fixed schedule: one rate for reads and writes alike.
fn rate(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    for key in ["rate", "rate_iops"] {
        let Some(o) = r.get(key) else { continue };
        let v = o.value.as_deref().unwrap_or("");
        // fio's reads,writes,trims: one value caps each direction at it,
        // an empty one leaves its direction free, a missing one takes the
        // last given (fio's str_split_parse). A trim job (rw=trim,
        // randtrim) is capped by the trims' value; the others do no trims,
        // so theirs is ignored, as fio ignores it for a job that does none.
        let parts: Vec<&str> = v.split(',').collect();
        let each = |i: usize| -> Result<u64, FioJobError> {
            let p = parts.get(i).or(parts.last()).copied().unwrap_or("");
            if p.is_empty() {
                return Ok(0);
            }
            let one = Opt {
                value: Some(p.to_string()),
                ..o.clone()
            };
            if key == "rate" {
                r.size(&one)
            } else {
                r.count(&one)
            }
        };
        if parts.len() > 3 {
            return r.refuse(
                o,
                "has more than three values (reads, writes, trims): give at most three",
            );
        }
        let trims = d.rw.contains("trim");
        let (reads, writes) = (each(0)?, if trims { each(2)? } else { each(1)? });
        let mixes = matches!(d.rw.as_str(), "randrw" | "rw" | "readwrite");
        let share = if mixes {
            d.mix
        } else if d.rw.contains("read") {
            100
        } else {
            0
        };
        let total = match share {
            100 => reads,
            0 => writes,
            _ if reads == 0 && writes == 0 => 0,
            m if reads == 0 || writes == 0 => {
                return r.refuse(o, format!("caps only the {} of a mix, which fio lets run free: stripebench's --rate schedules reads and writes together; give both a rate, in the mix's proportion ({m}:{}), or run this job with fio", if reads == 0 { "writes" } else { "reads" }, 100 - m));
            }
            // Reads at m% of a total T are T*m/100: the caps name one
            // total when reads*(100-m) == writes*m, and it is their sum
            // (fio's two schedules then keep the mix, as measured with
            // fio 3.42: rate=400k,400k with rw=randrw did 400 KiB/s each).
            m if reads * (100 - m) == writes * m => reads + writes,
            m => {
                return r.refuse(o, format!("caps reads and writes out of the mix's proportion ({m}:{}), which fio meets by letting the mix drift: stripebench's --rate schedules reads and writes together at the mix; give the rates in proportion, or run this job with fio", 100 - m));
            }
        };
        match (key, total) {
            (_, 0) => {}
            ("rate", b) => d.args.push(Set::Rate(b)),
            (_, n) => d.args.push(Set::RateIops(n)),
        }
    }
    Ok(())
}

/// fio's thinktime= family (backend.c `handle_thinktime`): after every
/// thinktime_blocks I/Os, the job waits for all in flight, spins
/// thinktime_spin, and sleeps the rest. Times without a unit are
/// microseconds, as fio reads them.
fn think(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    // The command line's bound (a year) holds here too: the run's own
    // --thinktime refuses more.
    let us = |o: &Opt| -> Result<Duration, FioJobError> {
        let t = match o.value.as_deref().map(str::parse::<u64>) {
            Some(Ok(n)) => Duration::from_micros(n),
            _ => r.time(o)?,
        };
        if t > Duration::from_secs(365 * 86400) {
            return r.refuse(o, "is longer than a year: give a pause of at most a year");
        }
        Ok(t)
    };
    let time = match r.get("thinktime") {
        Some(o) => us(o)?,
        None => Duration::ZERO,
    };
    if time.is_zero() {
        // fio's default, and what its companions need to mean anything.
        return Ok(());
    }
    let o = r.get_or_first("thinktime");
    if let Some(rate) = r.get("rate").or(r.get("rate_iops")) {
        return r.refuse(o, format!("with `{}`: stripebench's --rate latencies run from each I/O's due time and would count every pause as lateness: drop one of them, or run this job with fio", show_text(&r.written(rate))));
    }
    if let Some(io) = r.get("thinktime_iotime") {
        if us(io)? > Duration::ZERO {
            return r.refuse(io, "pauses by time spent issuing, which stripebench does not: drop it (a pause after every thinktime_blocks I/Os remains), or run this job with fio");
        }
    }
    d.args.push(Set::Thinktime(time));
    if let Some(o) = r.get("thinktime_spin") {
        match us(o)? {
            s if s > time => return r.refuse(o, "is longer than thinktime, of which it is the spinning part: give a spin no longer than thinktime"),
            s if s.is_zero() => {}
            s => d.args.push(Set::ThinktimeSpin(s)),
        }
    }
    if let Some(o) = r.get("thinktime_blocks") {
        match r.count(o)? {
            0 | 1 => {}
            n => d.args.push(Set::ThinktimeBlocks(n)),
        }
    }
    if let Some(o) = r.get("thinktime_blocks_type") {
        match o.value.as_deref() {
            Some("complete") => {}
            Some("issue") => d.args.push(Set::ThinktimeOnIssue),
            _ => {
                return r.refuse(
                    o,
                    "is not complete or issue: give one of them (fio's default is complete)",
                )
            }
        }
    }
    d.notes.push(format!(
        "thinktime={}us: each worker pauses between its I/Os; the throughput and IOPS include the pauses, as fio's do, and the latencies are the I/Os' own",
        time.as_micros()
    ));
    Ok(())
}

/// fio's latency_target= family (io_u.c `lat_target_*`): the job searches
/// for the deepest queue, from 1 to its iodepth, at which
/// latency_percentile of each latency_window's I/Os complete within the
/// target, and stops once it settled (unless latency_run=1). Times without
/// a unit are microseconds, as fio reads them.
fn latency_search(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let us = |o: &Opt| -> Result<Duration, FioJobError> {
        match o.value.as_deref().map(str::trim).map(str::parse::<u64>) {
            Some(Ok(n)) => Ok(Duration::from_micros(n)),
            _ => r.time(o),
        }
    };
    let target = match r.get("latency_target") {
        Some(o) => us(o)?,
        None => Duration::ZERO,
    };
    if target.is_zero() {
        // fio's default: no search, and its companions mean nothing.
        return Ok(());
    }
    let o = r.get_or_first("latency_target");
    let window = match r.get("latency_window") {
        Some(w) => us(w)?,
        None => Duration::ZERO,
    };
    if window.is_zero() {
        return r.refuse(o, "without latency_window (fio's default of 0 judges the few I/Os of each completion batch, a window stripebench does not keep): give latency_window=, e.g. latency_window=1s");
    }
    d.args.push(Set::LatencyTarget(target));
    d.args.push(Set::LatencyWindow(window));
    if let Some(p) = r.get("latency_percentile") {
        match p.value.as_deref().map(str::trim).map(str::parse::<f64>) {
            Some(Ok(v)) if v > 0.0 && v <= 100.0 => {
                if v < 100.0 {
                    d.args.push(Set::LatencyPercentile(v.to_string()));
                }
            }
            _ => return r.refuse(
                p,
                "is not a percentage above 0 and at most 100: give e.g. latency_percentile=99.9",
            ),
        }
    }
    if r.flag("latency_run")? == Some(true) {
        d.args.push(Set::LatencyRun);
    }
    d.notes.push(format!(
        "latency_target={}us: each worker searches for its queue depth from 1 up to iodepth, window by window (the table's \"latency target\" lines, and workers[].latency_search in the JSON); fio reports only the settled depth's final window, stripebench's figures cover every window, the final one's in its line",
        target.as_micros()
    ));
    Ok(())
}

/// fio's minimum rate: the job fails when a cycle of rate_cycle ms falls
/// below it (backend.c `check_min_rate`); with both, fio checks rate_min
/// only, and so does stripebench (said in a note).
fn rate_min(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let mut any = false;
    for key in ["rate_min", "rate_iops_min"] {
        let Some(o) = r.get(key) else { continue };
        if o.value.as_deref().unwrap_or("").contains(',') {
            return r.refuse(
                o,
                "gives reads and writes their own minimum, which stripebench does not: give one minimum",
            );
        }
        let n = if key == "rate_min" {
            r.size(o)?
        } else {
            r.count(o)?
        };
        if n == 0 {
            continue;
        }
        if any {
            d.notes.push(format!(
                "{key}={n}: fio checks rate_min alone when both are given, and so does stripebench"
            ));
            continue;
        }
        any = true;
        d.args.push(if key == "rate_min" {
            Set::RateMin(n)
        } else {
            Set::RateIopsMin(n)
        });
    }
    if let Some(o) = r.get("rate_cycle") {
        let ms = r.count(o)?;
        if ms == 0 {
            return r.refuse(
                o,
                "is a cycle of no time: give milliseconds above 0 (fio's default is 1000)",
            );
        }
        if any && ms != 1000 {
            d.args.push(Set::RateCycle(Duration::from_millis(ms)));
        }
    }
    Ok(())
}

/// The region of each file.
fn region(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    for key in ["size", "offset", "offset_increment"] {
        let Some(o) = r.get(key) else { continue };
        if o.value.as_deref().is_some_and(|v| v.contains('%')) {
            return r.refuse(
                o,
                "is a share of the file, which stripebench does not take: give bytes, such as 1g",
            );
        }
        let n = r.size(o)?;
        if key == "offset_increment" {
            // fio moves each of numjobs' clones on by it (its
            // subjob_number): with one job there is nothing to move.
            let jobs = d.args.iter().any(|a| matches!(a, Set::Jobs(n) if *n > 1));
            if n > 0 && jobs {
                d.args.push(Set::OffsetIncrement(n));
            } else if n > 0 {
                d.notes.push(format!(
                    "{}: fio moves numjobs' clones apart by it, and this job has one",
                    show_text(&r.written(o))
                ));
            }
        } else if key == "size" {
            d.args.push(Set::Size(n));
        } else if n > 0 {
            d.args.push(Set::Offset(n));
        }
    }
    file_size(r, d)
}

/// filesize= on its own (no size=): the job's region is the file's first
/// filesize bytes, and a file that is not there is made that size, as fio
/// lays it out (`--create`).
fn file_size(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let Some(o) = r.get("filesize") else {
        return Ok(());
    };
    let v = o.value.as_deref().unwrap_or("");
    if let Some(s) = r.get("size") {
        // fio caps size= at the sum of its files' sizes (filesetup.c
        // setup_files: `o->size > total_size` becomes the total), so on
        // one file a size= of at least filesize= is filesize= alone. A
        // smaller one does size= bytes of I/O over the whole file, and
        // several files share it: neither is one region per file.
        let one_file = r
            .get("filename")
            .is_none_or(|f| !f.value.as_deref().unwrap_or("").contains(':'))
            && r.get("nrfiles")
                .is_none_or(|n| n.value.as_deref() == Some("1"));
        let plain = !v.contains(['-', ':', '%']);
        let bigger = plain && one_file && r.size(s)? >= r.size(o)?;
        if !bigger {
            return r.refuse(o, "with a size= below it, or on several files: fio's job then does size= bytes over files of filesize= each, which stripebench's one region per file (--size) does not say: give one of them");
        }
        d.args.retain(|a| !matches!(a, Set::Size(_)));
        d.notes.push(format!(
            "{}: fio caps size= at the files' sizes (here one file of {}), so the job's region and its bytes are the file's",
            show_text(&r.written(s)),
            show_text(&r.written(o))
        ));
    }
    if v.contains('-') || v.contains(':') {
        return r.refuse(
            o,
            "is a range: fio gives each file a size drawn from it; give one size, such as 256k",
        );
    }
    if v.contains('%') {
        return r.refuse(o, "is a share, not a size: give bytes, such as 1g");
    }
    let n = r.size(o)?;
    if n == 0 {
        return r.refuse(o, "is 0: give the file's size, such as 256k");
    }
    d.args.push(Set::Size(n));
    d.args.push(Set::Create(n));
    d.notes.push(format!("{}: the job uses the file's first {} (--size); a file named that is not there is made that size before the run, as fio lays it out (random data, unless fallocate= or create_on_open= say otherwise: --create-layout), and written to as stripebench's own (--create); one that exists is used as it is, and writing to it needs --allow-destructive", r.written(o), crate::base::units::fmt_bytes(n)));
    Ok(())
}

/// CPUs: stripebench pins each worker to one CPU of the list.
fn cpus(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let Some(o) = r.get("cpus_allowed") else {
        // fio pins nothing unless told; stripebench pins unless told.
        d.args.push(Set::NoPin);
        return Ok(());
    };
    let v = o.value.as_deref().unwrap_or("");
    let cpus = crate::base::cpus::parse_cpu_list(v)
        .map_err(|e| FioJobError(format!("{}: {e}", r.at(o))))?;
    let split = match r.get("cpus_allowed_policy") {
        None => false,
        Some(p) => match p.value.as_deref() {
            Some("split") => true,
            Some("shared") => false,
            _ => return r.refuse(p, "is not shared or split"),
        },
    };
    if cpus.len() > 1 && !split {
        return r.refuse(o, "lets each fio job run on any of these CPUs; stripebench pins each worker to one of them in turn (fio's cpus_allowed_policy=split): add cpus_allowed_policy=split to say that is meant");
    }
    // fio reads `0, 2` as `0,2`: the list without its spaces.
    let v: String = v.split_whitespace().collect();
    d.args.push(Set::Cpus(v));
    Ok(())
}

/// The seed, and random offsets: stripebench's are fio's norandommap
/// randrepeat=0.
fn random_offsets(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    if let Some(o) = r.get("randseed") {
        d.args.push(Set::Seed(r.count(o)?));
    }
    let map = r.flag("norandommap")?;
    if d.sprandom {
        if map == Some(false) {
            return r.refuse(r.get_or_first("norandommap"), "with sprandom=1: fio refuses it (\"sprandom requires norandommap=1\"): give norandommap=1, or drop it");
        }
        d.notes.push("sprandom=1: each region's writes are new blocks (each once, as fio's LFSR gives them) and the last region's blocks written again with its invalidation share; the physical capacity written once, then the run ends".into());
        return repeatable(r, d);
    }
    if let Some(o) = r
        .get("random_generator")
        .filter(|o| o.value.as_deref() == Some("lfsr"))
    {
        // fio's LFSR visits every block once per pass by construction,
        // random map or not; with a distribution other than uniform, or a
        // run of sequential I/Os, fio draws those instead.
        let shaped =
            (d.args.iter()).any(|a| matches!(a, Set::Dist(_) | Set::SeqRun(_) | Set::Bssplit(_)));
        if d.random && !shaped {
            d.args.push(Set::RandomMap);
            d.notes.push("random_generator=lfsr: every block once a pass, in an order drawn per pass (--random-map; fio's LFSR order is its own, the blocks visited the same)".into());
            return repeatable(r, d);
        }
        if !d.random {
            d.notes.push("random_generator=lfsr: the pattern is sequential, so fio draws no random offset with it".into());
        } else {
            return r.refuse(o, "with a shaped random pattern (random_distribution, a sequential run, bssplit): fio then draws the shape's offsets, not the LFSR's; drop random_generator=lfsr, or run this job with fio");
        }
    }
    if verified_random_write(r, d) {
        // Its read-back reads every block, so each is written once a pass.
        d.notes.push(if d.rw == "randrw" {
            "rw=randrw with verify=: every block is read or written once a pass, in an order drawn afresh each pass, as fio's default random map does".into()
        } else {
            "rw=randwrite with verify=: every block is written once a pass, in an order drawn afresh each pass, as fio's default random map does".into()
        });
        if map == Some(true) {
            d.notes.push("norandommap with verify=: fio may then write a block twice and checks the last write; stripebench keeps its map for a verified write, as its read-back checks every block".into());
        }
    } else if map == Some(false) {
        return r.refuse(r.get_or_first("norandommap"), "asks for fio's random map (every block once per pass); stripebench draws each offset afresh (fio's norandommap), and keeps the map only for a verified rw=randwrite: give norandommap, or drop it");
    } else if d.random && map != Some(true) {
        d.notes.push("random offsets are drawn afresh, as fio's norandommap: fio's default random map (every block once per pass) is not kept".into());
    }
    repeatable(r, d)
}

/// fio's randrepeat=1 without a randseed: its default seed.
fn repeatable(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    if r.flag("randrepeat")? == Some(true) && r.get("randseed").is_none() {
        let (seed, said) = super::repeatable_seed();
        d.args.push(Set::Seed(seed));
        d.notes.push(said);
    }
    Ok(())
}

/// `wait_for=NAME`: the group it starts is read from the file by
/// `groups`; here only that it names a job.
fn wait_for(r: &Reader, _: &mut Draft) -> Result<(), FioJobError> {
    match r.get("wait_for") {
        Some(o) if o.value.as_deref().is_none_or(str::is_empty) => {
            r.refuse(o, "names no job: give wait_for=NAME, a job above it")
        }
        Some(o) if o.value.as_deref() == Some(r.job.name.as_str()) => r.refuse(
            o,
            "names the job itself, which fio would wait for forever: name a job above it",
        ),
        _ => Ok(()),
    }
}

/// Flags that change nothing here (what they ask, stripebench does, or
/// the group they start is read from the file by `groups`), checked as
/// 0 or 1; and invalidate=0, which asks to keep the page cache.
fn plain_flags(r: &Reader, _: &mut Draft) -> Result<(), FioJobError> {
    for key in [
        "refill_buffers",
        "scramble_buffers",
        "thread",
        "group_reporting",
        "stonewall",
        "new_group",
    ] {
        r.flag(key)?;
    }
    if r.flag("invalidate")? == Some(false) {
        let o = r.get_or_first("invalidate");
        let said = fio_words::explain(&r.written(o), "invalidate", Some("0")).unwrap_or_default();
        return Err(FioJobError(format!("{}: {said}", r.at(o))));
    }
    Ok(())
}

/// How fio lays out a file it makes (filesetup.c extend_file): for a job
/// that reads, it preallocates (fallocate=) and then writes every byte;
/// for one that only writes, it preallocates by fallocate= and writes
/// nothing (none: an empty file its writes extend; truncate: sparse at its
/// size; native, posix: allocated; keep: allocated, its size 0 until
/// written). With create_on_open=1 it makes the file at its first I/O
/// (O_CREAT) and lays nothing out. `--create-layout`, for the file
/// `--create` makes (a job that only writes: fio's default, native);
/// without one, they change nothing.
fn layout(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    use crate::device::scratch::CreateLayout;
    let created = d.args.iter().any(|a| matches!(a, Set::Create(_)));
    // fio writes every byte of a file it makes for a job that reads, or
    // that writes with overwrite=1 (filesetup.c extend_file's new_layout).
    let reads = !matches!(d.rw.as_str(), "write" | "randwrite" | "trim" | "randtrim")
        || r.flag("overwrite")? == Some(true);
    if let Some(o) = r.get("fallocate") {
        let v = o.value.as_deref().unwrap_or("");
        let (asked, how) = match v {
            "none" | "0" => (CreateLayout::Sparse, "fio makes an empty file its writes extend; stripebench makes it sparse at its size (--create-layout sparse), which holds no block until written either"),
            "truncate" => (CreateLayout::Sparse, "fio sizes the file and allocates nothing (--create-layout sparse)"),
            "native" | "posix" | "1" => (CreateLayout::Allocate, "fio allocates the file's blocks and writes none (--create-layout allocate)"),
            "keep" => (CreateLayout::Allocate, "fio allocates the file's blocks keeping its size 0 until written; stripebench allocates them at the file's size (--create-layout allocate)"),
            _ => return r.refuse(o, "is not none, native, posix, keep or truncate"),
        };
        let written = r.written(o);
        let said = show_text(&written);
        if !created {
            d.notes.push(format!("{said}: how fio preallocates a file it makes; stripebench makes no file here (the target is a device, or several files), so it changes nothing"));
        } else if reads && r.flag("create_on_open")? != Some(true) {
            d.notes.push(format!("{said}: fio preallocates, then writes every byte of a file a job reads, as stripebench's --create does: it changes nothing here"));
        } else {
            d.args.push(Set::CreateLayout(asked));
            d.notes.push(format!("{said}: {how}"));
        }
    }
    if let Some(o) = r.get("overwrite") {
        r.flag("overwrite")?;
        d.notes.push(format!("{}: whether fio writes a file it makes out in full before a job that only writes; stripebench does as fio does (--create-layout), and uses a file that is there as it is", show_text(&r.written(o))));
    }
    if created && !reads && r.get("fallocate").is_none() {
        // fio's default on Linux is fallocate=native.
        d.args.push(Set::CreateLayout(CreateLayout::Allocate));
        d.notes.push("a job that only writes: fio lays a file it makes out by its default fallocate=native, its blocks allocated and none written; so does stripebench (--create-layout allocate)".to_string());
    }
    if r.flag("create_on_open")? == Some(true) {
        let o = r.get_or_first("create_on_open");
        let written = r.written(o);
        let said = show_text(&written);
        if !created {
            d.notes.push(format!("{said}: fio opens the file with O_CREAT at its first I/O; stripebench makes no file here (the target is a device, or several files), so it changes nothing"));
        } else {
            d.args.retain(|a| !matches!(a, Set::CreateLayout(_)));
            d.args.push(Set::CreateLayout(CreateLayout::Sparse));
            d.notes.push(format!("{said}: fio makes the file at its first I/O (O_CREAT) and lays nothing out; stripebench makes it sparse at its size before the run (--create-layout sparse): reads of blocks not written yet read holes (zeros no medium stored)"));
        }
    }
    Ok(())
}

/// fio's fill_device=1: a write to the end of the device (`--fill-device`,
/// which refuses a file at the run: fio grows one until ENOSPC);
/// create_serialize, how fio lays out files, which changes nothing here;
/// and allow_file_create=0, fio making no file that is not there.
fn fill_device(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    if r.flag("allow_file_create")? == Some(false) {
        let o = r.get_or_first("allow_file_create");
        // filesize='s file is the only one stripebench makes (--create).
        let created = d.args.iter().any(|a| matches!(a, Set::Create(_)));
        d.args.retain(|a| !matches!(a, Set::Create(_)));
        d.notes.push(format!(
            "{}: fio makes no file that is not there; {}",
            show_text(&r.written(o)),
            if created {
                "nor does stripebench here (no --create): a filename= not there is refused"
            } else {
                "stripebench makes none here either, so it changes nothing"
            }
        ));
    }
    if r.flag("create_serialize")?.is_some() {
        let o = r.get_or_first("create_serialize");
        d.notes.push(format!("{}: whether fio lays out the jobs' files one job at a time; stripebench makes a missing file (--create) before the run, outside its figures, so it changes nothing here", show_text(&r.written(o))));
    }
    if r.flag("fill_device")? != Some(true) {
        return Ok(());
    }
    let o = r.get_or_first("fill_device");
    if d.rw != "write" {
        return r.refuse(o, format!("with rw={}: fio fills the device (or file system) before it does anything else, which stripebench does not do: run a job of rw=write and fill_device=1 first", d.rw));
    }
    // fio's size is then the device's (it sets size= aside).
    d.args
        .retain(|a| !matches!(a, Set::Size(_) | Set::Create(_)));
    d.args.push(Set::FillDevice);
    d.notes.push(format!("{}: fio writes until the device is full; on a block device so does stripebench, from offset= to its end (--fill-device), the same bytes; on a file both write it in order from offset= until its file system says no space is left (ENOSPC), the write that found it full no error and its bytes not counted (fio counts it among its I/Os, one more than stripebench's), making the file if it is not there; the file system stays full until the file is removed", show_text(&r.written(o))));
    Ok(())
}

/// fio's exitall= and exit_what=: read here, honoured by the file's runs
/// at once (`groups`), since fio's exitall is the whole file's.
fn exits(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    d.exitall = r.flag("exitall")? == Some(true);
    if let Some(o) = r.get("exit_what") {
        d.exit_what = match o.value.as_deref() {
            Some("group") => ExitWhat::Group,
            Some("stonewall") => ExitWhat::Stonewall,
            Some("all") => ExitWhat::All,
            _ => {
                return r.refuse(
                    o,
                    "is not group, stonewall or all: give one of them (fio's default is group)",
                )
            }
        };
    }
    Ok(())
}

/// fio's error types (td_error.h), as bits of continue_on_error=.
const READ_ERRORS: u8 = 1;
const WRITE_ERRORS: u8 = 2;
const VERIFY_ERRORS: u8 = 4;

/// fio's continue_on_error= and ignore_error= (td_error.c): a failed I/O's
/// error is of the verify type when it is EILSEQ, else of its direction's
/// (a trim's is a write's); the job goes on after it, counting it in its
/// total_err, when continue_on_error= has that type and the type's list
/// holds the errno: ignore_error='s list (READ,WRITE,VERIFY, each
/// `E1:E2`), which also turns its type on, or fio's default EIO:EILSEQ.
/// Any other error ends the job, as stripebench's default --max-errors 1
/// ends a worker. error_dump= only chooses which errors fio logs.
fn on_errors(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let mut types = match r.get("continue_on_error") {
        None => 0,
        Some(o) => match o.value.as_deref().map(str::trim) {
            Some("none" | "0") => 0,
            Some("read") => READ_ERRORS,
            Some("write") => WRITE_ERRORS,
            Some("io") => READ_ERRORS | WRITE_ERRORS,
            Some("verify") => VERIFY_ERRORS,
            Some("all" | "1") => READ_ERRORS | WRITE_ERRORS | VERIFY_ERRORS,
            _ => {
                return r.refuse(
                    o,
                    "is not none, read, write, io, verify or all: give one of them",
                )
            }
        },
    };
    let (eio, eilseq) = (nix::libc::EIO, nix::libc::EILSEQ);
    let mut lists = [vec![eio, eilseq], vec![eio, eilseq], vec![eio, eilseq]];
    if let Some(o) = r.get("ignore_error") {
        let text = o.value.as_deref().unwrap_or("").trim();
        for (i, list) in text.split(',').enumerate() {
            if i >= 3 {
                return r.refuse(
                    o,
                    "has more than three lists: give READ,WRITE,VERIFY (each E1:E2)",
                );
            }
            let mut errnos = Vec::new();
            for e in list.split(':').map(str::trim).take_while(|e| !e.is_empty()) {
                match fio_errno(e) {
                    Some(n) => errnos.push(n),
                    None => return r.refuse(o, format!("names `{e}`, which is not an errno: give its name (ENOSPC) or number (28)")),
                }
            }
            if !errnos.is_empty() {
                types |= 1 << i;
                lists[i] = errnos;
            }
        }
    }
    let verify_on = r
        .get("verify")
        .and_then(|o| o.value.as_deref())
        .is_some_and(|v| !matches!(v.trim(), "" | "0" | "none"));
    let on = |bit: u8, list: &[i32]| -> Vec<i32> {
        // EILSEQ is never a read's or a write's error in fio: it is the
        // verify type's, and counts for either direction there.
        let mut v: Vec<i32> = if types & bit != 0 {
            list.iter().copied().filter(|&e| e != eilseq).collect()
        } else {
            Vec::new()
        };
        if types & VERIFY_ERRORS != 0 && lists[2].contains(&eilseq) {
            v.push(eilseq);
        }
        v
    };
    let ignored = crate::measure::config::IgnoredErrors {
        read: on(READ_ERRORS, &lists[0]),
        write: on(WRITE_ERRORS, &lists[1]),
    };
    if types & VERIFY_ERRORS != 0 && verify_on {
        let o = r
            .get("continue_on_error")
            .or(r.get("ignore_error"))
            .expect("a verify type was given");
        return r.refuse(o, "with verify=: fio counts a bad block and goes on, and its run passes; stripebench names every bad block and fails the run: give continue_on_error=io (or none), or run this job with fio");
    }
    if !ignored.is_empty() {
        d.notes.push(format!("continue_on_error=/ignore_error=: an I/O that fails with {} is counted (ignored_errors, fio's total_err) and the worker goes on; any other error stops it and fails the run, as in fio", ignored.text()));
        d.args.push(Set::IgnoreErrors(ignored));
    }
    if let Some(o) = r.get("error_dump") {
        r.flag("error_dump")?;
        d.notes.push(format!("`{}`: fio logs each error it goes on after only with error_dump=1; stripebench logs none of them one by one: it counts them by errno, and names the first few errors that stop a worker", show_text(&r.written(o))));
    }
    Ok(())
}

/// An errno as fio's ignore_error= reads it: `E` and a name, or a number
/// (decimal or 0x hex; a negative one is its opposite).
fn fio_errno(text: &str) -> Option<i32> {
    if text.starts_with('E') {
        return crate::measure::config::errno_of(text);
    }
    let (digits, radix) = match text.strip_prefix("0x").or(text.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (text, 10),
    };
    let n = i64::from_str_radix(digits.trim_start_matches('-'), radix).ok()?;
    i32::try_from(n).ok().filter(|&n| n > 0 && n < 4096)
}

/// fio's fsync at the end of a write (end_fsync), or at each file's close
/// (fsync_on_close), which for a job's one file is the same fsync: fio
/// issues it at the end of do_io(), inside the job's runtime, once per
/// loop (backend.c), and only when the job writes (should_fsync()).
/// stripebench ends a buffered write with one fsync, timed apart from the
/// window: its durable MB/s (bytes over window and fsync) is fio's bw
/// figure; each difference is said in a `#` line.
fn end_sync(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    for key in ["end_fsync", "fsync_on_close"] {
        if r.flag(key)? != Some(true) {
            continue;
        }
        let o = r.get_or_first(key);
        let written = r.written(o);
        let said = show_text(&written);
        let writes = d.rw != "read" && d.rw != "randread";
        if !writes {
            d.notes.push(format!(
                "`{said}`: fio fsyncs only a job that writes; this one reads, so neither does"
            ));
        } else if d.direct {
            d.notes.push(format!("`{said}` with direct=1: fio ends with an fsync inside its runtime (on a device, a flush of its write cache); stripebench's O_DIRECT writes end without one, so its figures leave that flush out"));
        } else {
            let loops = r
                .get("loops")
                .and_then(|l| l.value.as_deref())
                .unwrap_or("1");
            let per_loop = if loops != "1" && r.flag("time_based")? != Some(true) {
                " (fio fsyncs at the end of each of its loops=; stripebench once, after the last pass)"
            } else {
                ""
            };
            d.notes.push(format!("`{said}`: fio's fsync at the end counts in its runtime, so its bw is bytes over writing and fsync; stripebench times the fsync apart: 'written to cache' MB/s is over the window, durable MB/s over the window and the fsync, which is fio's figure{per_loop}"));
        }
    }
    Ok(())
}

/// fio's measurement knobs: what each changes in fio and why not our
/// figures, in `#` lines (`super::harmless`).
fn measurement_knobs(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    match super::harmless(r.job) {
        Ok(said) => {
            d.notes.extend(said);
            Ok(())
        }
        Err((o, why)) => r.refuse(o, why),
    }
}

/// fio's pattern in option `o` (`formats`: whether %o is taken), parsed
/// and its 'file' read as fio reads it (relative to where we run).
fn data_pattern(
    r: &Reader,
    o: &Opt,
    formats: crate::base::pattern::Formats,
) -> Result<crate::base::pattern::Pattern, FioJobError> {
    use crate::base::pattern::{read_pattern_file, Pattern};
    let text = o.value.as_deref().unwrap_or("");
    Pattern::parse(text, formats, &read_pattern_file).or_else(|why| {
        if why.starts_with("cannot read") {
            // Its syntax is fio's; the file is what is missing.
            return r.refuse(o, format!("names a file: {why}; make the file (fio reads it relative to where it runs), or give the pattern's bytes"));
        }
        r.refuse(
            o,
            format!("is not a pattern fio takes: {why}; give hex (0xaa55), a decimal number, \"text\" or 'file', one after another"),
        )
    })
}

/// Written data: compressible and duplicated shares, or fio's
/// buffer_pattern (which [`verify`] may replace, as fio's verify does).
fn written_data(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    if let Some(o) = r.get("buffer_pattern") {
        let p = data_pattern(r, o, crate::base::pattern::Formats::None)?;
        for key in ["buffer_compress_percentage", "dedupe_percentage"] {
            if let Some(c) = r.get(key) {
                if r.pct(c)? > 0 {
                    return r.refuse(c, "with buffer_pattern: fio then writes random bytes with the pattern in their compressible share; stripebench writes the pattern alone or its own data: drop one of them, or run this job with fio");
                }
            }
        }
        d.args.push(Set::Pattern(p));
        return Ok(());
    }
    if let Some(o) = r.get("buffer_compress_percentage") {
        let p = r.pct(o)?;
        if p > 0 {
            let chunk = r
                .get("buffer_compress_chunk")
                .map(|c| r.size(c))
                .transpose()?;
            if chunk != Some(4096) {
                // fio's default chunk is 512 bytes; 0 is the block.
                let shown = match chunk {
                    None => "512 (fio's default)".to_string(),
                    Some(0) => "0 (the block size)".to_string(),
                    Some(n) => n.to_string(),
                };
                d.notes.push(format!("buffer_compress_chunk={shown}: fio makes each chunk of that size {p}% zeros; stripebench each 4 KiB unit (as fio's buffer_compress_chunk=4k): the same share of zeros, so a compressor over 4 KiB blocks or larger (zram, VDO, btrfs, ZFS records) saves about the same; the runs of zeros are laid out differently"));
            }
            d.args.push(Set::BufferCompress(p as u8));
        }
    }
    let dedupe = match r.get("dedupe_percentage") {
        Some(o) => r.pct(o)?,
        None => 0,
    };
    if dedupe > 0 {
        d.args.push(Set::Dedupe(dedupe as u8));
    }
    let mode = r.get("dedupe_mode");
    let working_set = match mode.and_then(|o| o.value.as_deref()) {
        None | Some("repeat") => false,
        Some("working_set") => true,
        Some(_) => {
            return r.refuse(
                mode.unwrap(),
                "is not one of fio's modes (repeat, working_set)",
            )
        }
    };
    let global = r.flag("dedupe_global")?.unwrap_or(false);
    if dedupe == 0 {
        // fio makes no repeats: what they would copy changes nothing.
        return Ok(());
    }
    if working_set {
        // fio's default working set is 5% of the size.
        let pct = match r.get("dedupe_working_set_percentage") {
            Some(o) => r.pct(o)?,
            None => 5,
        };
        if pct == 0 {
            let o = r.get("dedupe_working_set_percentage").unwrap();
            return r.refuse(
                o,
                "leaves the working set empty: give a percentage from 1 to 100",
            );
        }
        d.args.push(Set::DedupeWorkingSet(pct as u8));
        if global {
            d.args.push(Set::DedupeGlobal);
        }
        d.notes.push(format!("dedupe_mode=working_set: fio's repeats copy buffers of a working set, {pct}% of the size; stripebench's repeats copy one of the first unique 4 KiB units each worker wrote ({pct}% of its region of them){}, drawn at random: the share of repeats is fio's, and what a deduplicating device can save converges to it as fio's does", if global { ", any worker's (dedupe_global)" } else { "" }));
    } else if global {
        let o = r.get("dedupe_global").unwrap();
        return r.refuse(o, "with dedupe_mode=repeat: stripebench's repeats are one unit per position, per worker; a set shared by the jobs is its working set: give dedupe_mode=working_set");
    }
    Ok(())
}

/// fio's verify methods (HOWTO `verify=`): each checks fio's own header
/// and data; a job naming any of them is checked with stripebench's
/// blocks instead (`verify=pattern` and `pattern_hdr` check fio's
/// verify_pattern, refused by [`verify`]).
const VERIFY_METHODS: &[&str] = &[
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "xxhash",
    "sha512",
    "sha256",
    "sha1",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "meta",
];

/// A random write or mix whose blocks are verified (fio's `verify=` a
/// method): whole passes, each block once.
fn verified_random_write(r: &Reader, d: &Draft) -> bool {
    (d.rw == "randwrite" || d.rw == "randrw")
        && r.get("verify")
            .and_then(|o| o.value.as_deref())
            .is_some_and(|m| VERIFY_METHODS.contains(&m))
}

/// fio's verify options that change only what fio keeps or how it finds
/// a bad block, never which blocks are checked nor the verdict: each, on,
/// said in a `#` line.
const VERIFY_BOOKKEEPING: &[(&str, &str)] = &[
    ("verify_fatal", "verify_fatal=1: fio ends the job at the first bad block; stripebench reads the whole region and names every bad block: the verdict is the same (a non-zero exit), the count may be larger"),
    ("verify_dump", "verify_dump=1: fio writes each bad block's expected and read data to files; stripebench writes no such files, it names each bad block's offset and kind"),
    ("experimental_verify", "experimental_verify=1: fio replays its writes to know what to check rather than keeping a record of each; stripebench's blocks say what they are, so it needs neither"),
    ("verify_state_save", "verify_state_save=1: fio saves how far its write got, for a later job's verify_state_load; stripebench's blocks carry the range their write covers, so no state file is written"),
    ("verify_state_load", "verify_state_load=1: fio reads how far an earlier write got from its state file; stripebench reads the range each block's write covered from the block itself (blocks past it are counted unwritten, not bad), so no state file is read"),
];

/// Verification: stripebench's own self-describing blocks, with fio's
/// method names taken for them. rw=write with do_verify=1 (fio's default)
/// is the write and then, as a run of its own, the read-back
/// (`Draft::read_back`).
fn verify(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    // fio fills its write buffers with verify_pattern whether or not it
    // checks, in place of buffer_pattern; without verify= it checks it
    // (verify=pattern).
    let vpat = match r.get("verify_pattern") {
        Some(o) => Some((
            o,
            data_pattern(r, o, crate::base::pattern::Formats::Offset)?,
        )),
        None => None,
    };
    if let Some((_, p)) = &vpat {
        d.args.retain(|a| !matches!(a, Set::Pattern(_)));
        d.args.push(Set::Pattern(p.clone()));
    }
    let method = match r.get("verify") {
        None => vpat.as_ref().map(|(o, _)| (*o, "pattern")),
        Some(o) => match o.value.as_deref() {
            None => return r.refuse(o, "names no method: give verify=crc32c or the like"),
            Some("0" | "null") => None,
            Some(m @ ("pattern" | "pattern_hdr")) if vpat.is_none() => return r.refuse(o, format!("checks fio's verify_pattern, and the job gives none: add verify_pattern= (e.g. 0xaa55 or 'file'), or give verify=crc32c to check with stripebench's blocks (verify={m})")),
            Some(m) if VERIFY_METHODS.contains(&m) || m == "pattern" || m == "pattern_hdr" => {
                Some((o, m))
            }
            Some(_) => return r.refuse(o, "is not one of fio's verify methods (md5, crc32c, xxhash, sha256, meta, ...): give verify=crc32c"),
        },
    };
    // Without a method fio checks nothing, and its verify_* options are
    // not read: nor are they here (after their values are checked).
    let do_verify = r.flag("do_verify")?;
    let mut bookkeeping = Vec::new();
    for (key, note) in VERIFY_BOOKKEEPING {
        if r.flag(key)? == Some(true) {
            // A random mix's record is kept here, and fio's replay of it
            // checks less than the record would (read in fio's backend.c).
            bookkeeping.push(if *key == "experimental_verify" && d.rw == "randrw" {
                "experimental_verify=1 with rw=randrw: fio replays each loop's draws to find the blocks the mix wrote, rather than keeping a record of each, and (its count of the bytes it replayed is not reset between loops) in practice checks only the first loop's; stripebench keeps a bit for each block a pass wrote and checks every pass's, so its read figure holds every pass's read-back, fio's the first loop's"
            } else {
                note
            });
        }
    }
    for key in ["verify_interval", "verify_offset"] {
        if let Some(o) = r.get(key) {
            r.size(o)?;
        }
    }
    // fio's verify_async=N: N threads of fio's check the blocks read
    // instead of the job's own; which blocks are checked, and the verdict,
    // are the same.
    if let Some(o) = r.get("verify_async") {
        if r.count(o)? > 0 {
            bookkeeping.push("verify_async: fio checks the blocks read in threads of its own, so its job's thread issues the next I/O meanwhile; stripebench's worker checks each block it reads itself, between its I/Os (a CRC of a block takes microseconds): the same blocks are checked and the verdict is the same");
        }
    }
    let backlog = match r.get("verify_backlog") {
        Some(o) if r.count(o)? > 0 => Some(o),
        _ => None,
    };
    let Some((o, m)) = method else {
        if let Some((po, p)) = vpat.as_ref().filter(|(_, p)| p.has_offset()) {
            // Seen with fio 3.42: its buffers are filled once, %o as 0.
            return r.refuse(po, format!("with verify=0: fio then fills its buffers with the pattern once, %o as 0 in every block, and never checks it; stripebench writes each block's offset into {}: drop %o, or give verify=pattern", p.text()));
        }
        return Ok(());
    };
    let by_pattern = vpat.is_some();
    if !by_pattern && d.args.iter().any(|a| matches!(a, Set::Pattern(_))) {
        // fio's verify fills the write buffers itself (random data and
        // its header), so buffer_pattern is never written.
        d.args.retain(|a| !matches!(a, Set::Pattern(_)));
        d.notes.push(format!("buffer_pattern with verify={m}: fio's verify fills every block it writes itself, so the pattern is not written, nor is it here"));
    }
    if let Some((_, p)) = vpat.as_ref().filter(|(_, p)| p.has_offset()) {
        if let Some(i) = r.get("verify_interval") {
            return r.refuse(i, format!("with a verify_pattern holding %o ({}): fio writes each interval's own offset into it; stripebench writes each block's offset: drop verify_interval (fio's default is the block size), or run this job with fio", p.text()));
        }
    }
    let rw = d.rw.clone();
    // fio's sequential mix keeps a position per direction, so its writes
    // are a run of blocks from the region's start: what it keeps a record
    // of, stripebench finds as that prefix (the read-back reads as many
    // bytes as the mix wrote).
    let mix = rw == "rw" || rw == "readwrite";
    verify_rw(r, d, o, do_verify)?;
    // Blocks of several sizes: fio reads each back at the size it was
    // written (randrepeat replays the size draws) and checks its header.
    // (A read that checks nothing, do_verify=0, reads any sizes.)
    let checks = rw != "read" || do_verify != Some(false);
    if checks && d.args.iter().any(|a| matches!(a, Set::Bssplit(_))) {
        sized_blocks(r, d, o, m)?;
    }
    let writes = rw != "read";
    overlap_notes(r, d, backlog, writes && do_verify != Some(false));
    if !writes && do_verify == Some(false) {
        d.notes.push(format!("verify={m} with do_verify=0 on a read: fio checks nothing it reads, and neither does stripebench"));
        return Ok(());
    }
    d.args.push(Set::Verify);
    if m == "pattern" {
        d.notes.push("verify=pattern: fio writes verify_pattern into every block and checks that every block it reads holds it; so does stripebench (--pattern with --verify)".into());
    } else if by_pattern {
        d.notes.push(format!("verify={m} with verify_pattern: fio writes the pattern with its own header at the start of each verify_interval (the block's offset, and {}) and checks both; stripebench writes the pattern alone and checks that every block read holds it: the same bytes written and read, and a corrupted block is found, but not a block of the same pattern that landed at another offset (a pattern holding %o, the block's offset, finds that too)", if m == "meta" || m == "pattern_hdr" { "its write" } else { "a checksum" }));
    } else {
        d.notes.push(format!(
            "verify={m}: fio's {m} over its own verify header; stripebench writes and checks its own self-describing blocks (a 64-byte header naming the offset and write, and a CRC32C of the whole block) instead"
        ));
    }
    for key in ["verify_interval", "verify_offset"] {
        if let Some(o) = r.get(key) {
            let how = if by_pattern {
                "stripebench writes the pattern and no header, so there is none to place, and every byte of every block is checked"
            } else {
                "stripebench's one checksum covers the whole block, so a corruption anywhere in it is found, named by its block"
            };
            d.notes.push(format!("{}: where fio puts its header in a block (a header every N bytes, or moved from the start); {how}", show_text(&r.written(o))));
        }
    }
    d.notes.extend(bookkeeping.iter().map(|n| n.to_string()));
    if writes {
        if rw == "randrw" {
            d.notes.push("do_verify=1 with rw=randrw: fio mixes size= bytes of I/O (every block once, read or written: its random map), then reads back and checks each block it wrote, and again (loops=, or until runtime= with time_based), the verify's reads counted in the job's read figure; stripebench does the same within the run, each worker keeping a bit for each block of its region that the pass wrote, its figures holding the read-backs' reads, as fio's do (a pass the deadline cuts short is not read back, as in fio)".into());
        } else if do_verify == Some(false) && d.args.iter().any(|a| matches!(a, Set::Bssplit(_))) {
            d.notes.push("do_verify=0: fio writes the blocks and checks nothing; check them later with a read of the same region and the same --bssplit and --seed, with --verify (as fio's read job with verify= does)".into());
        } else if do_verify == Some(false) {
            d.notes.push("do_verify=0: fio writes the blocks and checks nothing; check them later with `stripebench verify` (the same --bs, --offset and --size)".into());
        } else if mix {
            d.read_back = true;
            d.notes.push(format!("do_verify=1 with rw={rw}: fio reads back and checks each block the mix wrote once the mix ends, and counts those reads in the job's read figure (the mix's reads, then the verify's); stripebench reads them back as the run after this one, exactly as many bytes as this run wrote, from the region's start, where the mix's writes went in order: that run's read bytes are fio's verify bytes, and this run's read figure is the mix's reads alone"));
        } else {
            d.read_back = true;
            d.notes.push("do_verify=1 (fio's default with verify=): fio reads the region back and checks it once the write ends; stripebench does so as the run after this one, and this run's write figures, like fio's, hold none of that reading".into());
        }
        if mix {
            d.notes.push(format!("rw={rw} with verify={m}: fio checks none of the mix's own reads (they read what the blocks hold, written by the mix or not), and neither does stripebench; its writes are self-describing blocks, each claiming only the blocks up to itself (how far the mix's writes get is drawn)"));
        }
    }
    Ok(())
}

/// verify_backlog= and jobs whose regions overlap (offset_increment with
/// no size=): where fio's reads and checks differ from ours, as notes.
fn overlap_notes(r: &Reader, d: &mut Draft, backlog: Option<&Opt>, checked_writes: bool) {
    // Jobs moved apart by offset_increment with no size= each run to the
    // end of the file: their writes can land on each other's blocks.
    let overlapping = r.get("offset_increment").is_some()
        && r.get("size").is_none()
        && d.args.iter().any(|a| matches!(a, Set::OffsetIncrement(_)));
    if let Some(b) = backlog.filter(|_| checked_writes) {
        if r.get("io_size").is_some() || overlapping {
            // Each write's bytes are not one pass of the region: fio's
            // reads follow its writes, the read-back reads each region once.
            d.notes.push(format!("{}: fio reads back and checks each block soon after its write, so it reads what it writes (a block written twice, twice); stripebench reads back each job's region once after the write, as a run of its own (its holes skipped): every block written is checked, but its read figure is one pass of each region, and a block no write reached is counted unwritten, not bad; the write's figure is the writes' alone", show_text(&r.written(b))));
        } else {
            d.notes.push(format!("{}: fio reads back and checks each N blocks while it writes, so its write job's figure holds those reads (and is lower for them); stripebench reads back the whole region after the write, as a run of its own, and checks every block: the same blocks read and checked, the same read bytes, but the write's figure is the writes' alone", show_text(&r.written(b))));
        }
    }
    if overlapping && checked_writes {
        let o = r.get_or_first("offset_increment");
        d.notes.push(format!("{} with no size=: each job's region runs to the end of the file, so the jobs' writes can land on each other's blocks (fio warns that such writers may overwrite blocks that belong to other jobs, and its check can then fail on a block another job wrote between a write and its check); stripebench checks after every job has written, and a block two jobs wrote holds the later write, checked as a good block of this run at its offset", show_text(&r.written(o))));
    }
}

/// Verified blocks of several sizes (bssplit=, or bsrange= as a split):
/// each block's header records its size, and a read checks it at the
/// size it draws. A sequential job's size draws are seeded, apart from
/// its offsets and directions, and alike for reads and writes (fio's
/// bsrange_state with verify), so a read with the same seed draws the
/// sizes the write drew, block by block: the seed is fio's randrepeat
/// one (the read-back run takes it too). A random verified write covers
/// its region block by block, of one size: refused by name.
fn sized_blocks(r: &Reader, d: &mut Draft, o: &Opt, m: &str) -> Result<(), FioJobError> {
    let key = r.get("bssplit").or_else(|| r.get("bsrange")).unwrap_or(o);
    if d.random {
        return r.refuse(key, format!("with verify={m} and rw={}: fio's random verified write keeps a record of each block's size; stripebench's covers its region block by block, of one size: give one bs= to a random verified write, or run this job with fio", d.rw));
    }
    // A read replays one pass's draws: a second pass (loops=, or
    // runtime= past the end) writes other sizes over the first's blocks.
    let one_pass = d
        .args
        .iter()
        .any(|a| matches!(a, Set::Passes(1) | Set::IoLimit(_)));
    if !one_pass {
        return r.refuse(key, format!("with verify={m} over more than one pass (loops=, or time_based): each pass writes other sizes over the last's blocks, and stripebench's check replays one pass's size draws: give loops=1 and no time_based, or run this job with fio"));
    }
    let seeded = d.args.iter().any(|a| matches!(a, Set::Seed(_)));
    if !seeded && r.get("randseed").is_none() {
        if r.flag("randrepeat")? != Some(false) {
            let (seed, said) = super::repeatable_seed();
            d.args.push(Set::Seed(seed));
            d.notes.push(said);
        } else if d.rw == "read" {
            let key = r.get_or_first("randrepeat");
            return r.refuse(key, format!("with verify={m} and blocks of several sizes: fio then draws this run's sizes afresh, so it reads the blocks at sizes they were not written at (fio's own check of them fails); stripebench's read replays the write's seeded draws: drop randrepeat=0, or give randseed= (the write's)"));
        } else {
            // A seed of this run's own, which its read-back takes too
            // (fio's read-back keeps a record of each block's size).
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            let nanos = now.map_or(0, |t| t.as_nanos() as u64);
            d.args.push(Set::Seed(crate::base::io::splitmix64(nanos)));
        }
    }
    d.notes.push(format!("{} with verify={m}: fio writes each block at the size it draws, and its read draws the same sizes (its size draws seeded alike for reads and writes, randrepeat=1) and checks each block at the size it was written; stripebench does the same: each self-describing block's header records its size, the read's seeded draws replay the write's, and a block read at another size than it was written is reported bad", show_text(&r.written(key))));
    Ok(())
}

/// The patterns a verify can check: fio's record of what it wrote is
/// stripebench's whole passes, or a sequential mix's run from the start.
fn verify_rw(r: &Reader, d: &Draft, o: &Opt, do_verify: Option<bool>) -> Result<(), FioJobError> {
    let rw = d.rw.as_str();
    let mix = rw == "rw" || rw == "readwrite";
    // fio's random mix, like stripebench's with --verify, keeps a record
    // of the blocks each pass wrote and reads back those after the pass.
    let random_mix = rw == "randrw";
    if rw != "read" && rw != "write" && rw != "randwrite" && !mix && !random_mix {
        let why = if rw.contains("write") || rw.starts_with("rand") {
            "fio keeps a record of each offset a mixed write wrote and checks those; stripebench reads back whole passes of its blocks (a block with no header between written ones is a lost write), and this mix leaves blocks of its pass unwritten: give rw=write, rw=randwrite or rw=rw (then the read-back), or run this job with fio"
        } else {
            "stripebench checks whole passes: give rw=write or rw=read"
        };
        return r.refuse(o, format!("with rw={rw}: {why}"));
    }
    if random_mix && do_verify == Some(false) {
        return r.refuse(o, "with rw=randrw and do_verify=0: fio writes the mix's blocks and checks none, and a later verifying read cannot tell the blocks the mix wrote from those it only read (stripebench keeps that record only while the mix runs): drop do_verify=0 (the mix then reads back what each pass wrote), or run this job with fio");
    }
    if mix && do_verify != Some(false) {
        // One worker's written bytes bound the read-back: each worker's
        // would differ.
        if let Some(n) = d.args.iter().find_map(|a| match a {
            Set::Jobs(n) if *n > 1 => Some(*n),
            _ => None,
        }) {
            return r.refuse(o, format!("with rw={rw} and numjobs={n}: stripebench reads back as many bytes as the mix wrote, and {n} jobs each write a share of their own: give numjobs=1 (or a job section for each), or run this job with fio"));
        }
    }
    if rw == "randwrite" {
        // Whole passes, each block once: what the read-back can check.
        let cut = d.args.iter().find_map(|a| match a {
            Set::Duration(_) => Some("runtime="),
            Set::IoLimit(_) => Some("io_size="),
            Set::Ios(_) => Some("number_ios="),
            _ => None,
        });
        if let Some(key) = cut {
            return r.refuse(o, format!("with rw=randwrite and {key}: fio keeps a record of each offset it wrote and checks those; stripebench writes every block once a pass and reads all of them back, and a write {key} can end half a pass through leaves blocks unwritten among written ones, which would be called lost: drop {key} (the write then covers size= loops= times), or run this job with fio"));
        }
        if d.args
            .iter()
            .any(|a| matches!(a, Set::Dist(_) | Set::SeqRun(_)))
        {
            return r.refuse(o, "with rw=randwrite and random_distribution= or rw=randwrite:N: those visit some blocks more and others not at all, and stripebench's read-back checks every block: drop them, or run this job with fio");
        }
    }
    Ok(())
}

/// fio's logs: `--fio-log` for each, in fio's windowed form at
/// log_avg_msec (`--log-interval`); fio's default without it is a line
/// per I/O, which stripebench does not record (the I/O path records each
/// latency once, into its interval): said in a `#` line.
fn logs(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    use crate::report::fio_log::LogKind;
    let mut any = None;
    for (key, kind) in [
        ("write_bw_log", LogKind::Bw),
        ("write_lat_log", LogKind::Lat),
        ("write_iops_log", LogKind::Iops),
    ] {
        let Some(o) = r.get(key) else { continue };
        // Bare, fio names the files after the job (`jobname_bw.1.log`).
        let prefix = match o.value.as_deref() {
            None | Some("") => r.job.name.clone(),
            Some(v) => v.to_string(),
        };
        if prefix.starts_with('-') {
            return r.refuse(o, "names a file that starts with '-': write it as ./NAME");
        }
        d.args.push(Set::FioLog(kind, prefix));
        any = Some(o);
    }
    let Some(_) = any else {
        // log_avg_msec and the columns shape logs; without one, nothing.
        return Ok(());
    };
    let mixed = matches!(
        d.args.iter().find(|a| matches!(a, Set::Rw(_))),
        Some(Set::Rw(RwMode::Randrw | RwMode::Rw))
    );
    // fio's per-I/O lines where an interval's line cannot stand for
    // them: a mix (each line has its direction) and log_prio=1 with
    // command priorities (each line has its I/O's own).
    let cmdprio = r.get("cmdprio_bssplit").is_some() || r.get("cmdprio_percentage").is_some();
    let per_io = mixed || (cmdprio && r.flag("log_prio")? == Some(true));
    let mut words: Vec<&str> = Vec::new();
    let windowed = match r.get("log_avg_msec") {
        Some(o) => match r.count(o)? {
            0 => None,
            ms if (10..=3_600_000).contains(&ms) => Some((o, ms)),
            _ => return r.refuse(o, "is outside 10 to 3600000: stripebench's intervals are 10 ms at the finest and an hour at most"),
        },
        None => None,
    };
    match windowed {
        Some((o, _)) if mixed => {
            return r.refuse(o, format!("with rw={}: stripebench's intervals count reads and writes together, and fio's windowed log gives each direction a line: drop log_avg_msec= for fio's line per I/O, or log a read or a write job", d.rw));
        }
        Some((_, ms)) => d.args.push(Set::LogInterval(Duration::from_millis(ms))),
        None if per_io => words.push("each"),
        None => per_io_note(d),
    }
    if r.flag("per_job_logs")? == Some(false) {
        words.push("shared");
    }
    for (key, word) in [
        ("log_offset", "offset"),
        ("log_prio", "prio"),
        ("log_issue_time", "issue-time"),
    ] {
        if r.flag(key)? == Some(true) {
            words.push(word);
        }
    }
    // log_max_value is log_window_value's older name: the later wins.
    let window = [r.get("log_window_value"), r.get("log_max_value")]
        .into_iter()
        .flatten()
        .max_by_key(|o| o.line);
    if let Some(o) = window {
        words.push(match o.value.as_deref() {
            Some("avg" | "0") => "avg",
            None | Some("max" | "1") => "max",
            Some("both") => "both",
            Some(_) => return r.refuse(o, "is not avg, max or both"),
        });
    }
    if words.iter().any(|w| *w != "avg") {
        words.retain(|w| *w != "avg");
        d.args.push(Set::FioLogFormat(words.join(",")));
    }
    Ok(())
}

/// fio's `write_iolog=FILE` and `read_iolog=FILE`: `--iolog-write` (the
/// same version 3 log) and `--iolog-read` (its replay, without the log's
/// pauses: said in a `#` line unless replay_no_stall=1 asks just that).
fn iolog(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let file = |key: &str| -> Result<Option<String>, FioJobError> {
        let Some(o) = r.get(key) else { return Ok(None) };
        match o.value.as_deref() {
            None | Some("") => r.refuse(o, format!("names no file: give {key}=FILE")),
            Some(v) if v.starts_with('-') => {
                r.refuse(o, "names a file that starts with '-': write it as ./NAME")
            }
            Some(v) => Ok(Some(v.to_string())),
        }
    };
    if let Some(f) = file("write_iolog")? {
        d.args.push(Set::IologWrite(f));
    }
    let no_stall = r.flag("replay_no_stall")?;
    let Some(f) = file("read_iolog")? else {
        if let Some(o) = r.get("replay_no_stall") {
            return r.refuse(o, "without read_iolog=: it shapes a replay; drop it");
        }
        return Ok(());
    };
    if no_stall != Some(true) {
        d.notes.push("read_iolog: fio waits out the log's times between its I/Os (replay_no_stall=0); stripebench issues them as fast as the target takes them, as fio's replay_no_stall=1 does".into());
    }
    d.notes.push("read_iolog: the log's offsets, size and reads and writes replace rw= and bs=, once through the log".into());
    d.args.push(Set::IologRead(f));
    Ok(())
}

/// What fio's per-I/O log (no log_avg_msec) becomes here.
fn per_io_note(d: &mut Draft) {
    d.notes.push("fio's logs without log_avg_msec hold a line per I/O; stripebench logs each --log-interval (1 s unless given) as fio's log_avg_msec would, from the intervals it keeps: give log_avg_msec=N for N ms".into());
}

/// size= and io_size= over `n` files, as fio divides them (filesetup.c:
/// each file's region and I/O are size / nr_files, io_size / nr_files):
/// each target's `--size` and `--io-limit`. fio gives the first files a
/// block more when the size does not divide into whole blocks per file,
/// which stripebench's one --size for every target cannot say: refused.
fn split_over_files(r: &Reader, d: &mut Draft, n: u64) -> Result<(), FioJobError> {
    let bs = d.bs;
    for a in d.args.iter_mut() {
        let (key, bytes) = match a {
            Set::Size(b) => ("size", b),
            Set::IoLimit(b) => ("io_size", b),
            _ => continue,
        };
        let each = *bytes / n;
        if *bytes % n != 0 || each % bs != 0 || each == 0 {
            let o = r.get_or_first(key);
            return r.refuse(o, format!("over the {n} files of filename= is not whole {bs}-byte blocks for each (fio gives the first files a block more); stripebench gives every file one size: give a {key} of a multiple of {}", n * bs));
        }
        d.notes.push(format!(
            "{}: fio divides it among the {n} files, {} each (each target's --{})",
            show_text(&r.written(r.get_or_first(key))),
            crate::base::units::fmt_size_arg(each),
            if key == "size" { "size" } else { "io-limit" }
        ));
        *bytes = each;
    }
    Ok(())
}

/// The files: filename= (in directory=), one worker each; or, with no
/// filename=, the file fio names in directory= by filename_format.
fn files(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    if let Some(o) = r.get("nrfiles") {
        if r.size(o)? != 1 {
            return r.refuse(o, "spreads one job over several files, which stripebench's one worker per file does not do: give each file a [section] of its own, or nrfiles=1");
        }
    }
    let Some(o) = r.get("filename") else {
        return named_file(r, d);
    };
    if let Some(f) = r.get("filename_format") {
        return r.refuse(f, "with filename=: fio names the files filename= gives, not by the format; give one of them");
    }
    let dir = r.get("directory").and_then(|dir| dir.value.clone());
    if let Some(dir) = r.get("directory") {
        if dir
            .value
            .as_deref()
            .is_none_or(|v| v.is_empty() || list(v).len() > 1)
        {
            return r.refuse(dir, "is not one directory: stripebench takes no list of directories; name the files in filename=");
        }
    }
    let mut targets = Vec::new();
    for f in list(o.value.as_deref().unwrap_or("")) {
        if f.is_empty() {
            return r.refuse(o, "has an empty name in its list: give NAME or NAME1:NAME2");
        }
        let t = match &dir {
            Some(dir) if !f.starts_with('/') => format!("{}/{f}", dir.trim_end_matches('/')),
            _ => f,
        };
        if t.starts_with('-') {
            return r.refuse(o, "names a file that starts with '-' and would be read as an option: write it as ./NAME");
        }
        targets.push(t);
    }
    if targets.len() > 1 {
        // fio's one job spreads its rate over its files; stripebench's
        // applies to each target (each worker).
        for key in ["rate", "rate_iops"] {
            if let Some(s) = r.get(key) {
                return r.refuse(s, format!("with filename= listing {} files: fio's one job divides it between them, stripebench's applies to each file: give each file a [section] of its own", targets.len()));
            }
        }
        split_over_files(r, d, targets.len() as u64)?;
        d.notes.push(format!("filename= lists {} files for one fio job, whose one thread spreads its I/O over them; stripebench runs one worker per file (fio's one section per file)", targets.len()));
    }
    laid_out(d, &targets);
    d.targets = targets;
    Ok(())
}

/// The job's `--size` so far (size=, each file's share of it).
fn region_size(d: &Draft) -> Option<u64> {
    d.args.iter().find_map(|a| match a {
        Set::Size(n) => Some(*n),
        _ => None,
    })
}

/// filename=, with size= (and no filesize=, which made them already):
/// fio lays each file that is not there out its share of size= long
/// (filesetup.c), so stripebench makes it (`--create`), and one that is
/// there is used as it is. Not under /dev/, where fio would make a
/// regular file in place of a device the user mistyped: stripebench then
/// says the device does not exist.
fn laid_out(d: &mut Draft, targets: &[String]) {
    if targets.iter().any(|t| t.starts_with("/dev/"))
        || d.args.iter().any(|a| matches!(a, Set::Create(_)))
    {
        return;
    }
    let Some(n) = region_size(d).filter(|n| *n > 0) else {
        return;
    };
    d.args.push(Set::Create(n));
    d.notes.push(format!(
        "filename={} with size=: fio lays a file out {} long when it is not there; so does stripebench (--create), writing to it as its own; one that is there is used as it is, and writing to it needs --allow-destructive",
        show_text(&targets.join(":")),
        crate::base::units::fmt_bytes(n)
    ));
}

/// No filename=: fio names the job's file by filename_format (its default
/// `$jobname.$jobnum.$filenum`), in directory= when given, and lays it out
/// `size=` bytes long when it is not there: the file is made so
/// (`--create`), and written as stripebench's own. Without directory= or
/// filename_format= the job names no file, and the targets come from the
/// command line.
fn named_file(r: &Reader, d: &mut Draft) -> Result<(), FioJobError> {
    let dir = r.get("directory");
    let format = r.get("filename_format");
    let Some(at) = format.or(dir) else {
        return Ok(());
    };
    if d.args.iter().any(|a| matches!(a, Set::Jobs(n) if *n > 1)) {
        return r.refuse(at, "with numjobs= and no filename=: fio gives each clone a file of its own ($jobnum), stripebench's clones share their target: give each file a [section] of its own, or filename=");
    }
    let name = &r.job.name;
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return r.refuse(
            at,
            format!(
                "names the file after the job, [{}], which is no file name (empty, `.`, `..` or with a `/`): give filename=",
                show_text(name)
            ),
        );
    }
    let pattern = format
        .and_then(|f| f.value.clone())
        .unwrap_or_else(|| "$jobname.$jobnum.$filenum".into());
    let mut file = String::new();
    let mut rest = pattern.as_str();
    while let Some(i) = rest.find('$') {
        file.push_str(&rest[..i]);
        rest = &rest[i..];
        let (tail, value) = if let Some(t) = rest.strip_prefix("$jobname") {
            (t, name.as_str())
        } else if let Some(t) = rest.strip_prefix("$jobnum") {
            (t, "0")
        } else if let Some(t) = rest.strip_prefix("$filenum") {
            (t, "0")
        } else {
            return r.refuse(at, "holds a `$` word other than $jobname, $jobnum and $filenum: stripebench names files only by those; give filename=");
        };
        file.push_str(value);
        rest = tail;
    }
    file.push_str(rest);
    if file.is_empty() || file.split('/').any(|c| c == "..") {
        return r.refuse(at, "gives no file name, or one with `..`: give filename=");
    }
    let path = match dir.map(|o| o.value.as_deref().unwrap_or("")) {
        Some(v) if v.is_empty() || list(v).len() > 1 => {
            return r.refuse(dir.unwrap_or(at), "is not one directory: stripebench takes no list of directories; name the files in filename=");
        }
        Some(v) if !file.starts_with('/') => format!("{}/{file}", v.trim_end_matches('/')),
        _ => file,
    };
    if path.starts_with('-') {
        return r.refuse(at, "names a file that starts with '-' and would be read as an option: give filename=./NAME");
    }
    let made = d.args.iter().any(|a| matches!(a, Set::Create(_)));
    let size = region_size(d);
    match (made, size) {
        (true, _) => {}
        (false, Some(n)) if n > 0 => {
            d.args.push(Set::Create(n));
            d.notes.push(format!(
                "no filename=: fio names the job's file {}, and lays it out size= ({}) long when it is not there; so does stripebench (--create), writing to it as its own; one that exists is used as it is, and writing to it needs --allow-destructive",
                show_text(&path),
                crate::base::units::fmt_bytes(n)
            ));
        }
        _ => {
            return r.refuse(at, "with no filename= and no size=: fio would lay out a file of its own of a size it is not given; give size= or filename=");
        }
    }
    d.targets = vec![path];
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // The web's most copied fio line names a file that is not there
    // (--filename=test --size=4G): fio lays it out; stripebench refused it
    // as a missing target.
    #[test]
    fn a_filename_with_size_is_laid_out_as_fio_lays_it_out() {
        use crate::device::scratch::CreateLayout;
        let t = translated("[j]\nfilename=test\nsize=4g\nrw=randrw\n").unwrap();
        assert!(t.args.contains(&Set::Create(4 << 30)), "{:?}", t.args);
        assert!(!t.args.iter().any(|a| matches!(a, Set::CreateLayout(_))));
        // A job that only writes: fio's default fallocate=native.
        let t = translated("[j]\nfilename=test\nsize=4g\nrw=write\n").unwrap();
        assert!(
            t.args.contains(&Set::CreateLayout(CreateLayout::Allocate)),
            "{:?}",
            t.args
        );
        // ... unless overwrite=1, when fio writes the file out first.
        let t = translated("[j]\nfilename=test\nsize=4g\nrw=write\noverwrite=1\n").unwrap();
        assert!(
            !t.args.iter().any(|a| matches!(a, Set::CreateLayout(_))),
            "{:?}",
            t.args
        );
        let t = translated("[j]\nfilename=test\nsize=4g\nrw=write\noverwrite=0\n").unwrap();
        assert!(
            t.args.contains(&Set::CreateLayout(CreateLayout::Allocate)),
            "{:?}",
            t.args
        );
        // Never a regular file in /dev in place of a mistyped device.
        let t = translated("[j]\nfilename=/dev/sdzz\nsize=4g\n").unwrap();
        assert!(
            !t.args.iter().any(|a| matches!(a, Set::Create(_))),
            "{:?}",
            t.args
        );
        // Several files: each its share of size=.
        let t = translated("[j]\nfilename=a:b\nsize=4g\n").unwrap();
        assert!(t.args.contains(&Set::Create(2 << 30)), "{:?}", t.args);
        let t = translated("[j]\nfilename=a:/dev/sdzz\nsize=4g\n").unwrap();
        assert!(
            !t.args.iter().any(|a| matches!(a, Set::Create(_))),
            "{:?}",
            t.args
        );
    }

    // fio's examples/aio-read.fio: no filename=, a directory= and size=:
    // fio's file is $jobname.$jobnum.$filenum there, laid out size= long.
    #[test]
    fn a_job_with_no_filename_names_its_file_in_directory_as_fio_does() {
        let t = translated("[file1]\ndirectory=/data1\nsize=512m\nrw=randread\n").unwrap();
        assert_eq!(t.targets, ["/data1/file1.0.0"]);
        assert!(t.args.contains(&Set::Create(512 << 20)), "{:?}", t.args);
        let t = translated("[j]\nfilename_format=f.$jobname.$filenum\nsize=1m\n").unwrap();
        assert_eq!(t.targets, ["f.j.0"]);
        for (text, why) in [
            ("[j]\ndirectory=/d\n", "no size="),
            (
                "[j]\ndirectory=/d\nsize=1m\nnumjobs=2\n",
                "a file of its own",
            ),
            ("[j]\nfilename_format=$clientuid\nsize=1m\n", "`$` word"),
            ("[j]\nfilename_format=../$jobname\nsize=1m\n", "`..`"),
            (
                "[j]\nfilename=a\nfilename_format=$jobname\n",
                "not by the format",
            ),
            ("[j]\nfilename=a\nnrfiles=4\n", "several files"),
        ] {
            let e = refusal(text);
            assert!(e.contains(why), "{text}: {e}");
        }
    }

    /// Each key a job may hold is read by one step (or by none, named so):
    /// a key in two steps' lists would leave a reader unsure which step
    /// honours it.
    #[test]
    fn each_known_key_belongs_to_one_step() {
        let mut keys: Vec<&str> = STEPS.iter().flat_map(|s| s.keys.iter().copied()).collect();
        keys.extend(READ_BY_NONE);
        let n = keys.len();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), n, "a key listed twice");
    }

    fn translated(text: &str) -> Result<Translated, FioJobError> {
        let jobs = super::super::jobs(super::super::parse(text, "j.fio")?);
        translate(&jobs[0], "j.fio")
    }

    /// The pattern a translation writes, as bytes, if any.
    fn pattern_of(t: &Translated) -> Option<Vec<u8>> {
        t.args.iter().find_map(|a| match a {
            Set::Pattern(p) => Some(p.bytes().to_vec()),
            _ => None,
        })
    }

    #[test]
    fn fio_patterns_are_written_and_checked_as_fio_does() {
        // buffer_pattern: written, not checked.
        let t = translated("[j]\nrw=write\nbuffer_pattern=0xaaa\n").unwrap();
        assert_eq!(pattern_of(&t), Some(vec![0x0a, 0xaa]));
        assert!(!t.args.contains(&Set::Verify), "{t:?}");
        // verify_pattern alone is fio's verify=pattern: written, read back.
        let t = translated("[j]\nrw=write\nverify_pattern=\"ab\"%o\n").unwrap();
        assert_eq!(pattern_of(&t).map(|b| b.len()), Some(10));
        assert!(t.args.contains(&Set::Verify) && t.read_back, "{t:?}");
        assert!(
            t.notes.iter().any(|n| n.starts_with("verify=pattern:")),
            "{t:?}"
        );
        // verify_pattern beats buffer_pattern, as fio's verify fills the buffers.
        let t =
            translated("[j]\nrw=write\nbuffer_pattern=0x11\nverify=meta\nverify_pattern=0x22\n")
                .unwrap();
        assert_eq!(pattern_of(&t), Some(vec![0x22]));
        assert!(
            t.notes
                .iter()
                .any(|n| n.starts_with("verify=meta with verify_pattern")),
            "{t:?}"
        );
        // A hash without verify_pattern fills with its own data: no pattern.
        let t = translated("[j]\nrw=write\nbuffer_pattern=0x11\nverify=md5\n").unwrap();
        assert_eq!(pattern_of(&t), None);
        assert!(t.args.contains(&Set::Verify), "{t:?}");
        // verify=0 with verify_pattern: written, never checked.
        let t = translated("[j]\nrw=write\nverify=0\nverify_pattern=0x33\n").unwrap();
        assert_eq!(pattern_of(&t), Some(vec![0x33]));
        assert!(!t.args.contains(&Set::Verify), "{t:?}");
    }

    fn refusal(text: &str) -> String {
        match translated(text) {
            Err(e) => e.0,
            Ok(t) => panic!("not refused: {:?}", t.args),
        }
    }

    #[test]
    fn a_zoned_job_is_refused_over_its_mode_not_the_zbd_keys_it_brings() {
        // fio's zbd-rand-write.fio: max_open_zones= comes before any
        // other unknown key, and was named; the mode is the reason.
        let e = refusal("[global]\nmax_open_zones=32\nzonemode=zbd\n[dev1]\nrw=randwrite\n");
        assert!(
            e.contains("`zonemode=zbd` drives a zoned block device"),
            "{e}"
        );
    }

    // fio's ends (backend.c: exceeds_number_ios() is number_ios x loops;
    // io_size rounds size=; time_based outranks them all), as run options.
    #[test]
    fn number_ios_io_size_and_loops_end_the_job_where_fio_ends_it() {
        let args = |text: &str| translated(text).unwrap().args;
        let a = args("[j]\nnumber_ios=100\nloops=2\n");
        assert!(
            a.contains(&Set::Passes(2)) && a.contains(&Set::Ios(200)),
            "{a:?}"
        );
        let a = args("[j]\nio_size=3m\nsize=1m\n");
        assert!(a.contains(&Set::IoLimit(3 << 20)), "{a:?}");
        assert!(
            !a.iter()
                .any(|s| matches!(s, Set::Duration(_) | Set::Passes(_))),
            "{a:?}"
        );
        // fio's 0 is its default: no bound.
        let a = args("[j]\nnumber_ios=0\nio_size=0\n");
        assert!(a.contains(&Set::Passes(1)), "{a:?}");
        assert!(
            !a.iter().any(|s| matches!(s, Set::Ios(_) | Set::IoLimit(_))),
            "{a:?}"
        );
        let t =
            translated("[j]\nloops=3\nio_size=1m\nnumber_ios=5\ntime_based\nruntime=2\n").unwrap();
        assert!(
            t.args.contains(&Set::Duration(Duration::from_secs(2))),
            "{t:?}"
        );
        assert!(
            !t.args
                .iter()
                .any(|s| matches!(s, Set::Ios(_) | Set::IoLimit(_) | Set::Passes(_))),
            "{t:?}"
        );
        assert_eq!(
            t.notes
                .iter()
                .filter(|n| n.contains("with time_based"))
                .count(),
            3,
            "{t:?}"
        );
        // io_size= with loops=: both, fio's rule (measure::loops), said.
        let t = translated("[j]\nio_size=3m\nloops=2\n").unwrap();
        assert!(
            t.args.contains(&Set::IoLimit(3 << 20)) && t.args.contains(&Set::Passes(2)),
            "{t:?}"
        );
        assert!(
            t.notes
                .iter()
                .any(|n| n.starts_with("loops=2 with io_size=3m: ")),
            "{t:?}"
        );
    }

    /// t0007 and t0031-pre of fio's tests write an iolog: it was refused.
    #[test]
    fn write_iolog_is_run_s_iolog_write_and_needs_a_file() {
        let t = translated("[j]\nrw=read\nsize=1m\nwrite_iolog=log\n").unwrap();
        assert!(
            t.args.contains(&Set::IologWrite("log".into())),
            "{:?}",
            t.args
        );
        assert!(refusal("[j]\nrw=read\nwrite_iolog=\n").contains("names no file"));
        assert!(refusal("[j]\nrw=read\nwrite_iolog=-x\n").contains("./NAME"));
    }

    /// t0037 of fio's tests: size=512k over filename=a:b:c:d was refused;
    /// fio gives each file 128k.
    #[test]
    fn size_over_a_list_of_files_is_divided_among_them_as_fio_does() {
        let t = translated("[j]\nrw=write\nfilename=a:b:c:d\nsize=512k\n").unwrap();
        assert!(t.args.contains(&Set::Size(128 << 10)), "{:?}", t.args);
        assert_eq!(t.targets.len(), 4);
        let t = translated("[j]\nrw=read\nfilename=a:b\nsize=1m\nio_size=4m\n").unwrap();
        assert!(t.args.contains(&Set::Size(512 << 10)), "{:?}", t.args);
        assert!(t.args.contains(&Set::IoLimit(2 << 20)), "{:?}", t.args);
        assert!(refusal("[j]\nrw=read\nfilename=a:b:c\nsize=16k\n").contains("multiple of 12288"));
        assert!(refusal("[j]\nrw=read\nfilename=a:b\nrate=1m\n").contains("divides it"));
    }

    /// t0031 of fio's tests replays an iolog: it was refused.
    #[test]
    fn read_iolog_is_run_s_iolog_read_said_without_the_log_s_pauses() {
        let t = translated("[j]\nrw=read\nread_iolog=log\n").unwrap();
        assert!(
            t.args.contains(&Set::IologRead("log".into())),
            "{:?}",
            t.args
        );
        assert!(t.notes.iter().any(|n| n.contains("replay_no_stall=1")));
        let t = translated("[j]\nread_iolog=log\nreplay_no_stall=1\n").unwrap();
        assert!(!t.notes.iter().any(|n| n.contains("replay_no_stall=0")));
        assert!(refusal("[j]\nreplay_no_stall=1\n").contains("without read_iolog="));
    }

    #[test]
    fn startdelay_is_a_time_or_a_range() {
        let args = |text: &str| translated(text).unwrap().args;
        let ms = Duration::from_millis;
        assert!(args("[j]\nstartdelay=2\n").contains(&Set::StartDelay(ms(2000), ms(2000))));
        let t = translated("[j]\nstartdelay=500ms-2s\n").unwrap();
        assert!(
            t.args.contains(&Set::StartDelay(ms(500), ms(2000))),
            "{t:?}"
        );
        assert!(
            t.notes.iter().any(|n| n.contains("draws each job's delay")),
            "{t:?}"
        );
        // 0 is fio's default: no delay.
        assert!(!args("[j]\nstartdelay=0\n")
            .iter()
            .any(|s| matches!(s, Set::StartDelay(..))));
        let e = refusal("[j]\nstartdelay=3s-1s\n");
        assert!(
            e.contains("`startdelay=3s-1s`") && e.contains("A at most B"),
            "{e}"
        );
    }

    #[test]
    fn a_verified_write_is_read_back_unless_do_verify_is_0() {
        let t = translated("[j]\nrw=write\nverify=md5\n").unwrap();
        assert!(t.read_back && t.args.contains(&Set::Verify), "{t:?}");
        assert!(
            t.notes.iter().any(|n| n.starts_with("do_verify=1")),
            "{t:?}"
        );
        assert!(
            t.notes.iter().any(|n| n.starts_with("verify=md5: ")),
            "{t:?}"
        );
        let t = translated("[j]\nrw=write\nverify=crc32c\ndo_verify=0\n").unwrap();
        assert!(!t.read_back && t.args.contains(&Set::Verify), "{t:?}");
    }

    #[test]
    fn a_read_with_do_verify_0_checks_nothing_as_fio_does() {
        let t = translated("[j]\nrw=read\nverify=md5\ndo_verify=0\n").unwrap();
        assert!(!t.args.contains(&Set::Verify), "{t:?}");
        let t = translated("[j]\nrw=read\nverify=md5\n").unwrap();
        assert!(t.args.contains(&Set::Verify) && !t.read_back, "{t:?}");
    }

    #[test]
    fn fio_s_verify_bookkeeping_is_accepted_and_said_in_a_line_each() {
        let t = translated("[j]\nrw=write\nverify=xxhash\nverify_fatal=1\nverify_dump=1\nexperimental_verify=1\nverify_state_save=1\nverify_interval=512\nverify_offset=8\n").unwrap();
        for key in [
            "verify_fatal=1",
            "verify_dump=1",
            "experimental_verify=1",
            "verify_state_save=1",
            "verify_interval=512",
            "verify_offset=8",
        ] {
            assert!(
                t.notes.iter().any(|n| n.starts_with(key)),
                "{key}: {:?}",
                t.notes
            );
        }
        // Their values are still checked.
        assert!(refusal("[j]\nrw=write\nverify=md5\nverify_fatal=2\n")
            .contains("`verify_fatal=2` takes 0 or 1"));
    }

    // Issue 41: fio's examples/basic-verify.fio and t0026's first job.
    #[test]
    fn a_verified_random_write_is_whole_passes_each_block_once_then_read_back() {
        let t = translated("[j]\nrw=randwrite\nverify=crc32c\nloops=8\n").unwrap();
        assert!(t.read_back && t.args.contains(&Set::Verify), "{t:?}");
        assert!(t.args.contains(&Set::Passes(8)), "{t:?}");
        let said = |t: &Translated, s: &str| t.notes.iter().any(|n| n.starts_with(s));
        assert!(said(&t, "rw=randwrite with verify=: every block"), "{t:?}");
        assert!(!said(&t, "random offsets are drawn afresh"), "{t:?}");
        // fio's random map asked for by name is kept for it, and
        // norandommap is said to be overruled.
        assert!(translated("[j]\nrw=randwrite\nverify=md5\nnorandommap=0\n").is_ok());
        let t = translated("[j]\nrw=randwrite\nverify=md5\nnorandommap=1\n").unwrap();
        assert!(said(&t, "norandommap with verify=: "), "{t:?}");
        // Unverified, the map is still refused.
        assert!(refusal("[j]\nrw=randwrite\nnorandommap=0\n").contains("verified rw=randwrite"));
    }

    #[test]
    fn a_read_that_checks_nothing_reads_a_split_s_sizes_unverified() {
        // A read with do_verify=0 checks nothing: its sizes are any.
        let t =
            translated("[j]\nrw=read\nverify=md5\ndo_verify=0\nbssplit=512/50:1M/50\n").unwrap();
        assert!(!t.args.contains(&Set::Verify), "{t:?}");
    }

    #[test]
    fn what_our_verify_cannot_honour_is_refused_by_name_with_why() {
        for (text, named, why) in [
            (
                "[j]\nrw=randwrite\nverify=crc32c\ntime_based\nruntime=5\n",
                "`verify=crc32c` with rw=randwrite and runtime=",
                "half a pass through",
            ),
            (
                "[j]\nrw=randwrite\nverify=crc32c\nio_size=1m\n",
                "with rw=randwrite and io_size=",
                "would be called lost",
            ),
            (
                "[j]\nrw=randwrite\nverify=crc32c\nrandom_distribution=zipf:1.2\n",
                "random_distribution=",
                "others not at all",
            ),
            (
                "[j]\nrw=rw\nverify=crc32c\nnumjobs=2\n",
                "`verify=crc32c` with rw=rw and numjobs=2",
                "each write a share of their own",
            ),
            // Blocks of several sizes (fio's t0002 runs): a random
            // verified write covers its region in blocks of one size, and
            // a read whose size draws are not the write's checks nothing.
            (
                "[j]\nrw=randwrite\nverify=md5\nbssplit=512/50:1M/50\n",
                "`bssplit=512/50:1M/50` with verify=md5 and rw=randwrite",
                "give one bs= to a random verified write",
            ),
            (
                "[j]\nrw=read\nverify=md5\nrandrepeat=0\nbssplit=512/50:1M/50\n",
                "`randrepeat=0` with verify=md5 and blocks of several sizes",
                "give randseed= (the write's)",
            ),
            (
                "[j]\nrw=randrw\nverify=crc32c\ndo_verify=0\n",
                "`verify=crc32c` with rw=randrw and do_verify=0",
                "cannot tell the blocks the mix wrote from those it only read",
            ),
            (
                "[j]\nrw=read\nverify=pattern\n",
                "`verify=pattern`",
                "add verify_pattern=",
            ),
            (
                "[j]\nrw=write\nbuffer_pattern=%o\n",
                "`buffer_pattern=%o`",
                "verify_pattern only",
            ),
            (
                "[j]\nrw=write\nverify_pattern=0xzz\n",
                "`verify_pattern=0xzz`",
                "is not a pattern fio takes",
            ),
            (
                "[j]\nrw=write\nbuffer_pattern=0xaa\nbuffer_compress_percentage=50\nbuffer_compress_chunk=4k\n",
                "`buffer_compress_percentage=50`",
                "with buffer_pattern",
            ),
            (
                "[j]\nrw=write\nbs=4k\nverify_pattern=%o\nverify_interval=512\n",
                "`verify_interval=512`",
                "holding %o",
            ),
            (
                "[j]\nrw=write\nverify=md6\n",
                "`verify=md6`",
                "not one of fio's verify methods",
            ),
        ] {
            let e = refusal(text);
            assert!(e.contains(named) && e.contains(why), "{text:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        // With do_verify=0 there is no read-back for a backlog to change.
        let t = translated("[j]\nrw=write\nverify=md5\nverify_backlog=32\ndo_verify=0\n").unwrap();
        assert!(t.args.contains(&Set::Verify), "{t:?}");
        // fio's t0005: the backlog's reads come after the write, said so.
        let t = translated("[j]\nrw=write\nverify=md5\nverify_backlog=32\n").unwrap();
        assert!(t.read_back, "{t:?}");
        assert!(
            t.notes
                .iter()
                .any(|n| n.contains("verify_backlog=32") && n.contains("the writes' alone")),
            "{:?}",
            t.notes
        );
    }

    #[test]
    fn a_verified_write_s_log_is_not_written_over_by_its_read_back() {
        let g = super::super::groups(
            "[j]\nrw=write\nverify=md5\nsize=1m\nfilename=f\nwrite_bw_log=w\nlog_avg_msec=500\n",
            "j.fio",
        )
        .unwrap();
        assert_eq!(g.len(), 2, "{g:?}");
        let log = |g: &super::super::Group| g.args.iter().any(|a| matches!(a, Set::FioLog(..)));
        assert!(log(&g[0]) && !log(&g[1]), "{g:?}");
    }

    #[test]
    fn the_read_back_reads_the_write_s_region_once_with_no_ramp_or_time_limit() {
        let words = |g: &super::super::Group| super::super::words(&g.args);
        let g = super::super::groups(
            "[j]\nrw=write\nverify=md5\ntime_based\nruntime=30\nramp_time=2\nsize=1m\noffset=1m\nfilename=f\n",
            "j.fio",
        )
        .unwrap();
        assert_eq!(g.len(), 2, "{g:?}");
        let (w, r) = (words(&g[0]), words(&g[1]));
        assert!(
            w.contains(&"--duration=30s".into()) && w.contains(&"--rw=write".into()),
            "{w:?}"
        );
        assert!(
            r.contains(&"--rw=read".into()) && r.contains(&"--passes=1".into()),
            "{r:?}"
        );
        assert!(
            r.contains(&"--ramp=0s".into()) && r.contains(&"--verify".into()),
            "{r:?}"
        );
        assert!(
            r.contains(&"--size=1m".into()) && r.contains(&"--offset=1m".into()),
            "{r:?}"
        );
        assert!(!r.iter().any(|a| a.starts_with("--duration")), "{r:?}");
        assert!(g[1].is_read_back && g[1].targets == ["f"], "{g:?}");
        // do_verify=0: the write alone.
        let g = super::super::groups(
            "[j]\nrw=write\nverify=md5\ndo_verify=0\nfilename=f\n",
            "j.fio",
        )
        .unwrap();
        assert_eq!(g.len(), 1, "{g:?}");
    }
}

/// fio's continue_on_error= and ignore_error= (td_error.c), as
/// `--ignore-errors`.
#[cfg(test)]
mod on_errors_tests {
    use super::*;
    use crate::measure::config::IgnoredErrors;

    fn translated(text: &str) -> Result<Translated, FioJobError> {
        let jobs = super::super::jobs(super::super::parse(text, "j.fio")?);
        translate(&jobs[0], "j.fio")
    }

    /// The job's `--ignore-errors`, as its text.
    fn ignored(extra: &str) -> Option<String> {
        let t = translated(&format!("[j]\nrw=randrw\n{extra}")).unwrap_or_else(|e| panic!("{e}"));
        t.args.iter().find_map(|a| match a {
            Set::IgnoreErrors(e) => Some(e.text()),
            _ => None,
        })
    }

    #[test]
    fn each_type_goes_on_after_fios_default_eio() {
        assert_eq!(ignored(""), None);
        assert_eq!(ignored("continue_on_error=none\n"), None);
        assert_eq!(ignored("continue_on_error=0\n"), None);
        assert_eq!(
            ignored("continue_on_error=read\n").as_deref(),
            Some("read=EIO")
        );
        assert_eq!(
            ignored("continue_on_error=write\n").as_deref(),
            Some("write=EIO")
        );
        assert_eq!(
            ignored("continue_on_error=io\n").as_deref(),
            Some("read=EIO,write=EIO")
        );
        // EILSEQ is the verify type's in fio, whichever the direction.
        assert_eq!(
            ignored("continue_on_error=all\n").as_deref(),
            Some("read=EIO:EILSEQ,write=EIO:EILSEQ")
        );
        assert_eq!(
            ignored("continue_on_error=1\n").as_deref(),
            Some("read=EIO:EILSEQ,write=EIO:EILSEQ")
        );
    }

    #[test]
    fn ignore_error_replaces_a_types_list_and_turns_it_on() {
        // enospc-pressure.fio's: writes go on after ENOSPC only, not EIO.
        assert_eq!(
            ignored("continue_on_error=write\nignore_error=,ENOSPC\n").as_deref(),
            Some("write=ENOSPC")
        );
        // Without continue_on_error=, the lists alone turn their types on.
        assert_eq!(
            ignored("ignore_error=EAGAIN,ENOSPC:122\n").as_deref(),
            Some("read=EAGAIN,write=ENOSPC:EDQUOT")
        );
        assert_eq!(ignored("ignore_error=0x5\n").as_deref(), Some("read=EIO"));
        assert_eq!(
            ignored("ignore_error=-28\n").as_deref(),
            Some("read=ENOSPC")
        );
    }

    #[test]
    fn error_dump_is_said_not_refused() {
        let t = translated("[j]\nrw=write\nerror_dump=0\n").unwrap();
        assert!(
            t.notes.iter().any(|n| n.contains("error_dump=0")),
            "{:?}",
            t.notes
        );
        assert!(translated("[j]\nrw=write\nerror_dump=2\n").is_err());
    }

    #[test]
    fn what_cannot_be_honoured_is_refused_by_name() {
        for (job, says) in [
            (
                "continue_on_error=some\n",
                "is not none, read, write, io, verify or all",
            ),
            ("ignore_error=EIO,EIO,EIO,EIO\n", "more than three lists"),
            (
                "ignore_error=,ENOSUCH\n",
                "`ENOSUCH`, which is not an errno",
            ),
            ("ignore_error=,0\n", "`0`, which is not an errno"),
            (
                "verify=md5\ncontinue_on_error=verify\n",
                "fio counts a bad block and goes on",
            ),
        ] {
            let e = translated(&format!("[j]\nrw=write\n{job}")).unwrap_err().0;
            assert!(e.contains(says), "{job}: {e}");
        }
        // Without verify= there is no bad block to go on after.
        assert!(translated("[j]\nrw=write\ncontinue_on_error=all\n").is_ok());
    }

    #[test]
    fn verify_async_is_said_not_refused() {
        let t = translated("[j]\nrw=randrw\nverify=crc32c-intel\nverify_async=4\n").unwrap();
        assert!(
            t.notes.iter().any(|n| n.starts_with("verify_async:")),
            "{:?}",
            t.notes
        );
        let t = translated("[j]\nrw=randrw\nverify=crc32c-intel\nverify_async=0\n").unwrap();
        assert!(!t.notes.iter().any(|n| n.starts_with("verify_async:")));
        assert!(translated("[j]\nrw=randrw\nverify=md5\nverify_async=x\n").is_err());
    }

    #[test]
    fn ignored_errors_read_back_as_written() {
        let e = IgnoredErrors::parse("write=ENOSPC:122, read=5").unwrap();
        assert_eq!(e.write, vec![nix::libc::ENOSPC, nix::libc::EDQUOT]);
        assert_eq!(e.read, vec![nix::libc::EIO]);
        assert_eq!(IgnoredErrors::parse(&e.text()).unwrap(), e);
        assert!(e.ignores(crate::base::io::Op::Write, nix::libc::ENOSPC));
        assert!(!e.ignores(crate::base::io::Op::Read, nix::libc::ENOSPC));
    }
}
