"""Benchmark: what each kind of P4Runtime call the procedures make does to the data plane it controls.

The thesis testbed (ucd4: four ToRs, the `ocs` switch) on veth pairs (emulation/vethnet.py), every
switch port shaped as the experiments' links are (htb at --link-mbit, as Mininet's TCLink), and a
constant-rate UDP stream h2 -> h3 (--rate-mbit of --size B frames) sent and received by a child
process, so that the controller's own CPU does not pace it. For each call kind the controller makes
one call on every switch of the stream's path (in parallel, as a procedure's sync does) every
--period ms for --seconds; `plan-and-prepare` and `busy-loop` are the controller's own work, no call;
`link-flap` takes the electrical links beside the stream's path down and up, as an OCS step darkens
ports of the switches a moved stream crosses.
The figures per kind: calls made and their latency, the stream's longest gap at the receiver (the
sender's own longest gap beside it: a stall of the sender is not the network's), the longest one-way
delay of a frame (kernel timestamps of the frame leaving the sender and reaching the receiver: a stall
of the path itself, whatever the sending and receiving threads did), frames lost, the
switches' egress queue drops (port_enq - port_deq) in the window, and the CPU the switches, this
process and the kernel's softirq spent.

    sudo .venv/bin/python -m scripts.bench.control_stall [--seconds 3] [--kinds idle,write-100] [--hogs 2]
        [--switch-sched fifo|nice] [--softirq-boost 1|0] [--idle-poll 1|0] [--repeat N] [--json out.json]

The target is the environment's (P4C/SWITCH, p4sim/target.py); run it once per target and compare
the tables. The switches run as an emulation's do (SCHED_FIFO, the softirq boost: emulation/priority.py);
`--switch-sched nice --softirq-boost 0` is how they ran before; --hogs N adds N busy processes.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import multiprocessing as mp
import os
import signal
import statistics
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from control.network import Network
from control.plan import View, plan
from control.switch import Pipeline, SwitchSession
from emulation.ocs.delay import DelayModel
from emulation.priority import SOFTIRQ_NICE, SWITCH_NICE, SoftirqBoost
from emulation.state import STATE_DIR, cpu_seconds
from emulation.vethnet import NetTestbed, udp_frame
from fabric.contract import FLOWLET_CONFIG, PATH, PORT_COUNTERS, PORT_DEQ, PORT_ENQ, ROUTE, ROUTE_DROP
from fabric.state import with_failover
from p4rt.entities import TableEntry
from p4rt.resources import CounterEntry, Packet
from p4rt.schema import short_name
from p4sim.target import Target
from tablegen.entries import generate_states
from topo.generators import ucd4

ROOT = Path(__file__).resolve().parents[2]
log = logging.getLogger("bench_control_stall")

PATH_SWITCHES = ("s2", "s1", "s4", "s3")  # h2 -> h3 on ucd4's default circuits (bypass br2-br1-br4-br3)
UNUSED_PORTS = (("s2", 3), ("s4", 4))  # the electrical links s2-s1 and s4-s3: the stream takes the circuits
SPARE_PREFIX = ipaddress.IPv4Network("172.16.0.0/16")  # routes no host uses (write kinds)
PROBE_ETHERTYPE = 0x88B6
SO_TIMESTAMPNS = 35  # Linux's (the socket module does not name it): a frame's arrival time as ancillary data


# -- the stream, in a child process ------------------------------------------------------------------


@dataclass(slots=True)
class StreamResult:
    """What one window's stream saw: frames sent and received, the largest gaps at both ends."""

    sent: int
    received: int
    socket_drops: int
    rx_gap_ms: float
    tx_gap_ms: float
    delay_ms: float  # the longest a frame took from its send to its arrival: a stall of the path itself


