"""The compiler test corpus (small P4 programs) and a v1model skeleton to splice statements into."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4sim.compiler.compile import Result, compile_file
from p4sim.compiler.errors import CompileError

CORPUS = Path(__file__).resolve().parent

# A minimal v1model program; LOCALS and BODY are spliced into the ingress control.
SKELETON = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; bit<8> c; }
struct hs_t { h_t h; }
struct m_t { bit<8> x; bit<16> y; bool f; }
TOP
parser P(packet_in p, out hs_t hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control V(inout hs_t hdr, inout m_t m) { apply { } }
control I(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) {
LOCALS
    apply {
BODY
    }
}
control E(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs_t hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs_t hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
BODY_LINE = SKELETON.split("\n").index("BODY") + 1  # line of BODY in the written file


def source(body: str = "", locals_: str = "", top: str = "", parser: str = "", types: str = "",
           headers: tuple[str, ...] = ()) -> str:
    """The skeleton with the given parts; `types` declared before the headers struct, `headers` (e.g.
    "u_t u") more members of it, emitted after hdr.h in order."""
    text = SKELETON.replace("LOCALS", locals_).replace("BODY", body).replace("TOP", top)
    if parser:
        text = text.replace("state start { p.extract(hdr.h); transition accept; }", parser)
    if types or headers:
        text = text.replace("struct hs_t { h_t h; }", types + "struct hs_t { h_t h;" +
                            "".join(f" {h};" for h in headers) + " }")
        text = text.replace("p.emit(hdr.h);", "p.emit(hdr.h);" +
                            "".join(f" p.emit(hdr.{h.split()[-1]});" for h in headers))
    return text


def build(tmp_path: Path, body: str = "", locals_: str = "", top: str = "", parser: str = "", types: str = "",
          headers: tuple[str, ...] = ()) -> Result:
    """Compile the skeleton with the given parts (see source)."""
    src = tmp_path / "prog.p4"
    src.write_text(source(body, locals_, top, parser, types, headers))
    return compile_file(src)


def error_of(tmp_path: Path, body: str = "", locals_: str = "", top: str = "", parser: str = "") -> str:
    """The compile error of the skeleton with the given parts."""
    with pytest.raises(CompileError) as exc:
        build(tmp_path, body, locals_, top, parser)
    return str(exc.value)
