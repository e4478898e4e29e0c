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
# Where the median agrees but the runs vary too much for the interval to
# settle it, the line says so with each tool's run-to-run spread; where the
# device's mean latency agrees (one job, one I/O in flight) but the rates
# differ, it gives each tool's own time between I/Os (time per I/O less the
# I/O's latency), which then decides the row when the gaps carry a
# quarter or more of the difference in time per I/O. Where the runs'
# interval holds 1.00 the row is noise, whatever its median. For the
# sequential rows stripebench also runs with 4 KiB-page buffers (--hugepages off), dd's
# kind: when that agrees with dd (the median of its per-run ratios to dd
# within 10%), the buffers are the stated reason, else its figure and
# interval follow "NOT EXPLAINED". For random buffered reads the
# tools' device counters say how many reads reached the device: when under
# half did for both, the row compares their cost per cached read.
# Anything else is marked "NOT EXPLAINED". dd reads the device whole, pass after pass (cache flushed
# before each), until --seconds have gone by.
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
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
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
  # zram keeps no I/O statistics unless asked (queue/iostats 0): with
  # them, each tool's share of reads that reached the device is known, as
  # for the loop device (a random buffered read's cache share).
  echo 1 > "/sys/block/zram$n/queue/iostats"
  dd if="$WORK/disk.img" of="$ZRAM" bs=1M oflag=direct status=none
fi

# One figure: bytes per second, from each tool's own report.
sb_rate() { # DEV ARGS...
  local dev=$1; shift
  "$SB" run --no-progress -t "${SECS}s" --ramp 1s "$@" --json "$WORK/sb.json" "$dev" >/dev/null
  # rate,IOPS,mean latency in ns: the latency lets the table say how long
  # each tool spent between I/Os.
  # and the share of its reads that reached the device (its counters over
  # the window), which a random buffered read's re-reads of cached pages lower.
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t=d["total"]; dv=d["targets"][0].get("device") or {}; print("%s,%s,%s,%s" % (t["bytes_per_sec"], t["iops"], t["latency_ns"]["mean"], "" if dv.get("read_ratio") is None else dv["read_ratio"]))' "$WORK/sb.json"
}
# reserve N: N huge pages reserved, as the printed line asks. The kernel
# grants fewer when its memory is fragmented (right after many zram
# devices went, say), and fio then fails to map its buffers: memory is
# compacted and the reservation tried again, and a shortfall ends the run.
reserve() {
  echo "$1" > /proc/sys/vm/nr_hugepages
  if [ "$(cat /proc/sys/vm/nr_hugepages)" -lt "$1" ]; then
    echo 1 > /proc/sys/vm/compact_memory
    echo "$1" > /proc/sys/vm/nr_hugepages
  fi
  [ "$(cat /proc/sys/vm/nr_hugepages)" -ge "$1" ] || {
    echo "crosscheck: the kernel reserved $(cat /proc/sys/vm/nr_hugepages) of the $1 huge pages fio's line needs (memory too fragmented): try again later" >&2
    exit 1
  }
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
      "sysctl -w vm.nr_hugepages="*) reserve "${cmd#sysctl -w vm.nr_hugepages=}" ;;
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
js = d["jobs"]
iops = sum(j["read"]["iops"] + j["write"]["iops"] for j in js)
ios = sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in js)
lat = sum(j[k]["lat_ns"]["mean"] * j[k]["total_ios"] for j in js for k in ("read", "write")) / max(ios, 1)
# The share of reads that reached the device, about: fio's disk_util counts
# the ramp's reads too, so its reads are scaled from the window to the
# elapsed time (ramp included) at the window's rate.
disk = sum(u.get("read_ios", 0) for u in d.get("disk_util", []))
reads = sum(j["read"]["total_ios"] * j["elapsed"] * 1000.0 / max(j["read"]["runtime"], 1) for j in js)
share = disk / reads if disk and reads else ""
print("%s,%s,%s,%s" % (sum(j["read"]["bw_bytes"] + j["write"]["bw_bytes"] for j in js), iops, lat, share))
EOF
}
dd_rate() { # DEV direct|buffered
  # Whole passes of the device, each from a flushed cache, until --seconds
  # have gone by: one pass of a fast 512 MiB device is a tenth of a second,
  # too short a window to compare with the others' --seconds.
  local dev=$1 mode=$2 flag="" bytes=0 secs=0 out passes=""
  [ "$mode" = direct ] && flag="iflag=direct"
  while python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)' "$secs" "$SECS"; do
    blockdev --flushbufs "$dev"
    # shellcheck disable=SC2086
    # On CPU 0, where stripebench's one worker and fio's one job run: an
    # unpinned dd shares a CPU with the loop device's own worker at times.
    out=$(LC_ALL=C taskset -c 0 dd if="$dev" of=/dev/null bs=1M $flag 2>&1 | python3 -c '
import re, sys
m = re.search(r"(\d+) bytes .* copied, ([0-9.]+) s", sys.stdin.read())
print(m.group(1), m.group(2))')
    read -r b t <<<"$out"
    bytes=$((bytes + b))
    passes="$passes $b/$t"
    secs=$(python3 -c 'import sys; print(float(sys.argv[1]) + float(sys.argv[2]))' "$secs" "$t")
  done
  # The rate, then the slowest and fastest pass (MB/s): a device whose
  # passes from a flushed cache differ by more than the tools do says so.
  python3 -c 'import sys
p = [int(b) / float(t) for b, t in (x.split("/") for x in sys.argv[3].split())]
print("%s,,,,%s,%s" % (int(sys.argv[1]) / float(sys.argv[2]), min(p), max(p)))' "$bytes" "$secs" "$passes"
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
    sbs=(); fios=(); dds=(); small=()
    for _ in $(seq "$RUNS"); do
      sbs+=("$(sb_rate "$dev" "${args[@]}")")
      fios+=("$(fio_rate "$dev" "${args[@]}")")
      if [ -n "$ddmode" ]; then
        dds+=("$(dd_rate "$dev" "$ddmode")")
        # stripebench with dd's kind of buffer (4 KiB pages): whether the
        # buffers are what sets it apart from dd.
        small+=("$(sb_rate "$dev" "${args[@]}" --hugepages off)")
      fi
    done
    python3 - "$name" "$w" "$segs" "$maxkb" "${sbs[*]}" "${fios[*]}" "${dds[*]:-}" "${small[*]:-}" <<'EOF'
import statistics, sys
name, w, segs, maxkb = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def runs(arg):
    """Each run's (rate, IOPS, mean latency ns, share of reads that reached
    the device); all but the rate None for dd."""
    out = []
    for x in arg.split():
        r, i, l, s = (x.split(",") + ["", "", ""])[:4]
        out.append((float(r), float(i) if i else None, float(l) if l else None, float(s) if s else None))
    return out
def pass_spread(arg):
    """dd's slowest and fastest pass over all its runs (MB/s), or None."""
    lo, hi = [], []
    for x in arg.split():
        f = x.split(",")
        if len(f) >= 6 and f[4] and f[5]:
            lo.append(float(f[4]))
            hi.append(float(f[5]))
    return (min(lo), max(hi)) if lo else None
sbr, fior, ddr = runs(sys.argv[5]), runs(sys.argv[6]), runs(sys.argv[7]) if sys.argv[7].strip() else []
sb, fio, dd = [r[0] for r in sbr], [r[0] for r in fior], [r[0] for r in ddr]
# What one request carries at most, whatever the buffer.
piece = min(1 << 20, maxkb << 10)
T = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}
def interval(r):
    m = statistics.mean(r)
    if len(r) < 2:
        return m, m, m
    h = T.get(len(r), 2.0) * statistics.stdev(r) / len(r) ** 0.5
    return statistics.median(r), m - h, m + h
