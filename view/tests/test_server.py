"""The server over HTTP and its WebSocket, as a page uses it: a replay of a run directory written as a
run writes it, the token and loopback rules, and the control endpoints' refusals (no action is reached)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from topo.generators import ucd4
from view.graph import build
from view.live import page_circuits
from view.model import Frame
from view.record import EVENTS_FILE, GRAPH_FILE, OCS_FILE, SAMPLES_FILE, Record
from view.replay import Replays
from view.server import Controls, Server, create_app

TOKEN = "k" * 20
GRAPH = build(ucd4())


def write_run(d: Path) -> Path:
    """An emulation log directory as a run with the view leaves it: drawing, events, OCS log, samples."""
    d.mkdir(parents=True)
    (d / GRAPH_FILE).write_text(GRAPH.model_dump_json())
    lines = [{"event": "procedure-start", "t_wall": 5.0, "procedure": "bbm"},
             {"event": "step-start", "t_wall": 5.1, "step": "routes"},
             {"event": "step-done", "t_wall": 5.2, "step": "routes"},
             {"event": "procedure-done", "t_wall": 5.3, "procedure": "bbm"}]
    (d / EVENTS_FILE).write_text("".join(json.dumps(e) + "\n" for e in lines) + '{"half a line')
    (d / OCS_FILE).write_text(json.dumps({"event": "command", "t_wall": 4.0, "removed": [], "added": [[2, 11]]}) + "\n")
    (d / SAMPLES_FILE).write_text("".join(json.dumps({"t": t, "counters": {"s1": {"port_tx": {"2": [t, 125_000 * t]}}},
                                                       "versions": {"s1": {"2": 1}}}) + "\n" for t in (4.0, 5.0, 6.0)))
    return d


def request(url: str, body: dict | None = None, token: str | None = None, host: str | None = None) -> tuple[int, dict]:
    """(status, JSON body) of one GET or POST."""
    headers = {"Content-Type": "application/json"} | ({"X-Hitless-Token": token} if token else {}) | \
        ({"Host": host} if host else {})
    req = urllib.request.Request(url, data=json.dumps(body).encode() if body is not None else None, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()
        return exc.code, json.loads(body) if body.startswith(b"{") else {"text": body.decode()}


@pytest.fixture
def replay(tmp_path: Path) -> Iterator[Server]:
    server = Server(create_app(Replays(write_run(tmp_path / "emulation")), TOKEN), port=0).start()
    yield server
    server.stop()


def test_a_replay_over_http_and_its_websocket(replay: Server) -> None:
    status, s = request(replay.url() + "api/status")
    assert status == 200 and (s["mode"], s["runs"], s["control"], s["t0"]) == ("replay", ["."], False, 4.0)
    status, g = request(replay.url() + "api/graph")
    assert status == 200 and len([n for n in g["nodes"] if n["kind"] == "switch"]) == 4
    with connect(f"ws://127.0.0.1:{replay.port}/api/frames") as ws:
        frame = Frame.model_validate_json(ws.recv(timeout=10))
    assert [(s.label, s.t_end) for s in frame.spans] == [("bbm", None), ("routes", None), ("routes", 5.2), ("bbm", 5.3),
                                                         ("command", None)]
    assert [s.links["s1:2-ocs:1"].forward for s in frame.samples] == [1.0, 1.0]
    assert frame.samples[0].versions == {"s1": {2: 1}} and not frame.live
    assert request(replay.url() + "api/status?run=..%2F..%2Fetc")[0] == 404
    assert request(replay.url() + "api/status", host="attacker.example")[0] == 400


def test_off_loopback_every_read_needs_the_token(tmp_path: Path) -> None:
    # the rules of a page served beyond loopback, on a loopback socket
    app = create_app(Replays(write_run(tmp_path / "emulation")), TOKEN, bind="192.0.2.1")
    server = Server(app, port=0).start()
    try:
        assert request(server.url() + "api/status")[0] == 401
        assert request(server.url() + "api/status", token="w" * 20)[0] == 401
        assert request(server.url() + "api/status", token=TOKEN)[0] == 200
        with pytest.raises(InvalidStatus, match="403"):
            connect(f"ws://127.0.0.1:{server.port}/api/frames")
        with connect(f"ws://127.0.0.1:{server.port}/api/frames?token={TOKEN}") as ws:
            assert Frame.model_validate_json(ws.recv(timeout=10)).spans
    finally:
        server.stop()


class _Idle:
    """A live source with nothing recorded, for the control endpoints."""

    def status(self, run: str | None):  # noqa: ANN201 - server.Source
        from view.model import Status

        return Status(mode="live", source="test", control=True, procedures=["mbb"], t0=0.0)

    def graph_of(self, run: str | None):  # noqa: ANN201
        return GRAPH

    def record_of(self, run: str | None) -> Record:
        return Record(GRAPH, live=True)


def test_control_needs_the_run_to_allow_it_the_token_and_the_clis_grammar() -> None:
    def never(*args: object) -> str:
        pytest.fail(f"a refused request reached the action with {args}")

    off = Server(create_app(_Idle(), TOKEN), port=0).start()
    on = Server(create_app(_Idle(), TOKEN, controls=Controls(never, never),
                           check_circuits=lambda spec: page_circuits(GRAPH, spec)), port=0).start()
    try:
        body = {"procedure": "mbb", "circuits": "reconfigured"}
        assert request(off.url() + "api/procedure", body, TOKEN) == \
            (403, {"detail": "control: off; expected a run started with --view-control"})
        assert request(on.url() + "api/procedure", body)[0] == 401
        for bad, words in [({**body, "procedure": "rm -rf"}, "procedure 'rm -rf': expected one of bbm, mbb-timed, mbb"),
                           ({**body, "hold_s": -1}, "hold_s -1.0: expected seconds from 0 to"),
                           ({**body, "circuits": "/etc/passwd"}, "circuits '/etc/passwd': expected none, a map name"),
                           ({**body, "circuits": "x; reboot"}, "expected none, a map name"),
                           ({**body, "extra": 1}, "Extra inputs are not permitted")]:
            status, answer = request(on.url() + "api/procedure", bad, TOKEN)
            assert status in (400, 422) and words in json.dumps(answer), (bad, answer)
        status, answer = request(on.url() + "api/circuits", {"circuits": "../../x.json"}, TOKEN)
        assert status == 400 and "expected none, a map name (initial, reconfigured) or pairs a-b,c-d" in answer["detail"]
    finally:
        off.stop()
        on.stop()
