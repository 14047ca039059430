"""Tests for the exception tree."""

from __future__ import annotations

from flowcore import errors


def test_errors_subclass_the_builtins_they_behave_like() -> None:
    """flowcore errors can be caught as the builtins they resemble."""
    assert issubclass(errors.FlowValidationError, ValueError)
    assert issubclass(errors.ExpressionSyntaxError, ValueError)
    assert issubclass(errors.ProcessException, RuntimeError)
    assert issubclass(errors.RepositoryError, OSError)
    assert issubclass(errors.UnknownProcessorError, KeyError)
    assert issubclass(errors.RecordPathSyntaxError, errors.RecordPathError)
    assert issubclass(errors.RecordPathEvaluationError, ValueError)
    assert all(issubclass(getattr(errors, name), errors.FlowcoreError) for name in errors.__all__)


def test_errors_carry_structured_data() -> None:
    """Errors keep their culprit as attributes, not only in the message."""
    syntax = errors.ExpressionSyntaxError("bad", "${x", 3)
    assert (syntax.expression, syntax.position) == ("${x", 3)
    failure = errors.ProcessException("no", flowfile_uuid="u", processor="P")
    assert (failure.flowfile_uuid, failure.processor) == ("u", "P")
    assert errors.FlowValidationError("bad flow", ["p1", "p2"]).problems == ("p1", "p2")
    assert str(errors.UnknownProcessorError("no processor 'X'")) == "no processor 'X'"
    path = errors.RecordPathSyntaxError("bad path", "/a[0", 4)
    assert (path.path, path.position) == ("/a[0", 4)
