"""Diffs between tablegen states (p4rt.diff): what MBB rewrites between two ucd4 circuit maps, in a safe order."""

import pytest

from p4rt.diff import diff_states
from topo.generators import fattree, ucd4

from .conftest import states_of


def test_ucd4_reconfiguration_changes_only_version_0_paths():
    a, b = states_of(ucd4(), "static"), states_of(ucd4(), "static", "reconfigured")
    changes = diff_states(a["s2"], b["s2"])
    assert [str(c) for c in changes] == [
        "~ path path_id=1 version=0 -> path_static(port=2, dmac=02:00:00:01:00:02) => "
        "path path_id=1 version=0 -> path_static(port=3, dmac=02:00:00:01:00:04)",
        "~ path path_id=3 version=0 -> path_static(port=2, dmac=02:00:00:01:00:02) => "
        "path path_id=3 version=0 -> path_static(port=2, dmac=02:00:00:03:00:02)",
        "~ path path_id=4 version=0 -> path_static(port=2, dmac=02:00:00:01:00:02) => "
        "path path_id=4 version=0 -> path_static(port=3, dmac=02:00:00:01:00:04)",
    ]
    ocs = [str(c) for c in diff_states(a["ocs"], b["ocs"])]
    assert ocs[-2:] == ["- circuit ingress_port=1 -> cross_connect(port=3)",
                        "- circuit ingress_port=6 -> cross_connect(port=4)"]


def test_safe_order():
    a, b = states_of(ucd4(), "ecmp"), states_of(ucd4(), "ecmp", "reconfigured")
    fwd = diff_states(a["s1"], b["s1"])
    kinds = [(c.op, c.kind) for c in fwd]
    # the reconfigured s1 reaches h3 over two equal-cost ports: member and group come before the entry
    assert kinds.index(("insert", "member")) < kinds.index(("insert", "group")) < kinds.index(("insert", "entry"))
    back = diff_states(b["s1"], a["s1"])
    kinds = [(c.op, c.kind) for c in back]
    assert kinds.index(("delete", "entry")) < kinds.index(("delete", "group")) < kinds.index(("delete", "member"))


def test_identical_and_mismatched():
    d = states_of(fattree(4))
    assert diff_states(d["e0_0"], d["e0_0"]) == []
    with pytest.raises(ValueError, match="expected two states of one switch"):
        diff_states(d["e0_0"], d["e0_1"])
