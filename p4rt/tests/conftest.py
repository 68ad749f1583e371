import pytest

from p4rt.schema import P4Schema
from p4rt.tests.p4info_sample import P4INFO


@pytest.fixture
def schema() -> P4Schema:
    return P4Schema.from_text(P4INFO)
