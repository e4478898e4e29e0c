#!/usr/bin/env bash
# Benchmark, not a test: how fast the kernel copies a cached file into a
# user buffer, by where the buffer starts within its page. The reason a
# `stripebench run --cached` run's buffers start CACHE_COPY_OFFSET (4080)
# bytes into a page (src/engine/buffer.rs; BENCHMARKS.md, "Where a cached
# read's buffer starts"). Only cached pages are copied here: reads that
# fill the page cache as they go measured slower off the page start
# (BENCHMARKS.md).
#
#   scripts/bench-copy-offset.sh [--rounds N] [--seconds S] [--size-mb MB] [--bs "8192 32768 ..."] [--offsets "0 64 ..."]
#
# A small C loop (built with cc into a temporary directory), pinned to CPU 0:
# pread() of the whole file again and again into one buffer at each offset,
# the offsets interleaved round by round so that a drift of the machine
# falls on all of them; the median MB/s of the rounds per offset, and its
# ratio to offset 0 (page-aligned, where dd puts its buffer). Needs cc and
# a file system under TMPDIR (default /var/tmp) that holds --size-mb MiB.
set -euo pipefail

ROUNDS=7 SECS=0.7 SIZE_MB=1024 BSS="8192 32768 1048576" OFFSETS="0 64 16 2000 3504 4080"
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) ROUNDS=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    --size-mb) SIZE_MB=$2; shift 2 ;;
    --bs) BSS=$2; shift 2 ;;
    --offsets) OFFSETS=$2; shift 2 ;;
    *) echo "bench-copy-offset.sh: unknown option $1 (see the head of the script)" >&2; exit 2 ;;
  esac
done
command -v cc >/dev/null || { echo "bench-copy-offset.sh: needs a C compiler (cc): apt-get install gcc" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/sb-copy-offset.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

cat >"$WORK/loop.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
/* loop FILE SIZE BS OFFSET SECONDS: MB/s of pread(FILE) into a buffer
   OFFSET bytes into a page, over SECONDS. */
int main(int argc, char **argv) {
  if (argc != 6) return 2;
  long size = atol(argv[2]), bs = atol(argv[3]), off = atol(argv[4]);
  double secs = atof(argv[5]);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  CPU_SET(0, &cpus);
  sched_setaffinity(0, sizeof cpus, &cpus);
  int fd = open(argv[1], O_RDONLY);
  size_t len = (size_t)bs + 8192;
  char *m = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (fd < 0 || m == MAP_FAILED) return 1;
  for (size_t i = 0; i < len; i += 4096) m[i] = 1;
  long pos = 0, bytes = 0;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (;;) {
    for (int k = 0; k < 64; k++) {
      if (pread(fd, m + off, bs, pos) != bs) return 1;
      pos = pos + bs >= size ? 0 : pos + bs;
      bytes += bs;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double t = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    if (t >= secs) { printf("%.0f\n", bytes / t / 1e6); return 0; }
  }
}
C
cc -O2 -o "$WORK/loop" "$WORK/loop.c"

FILE=$WORK/cached.dat
head -c "$((SIZE_MB << 20))" /dev/urandom >"$FILE"
cat "$FILE" >/dev/null
SIZE=$((SIZE_MB << 20))
echo "cached file: $SIZE_MB MiB; $ROUNDS rounds of $SECS s per offset, CPU 0" >&2

# median "A B C ...": the middle of the figures (the lower middle of an even count).
median() {
  tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -n | awk '{v[NR]=$1} END{if (NR) print v[int((NR+1)/2)]}'
}

printf '%-9s %-7s %10s %8s  %s\n' bs offset "MB/s" "vs 0" "rounds (MB/s)"
for bs in $BSS; do
  declare -A got=()
  for ((r = 0; r < ROUNDS; r++)); do
    for o in $OFFSETS; do
      got[$o]+="$("$WORK/loop" "$FILE" "$SIZE" "$bs" "$o" "$SECS") "
    done
  done
  base=$(median "${got[0]:-}")
  for o in $OFFSETS; do
    med=$(median "${got[$o]}")
    vs=$([ -n "$base" ] && awk -v m="$med" -v b="$base" 'BEGIN{printf "%.3f", m / b}' || echo -)
    printf '%-9s %-7s %10s %8s  %s\n' "$bs" "$o" "$med" "$vs" "${got[$o]}"
  done
  unset got
done
