"""p4sim compiler: bmv2 JSON and P4Info of whole programs (names and IDs as p4c gives them)."""

from __future__ import annotations

from pathlib import Path

from p4sim.compiler.compile import compile_file
from p4sim.compiler.p4info import _aliases, jenkins_one_at_a_time
from p4sim.tests.corpus import CORPUS, build, error_of, source


def test_p4c_id_hash() -> None:
    # NoAction is 21257015 (0x01445637) in every p4c-generated P4Info
    assert (0x01 << 24) | (jenkins_one_at_a_time("NoAction") & 0xFFFFFF) == 21257015


def test_aliases_are_shortest_unique_suffixes() -> None:
    names = ["I.a.t", "I.b.t", "E.u", "NoAction", "I.x"]
    assert _aliases(names) == {"I.a.t": "a.t", "I.b.t": "b.t", "E.u": "u", "NoAction": "NoAction", "I.x": "x"}


def test_l3_program_names_match_p4c() -> None:
    res = compile_file(CORPUS / "l3_basic.p4")
    info = res.p4info
    tables = {t.preamble.name: t for t in info.tables}
    # IDs of p4lang/tutorials basic.p4, as produced by p4c
    assert tables["MyIngress.ipv4_lpm"].preamble.id == 37375156
    actions = {a.preamble.name: a.preamble.id for a in info.actions}
    assert actions["MyIngress.drop"] == 25652968 and actions["MyIngress.ipv4_forward"] == 28792405
    lpm = tables["MyIngress.ipv4_lpm"].match_fields[0]
    assert (lpm.name, lpm.bitwidth, lpm.match_type) == ("hdr.ipv4.dstAddr", 32, 3)  # LPM
    acl = tables["MyIngress.acl"]
    assert [f.name for f in acl.match_fields] == ["ipv4_src", "standard_metadata.ingress_port"]
    assert acl.const_default_action_id == actions["NoAction"]
    assert [c.preamble.name for c in info.counters] == ["MyIngress.port_rx"]
    j = res.json
    assert [p["name"] for p in j["pipelines"]] == ["ingress", "egress"]
    assert j["parsers"][0]["name"] == "parser" and j["deparsers"][0]["order"] == ["ethernet", "ipv4"]
    assert j["headers"][0]["name"] == "scalars" and j["header_types"][0]["name"] == "scalars_0"
    assert [c["verify"] for c in j["checksums"]] == [True, False]
    assert j["calculations"][0]["algo"] == "csum16" and len(j["calculations"][0]["input"]) == 11


def test_features_program_p4info() -> None:
    res = compile_file(CORPUS / "features.p4")
    info = res.p4info
    t = {x.preamble.name: x for x in info.tables}
    assert t["Ing.ecmp"].implementation_id == info.action_profiles[0].preamble.id
    assert info.action_profiles[0].with_selector and info.action_profiles[0].size == 128
    assert [f.name for f in t["Ing.ecmp"].match_fields] == ["hdr.ipv4.dst"]
    assert t["Ing.fwd"].direct_resource_ids[0] == info.direct_counters[0].preamble.id
    assert t["Ing.fwd"].size == 64 and t["Ing.classify"].is_const_table
    assert [f.match_type for f in t["Ing.classify"].match_fields] == [4, 5, 2]  # TERNARY, RANGE, EXACT
    assert t["Ing.classify"].match_fields[2].name == "hdr.vlan[0].$valid$"  # p4c TableKeyNames
    drop_ref = [r for r in t["Ing.fwd"].action_refs if r.scope == 2]
    assert len(drop_ref) == 1  # @defaultonly
    a = {x.preamble.name: x.preamble.id for x in info.actions}
    assert a["Ing.rewrite_tos"] == 0x01000123  # @id honoured
    assert {c.preamble.name for c in info.controller_packet_metadata} == {"packet_in", "packet_out"}
    assert info.registers[0].type_spec.bitstring.bit.bitwidth == 32
    assert info.digests[0].preamble.name == "learn_t"
    assert info.meters[0].size == 16
    j = res.json
    assert j["header_stacks"][0]["size"] == 2 and j["field_lists"][0]["name"] == "field_list1"
    states = {s["name"]: s for s in j["parsers"][0]["parse_states"]}
    eth = states["parse_ethernet"]["transitions"]
    # the range 0x0000..0x05ff became value/mask pairs
    assert {"type": "hexstr", "value": "0x0000", "mask": "0xfc00", "next_state": None} in eth
    assert states["parse_ipv4"]["transition_key"] == [{"type": "lookahead", "value": [0, 4]}]
    ing = j["pipelines"][0]
    fwd = next(x for x in ing["tables"] if x["name"] == "Ing.fwd")
    assert fwd["with_counters"] and set(fwd["next_tables"]) == {"Ing.forward", "Ing.drop"}
    ecmp = next(x for x in ing["tables"] if x["name"] == "Ing.ecmp")
    assert ecmp["type"] == "indirect_ws" and "default_entry" not in ecmp  # as p4c for action profiles
    classify = next(x for x in ing["tables"] if x["name"] == "Ing.classify")
    assert set(classify["next_tables"]) == {"__HIT__", "__MISS__"} and classify["base_default_next"] is None
    assert classify["next_tables"]["__MISS__"] == "Ing.ecmp"
    assert len(classify["entries"]) == 2 and classify["max_size"] == 2  # sized to its const entries


