//! The io_uring engine: `--iodepth` I/Os in flight, queued into the
//! submission ring and issued with one `io_uring_enter` per batch, which also
//! waits for the next completion.
//!
//! Registered (fixed) buffers and a registered file save the kernel from
//! pinning pages and looking up the file on every I/O. Registration needs
//! locked memory (bounded by `RLIMIT_MEMLOCK` without CAP_IPC_LOCK); when the
//! kernel refuses it, the engine falls back to plain READ/WRITE and says so.
//!
//! A wait never lasts forever: it carries a timeout, a [`wait_slice`] of
//! `--hang-timeout` (in the same `io_uring_enter`, with
//! IORING_ENTER_EXT_ARG: no extra syscall, and a timer the kernel arms only
//! when it really sleeps), and `reap` returns [`idle_error`] when nothing
//! completed in it. When nothing has completed for `--hang-timeout`, the
//! worker gives up on the engine ([`Engine::abandon`]), and so does `drop`
//! on its own: the ring and the buffers are leaked, never freed, because the
//! kernel may still write into them. Kernels before 5.11 lack the timed
//! wait: there a hung I/O still hangs its worker, and the engine's path
//! says so.
//!
//! The ring is entered by this engine's own `io_uring_enter` calls, through
//! its registered descriptor where the kernel allows (Linux 5.18), and is
//! set up as the run asks: polled completions (`--hipri`), a kernel
//! submission thread (`--sqpoll`), and how task work runs (`--taskrun`).
//! Under `--nowait` each I/O goes with RWF_NOWAIT; one that would have
//! blocked completes with EAGAIN, is counted, and goes again without it.

use std::fs::File;
use std::io;
use std::mem::ManuallyDrop;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use io_uring::{opcode, squeue, types, IoUring};

use super::{
    idle_error, is_idle, punts, wait_slice, Engine, EngineFacts, EngineId, EngineSpec, RingFacts,
    RingSetup, Sched, SlotToken, TaskRun, RWF_NOWAIT,
};
use crate::base::io::Op;
use crate::engine::buffer::AlignedBuf;

pub struct UringEngine {
    // Dropped by hand, in `drop`: once no I/O is in flight, the ring first
    // (its registration of the buffers with it), then the buffers; with I/O
    // still in flight (hung), neither: both are leaked.
    ring: ManuallyDrop<IoUring>,
    /// One buffer per slot; with separate write buffers (randrw), the
    /// slots' write buffers follow, at `slots + slot`.
    bufs: ManuallyDrop<Vec<AlignedBuf>>,
    slots: usize,
    /// Index of a slot's write buffer, past the read buffers (0 when shared).
    write_base: usize,
    /// How long one wait may last with nothing completing (a slice of
    /// `--hang-timeout`); `None` when the kernel cannot time a wait (before 5.11).
    wait: Option<KernelTimespec>,
    /// The same slice as a duration (for `reap_within`).
    wait_slice: Option<std::time::Duration>,
    /// `--hang-timeout`: how long `drop` waits with nothing completing.
    hang_timeout: std::time::Duration,
    /// The engine gave up on its I/O in flight: `drop` leaks instead of waiting.
    abandoned: bool,
    /// Keeps the descriptor open while the ring may use it.
    _file: Arc<File>,
    fd: i32,
    fixed_file: bool,
    fixed_bufs: bool,
    /// RWF_* flags of every read and write SQE (`--uncached`).
    rw_flags: i32,
    /// `--cmdprio`: the SQE `ioprio` of the I/Os queued next (0: the
    /// thread's priority, what every SQE carries without --cmdprio).
    cmd_prio: u16,
    /// `--nowait`: each slot's I/O, to issue it again without RWF_NOWAIT
    /// when it would have blocked; empty otherwise.
    nowait: Vec<NoWaitIo>,
    /// How the ring was set up, and its size.
    setup: RingSetup,
    entries: u32,
    /// What `io_uring_enter` is given: the registered ring's index with
    /// IORING_ENTER_REGISTERED_RING, or the ring's descriptor and no flag.
    enter_fd: i32,
    enter_flag: u32,
    /// The thread that created the ring (a registered ring's index is
    /// only valid there).
    owner: i32,
    /// `--sqpoll`: the kernel submission thread's id.
    sq_thread: Option<i32>,
    id: EngineId,
    /// Registration errors, for the report.
    notes: Vec<String>,
    in_flight: usize,
    queued: usize,
    /// How many completions each wait asks for, at most what is in flight
    /// (`--complete-min`, resolved).
    complete_min: u32,
    /// The file has no non-blocking issue path: every I/O goes to io-wq.
    punted: bool,
    /// The worker thread's policy, `--sched` resolved.
    sched: Sched,
    /// `--debug-hang-from`: a pipe no one writes into (read end, write end),
    /// made at the first stuck I/O.
    stuck_pipe: Option<(OwnedFd, OwnedFd)>,
    /// How a trim is done on this file. io_uring has no trim opcode for a
    /// file or a block device (fio 3.42's URING_CMD discard needs Linux
    /// 6.12, and fio falls back to a synchronous trim when it fails), so a
    /// trim is done as fio 3.33's io_uring engine does it: synchronously,
    /// by the worker, right before it enters the ring (after its issue is
    /// stamped), its completion a NOP's carrying the trim's result.
    trim: super::trim::TrimKind,
    /// Trims queued and not done yet: (slot, offset, length).
    trims_due: Vec<(usize, u64, usize)>,
    /// Each slot's trim result (bytes, or -errno), from its doing to its
    /// NOP's completion.
    trim_res: Vec<Option<i32>>,
}

