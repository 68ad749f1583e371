"""Run the PTF suite: veth pairs, one switch per program, ptf, and cleanup of all of it.

    python ptf-tests/ptf_runner.py [--p4c P4C] [--switch SWITCH] [--build DIR] [--programs fabric,ocs] [TEST ...]
    python ptf-tests/ptf_runner.py --all-pairings [--build DIR]     # every compiler x switch installed

Compiles p4src/ into the build directory when it is stale or from another compiler
(p4sim/target.py). For each program it creates PORTS patched veth links (MTU 1600, IPv6 off
so the kernel sends nothing on them), for fabric also the switch's hold loop (ports 253 -> 254, a
paced veth pair: emulation/holdloop.py), starts SWITCH with the simple_switch_grpc command shape on a
free loopback port, runs the tests of the program's group, then stops the switch (by PID) and
deletes the veths, also on failure or Ctrl-C. Nothing here knows which target SWITCH is; the tests
get the target only as a label. With --all-pairings each pairing builds into DIR/ptf-<compiler>/.
(ptf imports every file of ptf-tests/; this one defines no test.)
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from emulation.fibre import patch
from emulation.holdloop import add_hold_loop, hold_loop_names
from emulation.links import switch_port_offloads_off
from emulation.switchproc import SwitchProcess, start_switch
from p4sim.target import Target, label, missing_pairings, pairings
from scripts.tools.testreport import Record, missing, record
from topo.model import CPU_PORT

ROOT = Path(__file__).resolve().parent.parent
TEST_DIR = Path(__file__).resolve().parent
DEVICE_ID = 1
MTU = 1600
READY_TIMEOUT = 60.0


@dataclass(slots=True)
class Veths:
    """The links of one run, one per port N: the switch's `pt<tok>s<N>` and PTF's `pt<tok>p<N>`, each a
    veth end whose peer (`...m<N>`, `...n<N>`) is patched to the other's (emulation/fibre.py).

    A test takes port N down by setting `pt<tok>m<N>` down: the switch port loses carrier as with a
    real link, while neither process's own interface goes down (bmv2 stops receiving on every port
    while one of its interfaces is down, and PTF's reader thread dies on a down interface).
    """

    token: str
    count: int
    created: list[str] = field(default_factory=list)

    def switch_iface(self, port: int) -> str:
        """The switch-side interface of `port`."""
        return f"pt{self.token}s{port}"

    def ptf_iface(self, port: int) -> str:
        """The PTF-side interface of `port`."""
        return f"pt{self.token}p{port}"

    def link_iface(self, port: int) -> str:
        """The interface that takes `port`'s link down (the switch side's veth peer)."""
        return f"pt{self.token}m{port}"

    def create(self) -> None:
        """Create the patched pairs, MTU 1600, IPv6 off, up."""
        for port in range(1, self.count + 1):
            sw, pt = self.switch_iface(port), self.ptf_iface(port)
            mid_sw, mid_pt = self.link_iface(port), f"pt{self.token}n{port}"
            for a, b in ((sw, mid_sw), (pt, mid_pt)):
                _ip("link", "add", a, "type", "veth", "peer", "name", b)
                self.created.append(a)
            patch(mid_sw, mid_pt)
            for iface in (sw, mid_sw, pt, mid_pt):
                _sysctl(f"net.ipv6.conf.{iface}.disable_ipv6", "1")
                _ip("link", "set", "dev", iface, "mtu", str(MTU), "up")
            switch_port_offloads_off(sw)

    def delete(self) -> None:
        """Delete every pair this run created (deleting one end removes both)."""
        for sw in reversed(self.created):
            subprocess.run(["ip", "link", "del", sw], check=False, capture_output=True)
        self.created.clear()


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def _sysctl(key: str, value: str) -> None:
    path = Path("/proc/sys") / key.replace(".", "/")
    if path.exists():
        path.write_text(value)


def run_and_count(cmd: list[str], counts: dict[str, int]) -> int:
    """Run ptf, echoing its unittest report, and add its test and failure counts to `counts`."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        sys.stderr.write(line)
        if m := re.match(r"Ran (\d+) tests? in", line):
            counts["ran"] += int(m.group(1))
        elif line.startswith("FAILED ("):
            counts["failed"] += sum(int(n) for n in re.findall(r"(?:failures|errors)=(\d+)", line))
    return proc.wait()