def _stream(tx_if: str, rx_if: str, frame: FrameSpec, interval: float, seconds: float,
            out: mp.connection.Connection) -> None:
    """Child: send `frame(seq)` every `interval` s for `seconds`, receive on rx_if, report a StreamResult."""
    import socket
    import threading

    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((tx_if, 0))
    stop = threading.Event()

    def tap(ifname: str, outgoing: bool, seen: dict[int, float]) -> socket.socket:
        """A thread noting when the kernel took each stream frame sent (outgoing) or received on ifname
        (seq -> epoch s)."""
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))  # ETH_P_ALL: outgoing frames too
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        sock.bind((ifname, 0))
        sock.settimeout(0.05)

        def run() -> None:
            while not stop.is_set():
                try:
                    data, anc, _, addr = sock.recvmsg(4096, 64)
                except (TimeoutError, OSError):
                    continue
                i = data.find(b"SEQ")
                stamps = [struct.unpack("qq", d[:16]) for lvl, typ, d in anc
                          if (lvl, typ) == (socket.SOL_SOCKET, SO_TIMESTAMPNS)]
                if i >= 0 and stamps and (addr[2] == socket.PACKET_OUTGOING) == outgoing:
                    seen[int.from_bytes(data[i + 3:i + 7], "big")] = stamps[0][0] + stamps[0][1] / 1e9

        threads.append(threading.Thread(target=run, daemon=True))
        threads[-1].start()
        return sock

    threads: list[threading.Thread] = []
    got: dict[int, float] = {}  # seq -> arrival at the receiver
    left: dict[int, float] = {}  # seq -> when it left the sender (the kernel's time, not the sending thread's)
    rx = tap(rx_if, False, got)
    tap(tx_if, True, left)
    sends: list[float] = []
    t0 = time.time()
    n = 0
    while time.time() - t0 < seconds:
        tx.send(frame.bytes(n))
        sends.append(time.time())
        n += 1
        wait = t0 + n * interval - time.time()
        if wait > 0:
            time.sleep(wait)
    time.sleep(0.3)
    stop.set()
    for th in threads:
        th.join()
    drops = struct.unpack("II", rx.getsockopt(263, 6, 8))[1]  # SOL_PACKET, PACKET_STATISTICS

    def gap(ts: list[float]) -> float:
        return max((b - a for a, b in zip(ts, ts[1:], strict=False)), default=0.0) * 1000

    delay = max((t - left[seq] for seq, t in got.items() if seq in left), default=0.0) * 1000
    out.send(StreamResult(n, len(got), drops, gap(sorted(got.values())), gap(sends), delay))


@dataclass(frozen=True, slots=True)
class FrameSpec:
    """The stream's frames (picklable, for a child started afresh: a forked one inherits gRPC's threads)."""

    src_mac: str
    dst_mac: str
    src: str
    dst: str
    size: int

    def bytes(self, seq: int) -> bytes:
        """Frame `seq`, padded to `size` bytes."""
        f = udp_frame(self.src_mac, self.dst_mac, self.src, self.dst, seq)
        return f + bytes(max(0, self.size - len(f)))


# -- call kinds ------------------------------------------------------------------------------------------


Call = Callable[[SwitchSession], object]


def _spare_routes(n: int) -> list[TableEntry]:
    hosts = SPARE_PREFIX.hosts()
    return [TableEntry(ROUTE, {"ipv4_dst": f"{next(hosts)}/32"}, ROUTE_DROP) for _ in range(n)]


class Toggle:
    """Calls that alternate per switch (insert, then delete; a state, then back); `undo` ends each
    switch where it began."""

    def __init__(self, first: Call, second: Call) -> None:
        self.first, self.second = first, second
        self.turned: dict[str, bool] = {}

    def __call__(self, s: SwitchSession) -> object:
        self.turned[s.name] = not self.turned.get(s.name, False)
        return (self.first if self.turned[s.name] else self.second)(s)

    def undo(self, net: Network) -> None:
        """Call `second` where the last call was `first`."""
        for name in [n for n, t in self.turned.items() if t]:
            self(net.sessions[name])


