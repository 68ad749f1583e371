"""P4Runtime errors: one exception type carrying a google.rpc code, and the batch error status.

A failed Write batch is reported as PI does it (P4Runtime spec section "Error Reporting"): the RPC
status is UNKNOWN and its details hold one p4.v1.Error per update, OK for the updates that succeeded.
"""

from __future__ import annotations

import grpc

from p4sim.switch.p4runtime.proto import code_pb2, p4r, status_pb2

OK = code_pb2.OK
UNKNOWN = code_pb2.UNKNOWN
INVALID_ARGUMENT = code_pb2.INVALID_ARGUMENT
NOT_FOUND = code_pb2.NOT_FOUND
ALREADY_EXISTS = code_pb2.ALREADY_EXISTS
PERMISSION_DENIED = code_pb2.PERMISSION_DENIED
RESOURCE_EXHAUSTED = code_pb2.RESOURCE_EXHAUSTED
FAILED_PRECONDITION = code_pb2.FAILED_PRECONDITION
OUT_OF_RANGE = code_pb2.OUT_OF_RANGE
UNIMPLEMENTED = code_pb2.UNIMPLEMENTED
UNAVAILABLE = code_pb2.UNAVAILABLE
INTERNAL = code_pb2.INTERNAL

# google.rpc.Code and grpc.StatusCode share their numbers.
_GRPC_CODES = {c.value[0]: c for c in grpc.StatusCode}


def grpc_code(code: int) -> grpc.StatusCode:
    """Return the grpc.StatusCode with the number of a google.rpc code."""
    return _GRPC_CODES.get(code, grpc.StatusCode.UNKNOWN)


class P4RuntimeError(Exception):
    """An error with a google.rpc code, raised while handling one update or one RPC."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{code_pb2.Code.Name(self.code)}: {self.message}"


def invalid(message: str) -> P4RuntimeError:
    """Return an INVALID_ARGUMENT error."""
    return P4RuntimeError(INVALID_ARGUMENT, message)


def internal(exc: Exception) -> P4RuntimeError:
    """Return INTERNAL for an unexpected exception, with its type and message (never an empty message)."""
    return P4RuntimeError(INTERNAL, f"internal error: {type(exc).__name__}: {exc}")


class RpcStatus(grpc.Status):
    """A concrete grpc.Status for context.abort_with_status, with google.rpc.Status as binary details."""

    def __init__(self, status: status_pb2.Status) -> None:
        self.code = grpc_code(status.code)
        self.details = status.message
        self.trailing_metadata = (("grpc-status-details-bin", status.SerializeToString()),)


# gRPC clients refuse trailing metadata above 16 KiB by default (grpc.max_metadata_size). Each Error
# costs ~40 bytes without its message; messages are kept while the whole status fits in METADATA_FIT,
# later failed updates carry their code only. A batch of more than ~350 updates cannot fit at all (one
# Error per update, as the spec wants): clients writing such batches must raise grpc.max_metadata_size,
# as they must with PI, and they then get messages within LARGE_MESSAGE_BUDGET.
METADATA_FIT = 15000
ERROR_COST = 40
LARGE_MESSAGE_BUDGET = 65536


def batch_status(results: list[P4RuntimeError | None]) -> RpcStatus:
    """Return the UNKNOWN status of a failed batch, with one p4.v1.Error per update in its details."""
    status = status_pb2.Status(code=UNKNOWN)
    failed = 0
    budget = METADATA_FIT - ERROR_COST * len(results)
    if budget <= 0:
        budget = LARGE_MESSAGE_BUDGET
    for err in results:
        error = p4r.Error()
        if err is None:
            error.canonical_code = OK
        else:
            failed += 1
            error.canonical_code = err.code
            if budget >= len(err.message) + 4:
                error.message = err.message
                budget -= len(err.message) + 4
        status.details.add().Pack(error)
    status.message = f"Write failure ({failed} of {len(results)} updates failed)"
    return RpcStatus(status)


def simple_status(err: P4RuntimeError) -> RpcStatus:
    """Return the status of an RPC that failed as a whole (no per-update details)."""
    return RpcStatus(status_pb2.Status(code=err.code, message=err.message))


def from_state_error(err: Exception) -> P4RuntimeError:
    """Map a p4sim runtime-state error (p4sim.switch.values) to the P4Runtime code PI would give."""
    from p4sim.switch import values  # the Device's errors; imported here to keep this module leaf-level

    codes = (
        (values.AlreadyExists, ALREADY_EXISTS),
        (values.NotFound, NOT_FOUND),
        (values.ReadOnly, PERMISSION_DENIED),
        (values.ResourceExhausted, RESOURCE_EXHAUSTED),
        (values.InUse, FAILED_PRECONDITION),
    )
    for cls, code in codes:
        if isinstance(err, cls):
            return P4RuntimeError(code, str(err))
    return P4RuntimeError(INVALID_ARGUMENT, str(err))


class RpcAbort(Exception):
    """Ends an RPC with a status that carries details (a failed Write batch)."""

    def __init__(self, status: RpcStatus) -> None:
        super().__init__(status.details)
        self.status = status
