//! Layer `engine`: how I/O is issued. Imports only `base`: an engine knows
//! nothing of timing, statistics, reports or the command line.
//!
//! A worker owns one engine; the engine owns the
//! worker's aligned buffers (one per slot, allocated once) and knows nothing
//! of timing or statistics.
//!
//! The interface is the same for one I/O in flight and for many: the worker
//! `queue`s an I/O on a free slot, then `reap` issues what was queued and
//! hands back every completion that is ready, at least one. A free slot is
//! a [`SlotToken`], which `queue` takes and `reap` gives back, so a buffer
//! cannot be reached while the kernel may write into it.
//!
//! - `sync`: pread/pwrite, one slot; `reap` performs the queued I/O.
//! - `uring`: io_uring with `--iodepth` slots, submitted and reaped in batches,
//!   with registered buffers and file when the kernel and memlock allow.
//! - `fault`, `mock`: for tests, failing or hanging a real engine's I/O, or
//!   serving every I/O on a virtual clock ([`clock`]) without a device.

pub mod buffer;
pub mod clock;
pub mod fault;
pub mod mock;
pub mod sync;
pub mod trim;
pub mod uring;
pub mod watch;
pub mod writedata;

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::base::io::Op;
use crate::engine::buffer::AlignedBuf;

pub use fault::FaultEngine;
pub use mock::MockEngine;
pub use sync::SyncEngine;
pub use uring::UringEngine;

/// Which engine a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Sync,
    Uring,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Sync => "sync",
            EngineKind::Uring => "uring",
        }
    }
}

/// RWF_DONTCACHE (Linux 6.14): buffered I/O whose pages leave the page
/// cache once the I/O is done (`--uncached`).
pub const RWF_DONTCACHE: i32 = 0x80;

/// RWF_NOWAIT (Linux 4.14): an I/O that would block fails with EAGAIN
/// instead (`--nowait`); the engines count it and issue it again, blocking.
pub const RWF_NOWAIT: i32 = 0x8;

/// How an io_uring's work is run back in the task (`--taskrun`): the ring's
/// SINGLE_ISSUER, COOP_TASKRUN and DEFER_TASKRUN setup flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskRun {
    /// The first of defer, coop and plain this kernel has (defer is
    /// refused with SQPOLL): what a ring reports is the one it got.
    #[default]
    Auto,
    /// No flags: completions are posted by interrupting the task (Linux 5.1).
    Plain,
    /// SINGLE_ISSUER and COOP_TASKRUN: task work waits for the next
    /// transition to the kernel, no interrupt (Linux 6.0).
    Coop,
    /// SINGLE_ISSUER and DEFER_TASKRUN: task work runs only when the task
    /// waits for completions (Linux 6.1).
    Defer,
}

impl TaskRun {
    pub const NAMES: [&'static str; 4] = ["auto", "plain", "coop", "defer"];

    pub fn name(self) -> &'static str {
        match self {
            TaskRun::Auto => "auto",
            TaskRun::Plain => "plain",
            TaskRun::Coop => "coop",
            TaskRun::Defer => "defer",
        }
    }

    pub fn parse(s: &str) -> Option<TaskRun> {
        match s {
            "auto" => Some(TaskRun::Auto),
            "plain" => Some(TaskRun::Plain),
            "coop" => Some(TaskRun::Coop),
            "defer" => Some(TaskRun::Defer),
            _ => None,
        }
    }

    /// The first kernel that has it.
    pub fn since(self) -> &'static str {
        match self {
            TaskRun::Auto | TaskRun::Plain => "5.1",
            TaskRun::Coop => "6.0",
            TaskRun::Defer => "6.1",
        }
    }
}

/// What an io_uring is set up with, beside its size: `--hipri`
/// (IORING_SETUP_IOPOLL), `--sqpoll [CPU]` (IORING_SETUP_SQPOLL, with
/// SQ_AFF on CPU) and `--taskrun`; and how the worker waits for its
/// completions (`--complete-min`, `--sched`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingSetup {
    pub iopoll: bool,
    pub sqpoll: bool,
    pub sqpoll_cpu: Option<u32>,
    pub taskrun: TaskRun,
    /// `--complete-min`: how many completions each wait asks for (fio's
    /// iodepth_batch_complete_min), or auto.
    pub complete_min: CompleteMin,
    /// `--sched`: the worker thread's scheduling policy.
    pub sched: Sched,
}

impl Default for RingSetup {
    fn default() -> RingSetup {
        RingSetup {
            iopoll: false,
            sqpoll: false,
            sqpoll_cpu: None,
            taskrun: TaskRun::Auto,
            complete_min: CompleteMin::Auto,
            sched: Sched::Auto,
        }
    }
}

