#!/usr/bin/env bash
# Start-up time and memory per worker of one run over N loop devices
# (issue 23, item 8: 256 and 1024 targets).
#
#   scripts/bench-scale.sh N [SECONDS] [BS]     (root; defaults: 2 s, 4k)
#
# Creates N loop devices over small files in a temporary directory (through
# scripts/testbed.sh, which records exactly the devices it attached), runs
# `stripebench run` over all of them for SECONDS under /usr/bin/time -v,
# and prints:
#   startup_sec      wall time before the first I/O, as the process's
#                    elapsed time less the run's ramp, window and final
#                    flush from its JSON (the document records no start-up
#                    time of its own; teardown is in it too, so an upper bound)
#   peak_rss_kib     the process's peak RSS
#   rss_per_worker_kib  (peak RSS - the I/O buffers, bs x iodepth per
#                    worker) / workers: what a worker costs beyond its buffers
# The devices and files are removed on every exit path (trap). Figures from
# a shared or busy machine are noise: run it on a quiet one.
set -euo pipefail

die() { echo "bench-scale.sh: $*" >&2; exit 2; }

n=${1:-}
secs=${2:-2}
bs=${3:-4k}
[[ "$n" =~ ^[1-9][0-9]*$ ]] || die "usage: $0 N [SECONDS] [BS]"
[ "$(id -u)" = 0 ] || die "needs root to attach loop devices"
[ -x /usr/bin/time ] || die "needs /usr/bin/time (GNU time) for the peak RSS"
command -v jq >/dev/null || die "needs jq"

here=$(cd "$(dirname "$0")" && pwd)
sb=${STRIPEBENCH:-$here/../target/release/stripebench}
[ -x "$sb" ] || sb=$here/../target/debug/stripebench
[ -x "$sb" ] || die "no stripebench binary: cargo build --release first (or set STRIPEBENCH)"

work=$(mktemp -d)
cleanup() {
  bash "$here/testbed.sh" down "$work/bed" || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# Each loop device's node is a file descriptor of the run: N + a few.
need=$((n + 64))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$need" ]; then
  ulimit -n "$need" 2>/dev/null || die "needs $need open files (ulimit -n is $(ulimit -n), hard $(ulimit -Hn))"
fi

bash "$here/testbed.sh" up "$work/bed" "$n" 1 >"$work/devices"
mapfile -t devices <"$work/devices"
[ "${#devices[@]}" = "$n" ] || die "attached ${#devices[@]} of $n loop devices"

/usr/bin/time -v -o "$work/time" "$sb" run --json "$work/run.json" --bs "$bs" -t "${secs}s" \
  "${devices[@]}" >"$work/table" 2>"$work/stderr" || {
  cat "$work/stderr" >&2
  die "the run failed"
}

elapsed=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$work/time")
rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time")
jq -r --argjson elapsed "$elapsed" --argjson rss "$rss" '
  (.workers | length) as $w
  | ([.workers[].buffer.bytes // 0] | add // 0) as $buffers
  | (.window.seconds + .window.ramp_sec + ([.targets[].flush.seconds // 0] | max // 0)) as $measured
  | "targets \(.targets | length)\nworkers \($w)\nstartup_sec \(($elapsed - $measured) * 1000 | round / 1000)\npeak_rss_kib \($rss)\nrss_per_worker_kib \((($rss - $buffers / 1024) / $w) * 10 | round / 10)"
' "$work/run.json"
