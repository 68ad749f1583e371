"""TLS for p4sim-switch's P4Runtime server, with simple_switch_grpc's options.

bmv2 (simple_switch_grpc 1.15.5) takes `--grpc-server-ssl`, `--grpc-server-cacert`,
`--grpc-server-cert`, `--grpc-server-key` and `--grpc-server-with-client-auth`; p4sim-switch takes
the same, so a harness starts either switch with TLS by the same command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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


def _read(option: str, path: str) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"{option} {path!r}: cannot read ({e.strerror})") from None
    if b"-----BEGIN " not in data:
        raise ValueError(f"{option} {path!r}: not a PEM file (no '-----BEGIN' line)")
    return data


def server_tls(ssl: bool, cacert: str | None, cert: str | None, key: str | None,
               client_auth: bool) -> ServerTls | None:
    """The TLS settings of the command line (None: plain TCP); ValueError names a bad combination."""
    given = [name for name, v in (("--grpc-server-cacert", cacert), ("--grpc-server-cert", cert),
                                  ("--grpc-server-key", key)) if v]
    if client_auth:
        given.append("--grpc-server-with-client-auth")
    if not ssl:
        if given:
            raise ValueError(f"{given[0]} needs --grpc-server-ssl")
        return None
    if not cert or not key:
        raise ValueError("--grpc-server-ssl needs --grpc-server-cert and --grpc-server-key")
    if client_auth and not cacert:
        raise ValueError("--grpc-server-with-client-auth needs --grpc-server-cacert (the CA of client certificates)")
    return ServerTls(_read("--grpc-server-cert", cert), _read("--grpc-server-key", key),
                     _read("--grpc-server-cacert", cacert) if cacert else None, client_auth)
