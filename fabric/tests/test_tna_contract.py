"""One control plane for both targets: the TNA programs offer the v1model programs' P4Info interface
(tables, match fields, actions, parameters, widths), except where Tofino forces a difference (listed).

With bf-p4c installed, its P4Info of p4src/tna/*.p4 is compared for Tofino 1 and 2 (the compiles
`make tofino-check` made, reused while the sources are unchanged), and its bfrt.json names the same
tables. Without it, the same comparison runs on p4c's IR of the TNA programs (front and mid end,
`--toJSON`): a weaker check (no bf-p4c back end), but a compiler's reading of the real programs. The schedule clock's TNA entries
(fabric/schedule_clock.py) are encoded against that interface too: p4c has no P4Info for TNA, so
one is built from its IR (names, match kinds, widths) and the client's own encoder checks them."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from emulation import tofino
from fabric.contract import TNA_OCS_LOOP_TABLES
from fabric.schedule import TimeSchedule
from fabric.schedule_clock import V1MODEL, TnaClock, clock_for, clock_for_widths
from p4rt.proto import p4i
from p4rt.schema import P4Schema
from p4sim.target import Target
from scripts.tools.p4_contract import Interface, Table, compare, from_p4c_ir, from_p4info, local_name
from tablegen.reservation_loop import Loop, tna_ocs_loop_entries
from tablegen.schedule import clock_entries, ocs_schedule_entries

P4SRC = Path(__file__).resolve().parents[2] / "p4src"
PROGRAMS = ("fabric", "ocs")
# Where Tofino forces a difference, and why (p4src/README.md, "v1model and TNA").
TOFINO_DIFFERENCES = {
    "table FabricIngress.acl.acl: match field ingress_port: optional on v1model, ternary on tna":
        "Tofino has no `optional` match kind; a full ternary mask is v1model's value match",
    **{f"action {ctl}.clock.set_schedule: parameters [('epoch_us', 48), ('cycle_scale', 64)] != "
       "[('epoch_us', 32), ('cycle_scale', 32)]":
       "Tofino's clock is 32 bits of 1.024 us units and its cycle a power of two (a mask): it cannot "
       "multiply by a run-time 64-bit scale (p4src/README.md, time-flow tables)"
       for ctl in ("OcsIngress", "FabricIngress")},
    # Not on TNA yet: seed 001's reservation loop is v1model's (issue 35; p4src/README.md, "Reservation
    # loop"): the OCS's Tofino scheduler is built but left out by default (-DRESV_TNA_SCHEDULER: 13 of
    # Tofino 1's 12 stages); each table is named, so nothing else may differ
    **{f"table {t}: only in v1model": "the reservation loop: v1model only so far (p4src/README.md)"
       for t in ("FabricIngress.reservation.grant_path", "FabricIngress.reservation.reservation_config",
                 "FabricIngress.reservation.window_more", "FabricIngress.reservation.window.window_length",
                 "OcsIngress.scheduler.reservation_config", "OcsIngress.scheduler.window.window_length")},
}
# The OCS's scheduler on Tofino (-DRESV_TNA_SCHEDULER, include/tna/reservation_ocs.p4): the passes that
# read and move the horizons run in egress (OcsEgress.booking), so their tables are named there; times
# where v1model multiplies slots (set_reservation: a slot's and the cycle's length in 1.024 us units, the
# trip inside resv_slot_times), and the window's bytes in 4 KiB units (Tofino's range match takes 20 bits).
SCHEDULER = "-DRESV_TNA_SCHEDULER"
IN_EGRESS = ("Tofino's scheduler reads and moves the horizons in the egress of its recirculation port, "
             "where the data frames' chain does not hold its passes back (p4src/README.md, \"Reservation loop\")")
SCHEDULER_DIFFERENCES = {
    **{k: v for k, v in TOFINO_DIFFERENCES.items() if not k.startswith("table OcsIngress.scheduler.")},
    **{f"table OcsIngress.scheduler.{t}: only in v1model": IN_EGRESS for t in ("reservation_config", "window.window_length")},
    **{f"table OcsEgress.booking.{t}: only in tna": IN_EGRESS for t in ("reservation_config", "window.window_length")},
    **{f"table OcsEgress.booking.{t}: only in tna": "Tofino's scheduler adds times the controller wrote "
       "where v1model multiplies slots (p4src/README.md, \"Reservation loop\")"
       for t in ("resv_slot_phase", "resv_slot_times", "resv_span", "resv_start_slot")},
}
# The PTF tests whose behaviour differs on TNA, and how (p4src/README.md: the rows of "v1model and
# TNA" they name, and "The PTF suite on Tofino", which marks them *differs*). Every other PTF test's
# behaviour has its TNA code path there.
TNA_BEHAVIOUR_DIFFERS = {
    "FlowletGapCountsFromDepartureTest": "departure: after idle now + FLOWLET_TX_FIRST (a stateful ALU reads two inputs)",
    "FlowletTcpMovesByAcksTest": "a new flow in a flowlet slot is known by its SYN, not by MAX_HOLD of idle",
    "SprayRoundRobinTest": "Tofino's selector picks among live members its own way (not proven exact per packet)",
    "SlotFreshnessTest": "freshness is checked at egress only where the path has no day budget",
    "SlotDayBudgetTest": "the day budget is checked at egress on the real departure, not estimated at ingress",
}
# Tofino's architecture files for p4c's front end (../shared/toolchain/README.md).
INCLUDE = Path(os.environ.get("TOFINO_P4INCLUDE") or P4SRC.parents[1] / "shared" / "toolchain" / "tofino-p4include")
BF_P4C = tofino.find_bf_p4c()


@pytest.fixture(scope="module")
def v1model(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Interface]:
    out = tmp_path_factory.mktemp("v1model")
    target = Target.from_env()
    for p in PROGRAMS:
        target.compile(P4SRC / f"{p}.p4", out, P4SRC)
    return {p: from_p4info(out / f"{p}.p4info.txtpb") for p in PROGRAMS}


NEEDS_P4C = pytest.mark.skipif(not INCLUDE.is_dir() or shutil.which("p4c-bm2-ss") is None,
                               reason=f"needs p4c-bm2-ss (make setup) and the Tofino architecture files at {INCLUDE}")


@pytest.fixture(scope="module")
def tna_front_end(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Interface]:
    """p4c's IR interface of a TNA program for a Tofino generation (and defines), compiled once per module."""
    out = tmp_path_factory.mktemp("tna")
    done: dict[tuple[str, int, tuple[str, ...]], Interface] = {}

    def interface(program: str, generation: int, *defines: str) -> Interface:
        key = (program, generation, defines)
        if key not in done:
            ir = out / f"{program}.{generation}.{len(done)}.ir.json"
            argv = ["p4c-bm2-ss", f"-D__TARGET_TOFINO__={generation}", *defines, "-I", str(INCLUDE), "-I", str(P4SRC),
                    str(P4SRC / "tna" / f"{program}.p4"), "-o", str(out / "x.json"), "--toJSON", str(ir)]
            proc = subprocess.run(argv, capture_output=True, text=True, check=False)
            assert ir.exists(), f"p4c wrote no IR: {proc.stderr[-2000:]}"
            done[key] = from_p4c_ir(ir)
        return done[key]

    return interface


