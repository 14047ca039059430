"""NiFi's JsonTreeReader as a codec: JSON content to bounded Arrow record batches.

The content is a single object (one record), an array of objects, or objects one after another
(one per line or not: NiFi's reader takes any whitespace between them). "Starting Field Strategy"
``NESTED_FIELD`` skips forward to the first field called "Starting Field Name" (at any depth) and
reads the object or array there. The content is streamed: a buffer of ``chunk_size`` characters
and the current record are all that is held, so a 100 MB array or a 1 GB JSON-lines file stays
bounded; each record is parsed by the standard library's C scanner (``raw_decode``).
"""

from __future__ import annotations

import codecs
import itertools
import json
import operator
import re
from collections.abc import Iterable, Iterator
from typing import IO, Any

import attrs
import orjson
import pyarrow as pa

from flowcore.errors import ConfigurationError, RecordError
from flowcore.records._batches import Parsed, batches_of, record_error
from flowcore.records.options import nifi
from flowcore.records.schema import RecordSchema
from flowcore.records.values import TemporalFormats

__all__ = ["JsonReaderOptions", "read_json", "read_json_values"]

ROOT_NODE = "ROOT_NODE"
NESTED_FIELD = "NESTED_FIELD"


@attrs.frozen
class JsonReaderOptions:
    """JsonTreeReader's properties (NiFi's names in the field docs), with NiFi's defaults.

    Attributes:
        starting_field_strategy: "Starting Field Strategy": ``ROOT_NODE`` or ``NESTED_FIELD``.
        starting_field_name: "Starting Field Name" (with ``NESTED_FIELD``).
        date_format: "Date Format" (Java pattern; None: ``yyyy-MM-dd`` when reading text).
        time_format: "Time Format" (None: ``HH:mm:ss``).
        timestamp_format: "Timestamp Format" (None: ``yyyy-MM-dd HH:mm:ss`` or epoch millis).
        character_set: the content's encoding (NiFi reads JSON as UTF-8).
        batch_size: records per Arrow batch (memory bound; not a NiFi property).
        inference_sample: records schema inference reads (not a NiFi property, see inference).
        chunk_size: characters read at a time.
    """

    starting_field_strategy: str = nifi(
        "Starting Field Strategy",
        ROOT_NODE,
        validator=attrs.validators.in_((ROOT_NODE, NESTED_FIELD)),
    )
    starting_field_name: str | None = nifi("Starting Field Name", None)
    date_format: str | None = nifi("Date Format", None)
    time_format: str | None = nifi("Time Format", None)
    timestamp_format: str | None = nifi("Timestamp Format", None)
    character_set: str = "UTF-8"
    batch_size: int = 8192
    inference_sample: int = 10_000
    chunk_size: int = 1 << 20

    def __attrs_post_init__(self) -> None:
        if self.starting_field_strategy == NESTED_FIELD and not self.starting_field_name:
            msg = "Starting Field Strategy NESTED_FIELD needs a Starting Field Name"
            raise ConfigurationError(msg)

    @property
    def temporal(self) -> TemporalFormats:
        """The three formats as one value."""
        return TemporalFormats(self.date_format, self.time_format, self.timestamp_format)


def read_json(
    stream: IO[bytes],
    options: JsonReaderOptions = JsonReaderOptions(),
    schema: RecordSchema | None = None,
) -> Iterator[pa.RecordBatch]:
    """Record batches of the JSON records in *stream*, under *schema*.

    With no schema, one is inferred from the first ``options.inference_sample`` records.

    Raises:
        RecordError: a record is not JSON, not an object, or does not fit the schema (the
            batches of the records before it were yielded first).
    """
    return batches_of(
        json_records(stream, options),
        schema,
        options.temporal,
        options.batch_size,
        options.inference_sample,
    )


def read_json_values(
    stream: IO[bytes],
    options: JsonReaderOptions = JsonReaderOptions(),
    schema: RecordSchema | None = None,
) -> tuple[Iterator[pa.RecordBatch], Iterator[Any]]:
    """:func:`read_json`'s batches and, in step, each record's JSON value as parsed.

    For a reader of the raw values (NiFi's ValidateRecord judges a value by its JSON kind:
    ``"4"`` is a String, though the batch holds the INT 4). The records are parsed once: a
    batch's values are held until taken, so take ``batch.num_rows`` of them after each batch.
    """
    parsed, kept = itertools.tee(json_records(stream, options))
    batches = batches_of(
        parsed, schema, options.temporal, options.batch_size, options.inference_sample
    )
    return batches, map(operator.itemgetter(2), kept)


