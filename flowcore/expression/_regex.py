r"""Java regular expressions and replacement strings, translated for Python's ``re``.

NiFi's functions take Java regexes (``replaceAll``, ``matches`` ...) and Java replacement strings
(``$1``, ``${name}``). Python's engine agrees on almost everything; the differences that matter in
practice are named groups ``(?<name>...)`` and ``\Q...\E`` quoting, translated here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from flowcore.errors import ExpressionEvaluationError

__all__ = ["java_regex", "java_replacement"]


_NAMED_GROUP = re.compile(r"\(\?<([A-Za-z][A-Za-z0-9]*)>")
_QUOTED = re.compile(r"\\Q(.*?)(?:\\E|$)", re.DOTALL)


def _translate_regex(pattern: str) -> str:
    pattern = _QUOTED.sub(lambda m: re.escape(m.group(1)), pattern)
    return _NAMED_GROUP.sub(r"(?P<\1>", pattern)


_regex_cache: dict[str, re.Pattern[str]] = {}


def java_regex(pattern: str) -> re.Pattern[str]:
    r"""Compile a Java regular expression (named groups ``(?<n>``, ``\\Q..\\E``) for Python.

    Raises:
        ExpressionEvaluationError: the pattern is not a valid regular expression.
    """
    compiled = _regex_cache.get(pattern)
    if compiled is None:
        try:
            compiled = re.compile(_translate_regex(pattern))
        except re.error as ex:
            msg = f"{pattern!r} is not a valid regular expression: {ex}"
            raise ExpressionEvaluationError(msg) from None
        if len(_regex_cache) > 1024:
            _regex_cache.clear()
        _regex_cache[pattern] = compiled
    return compiled


@attrs.frozen
class _GroupName:
    name: str


def java_replacement(replacement: str) -> Callable[[re.Match[str]], str]:
    r"""Turn a Java replacement string (``$1``, ``${name}``, ``\\$``) into a ``re.sub`` callable."""
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