impl RingSetup {
    /// Whether the worker's waits are its own to size: no `--sqpoll`
    /// thread polls for it, no `--hipri` polling, no schedule (`paced`:
    /// `--rate`) ends a wait when the next I/O is due. `--complete-min
    /// auto` batches only then.
    pub fn waits_alone(&self, paced: bool) -> bool {
        !self.sqpoll && !self.iopoll && !paced
    }
}

/// How many completions an io_uring worker waits for at once
/// (`--complete-min`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CompleteMin {
    /// One, except where every I/O goes to an io-wq thread on the worker's
    /// CPU ([`punts`]) and is CPU work there (a RAM-backed target): a
    /// quarter of the depth ([`CompleteMin::resolve`]).
    #[default]
    Auto,
    /// N (fio's iodepth_batch_complete_min).
    Fixed(u32),
}

impl CompleteMin {
    /// `--complete-min auto` or N (at least 1).
    pub fn parse(s: &str) -> Result<CompleteMin, String> {
        if s == "auto" {
            return Ok(CompleteMin::Auto);
        }
        match s.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(CompleteMin::Fixed(n)),
            _ => Err(format!(
                "`{s}` is neither auto nor a whole number of at least 1"
            )),
        }
    }

    /// How many completions each wait of a worker at `depth` asks for.
    /// Auto asks for more than one only where io_uring hands every I/O to
    /// an io-wq thread on the worker's CPU (`punted`), the target is RAM
    /// (`ram`: zram, brd, a tmpfs file, where that thread does each I/O as
    /// CPU work in a few us, one at a time; not dm-crypt, FUSE or NFS,
    /// which punt too but whose I/Os take a device's time and overlap), and
    /// nothing else decides the worker's waits (`alone`:
    /// [`RingSetup::waits_alone`]). There each completion woke the
    /// worker, and the scheduler at times let it cut the io-wq thread off
    /// every two I/Os or so, for seconds (see BENCHMARKS.md, (b')); a
    /// quarter of the depth keeps three quarters of it in flight. (A
    /// bound on that wait, the kernel's min_wait_usec, was measured and
    /// costs more than the wake-ups it saves: 300k IOPS at 50 us against
    /// 450k without, on zram.)
    pub fn resolve(self, depth: usize, punted: bool, ram: bool, alone: bool) -> u32 {
        let depth = depth.max(1) as u32;
        match self {
            CompleteMin::Fixed(n) => n.clamp(1, depth),
            CompleteMin::Auto if punted && ram && alone => (depth / 4).max(1),
            CompleteMin::Auto => 1,
        }
    }
}

/// How a worker thread is scheduled (`--sched`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sched {
    /// batch for an io_uring worker whose target has no non-blocking
    /// path ([`punts`]) and no `--sqpoll` thread, normal otherwise.
    #[default]
    Auto,
    /// SCHED_OTHER, as every thread starts.
    Normal,
    /// SCHED_BATCH: a woken worker does not preempt the thread running on
    /// its CPU. Where io_uring hands every I/O to an io-wq kernel thread on
    /// the worker's CPU (zram, brd), that thread then runs the queue
    /// through instead of being preempted at each completion: two context
    /// switches per I/O fewer (on zram, 4k at depth 32: 240k IOPS normal,
    /// 415k batch). A CPU that waits on a device is idle, and a woken
    /// thread runs at once either way.
    Batch,
}

