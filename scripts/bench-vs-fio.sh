#!/usr/bin/env bash
# Benchmark, not a test: stripebench against fio on the same RAM-backed block
# devices, same workload, one worker per device, alternating fio / stripebench
# (A B A B ...) --pairs times per workload, and the median of the per-pair
# ratios stripebench / fio. Prints figures, ratios and each tool's peak RSS.
#
#   sudo scripts/bench-vs-fio.sh [--pairs N] [--seconds S] [--size-mb MB] [--only LETTERS] [--sb PATH] [--fio PATH]
#
# --only a,c runs only those workloads (the letters below); --sb PATH uses
# that stripebench instead of building the release one; --fio PATH uses
# that fio (default: the one on PATH; (j) needs fio 3.40+ for uncached=1, and
# is skipped, saying so, with an older one: build fio from its source, as
# BENCHMARKS.md says, and give it here). t/io_uring beside that fio, when
# built, gives (b)'s per-core figure its reference. The cheapest run,
# to check the script itself (a debug build's figures mean nothing):
#   sudo scripts/bench-vs-fio.sh --pairs 1 --seconds 1 --size-mb 64 --only c --sb target/debug/stripebench
#
# Devices: two zram devices (hot_add, filled with random data so reads are
# not of never-written pages); if zram is unavailable, two loop devices over
# tmpfs with --direct-io=on. Every device and file it creates is removed on
# every exit path; devices it did not create are never touched.
#
# Workloads (issue #3): (a) 4k random read, O_DIRECT, one in flight (fio
# psync vs stripebench sync): IOPS and CPU seconds per I/O; (b) 4k random
# read, O_DIRECT, io_uring depth 32: IOPS (also with stripebench's buffer
# registration off, which is fio's default); (c) 1M sequential read,
# O_DIRECT: MB/s; (d) 1M sequential write, O_DIRECT: MB/s; (e) 32k
# sequential buffered read of a cached file: MB/s, with dd bs=32k beside;
# (f) 1M sequential O_DIRECT read on a loop device over a disk file, fio
# with --iomem=malloc and (f') as --print-fio gives it (--iomem=mmaphuge, its
# `# run first:` huge pages reserved by this script), with stripebench's average
# device request and, for (f') and (j), each tool's own time between I/Os
# (its time per I/O less its mean latency: one I/O in flight, the rest is
# the device's and the kernel's); (g) and (h) 64 and 256 zram devices, one worker each (fio:
# 64 and 256 jobs), 1M O_DIRECT reads and 4k random reads; (i) 4k randrw
# 70/30 at depth 16, reads and writes reported apart; (j) 1M uncached
# buffered reads (RWF_DONTCACHE) of a file on ext4 over zram, against fio's
# uncached=1; (k) seed 003's method: dd against `run --cached --buffered`
# on the same cached file at bs 8k, 32k and 1M, dd and stripebench
# alternating. CPU seconds per I/O (user + system) for (a), (b) and (g).
# fio's side of every workload is what `stripebench run --print-fio` prints
# for stripebench's own options (the same line every run document carries in
# `fio`): one job per worker on the same devices and CPUs, the same bs,
# pattern, engine, depth, direct, window and ramp; --norandommap
# --randrepeat=0 so that both tools draw random offsets uniformly with
# replacement; --fixedbufs --registerfiles when stripebench registers its
# buffers (its default; (b') turns it off on both sides); --invalidate=0
# with stripebench --cached, so that (e)'s cached file stays cached; and
# --refill_buffers for writes: both tools write data unique per block, as a
# real device would store it (the same block everywhere flatters compressing
# and deduplicating devices, zram among them). Only what stripebench has no
# option for is added by hand to the fio side, each with its reason: (d')
# turns fio's fresh data off, to show what the data costs zram's compressor,
# and (f') gives fio huge-page buffers.
set -euo pipefail

