#!/usr/bin/env bash
# One-time, idempotent set-up: system packages (apt) and the Python environment (.venv).
# Stamps in .venv/ make a second run fast; delete .venv/ to start over.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
PYTHON=${PYTHON:-python3}
PIP_STAMP=$VENV/.pip-stamp

say() { printf '[setup] %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else say "need root for: $*"; exit 1
  fi
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
}

# The Debian packages (hitless/debian-packages.txt, the list `hitless setup` installs too), with the
# system's python3 since no environment exists yet; then the environment, and Debian's Mininet linked
# into it (its Python package is pure Python, so the venv gets a link to that one package rather than
# all of the system site-packages).
"$PYTHON" hitless/system.py packages
make_venv
"$VENV/bin/python" -m hitless.system mininet
# The reference p4c/bmv2 build, when the project sits beside ../shared/toolchain (CI, the project's
# machines); elsewhere p4sim stays the target. Needs root for apt; skipped with a note otherwise.
if [ -x ../shared/toolchain/install.sh ] || [ -n "${HITLESS_TOOLCHAIN:-}" ]; then
  as_root bash scripts/install-toolchain.sh
fi
say "done"