impl Sched {
    pub const NAMES: [&'static str; 3] = ["auto", "normal", "batch"];

    pub fn parse(s: &str) -> Option<Sched> {
        match s {
            "auto" => Some(Sched::Auto),
            "normal" => Some(Sched::Normal),
            "batch" => Some(Sched::Batch),
            _ => None,
        }
    }

    /// What auto comes to for a worker whose target punts or not.
    pub fn resolve(self, punted: bool) -> Sched {
        match self {
            Sched::Auto if punted => Sched::Batch,
            Sched::Auto => Sched::Normal,
            s => s,
        }
    }

    /// Puts the calling thread (and the io-wq threads it creates after,
    /// which inherit it) under this policy; auto must be resolved first.
    pub fn apply(self) -> io::Result<()> {
        let policy = match self {
            Sched::Batch => libc::SCHED_BATCH,
            Sched::Normal | Sched::Auto => return Ok(()),
        };
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: the calling thread (0), a policy and a parameter that
        // lives for the call.
        if unsafe { libc::sched_setscheduler(0, policy, &param) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// What an engine says of itself once it is built ([`Engine::describe`]):
/// plain facts, from which the run document's `workers[]` entry is made
/// (`engine_path`, `buffer`, `ring`; document::run).
#[derive(Debug, Clone, PartialEq)]
pub struct EngineFacts {
    /// How I/O is issued, in words (e.g. "io_uring, registered buffers and file").
    pub path: String,
    /// What the slots' buffers are made of.
    pub buffers: buffer::BufferFacts,
    /// How the io_uring ring was set up; `None` for the other engines.
    pub ring: Option<RingFacts>,
    /// The kernel thread that submits for this engine (`--sqpoll`): its
    /// thread id in this process, whose CPU time the worker counts.
    pub submit_thread: Option<i32>,
}

/// How a worker's io_uring ring was set up, as the kernel gave it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingFacts {
    /// Submission entries (the completion ring has twice as many).
    pub entries: u32,
    /// `--hipri`: completions are polled for (IORING_SETUP_IOPOLL).
    pub iopoll: bool,
    /// `--sqpoll`: a kernel thread takes the submissions (IORING_SETUP_SQPOLL).
    pub sqpoll: bool,
    /// That thread's CPU: the one it was bound to (`--sqpoll CPU`), else
    /// the one it was last seen on when the engine described itself; `None`
    /// without `--sqpoll`.
    pub sqpoll_cpu: Option<usize>,
    /// `--taskrun` as the ring got it: plain, coop or defer.
    pub taskrun: TaskRun,
    /// The ring's own descriptor is registered (Linux 5.18): each
    /// io_uring_enter skips the file lookup.
    pub ring_fd_registered: bool,
    /// How many completions the worker waits for at once (`--complete-min`).
    pub complete_min: u32,
    /// The file has no non-blocking issue path: io_uring hands every I/O
    /// to an io-wq kernel thread on the worker's CPU ([`punts`]).
    pub punted: bool,
    /// The worker thread's scheduling policy (`--sched`), resolved.
    pub sched: Sched,
}

/// Whether io_uring hands every I/O on `file` to an io-wq kernel thread:
/// the file has no non-blocking path (FMODE_NOWAIT), which a read with
/// RWF_NOWAIT shows by EOPNOTSUPP (a zram or brd device, a tmpfs file, a
/// bio driver without nowait support).
pub fn punts(file: &File) -> bool {
    matches!(
        probe_rw_flags(file, 4096, RWF_NOWAIT),
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP)
    )
}

/// Whether `file` accepts RWF_DONTCACHE ([`probe_rw_flags`]; EOPNOTSUPP:
/// the kernel or the file system lacks it).
pub fn probe_dontcache(file: &File, len: usize) -> io::Result<()> {
    probe_rw_flags(file, len, RWF_DONTCACHE)
}

/// Whether `file` takes the RWF_* `flags` (the error is the kernel's): one
/// read of `len` bytes with them. The kernel refuses flags before it looks
/// at the offset, so the read is asked at the end of the file or device,
/// where one that is let through reads nothing: no I/O, and no read-ahead
/// into a page cache that a cold buffered run has emptied (harmless before
/// a write run, too). Offset 0 where the end cannot be found.
pub fn probe_rw_flags(file: &File, len: usize, flags: i32) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: lseek on a descriptor this call borrows; every I/O of a run
    // gives its own offset, so the file position it moves is never used.
    let end = unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_END) };
    let offset = u64::try_from(end)
        .ok()
        .and_then(|e| libc::off_t::try_from(e.div_ceil(4096) * 4096).ok())
        .unwrap_or(0);
    let mut buf = AlignedBuf::new(len.max(1), 4096)
        .ok_or_else(|| io::Error::other("no memory for the probe's buffer"))?;
    let iov = libc::iovec {
        iov_base: buf.as_mut_slice().as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: one iovec over a buffer this function owns, for one call.
    let n = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, offset, flags) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What an engine is built from, inside the worker's (pinned) thread.