def test_if_in_action_is_predicated(tmp_path: Path) -> None:
    res = build(tmp_path, "a();", "action a() { if (hdr.h.a == 1) { m.x = 2; } else { m.x = 3; } }")
    act = next(a for a in res.json["actions"] if a["name"] == "I.a")
    ops = [p["op"] for p in act["primitives"]]
    assert ops == ["assign", "assign", "assign"]
    assert act["primitives"][1]["parameters"][1]["value"]["value"]["op"] == "?"


def test_parameters_in_bmv2_form(tmp_path: Path) -> None:
    # bmv2 JSON_format.md: a parameter of type expression holds a whole expression (so an operator node
    # is wrapped twice, as p4c writes it); action data is runtime_data as a parameter, local inside one
    res = build(tmp_path, "t.apply();", "action a(bit<8> v) { m.x = v; m.x = v + 1; }"
                " table t { key = { m.y: exact; } actions = { a; } }")
    act = next(a for a in res.json["actions"] if a["name"] == "I.a")
    plain, added = (p["parameters"][1] for p in act["primitives"])
    assert plain == {"type": "runtime_data", "value": 0}
    assert added["type"] == "expression" and added["value"]["type"] == "expression"
    node = added["value"]["value"]
    assert node["op"] == "&" and node["left"]["value"]["left"] == {"type": "local", "value": 0}
    parser = ("state start { p.extract(hdr.h); p.advance((bit<32>)hdr.h.a * 8); transition accept; }")
    (op,) = [o for o in build(tmp_path, parser=parser).json["parsers"][0]["parse_states"][0]["parser_ops"]
             if o["op"] == "advance"]
    assert op["parameters"][0]["type"] == "expression" and op["parameters"][0]["value"]["value"]["op"] == "&"


def test_idle_timeout_and_optional_keys(tmp_path: Path) -> None:
    res = build(tmp_path, "t.apply();", "table t { key = { m.x: optional; m.y: exact; } actions = { NoAction; }"
                " support_timeout = true; const entries = { (_, 1): NoAction(); (3, 2): NoAction(); } }")
    t = res.p4info.tables[0]
    assert t.idle_timeout_behavior == t.NOTIFY_CONTROL and [f.match_type for f in t.match_fields] == [6, 2]
    tj = res.json["pipelines"][0]["tables"][0]
    assert tj["support_timeout"] and tj["match_type"] == "ternary" and tj["key"][0]["match_type"] == "ternary"
    assert tj["entries"][0]["match_key"][0] == {"match_type": "ternary", "key": "0x00", "mask": "0x00"}
    assert [e["priority"] for e in tj["entries"]] == [1, 2]