PAIRS=3
SECS=5
SIZE_MB=1024
ONLY=abcdefghijk
SB_GIVEN=""
FIO=fio
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) PAIRS=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    --size-mb) SIZE_MB=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --sb) SB_GIVEN=$2; shift 2 ;;
    --fio) FIO=$(realpath "$2"); shift 2 ;;
    *) echo "usage: $0 [--pairs N] [--seconds S] [--size-mb MB] [--only LETTERS] [--sb PATH] [--fio PATH]" >&2; exit 2 ;;
  esac
done
[ "$PAIRS" -ge 1 ] && [ "$SECS" -ge 1 ] || { echo "--pairs and --seconds must be >= 1" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench-vs-fio.sh: needs root (block devices)" >&2; exit 2; }

cd "$(dirname "$0")/.."
ROOT=$(pwd)
if [ "$FIO" = fio ] && ! command -v fio >/dev/null; then
  echo "installing fio..." >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio >/dev/null; }
fi
if [ -n "$SB_GIVEN" ]; then
  SB=$(realpath "$SB_GIVEN")
else
  cargo build --release --quiet
  SB=$ROOT/target/release/stripebench
fi
[ -x "$SB" ] || { echo "bench-vs-fio.sh: no stripebench at $SB" >&2; exit 2; }
TIME=/usr/bin/time
[ -x $TIME ] || { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null; }

