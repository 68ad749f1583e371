"""Stratum's BfPipelineConfig: the device config a Tofino P4Runtime server (stratum_bfrt) takes.

bf-p4c writes, for a program, `<prog>.conf` (JSON: the program name, its `bfrt.json`, and per
pipeline profile a `context.json`, a `tofino.bin` and the pipes it applies to). Stratum's
`bf_pipeline_builder` packs those files into a `BfPipelineConfig` protobuf, which goes into the
`p4_device_config` of SetForwardingPipelineConfig; this module does the same packing.

No maintained Python package ships Stratum's protobufs, so the message is defined here from
stratum/hal/lib/barefoot/bf.proto (github.com/stratum/stratum, commit 013ea70, Apache-2.0), field
for field, so the bytes on the wire are Stratum's:

    package stratum.hal.barefoot;
    message BfPipelineConfig {
      message Profile {
        string profile_name = 1; bytes context = 2; bytes binary = 3; repeated uint32 pipe_scope = 4;
      }
      string p4_name = 1; bytes bfruntime_info = 2; repeated Profile profiles = 3;
    }
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto


def _message_class() -> Any:
    fdp = descriptor_pb2.FileDescriptorProto(name="stratum/hal/lib/barefoot/bf.proto",
                                             package="stratum.hal.barefoot", syntax="proto3")
    msg = fdp.message_type.add(name="BfPipelineConfig")
    prof = msg.nested_type.add(name="Profile")
    for number, name, kind, label in ((1, "profile_name", _F.TYPE_STRING, _F.LABEL_OPTIONAL),
                                      (2, "context", _F.TYPE_BYTES, _F.LABEL_OPTIONAL),
                                      (3, "binary", _F.TYPE_BYTES, _F.LABEL_OPTIONAL),
                                      (4, "pipe_scope", _F.TYPE_UINT32, _F.LABEL_REPEATED)):
        prof.field.add(name=name, number=number, type=kind, label=label)
    msg.field.add(name="p4_name", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    msg.field.add(name="bfruntime_info", number=2, type=_F.TYPE_BYTES, label=_F.LABEL_OPTIONAL)
    msg.field.add(name="profiles", number=3, type=_F.TYPE_MESSAGE, label=_F.LABEL_REPEATED,
                  type_name=".stratum.hal.barefoot.BfPipelineConfig.Profile")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    desc = pool.FindMessageTypeByName("stratum.hal.barefoot.BfPipelineConfig")
    get = getattr(message_factory, "GetMessageClass", None)  # protobuf >= 4.21
    return get(desc) if get is not None else message_factory.MessageFactory(pool).GetPrototype(desc)


BfPipelineConfig = _message_class()


def _read(conf: Path, what: str, value: object) -> bytes:
    if not isinstance(value, str) or not value:
        raise ValueError(f"bf-p4c conf {str(conf)!r}: {what} is {value!r}, expected a file name")
    path = Path(value)
    if not path.is_absolute():
        path = conf.parent / path  # bf-p4c writes paths relative to its output folder
    try:
        return path.read_bytes()
    except (OSError, ValueError) as e:  # ValueError: a NUL in the name
        raise ValueError(f"bf-p4c conf {str(conf)!r}: {what} {str(path)!r}: cannot read "
                         f"({getattr(e, 'strerror', None) or e})") from None


def _mapping(conf: Path, what: str, value: object) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"bf-p4c conf {str(conf)!r}: {what} is {value!r:.60}, expected a JSON object")
    return value


def build_bf_pipeline_config(conf_path: str | Path) -> Any:
    """The BfPipelineConfig of bf-p4c's output, from its `<prog>.conf`; ValueError names what is wrong."""
    conf = Path(conf_path)
    try:
        doc = json.loads(conf.read_text())
    except OSError as e:
        raise ValueError(f"bf-p4c conf {str(conf)!r}: cannot read ({e.strerror})") from None
    except (ValueError, RecursionError) as e:  # RecursionError: nested deeper than the JSON reader goes
        raise ValueError(f"bf-p4c conf {str(conf)!r}: not JSON ({str(e).splitlines()[0][:100]})") from None
    devices = doc.get("p4_devices") if isinstance(doc, dict) else None
    if not isinstance(devices, list) or len(devices) != 1:
        raise ValueError(f"bf-p4c conf {str(conf)!r}: expected one entry in p4_devices (Stratum drives one device)")
    programs = devices[0].get("p4_programs") if isinstance(devices[0], dict) else None
    if not isinstance(programs, list) or len(programs) != 1:
        raise ValueError(f"bf-p4c conf {str(conf)!r}: expected one entry in p4_programs "
                         "(a BfPipelineConfig holds one program)")
    program = _mapping(conf, "p4_programs[0]", programs[0])
    cfg = BfPipelineConfig()
    name = program.get("program-name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"bf-p4c conf {str(conf)!r}: program-name is {name!r}, expected the program's name")
    cfg.p4_name = name
    cfg.bfruntime_info = _read(conf, "bfrt-config", program.get("bfrt-config"))
    pipelines = program.get("p4_pipelines")
    if not isinstance(pipelines, list) or not pipelines:
        raise ValueError(f"bf-p4c conf {str(conf)!r}: no p4_pipelines")
    for i, pipe in enumerate(pipelines):
        pipe = _mapping(conf, f"p4_pipelines[{i}]", pipe)
        prof = cfg.profiles.add()
        prof.profile_name = str(pipe.get("p4_pipeline_name", ""))
        if not prof.profile_name:
            raise ValueError(f"bf-p4c conf {str(conf)!r}: a pipeline without p4_pipeline_name")
        scope = pipe.get("pipe_scope", [])
        if not isinstance(scope, list) or not all(type(p) is int and 0 <= p < 2**32 for p in scope):
            raise ValueError(f"bf-p4c conf {str(conf)!r}: pipe_scope of {prof.profile_name} is {scope!r}, "
                             "expected a list of pipe numbers")
        prof.pipe_scope.extend(scope)
        prof.context = _read(conf, f"context of {prof.profile_name}", pipe.get("context"))
        prof.binary = _read(conf, f"config of {prof.profile_name}", pipe.get("config"))
    return cfg


def pack_bf_pipeline_config(conf_path: str | Path) -> bytes:
    """The serialized BfPipelineConfig: the p4_device_config to push to Stratum on Tofino."""
    return build_bf_pipeline_config(conf_path).SerializeToString(deterministic=True)
