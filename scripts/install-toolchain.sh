#!/usr/bin/env bash
# Install the reference P4 toolchain (p4c-bm2-ss, simple_switch_grpc) from ../shared/toolchain/ when
# it is beside the project, with two repairs its own install.sh needs on a copied tree:
#  - p4c links libgc.so.1/libgccpp.so.1 (Debian's libgc1), which install.sh does not list;
#  - a copy of shared/ turns the libraries' soname symlinks (libX.so.0 -> libX.so.0.0.0) into small
#    text files holding the target's name; the loader then fails with "file too short".
# Idempotent; prints the two versions. Exit 0 with a note when no toolchain is beside the project.
#   usage: install-toolchain.sh [TOOLCHAIN_DIR] [PREFIX]
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=${1:-${HITLESS_TOOLCHAIN:-../shared/toolchain}}
PREFIX=${2:-/usr/local}
say() { printf '[toolchain] %s\n' "$*"; }

if [ ! -x "$SRC/install.sh" ]; then
  say "no reference toolchain at $SRC: p4sim stays the default target"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || { say "run as root (apt-get and ldconfig)"; exit 1; }

EXTRA_APT=(libgc1)
missing=()
for p in "${EXTRA_APT[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# install.sh prints the versions last; a failure there (a broken library) is repaired below.
bash "$SRC/install.sh" "$PREFIX" >/dev/null 2>&1 || true

LIBDIR=$PREFIX/lib/p4ref
repaired=0
for f in "$LIBDIR"/*.so.*; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  [ "$(stat -c %s "$f")" -lt 256 ] || continue
  target=$(tr -d '\n' < "$f")
  case "$target" in
    */* | "") continue ;;
  esac
  [ -f "$LIBDIR/$target" ] || continue
  ln -sfn "$target" "$f"
  repaired=$((repaired + 1))
done
[ "$repaired" -eq 0 ] || { say "restored $repaired library symlinks"; ldconfig; }

"$PREFIX/bin/p4c-bm2-ss" --version 2>&1 | grep -m1 Version | sed 's/^/[toolchain] p4c-bm2-ss /'
"$PREFIX/bin/simple_switch_grpc" --version | sed 's/^/[toolchain] simple_switch_grpc /'