#[derive(Debug, Clone)]
pub struct EngineSpec {
    pub file: Arc<File>,
    pub bs: usize,
    pub depth: usize,
    pub align: usize,
    /// Fill the buffers with data from this seed (for writes).
    pub fill_seed: Option<u64>,
    /// `--buffer-compress`: the share of each 4 KiB unit of write data that is zeros.
    pub compress_pct: u8,
    /// `--pattern`: the buffers hold it instead (the worker writes each
    /// block's offset into it before the write when it holds `%o`).
    pub pattern: Option<Arc<crate::base::pattern::Pattern>>,
    /// `--dedupe-working-set`: every unit of a buffer starts from one base
    /// ([`crate::engine::writedata::fill_uniform`]).
    pub uniform_fill: bool,
    /// Reads and writes mixed (randrw): each slot gets a second buffer that
    /// only writes use, so a write never sends what a read left behind.
    pub write_buffers: bool,
    /// Try registered buffers and files (io_uring).
    pub register: bool,
    /// The RWF_* flags of every read and write (`--uncached`: RWF_DONTCACHE);
    /// 0 for plain pread/pwrite.
    pub rw_flags: i32,
    /// `--nowait`: every read and write is issued with RWF_NOWAIT first.
    pub nowait: bool,
    /// `--numa-nodes`, `--numa-mem`, `--ioprio`: set on the worker's
    /// thread before the engine and its buffers are built.
    pub thread: crate::base::thread_setup::ThreadSetup,
    /// io_uring: how the ring is set up.
    pub ring: RingSetup,
    /// `--rate`, `--rate-iops`: the worker issues on a schedule, and waits
    /// for completions only until the next I/O is due.
    pub paced: bool,
    /// Tests only (`--debug-fail-from`): fail every I/O from this one on.
    pub fail_from: Option<u64>,
    /// Tests only (`--debug-corrupt-write`): this write goes out with a
    /// byte of its block flipped.
    pub corrupt_write: Option<u64>,
    /// Tests only (`--debug-die-in-setup`): panic while the engine is built.
    pub die_in_setup: bool,
    /// Tests only (`--debug-hang-from`): every I/O from this one on never completes.
    pub hang_from: Option<u64>,
    /// `--hang-timeout`: how long `reap` waits with nothing completing
    /// before it gives up (io_uring).
    pub hang_timeout: std::time::Duration,
    /// `--hugepages`: what the slots' buffers are mapped in.
    pub hugepages: crate::engine::buffer::HugePages,
    /// Where the buffers start in their pages (`--cached`: off the page
    /// start, [`crate::engine::buffer::CACHE_COPY_OFFSET`]).
    pub placement: crate::engine::buffer::Placement,
    /// Tests only (`--debug-mock-engine`): the mock engine's latency per I/O.
    pub mock_latency: Option<std::time::Duration>,
    /// The sync engine: its blocking calls are watched, so the coordinator
    /// can give up on one that a stalled device holds ([`watch::CallWatch`]).
    pub watch: Option<Arc<watch::CallWatch>>,
}

impl EngineSpec {
    /// One aligned buffer per slot, filled for writes; with `write_buffers`,
    /// `depth` more after them, the slots' write buffers.
    pub fn buffers(&self) -> Result<Vec<AlignedBuf>, String> {
        let n = if self.write_buffers {
            2 * self.depth
        } else {
            self.depth
        };
        // One region for every slot (huge pages when --hugepages allows).
        let mut bufs = crate::engine::buffer::buffers(n, self.bs, self.hugepages, self.placement)?;
        if let Some(seed) = self.fill_seed {
            for b in &mut bufs {
                // Data reproducible from the seed (incompressible unless
                // --buffer-compress asks otherwise), the same in every
                // slot: what lands at an offset does not depend on the
                // engine or on which slot carried it. The worker stamps
                // each block before it is written (crate::engine::writedata).
                match &self.pattern {
                    // The pattern from the block's start; without %o the
                    // same in every block, so never written again.
                    Some(p) => p.fill(b.as_mut_slice(), 0),
                    None if self.uniform_fill => crate::engine::writedata::fill_uniform(
                        b.as_mut_slice(),
                        seed,
                        self.compress_pct,
                    ),
                    None => {
                        crate::engine::writedata::fill(b.as_mut_slice(), seed, self.compress_pct)
                    }
                }
            }
        }
        Ok(bufs)
    }
}

