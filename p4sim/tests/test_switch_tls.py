"""p4sim-switch's TLS options (simple_switch_grpc's flags): what combinations it refuses, and why."""

from pathlib import Path

import pytest

from p4rt.tests.pki import OPENSSL, Pki, make_pki
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


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    if OPENSSL is None:
        pytest.skip("needs openssl to make test certificates")
    return make_pki(tmp_path_factory.mktemp("pki"))


def test_a_good_certificate_and_key_are_taken(pki: Pki) -> None:
    tls = server_tls(True, str(pki.ca), str(pki.server_cert), str(pki.server_key), True)
    assert tls is not None and tls.require_client_auth and tls.ca == pki.ca.read_bytes()
    assert tls.cert == pki.server_cert.read_bytes() and tls.key == pki.server_key.read_bytes()


def test_bad_files_are_named_with_what_is_wrong(pki: Pki, tmp_path: Path) -> None:
    """Each once ended as "cannot listen", blaming the address; /dev/zero was read until memory ran out."""
    junk = tmp_path / "junk.pem"
    junk.write_bytes(b"-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n")
    cert, key = str(pki.server_cert), str(pki.server_key)
    cases = [
        ((None, str(junk), key), rf"--grpc-server-cert '{junk}': not a valid certificate"),
        ((None, cert, str(pki.client_key)), rf"--grpc-server-key '{pki.client_key}': not the key of the certificate "
                                            rf"in '{cert}'"),
        ((None, key, cert), rf"--grpc-server-cert '{key}': holds PRIVATE KEY; expected a CERTIFICATE \(certificate "
                            r"and key swapped\?\)"),
        ((None, cert, cert), rf"--grpc-server-key '{cert}': holds CERTIFICATE; expected a PRIVATE KEY \(certificate "
                             r"and key swapped\?\)"),
        ((str(junk), cert, key), rf"--grpc-server-cacert '{junk}': not a valid certificate"),
        ((None, "/dev/zero", key), "--grpc-server-cert '/dev/zero': larger than 1048576 bytes; expected a PEM file"),
        ((None, cert, str(tmp_path / "nope.pem")), r"--grpc-server-key '.*nope.pem': cannot read"),
        ((None, cert, str(junk)), rf"--grpc-server-key '{junk}': holds CERTIFICATE; expected a PRIVATE KEY"),
    ]
    for (ca, c, k), message in cases:
        with pytest.raises(ValueError, match=message):
            server_tls(True, ca, c, k, False)
