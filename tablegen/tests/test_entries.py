"""Entry documents: names of the p4src contract, path versions, groups, OCS circuits."""

import pytest

from fabric.contract import FLOWLET_GAP_US, FLOWLET_MAX_HOLD_US, FLOWLET_PAUSE, PORT_WATCH_GROUP
from p4rt import state
from p4rt.diff import diff_states
from p4rt.entities import TableEntry
from tablegen.entries import byte_ns, hash_salt, ocs_state, pick, switch_state
from tablegen.graph import Fabric
from tablegen.routing import planner
from topo.generators import fattree, ucd4

from .conftest import docs_of, states_of


def test_fattree_edge_ecmp():
    lines = states_of(fattree(4))["e0_0"].lines()
    for want in [
        "ecmp_selector member 3 -> set_next_hop(port=3, dmac=02:00:00:09:00:01)",
        "ecmp_selector group 1 -> [3*1, 4*1]",
        "liveness_selector member 1 -> port_down()",
        "liveness_selector member 1002 -> port_up()",
        "liveness_selector group 2 -> [1*1, 1002*1@2]",
        "port_mac egress_port=4 -> set_smac(smac=02:00:00:01:00:04)",
        "port_liveness port=1 -> group(1)",
        "path path_id=1 version=0 -> path_ecmp()",
        "path path_id=1 version=1 -> path_ecmp()",
        "ecmp_group path_id=1 version=1 -> group(1)",
        "path_version path_id=1 -> set_version(version=0)",
        "path_version default -> set_version(version=0)",
        "route ipv4_dst=10.0.0.3/32 -> to_host(port=2, dmac=00:00:0a:00:00:03)",
        "route ipv4_dst=10.0.0.0/24 -> route_drop()",
        "route ipv4_dst=10.0.0.0/8 -> set_path(path_id=1)",
    ]:
        assert want in lines


def test_liveness_sentinel_first_and_failover_off():
    on_st = states_of(fattree(4))["e0_0"]
    on = on_st.to_doc()
    live = [m for m in on["action_profile_members"] if m["profile"] == "liveness_selector"]
    assert on["action_profile_members"][0] == live[0] == {"profile": "liveness_selector", "member_id": 1,
                                                          "action": "port_down", "params": {}}
    assert [m["member_id"] for m in live[1:]] == [1000, 1001, 1002, 1003, 1004, 2001, 2002, 2003, 2004]
    assert "liveness_selector group 10000 -> [2001*1@1, 2002*1@2, 2003*1@3, 2004*1@4]" in on_st.lines()
    assert "liveness_selector group 3 -> [1*1, 1003*1@3]" in on_st.lines()
    assert "liveness_selector group 9999 -> [1*1, 1000*1]" in on_st.lines()
    off = states_of(fattree(4), failover=False)["e0_0"]
    assert "liveness_selector group 3 -> [1*1, 1003*1@3]" in off.lines()  # groups never change
    # on and off differ only in where the port_liveness entries point: a clean run-time diff
    changes = diff_states(on_st, off)
    assert len(changes) == 4 and {(c.op, c.kind) for c in changes} == {("modify", "entry")}
    assert all(c.new.table == "port_liveness" and c.new.group_id == 9999 for c in changes)
    assert states_of(fattree(4), failover="off")["e0_0"] == off


def test_order_members_groups_entries():
    d = docs_of(fattree(4))["a0_0"]
    assert list(d) == ["switch", "device_id", "program", "action_profile_members", "action_profile_groups",
                       "table_entries", "clone_sessions"]
    assert d["clone_sessions"] == [{"session_id": 100, "replicas": [{"port": 255}]}]  # drain probes: CPU port
    tables = [e["table"] for e in d["table_entries"]]
    assert tables.index("path") < tables.index("route")  # a route never points at a missing path
    assert d["device_id"] == 9 and d["program"] == "fabric"


def test_static_has_no_groups_and_spreads():
    d = docs_of(fattree(4), "static")["e0_0"]
    assert all(g["profile"] == "liveness_selector" for g in d["action_profile_groups"]
               if g["group_id"] != PORT_WATCH_GROUP)
    ports = {e["params"]["port"] for e in d["table_entries"] if e["table"] == "path"}
    assert ports == {3, 4}  # destinations hashed over both uplinks


def _static_port(doc, prefix):
    """The port a static-mode document sends `prefix` to (its route's path, version 0)."""
    pid = next(e["params"]["path_id"] for e in doc["table_entries"]
               if e["table"] == "route" and e["match"]["ipv4_dst"] == prefix and e["action"] == "set_path")
    return next(e["params"]["port"] for e in doc["table_entries"]
                if e["table"] == "path" and e["match"] == {"path_id": pid, "version": 0})


def test_hash_salt_per_switch():
    docs = docs_of(fattree(4), "ecmp")
    salts = {}
    for name, d in docs.items():
        cfg = [e for e in d["table_entries"] if e["table"] == "hash_config"]
        assert cfg == [{"table": "hash_config", "default": True, "action": "set_hash_salt",
                        "params": {"salt": hash_salt(d["device_id"])}}]
        salts[name] = cfg[0]["params"]["salt"]
    assert len(set(salts.values())) == len(salts) and all(0 < s < 1 << 16 for s in salts.values())
    assert hash_salt(0) != 0 and hash_salt(7) == hash_salt(7)
    with pytest.raises(ValueError, match="device_id=-1"):
        hash_salt(-1)