/// The right to one slot: to use its buffer, and to queue one I/O on it.
///
/// An engine makes one token per slot when it is created, and no one else
/// can make one (its fields are private to this module). `queue` takes the
/// token: from then on the slot's buffer belongs to the I/O (the kernel may
/// write into it), and `reap` hands the token back with the I/O's
/// completion. A token is neither `Clone` nor `Copy`, so holding one proves
/// that its slot has no I/O in flight, and `buffer` asks for it: the rule
/// "never touch a slot's buffer while its I/O is in flight" is kept by the
/// type system. Each token also names the engine that made it, checked (one
/// comparison) wherever it is used, so one engine's token cannot reach
/// another engine's slot.
///
/// On the hot path a token is an 8-byte value moved into `queue` and out of
/// `reap`'s callback: no allocation, no lock, no syscall.
///
/// What the rule forbids no longer compiles: a slot's buffer after its I/O
/// was queued,
///
/// ```compile_fail,E0382
/// # use stripebench::engine::{Engine, EngineSpec, SyncEngine};
/// # use stripebench::measure::workload::Op;
/// # fn f(spec: &EngineSpec) -> Result<(), String> {
/// let (mut engine, mut slots) = SyncEngine::create(spec)?;
/// let slot = slots.pop().unwrap();
/// engine.queue(slot, Op::Read, 0, 4096);
/// engine.buffer(&slot)[0] = 1; // the I/O owns the slot
/// # Ok(()) }
/// ```
///
/// nor a second token for a slot, made or copied,
///
/// ```compile_fail,E0599
/// # use stripebench::engine::{Engine, EngineSpec, SyncEngine};
/// # use stripebench::measure::workload::Op;
/// # fn f(spec: &EngineSpec) -> Result<(), String> {
/// let (mut engine, mut slots) = SyncEngine::create(spec)?;
/// let slot = slots.pop().unwrap();
/// engine.queue(slot.clone(), Op::Read, 0, 4096);
/// engine.buffer(&slot)[0] = 1;
/// # Ok(()) }
/// ```
///
/// while the same steps in the right order do:
///
/// ```
/// # use stripebench::engine::{Engine, EngineSpec, SyncEngine};
/// # use stripebench::measure::workload::Op;
/// # fn f(spec: &EngineSpec) -> Result<(), String> {
/// let (mut engine, mut slots) = SyncEngine::create(spec)?;
/// let slot = slots.pop().unwrap();
/// engine.buffer(&slot)[0] = 1;
/// engine.queue(slot, Op::Read, 0, 4096);
/// engine.reap(|slot, _res| slots.push(slot)).map_err(|e| e.to_string())?;
/// engine.buffer(&slots[0])[0] = 2; // back from reap: free again
/// # Ok(()) }
/// ```
#[derive(Debug, PartialEq, Eq)]
pub struct SlotToken {
    engine: u32,
    index: u32,
}

impl SlotToken {
    /// The slot's number, from 0 to the engine's depth - 1.
    #[inline]
    pub fn index(&self) -> usize {
        self.index as usize
    }

    /// Panics when the token is not one of `engine`'s: one engine's token
    /// must not reach another engine's buffers, which may be in flight.
    #[inline]
    fn check(&self, engine: EngineId) {
        assert!(
            self.engine == engine.0,
            "slot token of engine {} used with engine {}",
            self.engine,
            engine.0
        );
    }
}

/// Tells engines (and so their tokens) apart, within the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EngineId(u32);

