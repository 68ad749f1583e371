"""TLS for p4sim-switch's P4Runtime server, with simple_switch_grpc's options.

bmv2 (simple_switch_grpc 1.15.5) takes `--grpc-server-ssl`, `--grpc-server-cacert`,
`--grpc-server-cert`, `--grpc-server-key` and `--grpc-server-with-client-auth`; p4sim-switch takes
the same, so a harness starts either switch with TLS by the same command line.
"""

from __future__ import annotations

import re
import ssl
from dataclasses import dataclass

import grpc


@dataclass(frozen=True, slots=True)
class ServerTls:
    """The server's certificate chain and key (PEM), and the CA that client certificates must chain to."""

    cert: bytes
    key: bytes
    ca: bytes | None = None
    require_client_auth: bool = False

    def credentials(self) -> grpc.ServerCredentials:
        """gRPC server credentials: TLS, with client certificates required when asked for."""
        return grpc.ssl_server_credentials([(self.key, self.cert)], root_certificates=self.ca,
                                           require_client_auth=self.require_client_auth)


MAX_PEM_BYTES = 1 << 20  # a certificate chain or a key is a few KiB


def _read(option: str, path: str, kind: str) -> bytes:
    """A PEM file of `kind` (CERTIFICATE, PRIVATE KEY), read up to MAX_PEM_BYTES; ValueError naming the
    option and the file, and what it holds instead (a key given as the certificate, or the reverse)."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_PEM_BYTES + 1)
    except OSError as e:
        raise ValueError(f"{option} {path!r}: cannot read ({e.strerror})") from None
    if len(data) > MAX_PEM_BYTES:
        raise ValueError(f"{option} {path!r}: larger than {MAX_PEM_BYTES} bytes; expected a PEM file")
    labels = set(re.findall(rb"-----BEGIN ([A-Z0-9 ]+)-----", data))
    if not any(kind.encode() in label for label in labels):
        held = " and ".join(sorted(label.decode() for label in labels)) or "no PEM block"
        other = b"PRIVATE KEY" if kind == "CERTIFICATE" else b"CERTIFICATE"
        swapped = " (certificate and key swapped?)" if any(other in label for label in labels) else ""
        raise ValueError(f"{option} {path!r}: holds {held}; expected a {kind}{swapped}")
    return data


def _check_pair(cert: str, key: str, ca: str | None) -> None:
    """Load the files as a TLS server would (Python's ssl, OpenSSL as in gRPC); ValueError naming the file
    that is wrong: a certificate or key that does not parse, a key that is not the certificate's."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    for option, path in (("--grpc-server-cert", cert), ("--grpc-server-cacert", ca)):
        if path is None:
            continue
        try:
            ctx.load_verify_locations(cafile=path)
        except ssl.SSLError as e:
            raise ValueError(f"{option} {path!r}: not a valid certificate ({e.reason or e})") from None
    try:
        ctx.load_cert_chain(cert, key, password=lambda: b"")
    except ssl.SSLError as e:
        if "KEY_VALUES_MISMATCH" in str(e) or e.reason == "KEY_VALUES_MISMATCH":
            raise ValueError(f"--grpc-server-key {key!r}: not the key of the certificate in {cert!r}") from None
        raise ValueError(f"--grpc-server-key {key!r}: not a valid unencrypted private key ({e.reason or e})") from None


def server_tls(ssl_on: bool, cacert: str | None, cert: str | None, key: str | None,
               client_auth: bool) -> ServerTls | None:
    """The TLS settings of the command line (None: plain TCP); ValueError names a bad combination or the
    file that is wrong and how."""
    given = [name for name, v in (("--grpc-server-cacert", cacert), ("--grpc-server-cert", cert),
                                  ("--grpc-server-key", key)) if v]
    if client_auth:
        given.append("--grpc-server-with-client-auth")
    if not ssl_on:
        if given:
            raise ValueError(f"{given[0]} needs --grpc-server-ssl")
        return None
    if not cert or not key:
        raise ValueError("--grpc-server-ssl needs --grpc-server-cert and --grpc-server-key")
    if client_auth and not cacert:
        raise ValueError("--grpc-server-with-client-auth needs --grpc-server-cacert (the CA of client certificates)")
    tls = ServerTls(_read("--grpc-server-cert", cert, "CERTIFICATE"), _read("--grpc-server-key", key, "PRIVATE KEY"),
                    _read("--grpc-server-cacert", cacert, "CERTIFICATE") if cacert else None, client_auth)
    _check_pair(cert, key, cacert)
    return tls