WORK=$(mktemp -d /tmp/sb-bench.XXXXXX)
ZRAMS=()
MANY=()
FSMNT=""
LOOPDIR=""
DISKLOOP=""
DISKFILE=""
# The huge pages reserved before: put back on every exit path, whatever
# the fio lines' `# run first:` lines reserved meanwhile.
HUGE_OLD=$(cat /proc/sys/vm/nr_hugepages)
cleanup() {
  set +e
  [ -n "$DISKLOOP" ] && losetup -d "$DISKLOOP"
  [ -n "$DISKFILE" ] && rm -f "$DISKFILE"
  [ -n "$HUGE_OLD" ] && echo "$HUGE_OLD" >/proc/sys/vm/nr_hugepages
  [ -n "$FSMNT" ] && umount "$FSMNT"
  for z in "${ZRAMS[@]}" "${MANY[@]}"; do
    echo 1 >"/sys/block/zram$z/reset" 2>/dev/null
    echo "$z" >/sys/class/zram-control/hot_remove 2>/dev/null
  done
  [ -n "$LOOPDIR" ] && bash "$ROOT/scripts/testbed.sh" down "$LOOPDIR" && rm -rf "$LOOPDIR"
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

DEVS=()
if [ -w /sys/class/zram-control/hot_add ]; then
  for _ in 1 2; do
    z=$(cat /sys/class/zram-control/hot_add)
    ZRAMS+=("$z")
    echo "${SIZE_MB}M" >"/sys/block/zram$z/disksize"
    dd if=/dev/urandom of="/dev/zram$z" bs=1M count="$SIZE_MB" oflag=direct status=none
    DEVS+=("/dev/zram$z")
  done
  KIND="zram (RAM-backed, compressed; filled with random data)"
else
  LOOPDIR=$(mktemp -d /dev/shm/sb-bench-loops.XXXXXX)
  mapfile -t DEVS < <(bash "$ROOT/scripts/testbed.sh" up "$LOOPDIR" 2 "$SIZE_MB")
  KIND="loop devices over tmpfs (--direct-io=on)"
fi
CACHED=$WORK/cached.dat
dd if=/dev/urandom of="$CACHED" bs=1M count="$SIZE_MB" status=none
cat "$CACHED" >/dev/null

# The window both tools run: stripebench's options, and --print-fio's from them.
SB_WINDOW=(--duration "${SECS}s" --ramp 1s)

# fio_args "SB ARGS" "FIO EXTRA": the options of the fio line `stripebench run
# --print-fio SB ARGS` prints (its `# not in fio:` lines to stderr), with
# FIO EXTRA put before the first job (--name=): among the global options, so
# they hold for every job. Split on blanks: the devices and files here have
# plain names, which --print-fio leaves unquoted. A line that runs fio under
# `chrt --batch 0` (stripebench's workers run SCHED_BATCH: --sched auto on a
# target with no non-blocking path, zram among them) comes out with BATCH
# first, for compare to run fio so too.
fio_args() {
  local text line prefix=""
  # shellcheck disable=SC2086
  text=$("$SB" run --print-fio "${SB_WINDOW[@]}" $1) || { echo "bench-vs-fio.sh: --print-fio refused: $1" >&2; exit 2; }
  grep '^# ' <<<"$text" | sed 's/^/    fio: /' >&2 || true
  # `# run first: sysctl -w vm.nr_hugepages=N` (the line asks fio for huge
  # pages, as ours are): N more than were reserved before, for this line.
  local n
  n=$(sed -n 's/^# run first: sysctl -w vm.nr_hugepages=\([0-9]*\).*/\1/p' <<<"$text")
  [ -z "$n" ] || echo $((HUGE_OLD + n)) >/proc/sys/vm/nr_hugepages
  line=$(grep -E '^(chrt --batch 0 )?fio ' <<<"$text")
  if [[ $line == "chrt --batch 0 "* ]]; then
    prefix="BATCH "
    line=${line#chrt --batch 0 }
  fi
  line=${line#fio }
  echo "${prefix}${line%% --name=*} $2 --name=${line#* --name=}"
}

# run_fio OUT ARGS... ; run_sb OUT ARGS... : JSON to OUT.json, peak RSS (KiB) to OUT.rss
# (fio under FIO_PRE: chrt --batch 0 when the line asks it)
FIO_PRE=()
run_fio() { local out=$1; shift; $TIME -f %M -o "$out.rss" "${FIO_PRE[@]}" "$FIO" --output-format=json "$@" >"$out.json"; }
run_sb() { local out=$1; shift; $TIME -f %M -o "$out.rss" "$SB" run --no-progress "${SB_WINDOW[@]}" --json "$out.json" "$@" >/dev/null; }
# want LETTER: whether --only selected that workload.
want() { [[ $ONLY == *"$1"* ]]; }

# metric FILE TOOL KIND -> one number
metric() {
  python3 - "$@" <<'PY'
import json, sys
path, tool, kind = sys.argv[1:4]
d = json.load(open(path))
if tool == "fio":
    jobs = d["jobs"]
    rd = sum(j["read"]["io_bytes"] for j in jobs); wr = sum(j["write"]["io_bytes"] for j in jobs)
    ios = sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in jobs)
    # One window for all jobs, as stripebench's total (one barrier, one
    # window): the bytes and I/Os of every job over the span from the first
    # job's window opening to the last one's closing (job_start, fio 3.3x+;
    # the ramp cancels out), else over the longest runtime. Summing each
    # job's own rate overstates a run of many jobs on few CPUs, whose jobs
    # start (and leave their ramp) at different times: 256 jobs summed to
    # 4.1M 4k IOPS on 2 CPUs whose CPU time per I/O allows 1.6M.
    if all("job_start" in j for j in jobs):
        secs = (max(j["job_start"] + j["job_runtime"] for j in jobs) - min(j["job_start"] for j in jobs)) / 1000.0
    else:
        secs = max(j["job_runtime"] for j in jobs) / 1000.0
        if len(jobs) > 2:
            # fio before 3.36 writes no job_start: over the longest runtime,
            # jobs that did not all run at once add up to more than was read
            # at any time (fio 3.33 gave 57.6 GB/s for (h)'s 1 MiB reads, 3.6
            # times what the same 2 CPUs read from 2 such devices).
            print(f"bench-vs-fio.sh: {len(jobs)} fio jobs and no job_start in fio's JSON (fio before 3.36):"
                  " fio's figure is overstated; give --fio a newer fio (BENCHMARKS.md says how to build one)",
                  file=sys.stderr)
    bps = (rd + wr) / secs
    iops = ios / secs
    usr = sum(j["usr_cpu"] / 100.0 * j["job_runtime"] / 1000.0 for j in jobs)
    sys_ = sum(j["sys_cpu"] / 100.0 * j["job_runtime"] / 1000.0 for j in jobs)
    riops = sum(j["read"]["total_ios"] for j in jobs) / secs
    wiops = sum(j["write"]["total_ios"] for j in jobs) / secs
    # Each job's time per I/O less its mean latency (issue to completion,
    # the system call's included): the tool's own time between I/Os.
    own = [(j["read"]["total_ios"], j["job_runtime"] / 1000.0 / j["read"]["total_ios"] - j["read"]["lat_ns"]["mean"] / 1e9)
           for j in jobs if j["read"]["total_ios"]]
else:
    t = d["total"]
    ios, bps, iops, usr, sys_ = t["ios"], t["bytes_per_sec"], t["iops"], t["cpu_usr_sec"], t["cpu_sys_sec"]
    bd = t.get("by_direction") or {}
    riops = (bd.get("reads") or {}).get("iops", iops if not bd else 0)
    wiops = (bd.get("writes") or {}).get("iops", 0)
    # The same from each worker's window, I/Os and mean latency (from its
    # histogram: buckets of 256 ns at 400 us, 3 significant digits).
    own = [(w["ios"], w["seconds"] / w["ios"] - w["latency_ns"]["mean"] / 1e9) for w in d["workers"] if w["ios"]]
v = {"iops": iops, "mbps": bps / 1e6, "usr_per_io": usr / max(ios, 1), "cpu_per_io": (usr + sys_) / max(ios, 1),
     "read_iops": riops, "write_iops": wiops,
     "own_per_io": sum(n * t for n, t in own) / max(sum(n for n, _ in own), 1)}[kind]
print(f"{v:.12g}")
PY
}

median() { python3 -c 'import sys, statistics; v=[float(x) for x in sys.argv[1:]]; print(f"{statistics.median(v):.12g}")' "$@"; }
ratio() { python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(f"{a / b:.4f}" if b else "nan")' "$1" "$2"; }
fmt() { python3 -c 'import sys; v=float(sys.argv[1]); print(f"{v:.3e}" if v < 0.01 else f"{v:,.1f}")' "$1"; }

ROWS=$WORK/rows.txt
: >"$ROWS"
# compare LABEL KIND TARGET "SB ARGS" ["FIO EXTRA"]  (ratio = stripebench / fio;
# for CPU, lower is better): fio runs what --print-fio gives for SB ARGS.
compare() {
  local label=$1 kind=$2 target=$3 sargs=$4 fargs p fr=() sr=() rr=() frss=0 srss=0
  want "${label:1:1}" || return 0
  # The same fio lines run for each figure of one workload: reuse its runs.
  if [ "${REUSE:-}" = 1 ]; then
    for ((p = 1; p <= PAIRS; p++)); do tally "$p" "$kind"; done
    row "$label" "$target"
    return 0
  fi
  echo "  $label" >&2
  fargs=$(fio_args "$sargs" "${5:-}")
  FIO_PRE=()
  if [[ $fargs == "BATCH "* ]]; then
    FIO_PRE=(chrt --batch 0)
    fargs=${fargs#BATCH }
  fi
  echo "    ${FIO_PRE[*]} fio $fargs" >&2
  for ((p = 1; p <= PAIRS; p++)); do
    # shellcheck disable=SC2086
    run_fio "$WORK/f$p" $fargs
    # shellcheck disable=SC2086
    run_sb "$WORK/s$p" $sargs
    tally "$p" "$kind"
  done
  row "$label" "$target"
}

# tally P KIND: pair P's figures (f$P.json, s$P.json) into the compare in
# progress's fr, sr, rr, frss and srss.
tally() {
  local p=$1 kind=$2 fv sv
  fv=$(metric "$WORK/f$p.json" fio "$kind"); sv=$(metric "$WORK/s$p.json" sb "$kind")
  fr+=("$fv"); sr+=("$sv"); rr+=("$(ratio "$sv" "$fv")")
  frss=$(( $(cat "$WORK/f$p.rss") > frss ? $(cat "$WORK/f$p.rss") : frss ))
  srss=$(( $(cat "$WORK/s$p.rss") > srss ? $(cat "$WORK/s$p.rss") : srss ))
}

# row LABEL TARGET: one line of the table from the compare in progress's
# fr, sr, rr, frss and srss.
row() {
  local label=$1 target=$2 mr verdict
  mr=$(median "${rr[@]}")
  verdict=$(python3 -c 'import sys; r, t, k = float(sys.argv[1]), sys.argv[2], sys.argv[3]
if t == "-": print("-")
elif k == "le": print("MET" if r <= float(t) else "MISSED")
else: print("MET" if r >= float(t) else "MISSED")' "$mr" "$target" "${CMP:-ge}")
  printf '%-52s %14s %14s %8s  %-22s %-8s %8s %8s\n' "$label" "$(fmt "$(median "${fr[@]}")")" "$(fmt "$(median "${sr[@]}")")" "$mr" \
    "$(IFS=,; echo "${rr[*]}")" "$( [ "$target" = - ] && echo - || echo "${CMP:-ge} $target") $verdict" "$((frss / 1024))M" "$((srss / 1024))M" >>"$ROWS"
}

D0=${DEVS[0]}
ALL_DEVS="${DEVS[*]}"
# Worker i on CPU i, as the hand-written fio jobs had it.
PIN="--cpus $(seq -s, 0 $((${#DEVS[@]} - 1)))"
echo "devices: ${DEVS[*]} ($KIND)" >&2

compare "(a) 4k randread O_DIRECT psync/sync, 2 dev: IOPS" iops 1.05 \
  "--rw randread --bs 4k --direct --engine sync $PIN $ALL_DEVS"
REUSE=1 CMP=le compare "(a) same: user CPU seconds per I/O" usr_per_io 1.0 -
REUSE=1 CMP=le compare "(a) same: user+system CPU seconds per I/O" cpu_per_io 1.0 -
compare "(b) 4k randread O_DIRECT io_uring qd32: IOPS" iops 1.05 \
  "--rw randread --bs 4k --direct --engine uring --iodepth 32 $PIN $ALL_DEVS"
REUSE=1 CMP=le compare "(b) same: user+system CPU seconds per I/O" cpu_per_io - -
want b && B_CPU=$(python3 - "$WORK" "$PAIRS" <<'PY'
import json, sys, statistics
work, pairs = sys.argv[1], int(sys.argv[2])
def per_io(d, tool):
    if tool == "fio":
        j = d["jobs"]; ios = sum(x["read"]["total_ios"] for x in j)
        cpu = sum((x["usr_cpu"] + x["sys_cpu"]) / 100.0 * x["job_runtime"] / 1000.0 for x in j)
    else:
        t = d["total"]; ios = t["ios"]; cpu = t["cpu_usr_sec"] + t["cpu_sys_sec"]
    return cpu / max(ios, 1)
f = statistics.median(per_io(json.load(open(f"{work}/f{p}.json")), "fio") for p in range(1, pairs + 1))
s = statistics.median(per_io(json.load(open(f"{work}/s{p}.json")), "sb") for p in range(1, pairs + 1))
print(f"{1 / f:,.0f} {1 / s:,.0f}")
PY
)
compare "(b') same, both without registered buffers: IOPS" iops 1.00 \
  "--rw randread --bs 4k --direct --engine uring --iodepth 32 --no-register $PIN $ALL_DEVS"
# fio's own t/io_uring (when built beside --fio): one thread, depth 32, the
# same device, polled off, registered buffers, file and ring: its IOPS per
# CPU-second is the reference per-core figure for (b).
TIO=$(dirname "$(command -v "$FIO")")/t/io_uring
if want b && [ -x "$TIO" ]; then
  TIO_OUT=$($TIME -f '%U %S' -o "$WORK/tio.cpu" taskset -c 0 "$TIO" -d32 -s8 -c8 -b4096 -p0 -B1 -F1 -X1 -O1 -R1 -n1 -r "$SECS" "$D0" 2>&1 || true)
  # Its per-second lines, "IOPS=192.62K, BW=..."; the median of them.
  TIO_IOPS=$(grep -o '^IOPS=[0-9.]*[KM]\?' <<<"$TIO_OUT" | cut -d= -f2 | python3 -c 'import sys, statistics
u = {"K": 1e3, "M": 1e6}
v = [float(x[:-1]) * u[x[-1]] if x[-1] in u else float(x) for x in sys.stdin.read().split()]
print(f"{statistics.median(v):.0f}" if v else "")')
  TIO_CPU=$(awk '{print $1 + $2}' "$WORK/tio.cpu" | tail -1)
fi
compare "(c) 1M seq read O_DIRECT, 2 dev: MB/s" mbps 0.98 \
  "--rw read --bs 1m --direct --engine sync $PIN $ALL_DEVS"
compare "(d) 1M seq write O_DIRECT, 2 dev, unique data: MB/s" mbps 0.98 \
  "--rw write --bs 1m --direct --engine sync --allow-destructive $PIN $ALL_DEVS"
# Not stripebench's workload: fio writes one block everywhere (stripebench
# has no such option), to show what unique data costs zram's compressor.
compare "(d') same, fio one block everywhere: MB/s" mbps - \
  "--rw write --bs 1m --direct --engine sync --allow-destructive $PIN $ALL_DEVS" \
  "--refill_buffers=0 --scramble_buffers=0"
# (e) and (f'): issue 25 asks for at least fio's figure (1.00), where
# issues 3 and 11 had asked for 0.98.
compare "(e) 32k seq buffered read, cached file: MB/s" mbps 1.00 \
  "--rw read --bs 32k --buffered --cached --engine sync --cpus 0 $CACHED"

if want e; then
# dd bs=32k on the same cached file, three passes.
DD=()
for _ in 1 2 3; do
  DD+=("$(dd if="$CACHED" of=/dev/null bs=32k 2>&1 | python3 -c 'import sys, re
line = [l for l in sys.stdin if "copied" in l][-1]
b = int(line.split()[0]); s = float(re.search(r"copied, ([0-9.e+-]+) s", line).group(1)); print(b / s / 1e6)')")
done
# (e) was the last workload run, so s1..sN.json hold its stripebench runs.
E_SB=$(python3 - "$WORK" "$PAIRS" <<'PY'
import json, sys, statistics
work, pairs = sys.argv[1], int(sys.argv[2])
v = [json.load(open(f"{work}/s{p}.json"))["total"]["bytes_per_sec"] / 1e6 for p in range(1, pairs + 1)]
print(statistics.median(v))
PY
)
DDM=$(median "${DD[@]}")
fi

# (f) 1M sequential O_DIRECT reads on a loop device over a file on a
# disk-backed file system (the root disk's queue takes 254 segments): where
# a buffer's pages decide whether a read reaches the disk whole. fio with its
# default iomem=malloc, then as --print-fio gives it (--iomem=mmaphuge, the
# 2 MiB pages its `# run first:` line asks reserved for the run and given
# back), against stripebench's default --hugepages auto.
if want f; then
DISKFILE=$(mktemp /var/tmp/sb-bench-disk.XXXXXX)
dd if=/dev/urandom of="$DISKFILE" bs=1M count="$SIZE_MB" status=none
sync
DISKLOOP=$(losetup -f --show --direct-io=on "$DISKFILE")
SDISK="--rw read --bs 1m --direct --engine sync --cpus 0 $DISKLOOP"
echo "disk-backed loop device: $DISKLOOP over $DISKFILE" >&2
# fio's default buffers (iomem=malloc, 4 KiB pages): a later --iomem wins
# over the --iomem=mmaphuge the printed line carries.
compare "(f) 1M seq read O_DIRECT, loop over a disk file, fio --iomem=malloc: MB/s" mbps 1.00 "$SDISK" "--iomem=malloc"
# (f) ran last: s1..sN.json hold its stripebench runs; their device request sizes.
F_REQ=$(python3 - "$WORK" "$PAIRS" <<'PY'
import json, sys, statistics
work, pairs = sys.argv[1], int(sys.argv[2])
r = []
for p in range(1, pairs + 1):
    d = json.load(open(f"{work}/s{p}.json"))
    t = d["targets"][0]
    r.append((t["device"] or {}).get("avg_read_request_bytes") or 0)
    buf = d["workers"][0].get("buffer") or {}
print(f"{statistics.median(r) / 1048576:.3f} MiB (buffer {buf.get('method', '?')})")
PY
)
# fio's buffers in huge pages, as --print-fio gives them (--iomem=mmaphuge).
compare "(f') same, fio as --print-fio gives it (--iomem=mmaphuge): MB/s" mbps 1.00 "$SDISK"
# One read in flight: the disk's time is the same for both tools, and what
# is each tool's is its time between I/Os (per I/O, less the mean latency).
REUSE=1 compare "(f') same: each tool's own seconds between I/Os" own_per_io - -
fi

# (g), (h): many targets, one worker each, on 2 CPUs: the per-disk-worker
# model at seed 004's scale. Each a zram device filled with random data.
# many N MB: N more zram devices of MB MiB, their paths in MANYDEVS.
many() {
  local n=$1 mb=$2 z i
  MANYDEVS=()
  for ((i = 0; i < n; i++)); do
    z=$(cat /sys/class/zram-control/hot_add)
    MANY+=("$z")
    echo "${mb}M" >"/sys/block/zram$z/disksize"
    head -c "$((mb << 20))" /dev/urandom >"/dev/zram$z"
    MANYDEVS+=("/dev/zram$z")
  done
}
for spec in "g 64 32" "h 256 8"; do
  read -r L N MB <<<"$spec"
  want "$L" || continue
  [ -w /sys/class/zram-control/hot_add ] || { echo "($L) skipped: no zram" >&2; continue; }
  echo "($L) making $N zram devices of $MB MiB" >&2
  many "$N" "$MB"
  MD="${MANYDEVS[*]}"
  compare "($L) 1M seq read O_DIRECT, $N zram, 1 worker each: MB/s" mbps 1.00 \
    "--rw read --bs 1m --direct --engine sync $MD"
  compare "($L) 4k randread O_DIRECT, $N zram, 1 worker each: IOPS" iops 1.00 \
    "--rw randread --bs 4k --direct --engine sync $MD"
  REUSE=1 CMP=le compare "($L) same: user+system CPU seconds per I/O" cpu_per_io 1.0 -
  for z in "${MANY[@]}"; do
    echo 1 >"/sys/block/zram$z/reset" 2>/dev/null
    echo "$z" >/sys/class/zram-control/hot_remove 2>/dev/null
  done
  MANY=()
done

# (i) 4k random 70/30 reads and writes at depth 16: each direction's IOPS
# from both tools' own split.
compare "(i) 4k randrw 70/30 io_uring qd16, 2 dev: read IOPS" read_iops 1.00 \
  "--rw randrw --mix 70 --bs 4k --direct --engine uring --iodepth 16 --allow-destructive $PIN $ALL_DEVS"
REUSE=1 compare "(i) same: write IOPS" write_iops 1.00 -

# (j) uncached buffered reads (RWF_DONTCACHE: Linux 6.14, a file system that
# takes it: ext4, not tmpfs) of a file on ext4 over a zram device.
if want j; then
  FIO_VER=$("$FIO" --version | sed 's/^fio-//')
  if python3 -c 'import sys; v=[int(x) for x in sys.argv[1].split("-")[0].split(".")[:2]]; sys.exit(0 if v >= [3, 40] else 1)' "$FIO_VER"; then
    z=$(cat /sys/class/zram-control/hot_add)
    MANY+=("$z")
    echo "$((SIZE_MB + 256))M" >"/sys/block/zram$z/disksize"
    mkfs.ext4 -q "/dev/zram$z"
    FSMNT=$WORK/fs
    mkdir -p "$FSMNT"
    mount "/dev/zram$z" "$FSMNT"
    head -c "$((SIZE_MB << 20))" /dev/urandom >"$FSMNT/u.dat"
    sync
    compare "(j) 1M seq read uncached (RWF_DONTCACHE), ext4/zram: MB/s" mbps 1.00 \
      "--rw read --bs 1m --uncached --engine sync --cpus 0 $FSMNT/u.dat"
    REUSE=1 compare "(j) same: each tool's own seconds between I/Os" own_per_io - -
  else
    echo "(j) skipped: fio $FIO_VER has no uncached=1 (3.40+): build fio from source and give --fio" >&2
    printf '%-52s %s\n' "(j) uncached buffered read" "skipped: fio $FIO_VER lacks uncached=1 (needs 3.40+; --fio PATH)" >>"$ROWS"
  fi
fi

# (k) seed 003's method: dd against `run --cached --buffered`, the same
# cached file, both on CPU 0, alternating dd / stripebench. dd's figure is
# its own (bytes over the seconds it reports, which leave its start-up
# out), over as many whole passes of the file as fill the window.
dd_rate() {
  python3 - "$CACHED" "$1" "$SECS" <<'PY'
import re, subprocess, sys, time
path, bs, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
total_b = total_s = 0.0
end = time.monotonic() + secs
while time.monotonic() < end or total_s == 0:
    out = subprocess.run(["taskset", "-c", "0", "dd", f"if={path}", "of=/dev/null", f"bs={bs.upper()}"],
                         capture_output=True, text=True, check=True).stderr
    line = [l for l in out.splitlines() if "copied" in l][-1]
    total_b += int(line.split()[0])
    total_s += float(re.search(r"copied, ([0-9.e+-]+) s", line).group(1))
print(total_b / total_s / 1e6)
PY
}
if want k; then
  # The workloads before may have pushed the file out of the page cache
  # (zram devices take memory): it is read back in first.
  cat "$CACHED" >/dev/null
  for bs in 8k 32k 1m; do
    dr=() sr=() kr=()
    for ((p = 1; p <= PAIRS; p++)); do
      dv=$(dd_rate "$bs")
      run_sb "$WORK/k$p" --rw read --bs "$bs" --buffered --cached --engine sync --cpus 0 "$CACHED"
      sv=$(metric "$WORK/k$p.json" sb mbps)
      dr+=("$dv"); sr+=("$sv"); kr+=("$(ratio "$sv" "$dv")")
    done
    fr=("${dr[@]}") rr=("${kr[@]}") frss=0 srss=$(cat "$WORK/k$PAIRS.rss")
    row "(k) seed 003: $bs buffered read, cached file: MB/s (vs dd)" 1.00
  done
fi

echo
echo "stripebench vs fio, $(date -u +%Y-%m-%d), kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, $("$FIO" --version)"
echo "devices: ${DEVS[*]}: $KIND; ${SECS}s windows after a 1s ramp; $PAIRS A/B pairs per workload, fio first"
echo "ratio = stripebench / fio per pair; the figure columns are medians; 'target' is issue #3's goal"
printf '%-52s %14s %14s %8s  %-22s %-8s %8s %8s\n' workload fio stripebench ratio "per-pair ratios" "target" "fio RSS" "sb RSS"
cat "$ROWS"
if want e; then
  printf '(e) dd bs=32k, same cached file, 3 passes: %s MB/s median; stripebench/dd = %s\n' "$(fmt "$DDM")" "$(ratio "$E_SB" "$DDM")"
fi
if want f; then
  printf '(f) stripebench average device request (median over pairs): %s, for --bs 1 MiB\n' "$F_REQ"
fi
if want b; then
  read -r FIO_PC SB_PC <<<"$B_CPU"
  printf '(b) IOPS per CPU-second (per core): fio %s, stripebench %s' "$FIO_PC" "$SB_PC"
  if [ -n "${TIO_IOPS:-}" ]; then
    printf '; fio t/io_uring (1 thread, same device) %s IOPS on %s CPU-seconds per second = %s per core' "$TIO_IOPS" \
      "$(python3 -c 'import sys; print(f"{float(sys.argv[1]) / float(sys.argv[2]):.2f}")' "$TIO_CPU" "$SECS")" \
      "$(python3 -c 'import sys; print(f"{float(sys.argv[1]) * float(sys.argv[3]) / float(sys.argv[2]):,.0f}")' "$TIO_IOPS" "$TIO_CPU" "$SECS")"
  fi
  echo
fi
echo "(k): the fio column is dd's MB/s (dd bs=BS, whole passes, on CPU 0); 'fio RSS' is not measured there"
