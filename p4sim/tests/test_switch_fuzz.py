"""Fuzz: 100,000+ random and truncated frames; the switch never fails and keeps forwarding good packets."""

from __future__ import annotations

import os
import random
import time

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether

from p4sim.switch.device import Device
from p4sim.switch.testdata import programs
from p4sim.switch.testdata.veth import RawPort, is_root, veth_pairs
from p4sim.switch.values import ActionCall, Exact, GroupRef, Lpm, Ternary

MARK = b"p4sim-fuzz-good"


def _setup(dev: Device) -> None:
    pl = dev.pipeline
    prof = pl.profile("ecmp_selector")
    prof.insert_member(1, ActionCall("Ing.set_next_hop", (2, 0x020000000002)))
    prof.insert_member(2, ActionCall("Ing.set_next_hop", (3, 0x020000000003)))
    prof.insert_group(1, [(1, 1, 2), (2, 1, 3)])
    pl.table("route").insert((Lpm(0, 1),), GroupRef(1))
    pl.table("route").insert((Lpm(0x80000000, 1),), GroupRef(1))
    pl.table("acl").insert((Ternary(0x0A0000FE, 0xFFFFFFFF), None, None), ActionCall("Ing.drop"), priority=1)
    pl.table("port_mac").insert((Exact(2),), ActionCall("Eg.set_smac", (0x0A0000000002,)))


def _good(sport: int = 5) -> bytes:
    return bytes(Ether(src="00:00:00:00:00:01", dst="00:00:00:00:00:02") / IP(src="10.0.0.1", dst="10.0.9.9")
                 / UDP(sport=sport, dport=7) / MARK)


def _frames(n: int, seed: int) -> list[bytes]:
    rnd = random.Random(seed)
    templates = [_good(), bytes(Ether() / IP(dst="10.1.1.1", ihl=6, options=b"\x01\x01\x01\x01") / TCP()),
                 bytes(Ether() / IP(dst="10.0.0.254", src="10.0.0.254") / UDP())]
    out = []
    for i in range(n):
        kind = i % 4
        if kind == 0:  # random bytes, random length (0..300)
            out.append(os.urandom(rnd.randrange(0, 300)))
        elif kind == 1:  # a valid frame truncated anywhere
            t = rnd.choice(templates)
            out.append(t[:rnd.randrange(0, len(t) + 1)])
        elif kind == 2:  # IPv4 ethertype, random rest: reaches the deeper parser states
            out.append(os.urandom(12) + b"\x08\x00" + os.urandom(rnd.randrange(0, 60)))
        else:  # a valid frame with random bytes flipped
            t = bytearray(rnd.choice(templates))
            for _ in range(rnd.randrange(1, 6)):
                t[rnd.randrange(len(t))] = rnd.randrange(256)
            out.append(bytes(t))
    return out


def test_fuzz_in_process_100k() -> None:
    dev = Device(ports={1: "a", 2: "b", 3: "c"})
    dev.commit_pipeline(dev.load_pipeline(programs.l3_ecmp()))
    _setup(dev)
    frames = _frames(100_000, seed=1)
    t0 = time.monotonic()
    sent = 0
    for i, f in enumerate(frames):
        for port, out in dev.process(1 + i % 3, f):
            assert 0 <= port < 511 and isinstance(out, bytes)
            sent += 1
    elapsed = time.monotonic() - t0
    assert dev.stats["errors"] == 0
    assert sent > 10_000  # the valid and lightly damaged frames were forwarded
    out = dev.process(1, _good())
    assert [p for p, _ in out] in ([2], [3]) and MARK in out[0][1]
    assert elapsed < 60


@pytest.mark.root
@pytest.mark.skipif(not is_root(), reason="needs root for veth pairs")
def test_fuzz_burst_over_veth_then_forwards() -> None:
    with veth_pairs(3, "sw2f") as pairs:
        dev = Device(ports={i + 1: a for i, (a, _) in enumerate(pairs)})
        dev.commit_pipeline(dev.load_pipeline(programs.l3_ecmp()))
        _setup(dev)
        hosts = [RawPort(b) for _, b in pairs]
        dev.start()
        try:
            # at least 14 bytes: the kernel does not send shorter frames on a veth
            for f in _frames(5000, seed=2):
                if len(f) >= 14:
                    hosts[0].send(f)
            prev = -1
            while dev.stats["rx"] != prev:  # wait until the switch has worked off the burst
                prev = dev.stats["rx"]
                time.sleep(0.3)
            for h in hosts[1:]:
                h.drain(quiet=0.2)
            for sport in range(20):
                hosts[0].send(_good(sport))
            got = 0
            deadline = time.monotonic() + 10
            while got < 20 and time.monotonic() < deadline:
                got += sum(h.drain(lambda f: MARK in f, quiet=0.2) for h in hosts[1:])
            assert got == 20
            assert dev.stats["errors"] == 0 and dev._io is not None and dev._io._thread.is_alive()
        finally:
            dev.stop()
            for h in hosts:
                h.close()
