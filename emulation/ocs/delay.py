"""The OCS reconfiguration delay model of the thesis (section 4.1.1, Table 4.3; seed notes R7).

A changed port goes dark at once; the mirrors move in `mirror_ms` (Polatis datasheet: <= 25 ms);
the transceiver locks `lock_ms` (+ up to `lock_jitter_ms`) later, so light is back; the ToR polls
its ports every `poll_period_ms` (PicOS: 250 ms) and reports the port up at the first poll after
lock. In `missed_poll_prob` of the runs that poll misses it (port state not yet stable) and one
more period, plus up to `missed_poll_jitter_ms`, passes.

The defaults are fitted to Table 4.3 (485 runs; mean 605, std 115, min 529, Q1 531, median 532,
Q3 786, max 834 ms): 25 + 254 + U(0,5) + 250 gives the 529-534 ms cluster, the missed poll
(29 %, +250 + U(0,48)) the 779-834 ms cluster. Any parameter may be 0 (a "fast OCS").
"""

from __future__ import annotations

import random
import statistics
from dataclasses import asdict, dataclass, field

# The longest delay the emulator takes: a minute, far beyond any OCS's (the thesis's slowest port came
# up in 834 ms). NaN, infinity and 1e300 would stop the timeline (a comparison that is never true, an
# OverflowError in a wait), so every length is checked against it.
MAX_DELAY_MS = 60_000.0


def check_ms(name: str, value: object, low: float = 0.0, low_open: bool = False) -> float:
    """A length in ms, finite and in low..MAX_DELAY_MS (above low when low_open); ValueError naming it."""
    ok = (not isinstance(value, bool) and isinstance(value, (int, float))
          and (low < value if low_open else low <= value) and value <= MAX_DELAY_MS)  # NaN fails both
    if not ok:
        raise ValueError(f"{name} {value!r}: expected milliseconds {'above' if low_open else 'from'} {low:g} "
                         f"and at most {MAX_DELAY_MS:.0f}")
    return float(value)


@dataclass(slots=True)
class DelayModel:
    """Timing of one reconfiguration, in milliseconds."""

    mirror_ms: float = 25.0
    lock_ms: float = 254.0
    lock_jitter_ms: float = 5.0
    poll_period_ms: float = 250.0
    missed_poll_prob: float = 0.29
    missed_poll_jitter_ms: float = 48.0
    seed: int | None = None
    _rng: random.Random = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("mirror_ms", "lock_ms", "lock_jitter_ms", "poll_period_ms", "missed_poll_jitter_ms"):
            check_ms(name, getattr(self, name))
        p = self.missed_poll_prob
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:  # NaN fails too
            raise ValueError(f"missed_poll_prob {p!r}: expected a probability in 0..1")
        self._rng = random.Random(self.seed)

    @classmethod
    def instant(cls) -> DelayModel:
        """A model with every delay 0 (mirrors and ports change at once)."""
        return cls(0, 0, 0, 0, 0, 0)

    def params(self) -> dict[str, float | int | None]:
        """The parameters as a dict (for logs and --help)."""
        d = asdict(self)
        d.pop("_rng", None)
        return d

    def sample(self) -> tuple[float, float, float]:
        """One reconfiguration: (mirror done, light back, port reported up), ms after the command."""
        mirror = self.mirror_ms
        light = mirror + self.lock_ms + self._rng.uniform(0.0, self.lock_jitter_ms)
        up = light
        if self.poll_period_ms > 0:
            up += self.poll_period_ms
            if self._rng.random() < self.missed_poll_prob:
                up += self.poll_period_ms + self._rng.uniform(0.0, self.missed_poll_jitter_ms)
        return mirror, light, up

    def sample_port_up(self) -> float:
        """One port-down to port-up delay in ms (Table 4.3's quantity)."""
        return self.sample()[2]


def summarize(samples: list[float]) -> dict[str, float]:
    """Table 4.3's columns for a list of delays: mean, std, min, 25%, 50%, 75%, max."""
    if not samples:
        raise ValueError("samples []: expected at least one delay")
    q1, q2, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return {
        "n": len(samples),
        "mean": statistics.fmean(samples),
        "std": statistics.stdev(samples) if len(samples) > 1 else 0.0,
        "min": min(samples),
        "25%": q1,
        "50%": q2,
        "75%": q3,
        "max": max(samples),
    }


# Thesis Table 4.3 (ms), the target of the default model.
THESIS_TABLE_4_3 = {"mean": 605, "std": 115, "min": 529, "25%": 531, "50%": 532, "75%": 786, "max": 834}
