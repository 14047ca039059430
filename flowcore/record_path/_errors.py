"""The errors of RecordPath: a path that does not parse or compile, and one that fails on data.

They live in this package until the lead moves them into :mod:`flowcore.errors` (another helper
edits that file in this session); both subclass :class:`~flowcore.errors.FlowcoreError` and
``ValueError``, so ``except ValueError`` and ``except FlowcoreError`` catch them.
"""

from __future__ import annotations

from flowcore.errors import FlowcoreError

__all__ = ["RecordPathError", "RecordPathEvaluationError", "RecordPathSyntaxError"]


class RecordPathError(FlowcoreError, ValueError):
    """Base class of RecordPath errors (NiFi's ``RecordPathException``)."""


class RecordPathSyntaxError(RecordPathError):
    """A RecordPath could not be parsed or compiled; ``path`` and 0-based ``position`` say where."""

    def __init__(self, msg: str, path: str, position: int) -> None:
        super().__init__(msg)
        self.path = path
        self.position = position


class RecordPathEvaluationError(RecordPathError):
    """A well-formed RecordPath failed on a record (a value it cannot update, a bad regex)."""
