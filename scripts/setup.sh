#!/usr/bin/env bash
# One-time, idempotent set-up: system packages (apt) and the Python environment (.venv).
# Stamps in .venv/ make a second run fast; delete .venv/ to start over.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
PYTHON=${PYTHON:-python3}
APT_PACKAGES=(
  mininet iproute2 iputils-ping ethtool iperf3 tcpdump tshark procps psmisc
  python3-venv build-essential
)
APT_STAMP=$VENV/.apt-stamp
PIP_STAMP=$VENV/.pip-stamp

say() { printf '[setup] %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else say "need root for: $*"; exit 1
  fi
}

install_apt() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    say "system packages present"
    return
  fi
  say "installing system packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq
  # tshark asks whether non-root users may capture; answer for it.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | as_root debconf-set-selections
  as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

make_venv() {
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating $VENV with $("$PYTHON" --version)"
    "$PYTHON" -m venv "$VENV"
  fi
  if [ ! -f "$PIP_STAMP" ] || [ pyproject.toml -nt "$PIP_STAMP" ]; then
    say "installing the project and its Python dependencies into $VENV"
    "$VENV/bin/pip" install -q --upgrade pip
    "$VENV/bin/pip" install -q -e '.[dev]'
    touch "$PIP_STAMP"
  else
    say "python environment up to date"
  fi
  link_mininet
}

# Mininet comes from Debian's package (it brings mnexec); its Python package is pure Python,
# so the venv gets a link to that one package rather than all of the system site-packages.
link_mininet() {
  local site src
  site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  src=$(/usr/bin/python3 -c 'import mininet, os; print(os.path.dirname(mininet.__file__))' 2>/dev/null || true)
  if [ -z "$src" ]; then
    say "mininet's Python package not found under /usr/bin/python3; install the 'mininet' package"
    exit 1
  fi
  [ -e "$site/mininet" ] || ln -s "$src" "$site/mininet"
}

# The stamp holds the package list, so adding a package to the list installs it on the next run.
if [ "$(cat "$APT_STAMP" 2>/dev/null)" != "${APT_PACKAGES[*]}" ]; then
  install_apt
  mkdir -p "$VENV"
  echo "${APT_PACKAGES[*]}" > "$APT_STAMP"
fi
make_venv
# The reference p4c/bmv2 build, when the project sits beside ../shared/toolchain (CI, the project's
# machines); elsewhere p4sim stays the target. Needs root for apt; skipped with a note otherwise.
if [ -x ../shared/toolchain/install.sh ] || [ -n "${HITLESS_TOOLCHAIN:-}" ]; then
  as_root bash scripts/install-toolchain.sh
fi
say "done"
