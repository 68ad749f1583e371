"""A bmv2 JSON program as a native library: generated, compiled (cached) and loaded once per process."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from p4sim.switch.native.build import BuildError, compiler, program_key, program_library
from p4sim.switch.native.cgen.exprs import NotNative
from p4sim.switch.native.cgen.program import Layout, generate, layout
from p4sim.switch.program import Program

log = logging.getLogger(__name__)


@dataclass(slots=True)
class NativeProgram:
    """A loaded program library: its descriptor (`const p4s_prog *`) and the layout of its state."""

    key: str
    lib: Any
    prog: Any
    layout: Layout


_lock = threading.Lock()
_loaded: dict[str, NativeProgram] = {}
_refused: dict[str, str] = {}
_said: set[str] = set()


def _once(level: int, msg: str) -> None:
    if msg not in _said:
        _said.add(msg)
        log.log(level, msg)


def native_program(json_bytes: bytes, prog: Program) -> NativeProgram | None:
    """The program's native library, or None (and one line saying why) when the Python path runs it:
    no C compiler, a construct the native path does not run, or a failed build."""
    from p4sim.switch.native.lib import load_program

    if compiler() is None:
        _once(logging.WARNING, "p4sim: no C compiler (cc, gcc) or P4SIM_NATIVE=0: the Python data path runs")
        return None
    key = program_key(json_bytes)
    with _lock:
        if key in _loaded:
            return _loaded[key]
        if key in _refused:
            return None
        try:
            path = program_library(key, lambda: generate(prog)[0])
            lib = load_program(path)
            loaded = NativeProgram(key, lib, lib.p4s_program(), layout(prog))
        except NotNative as e:
            _refused[key] = str(e)
            log.info("p4sim: the Python data path runs this program (native code does not: %s)", e)
            return None
        except (BuildError, OSError, ValueError) as e:
            _refused[key] = str(e)
            _once(logging.WARNING, f"p4sim: no native data path ({e}); the Python data path runs")
            return None
        _loaded[key] = loaded
        return loaded
