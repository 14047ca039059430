"""Tests for the RecordPath errors: their place in flowcore's exception tree and their data."""

from __future__ import annotations

import pytest

from flowcore.errors import FlowcoreError
from flowcore.record_path import (
    RecordPathError,
    RecordPathEvaluationError,
    RecordPathSyntaxError,
    compile_record_path,
)


def test_errors_are_flowcore_and_value_errors() -> None:
    """Every RecordPath error is a FlowcoreError and a ValueError."""
    for kind in (RecordPathError, RecordPathSyntaxError, RecordPathEvaluationError):
        assert issubclass(kind, FlowcoreError)
        assert issubclass(kind, ValueError)
        assert issubclass(kind, RecordPathError)


def test_syntax_error_carries_path_and_position() -> None:
    """A syntax error carries the path and the 0-based position of the problem."""
    with pytest.raises(RecordPathSyntaxError) as caught:
        compile_record_path("/a[0")
    assert caught.value.path == "/a[0"
    assert caught.value.position == 4
