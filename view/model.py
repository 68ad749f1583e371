"""The view's values: what the server sends the page and what the page may ask, as pydantic models.

Times are wall-clock seconds (epoch), as in every event log of a run; the page shows them relative to
the first one it has.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from control.plan import PROCEDURES, check_wait

NodeKind = Literal["switch", "host", "ocs"]
EdgeKind = Literal["link", "fibre", "circuit"]


class Node(BaseModel):
    """A switch, host or OCS of the drawing; `rank` orders the layers (0 on top)."""

    id: str
    kind: NodeKind
    role: str
    rank: int


class Edge(BaseModel):
    """A link between two node ports, a fibre (ToR port to OCS port), or a circuit between two ToRs
    through the OCS (`ocs_ports`: the circuit's two OCS ports)."""

    id: str
    kind: EdgeKind
    source: str
    target: str
    source_port: int | None = None
    target_port: int | None = None
    rate_mbit: float | None = None
    ocs_ports: tuple[int, int] | None = None


class Route(BaseModel):
    """A path id at an ingress ToR and the hosts it leads to."""

    switch: str
    path: int
    hosts: list[str]


class Graph(BaseModel):
    """Everything the drawing needs, fixed for a run."""

    name: str
    nodes: list[Node]
    edges: list[Edge]
    routes: list[Route] = Field(default_factory=list)
    circuit_maps: dict[str, list[tuple[int, int]]] = Field(default_factory=dict)
    fibres: dict[int, str] = Field(default_factory=dict)  # OCS port -> fibre edge id


class Span(BaseModel):
    """One item of the timeline: an interval (a procedure step, a dark OCS port) or, without `t_end`,
    an instant; an interval still open has `open` set. `id` stays the same when it closes."""

    id: str
    lane: str
    label: str
    t: float
    t_end: float | None = None
    open: bool = False
    kind: str = "event"


class OcsState(BaseModel):
    """The OCS at one time: the circuits whose both ports carry light, and the dark ports."""

    t: float
    lit: list[tuple[int, int]]
    dark: list[int]


class LinkRate(BaseModel):
    """One edge over one sampling interval: Mbit/s each way (source to target, back) and the frames its
    switch ends' egress queues dropped (port_enq - port_deq). `seconds`: the interval the rates are
    over, the time between two readings of its switch (longer than the sample's when the switch missed
    one), so that rate x seconds is what the link carried."""

    forward: float
    back: float
    drops: int = 0
    seconds: float = 0.0


class Sample(BaseModel):
    """The rates of every edge with a switch end over one interval ending at `t`, and the path versions
    the controller has set (switch -> path id -> 0 active, 1 shadow)."""

    t: float
    links: dict[str, LinkRate]
    versions: dict[str, dict[int, int]] = Field(default_factory=dict)


class FlowPoint(BaseModel):
    """One `ss` sample of one TCP flow."""

    t: float
    rate_mbit: float | None
    rtt_ms: float | None
    cwnd: int | None
    retrans: int | None


class Frame(BaseModel):
    """What the page gets: everything new since its last frame (the first: everything kept)."""

    seq: int
    live: bool
    samples: list[Sample] = Field(default_factory=list)
    spans: list[Span] = Field(default_factory=list)
    ocs: list[OcsState] = Field(default_factory=list)
    flows: dict[str, list[FlowPoint]] = Field(default_factory=dict)
    dropped: int = 0  # frames the page missed (it was too slow): they are not sent again


class Status(BaseModel):
    """What the page shows in its header and whether it may offer controls."""

    mode: Literal["live", "replay"]
    source: str
    control: bool
    procedures: list[str]
    t0: float  # the time the page counts from (the view's start; a replay's first record)
    runs: list[str] = Field(default_factory=list)
    run: str | None = None


class ProcedureRequest(BaseModel):
    """Run one procedure to a circuit map (a map name of the topology, `none`, or pairs a-b,c-d)."""

    model_config = ConfigDict(extra="forbid")

    procedure: str
    circuits: str = Field(max_length=200)
    hold_s: float = 1.0

    @field_validator("procedure")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in PROCEDURES:
            raise ValueError(f"procedure {v!r}: expected one of {', '.join(PROCEDURES)}")
        return v

    @field_validator("hold_s")
    @classmethod
    def _hold(cls, v: float) -> float:
        return check_wait("hold_s", v)  # the procedures' own check


class CircuitsRequest(BaseModel):
    """Set the OCS's circuits only (tables untouched), as `hitless ocs set` does."""

    model_config = ConfigDict(extra="forbid")

    circuits: str = Field(max_length=200)


class ActionResult(BaseModel):
    """What a control action did: one line, as the CLI prints it."""

    ok: bool
    line: str
