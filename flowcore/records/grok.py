"""NiFi's GrokReader as a codec: log lines to records through Grok expressions.

Grok (java-grok, as NiFi uses it) names regular expressions: ``%{PATTERN}`` is the pattern's
expression, ``%{PATTERN:field}`` captures it as *field* (``%{NUMBER:bytes:int}``: *bytes*),
``%{NAME:field=regex}`` defines a pattern inline. Each ``%{...}`` is compiled to a named group, so
nested patterns capture under their own names too; a name captured twice gives a list (its
non-null values: one is a string, several an array). Values quoted with ``"`` or ``'`` lose the
quotes (java-grok's ``cleanString``). An expression matches anywhere in a line (``find``).

The expression is compiled with :mod:`flowcore.patterns` (the ``regex`` engine, Java's syntax:
atomic groups, possessive quantifiers, POSIX classes), so every match is bounded by the run's
regex time limit: a catastrophic expression stops with a RegexTimeoutError, not a hang.

Records follow NiFi's ``GrokRecordReader``: each line that matches one of the expressions (tried
in order) starts a record; a line that matches none is appended to the record's last populated
field ("No Match Behavior" ``append-to-previous-message``), skipped (``skip-line``) or a record
of its own with only ``_raw`` (``raw-line``); a Java stack trace after a message goes to its
``stackTrace`` field; ``_raw`` holds the message's lines. Streamed: one record at a time.
"""

from __future__ import annotations

import codecs
import io
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any

import attrs
import pyarrow as pa

from flowcore.errors import ConfigurationError, ExpressionEvaluationError
from flowcore.patterns import FlowPattern, compile_pattern
from flowcore.records._batches import Parsed, batches_of
from flowcore.records.options import nifi
from flowcore.records.schema import STRING, RecordField, RecordSchema
from flowcore.records.values import TemporalFormats

__all__ = [
    "APPEND_TO_PREVIOUS_MESSAGE",
    "RAW_LINE",
    "RAW_MESSAGE_NAME",
    "SKIP_LINE",
    "STACK_TRACE_COLUMN_NAME",
    "Grok",
    "GrokReaderOptions",
    "compile_grok",
    "grok_schema",
    "parse_patterns",
    "read_grok",
]

APPEND_TO_PREVIOUS_MESSAGE = "append-to-previous-message"
SKIP_LINE = "skip-line"
RAW_LINE = "raw-line"
STACK_TRACE_COLUMN_NAME = "stackTrace"
RAW_MESSAGE_NAME = "_raw"

#: java-grok's ``GrokUtils.GROK_PATTERN``: ``%{pattern:subname=definition}``.
_GROK = re.compile(
    r"%\{(?P<name>(?P<pattern>[A-z0-9]+)(?::(?P<subname>[A-z0-9_:;,\-/\s.']+))?)"
    r"(?:=(?P<definition>(?:(?:[^{}]+|\.+)+)+))?\}"
)
_STACK_TRACE = re.compile(
    r"^\s*(?:(?:\s{4}|\t)+at )|"
    r"(?:(?:\s{4}|\t)+\[CIRCULAR REFERENCE:)|"
    r"(?:Caused by: )|"
    r"(?:Suppressed: )|"
    r"(?:\s+... \d+ (?:more|common frames? omitted)$)"
)
#: java-grok's limit on nested pattern expansion.
_MAX_EXPANSIONS = 1000


def parse_patterns(text: str) -> dict[str, str]:
    """Grok pattern definitions (``NAME regex`` per line; ``#`` comments and blanks skipped)."""
    patterns = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        name, _, definition = stripped.partition(" ")
        if definition.strip():
            patterns[name] = definition.strip()
    return patterns


@attrs.frozen
class Grok:
    """A compiled Grok expression.

    Attributes:
        expression: the expression as written.
        pattern: the regular expression it compiled to.
        names: group name -> the key it captures under.
        patterns: the pattern definitions it was compiled with.
    """

    expression: str
    pattern: FlowPattern
    names: Mapping[str, str]
    patterns: Mapping[str, str]

    def capture(self, line: str) -> dict[str, Any]:
        """The captures of the first match in *line* (empty: no match).

        Raises:
            RegexTimeoutError: the match ran past the regex time limit.
        """
        match = self.pattern.search(line)
        if match is None:
            return {}
        captured: dict[str, Any] = {}
        for group, text in match.groupdict().items():
            key = self.names.get(group, group)
            if key == "UNWANTED":
                continue
            key = key.split(":", 1)[0]
            value = _clean(text)
            if key in captured:
                current = captured[key]
                if isinstance(current, _Many):
                    current.append(value)
                else:
                    captured[key] = _Many([current, value])
            else:
                captured[key] = value
        return captured


