"""Test certificates made with openssl (argv lists, no shell): a CA, a server certificate for
127.0.0.1/localhost and a client certificate signed by it, and a second CA that signed nothing here."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

OPENSSL = shutil.which("openssl")
_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


@dataclass(frozen=True)
class Pki:
    """PEM files of one test PKI."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path


def _run(*argv: str) -> None:
    subprocess.run([OPENSSL or "openssl", *argv], check=True, capture_output=True)


def _ca(d: Path, name: str) -> tuple[Path, Path]:
    cert, key = d / f"{name}.pem", d / f"{name}.key"
    _run("req", "-x509", *_KEY, "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", f"/CN={name}",
         "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    return cert, key


def _leaf(d: Path, name: str, ca: tuple[Path, Path], ext: str) -> tuple[Path, Path]:
    cert, key, csr, extfile = d / f"{name}.pem", d / f"{name}.key", d / f"{name}.csr", d / f"{name}.ext"
    extfile.write_text(ext + "\n")
    _run("req", "-new", *_KEY, "-keyout", str(key), "-out", str(csr), "-subj", f"/CN={name}")
    _run("x509", "-req", "-in", str(csr), "-CA", str(ca[0]), "-CAkey", str(ca[1]), "-CAcreateserial",
         "-out", str(cert), "-days", "2", "-extfile", str(extfile))
    return cert, key


def make_pki(d: Path) -> Pki:
    """Create the test PKI in `d`."""
    ca = _ca(d, "hitless-test-ca")
    server = _leaf(d, "switch", ca, "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth")
    client = _leaf(d, "controller", ca, "extendedKeyUsage=clientAuth")
    other = _ca(d, "other-ca")
    return Pki(ca[0], server[0], server[1], client[0], client[1], other[0])
