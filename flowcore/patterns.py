r"""Regular expressions from a flow, evaluated under a time limit so none can hang a run.

A flow's regexes come from its author or, through Expression Language, from FlowFile attributes:
``${filename:matches('(a|aa)+$')}`` on a 33-character name backtracks for hours in Python's
``re``, which cannot be interrupted. Every regex a flow supplies (Expression Language
``matches``, ``find``, ``replace*``, ``replaceAll``, ``allMatchingAttributes`` ...; GetFile's and
FileSplitter's File Filter and Path Filter; LogAttribute's and UpdateAttribute's regex
properties) is compiled here with the `regex <https://pypi.org/project/regex/>`_ engine, which
takes a ``timeout`` on every match and is closer to Java's syntax than ``re`` (possessive
quantifiers, atomic groups, ``(?<name>...)``). A match over :data:`DEFAULT_TIME_LIMIT` raises
:class:`~flowcore.errors.RegexTimeoutError` naming the pattern and the limit; the processor's
session rolls back, the FlowFile is penalized and stays queued, and a bulletin says why (an
Expression Language error is a processor error, as in NiFi).

The limit is the engine setting ``regex_time_limit`` (NiFi has none: its Java engine cannot be
interrupted either); each task applies it with :func:`set_time_limit`. It bounds what a match
takes beyond reading its input: each call may also take :data:`SECONDS_PER_CHARACTER` for every
character of the text it is given (a second per million). A linear pattern (``[a-z]+`` over 50 MB
in ReplaceText, ExtractText or RouteText) scans at 5 MB/s or more even while replacing millions
of matches (measured), so it always finishes inside its allowance, however large the content;
a catastrophic one on a 40-character name still stops after about the limit, and one that
backtracks over a large content stops after the limit plus its allowance instead of hours.

Java treats ``\r\n``, ``\r``, ``\u0085``, ``\u2028`` and ``\u2029`` as line terminators too: ``.``
does not match them and ``$`` matches before a final ``\r\n`` (the engine also counts ``\x0b``
and ``\x0c``, which Java does not). Pass :data:`JAVA_LINES` among the
flags to get that (the ``regex`` engine's ``WORD`` flag, whose Unicode word boundaries are turned
back into ``\b`` and ``\B`` as Java and ``re`` define them); the text processors (ExtractText,
ReplaceText, RouteOnContent, RouteText) do, so a CRLF file matches as in NiFi.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from typing import Any

import regex

from flowcore.errors import ExpressionEvaluationError, RegexTimeoutError, quoted

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "JAVA_LINES",
    "SECONDS_PER_CHARACTER",
    "FlowPattern",
    "compile_pattern",
    "set_time_limit",
    "time_limit",
]

LOG = logging.getLogger("flowcore.patterns")
DEFAULT_TIME_LIMIT = 1.0  # seconds one match may take, beyond its scan of the input
SECONDS_PER_CHARACTER = 1e-6  # the scan's allowance: a second per million characters of input
_limit = DEFAULT_TIME_LIMIT
_QUOTED = re.compile(r"\\Q(.*?)(?:\\E|$)", re.DOTALL)
#: Flag: Java's line terminators for ``.``, ``^`` and ``$`` (see the module docstring).
JAVA_LINES = regex.WORD
#: ``\\b`` and ``\\B`` as ``re`` and Java define them, for patterns compiled with WORD.
_BOUNDARY = {
    "b": r"(?:(?<=\w)(?!\w)|(?<!\w)(?=\w))",
    "B": r"(?:(?<=\w)(?=\w)|(?<!\w)(?!\w))",
}
_cache: dict[tuple[str, int], FlowPattern] = {}


def set_time_limit(seconds: float) -> None:
    """Set how long one match may take in this process (the ``regex_time_limit`` setting)."""
    global _limit  # noqa: PLW0603 - one limit per process, set by each task from its settings
    _limit = seconds


def time_limit() -> float:
    """How long one match may take in this process, in seconds."""
    return _limit


class FlowPattern:
    """A compiled regex whose every match is bounded by the time limit.

    It offers the ``re.Pattern`` methods flowcore uses; each raises
    :class:`~flowcore.errors.RegexTimeoutError` instead of running past the limit.
    """

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str, compiled: Any) -> None:
        self.pattern = pattern
        self._compiled = compiled

    def __repr__(self) -> str:
        return f"FlowPattern({self.pattern!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (compile_pattern, (self.pattern, self._compiled.flags & ~regex.VERSION0))

    def _run(self, method: Callable[..., Any], text: str, *args: Any, **kwargs: Any) -> Any:
        """``method(*args, timeout=...)`` over *text*: the limit plus the scan's allowance."""
        allowed = _limit + len(text) * SECONDS_PER_CHARACTER
        try:
            return method(*args, timeout=allowed, **kwargs)
        except TimeoutError:
            msg = (
                f"the regular expression {quoted(self.pattern)} took longer than the "
                f"{_limit:g} s limit (regex_time_limit) plus a second per million characters "
                f"of its {len(text)}-character input ({allowed:g} s); it backtracks too much "
                "on this input"
            )
            raise RegexTimeoutError(msg, pattern=self.pattern) from None

    def search(self, text: str) -> Any:
        """``re.Pattern.search``, bounded."""
        return self._run(self._compiled.search, text, text)

    def match(self, text: str) -> Any:
        """``re.Pattern.match``, bounded."""
        return self._run(self._compiled.match, text, text)

    def fullmatch(self, text: str) -> Any:
        """``re.Pattern.fullmatch``, bounded."""
        return self._run(self._compiled.fullmatch, text, text)

    def sub(self, replacement: Any, text: str, count: int = 0) -> str:
        """``re.Pattern.sub``, bounded."""
        return self._run(self._compiled.sub, text, replacement, text, count=count)

    def subn(self, replacement: Any, text: str, count: int = 0) -> tuple[str, int]:
        """``re.Pattern.subn``, bounded."""
        return self._run(self._compiled.subn, text, replacement, text, count=count)

    def split(self, text: str, maxsplit: int = 0) -> list[str]:
        """``re.Pattern.split``, bounded."""
        return self._run(self._compiled.split, text, text, maxsplit=maxsplit)

    def findall(self, text: str) -> list[Any]:
        """``re.Pattern.findall``, bounded."""
        return self._run(self._compiled.findall, text, text)

    def finditer(self, text: str) -> Iterator[Any]:
        """``re.Pattern.finditer``, bounded as a whole (the matches are found at once)."""
        return iter(
            self._run(
                lambda t, timeout: list(self._compiled.finditer(t, timeout=timeout)), text, text
            )
        )

    def accepts(self, name: str) -> bool:
        """Whether *name* matches whole; a match over the limit counts as no match, with a warning.

        For filters over names a flow did not choose (the files in a directory, the attributes
        of a FlowFile): one hostile name is skipped, and the rest are still listed.
        """
        try:
            return self.fullmatch(name) is not None
        except RegexTimeoutError as ex:
            LOG.warning("%s; %r is treated as not matching", ex, name)
            return False

    @property
    def groupindex(self) -> dict[str, int]:
        """Named groups, as ``re.Pattern.groupindex``."""
        return dict(self._compiled.groupindex)

    @property
    def groups(self) -> int:
        """The number of groups, as ``re.Pattern.groups``."""
        return self._compiled.groups


