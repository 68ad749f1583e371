"""The view's command-line parts: the `--view` options of `hitless run-topo` and `hitless experiment run`
(added to those parsers by the `hitless` command, which passes `attach` down), and `hitless view DIR`,
the replay of finished runs."""

from __future__ import annotations

import argparse
import contextlib
import re
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from topo.cli import main_of
from view.live import DEFAULT_PORT, LiveView, emulation_controls
from view.replay import Replays
from view.server import Server, create_app, is_loopback

_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,128}")
FORWARD_NOTE = "from another machine: ssh -L {port}:127.0.0.1:{port} <this host>, then open the same address there"


def token_of(bind: str, token: str | None, option: str = "--view-token") -> str:
    """A checked token (URL-safe, 16 to 128 characters), or a new one; the bind address checked too."""
    is_loopback(bind)
    if token is None:
        return secrets.token_urlsafe(16)
    if not _TOKEN.fullmatch(token):
        raise ValueError(f"{option}: expected 16 to 128 letters, digits, '-' or '_'")
    return token


def add_options(p: argparse.ArgumentParser, control: bool = True) -> None:
    """The live view's options on a command that runs an emulation; `args.attach` serves it."""
    g = p.add_argument_group("live view (a web page of the running network: view/README.md)")
    g.add_argument("--view", action="store_true", help=f"serve the live view (http://127.0.0.1:{DEFAULT_PORT}/)")
    g.add_argument("--view-port", type=int, default=DEFAULT_PORT, metavar="<port>",
                   help=f"its port (default {DEFAULT_PORT}; 0: any free one)")
    g.add_argument("--view-bind", default="127.0.0.1", metavar="<ip>",
                   help="its address (default 127.0.0.1; another one serves only with the token)")
    g.add_argument("--view-token", metavar="<text>", help="the page's token (default: a new one, printed)")
    if control:
        g.add_argument("--view-control", action="store_true",
                       help="the page may run procedures and set circuits (each asks for confirmation)")
    p.set_defaults(attach=attach)


def add_watch_options(p: argparse.ArgumentParser) -> None:
    """The live view's options on the experiment runner: watching only (a page never runs a procedure
    in the middle of an experiment's run)."""
    add_options(p, control=False)


@contextlib.contextmanager
def attach(args: argparse.Namespace, emu: Any, runs_under: Path | None = None) -> Iterator[LiveView | None]:
    """While an emulation runs: its live view when `--view` was given (and nothing otherwise)."""
    if not getattr(args, "view", False):
        yield None
        return
    controls = emulation_controls(emu) if getattr(args, "view_control", False) else None
    view = LiveView(emu, port=args.view_port, bind=args.view_bind, token=token_of(args.view_bind, args.view_token),
                    controls=controls, runs_under=runs_under)
    with view:
        print(f"view: {view.url}  ({FORWARD_NOTE.format(port=view.server.port)})", flush=True)
        yield view


def build_parser(prog: str = "python -m view") -> argparse.ArgumentParser:
    """`view DIR`: the replay server's parser."""
    p = argparse.ArgumentParser(prog=prog, description="Replay finished runs in the view's page: an experiment's "
                                "results, one run directory, or an emulation's log directory.")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress")
    p.add_argument("dir", type=Path, metavar="<dir>", help="results/<spec>, one run-NNN, or an emulation log dir")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="<port>", help=f"default {DEFAULT_PORT}")
    p.add_argument("--bind", default="127.0.0.1", metavar="<ip>",
                   help="default 127.0.0.1; another address serves only with the token")
    p.add_argument("--token", metavar="<text>", help="the page's token off loopback (default: a new one, printed)")
    return p


def main(argv: list[str] | None = None, prog: str = "python -m view") -> int:
    """`hitless view DIR`: serve the replay until Ctrl-C."""
    return main_of(prog, build_parser(prog), serve_replay, argv)


def serve_replay(args: argparse.Namespace, stop: threading.Event | None = None) -> int:
    """Serve the runs under args.dir until interrupted (or `stop` is set)."""
    token = token_of(args.bind, args.token, "--token")
    source = Replays(args.dir)
    server = Server(create_app(source, token, args.bind), args.bind, args.port).start()
    print(f"view: {len(source.runs)} runs under {source.root}: "
          f"{server.url(None if is_loopback(args.bind) else token)}", flush=True)
    print(f"view: {FORWARD_NOTE.format(port=server.port)}; Ctrl-C ends it", flush=True)
    try:
        (stop or threading.Event()).wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
