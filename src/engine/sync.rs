//! The synchronous engine: `pread(2)`/`pwrite(2)`, one I/O in flight.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use super::{Engine, EngineSpec};
use crate::base::io::Op;
use crate::engine::buffer::AlignedBuf;

/// pread/pwrite on a shared file descriptor (positional I/O needs no lock).
pub struct SyncEngine {
    file: Arc<File>,
    buf: AlignedBuf,
    /// Writes' own buffer when reads and writes are mixed.
    wbuf: Option<AlignedBuf>,
    queued: Option<(Op, u64)>,
}

impl Engine for SyncEngine {
    fn create(spec: &EngineSpec) -> Result<Self, String> {
        if spec.depth != 1 {
            return Err(
                "the sync engine keeps one I/O in flight: use --iodepth 1 or --engine uring".into(),
            );
        }
        let mut bufs = spec.buffers()?;
        let wbuf = if spec.write_buffers { bufs.pop() } else { None };
        let buf = bufs.pop().ok_or("no buffer")?;
        Ok(SyncEngine {
            file: spec.file.clone(),
            buf,
            wbuf,
            queued: None,
        })
    }

    fn depth(&self) -> usize {
        1
    }

    #[inline]
    fn queue(&mut self, _slot: usize, op: Op, offset: u64) {
        self.queued = Some((op, offset));
    }

    #[inline]
    fn reap<F: FnMut(usize, io::Result<usize>)>(&mut self, mut done: F) -> io::Result<()> {
        let Some((op, offset)) = self.queued.take() else {
            return Ok(());
        };
        // One syscall: FileExt::read_at/write_at are plain pread/pwrite.
        let res = match op {
            Op::Read => self.file.read_at(self.buf.as_mut_slice(), offset),
            Op::Write => self
                .file
                .write_at(self.wbuf.as_ref().unwrap_or(&self.buf).as_slice(), offset),
        };
        done(0, res);
        Ok(())
    }

    fn buffer(&mut self, _slot: usize) -> &mut [u8] {
        self.buf.as_mut_slice()
    }

    fn write_buffer(&mut self, _slot: usize) -> &mut [u8] {
        self.wbuf.as_mut().unwrap_or(&mut self.buf).as_mut_slice()
    }

    fn path(&self) -> String {
        "pread/pwrite".into()
    }
}
