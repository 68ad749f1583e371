import pytest

from emulation.__main__ import main as emulation_main
from emulation.ocs.delay import THESIS_TABLE_4_3, DelayModel, summarize


def test_default_distribution_reproduces_thesis_table_4_3():
    model = DelayModel(seed=1)
    stats = summarize([model.sample_port_up() for _ in range(485)])
    for key in ("25%", "50%", "75%", "mean", "min", "max"):
        assert stats[key] == pytest.approx(THESIS_TABLE_4_3[key], rel=0.05), key
    assert stats["std"] == pytest.approx(THESIS_TABLE_4_3["std"], rel=0.15)


def test_components_are_ordered_and_settable():
    m = DelayModel(seed=3)
    for _ in range(200):
        mirror, light, up = m.sample()
        assert mirror == 25.0 and 279 <= light <= 284
        assert up == pytest.approx(light + 250) or light + 500 <= up <= light + 548
    assert DelayModel.instant().sample() == (0, 0, 0)
    fast = DelayModel(mirror_ms=0.5, lock_ms=0, lock_jitter_ms=0, poll_period_ms=0, seed=1)
    assert fast.sample() == (0.5, 0.5, 0.5)
    nopoll_miss = DelayModel(missed_poll_prob=0, lock_jitter_ms=0, seed=1)
    assert {nopoll_miss.sample_port_up() for _ in range(20)} == {529.0}
    always = DelayModel(missed_poll_prob=1, missed_poll_jitter_ms=0, lock_jitter_ms=0)
    assert always.sample_port_up() == 779.0


def test_same_seed_same_samples():
    a, b = DelayModel(seed=7), DelayModel(seed=7)
    assert [a.sample() for _ in range(5)] == [b.sample() for _ in range(5)]


@pytest.mark.parametrize("kw", [{"mirror_ms": -1}, {"poll_period_ms": -0.1}, {"missed_poll_prob": 1.5}])
def test_bad_parameters(kw):
    with pytest.raises(ValueError, match="expected"):
        DelayModel(**kw)


def test_ocs_delay_command(capsys):
    assert emulation_main(["ocs-delay", "--samples", "485", "--seed", "1"]) == 0
    assert "thesis" in capsys.readouterr().out
