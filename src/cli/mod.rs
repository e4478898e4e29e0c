//! Layer `cli`: the command line as clap sees it (the command tree here,
//! the measuring options in `run_args`), the `--config` file
//! (`configfile`), fio job files (`fio_job`, with fio's words in `fio_words`), and the validation of what was typed into a run
//! configuration (`validate`), every refusal one line; a run's options
//! built in code, typed, for the commands that plan runs (`builder`).
//!
//! May import `document`, `measure`, `engine`, `device`, `analysis`,
//! `base` (the types it fills in); never `commands` or `report`.

pub mod advise;
pub mod builder;
pub mod compare;
pub mod configfile;
pub mod fio_cmdline;
pub mod fio_job;
pub mod fio_words;
pub mod front;
pub mod help;
pub mod sweep;
pub mod validate;

mod run_args;
mod values;

pub use run_args::*;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Clone, Parser)]
#[command(
    name = "stripebench",
    version,
    args_override_self = true,
    about = "Storage throughput for disks and striped volumes: one pinned worker per target, O_DIRECT or page-cache I/O, per-worker and total MB/s, IOPS and latency",
    after_help = concat!(
        "Exit codes: 0 success, 1 the run saw I/O errors or failed, 2 bad input or refused for safety, ",
        "4 most sampled reads came back all zeros, so the figure is not the device's (--allow-holes accepts it), ",
        "128+N interrupted by signal N (130 for Ctrl-C, 143 for SIGTERM; the report covers what was measured).\n",
        "Units: rates are decimal in MB/s and GB/s (1 MB/s = 10^6 bytes/s) and binary in MiB/s and GiB/s (2^20 bytes/s); ",
        "sizes are binary: 4k = 4KiB = 4096 bytes, 1m = 1MiB, 1g = 1GiB, 1t = 1TiB; a size in KB, MB, GB or TB is refused as ambiguous."
    )
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Drive every target at once for a fixed time and report per-worker and total figures.
    ///
    /// With no TARGET, runs on a built-in test bed: one 256 MiB scratch file per CPU
    /// (at least 2), fully written, in a temporary directory that is removed afterwards.
    Run(Box<RunArgs>),

    /// Read targets written with `run --rw write --verify` once, end to end,
    /// and report every corrupt, misplaced or stale block (exit 1 if any).
    ///
    /// Takes the options of `run` (the --bs, --jobs, --offset and --size the
    /// data was written with); throughput is measured as for any read.
    Verify(Box<RunArgs>),

    /// Run a grid of points: the cartesian product of --param values (read-ahead,
    /// md's stripe_cache_size, group_thread_cnt and resync limits, bs, jobs, iodepth, mode, rw, members, rate; rate=curve for latency
    /// against load), each a full run on a cold cache, tabled as it goes and
    /// saved after every point.
    Sweep(Box<SweepArgs>),

    /// Members against the assembled volume, in phases: each member alone
    /// (--solo), all members at once (these --repeat times), the volume with
    /// one worker and with one per member (O_DIRECT), and buffered by one per
    /// member and by one thread (with the O_DIRECT/buffered ratios); then the
    /// level's ceilings, the stripe efficiency against one in two (the
    /// volume against N × its slowest member: the stripe layer; the slowest
    /// member against the median: the members' imbalance; and which loss is
    /// the larger), each member's share and the slow-member verdict (a robust rule over every member,
    /// with its numbers). A phase with I/O errors, or whose workers completed
    /// too few I/Os, is marked and kept out of the figures it would distort.
    ///
    /// VOLUME is a striped block device (md, dm) or the mount point of a
    /// striped file system (btrfs RAID0), where the volume phases read a test
    /// file that compare creates and removes. Takes run's options (--bs,
    /// --duration, --engine, --json, ...). Reads only, but with --rw write
    /// (or randwrite) and --allow-destructive on an md or dm volume of known
    /// chunk: the members are still only read, and the volume is written in
    /// full stripes (--align stripe) and then one chunk at a time, each
    /// phase with what its members read (read-modify-write).
    Compare(Box<CompareArgs>),

    /// Find what is wrong with an array: a budgeted battery of checks chosen
    /// from its topology (each skipped with its reason when it does not
    /// apply), each finding with its evidence, the command that fixes it,
    /// what makes the fix persist, and the measured or estimated gain.
    ///
    /// Reads sysfs for every layer and member (array state, read-ahead
    /// against the full stripe, alignment, members' request limits against
    /// the chunk, members that differ, parity tunables), then measures
    /// buffered sequential reads at the current read-ahead and at 1, 2 and 4
    /// full stripes (cold cache; read-ahead is set and put back as `run
    /// --readahead` does it, so a signal or `stripebench restore` puts it
    /// back). Read-only. Exit 1 when a finding is at --fail-on or worse.
    Advise(AdviseArgs),

    /// Print the storage stack under a block device, file or mount point, down
    /// to the leaf disks: md, dm, btrfs members, chunk sizes, member order.
    Topology(TopologyArgs),

    /// Fit the Universal Scalability Law to a scaling curve (a sweep over
    /// members or jobs, merged fleets, or runs) and plan: throughput at N, the
    /// N for a target, the peak and the knee.
    Plan(PlanArgs),

    /// Merge run documents from many hosts (or earlier merges) into one: the
    /// workers of every host, per-host totals, and fleet latency from the
    /// exact merge of the histograms.
    Merge(MergeArgs),

    /// Two run, sweep, compare, merge or findings documents side by side: per target
    /// (point, phase, host) and total, MB/s, IOPS and p50/p99/p99.9 with the
    /// change in percent, and whether each change is beyond the noise.
    ///
    /// The test is a two-sided Mann-Whitney U test on the per-second rates
    /// of both runs (a sweep point's repeats instead, when each side has
    /// enough of them); latency percentiles of single runs have no
    /// per-second samples and are not tested. Refuses (exit 2) documents of
    /// different workloads (rw, bs, direct or buffered, engine, iodepth,
    /// jobs, target count, ...) unless --force.
    Diff(DiffArgs),

    /// Every disk's history: the results run, compare and advise recorded,
    /// kept by the disk's identity (WWN, else serial and model), whatever
    /// its device name. Lists the disks known with their last result and
    /// trend; `history DISK` (a WWN, serial or device name) shows its series
    /// per workload. Judges each series' recent runs against its own
    /// baseline (drift: the Mann-Whitney U test diff uses, and --threshold),
    /// and each disk against its peers of one model, firmware and workload
    /// (fail-slow: a robust fit of p99 against MB/s, and the disks above its
    /// prediction bound, ranked). `history import DOC...` records documents
    /// from other hosts (once each, by their hash).
    #[command(subcommand_precedence_over_arg = true)]
    History(HistoryArgs),

    /// Run fio's command line: `stripebench fio --name=test --filename=F
    /// --rw=randread ...` is the job file those options make (options before
    /// the first --name are [global], each --name starts a job), run as
    /// `run --fio-job` runs it: the same translation, the same refusals, and
    /// the stripebench command it stands for printed on stderr first.
    ///
    /// fio's options as fio reads them: --opt=value, or --opt value for an
    /// option that takes one (a bare flag such as --time_based takes a value
    /// only after '='), one dash or two. A word that is no option is a job
    /// file (`fio [options] FILE...`, as fio reads it): the options before the
    /// first --name are its defaults, which its [global] and jobs override;
    /// --section=NAME (again for more) runs only those sections; several
    /// files run one after another, each after the first from fio's
    /// defaults. fio's own program options (--output, --output-format, --eta, ...) are refused;
    /// stripebench's own options (--json FILE, --dry-run,
    /// --allow-destructive, ...) go after `--`. What a job file may hold, and
    /// what is refused, is in docs/fio.md; the most copied fio command line
    /// (randrw 75/25, 4k, libaio at iodepth 64, gtod_reduce) runs as is.
    Fio(FioArgs),
    /// Render a run, sweep, compare, merge or findings (advise) document written earlier with
    /// --json as a one-file HTML report (as --html would have).
    Report(ReportArgs),

    /// Print this machine's single-thread memory-copy bandwidth: the ceiling
    /// of a page-cache read that leaves the CPU caches.
    Membw,

    /// Put back system settings (read_ahead_kb, ...) that killed runs left
    /// changed, and the fixes `advise --apply` kept, newest change first,
    /// and remove the test beds killed runs left, from the state files in
    /// /run/stripebench (or $XDG_RUNTIME_DIR), or in $STRIPEBENCH_STATE_DIR
    /// when it is set. The directory and every file read from it must be
    /// owned by root or by the user running, and writable by nobody else:
    /// anything else is refused and named, with its owner and mode.
    Restore(RestoreArgs),

    /// Print this stripebench's version, the JSON schema version it writes
    /// and reads, and this machine's clock: what a fleet launcher checks on
    /// every host before any of them starts I/O (scripts/fleet.sh's preflight).
    Version(VersionArgs),

    /// Print the shell completion script for SHELL on stdout, made from
    /// this command line's own definition.
    ///
    /// bash: `stripebench completions bash > /etc/bash_completion.d/stripebench`
    /// (the Debian package installs it); zsh: into a directory of $fpath as
    /// `_stripebench`; fish: `~/.config/fish/completions/stripebench.fish`.
    Completions(CompletionsArgs),

    /// Print a man page (roff) on stdout: stripebench(1), or with a
    /// SUBCOMMAND its own page, stripebench-SUBCOMMAND(1).
    ///
    /// `stripebench man run | man -l -` reads it without installing it.
    Man(ManArgs),
}

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Clone, Args)]
pub struct FioArgs {
    /// fio's options (--name=NAME starts a job), or one fio job file; then
    /// `--` and stripebench run's own options.
    #[arg(
        value_name = "FIO-OPTION",
        num_args = 1..,
        required = true,
        allow_hyphen_values = true,
        trailing_var_arg = true
    )]
    pub words: Vec<std::ffi::OsString>,
}