/// `--nowait`: a slot's I/O as it was queued.
#[derive(Debug, Clone, Copy)]
struct NoWaitIo {
    op: Op,
    offset: u64,
    len: u32,
    /// Issued with RWF_NOWAIT (not yet issued again without it).
    nowait: bool,
    /// Completed with EAGAIN: to be issued again.
    again: bool,
}

impl Default for NoWaitIo {
    fn default() -> NoWaitIo {
        NoWaitIo {
            op: Op::Read,
            offset: 0,
            len: 0,
            nowait: false,
            again: false,
        }
    }
}

/// io_uring_enter's flags, and io_uring_register's opcodes
/// (include/uapi/linux/io_uring.h).
const ENTER_GETEVENTS: u32 = 1 << 0;
const ENTER_SQ_WAKEUP: u32 = 1 << 1;
const ENTER_EXT_ARG: u32 = 1 << 3;
const ENTER_REGISTERED_RING: u32 = 1 << 4;
const REGISTER_RING_FDS: u32 = 20;
const UNREGISTER_RING_FDS: u32 = 21;

/// How long (ms) an idle `--sqpoll` thread polls before it sleeps.
const SQPOLL_IDLE_MS: u32 = 100;

/// `struct __kernel_timespec`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct KernelTimespec {
    tv_sec: i64,
    tv_nsec: i64,
}

impl From<std::time::Duration> for KernelTimespec {
    fn from(d: std::time::Duration) -> KernelTimespec {
        KernelTimespec {
            tv_sec: d.as_secs() as i64,
            tv_nsec: d.subsec_nanos() as i64,
        }
    }
}

/// `struct io_uring_getevents_arg` (IORING_ENTER_EXT_ARG): no signal mask,
/// a timeout.
#[repr(C)]
struct GetEventsArg {
    sigmask: u64,
    sigmask_sz: u32,
    min_wait_usec: u32,
    ts: u64,
}

/// `struct io_uring_rsrc_update`.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// The ring builder for a setup.
pub fn builder(setup: RingSetup) -> io_uring::Builder {
    let mut b = IoUring::builder();
    if setup.iopoll {
        b.setup_iopoll();
    }
    if setup.sqpoll {
        b.setup_sqpoll(SQPOLL_IDLE_MS);
        if let Some(cpu) = setup.sqpoll_cpu {
            b.setup_sqpoll_cpu(cpu);
        }
    }
    match setup.taskrun {
        TaskRun::Auto | TaskRun::Plain => {}
        TaskRun::Coop => {
            b.setup_single_issuer().setup_coop_taskrun();
        }
        TaskRun::Defer => {
            b.setup_single_issuer().setup_defer_taskrun();
        }
    }
    b
}

