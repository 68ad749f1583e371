"""The TNA programs (p4src/tna/) compiled by bf-p4c, the Tofino compiler, for Tofino 1 (`tna`) and
Tofino 2 (`t2na`): the files a Tofino switch runs and Stratum's BfPipelineConfig of them.

One folder per chip and program, `<work>/<chip>/<program>/`: bf-p4c's output (`-o`: the P4Info,
bfrt.json, pipe/context.json, pipe/tofino.bin or tofino2.bin, pipe/logs/ with `--verbose 1`), the
driver configuration `<program>.conf` (p4c-gen-conf), `<program>.pb.bin` (the BfPipelineConfig a
switch takes: the one file to carry to it), `bf-p4c.log` and `compile.json` (what was run, how
long it took, its errors). A compile is reused while the sources under p4src/, bf-p4c's version and
the command are unchanged (their hash is in compile.json): a fabric compile takes minutes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from p4rt.bfconfig import pack_bf_pipeline_config
from p4sim.target import P4SRC

log = logging.getLogger(__name__)

PROGRAMS = ("fabric", "ocs")
# Builds of a program with a compile-time option, checked beside the programs (make tofino-check):
# name -> (the program, its defines). ocs-scheduler: the OCS with seed 001's reservation scheduler.
VARIANTS: dict[str, tuple[str, tuple[str, ...]]] = {"ocs-scheduler": ("ocs", ("-DRESV_TNA_SCHEDULER",))}
# ../shared/toolchain/install.sh's place for it (PREFIX /usr/local); it does not go on PATH.
INSTALLED_BF_P4C = Path("/usr/local/lib/p4ref/tofino/bin/bf-p4c")
COMPILE_TIMEOUT_S = 1800
STAMP = "compile.json"


@dataclass(frozen=True, slots=True)
class Chip:
    """A Tofino chip: bf-p4c's --target and --arch, its MAU stages, and the options this bf-p4c needs."""

    name: str
    arch: str
    generation: int
    stages: int
    options: tuple[str, ...] = ()


# Tofino 2: this build's assembler refuses the compiler's CLOT allocation ("No length for clot 0"),
# even for p4c's own TNA tests; without CLOTs they compile (../shared/toolchain/README.md).
CHIPS = (Chip("tofino", "tna", 1, 12), Chip("tofino2", "t2na", 2, 20, ("-Xp4c=--no-clot",)))


def chip(name: str) -> Chip:
    """The chip of this name; ValueError naming the known ones."""
    for c in CHIPS:
        if c.name == name:
            return c
    raise ValueError(f"Tofino chip {name!r}: expected one of {', '.join(c.name for c in CHIPS)}")


def work_dir() -> Path:
    """The compile folder `make tofino-check` and the tests share: $BUILD/tofino ($BUILD, the
    Makefile's, relative to the checkout), else build/tofino."""
    return P4SRC.parent / os.environ.get("BUILD", "build") / "tofino"


def find_bf_p4c() -> str | None:
    """bf-p4c: $BF_P4C, else on PATH, else where the project's toolchain installs it; None if absent."""
    env = os.environ.get("BF_P4C")
    if env:
        return env
    found = shutil.which("bf-p4c")
    if found:
        return found
    return str(INSTALLED_BF_P4C) if os.access(INSTALLED_BF_P4C, os.X_OK) else None


@dataclass(slots=True)
class Compiled:
    """One program compiled for one chip: where, whether it succeeded, its errors and how long it took
    (`cached`: an earlier run's output, reused; `seconds` is that run's)."""

    program: str
    chip: Chip
    out: Path
    ok: bool
    seconds: float
    cached: bool = False
    errors: list[str] = field(default_factory=list)
    argv: list[str] = field(default_factory=list)

    @property
    def p4info(self) -> Path:
        """bf-p4c's P4Info of the program."""
        return self.out / f"{self.program}.p4info.txtpb"

    @property
    def config(self) -> Path:
        """The packed BfPipelineConfig."""
        return self.out / f"{self.program}.pb.bin"


def error_lines(output: str) -> list[str]:
    """The compiler's error lines (a located `error:`, a Compiler Bug, a failed step), not warnings."""
    bad = []
    for line in output.splitlines():
        low = line.lower()
        if "warning" in low or not ("error" in low or "compiler bug" in low or low.startswith("failed command")):
            continue
        bad.append(line.strip())
    return bad


def bf_p4c_argv(bf_p4c: str, program: str, target: Chip, out: Path, p4src: Path = P4SRC) -> list[str]:
    """The bf-p4c command compiling p4src/tna/<program>.p4 for `target` into `out`, with resource logs
    and a P4Info of P4Runtime's own externs (action profiles, counters, registers), which Stratum and
    this controller speak, not Tofino's (barefoot.ActionSelector, DynHash, ...). A variant's name
    (VARIANTS) compiles its program with its defines."""
    source, defines = VARIANTS.get(program, (program, ()))
    return [bf_p4c, "--target", target.name, "--arch", target.arch, *target.options, *defines, "-I", str(p4src),
            "-o", str(out), "--verbose", "1", "--p4runtime-files", str(out / f"{program}.p4info.txtpb"),
            "--p4runtime-force-std-externs", str(p4src / "tna" / f"{source}.p4")]


