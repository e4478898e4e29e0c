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

use std::fs::File;
use std::io;
use std::mem::ManuallyDrop;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use io_uring::{opcode, squeue, types, IoUring};

use super::{idle_error, is_idle, wait_slice, Engine, EngineId, EngineSpec, SlotToken};
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
    wait: Option<types::Timespec>,
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
    id: EngineId,
    /// Registration errors, for the report.
    notes: Vec<String>,
    in_flight: usize,
    queued: usize,
    /// `--debug-hang-from`: a pipe no one writes into (read end, write end),
    /// made at the first stuck I/O.
    stuck_pipe: Option<(OwnedFd, OwnedFd)>,
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

impl Engine for UringEngine {
    type Clock = super::clock::Wall;

    fn create(spec: &EngineSpec) -> Result<(Self, Vec<SlotToken>), String> {
        let entries = (spec.depth.max(1) as u32).next_power_of_two();
        // A plain ring. SINGLE_ISSUER, COOP_TASKRUN and DEFER_TASKRUN were
        // measured slower here (zram, 4k random reads at depth 32: 192k and
        // 244k IOPS against 258k without them), since zram completes I/O
        // inline at submission and the deferred work only adds a step.
        let ring = IoUring::new(entries).map_err(|e| {
            format!("cannot create an io_uring of {entries} entries: {e}: use --engine sync")
        })?;
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
            .then(|| types::Timespec::from(wait_slice(spec.hang_timeout)));
        if wait.is_none() {
            notes.push(
                "no hang timeout: this kernel cannot time a wait (IORING_FEAT_EXT_ARG, Linux 5.11)"
                    .into(),
            );
        }
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
            id,
            notes,
            in_flight: 0,
            queued: 0,
            stuck_pipe: None,
        };
        Ok((engine, tokens))
    }

    fn depth(&self) -> usize {
        self.slots
    }

    #[inline]
    fn queue(&mut self, token: SlotToken, op: Op, offset: u64) {
        // The token is consumed here and made again in `reap` from the
        // completion's user_data: while the I/O is in flight, no one holds it.
        token.check(self.id);
        let slot = token.index();
        let index = match op {
            Op::Read => slot,
            Op::Write => self.write_base + slot,
        };
        let buf = &mut self.bufs[index];
        let (ptr, len) = (buf.as_mut_slice().as_mut_ptr(), buf.len() as u32);
        let entry = match (op, self.fixed_bufs, self.fixed_file) {
            (Op::Read, true, true) => {
                opcode::ReadFixed::new(types::Fixed(0), ptr, len, index as u16)
                    .offset(offset)
                    .rw_flags(self.rw_flags)
                    .build()
            }
            (Op::Read, true, false) => {
                opcode::ReadFixed::new(types::Fd(self.fd), ptr, len, index as u16)
                    .offset(offset)
                    .rw_flags(self.rw_flags)
                    .build()
            }
            (Op::Read, false, true) => opcode::Read::new(types::Fixed(0), ptr, len)
                .offset(offset)
                .rw_flags(self.rw_flags)
                .build(),
            (Op::Read, false, false) => opcode::Read::new(types::Fd(self.fd), ptr, len)
                .offset(offset)
                .rw_flags(self.rw_flags)
                .build(),
            (Op::Write, true, true) => {
                opcode::WriteFixed::new(types::Fixed(0), ptr, len, index as u16)
                    .offset(offset)
                    .rw_flags(self.rw_flags)
                    .build()
            }
            (Op::Write, true, false) => {
                opcode::WriteFixed::new(types::Fd(self.fd), ptr, len, index as u16)
                    .offset(offset)
                    .rw_flags(self.rw_flags)
                    .build()
            }
            (Op::Write, false, true) => opcode::Write::new(types::Fixed(0), ptr, len)
                .offset(offset)
                .rw_flags(self.rw_flags)
                .build(),
            (Op::Write, false, false) => opcode::Write::new(types::Fd(self.fd), ptr, len)
                .offset(offset)
                .rw_flags(self.rw_flags)
                .build(),
        }
        .user_data(slot as u64);
        self.push(&entry);
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
            .map(|slice| types::Timespec::from(wait.min(slice)));
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

    fn buffer_doc(&self) -> crate::engine::buffer::BufferDoc {
        self.bufs[0].doc()
    }

    fn path(&self) -> String {
        let mut p = match (self.fixed_bufs, self.fixed_file) {
            (true, true) => "io_uring, registered buffers and file".to_string(),
            (true, false) => "io_uring, registered buffers".to_string(),
            (false, true) => "io_uring, plain read/write, registered file".to_string(),
            (false, false) => "io_uring, plain read/write".to_string(),
        };
        if !self.notes.is_empty() {
            p.push_str(&format!(" ({})", self.notes.join("; ")));
        }
        p
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

impl UringEngine {
    /// Issues what was queued and waits at most `wait` (none: until a
    /// completion) for one; see [`Engine::reap`].
    fn reap_wait<F: FnMut(SlotToken, io::Result<usize>)>(
        &mut self,
        wait: Option<types::Timespec>,
        mut done: F,
    ) -> io::Result<()> {
        if self.in_flight + self.queued == 0 {
            return Ok(());
        }
        loop {
            let entered = match &wait {
                Some(ts) => {
                    let args = types::SubmitArgs::new().timespec(ts);
                    self.ring.submitter().submit_with_args(1, &args)
                }
                None => self.ring.submit_and_wait(1),
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
            for cqe in self.ring.completion() {
                reaped = true;
                self.in_flight -= 1;
                let res = cqe.result();
                let r = if res < 0 {
                    Err(io::Error::from_raw_os_error(-res))
                } else {
                    Ok(res as usize)
                };
                done(self.id.returned(cqe.user_data() as usize), r);
            }
            // Nothing completed in this wait: the caller looks at the clock.
            return if reaped { Ok(()) } else { Err(idle_error()) };
        }
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
            if self.ring.submit().is_ok() {
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
