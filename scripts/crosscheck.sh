#!/usr/bin/env bash
# Benchmark, not a test: does a stripebench figure agree with what fio and dd
# measure of the same workload on the same device? For each workload and
# device it runs stripebench, then the fio command `run --print-fio` prints
# for the same options (its `# run first:` lines done first and undone
# after), then dd where dd can do the workload, alternating A B C A B C
# --runs times, and prints each tool's figure and the ratios stripebench/fio
# and stripebench/dd: the median and the 95% interval of the per-run ratios.
# A ratio whose interval leaves 0.90-1.10 is named with its reason when one
# is known (dd's buffers are 4 KiB pages; dd cannot read at random offsets),
# else marked "NOT EXPLAINED".
#
#   sudo scripts/crosscheck.sh [--runs N] [--seconds S] [--size-mb MB] [--sb PATH]
#
# Devices: a loop device over a file on the disk that holds /var/tmp
# (--direct-io=on, filled with random data), and a zram device filled with
# random data. Both are made here and removed on every exit path; nothing
# else is touched. Workloads: sequential 1 MiB and random 4 KiB reads, each
# O_DIRECT and buffered (the page cache emptied before each run: stripebench
# and fio evict the target's pages themselves, dd's device is flushed with
# blockdev --flushbufs).
set -euo pipefail

RUNS=3
SECS=4
SIZE_MB=512
SB=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    --size-mb) SIZE_MB=$2; shift 2 ;;
    --sb) SB=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "crosscheck.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "crosscheck.sh: run as root (loop and zram devices, huge pages)" >&2; exit 2; }
for t in fio dd losetup python3 blockdev; do
  command -v "$t" >/dev/null || { echo "crosscheck.sh: $t is missing" >&2; exit 2; }
done
cd "$(dirname "$0")/.."
if [ -z "$SB" ]; then
  cargo build --release -q
  SB=target/release/stripebench
fi

