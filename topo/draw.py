"""Draw a topology as a layered picture (matplotlib): core/spine on top, hosts at the bottom, the OCS
to the right with its fibres dashed and the lit circuits of its default map dotted."""

from __future__ import annotations

import logging
from pathlib import Path

from topo.model import Topology

log = logging.getLogger(__name__)

LAYER = {"core": 3, "spine": 3, "aggregation": 2, "edge": 1, "leaf": 1, "tor": 1}
COLOR = {"core": "#c0504d", "spine": "#c0504d", "aggregation": "#f79646", "edge": "#4f81bd",
         "leaf": "#4f81bd", "tor": "#4f81bd", "host": "#9bbb59", "ocs": "#8064a2"}
MAX_HOSTS_DRAWN = 64


def layout(topo: Topology, with_hosts: bool) -> dict[str, tuple[float, float]]:
    """Node positions: one row per layer, each row spread over the width in topology order."""
    rows: dict[int, list[str]] = {}
    for s in topo.switches:
        rows.setdefault(LAYER.get(s.role, 1), []).append(s.name)
    if with_hosts:
        # hosts in the order of their ToRs, so host links do not cross
        order = {name: i for i, name in enumerate(rows.get(1, []))}
        attach = {}
        for lk in topo.links:
            for h, sw in ((lk.a, lk.b), (lk.b, lk.a)):
                attach[h] = sw
        rows[0] = sorted((h.name for h in topo.hosts), key=lambda h: (order.get(attach.get(h, ""), 0), h))
    width = max(len(r) for r in rows.values())
    pos: dict[str, tuple[float, float]] = {}
    for y, names in rows.items():
        for i, name in enumerate(names):
            pos[name] = ((i + 0.5) * width / len(names), float(y))
    for i, o in enumerate(topo.ocs):
        pos[o.name] = (width + 1.0, 1.5 + i)
    return pos


def draw(topo: Topology, path: str | Path, title: str | None = None) -> None:
    """Write a PNG (or any matplotlib format, by extension) of the topology."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with_hosts = len(topo.hosts) <= MAX_HOSTS_DRAWN
    pos = layout(topo, with_hosts)
    width = max(x for x, _y in pos.values()) + 1
    fig, ax = plt.subplots(figsize=(min(max(8.0, width * 0.5), 24.0), 6.5))
    small = len(pos) <= 60
    from matplotlib.collections import LineCollection

    segments = [(pos[lk.a], pos[lk.b]) for lk in topo.links if lk.a in pos and lk.b in pos]
    ax.add_collection(LineCollection(segments, colors="#7f7f7f", linewidths=0.8 if small else 0.2, zorder=1))
    for o in topo.ocs:
        attach = {p.port: p.switch for p in o.ports}
        ox, oy = pos[o.name]
        for p in o.ports:
            x, y = pos[p.switch]
            ax.plot([x, ox], [y, oy], color=COLOR["ocs"], lw=0.6, ls="--", zorder=1)
        for a, b in o.circuit_maps.get(o.default_map or "", []):
            (x1, y1), (x2, y2) = pos[attach[a]], pos[attach[b]]
            ax.annotate("", xy=(x2, y2), xytext=(x1, y1), zorder=1,
                        arrowprops={"arrowstyle": "-", "color": COLOR["ocs"], "lw": 1.5, "ls": ":",
                                    "connectionstyle": "arc3,rad=0.15"})
    roles = {s.name: s.role for s in topo.switches}
    roles.update({h.name: "host" for h in topo.hosts})
    roles.update({o.name: "ocs" for o in topo.ocs})
    by_role: dict[str, list[tuple[float, float]]] = {}
    for name, xy in pos.items():
        by_role.setdefault(roles[name], []).append(xy)
    for role, xys in by_role.items():
        ax.scatter([x for x, _ in xys], [y for _, y in xys], s=260 if small else max(4.0, 4000 / len(pos)),
                   color=COLOR[role], zorder=2, marker="s" if role != "host" else "o",
                   edgecolors="black", linewidths=0.5 if small else 0.1)
    for name, (x, y) in pos.items():
        role = roles[name]
        if small or role == "ocs":
            ax.annotate(name, (x, y), xytext=(0, -14 if role == "host" else 11), textcoords="offset points",
                        ha="center", fontsize=7)
    used = sorted({roles[n] for n in pos}, key=list(COLOR).index)
    for role in used:
        ax.scatter([], [], color=COLOR[role], label=role, marker="o" if role == "host" else "s")
    if topo.ocs:
        ax.plot([], [], color=COLOR["ocs"], lw=0.6, ls="--", label="fibre to OCS")
        ax.plot([], [], color=COLOR["ocs"], lw=1.5, ls=":", label="circuit (default map)")
    ax.legend(loc="upper left", fontsize=7, frameon=False)
    note = "" if with_hosts else f" (hosts not drawn: {len(topo.hosts)})"
    ax.set_title((title or f"{topo.name}: {len(topo.switches)} switches, {len(topo.hosts)} hosts, "
                  f"{len(topo.links)} links, {len(topo.ocs)} OCS") + note, fontsize=10)
    ys = [y for _x, y in pos.values()]
    ax.set_ylim(min(ys) - 0.6, max(ys) + 0.4)  # room below the ToRs for the circuit arcs
    ax.set_axis_off()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    log.info("drew %s", path)
