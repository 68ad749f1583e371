"""What a run records, folded into what the page shows: the controller's event log into timeline spans,
the OCS's event log into circuit states and dark periods, port counters into link rates, `ss` samples
into per-flow points. Each folder takes records one at a time, so a live run and a replay fold alike."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fabric.contract import PORT_DEQ, PORT_ENQ, PORT_RX, PORT_TX
from scripts.hosts.kernel import SsSample
from view.model import FlowPoint, Graph, LinkRate, OcsState, Sample, Span

# the port counters a sample reads: rates each way and queue drops (fabric.contract.PORT_COUNTERS)
SAMPLED = (PORT_RX, PORT_TX, PORT_ENQ, PORT_DEQ)
# controller events that are not a procedure's: an instant each on the controller's lane
CONTROLLER_LANE = "controller"
STEP_LANE = "steps"
PROCEDURE_LANE = "procedure"
MIN_FLOW_BYTES = 64 * 1024  # below this a connection is a control connection (iperf3's), not a flow

Counters = Mapping[str, Mapping[str, Mapping[Any, Any]]]  # switch -> counter -> port -> (packets, bytes)


class EventFolder:
    """The controller's event log (control/events.py) as spans: each procedure, its steps, its probes,
    and the controller's other events as instants."""

    def __init__(self) -> None:
        self._n = 0
        self._open: dict[str, Span] = {}  # "procedure" or the step name -> its open span

    def feed(self, e: Mapping[str, Any]) -> list[Span]:
        """The spans one event opens, closes or adds."""
        kind, t = str(e.get("event", "")), float(e.get("t_wall", 0.0))
        self._n += 1
        if kind == "procedure-start":
            span = Span(id=f"p{self._n}", lane=PROCEDURE_LANE, label=str(e.get("procedure")), t=t, open=True,
                        kind="procedure")
            self._open[PROCEDURE_LANE] = span
            return [span]
        if kind in ("procedure-done", "procedure-error"):
            out = []
            if kind == "procedure-error":
                out += self._close(str(e.get("step")), t, failed=True)
            failed = f" failed at {e.get('step')}: {e.get('error')}" if kind == "procedure-error" else ""
            return out + self._close(PROCEDURE_LANE, t, suffix=failed, failed=bool(failed))
        if kind == "step-start":
            step = str(e.get("step"))
            span = Span(id=f"s{self._n}", lane=STEP_LANE, label=step, t=t, open=True, kind="step")
            self._open[step] = span
            return [span]
        if kind == "step-done":
            return self._close(str(e.get("step")), t)
        if kind == "probe-ok":
            src, dst = e.get("src") or ["?", 0], e.get("dst") or ["?", 0]
            return [Span(id=f"e{self._n}", lane=STEP_LANE, label=f"probe {src[0]}:{src[1]}>{dst[0]}:{dst[1]}",
                         t=t, kind="probe")]
        if kind in self._open:  # the writes of a step, logged under its name: the step's span says it
            return []
        label = kind
        if "inserts" in e:
            writes = sum(int(e.get(k, 0)) for k in ("inserts", "modifies", "deletes"))
            label = f"{kind}: {writes} writes"
        return [Span(id=f"e{self._n}", lane=CONTROLLER_LANE, label=label, t=t)]

    def _close(self, key: str, t: float, suffix: str = "", failed: bool = False) -> list[Span]:
        span = self._open.pop(key, None)
        if span is None:
            return []
        return [span.model_copy(update={"t_end": t, "open": False, "label": span.label + suffix,
                                        "kind": "failed" if failed else span.kind})]


class OcsFolder:
    """The emulated OCS's event log (emulation/ocs: `command` with connections added and removed,
    `port-down`/`port-up` per port) as circuit states and each port's dark periods."""

    def __init__(self, graph: Graph) -> None:
        self.ports = sorted(graph.fibres)
        self.size = max(self.ports, default=0)
        self._names = {p: graph.fibres[p] for p in self.ports}
        self._conn: dict[int, int] = {}  # input port -> output port
        self._down: dict[int, Span] = {}
        self._pending: set[int] = set()  # ports of new connections not up since (light comes after the mirrors)
        self._n = 0

    def feed(self, e: Mapping[str, Any]) -> tuple[list[Span], OcsState | None]:
        """The spans and the new circuit state one OCS event gives."""
        kind, t = str(e.get("event", "")), float(e.get("t_wall", 0.0))
        self._n += 1
        if kind == "command":
            for i, o in e.get("removed") or []:
                if self._conn.get(int(i)) == int(o) - self.size:
                    del self._conn[int(i)]
            for i, o in e.get("added") or []:
                self._conn[int(i)] = int(o) - self.size
                self._pending.add(int(i))
            return [Span(id=f"o{self._n}", lane="OCS", label="command", t=t, kind="ocs")], self.state(t)
        port = e.get("slot")
        if kind == "port-down" and port is not None and port not in self._down:
            span = Span(id=f"d{self._n}", lane=f"dark {self._names.get(port, port)}", label="dark", t=t, open=True,
                        kind="dark")
            self._down[port] = span
            return [span], self.state(t)
        if kind == "port-up":
            self._pending.discard(port)
        if kind == "port-up" and port in self._down:
            span = self._down.pop(port)
            return [span.model_copy(update={"t_end": t, "open": False})], self.state(t)
        return [], None

    def state(self, t: float) -> OcsState:
        """The circuits lit (both ports connected to each other, neither dark) and the dark ports."""
        off = self._down.keys() | self._pending
        lit = [(a, b) for a, b in self._conn.items() if a < b and self._conn.get(b) == a and not {a, b} & off]
        return OcsState(t=t, lit=sorted(lit), dark=sorted(self._down))