def test_key_names_follow_p4c(tmp_path: Path) -> None:
    top = "struct s_t { @name(\"renamed\") bit<8> f; }"
    res = build(tmp_path, "t.apply();", "s_t s; table t { key = { m.y & 0xff00: ternary; hdr.h.b[3:0]: exact;"
                " hdr.h.isValid(): exact; s.f: exact; } actions = { NoAction; } }", top=top)
    fields = [(f.name, f.bitwidth) for f in res.p4info.tables[0].match_fields]
    assert fields == [("m.y & 0xff00", 16), ("hdr.h.b[3:0]", 4), ("hdr.h.$valid$", 1), ("s.renamed", 8)]
    tables = res.json["pipelines"][0]["tables"]
    key = tables[-1]["key"]
    # p4c 1.2.5.16 computes a slice key into a temporary of the slice's width (its P4Info width too)
    assert key[0]["mask"] == "0xff00" and key[1]["target"] == ["scalars", "key_t_0"] and key[1]["mask"] is None
    assert key[2]["target"] == ["h", "$valid$"]
    msg = error_of(tmp_path, "t.apply();", "table t { key = { m.x + 1: exact; } actions = { NoAction; } }")
    assert "complex key expression requires a @name annotation" in msg
    res = build(tmp_path, "t.apply();", "table t { key = { m.x + 1: exact @name(\"next\"); } actions = { NoAction; } }")
    tables = res.json["pipelines"][0]["tables"]
    assert res.json["pipelines"][0]["init_table"] == tables[0]["name"] != "I.t"  # computes the key first
    assert tables[0]["next_tables"] == {tables[0]["actions"][0]: "I.t"}
    assert tables[1]["key"][0]["target"] == ["scalars", "key_t_0"]


def test_storage_names_follow_p4c(tmp_path: Path) -> None:
    top = "struct pair_t { bit<8> a; bit<8> b; }"
    res = build(tmp_path, "pair_t p = { 1, 2 }; bit<8> local = p.a; m.x = local;", top=top)
    j = res.json
    assert [f[0] for f in j["header_types"][0]["fields"]][:3] == ["m_t.x", "m_t.y", "m_t.f"]
    meta = [h for h in j["headers"] if h["metadata"] and h["name"] not in ("scalars", "standard_metadata")]
    assert [(h["name"], h["header_type"]) for h in meta] == [("p", "pair_t")]
    assert "local" in [f[0] for f in j["header_types"][0]["fields"]]


def test_direct_meter_and_entry_priorities(tmp_path: Path) -> None:
    locals_ = ("direct_meter<bit<8>>(MeterType.bytes) dm; action a() { dm.read(m.x); }"
               " table t { key = { m.y: ternary; } actions = { a; NoAction; } meters = dm;"
               " const entries = { @priority(7) 1 &&& 3: a(); priority = 9: 2: a(); 3: NoAction(); } }")
    res = build(tmp_path, "t.apply();", locals_)
    mj = res.json["meter_arrays"][0]
    assert (mj["name"], mj["is_direct"], mj["binding"], mj["result_target"], mj["type"]) == \
        ("I.dm", True, "I.t", ["scalars", "m_t.x"], "bytes")
    assert res.json["pipelines"][0]["tables"][0]["direct_meters"] == "I.dm"
    dm = res.p4info.direct_meters[0]
    assert dm.direct_table_id == res.p4info.tables[0].preamble.id and dm.spec.unit == dm.spec.BYTES
    assert res.p4info.tables[0].direct_resource_ids == [dm.preamble.id]
    assert [e["priority"] for e in res.json["pipelines"][0]["tables"][0]["entries"]] == [7, 9, 3]
    msg = error_of(tmp_path, "t.apply();", "direct_meter<bit<8>>(MeterType.bytes) dm; table t {"
                   " key = { m.y: exact; } actions = { NoAction; } meters = dm; }")
    assert "direct meter I.dm is never read" in msg


def test_id_annotations_anywhere(tmp_path: Path) -> None:
    top = """control Sub(inout m_t mm) {
        @id(0x0200abcd) table t { key = { mm.x: exact; } actions = { NoAction; } }
        @id(77) counter(4, CounterType.packets) c;
        apply { c.count(0); t.apply(); } }"""
    res = build(tmp_path, "s.apply(m);", "Sub() s;", top=top)
    assert res.p4info.tables[0].preamble.id == 0x0200ABCD
    assert res.p4info.counters[0].preamble.id == (0x12 << 24) | 77
    msg = error_of(tmp_path, "t.apply();", "@id(0x01000001) table t { key = { m.x: exact; } actions = { NoAction; } }")
    assert "has the wrong prefix: expected 0x02" in msg and msg.startswith(str(tmp_path))


