//! The engine's part of a worker's entry in the run document: how its ring
//! was set up (`workers[].ring`) and what its buffers were made of
//! (`workers[].buffer`), made from the facts the engine gave
//! ([`crate::engine::EngineFacts`]) and what the worker measured.

use serde::{Deserialize, Serialize};

use crate::engine::buffer::BufferFacts;
use crate::engine::{RingFacts, Sched, TaskRun};

/// How a worker's ring was set up and what its kernel submission thread
/// cost (`workers[].ring` in the JSON; absent for the sync engine).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RingDoc {
    /// Submission entries (the completion ring has twice as many).
    pub entries: u32,
    /// `--hipri`: completions are polled for (IORING_SETUP_IOPOLL).
    pub iopoll: bool,
    /// `--sqpoll`: a kernel thread takes the submissions (IORING_SETUP_SQPOLL).
    pub sqpoll: bool,
    /// That thread's CPU: the one it was bound to (`--sqpoll CPU`), else
    /// the one it was last seen on; null without `--sqpoll`.
    pub sqpoll_cpu: Option<usize>,
    /// Its CPU seconds in the window, counted in the worker's `cpu_sys_sec` too.
    pub sqpoll_cpu_sec: f64,
    /// `--taskrun` as the ring got it: plain, coop or defer.
    pub taskrun: TaskRun,
    /// The ring's own descriptor is registered (Linux 5.18): each
    /// io_uring_enter skips the file lookup.
    pub ring_fd_registered: bool,
    /// How many completions the worker waited for at once (`--complete-min`,
    /// fio's iodepth_batch_complete_min); 1 in documents before it.
    #[serde(default = "one")]
    pub complete_min: u32,
    /// The file has no non-blocking issue path (RWF_NOWAIT is refused with
    /// EOPNOTSUPP): io_uring hands every I/O to an io-wq kernel thread on
    /// the worker's CPU, whose CPU time is not in the worker's figures.
    #[serde(default)]
    pub punted: bool,
    /// The worker thread's scheduling policy (`--sched`): normal or batch.
    #[serde(default = "normal")]
    pub sched: Sched,
}

impl RingDoc {
    /// The ring as the engine described it, and `sqpoll_cpu_sec`, what its
    /// submission thread cost in the window.
    pub fn of(r: &RingFacts, sqpoll_cpu_sec: f64) -> RingDoc {
        RingDoc {
            entries: r.entries,
            iopoll: r.iopoll,
            sqpoll: r.sqpoll,
            sqpoll_cpu: r.sqpoll_cpu,
            sqpoll_cpu_sec,
            taskrun: r.taskrun,
            ring_fd_registered: r.ring_fd_registered,
            complete_min: r.complete_min,
            punted: r.punted,
            sched: r.sched,
        }
    }
}

/// Of `rings`, the workers that waited for more than one completion at a
/// time: how many, and the most any of them waited for (1 when none did).
pub fn batched<'a>(rings: impl IntoIterator<Item = &'a RingDoc>) -> (usize, u32) {
    rings
        .into_iter()
        .filter(|r| r.complete_min > 1)
        .fold((0, 1), |(count, most), r| {
            (count + 1, most.max(r.complete_min))
        })
}

fn normal() -> Sched {
    Sched::Normal
}

fn one() -> u32 {
    1
}

/// What a worker's buffers were made of (`workers[].buffer` in the JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferDoc {
    pub bytes: u64,
    pub page_size_bytes: u64,
    /// `thp`, `hugetlb` or `pages`.
    pub method: String,
    /// Where each buffer starts within its page: 0 (at a page's start),
    /// and then not written, so that the documents of every run but a
    /// `--cached` one read and write as before.
    #[serde(default, skip_serializing_if = "at_page_start")]
    pub offset_in_page_bytes: u64,
}

impl BufferDoc {
    pub fn of(b: &BufferFacts) -> BufferDoc {
        BufferDoc {
            bytes: b.bytes,
            page_size_bytes: b.page_size_bytes,
            method: b.backing.name().to_string(),
            offset_in_page_bytes: b.offset_in_page_bytes,
        }
    }
}

fn at_page_start(offset: &u64) -> bool {
    *offset == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::buffer::Backing;

    #[test]
    fn batched_counts_the_rings_that_waited_for_several_and_the_most() {
        let ring = |n| RingDoc {
            complete_min: n,
            ..RingDoc::default()
        };
        assert_eq!(batched([&ring(1), &ring(1)]), (0, 1));
        assert_eq!(batched([&ring(8), &ring(1), &ring(2)]), (2, 8));
        assert_eq!(batched(std::iter::empty()), (0, 1));
    }

    #[test]
    fn a_buffer_at_its_page_start_writes_no_offset() {
        let facts = |offset_in_page_bytes| BufferFacts {
            bytes: 2 << 20,
            page_size_bytes: 2 << 20,
            backing: Backing::Thp,
            offset_in_page_bytes,
        };
        let v = serde_json::to_value(BufferDoc::of(&facts(0))).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"bytes": 2097152, "page_size_bytes": 2097152, "method": "thp"})
        );
        let v = serde_json::to_value(BufferDoc::of(&facts(4032))).unwrap();
        assert_eq!(v["offset_in_page_bytes"], 4032);
    }
}
