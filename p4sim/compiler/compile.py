"""The compiler driver: P4_16 source to bmv2 JSON and P4Info."""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from p4.config.v1 import p4info_pb2

from p4sim.compiler import ast as A
from p4sim.compiler.builder import Bmv2Json
from p4sim.compiler.controls import ControlLowerer
from p4sim.compiler.env import DeclE, TypeE
from p4sim.compiler.errors import CompileError
from p4sim.compiler.exprs import ExprLowerer
from p4sim.compiler.externs import make_instance
from p4sim.compiler.lexer import tokenize
from p4sim.compiler.p4info import build_p4info, controller_headers, to_text
from p4sim.compiler.parser import parse
from p4sim.compiler.parsers import ChecksumLowerer, DeparserLowerer, ParserLowerer
from p4sim.compiler.preprocess import Preprocessor
from p4sim.compiler.program import Program
from p4sim.compiler.storage import shared_storage
from p4sim.compiler.types import EnumT, ObjT, StructT

log = logging.getLogger(__name__)

_INSTANCE_KINDS = {"counter": "counter", "direct_counter": "direct_counter", "meter": "meter",
                   "direct_meter": "direct_meter", "register": "register", "action_profile": "action_profile",
                   "action_selector": "action_profile"}


@dataclass(slots=True)
class Shared:
    """Storage shared by all blocks of the V1Switch package."""

    field_lists: dict[int, list[dict]] = field(default_factory=dict)


@dataclass(slots=True)
class Result:
    """A compiled program."""

    json: dict
    p4info: p4info_pb2.P4Info


def compile_file(path: str | Path, include_dirs: list[str] | None = None,
                 defines: list[str] | None = None) -> Result:
    """Compile a P4_16 v1model program; raises CompileError (or ValueError for bad options)."""
    pp = Preprocessor([Path(d) for d in include_dirs or []])
    for d in defines or []:
        pp.define(d)
    lines = pp.run(Path(path))
    prog = Program(parse(tokenize(lines, pp.end)))
    return lower(prog, str(path))


def lower(prog: Program, program_file: str) -> Result:
    """Lower a checked program to bmv2 JSON and P4Info."""
    bm = Bmv2Json(program_file)
    bm.errors = [[e, i] for i, e in enumerate(prog.errors)]
    bm.enums = [{"name": e.name, "entries": [[m, e.values[m]] for m in e.members]}
                for e in prog.enums if isinstance(e, EnumT) and e.underlying is not None]
    blocks = prog.main_blocks()
    parser = blocks["Parser"]
    assert isinstance(parser, A.ParserDecl)
    if len(parser.params) != 4:
        raise CompileError(parser.loc, f"parser {parser.name} must have 4 parameters "
                           "(packet_in, out headers, inout metadata, inout standard_metadata_t)")
    hdr_t = prog.resolve(parser.params[1].typ, prog.scope)
    meta_t = prog.resolve(parser.params[2].typ, prog.scope)
    shared = Shared()
    hdr, meta = shared_storage(bm, hdr_t, meta_t, shared.field_lists, parser.params[1].loc)
    for idx, elements in shared.field_lists.items():  # p4c's createRecirculateFieldsList, before actions
        bm.new_field_list(elements, f"field_list{idx}")
    std = bm.std
    std_ent = prog.scope.lookup("standard_metadata_t")
    if isinstance(std_ent, TypeE) and isinstance(std_ent.type, StructT):
        std.type = std_ent.type  # same fields as builder.STD_META, the v1model declaration's type
    controller_headers(bm, prog.structs)
    _global_instances(prog, bm)
    def ctor(lowerer: Any, role: str) -> Any:
        lowerer.bind_ctor(*prog.main_ctor_args[role])
        return lowerer

    ctor(ParserLowerer(prog, bm, parser, shared), "Parser").run([hdr, meta, std])
    ctor(ChecksumLowerer(prog, bm, blocks["VerifyChecksum"], shared), "VerifyChecksum").run([hdr, meta], verify=True)
    ctor(ControlLowerer(prog, bm, blocks["Ingress"], shared, "ingress"), "Ingress").run([hdr, meta, std])
    ctor(ControlLowerer(prog, bm, blocks["Egress"], shared, "egress"), "Egress").run([hdr, meta, std])
    ctor(ChecksumLowerer(prog, bm, blocks["ComputeChecksum"], shared), "ComputeChecksum").run([hdr, meta], verify=False)
    ctor(DeparserLowerer(prog, bm, blocks["Deparser"], shared), "Deparser").run([hdr])
    _set_result_target(bm)
    info = build_p4info(bm)
    return Result(bm.document(), info)


def _global_instances(prog: Program, bm: Bmv2Json) -> None:
    """Extern instances declared at the top of the program (`register<bit<8>>(256) r;`), named as declared."""
    ev = ExprLowerer(prog.scope, prog)
    for ent in list(prog.scope.names.values()):
        if isinstance(ent, DeclE) and ent.kind == "instance" and ent.extra is None:
            typ = prog.resolve(ent.decl.typ, prog.scope)
            if isinstance(typ, ObjT) and typ.kind == "extern":
                ent.extra = make_instance(ev, bm, ent.decl, ent.qname)


def _set_result_target(bm: Bmv2Json) -> None:
    """Direct meters write their color where the actions' `m.read(x)` said (bmv2 result_target)."""
    for info in bm.instances:
        if info.kind == "direct_meter" and info.json is not None:
            if info.result_target is None:
                raise CompileError(info.decl.loc, f"direct meter {info.name} is never read: "
                                   "call read(result) in an action of its table")
            info.json["result_target"] = list(info.result_target)


def write_outputs(res: Result, json_path: str, p4info_path: str | None) -> None:
    """Write both files atomically (temporary files renamed only when both are written). A path that
    exists and is not a regular file (/dev/null, a FIFO, a terminal) is written in place, as p4c
    does: renaming over it would replace the device with a file."""
    pending = []
    try:
        for path, text in ((json_path, json.dumps(res.json, indent=2) + "\n"),
                           (p4info_path, to_text(res.p4info) if p4info_path else None)):
            if path is None or text is None:
                continue
            if os.path.exists(path) and not os.path.isfile(path):
                with open(path, "w") as f:
                    f.write(text)
                continue
            d = os.path.dirname(os.path.abspath(path))
            fd, tmp = tempfile.mkstemp(prefix=".p4sim-", dir=d)
            with os.fdopen(fd, "w") as f:
                f.write(text)
            pending.append((tmp, path))
        for tmp, path in pending:
            os.replace(tmp, path)
        pending = []
    finally:
        for tmp, _ in pending:
            os.unlink(tmp)

