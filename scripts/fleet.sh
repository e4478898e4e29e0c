#!/usr/bin/env bash
# Run stripebench on many hosts at once with existing launchers (no daemon),
# collect each host's JSON document, and merge them into one fleet document.
#
#   scripts/fleet.sh [--launcher auto|ssh|pdsh|clush|local] [--delay SECONDS]
#                    [--out DIR] [--bin PATH] HOSTFILE -- RUN_OPTIONS...
#
# HOSTFILE: one host a line, "HOST TARGET...": the targets to drive on that
# host (none: the host's built-in test bed); '#' starts a comment. Every host
# gets the same --start-at (now + --delay, 10 s by default), so the runs start
# together; each writes OUT/HOST.json (HOST-N.json if a host is listed twice),
# and the script ends with `stripebench merge OUT/*.json --json OUT/fleet.json`.
#
# Launchers: ssh (one ssh per host, in parallel), pdsh or clush (-w HOST),
# auto (pdsh, else clush, else ssh), local (runs each line on this machine:
# for trying a fleet on one host with several sets of devices). The clocks of
# the hosts must agree (NTP/PTP) for --start-at to line them up; merge
# reports the start skew it sees.
#
# Slurm:  srun -N 4 --ntasks-per-node=1 sh -c 'stripebench run --start-at $START --json - /dev/nvme0n1 > out/$(hostname).json'
# MPI:    mpirun -np 4 --map-by node sh -c '... the same ...'
# then:   stripebench merge out/*.json --json fleet.json
set -euo pipefail

LAUNCHER=auto
DELAY=10
OUT=fleet-out
BIN=stripebench
while [ $# -gt 0 ]; do
  case "$1" in
    --launcher) LAUNCHER=$2; shift 2 ;;
    --delay) DELAY=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --bin) BIN=$2; shift 2 ;;
    --) shift; break ;;
    -*) echo "fleet.sh: unknown option $1" >&2; exit 2 ;;
    *) HOSTFILE=$1; shift ;;
  esac
done
[ -n "${HOSTFILE:-}" ] && [ -r "$HOSTFILE" ] || { echo "usage: $0 [--launcher L] [--delay S] [--out DIR] [--bin PATH] HOSTFILE -- RUN_OPTIONS..." >&2; exit 2; }
case "$LAUNCHER" in
  auto) if command -v pdsh >/dev/null; then LAUNCHER=pdsh; elif command -v clush >/dev/null; then LAUNCHER=clush; else LAUNCHER=ssh; fi ;;
  ssh|pdsh|clush|local) ;;
  *) echo "fleet.sh: --launcher is auto, ssh, pdsh, clush or local" >&2; exit 2 ;;
esac
mkdir -p "$OUT"
START=$(( $(date +%s) + DELAY ))
echo "fleet.sh: $LAUNCHER, all hosts start at $START ($(date -u -d "@$START" +%H:%M:%SZ 2>/dev/null || echo "+${DELAY}s"))" >&2

pids=()
files=()
declare -A seen=()
while read -r host targets; do
  [ -n "$host" ] && [ "${host:0:1}" != "#" ] || continue
  n=${seen[$host]:-0}; seen[$host]=$((n + 1))
  name=$host; [ "$n" -gt 0 ] && name="$host-$n"
  out="$OUT/$name.json"
  files+=("$out")
  # shellcheck disable=SC2206
  cmd=("$BIN" run --no-progress --start-at "$START" --json - "$@" $targets)
  case "$LAUNCHER" in
    local) "${cmd[@]}" >"$out" 2>"$OUT/$name.log" & ;;
    ssh) ssh -o BatchMode=yes "$host" "$(printf '%q ' "${cmd[@]}")" >"$out" 2>"$OUT/$name.log" & ;;
    pdsh) pdsh -N -w "$host" "$(printf '%q ' "${cmd[@]}")" >"$out" 2>"$OUT/$name.log" & ;;
    clush) clush -N -w "$host" "$(printf '%q ' "${cmd[@]}")" >"$out" 2>"$OUT/$name.log" & ;;
  esac
  pids+=($!)
done <"$HOSTFILE"
[ ${#pids[@]} -gt 0 ] || { echo "fleet.sh: no hosts in $HOSTFILE" >&2; exit 2; }

failed=0
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    echo "fleet.sh: ${files[$i]} failed: $(tail -n 1 "${files[$i]%.json}.log")" >&2
    failed=1
  fi
done
[ "$failed" = 0 ] || exit 1
"$BIN" merge "${files[@]}" --json "$OUT/fleet.json"