def json_records(stream: IO[bytes], options: JsonReaderOptions) -> Iterator[Parsed]:
    """Each record of *stream* as ``(number, line, value)``, parsed one at a time.

    Flattened C-level from runs of records (a buffer's JSON lines are one run), so a record
    costs no generator resumption of its own.
    """
    return itertools.chain.from_iterable(_record_runs(stream, options))


def _record_runs(stream: IO[bytes], options: JsonReaderOptions) -> Iterator[Iterable[Parsed]]:
    """The records of *stream* in runs, lazily: a run is parsed when the one before is read."""
    cursor = _Cursor(stream, options.character_set, options.chunk_size)
    number = 0
    try:
        if options.starting_field_strategy == NESTED_FIELD and not cursor.seek_field(
            options.starting_field_name or ""
        ):
            return
        nested = options.starting_field_strategy == NESTED_FIELD
        first = cursor.peek()
        while first:  # arrays and objects one after another, as Jackson reads them in NiFi
            if first == "[":
                cursor.take()
                more = cursor.peek() != "]"
                if not more:
                    cursor.take()
                while more:  # a ',' is always followed by a record, as Jackson wants
                    for value in cursor.whole_lines(array=True):
                        number += 1
                        yield ((number, None, _record(value, number, cursor)),)
                    if cursor.peek() == "]":  # [{...},] Jackson refuses the trailing comma
                        raise _unexpected(cursor, number + 1, "a record after ','")
                    number += 1
                    yield ((number, None, _record(cursor.value(), number, cursor)),)
                    sep = cursor.peek()
                    if sep not in (",", "]"):
                        expected = "',' or ']' between the array's records"
                        raise _unexpected(cursor, number + 1, expected)
                    cursor.take()
                    more = sep == ","
            else:
                values = [] if nested else cursor.whole_lines(array=False)
                if set(map(type, values)) <= _DICT:  # JSON lines' records, yielded in bulk
                    count = len(values)
                    lines = itertools.repeat(None, count)  # counted only for a message
                    yield zip(range(number + 1, number + 1 + count), lines, values, strict=True)
                    number += count
                    values = []
                for value in values:
                    if isinstance(value, list):  # an array on one line: its records in turn
                        for item in value:
                            number += 1
                            yield ((number, None, _record(item, number, cursor)),)
                        continue
                    number += 1
                    yield ((number, None, _record(value, number, cursor)),)
                if cursor.peek() in ("", "["):
                    first = cursor.peek()
                    continue
                number += 1
                yield ((number, None, _record(cursor.value(), number, cursor)),)
            if nested:
                return
            first = cursor.peek()
    except json.JSONDecodeError as exc:
        number += 0 if number else 1
        raise record_error(
            number, cursor.line_at(exc.pos), None, f"not valid JSON: {exc.msg}"
        ) from None
    except _NonNumericError as exc:
        raise record_error(max(number, 1), cursor.line(), None, str(exc)) from None
    except UnicodeDecodeError as exc:
        msg = f"the content is not {options.character_set} text ({exc.reason})"
        raise record_error(max(number, 1), cursor.line(), None, msg) from None


def _record(value: Any, number: int, cursor: _Cursor) -> Any:
    """*value*, which must be an object.

    Lines are counted only for a message: a record's number names it (counting every record's
    line would cost a fifth of the parse).
    """
    if not isinstance(value, dict):
        msg = f"expected a JSON object but got {_json_kind(value)}"
        raise record_error(number, cursor.line(), None, msg)
    return value


