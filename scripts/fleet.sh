#!/usr/bin/env bash
# Run stripebench on many hosts at once with existing launchers (no daemon),
# collect each host's JSON document, and merge them into one fleet document.
#
#   scripts/fleet.sh [OPTIONS] HOSTFILE -- RUN_OPTIONS...
#
#   --launcher L         auto (pdsh, else clush, else ssh), ssh, pdsh, clush, or
#                        local (each line on this machine: a fleet of one host
#                        with several sets of devices)
#   --bin PATH           stripebench on the hosts (default: stripebench on
#                        their PATH); the merge runs it here too
#   --ssh-config FILE    the ssh client configuration (ssh -F FILE; given to
#                        pdsh as PDSH_SSH_ARGS_APPEND, to clush as -o)
#   --out DIR            where the documents go (default fleet-out)
#   --delay TIME         start this long after the preflight (default 10s)
#   --connect-timeout T  a host that has not answered the preflight by then
#                        is named and the fleet refused (default 10s)
#   --max-skew TIME      refuse a host whose clock is further than this from
#                        this machine's (default 100ms)
#   --grace TIME         how long past its planned end (ramp + duration) a host
#                        may take before it counts as missing (default 30s)
#   --deadline TIME      the time from the start after which a host that has
#                        not answered counts as missing, instead of ramp +
#                        duration + grace (needed when the run options do not
#                        say how long the run takes: --config, or
#                        --passes or --io-limit without --duration)
#   --force              allow per-host run options (the merge then merges
#                        different workloads, with a warning)
#   --history FILE.db    the history database here that every measured host's
#                        document is imported into, by each disk's identity
#                        (default: stripebench's own, as `stripebench history`
#                        reads it); an import that fails is said, not fatal
#   --no-history         import nothing here
#
# HOSTFILE: one run a line, "HOST [TARGET...] [-- RUN_OPTIONS...]": the
# targets to drive on that host (none: the host's built-in test bed); '#'
# starts a comment; CR line ends are fine. A host may have several lines
# with different targets (OUT/HOST.json, OUT/HOST-1.json, ...: a name another
# host has, or preflight and fleet, is skipped). Per-host run options make
# the hosts run different workloads and are refused unless --force.
#
# Preflight, before any host starts I/O: every host runs `stripebench
# version --json` through the launcher and answers with its version, schema
# version and clock. The fleet is refused (exit 2, naming the host) when a
# host does not answer within --connect-timeout, when versions or schema
# versions differ, or when a clock is further than --max-skew from this
# machine's. With ssh, clush and local the clock is read in a ping over the
# open connection (`version --on-stdin`): skew = remote clock - midpoint of
# the local send and receive, within +/- rtt/2 (the best of three pings).
# pdsh does not forward standard input: its skew is the remote clock minus the
# arrival of its answer (a clock behind looks behind by the answer's transit
# too). OUT/preflight.json records each host's version, skew, uncertainty and
# rtt; the merged document carries it.
#
# Nothing a host sends is evaluated here: its answers are read by a JSON
# parser (this machine's `stripebench version --read-answers`) and each value
# checked (a version of letters, digits and . + ~ -; numbers of digits only)
# before any arithmetic; whatever a host says on stderr is quoted with its
# control characters escaped (\xNN). A host whose answer is not an answer
# (garbage, code, a line of a megabyte) is refused and its runs left out,
# named missing with why; the others go ahead.
#
# Every host gets the same --start-at (preflight end + --delay). A host whose
# document has not arrived by start + ramp + duration + grace (or
# --deadline) is stopped waiting for (its launcher is killed, and its run
# sent SIGTERM over a new connection if the host answers), and is reported
# missing, as is a host whose run sent no document, one that does not
# read, or one that repeats another's run (a copy of another host's
# document, whatever hostname it gives: the later to come in), or one whose
# hostname is not a host name (RFC 1123: letters, digits, '-' and dots;
# named with its answer escaped); the others are merged: OUT/fleet.json via `stripebench merge
# --preflight OUT/preflight.json --missing HOST=REASON ...`. A run that ends
# with a document but a failure (exit 1: I/O errors) is merged, and named.
# One fleet.sh at a time writes in an --out directory; a fleet.json left
# there by an earlier fleet is removed when the hosts start.
#
# Interrupted (SIGINT, SIGTERM, SIGHUP) after the hosts started, fleet.sh
# stops every run (SIGTERM over a new connection), and what they measured
# until then is merged, as one interrupted run reports.
#
# Exit status: 0 every host measured and merged; 3 the fleet is incomplete
# (some hosts missing, the others merged into OUT/fleet.json); 2 bad input or
# a refused preflight, before any I/O, or every host refused the run options
# (each run exited 2); 1 a host's run failed (its document merged), no host
# measured, or the merge failed; 128 + the signal's number
# when interrupted (130 for SIGINT, 143 for SIGTERM).
#
# Slurm: scripts/fleet/slurm.sbatch; Kubernetes: scripts/fleet/k8s-job.yaml.
# MPI:    mpirun -np 4 --map-by node sh -c 'stripebench run --start-at $START --json - /dev/nvme0n1 > out/$(hostname).json'
# then:   stripebench merge out/*.json --json fleet.json
set -euo pipefail
# Hostfile targets and per-host options are words, never patterns matched
# against this machine's files.
set -f

