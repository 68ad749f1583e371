"""The standing abuse suite of p4sim-switch (a separate process, as in use): 500 open streams with 500
concurrent unary calls, RPCs beyond the server's limit, 100 pipeline pushes with the switch's RSS,
random and truncated frames through the fabric program on veth pairs, a wildcard Read of every
register cell with Writes beside stalled Reads, failing packet-outs on a stream never read, messages
before arbitration, TLS files that are garbage, mismatched, swapped or endless. Bounded in count and time;
traffic only on loopback and on the veths the test creates. The figures are printed, one line each
(`.venv/bin/pytest -s p4sim/tests/test_reliability.py`); `scripts/bench/p4sim_abuse.py` makes them too."""

from __future__ import annotations

import logging
import queue
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from p4rt.client import P4RuntimeClient
from p4rt.entities import TableEntry
from p4rt.tests import pki as pki_mod
from p4sim.switch.device import Device
from p4sim.switch.p4runtime import server as server_mod
from p4sim.switch.p4runtime.proto import p4r, p4r_grpc
from p4sim.switch.p4runtime.server import start_server
from p4sim.switch.p4runtime.service import ERROR_PAYLOAD, MAX_READ_ENTITIES
from p4sim.switch.testdata.veth import RawPort, is_root, veth_pairs
from p4sim.target import free_port
from scripts.tools import p4sim_abuse as abuse

log = logging.getLogger(__name__)

STREAMS, UNARY = 500, 500
PUSHES = 100
KIB_PER_STREAM = 128  # the switch README's bound on the RSS of an idle stream (measured: ~50 KiB)
GOOD = bytes.fromhex("00000000aa01" "00000000bb01" "0800"
                     "4500001c000100004011" "0000" "0a000001" "0a000105"
                     "04d2162e0008" "0000")  # UDP 10.0.0.1 -> 10.0.1.5, ttl 64


@pytest.fixture(scope="module")
def fabric(tmp_path_factory: pytest.TempPathFactory) -> abuse.Program:
    return abuse.fabric_program(tmp_path_factory.mktemp("fabric"))


def test_500_streams_and_500_unary_calls_are_all_served(fabric: abuse.Program, tmp_path: Path) -> None:
    with abuse.p4sim_switch(tmp_path) as sw:
        served = abuse.flood(sw, fabric, STREAMS, UNARY, timeout=20)
        _figure(f"reliability: {served}")
        assert (served.streams, served.unary, served.late_arbitration) == (STREAMS, UNARY, True), str(served)
        assert served.kib_per_stream < KIB_PER_STREAM, str(served)
        assert sw.proc.poll() is None


def test_rpcs_beyond_the_limit_are_refused_at_once_and_served_again_after() -> None:
    handle = start_server(Device(device_id=1), "127.0.0.1:0", 1, max_concurrent_rpcs=20)
    channel = grpc.insecure_channel(handle.address)
    stub = p4r_grpc.P4RuntimeStub(channel)
    requests: queue.Queue = queue.Queue()
    streams = []
    try:
        streams = [stub.StreamChannel(iter(requests.get, None)) for _ in range(20)]
        assert _capabilities(stub, until=grpc.StatusCode.RESOURCE_EXHAUSTED) == grpc.StatusCode.RESOURCE_EXHAUSTED
        for call in streams:
            call.cancel()
        assert _capabilities(stub, until=grpc.StatusCode.OK) == grpc.StatusCode.OK  # the slots came back
    finally:
        for call in streams:
            call.cancel()
        for _ in streams:
            requests.put(None)
        channel.close()
        handle.stop()


def _capabilities(stub: p4r_grpc.P4RuntimeStub, until: grpc.StatusCode, within: float = 10.0) -> grpc.StatusCode:
    """Call Capabilities until it ends with `until` or `within` seconds passed; the last code."""
    deadline = time.monotonic() + within
    while True:
        try:
            stub.Capabilities(p4r.CapabilitiesRequest(), timeout=5)
            code = grpc.StatusCode.OK
        except grpc.RpcError as e:
            code = e.code()
        if code == until or time.monotonic() > deadline:
            return code
        time.sleep(0.05)


def _figure(line: str) -> None:
    """A figure for the README: printed (shown with -s) and logged."""
    print(line)  # noqa: T201 - the test's report
    log.info("%s", line)