WORK=$(mktemp -d /var/tmp/crosscheck.XXXXXX)
LOOP=""
ZRAM=""
OLD_HUGE=$(cat /proc/sys/vm/nr_hugepages)
cleanup() {
  echo "$OLD_HUGE" > /proc/sys/vm/nr_hugepages || true
  [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null || true
  if [ -n "$ZRAM" ]; then
    n=${ZRAM#/dev/zram}
    echo 1 > "/sys/block/zram$n/reset" 2>/dev/null || true
    echo "$n" > /sys/class/zram-control/hot_remove 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "crosscheck: making the devices ($SIZE_MB MiB each, random data)" >&2
head -c "${SIZE_MB}M" /dev/urandom > "$WORK/disk.img"
LOOP=$(losetup -f --show --direct-io=on "$WORK/disk.img")
if [ -e /sys/class/zram-control/hot_add ]; then
  n=$(cat /sys/class/zram-control/hot_add)
  ZRAM=/dev/zram$n
  echo "${SIZE_MB}M" > "/sys/block/zram$n/disksize"
  dd if="$WORK/disk.img" of="$ZRAM" bs=1M oflag=direct status=none
fi

# One figure: bytes per second, from each tool's own report.
sb_rate() { # DEV ARGS...
  local dev=$1; shift
  "$SB" run --no-progress -t "${SECS}s" --ramp 1s "$@" --json "$WORK/sb.json" "$dev" >/dev/null
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total"]["bytes_per_sec"])' "$WORK/sb.json"
}
fio_rate() { # DEV ARGS...
  local dev=$1; shift
  local text line
  text=$("$SB" run --print-fio -t "${SECS}s" --ramp 1s "$@" "$dev")
  echo "$OLD_HUGE" > /proc/sys/vm/nr_hugepages
  # The `# run first:` lines, as printed (only sysctl is expected there).
  while IFS= read -r l; do
    cmd=${l#\# run first: }
    cmd=${cmd%%#*}
    cmd=${cmd%"${cmd##*[![:space:]]}"}
    case "$cmd" in
      "sysctl -w vm.nr_hugepages="*) echo "${cmd#sysctl -w vm.nr_hugepages=}" > /proc/sys/vm/nr_hugepages ;;
      *) echo "crosscheck: unexpected setup line: $l" >&2; exit 1 ;;
    esac
  done < <(printf '%s\n' "$text" | grep '^# run first: ' || true)
  line=$(printf '%s\n' "$text" | grep '^fio ')
  sh -c "$line --output-format=json" > "$WORK/fio.json"
  echo "$OLD_HUGE" > /proc/sys/vm/nr_hugepages
  python3 - "$WORK/fio.json" <<'EOF'
import json, sys
s = open(sys.argv[1]).read()
d = json.loads(s[s.index("{"):])
bad = [j["jobname"] for j in d["jobs"] if j["error"]]
if bad:
    sys.exit(f"crosscheck: fio failed in {bad}: {s[:s.index('{')].strip()}")
print(sum(j["read"]["bw_bytes"] + j["write"]["bw_bytes"] for j in d["jobs"]))
EOF
}
dd_rate() { # DEV direct|buffered
  local dev=$1 mode=$2 flag=""
  [ "$mode" = direct ] && flag="iflag=direct"
  blockdev --flushbufs "$dev"
  # shellcheck disable=SC2086
  LC_ALL=C dd if="$dev" of=/dev/null bs=1M $flag 2>&1 | python3 -c '
import re, sys
m = re.search(r"(\d+) bytes .* copied, ([0-9.]+) s", sys.stdin.read())
print(int(m.group(1)) / float(m.group(2)))'
}

printf '%-10s %-16s %10s %10s %10s  %-26s %-26s\n' device workload "sb MB/s" "fio MB/s" "dd MB/s" "sb/fio (95%)" "sb/dd (95%)"
for dev in "$LOOP" $ZRAM; do
  name=$(basename "$dev")
  segs=$(cat "/sys/block/$name/queue/max_segments")
  maxkb=$(cat "/sys/block/$name/queue/max_sectors_kb")
  for w in seq1m-direct rand4k-direct seq1m-buffered rand4k-buffered; do
    case $w in
      seq1m-direct) args=(--bs 1m); ddmode=direct ;;
      rand4k-direct) args=(--rw randread --bs 4k); ddmode="" ;;
      seq1m-buffered) args=(--buffered --bs 1m); ddmode=buffered ;;
      rand4k-buffered) args=(--buffered --rw randread --bs 4k); ddmode="" ;;
    esac
    sbs=(); fios=(); dds=()
    for _ in $(seq "$RUNS"); do
      sbs+=("$(sb_rate "$dev" "${args[@]}")")
      fios+=("$(fio_rate "$dev" "${args[@]}")")
      [ -n "$ddmode" ] && dds+=("$(dd_rate "$dev" "$ddmode")")
    done
    python3 - "$name" "$w" "$segs" "$maxkb" "${sbs[*]}" "${fios[*]}" "${dds[*]:-}" <<'EOF'
import statistics, sys
name, w, segs, maxkb = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sb = [float(x) for x in sys.argv[5].split()]
fio = [float(x) for x in sys.argv[6].split()]
dd = [float(x) for x in sys.argv[7].split()] if sys.argv[7].strip() else []
# What one request carries at most, whatever the buffer.
piece = min(1 << 20, maxkb << 10)
T = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}
def interval(r):
    m = statistics.mean(r)
    if len(r) < 2:
        return m, m, m
    h = T.get(len(r), 2.0) * statistics.stdev(r) / len(r) ** 0.5
    return statistics.median(r), m - h, m + h
def cell(ratios, why):
    if not ratios:
        return "-", why
    med, lo, hi = interval(ratios)
    text = f"{med:.3f} [{lo:.3f}, {hi:.3f}]"
    ok = 0.90 <= lo and hi <= 1.10
    return text, "" if ok else why or "NOT EXPLAINED"
dd_why = ""
if not dd:
    dd_why = "dd reads only sequentially"
elif w == "seq1m-direct" and segs * 4096 < piece:
    dd_why = f"dd's buffer is 4 KiB pages: max_segments {segs} splits each 1 MiB read into {segs * 4096 >> 10} KiB requests; ours are huge pages and go in {piece >> 10} KiB ones"
a, why_f = cell([s / f for s, f in zip(sb, fio)], "")
b, why_d = cell([s / d for s, d in zip(sb, dd)], dd_why)
med = lambda v: f"{statistics.median(v) / 1e6:.1f}" if v else "-"
print(f"{name:<10} {w:<16} {med(sb):>10} {med(fio):>10} {med(dd):>10}  {a:<26} {b:<26}")
for who, why in (("fio", why_f), ("dd", why_d)):
    if why:
        print(f"{'':<10} {'':<16} sb/{who}: {why}")
EOF
  done
done