EXIT_USAGE=2
EXIT_INCOMPLETE=3
die() { echo "fleet.sh: $*" >&2; exit "$EXIT_USAGE"; }
USAGE="usage: fleet.sh [--launcher auto|ssh|pdsh|clush|local] [--bin PATH] [--ssh-config FILE] [--out DIR] [--delay TIME] [--connect-timeout TIME] [--max-skew TIME] [--grace TIME] [--deadline TIME] [--force] HOSTFILE -- RUN_OPTIONS..."

# A duration (10, 10s, 500ms, 2m, 1.5h: stripebench's syntax) in microseconds.
to_us() {
  awk -v t="$1" 'BEGIN {
    if (!match(t, /^([0-9]+(\.[0-9]*)?|\.[0-9]+)/)) exit 1
    n = substr(t, 1, RLENGTH); u = substr(t, RLENGTH + 1)
    if (u == "" || u == "s" || u == "sec") f = 1e6
    else if (u == "ms") f = 1e3
    else if (u == "us") f = 1
    else if (u == "ns") f = 1e-3
    else if (u == "m" || u == "min") f = 60e6
    else if (u == "h") f = 3600e6
    else exit 1
    printf "%.0f\n", n * f
  }'
}
# Microseconds as seconds with a fraction (for JSON and messages).
us_s() { awk -v u="$1" 'BEGIN { printf "%.6f", u / 1e6 }'; }
us_g() { awk -v u="$1" 'BEGIN { printf "%g", u / 1e6 }'; }
us_ms() { awk -v u="$1" 'BEGIN { printf "%.1fms", u / 1e3 }'; }
# Text a host sent (its stderr, an answer) as one line that is safe on a
# terminal and in a message: control characters (C0, DEL, the C1 range that
# a UTF-8 terminal takes as CSI and OSC), characters that reorder or hide
# text (bidi overrides, tag characters) and bytes that are not UTF-8 as
# \xNN, cut after 300 bytes. (awk reads it from the environment: -v would
# interpret its backslashes.)
printable() {
  T=${1:0:2048} LC_ALL=C awk '
  # Whether the K-byte character at I is one that reorders or hides text
  # (stripebench escapes the same): a format character (bidi marks,
  # overrides and isolates, zero-width ones, the soft hyphen, tag
  # characters) or a line or paragraph separator.
  function hidden(s, i, k,   c, j) {
    c = ord[substr(s, i, 1)] - (k == 2 ? 192 : k == 3 ? 224 : 240)
    for (j = 1; j < k; j++) c = c * 64 + ord[substr(s, i + j, 1)] - 128
    return c == 173 || (c >= 1536 && c <= 1541) || c == 1564 || c == 1757 || c == 1807 ||
      c == 2192 || c == 2193 || c == 2274 || c == 6158 ||
      (c >= 8203 && c <= 8207) || (c >= 8232 && c <= 8238) || (c >= 8288 && c <= 8292) ||
      (c >= 8294 && c <= 8303) || c == 65279 || (c >= 65529 && c <= 65531) ||
      c == 69821 || c == 69837 || (c >= 78896 && c <= 78911) || (c >= 113824 && c <= 113827) ||
      (c >= 119155 && c <= 119162) || c == 917505 || (c >= 917536 && c <= 917631)
  }
  BEGIN {
    for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i
    s = ENVIRON["T"]; n = length(s); o = ""; i = 1
    while (i <= n && length(o) < 300) {
      b = ord[substr(s, i, 1)]; k = 0
      if (b >= 32 && b < 127) k = 1
      else if (b >= 194 && b <= 223) k = 2
      else if (b >= 224 && b <= 239) k = 3
      else if (b >= 240 && b <= 244) k = 4
      for (j = 1; j < k; j++) { c = ord[substr(s, i + j, 1)]; if (c < 128 || c > 191) k = 0 }
      if (b == 194 && ord[substr(s, i + 1, 1)] < 160) k = 0
      if (k > 1 && hidden(s, i, k)) k = 0
      if (k) { o = o substr(s, i, k); i += k } else { o = o sprintf("\\x%02x", b); i++ }
    }
    if (i <= n) o = o "..."
    printf "%s", o
  }'
}
# The last line of a host's stderr: its own last word (ssh's, stripebench's),
# not the launcher's "exited with exit code", unless that is all there is;
# printable.
last_word() {
  local w
  # A run's own warnings (a request split, a cache note) say nothing of why
  # it ended: the last other line does.
  w=$(grep -v -e '^$' -e '^clush: ' -e '^pdsh@' -e '^stripebench: warning: ' "$1" 2>/dev/null | tail -n 1 || true)
  [ -n "$w" ] || w=$(grep -v -e '^$' -e '^stripebench: warning: ' "$1" 2>/dev/null | tail -n 1 || true)
  printable "$w"
}
now_us() { echo "${EPOCHREALTIME/./}"; }
opt_us() { to_us "$2" || die "$1 '$2' is not a time: give e.g. 10s, 500ms or 2m"; }

