#!/usr/bin/env python3
"""Benchmark reading, not a test: pools one row's per-pair ratios over every
run of scripts/bench-vs-fio.sh printed in the given files (BENCHMARKS.md by
default), for a row whose single-run median sits within the machine's noise
of its target.

    python3 scripts/pool-pairs.py [--row "(f')"] [FILE ...]

Prints, per row: the runs found, each run's median, and over all their
pairs the pooled median with a bootstrap 95% interval (5000 resamples, a
fixed seed) and the geometric mean. The runs are of different builds: the
pool says where a row lands when the tool's share of it is too small to
move it, not what one build does.
"""
import argparse
import random
import re
import statistics
import sys

# A table line: "(x) label   fio   sb   median  r1,r2,...  ge|le TARGET VERDICT ..."
LINE = re.compile(r"^(\([a-z]'?\)) .*?\s(\d+\.\d+)\s+((?:\d+\.\d+,)*\d+\.\d+)\s+(ge|le) ([\d.]+) ")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--row", action="append", help="a row's letter as printed, e.g. \"(f')\"; repeatable (default: every row)")
    ap.add_argument("files", nargs="*", default=["BENCHMARKS.md"])
    a = ap.parse_args()
    rows = {}
    for path in a.files:
        try:
            text = open(path, encoding="utf-8").read()
        except OSError as e:
            sys.exit(f"pool-pairs.py: cannot read {path}: {e.strerror}")
        for line in text.splitlines():
            m = LINE.match(line)
            if not m:
                continue
            if a.row and m.group(1) not in a.row:
                continue
            # A row with more than one figure ("(a) same: ...") is keyed by its label up to the colon.
            key = line.split(":", 1)[0]
            pairs = [float(x) for x in m.group(3).split(",")]
            rows.setdefault(key, []).append((float(m.group(2)), pairs, m.group(4), float(m.group(5))))
    if not rows:
        sys.exit("pool-pairs.py: no bench-vs-fio table row found" + (f" for {', '.join(a.row)}" if a.row else ""))
    rng = random.Random(1)
    for key, runs in rows.items():
        pooled = [p for _, ps, _, _ in runs for p in ps]
        boot = sorted(statistics.median(rng.choices(pooled, k=len(pooled))) for _ in range(5000))
        targets = ", ".join(sorted({f"{c} {t:g}" for _, _, c, t in runs}))
        met = sum((m >= t) if c == "ge" else (m <= t) for m, _, c, t in runs)
        print(key.strip())
        print(f"  runs {len(runs)}, their medians: {', '.join(f'{m:.4f}' for m, _, _, _ in runs)}; met their own target in {met}")
        print(
            f"  {len(pooled)} pairs: pooled median {statistics.median(pooled):.4f}, "
            f"95% interval {boot[124]:.4f}-{boot[4874]:.4f}, geometric mean {statistics.geometric_mean(pooled):.4f} "
            f"(targets: {targets})"
        )


if __name__ == "__main__":
    main()
