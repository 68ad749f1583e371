"""The `hitless` command: every subcommand with its package's own --help, the python -m forms beside
it, and bad input as one line."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hitless.cli import BY_NAME, main

HITLESS = str(Path(sys.executable).parent / "hitless")


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in [*BY_NAME, "bench", "tofino-check"]:
        assert f"\n  {name} " in out, name


@pytest.mark.parametrize("words", [["topo", "generate"], ["tables"], ["tables", "check"], ["run-topo"], ["run"],
                                   ["build"], ["ocs-emulator"], ["clean-net"], ["install"], ["reconfigure"],
                                   ["ocs"], ["experiment", "run"], ["experiment", "demo"], ["setup"], ["view"]])
def test_each_command_has_its_package_help(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([*words, "--help"])
    assert done.value.code == 0
    usage = capsys.readouterr().out.split("\n", 1)[0]
    shown = {"run-topo": "run"}.get(words[0], words[0])  # run-topo is `python -m emulation run`
    assert usage.startswith(f"usage: hitless {shown}"), usage


def test_the_commands_that_run_a_network_offer_the_live_view(capsys: pytest.CaptureFixture[str]) -> None:
    for words, control in ((["run-topo"], True), (["experiment", "run"], False)):
        with pytest.raises(SystemExit):
            main([*words, "--help"])
        out = capsys.readouterr().out
        assert "--view " in out and "--view-port" in out and ("--view-control" in out) == control, words


def test_the_console_script_and_the_python_m_forms_agree() -> None:
    a = _run(HITLESS, "topo", "generate", "ucd4")
    b = _run(sys.executable, "-m", "topo", "generate", "ucd4")
    assert a.returncode == b.returncode == 0 and a.stdout == b.stdout and '"name": "ucd4"' in a.stdout
    assert _run(sys.executable, "-m", "hitless", "--help").stdout.startswith("usage: hitless COMMAND")


def test_bad_input_is_one_line() -> None:
    for argv, expected in (([HITLESS, "frobnicate"], "hitless: 'frobnicate': not a command; expected one of topo"),
                           ([HITLESS, "bench", "nope"], "hitless bench: 'nope': expected one of compile"),
                           ([HITLESS, "tables", "missing.json", "-o", "x"], "tablegen: "),
                           ([HITLESS, "view", "/nonexistent"], "hitless view: replay /nonexistent: not a directory"),
                           ([HITLESS, "view", "/tmp", "--token", "short"], "hitless view: --token: expected 16 to 128")):
        res = _run(*argv)
        assert res.returncode == 2 and res.stderr.count("\n") == 1 and res.stderr.startswith(expected), res.stderr


def test_setup_knows_what_pip_cannot_install() -> None:
    from hitless.system import debian_packages, missing_packages

    packages = debian_packages()
    assert {"mininet", "python3-dev", "iperf3", "tshark"} <= set(packages)
    if shutil.which("dpkg-query") and shutil.which("mnexec"):  # a machine `make setup` ran on
        assert missing_packages(packages) == []
    assert missing_packages(["no-such-package-here"]) == ["no-such-package-here"]
