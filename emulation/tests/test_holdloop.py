"""The hold loop: its tbf, and (as root) a real veth pair that carries frames from the out end to the in
end at the paced rate."""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest

from emulation.__main__ import main
from emulation.holdloop import BURST_FRAMES, add_hold_loop, hold_loop_names, loop_drops, tbf_args


def test_tbf_counts_every_frame_as_a_full_one() -> None:
    assert tbf_args(4000, 100) == ["tbf", "rate", "48000kbit", "burst", "3400", "mpu", "1500", "limit", "170000"]


@pytest.mark.parametrize("passes", [0, -5, 1.5, True, "4000", 10**7])
def test_tbf_refuses_a_bad_rate(passes: object) -> None:
    with pytest.raises(ValueError, match=r"hold loop passes=.*: expected a whole number of passes a second"):
        tbf_args(passes)  # type: ignore[arg-type]


@pytest.mark.parametrize("frames", [0, BURST_FRAMES - 1, 2.0, None])
def test_tbf_refuses_a_bad_limit(frames: object) -> None:
    with pytest.raises(ValueError, match=r"hold loop frames=.*: expected"):
        tbf_args(1000, frames)  # type: ignore[arg-type]


def _frame(i: int) -> bytes:
    return b"\x02\x00\x00\x00\x00\x01" + b"\x02\x00\x00\x00\x00\x02" + b"\x88\xb8" + i.to_bytes(4, "big") + bytes(1596)  # 1614 bytes: a full frame


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: creates a veth pair and a tbf qdisc")
def test_a_loop_carries_frames_out_to_in_at_its_pace_and_counts_what_overflows() -> None:
    loop = hold_loop_names(f"hlt{os.getpid() % 10000}")
    try:
        add_hold_loop(loop, 1600, passes_per_s=1000, frames=50)
        rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B8))
        rx.bind((loop.in_intf, 0))
        rx.settimeout(0.01)
        tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        tx.bind((loop.out_intf, 0))
        t0 = time.monotonic()
        for i in range(80):  # beyond the queue's 50 x 1700 bytes (52 full frames) and its 2-frame burst
            try:
                tx.send(_frame(i))
            except OSError:  # ENOBUFS: the qdisc dropped it
                pass
        got: list[tuple[float, int]] = []
        while time.monotonic() - t0 < 0.3:
            try:
                data = rx.recv(2048)
            except TimeoutError:
                continue
            got.append((time.monotonic() - t0, int.from_bytes(data[14:18], "big")))
        seen = [i for _, i in got]
        assert seen == sorted(seen) and 50 <= len(seen) <= 56, f"in order, about the queue's worth: {len(seen)}"
        # 1000 passes a second: the 40th frame after the burst comes no sooner than ~38 ms
        assert got[min(41, len(got) - 1)][0] >= 0.035, f"paced: {got[:3]} ... {got[41]}"
        assert loop_drops(loop) == 80 - len(seen), "what did not fit was dropped, and counted"
    finally:
        subprocess.run(["ip", "link", "del", loop.out_intf], capture_output=True, check=False)


@pytest.mark.parametrize("bad", ["0", "-1", "2000000"])
def test_run_refuses_a_bad_pass_rate_before_anything_starts(bad: str, capsys: pytest.CaptureFixture) -> None:
    assert main(["run", "--topo", "ucd4", "--hold-passes", bad]) == 2
    err = capsys.readouterr().err
    assert err.startswith("emulation run: hold loop passes=") and err.count("\n") == 1