/// What a setup asks beyond a plain ring, each as the report words it
/// ("polled (IOPOLL)", "SQPOLL thread on CPU 1", "SINGLE_ISSUER|DEFER_TASKRUN").
fn setup_parts(setup: RingSetup) -> Vec<String> {
    let mut parts = Vec::new();
    if setup.iopoll {
        parts.push("polled (IOPOLL)".to_string());
    }
    if setup.sqpoll {
        parts.push(match setup.sqpoll_cpu {
            Some(cpu) => format!("SQPOLL thread on CPU {cpu}"),
            None => "SQPOLL thread".to_string(),
        });
    }
    match setup.taskrun {
        TaskRun::Auto | TaskRun::Plain => {}
        TaskRun::Coop => parts.push("SINGLE_ISSUER|COOP_TASKRUN".into()),
        TaskRun::Defer => parts.push("SINGLE_ISSUER|DEFER_TASKRUN".into()),
    }
    parts
}

/// [`setup_parts`] for a message: " (polled (IOPOLL), ...)", or nothing.
pub fn describe(setup: RingSetup) -> String {
    let parts = setup_parts(setup);
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// Registers the ring's descriptor with itself (Linux 5.18), for this
/// thread: its index, or `None` when the kernel refuses.
fn register_ring_fd(fd: i32) -> Option<i32> {
    let mut up = RsrcUpdate {
        offset: u32::MAX,
        resv: 0,
        data: fd as u64,
    };
    // SAFETY: one update entry, in a local, for the length of the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            fd,
            REGISTER_RING_FDS,
            &mut up as *mut RsrcUpdate,
            1,
        )
    };
    (r == 1).then_some(up.offset as i32)
}

/// Takes back this thread's registration of a ring at `index`.
fn unregister_ring_fd(fd: i32, index: i32) {
    let mut up = RsrcUpdate {
        offset: index as u32,
        resv: 0,
        data: 0,
    };
    // SAFETY: as in `register_ring_fd`.
    unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            fd,
            UNREGISTER_RING_FDS,
            &mut up as *mut RsrcUpdate,
            1,
        );
    }
}

/// The kernel submission thread of a SQPOLL ring created by thread
/// `owner`: the task of this process named "iou-sqp-OWNER". It names
/// itself once it runs, so this looks again for up to a second.
fn find_sq_thread(owner: i32) -> Option<i32> {
    let want = format!("iou-sqp-{owner}");
    for _ in 0..1000 {
        for entry in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
            let Some(tid) = entry
                .file_name()
                .to_str()
                .and_then(|t| t.parse::<i32>().ok())
            else {
                continue;
            };
            let comm = std::fs::read_to_string(format!("/proc/self/task/{tid}/comm"));
            if comm.is_ok_and(|c| c.trim_end() == want) {
                return Some(tid);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    None
}

/// The CPU thread `tid` of this process last ran on (/proc's field 39).
fn last_cpu(tid: i32) -> Option<usize> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // Fields after the command's closing parenthesis start at field 3.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(39 - 3)?
        .parse()
        .ok()
}

/// Checks that this kernel lets us create a ring; the message suggests the way out.
pub fn probe() -> Result<(), String> {
    match IoUring::new(2) {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::ENOMEM) => Err(format!(
            "io_uring could not be created ({e}): the locked-memory limit is too low; raise it (ulimit -l) or use --engine sync"
        )),
        Err(e) => Err(format!(
            "io_uring is not available here ({e}; disabled by kernel.io_uring_disabled, a seccomp policy, or an old kernel): use --engine sync"
        )),
    }
}

impl UringEngine {
    /// How I/O is issued, in words.
    fn path(&self) -> String {
        let mut p = match (self.fixed_bufs, self.fixed_file) {
            (true, true) => "io_uring, registered buffers and file".to_string(),
            (true, false) => "io_uring, registered buffers".to_string(),
            (false, true) => "io_uring, plain read/write, registered file".to_string(),
            (false, false) => "io_uring, plain read/write".to_string(),
        };
        for part in setup_parts(self.setup) {
            p.push_str(", ");
            p.push_str(&part);
        }
        if !self.nowait.is_empty() {
            p.push_str(", RWF_NOWAIT first");
        }
        if !self.notes.is_empty() {
            p.push_str(&format!(" ({})", self.notes.join("; ")));
        }
        p
    }