LAUNCHER=auto
OUT=fleet-out
BIN=stripebench
SSH_CONFIG=
DELAY_US=10000000
CONNECT_US=10000000
MAX_SKEW_US=100000
GRACE_US=30000000
DEADLINE_US=
FORCE=0
HISTORY=()
HOSTFILE=
need() { [ $# -ge 2 ] || die "$1 needs a value"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --launcher) need "$@"; LAUNCHER=$2; shift 2 ;;
    --delay) need "$@"; DELAY_US=$(opt_us "$1" "$2"); shift 2 ;;
    --out) need "$@"; OUT=$2; shift 2 ;;
    --bin) need "$@"; BIN=$2; shift 2 ;;
    --ssh-config) need "$@"; SSH_CONFIG=$2; shift 2 ;;
    --connect-timeout) need "$@"; CONNECT_US=$(opt_us "$1" "$2"); shift 2 ;;
    --max-skew) need "$@"; MAX_SKEW_US=$(opt_us "$1" "$2"); shift 2 ;;
    --grace) need "$@"; GRACE_US=$(opt_us "$1" "$2"); shift 2 ;;
    --deadline) need "$@"; DEADLINE_US=$(opt_us "$1" "$2"); shift 2 ;;
    --force) FORCE=1; shift ;;
    --history) need "$@"; HISTORY=(--history "$2"); shift 2 ;;
    --no-history) HISTORY=(off); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) die "$1 is not a fleet.sh option: run options go after -- (fleet.sh HOSTFILE -- $1 ...)" ;;
    *)
      [ -z "$HOSTFILE" ] || die "'$1' after HOSTFILE $HOSTFILE: run options go after -- (fleet.sh HOSTFILE -- RUN_OPTIONS...)"
      HOSTFILE=$1; shift ;;
  esac
done
RUN_OPTS=("$@")
# Run options a fleet cannot pass on: $1 says where they came from.
check_run_opts() {
  local where=$1 a prev=""; shift
  for a in "$@"; do
    case "$a" in
      --json|--json=*|--start-at|--start-at=*) die "${where}run option $a: fleet.sh sets --json and --start-at itself (the documents go to --out DIR)" ;;
      --dry-run) die "${where}run option --dry-run: a fleet measures; check the run options on one host with stripebench run --dry-run" ;;
      --live=-|--csv=-|--html=-|--plot=-|--metrics=-) die "${where}run option $a: each host's standard output carries its JSON document: give a file" ;;
      -) case "$prev" in --live|--csv|--html|--plot|--metrics) die "${where}run option $prev -: each host's standard output carries its JSON document: give a file" ;; esac ;;
    esac
    prev=$a
  done
}
check_run_opts "" "${RUN_OPTS[@]}"
[ -n "$HOSTFILE" ] || die "no HOSTFILE: $USAGE"
[ ! -d "$HOSTFILE" ] || die "HOSTFILE $HOSTFILE is a directory: give a file with one run a line"
# A regular file of a stated size, looked at before it is opened: a FIFO
# with no writer hung the open for good, and /dev/zero was read for ever.
[ -f "$HOSTFILE" ] || die "HOSTFILE $HOSTFILE is not a regular file (a device, a pipe, or missing): give a file with one run a line"
[ -r "$HOSTFILE" ] || die "cannot read HOSTFILE $HOSTFILE"
HOSTFILE_MAX=$((16 << 20))
# The largest document taken from a host: what stripebench reads of one.
DOC_MAX=$((256 << 20))
[ "$(wc -c <"$HOSTFILE")" -le "$HOSTFILE_MAX" ] || die "HOSTFILE $HOSTFILE is larger than 16 MiB: give a file with one run a line"
case "$LAUNCHER" in
  auto) if command -v pdsh >/dev/null; then LAUNCHER=pdsh; elif command -v clush >/dev/null; then LAUNCHER=clush; else LAUNCHER=ssh; fi ;;
  ssh|pdsh|clush|local) ;;
  *) die "--launcher is auto, ssh, pdsh, clush or local, not '$LAUNCHER'" ;;
esac
[ "$LAUNCHER" = local ] || command -v "$LAUNCHER" >/dev/null || die "--launcher $LAUNCHER: $LAUNCHER is not installed"
[ -z "$SSH_CONFIG" ] || [ -r "$SSH_CONFIG" ] || die "cannot read --ssh-config $SSH_CONFIG"
case "$LAUNCHER:$SSH_CONFIG" in
  pdsh:*[[:space:]]*|clush:*[[:space:]]*) die "--ssh-config '$SSH_CONFIG': $LAUNCHER splits its ssh options at white space: give a path without any (a link to the file will do)" ;;
esac
[ "$CONNECT_US" -gt 0 ] || die "--connect-timeout must be longer than 0"
MERGE_BIN=$BIN
command -v "$MERGE_BIN" >/dev/null || MERGE_BIN=stripebench
command -v "$MERGE_BIN" >/dev/null || die "no stripebench here to merge with ($BIN, or stripebench on PATH)"

