"""Translate a bmv2 JSON program into Python source: one function per action, table, conditional,
parser and deparser, with header fields as attributes of a per-packet object.

The generated module defines:
  P, TEMPLATE         the packet class and the initial attribute values (all fields 0, metadata valid)
  parse(p, b)         the ingress parser over frame bytes b (sets p._off, standard_metadata.parser_error)
  verify_checksums(p), update_checksums(p)
  ingress(p), egress(p)    the two pipelines
  deparse(p) -> bytes
  ACTIONS             action id -> function(p, d) with d the tuple of action arguments
Runtime state (tables, counters, ...) is bound into the namespace by `bind` once the Pipeline exists.
"""

from __future__ import annotations

from typing import Any

from p4sim.switch.codegen.base import Gen
from p4sim.switch.codegen.control import ControlGen
from p4sim.switch.codegen.fused import fused
from p4sim.switch.codegen.packet import QUEUE_TIME_FIELDS, packet_class, reads_std
from p4sim.switch.codegen.parser import ParserGen
from p4sim.switch.codegen.runtime import helpers
from p4sim.switch.engine import continue_slow
from p4sim.switch.program import Program


def generate(prog: Program) -> tuple[str, dict[str, Any]]:
    """Python source for the whole program and the constants it refers to (ValueError for
    constructs p4sim does not support)."""
    g = Gen(prog)
    out: list[str] = []
    out += packet_class(g)
    pg = ParserGen(g)
    cg = ControlGen(g, pg)
    out += pg.parsers()
    out += pg.checksums()
    out += pg.deparser()
    out += cg.actions()
    out += fused(g, pg, cg)
    out += cg.pipelines()
    src = "\n".join(out) + "\n"
    return src, g.consts


def load(src: str, consts: dict[str, Any], prog: Program, pipeline: Any) -> dict[str, Any]:
    """Execute generated source; return its namespace (runtime state is bound later by `bind`)."""
    ns: dict[str, Any] = helpers()
    ns["SLOW"] = continue_slow
    ns.update(consts)
    ns["PIPELINE"] = pipeline
    ns["NB_QUEUES"] = getattr(pipeline, "nb_queues", 1)
    ns["QUEUE_TIME"] = reads_std(prog, QUEUE_TIME_FIELDS)
    code = compile(src, f"<p4sim:{prog.doc.get('program', 'program')}>", "exec")
    exec(code, ns)  # noqa: S102 - the source is generated from the validated program
    return ns


def bind(ns: dict[str, Any], pipeline: Any) -> None:
    """Bind the Pipeline's runtime state objects into the generated namespace."""
    for name, fn in list(ns.items()):
        if name.startswith("_bind_"):
            fn(pipeline)