def kinds(net: Network, tb: NetTestbed) -> dict[str, Call | None]:
    """Every call kind by name (None: no call, the baseline)."""
    desired = net.desired()
    out: dict[str, Call | None] = {"idle": None}
    for n in (1, 10, 100, 1000):
        routes = _spare_routes(n)
        out[f"write-{n}"] = Toggle(lambda s, r=routes: s.client.insert(r), lambda s, r=routes: s.client.delete(r))
    # the entries the stream's packets hit, written again unchanged (a table the data plane reads)
    out["modify-hit"] = lambda s: s.client.modify([e for e in desired[s.name].entries if short_name(e.table) == PATH])
    out["failover-toggle"] = Toggle(lambda s: s.sync(with_failover(desired[s.name], False), trust_cache=True),
                                    lambda s: s.sync(desired[s.name], trust_cache=True))
    out["read-counters"] = lambda s: s.client.read([CounterEntry(c) for c in PORT_COUNTERS])  # every cell
    ports = {sw.name: sorted(sw.ports) for sw in tb.topo.switches}
    out["read-counters-ports"] = lambda s: s.client.read([CounterEntry(c, p) for c in PORT_COUNTERS
                                                          for p in ports[s.name]])  # the switch's ports' cells
    out["read-tables"] = lambda s: s.read_held(desired[s.name])
    out["read-default"] = lambda s: s.client.read([TableEntry(FLOWLET_CONFIG, default=True, action=None)])
    out["get-pipeline"] = lambda s: s.client.get_pipeline()

    def packet_out(s: SwitchSession) -> None:
        port = max(tb.topo.switch_map()[s.name].ports)  # a port no stream leaves by
        frame = b"\xff" * 6 + b"\x02" + bytes(5) + PROBE_ETHERTYPE.to_bytes(2, "big") + bytes(46)
        s.client.packet_out(Packet(frame, {"egress_port": port}))

    out["packet-out"] = packet_out
    return out


def controller_work(net: Network, tb: NetTestbed) -> dict[str, Callable[[], object]]:
    """Work of the controller process that writes nothing: planning an mbb run and encoding its states."""
    topo = tb.topo
    o = topo.ocs[0]
    old, new = o.circuit_maps[o.default_map], o.circuit_maps["reconfigured"]
    view = View(topo, o.name, max(p.port for p in o.ports), current=net.desired())

    def plan_and_prepare() -> None:
        p = plan("mbb", old, new, view)
        for states in p.states.values():
            for name, st in states.items():
                net.sessions[name].prepare(st)

    return {"plan-and-prepare": plan_and_prepare, "busy-loop": lambda: sum(range(200_000)),
            "link-flap": LinkFlap(tb)}


class LinkFlap:
    """What an OCS step does to the path's switches: links they do not forward on lose carrier, then
    get it back (one change a call); `undo` leaves them up."""

    def __init__(self, tb: NetTestbed) -> None:
        self.tb, self.down = tb, False

    def __call__(self) -> None:
        self.down = not self.down
        for switch, port in UNUSED_PORTS:
            self.tb.cut(switch, port, up=not self.down)

    def undo(self, net: Network) -> None:
        if self.down:
            self()


# -- one window ------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Row:
    kind: str
    calls: int
    call_ms_median: float
    call_ms_max: float
    rx_gap_ms: float
    tx_gap_ms: float
    delay_ms: float
    sent: int
    lost: int
    queue_drops: int
    switch_cpu_s: float  # every switch process's CPU in the window
    controller_cpu_s: float  # this process's
    softirq_s: float  # the machine's softirq time (packets through veths and qdiscs)


def queue_drops(net: Network, names: tuple[str, ...]) -> int:
    """Frames the egress queues of these switches dropped so far (port_enq - port_deq)."""
    total = 0
    for n in names:
        for c in net.read(n, [CounterEntry(PORT_ENQ), CounterEntry(PORT_DEQ)]):
            total += c.packets if c.counter == PORT_ENQ else -c.packets
    return total


