"""p4runtime's protobuf modules regenerated for the protobuf runtime of this environment (upb).

Every p4runtime wheel on PyPI (1.3.0 to 1.6.0; no sdist, no .proto files) ships `_pb2.py` files made
by protoc older than 3.19, which protobuf 4 and later refuse to load ("Descriptors cannot be created
directly"): they held the project to protobuf 3.20's pure-Python runtime, the bottleneck of every
P4Runtime message the controller and p4sim build or parse. Each of those files embeds its
FileDescriptorProto (`serialized_pb=b'...'`), so nothing needs the .proto source: this module reads the
descriptors with `ast` (without importing the old code), adds those they import from the runtime
(google/protobuf/any.proto, google/rpc/status.proto), runs grpcio-tools' protoc on that
FileDescriptorSet (`--descriptor_set_in`), and packs what protoc writes, with the wheel's other files,
into a wheel `p4runtime <version>+upb` that pip installs over the original. pip keeps knowing what is
installed, and the requirement `p4runtime==1.4.1` still matches `1.4.1+upb` (PEP 440 ignores a local
label). A stamp in the environment records the versions it was made for, so a second run does nothing.
A p4runtime whose modules already load on this runtime (none on PyPI up to 1.6.0) is left as it is.

    python -m hitless.protogen [--force]      (make setup; `hitless setup` runs it too)

Standard library at import time: `hitless setup` must reach it while the old modules cannot load.
"""

from __future__ import annotations

import argparse
import ast
import base64
import hashlib
import importlib
import importlib.metadata as metadata
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

DIST = "p4runtime"
LOCAL_LABEL = "upb"
# what the generated code depends on: a change of any of them regenerates
STAMPED = (DIST, "protobuf", "grpcio", "grpcio-tools")
STAMP = Path(sys.prefix) / ".p4runtime-upb-stamp"
CHECK = ("from google.protobuf.internal import api_implementation\n"
         "from p4.config.v1 import p4info_pb2, p4types_pb2\n"
         "from p4.v1 import p4data_pb2, p4runtime_pb2, p4runtime_pb2_grpc\n"
         "print(api_implementation.Type())\n")


def embedded_descriptor(source: str, name: str = "<module>") -> bytes:
    """The serialized FileDescriptorProto a generated `_pb2.py` carries, old style or new; ValueError if none."""
    for node in ast.walk(ast.parse(source, name)):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:  # protoc < 3.19: _descriptor.FileDescriptor(..., serialized_pb=b'...')
            if kw.arg == "serialized_pb":
                return ast.literal_eval(kw.value)
        func = node.func  # protoc >= 3.19: _descriptor_pool.Default().AddSerializedFile(b'...')
        if isinstance(func, ast.Attribute) and func.attr == "AddSerializedFile" and node.args:
            return ast.literal_eval(node.args[0])
    raise ValueError(f"{name}: no serialized FileDescriptorProto; expected protoc's generated code")


def is_old_style(source: str) -> bool:
    """True for code of protoc < 3.19, which protobuf >= 4 refuses."""
    return "serialized_pb=b'" in source and "_builder" not in source


def _module_files(dist: metadata.Distribution) -> dict[str, Path]:
    """The distribution's files under its packages, by their path in a wheel (no caches, no dist-info)."""
    out = {}
    for f in dist.files or ():
        rel = str(f)
        if "__pycache__" in f.parts or ".dist-info" in f.parts[0] or rel.endswith(".pyc"):
            continue
        out[rel] = Path(f.locate())
    return out


def descriptor_set(protos: dict[str, bytes]) -> bytes:
    """A serialized FileDescriptorSet: `protos` (name -> FileDescriptorProto bytes) and, from this runtime,
    every file they import that they do not hold."""
    from google.protobuf import descriptor_pb2

    files: dict[str, bytes] = {}

    def add(name: str, data: bytes) -> None:
        if name in files:
            return
        files[name] = data
        for dep in descriptor_pb2.FileDescriptorProto.FromString(data).dependency:
            if dep not in protos and dep not in files:  # google/rpc/status.proto -> google.rpc.status_pb2
                module = importlib.import_module(dep.removesuffix(".proto").replace("/", ".") + "_pb2")
                add(dep, module.DESCRIPTOR.serialized_pb)
            elif dep in protos:
                add(dep, protos[dep])

    for name, data in protos.items():
        add(name, data)
    fds = descriptor_pb2.FileDescriptorSet()
    for data in files.values():
        fds.file.add().ParseFromString(data)
    return fds.SerializeToString()


