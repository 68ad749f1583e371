"""Test support for P4Runtime clients: a P4 program compiled as a user compiles it (`python -m p4sim
compile` in a child process), and a p4runtime-shell session on a p4sim switch serving one."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from p4sim.switch.p4runtime.testing import RunningSwitch

REPO = Path(__file__).resolve().parents[2]


def compile_program(source: Path, out: Path) -> tuple[Path, Path]:
    """Compile `source` into out/<stem>.json and out/<stem>.p4info.txtpb; return (JSON, P4Info) paths."""
    json_path, p4info_path = out / f"{source.stem}.json", out / f"{source.stem}.p4info.txtpb"
    proc = subprocess.run([sys.executable, "-m", "p4sim", "compile", str(source),
                           "-o", str(json_path), "--p4runtime-files", str(p4info_path)],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return json_path, p4info_path


@contextmanager
def shell_session(sh: Any, sw: RunningSwitch, json_path: Path, p4info_path: Path) -> Iterator[None]:
    """p4runtime-shell (the module `sh`) set up as primary of the switch, the program pushed; torn down
    afterwards."""
    sh.setup(device_id=1, grpc_addr=sw.address, election_id=(0, 1),
             config=sh.FwdPipeConfig(str(p4info_path), str(json_path)), verbose=False)
    try:
        yield
    finally:
        sh.teardown()