def _json_kind(value: Any) -> str:
    """The JSON type of a parsed *value*, with its article, as a message names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else f"a {type(value).__name__}"


def _unexpected(cursor: _Cursor, number: int, expected: str) -> RecordError:
    got = cursor.peek() or "the end of the content"
    return record_error(
        number, cursor.line(), None, f"not valid JSON: expected {expected}, got {got!r}"
    )


_DICT = frozenset({dict})
#: JSON's whitespace (RFC 8259): ``str.strip()``'s other characters (form feed, NBSP) are not.
_JSON_WS = " \t\r\n"
_WS = re.compile(r"[ \t\r\n]*")


class _NonNumericError(ValueError):
    """``NaN``, ``Infinity`` or ``-Infinity``: Python's scanner takes them, Jackson does not."""


def _non_numeric(token: str) -> Any:
    """Refuse *token* as NiFi's Jackson parser does (ALLOW_NON_NUMERIC_NUMBERS is off)."""
    msg = f"not valid JSON: non-standard token {token!r} (JSON has no NaN or Infinity)"
    raise _NonNumericError(msg)


#: Nineteen digits in a row: a number orjson may read as a float where it does not fit 64 bits
#: (``18446744073709551616``, ``-9223372036854775809``), which the standard library's scanner
#: keeps exact (a BIGINT): text holding one skips orjson (a string of digits only costs speed).
_LONG_NUMBER = re.compile(r"[0-9]{19}")
#: Bytes as digits or not, for :func:`_long_number` over a whole buffer.
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))


def _long_number(text: str) -> bool:
    """Whether *text* holds nineteen ASCII digits in a row (:data:`_LONG_NUMBER`).

    A buffer of JSON lines is checked by mapping every byte to digit or not and finding the
    run, ten times the regex's speed (its search tries each digit as a start); a short text
    by the regex. JSON numbers are ASCII, so other scripts' digits never matter.
    """
    if len(text) < 4096:
        return _LONG_NUMBER.search(text) is not None
    return text.encode("utf-8", "surrogatepass").translate(_DIGITS).find(b"0" * 19) >= 0


#: The longest line the orjson fast paths take (longer records go to the scanner).
_LINE_LIMIT = 1 << 16
#: A JSON error this close to the end of the buffer may only mean the record goes on.
_NEAR_END = 16


