"""Mininet emulation of a topology: P4 switches, hosts, the emulated OCS and the controller.

`topo.emulation.network.Emulation` is the Python API (see that module's docstring);
`topo.emulation.cli` holds `python -m topo run | clean-net`; `topo.emulation.state` records what a
run created so `clean-net` can remove it after a kill.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Emulation"]


def __getattr__(name: str) -> Any:
    # lazy, so `python -m topo generate` does not import Mininet
    if name == "Emulation":
        from topo.emulation.network import Emulation

        return Emulation
    raise AttributeError(name)