def run_protoc(fds: bytes, names: list[str], out: Path) -> None:
    """grpcio-tools' protoc: messages, type stubs and gRPC stubs of `names` into out/; RuntimeError on failure."""
    fds_path = out / "p4runtime.fds"
    fds_path.write_bytes(fds)
    gen = out / "gen"
    gen.mkdir()
    argv = [sys.executable, "-m", "grpc_tools.protoc", f"--descriptor_set_in={fds_path}",
            f"--python_out={gen}", f"--pyi_out={gen}", f"--grpc_python_out={gen}", *names]
    res = subprocess.run(argv, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        last = (res.stderr or res.stdout).strip().splitlines()
        hint = " (grpcio-tools not installed?)" if "No module named" in res.stderr else ""
        raise RuntimeError(f"protoc exited {res.returncode}{hint}: {last[-1] if last else ''}")


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_wheel(dist: metadata.Distribution, files: dict[str, bytes], out: Path) -> Path:
    """A wheel of `files` (path -> bytes) as `dist` at version <its version>+upb; returns its path."""
    public = dist.version.split("+", 1)[0]
    version = f"{public}+{LOCAL_LABEL}"
    info = f"{DIST}-{version}.dist-info"
    meta = re.sub(r"^Version: .*$", f"Version: {version}", dist.read_text("METADATA") or "", count=1, flags=re.M)
    extra = {f"{info}/METADATA": meta.encode(),
             f"{info}/WHEEL": (b"Wheel-Version: 1.0\nGenerator: hitless.protogen\n"
                               b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
             f"{info}/top_level.txt": (dist.read_text("top_level.txt") or "p4\n").encode()}
    for name in ("LICENSE", "licenses/LICENSE"):
        if (text := dist.read_text(name)) is not None:
            extra[f"{info}/{name}"] = text.encode()
    entries = {**files, **extra}
    path = out / f"{DIST}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as whl:
        for name, data in sorted(entries.items()):
            whl.writestr(name, data)
        record = [_record_line(n, d) for n, d in sorted(entries.items())] + [f"{info}/RECORD,,"]
        whl.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return path


def regenerate(work: Path) -> tuple[Path, list[str]]:
    """The regenerated wheel of the installed p4runtime, built in `work`; returns it and its protos."""
    dist = metadata.distribution(DIST)
    modules = _module_files(dist)
    from google.protobuf import descriptor_pb2

    protos: dict[str, bytes] = {}
    for rel, path in modules.items():
        if rel.endswith("_pb2.py"):
            data = embedded_descriptor(path.read_text(), rel)
            name = descriptor_pb2.FileDescriptorProto.FromString(data).name
            if name.removesuffix(".proto") + "_pb2.py" != rel:
                raise ValueError(f"{rel}: holds {name}; expected the module of its own .proto")
            protos[name] = data
    if not protos:
        raise ValueError(f"{DIST} {dist.version}: no _pb2.py modules; expected p4runtime's generated code")
    run_protoc(descriptor_set(protos), sorted(protos), work)
    gen = work / "gen"
    files = {rel: path.read_bytes() for rel, path in modules.items()
             if not rel.endswith(("_pb2.py", "_pb2_grpc.py", "_pb2.pyi"))}
    files.update({p.relative_to(gen).as_posix(): p.read_bytes() for p in gen.rglob("*") if p.is_file()})
    return build_wheel(dist, files, work), sorted(protos)


def stamp_text() -> str:
    """What the stamp records: the installed versions the generated code depends on."""
    lines = []
    for name in STAMPED:
        try:
            lines.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            lines.append(f"{name} -")
    return "\n".join(lines) + "\n"


def check() -> str:
    """Import the regenerated modules in a fresh interpreter; return the runtime's kind ("upb")."""
    env = {k: v for k, v in os.environ.items() if k != "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"}
    res = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, env=env, check=False)
    if res.returncode != 0:
        last = res.stderr.strip().splitlines()
        raise RuntimeError(f"p4runtime's modules do not import: {last[-1] if last else res.returncode}")
    return res.stdout.strip()


def _loads() -> bool:
    try:
        return check() == "upb"
    except RuntimeError:
        return False


def ensure(force: bool = False) -> str:
    """Regenerate and install p4runtime's modules unless the stamp says they are current; one line of what
    was done. RuntimeError when protoc, pip or the check fails."""
    if not force and STAMP.is_file() and STAMP.read_text() == stamp_text():
        return f"{DIST} modules up to date ({metadata.version(DIST)})"
    shipped = [p for rel, p in _module_files(metadata.distribution(DIST)).items() if rel.endswith("_pb2.py")]
    if not force and not any(is_old_style(p.read_text()) for p in shipped) and _loads():
        STAMP.write_text(stamp_text())
        return f"{DIST} {metadata.version(DIST)}: its modules load on this protobuf as installed"
    with tempfile.TemporaryDirectory(prefix="protogen-") as tmp:
        wheel, protos = regenerate(Path(tmp))
        res = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                              "--force-reinstall", "--disable-pip-version-check", str(wheel)],
                             capture_output=True, text=True, check=False)
        if res.returncode != 0:
            last = (res.stderr or res.stdout).strip().splitlines()
            raise RuntimeError(f"pip install {wheel.name} exited {res.returncode}: {last[-1] if last else ''}")
    kind = check()
    if kind != "upb":
        raise RuntimeError(f"protobuf runtime is {kind!r} after regenerating; expected 'upb' (protobuf >= 4.21)")
    STAMP.write_text(stamp_text())
    return f"regenerated {len(protos)} {DIST} modules for protobuf {metadata.version('protobuf')} ({kind})"


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(prog="python -m hitless.protogen", description=__doc__.split("\n\n")[0])
    p.add_argument("--force", action="store_true", help="regenerate even when the stamp is current")
    args = p.parse_args(argv)
    try:
        print(f"[setup] {ensure(args.force)}")
    except (ValueError, RuntimeError, OSError, metadata.PackageNotFoundError) as exc:
        print(f"[setup] {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
