"""The one error type at the P4Runtime client boundary: gRPC code plus per-update p4.v1.Error details."""

from __future__ import annotations

from dataclasses import dataclass, field

import grpc

from p4rt.proto import code_pb2, p4r, status_pb2

_DETAILS_KEY = "grpc-status-details-bin"


@dataclass(slots=True)
class UpdateError:
    """The error of one update in a batched Write (index into the request's updates)."""

    index: int
    code: int  # google.rpc.Code
    message: str
    space: str = ""
    error_code: int = 0

    @property
    def code_name(self) -> str:
        """The google.rpc.Code name, e.g. "ALREADY_EXISTS"."""
        return code_pb2.Code.Name(self.code) if self.code in code_pb2.Code.values() else str(self.code)

    def __str__(self) -> str:
        return f"update {self.index}: {self.code_name}: {self.message}"


@dataclass(slots=True)
class P4RuntimeError(Exception):
    """A failed P4Runtime call: gRPC status code, message and, for Write, each failed update."""

    code: grpc.StatusCode
    message: str
    details: list[UpdateError] = field(default_factory=list)
    operation: str = ""

    def __str__(self) -> str:
        head = f"{self.operation + ': ' if self.operation else ''}{self.code.name}: {self.message}"
        if self.details:
            shown = "; ".join(str(d) for d in self.details[:5])
            more = f" (+{len(self.details) - 5} more)" if len(self.details) > 5 else ""
            head += f" [{shown}{more}]"
        return head

    @classmethod
    def from_rpc_error(cls, exc: grpc.RpcError, operation: str = "", index_offset: int = 0) -> P4RuntimeError:
        """Convert a grpc.RpcError, decoding the per-update errors of 'grpc-status-details-bin'."""
        code = exc.code() if hasattr(exc, "code") else grpc.StatusCode.UNKNOWN
        message = exc.details() if hasattr(exc, "details") else str(exc)
        details: list[UpdateError] = []
        trailers = exc.trailing_metadata() if hasattr(exc, "trailing_metadata") else None
        for key, value in trailers or ():
            if key != _DETAILS_KEY:
                continue
            status = status_pb2.Status.FromString(value)
            for i, anyd in enumerate(status.details):
                err = p4r.Error()
                if not anyd.Unpack(err):
                    continue
                if err.canonical_code != code_pb2.OK:
                    details.append(UpdateError(i + index_offset, err.canonical_code, err.message,
                                               err.space, err.code))
        return cls(code or grpc.StatusCode.UNKNOWN, message or "", details, operation)


def applied(exc: BaseException, n: int, unknown: bool, ok_code: int | None = None) -> list[bool]:
    """For each of the `n` updates of a Write that raised `exc`: did it take effect? Those its per-update
    errors name did not (unless with `ok_code`, e.g. a DELETE's NOT_FOUND: gone all the same); the
    others did; `unknown` for every one when it names none (the switch did not say: a lost connection)."""
    details = exc.details if isinstance(exc, P4RuntimeError) else []
    if not details:
        return [unknown] * n
    failed = {d.index for d in details if d.code != ok_code}
    return [i not in failed for i in range(n)]