def test_digest_names_follow_p4c(tmp_path: Path) -> None:
    # p4c (getDigestCall): digest<T> is named after T (its @name), a tuple digest_0, digest_1 in call order
    top = '@name("learn") struct dg_t { bit<8> a; bit<16> b; }\nstruct plain_t { bit<8> a; }'
    res = build(tmp_path, "digest<dg_t>(1, {hdr.h.a, m.y}); digest(2, {m.x, m.y}); digest(3, {m.x});"
                " plain_t p = { m.x }; digest(4, p);", top=top)
    info = {d.preamble.name: d for d in res.p4info.digests}
    assert set(info) == {"learn", "digest_0", "digest_1", "plain_t"}
    assert info["learn"].type_spec.struct.name == "dg_t"
    assert [m.name for m in res.p4info.type_info.structs["dg_t"].members] == ["a", "b"]
    assert len(info["digest_0"].type_spec.tuple.members) == 2
    assert info["plain_t"].type_spec.struct.name == "plain_t"
    assert [ll["name"] for ll in res.json["learn_lists"]] == ["learn", "digest_0", "digest_1", "plain_t"]
    assert "expected 2 members" in error_of(tmp_path, "digest<dg_t>(1, {hdr.h.a});", top=top)


def test_field_lists_as_current_p4c(tmp_path: Path) -> None:
    # p4c: every @field_list(N) list exists up front (ids from 1, metadata field order), clone() gets an
    # empty list of its own, an index no field carries gets a new empty list (with a warning)
    src = tmp_path / "fl.p4"
    body = ("clone(CloneType.I2E, 5); clone_preserving_field_list(CloneType.I2E, 6, 2);"
            " resubmit_preserving_field_list(1); clone_preserving_field_list(CloneType.I2E, 7, 9);")
    src.write_text(source(body).replace("struct m_t { bit<8> x; bit<16> y; bool f; }",
                                        "struct m_t { @field_list(2, 1) bit<8> x; @field_list(1) bit<16> y; bool f; }"))
    res = compile_file(src)
    fls = [(f["id"], f["name"], [e["value"][1] for e in f["elements"]]) for f in res.json["field_lists"]]
    assert fls == [(1, "field_list2", ["m_t.x"]), (2, "field_list1", ["m_t.x", "m_t.y"]), (3, "fl", []),
                   (4, "empty", [])]
    ops = [(p["op"], [q["value"] for q in p["parameters"]]) for a in res.json["actions"] for p in a["primitives"]]
    assert ops == [("clone_ingress_pkt_to_egress", ["0x00000005", "0x03"]),
                   ("clone_ingress_pkt_to_egress", ["0x00000006", "0x01"]),
                   ("resubmit", ["0x02"]),
                   ("clone_ingress_pkt_to_egress", ["0x00000007", "0x04"])]


DIRECT_CALL_SRC = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers_t { eth_t eth; }
struct meta_t { bit<32> a; bit<32> b; }
parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.eth); transition accept; }
}
control V(inout headers_t hdr, inout meta_t m) { apply { } }
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<32>>(16) r;
    action load() { r.read(m.a, 32w1); }
    apply {
        load();
        bit<32> x = m.a + 1;
        m.b = x;
        sm.egress_spec = (bit<9>) m.b;
    }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_direct_call_merged_with_statements_keeps_the_action_in_json(tmp_path: Path) -> None:
    # A directly called action merged into one hidden action with the statements after it is still
    # in P4Info (as p4c lists it), so it must be in the JSON too or the switch refuses the pipeline.
    src = tmp_path / "direct.p4"
    src.write_text(DIRECT_CALL_SRC)
    res = compile_file(src)
    in_info = {a.preamble.name for a in res.p4info.actions}
    in_json = {a["name"] for a in res.json["actions"]}
    assert "I.load" in in_info
    assert in_info <= in_json
