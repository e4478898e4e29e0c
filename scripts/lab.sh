#!/usr/bin/env bash
# The stripe lab: a real md, dm, LVM or btrfs array in a throwaway VM, so that
# stripebench can be tried on the arrays it exists for, on a machine whose
# kernel has no md or dm, without touching a single host device.
#
#   scripts/lab.sh [--array KIND] [--members N] [--member-size SIZE] [--chunk SIZE]
#                  [--layout LAYOUT] [--group G] [--part-start SECTOR] [--slow-member K:MS] [--failing-member K]
#                  [--degraded K | --rebuilding K] [--sync-speed KBS] [--crypt-flags F,...]
#                  [--controllers C [--controller-limit K:RATE]... [--member-rate RATE]]
#                  [--kvm|--tcg] [--keep]
#                  [--out DIR] [--timeout SECONDS] [--memory MB] [--cpus N]
#                  [--bin PATH] -- COMMAND...
#
#   scripts/lab.sh -- stripebench compare '$ARRAY'
#   scripts/lab.sh --array dm-stripe --members 8 --chunk 32k -- stripebench topology --json '$ARRAY'
#   scripts/lab.sh --array md-raid0 --slow-member 2:20 --out res -- 'stripebench compare --json $OUT/c.json $ARRAY'
#
# KIND (default md-raid0; N members, default 4, each a loop device over a file
# on tmpfs inside the guest, so every member keeps I/O statistics; the files
# hold random data, so that no read is answered from a hole):
#   md-raid0, md-raid10, md-raid1   mdadm --create, chunk --chunk (raid1 has none;
#                                   raid1/10 are created --assume-clean: no resync I/O;
#                                   raid10 takes --layout n2, f2, o2, n3 ...)
#   md-raid4, md-raid5, md-raid6    parity RAID (mdadm --create --assume-clean), chunk
#                                   --chunk, --layout for raid5/6 (left-symmetric,
#                                   the default, left-asymmetric, right-symmetric,
#                                   right-asymmetric, parity-first, parity-last;
#                                   raid6 also ...-6 forms); at least 3 (raid6: 4) members
#   lvm-raid1, lvm-raid5, lvm-raid6, lvm-raid10
#                                   an LVM RAID LV (lvcreate --type raidN --nosync, raid6
#                                   resynced first: dm-raid refuses --nosync there;
#                                   device-mapper's dm-raid over md's personalities),
#                                   chunk --chunk, raid5/6 --layout as lvcreate
#                                   names it (ls, la, rs, ra ...: --raidlayout is not
#                                   a lvcreate option; it is given as --type raid5_ls)
#   lvm-over-md-raid1               md RAID1 pairs of the members (an even number, at
#                                   least 4), and an LVM striped LV over the pairs
#   dm-stripe-over-md               groups of --group G members (default 3, G >= 3),
#                                   each an md RAID5, and a dm "striped" table over the
#                                   groups (RAID50); N a multiple of G, at least 2 groups
#   dm-stripe                       dmsetup "striped" table, chunk --chunk, members in order
#   dm-linear                       dmsetup "linear" table over one partition per member
#   lvm-stripe                      an LVM striped LV: lvcreate -i N -I CHUNK
#   md-on-partitions                md RAID0 over one partition per member (each from
#                                   sector --part-start, default 2048: 1 MiB)
#   dm-on-md                        dm-linear over an md RAID0 of the members
#   dm-crypt-over-md                dm-crypt (aes-xts-plain64, a random key given to dmsetup
#                                   on a pipe) over an md RAID5 of the members (at least 3),
#                                   its optional flags --crypt-flags; LEGS is the md array
#   btrfs-raid0                     mkfs.btrfs -d raid0 -m raid0, mounted; ARRAY is the mount point
#   none                            members only (ARRAY is empty)
#
# In the guest COMMAND runs as root under the guest's sh (its words joined by
# spaces, as ssh does: quote '$ARRAY' on the host so that the guest expands
# it), with stripebench, mdadm, dmsetup, lvm, mkfs.btrfs, mkfs.ext4, tune2fs and busybox on its
# PATH, the repository's configs/ at /configs, and these variables set (ARRAY
# and MEMBERS are also printed on stderr):
#   ARRAY     the array's path (block device, or mount point for btrfs)
#   MEMBERS   its members, in stripe order, space separated (kernel names:
#             /dev/loop0, /dev/loop0p1, /dev/dm-3 for a member behind dm-delay);
#             for a nested stack the leaves, in the order of the legs
#   LEGS      a nested stack's middle devices (the md pairs or groups the top
#             level stripes over), in stripe order; empty otherwise
#   LOOPS     the loop devices under the members (with --controllers: the sd
#             disks under the members, in member order)
#   OUT       a directory shared with the host: its files come back into --out DIR
#   LAB_KIND, LAB_CHUNK (bytes), LAB_LAYOUT, LAB_GROUP, LAB_SLOW (K:MS), LAB_FAILING (K),
#   LAB_FAIL_START, LAB_FAIL_END   the byte range of the failing member whose I/O fails
#   LAB_DEGRADED (K), LAB_REBUILDING (K)   the member failed and removed (MEMBERS still
#             names it, in its place), or failed, removed and added back, recovering
#   LAB_CONTROLLERS (C, empty without --controllers), LAB_MEMBER_CONTROLLER  each
#             member's controller, in MEMBERS order ("0 1 2 0 1 2 ..."), and
#             LAB_CONTROLLER_LIMIT  the --controller-limit values as K:BYTES/s
# COMMAND's stdout, stderr and exit status come back as this script's own.
#
# --slow-member K:MS   member K (from 0, in MEMBERS order) is a dm-delay device
#                      adding MS ms to each of its I/Os
# --failing-member K   member K is a dm device whose third quarter is a dm-error
#                      range (EIO at every offset in [LAB_FAIL_START, LAB_FAIL_END))
#                      and the rest dm-linear over its loop device
# --degraded K         md raid1/4/5/6/10: member K is failed and removed with mdadm
#                      (--fail, --remove) before COMMAND runs: the array is degraded
# --rebuilding K       as --degraded K, then member K is added back (mdadm --add) with
#                      md/sync_speed_min 1 and md/sync_speed_max --sync-speed KB/s, so
#                      that its recovery is still running when COMMAND starts (COMMAND
#                      may raise md/sync_speed_max itself); LVM RAID kinds are refused
# --sync-speed KBS     --rebuilding's md/sync_speed_max (default 200 KB/s: a 64m member
#                      takes about 5 minutes to recover)
# --crypt-flags F,...  dm-crypt-over-md: the crypt table's optional flags (no_read_workqueue,
#                      no_write_workqueue, same_cpu_crypt, submit_from_crypt_cpus)
# --controllers C      the members are not loop devices but real virtual disks:
#                      C virtio-scsi controllers (-device virtio-scsi-pci), member i a
#                      scsi-hd on controller i mod C (12 members on 3 controllers: 4
#                      each), with its own serial (lab-mNNN) and wwn (0x5000c5000000NNNN,
#                      NNNN = i + 1 in hex), over a raw file of --member-size random
#                      bytes that the host makes in the work directory (on the host's
#                      disk, not in guest memory); MEMBERS names the /dev/sdX disks in
#                      member order (found by their wwn in sysfs). Every KIND builds on
#                      them as on loop devices
# --controller-limit K:RATE   controller K's disks share one qemu throttle group
#                      (-object throttle-group, x-bps-total): together they move at
#                      most RATE bytes/s (suffix k, m or g: binary), each alone as
#                      much; repeatable, one per controller
# --member-rate RATE   with --controllers: each disk alone moves at most RATE bytes/s
#                      (its own throttle group, before its controller's), as a
#                      real disk has a speed of its own: under TCG an unlimited
#                      disk's speed is the emulated CPU's
# --kvm | --tcg        accelerator (default --tcg: on these machines `-cpu host`
#                      failed on an MSR under KVM); the one used is printed
# --keep               keep the work directory (initramfs, console log) and say where
# --timeout SECONDS    the guest is killed after this long (default 600): a hung or
#                      panicked guest is reported with the last lines of its console
# --memory MB          guest memory (default: the members' total plus 768 MiB)
# --bin PATH           the stripebench binary (default: cargo build --release here)
#
# STRIPEBENCH_LAB_KERNEL=linux-image-...   another Debian kernel package
#
# Exit status: COMMAND's own; 2 for bad input (one line on stderr); 125 when the
# lab itself failed (a tool missing, the guest could not build the array, hung,
# panicked or timed out).
#
# What it needs is installed by package name with apt-get when missing
# (qemu-system-x86, busybox-static, mdadm, dmsetup, lvm2, btrfs-progs,
# cpio), and the Debian kernel image is fetched with `apt-get download` and
# unpacked with `dpkg-deb -x` into the cache directory it names
# ($STRIPEBENCH_LAB_CACHE, else ~/.cache/stripebench-lab): nothing goes into
# the host's /boot or /lib/modules. The initramfs is rebuilt on every run
# from the binary given. The host's devices are never opened: the arrays live
# in guest memory.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

