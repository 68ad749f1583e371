"""Topology model: switches, hosts, links and optical circuit switches, and their JSON codec.

The JSON format is documented in topo/FORMAT.md. Mininet, tablegen and the controller all read it.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
CPU_PORT = 255
# The hold loop of a fabric switch (p4src/include/v1model/glue.p4): out of one, back in on the other.
HOLD_OUT_PORT = 253
HOLD_IN_PORT = 254
MAX_SWITCH_PORT = HOLD_OUT_PORT - 1  # a topology's switch ports: 1..252
HOST_PORT = 0  # a host's single interface (eth0) in `links`
DEFAULT_GRPC_BASE = 50000  # device N listens on DEFAULT_GRPC_BASE + N, so the first is 50001

SWITCH_ROLES = ("edge", "aggregation", "core", "leaf", "spine", "tor")
TOR_ROLES = ("edge", "leaf", "tor")


@dataclass(slots=True)
class Switch:
    """An electrical P4 switch running the fabric program; ports maps port number -> MAC."""

    name: str
    role: str
    device_id: int
    grpc_port: int
    ports: dict[int, str] = field(default_factory=dict)


@dataclass(slots=True)
class Host:
    """A host with one interface; ip carries its prefix length ("10.0.0.2/24")."""

    name: str
    mac: str
    ip: str
    gateway: str

    @property
    def address(self) -> str:
        """The IPv4 address without its prefix length."""
        return self.ip.split("/", 1)[0]

    @property
    def network(self) -> ipaddress.IPv4Network:
        """The host's subnet."""
        return ipaddress.IPv4Interface(self.ip).network


@dataclass(slots=True)
class Link:
    """An electrical link between two node ports (a host's port is 0)."""

    a: str
    a_port: int
    b: str
    b_port: int
    rate_mbit: float = 1000.0
    delay: str = "0.1ms"


@dataclass(slots=True)
class OcsPort:
    """One fibre: switch port `switch_port` of `switch` attaches to OCS port `port`."""

    port: int
    switch: str
    switch_port: int


@dataclass(slots=True)
class Ocs:
    """An optical circuit switch (the `ocs` P4 program in emulation) and its named circuit maps.

    A circuit map is a list of OCS port pairs; a circuit a<->b carries light both ways. Static circuits
    are never reconfigured, so MBB's electrical shadow paths may use them (ucd4's s1-s4).
    """

    name: str
    device_id: int
    grpc_port: int
    ports: list[OcsPort] = field(default_factory=list)
    rate_mbit: float = 1000.0
    delay: str = "0.1ms"
    circuit_maps: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    default_map: str | None = None
    static_circuits: list[tuple[int, int]] = field(default_factory=list)


@dataclass(slots=True)
class Topology:
    """A whole network: what Mininet builds, tablegen routes and the controller provisions."""

    name: str
    kind: str
    switches: list[Switch] = field(default_factory=list)
    hosts: list[Host] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    ocs: list[Ocs] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)

    def switch_map(self) -> dict[str, Switch]:
        """Switches by name."""
        return {s.name: s for s in self.switches}

    def host_map(self) -> dict[str, Host]:
        """Hosts by name."""
        return {h.name: h for h in self.hosts}

    def ocs_map(self) -> dict[str, Ocs]:
        """Optical circuit switches by name."""
        return {o.name: o for o in self.ocs}

    def attachments(self) -> dict[str, tuple[str, int, str]]:
        """Host -> (switch, switch port, that port's MAC): the gateway MAC for the host's static ARP."""
        smap = self.switch_map()
        hosts = self.host_map()
        out: dict[str, tuple[str, int, str]] = {}
        for lk in self.links:
            for h, sw, port in ((lk.a, lk.b, lk.b_port), (lk.b, lk.a, lk.a_port)):
                if h in hosts and sw in smap:
                    out[h] = (sw, port, smap[sw].ports[port])
        return out


def switch_mac(device_id: int, port: int) -> str:
    """The MAC of a switch port: locally administered, 02:00:<device id 16 bits>:<port 16 bits>."""
    if not 0 < device_id < 1 << 16:
        raise ValueError(f"device_id={device_id}: expected 1..65535")
    return f"02:00:{device_id >> 8:02x}:{device_id & 0xFF:02x}:{port >> 8:02x}:{port & 0xFF:02x}"


def host_mac(ip: str) -> str:
    """The MAC of a host: 00:00 followed by its four IPv4 bytes (10.0.0.2 -> 00:00:0a:00:00:02)."""
    packed = ipaddress.IPv4Address(ip.split("/", 1)[0]).packed
    return "00:00:" + ":".join(f"{b:02x}" for b in packed)