class _Many(list):  # type: ignore[type-arg]
    """Several captures of one name (java-grok's list)."""


def _clean(value: str | None) -> str | None:
    """java-grok's ``cleanString``: a quoted value loses its quotes.

    Quoted with ``"`` or ``'``, and no inner quote of that kind.
    """
    if not value:
        return value
    first = value[0]
    if first == value[-1] and first in "\"'":
        if len(value) <= 2:
            return ""
        inner = value[1:-1]
        if first not in inner:
            return inner
    return value


def compile_grok(expression: str, patterns: Mapping[str, str]) -> Grok:
    """Compile *expression* with *patterns* (java-grok's ``GrokCompiler.compile``).

    Raises:
        ConfigurationError: a pattern it names is not defined, the expansion does not end, or
            the result is not a valid regular expression.
    """
    definitions = dict(patterns)
    names: dict[str, str] = {}
    regex = expression
    index = 0
    for _ in range(_MAX_EXPANSIONS):
        match = _GROK.search(regex)
        if match is None:
            break
        name, pattern = match.group("name"), match.group("pattern")
        subname, definition = match.group("subname"), match.group("definition")
        if definition is not None:
            definitions[pattern] = definition
        body = definitions.get(pattern)
        if body is None:
            msg = (
                f"No definition for key '{pattern}' found, aborting (Grok Expression "
                f"{expression!r})"
            )
            raise ConfigurationError(msg)
        token = match.group(0)
        while token in regex:
            regex = regex.replace(token, f"(?<name{index}>{body})", 1)
            names[f"name{index}"] = subname if subname is not None else name
            index += 1
    else:
        msg = f"Deep recursion pattern compilation of {expression!r}"
        raise ConfigurationError(msg)
    try:
        compiled = compile_pattern(regex)
    except ExpressionEvaluationError as exc:
        msg = f"the Grok Expression {expression!r} is not valid: {exc}"
        raise ConfigurationError(msg) from None
    return Grok(expression, compiled, names, definitions)


def grok_schema(groks: Iterable[Grok]) -> RecordSchema:
    """NiFi's schema of "Use String Fields From Grok Expression".

    The named captures, stackTrace and _raw, all nullable STRINGs.
    """
    names: dict[str, None] = {}
    for grok in groks:
        _field_names(grok.expression, grok.patterns, names, 0)
    names.setdefault(STACK_TRACE_COLUMN_NAME)
    names.setdefault(RAW_MESSAGE_NAME)
    return RecordSchema(RecordField(name, STRING) for name in names)


def _field_names(expression: str, patterns: Mapping[str, str], out: dict, depth: int) -> None:
    if depth > _MAX_EXPANSIONS:
        return
    for match in _GROK.finditer(expression):
        subname = match.group("subname")
        if subname is None:
            sub = patterns.get(match.group("pattern"))
            if sub is not None:
                _field_names(sub, patterns, out, depth + 1)
        else:
            out.setdefault(subname.split(":", 1)[0])


@attrs.frozen
class GrokReaderOptions:
    """GrokReader's properties (NiFi's names in the field docs), with NiFi's defaults.

    Attributes:
        no_match_behavior: "No Match Behavior".
        character_set: the content's encoding (NiFi reads the platform's, UTF-8).
        batch_size: records per Arrow batch (memory bound; not a NiFi property).
    """

    no_match_behavior: str = nifi(
        "No Match Behavior",
        APPEND_TO_PREVIOUS_MESSAGE,
        validator=attrs.validators.in_((APPEND_TO_PREVIOUS_MESSAGE, SKIP_LINE, RAW_LINE)),
    )
    character_set: str = "UTF-8"
    batch_size: int = 8192


def read_grok(
    stream: IO[bytes],
    groks: list[Grok],
    schema: RecordSchema,
    options: GrokReaderOptions = GrokReaderOptions(),
) -> Iterator[pa.RecordBatch]:
    """Record batches of the log messages in *stream*, under *schema*.

    Raises:
        RecordError: a value does not fit the schema (after the batches before it).
        RegexTimeoutError: an expression backtracked past the regex time limit on a line.
    """
    text = io.TextIOWrapper(stream, encoding=_encoding(options.character_set), newline=None)  # type: ignore[arg-type]
    messages = _Messages(text, groks, grok_schema(groks), options.no_match_behavior)
    return batches_of(_records(messages, schema), schema, TemporalFormats(), options.batch_size, 1)