def run_program(program: str, target: Target, build: Path, args: argparse.Namespace, counts: dict[str, int]) -> int:
    """Bring up one switch with `program` and run its test group; return ptf's exit code."""
    tests = args.tests
    json_path, p4info = build / f"{program}.json", build / f"{program}.p4info.txtpb"
    logs = build / "ptf"
    logs.mkdir(parents=True, exist_ok=True)
    veths = Veths(f"{os.getpid() % 4096:03x}", args.ports)
    ports = {p: veths.switch_iface(p) for p in range(1, args.ports + 1)}
    sw: SwitchProcess | None = None
    try:
        veths.create()
        if program == "fabric":  # its hold loop, as every fabric switch of the emulation has
            loop = hold_loop_names(f"pt{veths.token}")
            veths.created.append(loop.out_intf)
            ports |= add_hold_loop(loop, MTU).ports
        switch_log = logs / f"{program}-switch.log"
        sw = start_switch(target, json_path, ports,
                          log_file=switch_log, device_id=DEVICE_ID, cpu_port=CPU_PORT, timeout=READY_TIMEOUT)
        addr = sw.grpc_addr
        print(f"   {program}: {' '.join(sw.command)}  (log {switch_log})", flush=True)
        ifaces = ",".join(f"{p}:{veths.link_iface(p)}" for p in range(1, args.ports + 1))
        params = ";".join([f"grpcaddr='{addr}'", f"p4info='{p4info.resolve()}'",
                           f"config='{json_path.resolve()}'", f"device_id={DEVICE_ID}",
                           f"cpu_port={CPU_PORT}", f"target='{label(target.switch)}'",
                           f"ifaces='{ifaces}'"])
        ptf_cmd = [str(Path(sys.executable).parent / "ptf"), "--test-dir", str(TEST_DIR),
                   "--log-file", str(logs / f"{program}-ptf.log")]
        for p in range(1, args.ports + 1):
            ptf_cmd += ["-i", f"{p}@{veths.ptf_iface(p)}"]
        ptf_cmd += ["--test-params", params, *(tests or [program])]
        print(f"   {program}: ptf {' '.join(tests or [program])} against {label(target.switch)}", flush=True)
        rc = run_and_count(ptf_cmd, counts)
        if sw.proc.poll() is not None:
            print(f"   {program}: the switch died during the tests (code {sw.proc.returncode}), see {switch_log}")
            rc = rc or 1
        return rc
    finally:
        if sw is not None:
            sw.stop()
        veths.delete()


def run_pairing(target: Target, build: Path, args: argparse.Namespace) -> tuple[int, int]:
    """Compile for `target` when stale, run every program's group on it; (passed, failed)."""
    print(f"== ptf on {target.name}: {target.ensure_build(build, ROOT / 'p4src')}", flush=True)
    counts = {"ran": 0, "failed": 0, "not_run": 0}
    for program in filter(None, args.programs.split(",")):
        try:
            failed_before = counts["failed"]
            if run_program(program, target, build, args, counts) and counts["failed"] == failed_before:
                counts["not_run"] += 1  # ptf or the switch failed without a failed test to show for it
        except (OSError, RuntimeError, ValueError, subprocess.CalledProcessError) as exc:
            detail = getattr(exc, "stderr", "") or exc
            print(f"ptf_runner: {target.name} {program}: {detail}".rstrip())
            counts["not_run"] += 1
    return counts["ran"] - counts["failed"], counts["failed"] + counts["not_run"]


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(prog="ptf_runner", description="Run the PTF suite against SWITCH.")
    p.add_argument("--p4c", metavar="P4C", help="P4 compiler (default $P4C, else p4c-bm2-ss on PATH, else p4sim)")
    p.add_argument("--switch", metavar="SWITCH", help="P4 switch (default $SWITCH, else simple_switch_grpc, else p4sim)")
    p.add_argument("--all-pairings", action="store_true",
                   help="run on every compiler x switch pairing installed (p4sim always; p4c and bmv2 if present)")
    p.add_argument("--build", default=str(ROOT / "build"), metavar="DIR")
    p.add_argument("--programs", default="fabric,ocs", metavar="P[,P]")
    p.add_argument("--ports", type=int, default=4, metavar="N")
    p.add_argument("tests", nargs="*", metavar="TEST", help="ptf test or group names (default: the program's group)")
    args = p.parse_args(argv)
    if os.geteuid() != 0:
        print("ptf_runner: needs root (veth pairs, raw sockets)")
        return 2
    signal.signal(signal.SIGTERM, _interrupt)  # so `finally` cleans up on kill as on Ctrl-C
    try:
        if args.all_pairings:
            runs = [(t, Path(args.build) / f"ptf-{label(t.p4c)}") for t in pairings()]
        else:
            runs = [(Target.from_env(args.p4c, args.switch), Path(args.build))]
    except ValueError as exc:
        print(f"ptf_runner: {exc}")
        return 2
    # pairings the machine lacks the tools for: skipped with the reason, failures under HITLESS_STRICT=1
    lacking = missing_pairings() if args.all_pairings else {}
    results = []
    try:
        for target, build in runs:
            results.append((target.name, *run_pairing(target, build, args)))
    except KeyboardInterrupt:
        print("ptf_runner: interrupted; switch stopped, veths removed")
        return 130
    for name, passed, failed in results:
        print(f"ptf {name}: {passed} passed, {failed} failed")
    skipped = [missing(f"ptf {name}", reason) for name, reason in lacking.items()]
    for _, line in skipped:
        print(line)
    passed, failed = sum(r[1] for r in results), sum(r[2] for r in results)
    status = "failed" if failed or any(st == "failed" for st, _ in skipped) else "passed"
    record(Record("ptf", status, passed=passed, failed=failed,
                  detail=", ".join(f"{name} {p} passed" for name, p, _ in results),
                  tested=[name for name, _, f in results if not f], untested=lacking))
    # The closing line, as test runners print it; a program whose tests could not run counts as a failure.
    print(f"ptf: {passed} passed, {failed} failed")
    return 1 if status == "failed" else 0


if __name__ == "__main__":
    sys.exit(main())
