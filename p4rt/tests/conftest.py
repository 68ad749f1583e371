import pytest

from p4rt.schema import P4Schema
from p4rt.testing import SAMPLE_P4INFO


@pytest.fixture
def schema() -> P4Schema:
    return P4Schema.from_text(SAMPLE_P4INFO)
