"""The P4Runtime protobuf modules, aliased in one place (STYLE.md)."""

from google.protobuf import text_format
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2 as p4i
from p4.v1 import p4runtime_pb2 as p4r
from p4.v1 import p4runtime_pb2_grpc as p4r_grpc

__all__ = ["code_pb2", "p4i", "p4r", "p4r_grpc", "status_pb2", "text_format"]
