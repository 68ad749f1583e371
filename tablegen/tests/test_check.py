"""Checker: every topology and mode passes; broken entries are caught."""

import copy

import pytest

from fabric.contract import PORT_WATCH_GROUP
from tablegen.check import check, compile_doc, sample_pairs
from topo.generators import fattree, hybrid, leafspine, ocscore, ucd4

from .conftest import docs_of

MODES = ["static", "ecmp", "spray"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,make,circuits", [
    ("fattree4", lambda: fattree(4), None),
    ("fattree8", lambda: fattree(8), None),
    ("leafspine", lambda: leafspine(6, 2, 24), None),
    ("ucd4-initial", ucd4, "initial"),
    ("ucd4-reconfigured", ucd4, "reconfigured"),
    ("hybrid-leafspine", lambda: hybrid(leafspine(6, 2, 4)), None),
    ("hybrid-fattree-dark", lambda: hybrid(fattree(4)), "none"),
    ("hybrid-fattree", lambda: hybrid(fattree(4)), None),
    ("ocscore-spines-slot1", lambda: ocscore(6, 2, spines=2), "slot1"),
])
def test_generated_entries_pass(name, make, circuits, mode):
    topo = make()
    docs = docs_of(topo, mode, circuits)
    report = check(topo, docs.get, max_pairs=2000, mode=mode)
    assert report.ok, report.errors
    assert report.walks == 2 * report.pairs
    if mode != "static" and name.startswith("fattree"):
        assert report.groups_checked > 0


def test_fattree_groups_have_k_over_2_members():
    docs = docs_of(fattree(8))
    for name in ("e3_2", "a5_1"):
        groups = [g for g in _path_groups(docs[name]) if g["profile"] == "ecmp_selector"]
        assert [len(g["members"]) for g in groups] == [4]


def _path_groups(doc):
    """The groups of a document other than the port-watch groups."""
    return [g for g in doc["action_profile_groups"] if g["group_id"] != PORT_WATCH_GROUP]


def _report(topo, docs, mode="ecmp"):
    return check(topo, docs.get, mode=mode)


def test_missing_group_member_is_caught():
    topo = fattree(4)
    docs = docs_of(topo)
    g = next(g for g in _path_groups(docs["e0_0"]) if g["profile"] == "ecmp_selector")
    g["members"].pop()
    r = _report(topo, docs)
    assert not r.ok and "least-cost next hops = [3, 4]" in r.errors[0]


def test_loop_is_caught():
    topo = fattree(4)
    docs = docs_of(topo, "static")
    for e in docs["a0_0"]["table_entries"]:  # send a0_0's upward traffic back down to e0_1
        if e["table"] == "path" and e["params"].get("port") in (3, 4):
            e["params"] = {"port": 2, "dmac": "02:00:00:02:00:03"}
    for e in docs["e0_1"]["table_entries"]:  # and e0_1's upward traffic to a0_0
        if e["table"] == "path" and e["params"].get("port") == 4:
            e["params"] = {"port": 3, "dmac": "02:00:00:09:00:02"}
    r = _report(topo, docs, "static")
    assert any("loop" in e for e in r.errors)


def test_wrong_delivery_and_dmac_are_caught():
    topo = fattree(4)
    docs = docs_of(topo, "static")
    bad = copy.deepcopy(docs)
    for e in bad["e3_1"]["table_entries"]:
        if e.get("action") == "to_host" and e["params"]["port"] == 1:
            e["params"]["port"] = 2
    assert any("delivers to port 2" in e for e in _report(topo, bad, "static").errors)
    bad = copy.deepcopy(docs)
    for e in bad["c0_0"]["table_entries"]:
        if e["table"] == "path":
            e["params"]["dmac"] = "02:00:00:00:00:00"
    assert any("dmac 02:00:00:00:00:00" in e for e in _report(topo, bad, "static").errors)
    bad = copy.deepcopy(docs)
    bad["e1_0"]["table_entries"] = [e for e in bad["e1_0"]["table_entries"] if e["table"] != "route"
                                    or e.get("action") != "to_host"]
    assert any("dropped at e1_0" in e for e in _report(topo, bad, "static").errors)


def test_static_where_ecmp_expected_and_missing_liveness():
    topo = fattree(4)
    docs = docs_of(topo, "static")
    assert any("is static but" in e for e in _report(topo, docs, "ecmp").errors)
    docs["c1_1"]["table_entries"] = [e for e in docs["c1_1"]["table_entries"] if e["table"] != "port_liveness"]
    assert any("lacks a port_liveness" in e for e in _report(topo, docs, "static").errors)


def test_missing_version_one_is_caught():
    topo = ucd4()
    docs = docs_of(topo, "static")
    docs["s2"]["table_entries"] = [e for e in docs["s2"]["table_entries"]
                                   if not (e["table"] == "path" and e["match"]["version"] == 1)]
    r = _report(topo, docs, "static")
    assert any("has no path entry" in e and "v1" in e for e in r.errors)
    assert not any(" v0:" in e for e in r.errors)


def test_contract_names_and_ocs_symmetry():
    topo = ucd4()
    docs = docs_of(topo)
    bad = copy.deepcopy(docs["s1"])
    bad["table_entries"][0]["table"] = "routes"
    with pytest.raises(ValueError, match="table 'routes'"):
        compile_doc(bad)
    bad = copy.deepcopy(docs["s1"])
    bad["table_entries"][0]["params"] = {"mac": "x"}
    with pytest.raises(ValueError, match="set_smac params"):
        compile_doc(bad)
    docs["ocs"]["table_entries"].pop()
    with pytest.raises(ValueError, match="no reverse entry"):
        check(topo, docs.get)