def _version(bf_p4c: str) -> str:
    try:
        res = subprocess.run([bf_p4c, "--version"], capture_output=True, text=True, timeout=60, check=False)
    except OSError as exc:
        raise ValueError(f"bf-p4c {bf_p4c!r}: cannot run ({exc.strerror})") from None
    return " ".join((res.stdout + res.stderr).split())


def source_key(bf_p4c: str, argv: list[str], p4src: Path = P4SRC) -> str:
    """What a compile's output depends on: every P4 file under p4src/ (name and bytes), bf-p4c's
    version and the command."""
    h = hashlib.sha256()
    for path in sorted(p4src.rglob("*.p4")):
        h.update(str(path.relative_to(p4src)).encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(_version(bf_p4c).encode() + b"\0" + "\0".join(argv).encode())
    return h.hexdigest()


def _cached(out: Path, key: str, program: str, target: Chip) -> Compiled | None:
    try:
        stamp = json.loads((out / STAMP).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or stamp.get("key") != key or not isinstance(stamp.get("ok"), bool):
        return None
    ok, errors = stamp["ok"], stamp.get("errors")
    if not ok and not (isinstance(errors, list) and errors and all(isinstance(e, str) for e in errors)):
        return None
    done = Compiled(program, target, out, ok, float(stamp.get("seconds", 0)), True, errors=[] if ok else errors,
                    argv=list(stamp.get("argv", [])))
    # a failed compile is reused too (its errors), so a known failure costs one compile per source change
    return done if not ok or (done.p4info.is_file() and done.config.is_file()) else None


def _pipes(out: Path) -> list[str]:
    """The pipe names bf-p4c's manifest lists (one folder each)."""
    manifest = json.loads((out / "manifest.json").read_text())
    return [p["pipe_name"] for prog in manifest.get("programs", []) for p in prog.get("pipes", [])]


def write_conf(bf_p4c: str, program: str, target: Chip, out: Path) -> Path:
    """`<program>.conf`, as bf-p4c's driver would write it with p4c-gen-conf (this build's driver
    drops that step: it enables commands before registering p4c-gen-conf among them)."""
    conf = out / f"{program}.conf"
    gen = Path(bf_p4c).resolve().parent / "p4c-gen-conf"
    argv = [str(gen), "--conf-type", "BF-RT", "--bfrt-name", str(out / "bfrt.json"), "--name", program,
            "--device", target.name, "--outputdir", str(out), "--p4-version", "p4-16", "--pipe", *_pipes(out)]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    if res.returncode != 0 or not conf.is_file():
        raise ValueError(f"p4c-gen-conf for {program} on {target.name} failed ({res.returncode}): "
                         f"{(res.stderr or res.stdout).strip()[-300:]}")
    return conf


def compile_program(bf_p4c: str, program: str, target: Chip, work: Path, p4src: Path = P4SRC) -> Compiled:
    """Compile one TNA program for one chip into <work>/<chip>/<program>/, or reuse that folder when
    nothing it depends on changed; then its .conf and packed BfPipelineConfig."""
    if program not in PROGRAMS and program not in VARIANTS:
        raise ValueError(f"TNA program {program!r}: expected one of {', '.join((*PROGRAMS, *VARIANTS))}")
    # absolute: bf-p4c and p4c-gen-conf write these paths into the conf, read from its own folder
    work, p4src = work.resolve(), p4src.resolve()
    out = work / target.name / program
    argv = bf_p4c_argv(bf_p4c, program, target, out, p4src)
    key = source_key(bf_p4c, argv, p4src)
    done = _cached(out, key, program, target)
    if done is not None:
        log.info("%s on %s: unchanged since its compile (%.0f s), reused", program, target.name, done.seconds)
        return done
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    log.info("compiling %s for %s: %s", program, target.name, " ".join(argv))
    start = time.monotonic()
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, check=False)
    except OSError as exc:
        raise ValueError(f"bf-p4c {bf_p4c!r}: cannot run ({exc.strerror})") from None
    seconds = time.monotonic() - start
    output = res.stdout + res.stderr
    (out / "bf-p4c.log").write_text(output)
    last = output.strip().splitlines()[-1:] or ["no output"]
    errors = [] if res.returncode == 0 else error_lines(output) or [
        f"bf-p4c exited {res.returncode} (log {out / 'bf-p4c.log'}): {last[0][:200]}"]
    done = Compiled(program, target, out, not errors, seconds, errors=errors, argv=argv)
    if done.ok:
        done.config.write_bytes(pack_bf_pipeline_config(write_conf(bf_p4c, program, target, out)))
    (out / STAMP).write_text(json.dumps({"key": key, "ok": done.ok, "seconds": round(seconds, 1),
                                         "errors": errors, "argv": argv}, indent=1))
    return done
