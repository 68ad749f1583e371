"""The view's web server: the page (static files of the package), the run's drawing and status, a
WebSocket of frames (everything new since the page's last frame), and the control actions.

Loopback only unless `bind` says otherwise, and then only with a token, which every /api request must
carry (header `X-Hitless-Token`, or `token` in the WebSocket's query). The control actions need the
token always, and are refused unless the run was started with them allowed. A page never slows the
run: frames are taken from the bounded record when the page is ready for them (record.py).
"""

import asyncio
import ipaddress
import logging
import secrets
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Protocol

import uvicorn
from fastapi import Depends, FastAPI, Header, HTTPException, Query, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware

from view.model import ActionResult, CircuitsRequest, Graph, ProcedureRequest, Status
from view.record import Record

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
FRAME_PERIOD_S = 0.25  # how often a page is sent what is new
LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]", "::1"]


class Source(Protocol):
    """What the server shows: a live run, or the finished runs of a directory."""

    def status(self, run: str | None) -> Status: ...
    def graph_of(self, run: str | None) -> Graph: ...
    def record_of(self, run: str | None) -> Record: ...


@dataclass(slots=True)
class Controls:
    """The run's own control actions (the CLI's code): a procedure to a circuit spec with a hold, and
    setting the OCS's circuits alone; each returns the line the page shows."""

    reconfigure: Callable[[str, str, float], str]
    set_circuits: Callable[[str], str]


def is_loopback(bind: str) -> bool:
    """True for an address of the loopback range (or `localhost`)."""
    if bind == "localhost":
        return True
    try:
        return ipaddress.ip_address(bind).is_loopback
    except ValueError:
        raise ValueError(f"bind address {bind!r}: expected an IP address (default 127.0.0.1)") from None


def create_app(source: Source, token: str, bind: str = "127.0.0.1", controls: Controls | None = None,
               check_circuits: Callable[[str], None] | None = None) -> FastAPI:
    """The ASGI application (see the module docstring)."""
    loopback = is_loopback(bind)
    app = FastAPI(title="hitless view", docs_url=None, redoc_url=None, openapi_url=None)
    if loopback:  # a page of another site, resolved to 127.0.0.1 (DNS rebinding), is not served
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=LOOPBACK_NAMES)
    busy = threading.Lock()

    def good(given: str | None) -> bool:
        return given is not None and secrets.compare_digest(given.encode(), token.encode())

    def reader(x_hitless_token: Annotated[str | None, Header()] = None) -> None:
        if not loopback and not good(x_hitless_token):
            raise HTTPException(401, "token: missing or wrong; expected the X-Hitless-Token the run printed")

    def controller(x_hitless_token: Annotated[str | None, Header()] = None) -> Controls:
        if controls is None:
            raise HTTPException(403, "control: off; expected a run started with --view-control")
        if not good(x_hitless_token):
            raise HTTPException(401, "token: missing or wrong; expected the X-Hitless-Token the run printed")
        return controls

    def run_action(fn: Callable[[], str]) -> ActionResult:
        if not busy.acquire(blocking=False):
            raise HTTPException(409, "control: another action is running; expected one at a time")
        try:
            return ActionResult(ok=True, line=fn())
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - a failed procedure is the page's answer, not the server's end
            log.warning("control action failed: %s", exc)
            return ActionResult(ok=False, line=str(exc))
        finally:
            busy.release()

    def known(run: str | None) -> str | None:
        try:
            source.status(run)
        except ValueError as exc:
            raise HTTPException(404, str(exc)) from None
        return run

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/api/status", dependencies=[Depends(reader)])
    def status(run: Annotated[str | None, Query(max_length=300)] = None) -> Status:
        s = source.status(known(run))
        return s.model_copy(update={"control": s.control and controls is not None})

    @app.get("/api/graph", dependencies=[Depends(reader)])
    def graph(run: Annotated[str | None, Query(max_length=300)] = None) -> Graph:
        return source.graph_of(known(run))

    @app.post("/api/procedure")
    def procedure(req: ProcedureRequest, c: Annotated[Controls, Depends(controller)]) -> ActionResult:
        if check_circuits is not None:
            _bad_request(check_circuits, req.circuits)
        return run_action(lambda: c.reconfigure(req.procedure, req.circuits, req.hold_s))

    @app.post("/api/circuits")
    def circuits(req: CircuitsRequest, c: Annotated[Controls, Depends(controller)]) -> ActionResult:
        if check_circuits is not None:
            _bad_request(check_circuits, req.circuits)
        return run_action(lambda: c.set_circuits(req.circuits))

    @app.websocket("/api/frames")
    async def frames(ws: WebSocket, run: Annotated[str | None, Query(max_length=300)] = None,
                     token: Annotated[str | None, Query(max_length=200)] = None) -> None:
        if not loopback and not good(token):
            await ws.close(code=1008, reason="token: missing or wrong")
            return
        try:
            record = source.record_of(run)
        except ValueError as exc:
            await ws.close(code=1008, reason=str(exc)[:120])
            return
        await ws.accept()
        seq = 0
        try:
            while True:
                if record.seq > seq:
                    frame = record.since(seq)
                    seq = frame.seq
                    await ws.send_text(frame.model_dump_json())
                elif not record.live:
                    await ws.receive_text()  # a replay is sent once; wait for the page to go
                await asyncio.sleep(FRAME_PERIOD_S)
        except WebSocketDisconnect:
            return

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def _bad_request(check: Callable[[str], None], value: str) -> None:
    try:
        check(value)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None


class Server:
    """uvicorn serving an app from a thread of its own, on a socket bound before it starts (so a port in
    use is a one-line error at once, and port 0 gives a free one)."""

    def __init__(self, app: Any, bind: str = "127.0.0.1", port: int = 0) -> None:
        family = socket.AF_INET6 if ":" in bind else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind((bind, port))
        except OSError as exc:
            self.sock.close()
            raise ValueError(f"view port {bind}:{port}: {exc.strerror}; expected a free port (--view-port)") from None
        self.sock.listen(64)
        self.bind, self.port = bind, self.sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="off", ws_ping_interval=None)
        self._server = uvicorn.Server(config)
        self.native_id: int | None = None  # the serving thread's (its CPU time: /proc/self/task/<id>/stat)
        self._thread = threading.Thread(target=self._serve, name="view-server", daemon=True)

    def _serve(self) -> None:
        self.native_id = threading.get_native_id()
        self._server.run(sockets=[self.sock])

    def start(self) -> "Server":
        """Serve from now on."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Close every page's connection and the socket; returns once the thread has ended."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self.sock.close()

    def url(self, token: str | None = None) -> str:
        """The page's address (with the token, where the page needs it)."""
        host = f"[{self.bind}]" if ":" in self.bind else self.bind
        return f"http://{host}:{self.port}/" + (f"?token={token}" if token else "")
