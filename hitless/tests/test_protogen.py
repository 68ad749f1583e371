"""hitless/protogen.py: p4runtime's modules regenerated from the descriptors they carry, for upb."""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as metadata
import zipfile
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2
from google.protobuf.internal import api_implementation
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from hitless import protogen

# the shape of protoc < 3.19's code, which the p4runtime wheels on PyPI ship
OLD_STYLE = '''DESCRIPTOR = _descriptor.FileDescriptor(
  name='p4/v1/x.proto',
  package='p4.v1',
  syntax='proto3',
  serialized_options=b'Z$github.com/p4lang/p4runtime/go/p4/v1',
  create_key=_descriptor._internal_create_key,
  serialized_pb=%r
  ,
  dependencies=[])
'''


def test_the_environment_runs_upb_with_regenerated_modules() -> None:
    assert api_implementation.Type() == "upb"
    assert metadata.version("p4runtime").endswith(f"+{protogen.LOCAL_LABEL}")
    assert protogen.STAMP.read_text() == protogen.stamp_text()  # `make setup` left it current
    assert protogen.ensure().endswith("up to date (1.4.1+upb)")
    req = p4runtime_pb2.WriteRequest(device_id=1)
    req.updates.add().entity.table_entry.table_id = 7
    assert p4runtime_pb2.WriteRequest.FromString(req.SerializeToString()) == req


def test_the_embedded_descriptor_is_read_from_old_and_new_code() -> None:
    data = p4runtime_pb2.DESCRIPTOR.serialized_pb
    old = OLD_STYLE % data
    assert protogen.is_old_style(old)
    assert protogen.embedded_descriptor(old) == data
    new = Path(p4runtime_pb2.__file__).read_text()
    assert not protogen.is_old_style(new)
    assert protogen.embedded_descriptor(new) == data
    with pytest.raises(ValueError, match="x.py: no serialized FileDescriptorProto"):
        protogen.embedded_descriptor("import os\n", "x.py")


def test_the_descriptor_set_adds_what_the_files_import() -> None:
    protos = {"p4/v1/p4runtime.proto": p4runtime_pb2.DESCRIPTOR.serialized_pb,
              "p4/config/v1/p4info.proto": p4info_pb2.DESCRIPTOR.serialized_pb}
    fds = descriptor_pb2.FileDescriptorSet.FromString(protogen.descriptor_set(protos))
    assert {f.name for f in fds.file} == {
        "p4/v1/p4runtime.proto", "p4/config/v1/p4info.proto", "p4/config/v1/p4types.proto",
        "p4/v1/p4data.proto", "google/protobuf/any.proto", "google/rpc/status.proto"}


def test_regenerate_makes_a_wheel_with_the_same_descriptors(tmp_path: Path) -> None:
    wheel, protos = protogen.regenerate(tmp_path)
    assert protos == ["p4/config/v1/p4info.proto", "p4/config/v1/p4types.proto", "p4/v1/p4data.proto",
                      "p4/v1/p4runtime.proto"]
    assert wheel.name == "p4runtime-1.4.1+upb-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        assert {"p4/__init__.py", "p4/v1/p4runtime_pb2.py", "p4/v1/p4runtime_pb2.pyi",
                "p4/v1/p4runtime_pb2_grpc.py", "p4runtime-1.4.1+upb.dist-info/METADATA"} <= names
        assert "Version: 1.4.1+upb\n" in whl.read("p4runtime-1.4.1+upb.dist-info/METADATA").decode()
        record = whl.read("p4runtime-1.4.1+upb.dist-info/RECORD").decode().splitlines()
        for line in record:
            name, digest, size = line.rsplit(",", 2)
            if name.endswith("RECORD"):
                continue
            data = whl.read(name)
            assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert int(size) == len(data)
        source = whl.read("p4/v1/p4runtime_pb2.py").decode()
        assert "class P4RuntimeStub" in whl.read("p4/v1/p4runtime_pb2_grpc.py").decode()
    assert protogen.embedded_descriptor(source) == p4runtime_pb2.DESCRIPTOR.serialized_pb
