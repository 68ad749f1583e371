#!/usr/bin/env bash
# One-time, idempotent set-up: system packages (apt), the Python environment (.venv) and p4runtime-shell's
# own (.venv-p4rt-shell). Stamps in them make a second run fast; delete them to start over.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
PYTHON=${PYTHON:-python3}
PIP_STAMP=$VENV/.pip-stamp
# p4runtime-shell (a P4Runtime client users drive p4sim with) needs protobuf < 3.21, the pure-Python
# runtime, and p4runtime's original modules: it gets an environment of its own, which its tests run as a
# child process (p4sim/tests/programs.py), so .venv has a current protobuf.
SHELL_VENV=.venv-p4rt-shell
SHELL_REQS="p4runtime-shell==0.0.6 protobuf==3.20.3"

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
    # an environment from before p4runtime-shell had its own: it holds protobuf below 3.21
    if "$VENV/bin/pip" show -q p4runtime-shell 2>/dev/null; then
      "$VENV/bin/pip" uninstall -q -y p4runtime-shell
    fi
    "$VENV/bin/pip" install -q -e '.[dev]'
    touch "$PIP_STAMP"
  else
    say "python environment up to date"
  fi
  # p4runtime's wheel has modules from protoc < 3.19, which the upb runtime refuses: regenerated from the
  # descriptors they carry (hitless/protogen.py; a stamp makes this a no-op once done)
  "$VENV/bin/python" -m hitless.protogen
}

make_shell_venv() {
  if [ -f "$SHELL_VENV/.stamp" ] && [ "$(cat "$SHELL_VENV/.stamp")" = "$SHELL_REQS" ]; then
    say "p4runtime-shell environment up to date"
    return
  fi
  say "creating $SHELL_VENV with $SHELL_REQS"
  rm -rf -- "$SHELL_VENV"
  "$PYTHON" -m venv "$SHELL_VENV"
  # shellcheck disable=SC2086  # SHELL_REQS is a list of requirements
  "$SHELL_VENV/bin/pip" install -q --disable-pip-version-check $SHELL_REQS
  printf '%s\n' "$SHELL_REQS" > "$SHELL_VENV/.stamp"
}

# The Debian packages (hitless/debian-packages.txt, the list `hitless setup` installs too), with the
# system's python3 since no environment exists yet; then the environment, and Debian's Mininet linked
# into it (its Python package is pure Python, so the venv gets a link to that one package rather than
# all of the system site-packages).
"$PYTHON" hitless/system.py packages
make_venv
make_shell_venv
"$VENV/bin/python" -m hitless.system mininet
# The reference p4c/bmv2 build, when the project sits beside ../shared/toolchain (CI, the project's
# machines); elsewhere p4sim stays the target. Needs root for apt; skipped with a note otherwise.
if [ -x ../shared/toolchain/install.sh ] || [ -n "${HITLESS_TOOLCHAIN:-}" ]; then
  as_root bash scripts/install-toolchain.sh
fi
say "done"
