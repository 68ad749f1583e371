"""Link and host settings of the emulation: netem probe, tc noise filter, carrier, RPS, host commands."""

from __future__ import annotations

import array
import fcntl
import json
import logging
import os
import re
import socket
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topo.model import Host

log = logging.getLogger(__name__)

HOST_MTU = 1500
VXLAN_PORT = 4789  # a link between two servers (emulation/cluster.py): VXLAN's IANA port
_NETEM: bool | None = None  # netem_available()'s answer, probed once


# libpcap (so bmv2) sizes the slots of its receive ring by the snapshot length, 64 KiB, while the
# interface has any segmentation or receive offload on, and by the MTU otherwise: 32 slots of its 2 MiB
# ring or about 250. With offloads on, a burst of more than 32 frames into a bmv2 port loses the rest
# before ingress (p4sim/switch/README.md, "Receive buffering"). Switch ports therefore have them off.
SWITCH_PORT_OFFLOADS_OFF = ("tso", "off", "gso", "off", "gro", "off")  # LRO and UFO: always off on a veth


# The ethtool ioctl (linux/ethtool.h, linux/sockios.h), as `ethtool -K IF tso off gso off gro off`
# uses it: the kernel's feature names (one table for every device), then one ETHTOOL_SFEATURES a port
# that clears those features (tso: every tx-tcp*-segmentation, gso: tx-generic-segmentation, gro:
# rx-gro) -- one call, no process a port: a k=8 fat-tree has 960 of them
SIOCETHTOOL = 0x8946
ETHTOOL_GSTRINGS, ETHTOOL_GSSET_INFO, ETHTOOL_SFEATURES = 0x1B, 0x37, 0x3B
ETH_SS_FEATURES = 4
ETH_GSTRING_LEN = 32
_IFREQ_BYTES = 40  # struct ifreq on a 64-bit kernel: the name, then the union (here ifr_data)
_OFFLOAD_FEATURES: list[int] | None = None  # the bits SWITCH_PORT_OFFLOADS_OFF clears, read once


def run_checked(*argv: str, timeout: float = 10) -> None:
    """Run one command (ip, tc, ssh-keygen, ...); RuntimeError with its own words when it fails."""
    res = subprocess.run(list(argv), capture_output=True, text=True, check=False, timeout=timeout)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {(res.stderr or res.stdout).strip() or res.returncode}")


def _ethtool(sock: socket.socket, ifname: bytes, data: array.array) -> None:
    """One SIOCETHTOOL call on `data` (its first word the command); OSError as the kernel answers."""
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, struct.pack("16sP", ifname, data.buffer_info()[0]).ljust(_IFREQ_BYTES, b"\0"))


