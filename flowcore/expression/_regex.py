r"""Java regular expressions and replacement strings for the Expression Language.

NiFi's functions take Java regexes (``replaceAll``, ``matches`` ...) and Java replacement strings
(``$1``, ``${name}``). Patterns compile with :func:`flowcore.patterns.compile_pattern` (the
``regex`` engine, bounded in time; it reads ``(?<name>...)`` and possessive quantifiers as Java
does, and ``\Q...\E`` quoting is translated); replacement strings are translated here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from flowcore.errors import ExpressionEvaluationError
from flowcore.patterns import FlowPattern, compile_pattern

__all__ = ["java_regex", "java_replacement", "java_template"]


def java_regex(pattern: str) -> FlowPattern:
    r"""Compile a Java regular expression (named groups ``(?<n>``, ``\\Q..\\E``), time-bounded.

    Every match of the result is bounded by the flow's regex time limit
    (:mod:`flowcore.patterns`), so a pattern that backtracks exponentially cannot hang a run.

    Raises:
        ExpressionEvaluationError: the pattern is not a valid regular expression.
    """
    return compile_pattern(pattern)


@attrs.frozen
class _GroupName:
    name: str


def _replacement_parts(replacement: str) -> list[str | int | _GroupName]:
    """Java's replacement syntax parsed: literal text, group numbers and group names."""
    parts: list[str | int | _GroupName] = []
    i = 0
    text: list[str] = []
    while i < len(replacement):
        ch = replacement[i]
        if ch == "\\" and i + 1 < len(replacement):
            text.append(replacement[i + 1])
            i += 2
        elif ch == "$" and i + 1 < len(replacement) and replacement[i + 1] == "{":
            end = replacement.find("}", i)
            if end < 0:
                msg = f"replacement {replacement!r} has an unclosed group reference"
                raise ExpressionEvaluationError(msg)
            parts.append("".join(text))
            text = []
            parts.append(_GroupName(replacement[i + 2 : end]))
            i = end + 1
        elif ch == "$" and i + 1 < len(replacement) and replacement[i + 1].isdigit():
            parts.append("".join(text))
            text = []
            parts.append(int(replacement[i + 1]))
            i += 2
        else:
            text.append(ch)
            i += 1
    parts.append("".join(text))
    return parts


_templates: dict[str, str] = {}


def java_template(replacement: str) -> str:
    r"""A Java replacement string (``$1``, ``${name}``, ``\$``) in the ``regex`` engine's syntax.

    The engine then substitutes in C: about half the cost of a Python callback per match
    (``bench/flow_regex.py``). Unmatched groups give ``""`` in both. Cached.
    """
    template = _templates.get(replacement)
    if template is None:
        out = []
        for part in _replacement_parts(replacement):
            if isinstance(part, int):
                out.append(f"\\g<{part}>")
            elif isinstance(part, _GroupName):
                out.append(f"\\g<{part.name}>")
            else:
                out.append(part.replace("\\", "\\\\"))
        template = "".join(out)
        if len(_templates) > 1024:
            _templates.clear()
        _templates[replacement] = template
    return template


def java_replacement(replacement: str) -> Callable[[re.Match[str]], str]:
    r"""Turn a Java replacement string (``$1``, ``${name}``, ``\$``) into a ``re.sub`` callable."""
    parts = _replacement_parts(replacement)

    def substitute(match: re.Match[str]) -> str:
        out = []
        for part in parts:
            if isinstance(part, int):
                out.append(match.group(part) or "")
            elif isinstance(part, _GroupName):
                out.append(match.group(part.name) or "")
            else:
                out.append(part)
        return "".join(out)

    return substitute
