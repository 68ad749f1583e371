"""Topology validation: every error is one ValueError line naming the bad value."""

from __future__ import annotations

import ipaddress
import re

from topo.model import (
    CPU_PORT,
    HOLD_IN_PORT,
    HOLD_OUT_PORT,
    HOST_PORT,
    MAX_SWITCH_PORT,
    SWITCH_ROLES,
    Topology,
)

_MAC = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
DELAY = re.compile(r"\d+(\.\d+)?(us|ms|s)")  # a link delay as tc reads it (fullmatch: no newline after)
IFNAMSIZ = 15  # Linux interface names: 15 characters at most; Mininet names them <node>-eth<port>
MAX_DEVICE_ID = 2**64 - 1  # P4Runtime's device_id is a uint64
# Mininet's TCLink shapes with `tc ... htb rate %fMbit`: below 1 kbit/s tc refuses the rate (the link
# stays unshaped) and above TCIntf.bwParamMax (1000) Mininet ignores it with a log line.
MIN_RATE_MBIT = 0.001
MAX_RATE_MBIT = 1000.0
# Host addresses: not "this network" 0/8, loopback 127/8, multicast 224/4 or reserved 240/4 (which
# holds the limited broadcast 255.255.255.255).
_NOT_UNICAST = [(0, 8, "this-network 0.0.0.0/8"), (127, 8, "loopback 127.0.0.0/8"),
                (224, 4, "multicast 224.0.0.0/4"), (240, 4, "reserved 240.0.0.0/4")]


def validate(topo: Topology) -> Topology:
    """Check names, ids, ports, addresses, links and OCS wiring; return topo or raise ValueError."""
    names: set[str] = set()
    # the longest interface suffix of each node: -eth0 on a host, -eth<last port> on a switch (its hold
    # loop's are shorter: -ho, -hi, emulation/holdloop.py), and on an OCS one more character for its
    # fibres' patch ends (emulation/fibre.py)
    suffixes = [("switch", s.name, len(f"-eth{max(s.ports, default=1)}")) for s in topo.switches]
    suffixes += [("host", h.name, len(f"-eth{HOST_PORT}")) for h in topo.hosts]
    suffixes += [("OCS", o.name, len(f"-eth{max((p.port for p in o.ports), default=1)}") + 1) for o in topo.ocs]
    for kind, n, suffix in suffixes:
        if not isinstance(n, str) or not re.match(r"^[A-Za-z][A-Za-z0-9_]*$", n):
            raise ValueError(f"{kind} name {n!r}: expected a letter then letters, digits or '_'")
        if len(n) + suffix > IFNAMSIZ:
            raise ValueError(f"{kind} name {n!r}: {len(n)} characters; expected at most {IFNAMSIZ - suffix} (its "
                             f"interfaces' names, name + {suffix} characters, must fit Linux's {IFNAMSIZ})")
        if n in names:
            raise ValueError(f"{kind} name {n!r}: used twice")
        names.add(n)
    devices: dict[int, str] = {}
    grpc: dict[int, str] = {}
    macs: dict[str, str] = {}
    for node in [*topo.switches, *topo.ocs]:
        if isinstance(node.device_id, bool) or not isinstance(node.device_id, int) \
                or not 1 <= node.device_id <= MAX_DEVICE_ID:
            raise ValueError(f"{node.name}: device_id={node.device_id!r}: expected an integer 1..2^64-1 "
                             "(P4Runtime's uint64)")
        if node.device_id in devices:
            raise ValueError(f"device_id {node.device_id}: used by {devices[node.device_id]} and {node.name}")
        devices[node.device_id] = node.name
        if isinstance(node.grpc_port, bool) or not isinstance(node.grpc_port, int) or not 0 < node.grpc_port < 65536:
            raise ValueError(f"{node.name}: grpc_port={node.grpc_port!r}: expected 1..65535")
        if node.grpc_port in grpc:
            raise ValueError(f"grpc_port {node.grpc_port}: used by {grpc[node.grpc_port]} and {node.name}")
        grpc[node.grpc_port] = node.name
    for s in topo.switches:
        if s.role not in SWITCH_ROLES:
            raise ValueError(f"{s.name}: role={s.role!r}: expected one of {', '.join(SWITCH_ROLES)}")
        for port, mac in s.ports.items():
            if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= MAX_SWITCH_PORT:
                raise ValueError(f"{s.name}: port {port}: expected 1..{MAX_SWITCH_PORT} ({HOLD_OUT_PORT} and "
                                 f"{HOLD_IN_PORT} are the hold loop, {CPU_PORT} the CPU port)")
            _mac(mac, f"{s.name} port {port}", macs)
    ips: dict[str, str] = {}
    for h in topo.hosts:
        _mac(h.mac, h.name, macs)
        addr_s, _, plen_s = h.ip.partition("/")
        ip, gw = _ipv4(addr_s), _ipv4(h.gateway)
        if ip is None or gw is None or not plen_s.isdigit() or not 0 < int(plen_s) < 32:
            raise ValueError(f"{h.name}: ip={h.ip!r} gateway={h.gateway!r}: expected a.b.c.d/len (len 1..31) "
                             "and a.b.c.d")
        shift = 32 - int(plen_s)
        net = ipaddress.IPv4Network((ip >> shift << shift, int(plen_s)))
        _host_address(h.name, "ip", h.ip, ip, shift)
        _host_address(h.name, "gateway", h.gateway, gw, shift)
        if gw >> shift != ip >> shift or gw == ip:
            raise ValueError(f"{h.name}: gateway={h.gateway}: expected another address in {net}")
        addr = addr_s
        if addr in ips:
            raise ValueError(f"IPv4 address {addr}: used by {ips[addr]} and {h.name}")
        ips[addr] = h.name
    _links(topo)
    queue = topo.params.get("switch_queue_pkts")
    if queue is not None and (isinstance(queue, bool) or not isinstance(queue, int) or queue < 1):
        raise ValueError(f"params.switch_queue_pkts={queue!r}: expected an integer >= 1 (frames per switch port)")
    return topo


