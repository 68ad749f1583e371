import pytest

from control.tests.netbed import compile_program
from p4rt.schema import P4Schema
from p4rt.tests.p4info_sample import P4INFO


@pytest.fixture
def schema() -> P4Schema:
    return P4Schema.from_text(P4INFO)


@pytest.fixture(scope="module")
def pipelines(tmp_path_factory):
    """fabric and ocs compiled once per test module (control.tests.netbed.compile_program)."""
    out = tmp_path_factory.mktemp("build")
    return compile_program("fabric", out), compile_program("ocs", out)
