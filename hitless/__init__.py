"""hitless: a P4 testbed for hybrid electrical/optical datacenter networks, as one Python API.

    import hitless

    with hitless.Testbed("ucd4", rate_mbit=20, fabric_rate_mbit=21) as tb:
        tb.install("ecmp")
        runs = [tb.measure(p, "reconfigured", stream=("h2", "h3", 16)) for p in ("bbm", "mbb")]
    hitless.plot(runs, "results/quickstart")

`Testbed` (hitless/testbed.py), `Run` and `plot` (hitless/results.py); the command line is `hitless`.
"""

from hitless.results import Run, plot
from hitless.testbed import TARGETS, Testbed, choose_target

__all__ = ["TARGETS", "Run", "Testbed", "choose_target", "plot"]