#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (run, sweep, compare, ...);
    /// none: the page of stripebench itself.
    #[arg(conflicts_with = "list")]
    pub subcommand: Option<String>,

    /// Print the names of the subcommands that have a page, one per line
    /// (what a packager loops over).
    #[arg(long)]
    pub list: bool,
}

#[derive(Debug, Clone, Args)]
pub struct VersionArgs {
    /// One JSON line: {"version", "schema_version", "clock_unix_ns"}.
    #[arg(long)]
    pub json: bool,

    /// Print once, then again, with the clock read anew, each time a line
    /// arrives on standard input, until it ends: a launcher that pings over
    /// the open connection times the round trip without the connection's
    /// setup, so the skew it derives is within half a network round trip,
    /// not half an ssh login.
    #[arg(long)]
    pub on_stdin: bool,

    /// Read hosts' answers to `version --json` on standard input, one a line,
    /// and print each as "VERSION SCHEMA_VERSION CLOCK_UNIX_NS" once a JSON
    /// parser has checked it is one (the version made of letters, digits and
    /// . + ~ -); exit 2 at the first line that is not. A fleet launcher reads
    /// what hosts send with it, never with a regex (scripts/fleet.sh).
    #[arg(long, conflicts_with_all = ["json", "on_stdin"])]
    pub read_answers: bool,
}

