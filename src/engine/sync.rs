//! The synchronous engine: `pread(2)`/`pwrite(2)`, one I/O in flight.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use super::Engine;
use crate::workload::Op;

/// pread/pwrite on a shared file descriptor (positional I/O needs no lock).
pub struct SyncEngine {
    file: Arc<File>,
}

impl SyncEngine {
    pub fn new(file: Arc<File>) -> SyncEngine {
        SyncEngine { file }
    }
}

impl Engine for SyncEngine {
    #[inline]
    fn io(&mut self, op: Op, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        // One syscall per call: FileExt::read_at/write_at are plain pread/pwrite
        // (EINTR is returned to the caller, which counts it as an error).
        match op {
            Op::Read => self.file.read_at(buf, offset),
            Op::Write => self.file.write_at(buf, offset),
        }
    }
}