bad() {
  echo "lab: $*" >&2
  exit 2
}
fail() {
  echo "lab: $*" >&2
  exit 125
}
note() { echo "lab: $*" >&2; }

# ---- arguments --------------------------------------------------------------

KIND=md-raid0
N=4
SIZE_ARG=
CHUNK_ARG=64k
LAYOUT=
GROUP=
PART_START=2048
SLOW=
FAILING=
DEGRADED=
REBUILDING=
SYNC_SPEED=200
CRYPT_FLAGS=
CONTROLLERS=
CLIMITS=()
MEMBER_RATE=
ACCEL=tcg
KEEP=0
OUTDIR=
TIMEOUT=600
MEMORY=
CPUS=2
BIN=

# A size with a binary suffix (k, m, g; KiB, MiB, GiB) in bytes, or empty.
size_bytes() {
  local s=$1 num unit
  if [[ $s =~ ^([0-9]+)([kKmMgG]?)(i?[bB])?$ ]]; then
    num=${BASH_REMATCH[1]}
    unit=${BASH_REMATCH[2],,}
    [ -n "${BASH_REMATCH[3]}" ] && [ "${BASH_REMATCH[3]}" != iB ] && [ "${BASH_REMATCH[3]}" != ib ] && return 1
    [ ${#num} -gt 12 ] && return 1
    case $unit in
      "") echo "$num" ;;
      k) echo $((num << 10)) ;;
      m) echo $((num << 20)) ;;
      g) echo $((num << 30)) ;;
    esac
  else
    return 1
  fi
}

need_value() { [ $# -ge 2 ] || bad "$1 needs a value"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --array) need_value "$@"; KIND=$2; shift 2 ;;
    --members) need_value "$@"; N=$2; shift 2 ;;
    --member-size) need_value "$@"; SIZE_ARG=$2; shift 2 ;;
    --chunk) need_value "$@"; CHUNK_ARG=$2; shift 2 ;;
    --layout) need_value "$@"; LAYOUT=$2; shift 2 ;;
    --group) need_value "$@"; GROUP=$2; shift 2 ;;
    --part-start) need_value "$@"; PART_START=$2; shift 2 ;;
    --slow-member) need_value "$@"; SLOW=$2; shift 2 ;;
    --failing-member) need_value "$@"; FAILING=$2; shift 2 ;;
    --degraded) need_value "$@"; DEGRADED=$2; shift 2 ;;
    --rebuilding) need_value "$@"; REBUILDING=$2; shift 2 ;;
    --sync-speed) need_value "$@"; SYNC_SPEED=$2; shift 2 ;;
    --crypt-flags) need_value "$@"; CRYPT_FLAGS=$2; shift 2 ;;
    --controllers) need_value "$@"; CONTROLLERS=$2; shift 2 ;;
    --controller-limit) need_value "$@"; CLIMITS+=("$2"); shift 2 ;;
    --member-rate) need_value "$@"; MEMBER_RATE=$2; shift 2 ;;
    --kvm) ACCEL=kvm; shift ;;
    --tcg) ACCEL=tcg; shift ;;
    --keep) KEEP=1; shift ;;
    --out) need_value "$@"; OUTDIR=$2; shift 2 ;;
    --timeout) need_value "$@"; TIMEOUT=$2; shift 2 ;;
    --memory) need_value "$@"; MEMORY=$2; shift 2 ;;
    --cpus) need_value "$@"; CPUS=$2; shift 2 ;;
    --bin) need_value "$@"; BIN=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    --) shift; break ;;
    *) bad "unknown option '$1' (see --help; the command goes after --)" ;;
  esac
done
[ $# -gt 0 ] || bad "no COMMAND: give one after --, e.g. scripts/lab.sh -- stripebench topology '\$ARRAY'"

KINDS="md-raid0, md-raid1, md-raid4, md-raid5, md-raid6, md-raid10, dm-stripe, dm-linear, lvm-stripe, lvm-raid1, lvm-raid5, lvm-raid6, lvm-raid10, lvm-over-md-raid1, dm-stripe-over-md, md-on-partitions, dm-on-md, dm-crypt-over-md, btrfs-raid0 or none"
case $KIND in
  md-raid0 | md-raid10 | md-raid1 | dm-stripe | lvm-stripe | md-on-partitions | dm-on-md | btrfs-raid0 | lvm-raid1 | lvm-raid10) MIN_N=2 ;;
  md-raid4 | md-raid5 | lvm-raid5 | dm-crypt-over-md) MIN_N=3 ;;
  md-raid6 | lvm-raid6 | lvm-over-md-raid1) MIN_N=4 ;;
  dm-stripe-over-md) MIN_N=6 ;;
  dm-linear | none) MIN_N=1 ;;
  *) bad "unknown --array '$KIND': $KINDS" ;;
esac
[[ $N =~ ^[0-9]+$ ]] && [ ${#N} -le 4 ] || bad "--members '$N' is not a whole number"
[ "$N" -ge "$MIN_N" ] || bad "--members $N: $KIND needs at least $MIN_N members"
[ "$N" -le 256 ] || bad "--members $N: at most 256"
# md's own limits on the layout names (mdadm --layout), checked here so that a
# typo is one line on the host, not a failed guest.
if [ -n "$LAYOUT" ]; then
  case $KIND in
    md-raid5) [[ $LAYOUT =~ ^(left|right)-(a)?symmetric$|^parity-(first|last)$|^ddf-(zero-restart|N-restart|N-continue)$ ]] ||
      bad "--layout '$LAYOUT': md raid5 takes left-symmetric, left-asymmetric, right-symmetric, right-asymmetric, parity-first or parity-last" ;;
    md-raid6) [[ $LAYOUT =~ ^(left|right)-(a)?symmetric(-6)?$|^parity-(first|last)(-6)?$|^ddf-(zero-restart|N-restart|N-continue)$|^rotating-(zero-restart|N-restart|N-continue)$ ]] ||
      bad "--layout '$LAYOUT': md raid6 takes left-symmetric, right-asymmetric, parity-first ... (and their -6 forms)" ;;
    md-raid10) [[ $LAYOUT =~ ^[nfo][1-9]$ ]] || bad "--layout '$LAYOUT': md raid10 takes nK, fK or oK (near, far, offset copies), e.g. n2 or f2" ;;
    lvm-raid5) [[ $LAYOUT =~ ^(ls|la|rs|ra|n)$ ]] || bad "--layout '$LAYOUT': lvm raid5 takes ls, la, rs, ra or n (raid5_ls ...)" ;;
    lvm-raid6) [[ $LAYOUT =~ ^(zr|nr|nc|ls_6|la_6|rs_6|ra_6)$ ]] || bad "--layout '$LAYOUT': lvm raid6 takes zr, nr, nc, ls_6, la_6, rs_6 or ra_6 (raid6_zr ...)" ;;
    *) bad "--layout: only md-raid5, md-raid6, md-raid10, lvm-raid5 and lvm-raid6 have a layout, not $KIND" ;;
  esac