def cv(v):
    return 100 * statistics.stdev(v) / statistics.mean(v) if len(v) > 1 else 0.0
def gap_us(rs):
    """The tool's own time between I/Os: the time per I/O (one job, one in
    flight) less the I/O's mean latency, in microseconds."""
    g = [1e6 / i - l / 1e3 for _, i, l, _ in rs if i and l is not None]
    return statistics.median(g) if g else None
def lat_us(rs):
    v = [l / 1e3 for _, _, l, _ in rs if l is not None]
    return statistics.median(v) if v else None
def cell(ratios, why, other):
    if not ratios:
        return "-", why
    med, lo, hi = interval(ratios)
    text = f"{med:.3f} [{lo:.3f}, {hi:.3f}]"
    if 0.90 <= lo and hi <= 1.10:
        return text, ""
    if why:
        return text, why
    if lo <= 1.0 <= hi and not 0.90 <= med <= 1.10:
        # The runs cannot tell the tools apart: the interval holds 1.
        return text, (f"noise: {len(ratios)} runs give an interval that holds 1.00"
                      f" (run-to-run spread: stripebench {cv(sb):.0f}%,"
                      f" {other} {cv(fio if other == 'fio' else dd):.0f}%); more --runs narrow it")
    if 0.90 <= med <= 1.10:
        # The median agrees; the interval is as wide as the runs vary.
        return text, (f"noise: the median is within 10% but {len(ratios)} runs give an interval"
                      f" wider than 0.90-1.10 (run-to-run spread: stripebench {cv(sb):.0f}%,"
                      f" {other} {cv(fio if other == 'fio' else dd):.0f}%); more --runs narrow it")
    return text, "NOT EXPLAINED"
small = [r[0] for r in runs(sys.argv[8])] if sys.argv[8].strip() else []
dd_why = ""
# What was measured when no reason fits, printed after NOT EXPLAINED.
dd_unexplained = ""
if not dd:
    dd_why = "dd reads only sequentially"
