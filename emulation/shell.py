"""The Mininet CLI of a run, with the testbed's own commands: circuits, reconfigure, iperf3, tables.

    mininet> circuits                      # the OCS's circuits and the topology's named maps
    mininet> reconfigure mbb reconfigured  # bbm | mbb-timed | mbb, to a map name or pairs a-b,c-d
    mininet> iperf3 h2 h1 3                # one TCP run, the received rate in Mbit/s
    mininet> tables                        # entries per switch, as the controller installed them
"""

from __future__ import annotations

import logging
import shlex
from typing import Any

from mininet.cli import CLI
from mininet.log import output

from control.plan import PROCEDURES
from control.procedures import Reconfigurer, Result
from topo.circuits import ocs_circuits

log = logging.getLogger(__name__)


def parse_circuits(emu: Any, spec: str) -> list[tuple[int, int]]:
    """The circuits of the emulation's OCS a spec names (topo/circuits.py: map name, none, a-b,c-d, file)."""
    if emu.ocs is None:
        raise ValueError("circuits: this topology has no OCS")
    return ocs_circuits(emu.topo, spec, emu.ocs.name)


def reconfigure(emu: Any, procedure: str, spec: str, hold_s: float = 1.0) -> Result:
    """Move the emulation's OCS to the circuits a spec names with one procedure (the run's controller and
    event log); returns once the new circuits carry light."""
    if procedure not in PROCEDURES:
        raise ValueError(f"procedure {procedure!r}: expected one of {', '.join(PROCEDURES)}")
    new = parse_circuits(emu, spec)
    with emu.ocs.driver() as drv:
        rec = Reconfigurer(emu.controller, drv, emu.ocs.name, emu.mode, emu.spray, emu.controller.events)
        res = rec.run(procedure, new, hold_s=hold_s)
    emu.ocs.circuits = new
    emu.wait_ocs_links()
    return res


class HitlessCLI(CLI):
    """Mininet's CLI plus the commands of the module docstring."""

    def __init__(self, emu: Any, **kwargs: Any) -> None:
        self.emu = emu
        super().__init__(emu.net, **kwargs)

    failed = False  # set by a command that failed (so a --cmd run can exit non-zero)

    def default(self, line: str) -> None:
        """`<node> <command>`: topology names are accepted with a run prefix too (h1 -> <prefix>h1)."""
        if self.emu.prefix:
            names = set(self.emu.hosts) | set(self.emu.switches)
            line = " ".join(self.emu.prefix + w if w in names else w for w in line.split(" "))
        super().default(line)

    def _fail(self, exc: Exception) -> None:
        self.failed = True
        output(f"error: {exc}\n")

    def do_circuits(self, line: str) -> None:
        """circuits: show the OCS's circuits and the topology's maps."""
        if self.emu.ocs is None:
            output("no OCS in this topology\n")
            return
        o = self.emu.topo.ocs_map()[self.emu.ocs.name]
        lit = {p for c in self.emu.ocs.circuits for p in c}
        output(f"{o.name}: circuits {self.emu.ocs.circuits} (SCPI {self.emu.ocs.address})\n")
        for name, pairs in sorted(o.circuit_maps.items()):
            output(f"  map {name}: {pairs}{'  (default)' if name == o.default_map else ''}\n")
        for p in o.ports:
            state = "up" if self.emu.ocs_link_up(p.port) else "dark"
            output(f"  port {p.port}: {p.switch}:{p.switch_port} {state}{'' if p.port in lit else ' (no circuit)'}\n")

    def do_reconfigure(self, line: str) -> None:
        """reconfigure <bbm|mbb-timed|mbb> <map|a-b,c-d> [hold_s]: move the OCS and the routes."""
        args = line.split()
        if len(args) not in (2, 3) or args[0] not in PROCEDURES:
            self._fail(ValueError(f"usage: reconfigure <{'|'.join(PROCEDURES)}> <map|a-b,c-d> [hold_s]"))
            return
        try:
            res = reconfigure(self.emu, args[0], args[1], float(args[2]) if len(args) == 3 else 1.0)
            steps = ", ".join(f"{k} {v:.1f}" for k, v in res.steps.items())
            output(f"{res.procedure}: total {res.total_ms:.1f} ms, control {res.control_ms:.1f} ms ({steps})\n")
        except Exception as exc:  # noqa: BLE001 - the CLI reports and goes on
            self._fail(exc)

    def do_iperf3(self, line: str) -> None:
        """iperf3 <client> <server> [seconds]: one TCP run between two hosts."""
        args = shlex.split(line)
        if len(args) not in (2, 3):
            self._fail(ValueError("usage: iperf3 <client host> <server host> [seconds]"))
            return
        try:
            mbps = self.emu.iperf3(args[0], args[1], float(args[2]) if len(args) == 3 else 2.0)
            output(f"iperf3 {args[0]} -> {args[1]}: {mbps:.1f} Mbit/s\n")
        except Exception as exc:  # noqa: BLE001 - the CLI reports and goes on
            self._fail(exc)

    def do_tables(self, line: str) -> None:
        """tables [switch]: per switch, entries per table as the controller installed them (one switch: every entry)."""
        states = self.emu.controller.desired() if self.emu.controller else {}
        only = line.strip()
        if only and only not in states:
            output(f"switch {only!r}: unknown; expected one of {' '.join(sorted(states))}\n")
            return
        for name, st in sorted(states.items()):
            if only and name != only:
                continue
            counts: dict[str, int] = {}
            for e in st.entries:
                short = e.table.rsplit(".", 1)[-1]
                counts[short] = counts.get(short, 0) + 1
            output(f"{name}: {len(st.members)} members, {len(st.groups)} groups, "
                   + ", ".join(f"{t} {n}" for t, n in sorted(counts.items())) + "\n")
            if only:
                for e in [*st.entries, *st.defaults]:
                    output(f"  {e}\n")
