"""The runtime library through cffi: its API (rt/p4s_api.h), loaded once per process."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import cffi

from p4sim.switch.native.build import RT, runtime_library

ffi = cffi.FFI()
ffi.cdef("\n".join(ln for ln in (RT / "p4s_api.h").read_text().splitlines() if not ln.startswith("#"))
         + "\nconst p4s_prog *p4s_program(void);\n")

_lock = threading.Lock()
_rt: Any = None


def rt() -> Any:
    """The runtime library (built and loaded on first use; BuildError, OSError if it cannot be)."""
    global _rt
    with _lock:
        if _rt is None:
            _rt = ffi.dlopen(str(runtime_library()), ffi.RTLD_NOW | ffi.RTLD_GLOBAL)
        return _rt


def load_program(path: Path) -> Any:
    """A program library (after the runtime, whose symbols it uses)."""
    rt()
    return ffi.dlopen(str(path), ffi.RTLD_NOW)