#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// A parameter and its values, NAME=V1,V2,...: readahead (KiB),
    /// stripe_cache_size and group_thread_cnt (md raid4/5/6), sync_speed_min
    /// and sync_speed_max (md with redundancy, KiB/s or system: swept while
    /// the array resyncs, each point gives the resync's rate and the whole
    /// rebuild's time beside the users' MB/s and p99), bs, jobs,
    /// iodepth, mode (direct,buffered), rw, members (first k targets),
    /// target (one named target alone at each point: its number, 1 for the
    /// first, or `each` for every one in turn, so that targets are measured
    /// one after the other, never at once), rate
    /// (each worker's schedule: max, SIZE/s as --rate, Niops, N% of the max
    /// point's; or `curve`: max, then --curve's percentages of what each
    /// worker delivered at max, for latency against load). Repeat for a grid.
    #[arg(long = "param", value_name = "NAME=V1,V2,...", value_parser = sweep::parse_param)]
    pub params: Vec<crate::document::sweep::Param>,

    /// With --param rate=curve: the percentages of the unthrottled rate to
    /// measure (default 10,50,70,80,90,95,100).
    #[arg(long, value_name = "PCT,PCT,...", value_delimiter = ',', value_parser = sweep::parse_curve_pct)]
    pub curve: Vec<f64>,

    /// Run each point K times; the table shows the median and the range.
    #[arg(long, value_name = "K", default_value = "1", value_parser = parse_count)]
    pub repeat: usize,

    /// Refuse sweeps of more points than this.
    #[arg(long, value_name = "N", default_value = "100", value_parser = parse_count)]
    pub max_points: usize,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// Also measure each member alone (its ideal, without the others); the
    /// slow-member verdict then judges the members alone. When the members
    /// are behind two host adapters or more (controllers: PCI functions,
    /// SAS expanders), each adapter's members are also read together, and
    /// an adapter that caps them (together far below their sum alone, and
    /// below the other adapters') is named as the bottleneck.
    #[arg(long)]
    pub solo: bool,

    /// Run the member phases (each member alone, all members together) K
    /// times: each member's figure is the median of its runs, its spread
    /// their range.
    #[arg(long, value_name = "K", default_value = "3", value_parser = parse_count)]
    pub repeat: usize,

    /// Size of the test file on a mounted volume (default: twice the
    /// machine's memory, so the page cache cannot hold it, within 90% of the
    /// free space).
    #[arg(long, value_name = "SIZE", value_parser = parse_nonzero_size)]
    pub file_size: Option<u64>,
}

