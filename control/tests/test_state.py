import ipaddress

import pytest

from fabric.state import affected_paths, forwarding_signature, next_ports, path_of
from p4rt.state import SwitchState


def doc(name, routes, paths, versions=()):
    entries = [{"table": "route", "match": {"ipv4_dst": p}, "action": "set_path", "params": {"path_id": pid}}
               for p, pid in routes]
    entries += [{"table": "path", "match": {"path_id": pid, "version": v}, "action": "path_static",
                 "params": {"port": port, "dmac": "00:00:00:00:00:01"}} for pid, v, port in paths]
    entries += [{"table": "path_version", "match": {"path_id": pid}, "action": "set_version",
                 "params": {"version": 0}} for pid in versions]
    return SwitchState.from_doc({"switch": name, "program": "fabric", "table_entries": entries})


def ip(a):
    return int(ipaddress.IPv4Address(a))


def test_signatures_and_lookup():
    st = doc("t1", [("10.0.0.0/8", 1), ("10.1.0.0/16", 2)], [(1, 0, 3), (2, 0, 4), (2, 1, 5)])
    assert path_of(st, ip("10.1.2.3")) == 2 and path_of(st, ip("10.2.0.1")) == 1
    assert path_of(st, ip("11.0.0.1")) is None
    assert '"port": 4' in forwarding_signature(st, ip("10.1.0.1"), 0)
    assert '"port": 5' in forwarding_signature(st, ip("10.1.0.1"), 1)
    assert next_ports(st, ip("10.1.0.1"), 1) == [5] and next_ports(st, ip("11.0.0.1"), 0) == []
    assert forwarding_signature(st, ip("11.0.0.1"), 0) == "miss"


def test_affected_paths_follow_changed_destinations_anywhere():
    # t1 -> agg -> t2; the change is at agg only (port 2 -> port 3 towards 10.2.0.0/16)
    old = {"t1": doc("t1", [("10.2.0.0/16", 7), ("10.3.0.0/16", 8)], [(7, 0, 1), (8, 0, 1)], [7, 8]),
           "agg": doc("agg", [("10.2.0.0/16", 1), ("10.3.0.0/16", 2)], [(1, 0, 2), (2, 0, 4)])}
    new = {"t1": old["t1"].copy(),
           "agg": doc("agg", [("10.2.0.0/16", 1), ("10.3.0.0/16", 2)], [(1, 0, 3), (2, 0, 4)])}
    got = affected_paths(old, new, [ip("10.2.0.5"), ip("10.3.0.5")], ["t1"])
    assert got == {"t1": {7}}
    # with the wiring known: t1's packets (port 1) reach agg; a t1 wired elsewhere is not affected
    peers = {"t1": {1: "agg"}, "agg": {}}
    assert affected_paths(old, new, [ip("10.2.0.5")], ["t1"], peers, peers) == {"t1": {7}}
    elsewhere = {"t1": {1: "other"}, "agg": {}}
    assert affected_paths(old, new, [ip("10.2.0.5")], ["t1"], elsewhere, elsewhere) == {"t1": set()}


def test_bad_doc():
    with pytest.raises(ValueError, match="expected an object with 'switch' and 'program'"):
        SwitchState.from_doc({"table_entries": []})