def test_static_uses_every_core():
    """Static picks depend on the switch: inter-pod destinations reach all 4 cores of a k=4 fat-tree
    (with one hash for every switch, an edge and the aggregation above it pick the same rank: 2)."""
    f = Fabric(fattree(4))
    docs = docs_of(fattree(4), "static")
    subnets = {n: next(f.hosts[p.node].network for p in f.peers[n].values() if p.is_host)
               for n, s in f.switches.items() if s.role == "edge"}
    cores = set()
    for edge in subnets:
        for dst, net in subnets.items():
            if dst[:2] == edge[:2]:
                continue  # same pod: no core
            agg = f.peers[edge][_static_port(docs[edge], str(net))].node
            core = f.peers[agg][_static_port(docs[agg], str(net))].node
            assert f.switches[core].role == "core"
            cores.add(core)
    assert len(cores) == 4


def test_spray_modes():
    lines = states_of(fattree(4), "spray", spray="rr")["a0_0"].lines()
    assert "path path_id=3 version=0 -> path_spray_rr()" in lines
    assert "spray_group path_id=3 version=0 -> group(1)" in lines
    assert "spray_selector group 1 -> [3*1, 4*1]" in lines
    d = states_of(fattree(4), "spray")["a0_0"]
    assert "path path_id=3 version=0 -> path_spray_random()" in d.lines()


def test_ucd4_initial_vs_reconfigured_only_paths_change():
    a, b = states_of(ucd4(), "static"), states_of(ucd4(), "static", "reconfigured")
    s2 = a["s2"].lines()
    assert "path path_id=3 version=0 -> path_static(port=2, dmac=02:00:00:01:00:02)" in s2  # via circuit to s1
    assert "path path_id=3 version=1 -> path_static(port=3, dmac=02:00:00:01:00:04)" in s2  # bypass link
    assert "path path_id=3 version=0 -> path_static(port=2, dmac=02:00:00:03:00:02)" in b["s2"].lines()
    for sw in ("s1", "s2", "s3", "s4"):
        old, new = set(a[sw].lines()), set(b[sw].lines())
        changed = {line.split()[0] for line in old ^ new}
        assert changed <= {"path"}, (sw, changed)
        v1 = {x for x in old if "version=1" in x}
        assert v1 == {x for x in new if "version=1" in x}  # the shadow does not depend on the map
    assert a["ocs"].lines() == ["circuit ingress_port=3 -> cross_connect(port=1)",
                                   "circuit ingress_port=1 -> cross_connect(port=3)",
                                   "circuit ingress_port=2 -> cross_connect(port=5)",
                                   "circuit ingress_port=5 -> cross_connect(port=2)",
                                   "circuit ingress_port=6 -> cross_connect(port=4)",
                                   "circuit ingress_port=4 -> cross_connect(port=6)"]
    assert len(b["ocs"].entries) == 4 and b["ocs"].program == "ocs"


def test_dark_ocs_gives_path_drop():
    d = states_of(ucd4(), "ecmp", "none")
    assert "path path_id=3 version=0 -> path_drop()" in d["s2"].lines()
    assert d["ocs"].entries == []


def test_bad_mode_and_helpers():
    f = Fabric(fattree(4))
    plan = planner(f)("e0_0")
    with pytest.raises(ValueError, match="mode='flood'"):
        switch_state(f, plan, "flood")
    with pytest.raises(ValueError, match="spray='fair'"):
        switch_state(f, plan, "spray", "fair")
    with pytest.raises(ValueError, match="failover='maybe'"):
        switch_state(f, plan, "ecmp", failover="maybe")
    assert pick((3, 4), "10.1.0.0/24") == pick((3, 4), "10.1.0.0/24")
    assert pick((5,), "x") == (5,) and pick((), "x") == ()
    t = ucd4()
    assert ocs_state(t.ocs[0], [(1, 2)]).entries[1].match == {"ingress_port": 2}
    assert str(TableEntry.from_dict({"table": "acl", "priority": 10, "action": "acl_drop", "params": {},
                                     "match": {"ipv4_src": {"value": "10.0.0.2", "mask": "255.255.255.255"}}})) == \
        "acl ipv4_src=10.0.0.2&&&255.255.255.255 priority=10 -> acl_drop()"


def test_encode_matches_json_dumps():
    import json

    from topo import model

    for doc in docs_of(ucd4()).values():
        for x in doc["action_profile_groups"] + doc["table_entries"]:
            assert state.encode(x) == model.encode(x) == json.dumps(x)


def test_flowlet_config_carries_the_fabric_line_rate():
    topo = ucd4(rate_mbit=20, fabric_rate_mbit=21)
    docs = docs_of(topo, "ecmp")
    for d in (d for d in docs.values() if d["program"] == "fabric"):
        (cfg,) = [e for e in d["table_entries"] if e["table"] == "flowlet_config"]
        # 8000 / 21 Mbit/s: 381 ns a byte on the bypasses and OCS fibres (host links do not count)
        assert cfg == {"table": "flowlet_config", "default": True, "action": "set_flowlet",
                       "params": {"gap_us": FLOWLET_GAP_US, "max_hold_us": FLOWLET_MAX_HOLD_US, "byte_ns": 381,
                                  "pause": FLOWLET_PAUSE}}
    assert byte_ns(fattree(4, rate_mbit=10_000), "c0_0") == 1  # at least 1 ns: never "no rate"
