"""Seed 003's workload: concurrent bulk transfers (VM migrations), 7 mice to 1 elephant, and its figures.

`transfers` lays out n transfers over the sender ToRs (seed 003 §3.2: equally over 3 sender ToRs,
each to its partner ToR of the OCS's `pairs` map, A_i -> B_i). The paper ran one VM per host; here a
sender ToR's elephants all leave from its first host and its mice from its second (one host each
way per class), which keeps the hosts few and lets the tables tell elephants by address
(fabric.elephants). Sizes are the paper's scaled like the rate (250 MiB and 3 GiB at 1 Gbit/s), so
completion times are comparable to the paper's unscaled.

The hosts run `python -m scripts.experiments.bulk serve|fetch` (one process per host, one thread per transfer):
the sender serves its transfers (scripts.hosts.flows.serve), the receiver fetches them and prints one JSON
line each (start, completion time, bytes).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
from dataclasses import dataclass
from typing import Any

from pydantic import with_config

from scripts.experiments.schema import FORBID_EXTRA, Float, Int, Str
from scripts.hosts.flows import fetch, serve

MIB = 1 << 20
PAPER_MOUSE_BYTES = 250 * MIB  # seed 003 §3.2, binary units (seed notes §2.5)
PAPER_ELEPHANT_BYTES = 3 * 1024 * MIB
BASE_PORT = 6100
MAX_SSE_S = 3600.0

# seed 003 Tables 1 and 3 (mean over 15 runs): elephant throughput (Mbit/s at 1 Gbit/s) and completion
# time (s) per strategy and number of transfers, and the mice's (Tables 2 and 4)
PAPER = {
    "elephant": {"tput": {"none": (616.3, 324.4, 215.7), "ut": (550.0, 287.1, 187.4),
                          "dt": (652.4, 344.8, 234.4), "on-demand": (952.7, 510.4, 335.2)},
                 "ct": {"none": (41.8, 79.9, 120.5), "ut": (48.8, 90.8, 140.4),
                        "dt": (44.2, 82.2, 115.2), "on-demand": (27.0, 50.9, 77.8)}},
    "mouse": {"tput": {"none": (171.9, 86.8, 56.5), "ut": (150.4, 86.3, 56.5),
                       "dt": (177.9, 99.0, 69.4), "on-demand": (218.2, 109.7, 58.7)},
              "ct": {"none": (18.5, 34.1, 51.3), "ut": (19.7, 34.3, 51.0),
                     "dt": (15.5, 28.6, 39.1), "on-demand": (12.5, 24.6, 41.6)}},
}
PAPER_TRANSFERS = (24, 48, 72)


@with_config(FORBID_EXTRA)
@dataclass(slots=True)
class Bulk:
    """The workload and the round robin's epoch: n transfers, sizes, SSE, congestion control."""

    transfers: Int = 24
    mice_per_elephant: Int = 7
    mouse_bytes: Int = PAPER_MOUSE_BYTES // 100  # scale 0.01 (10 Mbit/s for the paper's 1 Gbit/s)
    elephant_bytes: Int = PAPER_ELEPHANT_BYTES // 100
    sse_s: Float = 10.0  # seed 003 §3.1: a circuit lasts one space-switch epoch; times are not scaled
    cc: Str = "cubic"

    def check(self) -> Bulk:
        """Self, or ValueError naming the bad field."""
        for name in ("transfers", "mice_per_elephant", "mouse_bytes", "elephant_bytes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"bulk.{name} {v!r}: expected an integer >= 1")
        if self.transfers % (self.mice_per_elephant + 1):
            raise ValueError(f"bulk.transfers {self.transfers}: expected a multiple of "
                             f"{self.mice_per_elephant + 1} (mice_per_elephant + 1)")
        if not isinstance(self.sse_s, (int, float)) or isinstance(self.sse_s, bool) \
                or not 0 < self.sse_s <= MAX_SSE_S:  # NaN fails too
            raise ValueError(f"bulk.sse_s {self.sse_s!r}: expected seconds above 0 and at most {MAX_SSE_S:.0f}")
        return self


@dataclass(frozen=True, slots=True)
class Transfer:
    """One bulk transfer: the class, sender and receiver host, bytes, the TCP port it uses."""

    cls: str  # "elephant" or "mouse"
    src: str
    dst: str
    size: int
    port: int


def transfers(bulk: Bulk, pairs: list[tuple[str, str]], hosts: dict[str, list[str]]) -> list[Transfer]:
    """The transfers of one run: per group of 1 + mice_per_elephant, one elephant and the mice, dealt
    round robin over the (sender ToR, receiver ToR) pairs; elephants between the ToRs' first hosts,
    mice between their second."""
    bulk.check()
    if not pairs:
        raise ValueError("pairs: none; expected at least one (sender ToR, receiver ToR)")
    for tor in {t for p in pairs for t in p}:
        if len(hosts.get(tor, [])) < 2:
            raise ValueError(f"ToR {tor!r}: {len(hosts.get(tor, []))} hosts; expected 2 (elephants, mice)")
    groups = bulk.transfers // (bulk.mice_per_elephant + 1)
    out: list[Transfer] = []
    for g in range(groups):
        a, b = pairs[g % len(pairs)]
        out.append(Transfer("elephant", hosts[a][0], hosts[b][0], bulk.elephant_bytes, 0))
        out += [Transfer("mouse", hosts[a][1], hosts[b][1], bulk.mouse_bytes, 0)] * bulk.mice_per_elephant
    used: dict[str, int] = {}  # ports per receiving host, from BASE_PORT
    numbered = []
    for t in out:
        used[t.dst] = used.get(t.dst, -1) + 1
        numbered.append(Transfer(t.cls, t.src, t.dst, t.size, BASE_PORT + used[t.dst]))
    return numbered


def elephant_hosts(ts: list[Transfer]) -> list[str]:
    """Every host an elephant leaves from or goes to (the tables' classification)."""
    return sorted({h for t in ts if t.cls == "elephant" for h in (t.src, t.dst)})


def class_summary(flows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per class: count, throughput (Mbit/s, size / completion time, the paper's per-VM rate) and
    completion time (s), each mean / min / max (the paper's Tables 1-4)."""
    out = {}
    for cls in ("elephant", "mouse"):
        mine = [f for f in flows if f["cls"] == cls and f.get("fct_s")]
        if not mine:
            continue
        tput = [f["bytes"] * 8 / f["fct_s"] / 1e6 for f in mine]
        ct = [f["fct_s"] for f in mine]
        out[cls] = {"n": len(mine), "tput_mean": statistics.fmean(tput), "tput_min": min(tput),
                    "tput_max": max(tput), "ct_mean": statistics.fmean(ct), "ct_min": min(ct), "ct_max": max(ct)}
    return out


def change_pct(value: float | None, base: float | None) -> float | None:
    """value against base in percent (None when either is missing or base is 0)."""
    if value is None or not base:
        return None
    return 100.0 * (value - base) / base


def time_factor(elephant_bytes: int, scale: float | None) -> float | None:
    """Completion times here over the paper's for the same network: the elephant's size against the
    paper's (3 GiB), over the rate's scale (None without a scale)."""
    return elephant_bytes / PAPER_ELEPHANT_BYTES / scale if scale else None


def paper_value(cls: str, metric: str, strategy: str, transfers: int) -> float | None:
    """The paper's mean (Mbit/s at 1 Gbit/s, or s) of a strategy, None off its grid."""
    if transfers not in PAPER_TRANSFERS or strategy not in PAPER[cls][metric]:
        return None
    return PAPER[cls][metric][strategy][PAPER_TRANSFERS.index(transfers)]


def paper_change(cls: str, metric: str, strategy: str, transfers: int) -> float | None:
    """The paper's mean change of a strategy against no direct link (percent), None off its grid."""
    return change_pct(paper_value(cls, metric, strategy, transfers), paper_value(cls, metric, "none", transfers))


# -- the host side ----------------------------------------------------------------------------------------


def _pairs(ports: str, sizes: str | None) -> list[tuple[int, int]]:
    try:
        p = [int(x) for x in ports.split(",")]
        s = [int(x) for x in sizes.split(",")] if sizes is not None else [0] * len(p)
    except ValueError:
        raise ValueError(f"ports {ports!r} / sizes {sizes!r}: expected comma-separated integers") from None
    if len(p) != len(s) or not p:
        raise ValueError(f"ports {ports!r} / sizes {sizes!r}: expected as many sizes as ports")
    return list(zip(p, s, strict=True))


def main(argv: list[str] | None = None) -> int:
    """Entry point: serve or fetch several transfers at once, one thread each."""
    p = argparse.ArgumentParser(prog="python -m scripts.experiments.bulk", description="concurrent bulk TCP transfers")
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("serve", help="send --sizes[i] bytes to one client on --ports[i]")
    a.add_argument("--ports", required=True, metavar="<p1,p2>")
    a.add_argument("--sizes", required=True, metavar="<bytes1,bytes2>")
    a.add_argument("--cc", metavar="<algorithm>")
    a.add_argument("--timeout", type=float, default=900.0, metavar="<s>")
    b = sub.add_parser("fetch", help="fetch from --dst on every port at once; one JSON line per transfer")
    b.add_argument("--dst", required=True, metavar="<ip>")
    b.add_argument("--ports", required=True, metavar="<p1,p2>")
    b.add_argument("--timeout", type=float, default=900.0, metavar="<s>")
    args = p.parse_args(argv)
    try:
        jobs = _pairs(args.ports, getattr(args, "sizes", None))
    except ValueError as exc:
        print(f"bulk: {exc}", file=sys.stderr)
        return 2
    lock = threading.Lock()
    errors: list[str] = []

    def one(port: int, size: int) -> None:
        try:
            if args.cmd == "serve":
                serve(port, size, timeout=args.timeout, cc=args.cc)
            else:
                res = fetch(args.dst, port, timeout=args.timeout)
                res["port"] = port
                with lock:
                    print(json.dumps(res), flush=True)
        except (ValueError, OSError) as exc:
            with lock:
                errors.append(f"port {port}: {exc}")

    threads = [threading.Thread(target=one, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        print(f"bulk {args.cmd}: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
