"""Small v1model programs as bmv2 JSON in the exact shape p4c-bm2-ss emits, for the switch tests.

`basic_router.json` beside this file is a literal document; the programs here are built in Python
(same format: header_types with (name, width, signed) triples, typed parameters, nested
{"type": "expression", "value": {...}} objects, tables with action_ids/next_tables/default_entry).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent

STD_FIELDS = [
    ("ingress_port", 9), ("egress_spec", 9), ("egress_port", 9), ("instance_type", 32), ("packet_length", 32),
    ("enq_timestamp", 32), ("enq_qdepth", 19), ("deq_timedelta", 32), ("deq_qdepth", 19),
    ("ingress_global_timestamp", 48), ("egress_global_timestamp", 48), ("mcast_grp", 16), ("egress_rid", 16),
    ("checksum_error", 1), ("parser_error", 32), ("priority", 3), ("_padding", 3)]
ETH = [("dstAddr", 48), ("srcAddr", 48), ("etherType", 16)]
IPV4 = [("version", 4), ("ihl", 4), ("diffserv", 8), ("totalLen", 16), ("identification", 16), ("flags", 3),
        ("fragOffset", 13), ("ttl", 8), ("protocol", 8), ("hdrChecksum", 16), ("srcAddr", 32), ("dstAddr", 32)]
L4 = [("srcPort", 16), ("dstPort", 16)]
ERRORS = [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2], ["StackOutOfBounds", 3], ["HeaderTooShort", 4],
          ["ParserTimeout", 5], ["ParserInvalidArgument", 6]]


def F(h: str, f: str) -> dict[str, Any]:  # noqa: N802 - reads like the JSON it builds
    """A field reference."""
    return {"type": "field", "value": [h, f]}


def X(v: int) -> dict[str, Any]:  # noqa: N802
    """A hexstr constant."""
    return {"type": "hexstr", "value": hex(v) if v >= 0 else "-" + hex(-v)}


def R(i: int) -> dict[str, Any]:  # noqa: N802
    """Action runtime data i."""
    return {"type": "runtime_data", "value": i}


def E(op: str, left: Any, right: Any) -> dict[str, Any]:  # noqa: N802
    """An expression object (nested the way p4c nests it)."""
    return {"type": "expression", "value": {"op": op, "left": left, "right": right}}


def valid(h: str) -> dict[str, Any]:
    """The condition `h.isValid()` as p4c emits it."""
    return E("d2b", None, F(h, "$valid$"))


def prim(op: str, *params: dict[str, Any]) -> dict[str, Any]:
    """A primitive call."""
    return {"op": op, "parameters": list(params)}


def assign(dst: dict[str, Any], src: dict[str, Any]) -> dict[str, Any]:
    """An assign primitive; expression sources are wrapped once more, as p4c does."""
    if src["type"] == "expression":
        src = {"type": "expression", "value": src}
    return prim("assign", dst, src)


def masked(e: dict[str, Any], width: int) -> dict[str, Any]:
    """e & (2**width - 1), p4c's truncation of arithmetic."""
    return E("&", e, X((1 << width) - 1))


