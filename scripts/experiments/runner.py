"""The experiment runner: one Emulation per variant (or per group of variants that start the same
emulation, for a kind that resets everything per run), N runs each, progress on stdout, resumable.

Results go to <out>/<variant>/run-<i>/ (raw files and metrics.json). A run whose metrics.json exists
is skipped, so an interrupted experiment continues where it stopped; a variant whose runs all exist
does not even start its emulation. A failed run is recorded (error.txt) and counted, never hidden.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from emulation.links import set_sysctls
from p4sim.target import Target
from scripts.experiments.lb import LoadBalancing
from scripts.experiments.reconf import Reconfiguration
from scripts.experiments.schedule import ScheduleTiming
from scripts.experiments.schedule_alltoall import AlltoallRun, alltoall_ocs_args, summary_line
from scripts.experiments.seed001 import ReservationRun, summary
from scripts.experiments.spec import Spec, Variant, make_topology, schedule_ocs_args
from scripts.experiments.strategies import Strategies

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
# where build/ and results/ go: the checkout, or the working directory of an installed copy (pip install .)
HOME = ROOT if (ROOT / "pyproject.toml").is_file() else Path.cwd()
Say = Callable[[str], None]
# What watches each emulation while its runs go (the live view, from a layer above): entered once the
# emulation has started, with the results directory its runs write into.
Watch = Callable[[Any, Path], AbstractContextManager]


def say_flush(line: str) -> None:
    """Print one progress line now (stdout may be a file)."""
    print(line, flush=True)


def run_dir(out: Path, variant: Variant, i: int) -> Path:
    """Where run i of a variant keeps its files."""
    return out / variant.name / f"run-{i:03d}"


def done(out: Path, variant: Variant, i: int) -> bool:
    """True when run i of the variant has its metrics."""
    return (run_dir(out, variant, i) / "metrics.json").exists()


def _experiment(emu: Any, spec: Spec, variant: Variant):
    if spec.kind in ("reconfiguration", "route-flip"):
        return Reconfiguration(emu, spec, variant)
    if spec.kind == "load-balancing":
        return LoadBalancing(emu, spec, variant)
    if spec.kind == "strategies":
        return Strategies(emu, spec, variant)
    if spec.kind == "reservation":
        return ReservationRun(emu, spec, variant)
    if spec.kind == "alltoall":
        return AlltoallRun(emu, spec, variant)

    return ScheduleTiming(emu, spec, variant)


class _Terminated(BaseException):  # noqa: N818 - not an error: a signal, it must end the whole experiment
    pass


def _on_term(signum: int, _frame: Any) -> None:
    raise _Terminated(f"signal {signum}")


def run_experiment(spec: Spec, out: Path, say: Say = say_flush, build: Path | None = None,
                   switch_bin: str | None = None, seed: int = 1, watch: Watch | None = None,
                   cluster: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run every missing run of every variant; returns counts (done before, ran, failed). `cluster`:
    Emulation's `servers`, `ssh_options` and `placement`, for a run over several servers."""
    # imported here, not at the top: Mininet is an optional heavy dependency
    from mininet.log import setLogLevel

    from emulation.network import Emulation

    # Mininet's own log: errors only (its tc warnings about htb quanta are noise here)
    setLogLevel("info" if log.isEnabledFor(logging.INFO) else "critical")

    if os.geteuid() != 0:
        raise ValueError("run: needs root (Mininet namespaces and veth pairs); expected sudo")
    build = HOME / "build" if build is None else build
    say(f"[{spec.name}] {Target.from_env().ensure_build(build)}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "spec.json").write_text(json.dumps({"name": spec.name, "kind": spec.kind, "path": spec.path,
                                               "runs": spec.runs, "duration_s": spec.duration_s,
                                               "scale": spec.scale}, indent=1))
    counts = {"skipped": 0, "ran": 0, "failed": 0}
    total = spec.runs * len(spec.variants)
    n = 0
    t0 = time.monotonic()
    old = {s: signal.signal(s, _on_term) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        pending = []
        for variant in spec.variants:
            todo = [i for i in range(spec.runs) if not done(out, variant, i)]
            counts["skipped"] += spec.runs - len(todo)
            n += spec.runs - len(todo)
            if not todo:
                say(f"[{spec.name}] {variant.name}: all {spec.runs} runs already done")
                continue
            pending.append((variant, todo))
        for group in share_groups(spec, pending):
            first = group[0][0]
            topo = make_topology(spec, first)
            opts = emulation_options(spec, first, bool(topo.ocs), seed)
            emu = Emulation.isolated(topo, first.mode, build_dir=build, switch_bin=switch_bin, rto_min=first.rto_min,
                                     log_dir=emulation_log_dir(spec, out, group), **opts, **(cluster or {}),
                                     on_progress=lambda st, d, v=first.name: log.info("%s %s: %s", v, st, d))
            ocs_args = opts["ocs_args"]
            shared = f", shared by {', '.join(v.name for v, _ in group)}" if len(group) > 1 else ""
            say(f"[{spec.name}] {first.name}: starting {topo.name} ({len(topo.switches)} switches, "
                f"mode {first.mode}, rto_min {first.rto_min or 'default'}, ocs {' '.join(ocs_args) or 'default'}"
                f"{shared})")
            watching = contextlib.ExitStack()
            try:
                emu.start()
                if emu.servers:
                    write_cluster(emu, emulation_log_dir(spec, out, group) / "cluster.json")
                _tune_hosts(emu, first)
                if watch is not None:
                    watching.enter_context(watch(emu, out))
                for variant, todo in group:
                    exp = _experiment(emu, spec, variant)
                    try:
                        for i in todo:
                            n += 1
                            d = run_dir(out, variant, i)
                            t_run = time.monotonic()
                            try:
                                m = exp.run(d)
                                counts["ran"] += 1
                                (d / "error.txt").unlink(missing_ok=True)
                                say(f"[{spec.name}] {n}/{total} {variant.name} run {i}: {one_line(m)} "
                                    f"({time.monotonic() - t_run:.0f} s, {time.monotonic() - t0:.0f} s total)")
                            except Exception as exc:  # noqa: BLE001 - one failed run is recorded, the others go on
                                counts["failed"] += 1
                                d.mkdir(parents=True, exist_ok=True)
                                (d / "error.txt").write_text(traceback.format_exc())
                                say(f"[{spec.name}] {n}/{total} {variant.name} run {i}: FAILED: {exc}")
                    finally:
                        exp.close()
            finally:
                watching.close()
                emu.stop()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    return counts


def write_cluster(emu: Any, path: Path) -> None:
    """A cluster run's record beside its emulation's logs: each node's server, the links between
    servers and what a tunnel adds one way between each pair (emulation.network.Emulation)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"servers": emu.servers, "placement": emu.server_of,
                                "links_between_servers": [list(x) for x in emu.cross_links()],
                                "tunnel_delay_ms": [{"servers": list(k), "one_way_ms": v}
                                                    for k, v in emu.tunnel_delay_ms.items()]}, indent=1))


# kinds whose every run starts by resetting the circuits and all tables to its variant's own (so
# variants that start the same emulation can share one): seed 003's strategies (Strategies.reset)
SHARING_KINDS = ("strategies",)
# kinds whose every run needs an emulation of its own: seed 001's reservation and seed 002's
# all-to-all (the holds' registers, the hosts' TCP state and the OCS's clock start afresh)
FRESH_KINDS = ("reservation", "alltoall")
# the OCS emulator of kind reservation: its data-plane round robin lights every fibre until a run's
# controller replaces its tables (seed001.optical_setup)
RESERVATION_OCS_ARGS = ["--instant", "--schedule", "round-robin", "--schedule-mode", "dataplane"]


def emulation_log_dir(spec: Spec, out: Path, group: list[tuple[Variant, list[int]]]) -> Path:
    """Where an emulation's logs go: its run's folder for a kind that starts one a run, else its first
    variant's."""
    variant, todo = group[0]
    return run_dir(out, variant, todo[0]) / "emulation" if spec.kind in FRESH_KINDS else out / variant.name / "emulation"


def emulation_options(spec: Spec, variant: Variant, has_ocs: bool, seed: int) -> dict[str, Any]:
    """The kind's and the variant's options of the emulation a variant starts (Emulation.isolated's
    ocs_args, circuits and hold_passes)."""
    ocs_args = list(variant.ocs_args)
    if spec.kind == "schedule":
        ocs_args = schedule_ocs_args(spec) + ocs_args  # the variant's --day-ms/--night-ms win
    if spec.kind == "reservation":
        ocs_args = RESERVATION_OCS_ARGS + ocs_args
    if spec.kind == "alltoall" and has_ocs:
        ocs_args = alltoall_ocs_args(spec.alltoall) + ocs_args
    if has_ocs and "--seed" not in ocs_args and "--instant" not in ocs_args:
        ocs_args += ["--seed", str(seed)]
    opts: dict[str, Any] = {"ocs_args": ocs_args}
    if has_ocs:
        opts["circuits"] = ("none" if spec.kind in ("schedule", "strategies", "reservation", "alltoall")
                            else variant.initial_map or spec.initial_map)
    if spec.kind in ("reservation", "alltoall"):
        opts["hold_passes"] = (spec.reservation if spec.kind == "reservation" else spec.alltoall).hold_passes
    return opts


def emulation_key(variant: Variant) -> tuple:
    """What the emulation a variant starts depends on (the runner's Emulation.isolated arguments and
    _tune_hosts); the rest of a variant (procedure, strategy, hold, failover) is its experiment's."""
    return (variant.mode, tuple(variant.ocs_args), variant.rto_min, variant.initial_map,
            tuple(sorted(variant.sysctl.items())), json.dumps(variant.topology, sort_keys=True))


def share_groups(spec: Spec, pending: list[tuple[Variant, list[int]]]) -> list[list[tuple[Variant, list[int]]]]:
    """The pending variants (with their missing runs) in spec order, consecutive ones that start the
    same emulation grouped to share one when the kind resets everything per run; a group a run when
    the kind needs a fresh emulation each time; else one each."""
    groups: list[list[tuple[Variant, list[int]]]] = []
    if spec.kind in FRESH_KINDS:
        return [[(variant, [i])] for variant, todo in pending for i in todo]
    for item in pending:
        if spec.kind in SHARING_KINDS and groups and emulation_key(groups[-1][0][0]) == emulation_key(item[0]):
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


def _tune_hosts(emu: Any, variant: Variant) -> None:
    """The variant's sysctls in every host. (CUBIC, seed 000 R12, is chosen per socket by the senders:
    a namespace may only default to the algorithms the machine allows, which need not include it.)"""
    set_sysctls(emu.hosts, variant.sysctl)


def one_line(m: dict[str, Any]) -> str:
    """A run's headline numbers."""
    if "strategy" in m:
        parts = [f"{cls} {c['n']}: {c['tput_mean']:.2f} Mbit/s, ct {c['ct_mean']:.1f} s" for cls, c in m["classes"].items()]
        return "; ".join(parts) + f"; {len(m['changes'])} changes, retx {m['retrans_segs']}, rto {m['timeouts']}"
    if "classes" in m:
        parts = []
        for cls, c in m["classes"].items():
            fct = sorted(f["fct_s"] for f in c["flows"])
            parts.append(f"{cls} fct p50 {1000 * fct[len(fct) // 2]:.0f} ms util {c['utilisation']['mean_over_max']:.2f}"
                         + ("" if c["rate_check_ok"] else " RATE-CHECK-FAILED"))
        return "; ".join(parts)
    if "tdc" in m:
        return summary(m)
    if "gating" in m:
        return summary_line(m)
    if "day_ms" in m:
        return f"day {m['day_ms'].get('mean', 0):.1f} ms, night {m['night_ms'].get('mean', 0):.1f} ms"
    gap = m.get("max_gap_ms", 0.0)
    spurious = f" ({m['spurious_retransmissions']} spurious)" if m.get("spurious_retransmissions") else ""
    queued = f" ({m['queue_drops']} frames dropped by full switch queues)" if m.get("queue_drops") else ""
    return (f"gap {gap:.0f} ms, retx {m.get('retransmissions', 0)}{spurious}, rto {m.get('rto_count', 0)}, "
            f"lost {m.get('lost_packets')}{queued}, dip {m.get('throughput_dip_pct') or 0:.0f}%")


if __name__ == "__main__":  # pragma: no cover - use python -m scripts run
    sys.exit("use: python -m scripts run <spec.yaml>")
