"""Helper layer for fabric.p4 tests: its tables by the names of p4src/README.md, and the path tag.

Each test starts from a provisioned switch, as tablegen would leave it: every PTF port has a
source MAC (`port_mac`) and a liveness group watching it (`port_liveness`). Everything else is
added by the test through the helpers below and removed again by the base class.
"""

from __future__ import annotations

from typing import Any

from p4rt_base import P4RuntimeTest
from ptf import testutils
from scapy.fields import BitField, ByteField, XShortEnumField
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, bind_layers

from fabric.contract import ETHERTYPE_PATH_TAG, ETHERTYPE_PROBE  # noqa: F401 - the tests use both
from p4rt.entities import ActionProfileGroup, ActionProfileMember, GroupMember, TableEntry
from tablegen.entries import port_watch

HOST_MAC = "00:00:0a:00:01:01"     # the sending host behind port 1
NEXT_HOP_MAC = "00:00:00:00:0b:{:02x}"  # the neighbour behind port N


class PathTag(Packet):
    """The MBB path tag of fabric.p4 (ether type 0x88B5)."""

    name = "PathTag"
    fields_desc = [
        BitField("version", 0, 1),
        BitField("reserved", 0, 7),
        ByteField("hops", 0),
        XShortEnumField("type", 0x0800, {0x0800: "IPv4"}),
    ]


bind_layers(Ether, PathTag, type=ETHERTYPE_PATH_TAG)
bind_layers(PathTag, IP, type=0x0800)


def port_mac(port: int) -> str:
    """The source MAC the tests give switch port `port`."""
    return f"00:aa:00:00:00:{port:02x}"


def next_hop_mac(port: int) -> str:
    """The MAC of the neighbour the tests put behind port `port`."""
    return NEXT_HOP_MAC.format(port)


def tcp_packet(ip_src: str = "10.0.1.1", ip_dst: str = "10.0.2.2", sport: int = 1234, dport: int = 80,
               ttl: int = 64, ip_id: int = 1, eth_dst: str = "00:aa:00:00:00:01",
               eth_src: str = HOST_MAC, **kw: Any) -> Ether:
    """A TCP packet from the host behind port 1 to the switch (its gateway)."""
    return testutils.simple_tcp_packet(eth_dst=eth_dst, eth_src=eth_src, ip_src=ip_src, ip_dst=ip_dst,
                                       tcp_sport=sport, tcp_dport=dport, ip_ttl=ttl, ip_id=ip_id, **kw)


def routed(pkt: Ether, port: int, dmac: str, version: int | None, hops: int = 1) -> Ether:
    """The packet `pkt` as the switch sends it on `port` to `dmac`: TTL-1, new MACs, tag or not.

    `version` None means untagged (delivered to a host). Scapy recomputes the IPv4 checksum, so the
    expected packet checks the switch's checksum update byte for byte.
    """
    ip = pkt[IP].copy()
    ip.ttl -= 1
    del ip.chksum
    if version is None:
        return Ether(dst=dmac, src=port_mac(port), type=0x0800) / ip
    return (Ether(dst=dmac, src=port_mac(port), type=ETHERTYPE_PATH_TAG)
            / PathTag(version=version, hops=hops, type=0x0800) / ip)


def tagged(pkt: Ether, version: int, hops: int = 1) -> Ether:
    """`pkt` as an upstream fabric switch would send it: with a path tag inserted."""
    ip = pkt[IP].copy()
    return (Ether(dst=pkt[Ether].dst, src=pkt[Ether].src, type=ETHERTYPE_PATH_TAG)
            / PathTag(version=version, hops=hops, type=0x0800) / ip)