def _ipv4(text: str) -> int | None:
    """A dotted-quad IPv4 address as an integer, or None (faster than ipaddress for 10^5 hosts)."""
    parts = text.split(".")
    if len(parts) != 4:
        return None
    value = 0
    for part in parts:
        if not part.isdigit() or len(part) > 3 or (len(part) > 1 and part[0] == "0") or int(part) > 255:
            return None
        value = value << 8 | int(part)
    return value


def _host_address(host: str, field: str, text: str, value: int, shift: int) -> None:
    """A host's own or gateway address: unicast, and neither its subnet's network nor broadcast address."""
    for first, bits, what in _NOT_UNICAST:
        if value >> (32 - bits) == first >> (8 - bits):
            raise ValueError(f"{host}: {field}={text}: {what}; expected a unicast address (not 0/8, 127/8, "
                             "224/4 or 240/4)")
    host_bits = value & ((1 << shift) - 1)
    if shift >= 2 and host_bits in (0, (1 << shift) - 1):
        raise ValueError(f"{host}: {field}={text}: its subnet's {'network' if host_bits == 0 else 'broadcast'} "
                         "address; expected a host address of the subnet")


def _mac(mac: str, where: str, seen: dict[str, str]) -> None:
    if not isinstance(mac, str) or not _MAC.match(mac):
        raise ValueError(f"{where}: mac={mac!r}: expected six lower-case hex bytes aa:bb:cc:dd:ee:ff")
    if int(mac[:2], 16) & 1 or mac == "00:00:00:00:00:00":
        raise ValueError(f"{where}: mac={mac}: {'all zero' if int(mac[:2], 16) & 1 == 0 else 'broadcast/multicast'}; "
                         "expected a unicast MAC (first byte even, not all zero)")
    if mac in seen:
        raise ValueError(f"MAC {mac}: used by {seen[mac]} and {where}")
    seen[mac] = where