#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    /// A sweep over members or jobs; or several merge / run documents, one N each.
    #[arg(value_name = "RESULT.json", required = true)]
    pub files: Vec<PathBuf>,

    /// Predict the throughput at these N (e.g. 8,16,64).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', value_parser = parse_positive_f64)]
    pub at: Vec<f64>,

    /// The N needed for this throughput: 20GB/s, 500MB/s (decimal: 1 MB/s =
    /// 10^6 bytes/s), 2GiB/s (binary: 2^30 bytes/s), or bytes per second.
    #[arg(long, value_name = "RATE", value_parser = crate::base::units::parse_rate)]
    pub target: Option<f64>,

    /// Read a latency curve (a sweep over rate, e.g. `sweep --param
    /// rate=curve --json`) instead and name the highest delivered rate whose
    /// p99 latency is within this (e.g. 2ms); exit 1 when no point meets it.
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub p99: Option<std::time::Duration>,

    /// Draw the measured points, the fitted curve and the linear ideal.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,

    /// Write the fit as JSON to PATH (`-` for stdout).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,

    /// Fit results of different workloads together anyway (a warning says
    /// which option differs); and predict from a fit whose error is above
    /// 10% RMS of the mean, which plan otherwise refuses (exit 2, after
    /// printing the fit and its residuals).
    #[arg(long)]
    pub force: bool,
}

fn parse_positive_f64(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("'{text}' is not a positive number")),
    }
}

#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// Run documents (`run --json`) or merged documents.
    #[arg(value_name = "FILE.json", required = true)]
    pub files: Vec<PathBuf>,

    /// Write the merged document to PATH (`-` for stdout).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,

    /// Merge runs of different workloads, or one run given twice, anyway
    /// (a warning says which option differs, or which run repeats).
    #[arg(long)]
    pub force: bool,

    /// A run of the fleet that sent no document (it died, hung or could not
    /// start): recorded and printed as missing; the others are merged.
    /// Repeat for each.
    #[arg(long, value_name = "HOST[=REASON]", value_parser = parse_missing)]
    pub missing: Vec<crate::document::merge::MissingHost>,

    /// The launcher's preflight record (scripts/fleet.sh's OUT/preflight.json:
    /// each host's version, clock skew and round trip), kept in the document.
    #[arg(long, value_name = "FILE")]
    pub preflight: Option<PathBuf>,

    /// Merge nothing: print "N WHY" for each document (N counting the FILEs
    /// from 1) that repeats the run of one given before it, whatever its
    /// hostname (a copy of another host's document), or whose hostname is
    /// not a host name (RFC 1123); a launcher names those missing and
    /// merges the rest (scripts/fleet.sh).
    #[arg(long, conflicts_with_all = ["json", "force", "missing", "preflight"])]
    pub list_repeats: bool,
}