    /// How the ring was set up; an unbound --sqpoll thread's CPU as of now.
    fn ring(&self) -> RingFacts {
        let sqpoll_cpu = match (self.setup.sqpoll_cpu, self.sq_thread) {
            (Some(cpu), _) => Some(cpu as usize),
            (None, Some(tid)) => last_cpu(tid),
            (None, None) => None,
        };
        RingFacts {
            entries: self.entries,
            iopoll: self.setup.iopoll,
            sqpoll: self.setup.sqpoll,
            sqpoll_cpu,
            taskrun: self.setup.taskrun,
            ring_fd_registered: self.enter_flag != 0,
            complete_min: self.complete_min,
            punted: self.punted,
            sched: self.sched,
        }
    }
}

impl Engine for UringEngine {
    type Clock = super::clock::Wall;

    fn create(spec: &EngineSpec) -> Result<(Self, Vec<SlotToken>), String> {
        let entries = (spec.depth.max(1) as u32).next_power_of_two();
        // Before the ring: the io-wq threads it starts inherit the policy.
        let punted = punts(&spec.file);
        // Not with --sqpoll: its kernel thread, which inherits the policy,
        // polls the queue on the worker's CPU, and a batch one is not let
        // in when the worker sleeps (seen: 2k IOPS against 200k).
        let sched = spec.ring.sched.resolve(punted && !spec.ring.sqpoll);
        sched
            .apply()
            .map_err(|e| format!("cannot make the worker SCHED_BATCH (--sched): {e}"))?;
        // By default (--taskrun auto) the first of DEFER_TASKRUN, then
        // COOP_TASKRUN (both with SINGLE_ISSUER), then a plain ring, that
        // this kernel builds: with the ring's descriptor registered, defer
        // was measured the cheapest per I/O here (see BENCHMARKS.md), and
        // it is what fio's io_uring engine asks too.
        let mut setup = spec.ring;
        let tries: &[TaskRun] = match (setup.taskrun, setup.sqpoll) {
            (TaskRun::Auto, false) => &[TaskRun::Defer, TaskRun::Coop, TaskRun::Plain],
            // The kernel takes neither with SQPOLL.
            (TaskRun::Auto, true) => &[TaskRun::Plain],
            (TaskRun::Plain, _) => &[TaskRun::Plain],
            (TaskRun::Coop, _) => &[TaskRun::Coop],
            (TaskRun::Defer, _) => &[TaskRun::Defer],
        };
        let mut built = Err(io::Error::from_raw_os_error(libc::EINVAL));
        for &t in tries {
            setup.taskrun = t;
            built = builder(setup).build(entries);
            if built.is_ok() {
                break;
            }
        }
        let ring = built.map_err(|e| {
            format!(
                "cannot create an io_uring of {entries} entries{}: {e}: use --engine sync",
                describe(setup)
            )
        })?;
        // SAFETY: gettid has no preconditions.
        let owner = unsafe { libc::gettid() };
        let (enter_fd, enter_flag) = match register_ring_fd(ring.as_raw_fd()) {
            Some(index) => (index, ENTER_REGISTERED_RING),
            None => (ring.as_raw_fd(), 0),
        };
        let sq_thread = if spec.ring.sqpoll {
            Some(find_sq_thread(owner).ok_or(
                "the io_uring's submission thread (--sqpoll) did not appear in /proc/self/task",
            )?)
        } else {
            None
        };
        let bufs = spec.buffers()?;
        let fd = spec.file.as_raw_fd();
        let mut notes = Vec::new();
        let mut fixed_file = false;
        let mut fixed_bufs = false;
        if spec.register {
            match ring.submitter().register_files(&[fd]) {
                Ok(()) => fixed_file = true,
                Err(e) => notes.push(format!("file registration refused ({e})")),
            }
            let iovecs: Vec<libc::iovec> = bufs
                .iter()
                .map(|b| libc::iovec {
                    iov_base: b.as_slice().as_ptr() as *mut libc::c_void,
                    iov_len: b.len(),
                })
                .collect();
            // SAFETY: every iovec points into a buffer owned by this engine;
            // the buffers are freed only after the ring (and its registration)
            // is gone (`drop` closes the ring first), or never (leaked).
            match unsafe { ring.submitter().register_buffers(&iovecs) } {
                Ok(()) => fixed_bufs = true,
                Err(e) => notes.push(format!(
                    "buffer registration refused ({e}; locked memory is bounded by RLIMIT_MEMLOCK without CAP_IPC_LOCK)"
                )),
            }
        }
        let id = EngineId::new();
        // One token per slot (not per buffer: a slot may come to own more than one).
        let tokens = id.tokens(spec.depth);
        let wait = ring
            .params()
            .is_feature_ext_arg()
            .then(|| KernelTimespec::from(wait_slice(spec.hang_timeout)));
        if wait.is_none() {
            notes.push(
                "no hang timeout: this kernel cannot time a wait (IORING_FEAT_EXT_ARG, Linux 5.11)"
                    .into(),
            );
        }
        // --complete-min auto: see CompleteMin::resolve.
        let complete_min = spec.ring.complete_min.resolve(
            spec.depth,
            punted,
            punted && crate::device::ram_backed(&spec.file),
            spec.ring.waits_alone(spec.paced),
        );
        let engine = UringEngine {
            ring: ManuallyDrop::new(ring),
            bufs: ManuallyDrop::new(bufs),
            wait,
            wait_slice: wait.map(|_| wait_slice(spec.hang_timeout)),
            hang_timeout: spec.hang_timeout,
            abandoned: false,
            slots: spec.depth,
            write_base: if spec.write_buffers { spec.depth } else { 0 },
            _file: spec.file.clone(),
            fd,
            fixed_file,
            fixed_bufs,
            rw_flags: spec.rw_flags,
            cmd_prio: 0,
            nowait: if spec.nowait {
                vec![NoWaitIo::default(); spec.depth]
            } else {
                Vec::new()
            },
            setup,
            entries,
            enter_fd,
            enter_flag,
            owner,
            sq_thread,
            id,
            notes,
            in_flight: 0,
            queued: 0,
            complete_min,
            punted,
            sched,
            stuck_pipe: None,
            trim: super::trim::TrimKind::of(&spec.file)
                .map_err(|e| format!("cannot stat the target: {e}"))?,
            trims_due: Vec::new(),
            trim_res: vec![None; spec.depth],
        };
        Ok((engine, tokens))
    }

