//! The synchronous engine: `pread(2)`/`pwrite(2)`, one I/O in flight.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::sync::Arc;

use super::watch::CallWatch;
use super::{Engine, EngineFacts, EngineId, EngineSpec, SlotToken, RWF_NOWAIT};
use crate::base::io::Op;
use crate::engine::buffer::AlignedBuf;

/// pread/pwrite on a shared file descriptor (positional I/O needs no lock).
pub struct SyncEngine {
    file: Arc<File>,
    buf: AlignedBuf,
    /// Writes' own buffer when reads and writes are mixed.
    wbuf: Option<AlignedBuf>,
    id: EngineId,
    /// The queued I/O, with its slot's token until `reap` performs it.
    queued: Option<(SlotToken, Op, u64, usize)>,
    /// Said around each pread/pwrite (see [`CallWatch`]).
    watch: Option<Arc<CallWatch>>,
    /// RWF_* flags: when set, preadv2/pwritev2 instead of pread/pwrite.
    rw_flags: i32,
    /// `--nowait`: each I/O goes first with RWF_NOWAIT.
    nowait: bool,
    /// `--nowait`: the last I/O would have blocked, and went again.
    blocked: bool,
    /// How a trim is done on this file (`--rw trim`/`randtrim`).
    trim: super::trim::TrimKind,
}

impl SyncEngine {
    /// One system call: pread64/pwrite64, or with RWF_* flags
    /// preadv2/pwritev2 on one iovec.
    #[inline]
    fn issue(&mut self, op: Op, offset: u64, len: usize, flags: i32) -> io::Result<usize> {
        let fd = self.file.as_fd();
        let b = match op {
            Op::Read => &mut self.buf.as_mut_slice()[..len],
            Op::Write => &mut self.wbuf.as_mut().unwrap_or(&mut self.buf).as_mut_slice()[..len],
            Op::Trim => return super::trim::trim(&self.file, self.trim, offset, len),
        };
        // Straight to the kernel, through rustix's own system call (its
        // linux_raw backend puts the `syscall` instruction here): glibc's
        // pread and pwrite are thread cancellation points, which in a
        // process of several threads wrap each call in two more calls
        // (2.7% of the CPU of an 8 KiB cached read, by perf), and its
        // syscall() is a call of its own that moves every argument (2.4%),
        // where a single-threaded dd pays neither. No thread of ours is
        // ever cancelled.
        let r = match (op, flags) {
            (Op::Read, 0) => rustix::io::pread(fd, b, offset),
            (Op::Write, 0) => rustix::io::pwrite(fd, b, offset),
            (Op::Read, f) => {
                rustix::io::preadv2(fd, &mut [io::IoSliceMut::new(b)], offset, rw_flags(f))
            }
            (Op::Write, f) => rustix::io::pwritev2(fd, &[io::IoSlice::new(b)], offset, rw_flags(f)),
            (Op::Trim, _) => unreachable!("a trim returned above"),
        };
        r.map_err(io::Error::from)
    }
}

/// RWF_* `flags` as rustix takes them, kept bit for bit (RWF_DONTCACHE is
/// newer than rustix's names).
#[inline]
fn rw_flags(flags: i32) -> rustix::io::ReadWriteFlags {
    rustix::io::ReadWriteFlags::from_bits_retain(flags as u32)
}

impl Engine for SyncEngine {
    type Clock = super::clock::Wall;

    fn create(spec: &EngineSpec) -> Result<(Self, Vec<SlotToken>), String> {
        if spec.depth != 1 {
            return Err(
                "the sync engine keeps one I/O in flight: use --iodepth 1 or --engine uring".into(),
            );
        }
        let mut bufs = spec.buffers()?;
        let wbuf = if spec.write_buffers { bufs.pop() } else { None };
        let buf = bufs.pop().ok_or("no buffer")?;
        let id = EngineId::new();
        let engine = SyncEngine {
            file: spec.file.clone(),
            buf,
            wbuf,
            id,
            queued: None,
            watch: spec.watch.clone(),
            rw_flags: spec.rw_flags,
            nowait: spec.nowait,
            blocked: false,
            trim: super::trim::TrimKind::of(&spec.file)
                .map_err(|e| format!("cannot stat the target: {e}"))?,
        };
        Ok((engine, id.tokens(1)))
    }

    fn depth(&self) -> usize {
        1
    }

    #[inline]
    fn queue(&mut self, slot: SlotToken, op: Op, offset: u64, len: usize) {
        slot.check(self.id);
        self.queued = Some((slot, op, offset, len));
    }

    #[inline]
    fn reap<F: FnMut(SlotToken, io::Result<usize>)>(&mut self, mut done: F) -> io::Result<()> {
        let Some((slot, op, offset, len)) = self.queued.take() else {
            return Ok(());
        };
        // A stalled device can hold this call for good: the coordinator may
        // give up on it meanwhile (then `leave` never returns).
        if let Some(w) = &self.watch {
            w.enter();
        }
        let first = self.rw_flags | if self.nowait { RWF_NOWAIT } else { 0 };
        let mut res = self.issue(op, offset, len, first);
        self.blocked = self.nowait
            && match &res {
                // It would have blocked (EAGAIN), or the file system does
                // not try a buffered write so (ext4: EOPNOTSUPP)...
                Err(e) => matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EOPNOTSUPP)),
                // ... or it moved only what needed no waiting (a buffered
                // read finds part of the block cached).
                Ok(n) => *n < len,
            };
        if self.blocked {
            // Issued again, whole, as without --nowait.
            res = self.issue(op, offset, len, self.rw_flags);
        }
        if let Some(w) = &self.watch {
            w.leave();
        }
        done(slot, res);
        Ok(())
    }

    fn buffer(&mut self, slot: &SlotToken) -> &mut [u8] {
        slot.check(self.id);
        self.buf.as_mut_slice()
    }

    fn write_buffer(&mut self, slot: &SlotToken) -> &mut [u8] {
        slot.check(self.id);
        self.wbuf.as_mut().unwrap_or(&mut self.buf).as_mut_slice()
    }

    fn describe(&self) -> EngineFacts {
        EngineFacts {
            path: self.path(),
            buffers: self.buf.facts(),
            ring: None,
            submit_thread: None,
        }
    }

    fn would_have_blocked(&mut self, slot: &SlotToken) -> bool {
        slot.check(self.id);
        self.blocked
    }

    fn abandon(self) {
        // Nothing is ever in flight outside `reap`: the buffers are free.
        drop(self);
    }
}

impl SyncEngine {
    /// How I/O is issued, in words.
    fn path(&self) -> String {
        match (self.rw_flags != 0, self.nowait) {
            (_, true) => "preadv2/pwritev2, RWF_NOWAIT first".into(),
            (true, false) => "preadv2/pwritev2".into(),
            (false, false) => "pread/pwrite".into(),
        }
    }
}
