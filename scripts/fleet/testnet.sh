#!/usr/bin/env bash
# Real ssh hosts on one machine, for trying and testing fleets (as root).
#
#   scripts/fleet/testnet.sh up DIR N [BIN]   N hosts; prints "NAMESPACE ADDRESS" per host
#   scripts/fleet/testnet.sh down DIR         kill their processes, delete the namespaces
#
# Each host is a network namespace with its own hostname (a UTS namespace)
# and its own sshd (Debian openssh-server) listening on its address, where
# root's login shell is dash (a POSIX sh: what ssh sends must not need bash),
# 10.231.0.11, .12, ... The hosts hang off a bridge in a control namespace
# (10.231.0.1), so the test subnet exists only in these namespaces: run the
# launcher there, `ip netns exec $(cat DIR/ctl) scripts/fleet.sh ...`.
# The client side is DIR/ssh_config (a key made for these hosts, a private
# known_hosts, StrictHostKeyChecking accept-new): `fleet.sh --ssh-config
# DIR/ssh_config`. Each host's sshd puts DIR/hI/bin first on PATH: BIN (a
# stripebench) is linked there, and a host can be given another program
# (a wrapper) by replacing that link. Filesystems and block devices are
# shared: give each host its own loop devices in the hostfile.
#
# Names start with "fleet-" and a tag unique to DIR (written to DIR/tag);
# `down` removes exactly what `up` made, and is safe to run twice or after
# a failed `up`.
set -euo pipefail

die() { echo "testnet.sh: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"

down() {
  local dir=$1 tag ns pid
  [ -r "$dir/tag" ] || return 0
  tag=$(cat "$dir/tag")
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^fleet-$tag-(ctl|h[0-9]+)$" || true); do
    # sshd, and whatever runs inside (a stopped stripebench too: KILL works on it).
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    for _ in 1 2 3 4 5 6 7 8 9 10; do [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break; sleep 0.1; done
    # Deleting a namespace deletes its end of each veth, and so the pair.
    ip netns delete "$ns" 2>/dev/null || true
  done
  rm -f "$dir/tag"
}

up() {
  local dir=$1 n=$2 bin=${3:-} tag ctl i ns addr
  [[ "$n" =~ ^[1-9][0-9]?$ ]] || die "N is a number of hosts, 1 to 99"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [ ! -e "$dir/tag" ] || die "$dir holds a test network already: run down first"
  command -v /usr/sbin/sshd >/dev/null || die "needs sshd: apt-get install openssh-server"
  # Unique to DIR: the path's hash (so two DIRs never share names).
  tag=$(printf '%s' "$dir" | cksum | awk '{printf "%08x", $1}')
  echo "$tag" >"$dir/tag"
  trap 'down "$dir"' ERR
  ctl=fleet-$tag-ctl
  echo "$ctl" >"$dir/ctl"
  ip netns add "$ctl"
  ip -n "$ctl" link set lo up
  ip -n "$ctl" link add br0 type bridge
  ip -n "$ctl" addr add 10.231.0.1/24 dev br0
  ip -n "$ctl" link set br0 up
  mkdir -p /run/sshd   # sshd's privilege-separation directory
  rm -f "$dir/id" "$dir/id.pub"
  ssh-keygen -q -t ed25519 -N '' -C "fleet test $tag" -f "$dir/id"
  cp "$dir/id.pub" "$dir/authorized_keys"
  : >"$dir/known_hosts"
  cat >"$dir/ssh_config" <<CFG
Host 10.231.0.*
  User root
  IdentityFile $dir/id
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
  StrictHostKeyChecking accept-new
  BatchMode yes
  LogLevel ERROR
CFG
  : >"$dir/hosts"
  command -v dash >/dev/null || die "needs dash (the hosts' login shell): apt-get install dash"
  sed 's#^\(root:[^:]*:[^:]*:[^:]*:[^:]*:[^:]*:\).*#\1'"$(command -v dash)"'#' /etc/passwd >"$dir/passwd"
  for i in $(seq 1 "$n"); do
    ns=fleet-$tag-h$i
    addr=10.231.0.$((10 + i))
    mkdir -p "$dir/h$i/bin"
    [ -z "$bin" ] || ln -sf "$(readlink -f "$bin")" "$dir/h$i/bin/stripebench"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$ctl" link add "h$i" type veth peer name eth0 netns "$ns"
    ip -n "$ctl" link set "h$i" master br0 up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ssh-keygen -q -t ed25519 -N '' -C "fleet host $i" -f "$dir/h$i/host_key"
    cat >"$dir/h$i/sshd_config" <<CFG
ListenAddress $addr
HostKey $dir/h$i/host_key
PidFile $dir/h$i/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxStartups 100
SetEnv PATH=$dir/h$i/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CFG
    # Its own hostname, so its run documents name it; root's login shell
    # (which runs what ssh sends) dash, a POSIX sh with nothing of bash's,
    # through a passwd file of its own bound over /etc/passwd in a mount
    # namespace of its own.
    ip netns exec "$ns" unshare --uts --mount sh -c "mount --bind '$dir/passwd' /etc/passwd && hostname fleet-h$i && exec /usr/sbin/sshd -f '$dir/h$i/sshd_config' -E '$dir/h$i/sshd.log'"
    echo "$ns $addr" >>"$dir/hosts"
  done
  # Up when each answers on port 22.
  for i in $(seq 1 "$n"); do
    addr=10.231.0.$((10 + i))
    for t in $(seq 1 50); do
      ip netns exec "$ctl" bash -c "exec 3<>/dev/tcp/$addr/22" 2>/dev/null && break
      [ "$t" -lt 50 ] || die "the sshd of host $i ($addr) does not answer: see $dir/h$i/sshd.log"
      sleep 0.1
    done
  done
  trap - ERR
  cat "$dir/hosts"
}

case "${1:-}" in
  up) [ $# -ge 3 ] || die "usage: testnet.sh up DIR N [BIN]"; up "$2" "$3" "${4:-}" ;;
  down) [ $# -ge 2 ] || die "usage: testnet.sh down DIR"; down "$2" ;;
  *) die "usage: testnet.sh up DIR N [BIN] | down DIR" ;;
esac
