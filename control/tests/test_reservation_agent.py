"""The reservation controller's queue arithmetic (control/reservation_agent.py); its loop runs
end to end in scripts/tests/test_seed001.py."""

import pytest

from control.reservation_agent import ReservationAgent, waiting


def test_waiting_is_entered_minus_released_minus_expired():
    cells = {"hold_entered": (10, 15000), "hold_released": (6, 9000), "hold_expired": (1, 1500)}
    assert waiting(cells) == (3, 4500)
    assert waiting({}) == (0, 0)


def test_agent_refuses_bad_settings():
    with pytest.raises(ValueError, match="poll"):
        ReservationAgent(None, {}, None, {}, poll_s=0)  # type: ignore[arg-type]