@NEEDS_P4C
@pytest.mark.parametrize("generation", [1, 2], ids=["tna", "t2na"])
@pytest.mark.parametrize("program", PROGRAMS)
def test_front_end_interface_matches(v1model: dict[str, Interface], tna_front_end: Callable[..., Interface],
                                     program: str, generation: int) -> None:
    assert compare(v1model[program], tna_front_end(program, generation), TOFINO_DIFFERENCES) == []


_KINDS = {"exact": p4i.MatchField.EXACT, "lpm": p4i.MatchField.LPM,
          "ternary": p4i.MatchField.TERNARY, "range": p4i.MatchField.RANGE,
          "optional": p4i.MatchField.OPTIONAL}


def p4info_of(interface: Interface) -> P4Schema:
    """A P4Info of the tables and actions of an interface (ids in order), for the client's encoder."""
    info = p4i.P4Info()
    ids: dict[str, int] = {}
    for name in sorted({*interface.actions, *(a for t in interface.tables.values() for a in t.actions)}):
        a = info.actions.add()
        ids[name] = a.preamble.id = 0x01000000 + len(ids)
        a.preamble.name = name
        for i, (param, width) in enumerate(interface.actions.get(name, []), 1):
            a.params.add(id=i, name=param, bitwidth=width)
    for n, (name, table) in enumerate(sorted(interface.tables.items()), 1):
        t = info.tables.add()
        t.preamble.id, t.preamble.name = 0x02000000 + n, name
        for i, (field, width, kind) in enumerate(table.match, 1):
            t.match_fields.add(id=i, name=field, bitwidth=width, match_type=_KINDS[kind])
        for action in table.actions:
            t.action_refs.add(id=ids[action])
    return P4Schema(info)