    fn depth(&self) -> usize {
        self.slots
    }

    #[inline]
    fn queue(&mut self, token: SlotToken, op: Op, offset: u64, len: usize) {
        // The token is consumed here and made again in `reap` from the
        // completion's user_data: while the I/O is in flight, no one holds it.
        token.check(self.id);
        let slot = token.index();
        if op == Op::Trim {
            self.trims_due.push((slot, offset, len));
            let nop = opcode::Nop::new().build().user_data(slot as u64);
            self.push(&nop);
            return;
        }
        let flags = if self.nowait.is_empty() {
            self.rw_flags
        } else {
            self.nowait[slot] = NoWaitIo {
                op,
                offset,
                len: len as u32,
                nowait: true,
                again: false,
            };
            self.rw_flags | RWF_NOWAIT
        };
        let entry = self.entry(slot, op, offset, len as u32, flags);
        self.push(&entry);
    }

    #[inline]
    fn set_cmd_prio(&mut self, ioprio: u16) {
        self.cmd_prio = ioprio;
    }

    fn reap<F: FnMut(SlotToken, io::Result<usize>)>(&mut self, done: F) -> io::Result<()> {
        self.reap_wait(self.wait, done)
    }

    fn reap_within<F: FnMut(SlotToken, io::Result<usize>)>(
        &mut self,
        wait: std::time::Duration,
        done: F,
    ) -> io::Result<()> {
        // The shorter of the asked wait and the hang-timeout slice; a kernel
        // without timed waits (before 5.11) waits for a completion.
        let ts = self
            .wait_slice
            .map(|slice| KernelTimespec::from(wait.min(slice)));
        self.reap_wait(ts, done)
    }

