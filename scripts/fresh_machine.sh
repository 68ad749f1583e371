#!/usr/bin/env bash
# The fresh-machine check (docs/fresh-machine.md): the README's two commands, as root, on a new
# Debian 12 root file system with nothing of this machine's Python or packages in it.
#
#   sudo bash scripts/fresh_machine.sh [--keep] [--base DIR] [--work DIR] [--only run-topo|test] [REPO [REF]]
#
# A minimal Debian 12 (debootstrap --variant=minbase, plus make, git, python3, ca-certificates: what
# a researcher's machine has before the README) is made once into --base (reused afterwards, never
# changed) and copied for each check. REF of REPO (default: this checkout's HEAD) is cloned into it as
# /root/hitless, with no ../shared beside it. The commands then run in a mount and PID namespace whose
# root is that file system (pivot_root, the host's root unmounted, as a container runtime does; a
# chroot is not enough, since Mininet's mnexec enters nodes' mount namespaces and needs a root that is
# a mount point), with an empty environment, sharing only the network (apt and pip need the mirrors).
# Each command's output goes to WORK/<command>.log; the last lines say each one's exit code and time.
# The copy is removed at the end unless --keep.
set -euo pipefail

BASE=/var/tmp/hitless-fresh/base-bookworm
WORK=
KEEP=0
ONLY=
MIRROR=http://deb.debian.org/debian
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) KEEP=1 ;;
    --base) BASE=$2; shift ;;
    --work) WORK=$2; shift ;;
    --only) ONLY=$2; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "fresh-machine: unknown option $1; expected --keep, --base DIR, --work DIR, --only run-topo|test" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
REPO=${1:-$(cd "$(dirname "$0")/.." && pwd)}
REF=${2:-HEAD}
case "$ONLY" in ""|run-topo|test) ;; *) echo "fresh-machine: --only $ONLY: expected run-topo or test" >&2; exit 2 ;; esac

say() { printf '[fresh-machine] %s\n' "$*"; }
[ "$(id -u)" -eq 0 ] || { say "needs root (debootstrap, namespaces, mounts)"; exit 1; }
for tool in debootstrap unshare git; do
  command -v "$tool" >/dev/null || { say "needs $tool (apt-get install debootstrap util-linux git)"; exit 1; }
done

if [ ! -x "$BASE/usr/bin/python3" ]; then
  say "debootstrap Debian 12 into $BASE (once)"
  rm -rf -- "$BASE.partial"
  t0=$SECONDS
  debootstrap --variant=minbase --include=make,git,python3,ca-certificates bookworm "$BASE.partial" "$MIRROR" \
    > "$BASE.log" 2>&1 || { say "debootstrap failed, see $BASE.log"; exit 1; }
  mv -- "$BASE.partial" "$BASE"
  say "base made in $((SECONDS - t0)) s"
fi

WORK=${WORK:-$(mktemp -d /var/tmp/hitless-fresh/check-XXXXXX)}
ROOTFS=$WORK/rootfs
mkdir -p "$WORK"
cleanup() {
  if [ "$KEEP" -eq 0 ] && [ -d "$ROOTFS" ]; then rm -rf --one-file-system -- "$ROOTFS"; fi
}
trap cleanup EXIT
say "copying the base to $ROOTFS"
cp -a -- "$BASE" "$ROOTFS"
cp -- /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
# This machine's network, not its software: behind a TLS-inspecting proxy, its extra CA certificates
# and pip's setting to trust the system's store (pip otherwise trusts only its own bundle).
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp -- /usr/local/share/ca-certificates/*.crt "$ROOTFS/usr/local/share/ca-certificates/"
  chroot "$ROOTFS" update-ca-certificates >/dev/null 2>&1
  printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' > "$ROOTFS/etc/pip.conf"
  say "copied this machine's CA certificates (TLS-inspecting proxy) and pip's cert setting"
fi
git clone -q --no-hardlinks "$REPO" "$ROOTFS/root/hitless"
git -C "$ROOTFS/root/hitless" checkout -q "$REF"
say "cloned $REPO at $(git -C "$ROOTFS/root/hitless" log -1 --format='%h %s' | cut -c1-80) (no ../shared beside it)"

# The README's two commands, in the root shell's form (Debian's root has no sudo).
COMMANDS=("make run-topo CMD=pingall" "make test")
NAMES=(run-topo test)

# Inside the new namespaces: make $ROOTFS the root (pivot_root), drop the old one, run one command.
INNER='set -e
rootfs=$1; shift
mount --make-rprivate /
mount --bind "$rootfs" "$rootfs"
mount -t proc proc "$rootfs/proc"
mount -t sysfs sysfs "$rootfs/sys"
mount --rbind /dev "$rootfs/dev"
mount -t tmpfs tmpfs "$rootfs/run"
mount -t tmpfs tmpfs "$rootfs/tmp"
mkdir -p "$rootfs/.oldroot"
cd "$rootfs"
pivot_root . .oldroot
cd /
umount -l /.oldroot
rmdir /.oldroot
exec env -i HOME=/root TERM=dumb LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c "cd /root/hitless && $*"'

status=0
for i in "${!COMMANDS[@]}"; do
  name=${NAMES[$i]}
  [ -z "$ONLY" ] || [ "$ONLY" = "$name" ] || continue
  say "${COMMANDS[$i]}  (log: $WORK/$name.log)"
  t0=$SECONDS
  set +e
  unshare --mount --pid --fork --uts --ipc -- bash -c "$INNER" inner "$ROOTFS" "${COMMANDS[$i]}" \
    > "$WORK/$name.log" 2>&1
  rc=$?
  set -e
  tail -n 12 "$WORK/$name.log" | sed 's/^/    /'
  say "${COMMANDS[$i]}: exit $rc in $((SECONDS - t0)) s"
  echo "$name exit $rc $((SECONDS - t0)) s" >> "$WORK/results.txt"
  [ "$rc" -eq 0 ] || status=1
done
say "$( [ "$status" -eq 0 ] && echo passed || echo FAILED ): $(tr '\n' ';' < "$WORK/results.txt")"
exit "$status"
