"""Tests for processors/_replacement.py: NiFi's and Java's reading of a replacement value."""

from __future__ import annotations

import pytest
import regex

from flowcore.errors import ProcessException
from processors._replacement import (
    escape_group_references,
    escape_literal_back_references,
    expand,
    normalize_replacement,
    parse_replacement,
    regex_template,
    substitute_variables,
)


def test_java_reads_group_digits_while_they_name_a_group() -> None:
    """'$12' is group 12 with 12 groups, group 1 then '2' with fewer."""
    assert parse_replacement("$12", 12) == (12,)
    assert parse_replacement("$12", 3) == (1, "2")
    assert parse_replacement("a\\$1b", 1) == ("a$1b",)


@pytest.mark.parametrize("replacement", ["$", "x\\", "$5", "$a"])
def test_what_java_refuses(replacement: str) -> None:
    """A trailing '$' or '\\', a missing group, '$' before a letter: Java's exceptions."""
    with pytest.raises(ProcessException):
        parse_replacement(replacement, 1)


def test_nifi_escapes() -> None:
    """Unknown groups escaped (not at the start: NiFi's pattern needs a character before);
    a '$' before a non-digit makes everything literal; expression results stay literal."""
    assert escape_literal_back_references("$1$2", 1) == "$1\\$2"
    assert escape_literal_back_references("$5 x", 1) == "$5 x"
    assert escape_literal_back_references("x$0123", 1) == "x$0123"
    assert normalize_replacement("$1$d") == "\\$1\\$d"
    assert escape_group_references("a$1b$23") == "a\\$1b\\$23"


def test_template_and_expand_agree() -> None:
    """The C template and the Python expansion give the same text (unmatched group: empty)."""
    parts = parse_replacement("[$1|$2]\\\\", 2)
    pattern = regex.compile("(a)(b)?")
    assert pattern.sub(regex_template(parts), "xa") == "x[a|]\\"
    assert expand(parts, pattern.search("xa")) == "[a|]\\"


def test_string_substitutor() -> None:
    """Values, nesting, defaults, escapes and unknown names, as Commons Text has them."""
    values = {"a": "${b}!", "b": "B"}
    assert substitute_variables("${a} $${a} ${c} ${c:-d} ${", values) == "B! ${a} ${c} d ${"
    with pytest.raises(ProcessException, match="Infinite loop"):
        substitute_variables("${x}", {"x": "${y}", "y": "${x}"})
