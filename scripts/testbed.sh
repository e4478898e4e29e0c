#!/usr/bin/env bash
# Loop-device test bed for stripebench's tests and benchmarks.
#
#   scripts/testbed.sh up DIR N SIZE_MB   create N backing files in DIR, attach each
#                                         with --direct-io=on (so the device, not the
#                                         backing file's page cache, is measured);
#                                         print one device path per line
#   scripts/testbed.sh down DIR           detach exactly the devices recorded in
#                                         DIR/devices (only while still backed by
#                                         our files) and remove the backing files
#
# Other programs may hold loop devices too: this script only ever touches the
# ones it created, by name, as recorded in DIR/devices. Needs root.
set -euo pipefail

die() { echo "testbed.sh: $*" >&2; exit 2; }

up() {
  local dir=$1 n=$2 size_mb=$3
  [ "$(id -u)" = 0 ] || die "needs root to attach loop devices"
  command -v losetup >/dev/null || die "losetup not found (util-linux)"
  mkdir -p "$dir"
  : >>"$dir/devices"
  local i dev file
  for ((i = 0; i < n; i++)); do
    file="$dir/backing$i.img"
    # Written in full, not sparse: reads of holes would measure nothing.
    dd if=/dev/urandom of="$file" bs=1M count="$size_mb" status=none
    dev=""
    for _ in 1 2 3 4 5; do
      # Another process may take the free device between lookup and attach: retry.
      if dev=$(losetup -f --show --direct-io=on "$file" 2>/dev/null); then break; fi
      dev=""
      sleep 0.2
    done
    [ -n "$dev" ] || { down "$dir"; die "could not attach a loop device for $file"; }
    echo "$dev $file" >>"$dir/devices"
    echo "$dev"
  done
}

down() {
  local dir=$1 dev file back
  [ -f "$dir/devices" ] || return 0
  while read -r dev file; do
    [ -n "$dev" ] || continue
    back=$(losetup -n -O BACK-FILE "$dev" 2>/dev/null | sed 's/ *$//' || true)
    if [ "$back" = "$file" ] || [ "$back" = "$(readlink -f "$file")" ]; then
      losetup -d "$dev" || echo "testbed.sh: could not detach $dev" >&2
    fi
    rm -f "$file"
  done <"$dir/devices"
  rm -f "$dir/devices"
}

case "${1:-}" in
  up) [ $# -eq 4 ] || die "usage: $0 up DIR N SIZE_MB"; up "$2" "$3" "$4" ;;
  down) [ $# -eq 2 ] || die "usage: $0 down DIR"; down "$2" ;;
  *) die "usage: $0 up DIR N SIZE_MB | down DIR" ;;
esac