#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub action: Option<HistoryAction>,

    /// One disk: its key, WWN, serial, or its device name at its last result.
    #[arg(value_name = "DISK")]
    pub disk: Option<String>,

    /// The history database (default: as run's --history).
    #[arg(long, value_name = "FILE.db", global = true)]
    pub history: Option<PathBuf>,

    /// The baseline: each series' first N runs.
    #[arg(long, value_name = "N", default_value = "5", value_parser = parse_count)]
    pub baseline: usize,

    /// The baseline: each series' runs up to this date instead (YYYY-MM-DD,
    /// the whole day, UTC; or an RFC 3339 time).
    #[arg(long, value_name = "DATE", value_parser = parse_until)]
    pub baseline_until: Option<f64>,

    /// The recent runs judged: the last N after the baseline.
    #[arg(long, value_name = "N", default_value = "5", value_parser = parse_count)]
    pub recent: usize,

    /// A drift is a change of MB/s down or p99 up by more than PCT percent...
    #[arg(long, value_name = "PCT", default_value = "10", value_parser = parse_threshold)]
    pub threshold: f64,

    /// ... with p below this significance level.
    #[arg(long, value_name = "P", default_value = "0.05", value_parser = parse_alpha)]
    pub alpha: f64,

    /// Exit 1 when a disk drifted, is fail-slow, or either (any) (for cron and CI).
    #[arg(long, value_name = "WHAT", value_enum)]
    pub fail_on: Option<HistoryFailOn>,

    /// Write the history document (kind "history", docs/json.md) to PATH; `-` for stdout.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,

    /// Write the history page to PATH: a row per disk with sparklines of its
    /// MB/s and p99, its flags, and the drift and fail-slow lines.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Clone, Subcommand)]
pub enum HistoryAction {
    /// Record run, compare and findings documents (from other hosts, or
    /// written with --no-history) in the history: each run document once,
    /// by its hash, so that importing again adds nothing.
    Import {
        /// Documents to record.
        #[arg(value_name = "DOC.json", required = true)]
        docs: Vec<PathBuf>,
    },
}

/// `history --fail-on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HistoryFailOn {
    Drift,
    FailSlow,
    Any,
}

fn parse_until(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let rfc = if t.len() == 10 {
        format!("{t}T23:59:59Z")
    } else {
        t.to_string()
    };
    humantime::parse_rfc3339_weak(&rfc)
        .ok()
        .and_then(|s| s.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs_f64())
        .ok_or_else(|| format!("'{text}' is not a date (YYYY-MM-DD) or an RFC 3339 time"))
}

#[derive(Debug, Clone, Args)]
pub struct DiffArgs {
    /// The document to compare against (before).
    #[arg(value_name = "BASE.json")]
    pub base: PathBuf,

    /// The document to judge (after).
    #[arg(value_name = "NEW.json")]
    pub new: PathBuf,

    /// Exit 1 when MB/s falls, or p99 rises, by more than PCT percent in any
    /// row (for CI); the report names the rows. A change must also be
    /// significant (p < --alpha) to count; a change that could not be tested
    /// (too few samples, or the p99 of single runs) counts on its size alone.
    #[arg(long, value_name = "PCT", value_parser = parse_threshold)]
    pub threshold: Option<f64>,

    /// The significance level: a change with p below it is beyond the noise.
    #[arg(long, value_name = "P", default_value = "0.05", value_parser = parse_alpha)]
    pub alpha: f64,

    /// Write the diff as JSON to PATH (`-` for stdout).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,

    /// Diff documents of different workloads anyway: each difference is
    /// printed as a warning.
    #[arg(long)]
    pub force: bool,
}

fn parse_threshold(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!(
            "'{text}' is not a percentage above 0 (such as 10 or 10%)"
        )),
    }
}