def _links(topo: Topology) -> None:
    smap = topo.switch_map()
    hosts = topo.host_map()
    used: dict[tuple[str, int], str] = {}
    host_links: dict[str, int] = {}

    def use(node: str, port: int, what: str) -> None:
        if node in smap:
            if port not in smap[node].ports:
                raise ValueError(f"{what}: port {node}:{port}: {node} has ports {min(smap[node].ports)}.."
                                 f"{max(smap[node].ports)}")
        elif node in hosts:
            if port != HOST_PORT:
                raise ValueError(f"{what}: port {node}:{port}: a host has only port {HOST_PORT}")
            host_links[node] = host_links.get(node, 0) + 1
        else:
            raise ValueError(f"{what}: unknown node {node!r}")
        if (node, port) in used:
            raise ValueError(f"port {node}:{port}: used twice ({used[(node, port)]} and {what})")
        used[(node, port)] = what

    for lk in topo.links:
        what = f"link {lk.a}:{lk.a_port}-{lk.b}:{lk.b_port}"
        if lk.a == lk.b:
            raise ValueError(f"{what}: links {lk.a} to itself")
        if lk.a in hosts and lk.b in hosts:
            raise ValueError(f"{what}: joins two hosts; expected a switch on at least one side")
        use(lk.a, lk.a_port, what)
        use(lk.b, lk.b_port, what)
        _rate(what, lk.rate_mbit)
        if not isinstance(lk.delay, str) or not DELAY.fullmatch(lk.delay):
            raise ValueError(f"{what}: delay={lk.delay!r}: expected a number with us, ms or s (e.g. '0.1ms')")
    for h in topo.hosts:
        if host_links.get(h.name, 0) != 1:
            raise ValueError(f"host {h.name}: has {host_links.get(h.name, 0)} links; expected exactly 1")
    for o in topo.ocs:
        oports: set[int] = set()
        for p in o.ports:
            if p.port in oports:
                raise ValueError(f"OCS {o.name} port {p.port}: wired twice")
            if not 1 <= p.port < CPU_PORT:
                raise ValueError(f"OCS {o.name} port {p.port}: expected 1..{CPU_PORT - 1} (the ports of the `ocs` "
                                 f"switch; {CPU_PORT} is its CPU port)")
            oports.add(p.port)
            if p.switch not in smap:
                raise ValueError(f"OCS {o.name} port {p.port}: unknown switch {p.switch!r}")
            use(p.switch, p.switch_port, f"OCS {o.name} port {p.port}")
        _rate(f"OCS {o.name}", o.rate_mbit)
        if not isinstance(o.delay, str) or not DELAY.fullmatch(o.delay):
            raise ValueError(f"OCS {o.name}: delay={o.delay!r}: expected a number with us, ms or s (e.g. '0.1ms')")
        for map_name, circuits in {**o.circuit_maps, "static_circuits": o.static_circuits}.items():
            check_circuits(o.name, oports, circuits, map_name)
        if o.default_map is not None and o.default_map not in o.circuit_maps:
            raise ValueError(f"OCS {o.name}: default_map={o.default_map!r}: expected one of "
                             f"{sorted(o.circuit_maps)}")


def _rate(what: str, rate: object) -> None:
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not MIN_RATE_MBIT <= rate <= MAX_RATE_MBIT:
        raise ValueError(f"{what}: rate_mbit={rate!r}: expected {MIN_RATE_MBIT}..{MAX_RATE_MBIT:.0f} Mbit/s "
                         "(what Mininet's TCLink shapes)")


def check_circuits(ocs: str, ports: set[int], circuits: list[tuple[int, int]], map_name: str) -> None:
    """Check a circuit map: known OCS ports, each used at most once, no port connected to itself."""
    seen: set[int] = set()
    for a, b in circuits:
        for p in (a, b):
            if p not in ports:
                raise ValueError(f"OCS {ocs} map {map_name!r}: circuit {a}-{b}: port {p} is not wired")
            if p in seen:
                raise ValueError(f"OCS {ocs} map {map_name!r}: circuit {a}-{b}: port {p} is in two circuits")
            seen.add(p)
        if a == b:
            raise ValueError(f"OCS {ocs} map {map_name!r}: circuit {a}-{b}: a port cannot connect to itself")
