"""The reservation controller's queue arithmetic (control/reservation_agent.py); its loop runs
end to end in scripts/tests/test_seed001.py."""

import pytest

from control.reservation_agent import ReservationAgent, conflicts, lead, waiting
from p4rt.entities import TableEntry


def circuit(slot, night, a, b):
    return TableEntry("slot_circuit", {"slot": slot, "night": night, "ingress_port": a}, "slot_cross_connect",
                      {"port": b})


def test_conflicts_finds_an_output_lit_from_two_inputs():
    ok = [circuit(3, 0, 1, 2), circuit(3, 0, 2, 1), circuit(4, 0, 3, 2), circuit(4, 1, 1, 2)]
    assert conflicts(ok) == []
    assert conflicts([*ok, circuit(4, 0, 1, 2)]) == ["slot 4 night 0: inputs 3 and 1 -> 2"]


def test_waiting_is_entered_minus_released_minus_expired():
    cells = {"hold_entered": (10, 15000), "hold_released": (6, 9000), "hold_expired": (1, 1500)}
    assert waiting(cells) == (3, 4500, 15000)
    assert waiting({}) == (0, 0, 0)
    # released frames came back round the loop longer by their mark: the bytes are the packets'
    marked = {"hold_entered": (10, 15000), "hold_released": (9, 13644), "hold_expired": (0, 0)}
    assert waiting(marked) == (1, 1500, 15000)


def test_lead_is_a_high_percentile_of_recent_writes_or_the_floor():
    assert lead([], 0.01) == 0.01
    assert lead([0.2], 0.01) == 0.2
    assert lead([0.03] * 16 + [0.05] * 3 + [1.6], 0.01) == 0.05  # one stalled write does not set it
    assert lead([0.2] * 5 + [0.02] * 5, 0.01) == 0.2
    assert lead([5.0] + [0.02] * 20, 0.01) == 0.02  # only the last 20 writes count


def test_agent_refuses_bad_settings():
    with pytest.raises(ValueError, match="poll"):
        ReservationAgent(None, {}, None, {}, poll_s=0)  # type: ignore[arg-type]
