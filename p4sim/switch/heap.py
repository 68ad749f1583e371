"""The switch process's heap: the garbage collector kept off the packet path, freed memory given back.

Both are settings of the whole process, so p4sim-switch makes them (cli.py, Device(freeze_heap=True));
a Device inside another program (tests, benchmarks) leaves that program's heap alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import os

log = logging.getLogger(__name__)

# glibc's mallopt parameter (malloc.h). Each thread that allocates while another holds an arena gets
# an arena of its own, up to 8 per core, and every arena keeps what it once held: the gRPC threads
# that receive a pipeline (a 0.3 MB message) and the thread that builds it spread its memory over
# several. Two arenas, as Hadoop sets MALLOC_ARENA_MAX=4 for its daemons and the JVM's tuning guides
# advise for the same growth; the allocating threads here are few and never contend per packet.
M_ARENA_MAX = -8
MALLOC_ARENAS = 2

_libc: ctypes.CDLL | None = None


def _glibc() -> ctypes.CDLL | None:
    """The C library if it is glibc (malloc_trim, mallopt), else None."""
    global _libc
    if _libc is None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            libc.gnu_get_libc_version  # noqa: B018 - only glibc has it
        except (OSError, AttributeError):
            return None
        _libc = libc
    return _libc


def available_bytes() -> int:
    """Memory this process could still get: MemAvailable of /proc/meminfo (else all physical memory)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas (call before threads start); False where the C library is not glibc."""
    libc = _glibc()
    return bool(libc is not None and libc.mallopt(M_ARENA_MAX, arenas))


def settle_heap() -> None:
    """Collect once, exempt every object alive now from later collections (gc.freeze), and give the
    memory freed back to the system.

    A full collection scans every tracked object while holding the GIL: ~60k of them once a
    program and the P4Runtime server are loaded, 26 ms during which no frame moves. After a freeze,
    collections scan only what came later (table entries, packets in flight), well under a millisecond.

    A frozen object is never collected, and a replaced pipeline is cyclic garbage (its generated
    functions and their namespace refer to each other), so the previous freeze is undone first
    (gc.unfreeze): this collection frees what was frozen before and has died since, and only what
    is alive is frozen again. The cost is one full collection per call: at start-up and when the
    program changes, never per packet. malloc_trim then returns the free pages of every arena
    (glibc keeps them otherwise); ctypes releases the GIL for it, so frames keep moving.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
