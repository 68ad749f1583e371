"""Static checks of the compiled TNA fabric program, on bf-p4c's real output for both chips: what
tablegen writes for one switch of each role of a k=48 fat-tree (27,648 hosts) fits the tables,
profiles and selectors bf-p4c allocated, in every forwarding mode; and the one program, with the
schedule clock, slot routing and the hold, fits Tofino 1 with two stages spare."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from emulation import tofino
from fabric.contract import MODES, PROFILE_TABLE
from p4rt.schema import P4Schema
from scripts.tools import tofino_check
from scripts.tools.p4_contract import local_name
from tablegen.entries import switch_state
from tablegen.graph import Fabric
from tablegen.routing import planner
from topo.generators import fattree

BF_P4C = tofino.find_bf_p4c()
pytestmark = pytest.mark.skipif(BF_P4C is None, reason="bf-p4c is not installed (not $BF_P4C, on PATH or "
                                f"{tofino.INSTALLED_BF_P4C}; make setup installs it from ../shared/toolchain)")


@pytest.fixture(scope="module")
def k48_needs() -> dict[str, int]:
    """The most any one switch of a k=48 fat-tree needs, over the three roles and the modes: entries
    by table, members by profile, groups by selector ("<selector> groups"), the largest group
    ("<selector> group size")."""
    topo = fattree(48)
    fabric = Fabric(topo)
    by_role: dict[str, str] = {}
    for sw in topo.switches:
        by_role.setdefault(sw.role, sw.name)
    assert sorted(by_role) == ["aggregation", "core", "edge"]
    need: Counter[str] = Counter()
    for mode in MODES:
        plan = planner(fabric, spread=(mode == "static"))
        for name in by_role.values():
            st = switch_state(fabric, plan(name), mode)
            have = Counter(e.table for e in st.entries)
            have.update(m.profile for m in st.members)
            have.update(f"{g.profile} groups" for g in st.groups)
            for g in st.groups:
                have[f"{g.profile} group size"] = max(have[f"{g.profile} group size"], len(g.members))
            for key, n in have.items():
                need[key] = max(need[key], n)
    return dict(need)


def compiled_room(out: Path, p4info: Path) -> dict[str, int]:
    """What bf-p4c allocated, under the names of k48_needs: table entries (bfrt.json), and each
    profile's members, groups and group size (its P4Info)."""
    room = {local_name(t["name"]).rsplit(".", 1)[-1]: t["size"] for t in json.loads((out / "bfrt.json").read_text())["tables"]
            if t["table_type"].startswith("MatchAction")}
    for p in P4Schema.load(p4info).p4info.action_profiles:
        name = p.preamble.name.rsplit(".", 1)[-1]
        room[name] = p.size
        if p.with_selector:
            room[f"{name} groups"] = room[PROFILE_TABLE[name]]
            room[f"{name} group size"] = p.max_group_size
    return room


@pytest.mark.parametrize("target", tofino.CHIPS, ids=[c.name for c in tofino.CHIPS])
def test_a_k48_fat_tree_fits_the_compiled_tables(k48_needs: dict[str, int], target: tofino.Chip) -> None:
    c = tofino.compile_program(str(BF_P4C), "fabric", target, tofino.work_dir())
    assert c.ok, c.errors
    room = compiled_room(c.out, c.p4info)
    assert {"route", "path", "path_version", "ecmp_group", "spray_group", "port_liveness", "port_mac"} <= set(k48_needs)
    over = {k: (n, room.get(k)) for k, n in k48_needs.items() if room.get(k) is None or n > room[k]}
    assert over == {}, f"needed (k=48) vs compiled: {over}"
    # a ToR's 48 ports, every one in port_liveness and port_mac
    assert k48_needs["port_liveness"] == k48_needs["port_mac"] == 48


def test_schedule_and_hold_fit_tofino_1_with_two_stages_spare() -> None:
    """The budget holds with every feature in the one program: the clock (schedule_config,
    schedule_phase), slot routing (slot_policy, slot_path), the hold's registers and counters, the
    flowlet gate's five registers."""
    c = tofino.compile_program(str(BF_P4C), "fabric", tofino.chip("tofino"), tofino.work_dir())
    assert c.ok, c.errors
    names = {local_name(t["name"]) for t in json.loads((c.out / "bfrt.json").read_text())["tables"]}
    features = {"FabricIngress.clock.schedule_config", "FabricIngress.clock.schedule_phase",
                "FabricIngress.slot_route.slot_policy", "FabricIngress.slot_route.slot_path",
                "FabricIngress.slot_hold.hold_depth", "FabricIngress.slot_hold.hold_entered",
                "FabricEgress.slot_egress.slot_over_budget", "FabricEgress.slot_egress.hold_stale",
                *(f"FabricIngress.flowlet.flow_{r}" for r in ("version", "departure", "pending", "sent_end", "acked"))}
    assert features <= names, features - names
    used = tofino_check.resources(c.out)
    assert used.stages[0] <= tofino_check.STAGE_BUDGET[("fabric", "tofino")] and used.stages[1] == 12
    assert used.phv[0] < used.phv[1] and used.salus[0] < used.salus[1]
