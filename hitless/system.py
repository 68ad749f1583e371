"""`hitless setup`: what pip cannot install. Debian's packages (debian-packages.txt beside this file:
Mininet and its mnexec, iproute2, iperf3, tshark, Python's headers, ...) with apt, Mininet's Python
package, which only Debian ships, linked into this Python's environment, and p4runtime's protobuf
modules regenerated for this environment's protobuf runtime (hitless/protogen.py).

Standard library only: `make setup` runs this file with the system's python3 before any virtual
environment exists (`python3 hitless/system.py packages`), then with the environment's Python to link
Mininet (`python -m hitless.system mininet`); the p4runtime step imports what pip installed.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

log = logging.getLogger(__name__)

PACKAGES_FILE = Path(__file__).with_name("debian-packages.txt")
SYSTEM_PYTHON = "/usr/bin/python3"
# tshark asks whether non-root users may capture; answered before it is installed
DEBCONF = "wireshark-common wireshark-common/install-setuid boolean false\n"


def debian_packages(path: Path = PACKAGES_FILE) -> list[str]:
    """The Debian packages the project needs, one a line (# comments)."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def missing_packages(packages: list[str]) -> list[str]:
    """The packages dpkg does not list as installed (all of them where there is no dpkg)."""
    if shutil.which("dpkg-query") is None:
        return list(packages)
    res = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Status}\n", *packages],
                         capture_output=True, text=True, check=False)
    installed = {line.split()[0] for line in res.stdout.splitlines() if line.endswith("install ok installed")}
    return [p for p in packages if p not in installed]


def as_root(argv: list[str]) -> list[str]:
    """argv as root: itself when this process is root, else through sudo; ValueError without either."""
    if os.geteuid() == 0:
        return argv
    if shutil.which("sudo"):
        return ["sudo", *argv]
    raise ValueError(f"{argv[0]}: needs root; expected to run as root (or with sudo installed)")


def install_packages(packages: list[str]) -> list[str]:
    """apt-get install the missing ones; returns what was installed (RuntimeError with apt's last line)."""
    missing = missing_packages(packages)
    if not missing:
        return []
    if shutil.which("apt-get") is None:
        raise ValueError(f"packages {' '.join(missing)}: not installed and no apt-get here; expected Debian or Ubuntu")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    steps = [(["apt-get", "update", "-qq"], None), (["debconf-set-selections"], DEBCONF),
             (["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], None)]
    for argv, stdin in steps:
        res = subprocess.run(as_root(argv), input=stdin, capture_output=True, text=True, env=env, check=False)
        if res.returncode != 0:
            last = (res.stderr or res.stdout).strip().splitlines()
            raise RuntimeError(f"{' '.join(argv[:2])} exited {res.returncode}: {last[-1] if last else ''}")
    return missing


def link_mininet() -> Path | None:
    """Link Debian's Mininet package into this Python's site-packages (None: it imports already)."""
    try:
        import mininet  # noqa: F401 - only whether it imports
        return None
    except ImportError:
        pass
    res = subprocess.run([SYSTEM_PYTHON, "-c", "import mininet, os; print(os.path.dirname(mininet.__file__))"],
                         capture_output=True, text=True, check=False)
    src = res.stdout.strip()
    if res.returncode != 0 or not src:
        raise ValueError(f"mininet: not importable by {SYSTEM_PYTHON}; expected Debian's 'mininet' package installed")
    link = Path(sysconfig.get_paths()["purelib"]) / "mininet"
    if link.is_symlink():
        link.unlink()  # a link to an older place
    link.symlink_to(src)
    return link


def setup(packages: bool = True, mininet: bool = True, p4runtime: bool = True) -> list[str]:
    """Install the Debian packages, link Mininet, regenerate p4runtime's modules; one line per thing done."""
    out = []
    if packages:
        done = install_packages(debian_packages())
        out.append(f"installed {' '.join(done)}" if done else "Debian packages present")
    if mininet:
        link = link_mininet()
        out.append(f"linked Mininet into {link.parent}" if link else "Mininet imports")
    if p4runtime:
        from hitless import protogen  # this environment's Python, with what pip installed

        out.append(protogen.ensure())
    return out


def build_parser(prog: str = "python -m hitless.system") -> argparse.ArgumentParser:
    """The argument parser of `hitless setup`."""
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    p.add_argument("what", nargs="?", choices=("all", "packages", "mininet", "p4runtime"), default="all",
                   help="packages: apt only; mininet: link it into this Python only; p4runtime: regenerate "
                        "its modules for this Python's protobuf only (default all)")
    return p


def main(argv: list[str] | None = None, prog: str = "python -m hitless.system") -> int:
    """Entry point."""
    args = build_parser(prog).parse_args(argv)
    try:
        for line in setup(args.what in ("all", "packages"), args.what in ("all", "mininet"),
                          args.what in ("all", "p4runtime")):
            print(f"[setup] {line}")
    except (ValueError, RuntimeError, OSError, ImportError) as exc:
        print(f"[setup] {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
