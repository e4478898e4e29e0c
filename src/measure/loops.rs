//! fio's io_size= with loops= (`--io-limit` with `--passes`): how many
//! bytes one worker does, by fio's own rule, which depends on its region.
//!
//! fio (backend.c, as of 770bafe6 "reset nr_done_files when io_size >
//! size") bounds the job twice. do_io() stops a pass once the bytes issued
//! since the job began reach io_size x loops, a count never reset between
//! passes; a pass also ends at its region's end, unless the sequential
//! position wraps to the region's start within the pass (a write whose
//! io_size is over its size, and, with holes, a position past the file's
//! end: get_next_seq_offset()). keep_running() starts `loops` passes, then
//! more while the job's bytes (the verify's reads among them) fall short of
//! io_size by a block or more. So a region that holds io_size gives io_size
//! x loops; a smaller one gives whole passes: loops of them, or as many as
//! reach io_size. Measured with fio 3.42 (fio 3.33, before that commit,
//! stopped a write of io_size over size after one io_size).

/// What one worker's pass over its region is, for fio's rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    /// The bytes of one pass over the region (its whole requests, holes
    /// skipped).
    pub bytes: u64,
    /// The largest request, in bytes.
    pub bs: u64,
    /// The pass goes round its region until the bound, rather than ending
    /// at the region's end.
    pub wraps: bool,
    /// The job reads back what it writes (fio's do_verify=1), and fio
    /// counts those reads in the bytes keep_running() weighs.
    pub verified: bool,
}

/// The bytes a worker does for io_size= `io_size` and loops= `loops` over
/// a region whose pass is `pass`.
pub fn bytes(io_size: u64, loops: u64, pass: Pass) -> u64 {
    let all = io_size.saturating_mul(loops);
    if pass.wraps || pass.bytes == 0 || pass.bytes >= io_size {
        return all;
    }
    // Whole passes: `loops` of them, then more while the count is short of
    // io_size by at least a block (keep_running()'s `diff < td_max_bs`).
    let per = if pass.verified {
        pass.bytes.saturating_mul(2)
    } else {
        pass.bytes
    };
    let needed = match io_size.checked_sub(pass.bs) {
        Some(short) => short / per + 1,
        None => 0,
    };
    loops.max(needed).saturating_mul(pass.bytes).min(all)
}

/// Whether fio's sequential pass wraps to the region's start: a write of
/// io_size over the region's size does (get_next_seq_offset()'s
/// `io_size > size`), and so does a pass with holes whose next position,
/// counted from the region's start, lands at or past the file's end (fio
/// compares that relative position with the file's size: a region from
/// the file's start to its end wraps, one further in does not).
pub fn wraps(
    writes: bool,
    io_size: u64,
    region_len: u64,
    next_pos: Option<u64>,
    file_size: u64,
) -> bool {
    (writes && io_size > region_len) || next_pos.is_some_and(|p| p >= file_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;

    fn pass(bytes: u64, wraps: bool, verified: bool) -> Pass {
        Pass {
            bytes,
            bs: 4 * K,
            wraps,
            verified,
        }
    }

    /// Figures fio 3.42 gave (bs=4k, size=1m, psync), bytes written or read.
    #[test]
    fn matches_what_fio_did() {
        let cases = [
            // rw=write: io_size over size wraps: io_size x loops.
            (512 * K, 2, pass(1024 * K, false, false), 1024 * K),
            (3072 * K, 2, pass(1024 * K, true, false), 6144 * K),
            (1536 * K, 2, pass(1024 * K, true, false), 3072 * K),
            (3072 * K, 3, pass(1024 * K, true, false), 9216 * K),
            (512 * K, 3, pass(1024 * K, false, false), 1536 * K),
            // rw=read: no wrap: whole passes, loops or up to io_size.
            (3072 * K, 2, pass(1024 * K, false, false), 3072 * K),
            (3072 * K, 4, pass(1024 * K, false, false), 4096 * K),
            (1536 * K, 2, pass(1024 * K, false, false), 2048 * K),
            // rw=write:28k offset=120k: a pass is 128k.
            (256 * K, 2, pass(128 * K, false, false), 256 * K),
            (512 * K, 2, pass(128 * K, false, false), 512 * K),
            (300 * K, 2, pass(128 * K, false, false), 384 * K),
            // ... with verify=crc32c (the read-back counted).
            (512 * K, 2, pass(128 * K, false, true), 256 * K),
            (300 * K, 2, pass(128 * K, false, true), 256 * K),
            // rw=write:28k from the file's start to its end: wraps.
            (256 * K, 2, pass(128 * K, true, false), 512 * K),
        ];
        for (io_size, loops, p, want) in cases {
            assert_eq!(
                bytes(io_size, loops, p),
                want,
                "io_size={io_size} loops={loops} {p:?}"
            );
        }
    }

    #[test]
    fn short_of_io_size_by_less_than_a_block_stops() {
        // 2 passes of 128k are 256k; io_size=258k is short by 2k < 4k.
        assert_eq!(bytes(258 * K, 2, pass(128 * K, false, false)), 256 * K);
        assert_eq!(bytes(260 * K, 2, pass(128 * K, false, false)), 384 * K);
        // ... and never past io_size x loops, where do_io() stops.
        assert_eq!(bytes(260 * K, 1, pass(128 * K, false, false)), 260 * K);
    }

    #[test]
    fn wrapping_is_fio_s() {
        // A write of io_size over the region's size.
        assert!(wraps(true, 2 * K, K, None, 8 * K));
        assert!(!wraps(false, 2 * K, K, None, 8 * K));
        // Holes: the next position past the file's end, or short of it.
        assert!(wraps(false, K, 4 * K, Some(8 * K), 8 * K));
        assert!(!wraps(false, K, 4 * K, Some(7 * K), 8 * K));
    }
}