elif w == "seq1m-direct" and segs * 4096 < piece:
    dd_why = f"dd's buffer is 4 KiB pages: max_segments {segs} splits each 1 MiB read into {segs * 4096 >> 10} KiB requests; ours are huge pages and go in {piece >> 10} KiB ones"
elif (sp := pass_spread(sys.argv[7])) and sp[1] > 2 * sp[0]:
    # The device itself: one pass from a flushed cache against another,
    # the same tool, the same command.
    dd_why = (f"the device: dd's own passes from a flushed cache ran from {sp[0] / 1e6:.0f} to {sp[1] / 1e6:.0f} MB/s"
              f" (x{sp[1] / sp[0]:.1f}), more than the tools differ; a pass's speed is the device's and the page cache's state,"
              f" not the tool's: compare over more --runs, or read the device O_DIRECT")
elif small and len(small) == len(dd):
    # The same reads with dd's kind of buffer, run by run: where the
    # median of their ratios to dd is within 10%, the buffers are the
    # difference; else the line gives the figure and its interval, and
    # leaves the rest unexplained.
    smed, slo, shi = interval([s / d for s, d in zip(small, dd)])
    seen = (f"with 4 KiB pages (--hugepages off) stripebench reads {statistics.median(small) / 1e6:.1f} MB/s,"
            f" {smed:.3f} [{slo:.3f}, {shi:.3f}] of dd")
    if 0.90 <= smed <= 1.10:
        dd_why = f"buffers: dd's are 4 KiB pages, ours huge pages; {seen}"
    else:
        dd_unexplained = seen
# Where the device answered alike (mean latency within 10%) but the rates
# differ, what differs is each tool's own time between I/Os.
fio_why = ""
ls, lf, gs, gf = lat_us(sbr), lat_us(fior), gap_us(sbr), gap_us(fior)
# The gaps must carry a fair part (a quarter or more) of the difference in
# time per I/O: where the latencies differ by more than the gaps do, the
# device (or the cache) answered the tools differently, not their own cost.
if (ls and lf and gs is not None and gf is not None and abs(ls / lf - 1) <= 0.10
        and abs(gf - gs) >= 0.25 * abs((lf + gf) - (ls + gs))):
    fio_why = (f"the device answered alike (mean latency stripebench {ls:.1f} us, fio {lf:.1f} us);"
               f" between I/Os stripebench spends {gs:.2f} us, fio {gf:.2f} us: the tools' own cost per I/O decides this row")
def share(rs):
    v = [s for *_, s in rs if s is not None]
    return statistics.median(v) if v else None
# A random buffered read re-reads pages it cached earlier in the window:
# the faster tool finds more of them cached, and its figure is partly
# memory's. The share of reads that reached the device says how much.
cache_why = ""
ss, fs = share(sbr), share(fior)
def per_io_us(rs):
    v = [1e6 / i for _, i, _, _ in rs if i]
    return statistics.median(v) if v else None
if w == "rand4k-buffered" and ss is not None and fs is not None:
    ps, pf = per_io_us(sbr), per_io_us(fior)
    if ss < 0.5 and fs < 0.5 and ps and pf:
        # Mostly memory for both: the row compares the tools' cost of a
        # read the page cache answers (a system call and a 4 KiB copy
        # plus the tool's own work), not the device.
        cache_why = (f"memory, not the device: only {100 * ss:.0f}% of stripebench's reads and about {100 * fs:.0f}% of fio's"
                     f" reached the device (the rest were pages cached earlier in the window); a read took"
                     f" {ps:.2f} us in stripebench, {pf:.2f} us in fio: the tools' cost per cached read decides this row")
    elif (ss < fs) == (statistics.median(sb) > statistics.median(fio)) and abs(ss - fs) >= 0.05:
        cache_why = (f"the page cache: a random buffered read re-reads pages cached earlier in the window;"
                     f" {100 * ss:.0f}% of stripebench's reads reached the device, about {100 * fs:.0f}% of fio's"
                     f" (disk_util, ramp included): the tool that reads faster finds more in memory")
a, why_f = cell([s / f for s, f in zip(sb, fio)], "", "fio")
if why_f == "NOT EXPLAINED" and fio_why:
    why_f = fio_why
elif why_f == "NOT EXPLAINED" and cache_why:
    why_f = cache_why
b, why_d = cell([s / d for s, d in zip(sb, dd)], dd_why, "dd")
if why_d == "NOT EXPLAINED" and dd_unexplained:
    why_d = f"NOT EXPLAINED ({dd_unexplained})"
med = lambda v: f"{statistics.median(v) / 1e6:.1f}" if v else "-"
print(f"{name:<10} {w:<16} {med(sb):>10} {med(fio):>10} {med(dd):>10}  {a:<26} {b:<26}")
for who, why in (("fio", why_f), ("dd", why_d)):
    if why:
        print(f"{'':<10} {'':<16} sb/{who}: {why}")
EOF
  done
done