def new_switch(name: str, role: str, device_id: int, nports: int, grpc_base: int = DEFAULT_GRPC_BASE) -> Switch:
    """A switch with ports 1..nports and their MACs."""
    return Switch(name, role, device_id, grpc_base + device_id,
                  {p: switch_mac(device_id, p) for p in range(1, nports + 1)})


def circuit_list(pairs: Any, where: str) -> list[tuple[int, int]]:
    """Parse a JSON circuit map (a list of [a, b] OCS port pairs)."""
    if not isinstance(pairs, list):
        raise ValueError(f"{where}={pairs!r}: expected a list of [a, b] OCS port pairs")
    out: list[tuple[int, int]] = []
    for pair in pairs:
        if not (isinstance(pair, list | tuple) and len(pair) == 2 and all(isinstance(p, int) for p in pair)):
            raise ValueError(f"{where} circuit {pair!r}: expected [a, b] with two integer OCS ports")
        out.append((pair[0], pair[1]))
    return out


# ---- JSON codec -------------------------------------------------------------------------------------

try:  # the C encoder of the json module, called directly: half the cost of json.dumps per entity
    from json.encoder import JSONEncoder, c_make_encoder, encode_basestring_ascii

    # allow_nan False: never write the non-standard NaN/Infinity (validation rejects such rates first)
    _C_ENCODER = c_make_encoder(None, JSONEncoder().default, encode_basestring_ascii, None, ": ", ", ",
                                False, False, False) if c_make_encoder else None
except ImportError:  # pragma: no cover - CPython always has it
    _C_ENCODER = None


def encode(obj: Any) -> str:
    """One JSON value on one line, exactly as json.dumps(obj) writes it."""
    return "".join(_C_ENCODER(obj, 0)) if _C_ENCODER is not None else json.dumps(obj, allow_nan=False)



def to_dict(topo: Topology) -> dict[str, Any]:
    """The JSON-ready form of a topology (topo/FORMAT.md)."""
    return {
        "format": FORMAT_VERSION,
        "name": topo.name,
        "kind": topo.kind,
        "params": topo.params,
        "switches": [
            {"name": s.name, "role": s.role, "device_id": s.device_id, "grpc_port": s.grpc_port,
             "ports": [{"port": p, "mac": m} for p, m in sorted(s.ports.items())]}
            for s in topo.switches
        ],
        "hosts": [{"name": h.name, "mac": h.mac, "ip": h.ip, "gateway": h.gateway} for h in topo.hosts],
        "links": [
            {"a": lk.a, "a_port": lk.a_port, "b": lk.b, "b_port": lk.b_port,
             "rate_mbit": lk.rate_mbit, "delay": lk.delay}
            for lk in topo.links
        ],
        "ocs": [
            {"name": o.name, "device_id": o.device_id, "grpc_port": o.grpc_port,
             "rate_mbit": o.rate_mbit, "delay": o.delay,
             "ports": [{"port": p.port, "switch": p.switch, "switch_port": p.switch_port} for p in o.ports],
             "circuit_maps": {k: [list(c) for c in v] for k, v in o.circuit_maps.items()},
             "default_map": o.default_map,
             "static_circuits": [list(c) for c in o.static_circuits]}
            for o in topo.ocs
        ],
    }


def _req(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict):
        raise ValueError(f"{where}={obj!r}: expected a JSON object")
    if key not in obj:
        raise ValueError(f"{where}: missing field {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{where}.{key}={value!r}: expected {getattr(kind, '__name__', kind)}")
    return value


def _opt(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any, where: str) -> Any:
    """An optional field: its value when present (of `kind`, never a bool for a number), else default."""
    if key not in obj or obj[key] is None and default is None:
        return default
    value = obj[key]
    number = kind in (int, float, (int, float))
    if not isinstance(value, kind) or (number and isinstance(value, bool)):
        what = "a number" if number else getattr(kind, "__name__", str(kind))
        raise ValueError(f"{where}.{key}={value!r}: expected {what}")
    return float(value) if kind == (int, float) else value