fn parse_alpha(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(format!(
            "'{text}' is not a significance level between 0 and 1 (such as 0.05)"
        )),
    }
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// A run, sweep, compare, merge or findings document (`--json`).
    #[arg(value_name = "DOC.json")]
    pub file: PathBuf,

    /// Where the HTML report goes (`-` for stdout).
    #[arg(short = 'o', long = "output", value_name = "PATH", required = true)]
    pub output: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct AdviseArgs {
    /// A block device (md, dm, LVM volume, disk) or a btrfs mount point.
    #[arg(value_name = "VOLUME")]
    pub volume: PathBuf,

    /// Time for the measured checks, all told (e.g. 30s, 2m).
    #[arg(long, value_name = "TIME", default_value = "2m", value_parser = parse_positive_duration)]
    pub budget: std::time::Duration,

    /// Read sysfs only: measure nothing (a second or less; no --budget).
    #[arg(long, conflicts_with = "budget")]
    pub quick: bool,

    /// Exit 1 when any finding is at this severity or worse (info, low,
    /// medium, high); none: exit 0 whatever is found.
    #[arg(long, value_name = "SEVERITY", default_value = "none", value_parser = parse_fail_on)]
    pub fail_on: FailOn,

    /// Write the findings document (kind "findings", docs/json.md) to
    /// PATH; `-` for stdout (the report then goes to stderr).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,

    /// Allow the checks that write to the volume, DESTROYING its data
    /// (parity RAID: full-stripe writes at the array's stripe cache and at
    /// the fix's, and sub-stripe random writes, the members' reads counted
    /// as read-modify-write); without it they are skipped and said so.
    #[arg(long)]
    pub allow_destructive: bool,

    /// Make the fixes that are sysfs settings restore can put back
    /// (read_ahead_kb, max_sectors_kb, a scheduler, stripe_cache_size), keep
    /// them, and run the battery again (a second budget): the report shows
    /// the findings and figures before and after. 'stripebench restore'
    /// puts them back. Never touches data.
    #[arg(long)]
    pub apply: bool,

    /// Wait for another run that holds the volume's settings, instead of refusing.
    #[arg(long)]
    pub wait_lock: bool,

    /// Take a run's figure even when the device answered its reads without
    /// a medium: a loop device over a file with holes, a never-written
    /// zram, or most sampled reads all zeros (unwritten, trimmed or
    /// thin-provisioned blocks). Without it such a run is refused and its
    /// check skipped, saying why.
    #[arg(long)]
    pub allow_holes: bool,

    /// device-mapper tables (`dmsetup table` output) to read instead of
    /// running dmsetup.
    #[arg(long, value_name = "FILE")]
    pub dm_table: Option<PathBuf>,

    /// Record each measured run's targets in this history database (as
    /// run's --history; default the same).
    #[arg(long, value_name = "FILE.db", conflicts_with = "no_history")]
    pub history: Option<PathBuf>,

    /// Record nothing in the history database.
    #[arg(long)]
    pub no_history: bool,
}

#[derive(Debug, Clone, Args)]
pub struct RestoreArgs {
    /// Leave the fixes `advise --apply` kept: put back only what killed
    /// runs left changed.
    #[arg(long)]
    pub keep_applied: bool,
}

/// `--fail-on`: the severity at which advise exits 1; `None` for `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailOn(pub Option<crate::document::advise::Severity>);

/// `--fail-on`: a severity, or `none`.
pub fn parse_fail_on(text: &str) -> Result<FailOn, String> {
    match text.trim() {
        "none" => Ok(FailOn(None)),
        t => crate::document::advise::Severity::parse(t)
            .map(|s| FailOn(Some(s)))
            .ok_or_else(|| {
                format!("'{text}' is not a severity: give info, low, medium, high or none")
            }),
    }
}

#[derive(Debug, Clone, Args)]
pub struct TopologyArgs {
    /// A block device, a file, or a mount point.
    pub target: PathBuf,

    /// Print the stack as JSON.
    #[arg(long)]
    pub json: bool,

    /// device-mapper tables (`dmsetup table` output) to read instead of
    /// running dmsetup.
    #[arg(long, value_name = "FILE")]
    pub dm_table: Option<PathBuf>,
}

/// The long option names of a subcommand (for `--config` files).
pub fn long_options(subcommand: &str) -> Option<Vec<String>> {
    use clap::CommandFactory;
    Cli::command().find_subcommand(subcommand).map(|s| {
        s.get_arguments()
            .filter_map(|a| a.get_long().map(str::to_string))
            .collect()
    })
}

/// `merge --missing HOST[=REASON]`: the value parser (the type is the
/// merge document's).
pub fn parse_missing(text: &str) -> Result<crate::document::merge::MissingHost, String> {
    let (host, reason) = text.split_once('=').unwrap_or((text, "no document"));
    let (host, reason) = (host.trim(), reason.trim());
    if host.is_empty() {
        return Err("give the host that sent no document: --missing HOST or HOST=REASON".into());
    }
    Ok(crate::document::merge::MissingHost {
        host: host.into(),
        reason: if reason.is_empty() {
            "no document"
        } else {
            reason
        }
        .into(),
    })
}
