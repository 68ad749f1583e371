"""p4sim-switch's TLS options (simple_switch_grpc's flags): what combinations it refuses, and why."""

from pathlib import Path

import pytest

from p4sim.switch.p4runtime.tls import server_tls


def test_plain_tcp_without_flags() -> None:
    assert server_tls(False, None, None, None, False) is None


@pytest.mark.parametrize(("args", "message"), [
    ((False, None, "c.pem", None, False), "--grpc-server-cert needs --grpc-server-ssl"),
    ((False, None, None, None, True), "--grpc-server-with-client-auth needs --grpc-server-ssl"),
    ((True, None, "c.pem", None, False), "--grpc-server-ssl needs --grpc-server-cert and --grpc-server-key"),
    ((True, None, "c.pem", "k.pem", True), "--grpc-server-with-client-auth needs --grpc-server-cacert"),
])
def test_bad_combinations(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        server_tls(*args)


def test_files_are_read_and_checked(tmp_path: Path) -> None:
    pem = b"-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n"
    (tmp_path / "c.pem").write_bytes(pem)
    (tmp_path / "k.pem").write_bytes(b"garbage")
    with pytest.raises(ValueError, match=r"--grpc-server-key '.*k.pem': not a PEM file"):
        server_tls(True, None, str(tmp_path / "c.pem"), str(tmp_path / "k.pem"), False)
    with pytest.raises(ValueError, match=r"--grpc-server-cacert '.*nope.pem': cannot read"):
        server_tls(True, str(tmp_path / "nope.pem"), str(tmp_path / "c.pem"), str(tmp_path / "c.pem"), False)
    tls = server_tls(True, str(tmp_path / "c.pem"), str(tmp_path / "c.pem"), str(tmp_path / "c.pem"), True)
    assert tls is not None and tls.require_client_auth and tls.ca == pem and tls.cert == pem