def assert_tna_clock_entries_fit(schema: P4Schema, program: str) -> None:
    """The program's P4Info asks for the TNA clock, and its entries (exact and rounded, past the 2^32
    wrap) encode: table, match field names and kinds, priority, the table's action, parameter names
    and widths. v1model's entries do not (its scale is 64 bits wide)."""
    clock = clock_for(schema, round_cycle=True)
    assert clock == TnaClock(round_cycle=True)
    exact = TimeSchedule(4, day_ns=7 << 20, night_ns=1 << 20, epoch_ns=((1 << 33) - 5) * 1024)
    rounded = TimeSchedule(3, 10_000, 1_000, 777)
    if program == "ocs":
        docs = [*ocs_schedule_entries([{1: 2, 2: 1}, {1: 3, 3: 1}, {2: 3, 3: 2}, {1: 2, 2: 1}], exact, clock),
                *ocs_schedule_entries([{1: 2, 2: 1}, {1: 3, 3: 1}, {2: 3, 3: 2}], rounded, clock)]
    else:
        docs = [*clock_entries(exact, 300, 100, clock), *clock_entries(rounded, 300, 100, clock)]
    assert {d.table for d in docs} >= {"schedule_config", "schedule_phase"}
    for d in docs:
        d.to_proto(schema)
    with pytest.raises(ValueError, match="does not fit in 32 bits"):
        clock_entries(TimeSchedule(3, 10_000, 1_000), clock=V1MODEL)[0].to_proto(schema)


def assert_tna_loop_entries_fit(schema: P4Schema) -> None:
    """The OCS's reservation loop entries for Tofino (tablegen.reservation_loop.tna_ocs_loop_entries)
    encode against the TNA program: every table of the scheduler, names, widths, the range of
    window_length."""
    loop = Loop("two-way", slots=8, slot_us=1024, send_us=900, rate_mbit=100.0, trip_slots=1, max_slots=4)
    docs = tna_ocs_loop_entries(loop, 8 << 10)
    assert {d.table for d in docs} == set(TNA_OCS_LOOP_TABLES)
    for d in docs:
        d.to_proto(schema)


@NEEDS_P4C
@pytest.mark.parametrize("generation", [1, 2], ids=["tna", "t2na"])
def test_the_tna_scheduler_offers_the_ocs_interface_and_its_entries_fit(
        v1model: dict[str, Interface], tna_front_end: Callable[..., Interface], generation: int) -> None:
    tna = tna_front_end("ocs", generation, SCHEDULER)
    assert compare(v1model["ocs"], tna, SCHEDULER_DIFFERENCES) == []
    assert_tna_loop_entries_fit(p4info_of(tna))