def compile_pattern(pattern: str, flags: int = 0) -> FlowPattern:
    r"""Compile a flow's (Java-style) regex: ``\Q...\E`` quoting, ``(?<name>...)`` groups.

    Raises:
        ExpressionEvaluationError: the pattern is not a valid regular expression (a
            ``ValueError``, so property validators report it as one).
    """
    key = (pattern, flags)
    compiled = _cache.get(key)
    if compiled is None:
        translated = _QUOTED.sub(lambda m: regex.escape(m.group(1)), pattern)
        if flags & JAVA_LINES:
            translated = _plain_word_boundaries(translated)
        try:
            compiled = FlowPattern(pattern, regex.compile(translated, flags | regex.VERSION0))
        except regex.error as ex:
            msg = f"{quoted(pattern)} is not a valid regular expression: {ex}"
            raise ExpressionEvaluationError(msg) from None
        if len(_cache) > 1024:
            _cache.clear()
        _cache[key] = compiled
    return compiled


def _plain_word_boundaries(pattern: str) -> str:
    r"""*pattern* with each ``\b`` and ``\B`` outside a character class spelled out.

    The ``WORD`` flag that gives Java's line terminators also makes ``\b`` a Unicode (UAX #29)
    word boundary, under which ``don't`` and ``3.14`` are single words; Java's ``\b`` is the
    plain ``\w``/``\W`` boundary, which these lookarounds restore.
    """
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            out.append(
                _BOUNDARY[escaped] if escaped in _BOUNDARY and not in_class else char + escaped
            )
            i += 2
            continue
        if char == "[" and not in_class:
            in_class = True
            out.append(char)
            i += 1
            # a ']' first in a class (after an optional '^') is a literal
            for literal in ("^", "]"):
                if pattern.startswith(literal, i):
                    out.append(literal)
                    i += 1
            continue
        if char == "]" and in_class:
            in_class = False
        out.append(char)
        i += 1
    return "".join(out)
