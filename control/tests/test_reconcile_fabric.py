"""Reconcile with the fabric program's rules (control/README.md, liveness): the port_down sentinel is
written alone and first, never rewritten while held; a missing one rebuilds its profile; failover on/off
is one MODIFY per port. On the real fabric P4Info."""

import pytest

from control.tests.netbed import compile_program
from fabric.contract import LATE_TABLES, SENTINEL_ACTIONS
from fabric.state import with_failover
from p4rt import reconcile
from p4rt.entities import ActionProfileMember
from p4rt.reconcile import Held
from p4rt.schema import short_name
from tablegen.entries import generate_states
from topo.generators import fattree


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    return compile_program("fabric", tmp_path_factory.mktemp("fabric")).schema


def _generated(failover=True, name="e0_0"):
    return generate_states(fattree(4), "ecmp", failover=failover)[name]


def plan(schema, want, held, **kw):
    """reconcile.plan with the fabric's sentinel and late tables, as the controller's sessions call it."""
    return reconcile.plan(schema, want, held, late_tables=LATE_TABLES, sentinels=SENTINEL_ACTIONS, **kw)


def test_sentinel_written_alone_first(fabric):
    p = plan(fabric, _generated(), Held())
    assert p.lines[0] == "+ liveness_selector member 1 -> port_down()" and len(p.phases[0]) == 1
    assert p.lines[1].startswith("+ liveness_selector member 1000 -> port_up()") and not p.rebuilt


def test_failover_toggle_is_a_clean_diff(fabric):
    on, off = _generated(True), _generated(False)
    assert off == with_failover(on, False) and on == with_failover(off, True)
    p = plan(fabric, off, Held.of_state(fabric, on))
    assert (p.inserts, p.modifies, p.deletes) == (0, 4, 0) and not p.rebuilt
    assert sorted(p.lines)[0] == "~ port_liveness port=1 -> group(9999)"
    assert plan(fabric, on, Held.of_state(fabric, off)).modifies == 4
    assert plan(fabric, on, Held.of_state(fabric, on)).empty


def test_missing_or_changed_sentinel_rebuilds_the_profile(fabric):
    want = _generated()
    # an old layout: port_up members (one of them with the sentinel's id) and no port_down member
    old = want.copy()
    old.members = [m for m in old.members if m.action != "port_down"]
    old.members.append(ActionProfileMember("liveness_selector", 1, "port_up"))
    p = plan(fabric, want, Held.of_state(fabric, old))
    assert p.rebuilt == ["liveness_selector"]
    first_insert = next(i for i, line in enumerate(p.lines) if line.startswith("+"))
    # every liveness entity is gone before the sentinel is written, and the sentinel comes first
    assert all(line.startswith("-") for line in p.lines[:first_insert])
    assert {line.split()[1] for line in p.lines[:first_insert]} == {"port_liveness", "liveness_selector"}
    assert p.lines[first_insert] == "+ liveness_selector member 1 -> port_down()"
    # other profiles and tables are untouched
    assert not any("ecmp" in line or "route" in line for line in p.lines)
    # nothing held of that profile: no rebuild, just the sentinel first
    bare = want.copy()
    bare.members = [m for m in bare.members if short_name(m.profile) != "liveness_selector"]
    bare.groups = [g for g in bare.groups if short_name(g.profile) != "liveness_selector"]
    bare.entries = [e for e in bare.entries if e.table != "port_liveness"]
    p = plan(fabric, want, Held.of_state(fabric, bare))
    assert not p.rebuilt and p.lines[0] == "+ liveness_selector member 1 -> port_down()"


def test_sentinel_never_rewritten_when_held(fabric):
    want = _generated()
    have = want.copy()
    have.members = [m for m in have.members if m.member_id != 1004]  # one port_up member missing
    p = plan(fabric, want, Held.of_state(fabric, have))
    assert p.lines == ["+ liveness_selector member 1004 -> port_up()"]