# --- the hostfile: one run a line -------------------------------------------
HOSTS=() TARGETS=() EXTRAS=() NAMES=()
declare -A seen_run=()
lineno=0
while IFS= read -r raw || [ -n "$raw" ]; do
  lineno=$((lineno + 1))
  # (bash's ${raw%%#*} takes a minute over a line of a megabyte.)
  [ ${#raw} -le 65536 ] || die "$HOSTFILE line $lineno is longer than 64 KiB: a line is HOST [TARGET...] [-- RUN_OPTIONS...]"
  line=${raw%%#*}
  IFS=$' \t\r\n' read -r -a words <<<"$line" || true
  [ ${#words[@]} -gt 0 ] || continue
  host=${words[0]}
  where="$HOSTFILE line $lineno"
  case "$host" in
    /*|-*) die "$where: '$(printable "$host")' is not a host: a line is HOST [TARGET...] [-- RUN_OPTIONS...], the host first" ;;
  esac
  # [USER@]HOST: no "@group" (clush would run every node of the group); no
  # longer than a DNS name and a user name allow (a name of a megabyte
  # would break the launch: "Argument list too long").
  [[ ${#host} -le 320 && "$host" =~ ^([A-Za-z0-9._-]+@)?[A-Za-z0-9._:%-]+$ ]] || die "$where: '$(printable "$host")' is not a host name or address ([USER@]HOST, at most 320 characters)"
  targets=() extras=() in_extras=0
  for w in "${words[@]:1}"; do
    if [ "$in_extras" = 0 ] && [ "$w" = -- ]; then in_extras=1
    elif [ "$in_extras" = 1 ]; then extras+=("$w")
    else targets+=("$w"); fi
  done
  [ "$in_extras" = 0 ] || [ ${#extras[@]} -gt 0 ] || die "$where: '--' with no run options after it"
  key="$host ${targets[*]:-} -- ${extras[*]:-}"
  [ -z "${seen_run[$key]:-}" ] || die "$where: host $host with the same targets as ${seen_run[$key]}: one run a line; list a host twice only with different targets"
  seen_run[$key]=$where
  if [ ${#extras[@]} -gt 0 ] && [ "$FORCE" = 0 ]; then
    die "$where: per-host run options (${extras[*]}) make $host run another workload than the rest: give the run options once, after -- on the command line, or pass --force"
  fi
  [ ${#extras[@]} = 0 ] || check_run_opts "$where: " "${extras[@]}"
  HOSTS+=("$host") TARGETS+=("${targets[*]:-}") EXTRAS+=("${extras[*]:-}")
done <"$HOSTFILE"
[ ${#HOSTS[@]} -gt 0 ] || die "no hosts in $HOSTFILE: a line is HOST [TARGET...]"
# Each run's document is OUT/NAME.json: a host's first line is named after
# it, its next lines HOST-1, HOST-2, ... skipping any name that another host
# has (hosts "node" twice and "node-1") or that the fleet's own documents
# have (OUT/preflight.json, OUT/fleet.json), so no two runs share a file.
declare -A taken=([preflight]=1 [fleet]=1) named=()
for host in "${HOSTS[@]}"; do taken[$host]=1; done
for host in "${HOSTS[@]}"; do
  if [ -z "${named[$host]:-}" ] && [ "$host" != preflight ] && [ "$host" != fleet ]; then
    name=$host
  else
    n=1; while [ -n "${taken[$host-$n]:-}" ]; do n=$((n + 1)); done
    name=$host-$n
  fi
  named[$host]=1 taken[$name]=1
  NAMES+=("$name")
done

# --- how long a run takes: the deadline --------------------------------------
# ramp + duration of a host's run options (the last of each wins, as in
# stripebench), in microseconds; empty when they do not tell.
run_us() {
  local dur=10000000 ramp=1000000 bounded=1 has_dur=0 has_ramp=0 io_limit=0 a v
  while [ $# -gt 0 ]; do
    a=$1; v=
    case "$a" in
      -t|--duration|--ramp) v=${2:-}; shift ;;
      --duration=*|--ramp=*) v=${a#*=}; a=${a%%=*} ;;
      -t?*) v=${a#-t}; a=-t ;;
      --io-limit|--io-limit=*) bounded=0 io_limit=1 ;;
      --passes|--passes=*) bounded=0 ;;
      # The file may set ramp, duration, passes or io_limit: only the
      # caller knows how long that takes.
      --config|--config=*) return 1 ;;
    esac
    case "$a" in
      -t|--duration) dur=$(to_us "$v") || return 1; has_dur=1 ;;
      --ramp) ramp=$(to_us "$v") || return 1; has_ramp=1 ;;
    esac
    shift
  done
  # stripebench's defaults: no ramp with --io-limit.
  [ "$io_limit" = 0 ] || [ "$has_ramp" = 1 ] || ramp=0
  [ "$bounded" = 1 ] || [ "$has_dur" = 1 ] || return 1
  echo $((dur + ramp))
}
LONGEST_US=0
if [ -z "$DEADLINE_US" ]; then
  for i in "${!HOSTS[@]}"; do
    # shellcheck disable=SC2206
    opts=("${RUN_OPTS[@]}" ${EXTRAS[$i]})
    us=$(run_us "${opts[@]}") || die "cannot tell how long the run of ${NAMES[$i]} takes from its run options (--config, or --passes or --io-limit without --duration, or a time that is not one): give --deadline TIME"
    [ "$us" -le "$LONGEST_US" ] || LONGEST_US=$us
  done
  DEADLINE_US=$((LONGEST_US + GRACE_US))
fi

# --- launching a command on a host ---------------------------------------------
CONNECT_S_INT=$(((CONNECT_US + 999999) / 1000000))
SSH_OPTS=(-o BatchMode=yes -o "ConnectTimeout=$CONNECT_S_INT")
[ -z "$SSH_CONFIG" ] || SSH_OPTS=(-F "$SSH_CONFIG" "${SSH_OPTS[@]}")
# Words as one POSIX sh command line, whatever the remote login shell (dash,
# bash, ksh) and its locale: each word in single quotes, a quote as '\''.
# (bash's printf %q writes $'...', which a POSIX sh reads as "$" and text.)
sh_quote() {
  local a sq="'" rep="'\\''" q=""
  for a in "$@"; do q+="'${a//"$sq"/"$rep"}' "; done
  printf '%s' "$q"
}
# Sets CMD to run "$@" on host $1 through the launcher.
launch() {
  local host=$1 q; shift
  q=$(sh_quote "$@")
  case "$LAUNCHER" in
    local) CMD=("$@") ;;
    ssh) CMD=(ssh "${SSH_OPTS[@]}" "$host" "$q") ;;
    pdsh) CMD=(env "PDSH_SSH_ARGS_APPEND=${SSH_OPTS[*]}" pdsh -S -R ssh -N -t "$CONNECT_S_INT" -w "$host" "$q") ;;
    clush) CMD=(clush -S -N -o "${SSH_OPTS[*]}" -w "$host" "$q") ;;
  esac
}

# --out: a directory this fleet can write in, and only this fleet (another
# fleet.sh on the same --out would replace its documents as they arrive).
[ ! -e "$OUT" ] || [ -d "$OUT" ] || die "--out $OUT is not a directory: give a directory for the documents"
mkdir -p "$OUT" 2>/dev/null || die "cannot make the --out directory $OUT: give a directory you can write in"
exec {LOCK}<"$OUT"
flock -n "$LOCK" || die "another fleet.sh is writing in --out $OUT: wait for it, or give another --out"
PRE="$OUT/preflight"
rm -rf "$PRE"
{ mkdir -p "$PRE" 2>/dev/null && [ -w "$PRE" ]; } || die "cannot write in --out $OUT: give a directory you can write in"
CONNECT_S=$(us_s "$CONNECT_US")

# --- preflight ---------------------------------------------------------------
# Nothing a host sends is evaluated: its answers are read by a JSON parser
# (this machine's stripebench version --read-answers), their words checked
# again (a version; numbers of digits only) before any arithmetic, and its
# stderr is quoted printable.
#
# One host: writes $PRE/N.ok ("version schema skew_us uncertainty_us rtt_us
# method reach_us"), $PRE/N.fail (one line: why the fleet is refused: no
# answer), or $PRE/N.bad (one line: why this host's runs are left out: an
# answer that is not one).
ANSWER_MAX=4096
# Sets V and S (version, schema version) and CS (each clock, in ns) from a
# host's answers "$@" (one process for them all), or WHY.
answers() {
  local out rows row c
  if ! out=$(printf '%s\n' "$@" | "$MERGE_BIN" version --read-answers 2>&1); then
    WHY="its answer is not stripebench version --json (is --bin an older stripebench?): $(printable "${out##*stripebench version --json: }")"
    return 1
  fi
  CS=()
  mapfile -t rows <<<"$out"
  for row in "${rows[@]}"; do
    read -r V S c <<<"$row" || true
    [[ "$V" =~ ^[0-9A-Za-z.+~-]{1,64}$ && "$S" =~ ^[0-9]{1,9}$ && "$c" =~ ^[0-9]{1,19}$ ]] || {
      WHY="its answer reads as '$(printable "$row")', not a version and a clock"
      return 1
    }
    CS+=("$c")
  done
  [ ${#CS[@]} = $# ] || { WHY="$# answers read as ${#CS[@]}"; return 1; }
}
preflight_host() {
  local n=$1 host=$2 f="$PRE/$1" rc line t0 t1 ta rtt skew best_rtt="" best_skew="" pid
  local ping=1 V S CS=() WHY k times=() lines=()
  [ "$LAUNCHER" != pdsh ] || ping=0
  if [ "$ping" = 1 ]; then launch "$host" "$BIN" version --json --on-stdin; else launch "$host" "$BIN" version --json; fi
  fail() {
    local err=""
    # A launcher that gives up at the same moment says why within a moment.
    [ -s "$f.err" ] || sleep 0.5
    [ ! -s "$f.err" ] || err=": $(last_word "$f.err")"
    echo "host $host $1$err" >"$f.fail"
    kill "$pid" 2>/dev/null || true
    exit 0
  }
  bad() {
    echo "$WHY" >"$f.bad"
    kill "$pid" 2>/dev/null || true
    exit 0
  }
  t0=$(now_us)
  coproc REMOTE { "${CMD[@]}" 2>"$f.err"; }
  pid=$REMOTE_PID
  local rin=${REMOTE[0]} rout=${REMOTE[1]}
  # read's status is above 128 on a timeout, 1 at the end of the answer; a
  # line longer than any answer is cut (and refused) rather than awaited.
  read -r -t "$CONNECT_S" -n "$ANSWER_MAX" line <&"$rin" || {
    [ $? -gt 128 ] || { wait "$pid" && rc=0 || rc=$?; fail "gave no answer to the preflight (exit $rc)"; }
    fail "did not answer the preflight within $(us_g "$CONNECT_US")s (--connect-timeout)"
  }
  ta=$(now_us)
  # From the launch to the first answer: about what a run takes to start.
  local reach=$((ta - t0))
  answers "$line" || bad
  if [ "$ping" = 1 ]; then
    for _ in 1 2 3; do
      t0=$(now_us)
      echo >&"$rout"
      read -r -t "$CONNECT_S" -n "$ANSWER_MAX" line <&"$rin" || fail "stopped answering the preflight's clock pings"
      t1=$(now_us)
      times+=("$t0 $t1") lines+=("$line")
    done
    exec {rout}>&-
    # Read once the pings are done: parsing takes no ping's time.
    answers "${lines[@]}" || bad
    for k in 0 1 2; do
      read -r t0 t1 <<<"${times[$k]}"
      rtt=$((t1 - t0))
      skew=$((CS[k] / 1000 - (t0 + t1) / 2))
      if [ -z "$best_rtt" ] || [ "$rtt" -lt "$best_rtt" ]; then best_rtt=$rtt best_skew=$skew; fi
    done
    echo "$V $S $best_skew $((best_rtt / 2)) $best_rtt ping $reach" >"$f.ok"
  else
    # The clock was read between the launch and the answer's arrival.
    echo "$V $S $((CS[0] / 1000 - ta)) $((ta - t0)) $((ta - t0)) one-way $reach" >"$f.ok"
  fi
  wait "$pid" 2>/dev/null || true
}

# A signal (Ctrl-C, kill, a closed terminal) stops the fleet the way it stops
# one run: the hosts' runs are stopped and report what they measured, and
# that is merged; exit 128 + the signal's number.
interrupted=0
trap 'interrupted=130' INT
trap 'interrupted=143' TERM
trap 'interrupted=129' HUP

declare -A asked=()
ppids=()
for i in "${!HOSTS[@]}"; do
  host=${HOSTS[$i]}
  [ -z "${asked[$host]:-}" ] || continue
  asked[$host]=$i
  ( preflight_host "$i" "$host" ) </dev/null &
  ppids+=($!)
done
for p in "${ppids[@]}"; do wait "$p" || true; done
if [ "$interrupted" != 0 ]; then
  kill "${ppids[@]}" 2>/dev/null || true
  echo "fleet.sh: interrupted during the preflight: no host started" >&2
  exit "$interrupted"
fi

refused=0 slowest_reach=0 slowest_host=""
first_version="" first_host=""
entries=()
# Hosts whose answers were not answers: why, for their runs' --missing.
declare -A left_out=()
for i in "${!HOSTS[@]}"; do
  host=${HOSTS[$i]}
  [ "${asked[$host]}" = "$i" ] || continue
  f="$PRE/$i"
  if [ -s "$f.bad" ]; then
    # Garbage from one host (or whatever speaks for it) must not keep the
    # others from running: its runs are missing.
    why=$(printable "$(cat "$f.bad")")
    echo "fleet.sh: refused: host $host: $why: its run(s) are left out, the others go ahead" >&2
    left_out[$host]="refused at the preflight: $why"
    continue
  fi
  if [ -s "$f.fail" ]; then
    echo "fleet.sh: refused: $(cat "$f.fail"); check that it is up, reachable and has stripebench, or remove it from $HOSTFILE" >&2
    refused=1; continue
  fi
  if [ ! -s "$f.ok" ]; then
    echo "fleet.sh: refused: host $host: the preflight ended without an answer: see $f.err" >&2
    refused=1; continue
  fi
  read -r version schema skew unc rtt method reach <"$f.ok"
  if [ "${reach:-0}" -gt "$slowest_reach" ]; then slowest_reach=$reach slowest_host=$host; fi
  [[ "$skew" =~ ^-?[0-9]+$ && "$schema" =~ ^[0-9]+$ ]] || { echo "fleet.sh: refused: host $host: a preflight answer that does not parse: $(cat "$f.ok")" >&2; refused=1; continue; }
  if [ -z "$first_host" ]; then
    first_host=$host first_version="$version $schema"
  elif [ "$version $schema" != "$first_version" ]; then
    echo "fleet.sh: refused: host $host runs stripebench $version (schema $schema), host $first_host runs ${first_version% *} (schema ${first_version#* }): run one version on every host" >&2
    refused=1
  fi
  abs=${skew#-}
  if [ "$abs" -gt "$MAX_SKEW_US" ]; then
    side=ahead; [ "$skew" -ge 0 ] || side=behind
    if [ "$method" = ping ]; then within="+/- $(us_ms "$unc")"; else within="one-way: the true skew is between that and $(us_ms "$unc") more"; fi
    echo "fleet.sh: refused: host $host's clock is $(us_s "$abs")s $side of this machine's ($within), more than --max-skew $(us_ms "$MAX_SKEW_US"): synchronise the clocks (NTP, PTP) or raise --max-skew" >&2
    refused=1
  fi
  entries+=("{\"host\": \"$host\", \"version\": \"$version\", \"schema_version\": $schema, \"skew_sec\": $(us_s "$skew"), \"uncertainty_sec\": $(us_s "$unc"), \"rtt_sec\": $(us_s "$rtt"), \"method\": \"$method\"}")
done
# One line for each host refused (above); no host has started.
[ "$refused" = 0 ] || exit "$EXIT_USAGE"
[ ${#entries[@]} -gt 0 ] || die "no host answered the preflight as stripebench does (above): nothing to run"
# A run launched now starts about as late as its host answered the preflight:
# a --delay shorter than that puts --start-at in the host's past (every run
# refused), or close to it.
if [ "$DELAY_US" -lt "$slowest_reach" ]; then
  die "--delay $(us_g "$DELAY_US")s is shorter than the $(us_g "$slowest_reach")s host $slowest_host took to answer the preflight: the runs would start after their --start-at; give a --delay of at least $(((2 * slowest_reach + 999999) / 1000000))s"
fi
{
  printf '{"launcher": "%s", "max_skew_sec": %s, "connect_timeout_sec": %s, "hosts": [\n' \
    "$LAUNCHER" "$(us_s "$MAX_SKEW_US")" "$CONNECT_S"
  sep=""
  for e in "${entries[@]}"; do printf '%s  %s' "$sep" "$e"; sep=$',\n'; done
  printf '\n]}\n'
} >"$OUT/preflight.json"

# --- the run -----------------------------------------------------------------
START_US=$(($(now_us) + DELAY_US))
START=$(us_s "$START_US")
END_US=$((START_US + DEADLINE_US))
runs=0
for host in "${HOSTS[@]}"; do [ -n "${left_out[$host]:-}" ] || runs=$((runs + 1)); done
echo "fleet.sh: $LAUNCHER, $runs run(s) on ${#entries[@]} host(s)${left_out[*]:+ (${#left_out[@]} left out)}, versions and clocks agree (preflight.json); all start at $START ($(date -u -d "@${START%.*}" +%H:%M:%SZ)), deadline $(us_g "$DEADLINE_US")s after it" >&2

# On the host, each run records its process id in a file named after this
# fleet and the run ($TMPDIR or /tmp; refused if the name exists), so that a
# second connection can stop it: SIGTERM, on which stripebench reports what
# it measured. (Closing a launcher's connection does not stop a remote
# process, and pdsh gives no standard input to watch.)
TAG="$$.$START_US"
# shellcheck disable=SC2016
RUN_WRAP='f=${TMPDIR:-/tmp}/stripebench-fleet.$0.pid; "$@" & p=$!; (set -C; echo "$p" >"$f") 2>/dev/null || f=; wait "$p"; r=$?; [ -z "$f" ] || rm -f "$f"; exit "$r"'
# shellcheck disable=SC2016
STOP_WRAP='f=${TMPDIR:-/tmp}/stripebench-fleet.$0.pid; [ -s "$f" ] && kill -TERM "$(cat "$f")"'
# Stops the runs $@ on their hosts (each within --connect-timeout); sets STOPPERS.
stop_runs() {
  local i
  STOPPERS=()
  for i in "$@"; do
    launch "${HOSTS[$i]}" sh -c "$STOP_WRAP" "$TAG.$i"
    timeout -k 1 "$CONNECT_S" "${CMD[@]}" </dev/null >/dev/null 2>&1 &
    STOPPERS+=($!)
  done
}

pids=() files=() missing=()
for i in "${!HOSTS[@]}"; do
  out="$OUT/${NAMES[$i]}.json"
  rm -f "$out"
  if [ -n "${left_out[${HOSTS[$i]}]:-}" ]; then
    missing+=(--missing "${NAMES[$i]}=${left_out[${HOSTS[$i]}]}")
    continue
  fi
  files[$i]=$out
  # shellcheck disable=SC2086 # words, split on purpose (set -f: no globbing)
  launch "${HOSTS[$i]}" sh -c "$RUN_WRAP" "$TAG.$i" "$BIN" run --no-progress --start-at "$START" --json - "${RUN_OPTS[@]}" ${EXTRAS[$i]} ${TARGETS[$i]}
  # In a session of its own: a Ctrl-C (sent to the whole process group) is
  # fleet.sh's to handle; a local run that got it too would be stopped twice
  # by the stop that follows, and quit without its document.
  # A host's document is bounded as every document is when read (256 MiB):
  # a host that answers without end (`cat /dev/zero`) would fill the
  # collector's disk. Past the bound its writer gets SIGXFSZ, the document
  # is cut, and the host is named missing with the reason (its log too).
  (ulimit -f $((DOC_MAX >> 10)); exec setsid "${CMD[@]}") >"$out" 2>"$OUT/${NAMES[$i]}.log" </dev/null &
  pids[$i]=$!
done
# A fleet.json of an earlier fleet in --out is not this fleet's result.
rm -f "$OUT/fleet.json"

declare -A rc=() late=()
# The runs in the order their launchers ended (the order their documents
# came in).
order=()
stopping=0 STOPPERS=()
while :; do
  running=()
  for i in "${!pids[@]}"; do
    [ -z "${rc[$i]:-}" ] || continue
    if kill -0 "${pids[$i]}" 2>/dev/null; then running+=("$i")
    else
      if wait "${pids[$i]}"; then rc[$i]=0; else rc[$i]=$?; fi
      order+=("$i")
    fi
  done
  [ ${#running[@]} -gt 0 ] || break
  if [ "$interrupted" != 0 ] && [ "$stopping" = 0 ]; then
    stopping=1
    echo "fleet.sh: interrupted: stopping the ${#running[@]} run(s) still going; each reports what it measured" >&2
    stop_runs "${running[@]}"
    # Their documents follow within moments; a host that does not answer
    # the stop is missing.
    stop_end=$((${EPOCHREALTIME/./} + CONNECT_US + 10000000))
    [ "$stop_end" -ge "$END_US" ] || END_US=$stop_end
  fi
  # (No subshell, no foreground command that a Ctrl-C, which reaches the
  # whole process group, could fail under set -e: the trap handles it.)
  if [ "${EPOCHREALTIME/./}" -ge "$END_US" ]; then
    for i in "${running[@]}"; do
      late[$i]=1
      kill -TERM "${pids[$i]}" 2>/dev/null || true
    done
    # The process left on a late host: stopped too, if the host answers.
    [ "$stopping" = 1 ] || stop_runs "${running[@]}"
    sleep 1 || true
    for i in "${running[@]}"; do
      kill -KILL "${pids[$i]}" 2>/dev/null || true
      wait "${pids[$i]}" 2>/dev/null || true
      rc[$i]=killed
      order+=("$i")
    done
    break
  fi
  sleep 0.2 || true
done
for p in "${STOPPERS[@]}"; do wait "$p" 2>/dev/null || true; done

measured=() measured_names=() failed=0
for i in "${order[@]}"; do
  f=${files[$i]} name=${NAMES[$i]} bad=""
  if [ -n "${late[$i]:-}" ] && [ "$stopping" = 1 ]; then
    why="no document after it was stopped (fleet.sh interrupted): stopped waiting"
  elif [ -n "${late[$i]:-}" ]; then
    why="no document $(us_g "$DEADLINE_US")s after the start (ramp + duration + grace, or --deadline): stopped waiting"
  elif [ -s "$f" ] && bad=$("$MERGE_BIN" merge "$f" --preflight "$OUT/preflight.json" --json - 2>&1 >/dev/null); then
    # A document that reads, alone: one host's garbage (a login banner, a
    # cut answer) must not keep the others from merging.
    measured+=("$f") measured_names+=("$name")
    # Exit 1 with a document: the run ended on I/O errors (or failed while
    # running); its figures are merged and the fleet says it failed.
    if [ "${rc[$i]}" != 0 ] && [ "$stopping" = 0 ]; then
      why=$(last_word "$OUT/$name.log")
      echo "fleet.sh: host $name's run failed (exit ${rc[$i]})${why:+: $why}; its document is merged" >&2
      failed=1
    fi
    continue
  elif [ "$(wc -c <"$f")" -ge "$DOC_MAX" ]; then
    why="its document passed $((DOC_MAX >> 20)) MiB and was cut there (a run document is a few MiB at most)"
  elif [ -s "$f" ]; then
    why="its document does not read: $(printable "$(printf '%s\n' "$bad" | grep -v '^$' | tail -n 1)") (exit ${rc[$i]})"
  else
    why=$(last_word "$OUT/$name.log")
    # ssh's 255 with nothing said: the connection broke or the remote run
    # was killed by a signal (it has no exit status of its own then).
    if [ -z "$why" ] && [ "${rc[$i]}" = 255 ] && [ "$LAUNCHER" = ssh ]; then
      why="the connection broke or the remote run was killed"
    fi
    why="no document (exit ${rc[$i]})${why:+: $why}"
  fi
  echo "fleet.sh: host $name is missing: $why" >&2
  missing+=(--missing "$name=$why")
done
# A document that repeats another's run (a host that sent a copy of another
# host's document, renamed or not) would count that run twice, and made the
# merge refuse the fleet: the later of the two to come in (a copy is made of
# one that exists) is missing, with why, and the rest are merged. So is a
# document whose hostname is not a host name (RFC 1123): text the host
# chose, which the fleet's table would print as a row's name (a newline in
# it printed a forged FLEET row).
if [ ${#measured[@]} -gt 0 ]; then
  reps=$("$MERGE_BIN" merge --list-repeats "${measured[@]}" 2>&1) || {
    echo "fleet.sh: cannot check the documents for repeated runs and host names: $(printable "$reps")" >&2
    exit 1
  }
  declare -A repeat=()
  while read -r n why; do
    [[ "$n" =~ ^[0-9]{1,9}$ ]] && [ "$n" -ge 1 ] && [ "$n" -le ${#measured[@]} ] || continue
    repeat[$((n - 1))]=$(printable "$why")
  done <<<"$reps"
  kept=()
  for k in "${!measured[@]}"; do
    if [ -n "${repeat[$k]:-}" ]; then
      echo "fleet.sh: host ${measured_names[$k]} is missing: ${repeat[$k]}" >&2
      missing+=(--missing "${measured_names[$k]}=${repeat[$k]}")
    else
      kept+=("${measured[$k]}")
    fi
  done
  measured=("${kept[@]}")
fi
if [ ${#measured[@]} = 0 ]; then
  echo "fleet.sh: no host measured: see $OUT/*.log" >&2
  [ "$interrupted" = 0 ] || exit "$interrupted"
  # Every run refused its options (exit 2: a misspelt option, a target that
  # is not there): bad input, though only the hosts could tell.
  for i in "${!pids[@]}"; do [ "${rc[$i]}" = "$EXIT_USAGE" ] || exit 1; done
  exit "$EXIT_USAGE"
fi
force=(); [ "$FORCE" = 0 ] || force=(--force)
"$MERGE_BIN" merge "${measured[@]}" --preflight "$OUT/preflight.json" "${missing[@]}" "${force[@]}" --json "$OUT/fleet.json" || exit 1
# Every host's disks into the history here, each document once (by its
# hash): what `stripebench history` judges the fleet's disks from.
if [ "${HISTORY[0]:-}" != off ]; then
  "$MERGE_BIN" history "${HISTORY[@]}" import "${measured[@]}" ||
    echo "fleet.sh: the documents are not in the history (above: why); $OUT has them all" >&2
fi
[ "$interrupted" = 0 ] || { echo "fleet.sh: interrupted: what the runs measured until then is merged into $OUT/fleet.json (exit $interrupted)" >&2; exit "$interrupted"; }
[ "$failed" = 0 ] || { echo "fleet.sh: a host's run failed: its document and the others are merged into $OUT/fleet.json (exit 1)" >&2; exit 1; }
[ ${#missing[@]} = 0 ] || { echo "fleet.sh: the fleet is incomplete: $(( ${#missing[@]} / 2 )) of ${#HOSTS[@]} run(s) missing, the rest merged into $OUT/fleet.json (exit $EXIT_INCOMPLETE)" >&2; exit "$EXIT_INCOMPLETE"; }
