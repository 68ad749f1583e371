"""Test support for P4Runtime clients: a P4 program compiled as a user compiles it (`python -m p4sim
compile` in a child process), and a p4runtime-shell session on a p4sim switch serving one.

p4runtime-shell needs protobuf < 3.21 and p4runtime's original modules, which the project's environment
no longer has (hitless/protogen.py), so it runs in an environment of its own, .venv-p4rt-shell/ (made by
`make setup`), as a child process the test drives (shell_driver.py): the switch stays in the test's
process, where the test reads its device state."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from p4sim.switch.p4runtime.testing import RunningSwitch

REPO = Path(__file__).resolve().parents[2]
SHELL_PYTHON = REPO / ".venv-p4rt-shell" / "bin" / "python"
SHELL_DRIVER = Path(__file__).with_name("shell_driver.py")
needs_shell = pytest.mark.skipif(not SHELL_PYTHON.exists(),
                                 reason="needs p4runtime-shell's environment .venv-p4rt-shell/ (make setup)")


def compile_program(source: Path, out: Path) -> tuple[Path, Path]:
    """Compile `source` into out/<stem>.json and out/<stem>.p4info.txtpb; return (JSON, P4Info) paths."""
    json_path, p4info_path = out / f"{source.stem}.json", out / f"{source.stem}.p4info.txtpb"
    proc = subprocess.run([sys.executable, "-m", "p4sim", "compile", str(source),
                           "-o", str(json_path), "--p4runtime-files", str(p4info_path)],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return json_path, p4info_path


class ShellError(Exception):
    """An exception raised in p4runtime-shell's process, as "Type: message"."""


class ShellProcess:
    """p4runtime-shell in its own Python: statements and expressions run there, with `sh` in scope."""

    def __init__(self, python: Path = SHELL_PYTHON) -> None:
        self.proc = subprocess.Popen([str(python), str(SHELL_DRIVER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def _request(self, req: dict[str, Any]) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"p4runtime-shell's process exited ({self.proc.wait()}); its stderr is above")
        reply = json.loads(line)
        if "error" in reply:
            raise ShellError(reply["error"])
        return ast.literal_eval(reply["value"])

    def reset(self) -> None:
        """Forget every name but `sh` (a new session)."""
        self._request({"reset": True})

    def exec(self, code: str) -> None:
        """Run statements there (names persist until the next session)."""
        self._request({"exec": code})

    def eval(self, expr: str) -> Any:
        """The value of an expression there: a plain value (numbers, str, bytes, lists, tuples, dicts)."""
        return self._request({"eval": expr})

    def call(self, function: str, *args: Any, **kwargs: Any) -> Any:
        """function(*args, **kwargs) there, the arguments plain values."""
        return self.eval(f"{function}(*{args!r}, **{kwargs!r})")

    def close(self) -> None:
        """End the process (it ends when its stdin closes)."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@contextmanager
def shell_process() -> Iterator[ShellProcess]:
    """p4runtime-shell's process, ended afterwards."""
    shell = ShellProcess()
    try:
        yield shell
    finally:
        shell.close()


@contextmanager
def shell_session(shell: ShellProcess, sw: RunningSwitch, json_path: Path, p4info_path: Path) -> Iterator[None]:
    """p4runtime-shell set up as primary of the switch, the program pushed; torn down afterwards."""
    shell.reset()
    shell.exec(f"sh.setup(device_id=1, grpc_addr={sw.address!r}, election_id=(0, 1), verbose=False, "
               f"config=sh.FwdPipeConfig({str(p4info_path)!r}, {str(json_path)!r}))")
    try:
        yield
    finally:
        shell.exec("sh.teardown()")
