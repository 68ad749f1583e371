"""The fabric contract (fabric/contract.py, the CPU port of topo.model and p4sim.target) against the P4
source and the compiled P4Info: every name, width-free parameter list and constant the Python side
writes exists in the program as written there, so a rename on either side fails here and not on a
switch."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fabric import contract as schema
from fabric.schedule import SCHEDULE_PHASE_BITS
from p4rt.schema import P4Schema
from p4sim import target
from p4sim.target import Target
from topo.model import CPU_PORT

P4SRC = Path(__file__).resolve().parents[2] / "p4src"


def p4_constants() -> dict[str, int]:
    """Every `#define NAME N` and `const bit<W> NAME = N;` of the program's include files."""
    out: dict[str, int] = {}
    for f in (P4SRC / "include").glob("*.p4"):
        text = f.read_text()
        for name, value in re.findall(r"#define\s+(\w+)\s+(0x[0-9a-fA-F]+|\d+)\b", text):
            out.setdefault(name, int(value, 0))
        for name, value in re.findall(r"const\s+bit<\d+>\s+(\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)\s*;", text):
            out[name] = int(value, 0)
    return out


@pytest.fixture(scope="module")
def fabric(tmp_path_factory: pytest.TempPathFactory) -> P4Schema:
    out = tmp_path_factory.mktemp("contract")
    Target.from_env().compile(P4SRC / "fabric.p4", out, P4SRC)
    return P4Schema.load(str(out / "fabric.p4info.txtpb"))


def test_constants_match_the_p4_source() -> None:
    c = p4_constants()
    assert c["CPU_PORT"] == CPU_PORT == target.CPU_PORT
    assert c["DRAIN_PROBE_SESSION"] == schema.DRAIN_PROBE_SESSION
    assert c["ETHERTYPE_PATH_TAG"] == schema.ETHERTYPE_PATH_TAG
    assert c["ETHERTYPE_PROBE"] == schema.ETHERTYPE_PROBE
    assert c["FLOWLET_GAP_US"] == schema.FLOWLET_GAP_US
    assert c["FLOWLET_MAX_HOLD_US"] == schema.FLOWLET_MAX_HOLD_US


def test_tables_actions_and_parameters_exist(fabric: P4Schema) -> None:
    tables = {t.preamble.name.rsplit(".", 1)[-1]: t for t in fabric.tables}
    actions = {a.preamble.name.rsplit(".", 1)[-1]: a for a in fabric.p4info.actions}
    for table, (fields, allowed, profile) in schema.FABRIC_TABLES.items():
        assert table in tables, f"table {table}: not in fabric.p4's P4Info"
        t = tables[table]
        assert {m.name for m in t.match_fields} >= set(fields), f"table {table}: match fields"
        refs = {ref.id for ref in t.action_refs}
        for action in allowed:
            assert actions[action].preamble.id in refs, f"table {table}: action {action} not allowed"
        if profile is not None:
            prof = fabric.table_profile(t)
            assert prof is not None and prof.preamble.name.endswith(profile), f"table {table}: profile"
    for action, params in schema.ACTION_PARAMS.items():
        if action in schema.OCS_ACTIONS:
            continue  # ocs.p4's
        assert action in actions, f"action {action}: not in fabric.p4"
        assert [p.name for p in actions[action].params] == list(params), f"action {action}: parameters"


def test_port_watch_actions_are_the_profiles_actions(fabric: P4Schema) -> None:
    tables = {t.preamble.name.rsplit(".", 1)[-1]: t for t in fabric.tables}
    for profile, action in schema.PORT_WATCH_ACTIONS.items():
        table = schema.PROFILE_TABLE[profile]
        assert action in schema.FABRIC_TABLES[table][1] and table in tables


@pytest.fixture(scope="module")
def ocs(tmp_path_factory: pytest.TempPathFactory) -> P4Schema:
    out = tmp_path_factory.mktemp("contract-ocs")
    Target.from_env().compile(P4SRC / "ocs.p4", out, P4SRC)
    return P4Schema.load(str(out / "ocs.p4info.txtpb"))


def test_ocs_tables_actions_and_counters_exist(ocs: P4Schema) -> None:
    tables = {t.preamble.name.rsplit(".", 1)[-1]: t for t in ocs.tables}
    actions = {a.preamble.name.rsplit(".", 1)[-1]: a for a in ocs.p4info.actions}
    counters = {c.preamble.name.rsplit(".", 1)[-1] for c in ocs.p4info.counters}
    for table, (fields, allowed, _profile) in schema.OCS_TABLES.items():
        assert table in tables, f"table {table}: not in ocs.p4's P4Info"
        assert [m.name for m in tables[table].match_fields] == list(fields), f"table {table}: match fields"
        refs = {ref.id for ref in tables[table].action_refs}
        for action in allowed:
            assert actions[action].preamble.id in refs, f"table {table}: action {action} not allowed"
            assert [p.name for p in actions[action].params] == list(schema.ACTION_PARAMS[action])
    assert set(schema.SCHEDULE_DROP_COUNTERS) <= counters


def test_schedule_constants_match_the_p4_source(fabric: P4Schema) -> None:
    c = p4_constants()
    assert c["SCHEDULE_PHASE_BITS"] == SCHEDULE_PHASE_BITS
    assert c["SCHEDULE_PHASE_MASK"] == (1 << SCHEDULE_PHASE_BITS) - 1
    counters = {x.preamble.name.rsplit(".", 1)[-1] for x in fabric.p4info.counters}
    assert set(schema.HOLD_COUNTERS) <= counters
    phase = {t.preamble.name.rsplit(".", 1)[-1]: t for t in fabric.tables}["schedule_phase"].match_fields[0]
    assert phase.bitwidth == SCHEDULE_PHASE_BITS  # the phase's low bits: Tofino's widest range match