def from_dict(data: dict[str, Any]) -> Topology:
    """Build a topology from its JSON form; raises ValueError naming the first bad field."""
    if not isinstance(data, dict):
        raise ValueError(f"topology={type(data).__name__}: expected a JSON object")
    fmt = data.get("format", FORMAT_VERSION)
    if isinstance(fmt, bool) or fmt != FORMAT_VERSION:
        raise ValueError(f"topology.format={fmt!r}: expected {FORMAT_VERSION} (the only format there is)")
    for key in ("switches", "hosts", "links"):
        _req(data, key, list, "topology")
    num = (int, float)
    topo = Topology(name=_opt(data, "name", str, "topology", "topology"), kind=_opt(data, "kind", str, "custom", "topology"),
                    params=dict(_opt(data, "params", dict, None, "topology") or {}))
    for i, s in enumerate(data["switches"]):
        w = f"switches[{i}]"
        ports: dict[int, str] = {}
        for j, p in enumerate(_req(s, "ports", list, w)):
            ports[_req(p, "port", int, f"{w}.ports[{j}]")] = _req(p, "mac", str, f"{w}.ports[{j}]")
        topo.switches.append(Switch(_req(s, "name", str, w), _req(s, "role", str, w),
                                    _req(s, "device_id", int, w), _req(s, "grpc_port", int, w), ports))
    for i, h in enumerate(data["hosts"]):
        w = f"hosts[{i}]"
        topo.hosts.append(Host(_req(h, "name", str, w), _req(h, "mac", str, w), _req(h, "ip", str, w),
                               _req(h, "gateway", str, w)))
    for i, lk in enumerate(data["links"]):
        w = f"links[{i}]"
        topo.links.append(Link(_req(lk, "a", str, w), _req(lk, "a_port", int, w), _req(lk, "b", str, w),
                               _req(lk, "b_port", int, w), _opt(lk, "rate_mbit", num, 1000.0, w),
                               _opt(lk, "delay", str, "0.1ms", w)))
    for i, o in enumerate(data.get("ocs") or []):
        w = f"ocs[{i}]"
        ports_ = [OcsPort(_req(p, "port", int, f"{w}.ports[{j}]"), _req(p, "switch", str, f"{w}.ports[{j}]"),
                          _req(p, "switch_port", int, f"{w}.ports[{j}]"))
                  for j, p in enumerate(_req(o, "ports", list, w))]
        maps = {str(k): circuit_list(v, f"{w}.circuit_maps.{k}")
                for k, v in (_opt(o, "circuit_maps", dict, None, w) or {}).items()}
        topo.ocs.append(Ocs(_req(o, "name", str, w), _req(o, "device_id", int, w), _req(o, "grpc_port", int, w),
                            ports_, _opt(o, "rate_mbit", num, 1000.0, w), _opt(o, "delay", str, "0.1ms", w), maps,
                            _opt(o, "default_map", str, None, w),
                            circuit_list(_opt(o, "static_circuits", list, None, w) or [], f"{w}.static_circuits")))
    return topo


def dumps(topo: Topology) -> str:
    """The topology as JSON text (one link, port or host per line, so diffs stay readable)."""
    d = to_dict(topo)
    lines = ["{"]
    head = [f'  "format": {d["format"]}', f'  "name": {json.dumps(d["name"])}',
            f'  "kind": {json.dumps(d["kind"])}', f'  "params": {json.dumps(d["params"], sort_keys=True, allow_nan=False)}']
    lines.append(",\n".join(head) + ",")

    def block(key: str, items: list[Any], last: bool = False) -> None:
        end = "" if last else ","
        if not items:
            lines.append(f'  "{key}": []{end}')
            return
        body = ",\n".join("    " + encode(x) for x in items)
        lines.append(f'  "{key}": [\n{body}\n  ]{end}')

    block("switches", d["switches"])
    block("hosts", d["hosts"])
    block("links", d["links"])
    block("ocs", d["ocs"], last=True)
    lines.append("}")
    return "\n".join(lines) + "\n"


def save(topo: Topology, path: str | Path) -> None:
    """Write a topology JSON file."""
    Path(path).write_text(dumps(topo))
    log.info("wrote %s: %d switches, %d hosts, %d links, %d OCS", path, len(topo.switches),
             len(topo.hosts), len(topo.links), len(topo.ocs))


class _NonStandard(Exception):
    """NaN or Infinity in a JSON text (Python's json module reads them unless told not to)."""


def _no_constant(name: str) -> Any:
    raise _NonStandard(name)


def load(path: str | Path) -> Topology:
    """Read a topology JSON file (not validated; call topo.validate.validate)."""
    try:
        data = json.loads(Path(path).read_text(), parse_constant=_no_constant)
    except OSError as exc:
        raise ValueError(f"topology file {str(path)!r}: {exc.strerror}") from None
    except _NonStandard as exc:
        raise ValueError(f"topology file {str(path)!r}: {exc.args[0]} is not JSON; expected a finite number") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"topology file {str(path)!r}: not JSON ({exc.msg} at line {exc.lineno})") from None
    return from_dict(data)