    fn buffer(&mut self, slot: &SlotToken) -> &mut [u8] {
        slot.check(self.id);
        self.bufs[slot.index()].as_mut_slice()
    }

    fn write_buffer(&mut self, slot: &SlotToken) -> &mut [u8] {
        slot.check(self.id);
        self.bufs[self.write_base + slot.index()].as_mut_slice()
    }

    fn describe(&self) -> EngineFacts {
        EngineFacts {
            path: self.path(),
            buffers: self.bufs[0].facts(),
            ring: Some(self.ring()),
            submit_thread: self.sq_thread,
        }
    }
    fn would_have_blocked(&mut self, slot: &SlotToken) -> bool {
        slot.check(self.id);
        // Issued again without RWF_NOWAIT (`queue` sets it anew).
        !self.nowait.is_empty() && !self.nowait[slot.index()].nowait
    }

    fn abandon(mut self) {
        self.abandoned = true;
        // `drop` leaks the ring and the buffers.
    }

    fn queue_stuck(&mut self, token: SlotToken) -> Option<SlotToken> {
        token.check(self.id);
        if self.stuck_pipe.is_none() {
            let mut fds = [0; 2];
            // SAFETY: pipe2 writes two descriptors into the array it is given.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                return Some(token);
            }
            // SAFETY: both descriptors were just made, and are owned by no one else.
            self.stuck_pipe =
                Some(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) });
        }
        let read_end = self.stuck_pipe.as_ref().map_or(-1, |p| p.0.as_raw_fd());
        let slot = token.index();
        let buf = &mut self.bufs[slot];
        // A read from a pipe whose write end stays open and unwritten: the
        // kernel holds the slot's buffer and never completes it.
        let entry = opcode::Read::new(
            types::Fd(read_end),
            buf.as_mut_slice().as_mut_ptr(),
            buf.len() as u32,
        )
        .offset(u64::MAX)
        .build()
        .user_data(slot as u64);
        self.push(&entry);
        None
    }
}

/// The buffer of `slot`'s `op`: its own for a read, its write buffer (after
/// every slot's, with `write_base` set) for a write.
fn buf_index(op: Op, slot: usize, write_base: usize) -> usize {
    match op {
        Op::Read | Op::Trim => slot,
        Op::Write => write_base + slot,
    }
}

/// `--nowait`: whether `slot`'s I/O, issued with RWF_NOWAIT, ended as one
/// that would have blocked: EAGAIN, or a short transfer (a buffered read
/// that found only some of its pages, readahead still bringing the rest),
/// which goes again whole, as the sync engine's does. (Fields, not the
/// engine: the completion queue holds it while this is asked.)
fn would_block(ios: &[NoWaitIo], slot: usize, res: i32) -> bool {
    res == -libc::EAGAIN || (res >= 0 && (res as u32) < ios[slot].len)
}