class LinkRates:
    """Port counter readings (cumulative) into each edge's rates and drops since the reading before."""

    def __init__(self, graph: Graph) -> None:
        switches = {n.id for n in graph.nodes if n.kind == "switch"}
        # each link's or fibre's switch end: (edge, switch, port, True when that end is the edge's source)
        self._ends = []
        for e in graph.edges:
            if e.kind == "circuit":
                continue
            ends = [(s, p, s == e.source) for s, p in ((e.source, e.source_port), (e.target, e.target_port))
                    if s in switches]
            if ends:
                self._ends.append((e.id, ends))
        self._last: dict[str, tuple[float, Mapping[str, Any]]] = {}  # switch -> its last reading and time
        self._t: float | None = None

    def feed(self, t: float, counters: Counters, versions: dict[str, dict[int, int]],
             times: Mapping[str, float] | None = None) -> Sample | None:
        """The sample ending at t (None for the first reading: no interval yet); `times`: when each
        switch was read (else t). A switch missing from a reading keeps its last one."""
        times = times or {}
        last = dict(self._last)
        first, self._t = self._t is None, t
        for sw, cells in counters.items():
            self._last[sw] = (times.get(sw, t), cells)
        if first:
            return None
        links = {}
        for edge, ends in self._ends:
            sw, port, is_source = ends[0]
            if sw not in counters or sw not in last:
                continue
            dt = times.get(sw, t) - last[sw][0]
            if dt <= 0:
                continue
            now, before = counters[sw], last[sw][1]
            tx = _grew(now, before, PORT_TX, port, 1) * 8 / dt / 1e6
            rx = _grew(now, before, PORT_RX, port, 1) * 8 / dt / 1e6
            drops = sum(max(0, (_cell(counters[s], PORT_ENQ, p, 0) - _cell(counters[s], PORT_DEQ, p, 0))
                            - (_cell(last[s][1], PORT_ENQ, p, 0) - _cell(last[s][1], PORT_DEQ, p, 0)))
                        for s, p, _ in ends if s in counters and s in last)
            links[edge] = LinkRate(forward=round(tx if is_source else rx, 3), back=round(rx if is_source else tx, 3),
                                   drops=drops, seconds=round(dt, 4))
        return Sample(t=t, links=links, versions=versions)


def _grew(now: Mapping[str, Any], before: Mapping[str, Any], counter: str, port: int, i: int) -> int:
    """How much one cell of one switch's counters grew between two readings."""
    return max(0, _cell(now, counter, port, i) - _cell(before, counter, port, i))


def _cell(cells: Mapping[str, Any], counter: str, port: int, i: int) -> int:
    """packets (i=0) or bytes (i=1) of one counter cell of one switch; ports may be ints or (JSON) strings."""
    row = cells.get(counter, {})
    v = row.get(port, row.get(str(port)))
    return int(v[i]) if v else 0


class FlowFolder:
    """`ss -tin` samples (scripts/hosts/kernel.py) as per-flow points: goodput from bytes_acked, RTT, cwnd,
    retransmissions; connections that never carry MIN_FLOW_BYTES (iperf3's control) are left out."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[float, int]] = {}

    def feed(self, samples: Iterable[SsSample]) -> dict[str, list[FlowPoint]]:
        """Points by flow (`local>peer`) of new samples."""
        out: dict[str, list[FlowPoint]] = {}
        for s in samples:
            if s.bytes_acked is None or s.bytes_acked < MIN_FLOW_BYTES:
                continue
            flow = f"{s.local}>{s.peer}"
            rate = None
            last = self._last.get(flow)
            if last is not None and s.t > last[0]:
                rate = round(max(0, s.bytes_acked - last[1]) * 8 / (s.t - last[0]) / 1e6, 3)
            self._last[flow] = (s.t, s.bytes_acked)
            out.setdefault(flow, []).append(FlowPoint(t=s.t, rate_mbit=rate, rtt_ms=s.rtt_ms, cwnd=s.cwnd,
                                                      retrans=s.retrans_total))
        return out