class Builder:
    """Accumulates a bmv2 JSON document."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.doc: dict[str, Any] = {
            "header_types": [], "headers": [], "header_stacks": [], "header_union_types": [], "header_unions": [],
            "header_union_stacks": [], "field_lists": [], "errors": ERRORS, "enums": [], "parsers": [],
            "parse_vsets": [], "deparsers": [], "meter_arrays": [], "counter_arrays": [], "register_arrays": [],
            "calculations": [], "learn_lists": [], "actions": [], "pipelines": [], "checksums": [],
            "force_arith": [], "extern_instances": [], "field_aliases": [], "program": f"{name}.p4",
            "__meta__": {"version": [2, 23], "compiler": "p4sim test builder (p4c-bm2-ss output shape)"}}
        self._ids: dict[str, int] = {}
        self.header_type("standard_metadata", STD_FIELDS)
        self.header("standard_metadata", "standard_metadata", metadata=True)

    def _id(self, kind: str) -> int:
        self._ids[kind] = self._ids.get(kind, -1) + 1
        return self._ids[kind]

    def header_type(self, name: str, fields: list[tuple[str, int]]) -> None:
        """Declare a header type."""
        self.doc["header_types"].append({"name": name, "id": self._id("ht"),
                                         "fields": [[f, w, False] for f, w in fields]})

    def header(self, name: str, htype: str, metadata: bool = False) -> None:
        """Declare a header instance."""
        self.doc["headers"].append({"name": name, "id": self._id("h"), "header_type": htype,
                                    "metadata": metadata, "pi_omit": True})

    def action(self, name: str, params: list[tuple[str, int]], prims: list[dict[str, Any]]) -> int:
        """Declare an action; return its id."""
        aid = self._id("a")
        self.doc["actions"].append({"name": name, "id": aid, "runtime_data": [
            {"name": n, "bitwidth": w} for n, w in params], "primitives": prims})
        return aid

    def action_id(self, name: str) -> int:
        """The id of a declared action."""
        return next(a["id"] for a in self.doc["actions"] if a["name"] == name)

    def table(self, pipeline: dict[str, Any], name: str, key: list[tuple[str, Any, str]], actions: list[str],
              default: str, default_data: list[int] | None = None, next_node: str | None = None,
              match_type: str | None = None, const_default: bool = False, **extra: Any) -> dict[str, Any]:
        """Add a table; key items are (match_type, target, name)."""
        kinds = {k[0] for k in key}
        mt = match_type or ("range" if "range" in kinds else "ternary" if kinds & {"ternary", "optional"}
                            else "lpm" if "lpm" in kinds else "exact")
        ids = [self.action_id(a) for a in actions]
        t = {"name": name, "id": self._id("t"), "source_info": {},
             "key": [{"match_type": m, "name": n, "target": tgt, "mask": None} for m, tgt, n in key],
             "match_type": mt, "type": "simple", "max_size": 1024, "with_counters": False,
             "support_timeout": False, "direct_meters": None, "action_ids": ids, "actions": actions,
             "base_default_next": next_node, "next_tables": {a: next_node for a in actions},
             "default_entry": {"action_id": self.action_id(default), "action_const": const_default,
                               "action_data": [hex(v) for v in (default_data or [])],
                               "action_entry_const": const_default}}
        t.update(extra)
        pipeline["tables"].append(t)
        return t

    def pipeline(self, name: str) -> dict[str, Any]:
        """Add a pipeline (ingress or egress)."""
        pl = {"name": name, "id": self._id("p"), "init_table": None, "tables": [], "action_profiles": [],
              "conditionals": []}
        self.doc["pipelines"].append(pl)
        return pl

    def json(self) -> bytes:
        """The document as JSON bytes."""
        return json.dumps(self.doc, indent=1).encode()


def _parser_eth_ipv4_l4(b: Builder) -> None:
    b.doc["parsers"].append({"name": "parser", "id": 0, "init_state": "start", "parse_states": [
        {"name": "start", "id": 0, "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}],
         "transition_key": [F("ethernet", "etherType")],
         "transitions": [{"type": "hexstr", "value": "0x0800", "mask": None, "next_state": "parse_ipv4"},
                         {"type": "default", "value": None, "mask": None, "next_state": None}]},
        {"name": "parse_ipv4", "id": 1, "parser_ops": [
            {"op": "extract", "parameters": [{"type": "regular", "value": "ipv4"}]},
            {"op": "verify", "parameters": [
                E("==", F("ipv4", "version"), X(4)), X(7)]}],
         "transition_key": [F("ipv4", "fragOffset"), F("ipv4", "ihl"), F("ipv4", "protocol")],
         "transitions": [{"type": "hexstr", "value": "0x00000506", "mask": None, "next_state": "parse_l4"},
                         {"type": "hexstr", "value": "0x00000511", "mask": "0x0000ffff", "next_state": "parse_l4"},
                         {"type": "default", "value": None, "mask": None, "next_state": None}]},
        {"name": "parse_l4", "id": 2, "parser_ops": [
            {"op": "extract", "parameters": [{"type": "regular", "value": "l4"}]}],
         "transition_key": [], "transitions": [{"type": "default", "value": None, "mask": None, "next_state": None}]},
    ]})
    b.doc["deparsers"].append({"name": "deparser", "id": 0, "order": ["ethernet", "ipv4", "l4"], "primitives": []})
    b.doc["errors"] = ERRORS + [["BadVersion", 7]]


def _ipv4_checksum(b: Builder) -> None:
    b.doc["calculations"].append({"name": "calc", "id": 0, "algo": "csum16", "input": [
        F("ipv4", f) for f, _ in IPV4 if f != "hdrChecksum"]})
    b.doc["checksums"].append({"name": "cksum", "id": 0, "target": ["ipv4", "hdrChecksum"], "type": "generic",
                               "calculation": "calc", "verify": False, "update": True, "if_cond": valid("ipv4")})
    b.doc["checksums"].append({"name": "cksum_0", "id": 1, "target": ["ipv4", "hdrChecksum"], "type": "generic",
                               "calculation": "calc", "verify": True, "update": False, "if_cond": valid("ipv4")})


def l3_ecmp() -> bytes:
    """An L3 program: ACL (ternary, priorities; bmv2 has no optional match kind), LPM route to an ECMP selector (crc16 5-tuple),
    TTL check and decrement, egress source MAC table, per-port counters, IPv4 checksum verify/update."""
    b = Builder("l3_ecmp")
    b.header_type("scalars_0", [("userMetadata.nhop", 16)])
    b.header_type("ethernet_t", ETH)
    b.header_type("ipv4_t", IPV4)
    b.header_type("l4_t", L4)
    b.header("scalars", "scalars_0", metadata=True)
    b.header("ethernet", "ethernet_t")
    b.header("ipv4", "ipv4_t")
    b.header("l4", "l4_t")
    _parser_eth_ipv4_l4(b)
    _ipv4_checksum(b)
    b.doc["counter_arrays"] = [
        {"name": "Ing.port_rx", "id": 0, "is_direct": False, "size": 512},
        {"name": "Ing.acl_counter", "id": 1, "is_direct": True, "binding": "Ing.acl"}]
    sm = "standard_metadata"
    b.action("NoAction", [], [])
    b.action("Ing.drop", [], [prim("mark_to_drop", {"type": "header", "value": sm})])
    b.action("Ing.acl_forward", [("port", 9)], [assign(F(sm, "egress_spec"), R(0))])
    b.action("Ing.set_next_hop", [("port", 9), ("dmac", 48)], [
        assign(F(sm, "egress_spec"), R(0)), assign(F("ethernet", "dstAddr"), R(1)),
        assign(F("ipv4", "ttl"), masked(E("+", F("ipv4", "ttl"), X(0xFF)), 8))])
    b.action("Ing.count_rx", [], [prim("count", {"type": "counter_array", "value": "Ing.port_rx"},
                                       F(sm, "ingress_port"))])
    b.action("Eg.set_smac", [("smac", 48)], [assign(F("ethernet", "srcAddr"), R(0))])
    ing = b.pipeline("ingress")
    ing["init_table"] = "tbl_count_rx"
    b.table(ing, "tbl_count_rx", [], ["Ing.count_rx"], "Ing.count_rx", next_node="node_2", const_default=True)
    ing["conditionals"].append({"name": "node_2", "id": 0, "expression": valid("ipv4"),
                                "true_next": "node_3", "false_next": None})
    ing["conditionals"].append({"name": "node_3", "id": 1,
                                "expression": E("<=", F("ipv4", "ttl"), X(1)),
                                "true_next": "tbl_drop", "false_next": "Ing.acl"})
    b.table(ing, "tbl_drop", [], ["Ing.drop"], "Ing.drop", const_default=True)
    acl = b.table(ing, "Ing.acl", [("ternary", ["ipv4", "srcAddr"], "ipv4_src"),
                                   ("ternary", ["ipv4", "dstAddr"], "ipv4_dst"),
                                   ("ternary", ["standard_metadata", "ingress_port"], "ingress_port")],
                  ["Ing.acl_forward", "Ing.drop", "NoAction"], "NoAction", with_counters=True)
    acl["next_tables"] = {"__HIT__": None, "__MISS__": "Ing.route"}
    b.table(ing, "Ing.route", [("lpm", ["ipv4", "dstAddr"], "ipv4_dst")], ["Ing.set_next_hop", "Ing.drop"],
            "Ing.drop", type="indirect_ws", action_profile="Ing.ecmp_selector")
    ing["action_profiles"].append({"name": "Ing.ecmp_selector", "id": 0, "max_size": 128, "selector": {
        "algo": "crc16", "input": [F("ipv4", "srcAddr"), F("ipv4", "dstAddr"), F("ipv4", "protocol"),
                                   F("l4", "srcPort"), F("l4", "dstPort")]}})
    eg = b.pipeline("egress")
    eg["init_table"] = "Eg.port_mac"
    b.table(eg, "Eg.port_mac", [("exact", ["standard_metadata", "egress_port"], "egress_port")],
            ["Eg.set_smac", "NoAction"], "NoAction")
    return b.json()


def replicate() -> bytes:
    """A program for the packet replication engine and v1model externs: unicast, multicast, I2E/E2E
    clone with a preserved field list, resubmit, recirculate, digest, register, meter, hash, random."""
    b = Builder("replicate")
    b.header_type("scalars_0", [("userMetadata.mark", 8), ("userMetadata.color", 8), ("userMetadata.h", 16)])
    b.header_type("ethernet_t", ETH)
    b.header_type("info_t", [("instance_type", 8), ("rid", 16), ("mark", 8), ("color", 8), ("hash", 16),
                             ("rnd", 8), ("reg", 32)])
    b.header("scalars", "scalars_0", metadata=True)
    b.header("ethernet", "ethernet_t")
    b.header("info", "info_t")
    b.doc["parsers"].append({"name": "parser", "id": 0, "init_state": "start", "parse_states": [
        {"name": "start", "id": 0, "parser_ops": [
            {"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]},
            {"op": "set", "parameters": [F("scalars", "userMetadata.h"),
                                         {"type": "lookahead", "value": [0, 16]}]}],
         "transition_key": [], "transitions": [{"type": "default", "value": None, "mask": None, "next_state": None}]}]})
    b.doc["deparsers"].append({"name": "deparser", "id": 0, "order": ["ethernet", "info"], "primitives": []})
    b.doc["field_lists"] = [{"id": 1, "name": "fl", "elements": [F("scalars", "userMetadata.mark")]}]
    b.doc["learn_lists"] = [{"id": 1, "name": "Ing.learn_t", "source_info": {},
                             "elements": [F("ethernet", "srcAddr"), F("standard_metadata", "ingress_port")]}]
    b.doc["register_arrays"] = [{"name": "Ing.reg", "id": 0, "size": 16, "bitwidth": 32}]
    b.doc["meter_arrays"] = [{"name": "Ing.meter", "id": 0, "is_direct": False, "size": 4, "rate_count": 2,
                              "type": "packets"}]
    b.doc["calculations"] = [{"name": "calc_hash", "id": 0, "algo": "crc32",
                              "input": [F("ethernet", "srcAddr"), F("ethernet", "dstAddr")]}]
    sm = "standard_metadata"
    b.action("NoAction", [], [])
    b.action("Ing.unicast", [("port", 9)], [assign(F(sm, "egress_spec"), R(0))])
    b.action("Ing.multicast", [("grp", 16)], [assign(F(sm, "mcast_grp"), R(0))])
    b.action("Ing.clone_i2e", [("port", 9), ("session", 32)], [
        assign(F(sm, "egress_spec"), R(0)), assign(F("scalars", "userMetadata.mark"), X(0x5A)),
        prim("clone_ingress_pkt_to_egress", R(1), X(1))])
    b.action("Ing.resubmit", [("port", 9)], [
        assign(F(sm, "egress_spec"), R(0)), assign(F("scalars", "userMetadata.mark"), X(0x77)),
        prim("resubmit", X(1))])
    b.action("Ing.learn", [("port", 9)], [assign(F(sm, "egress_spec"), R(0)), prim("generate_digest", X(1), X(1))])
    b.action("Ing.externs", [("port", 9)], [
        assign(F(sm, "egress_spec"), R(0)),
        prim("register_read", F("scalars", "userMetadata.mark"), {"type": "register_array", "value": "Ing.reg"}, X(3)),
        prim("register_write", {"type": "register_array", "value": "Ing.reg"}, X(3),
             {"type": "expression", "value": masked(E("+", F("scalars", "userMetadata.mark"), X(1)), 32)}),
        prim("execute_meter", {"type": "meter_array", "value": "Ing.meter"}, X(0), F("scalars", "userMetadata.color")),
        prim("modify_field_with_hash_based_offset", F("scalars", "userMetadata.h"), X(0),
             {"type": "calculation", "value": "calc_hash"}, X(0x10000))])
    # mark += 0x33: the first pass has 0x33, a recirculated one (mark preserved) 0x66
    b.action("Ing.recirc", [("port", 9)], [assign(F(sm, "egress_spec"), R(0)), assign(
        F("scalars", "userMetadata.mark"), masked(E("+", F("scalars", "userMetadata.mark"), X(0x33)), 8))])
    b.action("Eg.stamp", [], [
        prim("add_header", {"type": "header", "value": "info"}),
        assign(F("info", "instance_type"), masked(F(sm, "instance_type"), 8)),
        assign(F("info", "rid"), F(sm, "egress_rid")),
        assign(F("info", "mark"), F("scalars", "userMetadata.mark")),
        assign(F("info", "color"), F("scalars", "userMetadata.color")),
        assign(F("info", "hash"), F("scalars", "userMetadata.h")),
        prim("modify_field_rng_uniform", F("info", "rnd"), X(10), X(20)),
    ])
    b.action("Eg.clone_e2e", [("session", 32)], [prim("clone_egress_pkt_to_egress", R(0), X(1))])
    b.action("Eg.recirculate", [], [prim("recirculate", X(1))])
    ing = b.pipeline("ingress")
    ing["init_table"] = "Ing.fwd"
    b.table(ing, "Ing.fwd", [("exact", ["ethernet", "dstAddr"], "dmac")],
            ["Ing.unicast", "Ing.multicast", "Ing.clone_i2e", "Ing.resubmit", "Ing.learn", "Ing.externs",
             "Ing.recirc", "NoAction"], "NoAction")
    eg = b.pipeline("egress")
    eg["init_table"] = "tbl_stamp"
    b.table(eg, "tbl_stamp", [], ["Eg.stamp"], "Eg.stamp", next_node="Eg.post", const_default=True)
    b.table(eg, "Eg.post", [("exact", ["scalars", "userMetadata.mark"], "mark"),
                            ("exact", ["standard_metadata", "instance_type"], "instance_type")],
            ["Eg.clone_e2e", "Eg.recirculate", "NoAction"], "NoAction")
    return b.json()


def basic_router() -> bytes:
    """The literal p4c-shaped basic router document."""
    return (HERE / "basic_router.json").read_bytes()
