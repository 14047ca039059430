"""Tests for Java regex and replacement translation."""

from __future__ import annotations

import pytest

from flowcore.errors import ExpressionEvaluationError
from flowcore.expression._regex import java_regex, java_replacement


def test_named_groups_and_quoting() -> None:
    """Java's (?<name>...) and \\Q...\\E work in Python."""
    match = java_regex(r"(?<year>\d{4})-\Q.*\E").fullmatch("2024-.*")
    assert match is not None
    assert match.group("year") == "2024"


def test_replacement_references() -> None:
    """$1, ${name} and escaped dollars are Java's replacement syntax."""
    pattern = java_regex(r"(?<word>\w+) (\w+)")
    assert pattern.sub(java_replacement(r"$2 ${word} \$"), "hello world") == "world hello $"


def test_bad_patterns_are_evaluation_errors() -> None:
    """An invalid regex or an unclosed group reference raises the flowcore error."""
    with pytest.raises(ExpressionEvaluationError):
        java_regex("(")
    with pytest.raises(ExpressionEvaluationError):
        java_replacement("${oops")
