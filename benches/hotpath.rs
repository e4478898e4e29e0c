//! What the hot loop costs per I/O, apart from the I/O itself: the clock
//! read, recording one latency, drawing the next offset. A benchmark, not a
//! test: it prints nanoseconds per operation.
//!
//!     cargo bench --bench hotpath

use std::hint::black_box;
use std::time::Instant;

use stripebench::analysis::histogram::LatencyHistogram;
use stripebench::engine::writedata;
use stripebench::measure::workload::{OffsetGen, Region};

const N: u64 = 20_000_000;

fn per_op(label: &str, mut f: impl FnMut(u64)) {
    // Warm up, then take the best of three passes (the machine is shared).
    for i in 0..N / 10 {
        f(i);
    }
    let best = (0..3)
        .map(|_| {
            let t = Instant::now();
            for i in 0..N {
                f(i);
            }
            t.elapsed().as_nanos() as f64 / N as f64
        })
        .fold(f64::INFINITY, f64::min);
    println!("{label:<52} {best:>6.2} ns");
}

fn main() {
    println!("per-I/O costs of stripebench's hot loop, best of 3 x {N} iterations");
    per_op("Instant::now() (one clock read, vDSO)", |_| {
        black_box(Instant::now());
    });
    let mut h = LatencyHistogram::new();
    per_op("LatencyHistogram::record (spread 1us..1ms)", |i| {
        h.record(black_box(1_000 + (i * 7919) % 1_000_000));
    });
    black_box(h.len());
    let mut seq = OffsetGen::new(
        Region {
            offset: 0,
            length: 1 << 40,
        },
        4096,
        false,
        100,
        1,
    );
    per_op("OffsetGen::next_io, sequential", |_| {
        black_box(seq.next_io());
    });
    let mut rnd = OffsetGen::new(
        Region {
            offset: 0,
            length: 1 << 40,
        },
        4096,
        true,
        100,
        1,
    );
    per_op("OffsetGen::next_io, random", |_| {
        black_box(rnd.next_io());
    });
    let mut mix = OffsetGen::new(
        Region {
            offset: 0,
            length: 1 << 40,
        },
        4096,
        true,
        70,
        1,
    );
    per_op("OffsetGen::next_io, random 70% reads", |_| {
        black_box(mix.next_io());
    });
    // Unique write data (issues 13, 20): the stamp and XOR pass each write pays.
    let mut block = vec![0u8; 4096];
    writedata::fill(&mut block, 1, 0);
    let mut stamper = writedata::Stamper::new(1, 0, 0);
    per_op("Stamper::stamp, 4k block (1 unit)", |i| {
        stamper.stamp(black_box(&mut block), i * 4096);
    });
    let mut big = vec![0u8; 1 << 20];
    writedata::fill(&mut big, 1, 0);
    per_op("Stamper::stamp, 1m block (256 units)", |i| {
        stamper.stamp(black_box(&mut big), i << 20);
    });
    let mut deduping = writedata::Stamper::new(1, 50, 0);
    per_op("Stamper::stamp, 4k block, --dedupe 50", |i| {
        deduping.stamp(black_box(&mut block), i * 4096);
    });
    let mut h2 = LatencyHistogram::new();
    per_op("clock + record + next offset (all but the I/O)", |_| {
        let t0 = Instant::now();
        black_box(rnd.next_io());
        h2.record(t0.elapsed().as_nanos() as u64);
    });
}
