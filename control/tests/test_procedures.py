"""The executor on a fake network and OCS: every step performed in order and logged (no root)."""

from dataclasses import replace

import pytest

from control.events import EventLog
from control.network import ProbeResult
from control.plan import Hold, View, plan
from control.procedures import Executor, ProcedureError
from fabric.contract import FLOWLET_CONFIG
from topo.generators import ucd4

OLD = [(3, 1), (2, 5), (6, 4)]
NEW = [(3, 4), (2, 5)]


class FakeNet:
    """Records syncs and probes; `lost` probes time out."""

    def __init__(self, calls, lost=()):
        self.calls, self.lost, self.sessions = calls, set(lost), {}

    def sync(self, states, delete=True, step="sync", trust_cache=False, events=None):
        self.calls.append(("sync", step, tuple(states), delete))
        events.log(step, switches=len(states), inserts=0, modifies=0, deletes=0, ms=0.0)
        return {}

    def probe(self, src, dst, timeout=5.0):
        self.calls.append(("probe", src, dst))
        if src in self.lost:
            raise TimeoutError(f"probe {src} -> {dst}: no packet-in")
        return ProbeResult(src, dst, 2, 0.5)


class FakeOcs:
    size = 6

    def __init__(self, calls):
        self.calls = calls

    def set_map(self, pairs, delay=None):
        self.calls.append(("ocs", tuple(pairs)))

    def wait_complete(self):
        self.calls.append(("wait",))


@pytest.fixture(scope="module")
def mbb_plan():
    # switches synced to a flowlet_config of GAP + MAX_HOLD = 1 ms: the holds take 1 ms
    view = View(ucd4(), "ocs", 6)
    current = {}
    for name, st in view.states(OLD).items():
        current[name] = st.copy()
        current[name].defaults = [replace(d, params={**d.params, "gap_us": 500, "max_hold_us": 500})
                                  if d.table == FLOWLET_CONFIG else d for d in st.defaults]
    view.current = current
    return plan("mbb", OLD, NEW, view, drain_ms=0)


def test_mbb_performed_in_order(mbb_plan):
    calls, events = [], EventLog()
    res = Executor(FakeNet(calls), FakeOcs(calls), events).execute(mbb_plan)
    sw = ("s1", "s2", "s3", "s4")
    assert calls == [("sync", "to-shadow", sw, False), ("ocs", ((3, 10), (4, 9), (2, 11), (5, 8))), ("wait",),
                     ("sync", "new-paths", sw, False), ("probe", ("s2", 2), ("s3", 2)),
                     ("probe", ("s3", 2), ("s2", 2)), ("sync", "flip", sw, False), ("sync", "settle", sw, True)]
    assert list(res.steps) == ["prepare", "to-shadow", "drain", "ocs", "ocs-mirrors", "new-paths", "probe", "flip",
                               "flowlet-hold", "settle"]
    assert res.probes == 4 and res.affected == mbb_plan.affected
    kinds = [r["event"] for r in events.records]
    assert kinds[0] == "procedure-start" and kinds[-1] == "procedure-done"
    assert kinds.count("step-start") == kinds.count("step-done") == 10
    assert kinds.count("probe-ok") == 2
    assert [(s.name, s.ms) for s in mbb_plan.steps if isinstance(s, Hold)] == [("drain", 1), ("flowlet-hold", 1)]
    done = events.records[-1]
    assert done["steps"] == res.steps and done["control_ms"] == res.control_ms
    # only the writes count as control time
    assert res.control_ms == pytest.approx(sum(res.steps[s] for s in ("to-shadow", "new-paths", "flip", "settle")))


def test_the_setup_is_written_before_the_run(mbb_plan):
    view = View(ucd4(), "ocs", 6, failover=False, current=mbb_plan.basis)
    p = plan("bbm", OLD, NEW, view)
    calls, events = [], EventLog()
    Executor(FakeNet(calls), FakeOcs(calls), events).execute(p)
    assert calls[0] == ("sync", "failover-off", ("s1", "s2", "s3", "s4"), False)
    kinds = [r["event"] for r in events.records]
    assert kinds[:2] == ["failover-off", "procedure-start"] and "failover-off" not in events.records[-1]["steps"]


def test_a_failed_probe_stops_before_the_flip(mbb_plan):
    calls, events = [], EventLog()
    with pytest.raises(ProcedureError) as exc:
        Executor(FakeNet(calls, lost=[("s3", 2)]), FakeOcs(calls), events).execute(mbb_plan)
    assert exc.value.step == "probe" and "no packet-in" in str(exc.value)
    assert [c[1] for c in calls if c[0] == "sync"] == ["to-shadow", "new-paths"]  # still on the shadow
    assert events.records[-1]["event"] == "procedure-error" and events.records[-1]["step"] == "probe"