class _Cursor:
    """A read position in streamed JSON text: whitespace skipping, one value at a time."""

    def __init__(self, stream: IO[bytes], encoding: str, chunk_size: int) -> None:
        self._stream = stream
        if codecs.lookup(encoding).name == "utf-8":
            encoding = "utf-8-sig"  # a leading byte order mark is dropped, as Jackson does
        self._decoder = codecs.getincrementaldecoder(encoding)("strict")
        self._chunk = chunk_size
        self._decoder_json = json.JSONDecoder(parse_constant=_non_numeric)
        self.buf = ""
        self.pos = 0
        self.eof = False
        self._line_base = 1  # the line of buf[0]
        self._counted = 0  # lines are counted up to this buffer position...
        self._no_newline_until = 0  # the buffer has no newline from the position to here
        self._line_no = 1  # ...where this line is

    def _fill(self, size: int) -> None:
        if self.pos:
            self.line()  # count the lines up to pos before the text before it goes
            self._line_base = self._line_no
            self._counted = 0
            self.buf = self.buf[self.pos :]
            self.pos = 0
        self._no_newline_until = 0
        data = self._stream.read(size)
        if data:
            self.buf += self._decoder.decode(data)
        else:
            self.buf += self._decoder.decode(b"", final=True)
            self.eof = True
        if not self.buf and not self.eof:
            self._fill(size)

    def peek(self) -> str:
        """The next character that is not whitespace ('' at the end)."""
        while True:
            if self.pos < len(self.buf) and self.buf[self.pos] not in " \t\r\n":
                return self.buf[self.pos]
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if self.eof:
                return ""
            self._fill(self._chunk)

    def take(self) -> None:
        """Step over the character :meth:`peek` returned."""
        self.pos += 1

    def value(self) -> Any:
        """The JSON value starting here (read on until it is complete).

        A value alone on its line (JSON lines) is parsed by orjson, several times faster than
        the standard library's scanner, which takes every other case.
        """
        self.peek()
        end = -1
        if self.pos >= self._no_newline_until:
            end = self.buf.find("\n", self.pos, self.pos + _LINE_LIMIT)
            if end < 0:  # no line end near: do not look again before there
                self._no_newline_until = min(len(self.buf), self.pos + _LINE_LIMIT)
        if end > 0:
            line = self.buf[self.pos : end].rstrip(_JSON_WS)  # JSON's whitespace, no other
            if line.endswith(","):  # an array's record per line
                line = line[:-1]
            if not _long_number(line):
                try:
                    value = orjson.loads(line)
                except orjson.JSONDecodeError:
                    pass
                else:
                    self.pos += len(line)
                    return value
        size = self._chunk
        while True:
            self.peek()
            try:
                value, end = self._decoder_json.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                truncated = exc.pos >= len(self.buf) - _NEAR_END or exc.msg.startswith(
                    "Unterminated string"
                )
                if self.eof or not truncated:
                    raise
            else:
                if end < len(self.buf) or self.eof:
                    self.pos = end
                    return value
            self._fill(size)
            size = min(size * 2, 1 << 26)

    def whole_lines(self, *, array: bool) -> list[Any]:
        """The records on the buffer's complete lines from here, parsed in bulk by orjson.

        The fast path of JSON lines and of arrays with a record per line; it stops at the first
        line that is not one whole record (``{...},`` in an array), left to :meth:`value`. Lines
        are cut one at a time, so a line that is not a record costs only itself.
        """
        start = self.pos
        if not array:
            fast = self._whole_lines_bulk(start)
            if fast is not None:
                return fast
        out = []
        while True:
            end = self.buf.find("\n", start, start + _LINE_LIMIT)
            if end < 0:
                break
            body = self.buf[start:end].strip(_JSON_WS)  # a form feed is no JSON whitespace
            if body:
                if array:
                    if not body.endswith(","):
                        break
                    body = body[:-1]
                if _long_number(body):
                    break
                try:
                    out.append(orjson.loads(body))
                except orjson.JSONDecodeError:
                    break
            start = end + 1
        self.pos = start
        return out

    def _whole_lines_bulk(self, start: int) -> list[Any] | None:
        """JSON lines' fast path: every complete line from *start* parsed in one C-level pass.

        None (nothing consumed) when any line is not one whole record, is blank or is longer
        than ``_LINE_LIMIT``: :meth:`whole_lines` then cuts the lines one at a time, so the
        records and where the fast path stops are the same either way. A line orjson parses
        as it is parses to the same value stripped (JSON whitespace is all it can have around
        its value).
        """
        last = self.buf.rfind("\n", start)
        if last < 0:
            return None
        text = self.buf[start:last]
        if _long_number(text):
            return None
        lines = text.split("\n")
        if max(map(len, lines)) >= _LINE_LIMIT:  # as find() bounds a line in whole_lines
            return None
        try:
            out = list(map(orjson.loads, lines))
        except orjson.JSONDecodeError:
            return None
        self.pos = last + 1
        return out

    def line(self) -> int:
        """The line of the current position (1-based), counted on from the last count."""
        if self.pos >= self._counted:
            self._line_no += self.buf.count("\n", self._counted, self.pos)
        else:
            self._line_no = self._line_base + self.buf.count("\n", 0, self.pos)
        self._counted = self.pos
        return self._line_no

    def line_at(self, pos: int) -> int:
        """The line of buffer position *pos*."""
        return self._line_base + self.buf.count("\n", 0, pos)

    def seek_field(self, name: str) -> bool:
        """Move to the value of the first field called *name* that holds an object or an array.

        Depth first, as NiFi's reader walks tokens; False when there is none.
        """
        first = self.peek()
        if first in ("{", "["):
            return self._walk(name)
        return False

    def _walk(self, name: str) -> bool:
        opening = self.peek()
        self.take()
        closing = "}" if opening == "{" else "]"
        if self.peek() == closing:
            self.take()
            return False
        while True:
            if opening == "{":
                key = self.value()
                if self.peek() != ":":
                    raise _unexpected(self, 1, "':' after a field name")
                self.take()
                if key == name and self.peek() in ("{", "["):
                    return True
            if self.peek() in ("{", "["):
                if self._walk(name):
                    return True
            else:
                self.value()
            sep = self.peek()
            self.take()
            if sep == closing:
                return False
            if sep != ",":
                raise _unexpected(self, 1, f"',' or {closing!r}")
