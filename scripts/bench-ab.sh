#!/usr/bin/env bash
# Benchmark, not a test: does a change cost throughput? Runs the same
# `stripebench run` workload with two builds, alternating A B A B for
# --pairs pairs on a zram device made here (filled with random data, so
# every read returns data; removed on every exit path), and prints each
# pair's ratio B/A of the figure (MB/s, or IOPS with --iops) and the mean
# with its 95% interval (Student's t over the pairs). An interval that
# holds 1.00 is "no measurable difference" at this many pairs. --cpu
# compares the CPU seconds (user + system, the workers' own over the
# window) per I/O instead: B/A above 1.00 is B costing more per I/O.
#
#   sudo scripts/bench-ab.sh [--pairs N] [--seconds S] [--size-mb MB] [--iops|--cpu] A_BIN B_BIN -- RUN_OPTIONS...
#
# Example (the zero-read sampling, issue 39 item 2, against its parent):
#   sudo scripts/bench-ab.sh /tmp/before/stripebench target/release/stripebench -- --bs 4k --rw randread --iodepth 32
set -euo pipefail

PAIRS=5
SECS=4
SIZE_MB=512
FIG=bytes_per_sec
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) PAIRS=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    --size-mb) SIZE_MB=$2; shift 2 ;;
    --iops) FIG=iops; shift ;;
    --cpu) FIG=cpu_per_io; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    --) shift; break ;;
    -*) echo "bench-ab.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) if [ -z "${A:-}" ]; then A=$1; elif [ -z "${B:-}" ]; then B=$1; else
         echo "bench-ab.sh: give two builds, then -- and the run options" >&2; exit 2; fi; shift ;;
  esac
done
[ -n "${A:-}" ] && [ -n "${B:-}" ] || { echo "bench-ab.sh: give two builds, then -- and the run options (see --help)" >&2; exit 2; }
[ -x "$A" ] && [ -x "$B" ] || { echo "bench-ab.sh: $A or $B is not an executable" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench-ab.sh: run as root (a zram device)" >&2; exit 2; }
[ -e /sys/class/zram-control/hot_add ] || { echo "bench-ab.sh: no zram (modprobe zram)" >&2; exit 2; }

WORK=$(mktemp -d)
ZRAM=""
cleanup() {
  if [ -n "$ZRAM" ]; then
    echo 1 > "/sys/block/zram$ZRAM/reset" 2>/dev/null || true
    echo "$ZRAM" > /sys/class/zram-control/hot_remove 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ZRAM=$(cat /sys/class/zram-control/hot_add)
echo "${SIZE_MB}M" > "/sys/block/zram$ZRAM/disksize"
head -c "${SIZE_MB}M" /dev/urandom | dd of="/dev/zram$ZRAM" bs=1M oflag=direct status=none

run_one() { # BIN
  local bin=$1
  rm -f "$WORK/r.json"
  "$bin" run --no-progress -t "${SECS}s" --ramp 1s "${OPTS[@]}" --json "$WORK/r.json" "/dev/zram$ZRAM" >/dev/null
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
if sys.argv[2] == "cpu_per_io":
    w = d["workers"]
    print(sum(x["cpu_usr_sec"] + x["cpu_sys_sec"] for x in w) / max(1, sum(x["ios"] for x in w)))
else:
    print(d["total"][sys.argv[2]])' "$WORK/r.json" "$FIG"
}
OPTS=("$@")
as=(); bs=()
for i in $(seq "$PAIRS"); do
  as+=("$(run_one "$A")")
  bs+=("$(run_one "$B")")
  echo "pair $i: A ${as[-1]} B ${bs[-1]}" >&2
done
python3 - "$FIG" "${as[*]}" "${bs[*]}" "${OPTS[*]}" <<'EOF'
import statistics, sys
fig, a, b, opts = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()], sys.argv[4]
r = [y / x for x, y in zip(a, b)]
T = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}
m = statistics.mean(r)
h = T.get(len(r), 2.0) * statistics.stdev(r) / len(r) ** 0.5 if len(r) > 1 else 0.0
unit = {"bytes_per_sec": "MB/s", "iops": "IOPS", "cpu_per_io": "us CPU per I/O"}[fig]
scale = {"bytes_per_sec": 1e6, "iops": 1.0, "cpu_per_io": 1e-6}[fig]
print(f"workload: run {opts}")
print(f"A median {statistics.median(a) / scale:.1f} {unit}, B median {statistics.median(b) / scale:.1f} {unit}")
print("pairs B/A: " + " ".join(f"{x:.4f}" for x in r))
print(f"B/A mean {m:.4f}, 95% interval [{m - h:.4f}, {m + h:.4f}] over {len(r)} pairs: "
      + ("no measurable difference" if m - h <= 1.0 <= m + h else
         (("B costlier" if m - h > 1.0 else "B cheaper") if fig == "cpu_per_io" else ("B faster" if m - h > 1.0 else "B slower"))))
EOF