impl EngineId {
    fn new() -> EngineId {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        EngineId(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The tokens of an engine of `depth` slots: made once, at creation.
    fn tokens(self, depth: usize) -> Vec<SlotToken> {
        (0..depth as u32)
            .map(|index| SlotToken {
                engine: self.0,
                index,
            })
            .collect()
    }

    /// The token of a slot whose I/O this engine queued and has just reaped
    /// (the engine took that slot's token in `queue`, so this is its only one).
    #[inline]
    fn returned(self, index: usize) -> SlotToken {
        SlotToken {
            engine: self.0,
            index: index as u32,
        }
    }
}

/// Issues I/O against one open target.
pub trait Engine: Sized {
    /// The time this engine's I/O takes place in: [`clock::Wall`] for the
    /// real engines, the virtual clock for the mock. The worker's loop reads
    /// it, monomorphized: no call through a pointer per I/O.
    type Clock: clock::Clock;

    /// Builds the engine and its buffers, and makes its slot tokens, one
    /// per slot. Runs in the worker's thread, after pinning.
    fn create(spec: &EngineSpec) -> Result<(Self, Vec<SlotToken>), String>;

    /// Slots: how many I/Os can be in flight at once.
    fn depth(&self) -> usize;

    /// Queues one I/O of `len` bytes (at most the buffer's) on `slot`'s
    /// buffer. It is issued by the next `reap`, which gives the token back
    /// when the I/O completes.
    fn queue(&mut self, slot: SlotToken, op: Op, offset: u64, len: usize);

    /// `--cmdprio`: the I/O priority (`class << 13 | level`) the I/Os
    /// queued from now on carry in their command; 0, the thread's own.
    /// Only io_uring has a per-command priority (its SQE's `ioprio`); the
    /// others ignore it, and validate refuses --cmdprio with them.
    #[inline]
    fn set_cmd_prio(&mut self, ioprio: u16) {
        let _ = ioprio;
    }

    /// Issues what was queued, waits for at least one completion, and calls
    /// `done(slot, result)` for every completion ready. A result is the bytes
    /// transferred (fewer than asked is a short I/O) or the I/O's error.
    /// An `Err` return means the engine itself failed, except [`idle_error`]:
    /// an engine whose waits are bounded (io_uring) returns it when one
    /// wait ended with nothing completed.
    fn reap<F: FnMut(SlotToken, io::Result<usize>)>(&mut self, done: F) -> io::Result<()>;

    /// As `reap`, but a wait for a completion lasts at most `wait` (and
    /// never more than `reap`'s own): a worker on a schedule waits for a
    /// completion or its next I/O's due time, whichever comes first, and
    /// gets [`idle_error`] when the due time came first. An engine that
    /// cannot bound a wait (sync: one slot, so nothing is ever due while
    /// its I/O is in flight) waits as `reap` does.
    fn reap_within<F: FnMut(SlotToken, io::Result<usize>)>(
        &mut self,
        wait: std::time::Duration,
        done: F,
    ) -> io::Result<()> {
        let _ = wait;
        self.reap(done)
    }

    /// The buffer of `slot`, to fill before a write is queued or to read
    /// after its read completed (the token proves no I/O is in flight on it).
    fn buffer(&mut self, slot: &SlotToken) -> &mut [u8];

    /// The buffer a write on `slot` sends: `buffer(slot)`, or the slot's
    /// own write buffer when the spec asked for `write_buffers`. The token
    /// proves the slot's I/O is not in flight.
    fn write_buffer(&mut self, slot: &SlotToken) -> &mut [u8];

    /// What this engine is, said once it is built: how it issues I/O, what
    /// its buffers are made of, its ring's setup (io_uring) and the kernel
    /// thread that submits for it (`--sqpoll`). Not on the per-I/O path.
    fn describe(&self) -> EngineFacts;

    /// Gives up on the I/O still in flight (after `reap` reported a hang):
    /// whatever the kernel may still write into, or still owns, is leaked
    /// rather than freed. Dropping an engine instead waits for its I/O.
    fn abandon(self);

    /// `--nowait`: whether the I/O `reap` just handed back on `slot` would
    /// have blocked (EAGAIN under RWF_NOWAIT, or less than asked, or a
    /// buffered write the file system will not try so: EOPNOTSUPP) and went
    /// again without the flag. The token proves the I/O is done.
    fn would_have_blocked(&mut self, slot: &SlotToken) -> bool {
        let _ = slot;
        false
    }

    /// Tests only (the fault engine's `--debug-hang-from`): queues on `slot`
    /// an I/O into its buffer that never completes, as a hung device's
    /// would. An engine that cannot (a hung pread would block the worker
    /// itself) gives the token back.
    fn queue_stuck(&mut self, slot: SlotToken) -> Option<SlotToken> {
        Some(slot)
    }
}

/// The longest one wait of an io_uring `reap` lasts with nothing
/// completing: a slice of the hang timeout (a quarter, at most a second),
/// so that the worker looks at its deadline and at how long it has waited
/// at least that often, and declares a hang within a slice of the timeout.
pub fn wait_slice(hang_timeout: std::time::Duration) -> std::time::Duration {
    (hang_timeout / 4).clamp(
        std::time::Duration::from_millis(1),
        std::time::Duration::from_secs(1),
    )
}

/// What `reap` returns when it waited (one [`wait_slice`], or until a
/// signal) and nothing completed. Not a failure: the caller decides when
/// waiting has lasted too long (`--hang-timeout`). Allocates nothing.
pub fn idle_error() -> io::Error {
    io::Error::from(io::ErrorKind::TimedOut)
}

/// Whether `reap` returned because nothing completed in its wait.
pub fn is_idle(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::TimedOut
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn complete_min_auto_is_a_quarter_of_the_depth_only_where_the_target_punts() {
        let auto = CompleteMin::Auto;
        assert_eq!(auto.resolve(32, true, true, true), 8);
        assert_eq!(auto.resolve(8, true, true, true), 2);
        assert_eq!(auto.resolve(7, true, true, true), 1);
        assert_eq!(auto.resolve(1, true, true, true), 1);
        assert_eq!(auto.resolve(32, false, true, true), 1);
        // Punted but not RAM (dm-crypt, FUSE): its I/Os overlap.
        assert_eq!(auto.resolve(32, true, false, true), 1);
        assert_eq!(auto.resolve(32, true, true, false), 1);
        assert_eq!(CompleteMin::Fixed(1).resolve(32, true, true, true), 1);
        assert_eq!(CompleteMin::Fixed(16).resolve(32, false, false, false), 16);
        assert_eq!(CompleteMin::Fixed(64).resolve(32, false, false, true), 32);
        assert_eq!(CompleteMin::parse("auto"), Ok(CompleteMin::Auto));
        assert_eq!(CompleteMin::parse("4"), Ok(CompleteMin::Fixed(4)));
        for bad in ["0", "-1", "", "x", "1.5", "auto "] {
            assert!(CompleteMin::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sched_auto_is_batch_only_where_the_target_punts() {
        assert_eq!(Sched::Auto.resolve(true), Sched::Batch);
        assert_eq!(Sched::Auto.resolve(false), Sched::Normal);
        // What was asked holds either way.
        assert_eq!(Sched::Normal.resolve(true), Sched::Normal);
        assert_eq!(Sched::Batch.resolve(false), Sched::Batch);
        // Each name parses to the variant the JSON calls so.
        for n in Sched::NAMES {
            let v = Sched::parse(n).map(|s| serde_json::to_value(s).unwrap());
            assert_eq!(v, Some(serde_json::Value::from(n)));
        }
        assert_eq!(Sched::parse("fifo"), None);
    }

    #[test]
    fn a_regular_file_and_dev_zero_do_not_punt_their_io() {
        // An ext4 file has a non-blocking path (FMODE_NOWAIT); so does
        // /dev/zero (tmpfs has none: not /tmp, which may be one). zram, which
        // has none either, is in tests/it/ring.rs (root).
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 8192]).unwrap();
        assert!(!punts(&File::open(&path).unwrap()));
        assert!(!punts(&File::open("/dev/zero").unwrap()));
    }

    /// Whether the first page of `file` is in the page cache (mincore).
    fn first_page_cached(file: &File) -> bool {
        use std::os::fd::AsRawFd;
        // SAFETY: a private read-only mapping of one page of an open file,
        // unmapped before return; mincore writes one byte into `vec`.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            let mut vec = [0u8; 1];
            assert_eq!(libc::mincore(p, 4096, vec.as_mut_ptr()), 0);
            libc::munmap(p, 4096);
            vec[0] & 1 == 1
        }
    }

    #[test]
    fn the_punt_probe_reads_nothing_into_a_page_cache_just_emptied() {
        use std::os::fd::AsRawFd;
        // A cold buffered run evicts its file, then builds its engines: the
        // probe must not bring the file's first pages back (read-ahead).
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        let file = File::open(&path).unwrap();
        file.sync_all().unwrap();
        // SAFETY: advice on an open descriptor.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        assert!(
            !first_page_cached(&file),
            "/var/tmp's file system kept the page after DONTNEED: this test cannot see what the probe does"
        );
        assert!(!punts(&file));
        assert!(
            !first_page_cached(&file),
            "the probe read the first page in"
        );
        // A read at offset 0, where the probe once read, does bring it in:
        // the check above can fail.
        let mut buf = [0u8; 4096];
        std::os::unix::fs::FileExt::read_at(&file, &mut buf, 0).unwrap();
        assert!(first_page_cached(&file));
    }

    pub(crate) fn spec(file: &std::path::Path, depth: usize) -> EngineSpec {
        EngineSpec {
            file: Arc::new(File::open(file).unwrap()),
            bs: 4096,
            depth,
            align: 4096,
            fill_seed: None,
            compress_pct: 0,
            pattern: None,
            uniform_fill: false,
            write_buffers: false,
            register: false,
            rw_flags: 0,
            nowait: false,
            thread: Default::default(),
            ring: RingSetup::default(),
            paced: false,
            fail_from: None,
            corrupt_write: None,
            die_in_setup: false,
            hang_from: None,
            hang_timeout: std::time::Duration::from_secs(30),
            hugepages: Default::default(),
            placement: Default::default(),
            mock_latency: None,
            watch: None,
        }
    }

    /// Queues every slot, then reaps until every token is back: each slot's
    /// token comes back exactly once, and only from `reap`.
    fn tokens_round_trip<E: Engine>(depth: usize) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 4096 * depth]).unwrap();
        let (mut engine, mut free) = E::create(&spec(&path, depth)).unwrap();
        let mut want: Vec<usize> = free.iter().map(SlotToken::index).collect();
        want.sort_unstable();
        assert_eq!(want, (0..depth).collect::<Vec<_>>());
        for round in 0..3u64 {
            for (i, slot) in free.drain(..).enumerate() {
                engine.queue(slot, Op::Read, 4096 * i as u64, 4096);
            }
            while free.len() < depth {
                engine
                    .reap(|slot, res| {
                        assert_eq!(res.unwrap(), 4096, "round {round}");
                        free.push(slot);
                    })
                    .unwrap();
            }
            let mut got: Vec<usize> = free.iter().map(SlotToken::index).collect();
            got.sort_unstable();
            assert_eq!(got, want, "round {round}");
            for slot in &free {
                assert_eq!(engine.buffer(slot), &[7u8; 4096][..]);
            }
        }
    }

    #[test]
    fn slot_tokens_come_back_from_reap_once_each_sync() {
        tokens_round_trip::<SyncEngine>(1);
    }

    #[test]
    #[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
    fn slot_tokens_come_back_from_reap_once_each_uring() {
        tokens_round_trip::<UringEngine>(8);
    }

    /// `--cmdprio`: the priority set reaches the SQE: a class the kernel
    /// has not (7) fails the I/O with EINVAL, be,1 completes, and 0 again
    /// (the thread's) completes.
    #[test]
    #[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
    fn the_command_priority_is_in_the_sqe() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 4096]).unwrap();
        let (mut engine, mut free) = UringEngine::create(&spec(&path, 1)).unwrap();
        let mut one = |engine: &mut UringEngine, prio: u16| {
            engine.set_cmd_prio(prio);
            engine.queue(free.pop().unwrap(), Op::Read, 0, 4096);
            let mut got = None;
            while got.is_none() {
                engine
                    .reap(|t, r| {
                        free.push(t);
                        got = Some(r.map_err(|e| e.raw_os_error()));
                    })
                    .unwrap();
            }
            got.unwrap()
        };
        assert_eq!(one(&mut engine, 7 << 13), Err(Some(libc::EINVAL)));
        assert_eq!(one(&mut engine, (2 << 13) | 1), Ok(4096));
        assert_eq!(one(&mut engine, 0), Ok(4096));
    }

    /// A uring engine with `stuck` I/Os that never complete, timing out fast.
    fn hung_uring(stuck: usize) -> (tempfile::TempDir, UringEngine, Vec<SlotToken>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![0u8; 4096 * 4]).unwrap();
        let mut spec = spec(&path, 4);
        spec.hang_timeout = std::time::Duration::from_millis(100);
        let (mut engine, mut free) = UringEngine::create(&spec).unwrap();
        for _ in 0..stuck {
            let slot = free.pop().unwrap();
            assert!(engine.queue_stuck(slot).is_none());
        }
        (dir, engine, free)
    }

    #[test]
    #[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
    fn a_uring_reap_with_nothing_completing_returns_idle() {
        let (_dir, mut engine, mut free) = hung_uring(2);
        // One real read completes; then nothing does.
        engine.queue(free.pop().unwrap(), Op::Read, 0, 4096);
        let mut got = Vec::new();
        engine
            .reap(|slot, res| got.push((slot, res.unwrap())))
            .unwrap();
        assert_eq!(got.len(), 1);
        // Each wait ends after a slice of the hang timeout, saying so.
        for _ in 0..3 {
            let err = engine
                .reap(|_, _| panic!("a stuck I/O completed"))
                .unwrap_err();
            assert!(is_idle(&err), "{err}");
        }
        engine.abandon();
    }

    #[test]
    #[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
    fn dropping_a_uring_engine_with_a_hung_io_does_not_block() {
        let (dir, engine, _free) = hung_uring(3);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            drop(engine);
            let _ = tx.send(());
        });
        // Far more than the 2 x 100 ms the drop may wait.
        let dropped = rx.recv_timeout(std::time::Duration::from_secs(20));
        assert!(dropped.is_ok(), "drop still blocked after 20 s");
        drop(dir);
    }

    #[test]
    fn the_sync_engine_describes_its_path_and_buffers_and_no_ring() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![0u8; 8192]).unwrap();
        let (engine, _slots) = SyncEngine::create(&spec(&path, 1)).unwrap();
        let facts = engine.describe();
        assert_eq!(facts.path, "pread/pwrite");
        assert_eq!((facts.ring, facts.submit_thread), (None, None));
        // 4 KiB buffers stay in 4 KiB pages (--hugepages auto), at a page's start.
        assert_eq!(facts.buffers.backing, buffer::Backing::Pages);
        assert_eq!(facts.buffers.page_size_bytes, 4096);
        assert_eq!(facts.buffers.offset_in_page_bytes, 0);
        assert!(facts.buffers.bytes >= 4096, "{:?}", facts.buffers);
    }

    #[test]
    #[cfg_attr(not(sb_uring), ignore = "needs io_uring")]
    fn a_uring_engine_describes_its_ring_and_no_submit_thread_without_sqpoll() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![0u8; 4096 * 8]).unwrap();
        let (engine, _slots) = UringEngine::create(&spec(&path, 8)).unwrap();
        let facts = engine.describe();
        assert!(facts.path.starts_with("io_uring"), "{}", facts.path);
        let ring = facts.ring.expect("a uring engine has a ring");
        assert!(ring.entries >= 8, "{ring:?}");
        assert!(!ring.sqpoll && ring.sqpoll_cpu.is_none(), "{ring:?}");
        assert_eq!(facts.submit_thread, None);
        // Its buffers: one per slot.
        assert!(facts.buffers.bytes >= 8 * 4096, "{:?}", facts.buffers);
    }

    #[test]
    #[should_panic(expected = "slot token of engine")]
    fn a_slot_token_cannot_reach_another_engines_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![0u8; 4096]).unwrap();
        let (_a, a_slots) = SyncEngine::create(&spec(&path, 1)).unwrap();
        let (mut b, _b_slots) = SyncEngine::create(&spec(&path, 1)).unwrap();
        b.buffer(&a_slots[0]);
    }
}