def test_100_pipeline_pushes_keep_the_switch_rss(fabric: abuse.Program, tmp_path: Path) -> None:
    with abuse.p4sim_switch(tmp_path) as sw:
        pushes = abuse.push_pipelines(sw, fabric, PUSHES)
        _figure(f"reliability: {pushes}")
        assert abs(pushes.growth) <= 0.05, str(pushes)


@pytest.mark.root
@pytest.mark.skipif(not is_root(), reason="needs root for veth pairs")
def test_random_and_truncated_frames_then_the_fabric_still_forwards(fabric: abuse.Program, tmp_path: Path) -> None:
    with veth_pairs(2, "sw2r") as pairs:
        hosts = [RawPort(b) for _, b in pairs]
        try:
            with abuse.p4sim_switch(tmp_path, fabric.json_path, {1: pairs[0][0], 2: pairs[1][0]}) as sw:
                with P4RuntimeClient(sw.grpc_addr, device_id=abuse.DEVICE_ID, election_id=(0, 1)) as client:
                    client.set_pipeline(fabric.p4info, fabric.json_bytes)
                    client.insert([
                        TableEntry("route", {"ipv4_dst": "10.0.1.0/24"}, "to_host",
                                   {"port": 2, "dmac": "00:00:00:00:00:aa"}),
                        TableEntry("port_mac", {"egress_port": 2}, "set_smac", {"smac": "02:00:00:00:00:b2"})])
                    frames = abuse.fuzz_frames(GOOD, 3000)
                    for f in frames:
                        hosts[0].send(f)
                    hosts[1].drain(quiet=0.5)  # what the fuzz frames made the switch send
                    hosts[0].send(GOOD)
                    got = hosts[1].recv(5.0, match=lambda f: f[:6] == bytes.fromhex("0000000000aa")
                                        and f[26:34] == GOOD[26:34])
                    _figure(f"reliability: {len(frames)} random and truncated frames through the fabric "
                            f"program, then a good frame {'forwarded' if got else 'NOT forwarded'}")
                    assert got is not None and got[22] == 63  # routed: ttl 64 -> 63
                assert sw.proc.poll() is None, sw.log_tail()
        finally:
            for h in hosts:
                h.close()


def test_a_wildcard_register_read_streams_within_a_bound(fabric: abuse.Program, tmp_path: Path) -> None:
    """`register_entry {}` over the fabric program selects every cell, 116,224: it once took 12.5 s and
    310 MiB at once. Now it streams at most MAX_READ_ENTITIES, a chunk at a time, then says why it
    stopped; and Writes go on while 8 such Reads wait on clients that never read their answers (their
    threads once held every unary worker; 30 s is this test's margin for a loaded machine)."""
    with abuse.p4sim_switch(tmp_path) as sw:
        got = abuse.reads(sw, fabric, stalled=8, writes=20, timeout=30)
        _figure(f"reliability: {got}")
        assert got.entities == MAX_READ_ENTITIES, str(got)
        assert got.status.startswith("RESOURCE_EXHAUSTED") and f"more than {MAX_READ_ENTITIES}" in got.status
        assert got.peak_growth_mib < 60, str(got)
        assert got.writes == 20 and sw.proc.poll() is None


def test_stream_errors_and_early_messages_are_bounded(tmp_path: Path) -> None:
    """200 failing 1 MiB packet-outs from a client that never reads once grew the switch by 200 MiB (each
    StreamError carried the whole packet, past the backlog bound); 20,000 messages before arbitration
    logged 20,000 warnings."""
    with abuse.p4sim_switch(tmp_path) as sw:
        got = abuse.stream_flood(sw, packet_outs=200, payload=1 << 20, early=20_000)
        _figure(f"reliability: {got}")
        assert got.rss_growth_mib < 40, str(got)
        assert 0 <= got.log_lines <= 10, str(got)
        assert sw.proc.poll() is None