def window(kind: str, work: Callable[[], object] | None, net: Network, tb: NetTestbed, frame: FrameSpec,
           interval: float, seconds: float, period: float) -> Row:
    """Stream for `seconds` + 1 s; `work` every `period` s in the middle `seconds`."""
    drops0 = queue_drops(net, PATH_SWITCHES)
    cpu0, own0, irq0 = switch_cpu(tb), time.process_time(), softirq_seconds()
    parent, child = mp.Pipe(duplex=False)
    proc = mp.get_context("spawn").Process(target=_stream, args=(tb.host_if["h2"], tb.host_if["h3"], frame, interval,
                                                                  seconds + 1.0, child))
    proc.start()
    time.sleep(0.5)
    lat: list[float] = []
    t_end = time.monotonic() + seconds
    while time.monotonic() < t_end:
        t0 = time.monotonic()
        if work is not None:
            work()
            lat.append((time.monotonic() - t0) * 1000)
        time.sleep(max(0.0, t0 + period - time.monotonic()))
    if not parent.poll(seconds + 30):
        proc.kill()
        raise RuntimeError(f"{kind}: the stream's process sent no result (exit code {proc.exitcode})")
    res: StreamResult = parent.recv()
    proc.join()
    cpu, own, irq = switch_cpu(tb) - cpu0, time.process_time() - own0, softirq_seconds() - irq0
    drops = queue_drops(net, PATH_SWITCHES) - drops0
    return Row(kind, len(lat), statistics.median(lat) if lat else 0.0, max(lat, default=0.0), res.rx_gap_ms,
               res.tx_gap_ms, res.delay_ms, res.sent, res.sent - res.received, drops, cpu, own, irq)