@NEEDS_P4C
@pytest.mark.parametrize("program", PROGRAMS)
def test_tna_clock_entries_fit_the_tna_program(tna_front_end: Callable[..., Interface], program: str) -> None:
    tna = tna_front_end(program, 1)
    control = "OcsIngress" if program == "ocs" else "FabricIngress"
    assert clock_for_widths(dict(tna.actions[f"{control}.clock.set_schedule"])) == TnaClock()
    assert_tna_clock_entries_fit(p4info_of(tna), program)


def bfrt_tables(path: Path) -> set[str]:
    """The match-action tables bfrt.json offers (BF Runtime's view), by local name."""
    return {local_name(t["name"]) for t in json.loads(path.read_text())["tables"]
            if t["table_type"].startswith("MatchAction")}


@pytest.mark.skipif(BF_P4C is None, reason="bf-p4c is not installed (not $BF_P4C, on PATH or "
                                         f"{tofino.INSTALLED_BF_P4C}): the contract with the Tofino compiler cannot run here")
@pytest.mark.parametrize("target", tofino.CHIPS, ids=[t.arch for t in tofino.CHIPS])
@pytest.mark.parametrize("program", PROGRAMS)
def test_bf_p4c_p4info_matches(v1model: dict[str, Interface], program: str, target: tofino.Chip) -> None:
    compiled = tofino.compile_program(str(BF_P4C), program, target, tofino.work_dir())
    assert compiled.ok, compiled.errors
    tna = from_p4info(compiled.p4info)
    assert compare(v1model[program], tna, TOFINO_DIFFERENCES) == []
    assert bfrt_tables(compiled.out / "bfrt.json") == set(tna.tables)
    assert_tna_clock_entries_fit(P4Schema.load(compiled.p4info), program)


def test_every_ptf_test_has_its_tna_code_path() -> None:
    """p4src/README.md names every PTF test (a class with runTest) with the TNA code of its behaviour,
    and marks exactly the tests listed above as differing."""
    tests = set()
    for path in (P4SRC.parent / "ptf-tests").glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and any(isinstance(m, ast.FunctionDef) and m.name == "runTest"
                                                      for m in node.body):
                tests.add(node.name)
    section = (P4SRC / "README.md").read_text().split("### The PTF suite on Tofino", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert set(re.findall(r"`(\w+Test)`", "".join(r.split("|")[1] for r in rows))) == tests
    differs = {t for r in rows if "*differs*" in r for t in re.findall(r"`(\w+Test)`", r.split("|")[1])}
    assert differs == set(TNA_BEHAVIOUR_DIFFERS)


def test_compare_names_every_kind_of_difference() -> None:
    a = Interface({"T.t": Table([("k", 16, "exact")], ["T.a"], "T.prof"), "T.u": Table([], ["T.a"])},
                  {"T.a": [("port", 9)]})
    b = Interface({"T.t": Table([("k", 32, "exact")], ["T.a", "T.b"], None)}, {"T.a": [("port", 16)]})
    assert compare(a, b) == [
        "table T.t: match fields [('k', 16, 'exact')] != [('k', 32, 'exact')]",
        "table T.t: actions ['T.a'] != ['T.a', 'T.b']",
        "table T.t: implementation T.prof != None",
        "action T.a: parameters [('port', 9)] != [('port', 16)]",
        "table T.u: only in v1model"]
    c = Interface({"T.t": Table([("k", 16, "ternary")], ["T.a"], "T.prof"), "T.u": Table([], ["T.a"])},
                  {"T.a": [("port", 9)]})
    assert compare(a, c) == ["table T.t: match field k: exact on v1model, ternary on tna"]
    assert compare(a, c, {"table T.t: match field k: exact on v1model, ternary on tna": "why"}) == []