def test_sampling():
    hosts = [f"h{i}" for i in range(100)]
    assert len(sample_pairs(hosts[:10], 90)) == 90
    pairs = sample_pairs(hosts, 400, seed=3)
    assert len(pairs) == 400 and all(a != b for a, b in pairs)
    assert len({b for _a, b in pairs}) == 20
    assert pairs == sample_pairs(hosts, 400, seed=3)


@pytest.mark.parametrize("circuits", [None, "none"])
def test_hybrid_replace_uplinks(circuits):
    topo = hybrid(fattree(4), replace=True)
    for mode in MODES:
        r = check(topo, docs_of(topo, mode, circuits).get, mode=mode)
        assert r.ok, r.errors


@pytest.mark.parametrize("failover", [True, False])
def test_failover_layouts_pass_and_are_told_apart(failover):
    topo = ucd4()
    docs = docs_of(topo, "ecmp", failover=failover)
    assert check(topo, docs.get, mode="ecmp", failover=failover).ok
    assert check(topo, docs.get, mode="ecmp").ok  # None accepts either setting
    want = "watches no port (failover on)" if not failover else "watches port 1 (failover off)"
    with pytest.raises(ValueError, match=want.replace("(", r"\(").replace(")", r"\)")):
        check(topo, docs.get, mode="ecmp", failover=not failover)


def _live(doc):
    return [g for g in _path_groups(doc) if g["profile"] == "liveness_selector"]


@pytest.mark.parametrize("breakage,msg", [
    ("no-sentinel", "0 port_down members"),
    ("sentinel-late", "expected the first member with the lowest id"),
    ("sentinel-watched", "sentinel watches port"),
    ("single-member", "expected [1 (port_down), one port_up member]"),
    ("up-first", "expected [1 (port_down), one port_up member]"),
    ("wrong-port", "group 2 watches port 3"),
    ("ecmp-watched", "expected no watch port"),
    ("down-as-up", "expected a port_up member"),
])
def test_broken_liveness_layout_is_caught(breakage, msg):
    doc = copy.deepcopy(docs_of(fattree(4))["e0_0"])
    members, groups = doc["action_profile_members"], _live(doc)
    if breakage == "no-sentinel":
        members[0]["action"] = "port_up"
    elif breakage == "sentinel-late":
        members.append(members.pop(0))
    elif breakage == "sentinel-watched":
        groups[0]["members"][0]["watch_port"] = 1
    elif breakage == "single-member":
        groups[0]["members"].pop(0)
    elif breakage == "up-first":
        groups[0]["members"].reverse()
    elif breakage == "wrong-port":
        groups[1]["members"][1]["watch_port"] = 3
    elif breakage == "ecmp-watched":
        g = next(g for g in _path_groups(doc) if g["profile"] == "ecmp_selector")
        g["members"][0]["watch_port"] = g["members"][0]["member_id"]
    elif breakage == "down-as-up":  # the group's second member is the sentinel itself
        groups[0]["members"][1] = {"member_id": 1, "weight": 1, "watch_port": 1}
    with pytest.raises(ValueError, match=msg.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        compile_doc(doc)


@pytest.mark.parametrize("breakage,msg", [
    ("missing", "spray_selector group 10000 (port watch) lacks ports [1, 2, 3, 4]"),
    ("port-left-out", "ecmp_selector group 10000 (port watch) lacks ports [4]"),
    ("unwatched", "member 2001 watches None: expected one member per port"),
    ("twice", "member 2002 watches 1: expected one member per port"),
])
def test_broken_port_watch_group_is_caught(breakage, msg):
    doc = copy.deepcopy(docs_of(fattree(4))["e0_0"])
    watch = {g["profile"]: g for g in doc["action_profile_groups"] if g["group_id"] == PORT_WATCH_GROUP}
    assert sorted(watch) == ["ecmp_selector", "liveness_selector", "spray_selector"]
    compile_doc(doc)
    if breakage == "missing":
        doc["action_profile_groups"].remove(watch["spray_selector"])
    elif breakage == "port-left-out":
        watch["ecmp_selector"]["members"].pop()
    elif breakage == "unwatched":
        watch["liveness_selector"]["members"][0].pop("watch_port")
    elif breakage == "twice":
        watch["liveness_selector"]["members"][1]["watch_port"] = 1
    with pytest.raises(ValueError, match=msg.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(").replace(")", r"\)")):
        compile_doc(doc)


@pytest.mark.parametrize(("where", "params", "msg"), [
    ("entry", {"port": -1, "dmac": "00:00:0a:00:00:02"}, r"to_host port=-1: expected an integer >= 0"),
    ("entry", {"port": 1, "dmac": "00:00:0a:00:00"}, r"to_host dmac='00:00:0a:00:00': expected a MAC"),
    ("member", {"port": 3, "dmac": "zz"}, r"set_next_hop dmac='zz': expected a MAC"),
    ("member", {"port": "3", "dmac": "02:00:00:05:00:01"}, r"set_next_hop port='3': expected an integer >= 0"),
])
def test_parameter_values_are_checked(where, params, msg):
    doc = copy.deepcopy(docs_of(fattree(4), "ecmp")["e0_0"])
    if where == "entry":
        next(e for e in doc["table_entries"] if e.get("action") == "to_host")["params"] = params
    else:
        next(m for m in doc["action_profile_members"] if m["action"] == "set_next_hop")["params"] = params
    with pytest.raises(ValueError, match=msg):
        compile_doc(doc)
