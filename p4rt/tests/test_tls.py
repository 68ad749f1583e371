"""The client's TLS options against a switch started with simple_switch_grpc's TLS flags: p4sim-switch,
and simple_switch_grpc itself where installed (same flags)."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulation.switchproc import start_switch
from p4rt.client import P4RuntimeClient
from p4rt.errors import P4RuntimeError
from p4rt.tests.pki import OPENSSL, Pki, make_pki
from p4rt.tls import TlsOptions
from p4sim.target import REAL_SWITCH, Target, label, pairings

RT = Path(__file__).resolve().parents[2] / "p4sim" / "switch" / "p4runtime" / "testdata"
pytestmark = pytest.mark.skipif(OPENSSL is None, reason="needs openssl to make test certificates")


def _switches() -> list[Target]:
    """p4sim's switch, and bmv2's when installed (one target per switch)."""
    out: dict[str, Target] = {}
    for t in pairings():
        out.setdefault(t.switch, t)
    return list(out.values())


SWITCHES = _switches()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def _flags(pki: Pki, client_auth: bool) -> tuple[str, ...]:
    flags = ("--grpc-server-ssl", "--grpc-server-cert", str(pki.server_cert), "--grpc-server-key", str(pki.server_key),
             "--grpc-server-cacert", str(pki.ca))
    return flags + (("--grpc-server-with-client-auth",) if client_auth else ())


def _push(address: str, tls: TlsOptions | None, timeout: float = 10.0) -> int:
    """Connect, push a pipeline, read its cookie back; the cookie."""
    c = P4RuntimeClient(address, device_id=1, election_id=(0, 3), tls=tls, timeout=timeout)
    try:
        assert c.connect(timeout=timeout)
        c.set_pipeline_files(RT / "rt_basic.p4info.txtpb", RT / "rt_basic.json", cookie=77)
        c.pipeline_cookie = None
        assert c.get_pipeline() is not None  # read back over the same TLS channel
        return c.pipeline_cookie or 0
    finally:
        c.close()


@pytest.mark.parametrize("target", SWITCHES, ids=[label(t.switch) for t in SWITCHES])
def test_server_tls(target: Target, pki: Pki) -> None:
    sw = start_switch(target, None, {}, device_id=1, target_options=_flags(pki, client_auth=False))
    try:
        assert _push(sw.grpc_addr, TlsOptions(ca_cert=pki.ca)) == 77
        # the name in the certificate is checked: 127.0.0.1 is in it, "wrong.example" is not
        with pytest.raises(P4RuntimeError, match="over TLS"):
            _push(sw.grpc_addr, TlsOptions(ca_cert=pki.ca, server_name="wrong.example"), timeout=2)
        with pytest.raises(P4RuntimeError, match="over TLS"):
            _push(sw.grpc_addr, TlsOptions(ca_cert=pki.other_ca), timeout=2)
        with pytest.raises(P4RuntimeError):
            _push(sw.grpc_addr, None, timeout=2)  # plain TCP to a TLS server
    finally:
        sw.stop()


@pytest.mark.parametrize("target", SWITCHES, ids=[label(t.switch) for t in SWITCHES])
def test_mutual_tls(target: Target, pki: Pki) -> None:
    sw = start_switch(target, None, {}, device_id=1, target_options=_flags(pki, client_auth=True))
    try:
        assert _push(sw.grpc_addr, TlsOptions(ca_cert=pki.ca, cert=pki.client_cert, key=pki.client_key)) == 77
        with pytest.raises(P4RuntimeError):
            _push(sw.grpc_addr, TlsOptions(ca_cert=pki.ca), timeout=2)  # no client certificate
    finally:
        sw.stop()


def test_bmv2_is_tested_where_installed() -> None:
    import shutil
    assert (shutil.which(REAL_SWITCH) is not None) == any(label(t.switch) == "bmv2" for t in SWITCHES)


def test_options_are_checked(tmp_path: Path) -> None:
    assert TlsOptions.from_args(None, None, None) is None
    with pytest.raises(ValueError, match="give both --tls-cert and --tls-key"):
        TlsOptions.from_args(None, str(tmp_path / "c.pem"), None)
    (tmp_path / "ca.pem").write_text("not a certificate\n")
    with pytest.raises(ValueError, match=r"TLS CA certificate '.*ca.pem': not a PEM file"):
        TlsOptions(ca_cert=tmp_path / "ca.pem").credentials()
    with pytest.raises(ValueError, match=r"TLS CA certificate '.*missing.pem': cannot read"):
        TlsOptions(ca_cert=tmp_path / "missing.pem").credentials()
    assert TlsOptions(server_name="sw1").channel_options() == [("grpc.ssl_target_name_override", "sw1")]
