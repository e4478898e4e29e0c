#!/usr/bin/env bash
# How long `stripebench history` takes on a fleet's database: DISKS disks of
# one model, RUNS results each (defaults 1000 x 100), one of the disks
# drifting and one fail-slow.
#
#   scripts/bench-history.sh [DISKS] [RUNS] [BIN]   (BIN: default target/release/stripebench)
#
# How the database is made: stripebench itself records one real run (of a
# file in a temporary directory) and so makes the schema; python3's sqlite3
# then writes DISKS x RUNS results like it into the same tables, in one
# transaction: each disk a WWN, its runs a day apart, MB/s and p99 with 3%
# noise, disk 7's p99 40% higher in its last 10 runs (drift), disk 11 at
# half the MB/s and twice the p99 throughout (fail-slow). Then it times, 3
# times each (wall seconds, the best of 3 printed with the others):
#   list       stripebench history                 (every disk judged)
#   json       stripebench history --json FILE
#   html       stripebench history --html FILE
#   disk       stripebench history WWN              (one disk's series)
# and checks that the drift and the fail-slow disk were found. Everything is
# made in a temporary directory, removed on every exit path.
set -euo pipefail

die() { echo "bench-history.sh: $*" >&2; exit 2; }
disks=${1:-1000}
runs=${2:-100}
bin=${3:-target/release/stripebench}
[[ "$disks" =~ ^[1-9][0-9]*$ && "$runs" =~ ^[1-9][0-9]*$ ]] || die "usage: $0 [DISKS] [RUNS] [BIN]"
[ "$disks" -ge 12 ] || die "DISKS must be 12 or more (disks 7 and 11 are planted)"
[ -x "$bin" ] || die "no $bin: cargo build --release first, or give BIN"
command -v python3 >/dev/null || die "needs python3 (its sqlite3 module)"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 700 "$dir"
db=$dir/fleet.db
head -c $((4 << 20)) /dev/urandom >"$dir/t"
"$bin" run --duration 200ms --ramp 0 --bs 4k --rw randread --no-progress \
  --history "$db" "$dir/t" >/dev/null 2>&1 || die "the seed run failed"

python3 - "$db" "$disks" "$runs" <<'EOF'
import random, sqlite3, sys
db, disks, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
c = sqlite3.connect(db)
seed = c.execute("SELECT workload, label, context, histogram FROM results JOIN histograms ON result = id LIMIT 1").fetchone()
random.seed(42)
t0 = 1_780_000_000.0
with c:
    for d in range(disks):
        wwn = "0x5000c500%08x" % d
        cur = c.execute(
            "INSERT INTO disks(key, kind, wwn, serial, model, firmware) VALUES (?, 'wwn', ?, ?, 'BENCH DISK', 'FW1')",
            ("wwn:" + wwn, wwn, "S%06d" % d))
        disk = cur.lastrowid
        for r in range(runs):
            cur = c.execute("INSERT INTO documents(hash, path, recorded) VALUES (?, NULL, ?)",
                            ("bench-%d-%d" % (d, r), t0 + r * 86400))
            mb = 200e6 * random.gauss(1, 0.03)
            p99 = 500_000 * random.gauss(1, 0.03)
            if d == 7 and r >= runs - 10:
                p99 *= 1.4
            if d == 11:
                mb, p99 = mb / 2, p99 * 2
            cur = c.execute(
                "INSERT INTO results(disk, document, host, device, time, workload, label, context, firmware,"
                " bytes_per_sec, iops, p50_ns, p99_ns, p999_ns, not_device_speed)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'FW1', ?, ?, ?, ?, ?, NULL)",
                (disk, cur.lastrowid, "host%03d" % (d // 24), "/dev/sd%d" % (d % 24), t0 + r * 86400,
                 seed[0], seed[1], seed[2], mb, mb / 4096, int(p99 / 3), int(p99), int(p99 * 2)))
            c.execute("INSERT INTO histograms(result, histogram) VALUES (?, ?)", (cur.lastrowid, seed[3]))
EOF
echo "database: $disks disks x $runs runs, $(du -h "$db" | cut -f1)"

time3() {
  local what=$1 best="" all=() s e t
  shift
  for _ in 1 2 3; do
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || true
    e=$(date +%s.%N)
    t=$(awk -v s="$s" -v e="$e" 'BEGIN{printf "%.3f", e-s}')
    all+=("$t")
    best=$(awk -v a="${best:-$t}" -v b="$t" 'BEGIN{print (b<a)?b:a}')
  done
  printf '%-6s %ss (runs: %s)\n' "$what" "$best" "${all[*]}"
}
time3 list "$bin" history --history "$db"
time3 json "$bin" history --history "$db" --json "$dir/h.json"
time3 html "$bin" history --history "$db" --html "$dir/h.html"
time3 disk "$bin" history --history "$db" 0x5000c50000000007

"$bin" history --history "$db" --json "$dir/h.json" >"$dir/list.txt" 2>&1 || true
python3 - "$dir/h.json" <<'EOF'
import json, sys
h = json.load(open(sys.argv[1]))
drift = sorted({d["disk"] for d in h["drift"]})
slow = [f["disk"] for f in h["fail_slow"]]
print("drift:", ", ".join(drift) or "none")
print("fail-slow:", ", ".join(slow) or "none")
ok = drift == ["wwn:0x5000c50000000007"] and slow[:1] == ["wwn:0x5000c5000000000b"]
print("found the planted disks:", "yes" if ok else "NO")
sys.exit(0 if ok else 1)
EOF