def test_a_stream_error_carries_the_packet_out_cut_short() -> None:
    handle = start_server(Device(device_id=1), "127.0.0.1:0", 1)
    channel = grpc.insecure_channel(handle.address)
    requests: queue.Queue = queue.Queue()
    try:
        stream = p4r_grpc.P4RuntimeStub(channel).StreamChannel(iter(requests.get, None))
        arb = p4r.StreamMessageRequest()
        arb.arbitration.device_id, arb.arbitration.election_id.low = 1, 1
        requests.put(arb)
        assert next(stream).WhichOneof("update") == "arbitration"
        out = p4r.StreamMessageRequest()
        out.packet.payload = bytes(range(256)) * 4096
        out.packet.metadata.add(metadata_id=1, value=b"\x01")
        requests.put(out)  # no pipeline: FAILED_PRECONDITION, with the packet-out
        err = next(stream).error
        assert err.canonical_code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
        assert err.packet_out.packet_out.payload == out.packet.payload[:ERROR_PAYLOAD]
        assert list(err.packet_out.packet_out.metadata) == list(out.packet.metadata)
    finally:
        requests.put(None)
        channel.close()
        handle.stop()


def test_reads_whose_clients_take_nothing_give_their_threads_back(fabric: abuse.Program,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """As many Reads as there are read threads, each held by a client that takes no response (HTTP/2's
    first 64 KiB window, no growth: the switch waits on it after a few), end after READ_STALL_S (here
    0.5 s), so another client's Read is served."""
    monkeypatch.setattr(server_mod, "READ_STALL_S", 0.5)
    handle = start_server(Device(device_id=1), "127.0.0.1:0", 1)
    channel = grpc.insecure_channel(handle.address, options=[("grpc.http2.bdp_probe", 0)])
    try:
        stub = p4r_grpc.P4RuntimeStub(channel)
        stub.SetForwardingPipelineConfig(abuse.pipeline_request(fabric), timeout=60)
        held = [stub.Read(abuse.register_read(), timeout=60) for _ in range(server_mod.READ_WORKERS)]
        time.sleep(2)
        req = p4r.ReadRequest(device_id=1)
        req.entities.add().table_entry.SetInParent()
        assert [len(r.entities) for r in stub.Read(req, timeout=10)] == [0]  # served: no entry written
        with pytest.raises(grpc.RpcError) as e:
            sum(len(r.entities) for r in held[0])  # what it had sent, then the status
        assert e.value.code() == grpc.StatusCode.UNAVAILABLE and "took nothing" in e.value.details()
    finally:
        channel.close()
        handle.stop()


# a switch that reads /dev/zero fails at 2 GiB, not the machine: set by prlimit, not a preexec_fn (a fork
# that runs Python in the child of this process, whose gRPC threads may be busy, wrote gRPC's "epoll_wait
# error: Bad file descriptor" there and aborted it before exec: a CI failure)
LIMITED_MEMORY = ["prlimit", f"--as={2 << 30}", "--"]


def test_bad_tls_files_are_named_by_the_switch_process(tmp_path: Path) -> None:
    """p4sim-switch with a garbage certificate, a key that is not its certificate's, the two swapped, or
    /dev/zero as the certificate: one line naming the file and what is wrong (once "cannot listen",
    blaming the address; /dev/zero was read until memory ran out)."""
    if pki_mod.OPENSSL is None:
        pytest.skip("needs openssl to make test certificates")
    pki = pki_mod.make_pki(tmp_path)
    junk = tmp_path / "junk.pem"
    junk.write_bytes(b"-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n")
    cert, key = str(pki.server_cert), str(pki.server_key)
    for c, k, what in ((str(junk), key, f"--grpc-server-cert '{junk}': not a valid certificate"),
                       (cert, str(pki.client_key), f"--grpc-server-key '{pki.client_key}': not the key of the "
                                                   f"certificate in '{cert}'"),
                       (key, cert, f"--grpc-server-cert '{key}': holds PRIVATE KEY; expected a CERTIFICATE"),
                       ("/dev/zero", key, "--grpc-server-cert '/dev/zero': larger than 1048576 bytes")):
        res = subprocess.run([*LIMITED_MEMORY, str(Path(sys.executable).parent / "p4sim-switch"), "--no-p4",
                              "--grpc-server-addr", f"127.0.0.1:{free_port()}", "--", "--grpc-server-ssl",
                              "--grpc-server-cert", c, "--grpc-server-key", k], capture_output=True, text=True,
                             timeout=60)
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 1 and len(lines) == 1, res.stderr[-2000:]
        assert lines[0].startswith(f"p4sim-switch: {what}"), lines[0]
