"""BfPipelineConfig packing of bf-p4c's output: Stratum's wire format, and what it refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p4rt.bfconfig import BfPipelineConfig, build_bf_pipeline_config, pack_bf_pipeline_config


def bf_output(d: Path, programs: int = 1, scope: object = (0, 1)) -> Path:
    """A bf-p4c output folder in its shape: <prog>.conf, bfrt.json, pipe/context.json, pipe/tofino.bin."""
    (d / "pipe").mkdir(parents=True)
    (d / "bfrt.json").write_bytes(b'{"tables":[]}')
    (d / "pipe" / "context.json").write_bytes(b'{"c":1}')
    (d / "pipe" / "tofino.bin").write_bytes(bytes([0, 1, 2, 255]))
    prog = {"program-name": "fabric", "bfrt-config": "bfrt.json",
            "p4_pipelines": [{"p4_pipeline_name": "pipe", "context": "pipe/context.json",
                              "config": str(d / "pipe" / "tofino.bin"), "pipe_scope": list(scope)}]}
    conf = d / "fabric.conf"
    conf.write_text(json.dumps({"chip_list": [], "p4_devices": [{"device-id": 0, "p4_programs": [prog] * programs}]}))
    return conf


def test_wire_bytes_are_stratums(tmp_path: Path) -> None:
    data = pack_bf_pipeline_config(bf_output(tmp_path))
    # Field by field (bf.proto): 1 p4_name, 2 bfruntime_info, 3 profiles { 1 profile_name, 2 context,
    # 3 binary, 4 pipe_scope (proto3: packed varints) }.
    profile = (b"\x0a\x04pipe" + b"\x12\x07" + b'{"c":1}' + b"\x1a\x04\x00\x01\x02\xff" + b"\x22\x02\x00\x01")
    expected = (b"\x0a\x06fabric" + b"\x12\x0d" + b'{"tables":[]}' + b"\x1a" + bytes([len(profile)]) + profile)
    assert data == expected


def test_round_trip(tmp_path: Path) -> None:
    cfg = BfPipelineConfig.FromString(pack_bf_pipeline_config(bf_output(tmp_path, scope=(0, 1, 2, 3))))
    assert cfg.p4_name == "fabric" and cfg.bfruntime_info == b'{"tables":[]}'
    assert [(p.profile_name, list(p.pipe_scope), p.context, p.binary) for p in cfg.profiles] == [
        ("pipe", [0, 1, 2, 3], b'{"c":1}', bytes([0, 1, 2, 255]))]
    assert BfPipelineConfig.DESCRIPTOR.full_name == "stratum.hal.barefoot.BfPipelineConfig"


def test_refusals(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="expected one entry in p4_programs"):
        build_bf_pipeline_config(bf_output(tmp_path / "a", programs=2))
    with pytest.raises(ValueError, match=r"pipe_scope of pipe is \['x'\]"):
        build_bf_pipeline_config(bf_output(tmp_path / "b", scope=["x"]))
    conf = bf_output(tmp_path / "c")
    (tmp_path / "c" / "pipe" / "tofino.bin").unlink()
    with pytest.raises(ValueError, match=r"config of pipe '.*tofino.bin': cannot read"):
        build_bf_pipeline_config(conf)
    (tmp_path / "d.conf").write_text("{nope")
    with pytest.raises(ValueError, match="not JSON"):
        build_bf_pipeline_config(tmp_path / "d.conf")
    with pytest.raises(ValueError, match="cannot read"):
        build_bf_pipeline_config(tmp_path / "missing.conf")