def _offload_features(sock: socket.socket, ifname: bytes) -> list[int]:
    """The feature bits of TSO, GSO and GRO in the kernel's feature table (ETH_SS_FEATURES)."""
    info = array.array("I", [ETHTOOL_GSSET_INFO, 0, 1 << ETH_SS_FEATURES, 0, 0])  # cmd, reserved, u64 mask, data[1]
    _ethtool(sock, ifname, info)
    count = info[4]
    strings = array.array("I", [ETHTOOL_GSTRINGS, ETH_SS_FEATURES, count] + [0] * (count * ETH_GSTRING_LEN // 4))
    _ethtool(sock, ifname, strings)
    raw = strings.tobytes()[12:]
    names = [raw[i * ETH_GSTRING_LEN:(i + 1) * ETH_GSTRING_LEN].split(b"\0")[0].decode() for i in range(count)]
    return [i for i, n in enumerate(names) if (n.startswith("tx-tcp") and n.endswith("-segmentation"))
            or n in ("tx-generic-segmentation", "rx-gro")]


def switch_port_offloads_off(ifname: str) -> None:
    """Turn a root-namespace switch port's segmentation and receive offloads off (SWITCH_PORT_OFFLOADS_OFF),
    with one ethtool ioctl; a failure is logged, not raised."""
    global _OFFLOAD_FEATURES
    name = check_ifname(ifname).encode()
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            if _OFFLOAD_FEATURES is None:
                _OFFLOAD_FEATURES = _offload_features(sock, name)
            blocks = [0, 0] * (max(_OFFLOAD_FEATURES, default=0) // 32 + 1)  # (valid, requested) per 32 bits
            for bit in _OFFLOAD_FEATURES:
                blocks[2 * (bit // 32)] |= 1 << (bit % 32)  # valid: set these; requested: 0, off
            _ethtool(sock, name, array.array("I", [ETHTOOL_SFEATURES, len(blocks) // 2, *blocks]))
    except OSError as exc:
        log.warning("%s: ethtool -K %s: %s", ifname, " ".join(SWITCH_PORT_OFFLOADS_OFF), exc.strerror)


def netem_available() -> bool:
    """True when the kernel has the netem qdisc (link delay); probed once on a scratch veth pair."""
    global _NETEM
    if _NETEM is None:
        name = f"nm{os.getpid() % 100000}"
        made = subprocess.run(["ip", "link", "add", f"{name}a", "type", "veth", "peer", "name", f"{name}b"],
                              capture_output=True, check=False, timeout=10).returncode == 0
        try:
            _NETEM = made and subprocess.run(["tc", "qdisc", "add", "dev", f"{name}a", "root", "netem", "delay",
                                              "1ms"], capture_output=True, check=False, timeout=10).returncode == 0
        finally:
            if made:
                subprocess.run(["ip", "link", "del", f"{name}a"], capture_output=True, check=False, timeout=10)
    return bool(_NETEM)


def limit_queue(ifname: str, pkts: int, delay: str | None) -> None:
    """Bound an interface's egress queue (a switch port's buffer) to `pkts` frames.

    Mininet's TCLink shapes with HTB class 5:1 and, with a delay, a netem child `10:` whose default
    limit is 1000 frames; without netem the class's leaf is a pfifo of txqueuelen (1000) frames. Both
    are hundreds of ms at the scaled-down rates, far deeper than a datacenter switch's port buffer."""
    res = subprocess.run(limit_queue_argv(ifname, pkts, delay), capture_output=True, text=True, check=False,
                         timeout=10)
    if res.returncode != 0:
        raise RuntimeError(f"tc: queue limit {pkts} on {ifname}: {res.stderr.strip() or res.returncode}")


def limit_queue_argv(ifname: str, pkts: int, delay: str | None) -> list[str]:
    """The `tc` command of limit_queue (for a server reached through a node's shell)."""
    leaf = ["netem", "delay", delay, "limit", str(pkts)] if delay else ["pfifo", "limit", str(pkts)]
    return ["tc", "qdisc", "replace", "dev", ifname, "parent", "5:1", "handle", "10:", *leaf]


def vxlan_commands(name: str, vni: int, local: str, remote: str, mtu: int) -> list[list[str]]:
    """A VXLAN interface `name` (UDP 4789, one VNI a link) from this server's `local` address to
    `remote`, up at `mtu`."""
    return [["ip", "link", "add", "name", check_ifname(name), "type", "vxlan", "id", str(int(vni)), "local", local,
             "remote", remote, "dstport", str(VXLAN_PORT)],
            ["ip", "link", "set", "dev", name, "mtu", str(int(mtu)), "up"]]


def root_qdisc_drops(intf: str) -> int:
    """Drops counted by the root qdisc of a root-namespace interface (`tc -s -j qdisc`)."""
    res = subprocess.run(["tc", "-s", "-j", "qdisc", "show", "dev", intf], capture_output=True, text=True,
                         timeout=10, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"tc qdisc show dev {intf}: {res.stderr.strip()}")
    return sum(int(q.get("drops", 0)) for q in json.loads(res.stdout or "[]") if q.get("root"))


def cpu_mask() -> str:
    """Every CPU of this machine as a sysfs CPU mask (hex, comma every 32 bits: "ff" or "ffffffff,f")."""
    digits = f"{(1 << (os.cpu_count() or 1)) - 1:x}"
    groups = []
    while digits:
        groups.insert(0, digits[-8:])
        digits = digits[:-8]
    return ",".join(groups)


def rps_path(ifname: str) -> str:
    """The RPS CPU mask file of an interface's (veth: only) receive queue."""
    return f"/sys/class/net/{ifname}/queues/rx-0/rps_cpus"


def steer_by_flow(ifname: str) -> None:
    """Keep each flow in order across a root-namespace veth: RPS over every CPU.

    A veth hands a frame to the backlog of whichever CPU transmitted it, and a tc-shaped port transmits
    from its queue's timer on any CPU; two frames of one flow in two CPUs' backlogs reach the next
    switch in either order (measured: 1-17 segments per 20 s stream on 2 CPUs, each a chance of a
    spurious retransmission). With RPS the backlog is chosen by the flow hash, one per flow."""
    try:
        Path(rps_path(ifname)).write_text(cpu_mask())
    except OSError as e:  # a kernel without RPS keeps the per-CPU order (and its reordering)
        log.debug("%s: RPS not set: %s", ifname, e)


def steer_by_flow_command(ifname: str) -> HostCommand:
    """steer_by_flow for a host's interface, run in the host (`mnexec -a` enters its mount namespace,
    whose sysfs is the host's own); a kernel without RPS leaves the host configured."""
    return HostCommand(["tee", rps_path(ifname)], stdin=cpu_mask() + "\n", may_fail=True)


class _NoHtbQuantum(logging.Filter):
    """Drops tc's advice about HTB quantum at high rates, which Mininet logs as an error."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "quantum of class" not in str(record.getMessage())


def filter_tc_noise() -> None:
    """Keep tc's HTB quantum advice out of Mininet's error output."""
    from mininet.log import lg

    if not any(isinstance(f, _NoHtbQuantum) for f in lg.filters):
        lg.addFilter(_NoHtbQuantum())


def carrier_path(ifname: str) -> str:
    """The sysfs file that says whether a root-namespace interface has carrier ("1")."""
    return f"/sys/class/net/{check_ifname(ifname)}/carrier"


def carrier(ifname: str) -> bool:
    """True when the interface has carrier."""
    try:
        return Path(carrier_path(ifname)).read_text().strip() == "1"
    except OSError:
        return False


@dataclass(slots=True, frozen=True)
class HostCommand:
    """One program run in a host: an argument list (never a shell string), optional stdin text."""

    argv: list[str]
    stdin: str | None = None
    may_fail: bool = False


_RTO_MIN = re.compile(r"([0-9]+(?:\.[0-9]+)?)(us|ms|s)?")
_RTO_UNIT = {"us": 1e-6, "ms": 1e-3, "s": 1.0, None: 1e-3}  # ip-route(8): a bare number is in ms
RTO_MIN_MAX_S = 120.0  # the kernel's TCP_RTO_MAX: a larger rto_min is clamped


def check_rto_min(text: str) -> str:
    """An rto_min for `ip route ... rto_min` (e.g. "10ms", "0.2s", "200" = ms); ValueError otherwise."""
    m = _RTO_MIN.fullmatch(text) if isinstance(text, str) else None
    if m is None or not 0 < float(m.group(1)) * _RTO_UNIT[m.group(2)] <= RTO_MIN_MAX_S:
        raise ValueError(f"rto_min {text!r}: expected a duration above 0 and at most {RTO_MIN_MAX_S:.0f} s, "
                         "a number with us, ms or s (e.g. '10ms'; no unit: ms)")
    return text


def host_commands(h: Host, eth: str, gw_mac: str, peers: list[Host], rto_min: str | None) -> list[HostCommand]:
    """What sets up a host: no IPv6, MTU, offloads off, RPS, static ARP, routes (rto_min).

    Argument lists and an `ip -batch` script, never a shell line: no value reaches a shell. Every value
    is checked before (names and addresses by topo.validate, rto_min here)."""
    rto = ["rto_min", check_rto_min(rto_min)] if rto_min else []
    ip = [f"link set dev {eth} mtu {HOST_MTU}",
          f"neigh replace {h.gateway} lladdr {gw_mac} dev {eth} nud permanent"]
    ip += [f"neigh replace {p.address} lladdr {p.mac} dev {eth} nud permanent" for p in peers if p.name != h.name]
    ip.append(" ".join(["route replace default via", h.gateway, "dev", eth, *rto]))
    if rto:
        ip.append(" ".join(["route replace", str(h.network), "dev", eth, "proto kernel scope link src", h.address, *rto]))
    return [
        HostCommand(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"]),
        HostCommand(["ip", "-batch", "-"], stdin="\n".join(ip) + "\n"),
        HostCommand(["ethtool", "-K", eth, "tso", "off", "gso", "off", "gro", "off", "tx", "off", "rx", "off"]),
        steer_by_flow_command(eth),
    ]


# Linux interface names (net/core/dev.c dev_valid_name): IFNAMSIZ bytes with the NUL, so 15 at most;
# not "." or ".."; no '/', ':' or whitespace (the kernel's isspace, byte 0xa0 included, so printable
# ASCII is kept). Those that reach an `ip -batch` line must also be one word there: iproute2 cuts a line
# at '#', joins one that ends in '\\' with the next and reads quotes, so those are refused too.
IFNAMSIZ = 16
_IFNAME_REFUSED = set("/:#'\"\\")


def check_ifname(name: object) -> str:
    """An interface name as the kernel accepts it and as `ip -batch` reads it (one word); ValueError
    naming the name and what an interface name is otherwise."""
    ok = (isinstance(name, str) and name not in ("", ".", "..") and len(name) < IFNAMSIZ and name.isascii()
          and name.isprintable() and not any(c.isspace() or c in _IFNAME_REFUSED for c in name))
    if not ok:
        raise ValueError(f"interface name {name!r}: expected 1..{IFNAMSIZ - 1} printable ASCII characters, "
                         "not '.' or '..', without spaces or any of / : # ' \" \\")
    return name


# what a host's sysctl may be (set with `sysctl -w KEY=VALUE` as an argument list, never a shell line)
_SYSCTL_KEY = re.compile(r"net(\.[A-Za-z0-9_-]+)+")
_SYSCTL_VALUE = re.compile(r"-?[0-9]+( -?[0-9]+)*")


_SERVER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}[A-Za-z0-9])?")


def parse_servers(text: str) -> list[str]:
    """A `--servers` list: comma-separated host names or IPv4 addresses (`localhost`: this machine),
    distinct; ValueError naming the first bad one (a name never starts with '-', so none reads as an
    ssh option)."""
    names = [n.strip() for n in text.split(",")] if isinstance(text, str) else []
    bad = next((n for n in names if not _SERVER.fullmatch(n)), None) if names else text
    if bad is not None:
        raise ValueError(f"server {bad!r}: expected host names or IPv4 addresses separated by commas "
                         f"(letters, digits, '.' and '-'), e.g. localhost,10.0.0.2")
    if len(set(names)) != len(names):
        raise ValueError(f"servers {text!r}: expected each server once")
    return names


SSH_OPTIONS = ("IdentityFile", "UserKnownHostsFile", "StrictHostKeyChecking", "Port", "ConnectTimeout",
               "IdentitiesOnly", "BatchMode")  # what `--ssh-option` may set (none of them runs a command)


def check_ssh_option(text: object) -> list[str]:
    """`-o KEY=VALUE` for reaching a cluster's servers: KEY one of SSH_OPTIONS (ProxyCommand and the
    like, which run a command, are refused) and a VALUE without white space; ValueError otherwise."""
    key, _, value = text.partition("=") if isinstance(text, str) else ("", "", "")
    if key not in SSH_OPTIONS or not value or any(c.isspace() for c in value) or not value.isprintable():
        raise ValueError(f"ssh option {text!r}: expected KEY=VALUE with KEY one of {', '.join(SSH_OPTIONS)} "
                         "and a value without spaces")
    return ["-o", text]


def check_ssh_words(words: object) -> list[str]:
    """ssh options as a run records them: pairs of `-o KEY=VALUE` (check_ssh_option) and `-i FILE`
    (a path without white space); ValueError otherwise."""
    if not isinstance(words, list) or len(words) % 2 or not all(isinstance(w, str) for w in words):
        raise ValueError(f"ssh options {str(words)[:80]!r}: expected pairs of -o KEY=VALUE or -i FILE")
    for flag, value in zip(words[::2], words[1::2], strict=True):
        if flag == "-o":
            check_ssh_option(value)
        elif flag != "-i" or not value or any(c.isspace() for c in value) or value.startswith("-"):
            raise ValueError(f"ssh option {flag} {value!r}: expected -o KEY=VALUE or -i FILE")
    return words


def check_ssh_dest(dest: object) -> str:
    """`user@server` as ssh reaches a cluster's server; ValueError otherwise."""
    user, _, server = dest.partition("@") if isinstance(dest, str) else ("", "", "")
    if not re.fullmatch(r"[a-z_][a-z0-9_-]{0,31}", user) or not _SERVER.fullmatch(server):
        raise ValueError(f"ssh destination {str(dest)[:80]!r}: expected user@server")
    return dest


def ssh_argv(dest: str, ssh_words: list[str], remote: list[str]) -> list[str]:
    """ssh to a cluster's server running `remote` there, never a prompt; as the cluster edition does for
    a user other than root: `sudo -E -u USER ssh ...`, and sudo there."""
    user = check_ssh_dest(dest).split("@", 1)[0]
    local, there = (["sudo", "-E", "-u", user], ["sudo", "-n"]) if user != "root" else ([], [])
    return [*local, "ssh", *check_ssh_words(ssh_words), "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", dest, *there,
            *remote]


def ssh_option_values(ssh_words: list[str]) -> list[str]:
    """ssh words (check_ssh_words) as `KEY=VALUE` options, `-i FILE` as IdentityFile=FILE."""
    words = check_ssh_words(ssh_words)
    return [v if flag == "-o" else f"IdentityFile={v}" for flag, v in zip(words[::2], words[1::2], strict=True)]


def check_sysctl(key: object, value: object) -> str:
    """"KEY=VALUE" for a host's `sysctl -w`: a per-namespace net.* key and an integer (or integers
    separated by single spaces); ValueError naming what is wrong otherwise."""
    if not isinstance(key, str) or not _SYSCTL_KEY.fullmatch(key):
        raise ValueError(f"sysctl {key!r}; expected a per-namespace net.* key (letters, digits, "
                         "'_' and '-' between dots)")
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not _SYSCTL_VALUE.fullmatch(text):
        raise ValueError(f"sysctl {key}={value!r}; expected an integer or integers separated by "
                         "single spaces (e.g. 100, '4096 131072 6291456')")
    return f"{key}={text}"


def set_sysctls(hosts: dict[str, Any], settings: dict[str, object]) -> None:
    """Each setting (checked by `check_sysctl`) in every Mininet host's namespace; RuntimeError naming
    the host and the setting if one fails."""
    lines = [check_sysctl(k, v) for k, v in settings.items()]
    for name, h in hosts.items():
        for line in lines:
            rc, out = run_in(h, HostCommand(["sysctl", "-qw", line]))
            if rc != 0:
                raise RuntimeError(f"host {name}: sysctl {line} failed ({rc}): {out.strip()}")


def run_in(node: Any, cmd: HostCommand, timeout: float = 30.0) -> tuple[int, str]:
    """Run a HostCommand in a Mininet node's namespaces (`mnexec -a`, no shell); (exit code, stdout+stderr)."""
    proc = node.popen(list(cmd.argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = proc.communicate(cmd.stdin.encode() if cmd.stdin is not None else None, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        return -1, out.decode(errors="replace") + f"(killed after {timeout:.0f} s)"
    return proc.returncode, out.decode(errors="replace")