def _encoding(name: str) -> str:
    return "utf-8-sig" if codecs.lookup(name).name == "utf-8" else name


def _records(messages: _Messages, schema: RecordSchema) -> Iterator[Parsed]:
    for number, record in enumerate(messages, 1):
        yield number, messages.line_number, _typed(record, schema)


def _typed(record: dict[str, Any], schema: RecordSchema) -> dict[str, Any]:
    """NiFi's ``convert``: an empty string is null for a field that is not a STRING."""
    for name, value in record.items():
        if value == "":
            field = schema.field(name)
            if field is not None and field.type.name != "string":
                record[name] = None
    return record


class _Messages:
    """NiFi's ``GrokRecordReader.nextRecord`` as an iterator of value dicts."""

    def __init__(
        self, text: IO[str], groks: list[Grok], grok_fields: RecordSchema, behavior: str
    ) -> None:
        self._text = text
        self._groks = groks
        self._grok_fields = grok_fields
        self._behavior = behavior
        self._next_line: str | None = None
        self._next_map: dict[str, Any] | None = None
        self.line_number = 0

    def _readline(self) -> str | None:
        line = self._text.readline()
        if not line:
            return None
        self.line_number += 1
        return line[:-1] if line.endswith("\n") else line

    def _capture(self, line: str) -> dict[str, Any]:
        for grok in self._groks:
            captured = grok.capture(line)
            if captured:
                return captured
        return {}

    def __iter__(self) -> Iterator[dict[str, Any]]:
        raw_mode = self._behavior == RAW_LINE
        while True:
            value_map = self._next_map
            self._next_map = None
            raw: list[str] = []
            iterations = 0
            while not value_map:
                iterations += 1
                line = self._next_line if self._next_line is not None else self._readline()
                self._next_line = None
                if line is None:
                    return
                raw.append(line)
                value_map = self._capture(line)
                if not value_map and raw_mode:
                    break
            if iterations == 0 and self._next_line is not None:
                raw.append(self._next_line)
            stack_trace = None
            trailing: list[str] = []
            while True:
                self._next_line = self._readline()
                if self._next_line is None:
                    break
                following = self._capture(self._next_line)
                if not following and not raw_mode:
                    if _starts_stack_trace(self._next_line):
                        stack_trace = self._stack_trace(self._next_line)
                        raw.append("\n" + stack_trace)
                        break
                    if self._behavior == APPEND_TO_PREVIOUS_MESSAGE:
                        trailing.append("\n" + self._next_line)
                        raw.append("\n" + self._next_line)
                else:
                    self._next_map = following
                    break
            yield self._record(value_map, "".join(trailing), stack_trace, "".join(raw))

    def _stack_trace(self, first: str) -> str:
        lines = [first]
        while True:
            line = self._readline()
            if line is None:
                break
            if _STACK_TRACE.search(line):
                lines.append(line)
            else:
                self._next_line = line
                break
        return "\n".join(lines)

    def _record(
        self, values: dict[str, Any], trailing: str, stack_trace: str | None, raw: str
    ) -> dict[str, Any]:
        converted: dict[str, Any] = {}
        for name, value in (values or {}).items():
            converted[name] = _normalized(value)
        if values and trailing and self._behavior == APPEND_TO_PREVIOUS_MESSAGE:
            for field in reversed(self._grok_fields.fields):
                value = converted.get(field.name)
                if value is not None:
                    if isinstance(value, str):
                        converted[field.name] = value + trailing
                    break
        converted[STACK_TRACE_COLUMN_NAME] = stack_trace
        converted[RAW_MESSAGE_NAME] = raw
        return converted


def _normalized(value: Any) -> Any:
    """NiFi's list of captures: its one non-null value, else all of them (None: none)."""
    if not isinstance(value, _Many):
        return value
    present = [v for v in value if v is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else list(value)


def _starts_stack_trace(line: str) -> bool:
    """NiFi's ``isStartOfStackTrace``: an ``Exception: `` or ``Error: `` before any space."""
    index = line.find("Exception: ")
    if index < 0:
        index = line.find("Error: ")
    if index < 0:
        return False
    return line.find(" ") >= index