impl UringEngine {
    /// Issues what was queued and waits at most `wait` (none: until a
    /// completion) for one; see [`Engine::reap`].
    fn reap_wait<F: FnMut(SlotToken, io::Result<usize>)>(
        &mut self,
        wait: Option<KernelTimespec>,
        mut done: F,
    ) -> io::Result<()> {
        if self.in_flight + self.queued == 0 {
            return Ok(());
        }
        self.do_trims();
        loop {
            let mut flags = ENTER_GETEVENTS;
            if self.setup.sqpoll && self.ring.submission().need_wakeup() {
                flags |= ENTER_SQ_WAKEUP;
            }
            // At most what will be in flight: the last I/Os of a run, or a
            // queue that the caller keeps short, are still waited for.
            let want = self
                .complete_min
                .min((self.in_flight + self.queued) as u32)
                .max(1);
            let entered = match &wait {
                Some(ts) => {
                    let arg = GetEventsArg {
                        sigmask: 0,
                        sigmask_sz: 0,
                        min_wait_usec: 0,
                        ts: ts as *const KernelTimespec as u64,
                    };
                    self.enter(self.queued as u32, want, flags | ENTER_EXT_ARG, Some(&arg))
                }
                None => self.enter(self.queued as u32, want, flags, None),
            };
            match entered {
                // Ok: submitted, then woken by a completion, the timeout or a
                // signal. ETIME: nothing completed within the timeout (said
                // only when the same call submitted nothing).
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::ETIME) => {}
                // A signal: the queued entries may or may not have been taken;
                // the kernel keeps whatever it consumed, so simply enter again.
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => continue,
                Err(e) => return Err(e),
            }
            self.in_flight += self.queued;
            self.queued = 0;
            let mut reaped = false;
            // --nowait: some I/O would have blocked, and goes again.
            let mut again = false;
            let nowait = !self.nowait.is_empty();
            for cqe in self.ring.completion() {
                self.in_flight -= 1;
                let slot = cqe.user_data() as usize;
                // A trim's NOP completes with the trim's own result.
                let res = match self.trim_res.get_mut(slot).and_then(Option::take) {
                    Some(r) => r,
                    None => cqe.result(),
                };
                if nowait && self.nowait[slot].nowait && would_block(&self.nowait, slot, res) {
                    // Issued again below, without RWF_NOWAIT.
                    self.nowait[slot].again = true;
                    again = true;
                    continue;
                }
                reaped = true;
                let r = if res < 0 {
                    Err(io::Error::from_raw_os_error(-res))
                } else {
                    Ok(res as usize)
                };
                done(self.id.returned(slot), r);
            }
            if again {
                self.issue_again();
            }
            if reaped {
                return Ok(());
            }
            if again {
                // Only I/Os that go again: enter to issue them and wait.
                continue;
            }
            // Nothing completed in this wait: the caller looks at the clock.
            return Err(idle_error());
        }
    }

    /// The trims queued since the last enter, done now (see `trim`).
    #[inline]
    fn do_trims(&mut self) {
        for (slot, offset, len) in self.trims_due.drain(..) {
            let r = super::trim::trim(&self._file, self.trim, offset, len);
            self.trim_res[slot] = Some(match r {
                Ok(n) => n as i32,
                Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
            });
        }
    }

    /// `--nowait`: issues again, without RWF_NOWAIT, each I/O that
    /// would have blocked.
    #[cold]
    fn issue_again(&mut self) {
        for slot in 0..self.nowait.len() {
            let io = self.nowait[slot];
            if io.again {
                self.nowait[slot].again = false;
                self.nowait[slot].nowait = false;
                let entry = self.entry(slot, io.op, io.offset, io.len, self.rw_flags);
                self.push(&entry);
            }
        }
    }

    /// One `io_uring_enter`: submits `to_submit` entries and, with
    /// GETEVENTS, waits for `min_complete` completions (or the timeout in
    /// `arg`, with EXT_ARG). Through the registered ring when there is one.
    #[inline]
    fn enter(
        &self,
        to_submit: u32,
        min_complete: u32,
        flags: u32,
        arg: Option<&GetEventsArg>,
    ) -> io::Result<u32> {
        let (ptr, size) = match arg {
            Some(a) => (
                a as *const GetEventsArg as *const libc::c_void,
                std::mem::size_of::<GetEventsArg>(),
            ),
            None => (std::ptr::null(), 0),
        };
        // SAFETY: the ring's own descriptor (or its registered index, in
        // the thread that registered it) and, with EXT_ARG, a pointer to an
        // argument that lives for the call; the SQEs it submits were pushed
        // by `push` (see there for their buffers).
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                self.enter_fd,
                to_submit,
                min_complete,
                flags | self.enter_flag,
                ptr,
                size,
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as u32)
        }
    }

    /// The SQE of one read or write on `slot`'s buffer.
    #[inline]
    fn entry(&mut self, slot: usize, op: Op, offset: u64, len: u32, flags: i32) -> squeue::Entry {
        let index = buf_index(op, slot, self.write_base);
        let buf = &mut self.bufs[index];
        // `len` is at most the buffer's (the worker's largest size).
        let ptr = buf.as_mut_slice().as_mut_ptr();
        // The same four opcodes on the registered file or on its descriptor.
        macro_rules! on {
            ($fd:expr) => {
                match (op, self.fixed_bufs) {
                    (Op::Read, true) => opcode::ReadFixed::new($fd, ptr, len, index as u16)
                        .offset(offset)
                        .rw_flags(flags)
                        .ioprio(self.cmd_prio)
                        .build(),
                    (Op::Read, false) => opcode::Read::new($fd, ptr, len)
                        .offset(offset)
                        .rw_flags(flags)
                        .ioprio(self.cmd_prio)
                        .build(),
                    (Op::Write, true) => opcode::WriteFixed::new($fd, ptr, len, index as u16)
                        .offset(offset)
                        .rw_flags(flags)
                        .ioprio(self.cmd_prio)
                        .build(),
                    (Op::Write, false) => opcode::Write::new($fd, ptr, len)
                        .offset(offset)
                        .rw_flags(flags)
                        .ioprio(self.cmd_prio)
                        .build(),
                    (Op::Trim, _) => unreachable!("a trim is queued as a NOP"),
                }
            };
        }
        if self.fixed_file {
            on!(types::Fixed(0))
        } else {
            on!(types::Fd(self.fd))
        }
        .user_data(slot as u64)
    }

    fn push(&mut self, entry: &squeue::Entry) {
        // The ring has at least `depth` entries and at most `depth` I/Os are
        // queued or in flight, so the queue has room; if it ever had not,
        // submitting frees it.
        loop {
            // SAFETY: the entry's buffer belongs to `self.bufs`, which outlives
            // the I/O: completions are drained in `drop` before the buffers go
            // (or the buffers are leaked). No one else touches the buffer
            // while the kernel may: `queue` consumed the slot's token, and
            // `buffer` needs it; `reap` gives it back only with the completion.
            let pushed = unsafe { self.ring.submission().push(entry) };
            if pushed.is_ok() {
                self.queued += 1;
                return;
            }
            if self.enter(self.queued as u32, 0, 0, None).is_ok() {
                self.in_flight += self.queued;
                self.queued = 0;
            }
        }
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        // Wait for every I/O still in flight: the kernel may write into our
        // buffers until it completes. Each wait is bounded, and after
        // --hang-timeout with nothing completing this gives up, so it ends
        // even when an I/O never does.
        // SAFETY: gettid has no preconditions.
        let here = unsafe { libc::gettid() };
        let registered = (self.enter_flag != 0).then_some(self.enter_fd);
        if here != self.owner {
            // Another thread: the registered index is not its own.
            self.enter_fd = self.ring.as_raw_fd();
            self.enter_flag = 0;
        }
        let mut progress = std::time::Instant::now();
        while !self.abandoned && self.in_flight + self.queued > 0 {
            match self.reap(|_, _| {}) {
                Ok(()) => progress = std::time::Instant::now(),
                Err(e) if is_idle(&e) && progress.elapsed() < self.hang_timeout => {}
                // Hung (or the ring failed) with I/O possibly in flight.
                Err(_) => self.abandoned = true,
            }
        }
        if self.abandoned {
            // Deliberately leaked, never freed: the kernel may still write
            // into these buffers (a read that never completed holds its
            // buffer's address, and registered buffers stay pinned for the
            // ring), so freeing them would let it scribble over memory that
            // the allocator gives to someone else. The ring is leaked too
            // (not unmapped, not closed here): it owns the hung requests. Its
            // descriptor still closes when the worker's thread ends (the
            // thread has its own descriptor table, see worker::prepare); the
            // kernel then cancels what it can in the background, and the
            // memory it may write into stays allocated. The pipe of a
            // --debug-hang-from is not closed here either, for the same
            // reason (closing its write end completes the read it stands
            // for). A worker leaks this once, at its end; the process's exit
            // takes it all back.
            std::mem::forget(self.stuck_pipe.take());
            return;
        }
        if let Some(index) = registered.filter(|_| here == self.owner) {
            // The registration holds the ring open: it goes first.
            unregister_ring_fd(self.ring.as_raw_fd(), index);
        }
        // SAFETY: no I/O is in flight (every one queued has been reaped), so
        // the kernel holds no reference to the buffers once the ring is
        // closed; the ring goes first, taking its buffer registration with
        // it, then the buffers. Neither field is used again.
        unsafe {
            ManuallyDrop::drop(&mut self.ring);
            ManuallyDrop::drop(&mut self.bufs);
        }
    }
}