def softirq_seconds() -> float:
    """The machine's softirq time so far, every CPU (/proc/stat)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return int(fields[7]) / os.sysconf("SC_CLK_TCK")


def switch_cpu(tb: NetTestbed) -> float:
    """CPU seconds every switch process of the testbed has used so far."""
    return sum(cpu_seconds(p.pid) or 0.0 for p in tb.procs)


def shape(ifname: str, mbit: float) -> None:
    """Mininet TCLink's shaping of an interface's egress: htb at `mbit`, default queue."""
    for cmd in (["tc", "qdisc", "replace", "dev", ifname, "root", "handle", "5:0", "htb", "default", "1"],
                ["tc", "class", "replace", "dev", ifname, "parent", "5:0", "classid", "5:1", "htb", "rate",
                 f"{mbit}Mbit", "burst", "15k"]):
        subprocess.run(cmd, check=True, capture_output=True)


def hogs(n: int) -> list[subprocess.Popen]:
    """N busy processes (a loaded machine)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=3.0, metavar="<s>", help="calls per kind for this long")
    ap.add_argument("--period", type=float, default=20.0, metavar="<ms>", help="one call per switch every <ms>")
    ap.add_argument("--rate-mbit", type=float, default=16.0, metavar="<mbit>", help="the stream's rate (e1: 16)")
    ap.add_argument("--size", type=int, default=1500, metavar="<bytes>", help="the stream's frame size")
    ap.add_argument("--link-mbit", type=float, default=21.0, metavar="<mbit>",
                    help="every switch port's rate (e1's fabric links: 21); 0: unshaped")
    ap.add_argument("--kinds", default="all", metavar="<k,k>", help="call kinds (default all)")
    ap.add_argument("--switch-sched", choices=("fifo", "nice"), default="fifo",
                    help=f"the switch processes' scheduling: SCHED_FIFO as a run's (default), or niceness {SWITCH_NICE}")
    ap.add_argument("--softirq-boost", type=int, choices=(0, 1), default=1, metavar="<0|1>",
                    help=f"the kernel's softirq threads at niceness {SOFTIRQ_NICE} while it runs, as an emulation's "
                         "run does (1, default), or as found (0)")
    ap.add_argument("--idle-poll", type=int, choices=(0, 1), default=1, metavar="<0|1>",
                    help="the CPUs kept out of halting idle while it runs, as an emulation's run does (1, default), "
                         "or the machine's own idle (0)")
    ap.add_argument("--repeat", type=int, default=1, metavar="<n>", help="rounds over the kinds (interleaved)")
    ap.add_argument("--hogs", type=int, default=0, metavar="<n>", help="busy processes beside the bench")
    ap.add_argument("--build", default="build/bench-stall", metavar="<dir>", help="build directory")
    ap.add_argument("--json", metavar="<file>", help="also write the rows as JSON")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if os.geteuid() != 0:
        print("bench_control_stall: needs root (veth pairs, tc)", file=sys.stderr)
        return 2

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stopped by PID: still clean up (finally)
    target = Target.from_env()
    build = Path(args.build)
    target.ensure_build(build, ROOT / "p4src")
    fabric, ocs = Pipeline.from_build("fabric", build), Pipeline.from_build("ocs", build)
    topo = ucd4()
    tb = NetTestbed(topo, fabric, ocs, DelayModel.instant(), target=target, idle_poll=bool(args.idle_poll)).start()
    if args.switch_sched == "nice":  # as before SCHED_FIFO (emulation/priority.py): the normal scheduler
        for p in tb.procs:
            for tid in os.listdir(f"/proc/{p.pid}/task"):
                os.sched_setscheduler(int(tid), os.SCHED_OTHER, os.sched_param(0))
                os.setpriority(os.PRIO_PROCESS, int(tid), SWITCH_NICE)
    boost = SoftirqBoost(STATE_DIR) if args.softirq_boost else None
    if boost is not None:  # as an emulation's run does (emulation/priority.py)
        boost.acquire()
    busy = hogs(args.hogs)
    net = Network(topo, fabric, timeout=10)
    rows: list[Row] = []
    try:
        if args.link_mbit > 0:
            for ifname in tb.port_if.values():
                shape(ifname, args.link_mbit)
        net.install(generate_states(topo, "ecmp"))
        calls = kinds(net, tb)
        local = controller_work(net, tb)
        chosen = list(calls) + list(local) if args.kinds == "all" else args.kinds.split(",")
        unknown = sorted(set(chosen) - set(calls) - set(local))
        if unknown:
            raise SystemExit(f"--kinds: {unknown} unknown; expected some of {sorted([*calls, *local])}")
        h = topo.host_map()
        frame = FrameSpec(h["h2"].mac, topo.switch_map()["s2"].ports[1], h["h2"].address, h["h3"].address, args.size)
        interval = args.size * 8 / (args.rate_mbit * 1e6)
        for kind in chosen * args.repeat:
            if kind in local:
                work: Callable[[], object] | None = local[kind]
            else:
                call = calls[kind]
                work = None if call is None else (lambda c=call: net.each(c, PATH_SWITCHES))
            rows.append(window(kind, work, net, tb, frame, interval, args.seconds, args.period / 1000))
            if isinstance(calls.get(kind) or local.get(kind), Toggle | LinkFlap):
                (calls.get(kind) or local[kind]).undo(net)
            r = rows[-1]
            print(f"{r.kind:18} calls {r.calls:4}  call ms med {r.call_ms_median:7.1f} max {r.call_ms_max:7.1f}  "
                  f"gap ms rx {r.rx_gap_ms:6.1f} tx {r.tx_gap_ms:5.1f}  delay ms max {r.delay_ms:6.1f}  lost {r.lost:4} of {r.sent}  "
                  f"queue drops {r.queue_drops:4}  cpu s switches {r.switch_cpu_s:4.2f} controller "
                  f"{r.controller_cpu_s:4.2f} softirq {r.softirq_s:4.2f}", flush=True)
    finally:
        for p in busy:
            p.kill()
            p.wait()
        net.close()
        tb.close()
        if boost is not None:
            boost.release()
    print(f"switches {args.switch_sched}, softirq boost {args.softirq_boost}, idle poll {args.idle_poll}, target {target.name}, stream {args.rate_mbit} Mbit/s of {args.size} B, links {args.link_mbit} Mbit/s, "
          f"one call per path switch every {args.period:g} ms for {args.seconds:g} s, {args.hogs} busy processes")
    if args.json:
        Path(args.json).write_text(json.dumps({"target": target.name, "args": vars(args), "loadavg": os.getloadavg(),
                                               "rows": [asdict(r) for r in rows]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
