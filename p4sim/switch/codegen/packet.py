"""The packet class of a generated program and FAST, its unicast path on the packet object."""

from __future__ import annotations

from typing import Any

from p4sim.switch.codegen.base import STD, Gen
from p4sim.switch.program import Program


def packet_class(g: Gen) -> list[str]:
    """The packet class P, its TEMPLATE and the constants the engine reads, then FAST."""
    tmpl: dict[str, Any] = {}
    for h, fields in g.hfields.items():
        tmpl[g.valid[h]] = 1 if h in g.meta else 0
        for f, _w in fields:
            tmpl[g.attr[(h, f)]] = 0
    for s in g.counted:
        tmpl[g.stack_next(s)] = 0
    for _f, vl in g.varbit.values():
        tmpl[vl] = 0
    # _ilen: the length the packet entered ingress with (bmv2 counts and meters it everywhere);
    # _dlen: bytes add_header/remove_header added since (bmv2's packet length register);
    # _now: when the switch took the packet (us, the meters' clock)
    tmpl.update({"_b": b"", "_off": 0, "_exit": False, "_clone_i2e": None, "_clone_e2e": None,
                 "_resubmit": None, "_recirc": None, "_digest": None, "_trunc": 0, "_ilen": 0, "_dlen": 0,
                 "_now": 0})
    g.consts["TEMPLATE"] = tmpl
    g.consts["STD_ATTRS"] = dict(g.std)
    g.consts["META_ATTRS"] = tuple(g.attr[(h, f)] for h in g.meta for f, _w in g.hfields[h])
    g.consts["FIELD_LISTS"] = {i: tuple(g.fattr(r) for r in refs) for i, refs in g.prog.field_lists.items()}
    g.consts["LEARN_ATTRS"] = {i: tuple(g.fattr(r) for r in ll.fields) for i, ll in g.prog.learn_lists.items()}
    g.consts["FUSED_ATTRS"] = tuple(tmpl)
    g.consts["FUSED_INIT"] = tuple(tmpl.values())
    return ["class P:", "    pass", "", "for _k, _v in TEMPLATE.items():", "    setattr(P, _k, _v)", "",
            "def _spill(L):", "    p = P()", "    p.__dict__.update({a: L[a] for a in FUSED_ATTRS})", "    return p",
            ""] + _fast_path(g)


QUEUE_TIME_FIELDS = ("egress_global_timestamp", "enq_timestamp", "deq_timedelta")


def reads_std(prog: Program, names: tuple[str, ...]) -> bool:
    """True if the program reads or writes one of these standard_metadata fields (under any of
    the names simple_switch gives them)."""
    scopes = (STD, "intrinsic_metadata", "queueing_metadata")

    def walk(v: Any) -> bool:
        if isinstance(v, dict):
            if v.get("type") == "field" and isinstance(v.get("value"), list) and len(v["value"]) == 2:
                return v["value"][0] in scopes and v["value"][1] in names
            return any(walk(x) for x in v.values())
        if isinstance(v, list):
            return any(walk(x) for x in v)
        return False

    return any(walk(prog.doc.get(k)) for k in ("parsers", "deparsers", "actions", "pipelines", "calculations",
                                                "checksums", "field_lists", "learn_lists"))


def egress_start(g: Gen, sm: Any, ind: str) -> list[str]:
    """Lines that end ingress of a unicast packet and start its egress, as simple_switch does:
    instance_type back to 0, a priority past the queues drops it, queue and egress timestamps
    (real clock reads only in a program that looks at them), egress_spec 0, packet_length from
    the length register. Expects `spec` (the egress port) and `now` (the packet's time)."""
    out: list[str] = []
    if "instance_type" in g.std:
        out.append(f"{ind}{sm('instance_type')} = 0")
    if "priority" in g.std:
        out += [f"{ind}if {sm('priority')} >= NB_QUEUES:", f"{ind}    return []"]
    out += [f"{ind}{sm('egress_port')} = spec", f"{ind}{sm('egress_spec')} = 0",
            f"{ind}{sm('packet_length')} = p._ilen + p._dlen"]
    if reads_std(g.prog, QUEUE_TIME_FIELDS):
        out += [f"{ind}tq = dev.now_us()"]
        if "enq_timestamp" in g.std:
            out.append(f"{ind}{sm('enq_timestamp')} = tq & 0xFFFFFFFF")
        out += [f"{ind}te = dev.now_us()"]
        if "egress_global_timestamp" in g.std:
            out.append(f"{ind}{sm('egress_global_timestamp')} = te")
        if "deq_timedelta" in g.std:
            out.append(f"{ind}{sm('deq_timedelta')} = (te - tq) & 0xFFFFFFFF")
    else:
        if "enq_timestamp" in g.std:
            out.append(f"{ind}{sm('enq_timestamp')} = now & 0xFFFFFFFF")
        if "egress_global_timestamp" in g.std:
            out.append(f"{ind}{sm('egress_global_timestamp')} = now")
    return out


def _fast_path(g: Gen) -> list[str]:
    """FAST(b, port, now, dev, pl) -> [(port, frame)]: the unicast case in one function, with direct
    attribute names. Anything else (clone, digest, resubmit, multicast, recirculate) is handed to
    SLOW(dev, pl, p, egress_port or None, now), the general flow of p4sim.switch.engine."""
    need = ("ingress_port", "packet_length", "egress_spec", "egress_port")
    if any(f not in g.std for f in need):
        return ["FAST = None", ""]

    def sm(f: str) -> str:
        return f"p.{g.std[f]}"

    out = ["def FAST(b, port, now, dev, pl):", "    p = P()", "    p._b = b", f"    {sm('ingress_port')} = port",
           f"    {sm('packet_length')} = len(b)", "    p._ilen = len(b)", "    p._now = now"]
    if "ingress_global_timestamp" in g.std:
        out.append(f"    {sm('ingress_global_timestamp')} = now")
    mcast = f" or {sm('mcast_grp')}" if "mcast_grp" in g.std else ""
    out += ["    parse_fresh(p, b)", "    verify_checksums(p)", "    ingress(p)", "    p._exit = False",
            f"    if p._clone_i2e is not None or p._digest is not None or p._resubmit is not None{mcast}:",
            "        return SLOW(dev, pl, p, None, now)",
            f"    spec = {sm('egress_spec')}", "    if spec == 511:", "        return []"]
    out += egress_start(g, sm, "    ")
    out += ["    egress(p)", "    p._exit = False",
            "    if p._clone_e2e is not None or p._recirc is not None:", "        return SLOW(dev, pl, p, spec, now)",
            f"    if {sm('egress_spec')} == 511:", "        return []",
            "    update_checksums(p)", "    out = deparse(p)", "    if p._trunc and len(out) > p._trunc:",
            "        out = out[:p._trunc]", "    return [(spec, out)]", ""]
    return out
