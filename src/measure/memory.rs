//! The memory a run's I/O buffers take, counted as the engines allocate
//! them, and the refusal of buffers too large for the machine before any
//! of it is allocated.

use crate::base::units::fmt_bytes;

/// Buffers one worker's engine allocates (`EngineSpec::buffers`): one per
/// slot of its queue, and as many again for the slots' write buffers when
/// it mixes reads and writes (randrw: `write_buffers` in the coordinator's
/// engine spec, for a `read_pct` strictly between 0 and 100).
pub fn buffers_per_worker(read_pct: u8, iodepth: usize) -> u64 {
    let mixes = read_pct > 0 && read_pct < 100;
    iodepth as u64 * if mixes { 2 } else { 1 }
}

/// Refuses I/O buffers that would take more than a quarter of the
/// `available` memory (`--iodepth 4096 --bs 1m` on two targets is 8 GiB),
/// unless `force` (`--force-memory`). `workers`: each worker's block size
/// and read percentage. Unknown available memory refuses nothing.
pub fn check_buffers(
    workers: &[(u64, u8)],
    iodepth: usize,
    available: Option<u64>,
    force: bool,
) -> Result<(), String> {
    let total: u64 = workers
        .iter()
        .map(|&(bs, read_pct)| bs.saturating_mul(buffers_per_worker(read_pct, iodepth)))
        .fold(0, u64::saturating_add);
    let Some(avail) = available else {
        return Ok(());
    };
    if total <= avail / 4 || force {
        return Ok(());
    }
    let mixes = workers.iter().any(|&(_, r)| buffers_per_worker(r, 1) > 1);
    Err(format!(
        "the I/O buffers need {} ({} workers x --iodepth {} x the block size{}), more than a quarter of the {} of memory available: lower --iodepth, --bs or --jobs, or pass --force-memory",
        fmt_bytes(total),
        workers.len(),
        iodepth,
        if mixes {
            ", twice over for a read/write mix's write buffers"
        } else {
            ""
        },
        fmt_bytes(avail)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn buffers_above_a_quarter_of_memory_are_refused_unless_forced() {
        // 4 workers x 64 x 1 MiB = 256 MiB: a quarter of 1 GiB passes,
        // a byte more is refused, --force-memory lets it through.
        let w = [(MIB, 100); 4];
        assert_eq!(check_buffers(&w, 64, Some(1024 * MIB), false), Ok(()));
        let e = check_buffers(&w, 64, Some(1024 * MIB - 4), false).unwrap_err();
        assert!(e.starts_with("the I/O buffers need 256.0 MiB (4 workers x --iodepth 64 x the block size), more than a quarter of the "), "{e}");
        assert!(e.ends_with("or pass --force-memory"), "{e}");
        assert_eq!(check_buffers(&w, 64, Some(MIB), true), Ok(()));
        assert_eq!(check_buffers(&w, 64, None, false), Ok(()));
    }

    #[test]
    fn a_read_write_mix_counts_its_write_buffers_too() {
        // randrw (read_pct 50) allocates 2 x iodepth buffers per worker:
        // 256 x 1 MiB x 2 = 512 MiB, more than a quarter of 1.5 GiB
        // (384 MiB), though bs x iodepth alone (256 MiB) is not.
        let e = check_buffers(&[(MIB, 50)], 256, Some(1536 * MIB), false).unwrap_err();
        assert!(e.contains("need 512.0 MiB"), "{e}");
        assert!(e.contains("twice over for a read/write mix"), "{e}");
        // Pure reads and pure writes allocate one buffer per slot.
        assert_eq!(
            check_buffers(&[(MIB, 100)], 256, Some(1536 * MIB), false),
            Ok(())
        );
        assert_eq!(
            check_buffers(&[(MIB, 0)], 256, Some(1536 * MIB), false),
            Ok(())
        );
    }
}
