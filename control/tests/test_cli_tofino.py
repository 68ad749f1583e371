"""--target tofino (Stratum's BfPipelineConfig from bf-p4c's output) and the TLS options, without switches."""

from __future__ import annotations

from pathlib import Path

import pytest

from control import cli
from control.__main__ import build_parser, main
from control.events import EventLog
from control.switch import Pipeline
from p4rt.bfconfig import BfPipelineConfig, pack_bf_pipeline_config
from p4rt.testing import SAMPLE_P4INFO as P4INFO
from p4rt.tests.test_bfconfig import bf_output
from p4rt.tls import TlsOptions
from topo.generators import ucd4
from topo.model import save


@pytest.fixture
def tofino_build(tmp_path: Path) -> Path:
    out = tmp_path / "tofino"
    bf_output(out)
    (out / "fabric.p4info.txtpb").write_text(P4INFO)
    return out


def test_tofino_pipeline_is_a_bf_pipeline_config(tofino_build: Path) -> None:
    p = Pipeline.for_target("tofino", "fabric", tofino_build)
    assert p.config == pack_bf_pipeline_config(tofino_build / "fabric.conf")
    assert BfPipelineConfig.FromString(p.config).p4_name == "fabric"
    assert p.schema.tables["route"].preamble.name == "FabricIngress.route"
    assert p.cookie == Pipeline.for_target("tofino", "fabric", tofino_build).cookie


def test_unknown_target_and_missing_output(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="target 'tofino3': expected one of bmv2, tofino"):
        Pipeline.for_target("tofino3", "fabric", tmp_path)
    with pytest.raises(ValueError, match=r"fabric.p4info.txtpb': missing; expected bf-p4c's output"):
        Pipeline.for_target("tofino", "fabric", tmp_path)


def test_cli_target_and_tls_reach_the_sessions(tofino_build: Path, tmp_path: Path) -> None:
    topo = ucd4()
    save(topo, tmp_path / "ucd4.json")
    args = build_parser().parse_args(["status", "--topo", str(tmp_path / "ucd4.json"), "--target", "tofino",
                                      "--build", str(tofino_build), "--tls-ca", "ca.pem", "--tls-cert", "c.pem",
                                      "--tls-key", "k.pem", "--tls-server-name", "sw"])
    with cli._network(args, topo, EventLog(None)) as net:
        sess = next(iter(net.sessions.values()))
        assert sess.client.tls == TlsOptions(Path("ca.pem"), Path("c.pem"), Path("k.pem"), "sw")
        assert BfPipelineConfig.FromString(sess.pipeline.config).p4_name == "fabric"


def test_half_a_client_certificate_is_a_one_line_error(tofino_build: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    save(ucd4(), tmp_path / "ucd4.json")
    assert main(["status", "--topo", str(tmp_path / "ucd4.json"), "--target", "tofino", "--build",
                 str(tofino_build), "--tls-cert", "c.pem"]) == 2
    assert capsys.readouterr().err == ("error: TLS client certificate and key go together: give both --tls-cert "
                                       "and --tls-key, or neither\n")