class FabricTest(P4RuntimeTest):
    """P4RuntimeTest with fabric.p4's tables: routes, paths, groups, versions, ACL."""

    def setUp(self) -> None:
        super().setUp()
        self._ids = iter(range(1, 1 << 30))
        self._versions: set[int] = set()
        self.provision_ports(self.ports)

    def new_id(self) -> int:
        """A fresh member/group id (unique within the test)."""
        return next(self._ids)

    def provision_ports(self, ports: list[int]) -> None:
        """Give each port its source MAC and a liveness group (p4src/README.md, port_liveness), and
        every action profile its port-watch group, as tablegen does.

        The `port_down` sentinel is the first member of liveness_selector, `port_up` the second;
        each port's group holds both, with `port_up` watching the port.
        """
        down, up = self.new_id(), self.new_id()
        self.insert(ActionProfileMember("liveness_selector", down, "port_down"))
        self.insert(ActionProfileMember("liveness_selector", up, "port_up"))
        groups, entries = [], []
        self.liveness_groups: dict[int, int] = {}  # port -> its port_liveness group
        for port in ports:
            gid = self.liveness_groups[port] = self.new_id()
            groups.append(ActionProfileGroup("liveness_selector", gid,
                                             [GroupMember(down, 1, None), GroupMember(up, 1, port)]))
            entries.append(TableEntry("port_liveness", {"port": port}, group_id=gid))
            entries.append(TableEntry("port_mac", {"egress_port": port}, "set_smac", {"smac": port_mac(port)}))
        self.insert(*groups)
        self.insert(*entries)
        members, watch_groups = port_watch(ports)
        self.insert(*members)
        self.insert(*watch_groups)

    def expect_routed(self, pkt: Ether, port: int, version: int) -> None:
        """Send `pkt` from the host (port 1); it must leave `port` only, routed to the neighbour there on
        path version `version`."""
        self.send_expect(1, pkt, routed(pkt, port, next_hop_mac(port), version), port)

    # -- routing --------------------------------------------------------------------------------

    def add_route(self, prefix: str, path_id: int) -> TableEntry:
        """Route a prefix to a path."""
        entry = TableEntry("route", {"ipv4_dst": prefix}, "set_path", {"path_id": path_id})
        self.insert(entry)
        return entry

    def add_host(self, prefix: str, port: int, dmac: str) -> TableEntry:
        """Deliver a prefix (usually a /32) to a directly attached host."""
        entry = TableEntry("route", {"ipv4_dst": prefix}, "to_host", {"port": port, "dmac": dmac})
        self.insert(entry)
        return entry

    # -- paths ----------------------------------------------------------------------------------

    def add_static_path(self, path_id: int, version: int, port: int, dmac: str | None = None) -> TableEntry:
        """One version of a path: a single port."""
        entry = TableEntry("path", {"path_id": path_id, "version": version}, "path_static",
                           {"port": port, "dmac": dmac or next_hop_mac(port)})
        self.insert(entry)
        return entry

    def add_group_path(self, path_id: int, version: int, mode: str, ports: list[int],
                       watch: bool = False) -> TableEntry:
        """One version of a path: a multipath group over `ports` (mode ecmp, spray_random, spray_rr).

        Members carry no watch port unless `watch`: port_liveness checks the chosen member's port,
        and on bmv2 a group whose watched members are all down crashes the switch (README).
        """
        actions = {"ecmp": "path_ecmp", "spray_random": "path_spray_random", "spray_rr": "path_spray_rr"}
        if mode not in actions:
            raise ValueError(f"multipath mode {mode!r}: expected one of {sorted(actions)}")
        kind = "ecmp" if mode == "ecmp" else "spray"
        profile, table = f"{kind}_selector", f"{kind}_group"
        members = [ActionProfileMember(profile, self.new_id(), "set_next_hop",
                                       {"port": p, "dmac": next_hop_mac(p)}) for p in ports]
        group = ActionProfileGroup(profile, self.new_id(),
                                   [GroupMember(m.member_id, 1, p if watch else None)
                                    for m, p in zip(members, ports, strict=True)])
        self.insert(*members)
        self.insert(group)
        self.insert(TableEntry(table, {"path_id": path_id, "version": version}, group_id=group.group_id))
        entry = TableEntry("path", {"path_id": path_id, "version": version}, actions[mode], {})
        self.insert(entry)
        return entry

    def set_version(self, path_id: int, version: int, gradual: bool = False) -> None:
        """Make `version` the active version of a path at this (ingress) switch: one write.

        `gradual`: `set_version_gradual`, each flow moves at its next flowlet boundary.
        """
        action = "set_version_gradual" if gradual else "set_version"
        entry = TableEntry("path_version", {"path_id": path_id}, action, {"version": version})
        if path_id in self._versions:
            self.modify(entry)
        else:
            self.insert(entry)
            self._versions.add(path_id)

    def flip_version(self, path_id: int, to: int, gradual: bool = False) -> None:
        """The MBB flip: the shadow version becomes active with one MODIFY."""
        self.set_version(path_id, to, gradual)

    def set_flowlet(self, gap_us: int, max_hold_us: int, byte_ns: int = 0, pause: int = 0) -> None:
        """Modify flowlet_config's default (restored in tearDown): flowlet gap, longest hold, line rate,
        pausing a pending TCP flow."""
        self.set_default("flowlet_config", "set_flowlet",
                         {"gap_us": gap_us, "max_hold_us": max_hold_us, "byte_ns": byte_ns, "pause": pause})

    def set_hash_salt(self, salt: int) -> None:
        """Modify hash_config's default (restored in tearDown): this switch's ECMP hash salt."""
        self.set_default("hash_config", "set_hash_salt", {"salt": salt})

    # -- ACL ------------------------------------------------------------------------------------

    def add_acl(self, priority: int, action: str, params: dict[str, Any] | None = None,
                ipv4_src: tuple[str, str] | None = None, ipv4_dst: tuple[str, str] | None = None,
                ingress_port: int | None = None) -> TableEntry:
        """One priority-table entry; ternary fields as (value, mask), absent fields are wildcards."""
        match: dict[str, Any] = {}
        if ipv4_src is not None:
            match["ipv4_src"] = {"value": ipv4_src[0], "mask": ipv4_src[1]}
        if ipv4_dst is not None:
            match["ipv4_dst"] = {"value": ipv4_dst[0], "mask": ipv4_dst[1]}
        if ingress_port is not None:
            match["ingress_port"] = ingress_port
        entry = TableEntry("acl", match, action, dict(params or {}), priority=priority)
        self.insert(entry)
        return entry


def probe_frame(tag: int) -> bytes:
    """A probe frame as the controller sends it (its payload is opaque to the switch)."""
    pkt = testutils.simple_eth_packet(pktlen=64, eth_dst="ff:ff:ff:ff:ff:ff", eth_src="00:aa:00:00:00:fe",
                            eth_type=ETHERTYPE_PROBE)
    raw = bytearray(bytes(pkt))
    raw[14:18] = tag.to_bytes(4, "big")
    return bytes(raw)
