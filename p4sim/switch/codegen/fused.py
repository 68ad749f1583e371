"""The fused fast path: parser, ingress, egress, checksums and deparser of a unicast packet in one
function whose header fields are local variables.

Local variable access is several times cheaper in CPython than attribute access, and inlining the
actions, hashes and selectors removes most calls. The code is the ordinary generated code (the same
generators, in ControlGen's fused mode) with `p.<field>` rewritten to `<field>`. When a packet needs
the general flow (clone, digest, resubmit, multicast, recirculate), its locals are spilled into a
packet object and the engine continues. Programs using constructs that need a packet object
(run-time stack indices, push/pop, payload checksums, assert) get no fused path (FUSED is None) and
use FAST (p4sim.switch.codegen.packet).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from p4sim.switch.codegen.flow import FlowGen, Unstructured
from p4sim.switch.codegen.packet import egress_start

if TYPE_CHECKING:
    from p4sim.switch.codegen.base import Gen
    from p4sim.switch.codegen.control import ControlGen
    from p4sim.switch.codegen.parser import ParserGen

log = logging.getLogger(__name__)

_P_ATTR = re.compile(r"\bp\.(\w+)")
_BARE_P = re.compile(r"\bp\b")
NEED = ("ingress_port", "packet_length", "egress_spec", "egress_port")


class NotFusable(Exception):
    """The program needs a packet object somewhere on the unicast path."""


def fused(g: Gen, pg: ParserGen, cg: ControlGen) -> list[str]:
    """Source of FUSED(b, port, now, dev, pl) -> [(port, frame)], or `FUSED = None`."""
    try:
        lines = _build(g, pg, cg)
    except (NotFusable, Unstructured) as e:
        log.info("no fused fast path: %s", e)
        return ["FUSED = None", ""]
    finally:
        cg.fused = False
        cg.exit_stmt = "return"
    text = _P_ATTR.sub(r"\1", "\n".join(lines))
    if _BARE_P.search(text):
        log.info("no fused fast path: the program passes the packet object around")
        return ["FUSED = None", ""]
    return text.split("\n") + [""]


def _build(g: Gen, pg: ParserGen, cg: ControlGen) -> list[str]:
    if any(f not in g.std for f in NEED):
        raise NotFusable("standard_metadata lacks a field simple_switch needs")
    names = list(g.consts["FUSED_ATTRS"])
    parsers = g.prog.doc.get("parsers", [])
    parse = pg._inline_parser(parsers[0], fresh=True) if parsers else None
    if parse is None:
        raise NotFusable("the parser has loops (header stacks)")

    def sm(f: str) -> str:
        return f"p.{g.std[f]}"

    out = ["def FUSED(b, port, now, dev, pl):"]
    # all fields start as the template values (0; metadata valid), as a fresh packet object would
    out.append("    " + ", ".join(names) + (", = FUSED_INIT" if len(names) == 1 else " = FUSED_INIT"))
    out += ["    p._b = b", f"    {sm('ingress_port')} = port", f"    {sm('packet_length')} = len(b)",
            "    p._ilen = len(b)", "    p._now = now"]
    if "ingress_global_timestamp" in g.std:
        out.append(f"    {sm('ingress_global_timestamp')} = now")
    out += ["    n = len(b)", "    off = 0", "    err = 0", "    while True:"] + parse + ["        break",
                                                                                    "    p._off = off"]
    if "parser_error" in g.std:
        out.append(f"    {sm('parser_error')} = err")
    out += _checksums(g, pg, verify=True)
    cg.fused = True
    cg.exit_stmt = "break"
    for name in ("ingress", "egress"):
        pl = g.prog.pipelines[name]
        body = FlowGen(pl, cg.inline_table, g.ex).emit(pl.get("init_table"), None, "        ")
        out += ["    while True:"] + body + ["        break", "    p._exit = False"]
        if name == "ingress":
            mcast = f" or {sm('mcast_grp')}" if "mcast_grp" in g.std else ""
            out += [f"    if p._clone_i2e is not None or p._digest is not None or p._resubmit is not None{mcast}:",
                    "        return SLOW(dev, pl, _spill(locals()), None, now)",
                    f"    spec = {sm('egress_spec')}", "    if spec == 511:", "        return []"]
            out += egress_start(g, sm, "    ")
    out += ["    if p._clone_e2e is not None or p._recirc is not None:",
            "        return SLOW(dev, pl, _spill(locals()), spec, now)",
            f"    if {sm('egress_spec')} == 511:", "        return []"]
    out += _checksums(g, pg, verify=False)
    out.append("    parts = []")
    for h in pg.order:
        out += pg.emit_header(h, "    ", "parts")
    out += ["    parts.append(p._b[p._off:])", "    frame = b''.join(parts)",
            "    if p._trunc and len(frame) > p._trunc:", "        frame = frame[:p._trunc]",
            "    return [(spec, frame)]", ""]
    return out


def _checksums(g: Gen, pg: ParserGen, verify: bool) -> list[str]:
    out: list[str] = []
    for ck in g.prog.doc.get("checksums", []):
        if not ck.get("verify" if verify else "update", True):
            continue
        if verify and "checksum_error" not in g.std:
            continue
        target = ck["target"]
        cond = f"p.{g.valid[target[0]]}"
        if ck.get("if_cond") is not None:
            cond = f"{cond} and {g.ex(ck['if_cond'])}"
        out.append(f"    if {cond}:")
        out += pg.calc_inline(ck["calculation"], "ck", "        ")
        if verify:
            out += [f"        if ck != p.{g.fattr(target)}:", f"            p.{g.std['checksum_error']} = 1"]
        else:
            out.append(f"        p.{g.fattr(target)} = ck & {(1 << g.fwidth(target)) - 1}")
    return out