fi
if [ -n "$GROUP" ]; then
  [ "$KIND" = dm-stripe-over-md ] || bad "--group: only dm-stripe-over-md has groups, not $KIND"
  [[ $GROUP =~ ^[0-9]+$ ]] && [ ${#GROUP} -le 3 ] && [ "$GROUP" -ge 3 ] || bad "--group '$GROUP': a whole number of at least 3 (members per md RAID5)"
fi
[ "$KIND" = dm-stripe-over-md ] && GROUP=${GROUP:-3}
[[ $PART_START =~ ^[0-9]+$ ]] && [ ${#PART_START} -le 7 ] && [ "$PART_START" -ge 64 ] || bad "--part-start '$PART_START': the partitions' first sector, a whole number of at least 64 (default 2048: 1 MiB)"
if [ "$KIND" = dm-stripe-over-md ]; then
  [ $((N % GROUP)) -eq 0 ] && [ $((N / GROUP)) -ge 2 ] || bad "--members $N: dm-stripe-over-md needs a multiple of --group $GROUP, at least 2 groups"
fi
if [ "$KIND" = lvm-over-md-raid1 ]; then
  [ $((N % 2)) -eq 0 ] || bad "--members $N: lvm-over-md-raid1 pairs the members: give an even number"
fi
# btrfs wants room for its chunks on every member.
if [ -z "$SIZE_ARG" ]; then
  if [ "$KIND" = btrfs-raid0 ]; then SIZE_ARG=128m; else SIZE_ARG=64m; fi
fi
SIZE=$(size_bytes "$SIZE_ARG") || bad "--member-size '$SIZE_ARG' is not a size (e.g. 64m; binary units k, m, g)"
CHUNK=$(size_bytes "$CHUNK_ARG") || bad "--chunk '$CHUNK_ARG' is not a size (e.g. 64k)"
[ "$CHUNK" -ge 4096 ] && [ $((CHUNK & (CHUNK - 1))) -eq 0 ] || bad "--chunk $CHUNK_ARG: a power of two of at least 4k"
[ "$SIZE" -ge $((8 << 20)) ] || bad "--member-size $SIZE_ARG: at least 8m"
[ $((SIZE % 4096)) -eq 0 ] || bad "--member-size $SIZE_ARG: a multiple of 4k"
[ "$SIZE" -ge $((CHUNK * 4)) ] || bad "--chunk $CHUNK_ARG: too large for members of $SIZE_ARG (at most a quarter)"
case $KIND in lvm-*) LVM=1 ;; *) LVM=0 ;; esac
[ "$LVM" = 1 ] && { [ "$CHUNK" -le $((4 << 20)) ] || bad "--chunk $CHUNK_ARG: LVM allows at most 4m (its extent size)"; [ "$SIZE" -ge $((16 << 20)) ] || bad "--member-size $SIZE_ARG: LVM needs at least 16m per member"; }
[ "$KIND" = btrfs-raid0 ] && { [ "$SIZE" -ge $((128 << 20)) ] || bad "--member-size $SIZE_ARG: btrfs needs at least 128m per member"; }
SLOW_K= SLOW_MS=
if [ -n "$SLOW" ]; then
  [[ $SLOW =~ ^([0-9]+):([0-9]+)$ ]] || bad "--slow-member '$SLOW': K:MS, e.g. 2:20 (member 2, 20 ms per I/O)"
  SLOW_K=$((10#${BASH_REMATCH[1]})) SLOW_MS=$((10#${BASH_REMATCH[2]}))
  [ "$SLOW_K" -lt "$N" ] || bad "--slow-member $SLOW: there are members 0 to $((N - 1))"
  [ "$SLOW_MS" -ge 1 ] && [ "$SLOW_MS" -le 10000 ] || bad "--slow-member $SLOW: MS from 1 to 10000"
fi
if [ -n "$FAILING" ]; then
  [[ $FAILING =~ ^[0-9]+$ ]] && [ ${#FAILING} -le 4 ] || bad "--failing-member '$FAILING': a member number, from 0"
  FAILING=$((10#$FAILING))
  [ "$FAILING" -lt "$N" ] || bad "--failing-member $FAILING: there are members 0 to $((N - 1))"
fi
# --degraded K / --rebuilding K: a member of an md array with redundancy.
for opt in degraded rebuilding; do
  v=$DEGRADED
  [ $opt = rebuilding ] && v=$REBUILDING
  [ -n "$v" ] || continue
  [[ $v =~ ^[0-9]+$ ]] && [ ${#v} -le 4 ] || bad "--$opt '$v': a member number, from 0"
  [ $((10#$v)) -lt "$N" ] || bad "--$opt $v: there are members 0 to $((N - 1))"
  case $KIND in
    md-raid1 | md-raid4 | md-raid5 | md-raid6 | md-raid10) ;;
    lvm-raid*) bad "--$opt: not for $KIND (the lab fails members of md arrays only, with mdadm; an LVM RAID LV's leg would be failed through dm-raid): use md-raid1, md-raid4, md-raid5, md-raid6 or md-raid10" ;;
    *) bad "--$opt: $KIND has no redundancy the lab can fail a member of: use md-raid1, md-raid4, md-raid5, md-raid6 or md-raid10" ;;
  esac
done
[ -n "$DEGRADED" ] && [ -n "$REBUILDING" ] && bad "--degraded and --rebuilding: give one (--rebuilding fails the member too)"
[ -n "$DEGRADED" ] && DEGRADED=$((10#$DEGRADED))
[ -n "$REBUILDING" ] && REBUILDING=$((10#$REBUILDING))
if [ -n "$CRYPT_FLAGS" ]; then
  [ "$KIND" = dm-crypt-over-md ] || bad "--crypt-flags: only dm-crypt-over-md has a crypt layer, not $KIND"
  for f in ${CRYPT_FLAGS//,/ }; do
    case $f in
      no_read_workqueue | no_write_workqueue | same_cpu_crypt | submit_from_crypt_cpus) ;;
      *) bad "--crypt-flags: '${f//[^a-z_]/?}' is not a dm-crypt flag the lab sets (no_read_workqueue, no_write_workqueue, same_cpu_crypt, submit_from_crypt_cpus; comma-separated)" ;;
    esac
  done
fi
# --controllers C, --controller-limit K:RATE: virtio-scsi disks, throttled per controller.
declare -A CLIMIT=()
CLIMIT_SAID=
if [ -n "$CONTROLLERS" ]; then
  [[ $CONTROLLERS =~ ^[0-9]+$ ]] && [ ${#CONTROLLERS} -le 3 ] && [ "$((10#$CONTROLLERS))" -ge 1 ] ||
    bad "--controllers '$CONTROLLERS': a whole number of at least 1"
  CONTROLLERS=$((10#$CONTROLLERS))
  [ "$CONTROLLERS" -le "$N" ] || bad "--controllers $CONTROLLERS: more controllers than the $N member(s)"
  [ "$CONTROLLERS" -le 32 ] || bad "--controllers $CONTROLLERS: at most 32"
fi
for l in ${CLIMITS[@]+"${CLIMITS[@]}"}; do
  [ -n "$CONTROLLERS" ] || bad "--controller-limit $l: give --controllers C too"
  [[ $l =~ ^([0-9]{1,3}):([0-9]{1,9})([kKmMgG]?)$ ]] ||
    bad "--controller-limit '$l': K:RATE, e.g. 1:20m (controller 1, 20 MiB/s; suffix k, m or g)"
  k=$((10#${BASH_REMATCH[1]}))
  rate=$(size_bytes "${BASH_REMATCH[2]}${BASH_REMATCH[3]}") || bad "--controller-limit '$l': RATE is not a rate"
  [ "$k" -lt "$CONTROLLERS" ] || bad "--controller-limit $l: there are controllers 0 to $((CONTROLLERS - 1))"
  [ -z "${CLIMIT[$k]:-}" ] || bad "--controller-limit $l: controller $k is limited twice"
  [ "$rate" -ge 4096 ] || bad "--controller-limit $l: RATE at least 4k (bytes per second)"
  CLIMIT[$k]=$rate
  CLIMIT_SAID="$CLIMIT_SAID $k:$rate"
done
CLIMIT_SAID=${CLIMIT_SAID# }
MRATE=
if [ -n "$MEMBER_RATE" ]; then
  [ -n "$CONTROLLERS" ] || bad "--member-rate $MEMBER_RATE: give --controllers C too"
  [[ $MEMBER_RATE =~ ^[0-9]{1,9}[kKmMgG]?$ ]] && MRATE=$(size_bytes "$MEMBER_RATE") ||
    bad "--member-rate '$MEMBER_RATE': bytes per second, e.g. 8m (suffix k, m or g)"
  [ "$MRATE" -ge 4096 ] || bad "--member-rate $MEMBER_RATE: at least 4k (bytes per second)"
fi
[[ $SYNC_SPEED =~ ^[0-9]+$ ]] && [ ${#SYNC_SPEED} -le 9 ] && [ "$SYNC_SPEED" -ge 1 ] || bad "--sync-speed '$SYNC_SPEED': KB/s, a whole number of at least 1"
[[ $TIMEOUT =~ ^[0-9]+$ ]] && [ "$TIMEOUT" -ge 10 ] && [ ${#TIMEOUT} -le 6 ] || bad "--timeout '$TIMEOUT': whole seconds, at least 10"
[[ $CPUS =~ ^[0-9]+$ ]] && [ "$CPUS" -ge 1 ] && [ "$CPUS" -le 64 ] || bad "--cpus '$CPUS': from 1 to 64"
MEMBERS_MB=$(((N * SIZE + (1 << 20) - 1) >> 20))
# On virtio-scsi disks the members are host files, not guest memory.
[ -n "$CONTROLLERS" ] && MEMBERS_MB=0
if [ -n "$MEMORY" ]; then
  [[ $MEMORY =~ ^[0-9]+$ ]] && [ ${#MEMORY} -le 7 ] || bad "--memory '$MEMORY': MiB, a whole number"
  [ $((MEMBERS_MB + 512)) -le "$MEMORY" ] ||
    bad "$N members of $SIZE_ARG ($MEMBERS_MB MiB) do not fit in a guest of $MEMORY MiB: they live in its memory, with 512 MiB for the rest; use fewer or smaller members, or more --memory"
else
  MEMORY=$((MEMBERS_MB + 768))
  [ "$MEMORY" -ge 1024 ] || MEMORY=1024
fi
HOST_AVAIL_MB=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
[ "$MEMORY" -le $((HOST_AVAIL_MB * 3 / 4)) ] ||
  bad "a guest of $MEMORY MiB (the members, $MEMBERS_MB MiB, live in its memory) does not fit in three quarters of this host's available $HOST_AVAIL_MB MiB: use fewer or smaller members, or a smaller --memory"
if [ -n "$BIN" ]; then
  [ -f "$BIN" ] && [ -x "$BIN" ] || bad "--bin $BIN is not an executable file"
fi
if [ -n "$OUTDIR" ]; then
  [ -e "$OUTDIR" ] && ! [ -d "$OUTDIR" ] && bad "--out $OUTDIR exists and is not a directory"
fi
COMMAND="$*"

# ---- host tools -------------------------------------------------------------

# tool -> Debian package
declare -A PKG=(
  [qemu-system-x86_64]=qemu-system-x86 [busybox]=busybox-static [mdadm]=mdadm
  [dmsetup]=dmsetup [lvm]=lvm2 [mkfs.btrfs]=btrfs-progs [cpio]=cpio
  [mkfs.ext4]=e2fsprogs [tune2fs]=e2fsprogs
  [apt-get]=apt [dpkg-deb]=dpkg
)
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ]; }
path_of() { command -v "$1" 2>/dev/null || { [ -x "/usr/sbin/$1" ] && echo "/usr/sbin/$1"; } || echo "/sbin/$1"; }
missing=()
for t in "${!PKG[@]}"; do have "$t" || missing+=("${PKG[$t]}"); done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || fail "missing ${missing[*]}: install them (apt-get install ${missing[*]}) or run as root to have them installed"
  note "installing ${missing[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1 || true
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
      fail "could not install ${missing[*]} with apt-get"
  fi
fi
for t in "${!PKG[@]}"; do have "$t" || fail "$t is still missing after installing ${PKG[$t]}"; done

# ---- the kernel, cached -----------------------------------------------------

CACHE=${STRIPEBENCH_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stripebench-lab}
mkdir -p "$CACHE" || fail "cannot create the cache directory $CACHE"
# One lab at a time fetches the kernel: tests boot several guests in parallel.
exec 9>"$CACHE/.lock"
flock 9 2>/dev/null || true
kernel_pkg() {
  apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}
KPKG=${STRIPEBENCH_LAB_KERNEL:-$(kernel_pkg)}
if [ -z "$KPKG" ]; then
  apt-get update -qq >/dev/null 2>&1 || true
  KPKG=$(kernel_pkg)
fi
if [ -z "$KPKG" ]; then
  # Offline: the newest kernel already unpacked here.
  KPKG=$(cd "$CACHE" && ls -d linux-image-*/ 2>/dev/null | sed 's,/$,,' | sort -V | tail -1)
fi
[ -n "$KPKG" ] || fail "no Debian kernel package found (apt-cache depends linux-image-amd64 names none; run apt-get update)"
KDIR=$CACHE/$KPKG
fetch_kernel() {
  note "fetching $KPKG into $CACHE (apt-get download; unpacked there, never installed)"
  rm -rf "$KDIR" "$CACHE"/dl && mkdir -p "$CACHE/dl" "$KDIR"
  (cd "$CACHE/dl" && apt-get download "$KPKG" >/dev/null 2>&1) ||
    { apt-get update -qq >/dev/null 2>&1 || true; (cd "$CACHE/dl" && apt-get download "$KPKG" >&2); } ||
    return 1
  dpkg-deb -x "$CACHE"/dl/"$KPKG"_*.deb "$KDIR" || return 1
  rm -rf "$CACHE/dl"
  # The package has no modules.dep (depmod runs at install): make one.
  busybox depmod -b "$KDIR" "$(ls "$KDIR/lib/modules")" || return 1
  touch "$KDIR/.ready"
}
if ! [ -f "$KDIR/.ready" ] && ! fetch_kernel; then
  rm -rf "$KDIR" "$CACHE/dl"
  # No registry (offline), or the package is gone: a kernel fetched before.
  old=$(cd "$CACHE" && ls -d linux-image-*/.ready 2>/dev/null | sed 's,/.ready$,,' | sort -V | tail -1)
  [ -n "$old" ] || fail "could not fetch $KPKG (apt-get download, dpkg-deb -x), and no kernel is cached in $CACHE"
  note "could not fetch $KPKG: using $old, fetched before"
  KPKG=$old
  KDIR=$CACHE/$KPKG
fi
flock -u 9 2>/dev/null || true
exec 9>&-
KVER=$(ls "$KDIR/lib/modules")
VMLINUZ=$KDIR/boot/vmlinuz-$KVER
[ -f "$VMLINUZ" ] || fail "$VMLINUZ missing: remove $KDIR and run again"

# ---- the stripebench binary -------------------------------------------------

if [ -z "$BIN" ]; then
  note "building stripebench (cargo build --release)"
  (cd "$ROOT" && cargo build --release --quiet >&2) || fail "cargo build --release failed"
  BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/stripebench
  [ -x "$BIN" ] || fail "no binary at $BIN after cargo build"
fi

# ---- the work directory, removed on every exit path -------------------------

WORK=$(mktemp -d "${TMPDIR:-/tmp}/stripebench-lab.XXXXXX")
QPID=
cleanup() {
  local rc=$?
  if [ -n "$QPID" ] && kill -0 "$QPID" 2>/dev/null; then
    kill -KILL "$QPID" 2>/dev/null || true
    wait "$QPID" 2>/dev/null || true
    note "stopped (exit $rc): the guest was killed"
  fi
  if [ "$KEEP" = 1 ]; then
    note "kept the work directory $WORK (initramfs, console.log, share/)"
  else
    rm -rf "$WORK"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

STAGE=$WORK/root
SHARE=$WORK/share
mkdir -p "$STAGE"/{bin,sbin,usr/bin,usr/sbin,lib,lab,etc} "$SHARE/out"
chmod 0777 "$SHARE/out"

# A host binary and the libraries ldd names, at the same paths in the guest.
declare -A COPIED=()
copy_with_libs() {
  local src=$1 dest=$2 lib
  if [ "${src##*/}" = stripebench ] && command -v strip >/dev/null; then
    strip -o "$STAGE$dest" "$src" 2>/dev/null || cp -L "$src" "$STAGE$dest"
  else
    cp -L "$src" "$STAGE$dest"
  fi
  for lib in $(ldd "$src" 2>/dev/null | awk '/=> \// {print $3} /^\t\/[^ ]+ \(/ {print $1}'); do
    [ -n "${COPIED[$lib]:-}" ] && continue
    COPIED[$lib]=1
    mkdir -p "$STAGE$(dirname "$lib")"
    cp -L "$lib" "$STAGE$lib"
  done
}
copy_with_libs "$(path_of busybox)" /bin/busybox
copy_with_libs "$BIN" /usr/bin/stripebench
for t in mdadm dmsetup lvm mkfs.btrfs mkfs.ext4 tune2fs; do copy_with_libs "$(path_of "$t")" "/usr/sbin/$t"; done
# The seed experiments, so that `stripebench sweep --config /configs/...` runs there.
cp -R "$ROOT/configs" "$STAGE/configs"
for t in pvcreate vgcreate lvcreate pvs vgs lvs vgchange vgmknodes lvremove vgremove; do ln -s lvm "$STAGE/usr/sbin/$t"; done
# libc's name service and the lvm/mdadm run directories are not needed; a
# minimal /etc keeps tools that read it quiet.
echo "root:x:0:0:root:/root:/bin/sh" >"$STAGE/etc/passwd"
echo "root:x:0:" >"$STAGE/etc/group"

# Kernel modules and what modules.dep says they need.
# null_blk is copied in, not loaded: a command loads it with the options it
# wants (poll_queues=N for polled I/O, stripebench --hipri).
MODS="loop md-mod raid0 raid1 raid10 dm-mod dm-delay null_blk virtio_pci 9pnet_virtio 9p"
[ -n "$CONTROLLERS" ] && MODS="$MODS virtio_scsi sd_mod"
[ "$KIND" = btrfs-raid0 ] && MODS="$MODS crc32c_generic btrfs"
# Parity (md raid4/5/6 and dm-raid's raid5/6) is md's raid456 personality,
# which wants the async xor/pq helpers (modules.dep names them) and crc32c;
# LVM's RAID LVs are device-mapper's dm-raid over md's personalities.
case $KIND in
  md-raid4 | md-raid5 | md-raid6 | dm-stripe-over-md) MODS="$MODS crc32c_generic raid456" ;;
  dm-crypt-over-md) MODS="$MODS crc32c_generic raid456 dm-crypt xts ecb" ;;
  lvm-raid*) MODS="$MODS crc32c_generic raid456 dm-raid" ;;
esac
MDIR=lib/modules/$KVER
mkdir -p "$STAGE/$MDIR"
declare -A WANT=()
add_mod() {
  local m=$1 line dep
  line=$(grep -E "/${m//_/[-_]}\.ko(\.[a-z]+)?:" "$KDIR/$MDIR/modules.dep" | head -1) ||
    fail "module $m is not in $KPKG"
  [ -n "${WANT[${line%%:*}]:-}" ] && return 0
  WANT[${line%%:*}]=1
  for dep in ${line#*:}; do add_mod "$(basename "${dep%%.ko*}")"; done
}
for m in $MODS; do add_mod "$m"; done
for f in "${!WANT[@]}"; do
  mkdir -p "$STAGE/$MDIR/$(dirname "$f")"
  cp "$KDIR/$MDIR/$f" "$STAGE/$MDIR/$f"
  grep -E "^$f:" "$KDIR/$MDIR/modules.dep" >>"$STAGE/$MDIR/modules.dep"
done

# What the guest is to build, and the command.
{
  echo "KIND=$KIND"
  echo "N=$N"
  echo "SIZE=$SIZE"
  echo "CHUNK=$CHUNK"
  echo "LAYOUT=$LAYOUT"
  echo "GROUP=$GROUP"
  echo "PART_START=$PART_START"
  echo "SLOW_K=$SLOW_K"
  echo "SLOW_MS=$SLOW_MS"
  echo "FAILING=$FAILING"
  echo "DEGRADED=$DEGRADED"
  echo "REBUILDING=$REBUILDING"
  echo "SYNC_SPEED=$SYNC_SPEED"
  echo "CRYPT_FLAGS=$CRYPT_FLAGS"
  echo "CONTROLLERS=$CONTROLLERS"
  echo "CLIMIT_SAID='$CLIMIT_SAID'"
} >"$STAGE/lab/env"
printf '%s\n' "$COMMAND" >"$STAGE/lab/cmd"

cat >"$STAGE/init" <<'GUEST'
#!/bin/busybox sh
# The lab guest's init: build the array, run the command, power off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
/bin/busybox mkdir -p /proc /sys /dev /run /tmp /mnt /share /members
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mkdir -p /run/lvm /run/lock/lvm /run/mdadm /etc/lvm
. /lab/env
T0=$(cut -d' ' -f1 /proc/uptime)
say() { echo "LAB: $*"; }
# A setup failure: one marked line on the console, then power off.
die() {
  echo "LAB-FAILED: $*"
  sync
  poweroff -f
  sleep 60
}
run() {
  out=$("$@" 2>&1) || die "$* failed: $(echo "$out" | tail -3 | tr '\n' ' ')"
}
modprobe virtio_pci || die "modprobe virtio_pci failed"
modprobe 9pnet_virtio && modprobe 9p || die "modprobe 9p failed"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 lab /share || die "cannot mount the host share"
modprobe loop max_loop=$((N + 8)) || die "modprobe loop failed"
for m in md-mod raid0 raid1 raid10 dm-mod dm-delay; do
  modprobe "$m" || die "modprobe $m failed"
done
case $KIND in
  md-raid4 | md-raid5 | md-raid6 | dm-stripe-over-md) MODS="crc32c_generic raid456" ;;
  dm-crypt-over-md) MODS="crc32c_generic raid456 dm-crypt xts ecb" ;;
  lvm-raid*) MODS="crc32c_generic raid456 dm-raid" ;;
  *) MODS= ;;
esac
for m in $MODS; do
  modprobe "$m" || die "modprobe $m failed"
done
# No udev in the guest: LVM must neither wait for it nor ask it for devices.
LVMCONF='devices{obtain_device_list_from_udev=0} activation{udev_sync=0 udev_rules=0 monitoring=0}'
SECT=$((SIZE / 512))
CSECT=$((CHUNK / 512))

# The kernel name of a dm device (dm-N) by its dm name.
dmdev() { echo "/dev/$(dmsetup info -c --noheadings -o blkdevname "$1" | tr -d ' ')"; }
# The size of a block device in 512-byte sectors.
sectors() { cat "/sys/class/block/${1#/dev/}/size"; }

# With --controllers the members are virtio-scsi disks: wait for all N, and
# name each by its wwn (the host gave member i 0x5000c5000000NNNN, NNNN = i + 1),
# read from sysfs (no udev here, so no /dev/disk/by-id).
DISKS=
MEMBER_CONTROLLER=
if [ -n "$CONTROLLERS" ]; then
  modprobe virtio_scsi || die "modprobe virtio_scsi failed"
  modprobe sd_mod || die "modprobe sd_mod failed"
  n=0
  while [ "$(ls -d /sys/block/sd* 2>/dev/null | wc -l)" -lt "$N" ]; do
    [ $n -lt 600 ] || die "only $(ls -d /sys/block/sd* 2>/dev/null | wc -l) of $N virtio-scsi disks appeared in 60 s"
    sleep 0.1
    n=$((n + 1))
  done
  i=0
  while [ $i -lt "$N" ]; do
    want=$(printf 'naa.5000c5000000%04x' $((i + 1)))
    found=
    for b in /sys/block/sd*; do
      [ "$(cat $b/device/wwid 2>/dev/null)" = "$want" ] && found=/dev/${b##*/}
    done
    [ -n "$found" ] || die "no disk has the wwn of member $i ($want)"
    n=0
    while ! [ -b "$found" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
    [ -b "$found" ] || die "$found (member $i) has no device node"
    DISKS="$DISKS $found"
    MEMBER_CONTROLLER="$MEMBER_CONTROLLER $((i % CONTROLLERS))"
    i=$((i + 1))
  done
  DISKS=${DISKS# }
  MEMBER_CONTROLLER=${MEMBER_CONTROLLER# }
else
  mount -t tmpfs -o size=$((N * SIZE / 1048576 + 16))m tmpfs /members
fi
# Members hold data, never holes: a hole reads as zeros without reaching a
# medium, which stripebench refuses as a device's speed. 1 MiB of random
# bytes, repeated (the guest's memory already holds every member whole).
dd if=/dev/urandom of=/tmp/pattern bs=65536 count=16 2>/dev/null || die "cannot make the members' data"
fill() {
  m=$((SIZE >> 20))
  r=$(((SIZE & 1048575) / 4096))
  while [ $m -gt 0 ]; do
    cat /tmp/pattern || return 1
    m=$((m - 1))
  done >"$1" || return 1
  [ $r -eq 0 ] || dd if=/tmp/pattern bs=4096 count=$r 2>/dev/null >>"$1"
}
PARTS=0
case $KIND in md-on-partitions | dm-linear) PARTS=1 ;; esac
LOOPS=
MEMBERS=
# Devices under a member behind dm-delay or dm-error: they carry the same
# signatures as the member, so LVM must not look at them.
UNDER=
i=0
while [ $i -lt "$N" ]; do
  if [ -n "$CONTROLLERS" ]; then
    # A disk: its data came from the host (random bytes), its partition is
    # made as on a loop device.
    disk=$(echo $DISKS | cut -d' ' -f$((i + 1)))
    dev=$disk
    if [ $PARTS = 1 ]; then
      printf 'o\nn\np\n1\n%s\n\nw\n' "$PART_START" | fdisk $disk >/dev/null 2>&1
      blockdev --rereadpt $disk >/dev/null 2>&1
      dev=${disk}1
      n=0
      while ! [ -b $dev ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
      [ -b $dev ] || die "no partition $dev on $disk"
    fi
    LOOPS="$LOOPS $disk"
  elif [ $PARTS = 1 ]; then
    f=/members/m$i
    fill $f || die "cannot create $f"
    # One partition from --part-start (default sector 2048: 1 MiB) to the
    # end (MBR), as a disk given to md or LVM.
    printf 'o\nn\np\n1\n%s\n\nw\n' "$PART_START" | fdisk $f >/dev/null 2>&1
    run losetup -P /dev/loop$i $f
    dev=/dev/loop${i}p1
    n=0
    while ! [ -b $dev ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
    [ -b $dev ] || die "no partition $dev on /dev/loop$i"
    LOOPS="$LOOPS /dev/loop$i"
  else
    f=/members/m$i
    fill $f || die "cannot create $f"
    run losetup /dev/loop$i $f
    dev=/dev/loop$i
    LOOPS="$LOOPS /dev/loop$i"
  fi
  if [ "$FAILING" = "$i" ]; then
    s=$(sectors $dev)
    a=$((s / 2 / 8 * 8))
    b=$((s * 3 / 4 / 8 * 8))
    LAB_FAIL_START=$((a * 512))
    LAB_FAIL_END=$((b * 512))
    printf '0 %s linear %s 0\n%s %s error\n%s %s linear %s %s\n' \
      $a $dev $a $((b - a)) $b $((s - b)) $dev $b | dmsetup create fail$i || die "dmsetup create fail$i failed"
    UNDER="$UNDER $dev"
    dev=$(dmdev fail$i)
  fi
  if [ "$SLOW_K" = "$i" ]; then
    echo "0 $(sectors $dev) delay $dev 0 $SLOW_MS" | dmsetup create slow$i || die "dmsetup create slow$i (dm-delay) failed"
    UNDER="$UNDER $dev"
    [ "$FAILING" = "$i" ] && UNDER="$UNDER /dev/mapper/fail$i"
    dev=$(dmdev slow$i)
  fi
  MEMBERS="$MEMBERS $dev"
  i=$((i + 1))
done
MEMBERS=${MEMBERS# }
LOOPS=${LOOPS# }

# md LEVEL [mdN] MEMBER...: an md array (/dev/md0 unless named), clean from
# the start (--assume-clean: a resync would be I/O nobody asked to measure).
md() {
  level=$1
  shift
  name=/dev/md0
  case $1 in /dev/md*) name=$1; shift ;; esac
  opts="--chunk=$((CHUNK / 1024))K"
  [ "$level" = 1 ] && opts=
  [ "$level" = 0 ] || opts="$opts --assume-clean"
  case $level in 5 | 6 | 10) [ -z "$LAYOUT" ] || opts="$opts --layout=$LAYOUT" ;; esac
  run mdadm --create $name --run --quiet --metadata=1.2 --homehost=lab --level=$level --raid-devices=$# $opts "$@"
}
# A dm "striped" table of the devices given, each cut to a whole number of
# chunks of the smallest: dmstripe NAME DEV...
dmstripe() {
  name=$1
  shift
  per=0
  args=
  for m in "$@"; do
    s=$(($(sectors $m) / CSECT * CSECT))
    [ $per = 0 ] || [ $s -lt $per ] && per=$s
  done
  for m in "$@"; do args="$args $m 0"; done
  echo "0 $((per * $#)) striped $# $CSECT$args" | dmsetup create $name || die "dmsetup create $name failed"
}
# LVM's configuration: never look at what lies under a delayed or failing
# member, nor (for a stack) at the md legs' own members.
lvmconf() {
  filter=
  for u in $UNDER "$@"; do filter="$filter\"r|^$u\$|\", "; done
  LVMCONF="$LVMCONF devices{global_filter=[${filter}\"a|.*|\"]}"
}
LEGS=
case $KIND in
  md-raid0 | md-on-partitions) md 0 $MEMBERS && ARRAY=/dev/md0 ;;
  md-raid10) md 10 $MEMBERS && ARRAY=/dev/md0 ;;
  md-raid1) md 1 $MEMBERS && ARRAY=/dev/md0 ;;
  md-raid4) md 4 $MEMBERS && ARRAY=/dev/md0 ;;
  md-raid5) md 5 $MEMBERS && ARRAY=/dev/md0 ;;
  md-raid6) md 6 $MEMBERS && ARRAY=/dev/md0 ;;
  lvm-raid1 | lvm-raid5 | lvm-raid6 | lvm-raid10)
    lvmconf
    run lvm pvcreate -q --config "$LVMCONF" $MEMBERS
    run lvm vgcreate -q --config "$LVMCONF" lab $MEMBERS
    level=${KIND#lvm-}
    type=$level
    [ -z "$LAYOUT" ] || type=${level}_$LAYOUT
    # Stripes: the data members (raid5: N-1, raid6: N-2, raid10: N/2 pairs);
    # raid1 has copies (-m: mirrors beyond the first) and no chunk. Each LV
    # takes one extent per member for its metadata (rmeta): ask for what is
    # left, in extents, and --nosync: no initial resync to measure.
    case $level in
      raid1) geo="-m $((N - 1))" ;;
      raid5) geo="-i $((N - 1)) -I $((CHUNK / 1024))k" ;;
      raid6) geo="-i $((N - 2)) -I $((CHUNK / 1024))k" ;;
      raid10) geo="-i $((N / 2)) -m 1 -I $((CHUNK / 1024))k" ;;
    esac
    # dm-raid refuses --nosync for raid6 (its Q syndrome must be computed):
    # that one resyncs, and the command starts when it is in sync.
    sync=--nosync
    [ "$level" = raid6 ] && sync=
    run lvm lvcreate -q --config "$LVMCONF" -y --type $type $geo $sync -l 100%FREE -n raid lab
    n=0
    until [ "$(lvm lvs --config "$LVMCONF" --noheadings -o sync_percent lab/raid 2>/dev/null | tr -d ' ')" = 100.00 ]; do
      [ $n -lt 3000 ] || die "lab/raid did not finish its initial resync in 300 s"
      sleep 0.1
      n=$((n + 1))
    done
    ARRAY=/dev/mapper/lab-raid
    ;;
  lvm-over-md-raid1)
    # Pairs in member order: (m0 m1) (m2 m3) ...: an LVM striped LV over them.
    set -- $MEMBERS
    k=1
    while [ $# -gt 0 ]; do
      md 1 /dev/md$k "$1" "$2"
      LEGS="$LEGS /dev/md$k"
      shift 2
      k=$((k + 1))
    done
    lvmconf $MEMBERS
    run lvm pvcreate -q --config "$LVMCONF" $LEGS
    run lvm vgcreate -q --config "$LVMCONF" lab $LEGS
    run lvm lvcreate -q --config "$LVMCONF" -y -i $((N / 2)) -I $((CHUNK / 1024))k -l 100%FREE -n stripe lab
    ARRAY=/dev/mapper/lab-stripe
    ;;
  dm-stripe-over-md)
    # Groups of GROUP members in order, each an md RAID5; dm-stripe over them.
    set -- $MEMBERS
    k=1
    while [ $# -gt 0 ]; do
      g=
      j=0
      while [ $j -lt "$GROUP" ]; do g="$g $1"; shift; j=$((j + 1)); done
      md 5 /dev/md$k $g
      LEGS="$LEGS /dev/md$k"
      k=$((k + 1))
    done
    dmstripe stripe $LEGS
    ARRAY=/dev/mapper/stripe
    ;;
  dm-stripe)
    dmstripe stripe $MEMBERS
    ARRAY=/dev/mapper/stripe
    ;;
  dm-linear)
    start=0
    table=
    for m in $MEMBERS; do
      s=$(sectors $m)
      table="$table$start $s linear $m 0
"
      start=$((start + s))
    done
    printf '%s' "$table" | dmsetup create linear || die "dmsetup create linear failed"
    ARRAY=/dev/mapper/linear
    ;;
  dm-crypt-over-md)
    md 5 $MEMBERS
    # 64 random bytes (aes-xts-plain64's two 256-bit keys) in hex, on a
    # pipe: never on a command line, where ps would show it.
    key=$(head -c 64 /dev/urandom | od -An -tx1 -v | tr -d ' \n')
    [ ${#key} -eq 128 ] || die "cannot draw the dm-crypt key"
    flags=
    [ -z "$CRYPT_FLAGS" ] || flags=" $(echo "$CRYPT_FLAGS" | tr ',' '\n' | grep -c .) $(echo "$CRYPT_FLAGS" | tr ',' ' ')"
    echo "0 $(sectors /dev/md0) crypt aes-xts-plain64 $key 0 /dev/md0 0$flags" | dmsetup create labcrypt ||
      die "dmsetup create labcrypt (dm-crypt) failed"
    key=
    LEGS=/dev/md0
    ARRAY=/dev/mapper/labcrypt
    ;;
  dm-on-md)
    md 0 $MEMBERS
    echo "0 $(sectors /dev/md0) linear /dev/md0 0" | dmsetup create onmd || die "dmsetup create onmd failed"
    ARRAY=/dev/mapper/onmd
    ;;
  lvm-stripe)
    lvmconf
    run lvm pvcreate -q --config "$LVMCONF" $MEMBERS
    run lvm vgcreate -q --config "$LVMCONF" lab $MEMBERS
    run lvm lvcreate -q --config "$LVMCONF" -y -i $N -I $((CHUNK / 1024))k -l 100%FREE -n stripe lab
    ARRAY=/dev/mapper/lab-stripe
    ;;
  btrfs-raid0)
    modprobe crc32c_generic
    modprobe btrfs || die "modprobe btrfs failed"
    # -K: no discard, which would punch the members back into holes.
    run mkfs.btrfs -q -f -K -d raid0 -m raid0 $MEMBERS
    opts=
    for m in $MEMBERS; do opts="$opts,device=$m"; done
    run mount -t btrfs -o "${opts#,}" ${MEMBERS%% *} /mnt
    ARRAY=/mnt
    ;;
  none) ARRAY= ;;
esac
dmsetup mknodes >/dev/null 2>&1
[ -z "$ARRAY" ] || [ -e "$ARRAY" ] || die "$ARRAY did not appear"
# A member failed and removed (--degraded), and added back to recover
# (--rebuilding), with md's resync speed held low so that the recovery is
# still running when the command starts.
K=$DEGRADED$REBUILDING
if [ -n "$K" ]; then
  m=$(echo $MEMBERS | cut -d' ' -f$((K + 1)))
  MD=/sys/block/md0/md
  run mdadm $ARRAY --fail $m
  n=0
  until mdadm $ARRAY --remove $m >/dev/null 2>&1; do
    [ $n -lt 100 ] || die "mdadm $ARRAY --remove $m: still busy after 10 s"
    sleep 0.1
    n=$((n + 1))
  done
  [ "$(cat $MD/degraded)" -ge 1 ] || die "$ARRAY is not degraded after $m was removed"
  if [ -n "$REBUILDING" ]; then
    echo 1 >$MD/sync_speed_min || die "cannot write $MD/sync_speed_min"
    echo "$SYNC_SPEED" >$MD/sync_speed_max || die "cannot write $MD/sync_speed_max"
    # --zero-superblock: the member comes back as a new disk (a full
    # recovery), not as the one removed (md would refuse it or re-add it
    # from a bitmap the array does not have).
    mdadm --zero-superblock $m >/dev/null 2>&1
    run mdadm $ARRAY --add $m
    n=0
    until [ "$(cat $MD/sync_action)" = recover ]; do
      [ $n -lt 100 ] || die "$ARRAY did not start recovering $m in 10 s (sync_action $(cat $MD/sync_action))"
      sleep 0.1
      n=$((n + 1))
    done
  fi
  say "member $K ($m): $(cat $MD/degraded) missing, sync_action $(cat $MD/sync_action)"
fi
T1=$(cut -d' ' -f1 /proc/uptime)
{
  echo "ARRAY=$ARRAY"
  echo "MEMBERS=$MEMBERS"
  echo "LOOPS=$LOOPS"
  LEGS=${LEGS# }
  echo "LEGS=$LEGS"
  [ -z "$CONTROLLERS" ] || echo "CONTROLLERS=$CONTROLLERS virtio-scsi controller(s); member controllers $MEMBER_CONTROLLER${CLIMIT_SAID:+; limited (K:bytes/s) $CLIMIT_SAID}"
  [ -z "$SLOW_K" ] || echo "SLOW=member $SLOW_K ($(echo $MEMBERS | cut -d' ' -f$((SLOW_K + 1)))) behind dm-delay, $SLOW_MS ms per I/O"
  [ -z "$DEGRADED" ] || echo "DEGRADED=member $DEGRADED ($(echo $MEMBERS | cut -d' ' -f$((DEGRADED + 1)))) failed and removed"
  [ -z "$REBUILDING" ] || echo "REBUILDING=member $REBUILDING ($(echo $MEMBERS | cut -d' ' -f$((REBUILDING + 1)))) failed, removed and added back: recovering at most $SYNC_SPEED KB/s"
  [ -z "$FAILING" ] || echo "FAILING=member $FAILING ($(echo $MEMBERS | cut -d' ' -f$((FAILING + 1)))): I/O fails (dm-error) in bytes [$LAB_FAIL_START, $LAB_FAIL_END)"
  echo "BOOT=$T0 $T1"
} >/share/info
say "ARRAY=$ARRAY MEMBERS=$MEMBERS"

export ARRAY MEMBERS LOOPS LEGS OUT=/share/out LAB_KIND=$KIND LAB_CHUNK=$CHUNK LAB_LAYOUT=$LAYOUT LAB_GROUP=$GROUP
export LAB_SLOW=${SLOW_K:+$SLOW_K:$SLOW_MS} LAB_FAILING=$FAILING
export LAB_DEGRADED=$DEGRADED LAB_REBUILDING=$REBUILDING
export LAB_CONTROLLERS=$CONTROLLERS LAB_MEMBER_CONTROLLER="$MEMBER_CONTROLLER" LAB_CONTROLLER_LIMIT="$CLIMIT_SAID"
export LAB_FAIL_START=${LAB_FAIL_START:-} LAB_FAIL_END=${LAB_FAIL_END:-}
export HOME=/root TMPDIR=/tmp
mkdir -p /root
cd /root
sh /lab/cmd >/share/stdout 2>/share/stderr </dev/null
echo $? >/share/rc
sync
umount /share
say "done"
poweroff -f
sleep 60
GUEST
chmod +x "$STAGE/init"

(cd "$STAGE" && find . | cpio -o -H newc --quiet) >"$WORK/initrd.cpio" || fail "cpio failed"

# ---- the guest --------------------------------------------------------------

case $ACCEL in
  tcg) QACCEL=(-accel tcg,thread=multi -cpu max) ;;
  kvm)
    [ -w /dev/kvm ] || fail "--kvm: /dev/kvm is missing or not writable here; use --tcg"
    QACCEL=(-accel kvm -cpu ${LAB_KVM_CPU:-host})
    ;;
esac
# --controllers: C virtio-scsi controllers, member i's raw file on controller
# i mod C, through controller K's throttle group when it has a limit.
QDISKS=()
if [ -n "$CONTROLLERS" ]; then
  head -c 1048576 /dev/urandom >"$WORK/pattern" || fail "cannot read /dev/urandom"
  for ((k = 0; k < CONTROLLERS; k++)); do
    QDISKS+=(-device "virtio-scsi-pci,id=scsi$k")
    [ -z "${CLIMIT[$k]:-}" ] || QDISKS+=(-object "throttle-group,id=tg$k,x-bps-total=${CLIMIT[$k]}")
  done
  for ((i = 0; i < N; i++)); do
    f=$WORK/disk$i.raw
    {
      for ((m = 0; m < SIZE >> 20; m++)); do cat "$WORK/pattern"; done
      r=$(((SIZE & 1048575) / 4096))
      [ $r -eq 0 ] || head -c $((r * 4096)) "$WORK/pattern"
    } >"$f" || fail "cannot write the disk file $f"
    k=$((i % CONTROLLERS))
    QDISKS+=(-blockdev "driver=file,node-name=f$i,filename=$f,cache.direct=off")
    QDISKS+=(-blockdev "driver=raw,node-name=r$i,file=f$i")
    top=r$i
    if [ -n "$MRATE" ]; then
      QDISKS+=(-object "throttle-group,id=tgm$i,x-bps-total=$MRATE")
      QDISKS+=(-blockdev "driver=throttle,node-name=m$i,throttle-group=tgm$i,file=$top")
      top=m$i
    fi
    if [ -n "${CLIMIT[$k]:-}" ]; then
      QDISKS+=(-blockdev "driver=throttle,node-name=t$i,throttle-group=tg$k,file=$top")
      top=t$i
    fi
    QDISKS+=(-device "scsi-hd,bus=scsi$k.0,drive=$top,serial=$(printf 'lab-m%03d' $i),wwn=$(printf '0x5000c5000000%04x' $((i + 1)))")
  done
fi
CONSOLE=$WORK/console.log
note "$KIND, $N member(s) of $SIZE_ARG, chunk $CHUNK_ARG${LAYOUT:+, layout $LAYOUT}${GROUP:+, groups of $GROUP}${SLOW:+, slow member $SLOW}${FAILING:+, failing member $FAILING}${DEGRADED:+, member $DEGRADED removed}${REBUILDING:+, member $REBUILDING rebuilding}${CONTROLLERS:+, on $CONTROLLERS virtio-scsi controller(s)}${CLIMIT_SAID:+ limited $CLIMIT_SAID B/s}${MRATE:+, each disk at most $MRATE B/s}; kernel $KVER; $(echo "$ACCEL" | tr a-z A-Z), $CPUS vCPU(s), $MEMORY MiB"
START=$(date +%s.%N)
qemu-system-x86_64 "${QACCEL[@]}" -smp "$CPUS" -m "$MEMORY" -machine q35 \
  -kernel "$VMLINUZ" -initrd "$WORK/initrd.cpio" \
  -append "console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init" \
  -display none -monitor none -serial "file:$CONSOLE" -nic none -no-reboot \
  -fsdev "local,id=lab,path=$SHARE,security_model=none" \
  -device virtio-9p-pci,fsdev=lab,mount_tag=lab \
  ${QDISKS[@]+"${QDISKS[@]}"} \
  </dev/null >"$WORK/qemu.log" 2>&1 &
QPID=$!
# Files the command wrote under $OUT, into --out DIR (also what a guest that
# failed left there).
bring_out() {
  [ -n "$OUTDIR" ] || return 0
  mkdir -p "$OUTDIR" && cp -R "$SHARE/out/." "$OUTDIR/"
}
deadline=$((SECONDS + TIMEOUT))
while kill -0 "$QPID" 2>/dev/null; do
  if [ $SECONDS -ge $deadline ]; then
    kill -KILL "$QPID" 2>/dev/null || true
    wait "$QPID" 2>/dev/null || true
    QPID=
    if [ -s "$CONSOLE" ]; then
      note "the guest did not finish within --timeout $TIMEOUT s ($(echo "$ACCEL" | tr a-z A-Z)): killed; its console ended with:"
      tail -n 20 "$CONSOLE" | sed 's/^/  | /' >&2
    else
      hint=
      [ "$ACCEL" = kvm ] && hint=" (KVM hangs so on these machines: use --tcg)"
      note "the guest did not finish within --timeout $TIMEOUT s ($(echo "$ACCEL" | tr a-z A-Z)) and its console stayed empty: it never reached the kernel$hint; killed"
    fi
    [ -s "$SHARE/stderr" ] && { note "the command's stderr so far:"; tail -n 20 "$SHARE/stderr" | sed 's/^/  | /' >&2; }
    bring_out || true
    exit 125
  fi
  sleep 0.2
done
wait "$QPID" && qrc=0 || qrc=$?
QPID=
END=$(date +%s.%N)
ACCEL_SAID="$(echo "$ACCEL" | tr a-z A-Z)"
if [ -f "$SHARE/info" ]; then
  sed -n 's/^\(ARRAY\|MEMBERS\|LEGS\|CONTROLLERS\|SLOW\|FAILING\|DEGRADED\|REBUILDING\)=/lab: \1=/p' "$SHARE/info" >&2
fi
if ! [ -f "$SHARE/rc" ]; then
  if grep -q '^LAB-FAILED: ' "$CONSOLE" 2>/dev/null; then
    note "the guest could not build the $KIND array: $(grep -m1 '^LAB-FAILED: ' "$CONSOLE" | sed 's/^LAB-FAILED: //')"
  elif grep -q 'Kernel panic' "$CONSOLE" 2>/dev/null; then
    note "the guest panicked ($ACCEL_SAID): $(grep -m1 -o 'Kernel panic.*' "$CONSOLE"); its console ended with:"
  else
    note "the guest stopped (qemu exit $qrc, $ACCEL_SAID) before the command finished; its console ended with:"
  fi
  tail -n 20 "$CONSOLE" | sed 's/^/  | /' >&2
  if [ -s "$WORK/qemu.log" ]; then
    note "qemu said:"
    tail -n 5 "$WORK/qemu.log" | sed 's/^/  | /' >&2
  fi
  [ -f "$SHARE/stderr" ] && cat "$SHARE/stderr" >&2
  bring_out || true
  exit 125
fi
cat "$SHARE/stdout"
cat "$SHARE/stderr" >&2
RC=$(cat "$SHARE/rc")
if [ -n "$OUTDIR" ]; then
  bring_out || fail "cannot copy \$OUT into $OUTDIR"
elif [ -n "$(ls -A "$SHARE/out")" ]; then
  note "the command wrote files under \$OUT: give --out DIR to keep them"
fi
read -r b0 b1 < <(sed -n 's/^BOOT=//p' "$SHARE/info")
note "$ACCEL_SAID: $(awk -v s="$START" -v e="$END" 'BEGIN {printf "%.1f", e - s}') s from start to power-off (array ready $(awk -v a="$b1" 'BEGIN {printf "%.1f", a}') s after boot); exit $RC"
exit "$RC"
