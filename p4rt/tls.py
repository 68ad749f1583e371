"""TLS options of a P4Runtime client: the server's CA, and a client certificate for mutual TLS.

A switch on a real network is not on loopback: Stratum (and simple_switch_grpc with
`--grpc-server-ssl`) serve P4Runtime over TLS, optionally requiring a client certificate.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import grpc


def _read_pem(what: str, path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ValueError(f"{what} {str(path)!r}: cannot read ({e.strerror})") from None
    if b"-----BEGIN " not in data:
        raise ValueError(f"{what} {str(path)!r}: not a PEM file (no '-----BEGIN' line)")
    return data


@dataclass(frozen=True, slots=True)
class TlsOptions:
    """PEM files: the CA the server's certificate must chain to (None: the system's roots), and the
    client's certificate and key (both or neither); server_name overrides the name checked in the
    server's certificate (default: the host of the address)."""

    ca_cert: Path | None = None
    cert: Path | None = None
    key: Path | None = None
    server_name: str | None = None

    def __post_init__(self) -> None:
        if (self.cert is None) != (self.key is None):
            raise ValueError("TLS client certificate and key go together: give both --tls-cert and --tls-key, or neither")

    @classmethod
    def from_args(cls, ca_cert: str | None, cert: str | None, key: str | None,
                  server_name: str | None = None) -> TlsOptions | None:
        """From command-line values; None when no TLS option is given (plain TCP)."""
        if not (ca_cert or cert or key or server_name):
            return None
        return cls(Path(ca_cert) if ca_cert else None, Path(cert) if cert else None,
                   Path(key) if key else None, server_name)

    def credentials(self) -> grpc.ChannelCredentials:
        """gRPC channel credentials; ValueError names an unreadable or non-PEM file."""
        ca = _read_pem("TLS CA certificate", self.ca_cert) if self.ca_cert else None
        cert = _read_pem("TLS client certificate", self.cert) if self.cert else None
        key = _read_pem("TLS client key", self.key) if self.key else None
        return grpc.ssl_channel_credentials(root_certificates=ca, private_key=key, certificate_chain=cert)

    def channel_options(self) -> list[tuple[str, str]]:
        """Channel options: the server name to verify, when overridden."""
        return [("grpc.ssl_target_name_override", self.server_name)] if self.server_name else []
